/* test_svg.c - the SVG flame graph writer: layout, pruning, escaping, colours, differentials. */
#include "formats/folded.h"
#include "formats/svg.h"
#include "model/setting.h"
#include "model/error.h"
#include "t.h"

/* Renders folded text with options; returns the SVG (caller frees) and the frame count. */
static char *render(const char *folded, const struct sc_svg_opts *o, int *frames)
{
    char err[SC_ERR_LEN] = "";
    struct sc_profile *p = sc_profile_new();
    if (!p || sc_folded_decode(folded, strlen(folded), &sc_limits_cli, p, err)) {
        fprintf(stderr, "decode: %s\n", err);
        sc_profile_free(p);
        return NULL;
    }
    struct sc_svg_opts def;
    if (!o) {
        sc_svg_opts_init(&def);
        o = &def;
    }
    struct sc_buf b = SC_BUF_INIT;
    int n = sc_svg_write(p, (int)p->nsample_types - 1, o, &b, err);
    sc_profile_free(p);
    if (n < 0) {
        fprintf(stderr, "svg: %s\n", err);
        sc_buf_release(&b);
        return NULL;
    }
    if (frames)
        *frames = n;
    sc_buf_puts(&b, "");
    return sc_buf_detach(&b, NULL);
}

/* The <g> of the frame whose title starts with `title` (e.g. "b (" ), or NULL. With skip,
 * the skip-th next such frame. */
static const char *frame_n(const char *svg, const char *title, int skip)
{
    char key[512];
    snprintf(key, sizeof key, "<title>%s", title);
    const char *s = svg ? strstr(svg, "<g id=\"frames\">") : NULL;
    while (s && (s = strstr(s, key))) {
        if (skip-- == 0) {
            while (s > svg && strncmp(s, "<g ", 3) != 0)
                s--;
            return s;
        }
        s++;
    }
    return NULL;
}

static const char *frame(const char *svg, const char *title)
{
    return frame_n(svg, title, 0);
}

/* Value of attribute name in the element (of the frame g) named elem, "" when missing. */
static const char *attr(const char *g, const char *elem, const char *name)
{
    static char val[256];
    val[0] = 0;
    if (!g)
        return val;
    const char *end = strstr(g, "</g>");
    char open[32];
    snprintf(open, sizeof open, "<%s ", elem);
    const char *e = strstr(g, open);
    if (!e || (end && e > end))
        return val;
    char key[64];
    snprintf(key, sizeof key, " %s=\"", name);
    const char *a = strstr(e, key);
    const char *close = strchr(e, '>');
    if (!a || a > close)
        return val;
    a += strlen(key);
    size_t n = strcspn(a, "\"");
    if (n >= sizeof val)
        n = sizeof val - 1;
    memcpy(val, a, n);
    val[n] = 0;
    return val;
}

static double num(const char *g, const char *elem, const char *name)
{
    return atof(attr(g, elem, name));
}

/* Content of the frame's <title> or <text>. */
static const char *content(const char *g, const char *elem)
{
    static char val[512];
    val[0] = 0;
    if (!g)
        return val;
    char open[32], close[32];
    snprintf(open, sizeof open, "<%s", elem);
    snprintf(close, sizeof close, "</%s>", elem);
    const char *s = strstr(g, open);
    if (!s)
        return val;
    s = strchr(s, '>') + 1;
    const char *e = strstr(s, close);
    size_t n = e ? (size_t)(e - s) : 0;
    if (n >= sizeof val)
        n = sizeof val - 1;
    memcpy(val, s, n);
    val[n] = 0;
    return val;
}

static int count(const char *s, const char *needle)
{
    int n = 0;
    while (s && (s = strstr(s, needle))) {
        n++;
        s++;
    }
    return n;
}

