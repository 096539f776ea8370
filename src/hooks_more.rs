//! The rest of libc's path entry points: temp files, glibc functions that
//! open paths internally (so no other hook sees them), nodes, extended
//! attributes, calls on fds that change a file, file handles, AF_UNIX
//! `bind`, and metadata reads (confined only with `hide_outside`).
//!
//! Declared with the same `hooks!` table as the core set; the few calls
//! that need more than "check, then call" are written out below with their
//! own rows in [`CUSTOM`].

use std::ffi::{c_char, c_int, c_long, c_uint, c_void};

use fsguard_policy::Access;
use libc::{dev_t, gid_t, mode_t, size_t, ssize_t, uid_t, AT_FDCWD, FILE};

use crate::guard::{self, set_errno, CArg, Target};
use crate::hooks::{at_follow, chk, link_follow, open_access, row, CheckInfo, HookInfo};
use crate::resolve::Follow;

const READ: Option<Access> = Some(Access::Read);
const WRITE: Option<Access> = Some(Access::Write);
/// A metadata read: checked only when `hide_outside` is set.
const META: Option<Access> = None;

/// glibc's `P_tmpdir`: `tmpfile` creates its file there, ignoring TMPDIR.
const P_TMPDIR: CArg<'static> = CArg::of(c"/tmp");

const FTW_PHYS: c_int = 1;
const FTS_COMFOLLOW: c_int = 0x1;
const FTS_LOGICAL: c_int = 0x2;
const GLOB_ALTDIRFUNC: c_int = 1 << 9;

/// An fd argument as a dirfd for [`Follow::Fd`]: `AT_FDCWD` is not an fd
/// here, so it must fail EBADF like any other bad fd, not name the cwd.
pub fn fd_arg(fd: c_int) -> c_int {
    if fd == AT_FDCWD {
        -1
    } else {
        fd
    }
}

/// readlinkat with an empty path reads the link the dirfd names.
pub fn entry_or_fd(path: CArg<'_>) -> Follow {
    if path.is_empty() {
        Follow::Fd
    } else {
        Follow::Entry
    }
}

/// A template glibc accepts (`XXXXXX` before the suffix) creates a file: a
/// write. Any other is refused by glibc with EINVAL before it touches the
/// filesystem, so it is let through (as metadata) to get that errno.
fn temp_access(template: CArg<'_>, suffixlen: c_int) -> Option<Access> {
    let Some(t) = (suffixlen >= 0).then(|| template.get()).flatten() else {
        return META;
    };
    let t = t.to_bytes();
    let end = t.len().checked_sub(suffixlen as usize);
    match end.and_then(|e| Some(&t[e.checked_sub(6)?..e])) {
        Some(b"XXXXXX") => WRITE,
        _ => META,
    }
}

/// nftw's FTW_PHYS reports a symlinked start path instead of following it.
fn ftw_follow(flags: c_int) -> Follow {
    if flags & FTW_PHYS != 0 {
        Follow::NoFollow
    } else {
        Follow::Yes
    }
}

fn fts_follow(options: c_int) -> Follow {
    if options & (FTS_COMFOLLOW | FTS_LOGICAL) != 0 {
        Follow::Yes
    } else {
        Follow::NoFollow
    }
}

type MknodatFn = unsafe extern "C" fn(c_int, *const c_char, mode_t, dev_t) -> c_int;
type XmknodatFn = unsafe extern "C" fn(c_int, c_int, *const c_char, mode_t, *mut dev_t) -> c_int;
type MkdiratFn = unsafe extern "C" fn(c_int, *const c_char, mode_t) -> c_int;
type FutimesatFn = unsafe extern "C" fn(c_int, *const c_char, *const libc::timeval) -> c_int;

