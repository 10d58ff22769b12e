/* cmd_convert.c - `scorch convert`. */
#include "cli/cli.h"

int cmd_convert(int argc, char **argv)
{
    (void)argc;
    return cli_error("%s: not implemented yet", argv[0]);
}
