/* fuzz_record.c - libFuzzer target: perf records into an offline recorder, then profiles. */
#include "fuzz_common.h"

#include "collect/record.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The input is a stream of perf records as a ring holds them (each a perf_event_header and
 * its body); the first byte's low 7 bits say after how many records a take happens (0: only
 * at the end), its top bit turns off-CPU recording on, and then a record whose type has its
 * top bit set is fed as one of the sched_switch rings' (that bit cleared). Nothing is read from the
 * file system: the symbolizer's files are under a directory that does not exist, so every binary is
 * named after itself. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    uint32_t every = data[0] & 0x7f;
    int off_cpu = data[0] >> 7;
    data++, size--;
    struct sc_record_opts o;
    memset(&o, 0, sizeof o);
    o.pid = 1000;
    o.max_locations = 64; /* the cache's drop path too */
    o.sym.root = "/nonexistent-scorch-fuzz";
    o.sym.kallsyms = "/nonexistent-scorch-fuzz/kallsyms";
    o.sym.perf_map_dir = "/nonexistent-scorch-fuzz";
    o.sym.debug_dir = "/nonexistent-scorch-fuzz";
    o.off_cpu = off_cpu;
    o.off_cpu_min_ns = -1; /* every span */
    struct sc_recorder *r = NULL;
    char err[SC_ERR_LEN];
    FUZZ_CHECK(sc_recorder_new_offline(&o, &r, err) == 0);
    uint32_t n = 0;
    for (size_t off = 0; off + 8 <= size;) {
        uint16_t len;
        memcpy(&len, data + off + 6, 2);
        /* a copy, so that reads past the record are reads past an allocation */
        size_t k = size - off < 65536 ? size - off : 65536;
        uint8_t *rec = malloc(k);
        FUZZ_CHECK(rec);
        memcpy(rec, data + off, k);
        uint32_t type;
        memcpy(&type, rec, 4);
        if (off_cpu && (type & 0x80000000u)) {
            type &= 0x7fffffffu;
            memcpy(rec, &type, 4);
            FUZZ_CHECK(sc_recorder_feed_switch(r, rec, len <= k ? len : k) == 0);
        } else {
            FUZZ_CHECK(sc_recorder_feed(r, rec, len <= k ? len : k) == 0);
        }
        free(rec);
        off += len >= 8 ? len : 8;
        if (every && ++n % every == 0) {
            struct sc_profile *p = NULL;
            int64_t a, b;
            FUZZ_CHECK(sc_recorder_take(r, &p, &a, &b, err) == 0);
            FUZZ_CHECK(sc_profile_validate(p, err) == 0);
            sc_profile_free(p);
        }
    }
    struct sc_profile *p = NULL;
    int64_t a, b;
    FUZZ_CHECK(sc_recorder_take(r, &p, &a, &b, err) == 0);
    FUZZ_CHECK(sc_profile_validate(p, err) == 0);
    fuzz_pprof_roundtrip(p);
    fuzz_exercise_writers(p);
    sc_profile_free(p);
    sc_recorder_close(r);
    return 0;
}