hooks! {
    table MORE;
    // Temp files: glibc creates them through internal calls.
    /// The template's directory must be writable; the name is the template
    /// as given (its XXXXXX not yet replaced).
    "mkstemp" as "mkstemp"
    fn mkstemp(template: *const c_char) -> c_int,
        fail -1,
        check [temp_access(template, 0), Follow::Entry, AT_FDCWD, template, false];
    "mkstemp64" as "mkstemp"
    fn mkstemp64(template: *const c_char) -> c_int,
        fail -1,
        check [temp_access(template, 0), Follow::Entry, AT_FDCWD, template, false];
    "mkostemp" as "mkostemp"
    fn mkostemp(template: *const c_char, flags: c_int) -> c_int,
        fail -1,
        check [temp_access(template, 0), Follow::Entry, AT_FDCWD, template, false];
    "mkostemp64" as "mkostemp"
    fn mkostemp64(template: *const c_char, flags: c_int) -> c_int,
        fail -1,
        check [temp_access(template, 0), Follow::Entry, AT_FDCWD, template, false];
    "mkstemps" as "mkstemps"
    fn mkstemps(template: *const c_char, suffixlen: c_int) -> c_int,
        fail -1,
        check [temp_access(template, suffixlen), Follow::Entry, AT_FDCWD, template, false];
    "mkstemps64" as "mkstemps"
    fn mkstemps64(template: *const c_char, suffixlen: c_int) -> c_int,
        fail -1,
        check [temp_access(template, suffixlen), Follow::Entry, AT_FDCWD, template, false];
    "mkostemps" as "mkostemps"
    fn mkostemps(template: *const c_char, suffixlen: c_int, flags: c_int) -> c_int,
        fail -1,
        check [temp_access(template, suffixlen), Follow::Entry, AT_FDCWD, template, false];
    "mkostemps64" as "mkostemps"
    fn mkostemps64(template: *const c_char, suffixlen: c_int, flags: c_int) -> c_int,
        fail -1,
        check [temp_access(template, suffixlen), Follow::Entry, AT_FDCWD, template, false];
    "mkdtemp" as "mkdtemp"
    fn mkdtemp(template: *const c_char) -> *mut c_char,
        fail std::ptr::null_mut(),
        check [temp_access(template, 0), Follow::Entry, AT_FDCWD, template, false];
    /// Checked as the `O_TMPFILE` open of `P_tmpdir` glibc makes.
    "tmpfile" as "tmpfile"
    fn tmpfile() -> *mut FILE,
        fail std::ptr::null_mut(),
        check [WRITE, Follow::Yes, AT_FDCWD, P_TMPDIR, false];
    "tmpfile64" as "tmpfile"
    fn tmpfile64() -> *mut FILE,
        fail std::ptr::null_mut(),
        check [WRITE, Follow::Yes, AT_FDCWD, P_TMPDIR, false];

    // Directory walkers: glibc lists the start directory with its internal
    // opendir. The walk below it is not seen (docs/limits.md).
    "scandir" as "scandir"
    fn scandir(dir: *const c_char, namelist: *mut c_void, filter: *mut c_void, compar: *mut c_void) -> c_int,
        fail -1,
        check [READ, Follow::Yes, AT_FDCWD, dir, false];
    "scandir64" as "scandir"
    fn scandir64(dir: *const c_char, namelist: *mut c_void, filter: *mut c_void, compar: *mut c_void) -> c_int,
        fail -1,
        check [READ, Follow::Yes, AT_FDCWD, dir, false];
    "scandirat" as "scandirat"
    fn scandirat(dirfd: c_int, dir: *const c_char, namelist: *mut c_void, filter: *mut c_void, compar: *mut c_void) -> c_int,
        fail -1,
        check [READ, Follow::Yes, dirfd, dir, false];
    "scandirat64" as "scandirat"
    fn scandirat64(dirfd: c_int, dir: *const c_char, namelist: *mut c_void, filter: *mut c_void, compar: *mut c_void) -> c_int,
        fail -1,
        check [READ, Follow::Yes, dirfd, dir, false];
    "ftw" as "ftw"
    fn ftw(dir: *const c_char, func: *mut c_void, nopenfd: c_int) -> c_int,
        fail -1,
        check [READ, Follow::Yes, AT_FDCWD, dir, false];
    "ftw64" as "ftw"
    fn ftw64(dir: *const c_char, func: *mut c_void, nopenfd: c_int) -> c_int,
        fail -1,
        check [READ, Follow::Yes, AT_FDCWD, dir, false];
    "nftw" as "nftw"
    fn nftw(dir: *const c_char, func: *mut c_void, nopenfd: c_int, flags: c_int) -> c_int,
        fail -1,
        check [READ, ftw_follow(flags), AT_FDCWD, dir, false];
    "nftw64" as "nftw"
    fn nftw64(dir: *const c_char, func: *mut c_void, nopenfd: c_int, flags: c_int) -> c_int,
        fail -1,
        check [READ, ftw_follow(flags), AT_FDCWD, dir, false];

    // Nodes.
    "mknod" as "mknod"
    fn mknod(path: *const c_char, mode: mode_t, dev: dev_t) -> c_int,
        via path,
        fail -1,
        check [WRITE, Follow::Entry, AT_FDCWD, path, false];
    "mknodat" as "mknodat"
    fn mknodat(dirfd: c_int, path: *const c_char, mode: mode_t, dev: dev_t) -> c_int,
        act |t| hooks!(@real "mknodat", MknodatFn, -1, (t[0].dirfd(), t[0].path(), mode, dev)),
        fail -1,
        check [WRITE, Follow::Entry, dirfd, path, false];
    /// glibc < 2.33 headers compile mknod to this.
    "__xmknod" as "mknod"
    fn __xmknod(ver: c_int, path: *const c_char, mode: mode_t, dev: *mut dev_t) -> c_int,
        via path,
        fail -1,
        check [WRITE, Follow::Entry, AT_FDCWD, path, false];
    "__xmknodat" as "mknodat"
    fn __xmknodat(ver: c_int, dirfd: c_int, path: *const c_char, mode: mode_t, dev: *mut dev_t) -> c_int,
        act |t| hooks!(@real "__xmknodat", XmknodatFn, -1, (ver, t[0].dirfd(), t[0].path(), mode, dev)),
        fail -1,
        check [WRITE, Follow::Entry, dirfd, path, false];
    "mkfifo" as "mkfifo"
    fn mkfifo(path: *const c_char, mode: mode_t) -> c_int,
        via path,
        fail -1,
        check [WRITE, Follow::Entry, AT_FDCWD, path, false];
    "mkfifoat" as "mkfifoat"
    fn mkfifoat(dirfd: c_int, path: *const c_char, mode: mode_t) -> c_int,
        act |t| hooks!(@real "mkfifoat", MkdiratFn, -1, (t[0].dirfd(), t[0].path(), mode)),
        fail -1,
        check [WRITE, Follow::Entry, dirfd, path, false];
    "lchmod" as "lchmod"
    fn lchmod(path: *const c_char, mode: mode_t) -> c_int,
        via path,
        fail -1,
        check [WRITE, Follow::NoFollow, AT_FDCWD, path, false];
    /// A NULL path acts on the dirfd.
    "futimesat" as "futimesat"
    fn futimesat(dirfd: c_int, path: *const c_char, times: *const libc::timeval) -> c_int,
        act |t| hooks!(@real "futimesat", FutimesatFn, -1, (t[0].dirfd(), t[0].path(), times)),
        fail -1,
        check [WRITE, at_follow(0, path), dirfd, path, false];
    "lutimes" as "lutimes"
    fn lutimes(path: *const c_char, times: *const libc::timeval) -> c_int,
        via path,
        fail -1,
        check [WRITE, Follow::NoFollow, AT_FDCWD, path, false];

    // Extended attributes.
    "setxattr" as "setxattr"
    fn setxattr(path: *const c_char, name: *const c_char, value: *const c_void, size: size_t, flags: c_int) -> c_int,
        via path,
        fail -1,
        check [WRITE, Follow::Yes, AT_FDCWD, path, false];
    "lsetxattr" as "lsetxattr"
    fn lsetxattr(path: *const c_char, name: *const c_char, value: *const c_void, size: size_t, flags: c_int) -> c_int,
        via path,
        fail -1,
        check [WRITE, Follow::NoFollow, AT_FDCWD, path, false];
    "removexattr" as "removexattr"
    fn removexattr(path: *const c_char, name: *const c_char) -> c_int,
        via path,
        fail -1,
        check [WRITE, Follow::Yes, AT_FDCWD, path, false];
    "lremovexattr" as "lremovexattr"
    fn lremovexattr(path: *const c_char, name: *const c_char) -> c_int,
        via path,
        fail -1,
        check [WRITE, Follow::NoFollow, AT_FDCWD, path, false];

    // Calls on an fd that change the file: an fd opened for reading must
    // not become a way to change a file the policy protects.
    "fsetxattr" as "fsetxattr"
    fn fsetxattr(fd: c_int, name: *const c_char, value: *const c_void, size: size_t, flags: c_int) -> c_int,
        fail -1,
        check [WRITE, Follow::Fd, fd_arg(fd), CArg::NULL, false];
    "fremovexattr" as "fremovexattr"
    fn fremovexattr(fd: c_int, name: *const c_char) -> c_int,
        fail -1,
        check [WRITE, Follow::Fd, fd_arg(fd), CArg::NULL, false];
    "fchmod" as "fchmod"
    fn fchmod(fd: c_int, mode: mode_t) -> c_int,
        fail -1,
        check [WRITE, Follow::Fd, fd_arg(fd), CArg::NULL, false];
    "fchown" as "fchown"
    fn fchown(fd: c_int, owner: uid_t, group: gid_t) -> c_int,
        fail -1,
        check [WRITE, Follow::Fd, fd_arg(fd), CArg::NULL, false];
    "futimens" as "futimens"
    fn futimens(fd: c_int, times: *const libc::timespec) -> c_int,
        fail -1,
        check [WRITE, Follow::Fd, fd_arg(fd), CArg::NULL, false];
    "futimes" as "futimes"
    fn futimes(fd: c_int, times: *const libc::timeval) -> c_int,
        fail -1,
        check [WRITE, Follow::Fd, fd_arg(fd), CArg::NULL, false];

    // File handles: a handle names a file without its path.
    "name_to_handle_at" as "name_to_handle_at"
    fn name_to_handle_at(dirfd: c_int, path: *const c_char, handle: *mut c_void, mount_id: *mut c_int, flags: c_int) -> c_int,
        fail -1,
        check [META, link_follow(flags, path), dirfd, path, false];

    // Metadata reads: pass straight through unless `hide_outside`.
    "stat" as "stat"
    fn stat(path: *const c_char, buf: *mut libc::stat) -> c_int,
        fail -1,
        check [META, Follow::Yes, AT_FDCWD, path, false];
    "stat64" as "stat"
    fn stat64(path: *const c_char, buf: *mut libc::stat64) -> c_int,
        fail -1,
        check [META, Follow::Yes, AT_FDCWD, path, false];
    "lstat" as "lstat"
    fn lstat(path: *const c_char, buf: *mut libc::stat) -> c_int,
        fail -1,
        check [META, Follow::NoFollow, AT_FDCWD, path, false];
    "lstat64" as "lstat"
    fn lstat64(path: *const c_char, buf: *mut libc::stat64) -> c_int,
        fail -1,
        check [META, Follow::NoFollow, AT_FDCWD, path, false];
    "fstatat" as "fstatat"
    fn fstatat(dirfd: c_int, path: *const c_char, buf: *mut libc::stat, flags: c_int) -> c_int,
        fail -1,
        check [META, at_follow(flags, path), dirfd, path, false];
    "fstatat64" as "fstatat"
    fn fstatat64(dirfd: c_int, path: *const c_char, buf: *mut libc::stat64, flags: c_int) -> c_int,
        fail -1,
        check [META, at_follow(flags, path), dirfd, path, false];
    "statx" as "statx"
    fn statx(dirfd: c_int, path: *const c_char, flags: c_int, mask: c_uint, buf: *mut c_void) -> c_int,
        fail -1,
        check [META, at_follow(flags, path), dirfd, path, false];
    /// glibc < 2.33 headers compile stat to this.
    "__xstat" as "stat"
    fn __xstat(ver: c_int, path: *const c_char, buf: *mut libc::stat) -> c_int,
        fail -1,
        check [META, Follow::Yes, AT_FDCWD, path, false];
    "__xstat64" as "stat"
    fn __xstat64(ver: c_int, path: *const c_char, buf: *mut libc::stat64) -> c_int,
        fail -1,
        check [META, Follow::Yes, AT_FDCWD, path, false];
    "__lxstat" as "lstat"
    fn __lxstat(ver: c_int, path: *const c_char, buf: *mut libc::stat) -> c_int,
        fail -1,
        check [META, Follow::NoFollow, AT_FDCWD, path, false];
    "__lxstat64" as "lstat"
    fn __lxstat64(ver: c_int, path: *const c_char, buf: *mut libc::stat64) -> c_int,
        fail -1,
        check [META, Follow::NoFollow, AT_FDCWD, path, false];
    "__fxstatat" as "fstatat"
    fn __fxstatat(ver: c_int, dirfd: c_int, path: *const c_char, buf: *mut libc::stat, flags: c_int) -> c_int,
        fail -1,
        check [META, at_follow(flags, path), dirfd, path, false];
    "__fxstatat64" as "fstatat"
    fn __fxstatat64(ver: c_int, dirfd: c_int, path: *const c_char, buf: *mut libc::stat64, flags: c_int) -> c_int,
        fail -1,
        check [META, at_follow(flags, path), dirfd, path, false];
    "access" as "access"
    fn access(path: *const c_char, mode: c_int) -> c_int,
        fail -1,
        check [META, Follow::Yes, AT_FDCWD, path, false];
    "faccessat" as "faccessat"
    fn faccessat(dirfd: c_int, path: *const c_char, mode: c_int, flags: c_int) -> c_int,
        fail -1,
        check [META, at_follow(flags, path), dirfd, path, false];
    "eaccess" as "eaccess"
    fn eaccess(path: *const c_char, mode: c_int) -> c_int,
        fail -1,
        check [META, Follow::Yes, AT_FDCWD, path, false];
    "euidaccess" as "euidaccess"
    fn euidaccess(path: *const c_char, mode: c_int) -> c_int,
        fail -1,
        check [META, Follow::Yes, AT_FDCWD, path, false];
    "readlink" as "readlink"
    fn readlink(path: *const c_char, buf: *mut c_char, size: size_t) -> ssize_t,
        fail -1,
        check [META, Follow::Entry, AT_FDCWD, path, false];
    "readlinkat" as "readlinkat"
    fn readlinkat(dirfd: c_int, path: *const c_char, buf: *mut c_char, size: size_t) -> ssize_t,
        fail -1,
        check [META, entry_or_fd(path), dirfd, path, false];
    /// The fortified readlink (`_FORTIFY_SOURCE`).
    "__readlink_chk" as "readlink"
    fn __readlink_chk(path: *const c_char, buf: *mut c_char, size: size_t, buflen: size_t) -> ssize_t,
        fail -1,
        check [META, Follow::Entry, AT_FDCWD, path, false];
    "__readlinkat_chk" as "readlinkat"
    fn __readlinkat_chk(dirfd: c_int, path: *const c_char, buf: *mut c_char, size: size_t, buflen: size_t) -> ssize_t,
        fail -1,
        check [META, entry_or_fd(path), dirfd, path, false];
    "realpath" as "realpath"
    fn realpath(path: *const c_char, resolved: *mut c_char) -> *mut c_char,
        fail std::ptr::null_mut(),
        check [META, Follow::Yes, AT_FDCWD, path, false];
    "__realpath_chk" as "realpath"
    fn __realpath_chk(path: *const c_char, resolved: *mut c_char, resolvedlen: size_t) -> *mut c_char,
        fail std::ptr::null_mut(),
        check [META, Follow::Yes, AT_FDCWD, path, false];
    "canonicalize_file_name" as "canonicalize_file_name"
    fn canonicalize_file_name(path: *const c_char) -> *mut c_char,
        fail std::ptr::null_mut(),
        check [META, Follow::Yes, AT_FDCWD, path, false];
    "getxattr" as "getxattr"
    fn getxattr(path: *const c_char, name: *const c_char, value: *mut c_void, size: size_t) -> ssize_t,
        fail -1,
        check [META, Follow::Yes, AT_FDCWD, path, false];
    "lgetxattr" as "lgetxattr"
    fn lgetxattr(path: *const c_char, name: *const c_char, value: *mut c_void, size: size_t) -> ssize_t,
        fail -1,
        check [META, Follow::NoFollow, AT_FDCWD, path, false];
    "listxattr" as "listxattr"
    fn listxattr(path: *const c_char, list: *mut c_char, size: size_t) -> ssize_t,
        fail -1,
        check [META, Follow::Yes, AT_FDCWD, path, false];
    "llistxattr" as "llistxattr"
    fn llistxattr(path: *const c_char, list: *mut c_char, size: size_t) -> ssize_t,
        fail -1,
        check [META, Follow::NoFollow, AT_FDCWD, path, false];
    "statfs" as "statfs"
    fn statfs(path: *const c_char, buf: *mut libc::statfs) -> c_int,
        fail -1,
        check [META, Follow::Yes, AT_FDCWD, path, false];
    "statfs64" as "statfs"
    fn statfs64(path: *const c_char, buf: *mut libc::statfs64) -> c_int,
        fail -1,
        check [META, Follow::Yes, AT_FDCWD, path, false];
    "statvfs" as "statvfs"
    fn statvfs(path: *const c_char, buf: *mut libc::statvfs) -> c_int,
        fail -1,
        check [META, Follow::Yes, AT_FDCWD, path, false];
    "statvfs64" as "statvfs"
    fn statvfs64(path: *const c_char, buf: *mut libc::statvfs64) -> c_int,
        fail -1,
        check [META, Follow::Yes, AT_FDCWD, path, false];
    "pathconf" as "pathconf"
    fn pathconf(path: *const c_char, name: c_int) -> c_long,
        fail -1,
        check [META, Follow::Yes, AT_FDCWD, path, false];
    "chdir" as "chdir"
    fn chdir(path: *const c_char) -> c_int,
        fail -1,
        check [META, Follow::Yes, AT_FDCWD, path, false];
}

