/* fnseries.c - functions over time (fnseries.h): each function's share of the timeline.
 *
 * The numbers come from the timeline itself. sc_plan_timeline_series gives each series' value
 * per step, the very number the plain timeline sums into its lines (a rate, an average or a
 * value per profile: query/metric.h). Each such value is split among the functions by the
 * series' stack rows in that step: function f gets value * (f's rows / all rows), self from
 * the rows whose leaf frame is f, total (cum) from the rows whose stack holds f (a stack counts
 * once however often f recurs in it). So whatever the metric:
 *   - the self values of a step sum to the timeline's value (the leaves' shares sum to 1);
 *   - no function's total exceeds the timeline's value (for values that are not negative);
 *   - a line is NaN exactly where the timeline's is, and 0 where it has profiles but none
 *     holds the function.
 * Splitting the timeline's value, rather than turning the rows into a metric of their own,
 * keeps the timeline's rules in one place: a capture spread over the steps it overlaps, its
 * covered time, timed samples by their times, the profiles just before the range.
 *
 * The rows (the composition). Timed profiles (perf script, `record`) are read sample by sample
 * (sc_store_read's timed read) and each sample placed in the step its time falls in, as the
 * timeline places their values; their series are left out of the aggregated read, as
 * sc_store_merge does. Every other series is read per time bucket (sc_store_read with a
 * bucket width), whole buckets from the store's rollups. A read's buckets are multiples of
 * their width since the epoch while the steps start at `from` (any second), so the width is:
 *   - exact: the largest width that divides both the step and from's offset in it, when that
 *     width is made of the grid's buckets below (or, under ten minutes, at most 64 of them
 *     make a step): every step is whole buckets and its composition is its own rows';
 *   - otherwise the grid: the largest of 1 d, 1 h, 10 min, 1 min, 10 s, 1 s that is no longer
 *     than the step, and a bucket that straddles two steps adds its rows to each in
 *     proportion to its overlap (the timeline's own rule for a capture). A month from now-30d
 *     at the default 6 h steps reads hour rollups, 6 a step (the steps aligned to an hour:
 *     whole steps of them); exact steps from finer buckets would read their ragged ends
 *     raw, several times the time for a composition that moves little within an hour.
 * A step where the timeline has a value but the series has no rows of its own (a capture that
 * started in an earlier step and spreads over this one, or before the range: the read starts
 * SC_STORE_TIMELINE_LOOKBACK_NS early) takes the series' latest composition.
 *
 * Cost. Each distinct stack is resolved once, to its signature: the kept functions it holds
 * and the one at its leaf; a row costs a lookup and an add to its signature's sum, and each
 * bucket's signatures are spread over the functions once. Without a function asked for, a
 * first read of the whole range (bucket 0: day rollups) ranks the functions by total; its
 * stacks are kept with their functions so the second read resolves only stacks it alone
 * has. The timeline is made on a thread of its own meanwhile (it reads every profile's
 * totals: about as long as the rows' read over a month), and steps flushed before it is
 * there wait in a queue (at most QUEUE_MAX values, then the rows wait for it). A month of
 * one service (bench/fnseries.sh) answers in about the time of the plain timeline. Memory:
 * the answer (groups x functions x steps, SC_TIMELINE_MAX_CELLS), two steps of sums per
 * series, the queue, and the stacks. A bucket's sums are integers and buckets come in time
 * order, so the answer does not depend on the order a backend gives rows in (SQLite and
 * ClickHouse agree to the bit, as store_conformance checks). */
#include "query/fnseries.h"
#include "model/arena.h"
#include "model/budget.h"
#include "model/buf.h"
#include "model/clock.h"
#include "model/error.h"
#include "model/hash.h"
#include "model/profile.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NONE UINT32_MAX

/* The read grid's widths, in seconds: the store's rollups (store_int.h's SC_ROLLUP_*), then
 * finer ones for short steps, which the store reads from raw profiles. */
static const int64_t grid_widths[] = {86400, 3600, 600, 60, 10, 1};
#define ROLLUP_MIN_NS (600 * SC_NS_PER_S)
/* Under ROLLUP_MIN_NS an exact width may split a step into at most this many buckets (a
 * bucket costs a probe per series, its profiles are read either way). */
#define MAX_SPLIT 64

/* A signature: the kept functions a stack holds (sorted, in sig_funcs[off, off + n)) and
 * the one at its leaf (NONE when the leaf's function is not kept). */
struct sig {
    uint32_t off, n, leaf;
};

/* The first read's stacks (no function asked for): each one's functions (ids into names,
 * distinct, in fids[off, off + n)) and its leaf's. */
