/* compare.c - the noise-aware comparison: per-function means over replicates, Welch's
 * t-test, Benjamini-Hochberg. The method is described in docs/compare.md. */
#include "query/compare.h"
#include "query/functions.h"
#include "model/error.h"
#include "query/stats.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One side's sums for one function: enough for means and variances, so memory is
 * O(functions), not O(functions x replicates). A replicate without the function adds
 * nothing, which is its zero. */
struct side_sums {
    double flat, flat2, flat_floor; /* sum of the metric, of its square, of its noise floor */
    double cum, cum2, cum_floor;
    double flat_count, cum_count; /* sum of value / count unit (sampling-noise test) */
};

struct fn {
    struct side_sums s[2];   /* the metric: shares, per second, or a gauge's value */
    struct side_sums alt[2]; /* per capture: what is compared when a replicate has no seconds
                                (one scale for every replicate, never a mix of two) */
    double pooled_share;     /* sum over all replicates of cum / total */
    struct sc_cmp_stat st;
};

struct sc_cmp {
    struct sc_cmp_opts o;
    struct sc_arena arena;
    struct sc_strtab names; /* function name -> index into fns */
    struct fn *fns;         /* [0, nfns) in use: one per name */
    uint32_t nfns, fns_cap;
    uint32_t n[2];         /* replicates per side */
    double total_count[2]; /* sum of totals / count unit */
    double seconds[2];     /* sum of seconds */
    int no_seconds[2];     /* some replicate had no seconds */
    int no_profiles[2];    /* some replicate had no profile count */
    enum sc_cmp_method method;
    uint32_t tested, grew, shrank, fresh, gone;
    char unit[64]; /* the sample unit of the first replicate */
    int finished;
};

int sc_cmp_new(const struct sc_cmp_opts *o, struct sc_cmp **out)
{
    struct sc_cmp *c = calloc(1, sizeof *c);
    if (!c)
        return SC_ENOMEM;
    struct sc_cmp_opts def = SC_CMP_OPTS_INIT;
    c->o = o ? *o : def;
    if (!(c->o.level > 0 && c->o.level < 1))
        c->o.level = def.level;
    if (!(c->o.min_share >= 0))
        c->o.min_share = 0;
    sc_arena_init(&c->arena);
    c->names.arena = &c->arena;
    *out = c;
    return 0;
}

void sc_cmp_free(struct sc_cmp *c)
{
    if (!c)
        return;
    sc_strtab_release(&c->names);
    sc_arena_release(&c->arena);
    free(c->fns);
    free(c);
}

/* The value one sample count stands for in column vi: the period when the column is
 * measured in the period's unit (CPU nanoseconds: 10 ms a sample), else 1. An
 * approximation for unsampled estimates such as Go's heap bytes (docs/compare.md). */
static double count_unit(const struct sc_profile *p, int vi)
{
    if (p->period <= 0 || !p->period_type.unit)
        return 1;
    struct sc_str a = sc_profile_str(p, p->sample_types[vi].unit);
    struct sc_str b = sc_profile_str(p, p->period_type.unit);
    if (a.len != b.len || memcmp(a.ptr, b.ptr, a.len))
        return 1;
    return (double)p->period;
}

/* One replicate's flat and cum values of a function into a side's sums, at one scale. */
static void accumulate(struct side_sums *s, double fl, double cu, double scale, double unit,
                       double total, int normalize)
{
    double mf = fl * scale, mc = cu * scale;
    s->flat += mf;
    s->flat2 += mf * mf;
    s->cum += mc;
    s->cum2 += mc * mc;
    /* sampling noise of the metric: Poisson in counts, binomial for shares */
    s->flat_floor += unit * fl * scale * scale * (normalize ? 1 - fl / total : 1);
    s->cum_floor += unit * cu * scale * scale * (normalize ? 1 - cu / total : 1);
    s->flat_count += fl / unit;
    s->cum_count += cu / unit;
}

