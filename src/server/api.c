/* api.c - the HTTP API's handlers: ingest, listings, render, timeline, diff, heatmap... */
#include "formats/folded.h"
#include "formats/pprof.h"
#include "formats/speedscope.h"
#include "formats/svg.h"
#include "formats/top.h"
#include "ingest/ingest.h"
#include "model/budget.h"
#include "model/clock.h"
#include "model/error.h"
#include "model/setting.h"
#include "model/hash.h"
#include "model/json.h"
#include "model/timespec.h"
#include "query/callgraph.h"
#include "query/diff.h"
#include "query/filter.h"
#include "query/flame.h"
#include "query/fnseries.h"
#include "query/heatmap.h"
#include "query/plan.h"
#include "query/replicates.h"
#include "query/selector.h"
#include "query/source.h"
#include "server/server_int.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- ingest ---- */

int sc_api_ingest(struct sc_req *r, struct sc_resp *w)
{
    struct sc_server *srv = r->srv;
    double t0 = sc_server_now();
    const struct sc_buf *body = r->pp ? &r->part_profile : &r->body;
    if (r->pp && r->part_profile.len == 0)
        return sc_resp_error(w, 400, "multipart body without a 'profile' (or 'jfr') part");
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
        .gzip_claim = r->gzip_claim,
        .sample_type_config = r->part_config.data,
        .sample_type_config_len = r->part_config.len,
        .prev_profile_len = r->part_prev.len,
        .jfr_labels = r->part_labels.data,
        .jfr_labels_len = r->part_labels.len,
    };
    /* a multipart push is a pprof unless told otherwise (Pyroscope's clients), or a JFR
     * recording when it came as a jfr part (their Java agent) */
    if (r->pp && !q.format)
        q.format = r->part_jfr ? "jfr" : "pprof";
    struct sc_ingest_result res;
    char err[SC_ERR_LEN] = "";
    int rc = sc_ingest(srv->store, &q, &srv->opts.limits, &res, err);
    r->over_claim = res.over_claim;
    if (r->over_claim)
        return 0; /* nothing stored: sc_server_push measures it and runs it again */
    sc_metrics_observe(&srv->metrics.ingest, sc_server_now() - t0);
    if (rc)
        return sc_resp_code(w, rc, err);
    atomic_fetch_add(&srv->metrics.ingest_ok, 1);
    atomic_fetch_add(&srv->metrics.ingest_bytes, body->len);
    atomic_fetch_add(&srv->metrics.ingest_samples, res.samples);
    struct sc_json j;
    sc_json_init(&j, &w->body);
    sc_json_obj_begin(&j);
    sc_json_kv_u64(&j, "samples", res.samples);
    sc_json_kv_str(&j, "profile", res.profile);
    sc_json_kv_u64(&j, "series", res.series);
    if (res.dropped[0])
        sc_json_kv_str(&j, "dropped_labels", res.dropped);
    sc_json_obj_end(&j);
    sc_buf_putc(&w->body, '\n');
    return 0;
}

/* ---- listings ---- */

/* A listing: a JSON array the store's callbacks add to. */
struct list_ctx {
    struct sc_json j;
};

static void list_begin(struct list_ctx *c, struct sc_buf *out)
{
    sc_json_init(&c->j, out);
    sc_json_arr_begin(&c->j);
}

static void list_end(struct list_ctx *c)
{
    sc_json_arr_end(&c->j);
    sc_buf_putc(c->j.b, '\n');
}

static int put_type(void *ctx, const struct sc_store_type *t)
{
    struct sc_json *j = &((struct list_ctx *)ctx)->j;
    sc_json_obj_begin(j);
    sc_json_kv_str(j, "id", t->id);
    sc_json_kv_str(j, "profile", t->profile);
    sc_json_kv_str(j, "sample_type", t->sample_type);
    sc_json_kv_str(j, "unit", t->unit);
    sc_json_kv_str(j, "aggregation", t->gauge ? "average" : "sum");
    sc_json_obj_end(j);
    return 0;
}

static int put_str(void *ctx, const char *s)
{
    sc_json_str(&((struct list_ctx *)ctx)->j, s);
    return 0;
}

