/* cmd_top.c - `scorch top`: per-function flat and cumulative values, like go tool pprof -top. */
#include "cli/cli.h"
#include "formats/input.h"
#include "formats/top.h"
#include "model/error.h"
#include "query/plan.h"
#include "query/filter.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage[] =
    "usage: scorch top [options] FILE...\n"
    "\n"
    "Prints each function's flat value (samples whose innermost frame is the function) and\n"
    "cum value (samples with the function anywhere on the stack, counted once), merged over\n"
    "all inputs, as `go tool pprof -top` does. Inputs: any profile format scorch reads\n"
    "('scorch --help' lists them); '-' reads stdin.\n"
    "\n"
    "options:\n"
    "  --sample-index NAME  sample type to report (e.g. alloc_space, or its index);\n"
    "                       default: the profile's default type, else the last one\n"
    "  --nodecount N        show only the top N functions\n"
    "  --nodefraction F     text only: hide functions whose cum is below F of the total\n"
    "                       (default 0.005, as pprof; 0 shows all)\n"
    "  --format FMT         text (default, pprof's layout), tsv (flat<TAB>cum<TAB>function,\n"
    "                       exact integers in the sample type's unit, every function) or json\n"
    "  --focus RE           keep only samples with a frame matching RE (function name, file\n"
    "                       or binary, as pprof -focus)\n"
    "  --ignore RE          drop samples with a frame matching RE (pprof -ignore)\n"
    "  --hide RE            remove frames matching RE from the stacks (pprof -hide)\n"
    "  --show RE            keep only frames matching RE in the stacks (pprof -show)\n"
    "                       (regexes are PCRE2, which agrees with Go's RE2 on ordinary\n"
    "                       expressions; percentages stay relative to the unfiltered total)\n"
    "  -o FILE              write to FILE instead of stdout\n"
    "  -h, --help           show this help\n";

/* The report total before filtering: sum of |value| over samples, as sc_top counts it. */
static int64_t total_of(const struct sc_profile *p, int vi)
{
    int64_t total = 0;
    for (uint32_t s = 0; s < p->nsamples; s++) {
        int64_t v = p->values[(size_t)s * p->nsample_types + (uint32_t)vi];
        total += v < 0 ? -v : v;
    }
    return total;
}

/* pprof's "Active filters:" lines, put before "Showing nodes accounting for". */
static void add_filter_legend(struct sc_buf *out, const struct sc_filter_opts *fo)
{
    static const char anchor[] = "Showing nodes accounting for ";
    size_t at = 0;
    while (at < out->len && strncmp(out->data + at, anchor, sizeof anchor - 1) != 0) {
        const char *nl = memchr(out->data + at, '\n', out->len - at);
        at = nl ? (size_t)(nl - out->data) + 1 : out->len;
    }
    if (at >= out->len)
        return;
    struct sc_buf legend = SC_BUF_INIT;
    sc_buf_puts(&legend, "Active filters:\n");
    const char *what[4] = {fo->focus, fo->ignore, fo->hide, fo->show};
    static const char *const names[4] = {"focus", "ignore", "hide", "show"};
    for (int i = 0; i < 4; i++) {
        if (!what[i] || !*what[i])
            continue;
        struct sc_buf item = SC_BUF_INIT;
        sc_buf_printf(&item, "%s=%s", names[i], what[i]);
        sc_buf_puts(&legend, "   ");
        /* pprof cuts at 80 bytes and adds an ellipsis */
        sc_buf_append(&legend, item.data, item.len > 80 ? 80 : item.len);
        if (item.len > 80)
            sc_buf_puts(&legend, "\xe2\x80\xa6");
        sc_buf_putc(&legend, '\n');
        sc_buf_release(&item);
    }
    struct sc_buf all = SC_BUF_INIT;
    sc_buf_append(&all, out->data, at);
    sc_buf_append(&all, legend.data, legend.len);
    sc_buf_append(&all, out->data + at, out->len - at);
    sc_buf_release(&legend);
    if (all.oom) {
        sc_buf_release(&all);
        out->oom = 1;
        return;
    }
    sc_buf_release(out);
    *out = all;
}

