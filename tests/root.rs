//! Root containment with `FSGUARD_ROOT=<T>/ws`: reads and writes outside the
//! root are refused (EACCES, one `blocked ... rule=root` line, nothing changed
//! on disk), including via `..`, relative paths, file and directory symlinks,
//! `..` after a symlink, dirfds, `/proc/self/cwd`, `/proc/self/fd/N`, a prefix
//! sibling (`ws2`), trailing slashes, and a dangling symlink under O_CREAT.
//! Reads and writes inside work, and Python imports its stdlib.
//!
//! Layout, in a fresh temp dir T (T itself is outside the root, as is /tmp):
//!   T/ws/in.txt "inside\n"        T/outside/secret.txt "secret\n"
//!   T/ws/top.txt "ws-top\n"       T/outside/dir/ (empty)
//!   T/ws/sub/deep.txt "deep\n"    T/ws2/file.txt "ws2\n"
//!   T/ws/ok/ (dir)                T/top.txt "outside-top\n"
//!   T/ws/link_out    -> ../outside/secret.txt
//!   T/ws/dirlink_out -> ../outside
//!   T/ws/dangling    -> ../outside/created.txt (does not exist)

// LD_PRELOAD, /proc and glibc symbol names: Linux only.
#![cfg(target_os = "linux")]

mod common;

use common::*;
use std::path::{Path, PathBuf};

struct Layout {
    td: TempDir,
}

impl Layout {
    fn new() -> Layout {
        let td = TempDir::new("root");
        let t = td.path();
        mkdir(&t.join("ws/sub"));
        mkdir(&t.join("ws/ok"));
        mkdir(&t.join("outside/dir"));
        mkdir(&t.join("ws2"));
        write_file(&t.join("ws/in.txt"), "inside\n", 0o644);
        write_file(&t.join("ws/top.txt"), "ws-top\n", 0o644);
        write_file(&t.join("ws/sub/deep.txt"), "deep\n", 0o644);
        write_file(&t.join("outside/secret.txt"), "secret\n", 0o644);
        write_file(&t.join("ws2/file.txt"), "ws2\n", 0o644);
        write_file(&t.join("top.txt"), "outside-top\n", 0o644);
        symlink("../outside/secret.txt", &t.join("ws/link_out"));
        symlink("../outside", &t.join("ws/dirlink_out"));
        symlink("../outside/created.txt", &t.join("ws/dangling"));
        Layout { td }
    }
    fn t(&self) -> &Path {
        self.td.path()
    }
    fn ws(&self) -> PathBuf {
        self.td.join("ws")
    }
}

fn calls_bin() -> PathBuf {
    c_program("calls", &["-O0", "-U_FORTIFY_SOURCE"])
}

fn args(case: &str, t: &Path) -> Vec<String> {
    case.replace("{T}", t.to_str().unwrap())
        .split_whitespace()
        .map(|a| {
            if a == "<empty>" {
                String::new()
            } else {
                a.to_string()
            }
        })
        .collect()
}

fn is_root_user() -> bool {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata("/proc/self")
        .map(|m| m.uid() == 0)
        .unwrap_or(false)
}

fn result(out: &Out) -> Option<(String, String)> {
    let l = out.stdout.lines().find(|l| l.starts_with("ret="))?;
    let (r, e) = l.split_once(' ')?;
    Some((
        r[4..].to_string(),
        e.trim_start_matches("errno=").to_string(),
    ))
}

