/* callgraph.h - the call graph of a profile, as `go tool pprof -dot` draws it (DOT and SVG). */
#ifndef SC_CALLGRAPH_H
#define SC_CALLGRAPH_H

#include <stdint.h>

#include "model/arena.h"
#include "model/buf.h"
#include "model/profile.h"
#include "query/layout.h"

/* The graph is pprof's at its default "functions" granularity: one node per function name
 * (frames without a function are named after their binary, "[libc.so.6]", or
 * "<unknown>"), flat = value of samples whose innermost frame is the function, cum = value
 * of samples with the function on the stack (once per sample), and an edge caller ->
 * callee for every pair of adjacent shown frames, counted once per sample.
 *
 * The cuts are pprof's, in pprof's order:
 *  1. nodes whose |cum| is below nodefraction of the total flat are dropped, and the graph
 *     is rebuilt from the samples without them: an edge that skips dropped frames is
 *     "residual" (drawn dotted);
 *  2. nodes are ranked by pprof's entropy score (nodes that merely pass their weight from
 *     one caller to one callee rank low), edges lighter than edgefraction are ignored and
 *     the top `nodecount` nodes are kept, each node's tag boxes (below) counting as nodes
 *     too; the graph is rebuilt from the samples again;
 *  3. edges lighter than edgefraction are dropped, and residual edges whose endpoints are
 *     connected another way are removed.
 * An edge is "inline" when the callee was inlined into the caller in every sample that
 * counted it.
 *
 * Tags are pprof's nodelets: a sample's string labels ("key:value", joined) and its
 * numeric "bytes" labels (Go heap profiles carry the allocation size there), summed per
 * node; they appear as small boxes under a node. Samples decoded lazily (see
 * sc_pprof_decode_lazy) carry no labels here, so such profiles have no tags. */

struct sc_callgraph_opts {
    uint32_t nodecount;  /* keep at most this many nodes (tag boxes count); 0 = no limit */
    double nodefraction; /* pprof's 0.005 */
    double edgefraction; /* pprof's 0.001 */
    const char *title;   /* DOT graph name; NULL = base name of the first mapping's file */
    const struct sc_layout_opts *layout; /* SVG: where the layout runs (NULL: in-process) */
};

/* pprof's defaults for graphs. */
#define SC_CALLGRAPH_OPTS_INIT                                                                     \
    {                                                                                              \
        80, 0.005, 0.001, NULL, NULL                                                               \
    }

struct sc_callgraph_node {
    struct sc_str name; /* pprof's printable name; points into the profile or the graph */
    int64_t flat, cum;
    uint8_t nameless; /* a frame without a function name: name is "[binary]"/"<unknown>" */
    uint32_t id;      /* internal identity (index into per-identity arrays) */
};

struct sc_callgraph_edge {
    uint32_t src, dst; /* indexes into nodes */
    int64_t weight;
    uint8_t residual; /* skips frames whose nodes were dropped */
    uint8_t inlined;  /* the callee was inlined into the caller everywhere it counted */
};

/* A computed graph. nodes are in pprof's order (node i is "N<i+1>" in the DOT); edges are
 * sorted like pprof's output: |weight| descending, then caller and callee names. */
struct sc_callgraph {
    struct sc_callgraph_node *nodes;
    uint32_t nnodes;
    struct sc_callgraph_edge *edges;
    uint32_t nedges;
    int64_t total;               /* sum of |value| over samples, pprof's report total */
    uint32_t orig_count;         /* nodes left after the node fraction cut */
    uint32_t dropped_nodes;      /* by the node fraction cut */
    uint32_t dropped_edges;      /* by the final edge fraction cut */
    struct sc_callgraph_int *in; /* tags and build state for the writers */
};

/* Computes the graph of p's value column vi. 0 or SC_E* (detail in err). Release with
 * sc_callgraph_release() even on failure. */
