/* flame.c - the two-sided stack tree and its flame graph JSON (format in flame.h). */
#include "query/flame.h"
#include "formats/top.h"
#include "model/error.h"
#include "model/json.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the tree ---- */

int sc_flame_tree_init(struct sc_flame_tree *t)
{
    memset(t, 0, sizeof *t);
    sc_arena_init(&t->arena);
    t->names.arena = &t->arena;
    t->cap = 1024;
    t->nodes = malloc(t->cap * sizeof *t->nodes);
    if (!t->nodes || sc_strtab_intern(&t->names, "total", 5) != 0)
        return SC_ENOMEM;
    memset(&t->nodes[0], 0, sizeof t->nodes[0]);
    t->n = 1;
    return 0;
}

void sc_flame_tree_release(struct sc_flame_tree *t)
{
    free(t->nodes);
    sc_map64_release(&t->children);
    sc_strtab_release(&t->names);
    sc_arena_release(&t->arena);
    memset(t, 0, sizeof *t);
}

void sc_flame_tree_done(struct sc_flame_tree *t)
{
    sc_map64_release(&t->children);
    struct sc_flame_node *nn = realloc(t->nodes, (size_t)t->n * sizeof *nn);
    if (nn) {
        t->nodes = nn;
        t->cap = t->n;
    }
}

static int64_t child(struct sc_flame_tree *t, uint32_t parent, uint32_t name)
{
    uint64_t key = (uint64_t)parent << 32 | name;
    uint32_t *slot = sc_map64_get(&t->children, key);
    if (slot)
        return *slot;
    if ((t->max_nodes && t->n >= t->max_nodes) || t->n >= UINT32_MAX / 4)
        return SC_ELIMIT;
    if (sc_grow_array(&t->nodes, &t->cap, (uint64_t)t->n + 1, sizeof *t->nodes))
        return SC_ENOMEM;
    if (!sc_map64_upsert(&t->children, key, t->n, NULL))
        return SC_ENOMEM;
    uint32_t i = t->n++;
    struct sc_flame_node *nd = &t->nodes[i];
    memset(nd, 0, sizeof *nd);
    nd->name = name;
    nd->parent = parent;
    nd->next_sibling = t->nodes[parent].first_child;
    t->nodes[parent].first_child = i;
    return i;
}

/* The walk over a profile: frame names per location (root first within the location, as
 * sc_stackwalk names them) and the path of the previous sample, reused while the next
 * sample shares its root-side locations (neighbouring samples usually do). */
struct build {
    struct sc_flame_tree *t;
    const struct sc_profile *p;
    uint32_t *loc_off, *loc_cnt, *names; /* location -> its frame names */
    uint32_t *prev_locs, *prev_node;     /* root-first locations and the node after each */
    uint32_t prev_n, prev_cap;
    int vi, side;
};

static int64_t intern_addr(struct sc_flame_tree *t, uint64_t addr)
{
    char tmp[SC_ADDR_NAME_LEN];
    uint32_t len = sc_address_name(addr, tmp);
    return sc_strtab_intern(&t->names, tmp, (size_t)len);
}

