//! The policy handoff where there are no sealed files (Darwin): a POSIX
//! shared memory object that no process but root can write once it is made.
//!
//! Written in plain POSIX with `std` and `libc` alone, so that the CLI
//! includes this same file (`cli/src/sys/darwin.rs`) and the tests run it on
//! Linux (`sys/frozen_shm_tests.rs`); only Darwin uses it for real (Linux
//! keeps its sealed memfd).
//!
//! # Why a shared memory object
//!
//! What must hold: no process under the guard can change the bytes a
//! child's library reads, and the child's library can check that about the
//! fd it is handed. Three candidates were weighed:
//!
//! - A pipe the parent writes and closes: its reader consumes it, so every
//!   exec of every nested child needs a fresh pipe and a writer; a policy
//!   larger than the pipe buffer (16 to 64 KiB on Darwin) blocks the writer,
//!   and a `vfork` child that makes a copy has no one to write the rest. It
//!   also cannot be kept and duplicated. Rejected.
//! - A regular file made in a fresh 0700 directory, reopened `O_RDONLY` and
//!   unlinked: its owner can `chmod` a file, so a process of the same user
//!   that finds the name in the temporary directory before the unlink can
//!   make it writable and open it for good; and whether an unlinked file
//!   can still be reached by inode number (`/.vol/<fsid>/<ino>`) cannot be
//!   settled without a Mac (APFS is closed source). Rejected.
//! - A POSIX shared memory object created owner-read-only (`0400`). Apple's
//!   xnu (`bsd/kern/posix_shm.c`) gives its creator a read-write fd whatever
//!   the mode (no access check on creation), checks the mode on every later
//!   `shm_open` (the owner too: `posix_cred_access`), and has no call that
//!   changes the mode afterwards (`fchmod` acts on vnodes). `mmap` of an fd
//!   opened `O_RDONLY` refuses `PROT_WRITE` and maps with a maximum
//!   protection without write, so `mprotect` cannot add it (so in the xnu
//!   sources since `posix_shm.c` was rewritten; a far older one, of the
//!   Mac OS X 10.5 era, kept write in the maximum protection); the object's
//!   size is set once (a second `ftruncate` is `EINVAL`); `read`/`write` are
//!   not supported at all; opening `/dev/fd/N` duplicates the fd with its
//!   mode. It lives in no file system, so no path reaches it once unlinked.
//!   Chosen.
//!
//! # How it is made ([`create`]), with system calls only
//!
//! `shm_open(O_RDWR | O_CREAT | O_EXCL, 0400)` under a name with 100 random
//! bits (`getentropy`), `ftruncate`, the bytes written through a shared
//! mapping, `shm_open(O_RDONLY)` of the same name, `shm_unlink`, then an
//! identity check: a fresh random nonce written through the writable mapping
//! must show in the read-only one, and the payload must match. The writable
//! fd and mapping are then dropped. No allocation, so a `vfork` child may
//! run it.
//!
//! A process of the same user racing this (it may learn the name from the
//! kernel's list of this process's fds while it exists) can open the object
//! read-only (harmless), size it first (this `ftruncate` then fails: the
//! copy is refused), or unlink it and put an object of its own under the
//! name before the reopen: its object does not see the nonce written after
//! the reopen, so the copy is refused (only a racer that also holds our
//! object open and copies the nonce into its own in the few instructions
//! between our write and our read would pass). It cannot open the object
//! for writing (mode `0400`). Root is not kept out (`pshm_access` lets it
//! do anything).
//!
//! # What a child checks ([`read`])
//!
//! The fd is open `O_RDONLY`; `fstat` says it is a shared memory object
//! (xnu's `pshm_stat` fills `st_mode` with the permission bits alone, so the
//! file type bits are 0, where a vnode, pipe or socket has some), with no
//! link, owned by this user, with no write bit for anyone (so no one but
//! root can ever open it for writing, as the mode never changes); it can
//! be mapped (read through `mmap`); its size holds the header and the
//! length the header gives (the size is rounded up to whole pages, so the
//! length is stored). Anything else is refused, and the library refuses to
//! run (fail closed).
//!
//! What no check can see: a process that made such an object itself keeps
//! its own writable fd. That is a forger handing its child a policy of its
//! choosing through a raw `execve`, which the sealed memfd on Linux does
//! not stop either (the exec hooks replace `FSGUARD_POLICY_FD`,
//! `exec/env.rs`); the bytes the child read at load are its copy.

use std::ffi::{c_int, c_void};
use std::os::fd::{AsRawFd, BorrowedFd, FromRawFd, OwnedFd, RawFd};

/// The object starts with [`MAGIC`], the payload's length (`u64`, little
/// endian) and the identity nonce; the payload follows.
pub const HEADER: usize = 32;
const MAGIC: &[u8; 16] = b"fsguard-policy\0\x01";
const LEN_AT: usize = 16;
const NONCE_AT: usize = 24;

