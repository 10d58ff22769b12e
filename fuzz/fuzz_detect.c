/* fuzz_detect.c - libFuzzer target: sc_decode as the CLI and server call it, with gunzip
 * and format detection in front of every decoder. */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char err[SC_ERR_LEN];
    struct sc_input in = {(void *)data, size, SC_INPUT_BORROWED};
    struct sc_decode_opts o;
    memset(&o, 0, sizeof o);
    o.limits = &fuzz_limits;
    o.perf.threads = 1;
    o.perfdata_no_local_files = 1; /* no file a perf.data names is read */
    struct sc_profile *p = NULL;
    int rc = sc_decode(&in, &o, &p, err);
    FUZZ_CHECK(rc <= 0);
    if (rc == 0) {
        FUZZ_CHECK(p);
        FUZZ_CHECK(sc_profile_validate(p, err) == 0);
        int vi = sc_profile_sample_index(p, NULL, err);
        if (vi >= 0) {
            struct sc_buf out = SC_BUF_INIT;
            FUZZ_CHECK(sc_folded_write(p, vi, &out, err) == 0);
            out.len = 0;
            FUZZ_CHECK(sc_speedscope_write(p, vi, "detect", &out, err) == 0);
            FUZZ_CHECK(fuzz_json_valid(out.data, out.len));
            sc_buf_release(&out);
        }
        sc_profile_free(p);
    } else {
        FUZZ_CHECK(!p);
        FUZZ_CHECK(rc != SC_ENOMEM && rc != SC_EINTERNAL);
    }
    return 0;
}
