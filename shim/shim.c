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