/// `/dev/shm/NAME` for a shm_open name (leading slashes dropped, as glibc
/// does); `None` for a name glibc itself rejects (empty, with a `/`, too
/// long), which the real call then fails with glibc's own errno.
/// Room for the `ipc` namespace prefix too.
struct ShmPath([u8; 10 + 256 + 64]);

impl ShmPath {
    /// `/dev/shm/NAME`, for the policy.
    fn path(&self) -> CArg<'_> {
        // The buffer is zeroed and written short of its end: always found.
        CArg::of(std::ffi::CStr::from_bytes_until_nul(&self.0).unwrap_or(c""))
    }

    /// `/NAME`, for the real shm_open.
    fn name_ptr(&self) -> *const c_char {
        self.0[b"/dev/shm".len()..].as_ptr().cast()
    }

    fn bytes(&self) -> &[u8] {
        let end = self.0.iter().position(|&b| b == 0).unwrap_or(self.0.len());
        &self.0[..end]
    }

    /// True when something exists under this name (any owner).
    fn exists(&self) -> bool {
        let Some(p) = self.path().get() else {
            return false;
        };
        rustix::fs::statat(rustix::fs::CWD, p, rustix::fs::AtFlags::SYMLINK_NOFOLLOW).is_ok()
    }
}

fn shm_path(name: CArg<'_>) -> Option<ShmPath> {
    let n = name.get()?.to_bytes();
    let start = n.iter().position(|&b| b != b'/').unwrap_or(n.len());
    let n = &n[start..];
    if n.is_empty() || n.len() > 255 || n.contains(&b'/') {
        return None;
    }
    let mut buf = [0u8; 10 + 256 + 64];
    buf[..9].copy_from_slice(b"/dev/shm/");
    buf[9..9 + n.len()].copy_from_slice(n);
    Some(ShmPath(buf))
}

