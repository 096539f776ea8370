//! The command's private `TMPDIR`, and the `cache` preset's directories in
//! it.

use std::path::{Path, PathBuf};

use fsguard_policy::Settings;

/// The command's private temporary directory.
pub(crate) struct TmpDir {
    pub(crate) path: PathBuf,
    keep: bool,
}

impl TmpDir {
    /// A fresh private directory under the system temporary directory,
    /// never inside the root (it would show up in `git status`, and making
    /// it would change the root's mtime): when `$TMPDIR` lies inside the
    /// root, the next of `/tmp`, `/var/tmp`, `/dev/shm` that does not. The
    /// policy gets it as its `tmpdir`: readable and writable.
    pub(crate) fn create(s: &Settings, keep: bool) -> Result<TmpDir, String> {
        let stamp = || {
            let t = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.subsec_nanos())
                .unwrap_or(0);
            format!("{}-{t:08x}", std::process::id())
        };
        let root = s
            .root
            .as_deref()
            .and_then(|r| std::fs::canonicalize(r).ok());
        let inside = |b: &Path| {
            let b = std::fs::canonicalize(b).unwrap_or_else(|_| b.to_path_buf());
            root.as_deref().is_some_and(|r| b.starts_with(r))
        };
        let candidates = [
            std::env::temp_dir(),
            PathBuf::from("/tmp"),
            PathBuf::from("/var/tmp"),
            PathBuf::from("/dev/shm"),
        ];
        // Outside the root if any base is; else (root `/`) at least not the
        // root directory itself.
        let base = candidates
            .iter()
            .find(|b| b.is_dir() && !inside(b))
            .or_else(|| {
                candidates.iter().find(|b| {
                    b.is_dir() && std::fs::canonicalize(b).ok().as_deref() != root.as_deref()
                })
            })
            .unwrap_or(&candidates[0]);
        let bases = [base.join(format!("fsguard-{}", stamp()))];
        let mut last = String::new();
        for b in bases {
            use std::os::unix::fs::DirBuilderExt;
            match std::fs::DirBuilder::new().mode(0o700).create(&b) {
                Ok(()) => {
                    let path = std::fs::canonicalize(&b).map_err(|e| e.to_string())?;
                    return Ok(TmpDir { path, keep });
                }
                Err(e) => last = format!("{}: {e}", b.display()),
            }
        }
        Err(format!("cannot create a temporary directory: {last}"))
    }
}

impl Drop for TmpDir {
    fn drop(&mut self) {
        if !self.keep {
            let _ = std::fs::remove_dir_all(&self.path);
        }
    }
}

/// The thread making the `cache` preset's directories; joined by
/// `finish`, or when dropped.
pub(crate) struct Maker(Option<std::thread::JoinHandle<()>>);

impl Maker {
    /// Starts making `dirs` (nothing to do for None).
    pub(crate) fn start(dirs: Option<crate::presets::CacheDirs>) -> Maker {
        let Some(dirs) = dirs else {
            return Maker(None);
        };
        let dirs = std::sync::Arc::new(dirs);
        let theirs = dirs.clone();
        match std::thread::Builder::new().spawn(move || theirs.make()) {
            Ok(h) => Maker(Some(h)),
            // No thread: made here and now.
            Err(_) => {
                dirs.make();
                Maker(None)
            }
        }
    }

    /// Waits until they are made.
    pub(crate) fn finish(&mut self) {
        if let Some(h) = self.0.take() {
            let _ = h.join();
        }
    }
}

impl Drop for Maker {
    fn drop(&mut self) {
        self.finish();
    }
}
