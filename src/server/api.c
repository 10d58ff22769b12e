/* api.c - the HTTP API's handlers: ingest, listings, render, timeline, diff, heatmap... */
#include "formats/folded.h"
#include "formats/pprof.h"
#include "formats/speedscope.h"
#include "formats/svg.h"
#include "formats/top.h"
#include "ingest/ingest.h"
#include "model/error.h"
#include "model/hash.h"
#include "query/callgraph.h"
#include "query/diff.h"
#include "query/filter.h"
#include "query/flame.h"
#include "query/heatmap.h"
#include "query/replicates.h"
#include "query/selector.h"
#include "query/source.h"
#include "query/timespec.h"
#include "server/server_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define NS 1000000000LL
#define DEFAULT_MAX_NODES 8192
/* The most series x steps values a timeline reads (8 bytes each, and ~10 in JSON). */
#define TIMELINE_MAX_CELLS (1 << 22)

static int64_t wall_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * NS + ts.tv_nsec;
}

/* ---- ingest ---- */

int sc_api_ingest(struct sc_req *r, struct sc_resp *w)
{
    struct sc_server *srv = r->srv;
    double t0 = sc_server_now();
    const struct sc_buf *body = r->pp ? &r->part_profile : &r->body;
    if (r->pp && r->part_profile.len == 0)
        return sc_resp_error(w, 400, "multipart body without a 'profile' part");
    struct sc_ingest_req q = {
        .tenant = r->tenant,
        .name = sc_req_arg(r, "name"),
        .from = sc_req_arg(r, "from"),
        .until = sc_req_arg(r, "until"),
        .format = sc_req_arg(r, "format"),
        .sample_rate = sc_req_arg(r, "sampleRate"),
        .spy_name = sc_req_arg(r, "spyName"),
        .units = sc_req_arg(r, "units"),
        .aggregation = sc_req_arg(r, "aggregationType"),
        .body = body->data ? body->data : "",
        .len = body->len,
        .sample_type_config = r->part_config.data,
        .sample_type_config_len = r->part_config.len,
        .prev_profile_len = r->part_prev.len,
    };
    /* a multipart push is a pprof unless told otherwise (Pyroscope's clients) */
    if (r->pp && !q.format)
        q.format = "pprof";
    struct sc_ingest_result res;
    char err[SC_ERR_LEN] = "";
    struct sc_limits lim = srv->opts.limits;
    int rc = sc_ingest(srv->store, &q, &lim, &res, err);
    sc_metrics_observe(&srv->metrics.ingest, sc_server_now() - t0);
    if (rc)
        return sc_resp_code(w, rc, err);
    atomic_fetch_add(&srv->metrics.ingest_ok, 1);
    atomic_fetch_add(&srv->metrics.ingest_bytes, body->len);
    atomic_fetch_add(&srv->metrics.ingest_samples, res.samples);
    sc_buf_printf(&w->body, "{\"samples\":%u,\"profile\":\"", (unsigned)res.samples);
    sc_buf_put_json_str(&w->body, res.profile, strlen(res.profile));
    sc_buf_puts(&w->body, "\"}\n");
    return 0;
}

/* ---- listings ---- */

struct list_ctx {
    struct sc_buf *out;
    int n;
};

static int put_type(void *ctx, const struct sc_store_type *t)
{
    struct list_ctx *c = ctx;
    struct sc_buf *o = c->out;
    sc_buf_puts(o, c->n++ ? ",{\"id\":\"" : "{\"id\":\"");
    sc_buf_put_json_str(o, t->id, strlen(t->id));
    sc_buf_puts(o, "\",\"profile\":\"");
    sc_buf_put_json_str(o, t->profile, strlen(t->profile));
    sc_buf_puts(o, "\",\"sample_type\":\"");
    sc_buf_put_json_str(o, t->sample_type, strlen(t->sample_type));
    sc_buf_puts(o, "\",\"unit\":\"");
    sc_buf_put_json_str(o, t->unit, strlen(t->unit));
    sc_buf_printf(o, "\",\"aggregation\":\"%s\"}", t->gauge ? "average" : "sum");
    return 0;
}

static int put_str(void *ctx, const char *s)
{
    struct list_ctx *c = ctx;
    sc_buf_puts(c->out, c->n++ ? ",\"" : "\"");
    sc_buf_put_json_str(c->out, s, strlen(s));
    sc_buf_putc(c->out, '"');
    return 0;
}

int sc_api_labels(struct sc_req *r, struct sc_resp *w)
{
    char err[SC_ERR_LEN] = "";
    struct list_ctx c = {&w->body, 0};
    sc_buf_putc(&w->body, '[');
    int rc = sc_store_label_names(r->srv->store, r->tenant, put_str, &c, err);
    if (rc)
        return sc_resp_code(w, rc, err);
    sc_buf_puts(&w->body, "]\n");
    return 0;
}