int cmd_top(int argc, char **argv)
{
    static const struct option opts[] = {
        {"sample-index", required_argument, 0, 's'},
        {"nodecount", required_argument, 0, 'n'},
        {"nodefraction", required_argument, 0, 'f'},
        {"format", required_argument, 0, 'F'},
        {"output", required_argument, 0, 'o'},
        {"help", no_argument, 0, 'h'},
        {"focus", required_argument, 0, 1},
        {"ignore", required_argument, 0, 2},
        {"hide", required_argument, 0, 3},
        {"show", required_argument, 0, 4},
        {0, 0, 0, 0},
    };
    struct sc_filter_opts fo = {0};
    const char *sample_index = NULL, *outpath = NULL;
    struct sc_top_opts to = {.format = SC_TOP_TEXT,
                             .nodefraction = sc_setting_default_d(SC_SET_NODEFRACTION),
                             .edgefraction = sc_setting_default_d(SC_SET_EDGEFRACTION)};
    struct sc_set_value sv;
    int c, rc;
    optind = 1;
    while ((c = getopt_long(argc, argv, "ho:", opts, NULL)) != -1) {
        switch (c) {
        case 's':
            sample_index = optarg;
            break;
        case 'n':
            if ((rc = cli_setting("top", SC_SET_TOP_NODECOUNT, "--nodecount", optarg, &sv)))
                return rc;
            to.nodecount = (uint32_t)sv.i;
            break;
        case 'f':
            if ((rc = cli_setting("top", SC_SET_NODEFRACTION, "--nodefraction", optarg, &sv)))
                return rc;
            to.nodefraction = sv.d;
            break;
        case 'F':
            /* the choices in the order of enum sc_top_format */
            if ((rc = cli_setting("top", SC_SET_TOP_FORMAT, "--format", optarg, &sv)))
                return rc;
            to.format = (enum sc_top_format)sv.i;
            break;
        case 'o':
            outpath = optarg;
            break;
        case 1:
            fo.focus = optarg;
            break;
        case 2:
            fo.ignore = optarg;
            break;
        case 3:
            fo.hide = optarg;
            break;
        case 4:
            fo.show = optarg;
            break;
        case 'h':
            return cli_help(usage);
        default:
            return cli_usage("top", "bad option");
        }
    }
    char err[SC_ERR_LEN] = "";
    struct sc_filter *filter = NULL;
    if (sc_filter_new(&fo, &filter, err))
        return cli_usage("top", "%s", err);
    int filtering = sc_filter_active(filter);
    struct sc_profile *merged = NULL;
    /* One input is reported straight from its buffer (pprof samples are decoded on each
     * pass instead of stored: O(input) memory); filters rewrite samples, which needs them
     * stored, and are applied below so that percentages keep the unfiltered total. */
    struct sc_decode_opts dopts = {.lazy_samples = !filtering};
    if (sc_plan_files((const char *const *)argv + optind, (uint32_t)(argc - optind), &dopts, NULL,
                      &merged, err)) {
        sc_filter_free(filter);
        return cli_error("%s", err);
    }
    int vi = sc_profile_sample_index(merged, sample_index, err);
    if (vi < 0) {
        sc_profile_free(merged);
        sc_filter_free(filter);
        return cli_error("%s", err);
    }
    int64_t total = 0;
    if (filtering) {
        total = total_of(merged, vi);
        struct sc_filter_result fr;
        int frc = sc_filter_apply(filter, merged, &fr, err);
        if (frc) {
            sc_profile_free(merged);
            sc_filter_free(filter);
            return cli_error("%s", err);
        }
        const char *what[4] = {fo.focus, fo.ignore, fo.hide, fo.show};
        const uint8_t matched[4] = {fr.focus_matched, fr.ignore_matched, fr.hide_matched,
                                    fr.show_matched};
        static const char *const names[4] = {"focus", "ignore", "hide", "show"};
        for (int i = 0; i < 4; i++)
            if (what[i] && *what[i] && !matched[i])
                fprintf(stderr, "scorch: warning: %s expression matched no samples\n", names[i]);
    }
    sc_filter_free(filter);
    struct sc_top t;
    rc = sc_top_compute(merged, vi, &t, err);
    struct sc_buf out = SC_BUF_INIT;
    if (rc == 0) {
        /* As pprof: percentages (and the node cut's label) stay relative to the whole
         * profile, and the text says which filters are active. */
        if (filtering)
            t.total = total;
        sc_top_write(merged, vi, &t, &to, &out);
        if (filtering && to.format == SC_TOP_TEXT)
            add_filter_legend(&out, &fo);
    }
    sc_top_release(&t);
    sc_profile_free(merged);
    if (rc)
        return cli_error("%s", err);
    if (out.oom)
        return cli_error("out of memory");
    rc = cli_write(outpath, &out);
    sc_buf_release(&out);
    return rc;
}
