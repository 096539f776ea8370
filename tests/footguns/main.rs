//! No silent footguns: what a user means by a flag is what the guard
//! enforces. One test (or more) per item of the issue, run through the CLI
//! and the real library, as a new user would.

#![cfg(target_os = "linux")]

#[path = "../common/mod.rs"]
mod common;

use common::*;
use std::path::{Path, PathBuf};
use std::process::Command;

fn fsguard(args: &[&str]) -> Command {
    let mut c = bare_cmd(cli());
    c.args(args);
    c
}

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// T/proj, T/home (HOME), T/out
fn layout(tag: &str) -> (TempDir, PathBuf, PathBuf) {
    let td = TempDir::new(tag);
    let proj = td.join("proj");
    let home = td.join("home");
    mkdir(&proj);
    mkdir(&home);
    write_file(&home.join(".bashrc"), "# rc\n", 0o644);
    (td, proj, home)
}

/// Whether the kernel has Landlock (prints why a test is skipped if not).
fn landlock_or_skip(test: &str) -> bool {
    if landlock_abi() <= 0 {
        eprintln!("{test}: skipped: this kernel has no Landlock");
        return false;
    }
    true
}

// ---------------------------------------------------------------------------
// 1. An allow rule alone does not remove confinement.

mod flags;
mod run;
mod writes;
