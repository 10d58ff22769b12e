/* test_changes.c - steps, trends, new and gone functions over time, on simulated profiles
 * with known truth: found where planted, quiet where nothing changed. */
#include "query/changes.h"
#include "query/stats.h"
#include "model/error.h"
#include "t.h"
#include "t_sim.h"

#include <math.h>
#include <time.h>

/* ---- simulated profiles ---- */

static void seed(uint64_t s)
{
    rng_state = s * 0x2545f4914f6cdd1dULL + 12345;
}

/* A factor of mean 1 and coefficient of variation cv (<= 1): gamma. */
static double spread(double cv)
{
    if (cv <= 0)
        return 1;
    double k = 1 / (cv * cv);
    return gamma_k(k) / k;
}

#define MAXF 220
#define MAXS 600
#define STEP_NS (300 * 1000000000LL) /* five minutes */
#define T0 1700000000000000000LL

enum plant { NONE, STEP, TREND, NEW, GONE, BURSTY, BURSTS };

/* One group: functions with Zipf-like shares of `samples` samples a step; each step's value
 * is Poisson around share x samples x the step's load factor (shared by the group, cv 10%)
 * x the function's own factor (cv 15%): overdispersed, as profiles are. The planted
 * function's mean moves as told; a bursty one gets a heavy-tailed burst (Pareto, x3 and
 * more) in 8% of the steps. Missing steps (no profile) are NaN. */
struct group {
    uint32_t nf, ns;
    int64_t t[MAXS];
    double v[MAXF][MAXS];
    double total[MAXS];
};

struct plan {
    enum plant kind;
    uint32_t fn;  /* the planted function */
    double size;  /* step: relative change; trend: relative change per hour */
    uint32_t at;  /* step, new, gone: the first step after */
    double share; /* new, gone, bursty: its share (else Zipf's) */
};

/* The spread between steps: of the group's load, of each function's own part. */
static double load_cv = 0.10, own_cv = 0.15;

static void simulate(struct group *g, uint32_t nf, uint32_t ns, double samples, double missing,
                     const struct plan *pl)
{
    g->nf = nf;
    g->ns = ns;
    double w[MAXF], sum = 0;
    for (uint32_t f = 0; f < nf; f++) {
        w[f] = 1.0 / (f + 2);
        sum += w[f];
    }
    for (uint32_t f = 0; f < nf; f++)
        w[f] /= sum;
    if (pl && pl->share > 0)
        w[pl->fn] = pl->share;
    uint32_t burst_left = 0;
    double burst = 1;
    for (uint32_t k = 0; k < ns; k++) {
        g->t[k] = T0 + (int64_t)k * STEP_NS;
        int gap = unif() < missing;
        double load = spread(load_cv);
        g->total[k] = 0;
        for (uint32_t f = 0; f < nf; f++) {
            double m = w[f] * samples * load * spread(own_cv);
            if (pl && f == pl->fn) {
                double hours = (double)k * STEP_NS / 3600e9;
                switch (pl->kind) {
                case STEP:
                    m *= k >= pl->at ? 1 + pl->size : 1;
                    break;
                case TREND:
                    m *= 1 + pl->size * hours;
                    break;
                case NEW:
                    m *= k >= pl->at;
                    break;
                case GONE:
                    m *= k < pl->at;
                    break;
                case BURSTY:
                    if (unif() < 0.08)
                        m *= 3 / pow(unif(), 1 / 1.5); /* Pareto, tail index 1.5 */
                    break;
                case BURSTS: /* bursts that last 1 to 4 steps */
                    if (burst_left == 0 && unif() < 0.03) {
                        burst_left = 1 + (uint32_t)(unif() * 4);
                        burst = 3 / pow(unif(), 1 / 1.5);
                    }
                    if (burst_left > 0) {
                        m *= burst;
                        burst_left--;
                    }
                    break;
                case NONE:
                    break;
                }
            }
            g->v[f][k] = poisson(m) * 0.01; /* CPU seconds a step: 10 ms a sample */
            g->total[k] += g->v[f][k];
        }
        if (gap) {
            for (uint32_t f = 0; f < nf; f++)
                g->v[f][k] = NAN;
            g->total[k] = NAN;
        }
    }
}

static int add_group(struct sc_changes *c, const struct group *g, uint32_t gi)
{
    for (uint32_t f = 0; f < g->nf; f++) {
        struct sc_changes_input in = {gi, f, g->ns, g->t, STEP_NS, g->v[f], g->total};
        char err[SC_ERR_LEN] = "";
        int rc = sc_changes_add(c, &in, err);
        if (rc != 0)
            return rc;
    }
    return 0;
}