/// Owner read, nothing else: no `shm_open` for writing will ever succeed
/// (but root's).
const MODE: u32 = 0o400;

/// The file type bits a shared memory object's `fstat` reports: none on
/// Darwin (`pshm_stat` sets `st_mode` to the permission bits); a regular
/// file where the object lives in a file system (Linux's `/dev/shm`, the
/// tests).
#[cfg(target_os = "macos")]
const KIND: u32 = 0;
#[cfg(not(target_os = "macos"))]
const KIND: u32 = libc::S_IFREG;

/// `/fsguard.` and 20 random letters (100 bits) and a NUL: 30 bytes, within
/// Darwin's 31 (`PSHMNAMLEN`).
const PREFIX: &[u8] = b"/fsguard.";
const RANDOM: usize = 20;
const NAME: usize = PREFIX.len() + RANDOM + 1;
const LETTERS: &[u8; 32] = b"abcdefghijklmnopqrstuvwxyz234567";

/// Why an fd is refused when it is no such object at all.
pub const NOT_ONE: &str = "not a read-only policy shared memory object (closed, or another file)";

fn errno() -> i32 {
    std::io::Error::last_os_error()
        .raw_os_error()
        .unwrap_or(libc::EIO)
}

/// Fills `buf` from the kernel's random source.
fn entropy(buf: &mut [u8]) -> Result<(), i32> {
    // SAFETY: `buf` is writable for its length (at most 256, getentropy's
    // limit on both systems).
    if unsafe { libc::getentropy(buf.as_mut_ptr().cast(), buf.len()) } != 0 {
        return Err(errno());
    }
    Ok(())
}

/// A fresh unguessable name, NUL-terminated.
fn fresh_name() -> Result<[u8; NAME], i32> {
    let mut random = [0u8; RANDOM];
    entropy(&mut random)?;
    let mut name = [0u8; NAME];
    name[..PREFIX.len()].copy_from_slice(PREFIX);
    for (dst, r) in name[PREFIX.len()..].iter_mut().zip(random) {
        *dst = LETTERS[usize::from(r & 31)];
    }
    Ok(name)
}

