//! Every symbol added by the "no door open" hooks, called directly from C
//! (tests/c/hooks.c) under the real library:
//! - refused: the return value, errno, exactly one trace line, and a tree
//!   that has not changed;
//! - allowed: the same result and the same tree as the bare call, error
//!   cases included;
//! - metadata reads: untouched by default, hidden (ENOENT) with
//!   `hide_outside = true`.

use std::collections::BTreeMap;
use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::{Duration, UNIX_EPOCH};

/// The release library and the compiled C program.
fn artifacts() -> &'static (PathBuf, PathBuf) {
    static A: OnceLock<(PathBuf, PathBuf)> = OnceLock::new();
    A.get_or_init(|| {
        let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let st = Command::new(cargo)
            .args(["build", "--release", "-p", "fsguard"])
            .current_dir(&root)
            .status()
            .unwrap();
        assert!(st.success(), "building libfsguard failed");
        let lib = root.join("target/release/libfsguard.so");
        let bin = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("hooks-c");
        let st = Command::new("cc")
            .arg("-o")
            .arg(&bin)
            .arg(root.join("tests/c/hooks.c"))
            .status()
            .unwrap();
        assert!(st.success(), "compiling tests/c/hooks.c failed");
        (lib, bin)
    })
}

const OLD: u64 = 1_000_000;

fn set_old(p: &Path) {
    let t = UNIX_EPOCH + Duration::from_secs(OLD);
    let c = CString::new(p.as_os_str().as_bytes()).unwrap();
    let ts = [
        libc::timespec {
            tv_sec: t.duration_since(UNIX_EPOCH).unwrap().as_secs() as i64,
            tv_nsec: 0,
        },
        libc::timespec {
            tv_sec: OLD as i64,
            tv_nsec: 0,
        },
    ];
    // SAFETY: a C string and two timespecs.
    let r = unsafe {
        libc::utimensat(
            libc::AT_FDCWD,
            c.as_ptr(),
            ts.as_ptr(),
            libc::AT_SYMLINK_NOFOLLOW,
        )
    };
    assert_eq!(r, 0);
}

fn set_xattr(p: &Path) {
    let c = CString::new(p.as_os_str().as_bytes()).unwrap();
    // SAFETY: C strings and a one-byte value.
    unsafe { libc::setxattr(c.as_ptr(), c"user.x".as_ptr(), c"1".as_ptr().cast(), 1, 0) };
}

