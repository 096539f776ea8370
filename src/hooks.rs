//! The hooked libc calls, declared as data.
//!
//! One entry per symbol says which arguments are paths, relative to which
//! dirfd, whether the last component is followed, and what access is checked.
//! The `hooks!` macro ([`crate::entry`]) turns each entry into an exported
//! function (classify → resolve → decide → real call or deny) and a row of
//! [`TABLE`], from which the hook reference in `docs/hooks.md` is generated
//! and checked.

use std::ffi::{c_char, c_int, c_uint};

use fsguard_policy::Access;
use libc::{mode_t, AT_FDCWD, AT_SYMLINK_FOLLOW, AT_SYMLINK_NOFOLLOW, FILE};

pub use crate::classify::{open_access, open_follow, open_or_handle};
use crate::guard::CArg;
use crate::resolve::{Follow, Via};
#[cfg(target_os = "linux")]
pub(crate) use crate::table::{chk, row};
pub use crate::table::{CheckInfo, HookInfo};

const READ: Option<Access> = Some(Access::Read);
const WRITE: Option<Access> = Some(Access::Write);

/// The open flags of an fopen mode string (`r`, `w`, `a`, `x`, `+`).
pub fn fopen_flags(mode: CArg<'_>) -> c_int {
    let Some(m) = mode.get() else {
        return 0;
    };
    let m = m.to_bytes();
    let plus = m.contains(&b'+');
    let mut flags = match m.first() {
        Some(b'w') => libc::O_CREAT | libc::O_TRUNC,
        Some(b'a') => libc::O_CREAT | libc::O_APPEND,
        _ => 0,
    };
    flags |= if plus {
        libc::O_RDWR
    } else if matches!(m.first(), Some(b'w' | b'a')) {
        libc::O_WRONLY
    } else {
        0
    };
    if m.contains(&b'x') {
        // Exclusive create; glibc only accepts it after w, but never let an
        // odd mode string read as a read.
        flags |= libc::O_CREAT | libc::O_EXCL;
        if flags & libc::O_RDWR == 0 {
            flags |= libc::O_WRONLY;
        }
    }
    flags
}

/// The open flags of a plain fopen mode (`r`, `w`, `a`, with `+ b x e m`),
/// which glibc's fopen and fdopen treat alike; `None` for anything else
/// (`,ccs=`).
fn plain_fopen_flags(mode: CArg<'_>) -> Option<c_int> {
    let m = mode.get()?.to_bytes();
    if !matches!(m.first(), Some(b'r' | b'w' | b'a'))
        || !m[1..]
            .iter()
            .all(|c| matches!(c, b'+' | b'b' | b'x' | b'e' | b'm' | b't'))
    {
        return None;
    }
    let mut flags = fopen_flags(mode);
    if m.contains(&b'e') {
        flags |= libc::O_CLOEXEC;
    }
    Some(flags)
}

/// A stream on `fd`, just opened by fopen's rules; `fd` is closed on failure.
fn stream_on(fd: c_int, mode: CArg<'_>, flags: c_int) -> *mut FILE {
    if fd < 0 {
        return std::ptr::null_mut();
    }
    // SAFETY: our own fresh fd and the caller's mode; lseek and fdopen are
    // not hooked.
    unsafe {
        if flags & libc::O_APPEND != 0 {
            // fopen starts an append stream at the end; fdopen would not.
            libc::lseek(fd, 0, libc::SEEK_END);
        }
        let f = libc::fdopen(fd, mode.as_ptr());
        if f.is_null() {
            let e = crate::guard::errno();
            libc::close(fd);
            crate::guard::set_errno(e);
        }
        f
    }
}

/// fopen in one `openat2` (see [`crate::guard::open_fast`]) and an `fdopen`.
fn fopen_fast(path: CArg<'_>, mode: CArg<'_>) -> Option<*mut FILE> {
    let flags = plain_fopen_flags(mode)?;
    let fd = crate::guard::open_fast(AT_FDCWD, path, flags, 0o666)?;
    Some(stream_on(fd, mode, flags))
}

