/* cmd_convert.c - `scorch convert`: any input format to pprof, folded, speedscope or SVG. */
#include "cli/cli.h"
#include "formats/folded.h"
#include "formats/input.h"
#include "formats/pprof.h"
#include "formats/speedscope.h"
#include "formats/svg.h"
#include "model/error.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage[] =
    "usage: scorch convert --to FORMAT [--sample-index NAME] [IN] [-o OUT]\n"
    "\n"
    "Converts a profile. IN may be any profile format scorch reads ('scorch --help' lists\n"
    "them), detected from the content ('-' or none reads stdin); OUT defaults to stdout.\n"
    "\n"
    "formats:\n"
    "  pprof       gzipped profile.proto with every sample type, opens in go tool pprof;\n"
    "              perf script samples keep comm, pid and tid as labels\n"
    "  folded      \"frame;frame;frame count\" lines of one sample type (FlameGraph's input)\n"
    "  speedscope  speedscope's JSON format (https://www.speedscope.app), every sample type\n"
    "              as its own profile, the chosen one active\n"
    "  svg         an interactive flame graph (see 'scorch flamegraph' for its options)\n"
    "\n"
    "options:\n"
    "  --to FORMAT          output format (required)\n"
    "  --sample-index NAME  sample type for single-valued formats; default: the profile's\n"
    "                       default type, else the last one\n"
    "  --no-gzip            pprof output: write the raw protobuf\n"
    "  -o, --output OUT     output file\n"
    "  -h, --help           show this help\n";

int cmd_convert(int argc, char **argv)
{
    static const struct option opts[] = {
        {"to", required_argument, 0, 't'},     {"sample-index", required_argument, 0, 's'},
        {"output", required_argument, 0, 'o'}, {"no-gzip", no_argument, 0, 'z'},
        {"help", no_argument, 0, 'h'},         {0, 0, 0, 0},
    };
    const char *to = NULL, *sample_index = NULL, *outpath = NULL;
    int gzip = 1, c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "ho:", opts, NULL)) != -1) {
        switch (c) {
        case 't':
            to = optarg;
            break;
        case 's':
            sample_index = optarg;
            break;
        case 'o':
            outpath = optarg;
            break;
        case 'z':
            gzip = 0;
            break;
        case 'h':
            return cli_help(usage);
        default:
            return cli_usage("convert", "bad option");
        }
    }
    if (!to)
        return cli_usage("convert", "--to is required (pprof, folded, speedscope, svg)");
    if (strcmp(to, "pprof") && strcmp(to, "folded") && strcmp(to, "svg") &&
        strcmp(to, "speedscope"))
        return cli_usage("convert", "unknown output format '%s'", to);
    if (argc - optind > 1)
        return cli_usage("convert", "takes one input");
    const char *in = optind < argc ? argv[optind] : "-";

    char err[SC_ERR_LEN] = "";
    struct sc_profile *p;
    if (sc_load(in, NULL, &p, err))
        return cli_error("%s", err);
    struct sc_buf out = SC_BUF_INIT;
    int rc = 0;
    if (!strcmp(to, "pprof")) {
        if (sample_index) {
            /* pprof keeps every type; the chosen one becomes the default */
            int vi = sc_profile_sample_index(p, sample_index, err);
            if (vi < 0)
                rc = vi;
            else
                p->default_sample_type = p->sample_types[vi].type;
        }
        struct sc_buf raw = SC_BUF_INIT;
        if (!rc)
            rc = sc_pprof_encode(p, &raw);
        if (!rc && gzip)
            rc = sc_gzip(raw.data, raw.len, 6, &out);
        else if (!rc)
            sc_buf_append(&out, raw.data, raw.len);
        sc_buf_release(&raw);
        if (rc && !err[0])
            snprintf(err, sizeof err, "%s", sc_strerror(rc));
    } else if (!strcmp(to, "speedscope")) {
        int vi = sc_profile_sample_index(p, sample_index, err);
        const char *base = strrchr(in, '/');
        rc = vi < 0 ? vi : sc_speedscope_write(p, vi, base ? base + 1 : in, &out, err);
    } else if (!strcmp(to, "svg")) {
        int vi = sc_profile_sample_index(p, sample_index, err);
        struct sc_svg_opts so;
        sc_svg_opts_init(&so);
        rc = vi < 0 ? vi : sc_svg_write(p, vi, &so, &out, err);
        rc = rc > 0 ? 0 : rc; /* the count of frames drawn; an empty graph is still a graph */
    } else {
        int vi = sc_profile_sample_index(p, sample_index, err);
        rc = vi < 0 ? vi : sc_folded_write(p, vi, &out, err);
    }
    sc_profile_free(p);
    if (rc) {
        sc_buf_release(&out);
        return cli_error("%s", err);
    }
    rc = cli_write(outpath, &out);
    sc_buf_release(&out);
    return rc;
}
