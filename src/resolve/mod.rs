//! Path resolution the way the kernel does it, with the kernel's help.
//!
//! A path is opened with `O_PATH` (no side effects, no permission beyond
//! search) and the kernel's own name for the object is read back from
//! `/proc/self/fd/N`; both come from the platform seam ([`crate::sys`]).
//! Symlinks, `..` after symlinks, magic links such as `/proc/self/cwd` and
//! trailing slashes are thus handled by the kernel. What is left to us: a
//! missing last component (resolved through its parent), calls that act on
//! a directory entry rather than on what it points to (`unlink`, `rename`,
//! `O_NOFOLLOW`, …: parent resolved, name appended), and a dangling symlink
//! that `O_CREAT` would create the target of.
//!
//! All syscalls here go through rustix's raw backend, never through libc, so
//! resolving cannot recurse into the library's own hooks, and errno is never
//! touched.
//!
//! The parts: [`spill`] (stack buffers that move to a mapping, and the pool
//! of mappings), [`buffers`] ([`PathBuf`], [`RawPath`]), [`lexical`] (the
//! fold and the join with the cwd), [`locate`] (the kernel's routes:
//! `openat2`, `O_PATH` + `/proc/self/fd`), [`create`] (a create's walk of
//! symlinks), [`fd_path`] (an fd's name, deep directories, `/proc` reads)
//! and [`via`] (how a checked call reaches the object).

mod buffers;
mod create;
mod fd_path;
mod lexical;
mod locate;
mod spill;
mod via;

#[cfg(test)]
mod tests;

use std::os::fd::BorrowedFd;

use rustix::fs::CWD;
use rustix::io::Errno;

pub use buffers::{PathBuf, RawPath, PATH_CAP};
pub(crate) use fd_path::decimal;
pub use fd_path::fd_path;
pub use lexical::{fold, join_cwd, lexical, open_exact, Joined};
pub use locate::{locate, resolve};
pub(crate) use spill::Spill;
pub use via::{Reach, Via};

/// How the last component of a path is treated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Follow {
    /// Symlinks followed to the object (open, stat, chmod, truncate…).
    Yes,
    /// Like `Yes`, and a dangling final symlink resolves to the target it
    /// would create (`O_CREAT` without `O_EXCL`).
    Create,
    /// The call acts on the directory entry itself, whatever it is (unlink,
    /// rmdir, rename, mkdir, mknod, link's and symlink's new name, an
    /// exclusive create): the parent resolved, the name kept.
    Entry,
    /// The call acts on the object named but does not follow a final
    /// symlink (lchown, `AT_SYMLINK_NOFOLLOW`, `O_NOFOLLOW`). With a
    /// trailing slash the kernel follows it after all, and so do we.
    NoFollow,
    /// The path is empty (`AT_EMPTY_PATH`) or NULL: the call acts on the dirfd.
    Fd,
}

/// Why a path could not be resolved.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unresolved {
    /// The kernel would fail the call with this errno anyway (ENOENT on a
    /// missing parent, ENOTDIR, ELOOP, ENAMETOOLONG, EACCES on search, EBADF,
    /// EFAULT): answer it without calling the real function.
    Kernel(Errno),
    /// Resolution itself failed (out of fds, /proc unavailable): fail closed.
    Failed(Errno),
}

fn kernel_or_failed(e: Errno) -> Unresolved {
    match e {
        Errno::NOENT
        | Errno::NOTDIR
        | Errno::LOOP
        | Errno::NAMETOOLONG
        | Errno::ACCESS
        | Errno::BADF
        | Errno::FAULT
        | Errno::XDEV => Unresolved::Kernel(e),
        _ => Unresolved::Failed(e),
    }
}

/// A user dirfd, validated: negative values other than `AT_FDCWD` are EBADF.
fn dir<'a>(dirfd: i32) -> Result<BorrowedFd<'a>, Errno> {
    if dirfd == libc::AT_FDCWD {
        Ok(CWD)
    } else if dirfd < 0 {
        Err(Errno::BADF)
    } else {
        // SAFETY: a non-negative fd number; it is only passed to syscalls,
        // which report EBADF if it is not open.
        Ok(unsafe { BorrowedFd::borrow_raw(dirfd) })
    }
}
