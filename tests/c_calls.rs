//! C programs calling every interposed libc symbol directly
//! (tests/c/calls.c, tests/c/fortified.c).
//!
//! * Under FSGUARD_READONLY=1 every write through every symbol is refused:
//!   ret -1/NULL, errno EACCES, exactly one `blocked` trace line with the
//!   expected call name, access, resolved path (and dest), rule=readonly, and
//!   an unchanged tree. The same call without the library succeeds (control).
//! * Allowed calls behave exactly as without the library: the same call in a
//!   fresh copy of the fixture, bare and under FSGUARD_ROOT=<the fixture>,
//!   gives the same return value, the same errno (including ENOENT, EEXIST,
//!   ENOTDIR, EISDIR, ELOOP, EBADF ...; and errno untouched on success) and
//!   the same resulting tree.
//! * The fortified entry points are reached by `-D_FORTIFY_SOURCE=2 -O2` code.

// LD_PRELOAD, /proc and glibc symbol names: Linux only.
#![cfg(target_os = "linux")]

mod common;

use common::*;
use std::path::{Path, PathBuf};
use std::process::Command;

fn calls_bin() -> PathBuf {
    c_program("calls", &["-O0", "-U_FORTIFY_SOURCE"])
}

fn fortified_bin() -> PathBuf {
    c_program(
        "fortified",
        &["-O2", "-U_FORTIFY_SOURCE", "-D_FORTIFY_SOURCE=2"],
    )
}

/// The fixture every case starts from (in `d`):
///   f "hello\n" 0644, g "other\n" 0644, emptydir/, dir/x "x\n",
///   sl -> f, dsl -> dir, loop1 -> loop2 -> loop1, dangle -> nothere
fn fixture(d: &Path) {
    mkdir(d);
    write_file(&d.join("f"), "hello\n", 0o644);
    write_file(&d.join("g"), "other\n", 0o644);
    mkdir(&d.join("emptydir"));
    mkdir(&d.join("dir"));
    write_file(&d.join("dir/x"), "x\n", 0o644);
    symlink("f", &d.join("sl"));
    symlink("dir", &d.join("dsl"));
    symlink("loop2", &d.join("loop1"));
    symlink("loop1", &d.join("loop2"));
    symlink("nothere", &d.join("dangle"));
}

/// Split a case; `<empty>` is an empty argument, `{name300}` a 300-byte
/// name (too long for one component), `{deep}` a relative path of more than
/// PATH_MAX bytes.
fn args_of(case: &str) -> Vec<String> {
    case.split_whitespace()
        .map(|a| match a {
            "<empty>" => String::new(),
            _ => a
                .replace("{name300}", &"n".repeat(300))
                .replace("{deep}", &"d/".repeat(2100)),
        })
        .collect()
}

struct CallOut {
    ret: String,
    errno: String,
}

fn parse_call(out: &Out) -> Result<CallOut, String> {
    let line = out
        .stdout
        .lines()
        .find(|l| l.starts_with("ret="))
        .ok_or("no `ret=` line from the C program")?;
    let (r, e) = line.split_once(' ').ok_or("odd ret line")?;
    Ok(CallOut {
        ret: r.trim_start_matches("ret=").to_string(),
        errno: e.trim_start_matches("errno=").to_string(),
    })
}

fn calls(dir: &Path, case: &str, vars: Option<&[(&str, &str)]>) -> Out {
    let mut cmd = match vars {
        Some(v) => guarded_cmd(calls_bin(), v),
        None => bare_cmd(calls_bin()),
    };
    cmd.args(args_of(case)).current_dir(dir);
    run(&mut cmd)
}

fn expect_of(spec: &str, dir: &Path, rule: &str) -> Expect {
    let (main, dest) = match spec.split_once(" -> ") {
        Some((m, d)) => (m, Some(d)),
        None => (spec, None),
    };
    let w: Vec<&str> = main.split_whitespace().collect();
    assert_eq!(w.len(), 3, "bad expectation {spec:?}");
    let mut e = Expect::new(w[0], w[1], dir.join(w[2]), rule);
    if let Some(d) = dest {
        e = e.dest(dir.join(d.trim()));
    }
    e
}

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

