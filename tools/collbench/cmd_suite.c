/* Placeholder until collbench suite lands (being written now). */
#include <stdio.h>

int cmd_suite(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "collbench suite: not implemented yet\n");
    return 4;
}
