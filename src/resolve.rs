//! Path resolution the way the kernel does it, with the kernel's help.
//!
//! A path is opened with `O_PATH` (no side effects, no permission beyond
//! search) and the kernel's own name for the object is read back from
//! `/proc/self/fd/N`. Symlinks, `..` after symlinks, magic links such as
//! `/proc/self/cwd` and trailing slashes are thus handled by the kernel. What
//! is left to us: a missing last component (resolved through its parent),
//! calls that act on a directory entry rather than on what it points to
//! (`unlink`, `rename`, `O_NOFOLLOW`, …: parent resolved, name appended), and
//! a dangling symlink that `O_CREAT` would create the target of.
//!
//! All syscalls here go through rustix's raw backend, never through libc, so
//! resolving cannot recurse into the library's own hooks, and errno is never
//! touched.

use std::ffi::CStr;
use std::mem::MaybeUninit;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};

use rustix::fs::{Mode, OFlags, ResolveFlags, CWD};
use rustix::io::Errno;

/// Longest resolved path the kernel hands back (`PATH_MAX`), plus one name.
pub const PATH_CAP: usize = 4096 + 256;

/// What a path buffer holds on the stack; a longer path moves to a mapping
/// (see [`Spill`]). Most paths are far shorter.
const PATH_INLINE: usize = 512;

/// Bytes on the stack while they fit in `N`, in an anonymous mapping once
/// they do not. A hook may run in a signal handler on an alternate stack of
/// 8 KiB (`SIGSTKSZ`), of which the kernel's signal frame takes up to half:
/// a buffer of `PATH_MAX` there overflows. `mmap` is a system call, safe in
/// a signal handler and a forked child where `malloc` is not. Left
/// uninitialized, as zeroing would cost more than the work.
pub(crate) struct Spill<const N: usize> {
    inline: [MaybeUninit<u8>; N],
    /// The mapping (null: the bytes are `inline`).
    map: *mut MaybeUninit<u8>,
    map_len: usize,
}

impl<const N: usize> Spill<N> {
    /// An empty buffer on the stack.
    #[inline(always)]
    pub(crate) fn new() -> Spill<N> {
        Spill {
            // SAFETY: an array of MaybeUninit needs no initialization.
            inline: unsafe { MaybeUninit::uninit().assume_init() },
            map: std::ptr::null_mut(),
            map_len: 0,
        }
    }

    /// How many bytes fit now.
    #[inline]
    pub(crate) fn capacity(&self) -> usize {
        if self.map.is_null() {
            N
        } else {
            self.map_len
        }
    }

    /// The whole buffer.
    #[inline]
    pub(crate) fn buf(&mut self) -> &mut [MaybeUninit<u8>] {
        if self.map.is_null() {
            &mut self.inline
        } else {
            // SAFETY: a live mapping of `map_len` bytes, owned by self.
            unsafe { std::slice::from_raw_parts_mut(self.map, self.map_len) }
        }
    }

    /// Where the bytes start.
    #[inline]
    pub(crate) fn as_ptr(&self) -> *const u8 {
        if self.map.is_null() {
            self.inline.as_ptr().cast()
        } else {
            self.map.cast_const().cast()
        }
    }

    /// The first `len` bytes.
    ///
    /// # Safety
    /// They must have been written.
    #[inline]
    pub(crate) unsafe fn bytes(&self, len: usize) -> &[u8] {
        let p: *const MaybeUninit<u8> = if self.map.is_null() {
            self.inline.as_ptr()
        } else {
            self.map
        };
        debug_assert!(len <= self.capacity());
        // SAFETY: the caller's guarantee; len is within the buffer.
        unsafe { std::slice::from_raw_parts(p.cast::<u8>(), len) }
    }

    /// Makes room for `need` bytes, keeping the first `keep`.
    pub(crate) fn reserve(&mut self, need: usize, keep: usize) -> Result<(), Errno> {
        if need <= self.capacity() {
            return Ok(());
        }
        let len = need.next_multiple_of(SPARE_LEN);
        let spare = if len == SPARE_LEN {
            take_spare()
        } else {
            std::ptr::null_mut()
        };
        let map = if spare.is_null() {
            // SAFETY: a fresh private anonymous mapping; nothing else
            // refers to it.
            unsafe {
                rustix::mm::mmap_anonymous(
                    std::ptr::null_mut(),
                    len,
                    rustix::mm::ProtFlags::READ | rustix::mm::ProtFlags::WRITE,
                    rustix::mm::MapFlags::PRIVATE,
                )
            }?
            .cast::<MaybeUninit<u8>>()
        } else {
            spare.cast::<MaybeUninit<u8>>()
        };
        let keep = keep.min(self.capacity());
        let old: *const MaybeUninit<u8> = self.buf().as_ptr();
        // SAFETY: distinct buffers of at least `keep` bytes each.
        unsafe { std::ptr::copy_nonoverlapping(old, map, keep) };
        self.unmap();
        self.map = map;
        self.map_len = len;
        Ok(())
    }

    fn unmap(&mut self) {
        if self.map.is_null() {
            return;
        }
        if self.map_len != SPARE_LEN || !give_spare(self.map.cast()) {
            // SAFETY: our own mapping, no longer referred to.
            let _ = unsafe { rustix::mm::munmap(self.map.cast(), self.map_len) };
        }
        self.map = std::ptr::null_mut();
    }
}

/// The size of a [`Spill`]'s mapping: room for any buffer of the library's
/// (a trace line of 12 KiB is the largest).
const SPARE_LEN: usize = 16 * 1024;

/// Mappings given back, for the next [`Spill`] to take: a fresh mapping and
/// its unmapping (and the page faults in between) cost more than the work
/// they serve. Lock-free (a slot is taken or filled by one atomic
/// operation, never waited for), so a signal handler or a forked child
/// cannot find it held; when all are taken, a mapping is made.
static SPARES: [std::sync::atomic::AtomicPtr<u8>; 8] =
    [const { std::sync::atomic::AtomicPtr::new(std::ptr::null_mut()) }; 8];

fn take_spare() -> *mut u8 {
    use std::sync::atomic::Ordering;
    for slot in &SPARES {
        if !slot.load(Ordering::Relaxed).is_null() {
            let p = slot.swap(std::ptr::null_mut(), Ordering::Acquire);
            if !p.is_null() {
                return p;
            }
        }
    }
    std::ptr::null_mut()
}

/// Keeps `p` (a mapping of SPARE_LEN bytes) for later; false when every
/// slot is full.
fn give_spare(p: *mut u8) -> bool {
    use std::sync::atomic::Ordering;
    SPARES.iter().any(|slot| {
        slot.compare_exchange(
            std::ptr::null_mut(),
            p,
            Ordering::Release,
            Ordering::Relaxed,
        )
        .is_ok()
    })
}

impl<const N: usize> Drop for Spill<N> {
    fn drop(&mut self) {
        self.unmap();
    }
}

/// Dangling symlinks followed while resolving an `O_CREAT` target (fewer
/// than the kernel's 40); a longer chain fails with ELOOP.
const MAX_LINKS: usize = 8;

/// Set once `openat2` answered ENOSYS (a kernel before 5.6, a seccomp
/// filter, an emulator): every later call takes the `openat` route at once
/// instead of failing the same syscall again.
static NO_OPENAT2: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// `openat2`, unless it is known to be missing.
fn openat2(
    start: BorrowedFd<'_>,
    path: &CStr,
    flags: OFlags,
    mode: Mode,
    how: ResolveFlags,
) -> Result<OwnedFd, Errno> {
    use std::sync::atomic::Ordering;
    if NO_OPENAT2.load(Ordering::Relaxed) {
        return Err(Errno::NOSYS);
    }
    let r = rustix::fs::openat2(start, path, flags, mode, how);
    if r.as_ref().err() == Some(&Errno::NOSYS) {
        NO_OPENAT2.store(true, Ordering::Relaxed);
    }
    r
}

