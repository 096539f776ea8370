//! open_by_handle_at: a file handle names a file without its path, so the
//! object opened is checked.

use std::ffi::{c_int, c_void};

use super::check1;
use crate::guard::{set_errno, CArg};
use crate::hooks::open_access;
use crate::resolve::Follow;

/// open_by_handle_at opens a file by handle, without a path: the opened
/// object is checked, and closed again if refused.
pub fn checked_handle_fd(fd: c_int, flags: c_int) -> Result<c_int, c_int> {
    if fd < 0 {
        return Ok(fd);
    }
    match check1(
        "open_by_handle_at",
        open_access(flags),
        Follow::Fd,
        fd,
        CArg::NULL,
    ) {
        Ok(()) => Ok(fd),
        Err(e) => {
            // SAFETY: the fd the real call just returned to us.
            unsafe { libc::close(fd) };
            Err(e)
        }
    }
}

/// open_by_handle_at(2): the opened object is checked.
///
/// # Safety
/// As for the C function: its pointer arguments valid as it requires (a
/// C string NUL-terminated, NULL only where it accepts NULL).
#[no_mangle]
pub unsafe extern "C" fn open_by_handle_at(
    mount_fd: c_int,
    handle: *mut c_void,
    flags: c_int,
) -> c_int {
    let fd: c_int = hooks!(@real "open_by_handle_at", unsafe extern "C" fn(c_int, *mut c_void, c_int) -> c_int, -1, (mount_fd, handle, flags));
    match checked_handle_fd(fd, flags) {
        Ok(fd) => fd,
        Err(e) => {
            set_errno(e);
            -1
        }
    }
}
