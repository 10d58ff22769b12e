/* test_legacy.c - legacy profiles (gperftools' CPU profile, the text formats) decoded as go
 * tool pprof decodes them, and names shortened as its reports shorten them. */
#include "t.h"

#include "formats/input.h"
#include "formats/legacy.h"
#include "formats/names.h"
#include "model/error.h"

#include <stdio.h>

static struct sc_profile *dec(const char *buf, size_t n, int *rc, char *err)
{
    struct sc_profile *p = sc_profile_new();
    *rc = sc_legacy_decode(buf, n, &sc_limits_cli, p, err);
    return p;
}

static struct sc_str type_of(const struct sc_profile *p, uint32_t i)
{
    return sc_profile_str(p, p->sample_types[i].type);
}

/* the 64-bit little-endian CPU profile: header, samples, trailer, map */
static size_t cpu64(unsigned char *b, int big)
{
    const uint64_t w[] = {0, 3, 0,        10000,        0,            /* header: 10 ms */
                          5, 3, 0x401010, 0x401020 + 1, 0x401030 + 1, /* 5 x leaf, 2 callers */
                          2, 2, 0x401011, 0x401020 + 1,               /* 2 x */
                          0, 1, 0};                                   /* trailer */
    size_t n = 0;
    for (size_t i = 0; i < sizeof w / sizeof w[0]; i++)
        for (int k = 0; k < 8; k++)
            b[n++] = (unsigned char)(w[i] >> (8 * (big ? 7 - k : k)));
    const char *map = "00400000-00500000 r-xp 00000000 08:01 1 /bin/app\n";
    memcpy(b + n, map, strlen(map));
    return n + strlen(map);
}

static void test_cpu(void)
{
    unsigned char b[512];
    char err[SC_ERR_LEN] = "";
    for (int big = 0; big < 2; big++) {
        size_t n = cpu64(b, big);
        T_CHECK(sc_legacy_detect(b, n));
        T_EQ_INT(sc_detect_format(b, n), SC_FMT_LEGACY);
        int rc;
        struct sc_profile *p = dec((const char *)b, n, &rc, err);
        T_EQ_INT(rc, 0);
        T_EQ_INT(p->nsample_types, 2);
        T_EQ_MEM(type_of(p, 1).ptr, type_of(p, 1).len, "cpu");
        T_EQ_INT(p->period, 10000000);
        T_EQ_INT(p->nsamples, 2);
        T_EQ_INT(p->values[0], 5);
        T_EQ_INT(p->values[1], 50000000);
        /* callers are one before their return address; the leaf is not; a second frame
         * every sample shares is the signal handler's, dropped */
        T_EQ_INT(p->sample_locs[p->samples[0].loc_start + 0] + 0, 0);
        T_EQ_INT(p->locations[p->sample_locs[0]].address, 0x401010);
        T_EQ_INT(p->samples[0].nlocs, 2);
        T_EQ_INT(p->locations[p->sample_locs[1]].address, 0x401030);
        T_EQ_INT(p->samples[1].nlocs, 1);
        /* the mapping from the map, its start made 0x400000 */
        T_EQ_INT(p->nmappings, 1);
        T_EQ_MEM(sc_profile_str(p, p->mappings[0].filename).ptr,
                 sc_profile_str(p, p->mappings[0].filename).len, "/bin/app");
        T_EQ_INT(p->locations[0].mapping, 1);
        T_CHECK(sc_profile_validate(p, err) == 0);
        sc_profile_free(p);
    }
    /* a truncated sample is no CPU profile; nothing else reads it either */
    size_t n = cpu64(b, 0);
    int rc;
    struct sc_profile *p = dec((const char *)b, 40 + 16 + 8, &rc, err);
    T_EQ_INT(rc, SC_EFORMAT);
    sc_profile_free(p);
    (void)n;
}

