//! A real crate that opens directories above the root only to compare
//! identities (issue 31 item 1): walkdir 2.5 with `follow_links(true)`
//! opens each symlinked directory it meets, and each directory it walks,
//! with a plain read-only `open` (same-file's handle) and `fstat`s it. A
//! symlink in the root to the root's parent makes it open that directory:
//! refused, the walk reported an error there; now it gets a descriptor
//! that names the directory, and the walk is what it is bare.
//!
//! The walk is this test binary itself, run again as the child
//! (`WALKDIR_FOLLOW_DIR` names the directory), bare and under the library.

// LD_PRELOAD and /proc: Linux only.
#![cfg(target_os = "linux")]

mod common;

use common::*;
use std::path::Path;

/// The child: walks `WALKDIR_FOLLOW_DIR` with `follow_links(true)` to depth
/// 1 (the directories it meets are opened, and listed only below that)
/// and prints each entry (relative, with its depth) or error.
#[test]
fn walk_child() {
    let Some(dir) = std::env::var_os("WALKDIR_FOLLOW_DIR") else {
        return;
    };
    let dir = Path::new(&dir);
    for e in walkdir::WalkDir::new(dir)
        .follow_links(true)
        .max_depth(1)
        .sort_by_file_name()
    {
        match e {
            Ok(e) => println!(
                "walk {} {} {}",
                e.depth(),
                e.path().strip_prefix(dir).unwrap().display(),
                if e.file_type().is_dir() {
                    "dir"
                } else {
                    "file"
                }
            ),
            Err(e) => println!("walk error {e}"),
        }
    }
}

fn walk(dir: &Path, guard: Option<&Path>) -> Out {
    let exe = std::env::current_exe().unwrap();
    let mut cmd = match guard {
        Some(root) => guarded_cmd(&exe, &[("FSGUARD_ROOT", root.to_str().unwrap())]),
        None => bare_cmd(&exe),
    };
    cmd.args([
        "--exact",
        "walk_child",
        "--nocapture",
        "--test-threads=1",
        "-q",
    ])
    .env("WALKDIR_FOLLOW_DIR", dir)
    .current_dir(dir);
    run(&mut cmd)
}

fn walked(out: &Out) -> Vec<&str> {
    out.stdout
        .lines()
        .filter(|l| l.starts_with("walk "))
        .collect()
}

#[test]
fn walkdir_follow_links_opens_the_roots_parent() {
    let td = TempDir::new("walkdir");
    let ws = td.join("ws");
    mkdir(&ws.join("a"));
    write_file(&ws.join("f.txt"), "x\n", 0o644);
    write_file(&td.join("above.txt"), "above\n", 0o644);
    // Up to the root's parent (a directory above the root), and a loop
    // back to the root.
    symlink("..", &ws.join("up"));
    symlink(".", &ws.join("loop"));
    let bare = walk(&ws, None);
    let guarded = walk(&ws, Some(&ws));
    assert!(bare.status.success(), "{}", bare.describe());
    assert!(
        walked(&bare).len() == 5
            && walked(&bare).contains(&"walk 1 up dir")
            && walked(&bare).iter().any(|l| l.contains("loop found")),
        "{}",
        bare.describe()
    );
    assert!(guarded.status.success(), "{}", guarded.describe());
    assert_eq!(
        walked(&guarded),
        walked(&bare),
        "the walk differs under the root\n{}",
        guarded.describe()
    );
    // The only refusal is the listing of the parent, which walkdir opens
    // and never reads (max_depth): no plain open of it is refused.
    let t = td.path().to_str().unwrap();
    for b in guarded.blocked() {
        assert!(
            b.call == "opendir" && b.field("path") == Some(t),
            "unexpected refusal {}\n{}",
            b.raw,
            guarded.describe()
        );
    }
    // Nothing above the root was read: its file is still refused.
    assert!(!guarded.stdout.contains("above.txt"));
}