/// Whether `openat2` is known to be missing: the lexical routes, which
/// need it to prove their answer, are not worth starting.
pub fn openat2_missing() -> bool {
    NO_OPENAT2.load(std::sync::atomic::Ordering::Relaxed)
}

/// How the last component of a path is treated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Follow {
    /// Symlinks followed to the object (open, stat, chmod, truncate…).
    Yes,
    /// Like `Yes`, and a dangling final symlink resolves to the target it
    /// would create (`O_CREAT` without `O_EXCL`).
    Create,
    /// The call acts on the directory entry itself, whatever it is (unlink,
    /// rmdir, rename, mkdir, mknod, link's and symlink's new name, an
    /// exclusive create): the parent resolved, the name kept.
    Entry,
    /// The call acts on the object named but does not follow a final
    /// symlink (lchown, `AT_SYMLINK_NOFOLLOW`, `O_NOFOLLOW`). With a
    /// trailing slash the kernel follows it after all, and so do we.
    NoFollow,
    /// The path is empty (`AT_EMPTY_PATH`) or NULL: the call acts on the dirfd.
    Fd,
}

/// A resolved path in a buffer: absolute and canonical, or an
/// anonymous object name (`pipe:[12]`).
///
/// On the stack up to [`PATH_INLINE`] bytes, then in a mapping (see
/// [`Spill`]); left uninitialized. A path longer than the kernel's names
/// (deeper than `PATH_MAX`, see [`long_dir_path`]) lives on the heap.
pub struct PathBuf {
    buf: Spill<PATH_INLINE>,
    len: usize,
    long: Option<Vec<u8>>,
}

impl PathBuf {
    /// An empty buffer. Not a `const fn`: a constant would be copied in,
    /// zeroing it per call.
    #[inline(always)]
    #[allow(clippy::new_without_default)]
    pub fn new() -> PathBuf {
        PathBuf {
            buf: Spill::new(),
            len: 0,
            long: None,
        }
    }

    /// The path bytes.
    pub fn as_bytes(&self) -> &[u8] {
        if let Some(long) = &self.long {
            return long;
        }
        // SAFETY: the first `len` bytes were written by readlink or put.
        unsafe { self.buf.bytes(self.len) }
    }

    /// Writes `bytes` at `at`, after the `at` bytes kept.
    fn put(&mut self, at: usize, bytes: &[u8]) -> Result<(), Errno> {
        self.buf
            .reserve(at + bytes.len(), at)
            .map_err(|_| Errno::NOMEM)?;
        copy_into(&mut self.buf.buf()[at..at + bytes.len()], bytes);
        Ok(())
    }

    /// Starts a path of the kernel's length: the buffer again.
    fn set_len(&mut self, len: usize) {
        self.long = None;
        self.len = len;
    }

    fn push_name(&mut self, name: &[u8]) -> Result<(), Errno> {
        let need = usize::from(self.len > 1) + name.len();
        if self.long.is_none() && self.len + need > PATH_CAP {
            // Deeper than PATH_MAX: rare, so the heap.
            self.long = Some(self.as_bytes().to_vec());
        }
        if let Some(long) = &mut self.long {
            if long.as_slice() != b"/" {
                long.push(b'/');
            }
            long.extend_from_slice(name);
            return Ok(());
        }
        if self.as_bytes() != b"/" {
            self.put(self.len, b"/")?;
            self.len += 1;
        }
        self.put(self.len, name)?;
        self.len += name.len();
        Ok(())
    }
}

/// Copies `src` into uninitialized bytes of the same length (one memcpy).
#[inline]
fn copy_into(dst: &mut [MaybeUninit<u8>], src: &[u8]) {
    assert_eq!(dst.len(), src.len());
    // SAFETY: same lengths, distinct buffers; u8 and MaybeUninit<u8> share
    // a layout.
    unsafe { std::ptr::copy_nonoverlapping(src.as_ptr(), dst.as_mut_ptr().cast::<u8>(), src.len()) }
}

/// Why a path could not be resolved.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unresolved {
    /// The kernel would fail the call with this errno anyway (ENOENT on a
    /// missing parent, ENOTDIR, ELOOP, ENAMETOOLONG, EACCES on search, EBADF,
    /// EFAULT): answer it without calling the real function.
    Kernel(Errno),
    /// Resolution itself failed (out of fds, /proc unavailable): fail closed.
    Failed(Errno),
}

fn kernel_or_failed(e: Errno) -> Unresolved {
    match e {
        Errno::NOENT
        | Errno::NOTDIR
        | Errno::LOOP
        | Errno::NAMETOOLONG
        | Errno::ACCESS
        | Errno::BADF
        | Errno::FAULT
        | Errno::XDEV => Unresolved::Kernel(e),
        _ => Unresolved::Failed(e),
    }
}

/// A user dirfd, validated: negative values other than `AT_FDCWD` are EBADF.
fn dir<'a>(dirfd: i32) -> Result<BorrowedFd<'a>, Errno> {
    if dirfd == libc::AT_FDCWD {
        Ok(CWD)
    } else if dirfd < 0 {
        Err(Errno::BADF)
    } else {
        // SAFETY: a non-negative fd number; it is only passed to syscalls,
        // which report EBADF if it is not open.
        Ok(unsafe { BorrowedFd::borrow_raw(dirfd) })
    }
}

/// Resolves `path` relative to `dirfd` into `out`, for a decision alone
/// (see [`locate`] for calls that then act).
pub fn resolve(
    dirfd: i32,
    path: Option<&CStr>,
    follow: Follow,
    out: &mut PathBuf,
) -> Result<(), Unresolved> {
    let mut via = Via::caller(dirfd, path.map_or(std::ptr::null(), CStr::as_ptr));
    locate(dirfd, path, follow, out, &mut via)
}

/// Resolves `path` relative to `dirfd` into `out`, and records in `via` how
/// the call reaches exactly the object resolved: through an `O_PATH` fd of
/// the object, or of its parent directory plus the name. The caller's
/// string is never walked again, so whatever is renamed or swapped after
/// this, the call acts on what was checked.
///
/// A path without symlinks is folded lexically and proven with one
/// `openat2(RESOLVE_NO_SYMLINKS)` (relative to the caller's dirfd with
/// `RESOLVE_BENEATH`: the path read for the dirfd only names it); any other is
/// opened the kernel's way and named by `/proc/self/fd`.
pub fn locate(
    dirfd: i32,
    path: Option<&CStr>,
    follow: Follow,
    out: &mut PathBuf,
    via: &mut Via,
) -> Result<(), Unresolved> {
    let Some(path) = path else {
        // utimensat(fd, NULL, …) acts on fd; with AT_FDCWD the kernel says EFAULT.
        if dirfd == libc::AT_FDCWD || follow != Follow::Fd {
            return Err(Unresolved::Kernel(Errno::FAULT));
        }
        return fd_path(dirfd, out);
    };
    if follow == Follow::Fd {
        // The call acts on the caller's fd itself.
        return fd_path(dirfd, out);
    }
    let bytes = path.to_bytes();
    if bytes.is_empty() {
        return Err(Unresolved::Kernel(Errno::NOENT));
    }
    // An absolute path ignores dirfd, even an invalid one.
    let dirfd = if bytes[0] == b'/' {
        libc::AT_FDCWD
    } else {
        dirfd
    };
    let slash = bytes.ends_with(b"/");
    let follow = match follow {
        // A trailing slash makes the kernel follow after all; `.` and `..`
        // are never symlinks.
        Follow::NoFollow if slash || matches!(split(bytes), Some((_, b"." | b".."))) => Follow::Yes,
        Follow::NoFollow => Follow::Entry,
        f => f,
    };
    if follow == Follow::Create && slash {
        // The kernel creates nothing with a trailing slash.
        return Err(Unresolved::Kernel(Errno::ISDIR));
    }
    if let Some(r) = locate_fast(dirfd, path, follow, slash, out, via) {
        return r;
    }
    via.reset();
    locate_slow(dirfd, path, follow, slash, out, via)
}

