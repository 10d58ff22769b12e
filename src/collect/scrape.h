/* scrape.h - periodic scraping of Go net/http/pprof endpoints (scorch server and agent). */
#ifndef SC_SCRAPE_H
#define SC_SCRAPE_H

#include <stddef.h>
#include <stdint.h>

#include "model/buf.h"
#include "model/labels.h"
#include "config/config.h"

/* A scraper scrapes every target of every job of a config (struct sc_config, its
 * scrape_configs) for each configured profile type, on a schedule, and hands each profile
 * to a sink. One thread runs every request through libcurl's multi interface, so a slow or
 * dead target never holds up another, and a CPU profile in flight does not hold up the heap
 * scrape of the same target; decoding and delta computation run on two worker threads, and
 * the sink is called from those.
 *
 * Schedule. Each (job, target, profile type) is a task with due times on a grid: the first
 * due time is the next wall-clock time t with t = offset (mod interval), the offset a hash
 * of job and target (so targets spread over the interval while one target's types fire
 * together, and the grid survives restarts); after that due times advance by exactly the
 * interval. A slot whose previous scrape is still running is skipped (counted), except for
 * target-side deltas, which may overlap by design (below).
 *
 * Requests: <scheme>://<target><path_prefix>/<name>, with
 *   cpu          profile?seconds=<cpu_seconds>; timeout scrape_timeout + cpu_seconds.
 *                cpu_seconds is cut to interval - 1 s when it would not fit the interval
 *                (Go allows one CPU profile at a time)
 *   heap         heap; only inuse_objects, inuse_space are kept (gauges), profile "heap"
 *   allocs       allocs; only alloc_objects, alloc_space, as per-interval deltas, "allocs"
 *   mutex, block per-interval deltas of contentions, delay
 *   goroutine, threadcreate   as scraped (gauges)
 * with `Authorization: Bearer` (bearer_token) or basic auth when configured.
 *
 * Deltas of cumulative types (allocs, mutex, block), per job `delta:`
 *   endpoint  ask the target for its own delta, `?seconds=<interval>` (Go >= 1.16 computes
 *             the difference of two snapshots that far apart; the request blocks for the
 *             interval and has scrape_timeout + interval to finish). Consecutive windows
 *             abut, so such requests overlap by design
 *   subtract  fetch the cumulative profile and subtract the previous scrape per stack
 *             (struct sc_delta): the first scrape only sets the baseline and stores
 *             nothing (a whole lifetime's counts in one interval would be a spike nobody
 *             asked for); counters going down means the target restarted: that scrape is
 *             stored as it is (the counts since the restart) and becomes the new baseline
 *   auto      (default) endpoint first; a target that answers `seconds` with 400 (older Go,
 *             a WriteTimeout shorter than the interval) or with a snapshot (no
 *             duration_nanos, which a Go delta always has) is switched to subtract for
 *             good, and in the 400 case fetched again at once for the baseline
 *
 * Series labels: service_name (job_name unless the configured labels set one), job,
 * instance (the target, host:port) and the configured labels.
 *
 * Profiles that come out empty (an idle mutex delta) are not handed to the sink. */
struct sc_scraper;

/* One scraped profile, handed to the sink. Everything is borrowed for the call. */
struct sc_scraped {
    const char *job;
    const char *instance; /* host:port */
    const char *profile;  /* stored profile name: cpu, heap, allocs, goroutine,
                             mutex, block, threadcreate */
    const char *service_name;
    const struct sc_labels *labels; /* the series: service_name, job, instance, configured */
    const void *pprof;              /* the profile, uncompressed profile.proto */
    size_t len;
    int64_t from_ns, until_ns; /* wall clock (the scraper's): the span it covers; equal
                                  for gauges */
    uint32_t samples;
    int restart; /* a delta that starts a new baseline (target restart) */
};

/* Called from a worker thread (two run, so calls may be concurrent) for each profile.
 * Returns 0, or an SC_E* with a reason in err, which shows as the target's error. */
typedef int (*sc_scrape_sink)(void *ctx, const struct sc_scraped *p, char *err);

/* Builds a scraper for cfg's scrape_configs (cfg is not kept: it may be released after
 * the call). Nothing runs until sc_scraper_start. Checks what the config parser cannot:
 * label names, service names the Pyroscope name syntax can carry, targets as host:port.
 * 0 or SC_E* with the reason in err. Free with sc_scraper_stop_free. */
