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

mod glob;
mod index;
pub(crate) mod regex;
#[cfg(test)]
mod tests;

use self::glob::{compile, expand_braces, Comp};
use self::index::{Bucket, ByPrefix};
use crate::is_within;

/// A compiled list of patterns.
#[derive(Clone, Debug, Default)]
pub struct PatternSet {
    /// The patterns as written, one after another (one allocation at
    /// process start, not one per pattern), and where each one ends.
    text: String,
    ends: Vec<usize>,
    /// Plain paths -> source index.
    plain: ByPrefix<usize>,
    /// Literal glob prefixes -> the globs filed under them.
    globs: ByPrefix<Bucket>,
}

/// One glob (one alternative of a braced one), filed under its literal prefix.
#[derive(Clone, Debug)]
struct Glob {
    /// Components after the literal prefix.
    rest: Box<[Comp]>,
    /// Index of the pattern it came from.
    source: usize,
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
            let idx = set.ends.len();
            set.text.push_str(p);
            set.ends.push(set.text.len());
            if !has_glob_meta(p) {
                set.plain.push(normalize_plain(p), idx);
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
                set.globs.push(&prefix, Bucket::new(glob));
            }
        }
        // A plain path listed twice: the first listing names it.
        set.plain.seal(|_, _| {});
        set.globs
            .seal(|first, later| first.globs.append(&mut later.globs));
        for (_, bucket) in &mut set.globs.list {
            bucket.index();
        }
        Ok(set)
    }

    /// Pattern `i` as written.
    fn source(&self, i: usize) -> &str {
        let start = if i == 0 { 0 } else { self.ends[i - 1] };
        &self.text[start..self.ends[i]]
    }

    /// True when the set has no patterns.
    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// The patterns, as compiled.
    pub fn patterns(&self) -> impl Iterator<Item = &str> {
        (0..self.ends.len()).map(|i| self.source(i))
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
        Some(self.source(i))
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
            return Some(self.source(i));
        }
        self.globs
            .list
            .iter()
            .filter(|(k, _)| is_within(k, dir))
            .filter_map(|(_, bucket)| bucket.globs.first().map(|g| g.source))
            .min()
            .map(|i| self.source(i))
    }
}

/// Drops trailing slashes (but keeps `/`).
fn normalize_plain(p: &str) -> &[u8] {
    let t = p.trim_end_matches('/');
    if t.is_empty() {
        b"/"
    } else {
        t.as_bytes()
    }
}
