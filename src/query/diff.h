/* diff.h - two profiles compared: per function (flat and cum of each) and per stack. */
#ifndef SC_DIFF_H
#define SC_DIFF_H

#include <stdint.h>

#include "model/arena.h"
#include "model/buf.h"
#include "model/profile.h"
#include "query/compare.h"

/* One function of the comparison. flat and cum mean what they mean in `scorch top` (and
 * `go tool pprof -top`): each side is computed with sc_top_compute, then rows are joined
 * by function name; a function missing on one side has 0 there. */
struct sc_diff_row {
    struct sc_str name; /* in the diff's arena */
    int64_t base_flat, flat, base_cum, cum;
};

struct sc_diff {
    struct sc_diff_row *rows; /* sorted: |flat - base_flat| descending, then name bytewise */
    uint32_t n;
    int64_t base_total, total;       /* sc_top's totals (sum of |value|); base_total scaled too */
    int normalized;                  /* base values were scaled by base_scale */
    double base_scale;               /* total / base_total before scaling, or 1 */
    struct sc_str sample_type, unit; /* the new profile's, in the arena */
    struct sc_arena arena;
    const struct sc_cmp *cmp; /* statistics (sc_diff_attach), borrowed; NULL: none */
    int empty;                /* the caller's: 1 the base has no profiles, 2 the new side, 3 both */
    const char *empty_text;   /* ... and which range that is, in words (borrowed) */
};

/* Compares base (value column base_vi) with p (column vi); the units must be equal.
 * normalize: when both totals are positive, every base value (flat, cum and the total) is
 * multiplied by base_scale = total / base_total and rounded to the nearest integer (halves
 * away from zero), so that shares compare rather than amounts. 0 or SC_E* with detail in
 * err. Release with sc_diff_release, also after a failure. */
int sc_diff_compute(const struct sc_profile *base, int base_vi, const struct sc_profile *p, int vi,
                    int normalize, struct sc_diff *d, char *err);
void sc_diff_release(struct sc_diff *d);

/* Attaches a finished comparison of the same two selections: sc_diff_write then adds its
 * statistics to every row. c stays the caller's and must outlive d's writes. */
void sc_diff_attach(struct sc_diff *d, const struct sc_cmp *c);

enum sc_diff_format { SC_DIFF_TSV, SC_DIFF_JSON };

/* Writes the first `limit` rows (0 = all):
 * tsv: "base_flat\tflat\tbase_cum\tcum\tfunction" then one line per row, exact integers in
 *   the sample unit (tabs and newlines in names become spaces);
 * json: {"sample_type":..,"unit":..,"base_total":B,"total":N,"normalized":false,
 *   "base_scale":1,"rows":[{"function":..,"base_flat":..,"flat":..,"base_cum":..,
 *   "cum":..},...]} and a newline.
 * With statistics attached (sc_diff_attach), tsv adds the columns significant (1/0),
 * flat_q, cum_q, delta_pct, delta_pct_lo, delta_pct_hi, cum_delta_pct, cum_delta_pct_lo,
 * cum_delta_pct_hi, base_mean, mean, base_cum_mean, cum_mean after the first five (empty
 * when not tested or undefined, "inf" for a function new on the new side); json adds the
 * same fields to each row (null for empty) plus "direction" (1 grew, -1 shrank, 0), and
 * "base_profiles", "profiles", "method", "method_text", "metric" (share, per_second,
 * per_profile or average: query/metric.h), "metric_unit", "q" (the level), "tested",
 * "grew", "shrank", "new" and "gone" at the top, and each row's "status" (sc_cmp_status);
 * tsv adds status and mean_unit last. The delta_pct fields are of the flat (self) value,
 * cum_delta_pct of the cum (total) value; the means are the per-replicate metric the tests
 * compare, in metric_unit: what a table beside the verdicts shows. d->empty adds "empty"
 * ("base", "new", "both") and "empty_text" at the top. */
void sc_diff_write(const struct sc_diff *d, enum sc_diff_format f, uint32_t limit,
                   struct sc_buf *out);

/* Per-stack comparison as FlameGraph's difffolded.pl prints it: "stack base new" lines,
 * frames root first joined by ';' (named as in folded output), one line per stack found
 * on either side, identical stacks summed, stacks that are 0 on both sides left out,
 * sorted bytewise by stack; samples without frames make the empty stack (a line that
 * starts with the space), as in folded output. normalize: base counts multiplied by
 * new total / base total (sums of the values) and rounded to the nearest integer
 * (difffolded.pl -n truncates).
 * The result feeds `scorch flamegraph` for a differential SVG. 0 or SC_E* (detail in
 * err). */
int sc_diff_stacks(const struct sc_profile *base, int base_vi, const struct sc_profile *p, int vi,
                   int normalize, struct sc_buf *out, char *err);

#endif
