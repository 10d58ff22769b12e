/* read.c - merges, buckets and timestamped samples, built on a backend's read and resolve. */
#include "store/store_int.h"
#include "model/budget.h"
#include "model/error.h"
#include "model/hash.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- (stack -> value) sums, or timed rows ---- */

struct acc {
    uint64_t max;        /* distinct stacks allowed (0: any); past it acc_add says SC_ELIMIT */
    struct sc_map64 map; /* stack -> index (aggregated only) */
    uint64_t *stacks;
    int64_t *vals, *times;
    uint32_t n, cap;
};

static void acc_release(struct acc *a)
{
    sc_map64_release(&a->map);
    free(a->stacks);
    free(a->vals);
    free(a->times);
    memset(a, 0, sizeof *a);
}

static int acc_grow(struct acc *a, int timed)
{
    return sc_rows_reserve(&a->stacks, &a->vals, timed ? &a->times : NULL, a->n, &a->cap);
}

/* Adds v to stack's sum. */
static int acc_add(struct acc *a, uint64_t stack, int64_t v)
{
    if (acc_grow(a, 0))
        return SC_ENOMEM;
    int added;
    uint32_t *slot = sc_map64_upsert(&a->map, stack, a->n, &added);
    if (!slot)
        return SC_ENOMEM;
    if (added) {
        if (a->max && a->n >= a->max)
            return SC_ELIMIT;
        a->stacks[a->n] = stack;
        a->vals[a->n++] = 0;
    }
    a->vals[*slot] = sc_add_sat(a->vals[*slot], v);
    return 0;
}

static int acc_push(struct acc *a, uint64_t stack, int64_t v, int64_t t)
{
    if (a->max && a->n >= a->max)
        return SC_ELIMIT;
    int rc = acc_grow(a, 1);
    if (rc)
        return rc;
    a->stacks[a->n] = stack;
    a->vals[a->n] = v;
    a->times[a->n++] = t;
    return 0;
}

/* Drops the stacks that summed to zero; returns how many are left. */
static uint32_t acc_compact(struct acc *a)
{
    uint32_t m = 0;
    for (uint32_t i = 0; i < a->n; i++)
        if (a->vals[i]) {
            a->stacks[m] = a->stacks[i];
            a->vals[m++] = a->vals[i];
        }
    return m;
}

/* A read's failure with the words the caller shows when the backend gave none. */
static int read_fail(const struct sc_store *s, int rc, char *err)
{
    if (!rc || (err && err[0]))
        return rc;
    if (rc == SC_ELIMIT && sc_budget_poll(err))
        return rc; /* the query's deadline or client, seen by a callback */
    if (rc == SC_ELIMIT)
        return sc_errf(err, rc,
                       "the query's answer holds more than %llu distinct stacks (the server's "
                       "server.max_read_rows): narrow the time range or the selection",
                       (unsigned long long)s->opts.max_read_rows);
    if (rc == SC_ENOMEM)
        return sc_errf(err, rc, "out of memory");
    return rc;
}

/* ---- building a profile from rows ---- */

struct build {
    struct sc_profile *p;
    struct sc_map64 fmap, lmap, mmap; /* function; run of frames -> location; binary */
    uint32_t *locs, lcap;
    const int64_t *vals, *times;
    uint32_t i;
};

static int64_t mapping_of(struct build *b, const char *binary)
{
    struct sc_profile *p = b->p;
    uint64_t key = sc_hash64(binary, strlen(binary));
    int added;
    uint32_t *ms = sc_map64_upsert(&b->mmap, key, p->nmappings, &added);
    if (!ms)
        return SC_ENOMEM;
    if (added) {
        uint32_t idx = p->nmappings;
        if (sc_grow_array(&p->mappings, &p->mappings_cap, (uint64_t)idx + 1, sizeof *p->mappings))
            return SC_ENOMEM;
        int64_t name = sc_profile_intern(p, binary, strlen(binary));
        if (name < 0)
            return name;
        memset(&p->mappings[idx], 0, sizeof *p->mappings);
        p->mappings[idx].id = idx + 1;
        p->mappings[idx].filename = (uint32_t)name;
        p->mappings[idx].has_functions = 1;
        p->nmappings++;
        return idx;
    }
    return *ms;
}

