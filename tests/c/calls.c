/* Calls one interposed libc function, by name, with arguments from argv,
 * and prints "ret=<r> errno=<n>(<NAME>)".
 *
 *   calls [-d DIR | -D DIR | -f FILE] CALL ARGS...
 *
 *   -d DIR   open DIR with open(O_RDONLY|O_DIRECTORY) (through the guard) to
 *            serve as the dirfd "FD"
 *   -D DIR   same, but with a raw openat syscall (bypasses any interposer),
 *            to get a dirfd on a directory the guard would not let us open
 *   -f FILE  raw-syscall fd on a regular file as "FD" (ENOTDIR cases)
 *
 * Arguments:
 *   dirfd:  CWD (AT_FDCWD), FD (the fd above) or a number
 *   flags:  O_*|AT_*|RENAME_* names joined with '|', or a number
 *   mode:   octal; "-" means "call without the mode argument"
 *   uid/gid: a number, or "self" (getuid()/getgid())
 *   paths:  "{fd}" is replaced by the number of FD (for /proc/self/fd/N/..)
 *
 * errno is set to a sentinel (7777) before the call so that a guard which
 * clobbers errno on an allowed, successful call is noticed. fd-returning calls
 * print ret=fd on success (the number itself may differ when the guard has
 * descriptors of its own), pointer-returning calls print ret=ptr or ret=NULL.
 */
#define _GNU_SOURCE
#define _LARGEFILE64_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>
#include <utime.h>

#ifndef RENAME_NOREPLACE
#define RENAME_NOREPLACE (1 << 0)
#endif
#ifndef RENAME_EXCHANGE
#define RENAME_EXCHANGE (1 << 1)
#endif

/* The fortified entry points, called directly. */
extern int __open_2(const char *, int);
extern int __open64_2(const char *, int);
extern int __openat_2(int, const char *, int);
extern int __openat64_2(int, const char *, int);
/* Declared here in case the libc headers hide it. */
extern int renameat2(int, const char *, int, const char *, unsigned int);

#define SENTINEL 7777

static int the_fd = -1;

static void die(const char *msg, const char *arg) {
    fprintf(stderr, "calls: %s: %s\n", msg, arg ? arg : "");
    exit(99);
}

static long parse_flags(const char *s) {
    static const struct { const char *n; long v; } T[] = {
        {"O_RDONLY", O_RDONLY}, {"O_WRONLY", O_WRONLY}, {"O_RDWR", O_RDWR},
        {"O_CREAT", O_CREAT}, {"O_EXCL", O_EXCL}, {"O_TRUNC", O_TRUNC},
        {"O_APPEND", O_APPEND}, {"O_DIRECTORY", O_DIRECTORY},
        {"O_NOFOLLOW", O_NOFOLLOW}, {"O_PATH", O_PATH}, {"O_CLOEXEC", O_CLOEXEC},
        {"O_NONBLOCK", O_NONBLOCK}, {"O_NOCTTY", O_NOCTTY}, {"O_TMPFILE", O_TMPFILE},
        {"AT_SYMLINK_NOFOLLOW", AT_SYMLINK_NOFOLLOW},
        {"AT_SYMLINK_FOLLOW", AT_SYMLINK_FOLLOW}, {"AT_REMOVEDIR", AT_REMOVEDIR},
        {"AT_EMPTY_PATH", AT_EMPTY_PATH},
        {"RENAME_NOREPLACE", RENAME_NOREPLACE}, {"RENAME_EXCHANGE", RENAME_EXCHANGE},
    };
    long v = 0;
    char *dup = strdup(s), *save = NULL;
    for (char *t = strtok_r(dup, "|", &save); t; t = strtok_r(NULL, "|", &save)) {
        char *end;
        long n = strtol(t, &end, 0);
        if (*t && !*end) { v |= n; continue; }
        size_t i;
        for (i = 0; i < sizeof T / sizeof T[0]; i++)
            if (!strcmp(T[i].n, t)) { v |= T[i].v; break; }
        if (i == sizeof T / sizeof T[0]) die("unknown flag", t);
    }
    free(dup);
    return v;
}

static int parse_dirfd(const char *s) {
    if (!strcmp(s, "CWD")) return AT_FDCWD;
    if (!strcmp(s, "FD")) {
        if (the_fd < 0) die("FD used without -d/-D/-f", s);
        return the_fd;
    }
    return (int)strtol(s, NULL, 0);
}

