//! Helpers for the policy integration tests, over `tests/common` (which
//! builds the release artifacts): temporary trees with files, running
//! children, compiling C helpers given as source text.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};

// Building the release library and CLI is shared with the other tests.
pub use crate::common::{cli, lib};

/// A fresh canonical directory under the system temp dir, removed on drop.
pub struct TempDir(PathBuf);

impl TempDir {
    pub fn new(tag: &str) -> TempDir {
        TempDir::new_in(&std::env::temp_dir(), tag)
    }

    pub fn new_in(base: &Path, tag: &str) -> TempDir {
        static N: AtomicUsize = AtomicUsize::new(0);
        let p = base.join(format!(
            "fsguard-policy-{tag}-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::SeqCst)
        ));
        let _ = std::fs::remove_dir_all(&p);
        std::fs::create_dir_all(&p).unwrap();
        TempDir(p.canonicalize().unwrap())
    }

    pub fn path(&self) -> &Path {
        &self.0
    }

    pub fn join<P: AsRef<Path>>(&self, p: P) -> PathBuf {
        self.0.join(p)
    }

    /// Writes a file (parents created) and returns its path.
    pub fn file(&self, rel: &str, text: &str) -> PathBuf {
        let p = self.0.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, text).unwrap();
        p
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = Command::new("chmod")
            .arg("-R")
            .arg("u+rwx")
            .arg(&self.0)
            .status();
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A child's result, as text.
pub struct Out {
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
}

impl Out {
    pub fn show(&self) -> String {
        format!(
            "exit {:?}\n--- stdout\n{}--- stderr\n{}",
            self.code, self.stdout, self.stderr
        )
    }
}

/// A command with no FSGUARD_* variable and no preload from the test's own
/// environment.
pub fn cmd<S: AsRef<std::ffi::OsStr>>(prog: S) -> Command {
    let mut c = Command::new(prog);
    for (k, _) in std::env::vars_os() {
        if k.to_string_lossy().starts_with("FSGUARD_") {
            c.env_remove(&k);
        }
    }
    c.env_remove("LD_PRELOAD")
        .env("PYTHONDONTWRITEBYTECODE", "1");
    c.stdin(Stdio::null());
    c
}

/// The command with the library preloaded and these variables set.
pub fn guarded<S: AsRef<std::ffi::OsStr>>(prog: S, vars: &[(&str, &str)]) -> Command {
    let mut c = cmd(prog);
    c.env("LD_PRELOAD", lib());
    for (k, v) in vars {
        c.env(k, v);
    }
    c
}

/// `fsguard ARGS...`
pub fn fsguard(args: &[&str]) -> Command {
    let mut c = cmd(cli());
    c.args(args);
    c
}

pub fn run(c: &mut Command) -> Out {
    let o: Output = c.output().expect("spawn");
    Out {
        code: o.status.code(),
        stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
    }
}

/// Compiles C source into the test's target tmp dir; returns the binary.
pub fn c_program(name: &str, source: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("policy-c");
    std::fs::create_dir_all(&dir).unwrap();
    let src = dir.join(format!("{name}-{}.c", std::process::id()));
    std::fs::write(&src, source).unwrap();
    let bin = dir.join(format!("{name}-{}", std::process::id()));
    let o = Command::new("cc")
        .args(["-std=gnu11", "-Wall", "-O1", "-o"])
        .arg(&bin)
        .arg(&src)
        .env_remove("LD_PRELOAD")
        .output()
        .expect("run cc");
    assert!(
        o.status.success(),
        "cc failed:\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    bin
}

/// `[fsguard] <event> ...` lines of a text.
pub fn lines<'a>(text: &'a str, event: &str) -> Vec<&'a str> {
    let needle = format!("[fsguard] {event} ");
    text.lines().filter(|l| l.starts_with(&needle)).collect()
}
