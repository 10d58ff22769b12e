/* cmd_diff_folded.c - `scorch diff-folded`. */
#include "cli/cli.h"

int cmd_diff_folded(int argc, char **argv)
{
    (void)argc;
    return cli_error("%s: not implemented yet", argv[0]);
}
