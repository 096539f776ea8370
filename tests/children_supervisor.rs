//! `fsguard run` as a supervisor: the library must really load, exit codes,
//! signals, timeout, private TMPDIR, the summary line.

mod children_util;

use children_util::*;
use std::time::{Duration, Instant};

fn side_effect_cmd(s: &Scratch) -> (std::path::PathBuf, String) {
    let f = s.ws().join("side-effect");
    (f.clone(), format!("echo ran > {}", f.display()))
}

#[test]
fn a_library_that_cannot_load_stops_the_command() {
    let s = Scratch::new("noload");
    // An ELF the loader refuses to preload (a PIE executable): the handshake
    // gate must stop the command before its side effect.
    let fake = s.path("libfake.so");
    std::fs::copy("/bin/true", &fake).unwrap();
    let (f, cmd) = side_effect_cmd(&s);
    for prog in [vec!["sh", "-c", cmd.as_str()], vec!["/bin/true"]] {
        let mut args = vec!["--root", "ws", "--"];
        args.extend(prog.iter().copied());
        let o = fsguard(
            &s.0,
            "run",
            &args,
            &[("FSGUARD_LIB", fake.to_str().unwrap())],
        );
        let err = stderr(&o);
        assert_eq!(code(&o), 125, "{err}");
        assert!(err.contains("did not load"), "{err}");
        assert!(!f.exists(), "the command ran without the library");
    }
    let o = fsguard(
        &s.0,
        "run",
        &["--root", "ws", "--", "sh", "-c", &cmd],
        &[("FSGUARD_LIB", fake.to_str().unwrap())],
    );
    assert!(
        stderr(&o).contains("cannot be preloaded"),
        "the loader's reason is shown: {}",
        stderr(&o)
    );

    // Not an ELF at all: refused before anything starts.
    let text = s.path("libtext.so");
    std::fs::write(&text, "not a library\n").unwrap();
    let o = fsguard(
        &s.0,
        "run",
        &["--root", "ws", "--", "sh", "-c", &cmd],
        &[("FSGUARD_LIB", text.to_str().unwrap())],
    );
    assert_eq!(code(&o), 125, "{}", stderr(&o));
    assert!(!f.exists());

    // Control: with the real library the same command runs.
    let o = run(&s.0, &["--root", "ws", "--", "sh", "-c", &cmd]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert!(f.exists());
}

#[test]
fn exit_codes() {
    let s = Scratch::new("codes");
    let r = |args: &[&str]| {
        let o = run(&s.0, args);
        eprintln!("{args:?}: {}", stderr(&o));
        code(&o)
    };
    assert_eq!(r(&["--root", "ws", "--", "true"]), 0);
    assert_eq!(r(&["--root", "ws", "--", "sh", "-c", "exit 7"]), 7);
    assert_eq!(
        r(&["--root", "ws", "--", "sh", "-c", "kill -TERM $$"]),
        128 + 15
    );
    assert_eq!(
        r(&["--root", "ws", "--", "sh", "-c", "kill -KILL $$"]),
        128 + 9
    );
    assert_eq!(r(&["--root", "ws", "--", "no-such-command-fsguard"]), 127);
    assert_eq!(r(&["--root", "ws", "--", "./no-such-file"]), 127);
    let plain = s.path("plain.txt");
    std::fs::write(&plain, "x").unwrap();
    assert_eq!(r(&["--root", "ws", "--", plain.to_str().unwrap()]), 126);
    assert_eq!(r(&["--root", "no-such-root", "--", "true"]), 125);
    let t0 = Instant::now();
    let o = run(
        &s.0,
        &["--timeout", "0.5", "--root", "ws", "--", "sleep", "30"],
    );
    assert_eq!(code(&o), 124, "{}", stderr(&o));
    assert!(t0.elapsed() < Duration::from_secs(10));
    assert!(stderr(&o).contains("timed out"));
}

#[test]
fn timeout_escalates_to_sigkill() {
    let s = Scratch::new("grace");
    let t0 = Instant::now();
    let o = run(
        &s.0,
        &[
            "--timeout",
            "0.3",
            "--",
            "sh",
            "-c",
            "trap '' TERM; sleep 30",
        ],
    );
    assert_eq!(code(&o), 124, "{}", stderr(&o));
    let took = t0.elapsed();
    assert!(
        took >= Duration::from_secs(5) && took < Duration::from_secs(20),
        "{took:?}"
    );
}

#[test]
fn signals_are_forwarded() {
    let s = Scratch::new("signals");
    for (sig, name) in [
        (libc::SIGTERM, "TERM"),
        (libc::SIGINT, "INT"),
        (libc::SIGHUP, "HUP"),
    ] {
        let mut child = std::process::Command::new(cli())
            .args(["run", "--", "sleep", "30"])
            .current_dir(&s.0)
            .env("FSGUARD_LIB", lib())
            .env_remove("LD_PRELOAD")
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(500));
        // SAFETY: signals our own child process.
        unsafe { libc::kill(child.id() as i32, sig) };
        let st = child.wait().unwrap();
        assert_eq!(st.code(), Some(128 + sig), "SIG{name}");
    }
}

