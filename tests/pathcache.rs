//! fd-based calls must be judged by, and act on, the object the fd names
//! now, whatever the library remembered about an earlier object with the
//! same inode number or about the directory's earlier place.
//!
//! The driver is tests/c/pathcache.c. Its "raw" steps (system call
//! instructions the library does not see) stand for another process
//! changing the tree; everything else is libc under the library.
//!
//! Policy for the judged cases: `root` = the test directory, with
//! `[write] deny` on its `B`; `A` is allowed. Reads are allowed everywhere
//! in the root, so files in `B` can be opened read-only.

#![cfg(target_os = "linux")]

mod common;

use common::*;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

fn driver() -> PathBuf {
    c_program("pathcache", &["-O0"])
}

/// `A` (writable) and `B` (write-denied) in a fresh directory, and the
/// policy file saying so.
fn layout(tag: &str) -> (TempDir, PathBuf) {
    let td = TempDir::new(tag);
    mkdir(&td.join("A"));
    mkdir(&td.join("B"));
    let policy = td.join("policy.toml");
    std::fs::write(
        &policy,
        format!(
            "root = {:?}\n[write]\ndeny = [{:?}]\n",
            td.path().to_str().unwrap(),
            td.join("B").to_str().unwrap()
        ),
    )
    .unwrap();
    (td, policy)
}

fn guarded(td: &TempDir, policy: &Path, args: &[&str]) -> Out {
    run(
        guarded_cmd(driver(), &[("FSGUARD_CONFIG", policy.to_str().unwrap())])
            .current_dir(td.path())
            .args(args),
    )
}

/// The `STEP ret errno` line of a step.
fn step<'a>(o: &'a Out, name: &str) -> &'a str {
    let prefix = format!("{name} ");
    o.stdout
        .lines()
        .find(|l| l.starts_with(&prefix))
        .map(|l| &l[prefix.len()..])
        .unwrap_or_else(|| panic!("no `{name}` line\n{}", o.describe()))
}

fn ok(r: &str) -> bool {
    r.ends_with(" 0") && !r.starts_with('-')
}

/// Whether the driver got the old inode number again; when the file
/// system never reuses one (tmpfs), the case cannot be built.
fn reused(o: &Out) -> bool {
    assert!(o.status.success(), "{}", o.describe());
    if o.stdout.lines().any(|l| l == "noreuse") {
        eprintln!(
            "NOTE: {} does not reuse inode numbers; case not run",
            std::env::temp_dir().display()
        );
        return false;
    }
    true
}

/// Exactly one write refused after the first step, of `path`, by the
/// deny rule on `B` (the first step may have been refused too).
fn assert_one_blocked(o: &Out, call: &str, path: &Path) {
    let hits: Vec<_> = o
        .blocked()
        .into_iter()
        .filter(|t| t.field("path") == path.to_str())
        .collect();
    assert_eq!(hits.len(), 1, "{}", o.describe());
    assert_eq!(hits[0].call, call, "{}", o.describe());
    assert_eq!(hits[0].access, "write", "{}", o.describe());
    assert!(
        hits[0]
            .field("rule")
            .unwrap_or("")
            .starts_with("write.deny"),
        "{}",
        o.describe()
    );
}

fn mode(p: &Path) -> u32 {
    std::fs::metadata(p)
        .unwrap_or_else(|e| panic!("{}: {e}", p.display()))
        .permissions()
        .mode()
        & 0o7777
}

#[test]
fn the_python_rmtree_reproducer_exits_as_it_does_bare() {
    let td = TempDir::new("rmtree");
    let script = td.join("repro.py");
    std::fs::write(
        &script,
        r#"import os, shutil, tempfile
base = tempfile.mkdtemp(); d1, d2 = base + '/d1', base + '/d2'
os.mkdir(d1); os.mkdir(d2); open(d1 + '/t', 'w').close(); open(d2 + '/x', 'w').close()
os.symlink(d2, d1 + '/foo'); shutil.rmtree(d1); shutil.rmtree(d2)
for i in range(3):
    d = tempfile.mkdtemp(dir=base); os.mkdir(d + '/sub'); open(d + '/sub/x', 'w').close()
    shutil.rmtree(d)
print("done")
"#,
    )
    .unwrap();
    for (name, guard) in [("bare", false), ("guarded", true)] {
        let tmp = td.join(format!("tmp-{name}"));
        mkdir(&tmp);
        let mut cmd = if guard {
            guarded_cmd(python(), &[("FSGUARD_ROOT", "/")])
        } else {
            bare_cmd(python())
        };
        let o = run(cmd.env("TMPDIR", &tmp).arg(&script));
        assert_eq!(o.code(), Some(0), "{name} run failed\n{}", o.describe());
        assert_eq!(o.stdout.trim(), "done", "{}", o.describe());
        assert_no_blocked(&o);
    }
}

