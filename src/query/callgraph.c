/* callgraph.c - the call graph of a profile with go tool pprof -dot's cuts, styling and DOT. */
#include "query/callgraph.h"
#include "formats/names.h"
#include "formats/top.h"
#include "model/budget.h"
#include "model/clock.h"
#include "model/error.h"
#include "model/units.h"

#include <gvc.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define NONE UINT32_MAX
/* SC_CALLGRAPH_STYLE_LARGE's graph attributes: straight edges (routing splines through
 * every virtual node is most of the time of a large graph), two rounds of crossing
 * minimisation (mclimit 0.1 of 24), no network simplex rounds after the positioning's first
 * feasible tree (nslimit 0: the coordinates are valid but not straightened) */
#define LARGE_ATTRS "mclimit=0.1 nslimit=0 splines=false"

/* A layout's shape, as size_of estimates it. */
struct shape {
    uint32_t edges; /* edges counted */
    uint32_t ranks; /* ranks, as longest paths */
};
static uint64_t size_of(const struct sc_callgraph *g, uint32_t k, uint32_t m, struct shape *sh);
#define MAX_NODELETS 4 /* tag boxes shown per node (and per label group), as pprof */

static int64_t abs64(int64_t v)
{
    return v < 0 ? -v : v;
}

/* ---- pprof's short function names ---------------------------------------------------- */

