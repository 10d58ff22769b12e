/* fnseries.c - functions over time (fnseries.h): each function's share of the timeline. Here
 * the plan and the split of each series' value; fnseries_rows.c reads the rows, and
 * fnseries_int.h holds what the two share.
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
 * has. With group_by that read is per series and each group ranks its own functions (a map
 * of totals per group and function, pairs that occur only): over a hundred services the
 * heaviest of all together are the heavy services' and a light service would have none.
 * The kept functions are then those any group keeps, a stack's signature holds them, and a
 * bucket's sums are spread over the functions of its series' group only (local_of). Then
 * most stacks hold several kept functions and have a signature of their own: spreading the
 * rows over every function of their stacks was most of a hundred services' time, so with
 * the self values alone asked for (watch) a signature is the leaf's function alone. The timeline is
 * made on a thread of its own meanwhile (it reads every profile's totals: about as long as the
 * rows' read over a month), and steps flushed before it is there wait in a queue (at most QUEUE_MAX
 * values, then the rows wait for it). A month of one service (bench/fnseries.sh) answers in about
 * the time of the plain timeline. Memory: the answer (each group's functions x steps,
 * SC_TIMELINE_MAX_CELLS), two steps of sums per series for its group's functions (series x those,
 * SC_TIMELINE_MAX_CELLS too), the queue, and the stacks. A bucket's sums are integers and buckets
 * come in time order, so the answer does not depend on the order a backend gives rows in (SQLite
 * and ClickHouse agree to the bit, as store_conformance checks). */
#include "query/fnseries.h"
#include "model/budget.h"
#include "model/buf.h"
#include "model/clock.h"
#include "model/error.h"
#include "query/fnseries_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The most the queue holds (doubles) before the rows wait for the timeline: 8 MiB. */
#define QUEUE_MAX (1u << 20)

/* ---- attributing a series' step ---- */

/* The functions of series i's group: how many. */
static inline uint32_t nfuncs_of(const struct fx *x, uint32_t i)
{
    return x->gfirst[x->line_of[i] + 1] - x->gfirst[x->line_of[i]];
}

/* Series i in step k (0-based) had sums tot, self, cum (has: it had rows): its timeline value
 * split by them (or by its latest composition), added to its group's lines; the composition
 * becomes its latest. k < 0: before the range, only remembered. */