/// The lexical route (see [`locate`]); `None`: take the kernel's route. Out
/// of line: its buffer is off the stack when the kernel's route runs.
#[inline(never)]
fn locate_fast(
    dirfd: i32,
    path: &CStr,
    follow: Follow,
    slash: bool,
    out: &mut PathBuf,
    via: &mut Via,
) -> Option<Result<(), Unresolved>> {
    if openat2_missing() {
        return None;
    }
    let mut raw = RawPath::new();
    lexical(dirfd, path, out, &mut raw)?;
    let beneath = dirfd != libc::AT_FDCWD;
    let (start, how) = if beneath {
        (
            dir(dirfd).ok()?,
            ResolveFlags::NO_SYMLINKS | ResolveFlags::BENEATH,
        )
    } else {
        (CWD, ResolveFlags::NO_SYMLINKS)
    };
    if beneath {
        // Walk the caller's own relative path from the caller's dirfd.
        raw.len = 0;
        if !raw.push(path.to_bytes()) {
            return None;
        }
    }
    let kernel = |e: Errno| Some(Err(Unresolved::Kernel(e)));
    if matches!(follow, Follow::Yes | Follow::Create) {
        match openat2(
            start,
            raw.as_cstr(),
            OFlags::PATH | OFlags::CLOEXEC,
            Mode::empty(),
            how,
        ) {
            Ok(fd) => {
                via.set_object(fd, slash);
                return Some(Ok(()));
            }
            Err(Errno::NOENT) if follow == Follow::Create => {}
            Err(Errno::NOENT) => return kernel(Errno::NOENT),
            Err(_) => return None,
        }
    }
    // An entry, or a create of a missing name: the parent and the name,
    // both left in `raw` (the parent's NUL goes where a slash was).
    let (plen, name_at, name_len) = {
        let all = raw.bytes();
        let (parent, name) = split(all)?;
        if name == b"." || name == b".." || name.len() > 255 {
            return None;
        }
        let at = name.as_ptr() as usize - all.as_ptr() as usize;
        (parent.len(), at, name.len())
    };
    let created = follow == Follow::Create;
    if plen == 0 {
        // A bare name relative to the caller's dirfd: that dirfd is the parent.
        let name = &raw.bytes()[name_at..name_at + name_len];
        return Some(
            via.set_entry_borrowed(dirfd, name, slash, created)
                .map_err(Unresolved::Kernel),
        );
    }
    // A parent that is only slashes is the root, and the name may start
    // right after its one byte.
    let root = raw.bytes()[..name_at].iter().all(|&b| b == b'/');
    let (parent, name) = if root {
        (c"/", &raw.bytes()[name_at..name_at + name_len])
    } else {
        raw.c_prefix_and(plen, name_at, name_len)
    };
    match openat2(
        start,
        parent,
        OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
        how,
    ) {
        Ok(pfd) => Some(
            via.set_entry(pfd, name, slash, created)
                .map_err(Unresolved::Kernel),
        ),
        Err(e @ (Errno::NOENT | Errno::NOTDIR)) => kernel(e),
        Err(_) => None,
    }
}

/// The kernel's route: open what the kernel would reach (`O_PATH`), ask
/// `/proc/self/fd` what it is.
fn locate_slow(
    dirfd: i32,
    path: &CStr,
    follow: Follow,
    slash: bool,
    out: &mut PathBuf,
    via: &mut Via,
) -> Result<(), Unresolved> {
    let bytes = path.to_bytes();
    let d = dir(dirfd).map_err(Unresolved::Kernel)?;
    if follow == Follow::Entry {
        let Some((parent, name)) = split(bytes) else {
            // "/" names no entry; the call acts on the root itself, which
            // no rename can swap.
            return fd_path_cstr(d, c"/", out);
        };
        let pfd = open_parent(d, parent).map_err(kernel_or_failed)?;
        if name == b"." || name == b".." {
            // Not an entry the kernel acts on by name (it fails the call);
            // named exactly for the decision.
            fd_path_cstr(d, path, out)?;
        } else {
            fd_path_of(pfd.as_fd(), out)?;
            out.push_name(name).map_err(Unresolved::Kernel)?;
        }
        return via
            .set_entry(pfd, name, slash, false)
            .map_err(Unresolved::Kernel);
    }
    if follow == Follow::Create {
        return resolve_create(d, bytes, out, via);
    }
    match rustix::fs::openat(d, path, OFlags::PATH | OFlags::CLOEXEC, Mode::empty()) {
        Ok(fd) => {
            if let Err(e) = fd_path_of(fd.as_fd(), out) {
                if e != Unresolved::Failed(Errno::NAMETOOLONG) {
                    return Err(e);
                }
                if deep_object_path(d, bytes, fd.as_fd(), out).is_err() {
                    // A symlink to it, say: followed by hand, as for a
                    // create, to the object it leads to now.
                    drop(fd);
                    resolve_create(d, bytes, out, via)?;
                    if via.reach() != Reach::Object {
                        via.reset();
                        return Err(Unresolved::Failed(Errno::NAMETOOLONG));
                    }
                    return Ok(());
                }
            }
            via.set_object(fd, slash);
            Ok(())
        }
        Err(e) => Err(kernel_or_failed(e)),
    }
}

/// The name of a non-directory deeper than `PATH_MAX`, opened as `bytes`
/// relative to `d`: its parent's name and its own, when the entry there is
/// the object itself (not a symlink to it).
fn deep_object_path(
    d: BorrowedFd<'_>,
    bytes: &[u8],
    fd: BorrowedFd<'_>,
    out: &mut PathBuf,
) -> Result<(), Unresolved> {
    let too_long = Unresolved::Failed(Errno::NAMETOOLONG);
    let (parent, name) = split(bytes).ok_or(too_long)?;
    if name == b"." || name == b".." || name.len() > 255 {
        return Err(too_long);
    }
    let pfd = open_parent(d, parent).map_err(kernel_or_failed)?;
    let c = std::ffi::CString::new(name).map_err(|_| too_long)?;
    let st = rustix::fs::statat(&pfd, c.as_c_str(), rustix::fs::AtFlags::SYMLINK_NOFOLLOW)
        .map_err(Unresolved::Failed)?;
    if (st.st_dev, st.st_ino) != id_of(fd).map_err(Unresolved::Failed)?.0 {
        return Err(too_long);
    }
    fd_path_of(pfd.as_fd(), out)?;
    out.push_name(name).map_err(Unresolved::Kernel)
}

/// Splits `a/b/c//` into (`a/b`, `c`); (`""`, `c`) for a bare name and
/// (`/`, `c`) for `/c`. `None` when there is no name (`/`, `//`).
fn split(bytes: &[u8]) -> Option<(&[u8], &[u8])> {
    let end = bytes.iter().rposition(|&b| b != b'/')? + 1;
    let trimmed = &bytes[..end];
    match trimmed.iter().rposition(|&b| b == b'/') {
        None => Some((b"", trimmed)),
        Some(i) => {
            let name = &trimmed[i + 1..];
            let parent_end = trimmed[..i]
                .iter()
                .rposition(|&b| b != b'/')
                .map_or(0, |j| j + 1);
            let parent: &[u8] = if parent_end == 0 {
                b"/"
            } else {
                &trimmed[..parent_end]
            };
            Some((parent, name))
        }
    }
}

