/* test_perf.c - perf script decoding: stackcollapse-perf.pl's meaning, the model, bad input. */
#include "formats/folded.h"
#include "formats/perf.h"
#include "model/error.h"
#include "t.h"

/* Expected folded outputs below were printed by FlameGraph's stackcollapse-perf.pl for the
 * same inputs and flags. */

static struct sc_perf_opts opts0;

/* Decodes in with o (and lim, NULL = the CLI's) into a new profile; NULL on error, with the
 * detail in err. */
static struct sc_profile *decode(const char *in, size_t n, const struct sc_perf_opts *o,
                                 const struct sc_limits *lim, char *err)
{
    struct sc_profile *p = sc_profile_new();
    err[0] = 0;
    if (!p || sc_perf_decode(in, n, o, lim ? lim : &sc_limits_cli, p, err)) {
        sc_profile_free(p);
        return NULL;
    }
    char verr[SC_ERR_LEN];
    if (sc_profile_validate(p, verr)) {
        fprintf(stderr, "invalid profile: %s\n", verr);
        sc_profile_free(p);
        return NULL;
    }
    return p;
}

/* The folded lines of in, as `scorch collapse perf` prints them; caller frees. */
static char *collapse_n(const char *in, size_t n, const struct sc_perf_opts *o)
{
    char err[SC_ERR_LEN];
    struct sc_profile *p = decode(in, n, o, NULL, err);
    if (!p) {
        fprintf(stderr, "decode failed: %s\n", err);
        return NULL;
    }
    struct sc_buf b = SC_BUF_INIT;
    int vi = sc_profile_sample_index(p, NULL, err);
    if (vi < 0 || sc_folded_write(p, vi, &b, err)) {
        sc_profile_free(p);
        sc_buf_release(&b);
        return NULL;
    }
    sc_profile_free(p);
    size_t len;
    char *s = b.data ? sc_buf_detach(&b, &len) : NULL;
    return s ? s : calloc(1, 1);
}

static char *collapse(const char *in, const struct sc_perf_opts *o)
{
    return collapse_n(in, strlen(in), o);
}

#define T_COLLAPSE(in, o, want)                                                                    \
    do {                                                                                           \
        char *t_got = collapse(in, o);                                                             \
        T_EQ_STR(t_got, want);                                                                     \
        free(t_got);                                                                               \
    } while (0)

static void test_headers(void)
{
    struct sc_perf_opts pid = {.pid = 1}, tid = {.tid = 1};
    T_COLLAPSE("java 25607 4794564.109216: 1 cycles:\n\t7f1 foo (/x)\n\n", &opts0, "java;foo 1\n");
    /* comm with a space; no tid means tid = the number, pid = "?" */
    const char *v8 = "V8 WorkerThread 25607 [000] 94564.109216: 100 cycles:\n\t1 f (/x)\n\n";
    T_COLLAPSE(v8, &opts0, "V8_WorkerThread;f 100\n");
    T_COLLAPSE(v8, &pid, "V8_WorkerThread-?;f 100\n");
    T_COLLAPSE(v8, &tid, "V8_WorkerThread-?/25607;f 100\n");
    const char *pt = "java 24636/25607 [000] 1.5: 7 cycles:\n\t1 f (/x)\n\n";
    T_COLLAPSE(pt, &tid, "java-24636/25607;f 7\n");
    T_COLLAPSE(pt, &pid, "java-24636;f 7\n");
    /* Perl's `not $tid` holds for "0" */
    T_COLLAPSE("swapper 0/0 [000] 1.0: 1 cycles:\n\t1 f (/x)\n\n", &tid, "swapper-?/0;f 1\n");
    /* no period, no event, period "0": 1 */
    T_COLLAPSE("dd 29776 666709.771979: cpu-clock:\n\t1 f (/x)\n\n", &opts0, "dd;f 1\n");
    T_COLLAPSE("node-v011 31912 cpu-clock: \n\t1 f (/x)\n\n", &opts0, "node-v011;f 1\n");
    T_COLLAPSE("a1 5 1.0: 0 cycles:\n\t1 f (/x)\n\n", &opts0, "a1;f 1\n");
    T_COLLAPSE("perf 47118 \n\t1 f (/x)\n\n", &tid, "perf-?/47118;f 1\n");
    /* the lazy comm: at least 2 characters, then whitespace and a pid/tid token */
    T_COLLAPSE("a  123 1.0: 3 cycles:\n\t1 f (/x)\n\n", &opts0, "a_;f 3\n");
    T_COLLAPSE("x 1/2 3 5.0: 1 cycles:\n\t1 f (/x)\n\n", &opts0, "x_1/2;f 1\n");
    /* a header needs whitespace after the pid: else it is read as a stack line */
    T_COLLAPSE("a1 5 1.0: 2 cycles:\nzz 77\n\t1 f (/x)\n\n", &opts0, "a1;f 2\n");
}

