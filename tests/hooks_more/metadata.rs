//! Metadata reads: untouched by default, hidden with `hide_outside = true`.

use super::*;

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
