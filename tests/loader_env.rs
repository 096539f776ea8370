//! Issue 27 item 2: loader variables that run code beside the library or
//! write files no hook checks (`LD_AUDIT`, `LD_DEBUG_OUTPUT`, `LD_PROFILE`,
//! `LD_PROFILE_OUTPUT`: `fsguard_policy::program::LOADER_ENV`). An exec
//! that sets one is refused (`rule=loader_env:NAME`), by the exec hooks
//! and by `fsguard run`; a process that starts with one under the library
//! refuses to run (exit 125). Each bare and under `fsguard run`.

#![cfg(target_os = "linux")]

mod common;

use common::*;
use std::path::{Path, PathBuf};

/// A refused variable, its value, the variables that make it take effect,
/// and the file it makes when it does.
type Case = (&'static str, String, Vec<(&'static str, String)>, PathBuf);

/// Each refused variable, its value (`{out}`: a path outside the root),
/// extra variables that make it take effect, and the file the loader (or
/// the audit module) creates when it does.
fn cases(out: &Path, audit: &Path) -> Vec<Case> {
    let o = out.display();
    vec![
        (
            "LD_AUDIT",
            audit.display().to_string(),
            vec![("AUDIT_MARK", format!("{o}/audit-ran"))],
            out.join("audit-ran"),
        ),
        (
            "LD_DEBUG_OUTPUT",
            format!("{o}/debug"),
            vec![("LD_DEBUG", "files".into())],
            out.join("debug"),
        ),
        (
            "LD_PROFILE",
            "libc.so.6".into(),
            vec![("LD_PROFILE_OUTPUT", o.to_string())],
            out.join("libc.so.6.profile"),
        ),
        // Refused alone too: it names where the loader writes.
        (
            "LD_PROFILE_OUTPUT",
            o.to_string(),
            vec![],
            out.join("libc.so.6.profile"),
        ),
    ]
}

/// The guarded program: execs /bin/true with the variables given as
/// arguments (NAME=value ...), through execve and posix_spawn.
const EXEC_WITH: &str = "\
import os, sys
env = dict(os.environ)
for kv in sys.argv[1:]:
    k, v = kv.split('=', 1)
    env[k] = v
try:
    pid = os.posix_spawn('/bin/true', ['true'], env)
    os.waitpid(pid, 0)
    print('spawned')
except OSError as e:
    print('spawn refused', e.errno)
try:
    os.execve('/bin/true', ['true'], env)
except OSError as e:
    print('execve refused', e.errno)
";

struct Setup {
    _td: TempDir,
    ws: PathBuf,
    out: PathBuf,
    audit: PathBuf,
}

fn setup() -> Setup {
    let td = TempDir::new("loaderenv");
    let ws = td.join("ws");
    mkdir(&ws);
    mkdir(&td.join("out"));
    let ws = ws.canonicalize().unwrap();
    let out = td.join("out").canonicalize().unwrap();
    let audit = c_program("audit_module", &["-shared", "-fPIC"]);
    Setup {
        _td: td,
        ws,
        out,
        audit,
    }
}

/// The exec the guarded program tried refused, with a trace line naming
/// the variable, and nothing created.
fn check_refused(o: &Out, var: &str, made: &Path, out: &Path) {
    assert!(
        o.stdout.contains("spawn refused 13") && o.stdout.contains("execve refused 13"),
        "{var}: the exec went through\n{}",
        o.describe()
    );
    let rule = format!("loader_env:{var}");
    let lines: Vec<_> = o
        .blocked()
        .into_iter()
        .filter(|t| t.field("rule") == Some(&rule))
        .collect();
    let calls: Vec<&str> = lines.iter().map(|t| t.call.as_str()).collect();
    assert_eq!(calls, ["posix_spawn", "execve"], "{var}\n{}", o.describe());
    assert!(
        lines.iter().all(|t| t.field("path") == Some("/bin/true")),
        "{}",
        o.describe()
    );
    let left: Vec<_> = std::fs::read_dir(out).unwrap().collect();
    assert!(
        !made.exists() && left.is_empty(),
        "{var}: the loader wrote outside: {left:?}"
    );
}

