//! Per-project policy: `.fsguard.toml`, found from the working directory up
//! to the repository top, when the command line names no policy.
//!
//! The file lives in the workspace the guarded program may write to, so it
//! is not trusted the way `--config` is: it may confine the program to its
//! own directory and tighten from there, never reach beyond it. A file that
//! asks for more is refused (exit 125) with the reason; `--config FILE`
//! accepts it as the user's own choice, `--no-config` skips discovery.
//! The command line's own policy flags layer over a discovered file, and a
//! file found but not used is named on stderr.

use std::path::{Path, PathBuf};

use fsguard_policy::{is_within, Builder, Context, LogTarget, Mode, UnguardedExec};

use crate::Cli;

/// The file's name.
pub const NAME: &str = ".fsguard.toml";

/// Variables that name a policy: with one set, nothing is discovered.
const POLICY_VARS: &[&str] = &["FSGUARD_CONFIG", "FSGUARD_ROOT", "FSGUARD_READONLY"];

/// The discovered config for this command line, checked; `None` when the
/// command line or the environment names a policy, with `--no-config`, or
/// when there is no file.
pub fn discovered(cli: &Cli) -> Result<Option<PathBuf>, String> {
    if !applies(cli) {
        return Ok(None);
    }
    let ctx = Context::from_process();
    let Some(file) = find(&ctx.cwd, ctx.home.as_deref()) else {
        return Ok(None);
    };
    check(&file, ctx)?;
    Ok(Some(file))
}

/// Discovery is for `run`, `check` and `explain` when no config file is
/// named: no `--config`, `--no-config` or `FSGUARD_CONFIG`, and none of
/// `FSGUARD_ROOT`, `FSGUARD_READONLY`. The command line's policy flags
/// (`--root`, `--readonly`, rule flags, `--no-secrets`, `--audit`, …)
/// layer over the file, as they do over `--config`.
fn applies(cli: &Cli) -> bool {
    skipped_because(cli).is_none()
}

/// Why discovery is off for this command line (`None`: it is on, or the
/// command never discovers).
fn skipped_because(cli: &Cli) -> Option<&'static str> {
    if !matches!(cli.command.as_str(), "run" | "check" | "explain") {
        return Some("");
    }
    if cli.no_config {
        return Some("--no-config");
    }
    if cli.config.is_some() {
        return Some("--config names the policy");
    }
    POLICY_VARS
        .iter()
        .find(|v| std::env::var_os(v).is_some())
        .map(|v| match *v {
            "FSGUARD_CONFIG" => "FSGUARD_CONFIG names the policy",
            "FSGUARD_ROOT" => "FSGUARD_ROOT names the policy",
            _ => "FSGUARD_READONLY names the policy",
        })
}

/// The `.fsguard.toml` this command line would have found but does not
/// use, with the reason, as one line for stderr: a policy is never
/// dropped without a word.
pub fn unused_note(cli: &Cli) -> Option<String> {
    let why = skipped_because(cli).filter(|w| !w.is_empty())?;
    let ctx = Context::from_process();
    let file = find(&ctx.cwd, ctx.home.as_deref())?;
    Some(format!(
        "fsguard: note: {} is not used ({why})",
        file.display()
    ))
}

/// `.fsguard.toml` in `cwd` or a parent; the search stops after a directory
/// holding `.git` (the repository top), after `$HOME`, and at `/`.
pub fn find(cwd: &Path, home: Option<&Path>) -> Option<PathBuf> {
    let home = home.and_then(|h| std::fs::canonicalize(h).ok());
    let mut dir = std::fs::canonicalize(cwd).ok()?;
    loop {
        let f = dir.join(NAME);
        if f.is_file() {
            return Some(f);
        }
        if dir.join(".git").exists() || Some(&dir) == home.as_ref() {
            return None;
        }
        dir = dir.parent()?.to_path_buf();
    }
}

/// Refuses a discovered file that would reach beyond its own directory:
/// a root outside it, writes anywhere (no root, not read-only, no write
/// allow-list), an `allow` rule or a `unix_sockets` entry outside it (an
/// abstract socket is outside any directory), `secrets = false`, audit mode,
/// `unguarded_exec = "allow"`, or a `[log] target` (the record is the
/// user's to place, not the workspace's).
pub fn check(file: &Path, ctx: Context) -> Result<(), String> {
    let dir = file
        .parent()
        .and_then(|d| std::fs::canonicalize(d).ok())
        .ok_or_else(|| format!("{}: cannot resolve its directory", file.display()))?;
    let mut b = Builder::new(ctx);
    b.config_file(file).map_err(|e| e.to_string())?;
    let s = b.finish().map_err(|e| e.to_string())?;
    let d = dir.as_os_str().as_encoded_bytes();
    let inside = |p: &str| is_within(literal(p).as_bytes(), d);
    let mut why: Vec<String> = Vec::new();
    match &s.root {
        Some(r) if !inside(r) => why.push(format!("root {r:?} is outside {}", dir.display())),
        Some(_) => {}
        None if !s.readonly && s.write.allow.is_empty() => why.push(
            "no root, not read-only and no write allow-list: writes would go anywhere".into(),
        ),
        None => {}
    }
    for (key, pats) in [
        ("read.allow", &s.read.allow),
        ("write.allow", &s.write.allow),
    ] {
        for p in pats.iter().filter(|p| !inside(p)) {
            why.push(format!("{key} {p:?} is outside {}", dir.display()));
        }
    }
    for p in &s.unix_sockets {
        if p.starts_with('@') {
            why.push(format!(
                "unix_sockets {p:?} is an abstract socket, outside any directory"
            ));
        } else if !inside(p) {
            why.push(format!("unix_sockets {p:?} is outside {}", dir.display()));
        }
    }
    if !s.secrets {
        why.push("secrets = false".into());
    }
    if s.mode == Mode::Audit {
        why.push("mode = \"audit\"".into());
    }
    if s.unguarded_exec == UnguardedExec::Allow {
        why.push("unguarded_exec = \"allow\"".into());
    }
    if s.log.target != LogTarget::Stderr {
        why.push("[log] target".into());
    }
    if why.is_empty() {
        return Ok(());
    }
    Err(format!(
        "{f}: a discovered config may only confine to its own directory, not loosen: {}; \
         accept it with --config {f}, or skip it with --no-config",
        why.join("; "),
        f = file.display()
    ))
}

