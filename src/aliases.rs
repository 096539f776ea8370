//! glibc's other names for the hooked calls, and the lookups that could
//! reach libc's definitions around the hooks.
//!
//! glibc exports internal aliases of some path functions (`__open`,
//! `__open_nocancel`, `_IO_fopen`, ...), public or `GLIBC_PRIVATE`; each one
//! that takes a path is hooked here like the call it stands for (the
//! variadic ones enter through shim/shim.c). `tests/side_doors.rs` sweeps
//! libc's exports so that a new alias fails a test.
//!
//! `dlsym` and `dlvsym` live in shim/shim.c (they must keep their caller's
//! return address); a lookup of a hooked name returns the hook. `dlmopen`
//! into a new namespace is refused here: that namespace would get a fresh
//! libc with no hooks.

use std::ffi::{c_char, c_int, c_long, c_uint, c_void};

use fsguard_policy::{Access, Rule};
use libc::{mode_t, AT_FDCWD, FILE};

use crate::entry::Pre;
use crate::exec::exec_check;
use crate::guard::{self, set_errno, CArg};
use crate::hooks::{
    chk, fopen_flags, open_access, open_follow, open_or_handle, row, CheckInfo, HookInfo,
};
use crate::resolve::Follow;

const READ: Option<Access> = Some(Access::Read);
const WRITE: Option<Access> = Some(Access::Write);
const EXEC: Option<Access> = Some(Access::Exec);
/// A metadata read: checked only when `hide_outside` is set.
const META: Option<Access> = None;

type OpenFn = unsafe extern "C" fn(*const c_char, c_int, ...) -> c_int;

