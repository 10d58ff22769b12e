/* test_model.c - arena, buffers, hashing, interning, stack tree, merge and units. */
#include "t.h"

#include "formats/folded.h"
#include "model/arena.h"
#include "model/buf.h"
#include "model/clock.h"
#include "model/error.h"
#include "model/hash.h"
#include "model/log.h"
#include "model/merge.h"
#include "model/prom.h"
#include "model/profile.h"
#include "model/units.h"

#include <errno.h>
#include <stdint.h>

static struct sc_profile *folded(const char *text)
{
    struct sc_profile *p = sc_profile_new();
    char err[SC_ERR_LEN] = "";
    int rc = sc_folded_decode(text, strlen(text), &sc_limits_cli, p, err);
    if (rc) {
        fprintf(stderr, "folded decode: %s\n", err);
        sc_profile_free(p);
        return NULL;
    }
    return p;
}

static void test_arena(void)
{
    struct sc_arena a;
    sc_arena_init(&a);
    char *prev = NULL;
    for (int i = 0; i < 10000; i++) {
        char *p = sc_arena_alloc(&a, (size_t)(i % 37) + 1);
        T_CHECK(p != NULL);
        T_EQ_INT((uintptr_t)p % 16, 0);
        memset(p, 0xab, (size_t)(i % 37) + 1);
        T_CHECK(p != prev);
        prev = p;
    }
    char *big = sc_arena_alloc(&a, 1 << 20);
    T_CHECK(big != NULL);
    memset(big, 1, 1 << 20);
    /* a small allocation after a big one still comes from the current chunk */
    char *s = sc_arena_strndup(&a, "hello world", 5);
    T_EQ_STR(s, "hello");
    T_CHECK(sc_arena_calloc(&a, SIZE_MAX / 2, 4) == NULL); /* overflow refused */
    T_CHECK(a.total >= (1 << 20));
    sc_arena_release(&a);
    T_EQ_INT(a.total, 0);
}

static void test_buf(void)
{
    struct sc_buf b = SC_BUF_INIT;
    sc_buf_put_i64(&b, INT64_MIN);
    sc_buf_putc(&b, ' ');
    sc_buf_put_u64(&b, UINT64_MAX);
    sc_buf_putc(&b, ' ');
    sc_buf_put_i64(&b, 0);
    T_EQ_STR(b.data, "-9223372036854775808 18446744073709551615 0");
    b.len = 0;
    sc_buf_put_json_str(&b, "a\"b\\c\n\x01", 7);
    T_EQ_STR(b.data, "a\\\"b\\\\c\\n\\u0001");
    b.len = 0;
    /* JSON is always valid UTF-8: well-formed sequences stay, anything else is U+FFFD
     * (a stray continuation byte, an overlong, a surrogate, past U+10FFFF, a truncated
     * sequence at the end) */
    sc_buf_put_json_str(&b,
                        "\xc3\xa9|\xe2\x82\xac|\xf0\x9f\x94\xa5|\x80|\xc0\xaf|\xed\xa0\x80|"
                        "\xf4\x90\x80\x80|\xe2\x82",
                        28);
    T_EQ_STR(b.data, "\xc3\xa9|\xe2\x82\xac|\xf0\x9f\x94\xa5|\\ufffd|\\ufffd\\ufffd|"
                     "\\ufffd\\ufffd\\ufffd|\\ufffd\\ufffd\\ufffd\\ufffd|\\ufffd\\ufffd");
    b.len = 0;
    /* the same rule without JSON's escapes (readers of JSON, regex subjects) */
    sc_buf_put_utf8(&b, "\xc3\xa9|\x80|\xc0\xaf|\xe2\x82", 10);
    sc_buf_append(&b, "", 1);
    T_EQ_STR(b.data, "\xc3\xa9|\xef\xbf\xbd|\xef\xbf\xbd\xef\xbf\xbd|\xef\xbf\xbd\xef\xbf\xbd");
    b.len = 0;
    char big[1000];
    memset(big, 'x', sizeof big - 1);
    big[sizeof big - 1] = 0;
    sc_buf_printf(&b, "%s|%d", big, 42);
    T_EQ_INT(b.len, 999 + 3);
    T_CHECK(strcmp(b.data + 999, "|42") == 0);
    T_EQ_INT(b.oom, 0);
    size_t len;
    char *d = sc_buf_detach(&b, &len);
    T_EQ_INT(len, 1002);
    T_CHECK(b.data == NULL && b.len == 0);
    free(d);
}

