//! Learning a policy: `fsguard run --audit` logs what a root-confined run
//! would refuse, `fsguard suggest` turns the log into allow rules, `fsguard
//! check` accepts them, and the same command under `fsguard run --config`
//! then runs with nothing blocked. Real programs: Python, make + cc, git.
//! Also `fsguard run --report`.

#![cfg(target_os = "linux")]

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

#[test]
fn python_round_trip() {
    let c = PyCase::new("suggest-py");
    let cmd = c.cmd();
    let cmd: Vec<&str> = cmd.iter().map(String::as_str).collect();
    let log = c.t.join("audit.jsonl");
    let policy = c.t.join("proj.toml");
    // Audit, with Landlock off: the writes outside the root go ahead, so one
    // run shows everything the program does.
    let mut a = vec!["run", "--audit", "--no-landlock", "--root", "."];
    let log_s = s(&log);
    a.extend(["--log-format", "json", "--log", &log_s, "--"]);
    a.extend(&cmd);
    let o = run(fsguard(&c.home, &a).current_dir(&c.ws));
    assert_eq!(o.code(), Some(0), "{}", o.describe());
    assert!(o.stderr.contains("would have been blocked (audit)"));
    c.reset();

    let text = suggest(&c.home, &c.ws, &["--root", ".", &log_s], &policy);
    // Generalised and named: the cache as one rule, the home's config file,
    // the temp dir's input directory (listed, so the directory itself).
    for want in [
        &format!("root = \"{}\"", s(&c.ws)),
        "\"~/.cache/tool/**\"",
        "# tool's cache: ",
        "\"~/.config/tool/settings.json\"",
        "# home directory",
        &format!("\"{}\"", s(&c.data.join("in"))),
        "# temp dir",
    ] {
        let want: &str = want;
        assert!(text.contains(want), "no {want:?} in:\n{text}");
    }
    assert!(!text.contains("entry3"), "not generalised:\n{text}");

    let mut e = fsguard(&c.home, &["run", "--config", &s(&policy), "--"]);
    e.args(&cmd).current_dir(&c.ws);
    let o = run(&mut e);
    assert_no_blocked(&o);
    assert_eq!(o.code(), Some(0), "{text}\n{}", o.describe());
    assert_eq!(o.stdout, "total 10\n");
    assert_eq!(
        std::fs::read_to_string(c.data.join("out/result.txt")).unwrap(),
        "10"
    );
    assert!(c.home.join(".cache/tool/entry5").is_file());
    // And the policy still refuses what the run never did.
    let x = run(&mut fsguard(
        &c.home,
        &[
            "explain",
            "--config",
            &s(&policy),
            "write",
            &s(&c.t.join("elsewhere")),
        ],
    ));
    assert_eq!(x.code(), Some(1), "{}", x.describe());
}

#[test]
fn python_learnt_in_rounds_under_landlock() {
    // With Landlock (the default) an audit run's writes outside the root
    // fail, so the program stops at its first one: each round audits under
    // the policy learnt so far and merges what is new into it.
    let c = PyCase::new("suggest-rounds");
    let cmd = c.cmd();
    let cmd: Vec<&str> = cmd.iter().map(String::as_str).collect();
    let policy = c.t.join("proj.toml");
    let mut rounds = 0;
    loop {
        rounds += 1;
        assert!(
            rounds <= 6,
            "did not converge:\n{}",
            std::fs::read_to_string(&policy).unwrap()
        );
        let log = c.t.join(format!("audit{rounds}.jsonl"));
        let log_s = s(&log);
        let p = s(&policy);
        let mut a = vec!["run", "--audit", "--root", ".", "--log-format", "json"];
        a.extend(["--log", &log_s]);
        if rounds > 1 {
            a.extend(["--config", &p]);
        }
        a.push("--");
        a.extend(&cmd);
        let o = run(fsguard(&c.home, &a).current_dir(&c.ws));
        c.reset();
        let logged = std::fs::read_to_string(&log).unwrap_or_default();
        if logged.trim().is_empty() {
            assert_eq!(o.code(), Some(0), "{}", o.describe());
            break;
        }
        let mut args = vec!["--root", "."];
        if rounds > 1 {
            args.extend(["--merge", &p]);
        }
        args.push(&log_s);
        let next = c.t.join("next.toml");
        let text = suggest(&c.home, &c.ws, &args, &next);
        if rounds == 1 {
            // A comment of the user's own, which every merge must keep.
            std::fs::write(&policy, format!("# reviewed by hand\n{text}")).unwrap();
        } else {
            assert!(text.starts_with("# reviewed by hand\n"), "{text}");
            std::fs::rename(&next, &policy).unwrap();
        }
    }
    assert!(rounds >= 3, "one round should not be enough under Landlock");
    enforce(&c.home, &c.ws, &policy, &cmd);
    assert!(c.home.join(".cache/tool/entry5").is_file());
}

