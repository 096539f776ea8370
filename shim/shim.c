/* Variadic libc entry points. C reads the optional arguments the way the
 * caller passed them, then hands fixed arguments to the Rust hooks.
 *
 * build.rs exports every function defined here without `static`, read from
 * its definition (`type name(args) {` on one line); helpers stay `static`.
 * Each export needs a row in a hook table (tests/hook_table.rs). */
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
int fsguard_execl(const char *path, char *const argv[], char *const envp[]);
int fsguard_execle(const char *path, char *const argv[], char *const envp[]);
int fsguard_execlp(const char *file, char *const argv[], char *const envp[]);
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
    return fsguard_execl(path, (char *const *)argv, environ);
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
    return fsguard_execlp(file, (char *const *)argv, environ);
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
    return fsguard_execle(path, (char *const *)argv, envp);
}

/* The real functions the C entry points call: each a cell the guard's load
 * fills, with every `real!` site's, before any hook can run (src/sys/next.rs
 * reads the `fsguard_real` section: a name, and the cell its address goes
 * to). No entry point looks a symbol up. */
struct real_slot {
    const char *name;
    void **cell;
    unsigned int hash; /* 0: computed at the load */
};
void fsguard_resolve_real(void);
/* A cell found empty: filled now if the guard has not loaded yet (a call
 * before its load; after it, an empty cell means no definition). */
static void *real_cell(void **cell) {
    void *f = __atomic_load_n(cell, __ATOMIC_ACQUIRE);
    if (!f) {
        fsguard_resolve_real();
        f = __atomic_load_n(cell, __ATOMIC_ACQUIRE);
    }
    return f;
}
#define REAL_SLOT(cell, name)                                                  \
    static void *cell;                                                         \
    __attribute__((used, section("fsguard_real"), aligned(sizeof(void *))))    \
    static const struct real_slot cell##_slot = {name, &cell, 0}

/* dlopen: checked, then a tail call to the real dlopen, which finds its
 * caller by return address (for RUNPATH and $ORIGIN); a tail call keeps that
 * address the program's own. */
typedef void *(*dlopen_fn)(const char *, int);

REAL_SLOT(real_dlopen, "dlopen");

