/* test_flame.c - flame graph JSON: exact output for known trees, maxNodes, diff layout,
 * escaping, determinism and speed. Also a helper for tests/compat/flame_json.sh:
 *   test_flame --json FILE [MAXNODES]          flame graph JSON of FILE's default type
 *   test_flame --diff BASE FILE [MAXNODES] [-n] diff flame graph JSON */
#include "t.h"

#include <time.h>

#include "formats/folded.h"
#include "formats/input.h"
#include "model/error.h"
#include "model/setting.h"
#include "formats/top.h"
#include "model/json.h"
#include "query/flame.h"
#include "query/plan.h"
#include "store/store.h"

static struct sc_profile *folded(const char *text)
{
    struct sc_profile *p = sc_profile_new();
    char err[SC_ERR_LEN];
    if (sc_folded_decode(text, strlen(text), &sc_limits_cli, p, err)) {
        fprintf(stderr, "folded: %s\n", err);
        sc_profile_free(p);
        return NULL;
    }
    return p;
}

/* The flame JSON of folded text (static buffer). */
static const char *flame(const char *text, uint32_t max_nodes)
{
    static struct sc_buf out = SC_BUF_INIT;
    static char err[SC_ERR_LEN];
    struct sc_profile *p = folded(text);
    out.len = 0;
    sc_buf_putc(&out, 0);
    out.len = 0;
    int rc = p ? sc_flame_json(p, 0, max_nodes, &out, err) : SC_EFORMAT;
    sc_profile_free(p);
    if (rc)
        return err;
    return out.data ? out.data : "";
}

static const char *diff(const char *base, const char *text, uint32_t max_nodes, int normalize)
{
    static struct sc_buf out = SC_BUF_INIT;
    static char err[SC_ERR_LEN];
    struct sc_profile *b = folded(base), *p = folded(text);
    out.len = 0;
    sc_buf_putc(&out, 0);
    out.len = 0;
    int rc = sc_flame_diff_json(b, 0, p, 0, max_nodes, normalize, NULL, &out, err);
    sc_profile_free(b);
    sc_profile_free(p);
    return rc ? err : out.data;
}

#define HEAD "{\"version\":1,\"sample_type\":\"samples\",\"unit\":\"count\","

static void test_exact(void)
{
    const char *text = "main;a;b 10\nmain;a 5\nmain;c 3\nother 2\n";
    T_EQ_STR(flame(text, 0),
             HEAD "\"total\":20,\"max_self\":10,\"names\":[\"total\",\"main\",\"other\",\"a\","
                  "\"c\",\"b\"],\"levels\":[[0,20,0,0],[0,18,0,1,18,2,2,2],"
                  "[0,15,5,3,15,3,3,4],[0,10,10,5]]}\n");
    /* the same stacks in another order give the same bytes */
    T_EQ_STR(flame("other 1\nmain;c 3\nmain;a 5\nother 1\nmain;a;b 10\n", 0),
             flame(text, 0) ? HEAD "\"total\":20,\"max_self\":10,\"names\":[\"total\",\"main\","
                                   "\"other\",\"a\",\"c\",\"b\"],\"levels\":[[0,20,0,0],"
                                   "[0,18,0,1,18,2,2,2],[0,15,5,3,15,3,3,4],[0,10,10,5]]}\n"
                            : "");
    /* maxNodes: best first, dropped children fold into their parent's self */
    T_EQ_STR(flame(text, 3), HEAD "\"total\":20,\"max_self\":15,\"names\":[\"total\",\"main\","
                                  "\"a\"],\"levels\":[[0,20,2,0],[0,18,3,1],[0,15,15,2]]}\n");
    T_EQ_STR(flame(text, 5), HEAD "\"total\":20,\"max_self\":10,\"names\":[\"total\",\"main\","
                                  "\"a\",\"c\",\"b\"],\"levels\":[[0,20,2,0],[0,18,0,1],"
                                  "[0,15,5,2,15,3,3,3],[0,10,10,4]]}\n");
    T_EQ_STR(flame(text, 1), HEAD "\"total\":20,\"max_self\":20,\"names\":[\"total\"],"
                                  "\"levels\":[[0,20,20,0]]}\n");
    T_EQ_STR(flame(text, 6), flame(text, 0) ? HEAD "\"total\":20,\"max_self\":10,\"names\":"
                                                   "[\"total\",\"main\",\"other\",\"a\",\"c\","
                                                   "\"b\"],\"levels\":[[0,20,0,0],[0,18,0,1,18,"
                                                   "2,2,2],[0,15,5,3,15,3,3,4],[0,10,10,5]]}\n"
                                            : "");
    /* ties go by name */
    T_EQ_STR(flame("x;b 5\nx;a 5\n", 3), HEAD "\"total\":10,\"max_self\":5,\"names\":[\"total\","
                                              "\"x\",\"a\"],\"levels\":[[0,10,0,0],[0,10,5,1],"
                                              "[0,5,5,2]]}\n");
    /* recursion makes nested nodes; a frame called "total" shares the root's name */
    T_EQ_STR(flame("a;a;total 4\n", 0), HEAD "\"total\":4,\"max_self\":4,\"names\":[\"total\","
                                             "\"a\"],\"levels\":[[0,4,0,0],[0,4,0,1],[0,4,0,1],"
                                             "[0,4,4,0]]}\n");
    /* an empty profile */
    T_EQ_STR(flame("", 0), HEAD "\"total\":0,\"max_self\":0,\"names\":[\"total\"],"
                                "\"levels\":[[0,0,0,0]]}\n");
}

