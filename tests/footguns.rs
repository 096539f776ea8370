//! No silent footguns: what a user means by a flag is what the guard
//! enforces. One test (or more) per item of the issue, run through the CLI
//! and the real library, as a new user would.

#![cfg(target_os = "linux")]

mod common;

use common::*;
use std::path::{Path, PathBuf};
use std::process::Command;

fn fsguard(args: &[&str]) -> Command {
    let mut c = bare_cmd(cli());
    c.args(args);
    c
}

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// T/proj, T/home (HOME), T/out
fn layout(tag: &str) -> (TempDir, PathBuf, PathBuf) {
    let td = TempDir::new(tag);
    let proj = td.join("proj");
    let home = td.join("home");
    mkdir(&proj);
    mkdir(&home);
    write_file(&home.join(".bashrc"), "# rc\n", 0o644);
    (td, proj, home)
}

/// Whether the kernel has Landlock (prints why a test is skipped if not).
fn landlock_or_skip(test: &str) -> bool {
    if landlock_abi() <= 0 {
        eprintln!("{test}: skipped: this kernel has no Landlock");
        return false;
    }
    true
}

// ---------------------------------------------------------------------------
// 1. An allow rule alone does not remove confinement.

#[test]
fn item1_allow_write_alone_confines_writes() {
    let (td, proj, _) = layout("f1run");
    let o = run(fsguard(&[
        "run",
        "--allow-write",
        "proj",
        "--",
        "sh",
        "-c",
        "cd proj && echo x > ../outside_flag; echo y > inside",
    ])
    .current_dir(td.path()));
    assert!(
        !td.join("outside_flag").exists(),
        "--allow-write proj let the command write outside proj\n{}",
        o.describe()
    );
    assert_eq!(
        std::fs::read_to_string(proj.join("inside")).ok().as_deref(),
        Some("y\n"),
        "\n{}",
        o.describe()
    );
    assert_traces(
        &o,
        &[Expect::new(
            "open",
            "write",
            td.join("outside_flag"),
            "not_allowed",
        )],
    );
}

#[test]
fn item1_write_allow_config_and_empty_config_are_not_allow_all() {
    let (td, _, home) = layout("f1cfg");
    let cfg = td.join("policy.toml");
    write_file(&cfg, "[write]\nallow = [\"proj\"]\n", 0o644);
    let o = run(fsguard(&[
        "explain",
        "--config",
        s(&cfg),
        "write",
        s(&home.join(".bashrc")),
    ])
    .env("HOME", &home));
    assert!(
        o.stdout.starts_with("deny write ") && o.stdout.contains("rule=not_allowed"),
        "\n{}",
        o.describe()
    );
    let o = run(fsguard(&[
        "explain",
        "--config",
        s(&cfg),
        "write",
        s(&td.join("proj/a")),
    ])
    .env("HOME", &home));
    assert!(o.stdout.starts_with("allow write "), "\n{}", o.describe());

    // An empty config is no policy: read-only, as with no flags at all.
    let empty = td.join("empty.toml");
    write_file(&empty, "", 0o644);
    let o = run(fsguard(&[
        "explain",
        "--config",
        s(&empty),
        "write",
        s(&home.join(".bashrc")),
    ])
    .env("HOME", &home));
    assert!(
        o.stdout.starts_with("deny write ") && o.stdout.contains("rule=readonly"),
        "\n{}",
        o.describe()
    );
    // A read allow-list refuses other reads (installed software stays readable).
    let o = run(fsguard(&[
        "run",
        "--allow-read",
        "proj",
        "--",
        "sh",
        "-c",
        "cat /etc/hostname /etc/passwd > /dev/null",
    ])
    .current_dir(td.path())
    .env("HOME", &home));
    assert_ne!(o.code(), Some(0), "\n{}", o.describe());
    assert!(o.stderr.contains("rule=not_allowed"), "\n{}", o.describe());
}

// ---------------------------------------------------------------------------
// 2. A shared policy plus --root keeps its protections.

