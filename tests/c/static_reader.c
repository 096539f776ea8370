/* Reads each argument; prints "PATH ok" or "PATH ERRNO". Built with
 * -static: the library never loads in it, so only Landlock can refuse. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>
int main(int argc, char **argv) {
    for (int i = 1; i < argc; i++) {
        char b[16];
        int fd = open(argv[i], O_RDONLY);
        if (fd < 0 || read(fd, b, sizeof b) < 0)
            printf("%s %d\n", argv[i], errno);
        else
            printf("%s ok\n", argv[i]);
        if (fd >= 0)
            close(fd);
    }
    return 0;
}
