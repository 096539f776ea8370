//! What `fsguard run` does for the presets beyond the policy: the `cache`
//! preset's variables (tools' caches go to the private `TMPDIR`, so they
//! neither write to the real home nor are refused), and the removal of the
//! `ipc` namespace's leftovers at exit.

use std::ffi::{CString, OsString};
use std::os::unix::ffi::OsStrExt;
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

/// The variables the preset sets for the command (directories below
/// `tmp`; `env` is the command's environment, for `CARGO_HOME`), and the
/// directories and links to make for them. `skip`: entries of the real
/// `CARGO_HOME` not linked (its configuration, handed as a copy).
pub fn cache_env(
    tmp: &Path,
    env: &[(OsString, OsString)],
    skip: &[&str],
) -> (Vec<(OsString, OsString)>, CacheDirs) {
    let get = |k: &str| {
        env.iter()
            .find(|(n, _)| n == k)
            .map(|(_, v)| PathBuf::from(v))
    };
    let mut out = Vec::new();
    let mut dirs: Vec<PathBuf> = Vec::new();
    let mut links = Vec::new();
    for (var, dir) in CACHE_ENV {
        let d = tmp.join(dir);
        // Each once; parents first (sorted below).
        for a in d
            .ancestors()
            .take_while(|a| a.starts_with(tmp) && *a != tmp)
        {
            if !dirs.iter().any(|x| x == a) {
                dirs.push(a.to_path_buf());
            }
        }
        out.push((OsString::from(var), d.into_os_string()));
    }
    dirs.sort_by_key(|d| d.components().count());
    // cargo keeps its registry (needed offline) and its locks in one
    // directory: a CARGO_HOME of links to the real one's entries, minus the
    // files cargo writes on every build, which are made fresh here.
    let real = get("CARGO_HOME").or_else(|| get("HOME").map(|h| h.join(".cargo")));
    if let Some(real) = real.filter(|r| r.is_dir()) {
        let home = tmp.join(".cargo");
        for e in std::fs::read_dir(&real).into_iter().flatten().flatten() {
            let name = e.file_name();
            if CARGO_PRIVATE.iter().chain(skip).any(|p| name == *p) {
                continue;
            }
            links.push((e.path(), home.join(&name)));
        }
        dirs.push(home.clone());
        out.push(("CARGO_HOME".into(), home.into_os_string()));
    }
    let c = |p: &Path| CString::new(p.as_os_str().as_bytes()).ok();
    let plan = CacheDirs {
        dirs: dirs.iter().filter_map(|d| c(d)).collect(),
        links: links
            .iter()
            .filter_map(|(from, to)| Some((c(from)?, c(to)?)))
            .collect(),
    };
    (out, plan)
}

/// The `cache` preset's directories (parents first) and `CARGO_HOME`'s
/// links, as C strings: [`CacheDirs::make`] makes only system calls, so a
/// forked child may run it before exec as well as a thread of the
/// supervisor while the command starts.
pub struct CacheDirs {
    dirs: Vec<CString>,
    links: Vec<(CString, CString)>,
}

impl CacheDirs {
    /// Makes what is not there yet (running it twice is harmless); what
    /// fails is left out, as a tool would find it missing.
    pub fn make(&self) {
        for d in &self.dirs {
            // SAFETY: a C string; mode as `create_dir_all` uses.
            unsafe { libc::mkdir(d.as_ptr(), 0o777) };
        }
        for (from, to) in &self.links {
            // SAFETY: two C strings.
            unsafe { libc::symlink(from.as_ptr(), to.as_ptr()) };
        }
    }
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