static int64_t function_of(struct build *b, const struct sc_store_frame *f)
{
    struct sc_profile *p = b->p;
    uint64_t key =
        sc_hash64(f->function, strlen(f->function)) ^ (sc_hash64(f->file, strlen(f->file)) * 31);
    int added;
    uint32_t *fs = sc_map64_upsert(&b->fmap, key, p->nfunctions, &added);
    if (!fs)
        return SC_ENOMEM;
    if (!added)
        return *fs;
    int64_t nm = sc_profile_intern(p, f->function, strlen(f->function));
    int64_t fl = sc_profile_intern(p, f->file, strlen(f->file));
    if (nm < 0 || fl < 0)
        return SC_ENOMEM;
    return sc_profile_add_function(p, (uint32_t)nm, (uint32_t)fl);
}

/* A location whose lines are frames j..k (innermost first). */
static int64_t location_of(struct build *b, const struct sc_store_frame *fr, uint32_t j, uint32_t k)
{
    struct sc_profile *p = b->p;
    uint64_t key = 0;
    for (uint32_t x = j; x <= k; x++)
        key = sc_hash_combine(key, fr[x].key);
    int added;
    uint32_t *ls = sc_map64_upsert(&b->lmap, key, p->nlocations, &added);
    if (!ls)
        return SC_ENOMEM;
    if (!added)
        return *ls;
    int64_t li = -1;
    for (uint32_t x = j; x <= k; x++) {
        int64_t fn = function_of(b, &fr[x]);
        if (fn < 0)
            return fn;
        if (x == j) {
            li = sc_profile_add_simple_location(p, (uint32_t)fn);
            if (li < 0)
                return li;
            p->lines[p->locations[li].line_start].line = fr[x].line;
            if (*fr[x].binary) {
                int64_t m = mapping_of(b, fr[x].binary);
                if (m < 0)
                    return m;
                p->locations[li].mapping = (uint32_t)m + 1;
            }
        } else {
            /* a further line of the location just made (its lines are last) */
            if (sc_grow_array(&p->lines, &p->lines_cap, (uint64_t)p->nlines + 1, sizeof *p->lines))
                return SC_ENOMEM;
            p->lines[p->nlines++] = (struct sc_line){(uint32_t)fn + 1, fr[x].line, 0};
            p->locations[li].nlines++;
        }
    }
    return li;
}

static int build_stack(void *ctx, uint64_t stack, const struct sc_store_frame *fr, uint32_t nf)
{
    (void)stack;
    struct build *b = ctx;
    if (sc_grow_array(&b->locs, &b->lcap, nf, sizeof *b->locs))
        return SC_ENOMEM;
    /* frames leaf first; a run of inlined frames ends at a frame that is not */
    uint32_t nl = 0;
    for (uint32_t j = 0; j < nf;) {
        uint32_t k = j;
        while (k < nf && fr[k].inlined)
            k++;
        if (k == nf)
            k = nf - 1;
        int64_t li = location_of(b, fr, j, k);
        if (li < 0)
            return (int)li;
        b->locs[nl++] = (uint32_t)li;
        j = k + 1;
    }
    int64_t si =
        sc_profile_add_sample(b->p, b->locs, nl, &b->vals[b->i], b->times ? b->times[b->i] : 0);
    b->i++;
    return si < 0 ? (int)si : 0;
}

/* A new profile of type (one sample type, the type's unit) with one sample per row. */
static int build_profile(struct sc_store *s, const char *type, const char *unit,
                         const uint64_t *stacks, const int64_t *vals, const int64_t *times,
                         uint32_t n, struct sc_profile **out, char *err)
{
    *out = NULL;
    struct build b;
    memset(&b, 0, sizeof b);
    b.vals = vals;
    b.times = times;
    b.p = sc_profile_new();
    if (!b.p)
        return sc_errf(err, SC_ENOMEM, "out of memory");
    const char *colon = strchr(type, ':');
    int rc = sc_profile_add_sample_type(b.p, colon ? colon + 1 : type, unit);
    if (rc >= 0) {
        b.p->default_sample_type = b.p->sample_types[0].type;
        rc = n ? sc_store_resolve(s, stacks, n, build_stack, &b, err) : 0;
    }
    free(b.locs);
    sc_map64_release(&b.fmap);
    sc_map64_release(&b.lmap);
    sc_map64_release(&b.mmap);
    if (rc < 0) {
        sc_profile_free(b.p);
        if ((rc == SC_EFORMAT || rc == SC_ELIMIT) && err && err[0])
            return rc; /* a damaged store, a query past its deadline: said already */
        return sc_errf(err, rc, "building the merged profile: %s", sc_strerror(rc));
    }
    *out = b.p;
    return 0;
}

