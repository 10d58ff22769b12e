/* test_cpuprofile.c - V8 .cpuprofile and Chrome trace reading: stacks, values, times, the
 * (root) node, hit counts, detection, and the errors of broken files. */
#include "t.h"
#include "t_profile.h"

#include "formats/cpuprofile.h"
#include "formats/folded.h"
#include "formats/input.h"
#include "model/error.h"

static struct sc_limits lim;

/* Decodes json; rc in *rc, the profile (free it) or NULL. */
static struct sc_profile *dec(const char *json, int *rc, char *err)
{
    return t_decode_text(sc_cpuprofile_decode, json, &lim, rc, err);
}

#define FRAME(name, url, line, col)                                                                \
    "\"callFrame\":{\"functionName\":\"" name "\",\"scriptId\":\"3\",\"url\":\"" url               \
    "\",\"lineNumber\":" #line ",\"columnNumber\":" #col "}"

static const char node_json[] = "{\"nodes\":[{\"id\":1," FRAME(
    "(root)", "", -1,
    -1) ",\"hitCount\":0,\"children\":[2,4]},"
        "{\"id\":2," FRAME(
            "main", "file:///a.js", 3,
            9) ",\"hitCount\":1,\"children\":[3]},"
               "{\"id\":3," FRAME(
                   "", "file:///a.js", 7,
                   0) ",\"hitCount\":2,"
                      "\"positionTicks\":[{\"line\":8,\"ticks\":2}]},"
                      "{\"id\":4," FRAME(
                          "(garbage collector)", "", -1,
                          -1) ",\"hitCount\":1}],"
                              "\"startTime\":1000,\"endTime\":5000,"
                              "\"samples\":[2,3,3,4,1],\"timeDeltas\":[10,1000,-5,1005,500]}";

static void test_node(void)
{
    char err[SC_ERR_LEN] = "";
    int rc;
    struct sc_profile *p = dec(node_json, &rc, err);
    T_EQ_INT(rc, 0);
    if (!p) {
        fprintf(stderr, "%s\n", err);
        return;
    }
    /* two types, cpu the default; a sample on (root) keeps it, others drop it; negative
     * deltas count 0; an empty name is (anonymous) */
    T_EQ_INT(p->nsample_types, 2);
    T_EQ_INT(sc_profile_sample_index(p, NULL, err), 1);
    T_EQ_STR(t_folded(p, 0), "(garbage collector) 1\n(root) 1\nmain 1\nmain;(anonymous) 2\n");
    T_EQ_STR(t_folded(p, 1),
             "(garbage collector) 1005000\n(root) 500000\nmain 10000\nmain;(anonymous) 1000000\n");
    /* times: startTime plus the deltas so far, in ns */
    T_EQ_INT(p->nsamples, 5);
    T_EQ_INT(p->samples[0].time_ns, 1010000);
    T_EQ_INT(p->samples[1].time_ns, 2010000);
    T_EQ_INT(p->samples[2].time_ns, 2005000);
    T_EQ_INT(p->samples[4].time_ns, 3510000);
    T_EQ_INT(p->duration_nanos, 4000000);
    T_EQ_INT(p->period, (10000 + 1000000 + 1005000 + 500000) / 5);
    /* lines and columns 1-based, the file the url */
    const struct sc_location *l = &p->locations[p->sample_locs[p->samples[0].loc_start]];
    const struct sc_line *ln = sc_location_lines(p, l);
    T_EQ_INT(ln->line, 4);
    T_EQ_INT(ln->column, 10);
    struct sc_str file = sc_profile_str(p, p->functions[ln->function - 1].filename);
    T_EQ_MEM(file.ptr, file.len, "file:///a.js");
    sc_profile_free(p);
}

/* A name's bytes that are not UTF-8 (a JSON file must be, RFC 8259) become U+FFFD, each, as
 * the writers' escaper makes them: a name read is never longer when written again. */
