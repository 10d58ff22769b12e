/* t_sim.h - random numbers for the statistics tests' simulated profiles: a seeded uniform
 * (splitmix64), the normal, gamma and Poisson distributions. Header-only: one generator per
 * test program. */
#ifndef T_SIM_H
#define T_SIM_H

#include <math.h>
#include <stdint.h>

static uint64_t rng_state;

static inline double unif(void)
{
    /* splitmix64 */
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    z ^= z >> 31;
    return ((double)(z >> 11) + 0.5) / 9007199254740992.0;
}

static inline double normal(void)
{
    return sqrt(-2 * log(unif())) * cos(2 * M_PI * unif());
}

/* Gamma(k, 1) by Marsaglia and Tsang (k >= 1). */
static inline double gamma_k(double k)
{
    double d = k - 1.0 / 3, c = 1 / sqrt(9 * d);
    for (;;) {
        double x = normal(), v = 1 + c * x;
        if (v <= 0)
            continue;
        v = v * v * v;
        double u = unif();
        if (log(u) < 0.5 * x * x + d - d * v + d * log(v))
            return d * v;
    }
}

/* Poisson(mean): by multiplying uniforms, or the normal approximation above 50. */
static inline double poisson(double mean)
{
    if (mean > 50) {
        double x = round(mean + sqrt(mean) * normal());
        return x < 0 ? 0 : x;
    }
    double l = exp(-mean), p = 1;
    int k = 0;
    do {
        k++;
        p *= unif();
    } while (p > l);
    return k - 1;
}

#endif