static int name_locations(struct build *b)
{
    const struct sc_profile *p = b->p;
    uint64_t total = 0;
    for (uint32_t i = 0; i < p->nlocations; i++)
        total += p->locations[i].nlines ? p->locations[i].nlines : 1;
    if (total > UINT32_MAX / 2)
        return SC_ELIMIT;
    b->loc_off = malloc(((size_t)p->nlocations + 1) * sizeof *b->loc_off);
    b->loc_cnt = malloc(((size_t)p->nlocations + 1) * sizeof *b->loc_cnt);
    b->names = malloc(((size_t)total + 1) * sizeof *b->names);
    uint32_t *fn_name = calloc((size_t)p->nfunctions + 1, sizeof *fn_name);
    if (!b->loc_off || !b->loc_cnt || !b->names || !fn_name) {
        free(fn_name);
        return SC_ENOMEM;
    }
    uint32_t k = 0;
    int rc = 0;
    for (uint32_t i = 0; i < p->nlocations && !rc; i++) {
        const struct sc_location *l = &p->locations[i];
        b->loc_off[i] = k;
        if (l->nlines == 0) {
            int64_t id = intern_addr(b->t, l->address);
            if (id < 0)
                rc = (int)id;
            else
                b->names[k++] = (uint32_t)id;
        }
        const struct sc_line *ln = sc_location_lines(p, l);
        for (uint32_t j = l->nlines; j-- > 0 && !rc;) {
            int64_t id;
            uint32_t fn = ln[j].function;
            if (!fn) {
                id = intern_addr(b->t, l->address);
            } else if (fn_name[fn - 1]) {
                id = fn_name[fn - 1] - 1;
            } else {
                struct sc_str s = sc_function_name(p, fn - 1);
                id = sc_strtab_intern(&b->t->names, s.ptr, s.len);
                if (id >= 0)
                    fn_name[fn - 1] = (uint32_t)id + 1;
            }
            if (id < 0)
                rc = (int)id;
            else
                b->names[k++] = (uint32_t)id;
        }
        b->loc_cnt[i] = k - b->loc_off[i];
    }
    free(fn_name);
    return rc;
}

static int visit(void *ctx, const uint32_t *locs, uint32_t nlocs, const int64_t *values)
{
    struct build *b = ctx;
    int64_t v = values[b->vi];
    if (v == 0)
        return 0;
    struct sc_flame_tree *t = b->t;
    const struct sc_grow_part prev[] = {SC_GROW_PART(b->prev_locs), SC_GROW_PART(b->prev_node)};
    if (sc_grow_arrays(&b->prev_cap, nlocs, -1, prev, 2))
        return SC_ENOMEM;
    /* common root-side prefix with the previous sample */
    uint32_t d = 0;
    while (d < nlocs && d < b->prev_n && b->prev_locs[d] == locs[nlocs - 1 - d])
        d++;
    uint32_t cur = d ? b->prev_node[d - 1] : 0;
    for (; d < nlocs; d++) {
        uint32_t li = locs[nlocs - 1 - d];
        const uint32_t *nm = b->names + b->loc_off[li];
        for (uint32_t j = 0, n = b->loc_cnt[li]; j < n; j++) {
            int64_t c = child(t, cur, nm[j]);
            if (c < 0) {
                b->prev_n = 0;
                return (int)c;
            }
            cur = (uint32_t)c;
        }
        b->prev_locs[d] = li;
        b->prev_node[d] = cur;
    }
    b->prev_n = nlocs;
    int s = b->side;
    t->nodes[cur].self[s] = sc_add_sat(t->nodes[cur].self[s], v);
    for (uint32_t i = cur;; i = t->nodes[i].parent) {
        t->nodes[i].total[s] = sc_add_sat(t->nodes[i].total[s], v);
        if (i == 0)
            break;
    }
    return 0;
}

int sc_flame_tree_add(struct sc_flame_tree *t, const struct sc_profile *p, int vi, int side,
                      char *err)
{
    if (vi < 0 || (uint32_t)vi >= p->nsample_types)
        return sc_errf(err, SC_EINVAL, "sample index %d out of range", vi);
    if (side != 0 && side != 1)
        return sc_errf(err, SC_EINVAL, "bad side %d", side);
    struct build b;
    memset(&b, 0, sizeof b);
    b.t = t;
    b.p = p;
    b.vi = vi;
    b.side = side;
    int rc = name_locations(&b);
    if (rc == 0)
        rc = sc_profile_foreach_sample(p, visit, &b, err);
    free(b.loc_off);
    free(b.loc_cnt);
    free(b.names);
    free(b.prev_locs);
    free(b.prev_node);
    if (rc == SC_ELIMIT && t->max_nodes)
        return sc_errf(err, rc, "flame graph has more than %u nodes", (unsigned)t->max_nodes);
    if (rc && (!err || !err[0]))
        return sc_errf(err, rc, "%s", sc_strerror(rc));
    return rc;
}

