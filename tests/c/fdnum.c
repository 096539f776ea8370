/* fdnum HOLE CALL: which descriptor numbers one call makes, with a hole in
 * the table at HOLE.
 *
 * In the current directory (which holds a file `f`, a directory `d` with a
 * file `d/g` and a symlink `d/lg` -> g, a symlink `ln` -> f, a symlink
 * `ld` -> d and a dangling symlink `lc` -> c_target), fds 0-9 are filled
 * (with /dev/null, after the standard three), HOLE is closed, CALL is made,
 * and one line is written to fd 2:
 *   start=S r=R [r2=R2] errno=E next=N
 * S: the lowest free number before the fill (a descriptor the library
 * opened at load would show here); R, R2: the numbers the call made (-1
 * when it failed); E: its errno; N: the number a plain open gets after
 * the call (a descriptor the call left open would show here). The same
 * line is expected bare and guarded. CALL "child" is the program that
 * posix_spawn runs: it prints the number its first open gets. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <sys/mman.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

extern int __open_2(const char *, int);
extern char **environ;

/* Descriptors made before the fill, moved where no hole is. */
enum { DIRFD = 30, LISTEN = 31, CLIENT = 32, MOUNT = 33 };

static void keep(int fd, int at) {
    if (fd < 0 || dup2(fd, at) != at) {
        dprintf(2, "setup: %s\n", strerror(errno));
        exit(2);
    }
    close(fd);
}

static struct sockaddr_un addr(socklen_t *len) {
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    int n = snprintf(a.sun_path + 1, sizeof a.sun_path - 1, "fdnum-%d", getpid());
    *len = offsetof(struct sockaddr_un, sun_path) + 1 + n;
    return a;
}

static int lowest(void) {
    int fd = fcntl(2, F_DUPFD, 0);
    close(fd);
    return fd;
}

static int dir_fd(DIR *d) { return d ? dirfd(d) : -1; }
static int file_fd(FILE *f) { return f ? fileno(f) : -1; }

