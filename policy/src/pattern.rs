//! Compiled path patterns: plain paths match by components, globs by
//! components too, indexed by their literal prefix.
//!
//! A pattern covers what it names and everything beneath it. A plain path
//! (no glob syntax) is looked up per ancestor of the candidate, so its cost
//! does not grow with the number of rules and it never costs a regex. A glob
//! is split into components (`**` matches any number of them; `*`, `?` and
//! `[..]` stay within one) and filed under its literal leading directory:
//! only globs filed under an ancestor of the candidate are tried. Matching
//! allocates nothing and takes no lock, so it is safe in a forked child or a
//! signal handler, and compiling costs next to nothing at process start.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use crate::is_within;

/// Lists longer than this are looked up through a hash map.
const LINEAR_MAX: usize = 8;

/// Brace expansions one pattern may produce.
const MAX_EXPANSIONS: usize = 1024;

/// One component of a glob.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Comp {
    /// Matches exactly this name.
    Literal(Box<[u8]>),
    /// `*`, `?`, `[..]` within one name.
    Wild(Box<[u8]>),
    /// `**`: any number of names, none included.
    AnyDepth,
}

#[derive(Clone, Debug)]
struct Glob {
    /// Components after the literal prefix.
    rest: Box<[Comp]>,
    source: usize,
}

/// Entries keyed by a directory path: a short list, or a map when long.
#[derive(Clone, Debug, Default)]
struct ByPrefix<T> {
    list: Vec<(Box<[u8]>, T)>,
    map: HashMap<Box<[u8]>, usize, BuildHasherDefault<PathHasher>>,
    /// The deepest directory every key lies within: a path outside it
    /// matches nothing (the credential list, all under `$HOME`, is skipped
    /// in one comparison for a path elsewhere).
    common: Vec<u8>,
    /// The longest key: a longer ancestor of a path is not looked up.
    longest: usize,
}

impl<T> ByPrefix<T> {
    fn entry(&mut self, key: &[u8], new: impl FnOnce() -> T) -> &mut T {
        let i = match self.map.get(key) {
            Some(&i) => i,
            None => {
                self.common = if self.list.is_empty() {
                    key.to_vec()
                } else {
                    common_ancestor(&self.common, key).to_vec()
                };
                self.longest = self.longest.max(key.len());
                self.list.push((key.into(), new()));
                self.map.insert(key.into(), self.list.len() - 1);
                self.list.len() - 1
            }
        };
        &mut self.list[i].1
    }

    /// Orders the short list deepest key first (among the ancestors of one
    /// path a longer key is a deeper one), so that scanning it visits keys in
    /// the order the map walk does. Called once, after the last `entry`.
    fn seal(&mut self) {
        self.list.sort_by_key(|e| std::cmp::Reverse(e.0.len()));
        self.map.clear();
        for (i, (k, _)) in self.list.iter().enumerate() {
            self.map.insert(k.clone(), i);
        }
    }

    /// Visits the entries whose key is `path` or an ancestor of it and at
    /// least `min` bytes long, deepest first, whether the list is scanned or
    /// looked up in the map; stops at the first `Some`.
    fn find<'a, R>(
        &'a self,
        path: &[u8],
        min: usize,
        mut f: impl FnMut(&'a [u8], &'a T) -> Option<R>,
    ) -> Option<R> {
        if self.list.is_empty() || !is_within(path, &self.common) {
            return None;
        }
        if self.list.len() <= LINEAR_MAX {
            return self
                .list
                .iter()
                .take_while(|(k, _)| k.len() >= min)
                .filter(|(k, _)| is_within(path, k))
                .find_map(|(k, v)| f(k, v));
        }
        let mut end = path.len();
        if end > self.longest {
            // Start at the longest ancestor no longer than any key.
            end = path[..=self.longest]
                .iter()
                .rposition(|&b| b == b'/')
                .unwrap_or(0);
        }
        loop {
            let key: &[u8] = if end == 0 { b"/" } else { &path[..end] };
            if key.len() < min {
                return None;
            }
            if let Some(&i) = self.map.get(key) {
                let (k, v) = &self.list[i];
                if let Some(r) = f(k, v) {
                    return Some(r);
                }
            }
            if end == 0 {
                return None;
            }
            end = path[..end].iter().rposition(|&b| b == b'/').unwrap_or(0);
        }
    }
}

/// A fast hasher for path keys. The keys come from the policy, not from the
/// guarded program, so a keyed (DoS-resistant) hash buys nothing and costs
/// a SipHash per ancestor on every checked call.
#[derive(Default)]
struct PathHasher(u64);

