/*
 * wrun.c — time a command precisely, without a shell or interpreter in the way.
 *
 *   wrun [-n N] [-C DIR] [-o OUT] [-E ERR] [-e VAR=VAL]... [-u VAR]... [-L DIR]... [-P CPU] -- CMD [ARGS...]
 *
 * Runs CMD N times (default 1), one after another: fork, set the -e/-u
 * environment changes and the cwd in the child only (so this process itself
 * is never under the preload being measured), stdin from /dev/null, stdout to
 * OUT (default /dev/null), stderr appended to ERR (default /dev/null), exec
 * with PATH search, wait4. With -L, the child restricts itself with Landlock
 * first (read/exec of /, everything beneath each -L DIR; see landlock.h), so
 * the Landlock configuration pays no extra launcher exec. With -P, the child
 * is pinned to that CPU (inherited by everything it starts). For each run it prints one line:
 *
 *   <wall ns> <peak RSS KiB> <status>
 *
 * wall is fork-to-reaped on CLOCK_MONOTONIC; peak RSS is ru_maxrss from
 * wait4, i.e. the largest of the child and the descendants it waited for;
 * status is the exit code, or 128+N for a child killed by signal N.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "landlock.h"

#define MAX_ENV 64

static long long now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void usage(void)
{
    fprintf(stderr, "usage: wrun [-n N] [-C DIR] [-o OUT] [-E ERR] [-e VAR=VAL]... [-u VAR]... [-L DIR]... [-P CPU] -- CMD [ARGS...]\n");
    exit(2);
}

int main(int argc, char **argv)
{
    const char *dir = NULL, *out = "/dev/null", *err = "/dev/null";
    const char *sets[MAX_ENV], *unsets[MAX_ENV], *ll_rw[MAX_ENV];
    int nsets = 0, nunsets = 0, nll = 0, n = 1, i, r, pin = -1;

    for (i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--") == 0) {
            i++;
            break;
        }
        if (i + 1 >= argc)
            usage();
        if (strcmp(argv[i], "-n") == 0)
            n = atoi(argv[++i]);
        else if (strcmp(argv[i], "-C") == 0)
            dir = argv[++i];
        else if (strcmp(argv[i], "-o") == 0)
            out = argv[++i];
        else if (strcmp(argv[i], "-E") == 0)
            err = argv[++i];
        else if (strcmp(argv[i], "-e") == 0 && nsets < MAX_ENV)
            sets[nsets++] = argv[++i];
        else if (strcmp(argv[i], "-P") == 0)
            pin = atoi(argv[++i]);
        else if (strcmp(argv[i], "-L") == 0 && nll < MAX_ENV)
            ll_rw[nll++] = argv[++i];
        else if (strcmp(argv[i], "-u") == 0 && nunsets < MAX_ENV)
            unsets[nunsets++] = argv[++i];
        else
            usage();
    }
    if (i >= argc || n < 1)
        usage();

    for (r = 0; r < n; r++) {
        struct rusage ru;
        int status = 0, code;
        long long t0 = now_ns(), t1;
        pid_t pid = fork();

        if (pid < 0) {
            perror("wrun: fork");
            return 125;
        }
        if (pid == 0) {
            int fd, k;
            for (k = 0; k < nunsets; k++)
                unsetenv(unsets[k]);
            for (k = 0; k < nsets; k++)
                putenv((char *)sets[k]);
            if (dir && chdir(dir) != 0) {
                fprintf(stderr, "wrun: chdir %s: %s\n", dir, strerror(errno));
                _exit(125);
            }
            fd = open("/dev/null", O_RDONLY);
            if (fd >= 0) {
                dup2(fd, 0);
                close(fd);
            }
            fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
            if (fd >= 0) {
                dup2(fd, 1);
                close(fd);
            }
            fd = open(err, O_WRONLY | O_CREAT | O_APPEND, 0644);
            if (fd >= 0) {
                dup2(fd, 2);
                close(fd);
            }
            if (pin >= 0) {
                cpu_set_t set;
                CPU_ZERO(&set);
                CPU_SET(pin, &set);
                if (sched_setaffinity(0, sizeof set, &set) != 0) {
                    perror("wrun: sched_setaffinity");
                    _exit(125);
                }
            }
            if (nll > 0 && ll_restrict(ll_rw, nll) != 0)
                _exit(125);
            execvp(argv[i], argv + i);
            fprintf(stderr, "wrun: %s: %s\n", argv[i], strerror(errno));
            _exit(errno == ENOENT ? 127 : 126);
        }
        while (wait4(pid, &status, 0, &ru) < 0) {
            if (errno != EINTR) {
                perror("wrun: wait4");
                return 125;
            }
        }
        t1 = now_ns();
        code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        printf("%lld %ld %d\n", t1 - t0, ru.ru_maxrss, code);
        fflush(stdout);
    }
    return 0;
}