/// The part of a pattern before its first glob component.
fn literal(p: &str) -> String {
    let lit: Vec<&str> = p
        .split('/')
        .take_while(|c| !c.contains(['*', '?', '[', '{']))
        .collect();
    let lit = lit.join("/");
    if lit.is_empty() {
        "/".into()
    } else {
        lit
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tmp(tag: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("fsguard-discover-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(d.join("repo/sub/deep")).unwrap();
        std::fs::canonicalize(d).unwrap()
    }

    fn ctx(cwd: &Path) -> Context {
        Context {
            cwd: cwd.to_path_buf(),
            home: Some(PathBuf::from("/nonexistent-home")),
            exe: None,
            path_var: None,
        }
    }

    #[test]
    fn finds_upwards_and_stops_at_the_repository_top() {
        let d = tmp("find");
        let deep = d.join("repo/sub/deep");
        assert_eq!(find(&deep, None), None);
        std::fs::write(d.join(NAME), "readonly = true\n").unwrap();
        assert_eq!(find(&deep, None), Some(d.join(NAME)), "no .git: up to /");
        std::fs::create_dir(d.join("repo/.git")).unwrap();
        assert_eq!(find(&deep, None), None, "stops at the repository top");
        assert_eq!(find(&deep, Some(&d.join("repo/sub"))), None, "and at $HOME");
        std::fs::write(d.join("repo/sub").join(NAME), "readonly = true\n").unwrap();
        assert_eq!(find(&deep, None), Some(d.join("repo/sub").join(NAME)));
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn a_discovered_file_may_confine_not_loosen() {
        let d = tmp("check");
        let repo = d.join("repo");
        let f = repo.join(NAME);
        let ok = [
            "root = \".\"\n[write]\ndeny = [\"*.lock\"]\n",
            "root = \"sub\"\n",
            "readonly = true\n",
            "[write]\nallow = [\"sub\"]\n",
            "root = \".\"\n[read]\nallow = [\"sub/**\"]\ndeny_always = [\"*.pem\"]\n",
            "root = \".\"\nsystem = false\nhide_outside = true\n[log]\nformat = \"json\"\n",
        ];
        for text in ok {
            std::fs::write(&f, text).unwrap();
            assert_eq!(check(&f, ctx(&repo)), Ok(()), "{text}");
        }
        let refused = [
            ("root = \"..\"\n", "root"),
            ("root = \"/\"\n", "root"),
            ("[write]\ndeny = [\"x\"]\n", "writes would go anywhere"),
            ("root = \".\"\n[read]\nallow = [\"/etc\"]\n", "read.allow"),
            ("root = \".\"\n[write]\nallow = [\"/**\"]\n", "write.allow"),
            ("root = \".\"\nsecrets = false\n", "secrets = false"),
            ("root = \".\"\nmode = \"audit\"\n", "audit"),
            (
                "root = \".\"\nunguarded_exec = \"allow\"\n",
                "unguarded_exec",
            ),
            ("root = \".\"\n[log]\ntarget = \"off\"\n", "[log] target"),
        ];
        for (text, why) in refused {
            std::fs::write(&f, text).unwrap();
            let e = check(&f, ctx(&repo)).unwrap_err();
            assert!(e.contains(why) && e.contains("--no-config"), "{text}: {e}");
        }
        let _ = std::fs::remove_dir_all(&d);
    }

    /// Issue 27 item 9: a discovered file may name sockets in its own
    /// directory only.
    #[test]
    fn unix_sockets_are_doors_out_a_discovered_file_names_only_its_own() {
        let d = tmp("sockets");
        let repo = d.join("repo");
        let f = repo.join(NAME);
        std::fs::write(&f, "root = \".\"\nunix_sockets = [\"run/db.sock\"]\n").unwrap();
        assert_eq!(check(&f, ctx(&repo)), Ok(()));
        for (text, why) in [
            (
                "root = \".\"\nunix_sockets = [\"/var/run/docker.sock\"]\n",
                "outside",
            ),
            ("root = \".\"\nunix_sockets = [\"@x\"]\n", "abstract"),
        ] {
            std::fs::write(&f, text).unwrap();
            let e = check(&f, ctx(&repo)).unwrap_err();
            assert!(e.contains("unix_sockets") && e.contains(why), "{text}: {e}");
        }
        let _ = std::fs::remove_dir_all(&d);
    }
}
