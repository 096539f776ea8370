//! [`Via`]: how a checked call reaches exactly the object checked.
//!
//! On Linux an object is reached through the magic link of the fd that
//! holds it (`/proc/self/fd/N`). Darwin has none (`/dev/fd/N` duplicates
//! the fd and reaches nothing else), so there an object is reached as a
//! directory entry: the parent held and the object's own name, verified to
//! be the object ([`object_entry`]), for `*at` calls that do not follow it.

use std::mem::MaybeUninit;
use std::os::fd::{AsFd, OwnedFd};

use rustix::fs::{AtFlags, FileType, CWD};
use rustix::io::Errno;

use super::locate::{open_parent, split};
use super::spill::{copy_into, Spill};
#[cfg(target_os = "linux")]
use crate::sys::{fd_link, FD_LINK_MAX};

/// How a checked call reaches the object that was checked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reach {
    /// With the caller's own arguments: nothing was resolved, or the call
    /// acts on the caller's fd, or on `/`.
    Caller,
    /// The object itself, held open with `O_PATH` (Linux); on Darwin its
    /// parent and its name, verified (see [`object_entry`]), or a
    /// directory held and `.`.
    Object,
    /// A directory entry: its parent held open with `O_PATH` (or the
    /// caller's own dirfd), and the name.
    Entry,
}

/// Room on the stack for `/proc/self/fd/N/` plus a name of 128 bytes, a
/// slash and the NUL: every hook holds two. A longer name (up to
/// `NAME_MAX`) moves to a mapping (see [`Spill`]).
const VIA_INLINE: usize = 32 + 128 + 2;

/// What a check leaves for the call: how to reach exactly the object the
/// decision was about. Hooks pass [`Via::dirfd`] and [`Via::path`] to the
/// real `*at` function, or [`Via::abs`] to a function that takes a path
/// only; either names the object through the fd held here, never through
/// the caller's string again.
pub struct Via {
    reach: Reach,
    fd: i32,
    owned: bool,
    /// The name did not exist when checked: a create must not follow a
    /// symlink that appears there since.
    created: bool,
    /// The open is answered with a descriptor that only names the object
    /// ([`Via::set_named_only`]).
    named_only: bool,
    caller_dirfd: i32,
    caller_path: *const libc::c_char,
    /// `/proc/self/fd/N` (an object) or `/proc/self/fd/N/name` (an entry),
    /// NUL-terminated (Darwin: the name alone); written before `reach` leaves `Caller`, left
    /// uninitialized until then (every hook makes one, checked or not).
    buf: Spill<VIA_INLINE>,
    /// Where the name starts in `buf`.
    name_at: usize,
    /// How many bytes of `buf` are written, the NUL included.
    end: usize,
}

impl Via {
    /// Nothing resolved yet: the caller's own arguments.
    pub fn caller(dirfd: i32, path: *const libc::c_char) -> Via {
        Via {
            reach: Reach::Caller,
            fd: -1,
            owned: false,
            created: false,
            named_only: false,
            caller_dirfd: dirfd,
            caller_path: path,
            buf: Spill::new(),
            name_at: 0,
            end: 0,
        }
    }

    /// Back to the caller's arguments (a route given up half-way).
    pub fn reset(&mut self) {
        self.close();
        self.reach = Reach::Caller;
        self.created = false;
        self.named_only = false;
    }

    /// The open acting through this Via gets a descriptor that only names
    /// the object: [`Via::oflags`] becomes `O_PATH | O_DIRECTORY` and the
    /// caller's `O_CLOEXEC` (the policy refused the read of a directory
    /// above the root: `Policy::names_only`). For an object held (Linux),
    /// which the check makes sure of.
    pub fn set_named_only(&mut self) {
        self.named_only = self.reach == Reach::Object;
    }

    fn close(&mut self) {
        if self.owned && self.fd >= 0 {
            // SAFETY: an fd this Via opened and owns.
            drop(unsafe { <OwnedFd as std::os::fd::FromRawFd>::from_raw_fd(self.fd) });
        }
        self.owned = false;
        self.fd = -1;
    }

