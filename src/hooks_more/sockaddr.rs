//! Socket addresses as the kernel reads them: copied once from the caller,
//! so the address checked is the address the kernel gets (another thread
//! cannot rewrite it in between, nor turn an `AF_INET` address into an
//! `AF_UNIX` one), and named: an AF_UNIX socket file's path, or an
//! abstract socket's name (`@name`, each NUL shown as `@`).

use std::ffi::CStr;
use std::mem::{offset_of, size_of};

use crate::guard::{CArg, Socket};

/// The most the kernel reads of an address (`sockaddr_storage`): a longer
/// length is refused (`EINVAL`) before it reads any.
pub(super) const STORAGE: usize = size_of::<libc::sockaddr_storage>();
const SUN_PATH: usize = offset_of!(libc::sockaddr_un, sun_path);
const SUN_LEN: usize = size_of::<libc::sockaddr_un>();

/// A caller's socket address, copied.
pub(super) struct Addr {
    raw: libc::sockaddr_storage,
    len: libc::socklen_t,
}

impl Addr {
    /// The `len` bytes at `addr`; `None` when the kernel reads none: a NULL
    /// address, an empty one, or a length it refuses outright (over
    /// [`STORAGE`], or negative as the `int` it takes).
    ///
    /// # Safety
    /// `addr` must be NULL or point to `len` readable bytes.
    pub(super) unsafe fn copy(addr: *const libc::sockaddr, len: libc::socklen_t) -> Option<Addr> {
        if addr.is_null() || len == 0 || len as usize > STORAGE {
            return None;
        }
        // SAFETY: an all-zero sockaddr_storage is a valid value.
        let mut raw: libc::sockaddr_storage = unsafe { std::mem::zeroed() };
        // SAFETY: `len` <= STORAGE bytes, readable at `addr` by the
        // caller's guarantee, into our own storage.
        unsafe {
            std::ptr::copy_nonoverlapping(
                addr.cast::<u8>(),
                (&mut raw as *mut libc::sockaddr_storage).cast::<u8>(),
                len as usize,
            );
        }
        Some(Addr { raw, len })
    }

    /// The copy, for the real call.
    pub(super) fn ptr(&self) -> *const libc::sockaddr {
        (&self.raw as *const libc::sockaddr_storage).cast()
    }

    /// Its length.
    pub(super) fn len(&self) -> libc::socklen_t {
        self.len
    }

    fn bytes(&self) -> &[u8] {
        // SAFETY: `len` <= STORAGE bytes of our own storage.
        unsafe { std::slice::from_raw_parts(self.ptr().cast::<u8>(), self.len as usize) }
    }

    /// What an AF_UNIX socket reaches at this address.
    pub(super) fn unix(&self) -> Unix {
        Unix::of(self.bytes())
    }
}

/// The AF_UNIX socket an address names, as the kernel reads it: a path up
/// to its first NUL or the length's end (108 bytes at most), or an
/// abstract name (every byte after the leading NUL up to the length).
pub(super) enum Unix {
    /// Not an AF_UNIX name: another family, an unnamed address (`bind`'s
    /// autobind), or a length the kernel refuses.
    Other,
    /// A socket file, NUL-terminated.
    Path([u8; SUN_LEN]),
    /// An abstract socket: `@`, the name with each NUL as `@`, then a NUL.
    Abstract([u8; SUN_LEN], usize),
}

impl Unix {
    /// The name `addr` (an address's bytes) gives an AF_UNIX socket.
    pub(super) fn of(addr: &[u8]) -> Unix {
        let len = addr.len();
        if len <= SUN_PATH || len > SUN_LEN {
            return Unix::Other;
        }
        #[cfg(not(target_os = "macos"))]
        let family = libc::sa_family_t::from_ne_bytes([addr[0], addr[1]]);
        // Darwin's sockaddr starts with its length, then a one-byte family.
        #[cfg(target_os = "macos")]
        let family = addr[1];
        if std::ffi::c_int::from(family) != libc::AF_UNIX {
            return Unix::Other;
        }
        let sun = &addr[SUN_PATH..];
        let mut buf = [0u8; SUN_LEN];
        if sun[0] == 0 {
            buf[0] = b'@';
            for (o, &b) in buf[1..].iter_mut().zip(&sun[1..]) {
                *o = if b == 0 { b'@' } else { b };
            }
            return Unix::Abstract(buf, sun.len());
        }
        let n = sun.iter().position(|&b| b == 0).unwrap_or(sun.len());
        buf[..n].copy_from_slice(&sun[..n]);
        Unix::Path(buf)
    }

