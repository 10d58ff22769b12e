/* test_perf.c - the perf script decoder: model contents, the script's quirks, threads,
 * limits, hostile input and allocation failures. */
#include "formats/folded.h"
#include "formats/perf.h"
#include "model/error.h"
#include "t.h"

#include <stdint.h>

/* ---- allocation failure injection (not under sanitizers, which own malloc) ---- */

#if defined(__SANITIZE_ADDRESS__)
#define T_NO_MALLOC_HOOK 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define T_NO_MALLOC_HOOK 1
#endif
#endif

#ifndef T_NO_MALLOC_HOOK
extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void __libc_free(void *);

static long fail_after = -1; /* allocations left before one fails; -1 = never */
static long live;            /* blocks allocated and not freed */

static int inject(void)
{
    if (fail_after < 0)
        return 0;
    if (fail_after == 0)
        return 1;
    fail_after--;
    return 0;
}

void *malloc(size_t n)
{
    void *p = inject() ? NULL : __libc_malloc(n);
    if (p)
        __atomic_add_fetch(&live, 1, __ATOMIC_RELAXED);
    return p;
}

void *calloc(size_t n, size_t m)
{
    void *p = inject() ? NULL : __libc_calloc(n, m);
    if (p)
        __atomic_add_fetch(&live, 1, __ATOMIC_RELAXED);
    return p;
}

void *realloc(void *old, size_t n)
{
    if (!old)
        return malloc(n);
    if (n == 0) {
        free(old);
        return NULL;
    }
    return inject() ? NULL : __libc_realloc(old, n);
}

void free(void *p)
{
    if (p)
        __atomic_sub_fetch(&live, 1, __ATOMIC_RELAXED);
    __libc_free(p);
}
#endif

/* ---- helpers ---- */

static struct sc_profile *decode(const char *text, const struct sc_perf_opts *o, int *rc,
                                 char *err)
{
    struct sc_profile *p = sc_profile_new();
    *rc = sc_perf_decode(text, strlen(text), o, &sc_limits_cli, p, err);
    return p;
}

/* Folded output of text as `scorch collapse perf` prints it; "ERROR" on failure. */
static char *collapse(const char *text, const struct sc_perf_opts *o)
{
    char err[SC_ERR_LEN] = "";
    int rc;
    struct sc_profile *p = decode(text, o, &rc, err);
    struct sc_buf out = SC_BUF_INIT;
    if (rc == 0)
        rc = sc_folded_write(p, 0, &out, err);
    sc_profile_free(p);
    if (rc) {
        fprintf(stderr, "decode failed: %s\n", err);
        sc_buf_release(&out);
        return strdup("ERROR");
    }
    sc_buf_puts(&out, "");
    return sc_buf_detach(&out, NULL);
}

#define T_COLLAPSE(text, opts, want)                                                               \
    do {                                                                                           \
        char *t_got = collapse(text, opts);                                                        \
        T_EQ_STR(t_got, want);                                                                     \
        free(t_got);                                                                               \
    } while (0)

static struct sc_str label_str(const struct sc_profile *p, uint32_t s, const char *key)
{
    const struct sc_sample *sm = &p->samples[s];
    for (uint32_t i = 0; i < sm->nlabels; i++) {
        const struct sc_label *l = &p->labels[sm->label_start + i];
        struct sc_str k = sc_profile_str(p, l->key);
        if (k.len == strlen(key) && memcmp(k.ptr, key, k.len) == 0)
            return sc_profile_str(p, l->str);
    }
    return (struct sc_str){"(none)", 6};
}

static int64_t label_num(const struct sc_profile *p, uint32_t s, const char *key)
{
    const struct sc_sample *sm = &p->samples[s];
    for (uint32_t i = 0; i < sm->nlabels; i++) {
        const struct sc_label *l = &p->labels[sm->label_start + i];
        struct sc_str k = sc_profile_str(p, l->key);
        if (k.len == strlen(key) && memcmp(k.ptr, key, k.len) == 0)
            return l->num;
    }
    return -1;
}

