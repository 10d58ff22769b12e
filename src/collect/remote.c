/* remote.c - queued pushes to a scorch (or Pyroscope) server, with retries and backoff. */
#include "collect/remote.h"
#include "collect/queue.h"
#include "formats/input.h"
#include "model/clock.h"
#include "model/error.h"
#include "model/log.h"
#include "model/prom.h"
#include "model/dl_curl.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_SENDERS 16

struct sc_remote {
    struct sc_remote_opts o;
    struct sc_queue *q;
    pthread_mutex_t mu; /* url, token, backoff */
    pthread_cond_t cv;
    char *url, *token;
    int64_t backoff_ns;  /* the current backoff, 0 after a success */
    int64_t next_try;    /* monotonic: no push before this */
    int64_t backoff_set; /* monotonic: when the backoff was last raised */
    int failing;         /* the last push failed (log the first failure of a streak) */
    atomic_int stop;     /* senders end */
    atomic_int abort_io; /* transfers in flight end at once */
    pthread_t th[MAX_SENDERS];
    uint32_t nth;
    atomic_ullong queued, sent, retries, rejected, too_large;
};

int sc_remote_new(const struct sc_remote_opts *o, struct sc_remote **out, char *err)
{
    if (!o->url || !*o->url)
        return sc_errf(err, SC_EINVAL, "no remote_write url");
    int rc = sc_dl_load(SC_DL_CURL, err);
    if (rc)
        return rc;
    struct sc_remote *r = calloc(1, sizeof *r);
    if (!r)
        return sc_errf(err, SC_ENOMEM, "out of memory");
    r->o = *o;
    if (!r->o.queue_max_bytes)
        r->o.queue_max_bytes = 256u << 20;
    if (!r->o.min_backoff_ns)
        r->o.min_backoff_ns = SC_NS_PER_S / 2;
    if (!r->o.max_backoff_ns)
        r->o.max_backoff_ns = 30 * SC_NS_PER_S;
    if (r->o.max_backoff_ns < r->o.min_backoff_ns)
        r->o.max_backoff_ns = r->o.min_backoff_ns;
    if (!r->o.timeout_ns)
        r->o.timeout_ns = 30 * SC_NS_PER_S;
    if (!r->o.senders)
        r->o.senders = 2;
    if (r->o.senders > MAX_SENDERS)
        r->o.senders = MAX_SENDERS;
    pthread_mutex_init(&r->mu, NULL);
    sc_cond_init(&r->cv);
    rc = sc_remote_set_target(r, o->url, o->token, err);
    if (!rc)
        rc = sc_queue_open(o->queue_dir, r->o.queue_max_bytes, &r->q, err);
    if (rc) {
        sc_remote_stop_free(r, 0);
        return rc;
    }
    struct sc_queue_stats qs;
    sc_queue_stats(r->q, &qs);
    if (qs.unfinished)
        sc_logf("queue '%s': removed %llu unfinished writes (tmp-*) a crash left", o->queue_dir,
                (unsigned long long)qs.unfinished);
    if (qs.entries)
        sc_logf("queue '%s' holds %llu profiles (%llu bytes) from before: sending them first",
                o->queue_dir, (unsigned long long)qs.entries, (unsigned long long)qs.bytes);
    r->o.queue_dir = NULL; /* not kept */
    r->o.url = r->o.token = NULL;
    *out = r;
    return 0;
}

int sc_remote_set_target(struct sc_remote *r, const char *url, const char *token, char *err)
{
    size_t ul = strlen(url);
    while (ul && url[ul - 1] == '/')
        ul--;
    char *u = strndup(url, ul), *t = token ? strdup(token) : NULL;
    if (!u || (token && !t)) {
        free(u);
        free(t);
        return sc_errf(err, SC_ENOMEM, "out of memory");
    }
    pthread_mutex_lock(&r->mu);
    free(r->url);
    free(r->token);
    r->url = u;
    r->token = t;
    pthread_mutex_unlock(&r->mu);
    return 0;
}

