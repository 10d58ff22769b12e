/* test_compare.c - the statistics of the noise-aware comparison, on data with known truth. */
#include "query/compare.h"
#include "query/compare_report.h"
#include "query/diff.h"
#include "query/stats.h"
#include "model/error.h"
#include "model/merge.h"
#include "t.h"
#include "t_sim.h"

#include <math.h>

#define NFN 30

/* ---- distributions ---- */

static void test_math(void)
{
    /* I_x(a, b) against closed forms: I_x(1, 1) = x, I_x(a, 1) = x^a, I_x(1, b) = 1-(1-x)^b */
    T_CHECK(fabs(sc_betai(1, 1, 0.3) - 0.3) < 1e-12);
    T_CHECK(fabs(sc_betai(3, 1, 0.5) - 0.125) < 1e-12);
    T_CHECK(fabs(sc_betai(1, 4, 0.2) - (1 - pow(0.8, 4))) < 1e-12);
    T_CHECK(fabs(sc_betai(2.5, 3.5, 0.4) + sc_betai(3.5, 2.5, 0.6) - 1) < 1e-12);
    /* Student's t: the textbook two-sided 5% points */
    T_CHECK(fabs(sc_t_p2(2.776445105, 4) - 0.05) < 1e-6);
    T_CHECK(fabs(sc_t_p2(12.70620474, 1) - 0.05) < 1e-6);
    T_CHECK(fabs(sc_t_p2(1.959963985, 1e7) - 0.05) < 1e-5);
    T_CHECK(fabs(sc_t_p2(0, 5) - 1) < 1e-12);
    T_CHECK(fabs(sc_t_quantile2(0.05, 4) - 2.776445105) < 1e-6);
    T_CHECK(fabs(sc_t_quantile2(0.01, 10) - 3.169272673) < 1e-6);
    /* binomial: P(X = 0 | 10, 0.5) doubled; a symmetric centre is 1 */
    T_CHECK(fabs(sc_binom_p2(0, 10, 0.5) - 2 * pow(0.5, 10)) < 1e-12);
    T_CHECK(fabs(sc_binom_p2(5, 10, 0.5) - 1) < 1e-12);
    /* P(X <= 2 | 20, 0.3) = 0.0354831 (summed by hand from the pmf) */
    T_CHECK(fabs(sc_binom_p2(2, 20, 0.3) - 2 * 0.035483) < 1e-5);
    /* the normal approximation agrees with the exact test where it takes over */
    double exact = sc_binom_p2(500600, 1000000, 0.5);
    double approx = sc_binom_p2(5006000, 10000000, 0.5);
    T_CHECK(exact > 0 && approx >= 0 && approx < exact); /* ten times the data, surer */
    T_CHECK(fabs(sc_binom_p2(5001000, 10000000, 0.5) - 0.5271) < 2e-3);
    /* Welch: equal means are p = 1; a big gap with small spread is tiny */
    double se, df;
    T_CHECK(fabs(sc_welch(1, 1, 5, 1, 1, 5, &se, &df) - 1) < 1e-12);
    T_CHECK(fabs(df - 8) < 1e-9);
    T_CHECK(sc_welch(1, 0.01, 5, 2, 0.01, 5, &se, &df) < 1e-6);
    T_CHECK(sc_welch(1, 1, 1, 2, 1, 1, &se, &df) < 0); /* needs 3 observations */
    /* Benjamini-Hochberg on a worked example: p = .01 .02 .03 .04 .05 (m = 5) */
    double p[6] = {0.05, 0.01, -1, 0.03, 0.02, 0.04};
    T_EQ_INT(sc_bh_adjust(p, 6), 0);
    T_CHECK(fabs(p[1] - 0.05) < 1e-12 && fabs(p[4] - 0.05) < 1e-12);
    T_CHECK(fabs(p[0] - 0.05) < 1e-12 && p[2] == -1);
    double p2[3] = {0.001, 0.5, 0.04};
    sc_bh_adjust(p2, 3);
    T_CHECK(fabs(p2[0] - 0.003) < 1e-12 && fabs(p2[2] - 0.06) < 1e-12 && fabs(p2[1] - 0.5) < 1e-12);
}

/* ---- simulated profiles ---- */

