//! Children never slip out: every way a process starts a program.
//!
//! Each exec is an `exec` check of the program that will run (for the `p`
//! variants, found on `PATH` the way glibc finds it), and hands the child a
//! new environment: the preload variable with this library first
//! (`LD_PRELOAD`; `DYLD_INSERT_LIBRARIES` on macOS, [`crate::sys`]) and
//! `FSGUARD_POLICY_FD`, an inherited fd no one can change holding the policy
//! as it was frozen at load ([`crate::handoff`]), whatever the caller passed
//! or unset. The caller's envp is never edited in place.
//!
//! glibc's `system`, `popen` and `posix_spawn` exec through internal calls no
//! hook sees, so they are hooked themselves; `posix_spawn` runs the child in
//! a `CLONE_VM|CLONE_VFORK` clone, so its envp is built before the real call.
//! `system` and `popen` are written out here on the real `posix_spawn` with
//! that envp (glibc's read the global `environ`), and `pclose` with them.
//!
//! A program the library cannot follow (statically linked: no `PT_INTERP`;
//! set-id without `no_new_privs`: the loader drops `LD_PRELOAD`) is handled
//! by the `unguarded_exec` setting: warn (a trace line), deny, or allow. On
//! macOS a program System Integrity Protection guards (dyld drops
//! `DYLD_INSERT_LIBRARIES` from it; `/bin/sh` is one) is refused unless
//! `unguarded_exec = allow` (docs/macos.md).
//!
//! Every hook is a row of [`EXEC_TABLE`] below (`answer` rows: the row
//! declares the check, its code does the call), which is also their
//! reference; macOS's own calls are rows of [`EXEC_DARWIN`] and
//! [`SPAWN_DARWIN`] ([`darwin_actions`]: the file actions checked as they
//! are added), compiled everywhere so docs/hooks.md lists them. Where the
//! work lives: [`env`] builds the child's environment,
//! [`check`] is the exec check (`#!` interpreters, static and set-id
//! programs), [`hooks`] the exec family's real calls and `PATH` search,
//! [`spawn`] posix_spawn, [`file_actions`] its file actions, [`shell`]
//! system, popen and pclose.

#[cfg(target_os = "linux")]
mod bound;
mod chain;
mod check;
mod darwin_actions;
mod env;
#[cfg_attr(target_os = "macos", path = "file_actions_darwin.rs")]
mod file_actions;
mod hooks;
#[cfg(any(target_os = "macos", test))]
mod known;
#[cfg_attr(target_os = "macos", path = "shell_darwin.rs")]
mod shell;
mod spawn;

use std::ffi::{c_char, c_int};

use fsguard_policy::Access;
use libc::{pid_t, posix_spawn_file_actions_t, posix_spawnattr_t, AT_FDCWD, FILE};

use crate::guard::CArg;
#[cfg(target_os = "linux")]
use crate::hooks::at_follow;
use crate::resolve::Follow;
pub(crate) use env::environ;

pub(crate) use check::exec_check;
pub use darwin_actions::SPAWN_DARWIN;
pub(crate) use env::init;
#[cfg(target_os = "linux")]
pub use file_actions::SPAWN_OPEN;
#[cfg(target_os = "linux")]
pub use file_actions::SPAWN_TABLE;
#[cfg(target_os = "linux")]
pub(crate) use shell::{run_popen, run_system};
#[cfg(not(target_os = "linux"))]
use shell::{run_popen, run_system};

/// A NULL-terminated array of C strings (argv, envp).
type Argv = *const *const c_char;

/// A program run or code loaded: decided as a read.
const EXEC: Option<Access> = Some(Access::Exec);

