/* fuzz_legacy.c - libFuzzer target: the legacy decoder (gperftools' CPU profile, the text
 * heap, count, thread and contention profiles), its pruning, pprof's names and the writers. */
#include "fuzz_common.h"
#include "formats/legacy.h"
#include "formats/names.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The input as a function's name and system name: pprof's shortening (the demangler, the
 * bracket removal) on anything. */
static void fuzz_names(const uint8_t *data, size_t size)
{
    struct sc_profile *p = sc_profile_new();
    FUZZ_CHECK(p);
    size_t n = size > 4096 ? 4096 : size;
    int64_t s = sc_profile_intern(p, (const char *)data, n);
    FUZZ_CHECK(s >= 0);
    int64_t f = sc_profile_add_function(p, (uint32_t)s, 0);
    FUZZ_CHECK(f >= 0);
    p->functions[f].system_name = (uint32_t)s;
    struct sc_arena a;
    sc_arena_init(&a);
    struct sc_str out;
    FUZZ_CHECK(sc_pprof_name(p, (uint32_t)f, &a, &out) == 0);
    FUZZ_CHECK(out.len <= 2 * n + 16);
    sc_arena_release(&a);
    sc_profile_free(p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char err[SC_ERR_LEN];
    fuzz_names(data, size);
    struct sc_profile *p = sc_profile_new();
    FUZZ_CHECK(p);
    (void)sc_legacy_detect(data, size);
    int rc = sc_legacy_decode((const char *)data, size, &fuzz_limits, p, err);
    FUZZ_CHECK(rc <= 0);
    if (rc) {
        FUZZ_CHECK(rc == SC_EFORMAT || rc == SC_ELIMIT);
        sc_profile_free(p);
        return 0;
    }
    FUZZ_CHECK(sc_profile_validate(p, err) == 0);
    /* no symbolizer here: locations stay addresses, which pruning leaves alone */
    FUZZ_CHECK(sc_legacy_prune(p, err) == 0);
    FUZZ_CHECK(sc_profile_validate(p, err) == 0);
    struct sc_arena a;
    sc_arena_init(&a);
    for (uint32_t i = 0; i < p->nlocations; i++) {
        struct sc_str s;
        FUZZ_CHECK(sc_pprof_frame_name(p, &p->locations[i], 0, &a, &s) == 0 && s.len > 0);
    }
    sc_arena_release(&a);
    fuzz_exercise_writers(p);
    fuzz_pprof_roundtrip(p);
    sc_profile_free(p);
    return 0;
}
