/* top.c - `scorch top`'s output of query/functions.c's report: go tool pprof -top's text,
 * TSV and JSON. */
#include "formats/top.h"
#include "model/json.h"
#include "model/units.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int64_t abs64(int64_t v)
{
    return v < 0 ? (v == INT64_MIN ? INT64_MAX : -v) : v;
}

static void put_str(struct sc_buf *out, struct sc_str s)
{
    sc_buf_append(out, s.ptr, s.len);
}

/* TSV cells cannot hold tabs or newlines; function names practically never do. */
static void put_tsv_cell(struct sc_buf *out, struct sc_str s)
{
    for (uint32_t i = 0; i < s.len; i++) {
        char c = s.ptr[i];
        sc_buf_putc(out, c == '\t' || c == '\n' || c == '\r' ? ' ' : c);
    }
}

static void pad_left(struct sc_buf *out, const char *s, size_t len, int width)
{
    for (int i = (int)len; i < width; i++)
        sc_buf_putc(out, ' ');
    sc_buf_append(out, s, len);
}

/* A value as pprof formats it in the report's output unit, right-aligned to width. */
static void put_value(struct sc_buf *out, int64_t v, const char *unit, const char *ounit, int width)
{
    struct sc_buf tmp = SC_BUF_INIT;
    sc_units_label(&tmp, v, unit, ounit);
    pad_left(out, tmp.data ? tmp.data : "", tmp.len, width);
    sc_buf_release(&tmp);
}

static void write_text(const struct sc_profile *p, int vi, struct sc_top *t,
                       const struct sc_top_opts *o, struct sc_buf *out)
{
    struct sc_str type = sc_profile_str(p, p->sample_types[vi].type);
    struct sc_str unit_s = sc_profile_str(p, p->sample_types[vi].unit);
    char unit[64];
    snprintf(unit, sizeof unit, "%.*s", (int)unit_s.len, unit_s.ptr);

    /* pprof's node fraction cut: drop rows whose |cum| is under the fraction of the sum of
     * flat values. */
    int64_t flat_all = 0;
    for (uint32_t i = 0; i < t->n; i++)
        flat_all += t->rows[i].flat;
    int64_t cutoff = abs64((int64_t)((double)flat_all * o->nodefraction));
    uint32_t *keep = malloc((t->n ? t->n : 1) * sizeof *keep);
    if (!keep) {
        out->oom = 1;
        return;
    }
    uint32_t nkeep = 0, dropped = 0;
    for (uint32_t i = 0; i < t->n; i++) {
        if (cutoff > 0 && abs64(t->rows[i].cum) < cutoff)
            dropped++;
        else
            keep[nkeep++] = i;
    }
    uint32_t shown = nkeep, orig = nkeep;
    if (o->nodecount && shown > o->nodecount)
        shown = o->nodecount;
    uint8_t *mask = calloc((size_t)t->n + 1, 1);
    if (!mask) {
        free(keep);
        out->oom = 1;
        return;
    }
    for (uint32_t i = 0; i < shown; i++)
        mask[keep[i]] = 1;
    if (sc_top_inline_labels(p, vi, t, mask, o->edgefraction))
        out->oom = 1;
    free(mask);

    int64_t min = 0;
    for (uint32_t i = 0; i < shown; i++) {
        const struct sc_top_row *r = &t->rows[keep[i]];
        int64_t v = abs64(r->flat) ? abs64(r->flat) : abs64(r->cum);
        if (v > 0 && (min == 0 || v < min))
            min = v;
    }
    if (min == 0)
        min = t->total;
    /* with no rows pprof keeps its "minimum" setting: every value scaled on its own */
    const char *ounit = shown ? sc_units_pick(min, t->total, unit) : "minimum";

    if (o->file_label) {
        sc_buf_printf(out, "File: %s\n", o->file_label);
    } else if (p->nmappings) {
        struct sc_str f = sc_profile_str(p, p->mappings[0].filename);
        if (f.len) {
            const char *base = f.ptr + f.len;
            while (base > f.ptr && base[-1] != '/')
                base--;
            sc_buf_puts(out, "File: ");
            sc_buf_append(out, base, (size_t)(f.ptr + f.len - base));
            sc_buf_putc(out, '\n');
        }
        struct sc_str b = sc_profile_str(p, p->mappings[0].build_id);
        if (b.len) {
            sc_buf_puts(out, "Build ID: ");
            put_str(out, b);
            sc_buf_putc(out, '\n');
        }
    }
    for (uint32_t i = 0; i < p->ncomments; i++) {
        struct sc_str c = sc_profile_str(p, p->comments[i]);
        if (c.len && c.ptr[0] == '#')
            continue;
        put_str(out, c);
        sc_buf_putc(out, '\n');
    }
    if (type.len) { /* pprof leaves the line out for a type without a name */
        sc_buf_puts(out, "Type: ");
        put_str(out, type);
        sc_buf_putc(out, '\n');
    }
    sc_top_time_line(p, out);
    if (p->duration_nanos) {
        sc_buf_puts(out, "Duration: ");
        sc_units_label(out, p->duration_nanos, "nanoseconds", "auto");
        sc_buf_puts(out, ", Total samples = ");
        sc_units_label(out, t->total, unit, ounit);
        const char *tu;
        double tn = sc_units_scale(t->total, unit, "nanoseconds", &tu);
        if (!strcmp(tu, "ns") && (int64_t)tn != 0) {
            /* padded as pprof pads it: "( 7.98%)" when the profile was busy under 10% */
            sc_buf_puts(out, " (");
            sc_units_percent(out, (int64_t)tn, p->duration_nanos);
            sc_buf_putc(out, ')');
        } else {
            sc_buf_putc(out, ' ');
        }
        sc_buf_putc(out, '\n');
    }
    int64_t flat_shown = 0;
    for (uint32_t i = 0; i < shown; i++)
        flat_shown += t->rows[keep[i]].flat;
    sc_buf_puts(out, "Showing nodes accounting for ");
    sc_units_label(out, flat_shown, unit, ounit);
    sc_buf_puts(out, ", ");
    {
        struct sc_buf pct = SC_BUF_INIT;
        sc_units_percent(&pct, flat_shown, t->total);
        const char *s = pct.data ? pct.data : "";
        while (*s == ' ')
            s++;
        sc_buf_puts(out, s);
        sc_buf_release(&pct);
    }
    sc_buf_puts(out, " of ");
    sc_units_label(out, t->total, unit, ounit);
    sc_buf_puts(out, " total\n");
    if (t->total && dropped) {
        sc_buf_printf(out, "Dropped %u node%s (cum <= ", (unsigned)dropped, dropped > 1 ? "s" : "");
        sc_units_label(out, abs64((int64_t)((double)t->total * o->nodefraction)), unit, ounit);
        sc_buf_puts(out, ")\n");
    }
    if (t->total && shown > 0 && shown < orig)
        sc_buf_printf(out, "Showing top %u nodes out of %u\n", (unsigned)shown, (unsigned)orig);
    sc_buf_puts(out, "      flat  flat%   sum%        cum   cum%\n");
    int64_t sum = 0;
    for (uint32_t i = 0; i < shown; i++) {
        const struct sc_top_row *r = &t->rows[keep[i]];
        sum += r->flat;
        put_value(out, r->flat, unit, ounit, 10);
        sc_buf_putc(out, ' ');
        sc_units_percent(out, r->flat, t->total);
        sc_buf_putc(out, ' ');
        sc_units_percent(out, sum, t->total);
        sc_buf_putc(out, ' ');
        put_value(out, r->cum, unit, ounit, 10);
        sc_buf_putc(out, ' ');
        sc_units_percent(out, r->cum, t->total);
        sc_buf_puts(out, "  ");
        put_str(out, r->name);
        if (r->inline_in)
            sc_buf_puts(out, r->noninline_in ? " (partial-inline)" : " (inline)");
        sc_buf_putc(out, '\n');
    }
    free(keep);
}

