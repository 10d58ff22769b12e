/* callgraph_svg.c - the call graph as SVG: graphviz's dot layout, and the estimate of its
 * size and time that fits the graph to a layout budget. */
#include "query/callgraph.h"
#include "model/clock.h"
#include "model/dl_gvc.h"
#include "model/error.h"
#include "query/callgraph_int.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- SVG through graphviz --------------------------------------------------------------- */

/* graphviz keeps global state (error handler, symbol tables) and is not thread-safe */
static pthread_mutex_t gv_lock = PTHREAD_MUTEX_INITIALIZER;
static char gv_msg[SC_ERR_LEN]; /* the first error graphviz reported, under gv_lock */
/* One context for the life of the process: graphviz 2.42's pango text layout caches a
 * pointer to the last font name, which the context owns, so freeing the context between
 * calls makes the next layout read freed memory. Kept, it also saves loading the plugins
 * on every call. Everything per graph is freed. */
static GVC_t *gv_ctx;

static int gv_error(char *msg)
{
    if (!gv_msg[0]) {
        snprintf(gv_msg, sizeof gv_msg, "%s", msg);
        size_t n = strlen(gv_msg);
        while (n && (gv_msg[n - 1] == '\n' || gv_msg[n - 1] == ' '))
            gv_msg[--n] = 0;
    }
    return 0;
}

int sc_callgraph_render_svg(const char *dot, size_t len, struct sc_buf *out, char *err)
{
    int rc = sc_dl_load(SC_DL_GVC, err);
    if (rc)
        return rc;
    /* agmemread wants a C string */
    char *text = malloc(len + 1);
    if (!text)
        return sc_errf(err, SC_ENOMEM, "out of memory");
    memcpy(text, dot, len);
    text[len] = 0;
    pthread_mutex_lock(&gv_lock);
    gv_msg[0] = 0;
    agusererrf prev = sym_agseterrf(gv_error);
    agerrlevel_t prev_level = sym_agseterr(AGERR);
    if (!gv_ctx)
        gv_ctx = sym_gvContext();
    GVC_t *gvc = gv_ctx;
    Agraph_t *graph = NULL;
    if (!gvc) {
        rc = sc_errf(err, SC_ENOMEM, "cannot start graphviz");
        goto done;
    }
    graph = sym_agmemread(text);
    if (!graph) {
        rc = sc_errf(err, SC_EFORMAT, "graphviz cannot read the graph: %s",
                     gv_msg[0] ? gv_msg : "syntax error");
        goto done;
    }
    if (sym_gvLayout(gvc, graph, "dot") != 0) {
        rc = sc_errf(err, SC_EINTERNAL, "graphviz layout failed: %s",
                     gv_msg[0] ? gv_msg : "no \"dot\" layout plugin");
        goto done;
    }
    char *data = NULL;
    unsigned int n = 0;
    if (sym_gvRenderData(gvc, graph, "svg", &data, &n) != 0 || !data) {
        rc = sc_errf(err, SC_EINTERNAL, "graphviz cannot render svg: %s",
                     gv_msg[0] ? gv_msg : "no \"svg\" render plugin");
    } else {
        sc_buf_append(out, data, n);
        if (out->oom)
            rc = sc_errf(err, SC_ENOMEM, "out of memory");
    }
    if (data)
        sym_gvFreeRenderData(data);
    sym_gvFreeLayout(gvc, graph);
done:
    if (graph)
        sym_agclose(graph);
    sym_agseterr(prev_level);
    sym_agseterrf(prev);
    pthread_mutex_unlock(&gv_lock);
    free(text);
    return rc;
}

/* ---- layout size and time ----------------------------------------------------------------- */

/* dot's layout time grows much faster than the graph: a call graph of deep stacks has long
 * chains of ranks, and every edge spanning ranks becomes a chain of virtual nodes that the
 * crossing minimisation and the network simplex of the positioning walk. The size here
 * counts those nodes: ranks as longest paths from the sources, with the edges that close
 * a cycle (found by a depth-first walk, as dot's acyclic pass does) turned around; the node
 * count plus one virtual node per rank an edge skips. Only the edges `kept` says are
 * counted; *sh (may be NULL) gets how many, and the ranks. */

uint64_t sc_callgraph_layout_size(const struct sc_callgraph *g, uint32_t k)
{
    return cg_size_of(g, k, g->nedges, NULL);
}

