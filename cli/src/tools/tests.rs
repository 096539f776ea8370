use super::*;

/// A fresh directory under the system's temporary directory, removed on
/// drop.
struct Dir(PathBuf);

impl Dir {
    fn new(tag: &str) -> Dir {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let p = std::env::temp_dir().join(format!(
            "fsguard-tools-{tag}-{}-{nanos:x}",
            std::process::id()
        ));
        std::fs::create_dir_all(&p).unwrap();
        Dir(std::fs::canonicalize(&p).unwrap())
    }
}

impl Drop for Dir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn write(p: &Path, text: &str) {
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

fn env_of(pairs: &[(&str, &Path)]) -> Vec<(OsString, OsString)> {
    pairs
        .iter()
        .map(|(k, v)| (OsString::from(k), v.as_os_str().to_os_string()))
        .collect()
}

fn value<'a>(env: &'a [(OsString, OsString)], k: &str) -> Option<&'a str> {
    get(env, k).and_then(OsStr::to_str)
}

#[test]
fn copies_without_credentials_and_guards_the_originals() {
    let d = Dir::new("copies");
    let (home, tmp) = (d.0.join("home"), d.0.join("tmp"));
    std::fs::create_dir_all(&tmp).unwrap();
    write(
        &home.join(".npmrc"),
        "registry=https://npm.example/\n//npm.example/:_authToken=S3CRET1\n",
    );
    write(
        &home.join(".config/pip/pip.conf"),
        "[global]\nindex-url = https://u:S3CRET2@pypi.example/simple\n",
    );
    // Not parseable: not copied, refused all the same.
    write(
        &home.join(".cargo/config.toml"),
        "[registry\ntoken = 'S3CRET3'\n",
    );
    write(&home.join(".yarnrc.yml"), "npmAuthToken: S3CRET4\n");
    let mut s = Settings::default();
    let env = env_of(&[("HOME", &home)]);
    let h = registry_copies(&mut s, &tmp, &env);

    let npmrc = std::fs::read_to_string(tmp.join(".npmrc")).unwrap();
    assert_eq!(npmrc, "registry=https://npm.example/\n");
    let pip = std::fs::read_to_string(tmp.join("pip.conf")).unwrap();
    assert_eq!(pip, "[global]\nindex-url = https://pypi.example/simple\n");
    assert!(!tmp.join(".cargo/config.toml").exists());
    assert!(!tmp.join(".yarnrc.yml").exists());
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(tmp.join(".npmrc"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600);

    assert_eq!(
        value(&h.env, "npm_config_userconfig"),
        tmp.join(".npmrc").to_str()
    );
    assert_eq!(
        value(&h.env, "PIP_CONFIG_FILE"),
        tmp.join("pip.conf").to_str()
    );
    for f in [
        ".npmrc",
        ".config/pip/pip.conf",
        ".cargo/config.toml",
        ".yarnrc.yml",
    ] {
        let p = home.join(f).display().to_string();
        assert!(s.secret_paths.contains(&p), "{p}: {:?}", s.secret_paths);
    }
    assert_eq!(h.cargo_skip, ["config.toml"]);
    assert_eq!(h.notes.len(), 1, "{:?}", h.notes);
    assert!(h.notes[0].contains("config.toml"), "{:?}", h.notes);
    assert!(h.notes[0].contains("not handed"), "{:?}", h.notes);
}

#[test]
fn the_callers_file_variables_are_followed() {
    let d = Dir::new("vars");
    let (home, tmp) = (d.0.join("home"), d.0.join("tmp"));
    std::fs::create_dir_all(&tmp).unwrap();
    let theirs = d.0.join("etc/npmrc");
    write(
        &theirs,
        "registry=https://mine.example/\n_authToken=S3CRET\n",
    );
    write(
        &home.join(".m2/settings.xml"),
        "<settings><servers><server><password>S3CRET</password></server></servers></settings>",
    );
    let mut env = env_of(&[("HOME", &home), ("npm_config_userconfig", &theirs)]);
    env.push(("MAVEN_OPTS".into(), "-Xmx1g".into()));
    let mut s = Settings::default();
    let h = registry_copies(&mut s, &tmp, &env);
    assert!(h.maven_home);
    maven_home(&mut env, &tmp);
    assert_eq!(
        std::fs::read_to_string(tmp.join(".npmrc")).unwrap(),
        "registry=https://mine.example/\n"
    );
    assert!(s.secret_paths.contains(&theirs.display().to_string()));
    let opts = format!("-Xmx1g -Duser.home={}", tmp.display());
    assert_eq!(value(&env, "MAVEN_OPTS"), Some(opts.as_str()));
    assert_eq!(
        std::fs::read_to_string(tmp.join(".m2/settings.xml")).unwrap(),
        "<settings></settings>"
    );
}

#[test]
fn a_fifo_or_a_huge_file_is_not_read() {
    let d = Dir::new("fifo");
    let (home, tmp) = (d.0.join("home"), d.0.join("tmp"));
    std::fs::create_dir_all(&tmp).unwrap();
    std::fs::create_dir_all(&home).unwrap();
    let fifo = d.0.join("fifo");
    let c = std::ffi::CString::new(fifo.as_os_str().as_bytes()).unwrap();
    // SAFETY: a C string.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    write(&home.join(".config/pip/pip.conf"), &"#".repeat(2 << 20));
    let env = env_of(&[("HOME", &home), ("npm_config_userconfig", &fifo)]);
    let mut s = Settings::default();
    let h = registry_copies(&mut s, &tmp, &env);
    assert!(h.env.is_empty(), "{:?}", h.env);
    assert_eq!(h.notes.len(), 2, "{:?}", h.notes);
    assert!(h.notes[0].contains("not a regular file"), "{:?}", h.notes);
    assert!(h.notes[1].contains("larger than"), "{:?}", h.notes);
    assert!(s.secret_paths.contains(&fifo.display().to_string()));
}

#[test]
fn nothing_is_copied_without_the_secrets_preset() {
    let d = Dir::new("off");
    let (home, tmp) = (d.0.join("home"), d.0.join("tmp"));
    std::fs::create_dir_all(&tmp).unwrap();
    write(&home.join(".npmrc"), "_authToken=S3CRET\n");
    let mut s = Settings {
        secrets: false,
        ..Settings::default()
    };
    let h = registry_copies(&mut s, &tmp, &env_of(&[("HOME", &home)]));
    assert!(h.env.is_empty() && s.secret_paths.is_empty());
    assert!(!tmp.join(".npmrc").exists());
}

#[test]
fn a_callers_cache_is_kept_only_where_the_command_may_write() {
    let d = Dir::new("keep");
    let (root, tmp) = (d.0.join("ws"), d.0.join("tmp"));
    std::fs::create_dir_all(&root).unwrap();
    std::fs::create_dir_all(&tmp).unwrap();
    let s = Settings {
        root: Some(root.display().to_string()),
        tmpdir: Some(tmp.display().to_string()),
        ..Settings::default()
    };
    let policy = Policy::new(s).unwrap();
    let inside = root.join("cache/go-mod");
    let outside = d.0.join("home/go/pkg/mod");
    let env = env_of(&[
        ("GOMODCACHE", &inside),
        ("GOCACHE", &outside),
        ("GEM_HOME", &outside),
    ]);
    let ours: Vec<(OsString, OsString)> = ["GOMODCACHE", "GOCACHE", "GEM_HOME", "npm_config_cache"]
        .iter()
        .map(|k| (OsString::from(k), tmp.join(k).into_os_string()))
        .collect();
    let out = cache_vars(Some(&policy), &tmp, &env, ours);
    assert_eq!(
        value(&out, "GOMODCACHE"),
        None,
        "the caller's, inside the root, stays"
    );
    assert_eq!(value(&out, "GOCACHE"), tmp.join("GOCACHE").to_str());
    assert_eq!(
        value(&out, "npm_config_cache"),
        tmp.join("npm_config_cache").to_str()
    );
    assert_eq!(value(&out, "GEM_HOME"), tmp.join("GEM_HOME").to_str());
    let gem_path = format!("{}:", outside.display());
    assert_eq!(value(&out, "GEM_PATH"), Some(gem_path.as_str()));
    let opts = format!(
        "-Dmaven.repo.local={}",
        tmp.join(".m2/repository").display()
    );
    assert_eq!(value(&out, "MAVEN_OPTS"), Some(opts.as_str()));

    // The caller's MAVEN_OPTS keeps its options; its own local repository
    // outside the root is overridden (the later -D wins), inside kept.
    let mut env = Vec::new();
    env.push((
        OsString::from("MAVEN_OPTS"),
        OsString::from(format!("-Xmx1g -Dmaven.repo.local={}", outside.display())),
    ));
    let out = cache_vars(Some(&policy), &tmp, &env, Vec::new());
    let want = format!(
        "-Xmx1g -Dmaven.repo.local={} -Dmaven.repo.local={}",
        outside.display(),
        tmp.join(".m2/repository").display()
    );
    assert_eq!(value(&out, "MAVEN_OPTS"), Some(want.as_str()));
    env[0].1 = format!("-Dmaven.repo.local={}", inside.display()).into();
    let out = cache_vars(Some(&policy), &tmp, &env, Vec::new());
    assert_eq!(value(&out, "MAVEN_OPTS"), None);
}