/// The `ipc` preset: a name the policy would not let the tree create is
/// used in the tree's own namespace instead (`/dev/shm/fsguard.<tag>.NAME`),
/// the same in every process of the tree, so what one creates the others
/// open. `None`: the name is used as it is.
fn shm_mapped(p: &ShmPath) -> Option<ShmPath> {
    let g = guard::get()?;
    let r = std::panic::catch_unwind(|| {
        let prefix = g.policy.ipc_prefix()?;
        let raw = p.bytes();
        if g.policy.decide(Access::Write, raw).allowed {
            return None;
        }
        let name = &raw[b"/dev/shm/".len()..];
        let mut buf = [0u8; 10 + 256 + 64];
        let n = 9 + prefix.len() + name.len();
        if n >= buf.len() {
            return None;
        }
        buf[..9].copy_from_slice(b"/dev/shm/");
        buf[9..9 + prefix.len()].copy_from_slice(prefix);
        buf[9 + prefix.len()..n].copy_from_slice(name);
        Some(ShmPath(buf))
    });
    r.ok().flatten()
}

/// Checks one target; `Err(errno)` to fail the call.
fn check1(
    call: &'static str,
    access: Option<Access>,
    follow: Follow,
    dirfd: c_int,
    path: CArg<'_>,
) -> Result<(), c_int> {
    guard::check(
        call,
        &[Target {
            access,
            follow,
            dirfd,
            path,
            moves: false,
        }],
    )
}

