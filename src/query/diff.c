/* diff.c - per-function and per-stack comparison of two profiles. */
#include "query/diff.h"
#include "query/functions.h"
#include "model/error.h"
#include "model/json.h"
#include "query/flame.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* v * f rounded to the nearest integer, halves away from zero, clamped to int64. */
static int64_t scale(int64_t v, double f)
{
    double r = (double)v * f;
    if (r >= 9.2e18)
        return INT64_MAX;
    if (r <= -9.2e18)
        return INT64_MIN;
    return llround(r);
}

static int cmp_str(struct sc_str x, struct sc_str y)
{
    size_t n = x.len < y.len ? x.len : y.len;
    int c = n ? memcmp(x.ptr, y.ptr, n) : 0;
    if (c)
        return c;
    return (x.len > y.len) - (x.len < y.len);
}

static int cmp_rows(const void *a, const void *b)
{
    const struct sc_diff_row *x = a, *y = b;
    /* |flat - base_flat| without overflow: compare as unsigned magnitudes */
    uint64_t dx = (uint64_t)x->flat - (uint64_t)x->base_flat;
    uint64_t dy = (uint64_t)y->flat - (uint64_t)y->base_flat;
    dx = (int64_t)dx < 0 ? -dx : dx;
    dy = (int64_t)dy < 0 ? -dy : dy;
    if (dx != dy)
        return dx > dy ? -1 : 1;
    return cmp_str(x->name, y->name);
}

static int same_unit(const struct sc_profile *a, int ai, const struct sc_profile *b, int bi,
                     char *err)
{
    struct sc_str x = sc_profile_str(a, a->sample_types[ai].unit);
    struct sc_str y = sc_profile_str(b, b->sample_types[bi].unit);
    if (cmp_str(x, y) != 0)
        return sc_errf(err, SC_EINVAL, "cannot compare values in '%.*s' with values in '%.*s'",
                       (int)x.len, x.ptr, (int)y.len, y.ptr);
    return 0;
}

static int check_index(const struct sc_profile *base, int base_vi, const struct sc_profile *p,
                       int vi, char *err)
{
    if (base_vi < 0 || (uint32_t)base_vi >= base->nsample_types || vi < 0 ||
        (uint32_t)vi >= p->nsample_types)
        return sc_errf(err, SC_EINVAL, "sample index out of range");
    return same_unit(base, base_vi, p, vi, err);
}

static struct sc_str arena_str(struct sc_arena *a, struct sc_str s)
{
    char *c = sc_arena_strndup(a, s.len ? s.ptr : "", s.len);
    return c ? (struct sc_str){c, s.len} : (struct sc_str){NULL, 0};
}

int sc_diff_compute(const struct sc_profile *base, int base_vi, const struct sc_profile *p, int vi,
                    int normalize, struct sc_diff *d, char *err)
{
    memset(d, 0, sizeof *d);
    sc_arena_init(&d->arena);
    d->base_scale = 1;
    int rc = check_index(base, base_vi, p, vi, err);
    if (rc)
        return rc;
    struct sc_top tb, tn;
    memset(&tn, 0, sizeof tn);
    rc = sc_top_compute(base, base_vi, &tb, err);
    if (rc == 0)
        rc = sc_top_compute(p, vi, &tn, err);
    struct sc_strtab names = {0};
    names.arena = &d->arena;
    if (rc)
        goto out;
    d->sample_type = arena_str(&d->arena, sc_profile_str(p, p->sample_types[vi].type));
    d->unit = arena_str(&d->arena, sc_profile_str(p, p->sample_types[vi].unit));
    size_t cap = (size_t)tb.n + tn.n + 1;
    d->rows = calloc(cap, sizeof *d->rows);
    if (!d->rows || !d->sample_type.ptr || !d->unit.ptr) {
        rc = sc_errf(err, SC_ENOMEM, "out of memory");
        goto out;
    }
    /* join by name: the row of a name is its index in the names table */
    for (int side = 0; side < 2 && rc == 0; side++) {
        const struct sc_top *t = side ? &tn : &tb;
        for (uint32_t i = 0; i < t->n; i++) {
            const struct sc_top_row *r = &t->rows[i];
            int64_t id = sc_strtab_intern(&names, r->name.len ? r->name.ptr : "", r->name.len);
            if (id < 0) {
                rc = sc_errf(err, (int)id, "out of memory");
                break;
            }
            struct sc_diff_row *dr = &d->rows[id];
            dr->name = names.v[id];
            if (side) {
                dr->flat = r->flat;
                dr->cum = r->cum;
            } else {
                dr->base_flat = r->flat;
                dr->base_cum = r->cum;
            }
        }
    }
    if (rc)
        goto out;
    d->n = names.n;
    d->base_total = tb.total;
    d->total = tn.total;
    if (normalize && tb.total > 0 && tn.total > 0) {
        double f = (double)tn.total / (double)tb.total;
        d->normalized = 1;
        d->base_scale = f;
        d->base_total = scale(tb.total, f);
        for (uint32_t i = 0; i < d->n; i++) {
            d->rows[i].base_flat = scale(d->rows[i].base_flat, f);
            d->rows[i].base_cum = scale(d->rows[i].base_cum, f);
        }
    }
    if (d->n > 1)
        qsort(d->rows, d->n, sizeof *d->rows, cmp_rows);
out:
    sc_strtab_release(&names); /* the strings stay in the arena */
    sc_top_release(&tb);
    sc_top_release(&tn);
    return rc;
}

