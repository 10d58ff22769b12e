/* cmd_collapse.c - `scorch collapse perf`: perf script to folded stacks (stackcollapse-perf.pl). */
#include "cli/cli.h"
#include "formats/folded.h"
#include "formats/input.h"
#include "model/error.h"

#include <stdlib.h>
#include <string.h>

static const char help[] =
    "usage: scorch collapse perf [options] [FILE]\n"
    "\n"
    "Folds `perf script` output into stacks, one \"frame;frame;frame count\" line each,\n"
    "the same lines FlameGraph's stackcollapse-perf.pl prints with the same options.\n"
    "FILE may be gzip-compressed; '-' or no FILE reads stdin.\n"
    "\n"
    "options:\n"
    "  --pid                 process frame is comm-pid\n"
    "  --tid                 process frame is comm-pid/tid\n"
    "  --kernel              annotate kernel frames with _[k]\n"
    "  --jit                 annotate JIT frames (/tmp/perf-PID.map) with _[j]\n"
    "  --all                 --kernel and --jit\n"
    "  --addrs               keep the address of frames without a symbol\n"
    "  --event-filter EVENT  only samples of EVENT (default: the first event seen)\n"
    "  --threads N           decoder threads (default: by input size and CPUs)\n"
    "  -h, --help            this help\n";

/* Matches --name and --name=value; *val is set for the latter, or from the next argument
 * when the option needs one. Returns 1 on a match, -1 when a needed value is missing. */
static int opt_value(int argc, char **argv, int *i, const char *name, const char **val)
{
    const char *a = argv[*i];
    size_t n = strlen(name);
    if (strncmp(a, name, n) != 0)
        return 0;
    if (a[n] == '=') {
        *val = a + n + 1;
        return 1;
    }
    if (a[n] != 0)
        return 0;
    if (*i + 1 >= argc)
        return -1;
    *val = argv[++*i];
    return 1;
}

static int collapse_perf(int argc, char **argv)
{
    struct sc_decode_opts o = {0};
    o.format = SC_FMT_PERF;
    const char *path = NULL;
    int only_files = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *val = NULL;
        int r;
        if (only_files || a[0] != '-' || strcmp(a, "-") == 0) {
            if (path)
                return cli_usage("collapse perf", "more than one input file");
            path = a;
        } else if (!strcmp(a, "--")) {
            only_files = 1;
        } else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            return cli_help(help);
        } else if (!strcmp(a, "--pid")) {
            o.perf.pid = 1;
        } else if (!strcmp(a, "--tid")) {
            o.perf.tid = 1;
        } else if (!strcmp(a, "--kernel")) {
            o.perf.kernel = 1;
        } else if (!strcmp(a, "--jit")) {
            o.perf.jit = 1;
        } else if (!strcmp(a, "--all")) {
            o.perf.kernel = o.perf.jit = 1;
        } else if (!strcmp(a, "--addrs")) {
            o.perf.addrs = 1;
        } else if ((r = opt_value(argc, argv, &i, "--event-filter", &val)) != 0) {
            if (r < 0)
                return cli_usage("collapse perf", "--event-filter needs an event name");
            o.perf.event = val;
        } else if ((r = opt_value(argc, argv, &i, "--threads", &val)) != 0) {
            char *end;
            long t = r > 0 ? strtol(val, &end, 10) : -1;
            if (r < 0 || *val == 0 || *end != 0 || t < 1 || t > 64)
                return cli_usage("collapse perf", "--threads needs a number from 1 to 64");
            o.perf.threads = (int)t;
        } else if (!strcmp(a, "--inline") || !strcmp(a, "--context") || !strcmp(a, "--srcline")) {
            return cli_usage("collapse perf", "'%s' is not supported", a);
        } else {
            return cli_usage("collapse perf", "unknown option '%s'", a);
        }
    }
    char err[SC_ERR_LEN] = "";
    struct sc_profile *p = NULL;
    if (sc_load(path, &o, &p, err))
        return cli_error("%s", err);
    struct sc_buf out = SC_BUF_INIT;
    int rc = sc_folded_write(p, 0, &out, err);
    sc_profile_free(p);
    if (rc) {
        sc_buf_release(&out);
        return cli_error("collapse: %s", err);
    }
    rc = cli_write(NULL, &out);
    sc_buf_release(&out);
    return rc;
}

int cmd_collapse(int argc, char **argv)
{
    static const char top_help[] =
        "usage: scorch collapse perf [options] [FILE]\n"
        "\n"
        "Folds stack samples into \"frame;frame;frame count\" lines. Collapsers:\n"
        "  perf    `perf script` output, as FlameGraph's stackcollapse-perf.pl\n"
        "\n"
        "'scorch collapse perf --help' lists its options.\n";
    if (argc < 2)
        return cli_usage("collapse", "which collapser? (perf)");
    if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))
        return cli_help(top_help);
    if (!strcmp(argv[1], "perf"))
        return collapse_perf(argc - 1, argv + 1);
    return cli_usage("collapse", "unknown collapser '%s' (known: perf)", argv[1]);
}
