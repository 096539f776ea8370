//! Directory walkers that open paths inside glibc: fts_open and glob, each
//! start path (fts) or directory read (glob) checked as a read.

use std::ffi::{c_char, c_int, c_void};

use libc::{size_t, AT_FDCWD};

use super::{check1, fts_follow, lstat64, stat64, READ};
use crate::guard::{self, set_errno, CArg};
use crate::resolve::Follow;

const GLOB_ALTDIRFUNC: c_int = 1 << 9;

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
