//! The `fsguard run` CLI: --readonly[=ROOT], --root, --log, exit codes
//! (command's status, 125 own failure, 126 not executable, 127 not found,
//! 128+N killed by signal N), library discovery, and that the CLI binary
//! itself carries none of the interposed symbols.

// LD_PRELOAD, /proc and glibc symbol names: Linux only.
#![cfg(target_os = "linux")]

mod common;

use common::*;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

/// `fsguard run ARGS...` with a clean environment (no inherited FSGUARD_*,
/// no LD_PRELOAD).
fn fsguard(args: &[&str]) -> Command {
    let mut c = bare_cmd(cli());
    c.args(args);
    c
}

/// T/ws/in.txt, T/outside/secret.txt
fn layout() -> (TempDir, PathBuf, PathBuf) {
    let td = TempDir::new("cli");
    let ws = td.join("ws");
    let out = td.join("outside");
    mkdir(&ws);
    mkdir(&out);
    write_file(&ws.join("in.txt"), "inside\n", 0o644);
    write_file(&out.join("secret.txt"), "secret\n", 0o644);
    (td, ws, out)
}

const PY_PROBE: &str = r#"
import os, sys
out = sys.argv[1]
def t(name, fn):
    try:
        fn()
        print(name, "ok")
    except OSError as e:
        print(name, e.errno)
t("read_in", lambda: open("in.txt").read())
t("write_in", lambda: open("new.txt", "w").write("x"))
t("read_out", lambda: open(os.path.join(out, "secret.txt")).read())
t("write_out", lambda: open(os.path.join(out, "new.txt"), "w"))
"#;

#[test]
fn run_readonly_root_python() {
    let (td, ws, out) = layout();
    let before = snapshot(td.path());
    let arg = format!("--readonly={}", ws.display());
    let o = run(fsguard(&["run", &arg, "--", "python3", "-c", PY_PROBE])
        .arg(&out)
        .current_dir(&ws));
    assert_eq!(
        o.stdout,
        "read_in ok\nwrite_in 13\nread_out 13\nwrite_out 13\n",
        "\n{}",
        o.describe()
    );
    assert_eq!(o.code(), Some(0), "\n{}", o.describe());
    // rule order: a write is denied by `readonly` before `root` is consulted
    assert_traces(
        &o,
        &[
            Expect::new("open", "write", ws.join("new.txt"), "readonly"),
            Expect::new("open", "read", out.join("secret.txt"), "root"),
            Expect::new("open", "write", out.join("new.txt"), "readonly"),
        ],
    );
    assert_eq!(snapshot_diff(&before, &snapshot(td.path())), None);
}

#[test]
fn run_readonly_relative_root() {
    let (td, ws, out) = layout();
    let before = snapshot(td.path());
    let code = "print(open('ws/in.txt').read(), end='')\ntry:\n    open(__import__('sys').argv[1] + '/secret.txt')\nexcept OSError as e:\n    print(e.errno)";
    let o = run(
        fsguard(&["run", "--readonly=ws", "--", "python3", "-c", code])
            .arg(&out)
            .current_dir(td.path()),
    );
    assert_eq!(o.stdout, "inside\n13\n", "\n{}", o.describe());
    assert_traces(
        &o,
        &[Expect::new("open", "read", out.join("secret.txt"), "root")],
    );
    assert_eq!(snapshot_diff(&before, &snapshot(td.path())), None);
    let _ = ws;
}

#[test]
fn run_readonly_without_root() {
    let (td, ws, _) = layout();
    let before = snapshot(td.path());
    let o = run(fsguard(&[
        "run",
        "--readonly",
        "--",
        "sh",
        "-c",
        "cat in.txt; echo x > in.txt",
    ])
    .current_dir(&ws));
    assert_ne!(o.code(), Some(0), "\n{}", o.describe());
    assert_eq!(o.stdout, "inside\n", "\n{}", o.describe());
    assert!(o.stderr.contains("Permission denied"), "\n{}", o.describe());
    assert_traces(
        &o,
        &[Expect::new("open", "write", ws.join("in.txt"), "readonly")],
    );
    assert_eq!(snapshot_diff(&before, &snapshot(td.path())), None);
}

