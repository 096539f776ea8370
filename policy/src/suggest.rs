//! Learning a policy from a run: the accesses a policy refused (the
//! `audit` or `blocked` trace lines of a run), generalised into the fewest
//! `allow` rules that would have let every one of them happen.
//!
//! Pure: the caller reads the logs and decides which accesses the target
//! policy already allows; this module only shapes rules and writes TOML.
//!
//! Generalising, in order:
//! - a path inside a known cache (`~/.cache/pip`, `~/.npm`, …) becomes the
//!   whole cache: tools name cache entries by hashes that change every run;
//! - with `--max-depth N`, a path more than N components below its anchor
//!   (the home directory, a temp directory, a cache, or `/`) is cut to its
//!   ancestor at depth N;
//! - a directory in which [`Options::breadth`] or more entries were touched
//!   becomes `dir/**`, bottom-up, so a tree of 500 files is one rule.
//!
//! A rule is never broader than is safe to suggest: never `/`, a top-level
//! directory, the home directory, a temp directory itself, the workspace or
//! anything above it, and never a directory that holds a credential path
//! (the `secrets` preset, `deny_always`). An access that would need such a
//! rule is reported instead ([`Refusal`]).

use std::collections::BTreeMap;
use std::fmt::Write as _;

use crate::{is_within, Access};

/// Where things are on this machine: what the generaliser must not widen
/// into, and how it names locations.
#[derive(Clone, Debug, Default)]
pub struct Places {
    /// `$HOME`, canonical.
    pub home: Option<String>,
    /// The workspace (the policy's `root`), canonical.
    pub root: String,
    /// Shared temporary directories (`/tmp`, `/var/tmp`, `/dev/shm`, `$TMPDIR`).
    pub temp_dirs: Vec<String>,
    /// Absolute patterns no suggested rule may cover: the expanded `secrets`
    /// preset and the `deny_always` lists.
    pub protected: Vec<String>,
}

/// How far to generalise.
#[derive(Clone, Copy, Debug)]
pub struct Options {
    /// No generalisation: one rule per path.
    pub exact: bool,
    /// Cut paths to at most this many components below their anchor.
    pub max_depth: Option<usize>,
    /// A directory with this many touched entries becomes `dir/**`.
    pub breadth: usize,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            exact: false,
            max_depth: None,
            breadth: 3,
        }
    }
}

/// What kind of place a rule names (for its comment).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A tool's cache under the home directory; the tool's name.
    Cache(String),
    /// Elsewhere in the home directory.
    Home,
    /// A shared temporary directory.
    Temp,
    /// Installed software or system configuration the `system` preset
    /// does not cover.
    System,
    /// Anywhere else.
    Other,
}

impl Kind {
    /// A short description for a comment.
    pub fn describe(&self) -> String {
        match self {
            Kind::Cache(name) => format!("{name}'s cache"),
            Kind::Home => "home directory".into(),
            Kind::Temp => "temp dir".into(),
            Kind::System => "system location outside the system preset".into(),
            Kind::Other => "outside the workspace".into(),
        }
    }
}

/// One suggested `allow` rule.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Suggestion {
    /// `Read` or `Write` (exec is a read).
    pub access: Access,
    /// The absolute path the rule names.
    pub path: String,
    /// True for `path/**` (generalised), false for the path itself.
    pub glob: bool,
    /// What the place is.
    pub kind: Kind,
    /// How many distinct accessed paths the rule covers.
    pub covers: usize,
    /// One of them.
    pub example: String,
}

impl Suggestion {
    /// The rule as written in a policy: `~/` for the home directory, glob
    /// syntax in names escaped.
    pub fn pattern(&self, home: Option<&str>) -> String {
        let p = shown(&escape_glob(&self.path), home.map(escape_glob).as_deref());
        if self.glob {
            format!("{}/**", p.trim_end_matches('/'))
        } else {
            p
        }
    }
}

