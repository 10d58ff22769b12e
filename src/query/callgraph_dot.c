/* callgraph_dot.c - the call graph written as go tool pprof -dot writes it: short names,
 * colours, nodes, tag boxes, edges and the legend. */
#include "query/callgraph.h"
#include "formats/top.h"
#include "model/error.h"
#include "model/units.h"
#include "query/callgraph_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* SC_CALLGRAPH_STYLE_LARGE's graph attributes: straight edges (routing splines through
 * every virtual node is most of the time of a large graph), two rounds of crossing
 * minimisation (mclimit 0.1 of 24), no network simplex rounds after the positioning's first
 * feasible tree (nslimit 0: the coordinates are valid but not straightened) */
#define LARGE_ATTRS "mclimit=0.1 nslimit=0 splines=false"

/* ---- pprof's short function names ---------------------------------------------------- */

static int is_w(char ch)
{
    unsigned char c = (unsigned char)ch;
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

static int is_upper(char c)
{
    return c >= 'A' && c <= 'Z';
}

static int is_lower(char c)
{
    return c >= 'a' && c <= 'z';
}

/* Go module versions ("/v2" before a '.' or '/') say nothing in a graph: the first one
 * goes, unless the name spans lines. */
static void strip_go_version(const char *s, size_t n, struct sc_buf *out)
{
    if (!memchr(s, '\n', n)) {
        for (size_t i = 0; i + 2 < n; i++) {
            if (s[i] != '/' || s[i + 1] != 'v')
                continue;
            size_t j = i + 2;
            while (j < n && s[j] >= '0' && s[j] <= '9')
                j++;
            size_t d = j - (i + 2);
            if (d == 0 || s[i + 2] == '0' || (d == 1 && s[i + 2] < '2'))
                continue;
            if (j < n && (s[j] == '.' || s[j] == '/')) {
                sc_buf_append(out, s, i);
                sc_buf_append(out, s + j, n - j);
                return;
            }
        }
    }
    sc_buf_append(out, s, n);
}

/* Go: "a/b/c.F" -> "c.F" (the text after the last of the leading "segment/" parts). */
static int short_go(const char *s, size_t n, size_t *b, size_t *e)
{
    size_t pos = 0, end = 0, prev = 0;
    int k = 0;
    for (;;) {
        size_t j = pos;
        while (j < n && (is_w(s[j]) || s[j] == '-' || s[j] == '.'))
            j++;
        if (j == pos || j >= n || s[j] != '/')
            break;
        prev = end;
        end = j + 1;
        pos = end;
        k++;
    }
    if (k == 0)
        return 0;
    size_t start;
    if (end < n && s[end] != '\n')
        start = end;
    else if (k >= 2)
        start = prev; /* the rest must not be empty: give back the last segment */
    else
        return 0;
    size_t stop = start;
    while (stop < n && s[stop] != '\n')
        stop++;
    *b = start;
    *e = stop;
    return 1;
}

/* Java: "com.x.Foo.bar(int)" -> "Foo.bar" (lower-case packages, a class, a method). */
static int short_java(const char *s, size_t n, size_t *b, size_t *e)
{
    size_t pos = 0;
    while (pos < n && is_lower(s[pos])) {
        size_t j = pos + 1;
        while (j < n && is_w(s[j]))
            j++;
        if (j >= n || s[j] != '.')
            break;
        pos = j + 1;
    }
    if (pos >= n || !is_upper(s[pos]))
        return 0;
    size_t j = pos + 1;
    while (j < n && (is_w(s[j]) || s[j] == '$'))
        j++;
    if (j >= n || s[j] != '.')
        return 0;
    size_t m = j + 1, k;
    if (n - m >= 6 && memcmp(s + m, "<init>", 6) == 0) {
        k = m + 6;
    } else if (m < n && is_lower(s[m])) {
        k = m + 1;
        while (k < n && (is_w(s[k]) || s[k] == '$'))
            k++;
    } else {
        return 0;
    }
    if (k < n && s[k] != '(')
        return 0;
    *b = pos;
    *e = k;
    return 1;
}

/* The "Class::method<...>" part of a C++ name starting at st, if there is one. */
static int cpp_tail(const char *s, size_t n, size_t st, size_t *e)
{
    size_t i = st;
    while (i < n && s[i] == '_')
        i++;
    if (i >= n || !is_upper(s[i]))
        return 0;
    i++;
    while (i < n && is_w(s[i]))
        i++;
    if (i + 1 >= n || s[i] != ':' || s[i + 1] != ':')
        return 0;
    i += 2;
    if (i < n && s[i] == '~')
        i++;
    if (i >= n || !(is_w(s[i]) && !(s[i] >= '0' && s[i] <= '9')))
        return 0;
    i++;
    while (i < n && is_w(s[i]))
        i++;
    size_t end = i;
    if (i < n && s[i] == '<') {
        size_t k = i + 1;
        while (k < n && s[k] != '\n') {
            if (s[k] == '>')
                end = k + 1;
            k++;
        }
    }
    *e = end;
    return 1;
}

/* C++: "ns::sub::Foo::bar<T>" -> "Foo::bar<T>": the last "Class::method" preceded by at
 * least one namespace. */
static int short_cpp(const char *s, size_t n, size_t *b, size_t *e)
{
    size_t pos = 0, last = 0;
    int k = 0;
    for (;;) {
        if (pos >= n || !(is_w(s[pos]) && !(s[pos] >= '0' && s[pos] <= '9')))
            break;
        size_t j = pos + 1;
        while (j < n && is_w(s[j]))
            j++;
        if (j + 1 >= n || s[j] != ':' || s[j + 1] != ':')
            break;
        pos = last = j + 2;
        k++;
    }
    /* try the candidates from the last namespace boundary back to the first */
    for (size_t st = last; k > 0; k--) {
        if (cpp_tail(s, n, st, e)) {
            *b = st;
            return 1;
        }
        if (k == 1)
            break;
        size_t i = st - 2; /* the "::" that ends at st; the one before ends our new st */
        while (i > 0 && !(i >= 2 && s[i - 1] == ':' && s[i - 2] == ':'))
            i--;
        st = i;
    }
    return 0;
}

void sc_callgraph_shorten_name(const char *s, size_t n, struct sc_buf *out)
{
    static const char anon[] = "(anonymous namespace)::";
    if (n >= sizeof anon - 1 && memcmp(s, anon, sizeof anon - 1) == 0) {
        s += sizeof anon - 1;
        n -= sizeof anon - 1;
    }
    struct sc_buf t = SC_BUF_INIT;
    strip_go_version(s, n, &t);
    if (t.oom) {
        out->oom = 1;
        return;
    }
    const char *v = t.data ? t.data : "";
    size_t b, e;
    if (short_go(v, t.len, &b, &e) || short_java(v, t.len, &b, &e) || short_cpp(v, t.len, &b, &e))
        sc_buf_append(out, v + b, e - b);
    else
        sc_buf_append(out, v, t.len);
    sc_buf_release(&t);
}

/* ---- colours -------------------------------------------------------------------------- */

void sc_callgraph_color(double score, int background, char out[8])
{
    /* pprof's scheme: saturation and value in HSV terms, scores pushed away from grey by
     * a power of 0.3, and no hue at all near zero */
    double sat = background ? 0.1 : 1.0, val = background ? 0.93 : 0.7;
    if (score > 1.0)
        score = 1.0;
    if (score < -1.0)
        score = -1.0;
    if (fabs(score) < 0.2)
        sat *= fabs(score) / 0.2;
    if (score > 0.0)
        score = pow(score, 0.3);
    if (score < 0.0)
        score = -pow(-score, 0.3);
    double r, g, b;
    if (score < 0.0) {
        g = val;
        r = val * (1 + sat * score);
    } else {
        r = val;
        g = val * (1 - sat * score);
    }
    b = val * (1 - sat);
    snprintf(out, 8, "#%02x%02x%02x", (unsigned)(uint8_t)(r * 255.0),
             (unsigned)(uint8_t)(g * 255.0), (unsigned)(uint8_t)(b * 255.0));
}

/* ---- DOT ---------------------------------------------------------------------------------- */

/* pprof's escaping for DOT strings: backslash and quote escaped, newlines left-justified. */
static void put_esc(struct sc_buf *out, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        char ch = s[i];
        if (ch == '\\' || ch == '"') {
            sc_buf_putc(out, '\\');
            sc_buf_putc(out, ch);
        } else if (ch == '\n') {
            sc_buf_puts(out, "\\l");
        } else {
            sc_buf_putc(out, ch);
        }
    }
}