#[test]
fn run_root_python() {
    let (td, ws, out) = layout();
    let before_out = snapshot(&out);
    let o = run(fsguard(&[
        "run",
        "--root",
        ws.to_str().unwrap(),
        "--",
        "python3",
        "-c",
        PY_PROBE,
    ])
    .arg(&out)
    .current_dir(&ws));
    assert_eq!(
        o.stdout,
        "read_in ok\nwrite_in ok\nread_out 13\nwrite_out 13\n",
        "\n{}",
        o.describe()
    );
    assert_eq!(o.code(), Some(0), "\n{}", o.describe());
    assert_traces(
        &o,
        &[
            Expect::new("open", "read", out.join("secret.txt"), "root"),
            Expect::new("open", "write", out.join("new.txt"), "root"),
        ],
    );
    assert_eq!(std::fs::read_to_string(ws.join("new.txt")).unwrap(), "x");
    assert_eq!(snapshot_diff(&before_out, &snapshot(&out)), None);
    drop(td);
}

#[test]
fn run_passes_arguments_and_output_through() {
    let o = run(&mut fsguard(&[
        "run",
        "--readonly",
        "--",
        "sh",
        "-c",
        "printf '%s|' \"$@\"",
        "argv0",
        "a",
        "b c",
        "",
    ]));
    assert_eq!(o.code(), Some(0), "\n{}", o.describe());
    assert_eq!(o.stdout, "a|b c||", "\n{}", o.describe());
}

#[test]
fn exit_status_passthrough() {
    let (_td, ws, _) = layout();
    for (args, want) in [
        (vec!["run", "--", "sh", "-c", "exit 3"], 3),
        (vec!["run", "--readonly", "--", "sh", "-c", "exit 0"], 0),
        (vec!["run", "--readonly", "--", "sh", "-c", "exit 42"], 42),
        (
            vec![
                "run",
                "--root",
                ws.to_str().unwrap(),
                "--",
                "sh",
                "-c",
                "exit 3",
            ],
            3,
        ),
        (vec!["run", "--readonly", "--", "false"], 1),
    ] {
        let o = run(fsguard(&args).current_dir(&ws));
        assert_eq!(o.code(), Some(want), "\n{}", o.describe());
    }
}

#[test]
fn exit_127_command_not_found() {
    for cmd in [
        "fsguard-test-no-such-command-7f3a",
        "/nonexistent-fsguard-dir/cmd",
    ] {
        let o = run(&mut fsguard(&["run", "--readonly", "--", cmd]));
        assert_eq!(o.code(), Some(127), "\n{}", o.describe());
    }
}

#[test]
fn exit_126_not_executable() {
    let td = TempDir::new("cli126");
    let f = td.join("script.sh");
    write_file(&f, "#!/bin/sh\nexit 0\n", 0o644);
    let o = run(&mut fsguard(&[
        "run",
        "--readonly",
        "--",
        f.to_str().unwrap(),
    ]));
    assert_eq!(o.code(), Some(126), "non-executable file\n{}", o.describe());
    let o = run(&mut fsguard(&[
        "run",
        "--readonly",
        "--",
        td.path().to_str().unwrap(),
    ]));
    assert_eq!(
        o.code(),
        Some(126),
        "directory as command\n{}",
        o.describe()
    );
}

#[test]
fn exit_128_plus_signal() {
    let o = run(&mut fsguard(&[
        "run",
        "--readonly",
        "--",
        "sh",
        "-c",
        "kill -9 $$",
    ]));
    assert_eq!(o.code(), Some(137), "\n{}", o.describe());
    let o = run(&mut fsguard(&[
        "run",
        "--readonly",
        "--",
        "sh",
        "-c",
        "kill -TERM $$",
    ]));
    assert_eq!(o.code(), Some(143), "\n{}", o.describe());
}

#[test]
fn exit_125_when_fsguard_lib_is_missing() {
    let o = run(fsguard(&["run", "--readonly", "--", "sh", "-c", "exit 0"])
        .env("FSGUARD_LIB", "/nonexistent-fsguard-dir/libfsguard.so"));
    assert_eq!(
        o.code(),
        Some(125),
        "an explicit FSGUARD_LIB that does not exist must fail\n{}",
        o.describe()
    );
}

