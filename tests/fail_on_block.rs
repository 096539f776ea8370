//! `fsguard run --fail-on-block[=N]`: a run in which anything was blocked
//! exits N (default 3), even when the command caught the error and exited 0.

#![cfg(target_os = "linux")]

mod common;

use common::*;
use std::path::Path;

/// Tries to write outside the workspace, catches EACCES, says so, exits 0.
const SWALLOW: &str = "\
import errno, sys
try:
    open(sys.argv[1], 'w').write('x')
    print('written')
except OSError as e:
    assert e.errno == errno.EACCES, e
    print('caught EACCES')
";

fn fsguard_run(ws: &Path, opts: &[&str], target: &Path) -> Out {
    let mut c = bare_cmd(cli());
    c.arg("run")
        .arg("--root")
        .arg(ws)
        .args(opts)
        .args(["--", "python3", "-c", SWALLOW])
        .arg(target)
        .current_dir(ws);
    run(&mut c)
}

fn dirs() -> (TempDir, std::path::PathBuf, std::path::PathBuf) {
    let td = TempDir::new("failonblock");
    let ws = td.join("ws");
    let out = td.join("outside");
    mkdir(&ws);
    mkdir(&out);
    (td, ws, out)
}

#[test]
fn a_caught_refusal_exits_0_without_the_flag() {
    let (_td, ws, out) = dirs();
    let o = fsguard_run(&ws, &[], &out.join("x"));
    assert_eq!(o.stdout.trim(), "caught EACCES", "{}", o.describe());
    assert_eq!(o.code(), Some(0), "{}", o.describe());
    assert!(!out.join("x").exists());
}

#[test]
fn fail_on_block_exits_3_by_default_and_n_when_given() {
    let (_td, ws, out) = dirs();
    for (opt, want) in [("--fail-on-block", 3), ("--fail-on-block=7", 7)] {
        let before = snapshot(&out);
        let o = fsguard_run(&ws, &[opt], &out.join("x"));
        assert_eq!(o.stdout.trim(), "caught EACCES", "{}", o.describe());
        assert_eq!(o.code(), Some(want), "{opt}\n{}", o.describe());
        let b = o.blocked();
        assert_eq!(b.len(), 1, "{}", o.describe());
        assert_eq!(b[0].field("rule"), Some("root"), "{}", o.describe());
        assert!(
            o.stderr
                .contains(&format!("fsguard: exit {want} (--fail-on-block)")),
            "{}",
            o.describe()
        );
        assert_eq!(snapshot_diff(&before, &snapshot(&out)), None);
    }
}

#[test]
fn fail_on_block_keeps_the_status_when_nothing_was_blocked() {
    let (_td, ws, _out) = dirs();
    let o = fsguard_run(&ws, &["--fail-on-block"], &ws.join("inside"));
    assert_eq!(o.stdout.trim(), "written", "{}", o.describe());
    assert_eq!(o.code(), Some(0), "{}", o.describe());
}

#[test]
fn fail_on_block_in_audit_mode_counts_what_would_have_been_blocked() {
    let (_td, ws, _out) = dirs();
    // Landlock keeps writes outside the root refused in audit mode; a write
    // the library alone audits is one a deny rule names inside the root.
    let mut c = bare_cmd(cli());
    c.args(["run", "--audit", "--fail-on-block", "--root"])
        .arg(&ws)
        .args(["--deny-write"])
        .arg(ws.join("denied"))
        .args(["--", "python3", "-c", SWALLOW])
        .arg(ws.join("denied"))
        .current_dir(&ws);
    let o = run(&mut c);
    assert_eq!(o.stdout.trim(), "written", "{}", o.describe());
    assert_eq!(o.code(), Some(3), "{}", o.describe());
    assert!(
        o.stderr.contains("[fsguard] audit open write"),
        "{}",
        o.describe()
    );
}

#[test]
fn fail_on_block_rejects_a_bad_status() {
    let (_td, ws, out) = dirs();
    for bad in [
        "--fail-on-block=0",
        "--fail-on-block=256",
        "--fail-on-block=x",
    ] {
        let o = fsguard_run(&ws, &[bad], &out.join("x"));
        assert_eq!(o.code(), Some(125), "{bad}\n{}", o.describe());
        assert!(
            o.stderr.contains("--fail-on-block: bad value"),
            "{}",
            o.describe()
        );
    }
}

#[test]
fn a_wrapper_keeps_fail_on_block_and_no_config() {
    let (td, ws, out) = dirs();
    let bin = td.join("bin");
    let mut c = bare_cmd(cli());
    c.args(["wrap", "guarded-py", "--dir"])
        .arg(&bin)
        .args(["--no-config", "--fail-on-block=5", "--root"])
        .arg(&ws)
        .args(["--", "python3", "-c", SWALLOW])
        .current_dir(td.path());
    let o = run(&mut c);
    assert_eq!(o.code(), Some(0), "{}", o.describe());
    let script = std::fs::read_to_string(bin.join("guarded-py")).unwrap();
    assert!(
        script.contains("--no-config") && script.contains("--fail-on-block=5"),
        "{script}"
    );
    let o = run(bare_cmd(bin.join("guarded-py"))
        .arg(out.join("x"))
        .current_dir(&ws));
    assert_eq!(o.stdout.trim(), "caught EACCES", "{}", o.describe());
    assert_eq!(o.code(), Some(5), "{}", o.describe());
    assert!(!out.join("x").exists());
}