void sc_flame_tree_scale_base(struct sc_flame_tree *t, double f)
{
    for (uint32_t i = 0; i < t->n; i++) {
        double v = (double)t->nodes[i].self[0] * f;
        t->nodes[i].self[0] = v >= 9.2e18 ? INT64_MAX : v <= -9.2e18 ? INT64_MIN : llround(v);
        t->nodes[i].total[0] = t->nodes[i].self[0];
    }
    /* children come after their parents */
    for (uint32_t i = t->n; i-- > 1;) {
        struct sc_flame_node *pa = &t->nodes[t->nodes[i].parent];
        pa->total[0] = sc_add_sat(pa->total[0], t->nodes[i].total[0]);
    }
}

/* ---- JSON ---- */

static int cmp_names(const struct sc_strtab *names, uint32_t a, uint32_t b)
{
    const struct sc_str *x = &names->v[a], *y = &names->v[b];
    size_t n = x->len < y->len ? x->len : y->len;
    int c = n ? memcmp(x->ptr, y->ptr, n) : 0;
    if (c)
        return c;
    return (x->len > y->len) - (x->len < y->len);
}

struct layout {
    const struct sc_flame_tree *t;
    int diff;
    uint32_t *rank;    /* name -> position among all names sorted bytewise */
    uint32_t *kids;    /* children of every node, grouped by parent */
    uint32_t *kid_off; /* node -> its first child in kids; kid_off[n] = n - 1 */
    uint32_t *popped;  /* maxNodes: node -> the order it was chosen in */
    uint8_t *kept;
};

static int cmp_name_ids(const void *a, const void *b, void *arg)
{
    const struct sc_strtab *names = arg;
    return cmp_names(names, *(const uint32_t *)a, *(const uint32_t *)b);
}

static inline int64_t weight(const struct layout *L, uint32_t i)
{
    const struct sc_flame_node *nd = &L->t->nodes[i];
    return L->diff ? sc_add_sat(nd->total[0], nd->total[1]) : nd->total[1];
}

/* Heap order for maxNodes: heavier first, then by name, then by when the parent was
 * chosen (siblings have distinct names), which never depends on the order samples came
 * in. */
static int heavier(const struct layout *L, uint32_t a, uint32_t b)
{
    int64_t wa = weight(L, a), wb = weight(L, b);
    if (wa != wb)
        return wa > wb;
    uint32_t ra = L->rank[L->t->nodes[a].name], rb = L->rank[L->t->nodes[b].name];
    if (ra != rb)
        return ra < rb;
    return L->popped[L->t->nodes[a].parent] < L->popped[L->t->nodes[b].parent];
}

static void heap_push(const struct layout *L, uint32_t *h, uint32_t *n, uint32_t v)
{
    uint32_t i = (*n)++;
    while (i > 0) {
        uint32_t up = (i - 1) / 2;
        if (!heavier(L, v, h[up]))
            break;
        h[i] = h[up];
        i = up;
    }
    h[i] = v;
}

static uint32_t heap_pop(const struct layout *L, uint32_t *h, uint32_t *n)
{
    uint32_t top = h[0], v = h[--(*n)], i = 0;
    for (;;) {
        uint32_t c = 2 * i + 1;
        if (c >= *n)
            break;
        if (c + 1 < *n && heavier(L, h[c + 1], h[c]))
            c++;
        if (!heavier(L, h[c], v))
            break;
        h[i] = h[c];
        i = c;
    }
    if (*n)
        h[i] = v;
    return top;
}

