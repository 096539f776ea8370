//! The Linux backend of the platform seam: glibc's errno slot,
//! `dlsym(RTLD_NEXT)`, `/proc/self/fd`, `openat2` and `O_PATH`,
//! `LD_PRELOAD`, sealed memfds.
//!
//! System calls go through rustix's raw backend, never through libc, so
//! nothing here recurses into the library's own hooks or touches errno.

use std::ffi::{c_int, c_void, CStr};
use std::mem::MaybeUninit;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::sync::atomic::{AtomicBool, Ordering};

use rustix::fs::{MemfdFlags, Mode, OFlags, ResolveFlags, SealFlags, CWD};
use rustix::io::Errno;

/// The calling thread's `errno` slot (glibc's `__errno_location`).
#[inline]
pub fn errno_slot() -> *mut c_int {
    // SAFETY: __errno_location has no preconditions; it returns this
    // thread's slot, valid for the thread's life.
    unsafe { libc::__errno_location() }
}

/// The next definition of `name` after this library in the loader's search
/// order (`dlsym(RTLD_NEXT)`); null if there is none. The library overrides
/// libc's symbols by being loaded first (`LD_PRELOAD`), so the next one is
/// the real function.
#[inline]
pub fn next_symbol(name: &CStr) -> *mut c_void {
    // SAFETY: a NUL-terminated symbol name; dlsym is thread-safe.
    unsafe { libc::dlsym(libc::RTLD_NEXT, name.as_ptr()) }
}

/// A directory whose entry `N` reaches the object open as fd `N` (a magic
/// link: followed even through a symlink or a deleted name).
pub(super) const FD_DIR: &[u8] = b"/proc/self/fd/";

/// Room [`super::fd_link`] needs: `/proc/self/fd/` and ten digits.
pub const FD_LINK_MAX: usize = 24;

/// The kernel's name for `fd`, read into `buf` (`readlink` of its
/// `/proc/self/fd` entry); returns its length, which equals `buf`'s when
/// the name may have been cut short. ENOENT or EBADF: a closed fd, or no
/// /proc at all.
#[inline]
pub fn fd_name(fd: BorrowedFd<'_>, buf: &mut [MaybeUninit<u8>]) -> Result<usize, Errno> {
    use std::os::fd::AsRawFd;
    let mut link = [0u8; 32];
    super::fd_link(fd.as_raw_fd(), &mut link);
    let c = CStr::from_bytes_until_nul(&link).map_err(|_| Errno::INVAL)?;
    rustix::fs::readlinkat_raw(CWD, c, buf).map(|(init, _)| init.len())
}

/// The flags of an fd that only names an object (`O_PATH`): no read, no
/// write, no side effect of opening it (a fifo, a tty), no permission
/// beyond search.
pub const REF: OFlags = OFlags::PATH.union(OFlags::CLOEXEC);

/// `path` relative to `d` opened as a [`REF`], with `extra` flags
/// (`O_DIRECTORY`, `O_NOFOLLOW`).
#[inline]
pub fn open_ref(d: BorrowedFd<'_>, path: &CStr, extra: OFlags) -> Result<OwnedFd, Errno> {
    rustix::fs::openat(d, path, REF | extra, Mode::empty())
}

/// Set once `openat2` answered ENOSYS (a kernel before 5.6, a seccomp
/// filter, an emulator): every later call takes the `openat` route at once
/// instead of failing the same syscall again.
static NO_OPENAT2: AtomicBool = AtomicBool::new(false);

