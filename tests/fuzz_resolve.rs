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
//! prints the seed, the case number and the case. `FSGUARD_FUZZ_SEED=S`
//! fixes the seed (default: from the clock), `FSGUARD_FUZZ_FIRST=i` starts
//! at case i (a case depends only on the seed and its number),
//! `FSGUARD_FUZZ_CASES=n` runs exactly n cases (no time limit),
//! `FSGUARD_FUZZ_SECS` changes the time budget (default 25 s, at least 200
//! cases), `FSGUARD_FUZZ_DISK_EVERY=k` runs every k-th case on disk (1: all),
//! `FSGUARD_FUZZ_MAX_FAILURES` how many failures end the run (default 5).
//! A state-dependent failure needs the cases before it, on the same
//! filesystem, and the same inode numbers coming back, so it may need a few
//! runs with the same seed to show again.

#![cfg(target_os = "linux")]

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
// PRNG
// ---------------------------------------------------------------------------

struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Rng {
        let mut r = Rng(seed ^ 0x9e37_79b9_7f4a_7c15);
        for _ in 0..4 {
            r.next();
        }
        r
    }
    fn next(&mut self) -> u64 {
        // xorshift64*
        let mut x = self.0;
        if x == 0 {
            x = 0x2545_f491_4f6c_dd1d;
        }
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    /// True with probability `pct` percent.
    fn pct(&mut self, pct: usize) -> bool {
        self.below(100) < pct
    }
    fn pick<'a, T>(&mut self, v: &'a [T]) -> &'a T {
        &v[self.below(v.len())]
    }
}

