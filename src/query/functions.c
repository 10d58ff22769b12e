/* functions.c - per-function flat and cumulative values with go tool pprof's semantics: the
 * engine of `scorch top`, diff, compare and the call graph. */
#include "query/functions.h"
#include "formats/names.h"
#include "model/error.h"

#include <stdlib.h>
#include <string.h>

/* Row of every line of every location, flattened: loc_start[l] .. + loc_n[l], innermost
 * first like the lines; single[l] is the row of a one-line location (most of them),
 * UINT32_MAX otherwise, saving two lookups on the hot path. */
struct rowmap {
    uint32_t *loc_start, *loc_n, *rows, *single;
};

static int64_t abs64(int64_t v)
{
    return v < 0 ? (v == INT64_MIN ? INT64_MAX : -v) : v;
}

/* Interns a row name; grows t->rows as needed. Returns the row or a negative SC_E*. */
static int64_t row_for(struct sc_top *t, struct sc_strtab *names, uint32_t *cap, const char *s,
                       size_t len)
{
    int64_t id = sc_strtab_intern(names, s, len);
    if (id < 0)
        return id;
    if (sc_grow_array_fill(&t->rows, cap, (uint64_t)id + 1, sizeof *t->rows, 0))
        return SC_ENOMEM;
    if ((uint32_t)id >= t->n) {
        t->n = (uint32_t)id + 1;
        t->rows[id].name = names->v[id];
    }
    return id;
}

/* pprof names a frame without a function after its binary (formats/names.c). */
static int64_t objfile_row(struct sc_top *t, struct sc_strtab *names, uint32_t *cap,
                           const struct sc_profile *p, const struct sc_location *l)
{
    struct sc_str s;
    if (sc_pprof_frame_name(p, l, 0, &t->arena, &s))
        return SC_ENOMEM;
    return row_for(t, names, cap, s.ptr, s.len);
}

static int build_rowmap(const struct sc_profile *p, struct sc_top *t, struct sc_strtab *names,
                        uint32_t *cap, struct rowmap *m)
{
    uint32_t *fn_row = malloc(((size_t)p->nfunctions + 1) * sizeof *fn_row);
    m->loc_start = malloc(((size_t)p->nlocations + 1) * sizeof *m->loc_start);
    m->loc_n = malloc(((size_t)p->nlocations + 1) * sizeof *m->loc_n);
    m->single = malloc(((size_t)p->nlocations + 1) * sizeof *m->single);
    m->rows = malloc(((size_t)p->nlines + p->nlocations + 1) * sizeof *m->rows);
    if (!fn_row || !m->loc_start || !m->loc_n || !m->rows || !m->single) {
        free(fn_row);
        return SC_ENOMEM;
    }
    for (uint32_t f = 0; f < p->nfunctions; f++) {
        struct sc_str s;
        fn_row[f] = UINT32_MAX; /* nameless: named per location, after its binary */
        if (sc_pprof_name(p, f, &t->arena, &s)) {
            free(fn_row);
            return SC_ENOMEM;
        }
        if (!s.len)
            continue;
        int64_t r = row_for(t, names, cap, s.ptr, s.len);
        if (r < 0) {
            free(fn_row);
            return (int)r;
        }
        fn_row[f] = (uint32_t)r;
    }
    uint32_t k = 0;
    for (uint32_t i = 0; i < p->nlocations; i++) {
        const struct sc_location *l = &p->locations[i];
        m->loc_start[i] = k;
        const struct sc_line *lines = sc_location_lines(p, l);
        for (uint32_t j = 0; j < l->nlines; j++) {
            uint32_t fn = lines[j].function;
            int64_t r = fn && fn_row[fn - 1] != UINT32_MAX ? fn_row[fn - 1]
                                                           : objfile_row(t, names, cap, p, l);
            if (r < 0) {
                free(fn_row);
                return (int)r;
            }
            m->rows[k++] = (uint32_t)r;
        }
        if (l->nlines == 0) {
            int64_t r = objfile_row(t, names, cap, p, l);
            if (r < 0) {
                free(fn_row);
                return (int)r;
            }
            m->rows[k++] = (uint32_t)r;
        }
        m->loc_n[i] = k - m->loc_start[i];
        m->single[i] = m->loc_n[i] == 1 ? m->rows[m->loc_start[i]] : UINT32_MAX;
    }
    free(fn_row);
    return 0;
}