int sc_callgraph_compute(const struct sc_profile *p, int vi, const struct sc_callgraph_opts *o,
                         struct sc_callgraph *g, char *err);
void sc_callgraph_release(struct sc_callgraph *g);

/* Writes g (computed from p, vi and o) as pprof's DOT: the legend box with the profile's
 * header lines and the cuts, nodes boxed with font size growing with |flat| (8 to 24) and
 * colours from grey to red with cum, edges with pen width and colour by weight, dotted when
 * residual, labelled "(inline)" when inlined. Values use the single unit pprof picks. */
void sc_callgraph_write_dot(const struct sc_profile *p, int vi, const struct sc_callgraph_opts *o,
                            const struct sc_callgraph *g, struct sc_buf *out);

/* compute + write_dot. 0 or SC_E* (detail in err). */
int sc_callgraph_dot(const struct sc_profile *p, int vi, const struct sc_callgraph_opts *o,
                     struct sc_buf *out, char *err);

/* Graphs with more nodes than this are not laid out (dot's layout time grows fast). */
#define SC_CALLGRAPH_SVG_MAX_NODES 2000

/* The size of dot's layout of the first k nodes of g and the edges between them: the
 * nodes plus the virtual nodes dot puts on edges that span ranks (ranks estimated as
 * longest paths). dot's time grows faster than this (callgraph.c has the figures). */
uint64_t sc_callgraph_layout_size(const struct sc_callgraph *g, uint32_t k);

/* The layout size beyond which sc_callgraph_svg draws fewer nodes: about 1 s of dot. */
#define SC_CALLGRAPH_LAYOUT_BUDGET 1000

/* compute + write_dot + sc_callgraph_render_svg, with at most as many nodes as lay out
 * within SC_CALLGRAPH_LAYOUT_BUDGET (the legend says "Showing top N nodes out of M").
 * SC_ELIMIT when the graph has more than SC_CALLGRAPH_SVG_MAX_NODES nodes (ask for a
 * smaller nodecount). */
int sc_callgraph_svg(const struct sc_profile *p, int vi, const struct sc_callgraph_opts *o,
                     struct sc_buf *out, char *err);
/* The same with another budget (0: none); *nodecount (may be NULL) gets the nodecount
 * drawn: o's, or the smaller one the budget allowed. */
int sc_callgraph_svg_fit(const struct sc_profile *p, int vi, const struct sc_callgraph_opts *o,
                         uint64_t budget, uint32_t *nodecount, struct sc_buf *out, char *err);

/* Lays out DOT text with graphviz's "dot" engine in-process (libgvc) and appends the SVG to
 * out. The graph, its layout and the rendered text are freed before returning, so it may
 * be called any number of times; one graphviz context (plugins, font tables) is created on
 * the first call and kept for the life of the process, because graphviz's text layout
 * caches pointers into it across calls. Graphviz keeps global state and is not
 * thread-safe: calls are serialized by a process-wide mutex, so concurrent callers wait
 * for each other (and no other code in the process may use graphviz without that mutex).
 * SC_EFORMAT when graphviz rejects the text (its message in err), SC_ENOMEM,
 * SC_EINTERNAL. */
int sc_callgraph_render_svg(const char *dot, size_t len, struct sc_buf *out, char *err);

/* pprof's short form of a function name (ShortenFunctionName): package paths, Java packages
 * and C++ namespaces dropped, Go module versions removed, e.g.
 * "github.com/x/y/v2/pkg.(*T).M" -> "pkg.(*T).M", "std::vector<int>::push_back" unchanged,
 * "ns::Foo::bar" -> "Foo::bar". Appends to out. */
void sc_callgraph_shorten_name(const char *s, size_t n, struct sc_buf *out);

/* pprof's colour for a score in [-1, 1] (e.g. cum / total): grey near 0, red towards 1,
 * green towards -1; a light variant for backgrounds. Writes "#rrggbb" into out[8]. */
void sc_callgraph_color(double score, int background, char out[8]);

#endif
