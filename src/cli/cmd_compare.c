/* cmd_compare.c - `scorch compare`: did a function really change? For CI and for people. */
#include "cli/cli.h"
#include "formats/folded.h"
#include "formats/input.h"
#include "formats/svg.h"
#include "model/error.h"
#include "model/merge.h"
#include "query/compare.h"
#include "query/compare_report.h"
#include "query/diff.h"
#include "store/store.h"

#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage[] =
    "usage: scorch compare [options] BASE... -- NEW...\n"
    "\n"
    "Compares two sets of profiles function by function and says which changes are real:\n"
    "each file is one replicate of its side (e.g. five CPU profiles of the old build and\n"
    "five of the new), and a change counts as significant only when it stands out of the\n"
    "spread between the replicates of each side (Welch's t-test per function, with the\n"
    "false discovery rate over all functions held at --q by Benjamini-Hochberg). With one\n"
    "file a side only sampling noise can be judged, and the report says so. Inputs: any\n"
    "profile format scorch reads ('scorch --help' lists them). Options go before '--'.\n"
    "\n"
    "options:\n"
    "  --sample-index NAME  sample type to compare (e.g. alloc_space); default: the\n"
    "                       profile's default type, else the last one\n"
    "  --normalize          compare each function's share of its profile's total (for\n"
    "                       profiles of different lengths or loads); default: its value\n"
    "                       per second of profile (pprof duration), or per profile\n"
    "  --q LEVEL            false discovery rate (default 0.05)\n"
    "  --fail-above PCT     exit 3 when a function's share or value grew significantly by\n"
    "                       more than PCT percent (relative), for CI; exit 0 otherwise\n"
    "  --format FMT         text (default), markdown (a pull-request comment), json (the\n"
    "                       API's diff rows with statistics) or tsv\n"
    "  --svg FILE           also write the differential flame graph (red grew, blue shrank)\n"
    "  -o FILE              write the report to FILE instead of stdout\n"
    "  -h, --help           show this help\n"
    "\n"
    "exit status: 0 compared (and nothing over --fail-above), 3 something grew more than\n"
    "--fail-above, 1 error, 2 usage error\n";

enum fmt { F_TEXT, F_MARKDOWN, F_JSON, F_TSV };

struct side {
    struct sc_profile *merged; /* all files of the side, for the exact values */
    uint32_t n;
};

/* Loads one side's files: each a replicate of cmp's side k, all merged into s->merged. */
static int load_side(char **files, int nfiles, int k, const char *sample_index, struct sc_cmp *cmp,
                     struct side *s, int *vi, char *err)
{
    for (int i = 0; i < nfiles; i++) {
        struct sc_profile *p;
        int rc = sc_load(files[i], NULL, &p, err);
        if (rc)
            return rc;
        int v = sc_profile_sample_index(p, sample_index, err);
        if (v < 0) {
            sc_profile_free(p);
            return sc_errwrap(err, v, "'%s'", files[i]);
        }
        struct sc_str st = sc_profile_str(p, p->sample_types[v].type);
        char tname[128];
        snprintf(tname, sizeof tname, "%.*s", (int)(st.len < 127 ? st.len : 127),
                 st.ptr ? st.ptr : "");
        /* gauges compare as they are; everything else per second (or per profile) */
        int gauge = sc_type_is_gauge("", tname);
        double seconds = gauge ? 0 : (double)p->duration_nanos / 1e9;
        rc = sc_cmp_add(cmp, k, p, v, seconds, gauge ? 0 : 1, err);
        if (rc) {
            sc_profile_free(p);
            return sc_errwrap(err, rc, "'%s'", files[i]);
        }
        if (!s->merged) {
            s->merged = p;
            *vi = v;
        } else {
            rc = sc_profile_append(s->merged, p, err);
            sc_profile_free(p);
            if (rc)
                return sc_errwrap(err, rc, "cannot merge '%s'", files[i]);
        }
        s->n++;
    }
    return 0;
}

/* The differential flame graph of the two merged sides as an SVG file. */
static int write_svg(const char *path, const struct sc_profile *base, int bvi,
                     const struct sc_profile *p, int vi, int normalize, char *err)
{
    struct sc_buf folded = SC_BUF_INIT, svg = SC_BUF_INIT;
    int rc = sc_diff_stacks(base, bvi, p, vi, normalize, &folded, err);
    struct sc_profile *d = NULL;
    if (rc == 0) {
        struct sc_input in = {folded.data, folded.len, SC_INPUT_BORROWED};
        struct sc_decode_opts o = {.format = SC_FMT_FOLDED};
        rc = folded.len ? sc_decode(&in, &o, &d, err) : SC_ENOTFOUND;
        if (rc == SC_ENOTFOUND)
            rc = sc_errf(err, rc, "no samples on either side");
    }
    if (rc == 0) {
        struct sc_svg_opts so;
        sc_svg_opts_init(&so);
        so.title = "Differential Flame Graph";
        so.subtitle = "red: grew, blue: shrank (widths: new)";
        int vi2 = sc_profile_sample_index(d, "samples", err);
        rc = vi2 < 0 ? vi2 : sc_svg_write(d, vi2, &so, &svg, err);
        rc = rc > 0 ? 0 : rc;
    }
    sc_profile_free(d);
    sc_buf_release(&folded);
    if (rc == 0)
        rc = cli_write(path, &svg) ? SC_EIO : 0;
    sc_buf_release(&svg);
    return rc;
}

