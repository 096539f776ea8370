//! POSIX named semaphores (`/dev/shm/sem.NAME`, made by glibc's sem_open
//! through internal calls): sem_open and sem_unlink are checked as
//! shm_open and shm_unlink are, with the `ipc` preset's namespace.

// LD_PRELOAD, /proc and /dev/shm: Linux only.
#![cfg(target_os = "linux")]

mod common;

use common::*;
use std::path::{Path, PathBuf};
use std::process::Command;

/// A tree with tests/c/sem.c's program in it (a program outside the root
/// may not be run); `None` where there is no /dev/shm.
fn tree(tag: &str) -> Option<(TempDir, PathBuf)> {
    if !Path::new("/dev/shm").is_dir() {
        eprintln!("NOTE: no /dev/shm here; nothing to test");
        return None;
    }
    let td = TempDir::new(tag);
    let ws = td.join("ws");
    mkdir(&ws);
    std::fs::copy(c_program("sem", &["-pthread"]), ws.join("sem")).unwrap();
    Some((td, ws))
}

/// `fsguard run --root WS [EXTRA...] -- ./sem MODE NAME`, run in WS.
fn guarded_sem(ws: &Path, extra: &[&str], mode: &str, name: &str) -> Command {
    let mut c = bare_cmd(cli());
    c.args(["run", "--root", ws.to_str().unwrap()]);
    c.args(extra);
    c.args(["--", "./sem", mode, name]);
    c.current_dir(ws);
    c
}

/// A config file that switches the `ipc` preset off.
fn ipc_off(td: &TempDir) -> PathBuf {
    let cfg = td.join("off.toml");
    write_file(&cfg, "ipc = false\n", 0o644);
    cfg
}

#[test]
fn a_semaphore_lives_in_the_trees_namespace() {
    let Some((_td, ws)) = tree("sem-ipc") else {
        return;
    };
    let name = format!("fsguard-test-sem-{}", std::process::id());
    assert_eq!(shm_entries(&name), Vec::<String>::new());
    let before = snapshot(&ws);
    let o = run(&mut guarded_sem(&ws, &[], "create", &name));
    assert_eq!(o.code(), Some(0), "{}", o.describe());
    assert_no_blocked(&o);
    for want in [
        "sem_post 0",
        "child exit 0",
        "waited for the child's post",
        "posted and waited",
        "sem_unlink 0 errno 0",
    ] {
        assert!(o.stdout.contains(want), "{want}:\n{}", o.describe());
    }
    // The program that opened it by name mapped the namespaced file.
    let mapped = o
        .stdout
        .lines()
        .find_map(|l| l.strip_prefix("mapped "))
        .unwrap_or_else(|| panic!("nothing mapped:\n{}", o.describe()));
    let inner = mapped
        .strip_prefix("/dev/shm/sem.fsguard.")
        .and_then(|r| r.strip_suffix(&format!(".{name}")))
        .unwrap_or_else(|| panic!("outside the namespace: {mapped}"));
    assert!(
        !inner.is_empty() && inner.chars().all(|c| c.is_ascii_alphanumeric()),
        "{mapped}"
    );
    assert_eq!(shm_entries(&name), Vec::<String>::new(), "unlinked");
    assert_eq!(snapshot_diff(&before, &snapshot(&ws)), None);
}

#[test]
fn without_ipc_a_new_semaphore_is_refused() {
    let Some((td, ws)) = tree("sem-off") else {
        return;
    };
    let cfg = ipc_off(&td);
    let name = format!("fsguard-test-sem-off-{}", std::process::id());
    let raw = format!("/dev/shm/sem.{name}");
    let o = run(&mut guarded_sem(
        &ws,
        &["--config", cfg.to_str().unwrap()],
        "create",
        &name,
    ));
    let after = shm_entries(&name);
    for n in &after {
        let _ = std::fs::remove_file(Path::new("/dev/shm").join(n));
    }
    assert_eq!(o.code(), Some(0), "{}", o.describe());
    assert!(
        o.stdout.contains("sem_open failed errno 13"),
        "{}",
        o.describe()
    );
    assert_traces(&o, &[Expect::new("sem_open", "write", &raw, "root")]);
    assert_eq!(after, Vec::<String>::new(), "{}", o.describe());
}

#[test]
fn another_processs_semaphore_stays_refused() {
    let Some((td, ws)) = tree("sem-other") else {
        return;
    };
    let cfg = ipc_off(&td);
    let name = format!("fsguard-test-sem-other-{}", std::process::id());
    let raw = Path::new("/dev/shm").join(format!("sem.{name}"));
    write_file(&raw, "theirs", 0o600);
    let p = raw.to_str().unwrap();
    // With the preset (the name is not in the tree's namespace) and without.
    let mut outs = Vec::new();
    for extra in [&[][..], &["--config", cfg.to_str().unwrap()][..]] {
        for mode in ["open", "unlink"] {
            outs.push((mode, run(&mut guarded_sem(&ws, extra, mode, &name))));
        }
    }
    let content = std::fs::read_to_string(&raw);
    let _ = std::fs::remove_file(&raw);
    for (mode, o) in &outs {
        assert_eq!(o.code(), Some(0), "{}", o.describe());
        let (call, want) = match *mode {
            "open" => ("sem_open", "sem_open failed errno 13"),
            _ => ("sem_unlink", "sem_unlink -1 errno 13"),
        };
        assert!(o.stdout.contains(want), "{}", o.describe());
        assert_traces(o, &[Expect::new(call, "write", p, "root")]);
    }
    assert_eq!(content.unwrap(), "theirs", "nothing changed on disk");
}

#[test]
fn python_multiprocessing_locks_and_pools_under_a_root() {
    let Some((_td, ws)) = tree("sem-py") else {
        return;
    };
    let code = r#"
import multiprocessing as m
l = m.Lock(); l.acquire(); l.release(); print("lock ok")
with m.Pool(2) as p:
    print("pool", p.map(abs, [-1, -2, -3]))
"#;
    let before = snapshot(&ws);
    let mut c = bare_cmd(cli());
    c.args(["run", "--root", ws.to_str().unwrap(), "--"]);
    c.arg(python()).args(["-c", code]).current_dir(&ws);
    let o = run(&mut c);
    assert_eq!(o.code(), Some(0), "{}", o.describe());
    assert_no_blocked(&o);
    assert!(o.stdout.contains("lock ok"), "{}", o.describe());
    assert!(o.stdout.contains("pool [1, 2, 3]"), "{}", o.describe());
    assert_eq!(snapshot_diff(&before, &snapshot(&ws)), None);
}
