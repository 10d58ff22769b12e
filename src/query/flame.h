/* flame.h - flame graph JSON for the web UI's canvas: one profile, or two compared. */
#ifndef SC_FLAME_H
#define SC_FLAME_H

#include <stdint.h>

#include "model/arena.h"
#include "model/buf.h"
#include "model/hash.h"
#include "model/profile.h"
#include "query/compare.h"

struct sc_json;

/* ---- the JSON format, version 1 (docs/api-flamegraph.md says the same with examples) ----
 *
 * One profile:
 *   {"version":1,"sample_type":"cpu","unit":"nanoseconds","total":N,"max_self":M,
 *    "names":["total","main.main",...],
 *    "levels":[[0,N,S,0],[x,total,self,name, x,total,self,name, ...], ...]}
 *
 * - names: the frame names; nodes refer to them by index. names[0] is "total", the root.
 * - levels[d]: the nodes at depth d (level 0 is the root alone), left to right, four numbers
 *   each: x (absolute offset from the left edge, in value units), total (the node's value
 *   with everything called from it), self (value of samples that end in it, plus the
 *   totals of children left out by maxNodes), name (index into names).
 * - Children sit inside their parent, ordered by name (bytewise) as in flamegraph.pl, the
 *   first at the parent's x; what self covers is the space right of the last child. So a
 *   canvas draws node rect(x / total * width, d * h, node_total / total * width, h) as is.
 * - max_self: the largest self of all nodes written (for colour scales).
 * - maxNodes: at most that many nodes are written (the root included). They are chosen
 *   best first from the root: heaviest total first, ties by name, then by position; a
 *   child is never kept without its parent. A left-out child's total is added to its
 *   parent's self, so every total stays exact and sum(children totals) + self == total.
 * - Frames are function names with inlined functions expanded, callers above callees;
 *   locations without symbols are named by their address (0x...), as everywhere in scorch.
 * - Names are JSON strings; bytes that are not UTF-8 become U+FFFD. Output is
 *   deterministic: the same profile gives the same bytes, whatever its sample order.
 * - Values are used as they are: profiles with negative values draw overlapping.
 *
 * Two profiles compared (a base and a new one), "diff":true:
 *   {"version":1,"diff":true,"sample_type":"cpu","unit":"nanoseconds",
 *    "total":N,"base_total":B,"normalized":false,"base_scale":1,"max_self":M,
 *    "names":[...],"levels":[[x,total,self,base_total,base_self,name, ...], ...]}
 *
 * - One tree of the frames of both profiles; each node carries the new profile's total and
 *   self and the base profile's base_total and base_self (0 where a side lacks the node).
 * - Layout (as Pyroscope's diff view): a node is as wide as total + base_total, and x is an
 *   offset in those combined units; the root spans N + B. So frames that vanished (new 0)
 *   and frames that appeared (base 0) both stay visible, and a frame's colour can say how
 *   its share changed: total / N against base_total / B.
 * - normalized: base values were scaled by base_scale = N / B (before scaling) so that
 *   both sides weigh the same: each node's base self is rounded to the nearest integer and
 *   base totals are summed up again from them, so the tree stays exact (B is the scaled
 *   root total, within rounding of N).
 * - maxNodes chooses by combined width; left-out children add to both selfs of the parent.
 *   max_self is the largest self + base_self.
 */

/* A stack tree with two values per node (side 0 = base, side 1 = the profile itself).
 * Node 0 is the root, named "total" (name 0). Children are linked in insertion order. */
struct sc_flame_node {
    uint32_t name; /* index into names */
    uint32_t parent;
    uint32_t first_child, next_sibling; /* 0 = none */
    int64_t self[2], total[2];
};

struct sc_flame_tree {
    struct sc_arena arena;
    struct sc_strtab names;
    struct sc_flame_node *nodes;
    uint32_t n, cap;
    struct sc_map64 children; /* (parent << 32 | name) -> node */
    uint32_t max_nodes;       /* 0 = unlimited; beyond it adding fails with SC_ELIMIT */
};

/* 0 or SC_ENOMEM. Release with sc_flame_tree_release (also after a failure). */
int sc_flame_tree_init(struct sc_flame_tree *t);
void sc_flame_tree_release(struct sc_flame_tree *t);

/* Adds every sample of p (stored or lazy) with value column vi to side 0 or 1; samples
 * whose value is 0 add nothing. 0 or SC_E* with detail in err. */
int sc_flame_tree_add(struct sc_flame_tree *t, const struct sc_profile *p, int vi, int side,
                      char *err);

/* The tree is complete: frees what only adding needs (the children index, the spare node
 * slots), so the layout and JSON that follow have that memory. No add after it. */
void sc_flame_tree_done(struct sc_flame_tree *t);

/* Multiplies side 0 by f: each self rounded to the nearest integer, totals summed again. */
void sc_flame_tree_scale_base(struct sc_flame_tree *t, double f);

/* Writes the tree as JSON version 1 (single: side 1 only; diff: both sides) with at most
 * max_nodes nodes (0 = all). sample_type and unit are written as given. 0 or SC_ENOMEM. */
struct sc_flame_json_opts {
    struct sc_str sample_type, unit;
    uint32_t max_nodes;
    int diff;
    int normalized;           /* diff: written as "normalized" */
    double base_scale;        /* diff: written as "base_scale" */
    const struct sc_cmp *cmp; /* diff: a finished comparison; adds each node's "change" */
    /* NULL, or writes members of the caller's (keys and values) through the graph's own
     * writer, after the graph's members and before the object closes */
    void (*members)(void *ctx, struct sc_json *j);
    void *members_ctx;
};
int sc_flame_tree_json(const struct sc_flame_tree *t, const struct sc_flame_json_opts *o,
                       struct sc_buf *out);

/* The flame graph JSON of p's value column vi. 0 or SC_E* with detail in err. */
int sc_flame_json(const struct sc_profile *p, int vi, uint32_t max_nodes, struct sc_buf *out,
                  char *err);

/* What sc_flame_json_with adds to the flame graph object, after its own members. */
struct sc_flame_extra {
    int top; /* "top": the same column's top table (formats/top.h's JSON) */
    /* NULL, or writes more members (keys and values) through j, after "top" */
    void (*members)(void *ctx, struct sc_json *j);
    void *ctx;
};
/* sc_flame_json with x's members in the same object (x may be NULL). 0 or SC_E*. */
int sc_flame_json_with(const struct sc_profile *p, int vi, uint32_t max_nodes,
                       const struct sc_flame_extra *x, struct sc_buf *out, char *err);

/* The diff flame graph JSON of base (column base_vi) against p (column vi); the sample
 * type and unit written are p's. normalize: scale base as described above (not when
 * either total is 0 or negative). cmp (may be NULL): the statistics of the same two
 * selections; each node then gets a seventh number, its change: 2 when the path is only
 * on the new side, -2 only on the base (news whatever the spread), 1 when the node's share
 * grew and its function's change is significant and a growth, -1 likewise for shrinking,
 * 0 otherwise (within noise, or not tested), and the document says
 * "fields":["x","total","self","base_total","base_self","name","change"] and "q".
 * 0 or SC_E* with detail in err. */
int sc_flame_diff_json(const struct sc_profile *base, int base_vi, const struct sc_profile *p,
                       int vi, uint32_t max_nodes, int normalize, const struct sc_cmp *cmp,
                       struct sc_buf *out, char *err);

#endif
