//! The policy a user wrote is the policy in force, and `fsguard run` says
//! what it is: options layer over a discovered `.fsguard.toml`, a file not
//! used is named, no hint offers to lift a refusal the policy's author made
//! on purpose, argument slips are named, a run with no policy says it is
//! read-only, and a static program is named as unseen.

#![cfg(target_os = "linux")]

mod common;

use common::*;
use std::path::{Path, PathBuf};

/// A repository (`.git`) holding a `.fsguard.toml` that confines to it and
/// denies `.env` files, a `.env`, and `outside/` beyond it.
struct Repo {
    _td: TempDir,
    repo: PathBuf,
    outside: PathBuf,
}

const PROJECT: &str = "root = \".\"\n[read]\ndeny = [\"**/.env*\"]\ndeny_always = [\"*.pem\"]\n";

fn repo() -> Repo {
    let td = TempDir::new("in-force");
    let repo = td.join("repo");
    let outside = td.join("outside");
    for d in [&repo, &repo.join(".git"), &outside] {
        mkdir(d);
    }
    write_file(&repo.join(".env"), "API_KEY=hunter2\n", 0o644);
    write_file(&repo.join("deploy.pem"), "KEY\n", 0o644);
    write_file(&repo.join(".fsguard.toml"), PROJECT, 0o644);
    let c = |p: &Path| p.canonicalize().unwrap();
    Repo {
        repo: c(&repo),
        outside: c(&outside),
        _td: td,
    }
}

fn fsguard(dir: &Path, opts: &[&str], cmd: &[&str]) -> Out {
    let mut c = bare_cmd(cli());
    c.arg("run").args(opts).arg("--").args(cmd).current_dir(dir);
    run(&mut c)
}

/// Reads `.env` and `deploy.pem`, writes outside the repository.
fn script(r: &Repo) -> String {
    format!(
        "cat .env || echo env-refused; cat deploy.pem || echo pem-refused; \
         echo x > {0}/f && echo wrote-outside || echo outside-refused",
        r.outside.display()
    )
}

#[test]
fn a_flag_layers_over_the_discovered_config() {
    let r = repo();
    let cfg = r.repo.join(".fsguard.toml");
    let o = fsguard(&r.repo, &[], &["sh", "-c", &script(&r)]);
    assert_eq!(
        o.stdout.split_whitespace().collect::<Vec<_>>(),
        ["env-refused", "pem-refused", "outside-refused"],
        "{}",
        o.describe()
    );
    // What the summary offers, given with the same (no) options: the
    // discovered policy stays in force, the one access is added.
    let allow = format!("--allow-write={}", r.outside.display());
    assert!(
        o.stderr.contains(&format!(
            "fsguard: to allow: --allow-write {}/f",
            r.outside.display()
        )),
        "{}",
        o.describe()
    );
    let o = fsguard(&r.repo, &[&allow], &["sh", "-c", &script(&r)]);
    assert_eq!(
        o.stdout.split_whitespace().collect::<Vec<_>>(),
        ["env-refused", "pem-refused", "wrote-outside"],
        "{}",
        o.describe()
    );
    assert!(!o.stdout.contains("hunter2"), "{}", o.describe());
    assert!(
        o.stderr
            .contains(&format!("fsguard: policy: {} (discovered", cfg.display())),
        "{}",
        o.describe()
    );
    // `--root` and `--readonly` layer too.
    let o = fsguard(&r.repo, &["--root", "."], &["cat", ".env"]);
    assert_ne!(o.code(), Some(0), "{}", o.describe());
    assert!(!o.stdout.contains("hunter2"), "{}", o.describe());
    // `check` shows the layered policy.
    let mut c = bare_cmd(cli());
    let o = run(c.args(["check", &allow]).current_dir(&r.repo));
    assert_eq!(o.code(), Some(0), "{}", o.describe());
    assert!(o.stdout.contains("**/.env*"), "{}", o.describe());
    assert!(
        o.stdout.contains(&r.outside.display().to_string()),
        "{}",
        o.describe()
    );
}

#[test]
fn a_discovered_config_not_used_is_named() {
    let r = repo();
    let cfg = r.repo.join(".fsguard.toml");
    let other = r.outside.join("other.toml");
    write_file(&other, "readonly = true\n", 0o644);
    let note = |why: &str| format!("fsguard: note: {} is not used ({why})", cfg.display());
    let o = fsguard(&r.repo, &["--no-config"], &["true"]);
    assert!(o.stderr.contains(&note("--no-config")), "{}", o.describe());
    let o = fsguard(
        &r.repo,
        &["--config", other.to_str().unwrap()],
        &["cat", ".env"],
    );
    assert!(
        o.stderr.contains(&note("--config names the policy")),
        "{}",
        o.describe()
    );
    let mut c = bare_cmd(cli());
    c.env("FSGUARD_ROOT", &r.repo)
        .args(["run", "--", "true"])
        .current_dir(&r.repo);
    let o = run(&mut c);
    assert!(
        o.stderr.contains(&note("FSGUARD_ROOT names the policy")),
        "{}",
        o.describe()
    );
    // `check` says so on stderr, its stdout stays the policy.
    let mut c = bare_cmd(cli());
    let o = run(c.args(["check", "--no-config"]).current_dir(&r.repo));
    assert!(o.stderr.contains(&note("--no-config")), "{}", o.describe());
    assert!(!o.stdout.contains("note"), "{}", o.describe());
}