/* The findings of one batch, and checks every finding must pass. */
static uint32_t run(struct sc_changes *c, struct sc_change **out)
{
    uint32_t n = 99;
    char err[SC_ERR_LEN] = "";
    T_EQ_INT(sc_changes_run(c, out, &n, err), 0);
    for (uint32_t i = 0; i < n; i++) {
        const struct sc_change *f = &(*out)[i];
        T_CHECK(f->p >= 0 && f->p <= 1 && f->q >= f->p && f->q <= 0.05 + 1e-12);
        T_CHECK(!isnan(f->before) && !isnan(f->after));
    }
    return n;
}

static struct group G; /* big: static, one at a time */

/* A finding on stderr when CHANGES_VERBOSE is set: what tuning the method looks at. */
static void show(const char *what, const struct sc_change *f)
{
    if (!getenv("CHANGES_VERBOSE"))
        return;
    fprintf(stderr, "    %s: g%u f%u %s at step %lld, %.1f%% [%.1f, %.1f], p %.3g q %.3g\n", what,
            f->group, f->function, sc_change_kind_name(f->kind),
            f->at_ns ? (long long)((f->at_ns - T0) / STEP_NS) : -1LL, f->change_pct, f->lo, f->hi,
            f->p, f->q);
}

/* ---- the distributions ---- */

static void test_split_p(void)
{
    /* one split: the normal two-sided tail */
    T_CHECK(fabs(sc_norm_p2(1.959963985) - 0.05) < 1e-8);
    T_CHECK(fabs(sc_split_max_p(1.959963985, 6, 3) - 0.05) < 1e-8);
    T_CHECK(sc_split_max_p(NAN, 100, 3) == 1 && sc_split_max_p(5, 5, 3) == 1);
    /* more splits, larger p; larger b, smaller p; never above 1 */
    T_CHECK(sc_split_max_p(3.5, 288, 3) > sc_split_max_p(3.5, 30, 3));
    T_CHECK(sc_split_max_p(3.5, 30, 3) > sc_norm_p2(3.5));
    T_CHECK(sc_split_max_p(4.5, 288, 3) < sc_split_max_p(3.5, 288, 3));
    T_CHECK(sc_split_max_p(0.5, 288, 3) == 1);
    /* the binomial's distribution function: P(Bin(10, 1/2) <= 2) = 56 / 1024 */
    T_CHECK(fabs(sc_binom_cdf(2, 10, 0.5) - 56.0 / 1024) < 1e-12);
    T_CHECK(sc_binom_cdf(-1, 10, 0.5) == 0 && sc_binom_cdf(10, 10, 0.5) == 1);
    /* the largest rank-sum z of random orders: the p-value is at or under its level (the
     * approximation is conservative; 6 steps, one split of 3 and 3, is the exception the
     * Bonferroni factor of sc_changes covers: exactly 0.1 there) */
    static const uint32_t sizes[] = {10, 30, 60, 288};
    for (size_t a = 0; a < sizeof sizes / sizeof *sizes; a++) {
        uint32_t n = sizes[a], reps = 20000, hit05 = 0, hit01 = 0;
        double r[288];
        seed(a + 1);
        for (uint32_t rep = 0; rep < reps; rep++) {
            for (uint32_t i = 0; i < n; i++)
                r[i] = i + 1;
            for (uint32_t i = n - 1; i > 0; i--) {
                uint32_t j = (uint32_t)(unif() * (i + 1));
                double x = r[i];
                r[i] = r[j];
                r[j] = x;
            }
            double mean = (n + 1) / 2.0, ss = n * ((double)n * n - 1) / 12, s = 0, b = 0;
            for (uint32_t k = 1; k + 3 <= n; k++) {
                s += r[k - 1] - mean;
                double z = fabs(s) / sqrt((double)k * (n - k) / ((double)n * (n - 1)) * ss);
                if (k >= 3 && z > b)
                    b = z;
            }
            double p = sc_split_max_p(b, n, 3);
            hit05 += p <= 0.05;
            hit01 += p <= 0.01;
        }
        fprintf(stderr, "  max rank-sum z, n=%u: P(p <= 0.05) = %.4f, P(p <= 0.01) = %.4f\n", n,
                (double)hit05 / reps, (double)hit01 / reps);
        T_CHECK((double)hit05 / reps < 0.055);
        T_CHECK((double)hit01 / reps < 0.012);
    }
}

/* ---- known truth ---- */

static void test_kind_names(void)
{
    T_EQ_STR(sc_change_kind_name(SC_CHANGE_STEP), "step");
    T_EQ_STR(sc_change_kind_name(SC_CHANGE_TREND), "trend");
    T_EQ_STR(sc_change_kind_name(SC_CHANGE_NEW), "new");
    T_EQ_STR(sc_change_kind_name(SC_CHANGE_GONE), "gone");
}

