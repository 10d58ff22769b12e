/* callgraph.c - the call graph of a profile with go tool pprof -dot's cuts: identities,
 * tags, the node and edge cuts, pprof's order (callgraph_dot.c writes it, callgraph_svg.c
 * lays it out). */
#include "query/callgraph.h"
#include "formats/names.h"
#include "model/budget.h"
#include "model/error.h"
#include "model/units.h"
#include "query/callgraph_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- graph building --------------------------------------------------------------------- */

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

void cg_pass_release(struct pass *g)
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
        if (sc_grow_array(&g->e, &g->ecap, (uint64_t)g->ne + 1, sizeof *g->e))
            return NULL;
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
        if (sc_grow_array(&g->t, &g->tcap, (uint64_t)g->nt + 1, sizeof *g->t))
            return SC_ENOMEM;
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
int cg_prepare(const struct sc_profile *p, int vi, const struct sc_callgraph_opts *o,
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
            cg_pass_release(&cur);
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
    cg_pass_release(&cur);
    cg_pass_release(&next);
    free(kept);
    return rc;
}

/* The rest of the pipeline on a prepared graph: the top nodecount nodes (0: all), the edge
 * cuts, the result in pprof's order. With consume, base may become the result (when every
 * node is kept) and must not be used again; without, it is left as it was (its edges'
 * marks aside, which every selection sets alike), so selections can be repeated. */
int cg_select(struct sc_callgraph *g, struct pass *base, uint32_t nodecount, int consume, char *err)
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
    cg_pass_release(&cur);
    cg_pass_release(&next);
    free(kept2);
    return rc;
}

/* Frees what cg_select made, so another selection can follow. */
void cg_unselect(struct sc_callgraph *g)
{
    struct sc_callgraph_int *c = g->in;
    if (c) {
        cg_pass_release(&c->final);
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
    cg_pass_release(&base);
    return rc;
}

void sc_callgraph_release(struct sc_callgraph *g)
{
    struct sc_callgraph_int *c = g->in;
    if (c) {
        cg_pass_release(&c->final);
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