int main(int argc, char **argv) {
    if (argc == 2 && !strcmp(argv[1], "child")) {
        dprintf(2, "child=%d\n", open("/dev/null", O_RDONLY));
        return 0;
    }
    if (argc != 3) return 2;
    int hole = atoi(argv[1]);
    const char *call = argv[2];
    int start = lowest();

    keep(open("d", O_RDONLY | O_DIRECTORY), DIRFD);
    keep(open(".", O_RDONLY | O_DIRECTORY), MOUNT);
    socklen_t alen;
    struct sockaddr_un a = addr(&alen);
    int l = socket(AF_UNIX, SOCK_STREAM, 0);
    if (bind(l, (struct sockaddr *)&a, alen) || listen(l, 1)) return 2;
    keep(l, LISTEN);
    int c = socket(AF_UNIX, SOCK_STREAM, 0);
    if (connect(c, (struct sockaddr *)&a, alen)) return 2;
    keep(c, CLIENT);
    struct file_handle *fh = malloc(sizeof *fh + MAX_HANDLE_SZ);
    fh->handle_bytes = MAX_HANDLE_SZ;
    int mount_id;
    int have_handle = name_to_handle_at(AT_FDCWD, "f", fh, &mount_id, 0) == 0;
    char name[64];
    snprintf(name, sizeof name, "/fdnum-%d", getpid());

    for (int fd = 3; fd <= 9; fd++)
        if (fcntl(fd, F_GETFD) < 0 && open("/dev/null", O_RDONLY) != fd) return 2;
    close(hole);

    int r = -1, r2 = -2, fds[2];
    char tmpl[] = "tXXXXXX", tmpls[] = "tXXXXXX.s";
    sigset_t mask;
    sigemptyset(&mask);
    sigaddset(&mask, SIGUSR1);
    errno = 0;
    if (!strcmp(call, "open")) r = open("f", O_RDONLY);
    else if (!strcmp(call, "open-creat")) r = open("n_new", O_CREAT | O_WRONLY, 0644);
    else if (!strcmp(call, "open-excl")) r = open("n_excl", O_CREAT | O_EXCL | O_WRONLY, 0644);
    else if (!strcmp(call, "open-symlink")) r = open("ln", O_RDONLY);
    else if (!strcmp(call, "open-symlink-creat")) r = open("lc", O_CREAT | O_WRONLY, 0644);
    else if (!strcmp(call, "open-proc")) r = open("/proc/self/status", O_RDONLY);
    else if (!strcmp(call, "open64")) r = open64("ln", O_RDONLY);
    else if (!strcmp(call, "__open_2")) r = __open_2("ln", O_RDONLY);
    else if (!strcmp(call, "openat")) r = openat(DIRFD, "g", O_RDONLY);
    else if (!strcmp(call, "openat-symlink")) r = openat(DIRFD, "lg", O_RDONLY);
    else if (!strcmp(call, "creat")) r = creat("c_new", 0644);
    else if (!strcmp(call, "creat-existing")) r = creat("f", 0644);
    else if (!strcmp(call, "creat-symlink")) r = creat("lc", 0644);
    else if (!strcmp(call, "syscall-open")) r = syscall(SYS_open, "ln", O_RDONLY);
    else if (!strcmp(call, "syscall-openat")) r = syscall(SYS_openat, AT_FDCWD, "ln", O_RDONLY);
    else if (!strcmp(call, "syscall-creat")) r = syscall(SYS_creat, "sc_new", 0644);
    else if (!strcmp(call, "mkstemp")) r = mkstemp(tmpl);
    else if (!strcmp(call, "mkostemp")) r = mkostemp(tmpl, O_CLOEXEC);
    else if (!strcmp(call, "mkstemps")) r = mkstemps(tmpls, 2);
    else if (!strcmp(call, "tmpfile")) r = file_fd(tmpfile());
    else if (!strcmp(call, "opendir")) r = dir_fd(opendir("d"));
    else if (!strcmp(call, "opendir-symlink")) r = dir_fd(opendir("ld"));
    else if (!strcmp(call, "opendir-proc")) r = dir_fd(opendir("/proc/self/fd"));
    else if (!strcmp(call, "fdopendir")) r = dir_fd(fdopendir(open("ld", O_RDONLY | O_DIRECTORY)));
    else if (!strcmp(call, "fopen")) r = file_fd(fopen("f", "r"));
    else if (!strcmp(call, "fopen-w")) r = file_fd(fopen("w_new", "w"));
    else if (!strcmp(call, "fopen-symlink")) r = file_fd(fopen("ln", "r"));
    else if (!strcmp(call, "fopen-proc")) r = file_fd(fopen("/proc/self/status", "re"));
    else if (!strcmp(call, "freopen")) r = file_fd(freopen("ln", "r", stdin));
    else if (!strcmp(call, "popen")) r = file_fd(popen("true", "r"));
    else if (!strcmp(call, "socket")) r = socket(AF_UNIX, SOCK_STREAM, 0);
    else if (!strcmp(call, "socketpair")) {
        if (socketpair(AF_UNIX, SOCK_STREAM, 0, fds) == 0) r = fds[0], r2 = fds[1];
    } else if (!strcmp(call, "accept")) r = accept(LISTEN, NULL, NULL);
    else if (!strcmp(call, "dup")) r = dup(2);
    else if (!strcmp(call, "fcntl-dupfd")) r = fcntl(2, F_DUPFD_CLOEXEC, 0);
    else if (!strcmp(call, "memfd_create")) r = memfd_create("fdnum", 0);
    else if (!strcmp(call, "shm_open")) {
        r = shm_open(name, O_CREAT | O_RDWR, 0600);
        shm_unlink(name);
    } else if (!strcmp(call, "inotify_init")) r = inotify_init();
    else if (!strcmp(call, "eventfd")) r = eventfd(0, 0);
    else if (!strcmp(call, "signalfd")) r = signalfd(-1, &mask, 0);
    else if (!strcmp(call, "timerfd_create")) r = timerfd_create(CLOCK_MONOTONIC, 0);
    else if (!strcmp(call, "epoll_create1")) r = epoll_create1(0);
    else if (!strcmp(call, "pipe")) {
        if (pipe(fds) == 0) r = fds[0], r2 = fds[1];
    } else if (!strcmp(call, "pipe2")) {
        if (pipe2(fds, O_CLOEXEC) == 0) r = fds[0], r2 = fds[1];
    } else if (!strcmp(call, "open_by_handle_at")) {
        r = have_handle ? open_by_handle_at(MOUNT, fh, O_RDONLY) : -1;
    } else if (!strcmp(call, "posix_spawn")) {
        /* The file actions open at a fixed number; the child's own first
         * open shows what the library left in its table. */
        posix_spawn_file_actions_t fa;
        posix_spawn_file_actions_init(&fa);
        posix_spawn_file_actions_addopen(&fa, 12, "ln", O_RDONLY, 0);
        posix_spawn_file_actions_addopen(&fa, 13, "c_spawn", O_CREAT | O_WRONLY, 0644);
        char *args[] = {"/proc/self/exe", "child", NULL};
        pid_t pid;
        char self[4096];
        ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
        self[n > 0 ? n : 0] = 0;
        args[0] = self;
        r = posix_spawn(&pid, self, &fa, NULL, args, environ);
        if (r == 0) waitpid(pid, NULL, 0);
        else errno = r, r = -1;
    } else {
        dprintf(2, "unknown call %s\n", call);
        return 2;
    }
    int e = r < 0 ? errno : 0;
    int next = open("/dev/null", O_RDONLY);
    if (r2 == -2)
        dprintf(2, "start=%d r=%d errno=%d next=%d\n", start, r, e, next);
    else
        dprintf(2, "start=%d r=%d r2=%d errno=%d next=%d\n", start, r, r2, e, next);
    return 0;
}
