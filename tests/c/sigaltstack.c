/* Hooked calls made from a signal handler running on a small alternate
 * stack, as a program's crash or timeout handler would make them.
 *
 * usage: sigaltstack SIZE CASE:PATH[:PATH2] ...
 *
 * SIZE is the alternate stack's size in bytes. Below it lie 64 KiB of
 * PROT_NONE, so a handler that needs more stack faults (the process dies of
 * SIGSEGV) instead of silently writing over whatever is mapped there.
 *
 * Each case runs in a SIGUSR1 handler on that stack; cases are
 *   open-write:P   open(P, O_WRONLY|O_CREAT|O_TRUNC, 0644), closed if it opened
 *   open-read:P    open(P, O_RDONLY), closed if it opened
 *   rename:P:Q     rename(P, Q)
 *   execve:P       execve(P, {P, NULL}, environ)
 *   execveat:P     execveat(AT_FDCWD, P, {P, NULL}, environ, 0)
 *   fexecve:P      fexecve of P opened O_PATH (before the signal)
 *   spawn:P        posix_spawn(P, no file actions, {P, NULL}, environ)
 *   connect:P      connect of an AF_UNIX stream socket to P
 *   listen:P       the same, to a socket this program listens on at P
 *   sendto:P       sendto of a datagram to the AF_UNIX socket P
 * The exec cases run in a forked child (the exec replaces it), on a stack
 * shared with the parent so that its use is counted even after an exec that
 * worked; they print ` execd=1` when the exec replaced the child (nothing
 * returned) and ` killed=S` when the child died of signal S.
 * Each prints `case N ret=R errno=E used=U`: the call's result, its
 * errno (0 when it worked), and the most stack the handler used, counted
 * from the bottom of the alternate stack as the bytes no longer holding the
 * fill pattern (a few bytes low if the deepest byte written happens to
 * equal the pattern). The first line
 * is `frame used=U`: a handler that calls nothing, i.e. the kernel's signal
 * frame, for comparison. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <spawn.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

#define GUARD (64 * 1024)

static unsigned char *stack_lo;
static size_t stack_size;

/* The case the next signal runs, and what it found. */
static volatile int kind; /* 0 nothing, 1 open-write, 2 open-read, 3 rename,
                            4 execve, 5 execveat, 6 fexecve, 7 spawn,
                            8 connect, 9 sendto */
static const char *volatile arg1, *volatile arg2;
static volatile int fd1 = -1;
static volatile int ret, err;

/* What a forked child's handler found, seen by the parent. */
struct shared {
    volatile int returned, ret, err;
};
static struct shared *res;

static void handler(int sig) {
    (void)sig;
    int saved = errno;
    int r = 0, e = 0;
    switch (kind) {
    case 1:
    case 2:
        r = open(arg1, kind == 1 ? O_WRONLY | O_CREAT | O_TRUNC : O_RDONLY, 0644);
        e = r < 0 ? errno : 0;
        if (r >= 0) {
            close(r);
            r = 0;
        }
        break;
    case 3:
        r = rename(arg1, arg2);
        e = r < 0 ? errno : 0;
        break;
    case 4:
    case 5:
    case 6: {
        char *const av[] = {(char *)arg1, NULL};
        if (kind == 4)
            r = execve(arg1, av, environ);
        else if (kind == 5)
            r = execveat(AT_FDCWD, arg1, av, environ, 0);
        else
            r = fexecve(fd1, av, environ);
        e = r < 0 ? errno : 0;
        break;
    }
    case 7: {
        char *const av[] = {(char *)arg1, NULL};
        pid_t pid;
        e = posix_spawn(&pid, arg1, NULL, NULL, av, environ);
        r = e ? -1 : 0;
        if (!e)
            waitpid(pid, NULL, 0);
        break;
    }
    case 8:
    case 9: {
        struct sockaddr_un a = {.sun_family = AF_UNIX};
        strncpy(a.sun_path, arg1, sizeof a.sun_path - 1);
        int s = socket(AF_UNIX, kind == 8 ? SOCK_STREAM : SOCK_DGRAM, 0);
        if (kind == 8)
            r = connect(s, (struct sockaddr *)&a, sizeof a);
        else
            r = sendto(s, "x", 1, 0, (struct sockaddr *)&a, sizeof a) < 0 ? -1 : 0;
        e = r < 0 ? errno : 0;
        close(s);
        break;
    }
    }
    ret = r;
    err = e;
    errno = saved;
}

/* Runs the current case once with the stack filled with a pattern; returns
 * the bytes used. */
