/* test_otlp.c - OTLP profiles requests: the three sample shapes, the dictionary (index 0,
 * bad indexes), labels, JSON, pprof payloads, limits, truncation; the push request; the
 * JSON transcoder. Requests are encoded here from the field numbers. */
#include "t.h"

#include "formats/folded.h"
#include "formats/otlp.h"
#include "formats/pbjson.h"
#include "formats/pprof.h"
#include "formats/protowire.h"
#include "formats/push.h"
#include "model/error.h"

#define NS 1000000000LL

/* ---- encoding helpers: one buffer, nested messages with 5-byte lengths patched at end() ---- */

static struct sc_buf *g;
static size_t open_at[32];
static int depth;

static void beg(uint32_t num)
{
    sc_pb_put_tag(g, num, SC_WT_LEN);
    open_at[depth++] = g->len;
    sc_buf_append(g, "\0\0\0\0\0", 5);
}

static void end(void)
{
    size_t at = open_at[--depth];
    uint64_t len = g->len - at - 5;
    for (int i = 0; i < 5; i++, len >>= 7)
        g->data[at + i] = (char)((len & 0x7f) | (i < 4 ? 0x80 : 0));
}

static void u(uint32_t num, uint64_t v)
{
    sc_pb_put_uint(g, num, v);
}

static void str(uint32_t num, const char *s)
{
    sc_pb_put_bytes(g, num, s, strlen(s));
}

static void fx(uint32_t num, uint64_t v)
{
    sc_pb_put_tag(g, num, SC_WT_I64);
    sc_buf_append(g, &v, 8);
}

static void packed(uint32_t num, const int64_t *v, size_t n)
{
    beg(num);
    for (size_t i = 0; i < n; i++)
        sc_pb_put_varint(g, (uint64_t)v[i]);
    end();
}

static void empty(uint32_t num)
{
    beg(num);
    end();
}

/* strings */
enum {
    S_EMPTY,
    S_SAMPLES,
    S_COUNT,
    S_CPU,
    S_NS,
    S_MAIN,
    S_WORK,
    S_LEAF,
    S_THREAD,
    S_T1,
    S_FILE,
    S_BYTES,
    S_ALLOC,
    S_EXE,
    NSTR
};
static const char *const strs[NSTR] = {"",       "samples", "count", "cpu",         "nanoseconds",
                                       "main",   "work",    "leaf",  "thread.name", "t1",
                                       "app.go", "bytes",   "alloc", "/bin/app"};

/* The dictionary: functions main, work, leaf (1..3); locations 1: main, 2: work (line 10),
 * 3: leaf inlined into work (two lines); stacks 1: [3, 1] (leaf first), 2: [2, 1];
 * attributes 1: thread.name=t1 (by strindex), 2: alloc=5 bytes (int); links 1: trace
 * 0x01.., span 0xaa.., 2: all zero. extra: one more stack entry. */
static void put_dictionary(const int64_t *extra, size_t nextra)
{
    beg(2);
    empty(1); /* mapping 0 */
    beg(1), u(4, S_EXE), u(2, 0x1000), end();
    empty(2); /* location 0 */
    beg(2), beg(3), u(1, 1), end(), u(1, 1), end();
    beg(2), beg(3), u(1, 2), u(2, 10), end(), end();
    beg(2), u(2, 0x1234), beg(3), u(1, 3), end(), beg(3), u(1, 2), u(2, 11), end(), end();
    empty(3); /* function 0 */
    beg(3), u(1, S_MAIN), u(3, S_FILE), end();
    beg(3), u(1, S_WORK), end();
    beg(3), u(1, S_LEAF), end();
    empty(4); /* link 0 */
    beg(4);
    sc_pb_put_bytes(g, 1, "\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c\x0d\x0e\x0f\x10", 16);
    sc_pb_put_bytes(g, 2, "\xaa\xbb\xcc\xdd\xee\xff\x00\x11", 8);
    end();
    beg(4), sc_pb_put_bytes(g, 1, "\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0", 16), end();
    for (int i = 0; i < NSTR; i++)
        str(5, strs[i]);
    empty(6); /* attribute 0 */
    beg(6), u(1, S_THREAD), beg(2), u(8, S_T1), end(), end();
    beg(6), u(1, S_ALLOC), beg(2), u(3, 5), end(), u(3, S_BYTES), end();
    empty(7); /* stack 0 */
    int64_t s1[] = {3, 1}, s2[] = {2, 1};
    beg(7), packed(1, s1, 2), end();
    beg(7), packed(1, s2, 2), end();
    if (extra)
        beg(7), packed(1, extra, nextra), end();
    end();
}

