//! The calling thread's `errno`, read and written by every module.
//!
//! A leaf module: the resolver and the guard both need it, and neither
//! should import the other for it.

use libc::c_int;

/// The calling thread's `errno`.
#[inline]
pub fn errno() -> c_int {
    // SAFETY: errno_slot is this thread's errno slot, valid while it runs.
    unsafe { *crate::sys::errno_slot() }
}

/// Sets the calling thread's `errno`.
#[inline]
pub fn set_errno(e: c_int) {
    // SAFETY: as above.
    unsafe { *crate::sys::errno_slot() = e }
}
