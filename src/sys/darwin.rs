//! The Darwin backend of the platform seam: `__error`, `fcntl(F_GETPATH)`,
//! `O_NOFOLLOW_ANY`, `DYLD_INSERT_LIBRARIES`, POSIX shared memory in place
//! of memfds (and of sealed memfds: `frozen_shm`).
//!
//! Checked by `cargo check`/`cargo clippy --target x86_64-apple-darwin`
//! (and `aarch64-apple-darwin`); never linked nor run on a Mac yet
//! (docs/macos.md says what is left). Calls made from this library are not
//! rewired by its own `__interpose` pairs, so the libc functions called
//! here are the system's, never the hooks.
//!
//! The real function is not looked up here: `real!` (src/real.rs) links the
//! original of each pair directly.

use std::ffi::{c_char, c_int, CStr};
use std::mem::MaybeUninit;
use std::os::fd::{AsRawFd, BorrowedFd, FromRawFd, OwnedFd};
use std::sync::atomic::{AtomicU32, AtomicU8, Ordering};

use rustix::fs::{Mode, OFlags};
use rustix::io::Errno;

/// The calling thread's `errno` slot (`__error`).
#[inline]
pub fn errno_slot() -> *mut c_int {
    // SAFETY: __error has no preconditions; it returns this thread's slot,
    // valid for the thread's life.
    unsafe { libc::__error() }
}

/// Whether the originals of `names` (`open`, `openat`) are libSystem's
/// own: the code this library's calls to them reach lies in an image under
/// `/usr/lib/system/` (libSystem's parts, in the system's sealed volume and
/// shared cache, where no inserted library can be). dyld applies every
/// other image's `__interpose` pairs to this library's bindings (not its
/// own pairs), so when another inserted library interposes the function,
/// the address `real!` links is that library's, and dladdr(3) names it: the
/// answer is false and the open fast path stays off, so it never bypasses
/// that library. Any other name: false.
pub fn next_is_libc(names: &[&CStr]) -> bool {
    // Only its address is read; any function type serves.
    type Any = unsafe extern "C" fn() -> c_int;
    names.iter().all(|name| {
        let f: Option<Any> = match name.to_bytes() {
            b"open" => crate::real::real!("open", Any),
            b"openat" => crate::real::real!("openat", Any),
            _ => None,
        };
        f.and_then(|f| super::image_path(f as *const std::ffi::c_void))
            .is_some_and(|p| p.to_bytes().starts_with(b"/usr/lib/system/"))
    })
}

// No `fd_link` here: `/dev/fd/N` (`fdesc`) is no magic link. Opening it
// duplicates fd `N` (fd(4)), any other call on it acts on the device node,
// and `/dev/fd/N/name` reaches nothing; `resolve/via.rs` reaches an object
// as its parent fd and its name instead.

/// `F_GETPATH`'s buffer: `MAXPATHLEN`.
const MAXPATHLEN: usize = 1024;

/// The kernel's name for `fd` (`fcntl(F_GETPATH)`), read into `buf`;
/// returns its length, which equals `buf`'s when the name may have been cut
/// short. The kernel's answer is at most `MAXPATHLEN` bytes, so a deeper
/// path is reported as cut short and the resolver walks up instead.
#[inline]
pub fn fd_name(fd: BorrowedFd<'_>, buf: &mut [MaybeUninit<u8>]) -> Result<usize, Errno> {
    let mut path = [0u8; MAXPATHLEN];
    // SAFETY: F_GETPATH writes at most MAXPATHLEN bytes into `path`.
    let r = unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_GETPATH, path.as_mut_ptr()) };
    if r == -1 {
        return Err(Errno::from_raw_os_error(crate::errno::errno()));
    }
    let len = path.iter().position(|&b| b == 0).unwrap_or(MAXPATHLEN);
    let n = len.min(buf.len());
    for (dst, &src) in buf.iter_mut().zip(&path[..n]) {
        dst.write(src);
    }
    if len < MAXPATHLEN - 1 {
        return Ok(n);
    }
    // Possibly cut short: say so with a full buffer.
    for dst in &mut buf[n..] {
        dst.write(0);
    }
    Ok(buf.len())
}

/// `O_EVTONLY`: an fd for event notification only, which neither reads nor
/// writes the object.
const EVTONLY: OFlags = OFlags::from_bits_retain(libc::O_EVTONLY as u32);