int sc_remote_sink(void *remote, const struct sc_scraped *p, char *err)
{
    struct sc_remote *r = remote;
    struct sc_buf meta = SC_BUF_INIT, body = SC_BUF_INIT;
    int rc = sc_scrape_push_query(p, &meta, err);
    if (!rc && sc_gzip(p->pprof, p->len, 6, &body))
        rc = sc_errf(err, SC_ENOMEM, "out of memory");
    if (!rc)
        rc = sc_queue_push(r->q, meta.data, meta.len, body.data ? body.data : "", body.len, err);
    if (rc == SC_ELIMIT)
        atomic_fetch_add(&r->too_large, 1);
    if (!rc) {
        atomic_fetch_add(&r->queued, 1);
        /* after sc_queue_push: the entry is on disk (fsync'd, renamed, directory fsync'd),
         * so this line is the proof of what a crash cannot lose (tests/e2e/agent_crash.py) */
        if (r->o.verbose)
            sc_logf("queued job=%s instance=%s profile=%s from=%lld until=%lld samples=%u "
                    "bytes=%zu%s",
                    p->job, p->instance, p->profile, (long long)p->from_ns, (long long)p->until_ns,
                    (unsigned)p->samples, body.len, p->restart ? " restart=1" : "");
    }
    sc_buf_release(&meta);
    sc_buf_release(&body);
    return rc;
}

static size_t on_body(char *p, size_t size, size_t n, void *ctx)
{
    struct sc_buf *b = ctx;
    if (b->len < 512)
        sc_buf_append(b, p, size * n < 512 ? size * n : 512);
    return size * n;
}

static int on_progress(void *ctx, curl_off_t a, curl_off_t b, curl_off_t c, curl_off_t d)
{
    (void)a, (void)b, (void)c, (void)d;
    const struct sc_post *p = ctx;
    return p->abort && p->abort(p->abort_ctx) ? 1 : 0;
}

static size_t on_header(char *p, size_t size, size_t n, void *ctx)
{
    long *retry_after = ctx;
    size_t len = size * n;
    if (len > 12 && !strncasecmp(p, "Retry-After:", 12)) {
        char tmp[32];
        size_t k = len - 12 < sizeof tmp - 1 ? len - 12 : sizeof tmp - 1;
        memcpy(tmp, p + 12, k);
        tmp[k] = 0;
        char *end;
        long v = strtol(tmp, &end, 10);
        if (end != tmp && v >= 0)
            *retry_after = v;
    }
    return len;
}

/* The first line of a response body, printable. */
static void excerpt(const struct sc_buf *b, char *out, size_t n)
{
    size_t k = 0;
    for (size_t i = 0; i < b->len && k + 1 < n; i++) {
        unsigned char c = (unsigned char)b->data[i];
        if (c == '\n' || c == '\r')
            break;
        out[k++] = c >= 0x20 && c < 0x7f ? (char)c : '?';
    }
    out[k] = 0;
}

