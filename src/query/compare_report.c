/* compare_report.c - `scorch compare`'s text and markdown: significant changes, a verdict. */
#include "query/compare_report.h"
#include "model/units.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int sc_compare_pick(const struct sc_cmp_stat *st, double level, int *use_cum)
{
    int fs = st->flat_q >= 0 && st->flat_q < level;
    int cs = st->cum_q >= 0 && st->cum_q < level;
    *use_cum = cs && (!fs || st->cum_q < st->flat_q);
    return fs || cs;
}

struct shown {
    const struct sc_diff_row *row;
    const struct sc_cmp_stat *st;
    int use_cum;
    double delta; /* |new mean - base mean| of the measure shown */
};

static int cmp_shown(const void *a, const void *b)
{
    const struct shown *x = a, *y = b;
    if (x->delta != y->delta)
        return x->delta > y->delta ? -1 : 1;
    size_t n = x->row->name.len < y->row->name.len ? x->row->name.len : y->row->name.len;
    int c = n ? memcmp(x->row->name.ptr, y->row->name.ptr, n) : 0;
    return c ? c : (x->row->name.len > y->row->name.len) - (x->row->name.len < y->row->name.len);
}

/* A mean of the metric: a percentage for shares, else the value in its unit (per second
 * or per profile when the metric says so). */
static void put_metric(struct sc_buf *out, double v, const char *metric, const struct sc_diff *d)
{
    if (!strcmp(metric, "share")) {
        sc_buf_printf(out, "%.2f%%", 100 * v);
        return;
    }
    char unit[64];
    snprintf(unit, sizeof unit, "%.*s", (int)d->unit.len, d->unit.ptr ? d->unit.ptr : "");
    if (fabs(v) >= 100 && fabs(v) < 9e18)
        sc_units_label(out, llround(v), unit, "auto");
    else
        sc_buf_printf(out, "%.3g", v);
    if (!strcmp(metric, "per_second"))
        sc_buf_puts(out, "/s");
    else if (!strcmp(metric, "per_profile"))
        sc_buf_puts(out, "/profile");
}

static void put_pct(struct sc_buf *out, double v)
{
    if (isinf(v))
        sc_buf_puts(out, v > 0 ? "new" : "gone");
    else if (isnan(v))
        sc_buf_puts(out, "-");
    else
        sc_buf_printf(out, "%+.1f%%", v);
}

static void put_interval(struct sc_buf *out, double lo, double hi, const char *sep)
{
    if (isnan(lo) || isnan(hi)) {
        sc_buf_puts(out, "-");
        return;
    }
    put_pct(out, lo);
    sc_buf_puts(out, sep);
    put_pct(out, hi);
}

static void put_q(struct sc_buf *out, double q)
{
    if (q < 0.0001)
        sc_buf_puts(out, "<0.0001");
    else
        sc_buf_printf(out, "%.4f", q);
}

/* A function name in a markdown table cell: code span, pipes escaped. */
static void put_md_name(struct sc_buf *out, struct sc_str s)
{
    int tick = memchr(s.ptr ? s.ptr : "", '`', s.len) != NULL;
    if (!tick)
        sc_buf_putc(out, '`');
    for (uint32_t i = 0; i < s.len; i++) {
        char c = s.ptr[i];
        if (c == '|')
            sc_buf_puts(out, "\\|");
        else
            sc_buf_putc(out, c == '\n' || c == '\r' ? ' ' : c);
    }
    if (!tick)
        sc_buf_putc(out, '`');
}

/* Pads the cell written since `from` to width w (text tables). */
static void pad(struct sc_buf *out, size_t from, size_t w)
{
    size_t n = out->len - from;
    while (n++ < w)
        sc_buf_putc(out, ' ');
}

