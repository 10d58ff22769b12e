/* callgraph_int.h - what callgraph.c (the graph), callgraph_dot.c (the DOT writer) and
 * callgraph_svg.c (the layout budget and graphviz) share; not for other modules. */
#ifndef SC_CALLGRAPH_INT_H
#define SC_CALLGRAPH_INT_H

#include <stdint.h>
#include <string.h>

#include "model/arena.h"
#include "model/hash.h"
#include "query/callgraph.h"

#define NONE UINT32_MAX
#define MAX_NODELETS 4 /* tag boxes shown per node (and per label group), as pprof */

static inline int64_t abs64(int64_t v)
{
    return v < 0 ? -v : v;
}

/* A tag of a node: the label tag of a group of string labels (name 0), or a numeric tag
 * (a formatted "bytes" value) within a group. */
struct cg_tag {
    uint32_t node, group, name;
    int64_t value;
    int64_t flat, cum;
};

struct pedge {
    uint32_t src, dst; /* identities */
    int64_t weight;
    uint32_t stamp; /* last sample that counted it */
    uint8_t residual, inlined, dead;
};

/* One build of the graph from the samples, optionally restricted to kept identities. */
struct pass {
    int64_t *flat, *cum; /* per identity */
    uint32_t *seen;
    uint32_t stamp;
    const uint8_t *kept;
    struct sc_map64 emap; /* src << 32 | dst -> edge */
    struct pedge *e;
    uint32_t ne, ecap;
    struct sc_map64 tsmap; /* node << 32 | group -> tag set */
    struct sc_map64 tmap;  /* set << 32 | name -> tag */
    struct cg_tag *t;
    uint32_t nt, tcap, nsets;
    int64_t total;       /* sum of |v| */
    uint32_t *nodes, nn; /* identities in the graph, in graph order once sorted */
};

struct snum {
    uint32_t name;
    int64_t value;
};

struct sc_callgraph_int {
    struct sc_arena arena;
    struct sc_strtab names;    /* identity -> name; nameless ones start with \1 */
    struct sc_strtab groups;   /* label groups; 0 = "" */
    struct sc_strtab tagnames; /* formatted numeric tags; 0 = "" */
    uint32_t nids;
    uint32_t *loc_start, *loc_n, *loc_ids; /* location -> identities, innermost first */
    /* per stored sample: its label group and numeric tags; NULL when there are none */
    uint32_t *s_group, *s_num_start, *s_num_n;
    struct snum *nums;
    char num_unit[64];
    int64_t node_cutoff, edge_cutoff;
    struct pass final;
    uint32_t *tag_start, *tag_list; /* final graph's tags by identity */
    const char *ounit;              /* the output unit pprof picks */
    int large;                      /* the DOT being written is in SC_CALLGRAPH_STYLE_LARGE */
    const struct sc_profile *p;
    int vi;
};

static inline int cmp_str(struct sc_str a, struct sc_str b)
{
    size_t n = a.len < b.len ? a.len : b.len;
    int r = n ? memcmp(a.ptr, b.ptr, n) : 0;
    if (r == 0 && a.len != b.len)
        r = a.len < b.len ? -1 : 1;
    return r;
}

static inline int tag_kept(const struct cg_tag *t, int64_t cutoff)
{
    return abs64(t->flat) >= cutoff || abs64(t->cum) >= cutoff;
}

/* A layout's shape, as size_of estimates it. */
struct shape {
    uint32_t edges; /* edges counted */
    uint32_t ranks; /* ranks, as longest paths */
};

/* The layout size of g's first k nodes thinned to m edges, in nodes plus virtual nodes;
 * *sh (may be NULL) gets the edges counted and the ranks (callgraph_svg.c says how). */
uint64_t cg_size_of(const struct sc_callgraph *g, uint32_t k, uint32_t m, struct shape *sh);

/* The pipeline's two halves (callgraph.c), for sc_callgraph_svg_fit's retries. */
void cg_pass_release(struct pass *g);
int cg_prepare(const struct sc_profile *p, int vi, const struct sc_callgraph_opts *o,
               struct sc_callgraph *g, struct pass *base, char *err);
int cg_select(struct sc_callgraph *g, struct pass *base, uint32_t nodecount, int consume,
              char *err);
void cg_unselect(struct sc_callgraph *g);

#endif
