/* Other processes' memory and descriptors (issue 27 item 4, issue 36).
 *
 *   processes victim SECRETFILE
 *       Holds a marker string and SECRETFILE open, prints
 *       "victim PID ADDR FD LEN", then waits to be killed.
 *   processes attack PID ADDR FD LEN
 *       Tries every route into process PID: process_vm_readv and
 *       process_vm_writev, ptrace attach (and seize) + PEEKDATA,
 *       pidfd_open + pidfd_getfd of its fd FD, kcmp; through libc and through
 *       syscall(). One line per try: "ROUTE RESULT ERRNO [DATA]".
 *   processes parent
 *       The same against this process's parent (the fsguard supervisor),
 *       with its fd 0 as the fd to take.
 *   processes parent_raw
 *       ptrace attach, process_vm_readv and pidfd_getfd against the parent
 *       through raw system call instructions, which no hook sees (the
 *       kernel's answer: EPERM for a process that is not dumpable).
 *   processes own_child
 *       Forks a child holding the marker and reaches it by every route:
 *       a process's own children stay reachable. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
#ifndef SYS_pidfd_getfd
#define SYS_pidfd_getfd 438
#endif
#define KCMP_FILE 0
#define KCMP_VM 1

extern int pidfd_open(pid_t, unsigned int);
extern int pidfd_getfd(int, int, unsigned int);

static char marker[64];

static void show(const char *route, long r, const char *data) {
    printf("%s %ld %d%s%s\n", route, r, r < 0 ? errno : 0, data ? " " : "", data ? data : "");
    fflush(stdout);
}

/* process_vm_readv of LEN bytes at ADDR. */
static void vm_read(const char *route, int sys, pid_t pid, uintptr_t addr, size_t len) {
    char buf[128] = {0};
    if (len >= sizeof buf)
        len = sizeof buf - 1;
    struct iovec l = {buf, len}, r = {(void *)addr, len};
    errno = 0;
    long n = sys ? syscall(SYS_process_vm_readv, pid, &l, 1, &r, 1, 0)
                 : process_vm_readv(pid, &l, 1, &r, 1, 0);
    show(route, n, n > 0 ? buf : NULL);
}

static void vm_write(const char *route, int sys, pid_t pid, uintptr_t addr) {
    char buf[] = "XXXX";
    struct iovec l = {buf, 4}, r = {(void *)addr, 4};
    errno = 0;
    long n = sys ? syscall(SYS_process_vm_writev, pid, &l, 1, &r, 1, 0)
                 : process_vm_writev(pid, &l, 1, &r, 1, 0);
    show(route, n, NULL);
}

static long pt(int sys, long req, pid_t pid, void *addr, void *data) {
    if (!sys)
        return ptrace(req, pid, addr, data);
    /* The raw system call stores a PEEK's word at `data`. */
    if (req == PTRACE_PEEKDATA) {
        long word = 0;
        long r = syscall(SYS_ptrace, req, pid, addr, &word);
        return r < 0 ? r : word;
    }
    return syscall(SYS_ptrace, req, pid, addr, data);
}

/* Attach (or seize), wait for the stop, read LEN bytes word by word,
 * detach. */
static void peek(const char *route, int sys, int seize, pid_t pid, uintptr_t addr, size_t len) {
    errno = 0;
    long r = pt(sys, seize ? PTRACE_SEIZE : PTRACE_ATTACH, pid, NULL, NULL);
    show(route, r, NULL);
    if (r != 0)
        return;
    if (seize)
        pt(sys, PTRACE_INTERRUPT, pid, NULL, NULL);
    int st;
    waitpid(pid, &st, __WALL);
    char buf[128] = {0};
    if (len >= sizeof buf - 8)
        len = sizeof buf - 9;
    for (size_t i = 0; i < len; i += sizeof(long)) {
        errno = 0;
        long w = pt(sys, PTRACE_PEEKDATA, pid, (void *)(addr + i), NULL);
        if (errno)
            break;
        memcpy(buf + i, &w, sizeof w);
    }
    buf[len] = 0;
    printf("%s-peek %s\n", route, buf);
    pt(sys, PTRACE_DETACH, pid, NULL, NULL);
}

/* pidfd_open, pidfd_getfd of FD, and what that fd reads. */
static void getfd(const char *route, int sys, pid_t pid, int fd) {
    errno = 0;
    int pidfd = sys ? syscall(SYS_pidfd_open, pid, 0) : pidfd_open(pid, 0);
    if (pidfd < 0) {
        show(route, pidfd, "pidfd_open");
        return;
    }
    errno = 0;
    int got = sys ? syscall(SYS_pidfd_getfd, pidfd, fd, 0) : pidfd_getfd(pidfd, fd, 0);
    char buf[128] = {0};
    if (got >= 0) {
        ssize_t n = pread(got, buf, sizeof buf - 1, 0);
        if (n > 0)
            buf[strcspn(buf, "\n")] = 0;
        close(got);
    }
    show(route, got, got >= 0 ? buf : NULL);
    close(pidfd);
}