static void put_value(struct sc_buf *out, const struct sc_callgraph_int *c, int64_t v)
{
    struct sc_str u = sc_profile_str(c->p, c->p->sample_types[c->vi].unit);
    char unit[64];
    snprintf(unit, sizeof unit, "%.*s", (int)u.len, u.ptr ? u.ptr : "");
    sc_units_label(out, v, unit, c->ounit);
}

/* pprof's percentage without the padding. */
static void put_pct(struct sc_buf *out, int64_t v, int64_t total)
{
    struct sc_buf t = SC_BUF_INIT;
    sc_units_percent(&t, v, total);
    const char *s = t.data ? t.data : "";
    while (*s == ' ')
        s++;
    sc_buf_puts(out, s);
    sc_buf_release(&t);
}

/* A node's name as pprof prints it in a box: shortened, one line per name component. */
static void put_multiline_name(struct sc_buf *out, const struct sc_callgraph_node *n)
{
    if (n->nameless) {
        put_esc(out, n->name.ptr, n->name.len);
        sc_buf_puts(out, "\\n");
        return;
    }
    struct sc_buf s = SC_BUF_INIT, e = SC_BUF_INIT;
    sc_callgraph_shorten_name(n->name.ptr, n->name.len, &s);
    put_esc(&e, s.data ? s.data : "", s.len);
    const char *x = e.data ? e.data : "";
    for (size_t i = 0; i < e.len;) {
        if (x[i] == ':' && i + 1 < e.len && x[i + 1] == ':') {
            sc_buf_puts(out, "\\n");
            i += 2;
        } else if (e.len - i >= 5 && memcmp(x + i, "[...]", 5) == 0) {
            sc_buf_puts(out, "[\xe2\x80\xa6]"); /* Go type parameters, kept on one line */
            i += 5;
        } else if (x[i] == '.') {
            sc_buf_puts(out, "\\n");
            i++;
        } else {
            sc_buf_putc(out, x[i++]);
        }
    }
    sc_buf_puts(out, "\\n");
    if (s.oom || e.oom)
        out->oom = 1;
    sc_buf_release(&s);
    sc_buf_release(&e);
}

