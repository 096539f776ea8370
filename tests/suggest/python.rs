//! Python round trips, learnt at once and in rounds; suggest never allows secrets.

use super::*;

#[test]
fn python_round_trip() {
    let c = PyCase::new("suggest-py");
    let cmd = c.cmd();
    let cmd: Vec<&str> = cmd.iter().map(String::as_str).collect();
    let log = c.t.join("audit.jsonl");
    let policy = c.t.join("proj.toml");
    // Audit, with Landlock off: the writes outside the root go ahead, so one
    // run shows everything the program does.
    let mut a = vec!["run", "--audit", "--no-landlock", "--root", "."];
    let log_s = s(&log);
    a.extend(["--log-format", "json", "--log", &log_s, "--"]);
    a.extend(&cmd);
    let o = run(fsguard(&c.home, &a).current_dir(&c.ws));
    assert_eq!(o.code(), Some(0), "{}", o.describe());
    assert!(o.stderr.contains("would have been blocked (audit)"));
    c.reset();

    let text = suggest(&c.home, &c.ws, &["--root", ".", &log_s], &policy);
    // Generalised and named: the cache as one rule, the home's config file,
    // the temp dir's input directory (listed, so the directory itself).
    for want in [
        &format!("root = \"{}\"", s(&c.ws)),
        "\"~/.cache/tool/**\"",
        "# tool's cache: ",
        "\"~/.config/tool/settings.json\"",
        "# home directory",
        &format!("\"{}\"", s(&c.data.join("in"))),
        "# temp dir",
    ] {
        let want: &str = want;
        assert!(text.contains(want), "no {want:?} in:\n{text}");
    }
    assert!(!text.contains("entry3"), "not generalised:\n{text}");

    let mut e = fsguard(&c.home, &["run", "--config", &s(&policy), "--"]);
    e.args(&cmd).current_dir(&c.ws);
    let o = run(&mut e);
    assert_no_blocked(&o);
    assert_eq!(o.code(), Some(0), "{text}\n{}", o.describe());
    assert_eq!(o.stdout, "total 10\n");
    assert_eq!(
        std::fs::read_to_string(c.data.join("out/result.txt")).unwrap(),
        "10"
    );
    assert!(c.home.join(".cache/tool/entry5").is_file());
    // And the policy still refuses what the run never did.
    let x = run(&mut fsguard(
        &c.home,
        &[
            "explain",
            "--config",
            &s(&policy),
            "write",
            &s(&c.t.join("elsewhere")),
        ],
    ));
    assert_eq!(x.code(), Some(1), "{}", x.describe());
}

#[test]
fn python_learnt_in_rounds_under_landlock() {
    // With Landlock (the default) an audit run's writes outside the root
    // fail, so the program stops at its first one: each round audits under
    // the policy learnt so far and merges what is new into it.
    let c = PyCase::new("suggest-rounds");
    let cmd = c.cmd();
    let cmd: Vec<&str> = cmd.iter().map(String::as_str).collect();
    let policy = c.t.join("proj.toml");
    let mut rounds = 0;
    loop {
        rounds += 1;
        assert!(
            rounds <= 6,
            "did not converge:\n{}",
            std::fs::read_to_string(&policy).unwrap()
        );
        let log = c.t.join(format!("audit{rounds}.jsonl"));
        let log_s = s(&log);
        let p = s(&policy);
        let mut a = vec!["run", "--audit", "--root", ".", "--log-format", "json"];
        a.extend(["--log", &log_s]);
        if rounds > 1 {
            a.extend(["--config", &p]);
        }
        a.push("--");
        a.extend(&cmd);
        let o = run(fsguard(&c.home, &a).current_dir(&c.ws));
        c.reset();
        let logged = std::fs::read_to_string(&log).unwrap_or_default();
        if logged.trim().is_empty() {
            assert_eq!(o.code(), Some(0), "{}", o.describe());
            break;
        }
        let mut args = vec!["--root", "."];
        if rounds > 1 {
            args.extend(["--merge", &p]);
        }
        args.push(&log_s);
        let next = c.t.join("next.toml");
        let text = suggest(&c.home, &c.ws, &args, &next);
        if rounds == 1 {
            // A comment of the user's own, which every merge must keep.
            std::fs::write(&policy, format!("# reviewed by hand\n{text}")).unwrap();
        } else {
            assert!(text.starts_with("# reviewed by hand\n"), "{text}");
            std::fs::rename(&next, &policy).unwrap();
        }
    }
    assert!(rounds >= 3, "one round should not be enough under Landlock");
    enforce(&c.home, &c.ws, &policy, &cmd);
    assert!(c.home.join(".cache/tool/entry5").is_file());
}

#[test]
fn suggest_runs_the_command_and_never_allows_secrets() {
    let td = TempDir::new("suggest-secrets");
    let (home, ws) = (td.join("home"), td.join("ws"));
    mkdir(&home.join(".ssh"));
    mkdir(&home.join(".config/tool"));
    mkdir(&ws);
    write_file(&home.join(".ssh/id_ed25519"), "KEY\n", 0o600);
    write_file(&home.join(".config/tool/a.conf"), "conf\n", 0o644);
    let o = run(fsguard(
        &home,
        &[
            "suggest",
            "--",
            "sh",
            "-c",
            "cat ~/.ssh/id_ed25519 ~/.config/tool/a.conf; echo do''ne",
        ],
    )
    .current_dir(&ws));
    assert_eq!(o.code(), Some(0), "{}", o.describe());
    // Standard output is the policy alone; the command's output went to
    // standard error, with the audit run's report.
    assert!(
        !o.stdout.contains("done") && o.stderr.contains("done\n"),
        "{}",
        o.describe()
    );
    assert!(o
        .stderr
        .contains("fsguard report: 2 accesses would have been blocked (audit)"));
    let text = &o.stdout;
    assert!(text.contains("\"~/.config/tool/a.conf\""), "{text}");
    assert!(text.contains("# WARNING"), "{text}");
    assert!(
        text.contains("#   read ~/.ssh/id_ed25519: secrets:"),
        "{text}"
    );
    let policy = td.join("p.toml");
    std::fs::write(&policy, text).unwrap();
    for (path, code) in [(".ssh/id_ed25519", 1), (".config/tool/a.conf", 0)] {
        let x = run(&mut fsguard(
            &home,
            &[
                "explain",
                "--config",
                &s(&policy),
                "read",
                &s(&home.join(path)),
            ],
        ));
        assert_eq!(x.code(), Some(code), "{path}: {}", x.describe());
    }
    // Only allow lines, and none names the key's directory.
    for l in text.lines().filter(|l| l.trim_start().starts_with('"')) {
        assert!(!l.contains(".ssh"), "{l}");
    }
}