/// `shm_open(name, flags, mode)`; variadic on Darwin, where the mode
/// travels promoted to `unsigned int`.
fn shm_open(name: &[u8; NAME], flags: c_int, mode: u32) -> Result<OwnedFd, i32> {
    let p = name.as_ptr().cast();
    // SAFETY: a NUL-terminated name (its last byte is never written).
    #[cfg(target_os = "macos")]
    let fd = unsafe { libc::shm_open(p, flags, mode as libc::c_uint) };
    // SAFETY: as above.
    #[cfg(not(target_os = "macos"))]
    let fd = unsafe { libc::shm_open(p, flags, mode) };
    if fd == -1 {
        return Err(errno());
    }
    // SAFETY: shm_open returned a fresh fd to this process.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// The name, removed when dropped (once; a second removal is harmless).
struct Name([u8; NAME]);

impl Drop for Name {
    fn drop(&mut self) {
        // SAFETY: a NUL-terminated name.
        unsafe { libc::shm_unlink(self.0.as_ptr().cast()) };
    }
}

/// A shared mapping of an fd, unmapped when dropped.
pub(super) struct Map {
    at: *mut u8,
    len: usize,
}

impl Map {
    pub(super) fn new(fd: RawFd, len: usize, prot: c_int) -> Result<Map, i32> {
        // SAFETY: a fresh mapping at an address the kernel picks.
        let at = unsafe { libc::mmap(std::ptr::null_mut(), len, prot, libc::MAP_SHARED, fd, 0) };
        if at == libc::MAP_FAILED {
            return Err(errno());
        }
        Ok(Map { at: at.cast(), len })
    }

    fn bytes(&self) -> &[u8] {
        // SAFETY: `len` mapped bytes, readable while `self` lives.
        unsafe { std::slice::from_raw_parts(self.at, self.len) }
    }
}

impl Drop for Map {
    fn drop(&mut self) {
        // SAFETY: the mapping made in `new`, unmapped once.
        unsafe { libc::munmap(self.at.cast::<c_void>(), self.len) };
    }
}

/// Whether `ro` is the object mapped writable at `w` (which holds `frozen`
/// after the header): a nonce drawn now, written through `w`, must show
/// through a mapping of `ro`. An object put under the name by someone else
/// would not see it, whatever it holds; the error is `EIO`.
pub(super) fn same_object(w: &Map, ro: RawFd, frozen: &[u8]) -> Result<(), i32> {
    let r = Map::new(ro, w.len, libc::PROT_READ)?;
    let mut nonce = [0u8; 8];
    entropy(&mut nonce)?;
    nonce[0] |= 1;
    let mut seen = [0u8; 8];
    for (i, (&b, s)) in nonce.iter().zip(seen.iter_mut()).enumerate() {
        // SAFETY: within both mappings (the same length); volatile so each
        // access happens, in this order, through its own mapping.
        unsafe {
            std::ptr::write_volatile(w.at.add(NONCE_AT + i), b);
            *s = std::ptr::read_volatile(r.at.add(NONCE_AT + i));
        }
    }
    if seen != nonce || r.bytes()[HEADER..] != *frozen || r.bytes()[..LEN_AT] != *MAGIC {
        return Err(libc::EIO);
    }
    Ok(())
}

/// A read-only fd to a fresh, unlinked shared memory object holding
/// `frozen`, `CLOEXEC`; the error is an errno. System calls only, no
/// allocation (this may run in a `vfork` child).
pub fn create(frozen: &[u8]) -> Result<OwnedFd, i32> {
    let total = frozen.len().checked_add(HEADER).ok_or(libc::EFBIG)?;
    let off = libc::off_t::try_from(total).map_err(|_| libc::EFBIG)?;
    // A name taken (by chance, or by a racer) is tried again a few times.
    let mut tries = 0;
    let (name, rw) = loop {
        let name = fresh_name()?;
        match shm_open(&name, libc::O_RDWR | libc::O_CREAT | libc::O_EXCL, MODE) {
            // From here on the name is ours to remove.
            Ok(fd) => break (Name(name), fd),
            Err(libc::EEXIST) if tries < 4 => tries += 1,
            Err(e) => return Err(e),
        }
    };
    // SAFETY: ftruncate on our fd. On Darwin it fails if anyone sized the
    // object first (one ftruncate per object): the copy is refused.
    if unsafe { libc::ftruncate(rw.as_raw_fd(), off) } != 0 {
        return Err(errno());
    }
    let w = Map::new(rw.as_raw_fd(), total, libc::PROT_READ | libc::PROT_WRITE)?;
    // SAFETY: `total` writable bytes, ours alone for now.
    let out = unsafe { std::slice::from_raw_parts_mut(w.at, total) };
    out[..MAGIC.len()].copy_from_slice(MAGIC);
    out[LEN_AT..NONCE_AT].copy_from_slice(&(frozen.len() as u64).to_le_bytes());
    out[HEADER..].copy_from_slice(frozen);
    let ro = shm_open(&name.0, libc::O_RDONLY, 0)?;
    drop(name);
    same_object(&w, ro.as_raw_fd(), frozen)?;
    drop((w, rw));
    // SAFETY: fcntl on our fd (Darwin's shm_open sets close-on-exec already;
    // said again for every system).
    if unsafe { libc::fcntl(ro.as_raw_fd(), libc::F_SETFD, libc::FD_CLOEXEC) } != 0 {
        return Err(errno());
    }
    Ok(ro)
}

/// The payload of `fd` if it is an object no one but root can write (see
/// the module's doc); else why not.
#[allow(clippy::unnecessary_cast)] // stat's field types differ by system
pub fn read(fd: BorrowedFd<'_>) -> Result<Vec<u8>, &'static str> {
    // SAFETY: F_GETFL takes no pointer.
    let fl = unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_GETFL) };
    if fl == -1 {
        return Err(NOT_ONE);
    }
    if fl & libc::O_ACCMODE != libc::O_RDONLY {
        return Err("the policy object is open for writing");
    }
    let mut st = std::mem::MaybeUninit::<libc::stat>::uninit();
    // SAFETY: fstat fills the struct it is given.
    if unsafe { libc::fstat(fd.as_raw_fd(), st.as_mut_ptr()) } != 0 {
        return Err(NOT_ONE);
    }
    // SAFETY: fstat succeeded.
    let st = unsafe { st.assume_init() };
    if st.st_mode as u32 & libc::S_IFMT as u32 != KIND {
        return Err(NOT_ONE);
    }
    if st.st_nlink as u64 != 0 {
        return Err("the policy object still has a name");
    }
    // SAFETY: geteuid has no preconditions.
    if st.st_uid != unsafe { libc::geteuid() } {
        return Err("the policy object belongs to another user");
    }
    if st.st_mode as u32 & 0o222 != 0 {
        return Err("the policy object may be opened for writing");
    }
    let size = usize::try_from(st.st_size).map_err(|_| NOT_ONE)?;
    if size < HEADER {
        return Err("the policy object is too short");
    }
    let map = Map::new(fd.as_raw_fd(), size, libc::PROT_READ).map_err(|_| NOT_ONE)?;
    let b = map.bytes();
    if b[..LEN_AT] != *MAGIC {
        return Err("the policy object has no policy header");
    }
    let mut len = [0u8; 8];
    len.copy_from_slice(&b[LEN_AT..NONCE_AT]);
    let len = usize::try_from(u64::from_le_bytes(len)).map_err(|_| NOT_ONE)?;
    match len.checked_add(HEADER) {
        Some(end) if end <= size => Ok(b[HEADER..end].to_vec()),
        _ => Err("the policy object is too short"),
    }
}