void sc_diff_release(struct sc_diff *d)
{
    free(d->rows);
    sc_arena_release(&d->arena);
    memset(d, 0, sizeof *d);
}

static void put_tsv_cell(struct sc_buf *out, struct sc_str s)
{
    for (uint32_t i = 0; i < s.len; i++) {
        char c = s.ptr[i];
        sc_buf_putc(out, c == '\t' || c == '\n' || c == '\r' ? ' ' : c);
    }
}

void sc_diff_attach(struct sc_diff *d, const struct sc_cmp *c)
{
    d->cmp = c;
}

/* A statistic in TSV: NaN left empty, "inf" for new (JSON says both as null). */
static void put_stat(struct sc_buf *out, double v)
{
    if (isinf(v))
        sc_buf_puts(out, v > 0 ? "inf" : "-inf");
    else if (!isnan(v))
        sc_buf_put_num(out, v);
}

static double q_or_nan(double q)
{
    return q >= 0 ? q : NAN;
}

/* The statistics' names and values of one row, in the documented order. */
#define NSTATS 13
static const char *const stat_names[NSTATS] = {
    "significant",      "flat_q",       "cum_q",         "delta_pct",
    "delta_pct_lo",     "delta_pct_hi", "cum_delta_pct", "cum_delta_pct_lo",
    "cum_delta_pct_hi", "base_mean",    "mean",          "base_cum_mean",
    "cum_mean"};

static void stat_values(const struct sc_cmp_stat *st, double v[NSTATS])
{
    static const struct sc_cmp_stat none = {.flat_pct = NAN,
                                            .flat_lo = NAN,
                                            .flat_hi = NAN,
                                            .cum_pct = NAN,
                                            .cum_lo = NAN,
                                            .cum_hi = NAN,
                                            .flat_q = -1,
                                            .cum_q = -1};
    if (!st)
        st = &none;
    double x[NSTATS] = {st->significant,
                        q_or_nan(st->flat_q),
                        q_or_nan(st->cum_q),
                        st->flat_pct,
                        st->flat_lo,
                        st->flat_hi,
                        st->cum_pct,
                        st->cum_lo,
                        st->cum_hi,
                        st->base_flat,
                        st->flat,
                        st->base_cum,
                        st->cum};
    memcpy(v, x, sizeof x);
}

