//! Go programs make their own system calls for all file I/O, dynamically
//! linked (cgo) or not: the library is loaded into a cgo program but sees
//! none of its file calls. The exec check tells them by their build ID note
//! and treats them as it treats static programs (`unguarded_exec`): a
//! warning by default, a refusal under `deny`. Under `fsguard run`,
//! Landlock still confines them.
//!
//! Needs the Go toolchain (`golang-go`). Without it the tests say so and
//! pass, unless `GO_TESTS_REQUIRED` is set, as CI sets it (`.ci/run`
//! installs the toolchain): there a missing `go` fails.

mod children_util;

use children_util::*;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Reads `argv[1]` (prints `read N`), then, given `argv[2]`, writes it.
const MAIN: &str = r#"package main

import (
	"fmt"
	"os"
)

func main() {
	b, err := os.ReadFile(os.Args[1])
	if err != nil {
		fmt.Println("read failed:", err)
	} else {
		fmt.Println("read", len(b))
	}
	if len(os.Args) > 2 {
		if err := os.WriteFile(os.Args[2], []byte("go\n"), 0o644); err != nil {
			fmt.Println("write failed:", err)
		}
	}
}
"#;

/// The same program with cgo: dynamically linked against libc, so the
/// loader runs the library in it.
const CGO: &str = r#"package main

/*
#include <stdlib.h>
*/
import "C"

func init() { _ = C.getenv(C.CString("HOME")) }
"#;

/// The Go toolchain, or `None` (said on stderr) where it is not installed
/// and not required.
fn go() -> Option<PathBuf> {
    let found = std::env::var_os("PATH").and_then(|p| {
        std::env::split_paths(&p)
            .map(|d| d.join("go"))
            .find(|g| g.is_file())
    });
    if found.is_none() {
        assert!(
            std::env::var_os("GO_TESTS_REQUIRED").is_none(),
            "go is required here: apt-get install golang-go"
        );
        eprintln!("go not installed: Go program tests not run");
    }
    found
}

/// Builds the program into `ws/NAME`: with cgo (dynamic) or without
/// (static), offline.
fn build(go: &Path, s: &Scratch, name: &str, cgo: bool) -> PathBuf {
    let src = s.path(&format!("src-{name}"));
    std::fs::create_dir_all(&src).unwrap();
    std::fs::write(src.join("go.mod"), "module gotest\n\ngo 1.18\n").unwrap();
    std::fs::write(src.join("main.go"), MAIN).unwrap();
    if cgo {
        std::fs::write(src.join("cgo.go"), CGO).unwrap();
    }
    let out = s.ws().join(name);
    let st = Command::new(go)
        .args(["build", "-o"])
        .arg(&out)
        .arg(".")
        .current_dir(&src)
        .env("CGO_ENABLED", if cgo { "1" } else { "0" })
        .env("GOPROXY", "off")
        .env("GOFLAGS", "-mod=mod")
        .env_remove("LD_PRELOAD")
        .status()
        .expect("go build");
    assert!(st.success(), "go build {name} failed");
    let file = Command::new("file").arg(&out).output();
    if let Ok(f) = file {
        let f = String::from_utf8_lossy(&f.stdout);
        let want = if cgo {
            "dynamically linked"
        } else {
            "statically linked"
        };
        assert!(f.contains(want), "{name}: {f}");
    }
    out
}

/// Both builds, each with the label the tests print.
fn programs(s: &Scratch) -> Option<Vec<PathBuf>> {
    let go = go()?;
    Some(vec![
        build(&go, s, "gocgo", true),
        build(&go, s, "gostatic", false),
    ])
}

#[test]
fn go_programs_are_reported_under_bare_preload() {
    let s = Scratch::new("go-bare");
    let Some(progs) = programs(&s) else { return };
    std::fs::write(s.ws().join(".env"), "SECRET=1\n").unwrap();
    for p in &progs {
        // Started by a guarded shell: the library's exec hook sees it.
        let o = Command::new("sh")
            .arg("-c")
            .arg(format!("{} .env", p.display()))
            .current_dir(s.ws())
            .env("LD_PRELOAD", lib())
            .env("FSGUARD_ROOT", s.ws())
            .output()
            .unwrap();
        let err = stderr(&o);
        let line = format!(
            "[fsguard] unguarded exec go path={} call=execve",
            p.display()
        );
        assert!(err.contains(&line), "{}: {err}", p.display());
        // What the warning is about: the library did not stop the read of
        // a secret the policy denies always.
        assert!(stdout(&o).contains("read 9"), "{}", stdout(&o));
    }
}

#[test]
fn unguarded_exec_deny_refuses_go_programs() {
    let s = Scratch::new("go-deny");
    let Some(progs) = programs(&s) else { return };
    let out = s.ws().join("out");
    for p in &progs {
        let args = |cmd: &[&str]| -> Vec<String> {
            ["--root", "ws", "--unguarded-exec", "deny", "--"]
                .iter()
                .chain(cmd)
                .map(|a| a.to_string())
                .collect()
        };
        let (prog, outs) = (p.to_str().unwrap(), out.to_str().unwrap());
        // As the command itself, and exec'd by a guarded shell.
        let direct = args(&[prog, prog, outs]);
        let o = run(&s.0, &direct.iter().map(String::as_str).collect::<Vec<_>>());
        assert_eq!(code(&o), 126, "{}", stderr(&o));
        assert!(stderr(&o).contains("a Go program"), "{}", stderr(&o));
        let cmd = format!("{prog} {prog} {outs}");
        let nested = args(&["sh", "-c", &cmd]);
        let o = run(&s.0, &nested.iter().map(String::as_str).collect::<Vec<_>>());
        assert_eq!(code(&o), 126, "{}", stderr(&o));
        let line = format!("[fsguard] blocked execve exec path={prog} rule=unguarded_exec:go");
        assert!(stderr(&o).contains(&line), "{}", stderr(&o));
        assert!(!out.exists(), "{prog} ran");
    }
}

#[test]
fn landlock_confines_go_programs_under_run() {
    if !landlock_available() {
        eprintln!("no Landlock: not run");
        return;
    }
    let s = Scratch::new("go-landlock");
    let Some(progs) = programs(&s) else { return };
    let outside = s.path("outside.txt");
    for p in &progs {
        let (prog, outs) = (p.to_str().unwrap(), outside.to_str().unwrap());
        let o = run(&s.0, &["--root", "ws", "--", prog, prog, outs]);
        assert_eq!(code(&o), 0, "{}", stderr(&o));
        let line = format!("[fsguard] unguarded exec go path={prog}");
        assert!(stderr(&o).contains(&line), "{}", stderr(&o));
        assert!(stdout(&o).contains("write failed"), "{}", stdout(&o));
        assert!(!outside.exists(), "{prog} wrote outside the root");
    }
}

/// Whether `fsguard run` applies Landlock here (`--landlock=required`
/// exits 125 where it cannot).
fn landlock_available() -> bool {
    let o = fsguard(
        Path::new("/"),
        "run",
        &["--landlock=required", "--root", "/tmp", "--", "true"],
        &[],
    );
    code(&o) == 0
}