static void test_events(void)
{
    const char *two = "a1 1 1.0: 5 cycles:\n\t1 f (/x)\n\n"
                      "a1 1 2.0: 7 instructions:\n\t1 g (/x)\n\n"
                      "a1 1 3.0: 11 cycles:\n\t1 f (/x)\n\n";
    T_COLLAPSE(two, &opts0, "a1;f 16\n");
    struct sc_perf_opts ins = {.event = "instructions"};
    T_COLLAPSE(two, &ins, "a1;g 7\n");
    /* the event is the whole token: "cpu-clock" does not match "cpu-clock:pppH" */
    struct sc_perf_opts cc = {.event = "cpu-clock"};
    T_COLLAPSE("a1 1 1.0: 5 cpu-clock:pppH:\n\t1 f (/x)\n\n", &cc, "");
    /* a header of another event changes nothing: its frames join the open sample */
    T_COLLAPSE("a1 1 1.0: 5 cycles:\n\t1 f (/x)\na1 1 2.0: 7 instructions:\n\t1 g (/x)\n\n", &opts0,
               "a1;g;f 5\n");
    /* two headers without an empty line between: one stack, the last header's process */
    T_COLLAPSE("a1 1 1.0: 5 cycles:\n\t1 f (/x)\nb2 2 2.0: 7 cycles:\n\t1 g (/x)\n\n", &opts0,
               "b2;g;f 7\n");

    /* stats: what was kept and skipped, and the first event rule across threads */
    struct sc_buf in = SC_BUF_INIT;
    sc_buf_puts(&in, "a1 1 1.0: 5 cycles:\n\t1 f (/x)\n\n");
    for (int i = 0; i < 3000; i++)
        sc_buf_printf(&in, "b%d 2 2.%06d: 7 %s:\n\t1 g (/x)\n\t2 h (/x)\n\n", i % 5, i,
                      i % 3 ? "cycles" : "instructions");
    for (int threads = 1; threads <= 4; threads++) {
        struct sc_perf_opts o = {.threads = threads};
        struct sc_perf_stats st;
        char err[SC_ERR_LEN];
        struct sc_profile *p = sc_profile_new();
        T_EQ_INT(sc_perf_decode_ex(in.data, in.len, &o, NULL, p, &st, err), 0);
        T_EQ_INT(st.samples, 2001);
        T_EQ_INT(p->nsamples, 2001);
        T_EQ_INT(st.other_events, 1000);
        T_EQ_STR(st.event, "cycles");
        T_EQ_STR(st.other_event, "instructions");
        T_EQ_INT(st.unterminated, 0);
        sc_profile_free(p);
    }
    sc_buf_release(&in);
}

static void test_tidy(void)
{
    T_COLLAPSE("a1 1 1.0: 1 cycles:\n"
               "\t1 f;g (/x)\n"
               "\t2 std::vector<int>::push(int const&) (/x)\n"
               "\t3 net/http.(*Client).Do (/x)\n"
               "\t4 ns::(anonymous namespace)::h(int) (/x)\n"
               "\t5 RegExp:[&<>\"'] (/tmp/perf-7.map)\n"
               "\t6 main+0x1f (/x)\n"
               "\t7 (x) (/x)\n"
               "\t8 up+0x1F (/x)\n\n",
               &opts0,
               "a1;up+0x1F;main;RegExp:[&<>];ns::(anonymous namespace)::h;"
               "net/http.(*Client).Do;std::vector<int>::push;f:g 1\n");
    /* java: a leading L goes when the process starts with "java" and the name has a '/' */
    T_COLLAPSE("java 1 1.0: 1 cycles:\n\t1 Lorg/mozilla/Foo;.call(Lorg/Bar;)V (/tmp/perf-1.map)\n"
               "\t2 LFoo (/x)\n\n"
               "javac 2 1.0: 1 cycles:\n\t1 Lorg/x;.y (/x)\n\n"
               "xz 3 1.0: 1 cycles:\n\t1 Lorg/x;.y (/x)\n\n",
               &opts0, "java;LFoo;org/mozilla/Foo:.call 1\njavac;org/x:.y 1\nxz;Lorg/x:.y 1\n");
    /* the regex's backtracking: "abc (foo)" leaves "c", the dso is the last " (" ... ")" */
    T_COLLAPSE("a1 1 1.0: 1 cycles:\n\tabc (foo)\n\tffff  (bar)\n\t12 sym (y) (z)\n"
               "\t13 a b (lib (deleted))\n\t14 nodso\n\n",
               &opts0, "a1;a b ;sym ; ;c 1\n");
    /* split /->/: leading empty fields stay, trailing ones go */
    T_COLLAPSE("a1 1 1.0: 1 cycles:\n\t1 ->x (/x)\n\t2 y-> (/x)\n\t3 -> (/x)\n\t4 a->->b (/x)\n\n",
               &opts0, "a1;a;_[i];b_[i];y;;x_[i] 1\n");
}

