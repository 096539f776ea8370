//! `fsguard run` edges: the root's mtime, a Rust `current_dir`, Landlock and NSS.

use super::*;

#[test]
fn fsguard_run_leaves_the_root_directory_mtime_alone() {
    let s = Scratch::new("mtime");
    let ws = s.ws();
    // $TMPDIR inside the root (an agent harness that points it at the
    // workspace): the private TMPDIR must still be made elsewhere.
    let old = std::time::UNIX_EPOCH + std::time::Duration::from_secs(1_500_000_000);
    let f = std::fs::File::open(&ws).unwrap();
    f.set_modified(old).unwrap();
    let o = fsguard(
        &ws,
        "run",
        &[
            "--root",
            ".",
            "--",
            "sh",
            "-c",
            "test -d \"$TMPDIR\" && echo \"$TMPDIR\"",
        ],
        &[("TMPDIR", ws.to_str().unwrap())],
    );
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let tmp = stdout(&o);
    assert!(
        tmp.contains("/fsguard-") && !tmp.starts_with(ws.to_str().unwrap()),
        "{tmp}"
    );
    assert_eq!(
        std::fs::metadata(&ws).unwrap().modified().unwrap(),
        old,
        "TMPDIR {tmp}"
    );
    assert_eq!(std::fs::read_dir(&ws).unwrap().count(), 0);
}

/// Rust's `Command::current_dir` spawns with
/// `posix_spawn_file_actions_addchdir_np`: inside the root it works, and
/// the child runs where it was asked to.
const CURRENT_DIR: &str = r#"
use std::process::Command;
fn main() {
    let args: Vec<String> = std::env::args().collect();
    match Command::new("pwd").current_dir(&args[1]).output() {
        Ok(o) => print!("ok {}", String::from_utf8_lossy(&o.stdout)),
        Err(e) => println!("err {}", e.raw_os_error().unwrap_or(0)),
    }
}
"#;

#[test]
fn rust_command_current_dir_works_inside_the_root() {
    let s = Scratch::new("curdir");
    let ws = s.ws();
    std::fs::create_dir_all(ws.join("sub")).unwrap();
    std::fs::create_dir_all(s.path("outside")).unwrap();
    let src = s.path("curdir.rs");
    std::fs::write(&src, CURRENT_DIR).unwrap();
    let prog = s.path("curdir");
    let st = Command::new(std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into()))
        .args(["-O", "-o"])
        .arg(&prog)
        .arg(&src)
        .status()
        .unwrap();
    assert!(st.success());
    for (dir, want) in [
        (".", format!("ok {}\n", ws.display())),
        ("sub", format!("ok {}/sub\n", ws.display())),
        // A chdir outside is allowed, as chdir(2) is (reads there are not).
        (
            "../outside",
            format!("ok {}\n", s.path("outside").display()),
        ),
        ("missing", "err 2\n".to_string()),
    ] {
        let o = preloaded(
            prog.to_str().unwrap(),
            &[("FSGUARD_ROOT", ws.to_str().unwrap())],
        )
        .arg(dir)
        .current_dir(&ws)
        .output()
        .unwrap();
        assert_eq!(stdout(&o), want, "{dir}: {}", stderr(&o));
    }
}

fn has_landlock() -> bool {
    common::landlock_abi() > 0
}

#[test]
fn landlock_keeps_nss_user_lookups_working() {
    if !has_landlock() {
        eprintln!("skipped: this kernel has no Landlock");
        return;
    }
    let s = Scratch::new("nss");
    let ws = s.ws();
    let home = s.path("home");
    std::fs::create_dir_all(&home).unwrap();
    let script = "whoami; id -un; git var GIT_AUTHOR_IDENT";
    let env = [
        ("HOME", home.to_str().unwrap()),
        ("GIT_AUTHOR_DATE", "1500000000 +0000"),
        ("GIT_CONFIG_NOSYSTEM", "1"),
        // The name comes from the passwd entry (NSS); the email from here.
        ("EMAIL", "someone@example.com"),
    ];
    let mut bare = Command::new("sh");
    bare.args(["-c", script])
        .current_dir(&ws)
        .env_remove("LD_PRELOAD");
    for (k, v) in env {
        bare.env(k, v);
    }
    let want = bare.output().unwrap();
    assert!(want.status.success(), "{}", stderr(&want));
    let o = fsguard(
        &ws,
        "run",
        &[
            "--root",
            ".",
            "--landlock=required",
            "--",
            "sh",
            "-c",
            script,
        ],
        &env,
    );
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert_eq!(stdout(&o), stdout(&want), "{}", stderr(&o));
    assert!(!stderr(&o).contains("blocked"), "{}", stderr(&o));
}