    /// How the call will reach its object.
    pub fn reach(&self) -> Reach {
        self.reach
    }

    /// Writes `bytes` at `at` (room was made).
    fn put(&mut self, at: usize, bytes: &[u8]) {
        copy_into(&mut self.buf.buf()[at..at + bytes.len()], bytes);
    }

    #[cfg(target_os = "linux")]
    fn put_fd_link(&mut self, fd: i32) -> usize {
        let mut link = [0u8; FD_LINK_MAX];
        let n = fd_link(fd, &mut link);
        self.put(0, &link[..n]);
        n
    }

    /// The object itself, held by `fd`; `slash`: the caller's path ended in
    /// one (the object is a directory, and `/proc/self/fd/N/` is followed
    /// even by calls that do not follow a last symlink).
    #[cfg(target_os = "linux")]
    pub(crate) fn set_object(&mut self, fd: OwnedFd, slash: bool) -> Result<(), Errno> {
        use std::os::fd::IntoRawFd;
        self.close();
        self.fd = fd.into_raw_fd();
        self.owned = true;
        self.reach = Reach::Object;
        self.created = false;
        self.named_only = false;
        let mut n = self.put_fd_link(self.fd);
        if slash {
            self.put(n, b"/");
            n += 1;
        }
        self.put(n, b"\0");
        self.name_at = 0;
        self.end = n + 1;
        Ok(())
    }

    /// The object held by `fd`, reached as the entry that is it (see
    /// [`object_entry`]): `*at` calls on its parent and its name, not
    /// followed. A directory is its own fd and `.` (a trailing slash adds
    /// nothing there). Fails when the entry is no longer the object.
    #[cfg(not(target_os = "linux"))]
    pub(crate) fn set_object(&mut self, fd: OwnedFd, _slash: bool) -> Result<(), Errno> {
        use std::os::fd::IntoRawFd;
        self.close();
        self.reach = Reach::Caller;
        let mut name = [0u8; 256];
        let (dir, n) = object_entry(fd, &mut name)?;
        self.fd = dir.into_raw_fd();
        self.owned = true;
        self.buf.reserve(n + 1, 0)?;
        self.put(0, &name[..n]);
        self.put(n, b"\0");
        self.name_at = 0;
        self.end = n + 1;
        self.reach = Reach::Object;
        self.created = false;
        Ok(())
    }

    /// An object Darwin cannot hold (it opens no object it may not read):
    /// reached as the entry `name` in the directory held by `pfd`, which
    /// the caller found to be the object itself, no symlink (readlink's
    /// EINVAL). Calls act on it as on [`Via::set_object`]'s.
    #[cfg(not(target_os = "linux"))]
    pub(crate) fn set_object_at(&mut self, pfd: OwnedFd, name: &[u8]) -> Result<(), Errno> {
        self.set_entry(pfd, name, false, false)?;
        self.reach = Reach::Object;
        Ok(())
    }

    fn entry(
        &mut self,
        fd: i32,
        owned: bool,
        name: &[u8],
        slash: bool,
        created: bool,
    ) -> Result<(), Errno> {
        self.close();
        // Held first, so a failure below still closes it.
        self.fd = fd;
        self.owned = owned;
        self.reach = Reach::Caller;
        if name.len() > 255 {
            return Err(Errno::NAMETOOLONG);
        }
        self.buf.reserve(32 + name.len() + 2, 0)?;
        self.reach = Reach::Entry;
        self.created = created;
        self.named_only = false;
        // Linux: `/proc/self/fd/N/name`, for calls that take a path alone;
        // Darwin: the name alone (no path reaches an fd's directory there).
        #[cfg(target_os = "linux")]
        let mut n = {
            let n = self.put_fd_link(fd);
            self.put(n, b"/");
            n + 1
        };
        #[cfg(not(target_os = "linux"))]
        let mut n = 0;
        self.name_at = n;
        self.put(n, name);
        n += name.len();
        if slash {
            self.put(n, b"/");
            n += 1;
        }
        self.put(n, b"\0");
        self.end = n + 1;
        Ok(())
    }

