/* fnseries_rows.c - functions over time, the rows: each distinct stack resolved once to its
 * signature (the kept functions it holds, the one at its leaf), a bucket's rows summed per
 * function through it, timed samples by their steps, the ranking by total and the read grid
 * (fnseries.c's top comment says how they make the values). */
#include "model/budget.h"
#include "model/buf.h"
#include "model/clock.h"
#include "model/error.h"
#include "query/fnseries_int.h"

#include <stdlib.h>
#include <string.h>

/* The read grid's widths, in seconds: the store's rollups (store_int.h's SC_ROLLUP_*), then
 * finer ones for short steps, which the store reads from raw profiles. */
static const int64_t grid_widths[] = {86400, 3600, 600, 60, 10, 1};
#define ROLLUP_MIN_NS (600 * SC_NS_PER_S)
/* Under ROLLUP_MIN_NS an exact width may split a step into at most this many buckets (a
 * bucket costs a probe per series, its profiles are read either way). */
#define MAX_SPLIT 64

int fx_oom(struct fx *x)
{
    return sc_errf(x->err, SC_ENOMEM, "out of memory");
}

/* ---- stacks ---- */

/* Stack keys below this are looked up in fx.dense (4 bytes each: 16 MiB at most). */
#define DENSE_KEYS (1u << 22)

/* A stack's signature, or NONE when it is not known yet. */
static inline uint32_t stack_get(const struct fx *x, uint64_t key)
{
    if (key < x->ndense)
        return x->dense[key];
    if (key < DENSE_KEYS)
        return NONE;
    const uint32_t *g = sc_map64_get(&x->stack_sig, key);
    return g ? *g : NONE;
}

static int stack_put(struct fx *x, uint64_t key, uint32_t sig)
{
    if (key >= DENSE_KEYS)
        return sc_map64_upsert(&x->stack_sig, key, sig, NULL) ? 0 : SC_ENOMEM;
    /* the new entries all bytes 0xff: NONE */
    if (sc_grow_array_fill(&x->dense, &x->ndense, key + 1, sizeof *x->dense, 0xff))
        return SC_ENOMEM;
    x->dense[key] = sig;
    return 0;
}

/* ---- functions and signatures ---- */

/* The kept index of a function name, or NONE. */
static uint32_t kept_index(struct fx *x, const char *name)
{
    if (x->target)
        return strcmp(name, x->target) == 0 ? 0 : NONE;
    int64_t id = sc_strtab_find(&x->names, name, strlen(name));
    return id >= 0 && (uint64_t)id < x->names.n ? x->kept_of[id] : NONE;
}

static int sig_eq(void *ctx, uint32_t v)
{
    struct fx *x = ctx;
    const struct sig *g = &x->sigs[v];
    return g->leaf == x->tmp[0] && g->n == x->tmp_n &&
           (g->n == 0 || !memcmp(x->sig_funcs + g->off, x->tmp + 1, g->n * sizeof *x->tmp));
}

/* The signature of the stack whose kept functions are tmp[1..n] (distinct) and whose leaf's
 * is leaf: found or made. Its index, or a negative SC_E*. */
static int64_t sig_of(struct fx *x, uint32_t leaf, uint32_t n)
{
    uint32_t *a = x->tmp + 1;
    for (uint32_t i = 1; i < n; i++) /* a stack holds few kept functions: insertion sort */
        for (uint32_t j = i; j > 0 && a[j - 1] > a[j]; j--) {
            uint32_t t = a[j];
            a[j] = a[j - 1];
            a[j - 1] = t;
        }
    x->tmp[0] = leaf;
    uint64_t h = sc_hash64(x->tmp, ((size_t)n + 1) * sizeof *x->tmp);
    x->tmp_n = n;
    int added;
    uint32_t *slot = sc_map64_intern(&x->sig_index, h, x->nsigs, sig_eq, x, &added);
    if (!slot)
        return SC_ENOMEM;
    if (!added)
        return *slot;
    if (sc_grow_array(&x->sigs, &x->sigs_cap, (uint64_t)x->nsigs + 1, sizeof *x->sigs) ||
        sc_grow_array(&x->sig_funcs, &x->sig_funcs_cap, (uint64_t)x->nsig_funcs + n + 1,
                      sizeof *x->sig_funcs) ||
        sc_grow_array(&x->sigsum, &x->sigsum_cap, (uint64_t)x->nsigs + 1, sizeof *x->sigsum) ||
        sc_grow_array(&x->touched, &x->touched_cap, (uint64_t)x->nsigs + 1, sizeof *x->touched) ||
        sc_grow_array(&x->mark, &x->mark_cap, (uint64_t)x->nsigs + 1, sizeof *x->mark))
        return SC_ENOMEM;
    x->sigs[x->nsigs] = (struct sig){x->nsig_funcs, n, leaf};
    memcpy(x->sig_funcs + x->nsig_funcs, a, n * sizeof *a);
    x->nsig_funcs += n;
    x->sigsum[x->nsigs] = 0;
    x->mark[x->nsigs] = 0;
    return x->nsigs++;
}

