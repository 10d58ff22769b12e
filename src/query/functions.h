/* functions.h - per-function flat and cumulative values (go tool pprof's "functions"
 * granularity): the report `scorch top` prints and diff, compare and the call graph use. */
#ifndef SC_FUNCTIONS_H
#define SC_FUNCTIONS_H

#include <stdint.h>

#include "model/buf.h"
#include "model/profile.h"

/* One function of the report. Semantics are pprof's "functions" granularity: rows are
 * keyed by function name; flat is the value of samples whose leaf location's innermost
 * (inlined) frame is the function; cum counts a sample once per function however often
 * the function occurs in its stack. A frame without a function is named after its
 * mapping's file ("[binary]") or "<unknown>", as pprof does. */
struct sc_top_row {
    struct sc_str name; /* points into the profile's strings or the report's arena */
    int64_t flat, cum;
    uint8_t inline_in;    /* some caller edge is always inlined (sc_top_inline_labels) */
    uint8_t noninline_in; /* some caller edge is a real call */
};

struct sc_top {
    struct sc_top_row *rows; /* sorted: |flat| desc, name asc, |cum| desc (pprof's order) */
    uint32_t n;
    int64_t total; /* sum of |value| over samples, pprof's report total */
    struct sc_arena arena;
    /* kept for the "(inline)" labels, which depend on the rows a report shows */
    uint32_t *loc_start, *loc_n, *loc_rows; /* location -> row ids (innermost first) */
    uint32_t *pos;                          /* row id -> index in rows, UINT32_MAX if none */
    uint32_t nids;
};

/* Computes the report of p's value column vi. 0 or SC_E* (detail in err).
 * Release with sc_top_release() even on failure. */
int sc_top_compute(const struct sc_profile *p, int vi, struct sc_top *t, char *err);
void sc_top_release(struct sc_top *t);

/* Sets inline_in / noninline_in of the rows for a report showing only rows with keep[i]
 * set (NULL: all), as pprof does on its trimmed graph: an edge into a function goes from
 * the nearest shown caller, it is inlined when the callee frame was inlined there in every
 * sample, and edges lighter than edgefraction of the flat total of all rows are ignored.
 * 0 or SC_ENOMEM. */
int sc_top_inline_labels(const struct sc_profile *p, int vi, struct sc_top *t, const uint8_t *keep,
                         double edgefraction);

#endif
