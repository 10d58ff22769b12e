/* server.c - libmicrohttpd glue: requests, bodies and limits, auth, routes, lifecycle. */
#include "server/server_int.h"
#include "model/error.h"
#include "model/json.h"
#include "model/setting.h"
#include "model/clock.h"
#include "server/assets.h"
#include "collect/record.h"
#include "collect/scrape.h"
#include "config/config.h"
#include "server/grpc.h"
#include "server/rules.h"

#include <arpa/inet.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <errno.h>
#include <malloc.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

/* Why a request's body is being discarded (struct sc_req.body_state). */
enum { BODY_OK, BODY_TOO_LARGE, BODY_ANSWERED, BODY_BAD_MULTIPART, BODY_BUSY, BODY_OOM };

/* How long a push waits for its share of the ingest budget before a 503. */
#define ADMIT_WAIT_S 10

void sc_server_opts_init(struct sc_server_opts *o)
{
    memset(o, 0, sizeof *o);
    o->listen = sc_setting(SC_SET_SERVER_LISTEN)->def;
    o->data_dir = sc_setting(SC_SET_STORAGE_PATH)->def;
    o->retention_ns = sc_setting_default_i(SC_SET_STORAGE_RETENTION);
    o->limits = sc_limits_server;
    o->max_body = 64u << 20;
    o->max_body_total = 4 * o->max_body;
    o->ingest_budget = 512u << 20;
    o->max_read_blocks = (uint64_t)sc_setting_default_i(SC_SET_SERVER_MAX_READ_BLOCKS);
    o->max_connections = 512;
    o->layout_timeout_ns = sc_setting_default_i(SC_SET_SERVER_LAYOUT_TIMEOUT);
    o->layout_memory = 1ull << 30;
    o->max_layouts = 2;
    o->max_queries = (uint32_t)sc_setting_default_i(SC_SET_SERVER_MAX_QUERIES);
    o->max_read_rows = (uint64_t)sc_setting_default_i(SC_SET_SERVER_MAX_READ_ROWS);
    o->query_memory = (uint64_t)sc_setting_default_i(SC_SET_SERVER_QUERY_MEMORY);
    o->query_timeout_ns = sc_setting_default_i(SC_SET_SERVER_QUERY_TIMEOUT);
    o->shutdown_timeout_ns = sc_setting_default_i(SC_SET_SERVER_SHUTDOWN_TIMEOUT);
    o->durable = 1;
}

double sc_server_now(void)
{
    return sc_mono_s();
}

/* Below it the freed memory is likely reused by the next request; a trim walks the heaps. */
#define TRIM_BYTES (32u << 20)

void sc_server_trim(uint64_t bytes)
{
    if (bytes > TRIM_BYTES)
        malloc_trim(0);
}

const char *sc_req_arg(const struct sc_req *r, const char *name)
{
    return sym_MHD_lookup_connection_value(r->conn, MHD_GET_ARGUMENT_KIND, name);
}

static enum sc_err_reason reason_of(unsigned status)
{
    switch (status) {
    case 401:
    case 403:
        return SC_REASON_AUTH;
    case 404:
    case 405:
        return SC_REASON_NOT_FOUND;
    case 413:
        return SC_REASON_LIMIT;
    case 415:
        return SC_REASON_UNSUPPORTED;
    case 503:
        return SC_REASON_BUSY;
    case 507:
        return SC_REASON_STORAGE;
    default:
        return status >= 500 ? SC_REASON_INTERNAL : SC_REASON_BAD_REQUEST;
    }
}

int sc_resp_error(struct sc_resp *w, unsigned status, const char *fmt, ...)
{
    char msg[SC_ERR_LEN + 64];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    w->status = status;
    w->content_type = "application/json";
    w->body.len = 0;
    sc_json_put_error(&w->body, msg);
    return 0;
}

int sc_resp_code(struct sc_resp *w, int code, const char *msg)
{
    unsigned status;
    enum sc_err_reason reason;
    switch (code) {
    case SC_EINVAL:
        status = 400, reason = SC_REASON_BAD_REQUEST;
        break;
    case SC_EFORMAT:
        status = 400, reason = SC_REASON_FORMAT;
        break;
    case SC_ELIMIT:
        status = 413, reason = SC_REASON_LIMIT;
        break;
    case SC_ENOTFOUND:
        status = 404, reason = SC_REASON_NOT_FOUND;
        break;
    case SC_EUNSUPPORTED:
        status = 415, reason = SC_REASON_UNSUPPORTED;
        break;
    case SC_EAUTH:
        status = 401, reason = SC_REASON_AUTH;
        break;
    case SC_ENOSPACE:
        /* the disk is full: nothing was stored; the client may retry once there is room */
        status = 507, reason = SC_REASON_STORAGE;
        break;
    case SC_EUNAVAIL: /* the store is away for now: clients retry (Retry-After) */
        status = 503, reason = SC_REASON_BUSY;
        break;
    default:
        status = 500, reason = SC_REASON_INTERNAL;
    }
    sc_resp_error(w, status, "%s", msg && *msg ? msg : sc_strerror(code));
    w->reason = (int)reason + 1;
    return 0;
}

