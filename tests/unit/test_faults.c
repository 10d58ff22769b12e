/* test_faults.c - every allocation failing in turn: decoders, ingest and the store's write
 * path answer with an error and leak nothing (LeakSanitizer checks that in the ASan tree).
 *
 * Linked with -Wl,--wrap for malloc, calloc, realloc, strdup and strndup (CMakeLists.txt),
 * so the calls scorch's own code makes go through the counters below; libraries' internal
 * allocations (SQLite, zstd) are theirs and are not failed. */
#include "t.h"
#include "t_perfdata.h"

#include "collect/queue.h"
#include "formats/folded.h"
#include "formats/input.h"
#include "formats/otlp.h"
#include "formats/perf.h"
#include "formats/perfdata.h"
#include "formats/pprof.h"
#include "formats/protowire.h"
#include "formats/push.h"
#include "ingest/ingest.h"
#include "model/buf.h"
#include "model/clock.h"
#include "model/error.h"
#include "model/setting.h"
#include "store/store.h"

#include <malloc.h>
#include <unistd.h>

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t m);
void *__real_realloc(void *p, size_t n);
char *__real_strdup(const char *s);
char *__real_strndup(const char *s, size_t n);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t n, size_t m);
void *__wrap_realloc(void *p, size_t n);
char *__wrap_strdup(const char *s);
char *__wrap_strndup(const char *s, size_t n);

static long alloc_calls, fail_at = -1; /* fail the fail_at-th call (1-based); -1: never */

static int fail_now(void)
{
    return ++alloc_calls == fail_at;
}

void *__wrap_malloc(size_t n)
{
    return fail_now() ? NULL : __real_malloc(n);
}

void *__wrap_calloc(size_t n, size_t m)
{
    return fail_now() ? NULL : __real_calloc(n, m);
}

void *__wrap_realloc(void *p, size_t n)
{
    return fail_now() ? NULL : __real_realloc(p, n);
}

char *__wrap_strdup(const char *s)
{
    return fail_now() ? NULL : __real_strdup(s);
}

char *__wrap_strndup(const char *s, size_t n)
{
    return fail_now() ? NULL : __real_strndup(s, n);
}

/* Inputs made inside an operation (each run its own) are made with counting paused: their
 * allocations are neither counted nor failed. */
static long paused_calls, paused_at;

static void pause_counting(void)
{
    paused_calls = alloc_calls;
    paused_at = fail_at;
    fail_at = -1;
}

static void resume_counting(void)
{
    alloc_calls = paused_calls;
    fail_at = paused_at;
}

/* 1: an operation may succeed past a failed allocation (it has a slower way that needs
 * none: perf.data's records sorted by qsort when the radix sort has no memory) */
static int fallback_ok;

/* Runs op with the 1st, 2nd, ... allocation failing until it needs no more than it got;
 * each failed run must give an SC_E* error code (never a crash), and the last one success.
 * Returns the number of allocations the operation makes. */
static long each_failure(const char *what, int (*op)(void *), void *ctx)
{
    fail_at = -1;
    alloc_calls = 0;
    int rc = op(ctx);
    long total = alloc_calls;
    T_EQ_INT(rc, 0);
    long failed = 0;
    for (long n = 1; n <= total; n++) {
        alloc_calls = 0;
        fail_at = n;
        rc = op(ctx);
        fail_at = -1;
        /* a success is fine only when the run never reached the failing allocation (state
         * such as a cache's size makes runs differ a little); else the failure went
         * unreported */
        if (rc == 0 && alloc_calls >= n && !fallback_ok) {
            fprintf(stderr, "%s: allocation %ld of %ld failed silently\n", what, n, total);
            T_CHECK(0);
        } else if (rc != 0) {
            failed++;
            if (rc > 0 || rc < SC_EINTERNAL) {
                fprintf(stderr, "%s: allocation %ld of %ld gave %d\n", what, n, total, rc);
                T_CHECK(0);
            }
        }
    }
    fprintf(stderr, "%-34s %5ld allocations, %5ld failures reported\n", what, total, failed);
    T_CHECK(total > 0 && failed >= total / 2);
    return total;
}

/* ---- the operations ---- */

struct input {
    const char *data;
    size_t len;
};