/// Compare one case bare and guarded, each in a fresh fixture at `<tmp>/ws`.
fn compare_case(
    case: &str,
    vars_for: &dyn Fn(&Path) -> Vec<(String, String)>,
) -> Result<(), String> {
    let ta = TempDir::new("cmpbare");
    let a = ta.join("ws");
    fixture(&a);
    let bare = calls(&a, case, None);
    let tb = TempDir::new("cmpguard");
    let b = tb.join("ws");
    fixture(&b);
    let vars = vars_for(&b);
    let v: Vec<(&str, &str)> = vars.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let guarded = calls(&b, case, Some(&v));
    let mut errs = Vec::new();
    let pb = parse_call(&bare);
    let pg = parse_call(&guarded);
    match (&pb, &pg) {
        (Ok(x), Ok(y)) => {
            if x.ret != y.ret || x.errno != y.errno {
                errs.push(format!(
                    "bare:    ret={} errno={}\nguarded: ret={} errno={}",
                    x.ret, x.errno, y.ret, y.errno
                ));
            }
        }
        _ => errs.push(format!(
            "no result line: bare {:?} guarded {:?}",
            pb.is_ok(),
            pg.is_ok()
        )),
    }
    let b_blocked = guarded.blocked();
    if !b_blocked.is_empty() {
        errs.push(format!(
            "{} blocked line(s) for an allowed call",
            b_blocked.len()
        ));
    }
    if let Some(d) = snapshot_diff(&snapshot_portable(&a), &snapshot_portable(&b)) {
        errs.push(format!("resulting trees differ (bare -> guarded):\n{d}"));
    }
    if errs.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "{}\n[bare run]\n{}\n[guarded run]\n{}",
            errs.join("\n"),
            bare.describe(),
            guarded.describe()
        ))
    }
}

/// Calls that FSGUARD_ROOT=<fixture> allows, successful or failing in the
/// kernel; each must behave exactly as without the library.
const ALLOWED_UNDER_ROOT: &[&str] = &[
    // successes
    "open f O_RDONLY",
    "open f O_WRONLY",
    "open f O_RDWR|O_APPEND",
    "open f O_RDONLY|O_TRUNC",
    "open new O_WRONLY|O_CREAT 0640",
    "open new O_WRONLY|O_CREAT|O_EXCL 0600",
    "open dir/ O_RDONLY",
    "open sl O_WRONLY|O_TRUNC",
    "open dsl/x O_RDWR",
    "open dangle O_WRONLY|O_CREAT 0644",
    "open64 new O_RDWR|O_CREAT 0644",
    "openat CWD new O_WRONLY|O_CREAT 0644",
    "-d . openat FD dir/x O_RDONLY",
    "-d dir openat FD ../f O_WRONLY",
    "openat64 CWD f O_RDWR",
    "creat new 0600",
    "creat f 0644",
    "creat64 new 0644",
    "__open_2 f O_RDWR",
    "__open64_2 f O_WRONLY",
    "__openat_2 CWD f O_RDONLY|O_TRUNC",
    "-d . __openat64_2 FD f O_WRONLY",
    "fopen f r",
    "fopen f w",
    "fopen new a",
    "fopen new wx",
    "fopen64 f r+",
    "freopen f w",
    "freopen64 new a+",
    "freopen_null f w",
    "opendir .",
    "opendir dsl",
    "unlink f",
    "unlink sl",
    "unlink dangle",
    "-d . unlinkat FD f 0",
    "unlinkat CWD emptydir AT_REMOVEDIR",
    "remove f",
    "remove emptydir",
    "rename f h",
    "rename f g",
    "rename dir emptydir",
    "rename emptydir newname/",
    "-d . renameat FD f FD dir/h",
    "renameat2 CWD f CWD h RENAME_NOREPLACE",
    "renameat2 CWD f CWD g RENAME_EXCHANGE",
    "mkdir newdir 0750",
    "mkdir newdir/ 0755",
    "-d . mkdirat FD newdir 0700",
    "rmdir emptydir",
    "rmdir emptydir/",
    "chmod f 0600",
    "chmod sl 0640",
    "-d . fchmodat FD f 0600 0",
    "chown f self self",
    "lchown sl self self",
    "fchownat CWD sl self self AT_SYMLINK_NOFOLLOW",
    "link f h",
    "-d . linkat FD f FD dir/h 0",
    "linkat CWD sl CWD h 0",
    "linkat CWD sl CWD h AT_SYMLINK_FOLLOW",
    "symlink f s",
    "-d . symlinkat f FD s",
    "truncate f 2",
    "truncate64 f 0",
    "utime f",
    "utime f NULL",
    "utimes f",
    "-d . utimensat FD f 0",
    "utimensat CWD sl AT_SYMLINK_NOFOLLOW",
    // kernel errors, which must come through unchanged
    "open missing O_RDONLY",
    "open missing/x O_WRONLY|O_CREAT 0644",
    "open f O_WRONLY|O_CREAT|O_EXCL 0644",
    "open dir O_WRONLY",
    "open dir O_RDWR",
    "open f/x O_RDONLY",
    "open f/ O_RDONLY",
    "open f/ O_WRONLY",
    "open new/ O_WRONLY|O_CREAT 0644",
    "open loop1 O_RDONLY",
    "open loop1 O_WRONLY|O_CREAT 0644",
    "open sl O_RDONLY|O_NOFOLLOW",
    "open <empty> O_RDONLY",
    "open f O_RDONLY|O_DIRECTORY",
    "openat 999 f O_RDONLY",
    "openat 999 f O_WRONLY|O_CREAT 0644",
    "-f f openat FD x O_RDONLY",
    "-f f openat FD x O_WRONLY|O_CREAT 0644",
    "creat missing/x 0644",
    "creat dir 0644",
    "__open_2 missing O_RDONLY",
    "__openat_2 999 f O_RDONLY",
    "fopen missing r",
    "fopen dir w",
    "fopen f wx",
    "fopen missing/x w",
    "freopen missing r",
    "opendir missing",
    "opendir f",
    "unlink missing",
    "unlink dir",
    "unlink f/",
    "unlink missing/x",
    "unlinkat CWD dir AT_REMOVEDIR",
    "unlinkat CWD f AT_REMOVEDIR",
    "unlinkat 999 f 0",
    "remove missing",
    "remove dir",
    "rename missing h",
    "rename f dir",
    "rename dir f",
    "rename f missing/h",
    "rename dir dir/sub",
    "rename f h/",
    "rename f/ h",
    "renameat2 CWD f CWD g RENAME_NOREPLACE",
    "renameat2 CWD f CWD h RENAME_EXCHANGE",
    "mkdir f 0755",
    "mkdir dir 0755",
    "mkdir missing/d 0755",
    "mkdir f/d 0755",
    "mkdir sl 0755",
    "mkdir dangle 0755",
    "mkdirat 999 d 0755",
    "rmdir dir",
    "rmdir f",
    "rmdir missing",
    "rmdir .",
    "rmdir dsl",
    "chmod missing 0600",
    "chmod f/ 0600",
    "chmod loop1 0600",
    "fchmodat CWD sl 0600 AT_SYMLINK_NOFOLLOW",
    "chown missing self self",
    "lchown missing self self",
    "fchownat CWD missing self self 0",
    "link f g",
    "link dir h",
    "link missing h",
    "link f missing/h",
    "symlink f g",
    "symlink x missing/s",
    "symlinkat x 999 s",
    "truncate missing 0",
    "truncate dir 0",
    "truncate f -1",
    "truncate64 missing 0",
    "utime missing",
    "utimes missing",
    "utimensat CWD missing 0",
    "open loop1/x O_WRONLY|O_CREAT 0644",
    "mkdir loop1/d 0755",
    "rename f loop1/h",
    "open {name300} O_RDONLY",
    "open {name300} O_WRONLY|O_CREAT 0644",
    "mkdir {name300} 0755",
    "open {deep}x O_RDONLY",
    "open {deep}x O_WRONLY|O_CREAT 0644",
    "unlink {deep}x",
    "open sl O_WRONLY|O_CREAT|O_NOFOLLOW 0644",
    "open dangle O_WRONLY|O_CREAT|O_NOFOLLOW 0644",
    "open . O_TMPFILE|O_WRONLY 0600",
];

