/* fd_swap LINK OUTSIDE TRIES: the descriptor-number race on the library's
 * own route. LINK is a symlink to a file inside the root (a symlink, so
 * the open takes the route through an O_PATH descriptor the library holds
 * and reopens by its /proc/self/fd/N name). A thread dup2()s an O_PATH
 * descriptor of OUTSIDE (an O_PATH open is not checked; dup2 and close
 * are not hooked) over the numbers the library takes for what it holds,
 * again and again, while the main thread opens LINK O_WRONLY|O_TRUNC and
 * writes to it TRIES times. If the library acted through a number the thread
 * replaced, OUTSIDE is truncated or written.
 * Prints "tries=N opened=K": the test checks OUTSIDE itself. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int outside_fd;
static volatile int stop;

/* The library takes the lowest free number from 200 up for what it
 * holds; the thread puts OUTSIDE at each of the first few, for a moment,
 * then frees the number again for the library to take next. */
static void *swap(void *arg) {
    (void)arg;
    while (!stop) {
        for (int n = 200; n <= 206 && !stop; n++) {
            if (dup3(outside_fd, n, O_CLOEXEC) < 0) continue;
            for (volatile int i = 0; i < 200; i++) {
            }
            close(n);
        }
    }
    return NULL;
}

int main(int argc, char **argv) {
    if (argc != 4) {
        fprintf(stderr, "usage: fd_swap LINK OUTSIDE TRIES\n");
        return 2;
    }
    int tries = atoi(argv[3]);
    /* Out of the thread's range. */
    int o = open(argv[2], O_PATH | O_CLOEXEC);
    if (o < 0) {
        perror("open outside");
        return 2;
    }
    outside_fd = fcntl(o, F_DUPFD_CLOEXEC, 100);
    close(o);
    pthread_t t;
    pthread_create(&t, NULL, swap, NULL);
    int opened = 0;
    for (int i = 0; i < tries; i++) {
        int fd = open(argv[1], O_WRONLY | O_TRUNC | O_CLOEXEC);
        if (fd < 0) continue;
        opened++;
        if (write(fd, "inside\n", 7) < 0) {
        }
        close(fd);
    }
    stop = 1;
    pthread_join(t, NULL);
    printf("tries=%d opened=%d\n", tries, opened);
    return 0;
}
