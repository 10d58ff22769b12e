/* stats.h - the few distributions and tests the noise-aware comparison needs. */
#ifndef SC_STATS_H
#define SC_STATS_H

#include <stdint.h>

/* The regularized incomplete beta function I_x(a, b) for a, b > 0 and 0 <= x <= 1
 * (continued fraction, relative accuracy about 1e-12). */
double sc_betai(double a, double b, double x);

/* Two-sided p-value of Student's t statistic t with df degrees of freedom (df > 0; df may
 * be fractional, as Welch's is): P(|T| >= |t|). */
double sc_t_p2(double t, double df);

/* The t with P(|T| >= t) = p for df degrees of freedom (0 < p < 1): the half-width factor
 * of a (1 - p) confidence interval, 2.776 for p = 0.05 and df = 4. */
double sc_t_quantile2(double p, double df);

/* Two-sided exact binomial test: k successes in n trials with success probability p0;
 * p = min(1, 2 * min(P(X <= k), P(X >= k))). Large n uses the normal approximation with
 * continuity correction (where the two agree to better than 1e-4). */
double sc_binom_p2(double k, double n, double p0);

/* Welch's two-sample t-test of means m0 (variance v0 over n0 observations) and m1 (v1,
 * n1). When one side has a single observation its variance is taken as the other side's
 * (the replicate spread is assumed the same on both sides). Fills the difference's
 * standard error and degrees of freedom and returns the two-sided p-value; with a zero
 * standard error the p-value is 1 for equal means and 0 otherwise. Needs n0 + n1 >= 3
 * and n0, n1 >= 1; returns -1 otherwise. */
double sc_welch(double m0, double v0, double n0, double m1, double v1, double n1, double *se,
                double *df);

/* P(X <= k) for X binomial with n trials and success probability p0 (0 < p0 < 1). */
double sc_binom_cdf(double k, double n, double p0);

/* Two-sided p-value of a standard normal z: P(|Z| >= |z|) (1 for NaN). */
double sc_norm_p2(double z);

/* The p-value of the largest standardized two-sample statistic over the split points of a
 * series of n exchangeable observations: b = max |Z_k| for m <= k <= n - m, where Z_k
 * compares the first k observations with the other n - k (each Z_k standard normal under
 * no change, as a rank-sum z is). P(max |Z_k| >= b) from the maximum of a standardized
 * Brownian bridge (an Ornstein-Uhlenbeck process in log(t / (1 - t)) / 2), with Siegmund's
 * correction for the discrete split points (James, James and Siegmund 1987): accounts for
 * every split tried, accurate in the tail (p < 0.1), conservative above. 1 when no split
 * fits (n < 2m) or b is NaN. */
double sc_split_max_p(double b, uint32_t n, uint32_t m);

/* Benjamini-Hochberg: replaces p[i] by its q-value (the smallest false discovery rate at
 * which it would be rejected) for the n entries with p[i] >= 0; entries < 0 (tests not
 * made) are left alone and do not count. 0 or SC_ENOMEM. */
int sc_bh_adjust(double *p, uint32_t n);

#endif