/* The array growth every table uses: doubling from 16, one capacity for parallel columns,
 * the new tail filled when asked, the limits kept. */
static void test_grow(void)
{
    uint32_t *a = NULL, cap = 0;
    T_EQ_INT(sc_grow_array(&a, &cap, 0, sizeof *a), 0);
    T_CHECK(a == NULL && cap == 0);
    T_EQ_INT(sc_grow_array_fill(&a, &cap, 5, sizeof *a, 0xff), 0);
    T_EQ_INT(cap, 16);
    uint32_t ones = 0;
    for (uint32_t i = 0; i < cap; i++)
        ones += a[i] == UINT32_MAX;
    T_EQ_INT(ones, 16);
    a[3] = 7;
    T_EQ_INT(sc_grow_array_fill(&a, &cap, 40, sizeof *a, 0), 0);
    T_EQ_INT(cap, 64);
    T_CHECK(a[3] == 7 && a[15] == UINT32_MAX && a[16] == 0 && a[63] == 0);
    T_EQ_INT(sc_grow_array(&a, &cap, (uint64_t)UINT32_MAX / 2 + 1, sizeof *a), SC_ELIMIT);
    T_EQ_INT(cap, 64);
    free(a);

    /* columns of one table: a row of three values beside each id; a size-0 part untouched */
    uint64_t *ids = NULL;
    int64_t *vals = NULL;
    char *none = NULL;
    uint32_t n = 0;
    const struct sc_grow_part cols[] = {SC_GROW_PART(ids), {&vals, 3 * sizeof *vals}, {&none, 0}};
    for (uint32_t i = 0; i < 100; i++) {
        T_EQ_INT(sc_grow_arrays(&n, (uint64_t)i + 1, -1, cols, 3), 0);
        ids[i] = i;
        for (int k = 0; k < 3; k++)
            vals[3 * i + k] = -(int64_t)i * k;
    }
    T_EQ_INT(n, 128);
    T_CHECK(none == NULL);
    T_CHECK(ids[99] == 99 && vals[3 * 99 + 2] == -198 && vals[3 * 50 + 1] == -50);
    /* a size that would pass SIZE_MAX bytes is a limit, not a wrapped small allocation */
    const struct sc_grow_part huge[] = {{&none, SIZE_MAX / 64}};
    uint32_t hcap = 0;
    T_EQ_INT(sc_grow_arrays(&hcap, 100, -1, huge, 1), SC_ELIMIT);
    T_CHECK(none == NULL && hcap == 0);
    free(ids);
    free(vals);
}

static void test_map64(void)
{
    struct sc_map64 m;
    sc_map64_init(&m);
    T_CHECK(sc_map64_get(&m, 5) == NULL);
    for (uint32_t i = 0; i < 100000; i++) {
        int added;
        uint32_t *v = sc_map64_upsert(&m, (uint64_t)i * 0x100000000ULL + 7, i, &added);
        T_CHECK(v && added);
        if (!v || !added)
            break;
    }
    T_EQ_INT(m.count, 100000);
    int added = 1;
    uint32_t *v = sc_map64_upsert(&m, 77ULL * 0x100000000ULL + 7, 0, &added);
    T_CHECK(v && !added && *v == 77);
    int bad = 0;
    for (uint32_t i = 0; i < 100000; i++) {
        uint32_t *g = sc_map64_get(&m, (uint64_t)i * 0x100000000ULL + 7);
        bad += !g || *g != i;
    }
    T_EQ_INT(bad, 0);
    T_CHECK(sc_map64_get(&m, 8) == NULL);
    /* a walk meets every entry once, each with its own value; keys that differ only in
     * their high half are told apart */
    uint8_t *seen = calloc(100000, 1);
    uint32_t pos = 0, val, walked = 0;
    uint64_t key;
    bad = 0;
    while (seen && sc_map64_next(&m, &pos, &key, &val)) {
        walked++;
        bad += val >= 100000 || key != (uint64_t)val * 0x100000000ULL + 7 || seen[val]++;
    }
    T_EQ_INT(walked, 100000);
    T_EQ_INT(bad, 0);
    free(seen);
    sc_map64_release(&m);
    pos = 0;
    T_CHECK(!sc_map64_next(&m, &pos, &key, &val)); /* an empty map: nothing */
    /* the stable hash must never change: ids on disk depend on it */
    T_EQ_INT(sc_hash64("", 0), (int64_t)0x2d06800538d394c2ULL);
    T_CHECK(sc_hash64("abc", 3) != sc_hash64("abd", 3));
}

