//! Every interposed symbol: exported, referenced by the test programs, refused under readonly.

use super::*;

/// Writes through every interposed symbol, with the expected trace line
/// (`CALL ACCESS PATH [-> DEST]`, paths relative to the fixture dir).
/// `-d .` gives the program a dirfd "FD" on the fixture dir.
const READONLY_DENIED: &[(&str, &str)] = &[
    ("open f O_WRONLY", "open write f"),
    ("open f O_RDWR", "open write f"),
    ("open f O_RDONLY|O_TRUNC", "open write f"),
    ("open f O_RDONLY|O_APPEND", "open write f"),
    ("open f O_WRONLY|O_APPEND", "open write f"),
    ("open f O_WRONLY|O_TRUNC", "open write f"),
    ("open new O_RDONLY|O_CREAT 0644", "open write new"),
    ("open new O_WRONLY|O_CREAT|O_EXCL 0600", "open write new"),
    ("open sl O_WRONLY", "open write f"),
    ("open dsl/x O_WRONLY", "open write dir/x"),
    ("open dir/../f O_RDWR", "open write f"),
    ("open64 f O_WRONLY", "open write f"),
    ("open64 new O_WRONLY|O_CREAT 0644", "open write new"),
    ("openat CWD f O_WRONLY", "openat write f"),
    ("-d . openat FD f O_RDWR", "openat write f"),
    ("-d dir openat FD ../g O_WRONLY|O_TRUNC", "openat write g"),
    (
        "-d . openat FD new O_WRONLY|O_CREAT 0644",
        "openat write new",
    ),
    ("openat64 CWD f O_WRONLY", "openat write f"),
    ("-d . openat64 FD f O_RDONLY|O_TRUNC", "openat write f"),
    ("creat new 0644", "creat write new"),
    ("creat f 0644", "creat write f"),
    ("creat64 new 0644", "creat write new"),
    ("__open_2 f O_WRONLY", "open write f"),
    ("__open_2 f O_RDONLY|O_TRUNC", "open write f"),
    ("__open64_2 f O_RDWR", "open write f"),
    ("__openat_2 CWD f O_WRONLY", "openat write f"),
    ("-d . __openat_2 FD f O_APPEND", "openat write f"),
    ("-d . __openat64_2 FD f O_WRONLY", "openat write f"),
    ("fopen f w", "fopen write f"),
    ("fopen f a", "fopen write f"),
    ("fopen f r+", "fopen write f"),
    ("fopen f a+", "fopen write f"),
    ("fopen new w+", "fopen write new"),
    ("fopen new wx", "fopen write new"),
    ("fopen64 f w", "fopen write f"),
    ("fopen64 f a", "fopen write f"),
    ("freopen f w", "freopen write f"),
    ("freopen f a", "freopen write f"),
    ("freopen64 f r+", "freopen write f"),
    ("freopen64 new w", "freopen write new"),
    // freopen(NULL, mode, stream): a mode change to writing is a write
    ("freopen_null f w", "freopen write f"),
    ("freopen_null f r+", "freopen write f"),
    ("freopen64_null f a", "freopen write f"),
    ("unlink f", "unlink write f"),
    ("unlink sl", "unlink write sl"),
    ("-d . unlinkat FD f 0", "unlinkat write f"),
    (
        "unlinkat CWD emptydir AT_REMOVEDIR",
        "unlinkat write emptydir",
    ),
    ("remove f", "remove write f"),
    ("remove emptydir", "remove write emptydir"),
    ("rename f h", "rename write f -> h"),
    ("rename f g", "rename write f -> g"),
    ("rename sl h", "rename write sl -> h"),
    ("-d . renameat FD f FD h", "renameat write f -> h"),
    ("renameat2 CWD f CWD h 0", "renameat2 write f -> h"),
    (
        "renameat2 CWD f CWD h RENAME_NOREPLACE",
        "renameat2 write f -> h",
    ),
    (
        "renameat2 CWD f CWD g RENAME_EXCHANGE",
        "renameat2 write f -> g",
    ),
    ("mkdir newdir 0755", "mkdir write newdir"),
    ("mkdir newdir/ 0755", "mkdir write newdir"),
    ("-d . mkdirat FD newdir 0755", "mkdirat write newdir"),
    ("rmdir emptydir", "rmdir write emptydir"),
    ("chmod f 0600", "chmod write f"),
    ("chmod sl 0600", "chmod write f"),
    ("-d . fchmodat FD f 0600 0", "fchmodat write f"),
    ("fchmodat CWD sl 0600 0", "fchmodat write f"),
    ("chown f self self", "chown write f"),
    ("chown sl self self", "chown write f"),
    ("lchown sl self self", "lchown write sl"),
    ("-d . fchownat FD f self self 0", "fchownat write f"),
    (
        "fchownat CWD sl self self AT_SYMLINK_NOFOLLOW",
        "fchownat write sl",
    ),
    ("link f h", "link write f -> h"),
    ("-d . linkat FD f FD h 0", "linkat write f -> h"),
    // linkat without AT_SYMLINK_FOLLOW links the symlink itself
    ("linkat CWD sl CWD h 0", "linkat write sl -> h"),
    (
        "linkat CWD sl CWD h AT_SYMLINK_FOLLOW",
        "linkat write f -> h",
    ),
    ("symlink f s", "symlink write s"),
    ("-d . symlinkat f FD s", "symlinkat write s"),
    ("truncate f 0", "truncate write f"),
    ("truncate64 f 1", "truncate write f"),
    ("utime f", "utime write f"),
    ("utimes f", "utimes write f"),
    ("-d . utimensat FD f 0", "utimensat write f"),
    ("utimensat CWD sl AT_SYMLINK_NOFOLLOW", "utimensat write sl"),
];

