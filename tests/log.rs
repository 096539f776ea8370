//! FSGUARD_LOG (stderr/off/FILE), trace line format and atomicity, the
//! default read-only policy, and that the policy is frozen at load.

// LD_PRELOAD, /proc and glibc symbol names: Linux only.
#![cfg(target_os = "linux")]

mod common;

use common::*;
use std::path::PathBuf;

fn calls_bin() -> PathBuf {
    c_program("calls", &["-O0", "-U_FORTIFY_SOURCE"])
}

fn ws() -> (TempDir, PathBuf) {
    let td = TempDir::new("log");
    let d = td.join("d");
    mkdir(&d);
    write_file(&d.join("f"), "hello\n", 0o644);
    (td, d)
}

fn denied(out: &Out) -> bool {
    out.stdout.starts_with("ret=-1 errno=13(")
}

#[test]
fn log_stderr_is_default_and_explicit() {
    let (_td, d) = ws();
    for vars in [
        vec![("FSGUARD_READONLY", "1")],
        vec![("FSGUARD_READONLY", "1"), ("FSGUARD_LOG", "stderr")],
    ] {
        let o = run(guarded_cmd(calls_bin(), &vars)
            .args(["open", "f", "O_WRONLY"])
            .current_dir(&d));
        assert!(denied(&o), "\n{}", o.describe());
        assert_traces(&o, &[Expect::new("open", "write", d.join("f"), "readonly")]);
        // the line starts with the tag and is a complete line
        let line = o.stderr.lines().find(|l| l.contains(" blocked ")).unwrap();
        assert!(
            line.starts_with("[fsguard] blocked open write path="),
            "{line:?}"
        );
    }
}

#[test]
fn log_off_still_denies() {
    let (_td, d) = ws();
    let before = snapshot(&d);
    let o = run(guarded_cmd(
        calls_bin(),
        &[("FSGUARD_READONLY", "1"), ("FSGUARD_LOG", "off")],
    )
    .args(["open", "f", "O_WRONLY"])
    .current_dir(&d));
    assert!(denied(&o), "\n{}", o.describe());
    assert!(
        o.blocked().is_empty(),
        "trace line despite FSGUARD_LOG=off\n{}",
        o.describe()
    );
    assert_eq!(snapshot_diff(&before, &snapshot(&d)), None);
}

#[test]
fn log_file_appends_one_line_per_denial() {
    let (td, d) = ws();
    let other = td.join("other.txt");
    write_file(&other, "other\n", 0o644);
    let logdir = TempDir::new("logfile");
    let log = logdir.join("fsguard.log");
    let before = snapshot(td.path());
    // also under a root that does not contain the log file: the library's own
    // log writes are not subject to the policy
    for vars in [
        vec![("FSGUARD_READONLY", "1")],
        vec![("FSGUARD_ROOT", d.to_str().unwrap())],
    ] {
        let mut v = vars.clone();
        v.push(("FSGUARD_LOG", log.to_str().unwrap()));
        let o = run(guarded_cmd(calls_bin(), &v)
            .args(["open", other.to_str().unwrap(), "O_WRONLY|O_TRUNC"])
            .current_dir(&d));
        assert!(denied(&o), "\n{}", o.describe());
        assert!(
            o.blocked().is_empty(),
            "trace on stderr despite FSGUARD_LOG=FILE\n{}",
            o.describe()
        );
    }
    let text = std::fs::read_to_string(&log).unwrap_or_else(|e| panic!("{}: {e}", log.display()));
    let got = traces(&text, "blocked");
    if let Err(e) = check_traces(
        &got,
        &[vec![
            Expect::new("open", "write", &other, "readonly"),
            Expect::new("open", "write", &other, "root"),
        ]],
    ) {
        panic!("log file:\n{text}\n{e}");
    }
    assert_eq!(
        text.lines().filter(|l| !l.trim().is_empty()).count(),
        2,
        "log file:\n{text}"
    );
    assert_eq!(snapshot_diff(&before, &snapshot(td.path())), None);
}