/* Name of the function on line j (innermost first) of sample s's k-th location (leaf first). */
static struct sc_str frame(const struct sc_profile *p, uint32_t s, uint32_t k, uint32_t j)
{
    const struct sc_sample *sm = &p->samples[s];
    const struct sc_location *l = &p->locations[p->sample_locs[sm->loc_start + k]];
    return sc_function_name(p, sc_location_lines(p, l)[j].function - 1);
}

/* ---- tests ---- */

static const char two_samples[] =
    "# cmdline : /usr/bin/perf record -g\n"
    "java 100/101 [001]   759.337518:    2004008 cpu-clock:pppH: \n"
    "\tffffffff821f2c2b do_idle+0x214 ([kernel.kallsyms])\n"
    "\t7f00aa inner->outer+0x10 (/usr/lib/libjvm.so)\n"
    "\t7f00bb start_thread (/lib/libc.so.6)\n"
    "\n"
    "V8 Worker 7 [000] 759.400000: 10 cpu-clock:pppH:\n"
    "\t7f00bb start_thread (/lib/libc.so.6)\n"
    "\n";

static void test_model(void)
{
    char err[SC_ERR_LEN] = "";
    int rc;
    struct sc_perf_opts o = {0};
    struct sc_profile *p = decode(two_samples, &o, &rc, err);
    T_EQ_INT(rc, 0);
    T_EQ_INT(sc_profile_validate(p, err), 0);
    T_EQ_INT(p->nsample_types, 1);
    struct sc_str t = sc_profile_str(p, p->sample_types[0].type);
    struct sc_str u = sc_profile_str(p, p->sample_types[0].unit);
    /* the event without perf's modifiers; the clock events count nanoseconds */
    T_EQ_MEM(t.ptr, t.len, "cpu-clock");
    T_EQ_MEM(u.ptr, u.len, "nanoseconds");
    T_EQ_INT(p->default_sample_type, p->sample_types[0].type);
    T_EQ_INT(p->nsamples, 2);
    if (p->nsamples != 2) {
        sc_profile_free(p);
        return;
    }
    T_EQ_INT(p->values[0], 2004008);
    T_EQ_INT(p->values[1], 10);
    T_EQ_INT(p->samples[0].time_ns, 759337518000LL);
    T_EQ_INT(p->samples[1].time_ns, 759400000000LL);

    /* leaf first, the process frame last; "inner->outer" is one location with the
     * inlined callee first */
    T_EQ_INT(p->samples[0].nlocs, 4);
    struct sc_str f = frame(p, 0, 0, 0);
    T_EQ_MEM(f.ptr, f.len, "do_idle");
    const struct sc_location *l = &p->locations[p->sample_locs[p->samples[0].loc_start + 1]];
    T_EQ_INT(l->nlines, 2);
    f = frame(p, 0, 1, 0);
    T_EQ_MEM(f.ptr, f.len, "outer_[i]");
    f = frame(p, 0, 1, 1);
    T_EQ_MEM(f.ptr, f.len, "inner");
    f = frame(p, 0, 2, 0);
    T_EQ_MEM(f.ptr, f.len, "start_thread");
    f = frame(p, 0, 3, 0);
    T_EQ_MEM(f.ptr, f.len, "java");
    /* the same frame in two samples is one location */
    T_EQ_INT(p->sample_locs[p->samples[0].loc_start + 2],
             p->sample_locs[p->samples[1].loc_start + 0]);

    struct sc_str s = label_str(p, 0, "comm");
    T_EQ_MEM(s.ptr, s.len, "java");
    T_EQ_INT(label_num(p, 0, "pid"), 100);
    T_EQ_INT(label_num(p, 0, "tid"), 101);
    s = label_str(p, 0, "event");
    T_EQ_MEM(s.ptr, s.len, "cpu-clock:pppH");
    s = label_str(p, 1, "comm");
    T_EQ_MEM(s.ptr, s.len, "V8 Worker");
    T_EQ_INT(label_num(p, 1, "pid"), -1); /* perf printed only the tid */
    T_EQ_INT(label_num(p, 1, "tid"), 7);
    sc_profile_free(p);

    T_COLLAPSE(two_samples, &o,
               "V8_Worker;start_thread 10\n"
               "java;start_thread;inner;outer_[i];do_idle 2004008\n");
    o.tid = 1;
    o.kernel = 1;
    T_COLLAPSE(two_samples, &o,
               "V8_Worker-?/7;start_thread 10\n"
               "java-100/101;start_thread;inner;outer_[i];do_idle_[k] 2004008\n");
}

