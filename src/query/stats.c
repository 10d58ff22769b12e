/* stats.c - incomplete beta, Student's t, the binomial test, Welch, Benjamini-Hochberg. */
#include "query/stats.h"
#include "model/error.h"

#include <math.h>
#include <stdlib.h>

/* The continued fraction of I_x(a, b) (modified Lentz), for x < (a + 1) / (a + b + 2),
 * where it converges fast. */
static double beta_cf(double a, double b, double x)
{
    const double tiny = 1e-300, eps = 1e-14;
    double c = 1, d = 1 - (a + b) * x / (a + 1);
    if (fabs(d) < tiny)
        d = tiny;
    d = 1 / d;
    double f = d;
    for (int m = 1; m < 200000; m++) {
        double m2 = 2.0 * m;
        /* even step */
        double num = m * (b - m) * x / ((a + m2 - 1) * (a + m2));
        d = 1 + num * d;
        c = 1 + num / c;
        if (fabs(d) < tiny)
            d = tiny;
        if (fabs(c) < tiny)
            c = tiny;
        d = 1 / d;
        f *= d * c;
        /* odd step */
        num = -(a + m) * (a + b + m) * x / ((a + m2) * (a + m2 + 1));
        d = 1 + num * d;
        c = 1 + num / c;
        if (fabs(d) < tiny)
            d = tiny;
        if (fabs(c) < tiny)
            c = tiny;
        d = 1 / d;
        double delta = d * c;
        f *= delta;
        if (fabs(delta - 1) < eps)
            break;
    }
    return f;
}

double sc_betai(double a, double b, double x)
{
    if (!(x > 0))
        return 0;
    if (!(x < 1))
        return 1;
    double lfront = lgamma(a + b) - lgamma(a) - lgamma(b) + a * log(x) + b * log1p(-x);
    if (x < (a + 1) / (a + b + 2))
        return exp(lfront) * beta_cf(a, b, x) / a;
    return 1 - exp(lfront) * beta_cf(b, a, 1 - x) / b;
}

double sc_t_p2(double t, double df)
{
    if (isnan(t) || !(df > 0))
        return 1;
    if (isinf(t))
        return 0;
    double p = sc_betai(df / 2, 0.5, df / (df + t * t));
    return p < 0 ? 0 : p > 1 ? 1 : p;
}

double sc_t_quantile2(double p, double df)
{
    if (!(p > 0) || !(p < 1) || !(df > 0))
        return NAN;
    double lo = 0, hi = 1;
    while (sc_t_p2(hi, df) > p && hi < 1e12)
        hi *= 2;
    for (int i = 0; i < 200 && hi - lo > 1e-12 * hi; i++) {
        double mid = (lo + hi) / 2;
        if (sc_t_p2(mid, df) > p)
            lo = mid;
        else
            hi = mid;
    }
    return (lo + hi) / 2;
}

/* P(Z >= z) for a standard normal Z. */
static double norm_upper(double z)
{
    return 0.5 * erfc(z / sqrt(2.0));
}

double sc_binom_p2(double k, double n, double p0)
{
    if (!(n > 0) || k < 0 || k > n || !(p0 >= 0 && p0 <= 1))
        return 1;
    if (p0 == 0)
        return k == 0 ? 1 : 0;
    if (p0 == 1)
        return k == n ? 1 : 0;
    double mean = n * p0, sd = sqrt(n * p0 * (1 - p0));
    double lower, upper; /* P(X <= k), P(X >= k) */
    if (n > 1e6 && mean > 1000 && n - mean > 1000) {
        lower = 1 - norm_upper((k + 0.5 - mean) / sd);
        upper = norm_upper((k - 0.5 - mean) / sd);
    } else {
        /* P(X >= k) = I_p0(k, n - k + 1); P(X <= k) = I_{1-p0}(n - k, k + 1) */
        upper = k <= 0 ? 1 : sc_betai(k, n - k + 1, p0);
        lower = k >= n ? 1 : sc_betai(n - k, k + 1, 1 - p0);
    }
    double p = 2 * (lower < upper ? lower : upper);
    return p > 1 ? 1 : p < 0 ? 0 : p;
}

