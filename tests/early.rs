//! Issue 27 item 1: no hooked call passes unchecked, however early. Code
//! that runs before the library's constructor — the constructor of a
//! library the program links (`DT_NEEDED` constructors run before a
//! preload's), or of a second preload listed after the library — is
//! checked like `main`: its first hooked call loads the guard. Each case
//! runs bare (`LD_PRELOAD` and `FSGUARD_*`) and under `fsguard run`.

#![cfg(target_os = "linux")]

mod common;

use common::*;
use std::path::PathBuf;
use std::process::Command;

/// The library whose constructor tries the three accesses
/// (tests/c/early_lib.c), by the name the program links.
const EARLY_SO: &str = "libfsguard_early.so";

/// The root, a `deny_always` file in it, a file outside it, the config
/// that denies the first, and the program and its library copied into the
/// root (where `fsguard run`'s Landlock ruleset lets the loader read them).
struct Case {
    _td: TempDir,
    ws: PathBuf,
    denied: PathBuf,
    outside: PathBuf,
    config: PathBuf,
}

impl Case {
    fn new() -> Case {
        let td = TempDir::new("early");
        let ws = td.join("ws");
        mkdir(&ws);
        mkdir(&td.join("outside"));
        write_file(&ws.join("secret.env"), "TOKEN=1\n", 0o644);
        write_file(&td.join("outside/data"), "outside\n", 0o644);
        let ws = ws.canonicalize().unwrap();
        let outside = td.join("outside").canonicalize().unwrap();
        let denied = ws.join("secret.env");
        let config = td.join("policy.toml");
        write_file(
            &config,
            &format!("[read]\ndeny_always = [\"{}\"]\n", denied.display()),
            0o644,
        );
        let lib = c_program(
            "early_lib",
            &[
                "-shared",
                "-fPIC",
                "-pthread",
                "-Wl,-soname,libfsguard_early.so",
            ],
        );
        let main = c_program(
            "early_main",
            &[
                "-Wl,--no-as-needed",
                lib.to_str().unwrap(),
                "-Wl,-rpath,$ORIGIN",
            ],
        );
        let ifunc_main = c_program(
            "early_ifunc_main",
            &[
                "-Wl,--no-as-needed",
                lib.to_str().unwrap(),
                "-Wl,-rpath,$ORIGIN",
                "-Wl,-z,now",
            ],
        );
        std::fs::copy(&lib, ws.join(EARLY_SO)).unwrap();
        std::fs::copy(&main, ws.join("early_main")).unwrap();
        std::fs::copy(&ifunc_main, ws.join("early_ifunc_main")).unwrap();
        Case {
            _td: td,
            ws,
            denied,
            outside: outside.join("data"),
            config,
        }
    }

    fn written(&self) -> PathBuf {
        self.outside.with_file_name("new")
    }

    /// What the constructor is told to open.
    fn env<'a>(&self, c: &'a mut Command) -> &'a mut Command {
        c.env("EARLY_DENIED", &self.denied)
            .env("EARLY_OUTSIDE", &self.outside)
            .env("EARLY_WRITE", self.written())
            .current_dir(&self.ws)
    }

    /// A command under the library alone.
    fn bare(&self, prog: impl AsRef<std::ffi::OsStr>) -> Command {
        let mut c = guarded_cmd(
            prog,
            &[
                ("FSGUARD_ROOT", self.ws.to_str().unwrap()),
                ("FSGUARD_CONFIG", self.config.to_str().unwrap()),
            ],
        );
        self.env(&mut c);
        c
    }

    /// A command under `fsguard run` (Landlock on, as by default).
    fn run(&self, prog: impl AsRef<std::ffi::OsStr>) -> Command {
        let mut c = bare_cmd(cli());
        c.args(["run", "--root"])
            .arg(&self.ws)
            .arg("--config")
            .arg(&self.config)
            .arg("--")
            .arg(prog);
        self.env(&mut c);
        c
    }

    /// Each access refused with EACCES and its trace line, nothing written.
    fn check(&self, o: &Out, extra_lines: usize) {
        for name in ["deny_always", "read_outside", "write_outside"] {
            assert!(
                o.stdout.contains(&format!("early {name} refused 13")),
                "{name}: not refused with EACCES before the library's constructor\n{}",
                o.describe()
            );
        }
        assert!(
            !o.stdout.lines().any(|l| l.ends_with(" opened")),
            "{}",
            o.describe()
        );
        assert!(
            !self.written().exists(),
            "a file was created outside the root"
        );
        let rule = format!("read.deny_always:{}", self.denied.display());
        let want = [
            Expect::new("open", "read", &self.denied, &rule),
            Expect::new("open", "read", &self.outside, "root"),
            Expect::new("open", "write", self.written(), "root"),
        ];
        let got = o.blocked();
        assert_eq!(got.len(), 3 + extra_lines, "{}", o.describe());
        if let Err(e) = check_traces(&got[extra_lines..], &[want.to_vec()]) {
            panic!("trace lines do not match:\n  {e}\n{}", o.describe());
        }
    }
}