int sc_api_labels(struct sc_req *r, struct sc_resp *w)
{
    char err[SC_ERR_LEN] = "";
    struct list_ctx c;
    list_begin(&c, &w->body);
    int rc = sc_store_label_names(r->srv->store, r->tenant, put_str, &c, err);
    if (rc)
        return sc_resp_code(w, rc, err);
    list_end(&c);
    return 0;
}

int sc_api_label_values(struct sc_req *r, struct sc_resp *w)
{
    const char *name = sc_req_arg(r, "name");
    if (!name || !*name)
        return sc_resp_error(w, 400, "missing 'name' (a label name)");
    char err[SC_ERR_LEN] = "";
    struct list_ctx c;
    list_begin(&c, &w->body);
    int rc = sc_store_label_values(r->srv->store, r->tenant, name, put_str, &c, err);
    if (rc)
        return sc_resp_code(w, rc, err);
    list_end(&c);
    return 0;
}

/* ---- a query's selection, from the request ---- */

/* Query argument prefix+n (e.g. "base_from"), falling back to the plain n. */
static const char *arg_prefixed(struct sc_req *r, const char *prefix, const char *n)
{
    char name[64];
    snprintf(name, sizeof name, "%s%s", prefix, n);
    const char *v = sc_req_arg(r, name);
    return v ? v : sc_req_arg(r, n);
}

/* How long a heavy query waits for a slot before it is told the server is busy. */
#define QUERY_WAIT_S 5

int sc_server_query_slot(struct sc_server *srv)
{
    struct timespec until;
    sc_deadline(&until, QUERY_WAIT_S * SC_NS_PER_S);
    int rc = 0;
    pthread_mutex_lock(&srv->query_mu);
    while (rc == 0 && srv->queries >= srv->opts.max_queries)
        rc = pthread_cond_timedwait(&srv->query_cv, &srv->query_mu, &until);
    if (rc == 0)
        srv->queries++;
    pthread_mutex_unlock(&srv->query_mu);
    return rc == 0 ? 0 : -1;
}

void sc_server_query_unslot(struct sc_server *srv)
{
    pthread_mutex_lock(&srv->query_mu);
    srv->queries--;
    pthread_cond_signal(&srv->query_cv);
    pthread_mutex_unlock(&srv->query_mu);
}

int sc_api_query_begin(struct sc_req *r, struct sc_resp *w)
{
    struct sc_server *srv = r->srv;
    if (sc_server_query_slot(srv) == 0)
        return 0;
    sc_resp_error(w, 503,
                  "server busy: %u heavy queries are running (server.max_queries) and none "
                  "finished within %d s; retry later",
                  (unsigned)srv->opts.max_queries, QUERY_WAIT_S);
    w->reason = SC_REASON_BUSY + 1;
    return -1;
}

void sc_api_query_end(struct sc_req *r)
{
    sc_server_query_unslot(r->srv);
}

int sc_api_query_fail(struct sc_resp *w, int rc, const char *err)
{
    /* what the client asked for is too much: 400 naming the limit, as for parameters */
    if (rc == SC_ELIMIT)
        return sc_resp_limit(w, "%s", err && *err ? err : sc_strerror(rc));
    return sc_resp_code(w, rc, err);
}

int sc_api_selection(struct sc_req *r, struct sc_resp *w, const char *prefix, int need_type,
                     struct sc_selection *s)
{
    return sc_api_selection_in(r, w, prefix, need_type, NULL, s);
}

int sc_api_selection_in(struct sc_req *r, struct sc_resp *w, const char *prefix, int need_type,
                        const int64_t *range, struct sc_selection *s)
{
    memset(s, 0, sizeof *s);
    const char *type = sc_req_arg(r, "type");
    if (need_type && (!type || !*type)) {
        sc_resp_error(w, 400,
                      "missing 'type' (a profile type id like cpu:cpu; see "
                      "/api/v1/profile_types)");
        return -1;
    }
    struct sc_plan_args a = {arg_prefixed(r, prefix, "query"), arg_prefixed(r, prefix, "from"),
                             arg_prefixed(r, prefix, "until"), prefix};
    char err[SC_ERR_LEN] = "";
    int rc = sc_selection_parse(s, &a, type && *type ? type : NULL, sc_wall_ns(), err);
    if (rc) {
        /* the parameters are wrong, whatever the parser's code (limits aside) */
        if (rc == SC_ELIMIT)
            sc_resp_limit(w, "%s", err);
        else
            sc_resp_error(w, 400, "%s", err);
        return -1;
    }
    if (range) {
        s->from = range[0];
        s->until = range[1];
    }
    rc = sc_selection_find(s, r->srv->store, r->tenant, err);
    if (rc) {
        sc_api_query_fail(w, rc, err);
        return -1;
    }
    return 0;
}

