/* Opens argv[1] (must work) and argv[2] (must be refused). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

int main(int argc, char **argv) {
    int a = open(argv[1], O_RDONLY);
    int b = open(argv[2], O_RDONLY);
    printf("inside=%d outside=%d errno=%d\n", a >= 0, b >= 0, b < 0 ? errno : 0);
    return 0;
}