/* A tag as the writer handles it (numeric tags may be merged into ranges). */
struct vtag {
    struct sc_str name;
    int64_t value, flat, cum;
};

/* pprof's tag order: |cum| (unless flat tags are shown), |flat|, name. */
static int cmp_vtags(const void *a, const void *b, void *arg)
{
    const struct vtag *x = a, *y = b;
    int flat = *(const int *)arg;
    if (!flat && x->cum != y->cum)
        return abs64(x->cum) > abs64(y->cum) ? -1 : abs64(x->cum) < abs64(y->cum) ? 1 : 0;
    if (x->flat != y->flat)
        return abs64(x->flat) > abs64(y->flat) ? -1 : abs64(x->flat) < abs64(y->flat) ? 1 : 0;
    return cmp_str(x->name, y->name);
}

/* One tag box: "<box> [...]" and its edge from `from`. */
static void put_nodelet(struct sc_buf *out, const struct sc_callgraph_int *c, const char *box,
                        const char *from, struct sc_str name, int64_t w, const char *attr)
{
    struct sc_buf v = SC_BUF_INIT;
    put_value(&v, c, w);
    const char *ws = v.data ? v.data : "";
    sc_buf_printf(out, "%s [label = \"%.*s\" id=\"%s\" fontsize=8 shape=box3d tooltip=\"%s\"]\n",
                  box, (int)name.len, name.ptr, box, ws);
    if (c->large) /* no edge label anywhere, or dot doubles every edge's ranks */
        sc_buf_printf(out, "%s -> %s [weight=100 tooltip=\"%s\"%s]\n", from, box, ws, attr);
    else
        sc_buf_printf(out,
                      "%s -> %s [label=\" %s\" weight=100 tooltip=\"%s\" labeltooltip=\"%s\"%s]\n",
                      from, box, ws, ws, ws, attr);
    if (v.oom)
        out->oom = 1;
    sc_buf_release(&v);
}