int sc_api_label_values(struct sc_req *r, struct sc_resp *w)
{
    const char *name = sc_req_arg(r, "name");
    if (!name || !*name)
        return sc_resp_error(w, 400, "missing 'name' (a label name)");
    char err[SC_ERR_LEN] = "";
    struct list_ctx c = {&w->body, 0};
    sc_buf_putc(&w->body, '[');
    int rc = sc_store_label_values(r->srv->store, r->tenant, name, put_str, &c, err);
    if (rc)
        return sc_resp_code(w, rc, err);
    sc_buf_puts(&w->body, "]\n");
    return 0;
}

/* ---- resolving a query: selector, type, range -> series ---- */

struct sel {
    struct sc_selector *selector;
    const char *type;
    int64_t from, until;
    uint64_t *ids;
    char **labels; /* canonical text per id */
    uint32_t n, cap;
    int oom;
};

static void sel_release(struct sel *s)
{
    sc_selector_free(s->selector);
    for (uint32_t i = 0; i < s->n; i++)
        free(s->labels[i]);
    free(s->labels);
    free(s->ids);
    memset(s, 0, sizeof *s);
}

static int collect_series(void *ctx, const struct sc_store_series *se)
{
    struct sel *s = ctx;
    struct sc_labels l;
    sc_labels_init(&l);
    char err[SC_ERR_LEN];
    int ok = sc_labels_parse(se->labels, &l, err) == 0 && sc_selector_match(s->selector, &l);
    sc_labels_release(&l);
    if (!ok)
        return 0;
    if (s->n == s->cap) {
        uint32_t c = s->cap ? s->cap * 2 : 64;
        uint64_t *ni = realloc(s->ids, c * sizeof *ni);
        if (ni)
            s->ids = ni;
        char **nl = realloc(s->labels, c * sizeof *nl);
        if (nl)
            s->labels = nl;
        if (!ni || !nl) {
            s->oom = 1;
            return 1;
        }
        s->cap = c;
    }
    s->labels[s->n] = strdup(se->labels);
    if (!s->labels[s->n]) {
        s->oom = 1;
        return 1;
    }
    s->ids[s->n++] = se->id;
    return 0;
}

/* Query argument prefix+n (e.g. "base_from"), falling back to the plain n. */
static const char *arg_prefixed(struct sc_req *r, const char *prefix, const char *n)
{
    char name[64];
    snprintf(name, sizeof name, "%s%s", prefix, n);
    const char *v = sc_req_arg(r, name);
    return v ? v : sc_req_arg(r, n);
}

/* Parses the selector and the time range (default: the last hour) named with prefix into
 * s; the range must be non-empty and within the server's limit. On failure fills w and
 * returns non-zero. */
static int parse_selection(struct sc_req *r, struct sc_resp *w, const char *prefix,
                           struct sel *s)
{
    char err[SC_ERR_LEN] = "";
    const char *query = arg_prefixed(r, prefix, "query");
    const char *from = arg_prefixed(r, prefix, "from"), *until = arg_prefixed(r, prefix, "until");
    int rc = sc_selector_parse(query ? query : "{}", &s->selector, err);
    if (rc) {
        /* selector errors say where; say which selector when there are two */
        const char *q = *prefix ? "'base_query': " : "";
        if (rc == SC_ELIMIT)
            sc_resp_limit(w, "%s%s", q, err);
        else
            sc_resp_error(w, 400, "%s%s", q, err);
        return -1;
    }
    int64_t now = wall_ns();
    s->from = now - 3600 * NS;
    s->until = now;
    if (from && sc_time_parse(from, now, &s->from, err)) {
        sc_resp_error(w, 400, "bad '%sfrom': %s", prefix, err);
        return -1;
    }
    if (until && sc_time_parse(until, now, &s->until, err)) {
        sc_resp_error(w, 400, "bad '%suntil': %s", prefix, err);
        return -1;
    }
    if (s->until <= s->from) {
        sc_resp_error(w, 400, "'%suntil' must be after '%sfrom'", prefix, prefix);
        return -1;
    }
    /* unsigned: from and until may be far apart enough to overflow a difference */
    if ((uint64_t)s->until - (uint64_t)s->from > (uint64_t)r->srv->opts.max_range_ns) {
        sc_resp_limit(w, "time range of %llu s is more than the limit of %lld s",
                      (unsigned long long)(((uint64_t)s->until - (uint64_t)s->from) / NS),
                      (long long)(r->srv->opts.max_range_ns / NS));
        return -1;
    }
    return 0;
}

/* Reads query/type/from/until (names prefixed with prefix, e.g. "base_", falling back to
 * the plain ones) and finds the matching series. On failure fills w and returns non-zero. */