/// (cwd relative to T, call args, expected `CALL ACCESS PATH [-> DEST]` with
/// paths relative to T). `{T}` in args is the temp dir.
const DENIED: &[(&str, &str, &str)] = &[
    // --- reads ---
    (
        "ws",
        "open {T}/outside/secret.txt O_RDONLY",
        "open read outside/secret.txt",
    ),
    (
        "ws",
        "open ../outside/secret.txt O_RDONLY",
        "open read outside/secret.txt",
    ),
    (
        "ws",
        "open sub/../../outside/secret.txt O_RDONLY",
        "open read outside/secret.txt",
    ),
    (
        "ws/sub",
        "open ../../outside/secret.txt O_RDONLY",
        "open read outside/secret.txt",
    ),
    (
        "ws",
        "open link_out O_RDONLY",
        "open read outside/secret.txt",
    ),
    (
        "ws",
        "open dirlink_out/secret.txt O_RDONLY",
        "open read outside/secret.txt",
    ),
    // `..` applies after the symlink: dirlink_out/.. is T, not ws
    (
        "ws",
        "open dirlink_out/../top.txt O_RDONLY",
        "open read top.txt",
    ),
    (
        "ws",
        "-d . openat FD ../outside/secret.txt O_RDONLY",
        "openat read outside/secret.txt",
    ),
    (
        "ws",
        "-d . openat64 FD ../outside/secret.txt O_RDONLY",
        "openat read outside/secret.txt",
    ),
    // a dirfd on a directory outside (obtained with a raw syscall)
    (
        "ws",
        "-D {T}/outside openat FD secret.txt O_RDONLY",
        "openat read outside/secret.txt",
    ),
    (
        "ws",
        "open /proc/self/cwd/../outside/secret.txt O_RDONLY",
        "open read outside/secret.txt",
    ),
    (
        "ws",
        "-d . open /proc/self/fd/{fd}/../outside/secret.txt O_RDONLY",
        "open read outside/secret.txt",
    ),
    (
        "ws",
        "open {T}/ws2/file.txt O_RDONLY",
        "open read ws2/file.txt",
    ),
    (
        "ws",
        "open ../ws2/file.txt O_RDONLY",
        "open read ws2/file.txt",
    ),
    ("ws", "open {T} O_RDONLY|O_DIRECTORY", "open read ."),
    ("ws", "opendir ../outside", "opendir read outside"),
    ("ws", "opendir dirlink_out", "opendir read outside"),
    ("ws", "opendir ..", "opendir read ."),
    (
        "ws",
        "fopen ../outside/secret.txt r",
        "fopen read outside/secret.txt",
    ),
    ("ws", "fopen64 link_out r", "fopen read outside/secret.txt"),
    (
        "ws",
        "freopen ../outside/secret.txt r",
        "freopen read outside/secret.txt",
    ),
    (
        "ws",
        "__open_2 ../outside/secret.txt O_RDONLY",
        "open read outside/secret.txt",
    ),
    (
        "ws",
        "__openat_2 CWD link_out O_RDONLY",
        "openat read outside/secret.txt",
    ),
    (
        "ws",
        "open64 dirlink_out/secret.txt O_RDONLY",
        "open read outside/secret.txt",
    ),
    // --- writes ---
    (
        "ws",
        "open ../outside/new.txt O_WRONLY|O_CREAT 0644",
        "open write outside/new.txt",
    ),
    (
        "ws",
        "open link_out O_WRONLY",
        "open write outside/secret.txt",
    ),
    (
        "ws",
        "open link_out O_RDONLY|O_TRUNC",
        "open write outside/secret.txt",
    ),
    // dangling symlink inside pointing out, with O_CREAT: must not create the target
    (
        "ws",
        "open dangling O_WRONLY|O_CREAT 0644",
        "open write outside/created.txt",
    ),
    (
        "ws",
        "creat dangling 0644",
        "creat write outside/created.txt",
    ),
    ("ws", "fopen dangling w", "fopen write outside/created.txt"),
    // trailing slashes
    ("ws", "mkdir ../outside/d/ 0755", "mkdir write outside/d"),
    ("ws", "mkdir {T}/outside/d/ 0755", "mkdir write outside/d"),
    ("ws", "mkdir dirlink_out/d/ 0755", "mkdir write outside/d"),
    (
        "ws",
        "rename ok ../outside/moved/",
        "rename write ws/ok -> outside/moved",
    ),
    (
        "ws",
        "rename ok/ ../outside/moved/",
        "rename write ws/ok -> outside/moved",
    ),
    (
        "ws",
        "rename ok {T}/ws2/moved",
        "rename write ws/ok -> ws2/moved",
    ),
    (
        "ws",
        "rename in.txt ../outside/in.txt",
        "rename write ws/in.txt -> outside/in.txt",
    ),
    (
        "ws",
        "rename ../outside/secret.txt stolen.txt",
        "rename write outside/secret.txt -> ws/stolen.txt",
    ),
    (
        "ws",
        "-d . renameat FD in.txt FD ../outside/x",
        "renameat write ws/in.txt -> outside/x",
    ),
    (
        "ws",
        "-d . renameat2 FD in.txt FD ../outside/x 0",
        "renameat2 write ws/in.txt -> outside/x",
    ),
    (
        "ws",
        "link ../outside/secret.txt hl",
        "link write outside/secret.txt -> ws/hl",
    ),
    (
        "ws",
        "link in.txt ../outside/hl",
        "link write ws/in.txt -> outside/hl",
    ),
    (
        "ws",
        "linkat CWD link_out CWD hl AT_SYMLINK_FOLLOW",
        "linkat write outside/secret.txt -> ws/hl",
    ),
    ("ws", "symlink x ../outside/sl", "symlink write outside/sl"),
    (
        "ws",
        "-d . symlinkat x FD ../outside/sl",
        "symlinkat write outside/sl",
    ),
    (
        "ws",
        "chmod link_out 0600",
        "chmod write outside/secret.txt",
    ),
    (
        "ws",
        "chmod /proc/self/cwd/../outside/secret.txt 0600",
        "chmod write outside/secret.txt",
    ),
    (
        "ws",
        "fchmodat CWD dirlink_out/secret.txt 0600 0",
        "fchmodat write outside/secret.txt",
    ),
    (
        "ws",
        "chown dirlink_out/secret.txt self self",
        "chown write outside/secret.txt",
    ),
    (
        "ws",
        "truncate dirlink_out/secret.txt 0",
        "truncate write outside/secret.txt",
    ),
    (
        "ws",
        "utimensat CWD link_out 0",
        "utimensat write outside/secret.txt",
    ),
    (
        "ws",
        "utime ../outside/secret.txt",
        "utime write outside/secret.txt",
    ),
    (
        "ws",
        "-d . mkdir /proc/self/fd/{fd}/../outside/newdir 0755",
        "mkdir write outside/newdir",
    ),
    (
        "ws",
        "-D {T}/outside mkdirat FD newdir 0755",
        "mkdirat write outside/newdir",
    ),
    ("ws", "creat {T}/ws2/new 0644", "creat write ws2/new"),
    (
        "ws",
        "unlink ../outside/secret.txt",
        "unlink write outside/secret.txt",
    ),
    (
        "ws",
        "-d . unlinkat FD ../outside/secret.txt 0",
        "unlinkat write outside/secret.txt",
    ),
    ("ws", "rmdir ../outside/dir", "rmdir write outside/dir"),
    ("ws", "remove ../outside/dir", "remove write outside/dir"),
    (
        "ws",
        "fopen ../outside/secret.txt a",
        "fopen write outside/secret.txt",
    ),
    // more magic links
    (
        "ws",
        "open /proc/self/root{T}/outside/secret.txt O_RDONLY",
        "open read outside/secret.txt",
    ),
    (
        "ws",
        "open /proc/thread-self/cwd/../outside/secret.txt O_RDONLY",
        "open read outside/secret.txt",
    ),
    (
        "ws",
        "-d . open /dev/fd/{fd}/../outside/secret.txt O_RDONLY",
        "open read outside/secret.txt",
    ),
    // an fd on a file outside (say, inherited): linking it in or changing it
    // through /proc/self/fd/N or AT_EMPTY_PATH is a write outside
    (
        "ws",
        "-f {T}/outside/secret.txt linkat CWD /proc/self/fd/{fd} CWD stolen AT_SYMLINK_FOLLOW",
        "linkat write outside/secret.txt -> ws/stolen",
    ),
    (
        "ws",
        "-f {T}/outside/secret.txt linkat FD <empty> CWD stolen AT_EMPTY_PATH",
        "linkat write outside/secret.txt -> ws/stolen",
    ),
    (
        "ws",
        "-f {T}/outside/secret.txt chmod /proc/self/fd/{fd} 0600",
        "chmod write outside/secret.txt",
    ),
    (
        "ws",
        "-f {T}/outside/secret.txt fchownat FD <empty> self self AT_EMPTY_PATH",
        "fchownat write outside/secret.txt",
    ),
    (
        "ws",
        "-f {T}/outside/secret.txt open /proc/self/fd/{fd} O_RDONLY",
        "open read outside/secret.txt",
    ),
    // O_TMPFILE creates (an unnamed file) in the directory
    (
        "ws",
        "open ../outside O_TMPFILE|O_WRONLY 0600",
        "open write outside",
    ),
];