/// A fresh scratch tree: `ws/` (the root), `ro/` (outside it) with
/// `ro/readable/` re-allowed for reading, and the configs.
fn scratch(tag: &str) -> PathBuf {
    static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let d = std::env::temp_dir().join(format!("fsguard-hooks-{}-{n}-{tag}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    let d = d.canonicalize().unwrap();
    for top in ["ws", "ro"] {
        let t = d.join(top);
        std::fs::create_dir_all(t.join("d")).unwrap();
        std::fs::create_dir_all(t.join("e")).unwrap();
        std::fs::create_dir_all(t.join("readable")).unwrap();
        std::fs::write(t.join("f"), "data").unwrap();
        std::fs::write(t.join("d/g"), "g").unwrap();
        std::fs::write(t.join("readable/f"), "r").unwrap();
        std::fs::copy("/bin/true", t.join("true")).unwrap();
        std::os::unix::fs::symlink("f", t.join("link")).unwrap();
        for f in ["f", "readable/f"] {
            set_xattr(&t.join(f));
        }
        for p in [
            "f",
            "d/g",
            "readable/f",
            "true",
            "link",
            "d",
            "e",
            "readable",
            "",
        ] {
            set_old(&t.join(p));
        }
    }
    std::fs::write(
        d.join("deny.toml"),
        // A config's relative patterns are against the root (ws). Without
        // the ipc preset, which would give shm_open a namespace of its own
        // (tests/defaults.rs), /dev/shm is outside the root like any path.
        "root = \"ws\"\nipc = false\n[read]\nallow = [\"../ro/readable\"]\n",
    )
    .unwrap();
    std::fs::write(
        d.join("ok.toml"),
        "root = \"ws\"\n[write]\nallow = [\"/tmp\", \"/dev/shm\"]\n",
    )
    .unwrap();
    std::fs::write(d.join("hide.toml"), "root = \"ws\"\nhide_outside = true\n").unwrap();
    d
}

/// Everything about the tree that a call could change.
fn snapshot(dir: &Path) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for top in ["ws", "ro"] {
        walk(&dir.join(top), dir, &mut out);
    }
    out
}

fn walk(p: &Path, base: &Path, out: &mut BTreeMap<String, String>) {
    let m = std::fs::symlink_metadata(p).unwrap();
    let rel = p.strip_prefix(base).unwrap().display().to_string();
    let mtime = if (m.mtime() as u64) == OLD {
        "old".to_string()
    } else if m.mtime() < 100_000 {
        m.mtime().to_string()
    } else {
        "new".to_string()
    };
    let kind = if m.is_symlink() {
        format!("link->{}", std::fs::read_link(p).unwrap().display())
    } else if m.is_dir() {
        "dir".into()
    } else if m.is_file() {
        format!("file:{:?}", std::fs::read(p).unwrap())
    } else {
        format!("special:{:o}", m.mode() & libc::S_IFMT)
    };
    let mut xattrs = [0u8; 256];
    let c = CString::new(p.as_os_str().as_bytes()).unwrap();
    // SAFETY: a C string and a buffer of the given size.
    let n = unsafe { libc::llistxattr(c.as_ptr(), xattrs.as_mut_ptr().cast(), xattrs.len()) };
    let x = String::from_utf8_lossy(&xattrs[..n.max(0) as usize]).into_owned();
    out.insert(
        rel,
        format!(
            "{kind} mode={:o} uid={} mtime={mtime} xattrs={x:?}",
            m.permissions().mode() & 0o7777,
            m.uid()
        ),
    );
    if m.is_dir() {
        for e in std::fs::read_dir(p).unwrap() {
            walk(&e.unwrap().path(), base, out);
        }
    }
}

struct Run {
    stdout: String,
    traces: Vec<String>,
}

impl Run {
    fn ret_errno(&self) -> (i64, i32) {
        let mut it = self.stdout.split_whitespace();
        let ret = it
            .next()
            .and_then(|s| s.strip_prefix("ret="))
            .unwrap_or("?");
        let err = it
            .next()
            .and_then(|s| s.strip_prefix("errno="))
            .unwrap_or("?");
        (
            ret.parse()
                .unwrap_or_else(|_| panic!("no ret in {:?}", self.stdout)),
            err.parse().unwrap(),
        )
    }
}

/// Runs the C program in `dir`, bare (`config` None) or under the library.
fn run(dir: &Path, config: Option<&str>, case: &str, args: &[&str]) -> Run {
    let (lib, bin) = artifacts();
    let mut cmd = Command::new(bin);
    cmd.arg(case).args(args).current_dir(dir);
    for (k, _) in std::env::vars() {
        if k.starts_with("FSGUARD_") {
            cmd.env_remove(k);
        }
    }
    if let Some(c) = config {
        cmd.env("LD_PRELOAD", lib)
            .env("FSGUARD_CONFIG", dir.join(c));
    }
    let out = cmd.output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        out.status.success(),
        "{case} {args:?} ({config:?}) failed: {:?}\n{stderr}",
        out.status
    );
    Run {
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        traces: stderr
            .lines()
            .filter(|l| l.starts_with("[fsguard]"))
            .map(String::from)
            .collect(),
    }
}

/// The expected trace line: paths relative to the scratch dir unless
/// absolute. Its hint names the refused end: the one outside the root.
fn trace(dir: &Path, call: &str, access: &str, path: &str, dest: Option<&str>) -> String {
    let abs = |p: &str| {
        if p.starts_with('/') {
            p.to_string()
        } else {
            dir.join(p).display().to_string()
        }
    };
    let refused = match dest {
        Some(d) if Path::new(&abs(path)).starts_with(dir.join("ws")) => abs(d),
        _ => abs(path),
    };
    let list = if access == "write" { "write" } else { "read" };
    let dest = dest
        .map(|d| format!(" dest={}", abs(d)))
        .unwrap_or_default();
    format!(
        "[fsguard] blocked {call} {access} path={}{dest} rule=root hint=\"--allow-{list} {refused}\"",
        abs(path)
    )
}

