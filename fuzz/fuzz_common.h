/* fuzz_common.h - what the libFuzzer targets share: tight limits and round-trip checks. */
#ifndef SC_FUZZ_COMMON_H
#define SC_FUZZ_COMMON_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "formats/folded.h"
#include "formats/input.h"
#include "formats/perf.h"
#include "formats/pprof.h"
#include "formats/speedscope.h"
#include "model/buf.h"
#include "model/error.h"
#include "model/profile.h"

/* Small enough that no input can make a decoder allocate more than a few tens of MB, so
 * libFuzzer's RSS limit only trips on real bugs; large enough that every decoder path
 * (deep stacks, many labels) is still reachable with inputs of a few KB. */
static const struct sc_limits fuzz_limits = {
    .max_input = 1u << 20,
    .max_decompressed = 4u << 20,
    .max_samples = 1u << 14,
    .max_locations = 1u << 14,
    .max_functions = 1u << 14,
    .max_mappings = 1u << 10,
    .max_strings = 1u << 15,
    .max_string = 1u << 12,
    .max_stack_depth = 1u << 10,
    .max_labels = 64,
};

/* A failed invariant is a finding: print it and abort so libFuzzer saves the input. */
#define FUZZ_CHECK(cond)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "%s:%d: invariant failed: %s\n", __FILE__, __LINE__, #cond);           \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

/* ---- a strict JSON checker (RFC 8259, UTF-8 validated), for the speedscope writer ---- */

struct jck {
    const unsigned char *p, *end;
    int depth;
};

static int jck_value(struct jck *j);

static void jck_ws(struct jck *j)
{
    while (j->p < j->end && (*j->p == ' ' || *j->p == '\t' || *j->p == '\n' || *j->p == '\r'))
        j->p++;
}

/* One UTF-8 sequence, well-formed per RFC 3629 (no overlongs, surrogates or > U+10FFFF). */
static int jck_utf8(struct jck *j)
{
    const unsigned char *p = j->p;
    size_t left = (size_t)(j->end - p);
    unsigned c = p[0];
    int n;
    unsigned lo = 0x80, hi = 0xbf;
    if (c < 0x80)
        n = 0;
    else if (c >= 0xc2 && c <= 0xdf)
        n = 1;
    else if (c >= 0xe0 && c <= 0xef) {
        n = 2;
        if (c == 0xe0)
            lo = 0xa0;
        if (c == 0xed)
            hi = 0x9f;
    } else if (c >= 0xf0 && c <= 0xf4) {
        n = 3;
        if (c == 0xf0)
            lo = 0x90;
        if (c == 0xf4)
            hi = 0x8f;
    } else
        return -1;
    if (left < (size_t)n + 1)
        return -1;
    for (int i = 1; i <= n; i++) {
        unsigned b = p[i];
        if (b < (i == 1 ? lo : 0x80) || b > (i == 1 ? hi : 0xbf))
            return -1;
    }
    j->p += n + 1;
    return 0;
}

static int jck_string(struct jck *j)
{
    j->p++; /* opening quote */
    while (j->p < j->end) {
        unsigned c = *j->p;
        if (c == '"') {
            j->p++;
            return 0;
        }
        if (c < 0x20)
            return -1;
        if (c == '\\') {
            if (++j->p >= j->end)
                return -1;
            c = *j->p++;
            if (c == 'u') {
                for (int i = 0; i < 4; i++, j->p++)
                    if (j->p >= j->end || !strchr("0123456789abcdefABCDEF", *j->p) || !*j->p)
                        return -1;
            } else if (!strchr("\"\\/bfnrt", (int)c) || !c) {
                return -1;
            }
            continue;
        }
        if (jck_utf8(j))
            return -1;
    }
    return -1;
}

static int jck_number(struct jck *j)
{
    const unsigned char *s = j->p;
    if (j->p < j->end && *j->p == '-')
        j->p++;
    if (j->p >= j->end || *j->p < '0' || *j->p > '9')
        return -1;
    if (*j->p == '0')
        j->p++;
    else
        while (j->p < j->end && *j->p >= '0' && *j->p <= '9')
            j->p++;
    if (j->p < j->end && *j->p == '.') {
        j->p++;
        if (j->p >= j->end || *j->p < '0' || *j->p > '9')
            return -1;
        while (j->p < j->end && *j->p >= '0' && *j->p <= '9')
            j->p++;
    }
    if (j->p < j->end && (*j->p == 'e' || *j->p == 'E')) {
        j->p++;
        if (j->p < j->end && (*j->p == '+' || *j->p == '-'))
            j->p++;
        if (j->p >= j->end || *j->p < '0' || *j->p > '9')
            return -1;
        while (j->p < j->end && *j->p >= '0' && *j->p <= '9')
            j->p++;
    }
    return j->p > s ? 0 : -1;
}

