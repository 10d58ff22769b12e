/* clickhouse_http.c - requests to ClickHouse's HTTP interface; RowBinary and SQL text. */
#include "store/clickhouse_int.h"
#include "model/budget.h"
#include "model/clock.h"
#include "model/error.h"
#include "model/dl_curl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- endpoints ---- */

int ch_endpoint_init(struct ch_endpoint *e, const char *url, char *err)
{
    memset(e, 0, sizeof *e);
    if (!url || (strncmp(url, "http://", 7) && strncmp(url, "https://", 8)))
        return sc_errf(err, SC_EINVAL, "bad clickhouse url '%s' (want http://host:port)",
                       url ? url : "");
    size_t n = strlen(url);
    while (n > 8 && url[n - 1] == '/')
        n--;
    e->url = strndup(url, n);
    if (!e->url)
        return sc_errf(err, SC_ENOMEM, "out of memory");
    pthread_mutex_init(&e->mu, NULL);
    return 0;
}

void ch_endpoint_release(struct ch_endpoint *e)
{
    if (!e->url)
        return;
    while (e->idle) {
        struct ch_conn *c = e->idle;
        e->idle = c->next;
        sym_curl_easy_cleanup(c->curl);
        free(c);
    }
    pthread_mutex_destroy(&e->mu);
    free(e->url);
    e->url = NULL;
}

/* An idle connection of e, or a new one (curl keeps its TCP connection between requests,
 * so a pooled handle saves the handshake). */
static struct ch_conn *conn_get(struct ch_endpoint *e)
{
    pthread_mutex_lock(&e->mu);
    struct ch_conn *c = e->idle;
    if (c)
        e->idle = c->next;
    pthread_mutex_unlock(&e->mu);
    if (c)
        return c;
    c = calloc(1, sizeof *c);
    if (c && !(c->curl = sym_curl_easy_init())) {
        free(c);
        c = NULL;
    }
    return c;
}

static void conn_put(struct ch_endpoint *e, struct ch_conn *c, int healthy)
{
    if (!healthy) {
        /* a broken or timed-out connection: do not reuse it */
        sym_curl_easy_cleanup(c->curl);
        free(c);
        return;
    }
    pthread_mutex_lock(&e->mu);
    c->next = e->idle;
    e->idle = c;
    pthread_mutex_unlock(&e->mu);
}

/* ---- one request ---- */

struct upload {
    const struct sc_buf *const *parts;
    uint32_t nparts, i;
    size_t off;
};

static size_t read_parts(char *dst, size_t size, size_t nmemb, void *arg)
{
    struct upload *u = arg;
    size_t room = size * nmemb, n = 0;
    while (n < room && u->i < u->nparts) {
        const struct sc_buf *b = u->parts[u->i];
        size_t left = b->len - u->off;
        size_t k = left < room - n ? left : room - n;
        if (k)
            memcpy(dst + n, b->data + u->off, k);
        n += k;
        u->off += k;
        if (u->off == b->len) {
            u->i++;
            u->off = 0;
        }
    }
    return n;
}

struct download {
    struct sc_buf *out;
    size_t max;
    int over;
};

static size_t write_answer(char *src, size_t size, size_t nmemb, void *arg)
{
    struct download *d = arg;
    size_t n = size * nmemb;
    if (d->out->len + n > d->max) {
        d->over = 1;
        return 0; /* aborts the transfer */
    }
    sc_buf_append(d->out, src, n);
    return d->out->oom ? 0 : n;
}

/* ClickHouse's error codes that mean "later": overload, timeouts, a shard down. */
static int code_is_transient(long code)
{
    static const long codes[] = {
        159, /* TIMEOUT_EXCEEDED */
        160, /* TOO_SLOW */
        202, /* TOO_MANY_SIMULTANEOUS_QUERIES */
        203, /* NO_FREE_CONNECTION */
        209, /* SOCKET_TIMEOUT */
        210, /* NETWORK_ERROR */
        241, /* MEMORY_LIMIT_EXCEEDED */
        242, /* TABLE_IS_READ_ONLY */
        252, /* TOO_MANY_PARTS */
        279, /* ALL_CONNECTION_TRIES_FAILED */
        394, /* QUERY_WAS_CANCELLED */
    };
    for (size_t i = 0; i < sizeof codes / sizeof codes[0]; i++)
        if (codes[i] == code)
            return 1;
    return 0;
}

