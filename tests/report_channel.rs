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

/// When the pipe cannot be had again (the parent that held it is gone),
/// the loss is said on stderr, and the child's trace line goes there
/// rather than nowhere.
#[test]
fn a_pipe_that_cannot_be_restored_is_said() {
    let td = TempDir::new("reportlost");
    let ws = td.join("ws");
    let out = td.join("outside");
    mkdir(&ws);
    mkdir(&out);
    let target = out.join("x");
    let prog = c_program("closefrom_orphan", &[]);
    let mut c = bare_cmd(cli());
    c.arg("run")
        .arg("--root")
        .arg(&ws)
        .arg("--")
        .arg(&prog)
        .arg(format!("echo x > {}", target.display()))
        .current_dir(&ws);
    // `run` reads until the orphan, which shares fsguard's stderr, is done.
    let o = run(&mut c);
    assert_eq!(o.code(), Some(0), "{}", o.describe());
    assert!(
        o.stderr.contains(
            "[fsguard] warning: the report pipe of fsguard run was closed before exec \
             and cannot be restored"
        ),
        "{}",
        o.describe()
    );
    let b = o.blocked();
    assert_eq!(b.len(), 1, "{}", o.describe());
    assert_eq!(
        Expect::new("open", "write", &target, "root").mismatch(&b[0]),
        None,
        "{}",
        o.describe()
    );
    assert!(!target.exists());
}

/// Bytes a program writes to the pipe itself, without a newline, do not
/// swallow the library's next report: the refusal is still counted.
#[test]
fn a_program_cannot_hide_a_refusal_by_writing_to_the_pipe() {
    let td = TempDir::new("reportforge");
    let ws = td.join("ws");
    let out = td.join("outside");
    mkdir(&ws);
    mkdir(&out);
    let target = out.join("x");
    let script = "\
import errno, os, sys
fd = int(os.environ['FSGUARD_REPORT_FD'])
os.write(fd, b'half a line, no newline')
try:
    open(sys.argv[1], 'w')
    sys.exit(8)
except OSError as e:
    assert e.errno == errno.EACCES, e
os.write(fd, b'blocked forged call write /forged\\n')
";
    let mut c = bare_cmd(cli());
    c.arg("run")
        .arg("--root")
        .arg(&ws)
        .arg("--fail-on-block")
        .args(["--", "python3", "-c", script])
        .arg(&target)
        .current_dir(&ws);
    let o = run(&mut c);
    assert_eq!(o.code(), Some(3), "{}", o.describe());
    // The real refusal is counted and named; the forged line adds to it.
    assert!(
        o.stderr.contains(&format!(
            "fsguard: 2 accesses blocked; first: open write {}",
            target.display()
        )),
        "{}",
        o.describe()
    );
    assert_eq!(o.blocked().len(), 1, "{}", o.describe());
    assert!(!target.exists());
}
