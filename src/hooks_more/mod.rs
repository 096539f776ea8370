//! The rest of libc's path entry points: temp files, glibc functions that
//! open paths internally (so no other hook sees them), nodes, extended
//! attributes, calls on fds that change a file, file handles, AF_UNIX
//! `bind`, and metadata reads (confined only with `hide_outside`).
//!
//! Declared with the same `hooks!` table as the core set; the few calls
//! that need more than "check, then call" are rows of [`WRAPPED`], whose
//! `pre` and `post` steps live in their own files ([`shm`]: shm_open,
//! shm_unlink; [`walk`]: fts_open, glob; [`handle`]: open_by_handle_at;
//! [`bind`]: AF_UNIX bind). The calls that reach an AF_UNIX socket by its
//! address (`connect`, `sendto`, `sendmsg`, `sendmmsg`) are the rows of
//! [`SOCKETS`] ([`socket`], Linux), on the addresses of [`sockaddr`].
//! Darwin's own calls are the rows of [`DARWIN`] ([`darwin`]), built for
//! macOS only. The calls that reach past every path, refused whatever the
//! policy, are hand-written: namespaces and mounts ([`namespace`]), and
//! other processes ([`process`], with the guarded tree read from `/proc`
//! in [`tree`]).

pub(crate) mod acts;
mod bind;
mod darwin;
mod darwin_flags;
#[cfg(target_os = "linux")]
mod handle;
#[cfg(target_os = "linux")]
pub(crate) mod namespace;
#[cfg(target_os = "linux")]
pub(crate) mod process;
#[cfg(target_os = "linux")]
mod shm;
mod sockaddr;
#[cfg(target_os = "linux")]
mod socket;
#[cfg(target_os = "linux")]
mod tree;
#[cfg(target_os = "linux")]
mod walk;
mod wrapped;

// Some are used only by Linux-only rows.
#[cfg_attr(not(target_os = "linux"), allow(unused_imports))]
use std::ffi::{c_char, c_int, c_long, c_uint, c_void};

use fsguard_policy::Access;
#[cfg_attr(not(target_os = "linux"), allow(unused_imports))]
use libc::{dev_t, gid_t, mode_t, size_t, ssize_t, uid_t, AT_FDCWD, FILE};

use crate::guard::CArg;
#[cfg_attr(not(target_os = "linux"), allow(unused_imports))]
use crate::hooks::{at_follow, link_follow, open_access};
use crate::resolve::Follow;

pub use darwin::DARWIN;
#[cfg(target_os = "linux")]
pub use namespace::NAMESPACE_TABLE;
#[cfg(target_os = "linux")]
pub use process::PROCESS_TABLE;
#[cfg(target_os = "linux")]
pub use socket::*;
#[cfg(target_os = "linux")]
pub use walk::GlobT;
pub use wrapped::*;

const READ: Option<Access> = Some(Access::Read);
const WRITE: Option<Access> = Some(Access::Write);
/// A metadata read: checked only when `hide_outside` is set.
const META: Option<Access> = None;

/// glibc's `P_tmpdir`: `tmpfile` creates its file there, ignoring TMPDIR.
#[cfg(target_os = "linux")]
const P_TMPDIR: CArg<'static> = CArg::of(c"/tmp");

const FTW_PHYS: c_int = 1;
#[cfg(target_os = "linux")]
const FTS_COMFOLLOW: c_int = 0x1;
#[cfg(target_os = "linux")]
const FTS_LOGICAL: c_int = 0x2;

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

#[cfg(target_os = "linux")]
fn fts_follow(options: c_int) -> Follow {
    if options & (FTS_COMFOLLOW | FTS_LOGICAL) != 0 {
        Follow::Yes
    } else {
        Follow::NoFollow
    }
}

