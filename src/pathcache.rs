//! The paths of open objects, keyed by the kernel's identity for them, so
//! that `openat(dirfd, …)`, `fchmod(fd)`, `futimens(fd)` need not ask
//! `/proc/self/fd` every time.
//!
//! The identity is the mount id and file handle `name_to_handle_at` gives
//! for the fd (`AT_HANDLE_FID` where the kernel has it): the inode number
//! *and* its generation, so an inode number reused after a delete is another
//! key, not a stale hit. A hit costs that one system call.
//!
//! The cache only ever feeds a *decision*. Hooks act through the caller's fd
//! (`unlinkat(dirfd, name)`, `openat2(dirfd, …, RESOLVE_BENEATH)`), never
//! on a path rebuilt from here, so a stale entry can at worst judge a call
//! by the name its object had; it never makes a call touch another object.
//!
//! When an entry is dropped:
//! * the fd names another object (identity differs): a miss;
//! * a regular file's last link is gone (`st_nlink == 0`): a miss (one
//!   `fstat` more for files; a deleted directory accepts no new entries,
//!   so its old name decides nothing the kernel would carry out);
//! * this process renamed or linked anything: every entry (a moved
//!   directory's cached path is stale);
//! * the slot is reused by another object.
//!
//! A rename made by *another* process of a directory this process holds
//! open (or of one of its ancestors) is not seen: the decision uses the
//! path the directory had when this process last resolved it, as a shell's
//! `$PWD` does. docs/limits.md says so.
//!
//! Slots are seqlocks over atomics: readers never wait, a writer that finds
//! a slot busy skips it, so neither a signal handler nor a forked child can
//! block on it.

use std::os::fd::BorrowedFd;
use std::sync::atomic::{fence, AtomicBool, AtomicU64, Ordering};

/// Entries; an object's slot is picked by hashing its identity.
const SLOTS: usize = 512;
/// Path bytes a slot holds; longer paths are not cached.
const WORDS: usize = 30;
const CAP: usize = WORDS * 8;
/// File handle bytes a slot holds; larger handles are not cached.
const HWORDS: usize = 5;
const HCAP: usize = HWORDS * 8;

/// What an entry is: a directory, or a file whose link count is checked.
const DIR: u64 = 1;
const FILE: u64 = 2;

struct Slot {
    seq: AtomicU64,
    generation: AtomicU64,
    mount: AtomicU64,
    /// handle type << 32 | handle length << 8 | kind
    meta: AtomicU64,
    handle: [AtomicU64; HWORDS],
    len: AtomicU64,
    path: [AtomicU64; WORDS],
}

#[allow(clippy::declare_interior_mutable_const)]
const EMPTY: Slot = Slot {
    seq: AtomicU64::new(0),
    generation: AtomicU64::new(0),
    mount: AtomicU64::new(0),
    meta: AtomicU64::new(0),
    handle: [const { AtomicU64::new(0) }; HWORDS],
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

/// The kernel's identity of an open object.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Id {
    mount: u64,
    htype: u32,
    hlen: u32,
    handle: [u64; HWORDS],
}

impl Id {
    fn meta(&self, kind: u64) -> u64 {
        (u64::from(self.htype) << 32) | (u64::from(self.hlen) << 8) | kind
    }
}

/// `struct file_handle` with room for the handles we cache.
#[repr(C)]
struct FileHandle {
    bytes: u32,
    htype: i32,
    f_handle: [u8; HCAP],
}

const AT_EMPTY_PATH: usize = 0x1000;
const AT_HANDLE_FID: usize = 0x200;

/// Whether the kernel accepted `AT_HANDLE_FID` (6.5 and later); cleared on
/// the first EINVAL.
static FID: AtomicBool = AtomicBool::new(true);