/// Refused under deny.toml (or hide.toml): return value, errno, one trace
/// line, and nothing changed on disk.
#[allow(clippy::too_many_arguments)]
fn refused(
    config: &str,
    case: &str,
    args: &[&str],
    call: &str,
    access: &str,
    path: &str,
    dest: Option<&str>,
    want: (i64, i32),
) {
    let dir = scratch(case);
    let before = snapshot(&dir);
    let r = run(&dir, Some(config), case, args);
    assert_eq!(r.ret_errno(), want, "{case} {args:?}: {}", r.stdout);
    assert_eq!(
        r.traces,
        vec![trace(&dir, call, access, path, dest)],
        "{case} {args:?}"
    );
    assert_eq!(snapshot(&dir), before, "{case} {args:?} changed the tree");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Allowed: same output and same resulting tree as bare, no trace line.
fn same_as_bare(config: &str, case: &str, args: &[&str]) {
    let bare_dir = scratch(case);
    let bare = run(&bare_dir, None, case, args);
    let dir = scratch(case);
    let guarded = run(&dir, Some(config), case, args);
    assert_eq!(guarded.stdout, bare.stdout, "{case} {args:?} ({config})");
    assert_eq!(guarded.traces, Vec::<String>::new(), "{case} {args:?}");
    assert_eq!(
        snapshot(&dir),
        snapshot(&bare_dir),
        "{case} {args:?}: trees differ"
    );
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::remove_dir_all(&bare_dir);
}

const EACCES: (i64, i32) = (-1, libc::EACCES);
const ENOENT: (i64, i32) = (-1, libc::ENOENT);

/// A one-path write or read call: refused outside, same as bare inside
/// (success and the given error case).
fn one_path(case: &str, call: &str, access: &str, ok: &str, err: &str, deny: &str, path: &str) {
    refused("deny.toml", case, &[deny], call, access, path, None, EACCES);
    same_as_bare("ok.toml", case, &[ok]);
    same_as_bare("ok.toml", case, &[err]);
}

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
    // Abstract sockets create no file: not checked, even when refusing.
    let name = format!("fsguard-test-{}", std::process::id());
    same_as_bare("deny.toml", "bind_abstract", &[&name]);
}

#[test]
fn xattr_changes() {
    one_path(
        "setxattr",
        "setxattr",
        "write",
        "ws/f",
        "ws/missing",
        "ro/link",
        "ro/f",
    );
    one_path(
        "lsetxattr",
        "lsetxattr",
        "write",
        "ws/link",
        "ws/missing",
        "ro/link",
        "ro/link",
    );
    one_path(
        "removexattr",
        "removexattr",
        "write",
        "ws/f",
        "ws/missing",
        "ro/f",
        "ro/f",
    );
    one_path(
        "lremovexattr",
        "lremovexattr",
        "write",
        "ws/f",
        "ws/missing",
        "ro/f",
        "ro/f",
    );
}

#[test]
fn fd_calls_that_change_the_file() {
    // The fd is opened read-only, which the policy allows for ro/readable.
    for case in [
        "fsetxattr",
        "fremovexattr",
        "fchmod",
        "fchown",
        "futimens",
        "futimes",
    ] {
        refused(
            "deny.toml",
            case,
            &["ro/readable/f"],
            case,
            "write",
            "ro/readable/f",
            None,
            EACCES,
        );
        same_as_bare("ok.toml", case, &["ws/f"]);
    }
    same_as_bare("deny.toml", "fchmod_badfd", &[]);
    // A pipe is a device the policy allows.
    same_as_bare("deny.toml", "fchmod_pipe", &[]);
}

#[test]
fn file_handles() {
    for case in ["open_by_handle_at", "sys_open_by_handle_at"] {
        refused(
            "deny.toml",
            case,
            &["ro/f"],
            "open_by_handle_at",
            "read",
            "ro/f",
            None,
            EACCES,
        );
        same_as_bare("ok.toml", case, &["ws/f"]);
    }
}

#[test]
fn shm_objects() {
    let name = format!("fsguard-test-{}", std::process::id());
    let shm = format!("/dev/shm/{name}");
    refused(
        "deny.toml",
        "shm_open",
        &[&name],
        "shm_open",
        "write",
        &shm,
        None,
        EACCES,
    );
    assert!(!Path::new(&shm).exists());
    same_as_bare("ok.toml", "shm_open", &[&name]);
    std::fs::write(&shm, "x").unwrap();
    refused(
        "deny.toml",
        "shm_unlink",
        &[&name],
        "shm_unlink",
        "write",
        &shm,
        None,
        EACCES,
    );
    assert!(Path::new(&shm).exists());
    std::fs::remove_file(&shm).unwrap();
    same_as_bare("ok.toml", "shm_unlink", &[&name]);
}