static void test_annotations(void)
{
    struct sc_perf_opts k = {.kernel = 1}, j = {.jit = 1}, all = {.kernel = 1, .jit = 1};
    const char *kin = "a1 1 1.0: 1 cycles:\n\t1 k1 ([kernel.kallsyms])\n\t2 k2 (/boot/vmlinux)\n"
                      "\t3 k3 ([unknown])\n\t4 k4 (/usr/lib/x.so)\n\t5 k5 ([nf_conntrack])\n\n";
    T_COLLAPSE(kin, &k, "a1;k5_[k];k4;k3;k2_[k];k1_[k] 1\n");
    T_COLLAPSE(kin, &opts0, "a1;k5;k4;k3;k2;k1 1\n");
    T_COLLAPSE("a1 1 1.0: 1 cycles:\n\t1 j1 (/tmp/perf-1234.map)\n\t2 j2_[j] (/tmp/perf-1.map)\n"
               "\t3 j3 ([kernel.kallsyms])\n\t4 j4 (/tmp/perf-.map)\n\n",
               &j, "a1;j4;j3;j2_[j];j1_[j] 1\n");
    /* a Java frame: its class's 'L' cut, then the annotation after the whole name */
    T_COLLAPSE("java 1 1.0: 1 cycles:\n\t1 Ljava/lang/Thread;::run (/tmp/perf-43287.map)\n\n", &j,
               "java;java/lang/Thread:::run_[j] 1\n");
    T_COLLAPSE("a1 1 1.0: 1 cycles:\n\t1 outer->mid->leaf ([kernel.kallsyms])\n"
               "\t2 x->y_[i] (/x)\n\n",
               &all, "a1;x;y_[i];outer_[k];mid_[i];leaf_[i] 1\n");
}

static void test_unknown(void)
{
    const char *in = "a1 1 1.0: 1 cycles:\n"
                     "\t16932 [unknown] (/usr/lib/x86_64-linux-gnu/liblzma.so.5)\n"
                     "\t15f0 [unknown] ([unknown])\n\n";
    struct sc_perf_opts addrs = {.addrs = 1};
    T_COLLAPSE(in, &opts0, "a1;[unknown];[liblzma.so.5] 1\n");
    T_COLLAPSE(in, &addrs, "a1;[unknown <15f0>];[liblzma.so.5 <16932>] 1\n");
}

static void test_sample_ends(void)
{
    /* only an empty line ends (and counts) a sample */
    T_COLLAPSE("a1 1 1.0: 3 cycles:\n\t1 f (/x)\n\na1 1 2.0: 5 cycles:\n\t1 g (/x)\n", &opts0,
               "a1;f 3\n");
    T_COLLAPSE("a1 1 1.0: 3 cycles:\n\t1 f (/x)\n\na1 1 2.0: 5 cycles:\n\t1 g (/x)\n\n", &opts0,
               "a1;f 3\na1;g 5\n");
    T_COLLAPSE("a1 1 1.0: 3 cycles:\n\n", &opts0, "a1 3\n");
    /* "\r" lines are not empty: CRLF input counts nothing, as in the Perl script */
    T_COLLAPSE("a1 1 1.0: 3 cycles:\r\n\t1 f (/x)\r\n\r\n", &opts0, "");
    T_COLLAPSE("# cmdline : perf record\na1 1 1.0: 3 cycles:\n# inside\n\t1 f (/x)\n\n", &opts0,
               "a1;f 3\n");

    struct sc_perf_stats st;
    char err[SC_ERR_LEN];
    struct sc_profile *p = sc_profile_new();
    const char *in = "a1 1 1.0: 3 cycles:\n\t1 f (/x)\nnot a line\n\na1 1 2.0: 5 cycles:\n";
    T_EQ_INT(sc_perf_decode_ex(in, strlen(in), NULL, NULL, p, &st, err), 0);
    T_EQ_INT(st.samples, 1);
    T_EQ_INT(st.unterminated, 1);
    T_EQ_INT(st.unrecognized, 1);
    sc_profile_free(p);
}

/* Caches: the same sample body under a java and a non-java process, bodies that share a
 * first line, and many repeats, must all give what fresh parsing gives. */