/// fchmod on a file whose inode number an earlier, allowed file had (the
/// library saw that file's path in an fchmod): the new file is in the
/// denied `B`, so the fchmod is refused and its mode stays.
#[test]
fn fchmod_on_a_reused_inode_is_judged_by_the_new_files_path() {
    let (td, policy) = layout("reuse-fchmod-deny");
    write_file(&td.join("A/old"), "old\n", 0o644);
    let o = guarded(&td, &policy, &["fchmod-reuse", "A", "B"]);
    if !reused(&o) {
        return;
    }
    assert_eq!(step(&o, "old-fchmod"), "0 0", "{}", o.describe());
    assert_eq!(
        step(&o, "new-fchmod"),
        "-1 13",
        "fchmod of B/new allowed (judged as the old A/old?)\n{}",
        o.describe()
    );
    assert_eq!(mode(&td.join("B/new")), 0o644, "{}", o.describe());
    assert_one_blocked(&o, "fchmod", &td.join("B/new"));
}

/// The converse: the earlier file was in the denied `B` (its fchmod
/// refused), the new one with its inode number is in `A`: allowed.
#[test]
fn fchmod_on_a_reused_inode_of_a_denied_file_is_allowed_for_the_new_one() {
    let (td, policy) = layout("reuse-fchmod-allow");
    write_file(&td.join("B/old"), "old\n", 0o644);
    let o = guarded(&td, &policy, &["fchmod-reuse", "B", "A"]);
    if !reused(&o) {
        return;
    }
    assert_eq!(step(&o, "old-fchmod"), "-1 13", "{}", o.describe());
    assert_eq!(
        step(&o, "new-fchmod"),
        "0 0",
        "fchmod of A/new refused (judged as the old B/old?)\n{}",
        o.describe()
    );
    assert_eq!(mode(&td.join("A/new")), 0o600, "{}", o.describe());
}

/// A directory opened plainly (O_RDONLY, no O_DIRECTORY, as Python's
/// rmtree does) whose inode number an earlier directory had, and a new
/// directory at the earlier one's path: openat(fd, "x", O_CREAT) creates
/// x in the directory the fd names, not at the old path.
#[test]
fn openat_on_a_reused_directory_inode_acts_in_the_directory_the_fd_names() {
    let (td, policy) = layout("reuse-dirfd");
    mkdir(&td.join("A/dd"));
    let o = guarded(&td, &policy, &["dirfd-reuse", "A", "A"]);
    if !reused(&o) {
        return;
    }
    let k: String = o
        .stdout
        .lines()
        .find_map(|l| l.strip_prefix("reuse "))
        .unwrap()
        .to_string();
    assert!(ok(step(&o, "old-openat")), "{}", o.describe());
    assert!(ok(step(&o, "new-openat")), "{}", o.describe());
    assert!(
        td.join(format!("A/e{k}/x")).exists(),
        "x not created in A/e{k}, the directory the fd names\n{}",
        o.describe()
    );
    assert!(
        !td.join("A/dd/x").exists(),
        "x created in A/dd, the directory at the old path\n{}",
        o.describe()
    );
}

/// Old directory allowed, new one (same inode number) in the denied `B`:
/// the create through its fd is refused, and nothing appears anywhere.
#[test]
fn openat_on_a_reused_directory_inode_in_a_denied_area_is_refused() {
    let (td, policy) = layout("reuse-dirfd-deny");
    mkdir(&td.join("A/dd"));
    let o = guarded(&td, &policy, &["dirfd-reuse", "A", "B"]);
    if !reused(&o) {
        return;
    }
    let k: String = o
        .stdout
        .lines()
        .find_map(|l| l.strip_prefix("reuse "))
        .unwrap()
        .to_string();
    assert!(ok(step(&o, "old-openat")), "{}", o.describe());
    assert_eq!(
        step(&o, "new-openat"),
        "-1 13",
        "a create in B/e{k} (denied) was allowed (judged as the old A/dd?)\n{}",
        o.describe()
    );
    assert!(!td.join(format!("B/e{k}/x")).exists(), "{}", o.describe());
    assert!(!td.join("A/dd/x").exists(), "{}", o.describe());
}

/// Old directory denied (its create refused), new one in `A`: allowed, in
/// the new directory.
#[test]
fn openat_on_a_reused_directory_inode_of_a_denied_directory_is_allowed() {
    let (td, policy) = layout("reuse-dirfd-allow");
    mkdir(&td.join("B/dd"));
    let o = guarded(&td, &policy, &["dirfd-reuse", "B", "A"]);
    if !reused(&o) {
        return;
    }
    let k: String = o
        .stdout
        .lines()
        .find_map(|l| l.strip_prefix("reuse "))
        .unwrap()
        .to_string();
    assert_eq!(step(&o, "old-openat"), "-1 13", "{}", o.describe());
    assert!(
        ok(step(&o, "new-openat")),
        "a create in A/e{k} was refused (judged as the old B/dd?)\n{}",
        o.describe()
    );
    assert!(td.join(format!("A/e{k}/x")).exists(), "{}", o.describe());
}

