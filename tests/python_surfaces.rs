//! Every write surface of Python's os, io, pathlib and shutil (the list of the
//! hermetic seed document) under `LD_PRELOAD=libfsguard.so FSGUARD_READONLY=1`:
//! each must raise PermissionError with errno 13, produce exactly the expected
//! `[fsguard] blocked ...` trace line(s), and leave the tree unchanged on disk.
//! Each surface runs in its own fresh fixture and its own Python process, so
//! trace lines are attributed to one surface. Without the library the same
//! surface must succeed and change the tree (so the checks can fail).
//! Reads must keep working under the read-only policy.

// LD_PRELOAD, /proc and glibc symbol names: Linux only.
#![cfg(target_os = "linux")]

mod common;

use common::*;
use std::path::{Path, PathBuf};

fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/surfaces.py")
}

/// Expected blocked trace lines per surface.
/// Syntax: one line is `CALLS ACCESS PATH [-> DEST]` (CALLS: alternatives
/// joined by `|`; PATH/DEST relative to the fixture dir); ` ; ` separates the
/// lines of a sequence, ` || ` separates acceptable alternative sequences.
/// The rule is always `readonly`.
const EXPECT: &[(&str, &str)] = &[
    // builtins.open / io.open -> open(2) family via libc open64 => "open"
    ("builtins_open_w", "open write f.txt"),
    ("builtins_open_wb", "open write f.txt"),
    ("builtins_open_a", "open write f.txt"),
    ("builtins_open_a_plus", "open write f.txt"),
    ("builtins_open_x", "open write new.txt"),
    ("builtins_open_r_plus", "open write f.txt"),
    ("builtins_open_w_plus_new", "open write new.txt"),
    ("io_open_w", "open write f.txt"),
    ("io_open_a", "open write f.txt"),
    // os.open / posix.open
    ("os_open_wronly", "open write f.txt"),
    ("os_open_rdwr", "open write f.txt"),
    ("os_open_wronly_append", "open write f.txt"),
    ("os_open_rdonly_append", "open write f.txt"),
    ("os_open_rdonly_creat", "open write new.txt"),
    ("os_open_rdonly_trunc", "open write f.txt"),
    ("os_open_wronly_creat_trunc", "open write new.txt"),
    ("os_open_creat_excl", "open write new.txt"),
    ("os_open_trunc_existing", "open write f.txt"),
    ("posix_open_wronly", "open write f.txt"),
    // os mutators
    ("os_remove", "unlink write f.txt"),
    ("os_unlink", "unlink write f.txt"),
    ("os_rename", "rename write f.txt -> renamed.txt"),
    ("os_replace", "rename write f.txt -> g.txt"),
    ("os_rmdir", "rmdir write emptydir"),
    ("os_mkdir", "mkdir write newdir"),
    // makedirs creates the topmost missing ancestor first
    ("os_makedirs", "mkdir write a"),
    ("os_chmod", "chmod write f.txt"),
    ("os_chown", "chown write f.txt"),
    ("os_link", "link|linkat write f.txt -> hard.txt"),
    ("os_symlink", "symlink write sym.txt"),
    ("os_truncate", "truncate write f.txt"),
    ("os_utime", "utimensat write f.txt"),
    // pathlib.Path
    ("path_open_w", "open write f.txt"),
    ("path_write_text", "open write f.txt"),
    ("path_write_bytes", "open write f.txt"),
    ("path_chmod", "chmod write f.txt"),
    ("path_hardlink_to", "link|linkat write f.txt -> hard.txt"),
    ("path_mkdir", "mkdir write newdir"),
    // mkdir("p/q") first: the kernel fails it (ENOENT, parent missing) so the
    // guard may pass it through, then mkdir("p") is denied; or the guard
    // denies mkdir("p/q") itself under the read-only rule.
    ("path_mkdir_parents", "mkdir write p || mkdir write p/q"),
    ("path_rename", "rename write f.txt -> renamed.txt"),
    ("path_replace", "rename write f.txt -> g.txt"),
    ("path_rmdir", "rmdir write emptydir"),
    ("path_symlink_to", "symlink write sym.txt"),
    // Path.touch() tries os.utime first, ignores its OSError, then os.open
    (
        "path_touch_existing",
        "utimensat write f.txt ; open write f.txt",
    ),
    (
        "path_touch_new",
        "utimensat write new.txt ; open write new.txt || open write new.txt",
    ),
    ("path_unlink", "unlink write f.txt"),
    // shutil
    // rmtree (fd-based) unlinks the entries with unlinkat(dirfd, name)
    ("shutil_rmtree", "unlinkat write tree/a.txt"),
    // move: os.rename fails, so it falls back to copy2 (open dst for writing)
    (
        "shutil_move",
        "rename write f.txt -> moved.txt ; open write moved.txt",
    ),
    ("shutil_copy", "open write copy.txt"),
    ("shutil_copy2", "open write copy.txt"),
    ("shutil_copyfile", "open write copy.txt"),
    ("shutil_copytree", "mkdir write tree_copy"),
    ("shutil_chown", "chown write f.txt"),
    ("shutil_make_archive_tar", "open write arch.tar"),
    // zipfile tries mode "w+b", and on OSError retries with "wb"
    (
        "shutil_make_archive_zip",
        "open write arch.zip ; open write arch.zip",
    ),
    ("shutil_unpack_archive_tar", "open write extract/member.txt"),
    ("shutil_unpack_archive_zip", "open write extract/member.txt"),
];