/// An access no rule is suggested for, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refusal {
    /// The access.
    pub access: Access,
    /// The path.
    pub path: String,
    /// Why: a credential rule, or the rule would be too broad.
    pub why: String,
}

/// Caches under the home directory, as paths relative to it, with the
/// tool that owns each. Any directory directly under `~/.cache` is one too.
const CACHES: &[(&str, &str)] = &[
    (".npm", "npm"),
    (".cargo/registry", "cargo"),
    (".cargo/git", "cargo"),
    (".rustup", "rustup"),
    (".m2/repository", "maven"),
    (".gradle/caches", "gradle"),
    (".gradle/wrapper", "gradle"),
    (".yarn/berry/cache", "yarn"),
    (".pnpm-store", "pnpm"),
    (".local/share/pnpm", "pnpm"),
    ("go/pkg/mod", "go"),
    (".ccache", "ccache"),
    (".nuget/packages", "nuget"),
    (".conda/pkgs", "conda"),
    (".deno", "deno"),
    (".bun/install/cache", "bun"),
    (".stack", "stack"),
    (".cabal/packages", "cabal"),
];

/// System locations the `system` preset leaves out.
const SYSTEM_DIRS: &[&str] = &["/etc", "/opt", "/usr", "/var/lib", "/var/cache", "/srv"];

impl Places {
    /// The cache `path` lies in: its directory and its tool.
    pub fn cache_of(&self, path: &str) -> Option<(String, String)> {
        let home = self.home.as_deref()?;
        for (rel, tool) in CACHES {
            let dir = format!("{}/{rel}", home.trim_end_matches('/'));
            if is_within(path.as_bytes(), dir.as_bytes()) {
                return Some((dir, tool.to_string()));
            }
        }
        let cache = format!("{}/.cache", home.trim_end_matches('/'));
        let rest = path.strip_prefix(&cache)?.strip_prefix('/')?;
        let name = rest.split('/').next().filter(|n| !n.is_empty())?;
        Some((format!("{cache}/{name}"), name.to_string()))
    }

    /// The kind of place `path` is.
    pub fn kind(&self, path: &str) -> Kind {
        if let Some((_, tool)) = self.cache_of(path) {
            return Kind::Cache(tool);
        }
        // The nearer of the home directory and a temp dir (a test's HOME
        // may well live in /tmp).
        let temp = self
            .temp_dirs
            .iter()
            .filter(|t| within(path, t))
            .map(String::len)
            .max();
        let home = self
            .home
            .as_deref()
            .filter(|h| within(path, h))
            .map(str::len);
        match (home, temp) {
            (Some(h), t) if t.is_none_or(|t| h >= t) => return Kind::Home,
            (_, Some(_)) => return Kind::Temp,
            _ => {}
        }
        if SYSTEM_DIRS.iter().any(|s| within(path, s)) {
            return Kind::System;
        }
        Kind::Other
    }

    /// The directory `path`'s depth is counted from: its cache, the home
    /// directory, a temp directory, or `/`.
    pub fn anchor(&self, path: &str) -> String {
        if let Some((dir, _)) = self.cache_of(path) {
            return dir;
        }
        let mut best = "/".to_string();
        for a in self.temp_dirs.iter().chain(self.home.iter()) {
            if within(path, a) && a.len() > best.len() {
                best = a.clone();
            }
        }
        best
    }

    /// Why a rule covering `dir` and everything beneath it must not be
    /// suggested; `None` when it may.
    pub fn too_broad(&self, dir: &str) -> Option<String> {
        if components(dir) < 2 {
            return Some(format!("{dir} is a top-level directory"));
        }
        if let Some(h) = &self.home {
            if within(h, dir) {
                return Some(format!("{dir} holds the whole home directory"));
            }
        }
        if within(&self.root, dir) {
            return Some(format!("{dir} holds the workspace"));
        }
        if let Some(t) = self.temp_dirs.iter().find(|t| within(t, dir)) {
            return Some(format!("{dir} holds the shared temp dir {t}"));
        }
        self.protected
            .iter()
            .find(|p| overlaps(dir, p))
            .map(|p| format!("{dir} holds credentials ({p})"))
    }
}