#[test]
fn outside_root_is_denied() {
    let mut f = Failures::default();
    for (cwd, case, spec) in DENIED {
        let name = format!("(cwd {cwd}) {case}");
        f.case();
        // control: bare, the call succeeds
        let lb = Layout::new();
        let bare = run(bare_cmd(calls_bin())
            .args(args(case, lb.t()))
            .current_dir(lb.t().join(cwd)));
        match result(&bare) {
            Some((r, _)) if r != "-1" && r != "NULL" => {}
            // linkat(AT_EMPTY_PATH) needs CAP_DAC_READ_SEARCH
            _ if case.contains("AT_EMPTY_PATH") && case.contains("linkat") && !is_root_user() => {
                continue
            }
            _ => {
                f.fail(
                    &name,
                    format!(
                        "control: fails even without the library\n{}",
                        bare.describe()
                    ),
                );
                continue;
            }
        }
        let l = Layout::new();
        let before = snapshot(l.t());
        let ws = l.ws();
        let out = run(
            guarded_cmd(calls_bin(), &[("FSGUARD_ROOT", ws.to_str().unwrap())])
                .args(args(case, l.t()))
                .current_dir(l.t().join(cwd)),
        );
        let mut errs = Vec::new();
        match result(&out) {
            Some((r, e)) if (r == "-1" || r == "NULL") && e.starts_with("13(") => {}
            Some((r, e)) => errs.push(format!(
                "expected ret=-1/NULL errno=13, got ret={r} errno={e}"
            )),
            None => errs.push("no result line".into()),
        }
        let (m, dest) = match spec.split_once(" -> ") {
            Some((m, d)) => (m, Some(d)),
            None => (*spec, None),
        };
        let w: Vec<&str> = m.split_whitespace().collect();
        let path = if w[2] == "." {
            l.t().to_path_buf()
        } else {
            l.t().join(w[2])
        };
        let mut e = Expect::new(w[0], w[1], path, "root");
        if let Some(d) = dest {
            e = e.dest(l.t().join(d));
        }
        if let Err(x) = check_traces(&out.blocked(), &[vec![e]]) {
            errs.push(format!("trace: {x}"));
        }
        if let Some(d) = snapshot_diff(&before, &snapshot(l.t())) {
            errs.push(format!("tree changed:\n{d}"));
        }
        if !errs.is_empty() {
            f.fail(&name, format!("{}\n{}", errs.join("\n"), out.describe()));
        }
    }
    f.finish("outside-root denial");
}

