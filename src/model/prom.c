/* prom.c - the Prometheus text exposition format (prom.h). */
#include "model/prom.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static const char *const type_names[] = {"counter", "gauge", "histogram"};

/* HELP text escapes only backslashes and line ends (quotes stay as they are). */
static void put_help(struct sc_buf *out, const char *s)
{
    for (; *s; s++) {
        if (*s == '\\')
            sc_buf_puts(out, "\\\\");
        else if (*s == '\n')
            sc_buf_puts(out, "\\n");
        else
            sc_buf_putc(out, *s);
    }
}

void sc_prom_family(struct sc_buf *out, const char *name, enum sc_prom_type type, const char *help)
{
    sc_buf_printf(out, "# HELP %s ", name);
    put_help(out, help);
    sc_buf_printf(out, "\n# TYPE %s %s\n", name, type_names[type]);
}

void sc_prom_put_label_value(struct sc_buf *out, const char *s, size_t n)
{
    const unsigned char *p = (const unsigned char *)s;
    for (size_t i = 0; i < n;) {
        unsigned char c = p[i];
        size_t len = c < 0x80 ? 1 : sc_utf8_seq(p + i, n - i);
        if (c == '\\' || c == '"') {
            sc_buf_putc(out, '\\');
            sc_buf_putc(out, (char)c);
        } else if (c == '\n') {
            sc_buf_append(out, "\\n", 2);
        } else if (!len) {
            sc_buf_append(out, "\xef\xbf\xbd", 3);
            len = 1;
        } else {
            sc_buf_append(out, s + i, len);
        }
        i += len;
    }
}

void sc_prom_begin(struct sc_buf *out, const char *name, int *nlabels)
{
    sc_buf_puts(out, name);
    *nlabels = 0;
}

void sc_prom_label(struct sc_buf *out, int *nlabels, const char *name, size_t name_len,
                   const char *value, size_t value_len)
{
    sc_buf_putc(out, (*nlabels)++ ? ',' : '{');
    sc_buf_append(out, name, name_len);
    sc_buf_puts(out, "=\"");
    sc_prom_put_label_value(out, value, value_len);
    sc_buf_putc(out, '"');
}

static void put_value(struct sc_buf *out, int nlabels, const char *fmt, va_list ap)
{
    char v[64];
    vsnprintf(v, sizeof v, fmt, ap);
    sc_buf_puts(out, nlabels ? "} " : " ");
    sc_buf_puts(out, v);
    sc_buf_putc(out, '\n');
}

void sc_prom_value(struct sc_buf *out, int nlabels, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    put_value(out, nlabels, fmt, ap);
    va_end(ap);
}

void sc_prom_sample(struct sc_buf *out, const char *name, const char *const *labels,
                    const char *fmt, ...)
{
    int n;
    sc_prom_begin(out, name, &n);
    for (; labels && labels[0] && labels[1]; labels += 2)
        sc_prom_label(out, &n, labels[0], strlen(labels[0]), labels[1], strlen(labels[1]));
    va_list ap;
    va_start(ap, fmt);
    put_value(out, n, fmt, ap);
    va_end(ap);
}

void sc_prom_histogram(struct sc_buf *out, const char *name, const char *help, const double *le,
                       const uint64_t *n, int nb, uint64_t inf, const double *sum, uint64_t count)
{
    sc_prom_family(out, name, SC_PROM_HISTOGRAM, help);
    char bucket[128], bound[32];
    snprintf(bucket, sizeof bucket, "%s_bucket", name);
    uint64_t cum = 0;
    for (int i = 0; i < nb; i++) {
        cum += n[i];
        snprintf(bound, sizeof bound, "%g", le[i]);
        sc_prom_sample(out, bucket, (const char *[]){"le", bound, NULL}, "%llu",
                       (unsigned long long)cum);
    }
    sc_prom_sample(out, bucket, (const char *[]){"le", "+Inf", NULL}, "%llu",
                   (unsigned long long)inf);
    if (sum) {
        snprintf(bucket, sizeof bucket, "%s_sum", name);
        sc_prom_sample(out, bucket, NULL, "%.6f", *sum);
    }
    snprintf(bucket, sizeof bucket, "%s_count", name);
    sc_prom_sample(out, bucket, NULL, "%llu", (unsigned long long)count);
}
