//! The command line parser, model and conversion, without running a command.

use super::*;

fn os(v: &[&str]) -> Vec<OsString> {
    v.iter().map(OsString::from).collect()
}

fn cli(v: &[&str]) -> Result<Cli, String> {
    match parse(os(v))? {
        Invocation::Policy(c) => Ok(c),
        Invocation::Wrap { cli, .. } => Ok(cli),
        _ => Err("not a policy command".into()),
    }
}

#[test]
fn parses_flags_and_command() {
    let c = cli(&[
        "run",
        "--readonly=ws",
        "--deny-read",
        "*.pem",
        "--",
        "ls",
        "-l",
    ])
    .unwrap();
    assert_eq!(c.command, "run");
    assert_eq!(c.rest, os(&["ls", "-l"]));
    assert!(matches!(&c.flags[0], Flag::Readonly(Some(r)) if r == "ws"));
    assert!(matches!(&c.flags[1], Flag::Rule(Access::Read, ListKind::Deny, p) if p == "*.pem"));
    let c = cli(&["run", "--readonly", "ls", "--root", "x"]).unwrap();
    assert_eq!(
        c.rest,
        os(&["ls", "--root", "x"]),
        "options after the command are its own"
    );
    assert!(matches!(&c.flags[..], [Flag::Readonly(None)]));
    let e = cli(&["run", "--bogus"]).err().unwrap();
    assert!(e.starts_with("unknown option --bogus\n"), "{e}");
    assert!(cli(&["run", "--root"]).is_err());
    // A value may start with `-`.
    let c = cli(&["run", "--deny-read", "-x", "--report", "-", "true"]).unwrap();
    assert!(matches!(&c.flags[..], [Flag::Rule(_, _, p)] if p == "-x"));
    assert_eq!(c.run.report.as_deref(), Some("-"));
}

#[test]
fn flags_keep_their_order_and_repeat() {
    let c = cli(&[
        "check",
        "--root",
        "a",
        "--allow-read",
        "x",
        "--readonly=b",
        "--allow-read",
        "y",
        "--root",
        "c",
        "--audit",
        "--audit",
    ])
    .unwrap();
    let shown: Vec<String> = c
        .flags
        .iter()
        .map(|f| match f {
            Flag::Root(r) => format!("root {r}"),
            Flag::Readonly(r) => format!("readonly {r:?}"),
            Flag::Rule(_, _, p) => format!("rule {p}"),
            Flag::Audit => "audit".into(),
            _ => "other".into(),
        })
        .collect();
    assert_eq!(
        shown,
        [
            "root a",
            "rule x",
            "readonly Some(\"b\")",
            "rule y",
            "root c",
            "audit"
        ]
    );
    // Other options: the last one wins.
    let c = cli(&["check", "--config", "a", "--config", "b", "--log", "off"]).unwrap();
    assert_eq!(c.config, Some(PathBuf::from("b")));
}

#[test]
fn run_options() {
    let r = |v: &[&str]| {
        let mut a = vec!["run"];
        a.extend_from_slice(v);
        a.push("true");
        cli(&a).map(|c| c.run)
    };
    let o = r(&["--timeout", "2.5", "--landlock=required", "-q"]).unwrap();
    assert_eq!(o.timeout, Some(2.5));
    assert_eq!(o.landlock, Landlock::Required);
    assert!(o.quiet);
    assert_eq!(r(&["--landlock"]).unwrap().landlock, Landlock::BestEffort);
    assert_eq!(r(&[]).unwrap().landlock, Landlock::Auto);
    assert_eq!(
        r(&["--landlock", "--no-landlock"]).unwrap().landlock,
        Landlock::Off
    );
    assert_eq!(
        r(&["--no-landlock", "--landlock"]).unwrap().landlock,
        Landlock::BestEffort
    );
    assert!(r(&["--landlock=maybe"])
        .err()
        .unwrap()
        .starts_with("--landlock: bad value \"maybe\""));
    assert!(r(&["--timeout=-1"]).is_err());
    assert_eq!(r(&["--timeout", "1s"]).unwrap().timeout, Some(1.0));
    assert_eq!(r(&["--fail-on-block"]).unwrap().fail_on_block, Some(3));
    assert_eq!(r(&["--fail-on-block=9"]).unwrap().fail_on_block, Some(9));
    for bad in ["--fail-on-block=0", "--fail-on-block=256"] {
        let e = r(&[bad]).err().unwrap();
        assert!(e.starts_with("--fail-on-block: bad value"), "{e}");
    }
    // `--fail-on-block 5`: 5 is the command, not the status.
    let c = cli(&["run", "--fail-on-block", "5"]).unwrap();
    assert_eq!((c.run.fail_on_block, c.rest), (Some(3), os(&["5"])));
    assert_eq!(parse_duration("2m"), Some(120.0));
    assert_eq!(parse_duration("0.5h"), Some(1800.0));
    assert_eq!(parse_duration("1d"), Some(86400.0));
    assert_eq!(parse_duration("5x"), None);
    assert_eq!(parse_duration("0s"), None);
    assert_eq!(parse_duration("s"), None);
}

