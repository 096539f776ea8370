/* An rtld-audit module (LD_AUDIT): the loader runs it beside every other
 * library, with a C library of its own. It creates the file AUDIT_MARK
 * names, to show it ran (tests/loader_env.rs). */
#define _GNU_SOURCE
#include <fcntl.h>
#include <link.h>
#include <stdlib.h>
#include <unistd.h>

unsigned int la_version(unsigned int version) {
    const char *mark = getenv("AUDIT_MARK");
    if (mark) {
        int fd = open(mark, O_WRONLY | O_CREAT, 0644);
        if (fd >= 0)
            close(fd);
    }
    return version;
}