#[test]
fn suggest_runs_the_command_and_never_allows_secrets() {
    let td = TempDir::new("suggest-secrets");
    let (home, ws) = (td.join("home"), td.join("ws"));
    mkdir(&home.join(".ssh"));
    mkdir(&home.join(".config/tool"));
    mkdir(&ws);
    write_file(&home.join(".ssh/id_ed25519"), "KEY\n", 0o600);
    write_file(&home.join(".config/tool/a.conf"), "conf\n", 0o644);
    let o = run(fsguard(
        &home,
        &[
            "suggest",
            "--",
            "sh",
            "-c",
            "cat ~/.ssh/id_ed25519 ~/.config/tool/a.conf; echo do''ne",
        ],
    )
    .current_dir(&ws));
    assert_eq!(o.code(), Some(0), "{}", o.describe());
    // Standard output is the policy alone; the command's output went to
    // standard error, with the audit run's report.
    assert!(
        !o.stdout.contains("done") && o.stderr.contains("done\n"),
        "{}",
        o.describe()
    );
    assert!(o
        .stderr
        .contains("fsguard report: 2 accesses would have been blocked (audit)"));
    let text = &o.stdout;
    assert!(text.contains("\"~/.config/tool/a.conf\""), "{text}");
    assert!(text.contains("# WARNING"), "{text}");
    assert!(
        text.contains("#   read ~/.ssh/id_ed25519: secrets:"),
        "{text}"
    );
    let policy = td.join("p.toml");
    std::fs::write(&policy, text).unwrap();
    for (path, code) in [(".ssh/id_ed25519", 1), (".config/tool/a.conf", 0)] {
        let x = run(&mut fsguard(
            &home,
            &[
                "explain",
                "--config",
                &s(&policy),
                "read",
                &s(&home.join(path)),
            ],
        ));
        assert_eq!(x.code(), Some(code), "{path}: {}", x.describe());
    }
    // Only allow lines, and none names the key's directory.
    for l in text.lines().filter(|l| l.trim_start().starts_with('"')) {
        assert!(!l.contains(".ssh"), "{l}");
    }
}

#[test]
fn make_and_cc_round_trip() {
    let td = TempDir::new("suggest-make");
    let (home, ws, sdk, prefix) = (
        td.join("home"),
        td.join("ws"),
        td.join("sdk"),
        td.join("prefix"),
    );
    mkdir(&home);
    mkdir(&ws);
    mkdir(&sdk.join("include/sdk"));
    write_file(
        &sdk.join("include/sdk.h"),
        "#include <sdk/a.h>\n#include <sdk/b.h>\n#include <sdk/c.h>\n",
        0o644,
    );
    for (n, v) in [("a", 1), ("b", 2), ("c", 3)] {
        write_file(
            &sdk.join(format!("include/sdk/{n}.h")),
            &format!("#define SDK_{} {v}\n", n.to_uppercase()),
            0o644,
        );
    }
    write_file(
        &ws.join("main.c"),
        "#include <stdio.h>\n#include <sdk.h>\nint main(void) { printf(\"%d\\n\", SDK_A + SDK_B + SDK_C); return 0; }\n",
        0o644,
    );
    write_file(
        &ws.join("Makefile"),
        &format!(
            "SDK = {}\nPREFIX = {}\nhello: main.c\n\tcc -I$(SDK)/include -o hello main.c\ninstall: hello\n\tmkdir -p $(PREFIX)/bin\n\tcp hello $(PREFIX)/bin/hello\nclean:\n\trm -f hello\n",
            s(&sdk),
            s(&prefix)
        ),
        0o644,
    );
    let reset = || {
        let _ = std::fs::remove_dir_all(&prefix);
        let _ = std::fs::remove_file(ws.join("hello"));
    };
    let log = td.join("audit.jsonl");
    let cmd = ["make", "install"];
    let o = audit(&home, &ws, &log, &["--no-landlock"], &cmd);
    assert_eq!(o.code(), Some(0), "{}", o.describe());
    reset();
    let policy = td.join("proj.toml");
    let text = suggest(&home, &ws, &["--root", ".", &s(&log)], &policy);
    assert!(
        text.contains(&format!("\"{}/**\"", s(&sdk.join("include/sdk")))),
        "the three SDK headers are one rule:\n{text}"
    );
    assert!(!text.contains("a.h\""), "{text}");
    assert!(text.contains(&format!("\"{}\"", s(&prefix))), "{text}");
    enforce(&home, &ws, &policy, &cmd);
    let o = run(&mut bare_cmd(prefix.join("bin/hello")));
    assert_eq!(o.stdout, "6\n", "{}", o.describe());
}