/// The identity of `fd`'s object, or `None` where the filesystem has no
/// file handles (then nothing is cached for it).
fn identity(fd: i32) -> Option<Id> {
    let mut fh = FileHandle {
        bytes: HCAP as u32,
        htype: 0,
        f_handle: [0; HCAP],
    };
    let mut mount: i32 = 0;
    loop {
        let fid = FID.load(Ordering::Relaxed);
        let flags = AT_EMPTY_PATH | if fid { AT_HANDLE_FID } else { 0 };
        // SAFETY: name_to_handle_at(fd, "", &fh, &mount, flags): the path is
        // a static empty C string, `fh` has room for `bytes` handle bytes,
        // `mount` is an int; the kernel writes only within them.
        let r = unsafe {
            crate::sys::syscall5(
                crate::sys::SYS_NAME_TO_HANDLE_AT,
                fd as usize,
                c"".as_ptr() as usize,
                std::ptr::addr_of_mut!(fh) as usize,
                std::ptr::addr_of_mut!(mount) as usize,
                flags,
            )
        };
        if r == -(libc::EINVAL as isize) && fid {
            FID.store(false, Ordering::Relaxed);
            continue;
        }
        if r != 0 || fh.bytes as usize > HCAP {
            return None;
        }
        break;
    }
    let mut handle = [0u64; HWORDS];
    for (i, w) in handle.iter_mut().enumerate() {
        let mut b = [0u8; 8];
        b.copy_from_slice(&fh.f_handle[i * 8..i * 8 + 8]);
        *w = u64::from_ne_bytes(b);
    }
    Some(Id {
        mount: mount as u32 as u64,
        htype: fh.htype as u32,
        hlen: fh.bytes,
        handle,
    })
}

/// Directory or file with links left; anything else is not cached.
fn kind_of(fd: i32) -> Option<u64> {
    // SAFETY: only passed to fstat, which checks it.
    let st = rustix::fs::fstat(unsafe { BorrowedFd::borrow_raw(fd) }).ok()?;
    match st.st_mode & libc::S_IFMT {
        libc::S_IFDIR => Some(DIR),
        libc::S_IFREG if st.st_nlink > 0 => Some(FILE),
        _ => None,
    }
}

/// What a miss hands to [`store`].
pub struct Miss {
    id: Id,
}

/// The cached path of the object `fd` names, written through `put`.
/// `Err(Some(miss))` on a miss for a cacheable fd: pass it to [`store`]
/// with the fresh path.
pub fn lookup(fd: i32, put: &mut dyn FnMut(&[u8]) -> bool) -> Result<bool, Option<Miss>> {
    if fd < 0 {
        return Err(None);
    }
    let Some(id) = identity(fd) else {
        return Err(None);
    };
    let slot = slot_of(&id);
    let s1 = slot.seq.load(Ordering::Acquire);
    if s1 & 1 == 1 {
        return Err(Some(Miss { id }));
    }
    let generation = slot.generation.load(Ordering::Relaxed);
    let mount = slot.mount.load(Ordering::Relaxed);
    let meta = slot.meta.load(Ordering::Relaxed);
    let mut handle = [0u64; HWORDS];
    for (h, w) in handle.iter_mut().zip(slot.handle.iter()) {
        *h = w.load(Ordering::Relaxed);
    }
    let len = slot.len.load(Ordering::Relaxed) as usize;
    let mut buf = [0u8; CAP];
    for (i, w) in slot.path.iter().enumerate() {
        buf[i * 8..i * 8 + 8].copy_from_slice(&w.load(Ordering::Relaxed).to_ne_bytes());
    }
    fence(Ordering::Acquire);
    let kind = meta & 0xff;
    if slot.seq.load(Ordering::Relaxed) != s1
        || generation != GENERATION.load(Ordering::Acquire)
        || mount != id.mount
        || handle != id.handle
        || meta != id.meta(kind)
        || len == 0
        || len > CAP
    {
        return Err(Some(Miss { id }));
    }
    if kind == FILE && kind_of(fd) != Some(FILE) {
        // Unlinked since: its old name is nobody's now.
        return Err(None);
    }
    Ok(put(&buf[..len]))
}

