/* TOCTOU race driver for tests/races.rs.
 *
 *   race setup OP KIND        (run bare) build the fixture in the cwd
 *   race run OP KIND N SWAPPER [once]
 *                             run N tries of OP while a thread swaps
 *
 * The cwd holds `box/` (the root a guarded run is confined to) and `out/`
 * (a sibling of box: outside).
 *
 * KIND `dir`: box/d is a real directory, box/lnk a symlink to ../out; a
 *   thread of this program exchanges the two names with
 *   renameat2(RENAME_EXCHANGE) in a loop while the main thread calls OP on
 *   box/d/NAME: a directory component swapped between inside and outside.
 * KIND `final`: a thread exchanges two symlinks, box/link (pointing inside)
 *   and box/alt (pointing outside). For calls that follow a final symlink
 *   (read, create, chmod, truncate, utimensat, opendir) the main thread
 *   calls OP on box/link itself, and the links point at in/NAME and
 *   ../out/NAME: the final symlink is swapped. Calls that act on the entry
 *   (unlink, rename, mkdir, link, symlink) never follow a final symlink, so
 *   for them the links point at the directories in and ../out and OP acts
 *   on box/link/NAME: the last directory component is the swapped symlink.
 *
 * SWAPPER `libc`: the swapper calls the libc renameat2 (hooked under the
 * library; an exchange of two names inside the root is allowed), as a
 * thread of a guarded program would. `raw`: it makes the system call
 * itself, unseen by the library, as any other process sharing the
 * directory would (another guarded process's hooks are not this one's), so
 * a defence that relies on seeing the swap fails. `mixed`: each swap one
 * way or the other at random, which also keeps the swapper from falling
 * into step with the main thread (the main thread jitters too); on main
 * this hits the window between check and call far more often than either.
 *
 * The main thread's only library-visible calls are OP's own (open + read
 * + close, opendir + readdir + closedir, or the one call). Everything else
 * the driver does (seeing whether OP changed anything outside, putting
 * outside back so the next try can leak again, resetting the inside
 * fixture) uses raw system call instructions through fds opened before the
 * swapper starts: invisible to the library, not racing with the swapper,
 * and never refused. A repair outside still leaves a new ctime/mtime on
 * out/ or the file, so the test's snapshot of out/ sees those leaks too.
 *
 * Prints one line:
 *   leaks=L tries=T ok=S denied=E other=O swaps=W
 * leaks: tries after which something outside had changed (or, for read and
 * opendir, outside content was read). ok: OP succeeded. denied: OP failed
 * with EACCES/EPERM. `once`: stop at the first leak (bare control runs).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <unistd.h>

#ifndef RENAME_EXCHANGE
#define RENAME_EXCHANGE (1 << 1)
#endif

/* ---- raw system calls (not seen by an LD_PRELOAD library) ------------ */

static long rsys(long n, long a, long b, long c, long d, long e) {
    long ret;
#if defined(__x86_64__)
    register long r10 __asm__("r10") = d;
    register long r8 __asm__("r8") = e;
    __asm__ volatile("syscall"
                     : "=a"(ret)
                     : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8)
                     : "rcx", "r11", "memory");
#elif defined(__aarch64__)
    register long x8 __asm__("x8") = n;
    register long x0 __asm__("x0") = a;
    register long x1 __asm__("x1") = b;
    register long x2 __asm__("x2") = c;
    register long x3 __asm__("x3") = d;
    register long x4 __asm__("x4") = e;
    __asm__ volatile("svc 0" : "+r"(x0) : "r"(x8), "r"(x1), "r"(x2), "r"(x3), "r"(x4) : "memory");
    ret = x0;
#else
#error "race.c: raw system calls for x86_64 and aarch64 only"
#endif
    return ret;
}

