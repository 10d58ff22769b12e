/* api_views.c - handlers for the UI's views: stored profiles one by one, flame + top. */
#include "model/clock.h"
#include "model/error.h"
#include "model/timespec.h"
#include "query/filter.h"
#include "query/plan.h"
#include "query/selector.h"
#include "server/server_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* /api/v1/profiles lists at most `limit` (settings.def), sorted by time, of at most this
 * many collected before sorting (more: truncated, the earliest of these are listed). */
#define PROFILES_MAX_COLLECT 200000

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

int sc_api_profiles(struct sc_req *r, struct sc_resp *w)
{
    struct sc_set_value lv;
    if (sc_api_setting(r, w, SC_SET_PARAM_LIMIT, &lv))
        return 0;
    uint64_t limit = (uint64_t)lv.i;
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
    struct sc_json j;
    sc_json_init(&j, &w->body);
    sc_json_obj_begin(&j);
    sc_json_key(&j, "profiles");
    sc_json_arr_begin(&j);
    for (uint32_t i = 0; i < n; i++) {
        const struct listed *x = &c.v[i];
        const char *canon = s.labels[x->sel];
        char ns[24];
        /* a string: the nanoseconds of a time past 2^53 are exact only as text */
        snprintf(ns, sizeof ns, "%lld", (long long)x->time_ns);
        sc_json_obj_begin(&j);
        sc_json_key(&j, "labels");
        sc_plan_labels_json(&j, canon);
        sc_json_kv_str(&j, "series", canon);
        sc_json_key(&j, "time");
        sc_plan_seconds_json(&j, x->time_ns);
        sc_json_kv_str(&j, "time_ns", ns);
        sc_json_key(&j, "duration");
        sc_plan_seconds_json(&j, x->duration_ns);
        sc_json_kv_i64(&j, "total", x->total);
        sc_json_kv_u64(&j, "samples", x->nsamples);
        sc_json_kv_bool(&j, "timed", x->timed);
        sc_json_obj_end(&j);
    }
    sc_json_arr_end(&j);
    sc_json_kv_bool(&j, "truncated", truncated);
    sc_json_obj_end(&j);
    sc_buf_putc(&w->body, '\n');
    free(c.v);
    sc_selection_release(&s);
    return sc_json_ok(&j) && !w->body.oom ? 0 : sc_resp_error(w, 500, "out of memory");
}

/* ---- GET /api/v1/profile ---- */

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
    struct sc_set_value max_nodes, top;
    if (sc_api_setting(r, w, SC_SET_PARAM_MAX_NODES, &max_nodes) ||
        sc_api_setting(r, w, SC_SET_PARAM_TOP, &top))
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
    struct sc_profile_ref ref = {r->tenant, type, canon.data ? canon.data : "{}", t};
    struct sc_filter_opts fo = sc_api_filters(r);
    rc = canon.oom ? sc_errf(err, SC_ENOMEM, "out of memory")
                   : sc_plan_profile_json(r->srv->store, &ref, &fo, (uint32_t)max_nodes.i,
                                          (int)top.i, &w->body, err);
    sc_buf_release(&canon);
    if (rc) {
        w->body.len = 0;
        return sc_resp_code(w, rc, err);
    }
    return 0;
}

/* One stored profile's flame graph is as heavy as a merge of it: admitted and budgeted. */
int sc_api_profile(struct sc_req *r, struct sc_resp *w)
{
    return sc_api_admitted(r, w, profile_run);
}
