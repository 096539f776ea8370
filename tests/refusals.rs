//! What `fsguard run` tells about refusals and what the program sees of
//! fsguard (issue 29 items 4, 5, 9): the summary names each event once,
//! the program's environment is bare's plus only what the docs say run
//! adds, refusals by the kernel's Landlock ruleset are traced and counted,
//! and programs nothing can see are named.

#![cfg(target_os = "linux")]

mod common;

use common::*;
use std::collections::BTreeMap;
use std::path::Path;

fn fsguard(dir: &Path, opts: &[&str], cmd: &[&str]) -> Out {
    let mut c = bare_cmd(cli());
    c.arg("run").args(opts).arg("--").args(cmd).current_dir(dir);
    run(&mut c)
}

fn vars(text: &str) -> BTreeMap<String, String> {
    text.lines()
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// The first event is named once: on the count line, with its `(xN)`; the
/// other distinct events each on a line of their own.
#[test]
fn the_summary_names_each_event_once() {
    let td = TempDir::new("refusals-summary");
    mkdir(&td.join("ws"));
    let (a, b) = (td.join("a"), td.join("b"));
    let cmd = format!(
        "echo > {a}; echo > {a}; echo > {b}; true",
        a = a.display(),
        b = b.display()
    );
    let o = fsguard(&td.join("ws"), &["--root", "."], &["sh", "-c", &cmd]);
    assert_eq!(o.code(), Some(0), "{}", o.describe());
    let a_open = format!("open write {}", a.display());
    assert!(
        o.stderr.contains(&format!(
            "fsguard: 3 accesses blocked; first: {a_open} (x2)\n"
        )),
        "{}",
        o.describe()
    );
    // Once in the summary (the trace lines say `path=`, the hints `--allow-write`).
    assert_eq!(o.stderr.matches(&a_open).count(), 1, "{}", o.describe());
    assert!(
        o.stderr
            .contains(&format!("fsguard:   open write {}\n", b.display())),
        "{}",
        o.describe()
    );
}

/// `env` under `fsguard run` shows what it shows bare, plus `LD_PRELOAD`
/// and `TMPDIR` (with `cache = false`; the cache preset's variables are
/// documented apart): no `FSGUARD_*` variable, in the command or its
/// children, whose refusals still reach the summary.
#[test]
fn the_program_sees_no_fsguard_variable() {
    let td = TempDir::new("refusals-env");
    let ws = td.join("ws");
    mkdir(&ws);
    let ws = ws.canonicalize().unwrap();
    write_file(&ws.join("p.toml"), "root = \".\"\ncache = false\n", 0o644);
    let bare = run(bare_cmd("env").current_dir(&ws));
    let o = fsguard(&ws, &["--config", "p.toml"], &["env"]);
    assert_eq!(o.code(), Some(0), "{}", o.describe());
    let (mut b, mut g) = (vars(&bare.stdout), vars(&o.stdout));
    assert!(
        g.keys().all(|k| !k.starts_with("FSGUARD_")),
        "{}",
        o.describe()
    );
    let preload = g.remove("LD_PRELOAD").expect("LD_PRELOAD");
    assert!(preload.ends_with("libfsguard.so"), "{preload}");
    assert!(g.remove("TMPDIR").is_some(), "{}", o.describe());
    b.remove("TMPDIR");
    assert_eq!(
        b, g,
        "guarded env differs from bare beyond LD_PRELOAD, TMPDIR"
    );

    // A child (sh) and a grandchild (through Python's subprocess) see none
    // either, and the grandchild's refusal is still counted.
    let outside = td.join("outside");
    let script = format!(
        "env | grep ^FSGUARD_ || echo none; \
         python3 -c 'import os, subprocess; print(sorted(k for k in os.environ if k.startswith(\"FSGUARD_\"))); \
         subprocess.run([\"sh\", \"-c\", \"echo x > {}\"])'",
        outside.display()
    );
    let o = fsguard(&ws, &["--config", "p.toml"], &["sh", "-c", &script]);
    assert!(o.stdout.contains("none\n[]\n"), "{}", o.describe());
    assert!(!outside.exists());
    assert!(
        o.stderr.contains(&format!(
            "fsguard: 1 access blocked; first: open write {}",
            outside.display()
        )),
        "{}",
        o.describe()
    );
}