void *dlopen(const char *name, int flags) {
    int e = fsguard_dlopen_check(name);
    if (e != 0) {
        errno = e;
        return NULL;
    }
    dlopen_fn f = (dlopen_fn)real_cell(&real_dlopen);
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

/* clone and its alias __clone: the last three arguments are read whatever
 * the flags say, as glibc's own clone reads them (registers and the
 * caller's stack). A namespace flag is refused (src/hooks_more/namespace.rs);
 * else the real function runs, from this frame (the child starts in `fn`
 * on its own stack and never returns here). */
int fsguard_clone_check(int flags);
typedef int (*clone_fn)(int (*)(void *), void *, int, void *, ...);

static int clone_real(void **cache, int (*fn)(void *), void *stack, int flags,
                      void *arg, pid_t *ptid, void *tls, pid_t *ctid) {
    int e = fsguard_clone_check(flags);
    if (e != 0) {
        errno = e;
        return -1;
    }
    clone_fn f = (clone_fn)real_cell(cache);
    if (!f) {
        errno = ENOSYS;
        return -1;
    }
    return f(fn, stack, flags, arg, ptid, tls, ctid);
}

#define CLONE_TAIL(arg, ptid, tls, ctid)                                       \
    do {                                                                       \
        va_list ap;                                                            \
        va_start(ap, arg);                                                     \
        ptid = va_arg(ap, pid_t *);                                            \
        tls = va_arg(ap, void *);                                              \
        ctid = va_arg(ap, pid_t *);                                            \
        va_end(ap);                                                            \
    } while (0)

REAL_SLOT(real_clone, "clone");
REAL_SLOT(real___clone, "__clone");

int clone(int (*fn)(void *), void *stack, int flags, void *arg, ...) {
    pid_t *ptid, *ctid;
    void *tls;
    CLONE_TAIL(arg, ptid, tls, ctid);
    return clone_real(&real_clone, fn, stack, flags, arg, ptid, tls, ctid);
}

int __clone(int (*fn)(void *), void *stack, int flags, void *arg, ...) {
    pid_t *ptid, *ctid;
    void *tls;
    CLONE_TAIL(arg, ptid, tls, ctid);
    return clone_real(&real___clone, fn, stack, flags, arg, ptid, tls, ctid);
}

/* ptrace: glibc reads pid, addr and data whatever the request; so does this
 * (src/hooks_more/process.rs checks the tracee). */
long fsguard_ptrace(int request, pid_t pid, void *addr, void *data);

long ptrace(int request, ...) {
    va_list ap;
    va_start(ap, request);
    pid_t pid = va_arg(ap, pid_t);
    void *addr = va_arg(ap, void *);
    void *data = va_arg(ap, void *);
    va_end(ap);
    return fsguard_ptrace(request, pid, addr, data);
}

/* sem_open: the mode and value follow only with O_CREAT
 * (src/hooks_more/shm.rs). */
void *fsguard_sem_open(const char *name, int oflag, mode_t mode, unsigned int value);

void *sem_open(const char *name, int oflag, ...) {
    mode_t mode = 0;
    unsigned int value = 0;
    if (oflag & O_CREAT) {
        va_list ap;
        va_start(ap, oflag);
        mode = va_arg(ap, mode_t);
        value = va_arg(ap, unsigned int);
        va_end(ap);
    }
    return fsguard_sem_open(name, oflag, mode, value);
}

/* glibc's own aliases of open that take a mode: `__open`, `__open64`
 * (public) and `__open_nocancel`, `__open64_nocancel` (GLIBC_PRIVATE, but
 * reachable through dlsym). Each is checked like open (src/aliases.rs). */
int fsguard_alias_open(const char *path, int flags, mode_t mode);
int fsguard_alias_open64(const char *path, int flags, mode_t mode);
int fsguard_alias_open_nocancel(const char *path, int flags, mode_t mode);
int fsguard_alias_open64_nocancel(const char *path, int flags, mode_t mode);

int __open(const char *path, int flags, ...) {
    mode_t mode = 0;
    READ_MODE(flags, flags, mode);
    return fsguard_alias_open(path, flags, mode);
}

int __open64(const char *path, int flags, ...) {
    mode_t mode = 0;
    READ_MODE(flags, flags, mode);
    return fsguard_alias_open64(path, flags, mode);
}

int __open_nocancel(const char *path, int flags, ...) {
    mode_t mode = 0;
    READ_MODE(flags, flags, mode);
    return fsguard_alias_open_nocancel(path, flags, mode);
}

int __open64_nocancel(const char *path, int flags, ...) {
    mode_t mode = 0;
    READ_MODE(flags, flags, mode);
    return fsguard_alias_open64_nocancel(path, flags, mode);
}

/* ------------------------------------------------------------------------
 * Symbol lookups: dlsym, dlvsym, dlmopen.
 *
 * A lookup that would hand the caller libc's definition of a symbol this
 * library hooks (any handle: RTLD_DEFAULT, RTLD_NEXT, a handle of libc; any
 * version) returns the hook instead. Everything else is the real function,
 * reached by a tail call: glibc finds the caller of dlsym(RTLD_NEXT, ...)
 * and dlmopen by return address, and a tail call keeps it the caller's.
 *
 * The real dl* functions are found in libc's own symbol table (the ELF
 * GNU hash table of the loaded libc), never through the hooked names, and
 * "is this name hooked" is a lookup in this library's own table, so a
 * lookup never touches dlerror's state unless the real call would.
 * Two callers are always passed through: this library itself (src/real.rs
 * finds the real functions with dlsym(RTLD_NEXT, ...)), and an interposer
 * loaded after it whose definition the hook forwards to (handing it the
 * hook would make the two call each other forever).
 * ---------------------------------------------------------------------- */
#include <elf.h>
#include <link.h>
#include <stdint.h>
#include <string.h>

struct elf_obj {
    uintptr_t base, lo, hi;
    const ElfW(Sym) *symtab;
    const char *strtab;
    const uint32_t *gnu_hash;
    const ElfW(Half) *versym;
    const ElfW(Verdef) *verdef;
};

static struct elf_obj self_obj, libc_obj;
static int objs_ready; /* 0: not yet, 1: ready, -1: failed */

static int in_obj(const struct elf_obj *o, const void *p) {
    uintptr_t a = (uintptr_t)p;
    return o->hi != 0 && a >= o->lo && a < o->hi;
}

static uintptr_t dyn_ptr(uintptr_t base, ElfW(Addr) v) {
    /* glibc relocates these entries in place on most targets; not all. */
    return v < base ? base + v : v;
}

static void fill_obj(struct dl_phdr_info *info, struct elf_obj *o) {
    o->base = info->dlpi_addr;
    o->lo = UINTPTR_MAX;
    o->hi = 0;
    const ElfW(Dyn) *dyn = NULL;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type == PT_LOAD) {
            uintptr_t s = info->dlpi_addr + ph->p_vaddr;
            if (s < o->lo)
                o->lo = s;
            if (s + ph->p_memsz > o->hi)
                o->hi = s + ph->p_memsz;
        } else if (ph->p_type == PT_DYNAMIC) {
            dyn = (const ElfW(Dyn) *)(info->dlpi_addr + ph->p_vaddr);
        }
    }
    for (; dyn && dyn->d_tag != DT_NULL; dyn++) {
        uintptr_t v = dyn_ptr(o->base, dyn->d_un.d_ptr);
        switch (dyn->d_tag) {
        case DT_SYMTAB: o->symtab = (const ElfW(Sym) *)v; break;
        case DT_STRTAB: o->strtab = (const char *)v; break;
        case DT_GNU_HASH: o->gnu_hash = (const uint32_t *)v; break;
        case DT_VERSYM: o->versym = (const ElfW(Half) *)v; break;
        case DT_VERDEF: o->verdef = (const ElfW(Verdef) *)v; break;
        }
    }
}

