//! The policy language under the real library: deny-inside-allow, relative
//! and slash-less patterns, rename/link protection, audit mode, log files,
//! JSON traces, the errno choice, every CLI flag and its layering, and a
//! policy frozen at load.

mod common;
mod policy_support;
use policy_support::*;

use std::path::Path;
use std::process::Command;

/// A Python probe: each argument is `r:PATH` (open for reading), `w:PATH`
/// (open for writing, creating), `mv:A:B` (rename) or `ln:A:B` (hard link);
/// prints one `OK` or errno name per argument.
const PROBE: &str = r#"
import errno, os, sys
for op in sys.argv[1:]:
    kind, _, rest = op.partition(":")
    try:
        if kind == "r":
            open(rest).close()
        elif kind == "w":
            open(rest, "a").close()
        elif kind == "mv":
            os.rename(*rest.split(":"))
        elif kind == "ln":
            os.link(*rest.split(":"))
        print("OK")
    except OSError as e:
        print(errno.errorcode[e.errno])
"#;

fn probe(mut c: Command, dir: &Path, ops: &[&str]) -> (Vec<String>, Out) {
    c.current_dir(dir).arg("-c").arg(PROBE).args(ops);
    let o = run(&mut c);
    let got: Vec<String> = o.stdout.lines().map(str::to_string).collect();
    assert_eq!(got.len(), ops.len(), "probe output: {}", o.show());
    (got, o)
}

/// Asserts each op's result; `want` pairs an op with `OK` or an errno name.
fn expect(c: Command, dir: &Path, want: &[(&str, &str)]) -> Out {
    let ops: Vec<&str> = want.iter().map(|(op, _)| *op).collect();
    let (got, o) = probe(c, dir, &ops);
    let mut bad = Vec::new();
    for ((op, w), g) in want.iter().zip(&got) {
        if w != g {
            bad.push(format!("{op}: want {w}, got {g}"));
        }
    }
    assert!(bad.is_empty(), "{}\n{}", bad.join("\n"), o.show());
    o
}

/// The workspace used by most tests:
/// ws/{a.txt, .env, .env.local, .env.example, k.pem, sub/.env, sub/deep/x.pem, sub/notes}
fn workspace(d: &TempDir) {
    for f in [
        "ws/a.txt",
        "ws/.env",
        "ws/.env.local",
        "ws/.env.example",
        "ws/k.pem",
        "ws/sub/.env",
        "ws/sub/.env.example",
        "ws/sub/deep/x.pem",
        "ws/sub/notes",
        "outside.txt",
        "outside.pem",
    ] {
        d.file(f, "content\n");
    }
}

// With a root, a config's relative patterns are anchored at the root.
const AGENT: &str = r#"
root = "ws"
[read]
deny = ["**/.env*"]
allow = ["**/.env.example", "sub"]
deny_always = ["*.pem"]
"#;

#[test]
fn deny_inside_allow_and_deny_always() {
    let d = TempDir::new("dia");
    workspace(&d);
    let cfg = d.file("policy.toml", AGENT);
    let want = [
        ("r:ws/a.txt", "OK"),
        ("r:ws/.env", "EACCES"),
        ("r:ws/.env.local", "EACCES"),
        ("r:ws/.env.example", "OK"),
        // allow ws/sub beats deny **/.env* (step 2 before step 3)...
        ("r:ws/sub/.env", "OK"),
        // ...but not deny_always *.pem (step 1), at any depth.
        ("r:ws/k.pem", "EACCES"),
        ("r:ws/sub/deep/x.pem", "EACCES"),
        ("r:outside.txt", "EACCES"),
        // Writes: the read rules do not restrict them; the root does.
        ("w:ws/.env", "OK"),
        ("w:outside.txt", "EACCES"),
    ];
    let o = expect(
        guarded("python3", &[("FSGUARD_CONFIG", cfg.to_str().unwrap())]),
        d.path(),
        &want,
    );
    let dd = d.path().display();
    let blocked = lines(&o.stderr, "blocked");
    assert_eq!(
        blocked,
        vec![
            format!("[fsguard] blocked open read path={dd}/ws/.env rule=read.deny:\"{dd}/ws/**/.env*\" hint=\"--allow-read {dd}/ws/.env\""),
            format!("[fsguard] blocked open read path={dd}/ws/.env.local rule=read.deny:\"{dd}/ws/**/.env*\" hint=\"--allow-read {dd}/ws/.env.local\""),
            format!("[fsguard] blocked open read path={dd}/ws/k.pem rule=read.deny_always:\"{dd}/ws/**/*.pem\""),
            format!("[fsguard] blocked open read path={dd}/ws/sub/deep/x.pem rule=read.deny_always:\"{dd}/ws/**/*.pem\""),
            format!("[fsguard] blocked open read path={dd}/outside.txt rule=root hint=\"--allow-read {dd}/outside.txt\""),
            format!("[fsguard] blocked open write path={dd}/outside.txt rule=root hint=\"--allow-write {dd}/outside.txt\""),
        ],
        "{}",
        o.show()
    );
    // The same verdicts from `fsguard explain`.
    for (op, w) in want {
        let (acc, path) = op.split_once(':').unwrap();
        let acc = if acc == "r" { "read" } else { "write" };
        let e = run(
            fsguard(&["explain", "--config", cfg.to_str().unwrap(), acc, path])
                .current_dir(d.path()),
        );
        let verdict = if w == "OK" { "allow " } else { "deny " };
        // explain exits 0 for allow, 1 for deny.
        assert_eq!(e.code, Some(if w == "OK" { 0 } else { 1 }), "{}", e.show());
        assert!(e.stdout.starts_with(verdict), "{op}: {}", e.show());
    }
}

