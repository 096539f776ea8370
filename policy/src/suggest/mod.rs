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
//!
//! [`Places`] knows the machine's places and what is too broad;
//! [`generalise`] shapes the rules; [`render`](fn@render) and [`merge`] write them.

mod places;
mod render;
#[cfg(test)]
mod tests;
mod tree;

use crate::{is_within, Access};

pub(crate) use places::CACHES;
pub use render::{add_unix_sockets, merge, refusal_comments, render, rule_comment, toml_string};
pub use tree::generalise;

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
        let p = shown(&escape_glob(&self.path), home.map(escape_glob).as_deref())
            .replace(tree::STAR, "*");
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

fn within(path: &str, dir: &str) -> bool {
    is_within(path.as_bytes(), dir.as_bytes())
}

fn components(p: &str) -> usize {
    p.split('/').filter(|c| !c.is_empty()).count()
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
