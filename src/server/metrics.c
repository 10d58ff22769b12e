/* metrics.c - /metrics in Prometheus text format: ingest, errors, latency, the store. */
#include "model/budget.h"
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
    sc_buf_printf(out, "# HELP %s %s\n# TYPE %s histogram\n", name, help, name);
    uint64_t cum = 0;
    for (int i = 0; i < SC_METRIC_BUCKETS; i++) {
        cum += atomic_load(&h->buckets[i]);
        sc_buf_printf(out, "%s_bucket{le=\"%g\"} %llu\n", name, bounds[i], (unsigned long long)cum);
    }
    uint64_t count = atomic_load(&h->count);
    sc_buf_printf(out, "%s_bucket{le=\"+Inf\"} %llu\n", name, (unsigned long long)count);
    sc_buf_printf(out, "%s_sum %.6f\n%s_count %llu\n", name, atomic_load(&h->sum_us) / 1e6, name,
                  (unsigned long long)count);
}

static void counter(struct sc_buf *out, const char *name, const char *help, uint64_t v)
{
    sc_buf_printf(out, "# HELP %s %s\n# TYPE %s counter\n%s %llu\n", name, help, name, name,
                  (unsigned long long)v);
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
    sc_buf_puts(out, "# HELP scorch_http_errors_total Requests refused, by reason.\n"
                     "# TYPE scorch_http_errors_total counter\n");
    for (int i = 0; i < SC_NREASONS; i++)
        sc_buf_printf(out, "scorch_http_errors_total{reason=\"%s\"} %llu\n", reasons[i],
                      (unsigned long long)atomic_load(&m->errors[i]));
    pthread_mutex_lock(&srv->admit_mu);
    uint64_t admitted = srv->admitted;
    pthread_mutex_unlock(&srv->admit_mu);
    sc_buf_printf(out,
                  "# HELP scorch_http_body_bytes Request body bytes being received.\n"
                  "# TYPE scorch_http_body_bytes gauge\nscorch_http_body_bytes %llu\n"
                  "# HELP scorch_ingest_admitted_bytes Worst-case memory of the pushes being "
                  "decoded.\n"
                  "# TYPE scorch_ingest_admitted_bytes gauge\nscorch_ingest_admitted_bytes %llu\n",
                  (unsigned long long)atomic_load(&srv->body_bytes), (unsigned long long)admitted);
    sc_buf_printf(out,
                  "# HELP scorch_query_memory_peak_bytes The most memory one heavy query held "
                  "(its budget is server.query_memory).\n"
                  "# TYPE scorch_query_memory_peak_bytes gauge\nscorch_query_memory_peak_bytes "
                  "%lld\n",
                  (long long)atomic_load(&m->query_memory_peak));
    sc_buf_printf(out,
                  "# HELP scorch_query_stopped_total Heavy queries stopped before their end: past "
                  "server.query_timeout, or their client gone.\n"
                  "# TYPE scorch_query_stopped_total counter\n"
                  "scorch_query_stopped_total{reason=\"timeout\"} %llu\n"
                  "scorch_query_stopped_total{reason=\"client_gone\"} %llu\n",
                  (unsigned long long)atomic_load(&m->query_stopped[SC_BUDGET_TIME]),
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
    sc_buf_printf(out,
                  "# HELP scorch_store_bytes Bytes the store takes on disk.\n"
                  "# TYPE scorch_store_bytes gauge\nscorch_store_bytes %llu\n"
                  "# HELP scorch_store_profiles Profiles in the store.\n"
                  "# TYPE scorch_store_profiles gauge\nscorch_store_profiles %llu\n"
                  "# HELP scorch_store_series Series in the store.\n"
                  "# TYPE scorch_store_series gauge\nscorch_store_series %llu\n"
                  "# HELP scorch_store_stacks Distinct stacks in the store.\n"
                  "# TYPE scorch_store_stacks gauge\nscorch_store_stacks %llu\n"
                  "# HELP scorch_store_read_only 1 while the store is read-only (its disk "
                  "was full when it opened; 0 once it is writable again).\n"
                  "# TYPE scorch_store_read_only gauge\nscorch_store_read_only %d\n"
                  "# HELP scorch_store_background_errors_total Rounds of the store's background "
                  "work (compaction, retention, reopening for writing) that hit an error; "
                  "stderr says which.\n"
                  "# TYPE scorch_store_background_errors_total counter\n"
                  "scorch_store_background_errors_total %llu\n",
                  (unsigned long long)st.bytes_on_disk, (unsigned long long)st.profiles,
                  (unsigned long long)st.series, (unsigned long long)st.stacks,
                  sc_store_read_only(srv->store) != NULL,
                  (unsigned long long)sc_store_bg_errors(srv->store, NULL, 0));
    struct sc_sqlite_memory sm;
    sc_store_sqlite_memory(&sm);
    sc_buf_printf(out,
                  "# HELP scorch_sqlite_memory_bytes What SQLite holds: its heap, the slab "
                  "reserved for its page caches (storage.cache_memory), the slab's part in "
                  "use.\n"
                  "# TYPE scorch_sqlite_memory_bytes gauge\n"
                  "scorch_sqlite_memory_bytes{part=\"heap\"} %llu\n"
                  "scorch_sqlite_memory_bytes{part=\"page_cache_slab\"} %llu\n"
                  "scorch_sqlite_memory_bytes{part=\"page_cache_used\"} %llu\n",
                  (unsigned long long)sm.heap, (unsigned long long)sm.slab,
                  (unsigned long long)sm.slab_used);
}