static int op_folded(void *ctx)
{
    const struct input *in = ctx;
    struct sc_profile *p = sc_profile_new();
    if (!p)
        return SC_ENOMEM;
    char err[SC_ERR_LEN];
    int rc = sc_folded_decode(in->data, in->len, &sc_limits_cli, p, err);
    sc_profile_free(p);
    return rc;
}

static int op_perf(void *ctx)
{
    const struct input *in = ctx;
    struct sc_profile *p = sc_profile_new();
    if (!p)
        return SC_ENOMEM;
    char err[SC_ERR_LEN];
    struct sc_perf_opts o = {.threads = 1};
    int rc = sc_perf_decode(in->data, in->len, &o, &sc_limits_cli, p, err);
    sc_profile_free(p);
    return rc;
}

static int op_pprof(void *ctx)
{
    const struct input *in = ctx;
    struct sc_profile *p = sc_profile_new();
    if (!p)
        return SC_ENOMEM;
    char err[SC_ERR_LEN];
    int rc = sc_pprof_decode(in->data, in->len, &sc_limits_cli, p, err);
    sc_profile_free(p);
    return rc;
}

static int op_perfdata(void *ctx)
{
    const struct input *in = ctx;
    struct sc_profile *p = sc_profile_new();
    if (!p)
        return SC_ENOMEM;
    char err[SC_ERR_LEN];
    /* (no local files: no symbolizer, whose failures name a DSO after itself by design) */
    static const struct sc_perfdata_opts no_files = {.no_local_files = 1};
    int rc = sc_perfdata_decode((const uint8_t *)in->data, in->len, NULL, &no_files, &sc_limits_cli,
                                p, NULL, err);
    sc_profile_free(p);
    return rc;
}

struct push {
    struct sc_store *s;
    struct sc_ingest_req r;
    const char *body; /* with %d: each run's own frame (so its frames and stacks are new) */
    int n;
    int claimed; /* gzip it as two members and push it as the server does (claimed_push) */
};

/* The server's two runs of a gzip body whose trailer claims too little (sc_server_push):
 * held to the claim, SC_ELIMIT with over_claim and nothing stored; unclaimed, stored. An
 * allocation failing in either run is its own error, never taken for over_claim (1: it
 * was, or the claimed run stored). */
static int claimed_push(struct push *x, const char *body, size_t len)
{
    pause_counting();
    struct sc_buf gz = SC_BUF_INIT;
    int rc = sc_gzip(body, len / 2, 1, &gz);
    if (!rc)
        rc = sc_gzip(body + len / 2, len - len / 2, 1, &gz);
    resume_counting();
    x->r.body = gz.data;
    x->r.len = gz.len;
    x->r.gzip_claim = sc_gzip_claim(gz.data, gz.len);
    struct sc_ingest_result res;
    char err[SC_ERR_LEN];
    if (!rc)
        rc = sc_ingest(x->s, &x->r, &sc_limits_cli, &res, err);
    if (!rc || (res.over_claim && rc != SC_ELIMIT)) {
        rc = 1;
    } else if (res.over_claim) {
        x->r.gzip_claim = 0;
        rc = sc_ingest(x->s, &x->r, &sc_limits_cli, &res, err);
        if (res.over_claim)
            rc = 1;
    }
    sc_buf_release(&gz);
    return rc;
}

static int op_ingest(void *ctx)
{
    struct push *x = ctx;
    /* a new time and new frames each run: every run writes a new profile, new stacks,
     * a new series; so each run makes the same allocations */
    char from[32], body[1024], name[64];
    snprintf(from, sizeof from, "%d", 1796000000 + x->n);
    snprintf(body, sizeof body, x->body, x->n, x->n);
    snprintf(name, sizeof name, "faults%d.cpu{env=test}", x->n);
    x->n++;
    x->r.from = from;
    x->r.body = body;
    x->r.len = strlen(body);
    x->r.name = name;
    if (x->claimed)
        return claimed_push(x, body, x->r.len);
    struct sc_ingest_result res;
    char err[SC_ERR_LEN];
    return sc_ingest(x->s, &x->r, &sc_limits_cli, &res, err);
}

/* ---- OTLP and Pyroscope's Connect push ---- */

#define NS 1000000000LL

/* Protobuf by field number into pb, nested messages with 5-byte lengths patched at
 * pb_end (as tests/unit/test_otlp.c does). */
