/* server_int.h - what the server's files share: requests, responses, routes, metrics. */
#ifndef SC_SERVER_INT_H
#define SC_SERVER_INT_H

#include <pthread.h>
#include <stdatomic.h>

#include "model/buf.h"
#include "model/dl_gnutls.h"
#include "model/dl_mhd.h"
#include "model/setting.h"
#include "server/server.h"
#include "store/store.h"

struct sc_server;
struct sc_scraper;
struct sc_grpc;

/* One request, from first byte to response. */
struct sc_req {
    struct sc_server *srv;
    struct MHD_Connection *conn;
    const char *method, *url;
    char tenant[SC_TENANT_MAX + 1];
    struct sc_buf body; /* the raw body (not multipart) */
    int body_state;     /* BODY_* in server.c: why the body is being discarded */
    uint64_t charged;   /* body bytes counted in the server's in-flight total */
    int committing;     /* counted in the server's committing (a push's handler) */
    struct MHD_PostProcessor *pp;
    struct sc_buf part_profile, part_prev, part_config; /* multipart parts */
    struct sc_buf part_labels;                          /* a JFR push's labels part */
    int part_jfr; /* part_profile came as a `jfr` part (Pyroscope's Java agent) */
    int route;    /* index into the route table; -1: the UI's files */
    double t0;
    /* a push route's run under sc_server_push: the size its gzip body was admitted at (the
     * handler passes it on as gzip_claim; 0: measured), and whether it inflated past it */
    uint64_t gzip_claim;
    int over_claim;
};

struct sc_resp {
    unsigned status;
    const char *content_type;
    struct sc_buf body;
    const unsigned char *static_data; /* instead of body: an embedded asset */
    size_t static_len;
    const char *cache_control;
    const char *allow; /* the Allow header of a 405 */
    int reason;        /* SC_REASON_* + 1 for the error metrics; 0: from the status */
};

/* Query string argument, NULL when absent. */
const char *sc_req_arg(const struct sc_req *r, const char *name);