fn call_name(case: &str) -> String {
    let a = args_of(case);
    let mut i = 0;
    while i < a.len() && a[i].len() == 2 && a[i].starts_with('-') {
        i += 2;
    }
    a[i].clone()
}

#[test]
fn every_interposed_symbol_is_exported_by_the_library() {
    let o = run(Command::new("nm").args(["-D", "--defined-only"]).arg(lib()));
    assert!(o.status.success(), "{}", o.describe());
    let defined: Vec<&str> = o
        .stdout
        .lines()
        .filter_map(|l| l.split_whitespace().last())
        .map(|s| s.split('@').next().unwrap())
        .collect();
    let missing: Vec<&&str> = core_symbols()
        .iter()
        .filter(|s| !defined.contains(s))
        .collect();
    assert!(
        missing.is_empty(),
        "libfsguard.so does not export {missing:?}"
    );
}

#[test]
fn test_programs_reference_every_symbol_directly() {
    let o = run(Command::new("nm").arg("-u").arg(calls_bin()));
    assert!(o.status.success(), "{}", o.describe());
    let undefined: Vec<&str> = o
        .stdout
        .lines()
        .filter_map(|l| l.split_whitespace().last())
        .map(|s| s.split('@').next().unwrap())
        .collect();
    let missing: Vec<&&str> = core_symbols()
        .iter()
        .filter(|s| !undefined.contains(s))
        .collect();
    assert!(missing.is_empty(), "calls.c does not reference {missing:?}");
    // and every symbol has at least one denial case
    for s in core_symbols().iter().filter(|s| **s != "opendir") {
        assert!(
            READONLY_DENIED.iter().any(|(c, _)| call_name(c) == *s),
            "no read-only denial case calls {s}"
        );
    }
}

#[test]
fn readonly_denies_every_write_symbol() {
    let mut f = Failures::default();
    for (case, spec) in READONLY_DENIED {
        f.case();
        // control: the call succeeds without the library
        let tb = TempDir::new("cbare");
        let db = tb.join("d");
        fixture(&db);
        let bare = calls(&db, case, None);
        match parse_call(&bare) {
            Ok(c) if c.ret != "-1" && c.ret != "NULL" => {}
            _ => {
                f.fail(
                    case,
                    format!(
                        "control: the call fails even without the library\n{}",
                        bare.describe()
                    ),
                );
                continue;
            }
        }
        let td = TempDir::new("cro");
        let d = td.join("d");
        fixture(&d);
        let before = snapshot(&d);
        let out = calls(&d, case, Some(&[("FSGUARD_READONLY", "1")]));
        let mut errs = Vec::new();
        match parse_call(&out) {
            Ok(c) => {
                if !(c.ret == "-1" || c.ret == "NULL") || !c.errno.starts_with("13(") {
                    errs.push(format!(
                        "expected ret=-1/NULL errno=13(EACCES), got ret={} errno={}",
                        c.ret, c.errno
                    ));
                }
            }
            Err(e) => errs.push(e.to_string()),
        }
        if let Err(e) = check_traces(&out.blocked(), &[vec![expect_of(spec, &d, "readonly")]]) {
            errs.push(format!("trace: {e}"));
        }
        if let Some(diff) = snapshot_diff(&before, &snapshot(&d)) {
            errs.push(format!("tree changed:\n{diff}"));
        }
        if !errs.is_empty() {
            f.fail(case, format!("{}\n{}", errs.join("\n"), out.describe()));
        }
    }
    f.finish("read-only denial");
}