/* A clean step (no noise but sampling): found, at exactly, the right size. */
static void test_clean_step(void)
{
    int64_t t[40];
    double v[40], tot[40];
    for (int k = 0; k < 40; k++) {
        t[k] = T0 + k * STEP_NS;
        v[k] = k < 23 ? 10 + 0.01 * (k % 3) : 15 + 0.01 * (k % 3);
        tot[k] = 100;
    }
    v[7] = NAN; /* a step without profiles */
    tot[7] = NAN;
    struct sc_changes *c = sc_changes_new(NULL);
    struct sc_changes_input in = {3, 9, 40, t, STEP_NS, v, tot};
    char err[SC_ERR_LEN];
    T_EQ_INT(sc_changes_add(c, &in, err), 0);
    struct sc_change *out = NULL;
    uint32_t n = run(c, &out);
    T_EQ_INT(n, 1);
    if (n == 1) {
        T_EQ_INT(out[0].group, 3);
        T_EQ_INT(out[0].function, 9);
        T_EQ_INT(out[0].kind, SC_CHANGE_STEP);
        T_EQ_INT(out[0].at_ns, t[23]);
        T_CHECK(fabs(out[0].before - 10.01) < 0.01 && fabs(out[0].after - 15.01) < 0.01);
        T_CHECK(fabs(out[0].change_pct - 50) < 0.2);
        T_CHECK(out[0].lo < out[0].change_pct && out[0].change_pct < out[0].hi);
        T_CHECK(out[0].hi - out[0].lo < 1);
        T_CHECK(isnan(out[0].slope_per_hour));
    }
    free(out);
    sc_changes_free(c);
}

/* Planted steps of +20% .. +100% in one function of 60 (some hot, some cold), anywhere in
 * 288 five-minute steps, among 4 groups: found, a step, at within one step. */
static void test_steps(void)
{
    static const double sizes[] = {0.2, 0.4, 0.6, 1.0, -0.3};
    const uint32_t seeds = 40;
    double fdp = 0; /* the share of false findings, summed over batches with any */
    uint32_t batches = 0;
    for (size_t a = 0; a < sizeof sizes / sizeof *sizes; a++) {
        uint32_t found = 0, located = 0, as_step = 0, covered = 0, others = 0;
        for (uint32_t s = 0; s < seeds; s++) {
            seed(1000 * a + s);
            struct sc_changes *c = sc_changes_new(NULL);
            struct plan pl = {STEP, (uint32_t)(unif() * 20), sizes[a],
                              (uint32_t)(20 + unif() * 248), 0};
            for (uint32_t g = 0; g < 4; g++) {
                simulate(&G, 60, 288, 20000, 0.03, g == 2 ? &pl : NULL);
                T_EQ_INT(add_group(c, &G, g), 0);
            }
            struct sc_change *out = NULL;
            uint32_t n = run(c, &out);
            for (uint32_t i = 0; i < n; i++) {
                if (out[i].group == 2 && out[i].function == pl.fn) {
                    found++;
                    as_step += out[i].kind == SC_CHANGE_STEP;
                    int64_t at = T0 + (int64_t)pl.at * STEP_NS;
                    located += out[i].kind == SC_CHANGE_STEP && llabs(out[i].at_ns - at) <= STEP_NS;
                    covered += out[i].lo <= 100 * sizes[a] && 100 * sizes[a] <= out[i].hi;
                    show("planted", &out[i]);
                } else {
                    others++;
                    show("other", &out[i]);
                }
            }
            uint32_t right = 0;
            for (uint32_t i = 0; i < n; i++)
                right += out[i].group == 2 && out[i].function == pl.fn;
            fdp += n ? (double)(n - right) / n : 0;
            batches++;
            free(out);
            sc_changes_free(c);
        }
        fprintf(stderr,
                "  step %+4.0f%%: found %u/%u, as step %u, at within a step %u, interval "
                "covers %u; other findings %u\n",
                100 * sizes[a], found, seeds, as_step, located, covered, others);
        /* a fifth of a step is about the noise of one step (cv 18%): most are found and told
         * from a trend, and placed within a step in about half the seeds; from +60% on the
         * place is within one step nearly always */
        T_CHECK(found >= seeds * 9 / 10);
        T_CHECK(as_step >= found * 85 / 100);
        if (fabs(sizes[a]) >= 0.6)
            T_CHECK(located >= found * 95 / 100);
        else
            T_CHECK(located >= found * 4 / 10);
        T_CHECK(covered >= found * 80 / 100);
        T_CHECK(others <= seeds / 5);
    }
    /* the false discovery rate: the mean share of false findings among a batch's findings
     * (0 for a batch without), which Benjamini-Hochberg keeps under the level */
    fprintf(stderr, "  steps: the false discovery rate over %u batches: %.3f\n", batches,
            fdp / batches);
    T_CHECK(fdp / batches <= 0.06);
}