static int jck_lit(struct jck *j, const char *w)
{
    size_t n = strlen(w);
    if ((size_t)(j->end - j->p) < n || memcmp(j->p, w, n) != 0)
        return -1;
    j->p += n;
    return 0;
}

static int jck_value(struct jck *j)
{
    jck_ws(j);
    if (j->p >= j->end || ++j->depth > 64)
        return -1;
    int rc = 0;
    switch (*j->p) {
    case '{':
    case '[': {
        unsigned char close = *j->p == '{' ? '}' : ']';
        int obj = close == '}';
        j->p++;
        jck_ws(j);
        if (j->p < j->end && *j->p == close) {
            j->p++;
            break;
        }
        for (;;) {
            if (obj) {
                jck_ws(j);
                if (j->p >= j->end || *j->p != '"' || jck_string(j))
                    return -1;
                jck_ws(j);
                if (j->p >= j->end || *j->p++ != ':')
                    return -1;
            }
            if (jck_value(j))
                return -1;
            jck_ws(j);
            if (j->p >= j->end)
                return -1;
            if (*j->p == ',') {
                j->p++;
                continue;
            }
            if (*j->p++ != close)
                return -1;
            break;
        }
        break;
    }
    case '"':
        rc = jck_string(j);
        break;
    case 't':
        rc = jck_lit(j, "true");
        break;
    case 'f':
        rc = jck_lit(j, "false");
        break;
    case 'n':
        rc = jck_lit(j, "null");
        break;
    default:
        rc = jck_number(j);
    }
    j->depth--;
    return rc;
}

/* 1 when buf is exactly one valid JSON value (surrounding whitespace allowed). */
static inline int fuzz_json_valid(const char *buf, size_t n)
{
    struct jck j = {(const unsigned char *)buf, (const unsigned char *)buf + n, 0};
    if (jck_value(&j))
        return 0;
    jck_ws(&j);
    return j.p == j.end;
}

/* ---- decoding ---- */

/* A reader that takes bytes (sc_cpuprofile_decode, sc_speedscope_decode). */
typedef int (*fuzz_decode_fn)(const void *buf, size_t n, const struct sc_limits *lim,
                              struct sc_profile *p, char *err);

/* Decodes data with decode under fuzz_limits; what must hold for any input: a refusal is
 * SC_EFORMAT or SC_ELIMIT and says why, a profile decoded is valid. The profile (free it),
 * NULL when refused. */
static inline struct sc_profile *fuzz_decode(fuzz_decode_fn decode, const uint8_t *data,
                                             size_t size)
{
    char err[SC_ERR_LEN];
    struct sc_profile *p = sc_profile_new();
    FUZZ_CHECK(p);
    int rc = decode(data, size, &fuzz_limits, p, err);
    FUZZ_CHECK(rc <= 0);
    if (rc) {
        FUZZ_CHECK(rc == SC_EFORMAT || rc == SC_ELIMIT);
        FUZZ_CHECK(err[0]);
        sc_profile_free(p);
        return NULL;
    }
    FUZZ_CHECK(sc_profile_validate(p, err) == 0);
    return p;
}

/* ---- perf ---- */

/* The stackcollapse-perf.pl options (pid, tid, kernel, jit, addrs) picked by the low five
 * bits of an input's first byte, the rest zero: the perf script and perf.data targets fuzz
 * every combination. */
static inline void fuzz_perf_opts(struct sc_perf_opts *o, uint8_t b)
{
    memset(o, 0, sizeof *o);
    o->pid = b & 1;
    o->tid = (b >> 1) & 1;
    o->kernel = (b >> 2) & 1;
    o->jit = (b >> 3) & 1;
    o->addrs = (b >> 4) & 1;
}

/* ---- writers ---- */

/* Renders every writer that takes a profile; what must hold for any decoded profile:
 * writers succeed (no OOM at these sizes) and the speedscope JSON is valid. */
static inline void fuzz_exercise_writers(const struct sc_profile *p)
{
    char err[SC_ERR_LEN];
    struct sc_buf out = SC_BUF_INIT;
    for (uint32_t vi = 0; vi < p->nsample_types && vi < 2; vi++) {
        out.len = 0;
        int rc = sc_folded_write(p, (int)vi, &out, err);
        FUZZ_CHECK(rc == 0);
        out.len = 0;
        rc = sc_speedscope_write(p, (int)vi, "fuzz \xff", &out, err);
        FUZZ_CHECK(rc == 0);
        FUZZ_CHECK(fuzz_json_valid(out.data, out.len));
    }
    sc_buf_release(&out);
}

