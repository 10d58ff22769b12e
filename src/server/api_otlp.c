/* api_otlp.c - OTLP/HTTP profiles export and Pyroscope's Connect push, the HTTP handlers. */
#include "formats/otlp.h"
#include "formats/protowire.h"
#include "ingest/ingest.h"
#include "model/error.h"
#include "model/json.h"
#include "server/server_int.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

static const char *header(const struct sc_req *r, const char *name)
{
    return sym_MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, name);
}

/* Whether the media type of a Content-Type (parameters ignored) is mt. */
static int media_is(const char *ct, const char *mt)
{
    size_t n = strlen(mt);
    if (!ct || strncasecmp(ct, mt, n))
        return 0;
    ct += n;
    while (*ct == ' ' || *ct == '\t')
        ct++;
    return *ct == 0 || *ct == ';';
}

/* The body's Content-Encoding is one the ingest path takes (gzip, found by its magic). */
static int encoding_ok(const struct sc_req *r)
{
    const char *ce = header(r, "Content-Encoding");
    return !ce || !*ce || !strcasecmp(ce, "gzip") || !strcasecmp(ce, "identity");
}

/* Errors that are the store's, not the request's: the client should retry later. */
static int retryable(int rc)
{
    return rc != SC_EINVAL && rc != SC_EFORMAT && rc != SC_ELIMIT && rc != SC_EUNSUPPORTED &&
           rc != SC_EAUTH;
}

static void count_ingest(struct sc_server *srv, const struct sc_ingest_batch *b, size_t bytes,
                         double t0)
{
    sc_metrics_observe(&srv->metrics.ingest, sc_server_now() - t0);
    atomic_fetch_add(&srv->metrics.ingest_ok, b->stored);
    atomic_fetch_add(&srv->metrics.ingest_bytes, bytes);
    atomic_fetch_add(&srv->metrics.ingest_samples, b->samples);
}

/* ---- OTLP/HTTP: POST /v1development/profiles ---- */

/* google.rpc.Status codes (the OTLP/HTTP error body of a protobuf request). */
static int grpc_code_of(unsigned status)
{
    switch (status) {
    case 401:
        return 16; /* UNAUTHENTICATED */
    case 413:
        return 8; /* RESOURCE_EXHAUSTED */
    case 415:
        return 12; /* UNIMPLEMENTED */
    case 503:
        return 14; /* UNAVAILABLE */
    default:
        return status >= 500 ? 13 : 3; /* INTERNAL, INVALID_ARGUMENT */
    }
}

/* An OTLP error: the project's JSON error for JSON (and unknown) requests, a
 * google.rpc.Status {1 code, 2 message} for protobuf ones, as OTLP/HTTP asks. */
static int otlp_error(struct sc_resp *w, int pb, int rc, const char *msg)
{
    sc_resp_code(w, rc, msg);
    if (retryable(rc)) {
        sc_resp_error(w, 503, "%s; retry later", msg && *msg ? msg : sc_strerror(rc));
        w->reason = 0;
    }
    if (!pb)
        return 0;
    w->body.len = 0;
    sc_pb_put_uint(&w->body, 1, (uint64_t)grpc_code_of(w->status));
    const char *m = msg && *msg ? msg : sc_strerror(rc);
    sc_pb_put_bytes(&w->body, 2, m, strlen(m));
    w->content_type = "application/x-protobuf";
    return 0;
}