/// A directory stream on `fd`, just opened; `fd` is closed on failure.
fn dir_on(fd: c_int) -> *mut libc::DIR {
    if fd < 0 {
        return std::ptr::null_mut();
    }
    // SAFETY: our own fresh directory fd; fdopendir is not hooked.
    unsafe {
        let d = libc::fdopendir(fd);
        if d.is_null() {
            let e = crate::guard::errno();
            libc::close(fd);
            crate::guard::set_errno(e);
        }
        d
    }
}

/// creat(2) is open with these.
const CREAT_FLAGS: c_int = libc::O_CREAT | libc::O_WRONLY | libc::O_TRUNC;

const OPENDIR_FLAGS: c_int =
    libc::O_RDONLY | libc::O_NONBLOCK | libc::O_DIRECTORY | libc::O_CLOEXEC;

/// opendir as glibc does it (`open` with `O_DIRECTORY`, then `fdopendir`),
/// with the open done by [`crate::guard::open_fast`].
fn opendir_fast(path: CArg<'_>) -> Option<*mut libc::DIR> {
    let fd = crate::guard::open_fast(AT_FDCWD, path, OPENDIR_FLAGS, 0)?;
    Some(dir_on(fd))
}

/// `*at` flags: AT_EMPTY_PATH with "" or a NULL path act on the dirfd,
/// AT_SYMLINK_NOFOLLOW on the entry.
pub fn at_follow(flags: c_int, path: CArg<'_>) -> Follow {
    if path.is_null() || (crate::classify::empty_path(flags) && path.is_empty()) {
        Follow::Fd
    } else if flags & AT_SYMLINK_NOFOLLOW != 0 {
        Follow::NoFollow
    } else {
        Follow::Yes
    }
}

/// linkat's source: not followed unless AT_SYMLINK_FOLLOW.
pub fn link_follow(flags: c_int, path: CArg<'_>) -> Follow {
    if crate::classify::empty_path(flags) && path.is_empty() {
        Follow::Fd
    } else if flags & AT_SYMLINK_FOLLOW != 0 {
        Follow::Yes
    } else {
        Follow::Entry
    }
}

/// freopen with a NULL path reopens the stream's own file.
fn stream_fd(path: CArg<'_>, stream: *mut FILE) -> c_int {
    if path.is_null() && !stream.is_null() {
        // SAFETY: a FILE the caller handed to freopen.
        unsafe { libc::fileno(stream) }
    } else {
        AT_FDCWD
    }
}

fn stream_follow(path: CArg<'_>, mode: CArg<'_>) -> Follow {
    if path.is_null() {
        Follow::Fd
    } else {
        open_follow(fopen_flags(mode))
    }
}

/// open(2) of the checked object: reopened through `/proc/self/fd/N` on
/// Linux (the real `open`, as called); through its entry on Darwin.
#[inline(always)]
fn open_object(v: &Via, flags: c_int, mode: mode_t) -> c_int {
    #[cfg(target_os = "linux")]
    return hooks!(@real "open", OpenFn, -1, (v.abs(), v.oflags(flags), mode as c_uint));
    #[cfg(not(target_os = "linux"))]
    return open_via(v, flags, mode);
}

/// An open through the check's [`Via`]: the object reopened through its
/// fd, or the entry created in the parent held.
pub fn open_via(v: &Via, flags: c_int, mode: mode_t) -> c_int {
    hooks!(@real "openat", OpenatFn, -1, (v.dirfd(), v.path(), v.oflags(flags), mode as c_uint))
}