int sc_cmp_add(struct sc_cmp *c, int side, const struct sc_profile *p, int vi, double seconds,
               double profiles, char *err)
{
    if (c->finished || side < 0 || side > 1)
        return sc_errf(err, SC_EINVAL, "comparison already finished or bad side");
    if (vi < 0 || (uint32_t)vi >= p->nsample_types)
        return sc_errf(err, SC_EINVAL, "sample index out of range");
    struct sc_top t;
    int rc = sc_top_compute(p, vi, &t, err);
    if (rc) {
        sc_top_release(&t);
        return rc;
    }
    double total = (double)t.total;
    if (c->o.normalize && !(total > 0)) {
        /* no shares in an empty replicate: it tells nothing */
        sc_top_release(&t);
        return 0;
    }
    if (!c->unit[0]) {
        struct sc_str u = sc_profile_str(p, p->sample_types[vi].unit);
        snprintf(c->unit, sizeof c->unit, "%.*s", (int)(u.len < 63 ? u.len : 63),
                 u.ptr ? u.ptr : "");
    }
    double unit = count_unit(p, vi);
    double alt = c->o.normalize ? 1 / total : profiles > 0 ? 1 / profiles : 1;
    double scale = c->o.normalize ? 1 / total : seconds > 0 ? 1 / seconds : alt;
    for (uint32_t i = 0; i < t.n && rc == 0; i++) {
        const struct sc_top_row *r = &t.rows[i];
        int64_t id = sc_strtab_intern(&c->names, r->name.len ? r->name.ptr : "", r->name.len);
        if (id < 0 || sc_grow_array(&c->fns, &c->fns_cap, (uint64_t)id + 1, sizeof *c->fns)) {
            rc = sc_errf(err, SC_ENOMEM, "out of memory");
            break;
        }
        if ((uint32_t)id == c->names.n - 1 && (uint32_t)id >= c->nfns) {
            memset(&c->fns[id], 0, sizeof *c->fns);
            c->nfns = (uint32_t)id + 1;
        }
        struct fn *f = &c->fns[id];
        double fl = fabs((double)r->flat), cu = fabs((double)r->cum);
        accumulate(&f->s[side], fl, cu, scale, unit, total, c->o.normalize);
        accumulate(&f->alt[side], fl, cu, alt, unit, total, c->o.normalize);
        if (total > 0)
            f->pooled_share += cu / total;
    }
    sc_top_release(&t);
    if (rc)
        return rc;
    c->n[side]++;
    c->total_count[side] += total / unit;
    c->seconds[side] += seconds;
    if (!(seconds > 0))
        c->no_seconds[side] = 1;
    if (!(profiles > 0))
        c->no_profiles[side] = 1;
    return 0;
}

/* Mean and variance (at least the sampling-noise floor) of n replicates' sums. */
static void moments(double sum, double sum2, double floor, uint32_t n, double *mean, double *var)
{
    *mean = n ? sum / n : 0;
    double v = n > 1 ? (sum2 - n * *mean * *mean) / (n - 1) : 0;
    if (!(v > 0))
        v = 0;
    double fl = n ? floor / n : 0;
    *var = v > fl ? v : fl;
}

/* Equal, NaN included: a zero total makes flat's and cum's sums NaN alike, and a leaf-only
 * function is still one test then. */
static int same_value(double a, double b)
{
    return a == b || (isnan(a) && isnan(b));
}

/* Whether one side's cum sums are its flat ones (the function only ever is a leaf). */
static int cum_is_flat(const struct side_sums *s)
{
    return same_value(s->flat, s->cum) && same_value(s->flat2, s->cum2) &&
           same_value(s->flat_floor, s->cum_floor);
}

/* Tests one measure (flat or cum) of a function; fills the relative change and its
 * interval, returns the p-value (-1 when both sides are zero: no test). */