#define R_OPENAT(d, p, f, m) rsys(SYS_openat, (d), (long)(p), (f), (m), 0)
#define R_CLOSE(fd) rsys(SYS_close, (fd), 0, 0, 0, 0)
#define R_WRITE(fd, b, n) rsys(SYS_write, (fd), (long)(b), (n), 0, 0)
#define R_UNLINKAT(d, p, f) rsys(SYS_unlinkat, (d), (long)(p), (f), 0, 0)
#define R_MKDIRAT(d, p, m) rsys(SYS_mkdirat, (d), (long)(p), (m), 0, 0)
#define R_FCHMODAT(d, p, m) rsys(SYS_fchmodat, (d), (long)(p), (m), 0, 0)
#define R_FSTATAT(d, p, st) rsys(SYS_newfstatat, (d), (long)(p), (long)(st), AT_SYMLINK_NOFOLLOW, 0)
#define R_UTIMENSAT(d, p, ts) rsys(SYS_utimensat, (d), (long)(p), (long)(ts), AT_SYMLINK_NOFOLLOW, 0)

/* ---- fixture --------------------------------------------------------- */

#define IN_CONTENT "INSIDE-CONTENT\n"
#define OUT_CONTENT "OUTSIDE-SECRET\n"
#define OUT_MARKER "OUTSIDE_MARKER"
#define TRUNC_CONTENT "TTTTTTTTTTTTTTTT\n"
#define BASE_TIME 1500000000L /* fixture mtimes */
#define EVIL_TIME 1000000000L /* what utimensat sets */

static const char *op, *kind;
static int infd = -1, outfd = -1; /* the real inside / outside directories */
static atomic_int stop;
static atomic_long swaps;
static int raw_swapper; /* 0 libc, 1 raw, 2 alternating */

static void die(const char *what) {
    fprintf(stderr, "race: %s: %s\n", what, strerror(errno));
    exit(2);
}

static int is(const char *a) { return strcmp(op, a) == 0; }

/* Ops acting on a directory entry: `final` swaps their parent. */
static int entry_op(void) {
    return is("unlink") || is("rename") || is("mkdir") || is("link") || is("symlink");
}

/* The object a following op is called on. */
static const char *obj_name(void) {
    if (is("read")) return "secret";
    if (is("opendir")) return "sub";
    if (is("create")) return "new";
    if (is("chmod")) return "f";
    if (is("truncate")) return "t";
    if (is("utimensat")) return "u";
    return NULL;
}

/* Plain libc is fine in setup: it runs bare. */
static void put_file(int dfd, const char *name, const char *content, mode_t mode) {
    int fd = openat(dfd, name, O_CREAT | O_TRUNC | O_WRONLY, mode);
    if (fd < 0) die(name);
    if (write(fd, content, strlen(content)) < 0) die("write");
    fchmod(fd, mode);
    struct timespec ts[2] = {{BASE_TIME, 0}, {BASE_TIME, 0}};
    futimens(fd, ts);
    close(fd);
}

/* What a side (inside or outside) holds before any try. */
static void populate(int dfd, int outside) {
    const char *content = outside ? OUT_CONTENT : IN_CONTENT;
    if (is("read")) put_file(dfd, "secret", content, 0644);
    if (is("opendir")) {
        if (mkdirat(dfd, "sub", 0755) < 0) die("mkdir sub");
        int s = openat(dfd, "sub", O_RDONLY | O_DIRECTORY);
        put_file(s, outside ? OUT_MARKER : "inside_entry", content, 0644);
        close(s);
    }
    if (is("unlink") && outside) put_file(dfd, "victim", content, 0644);
    if (is("rename") && outside) put_file(dfd, "a", content, 0644);
    if (is("chmod")) put_file(dfd, "f", content, 0644);
    if (is("truncate")) put_file(dfd, "t", TRUNC_CONTENT, 0644);
    if (is("utimensat")) put_file(dfd, "u", content, 0644);
    if (is("link")) put_file(dfd, "x", content, 0644);
}