static int resolve(struct sc_req *r, struct sc_resp *w, const char *prefix, struct sel *s)
{
    char err[SC_ERR_LEN] = "";
    memset(s, 0, sizeof *s);
    const char *type = sc_req_arg(r, "type");
    if (!type || !*type) {
        sc_resp_error(w, 400, "missing 'type' (a profile type id like cpu:cpu; see "
                              "/api/v1/profile_types)");
        return -1;
    }
    s->type = type;
    if (parse_selection(r, w, prefix, s))
        return -1;
    int rc = sc_store_series_list(r->srv->store, r->tenant, type, s->from, s->until,
                                  collect_series, s, err);
    if (rc || s->oom) {
        sc_resp_code(w, rc ? rc : SC_ENOMEM, err);
        return -1;
    }
    return 0;
}

/* The request's focus/ignore/hide/show, applied to every profile it reads. */
static struct sc_filter_opts filter_opts(struct sc_req *r)
{
    struct sc_filter_opts fo = {sc_req_arg(r, "focus"), sc_req_arg(r, "ignore"),
                                sc_req_arg(r, "hide"), sc_req_arg(r, "show")};
    return fo;
}

/* Merges the selection and applies focus/ignore/hide/show. NULL + w filled on failure;
 * an empty selection gives an empty profile of the type. */
static struct sc_profile *merged(struct sc_req *r, struct sc_resp *w, const struct sel *s)
{
    char err[SC_ERR_LEN] = "";
    struct sc_store_query q = {r->tenant, s->ids, s->n, s->type, s->from, s->until, 0};
    struct sc_profile *p = NULL;
    int rc = s->n ? sc_store_merge(r->srv->store, &q, &p, err) : 0;
    if (rc == SC_ENOTFOUND || (!rc && !p)) {
        /* nothing in range: an empty profile, so every format still answers */
        sc_profile_free(p);
        p = sc_profile_new();
        const char *colon = strchr(s->type, ':');
        if (!p || sc_profile_add_sample_type(p, colon ? colon + 1 : s->type, "count") < 0) {
            sc_profile_free(p);
            sc_resp_error(w, 500, "out of memory");
            return NULL;
        }
        rc = 0;
    }
    if (rc) {
        sc_resp_code(w, rc, err);
        return NULL;
    }
    struct sc_filter_opts fo = filter_opts(r);
    if (fo.focus || fo.ignore || fo.hide || fo.show) {
        rc = sc_profile_filter(p, &fo, NULL, err);
        if (rc) {
            sc_profile_free(p);
            sc_resp_code(w, rc, err);
            return NULL;
        }
    }
    return p;
}

static int parse_uint(const char *s, uint64_t max, uint64_t *out)
{
    if (!s || !*s)
        return -1;
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    if (*end || v > max || s[0] == '-')
        return -1;
    *out = v;
    return 0;
}

/* ---- render ---- */

int sc_api_render(struct sc_req *r, struct sc_resp *w)
{
    const char *format = sc_req_arg(r, "format");
    if (!format)
        format = "json";
    uint64_t max_nodes = DEFAULT_MAX_NODES;
    const char *mn = sc_req_arg(r, "maxNodes");
    if (mn && (parse_uint(mn, UINT32_MAX, &max_nodes) || max_nodes == 0))
        return sc_resp_error(w, 400, "bad 'maxNodes' '%.32s' (1..%u)", mn,
                             (unsigned)r->srv->opts.max_nodes);
    if (max_nodes > r->srv->opts.max_nodes)
        return sc_resp_limit(w, "maxNodes %llu is more than the limit of %u",
                             (unsigned long long)max_nodes, (unsigned)r->srv->opts.max_nodes);
    static const char *const formats[] = {"json", "tsv", "top", "pprof", "folded", "svg",
                                          "speedscope", "dot"};
    int known = 0;
    for (size_t i = 0; i < sizeof formats / sizeof formats[0]; i++)
        known |= !strcmp(format, formats[i]);
    if (!known)
        return sc_resp_error(w, 400,
                             "unknown format '%.32s' (json, tsv, top, pprof, folded, svg, "
                             "speedscope, dot)",
                             format);
    struct sel s;
    if (resolve(r, w, "", &s)) {
        sel_release(&s);
        return 0;
    }
    struct sc_profile *p = merged(r, w, &s);
    sel_release(&s);
    if (!p)
        return 0;
    char err[SC_ERR_LEN] = "";
    int rc = 0;
    if (!strcmp(format, "json")) {
        w->content_type = "application/json";
        rc = sc_api_flame_json(r, p, (uint32_t)max_nodes, &w->body, err);
    } else if (!strcmp(format, "tsv") || !strcmp(format, "top")) {
        struct sc_top t;
        rc = sc_top_compute(p, 0, &t, err);
        if (!rc) {
            struct sc_top_opts o = {.format = !strcmp(format, "tsv") ? SC_TOP_TSV : SC_TOP_JSON};
            sc_top_write(p, 0, &t, &o, &w->body);
            w->content_type = !strcmp(format, "tsv") ? "text/tab-separated-values; charset=utf-8"
                                                    : "application/json";
        }
        sc_top_release(&t);
    } else if (!strcmp(format, "pprof")) {
        struct sc_buf raw = SC_BUF_INIT;
        rc = sc_pprof_encode(p, &raw);
        if (!rc)
            rc = sc_gzip(raw.data, raw.len, 6, &w->body);
        sc_buf_release(&raw);
        w->content_type = "application/octet-stream";
    } else if (!strcmp(format, "folded")) {
        rc = sc_folded_write(p, 0, &w->body, err);
        w->content_type = "text/plain; charset=utf-8";
    } else if (!strcmp(format, "svg")) {
        struct sc_svg_opts so;
        sc_svg_opts_init(&so);
        so.title = sc_req_arg(r, "title");
        rc = sc_svg_write(p, 0, &so, &w->body, err);
        rc = rc > 0 ? 0 : rc;
        w->content_type = "image/svg+xml";
    } else if (!strcmp(format, "speedscope")) {
        rc = sc_speedscope_write(p, 0, "scorch", &w->body, err);
        w->content_type = "application/json";
    } else {
        struct sc_callgraph_opts co = SC_CALLGRAPH_OPTS_INIT;
        rc = sc_callgraph_dot(p, 0, &co, &w->body, err);
        w->content_type = "text/vnd.graphviz; charset=utf-8";
    }
    sc_profile_free(p);
    if (rc)
        return sc_resp_code(w, rc, err);
    return 0;
}

