/* test_pprof_hostile.c - the pprof decoder on hostile input: every malformation fails with an
 * error code (never a crash or a leak: the asan tree runs this too), and every allocation
 * failure comes back as SC_ENOMEM with nothing leaked. */
#include "formats/input.h"
#include "formats/pprof.h"
#include "model/error.h"
#include "t.h"

#if defined(__SANITIZE_ADDRESS__)
#define UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNDER_ASAN 1
#endif
#endif

/* ---- allocation failure injection ----
 * Outside sanitizer builds this file defines malloc, calloc, realloc and free (the
 * executable's definitions take precedence over libc's) and forwards to glibc's __libc_*
 * functions. While `tracking`, it counts live blocks and the largest request, and fails the
 * allocation at which fail_countdown reaches zero. ASan owns malloc, so there the fault loop
 * is skipped (the asan tree still checks every other test for leaks). */
static int tracking;
static size_t largest;

#ifndef UNDER_ASAN
#define FAULT_INJECTION 1
static long fail_countdown = -1; /* -1 = never fail */
static long live_blocks;
static int failed;
extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void __libc_free(void *);

static int should_fail(size_t n)
{
    if (!tracking)
        return 0;
    if (n > largest)
        largest = n;
    if (fail_countdown >= 0 && fail_countdown-- == 0) {
        failed = 1;
        return 1;
    }
    return 0;
}

void *malloc(size_t n)
{
    void *p = should_fail(n) ? NULL : __libc_malloc(n);
    live_blocks += tracking && p;
    return p;
}

void *calloc(size_t n, size_t m)
{
    void *p = should_fail(n * m) ? NULL : __libc_calloc(n, m);
    live_blocks += tracking && p;
    return p;
}

void *realloc(void *old, size_t n)
{
    void *p = should_fail(n) ? NULL : __libc_realloc(old, n);
    live_blocks += tracking && p && !old;
    return p;
}

void free(void *p)
{
    live_blocks -= tracking && p;
    __libc_free(p);
}
#endif

/* ---- a protobuf writer for building profiles and malformations ---- */

static void pb_varint(struct sc_buf *b, uint64_t v)
{
    while (v >= 0x80) {
        sc_buf_putc(b, (char)(v | 0x80));
        v >>= 7;
    }
    sc_buf_putc(b, (char)v);
}

static void pb_uint(struct sc_buf *b, uint32_t num, uint64_t v)
{
    pb_varint(b, (uint64_t)num << 3);
    pb_varint(b, v);
}

static void pb_bytes(struct sc_buf *b, uint32_t num, const void *p, size_t n)
{
    pb_varint(b, (uint64_t)num << 3 | 2);
    pb_varint(b, n);
    sc_buf_append(b, p, n);
}

static void pb_msg(struct sc_buf *b, uint32_t num, struct sc_buf *m)
{
    pb_bytes(b, num, m->data ? m->data : "", m->len);
    m->len = 0;
}

static void pb_str(struct sc_buf *b, const char *s)
{
    pb_bytes(b, 6, s, strlen(s));
}

