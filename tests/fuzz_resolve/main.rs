//! Differential fuzzing of path resolution: random trees, random calls, run
//! bare and under `FSGUARD_ROOT`, compared.
//!
//! Each case is a fresh tree and one call. The tree lives at
//! `S/1/2/3/t` (S a fresh directory); `t/root` is the root, `t/outside` a
//! sibling with files and directories; both hold directories, files and
//! symlinks of every kind: relative and absolute, to objects inside and
//! outside, chained (link → link → …), looping (a → b → a, a → a), dangling
//! (to missing names inside and outside), to directories used as middle
//! components, to `.` and `..`. The call (open flags, `openat` and the other
//! `*at` forms relative to a dirfd opened `O_PATH` or `O_RDONLY` on a random
//! directory inside or outside, `unlink[at]`, `rmdir`, `mkdir[at]`,
//! `rename[at]`, `symlink[at]`, `link[at]`, `chmod`, `fchmodat`,
//! `truncate`, `utimensat`, `fopen`, `opendir`) gets paths made by random
//! walks of the tree: names, `.`, `..`, `//`, trailing `/` and `/.`,
//! absolute and relative forms, missing names. The walks never climb above
//! `t`, and every link target stays in `t`, so whatever the kernel does stays
//! in S (the test may run as root).
//!
//! Two long-lived runners (`tests/c/fuzz_resolve.c`), one bare and one with
//! the library, take the cases one by one; before each run the tree is
//! rebuilt from scratch at the same place (so the guarded process also sees
//! directories vanish and inode numbers come back, as a long-running
//! program would). Every sixth case runs in a sandbox in the temporary
//! directory (a disk filesystem as a rule, where inode numbers are reused),
//! the others in /dev/shm when it is a writable tmpfs (ten times faster,
//! but tmpfs never reuses an inode number).
//!
//! # The oracle
//!
//! A run records: the call's result and errno; the object of a returned fd
//! (`fstat`); the *effects*, the difference between an `lstat` walk of S
//! before and after the call (an entry added or removed, or a changed type,
//! mode, size, content, link target, or mtime set to the call's magic
//! value; an entry whose inode was elsewhere before (`rename`, `link`)
//! names where it came from); and, bare only, *probes* made before the call
//! of where the kernel resolves each path argument: the object (`fstatat`,
//! following or not as the call does), or for a call on a directory entry
//! the directory holding it plus the name, or for a missing object (through
//! dangling final symlinks, as `O_CREAT` follows them) the entry that would
//! be created. Objects are compared by their path relative to S (inode
//! numbers differ between the two fresh copies).
//!
//! Something is *inside* when its path is `t/root` or below it; an entry is
//! judged by its own path (the directory holding it plus its name), so the
//! root's own entry counts as inside, as the policy covers the root itself.
//! The bare run *touched outside* when an effect, the fd's object, the
//! origin of a moved or linked inode, or a probe lies outside.
//!
//! * Bare succeeded, touched only inside: the guarded run must do exactly the
//!   same (result, errno, fd object, effects). A refusal is a FALSE REFUSAL;
//!   any other difference a MISMATCH (e.g. acting on another object).
//! * Bare succeeded and touched outside: the guarded run must fail with
//!   EACCES and change nothing. Success or any effect is a FALSE ALLOW.
//! * Bare failed: the guarded run must fail and change nothing (else FALSE
//!   ALLOW, or MISMATCH when what it changed is inside). Its errno should be
//!   the kernel's, or EACCES when a probe lies outside ("outside the policy"
//!   beats "the kernel would fail": docs/limits.md, an existing entry).
//!   Another errno, or EACCES with no probe outside, is an ERRNO note: a
//!   refusal of a call that would have failed anyway costs nothing, so it
//!   is listed but does not fail the test (`FSGUARD_FUZZ_STRICT_ERRNO=1`
//!   makes it fail).
//! * A dirfd opened `O_RDONLY` is itself a read and is judged the same way;
//!   when the guard refuses it, the runner opens the directory `O_PATH`
//!   instead (metadata, never refused) so the call still runs. An `O_PATH`
//!   dirfd must behave as bare.
//! * A guarded EACCES the kernel did not give must come with a `blocked`
//!   trace line, and a guarded success with none.
//!
//! Known approximations: hard links are never part of a generated tree (the
//! walk maps an inode to one path); directory mtimes, ctimes, atimes, link
//! counts and sizes are ignored (entries added or removed show up as such);
//! a call that changes nothing observable (a rename onto itself) is judged
//! by its probes only; a probe that cannot resolve (ELOOP, ENOTDIR, …)
//! counts as neither inside nor outside, so such a bare failure must be
//! answered with the kernel's errno.
//!
//! Any difference that does not reproduce when the case is re-run alone in
//! fresh runners depends on state the library kept from earlier cases (its
//! path cache, say): it fails the test whatever its kind.
//!
//! Reproduce: the run prints `fuzz: N cases tried (seed S)`; a failure
//! prints the seed, the case number and the case. Each run tries the
//! fixed seeds of [`FIXED_SEEDS`] (1,000 cases each), then one fresh seed
//! from the clock, printed. `FSGUARD_FUZZ_SEED=S`
//! runs seed S alone, `FSGUARD_FUZZ_FIRST=i` starts
//! at case i (a case depends only on the seed and its number),
//! `FSGUARD_FUZZ_CASES=n` runs exactly n cases (no time limit),
//! `FSGUARD_FUZZ_SECS` changes the time budget (default 25 s, at least 200
//! cases), `FSGUARD_FUZZ_DISK_EVERY=k` runs every k-th case on disk (1: all),
//! `FSGUARD_FUZZ_MAX_FAILURES` how many failures end the run (default 5).
//! A state-dependent failure needs the cases before it, on the same
//! filesystem, and the same inode numbers coming back, so it may need a few
//! runs with the same seed to show again.