/* Steps with little noise (cv 2%), anywhere from the third step to the third last: found
 * and placed exactly (within one step in every seed). */
static void test_clean_steps(void)
{
    const uint32_t seeds = 100;
    uint32_t found = 0, exact = 0, near = 0;
    load_cv = 0.01;
    own_cv = 0.02;
    for (uint32_t s = 0; s < seeds; s++) {
        seed(3000 + s);
        struct sc_changes *c = sc_changes_new(NULL);
        uint32_t ns = s % 2 ? 60 : 288;
        struct plan pl = {STEP, (uint32_t)(unif() * 10), s % 3 ? 0.2 : -0.2,
                          (uint32_t)(6 + unif() * (ns - 12)), 0};
        simulate(&G, 30, ns, 1e7, 0.05, &pl);
        T_EQ_INT(add_group(c, &G, 0), 0);
        struct sc_change *out = NULL;
        uint32_t n = run(c, &out);
        int64_t at = T0 + (int64_t)pl.at * STEP_NS;
        /* the first step with a profile from the planted one on */
        for (uint32_t k = pl.at; k < ns && isnan(G.v[0][k]); k++)
            at += STEP_NS;
        for (uint32_t i = 0; i < n; i++) {
            if (out[i].function != pl.fn || out[i].kind != SC_CHANGE_STEP)
                continue;
            found++;
            exact += out[i].at_ns == at;
            near += llabs(out[i].at_ns - at) <= STEP_NS;
        }
        free(out);
        sc_changes_free(c);
    }
    load_cv = 0.10;
    own_cv = 0.15;
    fprintf(stderr, "  clean steps of 20%%: found %u/%u, at exactly %u, within a step %u\n", found,
            seeds, exact, near);
    T_EQ_INT(found, seeds);
    T_EQ_INT(near, seeds);
    T_CHECK(exact >= seeds * 95 / 100);
}

/* A step in the last steps of the range (what an alert evaluated every minute sees): +50%
 * with the usual noise, 6 and 12 steps before the end of 60. */
static void test_recent_step(void)
{
    static const uint32_t after[] = {6, 12};
    for (size_t a = 0; a < 2; a++) {
        const uint32_t seeds = 40;
        uint32_t found = 0, near = 0;
        for (uint32_t s = 0; s < seeds; s++) {
            seed(4000 + 100 * a + s);
            struct sc_changes *c = sc_changes_new(NULL);
            struct plan pl = {STEP, 1, 0.5, 60 - after[a], 0};
            simulate(&G, 50, 60, 20000, 0, &pl);
            T_EQ_INT(add_group(c, &G, 0), 0);
            struct sc_change *out = NULL;
            uint32_t n = run(c, &out);
            for (uint32_t i = 0; i < n; i++) {
                if (out[i].function != 1)
                    continue;
                found++;
                show("recent", &out[i]);
                near += out[i].kind == SC_CHANGE_STEP &&
                        llabs(out[i].at_ns - (T0 + (int64_t)pl.at * STEP_NS)) <= STEP_NS;
            }
            free(out);
            sc_changes_free(c);
        }
        fprintf(stderr,
                "  +50%% step %u steps before the end of 60: found %u/%u, within a step %u\n",
                after[a], found, seeds, near);
        T_CHECK(found >= seeds * (a ? 9 : 5) / 10);
    }
}

/* A slow trend (a leak: +3% an hour for 24 hours, and +5% an hour over 8): a trend, not a
 * step, its slope inside its interval in most seeds. */
