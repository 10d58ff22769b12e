/* test_speedscope.c - the speedscope writer (frames, inline order, weights, units, escaping)
 * and reader (scorch's own files back, other exporters' sampled and evented profiles). */
#include "formats/folded.h"
#include "formats/speedscope.h"
#include "model/error.h"
#include "t.h"
#include "t_profile.h"

/* ---- building profiles by hand (the builders only make one-line locations) ---- */

static uint32_t str(struct sc_profile *p, const char *s)
{
    return (uint32_t)sc_profile_intern(p, s, strlen(s));
}

static uint32_t fn(struct sc_profile *p, const char *name, const char *file, int64_t start_line)
{
    int64_t f = sc_profile_add_function(p, str(p, name), str(p, file));
    p->functions[f].start_line = start_line;
    return (uint32_t)f;
}

/* A location whose lines call fns[0] (innermost, inlined) ... fns[n-1] (outermost);
 * n == 0 makes an address-only location in mapping (1-based, 0 = none). */
static uint32_t loc(struct sc_profile *p, const uint32_t *fns, uint32_t n, uint64_t addr,
                    uint32_t mapping)
{
    p->locations = realloc(p->locations, (p->nlocations + 1) * sizeof *p->locations);
    p->lines = realloc(p->lines, (p->nlines + n + 1) * sizeof *p->lines);
    p->locations_cap = p->nlocations + 1;
    p->lines_cap = p->nlines + n + 1;
    struct sc_location *l = &p->locations[p->nlocations];
    memset(l, 0, sizeof *l);
    l->id = p->nlocations + 1;
    l->address = addr;
    l->mapping = mapping;
    l->line_start = p->nlines;
    l->nlines = n;
    for (uint32_t i = 0; i < n; i++) {
        memset(&p->lines[p->nlines], 0, sizeof p->lines[0]);
        p->lines[p->nlines++].function = fns[i] + 1;
    }
    return p->nlocations++;
}

static void sample(struct sc_profile *p, const uint32_t *locs, uint32_t n, int64_t v0, int64_t v1,
                   int64_t t)
{
    int64_t v[2] = {v0, v1};
    T_CHECK(sc_profile_add_sample(p, locs, n, v, t) >= 0);
}

/* Writes p with type vi; the JSON (caller frees) or NULL on error. */
static char *render(const struct sc_profile *p, int vi, const char *name)
{
    char err[SC_ERR_LEN] = "";
    struct sc_buf b = SC_BUF_INIT;
    int rc = sc_speedscope_write(p, vi, name, &b, err);
    if (rc) {
        fprintf(stderr, "sc_speedscope_write: %s\n", err);
        sc_buf_release(&b);
        return NULL;
    }
    return sc_buf_detach(&b, NULL);
}

/* The JSON between `key` and the end of its array, e.g. "\"weights\":[" -> "1,2". */
static const char *array_after(const char *json, const char *key, int nth, char *out, size_t cap)
{
    const char *s = json;
    for (int i = 0; i <= nth && s; i++) {
        s = strstr(s, key);
        if (s && i < nth)
            s += strlen(key);
    }
    if (!s)
        return NULL;
    s += strlen(key);
    int depth = 1;
    size_t n = 0;
    while (*s && n + 1 < cap) {
        if (*s == '[')
            depth++;
        if (*s == ']' && --depth == 0)
            break;
        out[n++] = *s++;
    }
    out[n] = 0;
    return out;
}

/* A two-type profile: main -> work (which inlines helper) -> leaf, plus a second stack. */
static struct sc_profile *basic(void)
{
    struct sc_profile *p = sc_profile_new();
    sc_profile_add_sample_type(p, "alloc_objects", "count");
    sc_profile_add_sample_type(p, "alloc_space", "bytes");
    uint32_t fmain = fn(p, "main", "main.go", 10);
    uint32_t fwork = fn(p, "work", "work.go", 20);
    uint32_t fhelp = fn(p, "helper", "work.go", 30);
    uint32_t fleaf = fn(p, "leaf", "", 0);
    uint32_t lmain = loc(p, &fmain, 1, 0x100, 0);
    uint32_t inl[2] = {fhelp, fwork}; /* helper inlined into work */
    uint32_t lwork = loc(p, inl, 2, 0x200, 0);
    uint32_t lleaf = loc(p, &fleaf, 1, 0x300, 0);
    uint32_t s1[3] = {lleaf, lwork, lmain}; /* leaf first */
    uint32_t s2[1] = {lmain};
    sample(p, s1, 3, 2, 200, 0);
    sample(p, s2, 1, 0, 50, 0);
    return p;
}

