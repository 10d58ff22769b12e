/* jfr_profile.c - the profiles a JFR recording becomes: one per kind of sample (jfr.h), with
 * Pyroscope's context labels, and all kinds side by side in one for the command line. */
#include "formats/jfr.h"
#include "formats/jfr_int.h"
#include "formats/protowire.h"
#include "model/error.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the snapshot of context labels (Pyroscope's LabelsSnapshot) ----
 *
 *   message Context        { map<int64, int64> labels = 1; }             key, value: strings
 *   message LabelsSnapshot { map<int64, Context> contexts = 1; map<int64, string> strings = 2; }
 *
 * A map entry is a message of key (1) and value (2). */

static int snap_pair(struct sc_pb_rd *r, uint64_t *key, struct sc_pb_field *val)
{
    struct sc_pb_field f;
    int st;
    *key = 0;
    memset(val, 0, sizeof *val);
    while ((st = sc_pb_next(r, &f)) > 0) {
        if (f.num == 1 && f.wt == SC_WT_VARINT)
            *key = f.v;
        else if (f.num == 2)
            *val = f;
    }
    return st;
}

int jfr_snapshot_read(struct dec *d, const void *buf, size_t n)
{
    struct snapshot *s = &d->snap;
    struct sc_pb_rd r = {buf, (const uint8_t *)buf + n};
    struct sc_pb_field f;
    int st;
    while ((st = sc_pb_next(&r, &f)) > 0) {
        if (f.wt != SC_WT_LEN || (f.num != 1 && f.num != 2))
            continue;
        uint64_t key;
        struct sc_pb_field val;
        struct sc_pb_rd e = f.payload;
        if (snap_pair(&e, &key, &val) < 0)
            return BAD;
        if (f.num == 2) {
            if (val.num && val.wt != SC_WT_LEN)
                return BAD;
            if (sc_grow_array(&s->strs, &s->strs_cap, (uint64_t)s->nstrs + 1, sizeof *s->strs))
                return SC_ENOMEM;
            size_t len = val.num ? (size_t)(val.payload.end - val.payload.p) : 0;
            s->strs[s->nstrs].ptr = len ? (const char *)val.payload.p : "";
            s->strs[s->nstrs].len = (uint32_t)len;
            if (jfr_put_id(&s->str_of, key, s->nstrs++))
                return SC_ENOMEM;
            continue;
        }
        if (val.num && val.wt != SC_WT_LEN)
            return BAD;
        if (sc_grow_array(&s->ctxs, &s->ctxs_cap, (uint64_t)s->nctxs + 1, sizeof *s->ctxs))
            return SC_ENOMEM;
        s->ctxs[s->nctxs].start = s->npairs;
        s->ctxs[s->nctxs].n = 0;
        struct sc_pb_rd c = val.num ? val.payload : (struct sc_pb_rd){NULL, NULL};
        struct sc_pb_field lf;
        while ((st = sc_pb_next(&c, &lf)) > 0) {
            if (lf.num != 1 || lf.wt != SC_WT_LEN)
                continue;
            uint64_t k;
            struct sc_pb_field v;
            struct sc_pb_rd le = lf.payload;
            if (snap_pair(&le, &k, &v) < 0 || (v.num && v.wt != SC_WT_VARINT))
                return BAD;
            if (sc_grow_array(&s->pairs, &s->pairs_cap, (uint64_t)s->npairs + 1, sizeof *s->pairs))
                return SC_ENOMEM;
            s->pairs[s->npairs][0] = (int64_t)k;
            s->pairs[s->npairs][1] = (int64_t)v.v;
            s->npairs++;
            s->ctxs[s->nctxs].n++;
        }
        if (st < 0)
            return BAD;
        if (jfr_put_id(&s->ctx_of, key, s->nctxs++))
            return SC_ENOMEM;
    }
    return st < 0 ? BAD : 0;
}

static struct sc_str snap_str(const struct snapshot *s, int64_t id)
{
    const uint32_t *i = sc_map64_get(&s->str_of, (uint64_t)id);
    struct sc_str none = {"", 0};
    return i ? s->strs[*i] : none;
}

/* ---- building the profiles ---- */

