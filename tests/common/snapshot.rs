//! Tree snapshots: everything observable about a directory tree, so a test
//! can assert that a denied call changed nothing on disk.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

pub type Snapshot = BTreeMap<String, String>;

/// Everything observable about a tree, including mtimes and ctimes (so a
/// chmod/chown/utime/truncate that slipped through is noticed even when it
/// changes nothing else). Atimes are left out: reads are allowed.
pub fn snapshot(root: &Path) -> Snapshot {
    let mut m = BTreeMap::new();
    walk(root, root, true, &mut m);
    m
}

/// Like `snapshot` but without times and directory sizes, to compare two
/// trees built in different directories at different times.
pub fn snapshot_portable(root: &Path) -> Snapshot {
    let mut m = BTreeMap::new();
    walk(root, root, false, &mut m);
    m
}

fn walk(root: &Path, p: &Path, times: bool, m: &mut Snapshot) {
    let rel = p
        .strip_prefix(root)
        .map(|r| r.to_string_lossy().into_owned())
        .unwrap_or_default();
    let rel = if rel.is_empty() { ".".to_string() } else { rel };
    let md = match std::fs::symlink_metadata(p) {
        Ok(md) => md,
        Err(e) => {
            m.insert(rel, format!("<lstat error: {e}>"));
            return;
        }
    };
    let ft = md.file_type();
    let kind = if ft.is_dir() {
        "dir"
    } else if ft.is_symlink() {
        "symlink"
    } else if ft.is_file() {
        "file"
    } else {
        "other"
    };
    let mut d = format!(
        "{kind} mode={:o} uid={} gid={} nlink={}",
        md.mode(),
        md.uid(),
        md.gid(),
        md.nlink()
    );
    if !ft.is_dir() || times {
        let _ = write!(d, " size={}", md.len());
    }
    if times {
        let _ = write!(
            d,
            " mtime={}.{:09} ctime={}.{:09}",
            md.mtime(),
            md.mtime_nsec(),
            md.ctime(),
            md.ctime_nsec()
        );
    }
    if ft.is_symlink() {
        match std::fs::read_link(p) {
            Ok(t) => {
                let _ = write!(d, " -> {}", t.display());
            }
            Err(e) => {
                let _ = write!(d, " -> <readlink error: {e}>");
            }
        }
    } else if ft.is_file() {
        match std::fs::read(p) {
            Ok(bytes) => {
                let _ = write!(
                    d,
                    " content={:?}",
                    String::from_utf8_lossy(&bytes[..bytes.len().min(200)])
                );
                let _ = write!(d, " fnv={:016x}", fnv(&bytes));
            }
            Err(e) => {
                let _ = write!(d, " <read error: {e}>");
            }
        }
    }
    m.insert(rel, d);
    if ft.is_dir() {
        let mut entries: Vec<PathBuf> = match std::fs::read_dir(p) {
            Ok(rd) => rd.flatten().map(|e| e.path()).collect(),
            Err(e) => {
                m.insert(format!("{}/<readdir>", p.display()), format!("error: {e}"));
                return;
            }
        };
        entries.sort();
        for e in entries {
            walk(root, &e, times, m);
        }
    }
}

fn fnv(b: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf29ce484222325;
    for x in b {
        h ^= *x as u64;
        h = h.wrapping_mul(0x100000001b3);
    }
    h
}

/// Human-readable difference of two snapshots, or None when equal.
pub fn snapshot_diff(before: &Snapshot, after: &Snapshot) -> Option<String> {
    if before == after {
        return None;
    }
    let mut s = String::new();
    for (k, v) in before {
        match after.get(k) {
            None => {
                let _ = writeln!(s, "  removed  {k}: {v}");
            }
            Some(w) if w != v => {
                let _ = writeln!(s, "  changed  {k}:\n     before {v}\n     after  {w}");
            }
            _ => {}
        }
    }
    for (k, v) in after {
        if !before.contains_key(k) {
            let _ = writeln!(s, "  added    {k}: {v}");
        }
    }
    Some(s)
}