static int is_w(char ch)
{
    unsigned char c = (unsigned char)ch;
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

static int is_upper(char c)
{
    return c >= 'A' && c <= 'Z';
}

static int is_lower(char c)
{
    return c >= 'a' && c <= 'z';
}

/* Go module versions ("/v2" before a '.' or '/') say nothing in a graph: the first one
 * goes, unless the name spans lines. */
static void strip_go_version(const char *s, size_t n, struct sc_buf *out)
{
    if (!memchr(s, '\n', n)) {
        for (size_t i = 0; i + 2 < n; i++) {
            if (s[i] != '/' || s[i + 1] != 'v')
                continue;
            size_t j = i + 2;
            while (j < n && s[j] >= '0' && s[j] <= '9')
                j++;
            size_t d = j - (i + 2);
            if (d == 0 || s[i + 2] == '0' || (d == 1 && s[i + 2] < '2'))
                continue;
            if (j < n && (s[j] == '.' || s[j] == '/')) {
                sc_buf_append(out, s, i);
                sc_buf_append(out, s + j, n - j);
                return;
            }
        }
    }
    sc_buf_append(out, s, n);
}

/* Go: "a/b/c.F" -> "c.F" (the text after the last of the leading "segment/" parts). */
static int short_go(const char *s, size_t n, size_t *b, size_t *e)
{
    size_t pos = 0, end = 0, prev = 0;
    int k = 0;
    for (;;) {
        size_t j = pos;
        while (j < n && (is_w(s[j]) || s[j] == '-' || s[j] == '.'))
            j++;
        if (j == pos || j >= n || s[j] != '/')
            break;
        prev = end;
        end = j + 1;
        pos = end;
        k++;
    }
    if (k == 0)
        return 0;
    size_t start;
    if (end < n && s[end] != '\n')
        start = end;
    else if (k >= 2)
        start = prev; /* the rest must not be empty: give back the last segment */
    else
        return 0;
    size_t stop = start;
    while (stop < n && s[stop] != '\n')
        stop++;
    *b = start;
    *e = stop;
    return 1;
}

/* Java: "com.x.Foo.bar(int)" -> "Foo.bar" (lower-case packages, a class, a method). */
static int short_java(const char *s, size_t n, size_t *b, size_t *e)
{
    size_t pos = 0;
    while (pos < n && is_lower(s[pos])) {
        size_t j = pos + 1;
        while (j < n && is_w(s[j]))
            j++;
        if (j >= n || s[j] != '.')
            break;
        pos = j + 1;
    }
    if (pos >= n || !is_upper(s[pos]))
        return 0;
    size_t j = pos + 1;
    while (j < n && (is_w(s[j]) || s[j] == '$'))
        j++;
    if (j >= n || s[j] != '.')
        return 0;
    size_t m = j + 1, k;
    if (n - m >= 6 && memcmp(s + m, "<init>", 6) == 0) {
        k = m + 6;
    } else if (m < n && is_lower(s[m])) {
        k = m + 1;
        while (k < n && (is_w(s[k]) || s[k] == '$'))
            k++;
    } else {
        return 0;
    }
    if (k < n && s[k] != '(')
        return 0;
    *b = pos;
    *e = k;
    return 1;
}

/* The "Class::method<...>" part of a C++ name starting at st, if there is one. */
static int cpp_tail(const char *s, size_t n, size_t st, size_t *e)
{
    size_t i = st;
    while (i < n && s[i] == '_')
        i++;
    if (i >= n || !is_upper(s[i]))
        return 0;
    i++;
    while (i < n && is_w(s[i]))
        i++;
    if (i + 1 >= n || s[i] != ':' || s[i + 1] != ':')
        return 0;
    i += 2;
    if (i < n && s[i] == '~')
        i++;
    if (i >= n || !(is_w(s[i]) && !(s[i] >= '0' && s[i] <= '9')))
        return 0;
    i++;
    while (i < n && is_w(s[i]))
        i++;
    size_t end = i;
    if (i < n && s[i] == '<') {
        size_t k = i + 1;
        while (k < n && s[k] != '\n') {
            if (s[k] == '>')
                end = k + 1;
            k++;
        }
    }
    *e = end;
    return 1;
}

/* C++: "ns::sub::Foo::bar<T>" -> "Foo::bar<T>": the last "Class::method" preceded by at
 * least one namespace. */
static int short_cpp(const char *s, size_t n, size_t *b, size_t *e)
{
    size_t pos = 0, last = 0;
    int k = 0;
    for (;;) {
        if (pos >= n || !(is_w(s[pos]) && !(s[pos] >= '0' && s[pos] <= '9')))
            break;
        size_t j = pos + 1;
        while (j < n && is_w(s[j]))
            j++;
        if (j + 1 >= n || s[j] != ':' || s[j + 1] != ':')
            break;
        pos = last = j + 2;
        k++;
    }
    /* try the candidates from the last namespace boundary back to the first */
    for (size_t st = last; k > 0; k--) {
        if (cpp_tail(s, n, st, e)) {
            *b = st;
            return 1;
        }
        if (k == 1)
            break;
        size_t i = st - 2; /* the "::" that ends at st; the one before ends our new st */
        while (i > 0 && !(i >= 2 && s[i - 1] == ':' && s[i - 2] == ':'))
            i--;
        st = i;
    }
    return 0;
}

void sc_callgraph_shorten_name(const char *s, size_t n, struct sc_buf *out)
{
    static const char anon[] = "(anonymous namespace)::";
    if (n >= sizeof anon - 1 && memcmp(s, anon, sizeof anon - 1) == 0) {
        s += sizeof anon - 1;
        n -= sizeof anon - 1;
    }
    struct sc_buf t = SC_BUF_INIT;
    strip_go_version(s, n, &t);
    if (t.oom) {
        out->oom = 1;
        return;
    }
    const char *v = t.data ? t.data : "";
    size_t b, e;
    if (short_go(v, t.len, &b, &e) || short_java(v, t.len, &b, &e) || short_cpp(v, t.len, &b, &e))
        sc_buf_append(out, v + b, e - b);
    else
        sc_buf_append(out, v, t.len);
    sc_buf_release(&t);
}

/* ---- colours -------------------------------------------------------------------------- */

void sc_callgraph_color(double score, int background, char out[8])
{
    /* pprof's scheme: saturation and value in HSV terms, scores pushed away from grey by
     * a power of 0.3, and no hue at all near zero */
    double sat = background ? 0.1 : 1.0, val = background ? 0.93 : 0.7;
    if (score > 1.0)
        score = 1.0;
    if (score < -1.0)
        score = -1.0;
    if (fabs(score) < 0.2)
        sat *= fabs(score) / 0.2;
    if (score > 0.0)
        score = pow(score, 0.3);
    if (score < 0.0)
        score = -pow(-score, 0.3);
    double r, g, b;
    if (score < 0.0) {
        g = val;
        r = val * (1 + sat * score);
    } else {
        r = val;
        g = val * (1 - sat * score);
    }
    b = val * (1 - sat);
    snprintf(out, 8, "#%02x%02x%02x", (unsigned)(uint8_t)(r * 255.0),
             (unsigned)(uint8_t)(g * 255.0), (unsigned)(uint8_t)(b * 255.0));
}

/* ---- graph building --------------------------------------------------------------------- */

/* A tag of a node: the label tag of a group of string labels (name 0), or a numeric tag
 * (a formatted "bytes" value) within a group. */
struct cg_tag {
    uint32_t node, group, name;
    int64_t value;
    int64_t flat, cum;
};

struct pedge {
    uint32_t src, dst; /* identities */
    int64_t weight;
    uint32_t stamp; /* last sample that counted it */
    uint8_t residual, inlined, dead;
};

/* One build of the graph from the samples, optionally restricted to kept identities. */
struct pass {
    int64_t *flat, *cum; /* per identity */
    uint32_t *seen;
    uint32_t stamp;
    const uint8_t *kept;
    struct sc_map64 emap; /* src << 32 | dst -> edge */
    struct pedge *e;
    uint32_t ne, ecap;
    struct sc_map64 tsmap; /* node << 32 | group -> tag set */
    struct sc_map64 tmap;  /* set << 32 | name -> tag */
    struct cg_tag *t;
    uint32_t nt, tcap, nsets;
    int64_t total;       /* sum of |v| */
    uint32_t *nodes, nn; /* identities in the graph, in graph order once sorted */
};

struct snum {
    uint32_t name;
    int64_t value;
};

struct sc_callgraph_int {
    struct sc_arena arena;
    struct sc_strtab names;    /* identity -> name; nameless ones start with \1 */
    struct sc_strtab groups;   /* label groups; 0 = "" */
    struct sc_strtab tagnames; /* formatted numeric tags; 0 = "" */
    uint32_t nids;
    uint32_t *loc_start, *loc_n, *loc_ids; /* location -> identities, innermost first */
    /* per stored sample: its label group and numeric tags; NULL when there are none */
    uint32_t *s_group, *s_num_start, *s_num_n;
    struct snum *nums;
    char num_unit[64];
    int64_t node_cutoff, edge_cutoff;
    struct pass final;
    uint32_t *tag_start, *tag_list; /* final graph's tags by identity */
    const char *ounit;              /* the output unit pprof picks */
    int large;                      /* the DOT being written is in SC_CALLGRAPH_STYLE_LARGE */
    const struct sc_profile *p;
    int vi;
};

static struct sc_str id_name(const struct sc_callgraph_int *c, uint32_t id)
{
    struct sc_str s = c->names.v[id];
    if (s.len && s.ptr[0] == '\1') {
        s.ptr++;
        s.len--;
    }
    return s;
}

static int64_t intern_id(struct sc_callgraph_int *c, const char *s, size_t n)
{
    int64_t id = sc_strtab_intern(&c->names, s, n);
    if (id >= 0 && (uint32_t)id >= c->nids)
        c->nids = (uint32_t)id + 1;
    return id;
}

/* pprof names a frame without a function after its binary (formats/names.c); the
 * identity starts with \1, which no function's name does. */
static int64_t objfile_id(struct sc_callgraph_int *c, const struct sc_profile *p,
                          const struct sc_location *l)
{
    struct sc_str s;
    if (sc_pprof_frame_name(p, l, 0, &c->arena, &s))
        return SC_ENOMEM;
    char *tmp = sc_arena_alloc(&c->arena, (size_t)s.len + 1);
    if (!tmp)
        return SC_ENOMEM;
    tmp[0] = '\1';
    memcpy(tmp + 1, s.ptr, s.len);
    return intern_id(c, tmp, (size_t)s.len + 1);
}

static int build_ids(struct sc_callgraph_int *c, const struct sc_profile *p)
{
    uint32_t *fn_id = malloc(((size_t)p->nfunctions + 1) * sizeof *fn_id);
    c->loc_start = malloc(((size_t)p->nlocations + 1) * sizeof *c->loc_start);
    c->loc_n = malloc(((size_t)p->nlocations + 1) * sizeof *c->loc_n);
    c->loc_ids = malloc(((size_t)p->nlines + p->nlocations + 1) * sizeof *c->loc_ids);
    int rc = SC_ENOMEM;
    if (!fn_id || !c->loc_start || !c->loc_n || !c->loc_ids)
        goto out;
    for (uint32_t f = 0; f < p->nfunctions; f++) {
        struct sc_str s;
        fn_id[f] = NONE;
        if (sc_pprof_name(p, f, &c->arena, &s)) {
            rc = SC_ENOMEM;
            goto out;
        }
        if (s.len && s.ptr[0] != '\1') {
            int64_t id = intern_id(c, s.ptr, s.len);
            if (id < 0) {
                rc = (int)id;
                goto out;
            }
            fn_id[f] = (uint32_t)id;
        }
    }
    uint32_t k = 0;
    for (uint32_t i = 0; i < p->nlocations; i++) {
        const struct sc_location *l = &p->locations[i];
        const struct sc_line *lines = sc_location_lines(p, l);
        c->loc_start[i] = k;
        for (uint32_t j = 0; j < l->nlines; j++) {
            uint32_t fn = lines[j].function;
            int64_t id = fn && fn_id[fn - 1] != NONE ? fn_id[fn - 1] : objfile_id(c, p, l);
            if (id < 0) {
                rc = (int)id;
                goto out;
            }
            c->loc_ids[k++] = (uint32_t)id;
        }
        if (l->nlines == 0) {
            int64_t id = objfile_id(c, p, l);
            if (id < 0) {
                rc = (int)id;
                goto out;
            }
            c->loc_ids[k++] = (uint32_t)id;
        }
        c->loc_n[i] = k - c->loc_start[i];
    }
    rc = 0;
out:
    free(fn_id);
    return rc;
}

static int cmp_str(struct sc_str a, struct sc_str b)
{
    size_t n = a.len < b.len ? a.len : b.len;
    int r = n ? memcmp(a.ptr, b.ptr, n) : 0;
    if (r == 0 && a.len != b.len)
        r = a.len < b.len ? -1 : 1;
    return r;
}

static int cmp_sc_str(const void *a, const void *b)
{
    return cmp_str(*(const struct sc_str *)a, *(const struct sc_str *)b);
}

static int key_is(const struct sc_profile *p, uint32_t key, const char *s)
{
    struct sc_str k = sc_profile_str(p, key);
    return k.len == strlen(s) && memcmp(k.ptr, s, k.len) == 0;
}

/* pprof's tags come from each sample's string labels ("key:value", sorted, joined with a
 * DOT line break) and its numeric "bytes" labels. Precomputed once per stored sample. */
static int build_sample_tags(struct sc_callgraph_int *c, const struct sc_profile *p)
{
    if (p->lazy || p->nlabels == 0 || p->nsamples == 0)
        return 0;
    if (sc_strtab_intern(&c->groups, "", 0) < 0 || sc_strtab_intern(&c->tagnames, "", 0) < 0)
        return SC_ENOMEM;
    /* the unit of "bytes" labels: the first one given, else the key itself, as pprof */
    snprintf(c->num_unit, sizeof c->num_unit, "bytes");
    for (uint32_t i = 0; i < p->nlabels; i++) {
        const struct sc_label *l = &p->labels[i];
        if (l->str == 0 && l->num_unit && key_is(p, l->key, "bytes")) {
            struct sc_str u = sc_profile_str(p, l->num_unit);
            if (u.len) {
                snprintf(c->num_unit, sizeof c->num_unit, "%.*s", (int)u.len, u.ptr);
                break;
            }
        }
    }
    uint32_t n = p->nsamples;
    c->s_group = calloc(n, sizeof *c->s_group);
    c->s_num_start = calloc(n, sizeof *c->s_num_start);
    c->s_num_n = calloc(n, sizeof *c->s_num_n);
    c->nums = malloc(((size_t)p->nlabels + 1) * sizeof *c->nums);
    struct sc_str *parts = malloc(((size_t)p->nlabels + 1) * sizeof *parts);
    struct sc_buf b = SC_BUF_INIT;
    int rc = SC_ENOMEM;
    if (!c->s_group || !c->s_num_start || !c->s_num_n || !c->nums || !parts)
        goto out;
    uint32_t nn = 0;
    for (uint32_t si = 0; si < n; si++) {
        const struct sc_sample *s = &p->samples[si];
        uint32_t np = 0;
        c->s_num_start[si] = nn;
        for (uint32_t j = 0; j < s->nlabels; j++) {
            const struct sc_label *l = &p->labels[s->label_start + j];
            if (l->str) {
                struct sc_str k = sc_profile_str(p, l->key), v = sc_profile_str(p, l->str);
                char *kv = sc_arena_alloc(&c->arena, (size_t)k.len + v.len + 1);
                if (!kv)
                    goto out;
                memcpy(kv, k.ptr, k.len);
                kv[k.len] = ':';
                memcpy(kv + k.len + 1, v.ptr, v.len);
                parts[np].ptr = kv;
                parts[np++].len = k.len + v.len + 1;
            } else if ((l->num || l->num_unit) && key_is(p, l->key, "bytes")) {
                b.len = 0;
                sc_units_label(&b, l->num, c->num_unit, "minimum");
                if (b.oom)
                    goto out;
                int64_t name = sc_strtab_intern(&c->tagnames, b.data, b.len);
                if (name < 0)
                    goto out;
                c->nums[nn].name = (uint32_t)name;
                c->nums[nn++].value = l->num;
            }
        }
        c->s_num_n[si] = nn - c->s_num_start[si];
        if (np) {
            qsort(parts, np, sizeof *parts, cmp_sc_str);
            b.len = 0;
            for (uint32_t j = 0; j < np; j++) {
                if (j)
                    sc_buf_puts(&b, "\\n");
                /* quotes and backslashes would end the DOT string early */
                for (uint32_t x = 0; x < parts[j].len; x++) {
                    char ch = parts[j].ptr[x];
                    if (ch == '"' || ch == '\\')
                        sc_buf_putc(&b, '\\');
                    sc_buf_putc(&b, ch == '\n' ? ' ' : ch);
                }
            }
            if (b.oom)
                goto out;
            int64_t g = sc_strtab_intern(&c->groups, b.data, b.len);
            if (g < 0)
                goto out;
            c->s_group[si] = (uint32_t)g;
        }
    }
    rc = 0;
out:
    free(parts);
    sc_buf_release(&b);
    return rc;
}

static void pass_release(struct pass *g)
{
    free(g->flat);
    free(g->cum);
    free(g->seen);
    sc_map64_release(&g->emap);
    free(g->e);
    sc_map64_release(&g->tsmap);
    sc_map64_release(&g->tmap);
    free(g->t);
    free(g->nodes);
    memset(g, 0, sizeof *g);
}

static struct pedge *edge_get(struct pass *g, uint32_t src, uint32_t dst)
{
    int added;
    uint32_t *slot = sc_map64_upsert(&g->emap, (uint64_t)src << 32 | dst, g->ne, &added);
    if (!slot)
        return NULL;
    if (added) {
        if (g->ne == g->ecap) {
            uint32_t ncap = g->ecap ? g->ecap * 2 : 256;
            struct pedge *ne = realloc(g->e, ncap * sizeof *ne);
            if (!ne)
                return NULL;
            g->e = ne;
            g->ecap = ncap;
        }
        struct pedge *e = &g->e[g->ne++];
        memset(e, 0, sizeof *e);
        e->src = src;
        e->dst = dst;
        e->inlined = 1;
        return e;
    }
    return &g->e[*slot];
}

static int tag_add(struct pass *g, uint32_t node, uint32_t group, uint32_t name, int64_t value,
                   int64_t v, int flat)
{
    int added;
    uint32_t *set = sc_map64_upsert(&g->tsmap, (uint64_t)node << 32 | group, g->nsets, &added);
    if (!set)
        return SC_ENOMEM;
    if (added)
        g->nsets++;
    uint64_t key = (uint64_t)*set << 32 | name;
    uint32_t *slot = sc_map64_upsert(&g->tmap, key, g->nt, &added);
    if (!slot)
        return SC_ENOMEM;
    if (added) {
        if (g->nt == g->tcap) {
            uint32_t ncap = g->tcap ? g->tcap * 2 : 256;
            struct cg_tag *nt = realloc(g->t, ncap * sizeof *nt);
            if (!nt)
                return SC_ENOMEM;
            g->t = nt;
            g->tcap = ncap;
        }
        struct cg_tag *t = &g->t[g->nt++];
        t->node = node;
        t->group = group;
        t->name = name;
        t->value = value;
        t->flat = t->cum = 0;
    }
    struct cg_tag *t = &g->t[*slot];
    if (flat)
        t->flat += v;
    else
        t->cum += v;
    return 0;
}

static int node_tags(const struct sc_callgraph_int *c, struct pass *g, uint32_t node, uint32_t si,
                     int64_t v, int flat)
{
    if (si == NONE || !c->s_group)
        return 0;
    uint32_t group = c->s_group[si];
    int rc = 0;
    if (group)
        rc = tag_add(g, node, group, 0, 0, v, flat);
    const struct snum *nums = c->nums + c->s_num_start[si];
    for (uint32_t j = 0; j < c->s_num_n[si] && !rc; j++)
        rc = tag_add(g, node, group, nums[j].name, nums[j].value, v, flat);
    return rc;
}

/* One sample into the graph, as pprof's graph builder does: frames root to leaf, cum once
 * per node, an edge between consecutive kept frames (once per sample, residual when frames
 * were skipped, inlined when the callee is not its location's outermost line), flat to
 * the innermost frame when it is kept. */
static int add_sample(const struct sc_callgraph_int *c, struct pass *g, const uint32_t *locs,
                      uint32_t nlocs, int64_t v, uint32_t si)
{
    g->total += abs64(v);
    if (v == 0)
        return 0;
    uint32_t stamp = ++g->stamp;
    uint32_t parent = NONE;
    int residual = 0, rc;
    for (uint32_t k = nlocs; k-- > 0;) {
        uint32_t l = locs[k];
        const uint32_t *ids = c->loc_ids + c->loc_start[l];
        uint32_t n = c->loc_n[l];
        for (uint32_t ni = n; ni-- > 0;) {
            uint32_t id = ids[ni];
            if (g->kept && !g->kept[id]) {
                residual = 1;
                continue;
            }
            if (g->seen[id] != stamp) {
                g->seen[id] = stamp;
                g->cum[id] += v;
                if ((rc = node_tags(c, g, id, si, v, 0)))
                    return rc;
            }
            if (parent != NONE && id != parent) {
                struct pedge *e = edge_get(g, parent, id);
                if (!e)
                    return SC_ENOMEM;
                if (e->stamp != stamp) {
                    e->stamp = stamp;
                    e->weight += v;
                    if (residual)
                        e->residual = 1;
                    if (ni == n - 1)
                        e->inlined = 0;
                }
            }
            parent = id;
            residual = 0;
        }
    }
    if (parent != NONE && !residual) {
        g->flat[parent] += v;
        if ((rc = node_tags(c, g, parent, si, v, 1)))
            return rc;
    }
    return 0;
}

struct lazy_walk {
    const struct sc_callgraph_int *c;
    struct pass *g;
};

static int lazy_visit(void *ctx, const uint32_t *locs, uint32_t nlocs, const int64_t *values)
{
    struct lazy_walk *w = ctx;
    return add_sample(w->c, w->g, locs, nlocs, values[w->c->vi], NONE);
}

static int run_pass(struct sc_callgraph_int *c, const uint8_t *kept, struct pass *g, char *err)
{
    const struct sc_profile *p = c->p;
    memset(g, 0, sizeof *g);
    g->kept = kept;
    size_t n = (size_t)c->nids + 1;
    g->flat = calloc(n, sizeof *g->flat);
    g->cum = calloc(n, sizeof *g->cum);
    g->seen = calloc(n, sizeof *g->seen);
    g->nodes = malloc(n * sizeof *g->nodes);
    if (!g->flat || !g->cum || !g->seen || !g->nodes)
        return sc_errf(err, SC_ENOMEM, "out of memory");
    int rc = 0;
    if (p->lazy) {
        struct lazy_walk w = {c, g};
        rc = sc_profile_foreach_sample(p, lazy_visit, &w, err);
    } else {
        uint32_t nt = p->nsample_types;
        for (uint32_t si = 0; si < p->nsamples && !rc; si++) {
            const struct sc_sample *s = &p->samples[si];
            rc = add_sample(c, g, p->sample_locs + s->loc_start, s->nlocs,
                            p->values[(size_t)si * nt + (uint32_t)c->vi], si);
            if (!rc)
                rc = sc_budget_poll_every(si, err); /* the request's deadline */
        }
    }
    if (rc)
        return rc == SC_ENOMEM ? sc_errf(err, rc, "out of memory") : rc;
    for (uint32_t id = 0; id < c->nids; id++)
        if ((!kept || kept[id]) && (g->flat[id] || g->cum[id]))
            g->nodes[g->nn++] = id;
    return 0;
}

/* ---- ordering ------------------------------------------------------------------------- */

struct sort_ctx {
    const struct sc_callgraph_int *c;
    const struct pass *g;
    const int64_t *score;
};

/* pprof's node order for graphs: |entropy score| descending, then name, then |flat|. */
static int cmp_nodes(const void *a, const void *b, void *arg)
{
    const struct sort_ctx *s = arg;
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    int64_t sx = abs64(s->score[x]), sy = abs64(s->score[y]);
    if (sx != sy)
        return sx > sy ? -1 : 1;
    int r = cmp_str(id_name(s->c, x), id_name(s->c, y));
    if (r)
        return r;
    int64_t fx = abs64(s->g->flat[x]), fy = abs64(s->g->flat[y]);
    if (fx != fy)
        return fx > fy ? -1 : 1;
    return x < y ? -1 : x > y;
}

/* Go's math.Log2: exact for powers of two, else log(frac) / ln 2 + exp. */
static double go_log2(double x)
{
    int e;
    double f = frexp(x, &e);
    if (f == 0.5)
        return (double)(e - 1);
    return log(f) * (1 / M_LN2) + (double)e;
}

static double entropy_term(int64_t w, double total)
{
    double frac = (double)abs64(w) / total;
    return frac > 0 ? -frac * go_log2(frac) : 0;
}

/* pprof's entropy score: how much a node's weight spreads over its callers and callees
 * (plus itself); a node that just passes everything through scores low. */
static int sort_entropy(struct sc_callgraph_int *c, struct pass *g)
{
    size_t n = (size_t)c->nids + 1;
    double *in_tot = calloc(n, sizeof *in_tot), *out_tot = calloc(n, sizeof *out_tot);
    double *in_s = calloc(n, sizeof *in_s), *out_s = calloc(n, sizeof *out_s);
    uint32_t *in_n = calloc(n, sizeof *in_n), *out_n = calloc(n, sizeof *out_n);
    int64_t *score = calloc(n, sizeof *score);
    int rc = SC_ENOMEM;
    if (!in_tot || !out_tot || !in_s || !out_s || !in_n || !out_n || !score)
        goto out;
    for (uint32_t i = 0; i < g->nn; i++)
        out_tot[g->nodes[i]] = (double)g->flat[g->nodes[i]];
    for (uint32_t i = 0; i < g->ne; i++) {
        const struct pedge *e = &g->e[i];
        if (e->dead)
            continue;
        in_n[e->dst]++;
        out_n[e->src]++;
        if (e->weight > 0) {
            in_tot[e->dst] += (double)e->weight;
            out_tot[e->src] += (double)e->weight;
        }
    }
    for (uint32_t i = 0; i < g->ne; i++) {
        const struct pedge *e = &g->e[i];
        if (e->dead)
            continue;
        if (in_tot[e->dst] != 0)
            in_s[e->dst] += entropy_term(e->weight, in_tot[e->dst]);
        if (out_tot[e->src] != 0)
            out_s[e->src] += entropy_term(e->weight, out_tot[e->src]);
    }
    for (uint32_t i = 0; i < g->nn; i++) {
        uint32_t id = g->nodes[i];
        double s = 0;
        s += in_n[id] == 0 ? 1 : in_s[id];
        if (out_n[id] == 0) {
            s += 1;
        } else {
            double o = out_s[id];
            if (g->flat[id] > 0 && out_tot[id] != 0)
                o += entropy_term(g->flat[id], out_tot[id]);
            s += o;
        }
        double v = s * (double)g->cum[id];
        /* Go converts out-of-range floats to INT64_MIN on amd64; C must not convert them */
        int64_t iv = (isfinite(v) && v < 9.2e18 && v > -9.2e18) ? (int64_t)v : INT64_MIN;
        score[id] = iv + g->flat[id];
    }
    struct sort_ctx sc = {c, g, score};
    if (g->nn > 1)
        qsort_r(g->nodes, g->nn, sizeof *g->nodes, cmp_nodes, &sc);
    rc = 0;
out:
    free(in_tot);
    free(out_tot);
    free(in_s);
    free(out_s);
    free(in_n);
    free(out_n);
    free(score);
    return rc;
}

/* pprof's edge order: |weight| descending, then caller name, then callee name. */
static int cmp_edges(const void *a, const void *b, void *arg)
{
    const struct sort_ctx *s = arg;
    const struct pedge *x = &s->g->e[*(const uint32_t *)a], *y = &s->g->e[*(const uint32_t *)b];
    if (x->weight != y->weight) {
        int64_t ax = abs64(x->weight), ay = abs64(y->weight);
        if (ax != ay)
            return ax > ay ? -1 : 1;
    }
    int r = cmp_str(id_name(s->c, x->src), id_name(s->c, y->src));
    if (r)
        return r;
    r = cmp_str(id_name(s->c, x->dst), id_name(s->c, y->dst));
    if (r)
        return r;
    return x < y ? -1 : x > y;
}

static uint32_t trim_edges(struct pass *g, int64_t cutoff)
{
    uint32_t dropped = 0;
    for (uint32_t i = 0; i < g->ne; i++)
        if (!g->e[i].dead && abs64(g->e[i].weight) < cutoff) {
            g->e[i].dead = 1;
            dropped++;
        }
    return dropped;
}

static int tag_kept(const struct cg_tag *t, int64_t cutoff)
{
    return abs64(t->flat) >= cutoff || abs64(t->cum) >= cutoff;
}

/* How many of the sorted nodes to keep so that nodes plus their tag boxes stay within
 * nodecount, as pprof counts them. */
static int select_top(const struct sc_callgraph_int *c, const struct pass *g, uint32_t nodecount,
                      uint32_t *keep)
{
    uint32_t *ntags = NULL;
    if (g->nt) {
        ntags = calloc((size_t)c->nids + 1, sizeof *ntags);
        if (!ntags)
            return SC_ENOMEM;
        for (uint32_t i = 0; i < g->nt; i++)
            if (g->t[i].flat != 0 && tag_kept(&g->t[i], c->node_cutoff))
                ntags[g->t[i].node]++;
    }
    uint32_t max = nodecount;
    uint64_t count = 0;
    for (uint32_t i = 0; i < g->nn; i++) {
        uint32_t t = ntags ? ntags[g->nodes[i]] : 0;
        count += (t > MAX_NODELETS ? MAX_NODELETS : t) + 1;
        if (count >= max) {
            max = i + 1;
            break;
        }
    }
    free(ntags);
    *keep = max > g->nn ? g->nn : max;
    return 0;
}

/* Drops residual edges whose callee can be reached from the caller another way, lightest
 * first, as pprof does to unclutter the picture. */
static int remove_redundant(const struct sc_callgraph_int *c, struct pass *g)
{
    size_t n = (size_t)c->nids + 1;
    uint32_t *in_start = calloc(n + 1, sizeof *in_start);
    uint32_t *in_list = malloc(((size_t)g->ne + 1) * sizeof *in_list);
    uint32_t *seen = calloc(n, sizeof *seen);
    uint32_t *queue = malloc(n * sizeof *queue);
    uint32_t *ins = malloc(((size_t)g->ne + 1) * sizeof *ins);
    int rc = SC_ENOMEM;
    if (!in_start || !in_list || !seen || !queue || !ins)
        goto out;
    for (uint32_t i = 0; i < g->ne; i++)
        if (!g->e[i].dead)
            in_start[g->e[i].dst + 1]++;
    for (size_t i = 0; i < n; i++)
        in_start[i + 1] += in_start[i];
    {
        uint32_t *fill = calloc(n, sizeof *fill);
        if (!fill)
            goto out;
        for (uint32_t i = 0; i < g->ne; i++)
            if (!g->e[i].dead) {
                uint32_t d = g->e[i].dst;
                in_list[in_start[d] + fill[d]++] = i;
            }
        free(fill);
    }
    uint32_t stamp = 0;
    struct sort_ctx sc = {c, g, NULL};
    for (uint32_t i = g->nn; i-- > 0;) {
        uint32_t node = g->nodes[i], nin = 0;
        for (uint32_t k = in_start[node]; k < in_start[node + 1]; k++)
            if (!g->e[in_list[k]].dead)
                ins[nin++] = in_list[k];
        if (nin > 1)
            qsort_r(ins, nin, sizeof *ins, cmp_edges, &sc);
        for (uint32_t j = nin; j-- > 0;) {
            struct pedge *e = &g->e[ins[j]];
            if (!e->residual)
                break; /* never drop an edge heavier than a real call */
            /* breadth-first over callers from the callee, without e itself */
            stamp++;
            uint32_t qh = 0, qt = 0;
            int found = 0;
            seen[e->dst] = stamp;
            queue[qt++] = e->dst;
            while (qh < qt && !found) {
                uint32_t x = queue[qh++];
                for (uint32_t k = in_start[x]; k < in_start[x + 1]; k++) {
                    const struct pedge *ie = &g->e[in_list[k]];
                    if (ie->dead || ie == e || seen[ie->src] == stamp)
                        continue;
                    if (ie->src == e->src) {
                        found = 1;
                        break;
                    }
                    seen[ie->src] = stamp;
                    queue[qt++] = ie->src;
                }
            }
            if (found)
                e->dead = 1;
        }
    }
    rc = 0;
out:
    free(in_start);
    free(in_list);
    free(seen);
    free(queue);
    free(ins);
    return rc;
}

/* ---- the pipeline ------------------------------------------------------------------------ */

static int keep_first(struct sc_callgraph_int *c, const struct pass *g, uint32_t n, uint8_t **kept)
{
    free(*kept);
    *kept = calloc((size_t)c->nids + 1, 1);
    if (!*kept)
        return SC_ENOMEM;
    for (uint32_t i = 0; i < n; i++)
        (*kept)[g->nodes[i]] = 1;
    return 0;
}

/* The graph up to the node count cut: identities, tags, the node fraction cut, and the
 * graph rebuilt without the dropped nodes, sorted by entropy, in *base (the caller
 * releases it). */
static int cg_prepare(const struct sc_profile *p, int vi, const struct sc_callgraph_opts *o,
                      struct sc_callgraph *g, struct pass *base, char *err)
{
    memset(g, 0, sizeof *g);
    memset(base, 0, sizeof *base);
    if (vi < 0 || (uint32_t)vi >= p->nsample_types)
        return sc_errf(err, SC_EINVAL, "sample index %d out of range", vi);
    struct sc_callgraph_int *c = calloc(1, sizeof *c);
    if (!c)
        return sc_errf(err, SC_ENOMEM, "out of memory");
    g->in = c;
    c->p = p;
    c->vi = vi;
    sc_arena_init(&c->arena);
    c->names.arena = c->groups.arena = c->tagnames.arena = &c->arena;
    struct pass cur, next;
    memset(&cur, 0, sizeof cur);
    memset(&next, 0, sizeof next);
    uint8_t *kept = NULL;
    int rc = build_ids(c, p);
    if (!rc)
        rc = build_sample_tags(c, p);
    if (rc) {
        rc = sc_errf(err, rc, "%s", sc_strerror(rc));
        goto out;
    }
    if ((rc = run_pass(c, NULL, &cur, err)))
        goto out;
    g->total = cur.total;
    int64_t flat_all = 0;
    for (uint32_t i = 0; i < cur.nn; i++)
        flat_all += cur.flat[cur.nodes[i]];
    c->node_cutoff = abs64((int64_t)((double)flat_all * o->nodefraction));
    c->edge_cutoff = abs64((int64_t)((double)flat_all * o->edgefraction));

    /* 1: the node fraction cut, then a graph without the dropped nodes */
    if (c->node_cutoff > 0) {
        kept = calloc((size_t)c->nids + 1, 1);
        if (!kept) {
            rc = sc_errf(err, SC_ENOMEM, "out of memory");
            goto out;
        }
        uint32_t nk = 0;
        for (uint32_t i = 0; i < cur.nn; i++)
            if (abs64(cur.cum[cur.nodes[i]]) >= c->node_cutoff) {
                kept[cur.nodes[i]] = 1;
                nk++;
            }
        if (nk != cur.nn) {
            g->dropped_nodes = cur.nn - nk;
            if ((rc = run_pass(c, kept, &next, err)))
                goto out;
            pass_release(&cur);
            cur = next;
            memset(&next, 0, sizeof next);
        }
    }
    g->orig_count = cur.nn;
    if ((rc = sort_entropy(c, &cur))) {
        rc = sc_errf(err, rc, "%s", sc_strerror(rc));
        goto out;
    }
    *base = cur;
    memset(&cur, 0, sizeof cur);
out:
    pass_release(&cur);
    pass_release(&next);
    free(kept);
    return rc;
}

/* The rest of the pipeline on a prepared graph: the top nodecount nodes (0: all), the edge
 * cuts, the result in pprof's order. With consume, base may become the result (when every
 * node is kept) and must not be used again; without, it is left as it was (its edges'
 * marks aside, which every selection sets alike), so selections can be repeated. */
static int cg_select(struct sc_callgraph *g, struct pass *base, uint32_t nodecount, int consume,
                     char *err)
{
    struct sc_callgraph_int *c = g->in;
    const struct sc_profile *p = c->p;
    int vi = c->vi;
    struct pass cur, next;
    memset(&next, 0, sizeof next);
    int owned = 0; /* cur is a pass of its own, not base */
    cur = *base;
    uint8_t *kept2 = NULL;
    int rc = 0;

    /* 2: the top nodes by entropy, then a graph of just those (rebuilt also when base
     * must stay as it is) */
    if (nodecount > 0 || !consume) {
        uint32_t n = cur.nn;
        if (nodecount > 0) {
            trim_edges(&cur, c->edge_cutoff);
            if ((rc = select_top(c, &cur, nodecount, &n)))
                goto nomem;
        }
        if (n != cur.nn || !consume) {
            if ((rc = keep_first(c, &cur, n, &kept2)))
                goto nomem;
            if ((rc = run_pass(c, kept2, &next, err)))
                goto out;
            cur = next;
            owned = 1;
            memset(&next, 0, sizeof next);
            if ((rc = sort_entropy(c, &cur)))
                goto nomem;
        }
    }
    if (!owned)
        memset(base, 0, sizeof *base); /* consumed: cur owns its arrays now */
    /* 3: light edges, then redundant residual ones */
    g->dropped_edges = trim_edges(&cur, c->edge_cutoff);
    if ((rc = remove_redundant(c, &cur)))
        goto nomem;

    /* the result, in pprof's order */
    uint32_t *pos = malloc(((size_t)c->nids + 1) * sizeof *pos);
    uint32_t *eidx = malloc(((size_t)cur.ne + 1) * sizeof *eidx);
    g->nodes = calloc((size_t)cur.nn + 1, sizeof *g->nodes);
    g->edges = calloc((size_t)cur.ne + 1, sizeof *g->edges);
    if (!pos || !eidx || !g->nodes || !g->edges) {
        free(pos);
        free(eidx);
        rc = SC_ENOMEM;
        goto nomem;
    }
    for (uint32_t i = 0; i < c->nids; i++)
        pos[i] = NONE;
    for (uint32_t i = 0; i < cur.nn; i++) {
        uint32_t id = cur.nodes[i];
        struct sc_callgraph_node *nd = &g->nodes[i];
        nd->name = id_name(c, id);
        nd->nameless = c->names.v[id].len && c->names.v[id].ptr[0] == '\1';
        nd->flat = cur.flat[id];
        nd->cum = cur.cum[id];
        nd->id = id;
        pos[id] = i;
    }
    g->nnodes = cur.nn;
    uint32_t ne = 0;
    for (uint32_t i = 0; i < cur.ne; i++)
        if (!cur.e[i].dead && pos[cur.e[i].src] != NONE && pos[cur.e[i].dst] != NONE)
            eidx[ne++] = i;
    struct sort_ctx sc = {c, &cur, NULL};
    if (ne > 1)
        qsort_r(eidx, ne, sizeof *eidx, cmp_edges, &sc);
    for (uint32_t i = 0; i < ne; i++) {
        const struct pedge *e = &cur.e[eidx[i]];
        g->edges[i].src = pos[e->src];
        g->edges[i].dst = pos[e->dst];
        g->edges[i].weight = e->weight;
        g->edges[i].residual = e->residual;
        g->edges[i].inlined = e->inlined;
    }
    g->nedges = ne;
    free(pos);
    free(eidx);

    /* tags by identity, for the writer */
    c->tag_start = calloc((size_t)c->nids + 2, sizeof *c->tag_start);
    c->tag_list = malloc(((size_t)cur.nt + 1) * sizeof *c->tag_list);
    if (!c->tag_start || !c->tag_list) {
        rc = SC_ENOMEM;
        goto nomem;
    }
    for (uint32_t i = 0; i < cur.nt; i++)
        c->tag_start[cur.t[i].node + 1]++;
    for (uint32_t i = 0; i < c->nids; i++)
        c->tag_start[i + 1] += c->tag_start[i];
    for (uint32_t i = 0; i < cur.nt; i++)
        c->tag_list[c->tag_start[cur.t[i].node]++] = i;
    for (uint32_t i = c->nids; i > 0; i--)
        c->tag_start[i] = c->tag_start[i - 1];
    c->tag_start[0] = 0;

    /* the single output unit pprof picks from the smallest shown value */
    struct sc_str unit = sc_profile_str(p, p->sample_types[vi].unit);
    char *u = sc_arena_strndup(&c->arena, unit.ptr ? unit.ptr : "", unit.len);
    if (!u) {
        rc = SC_ENOMEM;
        goto nomem;
    }
    int64_t min = 0;
    for (uint32_t i = 0; i < g->nnodes; i++) {
        int64_t v = abs64(g->nodes[i].flat) ? abs64(g->nodes[i].flat) : abs64(g->nodes[i].cum);
        if (v > 0 && (min == 0 || v < min))
            min = v;
    }
    if (min == 0)
        min = g->total;
    c->ounit = g->nnodes ? sc_units_pick(min, g->total, u) : "minimum";
    c->final = cur;
    memset(&cur, 0, sizeof cur);
    rc = 0;
    goto out;
nomem:
    rc = sc_errf(err, rc, "%s", sc_strerror(rc));
out:
    pass_release(&cur);
    pass_release(&next);
    free(kept2);
    return rc;
}

/* Frees what cg_select made, so another selection can follow. */
static void cg_unselect(struct sc_callgraph *g)
{
    struct sc_callgraph_int *c = g->in;
    if (c) {
        pass_release(&c->final);
        free(c->tag_start);
        free(c->tag_list);
        c->tag_start = c->tag_list = NULL;
    }
    free(g->nodes);
    free(g->edges);
    g->nodes = NULL;
    g->edges = NULL;
    g->nnodes = g->nedges = 0;
    g->dropped_edges = 0;
}

int sc_callgraph_compute(const struct sc_profile *p, int vi, const struct sc_callgraph_opts *o,
                         struct sc_callgraph *g, char *err)
{
    struct pass base;
    int rc = cg_prepare(p, vi, o, g, &base, err);
    if (!rc)
        rc = cg_select(g, &base, o->nodecount, 1, err);
    pass_release(&base);
    return rc;
}

void sc_callgraph_release(struct sc_callgraph *g)
{
    struct sc_callgraph_int *c = g->in;
    if (c) {
        pass_release(&c->final);
        sc_strtab_release(&c->names);
        sc_strtab_release(&c->groups);
        sc_strtab_release(&c->tagnames);
        free(c->loc_start);
        free(c->loc_n);
        free(c->loc_ids);
        free(c->s_group);
        free(c->s_num_start);
        free(c->s_num_n);
        free(c->nums);
        free(c->tag_start);
        free(c->tag_list);
        sc_arena_release(&c->arena);
        free(c);
    }
    free(g->nodes);
    free(g->edges);
    memset(g, 0, sizeof *g);
}

/* ---- DOT ---------------------------------------------------------------------------------- */

/* pprof's escaping for DOT strings: backslash and quote escaped, newlines left-justified. */
static void put_esc(struct sc_buf *out, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        char ch = s[i];
        if (ch == '\\' || ch == '"') {
            sc_buf_putc(out, '\\');
            sc_buf_putc(out, ch);
        } else if (ch == '\n') {
            sc_buf_puts(out, "\\l");
        } else {
            sc_buf_putc(out, ch);
        }
    }
}

