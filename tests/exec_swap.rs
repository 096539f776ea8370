//! Exec swap (issue 27 item 5): a dynamic program passes the exec check
//! and a static one is renamed into its place before the kernel runs it.
//! The exec family runs the object it checked (opened once, judged through
//! its descriptor, executed with `execveat(fd, "", AT_EMPTY_PATH)`), so
//! under `unguarded_exec = "deny"` the static program never runs, bare and
//! under `fsguard run`; nor when another thread of the program closes and
//! reuses descriptor numbers meanwhile. `#!` scripts, which the library
//! then runs as the kernel would, look to the program exactly as bare:
//! `$0`, argv, exit status, `/proc/self/exe`, the process's name.

#![cfg(target_os = "linux")]

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::*;

/// One case of `f`: a failure named `msg` unless `ok`.
fn check(f: &mut Failures, ok: bool, msg: String) {
    f.case();
    if !ok {
        f.fail("case", msg);
    }
}

/// A directory holding `dyn` (exits 7) and `stat` (static, exits 42).
fn programs(td: &TempDir) -> PathBuf {
    let d = td.join("d");
    mkdir(&d);
    std::fs::copy(c_program("exit_code", &["-DCODE=7"]), d.join("dyn")).unwrap();
    std::fs::copy(
        c_program("exit_code", &["-DCODE=42", "-static"]),
        d.join("stat"),
    )
    .unwrap();
    d
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum How {
    Bare,
    Run,
    RunNoLandlock,
}

/// `exec_swap DIR TRIES how` under the guard, `unguarded_exec = "deny"`,
/// root `td`: the counts it prints.
fn race(td: &TempDir, dir: &Path, how: How, call: &str, tries: u32) -> [u32; 5] {
    let prog = c_program("exec_swap", &["-pthread"]);
    let root = td.path().to_str().unwrap();
    let args = [dir.to_str().unwrap(), &tries.to_string(), call];
    let mut cmd = match how {
        How::Bare => {
            let cfg = td.join("fsguard.toml");
            std::fs::write(
                &cfg,
                format!("root = {root:?}\nunguarded_exec = \"deny\"\n"),
            )
            .unwrap();
            let mut c = guarded_cmd(&prog, &[("FSGUARD_CONFIG", cfg.to_str().unwrap())]);
            c.args(args);
            c
        }
        How::Run | How::RunNoLandlock => {
            let mut c = bare_cmd(cli());
            c.arg("run");
            if how == How::RunNoLandlock {
                c.arg("--no-landlock");
            }
            c.args(["--unguarded-exec", "deny", "--quiet", "--root", root, "--"]);
            c.arg(&prog).args(args);
            c
        }
    };
    let out = run(&mut cmd);
    assert_eq!(out.code(), Some(0), "{}", out.describe());
    let line = out.stdout.lines().last().unwrap_or("").to_string();
    let mut n = [0u32; 5];
    for (i, key) in ["tries", "static", "dynamic", "refused", "other"]
        .iter()
        .enumerate()
    {
        let v = line
            .split_whitespace()
            .find_map(|w| w.strip_prefix(&format!("{key}=")))
            .unwrap_or_else(|| panic!("no {key} in {line:?}: {}", out.describe()));
        n[i] = v.parse().unwrap();
    }
    println!("exec_swap {call} {how:?}: {line}");
    n
}

/// Every exec of the family, a program renamed in and out under it: the
/// static one never runs. Both programs were really there to be run (the
/// dynamic one ran, the static one was refused), so the race was on.
#[test]
fn exec_swap_never_runs_the_static_program() {
    let mut f = Failures::default();
    for how in [How::Bare, How::RunNoLandlock, How::Run] {
        for call in ["execv", "execvp", "execveat", "fexecve", "fdrace"] {
            let td = TempDir::new("exec-swap");
            let dir = programs(&td);
            let [tries, stat, dynamic, refused, other] = race(&td, &dir, how, call, 300);
            check(
                &mut f,
                stat == 0,
                format!("{call} {how:?}: the static program ran {stat} times in {tries}"),
            );
            check(
                &mut f,
                dynamic > 0 && refused > 0,
                format!(
                    "{call} {how:?}: no race ({dynamic} dynamic, {refused} refused, {other} other)"
                ),
            );
        }
    }
    f.finish("exec");
}

/// Scripts run by the library as the kernel would run them.
fn scripts(td: &TempDir) -> PathBuf {
    let d = td.join("s");
    mkdir(&d);
    let sh = d.join("show.sh");
    write_file(
        &sh,
        "#!/bin/sh\necho \"0=$0 n=$# args=$*\"\necho \"comm=$(cat /proc/$$/comm)\"\n\
         echo \"exe=$(readlink /proc/$$/exe)\"\nexit 3\n",
        0o755,
    );
    write_file(
        &d.join("show.py"),
        "#!/usr/bin/env python3\nimport os, sys\nprint(sys.argv)\n\
         print(open('/proc/self/comm').read().strip(), os.path.realpath('/proc/self/exe'))\n\
         sys.exit(5)\n",
        0o755,
    );
    write_file(
        &d.join("show-u.py"),
        "#!/usr/bin/python3 -u\nimport sys\nprint(sys.argv, sys.flags.unbuffered)\n",
        0o755,
    );
    // A script whose interpreter is a script, with an argument.
    write_file(
        &d.join("nested"),
        &format!("#!{} -x y\nbody\n", sh.display()),
        0o755,
    );
    // Scripts of scripts: the kernel runs five (deep4 and show.sh), not six.
    let mut prev = sh.clone();
    for i in 1..=5 {
        let p = d.join(format!("deep{i}"));
        write_file(&p, &format!("#!{}\n", prev.display()), 0o755);
        prev = p;
    }
    write_file(&d.join("nosuch"), "#!/no/such/interpreter\n", 0o755);
    write_file(&d.join("noline"), "echo run by sh: $0 $1\n", 0o755);
    write_file(&d.join("noexec.sh"), "#!/bin/sh\necho ran\n", 0o644);
    d
}

/// The driver: execs argv[1:] HOW, and says what failed.
const DRIVER: &str = r#"
import os, sys
how, prog, args = sys.argv[1], sys.argv[2], sys.argv[2:]
try:
    if how == "execv":
        os.execv(prog, args)
    elif how == "execvp":
        os.environ["PATH"] = os.path.dirname(prog)
        os.execvp(os.path.basename(prog), args)
    elif how == "fexecve":
        fd = os.open(prog, os.O_RDONLY)
        os.execve(fd, args, os.environ)
    elif how == "dirfd":
        fd = os.open(os.path.dirname(prog), os.O_RDONLY)
        os.chdir(os.path.dirname(os.path.dirname(prog)))
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
        argv = (ctypes.c_char_p * (len(args) + 1))(*[a.encode() for a in args], None)
        env = [f"{k}={v}".encode() for k, v in os.environ.items()]
        envp = (ctypes.c_char_p * (len(env) + 1))(*env, None)
        libc.execveat(fd, os.path.basename(prog).encode(), argv, envp, 0)
        raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))
    elif how == "spawn":
        pid = os.posix_spawn(prog, args, os.environ)
        sys.exit(os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]))
