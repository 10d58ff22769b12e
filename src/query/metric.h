/* metric.h - what the numbers of a timeline and of a comparison are: one vocabulary for both.
 *
 * A series' values over a span of time (a timeline's step, a comparison's bucket) are read
 * as captures (store_int.h: the profiles of one series that start at one instant, summed)
 * and turned into one of these, summed over series:
 *   per_second   sum types (CPU, allocations, contentions) whose captures all have a
 *                duration: the values per second of the time the captures cover (CPU
 *                nanoseconds per second are cores)
 *   per_profile  sum types with captures of unknown duration: the values per capture
 *   average      gauges (inuse_*, goroutines, threads): the value averaged over captures
 *   share        a comparison that normalises: the value over its replicate's total
 * None depends on the step or bucket width. docs/compare.md and docs/api.md say more. */
#ifndef SC_METRIC_H
#define SC_METRIC_H

#include <stddef.h>

enum sc_metric { SC_METRIC_PER_SECOND, SC_METRIC_PER_PROFILE, SC_METRIC_AVERAGE, SC_METRIC_SHARE };

/* The metric of a type: gauge or not, whether every capture has a duration, normalised. */
enum sc_metric sc_metric_of(int gauge, int durations_known, int normalize);
/* "per_second", "per_profile", "average", "share": the API's name. */
const char *sc_metric_name(enum sc_metric m);
/* The unit of the metric's values for a type measured in `unit` ("nanoseconds",
 * "bytes", "count"; NULL or "" when unknown): "nanoseconds/s", "bytes/profile", "bytes",
 * "share". */
void sc_metric_unit(enum sc_metric m, const char *unit, char *out, size_t n);
/* The metric's value of a series in a span: `value` over `captures` captures that cover
 * covered_ns; NaN when the span has none (no profile: no value, not zero). */
double sc_metric_value(enum sc_metric m, double value, double captures, double covered_ns);

#endif
