//! Darwin's own path calls: the rows of [`DARWIN`], built for macOS only
//! (and listed in docs/hooks.md on every system, as macOS-only).
//!
//! libSystem exports path-taking calls the Linux tables have no row for:
//! renames with flags, clones, attribute lists, the xattr calls with
//! `position` and `options`, file flags, `copyfile`, the `*x_np` forms
//! with an ACL (`filesec_t`), ACLs by path, temp files at a dirfd, objects
//! named by id, and a few more. Each signature, flag value and meaning
//! follows Apple's headers and man pages (`sys/stdio.h`,
//! `sys/clonefile.h`, `sys/attr.h`, `sys/xattr.h`, `copyfile.h`,
//! `unistd.h`, `sys/stat.h`, `sys/fcntl.h`, `sys/acl.h`, `stdlib.h`,
//! `sys/fsgetpath.h`), as the `libc` crate's apple module spells them where
//! it has them; the flags are [`super::darwin_flags`]'s. What is left out,
//! and why, is listed in docs/macos.md.
//!
//! A row acts through the object checked where the call has an `*at` or an
//! fd form (`renameatx_np`, `clonefileat`, `setattrlistat`); a call that
//! takes a path only acts through `via` as the common rows do.

#[cfg(target_os = "macos")]
use std::ffi::{c_char, c_int, c_uint, c_ulong, c_void, CStr};

#[cfg(target_os = "macos")]
use libc::{mode_t, size_t, ssize_t, AT_FDCWD, COPYFILE_STATE_DST_FD, COPYFILE_STATE_SRC_FD};

#[cfg(target_os = "macos")]
use fsguard_policy::{Access, Rule};

#[cfg(target_os = "macos")]
use super::darwin_flags::*;
#[cfg(target_os = "macos")]
use super::{fd_arg, temp_access, META, READ, WRITE};
#[cfg(target_os = "macos")]
use crate::classify::{open_access, open_follow};
#[cfg(target_os = "macos")]
use crate::entry::Pre;
#[cfg(target_os = "macos")]
use crate::guard::{self, CArg};
#[cfg(target_os = "macos")]
use crate::hooks::at_follow;
#[cfg(target_os = "macos")]
use crate::resolve::Follow;

/// The "dirfd" of a call that names its object by id: the row's `pre`
/// refuses it before any check (listed so in docs/hooks.md).
#[cfg(target_os = "macos")]
const BY_ID_REFUSED: c_int = -1;

#[cfg(target_os = "macos")]
type RenameatxFn =
    unsafe extern "C" fn(c_int, *const c_char, c_int, *const c_char, c_uint) -> c_int;
#[cfg(target_os = "macos")]
type ClonefileatFn = unsafe extern "C" fn(c_int, *const c_char, c_int, *const c_char, u32) -> c_int;
#[cfg(target_os = "macos")]
type FclonefileatFn = unsafe extern "C" fn(c_int, c_int, *const c_char, u32) -> c_int;
#[cfg(target_os = "macos")]
type OpenDprotectedFn = unsafe extern "C" fn(*const c_char, c_int, c_int, c_int, ...) -> c_int;
#[cfg(target_os = "macos")]
type SetattrlistatFn =
    unsafe extern "C" fn(c_int, *const c_char, *mut c_void, *mut c_void, size_t, u32) -> c_int;

/// The dirfd of a copyfile path: for a NULL path, the fd the state carries
/// (`COPYFILE_STATE_SRC_FD`, `COPYFILE_STATE_DST_FD`), -1 (EBADF) if none.
#[cfg(target_os = "macos")]
fn copy_dirfd(path: CArg<'_>, state: *mut c_void, which: c_int) -> c_int {
    if !path.is_null() {
        return AT_FDCWD;
    }
    let mut fd: c_int = -1;
    if !state.is_null() {
        // SAFETY: a copyfile state the caller passed along with a NULL path
        // (copyfile's contract); the answer is an int written to `fd`.
        let r = unsafe { libc::copyfile_state_get(state, which as u32, (&raw mut fd).cast()) };
        if r != 0 {
            fd = -1;
        }
    }
    fd
}

