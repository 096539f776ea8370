use super::*;
use crate::Lists as L;

fn base() -> Settings {
    Settings {
        secret_paths: vec!["/home/u/.ssh".into(), "/home/u/.cargo/credentials*".into()],
        system_paths: vec!["/usr".into(), "/etc/hosts".into()],
        ..Settings::default()
    }
}

fn rule(p: &Policy, a: Access, path: &str) -> (bool, String) {
    let d = p.decide(a, path.as_bytes());
    (d.allowed, d.rule.to_string())
}

#[test]
fn step1_deny_always_and_secrets_beat_allow() {
    let mut s = base();
    s.read = L {
        allow: vec!["/home/u".into()],
        deny: vec![],
        deny_always: vec!["/**/*.pem".into()],
    };
    let p = Policy::new(s).unwrap();
    assert_eq!(
        rule(&p, Access::Read, "/home/u/k.pem"),
        (false, "read.deny_always:\"/**/*.pem\"".into())
    );
    assert_eq!(
        rule(&p, Access::Read, "/home/u/.ssh/id_rsa"),
        (false, "secrets:\"/home/u/.ssh\"".into())
    );
    assert_eq!(
        rule(&p, Access::Write, "/home/u/.cargo/credentials.toml"),
        (false, "secrets:\"/home/u/.cargo/credentials*\"".into())
    );
    assert_eq!(
        rule(&p, Access::Exec, "/home/u/a.pem"),
        (false, "read.deny_always:\"/**/*.pem\"".into()),
        "exec uses the read lists"
    );
    assert!(rule(&p, Access::Read, "/home/u/x").0);
    assert!(p.protected(b"/home/u/k.pem").is_some());
    assert_eq!(p.protected(b"/home/u/k.txt"), None);
    assert!(
        p.protected(b"/home/u").is_some(),
        "a directory holding secrets moves them"
    );
    assert_eq!(p.protected(b"/home/u/src"), None);
}

#[test]
fn steps2_3_allow_inside_deny_inside_allow() {
    let mut s = base();
    s.root = Some("/ws".into());
    s.read = L {
        allow: vec!["/ws/**/.env.example".into()],
        deny: vec!["/ws/**/.env*".into()],
        deny_always: vec![],
    };
    let p = Policy::new(s).unwrap();
    assert!(!rule(&p, Access::Read, "/ws/a/.env").0);
    assert_eq!(
        rule(&p, Access::Read, "/ws/a/.env").1,
        "read.deny:\"/ws/**/.env*\""
    );
    assert!(rule(&p, Access::Read, "/ws/a/.env.example").0);
    assert_eq!(
        rule(&p, Access::Read, "/ws/a/main.py"),
        (true, "root".into())
    );
    assert_eq!(
        rule(&p, Access::Write, "/ws/a/.env"),
        (true, "root".into()),
        "read rules do not restrict writes"
    );
}

#[test]
fn step4_devices_and_anonymous_objects() {
    let mut s = base();
    s.readonly = true;
    s.root = Some("/ws".into());
    let p = Policy::new(s).unwrap();
    for path in [
        "/dev/null",
        "/dev/pts/3",
        "/dev/tty",
        "pipe:[1234]",
        "socket:[9]",
        "anon_inode:[eventfd]",
    ] {
        assert_eq!(
            rule(&p, Access::Write, path),
            (true, "device".into()),
            "{path}"
        );
    }
    assert!(!rule(&p, Access::Write, "/dev/sda").0);
    assert!(!rule(&p, Access::Write, "/dev/nullx").0);
}

#[test]
fn step5_readonly() {
    let mut s = base();
    s.readonly = true;
    let p = Policy::new(s).unwrap();
    assert_eq!(
        rule(&p, Access::Write, "/tmp/x"),
        (false, "readonly".into())
    );
    assert_eq!(rule(&p, Access::Read, "/tmp/x"), (true, "default".into()));
}