/// Surfaces that legitimately change nothing on disk even without the guard.
const NO_CHANGE_WHEN_BARE: &[&str] = &["os_open_rdonly_append"];

fn parse_expect(spec: &str, dir: &Path) -> Vec<Vec<Expect>> {
    spec.split(" || ")
        .map(|seq| {
            seq.split(" ; ")
                .map(|line| {
                    let (main, dest) = match line.split_once(" -> ") {
                        Some((m, d)) => (m, Some(d)),
                        None => (line, None),
                    };
                    let w: Vec<&str> = main.split_whitespace().collect();
                    assert_eq!(w.len(), 3, "bad expectation {line:?}");
                    let mut e = Expect::new(w[0], w[1], dir.join(w[2]), "readonly");
                    if let Some(d) = dest {
                        e = e.dest(dir.join(d.trim()));
                    }
                    e
                })
                .collect()
        })
        .collect()
}

struct PyResult {
    outcome: String,
    errno: String,
    line: String,
}

fn result_of(out: &Out, name: &str) -> Result<PyResult, String> {
    let line = out
        .stdout
        .lines()
        .find(|l| l.starts_with("RESULT "))
        .ok_or_else(|| format!("no RESULT line from surface {name}"))?;
    let mut outcome = None;
    let mut errno = None;
    for tok in line.split(' ') {
        if let Some(v) = tok.strip_prefix("outcome=") {
            outcome = Some(v.to_string());
        }
        if let Some(v) = tok.strip_prefix("errno=") {
            errno = Some(v.to_string());
        }
    }
    Ok(PyResult {
        outcome: outcome.ok_or("RESULT without outcome")?,
        errno: errno.ok_or("RESULT without errno")?,
        line: line.to_string(),
    })
}

/// Create a fresh fixture in `dir` (without the guard).
fn setup(dir: &Path) {
    mkdir(dir);
    let o = run(bare_cmd(python()).arg(script()).arg("setup").arg(dir));
    assert!(
        o.status.success(),
        "fixture setup failed:\n{}",
        o.describe()
    );
}

fn run_surface(name: &str, dir: &Path, guarded: bool) -> Out {
    let mut cmd = if guarded {
        guarded_cmd(python(), &[("FSGUARD_READONLY", "1")])
    } else {
        bare_cmd(python())
    };
    cmd.arg(script())
        .arg("run")
        .arg(name)
        .arg(dir)
        .current_dir(dir);
    run(&mut cmd)
}

