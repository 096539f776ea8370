//! Linux's side of [`crate::sys`].

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::path::PathBuf;

/// `socketpair`'s type flags: Linux sets `CLOEXEC` atomically.
pub(crate) const SOCK_FLAGS: libc::c_int = libc::SOCK_CLOEXEC;

/// `waitpid` flags that reach any child, cloned or not.
pub(crate) const WAIT_ALL: libc::c_int = libc::__WALL;

/// `pipe2(flags)`: (read end, write end).
pub(crate) fn pipe2(flags: libc::c_int) -> std::io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0; 2];
    // SAFETY: fds has room for two descriptors.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), flags) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: fresh descriptors we own.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

/// A 1 MiB pipe buffer; failure only leaves the default size.
pub(crate) fn grow_pipe(fd: RawFd) {
    // SAFETY: fcntl on our pipe.
    unsafe { libc::fcntl(fd, libc::F_SETPIPE_SZ, 1 << 20) };
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

/// The child's stack: the entry makes system calls and little else.
const STACK: usize = 64 * 1024;

/// Starts the command's process as `posix_spawn` does: a child that shares
/// this process's memory until its exec (`CLONE_VM | CLONE_VFORK`), so no
/// page tables are copied for it, nor torn down again at its exec. This
/// thread is suspended until the child has exec'd or exited. The child's
/// descriptor table is its own copy, as after fork.
///
/// # Safety
/// `entry` must only make system calls on its own stack and never return
/// into this process's code (exec or `_exit`); `arg` stays valid until this
/// returns.
pub(crate) unsafe fn start(
    entry: extern "C" fn(*mut libc::c_void) -> libc::c_int,
    arg: *mut libc::c_void,
) -> Result<libc::pid_t, String> {
    let mut stack = vec![0u8; STACK];
    // The stack grows down from its (16-byte aligned) end.
    let top = (stack.as_mut_ptr() as usize + STACK) & !15;
    // SAFETY: a stack of our own for the child; the caller keeps `arg`
    // alive, and the call returns once the child has exec'd or exited.
    let pid = unsafe {
        libc::clone(
            entry,
            top as *mut libc::c_void,
            libc::CLONE_VM | libc::CLONE_VFORK | libc::SIGCHLD,
            arg,
        )
    };
    if pid < 0 {
        return Err(format!("clone: {}", std::io::Error::last_os_error()));
    }
    drop(stack);
    Ok(pid)
}

/// In the child: no set-id gain at exec (Landlock requires it). Err: errno.
pub(crate) fn no_new_privs() -> Result<(), i32> {
    // SAFETY: prctl on this process's own state.
    if unsafe { libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) } != 0 {
        return Err(super::errno());
    }
    Ok(())
}

/// The supervisor itself, before it starts the command: no longer
/// dumpable, so a process of the command (the same user) cannot attach to
/// it, read or write its memory or take its descriptors, even with
/// Landlock off (a process of ours it traces, the gate's, stays ours to
/// trace: the check is the target's). Returns this process as the guarded
/// tree's root, for the policy the command gets. Err: why not.
pub(crate) fn shield() -> Result<Option<fsguard_policy::process::ProcessId>, String> {
    // SAFETY: prctl on this process's own state.
    if unsafe { libc::prctl(libc::PR_SET_DUMPABLE, 0, 0, 0, 0) } != 0 {
        return Err(format!(
            "prctl(PR_SET_DUMPABLE): {}",
            std::io::Error::last_os_error()
        ));
    }
    let stat = std::fs::read("/proc/self/stat").map_err(|e| format!("/proc/self/stat: {e}"))?;
    fsguard_policy::process::parse_stat(&stat)
        .filter(|s| s.pid == std::process::id())
        .map(|s| Some(s.id()))
        .ok_or_else(|| "/proc/self/stat: not as expected".to_string())
}

/// In the child: asks to be traced by the parent (the handshake gate).
pub(crate) fn trace_me() -> bool {
    // SAFETY: PTRACE_TRACEME takes no pointers.
    unsafe { libc::ptrace(libc::PTRACE_TRACEME, 0, 0, 0) == 0 }
}

/// This program, as the library names it: what /proc/self/exe links to.
pub(crate) fn exe_path() -> std::io::Result<PathBuf> {
    std::fs::read_link("/proc/self/exe")
}

/// The path the kernel has for a descriptor we hold open: no symlinks.
pub(crate) fn fd_path(fd: RawFd) -> std::io::Result<PathBuf> {
    std::fs::read_link(format!("/proc/self/fd/{fd}"))
}

/// Whether the system strips the preload variable from some programs.
/// Linux's loader honours `LD_PRELOAD` for every dynamic program but
/// set-id ones (handled by the exec checks), so launches skip the look.
pub(crate) const STRIPS_PRELOAD: bool = false;

/// Nothing is stripped here (see [`STRIPS_PRELOAD`]).
pub(crate) fn dyld_stripped(_path: &std::path::Path) -> bool {
    false
}

/// `poll` on `pfd` for up to `ms` with the signal mask `mask` in place for
/// the wait only, atomically (`ppoll`): a signal pending before it wakes it.
pub(crate) fn poll_unmasked(pfd: &mut libc::pollfd, ms: i64, mask: &libc::sigset_t) {
    let ts = libc::timespec {
        tv_sec: ms / 1000,
        tv_nsec: (ms % 1000) * 1_000_000,
    };
    // SAFETY: one pollfd (a negative fd is ignored), a valid timespec and
    // signal mask.
    unsafe { libc::ppoll(pfd, 1, &ts, mask) };
}
