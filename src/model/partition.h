/* partition.h - a profile's samples cut into groups, each a view over the shared tables. */
#ifndef SC_PARTITION_H
#define SC_PARTITION_H

#include <stdint.h>

#include "model/profile.h"

/* Group g's view is a shallow copy of the profile (its strings, locations, functions and
 * labels shared) holding only the samples i with group[i] == g, in their order, with their
 * own sample and value arrays: read it, never free or grow it, and keep the profile alive
 * while it is used. Splitting a pushed profile by its sample labels (ingest/split.c) and a
 * timed selection by time (query/replicates.c) both use it. */
struct sc_partition {
    struct sc_profile *views; /* n views */
    uint32_t n;
    struct sc_sample *samples; /* the views' samples, group after group */
    int64_t *values;
};

/* Cuts p (samples stored, not lazy) by group[i] < ngroups for sample i. 0 or SC_ENOMEM.
 * Release with sc_partition_release (also after an error). */
int sc_partition_profile(const struct sc_profile *p, const uint32_t *group, uint32_t ngroups,
                         struct sc_partition *out);
void sc_partition_release(struct sc_partition *pt);

#endif