static double test_one(const struct sc_cmp *c, const struct side_sums *s, int cum, double *m0out,
                       double *m1out, double *pct, double *lo, double *hi)
{
    uint32_t n0 = c->n[0], n1 = c->n[1];
    double m0, v0, m1, v1;
    if (cum) {
        moments(s[0].cum, s[0].cum2, s[0].cum_floor, n0, &m0, &v0);
        moments(s[1].cum, s[1].cum2, s[1].cum_floor, n1, &m1, &v1);
    } else {
        moments(s[0].flat, s[0].flat2, s[0].flat_floor, n0, &m0, &v0);
        moments(s[1].flat, s[1].flat2, s[1].flat_floor, n1, &m1, &v1);
    }
    *m0out = m0;
    *m1out = m1;
    *pct = m0 > 0 ? 100 * (m1 / m0 - 1) : m1 > 0 ? INFINITY : NAN;
    *lo = *hi = NAN;
    if (m0 == 0 && m1 == 0)
        return -1;
    /* the same mean on both sides is no change, whatever the spread says: the means are
     * what the table beside the verdict shows */
    if (m0 == m1) {
        if (m0 > 0)
            *lo = *hi = 0;
        return 1;
    }
    double p, se, half;
    if (c->method == SC_CMP_SAMPLING) {
        double k = cum ? s[1].cum_count : s[1].flat_count;
        double n = k + (cum ? s[0].cum_count : s[0].flat_count);
        double p0;
        if (c->o.normalize)
            p0 = c->total_count[1] / (c->total_count[0] + c->total_count[1]);
        else if (!c->no_seconds[0] && !c->no_seconds[1])
            p0 = c->seconds[1] / (c->seconds[0] + c->seconds[1]);
        else
            p0 = 0.5;
        p = sc_binom_p2(round(k), round(n), p0);
        se = sqrt(v0 + v1);
        half = 1.959963984540054 * se;
    } else {
        double df;
        p = sc_welch(m0, v0, n0, m1, v1, n1, &se, &df);
        /* the same constant on both sides (main's total share is always 1): no test */
        if (!(se > 0) && m0 == m1)
            p = -1;
        half = se > 0 ? sc_t_quantile2(0.05, df) * se : 0;
    }
    if (m0 > 0) {
        *lo = 100 * (m1 - m0 - half) / m0;
        *hi = 100 * (m1 - m0 + half) / m0;
    }
    return p;
}

int sc_cmp_finish(struct sc_cmp *c, char *err)
{
    if (c->finished)
        return 0;
    c->finished = 1;
    uint32_t n0 = c->n[0], n1 = c->n[1], nf = c->names.n;
    if (n0 == 0 || n1 == 0)
        c->method = SC_CMP_NONE;
    else if (n0 >= 2 && n1 >= 2)
        c->method = SC_CMP_REPLICATES;
    else if (n0 + n1 >= 3)
        c->method = SC_CMP_ONE_SIDE;
    else
        c->method = SC_CMP_SAMPLING;
    double *q = malloc(((size_t)nf * 2 + 1) * sizeof *q);
    if (!q)
        return sc_errf(err, SC_ENOMEM, "out of memory");
    /* per second only when every replicate of both sides knows its seconds */
    int per_second = !c->no_seconds[0] && !c->no_seconds[1];
    for (uint32_t i = 0; i < nf; i++) {
        struct fn *f = &c->fns[i];
        const struct side_sums *s = per_second ? f->s : f->alt;
        struct sc_cmp_stat *st = &f->st;
        double pooled = (n0 + n1) ? f->pooled_share / (n0 + n1) : 0;
        st->tested = c->method != SC_CMP_NONE && pooled >= c->o.min_share;
        st->flat_p =
            test_one(c, s, 0, &st->base_flat, &st->flat, &st->flat_pct, &st->flat_lo, &st->flat_hi);
        st->cum_p =
            test_one(c, s, 1, &st->base_cum, &st->cum, &st->cum_pct, &st->cum_lo, &st->cum_hi);
        if (!st->tested)
            st->flat_p = st->cum_p = -1;
        /* present on one side only: news whatever its spread */
        st->presence = c->method == SC_CMP_NONE        ? 0
                       : s[0].cum == 0 && s[1].cum > 0 ? 1
                       : s[1].cum == 0 && s[0].cum > 0 ? -1
                                                       : 0;
        c->fresh += st->presence > 0;
        c->gone += st->presence < 0;
        /* a function that only ever is a leaf has cum == flat in every replicate: one
         * test, not two (two would double the count Benjamini-Hochberg divides by) */
        int same = cum_is_flat(&s[0]) && cum_is_flat(&s[1]);
        q[2 * (size_t)i] = st->flat_p;
        q[2 * (size_t)i + 1] = same ? -1 : st->cum_p;
        c->tested += st->tested;
    }
    if (sc_bh_adjust(q, nf * 2)) {
        free(q);
        return sc_errf(err, SC_ENOMEM, "out of memory");
    }
    for (uint32_t i = 0; i < nf; i++) {
        struct sc_cmp_stat *st = &c->fns[i].st;
        st->flat_q = q[2 * (size_t)i];
        st->cum_q = q[2 * (size_t)i + 1] >= 0 || st->cum_p < 0 ? q[2 * (size_t)i + 1] : st->flat_q;
        int fs = st->flat_q >= 0 && st->flat_q < c->o.level;
        int cs = st->cum_q >= 0 && st->cum_q < c->o.level;
        st->significant = fs || cs;
        if (st->significant) {
            /* the direction of the more certain of the two changes */
            int use_cum = cs && (!fs || st->cum_q < st->flat_q);
            double d = use_cum ? st->cum - st->base_cum : st->flat - st->base_flat;
            st->direction = d > 0 ? 1 : d < 0 ? -1 : 0;
            c->grew += st->direction > 0;
            c->shrank += st->direction < 0;
        }
    }
    free(q);
    return 0;
}