/* One side's truth: base shares, per-function spread between captures (coefficient of
 * variation of a per-profile factor: real captures vary far more than sampling), and the
 * expected sample count of a profile. */
struct truth {
    double share[NFN];
    double cv[NFN];
    double samples;
};

static void base_truth(struct truth *t, double cv, double samples)
{
    double sum = 0;
    for (int i = 0; i < NFN; i++) {
        t->share[i] = 1.0 / (i + 2); /* Zipf-like: a few hot functions, a long tail */
        sum += t->share[i];
    }
    for (int i = 0; i < NFN; i++) {
        t->share[i] /= sum;
        t->cv[i] = cv;
    }
    t->samples = samples;
}

/* A CPU profile of one capture: main -> f<i>, counts from the truth with per-profile
 * factors; 10 ms a sample, 10 s long. */
static struct sc_profile *capture(const struct truth *t)
{
    struct sc_profile *p = sc_profile_new();
    sc_profile_add_sample_type(p, "samples", "count");
    sc_profile_add_sample_type(p, "cpu", "nanoseconds");
    p->period_type.type = (uint32_t)sc_profile_intern(p, "cpu", 3);
    p->period_type.unit = (uint32_t)sc_profile_intern(p, "nanoseconds", 11);
    p->period = 10000000;
    p->duration_nanos = 10000000000LL;
    int64_t mainfn = sc_profile_add_function(p, (uint32_t)sc_profile_intern(p, "main", 4), 0);
    uint32_t mainloc = (uint32_t)sc_profile_add_simple_location(p, (uint32_t)mainfn);
    for (int i = 0; i < NFN; i++) {
        char name[16];
        int n = snprintf(name, sizeof name, "f%02d", i);
        int64_t fn = sc_profile_add_function(p, (uint32_t)sc_profile_intern(p, name, (size_t)n), 0);
        uint32_t locs[2] = {(uint32_t)sc_profile_add_simple_location(p, (uint32_t)fn), mainloc};
        double factor = t->cv[i] > 0 ? gamma_k(1 / (t->cv[i] * t->cv[i])) * t->cv[i] * t->cv[i] : 1;
        double count = poisson(t->samples * t->share[i] * factor);
        if (count <= 0)
            continue;
        int64_t v[2] = {(int64_t)count, (int64_t)count * 10000000};
        sc_profile_add_sample(p, locs, 2, v, 0);
    }
    return p;
}

/* Compares nb captures of base with nn of new (cpu column); pooled: merge each side into
 * one profile first (what a test on pooled sample counts sees). */
static struct sc_cmp *compare(const struct truth *base, const struct truth *nw, int nb, int nn,
                              int normalize, int pooled)
{
    struct sc_cmp_opts o = SC_CMP_OPTS_INIT;
    o.normalize = normalize;
    struct sc_cmp *c;
    if (sc_cmp_new(&o, &c))
        return NULL;
    char err[SC_ERR_LEN];
    for (int side = 0; side < 2; side++) {
        const struct truth *t = side ? nw : base;
        int n = side ? nn : nb;
        struct sc_profile *all = NULL;
        for (int r = 0; r < n; r++) {
            struct sc_profile *p = capture(t);
            if (pooled) {
                if (!all)
                    all = p;
                else {
                    sc_profile_append(all, p, err);
                    all->duration_nanos += p->duration_nanos;
                    sc_profile_free(p);
                }
                continue;
            }
            T_EQ_INT(sc_cmp_add(c, side, p, 1, 10, 1, err), 0);
            sc_profile_free(p);
        }
        if (all) {
            T_EQ_INT(sc_cmp_add(c, side, all, 1, (double)all->duration_nanos / 1e9, 1, err), 0);
            sc_profile_free(all);
        }
    }
    T_EQ_INT(sc_cmp_finish(c, err), 0);
    return c;
}

static const struct sc_cmp_stat *stat_of(const struct sc_cmp *c, int i)
{
    char name[16];
    int n = snprintf(name, sizeof name, "f%02d", i);
    return sc_cmp_lookup(c, name, (size_t)n);
}

static uint32_t significant(const struct sc_cmp *c)
{
    struct sc_cmp_summary s;
    sc_cmp_summarize(c, &s);
    return s.grew + s.shrank;
}

#define SEEDS 200