void sc_diff_write(const struct sc_diff *d, enum sc_diff_format f, uint32_t limit,
                   struct sc_buf *out)
{
    uint32_t n = limit && limit < d->n ? limit : d->n;
    struct sc_cmp_summary sum;
    if (d->cmp)
        sc_cmp_summarize(d->cmp, &sum);
    if (f == SC_DIFF_TSV) {
        sc_buf_puts(out, "base_flat\tflat\tbase_cum\tcum\tfunction");
        for (int k = 0; d->cmp && k < NSTATS; k++) {
            sc_buf_putc(out, '\t');
            sc_buf_puts(out, stat_names[k]);
        }
        if (d->cmp)
            sc_buf_puts(out, "\tstatus\tmean_unit");
        sc_buf_putc(out, '\n');
        for (uint32_t i = 0; i < n; i++) {
            const struct sc_diff_row *r = &d->rows[i];
            sc_buf_put_i64(out, r->base_flat);
            sc_buf_putc(out, '\t');
            sc_buf_put_i64(out, r->flat);
            sc_buf_putc(out, '\t');
            sc_buf_put_i64(out, r->base_cum);
            sc_buf_putc(out, '\t');
            sc_buf_put_i64(out, r->cum);
            sc_buf_putc(out, '\t');
            put_tsv_cell(out, r->name);
            if (d->cmp) {
                double v[NSTATS];
                const struct sc_cmp_stat *st = sc_cmp_lookup(d->cmp, r->name.ptr, r->name.len);
                stat_values(st, v);
                sc_buf_puts(out, v[0] ? "\t1" : "\t0");
                for (int k = 1; k < NSTATS; k++) {
                    sc_buf_putc(out, '\t');
                    put_stat(out, v[k]);
                }
                sc_buf_printf(out, "\t%s\t%s", sc_cmp_status(st), sum.metric_unit);
            }
            sc_buf_putc(out, '\n');
        }
        return;
    }
    struct sc_json j;
    sc_json_init(&j, out);
    sc_json_obj_begin(&j);
    sc_json_kv_strn(&j, "sample_type", d->sample_type.ptr, d->sample_type.len);
    sc_json_kv_strn(&j, "unit", d->unit.ptr, d->unit.len);
    sc_json_kv_i64(&j, "base_total", d->base_total);
    sc_json_kv_i64(&j, "total", d->total);
    sc_json_kv_bool(&j, "normalized", d->normalized);
    sc_json_key(&j, "base_scale");
    sc_json_num_g(&j, isfinite(d->base_scale) ? d->base_scale : 1.0, 17);
    if (d->empty) {
        sc_json_kv_str(&j, "empty", d->empty == 1 ? "base" : d->empty == 2 ? "new" : "both");
        sc_json_kv_str(&j, "empty_text", d->empty_text ? d->empty_text : "");
    }
    if (d->cmp) {
        sc_json_kv_u64(&j, "base_profiles", sum.base_n);
        sc_json_kv_u64(&j, "profiles", sum.n);
        sc_json_kv_str(&j, "method", sc_cmp_method_name(sum.method));
        sc_json_kv_str(&j, "method_text", sc_cmp_method_text(sum.method));
        sc_json_kv_str(&j, "metric", sum.metric);
        sc_json_kv_str(&j, "metric_unit", sum.metric_unit);
        sc_json_kv_num(&j, "q", sum.level);
        sc_json_kv_u64(&j, "tested", sum.tested);
        sc_json_kv_u64(&j, "grew", sum.grew);
        sc_json_kv_u64(&j, "shrank", sum.shrank);
        sc_json_kv_u64(&j, "new", sum.fresh);
        sc_json_kv_u64(&j, "gone", sum.gone);
    }
    sc_json_key(&j, "rows");
    sc_json_arr_begin(&j);
    for (uint32_t i = 0; i < n; i++) {
        const struct sc_diff_row *r = &d->rows[i];
        sc_json_obj_begin(&j);
        sc_json_kv_strn(&j, "function", r->name.ptr, r->name.len);
        sc_json_kv_i64(&j, "base_flat", r->base_flat);
        sc_json_kv_i64(&j, "flat", r->flat);
        sc_json_kv_i64(&j, "base_cum", r->base_cum);
        sc_json_kv_i64(&j, "cum", r->cum);
        if (d->cmp) {
            const struct sc_cmp_stat *st = sc_cmp_lookup(d->cmp, r->name.ptr, r->name.len);
            double v[NSTATS];
            stat_values(st, v);
            sc_json_kv_bool(&j, "significant", v[0] != 0);
            for (int k = 1; k < NSTATS; k++)
                sc_json_kv_num(&j, stat_names[k], v[k]);
            sc_json_kv_i64(&j, "direction", st ? st->direction : 0);
            sc_json_kv_str(&j, "status", sc_cmp_status(st));
        }
        sc_json_obj_end(&j);
    }
    sc_json_arr_end(&j);
    sc_json_obj_end(&j);
    sc_buf_putc(out, '\n');
}

/* ---- per stack ---- */

struct stack_line {
    size_t off, len; /* the stack's text in the lines buffer */
    int64_t base, value;
};