static void put_value(struct sc_buf *out, const struct sc_callgraph_int *c, int64_t v)
{
    struct sc_str u = sc_profile_str(c->p, c->p->sample_types[c->vi].unit);
    char unit[64];
    snprintf(unit, sizeof unit, "%.*s", (int)u.len, u.ptr ? u.ptr : "");
    sc_units_label(out, v, unit, c->ounit);
}

/* pprof's percentage without the padding. */
static void put_pct(struct sc_buf *out, int64_t v, int64_t total)
{
    struct sc_buf t = SC_BUF_INIT;
    sc_units_percent(&t, v, total);
    const char *s = t.data ? t.data : "";
    while (*s == ' ')
        s++;
    sc_buf_puts(out, s);
    sc_buf_release(&t);
}

/* A node's name as pprof prints it in a box: shortened, one line per name component. */
static void put_multiline_name(struct sc_buf *out, const struct sc_callgraph_node *n)
{
    if (n->nameless) {
        put_esc(out, n->name.ptr, n->name.len);
        sc_buf_puts(out, "\\n");
        return;
    }
    struct sc_buf s = SC_BUF_INIT, e = SC_BUF_INIT;
    sc_callgraph_shorten_name(n->name.ptr, n->name.len, &s);
    put_esc(&e, s.data ? s.data : "", s.len);
    const char *x = e.data ? e.data : "";
    for (size_t i = 0; i < e.len;) {
        if (x[i] == ':' && i + 1 < e.len && x[i + 1] == ':') {
            sc_buf_puts(out, "\\n");
            i += 2;
        } else if (e.len - i >= 5 && memcmp(x + i, "[...]", 5) == 0) {
            sc_buf_puts(out, "[\xe2\x80\xa6]"); /* Go type parameters, kept on one line */
            i += 5;
        } else if (x[i] == '.') {
            sc_buf_puts(out, "\\n");
            i++;
        } else {
            sc_buf_putc(out, x[i++]);
        }
    }
    sc_buf_puts(out, "\\n");
    if (s.oom || e.oom)
        out->oom = 1;
    sc_buf_release(&s);
    sc_buf_release(&e);
}

