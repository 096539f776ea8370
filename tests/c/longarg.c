/* longarg LEN CALL: one call with a path argument of LEN bytes (the cwd,
 * then slashes, then a name: absolute, inside the cwd, naming what the
 * short name names), printing `ret errno`.
 *
 * The cwd holds a file `f`, a directory `d`, an empty directory `e` and
 * nothing named `n`. A call's other path argument is short. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/xattr.h>
#include <unistd.h>

static char *cwd;

/* `CWD////…/name`, LEN bytes long. */
static char *longp(size_t len, const char *name) {
    size_t base = strlen(cwd), n = strlen(name);
    if (len < base + 1 + n) exit(2);
    char *p = malloc(len + 1);
    memcpy(p, cwd, base);
    memset(p + base, '/', len - base - n);
    memcpy(p + len - n, name, n + 1);
    return p;
}

int main(int argc, char **argv) {
    if (argc != 3) return 2;
    cwd = getcwd(NULL, 0);
    size_t len = strtoul(argv[1], NULL, 10);
    const char *c = argv[2];
    char *f = longp(len, "f"), *d = longp(len, "d"), *e = longp(len, "e"), *n = longp(len, "n");
    char tmpl[8192];
    snprintf(tmpl, sizeof tmpl, "%s", longp(len, "tXXXXXX"));
    long r;
    errno = 0;
    if (!strcmp(c, "open")) r = open(f, O_RDONLY);
    else if (!strcmp(c, "open-creat")) r = open(n, O_CREAT | O_WRONLY, 0644);
    else if (!strcmp(c, "open-excl")) r = open(n, O_CREAT | O_EXCL | O_WRONLY, 0644);
    else if (!strcmp(c, "open-nofollow")) r = open(f, O_RDONLY | O_NOFOLLOW);
    else if (!strcmp(c, "openat")) r = openat(AT_FDCWD, f, O_RDONLY);
    else if (!strcmp(c, "creat")) r = creat(n, 0644);
    else if (!strcmp(c, "fopen")) r = fopen(f, "r") ? 0 : -1;
    else if (!strcmp(c, "fopen-w")) r = fopen(n, "w") ? 0 : -1;
    else if (!strcmp(c, "opendir")) r = opendir(d) ? 0 : -1;
    else if (!strcmp(c, "mkdir")) r = mkdir(n, 0755);
    else if (!strcmp(c, "mkdirat")) r = mkdirat(AT_FDCWD, n, 0755);
    else if (!strcmp(c, "rmdir")) r = rmdir(e);
    else if (!strcmp(c, "unlink")) r = unlink(f);
    else if (!strcmp(c, "unlinkat")) r = unlinkat(AT_FDCWD, f, 0);
    else if (!strcmp(c, "remove")) r = remove(f);
    else if (!strcmp(c, "rename-old")) r = rename(f, "g");
    else if (!strcmp(c, "rename-new")) r = rename("f", n);
    else if (!strcmp(c, "renameat2")) r = renameat2(AT_FDCWD, f, AT_FDCWD, "g", 0);
    else if (!strcmp(c, "link-old")) r = link(f, "g");
    else if (!strcmp(c, "link-new")) r = link("f", n);
    else if (!strcmp(c, "linkat")) r = linkat(AT_FDCWD, "f", AT_FDCWD, n, 0);
    else if (!strcmp(c, "symlink")) r = symlink("f", n);
    else if (!strcmp(c, "symlinkat")) r = symlinkat("f", AT_FDCWD, n);
    else if (!strcmp(c, "chmod")) r = chmod(f, 0600);
    else if (!strcmp(c, "fchmodat")) r = fchmodat(AT_FDCWD, f, 0600, 0);
    else if (!strcmp(c, "chown")) r = chown(f, -1, -1);
    else if (!strcmp(c, "lchown")) r = lchown(f, -1, -1);
    else if (!strcmp(c, "fchownat")) r = fchownat(AT_FDCWD, f, -1, -1, AT_SYMLINK_NOFOLLOW);
    else if (!strcmp(c, "truncate")) r = truncate(f, 0);
    else if (!strcmp(c, "utimes")) r = utimes(f, NULL);
    else if (!strcmp(c, "utimensat")) r = utimensat(AT_FDCWD, f, NULL, 0);
    else if (!strcmp(c, "mkfifo")) r = mkfifo(n, 0644);
    else if (!strcmp(c, "mknod")) r = mknod(n, S_IFIFO | 0644, 0);
    else if (!strcmp(c, "setxattr")) r = setxattr(f, "user.x", "1", 1, 0);
    else if (!strcmp(c, "mkstemp")) r = mkstemp(tmpl) < 0 ? -1 : 0;
    else if (!strcmp(c, "mkdtemp")) r = mkdtemp(tmpl) ? 0 : -1;
    else if (!strcmp(c, "stat")) { struct stat st; r = stat(f, &st); }
    else if (!strcmp(c, "access")) r = access(f, R_OK);
    else if (!strcmp(c, "chdir")) r = chdir(d);
    else if (!strcmp(c, "truncate64")) r = truncate64(f, 0);
    else if (!strcmp(c, "execve")) {
        char *args[] = {"true", NULL};
        r = execve(n, args, NULL);
    } else return 2;
    printf("%ld %d\n", r < 0 ? -1L : 0L, r < 0 ? errno : 0);
    return 0;
}
