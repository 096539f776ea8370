//! Built-in profiles (issue 29 item 10): `fsguard profiles` lists and
//! prints them, `--profile NAME` and `profile = "NAME"` in a config layer
//! like any config (the file's keys and the flags on top, no deny lost),
//! an unknown name fails closed, and agent-dev runs git and a venv's pip
//! inside the workspace with no other flag.

#![cfg(target_os = "linux")]

mod common;

use common::*;
use std::path::{Path, PathBuf};

fn fsguard(dir: &Path, args: &[&str]) -> Out {
    let mut c = bare_cmd(cli());
    c.args(args).current_dir(dir);
    run(&mut c)
}

fn canon(p: &Path) -> PathBuf {
    p.canonicalize().unwrap()
}

#[test]
fn profiles_lists_and_prints_them() {
    let td = TempDir::new("profiles-list");
    let o = fsguard(td.path(), &["profiles"]);
    assert_eq!(o.code(), Some(0), "{}", o.describe());
    for name in ["agent ", "agent-dev ", "analysis ", "build "] {
        assert!(
            o.stdout.lines().any(|l| l.starts_with(name)),
            "{name}: {}",
            o.describe()
        );
    }
    // The printed TOML, saved as a config, is the profile's policy.
    let ws = canon(td.path());
    for name in ["agent", "agent-dev", "analysis", "build"] {
        let o = fsguard(&ws, &["profiles", name]);
        assert_eq!(o.code(), Some(0), "{}", o.describe());
        assert!(
            o.stdout
                .starts_with(&format!("# fsguard profile \"{name}\"")),
            "{}",
            o.describe()
        );
        let saved = ws.join(format!("{name}.toml"));
        write_file(&saved, &o.stdout, 0o644);
        let by_file = fsguard(
            &ws,
            &["check", "--no-config", "--config", saved.to_str().unwrap()],
        );
        let by_name = fsguard(&ws, &["check", "--no-config", "--profile", name]);
        assert_eq!(by_file.code(), Some(0), "{}", by_file.describe());
        assert_eq!(by_name.code(), Some(0), "{}", by_name.describe());
        assert_eq!(
            by_name.stdout.lines().next(),
            Some(
                format!("# profile: {name} (built-in; `fsguard profiles {name}` prints it)")
                    .as_str()
            ),
            "check names the profile in force: {}",
            by_name.describe()
        );
        // The same policy, but for the line naming the profile and the
        // shared-memory tag, which each load makes afresh.
        let policy = |t: &str| -> Vec<String> {
            t.lines()
                .filter(|l| !l.starts_with("# profile:") && !l.starts_with("# ipc ("))
                .map(str::to_string)
                .collect()
        };
        assert_eq!(policy(&by_file.stdout), policy(&by_name.stdout), "{name}");
    }
}

#[test]
fn an_unknown_profile_fails_closed_and_lists_the_known_ones() {
    let td = TempDir::new("profiles-unknown");
    let ws = canon(td.path());
    for args in [
        &["run", "--profile", "agnet", "--", "true"][..],
        &["check", "--profile", "nope"],
        &["profiles", "nope"],
    ] {
        let o = fsguard(&ws, args);
        assert_eq!(o.code(), Some(125), "{}", o.describe());
        assert!(
            o.stderr.contains("agent, agent-dev, analysis, build"),
            "{}",
            o.describe()
        );
    }
    write_file(&ws.join("c.toml"), "profile = \"agentt\"\n", 0o644);
    let o = fsguard(&ws, &["run", "--config", "c.toml", "--", "true"]);
    assert_eq!(o.code(), Some(125), "{}", o.describe());
    assert!(
        o.stderr.contains("c.toml:1: profile: unknown profile \"agentt\" (the profiles: agent, agent-dev, analysis, build)"),
        "{}",
        o.describe()
    );
}

/// A workspace with a `.env`, a key, and a directory outside it.
struct Ws {
    _td: TempDir,
    ws: PathBuf,
    out: PathBuf,
    other: PathBuf,
}