/* Room for n entries in tmp (past its first, the leaf). */
static int tmp_reserve(struct fx *x, uint32_t n)
{
    return sc_grow_array(&x->tmp, &x->tmp_cap, (uint64_t)n + 1, sizeof *x->tmp);
}

/* A resolved stack's signature: the kept functions among its frames (leaf first). */
static int64_t sig_of_frames(struct fx *x, const struct sc_store_frame *fr, uint32_t n)
{
    if (tmp_reserve(x, n))
        return SC_ENOMEM;
    uint32_t m = 0;
    for (uint32_t j = 0; j < n && !x->self_only; j++) {
        uint32_t k = kept_index(x, fr[j].function);
        if (k == NONE)
            continue;
        uint32_t d = 0;
        while (d < m && x->tmp[1 + d] != k)
            d++;
        if (d == m)
            x->tmp[1 + m++] = k;
    }
    uint32_t leaf = n ? kept_index(x, fr[0].function) : NONE;
    return sig_of(x, leaf, m);
}

/* ---- resolving a callback's unknown stacks ---- */

static int pend_add(struct fx *x, uint64_t stack, int64_t v, int64_t t)
{
    const struct sc_grow_part cols[] = {SC_GROW_PART(x->pend), SC_GROW_PART(x->pend_val),
                                        SC_GROW_PART(x->pend_time)};
    if (sc_grow_arrays(&x->pend_cap, (uint64_t)x->npend + 1, -1, cols, 3))
        return SC_ENOMEM;
    x->pend[x->npend] = stack;
    x->pend_val[x->npend] = v;
    x->pend_time[x->npend++] = t;
    return 0;
}

/* The signature of each pending stack, into stack_sig; a stack pending twice (timed rows)
 * is resolved twice but filed once. */
struct resolved {
    struct fx *x;
    uint32_t *sig; /* per pending row */
    uint32_t i;
    int rc;
};

static int resolved_stack(void *ctx, uint64_t stack, const struct sc_store_frame *fr, uint32_t n)
{
    struct resolved *r = ctx;
    struct fx *x = r->x;
    uint32_t known = stack_get(x, stack);
    int64_t g = known != NONE ? known : sig_of_frames(x, fr, n);
    if (g < 0)
        return r->rc = (int)g;
    if (known == NONE && stack_put(x, stack, (uint32_t)g))
        return r->rc = SC_ENOMEM;
    r->sig[r->i++] = (uint32_t)g;
    return 0;
}

/* Resolves the pending stacks: sig[i] for pending row i (the caller's, npend entries). */
static int resolve_pending(struct fx *x, uint32_t *sig)
{
    struct resolved r = {x, sig, 0, 0};
    int rc = sc_store_resolve(x->st, x->pend, x->npend, resolved_stack, &r, x->err);
    if (r.rc)
        rc = r.rc;
    if (rc == SC_ENOMEM)
        return fx_oom(x);
    return rc;
}

/* ---- a bucket's rows -> sums per function of the series' group ---- */

void fx_use_group(struct fx *x, uint32_t g)
{
    if (g == x->cur_group)
        return;
    if (x->cur_group != NONE)
        for (uint32_t j = x->gfirst[x->cur_group]; j < x->gfirst[x->cur_group + 1]; j++)
            x->local_of[x->gfunc[j]] = NONE;
    for (uint32_t j = x->gfirst[g]; j < x->gfirst[g + 1]; j++)
        x->local_of[x->gfunc[j]] = j - x->gfirst[g];
    x->cur_group = g;
}

static void touch(struct fx *x, uint32_t g, int64_t v)
{
    if (!x->mark[g]) {
        x->mark[g] = 1;
        x->touched[x->ntouched++] = g;
    }
    x->sigsum[g] = sc_add_sat(x->sigsum[g], v);
}

