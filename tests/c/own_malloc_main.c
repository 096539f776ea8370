/* Linked with own_malloc_lib: prints what the allocator's set-up open got,
 * then allocates and prints again. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern int own_malloc_probe_errno;

int main(void) {
    printf("probe %d\n", own_malloc_probe_errno);
    char *p = malloc(64);
    strcpy(p, "own malloc ok");
    puts(p);
    return 0;
}
