/* Darwin's variadic entry points: C reads the optional mode the way the
 * caller passed it (on arm64 Darwin a variadic argument travels on the
 * stack, not in a register, so a fixed-argument Rust hook cannot stand in
 * for `open`), then hands fixed arguments to the Rust hooks.
 *
 * dyld rewires a call through the (replacement, original) pairs of the
 * `__DATA,__interpose` section below; the Rust rows' pairs come from the
 * `hooks!` macro (src/entry.rs), which leaves these symbols to this file.
 *
 * Only compiler-provided headers: the prototypes and the one constant used
 * are Darwin's, spelled out, so the file is checked without a macOS SDK
 * (`clang -target x86_64-apple-darwin -fsyntax-only`). No `fcntl`: its
 * third argument is an int or a pointer by command, and no hook needs it.
 * Also the exec family's variadic `execl`, `execle` and `execlp`.
 *
 * Also here: the pairs of calls newer than the oldest macOS supported,
 * whose originals must be imported weakly (Rust cannot). */
#include <stdarg.h>
#include <stddef.h>

/* Darwin's mode_t (sys/_types/_mode_t.h), dev_t (sys/_types.h), O_CREAT
 * (sys/fcntl.h) and ENOSYS (sys/errno.h). */
typedef unsigned short darwin_mode_t;
typedef int darwin_dev_t;
#define DARWIN_O_CREAT 0x00000200
#define DARWIN_ENOSYS 78

/* errno's location (sys/errno.h). */
int *__error(void);

/* The originals: libSystem's, as <fcntl.h> declares them, and the forms
 * that are not cancellation points (`$NOCANCEL`, which sys/cdefs.h's
 * __DARWIN_NOCANCEL selects; libsystem_kernel exports both on x86_64 and
 * arm64, src/darwin_variants.txt). */
int open(const char *path, int flags, ...);
int openat(int dirfd, const char *path, int flags, ...);
int open_nocancel(const char *path, int flags, ...) __asm("_open$NOCANCEL");
int openat_nocancel(int dirfd, const char *path, int flags, ...) __asm("_openat$NOCANCEL");
int execl(const char *path, const char *arg0, ...);
int execle(const char *path, const char *arg0, ...);
int execlp(const char *file, const char *arg0, ...);
/* <crt_externs.h>: a library has no `environ` of its own (environ(7)). */
char ***_NSGetEnviron(void);
int open_dprotected_np(const char *path, int flags, int dpclass, int dpflags, ...);

/* The Rust hooks (src/hooks.rs, src/hooks_more/darwin.rs), exported under their Darwin names; the
 * `$NOCANCEL` ones are the rows again with that original (src/entry.rs). */
int fsguard_hook_open(const char *path, int flags, darwin_mode_t mode);
int fsguard_hook_openat(int dirfd, const char *path, int flags, darwin_mode_t mode);
int fsguard_hook_open_dprotected_np(const char *path, int flags, int dpclass, int dpflags,
                                    darwin_mode_t mode);
int fsguard_hook_open_nocancel(const char *path, int flags, darwin_mode_t mode) __asm(
    "_fsguard_hook_open$NOCANCEL");
int fsguard_hook_openat_nocancel(int dirfd, const char *path, int flags, darwin_mode_t mode) __asm(
    "_fsguard_hook_openat$NOCANCEL");
/* src/exec/mod.rs: the exec rows with the arguments collected. */
int fsguard_hook_execl(const char *path, char *const argv[], char *const envp[]);
int fsguard_hook_execle(const char *path, char *const argv[], char *const envp[]);
int fsguard_hook_execlp(const char *file, char *const argv[], char *const envp[]);

/* The mode argument exists only with O_CREAT (Darwin has no O_TMPFILE). */
#define READ_MODE(last, flags, mode)                                           \
    do {                                                                       \
        if ((flags) & DARWIN_O_CREAT) {                                        \
            va_list ap;                                                        \
            va_start(ap, last);                                                \
            mode = (darwin_mode_t)va_arg(ap, int);                             \
            va_end(ap);                                                        \
        }                                                                      \
    } while (0)

static int shim_open(const char *path, int flags, ...) {
    darwin_mode_t mode = 0;
    READ_MODE(flags, flags, mode);
    return fsguard_hook_open(path, flags, mode);
}

static int shim_openat(int dirfd, const char *path, int flags, ...) {
    darwin_mode_t mode = 0;
    READ_MODE(flags, flags, mode);
    return fsguard_hook_openat(dirfd, path, flags, mode);
}

static int shim_open_nocancel(const char *path, int flags, ...) {
    darwin_mode_t mode = 0;
    READ_MODE(flags, flags, mode);
    return fsguard_hook_open_nocancel(path, flags, mode);
}

