//! Items 1-3: write rules confine writes, keep protections, and what is written can be read back.

use super::*;

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