int sc_resp_limit(struct sc_resp *w, const char *fmt, ...)
{
    char msg[SC_ERR_LEN + 64];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    sc_resp_error(w, 400, "%s", msg);
    w->reason = SC_REASON_LIMIT + 1;
    return 0;
}

/* ---- routes ---- */

/* 200 while the server answers; a store opened read-only (its disk full at start) is said
 * until it is writable again, as queries still answer but pushes do not. */
static int h_healthz(struct sc_req *r, struct sc_resp *w)
{
    const char *ro = sc_store_read_only(r->srv->store);
    w->content_type = "text/plain; charset=utf-8";
    if (ro)
        sc_buf_printf(&w->body, "degraded: %s; pushes are refused (507)\n", ro);
    else
        sc_buf_puts(&w->body, "ok\n");
    return 0;
}

static int h_metrics(struct sc_req *r, struct sc_resp *w)
{
    w->content_type = "text/plain; version=0.0.4; charset=utf-8";
    sc_metrics_render(r->srv, &w->body);
    if (r->srv->scraper)
        sc_scraper_metrics(r->srv->scraper, &w->body);
    if (r->srv->rules)
        sc_rules_metrics(r->srv->rules, &w->body);
    return 0;
}

/* The scrape targets' health (scrape.h has the shape); [] when nothing is scraped. */
static int h_targets(struct sc_req *r, struct sc_resp *w)
{
    if (r->srv->scraper)
        sc_scraper_targets_json(r->srv->scraper, &w->body);
    else
        sc_buf_puts(&w->body, "[]");
    return 0;
}

/* The UI: embedded files; unknown paths that look like UI routes get index.html. */
static int h_static(struct sc_req *r, struct sc_resp *w)
{
    const char *path = r->url;
    if (!strcmp(path, "/"))
        path = "/index.html";
    for (const struct sc_asset *a = sc_assets; a->path; a++) {
        if (!strcmp(a->path, path)) {
            w->content_type = a->mime;
            w->static_data = a->data;
            w->static_len = a->len;
            w->cache_control = "no-cache";
            return 0;
        }
    }
    return sc_resp_error(w, 404, "no such page '%.200s'", r->url);
}

static const char login_page[] =
    "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>scorch: token "
    "needed</title><style>body{font:15px system-ui,sans-serif;margin:4em auto;max-width:30em}"
    "input{font:inherit;width:100%;padding:.4em;margin:.5em 0}</style></head><body>"
    "<h1>scorch</h1><p>This server needs its access token.</p><form id=\"f\">"
    "<input id=\"t\" type=\"password\" autocomplete=\"current-password\" "
    "placeholder=\"token\" autofocus><button>Open</button></form><script>"
    "document.getElementById('f').onsubmit=function(e){e.preventDefault();"
    "var t=document.getElementById('t').value;try{localStorage.setItem('scorch_token',t)}"
    "catch(x){}document.cookie='scorch_token='+encodeURIComponent(t)+';path=/;"
    "SameSite=Strict';location.reload();};</script></body></html>\n";

static const struct route {
    const char *method, *path;
    sc_handler fn;
    int open;   /* no token needed */
    int query;  /* timed in the query latency histogram */
    int ingest; /* decodes a pushed body: admitted against the ingest budget */
} routes[] = {
    {"POST", "/ingest", sc_api_ingest, 0, 0, 1},
    {"POST", "/v1development/profiles", sc_api_otlp, 0, 0, 1},
    {"POST", "/push.v1.PusherService/Push", sc_api_push, 0, 0, 1},
    {"GET", "/api/v1/profile_types", sc_api_profile_types, 0, 1, 0},
    {"GET", "/api/v1/labels", sc_api_labels, 0, 1, 0},
    {"GET", "/api/v1/label_values", sc_api_label_values, 0, 1, 0},
    {"GET", "/api/v1/series", sc_api_series, 0, 1, 0},
    {"GET", "/api/v1/render", sc_api_render, 0, 1, 0},
    {"GET", "/api/v1/timeline", sc_api_timeline, 0, 1, 0},
    {"GET", "/api/v1/diff", sc_api_diff, 0, 1, 0},
    {"GET", "/api/v1/heatmap", sc_api_heatmap, 0, 1, 0},
    {"GET", "/api/v1/callgraph", sc_api_callgraph, 0, 1, 0},
    {"GET", "/api/v1/source", sc_api_source, 0, 1, 0},
    {"GET", "/api/v1/changes", sc_api_changes, 0, 1, 0},
    {"GET", "/api/v1/markers", sc_api_markers, 0, 1, 0},
    {"GET", "/api/v1/profiles", sc_api_profiles, 0, 1, 0},
    {"GET", "/api/v1/profile", sc_api_profile, 0, 1, 0},
    {"GET", "/api/v1/targets", h_targets, 0, 0, 0},
    {"GET", "/metrics", h_metrics, 1, 0, 0},
    {"GET", "/healthz", h_healthz, 1, 0, 0},
};