#[test]
fn step6_root_and_system() {
    let mut s = base();
    s.root = Some("/ws".into());
    let p = Policy::new(s.clone()).unwrap();
    assert_eq!(rule(&p, Access::Write, "/ws/a"), (true, "root".into()));
    assert_eq!(rule(&p, Access::Write, "/ws"), (true, "root".into()));
    assert_eq!(rule(&p, Access::Write, "/ws2/a"), (false, "root".into()));
    assert_eq!(
        rule(&p, Access::Read, "/etc/passwd"),
        (false, "root".into())
    );
    assert_eq!(
        rule(&p, Access::Read, "/usr/lib/x"),
        (true, "system:\"/usr\"".into())
    );
    assert!(rule(&p, Access::Exec, "/usr/bin/sh").0);
    assert_eq!(
        rule(&p, Access::Write, "/usr/lib/x"),
        (false, "root".into())
    );
    let own = format!("/proc/{}/maps", std::process::id());
    assert!(rule(&p, Access::Read, &own).0);
    assert_eq!(
        rule(&p, Access::Read, "/proc/1/environ").0,
        std::process::id() == 1
    );
    assert_eq!(
        rule(&p, Access::Read, "/etc"),
        (true, "system:\"/etc (names)\"".into()),
        "a listing of /etc, never its files"
    );
    assert!(!rule(&p, Access::Write, "/etc").0);
    s.system = false;
    let p = Policy::new(s).unwrap();
    assert_eq!(rule(&p, Access::Read, "/usr/lib/x"), (false, "root".into()));
    assert!(!rule(&p, Access::Read, "/etc").0);
}

#[test]
fn step7_default_allows() {
    let p = Policy::new(base()).unwrap();
    assert_eq!(rule(&p, Access::Write, "/tmp/x"), (true, "default".into()));
}

#[test]
fn step7_an_allow_list_refuses_the_rest() {
    let mut s = base();
    s.write.allow = vec!["/proj".into()];
    let p = Policy::new(s.clone()).unwrap();
    assert_eq!(
        rule(&p, Access::Write, "/proj/a"),
        (true, "write.allow:\"/proj\"".into())
    );
    assert_eq!(
        rule(&p, Access::Write, "/home/u/.bashrc"),
        (false, "not_allowed".into())
    );
    assert_eq!(
        rule(&p, Access::Read, "/home/u/.bashrc"),
        (true, "default".into()),
        "a write allow-list does not confine reads"
    );
    s.read.allow = vec!["/data".into()];
    let p = Policy::new(s).unwrap();
    assert!(p.confines_reads());
    assert_eq!(
        rule(&p, Access::Read, "/etc/x"),
        (false, "not_allowed".into())
    );
    assert_eq!(
        rule(&p, Access::Read, "/usr/lib/x"),
        (true, "system:\"/usr\"".into())
    );
    assert!(rule(&p, Access::Write, "/dev/null").0);
}

#[test]
fn writable_is_readable_and_tmpdir() {
    let mut s = base();
    s.root = Some("/ws".into());
    s.readonly = true;
    s.write.allow = vec!["/tmp".into()];
    s.read.deny = vec!["/tmp/hidden".into()];
    s.tmpdir = Some("/var/tmp/fsguard-1".into());
    let p = Policy::new(s).unwrap();
    assert_eq!(
        rule(&p, Access::Read, "/tmp/f"),
        (true, "write.allow:\"/tmp\"".into())
    );
    assert!(!rule(&p, Access::Read, "/tmp/hidden/f").0);
    for a in [Access::Read, Access::Write] {
        assert_eq!(rule(&p, a, "/var/tmp/fsguard-1/x"), (true, "tmpdir".into()));
    }
    assert_eq!(
        rule(&p, Access::Write, "/var/tmp/x"),
        (false, "readonly".into())
    );
    assert!(!rule(&p, Access::Read, "/home/u/.ssh/x").0);
}

#[test]
fn moves_name_the_protection_that_fired() {
    let mut s = base();
    s.read.deny_always = vec!["/ws/**/*.pem".into()];
    let p = Policy::new(s).unwrap();
    assert_eq!(
        p.protected(b"/ws/k.pem").map(|r| r.to_string()),
        Some("read.deny_always(move):\"/ws/**/*.pem\"".into())
    );
    assert_eq!(
        p.protected(b"/home/u/.ssh/id").map(|r| r.to_string()),
        Some("secrets(move):\"/home/u/.ssh\"".into())
    );
    assert_eq!(p.protected(b"/ws/k.txt"), None);
}

