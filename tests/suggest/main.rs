//! Learning a policy: `fsguard run --audit` logs what a root-confined run
//! would refuse, `fsguard suggest` turns the log into allow rules, `fsguard
//! check` accepts them, and the same command under `fsguard run --config`
//! then runs with nothing blocked. Real programs: Python, make + cc, git.
//! Also `fsguard run --report`.

#![cfg(target_os = "linux")]

#[path = "../common/mod.rs"]
mod common;

use common::*;
use std::path::{Path, PathBuf};
use std::process::Command;

/// `fsguard ARGS...` with HOME set to `home` (T/home) and DATA to T/data,
/// a clean environment otherwise.
fn fsguard(home: &Path, args: &[&str]) -> Command {
    let mut c = bare_cmd(cli());
    c.args(args)
        .env("HOME", home)
        .env("DATA", home.parent().unwrap().join("data"));
    c
}

fn s(p: &Path) -> String {
    p.display().to_string()
}

/// The audit run: everything a `--root ws` run would refuse, as JSON lines.
fn audit(home: &Path, ws: &Path, log: &Path, extra: &[&str], cmd: &[&str]) -> Out {
    let mut args = vec!["run", "--audit", "--root", ".", "--log-format", "json"];
    let log_s = s(log);
    args.extend(["--log", &log_s]);
    args.extend(extra);
    args.push("--");
    args.extend(cmd);
    let o = run(fsguard(home, &args).current_dir(ws));
    let text = std::fs::read_to_string(log).unwrap_or_default();
    assert!(
        text.lines().any(|l| l.contains("\"event\":\"audit\"")),
        "the audit run logged nothing to learn from:\n{}",
        o.describe()
    );
    o
}

/// `fsguard suggest` into `policy`; then `fsguard check` must accept it.
fn suggest(home: &Path, ws: &Path, args: &[&str], policy: &Path) -> String {
    let o = run(fsguard(home, &["suggest"]).args(args).current_dir(ws));
    assert_eq!(o.code(), Some(0), "suggest failed:\n{}", o.describe());
    std::fs::write(policy, &o.stdout).unwrap();
    let c = run(fsguard(home, &["check", "--config", &s(policy)]).current_dir(ws));
    assert_eq!(
        c.code(),
        Some(0),
        "check refuses the suggested policy:\n{}\n{}",
        o.stdout,
        c.describe()
    );
    o.stdout
}

/// The enforce run under the suggested policy: succeeds, nothing blocked.
fn enforce(home: &Path, ws: &Path, policy: &Path, cmd: &[&str]) -> Out {
    let p = s(policy);
    let mut args = vec!["run", "--config", &p, "--"];
    args.extend(cmd);
    let o = run(fsguard(home, &args).current_dir(ws));
    let text = std::fs::read_to_string(policy).unwrap();
    assert_no_blocked(&o);
    assert!(
        !o.stderr.contains("blocked"),
        "policy:\n{text}\n{}",
        o.describe()
    );
    assert_eq!(o.code(), Some(0), "policy:\n{text}\n{}", o.describe());
    o
}

/// Inputs outside the workspace in a temp dir and a fake HOME; outputs to
/// a cache under HOME, to the temp dir (through a rename) and to the workspace.
const PROG: &str = r#"
import os, pathlib
home = pathlib.Path(os.environ["HOME"])
data = pathlib.Path(os.environ["DATA"])
conf = (home / ".config/tool/settings.json").read_text().strip()
total = sum(int(p.read_text()) for p in sorted((data / "in").glob("*.txt")))
cache = home / ".cache/tool"
cache.mkdir(parents=True, exist_ok=True)
for i in range(6):
    (cache / f"entry{i}").write_text(str(i))
out = data / "out"
out.mkdir(exist_ok=True)
(out / "tmp").write_text(str(total))
os.rename(out / "tmp", out / "result.txt")
pathlib.Path("result.txt").write_text(conf + str(total))
print("total", total)
"#;

struct PyCase {
    _td: TempDir,
    home: PathBuf,
    ws: PathBuf,
    data: PathBuf,
    t: PathBuf,
}

impl PyCase {
    fn new(tag: &str) -> PyCase {
        let td = TempDir::new(tag);
        let (home, ws, data) = (td.join("home"), td.join("ws"), td.join("data"));
        mkdir(&home.join(".config/tool"));
        mkdir(&home.join(".cache"));
        mkdir(&ws);
        mkdir(&data.join("in"));
        write_file(&home.join(".config/tool/settings.json"), "{}\n", 0o644);
        for i in 1..=4 {
            write_file(&data.join(format!("in/{i}.txt")), &format!("{i}\n"), 0o644);
        }
        write_file(&td.join("prog.py"), PROG, 0o644);
        let t = td.path().to_path_buf();
        PyCase {
            _td: td,
            home,
            ws,
            data,
            t,
        }
    }

    /// What the program creates, removed: each run starts the same.
    fn reset(&self) {
        for p in [self.home.join(".cache/tool"), self.data.join("out")] {
            let _ = std::fs::remove_dir_all(p);
        }
        let _ = std::fs::remove_file(self.ws.join("result.txt"));
    }

    fn cmd(&self) -> Vec<String> {
        vec![s(python()), s(&self.t.join("prog.py"))]
    }
}

mod edges;
mod python;
mod random;
mod report;
mod tools;
