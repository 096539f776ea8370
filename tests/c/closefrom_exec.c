/* Forks; the child closes every inherited fd from 3 up (closefrom), then
 * execs `sh -c argv[1]` with the process's environment. Exits with the
 * child's status. */
#define _GNU_SOURCE
#include <stdlib.h>
#include <unistd.h>
#include <sys/wait.h>

extern char **environ;

int main(int argc, char **argv) {
    if (argc < 2)
        return 2;
    pid_t pid = fork();
    if (pid < 0)
        return 3;
    if (pid == 0) {
        closefrom(3);
        char *args[] = {"sh", "-c", argv[1], NULL};
        execve("/bin/sh", args, environ);
        _exit(97);
    }
    int st;
    if (waitpid(pid, &st, 0) < 0)
        return 4;
    return WIFEXITED(st) ? WEXITSTATUS(st) : 90;
}
