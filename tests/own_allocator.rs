//! Programs that bring their own allocator (rustc and cargo link jemalloc)
//! and make a hooked call while holding its lock: the first hooked call
//! loads the guard, and the guard must not allocate through that
//! allocator (src/heap.rs). Before, such a program hung at start.

#![cfg(all(target_os = "linux", target_env = "gnu"))]

mod common;

use common::*;
use std::path::PathBuf;

/// The program and its allocator library, copied into a root (where
/// `fsguard run`'s Landlock ruleset lets the loader read them), and a file
/// outside the root for the allocator's set-up to open.
struct Case {
    _td: TempDir,
    ws: PathBuf,
    outside: PathBuf,
}

impl Case {
    fn new() -> Case {
        let td = TempDir::new("own-allocator");
        let ws = td.join("ws");
        mkdir(&ws);
        write_file(&td.join("outside"), "outside\n", 0o644);
        let ws = ws.canonicalize().unwrap();
        let lib = c_program(
            "own_malloc_lib",
            &[
                "-shared",
                "-fPIC",
                "-pthread",
                "-Wl,-soname,libown_malloc.so",
            ],
        );
        let main = c_program(
            "own_malloc_main",
            &[
                "-Wl,--no-as-needed",
                lib.to_str().unwrap(),
                "-Wl,-rpath,$ORIGIN",
            ],
        );
        std::fs::copy(&lib, ws.join("libown_malloc.so")).unwrap();
        std::fs::copy(&main, ws.join("own_malloc_main")).unwrap();
        let outside = td.join("outside").canonicalize().unwrap();
        Case {
            _td: td,
            ws,
            outside,
        }
    }

    /// Killed after a minute: a hang is the failure this guards against.
    fn program(&self) -> [String; 4] {
        [
            "-s".into(),
            "KILL".into(),
            "60".into(),
            self.ws.join("own_malloc_main").display().to_string(),
        ]
    }

    /// It ran to the end, and the set-up's open of the outside file was
    /// refused with its trace line: the guard was loaded by it, not passed.
    fn check(&self, o: &Out) {
        assert_eq!(o.code(), Some(0), "{}", o.describe());
        assert_eq!(o.stdout, "probe 13\nown malloc ok\n", "{}", o.describe());
        assert_traces(o, &[Expect::new("open", "read", &self.outside, "root")]);
    }
}

#[test]
fn a_program_holding_its_allocators_lock_at_the_first_hooked_call_runs() {
    let case = Case::new();
    let mut c = guarded_cmd("timeout", &[("FSGUARD_ROOT", case.ws.to_str().unwrap())]);
    c.args(case.program())
        .env("OWN_MALLOC_PROBE", &case.outside)
        .current_dir(&case.ws);
    case.check(&run(&mut c));
}

#[test]
fn a_program_holding_its_allocators_lock_at_the_first_hooked_call_runs_under_run() {
    let case = Case::new();
    let mut c = bare_cmd(cli());
    c.arg("run")
        .arg("--root")
        .arg(&case.ws)
        .args(["--", "timeout"])
        .args(case.program())
        .env("OWN_MALLOC_PROBE", &case.outside)
        .current_dir(&case.ws);
    case.check(&run(&mut c));
}

/// The real case: rustc (jemalloc) under the library prints what it
/// prints bare.
#[test]
fn rustc_runs_as_bare() {
    let sysroot = run(bare_cmd("rustc").args(["--print", "sysroot"]));
    assert_eq!(sysroot.code(), Some(0), "{}", sysroot.describe());
    let rustc = PathBuf::from(sysroot.stdout.trim()).join("bin/rustc");
    let bare = run(bare_cmd("timeout")
        .args(["-s", "KILL", "60"])
        .arg(&rustc)
        .arg("-vV"));
    let o = run(guarded_cmd("timeout", &[("FSGUARD_READONLY", "1")])
        .args(["-s", "KILL", "60"])
        .arg(&rustc)
        .arg("-vV"));
    assert_eq!(bare.code(), Some(0), "{}", bare.describe());
    assert_eq!(o.code(), Some(0), "{}", o.describe());
    assert_eq!(o.stdout, bare.stdout, "{}", o.describe());
}