static void setup(void) {
    if (mkdir("box", 0755) < 0 || mkdir("out", 0755) < 0) die("mkdir box/out");
    int o = open("out", O_RDONLY | O_DIRECTORY);
    populate(o, 1);
    if (strcmp(kind, "dir") == 0) {
        if (mkdir("box/d", 0755) < 0) die("mkdir box/d");
        int d = open("box/d", O_RDONLY | O_DIRECTORY);
        populate(d, 0);
        if (symlink("../out", "box/lnk") < 0) die("symlink box/lnk");
    } else {
        if (mkdir("box/in", 0755) < 0) die("mkdir box/in");
        int d = open("box/in", O_RDONLY | O_DIRECTORY);
        populate(d, 0);
        char in[64], outp[64];
        if (entry_op()) {
            snprintf(in, sizeof in, "in");
            snprintf(outp, sizeof outp, "../out");
        } else {
            snprintf(in, sizeof in, "in/%s", obj_name());
            snprintf(outp, sizeof outp, "../out/%s", obj_name());
        }
        if (symlink(in, "box/link") < 0 || symlink(outp, "box/alt") < 0) die("symlink");
    }
}

/* ---- the swapper ----------------------------------------------------- */

static void *swapper(void *arg) {
    const char *a = strcmp(kind, "dir") == 0 ? "box/d" : "box/link";
    const char *b = strcmp(kind, "dir") == 0 ? "box/lnk" : "box/alt";
    (void)arg;
    unsigned seed = 54321;
    while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
        seed = seed * 1103515245u + 12345u;
        long r = (raw_swapper == 1 || (raw_swapper == 2 && (seed >> 16) & 1)) ? rsys(SYS_renameat2, AT_FDCWD, (long)a, AT_FDCWD, (long)b, RENAME_EXCHANGE)
                             : renameat2(AT_FDCWD, a, AT_FDCWD, b, RENAME_EXCHANGE);
        if (r == 0) atomic_fetch_add_explicit(&swaps, 1, memory_order_relaxed);
    }
    return NULL;
}

/* ---- one try --------------------------------------------------------- */

static char p1[256], p2[256];

static void paths(void) {
    const char *base = strcmp(kind, "dir") == 0 ? "box/d" : "box/link";
    if (strcmp(kind, "final") == 0 && !entry_op()) {
        snprintf(p1, sizeof p1, "box/link");
        return;
    }
    const char *n1 = is("read")       ? "secret"
                     : is("opendir")  ? "sub"
                     : is("create")   ? "new"
                     : is("unlink")   ? "victim"
                     : is("rename")   ? "a"
                     : is("mkdir")    ? "m"
                     : is("chmod")    ? "f"
                     : is("truncate") ? "t"
                     : is("utimensat") ? "u"
                     : is("link")     ? "x"
                                      : "s";
    snprintf(p1, sizeof p1, "%s/%s", base, n1);
    if (is("rename")) snprintf(p2, sizeof p2, "%s/b", base);
    if (is("link")) snprintf(p2, sizeof p2, "%s/l", base);
}

/* Calls OP once. Returns 0 on success, else errno; *read_out set when
 * outside content was read. */
