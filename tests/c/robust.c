/* Concurrency and re-entrancy under the guard: threads, fork from a
 * threaded process, a signal handler calling a hooked function, and errno
 * preservation. Prints one "name ok" or "name FAIL ..." line per case. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *inside, *outside;
static volatile sig_atomic_t stop;

static int try_open(const char *p, int flags) {
    int fd = open(p, flags, 0644);
    if (fd >= 0) { close(fd); return 0; }
    return errno;
}

static void *worker(void *arg) {
    long bad = 0;
    for (int i = 0; i < 2000; i++) {
        if (try_open(inside, O_RDONLY) != 0) bad++;
        if (try_open(outside, O_RDONLY) != EACCES) bad++;
    }
    return (void *)bad;
}

static void *spinner(void *arg) {
    while (!stop) { try_open(inside, O_RDONLY); try_open(outside, O_RDONLY); }
    return NULL;
}

static volatile int handler_result = -1;
static void on_alarm(int sig) {
    int saved = errno;
    handler_result = try_open(outside, O_RDONLY);
    errno = saved;
}

int main(int argc, char **argv) {
    if (argc != 3) { fprintf(stderr, "usage: robust INSIDE OUTSIDE\n"); return 2; }
    inside = argv[1]; outside = argv[2];

    /* threads */
    pthread_t t[8]; long bad = 0;
    for (int i = 0; i < 8; i++) pthread_create(&t[i], NULL, worker, NULL);
    for (int i = 0; i < 8; i++) { void *r; pthread_join(t[i], &r); bad += (long)r; }
    printf(bad ? "threads FAIL %ld wrong results\n" : "threads ok\n", bad);

    /* fork while other threads are inside hooks */
    pthread_t s[3];
    for (int i = 0; i < 3; i++) pthread_create(&s[i], NULL, spinner, NULL);
    int forks_bad = 0;
    for (int i = 0; i < 100; i++) {
        pid_t pid = fork();
        if (pid == 0) {
            alarm(5); /* a deadlocked child dies instead of hanging the test */
            int a = try_open(inside, O_RDONLY), b = try_open(outside, O_RDONLY);
            _exit(a == 0 && b == EACCES ? 0 : 1);
        }
        int st; waitpid(pid, &st, 0);
        if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) forks_bad++;
    }
    stop = 1;
    for (int i = 0; i < 3; i++) pthread_join(s[i], NULL);
    printf(forks_bad ? "fork FAIL %d children\n" : "fork ok\n", forks_bad);

    /* a signal handler's call is checked like any other */
    signal(SIGALRM, on_alarm);
    struct itimerval it = {{0, 200}, {0, 200}};
    setitimer(ITIMER_REAL, &it, NULL);
    for (int i = 0; i < 20000 && handler_result == -1; i++) try_open(inside, O_RDONLY);
    struct itimerval off = {{0, 0}, {0, 0}};
    setitimer(ITIMER_REAL, &off, NULL);
    if (handler_result == EACCES) printf("signal ok\n");
    else printf("signal FAIL handler got %d\n", handler_result);

    /* errno survives an allowed call, and a denied one sets it */
    errno = 4242;
    int fd = open(inside, O_RDONLY);
    int after = errno;
    if (fd >= 0) close(fd);
    errno = 0;
    int fd2 = open(outside, O_RDONLY);
    int denied = errno;
    if (fd >= 0 && after == 4242 && fd2 == -1 && denied == EACCES) printf("errno ok\n");
    else printf("errno FAIL fd=%d after=%d fd2=%d denied=%d\n", fd, after, fd2, denied);
    return 0;
}
