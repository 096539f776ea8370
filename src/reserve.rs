//! The guard's own descriptors: kept out of the program's way, and room
//! for them when the program's table is full.
//!
//! POSIX gives a call that makes a descriptor the lowest number not open.
//! An fd the guard holds while such a call runs must not sit on that
//! number, nor on any number a program would otherwise get: [`dup_above`]
//! moves one above them.
//!
//! Resolving a path the race-free way needs an `O_PATH` fd for the object
//! or its parent. A program whose fd table is full (`RLIMIT_NOFILE`
//! reached) would then get `EACCES rule=unresolved` or EMFILE from `mkdir`,
//! `unlink`, `rename`, `symlink`, … where the bare call needs no new fd and
//! succeeds. So the library holds two spare fds (one per path of a two-path
//! call), gives them up when a resolution runs out, and takes them back at a
//! later check; and when the program has lowered its soft limit below the
//! numbers it already holds (the spares do not help: no new fd may be
//! numbered at or above the soft limit), [`Raised`] lifts the soft limit to
//! the hard one for the resolution alone.
//!
//! The spares are one memfd (its own inode, so a number the program reused
//! is never taken for ours) duplicated at a high number, `CLOEXEC`.

use std::os::fd::{AsFd, AsRawFd, BorrowedFd, FromRawFd, IntoRawFd, OwnedFd};
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU32, AtomicU64, Ordering};

static SPARE: [AtomicI32; 2] = [AtomicI32::new(-1), AtomicI32::new(-1)];
static DEV: AtomicU64 = AtomicU64::new(0);
static INO: AtomicU64 = AtomicU64::new(0);
/// Held while the spares are taken or released: one thread at a time, so
/// the spares are always of the one inode in `DEV`/`INO` (a thread, or a
/// signal handler, that finds it held does without).
static SPARES_BUSY: AtomicBool = AtomicBool::new(false);

/// The guard's fds start here, out of the way of the numbers programs get
/// from a call or dup2 onto.
pub(crate) const HIGH_FD: i32 = 200;

/// A duplicate of `fd`, `CLOEXEC`, at a number above what the program's
/// next calls get: from [`HIGH_FD`], or, under a soft limit at or below
/// it, the first free number above `fd` itself (which was the lowest free
/// one when it was opened). `None` when there is no such number.
pub(crate) fn dup_above(fd: BorrowedFd<'_>) -> Option<i32> {
    let above = fd.as_raw_fd().saturating_add(1);
    rustix::io::fcntl_dupfd_cloexec(fd, HIGH_FD.max(above))
        .or_else(|_| rustix::io::fcntl_dupfd_cloexec(fd, above))
        .ok()
        .map(IntoRawFd::into_raw_fd)
}

/// A duplicate of `fd` for a spare, `CLOEXEC`: from [`HIGH_FD`], or at the
/// top of a table whose soft limit lies at or below it. Never at a low
/// number a program's call would get.
fn dup_spare(fd: BorrowedFd<'_>) -> Option<i32> {
    if let Ok(d) = rustix::io::fcntl_dupfd_cloexec(fd, HIGH_FD) {
        return Some(d.into_raw_fd());
    }
    let soft = rustix::process::getrlimit(rustix::process::Resource::Nofile).current?;
    let top = i32::try_from(soft.saturating_sub(2)).ok()?;
    if top < 3 {
        return None;
    }
    rustix::io::fcntl_dupfd_cloexec(fd, top)
        .ok()
        .map(IntoRawFd::into_raw_fd)
}

/// Claims `flag`; false when it is held already.
fn claim(flag: &AtomicBool) -> bool {
    !flag.swap(true, Ordering::Acquire)
}

/// Checks left before the next try after one that got no spare (a table
/// full up to a lowered limit): a try costs six system calls.
static SKIP: AtomicU32 = AtomicU32::new(0);