/* Sets a JSON error {"error": msg} with status; returns 0 so handlers can `return`. */
int sc_resp_error(struct sc_resp *w, unsigned status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Maps an SC_E* code to an HTTP status (EINVAL/EFORMAT 400, ELIMIT 413, ENOTFOUND 404,
 * EUNSUPPORTED 415, EAUTH 401, EUNAVAIL 503 with Retry-After, others 500) and sets the error; the
 * error metrics count it by the code (a bad body is "format", a bad parameter "bad_request"). */
int sc_resp_code(struct sc_resp *w, int code, const char *msg);
/* A query parameter past one of the server's limits (range, maxNodes, steps...): 400,
 * counted as "limit". */
int sc_resp_limit(struct sc_resp *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* ---- metrics ---- */

#define SC_METRIC_BUCKETS 12
struct sc_histogram {
    _Atomic uint64_t buckets[SC_METRIC_BUCKETS]; /* cumulative at render time */
    _Atomic uint64_t count;
    _Atomic uint64_t sum_us;
};

enum sc_err_reason {
    SC_REASON_BAD_REQUEST,
    SC_REASON_FORMAT,
    SC_REASON_LIMIT,
    SC_REASON_AUTH,
    SC_REASON_UNSUPPORTED,
    SC_REASON_INTERNAL,
    SC_REASON_NOT_FOUND,
    SC_REASON_BUSY,
    SC_REASON_STORAGE,
    SC_NREASONS
};

struct sc_metrics {
    _Atomic uint64_t ingest_ok, ingest_bytes, ingest_samples;
    _Atomic uint64_t errors[SC_NREASONS];
    _Atomic uint64_t requests;
    struct sc_histogram query, ingest;
    _Atomic int64_t query_memory_peak; /* the most one heavy query held (model/budget.h) */
    _Atomic uint64_t query_stopped[3]; /* heavy queries stopped, by SC_BUDGET_TIME/GONE */
};

void sc_metrics_observe(struct sc_histogram *h, double seconds);
/* A heavy query held peak bytes at most; stopped: 0, or why its budget stopped it. */
void sc_metrics_query_end(struct sc_metrics *m, int64_t peak, int stopped);
void sc_metrics_render(struct sc_server *srv, struct sc_buf *out);

/* ---- the server ---- */

/* The server's TLS (tls.c), read once at start for both listeners: the PEM files' text and
 * the options that give it to libmicrohttpd (HTTPS), and the same pair as GnuTLS
 * credentials for the OTLP/gRPC listener's sessions (grpc.c). */
struct sc_server_tls {
    int on;
    char *cert, *key;
    struct MHD_OptionItem opts[3];
    gnutls_certificate_credentials_t cred;
    gnutls_priority_t prio;
};
/* Reads opts' tls_cert and tls_key (neither: TLS off, 0); SC_E* naming the file when one
 * cannot be read, is not PEM, or the key is not the certificate's. */
int sc_server_tls_load(const struct sc_server_opts *o, struct sc_server_tls *t, char *err);
/* A server session with t's certificate and priorities on the socket fd (non-blocking: the
 * caller drives the handshake); 0 or SC_ENOMEM. */
int sc_server_tls_session(const struct sc_server_tls *t, int fd, gnutls_session_t *out);
void sc_server_tls_release(struct sc_server_tls *t);

struct sc_server {
    struct sc_server_opts opts;
    struct sc_store *store;
    struct sc_scraper *_Atomic scraper; /* NULL until a config has scrape_configs (a
                                           reload may start one while handlers run) */
    struct sc_record_bg *recorder;      /* the config's record: (set before serving) */
    struct sc_rules *rules;             /* the config's rules: (set before serving) */
    struct sc_metrics metrics;
    struct MHD_Daemon *daemon;
    struct sc_server_tls tls; /* HTTPS when tls.on */
    struct sc_grpc *grpc;     /* the OTLP/gRPC listener (grpc.c), NULL when not configured */
    /* store statistics are costly: refreshed at most every few seconds */
    pthread_mutex_t stats_mu;
    struct sc_store_stats stats;
    double stats_at;
    /* memory admission (server.c): body bytes being received by all requests, and the
     * worst-case bytes of the ingests being decoded */
    _Atomic uint64_t body_bytes;
    _Atomic uint32_t inflight; /* requests begun and not completed (graceful shutdown) */
    /* the drain (server.c): stopping from SIGTERM on (new requests 503), closing from the
     * end of shutdown_timeout on (no handler starts); committing: pushes in their handler */
    _Atomic int stopping, closing;
    _Atomic uint32_t committing;
    pthread_mutex_t admit_mu;
    pthread_cond_t admit_cv;
    uint64_t admitted;
    /* heavy queries (merges, diffs, heatmaps, call graphs) running, at most
     * opts.max_queries: each is bounded (its read budget, its rows), so together they are */
    pthread_mutex_t query_mu;
    pthread_cond_t query_cv;
    uint32_t queries;
    /* call graph layouts: each in a worker process (query/layout.h), a few at a time */
    char exe[4096];              /* this binary, for the workers; "" lays out in-process */
    _Atomic uint32_t layouts;    /* workers running */
    volatile sig_atomic_t *stop; /* set when the server stops: workers are killed */
};

typedef int (*sc_handler)(struct sc_req *r, struct sc_resp *w);

/* Handlers (api.c). */
/* Helpers for the query handlers (api.c), so every handler reads a selection and answers a
 * failure the same way. */
struct sc_selection;
struct sc_profile;
struct sc_filter_opts;
/* Reads query/from/until (prefixed, e.g. "base_", falling back to the plain names) and type
 * (required when need_type) and finds the series. Non-zero with w answered on failure;
 * release s in any case. */
int sc_api_selection(struct sc_req *r, struct sc_resp *w, const char *prefix, int need_type,
                     struct sc_selection *s);
/* The same with the range set to range[0]..range[1] (ns) after the parameters are read. */
int sc_api_selection_in(struct sc_req *r, struct sc_resp *w, const char *prefix, int need_type,
                        const int64_t *range, struct sc_selection *s);
/* The request's focus/ignore/hide/show. */
struct sc_filter_opts sc_api_filters(struct sc_req *r);
/* The selection merged with the request's filters; NULL with w answered on failure. */
struct sc_profile *sc_api_merged(struct sc_req *r, struct sc_resp *w, const struct sc_selection *s);
/* The request's parameter of settings.def's row id, read by the row (its default when
 * absent; *out zeroed when it has none): 0, or -1 with w answered 400 "'param' must be
 * ..., not 'x'". */
int sc_api_setting(struct sc_req *r, struct sc_resp *w, enum sc_set_id id,
                   struct sc_set_value *out);
/* Admission of a heavy query: waits up to a few seconds for one of opts.max_queries slots;
 * non-zero with w answered (503 busy) when none came free. sc_api_query_end after. */
int sc_api_query_begin(struct sc_req *r, struct sc_resp *w);
void sc_api_query_end(struct sc_req *r);
/* The same slot for work of the server's own (the rules' evaluations): 0 when one came
 * free within the same wait, else -1. sc_server_query_unslot after. */
int sc_server_query_slot(struct sc_server *srv);
void sc_server_query_unslot(struct sc_server *srv);
/* Runs a heavy query's handler admitted (sc_api_query_begin) and under its memory and time
 * budget (server.query_memory, server.query_timeout; model/budget.h): every heavy route
 * goes through it. */
int sc_api_admitted(struct sc_req *r, struct sc_resp *w, sc_handler run);
/* The request's `step` (0 when absent) and `q` (*level untouched when absent), read by
 * their rows: 0, or -1 with w answered 400. */
int sc_api_step(struct sc_req *r, struct sc_resp *w, int64_t *step);
int sc_api_level(struct sc_req *r, struct sc_resp *w, double *level);
/* Answers a failed query: SC_ELIMIT is 400 naming the limit, the rest as sc_resp_code. */
int sc_api_query_fail(struct sc_resp *w, int rc, const char *err);

int sc_api_ingest(struct sc_req *r, struct sc_resp *w);
int sc_api_profile_types(struct sc_req *r, struct sc_resp *w);
int sc_api_labels(struct sc_req *r, struct sc_resp *w);
int sc_api_label_values(struct sc_req *r, struct sc_resp *w);
int sc_api_series(struct sc_req *r, struct sc_resp *w);
int sc_api_render(struct sc_req *r, struct sc_resp *w);
int sc_api_timeline(struct sc_req *r, struct sc_resp *w);
int sc_api_diff(struct sc_req *r, struct sc_resp *w);
int sc_api_heatmap(struct sc_req *r, struct sc_resp *w);
int sc_api_callgraph(struct sc_req *r, struct sc_resp *w);
int sc_api_source(struct sc_req *r, struct sc_resp *w);
/* Handlers (api_watch.c): what changed over time. */
int sc_api_changes(struct sc_req *r, struct sc_resp *w);
int sc_api_markers(struct sc_req *r, struct sc_resp *w);
/* Handlers (api_otlp.c). */
int sc_api_otlp(struct sc_req *r, struct sc_resp *w);
int sc_api_push(struct sc_req *r, struct sc_resp *w);

/* ---- shared by the handler files ---- */

/* Handlers (api_views.c): stored profiles one by one. */
int sc_api_profiles(struct sc_req *r, struct sc_resp *w);
int sc_api_profile(struct sc_req *r, struct sc_resp *w);

double sc_server_now(void);
/* After a request that held about bytes and freed them: past a few tens of MiB, gives the
 * freed heap back to the system (glibc keeps it otherwise, and RSS would stay at the
 * largest request's for good). */
void sc_server_trim(uint64_t bytes);

/* What the HTTP server and the gRPC listener (grpc.c) share (server.c): */
/* What a request says about who it is (auth.c). NULL: absent. */
struct sc_auth_in {
    const char *authorization; /* the Authorization header (metadata) value */
    const char *cookie;        /* the UI's scorch_token cookie */
    const char *orgid;         /* X-Scope-OrgID */
    const char *server_wide;   /* non-NULL for a route that is the server's rather than a
                                  tenant's: what it shows ("the scrape targets") */
};
/* Whether a token is configured (the server's or a tenant's). */
int sc_server_auth_on(const struct sc_server_opts *o);
/* Constant-time equality of a (the client's credential) and b (a configured token, lb > 0
 * bytes; 0 when lb is 0): no branch or address depends on either's bytes, so the time
 * depends on the lengths only, not on where they differ (tests/unit/test_ct.c checks that
 * under valgrind). */
int sc_auth_token_equal(const char *a, size_t la, const char *b, size_t lb);
/* Authenticates a request and sets the tenant it acts for (SC_TENANT_MAX + 1 bytes): 0, or
 * the HTTP status of the refusal with its reason in err: 401 (no or a wrong token), 403 (a
 * tenant's token naming another tenant, or on a server-wide route), 400 (a bad
 * X-Scope-OrgID). Tokens are compared in constant time. Used by every way in. */
int sc_server_auth(const struct sc_server_opts *o, const struct sc_auth_in *in, char *tenant,
                   char *err);
/* Counts n more body bytes against max_body_total: 1, or 0 (nothing counted) when that
 * would pass it; sc_server_uncharge gives them back. */
int sc_server_charge(struct sc_server *srv, uint64_t n);
void sc_server_uncharge(struct sc_server *srv, uint64_t n);
/* Waits up to 10 s for cost bytes of the ingest budget: 0 when admitted (give it back with
 * sc_server_unadmit), else non-zero. */
int sc_server_admit(struct sc_server *srv, uint64_t cost);
void sc_server_unadmit(struct sc_server *srv, uint64_t cost);
/* Runs one push's decode and store under the ingest budget: the admission rule of every way
 * in (/ingest, OTLP/HTTP, Connect, OTLP/gRPC). data, len: the body it pays for, costing
 * what decoding it takes (a gzip body: what it inflates to, times a decode factor). A gzip
 * body is admitted at the size its trailer claims when that is plausible, and run(ctx,
 * claim) passes claim on as the ingest call's gzip_claim (sc_ingest_inflate) and returns
 * that call's over_claim (0 for any other outcome, which it has answered). Over the claim
 * (a multi-member file, whose trailer tells only its last member, or a lie) nothing was
 * stored: the body is measured, admitted again at its real size and run(ctx, 0) once
 * more. Then big allocations go back to the system (sc_server_trim). 0 when run has
 * answered, or non-zero when the budget had no room for *cost bytes within 10 s. */
int sc_server_push(struct sc_server *srv, const void *data, size_t len,
                   int (*run)(void *ctx, uint64_t claim), void *ctx, uint64_t *cost);

#endif