static void test_widths_proportional(void)
{
    int n = 0;
    char *svg = render("a;b 3\na;c 1\n", NULL, &n);
    T_CHECK(svg != NULL);
    T_EQ_INT(n, 4);
    T_EQ_STR(content(frame(svg, "all ("), "title"), "all (4 samples, 100%)");
    T_EQ_STR(attr(frame(svg, "all ("), "rect", "width"), "1180");
    T_EQ_STR(attr(frame(svg, "a ("), "rect", "width"), "1180");
    T_EQ_STR(attr(frame(svg, "b ("), "rect", "width"), "885");
    T_EQ_STR(attr(frame(svg, "c ("), "rect", "width"), "295");
    T_EQ_STR(attr(frame(svg, "c ("), "rect", "x"), "895");
    T_EQ_STR(content(frame(svg, "b ("), "title"), "b (3 samples, 75.00%)");
    T_EQ_STR(content(frame(svg, "c ("), "title"), "c (1 samples, 25.00%)");
    /* the viewer's exact values */
    T_EQ_STR(attr(frame(svg, "c ("), "g", "data-s"), "3");
    T_EQ_STR(attr(frame(svg, "c ("), "g", "data-n"), "1");
    T_EQ_STR(attr(frame(svg, "c ("), "g", "data-d"), "2");
    free(svg);
}

static void test_self_time_left_of_children(void)
{
    /* a's own 2 samples come first, as in flamegraph.pl; children follow */
    char *svg = render("a;b 1\na 2\n", NULL, NULL);
    T_EQ_STR(attr(frame(svg, "b ("), "g", "data-s"), "2");
    free(svg);
}

static void test_alphabetical_order(void)
{
    char *svg = render("z 1\nm;q 1\nA 1\nm 1\nab 1\na 1\n", NULL, NULL);
    double xa = num(frame(svg, "a ("), "rect", "x"), xab = num(frame(svg, "ab ("), "rect", "x");
    double xA = num(frame(svg, "A ("), "rect", "x"), xm = num(frame(svg, "m ("), "rect", "x");
    double xz = num(frame(svg, "z ("), "rect", "x");
    /* bytes: "A" < "a" < "ab" < "m" < "z", whatever the input order */
    T_CHECK(xA < xa);
    T_CHECK(xa < xab);
    T_CHECK(xab < xm);
    T_CHECK(xm < xz);
    /* merged: one m frame holding both m stacks */
    T_EQ_STR(content(frame(svg, "m ("), "title"), "m (2 samples, 33.33%)");
    T_CHECK(frame_n(svg, "m (", 1) == NULL);
    /* frames are written in pre-order, which the viewer's search relies on */
    const char *g = frame(svg, "all (");
    T_CHECK(g && g < frame(svg, "A (") && frame(svg, "A (") < frame(svg, "a ("));
    T_CHECK(frame(svg, "m (") < frame(svg, "q (") && frame(svg, "q (") < frame(svg, "z ("));
    free(svg);
}

static void test_min_width(void)
{
    int n = 0;
    /* tiny is 1180/20001 = 0.059 px wide: below 0.1 px, not drawn, still counted */
    char *svg = render("a;big 20000\na;tiny;deeper 1\n", NULL, &n);
    T_EQ_INT(n, 3);
    T_CHECK(frame(svg, "tiny (") == NULL);
    T_CHECK(frame(svg, "deeper (") == NULL);
    T_EQ_STR(content(frame(svg, "a ("), "title"), "a (20,001 samples, 100.00%)");
    T_EQ_STR(content(frame(svg, "all ("), "title"), "all (20,001 samples, 100%)");
    T_EQ_STR(attr(frame(svg, "big ("), "rect", "width"), "1179.9");
    free(svg);

    struct sc_svg_opts o;
    sc_svg_opts_init(&o);
    o.min_width = 0;
    svg = render("a;big 20000\na;tiny;deeper 1\n", &o, &n);
    T_EQ_INT(n, 5);
    T_EQ_STR(content(frame(svg, "tiny ("), "title"), "tiny (1 samples, 0.00%)");
    free(svg);

    /* as a percentage: 10% of 20 is 2 */
    o.min_width = 10;
    o.min_width_pct = 1;
    svg = render("a 17\nb 2\nc 1\n", &o, &n);
    T_CHECK(frame(svg, "b (") != NULL);
    T_CHECK(frame(svg, "c (") == NULL);
    T_EQ_INT(n, 3);
    free(svg);
}

