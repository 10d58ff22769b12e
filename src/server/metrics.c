/* metrics.c - /metrics in Prometheus text format: ingest, errors, latency, the store. */
#include "model/budget.h"
#include "model/prom.h"
#include "server/server_int.h"

#include <stdio.h>

/* Upper bounds of the latency buckets, seconds. */
static const double bounds[SC_METRIC_BUCKETS] = {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
                                                 0.1,   0.25,   0.5,   1,    2.5,   5};

void sc_metrics_observe(struct sc_histogram *h, double seconds)
{
    for (int i = 0; i < SC_METRIC_BUCKETS; i++)
        if (seconds <= bounds[i]) {
            atomic_fetch_add(&h->buckets[i], 1);
            break;
        }
    atomic_fetch_add(&h->count, 1);
    atomic_fetch_add(&h->sum_us, (uint64_t)(seconds * 1e6));
}

void sc_metrics_query_end(struct sc_metrics *m, int64_t peak, int stopped)
{
    if (stopped == SC_BUDGET_TIME || stopped == SC_BUDGET_GONE)
        atomic_fetch_add(&m->query_stopped[stopped], 1);
    int64_t was = atomic_load(&m->query_memory_peak);
    while (peak > was && !atomic_compare_exchange_weak(&m->query_memory_peak, &was, peak))
        ;
}

static void histogram(struct sc_buf *out, const char *name, const char *help,
                      struct sc_histogram *h)
{
    uint64_t n[SC_METRIC_BUCKETS];
    for (int i = 0; i < SC_METRIC_BUCKETS; i++)
        n[i] = atomic_load(&h->buckets[i]);
    uint64_t count = atomic_load(&h->count);
    double sum = (double)atomic_load(&h->sum_us) / 1e6;
    sc_prom_histogram(out, name, help, bounds, n, SC_METRIC_BUCKETS, count, &sum, count);
}

/* A family of one sample without labels. */
static void counter(struct sc_buf *out, const char *name, const char *help, uint64_t v)
{
    sc_prom_family(out, name, SC_PROM_COUNTER, help);
    sc_prom_sample(out, name, NULL, "%llu", (unsigned long long)v);
}

static void gauge(struct sc_buf *out, const char *name, const char *help, uint64_t v)
{
    sc_prom_family(out, name, SC_PROM_GAUGE, help);
    sc_prom_sample(out, name, NULL, "%llu", (unsigned long long)v);
}

/* ClickHouse's shards, a sample each (none for the SQLite store). */
static void shard_metrics(struct sc_server *srv, struct sc_buf *out)
{
    static const struct {
        const char *name, *help;
        enum sc_prom_type type;
    } fam[6] = {
        {"scorch_clickhouse_inserts_total", "Batches inserted into a ClickHouse shard.",
         SC_PROM_COUNTER},
        {"scorch_clickhouse_insert_errors_total",
         "Inserts into a ClickHouse shard that failed (their pushes wait in the local log).",
         SC_PROM_COUNTER},
        {"scorch_clickhouse_duplicates_total",
         "Pushes a ClickHouse shard held already when their batch came (a client's retry, a "
         "batch sent again): not stored twice.",
         SC_PROM_COUNTER},
        {"scorch_clickhouse_batches_ahead_total",
         "Batches prepared while the one before was inserted (a backlog).", SC_PROM_COUNTER},
        {"scorch_clickhouse_log_pending_bytes",
         "Bytes of a ClickHouse shard's local log not inserted yet (storage.log_limit bounds "
         "them).",
         SC_PROM_GAUGE},
        {"scorch_clickhouse_shard_down", "1 while a ClickHouse shard's inserts fail.",
         SC_PROM_GAUGE},
    };
    struct sc_store_shard_stats st;
    if (!sc_store_shard_stats(srv->store, 0, &st))
        return;
    for (int f = 0; f < 6; f++) {
        sc_prom_family(out, fam[f].name, fam[f].type, fam[f].help);
        for (uint32_t i = 0; sc_store_shard_stats(srv->store, i, &st); i++) {
            const uint64_t v[6] = {st.inserts,       st.insert_errors,     st.duplicates,
                                   st.batches_ahead, st.log_pending_bytes, (uint64_t)st.down};
            char shard[16];
            snprintf(shard, sizeof shard, "%u", (unsigned)i);
            sc_prom_sample(out, fam[f].name, (const char *[]){"shard", shard, NULL}, "%llu",
                           (unsigned long long)v[f]);
        }
    }
}

