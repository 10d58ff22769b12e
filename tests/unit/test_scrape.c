/* test_scrape.c - per-interval deltas, type selection, push names, scrape config checks. */
#include "t.h"

#include "collect/delta.h"
#include "collect/scrape.h"
#include "formats/input.h"
#include "formats/pprof.h"
#include "model/error.h"
#include "config/config.h"

#include <time.h>

/* A profile built from a tiny description: sample types, then samples whose stacks are
 * function names (leaf first, ';' separated) with values and an optional "bytes" label. */
struct spec {
    const char *stack;
    int64_t v[4];
    int64_t bytes; /* 0: no label */
};

static int64_t fn_loc(struct sc_profile *p, const char *name, size_t len)
{
    for (uint32_t f = 0; f < p->nfunctions; f++) {
        struct sc_str s = sc_function_name(p, f);
        if (s.len == len && !memcmp(s.ptr, name, len))
            for (uint32_t l = 0; l < p->nlocations; l++)
                if (p->lines[p->locations[l].line_start].function == f + 1)
                    return l;
    }
    int64_t f = sc_profile_add_function(p, (uint32_t)sc_profile_intern(p, name, len), 0);
    return sc_profile_add_simple_location(p, (uint32_t)f);
}

static struct sc_profile *build(const char *const *types, uint32_t nt, const struct spec *s,
                                uint32_t n)
{
    struct sc_profile *p = sc_profile_new();
    for (uint32_t i = 0; i < nt; i++)
        sc_profile_add_sample_type(p, types[i], strstr(types[i], "space") ? "bytes" : "count");
    for (uint32_t i = 0; i < n; i++) {
        uint32_t locs[8], nl = 0;
        for (const char *a = s[i].stack; *a && nl < 8;) {
            const char *e = strchr(a, ';');
            size_t len = e ? (size_t)(e - a) : strlen(a);
            locs[nl++] = (uint32_t)fn_loc(p, a, len);
            a += len + (e ? 1 : 0);
        }
        sc_profile_add_sample(p, locs, nl, s[i].v, 0);
        if (s[i].bytes)
            sc_profile_add_label(p, (uint32_t)sc_profile_intern(p, "bytes", 5), 0, s[i].bytes, 0);
    }
    return p;
}

/* Value of type t of the sample whose leaf function is name (summed), -1 when absent. */
static int64_t value_of(const struct sc_profile *p, const char *leaf, uint32_t t)
{
    int64_t v = -1;
    for (uint32_t i = 0; i < p->nsamples; i++) {
        const struct sc_location *l = &p->locations[p->sample_locs[p->samples[i].loc_start]];
        struct sc_str s = sc_function_name(p, p->lines[l->line_start].function - 1);
        if (s.len == strlen(leaf) && !memcmp(s.ptr, leaf, s.len))
            v = (v < 0 ? 0 : v) + p->values[(size_t)i * p->nsample_types + t];
    }
    return v;
}

static int no_negative(const struct sc_profile *p)
{
    for (size_t i = 0; i < (size_t)p->nsamples * p->nsample_types; i++)
        if (p->values[i] < 0)
            return 0;
    return 1;
}

static const char *const heap_types[] = {"alloc_objects", "alloc_space", "inuse_objects",
                                         "inuse_space"};
static const char *const two[] = {"contentions", "delay"};

static void test_keep_types(void)
{
    struct spec s[] = {
        {"main.grow;main.main", {10, 1000, 2, 200}, 0},
        {"main.temp;main.main", {50, 5000, 0, 0}, 0}, /* freed: nothing in use */
        {"main.cache;main.main", {3, 300, 3, 300}, 0},
    };
    struct sc_profile *p = build(heap_types, 4, s, 3);
    char err[SC_ERR_LEN] = "";
    const char *const inuse[] = {"inuse_objects", "inuse_space"};
    T_EQ_INT(sc_profile_keep_types(p, inuse, 2, err), 0);
    T_EQ_INT(p->nsample_types, 2);
    struct sc_str t0 = sc_profile_str(p, p->sample_types[0].type);
    struct sc_str d = sc_profile_str(p, p->default_sample_type);
    T_EQ_MEM(t0.ptr, t0.len, "inuse_objects");
    T_EQ_MEM(d.ptr, d.len, "inuse_space");
    T_EQ_INT(p->nsamples, 2); /* main.temp had nothing in use */
    T_EQ_INT(value_of(p, "main.grow", 1), 200);
    T_EQ_INT(value_of(p, "main.cache", 0), 3);
    T_EQ_INT(value_of(p, "main.temp", 1), -1);
    sc_profile_free(p);

    p = build(heap_types, 4, s, 3);
    const char *const alloc[] = {"alloc_objects", "alloc_space"};
    T_EQ_INT(sc_profile_keep_types(p, alloc, 2, err), 0);
    T_EQ_INT(p->nsamples, 3);
    T_EQ_INT(value_of(p, "main.temp", 1), 5000);
    T_EQ_INT(value_of(p, "main.grow", 0), 10);
    sc_profile_free(p);

    p = build(two, 2, s, 1);
    T_EQ_INT(sc_profile_keep_types(p, inuse, 2, err), SC_ENOTFOUND);
    T_CHECK(strstr(err, "inuse_objects") && strstr(err, "contentions"));
    sc_profile_free(p);
}