impl Hasher for PathHasher {
    fn write(&mut self, bytes: &[u8]) {
        let mut h = self.0 ^ 0xcbf2_9ce4_8422_2325;
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            let w = u64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]);
            h = (h.rotate_left(5) ^ w).wrapping_mul(0x51_7cc1_b727_220a_95);
        }
        for &b in chunks.remainder() {
            h = (h.rotate_left(5) ^ u64::from(b)).wrapping_mul(0x51_7cc1_b727_220a_95);
        }
        self.0 = h;
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

/// A compiled list of patterns.
#[derive(Clone, Debug, Default)]
pub struct PatternSet {
    sources: Vec<String>,
    /// Plain paths -> source index.
    plain: ByPrefix<usize>,
    /// Literal glob prefixes -> the globs filed under them.
    globs: ByPrefix<Bucket>,
}

type IndexMap = HashMap<Box<[u8]>, Vec<usize>, BuildHasherDefault<PathHasher>>;

/// The globs filed under one literal prefix. A large bucket (many globs in
/// one directory, as relative `**/*.ext` rules of one config are) is also
/// indexed by what its last component requires of some name in the path:
/// that exact name, or the extension of `*.ext`. Matching then probes each
/// name of the path instead of trying every glob.
#[derive(Clone, Debug, Default)]
struct Bucket {
    globs: Vec<Glob>,
    by_name: IndexMap,
    by_ext: IndexMap,
    /// Globs the index cannot narrow.
    unindexed: Vec<usize>,
    indexed: bool,
}

/// The extension after the last `.` of a name (`key` for `a.b.key`).
fn extension(name: &[u8]) -> Option<&[u8]> {
    name.iter()
        .rposition(|&b| b == b'.')
        .map(|i| &name[i + 1..])
}

impl Bucket {
    fn index(&mut self) {
        if self.globs.len() <= LINEAR_MAX {
            return;
        }
        for (i, g) in self.globs.iter().enumerate() {
            match g.rest.last() {
                Some(Comp::Literal(name)) => self.by_name.entry(name.clone()).or_default().push(i),
                Some(Comp::Wild(w))
                    if w.len() > 2
                        && w[0] == b'*'
                        && w[1] == b'.'
                        && !w[2..]
                            .iter()
                            .any(|b| matches!(b, b'*' | b'?' | b'[' | b'\\' | b'.')) =>
                {
                    self.by_ext.entry(w[2..].into()).or_default().push(i)
                }
                _ => self.unindexed.push(i),
            }
        }
        self.indexed = true;
    }

    /// The source index of the first glob (in source order) matching `rest`.
    fn find(&self, rest: &[u8]) -> Option<usize> {
        if !self.indexed {
            return self
                .globs
                .iter()
                .find(|g| match_comps(&g.rest, rest))
                .map(|g| g.source);
        }
        let mut best: Option<usize> = None;
        let mut try_glob = |i: usize| {
            let g = &self.globs[i];
            if best.is_none_or(|b| g.source < b) && match_comps(&g.rest, rest) {
                best = Some(g.source);
            }
        };
        for &i in &self.unindexed {
            try_glob(i);
        }
        for name in rest.split(|&b| b == b'/').filter(|n| !n.is_empty()) {
            for &i in self.by_name.get(name).into_iter().flatten() {
                try_glob(i);
            }
            if let Some(ext) = extension(name) {
                for &i in self.by_ext.get(ext).into_iter().flatten() {
                    try_glob(i);
                }
            }
        }
        best
    }
}

/// True when `s` uses glob syntax.
pub(crate) fn has_glob_meta(s: &str) -> bool {
    s.bytes()
        .any(|b| matches!(b, b'*' | b'?' | b'[' | b'{' | b'\\'))
}