static int cmp_rows(const void *a, const void *b)
{
    const struct sc_top_row *x = a, *y = b;
    int64_t fx = abs64(x->flat), fy = abs64(y->flat);
    if (fx != fy)
        return fx > fy ? -1 : 1;
    size_t n = x->name.len < y->name.len ? x->name.len : y->name.len;
    int c = memcmp(x->name.ptr, y->name.ptr, n);
    if (c == 0 && x->name.len != y->name.len)
        c = x->name.len < y->name.len ? -1 : 1;
    if (c)
        return c;
    int64_t cx = abs64(x->cum), cy = abs64(y->cum);
    if (cx != cy)
        return cx > cy ? -1 : 1;
    return 0;
}

static int cmp_order(const void *a, const void *b, void *rows);

/* One thread's share of the flat/cum pass. */
struct compute_walk {
    const struct rowmap *m;
    int64_t *flat, *cum; /* per row */
    uint32_t *seen;      /* row -> stamp of the last sample that counted it */
    uint32_t stamp;
    int vi;
    int64_t total;
};

/* Threads for the sample walks, and the size below which one is enough. */
#define TOP_THREADS 4
#define TOP_MIN_SAMPLES_PER_THREAD 20000

static int compute_visit(void *ctx, const uint32_t *locs, uint32_t nlocs, const int64_t *values)
{
    struct compute_walk *w = ctx;
    int64_t v = values[w->vi];
    w->stamp++;
    if (v == 0)
        return 0;
    const struct rowmap *m = w->m;
    w->total = sc_add_sat(w->total, abs64(v));
    if (nlocs == 0)
        return 0;
    int64_t *flat = &w->flat[m->rows[m->loc_start[locs[0]]]];
    *flat = sc_add_sat(*flat, v);
    for (uint32_t k = 0; k < nlocs; k++) {
        uint32_t l = locs[k];
        uint32_t r1 = m->single[l];
        if (r1 != UINT32_MAX) {
            if (w->seen[r1] != w->stamp) {
                w->seen[r1] = w->stamp;
                w->cum[r1] = sc_add_sat(w->cum[r1], v);
            }
            continue;
        }
        const uint32_t *r = m->rows + m->loc_start[l];
        for (uint32_t j = 0, n = m->loc_n[l]; j < n; j++) {
            if (w->seen[r[j]] != w->stamp) {
                w->seen[r[j]] = w->stamp;
                w->cum[r[j]] = sc_add_sat(w->cum[r[j]], v);
            }
        }
    }
    return 0;
}

