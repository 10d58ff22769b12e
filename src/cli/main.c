/* main.c - the scorch binary: dispatches to one subcommand per file in src/cli/. */
#include "cli/cli.h"
#include "collect/localsym.h"
#include "formats/input.h"
#include "formats/format.h"
#include "model/error.h"
#include "model/log.h"
#include "query/layout.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>

#ifndef SCORCH_VERSION
#define SCORCH_VERSION "0.1.0"
#endif

/* once: reads its inputs, answers and exits (cli_malloc_once) */
static const struct cmd {
    const char *name;
    int (*fn)(int argc, char **argv);
    const char *summary;
    int once;
} cmds[] = {
    {"collapse", cmd_collapse, "fold `perf script` output into stacks (stackcollapse-perf.pl)", 1},
    {"flamegraph", cmd_flamegraph, "draw an interactive SVG flame graph (flamegraph.pl)", 1},
    {"diff-folded", cmd_diff_folded, "pair two folded files for a differential flame graph", 1},
    {"compare", cmd_compare, "which functions really changed between two sets of profiles", 1},
    {"top", cmd_top, "per-function flat and cumulative values (go tool pprof -top)", 1},
    {"convert", cmd_convert, "convert between pprof, folded, speedscope and SVG", 1},
    {"callgraph", cmd_callgraph, "draw the call graph as DOT or SVG (go tool pprof -dot)", 1},
    {"list", cmd_list, "per-line flat and cum values with source (go tool pprof -list)", 1},
    {"heatmap", cmd_heatmap, "FlameScope's sub-second heatmap of perf samples, as JSON", 1},
    {"server", cmd_server, "keep profiles: HTTP API, Pyroscope-compatible ingest, web UI", 0},
    {"agent", cmd_agent, "scrape Go pprof endpoints on a schedule and push to a server", 0},
    {"ingest", cmd_ingest, "push profile files of any format to a server's /ingest", 0},
    {"record", cmd_record, "sample on-CPU stacks with perf events; write or push pprof", 0},
    {"settings", cmd_settings, "every setting: config key, flag, parameter, bounds, default", 0},
};

static void usage(FILE *f)
{
    fprintf(f, "usage: scorch <command> [options] [args]\n\n"
               "scorch keeps profiles and shows them. Commands:\n\n");
    for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++)
        fprintf(f, "  %-12s %s\n", cmds[i].name, cmds[i].summary);
    char list[512];
    fprintf(f,
            "\nInputs, gzipped or not, may be\n  %s;\n"
            "the format is detected from the content. '-' or no file reads stdin.\n"
            "'scorch <command> --help' describes a command.\n",
            sc_format_list(SC_FMT_LIST_DESC, list, sizeof list));
}

int main(int argc, char **argv)
{
    /* the server's call-graph layout worker (query/layout.h), not for people */
    if (argc == 2 && !strcmp(argv[1], "__layout")) {
        char err[SC_ERR_LEN] = "";
        int status = sc_layout_worker(0, 1, err);
        if (status)
            fprintf(stderr, "scorch: %s\n", err);
        return status;
    }
    /* what the layers below report on their own threads (model/log.h) goes to stderr */
    sc_log_set(cli_log_line, NULL);
    /* Output to a closed pipe should end us quietly with an error, not a signal. */
    signal(SIGPIPE, SIG_IGN);
    /* files name their addresses from the binaries here, as go tool pprof does */
    sc_input_set_symbolizer(sc_symbolize_local);
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    const char *name = argv[1];
    if (!strcmp(name, "--help") || !strcmp(name, "-h") || !strcmp(name, "help")) {
        if (argc > 2 && strcmp(name, "help") == 0) {
            char help[] = "--help";
            char *args[] = {argv[2], help, NULL};
            for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++)
                if (!strcmp(cmds[i].name, argv[2]))
                    return cmds[i].fn(2, args);
        }
        usage(stdout);
        return 0;
    }
    if (!strcmp(name, "--version") || !strcmp(name, "version")) {
        printf("scorch %s\n", SCORCH_VERSION);
        return 0;
    }
    for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++)
        if (!strcmp(cmds[i].name, name)) {
            if (cmds[i].once)
                cli_malloc_once();
            return cmds[i].fn(argc - 1, argv + 1);
        }
    fprintf(stderr, "scorch: '%s' is not a scorch command (see 'scorch --help')\n", name);
    return 2;
}