static int do_op(int *read_out) {
    int r = -1;
    *read_out = 0;
    if (is("read")) {
        int fd = open(p1, O_RDONLY);
        if (fd >= 0) {
            char buf[64] = {0};
            ssize_t n = read(fd, buf, sizeof buf - 1);
            if (n > 0 && strstr(buf, "OUTSIDE")) *read_out = 1;
            close(fd);
            r = 0;
        }
    } else if (is("opendir")) {
        DIR *d = opendir(p1);
        if (d) {
            struct dirent *e;
            while ((e = readdir(d)))
                if (strcmp(e->d_name, OUT_MARKER) == 0) *read_out = 1;
            closedir(d);
            r = 0;
        }
    } else if (is("create")) {
        int fd = open(p1, O_CREAT | O_WRONLY, 0644);
        if (fd >= 0) {
            write(fd, "c", 1);
            close(fd);
            r = 0;
        }
    } else if (is("unlink")) {
        r = unlink(p1);
    } else if (is("rename")) {
        r = rename(p1, p2);
    } else if (is("mkdir")) {
        r = mkdir(p1, 0755);
    } else if (is("chmod")) {
        r = chmod(p1, 0600);
    } else if (is("truncate")) {
        r = truncate(p1, 0);
    } else if (is("utimensat")) {
        struct timespec ts[2] = {{EVIL_TIME, 0}, {EVIL_TIME, 0}};
        r = utimensat(AT_FDCWD, p1, ts, 0);
    } else if (is("link")) {
        r = link(p1, p2);
    } else if (is("symlink")) {
        r = symlink("target-of-race", p1);
    }
    return r == 0 ? 0 : errno;
}

static int exists(int dfd, const char *name, struct stat *st) {
    struct stat tmp;
    return R_FSTATAT(dfd, name, st ? st : &tmp) == 0;
}

static void raw_put(int dfd, const char *name, const char *content, mode_t mode) {
    long fd = R_OPENAT(dfd, name, O_CREAT | O_TRUNC | O_WRONLY | O_CLOEXEC, mode);
    if (fd < 0) {
        fprintf(stderr, "race: raw create %s: %ld\n", name, fd);
        exit(2);
    }
    R_WRITE(fd, content, strlen(content));
    R_CLOSE(fd);
    R_FCHMODAT(dfd, name, mode);
    struct timespec ts[2] = {{BASE_TIME, 0}, {BASE_TIME, 0}};
    R_UTIMENSAT(dfd, name, ts);
}

/* Did OP change something outside? Put it back so the next try can leak
 * again (the repair's ctime/mtime stays visible to the test's snapshot). */
static int outside_changed(void) {
    struct stat st;
    int leak = 0;
    if (is("create")) {
        if (exists(outfd, "new", NULL)) leak = 1, R_UNLINKAT(outfd, "new", 0);
    } else if (is("unlink")) {
        if (!exists(outfd, "victim", NULL)) leak = 1, raw_put(outfd, "victim", OUT_CONTENT, 0644);
    } else if (is("rename")) {
        /* a -> b outside, or a file moved across (in -> out/b, out/a -> in/b) */
        if (exists(outfd, "b", NULL)) leak = 1, R_UNLINKAT(outfd, "b", 0);
        if (!exists(outfd, "a", NULL)) leak = 1, raw_put(outfd, "a", OUT_CONTENT, 0644);
    } else if (is("mkdir")) {
        if (exists(outfd, "m", NULL)) leak = 1, R_UNLINKAT(outfd, "m", AT_REMOVEDIR);
    } else if (is("chmod")) {
        if (exists(outfd, "f", &st) && (st.st_mode & 07777) != 0644) leak = 1, R_FCHMODAT(outfd, "f", 0644);
    } else if (is("truncate")) {
        if (exists(outfd, "t", &st) && st.st_size != (off_t)strlen(TRUNC_CONTENT))
            leak = 1, raw_put(outfd, "t", TRUNC_CONTENT, 0644);
    } else if (is("utimensat")) {
        if (exists(outfd, "u", &st) && st.st_mtim.tv_sec != BASE_TIME) {
            struct timespec ts[2] = {{BASE_TIME, 0}, {BASE_TIME, 0}};
            leak = 1, R_UTIMENSAT(outfd, "u", ts);
        }
    } else if (is("link")) {
        /* a new name outside, or the outside file linked in (nlink) */
        if (exists(outfd, "l", NULL)) leak = 1, R_UNLINKAT(outfd, "l", 0);
        if (exists(outfd, "x", &st) && st.st_nlink != 1) leak = 1;
    } else if (is("symlink")) {
        if (exists(outfd, "s", NULL)) leak = 1, R_UNLINKAT(outfd, "s", 0);
    }
    return leak;
}