struct sc_filter_opts sc_api_filters(struct sc_req *r)
{
    struct sc_filter_opts fo = {sc_req_arg(r, "focus"), sc_req_arg(r, "ignore"),
                                sc_req_arg(r, "hide"), sc_req_arg(r, "show")};
    return fo;
}

struct sc_profile *sc_api_merged(struct sc_req *r, struct sc_resp *w, const struct sc_selection *s)
{
    char err[SC_ERR_LEN] = "";
    struct sc_filter_opts fo = sc_api_filters(r);
    struct sc_profile *p = NULL;
    int rc = sc_plan_merge(r->srv->store, r->tenant, s, &fo, &p, err);
    if (rc)
        sc_api_query_fail(w, rc, err);
    return p;
}

int sc_api_setting(struct sc_req *r, struct sc_resp *w, enum sc_set_id id, struct sc_set_value *out)
{
    const struct sc_setting *st = sc_setting(id);
    const char *text = sc_req_arg(r, st->param);
    char err[SC_ERR_LEN] = "";
    if (!text) {
        memset(out, 0, sizeof *out);
        /* the default, read as a user's would be (a bad one fails the settings test, and
         * here answers rather than going on with a zero) */
        if (st->def && sc_setting_parse(st, st->def, NULL, out, err)) {
            sc_resp_error(w, 500, "the default of '%s': %s", st->param, err);
            return -1;
        }
        return 0;
    }
    if (sc_setting_parse(st, text, st->param, out, err)) {
        sc_resp_error(w, 400, "%s", err);
        return -1;
    }
    return 0;
}

/* ---- render: one table of output formats ---- */

struct render_ctx {
    struct sc_req *r;
    uint32_t max_nodes;
    int top; /* the top table too, from the same merge (the UI's flame view) */
};

static int out_flame(const struct render_ctx *c, const struct sc_profile *p, struct sc_buf *o,
                     char *err)
{
    struct sc_flame_extra x = {c->top, NULL, NULL};
    return sc_flame_json_with(p, 0, c->max_nodes, &x, o, err);
}

static int out_top(const struct sc_profile *p, enum sc_top_format f, struct sc_buf *o, char *err)
{
    struct sc_top t;
    int rc = sc_top_compute(p, 0, &t, err);
    if (!rc) {
        struct sc_top_opts to = {.format = f};
        sc_top_write(p, 0, &t, &to, o);
    }
    sc_top_release(&t);
    return rc;
}

static int out_tsv(const struct render_ctx *c, const struct sc_profile *p, struct sc_buf *o,
                   char *err)
{
    (void)c;
    return out_top(p, SC_TOP_TSV, o, err);
}

static int out_top_json(const struct render_ctx *c, const struct sc_profile *p, struct sc_buf *o,
                        char *err)
{
    (void)c;
    return out_top(p, SC_TOP_JSON, o, err);
}

static int out_pprof(const struct render_ctx *c, const struct sc_profile *p, struct sc_buf *o,
                     char *err)
{
    (void)c;
    (void)err;
    struct sc_buf raw = SC_BUF_INIT;
    int rc = sc_pprof_encode(p, &raw);
    if (!rc)
        rc = sc_gzip(raw.data, raw.len, 6, o);
    sc_buf_release(&raw);
    return rc;
}

static int out_folded(const struct render_ctx *c, const struct sc_profile *p, struct sc_buf *o,
                      char *err)
{
    (void)c;
    return sc_folded_write(p, 0, o, err);
}

static int out_svg(const struct render_ctx *c, const struct sc_profile *p, struct sc_buf *o,
                   char *err)
{
    struct sc_svg_opts so;
    sc_svg_opts_init(&so);
    so.title = sc_req_arg(c->r, "title");
    int rc = sc_svg_write(p, 0, &so, o, err);
    return rc > 0 ? 0 : rc;
}

