/* changes.h - changes over time in functions' values, told from the noise between profiles:
 * a step (a shift at one time: a deploy, a config or load change), a trend (steady growth
 * or decline: a leak), a new or a gone function, with the false discovery rate controlled
 * over every function and time point tested (Benjamini-Hochberg over all the batch's
 * tests). Pure arithmetic on arrays: sc_plan_changes (plan.h) reads the store and calls it.
 * The method and its assumptions are in docs/changes.md. */
#ifndef SC_CHANGES_H
#define SC_CHANGES_H

#include <stdint.h>

enum sc_change_kind { SC_CHANGE_STEP, SC_CHANGE_TREND, SC_CHANGE_NEW, SC_CHANGE_GONE };

/* "step", "trend", "new", "gone". */
const char *sc_change_kind_name(enum sc_change_kind k);

/* One function of one group over time: the steps of a timeline (query/metric.h's metric:
 * a rate, an average or a value per profile, in the timeline's unit). */
struct sc_changes_input {
    uint32_t group, function; /* the caller's indices, handed back in its findings */
    uint32_t nsteps;
    const int64_t *t;    /* each step's start, ns, increasing */
    int64_t step_ns;     /* the steps' width */
    const double *value; /* the function's value per step; NaN: the group had no profile */
    const double *total; /* the group's value per step (every function); NaN as value;
                            NULL: new and gone without the min_share rule */
};

struct sc_changes_opts {
    double level;     /* false discovery rate (default 0.05): reported when q <= level */
    double min_share; /* new/gone: the share of the group's total the function must hold on
                         the side where it is present (default 0.01) */
};
#define SC_CHANGES_OPTS_INIT                                                                       \
    {                                                                                              \
        0.05, 0.01                                                                                 \
    }

/* A finding. Fields that do not apply to its kind are NaN (at_ns: 0). */
struct sc_change {
    uint32_t group, function;
    enum sc_change_kind kind;
    int64_t at_ns;         /* step: the first step after the shift; new: the first step with
                              the function; gone: the first step without it */
    double before, after;  /* step, new, gone: the means before and after at_ns; trend: the
                              fitted values at the range's first and last step */
    double change_pct;     /* 100 * (after / before - 1); NaN for new (before is 0) */
    double lo, hi;         /* 95% interval: of change_pct (step), of slope_per_hour (trend) */
    double slope_per_hour; /* trend: the value's change per hour, in its unit */
    double p, q;           /* the test's p-value and its Benjamini-Hochberg q-value */
};

struct sc_changes;

/* A batch of tests; NULL opts: SC_CHANGES_OPTS_INIT. NULL when out of memory. */
struct sc_changes *sc_changes_new(const struct sc_changes_opts *o);
/* Tests one function (the arrays are read during the call only). Not tested, silently: a
 * function with fewer than 6 steps with profiles, a constant one, one with a negative or
 * infinite value. 0, SC_ENOMEM, or SC_EINVAL (no times or values, times not increasing). */
int sc_changes_add(struct sc_changes *c, const struct sc_changes_input *in, char *err);
/* Adjusts every test's p-value over the batch and gives the findings with q <= level,
 * largest |change| first (trends by their change over the range), in *out (the caller
 * frees it; NULL when none) with *n of them. The batch is left as it was: more tests may be
 * added and it run again. 0 or SC_ENOMEM. */
int sc_changes_run(struct sc_changes *c, struct sc_change **out, uint32_t *n, char *err);
void sc_changes_free(struct sc_changes *c);

#endif
