//! The presets that let real test suites run under `fsguard run --root`
//! (issue 14): `ipc` (POSIX shared memory of the guarded tree), `proc`
//! (what `ps` shows of any process, never another process's secrets),
//! `cache` (tools' caches in the private TMPDIR), and the hint a refusal
//! carries.

// LD_PRELOAD, /proc and /dev/shm: Linux only.
#![cfg(target_os = "linux")]

mod common;

use common::*;
use std::path::Path;
use std::process::Command;

/// `fsguard run --root WS [EXTRA...] -- python3 -c CODE ARGS...`, run in WS.
fn guarded_py(ws: &Path, extra: &[&str], code: &str, args: &[&str]) -> Command {
    let mut c = bare_cmd(cli());
    c.args(["run", "--root", ws.to_str().unwrap()]);
    c.args(extra);
    c.arg("--").arg(python()).args(["-c", code]).args(args);
    c.current_dir(ws);
    c
}

const SHM_AND_POOL: &str = r#"
import os, sys
from multiprocessing import shared_memory, Process
from concurrent.futures import ProcessPoolExecutor

def square(x):
    return x * x

def child(name):
    m = shared_memory.SharedMemory(name=name)
    m.buf[1] = m.buf[0] + 1
    m.close()

if __name__ == "__main__":
    m = shared_memory.SharedMemory(create=True, size=64)
    print("name", m.name)
    m.buf[0] = 41
    p = Process(target=child, args=(m.name,))
    p.start(); p.join()
    print("child wrote", m.buf[1], "exit", p.exitcode)
    try:
        os.stat("/dev/shm/" + m.name.lstrip("/"))
        print("raw name exists")
    except FileNotFoundError:
        print("raw name absent")
    m.close(); m.unlink()
    with ProcessPoolExecutor(2) as ex:
        print("pool", list(ex.map(square, range(5))))
"#;

#[test]
fn shared_memory_and_process_pool_under_a_root() {
    if !Path::new("/dev/shm").is_dir() {
        eprintln!("NOTE: no /dev/shm here; nothing to test");
        return;
    }
    let td = TempDir::new("ipc");
    let ws = td.join("ws");
    mkdir(&ws);
    let before = snapshot(&ws);
    let o = run(&mut guarded_py(&ws, &[], SHM_AND_POOL, &[]));
    assert_eq!(o.code(), Some(0), "{}", o.describe());
    assert_no_blocked(&o);
    assert!(
        o.stdout.contains("child wrote 42 exit 0"),
        "{}",
        o.describe()
    );
    assert!(
        o.stdout.contains("pool [0, 1, 4, 9, 16]"),
        "{}",
        o.describe()
    );
    // The object lived in the tree's namespace, not under the name the
    // program chose (another process's object of that name is not reached).
    assert!(o.stdout.contains("raw name absent"), "{}", o.describe());
    let name = o
        .stdout
        .lines()
        .find_map(|l| l.strip_prefix("name "))
        .unwrap()
        .trim_start_matches('/')
        .to_string();
    assert_eq!(shm_entries(&name), Vec::<String>::new(), "unlinked at exit");
    assert_eq!(snapshot_diff(&before, &snapshot(&ws)), None);

    // Switched off, the same program is refused as before, with a trace
    // line and a hint.
    let cfg = td.join("off.toml");
    write_file(&cfg, "ipc = false\n", 0o644);
    let o = run(&mut guarded_py(
        &ws,
        &["--config", cfg.to_str().unwrap()],
        SHM_AND_POOL,
        &[],
    ));
    assert_ne!(o.code(), Some(0), "{}", o.describe());
    let b = o.blocked();
    let t = b
        .iter()
        .find(|t| t.call == "shm_open")
        .unwrap_or_else(|| panic!("no shm_open refusal:\n{}", o.describe()));
    assert_eq!(t.access, "write");
    assert_eq!(t.field("rule"), Some("root"));
    let path = t.field("path").unwrap();
    assert!(path.starts_with("/dev/shm/psm_"), "{}", t.raw);
    // The name's random part (secrets.token_hex) as a glob: a hint the
    // next run can use (issue 31 item 2).
    assert_eq!(
        t.field("hint"),
        Some("--allow-write '/dev/shm/psm_*'"),
        "{}",
        t.raw
    );
}