static int cmp_lines(const void *a, const void *b, void *arg)
{
    const char *text = arg;
    const struct stack_line *x = a, *y = b;
    size_t n = x->len < y->len ? x->len : y->len;
    int c = n ? memcmp(text + x->off, text + y->off, n) : 0;
    if (c)
        return c;
    return (x->len > y->len) - (x->len < y->len);
}

int sc_diff_stacks(const struct sc_profile *base, int base_vi, const struct sc_profile *p, int vi,
                   int normalize, struct sc_buf *out, char *err)
{
    int rc = check_index(base, base_vi, p, vi, err);
    if (rc)
        return rc;
    struct sc_flame_tree t;
    struct sc_buf text = SC_BUF_INIT, path = SC_BUF_INIT;
    struct stack_line *lines = NULL;
    uint32_t *stack = NULL, *depth = NULL;
    size_t *plen = NULL;
    rc = sc_flame_tree_init(&t);
    if (rc == 0)
        rc = sc_flame_tree_add(&t, base, base_vi, 0, err);
    if (rc == 0)
        rc = sc_flame_tree_add(&t, p, vi, 1, err);
    if (rc)
        goto out;
    sc_flame_tree_done(&t);
    if (normalize && t.nodes[0].total[0] > 0 && t.nodes[0].total[1] > 0)
        sc_flame_tree_scale_base(&t, (double)t.nodes[0].total[1] / (double)t.nodes[0].total[0]);
    /* Depth first from the root; a node's stack is its parent's plus ";name". The path
     * text of the current branch lives in `text` up to plen[depth]; every node with a
     * self value copies it out as one line. */
    lines = malloc((size_t)t.n * sizeof *lines);
    stack = malloc((size_t)t.n * sizeof *stack);
    plen = malloc((size_t)t.n * sizeof *plen);
    depth = malloc((size_t)t.n * sizeof *depth);
    if (!lines || !stack || !plen || !depth) {
        rc = SC_ENOMEM;
        goto out;
    }
    uint32_t nlines = 0, sp = 0;
    if (t.nodes[0].self[0] || t.nodes[0].self[1]) /* samples without frames: stack "" */
        lines[nlines++] = (struct stack_line){0, 0, t.nodes[0].self[0], t.nodes[0].self[1]};
    for (uint32_t c = t.nodes[0].first_child; c; c = t.nodes[c].next_sibling)
        stack[sp++] = c;
    depth[0] = 0; /* a node's depth indexes plen */
    plen[0] = 0;
    while (sp) {
        uint32_t v = stack[--sp];
        const struct sc_flame_node *nd = &t.nodes[v];
        uint32_t dp = depth[nd->parent] + 1;
        depth[v] = dp;
        path.len = plen[dp - 1];
        if (dp > 1)
            sc_buf_putc(&path, ';');
        struct sc_str nm = t.names.v[nd->name];
        sc_buf_append(&path, nm.ptr, nm.len);
        plen[dp] = path.len;
        if (nd->self[0] || nd->self[1]) {
            lines[nlines].off = text.len;
            lines[nlines].len = path.len;
            lines[nlines].base = nd->self[0];
            lines[nlines].value = nd->self[1];
            nlines++;
            sc_buf_append(&text, path.data, path.len);
        }
        for (uint32_t c = nd->first_child; c; c = t.nodes[c].next_sibling)
            stack[sp++] = c;
    }
    if (path.oom || text.oom) {
        rc = SC_ENOMEM;
        goto out;
    }
    if (nlines > 1)
        qsort_r(lines, nlines, sizeof *lines, cmp_lines, text.data);
    for (uint32_t i = 0; i < nlines; i++) {
        if (lines[i].len)
            sc_buf_append(out, text.data + lines[i].off, lines[i].len);
        sc_buf_putc(out, ' ');
        sc_buf_put_i64(out, lines[i].base);
        sc_buf_putc(out, ' ');
        sc_buf_put_i64(out, lines[i].value);
        sc_buf_putc(out, '\n');
    }
    if (out->oom)
        rc = SC_ENOMEM;
out:
    free(lines);
    free(stack);
    free(plen);
    free(depth);
    sc_buf_release(&text);
    sc_buf_release(&path);
    sc_flame_tree_release(&t);
    if (rc && (!err || !err[0]))
        sc_errf(err, rc, "%s", sc_strerror(rc));
    return rc;
}