#[test]
fn allowed_calls_behave_as_without_the_library() {
    let mut f = Failures::default();
    let vars = |ws: &Path| {
        vec![(
            "FSGUARD_ROOT".to_string(),
            ws.to_string_lossy().into_owned(),
        )]
    };
    for case in ALLOWED_UNDER_ROOT {
        f.case();
        if let Err(e) = compare_case(case, &vars) {
            f.fail(case, e);
        }
    }
    f.finish("allowed-under-root comparison");
}

/// The same with a relative FSGUARD_ROOT (resolved against the cwd at load).
#[test]
fn allowed_calls_behave_as_without_the_library_relative_root() {
    let mut f = Failures::default();
    let vars = |_: &Path| vec![("FSGUARD_ROOT".to_string(), ".".to_string())];
    for case in [
        "open f O_WRONLY",
        "open new O_WRONLY|O_CREAT 0640",
        "mkdir newdir 0750",
        "rename f h",
        "open missing O_RDONLY",
        "mkdir f 0755",
    ] {
        f.case();
        if let Err(e) = compare_case(case, &vars) {
            f.fail(case, e);
        }
    }
    f.finish("relative-root comparison");
}

/// Reads (successful or failing) under FSGUARD_READONLY=1 behave as without
/// the library, and so do writes to the built-in devices.
const ALLOWED_UNDER_READONLY: &[&str] = &[
    "open f O_RDONLY",
    "open64 f O_RDONLY",
    "-d . openat FD f O_RDONLY",
    "openat64 CWD f O_RDONLY",
    "creat /dev/null 0644",
    "__open_2 f O_RDONLY",
    "__open64_2 f O_RDONLY",
    "__openat_2 CWD f O_RDONLY",
    "__openat64_2 CWD f O_RDONLY",
    "fopen f r",
    "fopen64 f r",
    "freopen f r",
    "freopen64 f r",
    "freopen_null f r",
    "opendir .",
    "opendir dsl",
    "open dir O_RDONLY|O_DIRECTORY",
    "open sl O_RDONLY",
    "open /dev/null O_WRONLY",
    "open /dev/null O_RDWR|O_TRUNC",
    "fopen /dev/null w",
    "open missing O_RDONLY",
    "open f/ O_RDONLY",
    "open f/x O_RDONLY",
    "open loop1 O_RDONLY",
    "open <empty> O_RDONLY",
    "openat 999 f O_RDONLY",
    "-f f openat FD x O_RDONLY",
    "fopen missing r",
    "opendir f",
    "opendir missing",
];

