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
