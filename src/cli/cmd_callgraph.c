/* cmd_callgraph.c - `scorch callgraph`: the call graph as DOT or SVG, like go tool pprof -dot/-svg.
 */
#include "cli/cli.h"
#include "formats/input.h"
#include "model/error.h"
#include "query/plan.h"
#include "query/callgraph.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

static const char usage[] =
    "usage: scorch callgraph [options] FILE...\n"
    "\n"
    "Draws the call graph of the merged inputs as `go tool pprof -dot` does: one box per\n"
    "function (flat and cum values, larger type for larger flat, redder for larger cum),\n"
    "arrows from callers to callees weighted by the value passing through them, dotted where\n"
    "hidden functions were skipped, \"(inline)\" where the call was inlined. Inputs: any\n"
    "profile format scorch reads ('scorch --help' lists them); '-' reads stdin.\n"
    "\n"
    "options:\n"
    "  --format FMT         dot (default, text for graphviz) or svg (laid out in-process)\n"
    "  --sample-index NAME  sample type to draw (e.g. alloc_space, or its index);\n"
    "                       default: the profile's default type, else the last one\n"
    "  --nodecount N        keep at most N nodes (default 80, as pprof; 0 = all)\n"
    "  --nodefraction F     hide functions whose cum is below F of the total (default 0.005)\n"
    "  --edgefraction F     hide calls below F of the total (default 0.001)\n"
    "  -o FILE              write to FILE instead of stdout\n"
    "  -h, --help           show this help\n";

int cmd_callgraph(int argc, char **argv)
{
    static const struct option opts[] = {
        {"format", required_argument, 0, 'F'},
        {"sample-index", required_argument, 0, 's'},
        {"nodecount", required_argument, 0, 'n'},
        {"nodefraction", required_argument, 0, 'f'},
        {"edgefraction", required_argument, 0, 'e'},
        {"output", required_argument, 0, 'o'},
        {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0},
    };
    struct sc_callgraph_opts go = SC_CALLGRAPH_OPTS_INIT;
    const char *sample_index = NULL, *outpath = NULL;
    struct sc_set_value sv;
    int svg = 0, c, rc;
    optind = 1;
    while ((c = getopt_long(argc, argv, "ho:", opts, NULL)) != -1) {
        switch (c) {
        case 'F':
            if ((rc = cli_setting("callgraph", SC_SET_CALLGRAPH_FORMAT, "--format", optarg, &sv)))
                return rc;
            svg = sv.i == 1;
            break;
        case 's':
            sample_index = optarg;
            break;
        case 'n':
            if ((rc = cli_setting("callgraph", SC_SET_CALLGRAPH_NODECOUNT, "--nodecount", optarg,
                                  &sv)))
                return rc;
            go.nodecount = (uint32_t)sv.i;
            break;
        case 'f':
            if ((rc = cli_setting("callgraph", SC_SET_NODEFRACTION, "--nodefraction", optarg, &sv)))
                return rc;
            go.nodefraction = sv.d;
            break;
        case 'e':
            if ((rc = cli_setting("callgraph", SC_SET_EDGEFRACTION, "--edgefraction", optarg, &sv)))
                return rc;
            go.edgefraction = sv.d;
            break;
        case 'o':
            outpath = optarg;
            break;
        case 'h':
            return cli_help(usage);
        default:
            return cli_usage("callgraph", "bad option");
        }
    }
    char err[SC_ERR_LEN] = "";
    struct sc_profile *merged = NULL;
    /* samples stored, not lazy: their labels become the graph's tag boxes */
    struct sc_decode_opts dopts = {0};
    if (sc_plan_files((const char *const *)argv + optind, (uint32_t)(argc - optind), &dopts, NULL,
                      &merged, err))
        return cli_error("%s", err);
    int vi = sc_profile_sample_index(merged, sample_index, err);
    if (vi < 0) {
        sc_profile_free(merged);
        return cli_error("%s", err);
    }
    struct sc_buf out = SC_BUF_INIT;
    rc = svg ? sc_callgraph_svg(merged, vi, &go, &out, err)
             : sc_callgraph_dot(merged, vi, &go, &out, err);
    sc_profile_free(merged);
    if (rc) {
        sc_buf_release(&out);
        return cli_error("cannot draw the call graph: %s", err);
    }
    rc = cli_write(outpath, &out);
    sc_buf_release(&out);
    return rc;
}