/* ---- timeline ---- */

int sc_api_timeline(struct sc_req *r, struct sc_resp *w)
{
    struct sel s;
    if (resolve(r, w, "", &s)) {
        sel_release(&s);
        return 0;
    }
    char err[SC_ERR_LEN] = "";
    int64_t step = 0;
    const char *st = sc_req_arg(r, "step");
    if (st && sc_duration_parse(st, &step, err)) {
        sel_release(&s);
        return sc_resp_error(w, 400, "bad 'step': %s", err);
    }
    if (st && step < NS) {
        sel_release(&s);
        return sc_resp_error(w, 400, "bad 'step' '%.32s': at least 1s (timestamps are seconds)",
                             st);
    }
    int64_t span = s.until - s.from;
    if (step <= 0) {
        /* about 120 points, whole seconds, at least 10 s, and within the cell limit */
        step = span / 120 / NS * NS;
        if (step < 10 * NS)
            step = 10 * NS;
        uint64_t cells = (uint64_t)(s.n ? s.n : 1) * (uint64_t)((span + step - 1) / step);
        if (cells > TIMELINE_MAX_CELLS) {
            uint64_t fit = TIMELINE_MAX_CELLS / (s.n ? s.n : 1);
            step = (span / (int64_t)(fit ? fit : 1) / NS + 1) * NS;
        }
    }
    if (span / step > 10000) {
        sel_release(&s);
        return sc_resp_limit(w, "%lld steps is more than the limit of 10000 (step)",
                             (long long)(span / step));
    }
    uint32_t nsteps = (uint32_t)((span + step - 1) / step);
    /* the store answers per series: series x steps values, whatever the grouping */
    if ((uint64_t)s.n * nsteps > TIMELINE_MAX_CELLS) {
        uint32_t n = s.n;
        sel_release(&s);
        return sc_resp_limit(w,
                             "%u series x %u steps is more than the limit of %d points "
                             "(a larger step, or a narrower query)",
                             n, nsteps, TIMELINE_MAX_CELLS);
    }
    /* group_by=LABEL sums series with the same value of that label into one line */
    const char *group = sc_req_arg(r, "group_by");
    int grouped = group && *group;
    int64_t *vals = calloc((size_t)(s.n ? s.n : 1) * nsteps, sizeof *vals);
    if (!vals) {
        sel_release(&s);
        return sc_resp_error(w, 500, "out of memory");
    }
    struct sc_store_query q = {r->tenant, s.ids, s.n, s.type, s.from, s.until, 0};
    int rc = s.n ? sc_store_timeline(r->srv->store, &q, step, vals, err) : 0;
    if (rc) {
        free(vals);
        sel_release(&s);
        return sc_resp_code(w, rc, err);
    }
    /* lines: one per series, or one per value of the group_by label (series without it
     * share the line of ""); a hash map finds a value's line, so this is linear */
    uint32_t nlines = grouped ? 0 : s.n;
    uint32_t *line_of = malloc(((size_t)s.n + 1) * sizeof *line_of);
    char **keys = calloc((size_t)s.n + 1, sizeof *keys);
    struct sc_map64 lines;
    sc_map64_init(&lines);
    int oom = !line_of || !keys;
    for (uint32_t i = 0; !oom && i < s.n; i++) {
        if (!grouped) {
            line_of[i] = i; /* a series' labels are unique */
            continue;
        }
        struct sc_labels l;
        sc_labels_init(&l);
        struct sc_str v = {"", 0};
        if (sc_labels_parse(s.labels[i], &l, err) == 0)
            sc_labels_get(&l, group, strlen(group), &v);
        int added;
        uint32_t *slot = sc_map64_upsert(&lines, sc_hash64(v.ptr, v.len), nlines, &added);
        uint32_t j = slot ? *slot : 0;
        if (slot && !added && (strlen(keys[j]) != v.len || memcmp(keys[j], v.ptr, v.len))) {
            /* two values with one hash: look the slow way */
            for (j = 0; j < nlines; j++)
                if (strlen(keys[j]) == v.len && !memcmp(keys[j], v.ptr, v.len))
                    break;
        }
        if (slot && j == nlines && !(keys[nlines++] = strndup(v.ptr, v.len)))
            slot = NULL;
        oom = !slot;
        line_of[i] = j;
        sc_labels_release(&l);
    }
    int64_t *sums = oom ? NULL : calloc((size_t)(nlines ? nlines : 1) * nsteps, sizeof *sums);
    if (!sums) {
        for (uint32_t j = 0; keys && j < nlines && grouped; j++)
            free(keys[j]);
        free(keys);
        free(line_of);
        free(vals);
        sc_map64_release(&lines);
        sel_release(&s);
        return sc_resp_error(w, 500, "out of memory");
    }
    for (uint32_t i = 0; i < s.n; i++)
        for (uint32_t k = 0; k < nsteps; k++)
            sums[(size_t)line_of[i] * nsteps + k] += vals[(size_t)i * nsteps + k];
    struct sc_buf *o = &w->body;
    sc_buf_puts(o, "{\"timestamps\":[");
    for (uint32_t k = 0; k < nsteps; k++) {
        if (k)
            sc_buf_putc(o, ',');
        sc_buf_put_i64(o, (s.from + (int64_t)k * step) / NS);
    }
    sc_buf_printf(o, "],\"step\":%lld,\"series\":[", (long long)(step / NS));
    for (uint32_t j = 0; j < nlines; j++) {
        sc_buf_puts(o, j ? ",{\"labels\":" : "{\"labels\":");
        if (grouped) {
            sc_buf_puts(o, "{\"");
            sc_buf_put_json_str(o, group, strlen(group));
            sc_buf_puts(o, "\":\"");
            sc_buf_put_json_str(o, keys[j], strlen(keys[j]));
            sc_buf_puts(o, "\"}");
        } else {
            struct sc_labels l;
            sc_labels_init(&l);
            sc_labels_parse(s.labels[j], &l, err);
            sc_buf_putc(o, '{');
            for (uint32_t k = 0; k < l.n; k++) {
                sc_buf_puts(o, k ? ",\"" : "\"");
                sc_buf_put_json_str(o, l.v[k].name.ptr, l.v[k].name.len);
                sc_buf_puts(o, "\":\"");
                sc_buf_put_json_str(o, l.v[k].value.ptr, l.v[k].value.len);
                sc_buf_putc(o, '"');
            }
            sc_buf_putc(o, '}');
            sc_labels_release(&l);
        }
        sc_buf_puts(o, ",\"values\":[");
        for (uint32_t k = 0; k < nsteps; k++) {
            if (k)
                sc_buf_putc(o, ',');
            sc_buf_put_i64(o, sums[(size_t)j * nsteps + k]);
        }
        sc_buf_puts(o, "]}");
    }
    sc_buf_puts(o, "]}\n");
    for (uint32_t j = 0; grouped && j < nlines; j++)
        free(keys[j]);
    free(keys);
    free(line_of);
    free(sums);
    free(vals);
    sc_map64_release(&lines);
    sel_release(&s);
    return 0;
}

