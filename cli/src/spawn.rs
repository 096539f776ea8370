//! Setting up the command's process: the descriptors it inherits, the
//! sealed policy, and the forked child's steps before exec
//! (`no_new_privs`, Landlock, ptrace, exec), reported on a pipe.

use std::ffi::{CString, OsString};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use crate::landlock;

/// Makes a C string; fails on an interior NUL.
pub(crate) fn cstr(b: &[u8]) -> Result<CString, String> {
    CString::new(b).map_err(|_| format!("{}: contains a NUL byte", String::from_utf8_lossy(b)))
}

/// The report pipe, non-blocking at both ends: the library must never
/// block on a full pipe, nor the supervisor on an empty one.
pub(crate) fn report_pipe() -> Result<(OwnedFd, OwnedFd), String> {
    let (r, w) = pipe(libc::O_CLOEXEC)?;
    set_nonblocking(r.as_raw_fd());
    set_nonblocking(w.as_raw_fd());
    // SAFETY: fcntl on our pipe; failure only leaves the default size.
    unsafe { libc::fcntl(w.as_raw_fd(), libc::F_SETPIPE_SZ, 1 << 20) };
    Ok((r, w))
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
    let mut fds = [0; 2];
    // SAFETY: fds has room for two descriptors.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), flags) } != 0 {
        return Err(format!("pipe: {}", std::io::Error::last_os_error()));
    }
    // SAFETY: fresh descriptors we own.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

/// A memfd holding `frozen`, sealed against any change (the library refuses
/// an unsealed one), `CLOEXEC` until the child makes it inheritable.
pub(crate) fn sealed_policy(frozen: &str) -> Result<OwnedFd, String> {
    let err = |what: &str| format!("{what}: {}", std::io::Error::last_os_error());
    // SAFETY: a C string literal; the fd is ours.
    let fd = unsafe {
        libc::memfd_create(
            c"fsguard-policy".as_ptr(),
            libc::MFD_CLOEXEC | libc::MFD_ALLOW_SEALING,
        )
    };
    if fd < 0 {
        return Err(err("memfd_create"));
    }
    // SAFETY: fresh and ours.
    let fd = unsafe { OwnedFd::from_raw_fd(fd) };
    let mut f = std::fs::File::from(fd);
    std::io::Write::write_all(&mut f, frozen.as_bytes()).map_err(|e| e.to_string())?;
    let seals = libc::F_SEAL_WRITE | libc::F_SEAL_GROW | libc::F_SEAL_SHRINK | libc::F_SEAL_SEAL;
    // SAFETY: fcntl on our memfd.
    if unsafe { libc::fcntl(f.as_raw_fd(), libc::F_ADD_SEALS, seals) } != 0 {
        return Err(err("sealing the policy memfd"));
    }
    Ok(f.into())
}

/// Sets `O_NONBLOCK` on `fd`.
pub(crate) fn set_nonblocking(fd: RawFd) {
    // SAFETY: fcntl on our own fd.
    unsafe {
        let fl = libc::fcntl(fd, libc::F_GETFL);
        libc::fcntl(fd, libc::F_SETFL, fl | libc::O_NONBLOCK);
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
    while unsafe { libc::waitpid(pid, &mut st, libc::__WALL) } < 0
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
    pub(crate) ruleset: Option<::landlock::RulesetCreated>,
    pub(crate) required: bool,
    pub(crate) trace: bool,
    pub(crate) cache: Option<&'a crate::presets::CacheDirs>,
}

/// The child's stack: [`child`] makes system calls and little else.
const STACK: usize = 64 * 1024;

/// Starts the command's process as `posix_spawn` does: a child that shares
/// this process's memory until its exec (`CLONE_VM | CLONE_VFORK`), so no
/// page tables are copied for it, nor torn down again at its exec. This
/// thread is suspended until the child has exec'd or exited. The child's
/// descriptor table is its own copy, as after fork.
pub(crate) fn spawn(start: Start) -> Result<libc::pid_t, String> {
    extern "C" fn entry(arg: *mut libc::c_void) -> libc::c_int {
        // SAFETY: `arg` is the `Start` below, alive and unchanged while the
        // parent is suspended (CLONE_VFORK).
        let s = unsafe { &*(arg as *const Start) };
        // SAFETY: a bitwise copy of the ruleset (a descriptor and plain
        // flags, no heap memory): it is consumed here and closes the
        // descriptor in this child's table; the parent drops its own.
        let ruleset = unsafe { std::ptr::read(&s.ruleset) };
        // SAFETY: the child before exec; `child` touches no memory but its
        // own stack, and the parent waits.
        unsafe {
            child(
                s.path, s.argv, s.envp, s.keep, s.err, ruleset, s.required, s.trace, s.cache,
            )
        }
    }
    let mut stack = vec![0u8; STACK];
    // The stack grows down from its (16-byte aligned) end.
    let top = (stack.as_mut_ptr() as usize + STACK) & !15;
    // SAFETY: a stack of our own for the child, and `start` outlives it
    // (the call returns once the child has exec'd or exited).
    let pid = unsafe {
        libc::clone(
            entry,
            top as *mut libc::c_void,
            libc::CLONE_VM | libc::CLONE_VFORK | libc::SIGCHLD,
            &start as *const Start as *mut libc::c_void,
        )
    };
    if pid < 0 {
        return Err(format!("clone: {}", std::io::Error::last_os_error()));
    }
    drop(stack);
    Ok(pid)
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
    ruleset: Option<::landlock::RulesetCreated>,
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
        if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 {
            fail(MSG_LANDLOCK, *libc::__errno_location());
        }
    }
    if let Some(rs) = ruleset {
        match rs.restrict_self() {
            Ok(st) => {
                // SAFETY: writes one byte to our pipe.
                unsafe {
                    libc::write(err, [landlock::status_byte(&st.ruleset)].as_ptr().cast(), 1)
                };
                if required && st.ruleset != ::landlock::RulesetStatus::FullyEnforced {
                    fail(MSG_LANDLOCK, libc::ENOSYS)
                }
            }
            Err(_) => fail(MSG_LANDLOCK, libc::EPERM),
        }
    }
    // SAFETY: as above.
    unsafe {
        let tag = if trace && libc::ptrace(libc::PTRACE_TRACEME, 0, 0, 0) == 0 {
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
        fail(MSG_EXEC, *libc::__errno_location());
    }
}
