/* test_folded.c - folded stacks: flamegraph.pl's parsing rules in, sorted lines out. */
#include "t.h"

#include "formats/folded.h"
#include "formats/input.h"
#include "model/error.h"

static struct sc_profile *dec(const char *text, int *rc, char *err)
{
    struct sc_profile *p = sc_profile_new();
    *rc = sc_folded_decode(text, strlen(text), &sc_limits_cli, p, err);
    return p;
}

/* decode then write the default column */
static const char *roundtrip(const char *text)
{
    static struct sc_buf out;
    char err[SC_ERR_LEN] = "";
    int rc;
    struct sc_profile *p = dec(text, &rc, err);
    out.len = 0;
    if (out.data)
        out.data[0] = 0;
    if (rc == 0) {
        int vi = sc_profile_sample_index(p, NULL, err);
        sc_folded_write(p, vi, &out, err);
    }
    sc_profile_free(p);
    return out.data ? out.data : "";
}

static void test_parse_rules(void)
{
    /* comments, blank lines, lines without a count are skipped; CRLF tolerated */
    T_EQ_STR(roundtrip("# comment\n\na;b 3\r\nno count here\nc 2\n"), "a;b 3\nc 2\n");
    /* duplicates sum; order is bytewise with a stack before its children */
    T_EQ_STR(roundtrip("b 1\na;b;c 2\na;b 1\na;b-x 4\na;b;c 5\n"),
             "a;b 1\na;b-x 4\na;b;c 7\nb 1\n");
    /* fractions are rounded; a count needs whitespace before it */
    T_EQ_STR(roundtrip("a 1.6\nb 2.\nc;d12\n"), "a 2\nb 2\n");
    /* frames may contain spaces; only the last field is the count */
    T_EQ_STR(roundtrip("main;do work;x y 3\n"), "main;do work;x y 3\n");
    /* zero counts are dropped on output */
    T_EQ_STR(roundtrip("a 0\nb 1\n"), "b 1\n");
    /* no trailing newline */
    T_EQ_STR(roundtrip("a;b 9"), "a;b 9\n");
    /* empty frames survive */
    T_EQ_STR(roundtrip("a;;b 1\n"), "a;;b 1\n");
}

static void test_model_shape(void)
{
    char err[SC_ERR_LEN] = "";
    int rc;
    struct sc_profile *p = dec("a;b;c 5\na;b;d 2\na 1\n", &rc, err);
    T_EQ_INT(rc, 0);
    T_EQ_INT(p->nsamples, 3);
    T_EQ_INT(p->nfunctions, 4); /* one per distinct frame */
    T_EQ_INT(p->nlocations, 4);
    T_EQ_INT(p->nsample_types, 1);
    struct sc_str t = sc_profile_str(p, p->sample_types[0].type);
    T_EQ_MEM(t.ptr, t.len, "samples");
    /* leaf first */
    const struct sc_sample *s = &p->samples[0];
    T_EQ_INT(s->nlocs, 3);
    struct sc_str leaf = sc_function_name(
        p, p->lines[p->locations[p->sample_locs[s->loc_start]].line_start].function - 1);
    T_EQ_MEM(leaf.ptr, leaf.len, "c");
    T_EQ_INT(sc_profile_validate(p, err), 0);
    sc_profile_free(p);
}

static void test_differential(void)
{
    char err[SC_ERR_LEN] = "";
    int rc;
    struct sc_profile *p = dec("a;b 3 5\na;c 4 0\n", &rc, err);
    T_EQ_INT(rc, 0);
    T_EQ_INT(p->nsample_types, 2);
    struct sc_str t0 = sc_profile_str(p, p->sample_types[0].type);
    T_EQ_MEM(t0.ptr, t0.len, "base_samples");
    T_EQ_INT(p->values[0], 3); /* base */
    T_EQ_INT(p->values[1], 5);
    struct sc_buf out = SC_BUF_INIT;
    T_EQ_INT(sc_folded_write(p, 1, &out, err), 0);
    T_EQ_STR(out.data, "a;b 5\n");
    out.len = 0;
    T_EQ_INT(sc_folded_write(p, 0, &out, err), 0);
    T_EQ_STR(out.data, "a;b 3\na;c 4\n");
    sc_buf_release(&out);
    sc_profile_free(p);
    /* mixing one- and two-count lines is an error that names the line */
    p = dec("a 1\nb 2 3\n", &rc, err);
    T_EQ_INT(rc, SC_EFORMAT);
    T_CHECK(strstr(err, "line 2") != NULL);
    sc_profile_free(p);
}

