/* fuzz_speedscope.c - libFuzzer target: the speedscope reader, the writers, and its output
 * written as speedscope and read again: a fixed point of the folded stacks. */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char err[SC_ERR_LEN];
    struct sc_profile *p = fuzz_decode(sc_speedscope_decode, data, size);
    if (!p)
        return 0;
    fuzz_exercise_writers(p);
    fuzz_pprof_roundtrip(p);
    int vi = sc_profile_sample_index(p, NULL, err);
    FUZZ_CHECK(vi >= 0);
    /* written and read again it keeps its types and default; bytes that are not UTF-8
     * become U+FFFD on the way out, so the second pass is the fixed point */
    struct sc_profile *q = fuzz_speedscope_again(p, vi), *q2 = fuzz_speedscope_again(q, vi);
    FUZZ_CHECK(q->nsample_types == p->nsample_types);
    /* the default is named (of types that share a name, the first is taken) */
    FUZZ_CHECK(sc_profile_sample_index(q, NULL, err) >= 0);
    fuzz_same_folded(q, q2);
    sc_profile_free(q);
    sc_profile_free(q2);
    sc_profile_free(p);
    return 0;
}