impl PatternSet {
    /// Compiles absolute patterns. Errors name the offending pattern.
    pub fn new<I, S>(patterns: I) -> Result<PatternSet, String>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let mut set = PatternSet::default();
        for p in patterns {
            let p = p.as_ref();
            if !p.starts_with('/') {
                return Err(format!("pattern {p:?} is not absolute"));
            }
            let idx = set.sources.len();
            set.sources.push(p.to_string());
            if !has_glob_meta(p) {
                let plain = normalize_plain(p);
                set.plain.entry(&plain, || idx);
                continue;
            }
            let mut expanded = Vec::new();
            expand_braces(p.as_bytes(), &mut expanded)
                .map_err(|e| format!("bad glob {p:?}: {e}"))?;
            for e in expanded {
                let comps = compile(&e).map_err(|err| format!("bad glob {p:?}: {err}"))?;
                let lit = comps
                    .iter()
                    .take_while(|c| matches!(c, Comp::Literal(_)))
                    .count();
                let mut prefix = Vec::new();
                for c in &comps[..lit] {
                    if let Comp::Literal(name) = c {
                        prefix.push(b'/');
                        prefix.extend_from_slice(name);
                    }
                }
                if prefix.is_empty() {
                    prefix.push(b'/');
                }
                let glob = Glob {
                    rest: comps[lit..].into(),
                    source: idx,
                };
                set.globs.entry(&prefix, Bucket::default).globs.push(glob);
            }
        }
        for (_, bucket) in &mut set.globs.list {
            bucket.index();
        }
        set.plain.seal();
        set.globs.seal();
        Ok(set)
    }

    /// True when the set has no patterns.
    pub fn is_empty(&self) -> bool {
        self.sources.is_empty()
    }

    /// The patterns, as compiled.
    pub fn patterns(&self) -> impl Iterator<Item = &str> {
        self.sources.iter().map(String::as_str)
    }

    /// The pattern that covers `path`, if any: when several do, the most
    /// specific one, whose literal leading directory (all of a plain path)
    /// is deepest; of those, the one listed first. The same pattern however
    /// many the list holds and in whatever order the others are listed, so
    /// a trace names the rule nearest the path.
    pub fn find(&self, path: &[u8]) -> Option<&str> {
        let plain = self.plain.find(path, 0, |k, &i| Some((k.len(), i)));
        // Only a glob filed at least as deep as the plain hit can beat it.
        let glob = self
            .globs
            .find(path, plain.map_or(0, |(len, _)| len), |prefix, globs| {
                let rest = if prefix == b"/" {
                    &path[1..]
                } else {
                    &path[prefix.len()..]
                };
                let rest = rest.strip_prefix(b"/").unwrap_or(rest);
                globs.find(rest).map(|i| (prefix.len(), i))
            });
        let (_, i) = match (plain, glob) {
            (Some(p), Some(g)) => {
                if g.0 > p.0 || (g.0 == p.0 && g.1 < p.1) {
                    g
                } else {
                    p
                }
            }
            (p, g) => p.or(g)?,
        };
        Some(&self.sources[i])
    }

    /// True when some pattern covers `path`.
    pub fn matches(&self, path: &[u8]) -> bool {
        self.find(path).is_some()
    }

    /// A pattern anchored at or beneath `dir` (a plain path, or a glob's
    /// literal leading directory): moving `dir` would move what it covers.
    /// Linear in the patterns; meant for renames, not the hot path.
    pub fn find_below(&self, dir: &[u8]) -> Option<&str> {
        // The first such pattern in config order (the lists are sorted by
        // depth, not source).
        if let Some(i) = self
            .plain
            .list
            .iter()
            .filter(|(k, _)| is_within(k, dir))
            .map(|(_, i)| *i)
            .min()
        {
            return Some(&self.sources[i]);
        }
        self.globs
            .list
            .iter()
            .filter(|(k, _)| is_within(k, dir))
            .filter_map(|(_, bucket)| bucket.globs.first().map(|g| g.source))
            .min()
            .map(|i| self.sources[i].as_str())
    }
}

/// The deepest directory that both absolute paths lie within.
fn common_ancestor<'a>(a: &'a [u8], b: &[u8]) -> &'a [u8] {
    let mut end = 0;
    let mut i = 0;
    while i < a.len() && i < b.len() && a[i] == b[i] {
        i += 1;
        if a.get(i).is_none_or(|&c| c == b'/') && b.get(i).is_none_or(|&c| c == b'/') {
            end = i;
        }
    }
    if end <= 1 {
        b"/"
    } else {
        &a[..end]
    }
}

/// Drops trailing slashes (but keeps `/`).
fn normalize_plain(p: &str) -> Vec<u8> {
    let t = p.trim_end_matches('/');
    if t.is_empty() {
        b"/".to_vec()
    } else {
        t.as_bytes().to_vec()
    }
}

