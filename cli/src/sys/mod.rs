//! What `fsguard run` needs from the system beyond POSIX, one module per
//! system: Linux (`linux.rs`) and macOS (`darwin.rs`, checked with
//! `cargo check`/`clippy` only: docs/macos.md). The rest of the CLI calls
//! these and no system-specific interface for them.
//!
//! Each module offers:
//! - `pipe2(flags)`: a pipe with `O_CLOEXEC`/`O_NONBLOCK` as asked;
//! - `socketpair_cloexec()`: the handshake socket pair, both ends `CLOEXEC`;
//! - the report channel: `CHANNEL_TYPE`, `CHANNEL_LISTENS`,
//!   `pass_credentials(fd)`, `no_sigpipe(fd)`, `recv_message(fd, buf)`,
//!   `raise_nofile()`;
//! - `sealed_policy(frozen)`: the policy as the library reads it;
//! - `start(entry, arg)`: the command's process, `entry(arg)` run in it;
//! - `shield()`: the supervisor made non-dumpable, named as the root of
//!   the guarded tree;
//! - `no_new_privs()`, `trace_me()`: the child's steps before exec;
//! - `WAIT_ALL`: `waitpid`'s flags for any child of ours;
//! - `exe_path()`, `fd_path(fd)`: names the kernel gives;
//! - `STRIPS_PRELOAD`, `dyld_stripped(path)`: whether the system strips the
//!   preload variable from some programs, and from that one (macOS's System
//!   Integrity Protection).

#[cfg(target_os = "linux")]
mod linux;
#[cfg(target_os = "linux")]
pub(crate) use linux::*;

#[cfg(target_os = "macos")]
mod darwin;
#[cfg(target_os = "macos")]
pub(crate) use darwin::*;

/// The calling thread's `errno`.
pub(crate) fn errno() -> i32 {
    std::io::Error::last_os_error().raw_os_error().unwrap_or(0)
}

/// Raises the soft limit of open files toward the hard one (at most 65536),
/// for the report channel's connections: in the supervisor only, after the
/// command was started with the limit it was given.
pub(crate) fn raise_nofile() {
    // SAFETY: a zeroed rlimit is filled by getrlimit.
    let mut r: libc::rlimit = unsafe { std::mem::zeroed() };
    // SAFETY: getrlimit/setrlimit on our own process with our struct.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut r) == 0 {
            let want = r.rlim_max.min(1 << 16);
            if want > r.rlim_cur {
                r.rlim_cur = want;
                libc::setrlimit(libc::RLIMIT_NOFILE, &r);
            }
        }
    }
}

/// A pair of connected stream sockets, both `CLOEXEC`.
pub(crate) fn socketpair_cloexec() -> std::io::Result<[std::os::fd::OwnedFd; 2]> {
    use std::os::fd::FromRawFd;
    let mut sp = [0; 2];
    // SAFETY: sp has room for two descriptors.
    if unsafe {
        libc::socketpair(
            libc::AF_UNIX,
            libc::SOCK_STREAM | SOCK_FLAGS,
            0,
            sp.as_mut_ptr(),
        )
    } != 0
    {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: fresh descriptors we own.
    let fds = unsafe { [0, 1].map(|i| std::os::fd::OwnedFd::from_raw_fd(sp[i])) };
    if SOCK_FLAGS == 0 {
        for fd in &fds {
            cloexec(std::os::fd::AsRawFd::as_raw_fd(fd))?;
        }
    }
    Ok(fds)
}

/// Sets `FD_CLOEXEC` on `fd`.
fn cloexec(fd: std::os::fd::RawFd) -> std::io::Result<()> {
    // SAFETY: fcntl on a descriptor of ours.
    if unsafe { libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}