/// shm_open opens `/dev/shm/NAME` with O_NOFOLLOW through an internal call.
/// With the `ipc` preset, a name the tree may not create is opened in its
/// own namespace; an object of that name outside it (another process's) is
/// then decided on by the policy under its real name, and refused with a
/// trace line unless a rule allows it.
///
/// # Safety
/// As for the C function: its pointer arguments valid as it requires (a
/// C string NUL-terminated, NULL only where it accepts NULL).
#[no_mangle]
pub unsafe extern "C" fn shm_open(name: *const c_char, oflag: c_int, mode: mode_t) -> c_int {
    type ShmOpen = unsafe extern "C" fn(*const c_char, c_int, mode_t) -> c_int;
    // SAFETY: shm_open's name is NULL or a C string (its contract).
    let Some(p) = shm_path(unsafe { CArg::new(name) }) else {
        return hooks!(@real "shm_open", ShmOpen, -1, (name, oflag, mode));
    };
    let access = open_access(oflag);
    if let Some(m) = shm_mapped(&p) {
        if let Err(e) = check1("shm_open", access, Follow::Entry, AT_FDCWD, m.path()) {
            set_errno(e);
            return -1;
        }
        let fd = hooks!(@real "shm_open", ShmOpen, -1, (m.name_ptr(), oflag, mode));
        if fd >= 0 || guard::errno() != libc::ENOENT || oflag & libc::O_CREAT != 0 || !p.exists() {
            return fd;
        }
    }
    if let Err(e) = check1("shm_open", access, Follow::Entry, AT_FDCWD, p.path()) {
        set_errno(e);
        return -1;
    }
    hooks!(@real "shm_open", ShmOpen, -1, (name, oflag, mode))
}

/// shm_unlink(3).
///
/// # Safety
/// As for the C function: its pointer arguments valid as it requires (a
/// C string NUL-terminated, NULL only where it accepts NULL).
#[no_mangle]
pub unsafe extern "C" fn shm_unlink(name: *const c_char) -> c_int {
    type ShmUnlink = unsafe extern "C" fn(*const c_char) -> c_int;
    // SAFETY: shm_unlink's name is NULL or a C string (its contract).
    let Some(p) = shm_path(unsafe { CArg::new(name) }) else {
        return hooks!(@real "shm_unlink", ShmUnlink, -1, (name));
    };
    if let Some(m) = shm_mapped(&p) {
        if let Err(e) = check1("shm_unlink", WRITE, Follow::Entry, AT_FDCWD, m.path()) {
            set_errno(e);
            return -1;
        }
        let r = hooks!(@real "shm_unlink", ShmUnlink, -1, (m.name_ptr()));
        if r == 0 || guard::errno() != libc::ENOENT || !p.exists() {
            return r;
        }
    }
    if let Err(e) = check1("shm_unlink", WRITE, Follow::Entry, AT_FDCWD, p.path()) {
        set_errno(e);
        return -1;
    }
    hooks!(@real "shm_unlink", ShmUnlink, -1, (name))
}

/// The head of glibc's `FTS` (and `FTS64`, the same on LP64): only the
/// current node is read.
#[repr(C)]
struct Fts {
    cur: *mut FtsEnt,
}