/* Edge i of g in the graph of its first k nodes thinned to m edges: between two of those
 * nodes, not a loop, and among the m heaviest or its callee's heaviest caller edge. */
static int kept(const struct sc_callgraph *g, uint32_t i, uint32_t k, uint32_t m,
                const uint32_t *first_in)
{
    const struct sc_callgraph_edge *e = &g->edges[i];
    return e->src < k && e->dst < k && e->src != e->dst && (i < m || first_in[e->dst] == i);
}

uint64_t cg_size_of(const struct sc_callgraph *g, uint32_t k, uint32_t m, struct shape *sh)
{
    if (sh)
        sh->edges = sh->ranks = 0;
    if (k > g->nnodes)
        k = g->nnodes;
    if (k == 0)
        return 0;
    uint32_t *deg = calloc((size_t)k + 1, sizeof *deg), *adj = NULL, *start = NULL;
    uint32_t *rank = calloc(k, sizeof *rank), *order = malloc(k * sizeof *order);
    uint32_t *stack = malloc(k * sizeof *stack), *pos = calloc(k, sizeof *pos);
    uint32_t *first_in = malloc(k * sizeof *first_in);
    uint8_t *state = calloc(k, 1);
    uint64_t size = UINT64_MAX; /* out of memory: too large to lay out */
    if (!deg || !rank || !order || !stack || !pos || !first_in || !state)
        goto out;
    for (uint32_t v = 0; v < k; v++)
        first_in[v] = NONE;
    for (uint32_t i = 0; i < g->nedges; i++) {
        const struct sc_callgraph_edge *e = &g->edges[i];
        if (e->src < k && e->dst < k && e->src != e->dst && first_in[e->dst] == NONE)
            first_in[e->dst] = i; /* edges are sorted heaviest first */
    }
    uint32_t ne = 0;
    for (uint32_t i = 0; i < g->nedges; i++)
        if (kept(g, i, k, m, first_in)) {
            deg[g->edges[i].src]++;
            ne++;
        }
    if (sh)
        sh->edges = ne;
    start = malloc(((size_t)k + 1) * sizeof *start);
    adj = malloc(((size_t)ne + 1) * sizeof *adj);
    if (!start || !adj)
        goto out;
    start[0] = 0;
    for (uint32_t v = 0; v < k; v++)
        start[v + 1] = start[v] + deg[v];
    memset(deg, 0, (size_t)k * sizeof *deg);
    for (uint32_t i = 0; i < g->nedges; i++)
        if (kept(g, i, k, m, first_in)) {
            const struct sc_callgraph_edge *e = &g->edges[i];
            adj[start[e->src] + deg[e->src]++] = e->dst;
        }
    /* depth first in node order: post-order gives a topological order of the graph with
     * the back edges (to a node still on the stack) turned around */
    uint32_t no = 0;
    for (uint32_t s0 = 0; s0 < k; s0++) {
        if (state[s0])
            continue;
        uint32_t sp = 0;
        stack[sp++] = s0;
        state[s0] = 1;
        while (sp) {
            uint32_t v = stack[sp - 1];
            if (pos[v] < deg[v]) {
                uint32_t w = adj[start[v] + pos[v]++];
                if (!state[w]) {
                    state[w] = 1;
                    stack[sp++] = w;
                }
                continue;
            }
            state[v] = 2;
            order[no++] = v;
            sp--;
        }
    }
    /* reverse post-order is topological once the back edges (to a node finished later
     * than their source) are turned around: one sweep in that order gives every node the
     * longest path to it. A turned edge v -> w acts as w -> v, so each node relaxes its
     * forward out-edges and its turned in-edges: the latter are collected first. */
    uint32_t *at = pos; /* reused: the post-order index of each node */
    for (uint32_t i = 0; i < k; i++)
        at[order[i]] = i;
    uint32_t *tdeg = calloc((size_t)k + 1, sizeof *tdeg);
    uint32_t *tadj = malloc(((size_t)ne + 1) * sizeof *tadj);
    if (!tdeg || !tadj) {
        free(tdeg);
        free(tadj);
        goto out;
    }
    for (uint32_t v = 0; v < k; v++)
        for (uint32_t j = start[v]; j < start[v + 1]; j++)
            if (at[adj[j]] > at[v])
                tdeg[adj[j]]++;
    uint32_t acc = 0;
    for (uint32_t v = 0; v < k; v++) {
        uint32_t d = tdeg[v];
        tdeg[v] = acc;
        acc += d;
    }
    tdeg[k] = acc;
    for (uint32_t v = 0; v < k; v++)
        for (uint32_t j = start[v]; j < start[v + 1]; j++)
            if (at[adj[j]] > at[v])
                tadj[tdeg[adj[j]]++] = v; /* turned: adj[j] -> v */
    /* tdeg[v] now ends v's turned list; it starts where v - 1's ended */
    for (uint32_t i = k; i-- > 0;) {
        uint32_t v = order[i];
        for (uint32_t j = start[v]; j < start[v + 1]; j++) {
            uint32_t w = adj[j];
            if (at[w] < at[v] && rank[w] < rank[v] + 1)
                rank[w] = rank[v] + 1;
        }
        for (uint32_t j = v ? tdeg[v - 1] : 0; j < tdeg[v]; j++) {
            uint32_t w = tadj[j];
            if (rank[w] < rank[v] + 1)
                rank[w] = rank[v] + 1;
        }
    }
    free(tdeg);
    free(tadj);
    size = k;
    for (uint32_t v = 0; v < k && sh; v++)
        if (rank[v] + 1 > sh->ranks)
            sh->ranks = rank[v] + 1;
    for (uint32_t v = 0; v < k; v++)
        for (uint32_t j = start[v]; j < start[v + 1]; j++) {
            uint32_t a = rank[v], b = rank[adj[j]];
            uint32_t span = a > b ? a - b : b - a;
            if (span > 1)
                size += span - 1;
        }
out:
    free(deg);
    free(adj);
    free(start);
    free(rank);
    free(order);
    free(stack);
    free(pos);
    free(first_in);
    free(state);
    return size;
}

