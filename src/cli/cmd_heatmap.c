/* cmd_heatmap.c - `scorch heatmap`: FlameScope's sub-second heatmap of timestamped samples. */
#include "cli/cli.h"
#include "formats/input.h"
#include "model/error.h"
#include "query/heatmap.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

static const char usage[] =
    "usage: scorch heatmap [options] [FILE]\n"
    "\n"
    "Prints FlameScope's sub-second heatmap of the samples in FILE (perf script output, whose\n"
    "samples carry timestamps) as JSON: "
    "{\"start\":S,\"rows\":R,\"cols\":C,\"values\":[[...]...]},\n"
    "where values[c][r] counts the non-idle samples in second c after floor(S), in the r-th\n"
    "1/R slice of that second (row 0 = the first slice). Idle samples (the kernel's idle\n"
    "task, as FlameScope recognizes it) are not counted but do stretch the time range.\n"
    "Input without timestamped samples (folded stacks, most pprof) is refused.\n"
    "\n"
    "options:\n"
    "  --sample-index NAME  count only the samples with a value of that type (a JFR\n"
    "                 recording's cpu, alloc_sample_bytes, ...); default: every sample\n"
    "  --rows R       slices per second (default 50, i.e. 20 ms; at most 1000)\n"
    "  --max-cols N   refuse inputs spanning more than N seconds (default 100000)\n"
    "  -o FILE        write to FILE instead of stdout\n"
    "  -h, --help     show this help\n";

int cmd_heatmap(int argc, char **argv)
{
    static const struct option opts[] = {
        {"rows", required_argument, 0, 'r'},     {"sample-index", required_argument, 0, 's'},
        {"max-cols", required_argument, 0, 'm'}, {"output", required_argument, 0, 'o'},
        {"help", no_argument, 0, 'h'},           {0, 0, 0, 0},
    };
    uint32_t rows = (uint32_t)sc_setting_default_i(SC_SET_HEATMAP_ROWS), max_cols = 0;
    const char *outpath = NULL, *index = NULL;
    struct sc_set_value sv;
    int c, rc;
    optind = 1;
    while ((c = getopt_long(argc, argv, "ho:", opts, NULL)) != -1) {
        switch (c) {
        case 'r':
            if ((rc = cli_setting("heatmap", SC_SET_HEATMAP_ROWS, "--rows", optarg, &sv)))
                return rc;
            rows = (uint32_t)sv.i;
            break;
        case 'm':
            if ((rc = cli_setting("heatmap", SC_SET_HEATMAP_MAX_COLS, "--max-cols", optarg, &sv)))
                return rc;
            max_cols = (uint32_t)sv.i;
            break;
        case 's':
            index = optarg;
            break;
        case 'o':
            outpath = optarg;
            break;
        case 'h':
            return cli_help(usage);
        default:
            return cli_usage("heatmap", "bad option");
        }
    }
    if (argc - optind > 1)
        return cli_usage("heatmap", "one input at a time");
    const char *path = optind < argc ? argv[optind] : "-";
    char err[SC_ERR_LEN] = "";
    struct sc_profile *p;
    struct sc_decode_opts dopts = {0}; /* stored samples: they carry the timestamps */
    if (sc_load(path, &dopts, &p, err))
        return cli_error("%s", err);
    struct sc_heatmap h;
    uint32_t nsamples = sc_profile_nsamples(p);
    if (index) {
        /* a recording of several kinds side by side (JFR): one kind's samples, those with
         * a value in that column */
        int vi = sc_profile_sample_index(p, index, err);
        rc = vi < 0 ? vi : sc_heatmap_init(&h, rows, max_cols, err);
        if (vi < 0)
            memset(&h, 0, sizeof h);
        nsamples = 0;
        for (uint32_t si = 0; !rc && si < p->nsamples; si++) {
            if (p->values[(size_t)si * p->nsample_types + (uint32_t)vi] == 0)
                continue;
            nsamples++;
            if (p->samples[si].time_ns)
                rc = sc_heatmap_add(&h, p->samples[si].time_ns, sc_heatmap_sample_idle(p, si));
        }
        if (!rc)
            rc = sc_heatmap_finish(&h, err);
    } else {
        rc = sc_heatmap_from_profile(p, rows, max_cols, &h, err);
    }
    sc_profile_free(p);
    /* an empty map would say "nothing ran", where nothing was known */
    if (!rc && h.samples == 0 && nsamples)
        rc = sc_errf(err, SC_EFORMAT,
                     "no sample has a timestamp (folded stacks have none; perf script prints "
                     "them unless -F leaves out time)");
    else if (!rc && h.samples == 0)
        rc = sc_errf(err, SC_EFORMAT, "no samples");
    if (rc) {
        sc_heatmap_release(&h);
        return cli_error("cannot make a heatmap of '%s': %s", path, err);
    }
    struct sc_buf out = SC_BUF_INIT;
    sc_heatmap_write_json(&h, &out);
    sc_heatmap_release(&h);
    rc = cli_write(outpath, &out);
    sc_buf_release(&out);
    return rc;
}