#[test]
fn item2_shared_policy_with_root_keeps_protections() {
    let td = TempDir::new("f2");
    let ws = td.join("ws");
    mkdir(&ws);
    write_file(&ws.join(".env"), "TOKEN=1\n", 0o644);
    write_file(&ws.join(".env.example"), "TOKEN=\n", 0o644);
    write_file(&ws.join("key.pem"), "KEY\n", 0o644);
    write_file(&ws.join("main.py"), "print(1)\n", 0o644);
    let cfg = repo().join("examples/agent.toml");
    for (path, want) in [
        (".env", "deny"),
        ("key.pem", "deny"),
        (".env.example", "allow"),
        ("main.py", "allow"),
    ] {
        let o = run(fsguard(&[
            "explain",
            "--config",
            s(&cfg),
            "--root",
            "ws",
            "read",
            &format!("ws/{path}"),
        ])
        .current_dir(td.path()));
        assert!(
            o.stdout.starts_with(&format!("{want} read ")),
            "{path}: want {want}\n{}",
            o.describe()
        );
    }
    let o = run(fsguard(&[
        "run",
        "--config",
        s(&cfg),
        "--root",
        "ws",
        "--",
        "sh",
        "-c",
        "cat ws/.env; cat ws/key.pem; cat ws/main.py",
    ])
    .current_dir(td.path()));
    assert_eq!(o.stdout, "print(1)\n", "\n{}", o.describe());
}

// ---------------------------------------------------------------------------
// 3. Writable means readable.

#[test]
fn item3_what_may_be_written_may_be_read_back() {
    let td = TempDir::new("f3");
    let ws = td.join("ws");
    let scratch = td.join("scratch");
    mkdir(&ws);
    mkdir(&scratch);
    let cfg = td.join("policy.toml");
    write_file(
        &cfg,
        &format!(
            "root = \"ws\"\n[write]\nallow = [\"{}\"]\n",
            scratch.display()
        ),
        0o644,
    );
    let o = run(fsguard(&[
        "run",
        "--config",
        s(&cfg),
        "--",
        "sh",
        "-c",
        &format!("echo hi > {0}/f && cat {0}/f", scratch.display()),
    ])
    .current_dir(&ws));
    assert_eq!(o.stdout, "hi\n", "\n{}", o.describe());
    assert_eq!(o.code(), Some(0), "\n{}", o.describe());
    assert_no_blocked(&o);
}

// ---------------------------------------------------------------------------
// 9. Small surprises.

#[test]
fn item9_help_exits_0() {
    for args in [
        vec!["run", "--help"],
        vec!["check", "--help"],
        vec!["explain", "-h"],
    ] {
        let o = run(&mut fsguard(&args));
        assert_eq!(o.code(), Some(0), "\n{}", o.describe());
        assert!(o.stdout.contains("usage:"), "\n{}", o.describe());
    }
}

#[test]
fn item9_timeout_takes_durations() {
    let o = run(&mut fsguard(&[
        "run",
        "--readonly",
        "--timeout",
        "1s",
        "--",
        "sleep",
        "30",
    ]));
    assert_eq!(o.code(), Some(124), "\n{}", o.describe());
    let o = run(&mut fsguard(&[
        "run",
        "--readonly",
        "--timeout=2m",
        "--",
        "true",
    ]));
    assert_eq!(o.code(), Some(0), "\n{}", o.describe());
    let o = run(&mut fsguard(&[
        "run",
        "--readonly",
        "--timeout",
        "1x",
        "--",
        "true",
    ]));
    assert_eq!(o.code(), Some(125), "\n{}", o.describe());
}

#[test]
fn item9_root_tilde_is_expanded() {
    let (td, _, home) = layout("f9root");
    mkdir(&home.join("proj"));
    let cfg = td.join("policy.toml");
    write_file(&cfg, "root = \"~/proj\"\n", 0o644);
    let o = run(fsguard(&["check", "--config", s(&cfg)]).env("HOME", &home));
    assert_eq!(o.code(), Some(0), "\n{}", o.describe());
    assert!(
        o.stdout
            .contains(&format!("root = \"{}\"", home.join("proj").display())),
        "\n{}",
        o.describe()
    );
}