int sc_top_compute(const struct sc_profile *p, int vi, struct sc_top *t, char *err)
{
    memset(t, 0, sizeof *t);
    sc_arena_init(&t->arena);
    if (vi < 0 || (uint32_t)vi >= p->nsample_types)
        return sc_errf(err, SC_EINVAL, "sample index %d out of range", vi);
    struct sc_strtab names = {0};
    names.arena = &t->arena;
    struct rowmap m = {0};
    uint32_t cap = 0, *seen = NULL;
    int rc = build_rowmap(p, t, &names, &cap, &m);
    if (rc)
        goto out;
    uint32_t nrows = t->n;
    seen = calloc(nrows + 1, sizeof *seen);
    if (!seen) {
        rc = SC_ENOMEM;
        goto out;
    }
    /* flat, cum and total in one pass; cum counts a row once per sample (stamps). Each
     * thread sums into its own arrays, added up afterwards. */
    uint32_t nth = sc_profile_walk_threads(p, TOP_THREADS, 2 * TOP_MIN_SAMPLES_PER_THREAD);
    struct compute_walk walks[TOP_THREADS];
    void *ctxs[TOP_THREADS];
    memset(walks, 0, sizeof walks);
    for (uint32_t k = 0; k < nth; k++) {
        walks[k].m = &m;
        walks[k].vi = vi;
        walks[k].flat = calloc(nrows + 1, sizeof *walks[k].flat);
        walks[k].cum = calloc(nrows + 1, sizeof *walks[k].cum);
        walks[k].seen = k ? calloc(nrows + 1, sizeof *walks[k].seen) : seen;
        ctxs[k] = &walks[k];
        if (!walks[k].flat || !walks[k].cum || !walks[k].seen)
            rc = sc_errf(err, SC_ENOMEM, "out of memory");
    }
    if (!rc)
        rc = sc_profile_foreach_sample_parallel(p, nth, compute_visit, ctxs, err);
    for (uint32_t k = 0; k < nth; k++) {
        for (uint32_t r = 0; !rc && r < nrows; r++) {
            t->rows[r].flat += walks[k].flat[r];
            t->rows[r].cum += walks[k].cum[r];
        }
        t->total += walks[k].total;
        free(walks[k].flat);
        free(walks[k].cum);
        if (k)
            free(walks[k].seen);
    }
    if (rc) {
        free(m.loc_start);
        free(m.loc_n);
        free(m.rows);
        free(m.single);
        free(seen);
        sc_strtab_release(&names);
        return rc;
    }
    /* Keep rows that saw a value, sorted like pprof. */
    /* rows remember their id in `cum`'s neighbour field until sorted: use pos */
    t->nids = t->n;
    t->pos = malloc(((size_t)t->n + 1) * sizeof *t->pos);
    uint32_t *id_of = malloc(((size_t)t->n + 1) * sizeof *id_of);
    if (!t->pos || !id_of) {
        free(id_of);
        rc = SC_ENOMEM;
        goto out;
    }
    uint32_t n = 0;
    for (uint32_t r = 0; r < t->n; r++) {
        t->pos[r] = UINT32_MAX;
        if (t->rows[r].flat || t->rows[r].cum) {
            id_of[n] = r;
            t->rows[n++] = t->rows[r];
        }
    }
    t->n = n;
    /* sort row indexes, then apply, so pos can be filled */
    struct sc_top_row *sorted = malloc(((size_t)n + 1) * sizeof *sorted);
    uint32_t *order = malloc(((size_t)n + 1) * sizeof *order);
    if (!sorted || !order) {
        free(id_of);
        free(sorted);
        free(order);
        rc = SC_ENOMEM;
        goto out;
    }
    for (uint32_t i = 0; i < n; i++)
        order[i] = i;
    if (n > 1)
        qsort_r(order, n, sizeof *order, cmp_order, t->rows);
    for (uint32_t i = 0; i < n; i++) {
        sorted[i] = t->rows[order[i]];
        t->pos[id_of[order[i]]] = i;
    }
    if (n)
        memcpy(t->rows, sorted, n * sizeof *sorted);
    free(sorted);
    free(order);
    free(id_of);
    t->loc_start = m.loc_start;
    t->loc_n = m.loc_n;
    t->loc_rows = m.rows;
    m.loc_start = m.loc_n = m.rows = NULL;
out:
    free(m.loc_start);
    free(m.loc_n);
    free(m.rows);
    free(m.single);
    free(seen);
    /* names' strings live in t->arena or the profile; only the table itself goes */
    sc_strtab_release(&names);
    if (rc)
        return sc_errf(err, rc, "%s", sc_strerror(rc));
    return 0;
}

static int cmp_order(const void *a, const void *b, void *rows)
{
    const struct sc_top_row *r = rows;
    return cmp_rows(&r[*(const uint32_t *)a], &r[*(const uint32_t *)b]);
}

/* The call edges sc_top_inline_labels() tracks: those into functions some location
 * inlines. */
struct edges {
    struct sc_map64 map; /* (caller id << 32 | callee id) -> index in ev */
    struct edge {
        int64_t weight;
        uint32_t stamp; /* last sample (index + 1) that counted the edge */
        int inlined;    /* inlined at its first occurrence in every sample */
    } * ev;
    uint32_t n, cap;
};

/* Index of edge caller -> callee, created on first use; negative SC_E* on failure. */
static int64_t edge_index(struct edges *e, uint32_t caller, uint32_t callee)
{
    int added;
    uint32_t *slot = sc_map64_upsert(&e->map, (uint64_t)caller << 32 | callee, e->n, &added);
    if (!slot)
        return SC_ENOMEM;
    if (added) {
        if (sc_grow_array(&e->ev, &e->cap, (uint64_t)e->n + 1, sizeof *e->ev))
            return SC_ENOMEM;
        e->ev[e->n].weight = 0;
        e->ev[e->n].stamp = 0;
        e->ev[e->n++].inlined = 1;
    }
    return *slot;
}

/* Counts an edge for sample `stamp`, once per sample, its flag from the first (rootmost)
 * occurrence, as pprof does. */
static inline void count_edge(struct edge *ed, uint32_t stamp, int inlined, int64_t v)
{
    if (ed->stamp == stamp)
        return;
    ed->stamp = stamp;
    ed->weight = sc_add_sat(ed->weight, v);
    if (!inlined)
        ed->inlined = 0;
}

/* What the label walk needs of a location, packed for locality. */
struct loc_sum {
    uint32_t first, last;              /* outermost / innermost shown row, UINT32_MAX: none */
    uint32_t ie_start, ie_end;         /* its edges into targets in the intra array */
    uint32_t cache_parent, cache_edge; /* the edge from its last caller, cached */
    int first_inl;                     /* the outermost shown row sits inlined */
};