static void test_inverted(void)
{
    struct sc_svg_opts o;
    sc_svg_opts_init(&o);
    char *svg = render("a;b 1\n", NULL, NULL);
    /* height = 3 levels * 16 + 36 + 34 = 118; root at the bottom */
    T_CHECK(strstr(svg, "height=\"118\"") != NULL);
    T_EQ_STR(attr(frame(svg, "all ("), "rect", "y"), "69");
    T_EQ_STR(attr(frame(svg, "a ("), "rect", "y"), "53");
    T_EQ_STR(attr(frame(svg, "b ("), "rect", "y"), "37");
    T_EQ_STR(attr(frame(svg, "b ("), "rect", "height"), "15");
    T_CHECK(strstr(svg, ">Flame Graph</text>") != NULL);
    free(svg);
    o.inverted = 1;
    svg = render("a;b 1\n", &o, NULL);
    T_EQ_STR(attr(frame(svg, "all ("), "rect", "y"), "36");
    T_EQ_STR(attr(frame(svg, "a ("), "rect", "y"), "52");
    T_EQ_STR(attr(frame(svg, "b ("), "rect", "y"), "68");
    T_CHECK(strstr(svg, ">Icicle Graph</text>") != NULL);
    free(svg);
    /* a subtitle pushes an icicle's frames down instead of overlapping them */
    o.subtitle = "sub";
    svg = render("a;b 1\n", &o, NULL);
    T_EQ_STR(attr(frame(svg, "all ("), "rect", "y"), "60");
    T_CHECK(strstr(svg, ">sub</text>") != NULL);
    free(svg);
}

static void test_reverse(void)
{
    struct sc_svg_opts o;
    sc_svg_opts_init(&o);
    o.reverse = 1;
    char *svg = render("a;b 2\nc;b 1\n", &o, NULL);
    /* leaves at the root: b holds everything, then its callers */
    T_EQ_STR(attr(frame(svg, "b ("), "g", "data-d"), "1");
    T_EQ_STR(content(frame(svg, "b ("), "title"), "b (3 samples, 100.00%)");
    T_EQ_STR(attr(frame(svg, "a ("), "g", "data-d"), "2");
    T_EQ_STR(attr(frame(svg, "c ("), "g", "data-d"), "2");
    free(svg);
}

static void test_flamechart(void)
{
    struct sc_svg_opts o;
    sc_svg_opts_init(&o);
    o.flamechart = 1;
    int n = 0;
    char *svg = render("b 1\na;x 1\na;y 1\nb 1\n", &o, &n);
    /* input order kept, only adjacent stacks merge: b, a(x, y), b */
    T_EQ_INT(n, 6);
    T_EQ_STR(attr(frame_n(svg, "b (", 0), "g", "data-s"), "0");
    T_EQ_STR(attr(frame_n(svg, "b (", 1), "g", "data-s"), "3");
    T_EQ_STR(content(frame(svg, "a ("), "title"), "a (2 samples, 50.00%)");
    T_CHECK(strstr(svg, ">Flame Chart</text>") != NULL);
    free(svg);
}

