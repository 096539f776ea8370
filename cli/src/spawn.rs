//! Setting up the command's process: the descriptors it inherits, the
//! sealed policy, and the forked child's steps before exec
//! (`no_new_privs`, Landlock, ptrace, exec), reported on a pipe.

use std::ffi::{CString, OsString};
use std::os::fd::{OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use crate::{landlock, sys};

/// Makes a C string; fails on an interior NUL.
pub(crate) fn cstr(b: &[u8]) -> Result<CString, String> {
    CString::new(b).map_err(|_| format!("{}: contains a NUL byte", String::from_utf8_lossy(b)))
}

/// The command's environment so far: ours with the library preloaded
/// first, without `FSGUARD_*` and `TMPDIR` (the supervisor sets its own).
pub(crate) fn preload_env(lib: &Path) -> Vec<(OsString, OsString)> {
    let preload_var = if cfg!(target_os = "macos") {
        "DYLD_INSERT_LIBRARIES"
    } else {
        "LD_PRELOAD"
    };
    let mut preload = OsString::from(lib.as_os_str());
    if let Some(old) = std::env::var_os(preload_var).filter(|v| !v.is_empty()) {
        preload.push(":");
        preload.push(old);
    }
    let mut env: Vec<(OsString, OsString)> = std::env::vars_os()
        .filter(|(k, _)| {
            let k = k.as_bytes();
            !k.starts_with(b"FSGUARD_") && k != preload_var.as_bytes() && k != b"TMPDIR"
        })
        .collect();
    env.push((preload_var.into(), preload));
    env
}

/// A NULL-terminated array of pointers into `strings`, for execve.
pub(crate) fn pointers(strings: &[CString]) -> Vec<*const libc::c_char> {
    strings
        .iter()
        .map(|c| c.as_ptr())
        .chain([std::ptr::null()])
        .collect()
}

/// A pipe: (read end, write end).
pub(crate) fn pipe(flags: libc::c_int) -> Result<(OwnedFd, OwnedFd), String> {
    sys::pipe2(flags).map_err(|e| format!("pipe: {e}"))
}

pub(crate) use sys::sealed_policy;

/// Reads the handshake byte from `hs_parent`: true once the library wrote
/// it, false on EOF (the command went away without loading it) or error.
pub(crate) fn handshake_byte(hs_parent: OwnedFd) -> bool {
    let mut b = [0u8; 1];
    let mut f = std::fs::File::from(hs_parent);
    // A signal interrupts the read (no SA_RESTART): retry.
    loop {
        match std::io::Read::read(&mut f, &mut b) {
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            r => break matches!(r, Ok(1)),
        }
    }
}

/// What the child reports on the error pipe before exec.
pub(crate) const MSG_TRACED: u8 = b'T';
pub(crate) const MSG_UNTRACED: u8 = b'U';
pub(crate) const MSG_EXEC: u8 = b'E';
pub(crate) const MSG_LANDLOCK: u8 = b'L';

/// Waits for the child `pid` to end.
pub(crate) fn reap(pid: libc::pid_t) {
    let mut st = 0;
    // SAFETY: our child; retried on EINTR.
    while unsafe { libc::waitpid(pid, &mut st, sys::WAIT_ALL) } < 0
        && std::io::Error::last_os_error().raw_os_error() == Some(libc::EINTR)
    {}
}

/// What the command's process is started with ([`child`]'s arguments).
pub(crate) struct Start<'a> {
    pub(crate) path: &'a CString,
    pub(crate) argv: &'a [*const libc::c_char],
    pub(crate) envp: &'a [*const libc::c_char],
    pub(crate) keep: [RawFd; 3],
    pub(crate) err: RawFd,
    pub(crate) ruleset: Option<landlock::Rules>,
    pub(crate) required: bool,
    pub(crate) trace: bool,
    pub(crate) cache: Option<&'a crate::presets::CacheDirs>,
}

/// Starts the command's process ([`sys::start`]: on Linux a child that
/// shares this process's memory until its exec, this thread suspended
/// meanwhile; on macOS a fork) running [`child`].
pub(crate) fn spawn(start: Start) -> Result<libc::pid_t, String> {
    extern "C" fn entry(arg: *mut libc::c_void) -> libc::c_int {
        // SAFETY: `arg` is the `Start` below, alive and unchanged while the
        // parent is suspended (Linux) or in the child's own copy (fork).
        let s = unsafe { &*(arg as *const Start) };
        // SAFETY: a bitwise copy of the ruleset, consumed here. Linux: a
        // descriptor and plain flags, no heap memory; it closes the
        // descriptor in this child's table, the parent drops its own.
        // macOS: the profile text in the fork's own copy of memory.
        let ruleset = unsafe { std::ptr::read(&s.ruleset) };
        // SAFETY: the child before exec; `child` touches no memory but its
        // own stack, and the parent waits.
        unsafe {
            child(
                s.path, s.argv, s.envp, s.keep, s.err, ruleset, s.required, s.trace, s.cache,
            )
        }
    }
    // SAFETY: `entry` only runs `child` (system calls, then exec or
    // `_exit`), and `start` outlives the call.
    unsafe { sys::start(entry, &start as *const Start as *mut libc::c_void) }
}

/// The child: runs only syscalls until exec. Reports failures on
/// `err` as a tag byte and an errno.
///
/// # Safety
/// Only in the child ([`spawn`]), before anything else: it allocates and
/// writes nothing outside its own stack (the memory is the parent's), and
/// `argv` and `envp` must be NULL-terminated arrays of C strings.
#[allow(clippy::too_many_arguments)]
unsafe fn child(
    path: &CString,
    argv: &[*const libc::c_char],
    envp: &[*const libc::c_char],
    keep: [RawFd; 3],
    err: RawFd,
    ruleset: Option<landlock::Rules>,
    required: bool,
    trace: bool,
    cache: Option<&crate::presets::CacheDirs>,
) -> ! {
    let fail = |tag: u8, errno: i32| -> ! {
        let mut msg = [0u8; 5];
        msg[0] = tag;
        msg[1..].copy_from_slice(&errno.to_ne_bytes());
        // SAFETY: writes to our pipe, then leaves without running anything.
        unsafe {
            libc::write(err, msg.as_ptr().cast(), msg.len());
            libc::_exit(127)
        }
    };
    // SAFETY: syscalls on fds and process state of this child.
    unsafe {
        for fd in keep {
            libc::fcntl(fd, libc::F_SETFD, 0);
        }
    }
    if let Err(e) = sys::no_new_privs() {
        fail(MSG_LANDLOCK, e);
    }
    if let Some(rs) = ruleset {
        if let Err(e) = landlock::restrict(rs, err, required) {
            fail(MSG_LANDLOCK, e)
        }
    }
    // SAFETY: as above.
    unsafe {
        let tag = if trace && sys::trace_me() {
            MSG_TRACED
        } else {
            MSG_UNTRACED
        };
        // No gate will wait for the supervisor's copy: made here, now.
        if let (MSG_UNTRACED, Some(c)) = (tag, cache) {
            c.make();
        }
        libc::write(err, [tag].as_ptr().cast(), 1);
        libc::execve(path.as_ptr(), argv.as_ptr(), envp.as_ptr());
        fail(MSG_EXEC, sys::errno());
    }
}