static void test_text(void)
{
    char err[SC_ERR_LEN] = "";
    int rc;
    /* contention: delays scaled by period through the clock rate, counts by period */
    const char *c = "--- contention:\ncycles/second=1000000000\nsampling period=10\n"
                    "ms since reset=2000\n 300 2 @ 0x11 0x22\n";
    struct sc_profile *p = dec(c, strlen(c), &rc, err);
    T_EQ_INT(rc, 0);
    T_EQ_INT(p->values[0], 20);   /* contentions */
    T_EQ_INT(p->values[1], 3000); /* delay, ns */
    T_EQ_INT(p->duration_nanos, 2000000000);
    T_EQ_INT(p->locations[p->sample_locs[0]].address, 0x10); /* every frame adjusted */
    sc_profile_free(p);
    /* an unknown attribute is not a contention profile; nothing else reads it */
    const char *bad = "--- contention:\nformat=java\n 1 1 @ 0x1\n";
    p = dec(bad, strlen(bad), &rc, err);
    T_EQ_INT(rc, SC_EFORMAT);
    sc_profile_free(p);
    /* heap with alloc columns, sampled (Go's heap/2*rate) */
    const char *h = "heap profile: 1: 1024 [4: 8192] @ heap/1048576\n1: 1024 [4: 8192] @ 0x5\n";
    p = dec(h, strlen(h), &rc, err);
    T_EQ_INT(rc, 0);
    T_EQ_INT(p->nsample_types, 4);
    T_EQ_INT(p->period, 524288);
    T_EQ_MEM(type_of(p, 3).ptr, type_of(p, 3).len, "inuse_space");
    /* 1024 bytes at a 512 KiB rate: seen with chance 1 - exp(-1/512) */
    T_EQ_INT(p->values[2], 512);
    T_EQ_INT(p->values[3], 524800);
    sc_profile_free(p);
    const char *hbad = "heap profile: 1: 1 [1: 1] @ heapprofile\n0: 5 [0: 0] @ 0x5\n";
    p = dec(hbad, strlen(hbad), &rc, err);
    T_EQ_INT(rc, SC_EFORMAT);
    T_CHECK(strstr(err, "inuse count was 0 but inuse bytes was 5") != NULL);
    sc_profile_free(p);
    /* threadz: "same as previous thread" counts on the sample before */
    const char *t = "--- threadz 1 ---\n--- Thread 1 (name: a/1) stack: ---\n PC: 0x10 0x21\n"
                    "--- Thread 2 (name: b/2) stack: ---\n same as previous thread\n"
                    "--- Memory map: ---\n";
    p = dec(t, strlen(t), &rc, err);
    T_EQ_INT(rc, 0);
    T_EQ_INT(p->nsamples, 1);
    T_EQ_INT(p->values[0], 2);
    sc_profile_free(p);
    /* Go's count profile: the count is read with Go's base prefixes (010 is 8) */
    const char *g = "goroutine profile: total 8\n010 @ 0x1 0x2\n";
    p = dec(g, strlen(g), &rc, err);
    T_EQ_INT(rc, 0);
    T_EQ_INT(p->values[0], 8);
    T_EQ_MEM(type_of(p, 0).ptr, type_of(p, 0).len, "goroutine");
    sc_profile_free(p);
    /* an address past 64 bits is malformed */
    const char *big = "goroutine profile: total 1\n1 @ 0x1ffffffffffffffff\n";
    p = dec(big, strlen(big), &rc, err);
    T_EQ_INT(rc, SC_EFORMAT);
    sc_profile_free(p);
    /* a line longer than Go's scanner takes */
    size_t ln = 70000;
    char *longl = malloc(ln + 64);
    if (longl) {
        int k = snprintf(longl, 64, "goroutine profile: total 1\n1 @");
        for (size_t i = (size_t)k; i < ln; i++)
            longl[i] = ' ';
        p = dec(longl, ln, &rc, err);
        T_CHECK(rc != 0);
        sc_profile_free(p);
        free(longl);
    }
    /* Java's heapz: values inverted, scaled at 512 KiB, addresses named by the text */
    const char *jh = "--- heapz 1 ---\nformat = java\nresolution = bytes\n 4096 2 @ 0x100 0x200\n"
                     "0x100 a.B.c (B.java:3)\n0x200 GC\n";
    p = dec(jh, strlen(jh), &rc, err);
    T_EQ_INT(rc, 0);
    T_EQ_MEM(type_of(p, 1).ptr, type_of(p, 1).len, "inuse_space");
    T_EQ_INT(p->nfunctions, 2);
    T_EQ_MEM(sc_profile_str(p, p->functions[0].name).ptr,
             sc_profile_str(p, p->functions[0].name).len, "a.B.c");
    T_EQ_INT(p->lines[p->locations[0].line_start].line, 3);
    T_EQ_INT(p->locations[0].address, 0);
    sc_profile_free(p);
    /* without a resolution, Java's samples have no types: malformed */
    const char *jbad = "--- contentionz 1 ---\nformat = java\n 5 1 @ 0x1\n";
    p = dec(jbad, strlen(jbad), &rc, err);
    T_EQ_INT(rc, SC_EFORMAT);
    T_CHECK(strstr(err, "2 values vs. 0 types") != NULL);
    sc_profile_free(p);
    T_CHECK(!sc_legacy_detect("a;b 1\n", 6));
    T_CHECK(sc_legacy_detect("\n# c\n--- mutex:\n", 16));
}