#[cfg(target_os = "linux")]
type MknodatFn = unsafe extern "C" fn(c_int, *const c_char, mode_t, dev_t) -> c_int;
#[cfg(target_os = "linux")]
type XmknodatFn = unsafe extern "C" fn(c_int, c_int, *const c_char, mode_t, *mut dev_t) -> c_int;
#[cfg(target_os = "linux")]
type MkdiratFn = unsafe extern "C" fn(c_int, *const c_char, mode_t) -> c_int;
#[cfg(target_os = "linux")]
type FutimesatFn = unsafe extern "C" fn(c_int, *const c_char, *const libc::timeval) -> c_int;

#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
use libc::{SYS_access, SYS_futimesat, SYS_lstat, SYS_mknod, SYS_readlink, SYS_stat};
#[cfg(target_os = "linux")]
use libc::{
    SYS_faccessat2, SYS_fchmod, SYS_fchown, SYS_fremovexattr, SYS_fsetxattr, SYS_getxattr,
    SYS_lgetxattr, SYS_listxattr, SYS_llistxattr, SYS_lremovexattr, SYS_lsetxattr, SYS_mknodat,
    SYS_name_to_handle_at, SYS_newfstatat, SYS_readlinkat, SYS_removexattr, SYS_setxattr,
    SYS_statfs, SYS_statx,
};

