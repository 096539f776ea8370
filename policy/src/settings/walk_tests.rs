//! The shared walk against `realpath` (`std::fs::canonicalize`): the same
//! answer for every path, and the same settings as the walk it replaced.

use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};

use super::paths::{canonical_prefix_in, system_paths};
use super::walk::Walk;
use super::Context;
use crate::presets;

fn tmpdir(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("fsguard-walk-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    std::fs::canonicalize(&d).unwrap()
}

/// `walk` (one per call and one shared) answers as `realpath` for `p`.
fn same(walk: &Walk, p: &Path) {
    let want = std::fs::canonicalize(p).ok();
    assert_eq!(
        walk.canonicalize(p).ok(),
        want,
        "shared walk: {}",
        p.display()
    );
    assert_eq!(Walk::new().canonicalize(p).ok(), want, "{}", p.display());
    assert_eq!(
        canonical_prefix_in(walk, p),
        old::canonical_prefix(p),
        "canonical_prefix: {}",
        p.display()
    );
}

/// The machine's own paths: the `system` list, `PATH`, `$HOME` and its tool
/// configs and secrets, the alternatives chains, the executable.
#[test]
fn real_paths_as_realpath() {
    let walk = Walk::new();
    let mut paths: Vec<PathBuf> = presets::SYSTEM.iter().map(PathBuf::from).collect();
    if let Some(path) = std::env::var_os("PATH") {
        paths.extend(std::env::split_paths(&path));
    }
    if let Some(home) = std::env::var_os("HOME").map(PathBuf::from) {
        for p in presets::TOOL_CONFIGS.iter().chain(presets::SECRETS) {
            paths.push(home.join(p.trim_start_matches("~/")));
        }
        paths.push(home);
    }
    for dir in ["/etc/alternatives", "/bin", "/lib", "/etc"] {
        if let Ok(rd) = std::fs::read_dir(dir) {
            paths.extend(rd.filter_map(|e| Some(e.ok()?.path())).take(200));
        }
    }
    paths.extend(std::env::current_exe().ok());
    paths.extend(
        [
            "/",
            "/tmp",
            "/var/tmp",
            "/dev/shm",
            "/proc/self",
            "/proc/self/fd/0",
        ]
        .iter()
        .map(PathBuf::from),
    );
    assert!(paths.len() > 60, "{}", paths.len());
    for p in &paths {
        same(&walk, p);
    }
}

/// Symlinked components, relative and absolute targets, chains, `..` after
/// a link, dangling links, loops, missing parts, a file used as a directory,
/// trailing `/`, `/.` and `/..`.
#[test]
fn fixtures_as_realpath() {
    let d = tmpdir("fix");
    std::fs::create_dir_all(d.join("usr/lib/x")).unwrap();
    std::fs::write(d.join("usr/lib/x/f"), "").unwrap();
    symlink("usr/lib", d.join("lib")).unwrap();
    symlink(d.join("lib"), d.join("abs")).unwrap();
    symlink("../lib/x/f", d.join("usr/chain")).unwrap();
    symlink("chain", d.join("usr/chain2")).unwrap();
    symlink("nowhere/f", d.join("dangling")).unwrap();
    symlink("loop2", d.join("loop1")).unwrap();
    symlink("loop1", d.join("loop2")).unwrap();
    symlink("x/", d.join("usr/lib/slash")).unwrap();
    symlink("f/..", d.join("usr/lib/x/up")).unwrap();
    let walk = Walk::new();
    for rel in [
        "",
        "lib",
        "lib/x/f",
        "abs/x",
        "abs/x/../x/./f",
        "usr/chain",
        "usr/chain2",
        "usr/../lib/x/..",
        "lib/../usr",
        "dangling",
        "dangling/more",
        "loop1",
        "loop1/x",
        "missing",
        "missing/..",
        "missing/deeper/still",
        "lib/x/f/..",
        "lib/x/f/.",
        "lib/x/f/",
        "lib/x/f/g",
        "lib/x/",
        "lib/x/.",
        "lib//x///f",
        "usr/lib/slash",
        "usr/lib/slash/f",
        "usr/lib/x/up",
        "usr/lib/x/up/f",
    ] {
        same(&walk, &d.join(rel));
        same(&walk, Path::new(&format!("{}/{rel}", d.display())));
    }
    let long: String = (0..45)
        .map(|i| format!("l{i}"))
        .collect::<Vec<_>>()
        .join("/");
    for i in 0..45 {
        let next = if i == 44 {
            "lib".to_string()
        } else {
            format!("c{}", i + 1)
        };
        symlink(next, d.join(format!("c{i}"))).unwrap();
    }
    same(&walk, &d.join("c0"));
    same(&walk, &d.join("c10"));
    same(&walk, &d.join(long));
    std::fs::remove_dir_all(&d).unwrap();
}

/// The whole `system` list, with a root, a `$HOME` of symlinks and a `PATH`
/// through them, as the walk it replaced built it.
#[test]
fn system_paths_unchanged() {
    let d = tmpdir("sys");
    std::fs::create_dir_all(d.join("real/home/.pyenv/shims")).unwrap();
    std::fs::create_dir_all(d.join("real/home/.config/git")).unwrap();
    std::fs::create_dir_all(d.join("real/tool/bin")).unwrap();
    std::fs::create_dir_all(d.join("ws")).unwrap();
    symlink("real/home", d.join("home")).unwrap();
    symlink("real/tool", d.join("tool")).unwrap();
    let machine = Context::from_process();
    let path = std::env::join_paths(
        [
            d.join("home/.pyenv/shims"),
            d.join("tool/bin"),
            d.join("missing/bin"),
            d.join("ws"),
        ]
        .into_iter()
        .chain(std::env::split_paths(
            machine.path_var.as_deref().unwrap_or_default(),
        )),
    )
    .unwrap();
    let ours = Context {
        cwd: d.clone(),
        home: Some(d.join("home")),
        exe: Some(d.join("tool/bin/prog")),
        path_var: Some(path),
    };
    let ws = d.join("ws").display().to_string();
    for (ctx, root) in [
        (&machine, None),
        (&machine, Some(ws.as_str())),
        (&ours, Some(ws.as_str())),
        (&ours, None),
    ] {
        let got = system_paths(&Walk::new(), ctx, root);
        assert_eq!(got, old::system_paths(ctx, root), "{ctx:?} {root:?}");
        assert!(got.iter().any(|p| p.ends_with("/usr")), "{got:?}");
    }
    std::fs::remove_dir_all(&d).unwrap();
}

/// The walk this replaced: `realpath` for every path, `lstat` per component.
mod old {
    use std::path::{Component, Path, PathBuf};

    use super::super::Context;
    use crate::pattern::has_glob_meta;
    use crate::presets;

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

    pub fn canonical_prefix(p: &Path) -> PathBuf {
        let p = lexical(p);
        if let Some(c) = plain_prefix(&p) {
            return c;
        }
        let mut existing = p.clone();
        let mut rest = Vec::new();
        loop {
            if let Ok(c) = std::fs::canonicalize(&existing) {
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

    fn plain_prefix(p: &Path) -> Option<PathBuf> {
        let mut cur = PathBuf::from("/");
        for c in p.components().skip(1) {
            cur.push(c);
            match std::fs::symlink_metadata(&cur) {
                Ok(m) if m.file_type().is_symlink() => return None,
                Ok(_) => {}
                Err(e)
                    if e.kind() == std::io::ErrorKind::NotFound || e.raw_os_error() == Some(20) =>
                {
                    return Some(p.to_path_buf());
                }
                Err(_) => return None,
            }
        }
        Some(p.to_path_buf())
    }

    fn expand_pattern(pattern: &str, home: &Path) -> Option<String> {
        let abs = home.join(pattern.strip_prefix("~/")?).display().to_string();
        assert!(!has_glob_meta(&abs), "{abs}");
        Some(canonical_prefix(Path::new(&abs)).display().to_string())
    }

    pub fn system_paths(ctx: &Context, root: Option<&str>) -> Vec<String> {
        let canon = |p: &Path| std::fs::canonicalize(p).ok();
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
                if let Some(abs) = expand_pattern(p, home) {
                    out.push(abs);
                }
            }
        }
        let mut seen = std::collections::HashSet::new();
        out.retain(|p| seen.insert(p.clone()));
        out
    }
}
