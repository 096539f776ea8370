/* Calls that do not follow a final symlink, given "link/": the trailing
 * slash makes the kernel follow it. Prints "<call> ret errno" per call. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#define SHOW(name, expr) do { errno = 0; long r = (expr); printf("%s %ld %d\n", name, r, r < 0 ? errno : 0); } while (0)

int main(int argc, char **argv) {
    const char *p = argv[1]; /* "link/" */
    SHOW("open", open(p, O_RDONLY | O_NOFOLLOW | O_DIRECTORY));
    SHOW("lchown", lchown(p, 4321, 4321));
    SHOW("fchownat", fchownat(AT_FDCWD, p, 4321, 4321, AT_SYMLINK_NOFOLLOW));
    SHOW("fchmodat", fchmodat(AT_FDCWD, p, 0700, AT_SYMLINK_NOFOLLOW));
    SHOW("utimensat", utimensat(AT_FDCWD, p, NULL, AT_SYMLINK_NOFOLLOW));
    SHOW("tmpfile", open(p, O_TMPFILE | O_RDWR | O_NOFOLLOW, 0600));
    return 0;
}