static void kcmp_vm(pid_t pid) {
    errno = 0;
    long r = syscall(SYS_kcmp, getpid(), pid, KCMP_VM, 0, 0);
    show("kcmp", r, NULL);
}

static void attack(pid_t pid, uintptr_t addr, int fd, size_t len) {
    vm_read("readv", 0, pid, addr, len);
    vm_read("sys_readv", 1, pid, addr, len);
    vm_write("writev", 0, pid, addr);
    vm_write("sys_writev", 1, pid, addr);
    peek("attach", 0, 0, pid, addr, len);
    peek("sys_attach", 1, 0, pid, addr, len);
    peek("seize", 0, 1, pid, addr, len);
    getfd("getfd", 0, pid, fd);
    getfd("sys_getfd", 1, pid, fd);
    kcmp_vm(pid);
}

/* A system call through the instruction itself: no hook sees it. Returns
 * -errno on failure, as the kernel does. */
static long raw(long n, long a, long b, long c, long d, long e, long f) {
#if defined(__x86_64__)
    long ret;
    register long r10 __asm__("r10") = d;
    register long r8 __asm__("r8") = e;
    register long r9 __asm__("r9") = f;
    __asm__ volatile("syscall"
                     : "=a"(ret)
                     : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8), "r"(r9)
                     : "rcx", "r11", "memory");
    return ret;
#elif defined(__aarch64__)
    register long x8 __asm__("x8") = n;
    register long x0 __asm__("x0") = a;
    register long x1 __asm__("x1") = b;
    register long x2 __asm__("x2") = c;
    register long x3 __asm__("x3") = d;
    register long x4 __asm__("x4") = e;
    register long x5 __asm__("x5") = f;
    __asm__ volatile("svc 0"
                     : "+r"(x0)
                     : "r"(x8), "r"(x1), "r"(x2), "r"(x3), "r"(x4), "r"(x5)
                     : "memory");
    return x0;
#else
    (void)n, (void)a, (void)b, (void)c, (void)d, (void)e, (void)f;
    return -ENOSYS;
#endif
}

static void parent_raw(void) {
    pid_t pid = getppid();
    /* Permission is checked before the copy: EFAULT (a bad address) means
     * the kernel let this process into the parent's memory. */
    char buf[8];
    struct iovec l = {buf, sizeof buf}, r = {(void *)0x1000, sizeof buf};
    long n = raw(SYS_process_vm_readv, pid, (long)&l, 1, (long)&r, 1, 0);
    printf("raw_readv %ld\n", n);
    long a = raw(SYS_ptrace, PTRACE_ATTACH, pid, 0, 0, 0, 0);
    printf("raw_attach %ld\n", a);
    if (a == 0) {
        int st;
        raw(SYS_wait4, pid, (long)&st, __WALL, 0, 0, 0);
        raw(SYS_ptrace, PTRACE_DETACH, pid, 0, 0, 0, 0);
    }
    long pidfd = raw(SYS_pidfd_open, pid, 0, 0, 0, 0, 0);
    long got = pidfd >= 0 ? raw(SYS_pidfd_getfd, pidfd, 0, 0, 0, 0, 0) : pidfd;
    printf("raw_getfd %ld\n", got);
    fflush(stdout);
}

static void own_child(void) {
    snprintf(marker, sizeof marker, "CHILD-MARKER-%d", getpid());
    int fd = open("/dev/null", O_RDONLY);
    int go[2];
    if (pipe(go) != 0)
        exit(3);
    pid_t c = fork();
    if (c == 0) {
        close(go[1]);
        char b;
        read(go[0], &b, 1); /* until the parent is done */
        _exit(0);
    }
    close(go[0]);
    attack(c, (uintptr_t)marker, fd, strlen(marker));
    close(go[1]);
    int st;
    waitpid(c, &st, 0);
}

int main(int argc, char **argv) {
    if (argc < 2)
        return 2;
    const char *m = argv[1];
    if (!strcmp(m, "victim") && argc == 3) {
        snprintf(marker, sizeof marker, "MARKER-%d-SECRET", getpid());
        int fd = open(argv[2], O_RDONLY);
        printf("victim %d %p %d %zu\n", getpid(), (void *)marker, fd, strlen(marker));
        fflush(stdout);
        for (;;)
            pause();
    }
    if (!strcmp(m, "attack") && argc == 6) {
        attack(atoi(argv[2]), (uintptr_t)strtoull(argv[3], NULL, 0), atoi(argv[4]),
               strtoul(argv[5], NULL, 0));
        return 0;
    }
    if (!strcmp(m, "parent")) {
        /* Any address: refused before it is read, or EFAULT. */
        attack(getppid(), 0x1000, 0, 8);
        return 0;
    }
    if (!strcmp(m, "parent_raw")) {
        parent_raw();
        return 0;
    }
    if (!strcmp(m, "own_child")) {
        own_child();
        return 0;
    }
    return 2;
}