static struct sc_buf *pb;
static size_t pb_open[16];
static int pb_depth;

static void pb_beg(uint32_t num)
{
    sc_pb_put_tag(pb, num, SC_WT_LEN);
    pb_open[pb_depth++] = pb->len;
    sc_buf_append(pb, "\0\0\0\0\0", 5);
}

static void pb_end(void)
{
    size_t at = pb_open[--pb_depth];
    uint64_t len = pb->len - at - 5;
    for (int i = 0; i < 5; i++, len >>= 7)
        pb->data[at + i] = (char)((len & 0x7f) | (i < 4 ? 0x80 : 0));
}

static void pb_u(uint32_t num, uint64_t v)
{
    sc_pb_put_uint(pb, num, v);
}

static void pb_str(uint32_t num, const char *s)
{
    sc_pb_put_bytes(pb, num, s, strlen(s));
}

static void pb_fixed(uint32_t num, uint64_t v)
{
    sc_pb_put_tag(pb, num, SC_WT_I64);
    sc_buf_append(pb, &v, 8);
}

static void pb_packed(uint32_t num, const int64_t *v, size_t n)
{
    pb_beg(num);
    for (size_t i = 0; i < n; i++)
        sc_pb_put_varint(pb, (uint64_t)v[i]);
    pb_end();
}

static void pb_kv(uint32_t num, const char *k, const char *v)
{
    pb_beg(num), pb_str(1, k), pb_beg(2), pb_str(1, v), pb_end(), pb_end();
}

/* One ExportProfilesServiceRequest: resource service.name=faults-otlp<n> and host.name, a
 * scope, one profile at second 1796000000 + n with a sample of stack [leaf inlined in
 * work<n>, main] worth 10 with a string and a numeric attribute and a link, and a sample of
 * [work<n>, main] with two values paired with timestamps; a mapping. otlp_json writes the
 * same request as OTLP JSON. Frame and service new with n: each run stores new rows. */
static const char *const otlp_strings[] = {
    "",     "samples",     "count",  "cpu",   "nanoseconds", "main",    NULL /* work<n> */,
    "leaf", "thread.name", "app.go", "bytes", "alloc",       "/bin/app"};

static void otlp_proto(struct sc_buf *b, int n)
{
    char svc[32], work[32];
    snprintf(svc, sizeof svc, "faults-otlp%d", n);
    snprintf(work, sizeof work, "work%d", n);
    int64_t t0 = (1796000000LL + n) * NS;
    pb = b;
    pb_beg(1); /* resource_profiles */
    pb_beg(1), pb_kv(1, "service.name", svc), pb_kv(1, "host.name", "h1"), pb_end();
    pb_beg(2); /* scope_profiles */
    pb_beg(1), pb_str(1, "scope-x"), pb_str(2, "1.2"), pb_end();
    pb_beg(2); /* the profile */
    pb_beg(1), pb_u(1, 1), pb_u(2, 2), pb_end();
    pb_fixed(3, (uint64_t)t0);
    pb_u(4, 10 * NS);
    pb_beg(5), pb_u(1, 3), pb_u(2, 4), pb_end();
    pb_u(6, 10000000);
    int64_t attrs[] = {1, 2}, v1[] = {10}, v2[] = {2, 3};
    pb_beg(2), pb_u(1, 1), pb_packed(2, attrs, 2), pb_u(3, 1), pb_packed(4, v1, 1), pb_end();
    pb_beg(2), pb_u(1, 2), pb_packed(4, v2, 2);
    pb_fixed(5, (uint64_t)(t0 + NS)), pb_fixed(5, (uint64_t)(t0 + 2 * NS)), pb_end();
    pb_end(), pb_end(), pb_end();
    pb_beg(2); /* the dictionary */
    pb_beg(1), pb_end(), pb_beg(1), pb_u(1, 0x1000), pb_u(4, 12), pb_end();
    pb_beg(2), pb_end();
    pb_beg(2), pb_beg(3), pb_u(1, 1), pb_end(), pb_end();
    pb_beg(2), pb_beg(3), pb_u(1, 2), pb_u(2, 10), pb_end(), pb_end();
    pb_beg(2), pb_u(1, 1), pb_u(2, 0x1234);
    pb_beg(3), pb_u(1, 3), pb_end(), pb_beg(3), pb_u(1, 2), pb_u(2, 11), pb_end(), pb_end();
    pb_beg(3), pb_end();
    pb_beg(3), pb_u(1, 5), pb_u(3, 9), pb_end();
    pb_beg(3), pb_u(1, 6), pb_end();
    pb_beg(3), pb_u(1, 7), pb_end();
    pb_beg(4), pb_end(), pb_beg(4);
    sc_pb_put_bytes(pb, 1, "\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c\x0d\x0e\x0f\x10", 16);
    sc_pb_put_bytes(pb, 2, "\xaa\xbb\xcc\xdd\xee\xff\x00\x11", 8);
    pb_end();
    for (size_t i = 0; i < sizeof otlp_strings / sizeof otlp_strings[0]; i++)
        pb_str(5, otlp_strings[i] ? otlp_strings[i] : work);
    pb_beg(6), pb_end();
    pb_beg(6), pb_u(1, 8), pb_beg(2), pb_str(1, "t1"), pb_end(), pb_end();
    pb_beg(6), pb_u(1, 11), pb_beg(2), pb_u(3, 5), pb_end(), pb_u(3, 10), pb_end();
    int64_t s1[] = {3, 1}, s2[] = {2, 1};
    pb_beg(7), pb_end();
    pb_beg(7), pb_packed(1, s1, 2), pb_end();
    pb_beg(7), pb_packed(1, s2, 2), pb_end();
    pb_end();
}

