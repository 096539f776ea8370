/* posix_spawn file actions whose path changes between the add and the
 * spawn. Run in the workspace; `lnk` is a symlink to `sub`.
 *   retarget:        addopen("lnk/x"), then lnk -> OUT, then spawn
 *   chdir_retarget:  addchdir("lnk") + addopen("y"), then lnk -> OUT, spawn
 *   chdir_ok:        addchdir("sub") + addopen("y"), spawn (stays inside)
 * Prints "add <ret>" and "spawn <ret>" (errnos); the child is /bin/echo
 * with its stdout on the opened file. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

int main(int argc, char **argv) {
    if (argc != 3)
        return 2;
    const char *mode = argv[1], *out = argv[2];
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    int a = 0;
    int flags = O_WRONLY | O_CREAT | O_TRUNC;
    if (!strcmp(mode, "retarget")) {
        a = posix_spawn_file_actions_addopen(&fa, 1, "lnk/x", flags, 0644);
    } else if (!strcmp(mode, "chdir_retarget")) {
        a = posix_spawn_file_actions_addchdir_np(&fa, "lnk");
        if (!a)
            a = posix_spawn_file_actions_addopen(&fa, 1, "y", flags, 0644);
    } else if (!strcmp(mode, "chdir_ok")) {
        a = posix_spawn_file_actions_addchdir_np(&fa, "sub");
        if (!a)
            a = posix_spawn_file_actions_addopen(&fa, 1, "y", flags, 0644);
    } else {
        return 2;
    }
    printf("add %d\n", a);
    fflush(stdout);
    if (strcmp(mode, "chdir_ok") != 0) {
        /* The retarget: no race, the link simply changes before the spawn. */
        if (unlink("lnk") != 0 || symlink(out, "lnk") != 0) {
            perror("retarget");
            return 3;
        }
    }
    pid_t pid;
    char *args[] = {"/bin/echo", "spawned", NULL};
    int s = posix_spawn(&pid, "/bin/echo", &fa, NULL, args, environ);
    if (s == 0)
        waitpid(pid, NULL, 0);
    printf("spawn %d\n", s);
    return 0;
}
