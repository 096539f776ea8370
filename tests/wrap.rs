//! `fsguard wrap` / `fsguard unwrap`: the wrapper script is written with
//! absolute paths and safe quoting, runs its command under the policy from
//! any directory with the caller's arguments, stdin and exit status, and is
//! removed only by `unwrap`; bad options are refused when wrapping.

#![cfg(target_os = "linux")]

mod common;

use common::*;
use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// `fsguard ARGS...` in `cwd`, clean environment.
fn fsguard(cwd: &Path, args: &[&str]) -> Out {
    let mut c = bare_cmd(cli());
    c.args(args).current_dir(cwd);
    run(&mut c)
}

/// Runs `cmd` with `input` on its stdin.
fn run_stdin(cmd: &mut Command, input: &[u8]) -> Out {
    let cmdline = describe_command(cmd);
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot spawn `{cmdline}`: {e}"));
    let mut stdin = child.stdin.take().unwrap();
    let input = input.to_vec();
    let feeder = std::thread::spawn(move || {
        let _ = stdin.write_all(&input);
    });
    let o = child.wait_with_output().unwrap();
    feeder.join().unwrap();
    Out {
        status: o.status,
        stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
        cmdline,
    }
}

/// T/ws (the root), T/outside, T/elsewhere (a directory to run from).
fn layout() -> (TempDir, PathBuf, PathBuf, PathBuf) {
    let td = TempDir::new("wrap");
    let ws = td.join("ws");
    let out = td.join("outside");
    let elsewhere = td.join("elsewhere");
    for d in [&ws, &out, &elsewhere] {
        mkdir(d);
    }
    (td, ws, out, elsewhere)
}

fn ok(o: &Out) {
    assert_eq!(o.code(), Some(0), "\n{}", o.describe());
}

fn refused(o: &Out, needle: &str) {
    assert_eq!(o.code(), Some(125), "\n{}", o.describe());
    assert!(
        o.stderr.contains("fsguard: error:") && o.stderr.contains(needle),
        "stderr should mention {needle:?}\n{}",
        o.describe()
    );
}

/// The shell program the round-trip wrapper runs: prints `$0` (fixed at
/// wrap time) and each argument in brackets, copies stdin, exits 7.
const ECHO_ARGS: &str = r#"printf '<%s>\n' "$0" "$@"; cat; exit 7"#;

#[test]
fn round_trip_args_stdin_and_status() {
    let (td, ws, _out, elsewhere) = layout();
    // Relative --root and --dir, made absolute at wrap time.
    let o = fsguard(
        td.path(),
        &[
            "wrap",
            "echo-args",
            "--root",
            "ws",
            "--dir",
            "bin",
            "--",
            "sh",
            "-c",
            ECHO_ARGS,
            "fixed 'arg' $HOME `x`",
        ],
    );
    ok(&o);
    let wrapper = td.join("bin/echo-args");
    assert!(wrapper.is_file(), "\n{}", o.describe());

    let user_args = [
        "a b",
        "it's",
        "\"dq\"",
        "$HOME",
        "",
        "*",
        "back\\slash",
        "new\nline",
    ];
    for cwd in [elsewhere.as_path(), ws.as_path(), Path::new("/")] {
        let mut c = bare_cmd(&wrapper);
        c.args(user_args).current_dir(cwd);
        let o = run_stdin(&mut c, b"from stdin\n");
        let mut want = String::from("<fixed 'arg' $HOME `x`>\n");
        for a in user_args {
            want.push_str(&format!("<{a}>\n"));
        }
        want.push_str("from stdin\n");
        assert_eq!(o.stdout, want, "cwd {}\n{}", cwd.display(), o.describe());
        assert_eq!(o.code(), Some(7), "\n{}", o.describe());
        assert_no_blocked(&o);
    }
}

#[test]
fn exit_status_passes_through() {
    let (td, ws, _out, elsewhere) = layout();
    let bin = td.join("bin");
    let o = fsguard(
        td.path(),
        &[
            "wrap",
            "shc",
            "--dir",
            bin.to_str().unwrap(),
            "--root",
            ws.to_str().unwrap(),
            "--",
            "sh",
            "-c",
        ],
    );
    ok(&o);
    for (script, code) in [("exit 7", 7), ("exit 0", 0), ("kill -TERM $$", 128 + 15)] {
        let o = run(bare_cmd(bin.join("shc"))
            .arg(script)
            .current_dir(&elsewhere));
        assert_eq!(o.code(), Some(code), "{script}\n{}", o.describe());
    }
}