fn copy_exe(src: &Path, dst: &Path) {
    std::fs::copy(src, dst).unwrap();
    std::fs::set_permissions(dst, std::fs::Permissions::from_mode(0o755)).unwrap();
}

#[test]
fn library_discovery() {
    let td = TempDir::new("clidisc");
    // alone, no library next to it: the copy it carries, written to the
    // cache; where that cannot be done safely (here: a symlink planted in
    // the cache), 125, and the command does not run unguarded
    mkdir(&td.join("solo"));
    let solo = td.join("solo/fsguard");
    copy_exe(cli(), &solo);
    let marker = td.join("ran");
    let script = format!("echo > {}", marker.display());
    mkdir(&td.join("badcache"));
    mkdir(&td.join("elsewhere"));
    symlink(
        td.join("elsewhere").to_str().unwrap(),
        &td.join("badcache/fsguard"),
    );
    let o = run(bare_cmd(&solo)
        .args(["run", "--readonly", "--", "sh", "-c", &script])
        .env("XDG_CACHE_HOME", td.join("badcache")));
    assert_eq!(
        o.code(),
        Some(125),
        "CLI without its library, cache unusable\n{}",
        o.describe()
    );
    assert!(
        !marker.exists(),
        "the command ran although the library is missing"
    );
    let o = run(bare_cmd(&solo)
        .args(["run", "--readonly", "--", "sh", "-c", &script])
        .env("XDG_CACHE_HOME", td.join("cache")));
    assert_ne!(o.code(), Some(0), "\n{}", o.describe());
    assert!(!marker.exists());
    assert_traces(&o, &[Expect::new("open", "write", &marker, "readonly")]);
    assert!(td.join("cache/fsguard").is_dir());
    // alone + FSGUARD_LIB=missing: 125
    let o = run(bare_cmd(&solo)
        .args(["run", "--readonly", "--", "sh", "-c", "exit 0"])
        .env("FSGUARD_LIB", td.join("nope.so")));
    assert_eq!(o.code(), Some(125), "\n{}", o.describe());
    // alone + FSGUARD_LIB=real library: guarded
    let o = run(bare_cmd(&solo)
        .args(["run", "--readonly", "--", "sh", "-c", &script])
        .env("FSGUARD_LIB", lib()));
    assert_ne!(o.code(), Some(0), "\n{}", o.describe());
    assert!(!marker.exists());
    assert_traces(&o, &[Expect::new("open", "write", &marker, "readonly")]);
    // installed layout: PREFIX/bin/fsguard + PREFIX/lib/libfsguard.so
    mkdir(&td.join("prefix/bin"));
    mkdir(&td.join("prefix/lib"));
    let inst = td.join("prefix/bin/fsguard");
    copy_exe(cli(), &inst);
    std::fs::copy(lib(), td.join("prefix/lib/libfsguard.so")).unwrap();
    let o = run(bare_cmd(&inst).args(["run", "--readonly", "--", "sh", "-c", &script]));
    assert_ne!(o.code(), Some(0), "\n{}", o.describe());
    assert!(!marker.exists());
    assert_traces(&o, &[Expect::new("open", "write", &marker, "readonly")]);
    // next to the executable
    mkdir(&td.join("side"));
    let side = td.join("side/fsguard");
    copy_exe(cli(), &side);
    std::fs::copy(lib(), td.join("side/libfsguard.so")).unwrap();
    let o = run(bare_cmd(&side).args(["run", "--readonly", "--", "sh", "-c", &script]));
    assert_ne!(o.code(), Some(0), "\n{}", o.describe());
    assert!(!marker.exists());
    assert_traces(&o, &[Expect::new("open", "write", &marker, "readonly")]);
}