static int out_speedscope(const struct render_ctx *c, const struct sc_profile *p, struct sc_buf *o,
                          char *err)
{
    (void)c;
    return sc_speedscope_write(p, 0, "scorch", o, err);
}

static int out_dot(const struct render_ctx *c, const struct sc_profile *p, struct sc_buf *o,
                   char *err)
{
    (void)c;
    struct sc_callgraph_opts co = SC_CALLGRAPH_OPTS_INIT;
    return sc_callgraph_dot(p, 0, &co, o, err);
}

static const struct render_format {
    const char *name, *mime;
    int (*write)(const struct render_ctx *c, const struct sc_profile *p, struct sc_buf *o,
                 char *err);
} render_formats[] = {
    {"json", "application/json", out_flame},
    {"tsv", "text/tab-separated-values; charset=utf-8", out_tsv},
    {"top", "application/json", out_top_json},
    {"pprof", "application/octet-stream", out_pprof},
    {"folded", "text/plain; charset=utf-8", out_folded},
    {"svg", "image/svg+xml", out_svg},
    {"speedscope", "application/json", out_speedscope},
    {"dot", "text/vnd.graphviz; charset=utf-8", out_dot},
};
#define NRENDER (sizeof render_formats / sizeof render_formats[0])

static int render_run(struct sc_req *r, struct sc_resp *w)
{
    const char *format = sc_req_arg(r, "format");
    if (!format)
        format = "json";
    struct sc_set_value max_nodes, top;
    if (sc_api_setting(r, w, SC_SET_PARAM_MAX_NODES, &max_nodes) ||
        sc_api_setting(r, w, SC_SET_PARAM_TOP, &top))
        return 0;
    const struct render_format *f = NULL;
    for (size_t i = 0; i < NRENDER && !f; i++)
        if (!strcmp(format, render_formats[i].name))
            f = &render_formats[i];
    if (!f) {
        char names[160] = "";
        for (size_t i = 0; i < NRENDER; i++)
            snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s", i ? ", " : "",
                     render_formats[i].name);
        return sc_resp_error(w, 400, "unknown format '%.32s' (%s)", format, names);
    }
    struct sc_selection s;
    if (sc_api_selection(r, w, "", 1, &s)) {
        sc_selection_release(&s);
        return 0;
    }
    struct sc_profile *p = sc_api_merged(r, w, &s);
    sc_selection_release(&s);
    if (!p)
        return 0;
    char err[SC_ERR_LEN] = "";
    struct render_ctx c = {r, (uint32_t)max_nodes.i, (int)top.i};
    int rc = f->write(&c, p, &w->body, err);
    w->content_type = f->mime;
    sc_profile_free(p);
    if (rc)
        return sc_api_query_fail(w, rc, err);
    return 0;
}

/* ---- timeline ---- */

int sc_api_step(struct sc_req *r, struct sc_resp *w, int64_t *step)
{
    struct sc_set_value v;
    int rc = sc_api_setting(r, w, SC_SET_PARAM_STEP, &v);
    *step = v.i;
    return rc;
}

static int timeline_run(struct sc_req *r, struct sc_resp *w)
{
    char err[SC_ERR_LEN] = "";
    int64_t step;
    if (sc_api_step(r, w, &step))
        return 0;
    /* a function's line instead of the totals: its self or total (cum) part of them */
    const char *function = sc_req_arg(r, "function"), *value = sc_req_arg(r, "value");
    struct sc_set_value vv;
    if (sc_api_setting(r, w, SC_SET_PARAM_VALUE, &vv))
        return 0;
    int self = vv.i == 1; /* the choices total|self */
    if (value && !function)
        return sc_resp_error(w, 400, "'value' is the value of a function: give 'function' too");
    if (function && !*function)
        return sc_resp_error(w, 400, "empty 'function' (a function's exact name)");
    struct sc_selection s;
    if (sc_api_selection(r, w, "", 1, &s)) {
        sc_selection_release(&s);
        return 0;
    }
    const char *group_by = sc_req_arg(r, "group_by");
    int rc;
    if (function) {
        struct sc_fnseries f;
        rc = sc_plan_fnseries(r->srv->store, r->tenant, &s, step, group_by, function, 1, self, &f,
                              err);
        if (rc == 0)
            sc_fnseries_write_json(&f, 0, self, &s, &w->body);
        sc_fnseries_release(&f);
    } else {
        struct sc_timeline t;
        rc = sc_plan_timeline(r->srv->store, r->tenant, &s, step, group_by, &t, err);
        if (rc == 0)
            sc_timeline_write_json(&t, &s, &w->body);
        sc_timeline_release(&t);
    }
    sc_selection_release(&s);
    return rc ? sc_api_query_fail(w, rc, err) : 0;
}

