/* Placeholder until collbench report lands (being written now). */
#include <stdio.h>

int cmd_report(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "collbench report: not implemented yet\n");
    return 4;
}