except OSError as e:
    print("errno", e.errno)
    sys.exit(100)
"#;

/// Each script run each way, bare and guarded: the same output and status.
#[test]
fn scripts_run_as_bare() {
    let td = TempDir::new("exec-swap-scripts");
    let d = scripts(&td);
    let root = td.path().to_str().unwrap();
    let mut f = Failures::default();
    let cases: &[(&str, &[&str])] = &[
        ("show.sh", &["a b", "c"]),
        ("show.py", &["x"]),
        ("show-u.py", &["y"]),
        ("nested", &["z"]),
        ("deep3", &["w"]),
        ("deep4", &[]),
        ("deep5", &[]),
        ("nosuch", &[]),
        ("noline", &["q"]),
        ("noexec.sh", &[]),
    ];
    for how in ["execv", "execvp", "fexecve", "dirfd", "spawn"] {
        for (name, args) in cases {
            let prog = d.join(name);
            let go = |mut c: Command| {
                c.current_dir(&d)
                    .args(["-c", DRIVER, how])
                    .arg(&prog)
                    .args(*args);
                run(&mut c)
            };
            let bare = go(bare_cmd(python()));
            let guarded = go(guarded_cmd(python(), &[("FSGUARD_ROOT", root)]));
            let what = format!("{how} {name}");
            check(
                &mut f,
                bare.code() == guarded.code() && bare.stdout == guarded.stdout,
                format!(
                    "{what}: bare {:?} {:?}, guarded {:?} {:?} {}",
                    bare.code(),
                    bare.stdout,
                    guarded.code(),
                    guarded.stdout,
                    guarded.stderr
                ),
            );
            check(
                &mut f,
                !guarded.stderr.contains("[fsguard]"),
                format!("{what}: {}", guarded.stderr),
            );
        }
    }
    f.finish("exec");
}

/// A symlinked program keeps the name it was run by (`comm`), as bare,
/// though it runs through a descriptor of the file it names.
#[test]
fn a_symlinked_program_keeps_its_name() {
    let td = TempDir::new("exec-swap-comm");
    let link = td.join("py-link");
    std::os::unix::fs::symlink(python(), &link).unwrap();
    let code = "import os; print(open('/proc/self/comm').read().strip(), os.path.realpath('/proc/self/exe'))";
    let go = |mut c: Command| {
        c.args(["-c", "import os,sys; os.execv(sys.argv[1], sys.argv[1:])"])
            .arg(&link)
            .args(["-c", code]);
        run(&mut c)
    };
    let bare = go(bare_cmd(python()));
    let guarded = go(guarded_cmd(
        python(),
        &[("FSGUARD_ROOT", td.path().to_str().unwrap())],
    ));
    assert!(bare.stdout.starts_with("py-link "), "{}", bare.describe());
    assert_eq!(guarded.stdout, bare.stdout, "{}", guarded.describe());
}

/// execveat with `AT_SYMLINK_NOFOLLOW` on a symlink fails with `ELOOP`, as
/// bare: the program opened without following it is the symlink itself.
#[test]
fn execveat_nofollow_on_a_symlink_is_eloop() {
    let td = TempDir::new("exec-swap-nofollow");
    let d = scripts(&td);
    std::os::unix::fs::symlink("show.sh", d.join("lnk")).unwrap();
    let code = r#"
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
argv = (ctypes.c_char_p * 2)(b"lnk", None)
envp = (ctypes.c_char_p * 1)(None)
libc.execveat(-100, b"lnk", argv, envp, 0x100)
print("errno", ctypes.get_errno())
"#;
    let go = |mut c: Command| {
        c.current_dir(&d).args(["-c", code]);
        run(&mut c)
    };
    let bare = go(bare_cmd(python()));
    let guarded = go(guarded_cmd(
        python(),
        &[("FSGUARD_ROOT", td.path().to_str().unwrap())],
    ));
    assert_eq!(bare.stdout.trim(), "errno 40", "{}", bare.describe());
    assert_eq!(guarded.stdout, bare.stdout, "{}", guarded.describe());
    assert!(
        !guarded.stderr.contains("[fsguard]"),
        "{}",
        guarded.describe()
    );
}