static void test_sample_types(void)
{
    char err[SC_ERR_LEN] = "";
    int rc;
    /* no period anywhere: samples are counted */
    struct sc_profile *p =
        decode("a_b 5 1.5: cycles:\n\tff f (m)\n\nc_d 6 1.6: cycles:\n\tff f (m)\n\n", NULL, &rc,
               err);
    T_EQ_INT(rc, 0);
    struct sc_str t = sc_profile_str(p, p->sample_types[0].type);
    T_EQ_MEM(t.ptr, t.len, "samples");
    T_EQ_INT(p->nsamples, 2);
    T_EQ_INT(p->values[0] + p->values[1], 2);
    sc_profile_free(p);

    /* empty input: an empty profile that still has a sample type */
    p = decode("", NULL, &rc, err);
    T_EQ_INT(rc, 0);
    T_EQ_INT(p->nsamples, 0);
    T_EQ_INT(p->nsample_types, 1);
    sc_profile_free(p);

    /* a profile that already holds samples is refused */
    p = decode("ab 1 1.0: 3 c:\n\tff f (m)\n\n", NULL, &rc, err);
    T_EQ_INT(rc, 0);
    rc = sc_perf_decode("", 0, NULL, NULL, p, err);
    T_EQ_INT(rc, SC_EINVAL);
    sc_profile_free(p);
}

