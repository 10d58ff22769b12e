/* fnseries.h - functions over time: each function's self (flat) and total (cum) value per
 * step of a timeline, per series or group_by value, in the timeline's metric and unit
 * (query/metric.h), so a function's line and the timeline's agree (the self values of all
 * functions of a step sum to the timeline's value). Read a step at a time from the store's
 * rows (rollups where the steps allow), each distinct stack resolved once. */
#ifndef SC_FNSERIES_H
#define SC_FNSERIES_H

#include <stdint.h>

#include "query/metric.h"
#include "query/plan.h"

struct sc_fnseries {
    int64_t from, step; /* ns */
    uint32_t nsteps;
    uint32_t ngroups;
    char **keys;        /* per group: its group_by value, or (no group_by) its series'
                           canonical labels */
    const char *group;  /* the group_by label, or NULL */
    uint32_t nfuncs;
    char **names;       /* the functions kept: the asked one, or the heaviest by total */
    enum sc_metric metric;
    char unit[80];
    double *total;      /* ngroups x nsteps: the timeline's values; NaN: no profile */
    double *self, *cum; /* ngroups x nfuncs x nsteps (index (g * nfuncs + f) * nsteps + k),
                           NaN where total is */
};

/* Fills f for s (step 0: as sc_plan_timeline picks it). function: that function only (its
 * exact name; kept even when it has no value: a line of zeros where there are profiles);
 * NULL: the max_funcs functions with the largest total over the range and all groups.
 * 0, or SC_EINVAL / SC_ELIMIT with the reason (steps or cells over their limits), SC_E*. */
int sc_plan_fnseries(struct sc_store *st, const char *tenant, const struct sc_selection *s,
                     int64_t step_ns, const char *group_by, const char *function,
                     uint32_t max_funcs, struct sc_fnseries *f, char *err);
void sc_fnseries_release(struct sc_fnseries *f);

#endif
