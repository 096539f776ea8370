//! macOS's side of [`crate::sys`]: checked by `cargo check`/`clippy` for
//! both Darwin targets, not run here (docs/macos.md).

use std::ffi::CString;
use std::os::fd::{FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// `socketpair`'s type flags: Darwin has no `SOCK_CLOEXEC`, set after.
pub(crate) const SOCK_FLAGS: libc::c_int = 0;

/// `waitpid` flags: Darwin has no cloned children to ask for.
pub(crate) const WAIT_ALL: libc::c_int = 0;

/// `pipe` with `O_CLOEXEC`/`O_NONBLOCK` set after (Darwin has no `pipe2`;
/// the CLI is single-threaded here, so no exec can slip in between).
pub(crate) fn pipe2(flags: libc::c_int) -> std::io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0; 2];
    // SAFETY: fds has room for two descriptors.
    if unsafe { libc::pipe(fds.as_mut_ptr()) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: fresh descriptors we own.
    let pair = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    for fd in fds {
        if flags & libc::O_CLOEXEC != 0 {
            super::cloexec(fd)?;
        }
        if flags & libc::O_NONBLOCK != 0 {
            // SAFETY: fcntl on our pipe.
            unsafe {
                let fl = libc::fcntl(fd, libc::F_GETFL);
                libc::fcntl(fd, libc::F_SETFL, fl | libc::O_NONBLOCK);
            }
        }
    }
    Ok(pair)
}

/// The policy handoff the library checks for on Darwin (its
/// `sys::read_frozen`): a read-only fd to an unlinked POSIX shared memory
/// object created owner-read-only, which no process but root can write.
/// The library's own file, included as is, makes it; the CLI never reads
/// one back.
#[path = "../../../src/sys/frozen_shm.rs"]
#[allow(dead_code)] // `read` is the library's
mod frozen_shm;

/// The frozen policy in a [`frozen_shm`] object, `CLOEXEC` until the child
/// makes it inheritable.
pub(crate) fn sealed_policy(frozen: &str) -> Result<OwnedFd, String> {
    frozen_shm::create(frozen.as_bytes()).map_err(|e| {
        format!(
            "cannot make the policy object for the library (POSIX shared memory): {}",
            std::io::Error::from_raw_os_error(e)
        )
    })
}

/// Starts the command's process with `fork` (Darwin has no `clone`), and
/// runs `entry(arg)` in the child.
///
/// # Safety
/// `entry` must only make async-signal-safe calls and never return into
/// this process's code (exec or `_exit`).
pub(crate) unsafe fn start(
    entry: extern "C" fn(*mut libc::c_void) -> libc::c_int,
    arg: *mut libc::c_void,
) -> Result<libc::pid_t, String> {
    // SAFETY: the child only runs `entry`, which the caller vouches for.
    match unsafe { libc::fork() } {
        -1 => Err(format!("fork: {}", std::io::Error::last_os_error())),
        0 => {
            entry(arg);
            // SAFETY: `entry` does not return; if it did, leave at once.
            unsafe { libc::_exit(127) }
        }
        pid => Ok(pid),
    }
}

/// Darwin has no `no_new_privs`: set-id bits are honoured at exec (and
/// dyld then ignores `DYLD_INSERT_LIBRARIES` anyway).
pub(crate) fn no_new_privs() -> Result<(), i32> {
    Ok(())
}

/// Nothing to shield on Darwin: the macOS library has no guarded-tree
/// checks (docs/macos.md), so the tree has no root to name.
pub(crate) fn shield() -> Result<Option<fsguard_policy::process::ProcessId>, String> {
    Ok(None)
}

/// Darwin's ptrace has no system-call stops: no gate, never traced.
pub(crate) fn trace_me() -> bool {
    false
}

/// This program's path (`_NSGetExecutablePath`, resolved).
pub(crate) fn exe_path() -> std::io::Result<PathBuf> {
    std::env::current_exe().and_then(std::fs::canonicalize)
}

