/* cmd_collapse.c - `scorch collapse`. */
#include "cli/cli.h"

int cmd_collapse(int argc, char **argv)
{
    (void)argc;
    return cli_error("%s: not implemented yet", argv[0]);
}
