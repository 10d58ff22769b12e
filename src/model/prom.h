/* prom.h - the Prometheus text exposition format (0.0.4): the one writer of every /metrics. */
#ifndef SC_PROM_H
#define SC_PROM_H

#include <stddef.h>
#include <stdint.h>

#include "model/buf.h"

/* A family is its header once, "# HELP name text" and "# TYPE name type", then its samples,
 * "name{label="value",...} value", one a line. Names (of metrics and labels) are written as
 * given: they are the caller's constants or already made valid (rules' label names). Label
 * values and HELP text are escaped as the format wants. */
enum sc_prom_type { SC_PROM_COUNTER, SC_PROM_GAUGE, SC_PROM_HISTOGRAM };

/* "# HELP name help\n# TYPE name type\n"; help's backslashes and line ends escaped. */
void sc_prom_family(struct sc_buf *out, const char *name, enum sc_prom_type type, const char *help);

/* One sample: name, its labels (NULL, or name/value pairs ending in NULL:
 * (const char *[]){"reason", "busy", NULL}), a space, the value formatted with fmt, "\n". */
void sc_prom_sample(struct sc_buf *out, const char *name, const char *const *labels,
                    const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* A sample built a label at a time, for label sets made at run time: sc_prom_begin writes
 * the name, sc_prom_label a label (nlabels counts them, from 0), sc_prom_value closes the
 * set and writes the value as sc_prom_sample does. */
void sc_prom_begin(struct sc_buf *out, const char *name, int *nlabels);
void sc_prom_label(struct sc_buf *out, int *nlabels, const char *name, size_t name_len,
                   const char *value, size_t value_len);
void sc_prom_value(struct sc_buf *out, int nlabels, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* A histogram family: le[i] bounds the i-th of nb buckets (counts n[i], not cumulative:
 * written cumulated), then the +Inf bucket (inf), "_sum" (%.6f; sum NULL: none) and
 * "_count". */
void sc_prom_histogram(struct sc_buf *out, const char *name, const char *help, const double *le,
                       const uint64_t *n, int nb, uint64_t inf, const double *sum, uint64_t count);

/* Appends s as the inside of a label value: \\, \" and \n escaped, bytes that are not
 * UTF-8 as U+FFFD (one invalid byte fails a whole scrape). */
void sc_prom_put_label_value(struct sc_buf *out, const char *s, size_t n);

#endif