#[test]
fn write_outside_the_root_is_blocked() {
    let (td, ws, out, elsewhere) = layout();
    let o = fsguard(
        td.path(),
        &[
            "wrap",
            "writer",
            "--dir",
            "bin",
            "--root",
            "ws",
            "--",
            "sh",
            "-c",
            r#"echo in > "$1"; echo out > "$2"; echo done"#,
            "sh",
        ],
    );
    ok(&o);
    let inside = ws.join("in.txt");
    let outside = out.join("out.txt");
    let o = run(bare_cmd(td.join("bin/writer"))
        .arg(&inside)
        .arg(&outside)
        .current_dir(&elsewhere));
    assert_eq!(o.stdout, "done\n", "\n{}", o.describe());
    assert_eq!(std::fs::read_to_string(&inside).unwrap(), "in\n");
    assert!(
        !outside.exists(),
        "written outside the root\n{}",
        o.describe()
    );
    let blocked = o.blocked();
    assert!(
        blocked.iter().any(|t| t.access == "write"
            && t.field("path") == Some(outside.to_str().unwrap())
            && t.field("rule") == Some("root")),
        "no trace line for the blocked write\n{}",
        o.describe()
    );
}

#[test]
fn relative_patterns_and_config_are_made_absolute() {
    let (td, ws, _out, elsewhere) = layout();
    write_file(&ws.join("a.key"), "KEY\n", 0o644);
    mkdir(&ws.join("sub"));
    write_file(&ws.join("sub/b.key"), "KEY\n", 0o644);
    write_file(&ws.join("ok.txt"), "OK\n", 0o644);
    write_file(
        &td.join("pol.toml"),
        "[write]\ndeny = [\"*.lock\"]\n",
        0o644,
    );
    // From T/ws: `*.key` means any .key below T/ws, the config T/ws/../pol.toml.
    let o = fsguard(
        &ws,
        &[
            "wrap",
            "cat-guarded",
            "--dir",
            "../bin",
            "--root",
            ".",
            "--config",
            "../pol.toml",
            "--deny-read",
            "*.key",
            "--",
            "cat",
        ],
    );
    ok(&o);
    let script = std::fs::read_to_string(td.join("bin/cat-guarded")).unwrap();
    let ws_s = ws.to_str().unwrap();
    assert!(
        script.contains(&format!("--root {ws_s} ")),
        "root not absolute:\n{script}"
    );
    assert!(
        script.contains(&format!("--deny-read '{ws_s}/**/*.key'")),
        "pattern not anchored:\n{script}"
    );
    assert!(
        script.contains(&format!("--config {} ", td.join("pol.toml").display())),
        "config not absolute:\n{script}"
    );
    let o = run(bare_cmd(td.join("bin/cat-guarded"))
        .arg(ws.join("ok.txt"))
        .arg(ws.join("sub/b.key"))
        .current_dir(&elsewhere));
    assert_eq!(o.stdout, "OK\n", "\n{}", o.describe());
    assert_ne!(o.code(), Some(0), "\n{}", o.describe());
    assert!(
        o.blocked()
            .iter()
            .any(|t| t.field("path") == Some(ws.join("sub/b.key").to_str().unwrap())),
        "\n{}",
        o.describe()
    );
}

#[test]
fn script_is_readable_marked_and_executable() {
    let (td, ws, _out, _) = layout();
    let o = fsguard(
        td.path(),
        &[
            "wrap",
            "py",
            "--dir",
            "bin",
            "--root",
            "ws",
            "--timeout",
            "2m",
            "--",
            "python3",
            "-c",
            "print('hi')",
        ],
    );
    ok(&o);
    let p = td.join("bin/py");
    let mode = std::fs::metadata(&p).unwrap().permissions().mode() & 0o7777;
    assert_eq!(mode, 0o755);
    let script = std::fs::read_to_string(&p).unwrap();
    let lines: Vec<&str> = script.lines().collect();
    assert_eq!(lines[0], "#!/bin/sh");
    assert!(
        lines[1].starts_with("# Made by `fsguard wrap` on "),
        "{script}"
    );
    assert_eq!(
        lines[2],
        format!(
            "#   fsguard wrap py --dir bin --root ws --timeout 2m -- python3 -c '{}'",
            "print('\\''hi'\\'')"
        ),
        "{script}"
    );
    assert!(
        script.contains("\n# fsguard-wrapper: remove with `fsguard unwrap py`\n"),
        "{script}"
    );
    let exec = lines.last().unwrap();
    assert_eq!(
        *exec,
        format!(
            "exec {} run --root {} --timeout 120 -- python3 -c '{}' \"$@\"",
            cli().display(),
            ws.display(),
            "print('\\''hi'\\'')"
        )
    );
    // POSIX sh accepts it.
    ok(&run(Command::new("sh").arg("-n").arg(&p)));
    let o = run(&mut bare_cmd(&p));
    assert_eq!(o.stdout, "hi\n", "\n{}", o.describe());
}