static enum MHD_Result send_resp(struct sc_server *srv, struct MHD_Connection *c, struct sc_resp *w)
{
    struct MHD_Response *resp;
    if (w->static_data) {
        resp = sym_MHD_create_response_from_buffer(w->static_len, (void *)w->static_data,
                                                   MHD_RESPMEM_PERSISTENT);
    } else {
        size_t len;
        char *data = sc_buf_detach(&w->body, &len);
        resp = sym_MHD_create_response_from_buffer(
            len, data ? data : (char *)"", data ? MHD_RESPMEM_MUST_FREE : MHD_RESPMEM_PERSISTENT);
        if (!resp)
            free(data);
    }
    if (!resp)
        return MHD_NO;
    sym_MHD_add_response_header(resp, "Content-Type",
                                w->content_type ? w->content_type : "application/json");
    if (w->cache_control)
        sym_MHD_add_response_header(resp, "Cache-Control", w->cache_control);
    if (w->allow)
        sym_MHD_add_response_header(resp, "Allow", w->allow);
    if (w->status == 503)
        sym_MHD_add_response_header(resp, "Retry-After", "1");
    sym_MHD_add_response_header(resp, "X-Content-Type-Options", "nosniff");
    /* a stopping server closes keep-alive connections after their answer */
    if (atomic_load(&srv->stopping))
        sym_MHD_add_response_header(resp, "Connection", "close");
    enum MHD_Result ret = sym_MHD_queue_response(c, w->status ? w->status : 200, resp);
    sym_MHD_destroy_response(resp);
    return ret;
}

static void count_error(struct sc_server *srv, const struct sc_resp *w)
{
    if (w->status < 400)
        return;
    int reason = w->reason ? w->reason - 1 : (int)reason_of(w->status);
    atomic_fetch_add(&srv->metrics.errors[reason], 1);
}

/* ---- memory admission ----
 * Bodies are buffered whole and a push is inflated and decoded whole, so memory grows with
 * the requests in flight, not only with one request's limits. Two budgets bound the total:
 * body bytes being received by all requests (max_body_total: a request that would pass it
 * is answered 503), and the worst-case memory of the pushes being decoded (ingest_budget:
 * a push waits for its share, up to ADMIT_WAIT_S, then 503). */

/* Counts n more body bytes of r against the in-flight total; 0 (and nothing counted) when
 * that would pass it. A refused charge never inflates the total, so requests receiving at
 * the same moment are not refused for each other's refusals. */
int sc_server_charge(struct sc_server *srv, uint64_t n)
{
    uint64_t cur = atomic_load(&srv->body_bytes);
    do {
        if (cur + n > srv->opts.max_body_total)
            return 0;
    } while (!atomic_compare_exchange_weak(&srv->body_bytes, &cur, cur + n));
    return 1;
}

void sc_server_uncharge(struct sc_server *srv, uint64_t n)
{
    atomic_fetch_sub(&srv->body_bytes, n);
}

static int charge(struct sc_req *r, size_t n)
{
    if (!sc_server_charge(r->srv, n))
        return 0;
    r->charged += n;
    return 1;
}

/* Takes what r buffered off the in-flight total (first: freeing takes a while) and frees it. */
static void release_bodies(struct sc_req *r)
{
    sc_server_uncharge(r->srv, r->charged);
    r->charged = 0;
    sc_buf_release(&r->body);
    sc_buf_release(&r->part_profile);
    sc_buf_release(&r->part_prev);
    sc_buf_release(&r->part_config);
    sc_buf_release(&r->part_labels);
}

/* What a gzip body inflates to, counted in steps without keeping the bytes, stopping past
 * max; corrupt or truncated data counts as far as it goes (the decoder refuses it later).
 * Knowing the real size costs one extra inflation (~1 ms for a typical 50 KB push, 0.1 s
 * for a bomb stopped at 64 MiB) and saves admitting every gzip body at DEFLATE's worst
 * ratio of 1032:1, which let only one 56 KB push decode at a time (8 clients pushed 21%
 * fewer per second than without a budget; at the real size, 2% fewer). */
static uint64_t gzip_size(const void *data, size_t len, uint64_t max)
{
    z_stream zs;
    memset(&zs, 0, sizeof zs);
    if (inflateInit2(&zs, 16 + MAX_WBITS) != Z_OK)
        return max + 1;
    unsigned char out[32768];
    uint64_t total = 0;
    zs.next_in = (Bytef *)data;
    zs.avail_in = (uInt)len; /* at most max_body */
    for (;;) {
        zs.next_out = out;
        zs.avail_out = sizeof out;
        int rc = inflate(&zs, Z_NO_FLUSH);
        total += sizeof out - zs.avail_out;
        if (total > max)
            break;
        if (rc == Z_STREAM_END && zs.avail_in >= 2 && zs.next_in[0] == 0x1f &&
            zs.next_in[1] == 0x8b) {
            inflateReset(&zs); /* the next member of a multi-member file */
            continue;
        }
        if (rc != Z_OK)
            break;
    }
    inflateEnd(&zs);
    return total;
}

/* Memory to decode a push's body, for the ingest budget: the body, plus DECODE_FACTOR
 * times the plain bytes (what a gzip body inflates to); a body that inflates past the limit
 * only costs the limit (the decoder refuses it after inflating that much). At most the
 * whole budget, so a big push runs alone instead of never. The factor is measured: a pprof
 * whose bytes are mostly location references (deep stacks) decodes into 4 bytes per byte,
 * plus the plain bytes it keeps (61 MB of them took 300 MB). claim NULL: a gzip body's
 * size is measured (one inflation); else its trailer's claim is taken when plausible and
 * stored there (0: measured). */