/// A refused freopen fails as glibc's does when the file cannot be opened:
/// the original stream is closed (not freed: the caller may still fclose
/// it), NULL with errno. glibc closes it itself when asked to reopen onto
/// `""`, which no open accepts. (`mode` as the hook's entry sees it, or as
/// the real call gets it.)
pub(crate) fn freopen_refused(mode: impl Into<*const c_char>, stream: *mut FILE) -> *mut FILE {
    let mode = mode.into();
    let e = crate::guard::errno();
    if !stream.is_null() {
        let r =
            hooks!(@real "freopen", FreopenFn, std::ptr::null_mut(), (c"".as_ptr(), mode, stream));
        debug_assert!(r.is_null());
    }
    crate::guard::set_errno(e);
    std::ptr::null_mut()
}

type FreopenFn = unsafe extern "C" fn(*const c_char, *const c_char, *mut FILE) -> *mut FILE;

/// freopen of the checked object: `/proc/self/fd/N` reopened by the real
/// freopen, the check's fds kept high first (glibc `dup3`s the file it
/// opens onto the stream's old number, which the check's fd may hold, and
/// the check would then close the program's stream); on Darwin, where no
/// path reaches an fd, refused (`hooks_more/acts.rs`).
fn freopen_via(
    t: &mut crate::guard::Vias,
    path: CArg<'_>,
    mode: CArg<'_>,
    stream: *mut FILE,
) -> *mut FILE {
    #[cfg(target_os = "linux")]
    {
        let _ = path;
        let t = t.keep_high();
        hooks!(@real "freopen", FreopenFn, std::ptr::null_mut(), (t[0].abs(), mode.as_ptr(), stream))
    }
    #[cfg(not(target_os = "linux"))]
    crate::hooks_more::acts::freopen(&t[0], path, mode, stream)
}

/// fopen of the checked object: opened through the check's [`Via`], then
/// `fdopen`; an unusual mode reopens `/proc/self/fd/N` with the real fopen.
fn fopen_via(v: &Via, mode: CArg<'_>) -> *mut FILE {
    match plain_fopen_flags(mode) {
        Some(flags) => stream_on(open_via(v, flags, 0o666), mode, flags),
        #[cfg(target_os = "linux")]
        None => hooks!(@real "fopen", FopenFn, std::ptr::null_mut(), (v.abs(), mode.as_ptr())),
        // Darwin: no path reaches the fd. Its fopen reads a mode up to the
        // first character it does not know; fopen_flags reads at least as
        // much access as was checked, and fdopen takes the mode as fopen.
        #[cfg(not(target_os = "linux"))]
        None if matches!(
            mode.get().map(|m| m.to_bytes().first()),
            Some(Some(b'r' | b'w' | b'a'))
        ) =>
        {
            let flags = fopen_flags(mode);
            stream_on(open_via(v, flags, 0o666), mode, flags)
        }
        #[cfg(not(target_os = "linux"))]
        None => {
            crate::guard::set_errno(libc::EINVAL);
            std::ptr::null_mut()
        }
    }
}

/// remove(3) as glibc does it: unlink, and rmdir on EISDIR.
fn remove_via(v: &Via) -> c_int {
    let r = hooks!(@real "unlinkat", UnlinkatFn, -1, (v.dirfd(), v.path(), 0));
    if r == 0 || crate::guard::errno() != libc::EISDIR {
        return r;
    }
    hooks!(@real "unlinkat", UnlinkatFn, -1, (v.dirfd(), v.path(), libc::AT_REMOVEDIR))
}

#[cfg(target_os = "linux")]
type Open2Fn = unsafe extern "C" fn(*const c_char, c_int) -> c_int;
#[cfg(target_os = "linux")]
type Openat2Fn = unsafe extern "C" fn(c_int, *const c_char, c_int) -> c_int;
#[cfg(target_os = "linux")]
type FopenFn = unsafe extern "C" fn(*const c_char, *const c_char) -> *mut FILE;
type UnlinkatFn = unsafe extern "C" fn(c_int, *const c_char, c_int) -> c_int;
type MkdiratFn = unsafe extern "C" fn(c_int, *const c_char, mode_t) -> c_int;
type RenameatFn = unsafe extern "C" fn(c_int, *const c_char, c_int, *const c_char) -> c_int;
#[cfg(target_os = "linux")]
type Renameat2Fn =
    unsafe extern "C" fn(c_int, *const c_char, c_int, *const c_char, c_uint) -> c_int;
