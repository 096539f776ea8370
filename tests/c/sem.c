/* Named semaphores: `sem create NAME` (create; a child runs `sem open NAME`,
 * which opens it by name, shows the file it mapped and posts; wait for that
 * post; unlink), `sem open NAME`, `sem unlink NAME`. Prints each step's
 * result. */
#include <errno.h>
#include <fcntl.h>
#include <semaphore.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* The /dev/shm file this process has mapped for NAME, from /proc/self/maps. */
static void show_mapped(const char *name) {
    char line[4096];
    FILE *f = fopen("/proc/self/maps", "r");
    if (!f) {
        printf("maps errno %d\n", errno);
        return;
    }
    while (fgets(line, sizeof line, f)) {
        char *p = strstr(line, "/dev/shm/");
        if (p && strstr(p, name)) {
            p[strcspn(p, "\n")] = 0;
            printf("mapped %s\n", p);
        }
    }
    fclose(f);
}

int main(int argc, char **argv) {
    if (argc != 3)
        return 2;
    char name[512];
    snprintf(name, sizeof name, "/%s", argv[2]);
    if (strcmp(argv[1], "unlink") == 0) {
        int r = sem_unlink(name);
        printf("sem_unlink %d errno %d\n", r, r ? errno : 0);
        return 0;
    }
    if (strcmp(argv[1], "open") == 0) {
        sem_t *s = sem_open(name, 0);
        if (s == SEM_FAILED) {
            printf("sem_open failed errno %d\n", errno);
            return 0;
        }
        show_mapped(argv[2]);
        printf("sem_post %d\n", sem_post(s));
        return 0;
    }
    sem_t *s = sem_open(name, O_CREAT | O_EXCL, 0600, 0);
    if (s == SEM_FAILED) {
        printf("sem_open failed errno %d\n", errno);
        return 0;
    }
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        /* Opened by name in another program of the tree. */
        execl(argv[0], argv[0], "open", argv[2], (char *)NULL);
        _exit(127);
    }
    int st = 0;
    waitpid(pid, &st, 0);
    printf("child exit %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
    if (WIFEXITED(st) && WEXITSTATUS(st) == 0 && sem_wait(s) == 0)
        printf("waited for the child's post\n");
    sem_post(s);
    if (sem_wait(s) == 0)
        printf("posted and waited\n");
    int r = sem_unlink(name);
    printf("sem_unlink %d errno %d\n", r, r ? errno : 0);
    sem_close(s);
    return 0;
}
