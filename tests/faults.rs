//! Edges found under load and faults (issue 19): large policies, a program
//! that reuses fd 2, logs that cannot be written, a full fd table, paths
//! longer than PATH_MAX, and the error shape of calls returning pointers.

mod children_util;
mod common;

use children_util::*;
use std::process::Command;

/// A config of `n` write-deny rules inside the root (none matches `ok/`).
fn big_config(s: &Scratch, n: usize) -> std::path::PathBuf {
    let mut cfg = String::from("readonly = false\n[write]\ndeny = [\n");
    for i in 0..n {
        cfg.push_str(&format!("  \"{}/deny-{i:05}/**\",\n", s.ws().display()));
    }
    cfg.push_str("]\n");
    let p = s.path("big.toml");
    std::fs::write(&p, cfg).unwrap();
    p
}

/// A preloaded command with only the given FSGUARD_* variables.
fn preloaded(prog: &str, vars: &[(&str, &str)]) -> Command {
    let mut c = Command::new(prog);
    for (k, _) in std::env::vars() {
        if k.starts_with("FSGUARD_") || k == "LD_PRELOAD" {
            c.env_remove(k);
        }
    }
    c.env("LD_PRELOAD", lib());
    for (k, v) in vars {
        c.env(k, v);
    }
    c
}

#[test]
fn three_thousand_rules_reach_children_without_e2big() {
    let s = Scratch::new("bigpolicy");
    let cfg = big_config(&s, 3000);
    let ws = s.ws();
    std::fs::create_dir_all(ws.join("deny-02999")).unwrap();
    std::fs::create_dir_all(ws.join("deny-00000")).unwrap();
    // The grandchild writes inside the root, and is refused by the last rule.
    let script = "echo ok > ok.txt && sh -c 'echo no > deny-02999/x' ; \
                  env | grep -c '^FSGUARD_POLICY' ; sh -c 'env | grep -c ^FSGUARD_POLICY'";
    let o = preloaded(
        "sh",
        &[
            ("FSGUARD_CONFIG", cfg.to_str().unwrap()),
            ("FSGUARD_ROOT", ws.to_str().unwrap()),
        ],
    )
    .args(["-c", script])
    .current_dir(&ws)
    .output()
    .unwrap();
    let err = stderr(&o);
    assert!(!err.contains("Argument list too long"), "{err}");
    assert_eq!(std::fs::read_to_string(ws.join("ok.txt")).unwrap(), "ok\n");
    assert!(
        !ws.join("deny-02999/x").exists(),
        "the child was not guarded: {err}"
    );
    let want = format!(
        "[fsguard] blocked open write path={}/deny-02999/x rule=write.deny:\"{}/deny-02999/**\"",
        ws.display(),
        ws.display()
    );
    assert!(err.contains(&want), "{err}");
    // Neither the program nor its child carries the policy in its
    // environment.
    assert_eq!(stdout(&o), "0\n0\n", "{err}");

    // The same through `fsguard run`.
    let o = run(
        &ws,
        &[
            "--config",
            cfg.to_str().unwrap(),
            "--root",
            ".",
            "--",
            "sh",
            "-c",
            "sh -c 'echo run > run.txt; echo no > deny-00000/y'",
        ],
    );
    assert!(
        !stderr(&o).contains("Argument list too long"),
        "{}",
        stderr(&o)
    );
    assert_eq!(
        std::fs::read_to_string(ws.join("run.txt")).unwrap(),
        "run\n",
        "{}",
        stderr(&o)
    );
    assert!(stderr(&o).contains("rule=write.deny:"), "{}", stderr(&o));
}