/// The program's own library (`DT_NEEDED`) opens before the library's
/// constructor has run: its first call loads the guard.
#[test]
fn constructor_before_the_guard_is_checked() {
    let case = Case::new();
    let o = run(&mut case.bare(case.ws.join("early_main")));
    assert!(o.stdout.contains("main ran"), "{}", o.describe());
    case.check(&o, 0);
}

#[test]
fn constructor_before_the_guard_is_checked_under_run() {
    let case = Case::new();
    let o = run(&mut case.run(case.ws.join("early_main")));
    assert_eq!(o.code(), Some(0), "{}", o.describe());
    assert!(o.stdout.contains("main ran"), "{}", o.describe());
    case.check(&o, 0);
}

/// A child whose `LD_PRELOAD` the guarded program wrote with a library of
/// its own before libfsguard: the exec hook puts libfsguard first, and the
/// other library, initialised before it, is checked all the same.
const SECOND_PRELOAD: &str = "LD_PRELOAD=\"$PWD/libfsguard_early.so:$LD_PRELOAD\" exec /bin/true";

#[test]
fn preload_after_the_library_is_checked() {
    let case = Case::new();
    let o = run(case.bare("sh").args(["-c", SECOND_PRELOAD]));
    assert_eq!(o.code(), Some(0), "{}", o.describe());
    case.check(&o, 0);
}

#[test]
fn preload_after_the_library_is_checked_under_run() {
    let case = Case::new();
    let o = run(case.run("sh").args(["-c", SECOND_PRELOAD]));
    assert_eq!(o.code(), Some(0), "{}", o.describe());
    case.check(&o, 0);
}

/// Whatever order the program wrote, the child's `LD_PRELOAD` starts with
/// libfsguard (and keeps the program's other library after it).
#[test]
fn children_get_the_library_first_in_ld_preload() {
    let case = Case::new();
    let script = "LD_PRELOAD=\"$PWD/libfsguard_early.so:$LD_PRELOAD\" exec printenv LD_PRELOAD";
    let want = format!("{}:{}", lib().display(), case.ws.join(EARLY_SO).display());
    for mut c in [case.bare("sh"), case.run("sh")] {
        c.env_remove("EARLY_DENIED")
            .env_remove("EARLY_OUTSIDE")
            .env_remove("EARLY_WRITE");
        let o = run(c.args(["-c", script]));
        assert_eq!(o.code(), Some(0), "{}", o.describe());
        assert_eq!(o.stdout.trim(), want, "{}", o.describe());
    }
}

/// Threads the early constructor starts race the process's first hooked
/// call: whichever loads the guard, the others wait for it, and none of
/// their opens passes unchecked. Under `fsguard run` no thread can start
/// before the library loaded: the start-up gate stops the command at its
/// `clone`, and nothing is opened.
#[test]
fn threads_racing_the_first_call_are_checked() {
    let case = Case::new();
    const THREADS: usize = 8;
    let main = case.ws.join("early_main");
    let o = run(case.bare(&main).env("EARLY_THREADS", THREADS.to_string()));
    assert!(
        o.stdout
            .contains(&format!("early race opened 0 of {}", THREADS + 1)),
        "an open passed while the guard loaded\n{}",
        o.describe()
    );
    case.check(&o, THREADS + 1);
    let outside = case.outside.to_string_lossy();
    let racing = o.blocked()[..THREADS + 1]
        .iter()
        .all(|t| t.field("path") == Some(&*outside));
    assert!(racing, "{}", o.describe());

    let o = run(case.run(&main).env("EARLY_THREADS", THREADS.to_string()));
    assert_eq!(o.code(), Some(125), "{}", o.describe());
    assert!(!o.stdout.contains("opened"), "{}", o.describe());
    assert!(!case.written().exists());
}

/// An IFUNC resolver of the program's library runs while the program is
/// relocated, before the C library is set up: too early to load the guard
/// (no thread-local storage yet), so its call is refused, with the errno
/// alone (no trace line can be written yet), and the process goes on.
#[test]
fn ifunc_resolver_before_the_guard_is_refused() {
    let case = Case::new();
    let main = case.ws.join("early_ifunc_main");
    for under_run in [false, true] {
        let mut c = if under_run {
            case.run(&main)
        } else {
            case.bare(&main)
        };
        let o = run(&mut c);
        assert_eq!(o.code(), Some(0), "under_run={under_run}\n{}", o.describe());
        assert!(
            o.stdout.contains("early ifunc refused 13"),
            "under_run={under_run}: the resolver's open was not refused\n{}",
            o.describe()
        );
        // The constructor's own three, refused as usual after it.
        case.check(&o, 0);
    }
}