static void marker(void) {}

static int find_objs(struct dl_phdr_info *info, size_t size, void *data) {
    (void)size;
    (void)data;
    struct elf_obj o = {0};
    fill_obj(info, &o);
    if (in_obj(&o, (const void *)&marker)) {
        self_obj = o;
        return 0;
    }
    const char *slash = strrchr(info->dlpi_name, '/');
    const char *base = slash ? slash + 1 : info->dlpi_name;
    /* The first libc.so.6 of the main namespace (a dlmopen'd copy comes
     * later in the list, and is refused anyway). */
    if (!libc_obj.hi && strcmp(base, "libc.so.6") == 0)
        libc_obj = o;
    return 0;
}

static int objs(void) {
    int r = __atomic_load_n(&objs_ready, __ATOMIC_ACQUIRE);
    if (r)
        return r;
    /* Idempotent: two threads racing here compute the same thing. */
    dl_iterate_phdr(find_objs, NULL);
    r = (self_obj.symtab && self_obj.gnu_hash && libc_obj.symtab && libc_obj.gnu_hash) ? 1 : -1;
    __atomic_store_n(&objs_ready, r, __ATOMIC_RELEASE);
    return r;
}

/* Whether symbol `ix` of `o` has version `version` (NULL: any). */
static int has_version(const struct elf_obj *o, uint32_t ix, const char *version) {
    if (!version)
        return 1;
    if (!o->versym || !o->verdef)
        return 0;
    ElfW(Half) want = o->versym[ix] & 0x7fff;
    const ElfW(Verdef) *d = o->verdef;
    for (;;) {
        if (d->vd_ndx == want) {
            const ElfW(Verdaux) *a = (const ElfW(Verdaux) *)((const char *)d + d->vd_aux);
            return strcmp(o->strtab + a->vda_name, version) == 0;
        }
        if (!d->vd_next)
            return 0;
        d = (const ElfW(Verdef) *)((const char *)d + d->vd_next);
    }
}

/* The address of the defined function or object `name` in `o`, or NULL. */
static void *elf_lookup(const struct elf_obj *o, const char *name, const char *version) {
    uint32_t h = 5381;
    for (const unsigned char *c = (const unsigned char *)name; *c; c++)
        h = h * 33 + *c;
    const uint32_t *ht = o->gnu_hash;
    uint32_t nbuckets = ht[0], symoffset = ht[1], bloom_size = ht[2];
    const ElfW(Addr) *bloom = (const ElfW(Addr) *)&ht[4];
    const uint32_t *buckets = (const uint32_t *)&bloom[bloom_size];
    const uint32_t *chain = &buckets[nbuckets];
    if (nbuckets == 0)
        return NULL;
    uint32_t ix = buckets[h % nbuckets];
    if (ix < symoffset)
        return NULL;
    for (;;) {
        uint32_t ch = chain[ix - symoffset];
        const ElfW(Sym) *s = &o->symtab[ix];
        if ((h | 1) == (ch | 1) && s->st_shndx != SHN_UNDEF &&
            strcmp(name, o->strtab + s->st_name) == 0 && has_version(o, ix, version)) {
            int t = ELF64_ST_TYPE(s->st_info);
            if (t == STT_FUNC || t == STT_OBJECT || t == STT_GNU_IFUNC)
                return (void *)(o->base + s->st_value);
        }
        if (ch & 1)
            return NULL;
        ix++;
    }
}

