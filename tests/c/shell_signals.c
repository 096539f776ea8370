/* shell_signals: system()'s signal handling and popen()'s streams, as
 * glibc does them (`refused`: both under a policy that refuses the shell).
 * Prints one `name=ok` or `name=FAIL detail` line per case. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile sig_atomic_t ints, reaped;
static void on_int(int s) { (void)s; ints++; }
static void on_chld(int s) {
    (void)s;
    int st, e = errno;
    while (waitpid(-1, &st, WNOHANG) > 0) reaped++;
    errno = e;
}

static void report(const char *name, int ok, const char *fmt, long a, long b) {
    if (ok) printf("%s=ok\n", name);
    else { printf("%s=FAIL ", name); printf(fmt, a, b); printf("\n"); }
}

int main(int argc, char **argv) {
    if (argc > 1 && !strcmp(argv[1], "refused")) {
        /* Run under a policy that refuses the shell. */
        errno = 0;
        int r = system("exit 0");
        printf("system=%d errno=%d\n", r, errno);
        errno = 0;
        FILE *f = popen("exit 0", "r");
        printf("popen=%s errno=%d\n", f ? "stream" : "null", errno);
        return 0;
    }
    struct sigaction sa = {0};
    sigemptyset(&sa.sa_mask);
    sa.sa_handler = on_int;
    sigaction(SIGINT, &sa, NULL);

    /* SIGINT (and SIGQUIT) sent to the caller while system runs is ignored. */
    int r = system("kill -INT $PPID; kill -QUIT $PPID; exit 5");
    report("caller_ignores", r == 5 << 8 && ints == 0, "status=%#lx ints=%ld", r, ints);
    /* The caller's handler is back afterwards. */
    raise(SIGINT);
    report("handler_restored", ints == 1, "ints=%ld%ld", ints, 0);
    struct sigaction now;
    sigaction(SIGQUIT, NULL, &now);
    report("quit_restored", now.sa_handler == SIG_DFL, "handler=%ld%ld", (long)now.sa_handler, 0);

    /* The child gets SIGINT back at its default: it dies of it. */
    r = system("kill -INT $$; exit 9");
    report("child_default", WIFSIGNALED(r) && WTERMSIG(r) == SIGINT, "status=%#lx%ld", r, 0);

    /* A caller that ignores SIGINT has a child that ignores it too. */
    signal(SIGINT, SIG_IGN);
    r = system("kill -INT $$; exit 6");
    report("child_keeps_ignored", r == 6 << 8, "status=%#lx%ld", r, 0);
    sigaction(SIGINT, &sa, NULL);

    /* SIGCHLD is blocked while system waits: a reaping handler cannot take
     * the child's status away. */
    struct sigaction sc = {0};
    sigemptyset(&sc.sa_mask);
    sc.sa_handler = on_chld;
    sigaction(SIGCHLD, &sc, NULL);
    int bad = 0;
    for (int i = 0; i < 20; i++)
        if (system("exit 7") != 7 << 8) bad++;
    report("sigchld_blocked", bad == 0 && reaped == 0, "bad=%ld reaped=%ld", bad, reaped);
    signal(SIGCHLD, SIG_DFL);

    /* The child runs with the caller's mask, not with SIGCHLD blocked. */
    r = system("grep -q '^SigBlk:[[:space:]]*0*$' /proc/self/status");
    report("child_mask", r == 0, "status=%#lx%ld", r, 0);
    sigset_t m;
    sigprocmask(SIG_BLOCK, NULL, &m);
    report("caller_mask_restored", !sigismember(&m, SIGCHLD), "%ld%ld", 0, 0);

    report("system_null", system(NULL) != 0, "%ld%ld", 0, 0);

    /* popen: the mode, close-on-exec, earlier streams closed in the child. */
    errno = 0;
    FILE *f = popen("true", "rw");
    report("mode_rw", !f && errno == EINVAL, "f=%ld errno=%ld", (long)(f != NULL), errno);
    errno = 0;
    f = popen("true", "x");
    report("mode_x", !f && errno == EINVAL, "f=%ld errno=%ld", (long)(f != NULL), errno);
    FILE *held = popen("cat >/dev/null", "w");
    FILE *e = popen("cat >/dev/null", "we");
    if (!held || !e) { printf("popen=FAIL\n"); return 1; }
    int hfd = fileno(held), efd = fileno(e);
    report("cloexec", !(fcntl(hfd, F_GETFD) & FD_CLOEXEC) && (fcntl(efd, F_GETFD) & FD_CLOEXEC),
           "held=%ld e=%ld", fcntl(hfd, F_GETFD), fcntl(efd, F_GETFD));
    char cmd[128], out[64] = "";
    snprintf(cmd, sizeof cmd, "test -e /proc/self/fd/%d && echo open || echo closed", hfd);
    FILE *q = popen(cmd, "r");
    if (!q || !fgets(out, sizeof out, q)) out[0] = 0;
    r = q ? pclose(q) : -1;
    report("earlier_closed", !strcmp(out, "closed\n") && r == 0, "status=%#lx fd=%ld", r, hfd);
    /* And system's child inherits a non-cloexec stream, as with glibc. */
    snprintf(cmd, sizeof cmd, "test -e /proc/self/fd/%d", hfd);
    r = system(cmd);
    report("system_inherits", r == 0, "status=%#lx%ld", r, 0);
    r = pclose(held);
    int r2 = pclose(e);
    report("pclose_status", r == 0 && r2 == 0, "%#lx %#lx", r, r2);
    /* pclose hands back the child's exit status. */
    f = popen("exit 3", "r");
    r = f ? pclose(f) : -1;
    report("pclose_exit", r == 3 << 8, "status=%#lx%ld", r, 0);
    return 0;
}
