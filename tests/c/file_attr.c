/* file_attr get|set PATH [nofollow|at]: file_getattr(2) (468) and
 * file_setattr(2) (469), Linux 6.17, through syscall(). "set" sets
 * FS_XFLAG_NODUMP. "at": PATH's directory opened O_PATH, and the call
 * made relative to it. Prints "ok xflags=HEX" or "errno N". */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <stdlib.h>

struct file_attr {
    uint64_t fa_xflags;
    uint32_t fa_extsize, fa_nextents, fa_projid, fa_cowextsize;
};

#define FS_XFLAG_NODUMP 0x80

int main(int argc, char **argv) {
    if (argc < 3) return 2;
    int dirfd = AT_FDCWD, flags = 0;
    const char *path = argv[2];
    if (argc > 3 && !strcmp(argv[3], "nofollow")) flags = AT_SYMLINK_NOFOLLOW;
    if (argc > 3 && !strcmp(argv[3], "at")) {
        char dir[4096];
        snprintf(dir, sizeof dir, "%s", path);
        char *slash = strrchr(dir, '/');
        if (!slash) return 2;
        *slash = 0;
        dirfd = open(dir, O_PATH | O_DIRECTORY);
        path = strrchr(path, '/') + 1;
    }
    struct file_attr a = {0};
    long r = syscall(468, dirfd, path, &a, sizeof a, flags);
    if (r == 0 && !strcmp(argv[1], "set")) {
        a.fa_xflags |= FS_XFLAG_NODUMP;
        r = syscall(469, dirfd, path, &a, sizeof a, flags);
    }
    if (r != 0) {
        printf("errno %d\n", errno);
        return 1;
    }
    printf("ok xflags=%llx\n", (unsigned long long)a.fa_xflags);
    return 0;
}
