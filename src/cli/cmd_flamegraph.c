/* cmd_flamegraph.c - `scorch flamegraph`. */
#include "cli/cli.h"

int cmd_flamegraph(int argc, char **argv)
{
    (void)argc;
    return cli_error("%s: not implemented yet", argv[0]);
}
