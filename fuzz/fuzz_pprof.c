/* fuzz_pprof.c - libFuzzer target: the pprof decoder, then encode and decode again. */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char err[SC_ERR_LEN];
    struct sc_profile *p = sc_profile_new();
    FUZZ_CHECK(p);
    /* the decoder is zero-copy: p's strings point into data, which outlives p here */
    int rc = sc_pprof_decode(data, size, &fuzz_limits, p, err);
    FUZZ_CHECK(rc <= 0);
    if (rc == 0) {
        FUZZ_CHECK(sc_profile_validate(p, err) == 0);
        fuzz_pprof_roundtrip(p);
        fuzz_exercise_writers(p);
    } else {
        FUZZ_CHECK(rc == SC_EFORMAT || rc == SC_ELIMIT);
    }
    sc_profile_free(p);
    return 0;
}
