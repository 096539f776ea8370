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

/// Keeps the calling thread's `errno` across the library's own system
/// calls, put back when dropped, where those calls go through libc and set
/// it (Darwin: rustix's libc backend, libSystem). On Linux rustix makes raw
/// system calls, which never touch `errno`, and this is nothing at all.
pub struct Kept {
    #[cfg(not(target_os = "linux"))]
    saved: c_int,
}

impl Kept {
    /// Notes the `errno` to put back.
    #[inline(always)]
    pub fn new() -> Kept {
        Kept {
            #[cfg(not(target_os = "linux"))]
            saved: errno(),
        }
    }
}

#[cfg(not(target_os = "linux"))]
impl Drop for Kept {
    #[inline(always)]
    fn drop(&mut self) {
        set_errno(self.saved);
    }
}
