/* remote.h - the agent's remote write: scraped profiles to a server's /ingest, via a queue. */
#ifndef SC_REMOTE_H
#define SC_REMOTE_H

#include <stddef.h>
#include <stdint.h>

#include "collect/scrape.h"
#include "model/buf.h"

/* Every scraped profile is gzipped and written to the on-disk queue (collect/queue.h)
 * before anything is sent; sender threads push the oldest entries to <url>/ingest in
 * Pyroscope's protocol (POST, query from sc_scrape_push_query, body the gzipped pprof,
 * Content-Type application/octet-stream, Authorization: Bearer <token> when set) and remove
 * an entry only after a 2xx. 408, 429, 5xx and connection errors are retried, after a
 * backoff that doubles from min_backoff to max_backoff (a Retry-After in seconds is
 * honoured up to max_backoff) and resets on success; any other 4xx is permanent: the entry
 * is dropped and the server's reason logged. So a server outage loses nothing that fits in
 * the queue, and a push answered before a crash may be sent twice (delivery is at least
 * once; see docs/scraping.md). */
struct sc_remote;

struct sc_remote_opts {
    const char *url;   /* the server, e.g. http://host:4040 (/ingest is added) */
    const char *token; /* bearer token, or NULL */
    const char *queue_dir;
    uint64_t queue_max_bytes; /* 0: 256 MiB */
    int64_t min_backoff_ns;   /* 0: 500 ms */
    int64_t max_backoff_ns;   /* 0: 30 s */
    int64_t timeout_ns;       /* per push, 0: 30 s */
    uint32_t senders;         /* concurrent pushes, 0: 2 */
    int verbose;              /* log every queued and sent profile, not only problems */
};

/* Opens the queue (what a previous run left is sent first). 0 or SC_E*. */
int sc_remote_new(const struct sc_remote_opts *o, struct sc_remote **out, char *err);
/* Starts the sender threads. */
int sc_remote_start(struct sc_remote *r, char *err);
/* A new url / token (config reload); the queue stays. 0 or SC_ENOMEM. */
int sc_remote_set_target(struct sc_remote *r, const char *url, const char *token, char *err);
/* Tries to send everything queued for up to flush_ns (backoffs are cut short), then stops
 * the senders; what is left stays on disk for the next start. Frees r. NULL is fine. */
void sc_remote_stop_free(struct sc_remote *r, int64_t flush_ns);

/* The scraper's sink for the agent: ctx is the struct sc_remote *. */
int sc_remote_sink(void *remote, const struct sc_scraped *p, char *err);

struct sc_remote_stats {
    uint64_t queued, sent, retries, rejected, evicted, corrupt, too_large;
    uint64_t queue_entries, queue_bytes, queue_max_bytes;
    double backoff_seconds;
};
void sc_remote_stats(struct sc_remote *r, struct sc_remote_stats *st);
/* Prometheus text: scorch_agent_queue_entries, _queue_bytes, _queue_max_bytes,
 * scorch_agent_queued_total, _sent_total, _retries_total, _dropped_total{reason=...},
 * _backoff_seconds. */
void sc_remote_metrics(struct sc_remote *r, struct sc_buf *out);

/* One POST: what the agent's senders and `scorch ingest` share. */
struct sc_post {
    const char *url;
    const char *token;          /* Authorization: Bearer TOKEN, or NULL */
    const char *content_type;   /* or NULL */
    const char *const *headers; /* more "Name: value" lines, NULL-terminated; may be NULL */
    const void *body;
    size_t len;
    long timeout_ms;
    const char *user_agent;
    int (*abort)(void *ctx); /* polled during the transfer: non-zero ends it; may be NULL */
    void *abort_ctx;
};

/* Sends p on the libcurl easy handle curl (reset first; sc_dl_load(SC_DL_CURL) must have
 * succeeded). *status is the HTTP status (0 without an answer), *retry_after a Retry-After
 * in seconds (-1: none), reason the first line of the body, printable. 0 when the server
 * answered, whatever the status; SC_EIO with libcurl's reason in err when it did not. */
int sc_remote_post(void *curl, const struct sc_post *p, long *status, long *retry_after,
                   char *reason, size_t nreason, char *err);

#endif
