/* test_callgraph.c - the call graph: short names, colours, pprof's cuts, DOT and SVG. */
#include "t.h"

#include "formats/input.h"
#include "model/error.h"
#include "model/profile.h"
#include "query/callgraph.h"

#include <pthread.h>
#include <stdint.h>

#include "gv_lsan.h"

/* ---- a small profile builder ---------------------------------------------------------- */

static uint32_t fn(struct sc_profile *p, const char *name)
{
    int64_t s = sc_profile_intern(p, name, strlen(name));
    return (uint32_t)sc_profile_add_function(p, (uint32_t)s, 0);
}

/* A location whose lines are fns[0] (innermost) .. fns[n-1] (outermost): fns[0..n-2] were
 * inlined into fns[n-1]. */
static uint32_t loc(struct sc_profile *p, const uint32_t *fns, uint32_t n)
{
    p->lines = realloc(p->lines, (p->nlines + n) * sizeof *p->lines);
    p->lines_cap = p->nlines + n;
    p->locations = realloc(p->locations, (p->nlocations + 1) * sizeof *p->locations);
    p->locations_cap = p->nlocations + 1;
    struct sc_location *l = &p->locations[p->nlocations];
    memset(l, 0, sizeof *l);
    l->id = p->nlocations + 1;
    l->line_start = p->nlines;
    l->nlines = n;
    for (uint32_t i = 0; i < n; i++) {
        memset(&p->lines[p->nlines], 0, sizeof *p->lines);
        p->lines[p->nlines++].function = fns[i] + 1;
    }
    return p->nlocations++;
}

/* A sample through simple locations of the given functions, root first (easier to read). */
static void sample(struct sc_profile *p, const uint32_t *root_first, uint32_t n, int64_t v)
{
    uint32_t locs[64];
    for (uint32_t i = 0; i < n; i++)
        locs[n - 1 - i] = loc(p, &root_first[i], 1);
    sc_profile_add_sample(p, locs, n, &v, 0);
}

static struct sc_profile *new_profile(void)
{
    struct sc_profile *p = sc_profile_new();
    sc_profile_add_sample_type(p, "samples", "count");
    return p;
}

static const struct sc_callgraph_node *node(const struct sc_callgraph *g, const char *name)
{
    for (uint32_t i = 0; i < g->nnodes; i++)
        if (g->nodes[i].name.len == strlen(name) &&
            !memcmp(g->nodes[i].name.ptr, name, strlen(name)))
            return &g->nodes[i];
    return NULL;
}

static const struct sc_callgraph_edge *edge(const struct sc_callgraph *g, const char *a,
                                            const char *b)
{
    const struct sc_callgraph_node *x = node(g, a), *y = node(g, b);
    for (uint32_t i = 0; x && y && i < g->nedges; i++)
        if (&g->nodes[g->edges[i].src] == x && &g->nodes[g->edges[i].dst] == y)
            return &g->edges[i];
    return NULL;
}

static char *dot_of(const struct sc_profile *p, const struct sc_callgraph_opts *o)
{
    struct sc_buf b = SC_BUF_INIT;
    char err[SC_ERR_LEN] = "";
    int rc = sc_callgraph_dot(p, 0, o, &b, err);
    T_EQ_INT(rc, 0);
    return sc_buf_detach(&b, NULL);
}

/* The shape of a Go heap profile of functions called in random order: main, then 8 to 19
 * distinct functions of nfuncs (at most all) in a random order, so that every function calls most
 * others. Dense graphs like this are dot's slowest: most edges span many ranks. */
static struct sc_profile *dense_profile(uint32_t nfuncs, uint32_t nsamples)
{
    struct sc_profile *p = sc_profile_new();
    sc_profile_add_sample_type(p, "alloc_space", "bytes");
    uint32_t f[65];
    f[0] = fn(p, "main.main");
    for (uint32_t i = 1; i <= nfuncs && i < 65; i++) {
        char name[16];
        snprintf(name, sizeof name, "main.f%02u", i);
        f[i] = fn(p, name);
    }
    uint64_t rng = 88172645463325252ull;
    for (uint32_t s = 0; s < nsamples; s++) {
        uint32_t perm[65], stack[21];
        for (uint32_t i = 0; i < nfuncs; i++)
            perm[i] = f[i + 1];
        rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
        uint32_t depth = 8 + (uint32_t)(rng % 12);
        if (depth > nfuncs)
            depth = nfuncs;
        stack[0] = f[0];
        for (uint32_t d = 0; d < depth; d++) {
            rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
            uint32_t j = d + (uint32_t)(rng % (nfuncs - d));
            uint32_t t = perm[d];
            perm[d] = perm[j];
            perm[j] = t;
            stack[d + 1] = perm[d];
        }
        sample(p, stack, depth + 1, 16 + (int64_t)(rng % 4096));
    }
    return p;
}

