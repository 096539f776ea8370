//! The calls that take a path alone, acting on the object a check reached
//! where no path reaches an fd's object (Darwin: `/dev/fd/N` is no magic
//! link). The `hooks!` rows declared `via path` call these on Darwin
//! instead of handing the real function `/proc/self/fd/N` as on Linux.
//!
//! Each acts through the check's [`Via`]: the `*at` form on the parent fd
//! and the name, not followed for an object ([`Via::atflags`]), or an fd
//! opened that way for the call (`truncate`). A call with no such form on
//! Darwin (`mknod`, `mkfifo` before macOS 13; `freopen` of a path) is
//! refused with a trace line rather than done by path again.

use std::ffi::c_int;

use crate::guard::CArg;

/// utimensat's times for `utimes`' `timeval`s (NULL, "now", stays NULL).
/// A microsecond count times 1000 is never `UTIME_NOW` nor `UTIME_OMIT`
/// (neither is a multiple of 1000), and one out of range stays out of
/// range, so utimensat fails it with EINVAL as utimes would.
#[cfg_attr(all(target_os = "linux", not(test)), allow(dead_code))] // Darwin's, tested on Linux
pub(crate) fn timespecs_of_timevals(
    tv: Option<&[libc::timeval; 2]>,
) -> Option<[libc::timespec; 2]> {
    let one = |t: &libc::timeval| libc::timespec {
        tv_sec: t.tv_sec,
        #[allow(clippy::useless_conversion)] // suseconds_t is i32 on Darwin
        tv_nsec: i64::from(t.tv_usec).saturating_mul(1000) as libc::c_long,
    };
    tv.map(|[a, m]| [one(a), one(m)])
}

/// utimensat's times for `utime`'s `utimbuf` (NULL, "now", stays NULL).
#[cfg_attr(all(target_os = "linux", not(test)), allow(dead_code))] // Darwin's, tested on Linux
pub(crate) fn timespecs_of_utimbuf(u: Option<&libc::utimbuf>) -> Option<[libc::timespec; 2]> {
    let one = |s: libc::time_t| libc::timespec {
        tv_sec: s,
        tv_nsec: 0,
    };
    u.map(|u| [one(u.actime), one(u.modtime)])
}

/// Refuses a call that has no form here acting on what the check held:
/// `Err(errno)` with a trace line (rule `unresolved`: the object checked
/// cannot be reached again but by its path, which may lead elsewhere
/// now); `Ok` in audit mode, where the caller's own call goes ahead.
#[cfg_attr(target_os = "linux", allow(dead_code))] // Darwin's
fn no_fd_form(call: &'static str, path: CArg<'_>) -> Result<(), c_int> {
    let Some(g) = crate::guard::get() else {
        return Err(libc::EACCES);
    };
    let saved = crate::guard::errno();
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let raw = path.get().map_or(&b""[..], std::ffi::CStr::to_bytes);
        g.refuse(
            call,
            fsguard_policy::Access::Write,
            raw,
            fsguard_policy::Rule::Unresolved,
        )
    }))
    .unwrap_or(Err(libc::EACCES));
    crate::guard::set_errno(saved);
    r
}

/// [`no_fd_form`] as the call's return: -1 with errno set, or the caller's
/// own call (`audit`) where audit mode lets it through.
#[cfg(not(target_os = "linux"))]
fn refused(call: &'static str, path: CArg<'_>, audit: impl FnOnce() -> c_int) -> c_int {
    match no_fd_form(call, path) {
        Ok(()) => audit(),
        Err(e) => {
            crate::guard::set_errno(e);
            -1
        }
    }
}

#[cfg(not(target_os = "linux"))]
pub(crate) use darwin::*;

/// The Darwin forms, one per `via path` row that Darwin builds. Darwin's
/// `fchmodat`, `fchownat` and `utimensat` take `AT_SYMLINK_NOFOLLOW`
/// (fchmodat(2), utimensat(2) in macOS's man pages), so `lchmod`, `lchown`
/// and `lutimes` act on the entry as they do on Linux.
#[cfg(not(target_os = "linux"))]
mod darwin {
    use std::ffi::{c_char, c_int};