struct astack {
    uint32_t off, n, leaf;
};

struct fx {
    struct sc_store *st;
    const char *tenant;
    const struct sc_selection *s;
    char *err;
    int64_t from, step;
    uint32_t nsteps, nser, nf;
    int gauge;
    const double *cell;      /* s->n x nsteps: each series' timeline value */
    const uint32_t *line_of; /* s->n: each series' group */
    double *self, *cum;      /* the answer (fnseries.h) */

    /* functions: the one asked for (target), or every name seen (names) and the kept ones
     * among them (kept_of: name id -> kept index or NONE) */
    const char *target;
    struct sc_arena arena;
    struct sc_strtab names;
    uint32_t *kept_of;
    uint32_t *stamp, nstamp, stamp_cap; /* per name: the last stack that counted it */
    uint32_t stamp_now;

    /* stacks -> signatures: small keys (SQLite's dense stack ids) in an array, the others
     * (ClickHouse's content hashes) in a map; a row's lookup is most of a read's own cost */
    uint32_t *dense, ndense;
    struct sc_map64 stack_sig;
    struct sig *sigs;
    uint32_t nsigs, sigs_cap;
    uint32_t *sig_funcs, nsig_funcs, sig_funcs_cap;
    struct sc_map64 sig_index; /* signature hash -> sig */
    uint32_t *tmp, tmp_cap;    /* a signature being built: its leaf, then its functions */
    uint32_t tmp_n;            /* its functions */

    /* the first read: stacks -> astack, and the total (cum) of every name */
    struct sc_map64 astack_of;
    struct astack *astacks;
    uint32_t nastacks, astacks_cap;
    uint32_t *fids, nfids, fids_cap;
    int64_t *rank_cum;
    uint32_t rank_cap;

    /* a callback's stacks not yet known: resolved together */
    uint64_t *pend;
    int64_t *pend_val, *pend_time;
    uint32_t npend, pend_cap;

    /* a bucket's sums: per signature, then per kept function */
    int64_t *sigsum;
    uint32_t sigsum_cap;
    uint32_t *touched; /* the signatures summed so far (room for every one) */
    uint32_t ntouched, touched_cap;
    uint8_t *mark; /* per signature: in touched */
    uint32_t mark_cap;
    int64_t *bself, *bcum; /* nf each */

    /* the aggregated read's window: steps j = k + 1 (j = 0 is before the range), two at a
     * time in slot j & 1; per series its total, functions' self and cum, and whether it had
     * rows */
    double *slot_tot[2], *slot_self[2], *slot_cum[2];
    uint8_t *slot_has[2];
    uint32_t next_flush; /* the first step j not yet flushed */
    /* per series: its latest composition (shares of self and cum), whether it has one */
    double *last_self, *last_cum;
    uint8_t *has_last;
    double *share_self, *share_cum; /* nf each: scratch */

    /* timed series: integer sums per step (nsteps x (1 + 2 nf)), allocated when seen */
    uint8_t *timed;
    int64_t **tsum;
    uint32_t ntimed;

    /* the timeline, made on a thread of its own while the rows are read (tl), and the
     * answer it frames (f): until it is there (ready), flushed steps wait in a queue, each
     * series with rows as (j, i) in qrec and its sums (1 + 2 nf doubles) in qval */
    struct tl_job *tl;
    struct sc_fnseries *f;
    int ready;
    uint32_t queued; /* steps j < queued are in the queue */
    struct qrec {
        uint32_t j, i;
    } * qrec;
    uint32_t nq, qcap;
    double *qval;
    uint64_t qval_cap;
};

/* The timeline's thread: its answer, or its failure in its own words. */
struct tl_job {
    struct sc_store *st;
    const char *tenant;
    const struct sc_selection *s;
    int64_t step;
    const char *group_by;
    struct sc_budget *budget; /* the query's, shared */
    struct sc_timeline t;
    double *cell;
    uint32_t *line_of;
    int rc;
    char err[SC_ERR_LEN];
    pthread_t thread;
    int started; /* a thread runs it (else it ran in the caller) */
};

/* The most the queue holds (doubles) before the rows wait for the timeline: 8 MiB. */
#define QUEUE_MAX (1u << 20)

static int oom(struct fx *x)
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
    if (key >= x->ndense) {
        uint32_t n = x->ndense ? x->ndense : 4096;
        while (n <= key)
            n *= 2;
        uint32_t *d = realloc(x->dense, (size_t)n * sizeof *d);
        if (!d)
            return SC_ENOMEM;
        memset(d + x->ndense, 0xff, (size_t)(n - x->ndense) * sizeof *d); /* NONE */
        x->dense = d;
        x->ndense = n;
    }
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
    if (n + 1 <= x->tmp_cap)
        return 0;
    uint32_t c = n + 17;
    uint32_t *t = realloc(x->tmp, c * sizeof *t);
    if (!t)
        return SC_ENOMEM;
    x->tmp = t;
    x->tmp_cap = c;
    return 0;
}