#[test]
fn reads_behave_as_without_the_library_under_readonly() {
    let mut f = Failures::default();
    let vars = |_: &Path| vec![("FSGUARD_READONLY".to_string(), "1".to_string())];
    for case in ALLOWED_UNDER_READONLY {
        f.case();
        if let Err(e) = compare_case(case, &vars) {
            f.fail(case, e);
        }
    }
    f.finish("read-only read comparison");
}

#[test]
fn fortified_build_references_the_checked_entry_points() {
    let o = run(Command::new("nm").arg("-u").arg(fortified_bin()));
    assert!(o.status.success(), "{}", o.describe());
    for s in ["__open_2", "__open64_2", "__openat_2", "__openat64_2"] {
        assert!(
            o.stdout.lines().any(|l| l
                .split_whitespace()
                .last()
                .map(|x| x.split('@').next() == Some(s))
                == Some(true)),
            "the -D_FORTIFY_SOURCE=2 -O2 build does not reference {s}:\n{}",
            o.stdout
        );
    }
}

#[test]
fn fortified_opens_are_denied_under_readonly() {
    let cases: &[(&str, &str)] = &[
        ("open f O_WRONLY", "open write f"),
        ("open f O_RDONLY|O_TRUNC", "open write f"),
        ("open64 f O_RDWR", "open write f"),
        ("openat f O_WRONLY", "openat write f"),
        ("openat64 f O_APPEND", "openat write f"),
        ("open_const_rdonly_trunc f", "open write f"),
        ("open_const_wronly f", "open write f"),
    ];
    let mut fl = Failures::default();
    for (case, spec) in cases {
        fl.case();
        let td = TempDir::new("fort");
        let d = td.join("d");
        fixture(&d);
        let before = snapshot(&d);
        let out = run(guarded_cmd(fortified_bin(), &[("FSGUARD_READONLY", "1")])
            .args(case.split_whitespace())
            .current_dir(&d));
        let mut errs = Vec::new();
        match parse_call(&out) {
            Ok(c) if c.ret == "-1" && c.errno.starts_with("13(") => {}
            Ok(c) => errs.push(format!(
                "expected ret=-1 errno=13, got ret={} errno={}",
                c.ret, c.errno
            )),
            Err(e) => errs.push(e.to_string()),
        }
        if let Err(e) = check_traces(&out.blocked(), &[vec![expect_of(spec, &d, "readonly")]]) {
            errs.push(format!("trace: {e}"));
        }
        if let Some(diff) = snapshot_diff(&before, &snapshot(&d)) {
            errs.push(format!("tree changed:\n{diff}"));
        }
        if !errs.is_empty() {
            fl.fail(case, format!("{}\n{}", errs.join("\n"), out.describe()));
        }
        // and the read through the same entry point works
    }
    for case in [
        "open f O_RDONLY",
        "open64 f O_RDONLY",
        "openat f O_RDONLY",
        "openat64 f O_RDONLY",
    ] {
        fl.case();
        let td = TempDir::new("fortr");
        let d = td.join("d");
        fixture(&d);
        let out = run(guarded_cmd(fortified_bin(), &[("FSGUARD_READONLY", "1")])
            .args(case.split_whitespace())
            .current_dir(&d));
        match parse_call(&out) {
            Ok(c) if c.ret == "fd" && c.errno.starts_with("7777(") && out.blocked().is_empty() => {}
            _ => fl.fail(
                case,
                format!(
                    "fortified read should succeed untouched\n{}",
                    out.describe()
                ),
            ),
        }
    }
    fl.finish("fortified");
}