#[test]
fn item9_allow_shadowed_by_secrets_warns() {
    let (td, _, home) = layout("f9sec");
    mkdir(&home.join(".ssh"));
    write_file(&home.join(".ssh/id_rsa"), "KEY\n", 0o600);
    let o = run(fsguard(&["check", "--allow-read", "~/.ssh/id_rsa"])
        .env("HOME", &home)
        .current_dir(td.path()));
    assert_eq!(o.code(), Some(0), "\n{}", o.describe());
    assert!(
        o.stderr.contains("warning") && o.stderr.contains("--no-secrets"),
        "\n{}",
        o.describe()
    );
    let o = run(fsguard(&[
        "run",
        "--no-secrets",
        "--allow-read",
        "~/.ssh/id_rsa",
        "--",
        "cat",
        s(&home.join(".ssh/id_rsa")),
    ])
    .env("HOME", &home));
    assert_eq!(o.stdout, "KEY\n", "\n{}", o.describe());
    assert!(!o.stderr.contains("warning"), "\n{}", o.describe());
}

#[test]
fn item9_explain_exit_status_and_json() {
    let (td, proj, _) = layout("f9exp");
    let root = format!("--root={}", proj.display());
    let o = run(&mut fsguard(&[
        "explain",
        &root,
        "read",
        s(&proj.join("a")),
    ]));
    assert_eq!(o.code(), Some(0), "\n{}", o.describe());
    let o = run(&mut fsguard(&["explain", &root, "read", s(&td.join("b"))]));
    assert_eq!(o.code(), Some(1), "\n{}", o.describe());
    assert!(o.stdout.starts_with("deny read "), "\n{}", o.describe());
    let o = run(&mut fsguard(&[
        "explain",
        "--json",
        &root,
        "write",
        s(&td.join("b")),
    ]));
    assert_eq!(o.code(), Some(1), "\n{}", o.describe());
    let line = o.stdout.trim();
    for want in [
        "\"verdict\":\"deny\"".to_string(),
        "\"access\":\"write\"".into(),
        "\"rule\":\"root\"".into(),
        format!("\"path\":\"{}\"", td.join("b").display()),
    ] {
        assert!(
            line.starts_with('{') && line.ends_with('}') && line.contains(&want),
            "{want}\n{}",
            o.describe()
        );
    }
}

// ---------------------------------------------------------------------------
// 4. The private TMPDIR is not inside the workspace.

#[test]
fn item4_private_tmpdir_is_outside_the_workspace() {
    let td = TempDir::new("f4");
    let ws = td.join("ws");
    mkdir(&ws);
    for flag in ["--root", "--readonly="] {
        let mut c = if flag == "--root" {
            fsguard(&["run", "--root", s(&ws), "--"])
        } else {
            fsguard(&["run", &format!("--readonly={}", ws.display()), "--"])
        };
        let o = run(c
            .args([
                "sh",
                "-c",
                "echo \"$TMPDIR\"; echo x > \"$TMPDIR/f\" && cat \"$TMPDIR/f\"; ls -A",
            ])
            .current_dir(&ws));
        assert_eq!(o.code(), Some(0), "{flag}\n{}", o.describe());
        let mut lines = o.stdout.lines();
        let tmp = PathBuf::from(lines.next().unwrap_or(""));
        assert!(tmp.is_absolute(), "{flag}\n{}", o.describe());
        assert!(
            !tmp.starts_with(&ws),
            "{flag}: TMPDIR {} is inside the workspace\n{}",
            tmp.display(),
            o.describe()
        );
        assert_eq!(lines.next(), Some("x"), "{flag}\n{}", o.describe());
        assert_eq!(
            lines.next(),
            None,
            "{flag}: the workspace is not empty\n{}",
            o.describe()
        );
        assert!(!tmp.exists(), "{flag}: TMPDIR left behind");
        assert_eq!(std::fs::read_dir(&ws).unwrap().count(), 0);
    }
}

// ---------------------------------------------------------------------------
// 6. Denials cannot be hidden from the user.

