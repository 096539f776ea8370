use super::*;
use crate::{Access, LogTarget, Policy};

const RUN: Run = Run {
    lib: "/opt/fsguard/lib/libfsguard.dylib",
    exe: "/opt/tools/bin/tool",
    tmp: "/private/var/folders/xy/T/fsguard.1",
};

fn base() -> Settings {
    Settings {
        secrets: false,
        ..Settings::default()
    }
}

fn with_root(root: &str) -> Settings {
    Settings {
        root: Some(root.into()),
        ..base()
    }
}

/// One parsed rule: allow?, operation, filters.
type Rule = (bool, String, Vec<Filter>);

/// Reads the profile back: every line after the header is one rule.
fn parse(text: &str) -> Vec<Rule> {
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some("(version 1)"));
    assert_eq!(lines.next(), Some("(allow default)"));
    lines.map(parse_rule).collect()
}

fn parse_rule(l: &str) -> Rule {
    let body = l
        .strip_prefix('(')
        .and_then(|b| b.strip_suffix(')'))
        .expect(l);
    let (action, rest) = body.split_once(' ').expect(l);
    let (op, mut rest) = rest.split_once(' ').unwrap_or((rest, ""));
    let mut filters = Vec::new();
    while !rest.is_empty() {
        rest = rest.strip_prefix(' ').unwrap_or(rest);
        let (kind, after) = rest.strip_prefix('(').unwrap().split_once(' ').unwrap();
        if kind == "regex" {
            let after = after.strip_prefix("#\"").unwrap();
            let end = after.find("\")").unwrap();
            filters.push(Filter::Regex(after[..end].into()));
            rest = &after[end + 2..];
            continue;
        }
        let mut chars = after.strip_prefix('"').expect(l).chars();
        let mut s = String::new();
        loop {
            match chars.next().expect(l) {
                '\\' => s.push(chars.next().unwrap()),
                '"' => break,
                c => s.push(c),
            }
        }
        rest = chars.as_str().strip_prefix(')').expect(l);
        filters.push(match kind {
            "subpath" => Filter::Subpath(s),
            "literal" => Filter::Literal(s),
            k => panic!("filter {k} in {l}"),
        });
    }
    assert!(
        !filters.is_empty() || l == "(deny file-write*)" || l == "(deny file-read-data)",
        "{l}"
    );
    (action == "allow", op.to_string(), filters)
}

fn matches(f: &Filter, path: &str) -> bool {
    match f {
        Filter::Subpath(p) => crate::is_within(path.as_bytes(), p.as_bytes()),
        Filter::Literal(p) => p == path,
        Filter::Regex(r) => crate::pattern::regex::tiny::matches(r, path),
    }
}

/// The kernel's answer, as SBPL decides: the last matching rule.
fn allows(rules: &[Rule], op: &str, path: &str) -> bool {
    let mut allowed = true;
    for (allow, o, filters) in rules {
        if o == op && (filters.is_empty() || filters.iter().any(|f| matches(f, path))) {
            allowed = *allow;
        }
    }
    allowed
}

fn gen(s: &Settings) -> Vec<Rule> {
    parse(&profile(s, RUN).unwrap())
}

#[test]
fn no_policy_is_allow_default_alone() {
    assert_eq!(
        profile(&base(), RUN).unwrap(),
        "(version 1)\n(allow default)\n"
    );
}