/* ---- diff ---- */

/* Parses a probability in (0, 1) such as q=0.05. */
static int parse_level(const char *s, double *out)
{
    char *end;
    double v = strtod(s, &end);
    if (end == s || *end || !(v > 0 && v < 1)) return -1;
    *out = v;
    return 0;
}

/* The statistics of a diff: both selections cut into replicates (sc_replicates_add). NULL
 * + w filled on failure. */
static struct sc_cmp *diff_stats(struct sc_req *r, struct sc_resp *w, const struct sel *bs,
                                 const struct sel *ns, int normalize)
{
    struct sc_cmp_opts o = SC_CMP_OPTS_INIT;
    o.normalize = normalize;
    const char *qa = sc_req_arg(r, "q");
    if (qa && parse_level(qa, &o.level)) {
        sc_resp_error(w, 400, "bad 'q' '%.32s' (a false discovery rate between 0 and 1)", qa);
        return NULL;
    }
    uint64_t reps = SC_REPLICATES_DEFAULT;
    const char *ra = sc_req_arg(r, "replicates");
    if (ra && (parse_uint(ra, SC_REPLICATES_MAX, &reps) || reps < 2)) {
        sc_resp_error(w, 400, "bad 'replicates' '%.32s' (2..%d)", ra, SC_REPLICATES_MAX);
        return NULL;
    }
    struct sc_cmp *c = NULL;
    char err[SC_ERR_LEN] = "";
    struct sc_filter_opts fo = filter_opts(r);
    struct sc_filter *filter = NULL;
    int rc = sc_filter_new(&fo, &filter, err);
    if (rc == 0) rc = sc_cmp_new(&o, &c);
    const struct sel *side[2] = {bs, ns};
    for (int k = 0; k < 2 && rc == 0; k++) {
        struct sc_store_query q = {r->tenant,     side[k]->ids,   side[k]->n, side[k]->type,
                                   side[k]->from, side[k]->until, 0};
        uint32_t added;
        rc = sc_replicates_add(r->srv->store, &q, filter, c, k, (uint32_t)reps, &added, err);
    }
    sc_filter_free(filter);
    if (rc == 0) rc = sc_cmp_finish(c, err);
    if (rc) {
        sc_cmp_free(c);
        sc_resp_code(w, rc, err);
        return NULL;
    }
    return c;
}

