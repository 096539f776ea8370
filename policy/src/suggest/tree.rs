//! The tree of touched paths, and its generalisation into rules.

use std::collections::BTreeMap;

use super::{components, within, Options, Places, Refusal, Suggestion};
use crate::names::Reuse;
use crate::Access;

/// A node of the tree of touched paths.
#[derive(Default)]
struct Node {
    children: BTreeMap<String, Node>,
    /// A rule names this node: `Some(glob)`.
    rule: Option<bool>,
    /// Distinct accessed paths at or below the node, and the first one.
    covers: usize,
    example: Option<String>,
}

impl Node {
    fn insert(&mut self, target: &str, glob: bool, original: &str) {
        let mut n = self;
        n.covers += 1;
        n.example.get_or_insert_with(|| original.to_string());
        for c in target.split('/').filter(|c| !c.is_empty()) {
            n = n.children.entry(c.to_string()).or_default();
            n.covers += 1;
            n.example.get_or_insert_with(|| original.to_string());
        }
        // A glob over a directory also covers the directory itself.
        n.rule = Some(n.rule.unwrap_or(false) || glob);
    }

    /// Bottom-up: a rule on a node covers its subtree; a node with
    /// `breadth` touched entries becomes `dir/**` when that is safe.
    fn collapse(&mut self, path: &str, places: &Places, opts: &Options) {
        for (name, child) in self.children.iter_mut() {
            let p = format!("{}/{name}", path.trim_end_matches('/'));
            child.collapse(&p, places, opts);
        }
        if self.rule.is_some() {
            self.children.clear();
            return;
        }
        if !opts.exact && self.children.len() >= opts.breadth && places.too_broad(path).is_none() {
            self.rule = Some(true);
            self.children.clear();
        }
    }

    fn emit(&self, path: &str, access: Access, places: &Places, out: &mut Vec<Suggestion>) {
        if let Some(glob) = self.rule {
            out.push(Suggestion {
                access,
                path: path.to_string(),
                glob,
                kind: places.kind(path),
                covers: self.covers,
                example: self.example.clone().unwrap_or_default(),
            });
            return;
        }
        for (name, child) in &self.children {
            let p = format!("{}/{name}", path.trim_end_matches('/'));
            child.emit(&p, access, places, out);
        }
    }
}

/// Where `path` goes before breadth generalisation: its cache, or its
/// ancestor at `max_depth` below its anchor (the shallowest one that is
/// safe), or itself. `(target, glob)`.
fn target(path: &str, places: &Places, opts: &Options) -> (String, bool) {
    if opts.exact {
        return (path.to_string(), false);
    }
    if let Some((dir, _)) = places.cache_of(path) {
        if places.too_broad(&dir).is_none() {
            return (dir.clone(), dir != path);
        }
    }
    if let Some(t) = random_target(path, places) {
        return t;
    }
    if let Some(n) = opts.max_depth {
        let anchor = places.anchor(path);
        let comps: Vec<&str> = path.split('/').filter(|c| !c.is_empty()).collect();
        let base = components(&anchor);
        for depth in (base + n.max(1))..comps.len() {
            let dir = format!("/{}", comps[..depth].join("/"));
            if places.too_broad(&dir).is_none() {
                return (dir, true);
            }
        }
    }
    (path.to_string(), false)
}

/// A path with a random-looking name in it (a temporary file's, a hash,
/// a cache layout elsewhere: [`crate::names::reuse`]): the glob that covers
/// every name made the same way, when it is safe. A `*` stands in the
/// tree as [`STAR`].
fn random_target(path: &str, places: &Places) -> Option<(String, bool)> {
    let start = places
        .home
        .as_deref()
        .filter(|h| within(path, h) && *h != "/")
        .map_or(1, |h| h.trim_end_matches('/').len() + 1);
    match crate::names::reuse(path, start)? {
        Reuse::Tree { to } => {
            let dir = &path[..to];
            places
                .too_broad(dir)
                .is_none()
                .then(|| (dir.to_string(), true))
        }
        Reuse::Star { at, from, to } => {
            let parent_end = path[..at].rfind('/')?;
            let (prefix, suffix) = (&path[parent_end + 1..at], &path[from..to]);
            let parent = if parent_end == 0 {
                "/"
            } else {
                &path[..parent_end]
            };
            // No credential path in the parent may match the glob.
            let clash = places
                .protected
                .iter()
                .any(|p| star_may_match(p, parent, prefix, suffix));
            (!clash).then(|| {
                (
                    format!("{}{prefix}{STAR}{suffix}", &path[..=parent_end]),
                    false,
                )
            })
        }
    }
}

/// Whether the pattern `p` may name a path `parent/PREFIX*SUFFIX` or one
/// beneath it (conservative: true when unsure).
fn star_may_match(p: &str, parent: &str, prefix: &str, suffix: &str) -> bool {
    let glob = |c: &str| c.contains(['*', '?', '[', '{']);
    let pc: Vec<&str> = p.split('/').filter(|c| !c.is_empty()).collect();
    let dc: Vec<&str> = parent.split('/').filter(|c| !c.is_empty()).collect();
    for (i, d) in dc.iter().enumerate() {
        match pc.get(i) {
            None => return true, // the pattern covers the parent
            Some(c) if glob(c) => return true,
            Some(c) if c != d => return false,
            _ => {}
        }
    }
    match pc.get(dc.len()) {
        None => true,
        Some(c) if glob(c) => true,
        Some(c) => {
            c.len() >= prefix.len() + suffix.len() && c.starts_with(prefix) && c.ends_with(suffix)
        }
    }
}

/// The `*` of a random name in a suggested path (a control character no
/// trace line carries); [`Suggestion::pattern`] writes it as `*`.
pub(crate) const STAR: char = '\u{1}';

/// The rules that allow every access in `needs`: each an access (exec
/// counts as read) to an absolute, canonical path that the target policy
/// refuses and that is no credential. Writes come first: what a program
/// may write it may read back, so reads they cover get no rule of their own.
pub fn generalise(
    needs: &[(Access, String)],
    places: &Places,
    opts: &Options,
) -> (Vec<Suggestion>, Vec<Refusal>) {
    let mut out = Vec::new();
    let mut refused = Vec::new();
    let mut seen = std::collections::BTreeSet::new();
    // Paths the write rules name (each covers what lies beneath it).
    let mut written = std::collections::HashSet::new();
    for access in [Access::Write, Access::Read] {
        let mut tree = Node::default();
        for (a, path) in needs {
            let a = if *a == Access::Exec { Access::Read } else { *a };
            if a != access || !path.starts_with('/') || !seen.insert((a.as_str(), path)) {
                continue;
            }
            // Covered by a write rule already made.
            if access == Access::Read && covered(&written, path) {
                continue;
            }
            if let Some(why) = places.too_broad(path) {
                refused.push(Refusal {
                    access,
                    path: path.clone(),
                    why: format!("a rule for it would cover everything beneath: {why}"),
                });
                continue;
            }
            let (t, glob) = target(path, places, opts);
            tree.insert(&t, glob, path);
        }
        tree.collapse("/", places, opts);
        tree.emit("/", access, places, &mut out);
        written.extend(out.iter().map(|s| s.path.clone()));
    }
    (out, refused)
}

/// Whether `path` or one of its ancestors is in `rules`.
fn covered(rules: &std::collections::HashSet<String>, path: &str) -> bool {
    let mut p = path;
    loop {
        if rules.contains(p) {
            return true;
        }
        match p.rfind('/') {
            Some(0) if p.len() > 1 => p = "/",
            Some(i) if i > 0 => p = &p[..i],
            _ => return false,
        }
    }
}
