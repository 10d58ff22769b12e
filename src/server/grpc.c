/* grpc.c - the OTLP/gRPC profiles listener: HTTP/2 (libnghttp2) in clear or over TLS
 * (GnuTLS), gRPC framing.
 *
 * One method, opentelemetry.proto.collector.profiles.v1development.ProfilesService/Export,
 * on its own port (otlp.grpc_listen). Without TLS, HTTP/2 with prior knowledge (h2c, what
 * gRPC clients speak without TLS); with the server's TLS (tls.c) only TLS, whose ALPN must
 * choose "h2": a client that offers no "h2" (or speaks h2c) fails the handshake with the
 * no_application_protocol alert. A thread per connection, as the HTTP server has, because a
 * request blocks on the store's fsync'd commit. A request message is the gRPC frame: one byte
 * "compressed", a 4-byte big-endian length, the message (gzip when compressed and the
 * grpc-encoding header says gzip). The answer is HEADERS, the framed
 * ExportProfilesServiceResponse, and trailers with grpc-status (0) and grpc-message; a
 * refusal is a trailers-only answer with the status:
 *
 *   UNAUTHENTICATED (16)    no or a wrong token in the authorization metadata
 *   PERMISSION_DENIED (7)   a tenant's token with another tenant's x-scope-orgid
 *   UNIMPLEMENTED (12)      another path, or a grpc-encoding other than gzip / identity
 *   INVALID_ARGUMENT (3)    a malformed request or framing, an unknown
 *                           otlp-profiles-development-version
 *   RESOURCE_EXHAUSTED (8)  a message past the body limit, or the server's memory budgets
 *   UNAVAILABLE (14)        the store failed (the client retries)
 *
 * Limits: the server's body limit per message, its in-flight body budget and ingest
 * budget (shared with HTTP), GRPC_MAX_CONNECTIONS connections (more are closed at once),
 * GRPC_MAX_STREAMS concurrent streams each, 64 KiB of headers a stream, connections
 * idle for GRPC_IDLE_S seconds are closed, and a TLS handshake not done in
 * GRPC_HANDSHAKE_S seconds is dropped (the same bounds in clear and over TLS). */
#include "server/grpc.h"
#include "formats/otlp.h"
#include "ingest/ingest.h"
#include "model/clock.h"
#include "model/error.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <nghttp2/nghttp2.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#define GRPC_MAX_CONNECTIONS 128
#define GRPC_MAX_STREAMS 16
#define GRPC_MAX_HEADERS (64 << 10)
#define GRPC_IDLE_S 120
#define GRPC_HANDSHAKE_S 10
#define GRPC_LINGER_MS 1000
#define EXPORT_PATH "/opentelemetry.proto.collector.profiles.v1development.ProfilesService/Export"

enum {
    GS_OK = 0,
    GS_INVALID = 3,
    GS_PERMISSION_DENIED = 7,
    GS_EXHAUSTED = 8,
    GS_UNIMPLEMENTED = 12,
    GS_INTERNAL = 13,
    GS_UNAVAILABLE = 14,
    GS_UNAUTHENTICATED = 16
};

struct sc_grpc {
    struct sc_server *srv;
    int fd;
    pthread_t thread;
    _Atomic int stop;
    double stop_sends_by; /* set before stop: when a send that makes no progress gives up */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    uint32_t nconns;
};

struct stream {
    int32_t id;
    struct stream *next;
    char path[128], tenant[SC_TENANT_MAX + 1], encoding[32], version[40];
    char orgid[SC_TENANT_MAX + 2], authorization[1024];
    int have_version, have_orgid, have_authorization, bad_header;
    size_t header_bytes;
    struct sc_buf body;
    uint64_t charged;
    int ready;    /* the whole request is in: answer it */
    int answered; /* a response was submitted */
    /* the response: the framed message and the trailers' values (kept until sent) */
    struct sc_buf out;
    size_t out_off;
    char status[8], message[512];
};

struct conn {
    struct sc_grpc *g;
    int fd;
    gnutls_session_t tls; /* NULL: h2c */
    nghttp2_session *h2;
    struct stream *streams;
};

/* ---- responses ---- */

