//! Temporary directories and small file-making helpers.
//!
//! `TempDir` lives under `std::env::temp_dir()`, never under the build tree,
//! so it is never part of the `system` read locations of a confined process.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

/// A number not returned before in this test binary (for unique names).
pub fn unique() -> usize {
    static N: AtomicUsize = AtomicUsize::new(0);
    N.fetch_add(1, Ordering::SeqCst)
}

/// A fresh directory under `std::env::temp_dir()`, removed (recursively) on
/// drop. `path()` is canonical (no symlinks), so it can be compared with the
/// resolved paths in trace lines.
pub struct TempDir {
    path: PathBuf,
}

impl TempDir {
    pub fn new(tag: &str) -> TempDir {
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or(0);
        let base = std::env::temp_dir();
        for attempt in 0..100 {
            let p = base.join(format!(
                "fsguard-test-{tag}-{}-{}-{nanos:x}-{attempt}",
                std::process::id(),
                unique()
            ));
            match std::fs::create_dir(&p) {
                Ok(()) => {
                    return TempDir {
                        path: p.canonicalize().expect("canonicalize temp dir"),
                    }
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(e) => panic!("cannot create temp dir {}: {e}", p.display()),
            }
        }
        panic!("cannot create a unique temp dir under {}", base.display());
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn join<P: AsRef<Path>>(&self, p: P) -> PathBuf {
        self.path.join(p)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        make_writable(&self.path);
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

fn make_writable(p: &Path) {
    if let Ok(md) = std::fs::symlink_metadata(p) {
        if md.is_dir() {
            let _ = std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o700));
            if let Ok(rd) = std::fs::read_dir(p) {
                for e in rd.flatten() {
                    make_writable(&e.path());
                }
            }
        }
    }
}

/// Create a file with contents and mode.
pub fn write_file(p: &Path, contents: &str, mode: u32) {
    std::fs::write(p, contents).unwrap_or_else(|e| panic!("write {}: {e}", p.display()));
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).unwrap();
}

pub fn mkdir(p: &Path) {
    std::fs::create_dir_all(p).unwrap_or_else(|e| panic!("mkdir {}: {e}", p.display()));
}

pub fn symlink(target: &str, link: &Path) {
    std::os::unix::fs::symlink(target, link)
        .unwrap_or_else(|e| panic!("symlink {} -> {target}: {e}", link.display()));
}

/// Names in /dev/shm containing `needle`.
pub fn shm_entries(needle: &str) -> Vec<String> {
    std::fs::read_dir("/dev/shm")
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.contains(needle))
                .collect()
        })
        .unwrap_or_default()
}
