/* compare_report.h - a comparison for people and CI: the significant changes, then a verdict. */
#ifndef SC_COMPARE_REPORT_H
#define SC_COMPARE_REPORT_H

#include "model/buf.h"
#include "query/diff.h"

enum sc_report_format { SC_REPORT_TEXT, SC_REPORT_MARKDOWN };

struct sc_report_opts {
    enum sc_report_format format;
    double fail_above; /* % (relative); < 0: no threshold */
    uint32_t limit;    /* significant rows shown (0: all) */
};

/* What the report concluded. */
struct sc_verdict {
    uint32_t significant, grew, shrank;
    uint32_t over;    /* grew significantly by more than fail_above (when set) */
    char worst[160];  /* the function that grew most, "" if none */
    double worst_pct; /* its change, % (INFINITY for a new function) */
};

/* Writes d (with statistics attached, sc_diff_attach) as a report: a header naming both
 * sides, the metric and the method; the significant changes, growth and shrinkage by the
 * size of the change of the mean, each with its base and new mean, relative change with
 * its 95% interval and q-value, the measure (self or total) whose change is the surer;
 * then one verdict line. Markdown makes a table that fits a pull-request comment.
 * Fills v. */
void sc_compare_report(const struct sc_diff *d, const struct sc_report_opts *o, struct sc_buf *out,
                       struct sc_verdict *v);

/* The significant change of a row that decides it: the self change when self is
 * significant and at least as sure as the total's, else the total's. 0 when neither is. */
int sc_compare_pick(const struct sc_cmp_stat *st, double level, int *use_cum);

#endif