/* Sums rows into bself/bcum (zeroed here) and *total; 0 or SC_E*. */
int fx_bucket_sums(struct fx *x, const struct sc_store_rows *r, int64_t *total)
{
    int64_t tot = 0;
    x->npend = 0;
    x->ntouched = 0;
    for (uint32_t i = 0; i < r->n; i++) {
        int64_t v = r->values[i];
        if (!v)
            continue;
        tot = sc_add_sat(tot, v);
        uint32_t g = stack_get(x, r->stacks[i]);
        int rc = g != NONE ? (touch(x, g, v), 0) : pend_add(x, r->stacks[i], v, 0);
        if (rc)
            return fx_oom(x);
        if ((rc = sc_budget_poll_every(i, x->err)) != 0)
            return rc;
    }
    if (x->npend) {
        uint32_t *sig = malloc((size_t)x->npend * sizeof *sig);
        int rc = sig ? resolve_pending(x, sig) : fx_oom(x);
        for (uint32_t i = 0; rc == 0 && i < x->npend; i++)
            touch(x, sig[i], x->pend_val[i]);
        free(sig);
        if (rc)
            return rc;
    }
    uint32_t grp = x->line_of[r->series], m = x->gfirst[grp + 1] - x->gfirst[grp];
    fx_use_group(x, grp);
    memset(x->bself, 0, m * sizeof *x->bself);
    memset(x->bcum, 0, m * sizeof *x->bcum);
    for (uint32_t k = 0; k < x->ntouched; k++) {
        uint32_t g = x->touched[k];
        int64_t v = x->sigsum[g];
        x->sigsum[g] = 0;
        x->mark[g] = 0;
        const struct sig *sg = &x->sigs[g];
        uint32_t l = sg->leaf != NONE ? x->local_of[sg->leaf] : NONE;
        if (l != NONE)
            x->bself[l] = sc_add_sat(x->bself[l], v);
        for (uint32_t j = 0; j < sg->n; j++)
            if ((l = x->local_of[x->sig_funcs[sg->off + j]]) != NONE)
                x->bcum[l] = sc_add_sat(x->bcum[l], v);
    }
    x->ntouched = 0;
    *total = tot;
    return 0;
}

/* ---- the timed read: samples by their times ---- */

/* A sample of v on signature sg into a step's sums c (1 + 2 m: total, self, cum; m the
 * functions of the group local_of holds). */
static void timed_add(const struct fx *x, int64_t *c, uint32_t m, const struct sig *sg, int64_t v)
{
    c[0] = sc_add_sat(c[0], v);
    uint32_t l = sg->leaf != NONE ? x->local_of[sg->leaf] : NONE;
    if (l != NONE)
        c[1 + l] = sc_add_sat(c[1 + l], v);
    for (uint32_t j = 0; j < sg->n; j++)
        if ((l = x->local_of[x->sig_funcs[sg->off + j]]) != NONE)
            c[1 + m + l] = sc_add_sat(c[1 + m + l], v);
}

int fx_timed_rows(void *ctx, const struct sc_store_rows *r)
{
    struct fx *x = ctx;
    if (r->series >= x->nser)
        return 0;
    uint32_t i = r->series, grp = x->line_of[i], nf = x->gfirst[grp + 1] - x->gfirst[grp];
    size_t width = 1 + 2 * (size_t)nf;
    fx_use_group(x, grp);
    if (!x->tsum[i]) {
        /* the cells of one more series: within the limit with the others */
        uint64_t cells = (uint64_t)(x->ntimed + 1) * x->nsteps * width;
        if (cells > 2ULL * SC_TIMELINE_MAX_CELLS)
            return sc_errf(x->err, SC_ELIMIT,
                           "%u series with timed samples x %u steps x %u functions is more than "
                           "the limit of %d values (a larger step, fewer functions or a "
                           "narrower query)",
                           x->ntimed + 1, x->nsteps, nf, SC_TIMELINE_MAX_CELLS);
        x->tsum[i] = calloc((size_t)x->nsteps * width, sizeof **x->tsum);
        if (!x->tsum[i])
            return fx_oom(x);
        x->timed[i] = 1;
        x->ntimed++;
    }
    x->npend = 0;
    int64_t *ts = x->tsum[i];
    for (uint32_t n = 0; n < r->n; n++) {
        int rc = sc_budget_poll_every(n, x->err);
        if (rc)
            return rc;
        int64_t v = r->values[n], t = r->times[n];
        if (!v || t < x->from)
            continue;
        uint64_t k = (uint64_t)sc_sub_sat(t, x->from) / (uint64_t)x->step;
        if (k >= x->nsteps)
            continue;
        uint32_t g = stack_get(x, r->stacks[n]);
        if (g == NONE) {
            if (pend_add(x, r->stacks[n], v, t))
                return fx_oom(x);
            continue;
        }
        timed_add(x, ts + k * width, nf, &x->sigs[g], v);
    }
    if (!x->npend)
        return 0;
    uint32_t *sig = malloc((size_t)x->npend * sizeof *sig);
    int rc = sig ? resolve_pending(x, sig) : fx_oom(x);
    for (uint32_t n = 0; rc == 0 && n < x->npend; n++) {
        uint64_t k = (uint64_t)sc_sub_sat(x->pend_time[n], x->from) / (uint64_t)x->step;
        timed_add(x, ts + k * width, nf, &x->sigs[sig[n]], x->pend_val[n]);
    }
    free(sig);
    return rc;
}