fn case_seed(seed: u64, i: u64) -> u64 {
    let mut z = seed ^ i.wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

// ---------------------------------------------------------------------------
// Trees
// ---------------------------------------------------------------------------

/// Paths in a tree and in a case are relative to `t`; an absolute path or
/// link target starts with `{T}`, replaced by the real path of `t`.
const TOK: &str = "{T}";

#[derive(Clone, Debug)]
enum Kind {
    Dir,
    File(String),
    Link(String),
}

#[derive(Clone, Debug)]
struct Node {
    rel: String,
    kind: Kind,
}

#[derive(Clone, Debug)]
struct Tree {
    nodes: Vec<Node>,
}

fn parent_of(rel: &str) -> &str {
    rel.rfind('/').map_or("", |i| &rel[..i])
}

fn join(dir: &str, name: &str) -> String {
    if dir.is_empty() {
        name.to_string()
    } else {
        format!("{dir}/{name}")
    }
}

fn depth(rel: &str) -> usize {
    if rel.is_empty() {
        0
    } else {
        rel.split('/').count()
    }
}

/// The relative path from directory `from` to `to` (both relative to t).
fn relpath(from: &str, to: &str) -> String {
    let f: Vec<&str> = from.split('/').filter(|s| !s.is_empty()).collect();
    let t: Vec<&str> = to.split('/').filter(|s| !s.is_empty()).collect();
    let common = f.iter().zip(&t).take_while(|(a, b)| a == b).count();
    let mut parts: Vec<&str> = vec![".."; f.len() - common];
    parts.extend(&t[common..]);
    if parts.is_empty() {
        ".".to_string()
    } else {
        parts.join("/")
    }
}

impl Tree {
    fn get(&self, rel: &str) -> Option<&Node> {
        self.nodes.iter().find(|n| n.rel == rel)
    }
    fn is_dir(&self, rel: &str) -> bool {
        rel.is_empty()
            || matches!(
                self.get(rel),
                Some(Node {
                    kind: Kind::Dir,
                    ..
                })
            )
    }
    fn children(&self, dir: &str) -> Vec<&Node> {
        self.nodes
            .iter()
            .filter(|n| parent_of(&n.rel) == dir)
            .collect()
    }
    fn dirs(&self) -> Vec<String> {
        let mut v = vec![String::new()];
        v.extend(
            self.nodes
                .iter()
                .filter(|n| matches!(n.kind, Kind::Dir))
                .map(|n| n.rel.clone()),
        );
        v
    }

    /// Where `path` leads from directory `dir`, as far as the walk can tell
    /// (None: missing, a loop, a non-directory in the middle, above t).
    fn resolve(&self, dir: &str, path: &str, follow: bool, budget: &mut usize) -> Option<String> {
        let (mut cur, rest) = match path.strip_prefix(TOK) {
            Some(r) => (String::new(), r),
            None => (dir.to_string(), path),
        };
        let comps: Vec<&str> = rest.split('/').filter(|c| !c.is_empty()).collect();
        let trailing = rest.ends_with('/');
        for (i, c) in comps.iter().enumerate() {
            let last = i + 1 == comps.len();
            if !self.is_dir(&cur) {
                return None;
            }
            match *c {
                "." => {}
                ".." => {
                    if cur.is_empty() {
                        return None;
                    }
                    cur = parent_of(&cur).to_string();
                }
                name => {
                    let next = join(&cur, name);
                    match &self.get(&next)?.kind {
                        Kind::Link(target) if !last || follow || trailing => {
                            if *budget == 0 {
                                return None;
                            }
                            *budget -= 1;
                            cur = self.resolve(&cur, target, true, budget)?;
                        }
                        _ => cur = next,
                    }
                }
            }
        }
        Some(cur)
    }
}

const DIR_NAMES: &[&str] = &["a", "b", "c", "d"];
const FILE_NAMES: &[&str] = &["f", "g", "h"];
const LINK_NAMES: &[&str] = &["l", "m", "k", "s", "z"];
const NEW_NAMES: &[&str] = &["n0", "n1", "nx"];

fn gen_tree(rng: &mut Rng) -> Tree {
    let mut t = Tree {
        nodes: vec![
            Node {
                rel: "root".into(),
                kind: Kind::Dir,
            },
            Node {
                rel: "outside".into(),
                kind: Kind::Dir,
            },
        ],
    };
    let free = |t: &Tree, dir: &str, names: &[&str], rng: &mut Rng| -> Option<String> {
        let start = rng.below(names.len());
        (0..names.len())
            .map(|k| join(dir, names[(start + k) % names.len()]))
            .find(|r| t.get(r).is_none())
    };
    for _ in 0..2 + rng.below(4) {
        let dirs: Vec<String> = t
            .dirs()
            .into_iter()
            .filter(|d| !d.is_empty() && depth(d) < 3)
            .collect();
        let p = rng.pick(&dirs).clone();
        if let Some(rel) = free(&t, &p, DIR_NAMES, rng) {
            t.nodes.push(Node {
                rel,
                kind: Kind::Dir,
            });
        }
    }
    for _ in 0..3 + rng.below(4) {
        let dirs = t.dirs();
        let p = rng.pick(&dirs).clone();
        if let Some(rel) = free(&t, &p, FILE_NAMES, rng) {
            let kind = Kind::File(format!("data:{rel}\n"));
            t.nodes.push(Node { rel, kind });
        }
    }
    // Links: names first, targets after, so a target may be a later link
    // (chains and loops).
    let mut links = Vec::new();
    for _ in 0..3 + rng.below(6) {
        let dirs = t.dirs();
        // Mostly in root, where they are the interesting part.
        let p = if rng.pct(60) {
            let inside: Vec<String> = dirs
                .iter()
                .filter(|d| d.starts_with("root"))
                .cloned()
                .collect();
            rng.pick(&inside).clone()
        } else {
            rng.pick(&dirs).clone()
        };
        if let Some(rel) = free(&t, &p, LINK_NAMES, rng) {
            t.nodes.push(Node {
                rel: rel.clone(),
                kind: Kind::Link(String::new()),
            });
            links.push(rel);
        }
    }
    let all: Vec<String> = t.nodes.iter().map(|n| n.rel.clone()).collect();
    let dirs = t.dirs();
    for l in &links {
        let here = parent_of(l).to_string();
        let target_rel = match rng.below(10) {
            // A missing name, in a random directory or below a missing one.
            0 => {
                let d = rng.pick(&dirs).clone();
                join(&d, rng.pick::<&str>(NEW_NAMES))
            }
            1 => {
                let d = join(rng.pick(&dirs).as_str(), "nodir");
                join(&d, rng.pick::<&str>(NEW_NAMES))
            }
            // Itself, or the tree's own top directories.
            2 if rng.pct(30) => l.clone(),
            2 => rng.pick(&["root", "outside", "root", ""]).to_string(),
            _ => rng.pick(&all).clone(),
        };
        let mut target = if rng.pct(40) || target_rel.is_empty() {
            format!("{TOK}/{target_rel}")
        } else {
            relpath(&here, &target_rel)
        };
        if target.ends_with('/') {
            target.pop();
        }
        match rng.below(20) {
            0 => target.push('/'),
            1 => target.push_str("/."),
            2 if !target.starts_with(TOK) => target = format!("./{target}"),
            _ => {}
        }
        if let Some(n) = t.nodes.iter_mut().find(|n| &n.rel == l) {
            n.kind = Kind::Link(target);
        }
    }
    t
}

/// Builds `t` in `tdir`; absolute links name `final_t`, where it will be.
fn build(t: &Tree, tdir: &Path, final_t: &Path) -> std::io::Result<()> {
    let tstr = final_t.to_str().unwrap();
    for n in &t.nodes {
        let p = tdir.join(&n.rel);
        match &n.kind {
            Kind::Dir => std::fs::create_dir(&p)?,
            Kind::File(c) => std::fs::write(&p, c)?,
            Kind::Link(target) => std::os::unix::fs::symlink(target.replace(TOK, tstr), &p)?,
        }
    }
    Ok(())
}

fn show_tree(t: &Tree) -> String {
    let mut s = String::new();
    for n in &t.nodes {
        match &n.kind {
            Kind::Dir => {
                let _ = writeln!(s, "    {}/", n.rel);
            }
            Kind::File(_) => {
                let _ = writeln!(s, "    {}", n.rel);
            }
            Kind::Link(target) => {
                let _ = writeln!(s, "    {} -> {target}", n.rel);
            }
        }
    }
    s
}

// ---------------------------------------------------------------------------
// Cases
// ---------------------------------------------------------------------------

#[derive(Clone, Debug)]
struct Case {
    tree: Tree,
    cwd: String,
    d1: Option<(char, String)>,
    d2: Option<(char, String)>,
    call: &'static str,
    args: Vec<String>,
}

impl Case {
    fn line(&self, id: u64, tdir: &Path) -> String {
        let t = tdir.to_str().unwrap();
        let d = |d: &Option<(char, String)>| match d {
            None => "-".to_string(),
            Some((k, p)) => format!("{k}:{}", if p.is_empty() { "@" } else { p }),
        };
        let mut s = format!(
            "{id} {} {} {} {}",
            tdir.join(&self.cwd).display(),
            d(&self.d1),
            d(&self.d2),
            self.call
        );
        for a in &self.args {
            s.push(' ');
            s.push_str(if a.is_empty() { "@" } else { a });
        }
        s.replace(TOK, t)
    }

    fn show(&self) -> String {
        let d = |d: &Option<(char, String)>| match d {
            None => "AT_FDCWD".to_string(),
            Some(('R', p)) => format!("open({p:?}, O_RDONLY|O_DIRECTORY)"),
            Some((_, p)) => format!("open({p:?}, O_PATH|O_DIRECTORY)"),
        };
        format!(
            "  tree (t = {TOK}; root = t/root):\n{}  cwd: t/{}\n  dirfd1: {}\n  dirfd2: {}\n  call: {} {:?}\n",
            show_tree(&self.tree),
            self.cwd,
            d(&self.d1),
            d(&self.d2),
            self.call,
            self.args
        )
    }
}

/// A path from directory `start` (relative to t), by a random walk.
/// `fresh`: often end on a missing name (for creating calls).
fn gen_path(rng: &mut Rng, t: &Tree, start: &str, fresh: bool) -> String {
    if rng.pct(1) {
        return String::new();
    }
    let absolute = rng.pct(25);
    let mut out = if absolute {
        TOK.to_string()
    } else {
        String::new()
    };
    let mut cur: Option<String> = Some(if absolute {
        String::new()
    } else {
        start.to_string()
    });
    let steps = 1 + rng.below(4);
    let mut comps: Vec<String> = Vec::new();
    for step in 0..steps {
        let last = step + 1 == steps;
        let Some(c) = cur.clone() else { break };
        let kids = t.children(&c);
        let r = rng.below(100);
        let comp = if fresh && last && rng.pct(60) {
            rng.pick(NEW_NAMES).to_string()
        } else if r < 8 {
            ".".to_string()
        } else if r < 20 && !c.is_empty() {
            "..".to_string()
        } else if r < 28 || kids.is_empty() {
            rng.pick(NEW_NAMES).to_string()
        } else {
            let k = rng.pick(&kids);
            k.rel.rsplit('/').next().unwrap().to_string()
        };
        cur = match comp.as_str() {
            "." => Some(c),
            ".." => Some(parent_of(&c).to_string()),
            name => {
                let next = join(&c, name);
                match t.get(&next).map(|n| &n.kind) {
                    Some(Kind::Dir) => Some(next),
                    Some(Kind::Link(_)) => {
                        let mut budget = 40;
                        t.resolve(&c, name, true, &mut budget)
                            .filter(|r| t.is_dir(r))
                    }
                    _ => None,
                }
            }
        };
        comps.push(comp);
    }
    for (i, c) in comps.iter().enumerate() {
        if i > 0 || absolute {
            out.push_str(if rng.pct(8) { "//" } else { "/" });
        }
        out.push_str(c);
    }
    match rng.below(100) {
        0..=11 => out.push('/'),
        12..=15 => out.push_str("/."),
        _ => {}
    }
    out
}

/// A directory to start from: a real directory, sometimes named through a
/// link (the walk tells where it lands).
fn gen_dir(rng: &mut Rng, t: &Tree) -> (String, String) {
    let dirs = t.dirs();
    let d = rng.pick(&dirs).clone();
    if rng.pct(20) {
        let links: Vec<&Node> = t
            .nodes
            .iter()
            .filter(|n| matches!(n.kind, Kind::Link(_)))
            .collect();
        if !links.is_empty() {
            let l = rng.pick(&links);
            let mut budget = 40;
            if let Some(r) = t
                .resolve("", &l.rel, true, &mut budget)
                .filter(|r| t.is_dir(r))
            {
                return (format!("{TOK}/{}", l.rel), r);
            }
        }
    }
    let name = if d.is_empty() {
        TOK.to_string()
    } else {
        format!("{TOK}/{d}")
    };
    (name, d)
}

const OPEN_FLAGS: &[&str] = &[
    "r", "r", "w", "b", "wc", "wct", "bc", "rc", "rt", "wcx", "bcx", "rn", "wn", "wcn", "wcxn",
    "rd", "rnd", "wd", "wa", "wca", "wt", "rdc",
];

fn gen_case(seed: u64) -> Case {
    let rng = &mut Rng::new(seed);
    let tree = gen_tree(rng);
    let real_dirs = tree.dirs();
    let cwd = rng.pick(&real_dirs).clone();
    const CALLS: &[&str] = &[
        "open",
        "open",
        "openat",
        "openat",
        "creat",
        "fopen",
        "opendir",
        "unlink",
        "unlinkat",
        "rmdir",
        "mkdir",
        "mkdirat",
        "rename",
        "renameat",
        "symlink",
        "symlinkat",
        "link",
        "linkat",
        "chmod",
        "fchmodat",
        "truncate",
        "utimensat",
        "utimensat",
    ];
    let call = *rng.pick(CALLS);
    let at = call.ends_with("at");
    let two = matches!(call, "renameat" | "linkat");
    let mut d1 = None;
    let mut d2 = None;
    let mut start1 = cwd.clone();
    let mut start2 = cwd.clone();
    let dirfd = |rng: &mut Rng, start: &mut String| {
        if rng.pct(15) {
            return None; // AT_FDCWD
        }
        let (name, lands) = gen_dir(rng, &tree);
        *start = lands;
        Some((if rng.pct(50) { 'R' } else { 'P' }, name))
    };
    if at {
        d1 = dirfd(rng, &mut start1);
        if two {
            d2 = dirfd(rng, &mut start2);
        }
    }
    let p = |rng: &mut Rng, start: &str, fresh: bool| gen_path(rng, &tree, start, fresh);
    let args: Vec<String> = match call {
        "open" => vec![p(rng, &cwd, false), rng.pick(OPEN_FLAGS).to_string()],
        "openat" => vec![p(rng, &start1, false), rng.pick(OPEN_FLAGS).to_string()],
        "creat" => {
            let fresh = rng.pct(40);
            vec![p(rng, &cwd, fresh)]
        }
        "fopen" => vec![
            p(rng, &cwd, false),
            rng.pick(&["r", "w", "a", "r+", "wx", "a+", "re"])
                .to_string(),
        ],
        "opendir" | "unlink" | "rmdir" | "chmod" | "truncate" => vec![p(rng, &cwd, false)],
        "mkdir" => vec![p(rng, &cwd, true)],
        "unlinkat" => vec![
            p(rng, &start1, false),
            rng.pick(&["-", "-", "R"]).to_string(),
        ],
        "mkdirat" => vec![p(rng, &start1, true)],
        "rename" | "link" => vec![p(rng, &cwd, false), p(rng, &cwd, true)],
        "renameat" => vec![p(rng, &start1, false), p(rng, &start2, true)],
        "linkat" => vec![
            p(rng, &start1, false),
            p(rng, &start2, true),
            rng.pick(&["-", "f"]).to_string(),
        ],
        "symlink" | "symlinkat" => {
            let target = rng
                .pick(&["x", "../x", "{T}/outside/f", "{T}/root/f", "."])
                .to_string();
            let start = if call == "symlink" { &cwd } else { &start1 };
            vec![target, p(rng, start, true)]
        }
        "fchmodat" => vec![p(rng, &start1, false), rng.pick(&["-", "n"]).to_string()],
        "utimensat" => {
            let fl = rng.pick(&["-", "n", "e"]).to_string();
            let path = if fl == "e" && rng.pct(60) {
                String::new()
            } else {
                p(rng, &start1, false)
            };
            vec![path, fl]
        }
        _ => unreachable!(),
    };
    Case {
        tree,
        cwd,
        d1,
        d2,
        call,
        args,
    }
}

// ---------------------------------------------------------------------------
// Runners
// ---------------------------------------------------------------------------

struct Runner {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    stderr: Receiver<String>,
}

impl Runner {
    fn start(prog: &Path, guarded: bool, s: &Path) -> Runner {
        let root = s.join(ROOT);
        let mut cmd = if guarded {
            guarded_cmd(prog, &[("FSGUARD_ROOT", root.to_str().unwrap())])
        } else {
            bare_cmd(prog)
        };
        cmd.arg(if guarded { "guarded" } else { "bare" })
            .env("PATH", "/usr/bin:/bin")
            .current_dir(s)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = cmd.spawn().expect("spawn fuzz runner");
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        let se = child.stderr.take().unwrap();
        let (tx, rx) = channel();
        std::thread::spawn(move || {
            for l in BufReader::new(se).lines() {
                let Ok(l) = l else { break };
                if tx.send(l).is_err() {
                    break;
                }
            }
        });
        let mut r = Runner {
            child,
            stdin,
            stdout,
            stderr: rx,
        };
        // Wait until it runs (the library loads the policy, which needs the
        // root, before main): the tree is rebuilt right after.
        let (reply, _) = r.run(u64::MAX, &format!("{} {} - - nop", u64::MAX, s.display()));
        assert!(reply.contains("errno=38"), "runner not ready: {reply}");
        r
    }

    /// Sends one case line; its answer and the stderr lines of the call
    /// (after the dirfd opens).
    fn run(&mut self, id: u64, line: &str) -> (String, Vec<String>) {
        let mut reply = String::new();
        let sent = writeln!(self.stdin, "{line}").and_then(|_| self.stdin.flush());
        if sent.is_ok() {
            let _ = self.stdout.read_line(&mut reply);
        }
        if reply.is_empty() {
            let status = self.child.wait();
            std::thread::sleep(Duration::from_millis(100));
            panic!(
                "fuzz runner died on case {id} ({status:?}): {line}\nstderr:\n{}",
                self.stderr.try_iter().collect::<Vec<_>>().join("\n")
            );
        }
        let end = format!("@@end {id}");
        let mut err = Vec::new();
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.stderr.recv_timeout(left) {
                Ok(l) if l == end => break,
                Ok(l) if l.starts_with("@@case ") => {}
                Ok(l) if l.starts_with("@@call ") => err.clear(),
                Ok(l) => err.push(l),
                Err(_) => break,
            }
        }
        (reply.trim_end().to_string(), err)
    }
}

