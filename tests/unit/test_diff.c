/* test_diff.c - per-function and per-stack comparisons with known answers. Also a helper
 * for tests/compat/flame_json.sh:
 *   test_diff --stacks BASE FILE [-n]        sc_diff_stacks of the default sample types
 *   test_diff --table BASE FILE [-n] [json]  sc_diff_write of sc_diff_compute */
#include "t.h"

#include "formats/folded.h"
#include "formats/input.h"
#include "query/functions.h"
#include "model/error.h"
#include "query/diff.h"

static struct sc_profile *folded(const char *text)
{
    struct sc_profile *p = sc_profile_new();
    char err[SC_ERR_LEN];
    if (sc_folded_decode(text, strlen(text), &sc_limits_cli, p, err)) {
        fprintf(stderr, "folded: %s\n", err);
        sc_profile_free(p);
        return NULL;
    }
    return p;
}

static const char *table(const char *base, const char *cur, int normalize, enum sc_diff_format f,
                         uint32_t limit)
{
    static struct sc_buf out = SC_BUF_INIT;
    static char err[SC_ERR_LEN];
    struct sc_profile *b = folded(base), *p = folded(cur);
    struct sc_diff d;
    out.len = 0;
    sc_buf_putc(&out, 0);
    out.len = 0;
    int rc = sc_diff_compute(b, 0, p, 0, normalize, &d, err);
    if (rc == 0)
        sc_diff_write(&d, f, limit, &out);
    sc_diff_release(&d);
    sc_profile_free(b);
    sc_profile_free(p);
    return rc ? err : out.data;
}

static const char *stacks(const char *base, const char *cur, int normalize)
{
    static struct sc_buf out = SC_BUF_INIT;
    static char err[SC_ERR_LEN];
    struct sc_profile *b = folded(base), *p = folded(cur);
    out.len = 0;
    sc_buf_putc(&out, 0);
    out.len = 0;
    int rc = sc_diff_stacks(b, 0, p, 0, normalize, &out, err);
    sc_profile_free(b);
    sc_profile_free(p);
    return rc ? err : out.data;
}

static const char *base1 = "main;a 10\nmain;b 10\nmain;a;x 5\n";
static const char *new1 = "main;a 30\nmain;c 10\nmain;a;x 5\n";

static void test_table(void)
{
    T_EQ_STR(table(base1, new1, 0, SC_DIFF_TSV, 0), "base_flat\tflat\tbase_cum\tcum\tfunction\n"
                                                    "10\t30\t15\t35\ta\n"
                                                    "10\t0\t10\t0\tb\n"
                                                    "0\t10\t0\t10\tc\n"
                                                    "0\t0\t25\t45\tmain\n"
                                                    "5\t5\t5\t5\tx\n");
    T_EQ_STR(table(base1, new1, 0, SC_DIFF_TSV, 2), "base_flat\tflat\tbase_cum\tcum\tfunction\n"
                                                    "10\t30\t15\t35\ta\n"
                                                    "10\t0\t10\t0\tb\n");
    /* normalised: base values times 45/25, rounded */
    T_EQ_STR(table(base1, new1, 1, SC_DIFF_TSV, 0), "base_flat\tflat\tbase_cum\tcum\tfunction\n"
                                                    "18\t0\t18\t0\tb\n"
                                                    "18\t30\t27\t35\ta\n"
                                                    "0\t10\t0\t10\tc\n"
                                                    "9\t5\t9\t5\tx\n"
                                                    "0\t0\t45\t45\tmain\n");
    T_EQ_STR(table(base1, new1, 0, SC_DIFF_JSON, 2),
             "{\"sample_type\":\"samples\",\"unit\":\"count\",\"base_total\":25,\"total\":45,"
             "\"normalized\":false,\"base_scale\":1,\"rows\":["
             "{\"function\":\"a\",\"base_flat\":10,\"flat\":30,\"base_cum\":15,\"cum\":35},"
             "{\"function\":\"b\",\"base_flat\":10,\"flat\":0,\"base_cum\":10,\"cum\":0}]}\n");
    T_EQ_STR(table(base1, new1, 1, SC_DIFF_JSON, 1),
             "{\"sample_type\":\"samples\",\"unit\":\"count\",\"base_total\":45,\"total\":45,"
             "\"normalized\":true,\"base_scale\":1.8,\"rows\":["
             "{\"function\":\"b\",\"base_flat\":18,\"flat\":0,\"base_cum\":18,\"cum\":0}]}\n");
    /* rounding: to nearest, halves away from zero */
    T_EQ_STR(table("a 1\nb 3\n", "a 1\n", 1, SC_DIFF_TSV, 0),
             "base_flat\tflat\tbase_cum\tcum\tfunction\n0\t1\t0\t1\ta\n1\t0\t1\t0\tb\n");
    T_EQ_STR(table("a 1\nb 1\n", "a 1\n", 1, SC_DIFF_TSV, 0),
             "base_flat\tflat\tbase_cum\tcum\tfunction\n1\t0\t1\t0\tb\n1\t1\t1\t1\ta\n");
    /* nothing to scale against */
    T_EQ_STR(table("", "a 2\n", 1, SC_DIFF_JSON, 0),
             "{\"sample_type\":\"samples\",\"unit\":\"count\",\"base_total\":0,\"total\":2,"
             "\"normalized\":false,\"base_scale\":1,\"rows\":["
             "{\"function\":\"a\",\"base_flat\":0,\"flat\":2,\"base_cum\":0,\"cum\":2}]}\n");
    /* names with tabs and quotes */
    T_EQ_STR(table("x\ty 1\n", "x\ty 2\n", 0, SC_DIFF_TSV, 0),
             "base_flat\tflat\tbase_cum\tcum\tfunction\n1\t2\t1\t2\tx y\n");
    T_EQ_STR(table("q\"\\ 1\n", "", 0, SC_DIFF_JSON, 0),
             "{\"sample_type\":\"samples\",\"unit\":\"count\",\"base_total\":1,\"total\":0,"
             "\"normalized\":false,\"base_scale\":1,\"rows\":["
             "{\"function\":\"q\\\"\\\\\",\"base_flat\":1,\"flat\":0,\"base_cum\":1,"
             "\"cum\":0}]}\n");
    /* negative deltas sort by magnitude, ties by name */
    T_EQ_STR(table("a 5\nb 1\nc 9\n", "a 1\nb 5\nc 9\n", 0, SC_DIFF_TSV, 0),
             "base_flat\tflat\tbase_cum\tcum\tfunction\n"
             "5\t1\t5\t1\ta\n1\t5\t1\t5\tb\n9\t9\t9\t9\tc\n");
}

