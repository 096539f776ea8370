//! Edges found under load and faults (issue 19): large policies, a program
//! that reuses fd 2, logs that cannot be written, a full fd table, paths
//! longer than PATH_MAX, and the error shape of calls returning pointers.

#[path = "../children_util/mod.rs"]
mod children_util;
#[path = "../common/mod.rs"]
mod common;

use children_util::*;
use std::process::Command;

/// A config of `n` write-deny rules inside the root (none matches `ok/`).
fn big_config(s: &Scratch, n: usize) -> std::path::PathBuf {
    let mut cfg = String::from("readonly = false\n[write]\ndeny = [\n");
    for i in 0..n {
        cfg.push_str(&format!("  \"{}/deny-{i:05}/**\",\n", s.ws().display()));
    }
    cfg.push_str("]\n");
    let p = s.path("big.toml");
    std::fs::write(&p, cfg).unwrap();
    p
}

/// A preloaded command with only the given FSGUARD_* variables.
fn preloaded(prog: &str, vars: &[(&str, &str)]) -> Command {
    let mut c = Command::new(prog);
    for (k, _) in std::env::vars() {
        if k.starts_with("FSGUARD_") || k == "LD_PRELOAD" {
            c.env_remove(k);
        }
    }
    c.env("LD_PRELOAD", lib());
    for (k, v) in vars {
        c.env(k, v);
    }
    c
}

mod calls;
mod children;
mod run;
mod trace;