static void test_caches(void)
{
    const char *body = "\t1 Lcom/foo;.bar (/x)\n\t2 Lcom/baz;.q (/x)\n\n";
    struct sc_buf in = SC_BUF_INIT;
    for (int i = 0; i < 50; i++) {
        sc_buf_printf(&in, "java 1 %d.0: 1 cycles:\n%s", i, body);
        sc_buf_printf(&in, "xz 2 %d.5: 1 cycles:\n%s", i, body);
        sc_buf_printf(&in, "xz 2 %d.7: 1 cycles:\n\t1 Lcom/foo;.bar (/x)\n\t9 other (/x)\n\n", i);
        sc_buf_printf(&in, "xz 2 %d.8: 1 cycles:\n\t1 Lcom/foo;.bar (/x)\n\n", i);
    }
    char *got = collapse_n(in.data, in.len, &opts0);
    T_EQ_STR(got, "java;com/baz:.q;com/foo:.bar 50\n"
                  "xz;Lcom/baz:.q;Lcom/foo:.bar 50\n"
                  "xz;Lcom/foo:.bar 50\n"
                  "xz;other;Lcom/foo:.bar 50\n");
    free(got);
    sc_buf_release(&in);
}

static int find_label(const struct sc_profile *p, uint32_t si, const char *key,
                      const struct sc_label **out)
{
    const struct sc_sample *s = &p->samples[si];
    for (uint32_t i = 0; i < s->nlabels; i++) {
        const struct sc_label *l = &p->labels[s->label_start + i];
        struct sc_str k = sc_profile_str(p, l->key);
        if (k.len == strlen(key) && memcmp(k.ptr, key, k.len) == 0) {
            *out = l;
            return 1;
        }
    }
    return 0;
}

static void test_model(void)
{
    const char *in = "V8 Worker 24636/25607 [001] 759.337518: 2004008 cpu-clock:pppH: \n"
                     "\tffff1 leaf+0x1 ([kernel.kallsyms])\n\tffff2 root (/bin/x)\n\n"
                     "xz 9986 [000] 760.5: 3 cpu-clock:pppH:\n\n"
                     "xz 9986 [000] nottime: cpu-clock:pppH:\n\n";
    char err[SC_ERR_LEN];
    struct sc_profile *p = decode(in, strlen(in), &opts0, NULL, err);
    T_CHECK(p != NULL);
    if (!p)
        return;
    T_EQ_INT(p->nsample_types, 2);
    T_EQ_MEM(sc_profile_str(p, p->sample_types[0].type).ptr,
             sc_profile_str(p, p->sample_types[0].type).len, "samples");
    T_EQ_MEM(sc_profile_str(p, p->sample_types[1].type).ptr,
             sc_profile_str(p, p->sample_types[1].type).len, "cpu-clock");
    T_EQ_MEM(sc_profile_str(p, p->sample_types[1].unit).ptr,
             sc_profile_str(p, p->sample_types[1].unit).len, "nanoseconds");
    T_EQ_INT(sc_profile_sample_index(p, NULL, err), 1);
    T_EQ_MEM(sc_profile_str(p, p->period_type.type).ptr, sc_profile_str(p, p->period_type.type).len,
             "cpu-clock");
    T_EQ_INT(p->period, 2004008);
    T_EQ_INT(p->nsamples, 3);
    T_EQ_INT(p->values[0], 1);
    T_EQ_INT(p->values[1], 2004008);
    T_EQ_INT(p->values[3], 3);
    T_EQ_INT(p->values[5], 1);
    T_EQ_INT(p->samples[0].time_ns, 759337518000LL);
    T_EQ_INT(p->samples[1].time_ns, 760500000000LL);
    T_EQ_INT(p->samples[2].time_ns, 0);
    /* leaf first, the process last; one function and location per distinct frame */
    T_EQ_INT(p->samples[0].nlocs, 3);
    T_EQ_INT(p->samples[1].nlocs, 1);
    uint32_t l0 = p->sample_locs[p->samples[0].loc_start];
    const struct sc_line *ln = sc_location_lines(p, &p->locations[l0]);
    struct sc_str nm = sc_function_name(p, ln->function - 1);
    T_EQ_MEM(nm.ptr, nm.len, "leaf");
    uint32_t l2 = p->sample_locs[p->samples[0].loc_start + 2];
    nm = sc_function_name(p, sc_location_lines(p, &p->locations[l2])->function - 1);
    T_EQ_MEM(nm.ptr, nm.len, "V8_Worker");
    T_EQ_INT(p->nlocations, 4);
    T_EQ_INT(p->nfunctions, 4);
    T_EQ_INT(p->sample_locs[p->samples[1].loc_start], p->sample_locs[p->samples[2].loc_start]);
    /* labels: comm as printed, pid only when the header has one */
    const struct sc_label *l;
    T_CHECK(find_label(p, 0, "comm", &l) && l->str && sc_profile_str(p, l->str).len == 9 &&
            memcmp(sc_profile_str(p, l->str).ptr, "V8 Worker", 9) == 0);
    T_CHECK(find_label(p, 0, "pid", &l) && l->str == 0 && l->num == 24636);
    T_CHECK(find_label(p, 0, "tid", &l) && l->str == 0 && l->num == 25607);
    T_CHECK(!find_label(p, 1, "pid", &l));
    T_CHECK(find_label(p, 1, "tid", &l) && l->num == 9986);
    sc_profile_free(p);

    /* other events: unit count, name before the modifier; none at all: "events" */
    const char *cyc = "a1 1 1.0: 5 cycles:u:\n\n";
    p = decode(cyc, strlen(cyc), &opts0, NULL, err);
    T_CHECK(p && p->nsample_types == 2);
    if (p) {
        T_EQ_MEM(sc_profile_str(p, p->sample_types[1].type).ptr,
                 sc_profile_str(p, p->sample_types[1].type).len, "cycles");
        T_EQ_MEM(sc_profile_str(p, p->sample_types[1].unit).ptr,
                 sc_profile_str(p, p->sample_types[1].unit).len, "count");
        sc_profile_free(p);
    }
    const char *node = "node 31912 \n\t1 f (/x)\n\n";
    p = decode(node, strlen(node), &opts0, NULL, err);
    T_CHECK(p && p->nsample_types == 2 && p->nsamples == 1);
    if (p) {
        T_EQ_MEM(sc_profile_str(p, p->sample_types[1].type).ptr,
                 sc_profile_str(p, p->sample_types[1].type).len, "events");
        sc_profile_free(p);
    }
    /* empty input: an empty profile with its sample types */
    p = decode("", 0, &opts0, NULL, err);
    T_CHECK(p && p->nsamples == 0 && p->nsample_types == 2);
    sc_profile_free(p);
}