/// The head of glibc's `FTSENT` (and `FTSENT64`, the same on LP64), up to
/// the fields a refused start path changes.
#[repr(C)]
struct FtsEnt {
    cycle: *mut FtsEnt,
    parent: *mut FtsEnt,
    link: *mut FtsEnt,
    number: libc::c_long,
    pointer: *mut c_void,
    accpath: *mut c_char,
    path: *mut c_char,
    errno: c_int,
    symfd: c_int,
    pathlen: u16,
    namelen: u16,
    ino: libc::ino_t,
    dev: libc::dev_t,
    nlink: libc::nlink_t,
    level: i16,
    info: u16,
    flags: u16,
    instr: u16,
    statp: *mut libc::stat64,
}

const FTS_D: u16 = 1;
const FTS_DNR: u16 = 4;
const FTS_ERR: u16 = 7;
const FTS_NS: u16 = 10;

type FtsOpenFn = unsafe extern "C" fn(*const *mut c_char, c_int, *mut c_void) -> *mut c_void;

/// fts_open, with each start path checked as a read. glibc's fts reads
/// directories through internal calls no hook sees, so a refused start
/// path is never walked: like an unreadable one, its entry comes back from
/// `fts_read` as `FTS_DNR` (a directory) or `FTS_ERR` (anything else), with
/// `fts_errno` set; a hidden one (`hide_outside`) as `FTS_NS`/`ENOENT`,
/// like a missing one. The stream itself is returned, as glibc does: a
/// caller that does not check for NULL must not crash.
///
/// # Safety
/// `argv` a NULL-terminated array of C strings, as fts_open(3) requires.
unsafe fn fts_open_checked(
    real: Option<FtsOpenFn>,
    argv: *const *mut c_char,
    options: c_int,
    compar: *mut c_void,
) -> *mut c_void {
    let Some(f) = real else {
        set_errno(libc::ENOSYS);
        return std::ptr::null_mut();
    };
    // SAFETY: the real function with the caller's arguments; it only stats
    // the start paths (metadata).
    let fts = unsafe { f(argv, options, compar) };
    if fts.is_null() {
        return fts;
    }
    let saved = guard::errno();
    // SAFETY: a stream fts_open just made: its current node is a dummy whose
    // `link` chains the start entries, each with its C string `accpath`.
    unsafe {
        let cur = (*fts.cast::<Fts>()).cur;
        let mut p = if cur.is_null() { cur } else { (*cur).link };
        while !p.is_null() {
            let e = &mut *p;
            if e.info != FTS_NS {
                let accpath = CArg::new(e.accpath);
                if let Err(err) = check1("fts_open", READ, fts_follow(options), AT_FDCWD, accpath) {
                    if err == libc::ENOENT {
                        e.info = FTS_NS;
                        if !e.statp.is_null() {
                            *e.statp = std::mem::zeroed();
                        }
                    } else if e.info == FTS_D {
                        e.info = FTS_DNR;
                    } else {
                        e.info = FTS_ERR;
                    }
                    e.errno = err;
                }
            }
            p = e.link;
        }
    }
    set_errno(saved);
    fts
}

/// fts_open(3), with each start path checked (see `fts_open_checked`).
///
/// # Safety
/// As for the C function: its pointer arguments valid as it requires (a
/// C string NUL-terminated, NULL only where it accepts NULL).
#[no_mangle]
pub unsafe extern "C" fn fts_open(
    argv: *const *mut c_char,
    options: c_int,
    compar: *mut c_void,
) -> *mut c_void {
    let real = crate::real::real!("fts_open", FtsOpenFn);
    // SAFETY: the caller's arguments.
    unsafe { fts_open_checked(real, argv, options, compar) }
}

/// fts64_open(3), as `fts_open`.
///
/// # Safety
/// As for the C function: its pointer arguments valid as it requires (a
/// C string NUL-terminated, NULL only where it accepts NULL).
#[no_mangle]
pub unsafe extern "C" fn fts64_open(
    argv: *const *mut c_char,
    options: c_int,
    compar: *mut c_void,
) -> *mut c_void {
    let real = crate::real::real!("fts64_open", FtsOpenFn);
    // SAFETY: the caller's arguments.
    unsafe { fts_open_checked(real, argv, options, compar) }
}

/// glibc's `glob_t` (and `glob64_t`, the same on LP64).
#[repr(C)]
pub struct GlobT {
    pathc: size_t,
    pathv: *mut *mut c_char,
    offs: size_t,
    flags: c_int,
    closedir: *mut c_void,
    readdir: *mut c_void,
    opendir: *mut c_void,
    lstat: *mut c_void,
    stat: *mut c_void,
}

/// glob's directory opener: each directory the pattern reads is checked.
unsafe extern "C" fn glob_opendir(path: *const c_char) -> *mut c_void {
    // SAFETY: glob passes a directory name, a C string.
    let arg = unsafe { CArg::new(path) };
    if let Err(e) = check1("glob", READ, Follow::Yes, AT_FDCWD, arg) {
        set_errno(e);
        return std::ptr::null_mut();
    }
    hooks!(@real "opendir", unsafe extern "C" fn(*const c_char) -> *mut c_void, std::ptr::null_mut(), (path))
}

unsafe extern "C" fn glob_readdir(dir: *mut c_void) -> *mut c_void {
    hooks!(@real "readdir", unsafe extern "C" fn(*mut c_void) -> *mut c_void, std::ptr::null_mut(), (dir))
}

unsafe extern "C" fn glob_closedir(dir: *mut c_void) {
    if let Some(f) = crate::real::real!("closedir", unsafe extern "C" fn(*mut c_void) -> c_int) {
        // SAFETY: a stream glob_opendir opened.
        unsafe { f(dir) };
    }
}

unsafe extern "C" fn glob_stat(path: *const c_char, buf: *mut libc::stat64) -> c_int {
    // SAFETY: glob's own arguments, passed on to the stat hook.
    unsafe { stat64(path, buf) }
}

unsafe extern "C" fn glob_lstat(path: *const c_char, buf: *mut libc::stat64) -> c_int {
    // SAFETY: as above.
    unsafe { lstat64(path, buf) }
}