#![cfg(target_os = "linux")]

#[path = "../common/mod.rs"]
mod common;

use common::*;
use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;
use std::io::{BufRead, BufReader, Write};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Stdio};
use std::sync::mpsc::{channel, Receiver, Sender};
use std::time::{Duration, Instant};

const MAGIC_TIME: i64 = 1_000_000_007;
/// Where the tree sits below S: deep enough that nothing escapes S even if a
/// walk misjudged a link.
/// (Short names: absolute link targets stay short enough for the inode.)
const TOP: &str = "1";
const TREE: &str = "1/2/3/t";
const ROOT: &str = "1/2/3/t/root";

// ---------------------------------------------------------------------------
// The test
// ---------------------------------------------------------------------------

fn env_u64(k: &str) -> Option<u64> {
    std::env::var(k).ok().and_then(|v| v.trim().parse().ok())
}

/// A fresh directory with a short name (links into it stay short), removed
/// on drop.
struct Sandbox(PathBuf);

impl Sandbox {
    fn new(base: &Path) -> Sandbox {
        static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        loop {
            let n = N.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            let p = base.join(format!("fz{}x{n}", std::process::id()));
            match std::fs::create_dir(&p) {
                Ok(()) => return Sandbox(p.canonicalize().unwrap()),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(e) => panic!("cannot create {}: {e}", p.display()),
            }
        }
    }
}