/* A resolved stack's signature: the kept functions among its frames (leaf first). */
static int64_t sig_of_frames(struct fx *x, const struct sc_store_frame *fr, uint32_t n)
{
    if (tmp_reserve(x, n))
        return SC_ENOMEM;
    uint32_t m = 0;
    for (uint32_t j = 0; j < n; j++) {
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
    if (x->npend == x->pend_cap) {
        uint32_t c = x->pend_cap ? x->pend_cap * 2 : 256;
        if (c <= x->pend_cap)
            return SC_ENOMEM;
        uint64_t *ps = realloc(x->pend, c * sizeof *ps);
        if (ps)
            x->pend = ps;
        int64_t *pv = realloc(x->pend_val, c * sizeof *pv);
        if (pv)
            x->pend_val = pv;
        int64_t *pt = realloc(x->pend_time, c * sizeof *pt);
        if (pt)
            x->pend_time = pt;
        if (!ps || !pv || !pt)
            return SC_ENOMEM;
        x->pend_cap = c;
    }
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
        return oom(x);
    return rc;
}

/* ---- a bucket's rows -> sums per kept function ---- */

static void touch(struct fx *x, uint32_t g, int64_t v)
{
    if (!x->mark[g]) {
        x->mark[g] = 1;
        x->touched[x->ntouched++] = g;
    }
    x->sigsum[g] = sc_add_sat(x->sigsum[g], v);
}

/* Sums rows into bself/bcum (zeroed here) and *total; 0 or SC_E*. */
static int bucket_sums(struct fx *x, const struct sc_store_rows *r, int64_t *total)
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
            return oom(x);
        if ((rc = sc_budget_poll_every(i, x->err)) != 0)
            return rc;
    }
    if (x->npend) {
        uint32_t *sig = malloc((size_t)x->npend * sizeof *sig);
        int rc = sig ? resolve_pending(x, sig) : oom(x);
        for (uint32_t i = 0; rc == 0 && i < x->npend; i++)
            touch(x, sig[i], x->pend_val[i]);
        free(sig);
        if (rc)
            return rc;
    }
    memset(x->bself, 0, x->nf * sizeof *x->bself);
    memset(x->bcum, 0, x->nf * sizeof *x->bcum);
    for (uint32_t k = 0; k < x->ntouched; k++) {
        uint32_t g = x->touched[k];
        int64_t v = x->sigsum[g];
        x->sigsum[g] = 0;
        x->mark[g] = 0;
        const struct sig *sg = &x->sigs[g];
        if (sg->leaf != NONE)
            x->bself[sg->leaf] = sc_add_sat(x->bself[sg->leaf], v);
        for (uint32_t j = 0; j < sg->n; j++) {
            uint32_t f = x->sig_funcs[sg->off + j];
            x->bcum[f] = sc_add_sat(x->bcum[f], v);
        }
    }
    x->ntouched = 0;
    *total = tot;
    return 0;
}

/* ---- attributing a series' step ---- */

/* Series i in step k (0-based) had sums tot, self, cum (has: it had rows): its timeline value
 * split by them (or by its latest composition), added to its group's line; the composition
 * becomes its latest. k < 0: before the range, only remembered. */
static void attribute(struct fx *x, uint32_t i, int64_t k, int has, double tot, const double *self,
                      const double *cum)
{
    uint32_t nf = x->nf;
    double *ls = x->last_self + (size_t)i * nf, *lc = x->last_cum + (size_t)i * nf;
    if (has && tot != 0) {
        for (uint32_t f = 0; f < nf; f++) {
            ls[f] = self[f] / tot;
            lc[f] = cum[f] / tot;
        }
        x->has_last[i] = 1;
    }
    if (k < 0 || !x->has_last[i])
        return;
    double c = x->cell[(size_t)i * x->nsteps + (size_t)k];
    if (isnan(c))
        return;
    size_t base = (size_t)x->line_of[i] * nf;
    for (uint32_t f = 0; f < nf; f++) {
        size_t o = (base + f) * x->nsteps + (size_t)k;
        x->self[o] += c * ls[f];
        x->cum[o] += c * lc[f];
    }
}

/* ---- the aggregated read: buckets into the two-step window ---- */

/* The end of window step j (j = 0: before the range). */
static int64_t step_end(const struct fx *x, uint32_t j)
{
    return sc_add_sat(x->from, sc_mul_sat((int64_t)j, x->step));
}

