/* svg.c - standalone interactive SVG flame graphs (flamegraph.pl's output, faster). */
#include "formats/svg.h"
#include "model/error.h"
#include "model/setting.h"
#include "model/stackwalk.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Geometry, in px, as flamegraph.pl lays it out so graphs look the same side by side. */
#define XPAD 10.0    /* left and right margin */
#define FRAMEPAD 1.0 /* vertical gap between frames */
#define SEARCH_FILL "rgb(230,0,230)"

void sc_svg_opts_init(struct sc_svg_opts *o)
{
    memset(o, 0, sizeof *o);
    o->width = 1200;
    o->frame_height = 16;
    o->font_size = 12;
    o->font_width = 0.59;
    o->min_width = 0.1;
    o->palette = SC_SVG_HOT;
    o->base_index = SC_SVG_BASE_AUTO;
    o->factor = 1;
}

/* Background gradient stops for a bgcolors name; 0 when the name is unknown. */
static int background(const char *name, enum sc_svg_palette pal, const char **c1, const char **c2)
{
    if (!name || !*name) {
        if (pal == SC_SVG_MEM)
            name = "green";
        else if (pal == SC_SVG_IO || pal == SC_SVG_WAKEUP || pal == SC_SVG_CHAIN)
            name = "blue";
        else if (pal >= SC_SVG_RED)
            name = "grey";
        else
            name = "yellow";
    }
    if (!strcmp(name, "yellow")) {
        *c1 = "#eeeeee";
        *c2 = "#eeeeb0";
    } else if (!strcmp(name, "blue")) {
        *c1 = "#eeeeee";
        *c2 = "#e0e0ff";
    } else if (!strcmp(name, "green")) {
        *c1 = "#eef2ee";
        *c2 = "#e0ffe0";
    } else if (!strcmp(name, "grey") || !strcmp(name, "gray")) {
        *c1 = "#f8f8f8";
        *c2 = "#e8e8e8";
    } else if (name[0] == '#' && strlen(name) == 7 &&
               strspn(name + 1, "0123456789abcdefABCDEF") == 6) {
        *c1 = *c2 = name;
    } else {
        return 0;
    }
    return 1;
}

int sc_svg_opts_check(const struct sc_svg_opts *o, char *err)
{
    const char *c1, *c2;
    /* the bounds of flamegraph's flags (model/settings.def), for callers that set them in
     * code; the width's 30 leaves room for the padding (3 * XPAD) */
    int rc;
    if ((rc = sc_setting_check(SC_SET_FLAME_WIDTH, o->width, 0, err)) ||
        (rc = sc_setting_check(SC_SET_FLAME_HEIGHT, o->frame_height, 0, err)) ||
        (rc = sc_setting_check(SC_SET_FLAME_FONTSIZE, 0, o->font_size, err)) ||
        (rc = sc_setting_check(SC_SET_FLAME_FONTWIDTH, 0, o->font_width, err)) ||
        (rc = sc_setting_check(SC_SET_FLAME_FACTOR, 0, o->factor, err)) ||
        (rc = sc_setting_check(SC_SET_FLAME_TOTAL, o->total, 0, err)))
        return rc;
    if (!(o->min_width >= 0 && o->min_width < 1e12))
        return sc_errf(err, SC_EINVAL, "min width must be a number >= 0");
    if ((unsigned)o->palette > SC_SVG_ORANGE)
        return sc_errf(err, SC_EINVAL, "unknown palette %d", (int)o->palette);
    if (!background(o->bgcolors, o->palette, &c1, &c2))
        return sc_errf(err, SC_EINVAL,
                       "unknown background colors '%s' (yellow, blue, green, grey or #rrggbb)",
                       o->bgcolors);
    if (o->total < 0)
        return sc_errf(err, SC_EINVAL, "total must be >= 0");
    return 0;
}

/* ---- text ---- */

/* Decodes one UTF-8 character of s[0..n) (n > 0) that XML 1.0 may carry. Returns its
 * length, or 0 when the bytes are not valid UTF-8 or the character is not allowed. */
static size_t utf8_char(const unsigned char *s, size_t n, uint32_t *cp)
{
    unsigned c = s[0];
    if (c < 0x80) {
        *cp = c;
        return c >= 0x20 || c == '\t' ? 1 : 0;
    }
    size_t len;
    uint32_t v, min;
    if (c >= 0xc2 && c <= 0xdf) {
        len = 2;
        v = c & 0x1f;
        min = 0x80;
    } else if (c >= 0xe0 && c <= 0xef) {
        len = 3;
        v = c & 0x0f;
        min = 0x800;
    } else if (c >= 0xf0 && c <= 0xf4) {
        len = 4;
        v = c & 0x07;
        min = 0x10000;
    } else {
        return 0;
    }
    if (n < len)
        return 0;
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return 0;
        v = v << 6 | (s[i] & 0x3f);
    }
    if (v < min || v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff) || v == 0xfffe || v == 0xffff)
        return 0;
    *cp = v;
    return len;
}

/* Appends s as XML character data: & < > " ' escaped; bytes that are not valid UTF-8 and
 * characters XML 1.0 forbids (control characters) become U+FFFD, so any name gives a
 * well-formed document. Returns the number of characters written. */
static uint32_t put_xml(struct sc_buf *b, const char *str, size_t n)
{
    const unsigned char *s = (const unsigned char *)str;
    size_t run = 0, i = 0;
    uint32_t chars = 0;
    while (i < n) {
        unsigned c = s[i];
        if (c >= 0x20 && c < 0x80 && c != '&' && c != '<' && c != '>' && c != '"' && c != '\'') {
            i++;
            chars++;
            continue;
        }
        const char *rep = NULL;
        size_t len = 1;
        uint32_t cp;
        switch (c) {
        case '&':
            rep = "&amp;";
            break;
        case '<':
            rep = "&lt;";
            break;
        case '>':
            rep = "&gt;";
            break;
        case '"':
            rep = "&quot;";
            break;
        case '\'':
            rep = "&#39;";
            break;
        default:
            len = utf8_char(s + i, n - i, &cp);
            if (len == 0) {
                rep = "\xef\xbf\xbd";
                len = 1;
            }
        }
        chars++;
        if (!rep) {
            i += len;
            continue;
        }
        sc_buf_append(b, s + run, i - run);
        sc_buf_puts(b, rep);
        i += len;
        run = i;
    }
    sc_buf_append(b, s + run, n - run);
    return chars;
}

/* Length in bytes of the first `chars` characters of escaped text e (an entity counts as
 * one character). */
static size_t esc_prefix(const char *e, size_t n, uint32_t chars)
{
    size_t i = 0;
    while (i < n && chars > 0) {
        if (e[i] == '&') {
            const char *semi = memchr(e + i, ';', n - i);
            i = semi ? (size_t)(semi - e) + 1 : n;
        } else {
            i++;
            while (i < n && ((unsigned char)e[i] & 0xc0) == 0x80)
                i++;
        }
        chars--;
    }
    return i;
}

/* Length of name without a trailing "_[k]", "_[w]", "_[i]" or "_[j]" annotation, which
 * the stackcollapse scripts add for palettes and flamegraph.pl hides. */
static size_t strip_annotation(const char *s, size_t n)
{
    if (n >= 4 && s[n - 4] == '_' && s[n - 3] == '[' && s[n - 1] == ']' &&
        strchr("kwij", s[n - 2]) && s[n - 2])
        return n - 4;
    return n;
}