#[test]
fn no_hint_offers_to_lift_a_refusal_made_on_purpose() {
    let r = repo();
    let o = fsguard(
        &r.repo,
        &["--log-format", "json"],
        &["sh", "-c", &script(&r)],
    );
    assert!(!o.stdout.contains("hunter2"), "{}", o.describe());
    let env = r.repo.join(".env").display().to_string();
    let pem = r.repo.join("deploy.pem").display().to_string();
    for line in o.stderr.lines() {
        if line.contains(&env) || line.contains(&pem) {
            assert!(
                !line.contains("\"hint\"") && !line.contains("to allow"),
                "a hint to lift a deny: {line}\n{}",
                o.describe()
            );
        }
    }
    for (rule, path) in [
        (format!("read.deny:\"{}/**/.env*\"", r.repo.display()), &env),
        (
            format!("read.deny_always:\"{}/**/*.pem\"", r.repo.display()),
            &pem,
        ),
    ] {
        assert!(
            o.stderr.contains(&format!(
                "fsguard: refused on purpose by {rule} (fixed by the policy's author); \
                 first: read {path}"
            )),
            "{rule}\n{}",
            o.describe()
        );
    }
    // The boundary refusal keeps its hint, in the trace line too.
    assert!(
        o.stderr.contains(&format!(
            "\"hint\":\"--allow-write {}/f\"",
            r.outside.display()
        )),
        "{}",
        o.describe()
    );
    // `explain` agrees.
    let mut c = bare_cmd(cli());
    let o = run(c.args(["explain", "read", ".env"]).current_dir(&r.repo));
    assert_eq!(o.code(), Some(1), "{}", o.describe());
    assert!(!o.stdout.contains("hint"), "{}", o.describe());
}

#[test]
fn an_option_value_taken_as_the_command_is_named() {
    let td = TempDir::new("in-force-trap");
    mkdir(&td.join("ws"));
    let o = fsguard(td.path(), &["--readonly", "./ws"], &["ls"]);
    assert_eq!(o.code(), Some(126), "{}", o.describe());
    assert!(
        o.stderr
            .contains("./ws: Permission denied (os error 13); did you mean `--readonly=./ws`?"),
        "{}",
        o.describe()
    );
    let o = fsguard(td.path(), &["--fail-on-block", "5"], &["true"]);
    assert_eq!(o.code(), Some(127), "{}", o.describe());
    assert!(
        o.stderr
            .contains("5: command not found; did you mean `--fail-on-block=5`?"),
        "{}",
        o.describe()
    );
    // Spelt as meant, it runs.
    let o = fsguard(td.path(), &["--readonly=./ws"], &["ls", "ws"]);
    assert_eq!(o.code(), Some(0), "{}", o.describe());
}

#[test]
fn a_run_with_no_policy_says_it_is_read_only() {
    let td = TempDir::new("in-force-none");
    let f = td.join("f");
    let o = fsguard(
        td.path(),
        &["--no-config"],
        &["sh", "-c", &format!("echo x > {}", f.display())],
    );
    assert!(!f.exists(), "{}", o.describe());
    assert!(
        o.stderr.contains("fsguard: no policy given (") && o.stderr.contains("): read-only;"),
        "{}",
        o.describe()
    );
    let o = fsguard(td.path(), &["--root", "."], &["true"]);
    assert!(!o.stderr.contains("no policy given"), "{}", o.describe());
}

#[test]
fn fail_on_block_from_the_config_and_a_discovered_file() {
    let r = repo();
    let cfg = r.repo.join(".fsguard.toml");
    write_file(&cfg, &format!("fail_on_block = 4\n{PROJECT}"), 0o644);
    // Discovered: it only tightens the status, so it is accepted.
    let o = fsguard(&r.repo, &[], &["cat", ".env"]);
    assert_eq!(o.code(), Some(4), "{}", o.describe());
    assert!(o.stderr.contains("(discovered"), "{}", o.describe());
    // The flag wins.
    let o = fsguard(&r.repo, &["--fail-on-block=9"], &["cat", ".env"]);
    assert_eq!(o.code(), Some(9), "{}", o.describe());
    // Nothing blocked: the command's own status.
    let o = fsguard(&r.repo, &[], &["true"]);
    assert_eq!(o.code(), Some(0), "{}", o.describe());
    // `true` is 3; `check` shows it.
    write_file(&cfg, &format!("fail_on_block = true\n{PROJECT}"), 0o644);
    let o = fsguard(&r.repo, &[], &["sh", "-c", "cat .env; exit 0"]);
    assert_eq!(o.code(), Some(3), "{}", o.describe());
    let mut c = bare_cmd(cli());
    let o = run(c.arg("check").current_dir(&r.repo));
    assert!(
        o.stdout.contains("\nfail_on_block = 3\n"),
        "{}",
        o.describe()
    );
}

#[test]
fn a_static_program_is_named_as_unseen() {
    let td = TempDir::new("in-force-static");
    mkdir(&td.join("ws"));
    let w = c_program("static_writer", &["-static"]);
    let out = td.join("out");
    let o = fsguard(
        &td.join("ws"),
        &["--root", ".", "--fail-on-block"],
        &[w.to_str().unwrap(), out.to_str().unwrap()],
    );
    let note = format!(
        "fsguard: a static program ran ({}): the library sees none of its calls; ",
        w.display()
    );
    assert!(o.stderr.contains(&note), "{}", o.describe());
    if landlock_abi() > 0 {
        assert!(!out.exists(), "{}", o.describe());
        assert!(
            o.stderr.contains("neither traced nor counted"),
            "{}",
            o.describe()
        );
    }
    let o = fsguard(
        &td.join("ws"),
        &["--root", ".", "--quiet"],
        &[w.to_str().unwrap(), out.to_str().unwrap()],
    );
    assert!(!o.stderr.contains("static program ran"), "{}", o.describe());
}