/* grpc-message is percent-encoded: bytes outside printable ASCII, and '%'. */
static void set_status(struct stream *st, int code, const char *msg)
{
    snprintf(st->status, sizeof st->status, "%d", code);
    size_t n = 0;
    for (const unsigned char *p = (const unsigned char *)msg; *p && n + 4 < sizeof st->message;
         p++) {
        if (*p < 0x20 || *p > 0x7e || *p == '%')
            n += (size_t)snprintf(st->message + n, 4, "%%%02X", *p);
        else
            st->message[n++] = (char)*p;
    }
    st->message[n] = 0;
}

#define NV(name, value)                                                                            \
    {                                                                                              \
        (uint8_t *)(name), (uint8_t *)(value), sizeof(name) - 1, strlen(value),                    \
            NGHTTP2_NV_FLAG_NO_COPY_NAME                                                           \
    }

/* A trailers-only answer: the status in the response headers, the stream ends. */
static void refuse(struct conn *c, struct stream *st, int code, const char *msg)
{
    if (st->answered)
        return;
    set_status(st, code, msg);
    nghttp2_nv nva[] = {NV(":status", "200"), NV("content-type", "application/grpc"),
                        NV("grpc-status", st->status), NV("grpc-message", st->message)};
    nghttp2_submit_response(c->h2, st->id, nva, sizeof nva / sizeof nva[0], NULL);
    st->answered = 1; /* whatever more of the body comes is dropped */
}

static ssize_t read_out(nghttp2_session *h2, int32_t id, uint8_t *buf, size_t len, uint32_t *flags,
                        nghttp2_data_source *src, void *user)
{
    (void)user;
    struct stream *st = src->ptr;
    size_t left = st->out.len - st->out_off, n = left < len ? left : len;
    if (n)
        memcpy(buf, st->out.data + st->out_off, n);
    st->out_off += n;
    if (st->out_off == st->out.len) {
        *flags |= NGHTTP2_DATA_FLAG_EOF | NGHTTP2_DATA_FLAG_NO_END_STREAM;
        nghttp2_nv tr[] = {NV("grpc-status", st->status), NV("grpc-message", st->message)};
        if (nghttp2_submit_trailer(h2, id, tr, 2))
            return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
    }
    return (ssize_t)n;
}

static void reply(struct conn *c, struct stream *st, const struct sc_buf *msg)
{
    uint32_t n = (uint32_t)msg->len;
    unsigned char hdr[5] = {0, (unsigned char)(n >> 24), (unsigned char)(n >> 16),
                            (unsigned char)(n >> 8), (unsigned char)n};
    st->out.len = 0;
    sc_buf_append(&st->out, hdr, 5);
    sc_buf_append(&st->out, msg->data, msg->len);
    if (st->out.oom) {
        refuse(c, st, GS_EXHAUSTED, "out of memory");
        return;
    }
    set_status(st, GS_OK, "");
    nghttp2_nv nva[] = {NV(":status", "200"), NV("content-type", "application/grpc"),
                        NV("grpc-accept-encoding", "identity,gzip")};
    nghttp2_data_provider dp = {.source.ptr = st, .read_callback = read_out};
    nghttp2_submit_response(c->h2, st->id, nva, sizeof nva / sizeof nva[0], &dp);
    st->answered = 1;
}

static int status_of(int rc)
{
    switch (rc) {
    case SC_EINVAL:
    case SC_EFORMAT:
        return GS_INVALID;
    case SC_ELIMIT:
    case SC_ENOMEM:
        return GS_EXHAUSTED;
    case SC_EUNSUPPORTED:
        return GS_UNIMPLEMENTED;
    default:
        return GS_UNAVAILABLE;
    }
}

/* One Export request as sc_server_push runs it: ingest and answer, unless the gzip message
 * inflated past its claim (then nothing was stored or answered). */
struct export_run {
    struct conn *c;
    struct stream *st;
    const unsigned char *b; /* the gRPC frame: 5 bytes of header, the message */
    size_t n;
};

