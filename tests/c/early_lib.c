/* A library whose constructor runs before libfsguard's own: linked by a
 * program (DT_NEEDED, whose constructors run before a preload's) or put in
 * LD_PRELOAD after the library (preloads are initialised last to first).
 * It opens the files named by EARLY_DENIED (a deny_always file),
 * EARLY_OUTSIDE (a file outside the root) and EARLY_WRITE (a new file
 * outside the root, for writing), and prints one line each:
 * `early NAME refused ERRNO` or `early NAME opened`. With EARLY_THREADS=N,
 * it first starts N threads that open EARLY_OUTSIDE all at once, racing
 * the first hooked call of the process, and prints how many got it open. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <pthread.h>
#include <unistd.h>

static void try_open(const char *name, const char *var, int flags) {
    const char *path = getenv(var);
    if (!path)
        return;
    int fd = open(path, flags, 0644);
    if (fd >= 0) {
        printf("early %s opened\n", name);
        close(fd);
    } else {
        printf("early %s refused %d\n", name, errno);
    }
}

static pthread_barrier_t start;
static int opened;

static void *racer(void *arg) {
    (void)arg;
    pthread_barrier_wait(&start);
    int fd = open(getenv("EARLY_OUTSIDE"), O_RDONLY);
    if (fd >= 0) {
        __atomic_add_fetch(&opened, 1, __ATOMIC_RELAXED);
        close(fd);
    }
    return NULL;
}

static void race(int n) {
    pthread_t t[64];
    if (n > 64)
        n = 64;
    pthread_barrier_init(&start, NULL, n + 1);
    for (int i = 0; i < n; i++)
        pthread_create(&t[i], NULL, racer, NULL);
    racer(NULL);
    for (int i = 0; i < n; i++)
        pthread_join(t[i], NULL);
    printf("early race opened %d of %d\n", opened, n + 1);
}

__attribute__((constructor)) static void early(void) {
    const char *threads = getenv("EARLY_THREADS");
    if (threads && getenv("EARLY_OUTSIDE"))
        race(atoi(threads));
    try_open("deny_always", "EARLY_DENIED", O_RDONLY);
    try_open("read_outside", "EARLY_OUTSIDE", O_RDONLY);
    try_open("write_outside", "EARLY_WRITE", O_WRONLY | O_CREAT);
    fflush(stdout);
}

/* An IFUNC whose resolver opens a file outside the root ("../outside/data"
 * from the root) and keeps the result: run while the program is relocated
 * (`-z now`), before the C library is set up, when `environ` is not even
 * there. early_ifunc() returns 0 if the open succeeded, else its errno. */
static int ifunc_result = -1;

static int early_ifunc_impl(void) {
    return ifunc_result;
}

static void *early_ifunc_resolver(void) {
    int fd = open("../outside/data", O_RDONLY);
    if (fd >= 0) {
        ifunc_result = 0;
        close(fd);
    } else {
        ifunc_result = errno;
    }
    return (void *)early_ifunc_impl;
}

int early_ifunc(void) __attribute__((ifunc("early_ifunc_resolver")));
