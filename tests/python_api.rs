//! The Python API from the source tree (no wheel, no pytest): the
//! example in python/README.md works as written, paths are against the
//! caller's working directory, `quiet=` keeps fsguard's own lines out of
//! `Result.stderr`, `Event.hint` is there only for a boundary refusal, and
//! the example harness shows the model the command's output and a short
//! refusal, never a way around the policy.

#![cfg(target_os = "linux")]

mod common;

use common::*;
use std::path::{Path, PathBuf};
use std::process::Command;

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// A package directory as the wheel lays it out: the module, the CLI in
/// `bin/`, the library in `lib/`.
fn package(td: &TempDir) -> PathBuf {
    let site = td.join("site");
    let pkg = site.join("fsguard");
    mkdir(&pkg.join("bin"));
    mkdir(&pkg.join("lib"));
    for f in ["__init__.py", "__main__.py"] {
        std::fs::copy(repo().join("python/src/fsguard").join(f), pkg.join(f)).unwrap();
    }
    std::os::unix::fs::symlink(cli(), pkg.join("bin/fsguard")).unwrap();
    std::os::unix::fs::symlink(lib(), pkg.join("lib/libfsguard.so")).unwrap();
    site
}

fn py(site: &Path, dir: &Path, code: &str) -> Command {
    let mut c = bare_cmd(python());
    c.args(["-c", code])
        .env("PYTHONPATH", site)
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .current_dir(dir);
    c
}

#[test]
fn the_readme_example_runs_as_written() {
    let td = TempDir::new("py-readme");
    let site = package(&td);
    let work = td.join("work");
    mkdir(&work.join("ws"));
    let readme = std::fs::read_to_string(repo().join("python/README.md")).unwrap();
    let example = readme
        .split("```python\n")
        .nth(1)
        .and_then(|r| r.split("```").next())
        .expect("a python block in python/README.md");
    let o = run(&mut py(&site, &work, example));
    assert_eq!(o.code(), Some(0), "{}", o.describe());
    assert_eq!(
        std::fs::read_to_string(work.join("ws/out.txt")).unwrap(),
        "ok\n",
        "{}",
        o.describe()
    );
    assert!(
        o.stdout.contains("open write /etc/evil root"),
        "{}",
        o.describe()
    );
    assert!(!Path::new("/etc/evil").exists());
}

#[test]
fn paths_are_against_the_callers_directory_and_quiet_keeps_stderr_the_commands() {
    let td = TempDir::new("py-paths");
    let site = package(&td);
    let work = td.join("work");
    let ws = work.join("ws");
    mkdir(&ws);
    write_file(&ws.join(".env"), "KEY=hunter2\n", 0o644);
    // A workspace's own `.fsguard.toml` (one discovery would refuse) is
    // not the API's policy: the arguments are.
    mkdir(&ws.join(".git"));
    write_file(&ws.join(".fsguard.toml"), "root = \"..\"\n", 0o644);
    let outside = td.join("outside");
    mkdir(&outside);
    let code = format!(
        r#"
import fsguard
r = fsguard.run(["sh", "-c", "cat .env; echo x > {out}/f; echo done"],
                root="ws", cwd="ws", deny_read=["**/.env*"], quiet=True)
q = fsguard.run(["sh", "-c", "cat .env; echo x > {out}/f"], root="ws", cwd="ws",
                deny_read=["**/.env*"])
assert r.stdout == "done\n", r
assert "fsguard:" not in r.stderr and "[fsguard]" not in r.stderr and "Permission denied" in r.stderr, r.stderr
assert "fsguard: 2 accesses blocked" in q.stderr, q.stderr
env, out = r.blocked
assert env.access == "read" and env.rule.startswith("read.deny:"), env
assert env.hint is None, env
assert out.rule == "root" and out.hint == "--allow-write {out_real}/f", out
print("checked")
"#,
        out = outside.display(),
        out_real = outside.canonicalize().unwrap().display()
    );
    let o = run(&mut py(&site, &work, &code));
    assert_eq!(o.code(), Some(0), "{}", o.describe());
    assert_eq!(o.stdout.trim(), "checked", "{}", o.describe());
    assert!(!outside.join("f").exists());
}

#[test]
fn the_harness_shows_the_model_a_short_refusal_and_no_way_around_it() {
    let td = TempDir::new("py-harness");
    let site = package(&td);
    let work = td.join("work");
    let ws = td.join("ws");
    let outside = td.join("outside");
    mkdir(&work);
    mkdir(&ws);
    mkdir(&outside);
    write_file(&ws.join(".env"), "API_KEY=hunter2\n", 0o644);
    write_file(&ws.join("key.pem"), "KEY\n", 0o644);
    let mut c = bare_cmd(python());
    c.arg(repo().join("examples/harness/agent_harness.py"))
        .arg(&ws)
        .args([
            "echo draft > notes.md && cat notes.md",
            "cat .env",
            &format!("echo x > {}/f", outside.display()),
        ])
        .env("PYTHONPATH", &site)
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .current_dir(&work);
    let o = run(&mut c);
    assert_eq!(o.code(), Some(0), "{}", o.describe());
    // What the model sees is the harness's stdout.
    let seen = &o.stdout;
    let ws_real = ws.canonicalize().unwrap();
    let out_real = outside.canonicalize().unwrap();
    for want in [
        "draft\n[exit 0]".to_string(),
        format!(
            "[harness] blocked: read of {}/.env by open() (read.deny:",
            ws_real.display()
        ),
        "refused on purpose by the workspace's policy; do not work around it".into(),
        format!(
            "[harness] blocked: write of {}/f by open() (root): outside the workspace",
            out_real.display()
        ),
    ] {
        assert!(seen.contains(&want), "missing {want:?}\n{}", o.describe());
    }
    for never in ["hunter2", "fsguard:", "to allow", "--allow-", "hint"] {
        assert!(
            !seen.contains(never),
            "the model saw {never:?}\n{}",
            o.describe()
        );
    }
    assert!(!outside.join("f").exists() && ws.join("notes.md").exists());
}
