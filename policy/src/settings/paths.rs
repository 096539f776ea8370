//! Paths at load: `~` and relative paths expanded, patterns made absolute
//! and canonical, and the locations of the `system` preset.

use std::path::{Component, Path, PathBuf};

use super::walk::Walk;
use super::{Context, Error};
use crate::pattern::has_glob_meta;
use crate::presets;

pub(super) fn absolute(base: &Path, p: &Path) -> PathBuf {
    if p.is_absolute() {
        p.to_path_buf()
    } else {
        base.join(p)
    }
}

pub(super) fn expand_home(p: &str, home: Option<&Path>) -> Option<PathBuf> {
    if p == "~" {
        return home.map(Path::to_path_buf);
    }
    if let Some(rest) = p.strip_prefix("~/") {
        return home.map(|h| h.join(rest));
    }
    Some(PathBuf::from(p))
}

pub(super) fn canonical_dir(p: &Path) -> Result<String, Error> {
    // An error names the path as the kernel would (`/tmp/x/./nope` is
    // `/tmp/x/nope`).
    let shown = || canonical_prefix(p);
    let c =
        std::fs::canonicalize(p).map_err(|e| Error::new(format!("{}: {e}", shown().display())))?;
    if !c.is_dir() {
        return Err(Error::new(format!(
            "{}: not a directory",
            shown().display()
        )));
    }
    Ok(c.display().to_string())
}

/// Lexical `.`/`..` folding; used only on the part of a path that does not
/// exist yet (the part that exists is canonicalized by the kernel).
fn lexical(p: &Path) -> PathBuf {
    let mut out = PathBuf::from("/");
    for c in p.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::Normal(n) => out.push(n),
            Component::RootDir | Component::CurDir | Component::Prefix(_) => {}
        }
    }
    out
}

/// Canonicalizes the deepest existing ancestor of `p` and appends the rest
/// (folded lexically): how `fsguard explain` names a path that may not exist.
pub fn canonical_prefix(p: &Path) -> PathBuf {
    canonical_prefix_in(&Walk::new(), p)
}

/// [`canonical_prefix`] with the kernel's answers shared through `walk`.
pub(super) fn canonical_prefix_in(walk: &Walk, p: &Path) -> PathBuf {
    let p = lexical(p);
    // Most paths asked about (presets under `$HOME`, a log file to be made)
    // have no symlink in them: one look per component finds where they
    // stop existing, where `realpath` would be retried from `/` for every
    // ancestor. Any symlink, or any other error, takes the general way.
    if let Some(c) = walk.plain_prefix(&p) {
        return c;
    }
    let mut existing = p.clone();
    let mut rest = Vec::new();
    loop {
        if let Ok(c) = walk.canonicalize(&existing) {
            let mut out = c;
            for r in rest.iter().rev() {
                out.push(r);
            }
            return out;
        }
        match (
            existing.file_name().map(|n| n.to_os_string()),
            existing.parent(),
        ) {
            (Some(name), Some(parent)) => {
                rest.push(name);
                existing = parent.to_path_buf();
            }
            _ => return p,
        }
    }
}

/// Makes a user pattern absolute and canonical: `~/` expanded, relative
/// patterns against `base`, a slash-less glob (`*.pem`) matching at any depth
/// below `base`, and the literal leading part resolved through symlinks.
pub(super) fn expand_pattern(
    pattern: &str,
    base: &Path,
    home: Option<&Path>,
) -> Result<String, Error> {
    expand_pattern_in(&Walk::new(), pattern, base, home)
}

