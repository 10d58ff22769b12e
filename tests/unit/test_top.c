/* test_top.c - flat/cum semantics of `scorch top` on profiles with known answers. */
#include "t.h"

#include "formats/folded.h"
#include "formats/top.h"
#include "model/error.h"

static struct sc_profile *folded(const char *text)
{
    struct sc_profile *p = sc_profile_new();
    char err[SC_ERR_LEN];
    if (sc_folded_decode(text, strlen(text), &sc_limits_cli, p, err)) {
        sc_profile_free(p);
        return NULL;
    }
    return p;
}

static const struct sc_top_row *row(const struct sc_top *t, const char *name)
{
    for (uint32_t i = 0; i < t->n; i++)
        if (t->rows[i].name.len == strlen(name) && !memcmp(t->rows[i].name.ptr, name, strlen(name)))
            return &t->rows[i];
    return NULL;
}

static void test_flat_cum(void)
{
    /* recursion: a appears twice in one stack but its cum counts the sample once */
    struct sc_profile *p = folded("main;a;b;a 10\nmain;a 5\nmain;c 1\n");
    struct sc_top t;
    char err[SC_ERR_LEN];
    T_EQ_INT(sc_top_compute(p, 0, &t, err), 0);
    T_EQ_INT(t.total, 16);
    T_EQ_INT(t.n, 4);
    const struct sc_top_row *a = row(&t, "a"), *m = row(&t, "main"), *b = row(&t, "b");
    T_CHECK(a && m && b);
    if (a && m && b) {
        T_EQ_INT(a->flat, 15);
        T_EQ_INT(a->cum, 15);
        T_EQ_INT(m->flat, 0);
        T_EQ_INT(m->cum, 16);
        T_EQ_INT(b->flat, 0);
        T_EQ_INT(b->cum, 10);
    }
    /* sorted by flat desc then name */
    T_EQ_MEM(t.rows[0].name.ptr, t.rows[0].name.len, "a");
    T_EQ_MEM(t.rows[1].name.ptr, t.rows[1].name.len, "c");
    T_EQ_MEM(t.rows[2].name.ptr, t.rows[2].name.len, "b");
    T_EQ_MEM(t.rows[3].name.ptr, t.rows[3].name.len, "main");

    struct sc_top_opts o = {.format = SC_TOP_TSV};
    struct sc_buf out = SC_BUF_INIT;
    sc_top_write(p, 0, &t, &o, &out);
    T_EQ_STR(out.data, "flat\tcum\tfunction\n15\t15\ta\n1\t1\tc\n0\t10\tb\n0\t16\tmain\n");
    out.len = 0;
    o.nodecount = 1;
    o.format = SC_TOP_JSON;
    sc_top_write(p, 0, &t, &o, &out);
    T_EQ_STR(out.data, "{\"sample_type\":\"samples\",\"unit\":\"count\",\"total\":16,"
                       "\"rows\":[{\"function\":\"a\",\"flat\":15,\"cum\":15}]}\n");
    out.len = 0;
    o.format = SC_TOP_TEXT;
    o.nodecount = 0;
    o.nodefraction = 0.005;
    sc_top_write(p, 0, &t, &o, &out);
    T_CHECK(strstr(out.data, "Showing nodes accounting for 16, 100% of 16 total\n") != NULL);
    T_CHECK(strstr(out.data, "        15 93.75% 93.75%         15 93.75%  a\n") != NULL);
    sc_buf_release(&out);
    sc_top_release(&t);
    sc_profile_free(p);
}

static void test_nodefraction_text(void)
{
    /* 1 of 1000 is under pprof's 0.5% cut: dropped from text, kept in tsv */
    struct sc_profile *p = folded("main;big 999\nmain;tiny 1\n");
    struct sc_top t;
    char err[SC_ERR_LEN];
    T_EQ_INT(sc_top_compute(p, 0, &t, err), 0);
    struct sc_top_opts o = {.format = SC_TOP_TEXT, .nodefraction = 0.005, .edgefraction = 0.001};
    struct sc_buf out = SC_BUF_INIT;
    sc_top_write(p, 0, &t, &o, &out);
    T_CHECK(strstr(out.data, "Dropped 1 node (cum <= 5)\n") != NULL);
    T_CHECK(strstr(out.data, "tiny") == NULL);
    out.len = 0;
    o.format = SC_TOP_TSV;
    sc_top_write(p, 0, &t, &o, &out);
    T_CHECK(strstr(out.data, "1\t1\ttiny\n") != NULL);
    sc_buf_release(&out);
    sc_top_release(&t);
    sc_profile_free(p);
}

