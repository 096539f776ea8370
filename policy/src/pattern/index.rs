//! The lookup structures: entries filed by directory, scanned when few and
//! hashed when many, and the index of a large bucket of globs.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use super::glob::{match_comps, Comp};
use super::Glob;
use crate::is_within;

/// Lists longer than this are looked up through a hash map.
pub(super) const LINEAR_MAX: usize = 8;

/// Entries keyed by a directory path: a short list, or a map when long.
///
/// Built in two steps, so that compiling a policy at process start costs
/// one allocation per key and no hashing: [`ByPrefix::push`] files each
/// entry, [`ByPrefix::seal`] merges equal keys, orders the list and, only
/// for a long list, builds the map (an open-addressed table of indices into
/// the list: the keys are not copied).
#[derive(Clone, Debug, Default)]
pub(super) struct ByPrefix<T> {
    pub(super) list: Vec<(Box<[u8]>, T)>,
    /// Slots of `list` index + 1 (0: empty), a power of two in length, at
    /// most half full; empty while the list is short.
    map: Box<[u32]>,
    /// The deepest directory every key lies within: a path outside it
    /// matches nothing (the credential list, all under `$HOME`, is skipped
    /// in one comparison for a path elsewhere).
    common: Box<[u8]>,
    /// The longest key: a longer ancestor of a path is not looked up.
    longest: usize,
}

impl<T> ByPrefix<T> {
    /// Files `v` under `key`; equal keys are merged by [`ByPrefix::seal`].
    pub(super) fn push(&mut self, key: &[u8], v: T) {
        self.list.push((key.into(), v));
    }

    /// Merges the entries of equal keys in the order they were pushed
    /// (`merge(first, later)`), orders the list deepest key first (among
    /// the ancestors of one path a longer key is a deeper one, so scanning
    /// it visits keys in the order the map walk does) and builds the map
    /// when the list is long. Called once, after the last `push`.
    pub(super) fn seal(&mut self, mut merge: impl FnMut(&mut T, &mut T)) {
        // Deepest first; equal keys side by side, in the order they were
        // pushed (a stable sort). Among keys of one length at most one is
        // an ancestor of a path, so their order is free: by bytes.
        self.list
            .sort_by(|a, b| b.0.len().cmp(&a.0.len()).then_with(|| a.0.cmp(&b.0)));
        self.list.dedup_by(|later, first| {
            let same = later.0 == first.0;
            if same {
                merge(&mut first.1, &mut later.1);
            }
            same
        });
        self.longest = self.list.first().map_or(0, |e| e.0.len());
        let mut common: &[u8] = self.list.first().map_or(&[][..], |e| &e.0[..]);
        for (k, _) in &self.list[1.min(self.list.len())..] {
            common = common_ancestor(common, k);
        }
        self.common = common.into();
        self.map = Box::default();
        if self.list.len() > LINEAR_MAX {
            let mut map = vec![0u32; (self.list.len() * 2).next_power_of_two()];
            let mask = map.len() - 1;
            for (i, (k, _)) in self.list.iter().enumerate() {
                let mut s = (hash(k) as usize) & mask;
                while map[s] != 0 {
                    s = (s + 1) & mask;
                }
                map[s] = i as u32 + 1;
            }
            self.map = map.into();
        }
    }

    /// The entry of `key` in the map.
    #[inline]
    fn get(&self, key: &[u8]) -> Option<&(Box<[u8]>, T)> {
        let mask = self.map.len() - 1;
        let mut s = (hash(key) as usize) & mask;
        loop {
            let i = self.map[s] as usize;
            if i == 0 {
                return None;
            }
            let e = &self.list[i - 1];
            if &e.0[..] == key {
                return Some(e);
            }
            s = (s + 1) & mask;
        }
    }

    /// Visits the entries whose key is `path` or an ancestor of it and at
    /// least `min` bytes long, deepest first, whether the list is scanned or
    /// looked up in the map; stops at the first `Some`.
    // Inlined into each caller, as when the index lived in pattern.rs: the
    // closure then folds into the scan (about 100 instructions a decision).
    #[inline]
    pub(super) fn find<'a, R>(
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
            if let Some((k, v)) = self.get(key) {
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

/// A fast hash for path keys. The keys come from the policy, not from the
/// guarded program, so a keyed (DoS-resistant) hash buys nothing and costs
/// a SipHash per ancestor on every checked call.
fn hash(key: &[u8]) -> u64 {
    let mut h = PathHasher::default();
    h.write(key);
    h.finish()
}

/// [`hash`] as a [`Hasher`], for the maps of a bucket's index.
#[derive(Default)]
struct PathHasher(u64);

impl Hasher for PathHasher {
    fn write(&mut self, bytes: &[u8]) {
        let mut h = self.0 ^ 0xcbf2_9ce4_8422_2325;
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            let w = u64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]);
            h = (h.rotate_left(5) ^ w).wrapping_mul(0x517c_c1b7_2722_0a95);
        }
        for &b in chunks.remainder() {
            h = (h.rotate_left(5) ^ u64::from(b)).wrapping_mul(0x517c_c1b7_2722_0a95);
        }
        self.0 = h;
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

type IndexMap = HashMap<Box<[u8]>, Vec<usize>, BuildHasherDefault<PathHasher>>;

/// The globs filed under one literal prefix. A large bucket (many globs in
/// one directory, as relative `**/*.ext` rules of one config are) is also
/// indexed by what its last component requires of some name in the path:
/// that exact name, or the extension of `*.ext`. Matching then probes each
/// name of the path instead of trying every glob.
#[derive(Clone, Debug, Default)]
pub(super) struct Bucket {
    pub(super) globs: Vec<Glob>,
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
    /// A bucket of one glob, to be merged with the others of its prefix.
    pub(super) fn new(glob: Glob) -> Bucket {
        Bucket {
            globs: vec![glob],
            ..Bucket::default()
        }
    }

    pub(super) fn index(&mut self) {
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
    pub(super) fn find(&self, rest: &[u8]) -> Option<usize> {
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

/// The deepest directory that both absolute paths lie within.
pub(super) fn common_ancestor<'a>(a: &'a [u8], b: &[u8]) -> &'a [u8] {
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