fn ws(tag: &str) -> Ws {
    let td = TempDir::new(tag);
    for d in ["ws", "ws/.git", "out", "other"] {
        mkdir(&td.join(d));
    }
    write_file(&td.join("ws/.env"), "API_KEY=hunter2\n", 0o644);
    write_file(&td.join("ws/deploy.pem"), "KEY\n", 0o644);
    Ws {
        ws: canon(&td.join("ws")),
        out: canon(&td.join("out")),
        other: canon(&td.join("other")),
        _td: td,
    }
}

const SCRIPT: &str = "cat .env || echo env-refused; cat deploy.pem || echo pem-refused; \
                      echo x > \"$1/f\" && echo wrote-out || echo out-refused; \
                      echo x > \"$2/f\" && echo wrote-other || echo other-refused; \
                      echo x > mine && echo wrote-mine";

#[test]
fn profile_agent_layered_with_allow_write() {
    let w = ws("profiles-layered");
    let (out, other) = (w.out.to_str().unwrap(), w.other.to_str().unwrap());
    let o = fsguard(
        &w.ws,
        &[
            "run",
            "--profile",
            "agent",
            "--allow-write",
            out,
            "--",
            "sh",
            "-c",
            SCRIPT,
            "sh",
            out,
            other,
        ],
    );
    assert_eq!(o.code(), Some(0), "{}", o.describe());
    for want in [
        "env-refused",
        "pem-refused",
        "wrote-out",
        "other-refused",
        "wrote-mine",
    ] {
        assert!(o.stdout.contains(want), "{want}: {}", o.describe());
    }
    assert!(!o.stdout.contains("hunter2"), "{}", o.describe());
    assert!(w.out.join("f").exists() && !w.other.join("f").exists());
    assert!(w.ws.join("mine").exists());
    let rules: Vec<String> = o
        .blocked()
        .iter()
        .filter_map(|t| t.field("rule").map(str::to_string))
        .collect();
    let ws = w.ws.display();
    assert!(
        rules.contains(&format!("read.deny:{ws}/**/.env*")),
        "{rules:?}"
    );
    assert!(
        rules.contains(&format!("read.deny_always:{ws}/**/*.pem")),
        "{rules:?}"
    );
    assert!(rules.contains(&"root".to_string()), "{rules:?}");
    assert!(
        o.stderr.contains("fsguard: profile: agent (built-in;"),
        "the summary names the profile: {}",
        o.describe()
    );
}

#[test]
fn profile_key_in_a_discovered_config() {
    let w = ws("profiles-config");
    // The file's own keys layer over the profile's: one more deny, and the
    // profile's rules (the .env deny, the key deny) are still there.
    write_file(
        &w.ws.join(".fsguard.toml"),
        "profile = \"agent\"\n[read]\ndeny_always = [\"notes.txt\"]\n",
        0o644,
    );
    write_file(&w.ws.join("notes.txt"), "private\n", 0o644);
    let (out, other) = (w.out.to_str().unwrap(), w.other.to_str().unwrap());
    let script = format!("{SCRIPT}; cat notes.txt || echo notes-refused");
    let o = fsguard(&w.ws, &["run", "--", "sh", "-c", &script, "sh", out, other]);
    assert_eq!(o.code(), Some(0), "{}", o.describe());
    for want in [
        "env-refused",
        "pem-refused",
        "out-refused",
        "other-refused",
        "wrote-mine",
        "notes-refused",
    ] {
        assert!(o.stdout.contains(want), "{want}: {}", o.describe());
    }
    assert!(!w.out.join("f").exists());
    // check and explain name the profile in force.
    let o = fsguard(&w.ws, &["check"]);
    assert!(
        o.stdout.contains("# profile: agent (built-in;")
            && o.stdout.contains(&format!("root = \"{}\"", w.ws.display())),
        "{}",
        o.describe()
    );
    let o = fsguard(&w.ws, &["explain", "read", ".env"]);
    assert_eq!(o.code(), Some(1), "{}", o.describe());
    assert!(
        o.stdout.trim_end().ends_with(" profile=agent"),
        "{}",
        o.describe()
    );
    let o = fsguard(&w.ws, &["explain", "--json", "read", ".env"]);
    assert!(
        o.stdout.contains("\"profile\":\"agent\""),
        "{}",
        o.describe()
    );
}

