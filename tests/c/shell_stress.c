/* shell_stress N THREADS: N rounds of system() and popen()/pclose() while
 * THREADS threads call getenv in a loop. Prints `rss_early=KB rss_end=KB
 * fds_early=N fds_end=N getenv_bad=N status_bad=N`. */
#define _GNU_SOURCE
#include <dirent.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static atomic_int stop, getenv_bad, getenv_calls;
static char *own_preload;

static void *reader(void *arg) {
    (void)arg;
    while (!atomic_load(&stop)) {
        const char *mark = getenv("SHELL_STRESS_MARK");
        const char *fd = getenv("FSGUARD_POLICY_FD");
        const char *pre = getenv("LD_PRELOAD");
        if (!mark || strcmp(mark, "parent") || fd ||
            !pre || strcmp(pre, own_preload))
            atomic_fetch_add(&getenv_bad, 1);
        atomic_fetch_add(&getenv_calls, 1);
        sched_yield();
    }
    return NULL;
}

static long rss_kb(void) {
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kb = -1;
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, "VmRSS:", 6)) kb = atol(line + 6);
    if (f) fclose(f);
    return kb;
}

static int fds(void) {
    DIR *d = opendir("/proc/self/fd");
    int n = 0;
    while (d && readdir(d)) n++;
    if (d) closedir(d);
    return n;
}

int main(int argc, char **argv) {
    int rounds = atoi(argv[1]), nthreads = atoi(argv[2]);
    int early = rounds / 10;
    if (setenv("SHELL_STRESS_MARK", "parent", 1)) return 2;
    own_preload = strdup(getenv("LD_PRELOAD") ? getenv("LD_PRELOAD") : "");
    pthread_t t[64];
    for (int i = 0; i < nthreads; i++) pthread_create(&t[i], NULL, reader, NULL);
    int status_bad = 0;
    long rss_early = 0;
    int fds_early = 0;
    char cmd[256], line[256];
    /* The child has the caller's variables and is guarded (read-only). */
    if (system("test \"$SHELL_STRESS_MARK\" = parent && ! (echo x > shell_stress_probe) 2>/dev/null") != 0)
        status_bad += 1000;
    for (int i = 1; i <= rounds; i++) {
        int k = i % 50;
        snprintf(cmd, sizeof cmd, "exit %d", k);
        int r = system(cmd);
        if (!WIFEXITED(r) || WEXITSTATUS(r) != k) status_bad++;
        if (i % 2) {
            snprintf(cmd, sizeof cmd, "echo %d; exit %d", i, k + 1);
            FILE *f = popen(cmd, "r");
            if (!f) { status_bad++; continue; }
            if (!fgets(line, sizeof line, f) || atoi(line) != i) status_bad++;
            r = pclose(f);
            if (!WIFEXITED(r) || WEXITSTATUS(r) != k + 1) status_bad++;
        } else {
            FILE *f = popen("read x; exit $x", "we");
            if (!f) { status_bad++; continue; }
            fprintf(f, "%d\n", k + 2);
            r = pclose(f);
            if (!WIFEXITED(r) || WEXITSTATUS(r) != k + 2) status_bad++;
        }
        if (i == early) { rss_early = rss_kb(); fds_early = fds(); }
    }
    long rss_end = rss_kb();
    atomic_store(&stop, 1);
    for (int i = 0; i < nthreads; i++) pthread_join(t[i], NULL);
    printf("rss_early=%ld rss_end=%ld fds_early=%d fds_end=%d getenv_bad=%d getenv_calls=%d status_bad=%d\n",
           rss_early, rss_end, fds_early, fds(), atomic_load(&getenv_bad),
           atomic_load(&getenv_calls), status_bad);
    return 0;
}