/* A tag as the writer handles it (numeric tags may be merged into ranges). */
struct vtag {
    struct sc_str name;
    int64_t value, flat, cum;
};

/* pprof's tag order: |cum| (unless flat tags are shown), |flat|, name. */
static int cmp_vtags(const void *a, const void *b, void *arg)
{
    const struct vtag *x = a, *y = b;
    int flat = *(const int *)arg;
    if (!flat && x->cum != y->cum)
        return abs64(x->cum) > abs64(y->cum) ? -1 : abs64(x->cum) < abs64(y->cum) ? 1 : 0;
    if (x->flat != y->flat)
        return abs64(x->flat) > abs64(y->flat) ? -1 : abs64(x->flat) < abs64(y->flat) ? 1 : 0;
    return cmp_str(x->name, y->name);
}

/* One tag box: "<box> [...]" and its edge from `from`. */
static void put_nodelet(struct sc_buf *out, const struct sc_callgraph_int *c, const char *box,
                        const char *from, struct sc_str name, int64_t w, const char *attr)
{
    struct sc_buf v = SC_BUF_INIT;
    put_value(&v, c, w);
    const char *ws = v.data ? v.data : "";
    sc_buf_printf(out, "%s [label = \"%.*s\" id=\"%s\" fontsize=8 shape=box3d tooltip=\"%s\"]\n",
                  box, (int)name.len, name.ptr, box, ws);
    if (c->large) /* no edge label anywhere, or dot doubles every edge's ranks */
        sc_buf_printf(out, "%s -> %s [weight=100 tooltip=\"%s\"%s]\n", from, box, ws, attr);
    else
        sc_buf_printf(out,
                      "%s -> %s [label=\" %s\" weight=100 tooltip=\"%s\" labeltooltip=\"%s\"%s]\n",
                      from, box, ws, ws, ws, attr);
    if (v.oom)
        out->oom = 1;
    sc_buf_release(&v);
}

