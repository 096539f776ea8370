//! Allowed calls behave as without the library (root, relative root, readonly).

use super::*;

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