/* The error of a refused request, from ClickHouse's "Code: N, e.displayText() = ..." */
static int http_error(const struct ch_endpoint *e, long status, const struct sc_buf *body,
                      char *err)
{
    char msg[200] = "";
    long code = 0;
    const char *b = body->data ? body->data : "";
    if (sscanf(b, "Code: %ld", &code) != 1)
        code = 0;
    const char *text = strstr(b, "e.displayText() = ");
    text = text ? text + 18 : b;
    if (!strncmp(text, "DB::Exception: ", 15))
        text += 15;
    size_t n = strcspn(text, "\n");
    const char *tail = strstr(text, ", e.what() = ");
    if (tail && (size_t)(tail - text) < n)
        n = (size_t)(tail - text);
    if (n >= sizeof msg)
        n = sizeof msg - 1;
    memcpy(msg, text, n);
    msg[n] = 0;
    int rc = SC_EIO;
    if (status == 502 || status == 503 || status == 504 || code_is_transient(code))
        rc = SC_EUNAVAIL;
    else if (code == 158 || code == 307 || code == 396) /* TOO_MANY_ROWS/BYTES */
        rc = SC_ELIMIT;
    else if (code == 60) /* UNKNOWN_TABLE */
        rc = SC_ENOTFOUND;
    if (rc == SC_EUNAVAIL)
        return sc_errf(err, rc, "clickhouse at %s is unavailable: %s", e->url,
                       *msg ? msg : "no answer");
    return sc_errf(err, rc, "clickhouse at %s: %s", e->url, *msg ? msg : "an error");
}

static void url_param(struct sc_buf *u, CURL *c, const char *name, const char *value)
{
    char *v = sym_curl_easy_escape(c, value, 0);
    sc_buf_printf(u, "&%s=%s", name, v ? v : "");
    sym_curl_free(v);
}

/* curl's progress callback on a query's request: non-zero aborts it once the query's
 * budget says stop (past its deadline, its client gone). */
static int budget_progress(void *arg, curl_off_t dt, curl_off_t dn, curl_off_t ut, curl_off_t un)
{
    (void)arg, (void)dt, (void)dn, (void)ut, (void)un;
    return sc_budget_poll(NULL) != 0;
}