int cmd_compare(int argc, char **argv)
{
    static const struct option opts[] = {
        {"sample-index", required_argument, 0, 's'},
        {"normalize", no_argument, 0, 'n'},
        {"q", required_argument, 0, 'q'},
        {"fail-above", required_argument, 0, 'f'},
        {"format", required_argument, 0, 'F'},
        {"svg", required_argument, 0, 'S'},
        {"output", required_argument, 0, 'o'},
        {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0},
    };
    /* "--" splits the sides; options are read before it only */
    int split = -1;
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--")) {
            split = i;
            break;
        }
    struct sc_cmp_opts co = SC_CMP_OPTS_INIT;
    const char *sample_index = NULL, *outpath = NULL, *svgpath = NULL;
    double fail_above = -1;
    enum fmt fmt = F_TEXT;
    struct sc_set_value sv;
    int c, rc, oargc = split < 0 ? argc : split;
    optind = 1;
    while ((c = getopt_long(oargc, argv, "ho:", opts, NULL)) != -1) {
        switch (c) {
        case 's':
            sample_index = optarg;
            break;
        case 'n':
            co.normalize = 1;
            break;
        case 'q':
            if ((rc = cli_setting("compare", SC_SET_COMPARE_Q, "--q", optarg, &sv)))
                return rc;
            co.level = sv.d;
            break;
        case 'f':
            if ((rc = cli_setting("compare", SC_SET_COMPARE_FAIL_ABOVE, "--fail-above", optarg,
                                  &sv)))
                return rc;
            fail_above = sv.d;
            break;
        case 'F':
            /* the choices in the order of enum fmt, then md for markdown */
            if ((rc = cli_setting("compare", SC_SET_COMPARE_FORMAT, "--format", optarg, &sv)))
                return rc;
            fmt = sv.i == 4 ? F_MARKDOWN : (enum fmt)sv.i;
            break;
        case 'S':
            svgpath = optarg;
            break;
        case 'o':
            outpath = optarg;
            break;
        case 'h':
            return cli_help(usage);
        default:
            return cli_usage("compare", "bad option");
        }
    }
    int nbase = oargc - optind, nnew = split < 0 ? 0 : argc - split - 1;
    if (split < 0 || nbase < 1 || nnew < 1)
        return cli_usage("compare", "give base files, then '--', then new files");
    char err[SC_ERR_LEN] = "";
    struct sc_cmp *cmp = NULL;
    if (sc_cmp_new(&co, &cmp))
        return cli_error("out of memory");
    struct side sides[2] = {{NULL, 0}, {NULL, 0}};
    int vi[2] = {0, 0};
    rc = load_side(argv + optind, nbase, 0, sample_index, cmp, &sides[0], &vi[0], err);
    if (rc == 0)
        rc = load_side(argv + split + 1, nnew, 1, sample_index, cmp, &sides[1], &vi[1], err);
    if (rc == 0)
        rc = sc_cmp_finish(cmp, err);
    struct sc_diff d;
    memset(&d, 0, sizeof d);
    int diffed = 0;
    if (rc == 0) {
        rc = sc_diff_compute(sides[0].merged, vi[0], sides[1].merged, vi[1], co.normalize, &d, err);
        diffed = 1;
    }
    struct sc_buf out = SC_BUF_INIT;
    struct sc_verdict v;
    memset(&v, 0, sizeof v);
    if (rc == 0) {
        sc_diff_attach(&d, cmp);
        if (fmt == F_JSON || fmt == F_TSV) {
            sc_diff_write(&d, fmt == F_TSV ? SC_DIFF_TSV : SC_DIFF_JSON, 0, &out);
            /* the verdict for the exit status, without its text */
            struct sc_buf none = SC_BUF_INIT;
            struct sc_report_opts ro = {SC_REPORT_TEXT, fail_above, 0};
            sc_compare_report(&d, &ro, &none, &v);
            sc_buf_release(&none);
        } else {
            struct sc_report_opts ro = {fmt == F_MARKDOWN ? SC_REPORT_MARKDOWN : SC_REPORT_TEXT,
                                        fail_above, 0};
            sc_compare_report(&d, &ro, &out, &v);
        }
    }
    if (rc == 0 && svgpath)
        rc = write_svg(svgpath, sides[0].merged, vi[0], sides[1].merged, vi[1], co.normalize, err);
    if (diffed)
        sc_diff_release(&d);
    sc_cmp_free(cmp);
    sc_profile_free(sides[0].merged);
    sc_profile_free(sides[1].merged);
    if (rc) {
        sc_buf_release(&out);
        return cli_error("%s", err);
    }
    if (out.oom) {
        sc_buf_release(&out);
        return cli_error("out of memory");
    }
    int wrc = cli_write(outpath, &out);
    sc_buf_release(&out);
    if (wrc)
        return wrc;
    return fail_above >= 0 && v.over ? 3 : 0;
}