impl Drop for Runner {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

// ---------------------------------------------------------------------------
// Observing a run
// ---------------------------------------------------------------------------

type Id = (u64, u64);

struct Walk {
    /// relative path (to S) → (identity, observable state)
    entries: BTreeMap<String, (Id, String)>,
    by_id: HashMap<Id, String>,
}

/// The tree `S/1` (the calls reach nothing else), paths relative to S.
fn walk(s: &Path) -> Walk {
    let mut w = Walk {
        entries: BTreeMap::new(),
        by_id: HashMap::new(),
    };
    walk_into(s, &s.join(TOP), &mut w);
    w
}

fn walk_into(s: &Path, p: &Path, w: &mut Walk) {
    let rel = p.strip_prefix(s).unwrap().to_string_lossy().into_owned();
    let Ok(md) = std::fs::symlink_metadata(p) else {
        return;
    };
    let ft = md.file_type();
    let mut st = if ft.is_dir() {
        format!("dir mode={:o}", md.mode() & 0o7777)
    } else if ft.is_symlink() {
        format!(
            "link -> {}",
            std::fs::read_link(p)
                .map(|t| t.display().to_string())
                .unwrap_or_default()
        )
    } else if ft.is_file() {
        format!(
            "file mode={:o} content={:?}",
            md.mode() & 0o7777,
            String::from_utf8_lossy(&std::fs::read(p).unwrap_or_default())
        )
    } else {
        format!("other mode={:o}", md.mode())
    };
    if md.mtime() == MAGIC_TIME {
        st.push_str(" mtime=MAGIC");
    }
    let id = (md.dev(), md.ino());
    w.by_id.entry(id).or_insert_with(|| rel.clone());
    w.entries.insert(rel, (id, st));
    if ft.is_dir() {
        if let Ok(rd) = std::fs::read_dir(p) {
            let mut v: Vec<PathBuf> = rd.flatten().map(|e| e.path()).collect();
            v.sort();
            for e in v {
                walk_into(s, &e, w);
            }
        }
    }
}

/// What changed: relative path → "removed" or its new state (with where
/// its inode was before, when elsewhere or new).
fn effects(pre: &Walk, post: &Walk) -> BTreeMap<String, String> {
    let mut e = BTreeMap::new();
    for (rel, (id, st)) in &post.entries {
        let origin = match pre.by_id.get(id) {
            Some(r) if r == rel => String::new(),
            Some(r) => format!(" from={r}"),
            None => " new".to_string(),
        };
        let now = format!("{st}{origin}");
        match pre.entries.get(rel) {
            Some((_, before)) if *before == now => {}
            _ => {
                e.insert(rel.clone(), now);
            }
        }
    }
    for rel in pre.entries.keys() {
        if !post.entries.contains_key(rel) {
            e.insert(rel.clone(), "removed".to_string());
        }
    }
    e
}

fn inside(rel: &str) -> bool {
    rel == ROOT || rel.strip_prefix(ROOT).is_some_and(|r| r.starts_with('/'))
}

/// A dev:ino from the runner, as a path relative to S ("?dev:ino" when it
/// is not in S at all).
fn name_of(id: &str, walks: &[&Walk]) -> Option<String> {
    let (d, i) = id.split_once(':')?;
    let id = (d.parse().ok()?, i.parse().ok()?);
    for w in walks {
        if let Some(r) = w.by_id.get(&id) {
            return Some(r.clone());
        }
    }
    Some(format!("?{}:{}", id.0, id.1))
}

#[derive(Clone, Debug, PartialEq)]
enum Probe {
    /// The object, by path.
    Obj(String),
    /// An entry: its path (directory holding it + name).
    Entry(String),
    /// Not resolvable (errno).
    Unresolved(i32),
}

impl Probe {
    fn outside(&self) -> bool {
        match self {
            Probe::Obj(p) | Probe::Entry(p) => !inside(p),
            Probe::Unresolved(_) => false,
        }
    }
}

fn parse_probe(s: &str, pre: &Walk) -> Probe {
    let f: Vec<&str> = s.splitn(4, ':').collect();
    match f.as_slice() {
        ["O", d, i] => Probe::Obj(name_of(&format!("{d}:{i}"), &[pre]).unwrap()),
        ["E", d, i, name] => {
            let dir = name_of(&format!("{d}:{i}"), &[pre]).unwrap();
            Probe::Entry(if dir.is_empty() {
                name.to_string()
            } else {
                format!("{dir}/{name}")
            })
        }
        ["X", e] => Probe::Unresolved(e.parse().unwrap_or(-1)),
        _ => Probe::Unresolved(-1),
    }
}

#[derive(Clone, Debug, PartialEq)]
struct DirOut {
    ok: bool,
    errno: i32,
    obj: Option<String>,
    probe: Option<Probe>,
}

#[derive(Clone, Debug)]
struct Outcome {
    d1: Option<DirOut>,
    d2: Option<DirOut>,
    ok: bool,
    errno: i32,
    obj: Option<String>,
    probes: Vec<Probe>,
    effects: BTreeMap<String, String>,
    blocked: Vec<String>,
    raw: String,
}

impl Outcome {
    fn show(&self) -> String {
        let mut s = format!(
            "ret={} errno={} obj={:?}",
            if self.ok { "ok" } else { "-1" },
            self.errno,
            self.obj
        );
        for (n, d) in [("dirfd1", &self.d1), ("dirfd2", &self.d2)] {
            if let Some(d) = d {
                let _ = write!(s, " {n}={d:?}");
            }
        }
        if !self.probes.is_empty() {
            let _ = write!(s, " probes={:?}", self.probes);
        }
        let _ = write!(s, " effects={:?}\n      runner: {}", self.effects, self.raw);
        for b in &self.blocked {
            let _ = write!(s, "\n      {b}");
        }
        s
    }
}

/// Builds trees and deletes used ones on a thread of its own: on a disk
/// filesystem that is most of a case's cost. A tree is built at
/// `S/stage/N/1/2/3/t` and renamed into place at `S/1` (its absolute
/// links already name `S/1/...`); a used one is renamed to `S/trash/N`
/// and deleted there.
struct Stager {
    s: PathBuf,
    jobs: Sender<(Option<Tree>, PathBuf)>,
    built: Receiver<PathBuf>,
    next: u64,
}

impl Stager {
    fn new(s: &Path) -> Stager {
        let (jobs, rx) = channel::<(Option<Tree>, PathBuf)>();
        let (tx, built) = channel();
        let top = s.to_path_buf();
        std::thread::spawn(move || {
            for (tree, dir) in rx {
                match tree {
                    Some(t) => {
                        let tdir = dir.join(TREE);
                        let built = std::fs::create_dir_all(&tdir)
                            .and_then(|_| build(&t, &tdir, &top.join(TREE)));
                        if built.is_err() || tx.send(dir).is_err() {
                            break;
                        }
                    }
                    None => {
                        let _ = std::fs::remove_dir_all(&dir);
                    }
                }
            }
        });
        for d in ["stage", "trash"] {
            std::fs::create_dir_all(s.join(d)).unwrap();
        }
        Stager {
            s: s.to_path_buf(),
            jobs,
            built,
            next: 0,
        }
    }