/* Each expectation is what stackcollapse-perf.pl prints for the same input. */
static void test_script_quirks(void)
{
    struct sc_perf_opts o = {0}, pid = {.pid = 1}, tid = {.tid = 1}, addrs = {.addrs = 1};
    struct sc_perf_opts all = {.kernel = 1, .jit = 1, .addrs = 1};
    /* the last sample counts only if a blank line ends it */
    T_COLLAPSE("ab 1 [0] 1.0: 5 cycles:\n\tff f1 (m)\n\nab 1 [0] 1.1: 7 cycles:\n\tff f2 (m)\n",
               &o, "ab;f1 5\n");
    /* a header does not clear the frames before it */
    T_COLLAPSE("ab 1 [0] 1.0: 5 cycles:\n\tff f1 (m)\ncd 2 [0] 1.1: 7 cycles:\n\tff f2 (m)\n\n",
               &o, "cd;f2;f1 7\n");
    /* a tid of 0 is no tid */
    T_COLLAPSE("swapper 0/0 [0] 1.0: 3 cpu-clock:\n\tff idle (m)\n\n", &tid,
               "swapper-?/0;idle 3\n");
    T_COLLAPSE("swapper 12/0 [0] 1.0: 3 cpu-clock:\n\tff idle (m)\n\n", &pid, "swapper-?;idle 3\n");
    /* a header of another event is ignored as a line, its frames are not */
    T_COLLAPSE("ab 1 [0] 1.0: 5 cycles:\n\tff f1 (m)\n"
               "cd 2 [0] 1.1: 7 instructions:\n\tff f2 (m)\n\n",
               &o, "ab;f2;f1 5\n");
    struct sc_perf_opts ins = {.event = "instructions"};
    T_COLLAPSE("ab 1 1.0: 5 cycles:\n\tff f1 (m)\n\ncd 2 1.1: 7 instructions:\n\tff f2 (m)\n\n",
               &ins, "cd;f2 7\n");
    /* comm has at least two characters, so a one-letter comm swallows more */
    T_COLLAPSE("a 1 [0] 1.0: 5 cycles:\n\tff f1 (m)\n\n", &o, "a_1_[0]_1.0:;f1 5\n");
    /* backtracking when " (" follows the address directly */
    T_COLLAPSE("ab 1 [0] 1.0: 5 cycles:\n\tffff (foo)\n\tf (x)\n\tab  (y)\n\n", &addrs,
               "ab; ;f 5\n");
    /* a period of 0 or none counts 1; offsets are stripped */
    T_COLLAPSE("ab 1 2.0: 0 cycles:\n\tff x+0x10 (m)\n\nab 1 2.0: cycles:\n\tff x (m)\n\n", &o,
               "ab;x 2\n");
    /* unknown frames, Java names, JIT and kernel annotations, inline chains */
    T_COLLAPSE("  java 1/2 [0] 1.0: 1 cycles:\njava 1/2 [0] 1.0: 1 cycles:\n"
               "\t0 [unknown] ([unknown])\n\t1 [unknown] (/usr/lib/libc.so.6)\n"
               "\t2 Lcom/x/Y;::z (/tmp/perf-1.map)\n\t3 schedule ([kernel.kallsyms])\n"
               "\t4 a->b->c (/x)\n\n",
               &all,
               "java;a;b_[i];c_[i];schedule_[k];com/x/Y:::z_[j];[libc.so.6 <1>];[unknown <0>] "
               "1\n");
    /* tidying: arguments cut, Go methods and anonymous namespaces kept, quotes dropped,
     * frames that start with '(' skipped */
    T_COLLAPSE("ab 1 1.0: 1 c:\n\tff std::f(int) (m)\n\tff ns::(anonymous namespace)::g(x) (m)\n"
               "\tff net/http.(*Client).Do (m)\n\tff a;b\"c'd (m)\n\tff (skipme) (m)\n\n",
               &o, "ab;a:bcd;net/http.(*Client).Do;ns::(anonymous namespace)::g;std::f 1\n");
    /* not a header without whitespace after the pid */
    T_COLLAPSE("ab 12\n\tff x (m)\n\n", &o, "");
    /* frames before any header, and comments, are ignored */
    T_COLLAPSE("\tff x (m)\n\n#c\nab 1 1.0: 1 c:\n#c\n\tff y (m)\n\n", &o, "ab;y 1\n");
}

/* Builds a varied input of n samples. */
static char *synth(uint32_t n)
{
    struct sc_buf b = SC_BUF_INIT;
    uint64_t x = 88172645463325252ULL;
    for (uint32_t i = 0; i < n; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        sc_buf_printf(&b, "%s %u/%u [%03u] %u.%06u: %u %s:\n",
                      (x & 3) == 0 ? "java" : (x & 3) == 1 ? "V8 Worker" : "xz",
                      (unsigned)(x >> 8 & 7), (unsigned)(x >> 11 & 15), (unsigned)(x >> 15 & 1),
                      1000 + i / 100, (unsigned)(i % 100) * 10000, (unsigned)(x >> 16 & 1023),
                      (x >> 26 & 7) == 0 ? "instructions" : "cycles");
        uint32_t depth = (uint32_t)(x >> 29 & 15);
        for (uint32_t d = 0; d < depth; d++) {
            uint32_t f = (uint32_t)((x >> (d * 3 % 40)) & 31);
            sc_buf_printf(&b, "\t%x f%u+0x%x (%s)\n", f * 4096 + d, f, d,
                          f < 8 ? "[kernel.kallsyms]" : f < 12 ? "[unknown]" : "/usr/lib/x.so");
        }
        sc_buf_puts(&b, (x >> 40 & 31) == 0 ? "" : "\n");
    }
    return sc_buf_detach(&b, NULL);
}

