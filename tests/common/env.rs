//! The environment a child runs in: bare (nothing inherited from the test
//! runner) or guarded (the library preloaded), and what the kernel offers.

use super::artifacts::lib;
use std::process::Command;

/// Remove every FSGUARD_* variable and LD_PRELOAD the test runner may have
/// inherited, so a run is "bare" unless the test sets them.
pub fn clean_env(cmd: &mut Command) -> &mut Command {
    for (k, _) in std::env::vars_os() {
        if k.to_string_lossy().starts_with("FSGUARD_") {
            cmd.env_remove(&k);
        }
    }
    cmd.env_remove("LD_PRELOAD");
    cmd.env_remove("DYLD_INSERT_LIBRARIES");
    // Keep Python from writing bytecode caches (would be extra, unrelated
    // denied writes under a read-only policy).
    cmd.env("PYTHONDONTWRITEBYTECODE", "1");
    cmd
}

/// A command with no guard at all.
pub fn bare_cmd<S: AsRef<std::ffi::OsStr>>(prog: S) -> Command {
    let mut c = Command::new(prog);
    clean_env(&mut c);
    c
}

/// A command with libfsguard.so preloaded and the given FSGUARD_* variables.
pub fn guarded_cmd<S: AsRef<std::ffi::OsStr>>(prog: S, vars: &[(&str, &str)]) -> Command {
    let mut c = bare_cmd(prog);
    c.env("LD_PRELOAD", lib());
    for (k, v) in vars {
        c.env(k, v);
    }
    c
}

/// The kernel's Landlock ABI version; 0 without Landlock.
pub fn landlock_abi() -> i64 {
    // SAFETY: landlock_create_ruleset(NULL, 0, VERSION) only returns a number.
    let v = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<libc::c_void>(),
            0usize,
            1u32,
        )
    };
    v.max(0)
}
