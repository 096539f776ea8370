//! C programs calling every interposed libc symbol directly
//! (tests/c/calls.c, tests/c/fortified.c).
//!
//! * Under FSGUARD_READONLY=1 every write through every symbol is refused:
//!   ret -1/NULL, errno EACCES, exactly one `blocked` trace line with the
//!   expected call name, access, resolved path (and dest), rule=readonly, and
//!   an unchanged tree. The same call without the library succeeds (control).
//! * Allowed calls behave exactly as without the library: the same call in a
//!   fresh copy of the fixture, bare and under FSGUARD_ROOT=<the fixture>,
//!   gives the same return value, the same errno (including ENOENT, EEXIST,
//!   ENOTDIR, EISDIR, ELOOP, EBADF ...; and errno untouched on success) and
//!   the same resulting tree.
//! * The fortified entry points are reached by `-D_FORTIFY_SOURCE=2 -O2` code.

// LD_PRELOAD, /proc and glibc symbol names: Linux only.
#![cfg(target_os = "linux")]

#[path = "../common/mod.rs"]
mod common;

use common::*;
use std::path::{Path, PathBuf};
use std::process::Command;

fn calls_bin() -> PathBuf {
    c_program("calls", &["-O0", "-U_FORTIFY_SOURCE"])
}

fn fortified_bin() -> PathBuf {
    c_program(
        "fortified",
        &["-O2", "-U_FORTIFY_SOURCE", "-D_FORTIFY_SOURCE=2"],
    )
}

/// The fixture every case starts from (in `d`):
///   f "hello\n" 0644, g "other\n" 0644, emptydir/, dir/x "x\n",
///   sl -> f, dsl -> dir, loop1 -> loop2 -> loop1, dangle -> nothere
fn fixture(d: &Path) {
    mkdir(d);
    write_file(&d.join("f"), "hello\n", 0o644);
    write_file(&d.join("g"), "other\n", 0o644);
    mkdir(&d.join("emptydir"));
    mkdir(&d.join("dir"));
    write_file(&d.join("dir/x"), "x\n", 0o644);
    symlink("f", &d.join("sl"));
    symlink("dir", &d.join("dsl"));
    symlink("loop2", &d.join("loop1"));
    symlink("loop1", &d.join("loop2"));
    symlink("nothere", &d.join("dangle"));
}

/// Split a case; `<empty>` is an empty argument, `{name300}` a 300-byte
/// name (too long for one component), `{deep}` a relative path of more than
/// PATH_MAX bytes.
fn args_of(case: &str) -> Vec<String> {
    case.split_whitespace()
        .map(|a| match a {
            "<empty>" => String::new(),
            _ => a
                .replace("{name300}", &"n".repeat(300))
                .replace("{deep}", &"d/".repeat(2100)),
        })
        .collect()
}

struct CallOut {
    ret: String,
    errno: String,
}

fn parse_call(out: &Out) -> Result<CallOut, String> {
    let line = out
        .stdout
        .lines()
        .find(|l| l.starts_with("ret="))
        .ok_or("no `ret=` line from the C program")?;
    let (r, e) = line.split_once(' ').ok_or("odd ret line")?;
    Ok(CallOut {
        ret: r.trim_start_matches("ret=").to_string(),
        errno: e.trim_start_matches("errno=").to_string(),
    })
}

fn calls(dir: &Path, case: &str, vars: Option<&[(&str, &str)]>) -> Out {
    let mut cmd = match vars {
        Some(v) => guarded_cmd(calls_bin(), v),
        None => bare_cmd(calls_bin()),
    };
    cmd.args(args_of(case)).current_dir(dir);
    run(&mut cmd)
}

fn expect_of(spec: &str, dir: &Path, rule: &str) -> Expect {
    let (main, dest) = match spec.split_once(" -> ") {
        Some((m, d)) => (m, Some(d)),
        None => (spec, None),
    };
    let w: Vec<&str> = main.split_whitespace().collect();
    assert_eq!(w.len(), 3, "bad expectation {spec:?}");
    let mut e = Expect::new(w[0], w[1], dir.join(w[2]), rule);
    if let Some(d) = dest {
        e = e.dest(dir.join(d.trim()));
    }
    e
}

mod allowed;
mod fortified;
mod symbols;
