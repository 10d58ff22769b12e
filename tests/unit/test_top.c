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

int main(void)
{
    T_RUN(test_flat_cum);
    T_RUN(test_nodefraction_text);
    T_RUN(test_negative_and_empty);
    return t_done();
}