#define DECODE_FACTOR 5
static uint64_t ingest_cost(const struct sc_server *srv, const void *data, size_t len,
                            uint64_t *claim)
{
    const struct sc_server_opts *o = &srv->opts;
    uint64_t cost = len + DECODE_FACTOR * (uint64_t)len;
    if (claim)
        *claim = 0;
    if (data && sc_is_gzip(data, len)) {
        /* the trailer's ISIZE saves inflating the body twice (gzip_size was a third of a
         * push's CPU); the decoder is held to it, so a trailer that lies costs a second
         * admission, not the budget */
        uint64_t isize = claim ? sc_gzip_claim(data, len) : 0;
        int plausible = isize && isize <= o->limits.max_decompressed;
        uint64_t out = plausible ? isize : gzip_size(data, len, o->limits.max_decompressed);
        if (plausible)
            *claim = isize;
        cost = out > o->limits.max_decompressed ? len + o->limits.max_decompressed
                                                : len + DECODE_FACTOR * out;
    }
    return cost < o->ingest_budget ? cost : o->ingest_budget;
}

/* Waits until cost fits in the ingest budget or nothing else is admitted; non-zero after
 * ADMIT_WAIT_S seconds. */
int sc_server_admit(struct sc_server *srv, uint64_t cost)
{
    struct timespec until;
    sc_deadline(&until, ADMIT_WAIT_S * SC_NS_PER_S);
    int rc = 0;
    pthread_mutex_lock(&srv->admit_mu);
    while (rc == 0 && srv->admitted && srv->admitted + cost > srv->opts.ingest_budget)
        rc = pthread_cond_timedwait(&srv->admit_cv, &srv->admit_mu, &until);
    if (rc == 0)
        srv->admitted += cost;
    pthread_mutex_unlock(&srv->admit_mu);
    return rc;
}

void sc_server_unadmit(struct sc_server *srv, uint64_t cost)
{
    pthread_mutex_lock(&srv->admit_mu);
    srv->admitted -= cost;
    pthread_cond_broadcast(&srv->admit_cv);
    pthread_mutex_unlock(&srv->admit_mu);
}

int sc_server_push(struct sc_server *srv, const void *data, size_t len,
                   int (*run)(void *ctx, uint64_t claim), void *ctx, uint64_t *cost)
{
    uint64_t claim;
    *cost = ingest_cost(srv, data, len, &claim);
    if (sc_server_admit(srv, *cost))
        return -1;
    int over = run(ctx, claim);
    sc_server_unadmit(srv, *cost);
    if (over && claim) {
        /* the trailer claimed less than the body holds; nothing was stored: measured */
        *cost = ingest_cost(srv, data, len, NULL);
        if (sc_server_admit(srv, *cost))
            return -1;
        run(ctx, 0);
        sc_server_unadmit(srv, *cost);
    }
    sc_server_trim(*cost);
    return 0;
}

/* A push route's handler as sc_server_push runs it: the claim is the request's. */
struct route_push {
    const struct route *rt;
    struct sc_req *r;
    struct sc_resp *w;
};

static int run_route(void *ctx, uint64_t claim)
{
    struct route_push *x = ctx;
    x->r->gzip_claim = claim;
    x->r->over_claim = 0;
    x->rt->fn(x->r, x->w);
    return x->r->over_claim;
}

static void busy_push(struct sc_resp *w, uint64_t cost)
{
    sc_resp_error(w, 503,
                  "server busy: waited %d s for memory to decode a push "
                  "(it needs about %llu bytes); retry later",
                  ADMIT_WAIT_S, (unsigned long long)cost);
}

/* r's push through its route's handler, under the ingest budget. */
static void push_route(const struct route *rt, struct sc_req *r, struct sc_resp *w)
{
    const struct sc_buf *b = r->pp ? &r->part_profile : &r->body;
    struct route_push x = {rt, r, w};
    uint64_t cost;
    if (sc_server_push(r->srv, b->data, b->len, run_route, &x, &cost))
        busy_push(w, cost);
}

/* Collects multipart parts: profile, prev_profile, sample_type_config (Pyroscope), and a
 * JFR push's jfr and labels (Pyroscope's Java agent; the recording takes the profile's
 * place). */
static enum MHD_Result on_part(void *cls, enum MHD_ValueKind kind, const char *key,
                               const char *filename, const char *content_type,
                               const char *transfer_encoding, const char *data, uint64_t off,
                               size_t size)
{
    (void)kind, (void)filename, (void)content_type, (void)transfer_encoding;
    struct sc_req *r = cls;
    int jfr = !strcmp(key, "jfr");
    struct sc_buf *b = !strcmp(key, "profile") || jfr       ? &r->part_profile
                       : !strcmp(key, "prev_profile")       ? &r->part_prev
                       : !strcmp(key, "sample_type_config") ? &r->part_config
                       : !strcmp(key, "labels")             ? &r->part_labels
                                                            : NULL;
    if (!b || r->body_state)
        return MHD_YES;
    if (b == &r->part_profile && off == 0 && b->len && jfr != r->part_jfr) {
        r->body_state = BODY_BAD_MULTIPART; /* both a profile and a jfr part */
        release_bodies(r);
        return MHD_YES;
    }
    if (jfr)
        r->part_jfr = 1;
    if (b->len + size > r->srv->opts.max_body)
        r->body_state = BODY_TOO_LARGE;
    else if (!charge(r, size))
        r->body_state = BODY_BUSY;
    else if (sc_buf_append(b, data, size), b->oom)
        r->body_state = BODY_OOM;
    if (r->body_state)
        release_bodies(r);
    return MHD_YES;
}

