//! `system`, `popen` and `pclose`, written on `posix_spawn` with the guarded
//! child environment: the caller's `environ` is never swapped (other threads
//! reading it see the program's own environment), nothing leaks per call,
//! and the signal and stream semantics are glibc's.

mod common;

use common::*;

/// Variables enough that a per-call copy of the environment would show in
/// the resident set.
const EXTRA_VARS: usize = 400;

fn field(out: &str, key: &str) -> i64 {
    out.split_whitespace()
        .find_map(|w| w.strip_prefix(key)?.strip_prefix('='))
        .unwrap_or_else(|| panic!("no {key} in {out:?}"))
        .parse()
        .unwrap()
}

#[test]
fn system_and_popen_under_concurrent_getenv() {
    let d = TempDir::new("shell-stress");
    let prog = c_program("shell_stress", &["-O1", "-pthread"]);
    let mut cmd = guarded_cmd(prog, &[("FSGUARD_READONLY", "1")]);
    for i in 0..EXTRA_VARS {
        cmd.env(format!("SHELL_STRESS_PAD_{i}"), "x".repeat(40));
    }
    let before = snapshot(d.path());
    let out = run(cmd.args(["2000", "2"]).current_dir(d.path()));
    assert_eq!(out.code(), Some(0), "{}", out.describe());
    let o = out.stdout.trim();
    // Every status is the child's own; the first call's child was guarded
    // (its write refused) and had the caller's variables.
    assert_eq!(field(o, "status_bad"), 0, "{}", out.describe());
    // Other threads never saw the child's environment in `environ`.
    assert_eq!(field(o, "getenv_bad"), 0, "{}", out.describe());
    assert!(field(o, "getenv_calls") > 0, "{o}");
    // Nothing grows with the number of calls: 200 calls in, then 2,000.
    // A copy of the environment per call would be 3,600 × ~3.3 KB ≈ 12 MB.
    let (early, end) = (field(o, "rss_early"), field(o, "rss_end"));
    assert!(
        early > 0 && end - early < 3 * 1024,
        "RSS {early} KB → {end} KB"
    );
    assert_eq!(field(o, "fds_early"), field(o, "fds_end"), "{o}");
    let t = out.blocked();
    assert_eq!(t.len(), 1, "{}", out.describe());
    assert_eq!(t[0].call, "open");
    assert_eq!(t[0].access, "write");
    assert_eq!(
        t[0].field("path"),
        Some(d.join("shell_stress_probe").to_str().unwrap())
    );
    assert_eq!(snapshot_diff(&before, &snapshot(d.path())), None);
}

fn signal_cases(out: &Out) -> Vec<String> {
    out.stdout.lines().map(str::to_string).collect()
}

#[test]
fn system_signals_and_popen_streams_as_glibc() {
    let d = TempDir::new("shell-signals");
    let prog = c_program("shell_signals", &["-O1"]);
    let bare = run(bare_cmd(&prog).current_dir(d.path()));
    let guarded = run(guarded_cmd(&prog, &[("FSGUARD_READONLY", "1")]).current_dir(d.path()));
    for out in [&bare, &guarded] {
        assert_eq!(out.code(), Some(0), "{}", out.describe());
        let cases = signal_cases(out);
        assert_eq!(cases.len(), 16, "{}", out.describe());
        let failed: Vec<&String> = cases.iter().filter(|l| !l.ends_with("=ok")).collect();
        assert!(failed.is_empty(), "{failed:?}\n{}", out.describe());
    }
    assert_no_blocked(&guarded);
}

#[test]
fn refused_shell_is_traced_under_the_callers_name() {
    let d = TempDir::new("shell-refused");
    let sh = std::fs::canonicalize("/bin/sh").unwrap();
    let cfg = d.join("fsguard.toml");
    write_file(
        &cfg,
        &format!("[read]\ndeny = [{:?}]\n", sh.to_str().unwrap()),
        0o644,
    );
    let prog = c_program("shell_signals", &["-O1"]);
    let out = run(
        guarded_cmd(&prog, &[("FSGUARD_CONFIG", cfg.to_str().unwrap())])
            .arg("refused")
            .current_dir(d.path()),
    );
    assert_eq!(out.code(), Some(0), "{}", out.describe());
    assert_eq!(
        out.stdout,
        format!("system=-1 errno={EACCES}\npopen=null errno={EACCES}\n"),
        "{}",
        out.describe()
    );
    let t = out.blocked();
    let calls: Vec<(&str, &str, Option<&str>)> = t
        .iter()
        .map(|t| (t.call.as_str(), t.access.as_str(), t.field("path")))
        .collect();
    let p = Some(sh.to_str().unwrap());
    assert_eq!(
        calls,
        [("system", "exec", p), ("popen", "exec", p)],
        "{}",
        out.describe()
    );
}
