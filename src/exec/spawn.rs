//! posix_spawn and posix_spawnp, behind their rows in
//! [`super::EXEC_TABLE`]: the program checked (against the child's last
//! chdir), the file actions done here ([`super::file_actions`]; on macOS
//! checked as they were added), the child's envp built before the
//! vfork-style clone.
//!
//! Every spawn is checked as an exec of its program, whatever its
//! attributes: so Darwin's `POSIX_SPAWN_SETEXEC` (posix_spawnattr_setflags:
//! the caller's image is replaced, as by execve) gets execve's check, the
//! same environment, and returns only on failure, as execve does.

use std::ffi::{c_char, c_int};

use libc::{pid_t, posix_spawn_file_actions_t, posix_spawnattr_t};

use super::env::with_env;
use super::file_actions::Actions;
use super::hooks::{join, search_path, CANDIDATE_INLINE};
use super::Argv;
use crate::guard::CArg;
use crate::real::real;
use crate::resolve::Spill;

/// A row's check of the program: relative to the child's cwd (as the file
/// actions leave it), the path.
pub(super) trait SpawnCheck: Fn(c_int, CArg<'_>) -> Result<(), c_int> + Copy {}
impl<F: Fn(c_int, CArg<'_>) -> Result<(), c_int> + Copy> SpawnCheck for F {}

pub(super) type SpawnFn = unsafe extern "C" fn(
    *mut pid_t,
    *const c_char,
    *const posix_spawn_file_actions_t,
    *const posix_spawnattr_t,
    Argv,
    Argv,
) -> c_int;

/// posix_spawn: its file actions done here, then [`spawn_prepared`].
///
/// # Safety
/// The pointers as posix_spawn(3) requires them (`fa` NULL or initialised;
/// `argv`, `envp` NULL-terminated arrays of C strings).
#[allow(clippy::too_many_arguments)] // posix_spawn's six, the call and its check
pub(super) unsafe fn spawn_path(
    call: &'static str,
    check: impl SpawnCheck,
    pid: *mut pid_t,
    path: CArg<'_>,
    fa: *const posix_spawn_file_actions_t,
    attr: *const posix_spawnattr_t,
    argv: Argv,
    envp: Argv,
) -> c_int {
    // SAFETY: the caller's file actions.
    let actions = match unsafe { Actions::prepare(call, fa) } {
        Ok(a) => a,
        Err(e) => return e,
    };
    // SAFETY: forwarded.
    unsafe { spawn_prepared(call, check, pid, path, &actions, attr, argv, envp) }
}

/// posix_spawn with its file actions already done here (see [`Actions`]);
/// a relative program path is checked against the child's last chdir.
///
/// # Safety
/// The pointers as posix_spawn(3) requires them (`fa` NULL or initialised;
/// `argv`, `envp` NULL-terminated arrays of C strings).
#[allow(clippy::too_many_arguments)] // posix_spawn's six, the call and its check
unsafe fn spawn_prepared(
    call: &'static str,
    check: impl SpawnCheck,
    pid: *mut pid_t,
    path: CArg<'_>,
    actions: &Actions,
    attr: *const posix_spawnattr_t,
    argv: Argv,
    envp: Argv,
) -> c_int {
    let dir = match actions.program_dir(path) {
        Ok(d) => d,
        Err(e) => return e,
    };
    if let Err(e) = check(dir, path) {
        return e;
    }
    let Some(real) = real!("posix_spawn", SpawnFn) else {
        return libc::ENOSYS;
    };
    let fa = actions.as_ptr();
    let shown = path.get().map_or(&b""[..], std::ffi::CStr::to_bytes);
    // SAFETY: the real call; the envp is complete before the vfork-style clone.
    unsafe {
        with_env(call, shown, envp, |env| {
            real(pid, path.as_ptr(), fa, attr, argv, env)
        })
    }
    .unwrap_or_else(|e| e)
}

/// posix_spawnp(3): the `PATH` search done here, so the program spawned is
/// the program checked (by the row's `check`); each candidate goes through
/// `posix_spawn`. The file actions are done once, for all candidates.
///
/// # Safety
/// The pointers as posix_spawn(3) requires them (`fa` NULL or initialised;
/// `argv`, `envp` NULL-terminated arrays of C strings).
#[allow(clippy::too_many_arguments)] // posix_spawnp's six, the call and its check
pub(super) unsafe fn spawn_search(
    call: &'static str,
    check: impl SpawnCheck,
    pid: *mut pid_t,
    file: CArg<'_>,
    fa: *const posix_spawn_file_actions_t,
    attr: *const posix_spawnattr_t,
    argv: Argv,
    envp: Argv,
) -> c_int {
    let Some(name) = file.get() else {
        return libc::EFAULT;
    };
    let name = name.to_bytes();
    if name.is_empty() {
        return libc::ENOENT;
    }
    // SAFETY: the caller's file actions.
    let actions = match unsafe { Actions::prepare(call, fa) } {
        Ok(a) => a,
        Err(e) => return e,
    };
    if name.contains(&b'/') {
        // SAFETY: forwarded.
        return unsafe { spawn_prepared(call, check, pid, file, &actions, attr, argv, envp) };
    }
    let mut eacces = false;
    let mut buf = Spill::<CANDIDATE_INLINE>::new();
    for dir in fsguard_policy::program::path_dirs(search_path()) {
        let Some(cand) = join(dir, name, &mut buf) else {
            continue;
        };
        // Skip what is not there without spawning a child for it.
        match rustix::fs::access(cand, rustix::fs::Access::EXEC_OK) {
            Ok(()) => {}
            Err(rustix::io::Errno::ACCESS) => {
                eacces = true;
                continue;
            }
            Err(_) => continue,
        }
        // SAFETY: forwarded.
        match unsafe {
            spawn_prepared(call, check, pid, CArg::of(cand), &actions, attr, argv, envp)
        } {
            libc::EACCES => eacces = true,
            libc::ENOENT | libc::ESTALE | libc::ENOTDIR | libc::ENODEV | libc::ETIMEDOUT => {}
            r => return r,
        }
    }
    if eacces {
        libc::EACCES
    } else {
        libc::ENOENT
    }
}