    /// Moves the fd this Via opened above the numbers the program's own
    /// calls get, for a call that makes a descriptor while the Via is held
    /// (an open through it, an `fopen`, an `opendir`): POSIX gives such a
    /// call the lowest number not open, which the Via's fd, opened a moment
    /// ago, may hold. The fd is duplicated high (see
    /// [`crate::reserve::dup_above`]) and the low one closed, so the real
    /// call gets the number it gets bare; nothing is renumbered under
    /// another thread. Left where it is when no higher number is free (the
    /// call then fails EMFILE, or gets the next number).
    pub(crate) fn keep_high(&mut self) {
        if !self.owned || self.fd < 0 || self.reach == Reach::Caller {
            return;
        }
        let old = self.fd;
        // SAFETY: an fd this Via owns, open until closed below.
        let Some(high) =
            crate::reserve::dup_above(unsafe { std::os::fd::BorrowedFd::borrow_raw(old) })
        else {
            return;
        };
        self.fd = high;
        #[cfg(target_os = "linux")]
        {
            // `/proc/self/fd/OLD…` becomes `/proc/self/fd/HIGH…`: the rest
            // moves by the difference in digits.
            let mut link = [0u8; FD_LINK_MAX];
            let (was, now) = (fd_link(old, &mut link), fd_link(high, &mut link));
            let buf = self.buf.buf();
            buf.copy_within(was..self.end, now);
            copy_into(&mut buf[..now], &link[..now]);
            self.end = self.end + now - was;
            if self.reach == Reach::Entry {
                self.name_at = self.name_at + now - was;
            }
        }
        // SAFETY: the low fd, ours, no longer referred to.
        drop(unsafe { <OwnedFd as std::os::fd::FromRawFd>::from_raw_fd(old) });
    }

    /// The entry `name` in the directory held by `pfd`.
    pub(crate) fn set_entry(
        &mut self,
        pfd: OwnedFd,
        name: &[u8],
        slash: bool,
        created: bool,
    ) -> Result<(), Errno> {
        use std::os::fd::IntoRawFd;
        self.entry(pfd.into_raw_fd(), true, name, slash, created)
    }

    /// The entry `name` in the caller's own directory fd.
    pub(crate) fn set_entry_borrowed(
        &mut self,
        dirfd: i32,
        name: &[u8],
        slash: bool,
        created: bool,
    ) -> Result<(), Errno> {
        self.entry(dirfd, false, name, slash, created)
    }

    /// The caller's own path argument.
    pub fn caller_path(&self) -> *const libc::c_char {
        self.caller_path
    }

    /// The dirfd for an `*at` call.
    pub fn dirfd(&self) -> libc::c_int {
        match self.reach {
            Reach::Caller => self.caller_dirfd,
            #[cfg(target_os = "linux")]
            Reach::Object => libc::AT_FDCWD,
            #[cfg(not(target_os = "linux"))]
            Reach::Object => self.fd,
            Reach::Entry => self.fd,
        }
    }

    /// The path for an `*at` call (relative to [`Via::dirfd`]).
    pub fn path(&self) -> *const libc::c_char {
        match self.reach {
            Reach::Caller => self.caller_path,
            // SAFETY: name_at lies within the written link.
            Reach::Object | Reach::Entry => unsafe { self.buf.as_ptr().add(self.name_at).cast() },
        }
    }

    /// A path that names the object on its own, for calls without a dirfd.
    /// Linux only: on Darwin no path reaches an fd's object, and such calls
    /// act through [`Via::dirfd`] and [`Via::path`] or an fd
    /// (`hooks_more/acts.rs`).
    #[cfg(target_os = "linux")]
    pub fn abs(&self) -> *const libc::c_char {
        match self.reach {
            Reach::Caller => self.caller_path,
            Reach::Object | Reach::Entry => self.buf.as_ptr().cast(),
        }
    }