static int run_export(void *ctx, uint64_t claim)
{
    struct export_run *x = ctx;
    struct sc_server *srv = x->c->g->srv;
    double t0 = sc_server_now();
    struct sc_ingest_batch res;
    char err[SC_ERR_LEN] = "";
    int rc = sc_ingest_otlp(srv->store, x->st->tenant, x->b + 5, x->n - 5, claim, 0,
                            &srv->opts.limits, &res, err);
    if (res.over_claim)
        return 1;
    sc_metrics_observe(&srv->metrics.ingest, sc_server_now() - t0);
    if (rc) {
        atomic_fetch_add(&srv->metrics.errors[rc == SC_EFORMAT  ? SC_REASON_FORMAT
                                              : rc == SC_ELIMIT ? SC_REASON_LIMIT
                                                                : SC_REASON_INTERNAL],
                         1);
        refuse(x->c, x->st, status_of(rc), err);
        return 0;
    }
    atomic_fetch_add(&srv->metrics.ingest_ok, res.stored);
    atomic_fetch_add(&srv->metrics.ingest_bytes, x->n);
    atomic_fetch_add(&srv->metrics.ingest_samples, res.samples);
    struct sc_buf msg = SC_BUF_INIT;
    sc_otlp_put_response(&msg, 0, res.rejected, res.reason);
    reply(x->c, x->st, &msg);
    sc_buf_release(&msg);
    return 0;
}

/* The whole request is in: unframe, then admit, ingest and answer (sc_server_push). */
static void answer(struct conn *c, struct stream *st)
{
    const unsigned char *b = (const unsigned char *)st->body.data;
    size_t n = st->body.len;
    if (n < 5 || (b[0] != 0 && b[0] != 1) ||
        ((uint32_t)b[1] << 24 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 8 | b[4]) != n - 5) {
        refuse(c, st, GS_INVALID, "expected one length-prefixed gRPC message");
        return;
    }
    if (b[0] == 1 && strcasecmp(st->encoding, "gzip")) {
        refuse(c, st, GS_INVALID, "a compressed message without grpc-encoding: gzip");
        return;
    }
    struct export_run x = {c, st, b, n};
    uint64_t cost;
    if (sc_server_push(c->g->srv, b + 5, n - 5, run_export, &x, &cost))
        refuse(c, st, GS_EXHAUSTED, "server busy: no memory to decode the request; retry later");
}

/* ---- nghttp2 callbacks ---- */

static struct stream *find(struct conn *c, int32_t id)
{
    for (struct stream *s = c->streams; s; s = s->next)
        if (s->id == id)
            return s;
    return NULL;
}

static void release_body(struct conn *c, struct stream *st)
{
    sc_server_uncharge(c->g->srv, st->charged);
    st->charged = 0;
    sc_buf_release(&st->body);
}

static int on_begin_headers(nghttp2_session *h2, const nghttp2_frame *f, void *user)
{
    (void)h2;
    struct conn *c = user;
    if (f->hd.type != NGHTTP2_HEADERS || f->headers.cat != NGHTTP2_HCAT_REQUEST)
        return 0;
    struct stream *st = calloc(1, sizeof *st);
    if (!st)
        return NGHTTP2_ERR_CALLBACK_FAILURE;
    st->id = f->hd.stream_id;
    st->next = c->streams;
    c->streams = st;
    return 0;
}

static void copy_value(char *dst, size_t cap, const uint8_t *v, size_t n, int *bad)
{
    if (n >= cap) {
        *bad = 1;
        n = cap - 1;
    }
    memcpy(dst, v, n);
    dst[n] = 0;
}