static void test_strtab(void)
{
    struct sc_profile *p = sc_profile_new();
    T_EQ_INT(p->strings.n, 1);
    T_EQ_INT(p->strings.v[0].len, 0);
    /* verbatim pushes (as a pprof table) then interning finds them, first one wins */
    sc_strtab_push(&p->strings, "dup", 3);
    sc_strtab_push(&p->strings, "dup", 3);
    T_EQ_INT(sc_profile_intern(p, "dup", 3), 1);
    T_EQ_INT(sc_profile_intern(p, "", 0), 0);
    int64_t a = sc_profile_intern(p, "alpha", 5);
    T_EQ_INT(a, 3);
    T_EQ_INT(sc_profile_intern(p, "alpha", 5), a);
    char name[32];
    for (int i = 0; i < 5000; i++) {
        int n = snprintf(name, sizeof name, "fn%d", i);
        T_EQ_INT(sc_profile_intern(p, name, (size_t)n), 4 + i);
    }
    T_EQ_INT(sc_profile_intern(p, "fn1234", 6), 4 + 1234);
    T_EQ_MEM(p->strings.v[4 + 99].ptr, p->strings.v[4 + 99].len, "fn99");
    sc_profile_free(p);
}

static void test_sample_index(void)
{
    struct sc_profile *p = sc_profile_new();
    char err[SC_ERR_LEN] = "";
    T_CHECK(sc_profile_sample_index(p, NULL, err) < 0);
    sc_profile_add_sample_type(p, "alloc_space", "bytes");
    sc_profile_add_sample_type(p, "inuse_space", "bytes");
    T_EQ_INT(sc_profile_sample_index(p, NULL, err), 1); /* last when no default */
    p->default_sample_type = p->sample_types[0].type;
    T_EQ_INT(sc_profile_sample_index(p, "", err), 0);
    T_EQ_INT(sc_profile_sample_index(p, "inuse_space", err), 1);
    T_EQ_INT(sc_profile_sample_index(p, "1", err), 1);
    T_EQ_INT(sc_profile_sample_index(p, "nope", err), SC_ENOTFOUND);
    T_CHECK(strstr(err, "alloc_space, inuse_space") != NULL);
    sc_profile_free(p);
}

static void test_stackwalk_inline(void)
{
    /* one location with two lines: inner (inlined) into outer; leaf-first sample */
    struct sc_profile *p = sc_profile_new();
    sc_profile_add_sample_type(p, "samples", "count");
    int64_t fo = sc_profile_add_function(p, (uint32_t)sc_profile_intern(p, "outer", 5), 0);
    int64_t fi = sc_profile_add_function(p, (uint32_t)sc_profile_intern(p, "inner", 5), 0);
    int64_t fm = sc_profile_add_function(p, (uint32_t)sc_profile_intern(p, "main", 4), 0);
    int64_t lm = sc_profile_add_simple_location(p, (uint32_t)fm);
    int64_t li = sc_profile_add_simple_location(p, (uint32_t)fi);
    /* make li a two-line location: inner then outer */
    p->lines = realloc(p->lines, (p->nlines + 2) * sizeof *p->lines);
    p->lines[p->nlines] = (struct sc_line){(uint32_t)fi + 1, 10, 0};
    p->lines[p->nlines + 1] = (struct sc_line){(uint32_t)fo + 1, 20, 0};
    p->locations[li].line_start = p->nlines;
    p->locations[li].nlines = 2;
    p->nlines += 2;
    uint32_t locs[2] = {(uint32_t)li, (uint32_t)lm};
    int64_t v = 7;
    sc_profile_add_sample(p, locs, 2, &v, 0);
    char err[SC_ERR_LEN];
    T_EQ_INT(sc_profile_validate(p, err), 0);
    struct sc_buf out = SC_BUF_INIT;
    T_EQ_INT(sc_folded_write(p, 0, &out, err), 0);
    T_EQ_STR(out.data, "main;outer;inner 7\n");
    sc_buf_release(&out);
    sc_profile_free(p);
}

