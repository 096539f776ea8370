use super::*;

fn places() -> Places {
    Places {
        home: Some("/home/u".into()),
        root: "/home/u/proj".into(),
        temp_dirs: vec!["/tmp".into(), "/var/tmp".into()],
        protected: vec![
            "/home/u/.ssh".into(),
            "/home/u/.config/gh".into(),
            "/home/u/.cargo/credentials*".into(),
            "/srv/keys/**/*.pem".into(),
        ],
    }
}

fn needs(v: &[(&str, &str)]) -> Vec<(Access, String)> {
    v.iter()
        .map(|(a, p)| (Access::parse(a).unwrap(), p.to_string()))
        .collect()
}

fn patterns(s: &[Suggestion]) -> Vec<String> {
    s.iter()
        .map(|s| format!("{} {}", s.access.as_str(), s.pattern(Some("/home/u"))))
        .collect()
}

#[test]
fn a_directory_with_many_entries_becomes_one_glob() {
    let n = needs(&[
        ("read", "/opt/sdk/include/a.h"),
        ("read", "/opt/sdk/include/b.h"),
        ("read", "/opt/sdk/include/sub/c.h"),
        ("read", "/opt/sdk/lib/x.so"),
    ]);
    let (s, r) = generalise(&n, &places(), &Options::default());
    assert!(r.is_empty());
    assert_eq!(
        patterns(&s),
        ["read /opt/sdk/include/**", "read /opt/sdk/lib/x.so"]
    );
    assert_eq!(s[0].covers, 3);
    assert_eq!(s[0].kind, Kind::System);
    // Two entries stay exact.
    let (s, _) = generalise(&n[..2], &places(), &Options::default());
    assert_eq!(
        patterns(&s),
        ["read /opt/sdk/include/a.h", "read /opt/sdk/include/b.h"]
    );
}

#[test]
fn depth_is_capped_and_exact_keeps_every_path() {
    let n = needs(&[
        ("write", "/data/out/run1/x/y/z.txt"),
        ("write", "/data/out/run1/x/w.txt"),
    ]);
    let o = Options {
        max_depth: Some(3),
        ..Options::default()
    };
    let (s, _) = generalise(&n, &places(), &o);
    assert_eq!(patterns(&s), ["write /data/out/run1/**"]);
    let o = Options {
        max_depth: Some(2),
        ..Options::default()
    };
    assert_eq!(
        patterns(&generalise(&n, &places(), &o).0),
        ["write /data/out/**"]
    );
    // Depth counts from the anchor: the home directory here.
    let n2 = needs(&[("read", "/home/u/.config/tool/deep/a/b.json")]);
    let o = Options {
        max_depth: Some(2),
        ..Options::default()
    };
    assert_eq!(
        patterns(&generalise(&n2, &places(), &o).0),
        ["read ~/.config/tool/**"]
    );
    let o = Options {
        exact: true,
        ..Options::default()
    };
    let many = needs(&[
        ("read", "/opt/a/1"),
        ("read", "/opt/a/2"),
        ("read", "/opt/a/3"),
        ("read", "/home/u/.cache/pip/x/y"),
    ]);
    assert_eq!(
        patterns(&generalise(&many, &places(), &o).0),
        [
            "read ~/.cache/pip/x/y",
            "read /opt/a/1",
            "read /opt/a/2",
            "read /opt/a/3"
        ]
    );
}

#[test]
fn secrets_are_never_covered() {
    // Three entries of ~/.config would make ~/.config/**, which holds
    // ~/.config/gh: each stays exact instead.
    let n = needs(&[
        ("read", "/home/u/.config/a/x"),
        ("read", "/home/u/.config/b/x"),
        ("read", "/home/u/.config/c/x"),
        ("read", "/home/u/.bashrc"),
        ("read", "/home/u/.profile"),
    ]);
    let (s, r) = generalise(&n, &places(), &Options::default());
    assert!(r.is_empty());
    for p in patterns(&s) {
        assert!(!p.ends_with("~/**") && p != "read ~/.config/**", "{p}");
    }
    assert_eq!(s.len(), 5);
    // A depth cap into a directory holding credentials goes deeper.
    let o = Options {
        max_depth: Some(1),
        ..Options::default()
    };
    let (s, _) = generalise(&n[..1], &places(), &o);
    assert_eq!(patterns(&s), ["read ~/.config/a/**"]);
    // cargo's registry is a cache beside ~/.cargo/credentials*.
    let n = needs(&[("read", "/home/u/.cargo/registry/src/x/lib.rs")]);
    let (s, _) = generalise(&n, &places(), &Options::default());
    assert_eq!(patterns(&s), ["read ~/.cargo/registry/**"]);
    // But ~/.cargo itself holds them: refused, not suggested.
    let n = needs(&[("read", "/home/u/.cargo"), ("write", "/srv/keys")]);
    let (s, r) = generalise(&n, &places(), &Options::default());
    assert!(s.is_empty(), "{s:?}");
    assert_eq!(r.len(), 2);
    assert!(r.iter().all(|r| r.why.contains("credentials")), "{r:?}");
    // Every suggestion, checked against the protected patterns.
    let set = crate::PatternSet::new(&places().protected).unwrap();
    for s in generalise(
        &needs(&[
            ("read", "/home/u/.ssh2/a"),
            ("read", "/home/u/.sshx"),
            ("read", "/home/u/x/1"),
            ("read", "/home/u/y/1"),
            ("read", "/home/u/z/1"),
        ]),
        &places(),
        &Options::default(),
    )
    .0
    {
        assert!(set.find_below(s.path.as_bytes()).is_none(), "{s:?}");
        assert!(!set.matches(s.path.as_bytes()), "{s:?}");
    }
}