    use libc::{gid_t, mode_t, off_t, uid_t, AT_SYMLINK_NOFOLLOW, FILE};

    use super::{no_fd_form, refused, timespecs_of_timevals, timespecs_of_utimbuf};
    use crate::guard::CArg;
    use crate::resolve::Via;

    type FchmodatFn = unsafe extern "C" fn(c_int, *const c_char, mode_t, c_int) -> c_int;
    type FchownatFn = unsafe extern "C" fn(c_int, *const c_char, uid_t, gid_t, c_int) -> c_int;
    type UtimensatFn =
        unsafe extern "C" fn(c_int, *const c_char, *const libc::timespec, c_int) -> c_int;
    type OpenatFn = unsafe extern "C" fn(c_int, *const c_char, c_int, ...) -> c_int;
    type MknodFn = unsafe extern "C" fn(*const c_char, mode_t, libc::dev_t) -> c_int;
    type MkfifoFn = unsafe extern "C" fn(*const c_char, mode_t) -> c_int;

    fn fchmodat(v: &Via, mode: mode_t, flags: c_int) -> c_int {
        hooks!(@real "fchmodat", FchmodatFn, -1, (v.dirfd(), v.path(), mode, v.atflags(flags)))
    }

    fn fchownat(v: &Via, owner: uid_t, group: gid_t, flags: c_int) -> c_int {
        hooks!(@real "fchownat", FchownatFn, -1, (v.dirfd(), v.path(), owner, group, v.atflags(flags)))
    }

    fn utimensat(v: &Via, times: Option<[libc::timespec; 2]>, flags: c_int) -> c_int {
        let p = times.as_ref().map_or(std::ptr::null(), |t| t.as_ptr());
        hooks!(@real "utimensat", UtimensatFn, -1, (v.dirfd(), v.path(), p, v.atflags(flags)))
    }

    /// chmod(2) as `fchmodat` on the entry.
    pub(crate) fn chmod(v: &Via, _path: CArg<'_>, mode: mode_t) -> c_int {
        fchmodat(v, mode, 0)
    }

    /// lchmod(2) as `fchmodat(AT_SYMLINK_NOFOLLOW)` on the entry.
    pub(crate) fn lchmod(v: &Via, _path: CArg<'_>, mode: mode_t) -> c_int {
        fchmodat(v, mode, AT_SYMLINK_NOFOLLOW)
    }

    /// chown(2) as `fchownat` on the entry.
    pub(crate) fn chown(v: &Via, _path: CArg<'_>, owner: uid_t, group: gid_t) -> c_int {
        fchownat(v, owner, group, 0)
    }

    /// lchown(2) as `fchownat(AT_SYMLINK_NOFOLLOW)` on the entry.
    pub(crate) fn lchown(v: &Via, _path: CArg<'_>, owner: uid_t, group: gid_t) -> c_int {
        fchownat(v, owner, group, AT_SYMLINK_NOFOLLOW)
    }

    /// utime(3) as `utimensat` on the entry.
    pub(crate) fn utime(v: &Via, _path: CArg<'_>, times: *const libc::utimbuf) -> c_int {
        // SAFETY: NULL or the caller's utimbuf, valid for the call.
        utimensat(v, timespecs_of_utimbuf(unsafe { times.as_ref() }), 0)
    }

    /// utimes(2) as `utimensat` on the entry.
    pub(crate) fn utimes(v: &Via, _path: CArg<'_>, times: *const libc::timeval) -> c_int {
        // SAFETY: NULL or the caller's two timevals, valid for the call.
        let tv = unsafe { times.cast::<[libc::timeval; 2]>().as_ref() };
        utimensat(v, timespecs_of_timevals(tv), 0)
    }

    /// lutimes(2) as `utimensat(AT_SYMLINK_NOFOLLOW)` on the entry.
    pub(crate) fn lutimes(v: &Via, _path: CArg<'_>, times: *const libc::timeval) -> c_int {
        // SAFETY: as for utimes.
        let tv = unsafe { times.cast::<[libc::timeval; 2]>().as_ref() };
        utimensat(v, timespecs_of_timevals(tv), AT_SYMLINK_NOFOLLOW)
    }

