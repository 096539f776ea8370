/* fdrace: threads making descriptors at once, under the library's checks
 * (opens through a symlink, creat, fopen, opendir of /proc, mkdir and
 * rmdir), each checking every descriptor it holds is still what it opened
 * (device and inode) until it closes it: a descriptor the library closed,
 * moved or reused under a thread shows as a mismatch. Prints `ok N` or
 * the first mismatch. The cwd holds a file `f` and a symlink `ln` -> f. */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static volatile int bad;

static int same(int fd, const struct stat *want) {
    struct stat st;
    return fstat(fd, &st) == 0 && st.st_dev == want->st_dev && st.st_ino == want->st_ino;
}

static void *work(void *arg) {
    long id = (long)arg;
    char name[64], dir[64];
    snprintf(name, sizeof name, "c%ld", id);
    snprintf(dir, sizeof dir, "m%ld", id);
    for (int i = 0; i < 300 && !bad; i++) {
        int fds[4];
        struct stat sts[4];
        FILE *fp = fopen("ln", "r");
        DIR *dp = opendir("/proc/self/fd");
        fds[0] = open("ln", O_RDONLY);
        fds[1] = creat(name, 0644);
        fds[2] = fp ? fileno(fp) : -1;
        fds[3] = dp ? dirfd(dp) : -1;
        for (int k = 0; k < 4; k++)
            if (fds[k] < 0 || fstat(fds[k], &sts[k])) {
                dprintf(1, "thread %ld: call %d failed\n", id, k);
                bad = 1;
                return NULL;
            }
        mkdir(dir, 0755);
        rmdir(dir);
        for (int k = 0; k < 4; k++)
            if (!same(fds[k], &sts[k])) {
                dprintf(1, "thread %ld: fd %d (call %d) changed under it\n", id, fds[k], k);
                bad = 1;
            }
        close(fds[0]);
        close(fds[1]);
        fclose(fp);
        closedir(dp);
        unlink(name);
    }
    return NULL;
}

int main(void) {
    pthread_t t[6];
    for (long i = 0; i < 6; i++) pthread_create(&t[i], NULL, work, (void *)i);
    for (int i = 0; i < 6; i++) pthread_join(t[i], NULL);
    if (!bad) printf("ok 6\n");
    return bad;
}