/// Opens `path` relative to `start` with `flags`, crossing no symlink
/// (`RESOLVE_NO_SYMLINKS`: ELOOP if one is in the way) and, when `beneath`,
/// never leaving `start` (`RESOLVE_BENEATH`: EXDEV). ENOSYS when the kernel
/// has no `openat2`, then at once on every later call.
#[inline]
pub fn open_strict(
    start: BorrowedFd<'_>,
    path: &CStr,
    flags: OFlags,
    mode: Mode,
    beneath: bool,
) -> Result<OwnedFd, Errno> {
    if NO_OPENAT2.load(Ordering::Relaxed) {
        return Err(Errno::NOSYS);
    }
    let how = if beneath {
        ResolveFlags::NO_SYMLINKS | ResolveFlags::BENEATH
    } else {
        ResolveFlags::NO_SYMLINKS
    };
    let r = rustix::fs::openat2(start, path, flags, mode, how);
    if r.as_ref().err() == Some(&Errno::NOSYS) {
        NO_OPENAT2.store(true, Ordering::Relaxed);
    }
    r
}

/// Whether [`open_strict`] is known to be missing: the lexical routes,
/// which need it to prove their answer, are not worth starting.
#[inline]
pub fn strict_open_missing() -> bool {
    NO_OPENAT2.load(Ordering::Relaxed)
}

/// The start of the environment entry that lists libraries for the loader
/// to load into a program first (`LD_PRELOAD`, entries split by `:` or spaces).
pub const PRELOAD_ENTRY: &[u8] = b"LD_PRELOAD=";

/// A file with no name, `CLOEXEC` (a memfd).
pub fn anon_file(name: &CStr) -> Result<OwnedFd, Errno> {
    rustix::fs::memfd_create(name, MemfdFlags::CLOEXEC)
}

/// The seals a sealed file carries: no write, no resize, no unsealing.
fn seals() -> SealFlags {
    SealFlags::WRITE | SealFlags::GROW | SealFlags::SHRINK | SealFlags::SEAL
}

/// A file with no name, `CLOEXEC`, that [`seal`] can make unchangeable.
pub(super) fn sealable_file(name: &CStr) -> Result<OwnedFd, Errno> {
    rustix::fs::memfd_create(name, MemfdFlags::CLOEXEC | MemfdFlags::ALLOW_SEALING)
}

/// Makes a [`sealable_file`] unchangeable for good, by anyone holding it.
pub(super) fn seal(fd: impl AsFd) -> Result<(), Errno> {
    rustix::fs::fcntl_add_seals(fd, seals())
}

/// Whether `fd` is a file no one can change any more ([`seal`]); an error
/// when it is closed or not a sealable file at all.
pub(super) fn is_sealed(fd: BorrowedFd<'_>) -> Result<bool, Errno> {
    Ok(rustix::fs::fcntl_get_seals(fd)?.contains(seals()))
}

/// A memfd holding `frozen`, sealed against any change, `CLOEXEC`. System
/// calls only, no allocation (this may run in a `vfork` child).
pub fn frozen_file(frozen: &[u8]) -> Result<OwnedFd, Errno> {
    let fd = sealable_file(c"fsguard-policy")?;
    let mut done = 0;
    while done < frozen.len() {
        match rustix::io::write(&fd, &frozen[done..]) {
            Ok(0) => return Err(Errno::IO),
            Ok(n) => done += n,
            Err(Errno::INTR) => {}
            Err(e) => return Err(e),
        }
    }
    seal(&fd)?;
    Ok(fd)
}

/// The bytes of `fd` if it is a memfd carrying every seal; else why not.
pub fn read_frozen(fd: BorrowedFd<'_>) -> Result<Vec<u8>, String> {
    let sealed = is_sealed(fd)
        .map_err(|_| "not a sealed policy memfd (closed, or another file)".to_string())?;
    if !sealed {
        return Err("the policy memfd is not sealed".into());
    }
    let st = rustix::fs::fstat(fd).map_err(|e| e.to_string())?;
    let mut buf = vec![0u8; st.st_size as usize];
    let mut done = 0;
    while done < buf.len() {
        match rustix::io::pread(fd, &mut buf[done..], done as u64) {
            Ok(0) => break,
            Ok(n) => done += n,
            Err(Errno::INTR) => {}
            Err(e) => return Err(e.to_string()),
        }
    }
    buf.truncate(done);
    Ok(buf)
}