static const struct {
    const char *profile;
    const char *types[2][2]; /* {type, unit} of each value */
    const char *period[2];
    int nvalues;
} kinds[SC_JFR_NKINDS] = {
    [SC_JFR_CPU] = {"cpu", {{"cpu", "nanoseconds"}}, {"cpu", "nanoseconds"}, 1},
    [SC_JFR_WALL] = {"wall", {{"wall", "nanoseconds"}}, {"wall", "nanoseconds"}, 1},
    [SC_JFR_ALLOC_TLAB] = {"heap",
                           {{"alloc_in_new_tlab_objects", "count"},
                            {"alloc_in_new_tlab_bytes", "bytes"}},
                           {"space", "bytes"},
                           2},
    [SC_JFR_ALLOC_OUTSIDE] = {"heap",
                              {{"alloc_outside_tlab_objects", "count"},
                               {"alloc_outside_tlab_bytes", "bytes"}},
                              {"space", "bytes"},
                              2},
    [SC_JFR_ALLOC_SAMPLE] = {"heap",
                             {{"alloc_sample_objects", "count"}, {"alloc_sample_bytes", "bytes"}},
                             {"space", "bytes"},
                             2},
    [SC_JFR_LOCK] = {"mutex",
                     {{"contentions", "count"}, {"delay", "nanoseconds"}},
                     {"mutex", "count"},
                     2},
    [SC_JFR_PARK] = {"block",
                     {{"contentions", "count"}, {"delay", "nanoseconds"}},
                     {"block", "count"},
                     2},
};

const char *sc_jfr_kind_profile(int k)
{
    return k >= 0 && k < SC_JFR_NKINDS ? kinds[k].profile : NULL;
}

static int target_open(struct dec *d, int k)
{
    struct target *t = &d->t[k];
    if (t->p)
        return 0;
    t->p = sc_profile_new();
    if (!t->p)
        return jfr_nomem(d);
    for (int i = 0; i < kinds[k].nvalues; i++)
        if (sc_profile_add_sample_type(t->p, kinds[k].types[i][0], kinds[k].types[i][1]) < 0)
            return jfr_nomem(d);
    int64_t a = sc_profile_intern(t->p, kinds[k].period[0], strlen(kinds[k].period[0]));
    int64_t b = sc_profile_intern(t->p, kinds[k].period[1], strlen(kinds[k].period[1]));
    if (a < 0 || b < 0)
        return jfr_nomem(d);
    t->p->period_type.type = (uint32_t)a;
    t->p->period_type.unit = (uint32_t)b;
    return 0;
}

void jfr_target_release(struct target *t)
{
    sc_profile_free(t->p);
    sc_map64_release(&t->fn_of_name);
    sc_map64_release(&t->loc_of);
    sc_map64_release(&t->fn_of_method);
    sc_map64_release(&t->span_of_trace);
    sc_map64_release(&t->lspan_of);
    free(t->spans);
    free(t->lspans);
    memset(t, 0, sizeof *t);
}

static int intern(struct dec *d, struct sc_profile *p, const char *s, size_t n, const char *what,
                  uint32_t *out)
{
    int rc = sc_limits_string(d->lim, n, what, d->err);
    if (rc)
        return rc;
    int64_t i = sc_profile_intern(p, s, n);
    if (i < 0)
        return i == SC_ENOMEM ? jfr_nomem(d) : sc_errf(d->err, (int)i, "too many strings");
    if (p->strings.n > d->lim->max_strings)
        return sc_errf(d->err, SC_ELIMIT, "more than %u strings (limits.max_strings)",
                       (unsigned)d->lim->max_strings);
    *out = (uint32_t)i;
    return 0;
}

/* Pyroscope's merging of JVM-generated class names: the serial numbers and addresses of
 * lambdas, reflection accessors and CGLIB proxies become "_". Returns the new length. */
