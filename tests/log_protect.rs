//! The trace log is the program's record: a guarded process cannot forge,
//! truncate, delete, rename, chmod or replace it, whatever the policy allows
//! (`rule=log`), under `fsguard run --log FILE` and under `LD_PRELOAD` with
//! `FSGUARD_LOG=FILE`. The library's own appends still land.

#![cfg(target_os = "linux")]

mod common;

use common::*;
use std::path::Path;

/// Every way a shell can change the log or its name, one per line; each
/// must fail, and each prints `ok NAME` only if it went through.
const ATTACKS: &str = r#"
echo forged > trace.json && echo "ok forge"
echo forged >> trace.json && echo "ok append"
rm -f trace.json && echo "ok delete"
mv trace.json moved.json && echo "ok rename"
chmod 000 trace.json && echo "ok chmod"
truncate -s 0 trace.json && echo "ok truncate"
echo fake > decoy && mv -f decoy trace.json && echo "ok rename-over"
echo fake > decoy2 && ln -f decoy2 trace.json && echo "ok link-over"
ln trace.json hardlink && echo "ok hardlink"
echo finished
"#;

/// The log sits in a directory of its own inside the writable root, so that
/// the directory move is tried too; `trace.json` is a symlink to it in the
/// root, so every attack on the name reaches the real file.
fn workspace() -> (TempDir, std::path::PathBuf) {
    let td = TempDir::new("logprot");
    let ws = td.join("ws");
    mkdir(&ws);
    mkdir(&ws.join("logs"));
    write_file(&ws.join("logs/trace.json"), "earlier line\n", 0o644);
    let ws = ws.canonicalize().unwrap();
    (td, ws)
}

fn script(ws: &Path) -> String {
    // The attacks name the log directly (cd into its directory) and through
    // its directory (from the root).
    format!(
        "cd logs && {{ {ATTACKS} }}; cd {} && mv logs logs2 && echo 'ok move-dir-from-root'; true",
        ws.display()
    )
}

fn check(o: &Out, log: &Path, ws: &Path, audit: bool) {
    assert!(o.stdout.contains("finished"), "{}", o.describe());
    assert!(
        !o.stdout.contains("ok "),
        "an attack on the log went through:\n{}",
        o.describe()
    );
    assert!(
        o.stderr.contains("Permission denied"),
        "EACCES expected\n{}",
        o.describe()
    );
    let text =
        std::fs::read_to_string(log).unwrap_or_else(|e| panic!("log gone: {e}\n{}", o.describe()));
    assert!(
        text.starts_with("earlier line\n"),
        "earlier lines erased:\n{text}"
    );
    assert!(!text.contains("forged"), "forged line in the log:\n{text}");
    let got = traces(&text, "blocked");
    let log_s = log.display().to_string();
    let on_log = |call: &str| {
        got.iter().any(|t| {
            t.call == call
                && t.access == "write"
                && t.field("rule") == Some("log")
                && (t.field("path") == Some(&log_s) || t.field("dest") == Some(&log_s))
        })
    };
    for call in ["open", "unlinkat", "renameat2", "fchmodat"] {
        assert!(
            on_log(call),
            "no `blocked {call} write … rule=log` line for the log:\n{text}"
        );
    }
    let dir_moved = got.iter().any(|t| {
        t.call.starts_with("rename")
            && t.field("rule") == Some("log")
            && t.field("path") == Some(&ws.join("logs").display().to_string())
    });
    assert!(dir_moved, "no refusal of the log's directory move:\n{text}");
    if audit {
        assert!(
            traces(&text, "audit")
                .iter()
                .all(|t| t.field("rule") != Some("log")),
            "the log's protection is never merely audited:\n{text}"
        );
    }
    let meta = std::fs::metadata(log).unwrap();
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    assert_eq!(
        meta.permissions().mode() & 0o777,
        0o644,
        "chmod went through"
    );
    assert_eq!(meta.nlink(), 1, "the log got a second name");
    assert!(!ws.join("logs2").exists() && !ws.join("logs/moved.json").exists());
}

#[test]
fn run_log_cannot_be_forged_or_erased() {
    let (_td, ws) = workspace();
    let log = ws.join("logs/trace.json");
    let mut c = bare_cmd(cli());
    c.args(["run", "--root"])
        .arg(&ws)
        .args(["--allow-write"])
        .arg(&ws)
        .args(["--log", "logs/trace.json", "--", "sh", "-c"])
        .arg(script(&ws))
        .current_dir(&ws);
    let o = run(&mut c);
    assert_eq!(o.code(), Some(0), "{}", o.describe());
    check(&o, &log, &ws, false);
    assert!(
        o.stderr.contains("accesses blocked"),
        "summary expected\n{}",
        o.describe()
    );
}