static void test_delta_subtract(void)
{
    struct sc_delta d;
    sc_delta_init(&d);
    char err[SC_ERR_LEN] = "";
    struct spec a[] = {{"main.lock;main.main", {10, 100}, 0}, {"main.wait;main.main", {5, 50}, 0}};
    struct sc_profile *p = build(two, 2, a, 2);
    T_EQ_INT(sc_delta_apply(&d, p, err), SC_DELTA_FIRST);
    T_EQ_INT(p->nsamples, 0); /* the first scrape only makes the baseline */
    sc_profile_free(p);

    /* the same stacks in another order and other location ids; a new stack */
    struct spec b[] = {{"main.new;main.main", {3, 30}, 0},
                       {"main.wait;main.main", {5, 50}, 0},
                       {"main.lock;main.main", {15, 150}, 0}};
    p = build(two, 2, b, 3);
    T_EQ_INT(sc_delta_apply(&d, p, err), SC_DELTA_DIFF);
    T_EQ_INT(p->nsamples, 2); /* main.wait did not move: dropped */
    T_EQ_INT(value_of(p, "main.lock", 0), 5);
    T_EQ_INT(value_of(p, "main.lock", 1), 50);
    T_EQ_INT(value_of(p, "main.new", 1), 30);
    T_EQ_INT(value_of(p, "main.wait", 0), -1);
    sc_profile_free(p);

    /* the baseline moved on: the next delta is against b, not a */
    struct spec c[] = {{"main.lock;main.main", {16, 160}, 0},
                       {"main.wait;main.main", {5, 50}, 0},
                       {"main.new;main.main", {3, 30}, 0}};
    p = build(two, 2, c, 3);
    T_EQ_INT(sc_delta_apply(&d, p, err), SC_DELTA_DIFF);
    T_EQ_INT(p->nsamples, 1);
    T_EQ_INT(value_of(p, "main.lock", 1), 10);
    sc_profile_free(p);

    /* nothing happened: an empty delta */
    p = build(two, 2, c, 3);
    T_EQ_INT(sc_delta_apply(&d, p, err), SC_DELTA_DIFF);
    T_EQ_INT(p->nsamples, 0);
    sc_profile_free(p);
    sc_delta_release(&d);
}

