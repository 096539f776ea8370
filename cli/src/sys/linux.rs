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

/// `poll` on `pfds` for up to `ms` with the signal mask `mask` in place
/// for the wait only, atomically (`ppoll`): a signal pending before it
/// wakes it.
pub(crate) fn poll_unmasked(pfds: &mut [libc::pollfd], ms: i64, mask: &libc::sigset_t) {
    let ts = libc::timespec {
        tv_sec: ms / 1000,
        tv_nsec: (ms % 1000) * 1_000_000,
    };
    // SAFETY: `pfds.len()` pollfds (a negative fd is ignored), a valid
    // timespec and signal mask.
    unsafe { libc::ppoll(pfds.as_mut_ptr(), pfds.len() as libc::nfds_t, &ts, mask) };
}

/// The report channel's socket type: one message per send, kept whole,
/// connections accepted from a listening socket.
pub(crate) const CHANNEL_TYPE: libc::c_int = libc::SOCK_SEQPACKET;

/// Whether a process that lost its channel can connect to a listening
/// socket again.
pub(crate) const CHANNEL_LISTENS: bool = true;

/// Asks the kernel to give each message's sender (`SCM_CREDENTIALS`); on a
/// listening socket, for every connection it accepts.
pub(crate) fn pass_credentials(fd: RawFd) -> std::io::Result<()> {
    let on: libc::c_int = 1;
    // SAFETY: setsockopt with an int of the right size on our socket.
    let r = unsafe {
        libc::setsockopt(
            fd,
            libc::SOL_SOCKET,
            libc::SO_PASSCRED,
            (&on as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    if r != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// Nothing to do: Linux's sends say `MSG_NOSIGNAL` themselves.
pub(crate) fn no_sigpipe(_fd: RawFd) {}

/// One message received, without blocking.
pub(crate) enum Received {
    /// Nothing waiting.
    Empty,
    /// Every sender has closed the connection.
    Closed,
    /// A message of `len` bytes (`cut`: longer than the buffer), from
    /// process `pid` as the kernel gives it.
    Message {
        len: usize,
        cut: bool,
        pid: Option<u32>,
    },
}

/// Receives one message into `buf`. Descriptors a sender passed along are
/// closed at once: nothing a guarded process sends can fill our table.
pub(crate) fn recv_message(fd: RawFd, buf: &mut [u8]) -> std::io::Result<Received> {
    // Room for the credentials and a few descriptors; more are dropped by
    // the kernel (MSG_CTRUNC).
    let mut control = [0u64; 32];
    let mut iov = libc::iovec {
        iov_base: buf.as_mut_ptr().cast(),
        iov_len: buf.len(),
    };
    // SAFETY: a zeroed msghdr is valid; its pointers are set below.
    let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
    msg.msg_iov = &mut iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control.as_mut_ptr().cast();
    msg.msg_controllen = std::mem::size_of_val(&control) as _;
    // SAFETY: msg points at our buffers, valid for the call.
    let n = unsafe { libc::recvmsg(fd, &mut msg, libc::MSG_DONTWAIT | libc::MSG_CMSG_CLOEXEC) };
    if n < 0 {
        let e = std::io::Error::last_os_error();
        return match e.raw_os_error() {
            Some(libc::EAGAIN) => Ok(Received::Empty),
            Some(libc::ECONNRESET) => Ok(Received::Closed),
            _ => Err(e),
        };
    }
    let mut pid = None;
    // SAFETY: walks the control messages the kernel wrote into `control`,
    // within `msg_controllen`, with the libc macros.
    unsafe {
        let mut c = libc::CMSG_FIRSTHDR(&msg);
        while !c.is_null() {
            let data = libc::CMSG_DATA(c);
            let len = (*c).cmsg_len as usize - libc::CMSG_LEN(0) as usize;
            match ((*c).cmsg_level, (*c).cmsg_type) {
                (libc::SOL_SOCKET, libc::SCM_CREDENTIALS)
                    if len >= std::mem::size_of::<libc::ucred>() =>
                {
                    let cred = std::ptr::read_unaligned(data.cast::<libc::ucred>());
                    pid = u32::try_from(cred.pid).ok();
                }
                (libc::SOL_SOCKET, libc::SCM_RIGHTS) => {
                    for i in 0..len / std::mem::size_of::<libc::c_int>() {
                        let fd = std::ptr::read_unaligned(data.cast::<libc::c_int>().add(i));
                        libc::close(fd);
                    }
                }
                _ => {}
            }
            c = libc::CMSG_NXTHDR(&msg, c);
        }
    }
    // A message always carries its sender (SO_PASSCRED); an end of file
    // carries nothing.
    if n == 0 && pid.is_none() {
        return Ok(Received::Closed);
    }
    Ok(Received::Message {
        len: n as usize,
        cut: msg.msg_flags & libc::MSG_TRUNC != 0,
        pid,
    })
}