impl Drop for Sandbox {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Where sandboxes go: the temporary directory (a disk filesystem, as a
/// rule, where inode numbers are reused), and /dev/shm when it is a
/// writable tmpfs (much faster, but tmpfs never reuses an inode number).
fn bases() -> (PathBuf, Option<PathBuf>) {
    let disk = std::env::temp_dir();
    let shm = Path::new("/dev/shm");
    let probe = shm.join(format!("fzprobe{}", std::process::id()));
    let fast = std::fs::create_dir(&probe)
        .and_then(|_| std::fs::remove_dir(&probe))
        .is_ok()
        && !disk.starts_with(shm);
    (disk, fast.then(|| shm.to_path_buf()))
}

struct Fuzz {
    stager: Stager,
    bare: Runner,
    guarded: Runner,
    /// Last: removed after the runners and the builder are gone.
    _s: Sandbox,
}

impl Fuzz {
    fn new(base: &Path) -> Fuzz {
        let prog = c_program("fuzz_resolve", &[]);
        let s = Sandbox::new(base);
        // The root must exist when the guarded runner loads; later trees
        // put it back at the same place.
        std::fs::create_dir_all(s.0.join(ROOT)).unwrap();
        let stager = Stager::new(&s.0);
        let bare = Runner::start(&prog, false, &s.0);
        let guarded = Runner::start(&prog, true, &s.0);
        let mut fz = Fuzz {
            stager,
            bare,
            guarded,
            _s: s,
        };
        fz.stager.discard();
        fz
    }

    /// Orders the two trees of a case (bare, guarded).
    fn order(&mut self, case: &Case) {
        self.stager.order(&case.tree);
        self.stager.order(&case.tree);
    }

    /// Runs a case whose trees were ordered.
    fn run(&mut self, case: &Case, id: u64) -> (Outcome, Outcome, Result<(), String>) {
        let b = execute(&mut self.bare, &mut self.stager, case, id);
        let g = execute(&mut self.guarded, &mut self.stager, case, id);
        let v = judge(case, &b, &g);
        (b, g, v)
    }

    fn one(&mut self, case: &Case, id: u64) -> (Outcome, Outcome, Result<(), String>) {
        self.order(case);
        self.run(case, id)
    }
}

/// Seeds every run tries, each for [`FIXED_CASES`] cases, before one fresh
/// seed: a regression a fixed seed once caught is caught on every run, and
/// the fresh seed keeps finding new cases. Add a seed here when a fresh one
/// finds a failure worth keeping.
const FIXED_SEEDS: [u64; 3] = [0x5eed_0001, 0x9e37_79b9_7f4a_7c15, 0x0dd5_eed5_1234_5678];
const FIXED_CASES: u64 = 1000;

#[test]
fn guarded_calls_touch_only_what_the_kernel_would_inside_the_root() {
    let _ = lib();
    let first = env_u64("FSGUARD_FUZZ_FIRST").unwrap_or(0);
    let exact = env_u64("FSGUARD_FUZZ_CASES");
    let budget = Duration::from_secs(env_u64("FSGUARD_FUZZ_SECS").unwrap_or(25));
    // A seed given is run alone (to reproduce); else the fixed seeds, then
    // a fresh one from the clock, printed.
    let runs: Vec<(u64, Option<u64>)> = match env_u64("FSGUARD_FUZZ_SEED") {
        Some(seed) => vec![(seed, exact)],
        None => {
            let t = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap();
            let fresh = (t.as_nanos() as u64) ^ ((std::process::id() as u64) << 32);
            FIXED_SEEDS
                .iter()
                .map(|&s| (s, Some(exact.unwrap_or(FIXED_CASES))))
                .chain([(fresh, exact)])
                .collect()
        }
    };
    let mut failed = Vec::new();
    for (seed, exact) in runs {
        if let Err(e) = fuzz_seed(seed, first, exact, budget) {
            failed.push(e);
        }
    }
    if !failed.is_empty() {
        panic!("{}", failed.join("\n\n"));
    }
}

/// Runs the cases of one seed from case `first`: exactly `exact` of them,
/// else until `budget` has passed (and at least 200); `Err` names every
/// failing case.
fn fuzz_seed(seed: u64, first: u64, exact: Option<u64>, budget: Duration) -> Result<(), String> {
    let strict_errno = std::env::var_os("FSGUARD_FUZZ_STRICT_ERRNO").is_some();
    const MIN_CASES: u64 = 200;
    let max_failures = env_u64("FSGUARD_FUZZ_MAX_FAILURES").unwrap_or(5) as usize;
    eprintln!("fuzz: seed {seed} (FSGUARD_FUZZ_SEED={seed} to repeat)");

    // Case i runs on disk when i % disk_every == 0, else on tmpfs (if any).
    let (disk, shm) = bases();
    let disk_every = env_u64("FSGUARD_FUZZ_DISK_EVERY").unwrap_or(6).max(1);
    let mut on_disk = Fuzz::new(&disk);
    let mut on_shm = shm.as_deref().map(Fuzz::new);
    let where_of = |i: u64| -> (bool, &Path) {
        match &shm {
            Some(p) if i % disk_every != 0 => (false, p),
            _ => (true, &disk),
        }
    };
    let started = Instant::now();
    let mut tried = 0u64;
    let mut failures: Vec<String> = Vec::new();
    let mut errno_notes: Vec<String> = Vec::new();
    let mut errno_count = 0usize;
    let mut kinds: BTreeMap<String, usize> = BTreeMap::new();
    let mut ahead = std::collections::VecDeque::new();
    let mut next = first;
    let mut disk_cases = 0u64;
    loop {
        let done = match exact {
            Some(n) => tried >= n,
            None => tried >= MIN_CASES && started.elapsed() >= budget,
        };
        if done || failures.len() >= max_failures {
            break;
        }
        // Keep the builders a few cases ahead.
        while ahead.len() < 4 && exact.is_none_or(|n| next < first + n) {
            let case = gen_case(case_seed(seed, next));
            match (where_of(next).0, on_shm.as_mut()) {
                (false, Some(f)) => f.order(&case),
                _ => on_disk.order(&case),
            }
            ahead.push_back((next, case));
            next += 1;
        }
        let (i, case) = ahead.pop_front().unwrap();
        let (disk_case, base) = where_of(i);
        disk_cases += u64::from(disk_case);
        let (b, g, verdict) = match (disk_case, on_shm.as_mut()) {
            (false, Some(f)) => f.run(&case, i),
            _ => on_disk.run(&case, i),
        };
        tried += 1;
        *kinds
            .entry(
                if b.ok {
                    if touched_outside(&b) {
                        "bare ok, outside"
                    } else {
                        "bare ok, inside"
                    }
                } else {
                    "bare failed"
                }
                .to_string(),
            )
            .or_default() += 1;
        if let Err(why) = verdict {
            // Alone, in fresh runners: does it need the earlier cases?
            let mut fresh = Fuzz::new(base);
            let (_, g2, v2) = fresh.one(&case, i);
            let alone = v2.is_err();
            let note = format!(
                "{why}: seed {seed} case {i}, under {} ({})\n  reproduce: FSGUARD_FUZZ_SEED={seed} FSGUARD_FUZZ_CASES={} cargo test --test fuzz_resolve\n{}  runner line: {}\n  bare:    {}\n  guarded: {}\n",
                base.display(),
                if alone {
                    "reproduces alone in fresh runners".to_string()
                } else {
                    format!(
                        "does NOT reproduce alone in fresh runners: it depends on library state left by earlier cases; alone the guarded run gave {}",
                        g2.show()
                    )
                },
                i + 1,
                case.show(),
                case.line(i, Path::new("/T")),
                b.show(),
                g.show()
            );
            if why.starts_with("ERRNO") && alone && !strict_errno {
                errno_count += 1;
                if errno_notes.len() < 3 {
                    errno_notes.push(note);
                }
            } else {
                failures.push(note);
            }
        }
    }
    eprintln!(
        "fuzz: {tried} cases tried (seed {seed}) in {:.1} s ({} on {}, the rest on {})",
        started.elapsed().as_secs_f64(),
        disk_cases,
        disk.display(),
        shm.as_deref().unwrap_or(Path::new("-")).display()
    );
    eprintln!("fuzz: {kinds:?}");
    if errno_count > 0 {
        eprintln!(
            "fuzz: {errno_count} case(s) where both runs failed, changed nothing, but with \
             different errnos (not a failure; FSGUARD_FUZZ_STRICT_ERRNO=1 makes them one); first ones:\n\n{}",
            errno_notes.join("\n")
        );
    }
    drop(on_disk);
    drop(on_shm);
    if !failures.is_empty() {
        return Err(format!(
            "fuzz: {} failing case(s) among {tried} (seed {seed}):\n\n{}",
            failures.len(),
            failures.join("\n")
        ));
    }
    Ok(())
}

mod case;
mod judge;
mod observe;
mod runner;
mod tree;
use case::*;
use judge::*;
use observe::*;
use runner::*;
use tree::*;
