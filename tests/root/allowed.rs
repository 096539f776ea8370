//! Inside the root works, however the root is spelled.

use super::*;

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
