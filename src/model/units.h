/* units.h - scaling values between units (ns/us/ms/s/hrs, B/kB/MB/GB/TB/PB) as pprof does. */
#ifndef SC_UNITS_H
#define SC_UNITS_H

#include <stdint.h>

#include "model/buf.h"

/* Converts value in unit `from` ("nanoseconds", "bytes", "count", ...; matched like pprof:
 * case-insensitive, a plural 's' ignored) to unit `to`: a unit name, or "auto"/"minimum"
 * to pick the largest unit that keeps the value >= 1. Returns the scaled value and sets
 * *out_unit to the canonical unit name ("s", "MB", ...), or "" when the unit is not a
 * time or memory unit and `to` is "auto", "minimum", "count", "sample" or "unit". */
double sc_units_scale(int64_t value, const char *from, const char *to, const char **out_unit);

/* pprof's label for a value: scaled as above, "%.2f" without a trailing ".00", then the
 * unit; "0" for zero. E.g. "1.20s", "10ms", "65548". Appends to out. */
void sc_units_label(struct sc_buf *out, int64_t value, const char *from, const char *to);

/* The output unit pprof's "minimum" mode picks for a report whose smallest non-zero row
 * value is min and whose total is max; `from` itself when no scaling applies. */
const char *sc_units_pick(int64_t min, int64_t max, const char *from);

/* pprof's percentage: "  100%" near 100, "%5.2f%%" from 1, else two significant digits. */
void sc_units_percent(struct sc_buf *out, int64_t value, int64_t total);

#endif
