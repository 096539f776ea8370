//! A create's walk: the last name followed by hand through symlinks,
//! dangling or not, to what the kernel would open or create.

use std::ffi::CStr;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};

use rustix::fs::{OFlags, CWD};

use crate::sys;
use rustix::io::Errno;

use super::buffers::RAW_CAP;
use super::fd_path::fd_path_of;
use super::locate::split;
use super::spill::Spill;
use super::{kernel_or_failed, PathBuf, RawPath, Unresolved, Via};

/// Dangling symlinks followed while resolving an `O_CREAT` target (fewer
/// than the kernel's 40); a longer chain fails with ELOOP.
const MAX_LINKS: usize = 8;

/// A create (`O_CREAT` without `O_EXCL`) walked the kernel's way: the
/// parent resolved, then the last name followed by hand, so a symlink there
/// (dangling or not) resolves to what the kernel would open or create, and
/// a name that does not exist resolves to that entry in the parent.
pub(super) fn resolve_create(
    d: BorrowedFd<'_>,
    bytes: &[u8],
    out: &mut PathBuf,
    via: &mut Via,
) -> Result<(), Unresolved> {
    // A loop, not a recursion, over one buffer: the path walked (the
    // caller's, then each symlink's target), its parent and name
    // NUL-terminated in place. A target is read into `out`, unused until
    // the end. `from`: the directory of the last link, where a relative
    // target starts.
    let mut path = RawPath::new();
    if !path.push(bytes) {
        return Err(if bytes.len() >= RAW_CAP {
            Unresolved::Kernel(Errno::NAMETOOLONG)
        } else {
            Unresolved::Failed(Errno::NOMEM)
        });
    }
    let mut from: Option<OwnedFd> = None;
    let mut links = 0;
    loop {
        let all = path.bytes();
        let start = match &from {
            Some(dir) if all.first() != Some(&b'/') => dir.as_fd(),
            Some(_) => CWD,
            None => d,
        };
        let Some((parent, name)) = split(all) else {
            // "/": a directory.
            return Err(Unresolved::Kernel(Errno::ISDIR));
        };
        let name_at = name.as_ptr() as usize - all.as_ptr() as usize;
        let name_len = name.len();
        // The parent: "." for a bare name, "/" when only slashes come
        // before the name, else the first `plen` bytes.
        let plen = if parent.is_empty() || all[..name_at].iter().all(|&b| b == b'/') {
            None
        } else {
            Some(parent.len())
        };
        let pc = match plen {
            None if parent.is_empty() => c".",
            None => c"/",
            Some(n) => path.c_prefix(n),
        };
        let pfd = sys::open_ref(start, pc, OFlags::DIRECTORY).map_err(kernel_or_failed)?;
        let (cname, name) = path.c_name(name_at, name_len);
        if name == b"." || name == b".." {
            // A directory that exists: the kernel will not create it.
            return Err(Unresolved::Kernel(Errno::ISDIR));
        }
        if name.len() >= 256 {
            return Err(Unresolved::Kernel(Errno::NAMETOOLONG));
        }
        match read_link(pfd.as_fd(), cname, &mut out.buf) {
            Ok(n) => {
                if links >= MAX_LINKS {
                    return Err(Unresolved::Kernel(Errno::LOOP));
                }
                // SAFETY: readlink wrote the first n bytes.
                let t = unsafe { out.buf.bytes(n) };
                if t.ends_with(b"/") {
                    // The kernel creates nothing through a target that ends
                    // in a slash.
                    return Err(Unresolved::Kernel(Errno::ISDIR));
                }
                path.len = 0;
                if !path.push(t) {
                    return Err(Unresolved::Failed(Errno::NOMEM));
                }
                links += 1;
                from = Some(pfd);
            }
            // Not a symlink: the object itself, not followed (a symlink that
            // appears there now is opened as one, which fails).
            Err(Errno::INVAL) => {
                let fd = match sys::open_ref(pfd.as_fd(), cname, OFlags::NOFOLLOW) {
                    Ok(fd) => fd,
                    // Darwin opens no object it may not read (no O_PATH):
                    // reached as the entry, just found to be no symlink.
                    #[cfg(not(target_os = "linux"))]
                    Err(Errno::ACCESS) => {
                        fd_path_of(pfd.as_fd(), out)?;
                        out.push_name(name).map_err(Unresolved::Kernel)?;
                        return via.set_object_at(pfd, name).map_err(Unresolved::Kernel);
                    }
                    Err(e) => return Err(kernel_or_failed(e)),
                };
                if let Err(e) = fd_path_of(fd.as_fd(), out) {
                    // A non-directory deeper than PATH_MAX: it is this entry.
                    if e != Unresolved::Failed(Errno::NAMETOOLONG) {
                        return Err(e);
                    }
                    fd_path_of(pfd.as_fd(), out)?;
                    out.push_name(name).map_err(Unresolved::Kernel)?;
                }
                return via.set_object(fd, false).map_err(Unresolved::Failed);
            }
            Err(Errno::NOENT) => {
                fd_path_of(pfd.as_fd(), out)?;
                out.push_name(name).map_err(Unresolved::Kernel)?;
                return via
                    .set_entry(pfd, name, false, true)
                    .map_err(Unresolved::Kernel);
            }
            Err(e) => return Err(kernel_or_failed(e)),
        }
    }
}

/// Reads the target of the symlink `name` in `dir` into `buf`: first into
/// what it holds, then, if that was too short, into room for `PATH_MAX`.
/// Its length; Err(ENAMETOOLONG) past `PATH_MAX`.
fn read_link<const N: usize>(
    dir: BorrowedFd<'_>,
    name: &CStr,
    buf: &mut Spill<N>,
) -> Result<usize, Errno> {
    let max = RAW_CAP - 1;
    let first = buf.capacity().min(max);
    let mut n = rustix::fs::readlinkat_raw(dir, name, &mut buf.buf()[..first])?
        .0
        .len();
    if n >= first && first < max {
        buf.reserve(RAW_CAP, 0)?;
        n = rustix::fs::readlinkat_raw(dir, name, &mut buf.buf()[..max])?
            .0
            .len();
    }
    if n >= max {
        return Err(Errno::NAMETOOLONG);
    }
    Ok(n)
}
