//! bind on an AF_UNIX path creates a socket file: checked as a write of
//! that path (abstract and unnamed sockets create none).

use std::ffi::{c_int, CStr};

use crate::entry::Pre;
use crate::guard::CArg;

/// The bytes of a socket address that `bind` may read as a `sockaddr_un`
/// (none for NULL).
///
/// # Safety
/// `addr` must be NULL or point to `len` readable bytes.
pub(super) unsafe fn addr_bytes<'a>(addr: *const libc::sockaddr, len: libc::socklen_t) -> &'a [u8] {
    if addr.is_null() {
        return &[];
    }
    let n = (len as usize).min(std::mem::size_of::<libc::sockaddr_un>());
    // SAFETY: n <= len bytes at addr, readable by the caller's guarantee.
    unsafe { std::slice::from_raw_parts(addr.cast::<u8>(), n) }
}

/// The path an AF_UNIX `bind` would create, NUL-terminated in `buf`;
/// `None` for other families, abstract and unnamed sockets. `addr`: the
/// address's bytes (see [`addr_bytes`]).
pub(super) fn unix_path(addr: &[u8], buf: &mut [u8; 110]) -> bool {
    let off = std::mem::offset_of!(libc::sockaddr_un, sun_path);
    let len = addr.len();
    if len <= off {
        return false;
    }
    #[cfg(not(target_os = "macos"))]
    let family = libc::sa_family_t::from_ne_bytes([addr[0], addr[1]]);
    // Darwin's sockaddr starts with its length, then a one-byte family.
    #[cfg(target_os = "macos")]
    let family = addr[1];
    let first = addr[off];
    if c_int::from(family) != libc::AF_UNIX || first == 0 {
        return false;
    }
    let n = (len - off).min(108);
    let src = &addr[off..off + n];
    let n = src.iter().position(|&b| b == 0).unwrap_or(n);
    buf[..n].copy_from_slice(&src[..n]);
    buf[n] = 0;
    true
}

/// The path an AF_UNIX `bind` creates, NUL-terminated.
pub(super) struct SocketPath([u8; 110]);

impl SocketPath {
    /// The path, for the row's check.
    pub(super) fn sun_path(&self) -> CArg<'_> {
        // `unix_path` NUL-terminates within the buffer: always found.
        CArg::of(CStr::from_bytes_until_nul(&self.0).unwrap_or(c""))
    }
}

/// bind's `pre` step: the socket file an AF_UNIX path creates is checked
/// (a write); abstract and unnamed sockets and other families go straight
/// to the real call.
pub(super) fn socket_path(addr: &[u8]) -> Pre<SocketPath, c_int> {
    let mut buf = [0u8; 110];
    if !unix_path(addr, &mut buf) {
        return Pre::Pass;
    }
    Pre::Check(SocketPath(buf))
}

#[cfg(test)]
mod tests {
    use std::ffi::c_char;

    use super::*;

    #[test]
    fn unix_paths() {
        // SAFETY: an all-zero sockaddr_un is a valid value.
        let mut a: libc::sockaddr_un = unsafe { std::mem::zeroed() };
        a.sun_family = libc::AF_UNIX as libc::sa_family_t;
        for (i, b) in b"/tmp/s".iter().enumerate() {
            a.sun_path[i] = *b as c_char;
        }
        let p = (&a as *const libc::sockaddr_un).cast();
        let full = std::mem::size_of::<libc::sockaddr_un>() as libc::socklen_t;
        let mut buf = [0u8; 110];
        // SAFETY: `len` bytes of a live sockaddr_un.
        let unix_path = |p, len, buf: &mut _| unix_path(unsafe { addr_bytes(p, len) }, buf);
        assert!(unix_path(p, full, &mut buf));
        assert_eq!(&buf[..7], b"/tmp/s\0");
        // Length that cuts the name, without a NUL.
        assert!(unix_path(p, 2 + 4, &mut buf));
        assert_eq!(&buf[..5], b"/tmp\0");
        // Unnamed and abstract sockets create no file.
        assert!(!unix_path(p, 2, &mut buf));
        a.sun_path[0] = 0;
        let p = (&a as *const libc::sockaddr_un).cast();
        assert!(!unix_path(p, full, &mut buf));
        a.sun_path[0] = b'/' as c_char;
        a.sun_family = libc::AF_INET as libc::sa_family_t;
        let p = (&a as *const libc::sockaddr_un).cast();
        assert!(!unix_path(p, full, &mut buf));
    }
}