#[test]
fn wrap_takes_name_first() {
    let c = cli(&[
        "wrap", "--dir", "b", "-f", "py", "--root", "x", "--", "python3",
    ])
    .unwrap();
    assert_eq!(c.rest, os(&["python3"]));
    assert_eq!(c.wrap.dir, Some(PathBuf::from("b")));
    assert!(c.wrap.force);
    let e = cli(&["wrap", "--root", "x", "py", "--", "python3"])
        .err()
        .unwrap();
    assert!(e.contains("NAME must come before the options"), "{e}");
}

#[test]
fn suggest_logs_or_command() {
    let s = |v: &[&str]| {
        let mut a = vec!["suggest"];
        a.extend_from_slice(v);
        match parse(os(&a))? {
            Invocation::Suggest(s) => Ok(s),
            _ => Err("not suggest".to_string()),
        }
    };
    let a = s(&["--max-depth", "2", "a.jsonl", "b.jsonl"]).unwrap();
    assert_eq!(a.logs.len(), 2);
    assert_eq!(a.opts.max_depth, Some(2));
    let a = s(&["--no-landlock", "--", "make", "-j"]).unwrap();
    assert_eq!(a.cmd, os(&["make", "-j"]));
    assert_eq!(a.run_flags, os(&["--no-landlock"]));
    assert!(s(&[]).is_err());
    assert!(s(&["--exact", "--max-depth", "2", "a"]).is_err());
    assert!(s(&["a", "--", "b"]).is_err());
    assert!(s(&["--timeout", "3", "a"]).is_err());
}

#[test]
fn the_model_is_consistent() {
    Line::command().debug_assert();
}

#[test]
fn an_optional_value_given_as_the_command_is_named() {
    let dir = std::env::temp_dir();
    let d = dir.to_str().unwrap();
    for (v, want) in [
        (
            vec!["run", "--readonly", d, "--", "ls"],
            format!("--readonly={d}"),
        ),
        (
            vec!["run", "--readonly", "--", d],
            format!("--readonly={d}"),
        ),
        (
            vec!["run", "--fail-on-block", "5", "--", "true"],
            "--fail-on-block=5".into(),
        ),
    ] {
        assert_eq!(cli(&v).unwrap().meant, Some(want), "{v:?}");
    }
    // wrap writes nothing for it.
    let e = cli(&["wrap", "x", "--fail-on-block", "5", "--", "true"]).err();
    assert!(e.is_some_and(|e| e.contains("did you mean `--fail-on-block=5`?")));
    // A program after the option, or a number after another option: none.
    for v in [
        vec!["run", "--readonly", "ls", d],
        vec!["run", "--fail-on-block", "--", "true", "5"],
        vec!["run", "--keep-tmp", "--", "5"],
    ] {
        assert_eq!(cli(&v).unwrap().meant, None, "{v:?}");
    }
}

/// Issue 27 item 9: `--allow-unix-socket`, repeatable, in order, for every
/// policy command; it names no policy by itself (discovery still applies).
#[test]
fn unix_sockets_are_doors_out_the_flag() {
    let c = cli(&[
        "run",
        "--allow-unix-socket",
        "/run/pg",
        "--root",
        "ws",
        "--allow-unix-socket",
        "@x11",
        "true",
    ])
    .unwrap();
    let shown: Vec<String> = c
        .flags
        .iter()
        .map(|f| match f {
            Flag::UnixSocket(p) => format!("socket {p}"),
            Flag::Root(r) => format!("root {r}"),
            _ => "other".into(),
        })
        .collect();
    assert_eq!(shown, ["socket /run/pg", "root ws", "socket @x11"]);
    let c = cli(&["check", "--allow-unix-socket", "s"]).unwrap();
    assert!(matches!(&c.flags[..], [Flag::UnixSocket(p)] if p == "s"));
    assert!(cli(&["run", "--allow-unix-socket"]).is_err());
}