type LinkatFn = unsafe extern "C" fn(c_int, *const c_char, c_int, *const c_char, c_int) -> c_int;
type SymlinkatFn = unsafe extern "C" fn(*const c_char, c_int, *const c_char) -> c_int;
type FchmodatFn = unsafe extern "C" fn(c_int, *const c_char, mode_t, c_int) -> c_int;
type FchownatFn =
    unsafe extern "C" fn(c_int, *const c_char, libc::uid_t, libc::gid_t, c_int) -> c_int;
type UtimensatFn =
    unsafe extern "C" fn(c_int, *const c_char, *const libc::timespec, c_int) -> c_int;
type OpenFn = unsafe extern "C" fn(*const c_char, c_int, ...) -> c_int;
type OpenatFn = unsafe extern "C" fn(c_int, *const c_char, c_int, ...) -> c_int;

#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
use libc::{
    SYS_chmod, SYS_chown, SYS_creat, SYS_lchown, SYS_link, SYS_mkdir, SYS_open, SYS_rename,
    SYS_rmdir, SYS_symlink, SYS_unlink, SYS_utime, SYS_utimes,
};
#[cfg(target_os = "linux")]
use libc::{
    SYS_fchownat, SYS_linkat, SYS_mkdirat, SYS_openat, SYS_renameat, SYS_renameat2, SYS_symlinkat,
    SYS_truncate, SYS_unlinkat, SYS_utimensat,
};

/// fchmodat2, which takes fchmodat's flags (`SYS_fchmodat` has none). Newer
/// than some libc crate targets know; the number is the same on every
/// architecture (the unified table).
pub const SYS_FCHMODAT2: std::ffi::c_long = 452;

