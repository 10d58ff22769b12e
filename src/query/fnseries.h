/* fnseries.h - functions over time: each function's self (flat) and total (cum) value per
 * step of a timeline, per series or group_by value, in the timeline's metric and unit
 * (query/metric.h), so a function's line and the timeline's agree (the self values of all
 * functions of a step sum to the timeline's value; of those kept, to at most it): the
 * timeline's value split by the
 * functions' shares of the step's stack rows, read per bucket from the store's rollups, each
 * distinct stack resolved once (fnseries.c). */
#ifndef SC_FNSERIES_H
#define SC_FNSERIES_H

#include <stdint.h>

#include "query/metric.h"
#include "query/plan.h"

struct sc_fnseries {
    int64_t from, step; /* ns */
    uint32_t nsteps;
    uint32_t ngroups;
    char **keys;       /* per group: its group_by value, or (no group_by) its series'
                          canonical labels */
    const char *group; /* the group_by label, or NULL */
    uint32_t nfuncs;
    char **names; /* the functions kept by any group: the asked one, or the heaviest (by
                     total over the range and every group first, ties by name) */
    /* Each group's functions: group_func[group_first[g] .. group_first[g + 1]) are indexes
     * into names, ascending; group_first has ngroups + 1 entries. Every group has every
     * function unless the heaviest were chosen per group (group_by, no function asked). */
    uint32_t *group_first, *group_func;
    enum sc_metric metric;
    char unit[80];
    double *total;      /* ngroups x nsteps: the timeline's values; NaN: no profile */
    double *self, *cum; /* a line of nsteps values per group and function of it: group g's
                           j-th function (group_func[group_first[g] + j]) at step k is
                           (group_first[g] + j) * nsteps + k; NaN where total is. cum is
                           NULL when only self values were asked for */
};

/* Fills f for s (step 0: as sc_plan_timeline picks it; at least 1 s). self_only: the self
 * values alone (f->cum NULL), the same as with the totals: a row then counts for its leaf's
 * function only, not for every function its stack holds. function: that function
 * only (its exact name; kept even when it has no value: a line of zeros where there are
 * profiles); NULL: the max_funcs functions (0: every one) with the largest total over the
 * range (the range's merged values, as the flame graph of it has them), ties by name: with
 * group_by, each group's own heaviest by its own total (so a light group is not left without
 * functions by heavy ones), else those of all series together, every line having them. f->
 * group is group_by itself (borrowed); the rest is f's, freed by sc_fnseries_release (also
 * after a failure). fnseries.c's top comment says how the values are made and what they
 * cost. 0, or SC_EINVAL / SC_ELIMIT with the reason (steps or cells over their limits,
 * SC_TIMELINE_MAX_CELLS for the lines' functions x steps and for the series' functions),
 * SC_E*. */
int sc_plan_fnseries(struct sc_store *st, const char *tenant, const struct sc_selection *s,
                     int64_t step_ns, const char *group_by, const char *function,
                     uint32_t max_funcs, int self_only, struct sc_fnseries *f, char *err);
void sc_fnseries_release(struct sc_fnseries *f);

/* Group g's line of function fi (an index into f->names) in v (f->self or f->cum): its
 * nsteps values, or NULL when g does not keep fi (or either is out of range, or v is NULL). */
const double *sc_fnseries_line(const struct sc_fnseries *f, const double *v, uint32_t g,
                               uint32_t fi);

/* Function fi's line in the timeline's JSON (sc_timeline_write_json, s the selection f was
 * planned for) with "function" and "value" ("self" or "total") added: its self values when
 * self, else its total (cum) ones; null where the timeline is, and in a group that does not
 * keep fi. */
void sc_fnseries_write_json(const struct sc_fnseries *f, uint32_t fi, int self,
                            const struct sc_selection *s, struct sc_buf *out);

#endif