/* ---- the first read (no function asked for): ranking by total ---- */

/* Files a resolved stack's functions as an astack (names interned). */
static int rank_stack(void *ctx, uint64_t stack, const struct sc_store_frame *fr, uint32_t n)
{
    struct fx *x = ctx;
    if (sc_map64_get(&x->astack_of, stack))
        return 0;
    if (sc_grow_array(&x->astacks, &x->astacks_cap, (uint64_t)x->nastacks + 1,
                      sizeof *x->astacks) ||
        sc_grow_array(&x->fids, &x->fids_cap, (uint64_t)x->nfids + n, sizeof *x->fids))
        return SC_ENOMEM;
    struct astack *a = &x->astacks[x->nastacks];
    a->stack = stack;
    a->off = x->nfids;
    a->n = 0;
    a->leaf = NONE;
    if (++x->stamp_now == 0)
        x->stamp_now = 1; /* wrapped: stale stamps could only skip a name; none is that old */
    for (uint32_t j = 0; j < n; j++) {
        int64_t id = sc_strtab_intern(&x->names, fr[j].function, strlen(fr[j].function));
        if (id < 0)
            return (int)id;
        if ((uint32_t)id >= x->nstamp) {
            if (sc_grow_array(&x->stamp, &x->stamp_cap, (uint64_t)id + 1, sizeof *x->stamp) ||
                sc_grow_array(&x->rank_cum, &x->rank_cap, (uint64_t)id + 1, sizeof *x->rank_cum))
                return SC_ENOMEM;
            while (x->nstamp <= (uint32_t)id) {
                x->stamp[x->nstamp] = 0;
                x->rank_cum[x->nstamp++] = 0;
            }
        }
        if (j == 0)
            a->leaf = (uint32_t)id;
        if (x->stamp[id] == x->stamp_now)
            continue;
        x->stamp[id] = x->stamp_now;
        x->fids[x->nfids++] = (uint32_t)id;
        a->n++;
    }
    if (!sc_map64_upsert(&x->astack_of, stack, x->nastacks, NULL))
        return SC_ENOMEM;
    x->nastacks++;
    return 0;
}

/* Adds v to the total of name id in group g. */
static int pair_add(struct fx *x, uint32_t g, uint32_t id, int64_t v)
{
    int added;
    uint32_t *slot = sc_map64_upsert(&x->pair_of, (uint64_t)g << 32 | id, x->npairs, &added);
    if (!slot)
        return SC_ENOMEM;
    uint32_t p = *slot;
    if (added) {
        if (sc_grow_array(&x->pairs, &x->pairs_cap, (uint64_t)x->npairs + 1, sizeof *x->pairs))
            return SC_ENOMEM;
        x->pairs[x->npairs++] = (struct pair){g, id, 0};
    }
    x->pairs[p].cum = sc_add_sat(x->pairs[p].cum, v);
    return 0;
}