static void otlp_json(struct sc_buf *b, int n)
{
    long long t0 = (1796000000LL + n) * NS;
    sc_buf_printf(b,
                  "{\"resourceProfiles\":[{\"resource\":{\"attributes\":[{\"key\":\"service.name\","
                  "\"value\":{\"stringValue\":\"faults-otlp%d\"}},{\"key\":\"host.name\",\"value\":"
                  "{\"stringValue\":\"h1\"}}]},\"scopeProfiles\":[{\"scope\":{\"name\":\"scope-x\","
                  "\"version\":\"1.2\"},\"profiles\":[{\"sampleType\":{\"typeStrindex\":1,"
                  "\"unitStrindex\":2},\"timeUnixNano\":\"%lld\",\"durationNano\":\"10000000000\","
                  "\"periodType\":{\"typeStrindex\":3,\"unitStrindex\":4},\"period\":\"10000000\","
                  "\"samples\":[{\"stackIndex\":1,\"attributeIndices\":[1,2],\"linkIndex\":1,"
                  "\"values\":[\"10\"]},{\"stackIndex\":2,\"values\":[2,3],\"timestampsUnixNano\":"
                  "[\"%lld\",\"%lld\"]}]}]}]}],",
                  n, t0, t0 + NS, t0 + 2 * NS);
    sc_buf_puts(b, "\"dictionary\":{\"mappingTable\":[{},{\"memoryStart\":\"4096\","
                   "\"filenameStrindex\":12}],\"locationTable\":[{},{\"lines\":"
                   "[{\"functionIndex\":1}]},{\"lines\":[{\"functionIndex\":2,\"line\":\"10\"}]},"
                   "{\"mappingIndex\":1,\"address\":\"4660\",\"lines\":[{\"functionIndex\":3},"
                   "{\"functionIndex\":2,\"line\":\"11\"}]}],\"functionTable\":[{},"
                   "{\"nameStrindex\":5,\"filenameStrindex\":9},{\"nameStrindex\":6},"
                   "{\"nameStrindex\":7}],\"linkTable\":[{},{\"traceId\":"
                   "\"0102030405060708090a0b0c0d0e0f10\",\"spanId\":\"aabbccddeeff0011\"}],"
                   "\"stringTable\":[");
    for (size_t i = 0; i < sizeof otlp_strings / sizeof otlp_strings[0]; i++) {
        if (otlp_strings[i])
            sc_buf_printf(b, "%s\"%s\"", i ? "," : "", otlp_strings[i]);
        else
            sc_buf_printf(b, ",\"work%d\"", n);
    }
    sc_buf_puts(b, "],\"attributeTable\":[{},{\"keyStrindex\":8,\"value\":{\"stringValue\":"
                   "\"t1\"}},{\"keyStrindex\":11,\"value\":{\"intValue\":\"5\"},"
                   "\"unitStrindex\":10}],\"stackTable\":[{},{\"locationIndices\":[3,1]},"
                   "{\"locationIndices\":[2,1]}]}}");
}