/// (cwd relative to T, call args) that must succeed with no blocked line.
const ALLOWED: &[(&str, &str)] = &[
    ("ws", "open in.txt O_RDONLY"),
    ("ws", "open sub/../in.txt O_RDONLY"),
    ("ws", "open {T}/ws/in.txt O_RDONLY"),
    ("ws", "open {T}/ws/../ws/in.txt O_RDONLY"),
    ("ws/sub", "open ../in.txt O_RDONLY"),
    ("ws", "open /proc/self/cwd/in.txt O_RDONLY"),
    ("ws", "-d sub open /proc/self/fd/{fd}/../in.txt O_RDONLY"),
    ("ws", "-d . openat FD sub/deep.txt O_RDONLY"),
    ("ws", "-d sub openat FD ../in.txt O_RDONLY"),
    ("ws", "opendir ."),
    ("ws", "opendir sub"),
    ("ws", "opendir {T}/ws"),
    ("ws", "fopen in.txt r"),
    ("ws", "open /dev/null O_WRONLY"),
    ("ws", "open /dev/null O_RDONLY"),
    ("ws", "open new.txt O_WRONLY|O_CREAT 0644"),
    ("ws", "open in.txt O_RDWR|O_APPEND"),
    ("ws", "fopen sub/new.txt w"),
    ("ws", "mkdir d/ 0755"),
    ("ws", "mkdir sub/d 0755"),
    ("ws", "rename ok moved/"),
    ("ws", "rename in.txt sub/in2.txt"),
    // calls acting on the symlink itself stay inside
    ("ws", "unlink link_out"),
    ("ws", "rename link_out renamed_link"),
    ("ws", "lchown link_out self self"),
    ("ws", "unlink dirlink_out"),
    ("ws", "link in.txt hl"),
    ("ws", "symlink in.txt sl"),
    ("ws", "chmod in.txt 0600"),
    ("ws", "truncate in.txt 1"),
    ("ws", "utime in.txt"),
    ("ws", "rmdir ok"),
    // the `system` preset: installed software is readable
    ("ws", "opendir /usr"),
    ("ws", "open /bin/sh O_RDONLY"),
    ("ws", "open . O_TMPFILE|O_WRONLY 0600"),
    // `..` after a symlink that points out can lead back in
    ("ws", "open dirlink_out/../ws/in.txt O_RDONLY"),
    ("ws", "chmod dirlink_out/../ws/in.txt 0600"),
    // replacing / linking / touching symlinks themselves (they are inside)
    ("ws", "rename in.txt link_out"),
    ("ws", "link link_out hl"),
    ("ws", "utimensat CWD dangling AT_SYMLINK_NOFOLLOW"),
    ("ws", "lchown dangling self self"),
    ("ws", "-d . open /dev/fd/{fd}/in.txt O_RDONLY"),
];