#[test]
fn loader_env_exec_is_refused() {
    let s = setup();
    for (var, value, extra, made) in cases(&s.out, &s.audit) {
        let mut args = vec![format!("{var}={value}")];
        args.extend(extra.iter().map(|(k, v)| format!("{k}={v}")));
        let o = run(
            guarded_cmd(python(), &[("FSGUARD_ROOT", s.ws.to_str().unwrap())])
                .args(["-c", EXEC_WITH])
                .args(&args)
                .current_dir(&s.ws),
        );
        check_refused(&o, var, &made, &s.out);
    }
}

#[test]
fn loader_env_exec_is_refused_under_run() {
    let s = setup();
    for (var, value, extra, made) in cases(&s.out, &s.audit) {
        let mut args = vec![format!("{var}={value}")];
        args.extend(extra.iter().map(|(k, v)| format!("{k}={v}")));
        let mut c = bare_cmd(cli());
        c.args(["run", "--root"])
            .arg(&s.ws)
            .args(["--"])
            .arg(python())
            .args(["-c", EXEC_WITH])
            .args(&args)
            .current_dir(&s.ws);
        let o = run(&mut c);
        check_refused(&o, var, &made, &s.out);
    }
}

/// `fsguard run` itself refuses to start a command with such a variable in
/// its environment: exit 126, the trace line, and the command never runs.
/// (The variables reach the `fsguard` process itself too, which is the
/// caller's own: what they do there is not looked at.)
#[test]
fn run_refuses_a_command_with_a_loader_env() {
    let s = setup();
    let ran = s.ws.join("ran");
    for (var, value, extra, _made) in cases(&s.out, &s.audit) {
        let mut c = bare_cmd(cli());
        c.args(["run", "--root"])
            .arg(&s.ws)
            .args(["--", "/usr/bin/touch"])
            .arg(&ran)
            .env(var, &value)
            .current_dir(&s.ws);
        for (k, v) in &extra {
            c.env(k, v);
        }
        let o = run(&mut c);
        assert_eq!(o.code(), Some(126), "{var}\n{}", o.describe());
        let rule = format!("loader_env:{var}");
        assert!(
            o.blocked().iter().any(
                |t| t.field("rule") == Some(&rule) && t.field("path") == Some("/usr/bin/touch")
            ),
            "{var}: no trace line\n{}",
            o.describe()
        );
        assert!(
            o.stderr.contains(&format!("{var} is set")),
            "{}",
            o.describe()
        );
        assert!(!ran.exists(), "{var}: the command ran");
    }
}

/// A process that starts under the library with such a variable already
/// set (its audit module ran, its file was written): it refuses to run,
/// exit 125, saying why.
#[test]
fn a_process_started_with_a_loader_env_refuses_to_run() {
    let s = setup();
    for (var, value, extra, _made) in cases(&s.out, &s.audit) {
        let mut c = guarded_cmd("/bin/echo", &[("FSGUARD_ROOT", s.ws.to_str().unwrap())]);
        c.arg("main ran").env(var, &value).current_dir(&s.ws);
        for (k, v) in &extra {
            c.env(k, v);
        }
        let o = run(&mut c);
        assert_eq!(o.code(), Some(125), "{var}\n{}", o.describe());
        assert!(!o.stdout.contains("main ran"), "{}", o.describe());
        // The first such variable is named (LD_PROFILE for its output's).
        let named = [var].into_iter().chain(extra.iter().map(|(k, _)| *k));
        assert!(
            named
                .into_iter()
                .any(|v| o.stderr.contains(&format!("fsguard: error: {v} is set: "))),
            "{}",
            o.describe()
        );
    }
}