#[test]
fn broad_places_are_refused_or_kept_narrow() {
    let n = needs(&[
        ("read", "/home/u"),
        ("read", "/tmp"),
        ("read", "/etc"),
        ("read", "/home"),
        ("write", "/tmp/a"),
        ("write", "/tmp/b"),
        ("write", "/tmp/c"),
    ]);
    let (s, r) = generalise(&n, &places(), &Options::default());
    assert_eq!(
        r.iter().map(|r| r.path.as_str()).collect::<Vec<_>>(),
        ["/home/u", "/tmp", "/etc", "/home"]
    );
    // Three files in /tmp stay three rules: /tmp/** would be everyone's.
    assert_eq!(
        patterns(&s),
        ["write /tmp/a", "write /tmp/b", "write /tmp/c"]
    );
}

#[test]
fn home_temp_and_caches_are_named() {
    let p = places();
    let n = needs(&[
        ("write", "/home/u/.cache/pip/http/1/2/abc"),
        ("write", "/home/u/.cache/pip/wheels/x.whl"),
        ("read", "/home/u/.npm/_cacache/index/x"),
        ("read", "/home/u/.config/tool/settings.json"),
        ("read", "/tmp/build-1/in.txt"),
        ("read", "/opt/thing/lib.so"),
        ("exec", "/etc/passwd"),
    ]);
    let (s, _) = generalise(&n, &p, &Options::default());
    let got: Vec<(String, Kind)> = s
        .iter()
        .map(|s| (s.pattern(p.home.as_deref()), s.kind.clone()))
        .collect();
    assert_eq!(
        got,
        [
            ("~/.cache/pip/**".into(), Kind::Cache("pip".into())),
            ("/etc/passwd".into(), Kind::System),
            ("~/.config/tool/settings.json".into(), Kind::Home),
            ("~/.npm/**".into(), Kind::Cache("npm".into())),
            ("/opt/thing/lib.so".into(), Kind::System),
            ("/tmp/build-1/in.txt".into(), Kind::Temp),
        ]
    );
    assert_eq!(s[0].covers, 2);
    assert_eq!(Kind::Cache("pip".into()).describe(), "pip's cache");
    // A home inside a temp dir is a home.
    let q = Places {
        home: Some("/tmp/h".into()),
        ..places()
    };
    assert_eq!(q.kind("/tmp/h/.config/x"), Kind::Home);
    assert_eq!(q.kind("/tmp/other/x"), Kind::Temp);
    let text = render(&s, &[], &p, "test");
    assert!(text.contains("# pip's cache: 2 paths seen"), "{text}");
    assert!(text.contains("# temp dir\n"), "{text}");
}

#[test]
fn reads_under_a_write_rule_need_none() {
    let n = needs(&[
        ("read", "/data/out/x"),
        ("write", "/data/out"),
        ("read", "/data/in/y"),
    ]);
    let (s, _) = generalise(&n, &places(), &Options::default());
    assert_eq!(patterns(&s), ["write /data/out", "read /data/in/y"]);
}

#[test]
fn names_with_glob_syntax_are_escaped() {
    let n = needs(&[("read", "/data/a[1]*.txt")]);
    let (s, _) = generalise(&n, &places(), &Options::default());
    let pat = s[0].pattern(None);
    assert_eq!(pat, "/data/a\\[1\\]\\*.txt");
    let set = crate::PatternSet::new([pat.as_str()]).unwrap();
    assert!(set.matches(b"/data/a[1]*.txt"));
    assert!(!set.matches(b"/data/a1x.txt"));
}

fn load(text: &str) -> crate::Settings {
    let ctx = crate::Context {
        cwd: "/".into(),
        home: Some("/home/u".into()),
        ..Default::default()
    };
    let mut b = crate::Builder::new(ctx);
    // The root must exist to be accepted: use one that does.
    let text = text.replace("/home/u/proj", "/");
    b.config_str(&text, std::path::Path::new("/x/p.toml"))
        .unwrap_or_else(|e| panic!("{e}\n{text}"));
    b.finish().unwrap()
}

