/* Namespaces and mounts (issue 27 item 3).
 *
 *   mounts [-u] MODE OUT MNT
 *
 * -u: first become uid and gid 65534 (the tests run as root).
 * A mode gets into a mount namespace of its own (or not, if refused), then
 * bind-mounts OUT onto MNT (a directory inside the box), reads MNT/secret
 * and creates MNT/planted: outside the box, if the mount happened. One line
 * per step: "STEP RESULT ERRNO [DATA]".
 *
 *   userns, userns_sys     unshare(CLONE_NEWUSER|CLONE_NEWNS), then mount
 *                          (libc, then syscall())
 *   clone, clone_sys, clone3
 *                          a child in new namespaces does the same
 *   setns PID              joins process PID's user and mount namespaces,
 *                          where OUT is already mounted on MNT ("NS-open E"
 *                          says whether each could be opened at all)
 *   tree, tree_sys         (root) open_tree(OUT, OPEN_TREE_CLONE) and
 *                          move_mount onto MNT, the new mount API
 *   mount_sys              (root) syscall(SYS_mount)
 *   acct, acct_sys FILE    (root) process accounting into FILE (MNT unused)
 *   misc, misc_sys         (root) pivot_root, umount2, swapon, swapoff,
 *                          quotactl, fsopen, fspick, fsconfig, fsmount,
 *                          mount_setattr, umount or (syscall) open_tree_attr
 *                          and quotactl_fd, chroot: each refused, or
 *                          failing harmlessly (OUT names a plain file, MNT
 *                          no mount point; chroot moves this process only)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/mount.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/acct.h>
#include <sys/mount.h>
#include <sys/quota.h>
#include <sys/swap.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef SYS_clone3
#define SYS_clone3 435
#endif

static const char *out, *mnt;
static int sys;

static void show(const char *step, long r, const char *data) {
    printf("%s %ld %d%s%s\n", step, r, r < 0 ? errno : 0, data ? " " : "", data ? data : "");
    fflush(stdout);
}

static void put(const char *path, const char *text) {
    int fd = open(path, O_WRONLY);
    if (fd >= 0) {
        write(fd, text, strlen(text));
        close(fd);
    }
}

/* In a new user namespace: map this user as its root, so files can be
 * made (what `unshare -Ur` does). */
static void map_self(uid_t uid, gid_t gid) {
    char line[64];
    put("/proc/self/setgroups", "deny");
    snprintf(line, sizeof line, "0 %u 1", uid);
    put("/proc/self/uid_map", line);
    snprintf(line, sizeof line, "0 %u 1", gid);
    put("/proc/self/gid_map", line);
}

/* What MNT/secret holds, if anything. */
static void read_secret(void) {
    char path[4096], buf[128] = {0};
    snprintf(path, sizeof path, "%s/secret", mnt);
    errno = 0;
    int fd = open(path, O_RDONLY);
    if (fd >= 0) {
        ssize_t n = read(fd, buf, sizeof buf - 1);
        if (n > 0)
            buf[strcspn(buf, "\n")] = 0;
        close(fd);
    }
    show("read", fd, fd >= 0 ? buf : NULL);
}

/* MNT/planted, made: outside the box if OUT is mounted there. */
static void plant(void) {
    char path[4096];
    snprintf(path, sizeof path, "%s/planted", mnt);
    errno = 0;
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0644);
    show("create", fd, NULL);
    if (fd >= 0)
        close(fd);
}

/* The bind mount and what it gives. */
static void bind_and_use(void) {
    errno = 0;
    long r = sys ? syscall(SYS_mount, out, mnt, NULL, MS_BIND, NULL)
                 : mount(out, mnt, NULL, MS_BIND, NULL);
    show("mount", r, NULL);
    read_secret();
    plant();
}

static uid_t uid0;
static gid_t gid0;

static int child(void *arg) {
    (void)arg;
    map_self(uid0, gid0);
    bind_and_use();
    return 0;
}

static void wait_child(long pid) {
    if (pid > 0) {
        int st;
        waitpid(pid, &st, __WALL);
    }
}

static void in_new_namespaces(const char *mode) {
    int flags = CLONE_NEWUSER | CLONE_NEWNS;
    long r;
    errno = 0;
    if (!strcmp(mode, "userns")) {
        r = sys ? syscall(SYS_unshare, flags) : unshare(flags);
        show("unshare", r, NULL);
        if (r == 0)
            map_self(uid0, gid0);
        bind_and_use();
        return;
    }
    if (!strcmp(mode, "clone") && !sys) {
        static char stack[256 * 1024];
        r = clone(child, stack + sizeof stack, flags | SIGCHLD, NULL);
        show("clone", r, NULL);
    } else if (!strcmp(mode, "clone")) {
        r = syscall(SYS_clone, (long)(flags | SIGCHLD), 0L, 0L, 0L, 0L);
        if (r == 0) {
            child(NULL);
            _exit(0);
        }
        show("clone", r, NULL);
    } else {
        struct {
            uint64_t flags, pidfd, child_tid, parent_tid, exit_signal, stack, stack_size, tls;
        } args = {.flags = (uint64_t)flags, .exit_signal = SIGCHLD};
        r = syscall(SYS_clone3, &args, sizeof args);
        if (r == 0) {
            child(NULL);
            _exit(0);
        }
        show("clone3", r, NULL);
    }
    if (r > 0) {
        wait_child(r);
        return;
    }
    /* Refused: no new namespaces; the mount is tried all the same. */
    bind_and_use();
}