static int become_ready(struct fx *x);

/* Queues series i's sums of step j (the timeline is not there yet). */
static int enqueue(struct fx *x, uint32_t j, uint32_t i, double tot, const double *self,
                   const double *cum)
{
    uint32_t nf = x->nf;
    size_t w = 1 + 2 * (size_t)nf;
    if (sc_grow_array(&x->qrec, &x->qcap, (uint64_t)x->nq + 1, sizeof *x->qrec))
        return oom(x);
    if ((uint64_t)(x->nq + 1) * w > x->qval_cap) {
        uint64_t c = x->qval_cap ? x->qval_cap * 2 : 1024;
        while (c < (uint64_t)(x->nq + 1) * w)
            c *= 2;
        double *v = realloc(x->qval, c * sizeof *v);
        if (!v)
            return oom(x);
        x->qval = v;
        x->qval_cap = c;
    }
    double *v = x->qval + (size_t)x->nq * w;
    v[0] = tot;
    memcpy(v + 1, self, nf * sizeof *v);
    memcpy(v + 1 + nf, cum, nf * sizeof *v);
    x->qrec[x->nq++] = (struct qrec){j, i};
    return 0;
}

/* The queued steps, attributed in the order they were flushed; the queue emptied. */
static int replay(struct fx *x)
{
    uint32_t nf = x->nf, r = 0;
    size_t w = 1 + 2 * (size_t)nf;
    for (uint32_t j = 0; j < x->queued; j++)
        for (uint32_t i = 0; i < x->nser; i++) {
            int rc = sc_budget_poll_every(i, x->err);
            if (rc)
                return rc;
            if (x->timed[i])
                continue;
            if (r < x->nq && x->qrec[r].j == j && x->qrec[r].i == i) {
                const double *v = x->qval + (size_t)r++ * w;
                attribute(x, i, (int64_t)j - 1, 1, v[0], v + 1, v + 1 + nf);
            } else {
                attribute(x, i, (int64_t)j - 1, 0, 0, NULL, NULL);
            }
        }
    free(x->qrec);
    free(x->qval);
    x->qrec = NULL;
    x->qval = NULL;
    x->nq = x->qcap = 0;
    x->qval_cap = 0;
    x->queued = 0;
    return 0;
}

/* Flushes window step j for every series that is not timed: attributed, or queued until
 * the timeline is there (waited for when the queue is full). */
static int flush(struct fx *x, uint32_t j)
{
    int s = j & 1;
    uint32_t nf = x->nf;
    for (uint32_t i = 0; i < x->nser; i++) {
        int rc = sc_budget_poll_every(i, x->err);
        if (rc)
            return rc;
        if (x->timed[i])
            continue;
        size_t o = (size_t)i * nf;
        if (x->ready)
            attribute(x, i, (int64_t)j - 1, x->slot_has[s][i], x->slot_tot[s][i],
                      x->slot_self[s] + o, x->slot_cum[s] + o);
        else if (x->slot_has[s][i] && (rc = enqueue(x, j, i, x->slot_tot[s][i], x->slot_self[s] + o,
                                                    x->slot_cum[s] + o)) != 0)
            return rc;
        x->slot_has[s][i] = 0;
        x->slot_tot[s][i] = 0;
        memset(x->slot_self[s] + o, 0, nf * sizeof(double));
        memset(x->slot_cum[s] + o, 0, nf * sizeof(double));
    }
    if (!x->ready) {
        x->queued = j + 1;
        if ((uint64_t)x->nq * (1 + 2 * (uint64_t)nf) > QUEUE_MAX)
            return become_ready(x);
    }
    return 0;
}

/* Flushes every step that ends at or before t. */
static int advance(struct fx *x, int64_t t)
{
    while (x->next_flush <= x->nsteps && step_end(x, x->next_flush) <= t) {
        int rc = flush(x, x->next_flush);
        if (rc)
            return rc;
        x->next_flush++;
    }
    return 0;
}