static void test_escaping(void)
{
    struct sc_svg_opts o;
    sc_svg_opts_init(&o);
    o.title = "T<&>";
    o.countname = "b\"&";
    char *svg = render("x<y>&\"z'w 1\nbad\xff\x01name 1\n", &o, NULL);
    T_CHECK(svg != NULL);
    const char *g = frame(svg, "x&lt;y&gt;&amp;&quot;z&#39;w (");
    T_CHECK(g != NULL);
    T_EQ_STR(content(g, "title"), "x&lt;y&gt;&amp;&quot;z&#39;w (1 b&quot;&amp;, 50.00%)");
    T_EQ_STR(content(g, "text"), "x&lt;y&gt;&amp;&quot;z&#39;w");
    /* invalid UTF-8 and control characters become U+FFFD */
    T_CHECK(frame(svg, "bad\xef\xbf\xbd\xef\xbf\xbdname (") != NULL);
    T_CHECK(strstr(svg, "\xff") == NULL && strstr(svg, "\x01") == NULL);
    T_CHECK(strstr(svg, ">T&lt;&amp;&gt;</text>") != NULL);
    T_CHECK(strstr(svg, "data-countname=\"b&quot;&amp;\"") != NULL);
    T_CHECK(strstr(svg, "x<y") == NULL);
    free(svg);
}

static void test_labels(void)
{
    struct sc_svg_opts o;
    sc_svg_opts_init(&o);
    o.width = 200; /* 180 px of frames; a character is 12 * 0.59 = 7.08 px */
    char *svg = render("short 1\nlongname_that_does_not_fit 1\nannotated_[k] 8\n", &o, NULL);
    /* 18 px: 2 characters fit, fewer than the 3 a label needs */
    T_EQ_STR(content(frame(svg, "short ("), "text"), "");
    T_EQ_STR(content(frame(svg, "longname_that_does_not_fit ("), "text"), "");
    /* annotations are hidden in titles and labels */
    T_EQ_STR(content(frame(svg, "annotated ("), "title"), "annotated (8 samples, 80.00%)");
    free(svg);
    o.width = 420; /* 400 px: the long name's frame is 40 px = 5 characters */
    svg = render("short 1\nlongname_that_does_not_fit 1\nannotated_[k] 8\n", &o, NULL);
    T_EQ_STR(content(frame(svg, "longname_that_does_not_fit ("), "text"), "lon..");
    T_EQ_STR(content(frame(svg, "short ("), "text"), "short");
    T_EQ_STR(content(frame(svg, "all ("), "text"), "all");
    free(svg);
}

static void test_thousands(void)
{
    char *svg = render("a 1234567\nb 1000\n", NULL, NULL);
    T_EQ_STR(content(frame(svg, "a ("), "title"), "a (1,234,567 samples, 99.92%)");
    T_EQ_STR(content(frame(svg, "b ("), "title"), "b (1,000 samples, 0.08%)");
    free(svg);
}

static void test_differential(void)
{
    /* "stack before after": b grew by 10, c shrank by 5; widths from "after" */
    const char *in = "a;b 10 20\na;c 10 5\n";
    char *svg = render(in, NULL, NULL);
    T_EQ_STR(content(frame(svg, "b ("), "title"), "b (20 samples, 80.00%; +40.00%)");
    T_EQ_STR(content(frame(svg, "c ("), "title"), "c (5 samples, 20.00%; -20.00%)");
    T_EQ_STR(content(frame(svg, "a ("), "title"), "a (25 samples, 100.00%; 0.00%)");
    T_EQ_STR(content(frame(svg, "all ("), "title"), "all (25 samples, 100%)");
    T_EQ_STR(attr(frame(svg, "b ("), "rect", "width"), "944");
    /* the largest change is full red or blue, smaller ones paler, none white */
    T_EQ_STR(attr(frame(svg, "b ("), "rect", "fill"), "rgb(255,0,0)");
    T_EQ_STR(attr(frame(svg, "c ("), "rect", "fill"), "rgb(105,105,255)");
    T_EQ_STR(attr(frame(svg, "a ("), "rect", "fill"), "rgb(255,255,255)");
    free(svg);

    struct sc_svg_opts o;
    sc_svg_opts_init(&o);
    o.negate = 1;
    svg = render(in, &o, NULL);
    T_EQ_STR(content(frame(svg, "b ("), "title"), "b (20 samples, 80.00%; -40.00%)");
    T_EQ_STR(attr(frame(svg, "b ("), "rect", "fill"), "rgb(0,0,255)");
    T_EQ_STR(attr(frame(svg, "c ("), "rect", "fill"), "rgb(255,105,105)");
    free(svg);

    /* not a differential when asked so: plain colours, no delta */
    o.negate = 0;
    o.base_index = SC_SVG_BASE_NONE;
    svg = render(in, &o, NULL);
    T_EQ_STR(content(frame(svg, "b ("), "title"), "b (20 samples, 80.00%)");
    free(svg);
}

