/* fd-based calls after the object an fd names was replaced or moved, for
 * tests/races.rs (the path cache keyed by device and inode).
 *
 * Steps marked "raw" use a system call instruction, unseen by an
 * LD_PRELOAD library: they stand for another process (one the library in
 * this process cannot see) changing the tree. Every other call is libc.
 * Prints `STEP ret errno` lines and `reuse K` / `noreuse`.
 *
 *   pathcache fchmod-reuse OLDDIR NEWDIR
 *       open OLDDIR/old O_RDONLY, fchmod it (the library learns its path),
 *       close, raw unlink; raw create NEWDIR/new until it gets the old
 *       inode number; open NEWDIR/new O_RDONLY and fchmod 0600.
 *   pathcache dirfd-reuse OLDPARENT NEWPARENT
 *       open OLDPARENT/dd O_RDONLY (no O_DIRECTORY), openat(fd, "f0",
 *       O_CREAT); raw remove both; raw mkdir NEWPARENT/e<K> until it gets
 *       the old inode number; raw mkdir OLDPARENT/dd again (another
 *       directory at the old path); open NEWPARENT/e<K> O_RDONLY and
 *       openat(fd, "x", O_CREAT).
 *   pathcache renamed-child DIR NEWNAME
 *       open DIR, openat(fd, "f0", O_CREAT); a forked (so guarded) child
 *       renames DIR to NEWNAME and makes a new DIR; openat(fd, "f1", O_CREAT).
 *   pathcache renamed-raw DIR NEWNAME
 *       the same with a raw rename and mkdir.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static long rsys(long n, long a, long b, long c, long d, long e) {
    long ret;
#if defined(__x86_64__)
    register long r10 __asm__("r10") = d;
    register long r8 __asm__("r8") = e;
    __asm__ volatile("syscall"
                     : "=a"(ret)
                     : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8)
                     : "rcx", "r11", "memory");
#elif defined(__aarch64__)
    register long x8 __asm__("x8") = n;
    register long x0 __asm__("x0") = a;
    register long x1 __asm__("x1") = b;
    register long x2 __asm__("x2") = c;
    register long x3 __asm__("x3") = d;
    register long x4 __asm__("x4") = e;
    __asm__ volatile("svc 0" : "+r"(x0) : "r"(x8), "r"(x1), "r"(x2), "r"(x3), "r"(x4) : "memory");
    ret = x0;
#else
#error "pathcache.c: raw system calls for x86_64 and aarch64 only"
#endif
    return ret;
}

#define R_OPENAT(p, f, m) rsys(SYS_openat, AT_FDCWD, (long)(p), (f), (m), 0)
#define R_CLOSE(fd) rsys(SYS_close, (fd), 0, 0, 0, 0)
#define R_UNLINK(p, f) rsys(SYS_unlinkat, AT_FDCWD, (long)(p), (f), 0, 0)
#define R_MKDIR(p) rsys(SYS_mkdirat, AT_FDCWD, (long)(p), 0755, 0, 0)
#define R_STAT(p, st) rsys(SYS_newfstatat, AT_FDCWD, (long)(p), (long)(st), AT_SYMLINK_NOFOLLOW, 0)
#define R_RENAME(a, b) rsys(SYS_renameat2, AT_FDCWD, (long)(a), AT_FDCWD, (long)(b), 0)
#define R_SYMLINK(t, p) rsys(SYS_symlinkat, (long)(t), AT_FDCWD, (long)(p), 0, 0)

#define MAX_TRIES 2000

static void show(const char *step, long r) {
    printf("%s %ld %d\n", step, r, r < 0 ? errno : 0);
    fflush(stdout);
}

static long wrap(long r) {
    if (r < 0 && r > -4096) {
        errno = (int)-r;
        return -1;
    }
    return r;
}

static int fchmod_reuse(const char *olddir, const char *newdir) {
    char old[4096], nu[4096], pad[4096];
    snprintf(old, sizeof old, "%s/old", olddir);
    snprintf(nu, sizeof nu, "%s/new", newdir);
    int fd = open(old, O_RDONLY);
    if (fd < 0) {
        perror(old);
        return 2;
    }
    errno = 0;
    show("old-fchmod", fchmod(fd, 0640));
    struct stat st;
    fstat(fd, &st);
    ino_t ino = st.st_ino;
    close(fd);
    if (wrap(R_UNLINK(old, 0)) < 0) {
        perror("raw unlink");
        return 2;
    }
    int k, found = -1;
    for (k = 0; k < MAX_TRIES; k++) {
        long f = R_OPENAT(nu, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0644);
        if (f < 0) {
            fprintf(stderr, "raw create %s: %ld\n", nu, f);
            return 2;
        }
        R_CLOSE(f);
        if (R_STAT(nu, &st) == 0 && st.st_ino == ino) {
            found = k;
            break;
        }
        /* Keep it (under another name) so the next create gets another inode. */
        snprintf(pad, sizeof pad, "%s/pad%d", newdir, k);
        R_RENAME(nu, pad);
    }
    for (int j = 0; j < k; j++) {
        snprintf(pad, sizeof pad, "%s/pad%d", newdir, j);
        R_UNLINK(pad, 0);
    }
    if (found < 0) {
        printf("noreuse\n");
        return 0;
    }
    printf("reuse %d\n", found);
    fd = open(nu, O_RDONLY);
    if (fd < 0) {
        perror(nu);
        return 2;
    }
    errno = 0;
    show("new-fchmod", fchmod(fd, 0600));
    close(fd);
    return 0;
}