static size_t merge_generated(const char *s, size_t n)
{
    static const char lambda[] = "$$Lambda",
                      accessor[] = "jdk/internal/reflect/GeneratedMethodAccessor",
                      cglib[] = "$$EnhancerBySpringCGLIB$$";
    size_t la = sizeof accessor - 1;
    if (n > la && !memcmp(s, accessor, la)) {
        size_t i = la;
        while (i < n && s[i] >= '0' && s[i] <= '9')
            i++;
        if (i == n)
            return la;
    }
    const char *m = NULL;
    for (const char *x = s; (x = memmem(x, n - (size_t)(x - s), lambda, sizeof lambda - 1)); x++)
        m = x;
    if (m && m > s) {
        /* then Pyroscope's \$?\d*[./](0x)?[0-9a-f]+ or \d+ to the end, and JDK 17's
         * $87+0x00007f9a0c008a08/2147046752: groups of [+./] (0x)? hex digits */
        size_t i = (size_t)(m - s) + sizeof lambda - 1, j = i;
        if (j < n && s[j] == '$')
            j++;
        while (j < n && s[j] >= '0' && s[j] <= '9')
            j++;
        int ok = j == n && j > i + (s[i] == '$');
        while (!ok && j < n && (s[j] == '.' || s[j] == '/' || s[j] == '+')) {
            j++;
            if (j + 1 < n && s[j] == '0' && s[j + 1] == 'x')
                j += 2;
            size_t h = j;
            while (j < n && ((s[j] >= '0' && s[j] <= '9') || (s[j] >= 'a' && s[j] <= 'f')))
                j++;
            if (j == h)
                break;
            ok = j == n;
        }
        if (ok)
            return i;
    }
    const char *c = memmem(s, n, cglib, sizeof cglib - 1);
    if (c && c > s)
        return (size_t)(c - s) + sizeof cglib - 1;
    return n;
}

/* The function of JFR method id m in t (NULL-safe: UINT32_MAX when the method is unknown). */
static int method_fn(struct dec *d, struct target *t, uint64_t m, uint32_t *fn)
{
    const uint32_t *cached = sc_map64_get(&t->fn_of_method, m);
    if (cached) {
        *fn = *cached;
        return 0;
    }
    *fn = UINT32_MAX;
    const uint32_t *mi = sc_map64_get(&d->method_of, m);
    if (!mi)
        return 0;
    const struct method *me = &d->methods[*mi];
    const uint32_t *ci = sc_map64_get(&d->class_name_of, me->type);
    const uint32_t *cs = ci ? sc_map64_get(&d->symbol_of, d->class_names[*ci]) : NULL;
    const uint32_t *ns = sc_map64_get(&d->symbol_of, me->name);
    struct jstr cname = cs ? jfr_resolve(d, d->strs[*cs]) : (struct jstr){"", 0, 0, 0};
    struct jstr mname = ns ? jfr_resolve(d, d->strs[*ns]) : (struct jstr){"", 0, 0, 0};
    d->name.len = 0;
    if (cname.len) {
        sc_buf_append(&d->name, cname.p, merge_generated(cname.p, cname.len));
        if (d->name.len < cname.len)
            sc_buf_putc(&d->name, '_');
        sc_buf_putc(&d->name, '.');
    }
    sc_buf_append(&d->name, mname.p, mname.len);
    if (d->name.oom)
        return jfr_nomem(d);
    if (d->name.len == 0)
        sc_buf_puts(&d->name, "[unknown]");
    uint32_t s;
    int rc = intern(d, t->p, d->name.data, d->name.len, "a frame name", &s);
    if (rc)
        return rc;
    int added;
    uint32_t *slot = sc_map64_upsert(&t->fn_of_name, s, t->p->nfunctions, &added);
    if (!slot)
        return jfr_nomem(d);
    if (added) {
        if (t->p->nfunctions >= d->lim->max_functions)
            return sc_errf(d->err, SC_ELIMIT, "more than %u functions (limits.max_functions)",
                           (unsigned)d->lim->max_functions);
        if (sc_profile_add_function(t->p, s, 0) < 0)
            return jfr_nomem(d);
    }
    *fn = *slot;
    if (!sc_map64_upsert(&t->fn_of_method, m, *fn, &added))
        return jfr_nomem(d);
    return 0;
}

static int location(struct dec *d, struct target *t, uint32_t fn, int32_t line, uint32_t *loc)
{
    int added;
    uint64_t key = (uint64_t)fn << 32 | (uint32_t)line;
    uint32_t *slot = sc_map64_upsert(&t->loc_of, key, t->p->nlocations, &added);
    if (!slot)
        return jfr_nomem(d);
    if (added) {
        if (t->p->nlocations >= d->lim->max_locations)
            return sc_errf(d->err, SC_ELIMIT, "more than %u locations (limits.max_locations)",
                           (unsigned)d->lim->max_locations);
        int64_t l = sc_profile_add_simple_location(t->p, fn);
        if (l < 0)
            return jfr_nomem(d);
        t->p->lines[t->p->locations[l].line_start].line = line > 0 ? line : 0;
    }
    *loc = *slot;
    return 0;
}

