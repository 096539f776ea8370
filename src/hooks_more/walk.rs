//! Directory walkers that open paths inside glibc: fts_open and glob, each
//! start path (fts) or directory read (glob) checked as a read.

use std::ffi::{c_char, c_int, c_void};

use libc::size_t;

use super::{lstat64, stat64};
use crate::entry::Pre;
use crate::guard::{self, set_errno, CArg};

pub(super) const GLOB_ALTDIRFUNC: c_int = 1 << 9;
/// glob's "read error" result.
pub(super) const GLOB_ABORTED: c_int = 2;

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

/// fts_open's `post` step: each start path checked (`check`, the row's)
/// as a read. glibc's fts reads directories through internal calls no hook
/// sees, so a refused start path is never walked: like an unreadable one,
/// its entry comes back from `fts_read` as `FTS_DNR` (a directory) or
/// `FTS_ERR` (anything else), with `fts_errno` set; a hidden one
/// (`hide_outside`) as `FTS_NS`/`ENOENT`, like a missing one. The stream
/// itself is returned, as glibc does: a caller that does not check for
/// NULL must not crash.
///
/// # Safety
/// `fts` NULL or a stream the real fts_open just returned.
pub(super) unsafe fn fts_checked(
    fts: *mut c_void,
    options: c_int,
    check: fn(CArg<'_>, c_int) -> Result<(), c_int>,
) -> *mut c_void {
    if fts.is_null() {
        return fts;
    }
    let saved = guard::errno();
    // SAFETY: a stream fts_open just made: its current node is a dummy whose
    // `link` chains the start entries, each with its C string `accpath`.
    unsafe {
        let cur = (*fts.cast::<Fts>()).cur;
        if !cur.is_null() && (*cur).link.is_null() {
            no_start_paths(cur);
        }
        let mut p = if cur.is_null() { cur } else { (*cur).link };
        while !p.is_null() {
            let e = &mut *p;
            if e.info != FTS_NS {
                if let Err(err) = check(CArg::new(e.accpath), options) {
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

/// `FTS_ROOTLEVEL` and `FTS_ROOTPARENTLEVEL`: the levels of a start entry
/// and of the node above them all.
const FTS_ROOTLEVEL: i16 = 0;
const FTS_ROOTPARENTLEVEL: i16 = -1;

/// A stream of no start path (an empty argv) made safe to read and close.
/// glibc's fts_open allocates the node above the start entries only when
/// there is one, so its dummy current node is left with an uninitialized
/// parent and level, which `fts_read` follows and frees (a crash, or a
/// double free that corrupts the heap, by what the memory held before).
/// The dummy gets that node, zeroed, at `FTS_ROOTPARENTLEVEL`: `fts_read`
/// then frees both and returns NULL with errno 0 (an empty walk, as BSD's
/// fts gives), and `fts_close` frees both.
///
/// # Safety
/// `cur`: the dummy current node of a stream fts_open just made, with no
/// start entry.
unsafe fn no_start_paths(cur: *mut FtsEnt) {
    // SAFETY: calloc of a node's size; glibc frees it with free().
    let top = unsafe { libc::calloc(1, std::mem::size_of::<FtsEnt>()) }.cast::<FtsEnt>();
    if top.is_null() {
        return;
    }
    // SAFETY: `top` is ours, zeroed; `cur` the caller's dummy node.
    unsafe {
        (*top).level = FTS_ROOTPARENTLEVEL;
        (*cur).parent = top;
        (*cur).level = FTS_ROOTLEVEL;
    }
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

/// glob's directory opener: each directory the pattern reads is checked
/// by the row's check (`G64`: glob64's row).
unsafe extern "C" fn glob_opendir<const G64: bool>(path: *const c_char) -> *mut c_void {
    // SAFETY: glob passes a directory name, a C string.
    let arg = unsafe { CArg::new(path) };
    let checked = if G64 {
        glob64_dir(arg)
    } else {
        super::glob_dir_checked(arg)
    };
    if let Err(e) = checked {
        set_errno(e);
        return std::ptr::null_mut();
    }
    hooks!(@real "opendir", unsafe extern "C" fn(*const c_char) -> *mut c_void, std::ptr::null_mut(), (path))
}

#[cfg(target_pointer_width = "64")]
fn glob64_dir(path: CArg<'_>) -> Result<(), c_int> {
    super::glob64_dir_checked(path)
}

#[cfg(not(target_pointer_width = "64"))]
fn glob64_dir(path: CArg<'_>) -> Result<(), c_int> {
    super::glob_dir_checked(path)
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

/// The caller's glob_t callbacks, while glob runs with ours.
pub(super) type Saved = [*mut c_void; 5];

/// glob's `pre` step: unless the caller brought its own directory functions
/// (GLOB_ALTDIRFUNC) or no rule confines reads, glob is handed ours (the
/// real call adds GLOB_ALTDIRFUNC), whose opendir checks each directory; a
/// refused one fails like an unreadable one (errfunc, GLOB_ERR).
///
/// # Safety
/// `pglob` NULL or the caller's `glob_t`, as glob(3) requires.
pub(super) unsafe fn glob_pre<const G64: bool>(
    flags: c_int,
    pglob: *mut GlobT,
) -> Pre<Saved, c_int> {
    let active =
        guard::get().is_some_and(|g| g.policy.confines_reads() || g.policy.settings().hide_outside);
    if !active || flags & GLOB_ALTDIRFUNC != 0 || pglob.is_null() {
        return Pre::Pass;
    }
    // SAFETY: pglob is the caller's glob_t; its callback fields are ours for
    // the duration of the call and restored by `glob_post`.
    let g = unsafe { &mut *pglob };
    let saved = [g.closedir, g.readdir, g.opendir, g.lstat, g.stat];
    g.closedir = glob_closedir as *mut c_void;
    g.readdir = glob_readdir as *mut c_void;
    g.opendir = glob_opendir::<G64> as *mut c_void;
    g.lstat = glob_lstat as *mut c_void;
    g.stat = glob_stat as *mut c_void;
    Pre::Check(saved)
}

/// glob's `post` step: the caller's glob_t as it gave it, but for what glob
/// filled in.
///
/// # Safety
/// As [`glob_pre`], which returned `saved`.
pub(super) unsafe fn glob_post(r: c_int, pglob: *mut GlobT, saved: Saved) -> c_int {
    // SAFETY: the caller's glob_t, as in `glob_pre`.
    let g = unsafe { &mut *pglob };
    g.flags &= !GLOB_ALTDIRFUNC;
    [g.closedir, g.readdir, g.opendir, g.lstat, g.stat] = saved;
    r
}