static int rank_rows(void *ctx, const struct sc_store_rows *r)
{
    struct fx *x = ctx;
    /* per group: the rows come per series (not summed), each in its group */
    if (x->per_group && r->series >= x->nser)
        return 0;
    uint32_t grp = x->per_group ? x->line_of[r->series] : NONE;
    x->npend = 0;
    for (uint32_t i = 0; i < r->n; i++)
        if (r->values[i] && !sc_map64_get(&x->astack_of, r->stacks[i]) &&
            pend_add(x, r->stacks[i], 0, 0))
            return fx_oom(x);
    if (x->npend) {
        int rc = sc_store_resolve(x->st, x->pend, x->npend, rank_stack, x, x->err);
        if (rc == SC_ENOMEM || (rc && !x->err[0]))
            return sc_errf(x->err, rc, "resolving stacks: %s", sc_strerror(rc));
        if (rc)
            return rc;
    }
    for (uint32_t i = 0; i < r->n; i++) {
        int rc = sc_budget_poll_every(i, x->err);
        if (rc)
            return rc;
        /* gauges: a series' average over its captures, as a merge takes it */
        int64_t v = x->gauge && r->captures > 0 ? r->values[i] / r->captures : r->values[i];
        if (!v)
            continue;
        const struct astack *a = &x->astacks[*sc_map64_get(&x->astack_of, r->stacks[i])];
        for (uint32_t j = 0; j < a->n; j++) {
            uint32_t id = x->fids[a->off + j];
            x->rank_cum[id] = sc_add_sat(x->rank_cum[id], v);
            if (grp != NONE && pair_add(x, grp, id, v))
                return fx_oom(x);
        }
    }
    return 0;
}

/* A function in the ranking: its total (in its group, per group), its name, its id. */
struct ranked {
    int64_t cum;
    struct sc_str name;
    uint32_t id, group;
};

/* Largest total first, then by name: the same order on every backend. */
static int by_total(const void *pa, const void *pb)
{
    const struct ranked *a = pa, *b = pb;
    if (a->cum != b->cum)
        return a->cum > b->cum ? -1 : 1;
    size_t n = a->name.len < b->name.len ? a->name.len : b->name.len;
    int c = memcmp(a->name.ptr, b->name.ptr, n);
    return c ? c : (a->name.len > b->name.len) - (a->name.len < b->name.len);
}

/* Group by group, each by_total. */
static int by_group_total(const void *pa, const void *pb)
{
    const struct ranked *a = pa, *b = pb;
    if (a->group != b->group)
        return a->group < b->group ? -1 : 1;
    return by_total(pa, pb);
}

static int by_u32(const void *pa, const void *pb)
{
    uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
    return (a > b) - (a < b);
}

/* Each group's max_funcs heaviest (0: all) by its own total: their names marked in chosen
 * (per name id), and the chosen pairs, group by group, into *out (*nout of them). */
static int choose_per_group(struct fx *x, uint32_t max_funcs, uint8_t *chosen, struct ranked **out,
                            uint32_t *nout)
{
    struct ranked *v = malloc(((size_t)x->npairs + 1) * sizeof *v);
    if (!v)
        return fx_oom(x);
    uint32_t n = 0;
    for (uint32_t p = 0; p < x->npairs; p++)
        if (x->pairs[p].cum != 0)
            v[n++] = (struct ranked){x->pairs[p].cum, x->names.v[x->pairs[p].id], x->pairs[p].id,
                                     x->pairs[p].group};
    qsort(v, n, sizeof *v, by_group_total);
    uint32_t kept = 0, in_group = 0;
    for (uint32_t p = 0; p < n; p++) {
        in_group = p > 0 && v[p].group == v[p - 1].group ? in_group + 1 : 0;
        if (max_funcs && in_group >= max_funcs)
            continue;
        chosen[v[p].id] = 1;
        v[kept++] = v[p];
    }
    *out = v;
    *nout = kept;
    return 0;
}

/* The groups' lists from the chosen pairs (group by group) and kept_of: each group's kept
 * indexes, ascending. */
static int group_lists(struct fx *x, const struct ranked *v, uint32_t n, uint32_t **gfirst,
                       uint32_t **gfunc)
{
    *gfirst = calloc((size_t)x->ngroups + 1, sizeof **gfirst);
    *gfunc = malloc(((size_t)n + 1) * sizeof **gfunc);
    if (!*gfirst || !*gfunc)
        return fx_oom(x);
    for (uint32_t p = 0; p < n; p++) {
        (*gfirst)[v[p].group + 1]++;
        (*gfunc)[p] = x->kept_of[v[p].id];
    }
    for (uint32_t g = 0; g < x->ngroups; g++) {
        (*gfirst)[g + 1] += (*gfirst)[g];
        qsort(*gfunc + (*gfirst)[g], (*gfirst)[g + 1] - (*gfirst)[g], sizeof **gfunc, by_u32);
    }
    return 0;
}

/* Ranks every function of the range by its total and keeps the first max_funcs (0: all),
 * per group or over all: names (by total, then name) into *out, kept_of, the groups' lists
 * (per group) and the astacks' signatures filled. */
