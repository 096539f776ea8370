//! Descriptor numbers as bare: every call that makes a descriptor returns
//! the lowest number not open, guarded as bare, whatever descriptors the
//! library holds for itself while the call runs (tests/c/fdnum.c).

mod common;

use common::*;
use std::path::Path;

/// Every call fdnum.c makes: the open family (the openat2 route, the
/// kernel's route through a symlink or /proc), creat, the temp files,
/// directory streams, stdio streams, sockets, dup, the anonymous
/// descriptors, pipes, posix_spawn's file actions and open_by_handle_at.
const CALLS: &[&str] = &[
    "open",
    "open-creat",
    "open-excl",
    "open-symlink",
    "open-symlink-creat",
    "open-proc",
    "open64",
    "__open_2",
    "openat",
    "openat-symlink",
    "creat",
    "creat-existing",
    "creat-symlink",
    "syscall-open",
    "syscall-openat",
    "syscall-creat",
    "mkstemp",
    "mkostemp",
    "mkstemps",
    "tmpfile",
    "opendir",
    "opendir-symlink",
    "opendir-proc",
    "fdopendir",
    "fopen",
    "fopen-w",
    "fopen-symlink",
    "fopen-proc",
    "freopen",
    "popen",
    "socket",
    "socketpair",
    "accept",
    "dup",
    "fcntl-dupfd",
    "memfd_create",
    "shm_open",
    "inotify_init",
    "eventfd",
    "signalfd",
    "timerfd_create",
    "epoll_create1",
    "pipe",
    "pipe2",
    "open_by_handle_at",
    "posix_spawn",
];

/// The tree fdnum.c expects, in a fresh directory.
fn tree(tag: &str) -> TempDir {
    let t = TempDir::new(tag);
    write_file(&t.join("f"), "f\n", 0o644);
    mkdir(&t.join("d"));
    write_file(&t.join("d/g"), "g\n", 0o644);
    symlink("g", &t.join("d/lg"));
    symlink("f", &t.join("ln"));
    symlink("d", &t.join("ld"));
    symlink("c_target", &t.join("lc"));
    t
}

/// The policy: the tree as root, /tmp writable (tmpfile creates there),
/// and fdnum's own abstract socket (the `accept` case listens on one).
fn config(dir: &Path) -> std::path::PathBuf {
    let c = dir.join("policy.toml");
    std::fs::write(
        &c,
        format!(
            "root = {:?}\nunix_sockets = [\"@fdnum-*\"]\n[write]\nallow = [\"/tmp\"]\n",
            dir.to_str().unwrap()
        ),
    )
    .unwrap();
    c
}

/// fdnum's line (its last on stderr) for one call.
fn line(o: &Out) -> String {
    o.stderr
        .lines()
        .rev()
        .find(|l| l.starts_with("start="))
        .unwrap_or("(no result line)")
        .to_string()
        + &o.stderr
            .lines()
            .filter(|l| l.starts_with("child="))
            .map(|l| format!(" {l}"))
            .collect::<String>()
}

#[test]
fn every_call_gets_the_number_it_gets_bare() {
    let prog = c_program("fdnum", &[]);
    let mut f = Failures::default();
    for hole in ["0", "1", "3"] {
        for call in CALLS {
            f.case();
            let b = tree("fdnum-bare");
            let bare = run(bare_cmd(&prog).args([hole, call]).current_dir(b.path()));
            let g = tree("fdnum-guarded");
            let cfg = config(g.path());
            let guarded = run(
                guarded_cmd(&prog, &[("FSGUARD_CONFIG", cfg.to_str().unwrap())])
                    .args([hole, call])
                    .current_dir(g.path()),
            );
            let (lb, lg) = (line(&bare), line(&guarded));
            // Every call succeeds bare (open_by_handle_at needs privilege).
            let made = !lb.contains(" r=-1") || *call == "open_by_handle_at";
            if made && lb == lg && guarded.blocked().is_empty() {
                continue;
            }
            f.fail(
                &format!("{call} with a hole at {hole}"),
                format!(
                    "bare:    {lb}\nguarded: {lg}\n{}\n{}",
                    bare.describe(),
                    guarded.describe()
                ),
            );
        }
    }
    f.finish("descriptor number");
}

