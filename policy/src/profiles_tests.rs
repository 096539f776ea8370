//! The built-in profiles: each parses, is what its example says, layers
//! under a config's own keys and the flags, and an unknown name fails.

use std::path::{Path, PathBuf};

use crate::profiles::{profile, PROFILES};
use crate::{Access, Builder, Context, Policy, Rule, Settings};

fn ctx(cwd: &Path) -> Context {
    Context {
        cwd: cwd.to_path_buf(),
        home: Some(PathBuf::from("/home/someone")),
        exe: None,
        path_var: None,
    }
}

fn examples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../examples")
        .canonicalize()
        .unwrap()
}

fn tmpdir(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("fsguard-profiles-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d.canonicalize().unwrap()
}

/// Settings with the per-load parts (the shm tag, the profile names) cleared.
fn comparable(mut s: Settings) -> Settings {
    s.ipc_tag = None;
    s.profiles.clear();
    s
}

#[test]
fn every_profile_parses_and_names_no_other() {
    let d = tmpdir("parse");
    for p in PROFILES {
        let mut b = Builder::new(ctx(&d));
        b.profile(p.name, &d)
            .unwrap_or_else(|e| panic!("{}: {e}", p.name));
        let s = b.finish().unwrap();
        assert_eq!(s.profiles, [p.name]);
        assert!(!s.implicit, "{}: sets a policy", p.name);
        assert!(s.secrets, "{}: keeps the secrets preset", p.name);
        Policy::new(s).unwrap();
        assert!(!p.text.contains("\nprofile"), "{}", p.name);
        assert!(
            p.text
                .starts_with(&format!("# fsguard profile \"{}\"", p.name)),
            "{}: its text says which profile it is",
            p.name
        );
    }
    let names: Vec<&str> = PROFILES.iter().map(|p| p.name).collect();
    assert_eq!(names, ["agent", "agent-dev", "analysis", "build"]);
}

/// examples/NAME.toml and the built-in NAME are one policy: the example is
/// the profile plus its own root.
#[test]
fn the_examples_are_the_profiles() {
    let ex = examples();
    for (name, root) in [
        ("agent", Some("demo/workspace")),
        ("build", None),
        ("analysis", Some(".")),
    ] {
        let file = ex.join(format!("{name}.toml"));
        let mut a = Builder::new(ctx(&ex));
        a.config_file(&file).unwrap();
        let a = comparable(a.finish().unwrap());
        let text = match root {
            Some(r) => format!("profile = {name:?}\nroot = {r:?}\n"),
            None => format!("profile = {name:?}\n"),
        };
        let mut b = Builder::new(ctx(&ex));
        b.config_str(&text, &file).unwrap();
        let b = b.finish().unwrap();
        assert_eq!(b.profiles, [name]);
        assert_eq!(
            a,
            comparable(b),
            "examples/{name}.toml and profile {name} differ"
        );
    }
}

#[test]
fn a_profile_is_the_first_layer() {
    let d = tmpdir("layer");
    std::fs::create_dir(d.join("ws")).unwrap();
    // --profile agent, then --allow-write X and --root ws on top.
    let mut b = Builder::new(ctx(&d));
    b.profile("agent", &d).unwrap();
    b.add_pattern(Access::Write, crate::ListKind::Allow, "/opt/out")
        .unwrap();
    b.root("ws").unwrap();
    let s = b.finish().unwrap();
    let ws = d.join("ws");
    assert_eq!(s.root.as_deref(), ws.to_str());
    assert_eq!(s.write.allow, ["/opt/out"]);
    // The profile's relative rules follow the root in force.
    assert_eq!(
        s.write.deny_always,
        [format!("{}/**/.git/hooks", ws.display())]
    );
    let p = Policy::new(s).unwrap();
    assert!(p.decide(Access::Write, b"/opt/out/x").allowed);
    assert!(!p.decide(Access::Read, b"/home/someone/.ssh/id_rsa").allowed);
    let env = format!("{}/.env", ws.display());
    assert!(!p.decide(Access::Read, env.as_bytes()).allowed);
    let hook = format!("{}/.git/hooks/pre-commit", ws.display());
    assert!(matches!(
        p.decide(Access::Write, hook.as_bytes()).rule,
        Rule::DenyAlways(..)
    ));

    // profile = "agent" in a config: the file's keys go on top, its rules
    // add to the profile's, and the profile's root is the file's directory.
    let cfg = d.join("ws/.fsguard.toml");
    std::fs::write(
        &cfg,
        "profile = \"agent\"\nhide_outside = true\n[read]\ndeny_always = [\"secret.txt\"]\n",
    )
    .unwrap();
    let mut b = Builder::new(ctx(&d));
    b.config_file(&cfg).unwrap();
    let s = b.finish().unwrap();
    assert_eq!(s.profiles, ["agent"]);
    assert_eq!(s.root.as_deref(), ws.to_str());
    assert!(s.hide_outside);
    assert_eq!(
        s.read.deny_always,
        [
            format!("{}/**/*.pem", ws.display()),
            format!("{}/**/*.key", ws.display()),
            format!("{}/secret.txt", ws.display())
        ]
    );
    // A file's scalar replaces the profile's (root here); its rules never
    // take the profile's away.
    std::fs::write(&cfg, "profile = \"analysis\"\nreadonly = false\n").unwrap();
    let mut b = Builder::new(ctx(&d));
    b.config_file(&cfg).unwrap();
    let s = b.finish().unwrap();
    assert!(!s.readonly);
    assert_eq!(s.write.allow, [format!("{}/results", ws.display())]);
}

#[test]
fn an_unknown_profile_fails_and_lists_the_known_ones() {
    let d = tmpdir("unknown");
    let mut b = Builder::new(ctx(&d));
    let e = b.profile("agnet", &d).unwrap_err().to_string();
    assert_eq!(
        e,
        "unknown profile \"agnet\" (the profiles: agent, agent-dev, analysis, build)"
    );
    let cfg = d.join("c.toml");
    std::fs::write(&cfg, "readonly = true\nprofile = \"agnet\"\n").unwrap();
    let mut b = Builder::new(ctx(&d));
    let e = b.config_file(&cfg).unwrap_err().to_string();
    assert!(
        e.starts_with(&format!(
            "{}:2: profile: unknown profile \"agnet\"",
            cfg.display()
        )),
        "{e}"
    );
    assert!(e.contains("agent, agent-dev, analysis, build"), "{e}");
    assert!(profile("").is_none());
}

/// agent-dev: .git/hooks/*.sample (git init) writable, a hook not;
/// ~/.gitconfig readable, ~/.git-credentials not.
#[test]
fn agent_dev_lets_git_work_and_keeps_hooks_out() {
    let d = tmpdir("dev");
    let mut b = Builder::new(ctx(&d));
    b.profile("agent-dev", &d).unwrap();
    let p = Policy::new(b.finish().unwrap()).unwrap();
    let at = |rel: &str| format!("{}/{rel}", d.display());
    assert!(p.decide(Access::Write, at(".git/index").as_bytes()).allowed);
    assert!(p.decide(Access::Write, at(".git/hooks").as_bytes()).allowed);
    assert!(
        p.decide(Access::Write, at(".git/hooks/pre-commit.sample").as_bytes())
            .allowed
    );
    assert!(
        !p.decide(Access::Write, at(".git/hooks/pre-commit").as_bytes())
            .allowed
    );
    assert!(
        !p.decide(Access::Write, at("sub/.git/hooks/post-checkout").as_bytes())
            .allowed
    );
    assert!(
        p.decide(Access::Write, at(".venv/bin/pip").as_bytes())
            .allowed
    );
    assert!(p.decide(Access::Read, b"/home/someone/.gitconfig").allowed);
    assert!(
        p.decide(Access::Read, b"/home/someone/.config/git/ignore")
            .allowed
    );
    assert!(!p.decide(Access::Write, b"/home/someone/.gitconfig").allowed);
    assert!(
        !p.decide(Access::Read, b"/home/someone/.git-credentials")
            .allowed
    );
    assert!(!p.decide(Access::Read, at(".env").as_bytes()).allowed);
}
