//! How the frozen policy reaches a child: an fd whose bytes no process
//! under the guard can change, not the environment.
//!
//! A policy of a few thousand rules is larger than the kernel allows one
//! environment string (128 KiB: every exec would fail with `E2BIG`), and it
//! has no business in the program's own environment. So the policy is
//! written once into a file no one can change afterwards
//! ([`sys::frozen_file`]: a memfd sealed against any change on Linux, a
//! read-only POSIX shared memory object on Darwin); the library keeps it
//! `CLOEXEC` at a high number, and each exec hands the child a non-`CLOEXEC`
//! duplicate whose number travels in `FSGUARD_POLICY_FD`. The child's
//! library reads it, checks that it is such a file ([`sys::read_frozen`];
//! else it refuses to run: fail closed), closes it and drops the variable,
//! so the program sees neither. A child never re-reads the policy's sources.

use std::os::fd::{AsFd, AsRawFd, BorrowedFd, FromRawFd, IntoRawFd, OwnedFd};
use std::sync::atomic::{AtomicI32, AtomicU64, Ordering};

use rustix::io::FdFlags;

use crate::sys;

/// The variable naming the inherited policy fd.
pub const VAR: &str = "FSGUARD_POLICY_FD";

/// Kept fds start here, out of the way of numbers programs dup2 onto.
pub(crate) const HIGH_FD: i32 = 200;

/// A file no one can change holding `frozen`, `CLOEXEC`, at a high number
/// when one is free. System calls only, no allocation.
pub fn create(frozen: &[u8]) -> rustix::io::Result<OwnedFd> {
    let fd = sys::frozen_file(frozen)?;
    Ok(rustix::io::fcntl_dupfd_cloexec(&fd, HIGH_FD).unwrap_or(fd))
}

/// Reads the policy from the inherited fd named by `value`, which must pass
/// [`sys::read_frozen`]'s check. The fd is closed either way.
pub fn read(value: &str) -> Result<String, String> {
    let bad = |why: &str| format!("{VAR}={value}: {why}; refusing to run unguarded");
    let fd: i32 = value.parse().map_err(|_| bad("not an fd number"))?;
    if fd < 0 {
        return Err(bad("not an fd number"));
    }
    // SAFETY: only inspected and read until it passes the check.
    let b = unsafe { BorrowedFd::borrow_raw(fd) };
    let buf = sys::read_frozen(b).map_err(|why| bad(&why))?;
    // SAFETY: a checked policy fd handed to this process for the library
    // alone.
    drop(unsafe { OwnedFd::from_raw_fd(fd) });
    String::from_utf8(buf).map_err(|_| bad("not UTF-8"))
}

/// The library's own copy, and its identity: a program may close it (a
/// child closing every fd before exec) or put something else at its number.
/// Where the system shows no identity ([`sys::frozen_id`] is `None`:
/// Darwin) no copy is kept, and each exec gets a fresh one.
static KEPT: AtomicI32 = AtomicI32::new(-1);
static KEPT_DEV: AtomicU64 = AtomicU64::new(0);
static KEPT_INO: AtomicU64 = AtomicU64::new(0);

/// Makes `fd` the library's copy (closes it where it could not be told
/// apart from another file later).
pub fn keep(fd: OwnedFd) {
    if let Some((dev, ino)) = sys::frozen_id(fd.as_fd()) {
        KEPT_DEV.store(dev, Ordering::Relaxed);
        KEPT_INO.store(ino, Ordering::Relaxed);
        KEPT.store(fd.into_raw_fd(), Ordering::Release);
    }
}

/// The library's copy if it is still the file it made.
fn kept() -> Option<BorrowedFd<'static>> {
    let fd = KEPT.load(Ordering::Acquire);
    if fd < 0 {
        return None;
    }
    // SAFETY: fstat only until its identity is confirmed.
    let b = unsafe { BorrowedFd::borrow_raw(fd) };
    let (dev, ino) = sys::frozen_id(b)?;
    (dev == KEPT_DEV.load(Ordering::Relaxed) && ino == KEPT_INO.load(Ordering::Relaxed))
        .then_some(b)
}

/// An inheritable duplicate for one exec (closed when dropped: after a
/// failed exec, or in the parent after a spawn). Made from the kept copy,
/// or, when the program closed that (or the system cannot tell it apart),
/// from `frozen` again: system calls only, no allocation (this may run in a
/// `vfork` child).
pub struct ForChild(OwnedFd);

impl ForChild {
    /// A duplicate for the child, or `None` when no fd can be had (the
    /// child then fails closed rather than run unguarded).
    pub fn new(frozen: &[u8]) -> Option<ForChild> {
        let dup = match kept() {
            Some(b) => rustix::io::fcntl_dupfd_cloexec(b, HIGH_FD)
                .or_else(|_| rustix::io::fcntl_dupfd_cloexec(b, 3))
                .ok()?,
            None => {
                let fresh = create(frozen).ok()?;
                match sys::frozen_id(fresh.as_fd()) {
                    Some((dev, ino)) => {
                        KEPT_DEV.store(dev, Ordering::Relaxed);
                        KEPT_INO.store(ino, Ordering::Relaxed);
                        KEPT.store(fresh.as_raw_fd(), Ordering::Release);
                        let d = rustix::io::fcntl_dupfd_cloexec(&fresh, HIGH_FD)
                            .or_else(|_| rustix::io::fcntl_dupfd_cloexec(&fresh, 3))
                            .ok()?;
                        let _ = fresh.into_raw_fd();
                        d
                    }
                    // Not to be kept: this copy is the child's.
                    None => fresh,
                }
            }
        };
        rustix::io::fcntl_setfd(&dup, FdFlags::empty()).ok()?;
        Some(ForChild(dup))
    }

    /// `FSGUARD_POLICY_FD=N\0` into `buf`; the length used.
    pub fn entry(&self, buf: &mut [u8; 40]) -> usize {
        let mut n = 0;
        for &b in VAR.as_bytes().iter().chain(b"=") {
            buf[n] = b;
            n += 1;
        }
        let mut digits = [0u8; 12];
        let mut v = self.0.as_fd().as_raw_fd() as u32;
        let mut d = 0;
        loop {
            digits[d] = b'0' + (v % 10) as u8;
            d += 1;
            v /= 10;
            if v == 0 {
                break;
            }
        }
        while d > 0 {
            d -= 1;
            buf[n] = digits[d];
            n += 1;
        }
        buf[n] = 0;
        n + 1
    }
}