static void test_trends(void)
{
    static const struct {
        double rate;
        uint32_t steps;
    } cases[] = {{0.03, 288}, {0.05, 96}, {-0.02, 288}};
    const uint32_t seeds = 40;
    for (size_t a = 0; a < sizeof cases / sizeof *cases; a++) {
        uint32_t found = 0, as_trend = 0, covered = 0, others = 0;
        for (uint32_t s = 0; s < seeds; s++) {
            seed(5000 + 100 * a + s);
            struct sc_changes *c = sc_changes_new(NULL);
            uint32_t fn = (uint32_t)(unif() * 10);
            struct plan pl = {TREND, fn, cases[a].rate, 0, 0};
            simulate(&G, 60, cases[a].steps, 20000, 0.03, &pl);
            /* the truth: share x samples x 0.01 x rate, per hour */
            double w = 0;
            for (uint32_t f = 0; f < 60; f++)
                w += 1.0 / (f + 2);
            double truth = 1.0 / (fn + 2) / w * 20000 * 0.01 * cases[a].rate;
            T_EQ_INT(add_group(c, &G, 0), 0);
            struct sc_change *out = NULL;
            uint32_t n = run(c, &out);
            for (uint32_t i = 0; i < n; i++) {
                if (out[i].function != fn) {
                    others++;
                    continue;
                }
                found++;
                if (out[i].kind == SC_CHANGE_TREND) {
                    as_trend++;
                    covered += out[i].lo <= truth && truth <= out[i].hi;
                    T_CHECK(out[i].lo <= out[i].slope_per_hour &&
                            out[i].slope_per_hour <= out[i].hi);
                    T_CHECK(out[i].at_ns == 0);
                    T_CHECK((out[i].after > out[i].before) == (cases[a].rate > 0));
                }
            }
            free(out);
            sc_changes_free(c);
        }
        fprintf(stderr,
                "  trend %+.0f%%/h over %u steps: found %u/%u, as trend %u, slope in its "
                "interval %u; other findings %u\n",
                100 * cases[a].rate, cases[a].steps, found, seeds, as_trend, covered, others);
        T_CHECK(found >= seeds * 9 / 10);
        T_CHECK(as_trend >= found * 85 / 100);
        T_CHECK(covered >= as_trend * 8 / 10);
        T_CHECK(others <= seeds / 5);
    }
}

/* A function that appears (or goes) with 3% of the group, and one that appears with too
 * little to matter. */
static void test_new_gone(void)
{
    for (int kind = NEW; kind <= GONE; kind++) {
        uint32_t found = 0, right = 0, at_ok = 0;
        const uint32_t seeds = 20;
        for (uint32_t s = 0; s < seeds; s++) {
            seed(9000 + 100 * kind + s);
            struct sc_changes *c = sc_changes_new(NULL);
            struct plan pl = {(enum plant)kind, 5, 0, (uint32_t)(10 + unif() * 40), 0.03};
            simulate(&G, 40, 60, 20000, 0, &pl);
            T_EQ_INT(add_group(c, &G, 0), 0);
            struct sc_change *out = NULL;
            uint32_t n = run(c, &out);
            for (uint32_t i = 0; i < n; i++) {
                if (out[i].function != 5)
                    continue;
                found++;
                right += out[i].kind == (kind == NEW ? SC_CHANGE_NEW : SC_CHANGE_GONE);
                at_ok += out[i].at_ns == T0 + (int64_t)pl.at * STEP_NS;
                if (kind == NEW) {
                    T_CHECK(out[i].before == 0 && out[i].after > 0 && isnan(out[i].change_pct));
                } else {
                    T_CHECK(out[i].after == 0 && out[i].before > 0 && out[i].change_pct == -100);
                }
                T_CHECK(isnan(out[i].lo) && isnan(out[i].hi) && isnan(out[i].slope_per_hour));
                if (kind == NEW) /* new sorts first */
                    T_CHECK(i == 0);
            }
            free(out);
            sc_changes_free(c);
        }
        fprintf(stderr, "  %s: found %u/%u, right kind %u, at exactly %u\n",
                kind == NEW ? "new" : "gone", found, seeds, right, at_ok);
        T_EQ_INT(found, seeds);
        T_EQ_INT(right, seeds);
        T_EQ_INT(at_ok, seeds);
    }

    /* present in the last 4 of 60 steps with 3%: still new (the zero run's p-value) */
    int64_t t[60];
    double v[60], tot[60], small[60];
    for (int k = 0; k < 60; k++) {
        t[k] = T0 + k * STEP_NS;
        v[k] = k >= 56 ? 3 + 0.1 * (k % 2) : 0;
        small[k] = k >= 30 ? 0.3 + 0.01 * (k % 3) : 0; /* 0.3% of the group */
        tot[k] = 100;
    }
    struct sc_changes *c = sc_changes_new(NULL);
    char err[SC_ERR_LEN];
    struct sc_changes_input in = {0, 1, 60, t, STEP_NS, v, tot};
    T_EQ_INT(sc_changes_add(c, &in, err), 0);
    struct sc_changes_input in2 = {0, 2, 60, t, STEP_NS, small, tot};
    T_EQ_INT(sc_changes_add(c, &in2, err), 0);
    struct sc_change *out = NULL;
    uint32_t n = run(c, &out);
    T_EQ_INT(n, 1); /* not the small one: below min_share */
    if (n >= 1) {
        T_EQ_INT(out[0].function, 1);
        T_EQ_INT(out[0].kind, SC_CHANGE_NEW);
        T_EQ_INT(out[0].at_ns, t[56]);
    }
    free(out);
    sc_changes_free(c);
    /* with min_share 0.001 the small one is new too */
    struct sc_changes_opts o = {0.05, 0.001};
    c = sc_changes_new(&o);
    T_EQ_INT(sc_changes_add(c, &in2, err), 0);
    n = run(c, &out);
    T_EQ_INT(n, 1);
    if (n == 1)
        T_CHECK(out[0].kind == SC_CHANGE_NEW && out[0].at_ns == t[30]);
    free(out);
    sc_changes_free(c);
}