#[test]
fn the_log_file_beats_every_allow() {
    let mut s = base();
    s.root = Some("/ws".into());
    s.write.allow = vec!["/ws/**".into()];
    s.mode = Mode::Audit;
    s.log.target = LogTarget::File("/ws/logs/trace.json".into());
    let p = Policy::new(s).unwrap();
    assert_eq!(
        rule(&p, Access::Write, "/ws/logs/trace.json"),
        (false, "log".into())
    );
    assert_eq!(
        rule(&p, Access::Read, "/ws/logs/trace.json"),
        (true, "write.allow:\"/ws/**\"".into()),
        "the program may read its log"
    );
    assert!(rule(&p, Access::Write, "/ws/logs/trace.json2").0);
    // Moving the log, or a directory holding it, is a change to it.
    for dir in ["/ws/logs/trace.json", "/ws/logs", "/ws", "/"] {
        assert_eq!(p.protected(dir.as_bytes()), Some(Rule::Log), "{dir}");
    }
    assert_eq!(p.protected(b"/ws/other"), None);
    for special in ["/dev/null", "/dev/stderr", "/proc/self/fd/2"] {
        let mut s = base();
        s.log.target = LogTarget::File(special.into());
        let p = Policy::new(s).unwrap();
        assert_eq!(p.log_file(), None, "{special}");
        assert!(rule(&p, Access::Write, special).0, "{special}");
    }
}

#[test]
fn quoting_in_rules() {
    let mut s = base();
    s.write.deny = vec!["/a \"b\"".into()];
    let p = Policy::new(s).unwrap();
    assert_eq!(
        rule(&p, Access::Write, "/a \"b\"/x").1,
        "write.deny:\"/a \\\"b\\\"\""
    );
}

#[test]
fn proc_preset_public_facts_of_any_pid_never_secrets() {
    let mut s = base();
    s.root = Some("/ws".into());
    let p = Policy::new(s.clone()).unwrap();
    for ok in [
        "/proc",
        "/proc/1",
        "/proc/1/stat",
        "/proc/1/status",
        "/proc/1/cmdline",
        "/proc/1/task",
        "/proc/1/task/7/stat",
    ] {
        assert_eq!(rule(&p, Access::Read, ok), (true, "proc".into()), "{ok}");
    }
    for no in [
        "/proc/1/environ",
        "/proc/1/mem",
        "/proc/1/maps",
        "/proc/1/fd/3",
        "/proc/1/cwd",
        "/proc/1/task/7/environ",
        "/proc/1/stat/x",
        "/proc/self1/stat",
        "/proc/sys/kernel/hostname",
    ] {
        assert_eq!(rule(&p, Access::Read, no), (false, "root".into()), "{no}");
    }
    assert!(!rule(&p, Access::Write, "/proc/1/stat").0);
    assert!(!rule(&p, Access::Exec, "/proc/1/stat").0);
    s.proc = false;
    let p = Policy::new(s).unwrap();
    assert!(!rule(&p, Access::Read, "/proc/1/stat").0);
}

#[test]
fn ipc_preset_allows_the_trees_namespace_only() {
    let mut s = base();
    s.root = Some("/ws".into());
    s.readonly = true;
    s.ipc_tag = Some("1a2b".into());
    let p = Policy::new(s.clone()).unwrap();
    assert_eq!(p.ipc_prefix(), Some(&b"fsguard.1a2b."[..]));
    for a in [Access::Read, Access::Write] {
        for ok in [
            "/dev/shm/fsguard.1a2b.psm_1",
            "/dev/shm/sem.fsguard.1a2b.mp-x",
        ] {
            assert_eq!(rule(&p, a, ok), (true, "ipc".into()), "{ok}");
        }
        for no in [
            "/dev/shm/psm_1",
            "/dev/shm/fsguard.1a2c.psm_1",
            "/dev/shm/fsguard.1a2b.",
            "/dev/shm/sem.mp-x",
        ] {
            assert!(!rule(&p, a, no).0, "{no}");
        }
    }
    s.ipc = false;
    let p = Policy::new(s.clone()).unwrap();
    assert_eq!(p.ipc_prefix(), None);
    assert!(!rule(&p, Access::Write, "/dev/shm/fsguard.1a2b.x").0);
    s.ipc = true;
    s.ipc_tag = Some("../x".into());
    assert!(Policy::new(s).is_err(), "a tag is a name, never a path");
}