    /// truncate(2) has no `*at` form: `ftruncate` on an fd opened for
    /// writing through the entry (not followed; `O_NONBLOCK` and
    /// `O_NOCTTY` so a fifo or a tty neither blocks nor is taken over:
    /// truncate fails on those anyway).
    pub(crate) fn truncate(v: &Via, _path: CArg<'_>, length: off_t) -> c_int {
        let flags = libc::O_WRONLY | libc::O_CLOEXEC | libc::O_NONBLOCK | libc::O_NOCTTY;
        let fd = hooks!(@real "openat", OpenatFn, -1, (v.dirfd(), v.path(), v.oflags(flags)));
        if fd < 0 {
            return -1;
        }
        // SAFETY: our own fresh fd; ftruncate and close are not hooked.
        let r = unsafe { libc::ftruncate(fd, length) };
        let e = crate::guard::errno();
        // SAFETY: as above.
        unsafe { libc::close(fd) };
        crate::guard::set_errno(e);
        r
    }

    /// mknod(2): `mknodat` only from macOS 13 on: refused.
    pub(crate) fn mknod(_v: &Via, path: CArg<'_>, mode: mode_t, dev: libc::dev_t) -> c_int {
        refused(
            "mknod",
            path,
            || hooks!(@real "mknod", MknodFn, -1, (path.as_ptr(), mode, dev)),
        )
    }

    /// mkfifo(3): `mkfifoat` only from macOS 13 on: refused.
    pub(crate) fn mkfifo(_v: &Via, path: CArg<'_>, mode: mode_t) -> c_int {
        refused(
            "mkfifo",
            path,
            || hooks!(@real "mkfifo", MkfifoFn, -1, (path.as_ptr(), mode)),
        )
    }

    /// freopen(3) of a path reopens the stream by that path, and nothing
    /// reopens it on an fd: refused (as a refused freopen fails: the
    /// stream closed, NULL).
    pub(crate) fn freopen(
        _v: &Via,
        path: CArg<'_>,
        mode: CArg<'_>,
        stream: *mut FILE,
    ) -> *mut FILE {
        type FreopenFn = unsafe extern "C" fn(*const c_char, *const c_char, *mut FILE) -> *mut FILE;
        match no_fd_form("freopen", path) {
            Ok(()) => {
                hooks!(@real "freopen", FreopenFn, std::ptr::null_mut(), (path.as_ptr(), mode.as_ptr(), stream))
            }
            Err(e) => {
                crate::guard::set_errno(e);
                crate::hooks::freopen_refused(mode, stream)
            }
        }
    }
}

/// The Darwin-only rows declared `via path` (`hooks_more/darwin.rs`):
/// those with an `f*` form act on an fd opened on what the check reached;
/// the rest have no form that acts on it and are refused.
#[cfg(target_os = "macos")]
pub(crate) use darwin_rows::*;

#[cfg(target_os = "macos")]
mod darwin_rows {
    use std::ffi::{c_char, c_int, c_uint, c_ulong, c_void};

    use libc::size_t;

    use super::refused;
    use crate::guard::CArg;
    use crate::resolve::{Reach, Via};

    type OpenatFn = unsafe extern "C" fn(c_int, *const c_char, c_int, ...) -> c_int;
    type FsetxattrFn =
        unsafe extern "C" fn(c_int, *const c_char, *const c_void, size_t, u32, c_int) -> c_int;
    type FremovexattrFn = unsafe extern "C" fn(c_int, *const c_char, c_int) -> c_int;
    type FchflagsFn = unsafe extern "C" fn(c_int, c_uint) -> c_int;
    type FchmodxFn = unsafe extern "C" fn(c_int, *mut c_void) -> c_int;
    type AclSetFdFn = unsafe extern "C" fn(c_int, *mut c_void, c_int) -> c_int;