/* A profile's head: samples/count, period cpu/nanoseconds; the caller adds samples. */
static void put_profile_head(void)
{
    beg(1), u(1, S_SAMPLES), u(2, S_COUNT), end();
    fx(3, 1700000000 * NS);
    u(4, 10 * NS);
    beg(5), u(1, S_CPU), u(2, S_NS), end();
    u(6, 10000000);
}

/* The three shapes of OTLP's Sample documentation, and labels. */
static void put_shapes_profile(void)
{
    put_profile_head();
    int64_t v1[] = {10}, a[] = {1, 2, 0}, v3[] = {2, 3};
    beg(2), u(1, 1), packed(4, v1, 1), packed(2, a, 3), u(3, 1), end(); /* values only */
    /* timestamps only, not packed */
    beg(2), u(1, 2), fx(5, 1700000001 * NS + 5), fx(5, 1700000002 * NS + 7), u(3, 2), end();
    /* values paired with timestamps, packed */
    uint64_t t[] = {1700000003 * NS, 1700000004 * NS};
    beg(2), u(1, 1), packed(4, v3, 2), sc_pb_put_bytes(g, 5, t, sizeof t), end();
}

static void kv_str(const char *k, const char *v)
{
    beg(1), str(1, k), beg(2), str(1, v), end(), end();
}

static void put_request(struct sc_buf *b, void (*profile)(void), int nprofiles, int with_service)
{
    g = b;
    beg(1);
    beg(1);
    if (with_service)
        kv_str("service.name", "svc");
    kv_str("host.name", "h1");
    beg(1), str(1, "9lives.k8s"), beg(2), u(3, 42), end(), end();
    kv_str("process.executable.name", "app");
    beg(1), str(1, "list"), beg(2), empty(5), end(), end();
    end();
    beg(2);
    beg(1), str(1, "scope-x"), str(2, "1.2"), end();
    for (int i = 0; i < nprofiles; i++)
        beg(2), profile(), end();
    end();
    end();
    put_dictionary(NULL, 0);
}

static char *folded(const struct sc_profile *p)
{
    static char out[4096];
    struct sc_buf b = SC_BUF_INIT;
    char err[SC_ERR_LEN];
    T_EQ_INT(sc_folded_write(p, 0, &b, err), 0);
    snprintf(out, sizeof out, "%s", b.data ? b.data : "");
    sc_buf_release(&b);
    return out;
}

/* Opens buf and builds profile i; 0 or the build's error (reason in err). */
static int build_one(const struct sc_buf *b, int json, uint32_t i, struct sc_otlp_profile *op,
                     char *err)
{
    struct sc_otlp_req *r;
    int rc = sc_otlp_open(b->data, b->len, json, NULL, &r, err);
    if (rc)
        return rc;
    rc = sc_otlp_build(r, i, op, err);
    sc_otlp_close(r);
    return rc;
}

static struct sc_str sample_label(const struct sc_profile *p, uint32_t si, const char *key,
                                  int64_t *num, struct sc_str *unit)
{
    const struct sc_sample *s = &p->samples[si];
    for (uint32_t j = 0; j < s->nlabels; j++) {
        const struct sc_label *l = &p->labels[s->label_start + j];
        struct sc_str k = sc_profile_str(p, l->key);
        if (k.len == strlen(key) && !memcmp(k.ptr, key, k.len)) {
            if (num)
                *num = l->num;
            if (unit)
                *unit = sc_profile_str(p, l->num_unit);
            return sc_profile_str(p, l->str);
        }
    }
    return (struct sc_str){NULL, 0};
}

/* ---- tests ---- */