/// Takes the spares (at load, and again after [`release`]). Cheap when they
/// are held: one atomic load.
pub fn take() {
    if SPARE.iter().any(|s| s.load(Ordering::Relaxed) >= 0) {
        return;
    }
    if SKIP.load(Ordering::Relaxed) > 0 {
        SKIP.fetch_sub(1, Ordering::Relaxed);
        return;
    }
    if !claim(&SPARES_BUSY) {
        return;
    }
    if !take_claimed() {
        SKIP.store(256, Ordering::Relaxed);
    }
    SPARES_BUSY.store(false, Ordering::Release);
}

/// False when no spare could be had.
fn take_claimed() -> bool {
    // Another thread may have taken them since the check above.
    if SPARE.iter().any(|s| s.load(Ordering::Acquire) >= 0) {
        return true;
    }
    let Ok(m) = crate::sys::anon_file(c"fsguard-spare") else {
        return false;
    };
    let Ok(st) = rustix::fs::fstat(&m) else {
        return false;
    };
    // Known before any spare is: `release` compares against it.
    DEV.store(crate::sys::dev(&st), Ordering::Relaxed);
    INO.store(st.st_ino, Ordering::Relaxed);
    // The memfd is the first spare itself when it landed high (in a slot
    // `release` freed): a table that was full is full again, as the
    // program saw it, with no slot left over for its own calls.
    let first = if m.as_raw_fd() >= HIGH_FD {
        m.into_raw_fd()
    } else {
        let Some(fd) = dup_spare(m.as_fd()) else {
            return false;
        };
        fd
    };
    SPARE[0].store(first, Ordering::Release);
    // SAFETY: the spare just stored, open: nothing releases it while
    // SPARES_BUSY is held.
    if let Some(d) = dup_spare(unsafe { BorrowedFd::borrow_raw(first) }) {
        SPARE[1].store(d, Ordering::Release);
    }
    true
}

/// Gives up the spares so a resolution can have their slots; true if any
/// was freed. A number that is no longer our memfd (the program closed it
/// and reused it) is forgotten, never closed. False, freeing nothing, while
/// another thread takes or releases them.
pub fn release() -> bool {
    if !claim(&SPARES_BUSY) {
        return false;
    }
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
    SPARES_BUSY.store(false, Ordering::Release);
    freed
}

/// The spares held now, for tests.
#[cfg(test)]
pub(crate) fn held() -> [i32; 2] {
    [
        SPARE[0].load(Ordering::Acquire),
        SPARE[1].load(Ordering::Acquire),
    ]
}

/// How many [`Raised`] are alive; the soft limit is the hard one while any is.
static RAISERS: AtomicU32 = AtomicU32::new(0);
/// The program's own soft limit, put back when the last [`Raised`] goes.
static SAVED_SOFT: AtomicU64 = AtomicU64::new(0);
/// Held while the limit is raised or put back (and `RAISERS` changed).
static LIMIT_BUSY: AtomicBool = AtomicBool::new(false);

/// The soft `RLIMIT_NOFILE` raised to the hard limit for one resolution
/// (when the program lowered it below the fds it holds, or the spares are
/// gone), put back when the last one alive is dropped: before the call
/// itself, which so meets the program's own limit. Threads that overlap
/// share one raise, so the program's limit is always put back, once.
/// `None` when the hard limit leaves no room, or when another thread's
/// raise or restore does not end within a thousand yields.
pub struct Raised(());

impl Raised {
    /// Raises the limit, if it can.
    pub fn new() -> Option<Raised> {
        // Another thread holds the flag for two system calls: wait for it,
        // a bounded while (a signal handler that interrupted this very
        // thread's raise would wait forever: it gives up instead).
        let mut tries = 0;
        while !claim(&LIMIT_BUSY) {
            tries += 1;
            if tries > 1000 {
                return None;
            }
            std::thread::yield_now();
        }
        let raised = RAISERS.load(Ordering::Relaxed) > 0 || raise();
        if raised {
            RAISERS.fetch_add(1, Ordering::Relaxed);
        }
        LIMIT_BUSY.store(false, Ordering::Release);
        raised.then_some(Raised(()))
    }
}