    /// `f` on an fd opened for it on what the check reached: the verified
    /// entry with `O_SYMLINK`, which never follows it (a symlink there is
    /// itself the object, open(2)); the caller's path, followed as asked,
    /// when nothing was resolved. Read-only, no fifo block, no tty taken.
    fn on_fd(v: &Via, follow: bool, f: impl FnOnce(c_int) -> c_int) -> c_int {
        let base = libc::O_RDONLY | libc::O_CLOEXEC | libc::O_NONBLOCK | libc::O_NOCTTY;
        let flags = match v.reach() {
            Reach::Caller if follow => base,
            _ => base | libc::O_SYMLINK,
        };
        let fd = hooks!(@real "openat", OpenatFn, -1, (v.dirfd(), v.path(), flags));
        if fd < 0 {
            return -1;
        }
        let r = f(fd);
        let e = crate::guard::errno();
        // SAFETY: our own fresh fd; close is not hooked.
        unsafe { libc::close(fd) };
        crate::guard::set_errno(e);
        r
    }

    /// setxattr(2) as `fsetxattr` (which takes no `XATTR_NOFOLLOW`).
    pub(crate) fn setxattr(
        v: &Via,
        _path: CArg<'_>,
        name: CArg<'_>,
        value: *const c_void,
        size: size_t,
        position: u32,
        options: c_int,
    ) -> c_int {
        let follow = options & libc::XATTR_NOFOLLOW == 0;
        let opts = options & !libc::XATTR_NOFOLLOW;
        on_fd(
            v,
            follow,
            |fd| hooks!(@real "fsetxattr", FsetxattrFn, -1, (fd, name.as_ptr(), value, size, position, opts)),
        )
    }

    /// removexattr(2) as `fremovexattr`.
    pub(crate) fn removexattr(v: &Via, _path: CArg<'_>, name: CArg<'_>, options: c_int) -> c_int {
        let follow = options & libc::XATTR_NOFOLLOW == 0;
        let opts = options & !libc::XATTR_NOFOLLOW;
        on_fd(
            v,
            follow,
            |fd| hooks!(@real "fremovexattr", FremovexattrFn, -1, (fd, name.as_ptr(), opts)),
        )
    }

    /// chflags(2) as `fchflags`.
    pub(crate) fn chflags(v: &Via, _path: CArg<'_>, flags: c_uint) -> c_int {
        on_fd(
            v,
            true,
            |fd| hooks!(@real "fchflags", FchflagsFn, -1, (fd, flags)),
        )
    }

    /// lchflags(2) as `fchflags` on the entry itself.
    pub(crate) fn lchflags(v: &Via, _path: CArg<'_>, flags: c_uint) -> c_int {
        on_fd(
            v,
            false,
            |fd| hooks!(@real "fchflags", FchflagsFn, -1, (fd, flags)),
        )
    }

    /// chmodx_np(3) as `fchmodx_np`.
    pub(crate) fn chmodx_np(v: &Via, _path: CArg<'_>, fsec: *mut c_void) -> c_int {
        on_fd(
            v,
            true,
            |fd| hooks!(@real "fchmodx_np", FchmodxFn, -1, (fd, fsec)),
        )
    }

    /// acl_set_file(3) as `acl_set_fd_np`.
    pub(crate) fn acl_set_file(
        v: &Via,
        _path: CArg<'_>,
        acl_type: c_int,
        acl: *mut c_void,
    ) -> c_int {
        on_fd(
            v,
            true,
            |fd| hooks!(@real "acl_set_fd_np", AclSetFdFn, -1, (fd, acl, acl_type)),
        )
    }

    /// acl_set_link_np(3) as `acl_set_fd_np` on the entry itself.
    pub(crate) fn acl_set_link_np(
        v: &Via,
        _path: CArg<'_>,
        acl_type: c_int,
        acl: *mut c_void,
    ) -> c_int {
        on_fd(
            v,
            false,
            |fd| hooks!(@real "acl_set_fd_np", AclSetFdFn, -1, (fd, acl, acl_type)),
        )
    }

    /// undelete(2): no fd or `*at` form: refused.
    pub(crate) fn undelete(_v: &Via, path: CArg<'_>) -> c_int {
        type F = unsafe extern "C" fn(*const c_char) -> c_int;
        refused(
            "undelete",
            path,
            || hooks!(@real "undelete", F, -1, (path.as_ptr())),
        )
    }