static const char *short_name(const char *name, const char *sys)
{
    static char out[512];
    struct sc_profile *p = sc_profile_new();
    int64_t n = sc_profile_intern(p, name, strlen(name));
    int64_t s = sc_profile_intern(p, sys, strlen(sys));
    int64_t f = sc_profile_add_function(p, (uint32_t)n, 0);
    p->functions[f].system_name = (uint32_t)s;
    struct sc_arena a;
    sc_arena_init(&a);
    struct sc_str r = {"", 0};
    T_EQ_INT(sc_pprof_name(p, (uint32_t)f, &a, &r), 0);
    snprintf(out, sizeof out, "%.*s", (int)r.len, r.ptr);
    sc_arena_release(&a);
    sc_profile_free(p);
    return out;
}

static void test_names(void)
{
    /* a name that is its own system name is shortened */
    const char *rs = "<pprof::backtrace::backtrace_rs::Trace as pprof::backtrace::Trace>::trace";
    T_EQ_STR(short_name(rs, rs), "::trace");
    T_EQ_STR(short_name("ns::F<int>::g(int) const", "ns::F<int>::g(int) const"), "ns::F::g const");
    T_EQ_STR(short_name("_ZN4work3BoxIlE4spinEl", "_ZN4work3BoxIlE4spinEl"), "work::Box::spin");
    T_EQ_STR(short_name("", "_Z3fooi.constprop.0"), "foo");
    T_EQ_STR(short_name("_ZN4core3ptr13drop_in_place17h0123456789abcdefE",
                        "_ZN4core3ptr13drop_in_place17h0123456789abcdefE"),
             "core::ptr::drop_in_place");
    /* Go and Java names are not C++ */
    T_EQ_STR(short_name("main.(*List[...]).Push", "main.(*List[...]).Push"),
             "main.(*List[...]).Push");
    T_EQ_STR(short_name("a.B.<init>(I)V", "a.B.<init>(I)V"), "a.B.<init>(I)V");
    T_EQ_STR(short_name("main.f(x)", "main.f(x)"), "main.f(x)");
    /* a demangled name beside its mangled one stays whole */
    T_EQ_STR(short_name("ns::F<int>::g(int)", "_ZN2ns1FIiE1gEi"), "ns::F<int>::g(int)");
    /* unbalanced brackets: as it was */
    T_EQ_STR(short_name("operator<<", "operator<<"), "operator<<");
    char d[32];
    T_EQ_INT(sc_remove_matching("a(b(c))d", 8, '(', ')', d), 2);
    T_EQ_MEM(d, 2, "ad");
}

int main(void)
{
    T_RUN(test_cpu);
    T_RUN(test_text);
    T_RUN(test_names);
    return t_done();
}