#[test]
fn leftover_shared_memory_is_removed_at_exit() {
    if !Path::new("/dev/shm").is_dir() {
        eprintln!("NOTE: no /dev/shm here; nothing to test");
        return;
    }
    let td = TempDir::new("ipc-left");
    let ws = td.join("ws");
    mkdir(&ws);
    let name = format!("fsguard-test-left-{}", std::process::id());
    // shm_open without the resource tracker: nothing unlinks it.
    let code = r#"
import os, re, sys, _posixshmem
fd = _posixshmem.shm_open("/" + sys.argv[1], os.O_CREAT | os.O_EXCL | os.O_RDWR, 0o600)
os.write(fd, b"x")
# The policy (and its tag) reaches the program in no variable: the kernel
# names the object the fd holds.
path = os.readlink(f"/proc/self/fd/{fd}")
assert re.fullmatch(r"/dev/shm/fsguard\.[0-9A-Za-z]+\." + re.escape(sys.argv[1]), path), path
print("in namespace", os.stat(path).st_size)
"#;
    let o = run(&mut guarded_py(&ws, &[], code, &[&name]));
    assert_eq!(o.code(), Some(0), "{}", o.describe());
    assert_no_blocked(&o);
    assert!(o.stdout.contains("in namespace 1"), "{}", o.describe());
    assert_eq!(shm_entries(&name), Vec::<String>::new(), "{}", o.describe());
}

#[test]
fn another_processs_shared_memory_stays_refused() {
    if !Path::new("/dev/shm").is_dir() {
        eprintln!("NOTE: no /dev/shm here; nothing to test");
        return;
    }
    let name = format!("fsguard-test-other-{}", std::process::id());
    let raw = Path::new("/dev/shm").join(&name);
    write_file(&raw, "theirs", 0o600);
    let td = TempDir::new("ipc-other");
    let ws = td.join("ws");
    mkdir(&ws);
    let code = r#"
import sys
from multiprocessing import shared_memory
for create in (False,):
    try:
        m = shared_memory.SharedMemory(name=sys.argv[1])
        print("opened", bytes(m.buf[:6]))
    except OSError as e:
        print("errno", e.errno)
try:
    open("/dev/shm/" + sys.argv[1], "rb").read()
    print("read ok")
except OSError as e:
    print("read errno", e.errno)
"#;
    let o = run(&mut guarded_py(&ws, &[], code, &[&name]));
    let content = std::fs::read_to_string(&raw);
    let _ = std::fs::remove_file(&raw);
    assert_eq!(o.code(), Some(0), "{}", o.describe());
    assert!(
        o.stdout.contains("errno 13") && o.stdout.contains("read errno 13"),
        "{}",
        o.describe()
    );
    let p = raw.to_str().unwrap();
    assert_traces(
        &o,
        &[
            Expect::new("shm_open", "write", p, "root"),
            Expect::new("open|openat|open64", "read", p, "root"),
        ],
    );
    assert_eq!(content.unwrap(), "theirs", "nothing changed on disk");
}

