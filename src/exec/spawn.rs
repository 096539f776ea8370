//! posix_spawn and posix_spawnp: the program checked (against the child's
//! last chdir), the file actions done here ([`super::file_actions`]), the
//! child's envp built before the vfork-style clone.

use std::ffi::{c_char, c_int};

use libc::{pid_t, posix_spawn_file_actions_t, posix_spawnattr_t};

use super::check::exec_check;
use super::env::with_env;
use super::file_actions::Actions;
use super::hooks::{join, search_path, CANDIDATE_INLINE};
use super::Argv;
use crate::guard::CArg;
use crate::real::real;
use crate::resolve::{Follow, Spill};

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
unsafe fn spawn_path(
    call: &'static str,
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
    unsafe { spawn_prepared(call, pid, path, &actions, attr, argv, envp) }
}

/// posix_spawn with its file actions already done here (see [`Actions`]);
/// a relative program path is checked against the child's last chdir.
///
/// # Safety
/// The pointers as posix_spawn(3) requires them (`fa` NULL or initialised;
/// `argv`, `envp` NULL-terminated arrays of C strings).
unsafe fn spawn_prepared(
    call: &'static str,
    pid: *mut pid_t,
    path: CArg<'_>,
    actions: &Actions,
    attr: *const posix_spawnattr_t,
    argv: Argv,
    envp: Argv,
) -> c_int {
    if let Err(e) = exec_check(call, actions.cwd, path, Follow::Yes) {
        return e;
    }
    let Some(real) = real!("posix_spawn", SpawnFn) else {
        return libc::ENOSYS;
    };
    let fa = actions.as_ptr();
    // SAFETY: the real call; the envp is complete before the vfork-style clone.
    unsafe { with_env(envp, |env| real(pid, path.as_ptr(), fa, attr, argv, env)) }
        .unwrap_or_else(|e| e)
}

/// posix_spawn(3).
///
/// # Safety
/// As for the C function: its pointer arguments valid as it requires (a
/// C string NUL-terminated, NULL only where it accepts NULL).
#[no_mangle]
pub unsafe extern "C" fn posix_spawn(
    pid: *mut pid_t,
    path: *const c_char,
    fa: *const posix_spawn_file_actions_t,
    attr: *const posix_spawnattr_t,
    argv: Argv,
    envp: Argv,
) -> c_int {
    // SAFETY: forwarded, under posix_spawn's contract.
    unsafe { spawn_path("posix_spawn", pid, CArg::new(path), fa, attr, argv, envp) }
}

/// posix_spawnp(3): the `PATH` search done here, so the program spawned is
/// the program checked; each candidate goes through `posix_spawn`. The file
/// actions are done once, for all candidates.
///
/// # Safety
/// As for the C function: its pointer arguments valid as it requires (a
/// C string NUL-terminated, NULL only where it accepts NULL).
#[no_mangle]
pub unsafe extern "C" fn posix_spawnp(
    pid: *mut pid_t,
    file: *const c_char,
    fa: *const posix_spawn_file_actions_t,
    attr: *const posix_spawnattr_t,
    argv: Argv,
    envp: Argv,
) -> c_int {
    const CALL: &str = "posix_spawnp";
    // SAFETY: posix_spawnp's file is NULL or a C string (its contract).
    let file = unsafe { CArg::new(file) };
    let Some(name) = file.get() else {
        return libc::EFAULT;
    };
    let name = name.to_bytes();
    if name.is_empty() {
        return libc::ENOENT;
    }
    // SAFETY: the caller's file actions.
    let actions = match unsafe { Actions::prepare(CALL, fa) } {
        Ok(a) => a,
        Err(e) => return e,
    };
    if name.contains(&b'/') {
        // SAFETY: forwarded.
        return unsafe { spawn_prepared(CALL, pid, file, &actions, attr, argv, envp) };
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
        match unsafe { spawn_prepared(CALL, pid, CArg::of(cand), &actions, attr, argv, envp) } {
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