/// A PEP 517 backend of a few lines, so `pip wheel` builds the tiny
/// package offline (no setuptools, no wheel package needed).
const BACKEND: &str = r#"
import base64, hashlib, os, zipfile

NAME, VERSION = "tinypkg", "0.1"
DIST = f"{NAME}-{VERSION}.dist-info"


def _record(name, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
    return f"{name},sha256={digest.decode()},{len(data)}"


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    files = {}
    with open(os.path.join(here, NAME, "__init__.py"), "rb") as f:
        files[f"{NAME}/__init__.py"] = f.read()
    files[f"{DIST}/METADATA"] = f"Metadata-Version: 2.1\nName: {NAME}\nVersion: {VERSION}\n".encode()
    files[f"{DIST}/WHEEL"] = b"Wheel-Version: 1.0\nGenerator: tinybuild\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    record = [_record(n, d) for n, d in files.items()] + [f"{DIST}/RECORD,,"]
    files[f"{DIST}/RECORD"] = ("\n".join(record) + "\n").encode()
    wheel = f"{NAME}-{VERSION}-py3-none-any.whl"
    with zipfile.ZipFile(os.path.join(wheel_directory, wheel), "w") as z:
        for n, d in files.items():
            z.writestr(n, d)
    return wheel
"#;

const PYPROJECT: &str = "[build-system]\nrequires = []\nbuild-backend = \"tinybuild\"\n\
                         backend-path = [\"backend\"]\n[project]\nname = \"tinypkg\"\n\
                         version = \"0.1\"\n";

/// `git init`, `add`, `commit`, `status`, `branch`, then `python -m venv
/// .venv` and `.venv/bin/pip install` of a local wheel, all under `fsguard
/// run --profile agent-dev --root .` and no other flag; the agent profile
/// refuses the same `git init` (its hooks rule), and agent-dev still
/// refuses a planted hook.
#[test]
fn agent_dev_runs_git_and_a_venv_with_no_flag() {
    let td = TempDir::new("profiles-dev");
    let root = canon(td.path());
    let (home, ws, pkg) = (root.join("home"), root.join("ws"), root.join("pkg"));
    for d in [&home, &ws, &pkg, &pkg.join("tinypkg"), &pkg.join("backend")] {
        mkdir(d);
    }
    // git's identity comes from ~/.gitconfig: the profile must let git read it.
    write_file(
        &home.join(".gitconfig"),
        "[user]\n\tname = Agent\n\temail = agent@example.com\n[init]\n\tdefaultBranch = main\n",
        0o644,
    );
    write_file(
        &home.join(".git-credentials"),
        "https://u:tok@example.com\n",
        0o600,
    );
    write_file(&pkg.join("pyproject.toml"), PYPROJECT, 0o644);
    write_file(&pkg.join("tinypkg/__init__.py"), "X = 41 + 1\n", 0o644);
    write_file(&pkg.join("backend/tinybuild.py"), BACKEND, 0o644);
    let py = python();
    let pydir = py.parent().unwrap().display().to_string();
    // The interpreter's directory and the system's (no toolchain shims
    // under $HOME: they read their own settings there).
    let path = format!("{pydir}:/usr/local/bin:/usr/bin:/bin");
    let env = |c: &mut std::process::Command| {
        c.env("HOME", &home)
            .env("PATH", &path)
            .env("PIP_DISABLE_PIP_VERSION_CHECK", "1")
            .env("PIP_NO_INPUT", "1")
            .env_remove("GIT_CONFIG_GLOBAL")
            .env_remove("PIP_FIND_LINKS")
            .env_remove("PIP_CONFIG_FILE");
    };
    // The wheel, built bare, offline.
    let mut c = bare_cmd(py);
    c.args(["-m", "pip", "wheel", "--no-deps", "--no-index", "-w"])
        .arg(&ws)
        .arg(&pkg)
        .current_dir(&root);
    env(&mut c);
    let o = run(&mut c);
    assert!(o.status.success(), "pip wheel: {}", o.describe());
    assert!(
        ws.join("tinypkg-0.1-py3-none-any.whl").exists(),
        "{}",
        o.describe()
    );

    let guarded = |profile: &str, script: &str| {
        let mut c = bare_cmd(cli());
        c.args([
            "run",
            "--profile",
            profile,
            "--root",
            ".",
            "--",
            "sh",
            "-c",
            script,
        ])
        .current_dir(&ws);
        env(&mut c);
        run(&mut c)
    };
    // The agent profile write-denies .git/hooks, so git init fails there:
    // the profile that follows is what makes it work.
    let o = guarded("agent", "git init -q .");
    assert_ne!(o.code(), Some(0), "{}", o.describe());
    assert!(o.stderr.contains("/.git/hooks"), "{}", o.describe());
    std::fs::remove_dir_all(ws.join(".git")).unwrap();

    let git = "set -e; git init -q .; echo hello > a.txt; git add a.txt; \
               git commit -q -m first; git status --short > status.txt; \
               git branch feature; git branch --list; git log --format='%an <%ae> %s'; \
               cat ~/.git-credentials || echo credentials-refused; \
               echo 'exit 0' > .git/hooks/pre-commit || echo hook-refused; \
               mv .git/hooks/pre-commit.sample .git/hooks/pre-commit || echo rename-refused";
    let o = guarded("agent-dev", git);
    assert_eq!(o.code(), Some(0), "{}", o.describe());
    for want in [
        "feature",
        "* main",
        "Agent <agent@example.com> first",
        "credentials-refused",
        "hook-refused",
        "rename-refused",
    ] {
        assert!(o.stdout.contains(want), "{want}: {}", o.describe());
    }
    assert!(!o.stdout.contains("tok@"), "{}", o.describe());
    assert!(!ws.join(".git/hooks/pre-commit").exists());
    assert!(ws.join(".git/hooks/pre-commit.sample").exists());
    // The only refusals are the three the script tried on purpose.
    let blocked = o.blocked();
    assert_eq!(blocked.len(), 3, "{}", o.describe());
    let status = std::fs::read_to_string(ws.join("status.txt")).unwrap();
    assert!(!status.contains("a.txt"), "committed: {status}");

    let venv = "set -e; python3 -m venv .venv; \
                .venv/bin/pip install --no-index tinypkg-0.1-py3-none-any.whl; \
                .venv/bin/python -c 'import tinypkg; print(\"tinypkg\", tinypkg.X)'";
    let o = guarded("agent-dev", venv);
    assert_eq!(o.code(), Some(0), "{}", o.describe());
    assert!(o.stdout.contains("tinypkg 42"), "{}", o.describe());
    assert!(o.blocked().is_empty(), "{}", o.describe());
    assert!(ws.join(".venv/bin/python").exists());
}

/// `wrap --profile NAME` writes the profile into the script, and the
/// wrapper confines to the directory it runs in.
#[test]
fn wrap_carries_the_profile() {
    let w = ws("profiles-wrap");
    let bin = w.ws.parent().unwrap().join("bin");
    let o = fsguard(
        &w.ws,
        &[
            "wrap",
            "reader",
            "--dir",
            bin.to_str().unwrap(),
            "--profile",
            "agent",
            "--",
            "cat",
        ],
    );
    assert_eq!(o.code(), Some(0), "{}", o.describe());
    let script = std::fs::read_to_string(bin.join("reader")).unwrap();
    assert!(script.contains(" run --profile agent -- cat "), "{script}");
    let o = run(bare_cmd(bin.join("reader")).arg(".env").current_dir(&w.ws));
    assert_ne!(o.code(), Some(0), "{}", o.describe());
    assert!(!o.stdout.contains("hunter2"), "{}", o.describe());
    assert!(o.stderr.contains("rule=read.deny:"), "{}", o.describe());
}