static void test_delta_stack_identity(void)
{
    struct sc_delta d;
    sc_delta_init(&d);
    char err[SC_ERR_LEN] = "";
    /* the same leaf under different callers is a different stack */
    struct spec a[] = {{"main.alloc;main.a", {1, 100}, 0}, {"main.alloc;main.b", {1, 100}, 0}};
    struct spec b[] = {{"main.alloc;main.a", {1, 100}, 0}, {"main.alloc;main.b", {2, 300}, 0}};
    struct sc_profile *p = build(two, 2, a, 2);
    sc_delta_apply(&d, p, err);
    sc_profile_free(p);
    p = build(two, 2, b, 2);
    T_EQ_INT(sc_delta_apply(&d, p, err), SC_DELTA_DIFF);
    T_EQ_INT(p->nsamples, 1);
    T_EQ_INT(value_of(p, "main.alloc", 1), 200);
    sc_profile_free(p);
    sc_delta_release(&d);

    /* Go's heap buckets are per stack and size: the bytes label is part of the key */
    sc_delta_init(&d);
    const char *const alloc[] = {"alloc_objects", "alloc_space"};
    struct spec h1[] = {{"main.mk;main.main", {10, 640}, 64},
                        {"main.mk;main.main", {1, 4096}, 4096}};
    struct spec h2[] = {{"main.mk;main.main", {12, 768}, 64},
                        {"main.mk;main.main", {1, 4096}, 4096}};
    p = build(alloc, 2, h1, 2);
    sc_delta_apply(&d, p, err);
    sc_profile_free(p);
    p = build(alloc, 2, h2, 2);
    T_EQ_INT(sc_delta_apply(&d, p, err), SC_DELTA_DIFF);
    T_EQ_INT(p->nsamples, 1);
    T_EQ_INT(value_of(p, "main.mk", 1), 128);
    T_EQ_INT(p->labels[p->samples[0].label_start].num, 64);
    sc_profile_free(p);
    sc_delta_release(&d);

    /* two samples with one key (pprof allows it): summed, the delta goes to the first */
    sc_delta_init(&d);
    struct spec u1[] = {{"main.x", {4, 40}, 0}, {"main.x", {6, 60}, 0}};
    struct spec u2[] = {{"main.x", {8, 80}, 0}, {"main.x", {7, 70}, 0}};
    p = build(two, 2, u1, 2);
    sc_delta_apply(&d, p, err);
    sc_profile_free(p);
    p = build(two, 2, u2, 2);
    T_EQ_INT(sc_delta_apply(&d, p, err), SC_DELTA_DIFF);
    T_EQ_INT(p->nsamples, 1);
    T_EQ_INT(value_of(p, "main.x", 0), 5);
    T_EQ_INT(value_of(p, "main.x", 1), 50);
    sc_profile_free(p);
    sc_delta_release(&d);
}

static void test_delta_restart(void)
{
    struct sc_delta d;
    sc_delta_init(&d);
    char err[SC_ERR_LEN] = "";
    struct spec a[] = {{"main.lock", {100, 1000}, 0}, {"main.wait", {100, 1000}, 0}};
    struct sc_profile *p = build(two, 2, a, 2);
    sc_delta_apply(&d, p, err);
    sc_profile_free(p);
    /* the process restarted: its counters start again from zero */
    struct spec b[] = {{"main.lock", {10, 100}, 0}};
    p = build(two, 2, b, 1);
    T_EQ_INT(sc_delta_apply(&d, p, err), SC_DELTA_RESTART);
    T_EQ_INT(p->nsamples, 1);
    T_EQ_INT(value_of(p, "main.lock", 1), 100); /* everything since the restart */
    T_CHECK(no_negative(p));
    sc_profile_free(p);
    /* ... and it is the new baseline */
    struct spec c[] = {{"main.lock", {25, 250}, 0}, {"main.wait", {1, 10}, 0}};
    p = build(two, 2, c, 2);
    T_EQ_INT(sc_delta_apply(&d, p, err), SC_DELTA_DIFF);
    T_EQ_INT(value_of(p, "main.lock", 1), 150);
    T_EQ_INT(value_of(p, "main.wait", 1), 10);
    sc_profile_free(p);

    /* a restart whose new counters already passed the old total: the old stacks vanished */
    struct spec e1[] = {{"main.a", {50, 500}, 0}, {"main.b", {50, 500}, 0}};
    struct spec e2[] = {{"main.a", {60, 600}, 0}, {"main.c", {45, 450}, 0}};
    p = build(two, 2, e1, 2);
    sc_delta_apply(&d, p, err);
    sc_profile_free(p);
    p = build(two, 2, e2, 2);
    T_EQ_INT(sc_delta_apply(&d, p, err), SC_DELTA_RESTART);
    T_EQ_INT(value_of(p, "main.c", 1), 450);
    sc_profile_free(p);

    /* one stack a little lower while the rest grew (Go's unsampling can do that): not a
     * restart, the stack is clamped at zero */
    struct spec f1[] = {{"main.a", {100, 1000}, 0}, {"main.b", {10, 100}, 0}};
    struct spec f2[] = {{"main.a", {200, 2000}, 0}, {"main.b", {9, 99}, 0}};
    p = build(two, 2, f1, 2);
    sc_delta_apply(&d, p, err);
    sc_profile_free(p);
    p = build(two, 2, f2, 2);
    T_EQ_INT(sc_delta_apply(&d, p, err), SC_DELTA_DIFF);
    T_EQ_INT(value_of(p, "main.a", 1), 1000);
    T_EQ_INT(value_of(p, "main.b", 1), -1);
    T_CHECK(no_negative(p));
    sc_profile_free(p);
    sc_delta_release(&d);
}

