//! Audit mode, log files, JSON traces and the errno choice.

use super::*;

#[test]
fn audit_mode_logs_to_a_file_as_json_and_blocks_nothing() {
    let d = TempDir::new("audit");
    workspace(&d);
    let cfg = d.file(
        "policy.toml",
        "readonly = true\nmode = \"audit\"\n[read]\ndeny = [\"ws/.env\"]\n[log]\ntarget = \"trace.jsonl\"\nformat = \"json\"\n",
    );
    let script = "echo x > ws/new; mv ws/new ws/renamed; cat ws/.env > /dev/null";
    for round in 1..=2 {
        let _ = std::fs::remove_file(d.join("ws/renamed"));
        let mut c = guarded("/bin/sh", &[("FSGUARD_CONFIG", cfg.to_str().unwrap())]);
        let o = run(c.args(["-c", script]).current_dir(d.path()));
        assert_eq!(o.code, Some(0), "{}", o.show());
        assert_eq!(o.stderr, "", "the log goes to the file");
        assert!(d.join("ws/renamed").exists(), "audit blocks nothing");
        let text = std::fs::read_to_string(d.join("trace.jsonl")).unwrap();
        let objs = parse_json_lines(&text);
        assert_eq!(
            objs.len(),
            3 * round,
            "appended, one line per call:\n{text}"
        );
        let dd = d.path().display().to_string();
        let last = &objs[3 * (round - 1)..];
        let want = [
            ("open", "write", format!("{dd}/ws/new"), None, "readonly"),
            (
                "renameat2|rename|renameat",
                "write",
                format!("{dd}/ws/new"),
                Some(format!("{dd}/ws/renamed")),
                "readonly",
            ),
            ("open|openat", "read", format!("{dd}/ws/.env"), None, ""),
        ];
        for (o, (calls, access, path, dest, rule)) in last.iter().zip(want) {
            assert_eq!(o.get("event"), "audit", "{o:?}");
            assert!(calls.split('|').any(|c| c == o.get("call")), "{o:?}");
            assert_eq!(o.get("access"), access, "{o:?}");
            assert_eq!(o.get("path"), path, "{o:?}");
            assert_eq!(o.get("errno"), "0", "{o:?}");
            assert!(o.get("pid").parse::<u32>().is_ok(), "{o:?}");
            assert!(o.get("exe").starts_with('/'), "{o:?}");
            assert!(o.get("time").parse::<f64>().unwrap() > 1.6e9, "{o:?}");
            match dest {
                Some(dd) => assert_eq!(o.get("dest"), dd, "{o:?}"),
                None => assert!(!o.0.contains_key("dest"), "{o:?}"),
            }
            if rule.is_empty() {
                assert!(o.get("rule").starts_with("read.deny:"), "{o:?}");
            } else {
                assert_eq!(o.get("rule"), rule, "{o:?}");
            }
        }
    }
}

#[test]
fn env_mode_log_format_and_errno() {
    let d = TempDir::new("envvars");
    workspace(&d);
    let log = d.join("log.txt");
    // FSGUARD_MODE=audit, text to a file.
    let o = expect(
        guarded(
            "python3",
            &[
                ("FSGUARD_ROOT", "ws"),
                ("FSGUARD_MODE", "audit"),
                ("FSGUARD_LOG", log.to_str().unwrap()),
            ],
        ),
        d.path(),
        &[("w:outside.txt", "OK"), ("r:outside.txt", "OK")],
    );
    assert_eq!(lines(&o.stderr, "audit").len(), 0);
    let text = std::fs::read_to_string(&log).unwrap();
    let dd = d.path().display();
    assert_eq!(
        text,
        format!("[fsguard] audit open write path={dd}/outside.txt rule=root hint=\"--allow-write {dd}/outside.txt\"\n[fsguard] audit open read path={dd}/outside.txt rule=root hint=\"--allow-read {dd}/outside.txt\"\n")
    );
    // FSGUARD_ERRNO=EPERM and FSGUARD_LOG_FORMAT=json on stderr.
    let o = expect(
        guarded(
            "python3",
            &[
                ("FSGUARD_READONLY", "1"),
                ("FSGUARD_ERRNO", "EPERM"),
                ("FSGUARD_LOG_FORMAT", "json"),
            ],
        ),
        d.path(),
        &[("w:ws/a.txt", "EPERM"), ("r:ws/a.txt", "OK")],
    );
    let objs = parse_json_lines(o.stderr.trim_end());
    assert_eq!(objs.len(), 1, "{}", o.show());
    assert_eq!(objs[0].get("event"), "blocked");
    assert_eq!(objs[0].get("errno"), "1");
    assert_eq!(objs[0].get("rule"), "readonly");
    // FSGUARD_LOG=off: denied, silently.
    let o = expect(
        guarded(
            "python3",
            &[("FSGUARD_READONLY", "1"), ("FSGUARD_LOG", "off")],
        ),
        d.path(),
        &[("w:ws/a.txt", "EACCES")],
    );
    assert_eq!(o.stderr, "", "{}", o.show());
}