/* The span of t's sample_locs holding stack trace id's locations (leaf first, as JFR lists
 * frames); *found 0 when the chunk has no such trace. */
static int trace_span(struct dec *d, struct target *t, uint64_t id, struct span *out, int *found)
{
    const uint32_t *si = sc_map64_get(&t->span_of_trace, id);
    *found = 1;
    if (si) {
        *out = t->spans[*si];
        return 0;
    }
    const uint32_t *ti = sc_map64_get(&d->trace_of, id);
    if (!ti) {
        *found = 0;
        return 0;
    }
    const struct trace tr = d->traces[*ti];
    struct sc_profile *p = t->p;
    struct span sp = {p->nsample_locs, 0};
    if (sc_grow_array(&p->sample_locs, &p->sample_locs_cap, (uint64_t)p->nsample_locs + tr.nf,
                      sizeof *p->sample_locs))
        return jfr_nomem(d);
    for (uint32_t i = 0; i < tr.nf; i++) {
        const struct frame *f = &d->frames[tr.f0 + i];
        uint32_t fn, loc = 0;
        int rc = method_fn(d, t, f->method, &fn);
        if (rc)
            return rc;
        if (fn == UINT32_MAX)
            continue; /* a method the pools lack: the frame is left out, as Pyroscope does */
        if ((rc = location(d, t, fn, f->line, &loc)))
            return rc;
        p->sample_locs[p->nsample_locs++] = loc;
        sp.n++;
    }
    if (sc_grow_array(&t->spans, &t->spans_cap, (uint64_t)t->nspans + 1, sizeof *t->spans))
        return jfr_nomem(d);
    t->spans[t->nspans] = sp;
    int added;
    if (!sc_map64_upsert(&t->span_of_trace, id, t->nspans++, &added))
        return jfr_nomem(d);
    *out = sp;
    return 0;
}

static int add_label(struct dec *d, struct sc_profile *p, const char *k, size_t kn, const char *v,
                     size_t vn)
{
    uint32_t ks = 0, vs = 0;
    int rc = intern(d, p, k, kn, "a label name", &ks);
    if (!rc)
        rc = intern(d, p, v, vn, "a label value", &vs);
    if (!rc && p->samples[p->nsamples - 1].nlabels >= d->lim->max_labels)
        rc = sc_errf(d->err, SC_ELIMIT, "more than %u labels on a sample (limits.max_labels)",
                     (unsigned)d->lim->max_labels);
    if (!rc && sc_profile_add_label(p, ks, vs, 0, 0))
        rc = jfr_nomem(d);
    return rc;
}

/* The labels of the context (ctx, span, span_name) on the sample just added. */
static int add_labels(struct dec *d, struct target *t, uint64_t ctx, uint64_t span,
                      uint64_t span_name)
{
    const struct snapshot *s = &d->snap;
    struct sc_profile *p = t->p;
    const uint32_t *ci = ctx ? sc_map64_get(&s->ctx_of, ctx) : NULL;
    int rc = 0;
    for (uint32_t i = 0; ci && i < s->ctxs[*ci].n && !rc; i++) {
        const int64_t *pr = s->pairs[s->ctxs[*ci].start + i];
        struct sc_str k = snap_str(s, pr[0]), v = snap_str(s, pr[1]);
        if (k.len && v.len)
            rc = add_label(d, p, k.ptr, k.len, v.ptr, v.len);
    }
    if (!rc && span) {
        char hex[17];
        snprintf(hex, sizeof hex, "%016llx", (unsigned long long)span);
        rc = add_label(d, p, "profile_id", 10, hex, 16);
    }
    struct sc_str sn = span_name ? snap_str(s, (int64_t)span_name) : (struct sc_str){"", 0};
    if (!rc && sn.len)
        rc = add_label(d, p, "span_name", 9, sn.ptr, sn.len);
    return rc;
}