    /// After a failed call: the object's name as the kernel knows it (the
    /// held fd's, and the entry's name), into `out`, for a trace line.
    /// `None`: not resolved, or longer than `out`.
    #[cfg(target_os = "linux")]
    pub fn name_into(&self, out: &mut [std::mem::MaybeUninit<u8>]) -> Option<usize> {
        if self.reach == Reach::Caller || self.fd < 0 {
            return None;
        }
        // SAFETY: an fd this Via holds open until it is dropped.
        let fd = unsafe { std::os::fd::BorrowedFd::borrow_raw(self.fd) };
        let n = crate::sys::fd_name(fd, out).ok()?;
        if n >= out.len() {
            return None;
        }
        if self.reach == Reach::Object {
            return Some(n);
        }
        // An entry: its parent's name, a slash and the name (the NUL left out).
        let len = self.end.saturating_sub(1).saturating_sub(self.name_at);
        // SAFETY: the name lies within the written bytes of `buf`.
        let name = unsafe { std::slice::from_raw_parts(self.buf.as_ptr().add(self.name_at), len) };
        let slash = usize::from(n > 1);
        if n + slash + name.len() > out.len() {
            return None;
        }
        if slash == 1 {
            out[n].write(b'/');
        }
        for (d, &b) in out[n + slash..].iter_mut().zip(name) {
            d.write(b);
        }
        Some(n + slash + name.len())
    }

    /// After a call refused with `EACCES` or `EPERM`: whether the file
    /// permissions would let this process do it (`access(2)`, which
    /// Landlock does not restrict): the object's own for `mode`, or, for a
    /// call on a directory entry (`entry`: unlink, rename, mkdir, …) or a
    /// name that does not exist, its directory's write and search bits.
    /// `None`: not resolved.
    #[cfg(target_os = "linux")]
    pub fn permits(&self, mode: rustix::fs::Access, entry: bool) -> Option<bool> {
        use rustix::fs::{accessat, Access as A};
        if self.reach == Reach::Caller || self.fd < 0 {
            return None;
        }
        // SAFETY: an fd this Via holds open until it is dropped.
        let fd = unsafe { std::os::fd::BorrowedFd::borrow_raw(self.fd) };
        let parent = || accessat(fd, c".", A::WRITE_OK | A::EXEC_OK, AtFlags::empty()).is_ok();
        // SAFETY: `abs` is NUL-terminated in this Via's buffer.
        let abs = unsafe { std::ffi::CStr::from_ptr(self.abs()) };
        match (self.reach, entry) {
            (Reach::Entry, true) => Some(parent()),
            (Reach::Entry, false) => match accessat(CWD, abs, mode, AtFlags::empty()) {
                Ok(()) => Some(true),
                Err(rustix::io::Errno::NOENT) => Some(parent()),
                Err(_) => Some(false),
            },
            _ => Some(accessat(CWD, abs, mode, AtFlags::empty()).is_ok()),
        }
    }

    /// Open flags for the call: an object is reopened through its
    /// `/proc/self/fd` link (a magic link `O_NOFOLLOW` would refuse), on
    /// Darwin through its entry, never followed (it was the object, not a
    /// symlink, when verified); a name that did not exist is created
    /// without following a symlink that appeared there since.
    pub fn oflags(&self, flags: libc::c_int) -> libc::c_int {
        if self.named_only {
            // The object reopened as a name: fstat, fchdir, a dirfd; its
            // `/proc/self/fd` link followed; not a directory any more, it
            // fails ENOTDIR. (Never set on Darwin: no O_PATH.)
            #[cfg(target_os = "linux")]
            return libc::O_PATH | libc::O_DIRECTORY | (flags & libc::O_CLOEXEC);
        }
        match self.reach {
            #[cfg(target_os = "linux")]
            Reach::Object => flags & !libc::O_NOFOLLOW,
            #[cfg(not(target_os = "linux"))]
            Reach::Object => flags | libc::O_NOFOLLOW,
            Reach::Entry if self.created => flags | libc::O_NOFOLLOW,
            _ => flags,
        }
    }