#[test]
fn liveness_check_reads_a_childs_proc_stat() {
    let td = TempDir::new("proc-live");
    let ws = td.join("ws");
    mkdir(&ws);
    // A lock holder's liveness check, as filelock-style code does it.
    let code = r#"
import os, subprocess
p = subprocess.Popen(["sleep", "5"])
with open(f"/proc/{p.pid}/stat") as f:
    fields = f.read().rsplit(")", 1)[1].split()
print("state", fields[0] in "RSD", "ppid", int(fields[1]) == os.getpid())
with open(f"/proc/{p.pid}/status") as f:
    print("status", any(l.startswith("PPid:") for l in f))
print("pids listed", str(p.pid) in os.listdir("/proc"))
with open(f"/proc/self/status") as f:
    print("self", f.readline().startswith("Name:"))
p.kill(); p.wait()
"#;
    let o = run(&mut guarded_py(&ws, &[], code, &[]));
    assert_eq!(o.code(), Some(0), "{}", o.describe());
    assert_no_blocked(&o);
    for want in [
        "state True ppid True",
        "status True",
        "pids listed True",
        "self True",
    ] {
        assert!(o.stdout.contains(want), "{want}:\n{}", o.describe());
    }

    // proc = false: the child's stat is outside the root again.
    let cfg = td.join("off.toml");
    write_file(&cfg, "proc = false\n", 0o644);
    let o = run(&mut guarded_py(
        &ws,
        &["--config", cfg.to_str().unwrap()],
        code,
        &[],
    ));
    assert_ne!(o.code(), Some(0), "{}", o.describe());
    let b = o.blocked();
    assert!(
        b.iter()
            .any(|t| t.field("path").is_some_and(|p| p.ends_with("/stat"))
                && t.field("rule") == Some("root")),
        "{}",
        o.describe()
    );
}

#[test]
fn another_processs_environ_is_refused() {
    let td = TempDir::new("proc-environ");
    let ws = td.join("ws");
    mkdir(&ws);
    // A process started outside the guard, holding a secret in its
    // environment.
    let mut outside = bare_cmd("sleep");
    outside.arg("30").env("FSGUARD_TEST_SECRET", "hunter2");
    let mut child = outside.spawn().unwrap();
    let pid = child.id().to_string();
    let code = r#"
import sys
pid = sys.argv[1]
for entry in ("environ", "mem", "maps", "cwd/x", "stat", "cmdline"):
    try:
        with open(f"/proc/{pid}/{entry}", "rb") as f:
            data = f.read(4096)
        print(entry, "ok", b"hunter2" in data)
    except OSError as e:
        print(entry, "errno", e.errno)
"#;
    let o = run(&mut guarded_py(&ws, &[], code, &[&pid]));
    let _ = child.kill();
    let _ = child.wait();
    assert_eq!(o.code(), Some(0), "{}", o.describe());
    for want in [
        "environ errno 13",
        "mem errno 13",
        "maps errno 13",
        "stat ok False",
        "cmdline ok False",
    ] {
        assert!(o.stdout.contains(want), "{want}:\n{}", o.describe());
    }
    assert!(!o.stdout.contains("hunter2") && !o.stderr.contains("hunter2"));
    let b = o.blocked();
    for entry in ["environ", "mem", "maps"] {
        let path = format!("/proc/{pid}/{entry}");
        let t = b
            .iter()
            .find(|t| t.field("path") == Some(path.as_str()))
            .unwrap_or_else(|| panic!("no refusal of {path}:\n{}", o.describe()));
        assert_eq!((t.access.as_str(), t.field("rule")), ("read", Some("root")));
    }
}