#[test]
fn refuses_to_overwrite_without_force() {
    let (td, ws, _out, _) = layout();
    let bin = td.join("bin");
    mkdir(&bin);
    let target = bin.join("tool");
    write_file(&target, "precious\n", 0o644);
    let args = |extra: &[&'static str], word: &'static str| {
        let mut v = vec!["wrap", "tool", "--dir", "bin"];
        v.extend_from_slice(extra);
        v.extend_from_slice(&["--root", "ws", "--", "echo", word]);
        v
    };
    let o = fsguard(td.path(), &args(&[], "one"));
    refused(&o, "already exists");
    assert!(o.stderr.contains("--force"), "\n{}", o.describe());
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "precious\n");

    let o = fsguard(td.path(), &args(&["--force"], "two"));
    ok(&o);
    let out = run(&mut bare_cmd(&target));
    assert_eq!(out.stdout, "two\n", "\n{}", out.describe());
    // An existing wrapper is not replaced without --force either.
    let o = fsguard(td.path(), &args(&[], "three"));
    refused(&o, "already exists");
    assert_eq!(run(&mut bare_cmd(&target)).stdout, "two\n");
    let _ = ws;
    // No temporary file is left behind.
    let names: Vec<_> = std::fs::read_dir(&bin)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, vec![std::ffi::OsString::from("tool")]);
}

#[test]
fn unwrap_removes_wrappers_only() {
    let (td, _ws, _out, _) = layout();
    let bin = td.join("bin");
    ok(&fsguard(
        td.path(),
        &["wrap", "w", "--dir", "bin", "--root", "ws", "--", "true"],
    ));
    assert!(bin.join("w").is_file());
    write_file(&bin.join("plain"), "#!/bin/sh\necho hi\n", 0o755);

    let o = fsguard(td.path(), &["unwrap", "plain", "--dir", "bin"]);
    refused(&o, "not an fsguard wrapper");
    assert!(bin.join("plain").is_file());

    let o = fsguard(td.path(), &["unwrap", "missing", "--dir", "bin"]);
    assert_eq!(o.code(), Some(125), "\n{}", o.describe());

    let o = fsguard(
        &td.join("elsewhere"),
        &["unwrap", "w", "--dir", bin.to_str().unwrap()],
    );
    ok(&o);
    assert!(!bin.join("w").exists());
    assert!(bin.join("plain").is_file());
}

#[test]
fn default_dir_is_local_bin_under_home() {
    let (td, _ws, _out, _) = layout();
    let home = td.join("home");
    mkdir(&home);
    let mut c = bare_cmd(cli());
    c.args(["wrap", "hw", "--root"])
        .arg(td.join("ws"))
        .args(["--", "echo", "hello"])
        .env("HOME", &home)
        .current_dir(td.path());
    ok(&run(&mut c));
    let p = home.join(".local/bin/hw");
    assert!(p.is_file());
    assert_eq!(run(&mut bare_cmd(&p)).stdout, "hello\n");
    let mut c = bare_cmd(cli());
    c.args(["unwrap", "hw"]).env("HOME", &home);
    ok(&run(&mut c));
    assert!(!p.exists());
}

#[test]
fn bad_options_are_refused_at_wrap_time() {
    let (td, _ws, _out, _) = layout();
    write_file(&td.join("bad.toml"), "root = [\n", 0o644);
    let cases: &[(&[&str], &str)] = &[
        (&["--root", "no-such-dir"], "no-such-dir"),
        (&["--bogus"], "unknown option --bogus"),
        (&["--timeout", "soon"], "--timeout"),
        (&["--log-format", "xml"], "--log-format"),
        (&["--landlock=maybe"], "--landlock"),
        (&["--config", "bad.toml"], "bad.toml"),
        (&["--deny-read", "[unclosed"], "[unclosed"),
    ];
    for (opts, needle) in cases {
        let mut args = vec!["wrap", "bad", "--dir", "bin"];
        args.extend_from_slice(opts);
        args.extend_from_slice(&["--", "true"]);
        let o = fsguard(td.path(), &args);
        refused(&o, needle);
        assert!(!td.join("bin/bad").exists(), "{opts:?} left a wrapper");
    }
    // No NAME, a NAME with a slash, no command.
    refused(&fsguard(td.path(), &["wrap"]), "NAME");
    refused(
        &fsguard(td.path(), &["wrap", "a/b", "--", "true"]),
        "bad NAME",
    );
    refused(
        &fsguard(td.path(), &["wrap", "a\nb", "--", "true"]),
        "bad NAME",
    );
    refused(
        &fsguard(td.path(), &["wrap", "x", "--dir", "bin", "--root", "ws"]),
        "no command",
    );
    assert!(!td.join("bin").join("x").exists());
}

#[test]
fn help() {
    let td = TempDir::new("wrap-help");
    for (cmd, head) in [
        ("wrap", "usage: fsguard wrap NAME"),
        ("unwrap", "usage: fsguard unwrap NAME"),
    ] {
        for flag in ["--help", "-h"] {
            let o = fsguard(td.path(), &[cmd, flag]);
            ok(&o);
            assert!(o.stdout.starts_with(head), "\n{}", o.describe());
        }
    }
    let o = fsguard(td.path(), &["--help"]);
    assert!(o.stdout.contains("fsguard wrap NAME"), "\n{}", o.describe());
}
