//! Issue 27 item 9, "Unix sockets are doors out": a `connect`, or a
//! datagram sent with `sendto`, `sendmsg` or `sendmmsg`, to an AF_UNIX
//! socket is a write to that socket. One outside the root is refused (with a
//! trace line naming the call, the socket and the rule) unless
//! `unix_sockets` names it; one inside the root works; abstract sockets are
//! refused by name; `fsguard run` strips the variables that name a refused
//! socket. Each case bare (`LD_PRELOAD`) and under `fsguard run`.

#![cfg(target_os = "linux")]

mod common;

use common::*;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};

/// Serves a stream socket `DIR/s` (answers SECRET-FROM-SOCKET), a datagram
/// socket `DIR/d` (appends each datagram to `DIR/got`), and the same as
/// abstract sockets `@TAG` (ABSTRACT-SECRET) and `@TAG-d` (to `DIR/got-abstract`).
const LISTENER: &str = r#"
import os, socket, sys, threading
d, tag = sys.argv[1], sys.argv[2]
def serve(s, reply):
    while True:
        c, _ = s.accept()
        c.sendall(reply)
        c.close()
def record(s, f):
    while True:
        m = s.recv(200)
        with open(f, "ab") as out:
            out.write(m + b"\n")
for name, reply in ((d + "/s", b"SECRET-FROM-SOCKET"), ("\0" + tag, b"ABSTRACT-SECRET")):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.bind(name)
    s.listen()
    threading.Thread(target=serve, args=(s, reply), daemon=True).start()
for name, f in ((d + "/d", d + "/got"), ("\0" + tag + "-d", d + "/got-abstract")):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    s.bind(name)
    threading.Thread(target=record, args=(s, f), daemon=True).start()
print("ready", flush=True)
sys.stdin.read()
"#;

/// The listener, run bare (it is the world outside); stopped on drop.
struct Listener {
    child: Child,
    dir: PathBuf,
    tag: String,
}

impl Listener {
    fn start(dir: &Path) -> Listener {
        let tag = format!("fsguard-test-{}-{}", std::process::id(), unique());
        let mut child = bare_cmd(python())
            .args(["-c", LISTENER])
            .arg(dir)
            .arg(&tag)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("python listener");
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        assert_eq!(line.trim(), "ready", "listener did not start");
        Listener {
            child,
            dir: dir.to_path_buf(),
            tag,
        }
    }

    fn stream(&self) -> PathBuf {
        self.dir.join("s")
    }

    fn dgram(&self) -> PathBuf {
        self.dir.join("d")
    }

    /// The datagrams it received on `DIR/d` (or `@TAG-d`), after a moment
    /// for the last to be written.
    fn got(&self, file: &str) -> String {
        std::thread::sleep(std::time::Duration::from_millis(200));
        std::fs::read_to_string(self.dir.join(file)).unwrap_or_default()
    }
}