static int shim_openat_nocancel(int dirfd, const char *path, int flags, ...) {
    darwin_mode_t mode = 0;
    READ_MODE(flags, flags, mode);
    return fsguard_hook_openat_nocancel(dirfd, path, flags, mode);
}

/* execl, execle, execlp: the argument list (up to its NULL) collected into
 * an array on the stack (these may run in a vfork child), then the Rust
 * exec rows. execle's environment follows the NULL. */
#define COUNT_ARGS(arg0, n)                                                    \
    do {                                                                       \
        va_list ap;                                                            \
        va_start(ap, arg0);                                                    \
        n = 1;                                                                 \
        while (va_arg(ap, const char *) != NULL)                               \
            n++;                                                               \
        va_end(ap);                                                            \
    } while (0)

#define COLLECT_ARGS(arg0, argv, n, ap)                                        \
    do {                                                                       \
        argv[0] = arg0;                                                        \
        for (size_t i = 1; i <= n; i++)                                        \
            argv[i] = va_arg(ap, const char *);                                \
    } while (0)

/* One exec of a list: `hook` with the arguments as an array and execle's
 * environment (after the NULL) or the process's own. */
#define EXEC_LIST(hook, file, arg0, with_envp)                                 \
    do {                                                                       \
        size_t n;                                                              \
        COUNT_ARGS(arg0, n);                                                   \
        const char *argv[n + 1];                                               \
        va_list ap;                                                            \
        va_start(ap, arg0);                                                    \
        COLLECT_ARGS(arg0, argv, n, ap);                                       \
        char *const *envp = (with_envp) ? va_arg(ap, char *const *)            \
                                        : *_NSGetEnviron();                    \
        va_end(ap);                                                            \
        return hook(file, (char *const *)argv, envp);                          \
    } while (0)

static int shim_execl(const char *path, const char *arg0, ...) {
    EXEC_LIST(fsguard_hook_execl, path, arg0, 0);
}

static int shim_execlp(const char *file, const char *arg0, ...) {
    EXEC_LIST(fsguard_hook_execlp, file, arg0, 0);
}

static int shim_execle(const char *path, const char *arg0, ...) {
    EXEC_LIST(fsguard_hook_execle, path, arg0, 1);
}

static int shim_open_dprotected_np(const char *path, int flags, int dpclass, int dpflags, ...) {
    darwin_mode_t mode = 0;
    READ_MODE(dpflags, flags, mode);
    return fsguard_hook_open_dprotected_np(path, flags, dpclass, dpflags, mode);
}

/* mknodat and mkfifoat exist from macOS 13 on (sys/stat.h): imported
 * weakly, so the library loads on older systems, where the address is NULL
 * and no program can call them. Their Rust rows check, then call these. */
int mknodat(int dirfd, const char *path, darwin_mode_t mode, darwin_dev_t dev)
    __attribute__((weak_import));
int mkfifoat(int dirfd, const char *path, darwin_mode_t mode) __attribute__((weak_import));
int fsguard_hook_mknodat(int dirfd, const char *path, darwin_mode_t mode, darwin_dev_t dev);
int fsguard_hook_mkfifoat(int dirfd, const char *path, darwin_mode_t mode);

int fsguard_weak_mknodat(int dirfd, const char *path, darwin_mode_t mode, darwin_dev_t dev) {
    if (mknodat == 0) {
        *__error() = DARWIN_ENOSYS;
        return -1;
    }
    return mknodat(dirfd, path, mode, dev);
}

int fsguard_weak_mkfifoat(int dirfd, const char *path, darwin_mode_t mode) {
    if (mkfifoat == 0) {
        *__error() = DARWIN_ENOSYS;
        return -1;
    }
    return mkfifoat(dirfd, path, mode);
}

/* One pair per entry point: what dyld calls instead, and what it replaces. */
struct interpose {
    const void *replacement;
    const void *original;
};

__attribute__((used, section("__DATA,__interpose"))) static const struct interpose
    interposed[] = {
        {(const void *)&shim_open, (const void *)&open},
        {(const void *)&shim_openat, (const void *)&openat},
        {(const void *)&shim_open_nocancel, (const void *)&open_nocancel},
        {(const void *)&shim_openat_nocancel, (const void *)&openat_nocancel},
        {(const void *)&shim_execl, (const void *)&execl},
        {(const void *)&shim_execle, (const void *)&execle},
        {(const void *)&shim_execlp, (const void *)&execlp},
        {(const void *)&shim_open_dprotected_np, (const void *)&open_dprotected_np},
        {(const void *)&fsguard_hook_mknodat, (const void *)&mknodat},
        {(const void *)&fsguard_hook_mkfifoat, (const void *)&mkfifoat},
};