int sc_remote_post(void *curl, const struct sc_post *p, long *status, long *retry_after,
                   char *reason, size_t nreason, char *err)
{
    CURL *e = curl;
    struct sc_buf resp = SC_BUF_INIT, auth = SC_BUF_INIT;
    char errbuf[CURL_ERROR_SIZE] = "";
    struct curl_slist *h = NULL;
    if (p->content_type) {
        sc_buf_printf(&resp, "Content-Type: %s", p->content_type);
        h = sym_curl_slist_append(h, resp.data);
    }
    if (p->token) {
        sc_buf_printf(&auth, "Authorization: Bearer %s", p->token);
        if (auth.data)
            h = sym_curl_slist_append(h, auth.data);
    }
    for (const char *const *x = p->headers; x && *x; x++)
        h = sym_curl_slist_append(h, *x);
    h = sym_curl_slist_append(h, "Expect:");
    resp.len = 0;
    *retry_after = -1;
    *status = 0;
    sym_curl_easy_reset(e);
    sym_curl_easy_setopt(e, CURLOPT_URL, p->url);
    sym_curl_easy_setopt(e, CURLOPT_POST, 1L);
    sym_curl_easy_setopt(e, CURLOPT_POSTFIELDS, p->body ? p->body : "");
    sym_curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)p->len);
    sym_curl_easy_setopt(e, CURLOPT_HTTPHEADER, h);
    sym_curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_body);
    sym_curl_easy_setopt(e, CURLOPT_WRITEDATA, &resp);
    sym_curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, on_header);
    sym_curl_easy_setopt(e, CURLOPT_HEADERDATA, retry_after);
    sym_curl_easy_setopt(e, CURLOPT_ERRORBUFFER, errbuf);
    sym_curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
    sym_curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, p->timeout_ms);
    sym_curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, 10000L);
    sym_curl_easy_setopt(e, CURLOPT_NOPROGRESS, 0L);
    sym_curl_easy_setopt(e, CURLOPT_XFERINFOFUNCTION, on_progress);
    sym_curl_easy_setopt(e, CURLOPT_XFERINFODATA, (void *)p);
    sym_curl_easy_setopt(e, CURLOPT_USERAGENT, p->user_agent ? p->user_agent : "scorch");
    sym_curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
    CURLcode cc = sym_curl_easy_perform(e);
    sym_curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, status);
    sym_curl_slist_free_all(h);
    excerpt(&resp, reason, nreason);
    sc_buf_release(&resp);
    sc_buf_release(&auth);
    if (cc != CURLE_OK)
        return sc_errf(err, SC_EIO, "%s", errbuf[0] ? errbuf : sym_curl_easy_strerror(cc));
    return 0;
}

/* Waits until the backoff has passed or the senders stop. */
static void wait_backoff(struct sc_remote *r)
{
    pthread_mutex_lock(&r->mu);
    for (;;) {
        int64_t now = sc_mono_ns();
        if (atomic_load(&r->stop) || now >= r->next_try)
            break;
        int64_t w = r->next_try - now;
        if (w > SC_NS_PER_S / 5)
            w = SC_NS_PER_S / 5;
        struct timespec ts;
        sc_deadline(&ts, w);
        pthread_cond_timedwait(&r->cv, &r->mu, &ts);
    }
    pthread_mutex_unlock(&r->mu);
}

static int aborting(void *ctx)
{
    return atomic_load(&((struct sc_remote *)ctx)->abort_io);
}