static void test_delta_types_change(void)
{
    struct sc_delta d;
    sc_delta_init(&d);
    char err[SC_ERR_LEN] = "";
    struct spec a[] = {{"main.a", {1, 2}, 0}};
    struct sc_profile *p = build(two, 2, a, 1);
    T_EQ_INT(sc_delta_apply(&d, p, err), SC_DELTA_FIRST);
    sc_profile_free(p);
    const char *const other[] = {"alloc_objects", "alloc_space"};
    p = build(other, 2, a, 1);
    T_EQ_INT(sc_delta_apply(&d, p, err), SC_DELTA_FIRST);
    sc_profile_free(p);
    p = build(other, 2, a, 1);
    T_EQ_INT(sc_delta_apply(&d, p, err), SC_DELTA_DIFF);
    T_EQ_INT(p->nsamples, 0);
    sc_profile_free(p);
    sc_delta_release(&d);
}

/* A real Go allocs profile against itself with one stack grown, through pprof bytes. */
static void test_delta_real_profile(void)
{
    const char *path = t_testdata("pprof/mem-sort.pb.gz");
    if (!path) {
        fprintf(stderr, "(../shared/testdata absent: real-profile delta skipped)\n");
        return;
    }
    char err[SC_ERR_LEN] = "";
    struct sc_decode_opts o = {0};
    struct sc_profile *a = NULL, *b = NULL;
    T_EQ_INT(sc_load(path, &o, &a, err), 0);
    T_EQ_INT(sc_load(path, &o, &b, err), 0);
    if (!a || !b)
        return;
    const char *const alloc[] = {"alloc_objects", "alloc_space"};
    T_EQ_INT(sc_profile_keep_types(a, alloc, 2, err), 0);
    T_EQ_INT(sc_profile_keep_types(b, alloc, 2, err), 0);
    T_CHECK(b->nsamples > 10);
    b->values[2 * 3 + 1] += 4096; /* sample 3 allocated 4096 bytes more */
    b->values[2 * 3] += 1;
    struct sc_delta d;
    sc_delta_init(&d);
    T_EQ_INT(sc_delta_apply(&d, a, err), SC_DELTA_FIRST);
    T_EQ_INT(sc_delta_apply(&d, b, err), SC_DELTA_DIFF);
    T_EQ_INT(b->nsamples, 1);
    T_EQ_INT(b->values[1], 4096);
    T_EQ_INT(b->values[0], 1);
    /* it encodes to a pprof that decodes to the same */
    struct sc_buf enc = SC_BUF_INIT;
    T_EQ_INT(sc_pprof_encode(b, &enc), 0);
    struct sc_profile *c = sc_profile_new();
    T_EQ_INT(sc_pprof_decode(enc.data, enc.len, &sc_limits_cli, c, err), 0);
    T_EQ_INT(c->nsamples, 1);
    T_EQ_INT(c->values[1], 4096);
    sc_profile_free(c);
    sc_buf_release(&enc);
    sc_delta_release(&d);
    sc_profile_free(a);
    sc_profile_free(b);
}

static void test_push_query(void)
{
    struct sc_labels l;
    sc_labels_init(&l);
    sc_labels_set(&l, "service_name", 12, "api", 3);
    sc_labels_set(&l, "job", 3, "api", 3);
    sc_labels_set(&l, "instance", 8, "10.0.0.1:6060", 13);
    sc_labels_set(&l, "env", 3, "prod, eu", 8);
    struct sc_scraped p = {.job = "api",
                           .instance = "10.0.0.1:6060",
                           .profile = "block",
                           .service_name = "api",
                           .labels = &l,
                           .from_ns = 1700000000400000000LL,
                           .until_ns = 1700000015600000000LL};
    struct sc_buf q = SC_BUF_INIT;
    char err[SC_ERR_LEN] = "";
    T_EQ_INT(sc_scrape_push_query(&p, &q, err), 0);
    T_EQ_STR(q.data, "name=api.block_count%7Benv%3D%22prod%2C%20eu%22%2Cinstance%3D%2210.0.0.1%"
                     "3A6060%22%2Cjob%3D%22api%22%7D&from=1700000000&until=1700000016"
                     "&format=pprof");
    q.len = 0;
    p.profile = "allocs";
    T_EQ_INT(sc_scrape_push_query(&p, &q, err), 0);
    T_CHECK(!strncmp(q.data, "name=api%7Benv", 14)); /* no suffix: derived from the types */
    q.len = 0;
    sc_labels_set(&l, "bad", 3, "a\"b", 3);
    T_EQ_INT(sc_scrape_push_query(&p, &q, err), SC_EINVAL);
    sc_buf_release(&q);
    sc_labels_release(&l);
}