double sc_welch(double m0, double v0, double n0, double m1, double v1, double n1, double *se,
                double *df)
{
    *se = NAN;
    *df = NAN;
    if (n0 < 1 || n1 < 1 || n0 + n1 < 3)
        return -1;
    double a, b;
    if (n0 < 2 || n1 < 2) {
        /* one observation on one side: the other side's spread for both */
        double v = n0 < 2 ? v1 : v0;
        a = v / n0;
        b = v / n1;
        *df = (n0 < 2 ? n1 : n0) - 1;
    } else {
        a = v0 / n0;
        b = v1 / n1;
        double den = a * a / (n0 - 1) + b * b / (n1 - 1);
        *df = den > 0 ? (a + b) * (a + b) / den : n0 + n1 - 2;
    }
    *se = sqrt(a + b);
    double d = m1 - m0;
    if (!(*se > 0))
        return d == 0 ? 1 : 0;
    return sc_t_p2(d / *se, *df);
}

struct pidx {
    double p;
    uint32_t i;
};

static int cmp_pidx(const void *x, const void *y)
{
    const struct pidx *a = x, *b = y;
    if (a->p != b->p)
        return a->p < b->p ? -1 : 1;
    return a->i < b->i ? -1 : a->i > b->i;
}

int sc_bh_adjust(double *p, uint32_t n)
{
    uint32_t m = 0;
    for (uint32_t i = 0; i < n; i++)
        m += p[i] >= 0;
    if (m == 0)
        return 0;
    struct pidx *v = malloc((size_t)m * sizeof *v);
    if (!v)
        return SC_ENOMEM;
    for (uint32_t i = 0, j = 0; i < n; i++)
        if (p[i] >= 0)
            v[j++] = (struct pidx){p[i], i};
    qsort(v, m, sizeof *v, cmp_pidx);
    double run = 1;
    for (uint32_t j = m; j-- > 0;) {
        double q = v[j].p * m / (j + 1);
        if (q < run)
            run = q;
        p[v[j].i] = run;
    }
    free(v);
    return 0;
}

double sc_binom_cdf(double k, double n, double p0)
{
    k = floor(k);
    if (k < 0)
        return 0;
    if (k >= n)
        return 1;
    return sc_betai(n - k, k + 1, 1 - p0); /* P(X <= k) = I_{1-p0}(n - k, k + 1) */
}

double sc_norm_p2(double z)
{
    if (isnan(z))
        return 1;
    return erfc(fabs(z) / sqrt(2.0));
}

/* Siegmund's overshoot correction nu(x) for a Gaussian random walk crossing a boundary,
 * in his closed-form approximation (accurate to about 1% for x < 3). */
static double siegmund_nu(double x)
{
    if (!(x > 1e-9))
        return 1;
    double h = x / 2, phi = exp(-h * h / 2) / sqrt(2 * M_PI), cdf = 1 - norm_upper(h);
    return (2 / x) * (cdf - 0.5) / (h * cdf + phi);
}

double sc_split_max_p(double b, uint32_t n, uint32_t m)
{
    if (isnan(b) || m < 1 || n < 2 * m)
        return 1;
    b = fabs(b);
    double single = sc_norm_p2(b); /* the first split alone */
    if (n == 2 * m)
        return single;
    /* Z_k as a process in u = log(t / (1 - t)) / 2, t = k / n, is an Ornstein-Uhlenbeck
     * process (correlation exp(-|du|)); its rate of upcrossings of b is b phi(b) per unit
     * of u, times nu(b sqrt(2 du/dk)) for the discrete steps, du/dk = 1 / (2n t(1 - t)).
     * Simpson's rule over u: the integrand is smooth, 32 panels are plenty. */
    double t0 = (double)m / n, t1 = (double)(n - m) / n;
    double u0 = 0.5 * log(t0 / (1 - t0)), u1 = 0.5 * log(t1 / (1 - t1));
    const int panels = 32;
    double h = (u1 - u0) / panels, sum = 0;
    for (int i = 0; i <= panels; i++) {
        double u = u0 + i * h, t = 1 / (1 + exp(-2 * u));
        double f = siegmund_nu(b / sqrt((double)n * t * (1 - t)));
        sum += f * (i == 0 || i == panels ? 1 : i % 2 ? 4 : 2);
    }
    double integral = sum * h / 3;
    double phi = exp(-b * b / 2) / sqrt(2 * M_PI);
    double p = single + 2 * b * phi * integral;
    return p > 1 ? 1 : p;
}
