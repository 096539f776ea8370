//! The bundled examples: every config passes `fsguard check` (presets shown),
//! the agent demo runs with one command, and the build config lets a build
//! write only its output directory and /tmp.

mod common;
mod policy_support;
use policy_support::*;

use std::path::{Path, PathBuf};

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn example_configs_pass_check_and_show_presets() {
    for name in ["agent.toml", "build.toml", "analysis.toml"] {
        let cfg = repo().join("examples").join(name);
        let o = run(&mut fsguard(&["check", "--config", cfg.to_str().unwrap()]));
        assert_eq!(o.code, Some(0), "{name}: {}", o.show());
        for want in [
            "# system (",
            "# secrets (denied always): [",
            "# devices (always allowed): [\"/dev/null\"",
        ] {
            assert!(o.stdout.contains(want), "{name}: {want}: {}", o.show());
        }
    }
    let o = run(&mut fsguard(&[
        "check",
        "--config",
        repo().join("examples/agent.toml").to_str().unwrap(),
    ]));
    let ws = repo()
        .join("examples/demo/workspace")
        .canonicalize()
        .unwrap();
    assert!(
        o.stdout.contains(&format!("root = \"{}\"", ws.display())),
        "{}",
        o.show()
    );
    assert!(
        o.stdout
            .contains("# system (active: root is set): [\"/usr\""),
        "{}",
        o.show()
    );
    let o = run(fsguard(&[
        "check",
        "--config",
        repo().join("examples/agent.toml").to_str().unwrap(),
    ])
    .env("HOME", "/home/someone"));
    assert!(o.stdout.contains("\"/home/someone/.ssh\""), "{}", o.show());
}

#[test]
fn agent_demo_runs_with_one_command() {
    cli();
    let mut c = cmd(repo().join("examples/demo/run.sh"));
    c.env("FSGUARD", cli());
    let o = run(&mut c);
    let _ = std::fs::remove_file(repo().join("examples/demo/workspace/report.txt"));
    assert_eq!(o.code, Some(0), "{}", o.show());
    for want in [
        "allowed  read data.csv",
        "allowed  read .env.example",
        "allowed  write report.txt",
        "DENIED   read .env",
        "DENIED   read deploy.pem",
        "DENIED   rename deploy.pem to notes.txt",
        "DENIED   write ../outside.txt",
        "DENIED   read /etc/passwd",
    ] {
        assert!(o.stdout.contains(want), "{want}: {}", o.show());
    }
    assert!(!repo().join("examples/demo/outside.txt").exists());
    assert!(repo().join("examples/demo/workspace/deploy.pem").exists());
    assert_eq!(lines(&o.stderr, "blocked").len(), 5, "{}", o.show());
}

#[test]
fn build_config_allows_only_target_and_tmp() {
    // Not under /tmp, which the config allows (the checkout itself may be).
    let outside_tmp = |p: &Path| {
        let tmp = Path::new("/tmp").canonicalize().unwrap();
        p.canonicalize().is_ok_and(|c| !c.starts_with(&tmp))
    };
    let base = [
        PathBuf::from(env!("CARGO_TARGET_TMPDIR")),
        PathBuf::from("/var/tmp"),
        PathBuf::from(std::env::var_os("HOME").unwrap_or_default()),
    ]
    .into_iter()
    .find(|p| outside_tmp(p))
    .expect("a writable directory outside /tmp");
    let d = TempDir::new_in(&base, "build");
    std::fs::copy(repo().join("examples/build.toml"), d.join("build.toml")).unwrap();
    d.file("hello.c", "int main(void) { return 0; }\n");
    std::fs::create_dir(d.join("target")).unwrap();
    let cfg = d.join("build.toml");
    let cfg = cfg.to_str().unwrap();
    let o = run(fsguard(&[
        "run",
        "--config",
        cfg,
        "--",
        "cc",
        "-o",
        "target/hello",
        "hello.c",
    ])
    .current_dir(d.path()));
    assert_eq!(o.code, Some(0), "{}", o.show());
    assert!(d.join("target/hello").exists());
    let o = run(
        fsguard(&["run", "--config", cfg, "--", "cc", "-o", "hello", "hello.c"])
            .current_dir(d.path()),
    );
    assert_ne!(o.code, Some(0), "{}", o.show());
    assert!(!d.join("hello").exists());
    let dd = d.path().display();
    assert!(
        o.stderr.contains(&format!("path={dd}/hello rule=readonly")),
        "{}",
        o.show()
    );
}