struct intra {
    uint32_t edge;
    int inlined;
};

/* One thread's share of the label pass: its own edges (the shared intra edges are
 * pre-created in every copy with the same indexes) and its own location caches. */
struct label_walk {
    struct edges e;
    const uint8_t *target;
    const uint32_t *hot; /* per location: (last shown row + 1) << 1 | needs edge work */
    struct loc_sum *sums;
    const struct intra *ie;
    uint32_t stamp;
    int vi;
};

static int label_visit(void *ctx, const uint32_t *locs, uint32_t nlocs, const int64_t *values)
{
    struct label_walk *w = ctx;
    int64_t v = values[w->vi];
    uint32_t stamp = ++w->stamp;
    if (v == 0)
        return 0;
    struct edge *ev = w->e.ev;
    uint32_t parent = UINT32_MAX;
    for (uint32_t k = nlocs; k-- > 0;) { /* root to leaf, as pprof */
        /* most locations only pass the caller on: one small array read for them */
        uint32_t h = w->hot[locs[k]];
        if (!(h & 1)) {
            if (h)
                parent = (h >> 1) - 1;
            continue;
        }
        struct loc_sum *ls = &w->sums[locs[k]];
        uint32_t f = ls->first;
        if (w->target[f] && parent != UINT32_MAX && parent != f) {
            if (ls->cache_parent != parent) {
                int64_t x = edge_index(&w->e, parent, f);
                if (x < 0)
                    return (int)x;
                ev = w->e.ev;
                ls->cache_parent = parent;
                ls->cache_edge = (uint32_t)x;
            }
            count_edge(&ev[ls->cache_edge], stamp, ls->first_inl, v);
        }
        for (uint32_t x = ls->ie_start; x < ls->ie_end; x++)
            count_edge(&ev[w->ie[x].edge], stamp, w->ie[x].inlined, v);
        parent = ls->last;
    }
    return 0;
}

