//! system, popen, pclose on macOS: the work behind their rows in
//! [`super::EXEC_TABLE`].
//!
//! Both run `/bin/sh`, which System Integrity Protection guards: dyld
//! strips `DYLD_INSERT_LIBRARIES` from it, so the shell, and every program
//! it starts, would run without the library. The row's check (the exec
//! check of `/bin/sh`, [`super::exec_check`]) finds that and refuses the
//! call, EACCES with a trace line `rule=unguarded_exec:sip` naming
//! `/bin/sh` and the call, unless `unguarded_exec = allow`: then libc's own
//! `system` or `popen` runs, unguarded as the setting says. (Running the
//! command without a shell, or with a shell installed outside the system
//! directories, so that it stays guarded, is work left: docs/macos.md.)

use std::ffi::{c_char, c_int};

use libc::FILE;

use crate::guard::set_errno;
use crate::real::real;

type SystemFn = unsafe extern "C" fn(*const c_char) -> c_int;
type PopenFn = unsafe extern "C" fn(*const c_char, *const c_char) -> *mut FILE;
type PcloseFn = unsafe extern "C" fn(*mut FILE) -> c_int;

/// A row's check of the shell (`/bin/sh`) it runs.
pub(crate) type ShellCheck = fn() -> Result<(), c_int>;

/// system(3): the shell checked, then libc's system.
///
/// # Safety
/// `cmd` NULL or a C string.
pub(crate) unsafe fn run_system(check: ShellCheck, cmd: *const c_char) -> c_int {
    // `system(NULL)` only asks whether a shell exists: nothing runs.
    if !cmd.is_null() {
        if let Err(e) = check() {
            set_errno(e);
            return -1;
        }
    }
    let Some(real) = real!("system", SystemFn) else {
        set_errno(libc::ENOSYS);
        return -1;
    };
    // SAFETY: the caller's argument.
    unsafe { real(cmd) }
}

/// popen(3): the shell checked, then libc's popen.
///
/// # Safety
/// `cmd` a C string; `mode` NULL or a C string.
pub(crate) unsafe fn run_popen(
    check: ShellCheck,
    cmd: *const c_char,
    mode: *const c_char,
) -> *mut FILE {
    if let Err(e) = check() {
        set_errno(e);
        return std::ptr::null_mut();
    }
    let Some(real) = real!("popen", PopenFn) else {
        set_errno(libc::ENOSYS);
        return std::ptr::null_mut();
    };
    // SAFETY: the caller's arguments.
    unsafe { real(cmd, mode) }
}

/// pclose(3): libc's (every stream is libc's popen's here).
///
/// # Safety
/// `fp` a stream from `popen`.
pub(super) unsafe fn close_stream(fp: *mut FILE) -> c_int {
    let Some(real) = real!("pclose", PcloseFn) else {
        set_errno(libc::ENOSYS);
        return -1;
    };
    // SAFETY: the caller's stream.
    unsafe { real(fp) }
}
