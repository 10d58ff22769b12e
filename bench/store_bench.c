/* store_bench.c - a realistic day into the store: write rate, merge latency, bytes on disk.
 *
 * The day: 8,640 ten-second CPU profiles of one service (every 10 s for 24 h), ~1,000
 * samples each, stacks drawn with Zipf-like popularity from a shared pool (so most repeat
 * from profile to profile), two sample types (samples/count, cpu/nanoseconds) like Go's.
 * Each generated profile holds only the locations its samples use, as Go writes them.
 *
 * usage: store_bench [DIR] [PROFILES] [THREADS]   (defaults: a temp dir, 8640, 16)
 * env: BENCH_ENGINE=clickhouse with BENCH_CH_URL, BENCH_CH_CLUSTER, BENCH_CH_SHARDS (URLs,
 * comma-separated) and BENCH_CH_DATABASE stores into ClickHouse instead (bench/clickhouse.sh);
 * BENCH_SETTLE=COMMAND runs COMMAND after the fresh merges and times them again
 *        store_bench --open DIR                    (RSS of a fresh process after open)
 * Prints: profiles/s written (durable, group-committed), the .pb.gz bytes the same profiles
 * take (gzip level 1, what Go's runtime/pprof uses), bytes on disk and per sample, and merge
 * times for 24 h, 1 h (aligned and not), 10 min, from rollups. With BENCH_SCALE=1 (a month:
 * bench/query_scale.sh), the merges of the last 1 h, 24 h, 7 d and 30 d and the RSS of a
 * fresh process that opens the store instead. Uses only functions every version of the
 * store has, so the same source measures an older store side by side. */
#include "formats/input.h"
#include "formats/pprof.h"
#include "model/error.h"
#include "store/store.h"

#include <pthread.h>
#include <sys/resource.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define NS 1000000000LL
#define NFUNCS 3000
#define NSTACKS 20000
#define NVARIANTS 128