/* ---- merge ---- */

struct merge_ctx {
    struct acc total;
    int gauge;
};

static int merge_rows(void *ctx, const struct sc_store_rows *r)
{
    struct merge_ctx *m = ctx;
    for (uint32_t i = 0; i < r->n; i++) {
        int64_t v = m->gauge ? sc_avg_round(r->values[i], r->captures) : r->values[i];
        int e = v ? acc_add(&m->total, r->stacks[i], v) : 0;
        if (!e) /* millions of rows may come at once (read_fail words a stop) */
            e = sc_budget_poll_every(i, NULL);
        if (e)
            return e;
    }
    return 0;
}

/* merge_rows that also counts the profiles read */
struct profile_seen {
    struct merge_ctx *m;
    int64_t profiles;
};

static int seen_rows(void *ctx, const struct sc_store_rows *r)
{
    struct profile_seen *x = ctx;
    x->profiles += r->captures;
    return merge_rows(x->m, r);
}

/* Timed profiles count by sample time: a series with timed samples in the range is read
 * from those (the aggregated read would take its timed profiles whole, by their start),
 * the others as they are aggregated. Series are either timed (perf script) or not. */
struct exact_ctx {
    struct merge_ctx *m;
    uint8_t *timed; /* per query series: it had timed rows in range */
};

static int exact_timed_rows(void *ctx, const struct sc_store_rows *r)
{
    struct exact_ctx *x = ctx;
    x->timed[r->series] = 1;
    for (uint32_t i = 0; i < r->n; i++) {
        int e = r->values[i] ? acc_add(&x->m->total, r->stacks[i], r->values[i]) : 0;
        if (e)
            return e;
    }
    return 0;
}

static int exact_agg_rows(void *ctx, const struct sc_store_rows *r)
{
    struct exact_ctx *x = ctx;
    return r->series != UINT32_MAX && x->timed[r->series] ? 0 : merge_rows(x->m, r);
}

int sc_store_merge(struct sc_store *s, const struct sc_store_query *q, struct sc_profile **out,
                   char *err)
{
    *out = NULL;
    char unit[64];
    struct merge_ctx m;
    memset(&m, 0, sizeof m);
    m.total.max = s->opts.max_read_rows;
    if (sc_store_type_info(s, q->type, unit, &m.gauge))
        return sc_errf(err, SC_ENOTFOUND, "no profiles of type '%s'", q->type ? q->type : "");
    struct exact_ctx x = {&m, calloc((size_t)q->nseries + 1, 1)};
    if (!x.timed)
        return sc_errf(err, SC_ENOMEM, "out of memory");
    struct sc_store_read tr = {q, 0, 1, 0}, r = {q, 0, 0, !m.gauge};
    int rc = sc_store_read(s, &tr, exact_timed_rows, &x, err);
    /* rows of all series summed, unless some are to be left out */
    for (uint32_t i = 0; i < q->nseries && r.sum_series; i++)
        r.sum_series = !x.timed[i];
    if (rc == 0)
        rc = sc_store_read(s, &r, exact_agg_rows, &x, err);
    rc = read_fail(s, rc, err);
    if (rc == 0) {
        uint32_t n = acc_compact(&m.total);
        rc = build_profile(s, q->type, unit, m.total.stacks, m.total.vals, NULL, n, out, err);
    }
    free(x.timed);
    acc_release(&m.total);
    return rc;
}

/* ---- buckets ---- */

struct bucket_ctx {
    struct sc_store *s;
    const struct sc_store_query *q;
    const char *unit;
    struct acc total;
    struct sc_store_bucket b; /* the bucket being summed */
    int open;
    sc_store_bucket_cb cb;
    void *ctx;
    int stopped;
    char *err;
};

static int flush_bucket(struct bucket_ctx *x)
{
    if (!x->open)
        return 0;
    x->open = 0;
    struct sc_profile *p = NULL;
    uint32_t n = acc_compact(&x->total);
    int rc = build_profile(x->s, x->q->type, x->unit, x->total.stacks, x->total.vals, NULL, n, &p,
                           x->err);
    acc_release(&x->total);
    if (rc)
        return rc;
    x->stopped = x->cb(x->ctx, &x->b, p);
    sc_profile_free(p);
    return x->stopped;
}