static void test_stacks(void)
{
    T_EQ_STR(stacks(base1, new1, 0), "main;a 10 30\nmain;a;x 5 5\nmain;b 10 0\nmain;c 0 10\n");
    T_EQ_STR(stacks(base1, new1, 1), "main;a 18 30\nmain;a;x 9 5\nmain;b 18 0\nmain;c 0 10\n");
    /* sorted bytewise, identical stacks summed, zero stacks left out */
    T_EQ_STR(stacks("b;z 1\na 2\nb 3\na 1\n", "B 1\na;b 4\n", 0),
             "B 0 1\na 3 0\na;b 0 4\nb 3 0\nb;z 1 0\n");
    T_EQ_STR(stacks("", "", 0), "");
    /* samples without frames: the empty stack, first */
    struct sc_profile *b = folded("a 1\n"), *p = folded("a 2\n");
    int64_t v = 3;
    sc_profile_add_sample(p, NULL, 0, &v, 0);
    struct sc_buf out = SC_BUF_INIT;
    char err[SC_ERR_LEN];
    T_EQ_INT(sc_diff_stacks(b, 0, p, 0, 0, &out, err), 0);
    T_EQ_STR(out.data, " 0 3\na 1 2\n");
    struct sc_buf f = SC_BUF_INIT;
    T_EQ_INT(sc_folded_write(p, 0, &f, err), 0);
    T_EQ_STR(f.data, " 3\na 2\n"); /* as the folded writer has it */
    sc_buf_release(&f);
    sc_buf_release(&out);
    sc_profile_free(b);
    sc_profile_free(p);
}

static void test_errors(void)
{
    struct sc_profile *a = folded("x 1\n"), *b = sc_profile_new();
    sc_profile_add_sample_type(b, "alloc_space", "bytes");
    char err[SC_ERR_LEN];
    struct sc_diff d;
    T_EQ_INT(sc_diff_compute(a, 0, b, 0, 0, &d, err), SC_EINVAL);
    T_EQ_STR(err, "cannot compare values in 'count' with values in 'bytes'");
    sc_diff_release(&d);
    T_EQ_INT(sc_diff_compute(a, 1, a, 0, 0, &d, err), SC_EINVAL);
    T_EQ_STR(err, "sample index out of range");
    sc_diff_release(&d);
    struct sc_buf out = SC_BUF_INIT;
    T_EQ_INT(sc_diff_stacks(a, 0, b, 0, 0, &out, err), SC_EINVAL);
    T_EQ_INT(out.len, 0);
    sc_buf_release(&out);
    sc_profile_free(a);
    sc_profile_free(b);
}