/* Checks what the request line and headers decide: the route (404, 405), the token and the
 * tenant it may act for (401, 403, 400: auth.c), the declared body size (413). Runs before
 * any of the body is read, so a request refused here costs no memory or body budget. Sets
 * r->route (-1: the UI's static files) and r->tenant; non-zero with w filled when refused. */
static int check_head(struct sc_req *r, struct sc_resp *w)
{
    const struct route *rt = NULL;
    int path_match = 0;
    for (size_t i = 0; i < sizeof routes / sizeof routes[0]; i++) {
        if (strcmp(routes[i].path, r->url))
            continue;
        path_match = 1;
        w->allow = routes[i].method;
        if (!strcmp(routes[i].method, r->method)) {
            rt = &routes[i];
            r->route = (int)i;
        }
    }
    int is_static =
        !rt && !path_match && !strcmp(r->method, "GET") && strncmp(r->url, "/api/", 5) != 0;
    if (!rt && path_match) {
        sc_resp_error(w, 405, "method %.16s not allowed on %s", r->method, r->url);
        return -1;
    }
    w->allow = NULL;
    if (!rt && !is_static) {
        sc_resp_error(w, 404, "no such endpoint '%.200s'", r->url);
        return -1;
    }
    struct sc_auth_in in = {
        sym_MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, "Authorization"),
        sym_MHD_lookup_connection_value(r->conn, MHD_COOKIE_KIND, "scorch_token"),
        sym_MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, "X-Scope-OrgID"),
        /* the scrape targets are the server's, not a tenant's */
        rt && rt->fn == h_targets ? "the scrape targets" : NULL};
    char why[SC_ERR_LEN];
    int st = rt && rt->open ? 0 : sc_server_auth(&r->srv->opts, &in, r->tenant, why);
    if (st) {
        sc_resp_error(w, (unsigned)st, "%s", why);
        if (st == 401 && is_static) {
            /* a browser opening the UI gets a page that asks for the token (and keeps it
             * in the cookie the UI sends), still with the 401 status */
            w->body.len = 0;
            sc_buf_puts(&w->body, login_page);
            w->content_type = "text/html; charset=utf-8";
        }
        return -1;
    }
    const char *cl = sym_MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, "Content-Length");
    if (cl && strtoull(cl, NULL, 10) > r->srv->opts.max_body) {
        sc_resp_error(w, 413, "request body of %.32s bytes is more than the limit of %llu", cl,
                      (unsigned long long)r->srv->opts.max_body);
        return -1;
    }
    return 0;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
                                  const char *method, const char *version, const char *data,
                                  size_t *size, void **ctx)
{
    (void)version;
    struct sc_server *srv = cls;
    struct sc_req *r = *ctx;
    if (!r) {
        r = calloc(1, sizeof *r);
        if (!r)
            return MHD_NO;
        r->srv = srv;
        r->conn = c;
        r->method = method;
        r->url = url;
        r->t0 = sc_server_now();
        r->route = -1;
        *ctx = r;
        atomic_fetch_add(&srv->inflight, 1);
        atomic_fetch_add(&srv->metrics.requests, 1);
        struct sc_resp w = {0};
        if (atomic_load(&srv->stopping)) {
            /* a request begun after SIGTERM, often on a kept-alive connection: refused
             * before its body, so nothing of it is stored and a retry elsewhere is safe */
            sc_resp_error(&w, 503, "server is shutting down; retry later");
        }
        if (w.status || check_head(r, &w)) {
            count_error(srv, &w);
            r->body_state = BODY_ANSWERED;
            return send_resp(srv, c, &w);
        }
        const char *ct = sym_MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Content-Type");
        if (!strcmp(method, "POST") && ct && !strncasecmp(ct, "multipart/form-data", 19)) {
            r->pp = sym_MHD_create_post_processor(c, 65536, on_part, r);
            if (!r->pp) {
                sc_resp_error(&w, 400, "bad multipart/form-data request (no boundary?)");
                count_error(srv, &w);
                r->body_state = BODY_ANSWERED;
                return send_resp(srv, c, &w);
            }
        }
        return MHD_YES;
    }
    if (*size) {
        if (r->body_state) {
            *size = 0; /* keep reading, keep nothing */
            return MHD_YES;
        }
        if (r->pp) {
            if (sym_MHD_post_process(r->pp, data, *size) != MHD_YES && !r->body_state)
                r->body_state = BODY_BAD_MULTIPART;
        } else if (r->body.len + *size > srv->opts.max_body) {
            r->body_state = BODY_TOO_LARGE;
        } else if (!charge(r, *size)) {
            r->body_state = BODY_BUSY;
        } else if (sc_buf_append(&r->body, data, *size), r->body.oom) {
            r->body_state = BODY_OOM;
        }
        if (r->body_state)
            release_bodies(r);
        *size = 0;
        return MHD_YES;
    }
    if (r->body_state == BODY_ANSWERED)
        return MHD_YES;
    struct sc_resp w = {0};
    if (r->body_state == BODY_TOO_LARGE) {
        sc_resp_error(&w, 413, "request body is more than the limit of %llu bytes",
                      (unsigned long long)srv->opts.max_body);
    } else if (r->body_state == BODY_BUSY) {
        sc_resp_error(&w, 503, "server busy: more than %llu bytes of request bodies in flight",
                      (unsigned long long)srv->opts.max_body_total);
    } else if (r->body_state == BODY_OOM) {
        sc_resp_error(&w, 503, "out of memory receiving the request body");
    } else if (r->body_state == BODY_BAD_MULTIPART) {
        sc_resp_error(&w, 400, "bad or truncated multipart/form-data body");
    } else {
        const struct route *rt = r->route >= 0 ? &routes[r->route] : NULL;
        /* counted before closing is read (the drain's end sets closing, then waits for
         * committing to reach 0): a push either starts before the end and is answered,
         * or is refused here and stores nothing */
        if (rt && rt->ingest) {
            r->committing = 1;
            atomic_fetch_add(&srv->committing, 1);
        }
        if (atomic_load(&srv->closing)) {
            sc_resp_error(&w, 503, "server is shutting down; retry later");
        } else if (rt && rt->ingest) {
            push_route(rt, r, &w);
        } else if (rt) {
            rt->fn(r, &w);
            if (rt->query)
                sc_metrics_observe(&srv->metrics.query, sc_server_now() - r->t0);
        } else {
            h_static(r, &w);
        }
    }
    if (!w.status)
        w.status = 200;
    count_error(srv, &w);
    return send_resp(srv, c, &w);
}

