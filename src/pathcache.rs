//! The paths of open objects, so that `openat(dirfd, …)`, `fchmod(fd)`,
//! `futimens(fd)` need not ask `/proc/self/fd` every time.
//!
//! An entry maps an object's device and inode to the path it had (a path
//! just opened waits, keyed by its fd number, until a lookup proves it). A hit is
//! used only once the kernel confirms that the path *still* names that
//! object: an `lstat` of the cached path must give the device and inode the
//! caller's fd has (one `fstat`). The fd holds its inode alive, so no other
//! live object can have those numbers: a reused inode number, a delete, a
//! rename by this or any other process (of the object or of any directory
//! above it) all make the path name something else or nothing, and the
//! lookup falls back to `/proc/self/fd`. The cache never guesses.
//!
//! The cached path only ever feeds a *decision*. Hooks act through the
//! caller's fd (`unlinkat(dirfd, name)`, `openat2(dirfd, …,
//! RESOLVE_BENEATH)`), never on a path rebuilt from here.
//!
//! Slots are seqlocks over atomics: readers never wait, a writer that finds
//! a slot busy skips it, so neither a signal handler nor a forked child can
//! block on it.

use std::os::fd::BorrowedFd;
use std::sync::atomic::{fence, AtomicU64, Ordering};

use rustix::fs::{AtFlags, CWD};

/// Entries; an object's slot is picked by hashing its identity.
const SLOTS: usize = 512;
/// Path bytes a slot holds; longer paths are not cached.
const WORDS: usize = 30;
const CAP: usize = WORDS * 8;

struct Slot {
    seq: AtomicU64,
    dev: AtomicU64,
    ino: AtomicU64,
    len: AtomicU64,
    path: [AtomicU64; WORDS],
}

#[allow(clippy::declare_interior_mutable_const)]
const EMPTY: Slot = Slot {
    seq: AtomicU64::new(0),
    dev: AtomicU64::new(0),
    ino: AtomicU64::new(0),
    len: AtomicU64::new(0),
    path: [const { AtomicU64::new(0) }; WORDS],
};

static CACHE: [Slot; SLOTS] = [EMPTY; SLOTS];

/// Paths just opened, by fd number: [`remember`] runs on every fast open
/// and must not spend a syscall on the object's identity. A lookup proves
/// such an entry exactly as a [`CACHE`] one (the path must name the fd's
/// object now), then files it there by identity.
const FRESH: usize = 256;

static RECENT: [Slot; FRESH] = [EMPTY; FRESH];

/// The identity of a live object: device and inode of a directory or of a
/// regular file that still has a name.
fn identity(fd: i32) -> Option<(u64, u64)> {
    // SAFETY: only passed to fstat, which checks it.
    let st = rustix::fs::fstat(unsafe { BorrowedFd::borrow_raw(fd) }).ok()?;
    let cacheable = match st.st_mode & libc::S_IFMT {
        libc::S_IFDIR => true,
        libc::S_IFREG => st.st_nlink > 0,
        _ => false,
    };
    cacheable.then_some((st.st_dev, st.st_ino))
}

/// What a miss hands to [`store`].
pub struct Miss {
    id: (u64, u64),
}

/// A consistent copy of `slot` when its key is `key`: the path, NUL-
/// terminated in `buf`, and its length.
fn read(slot: &Slot, key: (u64, u64), buf: &mut [u8; CAP + 1]) -> Option<usize> {
    let s1 = slot.seq.load(Ordering::Acquire);
    if s1 & 1 == 1 {
        return None;
    }
    let dev = slot.dev.load(Ordering::Relaxed);
    let ino = slot.ino.load(Ordering::Relaxed);
    let len = slot.len.load(Ordering::Relaxed) as usize;
    if (dev, ino) != key || len == 0 || len > CAP {
        return None;
    }
    for (i, w) in slot.path[..len.div_ceil(8)].iter().enumerate() {
        buf[i * 8..i * 8 + 8].copy_from_slice(&w.load(Ordering::Relaxed).to_ne_bytes());
    }
    fence(Ordering::Acquire);
    if slot.seq.load(Ordering::Relaxed) != s1 {
        return None;
    }
    buf[len] = 0;
    Some(len)
}

