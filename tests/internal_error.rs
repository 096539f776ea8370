//! A bug in the library (a check that panics, injected by the
//! `fault-injection` build) refuses the call with EACCES and a trace line
//! naming the call, the path and `rule=internal_error`, prints nothing of
//! the panic, and never reads the library's own file to symbolize it.

mod common;

use common::*;
use std::path::Path;
use std::process::Command;

/// The fault-injection library preloaded, confined to `ws`.
fn faulty(prog: &Path, ws: &Path, vars: &[(&str, &str)]) -> Command {
    let mut c = bare_cmd(prog);
    c.env("LD_PRELOAD", fault_lib())
        .env("FSGUARD_ROOT", ws)
        .arg(ws);
    for (k, v) in vars {
        c.env(k, v);
    }
    c
}

const RESULTS: &str = "mkdir=-1 errno=13\nrename=-1 errno=13\nafter=0 errno=0\n";

/// Runs the program once; checks its results, that nothing but the allowed
/// `ok` changed, and that no panic text reached stderr.
fn run_case(prog: &Path, ws: &Path, vars: &[(&str, &str)]) -> Out {
    let before = snapshot_portable(ws);
    let o = run(&mut faulty(prog, ws, vars));
    assert_eq!(o.stdout, RESULTS, "{}", o.describe());
    assert!(ws.join("ok").is_dir(), "{}", o.describe());
    std::fs::remove_dir(ws.join("ok")).unwrap();
    if let Some(d) = snapshot_diff(&before, &snapshot_portable(ws)) {
        panic!("a refused call changed the disk: {d}\n{}", o.describe());
    }
    for text in [
        "panicked",
        "injected fault",
        "stack backtrace",
        "RUST_BACKTRACE",
    ] {
        assert!(!o.stderr.contains(text), "{text:?}:\n{}", o.describe());
    }
    o
}

#[test]
fn a_panicking_check_is_refused_and_traced_as_an_internal_error() {
    let td = TempDir::new("internal");
    let ws = td.join("ws");
    mkdir(&ws);
    write_file(&ws.join("a"), "a\n", 0o644);
    let prog = c_program("internal_error", &["-O2"]);
    let bad = ws.join("fsguard-fault-panic");

    let o = run_case(&prog, &ws, &[]);
    assert_traces(
        &o,
        &[
            Expect::new("mkdir", "write", &bad, "internal_error"),
            Expect::new("rename", "write", ws.join("a"), "internal_error").dest(&bad),
        ],
    );
    assert!(o.blocked().iter().all(|t| t.field("errno") != Some("0")));

    let o = run_case(&prog, &ws, &[("FSGUARD_LOG_FORMAT", "json")]);
    let lines: Vec<&str> = o.stderr.lines().filter(|l| l.starts_with('{')).collect();
    assert_eq!(lines.len(), 2, "{}", o.describe());
    let bad_s = bad.to_str().unwrap();
    for (line, call) in lines.iter().zip(["mkdir", "rename"]) {
        for want in [
            "\"event\":\"blocked\"".to_string(),
            format!("\"call\":\"{call}\""),
            "\"rule\":\"internal_error\"".into(),
            "\"errno\":13".into(),
        ] {
            assert!(line.contains(&want), "{want} not in {line}");
        }
    }
    assert!(
        lines[0].contains(&format!("\"path\":\"{bad_s}\"")),
        "{}",
        lines[0]
    );
    assert!(
        lines[1].contains(&format!("\"dest\":\"{bad_s}\"")),
        "{}",
        lines[1]
    );
}

#[test]
fn a_panic_under_rust_backtrace_reads_nothing_of_the_library() {
    let td = TempDir::new("internal-bt");
    let ws = td.join("ws");
    mkdir(&ws);
    write_file(&ws.join("a"), "a\n", 0o644);
    let prog = c_program("internal_error", &["-O2"]);
    let bad = ws.join("fsguard-fault-panic");
    for bt in ["1", "full"] {
        // Under a root the library's file is outside: a read of it to
        // symbolize would be refused and traced too.
        let o = run_case(&prog, &ws, &[("RUST_BACKTRACE", bt)]);
        assert_traces(
            &o,
            &[
                Expect::new("mkdir", "write", &bad, "internal_error"),
                Expect::new("rename", "write", ws.join("a"), "internal_error").dest(&bad),
            ],
        );
    }
    // And at the syscall level: the loader's one open of the library is
    // the only one.
    let log = td.join("strace.log");
    let c = faulty(&prog, &ws, &[("RUST_BACKTRACE", "1")]);
    let mut st = bare_cmd("strace");
    st.args(["-f", "-qq", "-e", "trace=open,openat,openat2", "-o"])
        .arg(&log);
    // The program's environment, not strace's own (strace stays unguarded).
    for (k, v) in c.get_envs() {
        if let Some(v) = v {
            let mut kv = k.to_os_string();
            kv.push("=");
            kv.push(v);
            st.arg("-E").arg(kv);
        }
    }
    st.arg(c.get_program()).args(c.get_args());
    let o = run(&mut st);
    if o.code() != Some(0) && !log.is_file() {
        // No ptrace here (a container without it): the trace check above stands.
        eprintln!("strace unavailable: {}", o.describe());
        return;
    }
    assert_eq!(o.stdout, RESULTS, "{}", o.describe());
    let text = std::fs::read_to_string(&log).unwrap();
    let lib = fault_lib().file_name().unwrap().to_str().unwrap();
    let opens: Vec<&str> = text.lines().filter(|l| l.contains(lib)).collect();
    assert_eq!(
        opens.len(),
        1,
        "the library's file was opened again:\n{text}"
    );
}

/// The library's panic hook is its own std's (statically linked into the
/// cdylib, nothing of it exported): a Rust program's hook still prints.
#[test]
fn a_rust_programs_own_panic_hook_is_untouched() {
    let td = TempDir::new("internal-host");
    let src = td.join("host.rs");
    write_file(
        &src,
        "fn main() {\n    let r = std::panic::catch_unwind(|| panic!(\"host panic\"));\n    \
         println!(\"caught={}\", r.is_err());\n}\n",
        0o644,
    );
    let host = td.join("host");
    let rustc = std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    let o = run(bare_cmd(rustc).arg("-O").arg(&src).arg("-o").arg(&host));
    assert_eq!(o.code(), Some(0), "{}", o.describe());
    let o = run(
        guarded_cmd(&host, &[("FSGUARD_ROOT", td.path().to_str().unwrap())])
            .env("RUST_BACKTRACE", "0"),
    );
    assert_eq!(o.stdout, "caught=true\n", "{}", o.describe());
    assert!(
        o.stderr.contains("panicked at") && o.stderr.contains("host panic"),
        "{}",
        o.describe()
    );
    // Nothing refused: the message is the program's own hook at work.
    assert_no_blocked(&o);
}