static void on_completed(void *cls, struct MHD_Connection *c, void **ctx,
                         enum MHD_RequestTerminationCode toe)
{
    (void)c, (void)toe;
    struct sc_req *r = *ctx;
    if (!r)
        return;
    if (r->pp)
        sym_MHD_destroy_post_processor(r->pp);
    release_bodies(r);
    if (r->committing)
        atomic_fetch_sub(&((struct sc_server *)cls)->committing, 1);
    free(r);
    *ctx = NULL;
    atomic_fetch_sub(&((struct sc_server *)cls)->inflight, 1);
}

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, ms % 1000 * 1000000L};
    nanosleep(&ts, NULL);
}

/* Says on stderr when the store's background work (compaction, retention, reopening for
 * writing) hit an error since the last time: at most once a minute, with the count, since
 * each is tried again on its next round and a lasting one would say so every few seconds. */
static void log_store_errors(struct sc_store *store, uint64_t *logged, int64_t *logged_at)
{
    char why[SC_ERR_LEN];
    uint64_t n = sc_store_bg_errors(store, why, sizeof why);
    int64_t now = sc_mono_ns();
    if (n == *logged || (*logged && now - *logged_at < 60 * SC_NS_PER_S))
        return;
    fprintf(stderr, "scorch: the store's background work hit an error (%llu so far): %s\n",
            (unsigned long long)n, why);
    fflush(stderr);
    *logged = n;
    *logged_at = now;
}

/* SIGTERM: new connections are refused at once (the listening socket is shut down), new
 * requests on open ones get 503 with Connection: close, the gRPC listener stops as it does;
 * requests begun before go on, for up
 * to shutdown_timeout. Then no handler starts (503), pushes already in one are waited for
 * (bounded by their limits) and answered, and what is left (uploads still arriving, queries
 * still running) is closed: none of it was stored, so a retry does not duplicate. */
static void drain(struct sc_server *srv)
{
    atomic_store(&srv->stopping, 1);
    MHD_socket ls = sym_MHD_quiesce_daemon(srv->daemon);
    /* the socket is closed after MHD_stop_daemon, as libmicrohttpd asks */
    if (ls != MHD_INVALID_SOCKET)
        shutdown(ls, SHUT_RDWR);
    /* the bound starts at SIGTERM: HTTP requests go on while gRPC stops */
    double deadline = sc_server_now() + (double)srv->opts.shutdown_timeout_ns / 1e9;
    /* the OTLP/gRPC listener meanwhile: it answers the streams it holds, sends GOAWAY and
     * closes (each connection lingering up to 1 s, at once), rather than take new pushes
     * while HTTP drains */
    sc_grpc_stop(srv->grpc);
    srv->grpc = NULL;
    while (atomic_load(&srv->inflight) > 0 && sc_server_now() < deadline)
        sleep_ms(5);
    atomic_store(&srv->closing, 1);
    while (atomic_load(&srv->committing) > 0)
        sleep_ms(5);
    if (atomic_load(&srv->inflight) > 0)
        fprintf(stderr, "scorch: closing %u requests still in flight (no push among them)\n",
                (unsigned)atomic_load(&srv->inflight));
    sym_MHD_stop_daemon(srv->daemon);
    srv->daemon = NULL;
    if (ls != MHD_INVALID_SOCKET)
        close(ls);
}