static uint64_t rng = 88172645463325252ULL;
static uint64_t xorshift(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

/* pool of stacks: function index lists, leaf first */
static uint16_t *pool;
static uint8_t pool_depth[NSTACKS];
#define MAXD 48

static double cpu_seconds(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + ru.ru_stime.tv_sec +
           ru.ru_stime.tv_usec / 1e6;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void make_pool(void)
{
    pool = malloc((size_t)NSTACKS * MAXD * sizeof *pool);
    /* stacks share prefixes: each is a random walk from one of a few roots down a fixed
     * call graph, so callers repeat as in a real service */
    for (int s = 0; s < NSTACKS; s++) {
        int d = 8 + (int)(xorshift() % 32);
        uint16_t path[MAXD];
        uint32_t f = (uint32_t)(xorshift() % 6);
        for (int k = 0; k < d; k++) {
            path[k] = (uint16_t)f;
            f = (uint32_t)((f * 31 + 7 + (xorshift() % 4) * 101) % NFUNCS);
        }
        for (int k = 0; k < d; k++)
            pool[(size_t)s * MAXD + k] = path[d - 1 - k];
        pool_depth[s] = (uint8_t)d;
    }
}

/* Zipf-ish pick: popular stacks much more often */
static int pick(void)
{
    double u = (double)(xorshift() % 1000000) / 1000000.0;
    int s = (int)(NSTACKS * u * u * u);
    return s < NSTACKS ? s : NSTACKS - 1;
}

static struct sc_profile *make_profile(void)
{
    struct sc_profile *p = sc_profile_new();
    sc_profile_add_sample_type(p, "samples", "count");
    sc_profile_add_sample_type(p, "cpu", "nanoseconds");
    p->default_sample_type = p->sample_types[1].type;
    p->period = 10000000;
    p->period_type = p->sample_types[1];
    p->mappings = calloc(1, sizeof *p->mappings);
    p->mappings[0].id = 1;
    p->mappings[0].start = 0x400000;
    p->mappings[0].limit = 0x900000;
    p->mappings[0].filename = (uint32_t)sc_profile_intern(p, "/usr/local/bin/svc", 18);
    p->mappings[0].has_functions = 1;
    p->nmappings = p->mappings_cap = 1;
    int32_t loc_of[NFUNCS];
    memset(loc_of, -1, sizeof loc_of);
    int used[NSTACKS / 8 + 1];
    memset(used, 0, sizeof used);
    int n = 900 + (int)(xorshift() % 200);
    for (int i = 0; i < n; i++) {
        int s = pick();
        if (used[s / 32] & (1 << (s % 32)))
            continue; /* Go aggregates identical stacks */
        used[s / 32] |= 1 << (s % 32);
        uint32_t locs[MAXD];
        for (int k = 0; k < pool_depth[s]; k++) {
            int f = pool[(size_t)s * MAXD + k];
            if (loc_of[f] < 0) {
                char name[64], file[64];
                int nl =
                    snprintf(name, sizeof name, "example.com/svc/pkg%d.(*T).Method%d", f % 97, f);
                int fl = snprintf(file, sizeof file, "/src/svc/pkg%d/file%d.go", f % 97, f % 13);
                int64_t fn =
                    sc_profile_add_function(p, (uint32_t)sc_profile_intern(p, name, (size_t)nl),
                                            (uint32_t)sc_profile_intern(p, file, (size_t)fl));
                int64_t l = sc_profile_add_simple_location(p, (uint32_t)fn);
                p->locations[l].address = 0x400000 + (uint64_t)f * 64;
                p->locations[l].mapping = 1;
                p->lines[p->locations[l].line_start].line = 10 + f % 400;
                loc_of[f] = (int32_t)l;
            }
            locs[k] = (uint32_t)loc_of[f];
        }
        int64_t c = 1 + (int64_t)(xorshift() % 3);
        int64_t v[2] = {c, c * 10000000};
        sc_profile_add_sample(p, locs, pool_depth[s], v, 0);
    }
    return p;
}

static struct sc_profile *variants[NVARIANTS];
static struct sc_store *store;
static int total_profiles;
static int next_profile;
static pthread_mutex_t next_mu = PTHREAD_MUTEX_INITIALIZER;
static int64_t day0;

static void *writer(void *arg)
{
    (void)arg;
    struct sc_labels labels;
    sc_labels_init(&labels);
    sc_labels_set(&labels, "service_name", 12, "checkout", 8);
    sc_labels_set(&labels, "env", 3, "prod", 4);
    sc_labels_set(&labels, "instance", 8, "10.0.0.7:6060", 13);
    for (;;) {
        pthread_mutex_lock(&next_mu);
        int i = next_profile++;
        pthread_mutex_unlock(&next_mu);
        if (i >= total_profiles)
            break;
        struct sc_store_write w = {
            NULL, &labels, "cpu", day0 + (int64_t)i * 10 * NS, 10 * NS, variants[i % NVARIANTS], 0};
        char err[SC_ERR_LEN];
        if (sc_store_write(store, &w, err)) {
            fprintf(stderr, "write: %s\n", err);
            exit(1);
        }
    }
    sc_labels_release(&labels);
    return NULL;
}

struct ids {
    uint64_t id[16];
    uint32_t n;
};
static int collect(void *ctx, const struct sc_store_series *s)
{
    struct ids *x = ctx;
    if (x->n < 16)
        x->id[x->n++] = s->id;
    return 0;
}

static double time_merge(int64_t from, int64_t until, uint32_t *nsamples)
{
    struct ids ids = {{0}, 0};
    char err[SC_ERR_LEN];
    double best = 1e9;
    for (int r = 0; r < 5; r++) {
        double t0 = now();
        ids.n = 0;
        sc_store_series_list(store, NULL, "cpu:cpu", from, until, collect, &ids, err);
        struct sc_store_query q = {"", ids.id, ids.n, "cpu:cpu", from, until, 0};
        struct sc_profile *out;
        if (sc_store_merge(store, &q, &out, err)) {
            fprintf(stderr, "merge: %s\n", err);
            exit(1);
        }
        double dt = now() - t0;
        *nsamples = out->nsamples;
        sc_profile_free(out);
        if (dt < best)
            best = dt;
    }
    return best;
}

static long rss_kb(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kb = -1;
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, "VmRSS:", 6))
            kb = strtol(line + 6, NULL, 10);
    if (f)
        fclose(f);
    return kb;
}