#[test]
fn hints_name_the_allow_rule_never_for_deny_always_or_secrets() {
    let mut s = base();
    s.root = Some("/ws".into());
    s.home = Some("/home/u".into());
    s.write.deny_always = vec!["/ws/.git/hooks".into()];
    let p = Policy::new(s).unwrap();
    let hint = |a: Access, path: &str| {
        let d = p.decide(a, path.as_bytes());
        assert!(!d.allowed, "{path}");
        p.hint(a, path.as_bytes(), d.rule)
            .map(|h| (h.to_string(), h.toml()))
    };
    assert_eq!(
        hint(Access::Write, "/home/u/.cache/virtualenv/wheel/x.whl"),
        Some((
            "--allow-write ~/.cache/virtualenv".into(),
            "[write] allow = [\"~/.cache/virtualenv\"]".into()
        ))
    );
    assert_eq!(
        hint(Access::Read, "/etc/passwd").map(|h| h.0),
        Some("--allow-read /etc/passwd".into())
    );
    assert_eq!(
        hint(Access::Exec, "/opt/t/run").map(|h| h.0),
        Some("--allow-read /opt/t/run".into())
    );
    assert_eq!(
        hint(Access::Write, "/home/u/my file").map(|h| h.0),
        Some("--allow-write '~/my file'".into())
    );
    assert_eq!(hint(Access::Write, "/home/u/.ssh/id_rsa"), None);
    assert_eq!(hint(Access::Write, "/ws/.git/hooks/pre-commit"), None);
    assert_eq!(hint(Access::Write, "/tmp/a*b"), None, "a glob is not exact");
    // Nor for a rule the author wrote on purpose: a `deny` (a `.env`),
    // the trace log.
    let mut s = base();
    s.root = Some("/ws".into());
    s.read.deny = vec!["/ws/**/.env*".into()];
    s.log.target = crate::LogTarget::File("/ws/trace.log".into());
    let q = Policy::new(s).unwrap();
    for (a, path) in [(Access::Read, "/ws/.env"), (Access::Write, "/ws/trace.log")] {
        let d = q.decide(a, path.as_bytes());
        assert!(!d.allowed && d.rule.authors(), "{path}: {}", d.rule);
        assert_eq!(q.hint(a, path.as_bytes(), d.rule), None, "{path}");
    }
    let d = q.decide(Access::Write, b"/etc/x");
    assert!(!d.rule.authors() && q.hint(Access::Write, b"/etc/x", d.rule).is_some());
    assert_eq!(hint(Access::Write, "/tmp/a\"b"), None);
    // The hint, applied, allows the access.
    let mut s = base();
    s.root = Some("/ws".into());
    s.write.allow = vec!["/home/u/.cache/virtualenv".into()];
    let p = Policy::new(s).unwrap();
    assert!(
        p.decide(Access::Write, b"/home/u/.cache/virtualenv/wheel/x.whl")
            .allowed
    );
}

#[test]
fn confines_reads() {
    let mut s = base();
    s.secrets = false;
    assert!(!Policy::new(s.clone()).unwrap().confines_reads());
    s.root = Some("/ws".into());
    assert!(Policy::new(s).unwrap().confines_reads());
}

fn socket(p: &Policy, name: &str) -> (bool, String) {
    let d = p.decide_socket(name.as_bytes());
    (d.allowed, d.rule.to_string())
}