// shim/darwin.c: mknodat and mkfifoat through their weak imports.
#[cfg(target_os = "macos")]
extern "C" {
    fn fsguard_weak_mknodat(
        dirfd: c_int,
        path: *const c_char,
        mode: mode_t,
        dev: libc::dev_t,
    ) -> c_int;
    fn fsguard_weak_mkfifoat(dirfd: c_int, path: *const c_char, mode: mode_t) -> c_int;
}

/// A row whose call is a weak import's: the check's refusal, or the call.
#[cfg(target_os = "macos")]
fn weak_call(checked: Result<(), c_int>, call: impl FnOnce() -> c_int) -> c_int {
    match checked {
        Ok(()) => call(),
        Err(e) => {
            guard::set_errno(e);
            -1
        }
    }
}

/// Refuses, with a trace line (rule `unresolved`), a call whose objects
/// the library cannot all see, when `applies`: a `COPYFILE_RECURSIVE` copy
/// (libcopyfile walks the tree with its own calls), a volume search.
/// `Pre::Check` lets the row's own checks run; `refused` is the call's
/// failure value; `audited` what an audit (which lets the call go) does
/// next: the row's checks, or for an object named by id, which has none to
/// run, the call itself.
#[cfg(target_os = "macos")]
fn unseen<R>(
    call: &'static str,
    access: Access,
    path: CArg<'_>,
    applies: impl Fn(&guard::Guard) -> bool,
    refused: R,
    audited: Pre<(), R>,
) -> Pre<(), R> {
    let Some(g) = guard::get() else {
        return Pre::Check(());
    };
    if !applies(g) {
        return Pre::Check(());
    }
    let shown = path.get().map_or(&b""[..], CStr::to_bytes);
    let saved = guard::errno();
    let r = std::panic::catch_unwind(|| g.refuse(call, access, shown, Rule::Unresolved))
        .unwrap_or_else(|_| Err(g.internal_error(call, access, shown, None)));
    match r {
        Ok(()) => {
            guard::set_errno(saved);
            audited
        }
        Err(e) => {
            guard::set_errno(e);
            Pre::Answer(refused)
        }
    }
}

