//! `syscall(2)` with a path-taking number, and `openat2`.

use super::*;

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

#[test]
fn syscall_bind_is_checked_as_bind() {
    // syscall(SYS_bind, fd, addr, len): the address is the second argument.
    one_path(
        "sys_bind",
        "bind",
        "write",
        "ws/s",
        "ws/nodir/s",
        "ro/s",
        "ro/s",
    );
    // Abstract sockets create no file, but reach outside the root.
    let name = format!("fsguard-test-sys-{}", std::process::id());
    abstract_bind("sys_bind_abstract", &name);
}