static void test_shapes(void)
{
    struct sc_buf b = SC_BUF_INIT;
    put_request(&b, put_shapes_profile, 1, 1);
    char err[SC_ERR_LEN] = "";
    struct sc_otlp_req *r;
    T_EQ_INT(sc_otlp_open(b.data, b.len, 0, NULL, &r, err), 0);
    T_EQ_INT(sc_otlp_nprofiles(r), 1);
    struct sc_otlp_profile op;
    T_EQ_INT(sc_otlp_build(r, 0, &op, err), 0);
    const struct sc_profile *p = op.p;
    /* values only: one sample of 10; timestamps only: two of 1; paired: two, 2 and 3 */
    T_EQ_INT(p->nsamples, 5);
    T_EQ_INT(p->values[0], 10);
    T_EQ_INT(p->samples[0].time_ns, 0);
    T_EQ_INT(p->values[1], 1);
    T_EQ_INT(p->samples[1].time_ns, 1700000001 * NS + 5);
    T_EQ_INT(p->values[2], 1);
    T_EQ_INT(p->samples[2].time_ns, 1700000002 * NS + 7);
    T_EQ_INT(p->values[3], 2);
    T_EQ_INT(p->values[4], 3);
    T_EQ_INT(p->samples[4].time_ns, 1700000004 * NS);
    /* stacks are leaf first; the inlined leaf expands under work */
    T_EQ_STR(folded(p), "main;work 2\nmain;work;leaf 15\n");
    T_EQ_MEM(sc_profile_str(p, p->sample_types[0].type).ptr,
             sc_profile_str(p, p->sample_types[0].type).len, "samples");
    T_EQ_MEM(sc_profile_str(p, p->period_type.type).ptr, sc_profile_str(p, p->period_type.type).len,
             "cpu");
    T_EQ_INT(p->period, 10000000);
    T_EQ_INT(p->time_nanos, 1700000000 * NS);
    T_EQ_INT(p->duration_nanos, 10 * NS);
    /* locations shared by stacks are decoded once; the one mapping too */
    T_EQ_INT(p->nlocations, 3);
    T_EQ_INT(p->nfunctions, 3);
    T_EQ_INT(p->nmappings, 1);
    T_EQ_INT(p->locations[0].address, 0x1234); /* first used, first decoded */
    T_EQ_INT(p->locations[1].mapping, 1);
    /* sample labels: attributes (string, numeric with unit) and the link as hex */
    int64_t num = 0;
    struct sc_str unit = {NULL, 0};
    struct sc_str v = sample_label(p, 0, "thread.name", NULL, NULL);
    T_EQ_MEM(v.ptr, v.len, "t1");
    v = sample_label(p, 0, "alloc", &num, &unit);
    T_EQ_INT(num, 5);
    T_EQ_MEM(unit.ptr, unit.len, "bytes");
    v = sample_label(p, 0, "trace_id", NULL, NULL);
    T_EQ_MEM(v.ptr, v.len, "0102030405060708090a0b0c0d0e0f10");
    v = sample_label(p, 0, "span_id", NULL, NULL);
    T_EQ_MEM(v.ptr, v.len, "aabbccddeeff0011");
    T_EQ_INT(p->samples[0].nlabels, 4);
    /* an all-zero link is no link; both timestamps of one Sample share its labels */
    T_EQ_INT(p->samples[1].nlabels, 0);
    T_EQ_INT(p->samples[3].nlabels, 0);
    /* series labels */
    T_EQ_STR(t_label(&op.labels, "service_name"), "svc");
    T_EQ_STR(t_label(&op.labels, "host_name"), "h1");
    T_EQ_STR(t_label(&op.labels, "_9lives_k8s"), "42");
    T_EQ_STR(t_label(&op.labels, "otel_scope_name"), "scope-x");
    T_EQ_STR(t_label(&op.labels, "otel_scope_version"), "1.2");
    T_CHECK(t_label(&op.labels, "list") == NULL); /* arrays are skipped */
    char verr[SC_ERR_LEN];
    T_EQ_INT(sc_profile_validate(p, verr), 0);
    sc_otlp_profile_release(&op);
    sc_otlp_close(r);
    sc_buf_release(&b);
}

static void test_unknown_service(void)
{
    struct sc_buf b = SC_BUF_INIT;
    put_request(&b, put_shapes_profile, 2, 0);
    char err[SC_ERR_LEN];
    struct sc_otlp_profile op;
    T_EQ_INT(build_one(&b, 0, 1, &op, err), 0);
    T_EQ_STR(t_label(&op.labels, "service_name"), "unknown_service:app");
    sc_otlp_profile_release(&op);
    sc_buf_release(&b);
}

