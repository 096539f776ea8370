//! Per-project policy: `fsguard run` with no policy option uses the nearest
//! `.fsguard.toml` from the working directory up to the repository top,
//! says so, layers the command line's options over it, skips it with
//! `--no-config`, and refuses one that would reach
//! beyond its own directory.

#![cfg(target_os = "linux")]

mod common;

use common::*;
use std::path::{Path, PathBuf};

/// `outer/` holds a `.fsguard.toml` that must never be found from inside
/// `outer/repo` (a repository: it has `.git`); `outer/repo/sub` is where the
/// commands run; `outside/` is beyond every root.
struct Tree {
    _td: TempDir,
    outer: PathBuf,
    repo: PathBuf,
    sub: PathBuf,
    outside: PathBuf,
}

fn tree() -> Tree {
    let td = TempDir::new("discover");
    let outer = td.join("outer");
    let repo = outer.join("repo");
    let sub = repo.join("sub");
    let outside = td.join("outside");
    for d in [&outer, &repo, &repo.join(".git"), &sub, &outside] {
        mkdir(d);
    }
    write_file(&repo.join("app.lock"), "lock\n", 0o644);
    let c = |p: &Path| p.canonicalize().unwrap();
    Tree {
        outer: c(&outer),
        repo: c(&repo),
        sub: c(&sub),
        outside: c(&outside),
        _td: td,
    }
}

const PROJECT: &str = "root = \".\"\n[write]\ndeny = [\"*.lock\"]\n";

/// Writes inside the repository, to a denied file, and outside it.
fn writes(t: &Tree) -> String {
    format!(
        "echo x > ../made.txt && echo made; echo x > ../app.lock || echo lock-refused; \
         echo x > {}/f || echo outside-refused",
        t.outside.display()
    )
}

fn fsguard(t: &Tree, opts: &[&str], script: &str) -> Out {
    let mut c = bare_cmd(cli());
    c.arg("run")
        .args(opts)
        .args(["--", "sh", "-c", script])
        .current_dir(&t.sub);
    run(&mut c)
}

#[test]
fn found_from_a_subdirectory_and_named() {
    let t = tree();
    write_file(&t.repo.join(".fsguard.toml"), PROJECT, 0o644);
    let before = snapshot(&t.outside);
    let o = fsguard(&t, &[], &writes(&t));
    assert_eq!(o.code(), Some(0), "{}", o.describe());
    assert_eq!(
        o.stdout.split_whitespace().collect::<Vec<_>>(),
        ["made", "lock-refused", "outside-refused"],
        "{}",
        o.describe()
    );
    let cfg = t.repo.join(".fsguard.toml");
    assert!(
        o.stderr.contains(&format!(
            "fsguard: policy: {} (discovered; --no-config skips it)",
            cfg.display()
        )),
        "{}",
        o.describe()
    );
    assert!(
        o.stderr
            .contains(&format!("fsguard: policy was {}", cfg.display())),
        "the summary names the file\n{}",
        o.describe()
    );
    let rules: Vec<_> = o
        .blocked()
        .iter()
        .map(|b| b.field("rule").unwrap_or("").to_string())
        .collect();
    assert_eq!(
        rules,
        [
            format!("write.deny:{}/**/*.lock", t.repo.display()),
            "root".to_string()
        ],
        "{}",
        o.describe()
    );
    assert_eq!(
        std::fs::read_to_string(t.repo.join("app.lock")).unwrap(),
        "lock\n"
    );
    assert_eq!(snapshot_diff(&before, &snapshot(&t.outside)), None);
    // `check` shows what `run` would use.
    let mut c = bare_cmd(cli());
    let o = run(c.arg("check").current_dir(&t.sub));
    assert_eq!(o.code(), Some(0), "{}", o.describe());
    assert!(
        o.stdout
            .starts_with(&format!("# config: {} (discovered", cfg.display())),
        "{}",
        o.describe()
    );
    assert!(
        o.stdout
            .contains(&format!("root = \"{}\"", t.repo.display())),
        "{}",
        o.describe()
    );
}

