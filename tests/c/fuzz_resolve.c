/* Case runner for tests/fuzz_resolve.rs.
 *
 * Reads one case per line from stdin and answers one line per case on stdout
 * (the test resets the tree between cases, so it drives the runner one line
 * at a time). argv[1] is "bare" or "guarded"; a bare runner also probes,
 * before the call, where the kernel resolves each path argument.
 *
 * A case line: CASE CWD D1 D2 CALL ARGS..., separated by single spaces, "@"
 * standing for the empty string.
 *   D1, D2   "-" (AT_FDCWD), "P:path" (O_PATH|O_DIRECTORY) or "R:path"
 *            (O_RDONLY|O_DIRECTORY). When an R open is refused with EACCES the
 *            runner falls back to an O_PATH open, so that the call still runs
 *            with a dirfd naming the same directory.
 *   open P OFL | openat P OFL (D1) | creat P | fopen P MODE | opendir P
 *   unlink P | unlinkat P AFL (D1) | rmdir P | mkdir P | mkdirat P (D1)
 *   rename P Q | renameat P Q (D1, D2) | symlink TARGET P | symlinkat TARGET P (D1)
 *   link P Q | linkat P Q AFL (D1, D2) | chmod P | fchmodat P AFL (D1)
 *   truncate P | utimensat P AFL (D1)
 * OFL letters: r w b(=O_RDWR) c(O_CREAT) x(O_EXCL) t(O_TRUNC) a(O_APPEND)
 * n(O_NOFOLLOW) d(O_DIRECTORY). AFL letters: n(AT_SYMLINK_NOFOLLOW)
 * f(AT_SYMLINK_FOLLOW) e(AT_EMPTY_PATH) R(AT_REMOVEDIR), "-" for none.
 *
 * The answer: "CASE d1=RET:ERRNO:DEV:INO[|PROBE] d2=... ret=RET errno=ERRNO
 * obj=DEV:INO probes=P1;P2" where obj is the object of a returned fd (fstat)
 * or "-", and each probe (bare only, else "-") is O:DEV:INO (the object the
 * path names), E:DEV:INO:NAME (the directory holding the entry, and its
 * name), or X:ERRNO (the kernel cannot resolve it).
 *
 * stderr carries "@@case CASE" before the case, "@@call CASE" after the dirfd
 * opens and "@@end CASE" after the call, so the test can attribute the
 * library's trace lines to the dirfd opens or to the call. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAGIC_TIME 1000000007L
#define MAXTOK 16

static int bare;

static const char *arg(const char *t) { return strcmp(t, "@") == 0 ? "" : t; }

static int oflags(const char *s) {
    int f = 0, acc = O_RDONLY;
    for (; *s; s++) {
        switch (*s) {
        case 'r': acc = O_RDONLY; break;
        case 'w': acc = O_WRONLY; break;
        case 'b': acc = O_RDWR; break;
        case 'c': f |= O_CREAT; break;
        case 'x': f |= O_EXCL; break;
        case 't': f |= O_TRUNC; break;
        case 'a': f |= O_APPEND; break;
        case 'n': f |= O_NOFOLLOW; break;
        case 'd': f |= O_DIRECTORY; break;
        }
    }
    return f | acc | O_CLOEXEC;
}

static int aflags(const char *s) {
    int f = 0;
    for (; *s; s++) {
        switch (*s) {
        case 'n': f |= AT_SYMLINK_NOFOLLOW; break;
        case 'f': f |= AT_SYMLINK_FOLLOW; break;
        case 'e': f |= AT_EMPTY_PATH; break;
        case 'R': f |= AT_REMOVEDIR; break;
        }
    }
    return f;
}

/* ---- probes: where the kernel resolves a path (bare runner only) ---- */

