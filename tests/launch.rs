//! `fsguard run`'s start-up gate shares one CPU with the command while it
//! traces it (cli/src/gate.rs): the command must get its own CPU set back
//! before any of its code runs.

#![cfg(target_os = "linux")]

mod common;

use common::*;

/// The CPU set a process started by `cmd` reports from its own code.
fn seen(cmd: &mut std::process::Command) -> String {
    let o = run(cmd);
    assert_eq!(o.code(), Some(0), "\n{}", o.describe());
    o.stdout.trim().to_string()
}

#[test]
fn the_command_keeps_its_cpu_set() {
    let td = TempDir::new("launchcpu");
    let probe = "import os; print(sorted(os.sched_getaffinity(0)))";
    let py = python().to_str().unwrap().to_string();
    let bare = seen(bare_cmd(&py).args(["-c", probe]));
    let guarded = seen(
        bare_cmd(cli())
            .args(["run", "--root"])
            .arg(td.path())
            .args(["--", &py, "-c", probe])
            .current_dir(td.path()),
    );
    assert_eq!(guarded, bare);
    // A set the caller chose (here: the last CPU alone) passes through too.
    // SAFETY: a zeroed cpu_set_t filled by the kernel.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: a valid buffer of the size given.
    let got = unsafe { libc::sched_getaffinity(0, std::mem::size_of_val(&set), &mut set) };
    assert_eq!(got, 0);
    let cpus: Vec<usize> = (0..libc::CPU_SETSIZE as usize)
        // SAFETY: reads our own set.
        .filter(|&c| unsafe { libc::CPU_ISSET(c, &set) })
        .collect();
    if cpus.len() < 2 {
        return;
    }
    let last = cpus[cpus.len() - 1];
    let o = run(bare_cmd("taskset")
        .args(["-c", &last.to_string()])
        .arg(cli())
        .args(["run", "--root"])
        .arg(td.path())
        .args(["--", &py, "-c", probe])
        .current_dir(td.path()));
    assert_eq!(o.code(), Some(0), "\n{}", o.describe());
    assert_eq!(o.stdout.trim(), format!("[{last}]"), "\n{}", o.describe());
}