static void verdict(const struct sc_report_opts *o, const struct sc_cmp_summary *sum,
                    struct sc_verdict *v, struct sc_buf *out, int md)
{
    sc_buf_puts(out, md ? "**Verdict:** " : "verdict: ");
    if (sum->method == SC_CMP_NONE) {
        sc_buf_puts(out, "nothing to compare (a side has no profiles)\n");
        return;
    }
    if (o->fail_above >= 0) {
        if (v->over) {
            sc_buf_printf(out, "FAIL: %s grew by ", v->worst);
            put_pct(out, v->worst_pct);
            sc_buf_printf(out, " (more than %g%%)", o->fail_above);
            if (v->over > 1)
                sc_buf_printf(out, ", and %u more function%s", v->over - 1, v->over > 2 ? "s" : "");
            sc_buf_putc(out, '\n');
        } else {
            sc_buf_printf(out, "OK: no function grew significantly by more than %g%%",
                          o->fail_above);
            sc_buf_printf(out, " (%u grew less, %u shrank)\n", v->grew, v->shrank);
        }
        return;
    }
    if (!v->significant) {
        sc_buf_printf(out, "no significant change (false discovery rate %g)\n", sum->level);
        return;
    }
    sc_buf_printf(out, "%u function%s changed significantly: %u grew, %u shrank", v->significant,
                  v->significant > 1 ? "s" : "", v->grew, v->shrank);
    if (v->worst[0]) {
        sc_buf_printf(out, "; the largest growth: %s ", v->worst);
        put_pct(out, v->worst_pct);
    }
    sc_buf_putc(out, '\n');
}