static void test_escapes(void)
{
    /* quotes, backslashes, control bytes, UTF-8 kept, invalid UTF-8 replaced */
    T_EQ_STR(flame("q\"\\\x01\t\xc3\xa9\xff\xe2\x82 1\n", 0),
             HEAD "\"total\":1,\"max_self\":1,\"names\":[\"total\",\"q\\\"\\\\\\u0001\\t\xc3\xa9"
                  "\\ufffd\\ufffd\\ufffd\"],\"levels\":[[0,1,0,0],[0,1,1,1]]}\n");
}

static void test_inline_and_addresses(void)
{
    /* a location with c inlined into b, an address-only location, a line without a
     * function: names as every scorch renderer gives them */
    struct sc_profile *p = sc_profile_new();
    sc_profile_add_sample_type(p, "cpu", "nanoseconds");
    uint32_t fb = (uint32_t)sc_profile_add_function(p, (uint32_t)sc_profile_intern(p, "b", 1), 0);
    uint32_t fc = (uint32_t)sc_profile_add_function(p, (uint32_t)sc_profile_intern(p, "c", 1), 0);
    int64_t l0 = sc_profile_add_simple_location(p, fb);
    sc_profile_add_simple_location(p, fc);
    /* make location 0 hold [c, b] (innermost first) by pointing it at both lines */
    p->lines[0].function = fc + 1;
    p->lines[1].function = fb + 1;
    p->locations[l0].nlines = 2;
    p->nlocations = 1;
    p->locations = realloc(p->locations, 3 * sizeof *p->locations);
    memset(&p->locations[1], 0, 2 * sizeof *p->locations);
    p->locations[1].address = 0xabc;
    p->locations[2].address = 0xdef;
    p->lines = realloc(p->lines, 3 * sizeof *p->lines);
    memset(&p->lines[2], 0, sizeof p->lines[2]);
    p->locations[2].line_start = 2;
    p->locations[2].nlines = 1;
    p->nlocations = 3;
    p->nlines = 3;
    p->locations_cap = p->lines_cap = 3;
    uint32_t s1[2] = {0, 1}, s2[1] = {2};
    int64_t v1 = 7, v2 = 1;
    sc_profile_add_sample(p, s1, 2, &v1, 0);
    sc_profile_add_sample(p, s2, 1, &v2, 0);
    char err[SC_ERR_LEN];
    T_EQ_INT(sc_profile_validate(p, err), 0);
    struct sc_buf out = SC_BUF_INIT;
    T_EQ_INT(sc_flame_json(p, 0, 0, &out, err), 0);
    T_EQ_STR(out.data, "{\"version\":1,\"sample_type\":\"cpu\",\"unit\":\"nanoseconds\","
                       "\"total\":8,\"max_self\":7,\"names\":[\"total\",\"0xabc\",\"0xdef\","
                       "\"b\",\"c\"],"
                       "\"levels\":[[0,8,0,0],[0,7,0,1,7,1,1,2],[0,7,0,3],[0,7,7,4]]}\n");
    /* and the folded writer agrees on the frames */
    struct sc_buf f = SC_BUF_INIT;
    T_EQ_INT(sc_folded_write(p, 0, &f, err), 0);
    T_EQ_STR(f.data, "0xabc;b;c 7\n0xdef 1\n");
    T_EQ_INT(sc_flame_json(p, 1, 0, &out, err), SC_EINVAL);
    sc_buf_release(&f);
    sc_buf_release(&out);
    sc_profile_free(p);
}

