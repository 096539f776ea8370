//! The `_FORTIFY_SOURCE` entry points.

use super::*;

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