static int has_mode(const char *s) { return strcmp(s, "-") != 0; }
static mode_t parse_mode(const char *s) { return (mode_t)strtol(s, NULL, 8); }

static long parse_id(const char *s, int uid) {
    if (!strcmp(s, "self")) return uid ? (long)getuid() : (long)getgid();
    return strtol(s, NULL, 0);
}

/* Replace "{fd}" by the fd number. */
static const char *P(const char *s) {
    const char *at = strstr(s, "{fd}");
    if (!at) return s;
    char *out = malloc(strlen(s) + 16);
    sprintf(out, "%.*s%d%s", (int)(at - s), s, the_fd, at + 4);
    return out;
}

/* An fd the library does not see being opened (libc's syscall() is hooked,
 * so the instruction itself), for calls handed an fd from elsewhere. */
static int raw_openat(const char *path, long flags) {
#if defined(__x86_64__)
    long ret;
    register long r10 __asm__("r10") = 0;
    __asm__ volatile("syscall"
                     : "=a"(ret)
                     : "a"((long)SYS_openat), "D"((long)AT_FDCWD), "S"(path), "d"(flags), "r"(r10)
                     : "rcx", "r11", "memory");
    if (ret < 0) {
        errno = (int)-ret;
        return -1;
    }
    return (int)ret;
#else
    return (int)syscall(SYS_openat, AT_FDCWD, path, flags);
#endif
}

static void need(int argc, int n, const char *call) {
    if (argc < n) die("not enough arguments for", call);
}