/// The flags of an fd that only names an object. Darwin has no `O_PATH`:
/// `O_EVTONLY` opens without reading, `O_NONBLOCK` keeps a fifo from
/// blocking and `O_NOCTTY` a tty from becoming the controlling one. An
/// object the caller may not read cannot be held this way (EACCES): the
/// resolver then reaches it as its parent and its name (`resolve/via.rs`);
/// a directory it may search but not read cannot be a parent, and a call
/// below one fails with EACCES (fail closed). No final symlink is ever
/// held (`O_SYMLINK`): a call that does not follow one acts on its parent
/// and its name, and where the resolver asks for `O_NOFOLLOW` (a create's
/// walk) Darwin's ELOOP fails the call as Linux's held symlink does.
pub const REF: OFlags = EVTONLY
    .union(OFlags::NONBLOCK)
    .union(OFlags::NOCTTY)
    .union(OFlags::CLOEXEC);

/// `path` relative to `d` opened as a [`REF`], with `extra` flags
/// (`O_DIRECTORY`, `O_NOFOLLOW`).
#[inline]
pub fn open_ref(d: BorrowedFd<'_>, path: &CStr, extra: OFlags) -> Result<OwnedFd, Errno> {
    rustix::fs::openat(d, path, REF | extra, Mode::empty())
}

/// Whether the kernel honours `O_NOFOLLOW_ANY` (Darwin 20, macOS 11): 0
/// not asked yet, 1 yes, 2 no. An older kernel may ignore the flag, which
/// would let a symlink through unnoticed, so it is not trusted there.
static NOFOLLOW_ANY: AtomicU8 = AtomicU8::new(0);

fn nofollow_any() -> bool {
    match NOFOLLOW_ANY.load(Ordering::Relaxed) {
        1 => true,
        2 => false,
        _ => {
            let _kept = crate::errno::Kept::new();
            let mut u = MaybeUninit::<libc::utsname>::uninit();
            // SAFETY: uname fills the struct it is given.
            let ok = unsafe { libc::uname(u.as_mut_ptr()) } == 0;
            let major = if ok {
                // SAFETY: uname succeeded, so the struct is filled and its
                // release is NUL-terminated.
                let release = unsafe { CStr::from_ptr(u.assume_init_ref().release.as_ptr()) };
                let digits = release.to_bytes().split(|&b| b == b'.').next();
                digits
                    .and_then(|d| std::str::from_utf8(d).ok()?.parse::<u32>().ok())
                    .unwrap_or(0)
            } else {
                0
            };
            let yes = major >= 20;
            NOFOLLOW_ANY.store(if yes { 1 } else { 2 }, Ordering::Relaxed);
            yes
        }
    }
}

/// Opens `path` relative to `start` with `flags`, crossing no symlink
/// (`O_NOFOLLOW_ANY`: ELOOP if one is in the way) and, when `beneath`,
/// never leaving `start`: EXDEV for an absolute path or a `..` component,
/// since without either and without symlinks a path cannot leave its
/// start. ENOSYS when the kernel has no `O_NOFOLLOW_ANY`.
#[inline]
pub fn open_strict(
    start: BorrowedFd<'_>,
    path: &CStr,
    flags: OFlags,
    mode: Mode,
    beneath: bool,
) -> Result<OwnedFd, Errno> {
    if !nofollow_any() {
        return Err(Errno::NOSYS);
    }
    let bytes = path.to_bytes();
    if beneath && (bytes.first() == Some(&b'/') || bytes.split(|&b| b == b'/').any(|c| c == b".."))
    {
        return Err(Errno::XDEV);
    }
    rustix::fs::openat(start, path, flags | OFlags::NOFOLLOW_ANY, mode)
}

/// Whether [`open_strict`] is known to be missing (a kernel before macOS 11).
#[inline]
pub fn strict_open_missing() -> bool {
    !nofollow_any()
}

/// The start of the environment entry that lists libraries for dyld to
/// insert into a program (`DYLD_INSERT_LIBRARIES`, entries split by `:`).
pub const PRELOAD_ENTRY: &[u8] = b"DYLD_INSERT_LIBRARIES=";

/// Tells apart the names of [`anon_file`]s a process makes.
static ANON: AtomicU32 = AtomicU32::new(0);