static void put(char **o, size_t *left, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
#include <stdarg.h>
static void put(char **o, size_t *left, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(*o, *left, fmt, ap);
    va_end(ap);
    if (n < 0) n = 0;
    if ((size_t)n >= *left) n = (int)*left - 1;
    *o += n;
    *left -= (size_t)n;
}

static void probe_obj(int dfd, const char *p, int flags, char **o, size_t *left) {
    struct stat st;
    if (fstatat(dfd, p, &st, flags) == 0)
        put(o, left, "O:%llu:%llu", (unsigned long long)st.st_dev, (unsigned long long)st.st_ino);
    else
        put(o, left, "X:%d", errno);
}

/* Splits like the library's resolver: trailing slashes dropped, the last
 * name apart. Returns 0 when there is no name ("/", "//"). */
static int split(const char *p, char *parent, char *name) {
    size_t n = strlen(p);
    while (n > 0 && p[n - 1] == '/') n--;
    if (n == 0) return 0;
    size_t i = n;
    while (i > 0 && p[i - 1] != '/') i--;
    memcpy(name, p + i, n - i);
    name[n - i] = 0;
    if (i == 0) {
        strcpy(parent, ".");
    } else {
        size_t j = i;
        while (j > 0 && p[j - 1] == '/') j--;
        if (j == 0) {
            strcpy(parent, "/");
        } else {
            memcpy(parent, p, j);
            parent[j] = 0;
        }
    }
    return 1;
}

static void probe_entry(int dfd, const char *p, char **o, size_t *left) {
    char parent[4096], name[4096];
    if (*p == 0) {
        put(o, left, "X:%d", ENOENT);
        return;
    }
    if (!split(p, parent, name) || strcmp(name, ".") == 0 || strcmp(name, "..") == 0) {
        probe_obj(dfd, p, 0, o, left);
        return;
    }
    struct stat st;
    int pfd = openat(dfd, parent, O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (pfd < 0 || fstat(pfd, &st) != 0) {
        put(o, left, "X:%d", errno);
        if (pfd >= 0) close(pfd);
        return;
    }
    close(pfd);
    put(o, left, "E:%llu:%llu:%s", (unsigned long long)st.st_dev, (unsigned long long)st.st_ino, name);
}

/* Followed: the object; a missing one is judged by the entry that would be
 * created, through a dangling final symlink (as O_CREAT follows it). */
static void probe_follow(int dfd, const char *p, int depth, char **o, size_t *left) {
    struct stat st;
    if (*p == 0) {
        put(o, left, "X:%d", ENOENT);
        return;
    }
    if (fstatat(dfd, p, &st, 0) == 0) {
        put(o, left, "O:%llu:%llu", (unsigned long long)st.st_dev, (unsigned long long)st.st_ino);
        return;
    }
    if (errno != ENOENT) {
        put(o, left, "X:%d", errno);
        return;
    }
    char parent[4096], name[4096];
    size_t n = strlen(p);
    if (p[n - 1] != '/' && depth < 40 && fstatat(dfd, p, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
        S_ISLNK(st.st_mode) && split(p, parent, name)) {
        char target[4096];
        ssize_t t = readlinkat(dfd, p, target, sizeof target - 1);
        int pfd = openat(dfd, parent, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (t > 0 && pfd >= 0) {
            target[t] = 0;
            probe_follow(pfd, target, depth + 1, o, left);
            close(pfd);
            return;
        }
        if (pfd >= 0) close(pfd);
    }
    probe_entry(dfd, p, o, left);
}

/* kind: F followed, E entry, N not followed (a trailing slash follows),
 * D the dirfd itself. */
static void probe(int dfd, const char *p, char kind, char **o, size_t *left) {
    size_t n = strlen(p);
    if (kind == 'N') kind = (n > 0 && p[n - 1] == '/') ? 'F' : 'E';
    switch (kind) {
    case 'F': probe_follow(dfd, p, 0, o, left); break;
    case 'E': probe_entry(dfd, p, o, left); break;
    case 'D': probe_obj(dfd, "", AT_EMPTY_PATH, o, left); break;
    }
}

static char open_kind(int fl) {
    if ((fl & O_CREAT) && (fl & O_EXCL)) return 'E';
    if (fl & O_NOFOLLOW) return 'N';
    return 'F';
}

static char at_kind(int fl, const char *p) {
    if ((fl & AT_EMPTY_PATH) && *p == 0) return 'D';
    return (fl & AT_SYMLINK_NOFOLLOW) ? 'N' : 'F';
}

/* ---- dirfds ---- */

static int open_dirfd(const char *spec, char *out, size_t cap) {
    if (strcmp(spec, "-") == 0) {
        snprintf(out, cap, "-");
        return AT_FDCWD;
    }
    int how = spec[0] == 'R' ? O_RDONLY : O_PATH;
    const char *p = arg(spec + 2);
    errno = 0;
    int fd = open(p, how | O_DIRECTORY | O_CLOEXEC);
    int e = fd < 0 ? errno : 0;
    int r = fd;
    if (fd < 0 && how == O_RDONLY && e == EACCES) fd = open(p, O_PATH | O_DIRECTORY | O_CLOEXEC);
    struct stat st;
    int n;
    if (fd >= 0 && fstat(fd, &st) == 0)
        n = snprintf(out, cap, "%d:%d:%llu:%llu", r < 0 ? -1 : 0, e, (unsigned long long)st.st_dev,
                     (unsigned long long)st.st_ino);
    else
        n = snprintf(out, cap, "%d:%d:-:-", r < 0 ? -1 : 0, e);
    if (bare && n > 0 && (size_t)n < cap) {
        /* Where the kernel resolves the directory's path. */
        char *o = out + n;
        size_t left = cap - (size_t)n;
        put(&o, &left, "|");
        probe(AT_FDCWD, p, 'F', &o, &left);
    }
    return fd;
}

int main(int argc, char **argv) {
    bare = argc > 1 && strcmp(argv[1], "bare") == 0;
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    while ((len = getline(&line, &cap, stdin)) > 0) {
        if (line[len - 1] == '\n') line[--len] = 0;
        char *tok[MAXTOK];
        int nt = 0;
        for (char *s = strtok(line, " "); s && nt < MAXTOK; s = strtok(NULL, " ")) tok[nt++] = s;
        if (nt < 5) {
            printf("? bad case line\n");
            fflush(stdout);
            continue;
        }
        const char *id = tok[0], *call = tok[4];
        const char *A = nt > 5 ? arg(tok[5]) : "", *B = nt > 6 ? arg(tok[6]) : "",
                   *C = nt > 7 ? tok[7] : "-";
        fprintf(stderr, "@@case %s\n", id);
        fflush(stderr);
        char d1s[256], d2s[256];
        if (chdir(tok[1]) != 0) {
            printf("%s chdir-failed %d\n", id, errno);
            fflush(stdout);
            fprintf(stderr, "@@end %s\n", id);
            continue;
        }
        int d1 = open_dirfd(tok[2], d1s, sizeof d1s);
        int d2 = open_dirfd(tok[3], d2s, sizeof d2s);

        fprintf(stderr, "@@call %s\n", id);
        fflush(stderr);
        char probes[8192], *o = probes;
        size_t left = sizeof probes;
        int fl;
        if (!bare) {
            put(&o, &left, "-");
        } else if (!strcmp(call, "open")) {
            probe(AT_FDCWD, A, open_kind(oflags(B)), &o, &left);
        } else if (!strcmp(call, "openat")) {
            probe(d1, A, open_kind(oflags(B)), &o, &left);
        } else if (!strcmp(call, "creat") || !strcmp(call, "chmod") || !strcmp(call, "truncate") ||
                   !strcmp(call, "opendir")) {
            probe(AT_FDCWD, A, 'F', &o, &left);
        } else if (!strcmp(call, "fopen")) {
            probe(AT_FDCWD, A, strchr(B, 'x') ? 'E' : 'F', &o, &left);
        } else if (!strcmp(call, "unlink") || !strcmp(call, "rmdir") || !strcmp(call, "mkdir")) {
            probe(AT_FDCWD, A, 'E', &o, &left);
        } else if (!strcmp(call, "unlinkat") || !strcmp(call, "mkdirat")) {
            probe(d1, A, 'E', &o, &left);
        } else if (!strcmp(call, "rename") || !strcmp(call, "link")) {
            probe(AT_FDCWD, A, 'E', &o, &left);
            put(&o, &left, ";");
            probe(AT_FDCWD, B, 'E', &o, &left);
        } else if (!strcmp(call, "renameat")) {
            probe(d1, A, 'E', &o, &left);
            put(&o, &left, ";");
            probe(d2, B, 'E', &o, &left);
        } else if (!strcmp(call, "linkat")) {
            fl = aflags(C);
            probe(d1, A, (fl & AT_EMPTY_PATH) && !*A ? 'D' : (fl & AT_SYMLINK_FOLLOW) ? 'F' : 'E', &o, &left);
            put(&o, &left, ";");
            probe(d2, B, 'E', &o, &left);
        } else if (!strcmp(call, "symlink")) {
            probe(AT_FDCWD, B, 'E', &o, &left);
        } else if (!strcmp(call, "symlinkat")) {
            probe(d1, B, 'E', &o, &left);
        } else if (!strcmp(call, "fchmodat") || !strcmp(call, "utimensat")) {
            probe(d1, A, at_kind(aflags(B), A), &o, &left);
        } else {
            put(&o, &left, "?");
        }
        long ret = -1;
        int fd = -1;
        FILE *f = NULL;
        DIR *dir = NULL;
        struct timespec ts[2] = {{MAGIC_TIME, 0}, {MAGIC_TIME, 0}};
        errno = 0;
        if (!strcmp(call, "open")) ret = fd = open(A, oflags(B), 0644);
        else if (!strcmp(call, "openat")) ret = fd = openat(d1, A, oflags(B), 0644);
        else if (!strcmp(call, "creat")) ret = fd = creat(A, 0644);
        else if (!strcmp(call, "fopen")) {
            f = fopen(A, B);
            ret = f ? 0 : -1;
            if (f) fd = fileno(f);
        } else if (!strcmp(call, "opendir")) {
            dir = opendir(A);
            ret = dir ? 0 : -1;
            if (dir) fd = dirfd(dir);
        } else if (!strcmp(call, "unlink")) ret = unlink(A);
        else if (!strcmp(call, "unlinkat")) ret = unlinkat(d1, A, aflags(B));
        else if (!strcmp(call, "rmdir")) ret = rmdir(A);
        else if (!strcmp(call, "mkdir")) ret = mkdir(A, 0755);
        else if (!strcmp(call, "mkdirat")) ret = mkdirat(d1, A, 0755);
        else if (!strcmp(call, "rename")) ret = rename(A, B);
        else if (!strcmp(call, "renameat")) ret = renameat(d1, A, d2, B);
        else if (!strcmp(call, "symlink")) ret = symlink(A, B);
        else if (!strcmp(call, "symlinkat")) ret = symlinkat(A, d1, B);
        else if (!strcmp(call, "link")) ret = link(A, B);
        else if (!strcmp(call, "linkat")) ret = linkat(d1, A, d2, B, aflags(C));
        else if (!strcmp(call, "chmod")) ret = chmod(A, 0700);
        else if (!strcmp(call, "fchmodat")) ret = fchmodat(d1, A, 0700, aflags(B));
        else if (!strcmp(call, "truncate")) ret = truncate(A, 1);
        else if (!strcmp(call, "utimensat")) ret = utimensat(d1, A, ts, aflags(B));
        else errno = ENOSYS;
        int e = ret < 0 ? errno : 0;
        char obj[64] = "-";
        struct stat st;
        if (fd >= 0 && fstat(fd, &st) == 0)
            snprintf(obj, sizeof obj, "%llu:%llu", (unsigned long long)st.st_dev, (unsigned long long)st.st_ino);
        /* A descriptor that only names its object (O_PATH). */
        int path_only = fd >= 0 && (fcntl(fd, F_GETFL) & O_PATH) != 0;
        if (f) fclose(f);
        else if (dir) closedir(dir);
        else if (fd >= 0) close(fd);
        if (d1 >= 0) close(d1);
        if (d2 >= 0) close(d2);
        printf("%s d1=%s d2=%s ret=%ld errno=%d obj=%s probes=%s path_only=%d\n", id, d1s, d2s,
               ret < 0 ? -1L : ret > 0 ? 1L : 0L, e, obj, probes, path_only);
        fflush(stdout);
        fprintf(stderr, "@@end %s\n", id);
        fflush(stderr);
    }
    return 0;
}
