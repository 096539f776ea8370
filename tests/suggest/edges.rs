//! Learning edges: `mkdir -p` of existing directories, an audit under another root.

use super::*;

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

/// A refused connect to an AF_UNIX socket (a socket file outside the
/// workspace, an abstract name) is learnt as a `unix_sockets` entry (what
/// `--allow-unix-socket` sets), never as a `[write]` allow; the suggested
/// policy then lets the same connects through.
#[test]
fn suggest_learns_unix_sockets_not_write_rules() {
    use std::os::linux::net::SocketAddrExt;
    use std::os::unix::net::{SocketAddr, UnixListener};
    let td = TempDir::new("suggest-sockets");
    let (home, ws) = (td.join("home"), td.join("ws"));
    mkdir(&home);
    mkdir(&ws);
    let sock = td.path().canonicalize().unwrap().join("agent.sock");
    let _path_listener = UnixListener::bind(&sock).unwrap();
    let name = format!("fsguard-suggest-{}", std::process::id());
    let addr = SocketAddr::from_abstract_name(name.as_bytes()).unwrap();
    let _abstract_listener = UnixListener::bind_addr(&addr).unwrap();
    let script = format!(
        "import socket\n\
         for a in [{:?}, '\\0{name}']:\n    \
             c = socket.socket(socket.AF_UNIX)\n    \
             c.connect(a)\n    \
             print('connected', a.strip(chr(0)))\n",
        s(&sock)
    );
    let py = python().display().to_string();
    let cmd = [py.as_str(), "-c", script.as_str()];
    let log = td.join("audit.jsonl");
    audit(&home, &ws, &log, &["--no-landlock"], &cmd);
    let policy = td.join("policy.toml");
    let text = suggest(&home, &ws, &[&s(&log)], &policy);
    let at = format!("@{name}");
    assert!(
        text.contains(&format!("unix_sockets = [{:?}, {at:?}]", s(&sock))),
        "{text}"
    );
    // No write rule for the socket: the [write] list stays empty.
    assert!(text.contains("[write]\nallow = []"), "{text}");
    assert_eq!(text.matches(&s(&sock)).count(), 1, "{text}");
    let o = enforce(&home, &ws, &policy, &cmd);
    assert!(
        o.stdout.contains(&format!("connected {}", s(&sock)))
            && o.stdout.contains(&format!("connected {name}")),
        "{}",
        o.describe()
    );
}
