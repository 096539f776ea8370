//! bind on an AF_UNIX path creates a socket file: checked as a write of
//! that path. An abstract name is decided by the socket rules (refused
//! unless `unix_sockets` names it); an unnamed address (autobind) and other
//! families create nothing. The kernel always gets the library's copy of
//! the address (see [`super::sockaddr`]).

use std::ffi::c_int;

use super::sockaddr::{Addr, Unix};
use crate::entry::Pre;
use crate::guard::{self, CArg, Socket};
use crate::resolve::Via;

type BindFn = unsafe extern "C" fn(c_int, *const libc::sockaddr, libc::socklen_t) -> c_int;

/// The address a bind on a socket file gets, and the file's path.
pub(super) struct Bound {
    addr: Addr,
    path: Unix,
}

impl Bound {
    /// The path, for the row's check.
    pub(super) fn sun_path(&self) -> CArg<'_> {
        match self.path.socket() {
            Some(Socket::Path(p)) => p,
            _ => CArg::NULL,
        }
    }

    /// The copied address, for the real call.
    pub(super) fn addr(&self) -> *const libc::sockaddr {
        self.addr.ptr()
    }

    /// Its length.
    pub(super) fn len(&self) -> libc::socklen_t {
        self.addr.len()
    }
}

/// The real bind with the library's copy of the address.
fn real_bind(fd: c_int, a: &Addr) -> c_int {
    hooks!(@real "bind", BindFn, -1, (fd, a.ptr(), a.len()))
}

/// bind's `pre` step: a socket file's path goes to the row's check (a
/// write), an abstract name to the socket rules; anything else is bound
/// here, from the copy.
///
/// # Safety
/// `addr` must be NULL or point to `len` readable bytes.
pub(super) unsafe fn socket_path(
    fd: c_int,
    addr: *const libc::sockaddr,
    len: libc::socklen_t,
) -> Pre<Bound, c_int> {
    // SAFETY: the caller's guarantee, passed on.
    let Some(addr) = (unsafe { Addr::copy(addr, len) }) else {
        // The kernel reads nothing another thread could change.
        return Pre::Pass;
    };
    let path = addr.unix();
    match path.socket() {
        Some(Socket::Path(_)) => Pre::Check(Bound { addr, path }),
        Some(s @ Socket::Abstract(_)) => {
            let mut via = Via::caller(libc::AT_FDCWD, std::ptr::null());
            match guard::check_socket("bind", s, &mut via) {
                Ok(()) => Pre::Answer(real_bind(fd, &addr)),
                Err(e) => {
                    guard::set_errno(e);
                    Pre::Answer(-1)
                }
            }
        }
        None => Pre::Answer(real_bind(fd, &addr)),
    }
}

/// The name a bind checks, for tests of [`Unix`].
#[cfg(test)]
fn checked(p: &Bound) -> Option<&std::ffi::CStr> {
    p.sun_path().get()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_is_checked_an_abstract_name_or_autobind_is_not_a_file() {
        // SAFETY: an all-zero sockaddr_un is a valid value.
        let mut a: libc::sockaddr_un = unsafe { std::mem::zeroed() };
        a.sun_family = libc::AF_UNIX as libc::sa_family_t;
        for (o, b) in a.sun_path.iter_mut().zip(b"/tmp/s") {
            *o = *b as std::ffi::c_char;
        }
        let p = (&a as *const libc::sockaddr_un).cast();
        let full = std::mem::size_of::<libc::sockaddr_un>() as libc::socklen_t;
        // SAFETY: `full` bytes of a live sockaddr_un; -1 is no socket.
        match unsafe { socket_path(-1, p, full) } {
            Pre::Check(b) => {
                assert_eq!(checked(&b), Some(c"/tmp/s"));
                assert_eq!(b.len(), full);
                assert_ne!(b.addr(), p, "the kernel gets the copy");
            }
            _ => panic!("a path is checked"),
        }
        // SAFETY: as above.
        assert!(matches!(unsafe { socket_path(-1, p, 0) }, Pre::Pass));
        // Autobind: bound from the copy, unchecked (the guard is not
        // loaded in a unit test: EBADF from the kernel).
        // SAFETY: as above.
        assert!(matches!(unsafe { socket_path(-1, p, 2) }, Pre::Answer(-1)));
    }
}