/* Numeric tag boxes under source: at most four, nearby values merged into "a..b" ranges. */
static void numeric_nodelets(struct sc_buf *out, struct sc_callgraph_int *c, struct vtag *ts,
                             uint32_t n, int flat, const char *source)
{
    if (n > 1)
        qsort_r(ts, n, sizeof *ts, cmp_vtags, &flat);
    struct vtag merged[MAX_NODELETS];
    if (n > MAX_NODELETS) {
        uint32_t *grp = malloc(n * sizeof *grp);
        if (!grp) {
            out->oom = 1;
            return;
        }
        const char *u;
        for (uint32_t i = 0; i < n; i++) {
            uint32_t best = 0;
            if (i >= MAX_NODELETS) {
                double d = 0;
                for (uint32_t k = 0; k < MAX_NODELETS; k++) {
                    double v = sc_units_scale(ts[k].value, c->num_unit, c->num_unit, &u);
                    double nd = fabs(v - (double)ts[i].value);
                    if (k == 0 || nd < d) {
                        best = k;
                        d = nd;
                    }
                }
            } else {
                best = i;
            }
            grp[i] = best;
        }
        for (uint32_t k = 0; k < MAX_NODELETS; k++) {
            uint32_t cnt = 0, mi = k, ma = k;
            int64_t f = 0, cu = 0;
            for (uint32_t i = 0; i < n; i++) {
                if (grp[i] != k)
                    continue;
                cnt++;
                f += ts[i].flat;
                cu += ts[i].cum;
                if (i == k)
                    continue;
                if ((int64_t)sc_units_scale(ts[i].value, c->num_unit, c->num_unit, &u) <
                    ts[mi].value)
                    mi = i;
                if ((int64_t)sc_units_scale(ts[i].value, c->num_unit, c->num_unit, &u) >
                    ts[ma].value)
                    ma = i;
            }
            struct sc_buf l = SC_BUF_INIT;
            sc_units_label(&l, ts[mi].value, c->num_unit, "auto");
            if (cnt > 1) {
                sc_buf_puts(&l, "..");
                sc_units_label(&l, ts[ma].value, c->num_unit, "auto");
            }
            char *name = l.oom ? NULL : sc_arena_strndup(&c->arena, l.data ? l.data : "", l.len);
            sc_buf_release(&l);
            if (!name) {
                out->oom = 1;
                free(grp);
                return;
            }
            merged[k].name.ptr = name;
            merged[k].name.len = (uint32_t)strlen(name);
            merged[k].value = 0;
            merged[k].flat = f;
            merged[k].cum = cu;
        }
        free(grp);
        ts = merged;
        n = MAX_NODELETS;
        qsort_r(ts, n, sizeof *ts, cmp_vtags, &flat);
    }
    for (uint32_t j = 0; j < n; j++) {
        int64_t w = ts[j].cum;
        const char *attr = " style=\"dotted\"";
        if (flat || ts[j].flat == ts[j].cum) {
            w = ts[j].flat;
            attr = "";
        }
        if (w != 0) {
            char box[48];
            snprintf(box, sizeof box, "N%s_%u", source, j);
            put_nodelet(out, c, box, source, ts[j].name, w, attr);
        }
    }
}