static int dirfd_reuse(const char *oldparent, const char *newparent) {
    char old[4096], nu[4096], f0[4096];
    struct stat st;
    snprintf(old, sizeof old, "%s/dd", oldparent);
    snprintf(f0, sizeof f0, "%s/dd/f0", oldparent);
    int fd = open(old, O_RDONLY);
    if (fd < 0) {
        perror(old);
        return 2;
    }
    errno = 0;
    int f = openat(fd, "f0", O_CREAT | O_WRONLY, 0644);
    show("old-openat", f);
    if (f >= 0) close(f);
    fstat(fd, &st);
    ino_t ino = st.st_ino;
    close(fd);
    R_UNLINK(f0, 0);
    if (wrap(R_UNLINK(old, AT_REMOVEDIR)) < 0) {
        perror("raw rmdir");
        return 2;
    }
    int k, found = -1;
    for (k = 0; k < MAX_TRIES; k++) {
        snprintf(nu, sizeof nu, "%s/e%d", newparent, k);
        if (wrap(R_MKDIR(nu)) < 0) {
            perror("raw mkdir");
            return 2;
        }
        if (R_STAT(nu, &st) == 0 && st.st_ino == ino) {
            found = k;
            break;
        }
    }
    if (found < 0) {
        printf("noreuse\n");
        return 0;
    }
    printf("reuse %d\n", found);
    /* Another directory where the old one was. */
    if (wrap(R_MKDIR(old)) < 0) {
        perror("raw mkdir old");
        return 2;
    }
    fd = open(nu, O_RDONLY);
    if (fd < 0) {
        perror(nu);
        return 2;
    }
    errno = 0;
    f = openat(fd, "x", O_CREAT | O_WRONLY, 0644);
    show("new-openat", f);
    if (f >= 0) close(f);
    close(fd);
    return 0;
}

static int renamed(const char *dir, const char *newname, int by_child) {
    int fd = open(dir, O_RDONLY | O_DIRECTORY);
    if (fd < 0) {
        perror(dir);
        return 2;
    }
    errno = 0;
    int f = openat(fd, "f0", O_CREAT | O_WRONLY, 0644);
    show("before-openat", f);
    if (f >= 0) close(f);
    if (by_child) {
        pid_t pid = fork();
        if (pid == 0) {
            int a = rename(dir, newname);
            int b = mkdir(dir, 0755);
            _exit(a == 0 && b == 0 ? 0 : 1);
        }
        int status;
        waitpid(pid, &status, 0);
        show("child", WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1);
    } else {
        if (wrap(R_RENAME(dir, newname)) < 0 || wrap(R_MKDIR(dir)) < 0) {
            perror("raw rename/mkdir");
            return 2;
        }
    }
    errno = 0;
    f = openat(fd, "f1", O_CREAT | O_WRONLY, 0644);
    show("after-openat", f);
    if (f >= 0) close(f);
    close(fd);
    return 0;
}

/* The directory PARENT/D is opened; then (raw) PARENT moves to NEWPARENT
 * and a symlink PARENT -> NEWPARENT takes its place, so the old path of
 * the fd still reaches it, through a symlink. */
static int parent_symlinked(const char *parent, const char *newparent) {
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/D", parent);
    int fd = open(dir, O_RDONLY | O_DIRECTORY);
    if (fd < 0) {
        perror(dir);
        return 2;
    }
    errno = 0;
    int f = openat(fd, "f0", O_CREAT | O_WRONLY, 0644);
    show("before-openat", f);
    if (f >= 0) close(f);
    char target[8192], cwd[4096];
    if (!getcwd(cwd, sizeof cwd)) {
        perror("getcwd");
        return 2;
    }
    snprintf(target, sizeof target, "%s/%s", cwd, newparent);
    if (wrap(R_RENAME(parent, newparent)) < 0 || wrap(R_SYMLINK(target, parent)) < 0) {
        perror("raw rename/symlink");
        return 2;
    }
    errno = 0;
    f = openat(fd, "f1", O_CREAT | O_WRONLY, 0644);
    show("after-openat", f);
    if (f >= 0) close(f);
    close(fd);
    return 0;
}

int main(int argc, char **argv) {
    if (argc != 4) {
        fprintf(stderr, "usage: pathcache fchmod-reuse|dirfd-reuse|renamed-child|renamed-raw|parent-symlinked-raw A B\n");
        return 2;
    }
    if (strcmp(argv[1], "fchmod-reuse") == 0) return fchmod_reuse(argv[2], argv[3]);
    if (strcmp(argv[1], "dirfd-reuse") == 0) return dirfd_reuse(argv[2], argv[3]);
    if (strcmp(argv[1], "renamed-child") == 0) return renamed(argv[2], argv[3], 1);
    if (strcmp(argv[1], "renamed-raw") == 0) return renamed(argv[2], argv[3], 0);
    if (strcmp(argv[1], "parent-symlinked-raw") == 0) return parent_symlinked(argv[2], argv[3]);
    fprintf(stderr, "pathcache: unknown step %s\n", argv[1]);
    return 2;
}
