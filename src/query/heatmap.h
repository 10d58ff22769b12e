/* heatmap.h - FlameScope's sub-second heatmap: samples per (second, slice of the second). */
#ifndef SC_HEATMAP_H
#define SC_HEATMAP_H

#include <stdint.h>

#include "model/buf.h"
#include "model/profile.h"

/* The cells, exactly as FlameScope defines them (and docs/api-heatmap.md):
 *   start = the earliest timestamp, idle samples included;
 *   cols  = floor(latest) - floor(start) + 1;
 *   values[c][r] = the number of non-idle samples with timestamp t such that
 *                  floor(t) - floor(start) == c and floor(rows * frac(t)) == r,
 * so row 0 is the first 1000/rows ms of each second (FlameScope draws it at the bottom).
 * All arithmetic is on integer nanoseconds: floor(t) = t div 10^9 (rounding down, also for
 * negative t), frac(t) = t mod 10^9, r = rows * (t mod 10^9) div 10^9, so a timestamp on
 * a cell edge lands in the same cell however it was written. (FlameScope uses floats:
 * a few samples that sit exactly on an edge can land one row lower there.)
 *
 * Samples are counted, not weighted: FlameScope counts perf events.
 *
 * Build one incrementally (sc_heatmap_init, sc_heatmap_add for each sample in any order,
 * sc_heatmap_finish) so a store can stream samples without keeping them, or from a
 * decoded profile (sc_heatmap_from_profile). Memory is bounded: cols may not exceed
 * max_cols (default SC_HEATMAP_MAX_COLS), nor cols * rows SC_HEATMAP_MAX_CELLS; beyond
 * that sc_heatmap_add fails with SC_ELIMIT instead of allocating, so a year of timestamps
 * is refused, not drawn. */

#define SC_HEATMAP_DEFAULT_ROWS 50     /* FlameScope's: 20 ms slices */
#define SC_HEATMAP_MAX_ROWS 1000       /* 1 ms slices */
#define SC_HEATMAP_MAX_COLS 100000     /* a bit more than a day of seconds */
#define SC_HEATMAP_MAX_CELLS 20000000u /* 80 MB of counts */

struct sc_heatmap {
    /* the result, valid after sc_heatmap_finish() */
    uint32_t rows, cols;
    int64_t start_ns; /* the earliest timestamp; 0 when there were no samples */
    uint32_t *values; /* cols * rows counts, column after column: values[c * rows + r] */
    uint64_t samples; /* samples added */
    uint64_t idle;    /* of which idle */
    /* builder state */
    uint32_t limit_cols; /* the column limit in force */
    int any, error;
    int64_t min_ns, max_ns, lo_sec, hi_sec;
    int64_t base_sec;  /* the second of column 0 of counts */
    uint32_t cap_cols; /* columns allocated in counts */
    uint32_t *counts;
};

/* Starts an empty heatmap of `rows` rows (1..SC_HEATMAP_MAX_ROWS; 0 = the default 50) and
 * at most max_cols columns (0 = SC_HEATMAP_MAX_COLS; lowered further so that cols * rows
 * stays within SC_HEATMAP_MAX_CELLS). 0 or SC_EINVAL (detail in err). */
int sc_heatmap_init(struct sc_heatmap *h, uint32_t rows, uint32_t max_cols, char *err);

/* Adds one sample at t_ns nanoseconds; idle samples only stretch the time range. Returns 0,
 * SC_ELIMIT when the samples now span more columns than allowed, or SC_ENOMEM. After a
 * failure the heatmap ignores further samples and sc_heatmap_finish() reports it. */
int sc_heatmap_add(struct sc_heatmap *h, int64_t t_ns, int idle);

/* Fixes start, cols and values. 0, or the first failure of sc_heatmap_add (detail in err,
 * e.g. "samples span 400000 s, more than the 100000 columns allowed"). */
int sc_heatmap_finish(struct sc_heatmap *h, char *err);

void sc_heatmap_release(struct sc_heatmap *h);

/* Whether sample si of p is idle by FlameScope's rule: its process is the kernel's idle
 * task ("swapper" in the comm label, or in the outermost frame's name when there is no
 * comm label) and some frame's name contains one of FlameScope's idle functions: cpuidle,
 * cpu_idle, cpu_bringup_and_idle, native_safe_halt, xen_hypercall_sched_op,
 * xen_hypercall_vcpu_op (substrings, as FlameScope's regular expression matches them:
 * "pv_native_safe_halt" and "cpuidle_enter_state" are idle). */
int sc_heatmap_sample_idle(const struct sc_profile *p, uint32_t si);

/* sc_heatmap_init + sc_heatmap_add for every stored sample of p that has a timestamp
 * (time_ns != 0; perf script input has them, pprof has none) + sc_heatmap_finish.
 * Release h with sc_heatmap_release() even on failure. */
int sc_heatmap_from_profile(const struct sc_profile *p, uint32_t rows, uint32_t max_cols,
                            struct sc_heatmap *h, char *err);

/* {"start":S,"rows":R,"cols":C,"values":[[...],...]} with values[c][r]; S in seconds with
 * up to nine exact decimals ("759.337518"). No samples: start 0, cols 0, values []. */
void sc_heatmap_write_json(const struct sc_heatmap *h, struct sc_buf *out);

/* The time range [*t0_ns, *t1_ns) of a FlameScope selection from cell (c0, r0) to cell
 * (c1, r1) of a heatmap with the given start and rows: both cells included, and every
 * cell between them in time order (the rest of c0's second after r0, whole seconds in
 * between, c1's second up to r1), which is one contiguous range. The cells may be given
 * in either order. A sample at t is in the range exactly when its cell is, so a flame
 * graph of [t0, t1) shows the selected samples. 0 or SC_EINVAL for rows out of range (or
 * times beyond int64 nanoseconds). */
int sc_heatmap_select(int64_t start_ns, uint32_t rows, uint32_t c0, uint32_t r0, uint32_t c1,
                      uint32_t r1, int64_t *t0_ns, int64_t *t1_ns);

/* Parses decimal seconds ("759.337518", "-1.5", "12") into nanoseconds exactly (digits
 * beyond the ninth decimal are cut off), e.g. the "start" of the JSON back into the
 * start_ns that sc_heatmap_select() wants. 0 or SC_EINVAL (not a number, or beyond int64
 * nanoseconds). */
int sc_heatmap_parse_seconds(const char *s, int64_t *ns);

#endif
