/* exec_swap DIR TRIES HOW: a program swapped in between the exec check and
 * the exec (issue 27 item 5). DIR holds "dyn" (dynamic, exits 7) and
 * "stat" (static, exits 42). A racer process renames each over DIR/target
 * in turn, as fast as it can, while this process starts TRIES children that
 * exec DIR/target HOW:
 *   execv     execv("./target")
 *   execvp    execvp("target") with PATH=DIR
 *   execveat  execveat(dirfd of DIR, "target")
 *   fexecve   open("./target") then fexecve on that fd
 *   fdrace    execv("./target") while a thread of the child closes and
 *             reopens every descriptor from 3 to 40 on "stat" (the
 *             library's own temporaries among them)
 *   spawn     posix_spawn("./target")
 * Prints "tries=N static=S dynamic=D refused=R other=O": S is how many
 * times the static program really ran. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static void swap_forever(void) {
    for (;;) {
        unlink("t.a");
        if (link("dyn", "t.a") == 0) rename("t.a", "target");
        unlink("t.b");
        if (link("stat", "t.b") == 0) rename("t.b", "target");
    }
}

static void *steal_fds(void *arg) {
    (void)arg;
    for (;;) {
        for (int n = 3; n <= 260; n = n == 40 ? 200 : n + 1) {
            int fd = open("stat", O_PATH | O_CLOEXEC);
            if (fd < 0) continue;
            if (fd != n) {
                close(n);
                dup3(fd, n, O_CLOEXEC);
                close(fd);
            }
        }
    }
    return NULL;
}

static void child(const char *how, int dirfd) {
    char *args[] = {"target", NULL};
    if (!strcmp(how, "execv") || !strcmp(how, "fdrace")) {
        if (!strcmp(how, "fdrace")) {
            pthread_t t;
            pthread_create(&t, NULL, steal_fds, NULL);
            usleep(100);
        }
        execv("./target", args);
    } else if (!strcmp(how, "execvp")) {
        execvp("target", args);
    } else if (!strcmp(how, "execveat")) {
        syscall(SYS_execveat, dirfd, "target", args, environ, 0);
    } else if (!strcmp(how, "fexecve")) {
        int fd = open("./target", O_RDONLY | O_CLOEXEC);
        if (fd >= 0) fexecve(fd, args, environ);
    }
    _exit(errno == EACCES ? 99 : 98);
}

int main(int argc, char **argv) {
    if (argc != 4) {
        fprintf(stderr, "usage: exec_swap DIR TRIES HOW\n");
        return 2;
    }
    if (chdir(argv[1]) != 0) {
        perror("chdir");
        return 2;
    }
    int tries = atoi(argv[2]);
    const char *how = argv[3];
    setenv("PATH", argv[1], 1);
    int dirfd = open(".", O_PATH | O_DIRECTORY);
    unlink("target");
    if (link("dyn", "target") != 0) {
        perror("link");
        return 2;
    }
    pid_t racer = fork();
    if (racer == 0) swap_forever();
    int stat_ran = 0, dyn_ran = 0, refused = 0, other = 0;
    for (int i = 0; i < tries; i++) {
        pid_t pid;
        if (!strcmp(how, "spawn")) {
            char *args[] = {"target", NULL};
            int e = posix_spawn(&pid, "./target", NULL, NULL, args, environ);
            if (e != 0) {
                if (e == EACCES) refused++; else other++;
                continue;
            }
        } else {
            pid = fork();
            if (pid == 0) child(how, dirfd);
        }
        int st;
        if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st)) {
            other++;
            continue;
        }
        switch (WEXITSTATUS(st)) {
        case 42: stat_ran++; break;
        case 7: dyn_ran++; break;
        case 99: refused++; break;
        default: other++;
        }
    }
    kill(racer, SIGKILL);
    waitpid(racer, NULL, 0);
    printf("tries=%d static=%d dynamic=%d refused=%d other=%d\n", tries, stat_ran, dyn_ran,
           refused, other);
    return 0;
}
