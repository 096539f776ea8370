//! Every CLI flag and how it layers over the config and the environment.

use super::*;

/// `fsguard run FLAGS -- python3 -c PROBE OPS` with a config and variables.
fn flagged(cfg: Option<&Path>, vars: &[(&str, &str)], flags: &[&str]) -> Command {
    let mut c = cmd(cli());
    c.arg("run");
    if let Some(cfg) = cfg {
        c.arg("--config").arg(cfg);
    }
    c.args(flags).args(["--", "python3"]);
    for (k, v) in vars {
        c.env(k, v);
    }
    c
}

#[test]
fn every_cli_flag_layers_over_config_and_env() {
    let d = TempDir::new("flags");
    workspace(&d);
    let p = d.path();
    let agent = d.file("agent.toml", AGENT);
    let ro = d.file(
        "ro.toml",
        "readonly = true\n[write]\nallow = [\"ws/sub\"]\n",
    );
    let dd = p.display().to_string();

    // --deny-read over a config that allows.
    expect(
        flagged(Some(&agent), &[], &["--deny-read", "ws/a.txt"]),
        p,
        &[("r:ws/a.txt", "EACCES"), ("r:ws/sub/notes", "OK")],
    );
    // --allow-read re-allows inside the config's deny.
    expect(
        flagged(Some(&agent), &[], &["--allow-read", "ws/.env"]),
        p,
        &[("r:ws/.env", "OK"), ("r:ws/.env.local", "EACCES")],
    );
    // --deny-read-always beats the config's allow, and protects from moves.
    expect(
        flagged(Some(&agent), &[], &["--deny-read-always", "ws/sub/notes"]),
        p,
        &[
            ("r:ws/sub/notes", "EACCES"),
            ("mv:ws/sub/notes:ws/sub/n2", "EACCES"),
            ("r:ws/sub/.env", "OK"),
        ],
    );
    // --allow-write over a read-only config.
    expect(
        flagged(Some(&ro), &[], &["--allow-write", "ws/a.txt"]),
        p,
        &[("w:ws/a.txt", "OK"), ("w:ws/.env", "EACCES")],
    );
    // --deny-write inside the config's allow loses to it (allow is step 2)...
    expect(
        flagged(Some(&ro), &[], &["--deny-write", "ws/sub/notes"]),
        p,
        &[("w:ws/sub/notes", "OK")],
    );
    // ...and denies where nothing allows.
    expect(
        flagged(None, &[], &["--deny-write", "ws"]),
        p,
        &[("w:ws/a.txt", "EACCES"), ("w:outside.txt", "OK")],
    );
    // --deny-write-always beats the config's allow.
    expect(
        flagged(Some(&ro), &[], &["--deny-write-always", "ws/sub/notes"]),
        p,
        &[("w:ws/sub/notes", "EACCES"), ("w:ws/sub/other", "OK")],
    );
    // --audit over an enforcing config: nothing blocked, audit lines.
    let o = expect(
        flagged(Some(&ro), &[], &["--audit"]),
        p,
        &[("w:ws/a.txt", "OK")],
    );
    assert_eq!(
        lines(&o.stderr, "audit"),
        vec![format!(
            "[fsguard] audit open write path={dd}/ws/a.txt rule=readonly hint=\"--allow-write {dd}/ws/a.txt\""
        )]
    );
    // --log FILE over FSGUARD_LOG=stderr, --log-format json over FSGUARD_LOG_FORMAT=text.
    let log = d.join("flag.log");
    let o = expect(
        flagged(
            Some(&ro),
            &[("FSGUARD_LOG", "stderr"), ("FSGUARD_LOG_FORMAT", "text")],
            &["--log", log.to_str().unwrap(), "--log-format", "json"],
        ),
        p,
        &[("w:ws/a.txt", "EACCES")],
    );
    // No trace line on stderr; the supervisor's summary stays, with the
    // rule that would allow the access.
    let hint = format!(
        "fsguard: to allow: --allow-write {dd}/ws/a.txt  (config: [write] allow = [\"{dd}/ws/a.txt\"])"
    );
    // (The hint comes after the line saying it adds to this run's policy:
    // issue 29 item 1.)
    assert!(
        o.stderr.starts_with("fsguard: 1 access blocked")
            && o.stderr.lines().count() == 3
            && o.stderr
                .lines()
                .nth(1)
                .is_some_and(|l| l.starts_with("fsguard: an option below adds"))
            && o.stderr.lines().nth(2) == Some(hint.as_str()),
        "{}",
        o.show()
    );
    let objs = parse_json_lines(&std::fs::read_to_string(&log).unwrap());
    assert_eq!(objs.len(), 1);
    assert_eq!(objs[0].get("path"), format!("{dd}/ws/a.txt"));
    // --log off.
    let o = expect(
        flagged(Some(&ro), &[], &["--log", "off"]),
        p,
        &[("w:ws/a.txt", "EACCES")],
    );
    // (The hint comes after the line saying it adds to this run's policy:
    // issue 29 item 1.)
    assert!(
        o.stderr.starts_with("fsguard: 1 access blocked")
            && o.stderr.lines().count() == 3
            && o.stderr
                .lines()
                .nth(1)
                .is_some_and(|l| l.starts_with("fsguard: an option below adds"))
            && o.stderr.lines().nth(2) == Some(hint.as_str()),
        "{}",
        o.show()
    );
    // Variables over the config: FSGUARD_READONLY=0 lifts readonly = true,
    // FSGUARD_ERRNO over the default, FSGUARD_MODE=audit over enforce.
    // (the config's write allow-list still refuses what it does not name)
    let o = expect(
        flagged(Some(&ro), &[("FSGUARD_READONLY", "0")], &[]),
        p,
        &[("w:ws/a.txt", "EACCES"), ("w:ws/sub/new", "OK")],
    );
    assert!(o.stderr.contains("rule=not_allowed"), "{}", o.show());
    expect(
        flagged(Some(&ro), &[("FSGUARD_ERRNO", "EPERM")], &[]),
        p,
        &[("w:ws/a.txt", "EPERM")],
    );
    expect(
        flagged(Some(&ro), &[("FSGUARD_MODE", "audit")], &[]),
        p,
        &[("w:ws/a.txt", "OK")],
    );
    // --root over FSGUARD_ROOT over the config's root; --readonly over all.
    expect(
        flagged(Some(&agent), &[("FSGUARD_ROOT", "ws/sub")], &[]),
        p,
        &[("r:ws/a.txt", "EACCES"), ("r:ws/sub/notes", "OK")],
    );
    expect(
        flagged(
            Some(&agent),
            &[("FSGUARD_ROOT", "ws/sub")],
            &["--root", "ws"],
        ),
        p,
        &[("r:ws/a.txt", "OK")],
    );
    expect(
        flagged(Some(&agent), &[], &["--readonly"]),
        p,
        &[("w:ws/a.txt", "EACCES"), ("r:ws/a.txt", "OK")],
    );
    expect(
        flagged(None, &[], &["--readonly=ws/sub"]),
        p,
        &[
            ("w:ws/sub/notes", "EACCES"),
            ("r:ws/a.txt", "EACCES"),
            ("r:ws/sub/notes", "OK"),
        ],
    );
    // `--config` replaces FSGUARD_CONFIG.
    expect(
        flagged(
            Some(&ro),
            &[("FSGUARD_CONFIG", agent.to_str().unwrap())],
            &[],
        ),
        p,
        &[("r:ws/.env", "OK"), ("w:ws/a.txt", "EACCES")],
    );
    // `fsguard check` shows the layering.
    let o = run(fsguard(&[
        "check",
        "--config",
        ro.to_str().unwrap(),
        "--deny-read-always",
        "ws/k.pem",
        "--audit",
        "--log",
        "off",
    ])
    .current_dir(p));
    assert_eq!(o.code, Some(0), "{}", o.show());
    for want in [
        "readonly = true".to_string(),
        "mode = \"audit\"".into(),
        format!("deny_always = [\"{dd}/ws/k.pem\"]"),
        format!("allow = [\"{dd}/ws/sub\"]"),
        "target = \"off\"".into(),
    ] {
        assert!(o.stdout.contains(&want), "{want}: {}", o.show());
    }
}