/* Numeric tag boxes under source: at most four, nearby values merged into "a..b" ranges. */
static void numeric_nodelets(struct sc_buf *out, struct sc_callgraph_int *c, struct vtag *ts,
                             uint32_t n, int flat, const char *source)
{
    if (n > 1)
        qsort_r(ts, n, sizeof *ts, cmp_vtags, &flat);
    struct vtag merged[MAX_NODELETS];
    if (n > MAX_NODELETS) {
        uint32_t *grp = malloc(n * sizeof *grp);
        if (!grp) {
            out->oom = 1;
            return;
        }
        const char *u;
        for (uint32_t i = 0; i < n; i++) {
            uint32_t best = 0;
            if (i >= MAX_NODELETS) {
                double d = 0;
                for (uint32_t k = 0; k < MAX_NODELETS; k++) {
                    double v = sc_units_scale(ts[k].value, c->num_unit, c->num_unit, &u);
                    double nd = fabs(v - (double)ts[i].value);
                    if (k == 0 || nd < d) {
                        best = k;
                        d = nd;
                    }
                }
            } else {
                best = i;
            }
            grp[i] = best;
        }
        for (uint32_t k = 0; k < MAX_NODELETS; k++) {
            uint32_t cnt = 0, mi = k, ma = k;
            int64_t f = 0, cu = 0;
            for (uint32_t i = 0; i < n; i++) {
                if (grp[i] != k)
                    continue;
                cnt++;
                f += ts[i].flat;
                cu += ts[i].cum;
                if (i == k)
                    continue;
                if ((int64_t)sc_units_scale(ts[i].value, c->num_unit, c->num_unit, &u) <
                    ts[mi].value)
                    mi = i;
                if ((int64_t)sc_units_scale(ts[i].value, c->num_unit, c->num_unit, &u) >
                    ts[ma].value)
                    ma = i;
            }
            struct sc_buf l = SC_BUF_INIT;
            sc_units_label(&l, ts[mi].value, c->num_unit, "auto");
            if (cnt > 1) {
                sc_buf_puts(&l, "..");
                sc_units_label(&l, ts[ma].value, c->num_unit, "auto");
            }
            char *name = l.oom ? NULL : sc_arena_strndup(&c->arena, l.data ? l.data : "", l.len);
            sc_buf_release(&l);
            if (!name) {
                out->oom = 1;
                free(grp);
                return;
            }
            merged[k].name.ptr = name;
            merged[k].name.len = (uint32_t)strlen(name);
            merged[k].value = 0;
            merged[k].flat = f;
            merged[k].cum = cu;
        }
        free(grp);
        ts = merged;
        n = MAX_NODELETS;
        qsort_r(ts, n, sizeof *ts, cmp_vtags, &flat);
    }
    for (uint32_t j = 0; j < n; j++) {
        int64_t w = ts[j].cum;
        const char *attr = " style=\"dotted\"";
        if (flat || ts[j].flat == ts[j].cum) {
            w = ts[j].flat;
            attr = "";
        }
        if (w != 0) {
            char box[48];
            snprintf(box, sizeof box, "N%s_%u", source, j);
            put_nodelet(out, c, box, source, ts[j].name, w, attr);
        }
    }
}

/* The tag boxes of node i (id "N<i+1>"); returns whether there were any. */
static int put_nodelets(struct sc_buf *out, struct sc_callgraph_int *c,
                        const struct sc_callgraph *g, uint32_t i, int has_out)
{
    uint32_t id = g->nodes[i].id;
    uint32_t b = c->tag_start[id], e = c->tag_start[id + 1];
    if (b == e)
        return 0;
    const struct pass *f = &c->final;
    size_t before = out->len;
    struct vtag *labels = malloc((e - b) * sizeof *labels), *nums = malloc((e - b) * sizeof *nums);
    if (!labels || !nums) {
        free(labels);
        free(nums);
        out->oom = 1;
        return 0;
    }
    uint32_t nl = 0;
    for (uint32_t k = b; k < e; k++) {
        const struct cg_tag *t = &f->t[c->tag_list[k]];
        if (t->name == 0 && tag_kept(t, c->node_cutoff)) {
            labels[nl].name = c->groups.v[t->group];
            labels[nl].value = (int64_t)t->group; /* remembered for its numeric tags */
            labels[nl].flat = t->flat;
            labels[nl++].cum = t->cum;
        }
    }
    int flat = has_out; /* inner nodes show flat tags; leaves their cum */
    if (nl > 1)
        qsort_r(labels, nl, sizeof *labels, cmp_vtags, &flat);
    char source[32];
    for (uint32_t j = 0; j < nl && j < MAX_NODELETS; j++) {
        int64_t w = flat ? labels[j].flat : labels[j].cum;
        if (w == 0)
            continue;
        char box[48];
        snprintf(source, sizeof source, "N%u", i + 1);
        snprintf(box, sizeof box, "N%u_%u", i + 1, j);
        put_nodelet(out, c, box, source, labels[j].name, w, "");
        uint32_t group = (uint32_t)labels[j].value, nn = 0;
        for (uint32_t k = b; k < e; k++) {
            const struct cg_tag *t = &f->t[c->tag_list[k]];
            if (t->name && t->group == group && tag_kept(t, c->node_cutoff)) {
                nums[nn].name = c->tagnames.v[t->name];
                nums[nn].value = t->value;
                nums[nn].flat = t->flat;
                nums[nn++].cum = t->cum;
            }
        }
        if (nn) {
            snprintf(source, sizeof source, "N%u_%u", i + 1, j);
            numeric_nodelets(out, c, nums, nn, flat, source);
        }
    }
    uint32_t nn = 0;
    for (uint32_t k = b; k < e; k++) {
        const struct cg_tag *t = &f->t[c->tag_list[k]];
        if (t->name && t->group == 0 && tag_kept(t, c->node_cutoff)) {
            nums[nn].name = c->tagnames.v[t->name];
            nums[nn].value = t->value;
            nums[nn].flat = t->flat;
            nums[nn++].cum = t->cum;
        }
    }
    if (nn) {
        snprintf(source, sizeof source, "N%u", i + 1);
        numeric_nodelets(out, c, nums, nn, flat, source);
    }
    free(labels);
    free(nums);
    return out->len != before;
}

static void put_base(struct sc_buf *out, struct sc_str f)
{
    const char *base = f.ptr + f.len;
    while (base > f.ptr && base[-1] != '/')
        base--;
    sc_buf_append(out, base, (size_t)(f.ptr + f.len - base));
}