static size_t run_case(void) {
    const unsigned char fill = 0xa5;
    memset(stack_lo, fill, stack_size);
    if (raise(SIGUSR1) != 0) {
        perror("raise");
        exit(2);
    }
    size_t untouched = 0;
    while (untouched < stack_size && stack_lo[untouched] == fill)
        untouched++;
    return stack_size - untouched;
}

/* Runs the current (exec) case in a forked child; `status` its wait
 * status. */
static size_t run_forked(int *status) {
    const unsigned char fill = 0xa5;
    memset(stack_lo, fill, stack_size);
    res->returned = 0;
    res->ret = 0;
    res->err = 0;
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0) {
        perror("fork");
        exit(2);
    }
    if (pid == 0) {
        if (kind == 6)
            fd1 = open(arg1, O_PATH | O_CLOEXEC);
        raise(SIGUSR1);
        res->ret = ret;
        res->err = err;
        res->returned = 1;
        _exit(0);
    }
    if (waitpid(pid, status, 0) != pid) {
        perror("waitpid");
        exit(2);
    }
    size_t untouched = 0;
    while (untouched < stack_size && stack_lo[untouched] == fill)
        untouched++;
    return stack_size - untouched;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: %s SIZE CASE:PATH[:PATH2] ...\n", argv[0]);
        return 2;
    }
    stack_size = strtoul(argv[1], NULL, 10);
    /* Shared, so that a forked child's use is seen here. */
    unsigned char *map = mmap(NULL, GUARD + stack_size, PROT_READ | PROT_WRITE,
                              MAP_SHARED | MAP_ANONYMOUS | MAP_STACK, -1, 0);
    res = mmap(NULL, sizeof *res, PROT_READ | PROT_WRITE,
               MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (map == MAP_FAILED || res == MAP_FAILED ||
        mprotect(map, GUARD, PROT_NONE) != 0) {
        perror("mmap");
        return 2;
    }
    stack_lo = map + GUARD;
    stack_t ss = {.ss_sp = stack_lo, .ss_size = stack_size, .ss_flags = 0};
    if (sigaltstack(&ss, NULL) != 0) {
        perror("sigaltstack");
        return 2;
    }
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = handler;
    sa.sa_flags = SA_ONSTACK;
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGUSR1, &sa, NULL) != 0) {
        perror("sigaction");
        return 2;
    }
    printf("kernel minsigstksz=%lu\n", getauxval(AT_MINSIGSTKSZ));
    kind = 0;
    printf("frame used=%zu\n", run_case());
    fflush(stdout);
    for (int i = 2; i < argc; i++) {
        /* The name, then one or two paths, split at ':' (never in the
         * paths the test passes). */
        char *name = argv[i];
        char *p = strchr(name, ':');
        if (!p) {
            fprintf(stderr, "bad case %s\n", name);
            return 2;
        }
        *p++ = 0;
        char *q = strchr(p, ':');
        if (q)
            *q++ = 0;
        if (!strcmp(name, "open-write"))
            kind = 1;
        else if (!strcmp(name, "open-read"))
            kind = 2;
        else if (!strcmp(name, "rename") && q)
            kind = 3;
        else if (!strcmp(name, "execve"))
            kind = 4;
        else if (!strcmp(name, "execveat"))
            kind = 5;
        else if (!strcmp(name, "fexecve"))
            kind = 6;
        else if (!strcmp(name, "spawn"))
            kind = 7;
        else if (!strcmp(name, "connect"))
            kind = 8;
        else if (!strcmp(name, "listen")) {
            /* Listened on here, before the handler: the connect works. */
            struct sockaddr_un a = {.sun_family = AF_UNIX};
            strncpy(a.sun_path, p, sizeof a.sun_path - 1);
            int l = socket(AF_UNIX, SOCK_STREAM, 0);
            if (bind(l, (struct sockaddr *)&a, sizeof a) || listen(l, 4)) {
                perror("listen");
                return 2;
            }
            kind = 8;
        } else if (!strcmp(name, "sendto"))
            kind = 9;
        else {
            fprintf(stderr, "bad case %s\n", name);
            return 2;
        }
        arg1 = p;
        arg2 = q;
        if (kind >= 4) {
            int status = 0;
            size_t used = run_forked(&status);
            printf("case %d ret=%d errno=%d used=%zu", i - 1, res->ret,
                   res->err, used);
            if (!res->returned && !WIFSIGNALED(status))
                printf(" execd=1");
            if (WIFSIGNALED(status))
                printf(" killed=%d", WTERMSIG(status));
            printf("\n");
            fflush(stdout);
            continue;
        }
        size_t used = run_case();
        printf("case %d ret=%d errno=%d used=%zu\n", i - 1, ret, err, used);
        fflush(stdout);
    }
    return 0;
}