static void test_full_output(void)
{
    struct sc_profile *p = basic();
    char *j = render(p, 1, "mem");
    T_EQ_STR(j, "{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\",\n"
                "\"exporter\":\"scorch\",\n"
                "\"name\":\"mem\",\n"
                "\"activeProfileIndex\":1,\n"
                "\"shared\":{\"frames\":[\n"
                "{\"name\":\"main\",\"file\":\"main.go\",\"line\":10},\n"
                "{\"name\":\"work\",\"file\":\"work.go\",\"line\":20},\n"
                "{\"name\":\"helper\",\"file\":\"work.go\",\"line\":30},\n"
                "{\"name\":\"leaf\"}]},\n"
                "\"profiles\":[\n"
                "{\"type\":\"sampled\",\"name\":\"mem (alloc_objects)\",\"unit\":\"none\","
                "\"startValue\":0,\"endValue\":2,\n"
                "\"samples\":[[0,1,2,3]],\n"
                "\"weights\":[2]},\n"
                "{\"type\":\"sampled\",\"name\":\"mem (alloc_space)\",\"unit\":\"bytes\","
                "\"startValue\":0,\"endValue\":250,\n"
                "\"samples\":[[0,1,2,3],[0]],\n"
                "\"weights\":[200,50]}]}\n");
    free(j);
    /* without a name: no top-level name, profiles named by type */
    j = render(p, 0, NULL);
    T_CHECK(j && !strstr(j, "\"name\":\"mem"));
    T_CHECK(j && strstr(j, "\"activeProfileIndex\":0,"));
    T_CHECK(j && strstr(j, "\"name\":\"alloc_objects\",\"unit\":\"none\""));
    free(j);
    sc_profile_free(p);
}

static void test_frame_dedup(void)
{
    struct sc_profile *p = sc_profile_new();
    sc_profile_add_sample_type(p, "samples", "count");
    /* two functions with the same name and file (e.g. from different mappings) are one
     * frame, and the first one's start line wins; another file is another frame */
    uint32_t a1 = fn(p, "f", "a.c", 5);
    uint32_t a2 = fn(p, "f", "a.c", 7);
    uint32_t b = fn(p, "f", "b.c", 9);
    /* a name with an embedded NUL is not the same as its prefix */
    int64_t nul = sc_profile_intern(p, "f\0x", 3);
    uint32_t c = (uint32_t)sc_profile_add_function(p, (uint32_t)nul, str(p, "a.c"));
    uint32_t l1 = loc(p, &a1, 1, 0, 0), l2 = loc(p, &a2, 1, 0, 0), l3 = loc(p, &b, 1, 0, 0);
    uint32_t l4 = loc(p, &c, 1, 0, 0);
    uint32_t s[4] = {l4, l3, l2, l1};
    sample(p, s, 4, 1, 0, 0);
    char *j = render(p, 0, "x");
    char arr[512];
    T_EQ_STR(array_after(j, "\"frames\":[", 0, arr, sizeof arr),
             "\n{\"name\":\"f\",\"file\":\"a.c\",\"line\":5},\n"
             "{\"name\":\"f\",\"file\":\"b.c\",\"line\":9},\n"
             "{\"name\":\"f\\u0000x\",\"file\":\"a.c\"}");
    T_EQ_STR(array_after(j, "\"samples\":[", 0, arr, sizeof arr), "[0,0,1,2]");
    free(j);
    sc_profile_free(p);
}

