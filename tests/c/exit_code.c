/* exit_code: exits with CODE (a -D flag): the dynamic and static programs
 * tests/exec_swap.rs swaps. */
int main(void) { return CODE; }