/* Real data: a profile against itself changes nothing, and each side equals scorch top. */
static void test_real(void)
{
    const char *pa = t_testdata("pprof/cpu-sort.pb.gz");
    char ppath[4096];
    snprintf(ppath, sizeof ppath, "%s", pa ? pa : "");
    const char *pb = t_testdata("pprof/cpu-strconv.pb.gz");
    if (!pa || !pb) {
        fprintf(stderr, "(skipping real-data checks: no test data)\n");
        return;
    }
    char err[SC_ERR_LEN];
    struct sc_profile *a = NULL, *b = NULL;
    T_EQ_INT(sc_load(ppath, NULL, &a, err), 0);
    T_EQ_INT(sc_load(pb, NULL, &b, err), 0);
    if (!a || !b)
        return;
    int va = sc_profile_sample_index(a, NULL, err), vb = sc_profile_sample_index(b, NULL, err);
    struct sc_diff d;
    T_EQ_INT(sc_diff_compute(a, va, a, va, 1, &d, err), 0);
    int same = 1;
    for (uint32_t i = 0; i < d.n; i++)
        same &= d.rows[i].base_flat == d.rows[i].flat && d.rows[i].base_cum == d.rows[i].cum;
    T_CHECK(same);
    T_CHECK(d.base_scale == 1.0);
    sc_diff_release(&d);

    T_EQ_INT(sc_diff_compute(a, va, b, vb, 0, &d, err), 0);
    struct sc_top ta, tb;
    T_EQ_INT(sc_top_compute(a, va, &ta, err), 0);
    T_EQ_INT(sc_top_compute(b, vb, &tb, err), 0);
    T_EQ_INT(d.base_total, ta.total);
    T_EQ_INT(d.total, tb.total);
    /* every top row appears with its values; nothing else */
    uint32_t found = 0, ok = 1;
    for (int side = 0; side < 2; side++) {
        const struct sc_top *t = side ? &tb : &ta;
        for (uint32_t i = 0; i < t->n; i++) {
            const struct sc_diff_row *r = NULL;
            for (uint32_t j = 0; j < d.n && !r; j++)
                if (d.rows[j].name.len == t->rows[i].name.len &&
                    !memcmp(d.rows[j].name.ptr, t->rows[i].name.ptr, t->rows[i].name.len))
                    r = &d.rows[j];
            if (!r) {
                ok = 0;
                continue;
            }
            found++;
            ok &= side ? r->flat == t->rows[i].flat && r->cum == t->rows[i].cum
                       : r->base_flat == t->rows[i].flat && r->base_cum == t->rows[i].cum;
        }
    }
    T_CHECK(ok);
    T_CHECK(found >= d.n);
    for (uint32_t i = 1; i < d.n; i++) {
        int64_t x = d.rows[i - 1].flat - d.rows[i - 1].base_flat;
        int64_t y = d.rows[i].flat - d.rows[i].base_flat;
        T_CHECK((x < 0 ? -x : x) >= (y < 0 ? -y : y));
    }
    sc_top_release(&ta);
    sc_top_release(&tb);
    sc_diff_release(&d);
    sc_profile_free(a);
    sc_profile_free(b);
}

static int tool(int argc, char **argv)
{
    if (argc < 4)
        return 2;
    char err[SC_ERR_LEN];
    struct sc_profile *b = NULL, *p = NULL;
    if (sc_load(argv[2], NULL, &b, err) || sc_load(argv[3], NULL, &p, err)) {
        fprintf(stderr, "%s\n", err);
        sc_profile_free(b);
        return 1;
    }
    int normalize = 0, json = 0;
    for (int i = 4; i < argc; i++) {
        normalize |= !strcmp(argv[i], "-n");
        json |= !strcmp(argv[i], "json");
    }
    int bvi = sc_profile_sample_index(b, NULL, err), vi = sc_profile_sample_index(p, NULL, err);
    struct sc_buf out = SC_BUF_INIT;
    int rc = bvi < 0 || vi < 0 ? SC_EINVAL : 0;
    if (rc == 0 && !strcmp(argv[1], "--stacks")) {
        rc = sc_diff_stacks(b, bvi, p, vi, normalize, &out, err);
    } else if (rc == 0) {
        struct sc_diff d;
        rc = sc_diff_compute(b, bvi, p, vi, normalize, &d, err);
        if (rc == 0)
            sc_diff_write(&d, json ? SC_DIFF_JSON : SC_DIFF_TSV, 0, &out);
        sc_diff_release(&d);
    }
    if (rc == 0)
        fwrite(out.data, 1, out.len, stdout);
    else
        fprintf(stderr, "%s\n", err);
    sc_buf_release(&out);
    sc_profile_free(b);
    sc_profile_free(p);
    return rc ? 1 : 0;
}

int main(int argc, char **argv)
{
    /* --json, --diff, --stacks: the shell tests' helper modes; other arguments name cases */
    if (argc > 1 && !strncmp(argv[1], "--", 2))
        return tool(argc, argv);
    T_RUN(test_table);
    T_RUN(test_stacks);
    T_RUN(test_errors);
    T_RUN(test_real);
    return t_done();
}