static int on_header(nghttp2_session *h2, const nghttp2_frame *f, const uint8_t *name, size_t nlen,
                     const uint8_t *value, size_t vlen, uint8_t flags, void *user)
{
    (void)h2, (void)flags;
    struct conn *c = user;
    struct stream *st = find(c, f->hd.stream_id);
    if (!st || f->hd.type != NGHTTP2_HEADERS)
        return 0;
    st->header_bytes += nlen + vlen;
    if (st->header_bytes > GRPC_MAX_HEADERS)
        return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE; /* resets the stream */
    int bad = 0;
#define IS(s) (nlen == sizeof(s) - 1 && !memcmp(name, s, nlen))
    if (IS(":path"))
        copy_value(st->path, sizeof st->path, value, vlen, &st->bad_header);
    else if (IS("authorization")) {
        copy_value(st->authorization, sizeof st->authorization, value, vlen, &bad);
        if (bad)
            st->authorization[0] = 0; /* too long to be a token: matches none */
        st->have_authorization = 1;
    } else if (IS("x-scope-orgid")) {
        /* cut at one byte more than a tenant name may have: sc_server_auth refuses it */
        copy_value(st->orgid, sizeof st->orgid, value, vlen, &bad);
        st->have_orgid = 1;
    } else if (IS("grpc-encoding"))
        copy_value(st->encoding, sizeof st->encoding, value, vlen, &st->bad_header);
    else if (IS("otlp-profiles-development-version")) {
        copy_value(st->version, sizeof st->version, value, vlen, &bad);
        st->have_version++;
    }
#undef IS
    return 0;
}

/* The request's headers are in: refuse what they decide before any of the body. */
static void check_headers(struct conn *c, struct stream *st)
{
    char err[SC_ERR_LEN];
    struct sc_auth_in in = {st->have_authorization ? st->authorization : NULL, NULL,
                            st->have_orgid ? st->orgid : NULL, NULL};
    int a = sc_server_auth(&c->g->srv->opts, &in, st->tenant, err);
    if (a == 401)
        refuse(c, st, GS_UNAUTHENTICATED, "missing or wrong bearer token (authorization metadata)");
    else if (a)
        refuse(c, st, a == 403 ? GS_PERMISSION_DENIED : GS_INVALID, err);
    else if (strcmp(st->path, EXPORT_PATH))
        refuse(c, st, GS_UNIMPLEMENTED, "unknown method (this listener serves " EXPORT_PATH ")");
    else if (st->bad_header)
        refuse(c, st, GS_INVALID, "a header value is too long");
    else if (st->encoding[0] && strcasecmp(st->encoding, "gzip") &&
             strcasecmp(st->encoding, "identity"))
        refuse(c, st, GS_UNIMPLEMENTED, "unsupported grpc-encoding (gzip or identity)");
    else if (st->have_version > 1)
        refuse(c, st, GS_INVALID, "more than one otlp-profiles-development-version");
    else if (sc_otlp_check_version(st->have_version ? st->version : NULL, err))
        refuse(c, st, GS_INVALID, err);
}

static int on_data(nghttp2_session *h2, uint8_t flags, int32_t id, const uint8_t *data, size_t len,
                   void *user)
{
    (void)h2, (void)flags;
    struct conn *c = user;
    struct stream *st = find(c, id);
    if (!st || st->answered)
        return 0;
    struct sc_server *srv = c->g->srv;
    if (st->body.len + len > srv->opts.max_body + 5) {
        char msg[128];
        snprintf(msg, sizeof msg, "message is more than the limit of %llu bytes",
                 (unsigned long long)srv->opts.max_body);
        release_body(c, st);
        refuse(c, st, GS_EXHAUSTED, msg);
    } else if (!sc_server_charge(srv, len)) {
        release_body(c, st);
        refuse(c, st, GS_EXHAUSTED, "server busy: too many request bytes in flight; retry later");
    } else {
        st->charged += len;
        sc_buf_append(&st->body, data, len);
        if (st->body.oom) {
            release_body(c, st);
            refuse(c, st, GS_EXHAUSTED, "out of memory");
        }
    }
    return 0;
}

static int on_frame(nghttp2_session *h2, const nghttp2_frame *f, void *user)
{
    (void)h2;
    struct conn *c = user;
    struct stream *st = find(c, f->hd.stream_id);
    if (!st)
        return 0;
    if (f->hd.type == NGHTTP2_HEADERS && f->headers.cat == NGHTTP2_HCAT_REQUEST)
        check_headers(c, st);
    if ((f->hd.type == NGHTTP2_HEADERS || f->hd.type == NGHTTP2_DATA) &&
        (f->hd.flags & NGHTTP2_FLAG_END_STREAM))
        st->ready = 1;
    return 0;
}