#[test]
fn a_forged_or_unsealed_policy_fd_fails_closed() {
    let s = Scratch::new("forgedfd");
    let ws = s.ws();
    // fd 0 is not a memfd: the library refuses to run.
    let o = preloaded("sh", &[("FSGUARD_POLICY_FD", "0")])
        .args(["-c", "echo ran > ran.txt"])
        .current_dir(&ws)
        .output()
        .unwrap();
    assert_eq!(code(&o), 125, "{}", stderr(&o));
    assert!(
        stderr(&o).contains("FSGUARD_POLICY_FD=0: not a sealed policy memfd"),
        "{}",
        stderr(&o)
    );
    assert!(!ws.join("ran.txt").exists());
    // An unsealed memfd (writable by whoever holds it) is refused too.
    let src = r#"
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
int main(int argc, char **argv) {
    int fd = memfd_create("fsguard-policy", 0);
    const char *p = "{}";
    write(fd, p, strlen(p));
    char v[32];
    snprintf(v, sizeof v, "%d", fd);
    setenv("FSGUARD_POLICY_FD", v, 1);
    setenv("LD_PRELOAD", argv[1], 1);
    execl("/bin/sh", "sh", "-c", "echo ran > ran.txt", (char *)0);
    return 1;
}
"#;
    let prog = compile(&s.0, "unsealed", src, &[]);
    let o = Command::new(&prog)
        .arg(lib())
        .env_remove("LD_PRELOAD")
        .current_dir(&ws)
        .output()
        .unwrap();
    assert_eq!(code(&o), 125, "{}", stderr(&o));
    assert!(
        stderr(&o).contains("the policy memfd is not sealed"),
        "{}",
        stderr(&o)
    );
    assert!(!ws.join("ran.txt").exists());
}

