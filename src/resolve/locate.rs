//! [`resolve`] and [`locate`]: the lexical route proven by an open that
//! crosses no symlink ([`sys::open_strict`]: `openat2` on Linux), and the
//! kernel's route (a [`sys::REF`] fd, then its name from [`sys::fd_name`]).

use std::ffi::CStr;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};

use rustix::fs::{Mode, OFlags, CWD};
use rustix::io::Errno;

use crate::sys;

use super::create::resolve_create;
use super::fd_path::{fd_path, fd_path_cstr, fd_path_of, id_of};
use super::lexical::lexical;
use super::{dir, kernel_or_failed, Follow, PathBuf, RawPath, Reach, Unresolved, Via};

/// The kernel's limit on a path argument, its NUL included.
const PATH_MAX: usize = libc::PATH_MAX as usize;

/// Resolves `path` relative to `dirfd` into `out`, for a decision alone
/// (see [`locate`] for calls that then act).
pub fn resolve(
    dirfd: i32,
    path: Option<&CStr>,
    follow: Follow,
    out: &mut PathBuf,
) -> Result<(), Unresolved> {
    let mut via = Via::caller(dirfd, path.map_or(std::ptr::null(), CStr::as_ptr));
    locate(dirfd, path, follow, out, &mut via)
}

/// Resolves `path` relative to `dirfd` into `out`, and records in `via` how
/// the call reaches exactly the object resolved: through an `O_PATH` fd of
/// the object, or of its parent directory plus the name. The caller's
/// string is never walked again, so whatever is renamed or swapped after
/// this, the call acts on what was checked.
///
/// A path without symlinks is folded lexically and proven with one
/// [`sys::open_strict`] (`openat2(RESOLVE_NO_SYMLINKS)`; relative to the
/// caller's dirfd, beneath it: the path read for the dirfd only names it);
/// any other is opened the kernel's way and named by [`sys::fd_name`].
pub fn locate(
    dirfd: i32,
    path: Option<&CStr>,
    follow: Follow,
    out: &mut PathBuf,
    via: &mut Via,
) -> Result<(), Unresolved> {
    let Some(path) = path else {
        // utimensat(fd, NULL, …) acts on fd; with AT_FDCWD the kernel says EFAULT.
        if dirfd == libc::AT_FDCWD || follow != Follow::Fd {
            return Err(Unresolved::Kernel(Errno::FAULT));
        }
        return fd_path(dirfd, out);
    };
    if follow == Follow::Fd {
        // The call acts on the caller's fd itself.
        return fd_path(dirfd, out);
    }
    let bytes = path.to_bytes();
    if bytes.is_empty() {
        return Err(Unresolved::Kernel(Errno::NOENT));
    }
    if bytes.len() >= PATH_MAX {
        // The kernel takes no path argument of PATH_MAX bytes with its
        // NUL: the call fails so, though the parent and name the guard
        // would act through are short.
        return Err(Unresolved::Kernel(Errno::NAMETOOLONG));
    }
    // An absolute path ignores dirfd, even an invalid one.
    let dirfd = if bytes[0] == b'/' {
        libc::AT_FDCWD
    } else {
        dirfd
    };
    let slash = bytes.ends_with(b"/");
    let follow = match follow {
        // A trailing slash makes the kernel follow after all; `.` and `..`
        // are never symlinks.
        Follow::NoFollow if slash || matches!(split(bytes), Some((_, b"." | b".."))) => Follow::Yes,
        Follow::NoFollow => Follow::Entry,
        f => f,
    };
    if follow == Follow::Create && slash {
        // The kernel creates nothing with a trailing slash.
        return Err(Unresolved::Kernel(Errno::ISDIR));
    }
    if let Some(r) = locate_fast(dirfd, path, follow, slash, out, via) {
        return r;
    }
    via.reset();
    locate_slow(dirfd, path, follow, slash, out, via)
}