hooks! {
    table TABLE, syscalls TABLE_SYSCALLS;
    /// open(2); the variadic `open` in shim/shim.c calls this with the mode.
    "open" as "open"
    fn fsguard_open(path: *const c_char, flags: c_int, mode: mode_t) -> c_int,
        sys #[cfg(target_arch = "x86_64")] SYS_open,
        real OpenFn = (path, flags, mode as c_uint),
        fast crate::guard::open_fast(AT_FDCWD, path, flags, mode),
        act |t| open_object(&t.keep_high()[0], flags, mode),
        fail -1,
        check [open_or_handle(flags), open_follow(flags), AT_FDCWD, path, false];
    #[cfg(target_os = "linux")]
    "open64" as "open"
    fn fsguard_open64(path: *const c_char, flags: c_int, mode: mode_t) -> c_int,
        real OpenFn = (path, flags, mode as c_uint),
        fast crate::guard::open_fast(AT_FDCWD, path, flags, mode),
        act |t| {
            let t = t.keep_high();
            hooks!(@real "open64", OpenFn, -1, (t[0].abs(), t[0].oflags(flags), mode as c_uint))
        },
        fail -1,
        check [open_or_handle(flags), open_follow(flags), AT_FDCWD, path, false];
    "openat" as "openat"
    fn fsguard_openat(dirfd: c_int, path: *const c_char, flags: c_int, mode: mode_t) -> c_int,
        sys SYS_openat,
        real OpenatFn = (dirfd, path, flags, mode as c_uint),
        fast crate::guard::open_fast(dirfd, path, flags, mode),
        act |t| {
            let t = t.keep_high();
            hooks!(@real "openat", OpenatFn, -1, (t[0].dirfd(), t[0].path(), t[0].oflags(flags), mode as c_uint))
        },
        fail -1,
        check [open_or_handle(flags), open_follow(flags), dirfd, path, false];
    #[cfg(target_os = "linux")]
    "openat64" as "openat"
    fn fsguard_openat64(dirfd: c_int, path: *const c_char, flags: c_int, mode: mode_t) -> c_int,
        real OpenatFn = (dirfd, path, flags, mode as c_uint),
        fast crate::guard::open_fast(dirfd, path, flags, mode),
        act |t| {
            let t = t.keep_high();
            hooks!(@real "openat64", OpenatFn, -1, (t[0].dirfd(), t[0].path(), t[0].oflags(flags), mode as c_uint))
        },
        fail -1,
        check [open_or_handle(flags), open_follow(flags), dirfd, path, false];
    #[cfg(target_os = "linux")]
    /// The fortified open (`_FORTIFY_SOURCE`) for calls without a mode.
    "__open_2" as "open"
    fn __open_2(path: *const c_char, flags: c_int) -> c_int,
        fast crate::guard::open_fast_fortified(AT_FDCWD, path, flags),
        act |t| {
            let t = t.keep_high();
            hooks!(@real "__open_2", Open2Fn, -1, (t[0].abs(), t[0].oflags(flags)))
        },
        fail -1,
        check [open_or_handle(flags), open_follow(flags), AT_FDCWD, path, false];
    #[cfg(target_os = "linux")]
    "__open64_2" as "open"
    fn __open64_2(path: *const c_char, flags: c_int) -> c_int,
        fast crate::guard::open_fast_fortified(AT_FDCWD, path, flags),
        act |t| {
            let t = t.keep_high();
            hooks!(@real "__open64_2", Open2Fn, -1, (t[0].abs(), t[0].oflags(flags)))
        },
        fail -1,
        check [open_or_handle(flags), open_follow(flags), AT_FDCWD, path, false];
    #[cfg(target_os = "linux")]
    "__openat_2" as "openat"
    fn __openat_2(dirfd: c_int, path: *const c_char, flags: c_int) -> c_int,
        fast crate::guard::open_fast_fortified(dirfd, path, flags),
        act |t| {
            let t = t.keep_high();
            hooks!(@real "__openat_2", Openat2Fn, -1, (t[0].dirfd(), t[0].path(), t[0].oflags(flags)))
        },
        fail -1,
        check [open_or_handle(flags), open_follow(flags), dirfd, path, false];
    #[cfg(target_os = "linux")]
    "__openat64_2" as "openat"
    fn __openat64_2(dirfd: c_int, path: *const c_char, flags: c_int) -> c_int,
        fast crate::guard::open_fast_fortified(dirfd, path, flags),
        act |t| {
            let t = t.keep_high();
            hooks!(@real "__openat64_2", Openat2Fn, -1, (t[0].dirfd(), t[0].path(), t[0].oflags(flags)))
        },
        fail -1,
        check [open_or_handle(flags), open_follow(flags), dirfd, path, false];
    "creat" as "creat"
    fn creat(path: *const c_char, mode: mode_t) -> c_int,
        sys #[cfg(target_arch = "x86_64")] SYS_creat,
        fast crate::guard::open_fast(AT_FDCWD, path, CREAT_FLAGS, mode),
        act |t| open_via(&t.keep_high()[0], CREAT_FLAGS, mode),
        fail -1,
        check [WRITE, Follow::Create, AT_FDCWD, path, false];
    #[cfg(target_os = "linux")]
    "creat64" as "creat"
    fn creat64(path: *const c_char, mode: mode_t) -> c_int,
        fast crate::guard::open_fast(AT_FDCWD, path, CREAT_FLAGS, mode),
        act |t| open_via(&t.keep_high()[0], CREAT_FLAGS, mode),
        fail -1,
        check [WRITE, Follow::Create, AT_FDCWD, path, false];
    /// glibc's fopen opens through an internal call no hook sees.
    "fopen" as "fopen"
    fn fopen(path: *const c_char, mode: *const c_char) -> *mut FILE,
        fast fopen_fast(path, mode),
        act |t| fopen_via(&t.keep_high()[0], mode),
        fail std::ptr::null_mut(),
        check [open_access(fopen_flags(mode)), open_follow(fopen_flags(mode)), AT_FDCWD, path, false];
    #[cfg(target_os = "linux")]
    "fopen64" as "fopen"
    fn fopen64(path: *const c_char, mode: *const c_char) -> *mut FILE,
        fast fopen_fast(path, mode),
        act |t| fopen_via(&t.keep_high()[0], mode),
        fail std::ptr::null_mut(),
        check [open_access(fopen_flags(mode)), open_follow(fopen_flags(mode)), AT_FDCWD, path, false];
    /// A NULL path reopens the stream's own file with a new mode.
    "freopen" as "freopen"
    fn freopen(path: *const c_char, mode: *const c_char, stream: *mut FILE) -> *mut FILE,
        act |t| freopen_via(t, path, mode, stream),
        fail freopen_refused(mode, stream),
        check [open_access(fopen_flags(mode)), stream_follow(path, mode), stream_fd(path, stream), path, false];
    #[cfg(target_os = "linux")]
    "freopen64" as "freopen"
    fn freopen64(path: *const c_char, mode: *const c_char, stream: *mut FILE) -> *mut FILE,
        act |t| freopen_via(t, path, mode, stream),
        fail freopen_refused(mode, stream),
        check [open_access(fopen_flags(mode)), stream_follow(path, mode), stream_fd(path, stream), path, false];
    "opendir" as "opendir"
    fn opendir(path: *const c_char) -> *mut libc::DIR,
        fast opendir_fast(path),
        act |t| dir_on(open_via(&t.keep_high()[0], OPENDIR_FLAGS, 0)),
        fail std::ptr::null_mut(),
        check [READ, Follow::Yes, AT_FDCWD, path, false];
    "unlink" as "unlink"
    fn unlink(path: *const c_char) -> c_int,
        sys #[cfg(target_arch = "x86_64")] SYS_unlink,
        act |t| hooks!(@real "unlinkat", UnlinkatFn, -1, (t[0].dirfd(), t[0].path(), 0)),
        fail -1,
        check [WRITE, Follow::Entry, AT_FDCWD, path, false];
    "unlinkat" as "unlinkat"
    fn unlinkat(dirfd: c_int, path: *const c_char, flags: c_int) -> c_int,
        sys SYS_unlinkat,
        act |t| hooks!(@real "unlinkat", UnlinkatFn, -1, (t[0].dirfd(), t[0].path(), flags)),
        fail -1,
        check [WRITE, Follow::Entry, dirfd, path, false];
    "remove" as "remove"
    fn remove(path: *const c_char) -> c_int,
        act |t| remove_via(&t[0]),
        fail -1,
        check [WRITE, Follow::Entry, AT_FDCWD, path, false];
    "rmdir" as "rmdir"
    fn rmdir(path: *const c_char) -> c_int,
        sys #[cfg(target_arch = "x86_64")] SYS_rmdir,
        act |t| hooks!(@real "unlinkat", UnlinkatFn, -1, (t[0].dirfd(), t[0].path(), libc::AT_REMOVEDIR)),
        fail -1,
        check [WRITE, Follow::Entry, AT_FDCWD, path, false];
    "rename" as "rename"
    fn rename(old: *const c_char, new: *const c_char) -> c_int,
        sys #[cfg(target_arch = "x86_64")] SYS_rename,
        act |t| hooks!(@real "renameat", RenameatFn, -1, (t[0].dirfd(), t[0].path(), t[1].dirfd(), t[1].path())),
        fail -1,
        check [WRITE, Follow::Entry, AT_FDCWD, old, true; WRITE, Follow::Entry, AT_FDCWD, new, false];
    "renameat" as "renameat"
    fn renameat(olddirfd: c_int, old: *const c_char, newdirfd: c_int, new: *const c_char) -> c_int,
        sys SYS_renameat,
        act |t| hooks!(@real "renameat", RenameatFn, -1, (t[0].dirfd(), t[0].path(), t[1].dirfd(), t[1].path())),
        fail -1,
        check [WRITE, Follow::Entry, olddirfd, old, true; WRITE, Follow::Entry, newdirfd, new, false];
    #[cfg(target_os = "linux")]
    /// RENAME_EXCHANGE moves both files.
    "renameat2" as "renameat2"
    fn renameat2(olddirfd: c_int, old: *const c_char, newdirfd: c_int, new: *const c_char, flags: c_uint) -> c_int,
        sys SYS_renameat2,
        act |t| hooks!(@real "renameat2", Renameat2Fn, -1, (t[0].dirfd(), t[0].path(), t[1].dirfd(), t[1].path(), flags)),
        fail -1,
        check [WRITE, Follow::Entry, olddirfd, old, true;
               WRITE, Follow::Entry, newdirfd, new, flags & libc::RENAME_EXCHANGE != 0];
    "mkdir" as "mkdir"
    fn mkdir(path: *const c_char, mode: mode_t) -> c_int,
        sys #[cfg(target_arch = "x86_64")] SYS_mkdir,
        act |t| hooks!(@real "mkdirat", MkdiratFn, -1, (t[0].dirfd(), t[0].path(), mode)),
        fail -1,
        check [WRITE, Follow::Entry, AT_FDCWD, path, false];
    "mkdirat" as "mkdirat"
    fn mkdirat(dirfd: c_int, path: *const c_char, mode: mode_t) -> c_int,
        sys SYS_mkdirat,
        act |t| hooks!(@real "mkdirat", MkdiratFn, -1, (t[0].dirfd(), t[0].path(), mode)),
        fail -1,
        check [WRITE, Follow::Entry, dirfd, path, false];
    "chmod" as "chmod"
    fn chmod(path: *const c_char, mode: mode_t) -> c_int,
        sys #[cfg(target_arch = "x86_64")] SYS_chmod,
        via path,
        fail -1,
        check [WRITE, Follow::Yes, AT_FDCWD, path, false];
    "fchmodat" as "fchmodat"
    fn fchmodat(dirfd: c_int, path: *const c_char, mode: mode_t, flags: c_int) -> c_int,
        sys SYS_FCHMODAT2,
        act |t| hooks!(@real "fchmodat", FchmodatFn, -1, (t[0].dirfd(), t[0].path(), mode, t[0].atflags(flags))),
        fail -1,
        check [WRITE, at_follow(flags, path), dirfd, path, false];
    "chown" as "chown"
    fn chown(path: *const c_char, owner: libc::uid_t, group: libc::gid_t) -> c_int,
        sys #[cfg(target_arch = "x86_64")] SYS_chown,
        via path,
        fail -1,
        check [WRITE, Follow::Yes, AT_FDCWD, path, false];
    "lchown" as "lchown"
    fn lchown(path: *const c_char, owner: libc::uid_t, group: libc::gid_t) -> c_int,
        sys #[cfg(target_arch = "x86_64")] SYS_lchown,
        via path,
        fail -1,
        check [WRITE, Follow::NoFollow, AT_FDCWD, path, false];
    "fchownat" as "fchownat"
    fn fchownat(dirfd: c_int, path: *const c_char, owner: libc::uid_t, group: libc::gid_t, flags: c_int) -> c_int,
        sys SYS_fchownat,
        act |t| hooks!(@real "fchownat", FchownatFn, -1, (t[0].dirfd(), t[0].path(), owner, group, t[0].atflags(flags))),
        fail -1,
        check [WRITE, at_follow(flags, path), dirfd, path, false];
    /// A hard link is a new name for the file: both ends are writes, and a
    /// protected file may not get a name its rules do not cover.
    "link" as "link"
    fn link(old: *const c_char, new: *const c_char) -> c_int,
        sys #[cfg(target_arch = "x86_64")] SYS_link,
        act |t| hooks!(@real "linkat", LinkatFn, -1, (t[0].dirfd(), t[0].path(), t[1].dirfd(), t[1].path(), 0)),
        fail -1,
        check [WRITE, Follow::Entry, AT_FDCWD, old, true; WRITE, Follow::Entry, AT_FDCWD, new, false];
    "linkat" as "linkat"
    fn linkat(olddirfd: c_int, old: *const c_char, newdirfd: c_int, new: *const c_char, flags: c_int) -> c_int,
        sys SYS_linkat,
        act |t| hooks!(@real "linkat", LinkatFn, -1, (t[0].dirfd(), t[0].path(), t[1].dirfd(), t[1].path(), t[0].linkflags(flags))),
        fail -1,
        check [WRITE, link_follow(flags, old), olddirfd, old, true; WRITE, Follow::Entry, newdirfd, new, false];
    /// The target is only text; the new name is what is created.
    "symlink" as "symlink"
    fn symlink(target: *const c_char, linkpath: *const c_char) -> c_int,
        sys #[cfg(target_arch = "x86_64")] SYS_symlink,
        act |t| hooks!(@real "symlinkat", SymlinkatFn, -1, (target.as_ptr(), t[0].dirfd(), t[0].path())),
        fail -1,
        check [WRITE, Follow::Entry, AT_FDCWD, linkpath, false];
    "symlinkat" as "symlinkat"
    fn symlinkat(target: *const c_char, newdirfd: c_int, linkpath: *const c_char) -> c_int,
        sys SYS_symlinkat,
        act |t| hooks!(@real "symlinkat", SymlinkatFn, -1, (target.as_ptr(), t[0].dirfd(), t[0].path())),
        fail -1,
        check [WRITE, Follow::Entry, newdirfd, linkpath, false];
    "truncate" as "truncate"
    fn truncate(path: *const c_char, length: libc::off_t) -> c_int,
        sys SYS_truncate,
        via path,
        fail -1,
        check [WRITE, Follow::Yes, AT_FDCWD, path, false];
    #[cfg(target_os = "linux")]
    "truncate64" as "truncate"
    fn truncate64(path: *const c_char, length: libc::off64_t) -> c_int,
        via path,
        fail -1,
        check [WRITE, Follow::Yes, AT_FDCWD, path, false];
    "utime" as "utime"
    fn utime(path: *const c_char, times: *const libc::utimbuf) -> c_int,
        sys #[cfg(target_arch = "x86_64")] SYS_utime,
        via path,
        fail -1,
        check [WRITE, Follow::Yes, AT_FDCWD, path, false];
    "utimes" as "utimes"
    fn utimes(path: *const c_char, times: *const libc::timeval) -> c_int,
        sys #[cfg(target_arch = "x86_64")] SYS_utimes,
        via path,
        fail -1,
        check [WRITE, Follow::Yes, AT_FDCWD, path, false];
    /// A NULL path acts on the dirfd itself.
    "utimensat" as "utimensat"
    fn utimensat(dirfd: c_int, path: *const c_char, times: *const libc::timespec, flags: c_int) -> c_int,
        sys SYS_utimensat,
        act |t| hooks!(@real "utimensat", UtimensatFn, -1, (t[0].dirfd(), t[0].path(), times, t[0].atflags(flags))),
        fail -1,
        check [WRITE, at_follow(flags, path), dirfd, path, false];
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fopen_modes() {
        let f = |m: &std::ffi::CStr| fopen_flags(CArg::of(m));
        assert_eq!(open_access(f(c"r")), READ);
        assert_eq!(open_access(f(c"rb")), READ);
        assert_eq!(open_access(f(c"re")), READ);
        for m in [c"w", c"wb", c"a", c"a+", c"r+", c"x", c"wx"] {
            assert_eq!(open_access(f(m)), WRITE, "{m:?}");
        }
        assert_eq!(open_follow(f(c"wx")), Follow::Entry);
        assert_eq!(open_follow(f(c"w")), Follow::Create);
    }

    #[test]
    fn table_lists_each_symbol_once() {
        let mut seen = std::collections::HashSet::new();
        for h in TABLE {
            assert!(seen.insert(h.symbol), "{} twice", h.symbol);
            assert!(!h.checks.is_empty());
        }
    }
}