/// A child that closed every fd before exec (Python's `close_fds`) still
/// hands its own child the policy.
#[test]
fn closing_every_fd_before_exec_keeps_children_guarded() {
    let s = Scratch::new("closefds");
    let ws = s.ws();
    let src = r#"
#define _GNU_SOURCE
#include <stdio.h>
#include <unistd.h>
#include <sys/wait.h>
#include <linux/close_range.h>
#include <sys/syscall.h>
int main(int argc, char **argv) {
    pid_t pid = fork();
    if (pid == 0) {
        syscall(SYS_close_range, 3, ~0U, 0);
        execl("/bin/sh", "sh", "-c", argv[1], (char *)0);
        _exit(97);
    }
    int st;
    waitpid(pid, &st, 0);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 90;
}
"#;
    let prog = compile(&s.0, "closeall", src, &[]);
    let outside = s.path("outside.txt");
    let o = preloaded(
        prog.to_str().unwrap(),
        &[("FSGUARD_ROOT", ws.to_str().unwrap())],
    )
    .arg(format!(
        "echo in > in.txt; echo out > {}",
        outside.display()
    ))
    .current_dir(&ws)
    .output()
    .unwrap();
    assert_eq!(
        std::fs::read_to_string(ws.join("in.txt")).unwrap(),
        "in\n",
        "{}",
        stderr(&o)
    );
    assert!(!outside.exists(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains(&format!(
            "[fsguard] blocked open write path={} rule=root",
            outside.display()
        )),
        "{}",
        stderr(&o)
    );
}

/// Closes stderr, opens a data file (it lands on fd 2), writes to it, then
/// makes a refused call.
const REUSE_FD2: &str = r#"
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
int main(int argc, char **argv) {
    close(2);
    int fd = open("data.txt", O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd != 2) return 10;
    write(fd, "data\n", 5);
    int r = open(argv[1], O_WRONLY | O_CREAT, 0644);
    if (r >= 0 || errno != EACCES) return 11;
    r = mkdir(argv[2], 0755);
    if (r == 0 || errno != EACCES) return 12;
    return 0;
}
"#;

#[test]
fn trace_lines_never_land_in_a_file_the_program_put_on_fd_2() {
    let s = Scratch::new("fd2");
    let ws = s.ws();
    let prog = compile(&s.0, "reuse", REUSE_FD2, &[]);
    let (a, b) = (s.path("a.txt"), s.path("b"));
    let o = preloaded(
        prog.to_str().unwrap(),
        &[("FSGUARD_ROOT", ws.to_str().unwrap())],
    )
    .args([&a, &b])
    .current_dir(&ws)
    .output()
    .unwrap();
    let err = stderr(&o);
    assert_eq!(code(&o), 0, "{err}");
    assert_eq!(
        std::fs::read_to_string(ws.join("data.txt")).unwrap(),
        "data\n"
    );
    assert!(!a.exists() && !b.exists());
    // The lines reach the stderr the program started with.
    assert!(
        err.contains(&format!(
            "[fsguard] blocked open write path={} rule=root",
            a.display()
        )),
        "{err}"
    );
    assert!(
        err.contains(&format!(
            "[fsguard] blocked mkdir write path={} rule=root",
            b.display()
        )),
        "{err}"
    );
}

#[test]
fn lost_trace_lines_are_said_once_and_summarised() {
    let s = Scratch::new("lost");
    let ws = s.ws();
    let (a, b) = (s.path("a.txt"), s.path("b.txt"));
    let script = format!("echo > {}; echo > {}; true", a.display(), b.display());
    // The library alone: one warning on stderr, however many lines are lost.
    let o = preloaded(
        "sh",
        &[
            ("FSGUARD_ROOT", ws.to_str().unwrap()),
            ("FSGUARD_LOG", "/dev/full"),
        ],
    )
    .args(["-c", &script])
    .current_dir(&ws)
    .output()
    .unwrap();
    let err = stderr(&o);
    assert_eq!(
        err.matches("[fsguard] warning: trace lines cannot be written to /dev/full")
            .count(),
        1,
        "{err}"
    );
    assert!(!a.exists() && !b.exists());
    // A /proc file that opens for writing but refuses what is written.
    let o = preloaded(
        "sh",
        &[
            ("FSGUARD_ROOT", ws.to_str().unwrap()),
            ("FSGUARD_LOG", "/proc/self/clear_refs"),
        ],
    )
    .args(["-c", &script])
    .current_dir(&ws)
    .output()
    .unwrap();
    let err = stderr(&o);
    assert_eq!(
        err.matches("[fsguard] warning: trace lines cannot be written to /proc/self/clear_refs")
            .count(),
        1,
        "{err}"
    );
    // fsguard run says so in its summary.
    let o = run(
        &ws,
        &[
            "--root",
            ".",
            "--log",
            "/dev/full",
            "--",
            "sh",
            "-c",
            &script,
        ],
    );
    let err = stderr(&o);
    assert!(
        err.contains("fsguard: 2 accesses blocked; first: open write"),
        "{err}"
    );
    assert!(
        err.contains("fsguard: 2 trace lines could not be written (lost)"),
        "{err}"
    );
    // An audit run: the writes go ahead (outside the root, in the scratch
    // directory), the summary counts them and says lines were lost.
    let o = run(
        &ws,
        &[
            "--root",
            ".",
            "--audit",
            "--no-landlock",
            "--log",
            "/dev/full",
            "--",
            "sh",
            "-c",
            &script,
        ],
    );
    let err = stderr(&o);
    assert!(
        err.contains("fsguard: 2 accesses would have been blocked (audit)"),
        "{err}"
    );
    assert!(
        err.contains("fsguard: 2 trace lines could not be written (lost)"),
        "{err}"
    );
}

/// fts_open on each argument, not checking for NULL (as callers that trust
/// glibc do), then prints what fts_read reports; and the error shape of
/// opendir, fopen and glob on the same path.
const WALK: &str = r#"
#include <errno.h>
#include <dirent.h>
#include <fts.h>
#include <glob.h>
#include <stdio.h>
#include <string.h>
int main(int argc, char **argv) {
    char *paths[] = {argv[1], argv[2], NULL};
    FTS *fts = fts_open(paths, FTS_PHYSICAL | FTS_NOCHDIR, NULL);
    FTSENT *e;
    while ((e = fts_read(fts)) != NULL)
        printf("fts %s info=%d errno=%d\n", e->fts_path, e->fts_info, e->fts_errno);
    fts_close(fts);
    errno = 0;
    DIR *d = opendir(argv[1]);
    printf("opendir %s errno=%d\n", d ? "stream" : "NULL", errno);
    char f[4096];
    snprintf(f, sizeof f, "%s/file", argv[1]);
    errno = 0;
    FILE *s = fopen(f, "r");
    printf("fopen %s errno=%d\n", s ? "stream" : "NULL", errno);
    char pat[4096];
    snprintf(pat, sizeof pat, "%s/*", argv[1]);
    glob_t g;
    int r = glob(pat, GLOB_ERR, NULL, &g);
    printf("glob %d\n", r);
    return 0;
}
"#;

#[test]
fn fts_on_a_refused_directory_reports_it_unreadable_like_glibc() {
    let s = Scratch::new("fts");
    let ws = s.ws();
    let out = s.path("outside");
    std::fs::create_dir_all(out.join("sub")).unwrap();
    std::fs::write(out.join("file"), "x").unwrap();
    std::fs::create_dir_all(ws.join("in")).unwrap();
    std::fs::write(ws.join("in/a"), "a").unwrap();
    let prog = compile(&s.0, "walk", WALK, &[]);
    let o = preloaded(
        prog.to_str().unwrap(),
        &[("FSGUARD_ROOT", ws.to_str().unwrap())],
    )
    .args([out.to_str().unwrap(), "in"])
    .current_dir(&ws)
    .output()
    .unwrap();
    let (so, err) = (stdout(&o), stderr(&o));
    assert_eq!(code(&o), 0, "{so}{err}");
    let want = format!(
        "fts {o} info=4 errno=13\n\
         fts in info=1 errno=0\n\
         fts in/a info=8 errno=0\n\
         fts in info=6 errno=0\n\
         opendir NULL errno=13\n\
         fopen NULL errno=13\n\
         glob 2\n",
        o = out.display()
    );
    assert_eq!(so, want, "{err}");
    assert!(
        err.contains(&format!(
            "[fsguard] blocked fts_open read path={} rule=root",
            out.display()
        )),
        "{err}"
    );
    // With hide_outside the start path looks missing, as glibc reports one.
    let cfg = s.path("hide.toml");
    std::fs::write(
        &cfg,
        format!("root = \"{}\"\nhide_outside = true\n", ws.display()),
    )
    .unwrap();
    let o = preloaded(
        prog.to_str().unwrap(),
        &[("FSGUARD_CONFIG", cfg.to_str().unwrap())],
    )
    .args([out.to_str().unwrap(), "in"])
    .current_dir(&ws)
    .output()
    .unwrap();
    let so = stdout(&o);
    assert!(
        so.starts_with(&format!("fts {} info=10 errno=2\n", out.display())),
        "{so}{}",
        stderr(&o)
    );
}

#[test]
fn fsguard_run_leaves_the_root_directory_mtime_alone() {
    let s = Scratch::new("mtime");
    let ws = s.ws();
    // $TMPDIR inside the root (an agent harness that points it at the
    // workspace): the private TMPDIR must still be made elsewhere.
    let old = std::time::UNIX_EPOCH + std::time::Duration::from_secs(1_500_000_000);
    let f = std::fs::File::open(&ws).unwrap();
    f.set_modified(old).unwrap();
    let o = fsguard(
        &ws,
        "run",
        &[
            "--root",
            ".",
            "--",
            "sh",
            "-c",
            "test -d \"$TMPDIR\" && echo \"$TMPDIR\"",
        ],
        &[("TMPDIR", ws.to_str().unwrap())],
    );
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let tmp = stdout(&o);
    assert!(
        tmp.contains("/fsguard-") && !tmp.starts_with(ws.to_str().unwrap()),
        "{tmp}"
    );
    assert_eq!(
        std::fs::metadata(&ws).unwrap().modified().unwrap(),
        old,
        "TMPDIR {tmp}"
    );
    assert_eq!(std::fs::read_dir(&ws).unwrap().count(), 0);
}

/// Rust's `Command::current_dir` spawns with
/// `posix_spawn_file_actions_addchdir_np`: inside the root it works, and
/// the child runs where it was asked to.
const CURRENT_DIR: &str = r#"
use std::process::Command;
fn main() {
    let args: Vec<String> = std::env::args().collect();
    match Command::new("pwd").current_dir(&args[1]).output() {
        Ok(o) => print!("ok {}", String::from_utf8_lossy(&o.stdout)),
        Err(e) => println!("err {}", e.raw_os_error().unwrap_or(0)),
    }
}
"#;

#[test]
fn rust_command_current_dir_works_inside_the_root() {
    let s = Scratch::new("curdir");
    let ws = s.ws();
    std::fs::create_dir_all(ws.join("sub")).unwrap();
    std::fs::create_dir_all(s.path("outside")).unwrap();
    let src = s.path("curdir.rs");
    std::fs::write(&src, CURRENT_DIR).unwrap();
    let prog = s.path("curdir");
    let st = Command::new(std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into()))
        .args(["-O", "-o"])
        .arg(&prog)
        .arg(&src)
        .status()
        .unwrap();
    assert!(st.success());
    for (dir, want) in [
        (".", format!("ok {}\n", ws.display())),
        ("sub", format!("ok {}/sub\n", ws.display())),
        // A chdir outside is allowed, as chdir(2) is (reads there are not).
        (
            "../outside",
            format!("ok {}\n", s.path("outside").display()),
        ),
        ("missing", "err 2\n".to_string()),
    ] {
        let o = preloaded(
            prog.to_str().unwrap(),
            &[("FSGUARD_ROOT", ws.to_str().unwrap())],
        )
        .arg(dir)
        .current_dir(&ws)
        .output()
        .unwrap();
        assert_eq!(stdout(&o), want, "{dir}: {}", stderr(&o));
    }
}