static void join(const char *pid) {
    const char *names[] = {"user", "mnt"};
    for (int i = 0; i < 2; i++) {
        char path[64];
        snprintf(path, sizeof path, "/proc/%s/ns/%s", pid, names[i]);
        int fd = open(path, O_RDONLY);
        printf("%s-open %d\n", names[i], fd < 0 ? errno : 0);
        if (fd < 0)
            continue;
        errno = 0;
        long r = sys ? syscall(SYS_setns, fd, 0) : setns(fd, 0);
        show(names[i], r, NULL);
        if (fd >= 0)
            close(fd);
    }
    read_secret();
    plant();
}

static void tree(void) {
    errno = 0;
    long fd = sys ? syscall(SYS_open_tree, AT_FDCWD, out, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC)
                  : open_tree(AT_FDCWD, out, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
    show("open_tree", fd, NULL);
    /* With the clone refused, the move is tried with the cwd. */
    int from = fd >= 0 ? (int)fd : AT_FDCWD;
    const char *from_path = fd >= 0 ? "" : out;
    errno = 0;
    long r = sys ? syscall(SYS_move_mount, from, from_path, AT_FDCWD, mnt, MOVE_MOUNT_F_EMPTY_PATH)
                 : move_mount(from, from_path, AT_FDCWD, mnt, MOVE_MOUNT_F_EMPTY_PATH);
    show("move_mount", r, NULL);
    read_secret();
}

static void accounting(const char *file) {
    errno = 0;
    long r = sys ? syscall(SYS_acct, file) : acct(file);
    show("acct", r, NULL);
    pid_t c = fork();
    if (c == 0)
        _exit(0);
    wait_child(c);
    if (r == 0)
        sys ? syscall(SYS_acct, NULL) : acct(NULL);
}

static void misc(void) {
    long r;
#define TRY(name, libc_call, sys_call)                                         \
    do {                                                                       \
        errno = 0;                                                             \
        r = sys ? (sys_call) : (libc_call);                                    \
        show(name, r, NULL);                                                   \
    } while (0)
    /* `out` is a plain file and `mnt` a directory that is no mount point:
     * each call the kernel runs fails without changing anything (but for
     * chroot, which only moves this process's root). */
    TRY("pivot_root", syscall(SYS_pivot_root, mnt, mnt), syscall(SYS_pivot_root, mnt, mnt));
    TRY("umount2", umount2(mnt, 0), syscall(SYS_umount2, mnt, 0));
    TRY("swapon", swapon(out, 0), syscall(SYS_swapon, out, 0));
    TRY("swapoff", swapoff(out), syscall(SYS_swapoff, out));
    TRY("quotactl", quotactl(QCMD(Q_GETFMT, USRQUOTA), out, 0, NULL),
        syscall(SYS_quotactl, QCMD(Q_GETFMT, USRQUOTA), out, 0, NULL));
    TRY("fsopen", fsopen("tmpfs", FSOPEN_CLOEXEC), syscall(SYS_fsopen, "tmpfs", FSOPEN_CLOEXEC));
    TRY("fspick", fspick(AT_FDCWD, mnt, 0), syscall(SYS_fspick, AT_FDCWD, mnt, 0));
    TRY("fsconfig", fsconfig(-1, FSCONFIG_CMD_CREATE, NULL, NULL, 0),
        syscall(SYS_fsconfig, -1, FSCONFIG_CMD_CREATE, NULL, NULL, 0));
    TRY("fsmount", fsmount(-1, 0, 0), syscall(SYS_fsmount, -1, 0, 0));
    TRY("mount_setattr", mount_setattr(AT_FDCWD, mnt, 0, NULL, 0),
        syscall(SYS_mount_setattr, AT_FDCWD, mnt, 0, NULL, 0));
    if (sys) {
        TRY("open_tree_attr", 0, syscall(467, AT_FDCWD, mnt, 0, NULL, 0));
        TRY("quotactl_fd", 0, syscall(SYS_quotactl_fd, -1, QCMD(Q_GETFMT, USRQUOTA), 0, NULL));
    } else {
        TRY("umount", umount(mnt), 0);
    }
    TRY("chroot", chroot(mnt), syscall(SYS_chroot, mnt));
}

int main(int argc, char **argv) {
    int a = 1;
    uid0 = getuid();
    gid0 = getgid();
    if (a < argc && !strcmp(argv[a], "-u")) {
        if (setgroups(0, NULL) != 0 || setgid(65534) != 0 || setuid(65534) != 0) {
            perror("setuid");
            return 3;
        }
        uid0 = gid0 = 65534;
        a++;
    }
    if (argc - a < 2)
        return 2;
    const char *mode = argv[a];
    size_t n = strlen(mode);
    if (n > 4 && !strcmp(mode + n - 4, "_sys")) {
        sys = 1;
        static char base[32];
        snprintf(base, sizeof base, "%.*s", (int)(n - 4), mode);
        mode = base;
    }
    if (!strcmp(mode, "acct"))
        accounting(argv[a + 1]);
    else if (argc - a < 3)
        return 2;
    else if (!strcmp(mode, "setns")) {
        if (argc - a < 4)
            return 2;
        out = argv[a + 2];
        mnt = argv[a + 3];
        join(argv[a + 1]);
    } else {
        out = argv[a + 1];
        mnt = argv[a + 2];
        if (!strcmp(mode, "userns") || !strcmp(mode, "clone") || !strcmp(mode, "clone3"))
            in_new_namespaces(mode);
        else if (!strcmp(mode, "tree"))
            tree();
        else if (!strcmp(mode, "mount"))
            bind_and_use();
        else if (!strcmp(mode, "misc"))
            misc();
        else
            return 2;
    }
    return 0;
}