/* A hot function (a quarter of the group) with heavy-tailed bursts and no change: big
 * swings, nothing to report. */
static void test_bursty(void)
{
    for (int kind = BURSTY; kind <= BURSTS; kind++) {
        const uint32_t seeds = 200;
        uint32_t flagged = 0, any = 0;
        double maxswing = 0;
        for (uint32_t s = 0; s < seeds; s++) {
            seed(20000 + 1000 * kind + s);
            struct sc_changes *c = sc_changes_new(NULL);
            struct plan pl = {(enum plant)kind, 0, 0, 0, 0.25};
            simulate(&G, 50, 288, 20000, 0.03, &pl);
            double lo = INFINITY, hi = 0;
            for (uint32_t k = 0; k < 288; k++) {
                if (isnan(G.v[0][k]))
                    continue;
                lo = fmin(lo, G.v[0][k]);
                hi = fmax(hi, G.v[0][k]);
            }
            maxswing = fmax(maxswing, hi / lo);
            T_EQ_INT(add_group(c, &G, 0), 0);
            struct sc_change *out = NULL;
            uint32_t n = run(c, &out);
            any += n > 0;
            for (uint32_t i = 0; i < n; i++) {
                flagged += out[i].function == 0;
                show("bursty", &out[i]);
            }
            free(out);
            sc_changes_free(c);
            if (s == 0)
                T_EQ_INT(n, 0);
        }
        fprintf(stderr,
                "  bursty hot function (%s), no change (largest swing x%.0f): flagged in %u of %u "
                "seeds, any finding in %u\n",
                kind == BURSTY ? "8% of steps" : "runs of 1-4 steps", maxswing, flagged, seeds,
                any);
        T_CHECK(maxswing > 5); /* the bursts are there */
        T_CHECK(flagged <= seeds * 3 / 100);
        T_CHECK(any <= seeds * 8 / 100);
    }
}

/* A/A: nothing changes, 100 functions (hot, cold and sparse ones) over 288 steps, 200
 * seeds: the share of seeds with any finding is about the level or under (Benjamini-
 * Hochberg under no change at all controls exactly that). */
static void test_aa(void)
{
    const uint32_t seeds = getenv("CHANGES_SEEDS") ? (uint32_t)atoi(getenv("CHANGES_SEEDS")) : 200;
    uint32_t any = 0, total = 0;
    for (uint32_t s = 0; s < seeds; s++) {
        seed(40000 + s);
        struct sc_changes *c = sc_changes_new(NULL);
        simulate(&G, 100, 288, 20000, 0.03, NULL);
        T_EQ_INT(add_group(c, &G, 0), 0);
        struct sc_change *out = NULL;
        uint32_t n = run(c, &out);
        any += n > 0;
        total += n;
        free(out);
        sc_changes_free(c);
    }
    /* short series: 12 steps, with few samples (many zeros) */
    uint32_t any_short = 0;
    for (uint32_t s = 0; s < seeds; s++) {
        seed(60000 + s);
        struct sc_changes *c = sc_changes_new(NULL);
        simulate(&G, 100, 12, 500, 0, NULL);
        T_EQ_INT(add_group(c, &G, 0), 0);
        struct sc_change *out = NULL;
        any_short += run(c, &out) > 0;
        free(out);
        sc_changes_free(c);
    }
    fprintf(stderr,
            "  A/A, 100 functions x 288 steps: a finding in %u of %u seeds (%u in all); "
            "12 sparse steps: in %u of %u\n",
            any, seeds, total, any_short, seeds);
    T_CHECK(any <= seeds * 7 / 100);
    T_CHECK(any_short <= seeds * 7 / 100);
}

/* The p-value of one function under no change: at or under its level (each function alone
 * in its batch, where q = p). */