/* dot's CPU seconds for a layout of size s with e edges, by style. Fitted to
 * bench/callgraph_bench's figures (2-core VM shared with other work; the worker's start,
 * 0.05 s, is in the figures, not in the model), as (size, edges): seconds:
 *
 *   pprof's style        300,000-sample heap (bench/gen_pprof.py)  synthetic-allocs-100k
 *                        (275, 100): 0.07     (1321, 216): 0.42    (515, 128): 0.20
 *                        (4478, 295): 3.0     (7444, 405): 22      (2996, 256): 6.2
 *                        (11846, 528): > 120  (1141, 337): 0.28    (8614, 512): > 120
 *   the large style      (11846, 528): 0.22   (12008, 662): 0.25   (8614, 512): 0.26
 *                        (72843, 1213): 2.25                       (19404, 1024): 0.60
 *                                                                  (41745, 2048): 1.96
 *                                                                  (85410, 4097): 4.70
 *
 * pprof's style grows with about the cube of the size (dot's positioning runs its network
 * simplex to the end, and the splines are routed through every virtual node) and with the
 * edges' crossings on dense graphs; the model errs on the slow side, so that a graph near
 * the budget goes to the large style. The large style grows with the size (one feasible
 * tree over the virtual nodes) and with size times edges (two rounds of crossing
 * minimisation over ranks as wide as the edges that cross them). */
static double seconds_of(int style, uint64_t size, uint32_t nedges)
{
    double s = (double)size, e = (double)nedges;
    if (style == SC_CALLGRAPH_STYLE_LARGE)
        return s / 50000 + s * e / 1.2e8;
    return pow(s / 2000, 3) + s * e / 2e5;
}

double sc_callgraph_layout_seconds(const struct sc_callgraph *g, uint32_t k, int style)
{
    struct shape sh;
    uint64_t size = cg_size_of(g, k, g->nedges, &sh);
    return size == UINT64_MAX ? HUGE_VAL : seconds_of(style, size, sh.edges);
}

uint32_t sc_callgraph_thin(struct sc_callgraph *g, uint32_t m)
{
    if (m >= g->nedges)
        return 0;
    uint8_t *has_in = calloc((size_t)g->nnodes + 1, 1);
    if (!has_in)
        return 0; /* nothing dropped: the layout is slower, not wrong */
    uint32_t n = 0;
    for (uint32_t i = 0; i < g->nedges; i++) {
        struct sc_callgraph_edge e = g->edges[i];
        int first = e.src != e.dst && !has_in[e.dst];
        if (e.src != e.dst)
            has_in[e.dst] = 1;
        if (i < m || first)
            g->edges[n++] = e;
    }
    free(has_in);
    uint32_t dropped = g->nedges - n;
    g->nedges = n;
    g->thinned += dropped;
    return dropped;
}