static int parse(const char *y, struct sc_config *c, char *err)
{
    return sc_config_parse(y, strlen(y), "t.yaml", c, err);
}

static void test_config(void)
{
    struct sc_config c;
    char err[SC_ERR_LEN] = "";
    T_EQ_INT(parse("scrape_configs:\n"
                   "  - job_name: a\n"
                   "    scrape_interval: 5s\n"
                   "    targets: ['127.0.0.1:1']\n"
                   "    delta: subtract\n"
                   "  - job_name: b\n"
                   "    scrape_interval: 1m\n"
                   "    targets: ['127.0.0.1:2']\n"
                   "remote_write: {url: 'http://x:4040', queue_max_bytes: 64MiB,\n"
                   "               min_backoff: 100ms, max_backoff: 1m, timeout: 5s}\n",
                   &c, err),
             0);
    T_EQ_INT(c.jobs[0].delta, SC_DELTA_SUBTRACT);
    T_EQ_INT(c.jobs[1].delta, SC_DELTA_AUTO);
    T_EQ_INT(c.jobs[0].timeout_ns, 5000000000LL); /* at most the interval */
    T_EQ_INT(c.jobs[1].timeout_ns, 10000000000LL);
    T_EQ_INT(c.remote_queue_bytes, 64u << 20);
    T_EQ_INT(c.remote_min_backoff_ns, 100000000LL);
    T_EQ_INT(c.remote_max_backoff_ns, 60000000000LL);
    T_EQ_INT(c.remote_timeout_ns, 5000000000LL);
    sc_config_release(&c);
    T_CHECK(parse("scrape_configs: [{job_name: a, delta: sometimes}]", &c, err) == SC_EINVAL &&
            strstr(err, "delta"));
    sc_config_release(&c);
    T_CHECK(parse("remote_write: {queue_max_bytes: 12 parsecs}", &c, err) == SC_EINVAL);
    sc_config_release(&c);
    T_EQ_INT(parse("storage: {read_only_retry: 500ms}", &c, err), 0);
    T_EQ_INT(c.storage_ro_retry_ns, 500000000LL);
    sc_config_release(&c);
    /* a retry loop faster than that would only burn the CPU */
    T_CHECK(parse("storage: {read_only_retry: 10ms}", &c, err) == SC_EINVAL &&
            strstr(err, "read_only_retry"));
    sc_config_release(&c);
}

static int null_sink(void *ctx, const struct sc_scraped *p, char *err)
{
    (void)ctx, (void)p, (void)err;
    return 0;
}

static int new_scraper(const char *y, struct sc_scraper **s, char *err)
{
    struct sc_config c;
    int rc = parse(y, &c, err);
    if (!rc)
        rc = sc_scraper_new(&c, null_sink, NULL, s, err);
    sc_config_release(&c);
    return rc;
}

static int reload(struct sc_scraper *s, const char *y, char *err)
{
    struct sc_config c;
    int rc = parse(y, &c, err);
    if (!rc)
        rc = sc_scraper_reload(s, &c, err);
    sc_config_release(&c);
    return rc;
}