/// Expands `{a,b}` alternatives (nested allowed; `\{` is literal).
fn expand_braces(p: &[u8], out: &mut Vec<Vec<u8>>) -> Result<(), String> {
    let mut i = 0;
    let mut open = None;
    while i < p.len() {
        match p[i] {
            b'\\' => i += 1,
            b'{' => {
                open = Some(i);
                break;
            }
            b'}' => return Err("unmatched '}'".into()),
            _ => {}
        }
        i += 1;
    }
    let Some(start) = open else {
        out.push(p.to_vec());
        return Ok(());
    };
    // Find the matching close and the top-level commas.
    let (mut depth, mut j, mut commas) = (0usize, start, Vec::new());
    let end = loop {
        j += 1;
        match p.get(j) {
            None => return Err("unclosed '{'".into()),
            Some(b'\\') => j += 1,
            Some(b'{') => depth += 1,
            Some(b'}') if depth == 0 => break j,
            Some(b'}') => depth -= 1,
            Some(b',') if depth == 0 => commas.push(j),
            _ => {}
        }
    };
    let mut bounds = vec![start];
    bounds.extend(commas);
    bounds.push(end);
    for w in bounds.windows(2) {
        let mut alt = p[..start].to_vec();
        alt.extend_from_slice(&p[w[0] + 1..w[1]]);
        alt.extend_from_slice(&p[end + 1..]);
        expand_braces(&alt, out)?;
        if out.len() > MAX_EXPANSIONS {
            return Err(format!("more than {MAX_EXPANSIONS} alternatives"));
        }
    }
    Ok(())
}

/// Splits an absolute, brace-free glob into components.
fn compile(p: &[u8]) -> Result<Vec<Comp>, String> {
    let mut comps = Vec::new();
    for c in p.split(|&b| b == b'/') {
        if c.is_empty() {
            continue;
        }
        if c == b"**" {
            if comps.last() != Some(&Comp::AnyDepth) {
                comps.push(Comp::AnyDepth);
            }
        } else if c.iter().any(|b| matches!(b, b'*' | b'?' | b'[' | b'\\')) {
            check_wild(c)?;
            if c.contains(&b'\\') && !c.iter().any(|b| matches!(b, b'*' | b'?' | b'[')) {
                comps.push(Comp::Literal(unescape(c).into()));
            } else {
                comps.push(Comp::Wild(c.into()));
            }
        } else {
            comps.push(Comp::Literal(c.into()));
        }
    }
    Ok(comps)
}

fn unescape(c: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(c.len());
    let mut it = c.iter();
    while let Some(&b) = it.next() {
        if b == b'\\' {
            if let Some(&n) = it.next() {
                out.push(n);
            }
        } else {
            out.push(b);
        }
    }
    out
}

fn check_wild(c: &[u8]) -> Result<(), String> {
    let mut i = 0;
    while i < c.len() {
        match c[i] {
            b'\\' if i + 1 >= c.len() => return Err("dangling '\\'".into()),
            b'\\' => i += 1,
            b'[' => {
                let end = class_end(c, i).ok_or("unclosed '['")?;
                check_class(&c[i + 1..end])?;
            }
            _ => {}
        }
        i += 1;
    }
    Ok(())
}

/// Index of the `]` closing the class opened at `open`.
fn class_end(c: &[u8], open: usize) -> Option<usize> {
    let mut j = open + 1;
    if matches!(c.get(j), Some(b'!' | b'^')) {
        j += 1;
    }
    if c.get(j) == Some(&b']') {
        j += 1;
    }
    while j < c.len() {
        match c[j] {
            b'\\' => j += 1,
            b']' => return Some(j),
            _ => {}
        }
        j += 1;
    }
    None
}

/// Matches glob components against the rest of a path (no leading slash).
/// Running out of pattern matches: a pattern covers what lies beneath.
fn match_comps(pat: &[Comp], rest: &[u8]) -> bool {
    let Some((first, more)) = pat.split_first() else {
        return true;
    };
    if let Comp::AnyDepth = first {
        // Try the remaining pattern here and at every deeper component.
        let mut r = rest;
        loop {
            if match_comps(more, r) {
                return true;
            }
            match r.iter().position(|&b| b == b'/') {
                Some(i) => r = &r[i + 1..],
                None => return false,
            }
        }
    }
    if rest.is_empty() {
        return false;
    }
    let (name, after) = match rest.iter().position(|&b| b == b'/') {
        Some(i) => (&rest[..i], &rest[i + 1..]),
        None => (rest, &b""[..]),
    };
    let ok = match first {
        Comp::Literal(l) => **l == *name,
        Comp::Wild(w) => wild_match(w, name),
        Comp::AnyDepth => unreachable!(),
    };
    ok && match_comps(more, after)
}

