//! The Python package (`python/`): the wheel is built from the release
//! artifacts, installed into a fresh venv, and the pytest suite
//! (`python/tests`) runs against the installed package, from a directory
//! outside the repository, with no Rust toolchain on `PATH`. Then the example
//! agent harness (`examples/harness/agent_harness.py`) runs on it.
//!
//! pytest: when the interpreter already has it (CI installs it with
//! `python3 -m pip install pytest`), the venv is made with
//! `--system-site-packages` and nothing is downloaded; otherwise it is
//! installed into the venv from the package index.

#![cfg(target_os = "linux")]

mod common;

use common::*;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn ok(out: Out, what: &str) -> Out {
    assert!(out.status.success(), "{what} failed:\n{}", out.describe());
    out
}

/// `PATH` for the installed package: the venv, then the system directories
/// that hold no Rust toolchain.
fn toolchain_free_path(venv: &Path) -> (String, bool) {
    let has = |d: &str, t: &str| Path::new(d).join(t).exists();
    let dirs: Vec<&str> = ["/usr/local/bin", "/usr/bin", "/bin"]
        .into_iter()
        .filter(|d| !has(d, "cargo") && !has(d, "rustc"))
        .collect();
    let clean = ["/usr/bin", "/bin"].iter().all(|d| dirs.contains(d));
    let path = std::iter::once(venv.join("bin").display().to_string())
        .chain(dirs.iter().map(|d| d.to_string()))
        .collect::<Vec<_>>()
        .join(":");
    (path, clean)
}

/// A command for the installed package: an empty environment but for
/// `PATH` (no cargo), `HOME` and the locale.
fn installed_cmd(prog: &Path, venv: &Path) -> (Command, bool) {
    let (path, clean) = toolchain_free_path(venv);
    let mut c = Command::new(prog);
    c.env_clear()
        .env("PATH", path)
        .env("PYTHONDONTWRITEBYTECODE", "1");
    for k in ["HOME", "LANG", "LC_ALL", "USER"] {
        if let Some(v) = std::env::var_os(k) {
            c.env(k, v);
        }
    }
    (c, clean)
}