int sc_api_otlp(struct sc_req *r, struct sc_resp *w)
{
    struct sc_server *srv = r->srv;
    double t0 = sc_server_now();
    const char *ct = header(r, "Content-Type");
    int json = media_is(ct, "application/json");
    int pb = media_is(ct, "application/x-protobuf") || media_is(ct, "application/protobuf");
    char err[SC_ERR_LEN] = "";
    if (!json && !pb) {
        snprintf(err, sizeof err,
                 "unsupported Content-Type '%.64s' (application/x-protobuf or "
                 "application/json)",
                 ct ? ct : "");
        return otlp_error(w, 0, SC_EUNSUPPORTED, err);
    }
    if (!encoding_ok(r)) {
        snprintf(err, sizeof err, "unsupported Content-Encoding '%.32s' (gzip or none)",
                 header(r, "Content-Encoding"));
        return otlp_error(w, pb, SC_EUNSUPPORTED, err);
    }
    int rc = sc_otlp_check_version(header(r, "OTLP-Profiles-Development-Version"), err);
    if (rc)
        return otlp_error(w, pb, SC_EINVAL, err);
    struct sc_ingest_batch b;
    rc = sc_ingest_otlp(srv->store, r->tenant, r->body.data ? r->body.data : "", r->body.len,
                        r->gzip_claim, json, &srv->opts.limits, &b, err);
    r->over_claim = b.over_claim;
    if (r->over_claim)
        return 0; /* nothing stored: sc_server_push measures it and runs it again */
    if (rc)
        return otlp_error(w, pb, rc, err);
    count_ingest(srv, &b, r->body.len, t0);
    w->content_type = json ? "application/json" : "application/x-protobuf";
    sc_otlp_put_response(&w->body, json, b.rejected, b.reason);
    return 0;
}

/* ---- Connect: POST /push.v1.PusherService/Push ---- */

/* A Connect unary error: {"code": "...", "message": "..."} (plus the project's "error"). */
static int connect_error(struct sc_resp *w, int rc, const char *msg)
{
    sc_resp_code(w, rc, msg);
    if (retryable(rc)) {
        w->status = 503;
        w->reason = 0;
    }
    const char *code = w->status == 401   ? "unauthenticated"
                       : w->status == 413 ? "resource_exhausted"
                       : w->status == 415 ? "unimplemented"
                       : w->status == 503 ? "unavailable"
                       : w->status >= 500 ? "internal"
                                          : "invalid_argument";
    const char *m = msg && *msg ? msg : sc_strerror(rc);
    w->body.len = 0;
    struct sc_json j;
    sc_json_init(&j, &w->body);
    sc_json_obj_begin(&j);
    sc_json_kv_str(&j, "code", code);
    sc_json_kv_str(&j, "message", m);
    sc_json_kv_str(&j, "error", m);
    sc_json_obj_end(&j);
    sc_buf_putc(&w->body, '\n');
    w->content_type = "application/json";
    return 0;
}

int sc_api_push(struct sc_req *r, struct sc_resp *w)
{
    struct sc_server *srv = r->srv;
    double t0 = sc_server_now();
    const char *ct = header(r, "Content-Type");
    int json = media_is(ct, "application/json");
    int pb = media_is(ct, "application/proto") || media_is(ct, "application/protobuf");
    char err[SC_ERR_LEN] = "";
    if (!json && !pb) {
        snprintf(err, sizeof err,
                 "unsupported Content-Type '%.64s' (application/proto or "
                 "application/json)",
                 ct ? ct : "");
        return connect_error(w, SC_EUNSUPPORTED, err);
    }
    if (!encoding_ok(r)) {
        snprintf(err, sizeof err, "unsupported Content-Encoding '%.32s' (gzip or none)",
                 header(r, "Content-Encoding"));
        return connect_error(w, SC_EUNSUPPORTED, err);
    }
    struct sc_ingest_batch b;
    int rc = sc_ingest_push(srv->store, r->tenant, r->body.data ? r->body.data : "", r->body.len,
                            r->gzip_claim, json, &srv->opts.limits, &b, err);
    r->over_claim = b.over_claim;
    if (r->over_claim)
        return 0; /* nothing stored: sc_server_push measures it and runs it again */
    if (rc)
        return connect_error(w, rc, err);
    count_ingest(srv, &b, r->body.len, t0);
    /* PushResponse is empty */
    w->content_type = json ? "application/json" : "application/proto";
    if (json)
        sc_buf_puts(&w->body, "{}");
    return 0;
}