#[test]
fn relative_and_slashless_patterns_are_against_the_config_dir() {
    let d = TempDir::new("rel");
    workspace(&d);
    d.file("proj/a.pem", "k\n");
    d.file("proj/x/y/b.pem", "k\n");
    d.file("proj/x/secret/s", "k\n");
    d.file("proj/x/secretive", "k\n");
    let cfg = d.file(
        "proj/policy.toml",
        "[read]\ndeny_always = [\"*.pem\"]\ndeny = [\"x/secret\", \"~/private\"]\n",
    );
    d.file("home/private/p", "k\n");
    d.file("home/privateer", "k\n");
    // Run from another directory: config-relative, not cwd-relative.
    expect(
        guarded(
            "python3",
            &[
                ("FSGUARD_CONFIG", cfg.to_str().unwrap()),
                ("HOME", d.join("home").to_str().unwrap()),
            ],
        ),
        &d.join("ws"),
        &[
            ("r:../proj/a.pem", "EACCES"),
            ("r:../proj/x/y/b.pem", "EACCES"),
            // Only below the config's directory:
            ("r:../outside.pem", "OK"),
            ("r:k.pem", "OK"),
            // A plain directory covers its subtree, on component boundaries.
            ("r:../proj/x/secret/s", "EACCES"),
            ("r:../proj/x/secretive", "OK"),
            // `~` is $HOME at load.
            ("r:../home/private/p", "EACCES"),
            ("r:../home/privateer", "OK"),
        ],
    );
    // Flags and variables are against the cwd instead.
    expect(
        {
            let mut c = fsguard(&[
                "run",
                "--deny-read",
                "*.pem",
                "--deny-read",
                "sub",
                "--",
                "python3",
            ]);
            c.env("PYTHONDONTWRITEBYTECODE", "1");
            c
        },
        &d.join("ws"),
        &[
            ("r:k.pem", "EACCES"),
            ("r:sub/deep/x.pem", "EACCES"),
            ("r:sub/notes", "EACCES"),
            ("r:../proj/a.pem", "OK"),
            ("r:a.txt", "OK"),
        ],
    );
}

