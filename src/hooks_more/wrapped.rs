//! The rows of [`WRAPPED`]: calls that need more than "check, then call",
//! whose `pre` and `post` steps live in the sibling files (`shm`, `walk`,
//! `handle`, `bind`).

use super::*;

#[cfg(target_os = "linux")]
type SemOpenFn = unsafe extern "C" fn(*const c_char, c_int, ...) -> *mut c_void;
type BindFn = unsafe extern "C" fn(c_int, *const libc::sockaddr, libc::socklen_t) -> c_int;
#[cfg(target_os = "linux")]
type GlobFn = unsafe extern "C" fn(*const c_char, c_int, *mut c_void, *mut GlobT) -> c_int;

hooks! {
    table WRAPPED;
    #[cfg(target_os = "linux")]
    /// POSIX shared memory: `/dev/shm/NAME`, opened by glibc with
    /// O_NOFOLLOW through an internal call. With the `ipc` preset a name
    /// the tree may not create is first tried, and checked, in the tree's
    /// own namespace (see `shm::open_pre`).
    "shm_open" as "shm_open"
    fn shm_open(name: *const c_char, oflag: c_int, mode: mode_t) -> c_int,
        pre |_name| shm::open_pre(name, oflag, mode, shm_open_check),
        fail -1,
        check fn shm_open_check(dev_shm_name: CArg<'_>, oflag: c_int)
            [open_access(oflag), Follow::Entry, AT_FDCWD, dev_shm_name, false];
    #[cfg(target_os = "linux")]
    "shm_unlink" as "shm_unlink"
    fn shm_unlink(name: *const c_char) -> c_int,
        pre |_name| shm::unlink_pre(name, shm::Kind::Shm, shm_unlink_check),
        fail -1,
        check fn shm_unlink_check(dev_shm_name: CArg<'_>) [WRITE, Follow::Entry, AT_FDCWD, dev_shm_name, false];
    #[cfg(target_os = "linux")]
    /// POSIX named semaphores: `/dev/shm/sem.NAME`, which glibc opens
    /// read-write (and creates with O_CREAT) through internal calls; the
    /// `ipc` preset as for shm_open (see `shm::sem_open_pre`). The variadic
    /// `sem_open` in shim/shim.c calls this with the mode and value.
    "sem_open" as "sem_open"
    fn fsguard_sem_open(name: *const c_char, oflag: c_int, mode: mode_t, value: c_uint) -> *mut c_void,
        real SemOpenFn = (name, oflag, mode, value),
        pre |_name| shm::sem_open_pre(name, oflag, mode, value, sem_open_check),
        fail std::ptr::null_mut(),
        check fn sem_open_check(dev_shm_sem_name: CArg<'_>, oflag: c_int)
            [open_access(oflag | libc::O_RDWR), Follow::Entry, AT_FDCWD, dev_shm_sem_name, false];
    #[cfg(target_os = "linux")]
    "sem_unlink" as "sem_unlink"
    fn sem_unlink(name: *const c_char) -> c_int,
        pre |_name| shm::unlink_pre(name, shm::Kind::Sem, sem_unlink_check),
        fail -1,
        check fn sem_unlink_check(dev_shm_sem_name: CArg<'_>) [WRITE, Follow::Entry, AT_FDCWD, dev_shm_sem_name, false];
    #[cfg(target_os = "linux")]
    /// glibc's fts reads directories through internal calls: each start
    /// path is checked once the stream exists (see `walk::fts_checked`).
    "fts_open" as "fts_open"
    fn fts_open(argv: *const *mut c_char, options: c_int, compar: *mut c_void) -> *mut c_void,
        post |fts| {
            // SAFETY: what the real fts_open just returned: NULL or its stream.
            unsafe { walk::fts_checked(fts, options, fts_start_check) }
        },
        fail std::ptr::null_mut(),
        check fn fts_start_check(each_start_path: CArg<'_>, options: c_int)
            [READ, fts_follow(options), AT_FDCWD, each_start_path, false];
    #[cfg(target_os = "linux")]
    "fts64_open" as "fts_open"
    fn fts64_open(argv: *const *mut c_char, options: c_int, compar: *mut c_void) -> *mut c_void,
        post |fts| {
            // SAFETY: what the real fts64_open just returned: NULL or its stream.
            unsafe { walk::fts_checked(fts, options, fts64_start_check) }
        },
        fail std::ptr::null_mut(),
        check fn fts64_start_check(each_start_path: CArg<'_>, options: c_int)
            [READ, fts_follow(options), AT_FDCWD, each_start_path, false];
    #[cfg(target_os = "linux")]
    /// glob reads directories with its internal opendir: it is handed one
    /// that checks each (see `walk::glob_pre`).
    "glob" as "glob"
    fn glob(pattern: *const c_char, flags: c_int, errfunc: *mut c_void, pglob: *mut GlobT) -> c_int,
        real GlobFn = (pattern, flags | walk::GLOB_ALTDIRFUNC, errfunc, pglob),
        pre |saved| {
            // SAFETY: glob's contract: `pglob` NULL or the caller's glob_t.
            unsafe { walk::glob_pre::<false>(flags, pglob) }
        },
        post |r| {
            // SAFETY: as above, and `saved` taken from it by `glob_pre`.
            unsafe { walk::glob_post(r, pglob, saved) }
        },
        fail walk::GLOB_ABORTED,
        check fn glob_dir_check(each_directory_read: CArg<'_>)
            [READ, Follow::Yes, AT_FDCWD, each_directory_read, false];
    #[cfg(all(target_os = "linux", target_pointer_width = "64"))]
    "glob64" as "glob"
    fn glob64(pattern: *const c_char, flags: c_int, errfunc: *mut c_void, pglob: *mut GlobT) -> c_int,
        real GlobFn = (pattern, flags | walk::GLOB_ALTDIRFUNC, errfunc, pglob),
        pre |saved| {
            // SAFETY: glob64's contract: `pglob` NULL or the caller's glob64_t.
            unsafe { walk::glob_pre::<true>(flags, pglob) }
        },
        post |r| {
            // SAFETY: as above, and `saved` taken from it by `glob_pre`.
            unsafe { walk::glob_post(r, pglob, saved) }
        },
        fail walk::GLOB_ABORTED,
        check fn glob64_dir_check(each_directory_read: CArg<'_>)
            [READ, Follow::Yes, AT_FDCWD, each_directory_read, false];
    #[cfg(target_os = "linux")]
    /// A handle names a file without its path: the fd opened is checked,
    /// and closed again if refused.
    "open_by_handle_at" as "open_by_handle_at"
    fn open_by_handle_at(mount_fd: c_int, handle: *mut c_void, flags: c_int) -> c_int,
        post |fd| handle::checked_fd(fd, || handle_check(fd, flags)),
        fail -1,
        check fn handle_check(returned_fd: c_int, flags: c_int)
            [open_access(flags), Follow::Fd, returned_fd, CArg::NULL, false];
    /// bind on an AF_UNIX path creates a socket file there (checked as a
    /// write); an abstract name is decided by the socket rules, before the
    /// call (see `bind::socket_path`). The kernel gets the library's copy
    /// of the address.
    "bind" as "bind"
    fn bind(fd: c_int, addr: *const libc::sockaddr, len: libc::socklen_t) -> c_int,
        real BindFn = (fd, unix.addr(), unix.len()),
        pre |unix| {
            // SAFETY: bind's contract: `len` readable bytes at `addr`.
            unsafe { bind::socket_path(fd, addr, len) }
        },
        fail -1,
        check [WRITE, Follow::Entry, AT_FDCWD, unix.sun_path(), false];
}

/// glob's row check, for `walk`'s directory opener (the check itself is
/// private to this table).
#[cfg(target_os = "linux")]
pub(super) fn glob_dir_checked(path: CArg<'_>) -> Result<(), c_int> {
    glob_dir_check(path)
}

/// glob64's row check, as [`glob_dir_checked`].
#[cfg(all(target_os = "linux", target_pointer_width = "64"))]
pub(super) fn glob64_dir_checked(path: CArg<'_>) -> Result<(), c_int> {
    glob64_dir_check(path)
}