/* An OTLP or push request to decode */
struct request {
    struct input in;
    int json;
    char folded[256]; /* OTLP: the profile's stacks and service_name, as last built */
};

/* Opens the request and builds every profile, as sc_ingest_otlp does; what was built is
 * kept as text to compare the two encodings. */
static int op_otlp(void *ctx)
{
    struct request *x = ctx;
    char err[SC_ERR_LEN];
    struct sc_otlp_req *r = NULL;
    int rc = sc_otlp_open(x->in.data, x->in.len, x->json, &sc_limits_cli, &r, err);
    for (uint32_t i = 0; !rc && i < sc_otlp_nprofiles(r); i++) {
        struct sc_otlp_profile op;
        rc = sc_otlp_build(r, i, &op, err);
        if (!rc) {
            /* written with counting paused: the folded writer is not what is tested */
            pause_counting();
            struct sc_buf f = SC_BUF_INIT;
            const char *svc = t_label(&op.labels, "service_name");
            if (sc_folded_write(op.p, 0, &f, err) == 0)
                snprintf(x->folded, sizeof x->folded, "%s|%s", f.data ? f.data : "",
                         svc ? svc : "(none)");
            sc_buf_release(&f);
            resume_counting();
        }
        sc_otlp_profile_release(&op);
    }
    sc_otlp_close(r);
    return rc;
}

static int op_push_decode(void *ctx)
{
    const struct request *x = ctx;
    char err[SC_ERR_LEN];
    struct sc_push_req r;
    int rc = sc_push_decode(x->in.data, x->in.len, x->json, 48, 1 << 20, &r, err);
    if (!rc && (r.nseries != 2 || r.series[1].nprofiles != 2))
        rc = 1; /* decoded wrong */
    sc_push_release(&r);
    return rc;
}

/* A PushRequest of two series (__name__ and service_name faults-push<n>; one and two raw
 * profiles). */
static void push_proto(struct sc_buf *b, int n, const void *raw, size_t len)
{
    char svc[32];
    snprintf(svc, sizeof svc, "faults-push%d", n);
    pb = b;
    for (int k = 0; k < 2; k++) {
        pb_beg(1);
        pb_beg(1), pb_str(1, "__name__"), pb_str(2, k ? "memory" : "process_cpu"), pb_end();
        pb_beg(1), pb_str(1, "service_name"), pb_str(2, svc), pb_end();
        for (int i = 0; i <= k; i++) {
            pb_beg(2);
            sc_pb_put_bytes(pb, 1, raw, len);
            pb_str(2, "id");
            pb_end();
        }
        pb_end();
    }
}

struct otlp_push {
    struct sc_store *s;
    int n;
    int json;
    int connect; /* sc_ingest_push instead of sc_ingest_otlp */
};

/* The server's /v1development/profiles (and Connect push) into a store: each run a new
 * service, frame and time, so each run writes new series, stacks and profiles and makes
 * the same allocations. A profile refused (rejected) in a run that asked for nothing bad
 * is reported as 1: an allocation failure taken for a bad profile. */
static int op_ingest_otlp(void *ctx)
{
    struct otlp_push *x = ctx;
    pause_counting();
    struct sc_buf body = SC_BUF_INIT, pprof = SC_BUF_INIT;
    if (x->connect) {
        char text[128], err[SC_ERR_LEN];
        snprintf(text, sizeof text, "main;push%d;a 10\nmain;push%d;b 5\n", x->n, x->n);
        struct sc_profile *p = sc_profile_new();
        if (!p || sc_folded_decode(text, strlen(text), &sc_limits_cli, p, err) ||
            sc_pprof_encode(p, &pprof))
            T_CHECK(0);
        sc_profile_free(p);
        push_proto(&body, x->n, pprof.data, pprof.len);
    } else if (x->json) {
        otlp_json(&body, x->n);
    } else {
        otlp_proto(&body, x->n);
    }
    x->n++;
    resume_counting();
    struct sc_ingest_batch res;
    char err[SC_ERR_LEN];
    int rc = x->connect ? sc_ingest_push(x->s, NULL, body.data, body.len, 0, x->json,
                                         &sc_limits_cli, &res, err)
                        : sc_ingest_otlp(x->s, NULL, body.data, body.len, 0, x->json,
                                         &sc_limits_cli, &res, err);
    if (!rc && (res.rejected || res.stored != (x->connect ? 3u : 1u))) {
        fprintf(stderr, "stored %u, rejected %u: %s\n", (unsigned)res.stored,
                (unsigned)res.rejected, res.reason);
        rc = 1;
    }
    sc_buf_release(&body);
    sc_buf_release(&pprof);
    return rc;
}

