//! Spare descriptors for the guard's own needs.
//!
//! Resolving a path the race-free way needs an `O_PATH` fd for the object or
//! its parent. A program whose fd table is full (`RLIMIT_NOFILE` reached)
//! would then get `EACCES rule=unresolved` from `mkdir`, `unlink`, `rename`,
//! `symlink`, … where the bare call needs no new fd and succeeds. So the
//! library holds two spare fds (one per path of a two-path call), gives them
//! up when a resolution runs out, and takes them back at a later check.
//!
//! The spares are one memfd (its own inode, so a number the program reused
//! is never taken for ours) duplicated at a high number, `CLOEXEC`.

use std::os::fd::{BorrowedFd, FromRawFd, IntoRawFd, OwnedFd};
use std::sync::atomic::{AtomicI32, AtomicU64, Ordering};

static SPARE: [AtomicI32; 2] = [AtomicI32::new(-1), AtomicI32::new(-1)];
static DEV: AtomicU64 = AtomicU64::new(0);
static INO: AtomicU64 = AtomicU64::new(0);

/// Spares start here, out of the way of numbers programs dup2 onto.
const HIGH_FD: i32 = 200;

fn dup_high(fd: BorrowedFd<'_>) -> Option<i32> {
    rustix::io::fcntl_dupfd_cloexec(fd, HIGH_FD)
        .or_else(|_| rustix::io::fcntl_dupfd_cloexec(fd, 3))
        .ok()
        .map(IntoRawFd::into_raw_fd)
}

/// Takes the spares (at load, and again after [`release`]). Cheap when they
/// are held: one atomic load.
pub fn take() {
    if SPARE.iter().any(|s| s.load(Ordering::Relaxed) >= 0) {
        return;
    }
    let Ok(m) = crate::sys::anon_file(c"fsguard-spare") else {
        return;
    };
    let Ok(st) = rustix::fs::fstat(&m) else {
        return;
    };
    for s in &SPARE {
        if s.load(Ordering::Relaxed) >= 0 {
            continue;
        }
        // SAFETY: `m` is open for the duration.
        let Some(fd) =
            dup_high(unsafe { BorrowedFd::borrow_raw(std::os::fd::AsRawFd::as_raw_fd(&m)) })
        else {
            break;
        };
        if s.compare_exchange(-1, fd, Ordering::AcqRel, Ordering::Relaxed)
            .is_err()
        {
            // SAFETY: just made, ours.
            drop(unsafe { OwnedFd::from_raw_fd(fd) });
        }
    }
    // Taken only when none is held, so both are of this inode.
    DEV.store(crate::sys::dev(&st), Ordering::Relaxed);
    INO.store(st.st_ino, Ordering::Relaxed);
}

/// Gives up the spares so a resolution can have their slots; true if any
/// was freed. A number that is no longer our memfd (the program closed it
/// and reused it) is forgotten, never closed.
pub fn release() -> bool {
    let mut freed = false;
    for s in &SPARE {
        let fd = s.swap(-1, Ordering::AcqRel);
        if fd < 0 {
            continue;
        }
        // SAFETY: fstat only, until it is known to be our memfd.
        let ours = matches!(rustix::fs::fstat(unsafe { BorrowedFd::borrow_raw(fd) }), Ok(st)
            if crate::sys::dev(&st) == DEV.load(Ordering::Relaxed) && st.st_ino == INO.load(Ordering::Relaxed));
        if ours {
            // SAFETY: our spare.
            drop(unsafe { OwnedFd::from_raw_fd(fd) });
            freed = true;
        }
    }
    freed
}

/// The soft `RLIMIT_NOFILE` raised by two for one resolution (when the
/// program lowered it below the spares' numbers, or they are gone), put back
/// when dropped: before the call itself, which so meets the program's own
/// limit. `None` when the hard limit leaves no room.
pub struct Raised(rustix::process::Rlimit);

impl Raised {
    /// Raises the limit, if it can.
    pub fn new() -> Option<Raised> {
        use rustix::process::{Resource, Rlimit};
        let old = rustix::process::getrlimit(Resource::Nofile);
        let cur = old.current?;
        if old.maximum.is_some_and(|max| cur + 2 > max) {
            return None;
        }
        rustix::process::setrlimit(
            Resource::Nofile,
            Rlimit {
                current: Some(cur + 2),
                maximum: old.maximum,
            },
        )
        .ok()?;
        Some(Raised(old))
    }
}

impl Drop for Raised {
    fn drop(&mut self) {
        let old = rustix::process::Rlimit {
            current: self.0.current,
            maximum: self.0.maximum,
        };
        let _ = rustix::process::setrlimit(rustix::process::Resource::Nofile, old);
    }
}