/* Two sets from one distribution: no function is significant in (nearly) any seed; under
 * the complete null the false discovery rate is the chance of any discovery, which must
 * stay under the level. A pooled test on the same data flags dozens of functions. */
static void test_aa(void)
{
    struct truth t;
    base_truth(&t, 0.2, 2000);
    int any = 0, pooled_any = 0, pooled_total = 0;
    for (int seed = 0; seed < SEEDS; seed++) {
        rng_state = 1000 + (uint64_t)seed;
        struct sc_cmp *c = compare(&t, &t, 8, 8, 1, 0);
        any += significant(c) > 0;
        struct sc_cmp_summary s;
        sc_cmp_summarize(c, &s);
        T_EQ_INT(s.method, SC_CMP_REPLICATES);
        T_EQ_INT(s.base_n, 8);
        sc_cmp_free(c);
        rng_state = 1000 + (uint64_t)seed;
        c = compare(&t, &t, 8, 8, 1, 1);
        pooled_any += significant(c) > 0;
        pooled_total += (int)significant(c);
        sc_cmp_free(c);
    }
    fprintf(stderr,
            "A/A: %d of %d seeds with a false discovery; pooled counts: %d seeds, %.1f "
            "functions a seed\n",
            any, SEEDS, pooled_any, (double)pooled_total / SEEDS);
    T_CHECK(any <= SEEDS * 0.05 + 6); /* the level, plus two standard deviations */
    T_CHECK(pooled_any >= SEEDS * 80 / 100);
    T_CHECK(pooled_total >= 2 * SEEDS);
    /* not normalised (per second) the same holds */
    any = 0;
    for (int seed = 0; seed < SEEDS / 2; seed++) {
        rng_state = 5000 + (uint64_t)seed;
        struct sc_cmp *c = compare(&t, &t, 6, 6, 0, 0);
        any += significant(c) > 0;
        struct sc_cmp_summary s;
        sc_cmp_summarize(c, &s);
        T_EQ_STR(s.metric, "per_second");
        sc_cmp_free(c);
    }
    T_CHECK(any <= SEEDS / 2 * 0.05 + 5);
}

/* A function whose share grows by half is found, grown, with an interval that covers the
 * truth in about 95% of seeds. */
static void test_growth(void)
{
    struct truth b, n;
    base_truth(&b, 0.1, 4000);
    n = b;
    n.share[3] *= 1.5;
    double sum = 0;
    for (int i = 0; i < NFN; i++)
        sum += n.share[i];
    for (int i = 0; i < NFN; i++)
        n.share[i] /= sum;
    double truth_pct = 100 * (n.share[3] / b.share[3] - 1);
    int found = 0, covered = 0;
    for (int seed = 0; seed < SEEDS; seed++) {
        rng_state = 20000 + (uint64_t)seed;
        struct sc_cmp *c = compare(&b, &n, 10, 10, 1, 0);
        const struct sc_cmp_stat *st = stat_of(c, 3);
        T_CHECK(st != NULL);
        if (st && st->significant && st->direction > 0)
            found++;
        if (st && st->flat_lo <= truth_pct && truth_pct <= st->flat_hi)
            covered++;
        sc_cmp_free(c);
    }
    fprintf(stderr, "growth of +%.1f%%: found in %d of %d seeds, interval covered %d\n", truth_pct,
            found, SEEDS, covered);
    T_CHECK(found >= SEEDS * 95 / 100);
    T_CHECK(covered >= SEEDS * 88 / 100 && covered <= SEEDS);
}

/* A hot function with a large spread between captures and no change is not flagged, though
 * a pooled test flags it nearly always. */
static void test_hot_noisy(void)
{
    struct truth t;
    base_truth(&t, 0.05, 5000);
    t.cv[0] = 0.5; /* f00 is the hottest function (about a quarter of the samples) */
    int flagged = 0, pooled = 0;
    for (int seed = 0; seed < SEEDS; seed++) {
        rng_state = 40000 + (uint64_t)seed;
        struct sc_cmp *c = compare(&t, &t, 6, 6, 0, 0);
        const struct sc_cmp_stat *st = stat_of(c, 0);
        flagged += st && st->significant;
        sc_cmp_free(c);
        rng_state = 40000 + (uint64_t)seed;
        c = compare(&t, &t, 6, 6, 0, 1);
        st = stat_of(c, 0);
        pooled += st && st->significant;
        sc_cmp_free(c);
    }
    fprintf(stderr, "hot noisy f00: flagged in %d of %d seeds, pooled %d\n", flagged, SEEDS,
            pooled);
    T_CHECK(flagged <= SEEDS * 5 / 100 + 4);
    T_CHECK(pooled >= SEEDS * 80 / 100);
}

