/* fuzz_cpuprofile.c - libFuzzer target: the .cpuprofile / Chrome trace decoder, the writers,
 * and speedscope written from what it decoded read back to the same folded stacks. */
#include "formats/cpuprofile.h"
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Writes p as speedscope with type vi and reads it back; the profile (freed by the
 * caller). */
static struct sc_profile *speedscope_again(const struct sc_profile *p, int vi)
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

/* The folded stacks of every type of a and b are the same. */
static void same_folded(const struct sc_profile *a, const struct sc_profile *b)
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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char err[SC_ERR_LEN];
    struct sc_profile *p = sc_profile_new();
    FUZZ_CHECK(p);
    int rc = sc_cpuprofile_decode(data, size, &fuzz_limits, p, err);
    FUZZ_CHECK(rc <= 0);
    if (rc) {
        FUZZ_CHECK(rc == SC_EFORMAT || rc == SC_ELIMIT);
        FUZZ_CHECK(err[0]);
        sc_profile_free(p);
        return 0;
    }
    FUZZ_CHECK(sc_profile_validate(p, err) == 0);
    FUZZ_CHECK(p->nsample_types == 2);
    fuzz_exercise_writers(p);
    fuzz_pprof_roundtrip(p);
    /* speedscope out and in: the same folded stacks of each type; bytes that are not
     * UTF-8 become U+FFFD on the way out, so the second pass is the fixed point */
    struct sc_profile *q = speedscope_again(p, 1), *q2 = speedscope_again(q, 1);
    FUZZ_CHECK(q->nsample_types == 2);
    same_folded(q, q2);
    sc_profile_free(q);
    sc_profile_free(q2);
    sc_profile_free(p);
    return 0;
}