#[test]
fn protected_files_cannot_be_renamed_or_linked() {
    let d = TempDir::new("moves");
    workspace(&d);
    d.file("home/.ssh/id_ed25519", "key\n");
    let cfg = d.file("policy.toml", AGENT);
    let home = d.join("home");
    let vars = [
        ("FSGUARD_CONFIG", cfg.to_str().unwrap()),
        ("HOME", home.to_str().unwrap()),
    ];
    let o = expect(
        guarded("python3", &vars),
        d.path(),
        &[
            ("mv:ws/k.pem:ws/k.txt", "EACCES"),
            ("ln:ws/k.pem:ws/k.txt", "EACCES"),
            ("mv:ws/sub/deep/x.pem:ws/sub/deep/x", "EACCES"),
            // A credential file (secrets preset): no move even inside the root.
            ("mv:home/.ssh/id_ed25519:ws/id", "EACCES"),
            // An ordinary file moves.
            ("mv:ws/a.txt:ws/b.txt", "OK"),
            ("ln:ws/b.txt:ws/c.txt", "OK"),
        ],
    );
    let dd = d.path().display();
    let b = lines(&o.stderr, "blocked");
    assert_eq!(b.len(), 4, "{}", o.show());
    assert_eq!(
        b[0],
        format!("[fsguard] blocked rename write path={dd}/ws/k.pem dest={dd}/ws/k.txt rule=read.deny_always(move):\"{dd}/ws/**/*.pem\"")
    );
    assert!(
        b[1].starts_with("[fsguard] blocked link write "),
        "{}",
        b[1]
    );
    assert!(
        b[3].ends_with(&format!("rule=secrets(move):\"{dd}/home/.ssh\"")),
        "{}",
        b[3]
    );
    for f in ["ws/k.pem", "ws/sub/deep/x.pem", "home/.ssh/id_ed25519"] {
        assert!(d.join(f).exists(), "{f} moved");
    }
    assert!(!d.join("ws/k.txt").exists());
    assert!(!d.join("ws/id").exists());
    // coreutils (renameat2, linkat) are refused the same way.
    for (prog, args) in [
        ("mv", ["ws/k.pem", "ws/m.txt"]),
        ("ln", ["ws/k.pem", "ws/l.txt"]),
    ] {
        let mut c = guarded(prog, &vars);
        let o = run(c.args(args).current_dir(d.path()));
        assert_ne!(o.code, Some(0), "{prog}: {}", o.show());
        assert!(
            o.stderr.contains("rule=read.deny_always(move):"),
            "{prog}: {}",
            o.show()
        );
    }
    assert!(d.join("ws/k.pem").exists());
    assert!(!d.join("ws/m.txt").exists() && !d.join("ws/l.txt").exists());
}

/// Parses JSON lines with Python's json module; returns them re-dumped with
/// sorted keys, one per line, for the test to inspect.
fn parse_json_lines(text: &str) -> Vec<serde_like::Obj> {
    let mut c = cmd("python3");
    c.args([
        "-c",
        "import json,sys\nfor l in sys.stdin.read().splitlines():\n  o=json.loads(l)\n  print('\\t'.join(f'{k}={o[k]}' for k in sorted(o)))",
    ]);
    c.stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped());
    let mut child = c.spawn().unwrap();
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
    let o = child.wait_with_output().unwrap();
    assert!(o.status.success(), "json.loads failed on:\n{text}");
    String::from_utf8(o.stdout)
        .unwrap()
        .lines()
        .map(serde_like::Obj::parse)
        .collect()
}

