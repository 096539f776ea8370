//! What `fsguard run` needs from the system beyond POSIX, one module per
//! system: Linux (`linux.rs`) and macOS (`darwin.rs`, checked with
//! `cargo check`/`clippy` only: docs/macos.md). The rest of the CLI calls
//! these and no system-specific interface for them.
//!
//! Each module offers:
//! - `pipe2(flags)`: a pipe with `O_CLOEXEC`/`O_NONBLOCK` as asked;
//! - `socketpair_cloexec()`: the handshake socket pair, both ends `CLOEXEC`;
//! - `grow_pipe(fd)`: a larger pipe buffer where the system has one;
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