#[test]
fn inside_root_is_allowed() {
    let mut f = Failures::default();
    for (cwd, case) in ALLOWED {
        let name = format!("(cwd {cwd}) {case}");
        f.case();
        let l = Layout::new();
        let ws = l.ws();
        let out = run(
            guarded_cmd(calls_bin(), &[("FSGUARD_ROOT", ws.to_str().unwrap())])
                .args(args(case, l.t()))
                .current_dir(l.t().join(cwd)),
        );
        let ok = matches!(result(&out), Some((r, e)) if r != "-1" && r != "NULL" && e.starts_with("7777("));
        if !ok || !out.blocked().is_empty() {
            f.fail(
                &name,
                format!(
                    "expected success, errno untouched, no blocked line\n{}",
                    out.describe()
                ),
            );
        }
    }
    f.finish("inside-root");
}

/// A relative FSGUARD_ROOT is resolved against the cwd at load.
#[test]
fn relative_root() {
    let l = Layout::new();
    let before = snapshot(l.t());
    let ok = run(guarded_cmd(calls_bin(), &[("FSGUARD_ROOT", "ws")])
        .args(["open", "ws/in.txt", "O_RDONLY"])
        .current_dir(l.t()));
    assert!(
        matches!(result(&ok), Some((r, _)) if r == "fd") && ok.blocked().is_empty(),
        "read inside a relative root should work\n{}",
        ok.describe()
    );
    let out = run(guarded_cmd(calls_bin(), &[("FSGUARD_ROOT", "ws")])
        .args(["open", "outside/new.txt", "O_WRONLY|O_CREAT", "0644"])
        .current_dir(l.t()));
    assert!(
        matches!(result(&out), Some((r, e)) if r == "-1" && e.starts_with("13(")),
        "write outside a relative root should be EACCES\n{}",
        out.describe()
    );
    assert_traces(
        &out,
        &[Expect::new(
            "open",
            "write",
            l.t().join("outside/new.txt"),
            "root",
        )],
    );
    assert_eq!(snapshot_diff(&before, &snapshot(l.t())), None);
}

