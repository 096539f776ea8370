//! What `fsguard run` does for the presets beyond the policy: the `cache`
//! preset's variables (tools' caches go to the private `TMPDIR`, so they
//! neither write to the real home nor are refused), and the removal of the
//! `ipc` namespace's leftovers at exit.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use fsguard_policy::CACHE_ENV;

/// Entries of `CARGO_HOME` cargo writes to even when it downloads nothing
/// (lock files, the last-use database), and credentials: not linked.
const CARGO_PRIVATE: &[&str] = &[
    ".package-cache",
    ".package-cache-mutate",
    ".global-cache",
    "credentials",
    "credentials.toml",
];

/// The variables the preset sets for the command, their directories made
/// below `tmp`. `env` is the command's environment, for `CARGO_HOME`.
pub fn cache_env(tmp: &Path, env: &[(OsString, OsString)]) -> Vec<(OsString, OsString)> {
    let get = |k: &str| {
        env.iter()
            .find(|(n, _)| n == k)
            .map(|(_, v)| PathBuf::from(v))
    };
    let mut out = Vec::new();
    for (var, dir) in CACHE_ENV {
        let d = tmp.join(dir);
        if std::fs::create_dir_all(&d).is_ok() {
            out.push((OsString::from(var), d.into_os_string()));
        }
    }
    // cargo keeps its registry (needed offline) and its locks in one
    // directory: a CARGO_HOME of links to the real one's entries, minus the
    // files cargo writes on every build, which are made fresh here.
    let real = get("CARGO_HOME").or_else(|| get("HOME").map(|h| h.join(".cargo")));
    if let Some(real) = real.filter(|r| r.is_dir()) {
        let home = tmp.join(".cargo");
        if std::fs::create_dir_all(&home).is_ok() {
            for e in std::fs::read_dir(&real).into_iter().flatten().flatten() {
                let name = e.file_name();
                if CARGO_PRIVATE.iter().any(|p| name == *p) {
                    continue;
                }
                let _ = std::os::unix::fs::symlink(e.path(), home.join(&name));
            }
            out.push(("CARGO_HOME".into(), home.into_os_string()));
        }
    }
    out
}

/// Removes the shared memory objects and named semaphores the tree left in
/// its `ipc` namespace (`/dev/shm/fsguard.<tag>.*`, `sem.fsguard.<tag>.*`),
/// as the private `TMPDIR` is removed: they live in memory until unlinked.
pub fn ipc_cleanup(tag: &str) {
    let shm = format!("fsguard.{tag}.");
    let sem = format!("sem.fsguard.{tag}.");
    for e in std::fs::read_dir("/dev/shm")
        .into_iter()
        .flatten()
        .flatten()
    {
        let name = e.file_name();
        let n = name.as_encoded_bytes();
        if n.starts_with(shm.as_bytes()) || n.starts_with(sem.as_bytes()) {
            let _ = std::fs::remove_file(e.path());
        }
    }
}