fn slot_of(id: &Id) -> &'static Slot {
    let mut h = id.mount.rotate_left(32) ^ u64::from(id.htype);
    for w in id.handle {
        h = (h ^ w).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
    &CACHE[(h >> 32) as usize % SLOTS]
}

/// Remembers `path` as the path of the object `fd` names, just opened at it.
pub fn remember(fd: i32, path: &[u8]) {
    if fd < 0 {
        return;
    }
    if let Some(id) = identity(fd) {
        store(fd, Miss { id }, path);
    }
}

/// Remembers `path`, just read from `/proc/self/fd/<fd>`, for the object
/// `fd` names. Deleted files and anything but files and directories are
/// left out.
pub fn store(fd: i32, miss: Miss, path: &[u8]) {
    if path.is_empty() || path.len() > CAP || path[0] != b'/' {
        return;
    }
    let Some(kind) = kind_of(fd) else { return };
    let generation = GENERATION.load(Ordering::Acquire);
    let id = miss.id;
    let slot = slot_of(&id);
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
    for (w, h) in slot.handle.iter().zip(id.handle) {
        w.store(h, Ordering::Relaxed);
    }
    slot.generation.store(generation, Ordering::Relaxed);
    slot.mount.store(id.mount, Ordering::Relaxed);
    slot.meta.store(id.meta(kind), Ordering::Relaxed);
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

    #[test]
    fn hits_until_the_fd_names_another_object_or_something_moves() {
        let a = std::fs::File::open("/usr").unwrap();
        let fd = a.as_raw_fd();
        assert_eq!(get(fd), Err(true), "a miss, cacheable");
        remember(fd, b"/usr");
        assert_eq!(get(fd), Ok(b"/usr".to_vec()));
        invalidate();
        assert_eq!(get(fd), Err(true), "a rename forgets everything");
        remember(fd, b"/usr");
        let dup = a.try_clone().unwrap();
        assert_eq!(
            get(dup.as_raw_fd()),
            Ok(b"/usr".to_vec()),
            "a dup is the same object"
        );
        let other = std::fs::File::open("/").unwrap();
        assert_ne!(get(other.as_raw_fd()), Ok(b"/usr".to_vec()));
        let f = std::fs::File::open("/dev/null").unwrap();
        remember(f.as_raw_fd(), b"/dev/null");
        assert!(get(f.as_raw_fd()).is_err(), "only files and directories");
    }

    #[test]
    fn a_reused_inode_number_is_another_object() {
        let base = std::env::temp_dir().join(format!("fsguard-pc-{}", std::process::id()));
        std::fs::create_dir_all(&base).unwrap();
        let old = base.join("old");
        std::fs::create_dir(&old).unwrap();
        let fd = std::fs::File::open(&old).unwrap();
        let ino = std::os::unix::fs::MetadataExt::ino(&fd.metadata().unwrap());
        remember(fd.as_raw_fd(), old.as_os_str().as_encoded_bytes());
        drop(fd);
        std::fs::remove_dir(&old).unwrap();
        // Try to get the same inode number back; the identity must differ.
        let mut reused = false;
        for i in 0..200 {
            let n = base.join(format!("n{i}"));
            std::fs::create_dir(&n).unwrap();
            let f = std::fs::File::open(&n).unwrap();
            if std::os::unix::fs::MetadataExt::ino(&f.metadata().unwrap()) == ino {
                reused = true;
                assert_eq!(get(f.as_raw_fd()), Err(true), "reused inode number hit");
                break;
            }
        }
        std::fs::remove_dir_all(&base).unwrap();
        eprintln!("inode number reused: {reused}");
    }

    #[test]
    fn a_deleted_file_misses() {
        let p = std::env::temp_dir().join(format!("fsguard-pcf-{}", std::process::id()));
        let f = std::fs::File::create(&p).unwrap();
        remember(f.as_raw_fd(), p.as_os_str().as_encoded_bytes());
        assert!(get(f.as_raw_fd()).is_ok());
        std::fs::remove_file(&p).unwrap();
        assert_eq!(get(f.as_raw_fd()), Err(false));
    }
}
