//! Shared by the `children_*` tests: release artifacts, C programs compiled
//! with `cc`, scratch directories.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

/// `target/release/{libfsguard.so, fsguard}`, built once per test binary.
pub fn artifacts() -> &'static (PathBuf, PathBuf) {
    static BUILT: OnceLock<(PathBuf, PathBuf)> = OnceLock::new();
    BUILT.get_or_init(|| {
        let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let st = Command::new(cargo)
            .args(["build", "--release", "-p", "fsguard", "-p", "fsguard-cli"])
            .current_dir(&root)
            .status()
            .expect("cargo build");
        assert!(st.success(), "release build failed");
        let target = std::env::var_os("CARGO_TARGET_DIR")
            .map(PathBuf::from)
            .unwrap_or_else(|| root.join("target"));
        let rel = target.join("release");
        (rel.join("libfsguard.so"), rel.join("fsguard"))
    })
}

pub fn lib() -> &'static Path {
    &artifacts().0
}

pub fn cli() -> &'static Path {
    &artifacts().1
}

/// A fresh scratch directory (canonical), removed by `Drop`.
pub struct Scratch(pub PathBuf);

impl Scratch {
    pub fn new(tag: &str) -> Scratch {
        let d = std::env::temp_dir().join(format!("fsguard-children-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(d.join("ws")).unwrap();
        Scratch(std::fs::canonicalize(&d).unwrap())
    }

    pub fn path(&self, p: &str) -> PathBuf {
        self.0.join(p)
    }

    /// The root the tests confine to.
    pub fn ws(&self) -> PathBuf {
        self.0.join("ws")
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Compiles `src` with `cc` (plus `extra` flags) into `dir/name`.
pub fn compile(dir: &Path, name: &str, src: &str, extra: &[&str]) -> PathBuf {
    let c = dir.join(format!("{name}.c"));
    std::fs::write(&c, src).unwrap();
    let out = dir.join(name);
    let st = Command::new("cc")
        .args(extra)
        .arg("-O2")
        .arg("-o")
        .arg(&out)
        .arg(&c)
        .status()
        .expect("cc");
    assert!(st.success(), "cc {name} failed");
    out
}

/// `fsguard run ARGS` in `dir`, environment cleaned of FSGUARD_*.
pub fn run(dir: &Path, args: &[&str]) -> Output {
    fsguard(dir, "run", args, &[])
}

pub fn fsguard(dir: &Path, sub: &str, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(cli());
    cmd.arg(sub).args(args).current_dir(dir);
    for (k, _) in std::env::vars() {
        if k.starts_with("FSGUARD_") || k == "LD_PRELOAD" {
            cmd.env_remove(k);
        }
    }
    cmd.env("FSGUARD_LIB", lib());
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().expect("fsguard runs")
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn code(o: &Output) -> i32 {
    o.status.code().unwrap_or(-1)
}
