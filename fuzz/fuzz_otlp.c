/* fuzz_otlp.c - libFuzzer target: OTLP profiles requests and Pyroscope push requests.
 * The first byte picks the decoder: 0 OTLP protobuf, 1 OTLP JSON, 2 push protobuf,
 * 3 push JSON (the rest of the byte is ignored). */
#include "fuzz_common.h"
#include "formats/otlp.h"
#include "formats/push.h"
#include "ingest/ingest.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* pprof encode and decode again: the same samples, values and folded output. (Not
 * fuzz_pprof_roundtrip's equal counts: OTLP samples share their stack's locations and their
 * Sample's labels, which the encoder writes out per sample.) */
static void roundtrip(const struct sc_profile *p)
{
    char err[SC_ERR_LEN];
    struct sc_buf enc = SC_BUF_INIT, a = SC_BUF_INIT, b = SC_BUF_INIT;
    FUZZ_CHECK(sc_pprof_encode(p, &enc) == 0);
    struct sc_profile *q = sc_profile_new();
    FUZZ_CHECK(q);
    FUZZ_CHECK(sc_pprof_decode(enc.data ? enc.data : "", enc.len, &sc_limits_cli, q, err) == 0);
    FUZZ_CHECK(q->nsamples == p->nsamples && q->nsample_types == p->nsample_types);
    FUZZ_CHECK(p->nsamples == 0 ||
               memcmp(q->values, p->values, (size_t)p->nsamples * sizeof *p->values) == 0);
    for (uint32_t i = 0; i < p->nsamples; i++) {
        FUZZ_CHECK(q->samples[i].nlocs == p->samples[i].nlocs);
        FUZZ_CHECK(q->samples[i].nlabels == p->samples[i].nlabels);
    }
    FUZZ_CHECK(sc_folded_write(p, 0, &a, err) == 0 && sc_folded_write(q, 0, &b, err) == 0);
    FUZZ_CHECK(a.len == b.len && (a.len == 0 || memcmp(a.data, b.data, a.len) == 0));
    sc_buf_release(&enc);
    sc_buf_release(&a);
    sc_buf_release(&b);
    sc_profile_free(q);
}

static void otlp(const uint8_t *data, size_t size, int json)
{
    char err[SC_ERR_LEN];
    struct sc_otlp_req *r = NULL;
    int rc = sc_otlp_open(data, size, json, &fuzz_limits, &r, err);
    FUZZ_CHECK(rc <= 0);
    if (rc) {
        FUZZ_CHECK(rc == SC_EFORMAT || rc == SC_ELIMIT);
        FUZZ_CHECK(r == NULL);
        return;
    }
    for (uint32_t i = 0; i < sc_otlp_nprofiles(r); i++) {
        struct sc_otlp_profile op;
        rc = sc_otlp_build(r, i, &op, err);
        if (rc) {
            FUZZ_CHECK(rc == SC_EFORMAT || rc == SC_ELIMIT || rc == SC_EUNSUPPORTED);
            FUZZ_CHECK(op.p == NULL && op.labels.n == 0);
            continue;
        }
        /* series labels are valid label names (only values can be too long) */
        rc = sc_ingest_check_labels(&op.labels, err);
        FUZZ_CHECK(rc == 0 || rc == SC_ELIMIT);
        struct sc_str svc;
        FUZZ_CHECK(sc_labels_get(&op.labels, "service_name", 12, &svc));
        FUZZ_CHECK(sc_profile_validate(op.p, err) == 0);
        if (!op.from_pprof) {
            FUZZ_CHECK(op.p->nsample_types == 1);
            roundtrip(op.p);
            fuzz_exercise_writers(op.p);
        }
        sc_otlp_profile_release(&op);
    }
    sc_otlp_close(r);
}

static void push(const uint8_t *data, size_t size, int json)
{
    char err[SC_ERR_LEN];
    struct sc_push_req r;
    int rc = sc_push_decode(data, size, json, 48, fuzz_limits.max_decompressed, &r, err);
    FUZZ_CHECK(rc == 0 || rc == SC_EFORMAT || rc == SC_ELIMIT);
    for (uint32_t i = 0; rc == 0 && i < r.nseries; i++) {
        const struct sc_push_series *s = &r.series[i];
        FUZZ_CHECK(s->nlabels <= 48);
        for (uint32_t k = 0; k < s->nprofiles; k++) {
            /* every raw profile lies inside the input (or its transcoding) */
            const char *lo = json ? r.json.data : (const char *)data;
            size_t n = json ? r.json.len : size;
            FUZZ_CHECK(
                s->profiles[k].len == 0 ||
                (s->profiles[k].ptr >= lo && s->profiles[k].ptr + s->profiles[k].len <= lo + n));
        }
    }
    sc_push_release(&r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    int mode = data[0] & 3;
    if (mode < 2)
        otlp(data + 1, size - 1, mode == 1);
    else
        push(data + 1, size - 1, mode == 3);
    return 0;
}