/// Issue 27 item 9: a connect or send to a socket file is a write to it;
/// `unix_sockets` admits the ones it names outside the root, never past
/// `deny_always` or `secrets`; abstract sockets only by name.
#[test]
fn unix_sockets_are_doors_out_decided_as_writes() {
    let mut s = base();
    s.root = Some("/ws".into());
    s.tmpdir = Some("/tmp/fsguard-1".into());
    s.write.deny_always = vec!["/run/locked.sock".into()];
    s.unix_sockets = vec![
        "/run/postgresql".into(),
        "/run/locked.sock".into(),
        "/home/u/.ssh/agent.sock".into(),
        "@db".into(),
        "@/tmp/dbus-*".into(),
    ];
    let p = Policy::new(s.clone()).unwrap();
    assert_eq!(socket(&p, "/ws/run/test.sock"), (true, "root".into()));
    assert_eq!(socket(&p, "/tmp/fsguard-1/s"), (true, "tmpdir".into()));
    assert_eq!(socket(&p, "/outside/sock"), (false, "root".into()));
    assert_eq!(socket(&p, "/var/run/docker.sock"), (false, "root".into()));
    assert_eq!(
        socket(&p, "/run/postgresql/.s.PGSQL.5432"),
        (true, "unix_sockets:\"/run/postgresql\"".into())
    );
    assert_eq!(
        socket(&p, "/run/locked.sock"),
        (false, "write.deny_always:\"/run/locked.sock\"".into())
    );
    assert_eq!(
        socket(&p, "/home/u/.ssh/agent.sock"),
        (false, "secrets:\"/home/u/.ssh\"".into())
    );
    assert_eq!(socket(&p, "@db"), (true, "unix_sockets:\"@db\"".into()));
    assert_eq!(socket(&p, "@db2"), (false, "abstract_socket".into()));
    assert_eq!(
        socket(&p, "@/tmp/dbus-XyZ"),
        (true, "unix_sockets:\"@/tmp/dbus-*\"".into())
    );
    // A unix_sockets entry is no write rule: the file itself stays refused.
    assert!(!rule(&p, Access::Write, "/run/postgresql/.s.PGSQL.5432").0);
    // The hint names the flag.
    let hint = |name: &str| {
        let d = p.decide_socket(name.as_bytes());
        p.socket_hint(name.as_bytes(), d.rule)
            .map(|h| (h.to_string(), h.toml()))
    };
    assert_eq!(
        hint("/outside/sock"),
        Some((
            "--allow-unix-socket /outside/sock".into(),
            "unix_sockets = [\"/outside/sock\"]".into()
        ))
    );
    assert_eq!(
        hint("@x"),
        Some((
            "--allow-unix-socket @x".into(),
            "unix_sockets = [\"@x\"]".into()
        ))
    );
    assert_eq!(hint("/run/locked.sock"), None);

    // Read-only without a root: every socket file is refused, as a write.
    let mut r = base();
    r.readonly = true;
    let p = Policy::new(r).unwrap();
    assert_eq!(socket(&p, "/run/x.sock"), (false, "readonly".into()));
    assert_eq!(socket(&p, "@x"), (false, "abstract_socket".into()));
    assert!(p.refuses_abstract_sockets());
    // Writes anywhere: so are sockets, abstract ones too.
    let p = Policy::new(base()).unwrap();
    assert_eq!(socket(&p, "/run/x.sock"), (true, "default".into()));
    assert_eq!(socket(&p, "@x"), (true, "default".into()));
    assert!(!p.refuses_abstract_sockets());
    // A write allow-list confines them.
    let mut w = base();
    w.write.allow = vec!["/ws".into()];
    let p = Policy::new(w).unwrap();
    assert_eq!(socket(&p, "/run/x.sock"), (false, "not_allowed".into()));
    assert_eq!(
        socket(&p, "/ws/x.sock"),
        (true, "write.allow:\"/ws\"".into())
    );
    assert_eq!(socket(&p, "@x"), (false, "abstract_socket".into()));
}

#[test]
fn names_only_for_directories_above_the_root_and_tmpdir() {
    let mut s = base();
    s.root = Some("/home/u/proj".into());
    s.tmpdir = Some("/tmp/fsguard-x1".into());
    s.read.deny = vec!["/srv".into()];
    s.read.deny_always = vec!["/opt/**".into()];
    let p = Policy::new(s.clone()).unwrap();
    for above in ["/", "/home", "/home/u", "/tmp"] {
        assert!(p.names_only(above.as_bytes()), "{above}");
    }
    // The root, the TMPDIR and what lies inside are allowed, not named.
    for not in [
        "/home/u/proj",
        "/home/u/proj/src",
        "/tmp/fsguard-x1",
        "/tmp/fsguard-x1/a",
    ] {
        assert!(!p.names_only(not.as_bytes()), "{not}");
    }
    // Beside or below an ancestor: refused as before.
    for not in [
        "/home/u/.ssh",
        "/home/u/other",
        "/home/u/proj2",
        "/home/uu",
        "/tmp/other",
        "/etc/shadow",
        "pipe:[1]",
        "home",
    ] {
        assert!(!p.names_only(not.as_bytes()), "{not}");
    }
    // A rule someone wrote beats it: a deny, deny_always, secrets.
    let mut s2 = s.clone();
    s2.root = Some("/srv/ws".into());
    let p2 = Policy::new(s2).unwrap();
    assert!(!p2.names_only(b"/srv"), "read.deny on the ancestor");
    assert!(p2.names_only(b"/"));
    let mut s3 = s.clone();
    s3.root = Some("/opt/ws".into());
    let p3 = Policy::new(s3).unwrap();
    assert!(!p3.names_only(b"/opt"), "deny_always on the ancestor");
    let mut s4 = s.clone();
    s4.root = Some("/home/u/.ssh/ws".into());
    let p4 = Policy::new(s4).unwrap();
    assert!(!p4.names_only(b"/home/u/.ssh"), "a secret ancestor");
    assert!(p4.names_only(b"/home/u"));
    // hide_outside hides ancestors too.
    let mut s5 = s.clone();
    s5.hide_outside = true;
    assert!(!Policy::new(s5).unwrap().names_only(b"/home/u"));
    // An ancestor readable anyway (system) needs no narrowing.
    let mut s6 = s.clone();
    s6.root = Some("/usr/src/ws".into());
    assert!(!Policy::new(s6).unwrap().names_only(b"/usr"));
    // No root, no TMPDIR: nothing is above anything.
    let mut s7 = base();
    s7.read.allow = vec!["/data/in".into()];
    let p7 = Policy::new(s7).unwrap();
    assert!(!p7.names_only(b"/data"));
    // An allow-list with a TMPDIR: its ancestors (not_allowed).
    let mut s8 = base();
    s8.read.allow = vec!["/data/in".into()];
    s8.tmpdir = Some("/tmp/fsguard-x2".into());
    let p8 = Policy::new(s8).unwrap();
    assert!(p8.names_only(b"/tmp"));
    assert!(!p8.names_only(b"/data"));
}