static void test_inline_and_addresses(void)
{
    struct sc_profile *p = sc_profile_new();
    sc_profile_add_sample_type(p, "samples", "count");
    sc_profile_add_sample_type(p, "cpu", "nanoseconds");
    p->mappings = calloc(1, sizeof *p->mappings);
    p->mappings[0].id = 1;
    p->mappings[0].filename = str(p, "/usr/lib/libc.so.6");
    p->nmappings = p->mappings_cap = 1;
    uint32_t f[3] = {fn(p, "inner", "x.go", 0), fn(p, "middle", "x.go", 0),
                     fn(p, "outer", "x.go", 0)};
    uint32_t l_inl = loc(p, f, 3, 0x10, 0);           /* inner inlined in middle in outer */
    uint32_t l_addr = loc(p, NULL, 0, 0xdeadbeef, 1); /* no symbols, in libc */
    uint32_t l_addr2 = loc(p, NULL, 0, 0xdeadbeef, 0);
    uint32_t s[3] = {l_addr, l_inl, l_addr2}; /* leaf first */
    sample(p, s, 3, 1, 10, 0);
    char *j = render(p, 1, NULL);
    char arr[512];
    T_EQ_STR(array_after(j, "\"frames\":[", 0, arr, sizeof arr),
             "\n{\"name\":\"0xdeadbeef\"},\n"
             "{\"name\":\"outer\",\"file\":\"x.go\"},\n"
             "{\"name\":\"middle\",\"file\":\"x.go\"},\n"
             "{\"name\":\"inner\",\"file\":\"x.go\"},\n"
             "{\"name\":\"0xdeadbeef\",\"file\":\"/usr/lib/libc.so.6\"}");
    /* root first: the outermost caller, then the inlined chain outer -> inner, then the leaf */
    T_EQ_STR(array_after(j, "\"samples\":[", 0, arr, sizeof arr), "[0,1,2,3,4]");
    T_CHECK(strstr(j, "\"unit\":\"nanoseconds\""));
    free(j);
    sc_profile_free(p);
}

static void test_weights_and_zeros(void)
{
    struct sc_profile *p = sc_profile_new();
    sc_profile_add_sample_type(p, "a", "count");
    sc_profile_add_sample_type(p, "b", "count");
    uint32_t f = fn(p, "f", "", 0), g = fn(p, "g", "", 0);
    uint32_t lf = loc(p, &f, 1, 0, 0), lg = loc(p, &g, 1, 0, 0);
    sample(p, &lf, 1, 0, 0, 0); /* zero in both: dropped everywhere, adds no frame */
    sample(p, &lg, 1, 3, 0, 0);
    sample(p, &lf, 1, -2, 7, 0);
    sample(p, NULL, 0, 5, 1, 0); /* an empty stack is a sample too */
    char *j = render(p, 0, NULL);
    char arr[256];
    T_EQ_STR(array_after(j, "\"samples\":[", 0, arr, sizeof arr), "[0],[1],[]");
    T_EQ_STR(array_after(j, "\"weights\":[", 0, arr, sizeof arr), "3,-2,5");
    T_EQ_STR(array_after(j, "\"samples\":[", 1, arr, sizeof arr), "[1],[]");
    T_EQ_STR(array_after(j, "\"weights\":[", 1, arr, sizeof arr), "7,1");
    T_CHECK(strstr(j, "\"endValue\":6,") != NULL);
    T_CHECK(strstr(j, "\"endValue\":8,") != NULL);
    /* g is met first (f's first sample was dropped) */
    T_EQ_STR(array_after(j, "\"frames\":[", 0, arr, sizeof arr),
             "\n{\"name\":\"g\"},\n{\"name\":\"f\"}");
    free(j);
    /* sums saturate instead of wrapping to a negative total (INT64_MAX pushed
     * twice must not render as -2) */
    struct sc_profile *q = sc_profile_new();
    sc_profile_add_sample_type(q, "a", "count");
    int64_t big = INT64_MAX;
    sc_profile_add_sample(q, NULL, 0, &big, 0);
    sc_profile_add_sample(q, NULL, 0, &big, 0);
    j = render(q, 0, NULL);
    T_CHECK(j && strstr(j, "\"endValue\":9223372036854775807,"));
    T_CHECK(j && strstr(j, "\"weights\":[9223372036854775807,9223372036854775807]"));
    free(j);
    sc_profile_free(q);
    sc_profile_free(p);
}