static void test_threads_agree(void)
{
    char *text = synth(20000);
    char err[SC_ERR_LEN] = "";
    struct sc_perf_opts o1 = {.tid = 1, .threads = 1};
    int rc;
    struct sc_profile *a = decode(text, &o1, &rc, err);
    T_EQ_INT(rc, 0);
    T_CHECK(a->nsamples > 15000);
    for (int nt = 2; nt <= 9; nt += 7) {
        struct sc_perf_opts on = {.tid = 1, .threads = nt};
        struct sc_profile *b = decode(text, &on, &rc, err);
        T_EQ_INT(rc, 0);
        T_EQ_INT(sc_profile_validate(b, err), 0);
        T_EQ_INT(b->nsamples, a->nsamples);
        int same = b->nsamples == a->nsamples;
        for (uint32_t i = 0; same && i < a->nsamples; i++) {
            same = a->values[i] == b->values[i] && a->samples[i].time_ns == b->samples[i].time_ns &&
                   a->samples[i].nlocs == b->samples[i].nlocs &&
                   a->samples[i].nlabels == b->samples[i].nlabels &&
                   label_num(a, i, "tid") == label_num(b, i, "tid");
            for (uint32_t k = 0; same && k < a->samples[i].nlocs; k++) {
                struct sc_str x = frame(a, i, k, 0), y = frame(b, i, k, 0);
                same = x.len == y.len && memcmp(x.ptr, y.ptr, x.len) == 0;
            }
        }
        T_CHECK(same);
        sc_profile_free(b);
        char *fa = collapse(text, &o1), *fb = collapse(text, &on);
        T_EQ_STR(fa, fb);
        free(fa);
        free(fb);
    }
    sc_profile_free(a);
    free(text);
}

static void test_testdata_threads(void)
{
    const char *path = t_testdata("perf/system-wide-go-xz.perf.txt");
    if (!path) {
        fprintf(stderr, "  (no testdata: skipped)\n");
        return;
    }
    FILE *f = fopen(path, "rb");
    struct sc_buf b = SC_BUF_INIT;
    char tmp[65536];
    size_t n;
    while (f && (n = fread(tmp, 1, sizeof tmp, f)) > 0)
        sc_buf_append(&b, tmp, n);
    if (f)
        fclose(f);
    struct sc_perf_opts o1 = {.threads = 1}, o4 = {.threads = 4};
    char *a = collapse(b.data, &o1), *c = collapse(b.data, &o4);
    T_CHECK(strlen(a) > 1000);
    T_EQ_STR(a, c);
    free(a);
    free(c);
    sc_buf_release(&b);
}

static void test_limits(void)
{
    char err[SC_ERR_LEN] = "";
    struct sc_limits lim = sc_limits_cli;
    lim.max_samples = 2;
    const char *three = "ab 1 1.0: 1 c:\n\tff f (m)\n\nab 1 1.0: 1 c:\n\tff f (m)\n\n"
                        "ab 1 1.0: 1 c:\n\tff f (m)\n\n";
    struct sc_profile *p = sc_profile_new();
    int rc = sc_perf_decode(three, strlen(three), NULL, &lim, p, err);
    T_EQ_INT(rc, SC_ELIMIT);
    T_EQ_STR(err, "line 9: too many samples");
    sc_profile_free(p);

    lim = sc_limits_cli;
    lim.max_stack_depth = 2;
    const char *deep = "ab 1 1.0: 1 c:\n\tff f (m)\n\tff g (m)\n\tff h (m)\n\n";
    p = sc_profile_new();
    rc = sc_perf_decode(deep, strlen(deep), NULL, &lim, p, err);
    T_EQ_INT(rc, SC_ELIMIT);
    T_EQ_STR(err, "line 4: stack deeper than 2 frames");
    sc_profile_free(p);

    const char *chain = "ab 1 1.0: 1 c:\n\tff f->g->h (m)\n\n";
    p = sc_profile_new();
    rc = sc_perf_decode(chain, strlen(chain), NULL, &lim, p, err);
    T_EQ_INT(rc, SC_ELIMIT);
    T_EQ_STR(err, "line 2: stack deeper than 2 frames");
    sc_profile_free(p);

    lim = sc_limits_cli;
    lim.max_functions = 3;
    p = sc_profile_new();
    rc = sc_perf_decode(deep, strlen(deep), NULL, &lim, p, err);
    T_EQ_INT(rc, SC_ELIMIT);
    sc_profile_free(p);
}