int sc_top_inline_labels(const struct sc_profile *p, int vi, struct sc_top *t, const uint8_t *keep,
                         double edgefraction)
{
    for (uint32_t i = 0; i < t->n; i++)
        t->rows[i].inline_in = t->rows[i].noninline_in = 0;
    /* Only functions that some location inlines can get a label (targets). Edges depend on
     * the shown rows only through each location's shown lines, so summarize locations
     * once: the outermost shown row (and whether it sits inlined), the innermost shown
     * row (the caller of the next location), and the edges inside into targets. */
    uint32_t nl = p->nlocations;
    uint8_t *target = calloc((size_t)t->nids + 1, 1);
    struct loc_sum *sums = malloc(((size_t)nl + 1) * sizeof *sums);
    uint32_t *hot = malloc(((size_t)nl + 1) * sizeof *hot);
    struct intra *ie = malloc(((size_t)p->nlines + 1) * sizeof *ie);
    struct edges e;
    memset(&e, 0, sizeof e);
    int rc = SC_ENOMEM;
    if (!target || !sums || !ie || !hot)
        goto out;
    int any = 0;
    for (uint32_t l = 0; l < nl; l++)
        for (uint32_t j = 0; j + 1 < t->loc_n[l]; j++) {
            target[t->loc_rows[t->loc_start[l] + j]] = 1;
            any = 1;
        }
    rc = 0;
    if (!any)
        goto out;
    uint32_t nie = 0;
    for (uint32_t l = 0; l < nl; l++) {
        const uint32_t *r = t->loc_rows + t->loc_start[l];
        uint32_t n = t->loc_n[l], prev = UINT32_MAX;
        struct loc_sum *ls = &sums[l];
        ls->first = UINT32_MAX;
        ls->ie_start = nie;
        for (uint32_t j = n; j-- > 0;) { /* outer to inner */
            uint32_t id = r[j], pos = t->pos[id];
            if (pos == UINT32_MAX || (keep && !keep[pos]))
                continue;
            if (prev == UINT32_MAX) {
                ls->first = id;
                ls->first_inl = j + 1 < n;
            } else if (target[id] && prev != id) {
                int64_t x = edge_index(&e, prev, id);
                if (x < 0) {
                    rc = (int)x;
                    goto out;
                }
                ie[nie].edge = (uint32_t)x;
                ie[nie++].inlined = j + 1 < n;
            }
            prev = id;
        }
        ls->last = prev;
        ls->ie_end = nie;
        ls->cache_parent = UINT32_MAX;
        int work = ls->first != UINT32_MAX && (target[ls->first] || ls->ie_start != ls->ie_end);
        hot[l] = (ls->first == UINT32_MAX ? 0 : (prev + 1) << 1) | (uint32_t)work;
    }
    uint32_t nth = sc_profile_walk_threads(p, TOP_THREADS, 2 * TOP_MIN_SAMPLES_PER_THREAD);
    struct label_walk walks[TOP_THREADS];
    void *ctxs[TOP_THREADS];
    memset(walks, 0, sizeof walks);
    for (uint32_t k = 0; k < nth && rc == 0; k++) {
        walks[k].target = target;
        walks[k].hot = hot;
        walks[k].ie = ie;
        walks[k].vi = vi;
        ctxs[k] = &walks[k];
        if (k == 0) {
            walks[0].e = e;
            walks[0].sums = sums;
            memset(&e, 0, sizeof e); /* walks[0] owns them now */
            sums = NULL;
            continue;
        }
        walks[k].sums = malloc(((size_t)nl + 1) * sizeof *walks[k].sums);
        walks[k].e.ev = malloc(((size_t)walks[0].e.n + 1) * sizeof *walks[k].e.ev);
        if (!walks[k].sums || !walks[k].e.ev) {
            rc = SC_ENOMEM;
            break;
        }
        memcpy(walks[k].sums, walks[0].sums, (size_t)nl * sizeof *walks[k].sums);
        memcpy(walks[k].e.ev, walks[0].e.ev, (size_t)walks[0].e.n * sizeof *walks[k].e.ev);
        walks[k].e.n = walks[k].e.cap = walks[0].e.n;
        /* same keys, same indexes: the intra edges' indexes stay valid in every copy */
        uint64_t key;
        uint32_t val;
        for (uint32_t pos = 0; !rc && sc_map64_next(&walks[0].e.map, &pos, &key, &val);)
            if (!sc_map64_upsert(&walks[k].e.map, key, val, NULL))
                rc = SC_ENOMEM;
    }
    if (!rc)
        rc = sc_profile_foreach_sample_parallel(p, nth, label_visit, ctxs, NULL);
    /* fold the other threads' edges into thread 0's: weights add, "always inlined" ands */
    for (uint32_t k = 1; k < nth && !rc; k++) {
        struct edges *o = &walks[k].e;
        uint64_t key;
        uint32_t val;
        for (uint32_t pos = 0; !rc && sc_map64_next(&o->map, &pos, &key, &val);) {
            const struct edge *src = &o->ev[val];
            if (src->stamp == 0)
                continue; /* never counted in this part */
            int64_t x = edge_index(&walks[0].e, (uint32_t)(key >> 32), (uint32_t)key);
            if (x < 0) {
                rc = (int)x;
                break;
            }
            struct edge *dst = &walks[0].e.ev[x];
            dst->weight += src->weight;
            dst->inlined &= src->inlined;
            dst->stamp |= 1; /* counted somewhere */
        }
    }
    for (uint32_t k = 1; k < nth; k++) {
        sc_map64_release(&walks[k].e.map);
        free(walks[k].e.ev);
        free(walks[k].sums);
    }
    e = walks[0].e;
    sums = walks[0].sums;
    if (rc)
        goto out;
    /* pprof then drops edges lighter than edgefraction of the flat total of the whole
     * graph, the one it made before any node was cut */
    int64_t flat_all = 0;
    for (uint32_t i = 0; i < t->n; i++)
        flat_all = sc_add_sat(flat_all, t->rows[i].flat);
    int64_t cutoff = abs64((int64_t)((double)flat_all * edgefraction));
    uint64_t ekey;
    uint32_t eval;
    for (uint32_t pos = 0; sc_map64_next(&e.map, &pos, &ekey, &eval);) {
        const struct edge *ed = &e.ev[eval];
        if (ed->stamp == 0 || abs64(ed->weight) < cutoff)
            continue; /* never in a sample (made ahead for a location), or too light */
        struct sc_top_row *row = &t->rows[t->pos[(uint32_t)ekey]];
        if (ed->inlined)
            row->inline_in = 1;
        else
            row->noninline_in = 1;
    }
out:
    sc_map64_release(&e.map);
    free(e.ev);
    free(target);
    free(sums);
    free(hot);
    free(ie);
    return rc;
}

void sc_top_release(struct sc_top *t)
{
    free(t->rows);
    free(t->loc_start);
    free(t->loc_n);
    free(t->loc_rows);
    free(t->pos);
    sc_arena_release(&t->arena);
    memset(t, 0, sizeof *t);
}