/* ---- numbers ---- */

static char *put_u64(char *p, uint64_t v)
{
    char tmp[24];
    char *e = tmp + sizeof tmp, *q = e;
    do {
        *--q = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    memcpy(p, q, (size_t)(e - q));
    return p + (e - q);
}

/* 1234567 as "1,234,567". */
static char *put_u64_commas(char *p, uint64_t v)
{
    char tmp[32];
    char *e = tmp + sizeof tmp, *q = e;
    int digits = 0;
    do {
        if (digits && digits % 3 == 0)
            *--q = ',';
        *--q = (char)('0' + v % 10);
        v /= 10;
        digits++;
    } while (v);
    memcpy(p, q, (size_t)(e - q));
    return p + (e - q);
}

/* v rounded to dec (0..4) decimals; trailing zeros dropped when trim is set. */
static char *put_fixed(char *p, double v, int dec, int trim)
{
    static const double scale[] = {1, 10, 100, 1000, 10000};
    if (!(v > -9e15 && v < 9e15))
        v = 0;
    double sv = v * scale[dec];
    int64_t q = (int64_t)llround(sv);
    if (q < 0) {
        *p++ = '-';
        q = -q;
    } else if (sv < 0 && !trim) {
        *p++ = '-'; /* -0.001 prints as "-0.00", as printf does */
    }
    uint64_t ip = (uint64_t)q / (uint64_t)scale[dec], fp = (uint64_t)q % (uint64_t)scale[dec];
    p = put_u64(p, ip);
    if (dec == 0 || (trim && fp == 0))
        return p;
    char f[4] = {0};
    for (int i = dec - 1; i >= 0; i--) {
        f[i] = (char)('0' + fp % 10);
        fp /= 10;
    }
    int nd = dec;
    if (trim)
        while (nd > 0 && f[nd - 1] == '0')
            nd--;
    *p++ = '.';
    memcpy(p, f, (size_t)nd);
    return p + nd;
}

/* A percentage with two decimals, rounded exactly as printf's %.2f (and so flamegraph.pl)
 * rounds: ties are decided by the double's exact binary value. */
static char *put_pct(char *p, double v)
{
    char tmp[64];
    int n = snprintf(tmp, sizeof tmp, "%.2f", v);
    if (n < 0 || (size_t)n >= sizeof tmp)
        n = 0;
    memcpy(p, tmp, (size_t)n);
    return p + n;
}

static char *put_str(char *p, const char *s, size_t n)
{
    memcpy(p, s, n);
    return p + n;
}

#define PUT_LIT(p, lit) put_str((p), (lit), sizeof(lit) - 1)

/* ---- colours ---- */

/* The hue families of flamegraph.pl's palettes. */
enum hue { H_HOT, H_MEM, H_IO, H_RED, H_GREEN, H_BLUE, H_YELLOW, H_PURPLE, H_AQUA, H_ORANGE };

/* Code point at s (lenient: a byte that does not start valid UTF-8 stands for itself). */
static size_t next_cp(const unsigned char *s, size_t n, uint32_t *cp)
{
    size_t len = utf8_char(s, n, cp);
    if (len)
        return len;
    *cp = s[0];
    return 1;
}

/* flamegraph.pl's default colours are "random" but seeded per name: Perl's srand() with
 * the sum of the name's code points, then one rand(). Perl's rand is the drand48 LCG, so
 * the same arithmetic gives the same colours as flamegraph.pl, stable across graphs. */
static double seeded_rand(const char *name, size_t n)
{
    const unsigned char *s = (const unsigned char *)name;
    uint32_t sum = 0;
    for (size_t i = 0; i < n;) {
        uint32_t cp;
        i += next_cp(s + i, n - i, &cp);
        sum += cp;
    }
    uint64_t x = ((uint64_t)sum << 16) + 0x330e;
    x = (x * 0x5deece66dULL + 0xb) & 0xffffffffffffULL;
    return ldexp((double)x, -48);
}

/* flamegraph.pl's --hash: a value in [0, 1] from the first three characters (after a
 * "module`" prefix), weighting earlier characters more. */
static double weighted_hash(const uint32_t *cp, size_t n)
{
    size_t start = 0;
    for (size_t i = 1; i < n; i++)
        if (cp[i] == '`') {
            start = i + 1;
            break;
        }
    double vector = 0, weight = 1, max = 1;
    uint32_t mod = 10;
    for (size_t i = start; i < n && mod <= 12; i++, mod++) {
        vector += (double)(cp[i] % mod) / (double)(mod - 1) * weight;
        max += weight;
        weight *= 0.70;
    }
    return 1 - vector / max;
}

static int name_hash_values(const char *name, size_t n, double v[3])
{
    uint32_t small[256] = {0}, *cp = small;
    if (n > 256 && !(cp = malloc(n * sizeof *cp)))
        return SC_ENOMEM;
    size_t m = 0;
    for (size_t i = 0; i < n;)
        i += next_cp((const unsigned char *)name + i, n - i, &cp[m++]);
    v[0] = weighted_hash(cp, m);
    for (size_t i = 0; i < m / 2; i++) {
        uint32_t t = cp[i];
        cp[i] = cp[m - 1 - i];
        cp[m - 1 - i] = t;
    }
    v[1] = v[2] = weighted_hash(cp, m);
    if (cp != small)
        free(cp);
    return 0;
}

static int has(const char *s, size_t n, const char *needle)
{
    size_t k = strlen(needle);
    return k <= n && memmem(s, n, needle, k) != NULL;
}

static int ends_with(const char *s, size_t n, const char *suffix)
{
    size_t k = strlen(suffix);
    return k <= n && memcmp(s + n - k, suffix, k) == 0;
}

/* Java code by package prefix, optionally with the "L" of a type signature. */
static int java_package(const char *s, size_t n)
{
    static const char *const pk[] = {"java/", "javax/", "jdk/", "net/",
                                     "org/",  "com/",   "io/",  "sun/"};
    if (n > 0 && s[0] == 'L') {
        s++;
        n--;
    }
    for (size_t i = 0; i < sizeof pk / sizeof pk[0]; i++)
        if (n >= strlen(pk[i]) && memcmp(s, pk[i], strlen(pk[i])) == 0)
            return 1;
    return 0;
}

/* The hue of a frame called s under palette pal (chain wakers are decided by the caller). */
static enum hue hue_of(enum sc_svg_palette pal, const char *s, size_t n)
{
    switch (pal) {
    case SC_SVG_HOT:
        return H_HOT;
    case SC_SVG_MEM:
        return H_MEM;
    case SC_SVG_IO:
        return H_IO;
    case SC_SVG_JAVA:
        if (ends_with(s, n, "_[j]"))
            return H_GREEN;
        if (ends_with(s, n, "_[i]"))
            return H_AQUA;
        if (java_package(s, n) || has(s, n, ":::"))
            return H_GREEN;
        if (has(s, n, "::"))
            return H_YELLOW;
        if (ends_with(s, n, "_[k]"))
            return H_ORANGE;
        return H_RED;
    case SC_SVG_PERL:
        if (has(s, n, "::"))
            return H_YELLOW;
        if (has(s, n, "Perl") || has(s, n, ".pl"))
            return H_GREEN;
        if (ends_with(s, n, "_[k]"))
            return H_ORANGE;
        return H_RED;
    case SC_SVG_JS: {
        if (ends_with(s, n, "_[j]"))
            return memchr(s, '/', n) ? H_GREEN : H_AQUA;
        if (has(s, n, "::"))
            return H_YELLOW;
        const char *slash = memchr(s, '/', n);
        if (slash && has(slash, n - (size_t)(slash - s), ".js"))
            return H_GREEN;
        if (memchr(s, ':', n))
            return H_AQUA;
        if (n == 1 && s[0] == ' ')
            return H_GREEN;
        if (has(s, n, "_[k]"))
            return H_ORANGE;
        return H_RED;
    }
    case SC_SVG_WAKEUP:
        return H_AQUA;
    case SC_SVG_CHAIN:
        return has(s, n, "_[w]") ? H_AQUA : H_BLUE;
    case SC_SVG_RED:
        return H_RED;
    case SC_SVG_GREEN:
        return H_GREEN;
    case SC_SVG_BLUE:
        return H_BLUE;
    case SC_SVG_AQUA:
        return H_AQUA;
    case SC_SVG_YELLOW:
        return H_YELLOW;
    case SC_SVG_PURPLE:
        return H_PURPLE;
    case SC_SVG_ORANGE:
        return H_ORANGE;
    }
    return H_HOT;
}

static char *put_rgb(char *p, int r, int g, int b)
{
    p = PUT_LIT(p, "rgb(");
    p = put_u64(p, (uint64_t)r);
    *p++ = ',';
    p = put_u64(p, (uint64_t)g);
    *p++ = ',';
    p = put_u64(p, (uint64_t)b);
    *p++ = ')';
    return p;
}

/* The shades of flamegraph.pl's palettes: v[0..2] in [0, 1) pick a point in a hue's range. */
static char *put_hue(char *p, enum hue h, const double v[3])
{
    double v1 = v[0], v2 = v[1], v3 = v[2];
    switch (h) {
    case H_HOT:
        return put_rgb(p, 205 + (int)(50 * v3), (int)(230 * v1), (int)(55 * v2));
    case H_MEM:
        return put_rgb(p, 0, 190 + (int)(50 * v2), (int)(210 * v1));
    case H_IO: {
        int x = 80 + (int)(60 * v1);
        return put_rgb(p, x, x, 190 + (int)(55 * v2));
    }
    case H_RED: {
        int x = 50 + (int)(80 * v1);
        return put_rgb(p, 200 + (int)(55 * v1), x, x);
    }
    case H_GREEN: {
        int x = 50 + (int)(60 * v1);
        return put_rgb(p, x, 200 + (int)(55 * v1), x);
    }
    case H_BLUE: {
        int x = 80 + (int)(60 * v1);
        return put_rgb(p, x, x, 205 + (int)(50 * v1));
    }
    case H_YELLOW: {
        int x = 175 + (int)(55 * v1);
        return put_rgb(p, x, x, 50 + (int)(20 * v1));
    }
    case H_PURPLE: {
        int x = 190 + (int)(65 * v1);
        return put_rgb(p, x, 80 + (int)(60 * v1), x);
    }
    case H_AQUA:
        return put_rgb(p, 50 + (int)(60 * v1), 165 + (int)(55 * v1), 165 + (int)(55 * v1));
    case H_ORANGE:
        return put_rgb(p, 190 + (int)(65 * v1), 90 + (int)(65 * v1), 0);
    }
    return put_rgb(p, 0, 0, 0);
}

/* Differential shading: white for no change, red for growth, blue for shrinkage, deeper
 * as the change nears the largest one. */
static char *put_delta_color(char *p, int64_t delta, int64_t maxdelta, int negate)
{
    double v = (double)(negate ? -delta : delta), max = (double)maxdelta;
    int r = 255, g = 255, b = 255;
    if (v > 0)
        g = b = (int)(210 * (max - v) / max);
    else if (v < 0)
        r = g = (int)(210 * (max + v) / max);
    return put_rgb(p, r, g, b);
}

/* ---- rendering ---- */

/* What a frame name looks like in the output, computed once per name. */
struct name_info {
    uint32_t off, len; /* escaped display name in render.esc */
    uint32_t chars;    /* its characters */
    uint8_t ready;
    uint8_t special; /* 1: "--" (separator), 2: "-" */
    uint8_t hue;
    double v[3];
    double vw[3]; /* chain palette: v of the name as a waker, with "_[w]" appended */
};

#define ROOT_NAME UINT32_MAX /* frame.name of the root frame, "all" */

/* A frame to draw: name (a rank, see render.order), depth (root 0), its place and width in
 * value units, and for differentials its own change. */
struct frame {
    uint32_t name, depth;
    int64_t start, total, delta;
};

/* One stack to merge: frames seq[off..off+len) root first, as name ranks. */
struct stack {
    size_t off;
    uint32_t len;
    int64_t value, delta;
};

struct render {
    const struct sc_svg_opts *o;
    int diff;
    /* stacks */
    struct sc_arena arena;
    struct sc_strtab names;
    uint32_t *order; /* rank -> names index: names sorted by their bytes */
    uint32_t *seq;
    size_t nseq;
    uint32_t seq_cap;
    struct stack *stacks;
    size_t nstacks;
    uint32_t stacks_cap;
    int64_t sum, dsum, maxdelta; /* sums of the values and of the changes' magnitudes */
    /* frames */
    struct frame *frames;
    size_t nframes;
    uint32_t frames_cap;
    uint32_t depthmax;
    struct name_info *info; /* per rank, plus the root last */
    struct sc_buf esc;      /* escaped names */
    const char *countname;
    char unit[64]; /* countname from the sample type's unit */
};

static int cmp_name_idx(const void *a, const void *b, void *names)
{
    const struct sc_str *x = (const struct sc_str *)names + *(const uint32_t *)a;
    const struct sc_str *y = (const struct sc_str *)names + *(const uint32_t *)b;
    size_t n = x->len < y->len ? x->len : y->len;
    int c = memcmp(x->ptr, y->ptr, n);
    if (c)
        return c;
    return x->len < y->len ? -1 : x->len > y->len;
}

/* Sorts the names by their bytes: r->order maps rank to name index; returns the inverse
 * (name index to rank), which the caller frees, or NULL when out of memory. */
static uint32_t *rank_names(struct render *r)
{
    uint32_t nn = r->names.n;
    uint32_t *rank = malloc((nn ? nn : 1) * sizeof *rank);
    r->order = malloc((nn ? nn : 1) * sizeof *r->order);
    if (!rank || !r->order) {
        free(rank);
        return NULL;
    }
    for (uint32_t i = 0; i < nn; i++)
        r->order[i] = i;
    qsort_r(r->order, nn, sizeof *r->order, cmp_name_idx, r->names.v);
    for (uint32_t i = 0; i < nn; i++)
        rank[r->order[i]] = i;
    return rank;
}

/* Whether sample s goes in the graph, and its value and change. */
static int sample_values(const struct sc_profile *p, uint32_t s, int vi, int base, int64_t *v,
                         int64_t *d)
{
    const int64_t *vals = p->values + (size_t)s * p->nsample_types;
    *v = vals[vi] > 0 ? vals[vi] : 0;
    *d = base >= 0 ? *v - (vals[base] > 0 ? vals[base] : 0) : 0;
    return *v != 0 || *d != 0;
}

static int add_stack(struct render *r, uint32_t len, int64_t v, int64_t d)
{
    /* bounding the sums bounds every frame's width and change */
    int64_t dabs = d < 0 ? -d : d;
    if (v > INT64_MAX - r->sum || dabs > INT64_MAX - r->dsum)
        return SC_ELIMIT;
    r->dsum += dabs;
    if (sc_grow_array(&r->stacks, &r->stacks_cap, (uint64_t)r->nstacks + 1, sizeof *r->stacks))
        return SC_ENOMEM;
    r->stacks[r->nstacks++] = (struct stack){r->nseq, len, v, d};
    r->nseq += len;
    r->sum += v;
    return 0;
}

/* Collects every sample with a value (or, for differentials, a change) as a stack of name
 * ranks, root first (leaf first with --reverse). The common case, one function per
 * location (folded and perf input, pprof without inlining), maps locations to ranks once;
 * anything else goes through the generic stack walk. */
static int collect(struct render *r, const struct sc_profile *p, int vi, int base)
{
    int simple = 1;
    for (uint32_t l = 0; l < p->nlocations && simple; l++) {
        const struct sc_location *loc = &p->locations[l];
        simple = loc->nlines == 1 && sc_location_lines(p, loc)[0].function != 0;
    }
    int64_t v, d;
    int rc = 0;
    uint32_t *rank = NULL;
    if (simple) {
        uint32_t *loc_rank = malloc(((size_t)p->nlocations + 1) * sizeof *loc_rank);
        if (!loc_rank)
            return SC_ENOMEM;
        for (uint32_t l = 0; l < p->nlocations; l++) {
            const struct sc_line *line = sc_location_lines(p, &p->locations[l]);
            struct sc_str name = sc_function_name(p, line->function - 1);
            int64_t id = sc_strtab_intern(&r->names, name.ptr, name.len);
            if (id < 0) {
                free(loc_rank);
                return (int)id;
            }
            loc_rank[l] = (uint32_t)id;
        }
        if (!(rank = rank_names(r))) {
            free(loc_rank);
            return SC_ENOMEM;
        }
        for (uint32_t l = 0; l < p->nlocations; l++)
            loc_rank[l] = rank[loc_rank[l]];
        if (sc_grow_array(&r->seq, &r->seq_cap, (uint64_t)p->nsample_locs, sizeof *r->seq))
            rc = SC_ENOMEM;
        for (uint32_t s = 0; s < p->nsamples && !rc; s++) {
            if (!sample_values(p, s, vi, base, &v, &d))
                continue;
            const struct sc_sample *smp = &p->samples[s];
            const uint32_t *locs = p->sample_locs + smp->loc_start;
            uint32_t n = smp->nlocs;
            if (sc_grow_array(&r->seq, &r->seq_cap, (uint64_t)r->nseq + n, sizeof *r->seq)) {
                rc = SC_ENOMEM;
                break;
            }
            uint32_t *dst = r->seq + r->nseq;
            if (r->o->reverse)
                for (uint32_t i = 0; i < n; i++)
                    dst[i] = loc_rank[locs[i]];
            else
                for (uint32_t i = 0; i < n; i++)
                    dst[i] = loc_rank[locs[n - 1 - i]];
            rc = add_stack(r, n, v, d);
        }
        free(loc_rank);
        free(rank);
        return rc;
    }

    struct sc_stackwalk w;
    if ((rc = sc_stackwalk_init(&w, p, &r->names)))
        return rc;
    for (uint32_t s = 0; s < p->nsamples && !rc; s++) {
        if (!sample_values(p, s, vi, base, &v, &d))
            continue;
        int64_t n = sc_stackwalk_sample(&w, s);
        if (n < 0) {
            rc = (int)n;
            break;
        }
        if (sc_grow_array(&r->seq, &r->seq_cap, (uint64_t)r->nseq + n, sizeof *r->seq)) {
            rc = SC_ENOMEM;
            break;
        }
        uint32_t *dst = r->seq + r->nseq;
        if (r->o->reverse)
            for (int64_t i = 0; i < n; i++)
                dst[i] = w.frames[n - 1 - i];
        else
            memcpy(dst, w.frames, (size_t)n * sizeof *dst);
        rc = add_stack(r, (uint32_t)n, v, d);
    }
    sc_stackwalk_release(&w);
    if (rc)
        return rc;
    if (!(rank = rank_names(r)))
        return SC_ENOMEM;
    for (size_t i = 0; i < r->nseq; i++)
        r->seq[i] = rank[r->seq[i]];
    free(rank);
    return 0;
}

/* Stacks in lexicographic order of their frames, a prefix before its extensions. */
static int cmp_stack(const void *a, const void *b, void *seq)
{
    const struct stack *x = a, *y = b;
    const uint32_t *s = (const uint32_t *)seq + x->off, *t = (const uint32_t *)seq + y->off;
    uint32_t n = x->len < y->len ? x->len : y->len;
    for (uint32_t i = 0; i < n; i++)
        if (s[i] != t[i])
            return s[i] < t[i] ? -1 : 1;
    return x->len < y->len ? -1 : x->len > y->len;
}

static int add_frame(struct render *r, uint32_t name, uint32_t depth, int64_t start, int64_t total,
                     int64_t delta)
{
    if (sc_grow_array(&r->frames, &r->frames_cap, (uint64_t)r->nframes + 1, sizeof *r->frames))
        return SC_ENOMEM;
    r->frames[r->nframes++] = (struct frame){name, depth, start, total, delta};
    if (depth > r->depthmax)
        r->depthmax = depth;
    return 0;
}

static int cmp_frame(const void *a, const void *b)
{
    const struct frame *x = a, *y = b;
    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    return x->depth < y->depth ? -1 : x->depth > y->depth;
}

/* Merges the stacks into frames the way flamegraph.pl does, without building a tree: in
 * sorted order (flame charts: sample order) every frame is one run of consecutive stacks
 * sharing a prefix. A running clock gives each frame its start when it opens and its
 * width when it closes; only frames at least min_value wide are kept, so memory follows
 * what is drawn, not the size of the input. The frames come out in pre-order (a frame,
 * then its children left to right), the order the viewer's search relies on. */
static int flow(struct render *r, double min_value)
{
    uint32_t depth_cap = 0;
    for (size_t i = 0; i < r->nstacks; i++)
        if (r->stacks[i].len > depth_cap)
            depth_cap = r->stacks[i].len;
    uint32_t *name = malloc(((size_t)depth_cap + 1) * sizeof *name);
    int64_t *start = malloc(((size_t)depth_cap + 1) * sizeof *start);
    int64_t *delta = malloc(((size_t)depth_cap + 1) * sizeof *delta);
    int rc = SC_ENOMEM;
    if (!name || !start || !delta)
        goto out;
    int64_t clock = 0, root_delta = 0, maxdelta = 1;
    uint32_t open = 0; /* frames open below the root: depths 1..open at indexes 0..open-1 */
    const uint32_t *prev = NULL;
    for (size_t i = 0; i <= r->nstacks; i++) {
        const struct stack *st = i < r->nstacks ? &r->stacks[i] : NULL;
        const uint32_t *s = st ? r->seq + st->off : NULL;
        uint32_t n = st ? st->len : 0, k = 0;
        if (prev) {
            uint32_t m = n < open ? n : open;
            while (k < m && prev[k] == s[k])
                k++;
        }
        while (open > k) {
            open--;
            int64_t total = clock - start[open], d = delta[open];
            if ((d < 0 ? -d : d) > maxdelta)
                maxdelta = d < 0 ? -d : d;
            if (total > 0 && !((double)total < min_value) &&
                add_frame(r, name[open], open + 1, start[open], total, d))
                goto out;
        }
        if (!st)
            break;
        for (uint32_t j = k; j < n; j++) {
            name[j] = s[j];
            start[j] = clock;
            delta[j] = 0;
        }
        open = n;
        prev = s;
        clock += st->value;
        if (n)
            delta[n - 1] += st->delta;
        else
            root_delta += st->delta;
    }
    if ((root_delta < 0 ? -root_delta : root_delta) > maxdelta)
        maxdelta = root_delta < 0 ? -root_delta : root_delta;
    if (add_frame(r, ROOT_NAME, 0, 0, clock, root_delta))
        goto out;
    r->maxdelta = maxdelta;
    /* frames closed children first; ordering by start, then depth, gives pre-order */
    qsort(r->frames, r->nframes, sizeof *r->frames, cmp_frame);
    rc = 0;
out:
    free(name);
    free(start);
    free(delta);
    return rc;
}

/* The values that pick a name's shade within its hue. */
static void shades(const struct render *r, const char *name, size_t n, double v[3])
{
    if (!r->o->hash) {
        v[0] = v[1] = v[2] = seeded_rand(name, n);
    } else if (name_hash_values(name, n, v)) {
        v[0] = v[1] = v[2] = 0;
    }
}

static const struct name_info *name_info(struct render *r, uint32_t rank)
{
    int root = rank == ROOT_NAME;
    struct name_info *in = &r->info[root ? r->names.n : rank];
    if (in->ready)
        return in;
    struct sc_str s = root ? (struct sc_str){"", 0} : r->names.v[r->order[rank]];
    const char *disp = root ? "all" : s.ptr;
    size_t dlen = root ? 3 : strip_annotation(s.ptr, s.len);
    size_t off = r->esc.len;
    in->chars = put_xml(&r->esc, disp, dlen);
    in->off = (uint32_t)off;
    in->len = (uint32_t)(r->esc.len - off);
    in->special = (s.len == 2 && !memcmp(s.ptr, "--", 2)) ? 1
                  : (s.len == 1 && s.ptr[0] == '-')       ? 2
                                                          : 0;
    in->hue = (uint8_t)hue_of(r->o->palette, s.ptr, s.len);
    shades(r, s.ptr, s.len, in->v);
    if (r->o->palette == SC_SVG_CHAIN) {
        /* flamegraph.pl renames frames after a "--" to name_[w] and colours that name */
        char *w = malloc((size_t)s.len + 4);
        if (w) {
            memcpy(w, s.ptr, s.len);
            /* NOLINTNEXTLINE(bugprone-not-null-terminated-result): w goes with its length */
            memcpy(w + s.len, "_[w]", 4);
            shades(r, w, (size_t)s.len + 4, in->vw);
            free(w);
        } else {
            memcpy(in->vw, in->v, sizeof in->v);
        }
    }
    in->ready = 1;
    return in;
}

static void put_attr(struct sc_buf *b, const char *name, const char *value)
{
    sc_buf_putc(b, ' ');
    sc_buf_puts(b, name);
    sc_buf_puts(b, "=\"");
    put_xml(b, value, strlen(value));
    sc_buf_putc(b, '"');
}

static void put_num(struct sc_buf *b, double v, int dec)
{
    char tmp[48];
    sc_buf_append(b, tmp, (size_t)(put_fixed(tmp, v, dec, 1) - tmp));
}

/* A <text> element with an id at (x, y). */
static void put_label(struct sc_buf *b, const char *id, double x, double y, const char *extra,
                      const char *text)
{
    sc_buf_printf(b, "<text id=\"%s\" x=\"", id);
    put_num(b, x, 2);
    sc_buf_puts(b, "\" y=\"");
    put_num(b, y, 2);
    sc_buf_printf(b, "\"%s>", extra);
    put_xml(b, text, strlen(text));
    sc_buf_puts(b, "</text>\n");
}

static void put_comment(struct sc_buf *b, const char *text)
{
    struct sc_buf t = SC_BUF_INIT;
    put_xml(&t, text, strlen(text));
    sc_buf_puts(b, "<!-- ");
    /* "--" may not occur inside an XML comment */
    for (size_t i = 0; i < t.len; i++) {
        sc_buf_putc(b, t.data[i]);
        if (t.data[i] == '-' && (i + 1 == t.len || t.data[i + 1] == '-'))
            sc_buf_putc(b, ' ');
    }
    sc_buf_puts(b, " -->\n");
    if (t.oom)
        b->oom = 1;
    sc_buf_release(&t);
}

static void put_svg_open(struct sc_buf *b, double w, double h)
{
    sc_buf_puts(b, "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n"
                   "<svg version=\"1.1\" width=\"");
    put_num(b, w, 2);
    sc_buf_puts(b, "\" height=\"");
    put_num(b, h, 2);
    sc_buf_puts(b, "\" viewBox=\"0 0 ");
    put_num(b, w, 2);
    sc_buf_putc(b, ' ');
    put_num(b, h, 2);
    sc_buf_puts(b, "\" xmlns=\"http://www.w3.org/2000/svg\" "
                   "xmlns:xlink=\"http://www.w3.org/1999/xlink\"");
}

static int write_empty(const struct sc_svg_opts *o, struct sc_buf *out)
{
    double w = o->width, h = o->font_size * 5;
    put_svg_open(out, w, h);
    sc_buf_puts(out, ">\n<!-- scorch flame graph -->\n");
    if (o->notes)
        put_comment(out, o->notes);
    sc_buf_puts(out, "<text x=\"");
    put_num(out, (double)(int)(w / 2), 2);
    sc_buf_puts(out, "\" y=\"");
    put_num(out, o->font_size * 2, 2);
    sc_buf_puts(out, "\" text-anchor=\"middle\" font-size=\"");
    put_num(out, o->font_size, 2);
    sc_buf_puts(out, "px\"");
    put_attr(out, "font-family", o->fonttype ? o->fonttype : "Verdana");
    sc_buf_puts(out, ">No data: the input has no stack samples to draw.</text>\n</svg>\n");
    return out->oom ? SC_ENOMEM : 0;
}

/* The embedded viewer. Frames carry data-s (start), data-n (value) and data-d (depth) in
 * value units, so zoom and search work on exact integers, not on rounded pixels. */
static const char viewer_js[] =
    "\"use strict\";\n"
    "(function () {\n"
    "var doc = document, frames = doc.getElementById(\"frames\"), svg = frames.ownerSVGElement;\n"
    "function $(id) { return doc.getElementById(id); }\n"
    "function attr(e, k) { return e.getAttribute(k); }\n"
    "var XPAD = 10, W = +attr(svg, \"width\"), INNER = W - 2 * XPAD;\n"
    "var CHAR = +attr(svg, \"data-fontsize\") * +attr(svg, \"data-fontwidth\");\n"
    "var NAMETYPE = attr(svg, \"data-nametype\"), HIT = \"" SEARCH_FILL "\";\n"
    "var details = $(\"details\"), unzoomBtn = $(\"unzoom\"), searchBtn = $(\"search\"),\n"
    "    icBtn = $(\"ignorecase\"), matched = $(\"matched\");\n"
    "var suffix = new RegExp(\"^([\\\\s\\\\S]*) \\\\([0-9,]+ \" +\n"
    "    attr(svg, \"data-countname\").replace(/[.*+?^${}()|[\\]\\\\]/g, \"\\\\$&\") +\n"
    "    \", [^)]*\\\\)$\");\n"
    "var F = [], Z = 0, term = null, ic = false, shownHash = null;\n"
    "for (var i = 0, gs = frames.children; i < gs.length; i++) {\n"
    "  var g = gs[i], c = g.children, tip = c[0].textContent, m = suffix.exec(tip);\n"
    "  g.fgIndex = i;\n"
    "  F.push({ g: g, r: c[1], t: c[2], tip: tip, name: m ? m[1] : tip, i: i,\n"
    "    s: +attr(g, \"data-s\"), n: +attr(g, \"data-n\"), d: +attr(g, \"data-d\"),\n"
    "    fill: attr(c[1], \"fill\"), hit: false });\n"
    "}\n"
    "function frameOf(e) {\n"
    "  while (e && e.parentNode !== frames) e = e.parentNode;\n"
    "  return e ? F[e.fgIndex] : null;\n"
    "}\n"
    /* labels are cut to whole characters with "..", as the writer cuts them */
    "function place(f, x, w) {\n"
    "  f.r.setAttribute(\"x\", x.toFixed(1));\n"
    "  f.r.setAttribute(\"width\", w.toFixed(1));\n"
    "  f.t.setAttribute(\"x\", (x + 3).toFixed(1));\n"
    "  var fit = Math.floor(w / CHAR), s = \"\";\n"
    "  if (fit >= 3) {\n"
    "    s = f.name;\n"
    "    if (s.length > fit) {\n"
    "      var k = fit - 2;\n"
    "      if (/[\\uDC00-\\uDFFF]/.test(s.charAt(k))) k--;\n"
    "      s = s.slice(0, k) + \"..\";\n"
    "    }\n"
    "  }\n"
    "  if (f.t.textContent !== s) f.t.textContent = s;\n"
    "}\n"
    /* zoom: the frame fills the width, its ancestors span it dimmed, the rest hides */
    "function zoom(i) {\n"
    "  var z = F[i], zs = z.s, ze = z.s + z.n, k = INNER / z.n;\n"
    "  Z = i;\n"
    "  for (var j = 0; j < F.length; j++) {\n"
    "    var f = F[j], fe = f.s + f.n, cl = f.g.classList;\n"
    "    if (f.d < z.d) {\n"
    "      var up = f.s <= zs && fe >= ze;\n"
    "      cl.toggle(\"hide\", !up);\n"
    "      cl.toggle(\"parent\", up);\n"
    "      if (up) place(f, XPAD, INNER);\n"
    "    } else {\n"
    "      var inside = f.s >= zs && fe <= ze;\n"
    "      cl.toggle(\"hide\", !inside);\n"
    "      cl.remove(\"parent\");\n"
    "      if (inside) place(f, XPAD + (f.s - zs) * k, f.n * k);\n"
    "    }\n"
    "  }\n"
    "  unzoomBtn.classList.toggle(\"hide\", i === 0);\n"
    "  if (term !== null) search(term); else save();\n"
    "}\n"
    /* search: highlight matching names; the matched share counts each sample once, so
     * frames inside a matched frame add nothing (pre-order: they start before its end) */
    "function search(t) {\n"
    "  var re;\n"
    "  try { re = new RegExp(t, ic ? \"i\" : \"\"); } catch (e) {\n"
    "    matched.textContent = \"Invalid regular expression\";\n"
    "    matched.classList.remove(\"hide\");\n"
    "    return;\n"
    "  }\n"
    "  term = t;\n"
    "  var z = F[Z], zs = z.s, ze = z.s + z.n, sum = 0, end = -Infinity, all = false;\n"
    "  for (var j = 1; j < F.length; j++) {\n"
    "    var f = F[j], hit = re.test(f.name);\n"
    "    if (hit !== f.hit) { f.hit = hit; f.r.setAttribute(\"fill\", hit ? HIT : f.fill); }\n"
    "    if (!hit) continue;\n"
    "    if (f.d < z.d) { if (f.s <= zs && f.s + f.n >= ze) all = true; }\n"
    "    else if (f.s >= zs && f.s + f.n <= ze && f.s >= end) { sum += f.n; end = f.s + f.n; }\n"
    "  }\n"
    "  var pct = all ? 100 : 100 * sum / z.n;\n"
    "  matched.textContent = \"Matched: \" + (pct === 100 ? \"100\" : pct.toFixed(1)) + \"%\";\n"
    "  matched.classList.remove(\"hide\");\n"
    "  searchBtn.textContent = \"Reset Search\";\n"
    "  searchBtn.classList.add(\"show\");\n"
    "  save();\n"
    "}\n"
    "function resetSearch() {\n"
    "  term = null;\n"
    "  for (var j = 0; j < F.length; j++)\n"
    "    if (F[j].hit) { F[j].hit = false; F[j].r.setAttribute(\"fill\", F[j].fill); }\n"
    "  matched.classList.add(\"hide\");\n"
    "  searchBtn.textContent = \"Search\";\n"
    "  searchBtn.classList.remove(\"show\");\n"
    "  save();\n"
    "}\n"
    "function askSearch() {\n"
    "  var t = prompt(\"Search frames by regular expression (e.g. ^ext4_)\" +\n"
    "    (ic ? \", ignoring case\" : \"\") + \"\\nCtrl-I toggles case sensitivity\", term || "
    "\"\");\n"
    "  if (t) search(t);\n"
    "}\n"
    "function toggleCase() {\n"
    "  ic = !ic;\n"
    "  icBtn.classList.toggle(\"show\", ic);\n"
    "  if (term !== null) search(term); else save();\n"
    "}\n"
    /* the view lives in the URL fragment: #z=<frame>&s=<regex>&ic=1 */
    "function save() {\n"
    "  var h = [];\n"
    "  if (Z) h.push(\"z=\" + Z);\n"
    "  if (term !== null) h.push(\"s=\" + encodeURIComponent(term));\n"
    "  if (ic) h.push(\"ic=1\");\n"
    "  shownHash = h.length ? \"#\" + h.join(\"&\") : \"\";\n"
    "  if ((location.hash || \"\") === shownHash) return;\n"
    "  var url = location.href.split(\"#\")[0] + shownHash;\n"
    "  try { history.replaceState(history.state, \"\", url); }\n"
    "  catch (e) { location.replace(shownHash || \"#\"); }\n"
    "}\n"
    "function load() {\n"
    "  if ((location.hash || \"\") === shownHash) return;\n"
    "  var st = {}, parts = location.hash.slice(1).split(\"&\");\n"
    "  for (var j = 0; j < parts.length; j++) {\n"
    "    var eq = parts[j].indexOf(\"=\");\n"
    "    if (eq > 0) {\n"
    "      try { st[parts[j].slice(0, eq)] = decodeURIComponent(parts[j].slice(eq + 1)); }\n"
    "      catch (e) { }\n"
    "    }\n"
    "  }\n"
    "  ic = st.ic === \"1\";\n"
    "  icBtn.classList.toggle(\"show\", ic);\n"
    "  term = st.s ? st.s : null;\n"
    "  if (term === null) resetSearch();\n"
    "  var z = parseInt(st.z, 10);\n"
    "  z = z > 0 && z < F.length ? z : 0;\n"
    /* the document is drawn unzoomed: only a change of zoom needs the frames moved */
    "  if (z !== Z) zoom(z); else if (term !== null) search(term); else save();\n"
    "}\n"
    "frames.addEventListener(\"click\", function (e) {\n"
    "  var f = frameOf(e.target);\n"
    "  if (f && f.i !== Z) zoom(f.i);\n"
    "});\n"
    "frames.addEventListener(\"mouseover\", function (e) {\n"
    "  var f = frameOf(e.target);\n"
    "  if (f) details.textContent = NAMETYPE + \" \" + f.tip;\n"
    "});\n"
    "frames.addEventListener(\"mouseout\", function () { details.textContent = \" \"; });\n"
    "unzoomBtn.addEventListener(\"click\", function () { zoom(0); });\n"
    "searchBtn.addEventListener(\"click\", function () {\n"
    "  if (term !== null) resetSearch(); else askSearch();\n"
    "});\n"
    "icBtn.addEventListener(\"click\", toggleCase);\n"
    "window.addEventListener(\"keydown\", function (e) {\n"
    "  var key = (e.key || \"\").toLowerCase();\n"
    "  if (e.key === \"F3\" || ((e.ctrlKey || e.metaKey) && key === \"f\")) {\n"
    "    e.preventDefault();\n"
    "    askSearch();\n"
    "  } else if ((e.ctrlKey || e.metaKey) && key === \"i\") {\n"
    "    e.preventDefault();\n"
    "    toggleCase();\n"
    "  } else if (e.key === \"Escape\") {\n"
    "    if (term !== null) resetSearch(); else if (Z) zoom(0);\n"
    "  }\n"
    "});\n"
    "window.addEventListener(\"hashchange\", load);\n"
    "load();\n"
    "})();\n";

static int write_svg(struct render *r, struct sc_buf *out, int64_t timemax)
{
    const struct sc_svg_opts *o = r->o;
    const double fs = o->font_size, fh = o->frame_height, w = o->width;
    const double ypad1 = fs * 3, ypad2 = fs * 2 + 10,
                 ypad3 = o->subtitle && *o->subtitle ? fs * 2 : 0;
    const double h = (r->depthmax + 1) * fh + ypad1 + ypad2 + ypad3;
    const double wpt = (w - 2 * XPAD) / (double)timemax;
    const double charw = fs * o->font_width;
    const char *bg1, *bg2;
    const char *title = o->title && *o->title ? o->title
                        : o->flamechart       ? "Flame Chart"
                        : o->inverted         ? "Icicle Graph"
                                              : "Flame Graph";
    background(o->bgcolors, o->palette, &bg1, &bg2);

    /* the viewer reads its settings from the root element */
    put_svg_open(out, w, h);
    sc_buf_puts(out, " data-fontsize=\"");
    put_num(out, fs, 3);
    sc_buf_puts(out, "\" data-fontwidth=\"");
    put_num(out, o->font_width, 4);
    sc_buf_putc(out, '"');
    put_attr(out, "data-countname", r->countname);
    put_attr(out, "data-nametype", o->nametype ? o->nametype : "Function:");
    sc_buf_puts(out, ">\n<!-- Flame graph by scorch. Hover for details, click to zoom, Ctrl-F to "
                     "search. -->\n");
    if (o->notes)
        put_comment(out, o->notes);
    sc_buf_printf(out,
                  "<defs>\n<linearGradient id=\"background\" y1=\"0\" y2=\"1\" x1=\"0\" x2=\"0\">\n"
                  "<stop stop-color=\"%s\" offset=\"5%%\"/>\n"
                  "<stop stop-color=\"%s\" offset=\"95%%\"/>\n</linearGradient>\n</defs>\n",
                  bg1, bg2);
    sc_buf_puts(out, "<style type=\"text/css\">\ntext { font-family: ");
    put_xml(out, o->fonttype ? o->fonttype : "Verdana",
            strlen(o->fonttype ? o->fonttype : "Verdana"));
    sc_buf_puts(out, "; font-size: ");
    put_num(out, fs, 3);
    sc_buf_puts(out, "px; fill: rgb(0,0,0); }\n#title { text-anchor: middle; font-size: ");
    put_num(out, fs + 5, 3);
    sc_buf_puts(out,
                "px; }\n"
                "#subtitle { text-anchor: middle; fill: rgb(160,160,160); }\n"
                "#search, #ignorecase { opacity: 0.1; cursor: pointer; }\n"
                "#search:hover, #search.show, #ignorecase:hover, #ignorecase.show { opacity: 1; }\n"
                "#unzoom { cursor: pointer; }\n"
                "#frames > g { cursor: pointer; }\n"
                "#frames > g:hover > rect { stroke: rgb(0,0,0); stroke-width: 0.5; }\n"
                ".hide { display: none; }\n"
                ".parent { opacity: 0.5; }\n"
                "</style>\n");
    sc_buf_puts(out, "<rect x=\"0\" y=\"0\" width=\"");
    put_num(out, w, 2);
    sc_buf_puts(out, "\" height=\"");
    put_num(out, h, 2);
    sc_buf_puts(out, "\" fill=\"url(#background)\"/>\n");
    put_label(out, "title", (int)(w / 2), fs * 2, "", title);
    if (ypad3 > 0)
        put_label(out, "subtitle", (int)(w / 2), fs * 4, "", o->subtitle);
    put_label(out, "details", XPAD, h - ypad2 / 2, "", " ");
    put_label(out, "unzoom", XPAD, fs * 2, " class=\"hide\"", "Reset Zoom");
    put_label(out, "search", w - XPAD - 100, fs * 2, "", "Search");
    put_label(out, "ignorecase", w - XPAD - 16, fs * 2, "", "ic");
    put_label(out, "matched", w - XPAD - 100, h - ypad2 / 2, " class=\"hide\"", " ");
    sc_buf_puts(out, "<g id=\"frames\">\n");

    /* count name, escaped once */
    size_t cn_off = r->esc.len;
    put_xml(&r->esc, r->countname, strlen(r->countname));
    size_t cn_len = r->esc.len - cn_off;
    const double total_scaled = (double)timemax * o->factor;
    int sep_depth = -1; /* depth of the shallowest "--" ancestor (chain palette), -1: none */

    for (uint32_t fi = 0; fi < r->nframes; fi++) {
        const struct frame *f = &r->frames[fi];
        const int root = f->name == ROOT_NAME;
        const struct name_info *in = name_info(r, f->name);
        if (r->esc.oom)
            return SC_ENOMEM;
        int64_t value = root ? timemax : f->total;
        if (sc_buf_reserve(out, 2 * (size_t)in->len + cn_len + 400))
            return SC_ENOMEM;
        const char *esc = r->esc.data + in->off;
        char *p = out->data + out->len;

        double x1 = XPAD + (double)f->start * wpt, x2 = XPAD + (double)(f->start + value) * wpt;
        double rx1 = (double)llround(x1 * 10) / 10, rx2 = (double)llround(x2 * 10) / 10;
        double y1 = o->inverted ? ypad1 + ypad3 + f->depth * fh
                                : h - ypad2 - (f->depth + 1) * fh + FRAMEPAD;

        p = PUT_LIT(p, "<g data-s=\"");
        p = put_u64(p, (uint64_t)f->start);
        p = PUT_LIT(p, "\" data-n=\"");
        p = put_u64(p, (uint64_t)value);
        p = PUT_LIT(p, "\" data-d=\"");
        p = put_u64(p, f->depth);
        p = PUT_LIT(p, "\"><title>");
        p = put_str(p, esc, in->len);
        p = PUT_LIT(p, " (");
        double scaled = (double)value * o->factor;
        /* rounded half to even, as printf's %.0f (flamegraph.pl) */
        uint64_t shown = o->factor == 1 ? (uint64_t)value : (uint64_t)nearbyint(scaled);
        p = put_u64_commas(p, shown);
        *p++ = ' ';
        p = put_str(p, r->esc.data + cn_off, cn_len);
        p = PUT_LIT(p, ", ");
        if (root) {
            p = PUT_LIT(p, "100");
        } else {
            p = put_pct(p, 100.0 * (double)shown / total_scaled);
        }
        *p++ = '%';
        if (r->diff && !root) {
            int64_t d = f->delta;
            if (o->negate)
                d = -d;
            p = PUT_LIT(p, "; ");
            if (d > 0)
                *p++ = '+';
            p = put_pct(p, 100.0 * (double)d / (double)timemax);
            *p++ = '%';
        }
        p = PUT_LIT(p, ")</title><rect x=\"");
        p = put_fixed(p, rx1, 1, 1);
        p = PUT_LIT(p, "\" y=\"");
        p = put_fixed(p, y1, 2, 1);
        p = PUT_LIT(p, "\" width=\"");
        p = put_fixed(p, rx2 - rx1, 1, 1);
        p = PUT_LIT(p, "\" height=\"");
        p = put_fixed(p, fh - FRAMEPAD, 2, 1);
        p = PUT_LIT(p, "\" fill=\"");

        if (sep_depth >= 0 && (int)f->depth <= sep_depth)
            sep_depth = -1;
        int waker = sep_depth >= 0;
        if (in->special == 1) {
            p = PUT_LIT(p, "rgb(160,160,160)");
            if (sep_depth < 0)
                sep_depth = (int)f->depth;
        } else if (in->special == 2) {
            p = PUT_LIT(p, "rgb(200,200,200)");
        } else if (r->diff) {
            p = put_delta_color(p, f->delta, r->maxdelta, o->negate);
        } else if (o->palette == SC_SVG_CHAIN && waker) {
            p = put_hue(p, H_AQUA, in->vw);
        } else {
            p = put_hue(p, (enum hue)in->hue, in->v);
        }
        p = PUT_LIT(p, "\" rx=\"2\" ry=\"2\"/><text x=\"");
        p = put_fixed(p, x1 + 3, 2, 1);
        p = PUT_LIT(p, "\" y=\"");
        p = put_fixed(p, y1 + (fh - FRAMEPAD) / 2 + 3, 2, 1);
        p = PUT_LIT(p, "\">");
        double fit = (x2 - x1) / charw;
        if (fit >= 3) {
            uint32_t chars = fit > 1e9 ? 1000000000u : (uint32_t)fit;
            if (in->chars <= chars) {
                p = put_str(p, esc, in->len);
            } else {
                p = put_str(p, esc, esc_prefix(esc, in->len, chars - 2));
                p = PUT_LIT(p, "..");
            }
        }
        p = PUT_LIT(p, "</text></g>\n");
        out->len = (size_t)(p - out->data);
        out->data[out->len] = 0;
    }
    sc_buf_puts(out, "</g>\n<script type=\"text/ecmascript\"><![CDATA[\n");
    sc_buf_append(out, viewer_js, sizeof viewer_js - 1);
    sc_buf_puts(out, "]]></script>\n</svg>\n");
    return out->oom || r->esc.oom ? SC_ENOMEM : 0;
}

/* The differential base column for vi, or -1. */
static int base_column(const struct sc_profile *p, int vi, int base_index)
{
    if (base_index >= 0)
        return (uint32_t)base_index < p->nsample_types && base_index != vi ? base_index : -1;
    if (base_index != SC_SVG_BASE_AUTO)
        return -1;
    struct sc_str vt = sc_profile_str(p, p->sample_types[vi].type);
    if (vt.len != 7 || memcmp(vt.ptr, "samples", 7) != 0)
        return -1;
    for (uint32_t i = 0; i < p->nsample_types; i++) {
        struct sc_str s = sc_profile_str(p, p->sample_types[i].type);
        if (s.len == 12 && memcmp(s.ptr, "base_samples", 12) == 0)
            return (int)i;
    }
    return -1;
}

int sc_svg_write(const struct sc_profile *p, int vi, const struct sc_svg_opts *o,
                 struct sc_buf *out, char *err)
{
    int rc = sc_svg_opts_check(o, err);
    if (rc)
        return rc;
    if (vi < 0 || (uint32_t)vi >= p->nsample_types)
        return sc_errf(err, SC_EINVAL, "sample index %d out of range", vi);
    struct render r;
    memset(&r, 0, sizeof r);
    r.o = o;
    sc_arena_init(&r.arena);
    r.names.arena = &r.arena;
    int base = base_column(p, vi, o->base_index);
    r.diff = base >= 0;
    r.countname = o->countname;
    if (!r.countname) {
        struct sc_str u = sc_profile_str(p, p->sample_types[vi].unit);
        if (u.len == 0 || u.len >= sizeof r.unit || (u.len == 5 && !memcmp(u.ptr, "count", 5))) {
            r.countname = "samples";
        } else {
            memcpy(r.unit, u.ptr, u.len);
            r.unit[u.len] = 0;
            r.countname = r.unit;
        }
    }
    rc = collect(&r, p, vi, base);
    if (rc == SC_ELIMIT) {
        rc = sc_errf(err, rc, "values or their changes add up to more than 2^63");
        goto out;
    }
    if (rc)
        goto oom;
    if (r.sum <= 0) {
        rc = write_empty(o, out);
        if (rc)
            goto oom;
        goto out;
    }
    if (!o->flamechart) {
        /* folded input usually comes sorted already; then sorting is skipped */
        size_t i = 1;
        while (i < r.nstacks && cmp_stack(&r.stacks[i - 1], &r.stacks[i], r.seq) <= 0)
            i++;
        if (i < r.nstacks)
            qsort_r(r.stacks, r.nstacks, sizeof *r.stacks, cmp_stack, r.seq);
    }
    int64_t timemax = o->total > r.sum ? o->total : r.sum;
    double wpt = (o->width - 2 * XPAD) / (double)timemax;
    double min_value = o->min_width_pct ? (double)timemax * o->min_width / 100 : o->min_width / wpt;
    if (flow(&r, min_value))
        goto oom;
    r.info = calloc((size_t)r.names.n + 1, sizeof *r.info);
    if (!r.info)
        goto oom;
    rc = write_svg(&r, out, timemax);
    if (rc)
        goto oom;
    rc = (int)(r.nframes > INT32_MAX ? INT32_MAX : r.nframes);
    goto out;
oom:
    rc = sc_errf(err, SC_ENOMEM, "out of memory");
out:
    free(r.order);
    free(r.seq);
    free(r.stacks);
    free(r.frames);
    free(r.info);
    sc_buf_release(&r.esc);
    sc_strtab_release(&r.names);
    sc_arena_release(&r.arena);
    return rc;
}
