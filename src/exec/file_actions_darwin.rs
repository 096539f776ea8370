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
//!
//! The hooks are the rows of [`super::darwin_actions`]'s table (compiled
//! on every system, so docs/hooks.md lists them); this module is the state
//! they share with `posix_spawn`.

use std::ffi::c_int;
use std::sync::atomic::Ordering;

use fsguard_policy::{Access, Rule};
use libc::{posix_spawn_file_actions_t, AT_FDCWD};

use crate::guard::{self, CArg};

use super::known::{find, Slot, MOVED};

/// The list's address: what `posix_spawn_file_actions_init` stored in the
/// caller's object (the key it is known by).
///
/// # Safety
/// `fa` NULL or pointing at a `posix_spawn_file_actions_t`.
pub(super) unsafe fn key(fa: *const posix_spawn_file_actions_t) -> usize {
    if fa.is_null() {
        0
    } else {
        // SAFETY: the caller's object, a pointer-sized value.
        unsafe { *fa as usize }
    }
}

/// Refuses an action (or a spawn) the library cannot check: a trace line
/// and EACCES, or 0 where audit mode lets it pass (or before init).
pub(super) fn refuse(call: &'static str, access: Access, path: &[u8]) -> c_int {
    match guard::get() {
        Some(g) => g
            .refuse(call, access, path, Rule::Unresolved)
            .err()
            .unwrap_or(0),
        None => 0,
    }
}

pub(super) fn relative(path: CArg<'_>) -> bool {
    path.get()
        .is_some_and(|p| p.to_bytes().first() != Some(&b'/'))
}

/// The slot of the list `fa` names; `None` for one not known (a spawn
/// with it is refused anyway).
///
/// # Safety
/// As [`key`].
pub(super) unsafe fn slot(fa: *const posix_spawn_file_actions_t) -> Option<&'static Slot> {
    // SAFETY: forwarded.
    find(unsafe { key(fa) })
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
