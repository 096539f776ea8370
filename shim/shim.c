/* Variadic libc entry points. C reads the optional arguments the way the
 * caller passed them, then hands fixed arguments to the Rust hooks. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdarg.h>
#include <sys/types.h>

int fsguard_open(const char *path, int flags, mode_t mode);
int fsguard_open64(const char *path, int flags, mode_t mode);
int fsguard_openat(int dirfd, const char *path, int flags, mode_t mode);
int fsguard_openat64(int dirfd, const char *path, int flags, mode_t mode);

/* The mode argument exists only with O_CREAT or O_TMPFILE. */
#define NEEDS_MODE(flags) (((flags) & O_CREAT) || ((flags) & O_TMPFILE) == O_TMPFILE)
#define READ_MODE(last, flags, mode)                                           \
    do {                                                                       \
        if (NEEDS_MODE(flags)) {                                               \
            va_list ap;                                                        \
            va_start(ap, last);                                                \
            mode = (mode_t)va_arg(ap, int);                                    \
            va_end(ap);                                                        \
        }                                                                      \
    } while (0)

int open(const char *path, int flags, ...) {
    mode_t mode = 0;
    READ_MODE(flags, flags, mode);
    return fsguard_open(path, flags, mode);
}

int open64(const char *path, int flags, ...) {
    mode_t mode = 0;
    READ_MODE(flags, flags, mode);
    return fsguard_open64(path, flags, mode);
}

int openat(int dirfd, const char *path, int flags, ...) {
    mode_t mode = 0;
    READ_MODE(flags, flags, mode);
    return fsguard_openat(dirfd, path, flags, mode);
}

int openat64(int dirfd, const char *path, int flags, ...) {
    mode_t mode = 0;
    READ_MODE(flags, flags, mode);
    return fsguard_openat64(dirfd, path, flags, mode);
}

/* execl, execle, execlp: the argument list collected into an array (on the
 * stack: these may run in a vfork child), then the Rust exec hooks. */
#include <dlfcn.h>
#include <errno.h>
#include <stddef.h>

extern char **environ;
int fsguard_execve(const char *path, char *const argv[], char *const envp[]);
int fsguard_execvpe(const char *file, char *const argv[], char *const envp[]);
int fsguard_dlopen_check(const char *name);

/* Counts the arguments after `arg` up to the terminating NULL. */
#define COUNT_ARGS(arg, n)                                                     \
    do {                                                                       \
        va_list ap;                                                            \
        va_start(ap, arg);                                                     \
        n = 1;                                                                 \
        while (va_arg(ap, const char *) != NULL)                               \
            n++;                                                               \
        va_end(ap);                                                            \
    } while (0)

int execl(const char *path, const char *arg, ...) {
    size_t n;
    COUNT_ARGS(arg, n);
    const char *argv[n + 1];
    va_list ap;
    va_start(ap, arg);
    argv[0] = arg;
    for (size_t i = 1; i <= n; i++)
        argv[i] = va_arg(ap, const char *);
    va_end(ap);
    return fsguard_execve(path, (char *const *)argv, environ);
}

int execlp(const char *file, const char *arg, ...) {
    size_t n;
    COUNT_ARGS(arg, n);
    const char *argv[n + 1];
    va_list ap;
    va_start(ap, arg);
    argv[0] = arg;
    for (size_t i = 1; i <= n; i++)
        argv[i] = va_arg(ap, const char *);
    va_end(ap);
    return fsguard_execvpe(file, (char *const *)argv, environ);
}

/* execle: the environment follows the NULL that ends the arguments. */
int execle(const char *path, const char *arg, ...) {
    size_t n;
    COUNT_ARGS(arg, n);
    const char *argv[n + 1];
    va_list ap;
    va_start(ap, arg);
    argv[0] = arg;
    for (size_t i = 1; i <= n; i++)
        argv[i] = va_arg(ap, const char *);
    char *const *envp = va_arg(ap, char *const *);
    va_end(ap);
    return fsguard_execve(path, (char *const *)argv, envp);
}

/* dlopen: checked, then a tail call to the real dlopen, which finds its
 * caller by return address (for RUNPATH and $ORIGIN); a tail call keeps that
 * address the program's own. */
typedef void *(*dlopen_fn)(const char *, int);

void *dlopen(const char *name, int flags) {
    static dlopen_fn real;
    dlopen_fn f = __atomic_load_n(&real, __ATOMIC_RELAXED);
    if (!f) {
        f = (dlopen_fn)dlsym(RTLD_NEXT, "dlopen");
        __atomic_store_n(&real, f, __ATOMIC_RELAXED);
    }
    int e = fsguard_dlopen_check(name);
    if (e != 0) {
        errno = e;
        return NULL;
    }
    if (!f)
        return NULL;
    return f(name, flags);
}

long fsguard_syscall(long nr, long a, long b, long c, long d, long e, long f);

/* syscall(2): six arguments are read whatever the call takes, as glibc's
 * own syscall() does; the Rust side checks the ones that name paths. */
long syscall(long nr, ...) {
    va_list ap;
    va_start(ap, nr);
    long a = va_arg(ap, long), b = va_arg(ap, long), c = va_arg(ap, long);
    long d = va_arg(ap, long), e = va_arg(ap, long), f = va_arg(ap, long);
    va_end(ap);
    return fsguard_syscall(nr, a, b, c, d, e, f);
}