static void test_not_utf8(void)
{
    char err[SC_ERR_LEN] = "";
    int rc;
    struct sc_profile *p =
        dec("{\"nodes\":[{\"id\":1," FRAME(
                "a\xff\xc0\xaf"
                "b\xc3\xa9",
                "", -1, -1) ",\"hitCount\":1}],"
                            "\"startTime\":0,\"endTime\":10,\"samples\":[1],\"timeDeltas\":[10]}",
            &rc, err);
    T_EQ_INT(rc, 0);
    if (!p) {
        fprintf(stderr, "%s\n", err);
        return;
    }
    T_EQ_STR(t_folded(p, 0), "a\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"
                             "b\xc3\xa9 1\n");
    sc_profile_free(p);
}

/* DevTools' files of old: hit counts, no samples */
static void test_hit_counts(void)
{
    char err[SC_ERR_LEN] = "";
    int rc;
    struct sc_profile *p =
        dec("{\"nodes\":[{\"id\":1," FRAME(
                "(root)", "", -1, -1) ",\"hitCount\":0,"
                                      "\"children\":[2]},{\"id\":2," FRAME(
                                          "f", "", 0, 0) ",\"hitCount\":3,"
                                                         "\"children\":[3]},{\"id\":3," FRAME(
                                                             "g", "", 0,
                                                             0) ",\"hitCount\":1}],"
                                                                "\"startTime\":0,\"endTime\":4000}",
            &rc, err);
    T_EQ_INT(rc, 0);
    if (!p)
        return;
    T_EQ_STR(t_folded(p, 0), "f 3\nf;g 1\n");
    T_EQ_STR(t_folded(p, 1), "f 3000000\nf;g 1000000\n");
    T_EQ_INT(p->samples[0].time_ns, 0);
    sc_profile_free(p);
}

/* Chrome's trace: chunks of one thread, parents instead of children, other events around */
static void test_trace(void)
{
    static const char trace[] =
        "{\"traceEvents\":[{\"name\":\"X\",\"pid\":1,\"args\":{\"data\":{\"startTime\":1.5,"
        "\"url\":\"u\"}}},"
        "{\"name\":\"Profile\",\"pid\":1,\"tid\":2,\"id\":\"0x1\",\"args\":{\"data\":"
        "{\"startTime\":500}}},"
        "{\"name\":\"ProfileChunk\",\"pid\":1,\"tid\":2,\"args\":{\"data\":{\"cpuProfile\":"
        "{\"nodes\":[{\"id\":1,\"callFrame\":{\"functionName\":\"(root)\"}},{\"id\":2,"
        "\"parent\":1,\"callFrame\":{\"functionName\":\"f\",\"url\":\"x.js\"}}],"
        "\"samples\":[2,2]},\"timeDeltas\":[100,100]}}},"
        "{\"name\":\"ProfileChunk\",\"pid\":1,\"tid\":2,\"args\":{\"data\":{\"cpuProfile\":"
        "{\"nodes\":[{\"id\":3,\"parent\":2,\"callFrame\":{\"functionName\":\"g\"}}],"
        "\"samples\":[3]},\"timeDeltas\":[50]}}}]}";
    char err[SC_ERR_LEN] = "";
    int rc;
    struct sc_profile *p = dec(trace, &rc, err);
    T_EQ_INT(rc, 0);
    if (!p)
        return;
    T_EQ_STR(t_folded(p, 1), "f 200000\nf;g 50000\n");
    T_EQ_INT(p->samples[2].time_ns, 750000);
    sc_profile_free(p);
    /* a trace without profile chunks is no profile */
    p = dec("[{\"name\":\"X\",\"pid\":1}]", &rc, err);
    T_EQ_INT(rc, SC_EFORMAT);
    T_CHECK(strstr(err, "without CPU profile chunks") != NULL);
}