static void test_merge(void)
{
    struct sc_profile *a = folded("x;y 3\nx 1\n");
    struct sc_profile *b = folded("x;y 4\nz 2\n");
    char err[SC_ERR_LEN] = "";
    T_EQ_INT(sc_profile_append(a, b, err), 0);
    T_EQ_INT(a->nsamples, 4);
    struct sc_buf out = SC_BUF_INIT;
    T_EQ_INT(sc_folded_write(a, 0, &out, err), 0);
    T_EQ_STR(out.data, "x 1\nx;y 7\nz 2\n");
    T_EQ_INT(sc_profile_validate(a, err), 0);
    sc_buf_release(&out);
    /* durations add saturating, as values do: two pushed INT64_MAX durations stay there */
    a->duration_nanos = INT64_MAX;
    b->duration_nanos = INT64_MAX;
    T_EQ_INT(sc_profile_append(a, b, err), 0);
    T_EQ_INT(a->duration_nanos, INT64_MAX);
    /* mismatched sample types are refused with a reason */
    struct sc_profile *c = sc_profile_new();
    sc_profile_add_sample_type(c, "cpu", "nanoseconds");
    T_EQ_INT(sc_profile_append(a, c, err), SC_EINVAL);
    T_CHECK(strstr(err, "sample types differ") != NULL);
    /* an empty destination takes the source's types */
    struct sc_profile *d = sc_profile_new();
    T_EQ_INT(sc_profile_append(d, b, err), 0);
    T_EQ_INT(d->nsample_types, 1);
    T_EQ_INT(d->nsamples, 2);
    sc_profile_free(a);
    sc_profile_free(b);
    sc_profile_free(c);
    sc_profile_free(d);
}

static const char *label(int64_t v, const char *from, const char *to)
{
    static struct sc_buf b;
    b.len = 0;
    sc_units_label(&b, v, from, to);
    return b.data;
}

static void test_units(void)
{
    T_EQ_STR(label(1200000000, "nanoseconds", "auto"), "1.20s");
    T_EQ_STR(label(10000000, "nanoseconds", "auto"), "10ms");
    T_EQ_STR(label(10000000, "nanoseconds", "s"), "0.01s");
    T_EQ_STR(label(0, "nanoseconds", "s"), "0");
    T_EQ_STR(label(1536, "bytes", "auto"), "1.50kB");
    T_EQ_STR(label(524288, "bytes", "MB"), "0.50MB");
    T_EQ_STR(label(65548, "count", "count"), "65548");
    T_EQ_STR(label(-2000, "nanoseconds", "auto"), "-2us");
    T_EQ_STR(label(7200000000000LL, "nanoseconds", "auto"), "2hrs");
    T_EQ_STR(sc_units_pick(10000000, 13710000000LL, "nanoseconds"), "s");
    T_EQ_STR(sc_units_pick(5000000, 6000000, "nanoseconds"), "ms");
    T_EQ_STR(sc_units_pick(3, 300, "count"), "count");
    struct sc_buf b = SC_BUF_INIT;
    sc_units_percent(&b, 1, 1);
    sc_units_percent(&b, 1240, 10000);
    sc_units_percent(&b, 73, 100000);
    T_EQ_STR(b.data, "  100%12.40%0.073%");
    sc_buf_release(&b);
}

/* Timed waits run on the monotonic clock: a deadline is that clock's now plus the wait
 * (a wall-clock step can neither stretch nor cut it), a condition variable made by
 * sc_cond_init times out on it, and a wait too long to add saturates. */
static void test_cond_mono(void)
{
    const int64_t ms = 1000000;
    struct timespec ts;
    int64_t before = sc_mono_ns();
    sc_deadline(&ts, 30 * ms);
    int64_t at = (int64_t)ts.tv_sec * SC_NS_PER_S + ts.tv_nsec;
    T_CHECK(at >= before + 30 * ms && at <= sc_mono_ns() + 30 * ms);
    sc_deadline(&ts, -5);
    at = (int64_t)ts.tv_sec * SC_NS_PER_S + ts.tv_nsec;
    T_CHECK(at >= before && at <= sc_mono_ns());
    sc_deadline(&ts, INT64_MAX);
    T_CHECK(ts.tv_sec == (time_t)(INT64_MAX / SC_NS_PER_S));

    pthread_cond_t cv;
    pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
    T_EQ_INT(sc_cond_init(&cv), 0);
    pthread_mutex_lock(&mu);
    sc_deadline(&ts, 30 * ms);
    int rc = 0;
    while (rc == 0)
        rc = pthread_cond_timedwait(&cv, &mu, &ts);
    pthread_mutex_unlock(&mu);
    T_EQ_INT(rc, ETIMEDOUT);
    T_CHECK(sc_mono_ns() - before >= 30 * ms);
    pthread_cond_destroy(&cv);
}