hooks! {
    table ALIASES;
    /// glibc's public alias of open; the variadic `__open` in shim/shim.c
    /// calls this with the mode.
    "__open" as "open"
    fn fsguard_alias_open(path: *const c_char, flags: c_int, mode: mode_t) -> c_int,
        real OpenFn = (path, flags, mode as c_uint),
        fast crate::guard::open_fast(AT_FDCWD, path, flags, mode),
        act |t| hooks!(@real "__open", OpenFn, -1, (t[0].abs(), t[0].oflags(flags), mode as c_uint)),
        fail -1,
        check [open_or_handle(flags), open_follow(flags), AT_FDCWD, path, false];
    "__open64" as "open"
    fn fsguard_alias_open64(path: *const c_char, flags: c_int, mode: mode_t) -> c_int,
        real OpenFn = (path, flags, mode as c_uint),
        fast crate::guard::open_fast(AT_FDCWD, path, flags, mode),
        act |t| hooks!(@real "__open64", OpenFn, -1, (t[0].abs(), t[0].oflags(flags), mode as c_uint)),
        fail -1,
        check [open_or_handle(flags), open_follow(flags), AT_FDCWD, path, false];
    /// `GLIBC_PRIVATE`: glibc's internal open, reachable through dlsym.
    "__open_nocancel" as "open"
    fn fsguard_alias_open_nocancel(path: *const c_char, flags: c_int, mode: mode_t) -> c_int,
        real OpenFn = (path, flags, mode as c_uint),
        fast crate::guard::open_fast(AT_FDCWD, path, flags, mode),
        act |t| hooks!(@real "__open_nocancel", OpenFn, -1, (t[0].abs(), t[0].oflags(flags), mode as c_uint)),
        fail -1,
        check [open_or_handle(flags), open_follow(flags), AT_FDCWD, path, false];
    "__open64_nocancel" as "open"
    fn fsguard_alias_open64_nocancel(path: *const c_char, flags: c_int, mode: mode_t) -> c_int,
        real OpenFn = (path, flags, mode as c_uint),
        fast crate::guard::open_fast(AT_FDCWD, path, flags, mode),
        act |t| hooks!(@real "__open64_nocancel", OpenFn, -1, (t[0].abs(), t[0].oflags(flags), mode as c_uint)),
        fail -1,
        check [open_or_handle(flags), open_follow(flags), AT_FDCWD, path, false];
    /// The old name of fopen.
    "_IO_fopen" as "fopen"
    fn _IO_fopen(path: *const c_char, mode: *const c_char) -> *mut FILE,
        via path,
        fail std::ptr::null_mut(),
        check [open_access(fopen_flags(mode)), open_follow(fopen_flags(mode)), AT_FDCWD, path, false];
    /// fopen's worker: opens `path` into the caller's FILE.
    "_IO_file_fopen" as "fopen"
    fn _IO_file_fopen(fp: *mut FILE, path: *const c_char, mode: *const c_char, is32: c_int) -> *mut FILE,
        via path,
        fail std::ptr::null_mut(),
        check [open_access(fopen_flags(mode)), open_follow(fopen_flags(mode)), AT_FDCWD, path, false];
    /// An open(2) into the caller's FILE, with open's flags.
    "_IO_file_open" as "open"
    fn _IO_file_open(fp: *mut FILE, path: *const c_char, oflag: c_int, prot: c_int, read_write: c_int, is32: c_int) -> *mut FILE,
        via path,
        fail std::ptr::null_mut(),
        check [open_access(oflag), open_follow(oflag), AT_FDCWD, path, false];
    /// `GLIBC_PRIVATE`: NSS's fopen (read-only).
    "__nss_files_fopen" as "fopen"
    fn __nss_files_fopen(path: *const c_char) -> *mut FILE,
        fail std::ptr::null_mut(),
        check [READ, Follow::Yes, AT_FDCWD, path, false];
    /// A mount table opened with fopen's mode (`w` and `a` write it).
    "setmntent" as "setmntent"
    fn setmntent(path: *const c_char, mode: *const c_char) -> *mut FILE,
        via path,
        fail std::ptr::null_mut(),
        check [open_access(fopen_flags(mode)), open_follow(fopen_flags(mode)), AT_FDCWD, path, false];
    "__setmntent" as "setmntent"
    fn __setmntent(path: *const c_char, mode: *const c_char) -> *mut FILE,
        via path,
        fail std::ptr::null_mut(),
        check [open_access(fopen_flags(mode)), open_follow(fopen_flags(mode)), AT_FDCWD, path, false];
    "__statfs" as "statfs"
    fn __statfs(path: *const c_char, buf: *mut libc::statfs) -> c_int,
        fail -1,
        check [META, Follow::Yes, AT_FDCWD, path, false];
    /// `GLIBC_PRIVATE`: a stat of `path`.
    "__file_change_detection_for_path" as "stat"
    fn __file_change_detection_for_path(result: *mut c_void, path: *const c_char) -> bool,
        fail false,
        check [META, Follow::Yes, AT_FDCWD, path, false];
    /// Profiling's exit (`gcc -pg`): writes `gmon.out`, or
    /// `$GMON_OUT_PREFIX.<pid>`, through glibc's internal open; nothing is
    /// written if either name is refused (see `gmon_pre`). Checked as the
    /// `O_CREAT|O_TRUNC|O_WRONLY|O_NOFOLLOW` open glibc makes.
    "_mcleanup" as "_mcleanup"
    fn _mcleanup() -> (),
        pre |_checked| gmon_pre(gmon_check),
        fail (),
        check fn gmon_check(each_gmon_out_name: CArg<'_>)
            [WRITE, Follow::NoFollow, AT_FDCWD, each_gmon_out_name, false];
    /// popen's old name.
    "_IO_popen" as "popen"
    fn _IO_popen(cmd: *const c_char, mode: *const c_char) -> *mut FILE,
        answer {
            // SAFETY: popen's contract.
            unsafe { crate::exec::run_popen(io_popen_check, cmd.as_ptr(), mode.as_ptr()) }
        },
        check fn io_popen_check() by exec_check [EXEC, Follow::Yes, AT_FDCWD, CArg::of(c"/bin/sh"), false];
    /// popen's worker, which fills a FILE the caller allocated with libio's
    /// private layout. Running the shell needs the child's environment,
    /// which only an `environ` swap could give glibc's worker: the shell is
    /// checked (traced as ever), then the call fails with `ENOSYS`.
    "_IO_proc_open" as "popen"
    fn _IO_proc_open(fp: *mut FILE, cmd: *const c_char, mode: *const c_char) -> *mut FILE,
        answer {
            set_errno(io_proc_open_check().err().unwrap_or(libc::ENOSYS));
            std::ptr::null_mut()
        },
        check fn io_proc_open_check() by exec_check [EXEC, Follow::Yes, AT_FDCWD, CArg::of(c"/bin/sh"), false];
    /// `GLIBC_PRIVATE`: system's internal name.
    "__libc_system" as "system"
    fn __libc_system(cmd: *const c_char) -> c_int,
        answer {
            // SAFETY: system's contract: cmd NULL or a C string.
            unsafe { crate::exec::run_system(libc_system_check, cmd.as_ptr()) }
        },
        check fn libc_system_check() by exec_check [EXEC, Follow::Yes, AT_FDCWD, CArg::of(c"/bin/sh"), false];
}

/// `GMON_OUT_PREFIX.<pid>` (or nothing) in `buf`, NUL-terminated.
fn gmon_prefixed(buf: &mut [u8; 4096]) -> bool {
    // SAFETY: getenv's result is a C string or NULL; read at once.
    let env = unsafe { libc::getenv(c"GMON_OUT_PREFIX".as_ptr()) };
    if env.is_null() {
        return false;
    }
    // SAFETY: as above.
    let prefix = unsafe { std::ffi::CStr::from_ptr(env) }.to_bytes();
    // SAFETY: getpid cannot fail.
    let pid = unsafe { libc::getpid() } as u32;
    let mut digits = [0u8; 10];
    let i = crate::resolve::decimal(pid, &mut digits);
    let digits = &digits[i..];
    let len = prefix.len() + 1 + digits.len();
    if len >= buf.len() {
        return false;
    }
    buf[..prefix.len()].copy_from_slice(prefix);
    buf[prefix.len()] = b'.';
    buf[prefix.len() + 1..len].copy_from_slice(digits);
    buf[len] = 0;
    true
}

/// _mcleanup's `pre` step: both names it may create (`$GMON_OUT_PREFIX.pid`
/// if set, then `gmon.out`) are checked by the row's `check`; if either is
/// refused, profiling is only stopped (as _mcleanup does first) and the
/// call answered.
fn gmon_pre(check: fn(CArg<'_>) -> Result<(), c_int>) -> Pre<(), ()> {
    let mut buf = [0u8; 4096];
    let mut ok = true;
    if gmon_prefixed(&mut buf) {
        // NUL-terminated by gmon_prefixed.
        let path = std::ffi::CStr::from_bytes_until_nul(&buf).map_or(CArg::NULL, CArg::of);
        ok = check(path).is_ok();
    }
    if ok {
        ok = check(CArg::of(c"gmon.out")).is_ok();
    }
    if ok {
        return Pre::Check(());
    }
    if let Some(f) = crate::real::real!("moncontrol", unsafe extern "C" fn(c_int)) {
        // SAFETY: turns profiling off, as _mcleanup does first.
        unsafe { f(0) };
    }
    Pre::Answer(())
}

/// dlmopen: `0` to go ahead, else the errno of a refusal (traced). The base
/// namespace is dlopen; any other would load a libc of its own, unhooked.
///
/// # Safety
/// `name` must be NULL or a C string (dlmopen's own contract).
#[no_mangle]
pub unsafe extern "C" fn fsguard_dlmopen_check(lmid: c_long, name: *const c_char) -> c_int {
    if lmid == libc::LM_ID_BASE as c_long {
        // SAFETY: the caller's arguments.
        return unsafe { crate::exec::fsguard_dlopen_check(name) };
    }
    let Some(g) = guard::get() else { return 0 };
    // SAFETY: dlmopen's name is NULL or a C string (its contract).
    let name = unsafe { CArg::new(name) };
    let shown = name.get().map_or(&b""[..], std::ffi::CStr::to_bytes);
    let saved = guard::errno();
    let r = std::panic::catch_unwind(|| {
        g.refuse("dlmopen", Access::Exec, shown, Rule::Unguarded("namespace"))
    })
    .unwrap_or_else(|_| Err(g.internal_error("dlmopen", Access::Exec, shown, None)));
    set_errno(saved);
    match r {
        Ok(()) => 0,
        Err(e) => e,
    }
}

const LOOKUP: &[CheckInfo] = &[chk(
    "—",
    "-",
    "-",
    "(a hooked name: the hook, whatever the handle or version)",
)];

/// The hooks written out above and in shim/shim.c. They stay out of the
/// `hooks!` tables: `dlsym`, `dlvsym` and `dlmopen` are C, which must keep
/// their caller's return address for the real call's tail jump, and check
/// no path of theirs (a lookup by name; dlmopen refuses a namespace
/// whatever the path, and in the base namespace is dlopen's row).
pub static ALIASES_CUSTOM: &[HookInfo] = &[
    row("dlsym", "dlsym", LOOKUP),
    row("dlvsym", "dlvsym", LOOKUP),
    row(
        "dlmopen",
        "dlmopen",
        &[chk(
            "EXEC",
            "Follow::Yes",
            "AT_FDCWD",
            "name, if it contains a '/' (LM_ID_BASE); any other namespace is refused",
        )],
    ),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gmon_name() {
        std::env::set_var("GMON_OUT_PREFIX", "/x/p");
        let mut buf = [0u8; 4096];
        assert!(gmon_prefixed(&mut buf));
        let end = buf.iter().position(|&b| b == 0).unwrap();
        let want = format!("/x/p.{}", std::process::id());
        assert_eq!(&buf[..end], want.as_bytes());
        std::env::remove_var("GMON_OUT_PREFIX");
        assert!(!gmon_prefixed(&mut buf));
    }
}
