//! The PRNG and the random trees (generation, building, display).

use super::*;

// ---------------------------------------------------------------------------
// PRNG
// ---------------------------------------------------------------------------

pub(crate) struct Rng(pub(crate) u64);

impl Rng {
    pub(crate) fn new(seed: u64) -> Rng {
        let mut r = Rng(seed ^ 0x9e37_79b9_7f4a_7c15);
        for _ in 0..4 {
            r.next();
        }
        r
    }
    pub(crate) fn next(&mut self) -> u64 {
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
    pub(crate) fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    /// True with probability `pct` percent.
    pub(crate) fn pct(&mut self, pct: usize) -> bool {
        self.below(100) < pct
    }
    pub(crate) fn pick<'a, T>(&mut self, v: &'a [T]) -> &'a T {
        &v[self.below(v.len())]
    }
}

pub(crate) fn case_seed(seed: u64, i: u64) -> u64 {
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
pub(crate) const TOK: &str = "{T}";

#[derive(Clone, Debug)]
pub(crate) enum Kind {
    Dir,
    File(String),
    Link(String),
}

#[derive(Clone, Debug)]
pub(crate) struct Node {
    pub(crate) rel: String,
    pub(crate) kind: Kind,
}

#[derive(Clone, Debug)]
pub(crate) struct Tree {
    pub(crate) nodes: Vec<Node>,
}

pub(crate) fn parent_of(rel: &str) -> &str {
    rel.rfind('/').map_or("", |i| &rel[..i])
}

pub(crate) fn join(dir: &str, name: &str) -> String {
    if dir.is_empty() {
        name.to_string()
    } else {
        format!("{dir}/{name}")
    }
}

pub(crate) fn depth(rel: &str) -> usize {
    if rel.is_empty() {
        0
    } else {
        rel.split('/').count()
    }
}

/// The relative path from directory `from` to `to` (both relative to t).
pub(crate) fn relpath(from: &str, to: &str) -> String {
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
    pub(crate) fn get(&self, rel: &str) -> Option<&Node> {
        self.nodes.iter().find(|n| n.rel == rel)
    }
    pub(crate) fn is_dir(&self, rel: &str) -> bool {
        rel.is_empty()
            || matches!(
                self.get(rel),
                Some(Node {
                    kind: Kind::Dir,
                    ..
                })
            )
    }
    pub(crate) fn children(&self, dir: &str) -> Vec<&Node> {
        self.nodes
            .iter()
            .filter(|n| parent_of(&n.rel) == dir)
            .collect()
    }
    pub(crate) fn dirs(&self) -> Vec<String> {
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
    pub(crate) fn resolve(
        &self,
        dir: &str,
        path: &str,
        follow: bool,
        budget: &mut usize,
    ) -> Option<String> {
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

pub(crate) const DIR_NAMES: &[&str] = &["a", "b", "c", "d"];
pub(crate) const FILE_NAMES: &[&str] = &["f", "g", "h"];
pub(crate) const LINK_NAMES: &[&str] = &["l", "m", "k", "s", "z"];
pub(crate) const NEW_NAMES: &[&str] = &["n0", "n1", "nx"];

pub(crate) fn gen_tree(rng: &mut Rng) -> Tree {
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
pub(crate) fn build(t: &Tree, tdir: &Path, final_t: &Path) -> std::io::Result<()> {
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

pub(crate) fn show_tree(t: &Tree) -> String {
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