/* A small but complete profile: two sample types, mapping, inlined lines, labels. */
static void build_profile(struct sc_buf *b)
{
    struct sc_buf m = SC_BUF_INIT, in = SC_BUF_INIT;
    const char *strs[] = {"",        "alloc_objects", "count",  "alloc_space", "bytes", "main",
                          "main.go", "work",          "helper", "/bin/app",    "key",   "val"};
    for (int t = 0; t < 2; t++) {
        pb_uint(&m, 1, 1 + 2 * (uint64_t)t);
        pb_uint(&m, 2, 2 + 2 * (uint64_t)t);
        pb_msg(b, 1, &m);
    }
    for (uint64_t s = 0; s < 6; s++) {
        uint64_t locs[3] = {1 + s % 3, 2, 3};
        pb_varint(&in, 0); /* packed ids built in `in`, then wrapped */
        in.len = 0;
        for (int k = 0; k < 3; k++)
            pb_varint(&in, locs[k]);
        pb_msg(&m, 1, &in);
        pb_varint(&in, s + 1);
        pb_varint(&in, (s + 1) * 1024);
        pb_msg(&m, 2, &in);
        pb_uint(&in, 1, 10);
        pb_uint(&in, 2, 11);
        pb_msg(&m, 3, &in);
        pb_msg(b, 2, &m);
    }
    pb_uint(&m, 1, 1);
    pb_uint(&m, 2, 0x400000);
    pb_uint(&m, 3, 0x500000);
    pb_uint(&m, 5, 9);
    pb_msg(b, 3, &m);
    for (uint64_t l = 1; l <= 3; l++) {
        pb_uint(&m, 1, l);
        pb_uint(&m, 2, 1);
        pb_uint(&m, 3, 0x400000 + l * 16);
        for (uint64_t k = 0; k < (l == 2 ? 2 : 1); k++) {
            pb_uint(&in, 1, l + k);
            pb_uint(&in, 2, 10 * l + k);
            pb_msg(&m, 4, &in);
        }
        pb_msg(b, 4, &m);
    }
    for (uint64_t f = 1; f <= 3; f++) {
        pb_uint(&m, 1, f);
        pb_uint(&m, 2, 4 + f);
        pb_uint(&m, 4, 6);
        pb_uint(&m, 5, f * 10);
        pb_msg(b, 5, &m);
    }
    for (size_t i = 0; i < sizeof strs / sizeof strs[0]; i++)
        pb_str(b, strs[i]);
    pb_uint(b, 9, 1700000000000000000ull);
    pb_uint(b, 14, 3);
    sc_buf_release(&m);
    sc_buf_release(&in);
}

/* The raw (uncompressed) bytes of testdata's mem-sort profile, else the built one. */
static void base_profile(struct sc_buf *b)
{
    const char *path = t_testdata("pprof/mem-sort.pb.gz");
    if (path) {
        struct sc_input in;
        char err[SC_ERR_LEN];
        if (sc_input_read(path, 1 << 24, &in, err) == 0) {
            void *raw;
            size_t n;
            if (sc_gunzip(in.data, in.len, 1 << 24, &raw, &n, err) == 0) {
                sc_buf_append(b, raw, n);
                free(raw);
            }
            sc_input_release(&in);
        }
    }
    if (b->len == 0)
        build_profile(b);
}

static const struct sc_limits small_limits = {
    .max_input = 1 << 20,
    .max_decompressed = 1 << 20,
    .max_samples = 100,
    .max_locations = 100,
    .max_functions = 100,
    .max_mappings = 10,
    .max_strings = 100,
    .max_string = 64,
    .max_stack_depth = 8,
    .max_labels = 2,
};

/* Decodes n bytes; returns the code, and checks that success means a valid profile. */
static int decode(const void *buf, size_t n, const struct sc_limits *lim, char *err)
{
    struct sc_profile *p = sc_profile_new();
    err[0] = 0;
    int rc = sc_pprof_decode(buf, n, lim, p, err);
    if (rc == 0)
        T_EQ_INT(sc_profile_validate(p, err), 0);
    else
        T_CHECK(err[0] != 0); /* every error says why */
    sc_profile_free(p);
    return rc;
}

/* Decodes the message built in b (and releases b); expects code, and err to contain what. */
static void expect(struct sc_buf *b, int code, const char *what)
{
    char err[SC_ERR_LEN];
    int rc = decode(b->data ? b->data : "", b->len, NULL, err);
    T_EQ_INT(rc, code);
    if (what && !strstr(err, what)) {
        t_failures++;
        fprintf(stderr, "error '%s' does not mention '%s'\n", err, what);
    }
    sc_buf_release(b);
}

static void test_base_decodes(void)
{
    struct sc_buf b = SC_BUF_INIT;
    base_profile(&b);
    char err[SC_ERR_LEN];
    T_EQ_INT(decode(b.data, b.len, NULL, err), 0);
    struct sc_buf own = SC_BUF_INIT;
    build_profile(&own);
    T_EQ_INT(decode(own.data, own.len, NULL, err), 0);
    struct sc_profile *p = sc_profile_new();
    T_EQ_INT(sc_pprof_decode(own.data, own.len, NULL, p, err), 0);
    T_EQ_INT(p->nsamples, 6);
    T_EQ_INT(p->nlines, 4);
    T_EQ_INT(p->nlabels, 6);
    sc_profile_free(p);
    sc_buf_release(&own);
    sc_buf_release(&b);
}