#[test]
fn git_push_round_trip() {
    let td = TempDir::new("suggest-git");
    let home = td.join("home");
    mkdir(&home);
    let upstream = td.join("upstream.git");
    let ws = td.join("ws");
    let git = |dir: &Path, args: &[&str]| {
        let mut c = bare_cmd("git");
        c.args(args)
            .current_dir(dir)
            .env("HOME", &home)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_AUTHOR_NAME", "t")
            .env("GIT_AUTHOR_EMAIL", "t@example.com")
            .env("GIT_COMMITTER_NAME", "t")
            .env("GIT_COMMITTER_EMAIL", "t@example.com")
            .env("GIT_AUTHOR_DATE", "2020-01-01T00:00:00Z")
            .env("GIT_COMMITTER_DATE", "2020-01-01T00:00:00Z");
        c
    };
    // The same two repositories, byte for byte, before each run.
    let tdp = td.path().to_path_buf();
    let setup = || {
        let _ = std::fs::remove_dir_all(&upstream);
        let _ = std::fs::remove_dir_all(&ws);
        mkdir(&upstream);
        let (up, wss) = (s(&upstream), s(&ws));
        for (dir, args) in [
            (&upstream, vec!["init", "-q", "--bare", "-b", "main"]),
            (&tdp, vec!["clone", "-q", &up, &wss]),
        ] {
            let o = run(&mut git(dir, &args));
            assert!(o.status.success(), "{}", o.describe());
        }
        write_file(&ws.join("a.txt"), "one\n", 0o644);
        for args in [
            vec!["add", "a.txt"],
            vec!["commit", "-q", "-m", "one"],
            vec!["push", "-q", "origin", "HEAD:main"],
        ] {
            let o = run(&mut git(&ws, &args));
            assert!(o.status.success(), "{}", o.describe());
        }
        write_file(&ws.join("a.txt"), "two\n", 0o644);
        write_file(&ws.join("b.txt"), "new\n", 0o644);
    };
    let script = "git add -A && git commit -q -m two && git push -q origin HEAD:main";
    let cmd = ["sh", "-c", script];
    let with_env = |c: &mut Command| {
        c.env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_AUTHOR_NAME", "t")
            .env("GIT_AUTHOR_EMAIL", "t@example.com")
            .env("GIT_COMMITTER_NAME", "t")
            .env("GIT_COMMITTER_EMAIL", "t@example.com")
            .env("GIT_AUTHOR_DATE", "2020-01-01T00:00:00Z")
            .env("GIT_COMMITTER_DATE", "2020-01-01T00:00:00Z");
    };
    setup();
    let log = td.join("audit.jsonl");
    let mut a = fsguard(
        &home,
        &[
            "run",
            "--audit",
            "--no-landlock",
            "--root",
            ".",
            "--log-format",
            "json",
            "--log",
            &s(&log),
            "--",
        ],
    );
    a.args(cmd).current_dir(&ws);
    with_env(&mut a);
    let o = run(&mut a);
    assert_eq!(o.code(), Some(0), "{}", o.describe());
    let policy = td.join("proj.toml");
    let text = suggest(&home, &ws, &["--root", ".", &s(&log)], &policy);
    assert!(text.contains(&s(&upstream)), "{text}");
    setup();
    let mut e = fsguard(&home, &["run", "--config", &s(&policy), "--"]);
    e.args(cmd).current_dir(&ws);
    with_env(&mut e);
    let o = run(&mut e);
    assert_no_blocked(&o);
    assert!(!o.stderr.contains("blocked"), "{text}\n{}", o.describe());
    assert_eq!(o.code(), Some(0), "{text}\n{}", o.describe());
    let log = run(&mut git(&upstream, &["log", "--format=%s", "main"]));
    assert_eq!(log.stdout, "two\none\n", "{}", log.describe());
}