int ch_request(struct ch_store *s, struct ch_endpoint *e, const struct ch_req *r, char *err)
{
    struct ch_conn *c = conn_get(e);
    if (!c)
        return sc_errf(err, SC_ENOMEM, "out of memory");
    CURL *h = c->curl;
    sym_curl_easy_reset(h);
    int64_t timeout_ms = r->timeout_ns / 1000000;
    /* a query waits no longer than its budget has left (server.query_timeout): the same
     * value bounds the transfer and ClickHouse's own execution */
    struct sc_budget *bud = r->parts ? NULL : sc_budget_current();
    if (bud && bud->deadline_ns) {
        /* a little past it, so the budget says why when curl gives up */
        int64_t left = (bud->deadline_ns - sc_mono_ns()) / 1000000 + 20;
        if (left < timeout_ms)
            timeout_ms = left;
    }
    if (timeout_ms < 100)
        timeout_ms = 100;
    struct sc_buf url = SC_BUF_INIT, scratch = SC_BUF_INIT;
    struct sc_buf *answer = r->answer ? r->answer : &scratch;
    answer->len = 0;
    /* the database is an identifier (checked at open): no escaping */
    sc_buf_printf(&url, "%s/?database=%s", e->url, r->system ? "system" : s->db);
    if (r->parts) {
        url_param(&url, h, "query", r->sql);
    } else {
        /* errors as an HTTP status, not in the middle of a 200 answer; the server stops
         * the query when the client has given up on it */
        /* a Distributed read gives up on a shard that does not answer a second before
         * scorch gives up on the read, so the error names the shard (ClickHouse's
         * receive_timeout is 300 s); a shard that refuses connections fails at once */
        long long secs = (timeout_ms + 999) / 1000;
        sc_buf_printf(&url,
                      "&wait_end_of_query=1&max_execution_time=%lld"
                      "&max_result_bytes=%zu&result_overflow_mode=throw"
                      "&max_query_size=%d&connect_timeout_with_failover_ms=1000"
                      "&receive_timeout=%lld&send_timeout=%lld",
                      secs, r->max_answer, 64 << 20, secs > 1 ? secs - 1 : 1,
                      secs > 1 ? secs - 1 : 1);
    }
    struct upload up = {r->parts, r->nparts, 0, 0};
    struct download down = {answer, r->max_answer, 0};
    curl_off_t total = 0;
    for (uint32_t i = 0; i < r->nparts; i++)
        total += (curl_off_t)r->parts[i]->len;
    struct curl_slist *hdr = sym_curl_slist_append(NULL, "Expect:");
    hdr = sym_curl_slist_append(hdr, "Content-Type: application/octet-stream");
    if (url.oom || !hdr) {
        sym_curl_slist_free_all(hdr);
        sc_buf_release(&url);
        conn_put(e, c, 1);
        return sc_errf(err, SC_ENOMEM, "out of memory");
    }
    sym_curl_easy_setopt(h, CURLOPT_URL, url.data);
    sym_curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
    sym_curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    sym_curl_easy_setopt(h, CURLOPT_TCP_KEEPALIVE, 1L);
    sym_curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS,
                         (long)(timeout_ms < 3000 ? timeout_ms : 3000));
    sym_curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, (long)timeout_ms);
    sym_curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdr);
    sym_curl_easy_setopt(h, CURLOPT_POST, 1L);
    if (r->parts) {
        /* no CURLOPT_SEEKFUNCTION: curl, finding a reused connection dead, would send the
         * insert again on a new one by itself, though the server may have stored it
         * before dying; it fails instead, and the flusher's retry asks what is stored */
        sym_curl_easy_setopt(h, CURLOPT_READFUNCTION, read_parts);
        sym_curl_easy_setopt(h, CURLOPT_READDATA, &up);
        sym_curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, total);
    } else {
        sym_curl_easy_setopt(h, CURLOPT_POSTFIELDS, r->sql);
        sym_curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)strlen(r->sql));
    }
    sym_curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, write_answer);
    sym_curl_easy_setopt(h, CURLOPT_WRITEDATA, &down);
    if (bud) {
        /* a client that hung up (or a deadline passed) aborts the request */
        sym_curl_easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
        sym_curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, budget_progress);
    }
    CURLcode cc = sym_curl_easy_perform(h);
    long status = 0;
    sym_curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
    sym_curl_slist_free_all(hdr);
    sc_buf_release(&url);
    int rc = 0;
    if (down.over)
        rc = sc_errf(err, SC_ELIMIT, "clickhouse at %s: the answer is larger than %zu MiB", e->url,
                     r->max_answer >> 20);
    else if (answer->oom)
        rc = sc_errf(err, SC_ENOMEM, "out of memory");
    else if (cc != CURLE_OK && bud && (rc = sc_budget_poll(err)) != 0)
        ; /* the query's own deadline or client: said as the budget says it */
    else if (cc != CURLE_OK)
        rc = sc_errf(err, SC_EUNAVAIL, "clickhouse at %s is unavailable: %s", e->url,
                     cc == CURLE_OPERATION_TIMEDOUT ? "no answer in time"
                                                    : sym_curl_easy_strerror(cc));
    else if (status != 200)
        rc = http_error(e, status, answer, err);
    conn_put(e, c, cc == CURLE_OK);
    sc_buf_release(&scratch);
    return rc;
}

int ch_query(struct ch_store *s, const char *sql, size_t max, struct sc_buf *answer, char *err)
{
    struct ch_req r = {sql, NULL, 0, s->base.opts.query_timeout_ns, max, answer, 0};
    /* fail fast: a shard known to be unreachable would hold the read until it times out */
    int rc = ch_shard_unreachable(s, err);
    if (rc)
        return rc;
    /* a query server that cannot be reached: the next of storage.url's, each once */
    for (uint32_t k = 0; k < s->nqueries; k++) {
        unsigned cur = atomic_load(&s->qcur);
        rc = ch_request(s, &s->queries[cur % s->nqueries], &r, err);
        if (rc != SC_EUNAVAIL || s->nqueries == 1)
            break;
        atomic_compare_exchange_strong(&s->qcur, &cur, cur + 1);
    }
    char down[SC_ERR_LEN];
    if (rc == SC_EUNAVAIL && err && ch_shards_down(s, down)) {
        /* a read through the cluster failed: say which shard scorch knows is down */
        char was[SC_ERR_LEN];
        memcpy(was, err, SC_ERR_LEN);
        snprintf(err, SC_ERR_LEN, "%.120s; %.130s", down, was);
    }
    return rc;
}