#[test]
fn a_refusal_names_the_flag_that_would_allow_it() {
    let td = TempDir::new("hint");
    let ws = td.join("ws");
    let home = td.join("home");
    mkdir(&ws);
    mkdir(&home);
    mkdir(&home.join(".ssh"));
    mkdir(&home.join(".cache"));
    let code = r#"
import os, sys
home = os.environ["HOME"]
for p in (home + "/.cache/sometool/v1/data.bin", home + "/.ssh/known_hosts"):
    try:
        os.makedirs(os.path.dirname(p), exist_ok=True)
        open(p, "w").write("x")
        print("wrote", p)
    except OSError as e:
        print("errno", e.errno)
"#;
    let log = td.join("trace.json");
    let mut c = guarded_py(
        &ws,
        &["--log-format", "json", "--log", log.to_str().unwrap()],
        code,
        &[],
    );
    c.env("HOME", &home);
    let before = snapshot(&home);
    let o = run(&mut c);
    assert_eq!(o.code(), Some(0), "{}", o.describe());
    assert_eq!(snapshot_diff(&before, &snapshot(&home)), None);
    let json = std::fs::read_to_string(&log).unwrap();
    let tool = home.join(".cache/sometool");
    let lines: Vec<&str> = json.lines().collect();
    let cache_line = lines
        .iter()
        .find(|l| l.contains(".cache/sometool"))
        .unwrap_or_else(|| panic!("no refusal under ~/.cache:\n{json}"));
    assert!(
        cache_line.contains("\"hint\":\"--allow-write ~/.cache/sometool\""),
        "{cache_line}"
    );
    let ssh_line = lines
        .iter()
        .find(|l| l.contains("/.ssh/"))
        .unwrap_or_else(|| panic!("no refusal under ~/.ssh:\n{json}"));
    assert!(ssh_line.contains("\"rule\":\"secrets:"), "{ssh_line}");
    assert!(
        !ssh_line.contains("\"hint\":"),
        "never a hint to loosen secrets: {ssh_line}"
    );
    // The run summary says the same, with the config line.
    assert!(
        o.stderr.contains(
            "fsguard: to allow: --allow-write ~/.cache/sometool  \
             (config: [write] allow = [\"~/.cache/sometool\"])"
        ),
        "{}",
        o.describe()
    );
    assert!(!o.stderr.contains("to allow: --allow-write ~/.ssh"));

    // Text trace lines carry it as a quoted key=value field; and the
    // hinted flag, given, allows exactly that access.
    let mut c = guarded_py(&ws, &["--allow-write", "~/.cache/sometool"], code, &[]);
    c.env("HOME", &home);
    let o = run(&mut c);
    assert_eq!(o.code(), Some(0), "{}", o.describe());
    assert!(o.stdout.contains("wrote"), "{}", o.describe());
    assert_eq!(
        std::fs::read_to_string(tool.join("v1/data.bin")).unwrap(),
        "x"
    );
    let b = o.blocked();
    assert!(!b.is_empty(), "{}", o.describe());
    for t in &b {
        assert!(t.field("path").unwrap().contains("/.ssh"), "{}", t.raw);
        assert!(
            t.field("rule").unwrap().starts_with("secrets:"),
            "{}",
            t.raw
        );
        assert_eq!(t.field("hint"), None, "{}", t.raw);
    }
    let mut c = guarded_py(&ws, &[], code, &[]);
    c.env("HOME", &home);
    std::fs::remove_dir_all(home.join(".cache/sometool")).unwrap();
    let o = run(&mut c);
    let t = o
        .blocked()
        .into_iter()
        .find(|t| t.field("path").is_some_and(|p| p.contains(".cache")))
        .unwrap_or_else(|| panic!("{}", o.describe()));
    assert_eq!(
        t.field("hint"),
        Some("--allow-write ~/.cache/sometool"),
        "{}",
        t.raw
    );
}

