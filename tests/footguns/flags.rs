//! Item 9: CLI flags do what they say (help, timeouts, tilde, warnings, explain, audit).

use super::*;

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