hooks! {
    table DARWIN, listed everywhere;
    // Renames with flags (sys/stdio.h).
    #[cfg(target_os = "macos")]
    /// RENAME_SWAP moves both files; RENAME_EXCL changes nothing checked.
    "renamex_np" as "renamex_np"
    fn renamex_np(from: *const c_char, to: *const c_char, flags: c_uint) -> c_int,
        act |t| hooks!(@real "renameatx_np", RenameatxFn, -1, (t[0].dirfd(), t[0].path(), t[1].dirfd(), t[1].path(), flags)),
        fail -1,
        check [WRITE, Follow::Entry, AT_FDCWD, from, true;
               WRITE, Follow::Entry, AT_FDCWD, to, swaps(flags)];
    #[cfg(target_os = "macos")]
    "renameatx_np" as "renameatx_np"
    fn renameatx_np(fromfd: c_int, from: *const c_char, tofd: c_int, to: *const c_char, flags: c_uint) -> c_int,
        act |t| hooks!(@real "renameatx_np", RenameatxFn, -1, (t[0].dirfd(), t[0].path(), t[1].dirfd(), t[1].path(), flags)),
        fail -1,
        check [WRITE, Follow::Entry, fromfd, from, true;
               WRITE, Follow::Entry, tofd, to, swaps(flags)];

    // Copy-on-write clones (sys/clonefile.h): the source read, the
    // destination created (clonefile never replaces an existing name).
    #[cfg(target_os = "macos")]
    "clonefile" as "clonefile"
    fn clonefile(src: *const c_char, dst: *const c_char, flags: u32) -> c_int,
        act |t| hooks!(@real "clonefileat", ClonefileatFn, -1, (t[0].dirfd(), t[0].path(), t[1].dirfd(), t[1].path(), flags)),
        fail -1,
        check [READ, clone_follow(flags), AT_FDCWD, src, false;
               WRITE, Follow::Entry, AT_FDCWD, dst, false];
    #[cfg(target_os = "macos")]
    "clonefileat" as "clonefileat"
    fn clonefileat(src_dirfd: c_int, src: *const c_char, dst_dirfd: c_int, dst: *const c_char, flags: u32) -> c_int,
        act |t| hooks!(@real "clonefileat", ClonefileatFn, -1, (t[0].dirfd(), t[0].path(), t[1].dirfd(), t[1].path(), flags)),
        fail -1,
        check [READ, clone_follow(flags), src_dirfd, src, false;
               WRITE, Follow::Entry, dst_dirfd, dst, false];
    #[cfg(target_os = "macos")]
    "fclonefileat" as "fclonefileat"
    fn fclonefileat(srcfd: c_int, dst_dirfd: c_int, dst: *const c_char, flags: u32) -> c_int,
        act |t| hooks!(@real "fclonefileat", FclonefileatFn, -1, (srcfd, t[1].dirfd(), t[1].path(), flags)),
        fail -1,
        check [READ, Follow::Fd, fd_arg(srcfd), CArg::NULL, false;
               WRITE, Follow::Entry, dst_dirfd, dst, false];

    // unistd.h. exchangedata has no *at or fd form: checked, then called
    // with the caller's paths.
    #[cfg(target_os = "macos")]
    /// Swaps two files' contents: both written, both moved.
    "exchangedata" as "exchangedata"
    fn exchangedata(path1: *const c_char, path2: *const c_char, options: c_uint) -> c_int,
        fail -1,
        check [WRITE, fsopt_follow(options), AT_FDCWD, path1, true;
               WRITE, fsopt_follow(options), AT_FDCWD, path2, true];
    #[cfg(target_os = "macos")]
    /// Turns a union mount's whiteout back into a name.
    "undelete" as "undelete"
    fn undelete(path: *const c_char) -> c_int,
        via path,
        fail -1,
        check [WRITE, Follow::Entry, AT_FDCWD, path, false];
    #[cfg(target_os = "macos")]
    /// Answers names from the whole volume, which no path check confines:
    /// refused while metadata is confined (`hide_outside`).
    "searchfs" as "searchfs"
    fn searchfs(path: *const c_char, searchblock: *mut c_void, nummatches: *mut c_ulong, scriptcode: c_uint, options: c_uint, state: *mut c_void) -> c_int,
        pre |_v| unseen("searchfs", Access::Read, path, |g| g.policy.settings().hide_outside, -1, Pre::Check(())),
        fail -1,
        check [META, Follow::Yes, AT_FDCWD, path, false];
    #[cfg(target_os = "macos")]
    /// A file system control request, which may change the object.
    "fsctl" as "fsctl"
    fn fsctl(path: *const c_char, request: c_ulong, data: *mut c_void, options: c_uint) -> c_int,
        via path,
        fail -1,
        check [WRITE, fsopt_follow(options), AT_FDCWD, path, false];
    #[cfg(target_os = "macos")]
    "ffsctl" as "ffsctl"
    fn ffsctl(fd: c_int, request: c_ulong, data: *mut c_void, options: c_uint) -> c_int,
        fail -1,
        check [WRITE, Follow::Fd, fd_arg(fd), CArg::NULL, false];

    // Attribute lists (sys/attr.h, unistd.h).
    #[cfg(target_os = "macos")]
    "getattrlist" as "getattrlist"
    fn getattrlist(path: *const c_char, attr_list: *mut c_void, attr_buf: *mut c_void, attr_buf_size: size_t, options: u32) -> c_int,
        fail -1,
        check [META, fsopt_follow(options), AT_FDCWD, path, false];
    #[cfg(target_os = "macos")]
    "getattrlistat" as "getattrlistat"
    fn getattrlistat(fd: c_int, path: *const c_char, attr_list: *mut c_void, attr_buf: *mut c_void, attr_buf_size: size_t, options: c_ulong) -> c_int,
        fail -1,
        check [META, fsopt_follow(options), fd, path, false];
    #[cfg(target_os = "macos")]
    "setattrlist" as "setattrlist"
    fn setattrlist(path: *const c_char, attr_list: *mut c_void, attr_buf: *mut c_void, attr_buf_size: size_t, options: u32) -> c_int,
        act |t| hooks!(@real "setattrlistat", SetattrlistatFn, -1, (t[0].dirfd(), t[0].path(), attr_list, attr_buf, attr_buf_size, options)),
        fail -1,
        check [WRITE, fsopt_follow(options), AT_FDCWD, path, false];
    #[cfg(target_os = "macos")]
    "setattrlistat" as "setattrlistat"
    fn setattrlistat(dir_fd: c_int, path: *const c_char, attr_list: *mut c_void, attr_buf: *mut c_void, attr_buf_size: size_t, options: u32) -> c_int,
        act |t| hooks!(@real "setattrlistat", SetattrlistatFn, -1, (t[0].dirfd(), t[0].path(), attr_list, attr_buf, attr_buf_size, options)),
        fail -1,
        check [WRITE, fsopt_follow(options), dir_fd, path, false];
    #[cfg(target_os = "macos")]
    "fsetattrlist" as "fsetattrlist"
    fn fsetattrlist(fd: c_int, attr_list: *mut c_void, attr_buf: *mut c_void, attr_buf_size: size_t, options: u32) -> c_int,
        fail -1,
        check [WRITE, Follow::Fd, fd_arg(fd), CArg::NULL, false];

    // Extended attributes (sys/xattr.h): `position` and `options`, no l*
    // forms (XATTR_NOFOLLOW instead).
    #[cfg(target_os = "macos")]
    "getxattr" as "getxattr"
    fn getxattr(path: *const c_char, name: *const c_char, value: *mut c_void, size: size_t, position: u32, options: c_int) -> ssize_t,
        fail -1,
        check [META, xattr_follow(options), AT_FDCWD, path, false];
    #[cfg(target_os = "macos")]
    "listxattr" as "listxattr"
    fn listxattr(path: *const c_char, namebuf: *mut c_char, size: size_t, options: c_int) -> ssize_t,
        fail -1,
        check [META, xattr_follow(options), AT_FDCWD, path, false];
    #[cfg(target_os = "macos")]
    "setxattr" as "setxattr"
    fn setxattr(path: *const c_char, name: *const c_char, value: *const c_void, size: size_t, position: u32, options: c_int) -> c_int,
        via path,
        fail -1,
        check [WRITE, xattr_follow(options), AT_FDCWD, path, false];
    #[cfg(target_os = "macos")]
    "removexattr" as "removexattr"
    fn removexattr(path: *const c_char, name: *const c_char, options: c_int) -> c_int,
        via path,
        fail -1,
        check [WRITE, xattr_follow(options), AT_FDCWD, path, false];
    #[cfg(target_os = "macos")]
    "fsetxattr" as "fsetxattr"
    fn fsetxattr(fd: c_int, name: *const c_char, value: *const c_void, size: size_t, position: u32, options: c_int) -> c_int,
        fail -1,
        check [WRITE, Follow::Fd, fd_arg(fd), CArg::NULL, false];
    #[cfg(target_os = "macos")]
    "fremovexattr" as "fremovexattr"
    fn fremovexattr(fd: c_int, name: *const c_char, options: c_int) -> c_int,
        fail -1,
        check [WRITE, Follow::Fd, fd_arg(fd), CArg::NULL, false];

    // File flags (sys/stat.h, unistd.h).
    #[cfg(target_os = "macos")]
    "chflags" as "chflags"
    fn chflags(path: *const c_char, flags: c_uint) -> c_int,
        via path,
        fail -1,
        check [WRITE, Follow::Yes, AT_FDCWD, path, false];
    #[cfg(target_os = "macos")]
    "lchflags" as "lchflags"
    fn lchflags(path: *const c_char, flags: c_uint) -> c_int,
        via path,
        fail -1,
        check [WRITE, Follow::NoFollow, AT_FDCWD, path, false];
    #[cfg(target_os = "macos")]
    "fchflags" as "fchflags"
    fn fchflags(fd: c_int, flags: c_uint) -> c_int,
        fail -1,
        check [WRITE, Follow::Fd, fd_arg(fd), CArg::NULL, false];

    // libcopyfile (copyfile.h).
    #[cfg(target_os = "macos")]
    /// `from` read (`COPYFILE_MOVE`: removed too), `to` written; a NULL
    /// path is the state's fd. `COPYFILE_RECURSIVE` is refused: the tree
    /// below the two paths is walked by libcopyfile's own calls, which the
    /// library does not see (docs/macos.md).
    "copyfile" as "copyfile"
    fn copyfile(from: *const c_char, to: *const c_char, state: *mut c_void, flags: u32) -> c_int,
        pre |_v| unseen("copyfile", Access::Write, to, |_| copies_tree(flags), -1, Pre::Check(())),
        fail -1,
        check [copy_src_access(flags), copy_src_follow(from, flags), copy_dirfd(from, state, COPYFILE_STATE_SRC_FD), from, flags & COPYFILE_MOVE != 0;
               WRITE, copy_dst_follow(to, flags), copy_dirfd(to, state, COPYFILE_STATE_DST_FD), to, false];
    #[cfg(target_os = "macos")]
    "fcopyfile" as "fcopyfile"
    fn fcopyfile(from: c_int, to: c_int, state: *mut c_void, flags: u32) -> c_int,
        fail -1,
        check [fcopy_access(flags), Follow::Fd, fd_arg(to), CArg::NULL, false];

    // The *x_np forms with an ACL (`filesec_t`; sys/stat.h, fcntl.h).
    #[cfg(target_os = "macos")]
    "openx_np" as "openx_np"
    fn openx_np(path: *const c_char, flags: c_int, fsec: *mut c_void) -> c_int,
        via path,
        fail -1,
        check [open_access(flags), open_follow(flags), AT_FDCWD, path, false];
    #[cfg(target_os = "macos")]
    /// An open with a data-protection class (sys/fcntl.h); the variadic
    /// `open_dprotected_np` in shim/darwin.c calls this with the mode.
    "open_dprotected_np" as "open_dprotected_np"
    fn fsguard_open_dprotected_np(path: *const c_char, flags: c_int, class: c_int, dpflags: c_int, mode: mode_t) -> c_int,
        real OpenDprotectedFn = (path, flags, class, dpflags, c_uint::from(mode)),
        act |_t| crate::hooks_more::acts::open_dprotected_np(path, flags, class, dpflags, c_uint::from(mode)),
        fail -1,
        check [open_access(flags), open_follow(flags), AT_FDCWD, path, false];
    #[cfg(target_os = "macos")]
    "mkdirx_np" as "mkdirx_np"
    fn mkdirx_np(path: *const c_char, fsec: *mut c_void) -> c_int,
        via path,
        fail -1,
        check [WRITE, Follow::Entry, AT_FDCWD, path, false];
    #[cfg(target_os = "macos")]
    "mkfifox_np" as "mkfifox_np"
    fn mkfifox_np(path: *const c_char, fsec: *mut c_void) -> c_int,
        via path,
        fail -1,
        check [WRITE, Follow::Entry, AT_FDCWD, path, false];
    #[cfg(target_os = "macos")]
    "chmodx_np" as "chmodx_np"
    fn chmodx_np(path: *const c_char, fsec: *mut c_void) -> c_int,
        via path,
        fail -1,
        check [WRITE, Follow::Yes, AT_FDCWD, path, false];
    #[cfg(target_os = "macos")]
    "fchmodx_np" as "fchmodx_np"
    fn fchmodx_np(fd: c_int, fsec: *mut c_void) -> c_int,
        fail -1,
        check [WRITE, Follow::Fd, fd_arg(fd), CArg::NULL, false];
    #[cfg(target_os = "macos")]
    "statx_np" as "statx_np"
    fn statx_np(path: *const c_char, sb: *mut c_void, fsec: *mut c_void) -> c_int,
        fail -1,
        check [META, Follow::Yes, AT_FDCWD, path, false];
    #[cfg(target_os = "macos")]
    "lstatx_np" as "lstatx_np"
    fn lstatx_np(path: *const c_char, sb: *mut c_void, fsec: *mut c_void) -> c_int,
        fail -1,
        check [META, Follow::NoFollow, AT_FDCWD, path, false];

    // Temp files relative to a dirfd (stdlib.h, macOS 10.13): created by
    // libsystem_c's own calls, as mkstemp's.
    #[cfg(target_os = "macos")]
    "mkstempsat_np" as "mkstempsat_np"
    fn mkstempsat_np(dfd: c_int, template: *const c_char, slen: c_int) -> c_int,
        fail -1,
        check [temp_access(template, slen), Follow::Entry, dfd, template, false];
    #[cfg(target_os = "macos")]
    "mkostempsat_np" as "mkostempsat_np"
    fn mkostempsat_np(dfd: c_int, template: *const c_char, slen: c_int, oflags: c_int) -> c_int,
        fail -1,
        check [temp_access(template, slen), Follow::Entry, dfd, template, false];
    #[cfg(target_os = "macos")]
    "mkdtempat_np" as "mkdtempat_np"
    fn mkdtempat_np(dfd: c_int, template: *const c_char) -> *mut c_char,
        fail std::ptr::null_mut(),
        check [temp_access(template, 0), Follow::Entry, dfd, template, false];

    // Nodes at a dirfd (sys/stat.h), exported from macOS 13 on: their pairs
    // and calls are shim/darwin.c's, which imports them weakly (ENOSYS where
    // missing) so that the library loads on older systems. Checked, then
    // called with the caller's arguments.
    #[cfg(target_os = "macos")]
    "mknodat" as "mknodat"
    fn fsguard_mknodat(dirfd: c_int, path: *const c_char, mode: mode_t, dev: libc::dev_t) -> c_int,
        answer weak_call(mknodat_check(dirfd, path), || {
            // SAFETY: the caller's arguments, to the weak import's caller.
            unsafe { fsguard_weak_mknodat(dirfd, path.as_ptr(), mode, dev) }
        }),
        check fn mknodat_check(dirfd: c_int, path: CArg<'_>) [WRITE, Follow::Entry, dirfd, path, false];
    #[cfg(target_os = "macos")]
    "mkfifoat" as "mkfifoat"
    fn fsguard_mkfifoat(dirfd: c_int, path: *const c_char, mode: mode_t) -> c_int,
        answer weak_call(mkfifoat_check(dirfd, path), || {
            // SAFETY: as above.
            unsafe { fsguard_weak_mkfifoat(dirfd, path.as_ptr(), mode) }
        }),
        check fn mkfifoat_check(dirfd: c_int, path: CArg<'_>) [WRITE, Follow::Entry, dirfd, path, false];

    // Objects named by id, not by a path (sys/fsgetpath.h; openbyid_np is
    // xnu's private sys/fsgetpath_private.h, exported all the same).
    #[cfg(target_os = "macos")]
    /// Opens any object of a volume by its id: no path the policy could
    /// judge before the open, so refused (rule `unresolved`).
    "openbyid_np" as "openbyid_np"
    fn openbyid_np(fsid: *mut c_void, objid: *mut c_void, flags: c_int) -> c_int,
        pre |_v| unseen("openbyid_np", open_access(flags).unwrap_or(Access::Read), CArg::NULL, |_| true, -1, Pre::Pass),
        fail -1,
        check [open_access(flags), Follow::Fd, BY_ID_REFUSED, CArg::NULL, false];
    #[cfg(target_os = "macos")]
    /// The path of an object named by id: refused while metadata is
    /// confined (`hide_outside`), as it may name anything on the volume.
    "fsgetpath" as "fsgetpath"
    fn fsgetpath(buf: *mut c_char, bufsize: size_t, fsid: *mut c_void, objid: u64) -> ssize_t,
        pre |_v| unseen("fsgetpath", Access::Read, CArg::NULL, |g| g.policy.settings().hide_outside, -1, Pre::Pass),
        fail -1,
        check [META, Follow::Fd, BY_ID_REFUSED, CArg::NULL, false];

    // dirent.h: scandir with blocks, listing its directory with
    // libsystem_c's own opendir, as scandir does.
    #[cfg(target_os = "macos")]
    "scandir_b" as "scandir"
    fn scandir_b(dir: *const c_char, namelist: *mut c_void, select: *mut c_void, compar: *mut c_void) -> c_int,
        fail -1,
        check [READ, Follow::Yes, AT_FDCWD, dir, false];

    // ACLs by path (sys/acl.h). libsystem_c sets one through its own
    // chmodx_np and reads one through its own statx_np: calls inside one
    // library, which no pair rewires, so each needs its row.
    #[cfg(target_os = "macos")]
    "acl_get_file" as "acl_get_file"
    fn acl_get_file(path: *const c_char, acl_type: c_int) -> *mut c_void,
        fail std::ptr::null_mut(),
        check [META, Follow::Yes, AT_FDCWD, path, false];
    #[cfg(target_os = "macos")]
    "acl_get_link_np" as "acl_get_link_np"
    fn acl_get_link_np(path: *const c_char, acl_type: c_int) -> *mut c_void,
        fail std::ptr::null_mut(),
        check [META, Follow::NoFollow, AT_FDCWD, path, false];
    #[cfg(target_os = "macos")]
    "acl_set_file" as "acl_set_file"
    fn acl_set_file(path: *const c_char, acl_type: c_int, acl: *mut c_void) -> c_int,
        via path,
        fail -1,
        check [WRITE, Follow::Yes, AT_FDCWD, path, false];
    #[cfg(target_os = "macos")]
    /// Refuses a symlink (ENOTSUP), so the object named is the one set.
    "acl_set_link_np" as "acl_set_link_np"
    fn acl_set_link_np(path: *const c_char, acl_type: c_int, acl: *mut c_void) -> c_int,
        via path,
        fail -1,
        check [WRITE, Follow::NoFollow, AT_FDCWD, path, false];

    // The explicit 64-bit-inode forms libSystem still exports (sys/stat.h,
    // sys/mount.h); the buffer is passed through unread.
    #[cfg(target_os = "macos")]
    "stat64" as "stat"
    fn stat64(path: *const c_char, buf: *mut c_void) -> c_int,
        fail -1,
        check [META, Follow::Yes, AT_FDCWD, path, false];
    #[cfg(target_os = "macos")]
    "lstat64" as "lstat"
    fn lstat64(path: *const c_char, buf: *mut c_void) -> c_int,
        fail -1,
        check [META, Follow::NoFollow, AT_FDCWD, path, false];
    #[cfg(target_os = "macos")]
    "fstatat64" as "fstatat"
    fn fstatat64(dirfd: c_int, path: *const c_char, buf: *mut c_void, flags: c_int) -> c_int,
        fail -1,
        check [META, at_follow(flags, path), dirfd, path, false];
    #[cfg(target_os = "macos")]
    "statfs64" as "statfs"
    fn statfs64(path: *const c_char, buf: *mut c_void) -> c_int,
        fail -1,
        check [META, Follow::Yes, AT_FDCWD, path, false];
}

// Each symbol has one row among the tables macOS builds: a macOS-only row
// whose symbol another table also builds for macOS would make two
// `__interpose` pairs for one original. Checked when the library compiles.
#[cfg(target_os = "macos")]
const _: () = {
    use super::{MORE, WRAPPED};
    use crate::exec::{EXEC_DARWIN, EXEC_TABLE, SPAWN_DARWIN};
    use crate::hooks::TABLE;
    assert!(
        distinct(
            DARWIN,
            &[TABLE, MORE, WRAPPED, EXEC_TABLE, EXEC_DARWIN, SPAWN_DARWIN]
        ),
        "a row of DARWIN names a symbol another table builds for macOS too"
    );
    assert!(
        distinct(
            EXEC_DARWIN,
            &[TABLE, MORE, WRAPPED, EXEC_TABLE, SPAWN_DARWIN]
        ),
        "a row of EXEC_DARWIN names a symbol another table builds for macOS too"
    );
    assert!(
        distinct(SPAWN_DARWIN, &[TABLE, MORE, WRAPPED, EXEC_TABLE]),
        "a row of SPAWN_DARWIN names a symbol another table builds for macOS too"
    );
};

/// No row of `rows` has the symbol of a row of `others`.
#[cfg(target_os = "macos")]
const fn distinct(rows: &[crate::hooks::HookInfo], others: &[&[crate::hooks::HookInfo]]) -> bool {
    let mut i = 0;
    while i < rows.len() {
        let mut t = 0;
        while t < others.len() {
            let mut j = 0;
            while j < others[t].len() {
                if crate::entry::same_symbol(rows[i].symbol, others[t][j].symbol) {
                    return false;
                }
                j += 1;
            }
            t += 1;
        }
        i += 1;
    }
    true
}