fn list_surfaces() -> (Vec<String>, Vec<String>) {
    let o = run(bare_cmd(python()).arg(script()).arg("list"));
    assert!(o.status.success(), "{}", o.describe());
    let mut w = Vec::new();
    let mut r = Vec::new();
    for l in o.stdout.lines() {
        match l.split_once(' ') {
            Some(("write", n)) => w.push(n.to_string()),
            Some(("read", n)) => r.push(n.to_string()),
            _ => panic!("odd list line {l:?}"),
        }
    }
    (w, r)
}

/// One write surface under FSGUARD_READONLY=1.
fn check_denied(name: &str) -> Result<(), String> {
    let spec = EXPECT
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, s)| *s)
        .ok_or_else(|| format!("no expectation for surface {name}"))?;
    let td = TempDir::new("py");
    let dir = td.join("d");
    setup(&dir);
    let before = snapshot(&dir);
    let out = run_surface(name, &dir, true);
    let mut errs = Vec::new();
    match result_of(&out, name) {
        Ok(r) => {
            if r.outcome != "PermissionError" || r.errno != "13" {
                errs.push(format!(
                    "expected PermissionError errno=13, got outcome={} errno={} ({})",
                    r.outcome, r.errno, r.line
                ));
            }
        }
        Err(e) => errs.push(e),
    }
    if let Err(e) = check_traces(&out.blocked(), &parse_expect(spec, &dir)) {
        errs.push(format!("trace lines: {e}"));
    }
    if let Some(d) = snapshot_diff(&before, &snapshot(&dir)) {
        errs.push(format!("tree changed on disk:\n{d}"));
    }
    if errs.is_empty() {
        Ok(())
    } else {
        Err(format!("{}\n{}", errs.join("\n"), out.describe()))
    }
}

fn check_group(prefixes: &[&str], what: &str) {
    let (writes, _) = list_surfaces();
    let mut f = Failures::default();
    for name in writes
        .iter()
        .filter(|n| prefixes.iter().any(|p| n.starts_with(p)))
    {
        f.case();
        if let Err(e) = check_denied(name) {
            f.fail(name, e);
        }
    }
    f.finish(what);
}

#[test]
fn expectation_table_covers_every_surface() {
    let (writes, _) = list_surfaces();
    for w in &writes {
        assert!(
            EXPECT.iter().any(|(n, _)| n == w),
            "surface {w} of surfaces.py has no expectation in python_surfaces.rs"
        );
    }
    for (n, _) in EXPECT {
        assert!(
            writes.iter().any(|w| w == n),
            "expectation {n} has no surface in surfaces.py"
        );
    }
    // Every function of the hermetic seed's table is exercised.
    let src = std::fs::read_to_string(script()).unwrap();
    for needle in [
        "open(\"f.txt\", \"w\")",
        "io.open(",
        "os.open(",
        "posix.open(",
        "os.remove(",
        "os.rename(",
        "os.replace(",
        "os.unlink(",
        "os.rmdir(",
        "os.mkdir(",
        "os.makedirs(",
        "os.chmod(",
        "os.chown(",
        "os.link(",
        "os.symlink(",
        "os.truncate(",
        "os.utime(",
        ").chmod(",
        ").hardlink_to(",
        ").mkdir(",
        ").rename(",
        ").replace(",
        ").rmdir(",
        ").symlink_to(",
        ").touch(",
        ").unlink(",
        ").write_text(",
        ").open(\"w\")",
        "shutil.rmtree(",
        "shutil.move(",
        "shutil.copy(",
        "shutil.copy2(",
        "shutil.copyfile(",
        "shutil.copytree(",
        "shutil.chown(",
        "shutil.make_archive(",
        "shutil.unpack_archive(",
    ] {
        assert!(
            src.contains(needle),
            "surfaces.py does not exercise {needle}"
        );
    }
}

#[test]
fn readonly_denies_builtins_and_io_open() {
    check_group(&["builtins_", "io_"], "builtins.open/io.open");
}

#[test]
fn readonly_denies_os_open() {
    check_group(&["os_open_", "posix_open"], "os.open/posix.open");
}