int sc_scraper_new(const struct sc_config *cfg, sc_scrape_sink sink, void *sink_ctx,
                   struct sc_scraper **out, char *err);

/* Starts the scraping and worker threads. 0 or SC_E*. */
int sc_scraper_start(struct sc_scraper *s, char *err);

/* Replaces the configuration (SIGHUP). A (job, target, profile type) that stays keeps its
 * state: delta baseline, probed delta mode, health and counters, and its place on the grid
 * when the interval is unchanged; scrapes in flight for it finish and are delivered. Ones
 * that go are cancelled. Safe from any thread; returns once the new config is in effect.
 * On error (a bad config) the old one stays. 0 or SC_E*. */
int sc_scraper_reload(struct sc_scraper *s, const struct sc_config *cfg, char *err);

/* Stops the threads (scrapes in flight are cancelled; profiles already scraped are
 * processed and handed to the sink first) and frees everything. NULL is fine. */
void sc_scraper_stop_free(struct sc_scraper *s);

/* Appends the health of every task as a JSON array, one object per (job, target, profile):
 *   {"job","instance","profile","url","labels":{...},"health":"up"|"down"|"unknown",
 *    "last_scrape": RFC 3339 UTC or null, "last_scrape_duration_seconds",
 *    "last_error": "" when none, "next_due": RFC 3339, "interval_seconds",
 *    "delta": "endpoint"|"subtract"|"probing"|"" , "samples": of the last profile,
 *    "scrapes","errors","skipped","profiles": counters}
 * (GET /api/v1/targets). Safe from any thread. */
void sc_scraper_targets_json(struct sc_scraper *s, struct sc_buf *out);

/* Appends Prometheus text: per task scorch_scrape_up, _duration_seconds, _samples, _bytes,
 * scorch_scrapes_total, scorch_scrape_errors_total, _skipped_total, _profiles_total,
 * _restarts_total (labels job, instance, profile); the schedule lag histogram; the
 * scraper's thread CPU. For GET /metrics; safe from any thread. */
void sc_scraper_metrics(struct sc_scraper *s, struct sc_buf *out);

/* Figures for benchmarks and tests. */
#define SC_SCRAPE_LAG_BUCKETS 10
struct sc_scraper_stats {
    uint64_t tasks, scrapes, errors, skipped, profiles;
    uint64_t lag_count;                          /* requests started */
    uint64_t lag_buckets[SC_SCRAPE_LAG_BUCKETS]; /* by sc_scrape_lag_bounds, not cumulative */
    int64_t lag_max_ns;                          /* the latest a request started after its due
                                                    time */
    int64_t scraper_cpu_ns, workers_cpu_ns;      /* CPU time of the scraping thread and of the
                                                    worker threads (decode, delta, sink) */
    int64_t sink_cpu_ns;                         /* of workers_cpu_ns, the part spent in the
                                                    sink (e.g. the store's writes) */
    uint64_t backlog_dropped;                    /* scraped profiles dropped: workers behind */
};
extern const double sc_scrape_lag_bounds[SC_SCRAPE_LAG_BUCKETS]; /* seconds, upper bounds */
void sc_scraper_stats(struct sc_scraper *s, struct sc_scraper_stats *st);

/* ---- sinks ---- */

/* The server's sink: ctx is a struct sc_store *; the profile goes through sc_ingest (format
 * pprof, profile_name and extra_labels set) into the default tenant. */
int sc_scrape_store_sink(void *store, const struct sc_scraped *p, char *err);

/* The query string of a Pyroscope push of p (what the agent sends to /ingest):
 * name=<service>[.<suffix>]{k="v",...}&from=<s>&until=<s>&format=pprof, URL-encoded. The
 * suffix (cpu, inuse_space, goroutines, mutex_count, block_count) names the profile type for
 * the server; allocs and threadcreate carry none: the server derives them from the sample
 * types. 0, or SC_EINVAL when a label value cannot be written in the name syntax (a '"'). */
int sc_scrape_push_query(const struct sc_scraped *p, struct sc_buf *out, char *err);

/* A connection or two per target and profile type in flight need many file descriptors:
 * raises the soft limit to the hard one (as far as it goes; failures are harmless). */
void sc_scrape_raise_fd_limit(void);

#endif
