/*
 * landlock_run.c — run a command under a Landlock ruleset (benchmark helper).
 *
 *   landlock_run --abi                print the kernel's Landlock ABI (0: none)
 *   landlock_run [--rw DIR]... -- CMD [ARGS...]
 *
 * Grants everything beneath each --rw DIR, read/list/execute beneath "/",
 * read+write of the usual /dev files (see landlock.h), then executes CMD
 * (PATH search) with the ruleset enforced.
 * Exit: 125 on a setup failure, 127 if CMD cannot be executed.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include "landlock.h"

#define MAX_RW 32

int main(int argc, char **argv)
{
    const char *rw[MAX_RW];
    int nrw = 0, i;

    if (argc == 2 && strcmp(argv[1], "--abi") == 0) {
        printf("%d\n", ll_abi());
        return 0;
    }
    for (i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--") == 0) {
            i++;
            break;
        } else if (strcmp(argv[i], "--rw") == 0 && i + 1 < argc && nrw < MAX_RW) {
            rw[nrw++] = argv[++i];
        } else {
            fprintf(stderr, "usage: landlock_run [--rw DIR]... -- CMD [ARGS...]\n"
                            "       landlock_run --abi\n");
            return 125;
        }
    }
    if (i >= argc) {
        fprintf(stderr, "landlock_run: no command\n");
        return 125;
    }
    if (ll_restrict(rw, nrw) != 0)
        return 125;
    execvp(argv[i], argv + i);
    fprintf(stderr, "landlock_run: %s: %s\n", argv[i], strerror(errno));
    return 127;
}