type GlobFn = unsafe extern "C" fn(*const c_char, c_int, *mut c_void, *mut GlobT) -> c_int;

/// glob reads directories with its internal opendir; unless the caller
/// brought its own (GLOB_ALTDIRFUNC), it is handed ours, which checks each
/// directory. A refused one fails like an unreadable one (errfunc, GLOB_ERR).
///
/// # Safety
/// The arguments as glob(3) requires them (`pattern` a C string, `pglob`
/// a `glob_t`).
unsafe fn glob_checked(
    real: Option<GlobFn>,
    pattern: *const c_char,
    flags: c_int,
    errfunc: *mut c_void,
    pglob: *mut GlobT,
) -> c_int {
    const GLOB_ABORTED: c_int = 2;
    let Some(real) = real else {
        set_errno(libc::ENOSYS);
        return GLOB_ABORTED;
    };
    let active =
        guard::get().is_some_and(|g| g.policy.confines_reads() || g.policy.settings().hide_outside);
    if !active || flags & GLOB_ALTDIRFUNC != 0 || pglob.is_null() {
        // SAFETY: the caller's arguments.
        return unsafe { real(pattern, flags, errfunc, pglob) };
    }
    // SAFETY: pglob is the caller's glob_t; its callback fields are ours for
    // the duration of the call and restored after.
    unsafe {
        let g = &mut *pglob;
        let saved = (g.closedir, g.readdir, g.opendir, g.lstat, g.stat);
        g.closedir = glob_closedir as *mut c_void;
        g.readdir = glob_readdir as *mut c_void;
        g.opendir = glob_opendir as *mut c_void;
        g.lstat = glob_lstat as *mut c_void;
        g.stat = glob_stat as *mut c_void;
        let r = real(pattern, flags | GLOB_ALTDIRFUNC, errfunc, pglob);
        let g = &mut *pglob;
        g.flags &= !GLOB_ALTDIRFUNC;
        (g.closedir, g.readdir, g.opendir, g.lstat, g.stat) = saved;
        r
    }
}

/// glob(3), with each directory it reads checked.
///
/// # Safety
/// As for the C function: its pointer arguments valid as it requires (a
/// C string NUL-terminated, NULL only where it accepts NULL).
#[no_mangle]
pub unsafe extern "C" fn glob(
    pattern: *const c_char,
    flags: c_int,
    errfunc: *mut c_void,
    pglob: *mut GlobT,
) -> c_int {
    let real = crate::real::real!("glob", GlobFn);
    // SAFETY: the caller's arguments.
    unsafe { glob_checked(real, pattern, flags, errfunc, pglob) }
}

/// glob64(3), as `glob`.
///
/// # Safety
/// As for the C function: its pointer arguments valid as it requires (a
/// C string NUL-terminated, NULL only where it accepts NULL).
#[cfg(target_pointer_width = "64")]
#[no_mangle]
pub unsafe extern "C" fn glob64(
    pattern: *const c_char,
    flags: c_int,
    errfunc: *mut c_void,
    pglob: *mut GlobT,
) -> c_int {
    let real = crate::real::real!("glob64", GlobFn);
    // SAFETY: the caller's arguments.
    unsafe { glob_checked(real, pattern, flags, errfunc, pglob) }
}

/// open_by_handle_at opens a file by handle, without a path: the opened
/// object is checked, and closed again if refused.
pub fn checked_handle_fd(fd: c_int, flags: c_int) -> Result<c_int, c_int> {
    if fd < 0 {
        return Ok(fd);
    }
    match check1(
        "open_by_handle_at",
        open_access(flags),
        Follow::Fd,
        fd,
        CArg::NULL,
    ) {
        Ok(()) => Ok(fd),
        Err(e) => {
            // SAFETY: the fd the real call just returned to us.
            unsafe { libc::close(fd) };
            Err(e)
        }
    }
}

/// open_by_handle_at(2): the opened object is checked.
///
/// # Safety
/// As for the C function: its pointer arguments valid as it requires (a
/// C string NUL-terminated, NULL only where it accepts NULL).
#[no_mangle]
pub unsafe extern "C" fn open_by_handle_at(
    mount_fd: c_int,
    handle: *mut c_void,
    flags: c_int,
) -> c_int {
    let fd: c_int = hooks!(@real "open_by_handle_at", unsafe extern "C" fn(c_int, *mut c_void, c_int) -> c_int, -1, (mount_fd, handle, flags));
    match checked_handle_fd(fd, flags) {
        Ok(fd) => fd,
        Err(e) => {
            set_errno(e);
            -1
        }
    }
}

/// The bytes of a socket address that `bind` may read as a `sockaddr_un`
/// (none for NULL).
///
/// # Safety
/// `addr` must be NULL or point to `len` readable bytes.
pub unsafe fn addr_bytes<'a>(addr: *const libc::sockaddr, len: libc::socklen_t) -> &'a [u8] {
    if addr.is_null() {
        return &[];
    }
    let n = (len as usize).min(std::mem::size_of::<libc::sockaddr_un>());
    // SAFETY: n <= len bytes at addr, readable by the caller's guarantee.
    unsafe { std::slice::from_raw_parts(addr.cast::<u8>(), n) }
}

/// The path an AF_UNIX `bind` would create, NUL-terminated in `buf`;
/// `None` for other families, abstract and unnamed sockets. `addr`: the
/// address's bytes (see [`addr_bytes`]).
pub fn unix_path(addr: &[u8], buf: &mut [u8; 110]) -> bool {
    let off = std::mem::offset_of!(libc::sockaddr_un, sun_path);
    let len = addr.len();
    if len <= off {
        return false;
    }
    let family = libc::sa_family_t::from_ne_bytes([addr[0], addr[1]]);
    let first = addr[off];
    if c_int::from(family) != libc::AF_UNIX || first == 0 {
        return false;
    }
    let n = (len - off).min(108);
    let src = &addr[off..off + n];
    let n = src.iter().position(|&b| b == 0).unwrap_or(n);
    buf[..n].copy_from_slice(&src[..n]);
    buf[n] = 0;
    true
}