fn has_landlock() -> bool {
    common::landlock_abi() > 0
}

#[test]
fn landlock_keeps_nss_user_lookups_working() {
    if !has_landlock() {
        eprintln!("skipped: this kernel has no Landlock");
        return;
    }
    let s = Scratch::new("nss");
    let ws = s.ws();
    let home = s.path("home");
    std::fs::create_dir_all(&home).unwrap();
    let script = "whoami; id -un; git var GIT_AUTHOR_IDENT";
    let env = [
        ("HOME", home.to_str().unwrap()),
        ("GIT_AUTHOR_DATE", "1500000000 +0000"),
        ("GIT_CONFIG_NOSYSTEM", "1"),
        // The name comes from the passwd entry (NSS); the email from here.
        ("EMAIL", "someone@example.com"),
    ];
    let mut bare = Command::new("sh");
    bare.args(["-c", script])
        .current_dir(&ws)
        .env_remove("LD_PRELOAD");
    for (k, v) in env {
        bare.env(k, v);
    }
    let want = bare.output().unwrap();
    assert!(want.status.success(), "{}", stderr(&want));
    let o = fsguard(
        &ws,
        "run",
        &[
            "--root",
            ".",
            "--landlock=required",
            "--",
            "sh",
            "-c",
            script,
        ],
        &env,
    );
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert_eq!(stdout(&o), stdout(&want), "{}", stderr(&o));
    assert!(!stderr(&o).contains("blocked"), "{}", stderr(&o));
}