static int agg_rows(void *ctx, const struct sc_store_rows *r)
{
    struct fx *x = ctx;
    if (r->series >= x->nser || x->timed[r->series])
        return 0; /* timed series come from their samples */
    int rc = advance(x, r->from_ns);
    int64_t tot = 0;
    if (rc == 0)
        rc = bucket_sums(x, r, &tot);
    if (rc)
        return rc;
    /* the steps the bucket overlaps, in proportion (exact grids: one, whole) */
    int64_t len = r->until_ns - r->from_ns;
    uint32_t i = r->series, nf = x->nf;
    for (uint32_t j = x->next_flush; j <= x->nsteps && len > 0; j++) {
        int64_t lo = j == 0 ? INT64_MIN : step_end(x, j - 1), hi = step_end(x, j);
        if (lo >= r->until_ns)
            break;
        int64_t a = r->from_ns > lo ? r->from_ns : lo, b = r->until_ns < hi ? r->until_ns : hi;
        if (b <= a)
            continue;
        if (j > x->next_flush + 1)
            break; /* buckets are no longer than a step: cannot happen */
        double w = b - a == len ? 1.0 : (double)(b - a) / (double)len;
        int s = j & 1;
        size_t o = (size_t)i * nf;
        x->slot_has[s][i] = 1;
        x->slot_tot[s][i] += w * (double)tot;
        for (uint32_t f = 0; f < nf; f++) {
            x->slot_self[s][o + f] += w * (double)x->bself[f];
            x->slot_cum[s][o + f] += w * (double)x->bcum[f];
        }
    }
    return 0;
}

/* ---- the timed read: samples by their times ---- */

static int timed_rows(void *ctx, const struct sc_store_rows *r)
{
    struct fx *x = ctx;
    if (r->series >= x->nser)
        return 0;
    uint32_t i = r->series, nf = x->nf;
    size_t width = 1 + 2 * (size_t)nf;
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
            return oom(x);
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
                return oom(x);
            continue;
        }
        int64_t *c = ts + k * width;
        const struct sig *sg = &x->sigs[g];
        c[0] = sc_add_sat(c[0], v);
        if (sg->leaf != NONE)
            c[1 + sg->leaf] = sc_add_sat(c[1 + sg->leaf], v);
        for (uint32_t j = 0; j < sg->n; j++) {
            int64_t *cc = &c[1 + nf + x->sig_funcs[sg->off + j]];
            *cc = sc_add_sat(*cc, v);
        }
    }
    if (!x->npend)
        return 0;
    uint32_t *sig = malloc((size_t)x->npend * sizeof *sig);
    int rc = sig ? resolve_pending(x, sig) : oom(x);
    for (uint32_t n = 0; rc == 0 && n < x->npend; n++) {
        int64_t v = x->pend_val[n];
        int64_t *c =
            ts + (uint64_t)sc_sub_sat(x->pend_time[n], x->from) / (uint64_t)x->step * width;
        const struct sig *sg = &x->sigs[sig[n]];
        c[0] = sc_add_sat(c[0], v);
        if (sg->leaf != NONE)
            c[1 + sg->leaf] = sc_add_sat(c[1 + sg->leaf], v);
        for (uint32_t j = 0; j < sg->n; j++) {
            int64_t *cc = &c[1 + nf + x->sig_funcs[sg->off + j]];
            *cc = sc_add_sat(*cc, v);
        }
    }
    free(sig);
    return rc;
}

/* The timed series' steps, in order. */
static int flush_timed(struct fx *x)
{
    uint32_t nf = x->nf;
    size_t width = 1 + 2 * (size_t)nf;
    for (uint32_t i = 0; i < x->nser; i++) {
        if (!x->tsum[i])
            continue;
        for (uint32_t k = 0; k < x->nsteps; k++) {
            int rc = sc_budget_poll_every(k, x->err);
            if (rc)
                return rc;
            const int64_t *c = x->tsum[i] + (size_t)k * width;
            for (uint32_t f = 0; f < nf; f++) {
                x->share_self[f] = (double)c[1 + f];
                x->share_cum[f] = (double)c[1 + nf + f];
            }
            attribute(x, i, k, c[0] != 0, (double)c[0], x->share_self, x->share_cum);
        }
    }
    return 0;
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

static int rank_rows(void *ctx, const struct sc_store_rows *r)
{
    struct fx *x = ctx;
    x->npend = 0;
    for (uint32_t i = 0; i < r->n; i++)
        if (r->values[i] && !sc_map64_get(&x->astack_of, r->stacks[i]) &&
            pend_add(x, r->stacks[i], 0, 0))
            return oom(x);
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
            int64_t *c = &x->rank_cum[x->fids[a->off + j]];
            *c = sc_add_sat(*c, v);
        }
    }
    return 0;
}

