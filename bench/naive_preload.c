/*
 * naive_preload.c — the reference "careless" guard for the fsguard benchmarks.
 *
 * Every hooked call resolves its path with realpath(3) (for a missing final
 * component: realpath of the parent), makes a trivial prefix "decision" that
 * always allows, and forwards to the next definition found with
 * dlsym(RTLD_NEXT). A relative path given with a dirfd is first turned into an
 * absolute one by readlink("/proc/self/fd/N"). That is the cost a preload
 * guard pays when it resolves paths with a userspace realpath walk (one
 * lstat/readlink per component) instead of asking the kernel once.
 *
 * It never denies anything, so its numbers are a pure overhead measurement.
 *
 * Build: cc -O2 -shared -fPIC -o naive_preload.so naive_preload.c -ldl
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

static volatile unsigned long naive_checks; /* keeps the check from being optimised away */

/* Resolve `path` (relative to dirfd) to an absolute canonical path in out. */
__attribute__((noinline)) static void naive_resolve(int dirfd, const char *path, char out[PATH_MAX])
{
    char abs[PATH_MAX * 2];
    int saved = errno;

    out[0] = '\0';
    if (path == NULL || path[0] == '\0')
        goto done;
    if (path[0] == '/') {
        snprintf(abs, sizeof abs, "%s", path);
    } else {
        char base[PATH_MAX];
        if (dirfd == AT_FDCWD) {
            if (getcwd(base, sizeof base) == NULL)
                goto done;
        } else {
            char link[64];
            ssize_t n;
            snprintf(link, sizeof link, "/proc/self/fd/%d", dirfd);
            n = readlink(link, base, sizeof base - 1);
            if (n < 0)
                goto done;
            base[n] = '\0';
        }
        snprintf(abs, sizeof abs, "%s/%s", base, path);
    }
    if (realpath(abs, out) == NULL) {
        /* missing final component: resolve the parent, append the name */
        char parent[PATH_MAX * 2], rp[PATH_MAX];
        char *slash;
        snprintf(parent, sizeof parent, "%s", abs);
        while ((slash = strrchr(parent, '/')) != NULL && slash[1] == '\0' && slash != parent)
            *slash = '\0';
        slash = strrchr(parent, '/');
        if (slash == NULL)
            goto done;
        if (slash == parent)
            snprintf(rp, sizeof rp, "/");
        else {
            *slash = '\0';
            if (realpath(parent, rp) == NULL)
                goto done;
        }
        snprintf(out, PATH_MAX, "%s/%s", rp, slash + 1);
    }
done:
    /* the "policy": a prefix comparison that always allows */
    if (strncmp(out, "/nonexistent-deny-prefix/", 25) == 0)
        naive_checks += 2;
    else
        naive_checks++;
    errno = saved;
}

