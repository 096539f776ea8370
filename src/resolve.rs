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

use rustix::fs::{Mode, OFlags, CWD};
use rustix::io::Errno;

/// Longest resolved path the kernel hands back (`PATH_MAX`), plus one name.
pub const PATH_CAP: usize = 4096 + 256;

/// Dangling symlinks followed while resolving an `O_CREAT` target. Lower than
/// the kernel's 40 to bound stack use; a longer chain fails with ELOOP.
const MAX_LINKS: usize = 8;

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

/// A resolved path in a stack buffer: absolute and canonical, or an
/// anonymous object name (`pipe:[12]`).
///
/// Left uninitialized: zeroing 4 KiB per checked call would cost more than
/// the check.
pub struct PathBuf {
    buf: [MaybeUninit<u8>; PATH_CAP],
    len: usize,
}

impl PathBuf {
    /// An empty buffer. Not a `const fn`: a constant would be copied in,
    /// zeroing 4 KiB per call.
    #[inline(always)]
    #[allow(clippy::new_without_default)]
    pub fn new() -> PathBuf {
        PathBuf {
            // SAFETY: an array of MaybeUninit needs no initialization.
            buf: unsafe { MaybeUninit::uninit().assume_init() },
            len: 0,
        }
    }

    /// The path bytes.
    pub fn as_bytes(&self) -> &[u8] {
        // SAFETY: the first `len` bytes were written by readlink or push_name.
        unsafe { std::slice::from_raw_parts(self.buf.as_ptr().cast::<u8>(), self.len) }
    }

    fn put(&mut self, at: usize, bytes: &[u8]) {
        copy_into(&mut self.buf[at..at + bytes.len()], bytes);
    }

