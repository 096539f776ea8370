//! Unprivileged mounts (issue 27 item 3): in a user namespace of its own
//! any user may mount, so a bind mount puts a directory outside the box
//! under a path inside it, and every check is made against the wrong name.
//! Namespaces (`unshare`, `clone`, `clone3`, `setns`), mounts (`mount`,
//! the new mount API, `pivot_root`, `chroot`, …) and the calls that
//! administer the whole system (`acct`, …) are refused, through libc and
//! `syscall()`, bare and under `fsguard run` (with and without Landlock),
//! each with its trace line; nothing outside the box changes.

#![cfg(target_os = "linux")]

mod common;

use std::io::{BufRead, BufReader};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use common::*;

fn mounts() -> PathBuf {
    c_program("mounts", &[])
}

/// How the program runs.
#[derive(Clone, Copy, Debug, PartialEq)]
enum How {
    /// `LD_PRELOAD` with `FSGUARD_ROOT`.
    Bare,
    /// `fsguard run --root`, Landlock on where the kernel has it.
    Run,
    /// `fsguard run --no-landlock --root`: the library alone.
    RunNoLandlock,
}

const HOWS: [How; 3] = [How::Bare, How::Run, How::RunNoLandlock];

/// `prog args…` guarded the way `how` says, confined to `ws`; in a mount
/// namespace of its own (`unshare -m`, run bare) when `private`, for the
/// calls that would change the test machine's mounts as root if they got
/// through.
fn guarded(how: How, private: bool, ws: &Path, prog: &Path, args: &[&str]) -> Command {
    let ws = ws.to_str().unwrap();
    let mut c = bare_cmd(if private { "unshare" } else { "env" });
    if private {
        c.args(["-m", "--propagation", "private", "env"]);
    }
    match how {
        How::Bare => {
            c.arg(format!("LD_PRELOAD={}", lib().display()))
                .arg(format!("FSGUARD_ROOT={ws}"));
        }
        How::Run | How::RunNoLandlock => {
            c.arg(cli()).arg("run");
            if how == How::RunNoLandlock {
                c.arg("--no-landlock");
            }
            c.args(["--root", ws, "--"]);
        }
    }
    c.arg(prog).args(args);
    c
}

/// The box `ws` (the root) with an empty `ws/mnt`, and `out` beside it
/// holding `secret`; all writable by uid 65534.
fn layout(tag: &str) -> (TempDir, PathBuf, PathBuf, PathBuf) {
    let td = TempDir::new(tag);
    let ws = td.join("ws");
    let out = td.join("out");
    let mnt = ws.join("mnt");
    for d in [&ws, &out, &mnt] {
        mkdir(d);
    }
    write_file(&out.join("secret"), "SECRET-OUT\n", 0o644);
    for d in [td.path(), &ws, &out, &mnt] {
        std::fs::set_permissions(d, std::fs::Permissions::from_mode(0o777)).unwrap();
    }
    (td, ws, out, mnt)
}

fn has_line(o: &Out, want: &str) -> bool {
    o.stdout.lines().any(|l| l == want)
}

/// Why `o` is not as `lines` and `traces` say, or nothing changed in
/// `out`, if it is not.
fn check(o: &Out, lines: &[&str], traces: &[Expect], out: &Path, before: &Snapshot) -> Vec<String> {
    let mut why = Vec::new();
    for l in lines {
        if !has_line(o, l) {
            why.push(format!("expected the line `{l}`"));
        }
    }
    if o.stdout.contains("SECRET-OUT") {
        why.push("the secret was read through the mount".into());
    }
    if let Err(e) = check_traces(&o.blocked(), &[traces.to_vec()]) {
        why.push(e);
    }
    if let Some(d) = snapshot_diff(before, &snapshot(out)) {
        why.push(format!("outside the box changed:\n{d}"));
    }
    why
}

