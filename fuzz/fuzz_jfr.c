/* fuzz_jfr.c - libFuzzer target: the JFR decoder, with a labels snapshot, and the writers. */
#include "fuzz_common.h"

#include "formats/jfr.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Input: two bytes (little-endian) say how long the LabelsSnapshot protobuf that follows
 * is (15 bits, cut to what is there; the top bit asks for a push's sampleRate period), the
 * rest is the recording. Checks: errors are SC_EFORMAT or
 * SC_ELIMIT with a message; every kind's profile validates and has its sample types;
 * the profile of all kinds validates, goes through the writers and round-trips through
 * pprof. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char err[SC_ERR_LEN];
    if (size < 2)
        return 0;
    size_t ln = (size_t)data[0] | (size_t)(data[1] & 0x7f) << 8;
    int64_t period = data[1] & 0x80 ? 10000000 : 0;
    data += 2;
    size -= 2;
    if (ln > size)
        ln = size;
    struct sc_jfr_opts o = {period, data, ln};
    const uint8_t *rec = data + ln;
    size_t rlen = size - ln;

    struct sc_profile *k[SC_JFR_NKINDS];
    err[0] = 0;
    int rc = sc_jfr_decode_kinds(rec, rlen, &o, &fuzz_limits, k, err);
    if (rc) {
        FUZZ_CHECK(rc == SC_EFORMAT || rc == SC_ELIMIT);
        FUZZ_CHECK(err[0] != 0);
        for (int i = 0; i < SC_JFR_NKINDS; i++)
            FUZZ_CHECK(k[i] == NULL);
    } else {
        for (int i = 0; i < SC_JFR_NKINDS; i++) {
            if (!k[i])
                continue;
            FUZZ_CHECK(sc_profile_validate(k[i], err) == 0);
            FUZZ_CHECK(k[i]->nsample_types >= 1 && sc_jfr_kind_profile(i) != NULL);
            sc_profile_free(k[i]);
        }
    }
    struct sc_profile *p = sc_profile_new();
    FUZZ_CHECK(p);
    int rc2 = sc_jfr_decode(rec, rlen, &o, &fuzz_limits, p, err);
    FUZZ_CHECK(rc2 == rc);
    if (rc2 == 0) {
        FUZZ_CHECK(sc_profile_validate(p, err) == 0);
        fuzz_exercise_writers(p);
        fuzz_pprof_roundtrip(p);
    }
    sc_profile_free(p);
    return 0;
}