static void *sender_main(void *arg)
{
    struct sc_remote *r = arg;
    pthread_setname_np(pthread_self(), "scorch-push");
    CURL *e = sym_curl_easy_init();
    struct sc_buf url = SC_BUF_INIT;
    char errbuf[SC_ERR_LEN];
    while (e && !atomic_load(&r->stop)) {
        wait_backoff(r);
        if (atomic_load(&r->stop))
            break;
        struct sc_queue_entry en;
        char err[SC_ERR_LEN];
        int trc = sc_queue_take(r->q, SC_NS_PER_S / 5, &en, err);
        if (trc == SC_ENOMEM) {
            /* the entry stays queued; not again at once */
            pthread_mutex_lock(&r->mu);
            r->next_try = sc_mono_ns() + r->o.min_backoff_ns;
            pthread_mutex_unlock(&r->mu);
        }
        if (trc)
            continue;
        pthread_mutex_lock(&r->mu);
        url.len = 0;
        sc_buf_printf(&url, "%s/ingest?%s", r->url, en.meta.data ? en.meta.data : "");
        char *token = r->token ? strdup(r->token) : NULL;
        pthread_mutex_unlock(&r->mu);
        long retry_after = -1, status = 0;
        char ex[200];
        struct sc_post post = {url.data,
                               token,
                               "application/octet-stream",
                               NULL,
                               en.body.data,
                               en.body.len,
                               (long)(r->o.timeout_ns / 1000000),
                               "scorch-agent/0.1",
                               aborting,
                               r};
        int64_t t0 = sc_mono_ns();
        int cc = sc_remote_post(e, &post, &status, &retry_after, ex, sizeof ex, errbuf);
        free(token);
        if (cc == 0 && status >= 200 && status < 300) {
            sc_queue_done(r->q, en.seq);
            atomic_fetch_add(&r->sent, 1);
            pthread_mutex_lock(&r->mu);
            if (r->failing)
                sc_logf("remote write works again");
            r->failing = 0;
            r->backoff_ns = 0;
            pthread_mutex_unlock(&r->mu);
            if (r->o.verbose)
                sc_logf("sent %s", en.meta.data ? en.meta.data : "");
        } else if (cc == 0 && status >= 400 && status < 500 && status != 408 && status != 429) {
            /* the server will never take it: retrying would block the queue for good */
            sc_queue_done(r->q, en.seq);
            atomic_fetch_add(&r->rejected, 1);
            sc_logf("remote write rejected a profile, dropped it: HTTP %ld: %s (%s)", status, ex,
                    en.meta.data ? en.meta.data : "");
        } else {
            sc_queue_putback(r->q, en.seq);
            atomic_fetch_add(&r->retries, 1);
            pthread_mutex_lock(&r->mu);
            int64_t now = sc_mono_ns();
            /* raise the backoff once per round of failures, not once per sender */
            if (t0 >= r->backoff_set) {
                r->backoff_ns = r->backoff_ns ? r->backoff_ns * 2 : r->o.min_backoff_ns;
                if (r->backoff_ns > r->o.max_backoff_ns)
                    r->backoff_ns = r->o.max_backoff_ns;
                int64_t wait = r->backoff_ns;
                if (retry_after >= 0 && retry_after * SC_NS_PER_S > wait)
                    wait = retry_after * SC_NS_PER_S < r->o.max_backoff_ns
                               ? retry_after * SC_NS_PER_S
                               : r->o.max_backoff_ns;
                r->next_try = now + wait;
                r->backoff_set = now;
            }
            if (!r->failing && !atomic_load(&r->abort_io)) {
                if (cc)
                    sc_logf("remote write failed, will retry: %s", errbuf);
                else
                    sc_logf("remote write failed, will retry: HTTP %ld: %s", status, ex);
            }
            r->failing = 1;
            pthread_mutex_unlock(&r->mu);
        }
        sc_queue_entry_release(&en);
    }
    sc_buf_release(&url);
    if (e)
        sym_curl_easy_cleanup(e);
    return NULL;
}

int sc_remote_start(struct sc_remote *r, char *err)
{
    for (uint32_t i = 0; i < r->o.senders; i++) {
        if (pthread_create(&r->th[i], NULL, sender_main, r))
            return sc_errf(err, SC_EINTERNAL, "cannot start a sender thread");
        r->nth++;
    }
    return 0;
}

