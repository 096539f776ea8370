//! Calls that change an object's attributes or act through handles: xattrs, fd calls, file handles, shm objects.

use super::*;

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