hooks! {
    table MORE, syscalls MORE_SYSCALLS;
    // Temp files: glibc creates them through internal calls.
    /// The template's directory must be writable; the name is the template
    /// as given (its XXXXXX not yet replaced).
    "mkstemp" as "mkstemp"
    fn mkstemp(template: *const c_char) -> c_int,
        fail -1,
        check [temp_access(template, 0), Follow::Entry, AT_FDCWD, template, false];
    #[cfg(target_os = "linux")]
    "mkstemp64" as "mkstemp"
    fn mkstemp64(template: *const c_char) -> c_int,
        fail -1,
        check [temp_access(template, 0), Follow::Entry, AT_FDCWD, template, false];
    "mkostemp" as "mkostemp"
    fn mkostemp(template: *const c_char, flags: c_int) -> c_int,
        fail -1,
        check [temp_access(template, 0), Follow::Entry, AT_FDCWD, template, false];
    #[cfg(target_os = "linux")]
    "mkostemp64" as "mkostemp"
    fn mkostemp64(template: *const c_char, flags: c_int) -> c_int,
        fail -1,
        check [temp_access(template, 0), Follow::Entry, AT_FDCWD, template, false];
    "mkstemps" as "mkstemps"
    fn mkstemps(template: *const c_char, suffixlen: c_int) -> c_int,
        fail -1,
        check [temp_access(template, suffixlen), Follow::Entry, AT_FDCWD, template, false];
    #[cfg(target_os = "linux")]
    "mkstemps64" as "mkstemps"
    fn mkstemps64(template: *const c_char, suffixlen: c_int) -> c_int,
        fail -1,
        check [temp_access(template, suffixlen), Follow::Entry, AT_FDCWD, template, false];
    "mkostemps" as "mkostemps"
    fn mkostemps(template: *const c_char, suffixlen: c_int, flags: c_int) -> c_int,
        fail -1,
        check [temp_access(template, suffixlen), Follow::Entry, AT_FDCWD, template, false];
    #[cfg(target_os = "linux")]
    "mkostemps64" as "mkostemps"
    fn mkostemps64(template: *const c_char, suffixlen: c_int, flags: c_int) -> c_int,
        fail -1,
        check [temp_access(template, suffixlen), Follow::Entry, AT_FDCWD, template, false];
    "mkdtemp" as "mkdtemp"
    fn mkdtemp(template: *const c_char) -> *mut c_char,
        fail std::ptr::null_mut(),
        check [temp_access(template, 0), Follow::Entry, AT_FDCWD, template, false];
    #[cfg(target_os = "linux")]
    /// Checked as the `O_TMPFILE` open of `P_tmpdir` glibc makes.
    "tmpfile" as "tmpfile"
    fn tmpfile() -> *mut FILE,
        fail std::ptr::null_mut(),
        check [WRITE, Follow::Yes, AT_FDCWD, P_TMPDIR, false];
    #[cfg(target_os = "linux")]
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
    #[cfg(target_os = "linux")]
    "scandir64" as "scandir"
    fn scandir64(dir: *const c_char, namelist: *mut c_void, filter: *mut c_void, compar: *mut c_void) -> c_int,
        fail -1,
        check [READ, Follow::Yes, AT_FDCWD, dir, false];
    #[cfg(target_os = "linux")]
    "scandirat" as "scandirat"
    fn scandirat(dirfd: c_int, dir: *const c_char, namelist: *mut c_void, filter: *mut c_void, compar: *mut c_void) -> c_int,
        fail -1,
        check [READ, Follow::Yes, dirfd, dir, false];
    #[cfg(target_os = "linux")]
    "scandirat64" as "scandirat"
    fn scandirat64(dirfd: c_int, dir: *const c_char, namelist: *mut c_void, filter: *mut c_void, compar: *mut c_void) -> c_int,
        fail -1,
        check [READ, Follow::Yes, dirfd, dir, false];
    "ftw" as "ftw"
    fn ftw(dir: *const c_char, func: *mut c_void, nopenfd: c_int) -> c_int,
        fail -1,
        check [READ, Follow::Yes, AT_FDCWD, dir, false];
    #[cfg(target_os = "linux")]
    "ftw64" as "ftw"
    fn ftw64(dir: *const c_char, func: *mut c_void, nopenfd: c_int) -> c_int,
        fail -1,
        check [READ, Follow::Yes, AT_FDCWD, dir, false];
    "nftw" as "nftw"
    fn nftw(dir: *const c_char, func: *mut c_void, nopenfd: c_int, flags: c_int) -> c_int,
        fail -1,
        check [READ, ftw_follow(flags), AT_FDCWD, dir, false];
    #[cfg(target_os = "linux")]
    "nftw64" as "nftw"
    fn nftw64(dir: *const c_char, func: *mut c_void, nopenfd: c_int, flags: c_int) -> c_int,
        fail -1,
        check [READ, ftw_follow(flags), AT_FDCWD, dir, false];

    // Nodes.
    "mknod" as "mknod"
    fn mknod(path: *const c_char, mode: mode_t, dev: dev_t) -> c_int,
        sys #[cfg(target_arch = "x86_64")] SYS_mknod,
        via path,
        fail -1,
        check [WRITE, Follow::Entry, AT_FDCWD, path, false];
    #[cfg(target_os = "linux")]
    "mknodat" as "mknodat"
    fn mknodat(dirfd: c_int, path: *const c_char, mode: mode_t, dev: dev_t) -> c_int,
        sys SYS_mknodat,
        act |t| hooks!(@real "mknodat", MknodatFn, -1, (t[0].dirfd(), t[0].path(), mode, dev)),
        fail -1,
        check [WRITE, Follow::Entry, dirfd, path, false];
    #[cfg(target_os = "linux")]
    /// glibc < 2.33 headers compile mknod to this.
    "__xmknod" as "mknod"
    fn __xmknod(ver: c_int, path: *const c_char, mode: mode_t, dev: *mut dev_t) -> c_int,
        via path,
        fail -1,
        check [WRITE, Follow::Entry, AT_FDCWD, path, false];
    #[cfg(target_os = "linux")]
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
    #[cfg(target_os = "linux")]
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
    #[cfg(target_os = "linux")]
    /// A NULL path acts on the dirfd.
    "futimesat" as "futimesat"
    fn futimesat(dirfd: c_int, path: *const c_char, times: *const libc::timeval) -> c_int,
        sys #[cfg(target_arch = "x86_64")] SYS_futimesat,
        act |t| hooks!(@real "futimesat", FutimesatFn, -1, (t[0].dirfd(), t[0].path(), times)),
        fail -1,
        check [WRITE, at_follow(0, path), dirfd, path, false];
    "lutimes" as "lutimes"
    fn lutimes(path: *const c_char, times: *const libc::timeval) -> c_int,
        via path,
        fail -1,
        check [WRITE, Follow::NoFollow, AT_FDCWD, path, false];

    // Extended attributes.
    #[cfg(target_os = "linux")]
    "setxattr" as "setxattr"
    fn setxattr(path: *const c_char, name: *const c_char, value: *const c_void, size: size_t, flags: c_int) -> c_int,
        sys SYS_setxattr,
        via path,
        fail -1,
        check [WRITE, Follow::Yes, AT_FDCWD, path, false];
    #[cfg(target_os = "linux")]
    "lsetxattr" as "lsetxattr"
    fn lsetxattr(path: *const c_char, name: *const c_char, value: *const c_void, size: size_t, flags: c_int) -> c_int,
        sys SYS_lsetxattr,
        via path,
        fail -1,
        check [WRITE, Follow::NoFollow, AT_FDCWD, path, false];
    #[cfg(target_os = "linux")]
    "removexattr" as "removexattr"
    fn removexattr(path: *const c_char, name: *const c_char) -> c_int,
        sys SYS_removexattr,
        via path,
        fail -1,
        check [WRITE, Follow::Yes, AT_FDCWD, path, false];
    #[cfg(target_os = "linux")]
    "lremovexattr" as "lremovexattr"
    fn lremovexattr(path: *const c_char, name: *const c_char) -> c_int,
        sys SYS_lremovexattr,
        via path,
        fail -1,
        check [WRITE, Follow::NoFollow, AT_FDCWD, path, false];

    // Calls on an fd that change the file: an fd opened for reading must
    // not become a way to change a file the policy protects.
    #[cfg(target_os = "linux")]
    "fsetxattr" as "fsetxattr"
    fn fsetxattr(fd: c_int, name: *const c_char, value: *const c_void, size: size_t, flags: c_int) -> c_int,
        sys SYS_fsetxattr,
        fail -1,
        check [WRITE, Follow::Fd, fd_arg(fd), CArg::NULL, false];
    #[cfg(target_os = "linux")]
    "fremovexattr" as "fremovexattr"
    fn fremovexattr(fd: c_int, name: *const c_char) -> c_int,
        sys SYS_fremovexattr,
        fail -1,
        check [WRITE, Follow::Fd, fd_arg(fd), CArg::NULL, false];
    "fchmod" as "fchmod"
    fn fchmod(fd: c_int, mode: mode_t) -> c_int,
        sys SYS_fchmod,
        fail -1,
        check [WRITE, Follow::Fd, fd_arg(fd), CArg::NULL, false];
    "fchown" as "fchown"
    fn fchown(fd: c_int, owner: uid_t, group: gid_t) -> c_int,
        sys SYS_fchown,
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
    #[cfg(target_os = "linux")]
    "name_to_handle_at" as "name_to_handle_at"
    fn name_to_handle_at(dirfd: c_int, path: *const c_char, handle: *mut c_void, mount_id: *mut c_int, flags: c_int) -> c_int,
        sys SYS_name_to_handle_at,
        fail -1,
        check [META, link_follow(flags, path), dirfd, path, false];

    // Metadata reads: pass straight through unless `hide_outside`.
    "stat" as "stat"
    fn stat(path: *const c_char, buf: *mut libc::stat) -> c_int,
        sys #[cfg(target_arch = "x86_64")] SYS_stat,
        fail -1,
        check [META, Follow::Yes, AT_FDCWD, path, false];
    #[cfg(target_os = "linux")]
    "stat64" as "stat"
    fn stat64(path: *const c_char, buf: *mut libc::stat64) -> c_int,
        fail -1,
        check [META, Follow::Yes, AT_FDCWD, path, false];
    "lstat" as "lstat"
    fn lstat(path: *const c_char, buf: *mut libc::stat) -> c_int,
        sys #[cfg(target_arch = "x86_64")] SYS_lstat,
        fail -1,
        check [META, Follow::NoFollow, AT_FDCWD, path, false];
    #[cfg(target_os = "linux")]
    "lstat64" as "lstat"
    fn lstat64(path: *const c_char, buf: *mut libc::stat64) -> c_int,
        fail -1,
        check [META, Follow::NoFollow, AT_FDCWD, path, false];
    "fstatat" as "fstatat"
    fn fstatat(dirfd: c_int, path: *const c_char, buf: *mut libc::stat, flags: c_int) -> c_int,
        sys SYS_newfstatat,
        fail -1,
        check [META, at_follow(flags, path), dirfd, path, false];
    #[cfg(target_os = "linux")]
    "fstatat64" as "fstatat"
    fn fstatat64(dirfd: c_int, path: *const c_char, buf: *mut libc::stat64, flags: c_int) -> c_int,
        fail -1,
        check [META, at_follow(flags, path), dirfd, path, false];
    #[cfg(target_os = "linux")]
    "statx" as "statx"
    fn statx(dirfd: c_int, path: *const c_char, flags: c_int, mask: c_uint, buf: *mut c_void) -> c_int,
        sys SYS_statx,
        fail -1,
        check [META, at_follow(flags, path), dirfd, path, false];
    #[cfg(target_os = "linux")]
    /// glibc < 2.33 headers compile stat to this.
    "__xstat" as "stat"
    fn __xstat(ver: c_int, path: *const c_char, buf: *mut libc::stat) -> c_int,
        fail -1,
        check [META, Follow::Yes, AT_FDCWD, path, false];
    #[cfg(target_os = "linux")]
    "__xstat64" as "stat"
    fn __xstat64(ver: c_int, path: *const c_char, buf: *mut libc::stat64) -> c_int,
        fail -1,
        check [META, Follow::Yes, AT_FDCWD, path, false];
    #[cfg(target_os = "linux")]
    "__lxstat" as "lstat"
    fn __lxstat(ver: c_int, path: *const c_char, buf: *mut libc::stat) -> c_int,
        fail -1,
        check [META, Follow::NoFollow, AT_FDCWD, path, false];
    #[cfg(target_os = "linux")]
    "__lxstat64" as "lstat"
    fn __lxstat64(ver: c_int, path: *const c_char, buf: *mut libc::stat64) -> c_int,
        fail -1,
        check [META, Follow::NoFollow, AT_FDCWD, path, false];
    #[cfg(target_os = "linux")]
    "__fxstatat" as "fstatat"
    fn __fxstatat(ver: c_int, dirfd: c_int, path: *const c_char, buf: *mut libc::stat, flags: c_int) -> c_int,
        fail -1,
        check [META, at_follow(flags, path), dirfd, path, false];
    #[cfg(target_os = "linux")]
    "__fxstatat64" as "fstatat"
    fn __fxstatat64(ver: c_int, dirfd: c_int, path: *const c_char, buf: *mut libc::stat64, flags: c_int) -> c_int,
        fail -1,
        check [META, at_follow(flags, path), dirfd, path, false];
    "access" as "access"
    fn access(path: *const c_char, mode: c_int) -> c_int,
        sys #[cfg(target_arch = "x86_64")] SYS_access,
        fail -1,
        check [META, Follow::Yes, AT_FDCWD, path, false];
    "faccessat" as "faccessat"
    fn faccessat(dirfd: c_int, path: *const c_char, mode: c_int, flags: c_int) -> c_int,
        sys SYS_faccessat2,
        fail -1,
        check [META, at_follow(flags, path), dirfd, path, false];
    #[cfg(target_os = "linux")]
    "eaccess" as "eaccess"
    fn eaccess(path: *const c_char, mode: c_int) -> c_int,
        fail -1,
        check [META, Follow::Yes, AT_FDCWD, path, false];
    #[cfg(target_os = "linux")]
    "euidaccess" as "euidaccess"
    fn euidaccess(path: *const c_char, mode: c_int) -> c_int,
        fail -1,
        check [META, Follow::Yes, AT_FDCWD, path, false];
    "readlink" as "readlink"
    fn readlink(path: *const c_char, buf: *mut c_char, size: size_t) -> ssize_t,
        sys #[cfg(target_arch = "x86_64")] SYS_readlink,
        fail -1,
        check [META, Follow::Entry, AT_FDCWD, path, false];
    "readlinkat" as "readlinkat"
    fn readlinkat(dirfd: c_int, path: *const c_char, buf: *mut c_char, size: size_t) -> ssize_t,
        sys SYS_readlinkat,
        fail -1,
        check [META, entry_or_fd(path), dirfd, path, false];
    #[cfg(target_os = "linux")]
    /// The fortified readlink (`_FORTIFY_SOURCE`).
    "__readlink_chk" as "readlink"
    fn __readlink_chk(path: *const c_char, buf: *mut c_char, size: size_t, buflen: size_t) -> ssize_t,
        fail -1,
        check [META, Follow::Entry, AT_FDCWD, path, false];
    #[cfg(target_os = "linux")]
    "__readlinkat_chk" as "readlinkat"
    fn __readlinkat_chk(dirfd: c_int, path: *const c_char, buf: *mut c_char, size: size_t, buflen: size_t) -> ssize_t,
        fail -1,
        check [META, entry_or_fd(path), dirfd, path, false];
    "realpath" as "realpath"
    fn realpath(path: *const c_char, resolved: *mut c_char) -> *mut c_char,
        fail std::ptr::null_mut(),
        check [META, Follow::Yes, AT_FDCWD, path, false];
    #[cfg(target_os = "linux")]
    "__realpath_chk" as "realpath"
    fn __realpath_chk(path: *const c_char, resolved: *mut c_char, resolvedlen: size_t) -> *mut c_char,
        fail std::ptr::null_mut(),
        check [META, Follow::Yes, AT_FDCWD, path, false];
    #[cfg(target_os = "linux")]
    "canonicalize_file_name" as "canonicalize_file_name"
    fn canonicalize_file_name(path: *const c_char) -> *mut c_char,
        fail std::ptr::null_mut(),
        check [META, Follow::Yes, AT_FDCWD, path, false];
    #[cfg(target_os = "linux")]
    "getxattr" as "getxattr"
    fn getxattr(path: *const c_char, name: *const c_char, value: *mut c_void, size: size_t) -> ssize_t,
        sys SYS_getxattr,
        fail -1,
        check [META, Follow::Yes, AT_FDCWD, path, false];
    #[cfg(target_os = "linux")]
    "lgetxattr" as "lgetxattr"
    fn lgetxattr(path: *const c_char, name: *const c_char, value: *mut c_void, size: size_t) -> ssize_t,
        sys SYS_lgetxattr,
        fail -1,
        check [META, Follow::NoFollow, AT_FDCWD, path, false];
    #[cfg(target_os = "linux")]
    "listxattr" as "listxattr"
    fn listxattr(path: *const c_char, list: *mut c_char, size: size_t) -> ssize_t,
        sys SYS_listxattr,
        fail -1,
        check [META, Follow::Yes, AT_FDCWD, path, false];
    #[cfg(target_os = "linux")]
    "llistxattr" as "llistxattr"
    fn llistxattr(path: *const c_char, list: *mut c_char, size: size_t) -> ssize_t,
        sys SYS_llistxattr,
        fail -1,
        check [META, Follow::NoFollow, AT_FDCWD, path, false];
    "statfs" as "statfs"
    fn statfs(path: *const c_char, buf: *mut libc::statfs) -> c_int,
        sys SYS_statfs,
        fail -1,
        check [META, Follow::Yes, AT_FDCWD, path, false];
    #[cfg(target_os = "linux")]
    "statfs64" as "statfs"
    fn statfs64(path: *const c_char, buf: *mut libc::statfs64) -> c_int,
        fail -1,
        check [META, Follow::Yes, AT_FDCWD, path, false];
    "statvfs" as "statvfs"
    fn statvfs(path: *const c_char, buf: *mut libc::statvfs) -> c_int,
        fail -1,
        check [META, Follow::Yes, AT_FDCWD, path, false];
    #[cfg(target_os = "linux")]
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
}