int main(int argc, char **argv) {
    int i = 1;
    while (i < argc && argv[i][0] == '-' && argv[i][1] && !argv[i][2]) {
        if (i + 1 >= argc) die("option needs an argument", argv[i]);
        const char *p = argv[i + 1];
        switch (argv[i][1]) {
        case 'd': the_fd = open(p, O_RDONLY | O_DIRECTORY); break;
        case 'D': the_fd = raw_openat(p, O_PATH | O_DIRECTORY); break;
        case 'f': the_fd = raw_openat(p, O_RDONLY); break;
        default: die("unknown option", argv[i]);
        }
        if (the_fd < 0) {
            fprintf(stderr, "calls: cannot open %s: %s\n", p, strerror(errno));
            exit(98);
        }
        i += 2;
    }
    if (i >= argc) die("usage: calls [-d DIR|-D DIR|-f FILE] CALL ARGS...", NULL);
    const char *c = argv[i];
    char **a = argv + i + 1; /* a[0] is the first argument of the call */
    int n = argc - i - 1;

    enum { INT, FD, PTR } kind = INT;
    long r = 0;
    void *ptr = NULL;
    int e;

    struct utimbuf ub = {.actime = 1000000000, .modtime = 1000000000};
    struct timeval tv[2] = {{1000000000, 0}, {1000000000, 0}};
    struct timespec ts[2] = {{1000000000, 0}, {1000000000, 0}};

    /* Parse everything before setting the sentinel. */
#define S(k) (P(a[k]))
    errno = SENTINEL;
    if (!strcmp(c, "open")) {
        need(n, 2, c); kind = FD;
        long fl = parse_flags(a[1]);
        if (n > 2 && has_mode(a[2])) { mode_t m = parse_mode(a[2]); const char *p = S(0); errno = SENTINEL; r = open(p, fl, m); }
        else { const char *p = S(0); errno = SENTINEL; r = open(p, fl); }
    } else if (!strcmp(c, "open64")) {
        need(n, 2, c); kind = FD;
        long fl = parse_flags(a[1]);
        if (n > 2 && has_mode(a[2])) { mode_t m = parse_mode(a[2]); const char *p = S(0); errno = SENTINEL; r = open64(p, fl, m); }
        else { const char *p = S(0); errno = SENTINEL; r = open64(p, fl); }
    } else if (!strcmp(c, "openat") || !strcmp(c, "openat64")) {
        need(n, 3, c); kind = FD;
        int d = parse_dirfd(a[0]); long fl = parse_flags(a[2]); const char *p = S(1);
        int is64 = !strcmp(c, "openat64");
        if (n > 3 && has_mode(a[3])) {
            mode_t m = parse_mode(a[3]); errno = SENTINEL;
            r = is64 ? openat64(d, p, fl, m) : openat(d, p, fl, m);
        } else {
            errno = SENTINEL;
            r = is64 ? openat64(d, p, fl) : openat(d, p, fl);
        }
    } else if (!strcmp(c, "creat") || !strcmp(c, "creat64")) {
        need(n, 2, c); kind = FD;
        mode_t m = parse_mode(a[1]); const char *p = S(0); errno = SENTINEL;
        r = !strcmp(c, "creat") ? creat(p, m) : creat64(p, m);
    } else if (!strcmp(c, "__open_2") || !strcmp(c, "__open64_2")) {
        need(n, 2, c); kind = FD;
        long fl = parse_flags(a[1]); const char *p = S(0); errno = SENTINEL;
        r = !strcmp(c, "__open_2") ? __open_2(p, fl) : __open64_2(p, fl);
    } else if (!strcmp(c, "__openat_2") || !strcmp(c, "__openat64_2")) {
        need(n, 3, c); kind = FD;
        int d = parse_dirfd(a[0]); long fl = parse_flags(a[2]); const char *p = S(1); errno = SENTINEL;
        r = !strcmp(c, "__openat_2") ? __openat_2(d, p, fl) : __openat64_2(d, p, fl);
    } else if (!strcmp(c, "fopen") || !strcmp(c, "fopen64")) {
        need(n, 2, c); kind = PTR;
        const char *p = S(0); errno = SENTINEL;
        ptr = !strcmp(c, "fopen") ? (void *)fopen(p, a[1]) : (void *)fopen64(p, a[1]);
    } else if (!strcmp(c, "freopen") || !strcmp(c, "freopen64")) {
        need(n, 2, c); kind = PTR;
        const char *p = S(0); errno = SENTINEL;
        ptr = !strcmp(c, "freopen") ? (void *)freopen(p, a[1], stdin) : (void *)freopen64(p, a[1], stdin);
    } else if (!strcmp(c, "freopen_null") || !strcmp(c, "freopen64_null")) {
        /* freopen(NULL, MODE, fp) changes the mode of a stream opened on
         * FILE for reading (glibc reopens /proc/self/fd/N internally) */
        need(n, 2, c); kind = PTR;
        FILE *fp = fopen(S(0), "r");
        if (!fp) { fprintf(stderr, "calls: cannot fopen %s: %s\n", a[0], strerror(errno)); exit(98); }
        errno = SENTINEL;
        ptr = !strcmp(c, "freopen_null") ? (void *)freopen(NULL, a[1], fp) : (void *)freopen64(NULL, a[1], fp);
    } else if (!strcmp(c, "opendir")) {
        need(n, 1, c); kind = PTR;
        const char *p = S(0); errno = SENTINEL;
        ptr = opendir(p);
    } else if (!strcmp(c, "unlink")) {
        need(n, 1, c); const char *p = S(0); errno = SENTINEL; r = unlink(p);
    } else if (!strcmp(c, "unlinkat")) {
        need(n, 3, c); int d = parse_dirfd(a[0]); long fl = parse_flags(a[2]); const char *p = S(1);
        errno = SENTINEL; r = unlinkat(d, p, fl);
    } else if (!strcmp(c, "remove")) {
        need(n, 1, c); const char *p = S(0); errno = SENTINEL; r = remove(p);
    } else if (!strcmp(c, "rename")) {
        need(n, 2, c); const char *p = S(0), *q = S(1); errno = SENTINEL; r = rename(p, q);
    } else if (!strcmp(c, "renameat")) {
        need(n, 4, c); int d1 = parse_dirfd(a[0]), d2 = parse_dirfd(a[2]); const char *p = S(1), *q = S(3);
        errno = SENTINEL; r = renameat(d1, p, d2, q);
    } else if (!strcmp(c, "renameat2")) {
        need(n, 5, c); int d1 = parse_dirfd(a[0]), d2 = parse_dirfd(a[2]); const char *p = S(1), *q = S(3);
        unsigned fl = (unsigned)parse_flags(a[4]);
        errno = SENTINEL; r = renameat2(d1, p, d2, q, fl);
    } else if (!strcmp(c, "mkdir")) {
        need(n, 2, c); mode_t m = parse_mode(a[1]); const char *p = S(0); errno = SENTINEL; r = mkdir(p, m);
    } else if (!strcmp(c, "mkdirat")) {
        need(n, 3, c); int d = parse_dirfd(a[0]); mode_t m = parse_mode(a[2]); const char *p = S(1);
        errno = SENTINEL; r = mkdirat(d, p, m);
    } else if (!strcmp(c, "rmdir")) {
        need(n, 1, c); const char *p = S(0); errno = SENTINEL; r = rmdir(p);
    } else if (!strcmp(c, "chmod")) {
        need(n, 2, c); mode_t m = parse_mode(a[1]); const char *p = S(0); errno = SENTINEL; r = chmod(p, m);
    } else if (!strcmp(c, "fchmodat")) {
        need(n, 4, c); int d = parse_dirfd(a[0]); mode_t m = parse_mode(a[2]); long fl = parse_flags(a[3]);
        const char *p = S(1); errno = SENTINEL; r = fchmodat(d, p, m, fl);
    } else if (!strcmp(c, "chown") || !strcmp(c, "lchown")) {
        need(n, 3, c); uid_t u = (uid_t)parse_id(a[1], 1); gid_t g = (gid_t)parse_id(a[2], 0);
        const char *p = S(0); errno = SENTINEL;
        r = !strcmp(c, "chown") ? chown(p, u, g) : lchown(p, u, g);
    } else if (!strcmp(c, "fchownat")) {
        need(n, 5, c); int d = parse_dirfd(a[0]); uid_t u = (uid_t)parse_id(a[2], 1);
        gid_t g = (gid_t)parse_id(a[3], 0); long fl = parse_flags(a[4]); const char *p = S(1);
        errno = SENTINEL; r = fchownat(d, p, u, g, fl);
    } else if (!strcmp(c, "link")) {
        need(n, 2, c); const char *p = S(0), *q = S(1); errno = SENTINEL; r = link(p, q);
    } else if (!strcmp(c, "linkat")) {
        need(n, 5, c); int d1 = parse_dirfd(a[0]), d2 = parse_dirfd(a[2]); long fl = parse_flags(a[4]);
        const char *p = S(1), *q = S(3); errno = SENTINEL; r = linkat(d1, p, d2, q, fl);
    } else if (!strcmp(c, "symlink")) {
        need(n, 2, c); const char *q = S(1); errno = SENTINEL; r = symlink(a[0], q);
    } else if (!strcmp(c, "symlinkat")) {
        need(n, 3, c); int d = parse_dirfd(a[1]); const char *q = S(2); errno = SENTINEL;
        r = symlinkat(a[0], d, q);
    } else if (!strcmp(c, "truncate") || !strcmp(c, "truncate64")) {
        need(n, 2, c); long len = strtol(a[1], NULL, 0); const char *p = S(0); errno = SENTINEL;
        r = !strcmp(c, "truncate") ? truncate(p, len) : truncate64(p, len);
    } else if (!strcmp(c, "utime")) {
        need(n, 1, c); int now = n > 1 && !strcmp(a[1], "NULL"); const char *p = S(0); errno = SENTINEL;
        r = utime(p, now ? NULL : &ub);
    } else if (!strcmp(c, "utimes")) {
        need(n, 1, c); int now = n > 1 && !strcmp(a[1], "NULL"); const char *p = S(0); errno = SENTINEL;
        r = utimes(p, now ? NULL : tv);
    } else if (!strcmp(c, "utimensat")) {
        need(n, 3, c); int d = parse_dirfd(a[0]); long fl = parse_flags(a[2]); const char *p = S(1);
        errno = SENTINEL; r = utimensat(d, p, ts, fl);
    } else {
        die("unknown call", c);
    }
    e = errno;

    const char *ename = e == SENTINEL ? "unchanged" : strerrorname_np(e);
    if (!ename) ename = "?";
    if (kind == FD)
        printf("ret=%s errno=%d(%s)\n", r >= 0 ? "fd" : "-1", e, ename);
    else if (kind == PTR)
        printf("ret=%s errno=%d(%s)\n", ptr ? "ptr" : "NULL", e, ename);
    else
        printf("ret=%ld errno=%d(%s)\n", r, e, ename);
    fflush(stdout);
    return 0;
}