/* Sorts one parent's children by name rank (most groups are tiny: insertion sort). */
static void sort_kids(const struct layout *L, uint32_t *k, uint32_t n)
{
    const struct sc_flame_node *nodes = L->t->nodes;
    for (uint32_t i = 1; i < n; i++) {
        uint32_t v = k[i], r = L->rank[nodes[v].name], j = i;
        for (; j > 0 && L->rank[nodes[k[j - 1]].name] > r; j--)
            k[j] = k[j - 1];
        k[j] = v;
    }
}

static int cmp_by_rank(const void *a, const void *b, void *arg)
{
    const struct layout *L = arg;
    uint32_t x = L->rank[L->t->nodes[*(const uint32_t *)a].name];
    uint32_t y = L->rank[L->t->nodes[*(const uint32_t *)b].name];
    return (x > y) - (x < y);
}

/* Name ranks, children grouped by parent, the kept set, and the kept nodes' children
 * sorted by name. */
static int plan(struct layout *L, uint32_t max_nodes)
{
    const struct sc_flame_tree *t = L->t;
    uint32_t n = t->n, nn = t->names.n;
    uint32_t *by_name = malloc(((size_t)nn + 1) * sizeof *by_name);
    L->rank = malloc(((size_t)nn + 1) * sizeof *L->rank);
    L->kids = malloc((size_t)n * sizeof *L->kids);
    L->kid_off = calloc((size_t)n + 1, sizeof *L->kid_off);
    L->kept = malloc((size_t)n);
    int rc = SC_ENOMEM;
    uint32_t *heap = NULL;
    if (!by_name || !L->rank || !L->kids || !L->kid_off || !L->kept)
        goto out;
    for (uint32_t i = 0; i < nn; i++)
        by_name[i] = i;
    qsort_r(by_name, nn, sizeof *by_name, cmp_name_ids, (void *)&t->names);
    for (uint32_t i = 0; i < nn; i++)
        L->rank[by_name[i]] = i;
    /* group children by parent (counting sort) */
    for (uint32_t i = 1; i < n; i++)
        L->kid_off[t->nodes[i].parent + 1]++;
    for (uint32_t i = 0; i < n; i++)
        L->kid_off[i + 1] += L->kid_off[i];
    for (uint32_t i = 1; i < n; i++)
        L->kids[L->kid_off[t->nodes[i].parent]++] = i;
    for (uint32_t i = n; i-- > 0;)
        L->kid_off[i + 1] = L->kid_off[i];
    L->kid_off[0] = 0;
    if (!max_nodes || n <= max_nodes) {
        memset(L->kept, 1, n);
    } else {
        L->popped = malloc((size_t)n * sizeof *L->popped);
        heap = malloc((size_t)n * sizeof *heap);
        if (!L->popped || !heap)
            goto out;
        memset(L->kept, 0, n);
        uint32_t hn = 0, nkept = 0;
        heap_push(L, heap, &hn, 0);
        while (hn && nkept < max_nodes) {
            uint32_t v = heap_pop(L, heap, &hn);
            L->kept[v] = 1;
            L->popped[v] = nkept++;
            for (uint32_t k = L->kid_off[v]; k < L->kid_off[v + 1]; k++)
                heap_push(L, heap, &hn, L->kids[k]);
        }
    }
    for (uint32_t i = 0; i < n; i++) {
        uint32_t a = L->kid_off[i], b = L->kid_off[i + 1];
        if (!L->kept[i] || b - a < 2)
            continue;
        if (b - a <= 16)
            sort_kids(L, L->kids + a, b - a);
        else
            qsort_r(L->kids + a, b - a, sizeof *L->kids, cmp_by_rank, L);
    }
    rc = 0;
out:
    free(by_name);
    free(heap);
    return rc;
}