#[test]
fn wheel_installs_into_a_fresh_venv_and_passes_pytest() {
    let t0 = Instant::now();
    let art = artifacts();
    let dir = art.cli.parent().unwrap();
    assert_eq!(
        Some(dir),
        art.lib.parent(),
        "CLI and library in one directory"
    );
    let tmp = TempDir::new("python");
    let py = python();

    // A fresh venv (its own pip builds and installs; the base interpreter
    // needs no pip).
    let have_pytest = bare_cmd(py)
        .args(["-c", "import pytest"])
        .output()
        .is_ok_and(|o| o.status.success());
    let venv = tmp.join("venv");
    let mut mk = bare_cmd(py);
    mk.args(["-m", "venv"]);
    if have_pytest {
        mk.arg("--system-site-packages");
    }
    ok(
        run(mk.arg(&venv)),
        "python3 -m venv (Debian: apt-get install python3-venv)",
    );
    let vpy = venv.join("bin/python");
    let t_venv = t0.elapsed();

    // The wheel, through pip and the in-tree PEP 517 backend (offline).
    let dist = tmp.join("dist");
    ok(
        run(bare_cmd(&vpy)
            .args(["-m", "pip", "wheel", "--no-deps", "--no-index", "-w"])
            .arg(&dist)
            .arg(repo().join("python"))
            .env("FSGUARD_ARTIFACTS", dir)),
        "pip wheel ./python",
    );
    let wheels: Vec<PathBuf> = std::fs::read_dir(&dist)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "whl"))
        .collect();
    assert_eq!(wheels.len(), 1, "{wheels:?}");
    let wheel = &wheels[0];
    let name = wheel.file_name().unwrap().to_string_lossy().into_owned();
    let prefix = format!(
        "fsguard-{}-py3-none-manylinux_2_",
        env!("CARGO_PKG_VERSION")
    );
    assert!(
        name.starts_with(&prefix) && name.ends_with(&format!("_{}.whl", std::env::consts::ARCH)),
        "wheel name {name:?}: want {prefix}N_{}.whl",
        std::env::consts::ARCH
    );
    let t_wheel = t0.elapsed();

    ok(
        run(bare_cmd(&vpy)
            .args([
                "-m",
                "pip",
                "install",
                "--no-index",
                "--disable-pip-version-check",
            ])
            .arg(wheel)),
        "pip install the wheel",
    );
    // (A venv made from another venv sees the base interpreter's packages,
    // not the parent venv's: ask the new venv itself.)
    let venv_has_pytest = have_pytest
        && bare_cmd(&vpy)
            .args(["-c", "import pytest"])
            .output()
            .is_ok_and(|o| o.status.success());
    if !venv_has_pytest {
        eprintln!(
            "pytest is not installed for {}: installing it into the venv",
            py.display()
        );
        ok(
            run(bare_cmd(&vpy).args([
                "-m",
                "pip",
                "install",
                "--disable-pip-version-check",
                "-q",
                "pytest",
            ])),
            "pip install pytest (python3 -m pip install pytest avoids this download)",
        );
    }
    let t_install = t0.elapsed();

    // The suite, copied out of the repository, against the installed package.
    let work = tmp.join("work");
    mkdir(&work.join("tests"));
    for e in std::fs::read_dir(repo().join("python/tests")).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "py") {
            std::fs::copy(&p, work.join("tests").join(p.file_name().unwrap())).unwrap();
        }
    }
    let (mut c, clean) = installed_cmd(&vpy, &venv);
    c.args([
        "-m",
        "pytest",
        "-p",
        "no:cacheprovider",
        "-q",
        "-rA",
        "--basetemp",
    ])
    .arg(tmp.join("pytest"))
    .arg("tests")
    .current_dir(&work)
    .env("TEST_FSGUARD_INSTALLED", "1");
    if clean {
        c.env("TEST_FSGUARD_NO_TOOLCHAIN", "1");
    }
    let out = ok(run(&mut c), "pytest python/tests");
    assert!(
        out.stdout.contains(" passed") && !out.stdout.contains("skipped"),
        "{}",
        out.describe()
    );
    let t_pytest = t0.elapsed();

    // The example harness: tool calls in, blocked operations out as text.
    let ws = tmp.join("ws");
    let outside = tmp.join("outside");
    mkdir(&ws);
    mkdir(&outside);
    write_file(&ws.join(".env"), "API_KEY=1\n", 0o644);
    let escape = format!("echo x > {}/f", outside.display());
    let (mut c, _) = installed_cmd(&vpy, &venv);
    c.arg(repo().join("examples/harness/agent_harness.py"))
        .arg(&ws)
        .args(["echo draft > notes.md && cat notes.md", "cat .env", &escape])
        .current_dir(&work);
    let out = ok(run(&mut c), "examples/harness/agent_harness.py");
    let want = [
        "draft\n[exit 0]".to_string(),
        format!(
            "[harness] blocked: read of {}/.env by open() (read.deny:",
            ws.display()
        ),
        format!(
            "[harness] blocked: write of {}/f by open() (root)",
            outside.display()
        ),
    ];
    for w in &want {
        assert!(out.stdout.contains(w), "missing {w:?}\n{}", out.describe());
    }
    // The model never sees fsguard's summary or a way around a refusal.
    for never in ["fsguard:", "to allow", "--allow-"] {
        assert!(!out.stdout.contains(never), "{never:?}\n{}", out.describe());
    }
    assert!(!outside.join("f").exists() && ws.join("notes.md").exists());
    eprintln!(
        "python package: venv {:.1?}, wheel {:.1?}, install {:.1?}, pytest {:.1?}, harness {:.1?}",
        t_venv,
        t_wheel - t_venv,
        t_install - t_wheel,
        t_pytest - t_install,
        t0.elapsed() - t_pytest
    );
}