/* ---- diff ---- */

int sc_api_level(struct sc_req *r, struct sc_resp *w, double *level)
{
    struct sc_set_value v;
    if (sc_api_setting(r, w, SC_SET_COMPARE_Q, &v))
        return -1;
    if (sc_req_arg(r, sc_setting(SC_SET_COMPARE_Q)->param))
        *level = v.d;
    return 0;
}

/* The statistics of a diff (sc_plan_compare) with o's level and reps replicates. NULL + w
 * filled on failure. */
static struct sc_cmp *diff_stats(struct sc_req *r, struct sc_resp *w, const struct sc_selection *bs,
                                 const struct sc_selection *ns, const struct sc_cmp_opts *o,
                                 uint32_t reps)
{
    struct sc_cmp *c = NULL;
    char err[SC_ERR_LEN] = "";
    struct sc_filter_opts fo = sc_api_filters(r);
    int rc = sc_plan_compare(r->srv->store, r->tenant, bs, ns, &fo, o, reps, &c, err);
    if (rc)
        sc_api_query_fail(w, rc, err);
    return c;
}

/* The base of a diff: base_query (default: query) over base_from..base_until (default:
 * the new side's range), except that the same selector over the same range says nothing:
 * with neither base_from nor base_until and no other base_query, the base is the period of
 * the same length just before the new side's. 0, or -1 with w filled. */
static int diff_base(struct sc_req *r, struct sc_resp *w, const struct sc_selection *ns,
                     struct sc_selection *bs)
{
    const char *bq = sc_req_arg(r, "base_query"), *q = sc_req_arg(r, "query");
    int same_query = !bq || !*bq || (q && !strcmp(bq, q));
    if (sc_req_arg(r, "base_from") || sc_req_arg(r, "base_until") || !same_query)
        return sc_api_selection(r, w, "base_", 1, bs);
    int64_t range[2] = {sc_sub_sat(ns->from, sc_sub_sat(ns->until, ns->from)), ns->from};
    return sc_api_selection_in(r, w, "base_", 1, range, bs);
}

/* Which side of a diff has no profiles, in which range, in words. */
static void diff_empty_text(int empty, const struct sc_selection *bs, const struct sc_selection *ns,
                            char *out, size_t n)
{
    char a[40], b[40], c[40], d[40];
    const char *type = ns->type ? ns->type : "";
    if (empty == 3)
        snprintf(
            out, n, "neither side has %s profiles: the base in %s to %s, the new side in %s to %s",
            type, sc_time_format(bs->from, a, sizeof a), sc_time_format(bs->until, b, sizeof b),
            sc_time_format(ns->from, c, sizeof c), sc_time_format(ns->until, d, sizeof d));
    else if (empty == 1)
        snprintf(out, n, "the base has no %s profiles in %s to %s", type,
                 sc_time_format(bs->from, a, sizeof a), sc_time_format(bs->until, b, sizeof b));
    else
        snprintf(out, n, "the new side has no %s profiles in %s to %s", type,
                 sc_time_format(ns->from, a, sizeof a), sc_time_format(ns->until, b, sizeof b));
}

