//! The library carries its own copy of GCC's unwinder (build.rs links
//! libgcc_eh.a) rather than loading libgcc_s.so.1 into every guarded
//! process, and keeps it private: a guarded C++ program's exceptions go
//! through its own unwinder, across the library's hooks too.

// ELF dynamic sections and LD_PRELOAD: Linux only.
#![cfg(target_os = "linux")]

mod common;

use common::*;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;

#[test]
fn library_needs_no_libgcc_s_and_exports_no_unwinder_symbol() {
    let o = run(Command::new("readelf").arg("-d").arg(lib()));
    assert!(o.status.success(), "{}", o.describe());
    let needed: Vec<&str> = o
        .stdout
        .lines()
        .filter(|l| l.contains("(NEEDED)"))
        .collect();
    assert!(
        needed.iter().any(|l| l.contains("libc.so")),
        "odd readelf output:\n{}",
        o.stdout
    );
    let gcc_s: Vec<&&str> = needed.iter().filter(|l| l.contains("libgcc_s")).collect();
    assert!(gcc_s.is_empty(), "the library loads libgcc_s: {gcc_s:?}");

    let exports = exported_functions(lib());
    assert!(exports.len() > 100, "odd nm output: {exports:?}");
    let unwinder: Vec<&String> = exports
        .iter()
        .filter(|s| {
            [
                "_Unwind_",
                "__gcc_",
                "__register_frame",
                "__deregister_frame",
            ]
            .iter()
            .any(|p| s.starts_with(p))
        })
        .collect();
    assert!(
        unwinder.is_empty(),
        "the library exports unwinder symbols a program would bind to: {unwinder:?}"
    );
}

/// Compiles tests/cpp/exceptions.cpp with the C++ compiler (`$CXX`, else
/// `c++`) into the cargo target tmp dir.
fn exceptions_program() -> PathBuf {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/cpp/exceptions.cpp");
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("fsguard-cpp");
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join(format!("exceptions.{}", std::process::id()));
    let cxx = std::env::var_os("CXX").unwrap_or_else(|| OsString::from("c++"));
    let o = run(Command::new(&cxx)
        .args(["-O2", "-Wall", "-o"])
        .arg(&out)
        .arg(&src)
        .env_remove("LD_PRELOAD"));
    assert!(
        o.status.success(),
        "cannot compile {}:\n{}",
        src.display(),
        o.describe()
    );
    out
}

#[test]
fn cpp_exceptions_unwind_through_the_program_and_through_a_hook() {
    let prog = exceptions_program();
    let root = TempDir::new("cpp-root");
    let walked = root.join("tree");
    mkdir(&walked);
    write_file(&walked.join("f"), "x", 0o644);
    let root_s = root.path().to_str().unwrap();

    // Allowed: nftw calls back into the program, which throws through libc's
    // nftw and the library's hook; main catches it.
    let o = run(guarded_cmd(&prog, &[("FSGUARD_ROOT", root_s)]).arg(&walked));
    assert_eq!(o.code(), Some(0), "{}", o.describe());
    assert_eq!(
        o.stdout,
        format!("caught plain\ncaught from callback {}\n", walked.display()),
        "{}",
        o.describe()
    );
    assert_no_blocked(&o);

    // Denied: the same walk outside the root is refused by the hook before
    // any callback runs, so nothing throws from it.
    let outside = TempDir::new("cpp-outside");
    let before = snapshot(outside.path());
    let o = run(guarded_cmd(&prog, &[("FSGUARD_ROOT", root_s)]).arg(outside.path()));
    assert_eq!(o.code(), Some(0), "{}", o.describe());
    assert_eq!(
        o.stdout,
        format!(
            "caught plain\nnftw returned -1 errno {}\n",
            strerror(libc::EACCES)
        ),
        "{}",
        o.describe()
    );
    assert_traces(&o, &[Expect::new("nftw", "read", outside.path(), "root")]);
    assert_eq!(snapshot_diff(&before, &snapshot(outside.path())), None);
    let _ = std::fs::remove_file(&prog);
}

fn strerror(e: i32) -> String {
    std::io::Error::from_raw_os_error(e)
        .to_string()
        .split(" (os error")
        .next()
        .unwrap()
        .to_string()
}