/// [`expand_pattern`] with the kernel's answers shared through `walk`.
pub(super) fn expand_pattern_in(
    walk: &Walk,
    pattern: &str,
    base: &Path,
    home: Option<&Path>,
) -> Result<String, Error> {
    if pattern.is_empty() {
        return Err(Error::new("empty pattern"));
    }
    let expanded = expand_home(pattern, home)
        .ok_or_else(|| Error::new(format!("{pattern}: $HOME is not set")))?;
    let text = expanded
        .to_str()
        .ok_or_else(|| Error::new("pattern is not UTF-8"))?;
    let glob = has_glob_meta(text);
    let abs = if text.starts_with('/') {
        text.to_string()
    } else if glob && !text.contains('/') {
        format!("{}/**/{text}", base.display())
    } else {
        format!("{}/{text}", base.display())
    };
    if !glob {
        return Ok(canonical_prefix_in(walk, Path::new(&abs))
            .display()
            .to_string());
    }
    // Split at the first component with glob syntax; canonicalize before it.
    let comps: Vec<&str> = abs.split('/').collect();
    let first_glob = comps
        .iter()
        .position(|c| has_glob_meta(c))
        .unwrap_or(comps.len());
    let literal = comps[..first_glob].join("/");
    let tail = comps[first_glob..].join("/");
    let lit = canonical_prefix_in(
        walk,
        Path::new(if literal.is_empty() { "/" } else { &literal }),
    );
    let lit = lit.display().to_string();
    Ok(if lit == "/" {
        format!("/{tail}")
    } else {
        format!("{lit}/{tail}")
    })
}

/// The JVMs' configuration directories in `/etc` (`/etc/java-17-openjdk`,
/// one per installed JDK; Debian links `jvm.cfg` and `java.security` there
/// from the install), real paths: readable with the `system` preset.
pub(super) fn jvm_config_dirs(walk: &Walk) -> Vec<String> {
    let mut out: Vec<String> = std::fs::read_dir("/etc")
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.file_name().as_encoded_bytes().starts_with(b"java-"))
        .filter_map(|e| walk.canonicalize(&e.path()).ok())
        .map(|c| c.display().to_string())
        .collect();
    out.sort();
    out
}

/// `system` locations: the built-in list plus the install prefixes of the
/// main executable and of each `PATH` directory. A `bin`, `sbin` or `shims`
/// directory stands for its parent (`~/.pyenv/shims` → `~/.pyenv`); any
/// other directory only for itself. Never a location that would hand out
/// more than installed software: `/`, `$HOME` or a home directory, the root
/// or anything above it, a temporary directory.
pub(super) fn system_paths(walk: &Walk, ctx: &Context, root: Option<&str>) -> Vec<String> {
    let canon = |p: &Path| walk.canonicalize(p).ok();
    let home = ctx.home.as_deref().and_then(canon);
    let root = root.map(PathBuf::from);
    let mut temps: Vec<PathBuf> = ["/tmp", "/var/tmp", "/dev/shm"]
        .iter()
        .filter_map(|t| canon(Path::new(t)))
        .collect();
    if let Some(t) = std::env::var_os("TMPDIR").and_then(|t| canon(Path::new(&t))) {
        temps.push(t);
    }
    let too_broad = |p: &Path| {
        let depth = p.components().count();
        p == Path::new("/")
            || home.as_deref().is_some_and(|h| h.starts_with(p))
            || root.as_deref().is_some_and(|r| r.starts_with(p))
            || temps.iter().any(|t| t.starts_with(p))
            || p == Path::new("/root")
            || (p.starts_with("/home") && depth <= 3)
    };
    let mut dirs: Vec<PathBuf> = Vec::new();
    let mut prefix_of = |dir: &Path| {
        let Some(d) = canon(dir) else { return };
        let up = match d.file_name().and_then(|n| n.to_str()) {
            Some("bin" | "sbin" | "shims") => d.parent().map(Path::to_path_buf),
            _ => None,
        };
        if let Some(c) = [up, Some(d)].into_iter().flatten().find(|c| !too_broad(c)) {
            dirs.push(c);
        }
    };
    if let Some(exe) = &ctx.exe {
        if let Some(dir) = exe.parent() {
            prefix_of(dir);
        }
    }
    if let Some(path) = &ctx.path_var {
        for dir in std::env::split_paths(path) {
            if dir.is_absolute() {
                prefix_of(&dir);
            }
        }
    }
    let mut out: Vec<String> = Vec::new();
    for p in presets::SYSTEM {
        if let Some(c) = canon(Path::new(p)) {
            out.push(c.display().to_string());
        }
    }
    out.extend(dirs.into_iter().map(|d| d.display().to_string()));
    if let Some(home) = &ctx.home {
        for p in presets::TOOL_CONFIGS {
            if let Ok(abs) = expand_pattern_in(walk, p, Path::new("/"), Some(home)) {
                out.push(abs);
            }
        }
    }
    let mut seen = std::collections::HashSet::new();
    out.retain(|p| seen.insert(p.clone()));
    out
}