/// A guarded child renames the directory the parent holds an fd to (and
/// makes a new one at the old path): the parent's next create through the
/// fd lands in the renamed directory.
#[test]
fn a_directory_renamed_by_a_child_is_still_the_one_its_fd_names() {
    let (td, policy) = layout("renamed-child");
    mkdir(&td.join("A/D"));
    let o = guarded(&td, &policy, &["renamed-child", "A/D", "A/E"]);
    assert!(o.status.success(), "{}", o.describe());
    assert!(ok(step(&o, "before-openat")), "{}", o.describe());
    assert_eq!(step(&o, "child"), "0 0", "{}", o.describe());
    assert!(ok(step(&o, "after-openat")), "{}", o.describe());
    assert!(
        !td.join("A/D/f1").exists(),
        "created at the directory's old path (A/D/f1), not in A/E\n{}",
        o.describe()
    );
    assert!(td.join("A/E/f1").exists(), "{}", o.describe());
    assert_no_blocked(&o);
}

/// Moved within the allowed area by a process the library does not see:
/// the create lands in the moved directory.
#[test]
fn a_directory_renamed_by_an_unguarded_process_is_still_the_one_its_fd_names() {
    let (td, policy) = layout("renamed-raw");
    mkdir(&td.join("A/D"));
    let o = guarded(&td, &policy, &["renamed-raw", "A/D", "A/E"]);
    assert!(o.status.success(), "{}", o.describe());
    assert!(ok(step(&o, "after-openat")), "{}", o.describe());
    assert!(
        !td.join("A/D/f1").exists(),
        "created at the directory's old path (A/D/f1), not in A/E\n{}",
        o.describe()
    );
    assert!(td.join("A/E/f1").exists(), "{}", o.describe());
}

/// Moved from the allowed area into the denied one: the next write through
/// the fd is refused, and nothing is created anywhere.
#[test]
fn a_directory_moved_into_a_denied_area_is_judged_where_it_is_now() {
    let (td, policy) = layout("moved-deny");
    mkdir(&td.join("A/D"));
    let o = guarded(&td, &policy, &["renamed-raw", "A/D", "B/D"]);
    assert!(o.status.success(), "{}", o.describe());
    assert!(ok(step(&o, "before-openat")), "{}", o.describe());
    assert_eq!(
        step(&o, "after-openat"),
        "-1 13",
        "a create in B/D (moved into the denied B) was not refused\n{}",
        o.describe()
    );
    assert!(!td.join("B/D/f1").exists(), "{}", o.describe());
    assert!(!td.join("A/D/f1").exists(), "{}", o.describe());
    assert_one_blocked(&o, "openat", &td.join("B/D/f1"));
}

/// Moved from the denied area into the allowed one: allowed, in the moved
/// directory.
#[test]
fn a_directory_moved_out_of_a_denied_area_is_judged_where_it_is_now() {
    let (td, policy) = layout("moved-allow");
    mkdir(&td.join("B/D"));
    let o = guarded(&td, &policy, &["renamed-raw", "B/D", "A/D"]);
    assert!(o.status.success(), "{}", o.describe());
    assert_eq!(step(&o, "before-openat"), "-1 13", "{}", o.describe());
    assert!(
        ok(step(&o, "after-openat")),
        "a create in A/D (moved out of the denied B) was refused\n{}",
        o.describe()
    );
    assert!(td.join("A/D/f1").exists(), "{}", o.describe());
    assert!(!td.join("B/D/f1").exists(), "{}", o.describe());
}

/// The directory's parent moved into the denied area and a symlink put in
/// its old place: the fd's old path still reaches the directory, but only
/// through that symlink. The write through the fd is judged where the
/// directory is, in `B`, and refused.
#[test]
fn a_directory_whose_old_path_now_crosses_a_symlink_is_judged_where_it_is() {
    let (td, policy) = layout("symlinked-parent");
    mkdir(&td.join("A/P/D"));
    let o = guarded(&td, &policy, &["parent-symlinked-raw", "A/P", "B/P"]);
    assert!(o.status.success(), "{}", o.describe());
    assert!(ok(step(&o, "before-openat")), "{}", o.describe());
    assert_eq!(
        step(&o, "after-openat"),
        "-1 13",
        "a create in B/P/D, reached by A/P/D through the symlink A/P, was not refused\n{}",
        o.describe()
    );
    assert!(!td.join("B/P/D/f1").exists(), "{}", o.describe());
    assert_one_blocked(&o, "openat", &td.join("B/P/D/f1"));
}