/* Index 0 of every table is the zero value, whatever the table holds there. */
static void put_index0_profile(void)
{
    put_profile_head();
    int64_t v[] = {4}, a[] = {0};
    beg(2), packed(4, v, 1), packed(2, a, 1), end(); /* the empty stack, attribute 0, link 0 */
}

/* A request of one resource and scope with n profiles from fn, and a dictionary with one
 * more stack. */
static void put_plain_request(struct sc_buf *b, void (*fn)(void), int n, const int64_t *extra,
                              size_t nextra)
{
    g = b;
    beg(1), beg(2);
    for (int i = 0; i < n; i++)
        beg(2), fn(), end();
    end(), end();
    put_dictionary(extra, nextra);
}

static void put_loc0_profile(void)
{
    put_profile_head();
    int64_t v[] = {1};
    beg(2), u(1, 3), packed(4, v, 1), end();
}

static void test_index0(void)
{
    struct sc_buf b = SC_BUF_INIT;
    put_request(&b, put_index0_profile, 1, 1);
    char err[SC_ERR_LEN];
    struct sc_otlp_profile op;
    T_EQ_INT(build_one(&b, 0, 0, &op, err), 0);
    T_EQ_INT(op.p->nsamples, 1);
    T_EQ_INT(op.p->samples[0].nlocs, 0);
    T_EQ_INT(op.p->samples[0].nlabels, 0);
    T_EQ_INT(op.p->values[0], 4);
    sc_otlp_profile_release(&op);
    sc_buf_release(&b);
    /* a stack of location 0 (the empty location: no lines, no function) */
    sc_buf_init(&b);
    int64_t loc0[] = {0, 1};
    put_plain_request(&b, put_loc0_profile, 1, loc0, 2);
    T_EQ_INT(build_one(&b, 0, 0, &op, err), 0);
    T_EQ_INT(op.p->samples[0].nlocs, 2);
    T_EQ_INT(op.p->locations[op.p->sample_locs[0]].nlines, 0);
    T_EQ_STR(t_label(&op.labels, "service_name"), "unknown_service");
    sc_otlp_profile_release(&op);
    sc_buf_release(&b);
}

/* One bad reference per profile; each fails alone with a reason, the good one builds. */
static int bad_case;
static void put_bad_profile(void)
{
    put_profile_head();
    int64_t v[] = {1, 2}, a[] = {7};
    beg(2);
    switch (bad_case++) {
    case 0: /* good */
        u(1, 1), packed(4, v, 1);
        break;
    case 1:
        u(1, 9), packed(4, v, 1);
        break;
    case 2: /* a negative int32 index: a 10-byte varint */
        u(1, (uint64_t)(int64_t)-1), packed(4, v, 1);
        break;
    case 3:
        u(1, 1), packed(4, v, 1), packed(2, a, 1);
        break;
    case 4:
        u(1, 1), packed(4, v, 1), u(3, 5);
        break;
    case 5: /* two values, one timestamp */
        u(1, 1), packed(4, v, 2), fx(5, 5);
        break;
    case 6: /* the stack references a location past the table */
        u(1, 3), packed(4, v, 1);
        break;
    }
    end();
}

static void test_bad_indexes(void)
{
    struct sc_buf b = SC_BUF_INIT;
    bad_case = 0;
    int64_t far[] = {1, 40};
    put_plain_request(&b, put_bad_profile, 7, far, 2);
    char err[SC_ERR_LEN] = "";
    struct sc_otlp_req *r;
    T_EQ_INT(sc_otlp_open(b.data, b.len, 0, NULL, &r, err), 0);
    static const char *const want[] = {
        NULL,
        "profile 1: stack_table index 9 out of range (4 entries)",
        "profile 2: stack_table index -1 out of range (4 entries)",
        "profile 3: attribute_table index 7 out of range (3 entries)",
        "profile 4: link_table index 5 out of range (3 entries)",
        "profile 5: sample 0 has 2 values and 1 timestamps",
        "profile 6: location_table index 40 out of range (4 entries)",
    };
    for (uint32_t i = 0; i < 7; i++) {
        struct sc_otlp_profile op;
        err[0] = 0;
        int rc = sc_otlp_build(r, i, &op, err);
        if (!want[i]) {
            T_EQ_INT(rc, 0);
            T_EQ_STR(folded(op.p), "main;work;leaf 1\n");
        } else {
            T_EQ_INT(rc, SC_EFORMAT);
            T_EQ_STR(err, want[i]);
            T_CHECK(op.p == NULL);
        }
        sc_otlp_profile_release(&op);
    }
    sc_otlp_close(r);
    sc_buf_release(&b);
}