impl Drop for Listener {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `td/ws` (the root) and `td/out` (outside it), with a listener in `out`.
fn layout(tag: &str) -> (TempDir, PathBuf, Listener) {
    let td = TempDir::new(tag);
    let ws = td.join("ws");
    mkdir(&ws);
    mkdir(&td.join("out"));
    let l = Listener::start(&td.join("out"));
    (td, ws, l)
}

/// How a case runs: bare `LD_PRELOAD` with `FSGUARD_ROOT=ws`, or `fsguard
/// run --root ws`, with extra policy (`unix_sockets` entries).
#[derive(Clone, Copy, Debug, PartialEq)]
enum Mode {
    Bare,
    Run,
}

const MODES: [Mode; 2] = [Mode::Bare, Mode::Run];

/// `prog args…` in `ws`, guarded as `mode` says, `allow` in `unix_sockets`.
fn guarded(mode: Mode, ws: &Path, allow: &[&str], prog: &Path, args: &[&str]) -> Out {
    match mode {
        Mode::Bare => {
            let mut vars = vec![("FSGUARD_ROOT", ws.to_str().unwrap().to_string())];
            if !allow.is_empty() {
                let cfg = ws.parent().unwrap().join("sockets.toml");
                let list: Vec<String> = allow.iter().map(|a| format!("{a:?}")).collect();
                std::fs::write(&cfg, format!("unix_sockets = [{}]\n", list.join(", "))).unwrap();
                vars.push(("FSGUARD_CONFIG", cfg.to_str().unwrap().to_string()));
            }
            let vars: Vec<(&str, &str)> = vars.iter().map(|(k, v)| (*k, v.as_str())).collect();
            run(guarded_cmd(prog, &vars).current_dir(ws).args(args))
        }
        Mode::Run => {
            let mut c = bare_cmd(cli());
            c.current_dir(ws).args(["run", "--root", "."]);
            for a in allow {
                c.args(["--allow-unix-socket", a]);
            }
            run(c.arg("--").arg(prog).args(args))
        }
    }
}

const CLIENT: &str = r#"
import socket, sys
c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
try:
    c.connect(sys.argv[1])
    print("read", c.recv(100).decode())
except OSError as e:
    print("connect", e.errno)
"#;

#[test]
fn unix_sockets_are_doors_out_a_python_client_is_refused_outside_the_root() {
    let (_td, ws, l) = layout("sock-py");
    let s = l.stream();
    // Unguarded, the door is open: the listener answers.
    let o = run(bare_cmd(python()).args(["-c", CLIENT]).arg(&s));
    assert_eq!(
        o.stdout.trim(),
        "read SECRET-FROM-SOCKET",
        "{}",
        o.describe()
    );
    for mode in MODES {
        let o = guarded(
            mode,
            &ws,
            &[],
            python(),
            &["-c", CLIENT, s.to_str().unwrap()],
        );
        assert_eq!(o.stdout.trim(), "connect 13", "{mode:?}: {}", o.describe());
        assert!(!o.stdout.contains("SECRET"), "{}", o.describe());
        assert_traces(&o, &[Expect::new("connect", "write", &s, "root")]);
        let line = &o.blocked()[0];
        let hint = format!("--allow-unix-socket {}", s.display());
        assert_eq!(line.field("hint"), Some(hint.as_str()), "{}", o.describe());
        if mode == Mode::Run {
            let summary = format!("fsguard: to allow: {hint}  (config: unix_sockets = [");
            assert!(o.stderr.contains(&summary), "{}", o.describe());
        }
    }
}

/// Every way to reach a socket by address: libc's calls, glibc's alias,
/// syscall(2).
const STREAM_MODES: [(&str, &str); 3] = [
    ("connect", "connect"),
    ("alias_connect", "connect"),
    ("sys_connect", "connect"),
];
const DGRAM_MODES: [(&str, &str); 6] = [
    ("sendto", "sendto"),
    ("sys_sendto", "sendto"),
    ("sendmsg", "sendmsg"),
    ("sys_sendmsg", "sendmsg"),
    ("sendmmsg", "sendmmsg"),
    ("sys_sendmmsg", "sendmmsg"),
];

#[test]
fn unix_sockets_are_doors_out_every_call_and_syscall_is_refused() {
    let (_td, ws, l) = layout("sock-calls");
    let prog = c_program("unix_sockets", &[]);
    for mode in MODES {
        for (m, call) in STREAM_MODES {
            let s = l.stream();
            let o = guarded(mode, &ws, &[], &prog, &[m, s.to_str().unwrap()]);
            assert_eq!(
                o.stdout.trim(),
                format!("{m} -1 13"),
                "{mode:?}: {}",
                o.describe()
            );
            assert_traces(&o, &[Expect::new(call, "write", &s, "root")]);
        }
        for (m, call) in DGRAM_MODES {
            let d = l.dgram();
            let o = guarded(mode, &ws, &[], &prog, &[m, d.to_str().unwrap()]);
            assert!(
                o.stdout.lines().any(|x| x == format!("{m} -1 13")),
                "{mode:?}: {}",
                o.describe()
            );
            assert_traces(&o, &[Expect::new(call, "write", &d, "root")]);
        }
    }
    assert_eq!(l.got("got"), "", "no datagram may arrive");
}

#[test]
fn unix_sockets_are_doors_out_the_allowed_ones_work() {
    let (_td, ws, l) = layout("sock-allowed");
    let prog = c_program("unix_sockets", &[]);
    let (s, d) = (l.stream(), l.dgram());
    let allow = [s.to_str().unwrap(), d.to_str().unwrap()];
    for mode in MODES {
        let o = guarded(mode, &ws, &allow, python(), &["-c", CLIENT, allow[0]]);
        assert_eq!(
            o.stdout.trim(),
            "read SECRET-FROM-SOCKET",
            "{mode:?}: {}",
            o.describe()
        );
        assert_no_blocked(&o);
        for (m, _) in STREAM_MODES {
            let o = guarded(mode, &ws, &allow, &prog, &[m, allow[0]]);
            assert_eq!(
                o.stdout,
                format!("{m} 0 0\n{m} got SECRET-FROM-SOCKET\n"),
                "{mode:?}: {}",
                o.describe()
            );
            assert_no_blocked(&o);
        }
        for (m, _) in DGRAM_MODES {
            let o = guarded(mode, &ws, &allow, &prog, &[m, allow[1]]);
            assert!(
                o.stdout
                    .lines()
                    .last()
                    .is_some_and(|x| x.starts_with(&format!("{m} ")) && !x.ends_with(" 13")),
                "{mode:?}: {}",
                o.describe()
            );
            assert_no_blocked(&o);
        }
    }
    let got = l.got("got");
    for (m, _) in DGRAM_MODES {
        let want = if m.ends_with("mmsg") {
            "MSG-sendmmsg".to_string()
        } else {
            format!("MSG-{m}")
        };
        assert!(got.lines().any(|x| x == want), "{m}: {got:?}");
    }
    assert_eq!(got.lines().count(), 12, "{got:?}");
}

/// A listener of the guarded program's own in the root, and the test
/// runner's: both reachable, through the checked socket file.
#[test]
fn unix_sockets_are_doors_out_sockets_in_the_root_stay_usable() {
    let (_td, ws, outside) = layout("sock-root");
    let inside_dir = ws.join("run");
    mkdir(&inside_dir);
    let inside = Listener::start(&inside_dir);
    let prog = c_program("unix_sockets", &[]);
    // A server and a client in one guarded program, by a relative path:
    // the peer's name is the listener's own, not /proc/self/fd/N.
    let own = r#"
import asyncio, socket
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind("own.sock")
s.listen()
c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
c.connect("own.sock")
print("peer", c.getpeername())
a, b = socket.socketpair()
a.send(b"x")
print("pair", b.recv(1))
async def main():
    return 7
print("asyncio", asyncio.run(main()))
"#;
    for mode in MODES {
        let o = guarded(mode, &ws, &[], python(), &["-c", own]);
        assert_eq!(
            o.stdout,
            "peer own.sock\npair b'x'\nasyncio 7\n",
            "{mode:?}: {}",
            o.describe()
        );
        assert_no_blocked(&o);
        let _ = std::fs::remove_file(ws.join("own.sock"));
        let s = inside.stream();
        let o = guarded(
            mode,
            &ws,
            &[],
            python(),
            &["-c", CLIENT, s.to_str().unwrap()],
        );
        assert_eq!(
            o.stdout.trim(),
            "read SECRET-FROM-SOCKET",
            "{mode:?}: {}",
            o.describe()
        );
        assert_no_blocked(&o);
        // One sendmmsg, two messages: the first to the root's listener
        // goes, the second (outside) is refused: one sent, as the kernel
        // counts a call cut short.
        let (d_in, d_out) = (inside.dgram(), outside.dgram());
        let o = guarded(
            mode,
            &ws,
            &[],
            &prog,
            &["sendmmsg", d_in.to_str().unwrap(), d_out.to_str().unwrap()],
        );
        assert_eq!(
            o.stdout,
            "sendmmsg msg_len 12\nsendmmsg msg_len 12345\nsendmmsg 1 0\n",
            "{mode:?}: {}",
            o.describe()
        );
        assert_traces(&o, &[Expect::new("sendmmsg", "write", &d_out, "root")]);
    }
    assert_eq!(inside.got("got"), "MSG-sendmmsg\nMSG-sendmmsg\n");
    assert_eq!(outside.got("got"), "");
}

#[test]
fn unix_sockets_are_doors_out_abstract_sockets_are_refused() {
    let (_td, ws, l) = layout("sock-abstract");
    let prog = c_program("unix_sockets", &[]);
    let name = format!("@{}", l.tag);
    let dname = format!("@{}-d", l.tag);
    let mine = format!("@{}-mine", l.tag);
    // Unguarded, it answers.
    let o = run(bare_cmd(&prog).args(["connect", &name]));
    assert_eq!(
        o.stdout,
        "connect 0 0\nconnect got ABSTRACT-SECRET\n",
        "{}",
        o.describe()
    );
    for mode in MODES {
        for (m, target) in [
            ("connect", &name),
            ("sys_connect", &name),
            ("sendto", &dname),
            ("sendmsg", &dname),
            ("sendmmsg", &dname),
            ("bind", &mine),
        ] {
            let o = guarded(mode, &ws, &[], &prog, &[m, target]);
            let last = o.stdout.lines().last().unwrap_or("");
            assert_eq!(last, format!("{m} -1 13"), "{mode:?}: {}", o.describe());
            let call = m.trim_start_matches("sys_");
            assert_traces(&o, &[Expect::new(call, "write", target, "abstract_socket")]);
        }
        // Named in unix_sockets: allowed (under run, with no scope).
        let o = guarded(mode, &ws, &[&name, &dname], &prog, &["connect", &name]);
        assert_eq!(
            o.stdout,
            "connect 0 0\nconnect got ABSTRACT-SECRET\n",
            "{mode:?}: {}",
            o.describe()
        );
        assert_no_blocked(&o);
    }
    assert_eq!(l.got("got-abstract"), "");
    // A static program, which the library cannot see: under run, the
    // kernel's abstract-socket scope refuses it (Landlock ABI 6).
    if landlock_abi() < 6 {
        eprintln!("skipped the static case: this kernel has no Landlock abstract-socket scope");
        return;
    }
    let stat = c_program("unix_sockets", &["-static"]);
    let o = guarded(Mode::Run, &ws, &[], &stat, &["connect", &name]);
    assert_eq!(o.stdout.trim(), "connect -1 1", "{}", o.describe());
    let o = guarded(Mode::Run, &ws, &[], &stat, &["sendto", &dname]);
    assert_eq!(o.stdout.trim(), "sendto -1 1", "{}", o.describe());
    assert_eq!(l.got("got-abstract"), "");
    let o = guarded(Mode::Run, &ws, &[&name], &stat, &["connect", &name]);
    assert_eq!(
        o.stdout,
        "connect 0 0\nconnect got ABSTRACT-SECRET\n",
        "{}",
        o.describe()
    );
}

#[test]
fn unix_sockets_are_doors_out_their_variables_are_stripped_under_run() {
    let (td, ws, l) = layout("sock-env");
    let s = l.stream();
    let inside = ws.join("agent.sock");
    let env_of = |allow: &[&str]| {
        let mut c = bare_cmd(cli());
        c.current_dir(&ws).args(["run", "--root", "."]);
        for a in allow {
            c.args(["--allow-unix-socket", a]);
        }
        c.env("SSH_AUTH_SOCK", &s)
            .env(
                "DBUS_SESSION_BUS_ADDRESS",
                format!("unix:path={}", s.display()),
            )
            .env("GPG_AGENT_INFO", format!("{}:1:1", inside.display()))
            .env("DOCKER_HOST", "unix:///var/run/docker.sock")
            .env("DBUS_SYSTEM_BUS_ADDRESS", "tcp:host=localhost,port=1");
        run(c.args(["--", "env"]))
    };
    let o = env_of(&[]);
    let vars: Vec<&str> = o
        .stdout
        .lines()
        .filter_map(|l| l.split_once('='))
        .map(|(k, _)| k)
        .collect();
    for gone in ["SSH_AUTH_SOCK", "DBUS_SESSION_BUS_ADDRESS", "DOCKER_HOST"] {
        assert!(!vars.contains(&gone), "{gone}: {}", o.describe());
    }
    // A socket in the root, an address of no AF_UNIX socket: kept.
    for kept in ["GPG_AGENT_INFO", "DBUS_SYSTEM_BUS_ADDRESS"] {
        assert!(vars.contains(&kept), "{kept}: {}", o.describe());
    }
    let said: Vec<&str> = o
        .stderr
        .lines()
        .filter(|l| l.contains("removed from"))
        .collect();
    assert_eq!(said.len(), 1, "{}", o.describe());
    assert!(
        said[0].contains("SSH_AUTH_SOCK, DBUS_SESSION_BUS_ADDRESS, DOCKER_HOST")
            || said[0].contains("SSH_AUTH_SOCK")
                && said[0].contains("DBUS_SESSION_BUS_ADDRESS")
                && said[0].contains("DOCKER_HOST"),
        "{}",
        o.describe()
    );
    // Allowed: kept, and nothing said about it.
    let o = env_of(&[s.to_str().unwrap()]);
    assert!(
        o.stdout
            .lines()
            .any(|l| l == format!("SSH_AUTH_SOCK={}", s.display())),
        "{}",
        o.describe()
    );
    assert!(
        o.stdout.contains("DBUS_SESSION_BUS_ADDRESS="),
        "{}",
        o.describe()
    );
    assert!(!o.stdout.contains("DOCKER_HOST="), "{}", o.describe());
    drop(td);
}