/* Scrapes cfg's jobs into the store from now on. Handlers see srv->scraper NULL or
 * started. 0 or SC_E*. */
static int start_scraper(struct sc_server *srv, const struct sc_config *cfg, char *err)
{
    sc_scrape_raise_fd_limit();
    struct sc_scraper *s = NULL;
    int rc = sc_scraper_new(cfg, sc_scrape_store_sink, srv->store, &s, err);
    if (!rc && (rc = sc_scraper_start(s, err)))
        sc_scraper_stop_free(s);
    if (!rc)
        srv->scraper = s;
    return rc;
}

static int rules_admit(void *ctx)
{
    return sc_server_query_slot(ctx);
}

static void rules_unadmit(void *ctx)
{
    sc_server_query_unslot(ctx);
}

/* The config's rules: evaluated from now on, as heavy queries of this server; their links
 * point at this server (alerting.external_url otherwise). 0 or SC_E*. */
static int start_rules(struct sc_server *srv, const struct sc_config *cfg,
                       const struct sockaddr_in *sa, char *err)
{
    const union MHD_DaemonInfo *di =
        sym_MHD_get_daemon_info(srv->daemon, MHD_DAEMON_INFO_BIND_PORT);
    char host[256];
    inet_ntop(AF_INET, &sa->sin_addr, host, sizeof host);
    /* a link to 0.0.0.0 leads nowhere: the machine's name does */
    if (!strcmp(host, "0.0.0.0") && gethostname(host, sizeof host))
        snprintf(host, sizeof host, "localhost");
    host[sizeof host - 1] = 0;
    char url[400];
    snprintf(url, sizeof url, "http%s://%s:%u", srv->tls.on ? "s" : "", host,
             di ? (unsigned)di->port : (unsigned)ntohs(sa->sin_port));
    struct sc_rules_env env = {
        srv->store,    url, srv->opts.query_memory, srv->opts.query_timeout_ns, rules_admit,
        rules_unadmit, srv};
    int rc = sc_rules_new(cfg, &env, &srv->rules, err);
    if (!rc)
        rc = sc_rules_start(srv->rules, err);
    return rc;
}

/* SIGHUP: reads the config file again and applies its scrape_configs. Targets that stay
 * keep their delta baselines and schedule (sc_scraper_reload); a bad file changes nothing.
 * The other settings (listen, storage, auth) take a restart. */
static void reload_config(struct sc_server *srv)
{
    const char *path = srv->opts.config_path;
    if (!path) {
        fprintf(stderr, "scorch: reload: no --config to read again\n");
        return;
    }
    char err[SC_ERR_LEN] = "";
    struct sc_config cf;
    if (sc_config_load(path, &cf, err)) {
        fprintf(stderr, "scorch: reload: %s; keeping the running config\n", err);
        sc_config_release(&cf);
        return;
    }
    int rc = 0;
    if (srv->scraper)
        rc = sc_scraper_reload(srv->scraper, &cf, err);
    else if (cf.njobs)
        rc = start_scraper(srv, &cf, err);
    if (rc)
        fprintf(stderr, "scorch: reload: %s; keeping the running config\n", err);
    else
        fprintf(stderr, "scorch: reloaded '%s': %u scrape jobs\n", path, (unsigned)cf.njobs);
    if (!rc && (cf.nrules || srv->rules))
        fprintf(stderr, "scorch: reload: rules: and alerting: stay as they were at start (a "
                        "change of them takes a restart)\n");
    fflush(stderr);
    sc_config_release(&cf);
}