static void test_negative_and_empty(void)
{
    /* a differential-style negative value: total is the sum of magnitudes */
    struct sc_profile *p = sc_profile_new();
    sc_profile_add_sample_type(p, "delta", "count");
    int64_t f = sc_profile_add_function(p, (uint32_t)sc_profile_intern(p, "x", 1), 0);
    int64_t l = sc_profile_add_simple_location(p, (uint32_t)f);
    uint32_t loc = (uint32_t)l;
    int64_t v = -4, w = 6;
    sc_profile_add_sample(p, &loc, 1, &v, 0);
    sc_profile_add_sample(p, &loc, 1, &w, 0);
    struct sc_top t;
    char err[SC_ERR_LEN];
    T_EQ_INT(sc_top_compute(p, 0, &t, err), 0);
    T_EQ_INT(t.total, 10);
    T_EQ_INT(t.n, 1);
    T_EQ_INT(t.rows[0].flat, 2);
    sc_top_release(&t);
    sc_profile_free(p);
    /* empty profile: no rows, zero total */
    p = folded("");
    T_EQ_INT(sc_top_compute(p, 0, &t, err), 0);
    T_EQ_INT(t.n, 0);
    T_EQ_INT(t.total, 0);
    sc_top_release(&t);
    T_EQ_INT(sc_top_compute(p, 3, &t, err), SC_EINVAL);
    sc_top_release(&t);
    sc_profile_free(p);
}

/* A function without a name is a row like pprof's: "[binary]" after its mapping's file, or
 * "<unknown>" (its row index, -1 as "no row yet", was taken for SC_ENOMEM). */
static void test_nameless_function(void)
{
    struct sc_profile *p = folded("main;;leaf 5\nmain;x 3\n");
    T_CHECK(p != NULL);
    if (!p)
        return;
    struct sc_top t;
    char err[SC_ERR_LEN] = "";
    T_EQ_INT(sc_top_compute(p, 0, &t, err), 0);
    const struct sc_top_row *u = row(&t, "<unknown>");
    T_CHECK(u && u->flat == 0 && u->cum == 5);
    T_EQ_INT(t.n, 4);
    sc_top_release(&t);
    /* with a mapping whose file is known, the binary's name */
    struct sc_mapping *m = calloc(1, sizeof *m);
    if (m) {
        m->filename = (uint32_t)sc_profile_intern(p, "/usr/bin/prog", 13);
        p->mappings = m;
        p->nmappings = p->mappings_cap = 1;
        for (uint32_t i = 0; i < p->nlocations; i++)
            p->locations[i].mapping = 1;
        T_EQ_INT(sc_top_compute(p, 0, &t, err), 0);
        u = row(&t, "[prog]");
        T_CHECK(u && u->cum == 5);
        sc_top_release(&t);
    }
    sc_profile_free(p);
}

/* pprof leaves the "Type:" line out when the sample type has no name. */
static void test_type_line(void)
{
    struct sc_profile *p = sc_profile_new();
    sc_profile_add_sample_type(p, "", "count");
    uint32_t loc = (uint32_t)sc_profile_add_simple_location(
        p, (uint32_t)sc_profile_add_function(p, (uint32_t)sc_profile_intern(p, "f", 1), 0));
    int64_t v = 3;
    sc_profile_add_sample(p, &loc, 1, &v, 0);
    struct sc_top t;
    char err[SC_ERR_LEN] = "";
    T_EQ_INT(sc_top_compute(p, 0, &t, err), 0);
    struct sc_top_opts o = {.format = SC_TOP_TEXT, .nodefraction = 0.005, .edgefraction = 0.001};
    struct sc_buf out = SC_BUF_INIT;
    sc_top_write(p, 0, &t, &o, &out);
    T_CHECK(out.data &&
            strncmp(out.data, "Showing nodes accounting for 3, 100% of 3 total\n", 48) == 0);
    T_CHECK(out.data && !strstr(out.data, "Type:"));
    sc_buf_release(&out);
    sc_top_release(&t);
    sc_profile_free(p);
}