#[test]
fn readonly_denies_os_mutators() {
    let (writes, _) = list_surfaces();
    let mut f = Failures::default();
    for name in writes
        .iter()
        .filter(|n| n.starts_with("os_") && !n.starts_with("os_open_"))
    {
        f.case();
        if let Err(e) = check_denied(name) {
            f.fail(name, e);
        }
    }
    f.finish("os mutator");
}

#[test]
fn readonly_denies_pathlib() {
    check_group(&["path_"], "pathlib");
}

#[test]
fn readonly_denies_shutil() {
    check_group(&["shutil_"], "shutil");
}

/// Control: without the library every write surface succeeds and changes the
/// tree, so the denials above are not vacuous.
#[test]
fn write_surfaces_succeed_and_change_tree_without_guard() {
    let (writes, _) = list_surfaces();
    let mut f = Failures::default();
    for name in &writes {
        f.case();
        let td = TempDir::new("pybare");
        let dir = td.join("d");
        setup(&dir);
        let before = snapshot(&dir);
        let out = run_surface(name, &dir, false);
        match result_of(&out, name) {
            Ok(r) if r.outcome == "ok" => {}
            Ok(r) => f.fail(
                name,
                format!("bare run failed: {}\n{}", r.line, out.describe()),
            ),
            Err(e) => f.fail(name, format!("{e}\n{}", out.describe())),
        }
        let changed = snapshot_diff(&before, &snapshot(&dir)).is_some();
        if changed == NO_CHANGE_WHEN_BARE.contains(&name.as_str()) {
            f.fail(
                name,
                format!(
                    "bare run {} the tree, which the test does not expect",
                    if changed { "changed" } else { "did not change" }
                ),
            );
        }
    }
    f.finish("bare control");
}

/// Reads keep working under FSGUARD_READONLY=1, with no blocked line and no
/// change on disk.
#[test]
fn readonly_allows_reads() {
    let (_, reads) = list_surfaces();
    let mut f = Failures::default();
    for name in &reads {
        f.case();
        let td = TempDir::new("pyread");
        let dir = td.join("d");
        setup(&dir);
        let before = snapshot(&dir);
        let out = run_surface(name, &dir, true);
        let mut errs = Vec::new();
        match result_of(&out, name) {
            Ok(r) if r.outcome == "ok" => {}
            Ok(r) => errs.push(format!("read failed under the guard: {}", r.line)),
            Err(e) => errs.push(e),
        }
        if !out.status.success() {
            errs.push("python exited non-zero".into());
        }
        let b = out.blocked();
        if !b.is_empty() {
            errs.push(format!("{} blocked line(s) for a read", b.len()));
        }
        if let Some(d) = snapshot_diff(&before, &snapshot(&dir)) {
            errs.push(format!("tree changed:\n{d}"));
        }
        if !errs.is_empty() {
            f.fail(name, format!("{}\n{}", errs.join("\n"), out.describe()));
        }
    }
    f.finish("read");
}

/// The README's first example, verbatim in shape: open('/tmp/x','w') style,
/// but on a path in a fresh temp dir.
#[test]
fn readme_example_open_w_is_denied() {
    let td = TempDir::new("pyreadme");
    let target = td.join("x");
    let before = snapshot(td.path());
    let code = format!("open({:?},'w')", target.to_str().unwrap());
    let out = run(guarded_cmd(python(), &[("FSGUARD_READONLY", "1")]).args(["-c", &code]));
    assert_eq!(
        out.code(),
        Some(1),
        "python should die of the exception\n{}",
        out.describe()
    );
    let want_msg = format!(
        "PermissionError: [Errno 13] Permission denied: {:?}",
        target.to_str().unwrap()
    )
    .replace('"', "'");
    assert!(
        out.stderr.contains(&want_msg),
        "stderr lacks {want_msg:?}\n{}",
        out.describe()
    );
    assert_traces(&out, &[Expect::new("open", "write", &target, "readonly")]);
    assert!(snapshot_diff(&before, &snapshot(td.path())).is_none());
    assert!(!target.exists());
}