#[test]
fn syscall_path_calls() {
    let one = [
        (
            "sys_open",
            "open",
            "write",
            "ws/new",
            "ws/nodir/x",
            "ro/new",
            "ro/new",
        ),
        (
            "sys_openat",
            "openat",
            "read",
            "ws/f",
            "ws/missing",
            "ro/f",
            "ro/f",
        ),
        (
            "sys_creat",
            "creat",
            "write",
            "ws/new",
            "ws/nodir/x",
            "ro/new",
            "ro/new",
        ),
        (
            "sys_unlink",
            "unlink",
            "write",
            "ws/f",
            "ws/missing",
            "ro/f",
            "ro/f",
        ),
        (
            "sys_unlinkat",
            "unlinkat",
            "write",
            "ws/f",
            "ws/missing",
            "ro/f",
            "ro/f",
        ),
        (
            "sys_rmdir",
            "rmdir",
            "write",
            "ws/e",
            "ws/d",
            "ro/e",
            "ro/e",
        ),
        (
            "sys_mkdir",
            "mkdir",
            "write",
            "ws/nd",
            "ws/f",
            "ro/nd",
            "ro/nd",
        ),
        (
            "sys_mkdirat",
            "mkdirat",
            "write",
            "ws/nd",
            "ws/f",
            "ro/nd",
            "ro/nd",
        ),
        (
            "sys_symlink",
            "symlink",
            "write",
            "ws/sl",
            "ws/f",
            "ro/sl",
            "ro/sl",
        ),
        (
            "sys_symlinkat",
            "symlinkat",
            "write",
            "ws/sl",
            "ws/f",
            "ro/sl",
            "ro/sl",
        ),
        (
            "sys_chmod",
            "chmod",
            "write",
            "ws/link",
            "ws/missing",
            "ro/link",
            "ro/f",
        ),
        (
            "sys_fchmodat",
            "fchmodat",
            "write",
            "ws/link",
            "ws/missing",
            "ro/link",
            "ro/f",
        ),
        (
            "sys_chown",
            "chown",
            "write",
            "ws/f",
            "ws/missing",
            "ro/f",
            "ro/f",
        ),
        (
            "sys_lchown",
            "lchown",
            "write",
            "ws/link",
            "ws/missing",
            "ro/link",
            "ro/link",
        ),
        (
            "sys_fchownat",
            "fchownat",
            "write",
            "ws/f",
            "ws/missing",
            "ro/link",
            "ro/f",
        ),
        (
            "sys_truncate",
            "truncate",
            "write",
            "ws/f",
            "ws/missing",
            "ro/f",
            "ro/f",
        ),
        (
            "sys_utimensat",
            "utimensat",
            "write",
            "ws/link",
            "ws/missing",
            "ro/link",
            "ro/f",
        ),
        (
            "sys_mknod",
            "mknod",
            "write",
            "ws/n",
            "ws/f",
            "ro/n",
            "ro/n",
        ),
        (
            "sys_mknodat",
            "mknodat",
            "write",
            "ws/n",
            "ws/f",
            "ro/n",
            "ro/n",
        ),
        (
            "sys_setxattr",
            "setxattr",
            "write",
            "ws/f",
            "ws/missing",
            "ro/f",
            "ro/f",
        ),
        (
            "sys_execve",
            "execve",
            "exec",
            "ws/true",
            "ws/missing",
            "ro/true",
            "ro/true",
        ),
    ];
    for (case, call, access, ok, err, deny, path) in one {
        one_path(case, call, access, ok, err, deny, path);
    }
    let two = [
        ("sys_rename", "rename"),
        ("sys_renameat", "renameat"),
        ("sys_renameat2", "renameat2"),
        ("sys_link", "link"),
        ("sys_linkat", "linkat"),
    ];
    for (case, call) in two {
        refused(
            "deny.toml",
            case,
            &["ro/f", "ro/f2"],
            call,
            "write",
            "ro/f",
            Some("ro/f2"),
            EACCES,
        );
        // Out of the root into it: the source is refused.
        refused(
            "deny.toml",
            case,
            &["ro/f", "ws/f2"],
            call,
            "write",
            "ro/f",
            Some("ws/f2"),
            EACCES,
        );
        same_as_bare("ok.toml", case, &["ws/f", "ws/f2"]);
        same_as_bare("ok.toml", case, &["ws/missing", "ws/f2"]);
    }
    // Everything else goes straight through.
    same_as_bare("deny.toml", "sys_getpid", &[]);
    // Metadata via syscall(): untouched by default, hidden with hide_outside.
    for (case, call, path) in [
        ("sys_stat", "stat", "ro/f"),
        ("sys_newfstatat", "fstatat", "ro/f"),
    ] {
        same_as_bare("deny.toml", case, &[path]);
        refused("hide.toml", case, &[path], call, "read", path, None, ENOENT);
    }
}