/* Every prefix of a real profile: an error or a valid (shorter) profile, never a crash. */
static void test_truncated_everywhere(void)
{
    struct sc_buf b = SC_BUF_INIT;
    base_profile(&b);
    char err[SC_ERR_LEN];
    size_t ok = 0, bad = 0;
    for (size_t n = 0; n < b.len; n++) {
        /* a copy of exactly n bytes, so ASan sees any read past the end */
        char *cut = malloc(n ? n : 1);
        memcpy(cut, b.data, n);
        int rc = decode(cut, n, NULL, err);
        free(cut);
        if (rc == 0)
            ok++;
        else if (rc == SC_EFORMAT)
            bad++;
        else
            T_EQ_INT(rc, SC_EFORMAT);
    }
    T_CHECK(bad > b.len / 2); /* most cuts land inside a field */
    fprintf(stderr, "  %zu prefixes: %zu decode, %zu malformed\n", b.len, ok, bad);
    sc_buf_release(&b);
}

static void test_long_varints(void)
{
    /* an 11-byte varint as a tag, and as a sample value */
    struct sc_buf b = SC_BUF_INIT;
    sc_buf_append(&b, "\x88\x80\x80\x80\x80\x80\x80\x80\x80\x80\x00", 11);
    expect(&b, SC_EFORMAT, "malformed pprof");
    pb_str(&b, "");
    sc_buf_append(&b, "\x12\x0d\x10\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", 15);
    expect(&b, SC_EFORMAT, NULL);
    /* a 10-byte varint with bits past 64 is taken (as protobuf does), 11 bytes is not */
    sc_buf_append(&b, "\x48\xff\xff\xff\xff\xff\xff\xff\xff\xff\x7f", 11);
    expect(&b, 0, NULL);
    /* a varint cut off by the end of the input */
    sc_buf_append(&b, "\x48\xff\xff", 3);
    expect(&b, SC_EFORMAT, NULL);
}

static void test_lengths_past_end(void)
{
    struct sc_buf b = SC_BUF_INIT;
    pb_varint(&b, 6 << 3 | 2);
    pb_varint(&b, 100);
    sc_buf_append(&b, "abc", 3);
    expect(&b, SC_EFORMAT, "malformed pprof");
    /* a length near 2^64 must not wrap the end pointer */
    pb_varint(&b, 6 << 3 | 2);
    pb_varint(&b, UINT64_MAX - 2);
    sc_buf_append(&b, "abc", 3);
    expect(&b, SC_EFORMAT, NULL);
    /* a nested length past the end of its parent (but inside the input) */
    struct sc_buf m = SC_BUF_INIT;
    pb_varint(&m, 1 << 3 | 2);
    pb_varint(&m, 20);
    pb_bytes(&b, 2, m.data, m.len);
    sc_buf_append(&b, "0123456789012345678901234", 25);
    expect(&b, SC_EFORMAT, NULL);
    sc_buf_release(&m);
    /* fixed64 and fixed32 fields cut short */
    sc_buf_append(&b, "\x79\x01\x02\x03", 4);
    expect(&b, SC_EFORMAT, NULL);
    sc_buf_append(&b, "\x7d\x01\x02", 3);
    expect(&b, SC_EFORMAT, NULL);
}