/// Fills the fd table, then makes calls that need no new fd (and one that
/// does): `NAME ret errno` per call.
const FULL_TABLE: &str = r#"
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#define P(name, expr) do { errno = 0; int r_ = (expr); printf("%s %d %d\n", name, r_ < 0 ? -1 : 0, r_ < 0 ? errno : 0); } while (0)
int main(int argc, char **argv) {
    struct rlimit r;
    getrlimit(RLIMIT_NOFILE, &r);
    r.rlim_cur = atoi(argv[2]);
    if (r.rlim_cur && setrlimit(RLIMIT_NOFILE, &r)) return 3;
    char a[4096], b[4096], l[4096], f[4096];
    snprintf(a, sizeof a, "%s/a", argv[1]);
    snprintf(b, sizeof b, "%s/b", argv[1]);
    snprintf(l, sizeof l, "%s/l", argv[1]);
    snprintf(f, sizeof f, "%s/f", argv[1]);
    int n = 0;
    while (open("/dev/null", O_RDONLY) >= 0) n++;
    printf("fill %d\n", errno);
    P("mkdir", mkdir(a, 0755));
    P("rename", rename(a, b));
    P("symlink", symlink("b", l));
    P("unlink", unlink(l));
    P("creat", creat(f, 0644));
    P("rmdir", rmdir(b));
    P("mkdir2", mkdir(a, 0755));
    return 0;
}
"#;