#[test]
fn private_tmpdir_outside_the_root() {
    let s = Scratch::new("tmpdir");
    let o = run(
        &s.0,
        &[
            "--readonly=ws",
            "--",
            "sh",
            "-c",
            "echo t > \"$TMPDIR/f\" && cat \"$TMPDIR/f\" && echo \"$TMPDIR\"",
        ],
    );
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let out = stdout(&o);
    let mut lines = out.lines();
    assert_eq!(lines.next(), Some("t"), "TMPDIR is writable even read-only");
    let tmp = std::path::PathBuf::from(lines.next().unwrap());
    assert!(
        !tmp.starts_with(s.ws()),
        "{tmp:?}: a read-only root stays unchanged"
    );
    assert!(!tmp.exists(), "removed at exit");

    let o = run(
        &s.0,
        &[
            "--root",
            "ws",
            "--",
            "sh",
            "-c",
            "echo t > \"$TMPDIR/f\" && echo \"$TMPDIR\"",
        ],
    );
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let tmp = std::path::PathBuf::from(stdout(&o).trim());
    assert!(
        !tmp.starts_with(s.ws()),
        "{tmp:?}: never inside the workspace (git status would show it)"
    );
    assert!(!tmp.exists(), "removed at exit");

    let o = run(
        &s.0,
        &[
            "--keep-tmp",
            "--root",
            "ws",
            "--",
            "sh",
            "-c",
            "echo \"$TMPDIR\"",
        ],
    );
    let tmp = std::path::PathBuf::from(stdout(&o).trim());
    assert!(tmp.is_dir(), "--keep-tmp keeps it");
    assert!(stderr(&o).contains(&format!("kept TMPDIR {}", tmp.display())));
    let _ = std::fs::remove_dir_all(&tmp);

    let o = fsguard(&s.0, "check", &["--root", "ws"], &[]);
    assert!(stdout(&o).contains("TMPDIR"), "{}", stdout(&o));
}

#[test]
fn summary_line_and_quiet() {
    let s = Scratch::new("summary");
    let a = s.path("a");
    let b = s.path("b");
    let cmd = format!("echo > {}; echo > {}; true", a.display(), b.display());
    let o = run(&s.0, &["--root", "ws", "--", "sh", "-c", &cmd]);
    assert_eq!(code(&o), 0);
    assert!(
        stderr(&o).contains(&format!(
            "fsguard: 2 accesses blocked; first: open write {}",
            a.display()
        )),
        "{}",
        stderr(&o)
    );
    let o = run(&s.0, &["--quiet", "--root", "ws", "--", "sh", "-c", &cmd]);
    assert!(!stderr(&o).contains("accesses blocked"), "{}", stderr(&o));
    let o = run(&s.0, &["--root", "ws", "--", "true"]);
    assert!(
        !stderr(&o).contains("blocked"),
        "nothing blocked, no summary"
    );
}

#[test]
fn grandchildren_do_not_answer_the_handshake() {
    // The handshake variable is gone from the command's own environment
    // (the constructor removes it) and from what its children get.
    let s = Scratch::new("hs");
    let o = run(
        &s.0,
        &[
            "--root",
            "ws",
            "--",
            "sh",
            "-c",
            "echo \"${FSGUARD_HANDSHAKE_FD-none}\"; sh -c 'echo \"${FSGUARD_HANDSHAKE_FD-none}\"'",
        ],
    );
    assert_eq!(stdout(&o), "none\nnone\n", "{}", stderr(&o));
}