static void test_huge_counts(void)
{
    char err[SC_ERR_LEN];
    /* many tiny fields: each costs 2 bytes of input, so limits must stop them */
    struct sc_buf b = SC_BUF_INIT;
    for (int i = 0; i < 200; i++)
        sc_buf_append(&b, "\x12\x00", 2); /* empty samples */
    T_EQ_INT(decode(b.data, b.len, &small_limits, err), SC_ELIMIT);
    T_CHECK(strstr(err, "samples") != NULL);
    b.len = 0;
    for (int i = 0; i < 200; i++)
        sc_buf_append(&b, "\x32\x00", 2); /* empty strings */
    T_EQ_INT(decode(b.data, b.len, &small_limits, err), SC_ELIMIT);
    b.len = 0;
    for (int i = 1; i <= 200; i++) {
        struct sc_buf m = SC_BUF_INIT;
        pb_uint(&m, 1, (uint64_t)i);
        pb_msg(&b, 5, &m);
        sc_buf_release(&m);
    }
    T_EQ_INT(decode(b.data, b.len, &small_limits, err), SC_ELIMIT);
    sc_buf_release(&b);
    /* samples x sample types is not bounded by the input: 3000 empty samples and 3000 empty
     * sample types are 12 KB that would ask for 72 MB of values; the decoder must see that
     * the values cannot match before allocating them */
    for (int i = 0; i < 3000; i++)
        sc_buf_append(&b, "\x12\x00\x0a\x00", 4);
    pb_str(&b, "");
    largest = 0;
    tracking = 1;
    expect(&b, SC_EFORMAT, NULL);
    tracking = 0;
#ifdef FAULT_INJECTION
    if (largest > 1 << 20) {
        t_failures++;
        fprintf(stderr, "a 12 KB input made the decoder ask for %zu bytes at once\n", largest);
    }
#endif
    /* huge ids make the id maps sparse instead of huge dense tables */
    struct sc_buf m = SC_BUF_INIT, in = SC_BUF_INIT;
    pb_str(&b, "");
    pb_str(&b, "f");
    pb_msg(&b, 1, &m);
    pb_uint(&m, 1, UINT64_MAX);
    pb_uint(&m, 2, 1);
    pb_msg(&b, 5, &m);
    pb_uint(&m, 1, UINT64_MAX - 1);
    pb_uint(&in, 1, UINT64_MAX);
    pb_msg(&m, 4, &in);
    pb_msg(&b, 4, &m);
    pb_uint(&m, 1, UINT64_MAX - 1);
    pb_uint(&m, 2, 7);
    pb_msg(&b, 2, &m);
    expect(&b, 0, NULL);
    sc_buf_release(&m);
    sc_buf_release(&in);
}

/* Pieces of a minimal valid profile; each test breaks one. */
static void sample_type(struct sc_buf *b)
{
    struct sc_buf m = SC_BUF_INIT;
    pb_uint(&m, 1, 1);
    pb_uint(&m, 2, 2);
    pb_msg(b, 1, &m);
    sc_buf_release(&m);
}

static void strings(struct sc_buf *b)
{
    pb_str(b, "");
    pb_str(b, "samples");
    pb_str(b, "count");
    pb_str(b, "f");
}

/* field 1 id, plus an optional reference field */
static void with_id(struct sc_buf *b, uint32_t num, uint64_t id, uint32_t ref, uint64_t refv)
{
    struct sc_buf m = SC_BUF_INIT;
    pb_uint(&m, 1, id);
    if (ref)
        pb_uint(&m, ref, refv);
    pb_msg(b, num, &m);
    sc_buf_release(&m);
}

static void location(struct sc_buf *b, uint64_t id, uint64_t fn_id)
{
    struct sc_buf m = SC_BUF_INIT, in = SC_BUF_INIT;
    pb_uint(&m, 1, id);
    pb_uint(&in, 1, fn_id);
    pb_msg(&m, 4, &in);
    pb_msg(b, 4, &m);
    sc_buf_release(&m);
    sc_buf_release(&in);
}

static void sample(struct sc_buf *b, uint64_t loc, int nvalues, int packed)
{
    struct sc_buf m = SC_BUF_INIT, in = SC_BUF_INIT;
    pb_uint(&m, 1, loc);
    for (int i = 0; i < nvalues; i++) {
        if (packed)
            pb_varint(&in, 5);
        else
            pb_uint(&m, 2, 5);
    }
    if (packed && nvalues)
        pb_msg(&m, 2, &in);
    pb_msg(b, 2, &m);
    sc_buf_release(&m);
    sc_buf_release(&in);
}