static void test_time_order(void)
{
    struct sc_profile *p = sc_profile_new();
    sc_profile_add_sample_type(p, "samples", "count");
    uint32_t f[4];
    uint32_t l[4];
    const char *names[4] = {"a", "b", "c", "d"};
    for (int i = 0; i < 4; i++) {
        f[i] = fn(p, names[i], "", 0);
        l[i] = loc(p, &f[i], 1, 0, 0);
    }
    sample(p, &l[0], 1, 1, 0, 300);
    sample(p, &l[1], 1, 2, 0, 100);
    sample(p, &l[2], 1, 3, 0, 0);   /* untimed: first */
    sample(p, &l[3], 1, 4, 0, 100); /* same time as b: keeps its place after b */
    char *j = render(p, 0, NULL);
    char arr[256];
    T_EQ_STR(array_after(j, "\"weights\":[", 0, arr, sizeof arr), "3,2,4,1");
    T_EQ_STR(array_after(j, "\"frames\":[", 0, arr, sizeof arr),
             "\n{\"name\":\"c\"},\n{\"name\":\"b\"},\n{\"name\":\"d\"},\n{\"name\":\"a\"}");
    T_EQ_STR(array_after(j, "\"samples\":[", 0, arr, sizeof arr), "[0],[1],[2],[3]");
    free(j);
    sc_profile_free(p);
}

