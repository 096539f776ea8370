//! The places of this machine: caches, the home and temp directories,
//! system locations, and which directories are too broad for a rule.

use super::{components, within, Kind, Places};
use crate::is_within;

/// Caches under the home directory, as paths relative to it, with the
/// tool that owns each. Any directory directly under `~/.cache` is one too.
pub(crate) const CACHES: &[(&str, &str)] = &[
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