/* Mutations of a valid input and random bytes must decode or fail cleanly. */
static void test_hostile(void)
{
    char *base = synth(300);
    size_t n = strlen(base);
    char *buf = malloc(n + 1);
    uint64_t x = 0x9e3779b97f4a7c15ULL;
    static const char alphabet[] = " \t\n()[]/:->+0x;L_9a#";
    for (int round = 0; round < 300; round++) {
        memcpy(buf, base, n + 1);
        size_t len = n;
        for (int k = 0; k < 40; k++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            size_t at = (size_t)(x % n);
            buf[at] = (x >> 32 & 1) ? alphabet[(x >> 40) % (sizeof alphabet - 1)]
                                    : (char)(x >> 48);
        }
        if (round % 3 == 0)
            len = (size_t)(x % n); /* truncated anywhere */
        struct sc_perf_opts o = {.pid = round & 1, .tid = round & 2, .kernel = 1, .jit = 1,
                                 .addrs = round & 4, .threads = 1 + round % 3};
        char err[SC_ERR_LEN] = "";
        struct sc_profile *p = sc_profile_new();
        int rc = sc_perf_decode(buf, len, &o, NULL, p, err);
        T_EQ_INT(rc, 0);
        T_EQ_INT(sc_profile_validate(p, err), 0);
        struct sc_buf out = SC_BUF_INIT;
        T_EQ_INT(sc_folded_write(p, 0, &out, err), 0);
        sc_buf_release(&out);
        sc_profile_free(p);
    }
    free(buf);
    free(base);
}

static void test_alloc_failures(void)
{
#ifdef T_NO_MALLOC_HOOK
    fprintf(stderr, "  (sanitizer build: skipped)\n");
#else
    char *text = synth(200);
    size_t n = strlen(text);
    char *want = collapse(text, NULL);
    int ok = 0, failed_cleanly = 0;
    for (long k = 0; k < 100000 && !ok; k++) {
        struct sc_perf_opts o = {.threads = 1 + (int)(k % 2)};
        long before = live;
        char err[SC_ERR_LEN] = "";
        struct sc_profile *p = sc_profile_new();
        if (!p)
            continue;
        fail_after = k;
        int rc = sc_perf_decode(text, n, &o, NULL, p, err);
        fail_after = -1;
        if (rc == 0) {
            struct sc_buf out = SC_BUF_INIT;
            T_EQ_INT(sc_folded_write(p, 0, &out, err), 0);
            sc_buf_puts(&out, "");
            T_EQ_STR(out.data, want);
            sc_buf_release(&out);
            ok = 1;
        } else {
            T_EQ_INT(rc, SC_ENOMEM);
            failed_cleanly++;
        }
        sc_profile_free(p);
        T_EQ_INT(live, before);
        if (live != before)
            break;
    }
    T_CHECK(ok);
    T_CHECK(failed_cleanly > 20);
    free(want);
    free(text);
#endif
}

int main(void)
{
    T_RUN(test_model);
    T_RUN(test_sample_types);
    T_RUN(test_script_quirks);
    T_RUN(test_threads_agree);
    T_RUN(test_testdata_threads);
    T_RUN(test_limits);
    T_RUN(test_hostile);
    T_RUN(test_alloc_failures);
    return t_done();
}
