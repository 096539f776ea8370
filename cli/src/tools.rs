//! Package managers under `fsguard run` with no flag: their caches in the
//! private `TMPDIR` (the `cache` preset), and their registry configuration
//! handed as a copy without credentials (with the `secrets` preset).
//!
//! The copies are made here, by the supervisor, before the command starts:
//! the command reads the copy, and the original joins the run's `secrets`
//! (refused, `rule=secrets`), so no credential line is ever readable to it.
//! A file the sanitiser cannot read with certainty is not copied at all
//! (a one-line note says so) and is refused all the same.

use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use fsguard_policy::registry::{sanitize, ConfigKind, REGISTRY_CONFIGS};
use fsguard_policy::{Access, Policy, Settings};

/// The registry configuration handed to the command.
#[derive(Default)]
pub(crate) struct Handed {
    /// Variables pointing the tools at the copies.
    pub(crate) env: Vec<(OsString, OsString)>,
    /// Names in the redirected `CARGO_HOME` that are copies (or refused
    /// originals): not linked to the real ones.
    pub(crate) cargo_skip: Vec<&'static str>,
    /// One line per file that could not be copied.
    pub(crate) notes: Vec<String>,
    /// Maven's configuration was copied (or refused): the JVM's
    /// `user.home` goes to the private TMPDIR, where Maven finds the copies.
    pub(crate) maven_home: bool,
}

/// `value` of `key` in `env`.
fn get<'a>(env: &'a [(OsString, OsString)], key: &str) -> Option<&'a OsStr> {
    env.iter()
        .rev()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.as_os_str())
        .filter(|v| !v.is_empty())
}

/// Copies each existing registry configuration file, without its
/// credentials, into `tmp`, and adds every original to `settings`'
/// `secret_paths`. Nothing with the `secrets` preset off; entries whose
/// copy lives in a redirected home (cargo, Gradle) only with `cache` on.
/// `env` is the caller's environment.
pub(crate) fn registry_copies(
    settings: &mut Settings,
    tmp: &Path,
    env: &[(OsString, OsString)],
) -> Handed {
    let mut out = Handed::default();
    if !settings.secrets {
        return out;
    }
    let home = get(env, "HOME").map(PathBuf::from);
    let mut copied: Vec<&str> = Vec::new();
    for c in REGISTRY_CONFIGS {
        let maven = c.kind == ConfigKind::MavenSettings;
        if c.copy.is_some() && c.var.is_none() && !maven && !settings.cache {
            continue;
        }
        // The file the tool reads, and the one below $HOME.
        let mut candidates: Vec<PathBuf> = Vec::new();
        if let Some(v) = c.file_var.and_then(|v| get(env, v)) {
            candidates.push(PathBuf::from(v));
        }
        if let Some(d) = c.dir_var.and_then(|v| get(env, v)) {
            let name = Path::new(c.home_path).file_name().unwrap_or_default();
            candidates.push(Path::new(d).join(name));
        }
        if let Some(h) = &home {
            candidates.push(h.join(c.home_path));
        }
        let mut source = None;
        for p in candidates {
            if p.symlink_metadata().is_err() {
                continue;
            }
            // Refused to the command under its real name (what `decide`
            // sees), whether or not a copy is made.
            let real = std::fs::canonicalize(&p).unwrap_or_else(|_| p.clone());
            let real = real.display().to_string();
            if !settings.secret_paths.contains(&real) {
                settings.secret_paths.push(real);
            }
            source.get_or_insert(p);
        }
        let Some(src) = source else { continue };
        out.maven_home |= maven;
        if let Some(name) = c.dir_var.filter(|v| *v == "CARGO_HOME").and(c.copy) {
            out.cargo_skip.push(name.rsplit('/').next().unwrap_or(name));
        }
        let Some(copy) = c.copy else { continue };
        if copied.contains(&copy) {
            continue;
        }
        copied.push(copy);
        let dest = tmp.join(copy);
        match hand(c.kind, &src, &dest) {
            Ok(()) => {
                if let Some(var) = c.var {
                    out.env.push((var.into(), dest.into_os_string()));
                }
            }
            Err(why) => out.notes.push(format!(
                "fsguard: {}: not handed to the command ({why}); it stays refused",
                src.display()
            )),
        }
    }
    out
}

/// The largest configuration file copied.
const MAX_CONFIG: u64 = 1 << 20;