/* The legend's lines, each ending in '\n' in lines (pprof's report labels). */
static void legend_lines(const struct sc_profile *p, int vi, const struct sc_callgraph_opts *o,
                         const struct sc_callgraph *g, struct sc_buf *lines)
{
    const struct sc_callgraph_int *c = g->in;
    if (p->nmappings) {
        struct sc_str f = sc_profile_str(p, p->mappings[0].filename);
        if (f.len) {
            sc_buf_puts(lines, "File: ");
            put_base(lines, f);
            sc_buf_putc(lines, '\n');
        }
        struct sc_str b = sc_profile_str(p, p->mappings[0].build_id);
        if (b.len) {
            sc_buf_puts(lines, "Build ID: ");
            sc_buf_append(lines, b.ptr, b.len);
            sc_buf_putc(lines, '\n');
        }
    }
    for (uint32_t i = 0; i < p->ncomments; i++) {
        struct sc_str cm = sc_profile_str(p, p->comments[i]);
        if (cm.len && cm.ptr[0] == '#')
            continue;
        sc_buf_append(lines, cm.ptr, cm.len);
        sc_buf_putc(lines, '\n');
    }
    struct sc_str type = sc_profile_str(p, p->sample_types[vi].type);
    struct sc_str us = sc_profile_str(p, p->sample_types[vi].unit);
    char unit[64];
    snprintf(unit, sizeof unit, "%.*s", (int)us.len, us.ptr ? us.ptr : "");
    if (type.len) {
        sc_buf_puts(lines, "Type: ");
        sc_buf_append(lines, type.ptr, type.len);
        sc_buf_putc(lines, '\n');
    }
    sc_top_time_line(p, lines);
    if (p->duration_nanos) {
        sc_buf_puts(lines, "Duration: ");
        sc_units_label(lines, p->duration_nanos, "nanoseconds", "auto");
        sc_buf_puts(lines, ", Total samples = ");
        put_value(lines, c, g->total);
        const char *tu;
        double tn = sc_units_scale(g->total, unit, "nanoseconds", &tu);
        sc_buf_putc(lines, ' ');
        if (!strcmp(tu, "ns") && (int64_t)tn != 0) {
            sc_buf_putc(lines, '(');
            sc_units_percent(lines, (int64_t)tn, p->duration_nanos);
            sc_buf_putc(lines, ')');
        }
        sc_buf_putc(lines, '\n');
    }
    int64_t flat_sum = 0;
    for (uint32_t i = 0; i < g->nnodes; i++)
        flat_sum += g->nodes[i].flat;
    sc_buf_puts(lines, "Showing nodes accounting for ");
    put_value(lines, c, flat_sum);
    sc_buf_puts(lines, ", ");
    put_pct(lines, flat_sum, g->total);
    sc_buf_puts(lines, " of ");
    put_value(lines, c, g->total);
    sc_buf_puts(lines, " total\n");
    if (g->total) {
        if (g->dropped_nodes) {
            sc_buf_printf(lines, "Dropped %u node%s (cum <= ", g->dropped_nodes,
                          g->dropped_nodes > 1 ? "s" : "");
            put_value(lines, c, abs64((int64_t)((double)g->total * o->nodefraction)));
            sc_buf_puts(lines, ")\n");
        }
        if (g->dropped_edges) {
            sc_buf_printf(lines, "Dropped %u edge%s (freq <= ", g->dropped_edges,
                          g->dropped_edges > 1 ? "s" : "");
            put_value(lines, c, abs64((int64_t)((double)g->total * o->edgefraction)));
            sc_buf_puts(lines, ")\n");
        }
        if (g->nnodes > 0 && g->nnodes < g->orig_count)
            sc_buf_printf(lines, "Showing top %u nodes out of %u\n", g->nnodes, g->orig_count);
        /* what the layout budget left out (sc_callgraph_svg) */
        if (g->asked)
            sc_buf_printf(lines, "Fewer nodes than the %u asked: more take too long to lay out\n",
                          g->asked);
        if (g->thinned)
            sc_buf_printf(lines,
                          "Dropped %u more edge%s to lay out in time (each node keeps its "
                          "heaviest caller)\n",
                          g->thinned, g->thinned > 1 ? "s" : "");
    }
    /* the blank line before the pointer is pprof's */
    sc_buf_puts(lines, "\nSee https://git.io/JfYMW for how to read the graph\n");
}

void sc_callgraph_write_dot(const struct sc_profile *p, int vi, const struct sc_callgraph_opts *o,
                            const struct sc_callgraph *g, struct sc_buf *out)
{
    struct sc_callgraph_int *c = g->in;
    if (!c) {
        out->oom = 1;
        return;
    }
    struct sc_buf title = SC_BUF_INIT;
    if (o->title)
        sc_buf_puts(&title, o->title);
    else if (p->nmappings && sc_profile_str(p, p->mappings[0].filename).len)
        put_base(&title, sc_profile_str(p, p->mappings[0].filename));
    const char *ts = title.len ? title.data : "";

    sc_buf_puts(out, "digraph \"");
    put_esc(out, title.len ? ts : "unnamed", title.len ? title.len : 7);
    sc_buf_puts(out, "\" {\nnode [style=filled fillcolor=\"#f8f8f8\"]\n");
    c->large = o->style == SC_CALLGRAPH_STYLE_LARGE;
    if (c->large) {
        /* the virtual nodes of the edges that span ranks sit nodesep apart: on a dense graph
         * they make the picture many times wider than tall (34,000 by 9,000 points for
         * synthetic-allocs-100k). nodesep (pprof's 0.25 inches) shrinks to keep it about
         * as wide as tall, a rank being about 1.8 inches of it. */
        struct shape sh;
        uint64_t size = size_of(g, g->nnodes, g->nedges, &sh);
        double per_rank =
            size != UINT64_MAX && sh.ranks ? (double)(size - g->nnodes) / sh.ranks : 0;
        double sep = per_rank > 0 ? 1.8 * sh.ranks / per_rank : 0.25;
        sc_buf_printf(out, "graph [" LARGE_ATTRS " nodesep=%.2f]\n",
                      sep < 0.02   ? 0.02
                      : sep > 0.25 ? 0.25
                                   : sep);
    }

    /* the legend: the first line names the box, all lines left-justified inside it */
    struct sc_buf lines = SC_BUF_INIT;
    legend_lines(p, vi, o, g, &lines);
    const char *ls = lines.data ? lines.data : "";
    const char *nl = memchr(ls, '\n', lines.len);
    size_t first = nl ? (size_t)(nl - ls) : lines.len;
    sc_buf_puts(out, "subgraph cluster_L { \"");
    put_esc(out, ls, first);
    sc_buf_puts(out, "\" [shape=box fontsize=16 label=\"");
    for (size_t i = 0; i < lines.len; i++) {
        if (ls[i] == '\n')
            sc_buf_puts(out, "\\l");
        else if (ls[i] == '\\' || ls[i] == '"') {
            sc_buf_putc(out, '\\');
            sc_buf_putc(out, ls[i]);
        } else
            sc_buf_putc(out, ls[i]);
    }
    sc_buf_putc(out, '"');
    if (title.len) {
        sc_buf_puts(out, " tooltip=\"");
        put_esc(out, ts, title.len);
        sc_buf_putc(out, '"');
    }
    sc_buf_puts(out, "] }\n");
    if (lines.oom || title.oom)
        out->oom = 1;
    sc_buf_release(&lines);
    sc_buf_release(&title);

    double max_flat = 0;
    for (uint32_t i = 0; i < g->nnodes; i++)
        if ((double)abs64(g->nodes[i].flat) > max_flat)
            max_flat = (double)abs64(g->nodes[i].flat);
    uint8_t *has_out = calloc((size_t)g->nnodes + 1, 1);
    uint8_t *has_nodelets = calloc((size_t)g->nnodes + 1, 1);
    if (!has_out || !has_nodelets) {
        free(has_out);
        free(has_nodelets);
        out->oom = 1;
        return;
    }
    for (uint32_t i = 0; i < g->nedges; i++)
        has_out[g->edges[i].src] = 1;
    double tot = (double)abs64(g->total);
    for (uint32_t i = 0; i < g->nnodes; i++) {
        const struct sc_callgraph_node *n = &g->nodes[i];
        struct sc_buf fv = SC_BUF_INIT, cv = SC_BUF_INIT;
        put_value(&fv, c, n->flat);
        sc_buf_printf(out, "N%u [label=\"", i + 1);
        put_multiline_name(out, n);
        if (n->flat != 0) {
            sc_buf_append(out, fv.data, fv.len);
            sc_buf_puts(out, " (");
            put_pct(out, n->flat, g->total);
            sc_buf_putc(out, ')');
        } else {
            sc_buf_putc(out, '0');
        }
        if (n->cum != n->flat) {
            sc_buf_puts(out, n->flat != 0 ? "\\n" : " ");
            put_value(&cv, c, n->cum);
            sc_buf_puts(out, "of ");
            sc_buf_append(out, cv.data, cv.len);
            sc_buf_puts(out, " (");
            put_pct(out, n->cum, g->total);
            sc_buf_putc(out, ')');
        } else {
            sc_buf_append(&cv, fv.data, fv.len);
        }
        /* font from 8 to 24 points with the square root of flat, so small nodes stay legible */
        int fs = 8;
        if (max_flat != 0 && n->flat != 0 && (double)abs64(n->flat) <= max_flat)
            fs += (int)ceil(16.0 * sqrt((double)abs64(n->flat) / max_flat));
        char fg[8], bg[8];
        sc_callgraph_color((double)n->cum / tot, 0, fg);
        sc_callgraph_color((double)n->cum / tot, 1, bg);
        sc_buf_printf(out, "\" id=\"node%u\" fontsize=%d shape=box tooltip=\"", i + 1, fs);
        put_esc(out, n->name.ptr, n->name.len);
        sc_buf_puts(out, " (");
        sc_buf_append(out, cv.data, cv.len);
        sc_buf_printf(out, ")\" color=\"%s\" fillcolor=\"%s\"]\n", fg, bg);
        if (fv.oom || cv.oom)
            out->oom = 1;
        sc_buf_release(&fv);
        sc_buf_release(&cv);
        has_nodelets[i] = (uint8_t)put_nodelets(out, c, g, i, has_out[i]);
    }
    for (uint32_t i = 0; i < g->nedges; i++) {
        const struct sc_callgraph_edge *e = &g->edges[i];
        const struct sc_callgraph_node *s = &g->nodes[e->src], *d = &g->nodes[e->dst];
        struct sc_buf w = SC_BUF_INIT;
        put_value(&w, c, e->weight);
        const char *ws = w.data ? w.data : "";
        sc_buf_printf(out, "N%u -> N%u [", e->src + 1, e->dst + 1);
        /* the large style's edges have no label: the value (and "inline") is in the tooltip */
        int large = o->style == SC_CALLGRAPH_STYLE_LARGE;
        if (!large)
            sc_buf_printf(out, "label=\" %s%s\"", ws, e->inlined ? "\\n (inline)" : "");
        if (g->total != 0) {
            int64_t wt = abs64(e->weight * 100 / g->total), pw = abs64(e->weight * 5 / g->total);
            int weight = 1 + (int)(wt < 100 ? wt : 100), width = 1 + (int)(pw < 5 ? pw : 5);
            if (weight > 1)
                sc_buf_printf(out, " weight=%d", weight);
            if (width > 1)
                sc_buf_printf(out, " penwidth=%d", width);
            char col[8];
            sc_callgraph_color((double)e->weight / tot, 0, col);
            sc_buf_printf(out, " color=\"%s\"", col);
        }
        for (int k = 0; k < 2 - large; k++) {
            sc_buf_puts(out, k ? " labeltooltip=\"" : " tooltip=\"");
            put_esc(out, s->name.ptr, s->name.len);
            sc_buf_puts(out, e->residual ? " ... " : " -> ");
            put_esc(out, d->name.ptr, d->name.len);
            sc_buf_printf(out, " (%s%s)\"", ws, large && e->inlined ? ", inline" : "");
        }
        if (e->residual)
            sc_buf_puts(out, " style=\"dotted\"");
        if (has_nodelets[e->src])
            sc_buf_puts(out, " minlen=2");
        sc_buf_puts(out, "]\n");
        if (w.oom)
            out->oom = 1;
        sc_buf_release(&w);
    }
    sc_buf_puts(out, "}\n");
    free(has_out);
    free(has_nodelets);
}

