/* fuzz_cpuprofile.c - libFuzzer target: the .cpuprofile / Chrome trace decoder, the writers,
 * and speedscope written from what it decoded read back to the same folded stacks. */
#include "formats/cpuprofile.h"
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct sc_profile *p = fuzz_decode(sc_cpuprofile_decode, data, size);
    if (!p)
        return 0;
    FUZZ_CHECK(p->nsample_types == 2);
    fuzz_exercise_writers(p);
    fuzz_pprof_roundtrip(p);
    /* speedscope out and in: the same folded stacks of each type; bytes that are not
     * UTF-8 become U+FFFD on the way out, so the second pass is the fixed point */
    struct sc_profile *q = fuzz_speedscope_again(p, 1), *q2 = fuzz_speedscope_again(q, 1);
    FUZZ_CHECK(q->nsample_types == 2);
    fuzz_same_folded(q, q2);
    sc_profile_free(q);
    sc_profile_free(q2);
    sc_profile_free(p);
    return 0;
}
