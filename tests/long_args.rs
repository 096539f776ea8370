//! Path arguments of PATH_MAX bytes or more (issue 28): the kernel refuses
//! them with ENAMETOOLONG, however short the parent and name the guard
//! would act through; every hooked call fails so guarded too, and one just
//! short of the limit succeeds as bare (tests/c/longarg.c).

mod common;

use common::*;

/// Every call longarg.c makes, each with one path argument long.
const CALLS: &[&str] = &[
    "open",
    "open-creat",
    "open-excl",
    "open-nofollow",
    "openat",
    "creat",
    "fopen",
    "fopen-w",
    "opendir",
    "mkdir",
    "mkdirat",
    "rmdir",
    "unlink",
    "unlinkat",
    "remove",
    "rename-old",
    "rename-new",
    "renameat2",
    "link-old",
    "link-new",
    "linkat",
    "symlink",
    "symlinkat",
    "chmod",
    "fchmodat",
    "chown",
    "lchown",
    "fchownat",
    "truncate",
    "truncate64",
    "utimes",
    "utimensat",
    "mkfifo",
    "mknod",
    "setxattr",
    "mkstemp",
    "mkdtemp",
    "stat",
    "access",
    "chdir",
    "execve",
];

fn tree(tag: &str) -> TempDir {
    let t = TempDir::new(tag);
    write_file(&t.join("f"), "f\n", 0o644);
    mkdir(&t.join("d"));
    mkdir(&t.join("e"));
    t
}

#[test]
fn an_over_long_path_fails_as_bare() {
    let prog = c_program("longarg", &[]);
    let mut f = Failures::default();
    for len in ["4095", "4096", "4200"] {
        for call in CALLS {
            f.case();
            let b = tree("longarg-bare");
            let bare = run(bare_cmd(&prog).args([len, call]).current_dir(b.path()));
            let g = tree("longarg-guarded");
            let guarded = run(
                guarded_cmd(&prog, &[("FSGUARD_ROOT", g.path().to_str().unwrap())])
                    .args([len, call])
                    .current_dir(g.path()),
            );
            let want_fail = len != "4095";
            let bare_ok = bare.status.success()
                && (!want_fail || bare.stdout == format!("-1 {}\n", libc::ENAMETOOLONG));
            if bare_ok && bare.stdout == guarded.stdout && guarded.blocked().is_empty() {
                continue;
            }
            f.fail(
                &format!("{call} with a path of {len} bytes"),
                format!("{}\n{}", bare.describe(), guarded.describe()),
            );
        }
    }
    f.finish("over-long path");
}