const struct sc_cmp_stat *sc_cmp_lookup(const struct sc_cmp *c, const char *name, size_t len)
{
    if (!c->finished)
        return NULL;
    int64_t id = sc_strtab_find(&c->names, name ? name : "", len);
    return id >= 0 ? &c->fns[id].st : NULL;
}

void sc_cmp_summarize(const struct sc_cmp *c, struct sc_cmp_summary *s)
{
    memset(s, 0, sizeof *s);
    s->base_n = c->n[0];
    s->n = c->n[1];
    s->functions = c->names.n;
    s->tested = c->tested;
    s->grew = c->grew;
    s->shrank = c->shrank;
    s->fresh = c->fresh;
    s->gone = c->gone;
    s->method = c->method;
    s->normalized = c->o.normalize;
    /* gauges come with neither seconds nor profiles: their value is their average */
    int known = !c->no_seconds[0] && !c->no_seconds[1];
    int gauge = !known && (c->no_profiles[0] || c->no_profiles[1]);
    s->metric_id = sc_metric_of(gauge, known, c->o.normalize);
    s->metric = sc_metric_name(s->metric_id);
    sc_metric_unit(s->metric_id, c->unit, s->metric_unit, sizeof s->metric_unit);
    s->level = c->o.level;
}

const char *sc_cmp_status(const struct sc_cmp_stat *st)
{
    if (!st)
        return "untested";
    if (st->presence)
        return st->presence > 0 ? "new" : "gone";
    if (st->significant)
        return st->direction > 0 ? "grew" : st->direction < 0 ? "shrank" : "noise";
    return st->tested ? "noise" : "untested";
}

const char *sc_cmp_method_name(enum sc_cmp_method m)
{
    switch (m) {
    case SC_CMP_REPLICATES:
        return "replicates";
    case SC_CMP_ONE_SIDE:
        return "replicates-one-side";
    case SC_CMP_SAMPLING:
        return "sampling";
    default:
        return "none";
    }
}

const char *sc_cmp_method_text(enum sc_cmp_method m)
{
    switch (m) {
    case SC_CMP_REPLICATES:
        return "Welch's t-test on the spread between the profiles of each side, "
               "Benjamini-Hochberg over all functions";
    case SC_CMP_ONE_SIDE:
        return "one profile on one side: its spread is assumed to be the other side's "
               "(t-test), Benjamini-Hochberg over all functions";
    case SC_CMP_SAMPLING:
        return "one profile a side: sampling noise only (binomial test on sample counts); "
               "real captures vary more, so add profiles to each side for a sound verdict";
    default:
        return "a side has no profiles: nothing was tested";
    }
}