static void test_units(void)
{
    static const char *cases[][2] = {
        {"nanoseconds", "nanoseconds"},
        {"microseconds", "microseconds"},
        {"milliseconds", "milliseconds"},
        {"seconds", "seconds"},
        {"bytes", "bytes"},
        {"ns", "nanoseconds"},
        {"ms", "milliseconds"},
        {"count", "none"},
        {"", "none"},
        {"Bytes", "none"},
        {"objects", "none"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct sc_profile *p = sc_profile_new();
        sc_profile_add_sample_type(p, "v", cases[i][0]);
        char want[64];
        snprintf(want, sizeof want, "\"unit\":\"%s\"", cases[i][1]);
        char *j = render(p, 0, NULL);
        T_CHECK(j && strstr(j, want));
        /* an empty profile is still a complete file */
        T_CHECK(j && strstr(j, "\"samples\":[],\n\"weights\":[]}]}"));
        T_CHECK(j && strstr(j, "\"frames\":[]}"));
        free(j);
        sc_profile_free(p);
    }
}

static void test_escaping(void)
{
    struct sc_profile *p = sc_profile_new();
    sc_profile_add_sample_type(p, "t\"y", "count");
    uint32_t f = fn(p, "a\"b\\c\nd\te\x01\x1f/\x7f", "C:\\x\r", 0);
    uint32_t l = loc(p, &f, 1, 0, 0);
    sample(p, &l, 1, 1, 0, 0);
    char *j = render(p, 0, "n\"\\");
    T_CHECK(j && strstr(j, "{\"name\":\"a\\\"b\\\\c\\nd\\te\\u0001\\u001f/\x7f\","
                           "\"file\":\"C:\\\\x\\r\"}"));
    T_CHECK(j && strstr(j, "\"name\":\"n\\\"\\\\\",\n"));
    T_CHECK(j && strstr(j, "\"name\":\"n\\\"\\\\ (t\\\"y)\""));
    free(j);
    sc_profile_free(p);
}

static void test_invalid_utf8(void)
{
    static const char *cases[][2] = {
        /* valid UTF-8 passes through byte for byte; any other byte becomes U+FFFD, as an
         * escape (the one JSON escaper every answer goes through) */
        {"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x94\xa5 \xef\xbf\xbf", NULL},
        {"\xff", "\\ufffd"},
        {"a\x80z", "a\\ufffdz"},
        {"\xc3", "\\ufffd"},                                  /* truncated at the end */
        {"\xe2\x82z", "\\ufffd\\ufffdz"},                     /* truncated mid-string */
        {"\xc0\xaf", "\\ufffd\\ufffd"},                       /* overlong '/' */
        {"\xe0\x80\xaf", "\\ufffd\\ufffd\\ufffd"},            /* overlong, 3 bytes */
        {"\xed\xa0\x80", "\\ufffd\\ufffd\\ufffd"},            /* UTF-16 surrogate */
        {"\xf4\x90\x80\x80", "\\ufffd\\ufffd\\ufffd\\ufffd"}, /* > U+10FFFF */
        {"\xf5\x80", "\\ufffd\\ufffd"},
        {"\xfe\xff\"", "\\ufffd\\ufffd\\\""},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct sc_profile *p = sc_profile_new();
        sc_profile_add_sample_type(p, "samples", "count");
        uint32_t f = fn(p, cases[i][0], cases[i][0], 0);
        uint32_t l = loc(p, &f, 1, 0, 0);
        sample(p, &l, 1, 1, 0, 0);
        char *j = render(p, 0, cases[i][0]);
        const char *want = cases[i][1] ? cases[i][1] : cases[i][0];
        char exp[256];
        snprintf(exp, sizeof exp, "{\"name\":\"%s\",\"file\":\"%s\"}", want, want);
        T_CHECK(j && strstr(j, exp));
        snprintf(exp, sizeof exp, "\"name\":\"%s\",\n", want);
        T_CHECK(j && strstr(j, exp));
        if (!(j && strstr(j, exp)))
            fprintf(stderr, "case %zu:\n%s\n", i, j ? j : "(null)");
        free(j);
        sc_profile_free(p);
    }
}

static void test_errors(void)
{
    struct sc_profile *p = basic();
    char err[SC_ERR_LEN] = "";
    struct sc_buf b = SC_BUF_INIT;
    T_EQ_INT(sc_speedscope_write(p, 2, NULL, &b, err), SC_EINVAL);
    T_EQ_STR(err, "sample index 2 out of range");
    T_EQ_INT(sc_speedscope_write(p, -1, NULL, &b, err), SC_EINVAL);
    T_EQ_INT(b.len, 0);
    sc_buf_release(&b);
    sc_profile_free(p);
}

/* ---- reading ---- */

static struct sc_profile *read_json(const char *json, int *rc, char *err)
{
    return t_decode_text(sc_speedscope_decode, json, &sc_limits_cli, rc, err);
}

/* scorch's own file reads back to the same types, default and folded stacks (inlined
 * frames expanded as folded expands them) */
static void test_read_own(void)
{
    struct sc_profile *p = basic();
    for (int vi = 0; vi < 2; vi++) {
        for (int named = 0; named < 2; named++) {
            char *j = render(p, vi, named ? "mem" : NULL);
            char err[SC_ERR_LEN] = "";
            int rc;
            struct sc_profile *q = read_json(j ? j : "", &rc, err);
            T_EQ_INT(rc, 0);
            if (q) {
                T_EQ_INT(q->nsample_types, 2);
                struct sc_str t = sc_profile_str(q, q->sample_types[1].type);
                struct sc_str u = sc_profile_str(q, q->sample_types[0].unit);
                T_EQ_MEM(t.ptr, t.len, "alloc_space");
                T_EQ_MEM(u.ptr, u.len, "count");
                T_EQ_INT(sc_profile_sample_index(q, NULL, err), vi);
                for (int k = 0; k < 2; k++) {
                    char *want = strdup(t_folded(p, k));
                    T_EQ_STR(t_folded(q, k), want);
                    free(want);
                }
                sc_profile_free(q);
            }
            free(j);
        }
    }
    sc_profile_free(p);
}

/* another exporter's file: one type per unit, time scaled to ns, threads added up;
 * evented profiles' open stretches as samples */
static void test_read_other(void)
{
    static const char json[] =
        "{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\",\"exporter\":"
        "\"py-spy@0.3\",\"activeProfileIndex\":2,\"shared\":{\"frames\":[{\"name\":\"main\","
        "\"file\":\"a.py\",\"line\":3},{\"name\":\"work\",\"file\":\"a.py\",\"line\":9.0,"
        "\"col\":2},{\"name\":\"idle\"}]},\"profiles\":["
        "{\"type\":\"sampled\",\"name\":\"t1\",\"unit\":\"milliseconds\",\"startValue\":0,"
        "\"endValue\":3.5,\"samples\":[[0,1],[0],[0,1,2]],\"weights\":[1.5,1,1]},"
        "{\"type\":\"evented\",\"name\":\"t2\",\"unit\":\"seconds\",\"startValue\":0,"
        "\"endValue\":10,\"events\":[{\"type\":\"O\",\"frame\":0,\"at\":0},{\"type\":"
        "\"O\",\"frame\":1,\"at\":0.002},{\"type\":\"C\",\"frame\":1,\"at\":0.0055},"
        "{\"type\":\"C\",\"frame\":0,\"at\":0.01}]},"
        "{\"type\":\"sampled\",\"name\":\"t3\",\"unit\":\"none\",\"startValue\":0,"
        "\"endValue\":2,\"samples\":[[2],[0,2]],\"weights\":[1,1]}]}";
    char err[SC_ERR_LEN] = "";
    int rc;
    struct sc_profile *p = read_json(json, &rc, err);
    T_EQ_INT(rc, 0);
    if (!p) {
        fprintf(stderr, "%s\n", err);
        return;
    }
    T_EQ_INT(p->nsample_types, 2);
    struct sc_str t0 = sc_profile_str(p, p->sample_types[0].type);
    struct sc_str u0 = sc_profile_str(p, p->sample_types[0].unit);
    T_EQ_MEM(t0.ptr, t0.len, "time");
    T_EQ_MEM(u0.ptr, u0.len, "nanoseconds");
    T_EQ_INT(sc_profile_sample_index(p, NULL, err), 1); /* activeProfileIndex 2: "none" */
    T_EQ_STR(t_folded(p, 0), "main 7500000\nmain;work 5000000\nmain;work;idle 1000000\n");
    T_EQ_STR(t_folded(p, 1), "idle 1\nmain;idle 1\n");
    sc_profile_free(p);
}

static void test_read_errors(void)
{
    static const struct {
        const char *json, *msg;
    } cases[] = {
        {"{\"profiles\":[", "bad JSON"},
        {"{\"shared\":{\"frames\":[]}}", "without profiles"},
        {"{\"profiles\":[{\"type\":\"sampled\",\"samples\":[[0]],\"weights\":[1]}]}",
         "frame 0 is not in shared.frames"},
        {"{\"profiles\":[{\"type\":\"sampled\",\"samples\":[0],\"weights\":[1]}]}", "bad JSON"},
        {"{\"shared\":{\"frames\":[{\"name\":\"a\"},{\"name\":\"b\"}]},\"profiles\":[{"
         "\"type\":\"evented\",\"events\":[{\"type\":\"O\",\"frame\":0,\"at\":0},{"
         "\"type\":\"O\",\"frame\":1,\"at\":1},{\"type\":\"C\",\"frame\":0,\"at\":2}]}]}",
         "not the innermost open one"},
        {"{\"shared\":{\"frames\":[{\"name\":\"a\"}]},\"profiles\":[{\"type\":\"evented\","
         "\"events\":[{\"type\":\"X\",\"frame\":0,\"at\":0}]}]}",
         "of type 'X'"},
        {"{\"profiles\":[{\"type\":\"flame\"}]}", "(not sampled or evented)"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char err[SC_ERR_LEN] = "";
        int rc;
        struct sc_profile *p = read_json(cases[i].json, &rc, err);
        T_CHECK(p == NULL);
        T_EQ_INT(rc, SC_EFORMAT);
        if (!strstr(err, cases[i].msg)) {
            T_CHECK(!"message");
            fprintf(stderr, "case %zu: '%s' lacks '%s'\n", i, err, cases[i].msg);
        }
    }
}

int main(void)
{
    T_RUN(test_full_output);
    T_RUN(test_frame_dedup);
    T_RUN(test_inline_and_addresses);
    T_RUN(test_weights_and_zeros);
    T_RUN(test_time_order);
    T_RUN(test_units);
    T_RUN(test_escaping);
    T_RUN(test_invalid_utf8);
    T_RUN(test_errors);
    T_RUN(test_read_own);
    T_RUN(test_read_other);
    T_RUN(test_read_errors);
    return t_done();
}
