/* changes.c - steps, trends, new and gone functions in per-step values, told from the noise
 * between steps (the method and its reasons: docs/changes.md).
 *
 * Each function's steps with a profile (value not NaN) are its replicates. Three tests,
 * each a permutation test (its p-value holds when the steps are exchangeable, whatever the
 * shape of the noise):
 *   step   the largest two-sample z over the split points (MIN_SEG steps a side at least)
 *          of Huber scores of the log values, its p-value for the maximum over every split
 *          (sc_split_max_p);
 *   trend  Mann-Kendall's S (pairs of steps that rise minus pairs that fall);
 *   absent the longest run of zeros at either end: P(a run that long | that many zeros).
 * The function's p-value is the smallest of them times their number (Bonferroni), so it is
 * one test of the batch; Benjamini-Hochberg runs over all of them in sc_changes_run. The
 * kind reported follows the data's shape: a zero run at an end, with the function holding
 * min_share on the other side, is new or gone; else a one-break constant fit of the scores
 * against a straight line, with a penalty for the break's free location. Only tests with
 * p <= level can be reported (q >= p), so only they are estimated. */
#include "query/changes.h"
#include "model/buf.h"
#include "model/error.h"
#include "query/stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Values are told apart to this fraction of a series' largest (sc_changes_add). */
#define CHANGES_QUANTUM 1e12

enum {
    MIN_STEPS = 6,  /* fewer present steps: not tested */
    MIN_SEG = 3,    /* a step has at least this many steps on each side */
    MIN_ABSENT = 3, /* a function new or gone is absent for at least this many steps */
};

/* The break's location is a free parameter the line does not have: a step must beat the
 * line by BREAK_PENALTY * log(n) in n * log(residual sum of squares). 1 would be BIC's one
 * parameter; the best of n splits overfits by more (tests/unit/test_changes.c measures the
 * confusions: a trend taken for a step and the reverse). */
#define BREAK_PENALTY 2.0

const char *sc_change_kind_name(enum sc_change_kind k)
{
    switch (k) {
    case SC_CHANGE_STEP:
        return "step";
    case SC_CHANGE_TREND:
        return "trend";
    case SC_CHANGE_NEW:
        return "new";
    case SC_CHANGE_GONE:
        return "gone";
    }
    return "?";
}

struct order {
    double v;
    uint32_t i;
};

/* A finding in waiting: its test's index in p; reported when that test's q <= level. */
struct cand {
    struct sc_change c;
    uint32_t test;
};

struct sc_changes {
    struct sc_changes_opts o;
    double *p; /* every test's p-value */
    uint32_t np, pcap;
    struct cand *cand; /* the tests with p <= level, estimated */
    uint32_t ncand, ccap;
    /* scratch, grown to the longest series seen */
    uint32_t cap;
    double *x, *tot, *score, *tmp, *y;
    int64_t *t;
    struct order *ord, *ord2;
    uint32_t *dense, *fen; /* fen: a Fenwick tree and counts, 2n + 1 */
};

struct sc_changes *sc_changes_new(const struct sc_changes_opts *o)
{
    struct sc_changes *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    struct sc_changes_opts def = SC_CHANGES_OPTS_INIT;
    c->o = o ? *o : def;
    if (!(c->o.level > 0 && c->o.level < 1))
        c->o.level = def.level;
    if (!(c->o.min_share >= 0 && c->o.min_share <= 1))
        c->o.min_share = def.min_share;
    return c;
}

void sc_changes_free(struct sc_changes *c)
{
    if (!c)
        return;
    free(c->p);
    free(c->cand);
    free(c->x);
    free(c->tot);
    free(c->score);
    free(c->y);
    free(c->tmp);
    free(c->t);
    free(c->ord);
    free(c->ord2);
    free(c->dense);
    free(c->fen);
    free(c);
}