#[test]
fn log_option() {
    let (td, ws, _) = layout();
    let logdir = TempDir::new("clilog");
    let log = logdir.join("trace.log");
    let before = snapshot(td.path());
    // --log FILE: the trace goes to the file, not stderr
    let o = run(fsguard(&[
        "run",
        "--readonly",
        "--log",
        log.to_str().unwrap(),
        "--",
        "sh",
        "-c",
        "echo x > in.txt",
    ])
    .current_dir(&ws));
    assert_ne!(o.code(), Some(0), "\n{}", o.describe());
    assert!(o.stderr.contains("Permission denied"), "\n{}", o.describe());
    assert!(
        o.blocked().is_empty(),
        "trace line on stderr despite --log FILE\n{}",
        o.describe()
    );
    let text = std::fs::read_to_string(&log)
        .unwrap_or_else(|e| panic!("log file {}: {e}\n{}", log.display(), o.describe()));
    let lines = traces(&text, "blocked");
    if let Err(e) = check_traces(
        &lines,
        &[vec![Expect::new(
            "open",
            "write",
            ws.join("in.txt"),
            "readonly",
        )]],
    ) {
        panic!("log file content:\n{text}\n{e}");
    }
    // --log off: still denied, no trace anywhere
    let o = run(fsguard(&[
        "run",
        "--readonly",
        "--log",
        "off",
        "--",
        "sh",
        "-c",
        "echo x > in.txt",
    ])
    .current_dir(&ws));
    assert_ne!(o.code(), Some(0), "\n{}", o.describe());
    assert!(o.stderr.contains("Permission denied"), "\n{}", o.describe());
    assert!(o.blocked().is_empty(), "\n{}", o.describe());
    // --log stderr
    let o = run(fsguard(&[
        "run",
        "--readonly",
        "--log",
        "stderr",
        "--",
        "sh",
        "-c",
        "echo x > in.txt",
    ])
    .current_dir(&ws));
    assert_traces(
        &o,
        &[Expect::new("open", "write", ws.join("in.txt"), "readonly")],
    );
    assert_eq!(snapshot_diff(&before, &snapshot(td.path())), None);
}

#[test]
fn cli_binary_does_not_carry_interposed_symbols() {
    let o = run(Command::new("nm").args(["-D", "--defined-only"]).arg(cli()));
    // a binary without dynamic symbols makes nm complain; that is fine
    let defined: Vec<&str> = o
        .stdout
        .lines()
        .filter_map(|l| l.split_whitespace().last())
        .map(|s| s.split('@').next().unwrap())
        .collect();
    let bad: Vec<&str> = hook_rows()
        .iter()
        .map(|r| r.symbol)
        .filter(|s| defined.contains(s))
        .collect();
    assert!(
        bad.is_empty(),
        "the fsguard CLI exports interposed symbols {bad:?}"
    );
    // and it does not link libfsguard
    let o = run(Command::new("ldd").arg(cli()));
    assert!(
        !o.stdout.contains("libfsguard"),
        "the CLI links libfsguard:\n{}",
        o.stdout
    );
}

#[test]
fn exit_125_on_bad_usage_or_config() {
    let td = TempDir::new("cli125");
    let marker = td.join("ran");
    let script = format!("echo > {}", marker.display());
    let missing = td.join("missing-dir");
    for args in [
        vec!["run", "--no-such-option", "--", "sh", "-c", &script],
        vec!["run", "--readonly"],
        vec![
            "run",
            "--root",
            missing.to_str().unwrap(),
            "--",
            "sh",
            "-c",
            &script,
        ],
    ] {
        let o = run(&mut fsguard(&args));
        assert_eq!(o.code(), Some(125), "\n{}", o.describe());
        assert!(!marker.exists(), "the command ran\n{}", o.describe());
    }
}

/// `fsguard check | head -c1`: the reader has gone when the CLI writes;
/// it must neither panic nor report an error.
#[test]
fn check_into_a_closed_pipe_does_not_panic() {
    use std::os::fd::FromRawFd;
    let (td, ws, _out) = layout();
    let mut fds = [0i32; 2];
    // SAFETY: pipe() fills two fds, which are then owned below.
    assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
    // SAFETY: fresh fds from pipe(), each owned once.
    let (r, w) = unsafe {
        (
            std::os::fd::OwnedFd::from_raw_fd(fds[0]),
            std::os::fd::OwnedFd::from_raw_fd(fds[1]),
        )
    };
    drop(r);
    let mut c = fsguard(&["check", "--root", ws.to_str().unwrap()]);
    c.current_dir(td.path())
        .stdout(std::process::Stdio::from(w));
    let out = c.output().expect("run fsguard check");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !err.contains("panicked") && !err.contains("Broken pipe"),
        "stderr: {err}"
    );
    assert_eq!(out.status.code(), Some(0), "stderr: {err}");
}