int sc_server_run(const struct sc_server_opts *o, volatile sig_atomic_t *stop, char *err)
{
    struct sc_server *srv = calloc(1, sizeof *srv);
    if (!srv)
        return sc_errf(err, SC_ENOMEM, "out of memory");
    srv->opts = *o;
    /* a push older than the store keeps would be acknowledged, then deleted */
    if (o->retention_ns > 0 && (!o->limits.max_age_ns || o->limits.max_age_ns > o->retention_ns))
        srv->opts.limits.max_age_ns = o->retention_ns;
    srv->stop = stop;
    ssize_t en = readlink("/proc/self/exe", srv->exe, sizeof srv->exe - 1);
    srv->exe[en > 0 ? en : 0] = 0;
    pthread_mutex_init(&srv->stats_mu, NULL);
    pthread_mutex_init(&srv->admit_mu, NULL);
    sc_cond_init(&srv->admit_cv);
    pthread_mutex_init(&srv->query_mu, NULL);
    sc_cond_init(&srv->query_cv);
    struct sockaddr_in sa;
    int rc = sc_dl_load(SC_DL_MHD, err);
    if (!rc)
        rc = sc_parse_listen(o->listen, &sa, err);
    if (!rc)
        rc = sc_server_tls_load(o, &srv->tls, err);
    if (!rc) {
        struct sc_store_opts so;
        sc_store_opts_init(&so);
        if (o->store)
            so = *o->store;
        so.dir = o->data_dir;
        so.retention_ns = o->retention_ns;
        so.max_read_blocks = o->max_read_blocks;
        so.max_read_rows = o->max_read_rows;
        so.durable = o->durable;
        so.read_only_when_full = 1;
        rc = sc_store_open(&so, &srv->store, err);
    }
    int ro = !rc && sc_store_read_only(srv->store);
    if (ro)
        fprintf(stderr, "scorch: %s; serving what is stored, pushes are refused (507)\n",
                sc_store_read_only(srv->store));
    if (!rc && o->config && o->config->njobs) {
        rc = start_scraper(srv, o->config, err);
    }
    /* record: the host's own samples, written like a scrape (a reload does not change it) */
    if (!rc && o->config && o->config->record)
        rc = sc_record_bg_from_config(o->config, sc_scrape_store_sink, srv->store, &srv->recorder,
                                      err);
    if (!rc) {
        /* a thread per connection: handlers block on fsync'd commits and long merges
         * without holding up other connections */
        srv->daemon = sym_MHD_start_daemon(
            MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ITC |
                (srv->tls.on ? MHD_USE_TLS : 0),
            0, NULL, NULL, on_request, srv, MHD_OPTION_ARRAY, srv->tls.opts, /* empty: TLS off */
            MHD_OPTION_SOCK_ADDR, &sa, MHD_OPTION_NOTIFY_COMPLETED, on_completed, srv,
            MHD_OPTION_CONNECTION_LIMIT, (unsigned)o->max_connections,
            /* room for long query strings (a Pyroscope name with many labels): longer
             * request heads get libmicrohttpd's own 414/431 */
            MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)256 * 1024, MHD_OPTION_CONNECTION_TIMEOUT,
            (unsigned)120, MHD_OPTION_LISTENING_ADDRESS_REUSE, (unsigned)1, MHD_OPTION_END);
        /* the certificate and key were checked as a pair already (tls.c) */
        if (!srv->daemon)
            rc =
                sc_errf(err, SC_EIO, "cannot listen on %s%s: %s", o->listen,
                        srv->tls.on ? " (HTTPS)" : "", errno ? strerror(errno) : "address in use?");
    }
    if (!rc && o->grpc_listen) {
        struct sockaddr_in ga;
        rc = sc_parse_listen(o->grpc_listen, &ga, err);
        if (!rc)
            rc = sc_grpc_start(srv, &ga, &srv->grpc, err);
        if (!rc) {
            char host[INET_ADDRSTRLEN];
            inet_ntop(AF_INET, &ga.sin_addr, host, sizeof host);
            fprintf(stderr, "scorch: OTLP/gRPC on %s:%u (%s)\n", host, sc_grpc_port(srv->grpc),
                    srv->tls.on ? "TLS, ALPN h2" : "h2c");
        }
    }
    if (!rc && o->config && o->config->nrules)
        rc = start_rules(srv, o->config, &sa, err);
    if (!rc) {
        /* the real port when :0 asked for any */
        const union MHD_DaemonInfo *di =
            sym_MHD_get_daemon_info(srv->daemon, MHD_DAEMON_INFO_BIND_PORT);
        char host[INET_ADDRSTRLEN];
        inet_ntop(AF_INET, &sa.sin_addr, host, sizeof host);
        int ch = o->store && o->store->engine && !strcmp(o->store->engine, "clickhouse");
        fprintf(stderr, "scorch: listening on http%s://%s:%u (%s %s)\n", srv->tls.on ? "s" : "",
                host, di ? (unsigned)di->port : (unsigned)ntohs(sa.sin_port),
                ch ? "clickhouse at" : "data in", ch ? o->store->url : o->data_dir);
        fflush(stderr);
        uint64_t bg_logged = 0;
        int64_t bg_logged_at = 0;
        while (!*stop) {
            struct timespec ts = {0, 100 * 1000000L};
            nanosleep(&ts, NULL);
            if (o->reload && *o->reload) {
                *o->reload = 0;
                reload_config(srv);
            }
            log_store_errors(srv->store, &bg_logged, &bg_logged_at);
            /* the store turns writable by itself (sq_reopen): said once, when it does */
            if (ro && !sc_store_read_only(srv->store)) {
                ro = 0;
                fprintf(stderr, "scorch: the store's disk has room again: the store is "
                                "writable, pushes are accepted\n");
                fflush(stderr);
            }
        }
        fprintf(stderr, "scorch: shutting down\n");
        drain(srv);
    }
    /* before the store (the drain has stopped it already unless start failed): gRPC requests
     * in flight are stored and answered */
    sc_grpc_stop(srv->grpc);
    if (srv->daemon && rc)
        sym_MHD_stop_daemon(srv->daemon);
    /* before the store: profiles already scraped (and the last recorded window) are
     * handed to it as the scraper and the recorder stop */
    sc_rules_stop_free(srv->rules);
    sc_record_bg_stop(srv->recorder);
    sc_scraper_stop_free(srv->scraper);
    sc_store_close(srv->store);
    sc_server_tls_release(&srv->tls);
    pthread_mutex_destroy(&srv->stats_mu);
    pthread_mutex_destroy(&srv->admit_mu);
    pthread_cond_destroy(&srv->admit_cv);
    free(srv);
    return rc;
}
