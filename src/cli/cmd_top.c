/* cmd_top.c - `scorch top`: per-function flat and cumulative values, like go tool pprof -top. */
#include "cli/cli.h"
#include "formats/input.h"
#include "formats/top.h"
#include "model/error.h"
#include "model/merge.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

static const char usage[] =
    "usage: scorch top [options] FILE...\n"
    "\n"
    "Prints each function's flat value (samples whose innermost frame is the function) and\n"
    "cum value (samples with the function anywhere on the stack, counted once), merged over\n"
    "all inputs, as `go tool pprof -top` does. Inputs: pprof (gzipped or not), folded stacks\n"
    "or perf script; '-' reads stdin.\n"
    "\n"
    "options:\n"
    "  --sample-index NAME  sample type to report (e.g. alloc_space, or its index);\n"
    "                       default: the profile's default type, else the last one\n"
    "  --nodecount N        show only the top N functions\n"
    "  --nodefraction F     text only: hide functions whose cum is below F of the total\n"
    "                       (default 0.005, as pprof; 0 shows all)\n"
    "  --format FMT         text (default, pprof's layout), tsv (flat<TAB>cum<TAB>function,\n"
    "                       exact integers in the sample type's unit, every function) or json\n"
    "  -o FILE              write to FILE instead of stdout\n"
    "  -h, --help           show this help\n";

int cmd_top(int argc, char **argv)
{
    static const struct option opts[] = {
        {"sample-index", required_argument, 0, 's'}, {"nodecount", required_argument, 0, 'n'},
        {"nodefraction", required_argument, 0, 'f'}, {"format", required_argument, 0, 'F'},
        {"output", required_argument, 0, 'o'},       {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0},
    };
    const char *sample_index = NULL, *outpath = NULL;
    struct sc_top_opts to = {.format = SC_TOP_TEXT, .nodefraction = 0.005, .edgefraction = 0.001};
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "ho:", opts, NULL)) != -1) {
        char *end;
        switch (c) {
        case 's':
            sample_index = optarg;
            break;
        case 'n': {
            long n = strtol(optarg, &end, 10);
            if (*end || n < 0 || n > UINT32_MAX / 2)
                return cli_usage("top", "bad --nodecount '%s'", optarg);
            to.nodecount = (uint32_t)n;
            break;
        }
        case 'f':
            to.nodefraction = strtod(optarg, &end);
            if (*end || to.nodefraction < 0 || to.nodefraction > 1)
                return cli_usage("top", "bad --nodefraction '%s'", optarg);
            if (to.nodefraction == 0)
                to.edgefraction = 0; /* pprof drops both cuts together */
            break;
        case 'F':
            if (!strcmp(optarg, "text"))
                to.format = SC_TOP_TEXT;
            else if (!strcmp(optarg, "tsv"))
                to.format = SC_TOP_TSV;
            else if (!strcmp(optarg, "json"))
                to.format = SC_TOP_JSON;
            else
                return cli_usage("top", "unknown format '%s' (text, tsv or json)", optarg);
            break;
        case 'o':
            outpath = optarg;
            break;
        case 'h':
            return cli_help(usage);
        default:
            return cli_usage("top", "bad option");
        }
    }
    char err[SC_ERR_LEN] = "";
    struct sc_profile *merged = NULL;
    int nfiles = argc - optind;
    const char *only = nfiles == 0 ? "-" : NULL;
    /* One input is reported straight from its buffer (pprof samples are decoded on each
     * pass instead of stored: O(input) memory); several are merged, which needs them
     * stored. */
    struct sc_decode_opts dopts = {.lazy_samples = nfiles <= 1};
    for (int i = optind; i < argc || only; i++) {
        const char *path = only ? only : argv[i];
        struct sc_profile *p;
        if (sc_load(path, &dopts, &p, err)) {
            sc_profile_free(merged);
            return cli_error("%s", err);
        }
        if (!merged) {
            merged = p;
        } else {
            int rc = sc_profile_append(merged, p, err);
            sc_profile_free(p);
            if (rc) {
                sc_profile_free(merged);
                return cli_error("cannot merge '%s': %s", path, err);
            }
        }
        if (only)
            break;
    }
    int vi = sc_profile_sample_index(merged, sample_index, err);
    if (vi < 0) {
        sc_profile_free(merged);
        return cli_error("%s", err);
    }
    struct sc_top t;
    int rc = sc_top_compute(merged, vi, &t, err);
    struct sc_buf out = SC_BUF_INIT;
    if (rc == 0)
        sc_top_write(merged, vi, &t, &to, &out);
    sc_top_release(&t);
    sc_profile_free(merged);
    if (rc)
        return cli_error("%s", err);
    rc = cli_write(outpath, &out);
    sc_buf_release(&out);
    return rc;
}
