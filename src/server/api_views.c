/* api_views.c - handlers for the UI's views: stored profiles one by one, flame + top. */
#include "formats/top.h"
#include "model/clock.h"
#include "model/error.h"
#include "model/timespec.h"
#include "query/filter.h"
#include "query/flame.h"
#include "query/plan.h"
#include "query/selector.h"
#include "server/server_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* /api/v1/profiles lists at most this many (the `limit` parameter), sorted by time. */
#define PROFILES_DEFAULT_LIMIT 1000
#define PROFILES_MAX_LIMIT 10000
/* ...of at most this many collected before sorting (more: truncated, the earliest of
 * these are listed). */
#define PROFILES_MAX_COLLECT 200000

/* ---- flame graph with its top table ---- */

int sc_api_flame_json(struct sc_req *r, const struct sc_profile *p, uint32_t max_nodes,
                      struct sc_buf *out, char *err)
{
    size_t start = out->len;
    int rc = sc_flame_json(p, 0, max_nodes, out, err);
    const char *top = sc_req_arg(r, "top");
    if (rc || !top || strcmp(top, "1"))
        return rc;
    /* the flame object ends in "}\n": the top table becomes its last member */
    while (out->len > start && out->data[out->len - 1] != '}')
        out->len--;
    if (out->len == start)
        return sc_errf(err, SC_EINTERNAL, "flame graph JSON without an object");
    out->len--;
    struct sc_top t;
    rc = sc_top_compute(p, 0, &t, err);
    if (!rc) {
        struct sc_top_opts o = {.format = SC_TOP_JSON};
        sc_buf_puts(out, ",\"top\":");
        sc_top_write(p, 0, &t, &o, out);
        while (out->len && (out->data[out->len - 1] == '\n'))
            out->len--;
        sc_buf_puts(out, "}\n");
    }
    sc_top_release(&t);
    if (!rc && out->oom)
        rc = sc_errf(err, SC_ENOMEM, "out of memory");
    return rc;
}

/* ---- GET /api/v1/profiles ---- */

struct listed {
    int64_t time_ns, duration_ns, total;
    uint32_t sel; /* index into the selection's series */
    uint32_t nsamples;
    int timed;
};

struct list_ctx {
    const struct sc_selection *s;
    struct listed *v;
    uint32_t n, cap;
    uint32_t series; /* the index of the series being listed */
    int truncated, oom;
};

static int collect_profile(void *ctx, const struct sc_store_profile_info *pi)
{
    struct list_ctx *c = ctx;
    if (c->n == PROFILES_MAX_COLLECT) {
        c->truncated = 1;
        return 1;
    }
    if (sc_grow_array(&c->v, &c->cap, (uint64_t)c->n + 1, sizeof *c->v)) {
        c->oom = 1;
        return 1;
    }
    c->v[c->n++] = (struct listed){pi->time_ns, pi->duration_ns, pi->total,
                                   c->series,   pi->nsamples,    pi->timed};
    return 0;
}

static int cmp_listed(const void *a, const void *b)
{
    const struct listed *x = a, *y = b;
    if (x->time_ns != y->time_ns)
        return x->time_ns < y->time_ns ? -1 : 1;
    return (x->sel > y->sel) - (x->sel < y->sel);
}

/* Unix seconds with up to nine exact decimals. */
static void put_seconds(struct sc_buf *o, int64_t ns)
{
    int64_t sec = ns / SC_NS_PER_S, frac = ns % SC_NS_PER_S;
    if (frac < 0) {
        sec--;
        frac += SC_NS_PER_S;
    }
    sc_buf_put_i64(o, sec);
    if (frac) {
        char d[16];
        snprintf(d, sizeof d, ".%09lld", (long long)frac);
        size_t n = strlen(d);
        while (d[n - 1] == '0')
            d[--n] = 0;
        sc_buf_puts(o, d);
    }
}

static void put_series(struct sc_buf *o, const char *canonical)
{
    struct sc_labels l;
    sc_labels_init(&l);
    char err[SC_ERR_LEN];
    sc_labels_parse(canonical, &l, err);
    sc_buf_puts(o, "\"labels\":");
    sc_labels_write_json(&l, o);
    sc_buf_puts(o, ",\"series\":\"");
    sc_buf_put_json_str(o, canonical, strlen(canonical));
    sc_buf_putc(o, '"');
    sc_labels_release(&l);
}

