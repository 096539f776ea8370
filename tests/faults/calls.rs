//! Calls whose error shape must match glibc and the kernel: fts, a full fd table, freopen.

use super::*;

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

/// fts_open of an empty argv, then (`read`) fts_read to the end and
/// fts_close, or (`close`) fts_close at once; several rounds, so a heap
/// corrupted by one shows in the next.
const FTS_EMPTY: &str = r#"
#include <fts.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
int main(int argc, char **argv) {
    for (int round = 0; round < 3; round++) {
        char *none[] = {NULL};
        void *junk = malloc(64);
        memset(junk, 0x41, 64);
        free(junk);
        FTS *f = fts_open(none, FTS_PHYSICAL, NULL);
        if (!f) { printf("open NULL errno=%d\n", errno); return 0; }
        int n = 0;
        errno = 0;
        if (!strcmp(argv[1], "read"))
            while (fts_read(f) != NULL) n++;
        printf("read %d errno=%d\n", n, errno);
        fts_close(f);
    }
    return 0;
}
"#;

/// Issue 28: fts_open of no start path. glibc leaves the stream's dummy
/// node half made, and fts_read crashes bare (or frees what it never
/// allocated: a corrupted heap); guarded, the stream reads as an empty
/// walk and closes cleanly, read or not.
#[test]
fn fts_open_of_no_path_never_corrupts_the_heap() {
    let s = Scratch::new("fts-empty");
    let ws = s.ws();
    let prog = compile(&s.0, "fts_empty", FTS_EMPTY, &[]);
    for how in ["read", "close"] {
        let o = preloaded(
            prog.to_str().unwrap(),
            &[("FSGUARD_ROOT", ws.to_str().unwrap())],
        )
        .arg(how)
        .env("GLIBC_TUNABLES", "glibc.malloc.check=3")
        .current_dir(&ws)
        .output()
        .unwrap();
        assert_eq!(code(&o), 0, "{how}: {}{}", stdout(&o), stderr(&o));
        assert_eq!(
            stdout(&o),
            "read 0 errno=0\n".repeat(3),
            "{how}: {}",
            stderr(&o)
        );
    }
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

/// Holds 60 fds, lowers the soft `RLIMIT_NOFILE` to 16 (below them), then
/// makes, in `argv[2]` threads at once, calls that need no new fd: `NAME
/// ret errno` per call (thread 0's), then the soft limit after them all.
const LOWERED_LIMIT: &str = r#"
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
static const char *dir;
static char out[4096];
#define P(name, expr) do { errno = 0; int r_ = (expr); if (id == 0) { size_t n_ = strlen(out); \
    snprintf(out + n_, sizeof out - n_, "%s %d %d\n", name, r_ < 0 ? -1 : 0, r_ < 0 ? errno : 0); } } while (0)
#include <string.h>
static void *calls(void *arg) {
    long id = (long)arg;
    char a[4096], b[4096], l[4096], f[4096], h[4096];
    snprintf(a, sizeof a, "%s/a%ld", dir, id);
    snprintf(b, sizeof b, "%s/b%ld", dir, id);
    snprintf(l, sizeof l, "%s/l%ld", dir, id);
    snprintf(f, sizeof f, "%s/f%ld", dir, id);
    snprintf(h, sizeof h, "%s/h%ld", dir, id);
    for (int round = 0; round < (id == 0 ? 1 : 200); round++) {
        P("mkdir", mkdir(a, 0755));
        P("rename", rename(a, b));
        P("symlink", symlink("b", l));
        P("unlink", unlink(l));
        P("rmdir", rmdir(b));
        P("chmod", chmod(f, 0600));
        P("truncate", truncate(f, 3));
        P("link", link(f, h));
        P("unlink2", unlink(h));
    }
    return NULL;
}
int main(int argc, char **argv) {
    dir = argv[1];
    int threads = atoi(argv[2]);
    for (int i = 0; i < threads; i++) {
        char f[4096];
        snprintf(f, sizeof f, "%s/f%d", dir, i);
        int fd = open(f, O_CREAT | O_WRONLY, 0644);
        if (fd < 0) return 3;
        close(fd);
    }
    for (int i = 0; i < 60; i++)
        if (open("/dev/null", O_RDONLY) < 0) return 3;
    struct rlimit r;
    getrlimit(RLIMIT_NOFILE, &r);
    r.rlim_cur = 16;
    if (setrlimit(RLIMIT_NOFILE, &r)) return 3;
    pthread_t t[16];
    for (long i = 1; i < threads; i++) pthread_create(&t[i], NULL, calls, (void *)i);
    calls((void *)0);
    for (long i = 1; i < threads; i++) pthread_join(t[i], NULL);
    getrlimit(RLIMIT_NOFILE, &r);
    printf("%ssoft %ld\n", out, (long)r.rlim_cur);
    return 0;
}
"#;

/// Issue 28: with the soft limit lowered below the fds a program holds,
/// calls that need no new fd succeed bare, and must guarded too (the
/// guard's own fd is not the program's to count); with threads doing so at
/// once, the limit is the program's again after them all.
#[test]
fn a_lowered_soft_limit_refuses_no_call_that_needs_no_fd() {
    let s = Scratch::new("lowered");
    let ws = s.ws();
    let prog = compile(&s.0, "lowered", LOWERED_LIMIT, &["-pthread"]);
    let want = "mkdir 0 0\nrename 0 0\nsymlink 0 0\nunlink 0 0\nrmdir 0 0\nchmod 0 0\n\
                truncate 0 0\nlink 0 0\nunlink2 0 0\nsoft 16\n";
    for threads in ["1", "8"] {
        let bare = Command::new(&prog)
            .args([ws.to_str().unwrap(), threads])
            .env_remove("LD_PRELOAD")
            .output()
            .unwrap();
        assert_eq!(stdout(&bare), want, "bare, {threads} threads");
        let o = preloaded(
            prog.to_str().unwrap(),
            &[("FSGUARD_ROOT", ws.to_str().unwrap())],
        )
        .args([ws.to_str().unwrap(), threads])
        .current_dir(&s.0)
        .output()
        .unwrap();
        assert_eq!(
            stdout(&o),
            want,
            "guarded, {threads} threads: {}",
            stderr(&o)
        );
        assert!(stderr(&o).is_empty(), "{}", stderr(&o));
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
