//! Darwin's `posix_spawn_file_actions_*` calls, hooked on macOS: each
//! action that names a path or a directory fd is checked when it is added
//! (the list is opaque there; [`super::file_actions`] on macOS holds what
//! the hooks saw, and `posix_spawn` refuses a list they did not see built).
//!
//! The table is compiled on every system and `listed everywhere`, its rows
//! built for macOS only: docs/hooks.md, rendered on Linux, lists them in a
//! macOS-only section. On Linux glibc's list is read at spawn time instead
//! (`file_actions.rs`, the "posix_spawn file actions" section).

#[cfg(target_os = "macos")]
use std::ffi::{c_char, c_int};
#[cfg(target_os = "macos")]
use std::sync::atomic::Ordering;

#[cfg(target_os = "macos")]
use fsguard_policy::Access;
#[cfg(target_os = "macos")]
use libc::{mode_t, posix_spawn_file_actions_t, AT_FDCWD};

#[cfg(target_os = "macos")]
use crate::guard::CArg;
#[cfg(target_os = "macos")]
use crate::hooks::{open_access, open_follow};
#[cfg(target_os = "macos")]
use crate::real::real;
#[cfg(target_os = "macos")]
use crate::resolve::Follow;

#[cfg(target_os = "macos")]
use super::file_actions::{key, refuse, relative, slot};
#[cfg(target_os = "macos")]
use super::known::{fd_bit, forget, remember, MOVED};

/// A chdir action's check: metadata, as chdir(2)'s.
#[cfg(target_os = "macos")]
const META: Option<Access> = None;

#[cfg(target_os = "macos")]
type Init = unsafe extern "C" fn(*mut posix_spawn_file_actions_t) -> c_int;
#[cfg(target_os = "macos")]
type AddOpen = unsafe extern "C" fn(
    *mut posix_spawn_file_actions_t,
    c_int,
    *const c_char,
    c_int,
    mode_t,
) -> c_int;
#[cfg(target_os = "macos")]
type AddDup2 = unsafe extern "C" fn(*mut posix_spawn_file_actions_t, c_int, c_int) -> c_int;
#[cfg(target_os = "macos")]
type AddPortDup2 =
    unsafe extern "C" fn(*mut posix_spawn_file_actions_t, libc::mach_port_t, c_int) -> c_int;
#[cfg(target_os = "macos")]
type AddChdir = unsafe extern "C" fn(*mut posix_spawn_file_actions_t, *const c_char) -> c_int;
#[cfg(target_os = "macos")]
type AddFchdir = unsafe extern "C" fn(*mut posix_spawn_file_actions_t, c_int) -> c_int;