/// A file with no name, `CLOEXEC`. Darwin has no memfd: a POSIX shared
/// memory object (`shm_open`, exclusive), unlinked at once. `_name` is
/// Linux's label; a shared memory name is at most 31 bytes, so the pid and
/// a counter name it instead.
pub fn anon_file(_name: &CStr) -> Result<OwnedFd, Errno> {
    let mut buf = [0u8; 32];
    let mut n = 0;
    for (part, tail) in [
        (std::process::id(), &b"."[..]),
        (ANON.fetch_add(1, Ordering::Relaxed), &b""[..]),
    ] {
        let head: &[u8] = if n == 0 { b"/fsguard." } else { b"" };
        buf[n..n + head.len()].copy_from_slice(head);
        n += head.len();
        let mut digits = [0u8; 10];
        let i = crate::resolve::decimal(part, &mut digits);
        buf[n..n + digits.len() - i].copy_from_slice(&digits[i..]);
        n += digits.len() - i;
        buf[n..n + tail.len()].copy_from_slice(tail);
        n += tail.len();
    }
    let name = buf.as_ptr().cast::<c_char>();
    let flags = libc::O_RDWR | libc::O_CREAT | libc::O_EXCL;
    // SAFETY: a NUL-terminated name (the buffer's last byte stays 0).
    let fd = unsafe { libc::shm_open(name, flags, 0o600 as libc::c_uint) };
    if fd == -1 {
        return Err(Errno::from_raw_os_error(crate::errno::errno()));
    }
    // SAFETY: the same name; the object lives on through `fd` alone.
    unsafe { libc::shm_unlink(name) };
    // SAFETY: shm_open returned this fd to this process alone.
    let fd = unsafe { OwnedFd::from_raw_fd(fd) };
    rustix::io::fcntl_setfd(&fd, rustix::io::FdFlags::CLOEXEC)?;
    Ok(fd)
}

/// A read-only fd to an unlinked POSIX shared memory object holding
/// `frozen`, created owner-read-only: no process but root can write it
/// (Darwin has no seals; `frozen_shm` says why this object and how it is
/// made). System calls only, no allocation (this may run in a `vfork`
/// child).
pub fn frozen_file(frozen: &[u8]) -> Result<OwnedFd, Errno> {
    super::frozen_shm::create(frozen).map_err(Errno::from_raw_os_error)
}

/// The bytes of `fd` if it is such an object (`frozen_shm::read`'s checks);
/// else why not.
pub fn read_frozen(fd: BorrowedFd<'_>) -> Result<Vec<u8>, String> {
    super::frozen_shm::read(fd).map_err(String::from)
}

/// None: `fstat` of a shared memory object shows no device nor inode
/// (xnu's `pshm_stat` leaves both 0), so the library could not tell its
/// kept copy from an object the program put at that number; it makes a
/// fresh copy for each exec instead (`handoff::ForChild`).
pub fn frozen_id(_fd: BorrowedFd<'_>) -> Option<(u64, u64)> {
    None
}

/// The calling thread's id.
#[inline]
pub fn thread_id() -> u64 {
    let mut id = 0u64;
    // SAFETY: the calling thread (0) and an out-parameter.
    unsafe { libc::pthread_threadid_np(0, &mut id) };
    id
}

/// The environment the process started with: Darwin has no
/// `/proc/self/environ`; the library reads `environ` instead.
pub fn start_env() -> Option<Vec<u8>> {
    None
}

/// The running program's path (`_NSGetExecutablePath`, then `realpath`).
pub fn exe_path() -> Option<std::path::PathBuf> {
    let mut buf = [0u8; MAXPATHLEN];
    let mut size = buf.len() as u32;
    #[allow(deprecated)] // libc points to the mach2 crate; the function is libSystem's
    // SAFETY: the buffer and its size; the call writes at most `size` bytes.
    let r = unsafe { libc::_NSGetExecutablePath(buf.as_mut_ptr().cast(), &mut size) };
    if r != 0 {
        return None;
    }
    let path = CStr::from_bytes_until_nul(&buf).ok()?;
    let path = <std::ffi::OsStr as std::os::unix::ffi::OsStrExt>::from_bytes(path.to_bytes());
    std::fs::canonicalize(path).ok()
}

/// Whether exec honours no set-id bit: Darwin has no `no_new_privs`.
pub fn no_new_privs() -> bool {
    false
}

/// A connection to the supervisor's report socket: none on Darwin, where
/// `fsguard run` makes no listening socket (a process that lost its
/// inherited channel is not on the record; docs/macos.md).
pub fn connect_supervisor(_path: &CStr, _pid: u32) -> Result<OwnedFd, Errno> {
    Err(Errno::NOENT)
}

/// Sends one message on the report channel, never blocking (the
/// supervisor sets `SO_NOSIGPIPE` on the socket: Darwin has no
/// `MSG_NOSIGNAL`).
#[inline]
pub fn send_message(fd: BorrowedFd<'_>, parts: &[std::io::IoSlice<'_>]) -> Result<usize, Errno> {
    use rustix::net::{SendAncillaryBuffer, SendFlags};
    rustix::net::sendmsg(
        fd,
        parts,
        &mut SendAncillaryBuffer::default(),
        SendFlags::DONTWAIT,
    )
}