/* The tag boxes of node i (id "N<i+1>"); returns whether there were any. */
static int put_nodelets(struct sc_buf *out, struct sc_callgraph_int *c,
                        const struct sc_callgraph *g, uint32_t i, int has_out)
{
    uint32_t id = g->nodes[i].id;
    uint32_t b = c->tag_start[id], e = c->tag_start[id + 1];
    if (b == e)
        return 0;
    const struct pass *f = &c->final;
    size_t before = out->len;
    struct vtag *labels = malloc((e - b) * sizeof *labels), *nums = malloc((e - b) * sizeof *nums);
    if (!labels || !nums) {
        free(labels);
        free(nums);
        out->oom = 1;
        return 0;
    }
    uint32_t nl = 0;
    for (uint32_t k = b; k < e; k++) {
        const struct cg_tag *t = &f->t[c->tag_list[k]];
        if (t->name == 0 && tag_kept(t, c->node_cutoff)) {
            labels[nl].name = c->groups.v[t->group];
            labels[nl].value = (int64_t)t->group; /* remembered for its numeric tags */
            labels[nl].flat = t->flat;
            labels[nl++].cum = t->cum;
        }
    }
    int flat = has_out; /* inner nodes show flat tags; leaves their cum */
    if (nl > 1)
        qsort_r(labels, nl, sizeof *labels, cmp_vtags, &flat);
    char source[32];
    for (uint32_t j = 0; j < nl && j < MAX_NODELETS; j++) {
        int64_t w = flat ? labels[j].flat : labels[j].cum;
        if (w == 0)
            continue;
        char box[48];
        snprintf(source, sizeof source, "N%u", i + 1);
        snprintf(box, sizeof box, "N%u_%u", i + 1, j);
        put_nodelet(out, c, box, source, labels[j].name, w, "");
        uint32_t group = (uint32_t)labels[j].value, nn = 0;
        for (uint32_t k = b; k < e; k++) {
            const struct cg_tag *t = &f->t[c->tag_list[k]];
            if (t->name && t->group == group && tag_kept(t, c->node_cutoff)) {
                nums[nn].name = c->tagnames.v[t->name];
                nums[nn].value = t->value;
                nums[nn].flat = t->flat;
                nums[nn++].cum = t->cum;
            }
        }
        if (nn) {
            snprintf(source, sizeof source, "N%u_%u", i + 1, j);
            numeric_nodelets(out, c, nums, nn, flat, source);
        }
    }
    uint32_t nn = 0;
    for (uint32_t k = b; k < e; k++) {
        const struct cg_tag *t = &f->t[c->tag_list[k]];
        if (t->name && t->group == 0 && tag_kept(t, c->node_cutoff)) {
            nums[nn].name = c->tagnames.v[t->name];
            nums[nn].value = t->value;
            nums[nn].flat = t->flat;
            nums[nn++].cum = t->cum;
        }
    }
    if (nn) {
        snprintf(source, sizeof source, "N%u", i + 1);
        numeric_nodelets(out, c, nums, nn, flat, source);
    }
    free(labels);
    free(nums);
    return out->len != before;
}

static void put_base(struct sc_buf *out, struct sc_str f)
{
    const char *base = f.ptr + f.len;
    while (base > f.ptr && base[-1] != '/')
        base--;
    sc_buf_append(out, base, (size_t)(f.ptr + f.len - base));
}