#[test]
fn item6_denials_reach_the_user_whatever_the_command_does_with_stderr() {
    let td = TempDir::new("f6");
    let ws = td.join("ws");
    mkdir(&ws);
    write_file(&td.join("outside"), "secret\n", 0o644);
    let script =
        "cat /etc/shadow 2>/dev/null; cat ../outside 2>/dev/null; exec 2>&-; cat ../outside; true";
    let o = run(fsguard(&["run", "--root", s(&ws), "--", "sh", "-c", script]).current_dir(&ws));
    assert_eq!(o.code(), Some(0), "\n{}", o.describe());
    assert_eq!(o.stdout, "", "\n{}", o.describe());
    assert_traces(
        &o,
        &[
            Expect::new("open", "read", "/etc/shadow", "root"),
            Expect::new("open", "read", td.join("outside"), "root"),
            Expect::new("open", "read", td.join("outside"), "root"),
        ],
    );
    // The summary names every distinct event, not only the first.
    assert!(
        o.stderr.contains("fsguard: 3 accesses blocked")
            && o.stderr.contains("fsguard:   open read /etc/shadow")
            && o.stderr.contains(&format!(
                "fsguard:   open read {} (x2)",
                td.join("outside").display()
            )),
        "\n{}",
        o.describe()
    );
    // With --log FILE the trace goes to the file, and the summary stays.
    let log = td.join("trace.log");
    let o = run(fsguard(&[
        "run",
        "--root",
        s(&ws),
        "--log",
        s(&log),
        "--",
        "sh",
        "-c",
        "cat ../outside 2>/dev/null; true",
    ])
    .current_dir(&ws));
    assert!(o.blocked().is_empty(), "\n{}", o.describe());
    assert!(
        o.stderr
            .contains("fsguard: 1 access blocked; first: open read"),
        "\n{}",
        o.describe()
    );
    let text = std::fs::read_to_string(&log).unwrap();
    assert_eq!(traces(&text, "blocked").len(), 1, "{text}");
}

// ---------------------------------------------------------------------------
// 8. Landlock by default: static programs are confined too.

#[test]
fn item8_static_program_confined_by_default() {
    if !landlock_or_skip("item8_static_program_confined_by_default") {
        return;
    }
    let td = TempDir::new("f8");
    let ws = td.join("ws");
    mkdir(&ws);
    let w = c_program("static_writer", &["-static"]);
    let outside = td.join("outside");
    let o = run(fsguard(&["run", "--root", s(&ws), "--", s(&w), s(&outside)]).current_dir(&ws));
    assert_eq!(o.code(), Some(3), "\n{}", o.describe());
    assert!(!outside.exists(), "a static program wrote outside the root");
    let o = run(fsguard(&["run", "--root", s(&ws), "--", s(&w), "inside"]).current_dir(&ws));
    assert_eq!(o.code(), Some(0), "\n{}", o.describe());
    assert!(ws.join("inside").exists());
    // --no-landlock opts out (and says the program is unguarded).
    let o = run(fsguard(&[
        "run",
        "--no-landlock",
        "--root",
        s(&ws),
        "--",
        s(&w),
        s(&outside),
    ])
    .current_dir(&ws));
    assert_eq!(o.code(), Some(0), "\n{}", o.describe());
    assert!(outside.exists());
    // What works today keeps working under the default ruleset.
    let home = td.join("home");
    mkdir(&home);
    let o = run(fsguard(&[
        "run",
        "--root",
        s(&ws),
        "--",
        "sh",
        "-c",
        "python3 -c 'import json, ssl, sqlite3; print(1)' && \
         printf 'all:\\n\\tcc -o hello hello.c\\n' > Makefile && \
         printf 'int main(void){return 0;}\\n' > hello.c && make -s && ./hello && \
         git init -q r && git -C r status --short && id -un >/dev/null && \
         cat /dev/null && head -c1 /dev/urandom >/dev/null && echo ok",
    ])
    .env("HOME", &home)
    .current_dir(&ws));
    assert!(o.stdout.ends_with("ok\n"), "\n{}", o.describe());
}

// ---------------------------------------------------------------------------
// 9 (audit). An audit run still cannot write outside the root.