static void test_value_counts(void)
{
    struct sc_buf b = SC_BUF_INIT;
    for (int packed = 0; packed < 2; packed++) {
        for (int nv = 0; nv <= 3; nv++) {
            sample_type(&b);
            strings(&b);
            with_id(&b, 5, 1, 2, 3);
            location(&b, 1, 1);
            sample(&b, 1, nv, packed);
            expect(&b, nv == 1 ? 0 : SC_EFORMAT, nv == 1 ? NULL : "values");
        }
    }
    /* no sample types at all, and a sample with a value */
    strings(&b);
    with_id(&b, 5, 1, 2, 3);
    location(&b, 1, 1);
    sample(&b, 1, 1, 1);
    expect(&b, SC_EFORMAT, NULL);
}

static void test_unknown_references(void)
{
    struct sc_buf b = SC_BUF_INIT;
    /* a sample naming a location that does not exist */
    sample_type(&b);
    strings(&b);
    with_id(&b, 5, 1, 2, 3);
    location(&b, 1, 1);
    sample(&b, 2, 1, 1);
    expect(&b, SC_EFORMAT, "unknown location id 2");
    /* a line naming an unknown function */
    sample_type(&b);
    strings(&b);
    location(&b, 1, 9);
    expect(&b, SC_EFORMAT, "unknown function id 9");
    /* a location naming an unknown mapping */
    sample_type(&b);
    strings(&b);
    with_id(&b, 4, 1, 2, 4);
    expect(&b, SC_EFORMAT, "unknown mapping id 4");
}

static void test_string_indexes(void)
{
    struct sc_buf b = SC_BUF_INIT;
    static const uint32_t msgs[][2] = {{5, 2}, {5, 3}, {5, 4}, {3, 5}, {3, 6}};
    for (size_t i = 0; i < sizeof msgs / sizeof msgs[0]; i++) {
        sample_type(&b);
        strings(&b);
        with_id(&b, msgs[i][0], 1, msgs[i][1], 4); /* 4 strings: index 4 is one too far */
        expect(&b, SC_EFORMAT, "string 4 of 4");
    }
    /* past 32 bits */
    sample_type(&b);
    strings(&b);
    with_id(&b, 5, 1, 2, (uint64_t)1 << 40);
    expect(&b, SC_EFORMAT, "out of range");
    /* sample type, label and profile-level references */
    struct sc_buf m = SC_BUF_INIT;
    pb_uint(&m, 1, 77);
    pb_msg(&b, 1, &m);
    strings(&b);
    expect(&b, SC_EFORMAT, "string 77");
    sample_type(&b);
    strings(&b);
    struct sc_buf lb = SC_BUF_INIT;
    pb_uint(&lb, 1, 1);
    pb_uint(&lb, 2, 50);
    pb_msg(&m, 3, &lb);
    pb_varint(&lb, 1);
    pb_msg(&m, 2, &lb);
    pb_msg(&b, 2, &m);
    expect(&b, SC_EFORMAT, "label");
    sample_type(&b);
    strings(&b);
    pb_uint(&b, 14, 4);
    expect(&b, SC_EFORMAT, "default sample type");
    sample_type(&b);
    strings(&b);
    pb_uint(&b, 13, 99);
    expect(&b, SC_EFORMAT, "comment");
    /* string 0 must be empty */
    sample_type(&b);
    pb_str(&b, "x");
    pb_str(&b, "samples");
    pb_str(&b, "count");
    expect(&b, SC_EFORMAT, "entry 0");
    sc_buf_release(&m);
    sc_buf_release(&lb);
}