int64_t sc_callgraph_budget_ns(const struct sc_callgraph_opts *o)
{
    int64_t t = o->layout && o->layout->timeout_ns > 0 ? o->layout->timeout_ns : 30 * SC_NS_PER_S;
    return t / 4;
}

/* How to draw g within budget seconds: a style and the edges to keep (thinning only when
 * thin is set); fits is 0 when even every node's heaviest caller edge alone is too slow. */
struct plan {
    int style;
    uint32_t m;
    int fits;
    double seconds;
};

static struct plan plan_layout(const struct sc_callgraph *g, double budget, int thin)
{
    struct shape sh;
    uint64_t all = cg_size_of(g, g->nnodes, g->nedges, &sh);
    struct plan p = {SC_CALLGRAPH_STYLE_PPROF, g->nedges, 1, seconds_of(0, all, sh.edges)};
    if (all != UINT64_MAX && p.seconds <= budget)
        return p;
    p.style = SC_CALLGRAPH_STYLE_LARGE;
    p.seconds = seconds_of(p.style, all, sh.edges);
    if ((all != UINT64_MAX && p.seconds <= budget) || !thin)
        return p;
    /* the most edges, heaviest first, that lay out in time */
    uint32_t lo = 0, hi = g->nedges;
    uint64_t size = cg_size_of(g, g->nnodes, 0, &sh);
    p.fits = size != UINT64_MAX && seconds_of(p.style, size, sh.edges) <= budget;
    if (!p.fits) {
        p.m = 0;
        p.seconds = size == UINT64_MAX ? HUGE_VAL : seconds_of(p.style, size, sh.edges);
        return p;
    }
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo + 1) / 2;
        size = cg_size_of(g, g->nnodes, mid, &sh);
        if (size != UINT64_MAX && seconds_of(p.style, size, sh.edges) <= budget)
            lo = mid;
        else
            hi = mid - 1;
    }
    p.m = lo;
    size = cg_size_of(g, g->nnodes, lo, &sh);
    p.seconds = seconds_of(p.style, size, sh.edges);
    return p;
}

/* The most nodes of g, in its order, that lay out within budget seconds in the large
 * style with only their heaviest caller edges (at least 1). */
static uint32_t fit_nodes(const struct sc_callgraph *g, double budget)
{
    uint32_t lo = 1, hi = g->nnodes;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo + 1) / 2;
        struct shape sh;
        uint64_t size = cg_size_of(g, mid, 0, &sh);
        if (size != UINT64_MAX && seconds_of(SC_CALLGRAPH_STYLE_LARGE, size, sh.edges) <= budget)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

/* What was drawn, as data attributes of the SVG's root element (inserted after "<svg"). */
static void put_drawn_attrs(struct sc_buf *out, size_t from, const struct sc_callgraph_drawn *d)
{
    const char *svg = NULL;
    for (size_t i = from; i + 4 <= out->len && !svg; i++)
        if (!memcmp(out->data + i, "<svg", 4) &&
            (out->data[i + 4] == ' ' || out->data[i + 4] == '\n'))
            svg = out->data + i + 4;
    if (!svg)
        return;
    struct sc_buf a = SC_BUF_INIT;
    sc_buf_printf(&a,
                  " data-nodes-asked=\"%u\" data-nodes=\"%u\" data-nodes-total=\"%u\""
                  " data-nodes-cut=\"%d\"",
                  d->asked, d->nodes, d->total_nodes, d->nodes_cut);
    sc_buf_printf(&a, " data-edges=\"%u\" data-edges-thinned=\"%u\"", d->edges, d->thinned);
    sc_buf_printf(&a, " data-flat=\"%lld\" data-total=\"%lld\" data-share=\"%.4f\"",
                  (long long)d->flat, (long long)d->total,
                  d->total ? (double)d->flat / (double)d->total : 0.0);
    sc_buf_printf(&a, " data-layout=\"%s\" data-seconds=\"%.2f\" data-full-seconds=\"%.2f\"",
                  d->style == SC_CALLGRAPH_STYLE_LARGE ? "large" : "pprof", d->seconds,
                  d->full_seconds > 1e9 ? 1e9 : d->full_seconds);
    sc_buf_printf(&a, " data-budget-seconds=\"%.2f\"", (double)d->budget_ns / 1e9);
    size_t at = (size_t)(svg - out->data), n = out->len - at;
    if (!a.oom && !sc_buf_reserve(out, a.len)) {
        memmove(out->data + at + a.len, out->data + at, n);
        memcpy(out->data + at, a.data, a.len);
        out->len += a.len;
    } else {
        out->oom = 1;
    }
    sc_buf_release(&a);
}