static const char folded_text[] = "main;a;b 10\nmain;a;c 5\nmain;d 3\nother 1\n";
static const char perf_text[] = "prog 123/123 [000] 10.000000: 1 cpu-clock:\n"
                                "\t4005d0 hot (/bin/prog)\n\t400600 main (/bin/prog)\n\n"
                                "prog 123/124 [001] 10.010000: 1 cpu-clock:\n"
                                "\t4005e0 cold (/bin/prog)\n\t400600 main (/bin/prog)\n\n";

static void test_decoders(void)
{
    struct input f = {folded_text, sizeof folded_text - 1};
    each_failure("folded decode", op_folded, &f);
    struct input pf = {perf_text, sizeof perf_text - 1};
    each_failure("perf script decode", op_perf, &pf);
    /* a pprof: the folded profile encoded */
    struct sc_profile *p = sc_profile_new();
    char err[SC_ERR_LEN];
    T_EQ_INT(sc_folded_decode(folded_text, sizeof folded_text - 1, &sc_limits_cli, p, err), 0);
    struct sc_buf enc = SC_BUF_INIT;
    T_EQ_INT(sc_pprof_encode(p, &enc), 0);
    sc_profile_free(p);
    struct input pp = {enc.data, enc.len};
    each_failure("pprof decode", op_pprof, &pp);
    sc_buf_release(&enc);
    /* a perf.data: a process, its map, samples of user and kernel frames */
    struct sc_buf d = SC_BUF_INIT, pdf = SC_BUF_INIT;
    comm(&d, 10, 10, "web server", 5);
    mmap2(&d, 10, 0x400000, 0x1000, "/nonexistent/bin/app", 6);
    uint64_t c1[] = {CTX_USER, 0x400010, 0x400020};
    uint64_t c2[] = {CTX_KERNEL, 0xffffffff81000000ull, CTX_USER, 0x500000};
    sample(&d, 10, 11, 300, 7, c1, 3);
    sample(&d, 10, 10, 200, 1, c2, 4);
    file(&pdf, &d);
    struct input pd = {pdf.data, pdf.len};
    fallback_ok = 1;
    each_failure("perf.data decode", op_perfdata, &pd);
    fallback_ok = 0;
    sc_buf_release(&pdf);
    sc_buf_release(&d);
}

/* push.v1.PushRequest in Connect's JSON: what push_proto(b, 0, "PPROF", 5) makes (the last
 * base64 unpadded, which Connect allows) */
static const char push_json[] =
    "{\"series\":[{\"labels\":[{\"name\":\"__name__\",\"value\":\"process_cpu\"},"
    "{\"name\":\"service_name\",\"value\":\"faults-push0\"}],\"samples\":"
    "[{\"rawProfile\":\"UFBST0Y=\",\"ID\":\"id\"}]},{\"labels\":[{\"name\":\"__name__\","
    "\"value\":\"memory\"},{\"name\":\"service_name\",\"value\":\"faults-push0\"}],"
    "\"samples\":[{\"rawProfile\":\"UFBST0Y=\",\"ID\":\"id\"},{\"rawProfile\":"
    "\"UFBST0Y\",\"ID\":\"id\"}]}]}";

static void test_otlp_and_push(void)
{
    struct sc_buf proto = SC_BUF_INIT, json = SC_BUF_INIT;
    otlp_proto(&proto, 0);
    otlp_json(&json, 0);
    struct request p = {{proto.data, proto.len}, 0, ""}, j = {{json.data, json.len}, 1, ""};
    each_failure("OTLP decode (protobuf)", op_otlp, &p);
    each_failure("OTLP decode (JSON)", op_otlp, &j);
    /* both encodings are the one request: the inlined leaf under work0, the labels */
    T_EQ_STR(p.folded, "main;work0 5\nmain;work0;leaf 10\n|faults-otlp0");
    T_EQ_STR(j.folded, p.folded);
    sc_buf_release(&proto);
    sc_buf_release(&json);
    struct sc_buf push = SC_BUF_INIT;
    push_proto(&push, 0, "PPROF", 5);
    struct request pp = {{push.data, push.len}, 0, ""};
    each_failure("push decode (protobuf)", op_push_decode, &pp);
    struct request pj = {{push_json, sizeof push_json - 1}, 1, ""};
    each_failure("push decode (JSON)", op_push_decode, &pj);
    sc_buf_release(&push);
}

