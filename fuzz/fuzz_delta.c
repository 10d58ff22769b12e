/* fuzz_delta.c - libFuzzer target: the scraper's type selection and per-stack deltas. */
#include "fuzz_common.h"

#include "collect/delta.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* What a target could send twice: the input is two raw pprof messages, the first one's
 * length in the first two bytes (little-endian). Both are decoded; when they have Go's
 * allocation columns those are selected (as for allocs), then the first, the second and the
 * first again go through one baseline. Checks: no crash, leak or UB; results are one of
 * SC_DELTA_* or an SC_E*; a profile validates and encodes after every step; a difference
 * or a restart never holds a negative value, a difference no zero-only sample. */
static void step(struct sc_delta *d, const uint8_t *buf, size_t n)
{
    char err[SC_ERR_LEN];
    struct sc_profile *p = sc_profile_new();
    FUZZ_CHECK(p);
    if (sc_pprof_decode(buf, n, &fuzz_limits, p, err)) {
        sc_profile_free(p);
        return;
    }
    static const char *const alloc[] = {"alloc_objects", "alloc_space"};
    int rc = sc_profile_keep_types(p, alloc, 2, err);
    FUZZ_CHECK(rc == 0 || rc == SC_ENOTFOUND);
    FUZZ_CHECK(sc_profile_validate(p, err) == 0);
    rc = sc_delta_apply(d, p, err);
    FUZZ_CHECK(rc == SC_DELTA_DIFF || rc == SC_DELTA_FIRST || rc == SC_DELTA_RESTART ||
               rc == SC_EFORMAT || rc == SC_ENOMEM);
    FUZZ_CHECK(sc_profile_validate(p, err) == 0);
    if (rc == SC_DELTA_FIRST)
        FUZZ_CHECK(p->nsamples == 0);
    for (uint32_t i = 0; rc >= 0 && i < p->nsamples; i++) {
        int any = 0;
        for (uint32_t t = 0; t < p->nsample_types; t++) {
            FUZZ_CHECK(p->values[(size_t)i * p->nsample_types + t] >= 0);
            any |= p->values[(size_t)i * p->nsample_types + t] != 0;
        }
        FUZZ_CHECK(any || rc == SC_DELTA_RESTART);
    }
    struct sc_buf out = SC_BUF_INIT;
    FUZZ_CHECK(sc_pprof_encode(p, &out) == 0);
    sc_buf_release(&out);
    sc_profile_free(p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2)
        return 0;
    size_t la = (size_t)data[0] | (size_t)data[1] << 8;
    data += 2;
    size -= 2;
    if (la > size)
        la = size;
    struct sc_delta d;
    sc_delta_init(&d);
    step(&d, data, la);
    step(&d, data + la, size - la);
    step(&d, data, la);
    sc_delta_release(&d);
    return 0;
}
