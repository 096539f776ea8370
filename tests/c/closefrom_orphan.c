/* Forks and exits at once; the child closes every inherited fd from 3 up,
 * waits until it is orphaned (its parent, holding the report pipe, is
 * gone), then execs `sh -c argv[1]`. */
#define _GNU_SOURCE
#include <stdlib.h>
#include <unistd.h>

extern char **environ;

int main(int argc, char **argv) {
    if (argc < 2)
        return 2;
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0)
        return 3;
    if (pid == 0) {
        closefrom(3);
        for (int i = 0; i < 2000 && getppid() == parent; i++)
            usleep(5000);
        char *args[] = {"sh", "-c", argv[1], NULL};
        execve("/bin/sh", args, environ);
        _exit(97);
    }
    return 0;
}