    /// fsctl(2): its fd form would need an fd the request may not accept
    /// (read-only): refused.
    pub(crate) fn fsctl(
        _v: &Via,
        path: CArg<'_>,
        request: c_ulong,
        data: *mut c_void,
        options: c_uint,
    ) -> c_int {
        type F = unsafe extern "C" fn(*const c_char, c_ulong, *mut c_void, c_uint) -> c_int;
        refused(
            "fsctl",
            path,
            || hooks!(@real "fsctl", F, -1, (path.as_ptr(), request, data, options)),
        )
    }

    /// openx_np(3): no `*at` form with a file security object: refused.
    pub(crate) fn openx_np(_v: &Via, path: CArg<'_>, flags: c_int, fsec: *mut c_void) -> c_int {
        type F = unsafe extern "C" fn(*const c_char, c_int, *mut c_void) -> c_int;
        refused(
            "openx_np",
            path,
            || hooks!(@real "openx_np", F, -1, (path.as_ptr(), flags, fsec)),
        )
    }

    /// mkdirx_np(3): no `*at` form: refused.
    pub(crate) fn mkdirx_np(_v: &Via, path: CArg<'_>, fsec: *mut c_void) -> c_int {
        type F = unsafe extern "C" fn(*const c_char, *mut c_void) -> c_int;
        refused(
            "mkdirx_np",
            path,
            || hooks!(@real "mkdirx_np", F, -1, (path.as_ptr(), fsec)),
        )
    }

    /// mkfifox_np(3): no `*at` form: refused.
    pub(crate) fn mkfifox_np(_v: &Via, path: CArg<'_>, fsec: *mut c_void) -> c_int {
        type F = unsafe extern "C" fn(*const c_char, *mut c_void) -> c_int;
        refused(
            "mkfifox_np",
            path,
            || hooks!(@real "mkfifox_np", F, -1, (path.as_ptr(), fsec)),
        )
    }

    /// open_dprotected_np(2): no `*at` form here: refused.
    pub(crate) fn open_dprotected_np(
        path: CArg<'_>,
        flags: c_int,
        class: c_int,
        dpflags: c_int,
        mode: c_uint,
    ) -> c_int {
        type F = unsafe extern "C" fn(*const c_char, c_int, c_int, c_int, ...) -> c_int;
        refused(
            "open_dprotected_np",
            path,
            || hooks!(@real "open_dprotected_np", F, -1, (path.as_ptr(), flags, class, dpflags, mode)),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tv(s: libc::time_t, us: libc::suseconds_t) -> libc::timeval {
        libc::timeval {
            tv_sec: s,
            tv_usec: us,
        }
    }

    fn pair(t: [libc::timespec; 2]) -> [(libc::time_t, libc::c_long); 2] {
        t.map(|t| (t.tv_sec, t.tv_nsec))
    }

    #[test]
    fn timevals_become_timespecs() {
        assert!(timespecs_of_timevals(None).is_none());
        let t = timespecs_of_timevals(Some(&[tv(5, 999_999), tv(-1, 0)])).unwrap();
        assert_eq!(pair(t), [(5, 999_999_000), (-1, 0)]);
        // Out of range stays out of range (utimensat: EINVAL), and never
        // becomes UTIME_NOW or UTIME_OMIT.
        for us in [1_000_000, -1, -2, 1_073_741, libc::suseconds_t::MAX] {
            let [a, _] = pair(timespecs_of_timevals(Some(&[tv(0, us), tv(0, 0)])).unwrap());
            assert!(!(0..1_000_000_000).contains(&a.1), "{us}");
            assert!(a.1 != libc::UTIME_NOW && a.1 != libc::UTIME_OMIT, "{us}");
        }
    }

    #[test]
    fn a_utimbuf_becomes_timespecs() {
        assert!(timespecs_of_utimbuf(None).is_none());
        let u = libc::utimbuf {
            actime: 7,
            modtime: 9,
        };
        assert_eq!(
            pair(timespecs_of_utimbuf(Some(&u)).unwrap()),
            [(7, 0), (9, 0)]
        );
    }
}
