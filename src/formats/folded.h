/* folded.h - "frame;frame;frame count" lines, as FlameGraph's stackcollapse scripts write. */
#ifndef SC_FOLDED_H
#define SC_FOLDED_H

#include <stddef.h>

#include "formats/input.h"
#include "model/buf.h"
#include "model/profile.h"

/* Decodes folded lines into p (a fresh profile) with one sample type "samples/count":
 * one function and location per distinct frame name, one sample per line. Like
 * flamegraph.pl, the count is the last whitespace-separated field (fractions are rounded)
 * and lines without one are skipped; '#' comment lines and blank lines are ignored.
 * 0 or SC_E* with detail in err. */
int sc_folded_decode(const char *buf, size_t n, const struct sc_limits *lim, struct sc_profile *p,
                     char *err);

/* Appends p's samples with value column vi as folded lines: frames root first joined by
 * ';' (inlined functions expanded), identical stacks summed, zero values dropped, lines
 * sorted bytewise (as stackcollapse-perf.pl prints them). 0 or SC_E*. */
int sc_folded_write(const struct sc_profile *p, int vi, struct sc_buf *out, char *err);

#endif
