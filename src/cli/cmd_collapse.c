/* cmd_collapse.c - `scorch collapse perf`: perf script text to folded stacks. */
#include "cli/cli.h"
#include "formats/folded.h"
#include "formats/input.h"
#include "formats/perf.h"
#include "model/error.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char help_collapse[] =
    "usage: scorch collapse perf [options] [FILE]\n"
    "\n"
    "Folds stack samples into one line per distinct stack, \"frame;frame;frame count\",\n"
    "sorted, on stdout. The only collapser is 'perf'.\n"
    "\n"
    "'scorch collapse perf --help' lists its options.\n";

static const char help_perf[] =
    "usage: scorch collapse perf [--pid] [--tid] [--kernel] [--jit] [--all] [--addrs]\n"
    "                            [--event-filter EVENT] [FILE]\n"
    "\n"
    "Reads `perf script` output and prints folded stacks, \"proc;caller;...;callee count\",\n"
    "sorted, one line per distinct stack. A drop-in replacement for FlameGraph's\n"
    "stackcollapse-perf.pl: the same flags print the same lines, only much faster.\n"
    "FILE may be gzip-compressed; '-' or no FILE reads stdin.\n"
    "\n"
    "  --pid                  name the process frame comm-PID\n"
    "  --tid                  name the process frame comm-PID/TID\n"
    "  --kernel               annotate kernel frames with _[k]\n"
    "  --jit                  annotate JIT frames (/tmp/perf-PID.map) with _[j]\n"
    "  --all                  both annotations (--kernel --jit)\n"
    "  --addrs                keep raw addresses of unknown symbols: [dso <addr>]\n"
    "  --event-filter EVENT   keep samples of EVENT, as perf names it in each sample\n"
    "                         header (e.g. cycles, cpu-clock:pppH); by default only the\n"
    "                         first event seen is kept\n"
    "  --threads N            parse with N threads, 1 to 16 (default: one per CPU for big\n"
    "                         inputs)\n"
    "  -h, --help             this text\n"
    "\n"
    "Counts are summed periods (1 per sample when perf printed no period). As with the Perl\n"
    "script, a sample counts only once a blank line ends it. perf script must print both\n"
    "pid and tid (e.g. perf script -F comm,pid,tid,cpu,time,event,ip,sym,dso) for --pid\n"
    "and --tid to show them; otherwise the pid reads '?'.\n"
    "The script's --inline, --context and --srcline (which run addr2line) are not\n"
    "supported. As the script, it misreads two things perf prints, so that the lines stay\n"
    "the same: exited tasks (comm ':-1', ids -1) become a process named after the rest of\n"
    "their header, and the one-line samples of a recording without call chains (no -g)\n"
    "are left out (a warning counts them). --no-quirks reads them as perf means them: one\n"
    "process ':-1', one-frame samples (as scorch top, convert, flamegraph and the server\n"
    "always do).\n"
    "\n"
    "  --no-quirks            exited tasks and one-line samples as perf means them\n";

enum { OPT_EVENT = 256, OPT_THREADS, OPT_UNSUPPORTED, OPT_NO_QUIRKS };

