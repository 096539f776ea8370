//! Threads, fork, signal handlers and errno under the real library.

mod common;

use common::*;

#[test]
fn concurrent_forked_and_reentrant_calls_are_all_checked() {
    let td = TempDir::new("robust");
    let ws = td.join("ws");
    mkdir(&ws);
    write_file(&ws.join("in.txt"), "in\n", 0o644);
    write_file(&td.join("out.txt"), "out\n", 0o644);
    let prog = c_program("robust", &["-O2", "-pthread"]);
    let ws_s = ws.to_str().unwrap().to_string();
    let o = run(
        guarded_cmd(&prog, &[("FSGUARD_ROOT", &ws_s), ("FSGUARD_LOG", "off")])
            .arg(ws.join("in.txt"))
            .arg(td.join("out.txt")),
    );
    assert_eq!(o.code(), Some(0), "{}", o.describe());
    for case in ["threads", "fork", "signal", "errno"] {
        assert!(
            o.stdout.lines().any(|l| l == format!("{case} ok")),
            "{case} failed:\n{}",
            o.describe()
        );
    }
    // Bare, the outside file opens: the cases above measured the guard.
    let o = run(bare_cmd(&prog)
        .arg(ws.join("in.txt"))
        .arg(td.join("out.txt")));
    assert!(o.stdout.contains("threads FAIL"), "{}", o.describe());
}

#[test]
fn an_interposer_loaded_after_the_guard_still_sees_opens() {
    let td = TempDir::new("next");
    let ws = td.join("ws");
    mkdir(&ws);
    write_file(&ws.join("in.txt"), "in\n", 0o644);
    write_file(&td.join("out.txt"), "out\n", 0o644);
    let next = c_program("next_open", &["-shared", "-fPIC", "-O2"]);
    let prog = c_program("open_two", &["-O2"]);
    let preload = format!("{}:{}", lib().display(), next.display());
    let ws_s = ws.to_str().unwrap().to_string();
    let o = run(bare_cmd(&prog)
        .env("LD_PRELOAD", &preload)
        .env("FSGUARD_ROOT", &ws_s)
        .arg(ws.join("in.txt"))
        .arg(td.join("out.txt")));
    assert_eq!(
        o.stdout.trim(),
        "inside=1 outside=0 errno=13",
        "{}",
        o.describe()
    );
    assert!(
        o.stderr.lines().filter(|l| *l == "[next] open").count() >= 1,
        "the allowed open bypassed the next interposer:\n{}",
        o.describe()
    );
    assert_eq!(o.blocked().len(), 1, "{}", o.describe());
}
