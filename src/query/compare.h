/* compare.h - is a change real? Two sets of profiles compared function by function, with
 * the spread between the profiles of each set as the noise.
 *
 * Each profile added is one replicate of its side: a stored profile or a time bucket of a
 * selection (the server), one file (scorch compare). Per replicate and function the metric
 * is the function's flat (self) and cum (total) value as `scorch top` computes them,
 * divided by the replicate's total when normalising (a share), else by the seconds the
 * replicate covers (a rate), else by the number of captures it merges (when durations are
 * unknown), or taken as it is (gauges: the caller passes neither): query/metric.h's
 * metrics, and the means shown beside the verdicts are exactly these. The sides' means are compared
 * with Welch's t-test on the replicates; the false discovery rate over all tests (flat and cum of
 * every tested function) is controlled with Benjamini-Hochberg. The method and its assumptions are
 * in docs/compare.md. */
#ifndef SC_COMPARE_H
#define SC_COMPARE_H

#include <stdint.h>

#include "model/profile.h"
#include "query/metric.h"

struct sc_cmp_opts {
    int normalize;    /* compare shares of each replicate's total */
    double level;     /* false discovery rate: significant when q < level (default 0.05) */
    double min_share; /* functions whose pooled cum share is below this are not tested */
};
#define SC_CMP_OPTS_INIT                                                                           \
    {                                                                                              \
        0, 0.05, 0.001                                                                             \
    }

/* How the p-values were made, by the number of replicates on each side. */
enum sc_cmp_method {
    SC_CMP_NONE,       /* a side has no replicate: nothing tested */
    SC_CMP_REPLICATES, /* >= 2 on both sides: Welch's t-test on the replicates */
    SC_CMP_ONE_SIDE,   /* 1 on one side: its spread assumed equal to the other side's */
    SC_CMP_SAMPLING,   /* 1 on each side: sampling noise only (binomial test on counts) */
};

/* One function's comparison. Means are of the metric (see above) over each side's
 * replicates; the relative changes are 100 * (new mean / base mean - 1) with a 95%
 * interval, +INFINITY for a function absent from the base, NAN when absent from both. */
struct sc_cmp_stat {
    double base_flat, flat, base_cum, cum;
    double flat_pct, flat_lo, flat_hi;
    double cum_pct, cum_lo, cum_hi;
    double flat_p, cum_p; /* -1: not tested */
    double flat_q, cum_q; /* Benjamini-Hochberg q-values; -1: not tested */
    int tested;
    int significant; /* flat_q or cum_q below the level */
    int direction;   /* of the significant change with the smallest q: +1 grew, -1 shrank */
    int presence;    /* +1 new: absent from every base replicate, present in the new side;
                        -1 gone: the other way round; 0 on both sides (or neither) */
};

/* What a comparison says of a function, in one word (the API's `status`): "new" and
 * "gone" (absent on one side: news whatever its spread), "grew" and "shrank" (significant),
 * "noise" (tested, within the spread between replicates), "untested". */
const char *sc_cmp_status(const struct sc_cmp_stat *st);

struct sc_cmp_summary {
    uint32_t base_n, n;    /* replicates per side */
    uint32_t functions;    /* functions seen on either side */
    uint32_t tested;       /* of them, tested */
    uint32_t grew, shrank; /* significant, by direction */
    uint32_t fresh, gone;  /* present on one side only (sc_cmp_stat.presence) */
    enum sc_cmp_method method;
    int normalized;
    enum sc_metric metric_id;
    const char *metric;   /* its name (query/metric.h): "share", "per_second", ... */
    char metric_unit[80]; /* the unit of the means: "nanoseconds/s", "share", ... */
    double level;
};

struct sc_cmp;

/* A comparison with options o (NULL: SC_CMP_OPTS_INIT). 0 or SC_ENOMEM. */
int sc_cmp_new(const struct sc_cmp_opts *o, struct sc_cmp **out);
void sc_cmp_free(struct sc_cmp *c);

/* Adds one replicate to side 0 (base) or 1 (new): column vi of p, covering `seconds` of
 * time and merging `profiles` profiles (each 0 when unknown or not to be divided by, as
 * for gauges). 0 or SC_E* with detail in err. */
int sc_cmp_add(struct sc_cmp *c, int side, const struct sc_profile *p, int vi, double seconds,
               double profiles, char *err);

/* Computes means, intervals, p- and q-values once every replicate is in. 0 or SC_E*. */
int sc_cmp_finish(struct sc_cmp *c, char *err);

/* The comparison of function `name` (NULL when neither side had it). After finish. */
const struct sc_cmp_stat *sc_cmp_lookup(const struct sc_cmp *c, const char *name, size_t len);

void sc_cmp_summarize(const struct sc_cmp *c, struct sc_cmp_summary *s);

/* "replicates", "replicates-one-side", "sampling", "none": the API's `method`. */
const char *sc_cmp_method_name(enum sc_cmp_method m);
/* One sentence on what the method assumes, for reports. */
const char *sc_cmp_method_text(enum sc_cmp_method m);

#endif
