/* fuzz_perf.c - libFuzzer target: the perf script decoder and the writers on its result. */
#include "fuzz_common.h"

#include "formats/perf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char err[SC_ERR_LEN];
    if (size < 1)
        return 0;
    /* the first byte picks stackcollapse-perf.pl's options, so every combination is fuzzed */
    struct sc_perf_opts o;
    fuzz_perf_opts(&o, data[0]);
    o.threads = 1 + ((data[0] >> 5) & 1);
    data++;
    size--;
    struct sc_profile *p = sc_profile_new();
    FUZZ_CHECK(p);
    int rc = sc_perf_decode((const char *)data, size, &o, &fuzz_limits, p, err);
    FUZZ_CHECK(rc <= 0);
    if (rc == 0) {
        FUZZ_CHECK(sc_profile_validate(p, err) == 0);
        fuzz_exercise_writers(p);
        fuzz_pprof_roundtrip(p);
    } else {
        FUZZ_CHECK(rc != SC_ENOMEM && rc != SC_EINTERNAL);
    }
    sc_profile_free(p);
    return 0;
}