/* perf prints a thread it does not know (one that exited before perf read its name) as comm
 * ":-1", pid and tid -1. The Perl script's header regex wants digits there, so it read on to
 * the period and named the process after the timestamp ("::-1____-1_[000]_341.273027:"): a
 * new process, and a new comm series at ingest, per sample. */
static void test_exited_tasks(void)
{
    struct sc_perf_opts tid = {.tid = 1};
    const char *in = ":-1    -1 [000] 341.273027:    1001001 cpu-clock: \n"
                     "\tffffffff81 native_safe_halt+0x6 ([kernel.kallsyms])\n\n"
                     ":-1    -1 [001] 341.274031:    1001001 cpu-clock: \n"
                     "\tffffffff81 native_safe_halt+0x6 ([kernel.kallsyms])\n\n"
                     "sh  5894 [000] 341.275:    1001001 cpu-clock: \n\t1 f (/x)\n\n";
    T_COLLAPSE(in, &opts0, ":-1;native_safe_halt 2002002\nsh;f 1001001\n");
    T_COLLAPSE(in, &tid, ":-1-?/-1;native_safe_halt 2002002\nsh-?/5894;f 1001001\n");
    /* with -F pid,tid: "-1/-1" */
    T_COLLAPSE(":-1    -1/-1    [000] 341.273027: 7 cpu-clock: \n\t1 f (/x)\n\n", &tid,
               ":-1--1/-1;f 7\n");
    char err[SC_ERR_LEN];
    struct sc_profile *p = decode(in, strlen(in), &opts0, NULL, err);
    T_CHECK(p != NULL);
    if (!p)
        return;
    T_EQ_INT(p->nsamples, 3);
    /* comm as perf printed it; no pid or tid label for the thread perf did not know */
    const struct sc_label *l;
    for (uint32_t i = 0; i < 2; i++) {
        T_CHECK(find_label(p, i, "comm", &l) && sc_profile_str(p, l->str).len == 3 &&
                memcmp(sc_profile_str(p, l->str).ptr, ":-1", 3) == 0);
        T_CHECK(!find_label(p, i, "tid", &l));
        T_CHECK(!find_label(p, i, "pid", &l));
    }
    T_EQ_INT(p->samples[0].time_ns, 341273027000LL);
    T_CHECK(find_label(p, 2, "tid", &l) && l->num == 5894);
    sc_profile_free(p);
}

/* A recording without call chains (perf record without -g): perf script prints each sample
 * on one line, comm right-aligned, the ip, symbol and dso after the event, and no empty line
 * between samples. Each line is one sample of one frame. */