/// An identity of a [`frozen_file`] that another file at its number would
/// not have: its device and inode.
pub fn frozen_id(fd: BorrowedFd<'_>) -> Option<(u64, u64)> {
    let st = rustix::fs::fstat(fd).ok()?;
    Some((super::dev(&st), st.st_ino))
}

/// The running program's path, as the kernel names it. Read with the
/// raw system call: the library calls it while it loads, when its own
/// calls of hooked functions are refused.
pub fn exe_path() -> Option<std::path::PathBuf> {
    let link = rustix::fs::readlink(c"/proc/self/exe", Vec::new()).ok()?;
    let link = <std::ffi::OsString as std::os::unix::ffi::OsStringExt>::from_vec(link.into_bytes());
    Some(link.into())
}

/// The calling thread's id.
#[inline]
pub fn thread_id() -> u64 {
    rustix::thread::gettid().as_raw_nonzero().get() as u64
}

/// The environment the process started with, each `KEY=value` entry ended
/// by a NUL: the strings the kernel put on the process's stack
/// (`/proc/self/environ`). Code that ran before the library changes them
/// with `setenv`, `unsetenv`, `putenv` or `clearenv` only in the array
/// `environ` points to, not there. `None` when /proc cannot be read.
pub fn start_env() -> Option<Vec<u8>> {
    let fd = rustix::fs::openat(
        CWD,
        c"/proc/self/environ",
        OFlags::RDONLY | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .ok()?;
    let mut out = Vec::new();
    let mut chunk = [0u8; 4096];
    loop {
        match rustix::io::read(&fd, &mut chunk) {
            Ok(0) => return Some(out),
            Ok(n) => out.extend_from_slice(&chunk[..n]),
            Err(Errno::INTR) => {}
            Err(_) => return None,
        }
    }
}

/// Whether this process runs under `no_new_privs`, where exec honours no
/// set-id bit.
pub fn no_new_privs() -> bool {
    // SAFETY: PR_GET_NO_NEW_PRIVS takes no pointer.
    unsafe { libc::prctl(libc::PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) == 1 }
}

/// A connection to the supervisor's report socket at `path`, used only if
/// the listener is process `pid` (a program that put its own socket there
/// gets nothing from it): non-`CLOEXEC`, so children inherit it, at a high
/// number when one is free. Non-blocking: a listener whose queue is full
/// fails the connection rather than stall the program.
pub fn connect_supervisor(path: &CStr, pid: u32) -> Result<OwnedFd, Errno> {
    use rustix::net::{AddressFamily, SocketAddrUnix, SocketFlags, SocketType};
    let s = rustix::net::socket_with(
        AddressFamily::UNIX,
        SocketType::SEQPACKET,
        SocketFlags::CLOEXEC | SocketFlags::NONBLOCK,
        None,
    )?;
    rustix::net::connect(&s, &SocketAddrUnix::new(path)?)?;
    let peer = rustix::net::sockopt::socket_peercred(&s)?;
    if peer.pid.as_raw_nonzero().get() as u32 != pid {
        return Err(Errno::PERM);
    }
    let high = rustix::io::fcntl_dupfd_cloexec(&s, crate::handoff::HIGH_FD).unwrap_or(s);
    rustix::io::fcntl_setfd(&high, rustix::io::FdFlags::empty())?;
    Ok(high)
}

/// Sends one message on the report channel, never blocking and never
/// raising `SIGPIPE` (a supervisor that is gone answers `EPIPE`).
#[inline]
pub fn send_message(fd: BorrowedFd<'_>, parts: &[std::io::IoSlice<'_>]) -> Result<usize, Errno> {
    use rustix::net::{SendAncillaryBuffer, SendFlags};
    rustix::net::sendmsg(
        fd,
        parts,
        &mut SendAncillaryBuffer::default(),
        SendFlags::DONTWAIT | SendFlags::NOSIGNAL,
    )
}