static void test_null_p(void)
{
    static const uint32_t steps[] = {288, 60, 12, 288};
    static const double samples[] = {20000, 20000, 20000, 300}; /* the last: sparse */
    for (size_t a = 0; a < sizeof steps / sizeof *steps; a++) {
        uint32_t tests = 0, hit[3] = {0, 0, 0};
        static const double lv[3] = {0.05, 0.01, 0.001};
        struct sc_changes_opts o = {0.5, 0};
        for (uint32_t s = 0; s < 100; s++) {
            seed(70000 + 1000 * a + s);
            simulate(&G, 100, steps[a], samples[a], 0.03, NULL);
            for (uint32_t f = 0; f < G.nf; f++) {
                struct sc_changes *c = sc_changes_new(&o);
                struct sc_changes_input in = {0, f, G.ns, G.t, STEP_NS, G.v[f], G.total};
                char err[SC_ERR_LEN];
                T_EQ_INT(sc_changes_add(c, &in, err), 0);
                struct sc_change *out = NULL;
                uint32_t n = 0;
                T_EQ_INT(sc_changes_run(c, &out, &n, err), 0);
                tests++;
                for (int l = 0; l < 3; l++)
                    hit[l] += n == 1 && out[0].p <= lv[l];
                free(out);
                sc_changes_free(c);
            }
        }
        fprintf(stderr,
                "  null p-values, %u steps, %.0f samples a step: P(p <= 0.05) = %.4f, 0.01: %.4f, "
                "0.001: %.5f\n",
                steps[a], samples[a], (double)hit[0] / tests, (double)hit[1] / tests,
                (double)hit[2] / tests);
        T_CHECK(hit[0] <= tests * 0.055);
        T_CHECK(hit[1] <= tests * 0.012);
        T_CHECK(hit[2] <= tests * 0.0015);
    }
}

/* Degenerate input: no crash, no finding, no NaN. */
static void test_degenerate(void)
{
    int64_t t[300];
    double v[300], tot[300];
    for (int k = 0; k < 300; k++)
        t[k] = T0 + k * STEP_NS;
    struct sc_changes *c = sc_changes_new(NULL);
    char err[SC_ERR_LEN];
    uint32_t fn = 0;
#define ADD(nsteps)                                                                                \
    do {                                                                                           \
        struct sc_changes_input in = {0, fn++, (nsteps), t, STEP_NS, v, tot};                      \
        T_EQ_INT(sc_changes_add(c, &in, err), 0);                                                  \
    } while (0)
    for (int k = 0; k < 300; k++)
        v[k] = tot[k] = NAN;
    ADD(300); /* all NaN */
    for (int k = 0; k < 300; k++) {
        v[k] = 0;
        tot[k] = 10;
    }
    ADD(300); /* zeros */
    for (int k = 0; k < 300; k++)
        v[k] = 7;
    ADD(300); /* constant */
    v[0] = 1;
    v[1] = 100;
    ADD(0);
    ADD(1);
    ADD(2);
    ADD(5);                       /* too few to test */
    for (int k = 0; k < 300; k++) /* equal but for the last bit from the middle on */
        v[k] = k < 150 ? 8388608 : nextafter(8388608, 0);
    ADD(300);
    for (int k = 0; k < 300; k++) /* and rounding noise of a few bits throughout */
        v[k] = 8388608 * (1 + (double)((k * 7919) % 5 - 2) * 1.1e-16) * (k < 150 ? 1 : 1 - 4e-16);
    ADD(300);
    for (int k = 0; k < 300; k++)
        v[k] = 1e306 * (1 + 0.1 * sin(k * 1.7)); /* huge, no change */
    ADD(300);
    for (int k = 0; k < 300; k++)
        v[k] = -1 - (k >= 150); /* negative: not a profile's value, not tested */
    ADD(300);
    for (int k = 0; k < 300; k++)
        v[k] = k % 2 ? INFINITY : 1;
    ADD(300);
    for (int k = 0; k < 300; k++)
        v[k] = k % 3 ? 0 : 5e-320; /* denormals */
    ADD(300);
    struct sc_change *out = NULL;
    uint32_t n = run(c, &out);
    T_EQ_INT(n, 0);
    T_CHECK(out == NULL);
    free(out);
    sc_changes_free(c);

    /* huge values that do change: finite estimates */
    c = sc_changes_new(NULL);
    for (int k = 0; k < 300; k++) {
        v[k] = 1e306 * (1 + 0.1 * sin(k * 1.7)) * (k >= 100 ? 1.5 : 1);
        tot[k] = 1.7e308;
    }
    ADD(300);
    n = run(c, &out);
    T_EQ_INT(n, 1);
    if (n == 1)
        T_CHECK(isfinite(out[0].before) && isfinite(out[0].after) && isfinite(out[0].lo) &&
                isfinite(out[0].hi) && out[0].at_ns == t[100]);
    free(out);
    sc_changes_free(c);
#undef ADD

    /* bad arguments: an error, not a crash */
    c = sc_changes_new(NULL);
    struct sc_changes_input bad = {0, 0, 10, NULL, STEP_NS, v, tot};
    T_EQ_INT(sc_changes_add(c, &bad, err), SC_EINVAL);
    int64_t back[3] = {3, 2, 1};
    struct sc_changes_input bad2 = {0, 0, 3, back, STEP_NS, v, tot};
    T_EQ_INT(sc_changes_add(c, &bad2, err), SC_EINVAL);
    T_CHECK(strstr(err, "increasing") != NULL);
    /* no totals: new and gone are told without the share rule */
    for (int k = 0; k < 30; k++)
        v[k] = k < 10 ? 0 : 1 + 0.1 * (k % 4);
    struct sc_changes_input nototal = {0, 1, 30, t, STEP_NS, v, NULL};
    T_EQ_INT(sc_changes_add(c, &nototal, err), 0);
    n = run(c, &out);
    T_EQ_INT(n, 1);
    if (n == 1)
        T_CHECK(out[0].kind == SC_CHANGE_NEW && out[0].at_ns == t[10]);
    free(out);
    /* run twice: the same answer */
    n = run(c, &out);
    T_EQ_INT(n, 1);
    free(out);
    sc_changes_free(c);
    sc_changes_free(NULL);

    /* bad options fall back to the defaults */
    struct sc_changes_opts o = {NAN, -1};
    c = sc_changes_new(&o);
    T_CHECK(c != NULL);
    sc_changes_free(c);
}

