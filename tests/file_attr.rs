//! file_getattr(2) and file_setattr(2) (Linux 6.17, numbers 468 and 469)
//! through `syscall()`: file_setattr changes an inode's flags (a metadata
//! write, as chmod), so it is refused outside the root; file_getattr reads
//! them (metadata, as stat: refused only under `hide_outside`). Bare and
//! under `fsguard run`.

#![cfg(target_os = "linux")]

mod common;

use std::path::Path;
use std::process::Command;

use common::*;

/// `file_attr ARGS` guarded with root `ws` (and `hide_outside` when asked),
/// bare or under `fsguard run`.
fn guarded(run_cli: bool, hide: bool, td: &TempDir, args: &[&str]) -> Out {
    let prog = c_program("file_attr", &[]);
    let ws = td.join("ws");
    let cfg = td.join("fsguard.toml");
    std::fs::write(
        &cfg,
        format!("root = {:?}\nhide_outside = {hide}\n", ws.to_str().unwrap()),
    )
    .unwrap();
    let mut c = if run_cli {
        let mut c = bare_cmd(cli());
        c.args(["run", "--no-landlock", "--config"])
            .arg(&cfg)
            .arg("--")
            .arg(&prog);
        c
    } else {
        guarded_cmd(&prog, &[("FSGUARD_CONFIG", cfg.to_str().unwrap())])
    };
    c.args(args);
    run(&mut c)
}

fn bare(args: &[&str]) -> Out {
    let mut c: Command = bare_cmd(c_program("file_attr", &[]));
    c.args(args);
    run(&mut c)
}

fn layout() -> TempDir {
    let td = TempDir::new("file-attr");
    mkdir(&td.join("ws"));
    mkdir(&td.join("out"));
    write_file(&td.join("ws/f"), "in\n", 0o644);
    write_file(&td.join("out/f"), "out\n", 0o644);
    td
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn file_setattr_outside_the_root_is_refused() {
    for run_cli in [false, true] {
        let td = layout();
        let out = td.join("out/f");
        let before = bare(&["get", s(&out)]);
        if before.stdout.starts_with("errno") {
            eprintln!("file_getattr unsupported here: {}", before.stdout);
            return;
        }
        for how in [&[][..], &["nofollow"][..], &["at"][..]] {
            let mut args = vec!["set", s(&out)];
            args.extend_from_slice(how);
            let o = guarded(run_cli, false, &td, &args);
            assert_eq!(o.stdout.trim(), "errno 13", "{how:?} {}", o.describe());
            assert!(
                o.stderr.contains(&format!(
                    "blocked file_setattr write path={}",
                    out.display()
                )),
                "{how:?} {}",
                o.describe()
            );
            assert_eq!(
                bare(&["get", s(&out)]).stdout,
                before.stdout,
                "{how:?}: changed"
            );
        }
        // Inside the root: as bare.
        let inside = td.join("ws/f");
        let g = guarded(run_cli, false, &td, &["set", s(&inside)]);
        let b = bare(&["get", s(&inside)]);
        assert!(g.stdout.starts_with("ok"), "{}", g.describe());
        assert_eq!(g.stdout, b.stdout, "{}", g.describe());
        // file_getattr is metadata: not confined by default...
        let g = guarded(run_cli, false, &td, &["get", s(&out)]);
        assert_eq!(g.stdout, before.stdout, "{}", g.describe());
        // ...and refused under hide_outside.
        let g = guarded(run_cli, true, &td, &["get", s(&out)]);
        assert!(g.stdout.starts_with("errno"), "{}", g.describe());
        assert!(g.stderr.contains("file_getattr"), "{}", g.describe());
    }
}
