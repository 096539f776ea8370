//! Learning edges: `mkdir -p` of existing directories, an audit under another root.

use super::*;

#[test]
fn mkdir_of_an_existing_directory_fails_as_the_kernel_would() {
    // `mkdir -p /abs/dir` tries every ancestor; the kernel answers EEXIST
    // for those whatever the permissions, so they are no denial.
    let td = TempDir::new("mkdir-exists");
    let (home, ws, out) = (td.join("home"), td.join("ws"), td.join("out"));
    mkdir(&home);
    mkdir(&ws);
    mkdir(&out);
    let before = snapshot(td.path());
    let o = run(fsguard(&home, &["run", "--root", ".", "--", "mkdir", &s(&out)]).current_dir(&ws));
    assert_eq!(o.code(), Some(1), "{}", o.describe());
    assert!(o.stderr.contains("File exists"), "{}", o.describe());
    assert_no_blocked(&o);
    let new = out.join("new");
    let o = run(fsguard(&home, &["run", "--root", ".", "--", "mkdir", &s(&new)]).current_dir(&ws));
    assert_eq!(o.code(), Some(1), "{}", o.describe());
    assert!(o.stderr.contains("Permission denied"), "{}", o.describe());
    assert_traces(&o, &[Expect::new("mkdir", "write", new.clone(), "root")]);
    assert_eq!(snapshot_diff(&before, &snapshot(td.path())), None);
    // An allowed directory below existing ones: no line for the ancestors.
    let allow = format!("--allow-write={}", s(&out));
    let deep = out.join("a/b");
    let o = run(fsguard(
        &home,
        &["run", "--root", ".", &allow, "--", "mkdir", "-p", &s(&deep)],
    )
    .current_dir(&ws));
    assert_eq!(o.code(), Some(0), "{}", o.describe());
    assert_no_blocked(&o);
    assert!(deep.is_dir());
}

#[test]
fn suggest_warns_when_the_audit_had_another_root() {
    let td = TempDir::new("suggest-root");
    let (home, ws) = (td.join("home"), td.join("ws"));
    mkdir(&home);
    mkdir(&ws);
    write_file(&td.join("in.txt"), "x\n", 0o644);
    let log = td.join("audit.jsonl");
    audit(&home, &ws, &log, &[], &["cat", "../in.txt"]);
    // The parent as the workspace: the logged read lies inside it.
    let o = run(fsguard(&home, &["suggest", "--root", "..", &s(&log)]).current_dir(&ws));
    assert_eq!(o.code(), Some(0), "{}", o.describe());
    assert!(
        o.stderr.contains("1 logged access was inside") && o.stderr.contains("another --root"),
        "{}",
        o.describe()
    );
    let o = run(fsguard(&home, &["suggest", "--root", ".", &s(&log)]).current_dir(&ws));
    assert!(!o.stderr.contains("another --root"), "{}", o.describe());
    assert!(
        o.stdout.contains(&format!("\"{}\"", s(&td.join("in.txt")))),
        "{}",
        o.describe()
    );
}
