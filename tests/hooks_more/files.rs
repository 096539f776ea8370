//! Path calls: temporary files, directory walkers, glob, nodes and links, unix socket bind.

use super::*;

#[test]
fn temp_files() {
    for case in [
        "mkstemp",
        "mkstemp64",
        "mkostemp",
        "mkostemp64",
        "mkstemps",
        "mkstemps64",
        "mkostemps",
        "mkostemps64",
        "mkdtemp",
    ] {
        let s = if case.contains("temps") { ".s" } else { "" };
        let call = case.trim_end_matches("64");
        one_path(
            case,
            call,
            "write",
            "ws",
            "ws/nodir",
            "ro",
            &format!("ro/tXXXXXX{s}"),
        );
        // A template without XXXXXX: glibc's own EINVAL.
        same_as_bare("ok.toml", case, &["bad"]);
    }
}

#[test]
fn tmpfile_uses_p_tmpdir() {
    for case in ["tmpfile", "tmpfile64"] {
        refused(
            "deny.toml",
            case,
            &[],
            "tmpfile",
            "write",
            "/tmp",
            None,
            EACCES,
        );
        same_as_bare("ok.toml", case, &[]);
    }
}

#[test]
fn directory_walkers() {
    for case in [
        "scandir",
        "scandir64",
        "scandirat",
        "scandirat64",
        "ftw",
        "ftw64",
        "nftw",
        "nftw64",
        "fts_open",
        "fts64_open",
    ] {
        let call = match case {
            "scandir64" => "scandir",
            "scandirat64" => "scandirat",
            "ftw64" => "ftw",
            "nftw64" => "nftw",
            "fts64_open" => "fts_open",
            c => c,
        };
        one_path(case, call, "read", "ws/d", "ws/nodir", "ro/d", "ro/d");
        // Reached through a symlink: the target is what is read.
        same_as_bare("ok.toml", case, &["ws"]);
    }
}

#[test]
fn glob_checks_each_directory_it_reads() {
    for case in ["glob", "glob64"] {
        // GLOB_ERR: a refused directory aborts like an unreadable one.
        refused(
            "deny.toml",
            case,
            &["ro/d"],
            "glob",
            "read",
            "ro/d",
            None,
            (2, libc::EACCES),
        );
        same_as_bare("ok.toml", case, &["ws/d"]);
        same_as_bare("ok.toml", case, &["ws/*"]);
        same_as_bare("ok.toml", case, &["ws/nodir"]);
        // A readable directory outside the root is re-allowed.
        same_as_bare("deny.toml", case, &["ro/readable"]);
    }
}

#[test]
fn nodes_and_links() {
    for (case, call) in [
        ("mknod", "mknod"),
        ("mknodat", "mknodat"),
        ("__xmknod", "mknod"),
        ("__xmknodat", "mknodat"),
        ("mkfifo", "mkfifo"),
        ("mkfifoat", "mkfifoat"),
    ] {
        one_path(case, call, "write", "ws/n", "ws/f", "ro/n", "ro/n");
    }
    one_path(
        "lchmod",
        "lchmod",
        "write",
        "ws/f",
        "ws/missing",
        "ro/f",
        "ro/f",
    );
    // futimesat follows the link; lutimes acts on the link itself.
    one_path(
        "futimesat",
        "futimesat",
        "write",
        "ws/link",
        "ws/missing",
        "ro/link",
        "ro/f",
    );
    one_path(
        "lutimes",
        "lutimes",
        "write",
        "ws/link",
        "ws/missing",
        "ro/link",
        "ro/link",
    );
}

#[test]
fn bind_unix_path() {
    one_path(
        "bind",
        "bind",
        "write",
        "ws/s",
        "ws/nodir/s",
        "ro/s",
        "ro/s",
    );
    // Abstract sockets create no file, but reach outside the root.
    let name = format!("fsguard-test-{}", std::process::id());
    abstract_bind("bind_abstract", &name);
}