/// Gentoo sandbox's own helper case `creat-0 3 new1 0644` (its
/// tests/creat-0.c: `creat("new1", 0644)` must return 3), built from a
/// sandbox source tree named by `FSGUARD_GENTOO_SANDBOX` when one is there
/// (its code is not ours to copy); without it, the same case in our own
/// program: `creat` with fd 3 the lowest free (fdnum's hole at 3 and the
/// table above it taken is the stricter form, in the test above).
#[test]
fn gentoo_sandbox_creat_0_case() {
    let Some(src) = std::env::var_os("FSGUARD_GENTOO_SANDBOX")
        .map(std::path::PathBuf::from)
        .filter(|p| p.join("tests/creat-0.c").is_file() && p.join("headers.h").is_file())
    else {
        let prog = c_program("fdnum", &[]);
        let t = tree("creat-0");
        let cfg = config(t.path());
        let o = run(
            guarded_cmd(&prog, &[("FSGUARD_CONFIG", cfg.to_str().unwrap())])
                .args(["3", "creat"])
                .current_dir(t.path()),
        );
        assert!(line(&o).contains(" r=3 "), "{}", o.describe());
        return;
    };
    let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join("sandbox-creat-0");
    let mut cc = std::process::Command::new("cc");
    cc.args(["-std=gnu11", "-D_GNU_SOURCE", "-w"]);
    for h in [
        "DIRENT",
        "DLFCN",
        "ERRNO",
        "FCNTL",
        "INTTYPES",
        "LIMITS",
        "SIGNAL",
        "STDARG",
        "STDBOOL",
        "STDDEF",
        "STDINT",
        "STDIO",
        "STDLIB",
        "STRING",
        "STRINGS",
        "SYS_STAT",
        "SYS_TYPES",
        "SYS_TIME",
        "SYS_MMAN",
        "UNISTD",
    ] {
        cc.arg(format!("-DHAVE_{h}_H"));
    }
    // localdecls.h's one macro the helpers use (the file needs configure).
    cc.arg("-DARRAY_SIZE(a)=(sizeof(a)/sizeof((a)[0]))")
        .arg("-I")
        .arg(&src)
        .arg("-I")
        .arg(src.join("tests"))
        .arg("-o")
        .arg(&out)
        .arg(src.join("tests/creat-0.c"));
    let built = run(&mut cc);
    assert!(built.status.success(), "{}", built.describe());
    let t = tree("sandbox-creat-0");
    let o = run(
        guarded_cmd(&out, &[("FSGUARD_ROOT", t.path().to_str().unwrap())])
            .env("NOCOLOR", "1")
            .args(["3", "new1", "0644"])
            .current_dir(t.path()),
    );
    assert!(
        o.status.success() && o.stdout.starts_with("PASS: creat(\"new1\", 644) = 3"),
        "{}",
        o.describe()
    );
}

/// Threads making descriptors at once, through the checks that hold fds of
/// their own: no thread's descriptor is ever closed, moved or reused under
/// it (the check's fds are moved high, never the program's moved down).
#[test]
fn threads_opening_at_once_keep_their_descriptors() {
    let prog = c_program("fdrace", &["-pthread"]);
    let t = TempDir::new("fdrace");
    write_file(&t.join("f"), "f\n", 0o644);
    symlink("f", &t.join("ln"));
    let o = run(
        guarded_cmd(&prog, &[("FSGUARD_ROOT", t.path().to_str().unwrap())]).current_dir(t.path()),
    );
    assert!(
        o.status.success() && o.stdout == "ok 6\n" && o.blocked().is_empty(),
        "{}",
        o.describe()
    );
}