/* The log sink: silent until one is installed, then every message once, formatted and
 * truncated to SC_LOG_LEN; the previous sink comes back with sc_log_set. */
struct log_seen {
    int n;
    char last[SC_LOG_LEN + 8];
};

static void log_into(void *ctx, const char *msg)
{
    struct log_seen *s = ctx;
    s->n++;
    snprintf(s->last, sizeof s->last, "%s", msg);
}

static void test_log(void)
{
    void *was_ctx;
    sc_log_fn was = sc_log_get(&was_ctx);
    sc_log_set(NULL, NULL);
    sc_logf("dropped %d", 1); /* no sink: nothing happens */
    struct log_seen seen = {0, ""};
    sc_log_set(log_into, &seen);
    void *ctx = NULL;
    T_CHECK(sc_log_get(&ctx) == log_into && ctx == &seen);
    sc_logf("record: %s (%d)", "the store refused it", 7);
    T_EQ_INT(seen.n, 1);
    T_EQ_STR(seen.last, "record: the store refused it (7)");
    char big[3 * SC_LOG_LEN];
    memset(big, 'x', sizeof big - 1);
    big[sizeof big - 1] = 0;
    sc_logf("%s", big);
    T_EQ_INT(seen.n, 2);
    T_EQ_INT(strlen(seen.last), SC_LOG_LEN - 1);
    sc_log_set(NULL, &seen);
    sc_logf("dropped %d", 2);
    T_EQ_INT(seen.n, 2);
    T_CHECK(sc_log_get(&ctx) == NULL && ctx == NULL);
    sc_log_set(was, was_ctx);
}

/* The exposition writer: HELP escapes backslash and line end, label values also the double
 * quote and bad UTF-8; a histogram's buckets cumulate. */
static void test_prom(void)
{
    struct sc_buf b = SC_BUF_INIT;
    sc_prom_family(&b, "x_total", SC_PROM_COUNTER, "a \\ b\nc \"q\"");
    sc_prom_sample(&b, "x_total", NULL, "%d", 3);
    sc_prom_sample(&b, "x_total", (const char *[]){"k", "v\"\\\n\xff", "j", "", NULL}, "%.3f", 0.5);
    int n;
    sc_prom_begin(&b, "y", &n);
    sc_prom_label(&b, &n, "ab", 1, "cd", 1);
    sc_prom_value(&b, n, "%u", 7u);
    sc_prom_begin(&b, "z", &n);
    sc_prom_value(&b, n, "%s", "1e3");
    sc_buf_putc(&b, 0);
    T_EQ_STR(b.data, "# HELP x_total a \\\\ b\\nc \"q\"\n# TYPE x_total counter\n"
                     "x_total 3\n"
                     "x_total{k=\"v\\\"\\\\\\n\xef\xbf\xbd\",j=\"\"} 0.500\n"
                     "y{a=\"c\"} 7\nz 1e3\n");
    b.len = 0;
    const double le[2] = {0.5, 2};
    const uint64_t cnt[2] = {1, 2};
    const double sum = 1.25;
    sc_prom_histogram(&b, "h_seconds", "H.", le, cnt, 2, 4, &sum, 5);
    sc_prom_histogram(&b, "g", "G.", le, cnt, 1, 3, NULL, 3);
    sc_buf_putc(&b, 0);
    T_EQ_STR(b.data, "# HELP h_seconds H.\n# TYPE h_seconds histogram\n"
                     "h_seconds_bucket{le=\"0.5\"} 1\nh_seconds_bucket{le=\"2\"} 3\n"
                     "h_seconds_bucket{le=\"+Inf\"} 4\nh_seconds_sum 1.250000\n"
                     "h_seconds_count 5\n"
                     "# HELP g G.\n# TYPE g histogram\ng_bucket{le=\"0.5\"} 1\n"
                     "g_bucket{le=\"+Inf\"} 3\ng_count 3\n");
    sc_buf_release(&b);
}

int main(void)
{
    T_RUN(test_arena);
    T_RUN(test_buf);
    T_RUN(test_grow);
    T_RUN(test_map64);
    T_RUN(test_strtab);
    T_RUN(test_sample_index);
    T_RUN(test_stackwalk_inline);
    T_RUN(test_merge);
    T_RUN(test_units);
    T_RUN(test_cond_mono);
    T_RUN(test_log);
    T_RUN(test_prom);
    return t_done();
}
