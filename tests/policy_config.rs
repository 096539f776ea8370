//! Bad policies never leave a program running unguarded: the library stops
//! the process before `main` (exit 125, `fsguard: error: …` naming the file,
//! line and key), and the CLI exits 125 before running anything.

mod common;
mod policy_support;
use policy_support::*;

/// (config text, what the one-line error must say)
const BAD_CONFIGS: &[(&str, &str)] = &[
    (
        "root = \"ws\"\nbogus = 1\n",
        "policy.toml:2:1: bogus: unknown field `bogus`",
    ),
    (
        "[read]\ndeny = [\n  \"/ok\",\n  \"/x/[a\",\n]\n",
        "policy.toml:4: read.deny: bad glob \"/x/[a\"",
    ),
    (
        "[write]\nallow = [\"/x/{a,b\"]\n",
        "policy.toml:2: write.allow: bad glob",
    ),
    (
        "[log]\nformat = \"xml\"\n",
        "policy.toml:2:10: log.format: unknown variant `xml`",
    ),
    (
        "mode = \"loud\"\n",
        "policy.toml:1:8: mode: unknown variant `loud`",
    ),
    (
        "errno = \"ENOENT\"\n",
        "policy.toml:1:9: errno: unknown variant `ENOENT`",
    ),
    (
        "readonly = \"yes\"\n",
        "policy.toml:1:12: readonly: invalid type",
    ),
    (
        "[read]\nalow = [\"/x\"]\n",
        "policy.toml:2:1: read.alow: unknown field `alow`",
    ),
    (
        "[reed]\nallow = []\n",
        "policy.toml:1:2: reed: unknown field `reed`",
    ),
    ("root = \n", "policy.toml:1:8: root: "),
    ("root = \"no-such-dir\"\n", "policy.toml:1: root: "),
    (
        "[read]\ndeny = [\"\"]\n",
        "policy.toml:2: read.deny: empty pattern",
    ),
    (
        "[write]\nallow = [\"\"]\n",
        "policy.toml:2: write.allow: empty pattern",
    ),
    // Issue 28: an empty root is not the config's own directory.
    ("\nroot = \"\"\n", "policy.toml:2: root: empty"),
    ("[log]\ntarget = \"\"\n", "policy.toml:2: log.target: empty"),
];

/// Runs `sh -c 'echo ran > MARKER'` under the bad policy and asserts it did
/// not run, exited 125 and said `want` on one `fsguard: error:` line.
fn assert_refused(mut c: std::process::Command, dir: &TempDir, want: &str, how: &str) {
    let marker = dir.join("marker");
    let _ = std::fs::remove_file(&marker);
    let o = run(c.current_dir(dir.path()));
    assert_eq!(o.code, Some(125), "{how}: {}", o.show());
    assert!(!marker.exists(), "{how}: the program ran: {}", o.show());
    let first = o.stderr.lines().next().unwrap_or("");
    assert!(
        first.starts_with("fsguard: error: ") && first.contains(want),
        "{how}: want {want:?} in the first stderr line: {}",
        o.show()
    );
    assert_eq!(o.stdout, "", "{how}");
}

fn victim(mut c: std::process::Command) -> std::process::Command {
    c.args(["-c", "echo ran > marker"]);
    c
}

#[test]
fn bad_config_stops_library_and_cli() {
    let d = TempDir::new("badcfg");
    std::fs::create_dir(d.join("ws")).unwrap();
    for (text, want) in BAD_CONFIGS {
        let cfg = d.file("policy.toml", text);
        let cfg = cfg.to_str().unwrap();
        let how = format!("config {text:?}");
        assert_refused(
            victim(guarded("/bin/sh", &[("FSGUARD_CONFIG", cfg)])),
            &d,
            want,
            &format!("LD_PRELOAD, {how}"),
        );
        assert_refused(
            victim(fsguard(&["run", "--config", cfg, "--", "/bin/sh"])),
            &d,
            want,
            &format!("fsguard run --config, {how}"),
        );
        let mut env_cfg = fsguard(&["run", "--", "/bin/sh"]);
        env_cfg.env("FSGUARD_CONFIG", cfg);
        assert_refused(
            victim(env_cfg),
            &d,
            want,
            &format!("fsguard run + FSGUARD_CONFIG, {how}"),
        );
        let o = run(fsguard(&["check", "--config", cfg]).current_dir(d.path()));
        assert_eq!(o.code, Some(125), "check {how}: {}", o.show());
        assert!(o.stderr.contains(want), "check {how}: {}", o.show());
        let o = run(fsguard(&["explain", "--config", cfg, "read", "/x"]).current_dir(d.path()));
        assert_eq!(o.code, Some(125), "explain {how}: {}", o.show());
    }
}