/// Many processes share one log file; every line must come out whole.
#[test]
fn concurrent_writers_never_interleave() {
    let (_td, d) = ws();
    let logdir = TempDir::new("logconc");
    let log = logdir.join("fsguard.log");
    let n_proc = 8;
    let n_each = 60;
    // long names make torn writes more likely to show
    let long = "x".repeat(120);
    let script = format!(
        "i=0; while [ $i -lt {n_each} ]; do echo x > {long}_$$_$i 2>/dev/null; i=$((i+1)); done"
    );
    let mut children = Vec::new();
    for _ in 0..n_proc {
        let mut c = guarded_cmd(
            "sh",
            &[
                ("FSGUARD_READONLY", "1"),
                ("FSGUARD_LOG", log.to_str().unwrap()),
            ],
        );
        c.args(["-c", &script]).current_dir(&d);
        children.push(std::thread::spawn(move || run(&mut c)));
    }
    for c in children {
        let o = c.join().unwrap();
        assert!(o.status.success(), "\n{}", o.describe());
    }
    let text = std::fs::read_to_string(&log).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines.len(),
        n_proc * n_each,
        "wrong number of lines in the shared log"
    );
    let prefix = format!("{}/{long}_", d.display());
    for l in &lines {
        let t = parse_trace(l).unwrap_or_else(|| panic!("torn or malformed line: {l:?}"));
        assert!(
            t.event == "blocked" && t.call == "open" && t.access == "write",
            "odd line {l:?}"
        );
        assert!(
            t.field("path").is_some_and(|p| p.starts_with(&prefix)),
            "odd path in {l:?}"
        );
        assert_eq!(t.field("rule"), Some("readonly"), "{l:?}");
    }
    // nothing was created
    assert_eq!(std::fs::read_dir(&d).unwrap().count(), 1);
}

#[test]
fn paths_with_spaces_and_quotes_are_quoted() {
    let (_td, d) = ws();
    let name = "a b\"c\\d";
    let o = run(guarded_cmd(calls_bin(), &[("FSGUARD_READONLY", "1")])
        .args(["open", name, "O_WRONLY|O_CREAT", "0644"])
        .current_dir(&d));
    assert!(denied(&o), "\n{}", o.describe());
    assert_traces(
        &o,
        &[Expect::new("open", "write", d.join(name), "readonly")],
    );
    let line = o.stderr.lines().find(|l| l.contains(" blocked ")).unwrap();
    assert!(
        line.contains("path=\""),
        "value with spaces not quoted: {line:?}"
    );
    // a newline in a name must not split the trace line
    let name = "new\nline";
    let o = run(guarded_cmd(calls_bin(), &[("FSGUARD_READONLY", "1")])
        .args(["open", name, "O_WRONLY|O_CREAT", "0644"])
        .current_dir(&d));
    assert!(denied(&o), "\n{}", o.describe());
    assert_traces(
        &o,
        &[Expect::new("open", "write", d.join(name), "readonly")],
    );
    assert!(
        !o.stderr.lines().any(|l| l.starts_with("line")),
        "trace line split by a newline\n{}",
        o.describe()
    );
}

/// With no policy at all the library is read-only and says so once.
#[test]
fn no_policy_means_readonly_announced_once() {
    let (_td, d) = ws();
    let before = snapshot(&d);
    let o = run(guarded_cmd("sh", &[])
        .args(["-c", "echo > a; echo > b; read x < f; echo \"$x\""])
        .current_dir(&d));
    assert_eq!(o.stdout, "hello\n", "\n{}", o.describe());
    assert_traces(
        &o,
        &[
            Expect::new("open", "write", d.join("a"), "readonly"),
            Expect::new("open", "write", d.join("b"), "readonly"),
        ],
    );
    let notices: Vec<&str> = o
        .stderr
        .lines()
        .filter(|l| {
            (l.starts_with("[fsguard]") || l.starts_with("fsguard:")) && !l.contains(" blocked ")
        })
        .collect();
    assert_eq!(
        notices.len(),
        1,
        "expected exactly one read-only notice\n{}",
        o.describe()
    );
    assert_eq!(snapshot_diff(&before, &snapshot(&d)), None);
}