    /// Asks for a tree; trees come back in the order asked.
    fn order(&mut self, t: &Tree) {
        let dir = self.s.join("stage").join(self.next.to_string());
        self.next += 1;
        self.jobs.send((Some(t.clone()), dir)).unwrap();
    }

    /// Puts the next ordered tree in place; returns the path of `t`.
    fn install(&mut self) -> PathBuf {
        let dir = self.built.recv().expect("tree builder died");
        std::fs::rename(dir.join(TOP), self.s.join(TOP)).unwrap();
        self.jobs.send((None, dir)).unwrap();
        self.s.join(TREE)
    }

    /// Moves the used tree away.
    fn discard(&mut self) {
        let dir = self.s.join("trash").join(self.next.to_string());
        self.next += 1;
        std::fs::rename(self.s.join(TOP), &dir).unwrap();
        self.jobs.send((None, dir)).unwrap();
    }
}

/// Runs `case` in `r` on the next tree the stager has ready.
fn execute(r: &mut Runner, st: &mut Stager, case: &Case, id: u64) -> Outcome {
    let s = st.s.clone();
    let tdir = st.install();
    let pre = walk(&s);
    let (reply, err) = r.run(id, &case.line(id, &tdir));
    let post = walk(&s);
    st.discard();
    let fields: HashMap<&str, &str> = reply
        .split(' ')
        .skip(1)
        .filter_map(|kv| kv.split_once('='))
        .collect();
    let get = |k: &str| {
        *fields
            .get(k)
            .unwrap_or_else(|| panic!("runner answer without {k}: {reply}"))
    };
    let dir = |k: &str| -> Option<DirOut> {
        let v = get(k);
        if v == "-" {
            return None;
        }
        let (main, probe) = match v.split_once('|') {
            Some((m, p)) => (m, Some(parse_probe(p, &pre))),
            None => (v, None),
        };
        let f: Vec<&str> = main.split(':').collect();
        Some(DirOut {
            ok: f[0] == "0",
            errno: f[1].parse().unwrap(),
            obj: if f[2] == "-" {
                None
            } else {
                name_of(&format!("{}:{}", f[2], f[3]), &[&pre])
            },
            probe,
        })
    };
    let probes = match get("probes") {
        "-" => vec![],
        p => p.split(';').map(|x| parse_probe(x, &pre)).collect(),
    };
    Outcome {
        d1: dir("d1"),
        d2: dir("d2"),
        ok: get("ret") != "-1",
        errno: get("errno").parse().unwrap(),
        obj: match get("obj") {
            "-" => None,
            o => name_of(o, &[&post, &pre]),
        },
        probes,
        effects: effects(&pre, &post),
        blocked: err
            .into_iter()
            .filter(|l| l.contains("[fsguard] blocked"))
            .collect(),
        raw: reply,
    }
}

// ---------------------------------------------------------------------------
// Judging
// ---------------------------------------------------------------------------

fn touched_outside(b: &Outcome) -> bool {
    b.effects.iter().any(|(rel, st)| {
        !inside(rel)
            || st
                .split(" from=")
                .nth(1)
                .is_some_and(|from| !inside(from.split(' ').next().unwrap_or("")))
    }) || b.obj.as_deref().is_some_and(|o| !inside(o))
        || b.probes.iter().any(Probe::outside)
}

/// Checks a dirfd open; Err(verdict) when it went wrong.
fn judge_dirfd(kind: Option<char>, b: &Option<DirOut>, g: &Option<DirOut>) -> Result<(), String> {
    let (Some(k), Some(b), Some(g)) = (kind, b, g) else {
        return Ok(());
    };
    let outside = b.obj.as_deref().is_some_and(|o| !inside(o))
        || b.probe.as_ref().is_some_and(Probe::outside);
    if k == 'P' || !outside {
        if b.ok == g.ok && b.errno == g.errno && b.obj == g.obj {
            return Ok(());
        }
        if k == 'R' && !g.ok && g.errno == EACCES {
            return Err("FALSE REFUSAL (dirfd open)".into());
        }
        return Err("MISMATCH (dirfd open)".into());
    }
    // An O_RDONLY open of a directory outside: refused; the fallback O_PATH
    // open names the same directory as bare.
    if g.ok {
        return Err("FALSE ALLOW (dirfd open, a read outside)".into());
    }
    if g.errno == EACCES || (!b.ok && g.errno == b.errno) {
        if b.ok && g.obj != b.obj {
            return Err(
                "MISMATCH (dirfd open: the O_PATH fallback names another directory)".into(),
            );
        }
        return Ok(());
    }
    Err("MISMATCH (dirfd open errno)".into())
}

fn judge(case: &Case, b: &Outcome, g: &Outcome) -> Result<(), String> {
    judge_dirfd(case.d1.as_ref().map(|d| d.0), &b.d1, &g.d1)?;
    judge_dirfd(case.d2.as_ref().map(|d| d.0), &b.d2, &g.d2)?;
    // The call itself runs with equivalent dirfds only if both name the same.
    for (x, y) in [(&b.d1, &g.d1), (&b.d2, &g.d2)] {
        if let (Some(x), Some(y)) = (x, y) {
            if x.obj != y.obj {
                return Ok(());
            }
        }
    }
    let outside = touched_outside(b);
    let g_refused = !g.ok && g.errno == EACCES;
    // Trace lines must match the refusals the library made.
    if g_refused && (b.ok || b.errno != EACCES) && g.blocked.is_empty() {
        return Err("MISMATCH (EACCES without a blocked trace line)".into());
    }
    if g.ok && !g.blocked.is_empty() {
        return Err("MISMATCH (a blocked trace line on a call that succeeded)".into());
    }
    let g_out_effects = g.effects.keys().any(|r| !inside(r));
    if b.ok {
        if outside {
            if g.ok || g_out_effects {
                return Err("FALSE ALLOW".into());
            }
            if !g_refused || !g.effects.is_empty() {
                return Err("MISMATCH (bare touched outside; guarded failed otherwise)".into());
            }
            return Ok(());
        }
        if g_refused {
            return Err("FALSE REFUSAL".into());
        }
        if g.ok != b.ok || g.errno != b.errno || g.obj != b.obj || g.effects != b.effects {
            return Err("MISMATCH (inside: guarded did not do what bare did)".into());
        }
        return Ok(());
    }
    // Bare failed.
    if g.ok || !g.effects.is_empty() {
        return Err(if g_out_effects || (g.ok && outside) {
            "FALSE ALLOW (the kernel refused; guarded acted)".into()
        } else {
            "MISMATCH (the kernel refused; guarded acted)".into()
        });
    }
    if g.errno == b.errno {
        return Ok(());
    }
    if g_refused {
        if outside {
            return Ok(());
        }
        // "The call would have failed anyway": not a refusal that costs
        // anything, but not the kernel's answer either.
        return Err(
            "ERRNO (EACCES for a call the kernel fails anyway, with no probe outside)".into(),
        );
    }
    Err("ERRNO (both failed, nothing changed, another errno than the kernel's)".into())
}

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

#[test]
fn guarded_calls_touch_only_what_the_kernel_would_inside_the_root() {
    let _ = lib();
    let seed = env_u64("FSGUARD_FUZZ_SEED").unwrap_or_else(|| {
        let t = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap();
        (t.as_nanos() as u64) ^ ((std::process::id() as u64) << 32)
    });
    let first = env_u64("FSGUARD_FUZZ_FIRST").unwrap_or(0);
    let exact = env_u64("FSGUARD_FUZZ_CASES");
    let budget = Duration::from_secs(env_u64("FSGUARD_FUZZ_SECS").unwrap_or(25));
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
        panic!(
            "fuzz: {} failing case(s) among {tried} (seed {seed}):\n\n{}",
            failures.len(),
            failures.join("\n")
        );
    }
}