static int diff_run(struct sc_req *r, struct sc_resp *w)
{
    /* every parameter read before any work: a bad one costs no query */
    struct sc_set_value fv, nv, sv, max_nodes, reps;
    struct sc_cmp_opts co = SC_CMP_OPTS_INIT;
    if (sc_api_setting(r, w, SC_SET_PARAM_DIFF_FORMAT, &fv) ||
        sc_api_setting(r, w, SC_SET_PARAM_NORMALIZE, &nv) ||
        sc_api_setting(r, w, SC_SET_PARAM_STATS, &sv) ||
        sc_api_setting(r, w, SC_SET_PARAM_MAX_NODES, &max_nodes) || sc_api_level(r, w, &co.level) ||
        sc_api_setting(r, w, SC_SET_PARAM_REPLICATES, &reps))
        return 0;
    const char *format = fv.s;
    /* the choices 0|1|false|true: the odd ones are true */
    int normalize = (int)(nv.i & 1);
    int stats = strcmp(format, "folded") && (sv.i & 1);
    co.normalize = normalize;
    struct sc_selection bs, ns;
    memset(&bs, 0, sizeof bs);
    if (sc_api_selection(r, w, "", 1, &ns) || diff_base(r, w, &ns, &bs)) {
        sc_selection_release(&bs);
        sc_selection_release(&ns);
        return 0;
    }
    struct sc_profile *base = sc_api_merged(r, w, &bs);
    struct sc_profile *p = base ? sc_api_merged(r, w, &ns) : NULL;
    struct sc_cmp *cmp = p && stats ? diff_stats(r, w, &bs, &ns, &co, (uint32_t)reps.i) : NULL;
    /* a side without profiles is said, with its range, not taken for an error */
    int empty = (bs.n == 0) | (ns.n == 0) << 1;
    char empty_text[320] = "";
    if (empty)
        diff_empty_text(empty, &bs, &ns, empty_text, sizeof empty_text);
    sc_selection_release(&bs);
    sc_selection_release(&ns);
    char err[SC_ERR_LEN] = "";
    int rc = 0;
    if (base && p && (cmp || !stats)) {
        if (!strcmp(format, "flame")) {
            rc = sc_flame_diff_json(base, 0, p, 0, (uint32_t)max_nodes.i, normalize, cmp, &w->body,
                                    err);
        } else if (!strcmp(format, "folded")) {
            rc = sc_diff_stacks(base, 0, p, 0, normalize, &w->body, err);
            w->content_type = "text/plain; charset=utf-8";
        } else {
            struct sc_diff d;
            rc = sc_diff_compute(base, 0, p, 0, normalize, &d, err);
            if (!rc) {
                sc_diff_attach(&d, cmp);
                d.empty = empty;
                d.empty_text = empty_text;
                sc_diff_write(&d, !strcmp(format, "tsv") ? SC_DIFF_TSV : SC_DIFF_JSON, 0, &w->body);
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
        return sc_api_query_fail(w, rc, err);
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

static int heatmap_run(struct sc_req *r, struct sc_resp *w)
{
    struct sc_set_value rows;
    if (sc_api_setting(r, w, SC_SET_HEATMAP_ROWS, &rows))
        return 0;
    struct sc_selection s;
    if (sc_api_selection(r, w, "", 1, &s)) {
        sc_selection_release(&s);
        return 0;
    }
    char err[SC_ERR_LEN] = "";
    struct sc_heatmap h;
    int rc = sc_heatmap_init(&h, (uint32_t)rows.i, SC_HEATMAP_MAX_COLS, err);
    if (!rc && s.n) {
        /* streamed a block at a time: memory is the counts and one block, not the range */
        struct sc_store_query q = sc_selection_query(&s, r->tenant);
        rc = sc_store_timed_each(r->srv->store, &q, heatmap_block, &h, err);
        if (rc == SC_ENOTFOUND)
            rc = 0;
    }
    sc_selection_release(&s);
    if (!rc)
        rc = sc_heatmap_finish(&h, err);
    if (!rc)
        sc_heatmap_write_json(&h, &w->body);
    sc_heatmap_release(&h);
    if (rc)
        return sc_api_query_fail(w, rc, err);
    return 0;
}

/* ---- call graph ---- */

static int callgraph_run(struct sc_req *r, struct sc_resp *w)
{
    struct sc_set_value fv;
    if (sc_api_setting(r, w, SC_SET_PARAM_CALLGRAPH_FORMAT, &fv))
        return 0;
    const char *format = fv.s;
    struct sc_callgraph_opts co = SC_CALLGRAPH_OPTS_INIT;
    struct sc_set_value nc, fit;
    if (sc_api_setting(r, w, SC_SET_CALLGRAPH_NODECOUNT, &nc) ||
        sc_api_setting(r, w, SC_SET_PARAM_FIT, &fit))
        return 0;
    co.nodecount = (uint32_t)nc.i;
    /* fit=0 (the choices' second): every node and edge asked, past the layout budget (the
     * deadline still holds) */
    co.exact = fit.i == 1;
    struct sc_selection s;
    if (sc_api_selection(r, w, "", 1, &s)) {
        sc_selection_release(&s);
        return 0;
    }
    struct sc_profile *p = sc_api_merged(r, w, &s);
    sc_selection_release(&s);
    if (!p)
        return 0;
    char err[SC_ERR_LEN] = "";
    /* the layout in a worker process: no lock shared with other requests, killed at its
     * deadline, when this client hangs up or when the server stops */
    const union MHD_ConnectionInfo *ci =
        sym_MHD_get_connection_info(r->conn, MHD_CONNECTION_INFO_CONNECTION_FD);
    struct sc_layout_opts lo = {r->srv->exe[0] ? r->srv->exe : NULL, r->srv->opts.layout_timeout_ns,
                                r->srv->opts.layout_memory, ci ? ci->connect_fd : -1, r->srv->stop};
    co.layout = &lo;
    int svg = strcmp(format, "dot") != 0;
    if (svg && atomic_fetch_add(&r->srv->layouts, 1) >= r->srv->opts.max_layouts) {
        atomic_fetch_sub(&r->srv->layouts, 1);
        sc_profile_free(p);
        sc_resp_error(w, 503,
                      "server busy: %u call graph layouts are running (the limit); "
                      "retry later",
                      (unsigned)r->srv->opts.max_layouts);
        w->reason = SC_REASON_BUSY + 1;
        return 0;
    }
    int rc;
    if (!svg) {
        rc = sc_callgraph_dot(p, 0, &co, &w->body, err);
        w->content_type = "text/vnd.graphviz; charset=utf-8";
    } else {
        rc = sc_callgraph_svg(p, 0, &co, &w->body, err);
        w->content_type = "image/svg+xml";
        atomic_fetch_sub(&r->srv->layouts, 1);
    }
    sc_profile_free(p);
    if (rc)
        return sc_api_query_fail(w, rc, err);
    return 0;
}

/* ---- source ---- */

static int source_run(struct sc_req *r, struct sc_resp *w)
{
    const char *fn = sc_req_arg(r, "function");
    if (!fn || !*fn)
        return sc_resp_error(w, 400, "missing 'function' (a function name)");
    struct sc_selection s;
    if (sc_api_selection(r, w, "", 1, &s)) {
        sc_selection_release(&s);
        return 0;
    }
    struct sc_profile *p = sc_api_merged(r, w, &s);
    sc_selection_release(&s);
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
        return sc_api_query_fail(w, rc, err);
    return 0;
}

/* ---- listings that use the selector ---- */

int sc_api_series(struct sc_req *r, struct sc_resp *w)
{
    /* type is optional here: any type */
    struct sc_selection s;
    if (sc_api_selection(r, w, "", 0, &s)) {
        sc_selection_release(&s);
        return 0;
    }
    struct sc_json j;
    sc_json_init(&j, &w->body);
    sc_json_arr_begin(&j);
    for (uint32_t i = 0; i < s.n; i++) {
        sc_json_obj_begin(&j);
        sc_json_key(&j, "labels");
        sc_plan_labels_json(&j, s.labels[i]);
        sc_json_obj_end(&j);
    }
    sc_json_arr_end(&j);
    sc_buf_putc(&w->body, '\n');
    sc_selection_release(&s);
    return 0;
}

/* profile_types?query=: a type is listed when a series matching the selector has it. */
struct types_ctx {
    struct sc_req *r;
    const struct sc_selector *selector;
    int64_t from, until;
    struct list_ctx *out;
    int found, rc;
    char *err;
};

static int match_selector(void *ctx, const char *labels)
{
    return sc_selector_match_text(((struct types_ctx *)ctx)->selector, labels);
}

/* A matching series has the type in range: that is all it takes. */
static int found_one(void *ctx, const struct sc_store_series *se)
{
    (void)se;
    ((struct types_ctx *)ctx)->found = 1;
    return 1;
}

static int put_type_if_selected(void *ctx, const struct sc_store_type *t)
{
    struct types_ctx *c = ctx;
    c->found = 0;
    c->rc = sc_store_series_find(c->r->srv->store, c->r->tenant, t->id, c->from, c->until,
                                 match_selector, found_one, c, c->err);
    if (c->rc)
        return 1;
    return c->found ? put_type(c->out, t) : 0;
}

int sc_api_profile_types(struct sc_req *r, struct sc_resp *w)
{
    char err[SC_ERR_LEN] = "";
    const char *query = sc_req_arg(r, "query");
    struct list_ctx out;
    list_begin(&out, &w->body);
    int rc;
    if (query && *query) {
        /* over all time unless from/until say otherwise */
        struct sc_selection s;
        struct sc_plan_args a = {query, sc_req_arg(r, "from"), sc_req_arg(r, "until"), ""};
        rc = sc_selection_parse(&s, &a, NULL, sc_wall_ns(), err);
        if (rc) {
            sc_selection_release(&s);
            return rc == SC_ELIMIT ? sc_resp_limit(w, "%s", err) : sc_resp_error(w, 400, "%s", err);
        }
        struct types_ctx c = {r, s.selector, INT64_MIN, INT64_MAX, &out, 0, 0, err};
        if (sc_req_arg(r, "from") || sc_req_arg(r, "until")) {
            c.from = s.from;
            c.until = s.until;
        }
        rc = sc_store_types(r->srv->store, r->tenant, put_type_if_selected, &c, err);
        if (!rc)
            rc = c.rc;
        sc_selection_release(&s);
    } else {
        rc = sc_store_types(r->srv->store, r->tenant, put_type, &out, err);
    }
    if (rc)
        return sc_resp_code(w, rc, err);
    list_end(&out);
    return 0;
}

/* ---- the heavy queries, each admitted (sc_api_query_begin) ---- */

/* Runs a heavy query admitted and under its budget (model/budget.h): past its memory, the
 * query's out-of-memory error (whatever status its path gave it) becomes a 400 naming
 * server.query_memory; past its time, a 503 naming server.query_timeout; a query whose
 * client has hung up stops (its answer goes nowhere). */
int sc_api_admitted(struct sc_req *r, struct sc_resp *w, sc_handler run)
{
    if (sc_api_query_begin(r, w))
        return 0;
    const struct sc_server_opts *o = &r->srv->opts;
    const union MHD_ConnectionInfo *ci =
        sym_MHD_get_connection_info(r->conn, MHD_CONNECTION_INFO_CONNECTION_FD);
    struct sc_budget b;
    sc_budget_begin(&b, o->query_memory);
    sc_budget_limit(&b, o->query_timeout_ns, ci ? ci->connect_fd : -1);
    int rc = run(r, w);
    sc_budget_end();
    sc_api_query_end(r);
    int64_t peak = atomic_load(&b.peak);
    int stopped = atomic_load(&b.stopped);
    sc_metrics_query_end(&r->srv->metrics, peak, stopped);
    /* a refused allocation the query lived without (a cache not filled) is no failure */
    int failed = w->status >= 400 || w->body.oom;
    if (failed && (atomic_load(&b.over) || stopped == SC_BUDGET_TIME)) {
        sc_buf_release(&w->body);
        if (atomic_load(&b.over)) {
            sc_resp_limit(w,
                          "the query needs more than %llu MiB of memory (the server's budget for "
                          "one query, server.query_memory): narrow the time range or the "
                          "selection",
                          (unsigned long long)(o->query_memory >> 20));
        } else {
            sc_resp_error(w, 503,
                          "the query ran longer than %g s (the server's time budget for one "
                          "query, server.query_timeout): narrow the time range or the "
                          "selection, or retry when the server is less busy",
                          (double)o->query_timeout_ns / 1e9);
            w->reason = SC_REASON_BUSY + 1;
        }
        rc = 0;
    }
    sc_server_trim((uint64_t)(peak > 0 ? peak : 0));
    return rc;
}

#define ADMITTED(name)                                                                             \
    int sc_api_##name(struct sc_req *r, struct sc_resp *w)                                         \
    {                                                                                              \
        return sc_api_admitted(r, w, name##_run);                                                  \
    }
ADMITTED(render)
ADMITTED(timeline)
ADMITTED(diff)
ADMITTED(heatmap)
ADMITTED(callgraph)
ADMITTED(source)