    fn push_name(&mut self, name: &[u8]) -> Result<(), Errno> {
        let need = usize::from(self.len > 1) + name.len();
        if self.len + need > PATH_CAP {
            return Err(Errno::NAMETOOLONG);
        }
        if self.as_bytes() != b"/" {
            self.put(self.len, b"/");
            self.len += 1;
        }
        self.put(self.len, name);
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

/// Resolves `path` relative to `dirfd` into `out`.
///
/// # Safety
/// `path` must be NULL or point to a NUL-terminated string.
pub unsafe fn resolve(
    dirfd: i32,
    path: *const libc::c_char,
    follow: Follow,
    out: &mut PathBuf,
) -> Result<(), Unresolved> {
    if path.is_null() {
        // utimensat(fd, NULL, …) acts on fd; with AT_FDCWD the kernel says EFAULT.
        if dirfd == libc::AT_FDCWD || follow != Follow::Fd {
            return Err(Unresolved::Kernel(Errno::FAULT));
        }
        return fd_path(dirfd, out);
    }
    if follow == Follow::Fd {
        return fd_path(dirfd, out);
    }
    // SAFETY: the caller guarantees a NUL-terminated string.
    let path = unsafe { CStr::from_ptr(path) };
    resolve_cstr(dirfd, path, follow, out)
}

fn resolve_cstr(
    dirfd: i32,
    path: &CStr,
    follow: Follow,
    out: &mut PathBuf,
) -> Result<(), Unresolved> {
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
    let d = dir(dirfd).map_err(Unresolved::Kernel)?;
    let follow = match follow {
        Follow::NoFollow if bytes.ends_with(b"/") => Follow::Yes,
        Follow::NoFollow => Follow::Entry,
        f => f,
    };
    match follow {
        Follow::Entry | Follow::NoFollow => resolve_entry(d, bytes, out),
        Follow::Yes | Follow::Create | Follow::Fd => {
            match rustix::fs::openat(d, path, OFlags::PATH | OFlags::CLOEXEC, Mode::empty()) {
                Ok(fd) => fd_path_of(fd.as_fd(), out),
                // Only a create acts on a missing object; for the rest the
                // kernel fails with ENOENT.
                Err(Errno::NOENT) if follow == Follow::Create => {
                    resolve_missing(d, bytes, true, out, 0)
                }
                Err(e) => Err(kernel_or_failed(e)),
            }
        }
    }
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
    let mut buf = [0u8; 4097];
    let p: &[u8] = if parent.is_empty() { b"." } else { parent };
    if p.len() >= buf.len() {
        return Err(Errno::NAMETOOLONG);
    }
    buf[..p.len()].copy_from_slice(p);
    let c = CStr::from_bytes_until_nul(&buf).map_err(|_| Errno::INVAL)?;
    rustix::fs::openat(
        d,
        c,
        OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )
}

/// The entry itself: the parent resolved, the name appended unresolved.
fn resolve_entry(d: BorrowedFd<'_>, bytes: &[u8], out: &mut PathBuf) -> Result<(), Unresolved> {
    let Some((parent, name)) = split(bytes) else {
        // "/" names no entry; the object is the root directory.
        return fd_path_cstr(d, c"/", out);
    };
    if name == b"." || name == b".." {
        // Not an entry the kernel would act on by name; be exact about it.
        let mut buf = [0u8; 4097];
        if bytes.len() >= buf.len() {
            return Err(Unresolved::Kernel(Errno::NAMETOOLONG));
        }
        buf[..bytes.len()].copy_from_slice(bytes);
        let c = CStr::from_bytes_until_nul(&buf).map_err(|_| Unresolved::Kernel(Errno::INVAL))?;
        return fd_path_cstr(d, c, out);
    }
    let pfd = open_parent(d, parent).map_err(kernel_or_failed)?;
    fd_path_of(pfd.as_fd(), out)?;
    out.push_name(name).map_err(Unresolved::Kernel)
}

fn fd_path_cstr(d: BorrowedFd<'_>, c: &CStr, out: &mut PathBuf) -> Result<(), Unresolved> {
    let fd = rustix::fs::openat(d, c, OFlags::PATH | OFlags::CLOEXEC, Mode::empty())
        .map_err(kernel_or_failed)?;
    fd_path_of(fd.as_fd(), out)
}

/// The path does not exist: resolve through the parent. Under `O_CREAT`, a
/// dangling symlink as last component resolves to its target, which is what
/// the kernel would create.
fn resolve_missing(
    d: BorrowedFd<'_>,
    bytes: &[u8],
    create: bool,
    out: &mut PathBuf,
    depth: usize,
) -> Result<(), Unresolved> {
    let Some((parent, name)) = split(bytes) else {
        return Err(Unresolved::Kernel(Errno::NOENT));
    };
    if name == b"." || name == b".." {
        return Err(Unresolved::Kernel(Errno::NOENT));
    }
    let pfd = open_parent(d, parent).map_err(kernel_or_failed)?;
    if create {
        let mut name_buf = [0u8; 256];
        if name.len() >= name_buf.len() {
            return Err(Unresolved::Kernel(Errno::NAMETOOLONG));
        }
        name_buf[..name.len()].copy_from_slice(name);
        let cname =
            CStr::from_bytes_until_nul(&name_buf).map_err(|_| Unresolved::Kernel(Errno::INVAL))?;
        let mut target = [0u8; 4097];
        match rustix::fs::readlinkat_raw(pfd.as_fd(), cname, &mut target[..4096]) {
            Ok(n) => {
                if depth >= MAX_LINKS {
                    return Err(Unresolved::Kernel(Errno::LOOP));
                }
                if n >= 4096 {
                    return Err(Unresolved::Kernel(Errno::NAMETOOLONG));
                }
                let t = &target[..n];
                let start = if t.first() == Some(&b'/') {
                    CWD
                } else {
                    pfd.as_fd()
                };
                let c = CStr::from_bytes_until_nul(&target)
                    .map_err(|_| Unresolved::Kernel(Errno::INVAL))?;
                return match rustix::fs::openat(
                    start,
                    c,
                    OFlags::PATH | OFlags::CLOEXEC,
                    Mode::empty(),
                ) {
                    Ok(fd) => fd_path_of(fd.as_fd(), out),
                    Err(Errno::NOENT) => resolve_missing(start, t, true, out, depth + 1),
                    Err(e) => Err(kernel_or_failed(e)),
                };
            }
            Err(Errno::INVAL) | Err(Errno::NOENT) => {}
            Err(e) => return Err(kernel_or_failed(e)),
        }
    }
    fd_path_of(pfd.as_fd(), out)?;
    out.push_name(name).map_err(Unresolved::Kernel)
}

/// The kernel's name for an open fd of the caller's.
pub fn fd_path(fd: i32, out: &mut PathBuf) -> Result<(), Unresolved> {
    if fd == libc::AT_FDCWD {
        return fd_path_cstr(CWD, c".", out);
    }
    if fd < 0 {
        return Err(Unresolved::Kernel(Errno::BADF));
    }
    let mut put = |p: &[u8]| {
        if p.len() > PATH_CAP {
            return false;
        }
        out.put(0, p);
        out.len = p.len();
        true
    };
    let id = match crate::pathcache::lookup(fd, &mut put) {
        Ok(true) => return Ok(()),
        Ok(false) => None,
        Err(id) => id,
    };
    fd_path_uncached(fd, out)?;
    if let Some(id) = id {
        crate::pathcache::store(id, out.as_bytes());
    }
    Ok(())
}

/// The kernel's name for an fd, from `/proc/self/fd`.
fn fd_path_uncached(fd: i32, out: &mut PathBuf) -> Result<(), Unresolved> {
    // SAFETY: non-negative; used only in a syscall, which checks it.
    fd_path_of(unsafe { BorrowedFd::borrow_raw(fd) }, out)
}

fn fd_path_of(fd: BorrowedFd<'_>, out: &mut PathBuf) -> Result<(), Unresolved> {
    use std::os::fd::AsRawFd;
    let mut link = [0u8; 32];
    let prefix = b"/proc/self/fd/";
    link[..prefix.len()].copy_from_slice(prefix);
    let mut n = fd.as_raw_fd() as u32;
    let mut digits = [0u8; 10];
    let mut i = digits.len();
    loop {
        i -= 1;
        digits[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    let d = &digits[i..];
    link[prefix.len()..prefix.len() + d.len()].copy_from_slice(d);
    let c = CStr::from_bytes_until_nul(&link).map_err(|_| Unresolved::Failed(Errno::INVAL))?;
    let (init, _) = rustix::fs::readlinkat_raw(CWD, c, &mut out.buf[..PATH_CAP - 256]).map_err(
        |e| match e {
            // No such entry: a closed fd, or no /proc at all. Only the
            // first is the kernel's answer; the second fails closed.
            Errno::BADF | Errno::NOENT if rustix::io::fcntl_getfd(fd).is_err() => {
                Unresolved::Kernel(Errno::BADF)
            }
            e => Unresolved::Failed(e),
        },
    )?;
    let n = init.len();
    if n >= PATH_CAP - 256 {
        return Err(Unresolved::Kernel(Errno::NAMETOOLONG));
    }
    out.len = n;
    Ok(())
}

/// An absolute path as the kernel will walk it: the base (cwd or dirfd path)
/// joined with the caller's path, unnormalized, NUL-terminated.
pub struct RawPath {
    buf: [MaybeUninit<u8>; 4097],
    len: usize,
}

impl RawPath {
    /// An empty buffer (not zeroed, as [`PathBuf::new`]).
    #[inline(always)]
    #[allow(clippy::new_without_default)]
    pub fn new() -> RawPath {
        RawPath {
            // SAFETY: an array of MaybeUninit needs no initialization.
            buf: unsafe { MaybeUninit::uninit().assume_init() },
            len: 0,
        }
    }

    fn bytes(&self) -> &[u8] {
        // SAFETY: the first `len` bytes are written.
        unsafe { std::slice::from_raw_parts(self.buf.as_ptr().cast::<u8>(), self.len) }
    }

    fn push(&mut self, b: &[u8]) -> bool {
        if self.len + b.len() >= self.buf.len() {
            return false;
        }
        copy_into(&mut self.buf[self.len..self.len + b.len()], b);
        self.len += b.len();
        true
    }

    /// The first `n` bytes as a C string (a NUL is written after them).
    fn c_prefix(&mut self, n: usize) -> &CStr {
        self.buf[n].write(0);
        // SAFETY: bytes 0..n are written and contain no NUL (they come from
        // C strings and getcwd/readlink output); byte n is the NUL.
        unsafe {
            CStr::from_bytes_with_nul_unchecked(std::slice::from_raw_parts(
                self.buf.as_ptr().cast::<u8>(),
                n + 1,
            ))
        }
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
    let bytes = path.to_bytes();
    if bytes.is_empty() {
        return None;
    }
    raw.len = 0;
    if bytes[0] != b'/' {
        if dirfd == libc::AT_FDCWD {
            // SAFETY: getcwd writes at most `len` bytes into our buffer; it
            // makes one syscall and is not hooked.
            let p = unsafe { libc::getcwd(raw.buf.as_mut_ptr().cast(), raw.buf.len() - 1) };
            if p.is_null() {
                return None;
            }
            // SAFETY: getcwd NUL-terminated what it wrote.
            raw.len = unsafe { CStr::from_ptr(p) }.to_bytes().len();
        } else {
            fd_path(dirfd, out).ok()?;
            let base = out.as_bytes();
            if base.first() != Some(&b'/') || !raw.push(base) {
                return None;
            }
        }
        if raw.bytes().first() != Some(&b'/') || !raw.push(b"/") {
            return None;
        }
    }
    if !raw.push(bytes) {
        return None;
    }
    // Fold into `out`.
    out.len = 0;
    let raw_bytes = raw.bytes();
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
                out.put(at, b"/");
                out.put(at + 1, name);
                out.len = at + 1 + name.len();
            }
        }
    }
    if out.len == 0 {
        out.put(0, b"/");
        out.len = 1;
    }
    Some(())
}

/// Proves a lexical resolution exact: no symlink on the way (`Entry`: to the
/// parent; otherwise to the object itself). `Some(Ok)`: exact; a missing
/// component proves it too for entries and creates, which the kernel makes
/// exactly there. `Some(Err(ENOENT))`: the object must exist and does not,
/// so the kernel fails the call. `None`: take the slow path.
pub fn verify(raw: &mut RawPath, follow: Follow) -> Option<Result<(), Errno>> {
    let how = OFlags::PATH | OFlags::CLOEXEC;
    let no_links = rustix::fs::ResolveFlags::NO_SYMLINKS;
    let follow = match follow {
        Follow::NoFollow if raw.bytes().ends_with(b"/") => Follow::Yes,
        Follow::NoFollow => Follow::Entry,
        f => f,
    };
    let target: &CStr = match follow {
        Follow::Fd => return None,
        Follow::Yes | Follow::Create => raw.as_cstr(),
        Follow::Entry | Follow::NoFollow => {
            let (parent, name) = split(raw.bytes())?;
            if name == b"." || name == b".." {
                return None;
            }
            let n = parent.len();
            raw.c_prefix(n)
        }
    };
    match rustix::fs::openat2(CWD, target, how, Mode::empty(), no_links) {
        Ok(_) => Some(Ok(())),
        Err(Errno::NOENT) if follow == Follow::Yes => Some(Err(Errno::NOENT)),
        Err(Errno::NOENT) => Some(Ok(())),
        Err(_) => None,
    }
}

/// Opens `raw` with the caller's flags, refusing to cross a symlink, so the
/// object opened is the one whose lexical path was checked. `None`: a
/// symlink was in the way (or openat2 is unavailable): take the slow path.
pub fn open_exact(raw: &mut RawPath, flags: i32, mode: u32) -> Option<Result<OwnedFd, Errno>> {
    let needs_mode = flags & libc::O_CREAT != 0 || flags & libc::O_TMPFILE == libc::O_TMPFILE;
    let mode = if needs_mode { mode & 0o7777 } else { 0 };
    let oflags = OFlags::from_bits_retain(flags as u32);
    match rustix::fs::openat2(
        CWD,
        raw.as_cstr(),
        oflags,
        Mode::from_raw_mode(mode),
        rustix::fs::ResolveFlags::NO_SYMLINKS,
    ) {
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