static void test_colours(void)
{
    /* the same name gets the same colour in unrelated graphs: flamegraph.pl's per-name
     * colours (these values are what flamegraph.pl prints) */
    char *one = render("a;b 3\n", NULL, NULL);
    char *two = render("x;y;a 1\nb 7\n", NULL, NULL);
    T_EQ_STR(attr(frame(one, "a ("), "rect", "fill"), "rgb(236,146,35)");
    T_EQ_STR(attr(frame(two, "a ("), "rect", "fill"), "rgb(236,146,35)");
    T_EQ_STR(attr(frame(one, "b ("), "rect", "fill"), "rgb(230,117,28)");
    T_EQ_STR(attr(frame(two, "b ("), "rect", "fill"), "rgb(230,117,28)");
    free(one);
    free(two);

    struct sc_svg_opts o;
    sc_svg_opts_init(&o);
    struct sc_set_value pv;
    char perr[SC_ERR_LEN];
    T_EQ_INT(sc_setting_parse(sc_setting(SC_SET_FLAME_COLORS), "java", NULL, &pv, perr), 0);
    o.palette = (enum sc_svg_palette)pv.i;
    T_EQ_INT(o.palette, SC_SVG_JAVA);
    char *svg = render("java/util/Map.get_[j] 1\nread_[k] 1\nstd::vector::at 1\nmain 1\n"
                       "inl_[i] 1\n",
                       &o, NULL);
    int r, g, b;
    /* jit: green; kernel: orange; C++: yellow; native: red; inlined: aqua */
    T_EQ_INT(sscanf(attr(frame(svg, "java/util/Map.get ("), "rect", "fill"), "rgb(%d,%d,%d)", &r,
                    &g, &b),
             3);
    T_CHECK(g >= 200 && r == b && r < 120);
    sscanf(attr(frame(svg, "read ("), "rect", "fill"), "rgb(%d,%d,%d)", &r, &g, &b);
    T_CHECK(r >= 190 && g >= 90 && g < 160 && b == 0);
    sscanf(attr(frame(svg, "std::vector::at ("), "rect", "fill"), "rgb(%d,%d,%d)", &r, &g, &b);
    T_CHECK(r == g && r >= 175 && b <= 70);
    sscanf(attr(frame(svg, "main ("), "rect", "fill"), "rgb(%d,%d,%d)", &r, &g, &b);
    T_CHECK(r >= 200 && g == b && g <= 130);
    sscanf(attr(frame(svg, "inl ("), "rect", "fill"), "rgb(%d,%d,%d)", &r, &g, &b);
    T_CHECK(r <= 110 && g == b && g >= 165);
    free(svg);

    /* separators are grey in every palette */
    svg = render("a;--;b 1\na;-;c 1\n", NULL, NULL);
    T_EQ_STR(attr(frame(svg, "-- ("), "rect", "fill"), "rgb(160,160,160)");
    T_EQ_STR(attr(frame(svg, "- ("), "rect", "fill"), "rgb(200,200,200)");
    free(svg);

    /* chain: frames after a "--" separator are wakers (aqua), the rest blue */
    o.palette = SC_SVG_CHAIN;
    svg = render("off;--;waker 1\n", &o, NULL);
    sscanf(attr(frame(svg, "off ("), "rect", "fill"), "rgb(%d,%d,%d)", &r, &g, &b);
    T_CHECK(r == g && b >= 205);
    sscanf(attr(frame(svg, "waker ("), "rect", "fill"), "rgb(%d,%d,%d)", &r, &g, &b);
    T_CHECK(g == b && g >= 165 && r <= 110);
    T_CHECK(strstr(svg, "stop-color=\"#e0e0ff\"") != NULL);
    free(svg);
}