static void test_truncated(void)
{
    struct sc_buf b = SC_BUF_INIT;
    put_request(&b, put_shapes_profile, 2, 1);
    int opened = 0, refused = 0;
    for (size_t n = 0; n < b.len; n++) {
        char err[SC_ERR_LEN];
        struct sc_otlp_req *r;
        int rc = sc_otlp_open(b.data, n, 0, NULL, &r, err);
        if (rc) {
            T_EQ_INT(rc, SC_EFORMAT);
            T_CHECK(strstr(err, "malformed OTLP request") != NULL);
            refused++;
            continue;
        }
        opened++;
        for (uint32_t i = 0; i < sc_otlp_nprofiles(r); i++) {
            struct sc_otlp_profile op;
            rc = sc_otlp_build(r, i, &op, err);
            T_CHECK(rc == 0 || rc == SC_EFORMAT);
            sc_otlp_profile_release(&op);
        }
        sc_otlp_close(r);
    }
    /* only the cuts between top-level fields parse */
    T_CHECK(refused > (int)b.len * 9 / 10);
    T_CHECK(opened >= 2);
    sc_buf_release(&b);
}

static void test_json(void)
{
    const char *j =
        "{\"resourceProfiles\":[{\"resource\":{\"attributes\":[{\"key\":\"service.name\","
        "\"value\":{\"stringValue\":\"svc-\\u00e9\"}}]},\"scopeProfiles\":[{\"scope\":"
        "{\"name\":\"s\"},\"profiles\":[{\"sampleType\":{\"typeStrindex\":1,\"unitStrindex\":2},"
        "\"timeUnixNano\":\"1700000000000000000\",\"periodType\":null,\"profileId\":"
        "\"00112233445566778899aabbccddeeff\",\"unknownField\":{\"a\":[1,2,{\"b\":null}]},"
        "\"samples\":[{\"stackIndex\":1,\"values\":[\"7\"],\"timestamps_unix_nano\":"
        "[\"1700000000500000000\"],\"linkIndex\":1},{\"stackIndex\":1,\"values\":[3]}]}]}]}],"
        "\"dictionary\":{\"stringTable\":[\"\",\"samples\",\"count\",\"f\"],"
        "\"functionTable\":[{},{\"nameStrindex\":3}],\"locationTable\":[{},{\"lines\":"
        "[{\"functionIndex\":1}]}],\"stackTable\":[{},{\"locationIndices\":[1]}],"
        "\"linkTable\":[{},{\"traceId\":\"0102030405060708090a0b0c0d0e0f10\","
        "\"spanId\":\"A1A2A3A4A5A6A7A8\"}],\"mappingTable\":[{}],\"attributeTable\":[{}]}}";
    struct sc_buf b = SC_BUF_INIT;
    sc_buf_puts(&b, j);
    char err[SC_ERR_LEN] = "";
    struct sc_otlp_profile op;
    T_EQ_INT(build_one(&b, 1, 0, &op, err), 0);
    if (op.p) {
        T_EQ_STR(t_label(&op.labels, "service_name"), "svc-\xc3\xa9");
        T_EQ_INT(op.p->nsamples, 2);
        T_EQ_INT(op.p->values[0], 7);
        T_EQ_INT(op.p->samples[0].time_ns, 1700000000500000000LL);
        T_EQ_INT(op.p->time_nanos, 1700000000 * NS);
        T_EQ_STR(folded(op.p), "f 10\n");
        struct sc_str v = sample_label(op.p, 0, "span_id", NULL, NULL);
        T_EQ_MEM(v.ptr, v.len, "a1a2a3a4a5a6a7a8");
    }
    sc_otlp_profile_release(&op);
    /* malformed JSON is refused with the offset */
    const char *bad[] = {"",
                         "[]",
                         "{\"resourceProfiles\":[{]}",
                         "{\"dictionary\":{\"stringTable\":[1]}}",
                         "{\"resourceProfiles\":[]} x",
                         "{\"a\":\"\\x\"}",
                         "{\"dictionary\":{\"linkTable\":[{\"traceId\":\"abc\"}]}}"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        struct sc_otlp_req *r = NULL;
        int rc = sc_otlp_open(bad[i], strlen(bad[i]), 1, NULL, &r, err);
        T_EQ_INT(rc, SC_EFORMAT);
        T_CHECK(strstr(err, "malformed OTLP JSON: bad JSON at offset") == err);
        sc_otlp_close(r);
    }
    sc_buf_release(&b);
}

