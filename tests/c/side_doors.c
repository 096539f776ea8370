/* The libc side doors around the hooks: glibc's aliases of open, symbol
 * lookups that could hand out libc's own open, a second libc namespace.
 * Usage: side_doors MODE PATH. Each mode tries to create PATH for writing
 * and prints "MODE ok" or "MODE fail ERRNO" (or "MODE refused MSG" when a
 * lookup itself fails). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/gmon.h>
#include <unistd.h>

extern int __open(const char *, int, ...);
extern int __open64(const char *, int, ...);
extern FILE *_IO_fopen(const char *, const char *);
extern void _mcleanup(void);

typedef int (*open_fn)(const char *, int, ...);

static int report(const char *mode, int fd) {
    if (fd >= 0) {
        write(fd, "x", 1);
        printf("%s ok\n", mode);
        return 0;
    }
    printf("%s fail %d\n", mode, errno);
    return 0;
}

static int via(const char *mode, void *f, const char *path) {
    if (!f) {
        printf("%s refused %s\n", mode, dlerror());
        return 0;
    }
    errno = 0;
    return report(mode, ((open_fn)f)(path, O_WRONLY | O_CREAT | O_TRUNC, 0644));
}

static void *libc_handle(void) {
    void *h = dlopen("libc.so.6", RTLD_NOW);
    if (!h)
        fprintf(stderr, "dlopen libc.so.6: %s\n", dlerror());
    return h;
}

int main(int argc, char **argv) {
    if (argc != 3)
        return 2;
    const char *m = argv[1], *p = argv[2];
    const int flags = O_WRONLY | O_CREAT | O_TRUNC;
    errno = 0;
    if (!strcmp(m, "__open"))
        return report(m, __open(p, flags, 0644));
    if (!strcmp(m, "__open64"))
        return report(m, __open64(p, flags, 0644));
    if (!strcmp(m, "__open_nocancel") || !strcmp(m, "__open64_nocancel"))
        return via(m, dlsym(RTLD_DEFAULT, m), p);
    if (!strcmp(m, "_IO_fopen")) {
        FILE *f = _IO_fopen(p, "w");
        return report(m, f ? fileno(f) : -1);
    }
    if (!strcmp(m, "dlsym_libc"))
        return via(m, dlsym(libc_handle(), "open"), p);
    if (!strcmp(m, "dlsym_libc_nocancel"))
        return via(m, dlsym(libc_handle(), "__open_nocancel"), p);
    if (!strcmp(m, "dlsym_next"))
        return via(m, dlsym(RTLD_NEXT, "open"), p);
    if (!strcmp(m, "dlsym_default"))
        return via(m, dlsym(RTLD_DEFAULT, "open"), p);
    if (!strcmp(m, "dlvsym_next"))
        return via(m, dlvsym(RTLD_NEXT, "open", "GLIBC_2.2.5"), p);
    if (!strcmp(m, "dlvsym_libc"))
        return via(m, dlvsym(libc_handle(), "open", "GLIBC_2.2.5"), p);
    if (!strcmp(m, "dlvsym_libc_openat")) {
        typedef int (*openat_fn)(int, const char *, int, ...);
        openat_fn f = (openat_fn)dlvsym(libc_handle(), "openat", "GLIBC_2.4");
        if (!f) {
            printf("%s refused %s\n", m, dlerror());
            return 0;
        }
        return report(m, f(AT_FDCWD, p, flags, 0644));
    }
    if (!strcmp(m, "dlsym_dlsym")) {
        /* The real dlsym, looked up through dlsym, then asked for open. */
        void *(*f)(void *, const char *) = (void *(*)(void *, const char *))dlsym(libc_handle(), "dlsym");
        return via(m, f(libc_handle(), "open"), p);
    }
    if (!strcmp(m, "dlmopen")) {
        void *h = dlmopen(LM_ID_NEWLM, "libc.so.6", RTLD_NOW);
        if (!h) {
            const char *e = dlerror();
            printf("%s refused %s\n", m, e ? e : "(no dlerror)");
            return 0;
        }
        return via(m, dlsym(h, "open"), p);
    }
    if (!strcmp(m, "mcleanup")) {
        /* gmon.out, or $GMON_OUT_PREFIX.<pid>, written by glibc itself. */
        monstartup((unsigned long)&main, (unsigned long)&main + 4096);
        _mcleanup();
        printf("%s done\n", m);
        return 0;
    }
    /* Lookups that must still answer as libc does. */
    if (!strcmp(m, "lookups")) {
        void *h = libc_handle();
        void *none = dlsym(h, "fsguard_no_such_symbol");
        const char *e = dlerror();
        printf("missing %s %s\n", none ? "found" : "null", e ? "dlerror" : "no-dlerror");
        printf("strlen %s\n", dlsym(h, "strlen") ? "found" : "null");
        printf("bogus-version %s\n", dlvsym(h, "open", "GLIBC_9.99") ? "found" : "null");
        dlerror();
        void *own = dlsym(RTLD_DEFAULT, "main");
        printf("main %s\n", own == (void *)&main ? "same" : "other");
        return 0;
    }
    fprintf(stderr, "unknown mode %s\n", m);
    return 2;
}
