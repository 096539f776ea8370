//! posix_spawn file actions on macOS.
//!
//! Darwin's `posix_spawn_file_actions_t` is an opaque pointer to a list
//! libc allocates, so the list cannot be read at spawn time as glibc's is
//! on Linux. Instead each call that adds a path (`addopen`, `addchdir_np`)
//! or a directory fd (`addfchdir_np`) is hooked and checked when the action
//! is added, as the child will do it, and the object is known from its
//! `posix_spawn_file_actions_init` on: a `posix_spawn` whose actions the
//! library did not see being built is refused (fail closed). What remains
//! racy (docs/limits.md): a path checked when its action was added can name
//! another object by the time the child opens it.
//!
//! Once a chdir or fchdir action is added, the child's later relative paths
//! start from a directory this process does not hold: a relative `addopen`
//! path, and a relative program path at spawn, are refused then. An fchdir
//! to an fd an earlier action of the list opens or duplicates is refused
//! too (the directory it names exists only in the child).

use std::ffi::{c_char, c_int};
use std::sync::atomic::Ordering;

use fsguard_policy::{Access, Rule};
use libc::{mode_t, posix_spawn_file_actions_t, AT_FDCWD};

use crate::guard::{self, CArg};
use crate::hooks::{open_access, open_follow};
use crate::real::real;
use crate::resolve::Follow;

use super::known::{fd_bit, find, forget, remember, Slot, MOVED};

/// The list's address: what `posix_spawn_file_actions_init` stored in the
/// caller's object (the key it is known by).
///
/// # Safety
/// `fa` NULL or pointing at a `posix_spawn_file_actions_t`.
unsafe fn key(fa: *const posix_spawn_file_actions_t) -> usize {
    if fa.is_null() {
        0
    } else {
        // SAFETY: the caller's object, a pointer-sized value.
        unsafe { *fa as usize }
    }
}

/// Refuses an action (or a spawn) the library cannot check: a trace line
/// and EACCES, or 0 where audit mode lets it pass (or before init).
fn refuse(call: &'static str, access: Access, path: &[u8]) -> c_int {
    match guard::get() {
        Some(g) => g
            .refuse(call, access, path, Rule::Unresolved)
            .err()
            .unwrap_or(0),
        None => 0,
    }
}

fn relative(path: CArg<'_>) -> bool {
    path.get()
        .is_some_and(|p| p.to_bytes().first() != Some(&b'/'))
}

type Init = unsafe extern "C" fn(*mut posix_spawn_file_actions_t) -> c_int;
type AddOpen = unsafe extern "C" fn(
    *mut posix_spawn_file_actions_t,
    c_int,
    *const c_char,
    c_int,
    mode_t,
) -> c_int;
type AddDup2 = unsafe extern "C" fn(*mut posix_spawn_file_actions_t, c_int, c_int) -> c_int;
type AddPortDup2 =
    unsafe extern "C" fn(*mut posix_spawn_file_actions_t, libc::mach_port_t, c_int) -> c_int;
type AddChdir = unsafe extern "C" fn(*mut posix_spawn_file_actions_t, *const c_char) -> c_int;
type AddFchdir = unsafe extern "C" fn(*mut posix_spawn_file_actions_t, c_int) -> c_int;

/// The slot of the list `fa` names; `None` for one not known (a spawn
/// with it is refused anyway).
///
/// # Safety
/// As [`key`].
unsafe fn slot(fa: *const posix_spawn_file_actions_t) -> Option<&'static Slot> {
    // SAFETY: forwarded.
    find(unsafe { key(fa) })
}

hooks! {
    table SPAWN_TABLE;
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
        check fn addchdir_check(path: CArg<'_>) [None, Follow::Yes, AT_FDCWD, path, false];
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
        check fn addfchdir_check(fd: c_int) [None, Follow::Fd, fd, CArg::NULL, false];
}

/// The file actions of one posix_spawn, as checked when they were added.
pub(crate) struct Actions {
    orig: *const posix_spawn_file_actions_t,
    call: &'static str,
    /// A chdir or fchdir action moves the child's cwd.
    moved: bool,
}

impl Actions {
    pub(super) fn as_ptr(&self) -> *const posix_spawn_file_actions_t {
        self.orig
    }

    /// The list `fa` as it was built: `Err(EACCES)` (with a trace line) for
    /// one the library did not see being built, whose actions no hook
    /// checked.
    ///
    /// # Safety
    /// `fa` NULL or an initialised `posix_spawn_file_actions_t`.
    pub(super) unsafe fn prepare(
        call: &'static str,
        fa: *const posix_spawn_file_actions_t,
    ) -> Result<Actions, c_int> {
        let mut this = Actions {
            orig: fa,
            call,
            moved: false,
        };
        if fa.is_null() || guard::get().is_none() {
            return Ok(this);
        }
        // SAFETY: the caller's object.
        match unsafe { slot(fa) } {
            Some(s) => this.moved = s.state.load(Ordering::Acquire) & MOVED != 0,
            None => match refuse(call, Access::Exec, b"?") {
                0 => {}
                e => return Err(e),
            },
        }
        Ok(this)
    }

    /// Where the child resolves a relative program path from: this
    /// process's cwd, unless a chdir action moved it (then a relative
    /// program path is refused).
    pub(super) fn program_dir(&self, path: CArg<'_>) -> Result<c_int, c_int> {
        if self.moved && relative(path) {
            let shown = path.get().map_or(&b"?"[..], |p| p.to_bytes());
            return match refuse(self.call, Access::Exec, shown) {
                0 => Ok(AT_FDCWD),
                e => Err(e),
            };
        }
        Ok(AT_FDCWD)
    }
}