int fx_rank(struct fx *x, uint32_t max_funcs, char ***out, uint32_t **gfirst, uint32_t **gfunc)
{
    struct sc_store_query q = sc_selection_query(x->s, x->tenant);
    q.from_ns = x->from;
    struct sc_store_read rd = {&q, 0, 0, !x->gauge && !x->per_group};
    int rc = sc_store_read(x->st, &rd, rank_rows, x, x->err);
    if (rc == SC_ENOTFOUND) {
        x->err[0] = 0;
        rc = 0;
    }
    if (rc)
        return rc;
    uint32_t n = 0, npicked = 0;
    struct ranked *order = malloc(((size_t)x->nstamp + 1) * sizeof *order), *picked = NULL;
    x->kept_of = malloc(((size_t)x->names.n + 1) * sizeof *x->kept_of);
    uint8_t *chosen = x->per_group ? calloc((size_t)x->names.n + 1, 1) : NULL;
    if (!order || !x->kept_of || (x->per_group && !chosen)) {
        free(order);
        free(chosen);
        return fx_oom(x);
    }
    if (x->per_group && (rc = choose_per_group(x, max_funcs, chosen, &picked, &npicked)) != 0) {
        free(order);
        free(chosen);
        return rc;
    }
    /* the kept names by their total over every group */
    for (uint32_t id = 0; id < x->names.n; id++) {
        x->kept_of[id] = NONE;
        if (id < x->nstamp && (chosen ? chosen[id] : x->rank_cum[id] != 0))
            order[n++] = (struct ranked){x->rank_cum[id], x->names.v[id], id, 0};
    }
    free(chosen);
    qsort(order, n, sizeof *order, by_total);
    if (!x->per_group && max_funcs && n > max_funcs)
        n = max_funcs;
    char **names = calloc((size_t)n + 1, sizeof *names);
    for (uint32_t k = 0; names && k < n; k++) {
        x->kept_of[order[k].id] = k;
        names[k] = strndup(order[k].name.ptr, order[k].name.len);
        if (!names[k]) {
            for (uint32_t j = 0; j < k; j++)
                free(names[j]);
            free(names);
            names = NULL;
        }
    }
    free(order);
    if (!names) {
        free(picked);
        return fx_oom(x);
    }
    x->nf = n;
    *out = names;
    rc = x->per_group ? group_lists(x, picked, npicked, gfirst, gfunc) : 0;
    free(picked);
    if (rc)
        return rc;
    /* the first read's stacks get their signatures now: the second resolves only its own.
     * In the order they came (a series' stacks together), so that a bucket's signatures
     * lie near one another: with each group's own functions kept, most stacks have one of
     * their own, and spreading a bucket's sums over them is most of a read's time */
    for (uint32_t m = 0; m < x->nastacks; m++) {
        const struct astack *a = &x->astacks[m];
        if (tmp_reserve(x, a->n))
            return fx_oom(x);
        uint32_t k = 0;
        for (uint32_t j = 0; j < a->n && !x->self_only; j++)
            if (x->kept_of[x->fids[a->off + j]] != NONE)
                x->tmp[1 + k++] = x->kept_of[x->fids[a->off + j]];
        int64_t g = sig_of(x, a->leaf == NONE ? NONE : x->kept_of[a->leaf], k);
        if (g < 0 || stack_put(x, a->stack, (uint32_t)g))
            return fx_oom(x);
    }
    sc_map64_release(&x->astack_of);
    free(x->astacks);
    free(x->fids);
    x->astacks = NULL;
    x->fids = NULL;
    x->nastacks = x->astacks_cap = x->nfids = x->fids_cap = 0;
    return 0;
}

/* ---- the grid ---- */

static int64_t gcd64(int64_t a, int64_t b)
{
    while (b) {
        int64_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

/* The bucket width of the aggregated read (see the top of the file); *exact when every
 * step is whole buckets. */
int64_t fx_grid_width(int64_t from, int64_t step, int *exact)
{
    int64_t g = SC_NS_PER_S;
    for (size_t k = 0; k < sizeof grid_widths / sizeof *grid_widths; k++)
        if (grid_widths[k] * SC_NS_PER_S <= step) {
            g = grid_widths[k] * SC_NS_PER_S;
            break;
        }
    int64_t off = ((from % step) + step) % step;
    int64_t e = off ? gcd64(step, off) : step;
    *exact = e >= SC_NS_PER_S && (e % g == 0 || (g < ROLLUP_MIN_NS && step / e <= MAX_SPLIT));
    return *exact ? e : g;
}