#[test]
fn cache_preset_points_caches_into_the_private_tmpdir() {
    let td = TempDir::new("cache");
    let ws = td.join("ws");
    mkdir(&ws);
    let code = r#"
import os
tmp = os.environ["TMPDIR"]
for v in ("XDG_CACHE_HOME", "PIP_CACHE_DIR", "VIRTUALENV_OVERRIDE_APP_DATA", "CARGO_HOME"):
    d = os.environ.get(v, "")
    print(v, d.startswith(tmp + "/"), os.path.isdir(d))
os.makedirs(os.environ["XDG_CACHE_HOME"] + "/tool", exist_ok=True)
open(os.environ["XDG_CACHE_HOME"] + "/tool/f", "w").write("x")
print("cache write ok")
"#;
    let home = td.join("home");
    mkdir(&home.join(".cargo/registry"));
    write_file(&home.join(".cargo/.package-cache"), "", 0o644);
    let mut c = guarded_py(&ws, &[], code, &[]);
    c.env("HOME", &home)
        .env("XDG_CACHE_HOME", home.join(".cache"))
        .env_remove("CARGO_HOME");
    let o = run(&mut c);
    assert_eq!(o.code(), Some(0), "{}", o.describe());
    assert_no_blocked(&o);
    for v in [
        "XDG_CACHE_HOME",
        "PIP_CACHE_DIR",
        "VIRTUALENV_OVERRIDE_APP_DATA",
        "CARGO_HOME",
    ] {
        assert!(
            o.stdout.contains(&format!("{v} True True")),
            "{v}:\n{}",
            o.describe()
        );
    }
    assert!(!home.join(".cache").exists(), "the real cache is untouched");

    // cache = false: the caller's variables stand, and writing there is
    // refused (outside the root).
    let cfg = td.join("off.toml");
    write_file(&cfg, "cache = false\n", 0o644);
    let mut c = guarded_py(&ws, &["--config", cfg.to_str().unwrap()], code, &[]);
    c.env("HOME", &home)
        .env("XDG_CACHE_HOME", home.join(".cache"))
        .env_remove("CARGO_HOME");
    let o = run(&mut c);
    assert!(
        o.stdout.contains("XDG_CACHE_HOME False"),
        "{}",
        o.describe()
    );
    assert!(!o.stdout.contains("cache write ok"), "{}", o.describe());
    assert!(!home.join(".cache/tool/f").exists());
}

#[test]
fn check_shows_the_presets_and_explain_the_hint() {
    let td = TempDir::new("check");
    let ws = td.join("ws");
    mkdir(&ws);
    let o = run(bare_cmd(cli()).args(["check", "--root", ws.to_str().unwrap()]));
    assert_eq!(o.code(), Some(0), "{}", o.describe());
    for want in [
        "\nipc = true\n",
        "\nproc = true\n",
        "\ncache = true\n",
        "# ipc (on): ",
        "/dev/shm/fsguard.",
        "# proc (on): ",
        "# cache (on): ",
    ] {
        assert!(o.stdout.contains(want), "{want:?}:\n{}", o.describe());
    }
    let cfg = td.join("off.toml");
    write_file(&cfg, "ipc = false\nproc = false\ncache = false\n", 0o644);
    let o = run(bare_cmd(cli()).args([
        "check",
        "--config",
        cfg.to_str().unwrap(),
        "--root",
        ws.to_str().unwrap(),
    ]));
    assert_eq!(o.code(), Some(0), "{}", o.describe());
    for want in [
        "\nipc = false\n",
        "# ipc (off)",
        "# proc (off)",
        "# cache (off)",
    ] {
        assert!(o.stdout.contains(want), "{want:?}:\n{}", o.describe());
    }
    // explain: the verdict, the rule, and what would allow it.
    let out = td.join("outside");
    let o = run(bare_cmd(cli()).args([
        "explain",
        "--json",
        "--root",
        ws.to_str().unwrap(),
        "write",
        out.to_str().unwrap(),
    ]));
    assert_eq!(o.code(), Some(1), "{}", o.describe());
    let want = format!("\"hint\":\"--allow-write {}\"", out.display());
    assert!(o.stdout.contains(&want), "{}", o.describe());
    let o = run(bare_cmd(cli()).args([
        "explain",
        "--root",
        ws.to_str().unwrap(),
        "read",
        "/proc/1/stat",
    ]));
    assert_eq!(o.code(), Some(0), "{}", o.describe());
    assert_eq!(o.stdout, "allow read /proc/1/stat rule=proc\n");
    let o = run(bare_cmd(cli()).args([
        "explain",
        "--root",
        ws.to_str().unwrap(),
        "read",
        "/proc/1/environ",
    ]));
    assert_eq!(o.code(), Some(1), "{}", o.describe());
    assert!(o.stdout.starts_with("deny read /proc/1/environ rule=root"));
}