static void test_no_callchain(void)
{
    const char *in =
        "              sh  5894   681.403828:    1001001 cpu-clock:      55b3b748ecec [unknown] "
        "(/usr/bin/dash)\n"
        "              sh  5894   681.407844:    1001001 cpu-clock:      7f567dd9f930 malloc+0x0 "
        "(/usr/lib/x86_64-linux-gnu/libc.so.6)\n"
        "              sh  5894   681.408844:    1001001 cpu-clock:      7f567dd9f930 malloc+0x0 "
        "(/usr/lib/x86_64-linux-gnu/libc.so.6)\n"
        "             :-1    -1 [000] 681.5: 1001001 cpu-clock:  ffffffff81 native_safe_halt+0x6 "
        "([kernel.kallsyms])\n";
    T_COLLAPSE(in, &opts0, ":-1;native_safe_halt 1001001\nsh;[dash] 1001001\nsh;malloc 2002002\n");
    struct sc_perf_opts k = {.kernel = 1, .pid = 1};
    T_COLLAPSE(in, &k,
               ":-1-?;native_safe_halt_[k] 1001001\nsh-?;[dash] 1001001\nsh-?;malloc 2002002\n");
    /* -F comm,pid,tid,cpu,time,period,event,ip,sym,dso; the event with a modifier; no period;
     * the line not indented (comm longer than perf's 16 columns, or stripped) */
    T_COLLAPSE(
        "  java 12/13 [001] 5.000001:  77 cpu-clock:pppH:  7f1 Lcom/Foo;.bar (/tmp/perf-12.map)\n"
        "kworker/u4:1-events 14/14 [000] 5.5: cpu-clock:pppH: ffff1 worker_thread+0x1 "
        "([kernel.kallsyms])\n",
        &opts0, "java;com/Foo:.bar 77\nkworker/u4:1-events;worker_thread 1\n");
    /* -F without the time, or the event too: the frame after the ids, cpu or event */
    T_COLLAPSE("              sh  5894 cpu-clock:      55b3b748ecec [unknown] (/usr/bin/dash)\n"
               "              sh  5894      55b3b7490ec0 f (/usr/bin/dash)\n"
               "              sh  5894 [001]     55b3b7490ec0 g+0x1 (/usr/bin/dash)\n",
               &opts0, "sh;[dash] 1\nsh;f 1\nsh;g 1\n");
    /* the first event seen is kept, as for stacks */
    T_COLLAPSE("  a1 1 1.0: 5 cycles:  1 f (/x)\n  a1 1 2.0: 7 instructions:  1 g (/x)\n"
               "  a1 1 3.0: 11 cycles:  1 f (/x)\n",
               &opts0, "a1;f 16\n");
    struct sc_perf_opts ins = {.event = "instructions"};
    T_COLLAPSE("  a1 1 1.0: 5 cycles:  1 f (/x)\n  a1 1 2.0: 7 instructions:  1 g (/x)\n", &ins,
               "a1;g 7\n");
    /* within a sample with a call chain, an indented line is a stack line, as in the script */
    T_COLLAPSE("a1 1 1.0: 5 cycles:\n\t1 f (/x)\n  b2 2 2.0: 7 cycles:  1 g (/x)\n\n", &opts0,
               "a1;2 2.0: 7 cycles:  1 g;f 5\n");

    char err[SC_ERR_LEN];
    struct sc_perf_stats st;
    struct sc_profile *p = sc_profile_new();
    T_EQ_INT(sc_perf_decode_ex(in, strlen(in), NULL, NULL, p, &st, err), 0);
    T_EQ_INT(st.samples, 4);
    T_EQ_INT(st.unterminated, 0);
    T_EQ_INT(st.unrecognized, 0);
    T_EQ_STR(st.event, "cpu-clock");
    T_EQ_INT(p->nsamples, 4);
    T_EQ_INT(p->samples[0].nlocs, 2);
    T_EQ_INT(p->samples[1].time_ns, 681407844000LL);
    T_EQ_INT(p->values[1], 1001001);
    T_EQ_MEM(sc_profile_str(p, p->sample_types[1].type).ptr,
             sc_profile_str(p, p->sample_types[1].type).len, "cpu-clock");
    sc_profile_free(p);
    /* and the format detection takes it for perf script */
    T_EQ_INT(sc_detect_format(in, strlen(in)), SC_FMT_PERF);
}

/* Headers that differ from a recent one only in the timestamp take a shortcut: it must
 * give what a full parse gives. */