hooks! {
    table SPAWN_DARWIN, listed everywhere;
    #[cfg(target_os = "macos")]
    /// posix_spawn_file_actions_init(3): the list is known from here on.
    "posix_spawn_file_actions_init" as "posix_spawn_file_actions_init"
    fn fa_init(fa: *mut posix_spawn_file_actions_t) -> c_int,
        answer {
            let Some(f) = real!("posix_spawn_file_actions_init", Init) else {
                return libc::ENOSYS;
            };
            // SAFETY: the caller's object, as init requires.
            let r = unsafe { f(fa) };
            if r == 0 {
                // SAFETY: initialised just above.
                remember(unsafe { key(fa) });
            }
            r
        },
        check [];
    #[cfg(target_os = "macos")]
    /// posix_spawn_file_actions_destroy(3): forgotten, then freed.
    "posix_spawn_file_actions_destroy" as "posix_spawn_file_actions_destroy"
    fn fa_destroy(fa: *mut posix_spawn_file_actions_t) -> c_int,
        answer {
            // SAFETY: the caller's initialised object.
            forget(unsafe { key(fa) });
            let Some(f) = real!("posix_spawn_file_actions_destroy", Init) else {
                return libc::ENOSYS;
            };
            // SAFETY: as destroy requires.
            unsafe { f(fa) }
        },
        check [];
    #[cfg(target_os = "macos")]
    /// posix_spawn_file_actions_addopen(3): the path checked now as the
    /// child will open it (from the spawner's cwd; refused if relative after
    /// a chdir action).
    "posix_spawn_file_actions_addopen" as "posix_spawn_file_actions_addopen"
    fn fa_addopen(fa: *mut posix_spawn_file_actions_t, fd: c_int, path: *const c_char, oflag: c_int,
        mode: mode_t) -> c_int,
        answer {
            // SAFETY: the caller's object.
            let s = unsafe { slot(fa) };
            let moved = s.is_some_and(|s| s.state.load(Ordering::Relaxed) & MOVED != 0);
            let checked = if moved && relative(path) {
                Err(refuse("posix_spawn_file_actions_addopen",
                    open_access(oflag).unwrap_or(Access::Read),
                    path.get().map_or(&b"?"[..], |p| p.to_bytes())))
            } else {
                addopen_check(path, oflag)
            };
            match checked {
                Err(e) if e != 0 => e,
                _ => {
                    let Some(f) = real!("posix_spawn_file_actions_addopen", AddOpen) else {
                return libc::ENOSYS;
            };
                    // SAFETY: the caller's arguments.
                    let r = unsafe { f(fa, fd, path.as_ptr(), oflag, mode) };
                    if let (0, Some(s)) = (r, s) {
                        s.state.fetch_or(fd_bit(fd), Ordering::Relaxed);
                    }
                    r
                }
            }
        },
        check fn addopen_check(path: CArg<'_>, oflag: c_int)
            [open_access(oflag), open_follow(oflag), AT_FDCWD, path, false];
    #[cfg(target_os = "macos")]
    /// posix_spawn_file_actions_adddup2(3): no check; the fd it writes is
    /// remembered (see addfchdir_np).
    "posix_spawn_file_actions_adddup2" as "posix_spawn_file_actions_adddup2"
    fn fa_adddup2(fa: *mut posix_spawn_file_actions_t, fd: c_int, newfd: c_int) -> c_int,
        answer {
            let Some(f) = real!("posix_spawn_file_actions_adddup2", AddDup2) else {
                return libc::ENOSYS;
            };
            // SAFETY: the caller's arguments.
            let r = unsafe { f(fa, fd, newfd) };
            // SAFETY: the caller's object.
            if let (0, Some(s)) = (r, unsafe { slot(fa) }) {
                s.state.fetch_or(fd_bit(newfd), Ordering::Relaxed);
            }
            r
        },
        check [];
    #[cfg(target_os = "macos")]
    /// posix_spawn_file_actions_add_fileportdup2_np (spawn_private.h, macOS
    /// 10.15): as adddup2, from a Mach fileport.
    "posix_spawn_file_actions_add_fileportdup2_np" as "posix_spawn_file_actions_add_fileportdup2_np"
    fn fa_addfileportdup2(fa: *mut posix_spawn_file_actions_t, port: libc::mach_port_t, newfd: c_int) -> c_int,
        answer {
            let Some(f) = real!("posix_spawn_file_actions_add_fileportdup2_np", AddPortDup2) else {
                return libc::ENOSYS;
            };
            // SAFETY: the caller's arguments.
            let r = unsafe { f(fa, port, newfd) };
            // SAFETY: the caller's object.
            if let (0, Some(s)) = (r, unsafe { slot(fa) }) {
                s.state.fetch_or(fd_bit(newfd), Ordering::Relaxed);
            }
            r
        },
        check [];
    #[cfg(target_os = "macos")]
    /// posix_spawn_file_actions_addchdir_np(3): checked now like chdir(2).
    "posix_spawn_file_actions_addchdir_np" as "posix_spawn_file_actions_addchdir_np"
    fn fa_addchdir(fa: *mut posix_spawn_file_actions_t, path: *const c_char) -> c_int,
        answer {
            // SAFETY: the caller's object.
            let s = unsafe { slot(fa) };
            let moved = s.is_some_and(|s| s.state.load(Ordering::Relaxed) & MOVED != 0);
            let checked = if moved && relative(path) {
                Err(refuse("posix_spawn_file_actions_addchdir_np", Access::Read,
                    path.get().map_or(&b"?"[..], |p| p.to_bytes())))
            } else {
                addchdir_check(path)
            };
            match checked {
                Err(e) if e != 0 => e,
                _ => {
                    let Some(f) = real!("posix_spawn_file_actions_addchdir_np", AddChdir) else {
                return libc::ENOSYS;
            };
                    // SAFETY: the caller's arguments.
                    let r = unsafe { f(fa, path.as_ptr()) };
                    if let (0, Some(s)) = (r, s) {
                        s.state.fetch_or(MOVED, Ordering::Relaxed);
                    }
                    r
                }
            }
        },
        check fn addchdir_check(path: CArg<'_>) [META, Follow::Yes, AT_FDCWD, path, false];
    #[cfg(target_os = "macos")]
    /// posix_spawn_file_actions_addfchdir_np(3): the directory of this
    /// process's fd checked now like fchdir(2); an fd an earlier action
    /// writes is refused.
    "posix_spawn_file_actions_addfchdir_np" as "posix_spawn_file_actions_addfchdir_np"
    fn fa_addfchdir(fa: *mut posix_spawn_file_actions_t, fd: c_int) -> c_int,
        answer {
            // SAFETY: the caller's object.
            let s = unsafe { slot(fa) };
            let written = s.is_some_and(|s| s.state.load(Ordering::Relaxed) & fd_bit(fd) != 0);
            let checked = if written {
                Err(refuse("posix_spawn_file_actions_addfchdir_np", Access::Read, b"?"))
            } else {
                addfchdir_check(fd)
            };
            match checked {
                Err(e) if e != 0 => e,
                _ => {
                    let Some(f) = real!("posix_spawn_file_actions_addfchdir_np", AddFchdir) else {
                return libc::ENOSYS;
            };
                    // SAFETY: the caller's arguments.
                    let r = unsafe { f(fa, fd) };
                    if let (0, Some(s)) = (r, s) {
                        s.state.fetch_or(MOVED, Ordering::Relaxed);
                    }
                    r
                }
            }
        },
        check fn addfchdir_check(fd: c_int) [META, Follow::Fd, fd, CArg::NULL, false];
}