/// The soft limit to the hard one, the old one saved; false if it cannot.
fn raise() -> bool {
    use rustix::process::{Resource, Rlimit};
    let old = rustix::process::getrlimit(Resource::Nofile);
    let (Some(cur), Some(max)) = (old.current, old.maximum) else {
        return false;
    };
    if cur >= max {
        return false;
    }
    let up = Rlimit {
        current: Some(max),
        maximum: Some(max),
    };
    if rustix::process::setrlimit(Resource::Nofile, up).is_err() {
        return false;
    }
    SAVED_SOFT.store(cur, Ordering::Relaxed);
    true
}

impl Drop for Raised {
    fn drop(&mut self) {
        // Held only for the two system calls of another thread's raise or
        // restore (never by this thread: a handler that interrupts one
        // cannot raise, so has nothing to drop).
        while !claim(&LIMIT_BUSY) {
            std::hint::spin_loop();
        }
        if RAISERS.fetch_sub(1, Ordering::Relaxed) == 1 {
            use rustix::process::{Resource, Rlimit};
            let now = rustix::process::getrlimit(Resource::Nofile);
            let back = Rlimit {
                current: Some(SAVED_SOFT.load(Ordering::Relaxed)),
                maximum: now.maximum,
            };
            let _ = rustix::process::setrlimit(Resource::Nofile, back);
        }
        LIMIT_BUSY.store(false, Ordering::Release);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn soft() -> u64 {
        rustix::process::getrlimit(rustix::process::Resource::Nofile)
            .current
            .unwrap()
    }

    /// Overlapping raises in several threads, in every order of drops: the
    /// soft limit is the hard one while any is alive, and the program's
    /// own once the last is gone.
    #[test]
    fn overlapping_raises_put_the_limit_back() {
        use rustix::process::{Resource, Rlimit};
        let old = rustix::process::getrlimit(Resource::Nofile);
        let max = old.maximum.unwrap();
        // Not lowered much: other tests of this process open fds meanwhile.
        let low = old.current.unwrap().min(max - 1);
        let set = |soft| {
            let r = Rlimit {
                current: Some(soft),
                maximum: Some(max),
            };
            rustix::process::setrlimit(Resource::Nofile, r).unwrap();
        };
        set(low);
        let go = std::sync::Barrier::new(8);
        std::thread::scope(|s| {
            for i in 0..8u64 {
                let go = &go;
                s.spawn(move || {
                    go.wait();
                    for round in 0..500u64 {
                        let r = loop {
                            if let Some(r) = Raised::new() {
                                break r;
                            }
                            std::hint::spin_loop();
                        };
                        assert_eq!(soft(), max, "raised while held");
                        if (i + round) % 3 == 0 {
                            std::thread::yield_now();
                        }
                        drop(r);
                    }
                });
            }
        });
        assert_eq!(soft(), low, "the program's limit is back");
        set(old.current.unwrap());
    }

    /// The spare memfds open in this process.
    fn spares_open() -> usize {
        std::fs::read_dir("/proc/self/fd")
            .unwrap()
            .filter_map(|e| std::fs::read_link(e.ok()?.path()).ok())
            .filter(|l| l.to_string_lossy().starts_with("/memfd:fsguard-spare"))
            .count()
    }

    /// Takes and releases from several threads at once: whenever no thread
    /// is taking or releasing, the spares held are of one memfd, and none
    /// is left open once released.
    #[test]
    fn concurrent_takes_leave_one_inode_and_no_leak() {
        std::thread::scope(|s| {
            for _ in 0..6 {
                s.spawn(|| {
                    for _ in 0..300 {
                        take();
                        while !claim(&SPARES_BUSY) {
                            std::hint::spin_loop();
                        }
                        let inodes: Vec<u64> = held()
                            .iter()
                            .filter(|&&fd| fd >= 0)
                            .map(|&fd| {
                                // SAFETY: fstat of a spare, held while SPARES_BUSY is.
                                rustix::fs::fstat(unsafe { BorrowedFd::borrow_raw(fd) })
                                    .expect("a spare is open")
                                    .st_ino
                            })
                            .collect();
                        SPARES_BUSY.store(false, Ordering::Release);
                        assert!(inodes.windows(2).all(|w| w[0] == w[1]), "{inodes:?}");
                        release();
                    }
                });
            }
        });
        release();
        assert_eq!(spares_open(), 0, "a spare leaked");
    }
}
