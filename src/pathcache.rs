//! The paths of open objects, keyed by device and inode, so that
//! `openat(dirfd, …)`, `fchmod(fd)`, `futimens(fd)` need not ask
//! `/proc/self/fd` every time: one `fstat` of the fd finds the entry,
//! whatever fd number (or dup) names the object.
//!
//! An entry is used only while the fd still names the same object (device
//! and inode), the object still exists, and no rename or link by this
//! process came since it was made. For a dirfd the fast path then acts on
//! the absolute path it checked (`cached path + name`), never on the dirfd,
//! so a stale entry can make a call fail but never act on an object other
//! than the one decided on. For a call on an fd, a file with several names
//! (hard links, bind mounts) may be judged by another of its names than
//! `/proc` would give; what the call changes is the same inode either way,
//! which any of its names reaches.
//!
//! Slots are seqlocks over atomics: readers never wait, a writer that finds
//! a slot busy skips it, so neither a signal handler nor a forked child can
//! block on it.

use std::os::fd::BorrowedFd;
use std::sync::atomic::{fence, AtomicU64, Ordering};

/// Entries; an object's slot is picked by hashing its identity.
const SLOTS: usize = 512;
/// Path bytes a slot holds; longer paths are not cached.
const WORDS: usize = 30;
const CAP: usize = WORDS * 8;

struct Slot {
    seq: AtomicU64,
    generation: AtomicU64,
    dev: AtomicU64,
    ino: AtomicU64,
    len: AtomicU64,
    path: [AtomicU64; WORDS],
}

#[allow(clippy::declare_interior_mutable_const)]
const EMPTY: Slot = Slot {
    seq: AtomicU64::new(0),
    generation: AtomicU64::new(0),
    dev: AtomicU64::new(0),
    ino: AtomicU64::new(0),
    len: AtomicU64::new(0),
    path: [const { AtomicU64::new(0) }; WORDS],
};

static CACHE: [Slot; SLOTS] = [EMPTY; SLOTS];

/// Bumped by every rename or link this process makes: a moved directory's
/// cached path is stale. Starts at 1 so an empty slot (0) never matches.
static GENERATION: AtomicU64 = AtomicU64::new(1);

/// Forgets every entry (a directory may have moved).
pub fn invalidate() {
    GENERATION.fetch_add(1, Ordering::AcqRel);
}

/// The identity an entry is checked against: device and inode of a
/// directory or regular file that still exists.
fn identity(fd: i32) -> Option<(u64, u64)> {
    // SAFETY: only passed to fstat, which checks it.
    let st = rustix::fs::fstat(unsafe { BorrowedFd::borrow_raw(fd) }).ok()?;
    let kind = st.st_mode & libc::S_IFMT;
    let cacheable = kind == libc::S_IFDIR || kind == libc::S_IFREG;
    (cacheable && st.st_nlink > 0).then_some((st.st_dev, st.st_ino))
}

/// The cached path of the object `fd` names, written through `put`. `Some(id)` on
/// a miss for a cacheable fd: pass `id` to [`store`] with the fresh path.
pub fn lookup(fd: i32, put: &mut dyn FnMut(&[u8]) -> bool) -> Result<bool, Option<(u64, u64)>> {
    if fd < 0 {
        return Err(None);
    }
    let Some(id) = identity(fd) else {
        return Err(None);
    };
    let slot = slot_of(id);
    let s1 = slot.seq.load(Ordering::Acquire);
    if s1 & 1 == 1 {
        return Err(Some(id));
    }
    let generation = slot.generation.load(Ordering::Relaxed);
    let dev = slot.dev.load(Ordering::Relaxed);
    let ino = slot.ino.load(Ordering::Relaxed);
    let len = slot.len.load(Ordering::Relaxed) as usize;
    let mut buf = [0u8; CAP];
    for (i, w) in slot.path.iter().enumerate() {
        buf[i * 8..i * 8 + 8].copy_from_slice(&w.load(Ordering::Relaxed).to_ne_bytes());
    }
    fence(Ordering::Acquire);
    if slot.seq.load(Ordering::Relaxed) != s1
        || generation != GENERATION.load(Ordering::Acquire)
        || (dev, ino) != id
        || len == 0
        || len > CAP
    {
        return Err(Some(id));
    }
    Ok(put(&buf[..len]))
}

/// Remembers `path` as the path of the object `fd` names, just opened at it.
pub fn remember(fd: i32, path: &[u8]) {
    if let Some(id) = (fd >= 0).then(|| identity(fd)).flatten() {
        store(id, path);
    }
}

fn slot_of((dev, ino): (u64, u64)) -> &'static Slot {
    let h = (ino ^ dev.rotate_left(32)).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    &CACHE[(h >> 32) as usize % SLOTS]
}

/// Remembers `path` as the path of the object with identity `id`.
pub fn store(id: (u64, u64), path: &[u8]) {
    if path.is_empty() || path.len() > CAP || path[0] != b'/' {
        return;
    }
    let generation = GENERATION.load(Ordering::Acquire);
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
    slot.generation.store(generation, Ordering::Relaxed);
    slot.dev.store(id.0, Ordering::Relaxed);
    slot.ino.store(id.1, Ordering::Relaxed);
    slot.len.store(path.len() as u64, Ordering::Relaxed);
    slot.seq.store(s + 2, Ordering::Release);
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsRawFd;

    #[test]
    fn hits_until_the_fd_names_another_directory_or_something_moves() {
        let a = std::fs::File::open("/usr").unwrap();
        let fd = a.as_raw_fd();
        let got = std::cell::RefCell::new(Vec::new());
        let mut put = |p: &[u8]| {
            *got.borrow_mut() = p.to_vec();
            true
        };
        let id = lookup(fd, &mut put).unwrap_err().expect("cacheable");
        store(id, b"/usr");
        assert_eq!(lookup(fd, &mut put), Ok(true));
        assert_eq!(*got.borrow(), b"/usr");
        invalidate();
        assert!(lookup(fd, &mut put).is_err(), "a rename forgets everything");
        store(id, b"/usr");
        let dup = a.try_clone().unwrap();
        assert_eq!(
            lookup(dup.as_raw_fd(), &mut put),
            Ok(true),
            "a dup names the same directory"
        );
        drop(a);
        drop(dup);
        let b = std::fs::File::open("/").unwrap();
        if b.as_raw_fd() == fd {
            assert!(
                lookup(fd, &mut put) != Ok(true) || *got.borrow() == b"/",
                "same number, other directory"
            );
        }
        let f = std::fs::File::open("/dev/null").unwrap();
        assert_eq!(
            lookup(f.as_raw_fd(), &mut put),
            Err(None),
            "only files and directories"
        );
    }
}