/// The lexical route (see [`locate`]); `None`: take the kernel's route. Out
/// of line: its buffer is off the stack when the kernel's route runs.
#[inline(never)]
fn locate_fast(
    dirfd: i32,
    path: &CStr,
    follow: Follow,
    slash: bool,
    out: &mut PathBuf,
    via: &mut Via,
) -> Option<Result<(), Unresolved>> {
    if sys::strict_open_missing() {
        return None;
    }
    let mut raw = RawPath::new();
    lexical(dirfd, path, out, &mut raw)?;
    let beneath = dirfd != libc::AT_FDCWD;
    let start = if beneath { dir(dirfd).ok()? } else { CWD };
    if beneath {
        // Walk the caller's own relative path from the caller's dirfd.
        raw.len = 0;
        if !raw.push(path.to_bytes()) {
            return None;
        }
    }
    let kernel = |e: Errno| Some(Err(Unresolved::Kernel(e)));
    if matches!(follow, Follow::Yes | Follow::Create) {
        match sys::open_strict(start, raw.as_cstr(), sys::REF, Mode::empty(), beneath) {
            Ok(fd) => return Some(via.set_object(fd, slash).map_err(Unresolved::Failed)),
            Err(Errno::NOENT) if follow == Follow::Create => {}
            Err(Errno::NOENT) => return kernel(Errno::NOENT),
            Err(_) => return None,
        }
    }
    // An entry, or a create of a missing name: the parent and the name,
    // both left in `raw` (the parent's NUL goes where a slash was).
    let (plen, name_at, name_len) = {
        let all = raw.bytes();
        let (parent, name) = split(all)?;
        if name == b"." || name == b".." || name.len() > 255 {
            return None;
        }
        let at = name.as_ptr() as usize - all.as_ptr() as usize;
        (parent.len(), at, name.len())
    };
    let created = follow == Follow::Create;
    if plen == 0 {
        // A bare name relative to the caller's dirfd: that dirfd is the parent.
        let name = &raw.bytes()[name_at..name_at + name_len];
        return Some(
            via.set_entry_borrowed(dirfd, name, slash, created)
                .map_err(Unresolved::Kernel),
        );
    }
    // A parent that is only slashes is the root, and the name may start
    // right after its one byte.
    let root = raw.bytes()[..name_at].iter().all(|&b| b == b'/');
    let (parent, name) = if root {
        (c"/", &raw.bytes()[name_at..name_at + name_len])
    } else {
        raw.c_prefix_and(plen, name_at, name_len)
    };
    match sys::open_strict(
        start,
        parent,
        sys::REF | OFlags::DIRECTORY,
        Mode::empty(),
        beneath,
    ) {
        Ok(pfd) => Some(
            via.set_entry(pfd, name, slash, created)
                .map_err(Unresolved::Kernel),
        ),
        Err(e @ (Errno::NOENT | Errno::NOTDIR)) => kernel(e),
        Err(_) => None,
    }
}

