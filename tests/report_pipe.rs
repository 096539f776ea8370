//! A child started with its inherited descriptors closed (Python's
//! `subprocess`, `closefrom` before exec) is still on fsguard run's record:
//! the exec hook gives it back the report pipe, so its refusals are counted
//! (summary, `--fail-on-block`) and its trace lines reach `--log FILE`.

#![cfg(target_os = "linux")]

mod common;

use common::*;
use std::path::{Path, PathBuf};

/// Runs `cmd` under `fsguard run --root WS --fail-on-block --log LOG`,
/// checks the refused write of `target` (made by a child that closed its
/// inherited fds) is counted and logged, and that nothing was written.
fn check_child_on_record(tag: &str, cmd: &[&str], target_arg: bool) {
    let td = TempDir::new(tag);
    let ws = td.join("ws");
    let out = td.join("outside");
    mkdir(&ws);
    mkdir(&out);
    let log = td.join("trace.log");
    let target: PathBuf = out.join("x");
    let before = snapshot(&out);
    let mut c = bare_cmd(cli());
    c.arg("run")
        .arg("--root")
        .arg(&ws)
        .arg("--fail-on-block")
        .arg("--log")
        .arg(&log)
        .arg("--")
        .args(cmd);
    if target_arg {
        c.arg(&target);
    } else {
        c.arg(format!("echo x > {}", target.display()));
    }
    c.current_dir(&ws);
    let o = run(&mut c);
    let logged = std::fs::read_to_string(&log).unwrap_or_default();
    let ctx = format!("{}\n--- log ---\n{logged}", o.describe());
    assert_eq!(o.code(), Some(3), "{ctx}");
    assert!(
        o.stderr.contains(&format!(
            "fsguard: 1 access blocked; first: open write {}",
            target.display()
        )),
        "the summary must count the child's refusal\n{ctx}"
    );
    let b = traces(&logged, "blocked");
    let want = Expect::new("open", "write", &target, "root");
    assert_eq!(b.len(), 1, "{ctx}");
    assert_eq!(want.mismatch(&b[0]), None, "{ctx}");
    // The line went to the log, not to the child's own stderr.
    assert!(o.blocked().is_empty(), "{ctx}");
    assert!(!o.stderr.contains("report pipe"), "{ctx}");
    assert_eq!(snapshot_diff(&before, &snapshot(&out)), None, "{ctx}");
    assert!(!Path::new(&target).exists());
}

#[test]
fn python_subprocess_with_close_fds_stays_on_record() {
    check_child_on_record(
        "reportpy",
        &[
            "python3",
            "-c",
            "import subprocess, sys\n\
             r = subprocess.run(['sh', '-c', 'echo x > ' + sys.argv[1]])\n\
             sys.exit(0 if r.returncode != 0 else 9)",
        ],
        true,
    );
}

#[test]
fn closefrom_then_execve_stays_on_record() {
    let prog = c_program("closefrom_exec", &[]);
    check_child_on_record("reportcf", &[prog.to_str().unwrap()], false);
}