/* Adds a sample of kind k: values (the kind's count), time, trace and context. */
int jfr_emit(struct dec *d, int k, uint64_t trace, uint64_t ctx, uint64_t span, uint64_t span_name,
             const int64_t *values, int64_t time_ns)
{
    int rc = target_open(d, k);
    if (rc)
        return rc;
    struct target *t = &d->t[k];
    struct span sp = {0, 0};
    int found;
    if ((rc = trace_span(d, t, trace, &sp, &found)))
        return rc;
    if (!found)
        return 0; /* no stack trace of that id: nothing to attribute it to (Pyroscope too) */
    if (d->nsamples >= d->lim->max_samples)
        return sc_errf(d->err, SC_ELIMIT, "more than %u samples (limits.max_samples)",
                       (unsigned)d->lim->max_samples);
    d->nsamples++;
    uint32_t lstart = 0, ln = 0;
    int has_ctx = ctx || span || span_name;
    uint32_t *li = NULL;
    if (has_ctx) {
        uint64_t h = sc_hash_combine(sc_hash_combine(sc_mix64(ctx), span), span_name);
        int added;
        li = sc_map64_upsert(&t->lspan_of, h, t->nlspans, &added);
        if (!li)
            return jfr_nomem(d);
        if (!added) {
            const struct lspan *l = &t->lspans[*li];
            if (l->ctx == ctx && l->span == span && l->span_name == span_name) {
                lstart = l->start;
                ln = l->n;
                has_ctx = 0;
            }
            li = NULL; /* reused, or a hash collision: labels of its own, uncached */
        }
    }
    if (has_ctx)
        lstart = t->p->nlabels;
    if (sc_profile_add_sample_span(t->p, sp.start, sp.n, lstart, ln, values, time_ns) < 0)
        return jfr_nomem(d);
    if (has_ctx) {
        if ((rc = add_labels(d, t, ctx, span, span_name)))
            return rc;
        if (li) {
            if (sc_grow_array(&t->lspans, &t->lspans_cap, (uint64_t)t->nlspans + 1,
                              sizeof *t->lspans))
                return jfr_nomem(d);
            struct lspan l = {ctx, span, span_name, lstart,
                              t->p->samples[t->p->nsamples - 1].nlabels};
            t->lspans[t->nlspans++] = l; /* the index *li was filed under */
        }
    }
    if (time_ns && (!d->first_ns || time_ns < d->first_ns))
        d->first_ns = time_ns;
    if (time_ns > d->last_ns)
        d->last_ns = time_ns;
    return 0;
}

/* ---- all kinds in one profile ---- */

/* Copies src's samples into p, whose value columns col.. are src's (the others zero), with
 * their times and labels. loc_of, shared by the kinds, files p's functions by name string
 * (key name << 32 | 0xffffffff) and p's locations by function and line, so the kinds
 * share frames. */
static int append_kind(struct sc_profile *p, const struct sc_profile *src, uint32_t col,
                       struct sc_map64 *loc_of, char *err)
{
    uint32_t *loc_map = calloc(src->nlocations ? src->nlocations : 1, sizeof *loc_map);
    int64_t *vals = calloc(p->nsample_types, sizeof *vals);
    int rc = 0;
    if (!loc_map || !vals)
        rc = SC_ENOMEM;
    for (uint32_t i = 0; !rc && i < src->nlocations; i++) {
        const struct sc_location *l = &src->locations[i];
        const struct sc_line *ln = &src->lines[l->line_start];
        struct sc_str name = sc_function_name(src, ln->function - 1);
        int64_t s = sc_profile_intern(p, name.ptr, name.len);
        if (s < 0) {
            rc = (int)s;
            break;
        }
        int added;
        uint64_t fkey = (uint64_t)s << 32 | 0xffffffffu; /* a name's function */
        uint32_t *f = sc_map64_upsert(loc_of, fkey, p->nfunctions, &added);
        if (!f || (added && sc_profile_add_function(p, (uint32_t)s, 0) < 0)) {
            rc = SC_ENOMEM;
            break;
        }
        uint32_t fn = *f;
        uint64_t lkey = (uint64_t)fn << 32 | (uint32_t)ln->line;
        uint32_t *loc = sc_map64_upsert(loc_of, lkey, p->nlocations, &added);
        if (!loc) {
            rc = SC_ENOMEM;
            break;
        }
        if (added) {
            int64_t nl = sc_profile_add_simple_location(p, fn);
            if (nl < 0) {
                rc = (int)nl;
                break;
            }
            p->lines[p->locations[nl].line_start].line = ln->line;
            loc = sc_map64_get(loc_of, lkey);
        }
        loc_map[i] = *loc;
    }
    if (!rc)
        rc = sc_profile_reserve_samples(p, p->nsamples + src->nsamples,
                                        p->nsample_locs + src->nsample_locs);
    for (uint32_t i = 0; !rc && i < src->nsamples; i++) {
        const struct sc_sample *s = &src->samples[i];
        for (uint32_t j = 0; j < src->nsample_types; j++)
            vals[col + j] = src->values[(size_t)i * src->nsample_types + j];
        uint32_t locs_start = p->nsample_locs;
        if (sc_grow_array(&p->sample_locs, &p->sample_locs_cap,
                          (uint64_t)p->nsample_locs + s->nlocs, sizeof *p->sample_locs)) {
            rc = SC_ENOMEM;
            break;
        }
        for (uint32_t j = 0; j < s->nlocs; j++)
            p->sample_locs[p->nsample_locs++] = loc_map[src->sample_locs[s->loc_start + j]];
        if (sc_profile_add_sample_span(p, locs_start, s->nlocs, p->nlabels, 0, vals, s->time_ns) <
            0) {
            rc = SC_ENOMEM;
            break;
        }
        for (uint32_t j = 0; !rc && j < s->nlabels; j++) {
            const struct sc_label *l = &src->labels[s->label_start + j];
            struct sc_str k = sc_profile_str(src, l->key), v = sc_profile_str(src, l->str);
            int64_t ks = sc_profile_intern(p, k.ptr, k.len),
                    vs = sc_profile_intern(p, v.ptr, v.len);
            if (ks < 0 || vs < 0 || sc_profile_add_label(p, (uint32_t)ks, (uint32_t)vs, 0, 0))
                rc = SC_ENOMEM;
        }
    }
    free(loc_map);
    free(vals);
    if (rc)
        return sc_errf(err, rc, "out of memory");
    return 0;
}

