/* top.h - the report of query/functions.h printed like `go tool pprof -top`: text, TSV, JSON. */
#ifndef SC_TOP_H
#define SC_TOP_H

#include <stdint.h>

#include "model/buf.h"
#include "model/profile.h"
#include "query/functions.h"

enum sc_top_format { SC_TOP_TEXT, SC_TOP_TSV, SC_TOP_JSON };

struct sc_top_opts {
    enum sc_top_format format;
    uint32_t nodecount;     /* 0 = all rows (after the node fraction cut for text) */
    double nodefraction;    /* text only: drop rows with |cum| < total * this; pprof's 0.005 */
    double edgefraction;    /* text only: ignore lighter call edges for labels; pprof's 0.001 */
    const char *file_label; /* text header "File:" override; NULL = from the first mapping */
};

/* pprof's "Time: Nov 30, 2026 at 4:05am (UTC)\n" header line for p->time_nanos in the
 * local time zone, as go tool pprof writes it; nothing when the profile has no time. */
void sc_top_time_line(const struct sc_profile *p, struct sc_buf *out);

/* Writes t for profile p (column vi) in the chosen format.
 * text: pprof's header lines and table, values scaled to one unit as pprof chooses it.
 * tsv: "flat\tcum\tfunction" then one line per row, exact integers in the sample unit.
 * json: {"sample_type","unit","total","rows":[{"function","flat","cum"}...]}. */
void sc_top_write(const struct sc_profile *p, int vi, struct sc_top *t, const struct sc_top_opts *o,
                  struct sc_buf *out);

#endif
