//! Escape attempts found in review, each refused under the real library.

#![cfg(target_os = "linux")]

mod common;

use common::*;

/// A layout with a workspace `ws` and a directory `out` beside it.
fn layout(tag: &str) -> (TempDir, std::path::PathBuf, std::path::PathBuf) {
    let td = TempDir::new(tag);
    let ws = td.join("ws");
    let out = td.join("out");
    mkdir(&ws);
    mkdir(&out);
    write_file(&out.join("secret"), "S\n", 0o644);
    (td, ws, out)
}

#[test]
fn a_program_in_the_root_does_not_open_the_roots_parent() {
    let (_td, ws, out) = layout("exeprefix");
    let script = format!("#!/bin/sh\ncat {}\n", out.join("secret").display());
    write_file(&ws.join("run.sh"), &script, 0o755);
    // `fsguard run` gives the command a private TMPDIR inside the root, so
    // compare what lies outside it.
    let before = snapshot(&out);
    let o = run(bare_cmd(cli())
        .current_dir(&ws)
        .args(["run", "--root", ".", "--", "./run.sh"]));
    assert_ne!(o.code(), Some(0), "{}", o.describe());
    assert!(!o.stdout.contains('S'), "{}", o.describe());
    assert_traces(
        &o,
        &[Expect::new(
            "open|openat",
            "read",
            out.join("secret"),
            "root",
        )],
    );
    assert!(snapshot_diff(&before, &snapshot(&out)).is_none());
}

#[test]
fn a_trailing_slash_on_a_nofollow_call_follows_the_link() {
    let (td, ws, out) = layout("nofollowslash");
    symlink(out.to_str().unwrap(), &ws.join("link"));
    let prog = c_program("nofollow_slash", &[]);
    let before = snapshot(td.path());
    let o = run(
        guarded_cmd(&prog, &[("FSGUARD_ROOT", ws.to_str().unwrap())])
            .current_dir(&ws)
            .arg("link/"),
    );
    for call in [
        "open",
        "lchown",
        "fchownat",
        "fchmodat",
        "utimensat",
        "tmpfile",
    ] {
        let line = o
            .stdout
            .lines()
            .find(|l| l.starts_with(&format!("{call} ")));
        assert_eq!(
            line,
            Some(format!("{call} -1 13").as_str()),
            "{}",
            o.describe()
        );
    }
    assert_eq!(o.blocked().len(), 6, "{}", o.describe());
    for t in o.blocked() {
        assert_eq!(
            t.field("path"),
            Some(out.to_str().unwrap()),
            "{}",
            o.describe()
        );
    }
    assert!(
        snapshot_diff(&before, &snapshot(td.path())).is_none(),
        "{}",
        o.describe()
    );
    // Without the slash the link itself is inside the root: lchown works.
    let o = run(
        guarded_cmd(&prog, &[("FSGUARD_ROOT", ws.to_str().unwrap())])
            .current_dir(&ws)
            .arg("link"),
    );
    assert!(
        o.stdout.lines().any(|l| l == "lchown 0 0"),
        "{}",
        o.describe()
    );
}

#[test]
fn a_scripts_interpreter_is_executed_too() {
    let (_td, ws, out) = layout("shebang");
    std::fs::copy("/bin/true", out.join("interp")).unwrap();
    let script = format!("#!{}\n", out.join("interp").display());
    write_file(&ws.join("s"), &script, 0o755);
    let o = run(
        guarded_cmd("/bin/sh", &[("FSGUARD_ROOT", ws.to_str().unwrap())])
            .current_dir(&ws)
            .args(["-c", "./s && echo RAN"]),
    );
    assert!(!o.stdout.contains("RAN"), "{}", o.describe());
    assert!(
        o.blocked()
            .iter()
            .any(|t| t.field("path") == out.join("interp").to_str()),
        "{}",
        o.describe()
    );
}

#[test]
fn moving_a_directory_does_not_move_its_protected_files_out_of_their_rules() {
    let (td, ws, _out) = layout("moveparent");
    mkdir(&ws.join("conf"));
    write_file(&ws.join("conf/api.key"), "TOKEN\n", 0o644);
    let before = snapshot(&ws.join("conf"));
    let o = run(bare_cmd(cli()).current_dir(td.path()).args([
        "run",
        "--root",
        "ws",
        "--deny-read-always",
        "ws/conf/api.key",
        "--",
        "sh",
        "-c",
        "mv ws/conf ws/pub; cat ws/pub/api.key",
    ]));
    assert!(!o.stdout.contains("TOKEN"), "{}", o.describe());
    assert!(
        o.blocked().iter().any(|t| t
            .field("rule")
            .is_some_and(|r| r.starts_with("read.deny_always"))),
        "{}",
        o.describe()
    );
    assert!(
        snapshot_diff(&before, &snapshot(&ws.join("conf"))).is_none(),
        "{}",
        o.describe()
    );
}

#[test]
fn posix_spawn_file_actions_are_checked_at_spawn() {
    let (_td, ws, out) = layout("spawnactions");
    let prog = c_program("spawn_actions", &[]);
    let target = out.join("spawned");
    let before = snapshot(&out);
    let o = run(
        guarded_cmd(&prog, &[("FSGUARD_ROOT", ws.to_str().unwrap())])
            .current_dir(&ws)
            .arg(&target)
            .arg(&out),
    );
    // Both actions are accepted when added; the open is refused when the
    // spawn does it (a chdir is a metadata access, like chdir(2)).
    for want in ["addopen 0", "addchdir 0", "spawn 13"] {
        assert!(
            o.stdout.lines().any(|l| l == want),
            "{want}\n{}",
            o.describe()
        );
    }
    assert!(!target.exists(), "{}", o.describe());
    assert_traces(&o, &[Expect::new("posix_spawn", "write", &target, "root")]);
    assert!(snapshot_diff(&before, &snapshot(&out)).is_none());
    // Bare, both actions are accepted and the file is written.
    let o = run(bare_cmd(&prog).current_dir(&ws).arg(&target).arg(&out));
    assert!(
        o.stdout.lines().any(|l| l == "addopen 0"),
        "{}",
        o.describe()
    );
    assert!(target.exists());
}
