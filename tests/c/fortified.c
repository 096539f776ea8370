/* Compiled with -D_FORTIFY_SOURCE=2 -O2: glibc's fortify wrappers turn an
 * open()/openat() with two (three) arguments and non-constant flags into
 * calls of __open_2 / __open64_2 / __openat_2 / __openat64_2. The test checks
 * with nm that those symbols are referenced.
 *
 *   fortified open|open64|openat|openat64 PATH FLAGS
 *   fortified open_const_rdonly_trunc PATH     open(PATH, O_RDONLY|O_TRUNC)
 *   fortified open_const_wronly PATH           open(PATH, O_WRONLY)
 *
 * Prints "ret=fd|-1 errno=N(NAME)".
 */
#define _GNU_SOURCE
#define _LARGEFILE64_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SENTINEL 7777

static int parse_flags(const char *s) {
    int v = 0;
    char *dup = strdup(s), *save = NULL;
    for (char *t = strtok_r(dup, "|", &save); t; t = strtok_r(NULL, "|", &save)) {
        if (!strcmp(t, "O_RDONLY")) v |= O_RDONLY;
        else if (!strcmp(t, "O_WRONLY")) v |= O_WRONLY;
        else if (!strcmp(t, "O_RDWR")) v |= O_RDWR;
        else if (!strcmp(t, "O_TRUNC")) v |= O_TRUNC;
        else if (!strcmp(t, "O_APPEND")) v |= O_APPEND;
        else if (!strcmp(t, "O_DIRECTORY")) v |= O_DIRECTORY;
        else { fprintf(stderr, "fortified: unknown flag %s\n", t); exit(99); }
    }
    free(dup);
    return v;
}

int main(int argc, char **argv) {
    if (argc < 3) { fprintf(stderr, "usage\n"); return 99; }
    const char *w = argv[1], *p = argv[2];
    int fl = argc > 3 ? parse_flags(argv[3]) : 0;
    int r;
    errno = SENTINEL;
    if (!strcmp(w, "open")) r = open(p, fl);
    else if (!strcmp(w, "open64")) r = open64(p, fl);
    else if (!strcmp(w, "openat")) r = openat(AT_FDCWD, p, fl);
    else if (!strcmp(w, "openat64")) r = openat64(AT_FDCWD, p, fl);
    else if (!strcmp(w, "open_const_rdonly_trunc")) r = open(p, O_RDONLY | O_TRUNC);
    else if (!strcmp(w, "open_const_wronly")) r = open(p, O_WRONLY);
    else { fprintf(stderr, "fortified: unknown call %s\n", w); return 99; }
    int e = errno;
    const char *n = e == SENTINEL ? "unchanged" : strerrorname_np(e);
    printf("ret=%s errno=%d(%s)\n", r >= 0 ? "fd" : "-1", e, n ? n : "?");
    return 0;
}