/* Decimal digits of v at p; returns the end. */
static inline char *put_num(char *p, int64_t v)
{
    uint64_t u = (uint64_t)v;
    if (v < 0) {
        *p++ = '-';
        u = (uint64_t)0 - u;
    }
    char tmp[20];
    int k = 0;
    do {
        tmp[k++] = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    while (k)
        *p++ = tmp[--k];
    return p;
}

/* A diff node's change: 2 for a path only the new side has, -2 for one only the base has
 * (news whatever the spread), else the direction its share moved when its function's
 * change is significant and goes the same way, else 0. */
static int node_change(const struct sc_flame_tree *t, const struct sc_cmp *c,
                       const struct sc_flame_node *nd)
{
    if (nd->total[0] == 0 && nd->total[1] != 0)
        return 2;
    if (nd->total[1] == 0 && nd->total[0] != 0)
        return -2;
    struct sc_str nm = t->names.v[nd->name];
    const struct sc_cmp_stat *st = sc_cmp_lookup(c, nm.ptr, nm.len);
    if (!st || !st->significant)
        return 0;
    double b = (double)t->nodes[0].total[0], n = (double)t->nodes[0].total[1];
    double sb = b != 0 ? (double)nd->total[0] / b : 0, sn = n != 0 ? (double)nd->total[1] / n : 0;
    int dir = sn > sb ? 1 : sn < sb ? -1 : 0;
    return dir == st->direction ? dir : 0;
}

int sc_flame_tree_json(const struct sc_flame_tree *t, const struct sc_flame_json_opts *o,
                       struct sc_buf *out)
{
    struct layout L;
    memset(&L, 0, sizeof L);
    L.t = t;
    L.diff = o->diff;
    uint32_t n = t->n;
    int64_t *x = malloc((size_t)n * sizeof *x);
    uint32_t *level = malloc((size_t)n * sizeof *level); /* BFS order of kept nodes */
    uint32_t *name_out = calloc((size_t)t->names.n + 1, sizeof *name_out);
    uint32_t *name_list = malloc(((size_t)t->names.n + 1) * sizeof *name_list);
    struct sc_buf lv = SC_BUF_INIT;
    int rc = SC_ENOMEM;
    if (!x || !level || !name_out || !name_list || plan(&L, o->max_nodes))
        goto out;

    struct sc_json j;
    sc_json_init(&j, out);
    sc_json_obj_begin(&j);
    sc_json_kv_i64(&j, "version", 1);
    if (o->diff)
        sc_json_kv_bool(&j, "diff", 1);
    sc_json_kv_strn(&j, "sample_type", o->sample_type.ptr, o->sample_type.len);
    sc_json_kv_strn(&j, "unit", o->unit.ptr, o->unit.len);
    sc_json_kv_i64(&j, "total", t->nodes[0].total[1]);
    if (o->diff) {
        sc_json_kv_i64(&j, "base_total", t->nodes[0].total[0]);
        sc_json_kv_bool(&j, "normalized", o->normalized);
        sc_json_key(&j, "base_scale");
        sc_json_num_g(&j, isfinite(o->base_scale) ? o->base_scale : 1.0, 17);
        if (o->cmp) {
            struct sc_cmp_summary sum;
            sc_cmp_summarize(o->cmp, &sum);
            static const char *const fields[] = {"x",         "total", "self",  "base_total",
                                                 "base_self", "name",  "change"};
            sc_json_key(&j, "fields");
            sc_json_arr_begin(&j);
            for (size_t i = 0; i < sizeof fields / sizeof *fields; i++)
                sc_json_str(&j, fields[i]);
            sc_json_arr_end(&j);
            sc_json_key(&j, "q");
            sc_json_num_g(&j, sum.level, 6);
            sc_json_kv_str(&j, "method", sc_cmp_method_name(sum.method));
        }
    }

    /* Breadth first: x offsets, self values with left-out children folded in, names in
     * order of first use. Levels go to their own buffer: max_self and names come first. */
    uint32_t nlevel = 0, nnames = 0;
    level[nlevel++] = 0;
    x[0] = 0;
    int64_t max_self = 0;
    const size_t per_node = o->diff ? 7 * 21 + 7 : 4 * 21 + 4;
    sc_buf_putc(&lv, '[');
    for (uint32_t start = 0; start < nlevel;) {
        uint32_t end = nlevel;
        sc_buf_puts(&lv, start ? ",[" : "[");
        for (uint32_t q = start; q < end; q++) {
            uint32_t v = level[q];
            const struct sc_flame_node *nd = &t->nodes[v];
            int64_t self0 = nd->total[0], self1 = nd->total[1];
            int64_t cx = x[v];
            for (uint32_t k = L.kid_off[v]; k < L.kid_off[v + 1]; k++) {
                uint32_t c = L.kids[k];
                if (!L.kept[c])
                    continue;
                const struct sc_flame_node *cd = &t->nodes[c];
                self0 = sc_add_sat(self0, -cd->total[0]);
                self1 = sc_add_sat(self1, -cd->total[1]);
                x[c] = cx;
                cx = sc_add_sat(cx, weight(&L, c));
                level[nlevel++] = c;
            }
            if (!name_out[nd->name]) {
                name_list[nnames] = nd->name;
                name_out[nd->name] = ++nnames;
            }
            int64_t ms = o->diff ? sc_add_sat(self0, self1) : self1;
            if (q == 0 || ms > max_self)
                max_self = ms;
            if (sc_buf_reserve(&lv, per_node))
                goto out;
            char *p = lv.data + lv.len;
            if (q > start)
                *p++ = ',';
            p = put_num(p, x[v]);
            *p++ = ',';
            p = put_num(p, nd->total[1]);
            *p++ = ',';
            p = put_num(p, self1);
            *p++ = ',';
            if (o->diff) {
                p = put_num(p, nd->total[0]);
                *p++ = ',';
                p = put_num(p, self0);
                *p++ = ',';
            }
            p = put_num(p, name_out[nd->name] - 1);
            if (o->diff && o->cmp) {
                *p++ = ',';
                p = put_num(p, node_change(t, o->cmp, nd));
            }
            *p = 0;
            lv.len = (size_t)(p - lv.data);
        }
        sc_buf_putc(&lv, ']');
        start = end;
    }
    sc_buf_putc(&lv, ']');
    sc_json_kv_i64(&j, "max_self", max_self);
    sc_json_key(&j, "names");
    sc_json_arr_begin(&j);
    for (uint32_t i = 0; i < nnames; i++) {
        struct sc_str s = t->names.v[name_list[i]];
        sc_json_strn(&j, s.ptr, s.len);
    }
    sc_json_arr_end(&j);
    /* the levels, the bulk of a large answer, were written straight to memory above */
    sc_json_key(&j, "levels");
    sc_json_raw(&j, lv.data, lv.len);
    if (o->members)
        o->members(o->members_ctx, &j);
    sc_json_obj_end(&j);
    sc_buf_putc(out, '\n');
    rc = lv.oom || out->oom ? SC_ENOMEM : 0;
out:
    sc_buf_release(&lv);
    free(x);
    free(level);
    free(name_out);
    free(name_list);
    free(L.rank);
    free(L.kids);
    free(L.kid_off);
    free(L.popped);
    free(L.kept);
    return rc;
}

/* ---- from profiles ---- */

static struct sc_str type_str(const struct sc_profile *p, int vi, int unit)
{
    const struct sc_value_type *vt = &p->sample_types[vi];
    return sc_profile_str(p, unit ? vt->unit : vt->type);
}

int sc_flame_json(const struct sc_profile *p, int vi, uint32_t max_nodes, struct sc_buf *out,
                  char *err)
{
    return sc_flame_json_with(p, vi, max_nodes, NULL, out, err);
}

/* The members sc_flame_json_with adds: the top table, then the caller's. */
struct extra_ctx {
    const struct sc_flame_extra *x;
    const struct sc_buf *top; /* the top table's JSON document, or NULL */
};

static void put_extra(void *ctx, struct sc_json *j)
{
    const struct extra_ctx *e = ctx;
    if (e->top) {
        /* a JSON document of its own, ending in a newline: the member's value without it */
        size_t n = e->top->len;
        if (n && e->top->data[n - 1] == '\n')
            n--;
        sc_json_key(j, "top");
        sc_json_raw(j, e->top->data, n);
    }
    if (e->x && e->x->members)
        e->x->members(e->x->ctx, j);
}

int sc_flame_json_with(const struct sc_profile *p, int vi, uint32_t max_nodes,
                       const struct sc_flame_extra *x, struct sc_buf *out, char *err)
{
    if (vi < 0 || (uint32_t)vi >= p->nsample_types)
        return sc_errf(err, SC_EINVAL, "sample index %d out of range", vi);
    struct sc_flame_tree t;
    struct sc_buf top = SC_BUF_INIT;
    int rc = sc_flame_tree_init(&t);
    if (rc == 0)
        rc = sc_flame_tree_add(&t, p, vi, 1, err);
    if (rc == 0 && x && x->top) {
        struct sc_top tt;
        rc = sc_top_compute(p, vi, &tt, err);
        if (!rc) {
            struct sc_top_opts to = {.format = SC_TOP_JSON};
            sc_top_write(p, vi, &tt, &to, &top);
            if (top.oom)
                rc = SC_ENOMEM;
        }
        sc_top_release(&tt);
    }
    if (rc == 0) {
        sc_flame_tree_done(&t);
        struct extra_ctx e = {x, x && x->top ? &top : NULL};
        struct sc_flame_json_opts o = {
            type_str(p, vi, 0), type_str(p, vi, 1), max_nodes, 0, 0, 1, NULL, put_extra, &e};
        rc = sc_flame_tree_json(&t, &o, out);
    }
    sc_flame_tree_release(&t);
    sc_buf_release(&top);
    if (rc && (!err || !err[0]))
        sc_errf(err, rc, "%s", sc_strerror(rc));
    return rc;
}

int sc_flame_diff_json(const struct sc_profile *base, int base_vi, const struct sc_profile *p,
                       int vi, uint32_t max_nodes, int normalize, const struct sc_cmp *cmp,
                       struct sc_buf *out, char *err)
{
    if (vi < 0 || (uint32_t)vi >= p->nsample_types || base_vi < 0 ||
        (uint32_t)base_vi >= base->nsample_types)
        return sc_errf(err, SC_EINVAL, "sample index out of range");
    struct sc_str bu = type_str(base, base_vi, 1), nu = type_str(p, vi, 1);
    if (bu.len != nu.len || (nu.len && memcmp(bu.ptr, nu.ptr, nu.len)))
        return sc_errf(err, SC_EINVAL, "cannot compare values in '%.*s' with values in '%.*s'",
                       (int)bu.len, bu.ptr, (int)nu.len, nu.ptr);
    struct sc_flame_tree t;
    int rc = sc_flame_tree_init(&t);
    if (rc == 0)
        rc = sc_flame_tree_add(&t, base, base_vi, 0, err);
    if (rc == 0)
        rc = sc_flame_tree_add(&t, p, vi, 1, err);
    if (rc == 0)
        sc_flame_tree_done(&t);
    double f = 1;
    int scaled = 0;
    if (rc == 0 && normalize && t.nodes[0].total[0] > 0 && t.nodes[0].total[1] > 0) {
        f = (double)t.nodes[0].total[1] / (double)t.nodes[0].total[0];
        sc_flame_tree_scale_base(&t, f);
        scaled = 1;
    }
    if (rc == 0) {
        struct sc_flame_json_opts o = {
            type_str(p, vi, 0), nu, max_nodes, 1, scaled, f, cmp, NULL, NULL};
        rc = sc_flame_tree_json(&t, &o, out);
    }
    sc_flame_tree_release(&t);
    if (rc && (!err || !err[0]))
        sc_errf(err, rc, "%s", sc_strerror(rc));
    return rc;
}