#[test]
fn missing_unreadable_and_directory_configs() {
    let d = TempDir::new("cfgfile");
    std::fs::create_dir(d.join("adir")).unwrap();
    let unreadable = d.file("locked.toml", "readonly = true\n");
    std::fs::set_permissions(
        &unreadable,
        std::os::unix::fs::PermissionsExt::from_mode(0o000),
    )
    .unwrap();
    // Root reads mode-000 files; then only the other cases can be checked.
    // SAFETY: geteuid takes no argument and cannot fail.
    let root = unsafe { libc_geteuid() } == 0;
    let mut cases = vec![
        ("missing.toml", "missing.toml: No such file or directory"),
        ("adir", "adir: Is a directory"),
    ];
    if !root {
        cases.push(("locked.toml", "locked.toml: Permission denied"));
    }
    for (name, want) in cases {
        let p = d.join(name);
        let p = p.to_str().unwrap();
        assert_refused(
            victim(guarded("/bin/sh", &[("FSGUARD_CONFIG", p)])),
            &d,
            want,
            &format!("LD_PRELOAD, FSGUARD_CONFIG={name}"),
        );
        assert_refused(
            victim(fsguard(&["run", "--config", p, "--", "/bin/sh"])),
            &d,
            want,
            &format!("fsguard run --config {name}"),
        );
        // A relative FSGUARD_CONFIG is against the cwd.
        assert_refused(
            victim(guarded("/bin/sh", &[("FSGUARD_CONFIG", name)])),
            &d,
            want,
            &format!("LD_PRELOAD, relative FSGUARD_CONFIG={name}"),
        );
    }
}

extern "C" {
    #[link_name = "geteuid"]
    fn libc_geteuid() -> u32;
}

#[test]
fn bad_variables_stop_library_and_cli() {
    let d = TempDir::new("badenv");
    for (k, v, want) in [
        (
            "FSGUARD_ERRNO",
            "ENOENT",
            "FSGUARD_ERRNO: bad value \"ENOENT\"",
        ),
        ("FSGUARD_MODE", "loud", "FSGUARD_MODE: bad value \"loud\""),
        (
            "FSGUARD_LOG_FORMAT",
            "xml",
            "FSGUARD_LOG_FORMAT: bad value \"xml\"",
        ),
        ("FSGUARD_READONLY", "maybe", "FSGUARD_READONLY: bad value"),
        ("FSGUARD_ROOT", "no-such-dir", "no-such-dir"),
        ("FSGUARD_ROTO", "ws", "unknown variable FSGUARD_ROTO"),
        ("FSGUARD_LOG", "", "FSGUARD_LOG is empty"),
        ("FSGUARD_ROOT", "", "FSGUARD_ROOT is empty"),
        ("FSGUARD_CONFIG", "", "FSGUARD_CONFIG is empty"),
    ] {
        assert_refused(
            victim(guarded("/bin/sh", &[("FSGUARD_READONLY", "1"), (k, v)])),
            &d,
            want,
            &format!("LD_PRELOAD {k}={v}"),
        );
        let mut c = fsguard(&["run", "--readonly", "--", "/bin/sh"]);
        c.env(k, v);
        assert_refused(victim(c), &d, want, &format!("fsguard run {k}={v}"));
    }
}

#[test]
fn bad_flags_exit_125_before_running() {
    let d = TempDir::new("badflag");
    for (args, want) in [
        (&["--log-format", "xml"][..], "--log-format: bad value"),
        (&["--deny-read", "/x/[a"][..], "bad glob"),
        (&["--root", "no-such-dir"][..], "--root no-such-dir"),
        (&["--root", ""][..], "--root : empty"),
        (&["--readonly="][..], "--readonly=: empty"),
        (&["--config", ""][..], "--config needs a value"),
        (&["--log", ""][..], "is empty"),
        (&["--allow-write", ""][..], "empty pattern"),
        (&["--bogus"][..], "unknown option --bogus"),
    ] {
        let mut all = vec!["run"];
        all.extend_from_slice(args);
        all.extend(["--", "/bin/sh"]);
        assert_refused(victim(fsguard(&all)), &d, want, &format!("{args:?}"));
    }
    let o = run(&mut fsguard(&["check", "--allow-write"]));
    assert_eq!(o.code, Some(125), "{}", o.show());
    assert!(
        o.stderr
            .starts_with("fsguard: error: --allow-write needs a value"),
        "{}",
        o.show()
    );
}