static int on_close(nghttp2_session *h2, int32_t id, uint32_t code, void *user)
{
    (void)h2, (void)code;
    struct conn *c = user;
    for (struct stream **pp = &c->streams; *pp; pp = &(*pp)->next) {
        if ((*pp)->id != id)
            continue;
        struct stream *st = *pp;
        *pp = st->next;
        release_body(c, st);
        sc_buf_release(&st->out);
        free(st);
        break;
    }
    return 0;
}

/* ---- connections ---- */

/* Waits up to 100 ms for fd to be ready for events: 1 ready, 0 not yet, -1 failed. */
static int wait_fd(int fd, short events)
{
    struct pollfd pfd = {fd, events, 0};
    int pr = poll(&pfd, 1, 100);
    if (pr < 0)
        return errno == EINTR ? 0 : -1;
    return pr > 0;
}

/* Sends all of p; a peer that takes nothing for GRPC_IDLE_S seconds fails it, and once the
 * listener stops, one that still makes it wait GRPC_LINGER_MS after the stop (a peer that
 * reads slowly or never cannot hold the drain: its GOAWAY is given up). Each send is non-blocking:
 * the TLS socket is, and h2c asks with MSG_DONTWAIT. 0 or -1. */
static int send_all(struct conn *c, const uint8_t *p, size_t n)
{
    int waited_ms = 0;
    while (n) {
        ssize_t w = c->tls ? sym_gnutls_record_send(c->tls, p, n)
                           : send(c->fd, p, n, MSG_NOSIGNAL | MSG_DONTWAIT);
        int again = c->tls ? (w == GNUTLS_E_AGAIN || w == GNUTLS_E_INTERRUPTED)
                           : (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK));
        if (again) {
            /* called again with the same data, as GnuTLS asks (and plain send allows) */
            int r = wait_fd(c->fd, POLLOUT);
            if (r < 0 || (!r && (waited_ms += 100) >= GRPC_IDLE_S * 1000))
                return -1;
            if (atomic_load(&c->g->stop) && sc_server_now() >= c->g->stop_sends_by)
                return -1;
            continue;
        }
        if (!c->tls && w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        p += w, n -= (size_t)w;
        waited_ms = 0;
    }
    return 0;
}

/* Receives what is there: the bytes, 0 for none yet (a TLS record not whole), -1 at the end
 * of the connection or on an error. */
static ssize_t recv_some(struct conn *c, uint8_t *buf, size_t len)
{
    if (!c->tls) {
        ssize_t n = recv(c->fd, buf, len, 0);
        if (n < 0 && errno == EINTR)
            return 0;
        return n > 0 ? n : -1;
    }
    ssize_t n = sym_gnutls_record_recv(c->tls, buf, len);
    if (n > 0)
        return n;
    if (n < 0 && !sym_gnutls_error_is_fatal((int)n))
        return 0; /* EAGAIN, EINTR, a warning alert */
    return -1;
}

static int flush(struct conn *c)
{
    for (;;) {
        const uint8_t *data;
        ssize_t n = nghttp2_session_mem_send(c->h2, &data);
        if (n < 0)
            return -1;
        if (n == 0)
            return 0;
        if (send_all(c, data, (size_t)n))
            return -1;
    }
}

/* The client's hello is read: without "h2" among its ALPN protocols it is not a gRPC client
 * (a client with a list but no "h2" is refused by GnuTLS itself, GNUTLS_ALPN_MANDATORY). */
static int check_alpn(gnutls_session_t s)
{
    gnutls_datum_t p;
    if (sym_gnutls_alpn_get_selected_protocol(s, &p) || p.size != 2 || memcmp(p.data, "h2", 2))
        return GNUTLS_E_NO_APPLICATION_PROTOCOL;
    return 0;
}

/* The TLS handshake, within GRPC_HANDSHAKE_S seconds and given up at the listener's stop:
 * 0, or -1 (the alert sent when GnuTLS has one). */