#[test]
fn hints_name_the_glob_of_random_names_and_caches_once() {
    let mut s = base();
    s.root = Some("/ws".into());
    s.home = Some("/home/u".into());
    let p = Policy::new(s).unwrap();
    let hint = |a: Access, path: &str| {
        let d = p.decide(a, path.as_bytes());
        assert!(!d.allowed, "{path}");
        p.hint(a, path.as_bytes(), d.rule)
            .map(|h| (h.to_string(), h.toml()))
    };
    assert_eq!(
        hint(Access::Write, "/home/u/send2trash_testha5_8f65"),
        Some((
            "--allow-write '~/send2trash_test*'".into(),
            "[write] allow = [\"~/send2trash_test*\"]".into()
        ))
    );
    // Every file of an npm cache: one hint.
    let npm: std::collections::BTreeSet<_> = [
        "/home/u/.npm/_cacache/index-v5/4f/4a/c432db8f0e1a2b3c4d5e6f708192a3b4",
        "/home/u/.npm/_cacache/content-v2/sha512/ab/cd/0123456789abcdef0123",
        "/home/u/.npm/_logs/2026-11-27T08_00_00_000Z-debug-0.log",
    ]
    .iter()
    .map(|f| hint(Access::Read, f).unwrap().0)
    .collect();
    assert_eq!(
        npm.into_iter().collect::<Vec<_>>(),
        ["--allow-read '~/.npm/**'"]
    );
    assert_eq!(
        hint(Access::Write, "/tmp/tmpk3j2x9ab.txt").map(|h| h.0),
        Some("--allow-write '/tmp/tmp*.txt'".into())
    );
    assert_eq!(
        hint(
            Access::Read,
            "/srv/go/pkg/mod/cache/download/x/@v/v1.0.0.zip"
        )
        .map(|h| h.0),
        Some("--allow-read '/srv/go/pkg/mod/**'".into())
    );
    // Plain names stay exact; the tool's own directory as before.
    assert_eq!(
        hint(Access::Write, "/home/u/notes.txt").map(|h| h.0),
        Some("--allow-write ~/notes.txt".into())
    );
    assert_eq!(
        hint(
            Access::Write,
            "/home/u/.cache/pip/http/c432db8f0e1a2b3c4d5e6f708192a3b4"
        )
        .map(|h| h.0),
        Some("--allow-write ~/.cache/pip".into())
    );
    // Never for a secret, random name or not.
    assert_eq!(hint(Access::Read, "/home/u/.ssh/tmpk3j2x9ab"), None);
    // The glob, applied, allows the next run's name.
    let mut s = base();
    s.root = Some("/ws".into());
    s.home = Some("/home/u".into());
    s.write.allow = vec!["/home/u/send2trash_test*".into(), "/tmp/tmp*.txt".into()];
    let q = Policy::new(s).unwrap();
    for next in ["/home/u/send2trash_testq1w2_e3r4/x", "/tmp/tmpzz9y8x7w.txt"] {
        assert!(q.decide(Access::Write, next.as_bytes()).allowed, "{next}");
    }
}