/// Reads `src` (as the supervisor), sanitises it, and writes the copy to
/// `dest` (mode 0600, parents made).
fn hand(kind: ConfigKind, src: &Path, dest: &Path) -> Result<(), String> {
    // A regular file of a sane size only: a FIFO or a device named by a
    // variable would hang or flood the supervisor.
    let meta = std::fs::metadata(src).map_err(|e| e.to_string())?;
    if !meta.is_file() {
        return Err("not a regular file".into());
    }
    if meta.len() > MAX_CONFIG {
        return Err(format!("larger than {MAX_CONFIG} bytes"));
    }
    let mut text = Vec::new();
    use std::io::Read;
    std::fs::File::open(src)
        .and_then(|f| f.take(MAX_CONFIG + 1).read_to_end(&mut text))
        .map_err(|e| e.to_string())?;
    if text.len() as u64 > MAX_CONFIG {
        return Err(format!("larger than {MAX_CONFIG} bytes"));
    }
    let clean = sanitize(kind, &text)?;
    if let Some(parent) = dest.parent() {
        std::fs::create_dir_all(parent).map_err(|e| e.to_string())?;
    }
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(dest)
        .map_err(|e| e.to_string())?;
    f.write_all(&clean).map_err(|e| e.to_string())
}

/// Whether the policy already lets the command write `path` (an absolute
/// path; what does not exist yet is judged by its nearest existing parent's
/// real path).
fn writable(policy: &Policy, path: &Path) -> bool {
    if !path.is_absolute() {
        return false;
    }
    let mut base = path;
    let mut rest = Vec::new();
    let real = loop {
        if let Ok(r) = std::fs::canonicalize(base) {
            break r;
        }
        match (base.parent(), base.file_name()) {
            (Some(p), Some(n)) => {
                rest.push(n.to_os_string());
                base = p;
            }
            _ => return false,
        }
    };
    let full = rest.iter().rev().fold(real, |p, n| p.join(n));
    policy
        .decide(Access::Write, full.as_os_str().as_bytes())
        .allowed
}

/// The `cache` preset's variables for a command whose caller's environment
/// is `env`: each of `ours` (variable, directory in the private `TMPDIR`)
/// replaces the caller's value, unless the policy already lets the command
/// write where the caller's value points (a warm cache inside the root
/// stays in use). Then Maven's local repository (`-Dmaven.repo.local`
/// appended to `MAVEN_OPTS`) and, when `GEM_HOME` is replaced, the
/// caller's `GEM_HOME` kept on `GEM_PATH` (its gems stay loadable, read).
pub(crate) fn cache_vars(
    policy: Option<&Policy>,
    tmp: &Path,
    env: &[(OsString, OsString)],
    ours: Vec<(OsString, OsString)>,
) -> Vec<(OsString, OsString)> {
    let kept = |var: &OsStr| {
        let theirs = env.iter().rev().find(|(k, _)| k == var).map(|(_, v)| v);
        matches!((policy, theirs), (Some(p), Some(v)) if !v.is_empty() && writable(p, Path::new(v)))
    };
    let mut out: Vec<(OsString, OsString)> = ours.into_iter().filter(|(k, _)| !kept(k)).collect();
    // Maven 3 reads no variable for its local repository: a system
    // property in MAVEN_OPTS (the caller's own setting kept when it names
    // a place the command may write).
    let opts = get(env, "MAVEN_OPTS")
        .map(|v| v.to_string_lossy().into_owned())
        .unwrap_or_default();
    let theirs = opts
        .split_whitespace()
        .find_map(|o| o.strip_prefix("-Dmaven.repo.local="));
    let keep_theirs = matches!((policy, theirs), (Some(p), Some(t)) if writable(p, Path::new(t)));
    if !keep_theirs {
        let repo = tmp.join(".m2/repository");
        let mut v = OsString::from(opts.trim());
        if !v.is_empty() {
            v.push(" ");
        }
        v.push("-Dmaven.repo.local=");
        v.push(repo);
        out.push(("MAVEN_OPTS".into(), v));
    }
    if out.iter().any(|(k, _)| k == "GEM_HOME") {
        if let Some(old) = get(env, "GEM_HOME") {
            // A trailing `:` keeps RubyGems' default path after it.
            let mut path = OsString::from(old);
            path.push(":");
            if let Some(p) = get(env, "GEM_PATH") {
                path.push(p);
            }
            out.push(("GEM_PATH".into(), path));
        }
    }
    out
}

/// Points Maven's JVM at `tmp` as its `user.home` (appended to the
/// `MAVEN_OPTS` in `env`, so it wins over an earlier one): Maven reads
/// `~/.m2/settings.xml` and `toolchains.xml` there, where the copies are,
/// and never the originals (Maven 3.8 treats an unreadable settings file
/// as fatal, and reads no variable naming another).
pub(crate) fn maven_home(env: &mut Vec<(OsString, OsString)>, tmp: &Path) {
    let mut v = get(env, "MAVEN_OPTS")
        .map(OsString::from)
        .unwrap_or_default();
    if !v.is_empty() {
        v.push(" ");
    }
    v.push("-Duser.home=");
    v.push(tmp);
    env.retain(|(k, _)| k != "MAVEN_OPTS");
    env.push(("MAVEN_OPTS".into(), v));
}

#[cfg(test)]
mod tests;