    /// The socket, for [`crate::guard::check_socket`]; `None` for
    /// [`Unix::Other`].
    pub(super) fn socket(&self) -> Option<Socket<'_>> {
        match self {
            Unix::Other => None,
            // NUL-terminated within the buffer (a path is 108 bytes at most).
            Unix::Path(p) => Some(Socket::Path(CArg::of(
                CStr::from_bytes_until_nul(p).unwrap_or(c""),
            ))),
            Unix::Abstract(n, len) => Some(Socket::Abstract(&n[..*len])),
        }
    }
}

/// An AF_UNIX address naming `path` (a C string of at most 107 bytes), for
/// the real call; `None` if it does not fit.
#[cfg(target_os = "linux")]
pub(super) fn unix_addr(path: &CStr) -> Option<(libc::sockaddr_un, libc::socklen_t)> {
    let p = path.to_bytes_with_nul();
    // SAFETY: an all-zero sockaddr_un is a valid value.
    let mut a: libc::sockaddr_un = unsafe { std::mem::zeroed() };
    if p.len() > a.sun_path.len() {
        return None;
    }
    a.sun_family = libc::AF_UNIX as libc::sa_family_t;
    for (o, &b) in a.sun_path.iter_mut().zip(p) {
        *o = b as std::ffi::c_char;
    }
    Some((a, (SUN_PATH + p.len()) as libc::socklen_t))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sun(family: i32, path: &[u8]) -> Vec<u8> {
        // SAFETY: an all-zero sockaddr_un is a valid value.
        let mut a: libc::sockaddr_un = unsafe { std::mem::zeroed() };
        a.sun_family = family as libc::sa_family_t;
        for (o, &b) in a.sun_path.iter_mut().zip(path) {
            *o = b as std::ffi::c_char;
        }
        // SAFETY: the bytes of a live sockaddr_un.
        unsafe {
            std::slice::from_raw_parts((&a as *const libc::sockaddr_un).cast::<u8>(), SUN_LEN)
        }
        .to_vec()
    }

    fn name(u: &Unix) -> Option<(bool, Vec<u8>)> {
        match u.socket()? {
            Socket::Path(p) => Some((false, p.get().unwrap().to_bytes().to_vec())),
            Socket::Abstract(n) => Some((true, n.to_vec())),
        }
    }

    #[test]
    fn unix_names_as_the_kernel_reads_them() {
        let a = sun(libc::AF_UNIX, b"/tmp/s");
        assert_eq!(name(&Unix::of(&a)), Some((false, b"/tmp/s".to_vec())));
        // A length that cuts the name, without a NUL.
        assert_eq!(
            name(&Unix::of(&a[..SUN_PATH + 4])),
            Some((false, b"/tmp".to_vec()))
        );
        // Unnamed (autobind), other families, lengths the kernel refuses.
        assert!(name(&Unix::of(&a[..SUN_PATH])).is_none());
        assert!(name(&Unix::of(&sun(libc::AF_INET, b"/tmp/s"))).is_none());
        let mut long = a.clone();
        long.push(0);
        assert!(name(&Unix::of(&long)).is_none());
        // A whole sun_path without a NUL: 108 bytes.
        let full = sun(libc::AF_UNIX, &[b'a'; 108]);
        assert_eq!(name(&Unix::of(&full)).unwrap().1.len(), 108);
        // Abstract: every byte up to the length, NULs shown as @.
        let ab = sun(libc::AF_UNIX, b"\0x\0y");
        assert_eq!(
            name(&Unix::of(&ab[..SUN_PATH + 4])),
            Some((true, b"@x@y".to_vec()))
        );
        assert_eq!(
            name(&Unix::of(&ab[..SUN_PATH + 2])),
            Some((true, b"@x".to_vec()))
        );
        assert_eq!(name(&Unix::of(&ab)).unwrap().1.len(), 108);
    }

    #[test]
    fn copies_only_what_the_kernel_reads() {
        let a = sun(libc::AF_UNIX, b"/s");
        let p = a.as_ptr().cast::<libc::sockaddr>();
        // SAFETY: `a` holds SUN_LEN bytes; the others read none.
        unsafe {
            assert!(Addr::copy(std::ptr::null(), 16).is_none());
            assert!(Addr::copy(p, 0).is_none());
            assert!(Addr::copy(p, (STORAGE + 1) as libc::socklen_t).is_none());
            assert!(Addr::copy(p, u32::MAX).is_none());
            let c = Addr::copy(p, SUN_LEN as libc::socklen_t).unwrap();
            assert_eq!(c.bytes(), &a[..]);
            assert!(matches!(c.unix(), Unix::Path(_)));
        }
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn proc_fd_addresses() {
        let (a, len) = unix_addr(c"/proc/self/fd/7").unwrap();
        assert_eq!(len as usize, SUN_PATH + 16);
        assert_eq!(a.sun_path[14] as u8, b'7');
        assert!(unix_addr(&std::ffi::CString::new(vec![b'a'; 108]).unwrap()).is_none());
    }
}