static void test_header_templates(void)
{
    const char *in = "a1 7 [000] 1.000001: 5 cycles:\n\t1 f (/x)\n\n"
                     "a1 7 [000] 2.5: 6 cycles:\n\t1 f (/x)\n\n"
                     "a1 7 [000] 3.25: 6 cycles:\n\t1 f (/x)\n\n"
                     "a1 7 [000] 4: 6 cycles:\n\n"
                     "a1 7 [000] 5.5: 6 instructions:\n\n"
                     "a1 7 [000] 6.5: 6 instructions:\n\n"
                     "a1 7 [001] 7.5: 6 cycles:\n\n"
                     "a1 7 [000] 8.5: 6 cycles: \n\n"
                     "a1 7 [000] 9.5:6 cycles:\n\n";
    static const int64_t times[] = {1000001000LL, 2500000000LL, 3250000000LL, 0,
                                    7500000000LL, 8500000000LL, 9500000000LL};
    static const int64_t periods[] = {5, 6, 6, 6, 6, 6, 6};
    struct sc_perf_stats st;
    char err[SC_ERR_LEN];
    struct sc_profile *p = sc_profile_new();
    T_EQ_INT(sc_perf_decode_ex(in, strlen(in), NULL, NULL, p, &st, err), 0);
    T_EQ_INT(p->nsamples, 7);
    T_EQ_INT(st.other_events, 2);
    for (uint32_t i = 0; i < p->nsamples && i < 7; i++) {
        T_EQ_INT(p->samples[i].time_ns, times[i]);
        T_EQ_INT(p->values[i * 2 + 1], periods[i]);
    }
    sc_profile_free(p);
}

static void test_limits(void)
{
    char err[SC_ERR_LEN];
    const char *three = "a1 1 1.0: 1 cycles:\n\t1 f (/x)\n\t2 g (/x)\n\t3 h (/x)\n\n"
                        "a1 1 2.0: 1 cycles:\n\t1 f (/x)\n\n"
                        "a1 1 3.0: 1 cycles:\n\t1 k (/x)\n\n";
    struct sc_limits lim = sc_limits_cli;
    lim.max_samples = 2;
    struct sc_profile *p = sc_profile_new();
    T_EQ_INT(sc_perf_decode(three, strlen(three), NULL, &lim, p, err), SC_ELIMIT);
    sc_profile_free(p);
    lim = sc_limits_cli;
    lim.max_stack_depth = 3;
    p = sc_profile_new();
    T_EQ_INT(sc_perf_decode(three, strlen(three), NULL, &lim, p, err), SC_ELIMIT);
    T_CHECK(strstr(err, "line 4") != NULL);
    sc_profile_free(p);
    lim.max_stack_depth = 4;
    p = sc_profile_new();
    T_EQ_INT(sc_perf_decode(three, strlen(three), NULL, &lim, p, err), 0);
    sc_profile_free(p);
    lim = sc_limits_cli;
    lim.max_functions = 4;
    p = sc_profile_new();
    T_EQ_INT(sc_perf_decode(three, strlen(three), NULL, &lim, p, err), SC_ELIMIT);
    sc_profile_free(p);
    lim.max_functions = 5;
    p = sc_profile_new();
    T_EQ_INT(sc_perf_decode(three, strlen(three), NULL, &lim, p, err), 0);
    sc_profile_free(p);
    lim = sc_limits_cli;
    lim.max_input = 10;
    p = sc_profile_new();
    T_EQ_INT(sc_perf_decode(three, strlen(three), NULL, &lim, p, err), SC_ELIMIT);
    sc_profile_free(p);
}

static uint64_t rng = 0x9e3779b97f4a7c15ULL;
static uint32_t rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)rng;
}

