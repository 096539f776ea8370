//! The paths of open objects, so that `openat(dirfd, …)`, `fchmod(fd)`,
//! `futimens(fd)` need not ask `/proc/self/fd` every time.
//!
//! An entry maps an object's device and inode to the path it had. A hit is
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
    let slot = slot_of(id);
    let s1 = slot.seq.load(Ordering::Acquire);
    if s1 & 1 == 1 {
        return Err(Some(Miss { id }));
    }
    let dev = slot.dev.load(Ordering::Relaxed);
    let ino = slot.ino.load(Ordering::Relaxed);
    let len = slot.len.load(Ordering::Relaxed) as usize;
    // One byte more than the longest path: its NUL.
    let mut buf = [0u8; CAP + 1];
    for (i, w) in slot.path.iter().enumerate() {
        buf[i * 8..i * 8 + 8].copy_from_slice(&w.load(Ordering::Relaxed).to_ne_bytes());
    }
    fence(Ordering::Acquire);
    if slot.seq.load(Ordering::Relaxed) != s1 || (dev, ino) != id || len == 0 || len > CAP {
        return Err(Some(Miss { id }));
    }
    buf[len] = 0;
    let Ok(path) = std::ffi::CStr::from_bytes_until_nul(&buf) else {
        return Err(Some(Miss { id }));
    };
    // The proof: the path names this very object now.
    match rustix::fs::statat(CWD, path, AtFlags::SYMLINK_NOFOLLOW) {
        Ok(st) if (st.st_dev, st.st_ino) == id => Ok(put(&buf[..len])),
        _ => Err(Some(Miss { id })),
    }
}

fn slot_of((dev, ino): (u64, u64)) -> &'static Slot {
    let h = (ino ^ dev.rotate_left(32)).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    &CACHE[(h >> 32) as usize % SLOTS]
}

/// Remembers `path` as the path of the object `fd` names, just opened at it.
pub fn remember(fd: i32, path: &[u8]) {
    if let Some(id) = (fd >= 0).then(|| identity(fd)).flatten() {
        store(Miss { id }, path);
    }
}

/// Remembers `path`, just learned from the kernel, for the object of a
/// miss. Paths `/proc` gives for what has no name (`… (deleted)` is
/// excluded by the miss: a file without links is not cacheable) and
/// anything not absolute are left out.
pub fn store(miss: Miss, path: &[u8]) {
    if path.is_empty() || path.len() > CAP || path[0] != b'/' || path.contains(&0) {
        return;
    }
    let id = miss.id;
    let slot = slot_of(id);
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
    let mut buf = [0u8; CAP];
    buf[..path.len()].copy_from_slice(path);
    for (i, w) in slot.path.iter().enumerate() {
        let mut word = [0u8; 8];
        word.copy_from_slice(&buf[i * 8..i * 8 + 8]);
        w.store(u64::from_ne_bytes(word), Ordering::Relaxed);
    }
    slot.dev.store(id.0, Ordering::Relaxed);
    slot.ino.store(id.1, Ordering::Relaxed);
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
        remember(fd, b"/");
        assert_eq!(
            get(fd),
            Err(true),
            "a path naming another object is no proof"
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