/* The legend's lines, each ending in '\n' in lines (pprof's report labels). */
static void legend_lines(const struct sc_profile *p, int vi, const struct sc_callgraph_opts *o,
                         const struct sc_callgraph *g, struct sc_buf *lines)
{
    const struct sc_callgraph_int *c = g->in;
    if (p->nmappings) {
        struct sc_str f = sc_profile_str(p, p->mappings[0].filename);
        if (f.len) {
            sc_buf_puts(lines, "File: ");
            put_base(lines, f);
            sc_buf_putc(lines, '\n');
        }
        struct sc_str b = sc_profile_str(p, p->mappings[0].build_id);
        if (b.len) {
            sc_buf_puts(lines, "Build ID: ");
            sc_buf_append(lines, b.ptr, b.len);
            sc_buf_putc(lines, '\n');
        }
    }
    for (uint32_t i = 0; i < p->ncomments; i++) {
        struct sc_str cm = sc_profile_str(p, p->comments[i]);
        if (cm.len && cm.ptr[0] == '#')
            continue;
        sc_buf_append(lines, cm.ptr, cm.len);
        sc_buf_putc(lines, '\n');
    }
    struct sc_str type = sc_profile_str(p, p->sample_types[vi].type);
    struct sc_str us = sc_profile_str(p, p->sample_types[vi].unit);
    char unit[64];
    snprintf(unit, sizeof unit, "%.*s", (int)us.len, us.ptr ? us.ptr : "");
    if (type.len) {
        sc_buf_puts(lines, "Type: ");
        sc_buf_append(lines, type.ptr, type.len);
        sc_buf_putc(lines, '\n');
    }
    sc_top_time_line(p, lines);
    if (p->duration_nanos) {
        sc_buf_puts(lines, "Duration: ");
        sc_units_label(lines, p->duration_nanos, "nanoseconds", "auto");
        sc_buf_puts(lines, ", Total samples = ");
        put_value(lines, c, g->total);
        const char *tu;
        double tn = sc_units_scale(g->total, unit, "nanoseconds", &tu);
        sc_buf_putc(lines, ' ');
        if (!strcmp(tu, "ns") && (int64_t)tn != 0) {
            sc_buf_putc(lines, '(');
            sc_units_percent(lines, (int64_t)tn, p->duration_nanos);
            sc_buf_putc(lines, ')');
        }
        sc_buf_putc(lines, '\n');
    }
    int64_t flat_sum = 0;
    for (uint32_t i = 0; i < g->nnodes; i++)
        flat_sum += g->nodes[i].flat;
    sc_buf_puts(lines, "Showing nodes accounting for ");
    put_value(lines, c, flat_sum);
    sc_buf_puts(lines, ", ");
    put_pct(lines, flat_sum, g->total);
    sc_buf_puts(lines, " of ");
    put_value(lines, c, g->total);
    sc_buf_puts(lines, " total\n");
    if (g->total) {
        if (g->dropped_nodes) {
            sc_buf_printf(lines, "Dropped %u node%s (cum <= ", g->dropped_nodes,
                          g->dropped_nodes > 1 ? "s" : "");
            put_value(lines, c, abs64((int64_t)((double)g->total * o->nodefraction)));
            sc_buf_puts(lines, ")\n");
        }
        if (g->dropped_edges) {
            sc_buf_printf(lines, "Dropped %u edge%s (freq <= ", g->dropped_edges,
                          g->dropped_edges > 1 ? "s" : "");
            put_value(lines, c, abs64((int64_t)((double)g->total * o->edgefraction)));
            sc_buf_puts(lines, ")\n");
        }
        if (g->nnodes > 0 && g->nnodes < g->orig_count)
            sc_buf_printf(lines, "Showing top %u nodes out of %u\n", g->nnodes, g->orig_count);
        /* what the layout budget left out (sc_callgraph_svg) */
        if (g->asked)
            sc_buf_printf(lines, "Fewer nodes than the %u asked: more take too long to lay out\n",
                          g->asked);
        if (g->thinned)
            sc_buf_printf(lines,
                          "Dropped %u more edge%s to lay out in time (each node keeps its "
                          "heaviest caller)\n",
                          g->thinned, g->thinned > 1 ? "s" : "");
    }
    /* the blank line before the pointer is pprof's */
    sc_buf_puts(lines, "\nSee https://git.io/JfYMW for how to read the graph\n");
}