static void test_empty(void)
{
    int n = -1;
    char *svg = render("# nothing here\n", NULL, &n);
    T_EQ_INT(n, 0);
    T_CHECK(svg && strstr(svg, "No data") != NULL);
    T_CHECK(svg && strstr(svg, "</svg>") != NULL);
    free(svg);
    /* only zero counts: nothing to draw either */
    svg = render("a 0\n", NULL, &n);
    T_EQ_INT(n, 0);
    free(svg);
}

static void test_options(void)
{
    struct sc_svg_opts o;
    char err[SC_ERR_LEN];
    sc_svg_opts_init(&o);
    T_EQ_INT(sc_svg_opts_check(&o, err), 0);
    o.bgcolors = "pink";
    T_EQ_INT(sc_svg_opts_check(&o, err), SC_EINVAL);
    o.bgcolors = "#a0b0c0";
    T_EQ_INT(sc_svg_opts_check(&o, err), 0);
    o.width = 5;
    T_EQ_INT(sc_svg_opts_check(&o, err), SC_EINVAL);
    sc_svg_opts_init(&o);
    o.notes = "a -- b";
    o.total = 40;
    o.factor = 2;
    char *svg = render("a 10\n", &o, NULL);
    /* --total: the frames take a quarter of the width; --factor: shown counts doubled */
    T_EQ_STR(attr(frame(svg, "a ("), "rect", "width"), "295");
    T_EQ_STR(content(frame(svg, "a ("), "title"), "a (20 samples, 25.00%)");
    T_EQ_STR(content(frame(svg, "all ("), "title"), "all (80 samples, 100%)");
    T_CHECK(strstr(svg, "<!-- a - - b -->") != NULL);
    T_EQ_INT(count(svg, "<script"), 1);
    free(svg);
}

static void test_pprof_units(void)
{
    /* a hand-made profile whose value is in bytes: the count name follows the unit */
    struct sc_profile *p = sc_profile_new();
    char err[SC_ERR_LEN];
    T_CHECK(sc_profile_add_sample_type(p, "alloc_space", "bytes") == 0);
    int64_t name = sc_profile_intern(p, "malloc", 6);
    int64_t fn = sc_profile_add_function(p, (uint32_t)name, 0);
    int64_t loc = sc_profile_add_simple_location(p, (uint32_t)fn);
    uint32_t locs[1] = {(uint32_t)loc};
    int64_t v = 4096;
    T_CHECK(sc_profile_add_sample(p, locs, 1, &v, 0) >= 0);
    struct sc_svg_opts o;
    sc_svg_opts_init(&o);
    struct sc_buf b = SC_BUF_INIT;
    T_EQ_INT(sc_svg_write(p, 0, &o, &b, err), 2);
    T_CHECK(b.data && strstr(b.data, "<title>malloc (4,096 bytes, 100.00%)</title>") != NULL);
    sc_buf_release(&b);
    T_EQ_INT(sc_svg_write(p, 3, &o, &b, err), SC_EINVAL);
    sc_buf_release(&b);
    sc_profile_free(p);
}

int main(void)
{
    T_RUN(test_widths_proportional);
    T_RUN(test_self_time_left_of_children);
    T_RUN(test_alphabetical_order);
    T_RUN(test_min_width);
    T_RUN(test_inverted);
    T_RUN(test_reverse);
    T_RUN(test_flamechart);
    T_RUN(test_escaping);
    T_RUN(test_labels);
    T_RUN(test_thousands);
    T_RUN(test_differential);
    T_RUN(test_colours);
    T_RUN(test_empty);
    T_RUN(test_options);
    T_RUN(test_pprof_units);
    return t_done();
}
