//! Rule semantics: deny inside allow, relative patterns, rename/link protection, frozen policy, the rule named.

use super::*;

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
            // A deny the policy's author wrote carries no hint to lift it
            // (issue 29 item 2).
            format!("[fsguard] blocked open read path={dd}/ws/.env rule=read.deny:\"{dd}/ws/**/.env*\""),
            format!("[fsguard] blocked open read path={dd}/ws/.env.local rule=read.deny:\"{dd}/ws/**/.env*\""),
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
