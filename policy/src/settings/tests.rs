use std::path::{Path, PathBuf};

use super::paths::expand_pattern;
use super::*;
use crate::Access;

fn ctx(cwd: &Path) -> Context {
    Context {
        cwd: cwd.to_path_buf(),
        home: Some(PathBuf::from("/nonexistent-home")),
        exe: None,
        path_var: None,
    }
}

fn tmpdir(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("fsguard-policy-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    std::fs::canonicalize(&d).unwrap()
}

#[test]
fn no_policy_is_read_only() {
    let s = Builder::new(ctx(Path::new("/"))).finish().unwrap();
    assert!(s.implicit && s.readonly);
    let mut b = Builder::new(ctx(Path::new("/")));
    b.env([("FSGUARD_LOG", "off")], None).unwrap();
    assert!(
        b.finish().unwrap().implicit,
        "logging alone is not a policy"
    );
}

#[test]
fn env_layering_and_errors() {
    let d = tmpdir("env");
    std::fs::create_dir(d.join("ws")).unwrap();
    let mut b = Builder::new(ctx(&d));
    b.env(
        [
            ("FSGUARD_ROOT", "ws"),
            ("FSGUARD_READONLY", "1"),
            ("FSGUARD_MODE", "audit"),
            ("FSGUARD_ERRNO", "EPERM"),
            ("PATH", "/usr/bin"),
        ],
        None,
    )
    .unwrap();
    let s = b.finish().unwrap();
    assert_eq!(s.root.as_deref(), Some(d.join("ws").to_str().unwrap()));
    assert!(s.readonly && !s.implicit);
    assert_eq!(s.mode, Mode::Audit);
    assert_eq!(s.errno.code(), 1);

    let mut b = Builder::new(ctx(&d));
    let e = b.env([("FSGUARD_RO0T", "ws")], None).unwrap_err();
    assert!(e.to_string().contains("FSGUARD_RO0T"), "{e}");
    let mut b = Builder::new(ctx(&d));
    let e = b.env([("FSGUARD_ROOT", "missing")], None).unwrap_err();
    assert!(e.to_string().contains("missing"), "{e}");
    let mut b = Builder::new(ctx(&d));
    assert!(b.env([("FSGUARD_READONLY", "maybe")], None).is_err());
    // Issue 28: no path-valued setting takes an empty string for "here".
    for (k, v) in [
        ("FSGUARD_ROOT", ""),
        ("FSGUARD_CONFIG", ""),
        ("FSGUARD_LOG", ""),
    ] {
        let mut b = Builder::new(ctx(&d));
        let e = b.env([(k, v)], None).unwrap_err();
        assert!(e.to_string().contains("empty"), "{k}: {e}");
    }
    let mut b = Builder::new(ctx(&d));
    assert!(b.root("").unwrap_err().to_string().contains("empty"));
    assert!(b
        .config_file(std::path::Path::new(""))
        .unwrap_err()
        .to_string()
        .contains("empty"));
    let origin = d.join("policy.toml");
    for (text, want) in [
        ("root = \"\"\n", "policy.toml:1: root: empty"),
        ("[log]\ntarget = \"\"\n", "policy.toml:2: log.target: empty"),
    ] {
        let mut b = Builder::new(ctx(&d));
        let e = b.config_str(text, &origin).unwrap_err().to_string();
        assert!(e.contains(want), "{text:?}: {e}");
    }
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn config_keys_patterns_and_errors() {
    let d = tmpdir("cfg");
    std::fs::create_dir(d.join("ws")).unwrap();
    let cfg = d.join("policy.toml");
    let text = "root = \"ws\"\nreadonly = true\n[read]\ndeny = [\"*.pem\", \"~/x\", \"/abs/**\"]\n[log]\ntarget = \"trace.log\"\nformat = \"json\"\n";
    let mut b = Builder::new(ctx(Path::new("/")));
    b.config_str(text, &cfg).unwrap();
    let s = b.finish().unwrap();
    let dd = d.display();
    assert_eq!(s.root, Some(format!("{dd}/ws")));
    assert_eq!(
        s.read.deny,
        vec![
            format!("{dd}/ws/**/*.pem"),
            "/nonexistent-home/x".into(),
            "/abs/**".into()
        ]
    );
    assert_eq!(s.log.target, LogTarget::File(format!("{dd}/trace.log")));
    assert_eq!(s.log.format, LogFormat::Json);

    let bad_key = "readonly = true\nsecretz = false\n";
    let e = Builder::new(ctx(Path::new("/")))
        .config_str(bad_key, &cfg)
        .unwrap_err();
    assert!(
        e.to_string()
            .contains("policy.toml:2:1: secretz: unknown field `secretz`"),
        "{e}"
    );
    let bad_glob = "[write]\nallow = [\n  \"/ok\",\n  \"/x/[a\",\n]\n";
    let e = Builder::new(ctx(Path::new("/")))
        .config_str(bad_glob, &cfg)
        .unwrap_err();
    assert!(e.to_string().contains("policy.toml:4"), "{e}");
    let cases = [
        (
            "readonly = true\nmode = \"loud\"\n",
            "policy.toml:2:8: mode: unknown variant `loud`",
        ),
        (
            "[read]\nallow = []\n\n[log]\nformat = \"xml\"\n",
            "policy.toml:5:10: log.format: unknown variant `xml`",
        ),
        (
            "readonly = \"yes\"\n",
            "policy.toml:1:12: readonly: invalid type",
        ),
        (
            "[read]\ndeny = [\n  \"/a\",\n  7,\n]\n",
            "policy.toml:4:3: read.deny: invalid type",
        ),
        (
            "[reed]\nallow = []\n",
            "policy.toml:1:2: reed: unknown field `reed`",
        ),
        (
            "[write]\nalow = [\"/x\"]\n",
            "policy.toml:2:1: write.alow: unknown field `alow`",
        ),
        ("root = \n", "policy.toml:1:8: root: "),
        (
            "errno = \"ENOENT\"\n",
            "policy.toml:1:9: errno: unknown variant `ENOENT`",
        ),
        (
            "[read]\ndeny = [\"/x/{a\"]\n",
            "policy.toml:2: read.deny: bad glob",
        ),
        ("root = \"missing-dir\"\n", "policy.toml:1: root: "),
    ];
    for (text, want) in cases {
        let e = Builder::new(ctx(Path::new("/")))
            .config_str(text, &cfg)
            .unwrap_err()
            .to_string();
        assert!(e.contains(want), "{text:?}: got {e:?}, want {want:?}");
        assert!(!e.contains('\n'), "one line: {e:?}");
    }
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn preset_keys_default_on_and_switch_off() {
    let cfg = Path::new("/policy.toml");
    let s = Builder::new(ctx(Path::new("/"))).finish().unwrap();
    assert!(s.ipc && s.proc && s.cache);
    let tag = s.ipc_tag.clone().unwrap();
    assert!(!tag.is_empty() && tag.bytes().all(|b| b.is_ascii_hexdigit()));
    let mut b = Builder::new(ctx(Path::new("/")));
    b.config_str("ipc = false\nproc = false\ncache = false\n", cfg)
        .unwrap();
    let s = b.finish().unwrap();
    assert!(!s.ipc && !s.proc && !s.cache);
    let back = Settings::from_frozen(&s.to_frozen()).unwrap();
    assert_eq!(back, s, "children get the same presets and namespace");
    let e = Builder::new(ctx(Path::new("/")))
        .config_str("ipcs = false\n", cfg)
        .unwrap_err()
        .to_string();
    assert!(e.contains("ipcs: unknown field"), "{e}");
}

#[test]
fn patterns_resolve_symlinked_prefixes() {
    let d = tmpdir("sym");
    std::fs::create_dir(d.join("real")).unwrap();
    std::os::unix::fs::symlink(d.join("real"), d.join("link")).unwrap();
    let p = expand_pattern("link/**/*.key", &d, None).unwrap();
    assert_eq!(p, format!("{}/real/**/*.key", d.display()));
    let p = expand_pattern("link/missing/../f", &d, None).unwrap();
    assert_eq!(p, format!("{}/real/f", d.display()));
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn system_prefixes_never_root_or_home() {
    let d = tmpdir("sys");
    let home = d.join("home");
    std::fs::create_dir_all(home.join("bin")).unwrap();
    std::fs::create_dir_all(d.join("tool/bin")).unwrap();
    std::fs::create_dir_all(home.join(".pyenv/shims")).unwrap();
    let path = std::env::join_paths([
        home.join("bin"),
        d.join("tool/bin"),
        home.join(".pyenv/shims"),
        PathBuf::from("/bin"),
    ])
    .unwrap();
    let c = Context {
        cwd: d.clone(),
        home: Some(home.clone()),
        exe: None,
        path_var: Some(path),
    };
    let s = Builder::new(c).finish().unwrap();
    let has = |p: &Path| s.system_paths.iter().any(|x| Path::new(x) == p);
    assert!(has(&d.join("tool")));
    assert!(has(&home.join(".pyenv")));
    assert!(has(&home.join("bin")), "~/bin must not widen to $HOME");
    assert!(!has(&home));
    assert!(!s.system_paths.iter().any(|p| p == "/"));
    std::fs::remove_dir_all(&d).unwrap();
}

/// From config text to verdicts: `~`, relative and slash-less patterns,
/// presets, through the same `decide` the library uses.
#[test]
fn config_to_decisions() {
    let d = tmpdir("decide");
    std::fs::create_dir_all(d.join("proj/ws")).unwrap();
    std::fs::create_dir_all(d.join("home")).unwrap();
    let c = Context {
        cwd: d.join("proj/ws"),
        home: Some(d.join("home")),
        exe: None,
        path_var: None,
    };
    let text = "root = \"ws\"\n[read]\ndeny = [\"~/notes\", \"private\"]\ndeny_always = [\"*.pem\"]\nallow = [\"private/ok\"]\n[write]\nallow = [\"~/out\"]\n";
    let mut b = Builder::new(c.clone());
    b.config_str(text, &d.join("proj/policy.toml")).unwrap();
    b.add_pattern(Access::Write, ListKind::DenyAlways, "locked")
        .unwrap();
    let p = crate::Policy::new(b.finish().unwrap()).unwrap();
    let dd = d.display();
    let v = |a: Access, path: &str| {
        let d = p.decide(a, format!("{dd}/{path}").as_bytes());
        (d.allowed, d.rule.to_string().replace(&dd.to_string(), ""))
    };
    use Access::{Read as R, Write as W};
    assert_eq!(
        v(R, "home/notes/x"),
        (false, "read.deny:\"/home/notes\"".into())
    );
    assert_eq!(v(R, "home/notesx"), (false, "root".into()));
    assert_eq!(
        v(W, "home/out/f"),
        (true, "write.allow:\"/home/out\"".into())
    );
    assert_eq!(
        v(R, "proj/ws/private/a"),
        (false, "read.deny:\"/proj/ws/private\"".into())
    );
    assert_eq!(
        v(R, "proj/ws/private/ok"),
        (true, "read.allow:\"/proj/ws/private/ok\"".into())
    );
    assert_eq!(
        v(R, "proj/ws/a/b/k.pem"),
        (false, "read.deny_always:\"/proj/ws/**/*.pem\"".into())
    );
    assert_eq!(v(R, "k.pem"), (false, "root".into()), "not above the root");
    // A flag's relative pattern is against the cwd (proj/ws).
    assert_eq!(
        v(W, "proj/ws/locked/x"),
        (false, "write.deny_always:\"/proj/ws/locked\"".into())
    );
    assert_eq!(v(W, "proj/ws/lockedx"), (true, "root".into()));
    // Secrets come from $HOME; devices are allowed; system only reads.
    assert_eq!(
        v(R, "home/.ssh/id_rsa"),
        (false, "secrets:\"/home/.ssh\"".into())
    );
    assert_eq!(
        v(W, "home/.cargo/credentials.toml").1,
        "secrets:\"/home/.cargo/credentials*\""
    );
    assert!(p.decide(Access::Write, b"/dev/null").allowed);
    assert!(p.decide(Access::Read, b"/usr/bin/env").allowed);
    assert!(!p.decide(Access::Write, b"/usr/bin/env").allowed);
    let mut b = Builder::new(c);
    b.config_str(
        "secrets = false\nsystem = false\nroot = \".\"\n",
        &d.join("proj/policy.toml"),
    )
    .unwrap();
    let p = crate::Policy::new(b.finish().unwrap()).unwrap();
    let home_ssh = format!("{dd}/home/.ssh/id_rsa");
    assert_eq!(
        p.decide(Access::Read, home_ssh.as_bytes()).rule.to_string(),
        "root"
    );
    assert!(!p.decide(Access::Read, b"/usr/bin/env").allowed);
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn system_prefixes_never_cover_the_root_or_temp() {
    let d = tmpdir("sysroot");
    std::fs::create_dir_all(d.join("ws/tools")).unwrap();
    std::fs::create_dir_all(d.join("opt/app")).unwrap();
    let c = Context {
        cwd: d.clone(),
        home: None,
        exe: Some(d.join("ws/run.sh")),
        path_var: Some(std::env::join_paths([d.join("ws/tools"), d.join("opt/app")]).unwrap()),
    };
    let mut b = Builder::new(c);
    b.root(d.join("ws").to_str().unwrap()).unwrap();
    let s = b.finish().unwrap();
    let has = |p: &Path| s.system_paths.iter().any(|x| Path::new(x) == p);
    assert!(
        !has(&d),
        "a program in the root must not open the root's parent"
    );
    assert!(!has(&d.join("ws")));
    assert!(
        has(&d.join("opt/app")),
        "a plain directory stands for itself"
    );
    assert!(!has(&d.join("opt")));
    assert!(!s.system_paths.iter().any(|p| p == "/tmp"));
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn frozen_round_trip() {
    let mut s = Settings {
        root: Some("/ws".into()),
        ..Settings::default()
    };
    s.read.deny.push("/ws/**/.env*".into());
    assert_eq!(Settings::from_frozen(&s.to_frozen()).unwrap(), s);
    assert!(Settings::from_frozen("{\"readonly\":true}").is_err());
}

#[test]
fn canonical_prefix_resolves_links_and_keeps_missing_tails() {
    let d = tmpdir("prefix");
    std::fs::create_dir(d.join("real")).unwrap();
    std::fs::write(d.join("real/file"), b"").unwrap();
    std::os::unix::fs::symlink(d.join("real"), d.join("link")).unwrap();
    std::os::unix::fs::symlink("real/file", d.join("rel")).unwrap();
    let cases = [
        // no link: the path itself, existing or not, below a file or not
        ("real/file", "real/file"),
        ("real/missing/deeper", "real/missing/deeper"),
        ("real/file/below", "real/file/below"),
        ("real/./x/../file", "real/file"),
        // a link anywhere on the existing part is resolved
        ("link/file", "real/file"),
        ("link/missing/deeper", "real/missing/deeper"),
        ("link", "real"),
        ("rel", "real/file"),
        ("rel/below", "real/file/below"),
    ];
    for (given, want) in cases {
        assert_eq!(canonical_prefix(&d.join(given)), d.join(want), "{given}");
    }
    assert_eq!(canonical_prefix(Path::new("/")), PathBuf::from("/"));
    std::fs::remove_dir_all(&d).unwrap();
}

/// Issue 27 item 9: `unix_sockets` from a config (relative entries against
/// the root) and from `--allow-unix-socket` (against the cwd); abstract
/// names kept as written; bad entries name their line.
#[test]
fn unix_sockets_are_doors_out_config_and_flags() {
    let d = tmpdir("sockets");
    std::fs::create_dir(d.join("ws")).unwrap();
    let cfg = d.join("policy.toml");
    let text = "root = \"ws\"\nunix_sockets = [\"run/db.sock\", \"/run/pg\", \"@x11\", \"~/s\"]\n";
    let mut b = Builder::new(ctx(&d));
    b.config_str(text, &cfg).unwrap();
    b.add_unix_socket("here.sock").unwrap();
    b.add_unix_socket("@/tmp/dbus-*").unwrap();
    let s = b.finish().unwrap();
    let dd = d.display();
    assert_eq!(
        s.unix_sockets,
        vec![
            format!("{dd}/ws/run/db.sock"),
            "/run/pg".to_string(),
            "@x11".to_string(),
            "/nonexistent-home/s".to_string(),
            format!("{dd}/here.sock"),
            "@/tmp/dbus-*".to_string(),
        ]
    );
    let frozen = Settings::from_frozen(&s.to_frozen()).unwrap();
    assert_eq!(frozen.unix_sockets, s.unix_sockets);

    let mut b = Builder::new(ctx(&d));
    let e = b
        .config_str("unix_sockets = [\"@\"]\n", &cfg)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("policy.toml:1: unix_sockets") && e.contains("@name"),
        "{e}"
    );
    let mut b = Builder::new(ctx(&d));
    assert!(b.add_unix_socket("/x/[a").is_err());
    // Only sockets named: still no policy, read-only.
    let mut b = Builder::new(ctx(&d));
    b.add_unix_socket("/run/pg").unwrap();
    assert!(b.finish().unwrap().implicit);
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn fail_on_block_is_a_config_key() {
    let cfg = PathBuf::from("/p/policy.toml");
    let load = |text: &str| {
        let mut b = Builder::new(ctx(Path::new("/")));
        b.config_str(text, &cfg)?;
        b.finish()
    };
    assert_eq!(load("readonly = true\n").unwrap().fail_on_block, None);
    assert_eq!(
        load("fail_on_block = true\n").unwrap().fail_on_block,
        Some(FAIL_ON_BLOCK_STATUS)
    );
    assert_eq!(load("fail_on_block = 7\n").unwrap().fail_on_block, Some(7));
    assert_eq!(load("fail_on_block = false\n").unwrap().fail_on_block, None);
    for bad in [
        "fail_on_block = 0\n",
        "fail_on_block = 256\n",
        "fail_on_block = \"x\"\n",
    ] {
        let e = load(bad).unwrap_err().to_string();
        assert!(
            e.starts_with("/p/policy.toml:1: fail_on_block: bad value"),
            "{bad}: {e}"
        );
    }
    // It travels with the frozen policy.
    let s = load("fail_on_block = 9\n").unwrap();
    assert_eq!(
        Settings::from_frozen(&s.to_frozen()).unwrap().fail_on_block,
        Some(9)
    );
}

#[test]
fn an_unknown_variable_names_the_users_variables_and_the_nearest() {
    let err = |k: &str| {
        let mut b = Builder::new(ctx(Path::new("/")));
        b.env([(k, "x")], None).err().unwrap().to_string()
    };
    let e = err("FSGUARD_ROTO");
    assert!(
        e.starts_with("unknown variable FSGUARD_ROTO; did you mean FSGUARD_ROOT? (the variables: FSGUARD_CONFIG,"),
        "{e}"
    );
    for internal in [
        "FSGUARD_POLICY",
        "FSGUARD_REPORT_FD",
        "FSGUARD_HANDSHAKE_FD",
    ] {
        assert!(!e.contains(internal), "{e}");
    }
    let e = err("FSGUARD_SOMETHING_ELSE_ENTIRELY");
    assert!(!e.contains("did you mean"), "{e}");
}

#[test]
fn error_paths_are_normalised() {
    let d = tmpdir("normalised");
    let mut b = Builder::new(ctx(&d));
    let e = b.root("./x/../nope/.").err().unwrap().to_string();
    assert!(e.starts_with(&format!("{}/nope: ", d.display())), "{e}");
    let e = b
        .config_file(Path::new("./a/../nope.toml"))
        .err()
        .unwrap()
        .to_string();
    assert!(
        e.starts_with(&format!("config {}/nope.toml: ", d.display())),
        "{e}"
    );
    let _ = std::fs::remove_dir_all(&d);
}
