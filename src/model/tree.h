/* tree.h - the stack tree: many samples (or profiles) merged by call path. */
#ifndef SC_TREE_H
#define SC_TREE_H

#include <stdint.h>

#include "model/profile.h"

/* Node 0 is the root (name 0, ""). Every other node is one frame name under its parent;
 * children are linked in insertion order, renderers sort as they need. self is the value
 * of samples ending at the node, total the value of all samples through it. */
struct sc_tree_node {
    uint32_t name; /* index into tree->names */
    uint32_t parent;
    uint32_t first_child, next_sibling; /* 0 = none (the root is never a child) */
    int64_t self, total;
};

struct sc_tree {
    struct sc_arena arena;
    struct sc_strtab names;
    struct sc_tree_node *nodes;
    uint32_t n, cap;
    struct sc_map64 children; /* (parent << 32 | name) -> node */
    uint32_t max_nodes;       /* 0 = unlimited; beyond it inserts fail with SC_ELIMIT */
};

/* NULL on OOM. Free with sc_tree_free(). */
struct sc_tree *sc_tree_new(void);
void sc_tree_free(struct sc_tree *t);

/* Interns a frame name in the tree. Index >= 0 or negative SC_E*. */
int64_t sc_tree_name(struct sc_tree *t, const char *s, size_t len);

/* Adds value along the path of names (root first), creating nodes as needed; the last
 * node gets the self value. 0 or negative SC_E*. */
int sc_tree_add(struct sc_tree *t, const uint32_t *names, uint32_t n, int64_t value);

/* Merges every sample of p with value column vi. Frames are function names with inlined
 * functions expanded (callers above callees); locations without symbols become their
 * address in hex. 0 or negative SC_E* (detail in err). */
int sc_tree_add_profile(struct sc_tree *t, const struct sc_profile *p, int vi, char *err);

/* Name string of node i. */
static inline struct sc_str sc_tree_node_name(const struct sc_tree *t, uint32_t i)
{
    return t->names.v[t->nodes[i].name];
}

/* Frame names of a profile's sample, root first, as sc_tree_add_profile() sees them.
 * A helper for any renderer that walks samples: it caches one name per function.
 * Create with sc_stackwalk_init, release with sc_stackwalk_release. */
struct sc_stackwalk {
    const struct sc_profile *p;
    struct sc_strtab *names; /* where names are interned (e.g. a tree's) */
    uint32_t *fn_name;       /* function index -> name + 1, 0 = not yet */
    uint32_t *loc_name;      /* location index -> name + 1 for address-only locations */
    uint32_t *frames;        /* scratch: the current stack */
    uint32_t cap;
};

int sc_stackwalk_init(struct sc_stackwalk *w, const struct sc_profile *p, struct sc_strtab *names);
void sc_stackwalk_release(struct sc_stackwalk *w);
/* Fills w->frames with sample si's names, root first; returns how many (>= 0) or SC_E*. */
int64_t sc_stackwalk_sample(struct sc_stackwalk *w, uint32_t si);

#endif
