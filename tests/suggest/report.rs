//! `fsguard run --report`.

use super::*;

#[test]
fn report_groups_refused_accesses() {
    let td = TempDir::new("report");
    let (home, ws, out) = (td.join("home"), td.join("ws"), td.join("out"));
    mkdir(&home);
    mkdir(&ws);
    mkdir(&out);
    for i in 0..3 {
        write_file(&out.join(format!("f{i}")), "x\n", 0o644);
    }
    let script = format!(
        "cat {o}/f0 {o}/f1 {o}/f2 /etc/passwd; echo x > {o}/new; true",
        o = s(&out)
    );
    let report = td.join("report.txt");
    let before = snapshot(&out);
    let o = run(fsguard(
        &home,
        &[
            "run",
            "--root",
            ".",
            "--report",
            &s(&report),
            "--",
            "sh",
            "-c",
            &script,
        ],
    )
    .current_dir(&ws)
    .env("NO_COLOR", ""));
    assert_eq!(o.code(), Some(0), "{}", o.describe());
    assert_eq!(snapshot_diff(&before, &snapshot(&out)), None);
    // A file: no colour, whatever NO_COLOR says; the summary still on stderr.
    let text = std::fs::read_to_string(&report).unwrap();
    assert!(!text.contains('\x1b'), "{text}");
    assert!(
        o.stderr.contains("fsguard: 5 accesses blocked"),
        "{}",
        o.describe()
    );
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines[0], "fsguard report: 5 accesses blocked, in 3 groups",
        "{text}"
    );
    assert!(
        lines[1]
            .split_whitespace()
            .eq(["COUNT", "ACCESS", "RULE", "DIRECTORY", "FIRST"]),
        "{text}"
    );
    let row = |i: usize| lines[i].split_whitespace().collect::<Vec<_>>();
    let (o_s, f0) = (s(&out), s(&out.join("f0")));
    assert_eq!(row(2), ["3", "read", "root", &o_s, &f0], "{text}");
    let mut rest = vec![row(3), row(4)];
    rest.sort();
    let new = s(&out.join("new"));
    assert_eq!(
        rest,
        [
            vec!["1", "read", "root", "/etc", "/etc/passwd"],
            vec!["1", "write", "root", &o_s, &new],
        ],
        "{text}"
    );
    let hint = format!("  why: fsguard explain --root . read {f0}");
    assert!(text.contains(&hint), "{text}");
    // The hint answers as the report says.
    let x = run(fsguard(&home, &["explain", "--root", ".", "read", &f0]).current_dir(&ws));
    assert_eq!(
        x.stdout,
        format!("deny read {f0} rule=root hint=\"--allow-read {f0}\"\n")
    );

    // `-`: on stderr, instead of the summary; audit mode says so.
    let o = run(fsguard(
        &home,
        &[
            "run",
            "--audit",
            "--root",
            ".",
            "--report",
            "-",
            "--",
            "sh",
            "-c",
            "cat /etc/passwd >/dev/null",
        ],
    )
    .current_dir(&ws));
    assert!(
        o.stderr
            .contains("fsguard report: 1 access would have been blocked (audit), in 1 group"),
        "{}",
        o.describe()
    );
    assert!(!o.stderr.contains("first:"), "{}", o.describe());
    assert!(
        !o.stderr.contains('\x1b'),
        "not a terminal: {}",
        o.describe()
    );
}