void sc_metrics_render(struct sc_server *srv, struct sc_buf *out)
{
    struct sc_metrics *m = &srv->metrics;
    counter(out, "scorch_http_requests_total", "HTTP requests received.",
            atomic_load(&m->requests));
    counter(out, "scorch_ingest_profiles_total", "Profiles stored through /ingest.",
            atomic_load(&m->ingest_ok));
    counter(out, "scorch_ingest_bytes_total", "Request body bytes of stored profiles.",
            atomic_load(&m->ingest_bytes));
    counter(out, "scorch_ingest_samples_total", "Samples stored through /ingest.",
            atomic_load(&m->ingest_samples));
    static const char *const reasons[SC_NREASONS] = {"bad_request", "format",      "limit",
                                                     "auth",        "unsupported", "internal",
                                                     "not_found",   "busy",        "storage"};
    sc_prom_family(out, "scorch_http_errors_total", SC_PROM_COUNTER,
                   "Requests refused, by reason.");
    for (int i = 0; i < SC_NREASONS; i++)
        sc_prom_sample(out, "scorch_http_errors_total",
                       (const char *[]){"reason", reasons[i], NULL}, "%llu",
                       (unsigned long long)atomic_load(&m->errors[i]));
    pthread_mutex_lock(&srv->admit_mu);
    uint64_t admitted = srv->admitted;
    pthread_mutex_unlock(&srv->admit_mu);
    gauge(out, "scorch_http_body_bytes", "Request body bytes being received.",
          atomic_load(&srv->body_bytes));
    gauge(out, "scorch_ingest_admitted_bytes", "Worst-case memory of the pushes being decoded.",
          admitted);
    sc_prom_family(out, "scorch_query_memory_peak_bytes", SC_PROM_GAUGE,
                   "The most memory one heavy query held (its budget is server.query_memory).");
    sc_prom_sample(out, "scorch_query_memory_peak_bytes", NULL, "%lld",
                   (long long)atomic_load(&m->query_memory_peak));
    sc_prom_family(out, "scorch_query_stopped_total", SC_PROM_COUNTER,
                   "Heavy queries stopped before their end: past server.query_timeout, or their "
                   "client gone.");
    sc_prom_sample(out, "scorch_query_stopped_total", (const char *[]){"reason", "timeout", NULL},
                   "%llu", (unsigned long long)atomic_load(&m->query_stopped[SC_BUDGET_TIME]));
    sc_prom_sample(out, "scorch_query_stopped_total",
                   (const char *[]){"reason", "client_gone", NULL}, "%llu",
                   (unsigned long long)atomic_load(&m->query_stopped[SC_BUDGET_GONE]));
    histogram(out, "scorch_query_duration_seconds", "Latency of query API requests.", &m->query);
    histogram(out, "scorch_ingest_duration_seconds", "Latency of /ingest requests.", &m->ingest);
    /* store statistics cost a few queries: refreshed at most every 5 s */
    pthread_mutex_lock(&srv->stats_mu);
    double now = sc_server_now();
    if (now - srv->stats_at > 5) {
        char err[256];
        sc_store_stats(srv->store, &srv->stats, err);
        srv->stats_at = now;
    }
    struct sc_store_stats st = srv->stats;
    pthread_mutex_unlock(&srv->stats_mu);
    gauge(out, "scorch_store_bytes", "Bytes the store takes on disk.", st.bytes_on_disk);
    gauge(out, "scorch_store_profiles", "Profiles in the store.", st.profiles);
    gauge(out, "scorch_store_series", "Series in the store.", st.series);
    gauge(out, "scorch_store_stacks", "Distinct stacks in the store.", st.stacks);
    gauge(out, "scorch_store_read_only",
          "1 while the store is read-only (its disk was full when it opened; 0 once it is "
          "writable again).",
          sc_store_read_only(srv->store) != NULL);
    counter(out, "scorch_store_background_errors_total",
            "Rounds of the store's background work (compaction, retention, reopening for "
            "writing) that hit an error; stderr says which.",
            sc_store_bg_errors(srv->store, NULL, 0));
    shard_metrics(srv, out);
    struct sc_sqlite_memory sm;
    sc_store_sqlite_memory(&sm);
    static const char *const parts[3] = {"heap", "page_cache_slab", "page_cache_used"};
    uint64_t bytes[3] = {sm.heap, sm.slab, sm.slab_used};
    sc_prom_family(out, "scorch_sqlite_memory_bytes", SC_PROM_GAUGE,
                   "What SQLite holds: its heap, the slab reserved for its page caches "
                   "(storage.cache_memory), the slab's part in use.");
    for (int i = 0; i < 3; i++)
        sc_prom_sample(out, "scorch_sqlite_memory_bytes", (const char *[]){"part", parts[i], NULL},
                       "%llu", (unsigned long long)bytes[i]);
}