/// Whether the path in `buf` (NUL at `len`) names the object `id` now.
fn proves(buf: &[u8], len: usize, id: (u64, u64)) -> bool {
    let Ok(path) = std::ffi::CStr::from_bytes_with_nul(&buf[..=len]) else {
        return false;
    };
    matches!(
        rustix::fs::statat(CWD, path, AtFlags::SYMLINK_NOFOLLOW),
        Ok(st) if (st.st_dev, st.st_ino) == id
    )
}

/// The cached path of the object `fd` names, written through `put`, once
/// the kernel confirms it still names it. `Err(Some(miss))` on a miss for
/// a cacheable fd: pass it to [`store`] with the fresh path.
pub fn lookup(fd: i32, put: &mut dyn FnMut(&[u8]) -> bool) -> Result<bool, Option<Miss>> {
    if fd < 0 {
        return Err(None);
    }
    let Some(id) = identity(fd) else {
        return Err(None);
    };
    // One byte more than the longest path: its NUL.
    let mut buf = [0u8; CAP + 1];
    if let Some(len) = read(slot_of(id), id, &mut buf) {
        // The proof: the path names this very object now.
        if proves(&buf, len, id) {
            return Ok(put(&buf[..len]));
        }
    }
    if let Some(len) = read(recent_of(fd), (fd as u64, 0), &mut buf) {
        if proves(&buf, len, id) {
            store(Miss { id }, &buf[..len]);
            return Ok(put(&buf[..len]));
        }
    }
    Err(Some(Miss { id }))
}

fn slot_of((dev, ino): (u64, u64)) -> &'static Slot {
    let h = (ino ^ dev.rotate_left(32)).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    &CACHE[(h >> 32) as usize % SLOTS]
}

fn recent_of(fd: i32) -> &'static Slot {
    &RECENT[fd as usize % FRESH]
}

/// Remembers `path` as the path of the object `fd` names, just opened at
/// it. No syscall: the entry is only a candidate until a lookup proves it.
pub fn remember(fd: i32, path: &[u8]) {
    if fd >= 0 {
        put(recent_of(fd), (fd as u64, 0), path);
    }
}

/// Remembers `path`, just learned from the kernel, for the object of a
/// miss. Paths `/proc` gives for what has no name (`… (deleted)` is
/// excluded by the miss: a file without links is not cacheable) and
/// anything not absolute are left out.
pub fn store(miss: Miss, path: &[u8]) {
    put(slot_of(miss.id), miss.id, path);
}