/* Findings come largest relative change first, new ones before all. */
static void test_order(void)
{
    int64_t t[50];
    double a[50], b[50], d[50], tot[50];
    for (int k = 0; k < 50; k++) {
        t[k] = T0 + k * STEP_NS;
        a[k] = (k < 25 ? 10 : 12) + 0.1 * (k % 3);           /* +20% */
        b[k] = (k < 30 ? 10 : 30) + 0.1 * (k % 3);           /* +200% */
        d[k] = (k < 20 ? 0 : 5) + 0.1 * (k % 3) * (k >= 20); /* new */
        tot[k] = 100;
    }
    struct sc_changes *c = sc_changes_new(NULL);
    char err[SC_ERR_LEN];
    struct sc_changes_input ia = {0, 0, 50, t, STEP_NS, a, tot},
                            ib = {1, 1, 50, t, STEP_NS, b, tot},
                            id = {2, 2, 50, t, STEP_NS, d, tot};
    T_EQ_INT(sc_changes_add(c, &ia, err), 0);
    T_EQ_INT(sc_changes_add(c, &ib, err), 0);
    T_EQ_INT(sc_changes_add(c, &id, err), 0);
    struct sc_change *out = NULL;
    uint32_t n = run(c, &out);
    T_EQ_INT(n, 3);
    if (n == 3) {
        T_EQ_INT(out[0].function, 2);
        T_EQ_INT(out[1].function, 1);
        T_EQ_INT(out[2].function, 0);
        T_EQ_INT(out[1].at_ns, t[30]);
    }
    free(out);
    sc_changes_free(c);
}

/* The size of the goal in docs/benchmarks.md: 100 groups x 200 functions x 288 steps (the
 * time is printed, not asserted). */
static void test_speed(void)
{
    seed(77);
    simulate(&G, 200, 288, 20000, 0.03, NULL);
    struct timespec a, b, ca, cb;
    clock_gettime(CLOCK_MONOTONIC, &a);
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ca);
    struct sc_changes *c = sc_changes_new(NULL);
    for (uint32_t g = 0; g < 100; g++)
        T_EQ_INT(add_group(c, &G, g), 0);
    struct sc_change *out = NULL;
    uint32_t n = 0;
    char err[SC_ERR_LEN];
    T_EQ_INT(sc_changes_run(c, &out, &n, err), 0);
    clock_gettime(CLOCK_MONOTONIC, &b);
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &cb);
    free(out);
    sc_changes_free(c);
    fprintf(stderr,
            "  100 groups x 200 functions x 288 steps: %.3f s (%.3f s of CPU), %u findings\n",
            (double)(b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) / 1e9,
            (double)(cb.tv_sec - ca.tv_sec) + (cb.tv_nsec - ca.tv_nsec) / 1e9, n);
}

int main(void)
{
    T_RUN(test_kind_names);
    T_RUN(test_split_p);
    T_RUN(test_clean_step);
    T_RUN(test_order);
    T_RUN(test_degenerate);
    T_RUN(test_new_gone);
    T_RUN(test_clean_steps);
    T_RUN(test_recent_step);
    T_RUN(test_steps);
    T_RUN(test_trends);
    T_RUN(test_bursty);
    T_RUN(test_null_p);
    T_RUN(test_aa);
    T_RUN(test_speed);
    return t_done();
}
