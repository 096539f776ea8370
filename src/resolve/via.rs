//! [`Via`]: how a checked call reaches exactly the object checked.

use std::os::fd::OwnedFd;

use rustix::io::Errno;

use super::spill::{copy_into, Spill};
use crate::sys::{fd_link, FD_LINK_MAX};

/// How a checked call reaches the object that was checked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reach {
    /// With the caller's own arguments: nothing was resolved, or the call
    /// acts on the caller's fd, or on `/`.
    Caller,
    /// The object itself, held open with `O_PATH`.
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
    caller_dirfd: i32,
    caller_path: *const libc::c_char,
    /// `/proc/self/fd/N` (an object) or `/proc/self/fd/N/name` (an entry),
    /// NUL-terminated; written before `reach` leaves `Caller`, left
    /// uninitialized until then (every hook makes one, checked or not).
    buf: Spill<VIA_INLINE>,
    /// Where the name starts in `buf`.
    name_at: usize,
}

impl Via {
    /// Nothing resolved yet: the caller's own arguments.
    pub fn caller(dirfd: i32, path: *const libc::c_char) -> Via {
        Via {
            reach: Reach::Caller,
            fd: -1,
            owned: false,
            created: false,
            caller_dirfd: dirfd,
            caller_path: path,
            buf: Spill::new(),
            name_at: 0,
        }
    }

    /// Back to the caller's arguments (a route given up half-way).
    pub fn reset(&mut self) {
        self.close();
        self.reach = Reach::Caller;
        self.created = false;
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

    fn put_fd_link(&mut self, fd: i32) -> usize {
        let mut link = [0u8; FD_LINK_MAX];
        let n = fd_link(fd, &mut link);
        self.put(0, &link[..n]);
        n
    }

    /// The object itself, held by `fd`; `slash`: the caller's path ended in
    /// one (the object is a directory, and `/proc/self/fd/N/` is followed
    /// even by calls that do not follow a last symlink).
    pub(crate) fn set_object(&mut self, fd: OwnedFd, slash: bool) {
        use std::os::fd::IntoRawFd;
        self.close();
        self.fd = fd.into_raw_fd();
        self.owned = true;
        self.reach = Reach::Object;
        self.created = false;
        let mut n = self.put_fd_link(self.fd);
        if slash {
            self.put(n, b"/");
            n += 1;
        }
        self.put(n, b"\0");
        self.name_at = 0;
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
        let mut n = self.put_fd_link(fd);
        self.put(n, b"/");
        n += 1;
        self.name_at = n;
        self.put(n, name);
        n += name.len();
        if slash {
            self.put(n, b"/");
            n += 1;
        }
        self.put(n, b"\0");
        Ok(())
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
            Reach::Object => libc::AT_FDCWD,
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
    pub fn abs(&self) -> *const libc::c_char {
        match self.reach {
            Reach::Caller => self.caller_path,
            Reach::Object | Reach::Entry => self.buf.as_ptr().cast(),
        }
    }

    /// Open flags for the call: an object is reopened through its
    /// `/proc/self/fd` link (a magic link `O_NOFOLLOW` would refuse); a
    /// name that did not exist is created without following a symlink that
    /// appeared there since.
    pub fn oflags(&self, flags: libc::c_int) -> libc::c_int {
        match self.reach {
            Reach::Object => flags & !libc::O_NOFOLLOW,
            Reach::Entry if self.created => flags | libc::O_NOFOLLOW,
            _ => flags,
        }
    }

    /// `*at` flags for the call: an object's `/proc/self/fd` link must be
    /// followed.
    pub fn atflags(&self, flags: libc::c_int) -> libc::c_int {
        match self.reach {
            Reach::Object => flags & !libc::AT_SYMLINK_NOFOLLOW,
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