/// Runtimes size themselves by cgroup limits, the overcommit and
/// transparent hugepage settings and the host id: all readable under a
/// root, answered exactly as bare.
#[test]
fn runtime_probes_are_readable_under_a_root() {
    let (td, ws, _out) = layout();
    let probes: Vec<&str> = [
        "/proc/sys/vm/overcommit_memory",
        "/sys/kernel/mm/transparent_hugepage/enabled",
        "/etc/machine-id",
        "/sys/fs/cgroup/cpu.max",
        "/sys/fs/cgroup/memory.max",
    ]
    .into_iter()
    .filter(|p| std::fs::read(p).is_ok())
    .collect();
    if probes.is_empty() {
        eprintln!("NOTE: none of the probe files is readable here; nothing to compare");
        return;
    }
    let mut bare = bare_cmd("cat");
    bare.args(&probes).current_dir(td.path());
    let b = run(&mut bare);
    let mut args = vec!["run", "--root", ws.to_str().unwrap(), "--", "cat"];
    args.extend(&probes);
    let mut g = fsguard(&args);
    g.current_dir(td.path());
    let o = run(&mut g);
    assert_eq!(o.code(), Some(0), "{}", o.describe());
    assert_no_blocked(&o);
    assert_eq!(o.stdout, b.stdout, "{}", o.describe());
}

/// clap's conventions: `--version`, per-command help on stdout with exit 0,
/// and completion scripts that know the options; a usage error is still
/// fsguard's own failure, 125, with the old wording.
#[test]
fn help_version_and_completions() {
    let o = run(&mut fsguard(&["--version"]));
    assert_eq!(o.code(), Some(0), "\n{}", o.describe());
    assert_eq!(
        o.stdout,
        format!("fsguard {}\n", env!("CARGO_PKG_VERSION")),
        "\n{}",
        o.describe()
    );
    for args in [&["run", "--help"][..], &["help", "run"]] {
        let o = run(&mut fsguard(args));
        assert_eq!(o.code(), Some(0), "{args:?}\n{}", o.describe());
        assert!(
            o.stdout.starts_with("usage: fsguard run ")
                && o.stdout.contains("--fail-on-block[=<N>]")
                && o.stdout.contains("--deny-write-always <P>"),
            "{args:?}\n{}",
            o.describe()
        );
    }
    for (shell, marker) in [
        ("bash", "complete -F _fsguard"),
        ("zsh", "#compdef fsguard"),
        ("fish", "complete -c fsguard"),
    ] {
        let o = run(&mut fsguard(&["completions", shell]));
        assert_eq!(o.code(), Some(0), "{shell}\n{}", o.describe());
        assert!(o.stdout.contains(marker), "{shell}\n{}", o.describe());
        for word in ["deny-read-always", "fail-on-block", "no-landlock", "wrap"] {
            assert!(o.stdout.contains(word), "{shell}: no {word}");
        }
    }
    // The bash script is valid bash.
    let o = run(&mut fsguard(&["completions", "bash"]));
    let script = std::env::temp_dir().join(format!("fsguard-compl-{}.bash", std::process::id()));
    std::fs::write(&script, &o.stdout).unwrap();
    let b = run(Command::new("bash").arg("-n").arg(&script));
    let _ = std::fs::remove_file(&script);
    assert_eq!(b.code(), Some(0), "\n{}", b.describe());

    for (args, want) in [
        (&["completions", "tcsh"][..], "SHELL: bad value \"tcsh\""),
        (&[][..], "no command given"),
        (&["run", "--timeout"], "--timeout needs a value"),
        (&["run", "--quiet=yes", "true"], "--quiet"),
        (&["explain", "read"], "PATH"),
    ] {
        let o = run(&mut fsguard(args));
        assert_eq!(o.code(), Some(125), "{args:?}\n{}", o.describe());
        assert!(
            o.stderr.starts_with("fsguard: error: ") && o.stderr.contains(want),
            "{args:?}: want {want:?}\n{}",
            o.describe()
        );
        assert_eq!(o.stdout, "", "{args:?}");
    }
}