static int grow_scratch(struct sc_changes *c, uint32_t n)
{
    /* one more than n: fen holds two entries a point and one more (2 n + 1) */
    const struct sc_grow_part cols[] = {SC_GROW_PART(c->x),     SC_GROW_PART(c->tot),
                                        SC_GROW_PART(c->score), SC_GROW_PART(c->y),
                                        SC_GROW_PART(c->tmp),   SC_GROW_PART(c->t),
                                        SC_GROW_PART(c->ord),   SC_GROW_PART(c->ord2),
                                        SC_GROW_PART(c->dense), {&c->fen, 2 * sizeof *c->fen}};
    return sc_grow_arrays(&c->cap, (uint64_t)n + 1, -1, cols, sizeof cols / sizeof *cols);
}

/* A stable sort of v[0..n) by value (ties keep their order), tmp as large: insertion sort
 * of runs of 16, then merges. Hand-written: sorting is most of a series' time, and with
 * qsort's comparisons through a pointer it was more than half of it. */
static void sort_order(struct order *v, struct order *tmp, uint32_t n)
{
    const uint32_t run = 16;
    for (uint32_t a = 0; a < n; a += run) {
        uint32_t b = a + run < n ? a + run : n;
        for (uint32_t i = a + 1; i < b; i++) {
            struct order x = v[i];
            uint32_t j = i;
            for (; j > a && v[j - 1].v > x.v; j--)
                v[j] = v[j - 1];
            v[j] = x;
        }
    }
    struct order *src = v, *dst = tmp;
    for (uint32_t w = run; w < n; w *= 2) {
        for (uint32_t a = 0; a < n; a += 2 * w) {
            uint32_t m = a + w < n ? a + w : n, b = a + 2 * w < n ? a + 2 * w : n;
            uint32_t i = a, j = m, k = a;
            while (i < m && j < b)
                dst[k++] = src[j].v < src[i].v ? src[j++] : src[i++];
            while (i < m)
                dst[k++] = src[i++];
            while (j < b)
                dst[k++] = src[j++];
        }
        struct order *x = src;
        src = dst;
        dst = x;
    }
    if (src != v)
        memcpy(v, src, (size_t)n * sizeof *v);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* The ranks of one series: midranks (ties share their mean rank) in c->score, dense ranks
 * (0..groups-1, for counting pairs) in c->dense, c->ord sorted by value, and Mann-Kendall's
 * correction for ties: the sum over tie groups of t(t - 1)(2t + 5). */
struct ranks {
    uint32_t groups;
    double mk_ties;
};

static void rank_series(struct sc_changes *c, uint32_t n, struct ranks *r)
{
    for (uint32_t i = 0; i < n; i++)
        c->ord[i] = (struct order){c->x[i], i};
    sort_order(c->ord, c->ord2, n);
    memset(r, 0, sizeof *r);
    for (uint32_t i = 0; i < n;) {
        uint32_t j = i + 1;
        while (j < n && c->ord[j].v == c->ord[i].v)
            j++;
        double mid = (i + 1 + j) / 2.0, t = j - i;
        for (uint32_t k = i; k < j; k++) {
            c->score[c->ord[k].i] = mid;
            c->dense[c->ord[k].i] = r->groups;
        }
        r->mk_ties += t * (t - 1) * (2 * t + 5);
        r->groups++;
        i = j;
    }
}

/* The k-th smallest of v[0..n) (Hoare's selection): v is reordered so that v[k] has the
 * smaller ones before it, the larger after. */
static double select_kth(double *v, uint32_t n, uint32_t k)
{
    int64_t lo = 0, hi = (int64_t)n - 1;
    while (lo < hi) {
        double pivot = v[lo + (hi - lo) / 2];
        int64_t i = lo, j = hi;
        while (i <= j) {
            while (v[i] < pivot)
                i++;
            while (v[j] > pivot)
                j--;
            if (i <= j) {
                double x = v[i];
                v[i++] = v[j];
                v[j--] = x;
            }
        }
        if ((int64_t)k <= j)
            hi = j;
        else if ((int64_t)k >= i)
            lo = i;
        else
            break;
    }
    return v[k];
}

static double median_of(double *v, uint32_t n)
{
    double hi = select_kth(v, n, n / 2);
    if (n % 2)
        return hi;
    double lo = v[0]; /* the largest of the lower half, which selection left below n / 2 */
    for (uint32_t i = 1; i < n / 2; i++)
        lo = v[i] > lo ? v[i] : lo;
    return (lo + hi) / 2;
}

/* The scores the step test sums: Huber's, of the log values, about their median in units
 * of their median absolute deviation, clipped at HUBER_C. Linear in the middle, so a step
 * counts by its size (a step a few points from the range's end stands out, which ranks,
 * bounded by their count, cannot show); clipped, so a burst counts no more than any value
 * HUBER_C deviations out. Logs, as the noise of profiles is multiplicative; zeros are
 * taken at half the smallest value seen (half a sample, for counts). Median and deviation
 * are of all the steps, whatever their order, so the permutation argument of the test
 * holds. 0 when the deviation is 0 (more than half the steps alike): ranks stay. */
#define HUBER_C 2.5

static int huber_scores(struct sc_changes *c, uint32_t n)
{
    double eps = 0;
    for (uint32_t i = 0; i < n && eps == 0; i++)
        eps = c->ord[i].v / 2;
    for (uint32_t i = 0; i < n; i++)
        c->tmp[i] = c->y[c->ord[i].i] = log(c->ord[i].v + eps); /* tmp sorted */
    double med = n % 2 ? c->tmp[n / 2] : (c->tmp[n / 2 - 1] + c->tmp[n / 2]) / 2;
    for (uint32_t i = 0; i < n; i++)
        c->tmp[i] = fabs(c->tmp[i] - med);
    double mad = 1.4826 * median_of(c->tmp, n);
    if (!(mad > 0))
        return 0;
    for (uint32_t i = 0; i < n; i++) {
        double z = (c->y[i] - med) / mad;
        c->score[i] = z > HUBER_C ? HUBER_C : z < -HUBER_C ? -HUBER_C : z;
    }
    return 1;
}

/* The split with the largest two-sample z of the scores: k steps before it, n - k after,
 * MIN_SEG <= k <= n - MIN_SEG. z_k is the centred sum of the first k scores over its
 * standard deviation under permutations, so z_k^2 / (n - 1) is the share of the scores'
 * variance a break at k explains. */
static double best_split(const struct sc_changes *c, uint32_t n, double *ss, uint32_t *at)
{
    double mean = 0;
    for (uint32_t i = 0; i < n; i++)
        mean += c->score[i] / n;
    *ss = 0;
    for (uint32_t i = 0; i < n; i++)
        *ss += (c->score[i] - mean) * (c->score[i] - mean);
    /* the largest s_k^2 / (k (n - k)), compared crosswise: no division in the loop */
    double s = 0, num = 0, den = 1;
    *at = n / 2;
    for (uint32_t k = 1; k + MIN_SEG <= n; k++) {
        s += c->score[k - 1] - mean;
        double d = (double)k * (n - k);
        if (k >= MIN_SEG && s * s * den > num * d) {
            num = s * s;
            den = d;
            *at = k;
        }
    }
    double unit = *ss / ((double)n * (n - 1));
    return unit > 0 ? sqrt(num / (den * unit)) : 0;
}

/* Mann-Kendall's S: pairs i < j with x_j > x_i minus those with x_j < x_i, counted with a
 * Fenwick tree over the dense ranks in time order, O(n log n). */
static double mann_kendall_s(struct sc_changes *c, uint32_t n, uint32_t groups)
{
    uint32_t *fen = c->fen, *same = c->fen + groups + 1;
    memset(fen, 0, (2 * (size_t)groups + 1) * sizeof *fen);
    double s = 0;
    for (uint32_t j = 0; j < n; j++) {
        uint32_t d = c->dense[j], below = 0;
        for (uint32_t i = d; i > 0; i -= i & -i) /* earlier with a smaller value */
            below += fen[i];
        uint32_t above = j - below - same[d]; /* earlier with a larger value */
        s += (double)below - (double)above;
        same[d]++;
        for (uint32_t i = d + 1; i <= groups; i += i & -i)
            fen[i]++;
    }
    return s;
}

/* The squared correlation of the scores with time: the share of their variance a straight
 * line explains. */
static double line_r2(const struct sc_changes *c, uint32_t n, double ss)
{
    double tm = 0, mean = 0;
    for (uint32_t i = 0; i < n; i++) {
        tm += (double)(c->t[i] - c->t[0]) / n;
        mean += c->score[i] / n;
    }
    double stt = 0, sst = 0;
    for (uint32_t i = 0; i < n; i++) {
        double dt = (double)(c->t[i] - c->t[0]) - tm;
        stt += dt * dt;
        sst += dt * (c->score[i] - mean);
    }
    if (!(stt > 0) || !(ss > 0))
        return 0;
    double r2 = sst * sst / (stt * ss);
    return r2 > 1 ? 1 : r2;
}

static void mean_var(const double *x, uint32_t n, double *mean, double *var)
{
    double m = 0;
    for (uint32_t i = 0; i < n; i++)
        m += x[i] / n;
    double v = 0;
    for (uint32_t i = 0; i < n; i++)
        v += (x[i] - m) * (x[i] - m);
    *mean = m;
    *var = n > 1 ? v / (n - 1) : 0;
}

/* Where the step is. The split of the test is the least-squares one of the scores, which
 * are clipped: every step of a large shift sits at the clip, and a split a step or two off
 * explains nearly as much of their variance. The log values place it: the split that
 * minimises the absolute deviations from each side's median, the medians held, is the
 * minimum of a running sum of |y - m_before| - |y - m_after|, a difference bounded by the
 * medians' distance, so a burst counts no more than any other step on the wrong side; in
 * logs, a noise that scales with the value crosses the midpoint as often from either side.
 * Twice, the medians taken again from the first answer. */
static uint32_t place_step(struct sc_changes *c, uint32_t n, uint32_t k)
{
    for (int round = 0; round < 2; round++) {
        memcpy(c->tmp, c->y, (size_t)n * sizeof *c->tmp);
        double ma = median_of(c->tmp, k), mb = median_of(c->tmp + k, n - k);
        if (ma == mb)
            return k;
        double run = 0, best = INFINITY;
        uint32_t at = k;
        for (uint32_t j = 1; j + MIN_SEG <= n; j++) {
            run += fabs(c->y[j - 1] - ma) - fabs(c->y[j - 1] - mb);
            if (j >= MIN_SEG && run < best) {
                best = run;
                at = j;
            }
        }
        if (at == k)
            break;
        k = at;
    }
    return k;
}

/* A step at k (values scaled by 1/scale in c->x): the means, and the change's 95% interval
 * from the log of the ratio of means (delta method, Welch-Satterthwaite degrees of freedom),
 * so the base's own noise counts and the interval never goes below -100%. */
static void estimate_step(const struct sc_changes *c, uint32_t n, uint32_t k, double scale,
                          struct sc_change *f)
{
    double a, va, b, vb;
    mean_var(c->x, k, &a, &va);
    mean_var(c->x + k, n - k, &b, &vb);
    f->kind = SC_CHANGE_STEP;
    f->at_ns = c->t[k];
    f->before = a * scale;
    f->after = b * scale;
    f->change_pct = 100 * (b / a - 1);
    double ua = va / (k * a * a), ub = vb / ((n - k) * b * b), se = sqrt(ua + ub);
    if (!(se > 0)) {
        f->lo = f->hi = f->change_pct;
        return;
    }
    double den = ua * ua / (k - 1) + ub * ub / (n - k - 1);
    double df = den > 0 ? (ua + ub) * (ua + ub) / den : n - 2;
    double tq = sc_t_quantile2(0.05, df), lr = log(b / a);
    f->lo = 100 * (exp(lr - tq * se) - 1);
    f->hi = 100 * (exp(lr + tq * se) - 1);
}

/* A trend: the median of the slopes of the pairs of steps half the series apart. Those
 * pairs share no step, so under independent noise their slopes are independent and each
 * as likely above the true slope as below (a difference of two like noises is symmetric):
 * the sign test's order statistics give a distribution-free 95% interval. Before and after
 * are the line through the values' mean at that slope, at the first and last step. */
static void estimate_trend(struct sc_changes *c, uint32_t n, double scale, struct sc_change *f)
{
    uint32_t h = (n + 1) / 2, m = n - h;
    const double hour = 3600e9;
    for (uint32_t i = 0; i < m; i++)
        c->tmp[i] = (c->x[i + h] - c->x[i]) / ((double)(c->t[i + h] - c->t[i]) / hour);
    qsort(c->tmp, m, sizeof *c->tmp, cmp_double);
    double slope = m % 2 ? c->tmp[m / 2] : (c->tmp[m / 2 - 1] + c->tmp[m / 2]) / 2;
    /* [s_(lo), s_(m-1-lo)] (0-based) covers the median unless at most lo of the m slopes
     * fall on one side of it: lo the largest with P(Bin(m, 1/2) <= lo) <= 2.5%, so the
     * interval holds at least 95%; fewer than 7 pairs cannot, and get [min, max] */
    double guess = floor(m / 2.0 - 0.98 * sqrt((double)m)) - 2; /* the normal's, a bit under */
    uint32_t lo = guess > 0 ? (uint32_t)guess : 0;
    while (lo > 0 && sc_binom_cdf(lo, m, 0.5) > 0.025)
        lo--;
    while (lo + 1 < m / 2 && sc_binom_cdf(lo + 1, m, 0.5) <= 0.025)
        lo++;
    uint32_t hi = m - 1 - lo;
    double mean = 0;
    for (uint32_t i = 0; i < n; i++)
        mean += (c->x[i] - slope * ((double)(c->t[i] - c->t[0]) / hour)) / n;
    double span = (double)(c->t[n - 1] - c->t[0]) / hour;
    double before = mean, after = mean + slope * span;
    f->kind = SC_CHANGE_TREND;
    f->at_ns = 0;
    f->before = before > 0 ? before * scale : 0;
    f->after = after > 0 ? after * scale : 0;
    f->change_pct = before > 0 ? 100 * (f->after / f->before - 1) : NAN;
    f->slope_per_hour = slope * scale;
    f->lo = c->tmp[lo] * scale;
    f->hi = c->tmp[hi] * scale;
}

/* P(the first L of n exchangeable steps are all among the z zeros), doubled for either
 * end: the run's p-value. */
static double zero_run_p(uint32_t run, uint32_t zeros, uint32_t n)
{
    double p = 2;
    for (uint32_t i = 0; i < run; i++)
        p *= (double)(zeros - i) / (n - i);
    return p > 1 ? 1 : p;
}

/* The share of the group's total the function holds over present steps [a, b) (c->x is in
 * units of scale, the totals are not; means, so sums of huge values stay finite). */
static double share(const struct sc_changes *c, uint32_t a, uint32_t b, double scale,
                    int have_total)
{
    if (!have_total)
        return 1;
    double v = 0, t = 0;
    for (uint32_t i = a; i < b; i++) {
        v += c->x[i] / (b - a);
        t += c->tot[i] / (b - a);
    }
    return t > 0 ? v * scale / t : 0;
}

static int push_p(struct sc_changes *c, double p)
{
    if (sc_grow_array(&c->p, &c->pcap, (uint64_t)c->np + 1, sizeof *c->p))
        return SC_ENOMEM;
    c->p[c->np++] = p;
    return 0;
}

static int push_cand(struct sc_changes *c, const struct sc_change *f)
{
    if (sc_grow_array(&c->cand, &c->ccap, (uint64_t)c->ncand + 1, sizeof *c->cand))
        return SC_ENOMEM;
    c->cand[c->ncand++] = (struct cand){*f, c->np - 1};
    return 0;
}

/* What kind of change the series shows, and its estimates; 0 when it is of none this module
 * reports (a function absent at one end that never reaches min_share). */
static int classify(struct sc_changes *c, uint32_t n, double scale, double ss, uint32_t k,
                    double zmax, uint32_t lead0, uint32_t trail0, int have_total,
                    struct sc_change *f)
{
    if (lead0 >= MIN_ABSENT || trail0 >= MIN_ABSENT) {
        int is_new = lead0 >= trail0;
        uint32_t a = is_new ? lead0 : 0, b = is_new ? n : n - trail0;
        if (share(c, a, b, scale, have_total) < c->o.min_share)
            return 0;
        double m = 0;
        for (uint32_t i = a; i < b; i++)
            m += c->x[i] / (b - a);
        f->kind = is_new ? SC_CHANGE_NEW : SC_CHANGE_GONE;
        f->at_ns = c->t[is_new ? lead0 : n - trail0];
        f->before = is_new ? 0 : m * scale;
        f->after = is_new ? m * scale : 0;
        f->change_pct = is_new ? NAN : -100;
        return 1;
    }
    /* n log(RSS) with RSS = (1 - R^2) of the scores' sum of squares, for both fits */
    double r2_step = zmax * zmax / (n - 1), r2_line = line_r2(c, n, ss);
    double fit_step = n * log(fmax(1 - r2_step, 1e-12)) + BREAK_PENALTY * log((double)n);
    double fit_line = n * log(fmax(1 - r2_line, 1e-12));
    if (fit_step < fit_line)
        estimate_step(c, n, place_step(c, n, k), scale, f);
    else
        estimate_trend(c, n, scale, f);
    return 1;
}

int sc_changes_add(struct sc_changes *c, const struct sc_changes_input *in, char *err)
{
    if (!in || (in->nsteps && (!in->t || !in->value)))
        return sc_errf(err, SC_EINVAL, "changes: a series without times or values");
    for (uint32_t i = 1; i < in->nsteps; i++)
        if (in->t[i] <= in->t[i - 1])
            return sc_errf(err, SC_EINVAL, "changes: step times not increasing at step %u", i);
    if (grow_scratch(c, in->nsteps) != 0)
        return sc_errf(err, SC_ENOMEM, "changes: out of memory");
    /* the present steps; a negative or infinite value is not a profile's: not tested */
    uint32_t n = 0;
    double scale = 0;
    for (uint32_t i = 0; i < in->nsteps; i++) {
        double v = in->value[i], tot = in->total ? in->total[i] : 0;
        if (isnan(v) || isnan(tot))
            continue;
        if (!(v >= 0) || isinf(v) || isinf(tot))
            return 0;
        c->x[n] = v;
        c->tot[n] = tot;
        c->t[n++] = in->t[i];
        if (v > scale)
            scale = v;
    }
    if (n < MIN_STEPS || !(scale > 0))
        return 0;
    /* values in units of the largest, so sums of squares of huge values stay finite, and
     * rounded to a trillionth of it: values equal but for floating-point rounding (a
     * timeline's value split among functions and added up again) must be equal, since the
     * tests work on ranks, where a difference in the last bit reads as a perfect step */
    for (uint32_t i = 0; i < n; i++)
        c->x[i] = nearbyint(c->x[i] / scale * CHANGES_QUANTUM) / CHANGES_QUANTUM;
    struct ranks r;
    rank_series(c, n, &r);
    if (r.groups < 2)
        return 0; /* constant: nothing to tell */

    huber_scores(c, n);
    uint32_t k;
    double ss, zmax = best_split(c, n, &ss, &k);
    double p_step = sc_split_max_p(zmax, n, MIN_SEG);

    double s = mann_kendall_s(c, n, r.groups);
    double var_s = ((double)n * (n - 1) * (2.0 * n + 5) - r.mk_ties) / 18;
    double p_trend = var_s > 0 ? sc_norm_p2((fabs(s) - 1 > 0 ? fabs(s) - 1 : 0) / sqrt(var_s)) : 1;

    uint32_t zeros = 0, lead0 = 0, trail0 = 0;
    for (uint32_t i = 0; i < n; i++)
        zeros += c->x[i] == 0;
    while (lead0 < n && c->x[lead0] == 0)
        lead0++;
    while (trail0 < n && c->x[n - 1 - trail0] == 0)
        trail0++;
    /* how many tests were made depends on the zeros' count only, not on where they are,
     * so the Bonferroni factor holds given the values (the tests are permutation tests) */
    double ntests = 2, p = fmin(p_step, p_trend);
    if (zeros >= MIN_ABSENT) {
        ntests = 3;
        uint32_t run = lead0 > trail0 ? lead0 : trail0;
        if (run >= MIN_ABSENT)
            p = fmin(p, zero_run_p(run, zeros, n));
    }
    p = fmin(1, ntests * p);
    if (isnan(p))
        return 0;
    if (push_p(c, p) != 0)
        return sc_errf(err, SC_ENOMEM, "changes: out of memory");
    if (p > c->o.level)
        return 0; /* its q-value will be at least p: never reported */

    struct sc_change f = {.group = in->group,
                          .function = in->function,
                          .lo = NAN,
                          .hi = NAN,
                          .slope_per_hour = NAN,
                          .p = p,
                          .q = NAN};
    if (!classify(c, n, scale, ss, k, zmax, lead0, trail0, in->total != NULL, &f))
        return 0;
    if (push_cand(c, &f) != 0)
        return sc_errf(err, SC_ENOMEM, "changes: out of memory");
    return 0;
}

/* How large a change is, to order the findings: relative, so groups of any size compare;
 * new (and growth from nothing) first. */
static double size_key(const struct sc_change *f)
{
    if (f->kind == SC_CHANGE_NEW || (f->before == 0 && f->after > 0))
        return INFINITY;
    return isnan(f->change_pct) ? 0 : fabs(f->change_pct);
}

static int cmp_change(const void *a, const void *b)
{
    const struct sc_change *x = a, *y = b;
    double kx = size_key(x), ky = size_key(y);
    if (kx != ky)
        return kx > ky ? -1 : 1;
    if (x->q != y->q)
        return x->q < y->q ? -1 : 1;
    if (x->group != y->group)
        return x->group < y->group ? -1 : 1;
    return x->function < y->function ? -1 : x->function > y->function;
}

int sc_changes_run(struct sc_changes *c, struct sc_change **out, uint32_t *n, char *err)
{
    *out = NULL;
    *n = 0;
    if (c->ncand == 0)
        return 0;
    /* q-values in a copy: the batch may take more tests and be run again */
    double *q = malloc((size_t)c->np * sizeof *q);
    if (!q)
        return sc_errf(err, SC_ENOMEM, "changes: out of memory");
    memcpy(q, c->p, (size_t)c->np * sizeof *q);
    if (sc_bh_adjust(q, c->np) != 0) {
        free(q);
        return sc_errf(err, SC_ENOMEM, "changes: out of memory");
    }
    uint32_t m = 0;
    for (uint32_t i = 0; i < c->ncand; i++)
        m += q[c->cand[i].test] <= c->o.level;
    struct sc_change *v = m ? malloc((size_t)m * sizeof *v) : NULL;
    if (m == 0 || !v) {
        free(q);
        return m == 0 ? 0 : sc_errf(err, SC_ENOMEM, "changes: out of memory");
    }
    uint32_t j = 0;
    for (uint32_t i = 0; i < c->ncand; i++) {
        double qi = q[c->cand[i].test];
        if (qi <= c->o.level) {
            v[j] = c->cand[i].c;
            v[j++].q = qi;
        }
    }
    free(q);
    qsort(v, m, sizeof *v, cmp_change);
    *out = v;
    *n = m;
    return 0;
}
