/* A program linked `-z now` against early_lib (tests/early.rs): its call of
 * the library's IFUNC is resolved while the program is relocated, before
 * any constructor; main prints what the resolver's open got. */
#include <stdio.h>

int early_ifunc(void);

int main(void) {
    int r = early_ifunc();
    if (r == 0)
        puts("early ifunc opened");
    else
        printf("early ifunc refused %d\n", r);
    return 0;
}