/// Whether this kernel lets uid 65534 make a user namespace (else the
/// door cannot be shown open, only closed).
fn userns_allowed(out: &Path, mnt: &Path) -> bool {
    let o = run(bare_cmd(mounts()).args(["-u", "userns"]).arg(out).arg(mnt));
    let open = has_line(&o, "unshare 0 0");
    if open {
        // The door is real: the mount reads and creates outside.
        assert!(
            has_line(&o, "read 3 0 SECRET-OUT") && out.join("planted").exists(),
            "{}",
            o.describe()
        );
        std::fs::remove_file(out.join("planted")).unwrap();
    } else {
        eprintln!(
            "note: no user namespaces for uid 65534 here\n{}",
            o.describe()
        );
    }
    open
}

#[test]
fn item3_unprivileged_mounts_in_new_namespaces_are_refused() {
    let (_td, ws, out, mnt) = layout("userns");
    userns_allowed(&out, &mnt);
    let (o_s, m_s) = (out.to_str().unwrap(), mnt.to_str().unwrap());
    let mut f = Failures::default();
    for (mode, call) in [
        ("userns", "unshare"),
        ("userns_sys", "unshare"),
        ("clone", "clone"),
        ("clone_sys", "clone"),
        ("clone3_sys", "clone3"),
    ] {
        for how in HOWS {
            f.case();
            let before = snapshot(&out);
            let o = run(&mut guarded(
                how,
                false,
                &ws,
                &mounts(),
                &["-u", mode, o_s, m_s],
            ));
            let step = format!("{call} -1 13");
            let why = check(
                &o,
                &[&step, "mount -1 13", "read -1 2"],
                &[
                    Expect::new(call, "write", "CLONE_NEWUSER|CLONE_NEWNS", "namespace"),
                    Expect::new("mount", "write", &out, "mount").dest(&mnt),
                ],
                &out,
                &before,
            );
            if !why.is_empty() {
                f.fail(
                    &format!("{mode} {how:?}"),
                    format!("{}\n{}", why.join("\n"), o.describe()),
                );
            }
            let _ = std::fs::remove_file(mnt.join("planted"));
        }
    }
    f.finish("new namespace");
}

