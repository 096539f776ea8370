/* Closes every descriptor, 0 to the last (close_range(0, ~0U, 0)), then
 * tries to read argv[1] and to create argv[2], and runs `cat argv[1]` and
 * `touch argv[2]` as children, with the standard descriptors on /dev/null.
 * Exits 0 when both of its own calls failed,
 * as a program that swallows its errors does. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

static void run(char *const argv[]) {
    pid_t pid = fork();
    if (pid == 0) {
        execvp(argv[0], argv);
        _exit(97);
    }
    if (pid > 0)
        waitpid(pid, NULL, 0);
}

int main(int argc, char **argv) {
    if (argc < 3)
        return 2;
    if (close_range(0, ~0U, 0) != 0)
        return 3;
    /* As a daemon does: the standard descriptors on /dev/null. */
    for (int i = 0; i < 3; i++)
        if (open("/dev/null", O_RDWR) != i)
            return 6;
    if (open(argv[1], O_RDONLY) >= 0)
        return 4;
    if (open(argv[2], O_WRONLY | O_CREAT, 0644) >= 0)
        return 5;
    char *cat[] = {"cat", argv[1], NULL};
    run(cat);
    char *touch[] = {"touch", argv[2], NULL};
    run(touch);
    return 0;
}