int sc_callgraph_dot(const struct sc_profile *p, int vi, const struct sc_callgraph_opts *o,
                     struct sc_buf *out, char *err)
{
    struct sc_callgraph g;
    int rc = sc_callgraph_compute(p, vi, o, &g, err);
    if (!rc) {
        sc_callgraph_write_dot(p, vi, o, &g, out);
        if (out->oom)
            rc = sc_errf(err, SC_ENOMEM, "out of memory");
    }
    sc_callgraph_release(&g);
    return rc;
}

/* ---- SVG through graphviz --------------------------------------------------------------- */

/* graphviz keeps global state (error handler, symbol tables) and is not thread-safe */
static pthread_mutex_t gv_lock = PTHREAD_MUTEX_INITIALIZER;
static char gv_msg[SC_ERR_LEN]; /* the first error graphviz reported, under gv_lock */
/* One context for the life of the process: graphviz 2.42's pango text layout caches a
 * pointer to the last font name, which the context owns, so freeing the context between
 * calls makes the next layout read freed memory. Kept, it also saves loading the plugins
 * on every call. Everything per graph is freed. */
static GVC_t *gv_ctx;

static int gv_error(char *msg)
{
    if (!gv_msg[0]) {
        snprintf(gv_msg, sizeof gv_msg, "%s", msg);
        size_t n = strlen(gv_msg);
        while (n && (gv_msg[n - 1] == '\n' || gv_msg[n - 1] == ' '))
            gv_msg[--n] = 0;
    }
    return 0;
}

int sc_callgraph_render_svg(const char *dot, size_t len, struct sc_buf *out, char *err)
{
    /* agmemread wants a C string */
    char *text = malloc(len + 1);
    if (!text)
        return sc_errf(err, SC_ENOMEM, "out of memory");
    memcpy(text, dot, len);
    text[len] = 0;
    int rc = 0;
    pthread_mutex_lock(&gv_lock);
    gv_msg[0] = 0;
    agusererrf prev = agseterrf(gv_error);
    agerrlevel_t prev_level = agseterr(AGERR);
    if (!gv_ctx)
        gv_ctx = gvContext();
    GVC_t *gvc = gv_ctx;
    Agraph_t *graph = NULL;
    if (!gvc) {
        rc = sc_errf(err, SC_ENOMEM, "cannot start graphviz");
        goto done;
    }
    graph = agmemread(text);
    if (!graph) {
        rc = sc_errf(err, SC_EFORMAT, "graphviz cannot read the graph: %s",
                     gv_msg[0] ? gv_msg : "syntax error");
        goto done;
    }
    if (gvLayout(gvc, graph, "dot") != 0) {
        rc = sc_errf(err, SC_EINTERNAL, "graphviz layout failed: %s",
                     gv_msg[0] ? gv_msg : "no \"dot\" layout plugin");
        goto done;
    }
    char *data = NULL;
    unsigned int n = 0;
    if (gvRenderData(gvc, graph, "svg", &data, &n) != 0 || !data) {
        rc = sc_errf(err, SC_EINTERNAL, "graphviz cannot render svg: %s",
                     gv_msg[0] ? gv_msg : "no \"svg\" render plugin");
    } else {
        sc_buf_append(out, data, n);
        if (out->oom)
            rc = sc_errf(err, SC_ENOMEM, "out of memory");
    }
    if (data)
        gvFreeRenderData(data);
    gvFreeLayout(gvc, graph);
done:
    if (graph)
        agclose(graph);
    agseterr(prev_level);
    agseterrf(prev);
    pthread_mutex_unlock(&gv_lock);
    free(text);
    return rc;
}

/* ---- layout size and time ----------------------------------------------------------------- */

/* dot's layout time grows much faster than the graph: a call graph of deep stacks has long
 * chains of ranks, and every edge spanning ranks becomes a chain of virtual nodes that the
 * crossing minimisation and the network simplex of the positioning walk. The size here
 * counts those nodes: ranks as longest paths from the sources, with the edges that close
 * a cycle (found by a depth-first walk, as dot's acyclic pass does) turned around; the node
 * count plus one virtual node per rank an edge skips. Only the edges `kept` says are
 * counted; *sh (may be NULL) gets how many, and the ranks. */

uint64_t sc_callgraph_layout_size(const struct sc_callgraph *g, uint32_t k)
{
    return size_of(g, k, g->nedges, NULL);
}

/* Edge i of g in the graph of its first k nodes thinned to m edges: between two of those
 * nodes, not a loop, and among the m heaviest or its callee's heaviest caller edge. */
static int kept(const struct sc_callgraph *g, uint32_t i, uint32_t k, uint32_t m,
                const uint32_t *first_in)
{
    const struct sc_callgraph_edge *e = &g->edges[i];
    return e->src < k && e->dst < k && e->src != e->dst && (i < m || first_in[e->dst] == i);
}

static uint64_t size_of(const struct sc_callgraph *g, uint32_t k, uint32_t m, struct shape *sh)
{
    if (sh)
        sh->edges = sh->ranks = 0;
    if (k > g->nnodes)
        k = g->nnodes;
    if (k == 0)
        return 0;
    uint32_t *deg = calloc((size_t)k + 1, sizeof *deg), *adj = NULL, *start = NULL;
    uint32_t *rank = calloc(k, sizeof *rank), *order = malloc(k * sizeof *order);
    uint32_t *stack = malloc(k * sizeof *stack), *pos = calloc(k, sizeof *pos);
    uint32_t *first_in = malloc(k * sizeof *first_in);
    uint8_t *state = calloc(k, 1);
    uint64_t size = UINT64_MAX; /* out of memory: too large to lay out */
    if (!deg || !rank || !order || !stack || !pos || !first_in || !state)
        goto out;
    for (uint32_t v = 0; v < k; v++)
        first_in[v] = NONE;
    for (uint32_t i = 0; i < g->nedges; i++) {
        const struct sc_callgraph_edge *e = &g->edges[i];
        if (e->src < k && e->dst < k && e->src != e->dst && first_in[e->dst] == NONE)
            first_in[e->dst] = i; /* edges are sorted heaviest first */
    }
    uint32_t ne = 0;
    for (uint32_t i = 0; i < g->nedges; i++)
        if (kept(g, i, k, m, first_in)) {
            deg[g->edges[i].src]++;
            ne++;
        }
    if (sh)
        sh->edges = ne;
    start = malloc(((size_t)k + 1) * sizeof *start);
    adj = malloc(((size_t)ne + 1) * sizeof *adj);
    if (!start || !adj)
        goto out;
    start[0] = 0;
    for (uint32_t v = 0; v < k; v++)
        start[v + 1] = start[v] + deg[v];
    memset(deg, 0, (size_t)k * sizeof *deg);
    for (uint32_t i = 0; i < g->nedges; i++)
        if (kept(g, i, k, m, first_in)) {
            const struct sc_callgraph_edge *e = &g->edges[i];
            adj[start[e->src] + deg[e->src]++] = e->dst;
        }
    /* depth first in node order: post-order gives a topological order of the graph with
     * the back edges (to a node still on the stack) turned around */
    uint32_t no = 0;
    for (uint32_t s0 = 0; s0 < k; s0++) {
        if (state[s0])
            continue;
        uint32_t sp = 0;
        stack[sp++] = s0;
        state[s0] = 1;
        while (sp) {
            uint32_t v = stack[sp - 1];
            if (pos[v] < deg[v]) {
                uint32_t w = adj[start[v] + pos[v]++];
                if (!state[w]) {
                    state[w] = 1;
                    stack[sp++] = w;
                }
                continue;
            }
            state[v] = 2;
            order[no++] = v;
            sp--;
        }
    }
    /* reverse post-order is topological once the back edges (to a node finished later
     * than their source) are turned around: one sweep in that order gives every node the
     * longest path to it. A turned edge v -> w acts as w -> v, so each node relaxes its
     * forward out-edges and its turned in-edges: the latter are collected first. */
    uint32_t *at = pos; /* reused: the post-order index of each node */
    for (uint32_t i = 0; i < k; i++)
        at[order[i]] = i;
    uint32_t *tdeg = calloc((size_t)k + 1, sizeof *tdeg);
    uint32_t *tadj = malloc(((size_t)ne + 1) * sizeof *tadj);
    if (!tdeg || !tadj) {
        free(tdeg);
        free(tadj);
        goto out;
    }
    for (uint32_t v = 0; v < k; v++)
        for (uint32_t j = start[v]; j < start[v + 1]; j++)
            if (at[adj[j]] > at[v])
                tdeg[adj[j]]++;
    uint32_t acc = 0;
    for (uint32_t v = 0; v < k; v++) {
        uint32_t d = tdeg[v];
        tdeg[v] = acc;
        acc += d;
    }
    tdeg[k] = acc;
    for (uint32_t v = 0; v < k; v++)
        for (uint32_t j = start[v]; j < start[v + 1]; j++)
            if (at[adj[j]] > at[v])
                tadj[tdeg[adj[j]]++] = v; /* turned: adj[j] -> v */
    /* tdeg[v] now ends v's turned list; it starts where v - 1's ended */
    for (uint32_t i = k; i-- > 0;) {
        uint32_t v = order[i];
        for (uint32_t j = start[v]; j < start[v + 1]; j++) {
            uint32_t w = adj[j];
            if (at[w] < at[v] && rank[w] < rank[v] + 1)
                rank[w] = rank[v] + 1;
        }
        for (uint32_t j = v ? tdeg[v - 1] : 0; j < tdeg[v]; j++) {
            uint32_t w = tadj[j];
            if (rank[w] < rank[v] + 1)
                rank[w] = rank[v] + 1;
        }
    }
    free(tdeg);
    free(tadj);
    size = k;
    for (uint32_t v = 0; v < k && sh; v++)
        if (rank[v] + 1 > sh->ranks)
            sh->ranks = rank[v] + 1;
    for (uint32_t v = 0; v < k; v++)
        for (uint32_t j = start[v]; j < start[v + 1]; j++) {
            uint32_t a = rank[v], b = rank[adj[j]];
            uint32_t span = a > b ? a - b : b - a;
            if (span > 1)
                size += span - 1;
        }
out:
    free(deg);
    free(adj);
    free(start);
    free(rank);
    free(order);
    free(stack);
    free(pos);
    free(first_in);
    free(state);
    return size;
}