/* Bad input gives an error or skipped lines, never a crash (run under ASan too). */
static void test_malformed(void)
{
    char err[SC_ERR_LEN];
    const char *good =
        "java 24636/25607 [000] 1.5: 7 cycles:\n\t1 Lf;(x)->g->h+0x1 (/tmp/perf-1.map)\n"
        "\t2 [unknown] ([unknown])\n\n";
    size_t gl = strlen(good);
    struct sc_perf_opts all = {.pid = 1, .tid = 1, .kernel = 1, .jit = 1, .addrs = 1};
    /* every truncation */
    for (size_t n = 0; n <= gl; n++) {
        struct sc_profile *p = sc_profile_new();
        int rc = sc_perf_decode(good, n, &all, NULL, p, err);
        T_CHECK(rc == 0 && p->nsamples == (n == gl ? 1u : 0u));
        sc_profile_free(p);
    }
    /* random bytes, with NULs, newlines and the characters the parser looks for */
    static const char alphabet[] = "\n\n\t :;()[]-></.0x19afL\"'\0#java";
    char *buf = malloc(1 << 16);
    T_CHECK(buf != NULL);
    for (int round = 0; buf && round < 300; round++) {
        size_t n = rnd() % (1 << 16);
        for (size_t i = 0; i < n; i++)
            buf[i] = round % 2 ? (char)rnd() : alphabet[rnd() % (sizeof alphabet - 1)];
        struct sc_perf_opts o = all;
        o.threads = 1 + round % 3;
        struct sc_profile *p = sc_profile_new();
        int rc = sc_perf_decode(buf, n, &o, NULL, p, err);
        T_CHECK(rc == 0 && sc_profile_validate(p, err) == 0);
        sc_profile_free(p);
    }
    free(buf);
    /* a 2 MiB line is refused; a 200 KiB symbol is fine */
    size_t big = (size_t)2 << 20;
    char *line = malloc(big + 64);
    T_CHECK(line != NULL);
    if (line) {
        memcpy(line, "a1 1 1.0: 1 cycles:\n\t1 ", 23);
        memset(line + 23, 'x', big);
        memcpy(line + 23 + big, " (/x)\n\n", 7);
        struct sc_profile *p = sc_profile_new();
        T_EQ_INT(sc_perf_decode(line, 23 + big + 7, NULL, NULL, p, err), SC_ELIMIT);
        T_CHECK(strstr(err, "line 2") != NULL);
        sc_profile_free(p);
        size_t mid = 200 << 10;
        memcpy(line + 23 + mid, " (/x)\n\n", 7);
        p = sc_profile_new();
        T_EQ_INT(sc_perf_decode(line, 23 + mid + 7, NULL, NULL, p, err), 0);
        T_CHECK(p->nsamples == 1 && p->nfunctions == 2);
        sc_profile_free(p);
        free(line);
    }
}

/* The thread count never changes the result, wherever the pieces split. */
static void test_threads(void)
{
    struct sc_buf in = SC_BUF_INIT;
    for (int i = 0; i < 20000; i++) {
        sc_buf_printf(&in, "p%d %d/%d [00%d] %d.%06d: %d cpu-clock:\n", i % 7, i % 3, i % 11, i % 4,
                      i / 1000, i % 1000000, 1 + i % 13);
        for (int f = 0; f < 1 + i % 9; f++)
            sc_buf_printf(&in, "\t%x f%d+0x%x (%s)\n", f * 16 + i % 5, (i + f) % 23, f,
                          f % 3 ? "[kernel.kallsyms]" : "/tmp/perf-9.map");
        if (i % 17 == 0)
            sc_buf_puts(&in, "# comment\n");
        if (i % 29 != 0)
            sc_buf_puts(&in, "\n");
    }
    struct sc_perf_opts o = {.tid = 1, .kernel = 1, .jit = 1, .threads = 1};
    char *want = collapse_n(in.data, in.len, &o);
    T_CHECK(want && strlen(want) > 1000);
    for (int t = 2; t <= 5; t++) {
        o.threads = t;
        char *got = collapse_n(in.data, in.len, &o);
        T_CHECK(want && got && strcmp(want, got) == 0);
        free(got);
    }
    free(want);
    sc_buf_release(&in);
}

/* The shared test data: samples, totals and the first line as the Perl script sums them. */
static void test_testdata(void)
{
    const char *path = t_testdata("perf/system-wide-go-xz.perf.txt");
    if (!path) {
        fprintf(stderr, "testdata absent: skipping test_testdata\n");
        return;
    }
    struct sc_input in;
    char err[SC_ERR_LEN];
    T_EQ_INT(sc_input_read(path, 1 << 30, &in, err), 0);
    struct sc_profile *p = decode(in.data, in.len, &opts0, NULL, err);
    T_CHECK(p != NULL);
    if (p) {
        /* 1869 samples, every one of 2004008 ns (perf record -F 499) */
        T_EQ_INT(p->nsamples, 1869);
        int64_t total = 0;
        for (uint32_t i = 0; i < p->nsamples; i++)
            total += p->values[i * 2 + 1];
        T_EQ_INT(total, 1869LL * 2004008);
        T_EQ_INT(p->samples[0].time_ns, 759337518000LL);
        sc_profile_free(p);
    }
    sc_input_release(&in);
}

int main(void)
{
    T_RUN(test_headers);
    T_RUN(test_events);
    T_RUN(test_tidy);
    T_RUN(test_annotations);
    T_RUN(test_unknown);
    T_RUN(test_sample_ends);
    T_RUN(test_caches);
    T_RUN(test_model);
    T_RUN(test_header_templates);
    T_RUN(test_exited_tasks);
    T_RUN(test_no_callchain);
    T_RUN(test_limits);
    T_RUN(test_malformed);
    T_RUN(test_threads);
    T_RUN(test_testdata);
    return t_done();
}