static int handshake(struct conn *c)
{
    if (fcntl(c->fd, F_SETFL, fcntl(c->fd, F_GETFL) | O_NONBLOCK) ||
        sc_server_tls_session(&c->g->srv->tls, c->fd, &c->tls))
        return -1;
    static const gnutls_datum_t h2 = {(unsigned char *)"h2", 2};
    sym_gnutls_alpn_set_protocols(c->tls, &h2, 1, GNUTLS_ALPN_MANDATORY);
    sym_gnutls_handshake_set_post_client_hello_function(c->tls, check_alpn);
    double deadline = sc_server_now() + GRPC_HANDSHAKE_S;
    for (;;) {
        int rc = sym_gnutls_handshake(c->tls);
        if (!rc)
            return 0;
        if (sym_gnutls_error_is_fatal(rc)) {
            sym_gnutls_alert_send_appropriate(c->tls, rc);
            return -1;
        }
        if (atomic_load(&c->g->stop) || sc_server_now() >= deadline)
            return -1;
        if (wait_fd(c->fd, sym_gnutls_record_get_direction(c->tls) ? POLLOUT : POLLIN) < 0)
            return -1;
    }
}

static void serve(struct conn *c)
{
    nghttp2_session_callbacks *cb;
    if (nghttp2_session_callbacks_new(&cb))
        return;
    nghttp2_session_callbacks_set_on_begin_headers_callback(cb, on_begin_headers);
    nghttp2_session_callbacks_set_on_header_callback(cb, on_header);
    nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cb, on_data);
    nghttp2_session_callbacks_set_on_frame_recv_callback(cb, on_frame);
    nghttp2_session_callbacks_set_on_stream_close_callback(cb, on_close);
    int rc = nghttp2_session_server_new(&c->h2, cb, c);
    nghttp2_session_callbacks_del(cb);
    if (rc)
        return;
    nghttp2_settings_entry iv[] = {
        {NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS, GRPC_MAX_STREAMS},
        {NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, 1 << 20},
        {NGHTTP2_SETTINGS_MAX_HEADER_LIST_SIZE, GRPC_MAX_HEADERS},
    };
    nghttp2_submit_settings(c->h2, NGHTTP2_FLAG_NONE, iv, sizeof iv / sizeof iv[0]);
    /* a larger connection window, so a big message is not sent 64 KiB per round trip */
    nghttp2_session_set_local_window_size(c->h2, NGHTTP2_FLAG_NONE, 0, 16 << 20);
    uint8_t buf[65536];
    int idle_ms = 0;
    while (!flush(c) && (nghttp2_session_want_read(c->h2) || nghttp2_session_want_write(c->h2))) {
        if (atomic_load(&c->g->stop)) {
            /* requests answered: say goodbye (in-flight ones finished above) */
            nghttp2_session_terminate_session(c->h2, NGHTTP2_NO_ERROR);
            flush(c);
            break;
        }
        /* GnuTLS may hold decrypted bytes the socket no longer shows */
        int pr = c->tls && sym_gnutls_record_check_pending(c->tls) ? 1 : wait_fd(c->fd, POLLIN);
        if (pr < 0)
            break;
        if (!pr) {
            if ((idle_ms += 100) >= GRPC_IDLE_S * 1000)
                break;
            continue;
        }
        idle_ms = 0;
        ssize_t n = recv_some(c, buf, sizeof buf);
        if (n < 0 || (n > 0 && nghttp2_session_mem_recv(c->h2, buf, (size_t)n) < 0))
            break;
        for (struct stream *st = c->streams; st; st = st->next)
            if (st->ready && !st->answered) {
                answer(c, st);
                release_body(c, st);
            }
    }
    nghttp2_session_del(c->h2); /* closes the streams: on_close frees them */
}

/* Closes fd without losing what was sent last (a GOAWAY, an answer). A close with unread
 * bytes in the receive buffer (a request that came with the goodbye, a preface not read yet
 * at SIGTERM) sends a reset, and the peer's kernel then drops what it had not yet read. So:
 * end our side, then read and discard until the peer closes, for at most GRPC_LINGER_MS. */
static void linger_close(int fd)
{
    shutdown(fd, SHUT_WR);
    double deadline = sc_server_now() + GRPC_LINGER_MS / 1000.0;
    uint8_t junk[16384];
    while (sc_server_now() < deadline) {
        ssize_t n = recv(fd, junk, sizeof junk, MSG_DONTWAIT);
        if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))
            break;
        if (n < 0 && wait_fd(fd, POLLIN) < 0)
            break;
    }
    close(fd);
}