#[test]
fn syscall_openat2_answers_enosys() {
    let dir = scratch("openat2");
    let bare = run(&dir, None, "sys_openat2", &["ws/f"]);
    assert_eq!(bare.ret_errno(), (0, 0));
    let r = run(&dir, Some("ok.toml"), "sys_openat2", &["ws/f"]);
    assert_eq!(r.ret_errno(), (-1, libc::ENOSYS));
    assert!(r.traces.is_empty());
    let _ = std::fs::remove_dir_all(&dir);
}

/// Metadata reads: (case, path outside the root, trace call, resolved path).
const METADATA: &[(&str, &str, &str, &str)] = &[
    ("stat", "ro/link", "stat", "ro/f"),
    ("stat64", "ro/f", "stat", "ro/f"),
    ("lstat", "ro/link", "lstat", "ro/link"),
    ("lstat64", "ro/link", "lstat", "ro/link"),
    ("fstatat", "ro/link", "fstatat", "ro/link"),
    ("fstatat64", "ro/link", "fstatat", "ro/f"),
    ("statx", "ro/f", "statx", "ro/f"),
    ("__xstat", "ro/f", "stat", "ro/f"),
    ("__xstat64", "ro/f", "stat", "ro/f"),
    ("__lxstat", "ro/link", "lstat", "ro/link"),
    ("__lxstat64", "ro/link", "lstat", "ro/link"),
    ("__fxstatat", "ro/f", "fstatat", "ro/f"),
    ("__fxstatat64", "ro/f", "fstatat", "ro/f"),
    ("access", "ro/f", "access", "ro/f"),
    ("faccessat", "ro/f", "faccessat", "ro/f"),
    ("eaccess", "ro/f", "eaccess", "ro/f"),
    ("euidaccess", "ro/f", "euidaccess", "ro/f"),
    ("readlink", "ro/link", "readlink", "ro/link"),
    ("readlinkat", "ro/link", "readlinkat", "ro/link"),
    ("__readlink_chk", "ro/link", "readlink", "ro/link"),
    ("__readlinkat_chk", "ro/link", "readlinkat", "ro/link"),
    ("realpath", "ro/link", "realpath", "ro/f"),
    ("__realpath_chk", "ro/link", "realpath", "ro/f"),
    (
        "canonicalize_file_name",
        "ro/link",
        "canonicalize_file_name",
        "ro/f",
    ),
    ("getxattr", "ro/f", "getxattr", "ro/f"),
    ("lgetxattr", "ro/f", "lgetxattr", "ro/f"),
    ("listxattr", "ro/f", "listxattr", "ro/f"),
    ("llistxattr", "ro/f", "llistxattr", "ro/f"),
    ("statfs", "ro/f", "statfs", "ro/f"),
    ("statfs64", "ro/f", "statfs", "ro/f"),
    ("statvfs", "ro/f", "statvfs", "ro/f"),
    ("statvfs64", "ro/f", "statvfs", "ro/f"),
    ("pathconf", "ro/f", "pathconf", "ro/f"),
    ("chdir", "ro/d", "chdir", "ro/d"),
    (
        "name_to_handle_at",
        "ro/link",
        "name_to_handle_at",
        "ro/link",
    ),
];

#[test]
fn metadata_reads_pass_through_by_default() {
    for (case, path, _, _) in METADATA {
        // Outside the root, but metadata is not confined without hide_outside.
        same_as_bare("deny.toml", case, &[path]);
        same_as_bare("deny.toml", case, &["ro/missing"]);
        same_as_bare("hide.toml", case, &["ws/link"]);
    }
}

#[test]
fn metadata_reads_hidden_with_hide_outside() {
    for (case, path, call, resolved) in METADATA {
        refused(
            "hide.toml",
            case,
            &[path],
            call,
            "read",
            resolved,
            None,
            ENOENT,
        );
    }
}