fn within(path: &str, dir: &str) -> bool {
    is_within(path.as_bytes(), dir.as_bytes())
}

fn components(p: &str) -> usize {
    p.split('/').filter(|c| !c.is_empty()).count()
}

/// Whether a rule covering `dir` and beneath could match a path `pattern`
/// matches (conservative: true when unsure).
fn overlaps(dir: &str, pattern: &str) -> bool {
    let comps: Vec<&str> = pattern.split('/').filter(|c| !c.is_empty()).collect();
    let lit = comps
        .iter()
        .take_while(|c| !crate::pattern::has_glob_meta(c))
        .count();
    let literal = format!("/{}", comps[..lit].join("/"));
    let tail = &comps[lit..];
    if within(&literal, dir) {
        return true;
    }
    if !within(dir, &literal) {
        return false;
    }
    // `dir` lies inside the pattern's literal part: the pattern reaches it
    // if it has `**`, or more components than `dir` is deep below it.
    tail.is_empty()
        || tail.iter().any(|c| c.contains("**"))
        || components(dir) - components(&literal) < tail.len()
}

/// `path` with `home` shown as `~`.
fn shown(path: &str, home: Option<&str>) -> String {
    match home {
        Some(h) if path == h => "~".into(),
        Some(h) => match path.strip_prefix(h).and_then(|r| r.strip_prefix('/')) {
            Some(rest) if h != "/" => format!("~/{rest}"),
            _ => path.to_string(),
        },
        None => path.to_string(),
    }
}