int sc_api_profiles(struct sc_req *r, struct sc_resp *w)
{
    uint64_t limit = PROFILES_DEFAULT_LIMIT;
    const char *la = sc_req_arg(r, "limit");
    if (la && (sc_api_parse_uint(la, PROFILES_MAX_LIMIT, &limit) || limit == 0))
        return sc_resp_error(w, 400, "bad 'limit' '%.32s' (1..%d)", la, PROFILES_MAX_LIMIT);
    struct sc_selection s;
    if (sc_api_selection(r, w, "", 1, &s)) {
        sc_selection_release(&s);
        return 0;
    }
    char err[SC_ERR_LEN] = "";
    struct list_ctx c = {&s, NULL, 0, 0, 0, 0, 0};
    int rc = 0;
    for (uint32_t i = 0; i < s.n && !rc && !c.truncated && !c.oom; i++) {
        c.series = i;
        struct sc_store_query q = {r->tenant, &s.ids[i], 1, s.type, s.from, s.until, 0};
        rc = sc_store_profiles(r->srv->store, &q, collect_profile, &c, err);
    }
    if (rc || c.oom) {
        free(c.v);
        sc_selection_release(&s);
        return sc_resp_code(w, rc ? rc : SC_ENOMEM, err);
    }
    if (c.n > 1)
        qsort(c.v, c.n, sizeof *c.v, cmp_listed);
    int truncated = c.truncated || c.n > limit;
    uint32_t n = c.n > limit ? (uint32_t)limit : c.n;
    struct sc_buf *o = &w->body;
    sc_buf_puts(o, "{\"profiles\":[");
    for (uint32_t i = 0; i < n; i++) {
        const struct listed *x = &c.v[i];
        sc_buf_puts(o, i ? ",{" : "{");
        put_series(o, s.labels[x->sel]);
        sc_buf_puts(o, ",\"time\":");
        put_seconds(o, x->time_ns);
        sc_buf_printf(o, ",\"time_ns\":\"%lld\",\"duration\":", (long long)x->time_ns);
        put_seconds(o, x->duration_ns);
        sc_buf_printf(o, ",\"total\":%lld,\"samples\":%u,\"timed\":%s}", (long long)x->total,
                      (unsigned)x->nsamples, x->timed ? "true" : "false");
    }
    sc_buf_printf(o, "],\"truncated\":%s}\n", truncated ? "true" : "false");
    free(c.v);
    sc_selection_release(&s);
    return o->oom ? sc_resp_error(w, 500, "out of memory") : 0;
}

/* ---- GET /api/v1/profile ---- */

/* The tenant's series whose canonical labels are `want`. */
struct find_ctx {
    const char *want;
    uint64_t id;
    int found;
};

static int is_wanted(void *ctx, const char *labels)
{
    return !strcmp(labels, ((struct find_ctx *)ctx)->want);
}

static int find_series(void *ctx, const struct sc_store_series *se)
{
    struct find_ctx *f = ctx;
    f->id = se->id;
    f->found = 1;
    return 1;
}

static int profile_run(struct sc_req *r, struct sc_resp *w)
{
    const char *type = sc_req_arg(r, "type"), *series = sc_req_arg(r, "series");
    const char *at = sc_req_arg(r, "time");
    if (!type || !*type)
        return sc_resp_error(w, 400,
                             "missing 'type' (a profile type id like cpu:cpu; see "
                             "/api/v1/profile_types)");
    if (!series || !*series)
        return sc_resp_error(w, 400,
                             "missing 'series' (its labels, as /api/v1/profiles "
                             "lists them: {a=\"x\",b=\"y\"})");
    if (!at || !*at)
        return sc_resp_error(w, 400,
                             "missing 'time' (the profile's time, e.g. its time_ns "
                             "from /api/v1/profiles)");
    uint64_t max_nodes;
    if (sc_api_max_nodes(r, w, &max_nodes))
        return 0;
    char err[SC_ERR_LEN] = "";
    int64_t t;
    if (sc_time_parse(at, sc_wall_ns(), &t, err))
        return sc_resp_error(w, 400, "bad 'time': %s", err);
    /* the series by its labels, written any way: compared in canonical form */
    struct sc_labels l;
    sc_labels_init(&l);
    int rc = sc_labels_parse(series, &l, err);
    if (rc) {
        sc_labels_release(&l);
        return sc_resp_error(w, 400, "bad 'series': %s", err);
    }
    struct sc_buf canon = SC_BUF_INIT;
    sc_labels_format(&l, &canon);
    sc_labels_release(&l);
    struct find_ctx f = {canon.data ? canon.data : "{}", 0, 0};
    rc = canon.oom ? SC_ENOMEM
                   : sc_store_series_find(r->srv->store, r->tenant, type, INT64_MIN, INT64_MAX,
                                          is_wanted, find_series, &f, err);
    struct sc_profile *p = NULL;
    if (!rc && !f.found)
        rc = sc_errf(err, SC_ENOTFOUND, "no series %.200s with %.64s profiles", f.want, type);
    if (!rc)
        rc = sc_store_profile_read(r->srv->store, f.id, type, t, &p, err);
    struct sc_filter_opts fo = {sc_req_arg(r, "focus"), sc_req_arg(r, "ignore"),
                                sc_req_arg(r, "hide"), sc_req_arg(r, "show")};
    if (!rc && (fo.focus || fo.ignore || fo.hide || fo.show))
        rc = sc_profile_filter(p, &fo, NULL, err);
    if (!rc) {
        /* the flame graph (and top table) with what the listing says of the profile */
        rc = sc_api_flame_json(r, p, (uint32_t)max_nodes, &w->body, err);
        while (!rc && w->body.len && w->body.data[w->body.len - 1] != '}')
            w->body.len--;
        if (!rc && w->body.len) {
            w->body.len--;
            sc_buf_puts(&w->body, ",\"profile\":{");
            put_series(&w->body, f.want);
            sc_buf_puts(&w->body, ",\"time\":");
            put_seconds(&w->body, t);
            sc_buf_printf(&w->body, ",\"time_ns\":\"%lld\"}}\n", (long long)t);
        }
    }
    sc_profile_free(p);
    sc_buf_release(&canon);
    if (rc) {
        w->body.len = 0;
        return sc_resp_code(w, rc, err);
    }
    return w->body.oom ? sc_resp_error(w, 500, "out of memory") : 0;
}

/* One stored profile's flame graph is as heavy as a merge of it: admitted and budgeted. */
int sc_api_profile(struct sc_req *r, struct sc_resp *w)
{
    return sc_api_admitted(r, w, profile_run);
}