mod serde_like {
    use std::collections::BTreeMap;
    /// One parsed JSON object, values as Python printed them.
    #[derive(Debug)]
    pub struct Obj(pub BTreeMap<String, String>);
    impl Obj {
        pub fn parse(l: &str) -> Obj {
            Obj(l
                .split('\t')
                .map(|kv| {
                    let (k, v) = kv.split_once('=').unwrap();
                    (k.to_string(), v.to_string())
                })
                .collect())
        }
        pub fn get(&self, k: &str) -> &str {
            self.0.get(k).map(String::as_str).unwrap_or("<missing>")
        }
    }
}

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
    assert!(
        o.stderr.starts_with("fsguard: 1 access blocked")
            && o.stderr.lines().count() == 2
            && o.stderr.lines().nth(1) == Some(hint.as_str()),
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
    assert!(
        o.stderr.starts_with("fsguard: 1 access blocked")
            && o.stderr.lines().count() == 2
            && o.stderr.lines().nth(1) == Some(hint.as_str()),
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

#[test]
fn policy_is_frozen_at_load() {
    let d = TempDir::new("frozen");
    workspace(&d);
    let cfg = d.file("policy.toml", "[write]\ndeny = [\"ws/locked\"]\n");
    // The script loosens its own config and environment, then tries, and
    // has a child (same environment, changed config file) try too.
    let script = r##"
import os, subprocess, sys
open("policy.toml", "w").write("# loosened\n")
os.environ["FSGUARD_READONLY"] = "0"
os.environ["FSGUARD_CONFIG"] = "/nonexistent"
os.environ["FSGUARD_MODE"] = "audit"
def attempt(p):
    try:
        open(p, "w").close(); return "OK"
    except OSError as e:
        return str(e.errno)
print(attempt("ws/locked"))
sys.stdout.flush()
subprocess.run([sys.executable, "-c", "open('ws/locked', 'w')"])
"##;
    let mut c = guarded("python3", &[("FSGUARD_CONFIG", cfg.to_str().unwrap())]);
    let o = run(c.args(["-c", script]).current_dir(d.path()));
    assert_eq!(o.stdout, "13\n", "{}", o.show());
    assert_eq!(lines(&o.stderr, "blocked").len(), 2, "{}", o.show());
    assert!(!d.join("ws/locked").exists());
    assert_eq!(std::fs::read_to_string(&cfg).unwrap(), "# loosened\n");

    // FSGUARD_READONLY=1 at start; setting it to 0 later changes nothing,
    // in this process or in children spawned with the changed environment.
    let script = r#"
import os, subprocess, sys
os.environ["FSGUARD_READONLY"] = "0"
try:
    open("ws/new", "w"); print("OK")
except OSError as e:
    print(e.errno)
sys.stdout.flush()
print(subprocess.run(["/bin/sh", "-c", "echo > ws/new2"]).returncode)
"#;
    let mut c = guarded("python3", &[("FSGUARD_READONLY", "1")]);
    let o = run(c.args(["-c", script]).current_dir(d.path()));
    assert_eq!(o.stdout.lines().next(), Some("13"), "{}", o.show());
    assert_ne!(o.stdout.lines().nth(1), Some("0"), "{}", o.show());
    assert!(!d.join("ws/new").exists() && !d.join("ws/new2").exists());
}

#[test]
fn the_most_specific_rule_is_named_whatever_the_list_size() {
    // Several rules of one list cover the path: the trace and `explain`
    // name the one whose literal directory is deepest, whether the list is
    // short (scanned) or long (looked up), and whatever its order.
    let d = TempDir::new("label");
    d.file("ws/a/b/f", "secret\n");
    d.file("ws/a/b/f.key", "secret\n");
    d.file("ws/a/g", "secret\n");
    let dd = d.path().display();
    let filler: Vec<String> = (0..7).map(|i| format!("\"ws/c{i}\"")).collect();
    for rules in [
        vec!["\"ws/a\"", "\"ws/a/b\""],
        vec!["\"ws/a/b\"", "\"ws/a\""],
        vec!["\"ws/a\"", "\"ws/a/b\"", "\"ws/**/*.key\""],
        vec!["\"ws/**/*.key\"", "\"ws/a/b\"", "\"ws/a\""],
    ] {
        for plain in [2, 9] {
            // 2 plain rules are scanned; 9 (7 more that cover nothing here)
            // are past the scan limit and looked up by ancestor.
            let mut list: Vec<String> = rules.iter().map(|r| r.to_string()).collect();
            list.extend(filler.iter().take(plain - 2).cloned());
            let n = list.len();
            let cfg = d.file(
                "policy.toml",
                &format!("[read]\ndeny = [{}]\n", list.join(", ")),
            );
            for (path, rule) in [
                ("ws/a/b/f", format!("{dd}/ws/a/b")),
                ("ws/a/b/f.key", format!("{dd}/ws/a/b")),
                ("ws/a/g", format!("{dd}/ws/a")),
            ] {
                let e = run(
                    fsguard(&["explain", "--config", cfg.to_str().unwrap(), "read", path])
                        .current_dir(d.path()),
                );
                assert_eq!(e.code, Some(1), "{}", e.show());
                let want = format!("deny read {dd}/{path} rule=read.deny:\"{rule}\"");
                assert!(
                    e.stdout.starts_with(&want),
                    "{n} rules {list:?}: want {want:?}\n{}",
                    e.show()
                );
            }
            // The library's trace line names the same rule.
            let o = expect(
                guarded("python3", &[("FSGUARD_CONFIG", cfg.to_str().unwrap())]),
                d.path(),
                &[("r:ws/a/b/f", "EACCES"), ("r:ws/a/g", "EACCES")],
            );
            let blocked = lines(&o.stderr, "blocked");
            assert_eq!(blocked.len(), 2, "{}", o.show());
            assert!(
                blocked[0].starts_with(&format!(
                    "[fsguard] blocked open read path={dd}/ws/a/b/f rule=read.deny:\"{dd}/ws/a/b\""
                )),
                "{n} rules {list:?}: {}",
                o.show()
            );
            assert!(
                blocked[1].starts_with(&format!(
                    "[fsguard] blocked open read path={dd}/ws/a/g rule=read.deny:\"{dd}/ws/a\""
                )),
                "{n} rules {list:?}: {}",
                o.show()
            );
            assert_eq!(
                std::fs::read_to_string(d.join("ws/a/b/f")).unwrap(),
                "secret\n"
            );
        }
    }
}