static void test_pbjson(void)
{
    static const struct sc_pbj_field f[] = {
        {"name", 1, SC_PBJ_STRING, 0, NULL}, {"raw_bytes", 2, SC_PBJ_BYTES, 0, NULL},
        {"n", 3, SC_PBJ_INT, 1, NULL},       {"ok", 4, SC_PBJ_BOOL, 0, NULL},
        {"d", 5, SC_PBJ_DOUBLE, 0, NULL},    {"u", 6, SC_PBJ_UINT, 0, NULL},
    };
    static const struct sc_pbj_msg m = {f, 6};
    struct sc_buf out = SC_BUF_INIT;
    char err[SC_ERR_LEN];
    const char *j =
        " {\"name\":\"a\\\"\\n\\ud83d\\ude00\",\"rawBytes\":\"AQI-_w\",\"n\":[-1,\"2\"],"
        "\"ok\":true,\"d\":\"Infinity\",\"u\":18446744073709551615,\"x\":[{}]} ";
    T_EQ_INT(sc_pbjson_transcode(j, strlen(j), &m, 1 << 20, &out, err), 0);
    /* read it back with the wire reader */
    struct sc_pb_rd r = {(const uint8_t *)out.data, (const uint8_t *)out.data + out.len};
    struct sc_pb_field fl;
    int seen = 0;
    while (sc_pb_next(&r, &fl) > 0) {
        if (fl.num == 1)
            T_EQ_MEM(fl.payload.p, fl.payload.end - fl.payload.p, "a\"\n\xf0\x9f\x98\x80");
        if (fl.num == 2)
            T_EQ_MEM(fl.payload.p, fl.payload.end - fl.payload.p, "\x01\x02\x3e\xff");
        if (fl.num == 3)
            T_CHECK(fl.v == (uint64_t)-1 || fl.v == 2);
        if (fl.num == 4)
            T_EQ_INT(fl.v, 1);
        if (fl.num == 6)
            T_CHECK(fl.v == UINT64_MAX);
        seen |= 1 << fl.num;
    }
    T_EQ_INT(seen, 0x7e);
    /* limits and errors */
    out.len = 0;
    T_EQ_INT(sc_pbjson_transcode(j, strlen(j), &m, 4, &out, err), SC_ELIMIT);
    const char *bad[] = {"{\"u\":-1}", "{\"u\":18446744073709551616}", "{\"n\":[1.5]}",
                         "{\"ok\":1}", "{\"raw_bytes\":\"A\"}",        "{\"name\":1}"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        out.len = 0;
        T_EQ_INT(sc_pbjson_transcode(bad[i], strlen(bad[i]), &m, 1 << 20, &out, err), SC_EFORMAT);
    }
    char deep[400];
    size_t n = 0;
    n += (size_t)snprintf(deep, sizeof deep, "{\"x\":");
    for (int i = 0; i < 100; i++)
        deep[n++] = '[';
    for (int i = 0; i < 100; i++)
        deep[n++] = ']';
    deep[n++] = '}';
    out.len = 0;
    T_EQ_INT(sc_pbjson_transcode(deep, n, &m, 1 << 20, &out, err), SC_EFORMAT);
    T_CHECK(strstr(err, "64 deep") != NULL);
    sc_buf_release(&out);
}

static int sum_values(void *ctx, const uint32_t *locs, uint32_t nlocs, const int64_t *values)
{
    (void)locs, (void)nlocs;
    *(int64_t *)ctx += values[0];
    return 0;
}

