//! Check-then-call races (TOCTOU): while the main thread of a guarded
//! program calls one operation 20,000 times on a path through a component
//! that another thread keeps swapping between inside and outside the root,
//! nothing outside may change and no outside content may be read.
//!
//! The driver is tests/c/race.c (its header says exactly what each op and
//! swap does). Layout: `box/` is the root, `out/` a sibling of it holding
//! the same names as the inside, with an `OUTSIDE` marker in contents and
//! listings. Two swaps per op:
//!
//! * `dir`: `box/d` (a real directory) and `box/lnk -> ../out` exchanged
//!   with `renameat2(RENAME_EXCHANGE)`; the op acts on `box/d/NAME`.
//! * `final`: `box/link` (pointing inside) and `box/alt` (pointing outside)
//!   exchanged. Ops that follow a final symlink (open read, open create of a
//!   dangling link's target, chmod, truncate, utimensat, opendir) act on
//!   `box/link` itself; ops on a directory entry (unlink, rename, mkdir,
//!   link, symlink), which never follow a final symlink, act on
//!   `box/link/NAME`, the swapped symlink being their last directory.
//!
//! The swapper thread makes each exchange at random either through the libc
//! `renameat2` (hooked, allowed: both names are inside), as a guarded
//! program does, or with the system call itself, standing for any process
//! the library in this one does not see (so a defence that depends on
//! seeing the swap fails). Mixing the two keeps the swapper from falling
//! into step with the main thread, which the driver also jitters: on main
//! this finds far more leaks than either kind of swap alone.
//!
//! Per op and swap kind: a bare run (no library) must leak (proves the
//! setup reaches outside at all); then each guarded run of 20,000 tries
//! must leak nothing: the driver's own count (it checks outside after each
//! try with raw system calls and puts it back) is 0, nothing outside differs
//! from a snapshot taken before (a put-back still leaves new times), and the
//! program exits 0. Refused calls (EACCES) are expected whenever the swapped
//! state points outside.

#![cfg(target_os = "linux")]

mod common;

use common::*;
use std::path::{Path, PathBuf};

const TRIES: u32 = 20_000;

fn driver() -> PathBuf {
    c_program("race", &["-O2", "-pthread"])
}

/// The driver's summary line.
#[derive(Debug, Default)]
struct Tally {
    leaks: u64,
    tries: u64,
    ok: u64,
    denied: u64,
    other: u64,
    swaps: u64,
}

fn tally(o: &Out) -> Result<Tally, String> {
    let line = o
        .stdout
        .lines()
        .find(|l| l.starts_with("leaks="))
        .ok_or_else(|| format!("no summary line from the driver\n{}", o.describe()))?;
    let mut t = Tally::default();
    for kv in line.split_whitespace() {
        let (k, v) = kv.split_once('=').ok_or("odd summary")?;
        let v: u64 = v.parse().map_err(|e| format!("{kv}: {e}"))?;
        match k {
            "leaks" => t.leaks = v,
            "tries" => t.tries = v,
            "ok" => t.ok = v,
            "denied" => t.denied = v,
            "other" => t.other = v,
            "swaps" => t.swaps = v,
            _ => {}
        }
    }
    Ok(t)
}

fn setup(dir: &Path, op: &str, kind: &str) {
    let o = run(bare_cmd(driver())
        .current_dir(dir)
        .args(["setup", op, kind]));
    assert!(o.status.success(), "setup failed:\n{}", o.describe());
}

/// One op under one swap kind: the bare control, then the guarded run.
fn race(op: &str, kind: &str, f: &mut Failures) {
    let name = format!("{op} / {kind}");

    // Control: without the library the op does reach outside.
    f.case();
    let td = TempDir::new(&format!("race-bare-{op}-{kind}"));
    setup(td.path(), op, kind);
    let tries = TRIES.to_string();
    let o = run(bare_cmd(driver())
        .current_dir(td.path())
        .args(["run", op, kind, &tries, "mixed", "once"]));
    match tally(&o) {
        Ok(t) if o.status.success() && t.leaks >= 1 => {}
        Ok(t) => f.fail(
            &format!("{name} bare control"),
            format!(
                "the bare run never reached outside in {} tries ({t:?}): the test proves nothing\n{}",
                t.tries,
                o.describe()
            ),
        ),
        Err(e) => f.fail(&format!("{name} bare control"), e),
    }

    {
        let swapper = "mixed";
        f.case();
        let td = TempDir::new(&format!("race-{op}-{kind}-{swapper}"));
        setup(td.path(), op, kind);
        let out = td.join("out");
        let before = snapshot(&out);
        let root = td.join("box");
        let o = run(guarded_cmd(
            driver(),
            &[
                ("FSGUARD_ROOT", root.to_str().unwrap()),
                // Up to 20,000 refusals; their lines are not what is tested.
                ("FSGUARD_LOG", "off"),
            ],
        )
        .current_dir(td.path())
        .args(["run", op, kind, &tries, swapper]));
        let t = match tally(&o) {
            Ok(t) => t,
            Err(e) => {
                f.fail(&format!("{name} guarded"), e);
                return;
            }
        };
        let diff = snapshot_diff(&before, &snapshot(&out));
        if !o.status.success() || t.leaks != 0 || diff.is_some() || t.tries != TRIES as u64 {
            f.fail(
                &format!("{name} guarded"),
                format!(
                    "{} leak(s) in {} tries (ok={} denied={} other errors={} swaps={}), exit {}\n\
                     outside changed:\n{}{}",
                    t.leaks,
                    t.tries,
                    t.ok,
                    t.denied,
                    t.other,
                    t.swaps,
                    o.status,
                    diff.as_deref().unwrap_or("no\n"),
                    o.cmdline
                ),
            );
        }
    }
}

fn both(op: &str) {
    let mut f = Failures::default();
    race(op, "dir", &mut f);
    race(op, "final", &mut f);
    f.finish(&format!("{op} race"));
}

#[test]
fn race_open_read() {
    both("read");
}

#[test]
fn race_open_create() {
    both("create");
}

#[test]
fn race_unlink() {
    both("unlink");
}

#[test]
fn race_rename() {
    both("rename");
}

#[test]
fn race_mkdir() {
    both("mkdir");
}

#[test]
fn race_chmod() {
    both("chmod");
}

#[test]
fn race_truncate() {
    both("truncate");
}

#[test]
fn race_link() {
    both("link");
}

#[test]
fn race_symlink() {
    both("symlink");
}

#[test]
fn race_utimensat() {
    both("utimensat");
}

#[test]
fn race_opendir() {
    both("opendir");
}