static void test_limits_and_detect(void)
{
    char err[SC_ERR_LEN] = "";
    struct sc_limits lim = sc_limits_cli;
    lim.max_stack_depth = 3;
    struct sc_profile *p = sc_profile_new();
    const char *deep = "a;b;c;d 1\n";
    T_EQ_INT(sc_folded_decode(deep, strlen(deep), &lim, p, err), SC_ELIMIT);
    T_CHECK(strstr(err, "deeper") != NULL);
    sc_profile_free(p);
    lim = sc_limits_cli;
    lim.max_samples = 2;
    p = sc_profile_new();
    const char *many = "a 1\nb 1\nc 1\n";
    T_EQ_INT(sc_folded_decode(many, strlen(many), &lim, p, err), SC_ELIMIT);
    sc_profile_free(p);

    T_EQ_INT(sc_detect_format("a;b 1\nc 2\n", 10), SC_FMT_FOLDED);
    T_EQ_INT(sc_detect_format("", 0), SC_FMT_FOLDED);
    T_EQ_INT(sc_detect_format("hello world\nthis is prose\n", 26), SC_FMT_UNKNOWN);
    const char *perf = "java 123 [000] 1.000: 1 cycles:\n\t  4005d1 main+0x1 (/bin/x)\n\n";
    T_EQ_INT(sc_detect_format(perf, strlen(perf)), SC_FMT_PERF);
    /* an empty file decodes to an empty profile */
    int rc;
    p = dec("", &rc, err);
    T_EQ_INT(rc, 0);
    T_EQ_INT(p->nsamples, 0);
    T_EQ_INT(p->nsample_types, 1);
    sc_profile_free(p);
}

/* A function without a name (and no system name) in a location of a binary, as pprof
 * has them, is written by its location's address, as a frame without a function is; the
 * others keep their names. */
static void test_nameless_written_by_address(void)
{
    char err[SC_ERR_LEN] = "";
    int rc;
    struct sc_profile *p = dec("main;;leaf 5\nmain;x 3\n", &rc, err);
    T_EQ_INT(rc, 0);
    for (uint32_t i = 0; i < p->nlocations; i++)
        p->locations[i].address = 0x4f2a10 + i;
    struct sc_buf out = SC_BUF_INIT;
    T_EQ_INT(sc_folded_write(p, 0, &out, err), 0);
    T_EQ_STR(out.data, "main;0x4f2a11;leaf 5\nmain;x 3\n");
    /* a mapping and no address: still a binary's frame */
    struct sc_mapping *m = calloc(1, sizeof *m);
    if (m) {
        p->mappings = m;
        p->nmappings = p->mappings_cap = 1;
        for (uint32_t i = 0; i < p->nlocations; i++) {
            p->locations[i].address = 0;
            p->locations[i].mapping = 1;
        }
        out.len = 0;
        T_EQ_INT(sc_folded_write(p, 0, &out, err), 0);
        T_EQ_STR(out.data, "main;0x0;leaf 5\nmain;x 3\n");
    }
    sc_buf_release(&out);
    sc_profile_free(p);
}

int main(void)
{
    T_RUN(test_parse_rules);
    T_RUN(test_model_shape);
    T_RUN(test_differential);
    T_RUN(test_limits_and_detect);
    T_RUN(test_nameless_written_by_address);
    return t_done();
}
