/* tree.c - stack tree construction from name paths and from profiles. */
#include "model/tree.h"
#include "model/error.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct sc_tree *sc_tree_new(void)
{
    struct sc_tree *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    sc_arena_init(&t->arena);
    t->names.arena = &t->arena;
    t->cap = 1024;
    t->nodes = malloc(t->cap * sizeof *t->nodes);
    if (!t->nodes || sc_strtab_intern(&t->names, "", 0) != 0) {
        sc_tree_free(t);
        return NULL;
    }
    memset(&t->nodes[0], 0, sizeof t->nodes[0]);
    t->n = 1;
    return t;
}

void sc_tree_free(struct sc_tree *t)
{
    if (!t)
        return;
    free(t->nodes);
    sc_map64_release(&t->children);
    sc_strtab_release(&t->names);
    sc_arena_release(&t->arena);
    free(t);
}

int64_t sc_tree_name(struct sc_tree *t, const char *s, size_t len)
{
    return sc_strtab_intern(&t->names, s, len);
}

/* Finds or creates the child of parent called name. */
static int64_t child(struct sc_tree *t, uint32_t parent, uint32_t name)
{
    uint64_t key = (uint64_t)parent << 32 | name;
    uint32_t *slot = sc_map64_get(&t->children, key);
    if (slot)
        return *slot;
    if (t->max_nodes && t->n >= t->max_nodes)
        return SC_ELIMIT;
    if (t->n == t->cap) {
        if (t->cap > UINT32_MAX / 4)
            return SC_ELIMIT;
        struct sc_tree_node *nn = realloc(t->nodes, (size_t)t->cap * 2 * sizeof *nn);
        if (!nn)
            return SC_ENOMEM;
        t->nodes = nn;
        t->cap *= 2;
    }
    if (!sc_map64_upsert(&t->children, key, t->n, NULL))
        return SC_ENOMEM;
    uint32_t i = t->n++;
    struct sc_tree_node *node = &t->nodes[i];
    node->name = name;
    node->parent = parent;
    node->first_child = 0;
    node->self = node->total = 0;
    node->next_sibling = t->nodes[parent].first_child;
    t->nodes[parent].first_child = i;
    return i;
}

/* Values are any int64 (pprof's may be negative or huge): sums saturate (sc_add_sat). */
int sc_tree_add(struct sc_tree *t, const uint32_t *names, uint32_t n, int64_t value)
{
    uint32_t cur = 0;
    t->nodes[0].total = sc_add_sat(t->nodes[0].total, value);
    for (uint32_t i = 0; i < n; i++) {
        int64_t c = child(t, cur, names[i]);
        if (c < 0)
            return (int)c;
        cur = (uint32_t)c;
        t->nodes[cur].total = sc_add_sat(t->nodes[cur].total, value);
    }
    t->nodes[cur].self = sc_add_sat(t->nodes[cur].self, value);
    return 0;
}

int sc_tree_add_profile(struct sc_tree *t, const struct sc_profile *p, int vi, char *err)
{
    if (vi < 0 || (uint32_t)vi >= p->nsample_types)
        return sc_errf(err, SC_EINVAL, "sample index %d out of range", vi);
    struct sc_stackwalk w;
    int rc = sc_stackwalk_init(&w, p, &t->names);
    if (rc)
        return sc_errf(err, rc, "out of memory");
    for (uint32_t s = 0; s < p->nsamples; s++) {
        int64_t v = p->values[(size_t)s * p->nsample_types + (uint32_t)vi];
        if (v == 0)
            continue;
        int64_t n = sc_stackwalk_sample(&w, s);
        if (n < 0) {
            rc = (int)n;
            break;
        }
        rc = sc_tree_add(t, w.frames, (uint32_t)n, v);
        if (rc)
            break;
    }
    sc_stackwalk_release(&w);
    if (rc == SC_ELIMIT)
        return sc_errf(err, rc, "stack tree has more than %u nodes", (unsigned)t->max_nodes);
    if (rc)
        return sc_errf(err, rc, "%s", sc_strerror(rc));
    return 0;
}

/* ---- stack walk ---- */

int sc_stackwalk_init(struct sc_stackwalk *w, const struct sc_profile *p, struct sc_strtab *names)
{
    memset(w, 0, sizeof *w);
    w->p = p;
    w->names = names;
    w->fn_name = calloc(p->nfunctions + 1, sizeof *w->fn_name);
    w->loc_name = calloc(p->nlocations + 1, sizeof *w->loc_name);
    w->cap = 256;
    w->frames = malloc(w->cap * sizeof *w->frames);
    if (!w->fn_name || !w->loc_name || !w->frames) {
        sc_stackwalk_release(w);
        return SC_ENOMEM;
    }
    return 0;
}

void sc_stackwalk_release(struct sc_stackwalk *w)
{
    free(w->fn_name);
    free(w->loc_name);
    free(w->frames);
    memset(w, 0, sizeof *w);
}

static int64_t fn_name(struct sc_stackwalk *w, uint32_t fn)
{
    if (w->fn_name[fn])
        return w->fn_name[fn] - 1;
    struct sc_str s = sc_function_name(w->p, fn);
    int64_t id = sc_strtab_intern(w->names, s.ptr, s.len);
    if (id >= 0)
        w->fn_name[fn] = (uint32_t)id + 1;
    return id;
}

static int64_t addr_name(struct sc_stackwalk *w, uint32_t li)
{
    if (w->loc_name[li])
        return w->loc_name[li] - 1;
    char tmp[SC_ADDR_NAME_LEN];
    uint32_t len = sc_address_name(w->p->locations[li].address, tmp);
    int64_t id = sc_strtab_intern(w->names, tmp, (size_t)len);
    if (id >= 0)
        w->loc_name[li] = (uint32_t)id + 1;
    return id;
}

int64_t sc_stackwalk_sample(struct sc_stackwalk *w, uint32_t si)
{
    const struct sc_profile *p = w->p;
    const struct sc_sample *s = &p->samples[si];
    uint32_t n = 0;
    /* locations are leaf first, lines innermost first: walk both backwards */
    for (uint32_t k = s->nlocs; k-- > 0;) {
        uint32_t li = p->sample_locs[s->loc_start + k];
        const struct sc_location *l = &p->locations[li];
        /* 64-bit: a deep sample of locations with many inlined lines can pass 2^32 frames,
         * and a wrapped count would under-size the array */
        uint64_t need = (uint64_t)n + (l->nlines ? l->nlines : 1);
        if (need > w->cap) {
            if (need > UINT32_MAX / 8)
                return SC_ELIMIT;
            uint32_t ncap = w->cap;
            while (ncap < need)
                ncap *= 2;
            uint32_t *f = realloc(w->frames, (size_t)ncap * sizeof *f);
            if (!f)
                return SC_ENOMEM;
            w->frames = f;
            w->cap = ncap;
        }
        if (l->nlines == 0) {
            int64_t id = addr_name(w, li);
            if (id < 0)
                return id;
            w->frames[n++] = (uint32_t)id;
            continue;
        }
        const struct sc_line *lines = sc_location_lines(p, l);
        for (uint32_t j = l->nlines; j-- > 0;) {
            int64_t id = lines[j].function ? fn_name(w, lines[j].function - 1) : addr_name(w, li);
            if (id < 0)
                return id;
            w->frames[n++] = (uint32_t)id;
        }
    }
    return n;
}