/// The kernel's route: open what the kernel would reach (a [`sys::REF`]),
/// ask the kernel what it is ([`sys::fd_name`]).
fn locate_slow(
    dirfd: i32,
    path: &CStr,
    follow: Follow,
    slash: bool,
    out: &mut PathBuf,
    via: &mut Via,
) -> Result<(), Unresolved> {
    let bytes = path.to_bytes();
    let d = dir(dirfd).map_err(Unresolved::Kernel)?;
    if follow == Follow::Entry {
        let Some((parent, name)) = split(bytes) else {
            // "/" names no entry; the call acts on the root itself, which
            // no rename can swap.
            return fd_path_cstr(d, c"/", out);
        };
        let pfd = open_parent(d, parent).map_err(kernel_or_failed)?;
        if name == b"." || name == b".." {
            // Not an entry the kernel acts on by name (it fails the call);
            // named exactly for the decision.
            fd_path_cstr(d, path, out)?;
        } else {
            fd_path_of(pfd.as_fd(), out)?;
            out.push_name(name).map_err(Unresolved::Kernel)?;
        }
        return via
            .set_entry(pfd, name, slash, false)
            .map_err(Unresolved::Kernel);
    }
    if follow == Follow::Create {
        return resolve_create(d, bytes, out, via);
    }
    match sys::open_ref(d, path, OFlags::empty()) {
        Ok(fd) => {
            if let Err(e) = fd_path_of(fd.as_fd(), out) {
                if e != Unresolved::Failed(Errno::NAMETOOLONG) {
                    return Err(e);
                }
                if deep_object_path(d, bytes, fd.as_fd(), out).is_err() {
                    // A symlink to it, say: followed by hand, as for a
                    // create, to the object it leads to now.
                    drop(fd);
                    resolve_create(d, bytes, out, via)?;
                    if via.reach() != Reach::Object {
                        via.reset();
                        return Err(Unresolved::Failed(Errno::NAMETOOLONG));
                    }
                    return Ok(());
                }
            }
            via.set_object(fd, slash).map_err(Unresolved::Failed)
        }
        // Darwin opens no object it may not read (no O_PATH): followed by
        // hand, as for a create, to the entry that is the object.
        #[cfg(not(target_os = "linux"))]
        Err(Errno::ACCESS) => {
            resolve_create(d, bytes, out, via)?;
            if via.reach() != Reach::Object {
                via.reset();
                return Err(Unresolved::Kernel(Errno::ACCESS));
            }
            Ok(())
        }
        Err(e) => Err(kernel_or_failed(e)),
    }
}

/// The name of a non-directory deeper than `PATH_MAX`, opened as `bytes`
/// relative to `d`: its parent's name and its own, when the entry there is
/// the object itself (not a symlink to it).
fn deep_object_path(
    d: BorrowedFd<'_>,
    bytes: &[u8],
    fd: BorrowedFd<'_>,
    out: &mut PathBuf,
) -> Result<(), Unresolved> {
    let too_long = Unresolved::Failed(Errno::NAMETOOLONG);
    let (parent, name) = split(bytes).ok_or(too_long)?;
    if name == b"." || name == b".." || name.len() > 255 {
        return Err(too_long);
    }
    let pfd = open_parent(d, parent).map_err(kernel_or_failed)?;
    let c = std::ffi::CString::new(name).map_err(|_| too_long)?;
    let st = rustix::fs::statat(&pfd, c.as_c_str(), rustix::fs::AtFlags::SYMLINK_NOFOLLOW)
        .map_err(Unresolved::Failed)?;
    if (crate::sys::dev(&st), st.st_ino) != id_of(fd).map_err(Unresolved::Failed)?.0 {
        return Err(too_long);
    }
    fd_path_of(pfd.as_fd(), out)?;
    out.push_name(name).map_err(Unresolved::Kernel)
}

/// Splits `a/b/c//` into (`a/b`, `c`); (`""`, `c`) for a bare name and
/// (`/`, `c`) for `/c`. `None` when there is no name (`/`, `//`).
pub(super) fn split(bytes: &[u8]) -> Option<(&[u8], &[u8])> {
    let end = bytes.iter().rposition(|&b| b != b'/')? + 1;
    let trimmed = &bytes[..end];
    match trimmed.iter().rposition(|&b| b == b'/') {
        None => Some((b"", trimmed)),
        Some(i) => {
            let name = &trimmed[i + 1..];
            let parent_end = trimmed[..i]
                .iter()
                .rposition(|&b| b != b'/')
                .map_or(0, |j| j + 1);
            let parent: &[u8] = if parent_end == 0 {
                b"/"
            } else {
                &trimmed[..parent_end]
            };
            Some((parent, name))
        }
    }
}

/// Opens a directory part of a path (`""` meaning dirfd itself) as a [`sys::REF`].
pub(super) fn open_parent(d: BorrowedFd<'_>, parent: &[u8]) -> Result<OwnedFd, Errno> {
    let mut buf = RawPath::new();
    let p: &[u8] = if parent.is_empty() { b"." } else { parent };
    if !buf.push(p) {
        return Err(Errno::NAMETOOLONG);
    }
    sys::open_ref(d, buf.as_cstr(), OFlags::DIRECTORY)
}