#[test]
fn item3_unprivileged_mounts_setns_into_another_namespace_is_refused() {
    let (_td, ws, out, mnt) = layout("setns");
    if !userns_allowed(&out, &mnt) {
        return;
    }
    // An unguarded process of the same user, in namespaces of its own
    // where `out` is mounted on `ws/mnt`.
    let script = format!(
        "mount --bind {} {} && echo ready && exec sleep 120",
        out.display(),
        mnt.display()
    );
    let mut helper = spawn_retrying(
        bare_cmd("setpriv")
            .args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"])
            .args(["unshare", "-Urm", "sh", "-c", &script])
            .stdin(Stdio::null())
            .stdout(Stdio::piped()),
    )
    .expect("start the helper");
    let mut line = String::new();
    BufReader::new(helper.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    assert_eq!(line.trim(), "ready");
    let pid = helper.id().to_string();
    let ns = |n: &str| {
        std::fs::read_link(format!("/proc/{pid}/ns/{n}"))
            .unwrap()
            .display()
            .to_string()
    };
    let (user, mntns) = (ns("user"), ns("mnt"));
    let (o_s, m_s) = (out.to_str().unwrap(), mnt.to_str().unwrap());
    // The door is real: bare, joining its namespaces reads the secret.
    let o = run(bare_cmd(mounts()).args(["-u", "setns", &pid, o_s, m_s]));
    assert!(has_line(&o, "read 3 0 SECRET-OUT"), "{}", o.describe());
    std::fs::remove_file(out.join("planted")).unwrap();
    let mut f = Failures::default();
    for mode in ["setns", "setns_sys"] {
        for how in HOWS {
            f.case();
            let before = snapshot(&out);
            let o = run(&mut guarded(
                how,
                false,
                &ws,
                &mounts(),
                &["-u", mode, &pid, o_s, m_s],
            ));
            // Under Landlock the kernel may refuse first: a process outside
            // the domain does not even let its namespaces be opened.
            let why = if how == How::Run && has_line(&o, "user-open 13") {
                check(&o, &["mnt-open 13", "read -1 2"], &[], &out, &before)
            } else {
                check(
                    &o,
                    &["user -1 13", "mnt -1 13", "read -1 2"],
                    &[
                        Expect::new("setns", "write", &user, "namespace"),
                        Expect::new("setns", "write", &mntns, "namespace"),
                    ],
                    &out,
                    &before,
                )
            };
            if !why.is_empty() {
                f.fail(
                    &format!("{mode} {how:?}"),
                    format!("{}\n{}", why.join("\n"), o.describe()),
                );
            }
            let _ = std::fs::remove_file(mnt.join("planted"));
        }
    }
    let _ = helper.kill();
    let _ = helper.wait();
    f.finish("setns");
}

/// The tests that need root (they run as root in CI).
fn root() -> bool {
    // SAFETY: no arguments.
    let r = unsafe { libc::geteuid() } == 0;
    if !r {
        eprintln!("skipped: needs root");
    }
    r
}

#[test]
fn item3_unprivileged_mounts_root_mounts_are_refused() {
    if !root() {
        return;
    }
    let (_td, ws, out, mnt) = layout("rootmount");
    let (o_s, m_s) = (out.to_str().unwrap(), mnt.to_str().unwrap());
    let mut f = Failures::default();
    for (mode, lines, traces) in [
        (
            "mount_sys",
            vec!["mount -1 13", "read -1 2"],
            vec![Expect::new("mount", "write", &out, "mount").dest(&mnt)],
        ),
        (
            "tree",
            vec!["open_tree -1 13", "move_mount -1 13", "read -1 2"],
            vec![
                Expect::new("open_tree", "write", &out, "mount"),
                Expect::new("move_mount", "write", &out, "mount").dest(&mnt),
            ],
        ),
        (
            "tree_sys",
            vec!["open_tree -1 13", "move_mount -1 13", "read -1 2"],
            vec![
                Expect::new("open_tree", "write", &out, "mount"),
                Expect::new("move_mount", "write", &out, "mount").dest(&mnt),
            ],
        ),
    ] {
        // The door is real: bare, the mount is made (in a namespace of
        // the test's own).
        let o = run(&mut guarded_none(&mounts(), &[mode, o_s, m_s]));
        assert!(
            o.stdout.contains(" 0 SECRET-OUT"),
            "{mode} bare\n{}",
            o.describe()
        );
        for how in HOWS {
            f.case();
            let before = snapshot(&out);
            let o = run(&mut guarded(how, true, &ws, &mounts(), &[mode, o_s, m_s]));
            let why = check(&o, &lines, &traces, &out, &before);
            if !why.is_empty() {
                f.fail(
                    &format!("{mode} {how:?}"),
                    format!("{}\n{}", why.join("\n"), o.describe()),
                );
            }
            let _ = std::fs::remove_file(mnt.join("planted"));
        }
    }
    f.finish("root mount");
}

/// `prog args…` unguarded, in a mount namespace of its own.
fn guarded_none(prog: &Path, args: &[&str]) -> Command {
    let mut c = bare_cmd("unshare");
    c.args(["-m", "--propagation", "private"])
        .arg(prog)
        .args(args);
    c
}

#[test]
fn item3_acct_as_root_appends_nothing_outside() {
    if !root() {
        return;
    }
    let (_td, ws, out, _mnt) = layout("acct");
    let file = out.join("acct");
    write_file(&file, "", 0o644);
    let f_s = file.to_str().unwrap();
    // The door is real: bare, the kernel appends a record for each process
    // that exits while accounting is on (the program turns it off again).
    let o = run(bare_cmd(mounts()).args(["acct", f_s]));
    assert!(has_line(&o, "acct 0 0"), "{}", o.describe());
    assert!(
        std::fs::metadata(&file).unwrap().len() > 0,
        "{}",
        o.describe()
    );
    write_file(&file, "", 0o644);
    let mut f = Failures::default();
    for mode in ["acct", "acct_sys"] {
        for how in HOWS {
            f.case();
            let before = snapshot(&out);
            let o = run(&mut guarded(how, false, &ws, &mounts(), &[mode, f_s]));
            let why = check(
                &o,
                &["acct -1 13"],
                &[Expect::new("acct", "write", &file, "sysadmin")],
                &out,
                &before,
            );
            if !why.is_empty() {
                f.fail(
                    &format!("{mode} {how:?}"),
                    format!("{}\n{}", why.join("\n"), o.describe()),
                );
            }
        }
    }
    f.finish("acct");
}

#[test]
fn item3_other_mount_and_system_calls_are_refused() {
    if !root() {
        return;
    }
    let (_td, ws, out, mnt) = layout("misc");
    // A plain file, for the calls that take one.
    let plain = ws.join("plain");
    write_file(&plain, "", 0o644);
    let (p_s, m_s) = (plain.to_str().unwrap(), mnt.to_str().unwrap());
    let common = |sys: bool| {
        let mut v: Vec<(&str, &str, PathBuf, Option<PathBuf>)> = vec![
            ("pivot_root", "mount", mnt.clone(), Some(mnt.clone())),
            ("umount2", "mount", mnt.clone(), None),
            ("swapon", "sysadmin", plain.clone(), None),
            ("swapoff", "sysadmin", plain.clone(), None),
            ("quotactl", "sysadmin", plain.clone(), None),
            ("fsopen", "mount", "tmpfs".into(), None),
            ("fspick", "mount", mnt.clone(), None),
            ("fsconfig", "mount", "?".into(), None),
            ("fsmount", "mount", "?".into(), None),
            ("mount_setattr", "mount", mnt.clone(), None),
        ];
        if sys {
            v.push(("open_tree_attr", "mount", mnt.clone(), None));
            v.push(("quotactl_fd", "sysadmin", "?".into(), None));
        } else {
            v.push(("umount", "mount", mnt.clone(), None));
        }
        v.push(("chroot", "mount", mnt.clone(), None));
        v
    };
    let mut f = Failures::default();
    for (mode, sys) in [("misc", false), ("misc_sys", true)] {
        let calls = common(sys);
        let lines: Vec<String> = calls.iter().map(|c| format!("{} -1 13", c.0)).collect();
        let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
        let traces: Vec<Expect> = calls
            .iter()
            .map(|(call, rule, path, dest)| {
                let e = Expect::new(call, "write", path, rule);
                match dest {
                    Some(d) => e.dest(d),
                    None => e,
                }
            })
            .collect();
        for how in HOWS {
            f.case();
            let before = snapshot(&out);
            let o = run(&mut guarded(how, true, &ws, &mounts(), &[mode, p_s, m_s]));
            let why = check(&o, &lines, &traces, &out, &before);
            if !why.is_empty() {
                f.fail(
                    &format!("{mode} {how:?}"),
                    format!("{}\n{}", why.join("\n"), o.describe()),
                );
            }
        }
    }
    f.finish("mount and system call");
}

#[test]
fn item3_audit_mode_logs_a_namespace_and_lets_it_pass() {
    let (_td, ws, out, mnt) = layout("nsaudit");
    if !userns_allowed(&out, &mnt) {
        return;
    }
    let o = run(guarded_cmd(
        mounts(),
        &[
            ("FSGUARD_ROOT", ws.to_str().unwrap()),
            ("FSGUARD_MODE", "audit"),
        ],
    )
    .args(["-u", "userns"])
    .arg(&out)
    .arg(&mnt));
    assert!(has_line(&o, "unshare 0 0"), "{}", o.describe());
    let audit = traces(&o.stderr, "audit");
    assert!(
        audit.iter().any(|t| t.call == "unshare"
            && t.field("path") == Some("CLONE_NEWUSER|CLONE_NEWNS")
            && t.field("rule") == Some("namespace"))
            && audit
                .iter()
                .any(|t| t.call == "mount" && t.field("rule") == Some("mount")),
        "{}",
        o.describe()
    );
    assert_no_blocked(&o);
}