/// bind on an AF_UNIX path creates a socket file there: a write.
pub fn check_bind(addr: &[u8]) -> Result<(), c_int> {
    let mut buf = [0u8; 110];
    if !unix_path(addr, &mut buf) {
        return Ok(());
    }
    let Ok(path) = std::ffi::CStr::from_bytes_until_nul(&buf) else {
        return Ok(());
    };
    check1("bind", WRITE, Follow::Entry, AT_FDCWD, CArg::of(path))
}

/// bind(2): an AF_UNIX path is checked as a write.
///
/// # Safety
/// As for the C function: its pointer arguments valid as it requires (a
/// C string NUL-terminated, NULL only where it accepts NULL).
#[no_mangle]
pub unsafe extern "C" fn bind(
    fd: c_int,
    addr: *const libc::sockaddr,
    len: libc::socklen_t,
) -> c_int {
    // SAFETY: bind's contract: `len` readable bytes at `addr`.
    if let Err(e) = check_bind(unsafe { addr_bytes(addr, len) }) {
        set_errno(e);
        return -1;
    }
    hooks!(@real "bind", unsafe extern "C" fn(c_int, *const libc::sockaddr, libc::socklen_t) -> c_int, -1, (fd, addr, len))
}

const FTS: &[CheckInfo] = &[chk(
    "READ",
    "fts_follow(options)",
    "AT_FDCWD",
    "each of argv",
)];
const GLOB: &[CheckInfo] = &[chk(
    "READ",
    "Follow::Yes",
    "AT_FDCWD",
    "each directory glob opens",
)];

/// The hooks written out above (anything but "check, then call").
pub static CUSTOM: &[HookInfo] = &[
    row(
        "shm_open",
        "shm_open",
        &[chk(
            "open_access(oflag)",
            "Follow::Entry",
            "AT_FDCWD",
            "/dev/shm/name",
        )],
    ),
    row(
        "shm_unlink",
        "shm_unlink",
        &[chk("WRITE", "Follow::Entry", "AT_FDCWD", "/dev/shm/name")],
    ),
    row("fts_open", "fts_open", FTS),
    row("fts64_open", "fts_open", FTS),
    row("glob", "glob", GLOB),
    #[cfg(target_pointer_width = "64")]
    row("glob64", "glob", GLOB),
    row(
        "open_by_handle_at",
        "open_by_handle_at",
        &[chk(
            "open_access(flags)",
            "Follow::Fd",
            "the returned fd",
            "(opened, then checked)",
        )],
    ),
    row(
        "bind",
        "bind",
        &[chk(
            "WRITE",
            "Follow::Entry",
            "AT_FDCWD",
            "addr.sun_path (AF_UNIX, not abstract)",
        )],
    ),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn temp_templates() {
        assert_eq!(temp_access(CArg::of(c"d/tXXXXXX"), 0), WRITE);
        assert_eq!(temp_access(CArg::of(c"XXXXXX.s"), 2), WRITE);
        assert_eq!(temp_access(CArg::of(c"d/tXXXXX"), 0), META);
        assert_eq!(temp_access(CArg::of(c"tXXXXXX.s"), 0), META);
        assert_eq!(temp_access(CArg::of(c".s"), 2), META);
        assert_eq!(temp_access(CArg::of(c"XXXXXX"), 7), META);
    }

    #[test]
    fn shm_names() {
        let s = |n: &std::ffi::CStr| {
            let p = shm_path(CArg::of(n))?;
            let end = p.0.iter().position(|&b| b == 0).unwrap();
            Some(String::from_utf8(p.0[..end].to_vec()).unwrap())
        };
        assert_eq!(s(c"/x").as_deref(), Some("/dev/shm/x"));
        assert_eq!(s(c"//x").as_deref(), Some("/dev/shm/x"));
        assert_eq!(s(c"x").as_deref(), Some("/dev/shm/x"));
        assert_eq!(s(c"a/b"), None);
        assert_eq!(s(c"/"), None);
        assert_eq!(s(c""), None);
    }

    #[test]
    fn unix_paths() {
        // SAFETY: an all-zero sockaddr_un is a valid value.
        let mut a: libc::sockaddr_un = unsafe { std::mem::zeroed() };
        a.sun_family = libc::AF_UNIX as libc::sa_family_t;
        for (i, b) in b"/tmp/s".iter().enumerate() {
            a.sun_path[i] = *b as c_char;
        }
        let p = (&a as *const libc::sockaddr_un).cast();
        let full = std::mem::size_of::<libc::sockaddr_un>() as libc::socklen_t;
        let mut buf = [0u8; 110];
        // SAFETY: `len` bytes of a live sockaddr_un.
        let unix_path = |p, len, buf: &mut _| unix_path(unsafe { addr_bytes(p, len) }, buf);
        assert!(unix_path(p, full, &mut buf));
        assert_eq!(&buf[..7], b"/tmp/s\0");
        // Length that cuts the name, without a NUL.
        assert!(unix_path(p, 2 + 4, &mut buf));
        assert_eq!(&buf[..5], b"/tmp\0");
        // Unnamed and abstract sockets create no file.
        assert!(!unix_path(p, 2, &mut buf));
        a.sun_path[0] = 0;
        let p = (&a as *const libc::sockaddr_un).cast();
        assert!(!unix_path(p, full, &mut buf));
        a.sun_path[0] = b'/' as c_char;
        a.sun_family = libc::AF_INET as libc::sa_family_t;
        let p = (&a as *const libc::sockaddr_un).cast();
        assert!(!unix_path(p, full, &mut buf));
    }
}
