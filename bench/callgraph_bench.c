/* callgraph_bench.c - dot's time for call graphs against their layout size, by style.
 *
 * For each node count, the call graph of FILE (its default sample type; samples decoded as
 * the server reads stored ones, without labels, so without tag boxes) is laid out by the
 * real worker (`scorch __layout`, 120 s deadline) in both styles with all its edges, then
 * thinned (sc_callgraph_thin) to half, a quarter... of them and to each node's heaviest
 * caller edge alone. Prints per layout: nodes, edges, layout size, the worker's CPU and
 * wall seconds and what sc_callgraph_layout_seconds predicted; the numbers the time model
 * of src/query/callgraph.c is fitted to. Then what sc_callgraph_svg_fit draws within the
 * server's default budget (a quarter of server.layout_timeout's 20 s) for each node count.
 * A layout predicted to take more than 40 s is not tried. Not a test.
 *
 * usage: callgraph_bench SCORCH FILE [NODECOUNT...]   (default node counts: 80 500)
 * env: BENCH_STYLES=pprof,large (which to time), BENCH_THIN=0 (all edges only) */
#include "formats/input.h"
#include "model/clock.h"
#include "model/error.h"
#include "query/callgraph.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

static double children_cpu(void)
{
    struct rusage ru;
    getrusage(RUSAGE_CHILDREN, &ru);
    return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
           (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

static const char *style_name(int style)
{
    return style == SC_CALLGRAPH_STYLE_LARGE ? "large" : "pprof";
}

/* Lays g out in a style with the worker; prints a row. */
static void time_layout(const char *exe, const struct sc_profile *p, int vi,
                        struct sc_callgraph_opts *o, const struct sc_callgraph *g, int style)
{
    o->style = (uint8_t)style;
    struct sc_buf dot = SC_BUF_INIT, svg = SC_BUF_INIT;
    sc_callgraph_write_dot(p, vi, o, g, &dot);
    struct sc_layout_opts lo = {exe, 120 * SC_NS_PER_S, 4ull << 30, -1, NULL};
    char err[SC_ERR_LEN] = "";
    double c0 = children_cpu();
    int64_t t0 = sc_mono_ns();
    int rc = sc_layout_svg(dot.data, dot.len, &lo, &svg, err);
    double wall = (double)(sc_mono_ns() - t0) / 1e9, cpu = children_cpu() - c0;
    printf("%-6s %6u %6u %9llu %8.2f %8.2f %9.2f%s%s\n", style_name(style), g->nnodes, g->nedges,
           (unsigned long long)sc_callgraph_layout_size(g, g->nnodes), cpu, wall,
           sc_callgraph_layout_seconds(g, g->nnodes, style), rc ? "  " : "", rc ? err : "");
    fflush(stdout);
    sc_buf_release(&dot);
    sc_buf_release(&svg);
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: callgraph_bench SCORCH FILE [NODECOUNT...]\n");
        return 2;
    }
    const char *exe = argv[1], *styles = getenv("BENCH_STYLES"), *thin = getenv("BENCH_THIN");
    int want[2] = {!styles || strstr(styles, "pprof"), !styles || strstr(styles, "large")};
    char err[SC_ERR_LEN] = "";
    struct sc_decode_opts d = {.lazy_samples = 1};
    struct sc_profile *p;
    if (sc_load(argv[2], &d, &p, err)) {
        fprintf(stderr, "callgraph_bench: %s\n", err);
        return 1;
    }
    int vi = sc_profile_sample_index(p, NULL, err);
    uint32_t counts[32] = {80, 500}, ncounts = 2;
    if (argc > 3)
        for (ncounts = 0; ncounts < 32 && (int)ncounts + 3 < argc; ncounts++)
            counts[ncounts] = (uint32_t)strtoul(argv[ncounts + 3], NULL, 10);
    printf("%-6s %6s %6s %9s %8s %8s %9s\n", "style", "nodes", "edges", "size", "cpu s", "wall s",
           "predicted");
    for (uint32_t c = 0; c < ncounts; c++) {
        struct sc_callgraph_opts o = SC_CALLGRAPH_OPTS_INIT;
        o.nodecount = counts[c];
        struct sc_callgraph g;
        if (sc_callgraph_compute(p, vi, &o, &g, err)) {
            fprintf(stderr, "callgraph_bench: %s\n", err);
            return 1;
        }
        uint32_t all = g.nedges;
        sc_callgraph_release(&g);
        uint32_t last = UINT32_MAX;
        for (uint32_t m = all;; m /= 2) {
            sc_callgraph_compute(p, vi, &o, &g, err);
            sc_callgraph_thin(&g, m);
            if (g.nedges == last) { /* down to the heaviest caller edges */
                sc_callgraph_release(&g);
                break;
            }
            last = g.nedges;
            for (int s = 0; s < 2; s++)
                if (want[s] && sc_callgraph_layout_seconds(&g, g.nnodes, s) < 40)
                    time_layout(exe, p, vi, &o, &g, s);
            sc_callgraph_release(&g);
            if (m == 0 || (thin && !strcmp(thin, "0")))
                break;
        }
    }
    /* what the server draws within its default budget */
    struct sc_layout_opts lo = {exe, 20 * SC_NS_PER_S, 1ull << 30, -1, NULL};
    for (uint32_t c = 0; c < ncounts; c++) {
        struct sc_callgraph_opts o = SC_CALLGRAPH_OPTS_INIT;
        o.nodecount = counts[c];
        o.layout = &lo;
        struct sc_callgraph_drawn dr;
        struct sc_buf svg = SC_BUF_INIT;
        double c0 = children_cpu();
        int64_t t0 = sc_mono_ns();
        int rc = sc_callgraph_svg_fit(p, vi, &o, sc_callgraph_budget_ns(&o), &dr, &svg, err);
        printf("asked %u: %s; %u of %u nodes, %u edges (%u thinned), %s style, %.1f%% of the "
               "total; layout %.2f s CPU (predicted %.2f), %.2f s in all; all asked: %.2f s\n",
               counts[c], rc ? err : "drawn", dr.nodes, dr.total_nodes, dr.edges, dr.thinned,
               style_name(dr.style), dr.total ? 100.0 * (double)dr.flat / (double)dr.total : 0,
               children_cpu() - c0, dr.seconds, (double)(sc_mono_ns() - t0) / 1e9, dr.full_seconds);
        sc_buf_release(&svg);
    }
    sc_profile_free(p);
    return 0;
}