#[test]
fn report_groups_refused_accesses() {
    let td = TempDir::new("report");
    let (home, ws, out) = (td.join("home"), td.join("ws"), td.join("out"));
    mkdir(&home);
    mkdir(&ws);
    mkdir(&out);
    for i in 0..3 {
        write_file(&out.join(format!("f{i}")), "x\n", 0o644);
    }
    let script = format!(
        "cat {o}/f0 {o}/f1 {o}/f2 /etc/passwd; echo x > {o}/new; true",
        o = s(&out)
    );
    let report = td.join("report.txt");
    let before = snapshot(&out);
    let o = run(fsguard(
        &home,
        &[
            "run",
            "--root",
            ".",
            "--report",
            &s(&report),
            "--",
            "sh",
            "-c",
            &script,
        ],
    )
    .current_dir(&ws)
    .env("NO_COLOR", ""));
    assert_eq!(o.code(), Some(0), "{}", o.describe());
    assert_eq!(snapshot_diff(&before, &snapshot(&out)), None);
    // A file: no colour, whatever NO_COLOR says; the summary still on stderr.
    let text = std::fs::read_to_string(&report).unwrap();
    assert!(!text.contains('\x1b'), "{text}");
    assert!(
        o.stderr.contains("fsguard: 5 accesses blocked"),
        "{}",
        o.describe()
    );
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines[0], "fsguard report: 5 accesses blocked, in 3 groups",
        "{text}"
    );
    assert!(
        lines[1]
            .split_whitespace()
            .eq(["COUNT", "ACCESS", "RULE", "DIRECTORY", "FIRST"]),
        "{text}"
    );
    let row = |i: usize| lines[i].split_whitespace().collect::<Vec<_>>();
    let (o_s, f0) = (s(&out), s(&out.join("f0")));
    assert_eq!(row(2), ["3", "read", "root", &o_s, &f0], "{text}");
    let mut rest = vec![row(3), row(4)];
    rest.sort();
    let new = s(&out.join("new"));
    assert_eq!(
        rest,
        [
            vec!["1", "read", "root", "/etc", "/etc/passwd"],
            vec!["1", "write", "root", &o_s, &new],
        ],
        "{text}"
    );
    let hint = format!("  why: fsguard explain --root . read {f0}");
    assert!(text.contains(&hint), "{text}");
    // The hint answers as the report says.
    let x = run(fsguard(&home, &["explain", "--root", ".", "read", &f0]).current_dir(&ws));
    assert_eq!(
        x.stdout,
        format!("deny read {f0} rule=root hint=\"--allow-read {f0}\"\n")
    );

    // `-`: on stderr, instead of the summary; audit mode says so.
    let o = run(fsguard(
        &home,
        &[
            "run",
            "--audit",
            "--root",
            ".",
            "--report",
            "-",
            "--",
            "sh",
            "-c",
            "cat /etc/passwd >/dev/null",
        ],
    )
    .current_dir(&ws));
    assert!(
        o.stderr
            .contains("fsguard report: 1 access would have been blocked (audit), in 1 group"),
        "{}",
        o.describe()
    );
    assert!(!o.stderr.contains("first:"), "{}", o.describe());
    assert!(
        !o.stderr.contains('\x1b'),
        "not a terminal: {}",
        o.describe()
    );
}

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