/* A small change (+10% of a 5% function) with almost no spread is found. */
static void test_small_precise(void)
{
    struct truth b, n;
    base_truth(&b, 0.003, 400000);
    n = b;
    n.share[7] *= 1.10;
    int found = 0;
    for (int seed = 0; seed < SEEDS / 2; seed++) {
        rng_state = 60000 + (uint64_t)seed;
        struct sc_cmp *c = compare(&b, &n, 5, 5, 0, 0);
        const struct sc_cmp_stat *st = stat_of(c, 7);
        found +=
            st && st->significant && st->direction > 0 && st->flat_pct > 5 && st->flat_pct < 15;
        sc_cmp_free(c);
    }
    fprintf(stderr, "small precise +10%%: found in %d of %d seeds\n", found, SEEDS / 2);
    T_CHECK(found >= SEEDS / 2 * 95 / 100);
}

/* With one profile a side, the method is the sampling-noise test, and it says so; with one
 * on one side, the other side's spread stands in. */
static void test_fallbacks(void)
{
    struct truth b, n;
    base_truth(&b, 0, 20000);
    n = b;
    n.share[2] *= 2;
    rng_state = 7;
    struct sc_cmp *c = compare(&b, &n, 1, 1, 1, 0);
    struct sc_cmp_summary s;
    sc_cmp_summarize(c, &s);
    T_EQ_INT(s.method, SC_CMP_SAMPLING);
    T_EQ_STR(sc_cmp_method_name(s.method), "sampling");
    T_CHECK(strstr(sc_cmp_method_text(s.method), "sampling noise only") != NULL);
    const struct sc_cmp_stat *st = stat_of(c, 2);
    T_CHECK(st && st->significant && st->direction > 0);
    T_CHECK(st && st->flat_pct > 60 && st->flat_pct < 140);
    /* f20 unchanged: with no overdispersion the sampling test is right not to flag it */
    st = stat_of(c, 20);
    T_CHECK(st && !st->significant);
    sc_cmp_free(c);
    rng_state = 8;
    c = compare(&b, &n, 1, 5, 1, 0);
    sc_cmp_summarize(c, &s);
    T_EQ_INT(s.method, SC_CMP_ONE_SIDE);
    st = stat_of(c, 2);
    T_CHECK(st && st->significant && st->direction > 0);
    sc_cmp_free(c);
    /* nothing on one side: nothing tested */
    struct sc_cmp *e;
    sc_cmp_new(NULL, &e);
    struct sc_profile *p = capture(&b);
    char err[SC_ERR_LEN];
    sc_cmp_add(e, 1, p, 1, 10, 1, err);
    sc_cmp_finish(e, err);
    sc_cmp_summarize(e, &s);
    T_EQ_INT(s.method, SC_CMP_NONE);
    T_EQ_INT(s.tested, 0);
    T_CHECK(stat_of(e, 0) && !stat_of(e, 0)->significant && stat_of(e, 0)->flat_q == -1);
    T_CHECK(sc_cmp_lookup(e, "nope", 4) == NULL);
    sc_cmp_free(e);
    sc_profile_free(p);
}

/* One scale for every replicate: a side whose replicates know their seconds against one
 * whose do not compares per capture on both (before, per second against per capture: the
 * same profiles were ten times apart), and equal means are never a change. */