/// `*`, `?`, `[..]` and `\` within one name; iterative with one backtrack
/// point, so linear in practice.
fn wild_match(p: &[u8], s: &[u8]) -> bool {
    let (mut pi, mut si) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while si < s.len() {
        if pi < p.len() {
            match p[pi] {
                b'*' => {
                    while pi < p.len() && p[pi] == b'*' {
                        pi += 1;
                    }
                    star = Some((pi, si));
                    continue;
                }
                b'?' => {
                    pi += 1;
                    si += 1;
                    continue;
                }
                b'[' => {
                    if let Some(end) = class_end(p, pi) {
                        if class_match(&p[pi + 1..end], s[si]) {
                            pi = end + 1;
                            si += 1;
                            continue;
                        }
                    }
                }
                b'\\' if pi + 1 < p.len() && p[pi + 1] == s[si] => {
                    pi += 2;
                    si += 1;
                    continue;
                }
                c if c != b'\\' && c == s[si] => {
                    pi += 1;
                    si += 1;
                    continue;
                }
                _ => {}
            }
        }
        match star {
            Some((sp, ss)) => {
                pi = sp;
                si = ss + 1;
                star = Some((sp, ss + 1));
            }
            None => return false,
        }
    }
    while pi < p.len() && p[pi] == b'*' {
        pi += 1;
    }
    pi == p.len()
}

/// Refuses a range whose low end is above its high end (`[z-a]`): it would
/// match nothing, so a deny rule with that typo would deny nothing.
fn check_class(body: &[u8]) -> Result<(), String> {
    match class_items(body).1.find(|&(lo, hi)| lo > hi) {
        Some((lo, hi)) => Err(format!(
            "invalid range '{}-{}' (its start is after its end)",
            lo.escape_ascii(),
            hi.escape_ascii()
        )),
        None => Ok(()),
    }
}

/// A class body (between `[` and `]`): ranges, `!`/`^` negation, escapes.
fn class_match(body: &[u8], c: u8) -> bool {
    let (neg, mut items) = class_items(body);
    items.any(|(lo, hi)| lo <= c && c <= hi) != neg
}