static void test_ingest_and_store(void)
{
    char dir[] = "/tmp/scorch-test-faults-XXXXXX";
    if (!mkdtemp(dir)) {
        T_CHECK(0);
        return;
    }
    struct sc_store_opts o;
    sc_store_opts_init(&o);
    o.dir = dir;
    o.background = 0;
    o.durable = 0;
    struct sc_store *s = NULL;
    char err[SC_ERR_LEN];
    T_EQ_INT(sc_store_open(&o, &s, err), 0);
    if (!s)
        return;
    struct push x = {
        s, {.format = "folded"}, "main;a;b%d 10\nmain;a;c 5\nmain;d%d 3\nother 1\n", 0, 0};
    long n = each_failure("ingest + store write (folded)", op_ingest, &x);
    x.r.format = "perf_script";
    x.body = "prog 123/123 [000] 10.000000: 1 cpu-clock:\n\t4005d0 hot%d (/bin/prog)\n"
             "\t400600 main (/bin/prog)\n\nprog 123/124 [001] 10.010000: 1 cpu-clock:\n"
             "\t4005e0 cold%d (/bin/prog)\n\t400600 main (/bin/prog)\n\n";
    n += each_failure("ingest + store write (perf)", op_ingest, &x);
    x.r.format = "folded";
    x.body = "main;a;b%d 10\nmain;a;c 5\nmain;d%d 3\nother 1\n";
    x.claimed = 1;
    n += each_failure("ingest + store (gzip, claimed)", op_ingest, &x);
    struct otlp_push op = {s, 0, 0, 0};
    n += each_failure("OTLP ingest + store (protobuf)", op_ingest_otlp, &op);
    op.json = 1;
    n += each_failure("OTLP ingest + store (JSON)", op_ingest_otlp, &op);
    op.json = 0;
    op.connect = 1;
    n += each_failure("push ingest + store (protobuf)", op_ingest_otlp, &op);
    T_CHECK(n > 0);
    /* a push whose last profile is refused for its time (1970), the others decoded already:
     * the request is refused whole, and the refused profile is freed too (it leaked, found
     * by fuzz_http: LeakSanitizer says so in the ASan tree) */
    {
        struct sc_profile *old = sc_profile_new();
        struct sc_buf pprof = SC_BUF_INIT, body = SC_BUF_INIT;
        T_EQ_INT(sc_folded_decode("main;old 1\n", 11, &sc_limits_cli, old, err), 0);
        old->time_nanos = SC_NS_PER_S;
        T_EQ_INT(sc_pprof_encode(old, &pprof), 0);
        push_proto(&body, 999, pprof.data, pprof.len);
        struct sc_ingest_batch res;
        err[0] = 0;
        /* the server's limits: a time window, the retention's (the CLI's has none) */
        struct sc_limits lim = sc_limits_server;
        lim.max_age_ns = sc_setting_default_i(SC_SET_STORAGE_RETENTION);
        T_CHECK(sc_ingest_push(s, NULL, body.data, body.len, 0, 0, &lim, &res, err) < 0);
        T_CHECK(strstr(err, "1970") != NULL);
        T_EQ_INT(res.stored, 0);
        sc_buf_release(&pprof);
        sc_buf_release(&body);
        sc_profile_free(old);
    }
    /* what was written reads back whole: every successful run stored one profile */
    struct sc_store_stats st;
    T_EQ_INT(sc_store_stats(s, &st, err), 0);
    T_CHECK(st.profiles > 0);
    sc_store_close(s);
    t_rmrf(dir);
}

/* The agent's queue: memory running out while an entry is read back keeps the entry (it was
 * once dropped as if damaged, a profile lost); the next take gets it whole. */