/* ---- RowBinary ---- */

void ch_put_u8(struct sc_buf *b, uint8_t v)
{
    sc_buf_putc(b, (char)v);
}

void ch_put_u32(struct sc_buf *b, uint32_t v)
{
    unsigned char x[4];
    for (int i = 0; i < 4; i++)
        x[i] = (unsigned char)(v >> (8 * i));
    sc_buf_append(b, x, 4);
}

void ch_put_u64(struct sc_buf *b, uint64_t v)
{
    unsigned char x[8];
    for (int i = 0; i < 8; i++)
        x[i] = (unsigned char)(v >> (8 * i));
    sc_buf_append(b, x, 8);
}

void ch_put_len(struct sc_buf *b, uint64_t n)
{
    unsigned char x[10];
    int k = 0;
    do {
        x[k] = (unsigned char)(n & 0x7f);
        n >>= 7;
        if (n)
            x[k] |= 0x80;
        k++;
    } while (n);
    sc_buf_append(b, x, (size_t)k);
}

void ch_put_str(struct sc_buf *b, const char *s, size_t n)
{
    ch_put_len(b, n);
    sc_buf_append(b, s, n);
}

uint8_t ch_get_u8(struct ch_rd *r)
{
    if (r->bad || r->end - r->p < 1) {
        r->bad = 1;
        return 0;
    }
    return *r->p++;
}

uint64_t ch_get_u64(struct ch_rd *r)
{
    if (r->bad || r->end - r->p < 8) {
        r->bad = 1;
        return 0;
    }
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v |= (uint64_t)r->p[i] << (8 * i);
    r->p += 8;
    return v;
}

uint64_t ch_get_len(struct ch_rd *r, size_t elem)
{
    uint64_t n = 0;
    for (int shift = 0; !r->bad; shift += 7) {
        if (r->p >= r->end || shift > 63) {
            r->bad = 1;
            break;
        }
        uint8_t c = *r->p++;
        n |= (uint64_t)(c & 0x7f) << shift;
        if (!(c & 0x80))
            break;
    }
    /* every element takes at least elem bytes of what is left */
    if (!r->bad && elem && n > (uint64_t)(r->end - r->p) / elem)
        r->bad = 1;
    return r->bad ? 0 : n;
}

struct sc_str ch_get_str(struct ch_rd *r)
{
    uint64_t n = ch_get_len(r, 1);
    if (r->bad || n > UINT32_MAX) {
        r->bad = 1;
        return (struct sc_str){"", 0};
    }
    struct sc_str s = {(const char *)r->p, (uint32_t)n};
    r->p += n;
    return s;
}

/* ---- SQL text ---- */

void ch_sql_str(struct sc_buf *b, const char *s, size_t n)
{
    sc_buf_putc(b, '\'');
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '\\' || c == '\'') {
            sc_buf_putc(b, '\\');
            sc_buf_putc(b, (char)c);
        } else if (c < 0x20 || c == 0x7f) {
            sc_buf_printf(b, "\\x%02x", c);
        } else {
            sc_buf_putc(b, (char)c);
        }
    }
    sc_buf_putc(b, '\'');
}

void ch_sql_ids(struct sc_buf *b, const uint64_t *ids, uint32_t n)
{
    sc_buf_putc(b, '(');
    for (uint32_t i = 0; i < n; i++) {
        if (i)
            sc_buf_putc(b, ',');
        sc_buf_put_u64(b, ids[i]);
    }
    if (n == 0)
        sc_buf_putc(b, '0'); /* "IN ()" is not SQL; id 0 matches nothing written */
    sc_buf_putc(b, ')');
}

void ch_sql_table(struct ch_store *s, struct sc_buf *b, const char *name)
{
    sc_buf_printf(b, "%s.scorch_%s%s", s->db, name, s->cluster ? "" : "_local");
}