/* pprof encode, decode again and compare: the encoder must write what the decoder reads
 * back as the same model, so the folded renderings of both profiles are identical. */
static inline void fuzz_pprof_roundtrip(const struct sc_profile *p)
{
    char err[SC_ERR_LEN];
    struct sc_buf enc = SC_BUF_INIT;
    FUZZ_CHECK(sc_pprof_encode(p, &enc) == 0);
    struct sc_profile *q = sc_profile_new();
    FUZZ_CHECK(q);
    int rc = sc_pprof_decode(enc.data ? enc.data : "", enc.len, &fuzz_limits, q, err);
    if (rc) {
        fprintf(stderr, "re-decoding the encoded profile failed: %s\n", err);
        abort();
    }
    FUZZ_CHECK(q->nsample_types == p->nsample_types);
    FUZZ_CHECK(q->nsamples == p->nsamples);
    /* a decoder may share one stack's span among samples (sc_profile_add_sample_span);
     * the encoder writes each sample's stack */
    uint64_t frames = 0;
    for (uint32_t i = 0; i < p->nsamples; i++)
        frames += p->samples[i].nlocs;
    FUZZ_CHECK(q->nsample_locs == frames);
    FUZZ_CHECK(q->nlabels == p->nlabels);
    FUZZ_CHECK(q->nlocations == p->nlocations);
    FUZZ_CHECK(q->nlines == p->nlines);
    FUZZ_CHECK(q->nfunctions == p->nfunctions);
    FUZZ_CHECK(q->nmappings == p->nmappings);
    /* samples' times travel as timestamp_ns labels, whose two strings the encoder appends
     * when the table lacks them */
    FUZZ_CHECK(q->strings.n >= p->strings.n && q->strings.n <= p->strings.n + 2);
    for (uint32_t i = 0; i < p->nsamples; i++)
        FUZZ_CHECK(q->samples[i].time_ns == p->samples[i].time_ns);
    FUZZ_CHECK(q->ncomments == p->ncomments);
    size_t nv = (size_t)p->nsamples * p->nsample_types;
    FUZZ_CHECK(nv == 0 || memcmp(q->values, p->values, nv * sizeof *p->values) == 0);
    struct sc_buf a = SC_BUF_INIT, b = SC_BUF_INIT;
    for (uint32_t vi = 0; vi < p->nsample_types && vi < 2; vi++) {
        a.len = b.len = 0;
        FUZZ_CHECK(sc_folded_write(p, (int)vi, &a, err) == 0);
        FUZZ_CHECK(sc_folded_write(q, (int)vi, &b, err) == 0);
        FUZZ_CHECK(a.len == b.len && (a.len == 0 || memcmp(a.data, b.data, a.len) == 0));
    }
    sc_buf_release(&a);
    sc_buf_release(&b);
    sc_buf_release(&enc);
    sc_profile_free(q);
}

/* ---- speedscope round trips ---- */

/* Writes p as speedscope with type vi and reads it back; the profile (freed by the
 * caller). */
static inline struct sc_profile *fuzz_speedscope_again(const struct sc_profile *p, int vi)
{
    char err[SC_ERR_LEN];
    struct sc_buf js = SC_BUF_INIT;
    FUZZ_CHECK(sc_speedscope_write(p, vi, "fuzz", &js, err) == 0);
    struct sc_profile *q = sc_profile_new();
    FUZZ_CHECK(q);
    int rc = sc_speedscope_decode(js.data, js.len, &fuzz_limits, q, err);
    if (rc) {
        fprintf(stderr, "reading back the speedscope written failed: %s\n", err);
        abort();
    }
    sc_buf_release(&js);
    return q;
}

/* The folded stacks of every type of a and b are the same: a writer and its reader
 * agree (the fixed point of a second round trip). */
static inline void fuzz_same_folded(const struct sc_profile *a, const struct sc_profile *b)
{
    char err[SC_ERR_LEN];
    FUZZ_CHECK(a->nsample_types == b->nsample_types);
    for (uint32_t t = 0; t < a->nsample_types; t++) {
        struct sc_buf x = SC_BUF_INIT, y = SC_BUF_INIT;
        FUZZ_CHECK(sc_folded_write(a, (int)t, &x, err) == 0);
        FUZZ_CHECK(sc_folded_write(b, (int)t, &y, err) == 0);
        FUZZ_CHECK(x.len == y.len && (x.len == 0 || memcmp(x.data, y.data, x.len) == 0));
        sc_buf_release(&x);
        sc_buf_release(&y);
    }
}

#endif