int sc_jfr_decode(const void *buf, size_t n, const struct sc_jfr_opts *o,
                  const struct sc_limits *lim, struct sc_profile *p, char *err)
{
    struct sc_profile *k[SC_JFR_NKINDS];
    int rc = sc_jfr_decode_kinds(buf, n, o, lim, k, err);
    if (rc)
        return rc;
    uint32_t col[SC_JFR_NKINDS] = {0};
    int first = -1;
    for (int i = 0; i < SC_JFR_NKINDS && !rc; i++) {
        if (!k[i])
            continue;
        if (first < 0)
            first = i;
        col[i] = p->nsample_types;
        for (int j = 0; j < kinds[i].nvalues && !rc; j++) {
            char name[64];
            snprintf(name, sizeof name, "%s%s", i == SC_JFR_PARK && k[SC_JFR_LOCK] ? "park_" : "",
                     kinds[i].types[j][0]);
            if (sc_profile_add_sample_type(p, name, kinds[i].types[j][1]) < 0)
                rc = sc_errf(err, SC_ENOMEM, "out of memory");
        }
    }
    struct sc_map64 loc_of;
    sc_map64_init(&loc_of);
    for (int i = 0; i < SC_JFR_NKINDS && !rc; i++)
        if (k[i])
            rc = append_kind(p, k[i], col[i], &loc_of, err);
    sc_map64_release(&loc_of);
    if (!rc && first >= 0) {
        const struct sc_profile *f = k[first];
        p->time_nanos = f->time_nanos;
        p->duration_nanos = f->duration_nanos;
        int lead = k[SC_JFR_CPU] ? SC_JFR_CPU : first;
        p->default_sample_type = p->sample_types[col[lead]].type;
        struct sc_str pt = sc_profile_str(k[lead], k[lead]->period_type.type),
                      pu = sc_profile_str(k[lead], k[lead]->period_type.unit);
        int64_t a = sc_profile_intern(p, pt.ptr, pt.len), b = sc_profile_intern(p, pu.ptr, pu.len);
        if (a < 0 || b < 0)
            rc = sc_errf(err, SC_ENOMEM, "out of memory");
        else {
            p->period_type.type = (uint32_t)a;
            p->period_type.unit = (uint32_t)b;
            p->period = k[lead]->period;
        }
    }
    if (!rc && first < 0) {
        /* a recording without samples of any kind scorch reads: an empty CPU profile */
        if (sc_profile_add_sample_type(p, "cpu", "nanoseconds") < 0)
            rc = sc_errf(err, SC_ENOMEM, "out of memory");
    }
    for (int i = 0; i < SC_JFR_NKINDS; i++)
        sc_profile_free(k[i]);
    if (!rc)
        rc = sc_profile_validate(p, err);
    return rc;
}