static void *conn_main(void *arg)
{
    struct conn *c = arg;
    struct sc_grpc *g = c->g;
    if (!g->srv->tls.on) {
        serve(c);
    } else if (!handshake(c)) {
        serve(c);
        /* close_notify, as far as the socket takes it now (the peer may be gone) */
        sym_gnutls_bye(c->tls, GNUTLS_SHUT_WR);
    }
    if (c->tls)
        sym_gnutls_deinit(c->tls);
    linger_close(c->fd);
    free(c);
    pthread_mutex_lock(&g->mu);
    g->nconns--;
    pthread_cond_broadcast(&g->cv);
    pthread_mutex_unlock(&g->mu);
    return NULL;
}

static void *accept_main(void *arg)
{
    struct sc_grpc *g = arg;
    while (!atomic_load(&g->stop)) {
        struct pollfd pfd = {g->fd, POLLIN, 0};
        if (poll(&pfd, 1, 100) <= 0)
            continue;
        int fd = accept(g->fd, NULL, NULL);
        if (fd < 0)
            continue;
        pthread_mutex_lock(&g->mu);
        int full = g->nconns >= GRPC_MAX_CONNECTIONS;
        if (!full)
            g->nconns++;
        pthread_mutex_unlock(&g->mu);
        struct conn *c = full ? NULL : calloc(1, sizeof *c);
        pthread_t t;
        pthread_attr_t at;
        pthread_attr_init(&at);
        pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
        if (c) {
            c->g = g;
            c->fd = fd;
        }
        if (!c || pthread_create(&t, &at, conn_main, c)) {
            close(fd);
            free(c);
            if (!full) {
                pthread_mutex_lock(&g->mu);
                g->nconns--;
                pthread_mutex_unlock(&g->mu);
            }
        }
        pthread_attr_destroy(&at);
    }
    return NULL;
}

int sc_grpc_start(struct sc_server *srv, const struct sockaddr_in *sa, struct sc_grpc **out,
                  char *err)
{
    *out = NULL;
    struct sc_grpc *g = calloc(1, sizeof *g);
    if (!g)
        return sc_errf(err, SC_ENOMEM, "out of memory");
    g->srv = srv;
    pthread_mutex_init(&g->mu, NULL);
    sc_cond_init(&g->cv);
    g->fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int one = 1;
    if (g->fd >= 0)
        setsockopt(g->fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (g->fd < 0 || bind(g->fd, (const struct sockaddr *)sa, sizeof *sa) || listen(g->fd, 128)) {
        int e = errno;
        if (g->fd >= 0)
            close(g->fd);
        free(g);
        return sc_errf(err, SC_EIO, "cannot listen for OTLP/gRPC: %s", strerror(e));
    }
    if (pthread_create(&g->thread, NULL, accept_main, g)) {
        close(g->fd);
        free(g);
        return sc_errf(err, SC_ENOMEM, "cannot start the OTLP/gRPC listener");
    }
    *out = g;
    return 0;
}

unsigned sc_grpc_port(const struct sc_grpc *g)
{
    struct sockaddr_in sa;
    socklen_t n = sizeof sa;
    if (getsockname(g->fd, (struct sockaddr *)&sa, &n))
        return 0;
    return ntohs(sa.sin_port);
}

void sc_grpc_stop(struct sc_grpc *g)
{
    if (!g)
        return;
    g->stop_sends_by = sc_server_now() + GRPC_LINGER_MS / 1000.0;
    atomic_store(&g->stop, 1);
    pthread_join(g->thread, NULL);
    close(g->fd);
    /* connections answer what they hold, send GOAWAY and end within a poll interval, a
     * stalled send's GRPC_LINGER_MS and their lingering close (GRPC_LINGER_MS), all at
     * once */
    pthread_mutex_lock(&g->mu);
    while (g->nconns)
        pthread_cond_wait(&g->cv, &g->mu);
    pthread_mutex_unlock(&g->mu);
    pthread_mutex_destroy(&g->mu);
    pthread_cond_destroy(&g->cv);
    free(g);
}