/* How many times needle occurs in b. */
static int count_of(const struct sc_buf *b, const char *needle)
{
    int n = 0;
    for (const char *s = b->data;
         s && (s = memmem(s, b->len - (size_t)(s - b->data), needle, strlen(needle))) != NULL; s++)
        n++;
    return n;
}

/* ---- tests ---------------------------------------------------------------------------------- */

static void test_shorten(void)
{
    /* expected values checked against pprof's own ShortenFunctionName */
    static const char *const cases[][2] = {
        {"github.com/x/y/pkg.(*T).M", "pkg.(*T).M"},
        {"github.com/x/y/v2/pkg.F", "pkg.F"},
        {"example.com/mod/v3.Func", "mod.Func"},
        {"example.com/mod/v1.Func", "v1.Func"},
        {"example.com/mod/v10/sub.Func", "sub.Func"},
        {"example.com/mod/v0.Func", "v0.Func"},
        {"a/v2/b/v3/c.F", "c.F"},
        {"sort.Sort", "sort.Sort"},
        {"main", "main"},
        {"foo/", "foo/"},
        {"a/b/", "b/"},
        {"a//b.F", "/b.F"},
        {"./rel/pkg.F", "pkg.F"},
        {"/abs/path/file.F", "/abs/path/file.F"},
        {"a/b\nc/d", "b"},
        {"com.google.Foo.bar(int)", "Foo.bar"},
        {"com.google.Foo.bar", "Foo.bar"},
        {"com.google.Foo.<init>(int)", "Foo.<init>"},
        {"Foo.bar$1(x)", "Foo.bar$1"},
        {"com.Foo.Bar.baz", "com.Foo.Bar.baz"},
        {"java.lang.Thread.run", "Thread.run"},
        {"std::vector<int>::push_back", "std::vector<int>::push_back"},
        {"ns::Foo::bar", "Foo::bar"},
        {"ns::Foo::bar<int>(x)", "Foo::bar<int>"},
        {"(anonymous namespace)::ns::Foo::bar", "Foo::bar"},
        {"a::B::C::d", "C::d"},
        {"a::b::c", "a::b::c"},
        {"_ns::__Foo::~Foo", "__Foo::~Foo"},
        {"ns::Foo::operator()", "Foo::operator"},
        {"ns::Foo::bar<a>b>c", "Foo::bar<a>b>"},
        {"x/y.(*Z[...]).M", "y.(*Z[...]).M"},
        {"[unknown]", "[unknown]"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct sc_buf b = SC_BUF_INIT;
        sc_callgraph_shorten_name(cases[i][0], strlen(cases[i][0]), &b);
        T_EQ_STR(b.data ? b.data : "", cases[i][1]);
        sc_buf_release(&b);
    }
}

static void test_colors(void)
{
    char c[8];
    sc_callgraph_color(0, 0, c);
    T_EQ_STR(c, "#b2b2b2"); /* grey */
    sc_callgraph_color(0, 1, c);
    T_EQ_STR(c, "#ededed");
    /* values from go tool pprof -dot on cpu-sort.pb.gz */
    sc_callgraph_color(12420000000.0 / 13710000000.0, 0, c);
    T_EQ_STR(c, "#b20500");
    sc_callgraph_color(12420000000.0 / 13710000000.0, 1, c);
    T_EQ_STR(c, "#edd6d5");
    sc_callgraph_color(1.0, 0, c);
    T_EQ_STR(c, "#b20000");
    sc_callgraph_color(-1.0, 0, c);
    T_EQ_STR(c, "#00b200"); /* negative (diff) values go green */
    sc_callgraph_color(5.0, 0, c);
    T_EQ_STR(c, "#b20000"); /* clamped */
}

/* flat to the innermost frame, cum once per sample, edges once per sample */
static void test_values(void)
{
    struct sc_profile *p = new_profile();
    uint32_t m = fn(p, "main"), a = fn(p, "a"), b = fn(p, "b");
    sample(p, (uint32_t[]){m, a, b}, 3, 10);
    sample(p, (uint32_t[]){m, a, a, a}, 4, 5); /* recursion: cum once, no self edge */
    sample(p, (uint32_t[]){m}, 1, 1);
    struct sc_callgraph_opts o = SC_CALLGRAPH_OPTS_INIT;
    struct sc_callgraph g;
    char err[SC_ERR_LEN] = "";
    T_EQ_INT(sc_callgraph_compute(p, 0, &o, &g, err), 0);
    T_EQ_INT(g.total, 16);
    T_EQ_INT(g.nnodes, 3);
    const struct sc_callgraph_node *nm = node(&g, "main"), *na = node(&g, "a"), *nb = node(&g, "b");
    T_CHECK(nm && na && nb);
    if (nm && na && nb) {
        T_EQ_INT(nm->flat, 1);
        T_EQ_INT(nm->cum, 16);
        T_EQ_INT(na->flat, 5);
        T_EQ_INT(na->cum, 15);
        T_EQ_INT(nb->flat, 10);
        T_EQ_INT(nb->cum, 10);
    }
    T_EQ_INT(g.nedges, 2);
    const struct sc_callgraph_edge *e = edge(&g, "main", "a");
    T_CHECK(e && e->weight == 15 && !e->residual && !e->inlined);
    e = edge(&g, "a", "b");
    T_CHECK(e && e->weight == 10);
    T_CHECK(edge(&g, "a", "a") == NULL);
    sc_callgraph_release(&g);
    sc_profile_free(p);
}

/* an inlined call is marked, and a call that is inlined only sometimes is not */
static void test_inline(void)
{
    struct sc_profile *p = new_profile();
    uint32_t m = fn(p, "main"), a = fn(p, "pkg.a"), b = fn(p, "pkg.b"), c = fn(p, "pkg.c");
    uint32_t lm = loc(p, &m, 1);
    uint32_t ab[] = {b, a}; /* b inlined into a */
    uint32_t lab = loc(p, ab, 2);
    uint32_t lc = loc(p, &c, 1);
    uint32_t la = loc(p, &a, 1);
    uint32_t lb = loc(p, &b, 1);
    int64_t v = 7;
    sc_profile_add_sample(p, (uint32_t[]){lab, lm}, 2, &v, 0); /* main -> a -(inline)-> b */
    v = 3;
    sc_profile_add_sample(p, (uint32_t[]){lc, lab, lm}, 3, &v, 0);
    v = 2;
    sc_profile_add_sample(p, (uint32_t[]){lc, la, lm}, 3, &v, 0); /* a -> c, a real call */
    v = 4;
    sc_profile_add_sample(p, (uint32_t[]){lc, lb, lm}, 3, &v, 0);
    struct sc_callgraph_opts o = SC_CALLGRAPH_OPTS_INIT;
    struct sc_callgraph g;
    char err[SC_ERR_LEN] = "";
    T_EQ_INT(sc_callgraph_compute(p, 0, &o, &g, err), 0);
    const struct sc_callgraph_edge *e = edge(&g, "pkg.a", "pkg.b");
    T_CHECK(e && e->inlined && e->weight == 10);
    e = edge(&g, "pkg.b", "pkg.c");
    T_CHECK(e && !e->inlined && e->weight == 7);
    e = edge(&g, "main", "pkg.b");
    T_CHECK(e && !e->inlined && e->weight == 4);
    sc_callgraph_release(&g);
    char *dot = dot_of(p, &o);
    T_CHECK(dot && strstr(dot, "[label=\" 10\\n (inline)\""));
    /* short names, one component a line */
    T_CHECK(dot && strstr(dot, "label=\"pkg\\na\\n"));
    free(dot);
    sc_profile_free(p);
}

/* the node fraction cut drops a light node; the edge over it becomes residual (dotted),
 * and goes away when another path connects its ends */
static void test_residual(void)
{
    struct sc_profile *p = new_profile();
    uint32_t a = fn(p, "a"), b = fn(p, "b"), x = fn(p, "x"), y = fn(p, "y");
    sample(p, (uint32_t[]){a, x, b}, 3, 1);
    sample(p, (uint32_t[]){b}, 1, 50);
    sample(p, (uint32_t[]){a}, 1, 50);
    sample(p, (uint32_t[]){y}, 1, 1);
    struct sc_callgraph_opts o = SC_CALLGRAPH_OPTS_INIT;
    o.nodefraction = 0.05; /* cut: |cum| < 5 */
    struct sc_callgraph g;
    char err[SC_ERR_LEN] = "";
    T_EQ_INT(sc_callgraph_compute(p, 0, &o, &g, err), 0);
    T_EQ_INT(g.nnodes, 2);
    T_EQ_INT(g.dropped_nodes, 2);
    T_CHECK(node(&g, "x") == NULL && node(&g, "y") == NULL);
    const struct sc_callgraph_edge *e = edge(&g, "a", "b");
    T_CHECK(e && e->residual && e->weight == 1);
    sc_callgraph_release(&g);
    char *dot = dot_of(p, &o);
    T_CHECK(dot && strstr(dot, "tooltip=\"a ... b (1)\""));
    T_CHECK(dot && strstr(dot, "style=\"dotted\""));
    T_CHECK(dot && strstr(dot, "Dropped 2 nodes (cum <= 5)"));
    free(dot);
    sc_profile_free(p);

    /* the same residual edge is redundant when a -> c -> b carries the call too */
    p = new_profile();
    a = fn(p, "a");
    b = fn(p, "b");
    x = fn(p, "x");
    uint32_t c = fn(p, "c");
    sample(p, (uint32_t[]){a, c, b}, 3, 100);
    sample(p, (uint32_t[]){a, x, b}, 3, 1);
    o.nodefraction = 0.05;
    o.edgefraction = 0;
    T_EQ_INT(sc_callgraph_compute(p, 0, &o, &g, err), 0);
    T_CHECK(node(&g, "x") == NULL);
    T_CHECK(edge(&g, "a", "b") == NULL);
    T_CHECK(edge(&g, "a", "c") && edge(&g, "c", "b"));
    T_EQ_INT(g.nedges, 2);
    sc_callgraph_release(&g);
    sc_profile_free(p);
}

/* nodecount keeps the top nodes; edge fraction drops light edges and says so */
static void test_cuts(void)
{
    struct sc_profile *p = new_profile();
    uint32_t m = fn(p, "main"), f[6];
    char name[8];
    for (int i = 0; i < 6; i++) {
        snprintf(name, sizeof name, "f%d", i);
        f[i] = fn(p, name);
        sample(p, (uint32_t[]){m, f[i]}, 2, 1000 >> i);
    }
    struct sc_callgraph_opts o = SC_CALLGRAPH_OPTS_INIT;
    o.nodecount = 3;
    o.nodefraction = 0;
    o.edgefraction = 0.02; /* 2% of 1968: edges lighter than 39 go */
    struct sc_callgraph g;
    char err[SC_ERR_LEN] = "";
    T_EQ_INT(sc_callgraph_compute(p, 0, &o, &g, err), 0);
    T_EQ_INT(g.nnodes, 3);
    T_EQ_INT(g.orig_count, 7);
    T_CHECK(node(&g, "main") && node(&g, "f0") && node(&g, "f1"));
    sc_callgraph_release(&g);

    o.nodecount = 0;
    T_EQ_INT(sc_callgraph_compute(p, 0, &o, &g, err), 0);
    T_EQ_INT(g.nnodes, 7);
    T_EQ_INT(g.nedges, 5); /* main -> f5 (31) is lighter than 39 */
    T_EQ_INT(g.dropped_edges, 1);
    T_CHECK(edge(&g, "main", "f5") == NULL && edge(&g, "main", "f4") != NULL);
    /* nodes by pprof's entropy order: main spreads over six callees and comes first */
    T_CHECK(g.nnodes && g.nodes[0].name.len == 4 && !memcmp(g.nodes[0].name.ptr, "main", 4));
    /* edges heaviest first */
    for (uint32_t i = 1; i < g.nedges; i++)
        T_CHECK(g.edges[i - 1].weight >= g.edges[i].weight);
    sc_callgraph_release(&g);
    char *dot = dot_of(p, &o);
    T_CHECK(dot && strstr(dot, "Dropped 1 edge (freq <= 39)"));
    /* the heaviest node gets the largest type, the lightest with flat the smallest */
    T_CHECK(dot && strstr(dot, "label=\"f0\\n1000 (50.81%)\" id=\"node2\" fontsize=24"));
    free(dot);
    sc_profile_free(p);
}

/* string labels and "bytes" labels become tag boxes under their nodes */
static void test_tags(void)
{
    struct sc_profile *p = sc_profile_new();
    sc_profile_add_sample_type(p, "alloc_space", "bytes");
    uint32_t m = fn(p, "main"), a = fn(p, "alloc");
    uint32_t kb = (uint32_t)sc_profile_intern(p, "bytes", 5);
    uint32_t kc = (uint32_t)sc_profile_intern(p, "comm", 4);
    uint32_t vx = (uint32_t)sc_profile_intern(p, "xz", 2);
    for (int i = 0; i < 3; i++) {
        sample(p, (uint32_t[]){m, a}, 2, 8192 * (i + 1));
        sc_profile_add_label(p, kb, 0, 8192, 0);
        if (i == 2)
            sc_profile_add_label(p, kc, vx, 0, 0);
    }
    struct sc_callgraph_opts o = SC_CALLGRAPH_OPTS_INIT;
    char *dot = dot_of(p, &o);
    /* the leaf ranks first (N1); its tags by cum: the comm label box with its own "bytes"
     * box under it, and the "bytes" box of the samples without labels */
    T_CHECK(dot && strstr(dot, "N1_0 [label = \"comm:xz\" id=\"N1_0\" fontsize=8 shape=box3d "
                               "tooltip=\"24kB\"]\nN1 -> N1_0 [label=\" 24kB\""));
    T_CHECK(dot && strstr(dot, "NN1_0_0 [label = \"8kB\""));
    T_CHECK(dot && strstr(dot, "NN1_0 [label = \"8kB\" id=\"NN1_0\" fontsize=8 shape=box3d "
                               "tooltip=\"24kB\"]"));
    /* the caller shows flat tags: it has no flat, so no boxes */
    T_CHECK(dot && !strstr(dot, "N2_0"));
    /* an edge out of a node with tag boxes is lengthened */
    T_CHECK(dot && strstr(dot, "minlen=2") == NULL);
    free(dot);
    sc_profile_free(p);
}

static void test_empty(void)
{
    struct sc_profile *p = new_profile();
    struct sc_callgraph_opts o = SC_CALLGRAPH_OPTS_INIT;
    char *dot = dot_of(p, &o);
    T_CHECK(dot && strstr(dot, "digraph \"unnamed\" {\n"));
    T_CHECK(dot && strstr(dot, "Showing nodes accounting for 0, 0% of 0 total"));
    T_CHECK(dot && !strstr(dot, "\nN1 "));
    free(dot);
    struct sc_callgraph g;
    char err[SC_ERR_LEN] = "";
    T_EQ_INT(sc_callgraph_compute(p, 3, &o, &g, err), SC_EINVAL);
    sc_callgraph_release(&g);
    sc_profile_free(p);
}

struct render_job {
    const char *dot;
    int rc;
    size_t len;
    int ok;
};

static void *render(void *arg)
{
    struct render_job *j = arg;
    for (int i = 0; i < 3 && j->rc == 0; i++) {
        struct sc_buf b = SC_BUF_INIT;
        char err[SC_ERR_LEN] = "";
        j->rc = sc_callgraph_render_svg(j->dot, strlen(j->dot), &b, err);
        j->len = b.len;
        j->ok = b.data && strstr(b.data, "<svg") && strstr(b.data, "</svg>") &&
                strstr(b.data, "f0 (1000)");
        sc_buf_release(&b);
    }
    return NULL;
}

static void test_svg(void)
{
    struct sc_profile *p = new_profile();
    uint32_t m = fn(p, "main");
    for (int i = 0; i < 4; i++) {
        char name[8];
        snprintf(name, sizeof name, "f%d", i);
        sample(p, (uint32_t[]){m, fn(p, name)}, 2, 1000 >> i);
    }
    struct sc_callgraph_opts o = SC_CALLGRAPH_OPTS_INIT;
    struct sc_buf svg = SC_BUF_INIT;
    char err[SC_ERR_LEN] = "";
    T_EQ_INT(sc_callgraph_svg(p, 0, &o, &svg, err), 0);
    T_CHECK(svg.data && !strncmp(svg.data, "<?xml", 5));
    T_CHECK(svg.data && strstr(svg.data, "</svg>\n"));
    for (int i = 0; i < 4; i++) {
        char name[8];
        snprintf(name, sizeof name, ">f%d<", i);
        T_CHECK(svg.data && strstr(svg.data, name)); /* every node's name */
    }
    sc_buf_release(&svg);

    /* repeated and concurrent calls: serialized inside, each complete */
    char *dot = dot_of(p, &o);
    struct render_job jobs[4];
    pthread_t th[4];
    for (int i = 0; i < 4; i++) {
        jobs[i] = (struct render_job){dot, 0, 0, 0};
        pthread_create(&th[i], NULL, render, &jobs[i]);
    }
    for (int i = 0; i < 4; i++) {
        pthread_join(th[i], NULL);
        T_EQ_INT(jobs[i].rc, 0);
        T_CHECK(jobs[i].ok);
        T_EQ_INT(jobs[i].len, jobs[0].len);
    }
    free(dot);

    /* what graphviz cannot read is an error with its reason, and no output */
    struct sc_buf b = SC_BUF_INIT;
    const char *bad = "digraph { a -> ";
    T_EQ_INT(sc_callgraph_render_svg(bad, strlen(bad), &b, err), SC_EFORMAT);
    T_CHECK(strstr(err, "graphviz") != NULL);
    T_EQ_INT(b.len, 0);
    /* and a later call still works */
    const char *good = "digraph { a -> b }";
    T_EQ_INT(sc_callgraph_render_svg(good, strlen(good), &b, err), 0);
    T_CHECK(b.data && strstr(b.data, "</svg>"));
    sc_buf_release(&b);
    sc_profile_free(p);
}

/* The layout size: nodes plus one virtual node per rank an edge skips, cycles broken; a
 * graph too large for it is drawn with fewer nodes, the legend says how many. */
static void test_layout_size(void)
{
    /* main -> a -> b -> c, and main -> c directly: 3 ranks apart, 2 virtual nodes */
    struct sc_profile *p = new_profile();
    uint32_t m = fn(p, "main"), a = fn(p, "a"), b = fn(p, "b"), c = fn(p, "c");
    sample(p, (uint32_t[]){m, a, b, c}, 4, 100);
    sample(p, (uint32_t[]){m, c}, 2, 50);
    struct sc_callgraph_opts o = SC_CALLGRAPH_OPTS_INIT;
    struct sc_callgraph g;
    char err[SC_ERR_LEN] = "";
    T_EQ_INT(sc_callgraph_compute(p, 0, &o, &g, err), 0);
    T_EQ_INT(g.nnodes, 4);
    T_EQ_INT(g.nedges, 4);
    T_EQ_INT(sc_callgraph_layout_size(&g, g.nnodes), 4 + 2);
    T_EQ_INT(sc_callgraph_layout_size(&g, 0), 0);
    sc_callgraph_release(&g);
    sc_profile_free(p);
    /* recursion a -> b -> a: one edge is turned around, nothing spans ranks */
    p = new_profile();
    m = fn(p, "main"), a = fn(p, "a"), b = fn(p, "b");
    sample(p, (uint32_t[]){m, a, b, a, b}, 5, 100);
    T_EQ_INT(sc_callgraph_compute(p, 0, &o, &g, err), 0);
    T_EQ_INT(g.nedges, 3);
    T_EQ_INT(sc_callgraph_layout_size(&g, g.nnodes), 3);
    sc_callgraph_release(&g);
    sc_profile_free(p);

    /* a chain of 40 functions called from main and from every tenth one: without a
     * budget all are drawn, with a small one fewer, as "Showing top N nodes" says */
    p = new_profile();
    uint32_t f[41];
    f[0] = fn(p, "main");
    for (int i = 1; i <= 40; i++) {
        char name[8];
        snprintf(name, sizeof name, "f%02d", i);
        f[i] = fn(p, name);
    }
    for (int d = 1; d <= 40; d++)
        sample(p, f, (uint32_t)d + 1, 10 + d);
    for (int i = 10; i <= 40; i += 10)
        for (int j = 1; j <= 40; j += 3)
            sample(p, (uint32_t[]){f[0], f[i], f[j]}, 3, 7);
    o.nodecount = 0;
    T_EQ_INT(sc_callgraph_compute(p, 0, &o, &g, err), 0);
    uint64_t all = sc_callgraph_layout_size(&g, g.nnodes);
    T_CHECK(all > 200);
    /* each node's heaviest caller edge alone: a chain and short calls, nothing long */
    sc_callgraph_thin(&g, 0);
    T_CHECK(sc_callgraph_layout_size(&g, g.nnodes) < 60);
    sc_callgraph_release(&g);
    sc_profile_free(p);
}

/* Thinning keeps the m heaviest edges and every node's heaviest caller edge. */
static void test_thin(void)
{
    struct sc_profile *p = new_profile();
    uint32_t m = fn(p, "main"), a = fn(p, "a"), b = fn(p, "b"), c = fn(p, "c");
    sample(p, (uint32_t[]){m, a}, 2, 60);
    sample(p, (uint32_t[]){m, a, b}, 3, 30);
    sample(p, (uint32_t[]){m, a, c}, 3, 10);
    sample(p, (uint32_t[]){m, b}, 2, 30);
    sample(p, (uint32_t[]){m, b, c}, 3, 20);
    struct sc_callgraph_opts o = SC_CALLGRAPH_OPTS_INIT;
    struct sc_callgraph g;
    char err[SC_ERR_LEN] = "";
    T_EQ_INT(sc_callgraph_compute(p, 0, &o, &g, err), 0);
    T_EQ_INT(g.nedges, 5); /* main->a 100, main->b 50, a->b 30, b->c 20, a->c 10 */
    T_EQ_INT(sc_callgraph_thin(&g, 5), 0);
    T_EQ_INT(sc_callgraph_thin(&g, 1), 2);
    T_EQ_INT(g.nedges, 3);
    T_EQ_INT(g.thinned, 2);
    T_CHECK(edge(&g, "main", "a") && edge(&g, "main", "b") && edge(&g, "b", "c"));
    T_CHECK(!edge(&g, "a", "b") && !edge(&g, "a", "c"));
    for (uint32_t i = 1; i < g.nedges; i++)
        T_CHECK(g.edges[i - 1].weight >= g.edges[i].weight); /* still heaviest first */
    /* the legend says what went, and the large style draws edges without labels (a
     * label is a rank of its own), their values in the tooltips */
    o.style = SC_CALLGRAPH_STYLE_LARGE;
    struct sc_buf dot = SC_BUF_INIT;
    sc_callgraph_write_dot(p, 0, &o, &g, &dot);
    sc_buf_putc(&dot, 0);
    T_CHECK(strstr(dot.data, "Dropped 2 more edges to lay out in time (each node keeps its "
                             "heaviest caller)\\l"));
    T_CHECK(strstr(dot.data, "\ngraph [mclimit=0.1 nslimit=0 splines=false nodesep=0.25]\n"));
    T_CHECK(strstr(dot.data, " -> ") && !strstr(dot.data, "label=\" "));
    T_CHECK(strstr(dot.data, "tooltip=\"main -> a (100)\""));
    sc_buf_release(&dot);
    sc_callgraph_release(&g);
    sc_profile_free(p);
    /* tag boxes' edges too: one label anywhere doubles every edge's ranks */
    p = sc_profile_new();
    sc_profile_add_sample_type(p, "alloc_space", "bytes");
    m = fn(p, "main"), a = fn(p, "alloc");
    uint32_t kb = (uint32_t)sc_profile_intern(p, "bytes", 5);
    sample(p, (uint32_t[]){m, a}, 2, 8192);
    sc_profile_add_label(p, kb, 0, 8192, 0);
    T_EQ_INT(sc_callgraph_compute(p, 0, &o, &g, err), 0);
    sc_callgraph_write_dot(p, 0, &o, &g, &dot);
    sc_buf_putc(&dot, 0);
    T_CHECK(strstr(dot.data, "NN1_0 [weight=100 tooltip=\"8kB\"]"));
    T_CHECK(!strstr(dot.data, "label=\" "));
    sc_buf_release(&dot);
    sc_callgraph_release(&g);
    sc_profile_free(p);
}

/* The reporter's shape: a dense graph, dot's slowest, is drawn with every node asked (it
 * was cut to a fifth of them), in the large style. */
static void test_dense(void)
{
    struct sc_profile *p = dense_profile(30, 3000);
    struct sc_callgraph_opts o = SC_CALLGRAPH_OPTS_INIT;
    struct sc_callgraph g;
    char err[SC_ERR_LEN] = "";
    T_EQ_INT(sc_callgraph_compute(p, 0, &o, &g, err), 0);
    uint32_t nodes = g.nnodes;
    T_EQ_INT(nodes, 31);
    T_CHECK(g.nedges > 400);
    fprintf(stderr, "dense: %u nodes %u edges size %llu\n", g.nnodes, g.nedges,
            (unsigned long long)sc_callgraph_layout_size(&g, g.nnodes));
    sc_callgraph_release(&g);
    struct sc_buf svg = SC_BUF_INIT;
    T_EQ_INT(sc_callgraph_svg(p, 0, &o, &svg, err), 0);
    sc_buf_putc(&svg, 0);
    T_EQ_INT(count_of(&svg, "class=\"node\""), (int)nodes + 1); /* and the legend's */
    T_CHECK(svg.data && !strstr(svg.data, "Showing top"));
    T_CHECK(svg.data && strstr(svg.data, "Showing nodes accounting for "));
    sc_buf_release(&svg);
    sc_profile_free(p);
}

/* What sc_callgraph_svg_fit draws within a budget: pprof's style when it fits, else the
 * large style, fewer edges, then fewer nodes; the legend and the SVG's data attributes
 * say what was left out. */
static void test_fit(void)
{
    struct sc_profile *p = dense_profile(30, 3000);
    struct sc_callgraph_opts o = SC_CALLGRAPH_OPTS_INIT;
    struct sc_callgraph g;
    char err[SC_ERR_LEN] = "";
    T_EQ_INT(sc_callgraph_compute(p, 0, &o, &g, err), 0);
    uint32_t nodes = g.nnodes, edges = g.nedges;
    double pprof = sc_callgraph_layout_seconds(&g, nodes, SC_CALLGRAPH_STYLE_PPROF);
    double full = sc_callgraph_layout_seconds(&g, nodes, SC_CALLGRAPH_STYLE_LARGE);
    sc_callgraph_thin(&g, 0);
    double callers = sc_callgraph_layout_seconds(&g, nodes, SC_CALLGRAPH_STYLE_LARGE);
    sc_callgraph_release(&g);
    fprintf(stderr, "dense: pprof %.2f s, large %.2f s, callers %.2f s\n", pprof, full, callers);
    T_CHECK(pprof > full && full > callers);

    /* all of it fits in the large style */
    struct sc_callgraph_drawn d;
    struct sc_buf svg = SC_BUF_INIT;
    int64_t budget = (int64_t)(full * 1e9) + 1000000;
    T_EQ_INT(sc_callgraph_svg_fit(p, 0, &o, budget, &d, &svg, err), 0);
    T_EQ_INT(d.asked, 80);
    T_EQ_INT(d.nodes, nodes);
    T_EQ_INT(d.total_nodes, nodes);
    T_EQ_INT(d.edges, edges);
    T_EQ_INT(d.thinned, 0);
    T_EQ_INT(d.style, SC_CALLGRAPH_STYLE_LARGE);
    T_CHECK(d.flat == d.total && d.total > 0);
    sc_buf_putc(&svg, 0);
    char want[160];
    snprintf(want, sizeof want,
             "<svg data-nodes-asked=\"80\" data-nodes=\"%u\" data-nodes-total=\"%u\" "
             "data-nodes-cut=\"0\" data-edges=\"%u\" data-edges-thinned=\"0\"",
             nodes, nodes, edges);
    T_CHECK(svg.data && strstr(svg.data, want));
    T_CHECK(svg.data && strstr(svg.data, " data-share=\"1.0000\" data-layout=\"large\""));
    sc_buf_release(&svg);

    /* between all of it and each node's heaviest caller edge: every node, fewer edges */
    budget = (int64_t)((full + callers) / 2 * 1e9);
    T_EQ_INT(sc_callgraph_svg_fit(p, 0, &o, budget, &d, &svg, err), 0);
    T_EQ_INT(d.nodes, nodes);
    T_EQ_INT(d.nodes_cut, 0);
    T_CHECK(d.thinned > 0 && d.edges + d.thinned == edges);
    T_CHECK(d.seconds <= (double)budget / 1e9);
    sc_buf_putc(&svg, 0);
    snprintf(want, sizeof want, "Dropped %u more edges to lay out in time", d.thinned);
    T_CHECK(svg.data && strstr(svg.data, want));
    snprintf(want, sizeof want, " data-edges-thinned=\"%u\"", d.thinned);
    T_CHECK(svg.data && strstr(svg.data, want));
    T_EQ_INT(count_of(&svg, "class=\"node\""), (int)nodes + 1);
    T_EQ_INT(count_of(&svg, "class=\"edge\""), (int)d.edges);
    sc_buf_release(&svg);

    /* below even that: fewer nodes, and how much of the profile they account for */
    budget = (int64_t)(callers / 3 * 1e9);
    T_EQ_INT(sc_callgraph_svg_fit(p, 0, &o, budget, &d, &svg, err), 0);
    T_CHECK(d.nodes > 0 && d.nodes < nodes);
    T_EQ_INT(d.asked, 80);
    T_EQ_INT(d.total_nodes, nodes);
    T_CHECK(d.flat > 0 && d.flat < d.total);
    T_CHECK(d.seconds <= (double)budget / 1e9);
    sc_buf_putc(&svg, 0);
    snprintf(want, sizeof want, "Showing top %u nodes out of %u", d.nodes, nodes);
    T_CHECK(svg.data && strstr(svg.data, want));
    T_CHECK(svg.data && strstr(svg.data, "Fewer nodes than the 80 asked: more take too long to "
                                         "lay out"));
    T_CHECK(d.nodes_cut);
    snprintf(want, sizeof want, " data-nodes=\"%u\" data-nodes-total=\"%u\" data-nodes-cut=\"1\"",
             d.nodes, nodes);
    T_CHECK(svg.data && strstr(svg.data, want));
    snprintf(want, sizeof want, " data-flat=\"%lld\" data-total=\"%lld\" data-share=\"%.4f\"",
             (long long)d.flat, (long long)d.total, (double)d.flat / (double)d.total);
    T_CHECK(svg.data && strstr(svg.data, want));
    T_EQ_INT(count_of(&svg, "class=\"node\""), (int)d.nodes + 1);
    sc_buf_release(&svg);

    /* no budget (the API's fit=0): every node and edge asked, however long */
    T_EQ_INT(sc_callgraph_svg_fit(p, 0, &o, 0, &d, &svg, err), 0);
    T_CHECK(d.nodes == nodes && d.edges == edges && d.thinned == 0);
    sc_buf_release(&svg);
    /* a small graph in pprof's style, as go tool pprof -svg draws it */
    sc_profile_free(p);
    p = dense_profile(4, 50);
    T_EQ_INT(sc_callgraph_svg_fit(p, 0, &o, 5 * 1000000000ll, &d, &svg, err), 0);
    T_EQ_INT(d.style, SC_CALLGRAPH_STYLE_PPROF);
    sc_buf_putc(&svg, 0);
    T_CHECK(svg.data && strstr(svg.data, " data-layout=\"pprof\""));
    sc_buf_release(&svg);
    sc_profile_free(p);
}

/* a real profile: lazy samples (no labels) draw the same CPU graph as stored ones */
static void test_real(void)
{
    const char *path = t_testdata("pprof/cpu-sort.pb.gz");
    if (!path) {
        fprintf(stderr, "  (../shared/testdata absent: real-profile checks skipped)\n");
        return;
    }
    char err[SC_ERR_LEN] = "";
    struct sc_profile *stored, *lazy;
    struct sc_decode_opts d1 = {0}, d2 = {.lazy_samples = 1};
    T_EQ_INT(sc_load(path, &d1, &stored, err), 0);
    T_EQ_INT(sc_load(path, &d2, &lazy, err), 0);
    struct sc_callgraph_opts o = SC_CALLGRAPH_OPTS_INIT;
    int vi = sc_profile_sample_index(stored, NULL, err);
    struct sc_buf a = SC_BUF_INIT, b = SC_BUF_INIT;
    T_EQ_INT(sc_callgraph_dot(stored, vi, &o, &a, err), 0);
    T_EQ_INT(sc_callgraph_dot(lazy, vi, &o, &b, err), 0);
    T_CHECK(a.len > 1000 && a.len == b.len && !memcmp(a.data, b.data, a.len));
    /* go tool pprof -dot: 80 of 110 nodes, the first testing.(*B).runN */
    T_CHECK(a.data && strstr(a.data, "Showing top 80 nodes out of 110"));
    T_CHECK(a.data && strstr(a.data, "N1 [label=\"testing\\n(*B)\\nrunN\\n0 of 12.42s (90.59%)\""));
    sc_buf_release(&a);
    sc_buf_release(&b);
    sc_profile_free(stored);
    sc_profile_free(lazy);
}

int main(void)
{
    T_RUN(test_shorten);
    T_RUN(test_colors);
    T_RUN(test_values);
    T_RUN(test_inline);
    T_RUN(test_residual);
    T_RUN(test_cuts);
    T_RUN(test_tags);
    T_RUN(test_empty);
    T_RUN(test_svg);
    T_RUN(test_layout_size);
    T_RUN(test_thin);
    T_RUN(test_dense);
    T_RUN(test_fit);
    T_RUN(test_real);
    return t_done();
}