    /// `*at` flags for the call: an object's `/proc/self/fd` link must be
    /// followed; on Darwin an object's entry must not be.
    pub fn atflags(&self, flags: libc::c_int) -> libc::c_int {
        match self.reach {
            #[cfg(target_os = "linux")]
            Reach::Object => flags & !libc::AT_SYMLINK_NOFOLLOW,
            #[cfg(not(target_os = "linux"))]
            Reach::Object => flags | libc::AT_SYMLINK_NOFOLLOW,
            _ => flags,
        }
    }

    /// `linkat` flags for the call (which takes `AT_SYMLINK_FOLLOW`, not
    /// `AT_SYMLINK_NOFOLLOW`): on Darwin an object's entry is not followed.
    #[inline]
    pub fn linkflags(&self, flags: libc::c_int) -> libc::c_int {
        match self.reach {
            #[cfg(not(target_os = "linux"))]
            Reach::Object => flags & !libc::AT_SYMLINK_FOLLOW,
            _ => flags,
        }
    }

    /// Whether a create may have met a symlink planted after the check
    /// (ELOOP from a name added `O_NOFOLLOW` by [`Via::oflags`]).
    pub fn planted(&self, flags: libc::c_int, errno: libc::c_int) -> bool {
        self.reach == Reach::Entry
            && self.created
            && flags & libc::O_NOFOLLOW == 0
            && errno == libc::ELOOP
    }
}

impl Drop for Via {
    fn drop(&mut self) {
        self.close();
    }
}

/// The directory entry that is the object held by `fd`, for a system with
/// no path that reaches an fd's object (Darwin): a directory is `fd` itself
/// and `.`; any other object is its parent, opened by the kernel's name for
/// the object ([`crate::sys::fd_name`]), and its last component, checked
/// there (not followed) to be the object itself: same device, same inode.
/// Writes the name into `name` and returns the directory with the name's
/// length. ESTALE when the entry is no longer the object (renamed or
/// removed since it was opened, or a name the kernel gives no path:
/// a pipe, a socket), ENAMETOOLONG when the kernel's name was cut short.
#[cfg_attr(all(target_os = "linux", not(test)), allow(dead_code))] // Darwin's, tested on Linux
pub(super) fn object_entry(fd: OwnedFd, name: &mut [u8; 256]) -> Result<(OwnedFd, usize), Errno> {
    let st = rustix::fs::fstat(&fd)?;
    if FileType::from_raw_mode(st.st_mode) == FileType::Directory {
        name[0] = b'.';
        return Ok((fd, 1));
    }
    let mut kname = [MaybeUninit::<u8>::uninit(); super::PATH_CAP];
    let n = crate::sys::fd_name(fd.as_fd(), &mut kname)?;
    if n >= kname.len() {
        return Err(Errno::NAMETOOLONG);
    }
    // SAFETY: fd_name wrote the first n bytes.
    let k = unsafe { std::slice::from_raw_parts(kname.as_ptr().cast::<u8>(), n) };
    if k.first() != Some(&b'/') {
        return Err(Errno::STALE);
    }
    let (parent, base) = split(k).ok_or(Errno::STALE)?;
    if base == b"." || base == b".." || base.len() >= name.len() {
        return Err(Errno::STALE);
    }
    name[..base.len()].copy_from_slice(base);
    name[base.len()] = 0;
    let c = std::ffi::CStr::from_bytes_with_nul(&name[..=base.len()]).map_err(|_| Errno::STALE)?;
    let dir = open_parent(CWD, parent)?;
    let at = rustix::fs::statat(&dir, c, AtFlags::SYMLINK_NOFOLLOW).map_err(|_| Errno::STALE)?;
    if (crate::sys::dev(&at), at.st_ino) != (crate::sys::dev(&st), st.st_ino) {
        return Err(Errno::STALE);
    }
    Ok((dir, base.len()))
}