#[test]
fn run_log_is_protected_in_audit_mode_too() {
    let (_td, ws) = workspace();
    let log = ws.join("logs/trace.json");
    let mut c = bare_cmd(cli());
    c.args(["run", "--audit", "--root"])
        .arg(&ws)
        .args(["--log", "logs/trace.json", "--", "sh", "-c"])
        .arg(script(&ws))
        .current_dir(&ws);
    let o = run(&mut c);
    check(&o, &log, &ws, true);
}

#[test]
fn preload_log_cannot_be_forged_or_erased() {
    let (_td, ws) = workspace();
    let log = ws.join("logs/trace.json");
    let o = run(guarded_cmd(
        "sh",
        &[
            ("FSGUARD_ROOT", ws.to_str().unwrap()),
            ("FSGUARD_LOG", "logs/trace.json"),
        ],
    )
    .arg("-c")
    .arg(script(&ws))
    .current_dir(&ws));
    check(&o, &log, &ws, false);
}

#[test]
fn preload_log_through_a_symlink_is_the_same_file() {
    let (_td, ws) = workspace();
    let log = ws.join("logs/trace.json");
    std::os::unix::fs::symlink("logs/trace.json", ws.join("link.json")).unwrap();
    // The policy names the log through a symlink; the program through the
    // real name, and the symlink.
    let o = run(guarded_cmd(
        "sh",
        &[
            ("FSGUARD_ROOT", ws.to_str().unwrap()),
            ("FSGUARD_LOG", "link.json"),
        ],
    )
    .arg("-c")
    .arg("echo forged > logs/trace.json; echo forged > link.json; cat /dev/null > logs/trace.json; echo finished")
    .current_dir(&ws));
    assert!(o.stdout.contains("finished"), "{}", o.describe());
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(text.starts_with("earlier line\n"), "{text}");
    assert!(!text.contains("forged"), "{text}");
    let n = traces(&text, "blocked")
        .iter()
        .filter(|t| t.field("rule") == Some("log"))
        .count();
    assert_eq!(n, 3, "{text}\n{}", o.describe());
}

/// `--log /dev/null` does not take `/dev/null` from the program.
#[test]
fn a_device_log_is_not_protected() {
    let (_td, ws) = workspace();
    let mut c = bare_cmd(cli());
    c.args(["run", "--root"])
        .arg(&ws)
        .args([
            "--log",
            "/dev/null",
            "--",
            "sh",
            "-c",
            "echo x > /dev/null && echo ok",
        ])
        .current_dir(&ws);
    let o = run(&mut c);
    assert_eq!(o.code(), Some(0), "{}", o.describe());
    assert_eq!(o.stdout.trim(), "ok", "{}", o.describe());
}

/// Under `fsguard run` the supervisor writes the log: neither the command
/// nor its children hold a descriptor to it (through one, `ftruncate` or
/// clearing `O_APPEND` would rewrite the record), and their lines land.
#[test]
fn run_gives_the_command_no_descriptor_to_the_log() {
    let (_td, ws) = workspace();
    let log = ws.join("logs/trace.json");
    let probe = "\
import os, subprocess, sys
log = os.environ['LOG_PATH']
fds = [n for n in os.listdir('/proc/self/fd') if os.path.realpath('/proc/self/fd/' + n) == log]
print('log fds', fds)
try:
    open('/etc/fsguard-probe', 'w')
except OSError as e:
    print('refused', e.errno)
if sys.argv[1:] != ['child']:
    # close_fds=False: the child keeps the report channel; with the default
    # close_fds=True the exec hook connects again. Neither opens the log.
    subprocess.run([sys.executable, '-c', os.environ['PROBE'], 'child'], close_fds=False)
    subprocess.run([sys.executable, '-c', os.environ['PROBE'], 'child'])
";
    let mut c = bare_cmd(cli());
    c.env("LOG_PATH", &log)
        .env("PROBE", probe)
        .args(["run", "--root"])
        .arg(&ws)
        .args(["--log", "logs/trace.json", "--", "python3", "-c", probe])
        .current_dir(&ws);
    let o = run(&mut c);
    assert_eq!(o.code(), Some(0), "{}", o.describe());
    assert_eq!(
        o.stdout.lines().filter(|l| *l == "log fds []").count(),
        3,
        "the command or its child holds the log open\n{}",
        o.describe()
    );
    assert_eq!(
        o.stdout.lines().filter(|l| *l == "refused 13").count(),
        3,
        "{}",
        o.describe()
    );
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(text.starts_with("earlier line\n"), "{text}");
    let n = traces(&text, "blocked")
        .iter()
        .filter(|t| t.field("path") == Some("/etc/fsguard-probe"))
        .count();
    assert_eq!(n, 3, "the command's and its children's refusals:\n{text}");
    assert_eq!(
        o.blocked().len(),
        0,
        "every line goes to the log, none to a child's stderr\n{}",
        o.describe()
    );
}