/* Adds a location whose lines are inner (inlined) then outer, for function indexes. */
static uint32_t inlined_location(struct sc_profile *p, uint32_t inner, uint32_t outer)
{
    /* two one-line locations side by side: their lines are contiguous, so the first one
     * takes both, and the second one stays unused */
    int64_t a = sc_profile_add_simple_location(p, inner);
    sc_profile_add_simple_location(p, outer);
    p->locations[a].nlines = 2;
    return (uint32_t)a;
}

static uint32_t fn(struct sc_profile *p, const char *name)
{
    return (uint32_t)sc_profile_add_function(p, (uint32_t)sc_profile_intern(p, name, strlen(name)),
                                             0);
}

/* pprof drops call edges lighter than edgefraction of the whole graph's flat total (not of
 * the rows left after the node cut) before it labels a function "(inline)". */
static void test_edge_cutoff(void)
{
    struct sc_profile *p = sc_profile_new();
    sc_profile_add_sample_type(p, "samples", "count");
    uint32_t fmain = fn(p, "main"), fbig = fn(p, "big"), ff = fn(p, "f"), fg = fn(p, "g"),
             fh = fn(p, "h");
    uint32_t lmain = (uint32_t)sc_profile_add_simple_location(p, fmain);
    uint32_t lbig = (uint32_t)sc_profile_add_simple_location(p, fbig);
    uint32_t lh = (uint32_t)sc_profile_add_simple_location(p, fh);
    uint32_t lg = (uint32_t)sc_profile_add_simple_location(p, fg);
    uint32_t lgf = inlined_location(p, fg, ff);
    int64_t v = 5000;
    uint32_t s1[] = {lbig, lmain}, s2[] = {lg, lh, lmain}, s3[] = {lgf, lmain};
    sc_profile_add_sample(p, s1, 2, &v, 0);
    v = 100;
    sc_profile_add_sample(p, s2, 3, &v, 0);
    v = 7; /* g inlined into f: an edge of 7, under 0.001 of the 9907 in all */
    sc_profile_add_sample(p, s3, 2, &v, 0);
    /* 600 leaves of 8 each, under the node cut of 0.005 */
    for (int i = 0; i < 600; i++) {
        char name[16];
        snprintf(name, sizeof name, "t%d", i);
        uint32_t l = (uint32_t)sc_profile_add_simple_location(p, fn(p, name));
        uint32_t s[] = {l, lmain};
        v = 8;
        sc_profile_add_sample(p, s, 2, &v, 0);
    }
    struct sc_top t;
    char err[SC_ERR_LEN] = "";
    T_EQ_INT(sc_top_compute(p, 0, &t, err), 0);
    T_EQ_INT(t.total, 9907);
    struct sc_top_opts o = {.format = SC_TOP_TEXT, .nodefraction = 0.005, .edgefraction = 0.001};
    struct sc_buf out = SC_BUF_INIT;
    sc_top_write(p, 0, &t, &o, &out);
    T_CHECK(out.data && strstr(out.data, "%  g\n") != NULL);
    T_CHECK(out.data && !strstr(out.data, "inline"));
    /* without the node cut the edge is the same weight of the same total: still dropped */
    out.len = 0;
    o.nodefraction = 0;
    sc_top_write(p, 0, &t, &o, &out);
    T_CHECK(out.data && strstr(out.data, "%  g\n") != NULL);
    /* and with no edge cut, g is inlined from f (as main's caller of it) and called by h */
    out.len = 0;
    o.edgefraction = 0;
    sc_top_write(p, 0, &t, &o, &out);
    T_CHECK(out.data && strstr(out.data, "%  g (partial-inline)\n") != NULL);
    sc_buf_release(&out);
    sc_top_release(&t);
    sc_profile_free(p);
}

int main(void)
{
    T_RUN(test_flat_cum);
    T_RUN(test_nodefraction_text);
    T_RUN(test_negative_and_empty);
    T_RUN(test_nameless_function);
    T_RUN(test_type_line);
    T_RUN(test_edge_cutoff);
    return t_done();
}