/// Reads a class body once for matching and for checking: whether it is
/// negated, and its members as inclusive ranges (`a` is `a-a`).
fn class_items(body: &[u8]) -> (bool, impl Iterator<Item = (u8, u8)> + '_) {
    let (neg, body) = match body.first() {
        Some(b'!' | b'^') => (true, &body[1..]),
        _ => (false, body),
    };
    let mut i = 0;
    let items = std::iter::from_fn(move || {
        if i >= body.len() {
            return None;
        }
        let mut lo = body[i];
        if lo == b'\\' && i + 1 < body.len() {
            i += 1;
            lo = body[i];
        }
        if i + 2 < body.len() && body[i + 1] == b'-' {
            let mut hi = body[i + 2];
            let mut step = 3;
            if hi == b'\\' && i + 3 < body.len() {
                hi = body[i + 3];
                step = 4;
            }
            i += step;
            Some((lo, hi))
        } else {
            i += 1;
            Some((lo, lo))
        }
    });
    (neg, items)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_paths_cover_subtrees_by_component() {
        let s = PatternSet::new(["/ws", "/etc/hosts"]).unwrap();
        assert_eq!(s.find(b"/ws"), Some("/ws"));
        assert_eq!(s.find(b"/ws/a/b"), Some("/ws"));
        assert_eq!(s.find(b"/ws2"), None);
        assert_eq!(s.find(b"/etc/hosts"), Some("/etc/hosts"));
        assert_eq!(s.find(b"/etc/hosts.allow"), None);
    }

    #[test]
    fn many_plain_paths_use_the_map() {
        let pats: Vec<String> = (0..100).map(|i| format!("/data/d{i}")).collect();
        let s = PatternSet::new(&pats).unwrap();
        assert_eq!(s.find(b"/data/d42/x/y"), Some("/data/d42"));
        assert_eq!(s.find(b"/data/d42"), Some("/data/d42"));
        assert_eq!(s.find(b"/data/d420"), None);
        assert_eq!(s.find(b"/data"), None);
        let root = PatternSet::new(pats.iter().map(String::as_str).chain(["/"])).unwrap();
        assert_eq!(root.find(b"/x"), Some("/"));
    }

    #[test]
    fn the_map_skips_ancestors_longer_than_any_key() {
        let pats: Vec<String> = (0..20)
            .map(|i| format!("/data/d{i}"))
            .chain(["/a".into(), "/data/deeper/still/a/key".into()])
            .collect();
        let s = PatternSet::new(&pats).unwrap();
        let long = b"/data/deeper/still/a/key/and/then/a/path/much/longer/than/any/key";
        assert_eq!(s.find(long), Some("/data/deeper/still/a/key"));
        assert_eq!(
            s.find(b"/a/b/c/d/e/f/g/h/i/j/k/l/m/n/o/p/q/r/s/t/u"),
            Some("/a")
        );
        assert_eq!(s.find(b"/data/d7/x/y/z/w/v/u/t/s/r/q/p"), Some("/data/d7"));
        assert_eq!(s.find(b"/data/deeper/still/a/keyring/and/more/names"), None);
        assert_eq!(
            s.find(b"/data/d77777777777777777777777777777777777777"),
            None
        );
    }

    #[test]
    fn globs_match_and_cover_subtrees() {
        let s = PatternSet::new(["/ws/**/.env*", "/home/u/*.pem", "/p/{a,b}/c"]).unwrap();
        assert!(s.matches(b"/ws/.env"));
        assert!(s.matches(b"/ws/a/b/.env.local"));
        assert!(s.matches(b"/ws/a/.envdir/inner"));
        assert!(!s.matches(b"/ws/a/env"));
        assert!(s.matches(b"/home/u/k.pem"));
        assert!(!s.matches(b"/home/u/sub/k.pem"), "* does not cross /");
        assert!(s.matches(b"/p/a/c"));
        assert!(s.matches(b"/p/b/c/d"));
        assert!(!s.matches(b"/p/x/c"));
    }

    #[test]
    fn question_mark_and_classes() {
        let s = PatternSet::new(["/d/file?.[ch]"]).unwrap();
        assert!(s.matches(b"/d/file1.c"));
        assert!(s.matches(b"/d/fileX.h"));
        assert!(!s.matches(b"/d/file12.c"));
        assert!(!s.matches(b"/d/file/.c"));
    }

    #[test]
    fn non_utf8_paths_are_matched_bytewise() {
        let s = PatternSet::new(["/ws/**/*.key"]).unwrap();
        assert!(s.matches(b"/ws/\xff\xfe/a.key"));
        assert!(!s.matches(b"/ws/\xff\xfe/a.txt"));
    }

    #[test]
    fn globs_cover_and_respect_components() {
        let s = PatternSet::new(["/ws/**", "/a/*/c", "/x/**/y/**/z"]).unwrap();
        assert!(s.matches(b"/ws"));
        assert!(s.matches(b"/ws/a/b"));
        assert!(!s.matches(b"/ws2/a"));
        assert!(s.matches(b"/a/b/c"));
        assert!(s.matches(b"/a/b/c/d"));
        assert!(!s.matches(b"/a/b/b/c"));
        assert!(s.matches(b"/x/1/2/y/3/z"));
        assert!(s.matches(b"/x/y/z"));
        assert!(!s.matches(b"/x/y/q"));
    }

    #[test]
    fn wildcards_within_a_name() {
        assert!(wild_match(b"*.pem", b"a.pem"));
        assert!(wild_match(b"*.pem", b".pem"));
        assert!(!wild_match(b"*.pem", b"a.pem.bak"));
        assert!(wild_match(b"a*b*c", b"aXXbYYc"));
        assert!(!wild_match(b"a*b*c", b"aXXbYY"));
        assert!(wild_match(b"[!a]x", b"bx"));
        assert!(!wild_match(b"[!a]x", b"ax"));
        assert!(wild_match(b"[a-c]", b"b"));
        assert!(wild_match(b"\\*", b"*"));
        assert!(!wild_match(b"\\*", b"a"));
        assert!(wild_match(b"[]]", b"]"));
    }

    #[test]
    fn braces_expand() {
        let s = PatternSet::new(["/p/{a,b{1,2}}/c"]).unwrap();
        assert!(s.matches(b"/p/a/c"));
        assert!(s.matches(b"/p/b1/c"));
        assert!(s.matches(b"/p/b2/c"));
        assert!(!s.matches(b"/p/b/c"));
        assert!(PatternSet::new(["/p/{a"]).is_err());
    }

    #[test]
    fn many_globs_are_filed_by_prefix() {
        let pats: Vec<String> = (0..1000).map(|i| format!("/data/d{i}/**/*.key")).collect();
        let s = PatternSet::new(&pats).unwrap();
        assert_eq!(s.find(b"/data/d742/x/y.key"), Some("/data/d742/**/*.key"));
        assert_eq!(s.find(b"/data/d742/x/y.txt"), None);
        assert_eq!(s.find(b"/data/d7420/y.key"), None);
    }

    #[test]
    fn control_bytes_in_names_do_not_escape_globs() {
        let s = PatternSet::new(["/ws/**/.env*", "/k/*.pem"]).unwrap();
        assert!(s.matches(b"/ws/a\nb/.env"));
        assert!(s.matches(b"/ws/.env\n/x"));
        assert!(s.matches(b"/k/a\nb.pem"));
        assert!(s.matches(b"/k/a.pem/\n"));
        assert!(!s.matches(b"/k/a\n/b.pem"));
    }

    #[test]
    fn trailing_slash_and_subtree_of_globs() {
        let s = PatternSet::new(["/ws/*/build/"]).unwrap();
        assert!(s.matches(b"/ws/a/build"));
        assert!(s.matches(b"/ws/a/build/x/y"));
        assert!(!s.matches(b"/ws/a/builds"));
        assert!(!s.matches(b"/ws/a/b/build"));
    }

    #[test]
    fn a_matching_pattern_is_reported() {
        let s = PatternSet::new(["/a/*.txt", "/plain", "/b/**"]).unwrap();
        assert_eq!(s.find(b"/a/x.txt"), Some("/a/*.txt"));
        assert_eq!(s.find(b"/plain/x"), Some("/plain"));
        assert_eq!(s.find(b"/b/c/d"), Some("/b/**"));
        assert_eq!(s.find(b"/a/x.txt2"), None);
    }

    #[test]
    fn patterns_below_a_directory() {
        let s = PatternSet::new(["/ws/conf/api.key", "/home/u/.config/gh", "/d/**/*.pem"]).unwrap();
        assert_eq!(s.find_below(b"/ws"), Some("/ws/conf/api.key"));
        assert_eq!(s.find_below(b"/ws/conf"), Some("/ws/conf/api.key"));
        assert_eq!(s.find_below(b"/home/u/.config"), Some("/home/u/.config/gh"));
        assert_eq!(s.find_below(b"/d"), Some("/d/**/*.pem"));
        assert_eq!(s.find_below(b"/ws2"), None);
        assert_eq!(s.find_below(b"/ws/conf/api.key/x"), None);
    }

    #[test]
    fn common_ancestors_are_by_component() {
        assert_eq!(
            common_ancestor(b"/home/u/.ssh", b"/home/u/.aws"),
            b"/home/u"
        );
        assert_eq!(common_ancestor(b"/home/u", b"/home/u/.aws"), b"/home/u");
        assert_eq!(common_ancestor(b"/ws", b"/ws2"), b"/");
        assert_eq!(common_ancestor(b"/usr", b"/lib"), b"/");
        let s = PatternSet::new(["/home/u/.ssh", "/home/u/.aws"]).unwrap();
        assert_eq!(s.find(b"/home/u2/.ssh"), None);
        assert_eq!(s.find(b"/home/u/.ssh/id"), Some("/home/u/.ssh"));
    }

    #[test]
    fn a_large_bucket_finds_what_a_linear_scan_finds() {
        let mut pats: Vec<String> = (0..200).map(|i| format!("/d/**/*.k{i}")).collect();
        pats.extend((0..50).map(|i| format!("/d/**/name{i}")));
        pats.extend([
            "/d/**/x?y".to_string(),
            "/d/*/**".to_string(),
            "/d/**/*.k7".to_string(),
        ]);
        let indexed = PatternSet::new(&pats).unwrap();
        let cases: &[&[u8]] = &[
            b"/d/a/f.k7",
            b"/d/a/b.c.k199",
            b"/d/a/name42/inner",
            b"/d/x1y",
            b"/d/q",
            b"/d/q/r.k3",
            b"/d/.k5",
            b"/d/k5",
            b"/e/a.k7",
        ];
        for c in cases {
            // Linear reference: each pattern alone, first in source order.
            let linear = pats
                .iter()
                .find(|p| PatternSet::new([p.as_str()]).unwrap().matches(c));
            assert_eq!(
                indexed.find(c),
                linear.map(String::as_str),
                "{}",
                String::from_utf8_lossy(c)
            );
        }
    }

    /// Overlapping rules, padded with rules that match none of the paths
    /// below, so that each list is scanned (no padding) or looked up in the
    /// maps and the indexed bucket (padding).
    fn overlapping(pad: usize) -> Vec<String> {
        // One rule per depth of literal directory, so that no two tie.
        let mut pats: Vec<String> = [
            "/w/**/secret.key",
            "/w/a",
            "/w/a/b/**/*.key",
            "/w/a/b/c",
            "/w/a/b/c/d/*.key",
            "/w/a/b/c/d/e/**/x",
        ]
        .map(String::from)
        .to_vec();
        for i in 0..pad {
            pats.push(format!("/pad{i}"));
            pats.push(format!("/w/a/pad{i}"));
            pats.push(format!("/w/a/b/c/d/*.pad{i}"));
            pats.push(format!("/w/**/pad{i}/*.key"));
            pats.push(format!("/w/a/q{i}/*.key"));
        }
        pats
    }

    /// The rule the label must name, whatever the list's size or order.
    const MOST_SPECIFIC: &[(&[u8], Option<&str>)] = &[
        (b"/w/a/b/c/d/secret.key", Some("/w/a/b/c/d/*.key")),
        (b"/w/a/b/c/d/e/secret.key", Some("/w/a/b/c")),
        (b"/w/a/b/c/d/e/f/x", Some("/w/a/b/c/d/e/**/x")),
        (b"/w/a/b/z.key", Some("/w/a/b/**/*.key")),
        (b"/w/a/b/z", Some("/w/a")),
        (b"/w/a", Some("/w/a")),
        (b"/w/z/secret.key", Some("/w/**/secret.key")),
        (b"/w/z/other.key", None),
    ];

    #[test]
    fn the_most_specific_rule_is_named_at_any_size_and_order() {
        for pad in [0, 1, 3, 20] {
            let mut pats = overlapping(pad);
            // Deterministic shuffles: rotations and a stride permutation.
            for round in 0..8usize {
                let by = round % pats.len();
                pats.rotate_left(by);
                if round % 2 == 1 {
                    let n = pats.len();
                    let step = (1..n).rev().find(|s| gcd(*s, n) == 1).unwrap_or(1);
                    pats = (0..n).map(|i| pats[(i * step) % n].clone()).collect();
                }
                let s = PatternSet::new(&pats).unwrap();
                let small = s.plain.list.len() <= LINEAR_MAX && s.globs.list.len() <= LINEAR_MAX;
                assert_eq!(small, pad < 20, "both paths are exercised");
                for (path, want) in MOST_SPECIFIC {
                    assert_eq!(
                        s.find(path),
                        *want,
                        "{} with {} rules (scanned: {small}) in order {pats:?}",
                        String::from_utf8_lossy(path),
                        pats.len()
                    );
                }
            }
        }
    }

    fn gcd(a: usize, b: usize) -> usize {
        if b == 0 {
            a
        } else {
            gcd(b, a % b)
        }
    }

    #[test]
    fn equally_specific_rules_are_named_in_config_order() {
        // Same literal directory: a plain path and a glob, and two globs of
        // one bucket. The one listed first is named, scanned or indexed.
        for pad in [0, 20] {
            let padding: Vec<String> = (0..pad)
                .flat_map(|i| [format!("/t/pad{i}"), format!("/t/a/*.pad{i}")])
                .collect();
            for (first, second) in [
                ("/t/a", "/t/a/*.key"),
                ("/t/a/*.key", "/t/a"),
                ("/t/a/*.key", "/t/a/s*"),
                ("/t/a/s*", "/t/a/*.key"),
            ] {
                let pats: Vec<&str> = [first, second]
                    .into_iter()
                    .chain(padding.iter().map(String::as_str))
                    .collect();
                let s = PatternSet::new(&pats).unwrap();
                assert_eq!(s.find(b"/t/a/s.key"), Some(first), "{pats:?}");
            }
        }
    }

    #[test]
    fn the_example_of_the_docs() {
        let s = PatternSet::new(["/ws/a", "/ws/**/*.key", "/ws/a/b", "/ws/a/*.key"]).unwrap();
        assert_eq!(s.find(b"/ws/a/b/f.key"), Some("/ws/a/b"));
        assert_eq!(s.find(b"/ws/a/g.key"), Some("/ws/a"));
        assert_eq!(s.find(b"/ws/c/g.key"), Some("/ws/**/*.key"));
    }

    #[test]
    fn two_and_nine_plain_rules_name_the_same_one() {
        // The case of the issue: the deeper rule, at 2 rules and at 9.
        let two = PatternSet::new(["/ws/a", "/ws/a/b"]).unwrap();
        let nine: Vec<String> = ["/ws/a".to_string(), "/ws/a/b".to_string()]
            .into_iter()
            .chain((0..7).map(|i| format!("/ws/c{i}")))
            .collect();
        let nine = PatternSet::new(&nine).unwrap();
        assert!(nine.plain.list.len() > LINEAR_MAX);
        assert_eq!(two.find(b"/ws/a/b/f"), Some("/ws/a/b"));
        assert_eq!(nine.find(b"/ws/a/b/f"), Some("/ws/a/b"));
        assert_eq!(two.find(b"/ws/a/f"), Some("/ws/a"));
        assert_eq!(nine.find(b"/ws/a/f"), Some("/ws/a"));
    }

    #[test]
    fn bad_globs_are_errors() {
        assert!(PatternSet::new(["/ws/[a"]).is_err());
        assert!(PatternSet::new(["relative"]).is_err());
    }
}
