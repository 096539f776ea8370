/* Calls whose check panics inside the library (the fault-injection build
 * panics on a path named fsguard-fault-panic), then one whose check does
 * not: each prints its result and errno. */
#include <errno.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

static void show(const char *what, int r) {
    printf("%s=%d errno=%d\n", what, r, r == 0 ? 0 : errno);
}

int main(int argc, char **argv) {
    char bad[4096], src[4096], ok[4096];
    if (argc != 2)
        return 2;
    snprintf(bad, sizeof bad, "%s/fsguard-fault-panic", argv[1]);
    snprintf(src, sizeof src, "%s/a", argv[1]);
    snprintf(ok, sizeof ok, "%s/ok", argv[1]);
    errno = 0;
    show("mkdir", mkdir(bad, 0755));
    errno = 0;
    show("rename", rename(src, bad));
    errno = 0;
    show("after", mkdir(ok, 0755));
    return 0;
}
