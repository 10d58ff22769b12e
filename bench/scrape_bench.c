/* scrape_bench.c - the scraper against many targets: schedule lag and CPU (bench/scrape.sh).
 *
 * usage: scrape_bench CONFIG SECONDS [STORE_DIR]
 *
 * Runs the scraper library on CONFIG's scrape_configs for SECONDS. The sink counts what it
 * gets, or writes into a store in STORE_DIR (the server's sink). Prints how late requests
 * started against their slots on the schedule (the scraper's own clock), the CPU time of the
 * scraping thread (libcurl multi: scheduling and I/O), of the two worker threads (gunzip,
 * decode, type selection, deltas, encode, sink) and of the whole process. */
#include "collect/scrape.h"
#include "model/error.h"
#include "config/config.h"
#include "store/store.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

static atomic_ullong n_profiles, n_bytes, n_samples;
static struct sc_store *store;

static int sink(void *ctx, const struct sc_scraped *p, char *err)
{
    (void)ctx;
    atomic_fetch_add(&n_profiles, 1);
    atomic_fetch_add(&n_bytes, p->len);
    atomic_fetch_add(&n_samples, p->samples);
    return store ? sc_scrape_store_sink(store, p, err) : 0;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static double process_cpu(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + ru.ru_stime.tv_sec +
           ru.ru_stime.tv_usec / 1e6;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: scrape_bench CONFIG SECONDS [STORE_DIR]\n");
        return 2;
    }
    struct rlimit rl;
    if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
    char err[SC_ERR_LEN] = "";
    struct sc_config cf;
    if (sc_config_load(argv[1], &cf, err)) {
        fprintf(stderr, "scrape_bench: %s\n", err);
        return 1;
    }
    double seconds = atof(argv[2]);
    if (argc > 3) {
        struct sc_store_opts so;
        sc_store_opts_init(&so);
        so.dir = argv[3];
        if (sc_store_open(&so, &store, err)) {
            fprintf(stderr, "scrape_bench: %s\n", err);
            return 1;
        }
    }
    struct sc_scraper *s;
    if (sc_scraper_new(&cf, sink, NULL, &s, err) || sc_scraper_start(s, err)) {
        fprintf(stderr, "scrape_bench: %s\n", err);
        return 1;
    }
    double t0 = now(), c0 = process_cpu();
    while (now() - t0 < seconds) {
        struct timespec ts = {1, 0};
        nanosleep(&ts, NULL);
    }
    struct sc_scraper_stats st;
    sc_scraper_stats(s, &st);
    double wall = now() - t0, cpu = process_cpu() - c0;
    /* the p99 start lag, as the upper bound of its histogram bucket */
    uint64_t cum = 0, want = st.lag_count - st.lag_count / 100;
    double p99 = 0;
    for (int i = 0; i < SC_SCRAPE_LAG_BUCKETS; i++) {
        cum += st.lag_buckets[i];
        if (cum >= want) {
            p99 = sc_scrape_lag_bounds[i];
            break;
        }
    }
    printf("tasks %llu\nrequests_started %llu\nscrapes %llu\nerrors %llu\nskipped %llu\n"
           "profiles %llu\nprofile_bytes %llu\nsamples %llu\nbacklog_dropped %llu\n",
           (unsigned long long)st.tasks, (unsigned long long)st.lag_count,
           (unsigned long long)st.scrapes, (unsigned long long)st.errors,
           (unsigned long long)st.skipped, (unsigned long long)atomic_load(&n_profiles),
           (unsigned long long)atomic_load(&n_bytes), (unsigned long long)atomic_load(&n_samples),
           (unsigned long long)st.backlog_dropped);
    printf("lag_max_s %.6f\nlag_p99_le_s %g\n", st.lag_max_ns / 1e9, p99);
    printf("lag_histogram");
    for (int i = 0; i < SC_SCRAPE_LAG_BUCKETS; i++)
        printf(" le%g:%llu", sc_scrape_lag_bounds[i] > 1e100 ? 1e9 : sc_scrape_lag_bounds[i],
               (unsigned long long)st.lag_buckets[i]);
    printf("\nwall_s %.1f\nscrape_thread_cpu_s %.3f\nworker_threads_cpu_s %.3f\n"
           "sink_cpu_s %.3f\nprocess_cpu_s %.3f\n",
           wall, st.scraper_cpu_ns / 1e9, st.workers_cpu_ns / 1e9, st.sink_cpu_ns / 1e9, cpu);
    if (st.errors) {
        struct sc_buf j = SC_BUF_INIT;
        sc_scraper_targets_json(s, &j);
        /* the first few errors, for the curious */
        int shown = 0;
        for (char *p = j.data; p && shown < 3 && (p = strstr(p, "\"last_error\":\"")); shown++) {
            p += 14;
            char *e = strchr(p, '"');
            if (e && e > p)
                fprintf(stderr, "scrape_bench: an error: %.*s\n", (int)(e - p), p);
            else
                shown--;
        }
        sc_buf_release(&j);
    }
    sc_scraper_stop_free(s);
    sc_store_close(store);
    sc_config_release(&cf);
    return 0;
}
