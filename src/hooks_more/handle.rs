//! open_by_handle_at: a file handle names a file without its path, so the
//! object opened is checked after the call.

use std::ffi::c_int;

use crate::guard::set_errno;

/// open_by_handle_at's `post` step: a failed call is returned as it is; an
/// fd it opened is checked (`check`, the row's) and closed again if
/// refused.
pub(super) fn checked_fd(fd: c_int, check: impl FnOnce() -> Result<(), c_int>) -> c_int {
    if fd < 0 {
        return fd;
    }
    match check() {
        Ok(()) => fd,
        Err(e) => {
            // SAFETY: the fd the real call just returned to us.
            unsafe { libc::close(fd) };
            set_errno(e);
            -1
        }
    }
}
