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
    // An empty HOME: a registry file in the machine's own (an `~/.npmrc`)
    // would add the copy's variable, documented apart like the cache's.
    let home = td.join("home");
    mkdir(&home);
    let bare = run(bare_cmd("env").env("HOME", &home).current_dir(&ws));
    let mut c = bare_cmd(cli());
    c.env("HOME", &home)
        .args(["run", "--config", "p.toml", "--", "env"])
        .current_dir(&ws);
    let o = run(&mut c);
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

/// `--audit` lets every call through the library, and `fsguard run`'s
/// Landlock ruleset still keeps writes inside the root: the write the
/// library let through fails, and gets a trace line `rule=landlock`, is
/// counted as blocked (`--fail-on-block` exits 3) and named apart in the
/// summary. Without Landlock the same write goes ahead, and nothing says
/// the kernel refused it.
#[test]
fn a_refusal_by_landlock_is_traced_and_counted() {
    let td = TempDir::new("refusals-landlock");
    let ws = td.join("ws");
    let out = td.join("out");
    mkdir(&ws);
    mkdir(&out);
    let out = out.canonicalize().unwrap();
    let f = out.join("f");
    let d = out.join("d");
    let cmd = format!(
        "echo x > {f} || echo write-failed; mkdir {d} || echo mkdir-failed; true",
        f = f.display(),
        d = d.display()
    );
    let o = fsguard(
        &ws,
        &["--audit", "--root", ".", "--no-landlock"],
        &["sh", "-c", &cmd],
    );
    assert_eq!(o.code(), Some(0), "{}", o.describe());
    assert!(f.exists() && d.exists(), "{}", o.describe());
    assert!(!o.stderr.contains("rule=landlock"), "{}", o.describe());
    assert!(!o.stderr.contains("accesses blocked"), "{}", o.describe());
    std::fs::remove_file(&f).unwrap();
    std::fs::remove_dir(&d).unwrap();
    if landlock_abi() == 0 {
        eprintln!("no Landlock on this kernel: the rest is skipped");
        return;
    }
    let o = fsguard(
        &ws,
        &["--audit", "--root", ".", "--fail-on-block"],
        &["sh", "-c", &cmd],
    );
    assert_eq!(o.code(), Some(3), "{}", o.describe());
    assert!(
        o.stdout.contains("write-failed") && o.stdout.contains("mkdir-failed"),
        "{}",
        o.describe()
    );
    assert!(!f.exists() && !d.exists());
    let landlock: Vec<Trace> = o
        .blocked()
        .into_iter()
        .filter(|t| t.field("rule") == Some("landlock"))
        .collect();
    let got: Vec<(&str, &str, Option<&str>, Option<&str>)> = landlock
        .iter()
        .map(|t| {
            (
                t.call.as_str(),
                t.access.as_str(),
                t.field("path"),
                t.field("errno"),
            )
        })
        .collect();
    let (fs, ds) = (f.display().to_string(), d.display().to_string());
    assert_eq!(
        got,
        [
            ("open", "write", Some(fs.as_str()), None),
            ("mkdir", "write", Some(ds.as_str()), None)
        ],
        "{}",
        o.describe()
    );
    // Audited by the library, refused by the kernel: the summary says both.
    for want in [
        format!("fsguard: 2 accesses blocked; first: open write {fs}\n"),
        "fsguard: 2 of them refused by the kernel's Landlock ruleset after the library let \
         them through (rule=landlock): blocked, not only would have been (audit)\n"
            .to_string(),
        format!("fsguard: 2 accesses would have been blocked (audit); first: open write {fs}\n"),
    ] {
        assert!(o.stderr.contains(&want), "{want}\n{}", o.describe());
    }
    // JSON lines carry the errno the call failed with.
    let o = fsguard(
        &ws,
        &["--audit", "--root", ".", "--log-format", "json"],
        &["sh", "-c", &cmd],
    );
    let line = o
        .stderr
        .lines()
        .find(|l| l.contains("\"rule\":\"landlock\""))
        .unwrap_or_else(|| panic!("{}", o.describe()));
    assert!(
        line.starts_with("{\"event\":\"blocked\",\"call\":\"open\",\"access\":\"write\"")
            && line.contains("\"errno\":13"),
        "{line}"
    );
}

/// A static program a guarded shell starts: the library sees none of its
/// calls, and what the kernel refuses it is not counted; the summary says
/// so, by name, whatever the log's format or target.
#[test]
fn a_static_child_is_named_in_the_summary() {
    let td = TempDir::new("refusals-static");
    let ws = td.join("ws");
    mkdir(&ws);
    let w = c_program("static_writer", &["-static"]);
    let prog = ws.join("writer");
    std::fs::copy(&w, &prog).unwrap();
    let prog = prog.canonicalize().unwrap();
    let out = td.join("out");
    let cmd = format!("{} {}; true", prog.display(), out.display());
    let note = format!(
        "fsguard: a static program ran ({}): the library sees none of its calls; ",
        prog.display()
    );
    for extra in [&[][..], &["--log-format", "json"], &["--log", "off"]] {
        let mut opts = vec!["--root", ".", "--fail-on-block"];
        opts.extend(extra);
        let o = fsguard(&ws, &opts, &["sh", "-c", &cmd]);
        assert_eq!(
            o.stderr.matches(&note).count(),
            1,
            "{extra:?}: {}",
            o.describe()
        );
        if landlock_abi() > 0 {
            assert!(!out.exists(), "{}", o.describe());
            assert!(
                o.stderr
                    .contains("what the kernel's ruleset refused it is neither traced nor counted"),
                "{}",
                o.describe()
            );
            // Not counted: the command's own status.
            assert_eq!(o.code(), Some(0), "{}", o.describe());
        }
        let _ = std::fs::remove_file(&out);
    }
}