/* Back to the inside fixture: what OP did inside is undone. */
static void reset_inside(void) {
    struct stat st;
    if (is("create")) {
        R_UNLINKAT(infd, "new", 0);
    } else if (is("unlink")) {
        if (!exists(infd, "victim", NULL)) raw_put(infd, "victim", IN_CONTENT, 0644);
    } else if (is("rename")) {
        R_UNLINKAT(infd, "b", 0);
        if (!exists(infd, "a", NULL)) raw_put(infd, "a", IN_CONTENT, 0644);
    } else if (is("mkdir")) {
        R_UNLINKAT(infd, "m", AT_REMOVEDIR);
    } else if (is("chmod")) {
        R_FCHMODAT(infd, "f", 0644);
    } else if (is("truncate")) {
        if (exists(infd, "t", &st) && st.st_size == 0) raw_put(infd, "t", TRUNC_CONTENT, 0644);
    } else if (is("link")) {
        R_UNLINKAT(infd, "l", 0);
    } else if (is("symlink")) {
        R_UNLINKAT(infd, "s", 0);
    }
}

int main(int argc, char **argv) {
    if (argc < 4) {
        fprintf(stderr, "usage: race setup|run OP dir|final [N [libc|raw|mixed [once]]]\n");
        return 2;
    }
    op = argv[2];
    kind = argv[3];
    if (strcmp(kind, "dir") != 0 && strcmp(kind, "final") != 0) {
        fprintf(stderr, "race: kind must be dir or final\n");
        return 2;
    }
    if (strcmp(argv[1], "setup") == 0) {
        setup();
        return 0;
    }
    long tries = argc > 4 ? atol(argv[4]) : 20000;
    raw_swapper = argc <= 5                   ? 0
                  : strcmp(argv[5], "raw") == 0   ? 1
                  : strcmp(argv[5], "mixed") == 0 ? 2
                                                  : 0;
    int once = argc > 6 && strcmp(argv[6], "once") == 0;

    /* Both directories opened by raw calls before the swapper starts. */
    const char *inside = strcmp(kind, "dir") == 0 ? "box/d" : "box/in";
    infd = R_OPENAT(AT_FDCWD, inside, O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0);
    outfd = R_OPENAT(AT_FDCWD, "out", O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0);
    if (infd < 0 || outfd < 0) {
        fprintf(stderr, "race: cannot open box/out (run setup first)\n");
        return 2;
    }
    paths();
    /* Entries the rename/unlink ops need inside before the first try. */
    reset_inside();

    pthread_t t;
    if (pthread_create(&t, NULL, swapper, NULL) != 0) die("pthread_create");
    while (atomic_load(&swaps) == 0) sched_yield();

    long leaks = 0, ok = 0, denied = 0, other = 0, i;
    unsigned seed = 12345;
    for (i = 0; i < tries; i++) {
        int read_out;
        /* A little jitter, so the tries do not fall into step with the
         * swapper (which would show OP the same state every time). */
        seed = seed * 1103515245u + 12345u;
        for (volatile unsigned j = (seed >> 16) % 512; j > 0; j--) {
        }
        int e = do_op(&read_out);
        if (e == 0)
            ok++;
        else if (e == EACCES || e == EPERM)
            denied++;
        else
            other++;
        int leak = outside_changed() | read_out;
        reset_inside();
        leaks += leak;
        if (leak && once) {
            i++;
            break;
        }
    }
    atomic_store(&stop, 1);
    pthread_join(t, NULL);
    printf("leaks=%ld tries=%ld ok=%ld denied=%ld other=%ld swaps=%ld\n", leaks, i, ok, denied, other,
           (long)atomic_load(&swaps));
    return 0;
}