static int bucket_rows(void *ctx, const struct sc_store_rows *r)
{
    struct bucket_ctx *x = ctx;
    if (x->open && r->from_ns != x->b.from_ns) {
        int rc = flush_bucket(x);
        if (rc)
            return rc;
    }
    if (!x->open) {
        x->open = 1;
        x->b.from_ns = r->from_ns;
        x->b.until_ns = r->until_ns;
        x->b.captures = x->b.covered_ns = 0;
        x->b.series = 0;
    }
    x->b.captures += r->captures;
    x->b.covered_ns += r->covered_ns;
    x->b.series += r->nseries;
    for (uint32_t i = 0; i < r->n; i++) {
        int64_t v = x->b.gauge ? sc_avg_round(r->values[i], r->captures) : r->values[i];
        int e = v ? acc_add(&x->total, r->stacks[i], v) : 0;
        if (!e)
            e = sc_budget_poll_every(i, NULL);
        if (e)
            return e;
    }
    return 0;
}

int sc_store_merge_buckets(struct sc_store *s, const struct sc_store_query *q, int64_t bucket_ns,
                           sc_store_bucket_cb cb, void *ctx, char *err)
{
    if (bucket_ns < 1000000000LL || q->until_ns <= q->from_ns)
        return sc_errf(err, SC_EINVAL, "bad bucket or range");
    char unit[64];
    struct bucket_ctx x;
    memset(&x, 0, sizeof x);
    x.total.max = s->opts.max_read_rows;
    if (sc_store_type_info(s, q->type, unit, &x.b.gauge))
        return sc_errf(err, SC_ENOTFOUND, "no profiles of type '%s'", q->type ? q->type : "");
    x.s = s;
    x.q = q;
    x.unit = unit;
    x.cb = cb;
    x.ctx = ctx;
    x.err = err;
    struct sc_store_read r = {q, bucket_ns, 0, !x.b.gauge};
    int rc = sc_store_read(s, &r, bucket_rows, &x, err);
    if (rc == 0 || (rc > 0 && x.stopped))
        rc = x.stopped ? 0 : flush_bucket(&x);
    if (rc > 0)
        rc = 0; /* the caller stopped */
    rc = read_fail(s, rc, err);
    acc_release(&x.total);
    return rc;
}

/* ---- timed samples ---- */

struct timed_ctx {
    struct acc rows;
    int64_t from, until;
};

static int timed_rows(void *ctx, const struct sc_store_rows *r)
{
    struct timed_ctx *t = ctx;
    for (uint32_t i = 0; i < r->n; i++) {
        if (!r->values[i] || r->times[i] < t->from || r->times[i] >= t->until)
            continue;
        int e = acc_push(&t->rows, r->stacks[i], r->values[i], r->times[i]);
        if (e)
            return e;
    }
    return 0;
}

int sc_store_timed(struct sc_store *s, const struct sc_store_query *q, struct sc_profile **out,
                   char *err)
{
    *out = NULL;
    char unit[64];
    int gauge;
    if (sc_store_type_info(s, q->type, unit, &gauge))
        return sc_errf(err, SC_ENOTFOUND, "no profiles of type '%s'", q->type ? q->type : "");
    struct timed_ctx t;
    memset(&t, 0, sizeof t);
    t.rows.max = s->opts.max_read_rows;
    t.from = q->from_ns;
    t.until = q->until_ns;
    struct sc_store_read r = {q, 0, 1, 0};
    int rc = sc_store_read(s, &r, timed_rows, &t, err);
    rc = read_fail(s, rc, err);
    if (rc == 0)
        rc = build_profile(s, q->type, unit, t.rows.stacks, t.rows.vals, t.rows.times, t.rows.n,
                           out, err);
    acc_release(&t.rows);
    return rc;
}

/* ---- timed samples, a block at a time ---- */

/* Each timed block's rows in range as a small profile of its distinct stacks. */
struct each_ctx {
    struct sc_store *s;
    const char *type, *unit;
    struct sc_map64 distinct; /* stack -> sample */
    uint64_t *dstacks;
    int64_t *dvals;
    uint32_t *sample;
    uint32_t nd, dcap, vcap, scap;
    sc_store_timed_cb cb;
    void *ctx;
    char *err;
};

