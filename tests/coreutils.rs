//! Coreutils and the shell under `LD_PRELOAD=libfsguard.so FSGUARD_READONLY=1`:
//! each write fails (non-zero exit, "Permission denied"), the expected
//! `blocked` trace line(s) appear, and the tree is unchanged. Without the
//! library the same command succeeds and changes the tree (control).

// LD_PRELOAD, /proc and glibc symbol names: Linux only.
#![cfg(target_os = "linux")]

mod common;

use common::*;
use std::path::Path;

/// Fixture: f "hello\n", g "other\n", emptydir/, tree/a "a\n"
fn fixture(d: &Path) {
    mkdir(d);
    write_file(&d.join("f"), "hello\n", 0o644);
    write_file(&d.join("g"), "other\n", 0o644);
    mkdir(&d.join("emptydir"));
    mkdir(&d.join("tree"));
    write_file(&d.join("tree/a"), "a\n", 0o644);
}

/// (argv, expected trace sequences) — `CALLS ACCESS PATH [-> DEST]`, lines
/// separated by ` ; `, alternatives by ` || `, paths relative to the fixture.
const CASES: &[(&[&str], &str)] = &[
    // touch: open(O_WRONLY|O_CREAT) fails, then touch still tries utimensat
    (&["touch", "f"], "open|openat write f ; utimensat write f"),
    (
        &["touch", "new"],
        "open|openat write new ; utimensat write new || open|openat write new",
    ),
    (&["cp", "f", "copy"], "open|openat write copy"),
    (&["cp", "f", "g"], "open|openat write g"),
    (&["cp", "-r", "tree", "tree2"], "mkdir|mkdirat write tree2"),
    (
        &["mv", "f", "moved"],
        "rename|renameat|renameat2 write f -> moved",
    ),
    // coreutils >= 9.1 first tries renameat2(f, emptydir, RENAME_NOREPLACE)
    // (which the kernel would fail with EEXIST), then moves into the directory
    (
        &["mv", "f", "emptydir"],
        "rename|renameat|renameat2 write f -> emptydir/f || \
         renameat2 write f -> emptydir ; rename|renameat|renameat2 write f -> emptydir/f",
    ),
    (&["rm", "f"], "unlink|unlinkat write f"),
    (&["rm", "-f", "f"], "unlink|unlinkat write f"),
    (&["rmdir", "emptydir"], "rmdir|unlinkat write emptydir"),
    (&["mkdir", "newdir"], "mkdir|mkdirat write newdir"),
    (&["mkdir", "-p", "a/b"], "mkdir|mkdirat write a"),
    (&["ln", "f", "hard"], "link|linkat write f -> hard"),
    (&["ln", "-s", "f", "sl"], "symlink|symlinkat write sl"),
    (&["chmod", "600", "f"], "chmod|fchmodat write f"),
    (&["truncate", "-s", "0", "f"], "open|openat write f"),
    (&["sh", "-c", "echo hi > f"], "open|openat write f"),
    (&["sh", "-c", "echo hi > new"], "open|openat write new"),
    (&["sh", "-c", "echo hi >> f"], "open|openat write f"),
];

fn parse(spec: &str, d: &Path) -> Vec<Vec<Expect>> {
    spec.split(" || ")
        .map(|seq| {
            seq.split(" ; ")
                .map(|l| {
                    let (m, dest) = match l.split_once(" -> ") {
                        Some((m, x)) => (m, Some(x)),
                        None => (l, None),
                    };
                    let w: Vec<&str> = m.split_whitespace().collect();
                    let mut e = Expect::new(w[0], w[1], d.join(w[2]), "readonly");
                    if let Some(x) = dest {
                        e = e.dest(d.join(x.trim()));
                    }
                    e
                })
                .collect()
        })
        .collect()
}

#[test]
fn coreutils_writes_are_denied_under_readonly() {
    let mut f = Failures::default();
    for (argv, spec) in CASES {
        let name = argv.join(" ");
        f.case();
        // control
        let tb = TempDir::new("cubare");
        let db = tb.join("d");
        fixture(&db);
        let b0 = snapshot(&db);
        let bare = run(bare_cmd(argv[0]).args(&argv[1..]).current_dir(&db));
        if !bare.status.success() || snapshot_diff(&b0, &snapshot(&db)).is_none() {
            f.fail(&name, format!("control: without the library the command should succeed and change the tree\n{}", bare.describe()));
            continue;
        }
        let td = TempDir::new("cu");
        let d = td.join("d");
        fixture(&d);
        let before = snapshot(&d);
        let out = run(guarded_cmd(argv[0], &[("FSGUARD_READONLY", "1")])
            .args(&argv[1..])
            .current_dir(&d));
        let mut errs = Vec::new();
        if out.status.success() {
            errs.push("exit status 0, expected failure".to_string());
        }
        if !out.stderr.contains("Permission denied") {
            errs.push("stderr lacks \"Permission denied\"".to_string());
        }
        if let Err(e) = check_traces(&out.blocked(), &parse(spec, &d)) {
            errs.push(format!("trace: {e}"));
        }
        if let Some(diff) = snapshot_diff(&before, &snapshot(&d)) {
            errs.push(format!("tree changed:\n{diff}"));
        }
        if !errs.is_empty() {
            f.fail(&name, format!("{}\n{}", errs.join("\n"), out.describe()));
        }
    }
    f.finish("coreutils");
}

#[test]
fn coreutils_reads_work_under_readonly() {
    let td = TempDir::new("curead");
    let d = td.join("d");
    fixture(&d);
    let before = snapshot(&d);
    let cases: &[(&[&str], &str)] = &[
        (&["cat", "f"], "hello\n"),
        (&["ls", "tree"], "a\n"),
        (&["wc", "-c", "g"], "6 g\n"),
        (&["sh", "-c", "read x < f; echo \"$x\""], "hello\n"),
        (&["cp", "f", "/dev/null"], ""),
        (&["sh", "-c", "echo hi > /dev/null"], ""),
    ];
    let mut fl = Failures::default();
    for (argv, want) in cases {
        fl.case();
        let out = run(guarded_cmd(argv[0], &[("FSGUARD_READONLY", "1")])
            .args(&argv[1..])
            .current_dir(&d));
        if !out.status.success() || out.stdout != *want || !out.blocked().is_empty() {
            fl.fail(
                &argv.join(" "),
                format!(
                    "expected success with stdout {want:?} and no blocked line\n{}",
                    out.describe()
                ),
            );
        }
    }
    if let Some(diff) = snapshot_diff(&before, &snapshot(&d)) {
        fl.fail("tree", format!("reads changed the tree:\n{diff}"));
    }
    fl.finish("coreutils read");
}
