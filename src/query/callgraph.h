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

/* How the DOT asks Graphviz's dot to lay it out. dot's time grows with the virtual nodes
 * it puts on every edge that spans ranks (callgraph.c has the figures); the large style
 * spends it where a large graph needs it: its edges carry no label (a label is a rank of
 * its own in the middle of the edge, doubling the ranks; the value stays in the edge's
 * tooltip), are drawn straight, and dot's crossing minimisation and positioning stop
 * after their first rounds (mclimit, nslimit). */
enum sc_callgraph_style {
    SC_CALLGRAPH_STYLE_PPROF = 0, /* go tool pprof's DOT, dot at its full effort */
    SC_CALLGRAPH_STYLE_LARGE,     /* unlabelled straight edges, dot's passes cut short */
};

struct sc_callgraph_opts {
    uint32_t nodecount;  /* keep at most this many nodes (tag boxes count); 0 = no limit */
    double nodefraction; /* pprof's 0.005 */
    double edgefraction; /* pprof's 0.001 */
    const char *title;   /* DOT graph name; NULL = base name of the first mapping's file */
    const struct sc_layout_opts *layout; /* SVG: where the layout runs (NULL: in-process) */
    uint8_t style;                       /* DOT: enum sc_callgraph_style (SVG picks its own) */
    uint8_t exact; /* SVG: draw every node and edge asked, past the layout budget */
};

/* pprof's defaults for graphs. */
#define SC_CALLGRAPH_OPTS_INIT                                                                     \
    {                                                                                              \
        80, 0.005, 0.001, NULL, NULL, SC_CALLGRAPH_STYLE_PPROF, 0                                  \
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
    uint32_t asked;              /* nodecount asked when the layout budget drew fewer, else 0 */
    uint32_t thinned;            /* edges dropped for the layout budget (sc_callgraph_thin) */
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
 * longest paths). dot's time grows with it (callgraph.c has the figures). */
uint64_t sc_callgraph_layout_size(const struct sc_callgraph *g, uint32_t k);

/* dot's predicted CPU seconds for the first k nodes of g in a style (on the machine of
 * callgraph.c's figures; a prediction, within a factor of about two). */
double sc_callgraph_layout_seconds(const struct sc_callgraph *g, uint32_t k, int style);

/* Keeps g's m heaviest edges and every node's heaviest incoming edge (so that no node
 * loses its main caller), drops the others, and counts them in g->thinned (the legend
 * says how many). Returns how many it dropped. */
uint32_t sc_callgraph_thin(struct sc_callgraph *g, uint32_t m);

/* What sc_callgraph_svg drew. */
struct sc_callgraph_drawn {
    uint32_t asked;       /* the nodecount asked (0: all) */
    uint32_t nodes;       /* nodes drawn (without tag boxes) */
    uint32_t total_nodes; /* the graph's nodes before the node count cut */
    uint32_t edges;       /* edges drawn */
    uint32_t thinned;     /* edges dropped for the layout budget */
    int nodes_cut;        /* fewer nodes than asked for the layout budget */
    int64_t flat, total;  /* flat of the nodes drawn; the profile's total */
    int style;            /* enum sc_callgraph_style */
    double seconds;       /* predicted layout seconds of what is drawn */
    double full_seconds;  /* ... of every node and edge asked (what budget 0 draws) */
    int64_t budget_ns;    /* the layout budget it was fitted into (0: none, exact) */
};

/* The layout budget of a graph laid out under o->layout: a quarter of its deadline (30 s
 * in-process), leaving room for the prediction's error and a loaded machine. */
int64_t sc_callgraph_budget_ns(const struct sc_callgraph_opts *o);

/* compute + write_dot + sc_layout_svg: what is asked, laid out within the layout budget
 * (sc_callgraph_budget_ns): in pprof's style when dot does that in time, else in the large
 * style, with fewer edges (the lightest, sc_callgraph_thin) when that is still too slow,
 * and with fewer nodes (as pprof's nodecount keeps them) only when even a node's heaviest
 * caller edge each is too slow. The legend says what was left out, and the <svg> element
 * carries it as data attributes: data-nodes-asked, data-nodes, data-nodes-total,
 * data-nodes-cut (1: fewer nodes than asked, for the budget), data-edges,
 * data-edges-thinned, data-flat, data-total, data-share (flat / total),
 * data-layout ("pprof" or "large"), data-seconds, data-full-seconds (the predictions) and
 * data-budget-seconds. With o->exact every node and edge asked is drawn (the deadline
 * still holds). SC_ELIMIT when the graph has more than SC_CALLGRAPH_SVG_MAX_NODES nodes
 * (ask for a smaller nodecount) or its layout runs past the deadline. */
int sc_callgraph_svg(const struct sc_profile *p, int vi, const struct sc_callgraph_opts *o,
                     struct sc_buf *out, char *err);
/* The same with another budget (0: none, what is asked; o->exact is not read), saying in
 * *drawn (may be NULL) what it drew. */
int sc_callgraph_svg_fit(const struct sc_profile *p, int vi, const struct sc_callgraph_opts *o,
                         int64_t budget_ns, struct sc_callgraph_drawn *drawn, struct sc_buf *out,
                         char *err);

/* Lays out DOT text with graphviz's "dot" engine in-process (libgvc) and appends the SVG to
 * out. The graph, its layout and the rendered text are freed before returning, so it may
 * be called any number of times; one graphviz context (plugins, font tables) is created on
 * the first call and kept for the life of the process, because graphviz's text layout
 * caches pointers into it across calls. Graphviz keeps global state and is not
 * thread-safe: calls are serialized by a process-wide mutex, so concurrent callers wait
 * for each other (and no other code in the process may use graphviz without that mutex).
 * libgvc is opened on the first call (model/dl.h). SC_EFORMAT when graphviz rejects the
 * text (its message in err), SC_EUNSUPPORTED when libgvc.so.6 cannot be loaded, SC_ENOMEM,
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