static void attribute(struct fx *x, uint32_t i, int64_t k, int has, double tot, const double *self,
                      const double *cum)
{
    uint32_t nf = nfuncs_of(x, i);
    double *ls = x->last_self + x->soff[i], *lc = x->last_cum + x->soff[i];
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
    size_t base = x->gfirst[x->line_of[i]];
    for (uint32_t f = 0; f < nf; f++) {
        size_t o = (base + f) * x->nsteps + (size_t)k;
        x->self[o] += c * ls[f];
        if (x->cum)
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
    uint32_t nf = nfuncs_of(x, i);
    /* a record's values are a row of w doubles in qval, the first 1 + 2 nf of them used */
    size_t w = 1 + 2 * (size_t)x->mmax;
    const struct sc_grow_part cols[] = {SC_GROW_PART(x->qrec), {&x->qval, w * sizeof *x->qval}};
    if (sc_grow_arrays(&x->qcap, (uint64_t)x->nq + 1, -1, cols, 2))
        return fx_oom(x);
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
    uint32_t r = 0;
    size_t w = 1 + 2 * (size_t)x->mmax;
    for (uint32_t j = 0; j < x->queued; j++)
        for (uint32_t i = 0; i < x->nser; i++) {
            int rc = sc_budget_poll_every(i, x->err);
            if (rc)
                return rc;
            if (x->timed[i])
                continue;
            if (r < x->nq && x->qrec[r].j == j && x->qrec[r].i == i) {
                uint32_t nf = nfuncs_of(x, i);
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
    x->queued = 0;
    return 0;
}

/* Flushes window step j for every series that is not timed: attributed, or queued until
 * the timeline is there (waited for when the queue is full). */
static int flush(struct fx *x, uint32_t j)
{
    int s = j & 1;
    for (uint32_t i = 0; i < x->nser; i++) {
        int rc = sc_budget_poll_every(i, x->err);
        if (rc)
            return rc;
        if (x->timed[i])
            continue;
        size_t o = x->soff[i];
        uint32_t nf = nfuncs_of(x, i);
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
        if ((uint64_t)x->nq * (1 + 2 * (uint64_t)x->mmax) > QUEUE_MAX)
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
        rc = fx_bucket_sums(x, r, &tot);
    if (rc)
        return rc;
    /* the steps the bucket overlaps, in proportion (exact grids: one, whole) */
    int64_t len = r->until_ns - r->from_ns;
    uint32_t i = r->series, nf = nfuncs_of(x, i);
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
        size_t o = x->soff[i];
        x->slot_has[s][i] = 1;
        x->slot_tot[s][i] += w * (double)tot;
        for (uint32_t f = 0; f < nf; f++) {
            x->slot_self[s][o + f] += w * (double)x->bself[f];
            x->slot_cum[s][o + f] += w * (double)x->bcum[f];
        }
    }
    return 0;
}

/* The timed series' steps, in order. */
static int flush_timed(struct fx *x)
{
    for (uint32_t i = 0; i < x->nser; i++) {
        if (!x->tsum[i])
            continue;
        uint32_t nf = nfuncs_of(x, i);
        size_t width = 1 + 2 * (size_t)nf;
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
    sc_map64_release(&x->pair_of);
    free(x->pairs);
    free(x->line_of);
    free(x->soff);
    free(x->local_of);
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
    uint32_t n = x->nser, nf = x->mmax;
    size_t per = (size_t)x->nloc;
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
            return fx_oom(x);
    if (!x->last_self || !x->last_cum || !x->has_last || !x->share_self || !x->share_cum ||
        !x->bself || !x->bcum || !x->tsum || !x->timed)
        return fx_oom(x);
    struct sc_store_query q = sc_selection_query(x->s, x->tenant);
    q.from_ns = x->from;
    struct sc_store_read tr = {&q, 0, 1, 0};
    int rc = sc_store_read(x->st, &tr, fx_timed_rows, x, x->err);
    int exact;
    int64_t w = fx_grid_width(x->from, x->step, &exact);
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
    sc_strv_free(f->keys, f->ngroups);
    sc_strv_free(f->names, f->nfuncs);
    free(f->group_first);
    free(f->group_func);
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
    /* its lines are sc_plan_group's, as fx.line_of's */
    j->rc = sc_plan_timeline_series(j->st, j->tenant, j->s, j->step, j->group_by, &j->t, &j->cell,
                                    NULL, j->err);
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

/* The limit of the answer's values (groups' functions x steps), in its words. */
static int over_cells(struct fx *x)
{
    const struct sc_fnseries *f = x->f;
    uint64_t lines = x->gfirst[x->ngroups];
    if (lines * f->nsteps <= SC_TIMELINE_MAX_CELLS)
        return 0;
    if (!x->per_group)
        return sc_errf(x->err, SC_ELIMIT,
                       "%u lines x %u functions x %u steps is more than the limit of %d values "
                       "(a larger step, fewer functions or a narrower query)",
                       x->ngroups, x->nf, f->nsteps, SC_TIMELINE_MAX_CELLS);
    return sc_errf(x->err, SC_ELIMIT,
                   "%llu functions of %u lines x %u steps is more than the limit of %d values "
                   "(a larger step, fewer functions or a narrower query)",
                   (unsigned long long)lines, x->ngroups, f->nsteps, SC_TIMELINE_MAX_CELLS);
}

/* Waits for the timeline, frames the answer with it (unit, totals), checks its size, and
 * attributes what was queued. */
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
    if (t->nlines != x->ngroups || t->nsteps != f->nsteps)
        return sc_errf(x->err, SC_EINVAL, "the timeline has %u lines of %u steps, not %u of %u",
                       t->nlines, t->nsteps, x->ngroups, f->nsteps);
    x->cell = j->cell;
    f->metric = t->metric;
    memcpy(f->unit, t->unit, sizeof f->unit);
    f->total = t->values;
    t->values = NULL;
    int rc = over_cells(x);
    if (rc)
        return rc;
    uint64_t ncells = (uint64_t)x->gfirst[x->ngroups] * f->nsteps;
    f->self = malloc((size_t)(ncells + 1) * sizeof *f->self);
    f->cum = x->self_only ? NULL : malloc((size_t)(ncells + 1) * sizeof *f->cum);
    if (!f->self || (!x->self_only && !f->cum))
        return fx_oom(x);
    /* NaN where the line has no profile, else 0 until its series add their parts */
    for (uint32_t g = 0; g < x->ngroups; g++)
        for (uint32_t l = x->gfirst[g]; l < x->gfirst[g + 1]; l++)
            for (uint32_t k = 0; k < f->nsteps; k++) {
                size_t c = (size_t)l * f->nsteps + k;
                f->self[c] = isnan(f->total[(size_t)g * f->nsteps + k]) ? NAN : 0;
                if (f->cum)
                    f->cum[c] = f->self[c];
            }
    x->self = f->self;
    x->cum = f->cum;
    x->ready = 1;
    return x->queued ? replay(x) : 0;
}

/* The groups of the answer, as the timeline makes them (sc_plan_group by group_by, else a
 * series each): f's keys and ngroups, x's line_of. */
static int frame_groups(struct fx *x, const char *group)
{
    struct sc_fnseries *f = x->f;
    const struct sc_selection *s = x->s;
    x->line_of = malloc(((size_t)s->n + 1) * sizeof *x->line_of);
    f->keys = calloc((size_t)s->n + 1, sizeof *f->keys);
    if (!x->line_of || !f->keys)
        return fx_oom(x);
    if (group) {
        int rc = sc_plan_group(s, group, x->line_of, f->keys, &f->ngroups);
        x->ngroups = f->ngroups;
        return rc ? fx_oom(x) : 0;
    }
    for (uint32_t i = 0; i < s->n; i++) {
        x->line_of[i] = i;
        if (!(f->keys[i] = strdup(s->labels[i])))
            return fx_oom(x);
        x->ngroups = f->ngroups = i + 1;
    }
    return 0;
}

/* Every group with every function (no per-group choice): its lists. */
static int lists_all(struct fx *x)
{
    struct sc_fnseries *f = x->f;
    if ((uint64_t)x->nser * x->nf > SC_TIMELINE_MAX_CELLS)
        return sc_errf(x->err, SC_ELIMIT,
                       "%u series x %u functions is more than the limit of %d values (fewer "
                       "functions or a narrower query)",
                       x->nser, x->nf, SC_TIMELINE_MAX_CELLS);
    uint64_t n = (uint64_t)x->ngroups * x->nf; /* <= nser x nf */
    f->group_first = malloc(((size_t)x->ngroups + 1) * sizeof *f->group_first);
    f->group_func = malloc((size_t)(n + 1) * sizeof *f->group_func);
    if (!f->group_first || !f->group_func)
        return fx_oom(x);
    for (uint32_t g = 0; g <= x->ngroups; g++)
        f->group_first[g] = g * x->nf;
    for (uint64_t c = 0; c < n; c++)
        f->group_func[c] = (uint32_t)(c % x->nf);
    return 0;
}

/* Each series' part of the per-series arrays (its group's functions), within the limit, and
 * the map from kept index to a group's place. */
static int series_parts(struct fx *x)
{
    x->gfirst = x->f->group_first;
    x->gfunc = x->f->group_func;
    x->soff = malloc(((size_t)x->nser + 1) * sizeof *x->soff);
    x->local_of = malloc(((size_t)x->nf + 1) * sizeof *x->local_of);
    if (!x->soff || !x->local_of)
        return fx_oom(x);
    for (uint32_t k = 0; k < x->nf; k++)
        x->local_of[k] = NONE;
    x->cur_group = NONE;
    for (uint32_t g = 0; g < x->ngroups; g++)
        if (x->gfirst[g + 1] - x->gfirst[g] > x->mmax)
            x->mmax = x->gfirst[g + 1] - x->gfirst[g];
    x->nloc = 0;
    for (uint32_t i = 0; i < x->nser; i++) {
        x->soff[i] = (size_t)x->nloc;
        x->nloc += nfuncs_of(x, i);
    }
    x->soff[x->nser] = (size_t)x->nloc;
    if (x->nloc > SC_TIMELINE_MAX_CELLS)
        return sc_errf(x->err, SC_ELIMIT,
                       "%u series x their groups' functions is %llu values, more than the limit "
                       "of %d (fewer functions or a narrower query)",
                       x->nser, (unsigned long long)x->nloc, SC_TIMELINE_MAX_CELLS);
    return 0;
}

int sc_plan_fnseries(struct sc_store *st, const char *tenant, const struct sc_selection *s,
                     int64_t step_ns, const char *group_by, const char *function,
                     uint32_t max_funcs, int self_only, struct sc_fnseries *f, char *err)
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
    x.self_only = self_only;
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
    job.group_by = f->group = group_by && *group_by ? group_by : NULL;
    x.tl = &job;
    tl_start(&job);
    rc = frame_groups(&x, f->group);
    /* a group's own heaviest functions: a light service's are not crowded out by heavy
     * ones (over a hundred services, the whole selection's heaviest were the heavy ones') */
    x.per_group = f->group && !function;
    if (rc) {
        /* the groups could not be made */
    } else if (function) {
        x.nf = 1;
        f->names = calloc(2, sizeof *f->names);
        if (!f->names || !(f->names[0] = strdup(function)))
            rc = fx_oom(&x);
    } else if (s->n) {
        rc = fx_rank(&x, max_funcs, &f->names, &f->group_first, &f->group_func);
    }
    f->nfuncs = f->names ? x.nf : 0;
    if (rc == 0 && !f->group_first)
        rc = lists_all(&x);
    if (rc == 0)
        rc = series_parts(&x);
    /* an answer over its limit is known to be before any row is read (the timeline's own
     * failure, if any, said first) */
    if (rc == 0 && (uint64_t)x.gfirst[x.ngroups] * nsteps > SC_TIMELINE_MAX_CELLS)
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
    if (rc) {
        sc_fnseries_release(f);
        return rc == SC_ENOMEM && (!err || !err[0]) ? sc_errf(err, rc, "out of memory") : rc;
    }
    return 0;
}

const double *sc_fnseries_line(const struct sc_fnseries *f, const double *v, uint32_t g,
                               uint32_t fi)
{
    if (g >= f->ngroups || fi >= f->nfuncs || !v)
        return NULL;
    /* a group's list is ascending */
    uint32_t lo = f->group_first[g], hi = f->group_first[g + 1];
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (f->group_func[mid] < fi)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < f->group_first[g + 1] && f->group_func[lo] == fi ? v + (size_t)lo * f->nsteps
                                                                 : NULL;
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
    for (uint32_t g = 0; g < f->ngroups; g++) {
        const double *l = sc_fnseries_line(f, v, g, fi);
        for (uint32_t k = 0; k < f->nsteps; k++)
            line[(size_t)g * f->nsteps + k] = l ? l[k] : NAN;
    }
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
    const char *fields[] = {"function", f->names[fi], "value", self ? "self" : "total", NULL};
    sc_timeline_write_json_with(&t, s, fields, out);
    free(line);
}