#[test]
fn search_stops_at_the_repository_top() {
    let t = tree();
    // Above the repository: never found from inside it.
    write_file(&t.outer.join(".fsguard.toml"), PROJECT, 0o644);
    let before = snapshot(&t.repo);
    let o = fsguard(&t, &[], "echo x > ../made.txt || echo refused");
    assert_eq!(o.stdout.trim(), "refused", "{}", o.describe());
    assert!(!o.stderr.contains("discovered"), "{}", o.describe());
    let b = o.blocked();
    assert_eq!(b.len(), 1, "{}", o.describe());
    assert_eq!(
        b[0].field("rule"),
        Some("readonly"),
        "no config: read-only\n{}",
        o.describe()
    );
    assert_eq!(snapshot_diff(&before, &snapshot(&t.repo)), None);
}

#[test]
fn no_config_and_policy_variables_skip_discovery() {
    let t = tree();
    write_file(&t.repo.join(".fsguard.toml"), PROJECT, 0o644);
    // --no-config: the built-in default, read-only.
    let o = fsguard(&t, &["--no-config"], "echo x > ../made.txt || echo refused");
    assert_eq!(o.stdout.trim(), "refused", "{}", o.describe());
    assert!(!o.stderr.contains("discovered"), "{}", o.describe());
    assert_eq!(o.blocked()[0].field("rule"), Some("readonly"));
    // A policy option layers over the file (issue 29: following a hint
    // must not drop the project's policy); the file is still named.
    let o = fsguard(
        &t,
        &["--root", "."],
        "echo x > ../made.txt || echo refused; echo x > here.txt && echo here",
    );
    assert_eq!(
        o.stdout.split_whitespace().collect::<Vec<_>>(),
        ["refused", "here"],
        "{}",
        o.describe()
    );
    assert!(o.stderr.contains("discovered"), "{}", o.describe());
    assert!(!t.repo.join("made.txt").exists());
    // So does FSGUARD_ROOT.
    let mut c = bare_cmd(cli());
    c.env("FSGUARD_ROOT", &t.sub)
        .args([
            "run",
            "--",
            "sh",
            "-c",
            "echo x > ../made.txt || echo refused",
        ])
        .current_dir(&t.sub);
    let o = run(&mut c);
    assert_eq!(o.stdout.trim(), "refused", "{}", o.describe());
    assert!(!o.stderr.contains("discovered"), "{}", o.describe());
    // Non-policy options still layer over the file.
    let o = fsguard(&t, &["--log-format", "json"], &writes(&t));
    assert!(o.stderr.contains("discovered"), "{}", o.describe());
    assert!(
        o.stderr.contains("{\"event\":\"blocked\""),
        "{}",
        o.describe()
    );
}

#[test]
fn a_discovered_config_cannot_loosen_the_policy() {
    let t = tree();
    let cfg = t.repo.join(".fsguard.toml");
    for (text, why) in [
        ("root = \"..\"\n", "is outside"),
        ("root = \".\"\nsecrets = false\n", "secrets = false"),
        ("root = \".\"\nmode = \"audit\"\n", "mode = \"audit\""),
        ("[write]\ndeny = [\"*.lock\"]\n", "writes would go anywhere"),
        ("root = \".\"\n[write]\nallow = [\"/**\"]\n", "write.allow"),
        ("root = \".\"\n[log]\ntarget = \"off\"\n", "[log] target"),
    ] {
        write_file(&cfg, text, 0o644);
        let o = fsguard(&t, &[], "echo ran");
        assert_eq!(o.code(), Some(125), "{text}\n{}", o.describe());
        assert_eq!(o.stdout, "", "the command must not run\n{}", o.describe());
        assert!(
            o.stderr.contains(why)
                && o.stderr.contains("--no-config")
                && o.stderr.contains(&format!("--config {}", cfg.display())),
            "{text}\n{}",
            o.describe()
        );
    }
    // Named explicitly, the same file is the user's choice.
    write_file(&cfg, "root = \".\"\nsecrets = false\n", 0o644);
    let o = fsguard(
        &t,
        &["--config", cfg.to_str().unwrap()],
        "echo x > ../made.txt && echo made",
    );
    assert_eq!(o.code(), Some(0), "{}", o.describe());
    assert_eq!(o.stdout.trim(), "made", "{}", o.describe());
}