int sc_callgraph_svg(const struct sc_profile *p, int vi, const struct sc_callgraph_opts *o,
                     struct sc_buf *out, char *err)
{
    return sc_callgraph_svg_fit(p, vi, o, o->exact ? 0 : sc_callgraph_budget_ns(o), NULL, out, err);
}

int sc_callgraph_svg_fit(const struct sc_profile *p, int vi, const struct sc_callgraph_opts *o,
                         int64_t budget_ns, struct sc_callgraph_drawn *drawn, struct sc_buf *out,
                         char *err)
{
    struct sc_callgraph g;
    struct sc_callgraph_opts fit = *o;
    struct sc_callgraph_drawn d = {o->nodecount, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, budget_ns};
    struct pass base;
    /* the style is picked within the default budget when there is none to fit into */
    double budget = (double)(budget_ns > 0 ? budget_ns : sc_callgraph_budget_ns(o)) / 1e9;
    struct plan pl = {SC_CALLGRAPH_STYLE_PPROF, 0, 1, 0};
    int rc = cg_prepare(p, vi, o, &g, &base, err);
    if (!rc)
        rc = cg_select(&g, &base, fit.nodecount, budget_ns <= 0, err);
    if (!rc) {
        d.full_seconds = plan_layout(&g, budget, 0).seconds; /* what fit=0 would draw */
        pl = plan_layout(&g, budget, budget_ns > 0);
    }
    /* too slow even with every node's heaviest caller edge alone: fewer nodes, as pprof's
     * nodecount keeps them. The graph is rebuilt from the samples (edges through dropped
     * nodes become residual ones), which changes its size: a few rounds, each a walk over
     * the samples. */
    for (int round = 0; !rc && budget_ns > 0 && !pl.fits && round < 6; round++) {
        uint32_t k = fit_nodes(&g, budget);
        fit.nodecount = k < g.nnodes ? k : g.nnodes - 1;
        if (fit.nodecount == 0)
            break;
        cg_unselect(&g);
        rc = cg_select(&g, &base, fit.nodecount, 0, err);
        if (!rc)
            pl = plan_layout(&g, budget, 1);
    }
    cg_pass_release(&base);
    if (!rc && g.nnodes > SC_CALLGRAPH_SVG_MAX_NODES)
        rc = sc_errf(err, SC_ELIMIT, "call graph of %u nodes is too large to draw (at most %d)",
                     g.nnodes, SC_CALLGRAPH_SVG_MAX_NODES);
    struct sc_buf dot = SC_BUF_INIT;
    if (!rc) {
        d.nodes_cut = fit.nodecount != o->nodecount;
        if (d.nodes_cut)
            g.asked = o->nodecount ? o->nodecount : g.orig_count;
        if (pl.m < g.nedges)
            sc_callgraph_thin(&g, pl.m);
        fit.style = (uint8_t)pl.style;
        sc_callgraph_write_dot(p, vi, &fit, &g, &dot);
        if (dot.oom)
            rc = sc_errf(err, SC_ENOMEM, "out of memory");
        d.nodes = g.nnodes;
        d.total_nodes = g.orig_count;
        d.edges = g.nedges;
        d.thinned = g.thinned;
        d.total = g.total;
        for (uint32_t i = 0; i < g.nnodes; i++)
            d.flat += g.nodes[i].flat;
        d.style = pl.style;
        d.seconds = pl.seconds;
    }
    sc_callgraph_release(&g);
    size_t start = out->len;
    if (!rc)
        rc = sc_layout_svg(dot.data, dot.len, o->layout, out, err);
    sc_buf_release(&dot);
    if (!rc) {
        put_drawn_attrs(out, start, &d);
        if (out->oom)
            rc = sc_errf(err, SC_ENOMEM, "out of memory");
    }
    if (drawn)
        *drawn = d;
    return rc;
}