/// Changing the environment after load changes nothing.
#[test]
fn policy_is_frozen_at_load() {
    let (_td, d) = ws();
    let before = snapshot(&d);
    let code = r#"
import os
for k in ("FSGUARD_READONLY", "FSGUARD_ROOT", "FSGUARD_LOG", "LD_PRELOAD"):
    os.environ.pop(k, None)
os.environ["FSGUARD_READONLY"] = "0"
os.environ["FSGUARD_LOG"] = "off"
try:
    open("f", "w")
    print("opened")
except PermissionError as e:
    print("denied", e.errno)
"#;
    let o = run(guarded_cmd(python(), &[("FSGUARD_READONLY", "1")])
        .args(["-c", code])
        .current_dir(&d));
    assert_eq!(o.stdout, "denied 13\n", "\n{}", o.describe());
    assert_traces(&o, &[Expect::new("open", "write", d.join("f"), "readonly")]);
    assert_eq!(snapshot_diff(&before, &snapshot(&d)), None);
}

/// Threads: every denied call gets EACCES and its own line.
#[test]
fn threads_each_get_eacces_and_a_line() {
    let (_td, d) = ws();
    let code = r#"
import threading
res = []
def w(i):
    for j in range(25):
        try:
            open("t%d_%d" % (i, j), "w")
            res.append("opened")
        except PermissionError as e:
            res.append(e.errno)
ts = [threading.Thread(target=w, args=(i,)) for i in range(8)]
[t.start() for t in ts]
[t.join() for t in ts]
print(len(res), sorted(set(res)))
"#;
    let o = run(guarded_cmd(python(), &[("FSGUARD_READONLY", "1")])
        .args(["-c", code])
        .current_dir(&d));
    assert_eq!(o.stdout, "200 [13]\n", "\n{}", o.describe());
    assert_eq!(o.blocked().len(), 200, "\n{}", o.describe());
    for t in o.blocked() {
        assert!(
            t.call == "open" && t.field("rule") == Some("readonly"),
            "{}",
            t.raw
        );
    }
    assert_eq!(std::fs::read_dir(&d).unwrap().count(), 1);
}

/// A forked child (no exec) is still guarded.
#[test]
fn fork_child_is_guarded() {
    let (_td, d) = ws();
    let code = r#"
import os
pid = os.fork()
if pid == 0:
    try:
        open("child", "w")
        os._exit(0)
    except PermissionError:
        os._exit(13)
_, st = os.waitpid(pid, 0)
print(os.WEXITSTATUS(st))
"#;
    let o = run(guarded_cmd(python(), &[("FSGUARD_READONLY", "1")])
        .args(["-c", code])
        .current_dir(&d));
    assert_eq!(o.stdout, "13\n", "\n{}", o.describe());
    assert_traces(
        &o,
        &[Expect::new("open", "write", d.join("child"), "readonly")],
    );
}

/// fork() while other threads are busy being denied (and logging): the child
/// must not inherit a held lock and hang.
#[test]
fn fork_during_concurrent_denials_does_not_deadlock() {
    let (_td, d) = ws();
    let logdir = TempDir::new("logfork");
    let log = logdir.join("fsguard.log");
    let code = r#"
import os, threading, time, signal
stop = False
def spam():
    i = 0
    while not stop:
        try:
            open("spam_%d" % (i % 7), "w")
        except PermissionError:
            pass
        i += 1
ts = [threading.Thread(target=spam, daemon=True) for _ in range(4)]
[t.start() for t in ts]
hung = bad = 0
for k in range(100):
    pid = os.fork()
    if pid == 0:
        try:
            open("child_%d" % k, "w")
            os._exit(1)
        except PermissionError:
            os._exit(13)
    deadline = time.time() + 10
    while True:
        r, st = os.waitpid(pid, os.WNOHANG)
        if r:
            if not (os.WIFEXITED(st) and os.WEXITSTATUS(st) == 13):
                bad += 1
            break
        if time.time() > deadline:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            hung += 1
            break
        time.sleep(0.001)
stop = True
print("hung=%d bad=%d" % (hung, bad))
"#;
    let o = run(guarded_cmd(
        python(),
        &[
            ("FSGUARD_READONLY", "1"),
            ("FSGUARD_LOG", log.to_str().unwrap()),
        ],
    )
    .args(["-c", code])
    .current_dir(&d));
    assert_eq!(o.stdout, "hung=0 bad=0\n", "\n{}", o.describe());
    assert_eq!(
        std::fs::read_dir(&d).unwrap().count(),
        1,
        "files were created"
    );
    // every child logged its own denial
    let text = std::fs::read_to_string(&log).unwrap();
    let children = traces(&text, "blocked")
        .iter()
        .filter(|t| t.field("path").is_some_and(|p| p.contains("/child_")))
        .count();
    assert_eq!(children, 100);
}