/// The path the kernel has for a descriptor we hold open (`F_GETPATH`).
pub(crate) fn fd_path(fd: RawFd) -> std::io::Result<PathBuf> {
    let mut buf = [0u8; libc::PATH_MAX as usize];
    // SAFETY: F_GETPATH writes at most MAXPATHLEN (PATH_MAX) bytes.
    if unsafe { libc::fcntl(fd, libc::F_GETPATH, buf.as_mut_ptr()) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    let len = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    Ok(PathBuf::from(std::ffi::OsStr::from_bytes(&buf[..len])))
}

/// dyld strips `DYLD_INSERT_LIBRARIES` from protected programs.
pub(crate) const STRIPS_PRELOAD: bool = true;

/// Whether dyld strips `DYLD_INSERT_LIBRARIES` from `path` (canonical):
/// System Integrity Protection guards it by directory or by its file flag
/// (`fsguard_policy::program::sip_protected`).
pub(crate) fn dyld_stripped(path: &Path) -> bool {
    let Ok(c) = CString::new(path.as_os_str().as_bytes()) else {
        return false;
    };
    // SAFETY: an all-zero `stat` is a valid value to be overwritten.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: a C string and a `stat` of our own.
    let flags = if unsafe { libc::stat(c.as_ptr(), &mut st) } == 0 {
        st.st_flags
    } else {
        0
    };
    fsguard_policy::program::sip_protected(c.as_bytes(), flags)
}

/// The longest sleep between two looks, since a signal that lands between
/// the unmask and `poll` does not wake it.
const POLL_SLICE_MS: i64 = 50;

/// `poll` on `pfds` for up to `ms` with the signal mask `mask` in place
/// for the wait. Darwin has no `ppoll` (and its `pselect` is not atomic):
/// the mask is set, `poll` sleeps at most [`POLL_SLICE_MS`], the mask is
/// put back, so a SIGCHLD that slips in between is seen that much later.
pub(crate) fn poll_unmasked(pfds: &mut [libc::pollfd], ms: i64, mask: &libc::sigset_t) {
    let ms = libc::c_int::try_from(ms.clamp(0, POLL_SLICE_MS)).unwrap_or(0);
    // SAFETY: a zeroed sigset_t is overwritten by pthread_sigmask.
    let mut old: libc::sigset_t = unsafe { std::mem::zeroed() };
    // SAFETY: valid masks and `pfds.len()` pollfds (a negative fd is
    // ignored).
    unsafe {
        libc::pthread_sigmask(libc::SIG_SETMASK, mask, &mut old);
        libc::poll(pfds.as_mut_ptr(), pfds.len() as libc::nfds_t, ms);
        libc::pthread_sigmask(libc::SIG_SETMASK, &old, std::ptr::null_mut());
    }
}

/// The report channel's socket type: Darwin has no `SOCK_SEQPACKET` for
/// local sockets; datagrams keep a message whole too.
pub(crate) const CHANNEL_TYPE: libc::c_int = libc::SOCK_DGRAM;

/// Darwin gets no listening socket: a process that lost its channel is off
/// the record (docs/macos.md).
pub(crate) const CHANNEL_LISTENS: bool = false;

/// Darwin gives no sender per message: nothing to ask for.
pub(crate) fn pass_credentials(_fd: RawFd) -> std::io::Result<()> {
    Ok(())
}

/// A send on a socket whose reader is gone fails with `EPIPE` rather than
/// raise `SIGPIPE` in the guarded process (Darwin has no `MSG_NOSIGNAL`).
pub(crate) fn no_sigpipe(fd: RawFd) {
    let on: libc::c_int = 1;
    // SAFETY: setsockopt with an int of the right size on our socket.
    unsafe {
        libc::setsockopt(
            fd,
            libc::SOL_SOCKET,
            libc::SO_NOSIGPIPE,
            (&on as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
}

/// One message received, without blocking.
pub(crate) enum Received {
    /// Nothing waiting.
    Empty,
    /// Every sender has closed the connection.
    Closed,
    /// A message of `len` bytes (`cut`: longer than the buffer); Darwin
    /// does not say who sent it.
    Message {
        len: usize,
        cut: bool,
        pid: Option<u32>,
    },
}

/// Receives one message into `buf`.
pub(crate) fn recv_message(fd: RawFd, buf: &mut [u8]) -> std::io::Result<Received> {
    // SAFETY: reads into our buffer.
    let n = unsafe {
        libc::recv(
            fd,
            buf.as_mut_ptr().cast(),
            buf.len(),
            libc::MSG_DONTWAIT | libc::MSG_TRUNC,
        )
    };
    if n < 0 {
        let e = std::io::Error::last_os_error();
        return match e.raw_os_error() {
            Some(libc::EAGAIN) => Ok(Received::Empty),
            Some(libc::ECONNRESET) => Ok(Received::Closed),
            _ => Err(e),
        };
    }
    let n = n as usize;
    Ok(Received::Message {
        len: n.min(buf.len()),
        cut: n > buf.len(),
        pid: None,
    })
}
