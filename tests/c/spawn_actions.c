/* posix_spawn file actions: an open outside the root and a chdir. Prints
 * "addopen <ret>", "addchdir <ret>", "spawn <ret>" (return values are errnos). */
#define _GNU_SOURCE
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <sys/wait.h>

extern char **environ;

int main(int argc, char **argv) {
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    int a = posix_spawn_file_actions_addopen(&fa, 1, argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int c = posix_spawn_file_actions_addchdir_np(&fa, argv[2]);
    printf("addopen %d\naddchdir %d\n", a, c);
    fflush(stdout);
    pid_t pid;
    char *args[] = {"/bin/echo", "spawned", NULL};
    int s = posix_spawn(&pid, "/bin/echo", &fa, NULL, args, environ);
    if (s == 0) waitpid(pid, NULL, 0);
    printf("spawn %d\n", s);
    return 0;
}