static void test_queue_take(void)
{
    char dir[] = "/tmp/scorch-test-faults-q-XXXXXX";
    if (!mkdtemp(dir)) {
        T_CHECK(0);
        return;
    }
    struct sc_queue *q = NULL;
    char err[SC_ERR_LEN];
    T_EQ_INT(sc_queue_open(dir, 1 << 20, &q, err), 0);
    if (!q)
        return;
    T_EQ_INT(sc_queue_push(q, "name=a", 6, "main;a 1\n", 9, err), 0);
    long failed = 0;
    for (long n = 1; n <= 8; n++) {
        struct sc_queue_entry e;
        alloc_calls = 0;
        fail_at = n;
        int rc = sc_queue_take(q, 0, &e, err);
        fail_at = -1;
        if (rc == 0) {
            T_EQ_STR(e.meta.data, "name=a");
            T_EQ_MEM(e.body.data, e.body.len, "main;a 1\n");
            sc_queue_putback(q, e.seq);
            sc_queue_entry_release(&e);
            continue;
        }
        T_EQ_INT(rc, SC_ENOMEM);
        failed++;
    }
    T_CHECK(failed >= 2); /* the file's buffer and the entry's copies */
    struct sc_queue_entry e;
    T_EQ_INT(sc_queue_take(q, 0, &e, err), 0);
    T_EQ_STR(e.meta.data, "name=a");
    sc_queue_done(q, e.seq);
    sc_queue_entry_release(&e);
    sc_queue_close(q);
    t_rmrf(dir);
}

/* Columns that grow together: a column whose memory ran out leaves the capacity as it was
 * and every column its elements (a profile's values were once left short of a capacity its
 * samples had already taken, and the next samples' values written past their end). */
static void test_grow_columns(void)
{
    uint32_t *a = NULL, *b = NULL, cap = 0;
    const struct sc_grow_part cols[] = {SC_GROW_PART(a), SC_GROW_PART(b)};
    T_EQ_INT(sc_grow_arrays(&cap, 16, 0, cols, 2), 0);
    for (uint32_t i = 0; i < 16; i++)
        a[i] = b[i] = i + 1;
    alloc_calls = 0;
    fail_at = 2; /* b's realloc */
    T_EQ_INT(sc_grow_arrays(&cap, 17, 0, cols, 2), SC_ENOMEM);
    fail_at = -1;
    T_EQ_INT(cap, 16);
    T_CHECK(a[15] == 16 && b[15] == 16);
    T_EQ_INT(sc_grow_arrays(&cap, 17, 0, cols, 2), 0);
    T_EQ_INT(cap, 32);
    T_CHECK(a[15] == 16 && b[15] == 16 && a[16] == 0 && b[31] == 0);
    free(a);
    free(b);

    struct sc_profile *p = sc_profile_new();
    if (!p) {
        T_CHECK(0);
        return;
    }
    T_CHECK(sc_profile_add_sample_type(p, "a", "count") >= 0);
    T_CHECK(sc_profile_add_sample_type(p, "b", "count") >= 0);
    uint32_t loc = 0;
    long failed = 0;
    for (int64_t i = 0; i < 200; i++) {
        int64_t v[2] = {i, -i};
        alloc_calls = 0;
        fail_at = 1 + i % 3; /* samples, values or sample_locs */
        int64_t rc = sc_profile_add_sample(p, &loc, 1, v, 0);
        fail_at = -1;
        if (rc < 0) {
            failed++;
            T_EQ_INT(rc, SC_ENOMEM);
            T_CHECK(malloc_usable_size(p->values) >= (size_t)p->samples_cap * 2 * sizeof *v);
            rc = sc_profile_add_sample(p, &loc, 1, v, 0);
        }
        T_EQ_INT(rc, i);
    }
    T_CHECK(failed >= 3);
    T_EQ_INT(p->nsamples, 200);
    for (uint32_t i = 0; i < p->nsamples; i++)
        T_CHECK(p->values[2 * i] == i && p->values[2 * i + 1] == -(int64_t)i);
    sc_profile_free(p);
}

int main(void)
{
    T_RUN(test_decoders);
    T_RUN(test_otlp_and_push);
    T_RUN(test_ingest_and_store);
    T_RUN(test_queue_take);
    T_RUN(test_grow_columns);
    return t_done();
}