typedef void *(*dlsym_fn)(void *, const char *);
typedef void *(*dlvsym_fn)(void *, const char *, const char *);
typedef void *(*dlmopen_fn)(Lmid_t, const char *, int);

/* libc's own definition of a dl function. */
static void *libc_fn(void **cache, const char *name) {
    void *f = __atomic_load_n(cache, __ATOMIC_RELAXED);
    if (!f && objs() > 0) {
        f = elf_lookup(&libc_obj, name, NULL);
        __atomic_store_n(cache, f, __ATOMIC_RELAXED);
    }
    return f;
}

static void *real_dlsym_p, *real_dlvsym_p, *real_dlmopen_p;

/* The hook to hand out instead of what the caller asked for, or NULL to let
 * the real lookup answer. */
static void *hooked_lookup(void *handle, const char *name, const char *version, void *caller) {
    if (!name || objs() <= 0 || in_obj(&self_obj, caller))
        return NULL;
    void *hook = elf_lookup(&self_obj, name, NULL);
    if (!hook || !elf_lookup(&libc_obj, name, version))
        return NULL;
    /* An interposer after this one asking for the next definition of a name
     * the hook forwards to it: give it the real one, or they loop. */
    dlsym_fn real_dlsym = (dlsym_fn)libc_fn(&real_dlsym_p, "dlsym");
    if (!real_dlsym)
        return NULL;
    void *next = real_dlsym(RTLD_NEXT, name);
    if (next && !in_obj(&libc_obj, next)) {
        Dl_info a, b;
        if (dladdr(next, &a) && dladdr(caller, &b) && a.dli_fbase == b.dli_fbase)
            return NULL;
    }
    if (handle == RTLD_NEXT)
        return hook;
    void *r;
    if (version) {
        dlvsym_fn real_dlvsym = (dlvsym_fn)libc_fn(&real_dlvsym_p, "dlvsym");
        r = real_dlvsym ? real_dlvsym(handle, name, version) : NULL;
    } else {
        r = real_dlsym(handle, name);
    }
    return in_obj(&libc_obj, r) ? hook : NULL;
}

void *dlsym(void *handle, const char *name) {
    void *hook = hooked_lookup(handle, name, NULL, __builtin_return_address(0));
    if (hook)
        return hook;
    dlsym_fn f = (dlsym_fn)libc_fn(&real_dlsym_p, "dlsym");
    if (!f)
        return NULL;
    return f(handle, name); /* a tail call: the caller stays the caller */
}

void *dlvsym(void *handle, const char *name, const char *version) {
    void *hook = hooked_lookup(handle, name, version, __builtin_return_address(0));
    if (hook)
        return hook;
    dlvsym_fn f = (dlvsym_fn)libc_fn(&real_dlvsym_p, "dlvsym");
    if (!f)
        return NULL;
    return f(handle, name, version); /* a tail call, as above */
}

int fsguard_dlmopen_check(long lmid, const char *name);

/* dlmopen: a new namespace would get a fresh libc this library does not
 * hook, so any namespace but the base one is refused; in the base one it
 * is dlopen. A refusal leaves dlerror() a message, as a failed load does. */
void *dlmopen(Lmid_t lmid, const char *name, int flags) {
    int e = fsguard_dlmopen_check((long)lmid, name);
    dlmopen_fn f = (dlmopen_fn)libc_fn(&real_dlmopen_p, "dlmopen");
    if (e != 0) {
        static dlopen_fn real_dlopen_p;
        dlopen_fn o = (dlopen_fn)libc_fn((void **)&real_dlopen_p, "dlopen");
        /* A name no file has: the real dlopen fails and says why. */
        if (o)
            o("/fsguard: dlmopen into a new namespace is refused", RTLD_LAZY | RTLD_NOLOAD);
        errno = e;
        return NULL;
    }
    if (!f)
        return NULL;
    return f(lmid, name, flags); /* a tail call, as for dlopen */
}
