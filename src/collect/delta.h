/* delta.h - scraped cumulative profiles into per-interval deltas; sample type selection. */
#ifndef SC_DELTA_H
#define SC_DELTA_H

#include <stdint.h>

#include "model/hash.h"
#include "model/profile.h"

/* Keeps only the sample types named in names (in that order) and drops the samples whose
 * kept values are all zero: a Go heap profile becomes inuse_objects/inuse_space, an allocs
 * profile alloc_objects/alloc_space. The default sample type becomes the last kept type.
 * p must hold its samples (not lazy). 0, SC_ENOTFOUND (a type is missing; err lists the
 * profile's types) or SC_ENOMEM. */
int sc_profile_keep_types(struct sc_profile *p, const char *const *names, uint32_t n, char *err);

/* Drops the samples whose values are all zero (they carry nothing). */
void sc_profile_drop_zero_samples(struct sc_profile *p);

/* The baseline of one cumulative series: the values of the previous scrape per stack.
 *
 * A stack is keyed by its locations (address and inlined lines: function name and line,
 * leaf first) plus the sample's labels (Go's heap profiles carry a numeric "bytes" label:
 * its buckets are per stack and allocation size, so the size is part of the identity, as
 * in pprof's own merge). Two samples with the same key are summed.
 *
 * A plain value type: sc_delta_init / sc_delta_release. */
struct sc_delta {
    struct sc_map64 index; /* stack key -> row */
    int64_t *values;       /* rows * ntypes, the previous scrape's values */
    uint32_t rows, cap;
    uint32_t ntypes;
    uint64_t types_hash; /* the sample types (names and units) of the baseline */
    int have;            /* a baseline is set */
};

/* What sc_delta_apply did. */
enum {
    SC_DELTA_DIFF = 0,    /* p now holds new - previous per stack */
    SC_DELTA_FIRST = 1,   /* no usable baseline (first scrape, or the sample types changed):
                             p only became the baseline and holds nothing to store */
    SC_DELTA_RESTART = 2, /* the counters went down, so the target restarted: p is left as
                             scraped (everything since the restart) and is the new baseline */
};

void sc_delta_init(struct sc_delta *d);
void sc_delta_release(struct sc_delta *d);
/* Forgets the baseline (the next apply returns SC_DELTA_FIRST). */
void sc_delta_reset(struct sc_delta *d);

/* Turns the cumulative profile p into the difference from the baseline, in place, and makes
 * p's cumulative values the new baseline. Stacks whose delta is zero are dropped; a stack
 * whose counter went down while the totals did not is clamped to zero, so values are never
 * negative.
 *
 * A restart is declared when, in some sample type, the total went down, or the stacks that
 * went down (or vanished) held more than a tenth of the previous total: within one Go
 * process a bucket's counters never decrease and buckets are never removed, so either
 * means a new process. Declaring a restart wrongly would store a whole cumulative profile
 * as one interval, while missing one only under-counts a single interval, so the rule leans
 * towards "no restart".
 *
 * Negative values (no real counter has them) count as zero and sums saturate, so whatever
 * a target sends, the result is never negative.
 *
 * p must hold its samples (not lazy). Returns SC_DELTA_DIFF, SC_DELTA_FIRST,
 * SC_DELTA_RESTART, or a negative SC_E* (the baseline is then forgotten). */
int sc_delta_apply(struct sc_delta *d, struct sc_profile *p, char *err);

#endif