int sc_api_diff(struct sc_req *r, struct sc_resp *w)
{
    const char *format = sc_req_arg(r, "format");
    if (!format)
        format = "json";
    if (strcmp(format, "json") && strcmp(format, "tsv") && strcmp(format, "flame") &&
        strcmp(format, "folded"))
        return sc_resp_error(w, 400, "unknown format '%.32s' (json, tsv, flame, folded)", format);
    const char *norm = sc_req_arg(r, "normalize");
    int normalize = norm && (!strcmp(norm, "1") || !strcmp(norm, "true"));
    const char *sa = sc_req_arg(r, "stats");
    int stats = strcmp(format, "folded") && !(sa && (!strcmp(sa, "0") || !strcmp(sa, "false")));
    uint64_t max_nodes = DEFAULT_MAX_NODES;
    const char *mn = sc_req_arg(r, "maxNodes");
    if (mn && (parse_uint(mn, r->srv->opts.max_nodes, &max_nodes) || max_nodes == 0))
        return sc_resp_error(w, 400, "bad 'maxNodes' '%.32s' (1..%u)", mn,
                             (unsigned)r->srv->opts.max_nodes);
    struct sel bs, ns;
    if (resolve(r, w, "base_", &bs)) {
        sel_release(&bs);
        return 0;
    }
    if (resolve(r, w, "", &ns)) {
        sel_release(&bs);
        sel_release(&ns);
        return 0;
    }
    struct sc_profile *base = merged(r, w, &bs);
    struct sc_profile *p = base ? merged(r, w, &ns) : NULL;
    struct sc_cmp *cmp = p && stats ? diff_stats(r, w, &bs, &ns, normalize) : NULL;
    sel_release(&bs);
    sel_release(&ns);
    char err[SC_ERR_LEN] = "";
    int rc = 0;
    if (base && p && (cmp || !stats)) {
        if (!strcmp(format, "flame")) {
            rc = sc_flame_diff_json(base, 0, p, 0, (uint32_t)max_nodes, normalize, cmp, &w->body,
                                    err);
        } else if (!strcmp(format, "folded")) {
            rc = sc_diff_stacks(base, 0, p, 0, normalize, &w->body, err);
            w->content_type = "text/plain; charset=utf-8";
        } else {
            struct sc_diff d;
            rc = sc_diff_compute(base, 0, p, 0, normalize, &d, err);
            if (!rc) {
                sc_diff_attach(&d, cmp);
                sc_diff_write(&d, !strcmp(format, "tsv") ? SC_DIFF_TSV : SC_DIFF_JSON, 0,
                              &w->body);
            }
            sc_diff_release(&d);
            if (!strcmp(format, "tsv"))
                w->content_type = "text/tab-separated-values; charset=utf-8";
        }
    }
    sc_cmp_free(cmp);
    sc_profile_free(base);
    sc_profile_free(p);
    if (rc)
        return sc_resp_code(w, rc, err);
    return 0;
}

/* ---- heatmap ---- */