#[test]
fn rendered_policy_loads() {
    let p = places();
    let n = needs(&[
        ("write", "/home/u/.cache/pip/a"),
        ("read", "/opt/x \"quoted\"/y"),
        ("read", "/home/u/.ssh/id_rsa"),
    ]);
    let (mut s, mut r) = generalise(&n[..2], &p, &Options::default());
    // A newline in a name stays inside its comment and its string.
    s.push(Suggestion {
        access: Access::Read,
        path: "/opt/a\nb".into(),
        glob: false,
        kind: Kind::System,
        covers: 2,
        example: "/opt/a\nb/c\nd".into(),
    });
    r.push(Refusal {
        access: Access::Read,
        path: n[2].1.clone(),
        why: "secrets:\"/home/u/.ssh\"".into(),
    });
    let text = render(&s, &r, &p, "from a test");
    let set = load(&text);
    assert_eq!(set.write.allow, ["/home/u/.cache/pip/**"]);
    assert_eq!(set.read.allow, ["/opt/x \"quoted\"/y", "/opt/a\nb"]);
    assert!(text.contains("# WARNING"), "{text}");
    assert!(text.contains("#   read ~/.ssh/id_rsa: secrets"), "{text}");
}

#[test]
fn merge_keeps_comments_and_adds_rules() {
    let existing = "\
# my project's policy
root = \"/home/u/proj\"   # the checkout

[read]
allow = [
# the SDK headers, on purpose
\"/opt/sdk/include\",
]
";
    let p = places();
    let n = needs(&[
        ("read", "/opt/sdk/include"),
        ("read", "/home/u/.config/tool/a.json"),
        ("write", "/tmp/out.txt"),
    ]);
    let (s, _) = generalise(&n, &p, &Options::default());
    let text = merge(existing, &s, &[], &p).unwrap();
    for kept in [
        "# my project's policy",
        "# the checkout",
        "# the SDK headers, on purpose",
    ] {
        assert!(text.contains(kept), "{kept:?} lost:\n{text}");
    }
    assert_eq!(text.matches("\"/opt/sdk/include\"").count(), 1, "{text}");
    let set = load(&text);
    assert_eq!(
        set.read.allow,
        ["/opt/sdk/include", "/home/u/.config/tool/a.json"]
    );
    assert_eq!(set.write.allow, ["/tmp/out.txt"]);
    assert!(text.contains("(added by fsguard suggest)"), "{text}");
    // A policy without a root gets one.
    let text = merge("readonly = false\n", &s, &[], &p).unwrap();
    assert!(text.contains("root = \"/home/u/proj\""), "{text}");
    let text = merge("[log]\nformat = \"json\"\n", &s, &[], &p).unwrap();
    let set = load(&text);
    assert_eq!(set.root.as_deref(), Some("/"), "{text}");
    assert_eq!(set.log.format, crate::LogFormat::Json);
    assert_eq!(set.write.allow, ["/tmp/out.txt"]);
    assert!(merge("[read\n", &s, &[], &p).is_err());
}

#[test]
fn random_names_become_one_glob() {
    let n = needs(&[
        ("write", "/home/u/send2trash_testha5_8f65"),
        ("write", "/home/u/send2trash_testk3j_x9ab/f.txt"),
        ("write", "/home/u/send2trash_test0a1b2c3d"),
        ("write", "/tmp/pytest-of-u/pytest-3/test_a0/out.txt"),
        ("write", "/tmp/tmpk3j2x9ab.json"),
        (
            "read",
            "/srv/npmc/_cacache/index-v5/4f/4a/c432db8f0e1a2b3c4d5e6f708192a3b4",
        ),
        (
            "read",
            "/srv/npmc/_cacache/content-v2/sha512/ab/cd/0123456789abcdef0123",
        ),
        ("read", "/home/u/notes.txt"),
    ]);
    let (s, r) = generalise(&n, &places(), &Options::default());
    assert!(r.is_empty(), "{r:?}");
    assert_eq!(
        patterns(&s),
        [
            "write ~/send2trash_test*",
            "write /tmp/pytest-of-u/pytest-*",
            "write /tmp/tmp*.json",
            "read ~/notes.txt",
            "read /srv/npmc/**",
        ]
    );
    // A credential path the glob could name: no glob.
    let mut p = places();
    p.protected.push("/home/u/.aws_creds".into());
    let n = needs(&[("write", "/home/u/.aws_k3j2x9ab")]);
    let (s, _) = generalise(&n, &p, &Options::default());
    assert_eq!(patterns(&s), ["write ~/.aws_k3j2x9ab"]);
    // --exact keeps every path.
    let n = needs(&[("write", "/home/u/send2trash_testha5_8f65")]);
    let exact = Options {
        exact: true,
        ..Options::default()
    };
    let (s, _) = generalise(&n, &places(), &exact);
    assert_eq!(patterns(&s), ["write ~/send2trash_testha5_8f65"]);
}