/// Item 6 of issue 27: in audit mode, a rename or link whose first path
/// lies outside the root (an audited denial) still has its second path
/// decided: onto the log, that is `rule=log`, enforced in audit mode too.
/// The program renames and links files from outside onto the log.
const INTO_THE_LOG: &str = "\
import os, sys
log, outside = sys.argv[1], sys.argv[2]
for name, act in [('rename', os.rename), ('link', os.link)]:
    src = os.path.join(outside, name)
    try:
        act(src, log)
        print('ok', name)
    except OSError as e:
        print('refused', name, e.errno)
print('finished')
";

/// A workspace with the log, and a directory outside it holding the files
/// moved and linked onto the log.
fn outside_files(td: &TempDir) -> std::path::PathBuf {
    let outside = td.join("outside");
    mkdir(&outside);
    for name in ["rename", "link"] {
        write_file(&outside.join(name), "replaced\n", 0o644);
    }
    outside.canonicalize().unwrap()
}

/// What both forms of the audit-mode test check: each call refused with
/// EACCES and a `blocked … rule=log` line naming the log as its
/// destination, the log unchanged, the outside files where they were.
fn check_into_the_log(o: &Out, text: &str, log: &Path, outside: &Path) {
    assert!(o.stdout.contains("finished"), "{}", o.describe());
    for name in ["rename", "link"] {
        assert!(
            o.stdout.contains(&format!("refused {name} 13")),
            "{name} onto the log not refused with EACCES\n{}",
            o.describe()
        );
        assert!(outside.join(name).exists(), "{name}: the source moved");
    }
    assert!(
        text.starts_with("earlier line\n") && !text.contains("replaced"),
        "the log was replaced:\n{text}"
    );
    let log_s = log.display().to_string();
    for call in ["rename", "link"] {
        let refused = traces(text, "blocked").iter().any(|t| {
            t.call.starts_with(call)
                && t.field("rule") == Some("log")
                && t.field("dest") == Some(&log_s)
        });
        assert!(
            refused,
            "no `blocked {call}… dest={log_s} rule=log` line:\n{text}"
        );
    }
    // The first path's own denial is audited, once per call.
    for call in ["rename", "link"] {
        let n = traces(text, "audit")
            .iter()
            .filter(|t| t.call.starts_with(call))
            .count();
        assert!(n <= 1, "{call}: {n} audit lines for one call:\n{text}");
    }
}

#[test]
fn preload_audit_mode_decides_the_second_path_too() {
    let (td, ws) = workspace();
    let outside = outside_files(&td);
    let log = ws.join("logs/trace.json");
    let o = run(guarded_cmd(
        python(),
        &[
            ("FSGUARD_ROOT", ws.to_str().unwrap()),
            ("FSGUARD_LOG", "logs/trace.json"),
            ("FSGUARD_MODE", "audit"),
        ],
    )
    .args(["-c", INTO_THE_LOG])
    .arg(&log)
    .arg(&outside)
    .current_dir(&ws));
    let text = std::fs::read_to_string(&log).unwrap();
    check_into_the_log(&o, &text, &log, &outside);
}

#[test]
fn run_audit_mode_decides_the_second_path_too() {
    let (td, ws) = workspace();
    let outside = outside_files(&td);
    let log = ws.join("logs/trace.json");
    let mut c = bare_cmd(cli());
    c.args(["run", "--audit", "--root"])
        .arg(&ws)
        .args(["--log", "logs/trace.json", "--"])
        .arg(python())
        .args(["-c", INTO_THE_LOG])
        .arg(&log)
        .arg(&outside)
        .current_dir(&ws);
    let o = run(&mut c);
    let text = std::fs::read_to_string(&log).unwrap();
    check_into_the_log(&o, &text, &log, &outside);
}