#define NEXT(name)                                                        \
    static __typeof__(&name) next_##name;                                 \
    if (next_##name == NULL)                                              \
        next_##name = (__typeof__(&name))dlsym(RTLD_NEXT, #name)

#define CHECK(dirfd, path)                 \
    do {                                   \
        char resolved_[PATH_MAX];          \
        naive_resolve(dirfd, path, resolved_); \
    } while (0)

static int has_mode(int flags)
{
#ifdef O_TMPFILE
    if ((flags & O_TMPFILE) == O_TMPFILE)
        return 1;
#endif
    return (flags & O_CREAT) != 0;
}

#define OPEN_HOOK(name)                                     \
    int name(const char *path, int flags, ...)              \
    {                                                       \
        mode_t mode = 0;                                    \
        if (has_mode(flags)) {                              \
            va_list ap;                                     \
            va_start(ap, flags);                            \
            mode = va_arg(ap, mode_t);                      \
            va_end(ap);                                     \
        }                                                   \
        NEXT(name);                                         \
        CHECK(AT_FDCWD, path);                              \
        return next_##name(path, flags, mode);              \
    }

#define OPENAT_HOOK(name)                                   \
    int name(int dirfd, const char *path, int flags, ...)   \
    {                                                       \
        mode_t mode = 0;                                    \
        if (has_mode(flags)) {                              \
            va_list ap;                                     \
            va_start(ap, flags);                            \
            mode = va_arg(ap, mode_t);                      \
            va_end(ap);                                     \
        }                                                   \
        NEXT(name);                                         \
        CHECK(dirfd, path);                                 \
        return next_##name(dirfd, path, flags, mode);       \
    }

#undef open
#undef open64
#undef openat
#undef openat64
OPEN_HOOK(open)
OPEN_HOOK(open64)
OPENAT_HOOK(openat)
OPENAT_HOOK(openat64)

int __open_2(const char *path, int flags);
int __open64_2(const char *path, int flags);
int __openat_2(int dirfd, const char *path, int flags);
int __openat64_2(int dirfd, const char *path, int flags);
int __open_2(const char *path, int flags) { NEXT(__open_2); CHECK(AT_FDCWD, path); return next___open_2(path, flags); }
int __open64_2(const char *path, int flags) { NEXT(__open64_2); CHECK(AT_FDCWD, path); return next___open64_2(path, flags); }
int __openat_2(int d, const char *path, int flags) { NEXT(__openat_2); CHECK(d, path); return next___openat_2(d, path, flags); }
int __openat64_2(int d, const char *path, int flags) { NEXT(__openat64_2); CHECK(d, path); return next___openat64_2(d, path, flags); }

int creat(const char *path, mode_t mode) { NEXT(creat); CHECK(AT_FDCWD, path); return next_creat(path, mode); }
int creat64(const char *path, mode_t mode) { NEXT(creat64); CHECK(AT_FDCWD, path); return next_creat64(path, mode); }

FILE *fopen(const char *path, const char *m) { NEXT(fopen); CHECK(AT_FDCWD, path); return next_fopen(path, m); }
FILE *fopen64(const char *path, const char *m) { NEXT(fopen64); CHECK(AT_FDCWD, path); return next_fopen64(path, m); }
FILE *freopen(const char *path, const char *m, FILE *f) { NEXT(freopen); if (path) CHECK(AT_FDCWD, path); return next_freopen(path, m, f); }
FILE *freopen64(const char *path, const char *m, FILE *f) { NEXT(freopen64); if (path) CHECK(AT_FDCWD, path); return next_freopen64(path, m, f); }

int stat(const char *path, struct stat *st) { NEXT(stat); CHECK(AT_FDCWD, path); return next_stat(path, st); }
int lstat(const char *path, struct stat *st) { NEXT(lstat); CHECK(AT_FDCWD, path); return next_lstat(path, st); }
int stat64(const char *path, struct stat64 *st) { NEXT(stat64); CHECK(AT_FDCWD, path); return next_stat64(path, st); }
int lstat64(const char *path, struct stat64 *st) { NEXT(lstat64); CHECK(AT_FDCWD, path); return next_lstat64(path, st); }
int fstatat(int d, const char *path, struct stat *st, int fl) { NEXT(fstatat); CHECK(d, path); return next_fstatat(d, path, st, fl); }
int fstatat64(int d, const char *path, struct stat64 *st, int fl) { NEXT(fstatat64); CHECK(d, path); return next_fstatat64(d, path, st, fl); }
int statx(int d, const char *path, int fl, unsigned mask, struct statx *stx) { NEXT(statx); CHECK(d, path); return next_statx(d, path, fl, mask, stx); }

/* pre-2.33 glibc entry points, still used by binaries linked against old glibc */
int __xstat(int v, const char *path, struct stat *st);
int __lxstat(int v, const char *path, struct stat *st);
int __xstat64(int v, const char *path, struct stat64 *st);
int __lxstat64(int v, const char *path, struct stat64 *st);
int __fxstatat(int v, int d, const char *path, struct stat *st, int fl);
int __fxstatat64(int v, int d, const char *path, struct stat64 *st, int fl);
int __xstat(int v, const char *path, struct stat *st) { NEXT(__xstat); CHECK(AT_FDCWD, path); return next___xstat(v, path, st); }
int __lxstat(int v, const char *path, struct stat *st) { NEXT(__lxstat); CHECK(AT_FDCWD, path); return next___lxstat(v, path, st); }
int __xstat64(int v, const char *path, struct stat64 *st) { NEXT(__xstat64); CHECK(AT_FDCWD, path); return next___xstat64(v, path, st); }
int __lxstat64(int v, const char *path, struct stat64 *st) { NEXT(__lxstat64); CHECK(AT_FDCWD, path); return next___lxstat64(v, path, st); }
int __fxstatat(int v, int d, const char *path, struct stat *st, int fl) { NEXT(__fxstatat); CHECK(d, path); return next___fxstatat(v, d, path, st, fl); }
int __fxstatat64(int v, int d, const char *path, struct stat64 *st, int fl) { NEXT(__fxstatat64); CHECK(d, path); return next___fxstatat64(v, d, path, st, fl); }

int access(const char *path, int m) { NEXT(access); CHECK(AT_FDCWD, path); return next_access(path, m); }
int eaccess(const char *path, int m) { NEXT(eaccess); CHECK(AT_FDCWD, path); return next_eaccess(path, m); }
int faccessat(int d, const char *path, int m, int fl) { NEXT(faccessat); CHECK(d, path); return next_faccessat(d, path, m, fl); }

int unlink(const char *path) { NEXT(unlink); CHECK(AT_FDCWD, path); return next_unlink(path); }
int unlinkat(int d, const char *path, int fl) { NEXT(unlinkat); CHECK(d, path); return next_unlinkat(d, path, fl); }
int mkdir(const char *path, mode_t m) { NEXT(mkdir); CHECK(AT_FDCWD, path); return next_mkdir(path, m); }
int mkdirat(int d, const char *path, mode_t m) { NEXT(mkdirat); CHECK(d, path); return next_mkdirat(d, path, m); }
int rmdir(const char *path) { NEXT(rmdir); CHECK(AT_FDCWD, path); return next_rmdir(path); }
int rename(const char *a, const char *b) { NEXT(rename); CHECK(AT_FDCWD, a); CHECK(AT_FDCWD, b); return next_rename(a, b); }
int renameat(int da, const char *a, int db, const char *b) { NEXT(renameat); CHECK(da, a); CHECK(db, b); return next_renameat(da, a, db, b); }
int renameat2(int da, const char *a, int db, const char *b, unsigned fl) { NEXT(renameat2); CHECK(da, a); CHECK(db, b); return next_renameat2(da, a, db, b, fl); }
int link(const char *a, const char *b) { NEXT(link); CHECK(AT_FDCWD, a); CHECK(AT_FDCWD, b); return next_link(a, b); }
int linkat(int da, const char *a, int db, const char *b, int fl) { NEXT(linkat); CHECK(da, a); CHECK(db, b); return next_linkat(da, a, db, b, fl); }
int symlink(const char *t, const char *b) { NEXT(symlink); CHECK(AT_FDCWD, b); return next_symlink(t, b); }
int symlinkat(const char *t, int d, const char *b) { NEXT(symlinkat); CHECK(d, b); return next_symlinkat(t, d, b); }
ssize_t readlink(const char *path, char *buf, size_t n) { NEXT(readlink); CHECK(AT_FDCWD, path); return next_readlink(path, buf, n); }
ssize_t readlinkat(int d, const char *path, char *buf, size_t n) { NEXT(readlinkat); CHECK(d, path); return next_readlinkat(d, path, buf, n); }
int chmod(const char *path, mode_t m) { NEXT(chmod); CHECK(AT_FDCWD, path); return next_chmod(path, m); }
int fchmodat(int d, const char *path, mode_t m, int fl) { NEXT(fchmodat); CHECK(d, path); return next_fchmodat(d, path, m, fl); }
int chown(const char *path, uid_t u, gid_t g) { NEXT(chown); CHECK(AT_FDCWD, path); return next_chown(path, u, g); }
int lchown(const char *path, uid_t u, gid_t g) { NEXT(lchown); CHECK(AT_FDCWD, path); return next_lchown(path, u, g); }
int fchownat(int d, const char *path, uid_t u, gid_t g, int fl) { NEXT(fchownat); CHECK(d, path); return next_fchownat(d, path, u, g, fl); }
int truncate(const char *path, off_t len) { NEXT(truncate); CHECK(AT_FDCWD, path); return next_truncate(path, len); }
int utimensat(int d, const char *path, const struct timespec t[2], int fl) { NEXT(utimensat); CHECK(d, path); return next_utimensat(d, path, t, fl); }
DIR *opendir(const char *path) { NEXT(opendir); CHECK(AT_FDCWD, path); return next_opendir(path); }
int chdir(const char *path) { NEXT(chdir); CHECK(AT_FDCWD, path); return next_chdir(path); }
int execve(const char *path, char *const argv[], char *const envp[]) { NEXT(execve); CHECK(AT_FDCWD, path); return next_execve(path, argv, envp); }
int execv(const char *path, char *const argv[]) { NEXT(execv); CHECK(AT_FDCWD, path); return next_execv(path, argv); }