/// The root given through a symlink, or with a trailing slash.
#[test]
fn root_spelled_differently() {
    let l = Layout::new();
    symlink("ws", &l.t().join("wslink"));
    let before = snapshot(l.t());
    let spellings = [
        l.t().join("wslink").to_string_lossy().into_owned(),
        format!("{}/", l.ws().display()),
        format!("{}/./sub/..", l.ws().display()),
    ];
    for root in &spellings {
        for (case, ok) in [
            ("open in.txt O_RDONLY", true),
            ("open {T}/wslink/in.txt O_RDONLY", true),
            ("open ../outside/secret.txt O_RDONLY", false),
            ("open ../wslink O_RDONLY", true),
        ] {
            let out = run(guarded_cmd(calls_bin(), &[("FSGUARD_ROOT", root.as_str())])
                .args(args(case, l.t()))
                .current_dir(l.ws()));
            let r = result(&out);
            if ok {
                assert!(
                    matches!(&r, Some((x, _)) if x == "fd") && out.blocked().is_empty(),
                    "FSGUARD_ROOT={root}: {case} should be allowed\n{}",
                    out.describe()
                );
            } else {
                assert!(
                    matches!(&r, Some((x, e)) if x == "-1" && e.starts_with("13(")),
                    "FSGUARD_ROOT={root}: {case} should be denied\n{}",
                    out.describe()
                );
                assert_traces(
                    &out,
                    &[Expect::new(
                        "open",
                        "read",
                        l.t().join("outside/secret.txt"),
                        "root",
                    )],
                );
            }
        }
    }
    assert_eq!(snapshot_diff(&before, &snapshot(l.t())), None);
}

fn py_stdlib(python: &Path, l: &Layout) -> Out {
    let ws = l.ws();
    run(
        guarded_cmd(python, &[("FSGUARD_ROOT", ws.to_str().unwrap())])
            .args(["-c", "import json, email, sqlite3; print('ok')"])
            .current_dir(&ws),
    )
}

#[test]
fn python_imports_stdlib_under_root_via_path() {
    let l = Layout::new();
    let before = snapshot(l.t());
    // `python3` as found on PATH (possibly a pyenv shim script)
    let out = py_stdlib(Path::new("python3"), &l);
    assert!(
        out.status.success() && out.stdout == "ok\n",
        "python3 -c 'import json, email, sqlite3' failed under the root\n{}",
        out.describe()
    );
    assert_no_blocked(&out);
    assert_eq!(snapshot_diff(&before, &snapshot(l.t())), None);
}

#[test]
fn python_imports_stdlib_under_root_real_interpreter() {
    let l = Layout::new();
    let out = py_stdlib(python(), &l);
    assert!(
        out.status.success() && out.stdout == "ok\n",
        "python -c 'import json, email, sqlite3' failed under the root\n{}",
        out.describe()
    );
    assert_no_blocked(&out);
}

/// Python code under the root: reads/writes inside work, outside refused.
#[test]
fn python_under_root() {
    let l = Layout::new();
    let ws = l.ws();
    let outside = l.t().join("outside");
    let code = r#"
import os, sys
out = sys.argv[1]
def t(name, fn):
    try:
        fn()
        print(name, "ok")
    except OSError as e:
        print(name, e.errno)
t("read_in", lambda: open("in.txt").read())
t("listdir_in", lambda: os.listdir("."))
t("write_in", lambda: open("new.txt", "w").write("x"))
t("read_out", lambda: open(os.path.join(out, "secret.txt")).read())
t("read_dotdot", lambda: open("../outside/secret.txt").read())
t("read_link", lambda: open("link_out").read())
t("write_out", lambda: open(os.path.join(out, "new.txt"), "w"))
t("listdir_out", lambda: os.listdir(out))
"#;
    let before_out = snapshot(&outside);
    let o = run(
        guarded_cmd(python(), &[("FSGUARD_ROOT", ws.to_str().unwrap())])
            .args(["-c", code])
            .arg(&outside)
            .current_dir(&ws),
    );
    let want = "read_in ok\nlistdir_in ok\nwrite_in ok\nread_out 13\nread_dotdot 13\nread_link 13\nwrite_out 13\nlistdir_out 13\n";
    assert_eq!(o.stdout, want, "\n{}", o.describe());
    let sec = outside.join("secret.txt");
    assert_traces(
        &o,
        &[
            Expect::new("open", "read", &sec, "root"),
            Expect::new("open", "read", &sec, "root"),
            Expect::new("open", "read", &sec, "root"),
            Expect::new("open", "write", outside.join("new.txt"), "root"),
            Expect::new("open|opendir|openat", "read", &outside, "root"),
        ],
    );
    assert_eq!(std::fs::read_to_string(ws.join("new.txt")).unwrap(), "x");
    assert_eq!(snapshot_diff(&before_out, &snapshot(&outside)), None);
}
