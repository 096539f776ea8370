/*
 * landlock.h — minimal raw-syscall Landlock helpers shared by landlock_run.c
 * and wrun.c (benchmark helpers; no liblandlock or recent kernel headers needed).
 *
 * ll_abi(): the kernel's Landlock ABI version, 0 when unsupported.
 * ll_restrict(rw, nrw): restrict the calling process (and what it executes)
 *   to: everything beneath each rw[i]; read, list and execute beneath "/";
 *   read+write of /dev/null, /dev/zero, /dev/full, /dev/tty. Every filesystem
 *   right the running kernel knows is handled. Returns 0, or -1 with a message
 *   on stderr.
 */
#ifndef FSGUARD_BENCH_LANDLOCK_H
#define FSGUARD_BENCH_LANDLOCK_H
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef __NR_landlock_create_ruleset
#define __NR_landlock_create_ruleset 444
#endif
#ifndef __NR_landlock_add_rule
#define __NR_landlock_add_rule 445
#endif
#ifndef __NR_landlock_restrict_self
#define __NR_landlock_restrict_self 446
#endif

#define LL_CREATE_RULESET_VERSION (1U << 0)
#define LL_RULE_PATH_BENEATH 1

#define FS_EXECUTE     (1ULL << 0)
#define FS_WRITE_FILE  (1ULL << 1)
#define FS_READ_FILE   (1ULL << 2)
#define FS_READ_DIR    (1ULL << 3)
#define FS_REMOVE_DIR  (1ULL << 4)
#define FS_REMOVE_FILE (1ULL << 5)
#define FS_MAKE_CHAR   (1ULL << 6)
#define FS_MAKE_DIR    (1ULL << 7)
#define FS_MAKE_REG    (1ULL << 8)
#define FS_MAKE_SOCK   (1ULL << 9)
#define FS_MAKE_FIFO   (1ULL << 10)
#define FS_MAKE_BLOCK  (1ULL << 11)
#define FS_MAKE_SYM    (1ULL << 12)
#define FS_REFER       (1ULL << 13) /* ABI 2 */
#define FS_TRUNCATE    (1ULL << 14) /* ABI 3 */
#define FS_IOCTL_DEV   (1ULL << 15) /* ABI 5 */

struct ll_ruleset_attr {
    uint64_t handled_access_fs;
};

struct ll_path_beneath_attr {
    uint64_t allowed_access;
    int32_t parent_fd;
} __attribute__((packed));

static inline int ll_abi(void)
{
    long abi = syscall(__NR_landlock_create_ruleset, NULL, 0, LL_CREATE_RULESET_VERSION);
    return abi < 0 ? 0 : (int)abi;
}

static inline int ll_add_rule(int ruleset, const char *path, uint64_t access, uint64_t handled, int required)
{
    struct ll_path_beneath_attr pb;
    int fd = open(path, O_PATH | O_CLOEXEC);
    if (fd < 0) {
        if (!required)
            return 0;
        fprintf(stderr, "landlock: %s: %s\n", path, strerror(errno));
        return -1;
    }
    pb.allowed_access = access & handled;
    pb.parent_fd = fd;
    if (syscall(__NR_landlock_add_rule, ruleset, LL_RULE_PATH_BENEATH, &pb, 0) != 0) {
        fprintf(stderr, "landlock: add_rule %s: %s\n", path, strerror(errno));
        close(fd);
        return -1;
    }
    close(fd);
    return 0;
}

static inline int ll_restrict(const char *const *rw, int nrw)
{
    int abi = ll_abi(), ruleset, i, ok = 1;
    uint64_t handled, file_rights, read_rights;
    struct ll_ruleset_attr attr;

    if (abi < 1) {
        fprintf(stderr, "landlock: not supported by this kernel\n");
        return -1;
    }
    handled = (FS_MAKE_SYM << 1) - 1; /* ABI 1: bits 0..12 */
    if (abi >= 2)
        handled |= FS_REFER;
    if (abi >= 3)
        handled |= FS_TRUNCATE;
    if (abi >= 5)
        handled |= FS_IOCTL_DEV;
    file_rights = FS_WRITE_FILE | FS_READ_FILE | FS_TRUNCATE | FS_IOCTL_DEV;
    read_rights = FS_EXECUTE | FS_READ_FILE | FS_READ_DIR;

    attr.handled_access_fs = handled;
    ruleset = (int)syscall(__NR_landlock_create_ruleset, &attr, sizeof attr, 0);
    if (ruleset < 0) {
        fprintf(stderr, "landlock: create_ruleset: %s\n", strerror(errno));
        return -1;
    }
    ok &= ll_add_rule(ruleset, "/", read_rights, handled, 1) == 0;
    ok &= ll_add_rule(ruleset, "/dev/null", file_rights, handled, 0) == 0;
    ok &= ll_add_rule(ruleset, "/dev/zero", file_rights, handled, 0) == 0;
    ok &= ll_add_rule(ruleset, "/dev/full", file_rights, handled, 0) == 0;
    ok &= ll_add_rule(ruleset, "/dev/tty", file_rights, handled, 0) == 0;
    for (i = 0; i < nrw; i++)
        ok &= ll_add_rule(ruleset, rw[i], handled, handled, 1) == 0;
    if (!ok) {
        close(ruleset);
        return -1;
    }
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
        perror("landlock: prctl(PR_SET_NO_NEW_PRIVS)");
        close(ruleset);
        return -1;
    }
    if (syscall(__NR_landlock_restrict_self, ruleset, 0) != 0) {
        perror("landlock: restrict_self");
        close(ruleset);
        return -1;
    }
    close(ruleset);
    return 0;
}

#endif