void sc_remote_stop_free(struct sc_remote *r, int64_t flush_ns)
{
    if (!r)
        return;
    if (r->nth && flush_ns > 0) {
        /* one more try now, whatever the backoff said */
        pthread_mutex_lock(&r->mu);
        r->next_try = 0;
        r->backoff_ns = 0;
        pthread_cond_broadcast(&r->cv);
        pthread_mutex_unlock(&r->mu);
        int64_t deadline = sc_mono_ns() + flush_ns;
        while (sc_mono_ns() < deadline) {
            struct sc_queue_stats qs;
            sc_queue_stats(r->q, &qs);
            if (qs.entries == 0)
                break;
            struct timespec ts = {0, 20 * 1000000L};
            nanosleep(&ts, NULL);
        }
    }
    atomic_store(&r->stop, 1);
    atomic_store(&r->abort_io, 1);
    if (r->q)
        sc_queue_wake(r->q);
    pthread_mutex_lock(&r->mu);
    pthread_cond_broadcast(&r->cv);
    pthread_mutex_unlock(&r->mu);
    for (uint32_t i = 0; i < r->nth; i++)
        pthread_join(r->th[i], NULL);
    if (r->q) {
        struct sc_queue_stats qs;
        sc_queue_stats(r->q, &qs);
        if (qs.entries)
            sc_logf("%llu profiles stay queued (%llu bytes) for the next start",
                    (unsigned long long)qs.entries, (unsigned long long)qs.bytes);
    }
    sc_queue_close(r->q);
    free(r->url);
    free(r->token);
    pthread_mutex_destroy(&r->mu);
    pthread_cond_destroy(&r->cv);
    free(r);
}

void sc_remote_stats(struct sc_remote *r, struct sc_remote_stats *st)
{
    memset(st, 0, sizeof *st);
    struct sc_queue_stats qs;
    sc_queue_stats(r->q, &qs);
    st->queued = atomic_load(&r->queued);
    st->sent = atomic_load(&r->sent);
    st->retries = atomic_load(&r->retries);
    st->rejected = atomic_load(&r->rejected);
    st->too_large = atomic_load(&r->too_large);
    st->evicted = qs.evicted;
    st->corrupt = qs.corrupt;
    st->queue_entries = qs.entries;
    st->queue_bytes = qs.bytes;
    st->queue_max_bytes = qs.max_bytes;
    pthread_mutex_lock(&r->mu);
    st->backoff_seconds = r->backoff_ns / 1e9;
    pthread_mutex_unlock(&r->mu);
}

void sc_remote_metrics(struct sc_remote *r, struct sc_buf *out)
{
    struct sc_remote_stats st;
    sc_remote_stats(r, &st);
    static const struct {
        const char *name;
        enum sc_prom_type type;
        const char *help;
    } m[] = {
        {"scorch_agent_queue_entries", SC_PROM_GAUGE, "Profiles waiting in the on-disk queue."},
        {"scorch_agent_queue_bytes", SC_PROM_GAUGE, "Bytes of the on-disk queue."},
        {"scorch_agent_queue_max_bytes", SC_PROM_GAUGE, "The queue's limit."},
        {"scorch_agent_queued_total", SC_PROM_COUNTER, "Profiles written to the queue."},
        {"scorch_agent_sent_total", SC_PROM_COUNTER, "Profiles the server accepted."},
        {"scorch_agent_retries_total", SC_PROM_COUNTER, "Pushes that failed and will be retried."},
    };
    uint64_t v[] = {st.queue_entries, st.queue_bytes, st.queue_max_bytes,
                    st.queued,        st.sent,        st.retries};
    for (size_t k = 0; k < sizeof m / sizeof m[0]; k++) {
        sc_prom_family(out, m[k].name, m[k].type, m[k].help);
        sc_prom_sample(out, m[k].name, NULL, "%llu", (unsigned long long)v[k]);
    }
    static const char *const reasons[4] = {"queue_full", "rejected", "corrupt", "too_large"};
    uint64_t dropped[4] = {st.evicted, st.rejected, st.corrupt, st.too_large};
    sc_prom_family(out, "scorch_agent_dropped_total", SC_PROM_COUNTER,
                   "Profiles given up, by reason.");
    for (int i = 0; i < 4; i++)
        sc_prom_sample(out, "scorch_agent_dropped_total",
                       (const char *[]){"reason", reasons[i], NULL}, "%llu",
                       (unsigned long long)dropped[i]);
    sc_prom_family(out, "scorch_agent_backoff_seconds", SC_PROM_GAUGE,
                   "The current retry backoff (0: none).");
    sc_prom_sample(out, "scorch_agent_backoff_seconds", NULL, "%.3f", st.backoff_seconds);
}