static int each_rows(void *ctx, const struct sc_store_rows *r)
{
    struct each_ctx *x = ctx;
    sc_map64_release(&x->distinct);
    sc_map64_init(&x->distinct);
    x->nd = 0;
    if (sc_grow_array(&x->sample, &x->scap, r->n, sizeof *x->sample))
        return SC_ENOMEM;
    for (uint32_t i = 0; i < r->n; i++) {
        int added;
        uint32_t *slot = sc_map64_upsert(&x->distinct, r->stacks[i], x->nd, &added);
        if (!slot)
            return SC_ENOMEM;
        if (added) {
            if (sc_grow_array(&x->dstacks, &x->dcap, (uint64_t)x->nd + 1, sizeof *x->dstacks) ||
                sc_grow_array(&x->dvals, &x->vcap, (uint64_t)x->nd + 1, sizeof *x->dvals))
                return SC_ENOMEM;
            x->dstacks[x->nd] = r->stacks[i];
            x->dvals[x->nd++] = 0;
        }
        x->dvals[*slot] = sc_add_sat(x->dvals[*slot], r->values[i]);
        x->sample[i] = *slot;
    }
    struct sc_profile *p = NULL;
    int rc = build_profile(x->s, x->type, x->unit, x->dstacks, x->dvals, NULL, x->nd, &p, x->err);
    if (rc)
        return rc;
    struct sc_store_timed_block b = {p, r->n, x->sample, r->times, r->values};
    rc = x->cb(x->ctx, &b);
    sc_profile_free(p);
    return rc;
}

int sc_store_timed_each(struct sc_store *s, const struct sc_store_query *q, sc_store_timed_cb cb,
                        void *ctx, char *err)
{
    char unit[64];
    int gauge;
    if (sc_store_type_info(s, q->type, unit, &gauge))
        return sc_errf(err, SC_ENOTFOUND, "no profiles of type '%s'", q->type ? q->type : "");
    struct each_ctx x;
    memset(&x, 0, sizeof x);
    x.s = s;
    x.type = q->type;
    x.unit = unit;
    x.cb = cb;
    x.ctx = ctx;
    x.err = err;
    sc_map64_init(&x.distinct);
    /* the backend's timed read calls back once per stored profile */
    struct sc_store_read r = {q, 0, 1, 0};
    int rc = sc_store_read(s, &r, each_rows, &x, err);
    rc = read_fail(s, rc, err);
    sc_map64_release(&x.distinct);
    free(x.dstacks);
    free(x.dvals);
    free(x.sample);
    return rc;
}

/* ---- single profiles ---- */

int sc_store_profile_read(struct sc_store *s, uint64_t series, const char *type, int64_t time_ns,
                          struct sc_profile **out, char *err)
{
    *out = NULL;
    char unit[64];
    struct merge_ctx m;
    memset(&m, 0, sizeof m);
    m.total.max = s->opts.max_read_rows;
    if (sc_store_type_info(s, type, unit, &m.gauge))
        return sc_errf(err, SC_ENOTFOUND, "no profiles of type '%s'", type ? type : "");
    m.gauge = 0; /* one profile: nothing to average */
    /* the aggregated read of [t, t + 1 ns): the profiles that start at t, whole (a timed
     * read would cut them at their samples' times) */
    struct sc_store_query q = {NULL, &series, 1, type, time_ns, sc_add_sat(time_ns, 1), 1};
    struct sc_store_read r = {&q, 0, 0, 0};
    struct profile_seen seen = {&m, 0};
    int rc = sc_store_read(s, &r, seen_rows, &seen, err);
    rc = read_fail(s, rc, err);
    if (rc == 0 && !seen.profiles)
        rc = sc_errf(err, SC_ENOTFOUND, "no %s profile of this series at %lld ns", type,
                     (long long)time_ns);
    if (rc == 0) {
        uint32_t n = acc_compact(&m.total);
        rc = build_profile(s, type, unit, m.total.stacks, m.total.vals, NULL, n, out, err);
    }
    acc_release(&m.total);
    return rc;
}

int sc_store_profiles(struct sc_store *s, const struct sc_store_query *q, sc_store_profile_cb cb,
                      void *ctx, char *err)
{
    if (!s->ops->profiles)
        return sc_errf(err, SC_EUNSUPPORTED, "this store cannot list profiles");
    return s->ops->profiles(s, q, cb, ctx, err);
}
