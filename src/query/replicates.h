/* replicates.h - a stored selection cut into the replicates of a comparison. */
#ifndef SC_REPLICATES_H
#define SC_REPLICATES_H

#include <stdint.h>

#include "query/compare.h"
#include "query/filter.h"
#include "store/store.h"

/* The most replicates a stored selection is cut into by default: enough for the t-test's
 * degrees of freedom, few enough that a month costs about what an hour does. */
#define SC_REPLICATES_DEFAULT 60
#define SC_REPLICATES_MAX 1000
/* Ranges up to ten minutes of timestamped samples are cut by time (see sc_replicates_add),
 * into spans of at least this many samples. */
#define SC_REPLICATES_TIMED_RANGE (600 * 1000000000LL)
#define SC_REPLICATES_TIMED_MIN 50

/* The bucket width that cuts [from, until) into at most max buckets: whole seconds, a
 * multiple of ten minutes from ten minutes up and of an hour from an hour up, so long
 * ranges read rollups. */
int64_t sc_replicates_width(int64_t from_ns, int64_t until_ns, uint32_t max);

/* Adds the replicates of q to side `side` of c: the span of q's range that holds profiles
 * cut into at most max buckets (sc_replicates_width), each non-empty bucket one replicate
 * (filtered by filter when it is not NULL, as the merged selection is), its values per
 * second of the profiles it merges (per profile when their durations are unknown; as they
 * are for gauges). A range of at most SC_REPLICATES_TIMED_RANGE that holds timestamped
 * samples is cut by their times instead (spans of at least SC_REPLICATES_TIMED_MIN samples,
 * values per second of span), so two selections inside one recording still compare with
 * replicates. *added counts them. 0 (also for an unknown type: nothing added) or SC_E*. */
int sc_replicates_add(struct sc_store *s, const struct sc_store_query *q,
                      const struct sc_filter *filter, struct sc_cmp *c, int side, uint32_t max,
                      uint32_t *added, char *err);

#endif