/* dot's CPU seconds for a layout of size s with e edges, by style. Fitted to
 * bench/callgraph_bench's figures (2-core VM shared with other work; the worker's start,
 * 0.05 s, is in the figures, not in the model), as (size, edges): seconds:
 *
 *   pprof's style        300,000-sample heap (bench/gen_pprof.py)  synthetic-allocs-100k
 *                        (275, 100): 0.07     (1321, 216): 0.42    (515, 128): 0.20
 *                        (4478, 295): 3.0     (7444, 405): 22      (2996, 256): 6.2
 *                        (11846, 528): > 120  (1141, 337): 0.28    (8614, 512): > 120
 *   the large style      (11846, 528): 0.22   (12008, 662): 0.25   (8614, 512): 0.26
 *                        (72843, 1213): 2.25                       (19404, 1024): 0.60
 *                                                                  (41745, 2048): 1.96
 *                                                                  (85410, 4097): 4.70
 *
 * pprof's style grows with about the cube of the size (dot's positioning runs its network
 * simplex to the end, and the splines are routed through every virtual node) and with the
 * edges' crossings on dense graphs; the model errs on the slow side, so that a graph near
 * the budget goes to the large style. The large style grows with the size (one feasible
 * tree over the virtual nodes) and with size times edges (two rounds of crossing
 * minimisation over ranks as wide as the edges that cross them). */
static double seconds_of(int style, uint64_t size, uint32_t nedges)
{
    double s = (double)size, e = (double)nedges;
    if (style == SC_CALLGRAPH_STYLE_LARGE)
        return s / 50000 + s * e / 1.2e8;
    return pow(s / 2000, 3) + s * e / 2e5;
}

double sc_callgraph_layout_seconds(const struct sc_callgraph *g, uint32_t k, int style)
{
    struct shape sh;
    uint64_t size = size_of(g, k, g->nedges, &sh);
    return size == UINT64_MAX ? HUGE_VAL : seconds_of(style, size, sh.edges);
}

uint32_t sc_callgraph_thin(struct sc_callgraph *g, uint32_t m)
{
    if (m >= g->nedges)
        return 0;
    uint8_t *has_in = calloc((size_t)g->nnodes + 1, 1);
    if (!has_in)
        return 0; /* nothing dropped: the layout is slower, not wrong */
    uint32_t n = 0;
    for (uint32_t i = 0; i < g->nedges; i++) {
        struct sc_callgraph_edge e = g->edges[i];
        int first = e.src != e.dst && !has_in[e.dst];
        if (e.src != e.dst)
            has_in[e.dst] = 1;
        if (i < m || first)
            g->edges[n++] = e;
    }
    free(has_in);
    uint32_t dropped = g->nedges - n;
    g->nedges = n;
    g->thinned += dropped;
    return dropped;
}

int64_t sc_callgraph_budget_ns(const struct sc_callgraph_opts *o)
{
    int64_t t = o->layout && o->layout->timeout_ns > 0 ? o->layout->timeout_ns : 30 * SC_NS_PER_S;
    return t / 4;
}

/* How to draw g within budget seconds: a style and the edges to keep (thinning only when
 * thin is set); fits is 0 when even every node's heaviest caller edge alone is too slow. */
struct plan {
    int style;
    uint32_t m;
    int fits;
    double seconds;
};

static struct plan plan_layout(const struct sc_callgraph *g, double budget, int thin)
{
    struct shape sh;
    uint64_t all = size_of(g, g->nnodes, g->nedges, &sh);
    struct plan p = {SC_CALLGRAPH_STYLE_PPROF, g->nedges, 1, seconds_of(0, all, sh.edges)};
    if (all != UINT64_MAX && p.seconds <= budget)
        return p;
    p.style = SC_CALLGRAPH_STYLE_LARGE;
    p.seconds = seconds_of(p.style, all, sh.edges);
    if ((all != UINT64_MAX && p.seconds <= budget) || !thin)
        return p;
    /* the most edges, heaviest first, that lay out in time */
    uint32_t lo = 0, hi = g->nedges;
    uint64_t size = size_of(g, g->nnodes, 0, &sh);
    p.fits = size != UINT64_MAX && seconds_of(p.style, size, sh.edges) <= budget;
    if (!p.fits) {
        p.m = 0;
        p.seconds = size == UINT64_MAX ? HUGE_VAL : seconds_of(p.style, size, sh.edges);
        return p;
    }
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo + 1) / 2;
        size = size_of(g, g->nnodes, mid, &sh);
        if (size != UINT64_MAX && seconds_of(p.style, size, sh.edges) <= budget)
            lo = mid;
        else
            hi = mid - 1;
    }
    p.m = lo;
    size = size_of(g, g->nnodes, lo, &sh);
    p.seconds = seconds_of(p.style, size, sh.edges);
    return p;
}

/* The most nodes of g, in its order, that lay out within budget seconds in the large
 * style with only their heaviest caller edges (at least 1). */
static uint32_t fit_nodes(const struct sc_callgraph *g, double budget)
{
    uint32_t lo = 1, hi = g->nnodes;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo + 1) / 2;
        struct shape sh;
        uint64_t size = size_of(g, mid, 0, &sh);
        if (size != UINT64_MAX && seconds_of(SC_CALLGRAPH_STYLE_LARGE, size, sh.edges) <= budget)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

/* What was drawn, as data attributes of the SVG's root element (inserted after "<svg"). */
static void put_drawn_attrs(struct sc_buf *out, size_t from, const struct sc_callgraph_drawn *d)
{
    const char *svg = NULL;
    for (size_t i = from; i + 4 <= out->len && !svg; i++)
        if (!memcmp(out->data + i, "<svg", 4) &&
            (out->data[i + 4] == ' ' || out->data[i + 4] == '\n'))
            svg = out->data + i + 4;
    if (!svg)
        return;
    struct sc_buf a = SC_BUF_INIT;
    sc_buf_printf(&a,
                  " data-nodes-asked=\"%u\" data-nodes=\"%u\" data-nodes-total=\"%u\""
                  " data-nodes-cut=\"%d\"",
                  d->asked, d->nodes, d->total_nodes, d->nodes_cut);
    sc_buf_printf(&a, " data-edges=\"%u\" data-edges-thinned=\"%u\"", d->edges, d->thinned);
    sc_buf_printf(&a, " data-flat=\"%lld\" data-total=\"%lld\" data-share=\"%.4f\"",
                  (long long)d->flat, (long long)d->total,
                  d->total ? (double)d->flat / (double)d->total : 0.0);
    sc_buf_printf(&a, " data-layout=\"%s\" data-seconds=\"%.2f\" data-full-seconds=\"%.2f\"",
                  d->style == SC_CALLGRAPH_STYLE_LARGE ? "large" : "pprof", d->seconds,
                  d->full_seconds > 1e9 ? 1e9 : d->full_seconds);
    sc_buf_printf(&a, " data-budget-seconds=\"%.2f\"", (double)d->budget_ns / 1e9);
    size_t at = (size_t)(svg - out->data), n = out->len - at;
    if (!a.oom && !sc_buf_reserve(out, a.len)) {
        memmove(out->data + at + a.len, out->data + at, n);
        memcpy(out->data + at, a.data, a.len);
        out->len += a.len;
    } else {
        out->oom = 1;
    }
    sc_buf_release(&a);
}

int sc_callgraph_svg(const struct sc_profile *p, int vi, const struct sc_callgraph_opts *o,
                     struct sc_buf *out, char *err)
{
    return sc_callgraph_svg_fit(p, vi, o, o->exact ? 0 : sc_callgraph_budget_ns(o), NULL, out, err);
}

int sc_callgraph_svg_fit(const struct sc_profile *p, int vi, const struct sc_callgraph_opts *o,
                         int64_t budget_ns, struct sc_callgraph_drawn *drawn, struct sc_buf *out,
                         char *err)
{
    struct sc_callgraph g;
    struct sc_callgraph_opts fit = *o;
    struct sc_callgraph_drawn d = {o->nodecount, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, budget_ns};
    struct pass base;
    /* the style is picked within the default budget when there is none to fit into */
    double budget = (double)(budget_ns > 0 ? budget_ns : sc_callgraph_budget_ns(o)) / 1e9;
    struct plan pl = {SC_CALLGRAPH_STYLE_PPROF, 0, 1, 0};
    int rc = cg_prepare(p, vi, o, &g, &base, err);
    if (!rc)
        rc = cg_select(&g, &base, fit.nodecount, budget_ns <= 0, err);
    if (!rc) {
        d.full_seconds = plan_layout(&g, budget, 0).seconds; /* what fit=0 would draw */
        pl = plan_layout(&g, budget, budget_ns > 0);
    }
    /* too slow even with every node's heaviest caller edge alone: fewer nodes, as pprof's
     * nodecount keeps them. The graph is rebuilt from the samples (edges through dropped
     * nodes become residual ones), which changes its size: a few rounds, each a walk over
     * the samples. */
    for (int round = 0; !rc && budget_ns > 0 && !pl.fits && round < 6; round++) {
        uint32_t k = fit_nodes(&g, budget);
        fit.nodecount = k < g.nnodes ? k : g.nnodes - 1;
        if (fit.nodecount == 0)
            break;
        cg_unselect(&g);
        rc = cg_select(&g, &base, fit.nodecount, 0, err);
        if (!rc)
            pl = plan_layout(&g, budget, 1);
    }
    pass_release(&base);
    if (!rc && g.nnodes > SC_CALLGRAPH_SVG_MAX_NODES)
        rc = sc_errf(err, SC_ELIMIT, "call graph of %u nodes is too large to draw (at most %d)",
                     g.nnodes, SC_CALLGRAPH_SVG_MAX_NODES);
    struct sc_buf dot = SC_BUF_INIT;
    if (!rc) {
        d.nodes_cut = fit.nodecount != o->nodecount;
        if (d.nodes_cut)
            g.asked = o->nodecount ? o->nodecount : g.orig_count;
        if (pl.m < g.nedges)
            sc_callgraph_thin(&g, pl.m);
        fit.style = (uint8_t)pl.style;
        sc_callgraph_write_dot(p, vi, &fit, &g, &dot);
        if (dot.oom)
            rc = sc_errf(err, SC_ENOMEM, "out of memory");
        d.nodes = g.nnodes;
        d.total_nodes = g.orig_count;
        d.edges = g.nedges;
        d.thinned = g.thinned;
        d.total = g.total;
        for (uint32_t i = 0; i < g.nnodes; i++)
            d.flat += g.nodes[i].flat;
        d.style = pl.style;
        d.seconds = pl.seconds;
    }
    sc_callgraph_release(&g);
    size_t start = out->len;
    if (!rc)
        rc = sc_layout_svg(dot.data, dot.len, o->layout, out, err);
    sc_buf_release(&dot);
    if (!rc) {
        put_drawn_attrs(out, start, &d);
        if (out->oom)
            rc = sc_errf(err, SC_ENOMEM, "out of memory");
    }
    if (drawn)
        *drawn = d;
    return rc;
}