/* One block of timed samples into the heatmap: the idle rule once per distinct stack. */
static int heatmap_block(void *ctx, const struct sc_store_timed_block *b)
{
    struct sc_heatmap *h = ctx;
    uint8_t *idle = malloc((size_t)b->p->nsamples + 1);
    if (!idle)
        return SC_ENOMEM;
    for (uint32_t si = 0; si < b->p->nsamples; si++)
        idle[si] = (uint8_t)sc_heatmap_sample_idle(b->p, si);
    int rc = 0;
    for (uint32_t i = 0; i < b->n && !rc; i++)
        rc = sc_heatmap_add(h, b->times[i], idle[b->sample[i]]);
    free(idle);
    /* the heatmap keeps its own error for sc_heatmap_finish: stop, it says why */
    return rc == SC_ELIMIT ? 0 : rc;
}

int sc_api_heatmap(struct sc_req *r, struct sc_resp *w)
{
    uint64_t rows = SC_HEATMAP_DEFAULT_ROWS;
    const char *ra = sc_req_arg(r, "rows");
    if (ra && (parse_uint(ra, SC_HEATMAP_MAX_ROWS, &rows) || rows == 0))
        return sc_resp_error(w, 400, "bad 'rows' '%.32s' (1..%d)", ra, SC_HEATMAP_MAX_ROWS);
    struct sel s;
    if (resolve(r, w, "", &s)) {
        sel_release(&s);
        return 0;
    }
    char err[SC_ERR_LEN] = "";
    struct sc_heatmap h;
    int rc = sc_heatmap_init(&h, (uint32_t)rows, SC_HEATMAP_MAX_COLS, err);
    if (!rc && s.n) {
        /* streamed a block at a time: memory is the counts and one block, not the range */
        struct sc_store_query q = {r->tenant, s.ids, s.n, s.type, s.from, s.until, 0};
        rc = sc_store_timed_each(r->srv->store, &q, heatmap_block, &h, err);
        if (rc == SC_ENOTFOUND)
            rc = 0;
    }
    sel_release(&s);
    if (!rc)
        rc = sc_heatmap_finish(&h, err);
    if (!rc)
        sc_heatmap_write_json(&h, &w->body);
    sc_heatmap_release(&h);
    if (rc)
        return sc_resp_code(w, rc, err);
    return 0;
}

/* ---- call graph ---- */

int sc_api_callgraph(struct sc_req *r, struct sc_resp *w)
{
    const char *format = sc_req_arg(r, "format");
    if (!format)
        format = "svg";
    if (strcmp(format, "svg") && strcmp(format, "dot"))
        return sc_resp_error(w, 400, "unknown format '%.32s' (svg, dot)", format);
    struct sc_callgraph_opts co = SC_CALLGRAPH_OPTS_INIT;
    const char *nc = sc_req_arg(r, "nodecount");
    uint64_t v;
    if (nc) {
        if (parse_uint(nc, SC_CALLGRAPH_SVG_MAX_NODES, &v))
            return sc_resp_error(w, 400, "bad 'nodecount' '%.32s' (0..%d)", nc,
                                 SC_CALLGRAPH_SVG_MAX_NODES);
        co.nodecount = (uint32_t)v;
    }
    struct sel s;
    if (resolve(r, w, "", &s)) {
        sel_release(&s);
        return 0;
    }
    struct sc_profile *p = merged(r, w, &s);
    sel_release(&s);
    if (!p)
        return 0;
    char err[SC_ERR_LEN] = "";
    int rc;
    if (!strcmp(format, "dot")) {
        rc = sc_callgraph_dot(p, 0, &co, &w->body, err);
        w->content_type = "text/vnd.graphviz; charset=utf-8";
    } else {
        rc = sc_callgraph_svg(p, 0, &co, &w->body, err);
        w->content_type = "image/svg+xml";
    }
    sc_profile_free(p);
    if (rc)
        return sc_resp_code(w, rc, err);
    return 0;
}

/* ---- source ---- */

int sc_api_source(struct sc_req *r, struct sc_resp *w)
{
    const char *fn = sc_req_arg(r, "function");
    if (!fn || !*fn)
        return sc_resp_error(w, 400, "missing 'function' (a function name)");
    struct sel s;
    if (resolve(r, w, "", &s)) {
        sel_release(&s);
        return 0;
    }
    struct sc_profile *p = merged(r, w, &s);
    sel_release(&s);
    if (!p)
        return 0;
    struct sc_source_opts so = {0};
    so.function = fn;
    so.roots = r->srv->opts.source_roots;
    so.nroots = r->srv->opts.nsource_roots;
    so.max_functions = 20;
    struct sc_source src;
    char err[SC_ERR_LEN] = "";
    int rc = sc_source_compute(p, 0, &so, &src, err);
    if (!rc)
        sc_source_write_json(p, 0, &src, &w->body);
    sc_source_release(&src);
    sc_profile_free(p);
    if (rc)
        return sc_resp_code(w, rc, err);
    return 0;
}