/// `prog DIR SOFT` with `RLIMIT_NOFILE` 256 from the start.
fn limited(mut c: Command) -> Command {
    use std::os::unix::process::CommandExt;
    // SAFETY: only setrlimit between fork and exec.
    unsafe {
        c.pre_exec(|| {
            let r = libc::rlimit {
                rlim_cur: 256,
                rlim_max: 256,
            };
            if libc::setrlimit(libc::RLIMIT_NOFILE, &r) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        })
    };
    c
}

#[test]
fn a_full_fd_table_gets_what_the_kernel_gives() {
    let s = Scratch::new("emfile");
    let ws = s.ws();
    let prog = compile(&s.0, "full", FULL_TABLE, &[]);
    let want = "fill 24\nmkdir 0 0\nrename 0 0\nsymlink 0 0\nunlink 0 0\ncreat -1 24\nrmdir 0 0\nmkdir2 0 0\n";
    // The table filled at the limit the program started with (the guard's
    // spares), and at a soft limit the program lowered itself.
    for soft in ["0", "64"] {
        let mut bare = Command::new(&prog);
        bare.args([ws.to_str().unwrap(), soft])
            .env_remove("LD_PRELOAD");
        let bare = limited(bare).output().unwrap();
        assert_eq!(stdout(&bare), want, "soft {soft}");
        std::fs::remove_dir(ws.join("a")).unwrap();
        let mut c = preloaded(
            prog.to_str().unwrap(),
            &[("FSGUARD_ROOT", ws.to_str().unwrap())],
        );
        c.args([ws.to_str().unwrap(), soft]).current_dir(&s.0);
        let o = limited(c).output().unwrap();
        assert_eq!(stdout(&o), want, "soft {soft}: {}", stderr(&o));
        assert!(!stderr(&o).contains("unresolved"), "{}", stderr(&o));
        assert!(ws.join("a").is_dir() && !ws.join("b").exists() && !ws.join("f").exists());
        std::fs::remove_dir(ws.join("a")).unwrap();
    }
}

/// freopen onto `argv[1]`: `ret errno fd-closed`.
const REOPEN: &str = r#"
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
int main(int argc, char **argv) {
    FILE *f = fopen("in.txt", "w");
    if (!f) return 3;
    int fd = fileno(f);
    errno = 0;
    FILE *r = freopen(argv[1], "w", f);
    int e = errno;
    printf("%s %d %d\n", r ? "stream" : "NULL", e, fcntl(fd, F_GETFD) == -1 && errno == EBADF);
    return 0;
}
"#;

#[test]
fn a_refused_freopen_closes_the_stream_like_glibc() {
    let s = Scratch::new("freopen");
    let ws = s.ws();
    let prog = compile(&s.0, "reopen", REOPEN, &[]);
    // glibc, on a file it cannot open: NULL, and the stream is closed.
    let bare = Command::new(&prog)
        .arg(s.path("missing/x"))
        .current_dir(&ws)
        .env_remove("LD_PRELOAD")
        .output()
        .unwrap();
    assert_eq!(stdout(&bare), "NULL 2 1\n");
    let target = s.path("outside.txt");
    let o = preloaded(
        prog.to_str().unwrap(),
        &[("FSGUARD_ROOT", ws.to_str().unwrap())],
    )
    .arg(&target)
    .current_dir(&ws)
    .output()
    .unwrap();
    assert_eq!(stdout(&o), "NULL 13 1\n", "{}", stderr(&o));
    assert!(!target.exists());
    assert!(
        stderr(&o).contains(&format!(
            "[fsguard] blocked freopen write path={} rule=root",
            target.display()
        )),
        "{}",
        stderr(&o)
    );
}
