/*
 * micro.c — per-call cost of the filesystem calls fsguard intercepts.
 *
 *   micro ROOT OUTSIDE TARGET_MS [CASE...]
 *   micro ROOT OUTSIDE xN [CASE...]      exactly N iterations per case (counting mode)
 *
 * ROOT must contain a/b/c/file (an existing file three levels deep); OUTSIDE
 * must contain a/b/c/file too (a path outside the guarded root). Each case
 * is timed for TARGET_MS of wall time, in 5 slices whose median is reported
 * (after a warm-up of a tenth of that), and prints one line:
 *
 *   <case> <ns per call> <iterations> <status>
 *
 * status is "ok", or for denied_open the errno name of the refusal ("ok"
 * there means the open was allowed, as it is when nothing is guarding).
 * Any other failure is fatal (exit 1): a guard that breaks a call it should
 * allow must not produce a number.
 *
 * The harness (bench/harness.py) runs this once per configuration per
 * repetition, interleaving configurations, and takes medians.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define BATCH 64

static char file_path[PATH_MAX], dir_path[PATH_MAX], new_path[PATH_MAX];
static char newdir_path[PATH_MAX], outside_path[PATH_MAX];
static int dirfd_c = -1;
static int denied_errno = -1; /* -1: not run, 0: allowed */

static long long now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static const char *errname(int e)
{
    switch (e) {
    case 0: return "ok";
    case EACCES: return "EACCES";
    case EPERM: return "EPERM";
    case ENOENT: return "ENOENT";
    case EROFS: return "EROFS";
    default: return "error";
    }
}

static void die(const char *what, const char *path)
{
    fprintf(stderr, "micro: %s %s: %s\n", what, path, strerror(errno));
    exit(1);
}

static void op_open_close(void)
{
    int fd = open(file_path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        die("open", file_path);
    close(fd);
}

static void op_openat_close(void)
{
    int fd = openat(dirfd_c, "file", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        die("openat", "file");
    close(fd);
}

static void op_stat(void)
{
    struct stat st;
    if (stat(file_path, &st) != 0)
        die("stat", file_path);
}

static void op_access(void)
{
    if (access(file_path, R_OK) != 0)
        die("access", file_path);
}

static void op_fopen_fclose(void)
{
    FILE *f = fopen(file_path, "re");
    if (f == NULL)
        die("fopen", file_path);
    fclose(f);
}

static void op_create_unlink(void)
{
    int fd = open(new_path, O_CREAT | O_WRONLY | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        die("create", new_path);
    close(fd);
    if (unlink(new_path) != 0)
        die("unlink", new_path);
}

static void op_mkdir_rmdir(void)
{
    if (mkdir(newdir_path, 0755) != 0)
        die("mkdir", newdir_path);
    if (rmdir(newdir_path) != 0)
        die("rmdir", newdir_path);
}

static void op_denied_open(void)
{
    int fd = open(outside_path, O_WRONLY | O_CLOEXEC);
    int e = fd < 0 ? errno : 0;
    if (fd >= 0)
        close(fd);
    if (denied_errno < 0)
        denied_errno = e;
    else if (e != denied_errno) {
        fprintf(stderr, "micro: denied_open: inconsistent results (%s then %s)\n",
                errname(denied_errno), errname(e));
        exit(1);
    }
}

struct bench_case {
    const char *name;
    void (*op)(void);
};

static const struct bench_case cases[] = {
    {"open_close", op_open_close},
    {"openat_close", op_openat_close},
    {"stat", op_stat},
    {"access", op_access},
    {"fopen_fclose", op_fopen_fclose},
    {"create_unlink", op_create_unlink},
    {"mkdir_rmdir", op_mkdir_rmdir},
    {"denied_open", op_denied_open},
};

#define SLICES 5

/* The loops callgrind counts (--toggle-collect=measure_loop): only the timed
 * iterations, never the warm-up. */
void measure_loop(void (*op)(void), long long n);
__attribute__((noinline, noipa)) void measure_loop(void (*op)(void), long long n)
{
    long long k;
    for (k = 0; k < n; k++)
        op();
}

void warmup_loop(void (*op)(void), long long n);
__attribute__((noinline, noipa)) void warmup_loop(void (*op)(void), long long n)
{
    long long k;
    for (k = 0; k < n; k++)
        op();
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Timed mode: warm up for a tenth of target_ns, then time SLICES slices of
 * target_ns/SLICES each and report the median slice (an interrupt or a
 * preemption spoils one slice, not the result).
 * Counting mode (fixed_iters > 0): exactly fixed_iters iterations after 16
 * warm-up ones, for the syscall and instruction counts. */
static void run_case(const struct bench_case *c, long long target_ns, long long fixed_iters)
{
    double per_call[SLICES];
    long long t0, elapsed, iters, total = 0;
    int s;

    if (fixed_iters > 0) {
        warmup_loop(c->op, 16);
        t0 = now_ns();
        measure_loop(c->op, fixed_iters);
        elapsed = now_ns() - t0;
        printf("%s %.1f %lld %s\n", c->name, (double)elapsed / (double)fixed_iters, fixed_iters,
               c->op != op_denied_open ? "ok" : errname(denied_errno));
        fflush(stdout);
        return;
    }

    /* warm-up: caches, lazy symbol binding, the guard's first-call setup */
    t0 = now_ns();
    while (now_ns() - t0 < target_ns / 10)
        warmup_loop(c->op, BATCH);

    for (s = 0; s < SLICES; s++) {
        iters = 0;
        t0 = now_ns();
        do {
            measure_loop(c->op, BATCH);
            iters += BATCH;
            elapsed = now_ns() - t0;
        } while (elapsed < target_ns / SLICES);
        per_call[s] = (double)elapsed / (double)iters;
        total += iters;
    }
    qsort(per_call, SLICES, sizeof per_call[0], cmp_double);
    printf("%s %.1f %lld %s\n", c->name, per_call[SLICES / 2], total,
           c->op != op_denied_open ? "ok" : errname(denied_errno));
    fflush(stdout);
}

int main(int argc, char **argv)
{
    long long target_ns, fixed_iters = 0;
    size_t k;
    int i;

    if (argc < 4) {
        fprintf(stderr, "usage: micro ROOT OUTSIDE TARGET_MS [CASE...]\n");
        return 2;
    }
    snprintf(file_path, sizeof file_path, "%s/a/b/c/file", argv[1]);
    snprintf(dir_path, sizeof dir_path, "%s/a/b/c", argv[1]);
    snprintf(new_path, sizeof new_path, "%s/a/b/c/new.%d", argv[1], (int)getpid());
    snprintf(newdir_path, sizeof newdir_path, "%s/a/b/c/dir.%d", argv[1], (int)getpid());
    snprintf(outside_path, sizeof outside_path, "%s/a/b/c/file", argv[2]);
    if (argv[3][0] == 'x') {
        fixed_iters = atoll(argv[3] + 1);
        target_ns = 0;
    } else {
        target_ns = atoll(argv[3]) * 1000000LL;
        if (target_ns <= 0)
            target_ns = 1000000LL;
    }

    dirfd_c = open(dir_path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dirfd_c < 0)
        die("open", dir_path);

    for (k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        int wanted = argc == 4;
        for (i = 4; i < argc; i++)
            if (strcmp(argv[i], cases[k].name) == 0)
                wanted = 1;
        if (wanted)
            run_case(&cases[k], target_ns, fixed_iters);
    }
    return 0;
}