static void test_pprof_payload(void)
{
    /* a pprof profile as the original payload: decoded as pprof, OTLP samples unused */
    struct sc_profile *pp = sc_profile_new();
    sc_profile_add_sample_type(pp, "alloc_space", "bytes");
    int64_t fn = sc_profile_add_function(pp, (uint32_t)sc_profile_intern(pp, "grow", 4), 0);
    uint32_t loc = (uint32_t)sc_profile_add_simple_location(pp, (uint32_t)fn);
    int64_t v = 4096;
    sc_profile_add_sample(pp, &loc, 1, &v, 0);
    struct sc_buf enc = SC_BUF_INIT;
    T_EQ_INT(sc_pprof_encode(pp, &enc), 0);
    struct sc_buf b = SC_BUF_INIT;
    g = &b;
    beg(1), beg(2), beg(2);
    put_profile_head();
    str(9, "pprof");
    sc_pb_put_bytes(g, 10, enc.data, enc.len);
    end(), end(), end();
    char err[SC_ERR_LEN] = "";
    struct sc_otlp_profile op;
    /* a pprof profile's samples stay in the request: walk them before closing it */
    struct sc_otlp_req *r;
    T_EQ_INT(sc_otlp_open(b.data, b.len, 0, NULL, &r, err), 0);
    T_EQ_INT(sc_otlp_build(r, 0, &op, err), 0);
    T_EQ_INT(op.from_pprof, 1);
    int64_t total = 0;
    if (op.p) {
        T_EQ_INT(sc_profile_nsamples(op.p), 1);
        T_EQ_INT(sc_profile_foreach_sample(op.p, sum_values, &total, err), 0);
    }
    T_EQ_INT(total, 4096);
    sc_otlp_profile_release(&op);
    sc_otlp_close(r);
    /* another format without samples is refused with the reason */
    sc_buf_release(&b);
    sc_buf_init(&b);
    g = &b;
    beg(1), beg(2), beg(2), str(9, "jfr"), sc_pb_put_bytes(g, 10, "x", 1), end(), end(), end();
    T_EQ_INT(build_one(&b, 0, 0, &op, err), SC_EUNSUPPORTED);
    T_CHECK(strstr(err, "'jfr' is not supported") != NULL);
    sc_buf_release(&b);
    sc_buf_release(&enc);
    sc_profile_free(pp);
}

static void test_limits(void)
{
    struct sc_limits lim = sc_limits_cli;
    struct sc_buf b = SC_BUF_INIT;
    put_request(&b, put_shapes_profile, 1, 1);
    char err[SC_ERR_LEN];
    struct sc_otlp_req *r;
    lim.max_strings = 4;
    T_EQ_INT(sc_otlp_open(b.data, b.len, 0, &lim, &r, err), SC_ELIMIT);
    T_CHECK(strstr(err, "string_table") != NULL);
    lim = sc_limits_cli;
    lim.max_stack_depth = 1;
    T_EQ_INT(sc_otlp_open(b.data, b.len, 0, &lim, &r, err), 0);
    struct sc_otlp_profile op;
    T_EQ_INT(sc_otlp_build(r, 0, &op, err), SC_ELIMIT);
    T_CHECK(strstr(err, "deeper than the limit of 1") != NULL);
    sc_otlp_close(r);
    /* inlined lines count: stack 1 is location 3 (leaf inlined into work) and main, three
     * frames in two locations */
    lim = sc_limits_cli;
    lim.max_stack_depth = 2;
    T_EQ_INT(sc_otlp_open(b.data, b.len, 0, &lim, &r, err), 0);
    T_EQ_INT(sc_otlp_build(r, 0, &op, err), SC_ELIMIT);
    T_CHECK(strstr(err, "limits.max_stack_depth") != NULL);
    sc_otlp_close(r);
    lim.max_stack_depth = 3;
    T_EQ_INT(sc_otlp_open(b.data, b.len, 0, &lim, &r, err), 0);
    T_EQ_INT(sc_otlp_build(r, 0, &op, err), 0);
    sc_otlp_profile_release(&op);
    sc_otlp_close(r);
    /* a string longer than max_string ("nanoseconds" is 11 bytes) */
    lim = sc_limits_cli;
    lim.max_string = 8;
    int rc = sc_otlp_open(b.data, b.len, 0, &lim, &r, err);
    if (rc == 0) {
        rc = sc_otlp_build(r, 0, &op, err);
        sc_otlp_close(r);
    }
    T_EQ_INT(rc, SC_ELIMIT);
    T_CHECK(strstr(err, "limits.max_string") != NULL);
    lim = sc_limits_cli;
    lim.max_samples = 4; /* the request has 5 */
    T_EQ_INT(sc_otlp_open(b.data, b.len, 0, &lim, &r, err), 0);
    T_EQ_INT(sc_otlp_build(r, 0, &op, err), SC_ELIMIT);
    sc_otlp_close(r);
    lim = sc_limits_cli;
    lim.max_input = 10;
    T_EQ_INT(sc_otlp_open(b.data, b.len, 0, &lim, &r, err), SC_ELIMIT);
    sc_buf_release(&b);
}