void sc_callgraph_write_dot(const struct sc_profile *p, int vi, const struct sc_callgraph_opts *o,
                            const struct sc_callgraph *g, struct sc_buf *out)
{
    struct sc_callgraph_int *c = g->in;
    if (!c) {
        out->oom = 1;
        return;
    }
    struct sc_buf title = SC_BUF_INIT;
    if (o->title)
        sc_buf_puts(&title, o->title);
    else if (p->nmappings && sc_profile_str(p, p->mappings[0].filename).len)
        put_base(&title, sc_profile_str(p, p->mappings[0].filename));
    const char *ts = title.len ? title.data : "";

    sc_buf_puts(out, "digraph \"");
    put_esc(out, title.len ? ts : "unnamed", title.len ? title.len : 7);
    sc_buf_puts(out, "\" {\nnode [style=filled fillcolor=\"#f8f8f8\"]\n");
    c->large = o->style == SC_CALLGRAPH_STYLE_LARGE;
    if (c->large) {
        /* the virtual nodes of the edges that span ranks sit nodesep apart: on a dense graph
         * they make the picture many times wider than tall (34,000 by 9,000 points for
         * synthetic-allocs-100k). nodesep (pprof's 0.25 inches) shrinks to keep it about
         * as wide as tall, a rank being about 1.8 inches of it. */
        struct shape sh;
        uint64_t size = cg_size_of(g, g->nnodes, g->nedges, &sh);
        double per_rank =
            size != UINT64_MAX && sh.ranks ? (double)(size - g->nnodes) / sh.ranks : 0;
        double sep = per_rank > 0 ? 1.8 * sh.ranks / per_rank : 0.25;
        sc_buf_printf(out, "graph [" LARGE_ATTRS " nodesep=%.2f]\n",
                      sep < 0.02   ? 0.02
                      : sep > 0.25 ? 0.25
                                   : sep);
    }

    /* the legend: the first line names the box, all lines left-justified inside it */
    struct sc_buf lines = SC_BUF_INIT;
    legend_lines(p, vi, o, g, &lines);
    const char *ls = lines.data ? lines.data : "";
    const char *nl = memchr(ls, '\n', lines.len);
    size_t first = nl ? (size_t)(nl - ls) : lines.len;
    sc_buf_puts(out, "subgraph cluster_L { \"");
    put_esc(out, ls, first);
    sc_buf_puts(out, "\" [shape=box fontsize=16 label=\"");
    for (size_t i = 0; i < lines.len; i++) {
        if (ls[i] == '\n')
            sc_buf_puts(out, "\\l");
        else if (ls[i] == '\\' || ls[i] == '"') {
            sc_buf_putc(out, '\\');
            sc_buf_putc(out, ls[i]);
        } else
            sc_buf_putc(out, ls[i]);
    }
    sc_buf_putc(out, '"');
    if (title.len) {
        sc_buf_puts(out, " tooltip=\"");
        put_esc(out, ts, title.len);
        sc_buf_putc(out, '"');
    }
    sc_buf_puts(out, "] }\n");
    if (lines.oom || title.oom)
        out->oom = 1;
    sc_buf_release(&lines);
    sc_buf_release(&title);

    double max_flat = 0;
    for (uint32_t i = 0; i < g->nnodes; i++)
        if ((double)abs64(g->nodes[i].flat) > max_flat)
            max_flat = (double)abs64(g->nodes[i].flat);
    uint8_t *has_out = calloc((size_t)g->nnodes + 1, 1);
    uint8_t *has_nodelets = calloc((size_t)g->nnodes + 1, 1);
    if (!has_out || !has_nodelets) {
        free(has_out);
        free(has_nodelets);
        out->oom = 1;
        return;
    }
    for (uint32_t i = 0; i < g->nedges; i++)
        has_out[g->edges[i].src] = 1;
    double tot = (double)abs64(g->total);
    for (uint32_t i = 0; i < g->nnodes; i++) {
        const struct sc_callgraph_node *n = &g->nodes[i];
        struct sc_buf fv = SC_BUF_INIT, cv = SC_BUF_INIT;
        put_value(&fv, c, n->flat);
        sc_buf_printf(out, "N%u [label=\"", i + 1);
        put_multiline_name(out, n);
        if (n->flat != 0) {
            sc_buf_append(out, fv.data, fv.len);
            sc_buf_puts(out, " (");
            put_pct(out, n->flat, g->total);
            sc_buf_putc(out, ')');
        } else {
            sc_buf_putc(out, '0');
        }
        if (n->cum != n->flat) {
            sc_buf_puts(out, n->flat != 0 ? "\\n" : " ");
            put_value(&cv, c, n->cum);
            sc_buf_puts(out, "of ");
            sc_buf_append(out, cv.data, cv.len);
            sc_buf_puts(out, " (");
            put_pct(out, n->cum, g->total);
            sc_buf_putc(out, ')');
        } else {
            sc_buf_append(&cv, fv.data, fv.len);
        }
        /* font from 8 to 24 points with the square root of flat, so small nodes stay legible */
        int fs = 8;
        if (max_flat != 0 && n->flat != 0 && (double)abs64(n->flat) <= max_flat)
            fs += (int)ceil(16.0 * sqrt((double)abs64(n->flat) / max_flat));
        char fg[8], bg[8];
        sc_callgraph_color((double)n->cum / tot, 0, fg);
        sc_callgraph_color((double)n->cum / tot, 1, bg);
        sc_buf_printf(out, "\" id=\"node%u\" fontsize=%d shape=box tooltip=\"", i + 1, fs);
        put_esc(out, n->name.ptr, n->name.len);
        sc_buf_puts(out, " (");
        sc_buf_append(out, cv.data, cv.len);
        sc_buf_printf(out, ")\" color=\"%s\" fillcolor=\"%s\"]\n", fg, bg);
        if (fv.oom || cv.oom)
            out->oom = 1;
        sc_buf_release(&fv);
        sc_buf_release(&cv);
        has_nodelets[i] = (uint8_t)put_nodelets(out, c, g, i, has_out[i]);
    }
    for (uint32_t i = 0; i < g->nedges; i++) {
        const struct sc_callgraph_edge *e = &g->edges[i];
        const struct sc_callgraph_node *s = &g->nodes[e->src], *d = &g->nodes[e->dst];
        struct sc_buf w = SC_BUF_INIT;
        put_value(&w, c, e->weight);
        const char *ws = w.data ? w.data : "";
        sc_buf_printf(out, "N%u -> N%u [", e->src + 1, e->dst + 1);
        /* the large style's edges have no label: the value (and "inline") is in the tooltip */
        int large = o->style == SC_CALLGRAPH_STYLE_LARGE;
        if (!large)
            sc_buf_printf(out, "label=\" %s%s\"", ws, e->inlined ? "\\n (inline)" : "");
        if (g->total != 0) {
            int64_t wt = abs64(e->weight * 100 / g->total), pw = abs64(e->weight * 5 / g->total);
            int weight = 1 + (int)(wt < 100 ? wt : 100), width = 1 + (int)(pw < 5 ? pw : 5);
            if (weight > 1)
                sc_buf_printf(out, " weight=%d", weight);
            if (width > 1)
                sc_buf_printf(out, " penwidth=%d", width);
            char col[8];
            sc_callgraph_color((double)e->weight / tot, 0, col);
            sc_buf_printf(out, " color=\"%s\"", col);
        }
        for (int k = 0; k < 2 - large; k++) {
            sc_buf_puts(out, k ? " labeltooltip=\"" : " tooltip=\"");
            put_esc(out, s->name.ptr, s->name.len);
            sc_buf_puts(out, e->residual ? " ... " : " -> ");
            put_esc(out, d->name.ptr, d->name.len);
            sc_buf_printf(out, " (%s%s)\"", ws, large && e->inlined ? ", inline" : "");
        }
        if (e->residual)
            sc_buf_puts(out, " style=\"dotted\"");
        if (has_nodelets[e->src])
            sc_buf_puts(out, " minlen=2");
        sc_buf_puts(out, "]\n");
        if (w.oom)
            out->oom = 1;
        sc_buf_release(&w);
    }
    sc_buf_puts(out, "}\n");
    free(has_out);
    free(has_nodelets);
}

int sc_callgraph_dot(const struct sc_profile *p, int vi, const struct sc_callgraph_opts *o,
                     struct sc_buf *out, char *err)
{
    struct sc_callgraph g;
    int rc = sc_callgraph_compute(p, vi, o, &g, err);
    if (!rc) {
        sc_callgraph_write_dot(p, vi, o, &g, out);
        if (out->oom)
            rc = sc_errf(err, SC_ENOMEM, "out of memory");
    }
    sc_callgraph_release(&g);
    return rc;
}
