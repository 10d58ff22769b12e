/* fuzz_folded.c - libFuzzer target: the folded decoder, its writer and their round trip. */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Decodes text, returns the profile or NULL (decode errors are fine, crashes are not). */
static struct sc_profile *decode(const char *text, size_t n)
{
    char err[SC_ERR_LEN];
    struct sc_profile *p = sc_profile_new();
    FUZZ_CHECK(p);
    int rc = sc_folded_decode(text, n, &fuzz_limits, p, err);
    FUZZ_CHECK(rc <= 0);
    if (rc) {
        FUZZ_CHECK(rc == SC_EFORMAT || rc == SC_ELIMIT);
        sc_profile_free(p);
        return NULL;
    }
    FUZZ_CHECK(sc_profile_validate(p, err) == 0);
    return p;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char err[SC_ERR_LEN];
    struct sc_profile *p = decode((const char *)data, size);
    if (!p)
        return 0;
    fuzz_exercise_writers(p);
    fuzz_pprof_roundtrip(p);
    /* folded -> write -> decode -> write is a fixed point for one-count input: the writer
     * only merges equal stacks and drops zeros, which the second pass sees done already.
     * Not when merged counts pass INT64_MAX: they wrap to negative numbers, which are not
     * folded counts. */
    int64_t total = 0;
    int overflow = 0;
    for (uint32_t i = 0; i < p->nsamples && p->nsample_types == 1; i++)
        overflow |= __builtin_add_overflow(total, p->values[i], &total);
    if (p->nsample_types == 1 && !overflow) {
        struct sc_buf a = SC_BUF_INIT, b = SC_BUF_INIT;
        FUZZ_CHECK(sc_folded_write(p, 0, &a, err) == 0);
        struct sc_profile *q = decode(a.data ? a.data : "", a.len);
        FUZZ_CHECK(q);
        FUZZ_CHECK(q->nsample_types == 1);
        FUZZ_CHECK(sc_folded_write(q, 0, &b, err) == 0);
        FUZZ_CHECK(a.len == b.len && (a.len == 0 || memcmp(a.data, b.data, a.len) == 0));
        sc_profile_free(q);
        sc_buf_release(&a);
        sc_buf_release(&b);
    }
    sc_profile_free(p);
    return 0;
}