/// A path as a pattern that matches only itself: glob syntax escaped.
pub fn escape_glob(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    for c in path.chars() {
        if matches!(c, '*' | '?' | '[' | ']' | '{' | '}' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

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

/// Quotes a string for TOML.
pub fn toml_string(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            c if c.is_control() => {
                let _ = write!(out, "\\u{:04X}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Text made safe for one comment line: control characters (a newline in
/// a file name would end the comment) become `?`.
fn one_line(s: &str) -> String {
    s.chars()
        .map(|c| if c.is_control() { '?' } else { c })
        .collect()
}

/// The comment line above a suggested rule.
pub fn rule_comment(s: &Suggestion, home: Option<&str>) -> String {
    let what = s.kind.describe();
    let ex = one_line(&shown(&s.example, home));
    if s.covers == 1 && !s.glob {
        what
    } else {
        let n = s.covers;
        let paths = if n == 1 { "path" } else { "paths" };
        format!("{what}: {n} {paths} seen, e.g. {ex}")
    }
}

/// The comment block listing refused accesses.
pub fn refusal_comments(refused: &[Refusal], home: Option<&str>) -> String {
    if refused.is_empty() {
        return String::new();
    }
    let mut o = String::new();
    let _ = writeln!(
        o,
        "\n# WARNING: the run also touched these paths, and no rule here allows them.\n\
         # Credential paths (the secrets preset, deny_always) stay denied whatever\n\
         # the allow rules say: find out why the command wants them. A rule naming\n\
         # a directory would allow everything beneath it."
    );
    for r in refused {
        let _ = writeln!(
            o,
            "#   {} {}: {}",
            r.access.as_str(),
            one_line(&shown(&r.path, home)),
            one_line(&r.why)
        );
    }
    o
}

/// A complete commented policy: the workspace as `root`, the system preset,
/// and the suggested allow rules.
pub fn render(
    suggestions: &[Suggestion],
    refused: &[Refusal],
    places: &Places,
    header: &str,
) -> String {
    let home = places.home.as_deref();
    let mut o = String::new();
    for l in header.lines() {
        let _ = writeln!(o, "# {l}");
    }
    let _ = writeln!(
        o,
        "# Review it before use: every allow rule widens what the command may touch.\n\
         \n\
         # The workspace: the command may read and write everything inside it.\n\
         root = {}\n\
         # Installed software (/usr, /lib, the install prefixes of the programs on\n\
         # PATH, the /etc files runtimes need) stays readable: the system preset.\n\
         system = true",
        toml_string(&places.root)
    );
    for access in [Access::Read, Access::Write] {
        let rules: Vec<&Suggestion> = suggestions.iter().filter(|s| s.access == access).collect();
        let _ = writeln!(o, "\n[{}]", access.as_str());
        if access == Access::Read && suggestions.iter().any(|s| s.access == Access::Write) {
            let _ = writeln!(o, "# (paths allowed under [write] may also be read)");
        }
        if rules.is_empty() {
            let _ = writeln!(o, "allow = []");
            continue;
        }
        let _ = writeln!(o, "allow = [");
        for s in rules {
            let _ = writeln!(o, "    # {}", rule_comment(s, home));
            let _ = writeln!(o, "    {},", toml_string(&s.pattern(home)));
        }
        let _ = writeln!(o, "]");
    }
    o.push_str(&refusal_comments(refused, home));
    o
}

/// Adds suggestions to an existing policy, keeping its text and comments:
/// new patterns go at the end of `[read]`/`[write]` `allow` (created when
/// missing), each with its comment; patterns already listed are skipped;
/// `root` is added if the policy has none. Returns the new text.
pub fn merge(
    existing: &str,
    suggestions: &[Suggestion],
    refused: &[Refusal],
    places: &Places,
) -> Result<String, String> {
    use toml_edit::{Array, DocumentMut, Item, Table, Value};
    let home = places.home.as_deref();
    let mut doc: DocumentMut = existing.parse().map_err(|e| format!("{e}"))?;
    if !doc.contains_key("root") {
        doc.insert("root", toml_edit::value(places.root.as_str()));
    }
    for access in [Access::Read, Access::Write] {
        let rules: Vec<&Suggestion> = suggestions.iter().filter(|s| s.access == access).collect();
        if rules.is_empty() {
            continue;
        }
        let name = access.as_str();
        if !doc.contains_key(name) {
            doc.insert(name, Item::Table(Table::new()));
        }
        let table = doc[name]
            .as_table_like_mut()
            .ok_or_else(|| format!("{name} is not a table"))?;
        if table.get("allow").is_none() {
            table.insert("allow", toml_edit::value(Array::new()));
        }
        let arr = table
            .get_mut("allow")
            .and_then(Item::as_array_mut)
            .ok_or_else(|| format!("{name}.allow is not an array"))?;
        for s in rules {
            let pat = s.pattern(home);
            if arr.iter().any(|v| v.as_str() == Some(&pat)) {
                continue;
            }
            let mut v = Value::from(pat);
            v.decor_mut().set_prefix(format!(
                "\n    # {} (added by fsguard suggest)\n    ",
                rule_comment(s, home)
            ));
            arr.push_formatted(v);
        }
        arr.set_trailing("\n");
        arr.set_trailing_comma(true);
    }
    let mut text = doc.to_string();
    if !text.ends_with('\n') {
        text.push('\n');
    }
    text.push_str(&refusal_comments(refused, home));
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn places() -> Places {
        Places {
            home: Some("/home/u".into()),
            root: "/home/u/proj".into(),
            temp_dirs: vec!["/tmp".into(), "/var/tmp".into()],
            protected: vec![
                "/home/u/.ssh".into(),
                "/home/u/.config/gh".into(),
                "/home/u/.cargo/credentials*".into(),
                "/srv/keys/**/*.pem".into(),
            ],
        }
    }

    fn needs(v: &[(&str, &str)]) -> Vec<(Access, String)> {
        v.iter()
            .map(|(a, p)| (Access::parse(a).unwrap(), p.to_string()))
            .collect()
    }

    fn patterns(s: &[Suggestion]) -> Vec<String> {
        s.iter()
            .map(|s| format!("{} {}", s.access.as_str(), s.pattern(Some("/home/u"))))
            .collect()
    }

    #[test]
    fn a_directory_with_many_entries_becomes_one_glob() {
        let n = needs(&[
            ("read", "/opt/sdk/include/a.h"),
            ("read", "/opt/sdk/include/b.h"),
            ("read", "/opt/sdk/include/sub/c.h"),
            ("read", "/opt/sdk/lib/x.so"),
        ]);
        let (s, r) = generalise(&n, &places(), &Options::default());
        assert!(r.is_empty());
        assert_eq!(
            patterns(&s),
            ["read /opt/sdk/include/**", "read /opt/sdk/lib/x.so"]
        );
        assert_eq!(s[0].covers, 3);
        assert_eq!(s[0].kind, Kind::System);
        // Two entries stay exact.
        let (s, _) = generalise(&n[..2], &places(), &Options::default());
        assert_eq!(
            patterns(&s),
            ["read /opt/sdk/include/a.h", "read /opt/sdk/include/b.h"]
        );
    }

    #[test]
    fn depth_is_capped_and_exact_keeps_every_path() {
        let n = needs(&[
            ("write", "/data/out/run1/x/y/z.txt"),
            ("write", "/data/out/run1/x/w.txt"),
        ]);
        let o = Options {
            max_depth: Some(3),
            ..Options::default()
        };
        let (s, _) = generalise(&n, &places(), &o);
        assert_eq!(patterns(&s), ["write /data/out/run1/**"]);
        let o = Options {
            max_depth: Some(2),
            ..Options::default()
        };
        assert_eq!(
            patterns(&generalise(&n, &places(), &o).0),
            ["write /data/out/**"]
        );
        // Depth counts from the anchor: the home directory here.
        let n2 = needs(&[("read", "/home/u/.config/tool/deep/a/b.json")]);
        let o = Options {
            max_depth: Some(2),
            ..Options::default()
        };
        assert_eq!(
            patterns(&generalise(&n2, &places(), &o).0),
            ["read ~/.config/tool/**"]
        );
        let o = Options {
            exact: true,
            ..Options::default()
        };
        let many = needs(&[
            ("read", "/opt/a/1"),
            ("read", "/opt/a/2"),
            ("read", "/opt/a/3"),
            ("read", "/home/u/.cache/pip/x/y"),
        ]);
        assert_eq!(
            patterns(&generalise(&many, &places(), &o).0),
            [
                "read ~/.cache/pip/x/y",
                "read /opt/a/1",
                "read /opt/a/2",
                "read /opt/a/3"
            ]
        );
    }

    #[test]
    fn secrets_are_never_covered() {
        // Three entries of ~/.config would make ~/.config/**, which holds
        // ~/.config/gh: each stays exact instead.
        let n = needs(&[
            ("read", "/home/u/.config/a/x"),
            ("read", "/home/u/.config/b/x"),
            ("read", "/home/u/.config/c/x"),
            ("read", "/home/u/.bashrc"),
            ("read", "/home/u/.profile"),
        ]);
        let (s, r) = generalise(&n, &places(), &Options::default());
        assert!(r.is_empty());
        for p in patterns(&s) {
            assert!(!p.ends_with("~/**") && p != "read ~/.config/**", "{p}");
        }
        assert_eq!(s.len(), 5);
        // A depth cap into a directory holding credentials goes deeper.
        let o = Options {
            max_depth: Some(1),
            ..Options::default()
        };
        let (s, _) = generalise(&n[..1], &places(), &o);
        assert_eq!(patterns(&s), ["read ~/.config/a/**"]);
        // cargo's registry is a cache beside ~/.cargo/credentials*.
        let n = needs(&[("read", "/home/u/.cargo/registry/src/x/lib.rs")]);
        let (s, _) = generalise(&n, &places(), &Options::default());
        assert_eq!(patterns(&s), ["read ~/.cargo/registry/**"]);
        // But ~/.cargo itself holds them: refused, not suggested.
        let n = needs(&[("read", "/home/u/.cargo"), ("write", "/srv/keys")]);
        let (s, r) = generalise(&n, &places(), &Options::default());
        assert!(s.is_empty(), "{s:?}");
        assert_eq!(r.len(), 2);
        assert!(r.iter().all(|r| r.why.contains("credentials")), "{r:?}");
        // Every suggestion, checked against the protected patterns.
        let set = crate::PatternSet::new(&places().protected).unwrap();
        for s in generalise(
            &needs(&[
                ("read", "/home/u/.ssh2/a"),
                ("read", "/home/u/.sshx"),
                ("read", "/home/u/x/1"),
                ("read", "/home/u/y/1"),
                ("read", "/home/u/z/1"),
            ]),
            &places(),
            &Options::default(),
        )
        .0
        {
            assert!(set.find_below(s.path.as_bytes()).is_none(), "{s:?}");
            assert!(!set.matches(s.path.as_bytes()), "{s:?}");
        }
    }

    #[test]
    fn broad_places_are_refused_or_kept_narrow() {
        let n = needs(&[
            ("read", "/home/u"),
            ("read", "/tmp"),
            ("read", "/etc"),
            ("read", "/home"),
            ("write", "/tmp/a"),
            ("write", "/tmp/b"),
            ("write", "/tmp/c"),
        ]);
        let (s, r) = generalise(&n, &places(), &Options::default());
        assert_eq!(
            r.iter().map(|r| r.path.as_str()).collect::<Vec<_>>(),
            ["/home/u", "/tmp", "/etc", "/home"]
        );
        // Three files in /tmp stay three rules: /tmp/** would be everyone's.
        assert_eq!(
            patterns(&s),
            ["write /tmp/a", "write /tmp/b", "write /tmp/c"]
        );
    }

    #[test]
    fn home_temp_and_caches_are_named() {
        let p = places();
        let n = needs(&[
            ("write", "/home/u/.cache/pip/http/1/2/abc"),
            ("write", "/home/u/.cache/pip/wheels/x.whl"),
            ("read", "/home/u/.npm/_cacache/index/x"),
            ("read", "/home/u/.config/tool/settings.json"),
            ("read", "/tmp/build-1/in.txt"),
            ("read", "/opt/thing/lib.so"),
            ("exec", "/etc/passwd"),
        ]);
        let (s, _) = generalise(&n, &p, &Options::default());
        let got: Vec<(String, Kind)> = s
            .iter()
            .map(|s| (s.pattern(p.home.as_deref()), s.kind.clone()))
            .collect();
        assert_eq!(
            got,
            [
                ("~/.cache/pip/**".into(), Kind::Cache("pip".into())),
                ("/etc/passwd".into(), Kind::System),
                ("~/.config/tool/settings.json".into(), Kind::Home),
                ("~/.npm/**".into(), Kind::Cache("npm".into())),
                ("/opt/thing/lib.so".into(), Kind::System),
                ("/tmp/build-1/in.txt".into(), Kind::Temp),
            ]
        );
        assert_eq!(s[0].covers, 2);
        assert_eq!(Kind::Cache("pip".into()).describe(), "pip's cache");
        // A home inside a temp dir is a home.
        let q = Places {
            home: Some("/tmp/h".into()),
            ..places()
        };
        assert_eq!(q.kind("/tmp/h/.config/x"), Kind::Home);
        assert_eq!(q.kind("/tmp/other/x"), Kind::Temp);
        let text = render(&s, &[], &p, "test");
        assert!(text.contains("# pip's cache: 2 paths seen"), "{text}");
        assert!(text.contains("# temp dir\n"), "{text}");
    }

    #[test]
    fn reads_under_a_write_rule_need_none() {
        let n = needs(&[
            ("read", "/data/out/x"),
            ("write", "/data/out"),
            ("read", "/data/in/y"),
        ]);
        let (s, _) = generalise(&n, &places(), &Options::default());
        assert_eq!(patterns(&s), ["write /data/out", "read /data/in/y"]);
    }

    #[test]
    fn names_with_glob_syntax_are_escaped() {
        let n = needs(&[("read", "/data/a[1]*.txt")]);
        let (s, _) = generalise(&n, &places(), &Options::default());
        let pat = s[0].pattern(None);
        assert_eq!(pat, "/data/a\\[1\\]\\*.txt");
        let set = crate::PatternSet::new([pat.as_str()]).unwrap();
        assert!(set.matches(b"/data/a[1]*.txt"));
        assert!(!set.matches(b"/data/a1x.txt"));
    }

    fn load(text: &str) -> crate::Settings {
        let ctx = crate::Context {
            cwd: "/".into(),
            home: Some("/home/u".into()),
            ..Default::default()
        };
        let mut b = crate::Builder::new(ctx);
        // The root must exist to be accepted: use one that does.
        let text = text.replace("/home/u/proj", "/");
        b.config_str(&text, std::path::Path::new("/x/p.toml"))
            .unwrap_or_else(|e| panic!("{e}\n{text}"));
        b.finish().unwrap()
    }

    #[test]
    fn rendered_policy_loads() {
        let p = places();
        let n = needs(&[
            ("write", "/home/u/.cache/pip/a"),
            ("read", "/opt/x \"quoted\"/y"),
            ("read", "/home/u/.ssh/id_rsa"),
        ]);
        let (mut s, mut r) = generalise(&n[..2], &p, &Options::default());
        // A newline in a name stays inside its comment and its string.
        s.push(Suggestion {
            access: Access::Read,
            path: "/opt/a\nb".into(),
            glob: false,
            kind: Kind::System,
            covers: 2,
            example: "/opt/a\nb/c\nd".into(),
        });
        r.push(Refusal {
            access: Access::Read,
            path: n[2].1.clone(),
            why: "secrets:\"/home/u/.ssh\"".into(),
        });
        let text = render(&s, &r, &p, "from a test");
        let set = load(&text);
        assert_eq!(set.write.allow, ["/home/u/.cache/pip/**"]);
        assert_eq!(set.read.allow, ["/opt/x \"quoted\"/y", "/opt/a\nb"]);
        assert!(text.contains("# WARNING"), "{text}");
        assert!(text.contains("#   read ~/.ssh/id_rsa: secrets"), "{text}");
    }

    #[test]
    fn merge_keeps_comments_and_adds_rules() {
        let existing = "\
# my project's policy
root = \"/home/u/proj\"   # the checkout

[read]
allow = [
    # the SDK headers, on purpose
    \"/opt/sdk/include\",
]
";
        let p = places();
        let n = needs(&[
            ("read", "/opt/sdk/include"),
            ("read", "/home/u/.config/tool/a.json"),
            ("write", "/tmp/out.txt"),
        ]);
        let (s, _) = generalise(&n, &p, &Options::default());
        let text = merge(existing, &s, &[], &p).unwrap();
        for kept in [
            "# my project's policy",
            "# the checkout",
            "# the SDK headers, on purpose",
        ] {
            assert!(text.contains(kept), "{kept:?} lost:\n{text}");
        }
        assert_eq!(text.matches("\"/opt/sdk/include\"").count(), 1, "{text}");
        let set = load(&text);
        assert_eq!(
            set.read.allow,
            ["/opt/sdk/include", "/home/u/.config/tool/a.json"]
        );
        assert_eq!(set.write.allow, ["/tmp/out.txt"]);
        assert!(text.contains("(added by fsguard suggest)"), "{text}");
        // A policy without a root gets one.
        let text = merge("readonly = false\n", &s, &[], &p).unwrap();
        assert!(text.contains("root = \"/home/u/proj\""), "{text}");
        let text = merge("[log]\nformat = \"json\"\n", &s, &[], &p).unwrap();
        let set = load(&text);
        assert_eq!(set.root.as_deref(), Some("/"), "{text}");
        assert_eq!(set.log.format, crate::LogFormat::Json);
        assert_eq!(set.write.allow, ["/tmp/out.txt"]);
        assert!(merge("[read\n", &s, &[], &p).is_err());
    }
}