static void test_response_version(void)
{
    struct sc_buf b = SC_BUF_INIT;
    sc_otlp_put_response(&b, 0, 0, NULL);
    T_EQ_INT(b.len, 0);
    sc_otlp_put_response(&b, 0, 2, "bad");
    T_EQ_MEM(b.data, b.len,
             "\x0a\x07\x08\x02\x12\x03"
             "bad");
    b.len = 0;
    sc_otlp_put_response(&b, 1, 2, "a\"b");
    T_EQ_STR(b.data,
             "{\"partialSuccess\":{\"rejectedProfiles\":\"2\",\"errorMessage\":\"a\\\"b\"}}");
    b.len = 0;
    sc_otlp_put_response(&b, 1, 0, "");
    T_EQ_STR(b.data, "{}");
    char err[SC_ERR_LEN];
    T_EQ_INT(sc_otlp_check_version(NULL, err), 0);
    T_EQ_INT(sc_otlp_check_version("1", err), 0);
    T_EQ_INT(sc_otlp_check_version("2", err), SC_EUNSUPPORTED);
    T_EQ_INT(sc_otlp_check_version("01", err), SC_EUNSUPPORTED);
    T_EQ_INT(sc_otlp_check_version("", err), SC_EUNSUPPORTED);
    sc_buf_release(&b);
}

static void test_push_decode(void)
{
    struct sc_buf b = SC_BUF_INIT;
    g = &b;
    for (int k = 0; k < 2; k++) {
        beg(1);
        beg(1), str(1, "__name__"), str(2, k ? "memory" : "process_cpu"), end();
        beg(1), str(1, "service_name"), str(2, "app"), end();
        beg(2), str(1, "PPROF"), str(2, "id"), end();
        if (k)
            beg(2), str(1, "SECOND"), end();
        end();
    }
    struct sc_push_req r;
    char err[SC_ERR_LEN];
    T_EQ_INT(sc_push_decode(b.data, b.len, 0, 48, 1 << 20, &r, err), 0);
    T_EQ_INT(r.nseries, 2);
    T_EQ_INT(r.series[1].nlabels, 2);
    T_EQ_MEM(r.series[1].values[0].ptr, r.series[1].values[0].len, "memory");
    T_EQ_INT(r.series[1].nprofiles, 2);
    T_EQ_MEM(r.series[1].profiles[1].ptr, r.series[1].profiles[1].len, "SECOND");
    sc_push_release(&r);
    T_EQ_INT(sc_push_decode(b.data, b.len, 0, 1, 1 << 20, &r, err), SC_ELIMIT);
    sc_push_release(&r);
    T_EQ_INT(sc_push_decode(b.data, b.len - 1, 0, 48, 1 << 20, &r, err), SC_EFORMAT);
    sc_push_release(&r);
    const char *j = "{\"series\":[{\"labels\":[{\"name\":\"service_name\",\"value\":\"x\"}],"
                    "\"samples\":[{\"rawProfile\":\"UFBST0Y=\",\"ID\":\"u\"}]}]}";
    T_EQ_INT(sc_push_decode(j, strlen(j), 1, 48, 1 << 20, &r, err), 0);
    T_EQ_INT(r.nseries, 1);
    T_EQ_MEM(r.series[0].profiles[0].ptr, r.series[0].profiles[0].len, "PPROF");
    sc_push_release(&r);
    sc_buf_release(&b);
}

int main(void)
{
    T_RUN(test_shapes);
    T_RUN(test_unknown_service);
    T_RUN(test_index0);
    T_RUN(test_bad_indexes);
    T_RUN(test_truncated);
    T_RUN(test_json);
    T_RUN(test_pbjson);
    T_RUN(test_pprof_payload);
    T_RUN(test_limits);
    T_RUN(test_response_version);
    T_RUN(test_push_decode);
    return t_done();
}
