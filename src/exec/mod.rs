//! Children never slip out: every way a process starts a program.
//!
//! Each exec is an `exec` check of the program that will run (for the `p`
//! variants, found on `PATH` the way glibc finds it), and hands the child a
//! new environment: `LD_PRELOAD` with this library first and
//! `FSGUARD_POLICY_FD`, an inherited sealed memfd holding the policy as it
//! was frozen at load ([`crate::handoff`]), whatever the caller passed or
//! unset. The caller's envp is never edited in place.
//!
//! glibc's `system`, `popen` and `posix_spawn` exec through internal calls no
//! hook sees, so they are hooked themselves; `posix_spawn` runs the child in
//! a `CLONE_VM|CLONE_VFORK` clone, so its envp is built before the real call.
//! `system` and `popen` are written out here on the real `posix_spawn` with
//! that envp (glibc's read the global `environ`), and `pclose` with them.
//!
//! A program the library cannot follow (statically linked: no `PT_INTERP`;
//! set-id without `no_new_privs`: the loader drops `LD_PRELOAD`) is handled
//! by the `unguarded_exec` setting: warn (a trace line), deny, or allow.
//!
//! Where each part lives: [`env`] builds the child's environment, [`check`]
//! is the exec check (`#!` interpreters, static and set-id programs),
//! [`hooks`] the exec family and `PATH` search, [`spawn`] posix_spawn,
//! [`file_actions`] its file actions, [`shell`] system, popen and pclose.
//! The table below lists them all.

mod check;
mod env;
mod file_actions;
mod hooks;
mod shell;
mod spawn;

use std::ffi::c_char;

use crate::hooks::{CheckInfo, HookInfo};

pub(crate) use env::init;
pub use file_actions::{SPAWN_OPEN, SPAWN_TABLE};
pub use hooks::{
    execv, execve, execveat, execvp, execvpe, fexecve, fsguard_dlopen_check, fsguard_execve,
    fsguard_execvpe,
};
pub use shell::{pclose, popen, system};
pub(crate) use shell::{run_popen, run_system, shell_check};
pub use spawn::{posix_spawn, posix_spawnp};

/// A NULL-terminated array of C strings (argv, envp).
type Argv = *const *const c_char;

const fn exec_info(symbol: &'static str, call: &'static str, path: &'static str) -> HookInfo {
    HookInfo {
        symbol,
        call,
        checks: match path.as_bytes() {
            b"fd" => &[CheckInfo {
                access: "EXEC",
                follow: "Follow::Fd",
                dirfd: "fd",
                path: "NULL",
            }],
            b"dirfd" => &[CheckInfo {
                access: "EXEC",
                follow: "at_follow(flags, path)",
                dirfd: "dirfd",
                path: "path",
            }],
            b"/bin/sh" => &[CheckInfo {
                access: "EXEC",
                follow: "Follow::Yes",
                dirfd: "AT_FDCWD",
                path: "\"/bin/sh\"",
            }],
            b"PATH" => &[CheckInfo {
                access: "EXEC",
                follow: "Follow::Yes",
                dirfd: "AT_FDCWD",
                path: "each PATH candidate",
            }],
            b"slash" => &[CheckInfo {
                access: "EXEC",
                follow: "Follow::Yes",
                dirfd: "AT_FDCWD",
                path: "name, if it contains a '/'",
            }],
            _ => &[CheckInfo {
                access: "EXEC",
                follow: "Follow::Yes",
                dirfd: "AT_FDCWD",
                path: "path",
            }],
        },
    }
}

/// The exec hooks, described like [`crate::hooks::TABLE`]. Every one but
/// `dlopen` also replaces the child's environment and applies
/// `unguarded_exec`.
pub static EXEC_TABLE: &[HookInfo] = &[
    exec_info("execve", "execve", "path"),
    exec_info("execv", "execve", "path"),
    exec_info("execl", "execve", "path"),
    exec_info("execle", "execve", "path"),
    exec_info("execvp", "execvp", "PATH"),
    exec_info("execvpe", "execvp", "PATH"),
    exec_info("execlp", "execvp", "PATH"),
    exec_info("execveat", "execveat", "dirfd"),
    exec_info("fexecve", "fexecve", "fd"),
    exec_info("posix_spawn", "posix_spawn", "path"),
    exec_info("posix_spawnp", "posix_spawnp", "PATH"),
    exec_info("system", "system", "/bin/sh"),
    exec_info("popen", "popen", "/bin/sh"),
    HookInfo {
        symbol: "pclose",
        call: "pclose",
        checks: &[CheckInfo {
            access: "—",
            follow: "-",
            dirfd: "-",
            path: "(no check: closes a stream popen made here and waits for its child)",
        }],
    },
    exec_info("dlopen", "dlopen", "slash"),
];

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
