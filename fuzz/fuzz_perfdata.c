/* fuzz_perfdata.c - libFuzzer target: the perf.data reader and the writers on its result. */
#include "fuzz_common.h"

#include "formats/perfdata.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char err[SC_ERR_LEN];
    if (size < 1)
        return 0;
    /* the first byte picks stackcollapse-perf.pl's options; no file the input names is read
     * (nor the kernel's symbols), so the walk of user stacks runs on frame pointers */
    struct sc_perf_opts o;
    fuzz_perf_opts(&o, data[0]);
    struct sc_perfdata_opts po = {.no_local_files = 1};
    data++;
    size--;
    struct sc_profile *p = sc_profile_new();
    FUZZ_CHECK(p);
    struct sc_perfdata_stats st;
    int rc = sc_perfdata_decode(data, size, &o, &po, &fuzz_limits, p, &st, err);
    FUZZ_CHECK(rc <= 0);
    if (rc == 0) {
        FUZZ_CHECK(p->nsample_types == 2);
        FUZZ_CHECK(st.samples == p->nsamples);
        FUZZ_CHECK(sc_profile_validate(p, err) == 0);
        fuzz_exercise_writers(p);
        fuzz_pprof_roundtrip(p);
    } else {
        FUZZ_CHECK(rc != SC_ENOMEM && rc != SC_EINTERNAL);
        FUZZ_CHECK(err[0]);
    }
    sc_profile_free(p);
    return 0;
}
