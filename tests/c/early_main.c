/* A program linked against early_lib (tests/early.rs): its library's
 * constructor runs before libfsguard's; main only says it ran. */
#include <stdio.h>

int main(void) {
    puts("main ran");
    return 0;
}
