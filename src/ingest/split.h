/* split.h - sample labels become series labels: a profile splits into one series per set. */
#ifndef SC_SPLIT_H
#define SC_SPLIT_H

#include <stdint.h>

#include "model/error.h"
#include "model/labels.h"
#include "model/partition.h"
#include "model/profile.h"

/* Samples carry labels of their own: pprof labels (Go's pprof.Do, `scorch record`'s pid,
 * tid and comm), OTLP attributes and span links (trace_id, span_id). Selectors, label
 * pickers and timelines work on series labels, so at ingest every distinct set of a
 * sample's string labels becomes its own series: the series labels plus the sample's
 * (a sample label replaces a series label of the same name), as Pyroscope does. Numeric
 * labels (Go's heap "bytes") are not labels of a series and stay out.
 *
 * Names become valid label names (other bytes to '_', a leading digit gets a '_'). A
 * profile may make at most max_sets series, and a series at most SC_SERIES_LABELS_MAX
 * labels: past either, the sample label with the most distinct values is dropped (and the
 * next, until it fits), so a per-request trace_id cannot turn one profile into thousands
 * of series; which names were dropped is reported. A label whose name or a value is too
 * long for a series label is dropped the same way. */

/* Series g of a split profile: labels[g], and parts.views[g] holding its samples (a view
 * over the profile's tables, see model/partition.h). */
struct sc_split {
    uint32_t n; /* 0: nothing to split, store p as it is */
    struct sc_labels *labels;
    struct sc_partition parts;
    char dropped[256]; /* names dropped ("trace_id, span_id") or "" */
};

/* Splits p (samples stored, not lazy; a lazy profile has no labels to split by) under the
 * series labels `series`. 0 or SC_ENOMEM. Release with sc_split_release (also on error). */
int sc_split_profile(const struct sc_profile *p, const struct sc_labels *series, uint32_t max_sets,
                     struct sc_split *out, char *err);
void sc_split_release(struct sc_split *sp);

#endif
