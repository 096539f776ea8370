/* Many threads refused many times: argv[1] threads each try argv[2] times
 * to create argv[3] (refused), as fast as they can. Exits 0 when every try
 * was refused, 1 when one was not. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

static long tries;
static const char *path;
static volatile int bad;

static void *work(void *arg) {
    (void)arg;
    for (long i = 0; i < tries; i++) {
        int fd = open(path, O_WRONLY | O_CREAT, 0644);
        if (fd >= 0 || errno != EACCES) {
            bad = 1;
            if (fd >= 0)
                close(fd);
        }
    }
    return NULL;
}

int main(int argc, char **argv) {
    if (argc < 4)
        return 2;
    int n = atoi(argv[1]);
    tries = atol(argv[2]);
    path = argv[3];
    pthread_t t[64];
    if (n < 1 || n > 64)
        return 2;
    for (int i = 0; i < n; i++)
        if (pthread_create(&t[i], NULL, work, NULL) != 0)
            return 3;
    for (int i = 0; i < n; i++)
        pthread_join(t[i], NULL);
    return bad;
}