/// Writes `path` under `key` into `slot`, unless another writer holds it.
fn put(slot: &Slot, key: (u64, u64), path: &[u8]) {
    if path.is_empty() || path.len() > CAP || path[0] != b'/' || path.contains(&0) {
        return;
    }
    let s = slot.seq.load(Ordering::Relaxed);
    if s & 1 == 1
        || slot
            .seq
            .compare_exchange(s, s + 1, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
    {
        return;
    }
    fence(Ordering::Release);
    let mut words = path.chunks(8);
    for w in slot.path[..path.len().div_ceil(8)].iter() {
        let chunk = words.next().unwrap_or_default();
        let mut word = [0u8; 8];
        word[..chunk.len()].copy_from_slice(chunk);
        w.store(u64::from_ne_bytes(word), Ordering::Relaxed);
    }
    slot.dev.store(key.0, Ordering::Relaxed);
    slot.ino.store(key.1, Ordering::Relaxed);
    slot.len.store(path.len() as u64, Ordering::Relaxed);
    slot.seq.store(s + 2, Ordering::Release);
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsRawFd;

    fn get(fd: i32) -> Result<Vec<u8>, bool> {
        let mut got = Vec::new();
        let mut put = |p: &[u8]| {
            got = p.to_vec();
            true
        };
        match lookup(fd, &mut put) {
            Ok(_) => Ok(got),
            Err(m) => Err(m.is_some()),
        }
    }

    fn scratch(tag: &str) -> std::path::PathBuf {
        let p = std::env::temp_dir().join(format!("fsguard-pc-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&p);
        std::fs::create_dir_all(&p).unwrap();
        p
    }

    fn bytes(p: &std::path::Path) -> &[u8] {
        p.as_os_str().as_encoded_bytes()
    }

    #[test]
    fn hits_while_the_path_names_the_object() {
        let a = std::fs::File::open("/usr").unwrap();
        let fd = a.as_raw_fd();
        assert_eq!(get(fd), Err(true), "a miss, cacheable");
        remember(fd, b"/usr");
        assert_eq!(get(fd), Ok(b"/usr".to_vec()));
        let dup = a.try_clone().unwrap();
        assert_eq!(
            get(dup.as_raw_fd()),
            Ok(b"/usr".to_vec()),
            "a dup is the same object"
        );
        let other = std::fs::File::open("/usr/lib").unwrap();
        remember(other.as_raw_fd(), b"/");
        assert_eq!(
            get(other.as_raw_fd()),
            Err(true),
            "a path naming another object is no proof"
        );
        remember(fd, b"/");
        assert_eq!(
            get(fd),
            Ok(b"/usr".to_vec()),
            "an unproven candidate never displaces a proven path"
        );
        let f = std::fs::File::open("/dev/null").unwrap();
        remember(f.as_raw_fd(), b"/dev/null");
        assert_eq!(get(f.as_raw_fd()), Err(false), "only files and directories");
    }

    #[test]
    fn a_rename_by_anyone_makes_it_miss() {
        let base = scratch("mv");
        let (a, b) = (base.join("a"), base.join("b"));
        std::fs::create_dir_all(a.join("d")).unwrap();
        let fd = std::fs::File::open(a.join("d")).unwrap();
        remember(fd.as_raw_fd(), bytes(&a.join("d")));
        assert!(get(fd.as_raw_fd()).is_ok());
        // The parent moves: the cached path names nothing now.
        std::fs::rename(&a, &b).unwrap();
        assert_eq!(get(fd.as_raw_fd()), Err(true));
        // Something else takes the old name.
        std::fs::create_dir_all(a.join("d")).unwrap();
        assert_eq!(get(fd.as_raw_fd()), Err(true));
        std::fs::remove_dir_all(&base).unwrap();
    }

    #[test]
    fn a_reused_inode_number_is_another_object() {
        let base = scratch("reuse");
        let old = base.join("old");
        std::fs::create_dir(&old).unwrap();
        let fd = std::fs::File::open(&old).unwrap();
        let ino = std::os::unix::fs::MetadataExt::ino(&fd.metadata().unwrap());
        remember(fd.as_raw_fd(), bytes(&old));
        drop(fd);
        std::fs::remove_dir(&old).unwrap();
        for i in 0..200 {
            let n = base.join(format!("n{i}"));
            std::fs::create_dir(&n).unwrap();
            let f = std::fs::File::open(&n).unwrap();
            if std::os::unix::fs::MetadataExt::ino(&f.metadata().unwrap()) == ino {
                assert_eq!(get(f.as_raw_fd()), Err(true), "reused inode number hit");
                break;
            }
        }
        std::fs::remove_dir_all(&base).unwrap();
    }

    #[test]
    fn a_deleted_file_misses() {
        let base = scratch("del");
        let p = base.join("f");
        let f = std::fs::File::create(&p).unwrap();
        remember(f.as_raw_fd(), bytes(&p));
        assert!(get(f.as_raw_fd()).is_ok());
        std::fs::remove_file(&p).unwrap();
        assert_eq!(get(f.as_raw_fd()), Err(false));
        std::fs::remove_dir_all(&base).unwrap();
    }
}