#[test]
fn strings_are_escaped() {
    assert_eq!(quote(r#"/a "b" \c"#).unwrap(), r#""/a \"b\" \\c""#);
    assert_eq!(quote("/é/x").unwrap(), "\"/é/x\"");
    assert!(quote("/a\nb").unwrap_err().contains("control character"));
    let s = with_root(r#"/ws/q"uote\back"#);
    let text = profile(&s, RUN).unwrap();
    assert!(
        text.contains(r#"(allow file-write* (subpath "/ws/q\"uote\\back"))"#),
        "{text}"
    );
    let rules = parse(&text);
    assert!(allows(&rules, "file-write*", r#"/ws/q"uote\back/f"#));
    assert!(!allows(&rules, "file-write*", "/ws/q"));
    // A path the profile cannot hold fails the whole profile.
    assert!(profile(&with_root("/ws/a\u{7}b"), RUN).is_err());
}

#[test]
fn root_confines_writes_and_reads() {
    let rules = gen(&with_root("/Users/me/ws"));
    let w = |p: &str| allows(&rules, "file-write*", p);
    let r = |p: &str| allows(&rules, "file-read-data", p);
    assert!(w("/Users/me/ws/a/b"));
    assert!(!w("/Users/me/ws2"));
    assert!(!w("/Users/me/.zshrc"));
    assert!(!w("/usr/local/bin/x"));
    assert!(w(RUN.tmp) && w(&format!("{}/x", RUN.tmp)));
    assert!(w("/dev/null") && w("/dev/ttys003") && w("/dev/fd/3"));
    assert!(!w("/dev/disk0") && !w("/dev/ttys"));
    assert!(r("/Users/me/ws/src/main.rs"));
    assert!(!r("/Users/me/Documents/letter.txt"));
    assert!(r("/System/Library/dyld/x") && r("/usr/lib/libSystem.B.dylib"));
    assert!(r("/private/etc/hosts") && r("/Library/Preferences/x"));
    assert!(r(RUN.lib) && r(RUN.exe) && r(RUN.tmp));
    assert!(!r("/opt/tools/bin/other"));
    // The directories above a readable area list their names (the
    // resolver opens a parent), and nothing beneath them is readable.
    assert!(r("/Users/me") && r("/Users") && r("/") && r("/opt/tools/bin"));
    assert!(!r("/Users/me/Documents") && !r("/Users/other"));
    // A read allow-list glob reads as its literal directory, as Landlock.
    let mut s = with_root("/Users/me/ws");
    s.read.allow = vec!["/data/**/*.csv".into()];
    let rules2 = gen(&s);
    assert!(allows(&rules2, "file-read-data", "/data/a/b.txt"));
    assert!(!allows(&rules2, "file-read-data", "/data2"));
    // Metadata is never confined (the loader and realpath walk parents).
    assert!(allows(&rules, "file-read-metadata", "/Users/me/Documents"));
}

#[test]
fn readonly_keeps_only_tmp_devices_and_the_allow_list() {
    let mut s = with_root("/ws");
    s.readonly = true;
    s.write.allow = vec!["/ws/out".into()];
    let rules = gen(&s);
    let w = |p: &str| allows(&rules, "file-write*", p);
    assert!(!w("/ws/a"));
    assert!(w("/ws/out/x"));
    assert!(w(RUN.tmp) && w("/dev/null"));
    // Read-only without a root: everything but those.
    let s = Settings {
        readonly: true,
        ..base()
    };
    let rules = gen(&s);
    assert!(!allows(&rules, "file-write*", "/Users/me/x"));
    assert!(allows(&rules, "file-write*", "/dev/null"));
    assert!(allows(&rules, "file-read-data", "/Users/me/x"));
}

#[test]
fn deny_inside_allow_and_allow_inside_deny() {
    let mut s = with_root("/ws");
    s.write.deny = vec!["/ws/.git".into(), "/ws/**/*.lock".into(), "/ws/a?".into()];
    s.write.allow = vec!["/ws/.git/FETCH_HEAD".into()];
    s.write.deny_always = vec!["/ws/.git/hooks".into()];
    s.read.deny = vec!["/ws/private".into()];
    s.read.allow = vec!["/ws/private/ok".into()];
    s.read.deny_always = vec!["/ws/**/*.pem".into()];
    let rules = gen(&s);
    let w = |p: &str| allows(&rules, "file-write*", p);
    let r = |p: &str| allows(&rules, "file-read-data", p);
    assert!(!w("/ws/.git/config"));
    assert!(w("/ws/.git/FETCH_HEAD"));
    assert!(!w("/ws/.git/hooks/pre-commit"));
    assert!(!w("/ws/a/b/Cargo.lock") && w("/ws/a/b/Cargo.toml"));
    // `?` has no exact form: the library alone refuses it.
    assert!(w("/ws/ab"));
    assert!(!r("/ws/private/x") && r("/ws/private/ok/y"));
    assert!(!r("/ws/k/server.pem") && r("/ws/k/server.pub"));
    // The order: containment, devices, deny, allow, deny_always.
    let ops: Vec<(bool, &str)> = rules.iter().map(|(a, o, _)| (*a, o.as_str())).collect();
    assert_eq!(
        ops,
        [
            (false, "file-write*"),
            (true, "file-write*"),
            (true, "file-write*"),
            (false, "file-write*"),
            (true, "file-write*"),
            (false, "file-write*"),
            (false, "file-read-data"),
            (true, "file-read-data"),
            (false, "file-read-data"),
            (true, "file-read-data"),
            (false, "file-read-data"),
        ]
    );
}

#[test]
fn secrets_and_the_log_are_denied_last() {
    let mut s = with_root("/Users/me");
    s.secrets = true;
    s.secret_paths = vec![
        "/Users/me/.ssh".into(),
        "/Users/me/.cargo/credentials*".into(),
    ];
    s.read.allow = vec!["/Users/me/.ssh/known_hosts".into()];
    s.log.target = LogTarget::File("/Users/me/fsguard.log".into());
    let rules = gen(&s);
    assert!(!allows(
        &rules,
        "file-read-data",
        "/Users/me/.ssh/id_ed25519"
    ));
    // deny_always beats allow, as in the policy.
    assert!(!allows(
        &rules,
        "file-read-data",
        "/Users/me/.ssh/known_hosts"
    ));
    assert!(!allows(
        &rules,
        "file-write*",
        "/Users/me/.ssh/authorized_keys"
    ));
    assert!(!allows(
        &rules,
        "file-read-data",
        "/Users/me/.cargo/credentials.toml"
    ));
    assert!(!allows(&rules, "file-write*", "/Users/me/fsguard.log"));
    assert!(allows(&rules, "file-write*", "/Users/me/fsguard.log.1"));
    // A log on a device is not taken away.
    s.log.target = LogTarget::File("/dev/null".into());
    assert!(allows(&gen(&s), "file-write*", "/dev/null"));
}

#[test]
fn private_symlinks_are_written_as_the_real_path() {
    let mut s = with_root("/tmp/ws");
    s.write.allow = vec!["/var/cache/x".into()];
    s.read.deny_always = vec!["/etc/master.passwd".into(), "/tmpx/y".into()];
    let text = profile(&s, RUN).unwrap();
    assert!(text.contains(r#"(subpath "/private/tmp/ws")"#), "{text}");
    assert!(
        text.contains(r#"(subpath "/private/var/cache/x")"#),
        "{text}"
    );
    assert!(
        text.contains(r#"(subpath "/private/etc/master.passwd")"#),
        "{text}"
    );
    assert!(text.contains(r#"(subpath "/tmpx/y")"#), "{text}");
    assert!(
        !text.contains(r#""/tmp/"#) && !text.contains(r#""/etc/"#),
        "{text}"
    );
}

#[test]
fn inexact_allow_globs_widen_to_their_directory_never_to_root() {
    let mut s = base();
    s.write.allow = vec![
        "/ws/out/[ab]*".into(),
        "/*/scratch".into(),
        "/ws/*.log".into(),
    ];
    let rules = gen(&s);
    let w = |p: &str| allows(&rules, "file-write*", p);
    assert!(w("/ws/out/c")); // widened to /ws/out
    assert!(w("/ws/x.log") && !w("/ws/x.txt"));
    assert!(!w("/home/scratch")); // never widened to /
}

#[test]
fn audit_only_keeps_writes_in_the_root() {
    let mut s = with_root("/ws");
    s.mode = Mode::Audit;
    s.readonly = true;
    s.write.deny = vec!["/ws/x".into()];
    s.read.deny_always = vec!["/ws/k".into()];
    let rules = gen(&s);
    assert!(allows(&rules, "file-write*", "/ws/x"));
    assert!(!allows(&rules, "file-write*", "/elsewhere"));
    assert!(allows(&rules, "file-read-data", "/ws/k"));
    assert!(allows(&rules, "file-read-data", "/elsewhere"));
    // No root, audit: nothing at all.
    let s = Settings {
        mode: Mode::Audit,
        readonly: true,
        ..base()
    };
    assert_eq!(profile(&s, RUN).unwrap(), "(version 1)\n(allow default)\n");
}

/// The backstop never refuses what the library allows: for every setting
/// and path below, a write or read `Policy::decide` allows, the profile
/// allows.
#[test]
fn never_stricter_than_the_library() {
    let mut settings = vec![with_root("/ws"), base()];
    let mut s = with_root("/ws");
    s.readonly = true;
    s.write.allow = vec!["/ws/out".into(), "/data/**/*.csv".into(), "/ws/t?p".into()];
    s.write.deny = vec!["/ws/.git".into(), "/ws/a[bc]".into()];
    s.read.allow = vec!["/data".into(), "/ws/private/ok".into()];
    s.read.deny = vec!["/ws/private".into(), "/ws/**/*.key".into()];
    s.read.deny_always = vec!["/ws/k?y".into()];
    s.secrets = true;
    s.secret_paths = vec!["/home/me/.ssh".into()];
    s.system_paths = vec!["/opt/homebrew".into()];
    s.tmpdir = Some(RUN.tmp.into());
    settings.push(s.clone());
    s.root = None;
    settings.push(s.clone());
    s.readonly = false;
    settings.push(s);
    let paths = [
        "/ws",
        "/ws/a",
        "/ws/ab",
        "/ws/out/x",
        "/ws/tmp",
        "/ws/.git/x",
        "/ws/private/x",
        "/ws/private/ok/y",
        "/ws/d/x.key",
        "/ws/key",
        "/data/a/b.csv",
        "/data/x",
        "/home/me/.ssh/id",
        "/home/me/x",
        "/opt/homebrew/bin/python3",
        "/usr/lib/x",
        "/dev/null",
        "/dev/ttys001",
        RUN.tmp,
        RUN.lib,
        RUN.exe,
    ];
    for s in &settings {
        let policy = Policy::new(s.clone()).unwrap();
        let rules = gen(s);
        for p in paths {
            for (access, op) in [
                (Access::Write, "file-write*"),
                (Access::Read, "file-read-data"),
            ] {
                if policy.decide(access, p.as_bytes()).allowed {
                    assert!(allows(&rules, op, p), "{op} {p} under {s:?}");
                }
            }
        }
    }
}

#[test]
fn covered_paths_are_left_out() {
    let mut s = with_root("/Users/me/ws");
    s.system_paths = vec!["/opt/homebrew".into(), "/opt/homebrew/Cellar".into()];
    let text = profile(&s, RUN).unwrap();
    let line = text
        .lines()
        .find(|l| l.starts_with("(allow file-read-data (subpath \"/Users/me/ws\")"))
        .expect(&text);
    assert!(line.contains(r#"(subpath "/opt/homebrew")"#), "{line}");
    for gone in [
        r#"(subpath "/opt/homebrew/Cellar")"#,
        r#"(literal "/opt/homebrew")"#,
        r#"(subpath "/dev/null")"#,
        r#"(literal "/dev")"#,
    ] {
        assert!(!line.contains(gone), "{gone} in {line}");
    }
    assert!(line.contains(r#"(literal "/opt")"#), "{line}");
    // Each filter once.
    assert_eq!(line.matches(r#"(literal "/")"#).count(), 1, "{line}");
}
