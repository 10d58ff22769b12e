/* cmd_top.c - `scorch top`. */
#include "cli/cli.h"

int cmd_top(int argc, char **argv)
{
    (void)argc;
    return cli_error("%s: not implemented yet", argv[0]);
}