/* --open DIR: the RSS of this fresh process once the store is open. */
static int open_only(const char *dir)
{
    struct sc_store_opts o;
    sc_store_opts_init(&o);
    o.dir = dir;
    o.background = 0;
    o.retention_ns = 0;
    char err[SC_ERR_LEN];
    long before = rss_kb();
    double t0 = now();
    if (sc_store_open(&o, &store, err)) {
        fprintf(stderr, "%s\n", err);
        return 1;
    }
    printf("open: %.0f ms, RSS %.1f MB (%.1f MB before open)\n", (now() - t0) * 1e3,
           rss_kb() / 1024.0, before / 1024.0);
    sc_store_close(store);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc > 2 && !strcmp(argv[1], "--open"))
        return open_only(argv[2]);
    if (argc > 1 && argv[1][0] == '-') {
        /* a DIR starting with '-' is an option mistaken for one: a store named --help */
        fprintf(stderr, "usage: store_bench [DIR] [PROFILES] [THREADS]   (defaults: a "
                        "temporary directory, 8640, 16)\n       store_bench --open DIR\n");
        return strcmp(argv[1], "--help") && strcmp(argv[1], "-h") ? 2 : 0;
    }
    char dir[256];
    if (argc > 1 && argv[1][0]) {
        snprintf(dir, sizeof dir, "%s", argv[1]);
    } else {
        snprintf(dir, sizeof dir, "/tmp/scorch-store-bench-XXXXXX");
        if (!mkdtemp(dir))
            return 1;
    }
    total_profiles = argc > 2 ? atoi(argv[2]) : 8640;
    int threads = argc > 3 ? atoi(argv[3]) : 16;
    make_pool();
    uint64_t gz_bytes = 0, samples = 0;
    for (int i = 0; i < NVARIANTS; i++) {
        variants[i] = make_profile();
        struct sc_buf raw = SC_BUF_INIT, gz = SC_BUF_INIT;
        sc_pprof_encode(variants[i], &raw);
        sc_gzip(raw.data, raw.len, 1, &gz);
        gz_bytes += gz.len;
        samples += variants[i]->nsamples;
        sc_buf_release(&raw);
        sc_buf_release(&gz);
    }
    /* the whole day's .pb.gz bytes and samples, from the variants' averages */
    double per_gz = (double)gz_bytes / NVARIANTS, per_samples = (double)samples / NVARIANTS;
    struct sc_store_opts o;
    sc_store_opts_init(&o);
    o.dir = dir;
    o.background = 0;
    o.retention_ns = 0;
    if (getenv("BENCH_NO_FSYNC"))
        o.durable = 0; /* to see what the fsyncs cost */
    const char *shards[16];
    char shard_list[4096] = "";
    if (getenv("BENCH_ENGINE")) {
        o.engine = getenv("BENCH_ENGINE");
        o.url = getenv("BENCH_CH_URL");
        o.cluster = getenv("BENCH_CH_CLUSTER");
        o.database = getenv("BENCH_CH_DATABASE");
        snprintf(shard_list, sizeof shard_list, "%s",
                 getenv("BENCH_CH_SHARDS") ? getenv("BENCH_CH_SHARDS") : "");
        for (char *t = strtok(shard_list, ","); t && o.nshards < 16; t = strtok(NULL, ","))
            shards[o.nshards++] = t;
        o.shards = shards;
    }
    int ch = o.engine && !strcmp(o.engine, "clickhouse");
    char err[SC_ERR_LEN];
    if (sc_store_open(&o, &store, err)) {
        fprintf(stderr, "%s\n", err);
        return 1;
    }
    day0 = (int64_t)1700006400 * NS; /* a day boundary is not needed; an hour one is */
    double t0 = now(), c0 = cpu_seconds();
    pthread_t tid[64];
    if (threads > 64)
        threads = 64;
    for (int i = 0; i < threads; i++)
        pthread_create(&tid[i], NULL, writer, NULL);
    for (int i = 0; i < threads; i++)
        pthread_join(tid[i], NULL);
    double wt = now() - t0, wcpu = cpu_seconds() - c0;
    t0 = now();
    if (sc_store_compact(store, day0 + 48 * 3600 * NS, 1, err)) {
        fprintf(stderr, "compact: %s\n", err);
        return 1;
    }
    double ct = now() - t0;
    struct sc_store_stats st;
    sc_store_stats(store, &st, err);
    /* merges from rollups: a day, an aligned and an unaligned hour, ten minutes */
    uint32_t n24, n1, n1u, n10;
    int64_t end = day0 + (int64_t)total_profiles * 10 * NS;
    if (getenv("BENCH_SCALE")) {
        /* a month: the last 1 h, 24 h, 7 d and 30 d, as a UI asks for them (unaligned) */
        static const int64_t spans[] = {3600, 86400, 7 * 86400, 30 * 86400};
        static const char *const names[] = {"1 h", "24 h", "7 d", "30 d"};
        for (int k = 0; k < 4; k++) {
            uint32_t n;
            double m = time_merge(end - 37 * NS - spans[k] * NS, end - 37 * NS, &n);
            printf("merge last %-5s        %.1f ms (%u stacks)\n", names[k], m * 1e3, n);
        }
    }
    double m24 = time_merge(day0, end, &n24);
    double m1 = time_merge(end - 3600 * NS, end, &n1);
    double m1u = time_merge(end - 3600 * NS - 37 * NS, end - 37 * NS, &n1u);
    double m10 = time_merge(end - 600 * NS - 5 * NS, end - 5 * NS, &n10);
    if (getenv("BENCH_SETTLE")) {
        /* the merges again once the backend's own upkeep caught up (ClickHouse merging its
         * parts): what a store under steady ingest answers, next to the fresh figures */
        printf("merges right after writing: 24 h %.1f ms, 1 h %.1f ms, 1 h unaligned %.1f ms, "
               "10 min %.1f ms\n",
               m24 * 1e3, m1 * 1e3, m1u * 1e3, m10 * 1e3);
        fflush(stdout);
        if (system(getenv("BENCH_SETTLE")) != 0) {
            fprintf(stderr, "BENCH_SETTLE failed\n");
            return 1;
        }
        m24 = time_merge(day0, end, &n24);
        m1 = time_merge(end - 3600 * NS, end, &n1);
        m1u = time_merge(end - 3600 * NS - 37 * NS, end - 37 * NS, &n1u);
        m10 = time_merge(end - 600 * NS - 5 * NS, end - 5 * NS, &n10);
    }
    sc_store_close(store);
    struct sc_store_opts o2 = o;
    (void)o2;
    /* WAL checkpointed at close: measure the database file itself now */
    char path[300];
    snprintf(path, sizeof path, "%s/scorch.db", dir);
    FILE *f = fopen(path, "rb");
    long disk = ch ? (long)st.bytes_on_disk : 0; /* ClickHouse's parts, all shards */
    if (f && !ch) {
        fseek(f, 0, SEEK_END);
        disk = ftell(f);
        fclose(f);
    }
    double day_gz = per_gz * total_profiles, day_samples = per_samples * total_profiles;
    printf("profiles written:        %d (%d threads, %s, group commit)\n", total_profiles, threads,
           ch          ? "confirmed by ClickHouse"
           : o.durable ? "durable"
                       : "not fsync'd");
    printf("write rate:              %.0f profiles/s (%.2f s; %.0f us of CPU per profile)\n",
           total_profiles / wt, wt, wcpu * 1e6 / total_profiles);
    printf("rollup compaction:       %.2f s\n", ct);
    printf("samples written:         %.0f (%.0f per profile)\n", day_samples, per_samples);
    printf(".pb.gz bytes (gzip -1):  %.0f\n", day_gz);
    printf("bytes on disk:           %ld (%.3fx the .pb.gz bytes, %.2f bytes/sample)\n", disk,
           disk / day_gz, disk / day_samples);
    printf("stacks %llu, frames %llu, rollups %llu\n", (unsigned long long)st.stacks,
           (unsigned long long)st.frames, (unsigned long long)st.rollups);
    printf("merge 24 h:              %.1f ms (%u stacks)\n", m24 * 1e3, n24);
    printf("merge 1 h (aligned):     %.1f ms (%u stacks)\n", m1 * 1e3, n1);
    printf("merge 1 h (unaligned):   %.1f ms (%u stacks)\n", m1u * 1e3, n1u);
    printf("merge 10 min:            %.1f ms (%u stacks)\n", m10 * 1e3, n10);
    if (argc <= 1 || !argv[1][0]) {
        char cmd[300];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
        if (system(cmd) != 0)
            return 1;
    }
    for (int i = 0; i < NVARIANTS; i++)
        sc_profile_free(variants[i]);
    free(pool);
    return 0;
}