void sc_compare_report(const struct sc_diff *d, const struct sc_report_opts *o, struct sc_buf *out,
                       struct sc_verdict *v)
{
    memset(v, 0, sizeof *v);
    v->worst_pct = -INFINITY;
    int md = o->format == SC_REPORT_MARKDOWN;
    struct sc_cmp_summary sum;
    memset(&sum, 0, sizeof sum);
    if (d->cmp)
        sc_cmp_summarize(d->cmp, &sum);
    struct shown *rows = calloc(d->n + 1, sizeof *rows);
    if (!rows) {
        out->oom = 1;
        return;
    }
    uint32_t n = 0;
    for (uint32_t i = 0; d->cmp && i < d->n; i++) {
        const struct sc_diff_row *r = &d->rows[i];
        const struct sc_cmp_stat *st = sc_cmp_lookup(d->cmp, r->name.ptr, r->name.len);
        int use_cum;
        if (!st || !sc_compare_pick(st, sum.level, &use_cum))
            continue;
        double dm = use_cum ? st->cum - st->base_cum : st->flat - st->base_flat;
        rows[n++] = (struct shown){r, st, use_cum, fabs(dm)};
        v->significant++;
        v->grew += st->direction > 0;
        v->shrank += st->direction < 0;
        /* the threshold looks at both measures: either growing too much fails */
        int trips = 0;
        for (int k = 0; k < 2; k++) {
            double q = k ? st->cum_q : st->flat_q, pct = k ? st->cum_pct : st->flat_pct;
            if (!(q >= 0 && q < sum.level) || !(pct > 0))
                continue;
            trips |= o->fail_above >= 0 && pct > o->fail_above;
            if (pct > v->worst_pct) {
                v->worst_pct = pct;
                snprintf(v->worst, sizeof v->worst, "%.*s",
                         (int)(r->name.len < 150 ? r->name.len : 150),
                         r->name.ptr ? r->name.ptr : "");
            }
        }
        v->over += trips;
    }
    if (n > 1)
        qsort(rows, n, sizeof *rows, cmp_shown);
    const char *metric = sum.metric ? sum.metric : "share";
    static const char *const metric_text[][2] = {{"share", "share of each profile's total"},
                                                 {"per_second", "value per second of profile"},
                                                 {"per_profile", "value per profile"},
                                                 {"average", "average value (a gauge)"}};
    const char *mt = metric;
    for (size_t k = 0; k < sizeof metric_text / sizeof metric_text[0]; k++)
        if (!strcmp(metric_text[k][0], metric))
            mt = metric_text[k][1];
    int tested = (int)sum.tested;
    /* header */
    if (md)
        sc_buf_printf(out, "### scorch compare: %u base profile%s vs %u new profile%s\n\n",
                      sum.base_n, sum.base_n == 1 ? "" : "s", sum.n, sum.n == 1 ? "" : "s");
    else
        sc_buf_printf(out, "scorch compare: %u base profile%s vs %u new profile%s\n", sum.base_n,
                      sum.base_n == 1 ? "" : "s", sum.n, sum.n == 1 ? "" : "s");
    /* markdown: two trailing spaces break the line */
    sc_buf_printf(out, "type: %.*s (%.*s), %s; %d of %u functions tested%s\n",
                  (int)d->sample_type.len, d->sample_type.ptr ? d->sample_type.ptr : "",
                  (int)d->unit.len, d->unit.ptr ? d->unit.ptr : "", mt, tested, sum.functions,
                  md ? "  " : "");
    sc_buf_printf(out, "method: %s (%s, q < %g)\n\n", sc_cmp_method_name(sum.method),
                  sc_cmp_method_text(sum.method), sum.level);
    uint32_t shown = o->limit && o->limit < n ? o->limit : n;
    if (n == 0) {
        sc_buf_puts(out, md ? "No significant changes.\n\n" : "no significant changes\n\n");
    } else if (md) {
        sc_buf_printf(out, "%u significant change%s:\n\n", n, n > 1 ? "s" : "");
        sc_buf_puts(out, "| function | measure | base | new | change | 95% interval | q |\n"
                         "|---|---|---:|---:|---:|---|---:|\n");
        for (uint32_t i = 0; i < shown; i++) {
            const struct shown *s = &rows[i];
            const struct sc_cmp_stat *st = s->st;
            sc_buf_puts(out, "| ");
            put_md_name(out, s->row->name);
            sc_buf_puts(out, s->use_cum ? " | total | " : " | self | ");
            put_metric(out, s->use_cum ? st->base_cum : st->base_flat, metric, d);
            sc_buf_puts(out, " | ");
            put_metric(out, s->use_cum ? st->cum : st->flat, metric, d);
            sc_buf_puts(out, st->direction > 0 ? " | **" : " | ");
            put_pct(out, s->use_cum ? st->cum_pct : st->flat_pct);
            sc_buf_puts(out, st->direction > 0 ? "** | " : " | ");
            put_interval(out, s->use_cum ? st->cum_lo : st->flat_lo,
                         s->use_cum ? st->cum_hi : st->flat_hi, " … ");
            sc_buf_puts(out, " | ");
            put_q(out, s->use_cum ? st->cum_q : st->flat_q);
            sc_buf_puts(out, " |\n");
        }
        if (shown < n)
            sc_buf_printf(out, "\n%u more not shown.\n", n - shown);
        sc_buf_putc(out, '\n');
    } else {
        sc_buf_printf(out, "%u significant change%s:\n", n, n > 1 ? "s" : "");
        sc_buf_puts(out, "  change    95% interval          base        new         q        "
                         "function\n");
        for (uint32_t i = 0; i < shown; i++) {
            const struct shown *s = &rows[i];
            const struct sc_cmp_stat *st = s->st;
            size_t at = out->len;
            sc_buf_puts(out, "  ");
            put_pct(out, s->use_cum ? st->cum_pct : st->flat_pct);
            pad(out, at, 12);
            at = out->len;
            sc_buf_putc(out, '[');
            put_interval(out, s->use_cum ? st->cum_lo : st->flat_lo,
                         s->use_cum ? st->cum_hi : st->flat_hi, ", ");
            sc_buf_putc(out, ']');
            pad(out, at, 22);
            at = out->len;
            put_metric(out, s->use_cum ? st->base_cum : st->base_flat, metric, d);
            pad(out, at, 12);
            at = out->len;
            put_metric(out, s->use_cum ? st->cum : st->flat, metric, d);
            pad(out, at, 12);
            at = out->len;
            put_q(out, s->use_cum ? st->cum_q : st->flat_q);
            pad(out, at, 9);
            sc_buf_append(out, s->row->name.ptr, s->row->name.len);
            sc_buf_puts(out, s->use_cum ? " (total)\n" : " (self)\n");
        }
        if (shown < n)
            sc_buf_printf(out, "  ... %u more\n", n - shown);
        sc_buf_putc(out, '\n');
    }
    verdict(o, &sum, v, out, md);
    free(rows);
}