hooks! {
    table EXEC_TABLE;
    /// execve(2).
    "execve" as "execve"
    fn execve(path: *const c_char, argv: Argv, envp: Argv) -> c_int,
        answer {
            // SAFETY: execve's contract: argv and envp NULL-terminated
            // arrays of C strings.
            unsafe { hooks::exec_path("execve", execve_check, path, argv, envp) }
        },
        check fn execve_check(path: CArg<'_>) by exec_check [EXEC, Follow::Yes, AT_FDCWD, path, false];
    /// execv(3): execve with the process's environment.
    "execv" as "execve"
    fn execv(path: *const c_char, argv: Argv) -> c_int,
        answer {
            // SAFETY: execv's contract, and the process's own environ.
            unsafe { hooks::exec_path("execve", execv_check, path, argv, environ()) }
        },
        check fn execv_check(path: CArg<'_>) by exec_check [EXEC, Follow::Yes, AT_FDCWD, path, false];
    /// execl(3): the variadic `execl` in shim/shim.c calls this with its
    /// arguments collected and the process's environ.
    "execl" as "execve"
    fn fsguard_execl(path: *const c_char, argv: Argv, envp: Argv) -> c_int,
        answer {
            // SAFETY: argv collected by the shim, envp the process's environ.
            unsafe { hooks::exec_path("execve", execl_check, path, argv, envp) }
        },
        check fn execl_check(path: CArg<'_>) by exec_check [EXEC, Follow::Yes, AT_FDCWD, path, false];
    /// execle(3), through shim/shim.c as execl.
    "execle" as "execve"
    fn fsguard_execle(path: *const c_char, argv: Argv, envp: Argv) -> c_int,
        answer {
            // SAFETY: argv collected by the shim; execle's envp.
            unsafe { hooks::exec_path("execve", execle_check, path, argv, envp) }
        },
        check fn execle_check(path: CArg<'_>) by exec_check [EXEC, Follow::Yes, AT_FDCWD, path, false];
    /// execvp(3): glibc's `PATH` search, done here.
    "execvp" as "execvp"
    fn execvp(file: *const c_char, argv: Argv) -> c_int,
        answer {
            // SAFETY: execvp's contract, and the process's own environ.
            unsafe { hooks::exec_search("execvp", execvp_check, file, argv, environ()) }
        },
        check fn execvp_check(each_path_candidate: CArg<'_>) by exec_check
            [EXEC, Follow::Yes, AT_FDCWD, each_path_candidate, false];
    #[cfg(target_os = "linux")]
    "execvpe" as "execvp"
    fn execvpe(file: *const c_char, argv: Argv, envp: Argv) -> c_int,
        answer {
            // SAFETY: execvpe's contract.
            unsafe { hooks::exec_search("execvp", execvpe_check, file, argv, envp) }
        },
        check fn execvpe_check(each_path_candidate: CArg<'_>) by exec_check
            [EXEC, Follow::Yes, AT_FDCWD, each_path_candidate, false];
    /// execlp(3), through shim/shim.c as execl.
    "execlp" as "execvp"
    fn fsguard_execlp(file: *const c_char, argv: Argv, envp: Argv) -> c_int,
        answer {
            // SAFETY: argv collected by the shim, envp the process's environ.
            unsafe { hooks::exec_search("execvp", execlp_check, file, argv, envp) }
        },
        check fn execlp_check(each_path_candidate: CArg<'_>) by exec_check
            [EXEC, Follow::Yes, AT_FDCWD, each_path_candidate, false];
    #[cfg(target_os = "linux")]
    "execveat" as "execveat"
    fn execveat(dirfd: c_int, path: *const c_char, argv: Argv, envp: Argv, flags: c_int) -> c_int,
        answer {
            // SAFETY: execveat's contract.
            unsafe { hooks::execveat_checked(|| execveat_check(dirfd, path, flags), dirfd, path, argv, envp, flags) }
        },
        check fn execveat_check(dirfd: c_int, path: CArg<'_>, flags: c_int) by exec_check
            [EXEC, at_follow(flags, path), dirfd, path, false];
    #[cfg(target_os = "linux")]
    "fexecve" as "fexecve"
    fn fexecve(fd: c_int, argv: Argv, envp: Argv) -> c_int,
        answer {
            // SAFETY: fexecve's contract.
            unsafe { hooks::fexecve_checked(|| fexecve_check(fd), fd, argv, envp) }
        },
        check fn fexecve_check(fd: c_int) by exec_check [EXEC, Follow::Fd, fd, CArg::NULL, false];
    /// posix_spawn(3): a relative path is resolved from the child's cwd, as
    /// its file actions leave it.
    "posix_spawn" as "posix_spawn"
    fn posix_spawn(pid: *mut pid_t, path: *const c_char, fa: *const posix_spawn_file_actions_t,
        attr: *const posix_spawnattr_t, argv: Argv, envp: Argv) -> c_int,
        answer {
            // SAFETY: posix_spawn's contract.
            unsafe { spawn::spawn_path("posix_spawn", posix_spawn_check, pid, path, fa, attr, argv, envp) }
        },
        check fn posix_spawn_check(child_cwd: c_int, path: CArg<'_>) by exec_check
            [EXEC, Follow::Yes, child_cwd, path, false];
    /// posix_spawnp(3): the `PATH` search done here.
    "posix_spawnp" as "posix_spawnp"
    fn posix_spawnp(pid: *mut pid_t, file: *const c_char, fa: *const posix_spawn_file_actions_t,
        attr: *const posix_spawnattr_t, argv: Argv, envp: Argv) -> c_int,
        answer {
            // SAFETY: posix_spawnp's contract.
            unsafe { spawn::spawn_search("posix_spawnp", posix_spawnp_check, pid, file, fa, attr, argv, envp) }
        },
        check fn posix_spawnp_check(child_cwd: c_int, each_path_candidate: CArg<'_>) by exec_check
            [EXEC, Follow::Yes, child_cwd, each_path_candidate, false];
    /// system(3), on the real posix_spawn with the child's environment.
    "system" as "system"
    fn system(cmd: *const c_char) -> c_int,
        answer {
            // SAFETY: system's contract: cmd NULL or a C string.
            unsafe { run_system(system_check, cmd.as_ptr()) }
        },
        check fn system_check() by exec_check [EXEC, Follow::Yes, AT_FDCWD, CArg::of(c"/bin/sh"), false];
    /// popen(3), on the real posix_spawn with the child's environment.
    "popen" as "popen"
    fn popen(cmd: *const c_char, mode: *const c_char) -> *mut FILE,
        answer {
            // SAFETY: popen's contract.
            unsafe { run_popen(popen_check, cmd.as_ptr(), mode.as_ptr()) }
        },
        check fn popen_check() by exec_check [EXEC, Follow::Yes, AT_FDCWD, CArg::of(c"/bin/sh"), false];
    /// pclose(3): no check; closes a stream popen made here and waits for
    /// its child, any other stream goes to glibc's pclose.
    "pclose" as "pclose"
    fn pclose(fp: *mut FILE) -> c_int,
        answer {
            // SAFETY: pclose's contract: a stream from popen.
            unsafe { shell::close_stream(fp) }
        },
        check [];
    #[cfg(target_os = "linux")]
    /// dlopen(3) of a name with a `/`: the shim's `dlopen` calls this (`0`
    /// to go ahead, else the errno of a refusal), then tail-calls the real
    /// dlopen so that the caller's RUNPATH and `$ORIGIN` still apply.
    "dlopen" as "dlopen"
    fn fsguard_dlopen_check(name: *const c_char) -> c_int,
        answer hooks::dlopen_checked(dlopen_check, name),
        check fn dlopen_check(name_with_a_slash: CArg<'_>)
            [EXEC, Follow::Yes, AT_FDCWD, name_with_a_slash, false];
}

hooks! {
    // Rows built for macOS only, listed in docs/hooks.md's macOS-only
    // sections wherever the docs are rendered.
    table EXEC_DARWIN, listed everywhere;
    #[cfg(target_os = "macos")]
    /// execvP(3), macOS: execvp along the `search_path` given (NULL: the
    /// default `PATH`), the search done here.
    "execvP" as "execvp"
    fn execv_p(file: *const c_char, search_path: *const c_char, argv: Argv) -> c_int,
        answer {
            let dirs = search_path.get().map_or(fsguard_policy::program::DEFAULT_PATH, |p| p.to_bytes());
            // SAFETY: execvP's contract, and the process's own environ.
            unsafe { hooks::exec_search_in("execvp", execv_p_check, file, dirs, argv, environ()) }
        },
        check fn execv_p_check(each_path_candidate: CArg<'_>) by exec_check
            [EXEC, Follow::Yes, AT_FDCWD, each_path_candidate, false];
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_names_each_symbol_once() {
        let mut seen = std::collections::HashSet::new();
        for h in EXEC_TABLE {
            assert!(seen.insert(h.symbol), "{} twice", h.symbol);
        }
    }
}