#[test]
fn item9_audit_still_refuses_writes_outside_the_root() {
    if !landlock_or_skip("item9_audit_still_refuses_writes_outside_the_root") {
        return;
    }
    let td = TempDir::new("f9audit");
    let ws = td.join("ws");
    mkdir(&ws);
    let outside = td.join("outside");
    let o = run(fsguard(&[
        "run",
        "--audit",
        "--root",
        s(&ws),
        "--deny-write",
        "locked",
        "--",
        "sh",
        "-c",
        &format!(
            "echo x > locked; cat /etc/hostname >/dev/null; echo y > {}; true",
            outside.display()
        ),
    ])
    .current_dir(&ws));
    assert_eq!(o.code(), Some(0), "\n{}", o.describe());
    assert!(
        ws.join("locked").exists(),
        "audit: a write inside the root goes ahead"
    );
    assert!(
        !outside.exists(),
        "audit wrote outside the root\n{}",
        o.describe()
    );
    assert!(
        o.stderr.contains("would have been blocked (audit)"),
        "\n{}",
        o.describe()
    );
}

// ---------------------------------------------------------------------------
// 5. Everyday tools work under a plain --root with a real HOME.

#[test]
fn item5_everyday_tools_under_a_plain_root() {
    let td = TempDir::new("f5");
    let ws = td.join("ws");
    let home = td.join("home");
    mkdir(&ws);
    mkdir(&home.join(".config/pip"));
    write_file(
        &home.join(".gitconfig"),
        "[user]\n\tname = Fs Guard\n\temail = fs@example.org\n",
        0o644,
    );
    write_file(
        &home.join(".config/pip/pip.conf"),
        "[global]\ntimeout = 30\n",
        0o644,
    );
    write_file(
        &home.join(".git-credentials"),
        "https://u:tok@example.org\n",
        0o600,
    );
    write_file(&ws.join("x"), "hi\n", 0o644);
    let script = "git init -q r && git -C r status --short && git -C r config user.name && \
        python3 -m pip config list && \
        curl -s file://$PWD/x && \
        printf 'all:\\n\\tcc -o hello hello.c\\n' > Makefile && \
        printf 'int main(void){return 0;}\\n' > hello.c && make -s && ./hello && echo ok; \
        cat ~/.git-credentials || echo secret-denied";
    let o = run(fsguard(&["run", "--root", ".", "--", "sh", "-c", script])
        .env("HOME", &home)
        .current_dir(&ws));
    assert!(o.stdout.contains("Fs Guard\n"), "git\n{}", o.describe());
    assert!(
        o.stdout.contains("global.timeout='30'"),
        "pip\n{}",
        o.describe()
    );
    assert!(
        o.stdout.contains("hi\nok\n"),
        "curl, make, cc\n{}",
        o.describe()
    );
    assert!(
        o.stdout.ends_with("secret-denied\n"),
        "secrets stay denied\n{}",
        o.describe()
    );
    assert!(!o.stdout.contains("tok@"), "\n{}", o.describe());
}

// ---------------------------------------------------------------------------
// 7. Installed, the CLI finds its library from anywhere; lib-path is absolute.

#[test]
fn item7_install_and_lib_path() {
    let td = TempDir::new("f7");
    let prefix = td.join("prefix");
    let target = cli().parent().unwrap().parent().unwrap();
    let o = run(bare_cmd(repo().join("scripts/install.sh"))
        .arg(&prefix)
        .env("FSGUARD_NO_BUILD", "1")
        .env("CARGO_TARGET_DIR", target));
    assert_eq!(o.code(), Some(0), "\n{}", o.describe());
    let other = td.join("elsewhere");
    mkdir(&other);
    let inst = prefix.join("bin/fsguard");
    let o = run(bare_cmd(&inst).arg("lib-path").current_dir(&other));
    assert_eq!(o.code(), Some(0), "\n{}", o.describe());
    assert_eq!(
        o.stdout.trim(),
        s(&prefix.join("lib/libfsguard.so")),
        "\n{}",
        o.describe()
    );
    assert!(Path::new(o.stdout.trim()).is_absolute());
    let marker = other.join("m");
    let o = run(bare_cmd(&inst)
        .args(["run", "--readonly", "--", "sh", "-c", "echo > m"])
        .current_dir(&other));
    assert_ne!(o.code(), Some(0), "\n{}", o.describe());
    assert!(!marker.exists());
    assert_traces(&o, &[Expect::new("open", "write", &marker, "readonly")]);
}
