/* Placeholder until collbench train lands (being written now). */
#include <stdio.h>

int cmd_train(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "collbench train: not implemented yet\n");
    return 4;
}