static void test_errors(void)
{
    static const struct {
        const char *json, *msg;
        int rc;
    } cases[] = {
        {"{\"nodes\":[", "bad JSON", SC_EFORMAT},
        {"{\"nodes\":[{\"id\":\"x\"}]}", "bad JSON", SC_EFORMAT},
        {"{\"nodes\":[]}", "without nodes", SC_EFORMAT},
        {"{\"nodes\":[{\"callFrame\":{}}]}", "without an id", SC_EFORMAT},
        {"{\"nodes\":[{\"id\":1},{\"id\":1}]}", "node id 1 twice", SC_EFORMAT},
        {"{\"nodes\":[{\"id\":1,\"children\":[9]}]}", "node 9, which is not", SC_EFORMAT},
        {"{\"nodes\":[{\"id\":1}],\"samples\":[2],\"timeDeltas\":[1]}", "node 2, which is not",
         SC_EFORMAT},
        /* a cycle: 1 -> 2 -> 1 */
        {"{\"nodes\":[{\"id\":1,\"children\":[2]},{\"id\":2,\"children\":[1]}],\"samples\":[2]}",
         "its own ancestor", SC_EFORMAT},
        /* past the limits */
        {"{\"nodes\":[{\"id\":1}],\"samples\":[1,1,1,1,1]}", "limits.max_samples", SC_ELIMIT},
        {"{\"nodes\":[{\"id\":1,\"children\":[2]},{\"id\":2,\"children\":[3]},{\"id\":3,"
         "\"children\":[4]},{\"id\":4}],\"samples\":[4]}",
         "limits.max_stack_depth", SC_ELIMIT},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char err[SC_ERR_LEN] = "";
        int rc;
        struct sc_profile *p = dec(cases[i].json, &rc, err);
        T_CHECK(p == NULL);
        T_EQ_INT(rc, cases[i].rc);
        if (!strstr(err, cases[i].msg)) {
            T_CHECK(!"message");
            fprintf(stderr, "case %zu: '%s' lacks '%s'\n", i, err, cases[i].msg);
        }
    }
}

/* detection picks the JSON formats, and leaves folded stacks that start with '[' alone */
static void test_detect(void)
{
    T_EQ_INT(sc_detect_format(node_json, strlen(node_json)), SC_FMT_CPUPROFILE);
    static const char tr[] =
        " [{\"name\":\"ProfileChunk\",\"args\":{\"data\":{\"cpuProfile\":{}}}}]";
    T_EQ_INT(sc_detect_format(tr, strlen(tr)), SC_FMT_CPUPROFILE);
    static const char ss[] = "{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\"}";
    T_EQ_INT(sc_detect_format(ss, strlen(ss)), SC_FMT_SPEEDSCOPE);
    static const char fo[] = "[unknown];main 3\n[unknown] 1\n";
    T_EQ_INT(sc_detect_format(fo, strlen(fo)), SC_FMT_FOLDED);
    static const char js[] = "{\"a\": 1}";
    T_EQ_INT(sc_detect_format(js, strlen(js)), SC_FMT_UNKNOWN);
}

/* a chain of nodes, each sampled once: the stacks' frames grow with the square of the input,
 * and are refused past 16 a byte of it */
static void test_frames_bound(void)
{
    struct sc_buf b = SC_BUF_INIT;
    uint32_t n = 3000;
    sc_buf_puts(&b, "{\"nodes\":[");
    for (uint32_t i = 1; i <= n; i++)
        sc_buf_printf(&b, "%s{\"id\":%u,\"children\":[%u]}", i > 1 ? "," : "", i,
                      i < n ? i + 1 : 1);
    /* the last node's child is the first: cut the cycle by giving the last no children */
    b.len -= strlen("{\"id\":3000,\"children\":[1]}");
    sc_buf_printf(&b, "{\"id\":%u}],\"samples\":[", n);
    for (uint32_t i = 1; i <= n; i++)
        sc_buf_printf(&b, "%s%u", i > 1 ? "," : "", i);
    sc_buf_puts(&b, "]}");
    sc_buf_putc(&b, 0);
    char err[SC_ERR_LEN] = "";
    int rc;
    struct sc_profile *p = dec(b.data, &rc, err);
    T_CHECK(p == NULL);
    T_EQ_INT(rc, SC_ELIMIT);
    T_CHECK(strstr(err, "16 for each byte") != NULL);
    sc_buf_release(&b);
}

int main(void)
{
    lim = sc_limits_cli;
    T_RUN(test_node);
    T_RUN(test_not_utf8);
    T_RUN(test_hit_counts);
    T_RUN(test_trace);
    T_RUN(test_frames_bound);
    lim.max_samples = 4;
    lim.max_stack_depth = 3;
    T_RUN(test_errors);
    T_RUN(test_detect);
    return t_done();
}