static int collapse_perf(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"pid", no_argument, NULL, 'p'},
        {"tid", no_argument, NULL, 't'},
        {"kernel", no_argument, NULL, 'k'},
        {"jit", no_argument, NULL, 'j'},
        {"all", no_argument, NULL, 'a'},
        {"addrs", no_argument, NULL, 'A'},
        {"event-filter", required_argument, NULL, OPT_EVENT},
        {"threads", required_argument, NULL, OPT_THREADS},
        {"no-quirks", no_argument, NULL, OPT_NO_QUIRKS},
        {"inline", no_argument, NULL, OPT_UNSUPPORTED},
        {"context", no_argument, NULL, OPT_UNSUPPORTED},
        {"srcline", no_argument, NULL, OPT_UNSUPPORTED},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *cmd = "collapse perf";
    /* the drop-in reads as the script reads (the contract: the same lines) */
    struct sc_perf_opts o = {.as_script = 1};
    int c, li;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "h", longopts, &li)) != -1) {
        switch (c) {
        case 'p':
            o.pid = 1;
            break;
        case 't':
            o.tid = 1;
            break;
        case 'k':
            o.kernel = 1;
            break;
        case 'j':
            o.jit = 1;
            break;
        case 'a':
            o.kernel = o.jit = 1;
            break;
        case 'A':
            o.addrs = 1;
            break;
        case OPT_EVENT:
            o.event = optarg;
            break;
        case OPT_NO_QUIRKS:
            o.as_script = 0;
            break;
        case OPT_THREADS: {
            struct sc_set_value v;
            int rc = cli_setting(cmd, SC_SET_COLLAPSE_THREADS, "--threads", optarg, &v);
            if (rc)
                return rc;
            o.threads = (int)v.i;
            break;
        }
        case OPT_UNSUPPORTED:
            return cli_usage(cmd, "%s needs addr2line and is not supported", argv[optind - 1]);
        case 'h':
            return cli_help(help_perf);
        default:
            if (optopt == OPT_EVENT || optopt == OPT_THREADS)
                return cli_usage(cmd, "%s needs a value", argv[optind - 1]);
            return cli_usage(cmd, "unknown option '%s'", argv[optind - 1]);
        }
    }
    if (argc - optind > 1)
        return cli_usage(cmd, "one input file at most, got %d", argc - optind);
    const char *path = optind < argc ? argv[optind] : "-";

    char err[SC_ERR_LEN] = "";
    struct sc_perf_stats st = {0};
    struct sc_decode_opts dopts = {.perf = o, .format = SC_FMT_PERF, .perf_stats = &st};
    struct sc_profile *p;
    if (sc_load(path, &dopts, &p, err))
        return cli_error("%s", err);
    /* the Perl script's one warning, made informative */
    if (st.other_events && !o.event)
        fprintf(stderr,
                "scorch: warning: kept only samples of event '%s'; skipped %llu of other "
                "events such as '%s' (see --event-filter)\n",
                st.event, (unsigned long long)st.other_events, st.other_event);
    if (o.event && st.samples == 0 && st.other_events)
        fprintf(stderr, "scorch: warning: no samples of event '%s'\n", o.event);
    if (st.unrecognized)
        fprintf(stderr, "scorch: warning: skipped %llu unrecognized line%s\n",
                (unsigned long long)st.unrecognized, st.unrecognized == 1 ? "" : "s");
    if (st.one_line)
        fprintf(stderr,
                "scorch: warning: left out %llu one-line sample%s (a recording without call "
                "chains), as stackcollapse-perf.pl does; --no-quirks keeps each as one frame\n",
                (unsigned long long)st.one_line, st.one_line == 1 ? "" : "s");
    if (st.unterminated)
        fprintf(stderr, "scorch: warning: no empty line ends the last sample, so (as with "
                        "stackcollapse-perf.pl) it is not counted\n");
    struct sc_buf out = SC_BUF_INIT;
    int vi = sc_profile_sample_index(p, NULL, err);
    int status =
        vi < 0 || sc_folded_write(p, vi, &out, err) ? cli_error("%s", err) : cli_write(NULL, &out);
    sc_buf_release(&out);
    sc_profile_free(p);
    return status;
}

int cmd_collapse(int argc, char **argv)
{
    if (argc < 2)
        return cli_usage("collapse", "which collapser? the only one is 'perf'");
    const char *name = argv[1];
    if (!strcmp(name, "-h") || !strcmp(name, "--help"))
        return cli_help(help_collapse);
    if (!strcmp(name, "perf"))
        return collapse_perf(argc - 1, argv + 1);
    return cli_usage("collapse", "unknown collapser '%s' (the only one is 'perf')", name);
}