void sc_top_write(const struct sc_profile *p, int vi, struct sc_top *t, const struct sc_top_opts *o,
                  struct sc_buf *out)
{
    uint32_t n = t->n;
    if (o->nodecount && n > o->nodecount)
        n = o->nodecount;
    switch (o->format) {
    case SC_TOP_TEXT:
        write_text(p, vi, t, o, out);
        break;
    case SC_TOP_TSV:
        sc_buf_puts(out, "flat\tcum\tfunction\n");
        for (uint32_t i = 0; i < n; i++) {
            sc_buf_put_i64(out, t->rows[i].flat);
            sc_buf_putc(out, '\t');
            sc_buf_put_i64(out, t->rows[i].cum);
            sc_buf_putc(out, '\t');
            put_tsv_cell(out, t->rows[i].name);
            sc_buf_putc(out, '\n');
        }
        break;
    case SC_TOP_JSON: {
        if (sc_top_inline_labels(p, vi, t, NULL, 0))
            out->oom = 1;
        struct sc_str type = sc_profile_str(p, p->sample_types[vi].type);
        struct sc_str unit = sc_profile_str(p, p->sample_types[vi].unit);
        struct sc_json j;
        sc_json_init(&j, out);
        sc_json_obj_begin(&j);
        sc_json_kv_strn(&j, "sample_type", type.ptr, type.len);
        sc_json_kv_strn(&j, "unit", unit.ptr, unit.len);
        sc_json_kv_i64(&j, "total", t->total);
        sc_json_key(&j, "rows");
        sc_json_arr_begin(&j);
        for (uint32_t i = 0; i < n; i++) {
            const struct sc_top_row *r = &t->rows[i];
            sc_json_obj_begin(&j);
            sc_json_kv_strn(&j, "function", r->name.ptr, r->name.len);
            sc_json_kv_i64(&j, "flat", r->flat);
            sc_json_kv_i64(&j, "cum", r->cum);
            if (r->inline_in)
                sc_json_kv_str(&j, "inline", r->noninline_in ? "partial" : "yes");
            sc_json_obj_end(&j);
        }
        sc_json_arr_end(&j);
        sc_json_obj_end(&j);
        sc_buf_putc(out, '\n');
        break;
    }
    }
}

void sc_top_time_line(const struct sc_profile *p, struct sc_buf *out)
{
    if (!p->time_nanos)
        return;
    time_t secs = (time_t)(p->time_nanos / 1000000000);
    struct tm tm;
    char when[96];
    if (!localtime_r(&secs, &tm) ||
        !strftime(when, sizeof when, "%b %-d, %Y at %-I:%M%p (%Z)", &tm))
        return;
    /* Go writes 3:04pm: the AM/PM in lower case */
    char *ampm = strstr(when, "AM (");
    if (!ampm)
        ampm = strstr(when, "PM (");
    if (ampm) {
        ampm[0] = (char)(ampm[0] + ('a' - 'A'));
        ampm[1] = 'm';
    }
    sc_buf_printf(out, "Time: %s\n", when);
}
