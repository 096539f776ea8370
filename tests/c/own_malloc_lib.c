/* A library that brings its own malloc, as rustc and cargo bring jemalloc:
 * its first allocation (from its constructor, which runs before a preload's)
 * takes a plain, non-recursive lock and, under it, opens a file
 * (OWN_MALLOC_PROBE, else /proc/self/status), as jemalloc's set-up reads
 * /sys/kernel/mm/transparent_hugepage/enabled under its init_lock. That
 * open is the process's first hooked call, so it loads the guard: a guard
 * that allocated through this malloc would wait for the lock forever.
 * The open's errno is kept in own_malloc_probe_errno (0: opened). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int own_malloc_probe_errno = -1;

static pthread_mutex_t init_lock = PTHREAD_MUTEX_INITIALIZER;
static int initialised;
static _Alignas(4096) char arena[64 << 20];
static size_t used;

static void set_up(void) {
    const char *p = getenv("OWN_MALLOC_PROBE");
    int fd = open(p ? p : "/proc/self/status", O_RDONLY);
    if (fd >= 0) {
        own_malloc_probe_errno = 0;
        close(fd);
    } else {
        own_malloc_probe_errno = errno;
    }
}

/* A bump allocator: each block's size sits in the word before it. */
static void *take(size_t n, size_t align) {
    if (align < 16)
        align = 16;
    pthread_mutex_lock(&init_lock);
    if (!initialised) {
        initialised = 1;
        set_up();
    }
    size_t start = (used + sizeof(size_t) + align - 1) & ~(align - 1);
    if (start + n > sizeof arena) {
        pthread_mutex_unlock(&init_lock);
        errno = ENOMEM;
        return NULL;
    }
    ((size_t *)(arena + start))[-1] = n;
    used = start + n;
    pthread_mutex_unlock(&init_lock);
    return arena + start;
}

void *malloc(size_t n) { return take(n, 16); }
void free(void *p) { (void)p; }
void *calloc(size_t a, size_t b) {
    void *p = take(a * b, 16);
    if (p)
        memset(p, 0, a * b);
    return p;
}
void *realloc(void *p, size_t n) {
    void *q = take(n, 16);
    if (q && p) {
        size_t old = ((size_t *)p)[-1];
        memcpy(q, p, old < n ? old : n);
    }
    return q;
}
void *memalign(size_t a, size_t n) { return take(n, a); }
void *aligned_alloc(size_t a, size_t n) { return take(n, a); }
void *valloc(size_t n) { return take(n, 4096); }
void *pvalloc(size_t n) { return take((n + 4095) & ~(size_t)4095, 4096); }
int posix_memalign(void **out, size_t a, size_t n) {
    void *p = take(n, a);
    if (!p)
        return ENOMEM;
    *out = p;
    return 0;
}
size_t malloc_usable_size(void *p) { return p ? ((size_t *)p)[-1] : 0; }

__attribute__((constructor)) static void first_allocation(void) {
    free(malloc(1));
}