static void test_wire_types(void)
{
    struct sc_buf b = SC_BUF_INIT;
    /* start-group (3) and end-group (4), top level and nested, and reserved types 6, 7 */
    static const char *groups[] = {"\x0b", "\x0c", "\x13\x14", "\x0e", "\x0f"};
    for (size_t i = 0; i < sizeof groups / sizeof groups[0]; i++) {
        strings(&b);
        sc_buf_puts(&b, groups[i]);
        expect(&b, SC_EFORMAT, "malformed pprof");
    }
    sample_type(&b);
    strings(&b);
    sc_buf_append(&b, "\x12\x02\x0b\x0c", 4); /* a group inside a sample */
    expect(&b, SC_EFORMAT, NULL);
    /* messages that are not LEN */
    static const uint32_t msg_fields[] = {1, 2, 3, 4, 5, 11};
    for (size_t i = 0; i < sizeof msg_fields / sizeof msg_fields[0]; i++) {
        strings(&b);
        pb_uint(&b, msg_fields[i], 1);
        expect(&b, SC_EFORMAT, NULL);
    }
    /* field number 0 */
    sc_buf_append(&b, "\x00\x01", 2);
    expect(&b, SC_EFORMAT, NULL);
    /* sample location ids as fixed64 */
    sample_type(&b);
    strings(&b);
    sc_buf_append(&b, "\x12\x09\x09\x01\x00\x00\x00\x00\x00\x00\x00", 11);
    expect(&b, SC_EFORMAT, NULL);
    /* a packed list ending inside a varint */
    sample_type(&b);
    strings(&b);
    sc_buf_append(&b, "\x12\x04\x12\x02\x05\x85", 6);
    expect(&b, SC_EFORMAT, NULL);
}

static void test_ids(void)
{
    struct sc_buf b = SC_BUF_INIT;
    static const uint32_t kinds[] = {3, 4, 5};
    for (size_t i = 0; i < 3; i++) {
        /* id 0 (and a missing id, which is 0) */
        sample_type(&b);
        strings(&b);
        with_id(&b, kinds[i], 0, 0, 0);
        expect(&b, SC_EFORMAT, "id 0");
        sample_type(&b);
        strings(&b);
        with_id(&b, kinds[i], 7, 0, 0);
        with_id(&b, kinds[i], 7, 0, 0);
        expect(&b, SC_EFORMAT, "duplicate");
        /* duplicates among sparse ids too */
        sample_type(&b);
        strings(&b);
        with_id(&b, kinds[i], (uint64_t)1 << 50, 0, 0);
        with_id(&b, kinds[i], 3, 0, 0);
        with_id(&b, kinds[i], (uint64_t)1 << 50, 0, 0);
        expect(&b, SC_EFORMAT, "duplicate");
    }
}

static void test_limits(void)
{
    char err[SC_ERR_LEN];
    struct sc_buf b = SC_BUF_INIT;
    sample_type(&b);
    strings(&b);
    with_id(&b, 5, 1, 2, 3);
    location(&b, 1, 1);
    struct sc_buf m = SC_BUF_INIT, in = SC_BUF_INIT;
    for (int i = 0; i < 9; i++)
        pb_varint(&in, 1);
    pb_msg(&m, 1, &in);
    pb_uint(&m, 2, 1);
    pb_msg(&b, 2, &m);
    T_EQ_INT(decode(b.data, b.len, &small_limits, err), SC_ELIMIT);
    T_CHECK(strstr(err, "deeper") != NULL);
    T_EQ_INT(decode(b.data, b.len, NULL, err), 0);
    b.len = 0;
    sample_type(&b);
    strings(&b);
    pb_uint(&m, 2, 1);
    for (int i = 0; i < 3; i++) {
        pb_uint(&in, 1, 1);
        pb_msg(&m, 3, &in);
    }
    pb_msg(&b, 2, &m);
    T_EQ_INT(decode(b.data, b.len, &small_limits, err), SC_ELIMIT);
    T_CHECK(strstr(err, "labels") != NULL);
    sc_buf_release(&b);
    sc_buf_release(&m);
    sc_buf_release(&in);
}

/* A profile of one function and a location of nlines inlined lines, with one sample of
 * nlocs references to it. */
static void inlined_profile(struct sc_buf *b, int nlines, int nlocs)
{
    struct sc_buf m = SC_BUF_INIT, in = SC_BUF_INIT;
    b->len = 0;
    sample_type(b);
    strings(b);
    with_id(b, 5, 1, 2, 3);
    pb_uint(&m, 1, 1);
    for (int i = 0; i < nlines; i++) {
        pb_uint(&in, 1, 1);
        pb_uint(&in, 2, (uint64_t)i + 1);
        pb_msg(&m, 4, &in);
    }
    pb_msg(b, 4, &m);
    for (int i = 0; i < nlocs; i++)
        pb_varint(&in, 1);
    pb_msg(&m, 1, &in);
    pb_uint(&m, 2, 1);
    pb_msg(b, 2, &m);
    sc_buf_release(&m);
    sc_buf_release(&in);
}