/// Opens a directory part of a path (`""` meaning dirfd itself) with O_PATH.
fn open_parent(d: BorrowedFd<'_>, parent: &[u8]) -> Result<OwnedFd, Errno> {
    let mut buf = RawPath::new();
    let p: &[u8] = if parent.is_empty() { b"." } else { parent };
    if !buf.push(p) {
        return Err(Errno::NAMETOOLONG);
    }
    rustix::fs::openat(
        d,
        buf.as_cstr(),
        OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )
}

fn fd_path_cstr(d: BorrowedFd<'_>, c: &CStr, out: &mut PathBuf) -> Result<(), Unresolved> {
    let fd = rustix::fs::openat(d, c, OFlags::PATH | OFlags::CLOEXEC, Mode::empty())
        .map_err(kernel_or_failed)?;
    fd_path_of(fd.as_fd(), out)
}

/// A create (`O_CREAT` without `O_EXCL`) walked the kernel's way: the
/// parent resolved, then the last name followed by hand, so a symlink there
/// (dangling or not) resolves to what the kernel would open or create, and
/// a name that does not exist resolves to that entry in the parent.
fn resolve_create(
    d: BorrowedFd<'_>,
    bytes: &[u8],
    out: &mut PathBuf,
    via: &mut Via,
) -> Result<(), Unresolved> {
    // A loop, not a recursion, over one buffer: the path walked (the
    // caller's, then each symlink's target), its parent and name
    // NUL-terminated in place. A target is read into `out`, unused until
    // the end. `from`: the directory of the last link, where a relative
    // target starts.
    let mut path = RawPath::new();
    if !path.push(bytes) {
        return Err(if bytes.len() >= RAW_CAP {
            Unresolved::Kernel(Errno::NAMETOOLONG)
        } else {
            Unresolved::Failed(Errno::NOMEM)
        });
    }
    let mut from: Option<OwnedFd> = None;
    let mut links = 0;
    loop {
        let all = path.bytes();
        let start = match &from {
            Some(dir) if all.first() != Some(&b'/') => dir.as_fd(),
            Some(_) => CWD,
            None => d,
        };
        let Some((parent, name)) = split(all) else {
            // "/": a directory.
            return Err(Unresolved::Kernel(Errno::ISDIR));
        };
        let name_at = name.as_ptr() as usize - all.as_ptr() as usize;
        let name_len = name.len();
        // The parent: "." for a bare name, "/" when only slashes come
        // before the name, else the first `plen` bytes.
        let plen = if parent.is_empty() || all[..name_at].iter().all(|&b| b == b'/') {
            None
        } else {
            Some(parent.len())
        };
        let pc = match plen {
            None if parent.is_empty() => c".",
            None => c"/",
            Some(n) => path.c_prefix(n),
        };
        let pfd = rustix::fs::openat(
            start,
            pc,
            OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(kernel_or_failed)?;
        let (cname, name) = path.c_name(name_at, name_len);
        if name == b"." || name == b".." {
            // A directory that exists: the kernel will not create it.
            return Err(Unresolved::Kernel(Errno::ISDIR));
        }
        if name.len() >= 256 {
            return Err(Unresolved::Kernel(Errno::NAMETOOLONG));
        }
        match read_link(pfd.as_fd(), cname, &mut out.buf) {
            Ok(n) => {
                if links >= MAX_LINKS {
                    return Err(Unresolved::Kernel(Errno::LOOP));
                }
                // SAFETY: readlink wrote the first n bytes.
                let t = unsafe { out.buf.bytes(n) };
                if t.ends_with(b"/") {
                    // The kernel creates nothing through a target that ends
                    // in a slash.
                    return Err(Unresolved::Kernel(Errno::ISDIR));
                }
                path.len = 0;
                if !path.push(t) {
                    return Err(Unresolved::Failed(Errno::NOMEM));
                }
                links += 1;
                from = Some(pfd);
            }
            // Not a symlink: the object itself, not followed (a symlink that
            // appears there now is opened as one, which fails).
            Err(Errno::INVAL) => {
                let fd = rustix::fs::openat(
                    pfd.as_fd(),
                    cname,
                    OFlags::PATH | OFlags::NOFOLLOW | OFlags::CLOEXEC,
                    Mode::empty(),
                )
                .map_err(kernel_or_failed)?;
                if let Err(e) = fd_path_of(fd.as_fd(), out) {
                    // A non-directory deeper than PATH_MAX: it is this entry.
                    if e != Unresolved::Failed(Errno::NAMETOOLONG) {
                        return Err(e);
                    }
                    fd_path_of(pfd.as_fd(), out)?;
                    out.push_name(name).map_err(Unresolved::Kernel)?;
                }
                via.set_object(fd, false);
                return Ok(());
            }
            Err(Errno::NOENT) => {
                fd_path_of(pfd.as_fd(), out)?;
                out.push_name(name).map_err(Unresolved::Kernel)?;
                return via
                    .set_entry(pfd, name, false, true)
                    .map_err(Unresolved::Kernel);
            }
            Err(e) => return Err(kernel_or_failed(e)),
        }
    }
}

/// Reads the target of the symlink `name` in `dir` into `buf`: first into
/// what it holds, then, if that was too short, into room for `PATH_MAX`.
/// Its length; Err(ENAMETOOLONG) past `PATH_MAX`.
fn read_link<const N: usize>(
    dir: BorrowedFd<'_>,
    name: &CStr,
    buf: &mut Spill<N>,
) -> Result<usize, Errno> {
    let max = RAW_CAP - 1;
    let first = buf.capacity().min(max);
    let mut n = rustix::fs::readlinkat_raw(dir, name, &mut buf.buf()[..first])?
        .0
        .len();
    if n >= first && first < max {
        buf.reserve(RAW_CAP, 0)?;
        n = rustix::fs::readlinkat_raw(dir, name, &mut buf.buf()[..max])?
            .0
            .len();
    }
    if n >= max {
        return Err(Errno::NAMETOOLONG);
    }
    Ok(n)
}

/// The kernel's name for an open fd of the caller's, asked of
/// `/proc/self/fd` every time. A path remembered from earlier could only be
/// proven by a lookup that follows no symlink in any directory above it,
/// which takes more system calls than this one `readlink`.
pub fn fd_path(fd: i32, out: &mut PathBuf) -> Result<(), Unresolved> {
    if fd == libc::AT_FDCWD {
        return fd_path_cstr(CWD, c".", out);
    }
    if fd < 0 {
        return Err(Unresolved::Kernel(Errno::BADF));
    }
    // SAFETY: non-negative; used only in a syscall, which checks it.
    let fd = unsafe { BorrowedFd::borrow_raw(fd) };
    match fd_path_of(fd, out) {
        Err(Unresolved::Failed(Errno::NAMETOOLONG)) => deep_file_in_cwd(fd, out),
        r => r,
    }
}

/// The name of a non-directory deeper than `PATH_MAX`, known only by its
/// fd (`futimens` after a create, as `touch` and `cp -p` do): found in the
/// cwd, when it is there and has no other name (a second link could be
/// what the policy denies).
fn deep_file_in_cwd(fd: BorrowedFd<'_>, out: &mut PathBuf) -> Result<(), Unresolved> {
    let too_long = Unresolved::Failed(Errno::NAMETOOLONG);
    let st = rustix::fs::fstat(fd).map_err(Unresolved::Failed)?;
    if st.st_nlink != 1 {
        return Err(too_long);
    }
    let cwd = rustix::fs::openat(
        CWD,
        c".",
        OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .map_err(Unresolved::Failed)?;
    let name = name_in(cwd.as_fd(), (st.st_dev, st.st_ino)).map_err(|e| match e {
        Errno::NOENT => too_long,
        // EMFILE among them: the guard makes room and tries again.
        e => Unresolved::Failed(e),
    })?;
    fd_path_of(cwd.as_fd(), out)?;
    out.push_name(&name).map_err(Unresolved::Kernel)
}

/// The kernel's name for `fd`; for a directory deeper than the kernel's
/// names reach, the name built by [`long_dir_path`].
fn fd_path_of(fd: BorrowedFd<'_>, out: &mut PathBuf) -> Result<(), Unresolved> {
    match kernel_name(fd, out) {
        Err(Unresolved::Failed(Errno::NAMETOOLONG)) => long_dir_path(fd, out),
        r => r,
    }
}

/// `/proc/self/fd`'s name for `fd`. Failed(ENAMETOOLONG): the name is
/// longer than the kernel hands back.
fn kernel_name(fd: BorrowedFd<'_>, out: &mut PathBuf) -> Result<(), Unresolved> {
    use std::os::fd::AsRawFd;
    let mut link = [0u8; 32];
    fd_link(fd.as_raw_fd(), &mut link);
    let c = CStr::from_bytes_until_nul(&link).map_err(|_| Unresolved::Failed(Errno::INVAL))?;
    out.set_len(0);
    let read = |buf: &mut [MaybeUninit<u8>]| {
        rustix::fs::readlinkat_raw(CWD, c, buf)
            .map(|(init, _)| init.len())
            .map_err(|e| match e {
                // No such entry: a closed fd, or no /proc at all. Only the
                // first is the kernel's answer; the second fails closed.
                Errno::BADF | Errno::NOENT if rustix::io::fcntl_getfd(fd).is_err() => {
                    Unresolved::Kernel(Errno::BADF)
                }
                e => Unresolved::Failed(e),
            })
    };
    let max = PATH_CAP - 256;
    let first = out.buf.capacity().min(max);
    let mut n = read(&mut out.buf.buf()[..first])?;
    if n >= first && first < max {
        // Perhaps cut short: read again with room for PATH_MAX.
        out.buf.reserve(max, 0).map_err(Unresolved::Failed)?;
        n = read(&mut out.buf.buf()[..max])?;
    }
    if n >= max {
        return Err(Unresolved::Failed(Errno::NAMETOOLONG));
    }
    out.set_len(n);
    Ok(())
}

/// A directory and where it is: device and inode.
type Id = (u64, u64);

fn id_of(fd: BorrowedFd<'_>) -> Result<(Id, bool), Errno> {
    let st = rustix::fs::fstat(fd)?;
    let dir = rustix::fs::FileType::from_raw_mode(st.st_mode) == rustix::fs::FileType::Directory;
    Ok(((st.st_dev, st.st_ino), dir))
}

/// The name of directory `fd` when it lies deeper than `PATH_MAX`, where
/// `/proc/self/fd` answers ENAMETOOLONG although every call made in it
/// works: walked up through `..` to the nearest ancestor the kernel can
/// name, each step's name found in its parent by device and inode. Then
/// every link is checked again from that ancestor down (and its name read
/// again), so a directory moved during the walk fails closed instead of
/// yielding a path it never had. Off the hot path: it allocates.
#[cold]
#[inline(never)]
fn long_dir_path(fd: BorrowedFd<'_>, out: &mut PathBuf) -> Result<(), Unresolved> {
    let failed = Unresolved::Failed;
    let (me, dir) = id_of(fd).map_err(failed)?;
    if !dir {
        return Err(failed(Errno::NAMETOOLONG));
    }
    let o_path = OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC;
    // names[i] is the name of ids[i] in ids[i + 1].
    let (mut names, mut ids) = (Vec::<Vec<u8>>::new(), vec![me]);
    let mut cur = rustix::fs::openat(fd, c".", o_path, Mode::empty()).map_err(failed)?;
    loop {
        match kernel_name(cur.as_fd(), out) {
            Ok(()) => break,
            Err(Unresolved::Failed(Errno::NAMETOOLONG)) => {}
            Err(e) => return Err(e),
        }
        let parent = rustix::fs::openat(&cur, c"..", o_path, Mode::empty()).map_err(failed)?;
        let (pid, _) = id_of(parent.as_fd()).map_err(failed)?;
        let child = *ids.last().expect("ids starts with fd's");
        if pid == child || names.len() > 4096 {
            return Err(failed(Errno::LOOP));
        }
        names.push(name_in(parent.as_fd(), child).map_err(failed)?);
        ids.push(pid);
        cur = parent;
    }
    let base = out.as_bytes().to_vec();
    // Down again: each name still leads to the directory it was found for.
    let mut down = rustix::fs::openat(&cur, c".", o_path, Mode::empty()).map_err(failed)?;
    for (i, name) in names.iter().enumerate().rev() {
        let c = std::ffi::CString::new(name.as_slice()).map_err(|_| failed(Errno::INVAL))?;
        let next = rustix::fs::openat(
            &down,
            c.as_c_str(),
            o_path | OFlags::NOFOLLOW,
            Mode::empty(),
        )
        .map_err(failed)?;
        if id_of(next.as_fd()).map_err(failed)?.0 != ids[i] {
            return Err(failed(Errno::AGAIN));
        }
        down = next;
    }
    kernel_name(cur.as_fd(), out)?;
    if out.as_bytes() != base.as_slice() {
        return Err(failed(Errno::AGAIN));
    }
    let mut long = base;
    for name in names.iter().rev() {
        if long.as_slice() != b"/" {
            long.push(b'/');
        }
        long.extend_from_slice(name);
    }
    out.long = Some(long);
    Ok(())
}

/// The name under which directory `want` is listed in `parent`: by inode
/// first, then (a mount point lists the inode it covers) by stat of each
/// subdirectory.
fn name_in(parent: BorrowedFd<'_>, want: Id) -> Result<Vec<u8>, Errno> {
    let nofollow = rustix::fs::AtFlags::SYMLINK_NOFOLLOW;
    let is = |name: &CStr| {
        rustix::fs::statat(parent, name, nofollow).is_ok_and(|st| (st.st_dev, st.st_ino) == want)
    };
    let mut buf = vec![MaybeUninit::<u8>::uninit(); 32 * 1024];
    for by_inode in [true, false] {
        let list = rustix::fs::openat(
            parent,
            c".",
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )?;
        let mut dir = rustix::fs::RawDir::new(&list, &mut buf);
        while let Some(e) = dir.next() {
            let e = e?;
            let name = e.file_name();
            if matches!(name.to_bytes(), b"." | b"..") {
                continue;
            }
            let candidate = if by_inode {
                e.ino() == want.1
            } else {
                matches!(
                    e.file_type(),
                    rustix::fs::FileType::Directory | rustix::fs::FileType::Unknown
                )
            };
            if candidate && is(name) {
                return Ok(name.to_bytes().to_vec());
            }
        }
    }
    Err(Errno::NOENT)
}

/// An absolute path as the kernel will walk it: the base (cwd or dirfd path)
/// joined with the caller's path, unnormalized, NUL-terminated. At most
/// `PATH_MAX` bytes with the NUL; on the stack while short (see [`Spill`]).
pub struct RawPath {
    buf: Spill<RAW_INLINE>,
    len: usize,
}

/// What a [`RawPath`] holds on the stack.
const RAW_INLINE: usize = 512;

/// A [`RawPath`]'s limit, with the NUL.
const RAW_CAP: usize = 4097;

impl RawPath {
    /// An empty buffer (not zeroed, as [`PathBuf::new`]).
    #[inline(always)]
    #[allow(clippy::new_without_default)]
    pub fn new() -> RawPath {
        RawPath {
            buf: Spill::new(),
            len: 0,
        }
    }

    fn bytes(&self) -> &[u8] {
        // SAFETY: the first `len` bytes are written.
        unsafe { self.buf.bytes(self.len) }
    }

    /// The first `n` bytes of the path.
    pub fn prefix(&self, n: usize) -> &[u8] {
        &self.bytes()[..n]
    }

    /// Appends `b`, keeping room for the NUL; false when the path would be
    /// too long (or no room can be had).
    pub(crate) fn push(&mut self, b: &[u8]) -> bool {
        let end = self.len + b.len();
        if end >= RAW_CAP || self.buf.reserve(end + 1, self.len).is_err() {
            return false;
        }
        copy_into(&mut self.buf.buf()[self.len..end], b);
        self.len = end;
        true
    }

    /// The working directory, as `getcwd` gives it; false if it cannot.
    fn cwd(&mut self) -> bool {
        self.len = 0;
        for cap in [RAW_INLINE, RAW_CAP] {
            if self.buf.reserve(cap, 0).is_err() {
                return false;
            }
            let buf = &mut self.buf.buf()[..cap];
            // SAFETY: getcwd writes at most `cap - 1` bytes and a NUL into
            // our buffer; it makes one syscall and is not hooked.
            let p = unsafe { libc::getcwd(buf.as_mut_ptr().cast(), cap - 1) };
            if !p.is_null() {
                // SAFETY: getcwd NUL-terminated what it wrote.
                self.len = unsafe { CStr::from_ptr(p) }.to_bytes().len();
                return true;
            }
            if crate::guard::errno() != libc::ERANGE {
                return false;
            }
        }
        false
    }

    /// The first `n` bytes as a C string (a NUL is written after them).
    fn c_prefix(&mut self, n: usize) -> &CStr {
        // `push` kept room for it.
        self.buf.buf()[n].write(0);
        // SAFETY: bytes 0..n are written and contain no NUL (they come from
        // C strings and getcwd/readlink output); byte n is the NUL.
        unsafe { CStr::from_bytes_with_nul_unchecked(self.buf.bytes(n + 1)) }
    }

    /// The first `n` bytes as a C string, and the `len` bytes at `at`,
    /// which lie after them.
    fn c_prefix_and(&mut self, n: usize, at: usize, len: usize) -> (&CStr, &[u8]) {
        assert!(n < at && at + len <= self.len);
        self.buf.buf()[n].write(0);
        // SAFETY: bytes 0..self.len are written, byte n now being the NUL
        // (see c_prefix).
        let all = unsafe { self.buf.bytes(self.len) };
        // SAFETY: as in c_prefix: no NUL before byte n.
        let c = unsafe { CStr::from_bytes_with_nul_unchecked(&all[..=n]) };
        (c, &all[at..at + len])
    }

    /// The `len` bytes at `at` (a name) as a C string, a NUL written after
    /// them (over a slash, or past the end), and as bytes.
    fn c_name(&mut self, at: usize, len: usize) -> (&CStr, &[u8]) {
        assert!(at + len <= self.len);
        // `push` kept room for a NUL at `self.len`.
        self.buf.buf()[at + len].write(0);
        // SAFETY: bytes 0..self.len are written, and byte self.len now
        // if that is where the NUL went.
        let all = unsafe { self.buf.bytes(self.len.max(at + len + 1)) };
        // SAFETY: a name has no NUL; byte at + len is the NUL.
        let c = unsafe { CStr::from_bytes_with_nul_unchecked(&all[at..=at + len]) };
        (c, &all[at..at + len])
    }

    /// The whole path as a C string.
    pub fn as_cstr(&mut self) -> &CStr {
        self.c_prefix(self.len)
    }
}

/// The fast path: joins `path` to its base (nothing for an absolute path, the
/// cwd, or the dirfd's path) into `raw`, and folds `.`/`..` lexically into
/// `out`. Lexical folding equals the kernel's walk exactly when no symlink is
/// crossed, which the caller proves with `RESOLVE_NO_SYMLINKS` ([`verify`],
/// or an `openat2` that does the real work). `None`: take the slow path.
pub fn lexical(dirfd: i32, path: &CStr, out: &mut PathBuf, raw: &mut RawPath) -> Option<()> {
    out.set_len(0);
    if dirfd == libc::AT_FDCWD || path.to_bytes().first() == Some(&b'/') {
        join_cwd(dirfd, path, raw)?;
        return fold(raw, out);
    }
    let bytes = path.to_bytes();
    if bytes.is_empty() {
        return None;
    }
    raw.len = 0;
    fd_path(dirfd, out).ok()?;
    let base = out.as_bytes();
    if out.long.is_some() {
        return None;
    }
    if base.first() != Some(&b'/') || !raw.push(base) || !raw.push(b"/") || !raw.push(bytes) {
        return None;
    }
    fold(raw, out)
}

/// What [`join_cwd`] made of a path.
pub enum Joined {
    /// Nothing to fold: the first `n` bytes of the joined path are its
    /// lexical form.
    Plain(usize),
    /// [`fold`] gives its lexical form.
    Fold,
}

/// The first half of [`lexical`] for an absolute path or one relative to the
/// cwd, which needs no second buffer: joins `path` to the cwd into `raw`.
/// `None`: relative to another dirfd, or not joinable (take [`lexical`]).
pub fn join_cwd(dirfd: i32, path: &CStr, raw: &mut RawPath) -> Option<Joined> {
    let bytes = path.to_bytes();
    if bytes.is_empty() || (bytes[0] != b'/' && dirfd != libc::AT_FDCWD) {
        return None;
    }
    raw.len = 0;
    if bytes[0] != b'/' && (!raw.cwd() || raw.bytes().first() != Some(&b'/') || !raw.push(b"/")) {
        return None;
    }
    if !raw.push(bytes) {
        return None;
    }
    Some(match folded_len(raw.bytes()) {
        Some(n) => Joined::Plain(n),
        None => Joined::Fold,
    })
}

/// The second half of [`lexical`]: the joined path in `raw`, folded into
/// `out`.
pub fn fold(raw: &RawPath, out: &mut PathBuf) -> Option<()> {
    let raw_bytes = raw.bytes();
    if let Some(n) = folded_len(raw_bytes) {
        // Nothing to fold (the usual case): one copy.
        if n > PATH_CAP {
            return None;
        }
        out.put(0, &raw_bytes[..n]).ok()?;
        out.set_len(n);
        return Some(());
    }
    out.set_len(0);
    for comp in raw_bytes.split(|&b| b == b'/') {
        match comp {
            b"" | b"." => {}
            b".." => {
                let cur = out.as_bytes();
                out.len = cur.iter().rposition(|&b| b == b'/').unwrap_or(0);
            }
            name => {
                if out.len + 1 + name.len() > PATH_CAP {
                    return None;
                }
                let at = out.len;
                out.put(at, b"/").ok()?;
                out.put(at + 1, name).ok()?;
                out.len = at + 1 + name.len();
            }
        }
    }
    if out.len == 0 {
        out.put(0, b"/").ok()?;
        out.len = 1;
    }
    Some(())
}

/// The length of an absolute path once its trailing slashes are dropped,
/// when that is all folding would change: no empty, `.` or `..` component.
/// `None`: fold it.
fn folded_len(p: &[u8]) -> Option<usize> {
    let end = p.iter().rposition(|&b| b != b'/')? + 1;
    let s = &p[..end];
    if s[0] != b'/' {
        return None;
    }
    // What the current name is so far: 0 nothing, 1 ".", 2 "..", 3 a name.
    let mut name = 0u8;
    for &b in &s[1..] {
        if b == b'/' {
            if name < 3 {
                return None;
            }
            name = 0;
        } else if b == b'.' && name < 3 {
            name += 1;
        } else {
            name = 3;
        }
    }
    (name == 3).then_some(end)
}

/// Opens the path [`lexical`] folded with the caller's flags, refusing to
/// cross a symlink, so the object opened is the one whose lexical path was
/// checked: relative to the caller's dirfd (`RESOLVE_BENEATH`: its path
/// read from /proc only named it), else the absolute form in `raw`. `None`: a symlink
/// or `..` above the dirfd was in the way (or openat2 is unavailable):
/// take the slow path.
pub fn open_exact(
    dirfd: i32,
    path: &CStr,
    raw: &mut RawPath,
    flags: i32,
    mode: u32,
) -> Option<Result<OwnedFd, Errno>> {
    let needs_mode = flags & libc::O_CREAT != 0 || flags & libc::O_TMPFILE == libc::O_TMPFILE;
    let mode = if needs_mode { mode & 0o7777 } else { 0 };
    let oflags = OFlags::from_bits_retain(flags as u32);
    let beneath = dirfd != libc::AT_FDCWD && path.to_bytes().first() != Some(&b'/');
    let r = if beneath {
        openat2(
            dir(dirfd).ok()?,
            path,
            oflags,
            Mode::from_raw_mode(mode),
            ResolveFlags::NO_SYMLINKS | ResolveFlags::BENEATH,
        )
    } else {
        openat2(
            CWD,
            raw.as_cstr(),
            oflags,
            Mode::from_raw_mode(mode),
            ResolveFlags::NO_SYMLINKS,
        )
    };
    match r {
        Ok(fd) => Some(Ok(fd)),
        // ELOOP: a symlink; EXDEV/EINVAL/E2BIG/ENOSYS/EAGAIN: openat2 itself;
        // EACCES/EPERM: maybe only on the absolute way to a relative path
        // (an untraversable ancestor of the cwd): let the real call answer.
        Err(
            Errno::LOOP
            | Errno::XDEV
            | Errno::INVAL
            | Errno::TOOBIG
            | Errno::NOSYS
            | Errno::AGAIN
            | Errno::ACCESS
            | Errno::PERM,
        ) => None,
        Err(e) => Some(Err(e)),
    }
}

/// The decimal digits of `n`, at the end of `buf`; returns where they start.
pub(crate) fn decimal(n: u32, buf: &mut [u8; 10]) -> usize {
    let (mut n, mut i) = (n, buf.len());
    loop {
        i -= 1;
        buf[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            return i;
        }
    }
}

/// Writes `/proc/self/fd/<fd>` at the start of `buf` (which must have room
/// for 24 bytes); returns its length. The byte after it is left as it was.
fn fd_link(fd: i32, buf: &mut [u8]) -> usize {
    let prefix = b"/proc/self/fd/";
    buf[..prefix.len()].copy_from_slice(prefix);
    let mut digits = [0u8; 10];
    let i = decimal(fd as u32, &mut digits);
    let d = &digits[i..];
    buf[prefix.len()..prefix.len() + d.len()].copy_from_slice(d);
    prefix.len() + d.len()
}

/// How a checked call reaches the object that was checked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reach {
    /// With the caller's own arguments: nothing was resolved, or the call
    /// acts on the caller's fd, or on `/`.
    Caller,
    /// The object itself, held open with `O_PATH`.
    Object,
    /// A directory entry: its parent held open with `O_PATH` (or the
    /// caller's own dirfd), and the name.
    Entry,
}

/// Room on the stack for `/proc/self/fd/N/` plus a name of 128 bytes, a
/// slash and the NUL: every hook holds two. A longer name (up to
/// `NAME_MAX`) moves to a mapping (see [`Spill`]).
const VIA_INLINE: usize = 32 + 128 + 2;

/// What a check leaves for the call: how to reach exactly the object the
/// decision was about. Hooks pass [`Via::dirfd`] and [`Via::path`] to the
/// real `*at` function, or [`Via::abs`] to a function that takes a path
/// only; either names the object through the fd held here, never through
/// the caller's string again.
pub struct Via {
    reach: Reach,
    fd: i32,
    owned: bool,
    /// The name did not exist when checked: a create must not follow a
    /// symlink that appears there since.
    created: bool,
    caller_dirfd: i32,
    caller_path: *const libc::c_char,
    /// `/proc/self/fd/N` (an object) or `/proc/self/fd/N/name` (an entry),
    /// NUL-terminated; written before `reach` leaves `Caller`, left
    /// uninitialized until then (every hook makes one, checked or not).
    buf: Spill<VIA_INLINE>,
    /// Where the name starts in `buf`.
    name_at: usize,
}

impl Via {
    /// Nothing resolved yet: the caller's own arguments.
    pub fn caller(dirfd: i32, path: *const libc::c_char) -> Via {
        Via {
            reach: Reach::Caller,
            fd: -1,
            owned: false,
            created: false,
            caller_dirfd: dirfd,
            caller_path: path,
            buf: Spill::new(),
            name_at: 0,
        }
    }

    /// Back to the caller's arguments (a route given up half-way).
    pub fn reset(&mut self) {
        self.close();
        self.reach = Reach::Caller;
        self.created = false;
    }

    fn close(&mut self) {
        if self.owned && self.fd >= 0 {
            // SAFETY: an fd this Via opened and owns.
            drop(unsafe { <OwnedFd as std::os::fd::FromRawFd>::from_raw_fd(self.fd) });
        }
        self.owned = false;
        self.fd = -1;
    }

    /// How the call will reach its object.
    pub fn reach(&self) -> Reach {
        self.reach
    }

    /// Writes `bytes` at `at` (room was made).
    fn put(&mut self, at: usize, bytes: &[u8]) {
        copy_into(&mut self.buf.buf()[at..at + bytes.len()], bytes);
    }

    fn put_fd_link(&mut self, fd: i32) -> usize {
        let mut link = [0u8; 24];
        let n = fd_link(fd, &mut link);
        self.put(0, &link[..n]);
        n
    }

    /// The object itself, held by `fd`; `slash`: the caller's path ended in
    /// one (the object is a directory, and `/proc/self/fd/N/` is followed
    /// even by calls that do not follow a last symlink).
    pub(crate) fn set_object(&mut self, fd: OwnedFd, slash: bool) {
        use std::os::fd::IntoRawFd;
        self.close();
        self.fd = fd.into_raw_fd();
        self.owned = true;
        self.reach = Reach::Object;
        self.created = false;
        let mut n = self.put_fd_link(self.fd);
        if slash {
            self.put(n, b"/");
            n += 1;
        }
        self.put(n, b"\0");
        self.name_at = 0;
    }

    fn entry(
        &mut self,
        fd: i32,
        owned: bool,
        name: &[u8],
        slash: bool,
        created: bool,
    ) -> Result<(), Errno> {
        self.close();
        // Held first, so a failure below still closes it.
        self.fd = fd;
        self.owned = owned;
        self.reach = Reach::Caller;
        if name.len() > 255 {
            return Err(Errno::NAMETOOLONG);
        }
        self.buf.reserve(32 + name.len() + 2, 0)?;
        self.reach = Reach::Entry;
        self.created = created;
        let mut n = self.put_fd_link(fd);
        self.put(n, b"/");
        n += 1;
        self.name_at = n;
        self.put(n, name);
        n += name.len();
        if slash {
            self.put(n, b"/");
            n += 1;
        }
        self.put(n, b"\0");
        Ok(())
    }

    /// The entry `name` in the directory held by `pfd`.
    pub(crate) fn set_entry(
        &mut self,
        pfd: OwnedFd,
        name: &[u8],
        slash: bool,
        created: bool,
    ) -> Result<(), Errno> {
        use std::os::fd::IntoRawFd;
        self.entry(pfd.into_raw_fd(), true, name, slash, created)
    }

    /// The entry `name` in the caller's own directory fd.
    pub(crate) fn set_entry_borrowed(
        &mut self,
        dirfd: i32,
        name: &[u8],
        slash: bool,
        created: bool,
    ) -> Result<(), Errno> {
        self.entry(dirfd, false, name, slash, created)
    }

    /// The caller's own path argument.
    pub fn caller_path(&self) -> *const libc::c_char {
        self.caller_path
    }

    /// The dirfd for an `*at` call.
    pub fn dirfd(&self) -> libc::c_int {
        match self.reach {
            Reach::Caller => self.caller_dirfd,
            Reach::Object => libc::AT_FDCWD,
            Reach::Entry => self.fd,
        }
    }

    /// The path for an `*at` call (relative to [`Via::dirfd`]).
    pub fn path(&self) -> *const libc::c_char {
        match self.reach {
            Reach::Caller => self.caller_path,
            // SAFETY: name_at lies within the written link.
            Reach::Object | Reach::Entry => unsafe { self.buf.as_ptr().add(self.name_at).cast() },
        }
    }

    /// A path that names the object on its own, for calls without a dirfd.
    pub fn abs(&self) -> *const libc::c_char {
        match self.reach {
            Reach::Caller => self.caller_path,
            Reach::Object | Reach::Entry => self.buf.as_ptr().cast(),
        }
    }

    /// Open flags for the call: an object is reopened through its
    /// `/proc/self/fd` link (a magic link `O_NOFOLLOW` would refuse); a
    /// name that did not exist is created without following a symlink that
    /// appeared there since.
    pub fn oflags(&self, flags: libc::c_int) -> libc::c_int {
        match self.reach {
            Reach::Object => flags & !libc::O_NOFOLLOW,
            Reach::Entry if self.created => flags | libc::O_NOFOLLOW,
            _ => flags,
        }
    }

    /// `*at` flags for the call: an object's `/proc/self/fd` link must be
    /// followed.
    pub fn atflags(&self, flags: libc::c_int) -> libc::c_int {
        match self.reach {
            Reach::Object => flags & !libc::AT_SYMLINK_NOFOLLOW,
            _ => flags,
        }
    }

    /// Whether a create may have met a symlink planted after the check
    /// (ELOOP from a name added `O_NOFOLLOW` by [`Via::oflags`]).
    pub fn planted(&self, flags: libc::c_int, errno: libc::c_int) -> bool {
        self.reach == Reach::Entry
            && self.created
            && flags & libc::O_NOFOLLOW == 0
            && errno == libc::ELOOP
    }
}

impl Drop for Via {
    fn drop(&mut self) {
        self.close();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lexical_folds_like_a_symlink_free_walk() {
        let mut out = PathBuf::new();
        let mut raw = RawPath::new();
        let f = |p: &CStr, out: &mut PathBuf, raw: &mut RawPath| {
            lexical(libc::AT_FDCWD, p, out, raw).map(|_| out.as_bytes().to_vec())
        };
        assert_eq!(
            f(c"/a/./b//c/../d/", &mut out, &mut raw),
            Some(b"/a/b/d".to_vec())
        );
        assert_eq!(f(c"/../..", &mut out, &mut raw), Some(b"/".to_vec()));
        assert_eq!(f(c"/", &mut out, &mut raw), Some(b"/".to_vec()));
        let cwd = std::env::current_dir().unwrap();
        let want = cwd.join("x");
        assert_eq!(
            f(c"./x", &mut out, &mut raw),
            Some(want.as_os_str().as_encoded_bytes().to_vec())
        );
        assert_eq!(f(c"", &mut out, &mut raw), None);
    }

    #[test]
    fn folded_len_only_when_nothing_folds() {
        assert_eq!(folded_len(b"/a/b/c"), Some(6));
        assert_eq!(folded_len(b"/a/b/c//"), Some(6));
        assert_eq!(folded_len(b"/a/.b/c.."), Some(9));
        for p in [
            &b"/"[..],
            b"//",
            b"/a//b",
            b"/a/./b",
            b"/a/..",
            b"/a/.",
            b"/./a",
            b"a/b",
            b"",
        ] {
            assert_eq!(folded_len(p), None, "{:?}", String::from_utf8_lossy(p));
        }
    }

    #[test]
    fn a_directory_deeper_than_path_max_is_named_in_full() {
        let top = std::env::temp_dir().join(format!("fsguard-deep-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&top);
        std::fs::create_dir(&top).unwrap();
        let top = std::fs::canonicalize(&top).unwrap();
        let name = "d".repeat(250);
        let cname = std::ffi::CString::new(name.as_str()).unwrap();
        let o_path = OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC;
        let mut fd = rustix::fs::openat(CWD, top.as_os_str(), o_path, Mode::empty()).unwrap();
        let mut want = top.as_os_str().as_encoded_bytes().to_vec();
        for _ in 0..24 {
            rustix::fs::mkdirat(&fd, cname.as_c_str(), Mode::from_raw_mode(0o700)).unwrap();
            fd = rustix::fs::openat(&fd, cname.as_c_str(), o_path, Mode::empty()).unwrap();
            want.push(b'/');
            want.extend_from_slice(name.as_bytes());
        }
        assert!(want.len() > 6000);
        use std::os::fd::AsRawFd;
        let mut out = PathBuf::new();
        fd_path(fd.as_raw_fd(), &mut out).unwrap();
        assert_eq!(out.as_bytes(), want.as_slice());
        // A name pushed on a long path stays long; the next short one
        // goes back to the stack buffer.
        out.push_name(b"x").unwrap();
        assert_eq!(out.as_bytes().len(), want.len() + 2);
        fd_path_cstr(CWD, c"/", &mut out).unwrap();
        assert_eq!(out.as_bytes(), b"/");
        drop(fd);
        std::fs::remove_dir_all(&top).unwrap();
    }

    #[test]
    fn an_entry_right_below_the_root_keeps_its_name() {
        let mut out = PathBuf::new();
        for (p, want) in [
            (c"/tmp", &b"/tmp"[..]),
            (c"//tmp", b"/tmp"),
            (c"/fsguard-no-such-name", b"/fsguard-no-such-name"),
        ] {
            for follow in [Follow::Entry, Follow::NoFollow, Follow::Create] {
                resolve(libc::AT_FDCWD, Some(p), follow, &mut out).unwrap();
                assert_eq!(out.as_bytes(), want, "{p:?} {follow:?}");
            }
        }
    }

    #[test]
    fn split_names() {
        assert_eq!(split(b"a/b/c"), Some((&b"a/b"[..], &b"c"[..])));
        assert_eq!(split(b"a/b/c//"), Some((&b"a/b"[..], &b"c"[..])));
        assert_eq!(split(b"a//c"), Some((&b"a"[..], &b"c"[..])));
        assert_eq!(split(b"c"), Some((&b""[..], &b"c"[..])));
        assert_eq!(split(b"/c"), Some((&b"/"[..], &b"c"[..])));
        assert_eq!(split(b"//c/"), Some((&b"/"[..], &b"c"[..])));
        assert_eq!(split(b"/"), None);
        assert_eq!(split(b"///"), None);
    }
}