static void test_diff(void)
{
    const char *base = "main;a 10\nmain;b 10\n", *cur = "main;a 30\nmain;c 10\n";
    T_EQ_STR(diff(base, cur, 0, 0),
             "{\"version\":1,\"diff\":true,\"sample_type\":\"samples\",\"unit\":\"count\","
             "\"total\":40,\"base_total\":20,\"normalized\":false,\"base_scale\":1,"
             "\"max_self\":40,\"names\":[\"total\",\"main\",\"a\",\"b\",\"c\"],\"levels\":"
             "[[0,40,0,20,0,0],[0,40,0,20,0,1],[0,30,30,10,10,2,40,0,0,10,10,3,50,10,10,0,0,4]]}"
             "\n");
    T_EQ_STR(diff(base, cur, 0, 1),
             "{\"version\":1,\"diff\":true,\"sample_type\":\"samples\",\"unit\":\"count\","
             "\"total\":40,\"base_total\":40,\"normalized\":true,\"base_scale\":2,"
             "\"max_self\":50,\"names\":[\"total\",\"main\",\"a\",\"b\",\"c\"],\"levels\":"
             "[[0,40,0,40,0,0],[0,40,0,40,0,1],[0,30,30,20,20,2,50,0,0,20,20,3,70,10,10,0,0,4]]}"
             "\n");
    /* maxNodes by combined width: a (40) before b and c (10 each), then b by name */
    T_EQ_STR(diff(base, cur, 4, 0),
             "{\"version\":1,\"diff\":true,\"sample_type\":\"samples\",\"unit\":\"count\","
             "\"total\":40,\"base_total\":20,\"normalized\":false,\"base_scale\":1,"
             "\"max_self\":40,\"names\":[\"total\",\"main\",\"a\",\"b\"],\"levels\":"
             "[[0,40,0,20,0,0],[0,40,10,20,0,1],[0,30,30,10,10,2,40,0,0,10,10,3]]}\n");
    /* normalising rounds each base self and sums totals again, so the tree stays exact */
    T_EQ_STR(diff("a 1\nb 1\nc 1\n", "a 2\n", 0, 1),
             "{\"version\":1,\"diff\":true,\"sample_type\":\"samples\",\"unit\":\"count\","
             "\"total\":2,\"base_total\":3,\"normalized\":true,\"base_scale\":"
             "0.66666666666666663,\"max_self\":3,\"names\":[\"total\",\"a\",\"b\",\"c\"],"
             "\"levels\":[[0,2,0,3,0,0],[0,2,2,1,1,1,3,0,0,1,1,2,4,0,0,1,1,3]]}\n");
    /* nothing to scale against: left as is */
    T_EQ_STR(diff("", "a 2\n", 0, 1),
             "{\"version\":1,\"diff\":true,\"sample_type\":\"samples\",\"unit\":\"count\","
             "\"total\":2,\"base_total\":0,\"normalized\":false,\"base_scale\":1,"
             "\"max_self\":2,\"names\":[\"total\",\"a\"],\"levels\":[[0,2,0,0,0,0],"
             "[0,2,2,0,0,1]]}\n");
    /* units must agree */
    struct sc_profile *a = folded("x 1\n"), *b = sc_profile_new();
    sc_profile_add_sample_type(b, "alloc_space", "bytes");
    struct sc_buf out = SC_BUF_INIT;
    char err[SC_ERR_LEN];
    T_EQ_INT(sc_flame_diff_json(a, 0, b, 0, 0, 0, NULL, &out, err), SC_EINVAL);
    T_EQ_STR(err, "cannot compare values in 'count' with values in 'bytes'");
    sc_buf_release(&out);
    sc_profile_free(a);
    sc_profile_free(b);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Real data: lazy and stored samples give the same bytes; a tree of 100,000+ nodes turns
 * into JSON quickly. */
static void test_real(void)
{
    const char *path = t_testdata("pprof/synthetic-allocs-100k.pb.gz");
    if (!path) {
        fprintf(stderr, "(skipping real-data checks: no test data)\n");
        return;
    }
    char err[SC_ERR_LEN];
    struct sc_profile *p = NULL, *lazy = NULL;
    struct sc_decode_opts lo = {.lazy_samples = 1};
    T_EQ_INT(sc_load(path, NULL, &p, err), 0);
    T_EQ_INT(sc_load(path, &lo, &lazy, err), 0);
    if (!p || !lazy)
        return;
    int vi = sc_profile_sample_index(p, NULL, err);
    struct sc_buf a = SC_BUF_INIT, b = SC_BUF_INIT;
    double t0 = now_s();
    T_EQ_INT(sc_flame_json(p, vi, 0, &a, err), 0);
    double t_all = now_s() - t0;
    T_EQ_INT(sc_flame_json(lazy, vi, 0, &b, err), 0);
    T_CHECK(a.len == b.len && a.len > 0 && memcmp(a.data, b.data, a.len) == 0);

    struct sc_flame_tree t;
    T_EQ_INT(sc_flame_tree_init(&t), 0);
    t0 = now_s();
    T_EQ_INT(sc_flame_tree_add(&t, p, vi, 1, err), 0);
    double t_tree = now_s() - t0;
    fprintf(stderr, "%u samples -> %u nodes: tree %.1f ms, tree + JSON %.1f ms\n", p->nsamples, t.n,
            t_tree * 1e3, t_all * 1e3);
    T_CHECK(t.n > 1000000);
    struct sc_flame_json_opts o = {
        {"x", 1}, {"y", 1}, (uint32_t)sc_setting_default_i(SC_SET_PARAM_MAX_NODES), 0, 0, 1, NULL,
        NULL,     NULL};
    t0 = now_s();
    a.len = 0;
    T_EQ_INT(sc_flame_tree_json(&t, &o, &a), 0);
    fprintf(stderr, "JSON of the %u-node tree with maxNodes %d: %.1f ms (%zu bytes)\n", t.n,
            (uint32_t)sc_setting_default_i(SC_SET_PARAM_MAX_NODES), (now_s() - t0) * 1e3, a.len);
    sc_flame_tree_release(&t);

    /* a tree of about 100,000 nodes: the samples' first part */
    uint32_t all = p->nsamples;
    for (p->nsamples = 8000; p->nsamples < all; p->nsamples += 250) {
        T_EQ_INT(sc_flame_tree_init(&t), 0);
        T_EQ_INT(sc_flame_tree_add(&t, p, vi, 1, err), 0);
        if (t.n >= 100000)
            break;
        sc_flame_tree_release(&t);
    }
    p->nsamples = all;
    o.max_nodes = 0;
    double best = 1e9;
    for (int i = 0; i < 5; i++) {
        a.len = 0;
        t0 = now_s();
        T_EQ_INT(sc_flame_tree_json(&t, &o, &a), 0);
        double dt = now_s() - t0;
        best = dt < best ? dt : best;
    }
    fprintf(stderr, "JSON of a %u-node tree: %.1f ms (%zu bytes)\n", t.n, best * 1e3, a.len);
    T_CHECK(t.n >= 100000);
    T_CHECK(best < 0.5); /* the product build takes well under 50 ms; sanitizers are slower */
    sc_flame_tree_release(&t);

    /* a node limit on the tree itself */
    struct sc_flame_tree small;
    T_EQ_INT(sc_flame_tree_init(&small), 0);
    small.max_nodes = 1000;
    T_EQ_INT(sc_flame_tree_add(&small, p, vi, 1, err), SC_ELIMIT);
    T_EQ_STR(err, "flame graph has more than 1000 nodes");
    sc_flame_tree_release(&small);
    sc_buf_release(&a);
    sc_buf_release(&b);
    sc_profile_free(p);
    sc_profile_free(lazy);
}

/* Helper mode for the shell test. */
/* sc_flame_json_with: the top table and the caller's members inside the flame object, as
 * the server answers top=1 (the same bytes as the object and the top document joined). */
static void put_mine(void *ctx, struct sc_json *j)
{
    sc_json_kv_i64(j, "mine", *(int *)ctx);
}

static void test_extra(void)
{
    struct sc_profile *p = folded("main;a 3\nmain;b 1\n");
    T_CHECK(p != NULL);
    if (!p)
        return;
    char err[SC_ERR_LEN] = "";
    int mine = 7;
    struct sc_flame_extra x = {1, put_mine, &mine};
    struct sc_buf got = SC_BUF_INIT, flame = SC_BUF_INIT, top = SC_BUF_INIT;
    T_EQ_INT(sc_flame_json_with(p, 0, 0, &x, &got, err), 0);
    T_EQ_INT(sc_flame_json(p, 0, 0, &flame, err), 0);
    struct sc_top t;
    T_EQ_INT(sc_top_compute(p, 0, &t, err), 0);
    struct sc_top_opts to = {.format = SC_TOP_JSON};
    sc_top_write(p, 0, &t, &to, &top);
    sc_top_release(&t);
    struct sc_buf want = SC_BUF_INIT;
    sc_buf_append(&want, flame.data, flame.len - 2); /* without "}\n" */
    sc_buf_puts(&want, ",\"top\":");
    sc_buf_append(&want, top.data, top.len - 1); /* without "\n" */
    sc_buf_puts(&want, ",\"mine\":7}\n");
    T_EQ_MEM(got.data, got.len, want.len ? (sc_buf_putc(&want, 0), want.data) : "");
    sc_buf_putc(&got, 0);
    T_CHECK(strstr(got.data,
                   ",\"top\":{\"sample_type\":\"samples\",\"unit\":\"count\","
                   "\"total\":4,\"rows\":[{\"function\":\"a\",\"flat\":3,\"cum\":3}") != NULL);
    /* without top: the members alone; no extra: sc_flame_json's bytes */
    x.top = 0;
    got.len = 0;
    T_EQ_INT(sc_flame_json_with(p, 0, 0, &x, &got, err), 0);
    T_CHECK(got.len == flame.len + 9 && !memcmp(got.data + flame.len - 2, ",\"mine\":7}\n", 11));
    got.len = 0;
    T_EQ_INT(sc_flame_json_with(p, 0, 0, NULL, &got, err), 0);
    T_EQ_MEM(got.data, got.len, (sc_buf_putc(&flame, 0), flame.data));
    T_EQ_INT(sc_flame_json_with(p, 3, 0, &x, &got, err), SC_EINVAL);
    sc_buf_release(&got);
    sc_buf_release(&flame);
    sc_buf_release(&top);
    sc_buf_release(&want);
    sc_profile_free(p);
}

/* sc_plan_profile_json: one stored profile found by its series and time, its flame graph
 * saying which profile it is; a series that is not there is SC_ENOTFOUND. */
static void test_profile_view(void)
{
    char tmp[] = "/tmp/scorch-test-flame-XXXXXX";
    if (!mkdtemp(tmp)) {
        T_CHECK(0);
        return;
    }
    struct sc_store_opts o;
    sc_store_opts_init(&o);
    o.dir = tmp;
    o.background = 0;
    o.durable = 0;
    o.retention_ns = 0;
    struct sc_store *st = NULL;
    char err[SC_ERR_LEN] = "";
    T_EQ_INT(sc_store_open(&o, &st, err), 0);
    struct sc_profile *p = folded("main;a 3\nmain;b 1\n");
    struct sc_labels l;
    sc_labels_init(&l);
    sc_labels_set(&l, "service_name", 12, "a", 1);
    const int64_t at = 1700000000500000000LL; /* 1700000000.5 s */
    struct sc_store_write w = {NULL, &l, "cpu", at, 10000000000LL, p, 0};
    T_EQ_INT(st && p ? sc_store_write(st, &w, err) : SC_ENOMEM, 0);
    struct sc_buf out = SC_BUF_INIT, flame = SC_BUF_INIT;
    struct sc_profile_ref ref = {NULL, "cpu:samples", "{service_name=\"a\"}", at};
    struct sc_filter_opts fo = {NULL, "b", NULL, NULL}; /* ignore: stacks through b go */
    T_EQ_INT(st ? sc_plan_profile_json(st, &ref, &fo, 0, 0, &out, err) : SC_ENOMEM, 0);
    sc_buf_putc(&out, 0);
    struct sc_profile *only_a = folded("main;a 3\n");
    T_EQ_INT(only_a ? sc_flame_json(only_a, 0, 0, &flame, err) : SC_ENOMEM, 0);
    const char *tail = ",\"profile\":{\"labels\":{\"service_name\":\"a\"},\"series\":"
                       "\"{service_name=\\\"a\\\"}\",\"time\":1700000000.5,"
                       "\"time_ns\":\"1700000000500000000\"}}\n";
    T_CHECK(out.len > flame.len && flame.len > 2 && !memcmp(out.data, flame.data, flame.len - 2));
    T_EQ_STR(out.len > flame.len ? out.data + flame.len - 2 : "", tail);
    ref.series = "{service_name=\"b\"}";
    T_EQ_INT(st ? sc_plan_profile_json(st, &ref, NULL, 0, 0, &out, err) : 0, SC_ENOTFOUND);
    T_EQ_STR(err, "no series {service_name=\"b\"} with cpu:samples profiles");
    sc_buf_release(&out);
    sc_buf_release(&flame);
    sc_profile_free(only_a);
    sc_profile_free(p);
    sc_labels_release(&l);
    sc_store_close(st);
    t_rmrf(tmp);
}

static int tool(int argc, char **argv)
{
    char err[SC_ERR_LEN];
    int d = !strcmp(argv[1], "--diff");
    int need = d ? 4 : 3;
    if (argc < need)
        return 2;
    struct sc_profile *p = NULL, *b = NULL;
    if (sc_load(argv[need - 1], NULL, &p, err) || (d && sc_load(argv[2], NULL, &b, err))) {
        fprintf(stderr, "%s\n", err);
        return 1;
    }
    uint32_t max_nodes = argc > need ? (uint32_t)strtoul(argv[need], NULL, 10)
                                     : (uint32_t)sc_setting_default_i(SC_SET_PARAM_MAX_NODES);
    int normalize = argc > need + 1 && !strcmp(argv[need + 1], "-n");
    int vi = sc_profile_sample_index(p, NULL, err);
    int bvi = d ? sc_profile_sample_index(b, NULL, err) : 0;
    struct sc_buf out = SC_BUF_INIT;
    int rc = vi < 0 || bvi < 0 ? SC_EINVAL
             : d ? sc_flame_diff_json(b, bvi, p, vi, max_nodes, normalize, NULL, &out, err)
                 : sc_flame_json(p, vi, max_nodes, &out, err);
    if (rc == 0)
        fwrite(out.data, 1, out.len, stdout);
    else
        fprintf(stderr, "%s\n", err);
    sc_buf_release(&out);
    sc_profile_free(p);
    sc_profile_free(b);
    return rc ? 1 : 0;
}

int main(int argc, char **argv)
{
    /* --json, --diff, --stacks: the shell tests' helper modes; other arguments name cases */
    if (argc > 1 && !strncmp(argv[1], "--", 2))
        return tool(argc, argv);
    T_RUN(test_exact);
    T_RUN(test_escapes);
    T_RUN(test_inline_and_addresses);
    T_RUN(test_diff);
    T_RUN(test_real);
    T_RUN(test_extra);
    T_RUN(test_profile_view);
    return t_done();
}
