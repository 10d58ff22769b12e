/* test_ingest.c - Pyroscope pushes: names, formats, units, time shifts, bad input. */
#include "t.h"

#include "formats/folded.h"
#include "formats/input.h"
#include "formats/pprof.h"
#include "ingest/ingest.h"
#include "model/error.h"

#define NS 1000000000LL

static char tmpdir[256];

static struct sc_store *open_store(void)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/scorch-test-ingest-XXXXXX");
    if (!mkdtemp(tmpdir))
        T_SKIP("no temporary directory");
    struct sc_store_opts o;
    sc_store_opts_init(&o);
    o.dir = tmpdir;
    o.background = 0;
    o.retention_ns = 0;
    struct sc_store *s = NULL;
    char err[SC_ERR_LEN];
    if (sc_store_open(&o, &s, err))
        fprintf(stderr, "open: %s\n", err);
    return s;
}

static int parse(const char *name, struct sc_labels *l, uint32_t max, char *sfx, char *err)
{
    sc_labels_release(l);
    sc_labels_init(l);
    return sc_ingest_parse_name(name, l, max, sfx, err);
}

static void test_names(void)
{
    struct sc_labels l;
    sc_labels_init(&l);
    char sfx[32];
    char err[SC_ERR_LEN] = "";
    T_EQ_INT(parse("my.awesome.app.cpu{env=staging, region=us-west-1}", &l, 16, sfx, err), 0);
    T_EQ_INT(l.n, 3);
    T_EQ_STR(t_label(&l, "service_name"), "my.awesome.app");
    T_EQ_STR(t_label(&l, "env"), "staging");
    T_EQ_STR(t_label(&l, "region"), "us-west-1");
    T_EQ_STR(sfx, "cpu");
    /* an unknown last part stays in the name; dotted label names and quoted values */
    T_EQ_INT(parse("svc.v2{otel.scope.name=\"a,b\",x=1}", &l, 16, sfx, err), 0);
    T_EQ_INT(l.n, 3);
    T_EQ_STR(t_label(&l, "service_name"), "svc.v2");
    T_EQ_STR(sfx, "");
    T_EQ_STR(t_label(&l, "otel.scope.name"), "a,b");
    T_EQ_INT(parse("app.alloc_space", &l, 16, sfx, err), 0);
    T_EQ_INT(l.n, 1);
    T_EQ_STR(sfx, "alloc_space");
    T_EQ_INT(parse("", &l, 16, sfx, err), SC_EINVAL);
    T_EQ_INT(parse("app{x}", &l, 16, sfx, err), SC_EINVAL);
    T_EQ_INT(parse("app{a=1", &l, 16, sfx, err), SC_EINVAL);
    T_EQ_INT(parse("app{a=1,a=2}", &l, 16, sfx, err), SC_EINVAL);
    T_CHECK(strstr(err, "duplicate") != NULL);
    T_EQ_INT(parse("app{1bad=x}", &l, 16, sfx, err), SC_EINVAL);
    T_EQ_INT(parse("app{a=1,b=2,c=3}", &l, 3, sfx, err), SC_ELIMIT);
    sc_labels_release(&l);
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

static char *merged(struct sc_store *s, const char *tenant, const char *type)
{
    struct ids ids = {{0}, 0};
    char err[SC_ERR_LEN] = "";
    sc_store_series_list(s, tenant, type, 0, INT64_MAX, collect, &ids, err);
    struct sc_store_query q = {tenant, ids.id, ids.n, type, 0, INT64_MAX, 0};
    struct sc_profile *p = NULL;
    if (sc_store_merge(s, &q, &p, err))
        return strdup(err);
    struct sc_buf b = SC_BUF_INIT;
    sc_folded_write(p, 0, &b, err);
    sc_profile_free(p);
    return b.data ? b.data : strdup("");
}

static void test_pushes(void)
{
    struct sc_store *s = open_store();
    if (!s)
        return;
    const struct sc_limits *lim = &sc_limits_cli;
    char err[SC_ERR_LEN] = "";
    struct sc_ingest_result res;
    /* folded CPU at 100 Hz: samples and nanoseconds */
    const char *folded = "main;work 7\nmain;idle 3\n";
    struct sc_ingest_req r = {.name = "shop.cpu{env=prod}",
                              .from = "1700000000",
                              .until = "1700000010",
                              .format = "folded",
                              .sample_rate = "100",
                              .body = folded,
                              .len = strlen(folded)};
    T_EQ_INT(sc_ingest(s, &r, lim, &res, err), 0);
    T_EQ_STR(res.profile, "cpu");
    T_EQ_STR(res.service, "shop");
    char *f = merged(s, NULL, "cpu:samples");
    T_EQ_STR(f, "main;idle 3\nmain;work 7\n");
    free(f);
    f = merged(s, NULL, "cpu:cpu");
    T_EQ_STR(f, "main;idle 30000000\nmain;work 70000000\n");
    free(f);
    /* lines: one sample per line, at 50 Hz */
    const char *lines = "a;b\na;b\na;c\n";
    struct sc_ingest_req r2 = {.name = "lines",
                               .from = "1700000000000",
                               .format = "lines",
                               .sample_rate = "50",
                               .body = lines,
                               .len = strlen(lines)};
    T_EQ_INT(sc_ingest(s, &r2, lim, &res, err), 0);
    f = merged(s, NULL, "cpu:cpu");
    T_CHECK(strstr(f, "a;b 40000000\n") && strstr(f, "a;c 20000000\n"));
    free(f);
    /* memory units by suffix */
    const char *mem = "main;alloc 4096\n";
    struct sc_ingest_req r3 = {.name = "shop.alloc_space{env=prod}",
                               .from = "1700000000",
                               .body = mem,
                               .len = strlen(mem),
                               .units = "bytes"};
    T_EQ_INT(sc_ingest(s, &r3, lim, &res, err), 0);
    T_EQ_STR(res.profile, "heap");
    f = merged(s, NULL, "heap:alloc_space");
    T_EQ_STR(f, "main;alloc 4096\n");
    free(f);
    /* tenants do not see each other */
    struct sc_ingest_req r4 = r;
    r4.tenant = "acme";
    r4.body = "x;y 1\n";
    r4.len = 6;
    T_EQ_INT(sc_ingest(s, &r4, lim, &res, err), 0);
    f = merged(s, "acme", "cpu:samples");
    T_EQ_STR(f, "x;y 1\n");
    free(f);
    f = merged(s, NULL, "cpu:samples");
    T_CHECK(strstr(f, "x;y") == NULL);
    free(f);
    /* perf script: times shifted by whole seconds into the push's first second */
    const char *perf = "prog 7 [000] 5000.250000: 1 cpu-clock:\n\tffff hot (/bin/prog)\n\n"
                       "prog 7 [000] 5000.750000: 1 cpu-clock:\n\tffff hot (/bin/prog)\n\n";
    struct sc_ingest_req r5 = {.name = "host",
                               .from = "1700000100",
                               .format = "perf_script",
                               .body = perf,
                               .len = strlen(perf)};
    T_EQ_INT(sc_ingest(s, &r5, lim, &res, err), 0);
    struct ids ids = {{0}, 0};
    sc_store_series_list(s, NULL, "cpu:cpu-clock", 0, INT64_MAX, collect, &ids, err);
    T_EQ_INT(ids.n, 1);
    struct sc_store_query q = {NULL, ids.id, ids.n, "cpu:cpu-clock", 0, INT64_MAX, 0};
    struct sc_profile *t = NULL;
    T_EQ_INT(sc_store_timed(s, &q, &t, err), 0);
    if (t && t->nsamples == 2) {
        T_EQ_INT(t->samples[0].time_ns, 1700000100LL * NS + 250000000LL);
        T_EQ_INT(t->samples[1].time_ns, 1700000100LL * NS + 750000000LL);
    } else {
        T_CHECK(0);
    }
    sc_profile_free(t);
    /* JSON formats, detected: the profile's kind from its sample types (a .cpuprofile's cpu,
     * speedscope bytes' heap) */
    const char *v8 = "{\"nodes\":[{\"id\":1,\"callFrame\":{\"functionName\":\"f\"}}],"
                     "\"startTime\":0,\"samples\":[1,1],\"timeDeltas\":[1000,1000]}";
    struct sc_ingest_req r6 = {.name = "node", .body = v8, .len = strlen(v8)};
    T_EQ_INT(sc_ingest(s, &r6, lim, &res, err), 0);
    T_EQ_STR(res.profile, "cpu");
    T_EQ_INT(res.samples, 2);
    const char *ss = "{\"shared\":{\"frames\":[{\"name\":\"g\"}]},\"profiles\":[{\"type\":"
                     "\"sampled\",\"unit\":\"bytes\",\"samples\":[[0]],\"weights\":[64]}]}";
    struct sc_ingest_req r7 = {.name = "py", .format = "speedscope", .body = ss, .len = strlen(ss)};
    T_EQ_INT(sc_ingest(s, &r7, lim, &res, err), 0);
    T_EQ_STR(res.profile, "heap");
    f = merged(s, NULL, "heap:space");
    T_EQ_STR(f, "g 64\n");
    free(f);

    /* bad input: a clear error each */
    struct sc_ingest_req bad = r;
    bad.format = "trie";
    T_EQ_INT(sc_ingest(s, &bad, lim, &res, err), SC_EUNSUPPORTED);
    bad = r;
    bad.from = "yesterday";
    T_EQ_INT(sc_ingest(s, &bad, lim, &res, err), SC_EINVAL);
    T_CHECK(strstr(err, "from") != NULL);
    bad = r;
    bad.format = "pprof";
    bad.body = "\x0a\x05garbage";
    bad.len = 9;
    T_EQ_INT(sc_ingest(s, &bad, lim, &res, err), SC_EFORMAT);
    bad = r;
    bad.name = NULL;
    T_EQ_INT(sc_ingest(s, &bad, lim, &res, err), SC_EINVAL);
    /* a gzip bomb stops at the decompressed limit */
    struct sc_buf zeros = SC_BUF_INIT, gz = SC_BUF_INIT;
    sc_buf_reserve(&zeros, 8 << 20);
    memset(zeros.data, 'a', 8 << 20);
    zeros.len = 8 << 20;
    sc_gzip(zeros.data, zeros.len, 6, &gz);
    struct sc_limits small = sc_limits_cli;
    small.max_decompressed = 1 << 20;
    bad = r;
    bad.body = gz.data;
    bad.len = gz.len;
    T_EQ_INT(sc_ingest(s, &bad, &small, &res, err), SC_ELIMIT);
    sc_buf_release(&zeros);
    sc_buf_release(&gz);
    sc_store_close(s);
    T_EQ_INT(t_rmrf(tmpdir), 0);
}

/* Real Go profiles pushed as pprof: the profile name comes from the pprof itself. */
static void test_pprof_pushes(void)
{
    const char *cpu = t_testdata("pprof/cpu-sort.pb.gz");
    if (!cpu) {
        fprintf(stderr, "  (../shared/testdata absent: pprof pushes skipped)\n");
        return;
    }
    char cpath[4096];
    snprintf(cpath, sizeof cpath, "%s", cpu);
    const char *mem = t_testdata("pprof/mem-sort.pb.gz");
    char mpath[4096];
    snprintf(mpath, sizeof mpath, "%s", mem);
    struct sc_store *s = open_store();
    if (!s)
        return;
    const char *paths[2] = {cpath, mpath}, *want[2] = {"cpu", "heap"};
    for (int i = 0; i < 2; i++) {
        struct sc_input in;
        char err[SC_ERR_LEN] = "";
        T_EQ_INT(sc_input_read(paths[i], 1 << 30, &in, err), 0);
        struct sc_ingest_req r = {.name = "sorter{job=bench}",
                                  .from = "1700000000",
                                  .until = "1700000010",
                                  .format = "pprof",
                                  .spy_name = "gospy",
                                  .body = in.data,
                                  .len = in.len};
        struct sc_ingest_result res;
        T_EQ_INT(sc_ingest(s, &r, &sc_limits_cli, &res, err), 0);
        T_EQ_STR(res.profile, want[i]);
        T_CHECK(res.samples > 20);
        sc_input_release(&in);
    }
    char *f = merged(s, NULL, "heap:alloc_space");
    T_CHECK(strstr(f, "sort_test.BenchmarkSortInt1K_Sorted") != NULL);
    free(f);
    f = merged(s, NULL, "cpu:cpu");
    T_CHECK(strstr(f, "sort.symMerge") != NULL);
    free(f);
    sc_store_close(s);
    T_EQ_INT(t_rmrf(tmpdir), 0);
}

/* A gzipped pprof with one stack main;hot, the given period type and sample types (ntypes
 * names, unit "count" unless the name is wall/cpu/delay: nanoseconds, or ends in space:
 * bytes), each value 10 * (i + 1). Free with sc_buf_release. */
static struct sc_buf make_pprof(const char *period, const char *const *types, int ntypes)
{
    struct sc_profile *p = sc_profile_new();
    for (int i = 0; i < ntypes; i++) {
        const char *t = types[i];
        const char *unit = !strcmp(t, "wall") || !strcmp(t, "cpu") || !strcmp(t, "delay")
                               ? "nanoseconds"
                           : strstr(t, "space") ? "bytes"
                                                : "count";
        sc_profile_add_sample_type(p, t, unit);
        if (!strcmp(t, period))
            p->period_type = p->sample_types[i];
    }
    p->period = 1000;
    uint32_t locs[2];
    const char *names[2] = {"hot", "main"};
    for (int i = 0; i < 2; i++) {
        int64_t nm = sc_profile_intern(p, names[i], strlen(names[i]));
        int64_t fn = sc_profile_add_function(p, (uint32_t)nm, 0);
        locs[i] = (uint32_t)sc_profile_add_simple_location(p, (uint32_t)fn);
    }
    int64_t v[8];
    for (int i = 0; i < ntypes; i++)
        v[i] = 10 * (i + 1);
    sc_profile_add_sample(p, locs, 2, v, 0);
    struct sc_buf raw = SC_BUF_INIT, gz = SC_BUF_INIT;
    sc_pprof_encode(p, &raw);
    sc_gzip(raw.data, raw.len, 6, &gz);
    sc_buf_release(&raw);
    sc_profile_free(p);
    return gz;
}

struct type_list {
    char ids[32][64];
    int gauge[32];
    int n;
};
static int collect_type(void *ctx, const struct sc_store_type *t)
{
    struct type_list *l = ctx;
    if (l->n < 32) {
        snprintf(l->ids[l->n], sizeof l->ids[0], "%s", t->id);
        l->gauge[l->n++] = t->gauge;
    }
    return 0;
}

/* 1 when the tenant's store has type id, with its gauge flag in *gauge. */
static int has_type_id(struct sc_store *s, const char *tenant, const char *id, int *gauge)
{
    struct type_list l;
    memset(&l, 0, sizeof l);
    char err[SC_ERR_LEN];
    sc_store_types(s, tenant, collect_type, &l, err);
    for (int i = 0; i < l.n; i++)
        if (!strcmp(l.ids[i], id)) {
            if (gauge)
                *gauge = l.gauge[i];
            return 1;
        }
    return 0;
}

/* What Pyroscope's clients send: the Node.js client's wall (period wall, with cpu time) and
 * heap (inuse_*) pprofs; the Go client's multipart pushes with sample_type_config naming
 * block and mutex profiles, nanosecond times, and prev_profile (refused). */
static void test_client_pprofs(void)
{
    struct sc_store *s = open_store();
    if (!s)
        return;
    char err[SC_ERR_LEN] = "";
    struct sc_ingest_result res;
    const struct sc_limits *lim = &sc_limits_cli;

    /* Node.js wall profile: period wall, types samples, wall, cpu -> "wall" */
    const char *wall[] = {"samples", "wall", "cpu"};
    struct sc_buf b = make_pprof("wall", wall, 3);
    struct sc_ingest_req r = {.tenant = "n",
                              .name = "nodeapp{region=eu,otel.scope.name=x}",
                              .from = "1700000000",
                              .until = "1700000010",
                              .format = "pprof",
                              .sample_rate = "17",
                              .spy_name = "nodespy",
                              .body = b.data,
                              .len = b.len};
    T_EQ_INT(sc_ingest(s, &r, lim, &res, err), 0);
    T_EQ_STR(res.profile, "wall");
    T_EQ_STR(res.service, "nodeapp");
    int gauge = -1;
    T_CHECK(has_type_id(s, "n", "wall:wall", &gauge));
    T_EQ_INT(gauge, 0);
    T_CHECK(has_type_id(s, "n", "wall:cpu", NULL));
    T_CHECK(has_type_id(s, "n", "wall:samples", NULL));
    T_CHECK(!has_type_id(s, "n", "cpu:cpu", NULL));
    /* sampleRate does not scale a pprof: the values are the profile's own */
    char *f = merged(s, "n", "wall:cpu");
    T_EQ_STR(f, "main;hot 30\n");
    free(f);
    sc_buf_release(&b);

    /* a Go CPU profile (period cpu) is still "cpu" */
    const char *cpu[] = {"samples", "cpu"};
    b = make_pprof("cpu", cpu, 2);
    r.body = b.data;
    r.len = b.len;
    T_EQ_INT(sc_ingest(s, &r, lim, &res, err), 0);
    T_EQ_STR(res.profile, "cpu");
    sc_buf_release(&b);

    /* Node.js heap: inuse_objects, inuse_space (period inuse_space) -> heap, a gauge */
    const char *heap[] = {"inuse_objects", "inuse_space"};
    b = make_pprof("inuse_space", heap, 2);
    r.body = b.data;
    r.len = b.len;
    r.sample_rate = NULL;
    T_EQ_INT(sc_ingest(s, &r, lim, &res, err), 0);
    T_EQ_STR(res.profile, "heap");
    gauge = -1;
    T_CHECK(has_type_id(s, "n", "heap:inuse_space", &gauge));
    T_EQ_INT(gauge, 1);
    sc_buf_release(&b);

    /* Go block and mutex pprofs look alike: sample_type_config's display names decide */
    const char *lock[] = {"contentions", "delay"};
    b = make_pprof("contentions", lock, 2);
    const char *block_cfg = "{\"contentions\": {\"display-name\": \"block_count\", \"units\": "
                            "\"lock_samples\", \"cumulative\": false},\n \"delay\": "
                            "{\"display-name\":\"block_duration\",\"units\":\"lock_nanoseconds\","
                            "\"sampled\": true, \"x\": 1.5e3, \"y\": null}}";
    struct sc_ingest_req g = {.tenant = "g",
                              .name = "goapp{env=prod}",
                              .from = "1700000000123456789",
                              .until = "1700000010123456789",
                              .spy_name = "gospy",
                              .format = "pprof",
                              .units = "",
                              .aggregation = "",
                              .body = b.data,
                              .len = b.len,
                              .sample_type_config = block_cfg,
                              .sample_type_config_len = strlen(block_cfg)};
    T_EQ_INT(sc_ingest(s, &g, lim, &res, err), 0);
    T_EQ_STR(res.profile, "block");
    T_CHECK(has_type_id(s, "g", "block:delay", NULL));
    T_CHECK(has_type_id(s, "g", "block:contentions", NULL));
    /* nanosecond times are kept exactly */
    struct ids ids = {{0}, 0};
    sc_store_series_list(s, "g", "block:delay", 1700000000123456789LL, 1700000000123456790LL,
                         collect, &ids, err);
    T_EQ_INT(ids.n, 1);
    ids.n = 0;
    sc_store_series_list(s, "g", "block:delay", 1700000000123456790LL, 1700000000123456791LL,
                         collect, &ids, err);
    T_EQ_INT(ids.n, 0);
    const char *mutex_cfg = "{\"contentions\":{\"display-name\":\"mutex_count\"},"
                            "\"delay\":{\"display-name\":\"mutex_duration\"}}";
    g.sample_type_config = mutex_cfg;
    g.sample_type_config_len = strlen(mutex_cfg);
    T_EQ_INT(sc_ingest(s, &g, lim, &res, err), 0);
    T_EQ_STR(res.profile, "mutex");
    /* without a config the period type says mutex */
    g.sample_type_config = NULL;
    g.sample_type_config_len = 0;
    T_EQ_INT(sc_ingest(s, &g, lim, &res, err), 0);
    T_EQ_STR(res.profile, "mutex");
    /* a config that names nothing we know, or only types the pprof lacks, changes nothing */
    const char *other = "{\"cpu\":{\"display-name\":\"block_count\"},\"delay\":{\"units\":\"x\"}}";
    g.sample_type_config = other;
    g.sample_type_config_len = strlen(other);
    T_EQ_INT(sc_ingest(s, &g, lim, &res, err), 0);
    T_EQ_STR(res.profile, "mutex");
    /* the name's suffix wins over everything */
    g.name = "goapp.block_count{env=prod}";
    g.sample_type_config = mutex_cfg;
    g.sample_type_config_len = strlen(mutex_cfg);
    T_EQ_INT(sc_ingest(s, &g, lim, &res, err), 0);
    T_EQ_STR(res.profile, "block");
    T_EQ_STR(res.service, "goapp");
    g.name = "goapp{env=prod}";
    /* bad configs and prev_profile: clear errors */
    const char *bad[] = {"",
                         "[]",
                         "{",
                         "{\"a\":1}",
                         "{\"a\":{\"b\"}}",
                         "{\"a\":{}} x",
                         "{\"a\":{\"b\":\"\\q\"}}",
                         "{\"a\":{\"b\":\"unterminated}}"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        g.sample_type_config = bad[i];
        g.sample_type_config_len = strlen(bad[i]);
        /* "" is "no config" */
        T_EQ_INT(sc_ingest(s, &g, lim, &res, err), i == 0 ? 0 : SC_EINVAL);
        if (i)
            T_CHECK(strstr(err, "sample_type_config") != NULL);
    }
    g.sample_type_config = "{}";
    g.sample_type_config_len = 2;
    T_EQ_INT(sc_ingest(s, &g, lim, &res, err), 0);
    g.prev_profile_len = 100;
    T_EQ_INT(sc_ingest(s, &g, lim, &res, err), SC_EUNSUPPORTED);
    T_CHECK(strstr(err, "prev_profile") != NULL);
    sc_buf_release(&b);

    sc_store_close(s);
    T_EQ_INT(t_rmrf(tmpdir), 0);
}

/* sample_type_config is untrusted JSON: every truncation and many random byte changes of a
 * valid one parse or fail cleanly, never reading past the part (ASan checks the copies). */
static void test_config_mutations(void)
{
    const char *cfg = "{\"contentions\": {\"display-name\": \"block_count\", \"units\": "
                      "\"lock_samples\", \"cumulative\": false, \"x\": \"\\u00e9\\\"\"},\n "
                      "\"delay\": {\"display-name\":\"block_duration\",\"sampled\": true}}";
    size_t n = strlen(cfg);
    struct sc_ingest_req r = {.name = "a", .format = "pprof", .body = "\x0a\x05garbage", .len = 9};
    struct sc_ingest_result res;
    char err[SC_ERR_LEN];
    unsigned seed = 12345;
    int bad_config = 0, bad_body = 0;
    for (size_t i = 0; i < n + 3000; i++) {
        size_t len = i <= n ? i : n;
        char *c = malloc(len ? len : 1);
        memcpy(c, cfg, len);
        if (i > n) {
            for (int k = 0; k < 1 + (int)(i % 3); k++) {
                seed = seed * 1103515245u + 12345u;
                size_t at = (seed >> 8) % len;
                seed = seed * 1103515245u + 12345u;
                c[at] = "{}[]\":,\\ tfnu0aZ\x80"[(seed >> 8) % 18];
            }
        }
        r.sample_type_config = c;
        r.sample_type_config_len = len;
        /* a config that parses reaches the body, which does not decode: nothing is written */
        int rc = sc_ingest(NULL, &r, &sc_limits_cli, &res, err);
        T_CHECK(rc == SC_EINVAL || rc == SC_EFORMAT);
        bad_config += rc == SC_EINVAL;
        bad_body += rc == SC_EFORMAT;
        free(c);
    }
    /* both outcomes happen: truncations fail, the whole config and some mutations parse */
    T_CHECK(bad_config > 100 && bad_body > 10);
}

/* A pprof push whose samples carry timestamp_ns labels (scorch record) is stored timed:
 * sc_store_timed returns its samples at their own (unix) times, not shifted. */
static void test_timed_pprof(void)
{
    struct sc_store *s = open_store();
    if (!s)
        return;
    struct sc_profile *p = sc_profile_new();
    sc_profile_add_sample_type(p, "samples", "count");
    sc_profile_add_sample_type(p, "cpu", "nanoseconds");
    p->period_type = p->sample_types[1];
    p->period = 10101010;
    int64_t nm = sc_profile_intern(p, "hot", 3);
    uint32_t loc = (uint32_t)sc_profile_add_simple_location(
        p, (uint32_t)sc_profile_add_function(p, (uint32_t)nm, 0));
    const int64_t times[3] = {1700000100LL * NS + 900000000LL, 1700000101LL * NS + 5000000LL,
                              1700000100LL * NS + 100000000LL};
    for (int i = 0; i < 3; i++) {
        int64_t v[2] = {1, 10101010};
        sc_profile_add_sample(p, &loc, 1, v, times[i]);
    }
    struct sc_buf raw = SC_BUF_INIT;
    T_EQ_INT(sc_pprof_encode(p, &raw), 0);
    struct sc_ingest_req r = {.name = "rec.cpu{host=h1}",
                              .from = "1700000100",
                              .until = "1700000110",
                              .format = "pprof",
                              .body = raw.data,
                              .len = raw.len};
    struct sc_ingest_result res;
    char err[SC_ERR_LEN] = "";
    T_EQ_INT(sc_ingest(s, &r, &sc_limits_cli, &res, err), 0);
    T_EQ_INT(res.samples, 3);
    struct ids ids = {{0}, 0};
    sc_store_series_list(s, NULL, "cpu:samples", 0, INT64_MAX, collect, &ids, err);
    T_EQ_INT(ids.n, 1);
    struct sc_store_query q = {NULL, ids.id, ids.n, "cpu:samples", 0, INT64_MAX, 0};
    struct sc_profile *t = NULL;
    T_EQ_INT(sc_store_timed(s, &q, &t, err), 0);
    T_CHECK(t && t->nsamples == 3);
    if (t && t->nsamples == 3) {
        T_EQ_INT(t->samples[0].time_ns, times[2]);
        T_EQ_INT(t->samples[1].time_ns, times[0]);
        T_EQ_INT(t->samples[2].time_ns, times[1]);
    }
    sc_profile_free(t);
    /* timestamps that are not wall-clock (a perf recording converted to pprof: seconds
     * since boot) are shifted by whole seconds into the push's first second */
    for (uint32_t i = 0; i < p->nsamples; i++)
        p->samples[i].time_ns = 5000 * NS + 250000000LL * (i + 1);
    raw.len = 0;
    T_EQ_INT(sc_pprof_encode(p, &raw), 0);
    struct sc_ingest_req r2 = {.name = "boot.cpu",
                               .from = "1700000200",
                               .format = "pprof",
                               .body = raw.data,
                               .len = raw.len};
    T_EQ_INT(sc_ingest(s, &r2, &sc_limits_cli, &res, err), 0);
    struct ids ids2 = {{0}, 0};
    sc_store_series_list(s, NULL, "cpu:samples", 0, INT64_MAX, collect, &ids2, err);
    uint64_t boot = 0;
    for (uint32_t i = 0; i < ids2.n; i++)
        if (ids2.id[i] != ids.id[0])
            boot = ids2.id[i];
    struct sc_store_query q2 = {NULL, &boot, 1, "cpu:samples", 0, INT64_MAX, 0};
    T_EQ_INT(sc_store_timed(s, &q2, &t, err), 0);
    T_CHECK(t && t->nsamples == 3);
    if (t && t->nsamples == 3)
        T_EQ_INT(t->samples[0].time_ns, 1700000200LL * NS + 250000000LL);
    sc_profile_free(t);
    sc_profile_free(p);
    sc_buf_release(&raw);
    sc_store_close(s);
    T_EQ_INT(t_rmrf(tmpdir), 0);
}

static uint32_t nseries(struct sc_store *s)
{
    struct ids ids = {{0}, 0};
    char err[SC_ERR_LEN] = "";
    sc_store_series_list(s, NULL, "cpu:samples", 0, INT64_MAX, collect, &ids, err);
    return ids.n;
}

/* n folded lines "main;f<i> 1", gzipped as one member and appended to gz. */
static void gzip_lines(struct sc_buf *gz, int n)
{
    struct sc_buf text = SC_BUF_INIT;
    for (int i = 0; i < n; i++)
        sc_buf_printf(&text, "main;f%d 1\n", i);
    T_EQ_INT(sc_gzip(text.data, text.len, 1, gz), 0);
    sc_buf_release(&text);
}

/* The server admits a gzip body at its trailer's claim and holds inflation to it: a body
 * that inflates past the claim reports over_claim (not the message: its words differ) and
 * stores nothing; unclaimed, it is stored once, whole. Past the real limit it is the
 * ordinary SC_ELIMIT (413), claimed or not. */
static void test_gzip_claim(void)
{
    struct sc_store *s = open_store();
    if (!s)
        return;
    char err[SC_ERR_LEN] = "";
    struct sc_ingest_result res;
    /* two members: the trailer tells only the last one's 12 bytes */
    struct sc_buf gz = SC_BUF_INIT;
    gzip_lines(&gz, 5000);
    const char last[] = "main;last 1\n";
    T_EQ_INT(sc_gzip(last, sizeof last - 1, 1, &gz), 0);
    uint64_t claim = sc_gzip_claim(gz.data, gz.len);
    T_EQ_INT(claim, sizeof last - 1);
    T_EQ_INT(sc_gzip_claim(last, sizeof last - 1), 0); /* not gzip */
    struct sc_ingest_req r = {.name = "claim",
                              .from = "1700000000",
                              .format = "folded",
                              .body = gz.data,
                              .len = gz.len,
                              .gzip_claim = claim};
    T_EQ_INT(sc_ingest(s, &r, &sc_limits_cli, &res, err), SC_ELIMIT);
    T_EQ_INT(res.over_claim, 1);
    T_EQ_INT(nseries(s), 0);
    r.gzip_claim = 0;
    T_EQ_INT(sc_ingest(s, &r, &sc_limits_cli, &res, err), 0);
    T_EQ_INT(res.over_claim, 0);
    T_EQ_INT(res.samples, 5001);
    T_EQ_INT(nseries(s), 1);
    char *f = merged(s, NULL, "cpu:samples");
    T_CHECK(strstr(f, "main;last 1\n") && strstr(f, "main;f4999 1\n"));
    free(f);
    /* a trailer that lies: held, over the claim; unclaimed, corrupt (ISIZE is checked) */
    struct sc_buf liar = SC_BUF_INIT;
    gzip_lines(&liar, 5000);
    memcpy(liar.data + liar.len - 4, "\xe8\x03\x00\x00", 4); /* 1000 */
    T_EQ_INT(sc_gzip_claim(liar.data, liar.len), 1000);
    r.name = "liar";
    r.body = liar.data;
    r.len = liar.len;
    r.gzip_claim = 1000;
    T_EQ_INT(sc_ingest(s, &r, &sc_limits_cli, &res, err), SC_ELIMIT);
    T_EQ_INT(res.over_claim, 1);
    r.gzip_claim = 0;
    T_EQ_INT(sc_ingest(s, &r, &sc_limits_cli, &res, err), SC_EFORMAT);
    T_EQ_INT(res.over_claim, 0);
    T_CHECK(strstr(err, "corrupt gzip") != NULL);
    /* an ISIZE DEFLATE could not make of these bytes is no claim */
    memcpy(liar.data + liar.len - 4, "\xff\xff\xff\x7f", 4);
    T_EQ_INT(sc_gzip_claim(liar.data, liar.len), 0);
    /* an honest claim, exactly met, decodes */
    struct sc_buf one = SC_BUF_INIT;
    gzip_lines(&one, 100);
    r.name = "exact";
    r.body = one.data;
    r.len = one.len;
    r.gzip_claim = sc_gzip_claim(one.data, one.len);
    T_EQ_INT(sc_ingest(s, &r, &sc_limits_cli, &res, err), 0);
    T_EQ_INT(res.over_claim, 0);
    T_EQ_INT(res.samples, 100);
    /* too big for the real limit: the ordinary SC_ELIMIT naming it, whether the claim says
     * so (honest, past the limit: not held) or claims little (held, then unclaimed) */
    struct sc_limits small = sc_limits_cli;
    small.max_decompressed = 64 << 10;
    struct sc_buf big = SC_BUF_INIT;
    gzip_lines(&big, 10000); /* 128,890 bytes */
    r.name = "big";
    r.body = big.data;
    r.len = big.len;
    r.gzip_claim = sc_gzip_claim(big.data, big.len);
    T_CHECK(r.gzip_claim > small.max_decompressed);
    T_EQ_INT(sc_ingest(s, &r, &small, &res, err), SC_ELIMIT);
    T_EQ_INT(res.over_claim, 0);
    T_CHECK(strstr(err, "inflates to more than 65536 bytes") != NULL);
    T_EQ_INT(sc_gzip(last, sizeof last - 1, 1, &big), 0);
    r.len = big.len;
    r.body = big.data;
    r.gzip_claim = sc_gzip_claim(big.data, big.len);
    T_EQ_INT(r.gzip_claim, sizeof last - 1);
    T_EQ_INT(sc_ingest(s, &r, &small, &res, err), SC_ELIMIT);
    T_EQ_INT(res.over_claim, 1);
    r.gzip_claim = 0;
    T_EQ_INT(sc_ingest(s, &r, &small, &res, err), SC_ELIMIT);
    T_EQ_INT(res.over_claim, 0);
    T_CHECK(strstr(err, "inflates to more than 65536 bytes") != NULL);
    T_EQ_INT(nseries(s), 2); /* claim and exact; nothing of liar or big */
    /* sc_ingest_inflate itself, as OTLP and Connect use it: held to the claim */
    const void *body = gz.data;
    size_t len = gz.len;
    void *plain = NULL;
    int over = -1;
    T_EQ_INT(sc_ingest_inflate(&body, &len, claim, &sc_limits_cli, &plain, &over, err), SC_ELIMIT);
    T_EQ_INT(over, 1);
    free(plain);
    T_EQ_INT(sc_ingest_inflate(&body, &len, 0, &sc_limits_cli, &plain, &over, err), 0);
    T_EQ_INT(over, 0);
    T_CHECK(len > 5000 * 9 && body == plain &&
            memcmp((const char *)body + len - 12, last, 12) == 0);
    free(plain);
    sc_buf_release(&gz);
    sc_buf_release(&liar);
    sc_buf_release(&one);
    sc_buf_release(&big);
    sc_store_close(s);
    T_EQ_INT(t_rmrf(tmpdir), 0);
}

int main(void)
{
    T_RUN(test_names);
    T_RUN(test_pushes);
    T_RUN(test_pprof_pushes);
    T_RUN(test_timed_pprof);
    T_RUN(test_client_pprofs);
    T_RUN(test_config_mutations);
    T_RUN(test_gzip_claim);
    return t_done();
}