/* A function in the ranking: its total, its name, its id. */
struct ranked {
    int64_t cum;
    struct sc_str name;
    uint32_t id;
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

/* Ranks every function of the range by its total and keeps the first max_funcs (0: all):
 * names (kept index order) into *out, kept_of and the astacks' signatures filled. */
static int rank(struct fx *x, uint32_t max_funcs, char ***out)
{
    struct sc_store_query q = sc_selection_query(x->s, x->tenant);
    q.from_ns = x->from;
    struct sc_store_read rd = {&q, 0, 0, !x->gauge};
    int rc = sc_store_read(x->st, &rd, rank_rows, x, x->err);
    if (rc == SC_ENOTFOUND) {
        x->err[0] = 0;
        rc = 0;
    }
    if (rc)
        return rc;
    uint32_t n = 0;
    struct ranked *order = malloc(((size_t)x->nstamp + 1) * sizeof *order);
    x->kept_of = malloc(((size_t)x->names.n + 1) * sizeof *x->kept_of);
    if (!order || !x->kept_of) {
        free(order);
        return oom(x);
    }
    for (uint32_t id = 0; id < x->names.n; id++) {
        x->kept_of[id] = NONE;
        if (id < x->nstamp && x->rank_cum[id] != 0)
            order[n++] = (struct ranked){x->rank_cum[id], x->names.v[id], id};
    }
    qsort(order, n, sizeof *order, by_total);
    if (max_funcs && n > max_funcs)
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
    if (!names)
        return oom(x);
    x->nf = n;
    *out = names;
    /* the first read's stacks get their signatures now: the second resolves only its own */
    for (uint32_t m = 0; m <= x->astack_of.mask && x->astack_of.keys; m++) {
        if (x->astack_of.vals[m] == UINT32_MAX)
            continue;
        const struct astack *a = &x->astacks[x->astack_of.vals[m]];
        if (tmp_reserve(x, a->n))
            return oom(x);
        uint32_t k = 0;
        for (uint32_t j = 0; j < a->n; j++)
            if (x->kept_of[x->fids[a->off + j]] != NONE)
                x->tmp[1 + k++] = x->kept_of[x->fids[a->off + j]];
        int64_t g = sig_of(x, a->leaf == NONE ? NONE : x->kept_of[a->leaf], k);
        if (g < 0 || stack_put(x, x->astack_of.keys[m], (uint32_t)g))
            return oom(x);
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
static int64_t grid_width(int64_t from, int64_t step, int *exact)
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

/* ---- the plan ---- */

static void fx_release(struct fx *x)
{
    sc_arena_release(&x->arena);
    sc_strtab_release(&x->names);
    free(x->kept_of);
    free(x->stamp);
    free(x->dense);
    sc_map64_release(&x->stack_sig);
    free(x->sigs);
    free(x->sig_funcs);
    sc_map64_release(&x->sig_index);
    free(x->tmp);
    sc_map64_release(&x->astack_of);
    free(x->astacks);
    free(x->fids);
    free(x->rank_cum);
    free(x->pend);
    free(x->pend_val);
    free(x->pend_time);
    free(x->sigsum);
    free(x->touched);
    free(x->mark);
    free(x->bself);
    free(x->bcum);
    for (int s = 0; s < 2; s++) {
        free(x->slot_tot[s]);
        free(x->slot_self[s]);
        free(x->slot_cum[s]);
        free(x->slot_has[s]);
    }
    free(x->last_self);
    free(x->last_cum);
    free(x->has_last);
    free(x->share_self);
    free(x->share_cum);
    for (uint32_t i = 0; x->tsum && i < x->nser; i++)
        free(x->tsum[i]);
    free(x->tsum);
    free(x->timed);
    free(x->qrec);
    free(x->qval);
}

/* The series' rows: timed ones by their samples (attributed once the timeline is there),
 * the others per bucket of the grid. */
static int read_rows(struct fx *x)
{
    uint32_t n = x->nser, nf = x->nf;
    size_t per = (size_t)n * nf;
    for (int s = 0; s < 2; s++) {
        x->slot_tot[s] = calloc(n, sizeof(double));
        x->slot_self[s] = calloc(per + 1, sizeof(double));
        x->slot_cum[s] = calloc(per + 1, sizeof(double));
        x->slot_has[s] = calloc(n, 1);
    }
    x->last_self = calloc(per + 1, sizeof(double));
    x->last_cum = calloc(per + 1, sizeof(double));
    x->has_last = calloc(n, 1);
    x->share_self = calloc((size_t)nf + 1, sizeof(double));
    x->share_cum = calloc((size_t)nf + 1, sizeof(double));
    x->bself = calloc((size_t)nf + 1, sizeof(int64_t));
    x->bcum = calloc((size_t)nf + 1, sizeof(int64_t));
    x->tsum = calloc(n, sizeof *x->tsum);
    x->timed = calloc(n, 1);
    for (int s = 0; s < 2; s++)
        if (!x->slot_tot[s] || !x->slot_self[s] || !x->slot_cum[s] || !x->slot_has[s])
            return oom(x);
    if (!x->last_self || !x->last_cum || !x->has_last || !x->share_self || !x->share_cum ||
        !x->bself || !x->bcum || !x->tsum || !x->timed)
        return oom(x);
    struct sc_store_query q = sc_selection_query(x->s, x->tenant);
    q.from_ns = x->from;
    struct sc_store_read tr = {&q, 0, 1, 0};
    int rc = sc_store_read(x->st, &tr, timed_rows, x, x->err);
    int exact;
    int64_t w = grid_width(x->from, x->step, &exact);
    /* the profiles just before the range too: a capture there may spread into it */
    q.from_ns = sc_sub_sat(x->from, SC_STORE_TIMELINE_LOOKBACK_NS);
    struct sc_store_read ar = {&q, w, 0, 0};
    if (rc == 0)
        rc = sc_store_read(x->st, &ar, agg_rows, x, x->err);
    if (rc == 0)
        rc = advance(x, INT64_MAX);
    if (rc == SC_ENOTFOUND) { /* a type the store has never seen: no rows */
        x->err[0] = 0;
        rc = 0;
    }
    return rc;
}

void sc_fnseries_release(struct sc_fnseries *f)
{
    for (uint32_t g = 0; f->keys && g < f->ngroups; g++)
        free(f->keys[g]);
    free(f->keys);
    for (uint32_t k = 0; f->names && k < f->nfuncs; k++)
        free(f->names[k]);
    free(f->names);
    free(f->total);
    free(f->self);
    free(f->cum);
    memset(f, 0, sizeof *f);
}

/* ---- the timeline beside the rows ---- */

static void *tl_run(void *arg)
{
    struct tl_job *j = arg;
    sc_budget_adopt(j->budget);
    j->rc = sc_plan_timeline_series(j->st, j->tenant, j->s, j->step, j->group_by, &j->t, &j->cell,
                                    &j->line_of, j->err);
    sc_budget_adopt(NULL);
    return NULL;
}

/* Starts the timeline on its own thread (where one cannot start: here and now). */
static void tl_start(struct tl_job *j)
{
    j->budget = sc_budget_current();
    j->started = pthread_create(&j->thread, NULL, tl_run, j) == 0;
    if (!j->started)
        tl_run(j);
}

static void tl_wait(struct tl_job *j)
{
    if (j->started)
        pthread_join(j->thread, NULL);
    j->started = 0;
}

/* Waits for the timeline, frames the answer with it (steps, lines, unit, totals), checks its
 * size, and attributes what was queued. */
static int become_ready(struct fx *x)
{
    if (x->ready)
        return 0;
    struct tl_job *j = x->tl;
    struct sc_fnseries *f = x->f;
    tl_wait(j);
    if (j->rc) {
        snprintf(x->err, SC_ERR_LEN, "%s", j->err);
        return j->rc;
    }
    struct sc_timeline *t = &j->t;
    x->cell = j->cell;
    x->line_of = j->line_of;
    f->ngroups = t->nlines;
    f->group = t->group;
    f->metric = t->metric;
    memcpy(f->unit, t->unit, sizeof f->unit);
    f->total = t->values;
    t->values = NULL;
    if (t->group) {
        f->keys = t->keys;
        t->keys = NULL;
        t->nlines = 0;
    } else {
        f->keys = calloc((size_t)t->nlines + 1, sizeof *f->keys);
        if (!f->keys)
            return oom(x);
        for (uint32_t g = 0; g < t->nlines; g++)
            if (!(f->keys[g] = strdup(x->s->labels[g])))
                return oom(x);
    }
    uint64_t ncells = (uint64_t)f->ngroups * x->nf * f->nsteps;
    if (ncells > SC_TIMELINE_MAX_CELLS)
        return sc_errf(x->err, SC_ELIMIT,
                       "%u lines x %u functions x %u steps is more than the limit of %d values "
                       "(a larger step, fewer functions or a narrower query)",
                       f->ngroups, x->nf, f->nsteps, SC_TIMELINE_MAX_CELLS);
    f->self = malloc((size_t)(ncells + 1) * sizeof *f->self);
    f->cum = malloc((size_t)(ncells + 1) * sizeof *f->cum);
    if (!f->self || !f->cum)
        return oom(x);
    /* NaN where the line has no profile, else 0 until its series add their parts */
    for (uint64_t c = 0; c < ncells; c++) {
        uint64_t g = c / ((uint64_t)x->nf * f->nsteps), k = c % f->nsteps;
        f->self[c] = f->cum[c] = isnan(f->total[g * f->nsteps + k]) ? NAN : 0;
    }
    x->self = f->self;
    x->cum = f->cum;
    x->ready = 1;
    return x->queued ? replay(x) : 0;
}

int sc_plan_fnseries(struct sc_store *st, const char *tenant, const struct sc_selection *s,
                     int64_t step_ns, const char *group_by, const char *function,
                     uint32_t max_funcs, struct sc_fnseries *f, char *err)
{
    memset(f, 0, sizeof *f);
    int64_t from, step;
    uint32_t nsteps;
    int rc = sc_plan_timeline_steps(s, step_ns, &from, &step, &nsteps, err);
    if (rc)
        return rc;
    if (step < SC_NS_PER_S)
        return sc_errf(err, SC_EINVAL, "a step of at least 1 s (the store's finest bucket)");
    struct fx x;
    memset(&x, 0, sizeof x);
    x.st = st;
    x.tenant = tenant;
    x.s = s;
    x.err = err;
    x.from = f->from = from;
    x.step = f->step = step;
    x.nsteps = f->nsteps = nsteps;
    x.nser = s->n;
    x.target = function;
    x.f = f;
    char unit[64];
    if (s->type && sc_store_type_info(st, s->type, unit, &x.gauge))
        x.gauge = 0;
    sc_arena_init(&x.arena);
    x.names.arena = &x.arena;
    /* the timeline (a tenth to half of the time) runs beside the functions' reads */
    struct tl_job job;
    memset(&job, 0, sizeof job);
    job.st = st;
    job.tenant = tenant;
    job.s = s;
    job.step = step;
    job.group_by = group_by;
    x.tl = &job;
    tl_start(&job);
    if (function) {
        x.nf = 1;
        f->names = calloc(2, sizeof *f->names);
        if (!f->names || !(f->names[0] = strdup(function)))
            rc = oom(&x);
    } else if (s->n) {
        rc = rank(&x, max_funcs, &f->names);
    }
    f->nfuncs = f->names ? x.nf : 0;
    if (rc == 0 && (uint64_t)x.nser * x.nf > SC_TIMELINE_MAX_CELLS)
        rc = sc_errf(err, SC_ELIMIT,
                     "%u series x %u functions is more than the limit of %d values (fewer "
                     "functions or a narrower query)",
                     x.nser, x.nf, SC_TIMELINE_MAX_CELLS);
    /* an answer that may be over its limit is known to be before any row is read */
    if (rc == 0 && (uint64_t)x.nser * x.nf * nsteps > SC_TIMELINE_MAX_CELLS)
        rc = become_ready(&x);
    if (rc == 0 && s->n && x.nf)
        rc = read_rows(&x);
    if (rc == 0)
        rc = become_ready(&x);
    if (rc == 0 && x.ntimed)
        rc = flush_timed(&x);
    tl_wait(&job); /* after a failure too: the thread reads s and st */
    fx_release(&x);
    sc_timeline_release(&job.t);
    free(job.cell);
    free(job.line_of);
    if (rc) {
        sc_fnseries_release(f);
        return rc == SC_ENOMEM && (!err || !err[0]) ? sc_errf(err, rc, "out of memory") : rc;
    }
    return 0;
}

void sc_fnseries_write_json(const struct sc_fnseries *f, uint32_t fi, int self,
                            const struct sc_selection *s, struct sc_buf *out)
{
    /* the timeline's writer over one function's lines: a line is nsteps values apart */
    const double *v = self ? f->self : f->cum;
    size_t n = (size_t)f->ngroups * f->nsteps;
    double *line = malloc((n + 1) * sizeof *line);
    if (!line) {
        out->oom = 1;
        return;
    }
    for (uint32_t g = 0; g < f->ngroups; g++)
        memcpy(line + (size_t)g * f->nsteps, v + ((size_t)g * f->nfuncs + fi) * f->nsteps,
               f->nsteps * sizeof *line);
    struct sc_timeline t;
    memset(&t, 0, sizeof t);
    t.from = f->from;
    t.step = f->step;
    t.nsteps = f->nsteps;
    t.nlines = f->ngroups;
    t.keys = f->keys;
    t.group = f->group;
    t.values = line;
    t.metric = f->metric;
    memcpy(t.unit, f->unit, sizeof t.unit);
    struct sc_buf fields = SC_BUF_INIT;
    sc_buf_puts(&fields, "\"function\":\"");
    sc_buf_put_json_str(&fields, f->names[fi], strlen(f->names[fi]));
    sc_buf_printf(&fields, "\",\"value\":\"%s\",", self ? "self" : "total");
    if (fields.oom)
        out->oom = 1;
    else
        sc_timeline_write_json_with(&t, s, fields.data, out);
    sc_buf_release(&fields);
    free(line);
}