static void test_scraper_config(void)
{
    struct sc_scraper *s = NULL;
    char err[SC_ERR_LEN] = "";
    T_EQ_INT(new_scraper("scrape_configs: [{job_name: a, targets: ['nohost']}]", &s, err),
             SC_EINVAL);
    T_CHECK(strstr(err, "host:port") != NULL);
    T_EQ_INT(new_scraper("scrape_configs: [{job_name: a, targets: ['h:1'], "
                         "labels: {'bad name': x}}]",
                         &s, err),
             SC_EINVAL);
    T_EQ_INT(new_scraper("scrape_configs: [{job_name: api.cpu, targets: ['h:1']}]", &s, err),
             SC_EINVAL);
    T_CHECK(strstr(err, "api.cpu") != NULL);
    T_EQ_INT(new_scraper("scrape_configs: [{job_name: a, targets: ['h:1']}, "
                         "{job_name: a, targets: ['h:2']}]",
                         &s, err),
             SC_EINVAL);
    T_EQ_INT(new_scraper("scrape_configs: [{job_name: a, scrape_interval: 1500ms, "
                         "delta: endpoint, targets: ['h:1']}]",
                         &s, err),
             SC_EINVAL);

    /* a target's labels: service_name from the labels, job and instance from the scraper */
    T_EQ_INT(new_scraper("scrape_configs:\n"
                         "  - job_name: a\n"
                         "    profiles: [heap, allocs]\n"
                         "    static_configs:\n"
                         "      - targets: ['127.0.0.1:1', '127.0.0.1:1']\n"
                         "        labels: {service_name: svc, env: dev, job: nope}\n",
                         &s, err),
             0);
    struct sc_buf j = SC_BUF_INIT;
    sc_scraper_targets_json(s, &j);
    T_CHECK(strstr(j.data, "\"labels\":{\"env\":\"dev\",\"instance\":\"127.0.0.1:1\",\"job\":"
                           "\"a\",\"service_name\":\"svc\"}") != NULL);
    T_CHECK(strstr(j.data, "\"url\":\"http://127.0.0.1:1/debug/pprof/allocs?seconds=15\""));
    T_CHECK(strstr(j.data, "\"health\":\"unknown\""));
    struct sc_scraper_stats st;
    sc_scraper_stats(s, &st);
    T_EQ_INT(st.tasks, 2); /* the duplicate target counts once */
    /* reload: one task goes, one comes; a bad config changes nothing */
    T_EQ_INT(
        reload(s, "scrape_configs: [{job_name: a, targets: ['x:1'], profiles: [goroutine]}]", err),
        0);
    T_EQ_INT(reload(s, "scrape_configs: [{job_name: a, targets: ['bad']}]", err), SC_EINVAL);
    j.len = 0;
    sc_scraper_targets_json(s, &j);
    T_CHECK(strstr(j.data, "x:1/debug/pprof/goroutine") && !strstr(j.data, "allocs"));
    j.len = 0;
    sc_scraper_metrics(s, &j);
    T_CHECK(strstr(j.data, "scorch_scrape_up{job=\"a\",instance=\"x:1\",profile=\"goroutine\"} 0"));
    sc_buf_release(&j);
    sc_scraper_stop_free(s);
}

/* The threads for real: an empty config, then a target that refuses connections, a reload
 * while running, and a stop. */
static void test_scraper_running(void)
{
    struct sc_scraper *s = NULL;
    char err[SC_ERR_LEN] = "";
    T_EQ_INT(new_scraper("", &s, err), 0);
    struct sc_buf j = SC_BUF_INIT;
    sc_scraper_targets_json(s, &j);
    T_EQ_STR(j.data, "[\n]\n");
    T_EQ_INT(sc_scraper_start(s, err), 0);
    /* port 1 on loopback: nothing listens there */
    T_EQ_INT(reload(s,
                    "scrape_configs: [{job_name: r, scrape_interval: 100ms, "
                    "profiles: [heap, allocs], targets: ['127.0.0.1:1']}]",
                    err),
             0);
    struct timespec ts = {0, 600 * 1000000L};
    nanosleep(&ts, NULL);
    j.len = 0;
    sc_scraper_targets_json(s, &j);
    T_CHECK(strstr(j.data, "\"health\":\"down\"") != NULL);
    T_CHECK(strstr(j.data, "onnect") != NULL);                 /* curl: "Failed to connect ..." */
    T_CHECK(strstr(j.data, "\"delta\":\"subtract\"") != NULL); /* 100 ms: not whole seconds */
    struct sc_scraper_stats st;
    sc_scraper_stats(s, &st);
    T_EQ_INT(st.tasks, 2);
    T_CHECK(st.scrapes >= 4 && st.errors >= 4);
    T_CHECK(st.lag_count >= 4 && st.lag_max_ns < 1000000000LL);
    T_EQ_INT(reload(s,
                    "scrape_configs: [{job_name: r, targets: ['127.0.0.1:1'], "
                    "profiles: [goroutine]}]",
                    err),
             0);
    sc_scraper_stats(s, &st);
    T_EQ_INT(st.tasks, 1);
    sc_buf_release(&j);
    sc_scraper_stop_free(s);
}

int main(void)
{
    T_RUN(test_keep_types);
    T_RUN(test_delta_subtract);
    T_RUN(test_delta_stack_identity);
    T_RUN(test_delta_restart);
    T_RUN(test_delta_types_change);
    T_RUN(test_delta_real_profile);
    T_RUN(test_push_query);
    T_RUN(test_config);
    T_RUN(test_scraper_config);
    T_RUN(test_scraper_running);
    return t_done();
}