/* the series listing sits here because it uses the selector */
int sc_api_series(struct sc_req *r, struct sc_resp *w)
{
    struct sel s;
    /* type is optional here: any type */
    const char *type = sc_req_arg(r, "type");
    char err[SC_ERR_LEN] = "";
    memset(&s, 0, sizeof s);
    if (parse_selection(r, w, "", &s)) {
        sel_release(&s);
        return 0;
    }
    int rc = sc_store_series_list(r->srv->store, r->tenant, type && *type ? type : NULL, s.from,
                                  s.until, collect_series, &s, err);
    if (rc || s.oom) {
        sel_release(&s);
        return sc_resp_code(w, rc ? rc : SC_ENOMEM, err);
    }
    struct sc_buf *o = &w->body;
    sc_buf_putc(o, '[');
    for (uint32_t i = 0; i < s.n; i++) {
        struct sc_labels l;
        sc_labels_init(&l);
        sc_labels_parse(s.labels[i], &l, err);
        sc_buf_puts(o, i ? ",{\"labels\":{" : "{\"labels\":{");
        for (uint32_t k = 0; k < l.n; k++) {
            sc_buf_puts(o, k ? ",\"" : "\"");
            sc_buf_put_json_str(o, l.v[k].name.ptr, l.v[k].name.len);
            sc_buf_puts(o, "\":\"");
            sc_buf_put_json_str(o, l.v[k].value.ptr, l.v[k].value.len);
            sc_buf_putc(o, '"');
        }
        sc_buf_puts(o, "}}");
        sc_labels_release(&l);
    }
    sc_buf_puts(o, "]\n");
    sel_release(&s);
    return 0;
}

/* ---- profile types (here because profile_types?query= uses the selector) ---- */

/* profile_types?query=: a type is listed when a series matching the selector has it. */
struct types_ctx {
    struct sc_req *r;
    const struct sc_selector *selector;
    int64_t from, until;
    struct list_ctx out;
    int found, rc;
    char *err;
};

static int match_any(void *ctx, const struct sc_store_series *se)
{
    struct types_ctx *c = ctx;
    struct sc_labels l;
    sc_labels_init(&l);
    char err[SC_ERR_LEN];
    c->found = sc_labels_parse(se->labels, &l, err) == 0 && sc_selector_match(c->selector, &l);
    sc_labels_release(&l);
    return c->found;
}

static int put_type_if_selected(void *ctx, const struct sc_store_type *t)
{
    struct types_ctx *c = ctx;
    c->found = 0;
    c->rc = sc_store_series_list(c->r->srv->store, c->r->tenant, t->id, c->from, c->until,
                                 match_any, c, c->err);
    if (c->rc)
        return 1;
    return c->found ? put_type(&c->out, t) : 0;
}

int sc_api_profile_types(struct sc_req *r, struct sc_resp *w)
{
    char err[SC_ERR_LEN] = "";
    const char *query = sc_req_arg(r, "query");
    sc_buf_putc(&w->body, '[');
    int rc;
    if (query && *query) {
        /* over all time unless from/until say otherwise */
        struct sel s;
        memset(&s, 0, sizeof s);
        if (parse_selection(r, w, "", &s)) {
            sel_release(&s);
            return 0;
        }
        struct types_ctx c = {r, s.selector, INT64_MIN, INT64_MAX, {&w->body, 0}, 0, 0, err};
        if (sc_req_arg(r, "from") || sc_req_arg(r, "until")) {
            c.from = s.from;
            c.until = s.until;
        }
        rc = sc_store_types(r->srv->store, r->tenant, put_type_if_selected, &c, err);
        if (!rc)
            rc = c.rc;
        sel_release(&s);
    } else {
        struct list_ctx c = {&w->body, 0};
        rc = sc_store_types(r->srv->store, r->tenant, put_type, &c, err);
    }
    if (rc)
        return sc_resp_code(w, rc, err);
    sc_buf_puts(&w->body, "]\n");
    return 0;
}

/* ---- for the handlers in other files (api_views.c) ---- */

int sc_api_select(struct sc_req *r, struct sc_resp *w, struct sc_api_sel *out)
{
    struct sel s;
    memset(out, 0, sizeof *out);
    if (resolve(r, w, "", &s)) {
        sel_release(&s);
        return -1;
    }
    *out = (struct sc_api_sel){s.type, s.from, s.until, s.ids, s.labels, s.n};
    s.ids = NULL;
    s.labels = NULL;
    s.n = 0;
    sel_release(&s);
    return 0;
}

void sc_api_sel_release(struct sc_api_sel *s)
{
    for (uint32_t i = 0; i < s->n; i++)
        free(s->labels[i]);
    free(s->labels);
    free(s->ids);
    memset(s, 0, sizeof *s);
}