/* Both decoders, eager and lazy: 0 or the code with err naming what. */
static void expect_both(struct sc_buf *b, const struct sc_limits *lim, int code, const char *what)
{
    char err[SC_ERR_LEN];
    for (int lazy = 0; lazy < 2; lazy++) {
        struct sc_profile *p = sc_profile_new();
        err[0] = 0;
        int rc = lazy ? sc_pprof_decode_lazy(b->data, b->len, lim, p, err)
                      : sc_pprof_decode(b->data, b->len, lim, p, err);
        T_EQ_INT(rc, code);
        if (what && !strstr(err, what)) {
            t_failures++;
            fprintf(stderr, "%s decode: error '%s' does not mention '%s'\n",
                    lazy ? "lazy" : "eager", err, what);
        }
        sc_profile_free(p);
    }
}

/* A location's inlined lines are frames of every sample on it (one location of
 * 1M lines once passed the 4,096-frame limit), and strings have a length limit. */
static void test_inlined_lines_and_strings(void)
{
    struct sc_buf b = SC_BUF_INIT;
    inlined_profile(&b, 9, 1); /* one location deeper than the 8 frames allowed */
    expect_both(&b, &small_limits, SC_ELIMIT, "location 1 has 9 lines");
    inlined_profile(&b, 3, 3); /* 9 frames from three references to 3 lines */
    expect_both(&b, &small_limits, SC_ELIMIT, "sample 0 is 9 frames deep");
    expect_both(&b, &small_limits, SC_ELIMIT, "(limits.max_stack_depth)");
    inlined_profile(&b, 2, 4); /* 8 frames: at the limit */
    expect_both(&b, &small_limits, 0, NULL);
    char name[66];
    for (int len = 64; len <= 65; len++) {
        memset(name, 'n', (size_t)len);
        name[len] = 0;
        b.len = 0;
        sample_type(&b);
        strings(&b);
        pb_str(&b, name);
        expect_both(&b, &small_limits, len > 64 ? SC_ELIMIT : 0,
                    len > 64 ? "string 4 of 65 bytes is longer than the limit of 64" : NULL);
    }
    sc_buf_release(&b);
}

/* Fails the 1st, 2nd, ... allocation of a whole decode until one runs without a failure:
 * each must return SC_ENOMEM and leave no block behind once the profile is freed. */
static void test_allocation_failures(void)
{
#ifdef FAULT_INJECTION
    struct sc_buf b = SC_BUF_INIT;
    base_profile(&b);
    char err[SC_ERR_LEN];
    long n;
    for (n = 0; n < 100000; n++) {
        failed = 0;
        live_blocks = 0;
        fail_countdown = n;
        tracking = 1;
        struct sc_profile *p = sc_profile_new();
        int rc = p ? sc_pprof_decode(b.data, b.len, NULL, p, err) : SC_ENOMEM;
        sc_profile_free(p);
        tracking = 0;
        fail_countdown = -1;
        if (failed)
            T_EQ_INT(rc, SC_ENOMEM);
        else
            T_EQ_INT(rc, 0);
        if (live_blocks != 0) {
            t_failures++;
            fprintf(stderr, "failing allocation %ld leaves %ld blocks\n", n, live_blocks);
        }
        if (!failed)
            break;
    }
    fprintf(stderr, "  failed each of the %ld allocations of one decode in turn\n", n);
    T_CHECK(n > 5 && n < 100000);
    sc_buf_release(&b);
#else
    fprintf(stderr, "  (allocation failures are not injected under ASan)\n");
#endif
}

int main(void)
{
    T_RUN(test_base_decodes);
    T_RUN(test_truncated_everywhere);
    T_RUN(test_long_varints);
    T_RUN(test_lengths_past_end);
    T_RUN(test_huge_counts);
    T_RUN(test_value_counts);
    T_RUN(test_unknown_references);
    T_RUN(test_string_indexes);
    T_RUN(test_wire_types);
    T_RUN(test_ids);
    T_RUN(test_limits);
    T_RUN(test_inlined_lines_and_strings);
    T_RUN(test_allocation_failures);
    return t_done();
}