static void test_one_scale(void)
{
    struct truth b;
    base_truth(&b, 0.1, 20000);
    rng_state = 11;
    struct sc_cmp *c;
    T_EQ_INT(sc_cmp_new(NULL, &c), 0);
    char err[SC_ERR_LEN];
    for (int k = 0; k < 12; k++) {
        struct sc_profile *p = capture(&b);
        /* the same capture on both sides: 10 s known on the base, unknown on the new */
        T_EQ_INT(sc_cmp_add(c, 0, p, 1, 10, 1, err), 0);
        T_EQ_INT(sc_cmp_add(c, 1, p, 1, 0, 1, err), 0);
        sc_profile_free(p);
    }
    T_EQ_INT(sc_cmp_finish(c, err), 0);
    struct sc_cmp_summary s;
    sc_cmp_summarize(c, &s);
    T_EQ_STR(s.metric, "per_profile");
    T_EQ_INT(s.grew + s.shrank, 0);
    for (int i = 0; i < 30; i++) {
        const struct sc_cmp_stat *st = stat_of(c, i);
        if (!st)
            continue;
        T_CHECK(st->base_flat == st->flat && st->base_cum == st->cum);
        T_CHECK(!st->significant);
    }
    sc_cmp_free(c);
}

/* A new function is +inf and significant when it shows up in every new replicate; the
 * report puts it in the verdict and --fail-above trips on it. */
static void test_report(void)
{
    struct truth b, n;
    base_truth(&b, 0.1, 5000);
    n = b;
    b.share[5] = 0; /* f05 does not exist in the base */
    rng_state = 99;
    struct sc_cmp *c = compare(&b, &n, 5, 5, 1, 0);
    const struct sc_cmp_stat *st = stat_of(c, 5);
    T_CHECK(st && st->significant && isinf(st->flat_pct) && st->flat_pct > 0);
    /* the diff of the merged sides, with the statistics attached */
    struct sc_profile *mb = capture(&b), *mn = capture(&n);
    struct sc_diff d;
    char err[SC_ERR_LEN];
    T_EQ_INT(sc_diff_compute(mb, 1, mn, 1, 1, &d, err), 0);
    sc_diff_attach(&d, c);
    struct sc_buf out = SC_BUF_INIT;
    struct sc_verdict v;
    struct sc_report_opts ro = {SC_REPORT_TEXT, 20, 0};
    sc_compare_report(&d, &ro, &out, &v);
    sc_buf_putc(&out, 0);
    T_CHECK(v.over >= 1);
    T_CHECK(strstr(out.data, "FAIL: f05 grew by new") != NULL);
    T_CHECK(strstr(out.data, "5 base profiles vs 5 new profiles") != NULL);
    sc_buf_release(&out);
    ro.format = SC_REPORT_MARKDOWN;
    sc_compare_report(&d, &ro, &out, &v);
    sc_buf_putc(&out, 0);
    T_CHECK(strstr(out.data, "| `f05` | self |") != NULL);
    T_CHECK(strstr(out.data, "**Verdict:** FAIL") != NULL);
    sc_buf_release(&out);
    /* json and tsv carry the statistics after the exact values */
    sc_diff_write(&d, SC_DIFF_JSON, 0, &out);
    sc_buf_putc(&out, 0);
    T_CHECK(strstr(out.data, "\"base_profiles\":5,\"profiles\":5,\"method\":\"replicates\"") !=
            NULL);
    T_CHECK(strstr(out.data, "\"function\":\"f05\",\"base_flat\":0,") != NULL);
    T_CHECK(strstr(out.data, "\"significant\":true,\"flat_q\":") != NULL);
    T_CHECK(strstr(out.data, "\"delta_pct\":null") != NULL); /* +inf is not JSON */
    sc_buf_release(&out);
    sc_diff_write(&d, SC_DIFF_TSV, 0, &out);
    sc_buf_putc(&out, 0);
    T_CHECK(!strncmp(out.data,
                     "base_flat\tflat\tbase_cum\tcum\tfunction\tsignificant\tflat_q\tcum_q\t"
                     "delta_pct\tdelta_pct_lo\tdelta_pct_hi\t",
                     95));
    T_CHECK(strstr(out.data, "\tf05\t1\t") != NULL);
    T_CHECK(strstr(out.data, "\tinf\t") != NULL);
    sc_buf_release(&out);
    sc_diff_release(&d);
    sc_profile_free(mb);
    sc_profile_free(mn);
    sc_cmp_free(c);
}

int main(void)
{
    T_RUN(test_math);
    T_RUN(test_aa);
    T_RUN(test_growth);
    T_RUN(test_hot_noisy);
    T_RUN(test_small_precise);
    T_RUN(test_fallbacks);
    T_RUN(test_one_scale);
    T_RUN(test_report);
    return t_done();
}
