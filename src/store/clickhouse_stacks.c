/* clickhouse_stacks.c - the ClickHouse backend's stack resolution and its bounded cache. */
#include "store/clickhouse_int.h"
#include "model/error.h"

#include <stdlib.h>
#include <string.h>

/* Stacks are content-addressed, so a resolved stack never changes: a cache of them is
 * never stale, only bounded (emptied whole when full, with cache_gen bumped so a
 * resolution that counted on an entry knows it went). */

void ch_stacks_release(struct ch_stacks *t)
{
    sc_map64_release(&t->stack_ix);
    sc_map64_release(&t->frame_ix);
    free(t->ids);
    free(t->off);
    free(t->len);
    free(t->fr);
    free(t->frames);
    sc_arena_release(&t->arena);
    memset(t, 0, sizeof *t);
    sc_arena_init(&t->arena);
}

static int has(const struct ch_stacks *t, uint64_t id)
{
    return sc_map64_get(&t->stack_ix, id) != NULL;
}

static int64_t add_frame(struct ch_stacks *t, uint64_t id, struct sc_str fn, struct sc_str file,
                         int64_t line, struct sc_str bin)
{
    int added;
    uint32_t *slot = sc_map64_upsert(&t->frame_ix, id, t->nframes, &added);
    if (!slot) return SC_ENOMEM;
    if (!added) return *slot;
    if (sc_grow_array(&t->frames, &t->frames_cap, (uint64_t)t->nframes + 1, sizeof *t->frames))
        return SC_ENOMEM;
    struct ch_frame *f = &t->frames[t->nframes];
    f->id = id;
    f->function = sc_arena_strndup(&t->arena, fn.ptr, fn.len);
    f->file = sc_arena_strndup(&t->arena, file.ptr, file.len);
    f->binary = sc_arena_strndup(&t->arena, bin.ptr, bin.len);
    f->line = line;
    if (!f->function || !f->file || !f->binary) return SC_ENOMEM;
    return t->nframes++;
}

/* Appends a stack whose frames are given by index into src's frames (or, with src NULL,
 * already in t). */
static int add_stack(struct ch_stacks *t, uint64_t id, const uint32_t *fr, uint32_t nf,
                     const struct ch_stacks *src)
{
    int added;
    uint32_t *slot = sc_map64_upsert(&t->stack_ix, id, t->nstacks, &added);
    if (!slot) return SC_ENOMEM;
    if (!added) return 0;
    uint32_t cap = t->stacks_cap;
    if (sc_grow_array(&t->off, &t->stacks_cap, (uint64_t)t->nstacks + 1, sizeof *t->off))
        return SC_ENOMEM;
    if (t->stacks_cap != cap) {
        uint32_t *nl = realloc(t->len, t->stacks_cap * sizeof *nl);
        if (nl) t->len = nl;
        uint64_t *ni = realloc(t->ids, t->stacks_cap * sizeof *ni);
        if (ni) t->ids = ni;
        if (!nl || !ni) return SC_ENOMEM;
    }
    if (sc_grow_array(&t->fr, &t->fr_cap, (uint64_t)t->nfr + nf, sizeof *t->fr)) return SC_ENOMEM;
    uint32_t start = t->nfr;
    for (uint32_t j = 0; j < nf; j++) {
        uint32_t v = fr[j];
        if (src) {
            const struct ch_frame *f = &src->frames[v >> 1];
            struct sc_str fn = {f->function, (uint32_t)strlen(f->function)};
            struct sc_str file = {f->file, (uint32_t)strlen(f->file)};
            struct sc_str bin = {f->binary, (uint32_t)strlen(f->binary)};
            int64_t fi = add_frame(t, f->id, fn, file, f->line, bin);
            if (fi < 0) return (int)fi;
            v = (uint32_t)fi << 1 | (v & 1);
        }
        t->fr[t->nfr++] = v;
    }
    t->ids[t->nstacks] = id;
    t->off[t->nstacks] = start;
    t->len[t->nstacks] = nf;
    t->nstacks++;
    return 0;
}

/* Adds the stacks of an answer: rows (stack, frame_ids, functions, files, lines, binaries,
 * inlined), every array as long as the first. */
static int add_answer(struct ch_stacks *t, const struct sc_buf *ans, char *err)
{
    struct ch_rd r = {(const uint8_t *)ans->data, (const uint8_t *)ans->data + ans->len, 0};
    uint32_t *fr = NULL, cap = 0;
    int rc = 0;
    while (rc == 0 && r.p < r.end && !r.bad) {
        uint64_t id = ch_get_u64(&r);
        uint64_t nf = ch_get_len(&r, 8);
        const uint8_t *ids = r.p;
        r.p += nf * 8;
        if (nf > UINT32_MAX / 2 || sc_grow_array(&fr, &cap, nf + 1, sizeof *fr)) {
            rc = sc_errf(err, SC_ENOMEM, "out of memory");
            break;
        }
        struct sc_str *strs = calloc(3 * nf + 1, sizeof *strs);
        int64_t *lines = malloc((nf + 1) * sizeof *lines);
        if (!strs || !lines) {
            free(strs);
            free(lines);
            rc = sc_errf(err, SC_ENOMEM, "out of memory");
            break;
        }
        for (int k = 0; k < 2; k++) {
            if (ch_get_len(&r, 1) != nf) r.bad = 1;
            for (uint64_t j = 0; j < nf && !r.bad; j++)
                strs[k * nf + j] = ch_get_str(&r);
        }
        if (ch_get_len(&r, 8) != nf) r.bad = 1;
        for (uint64_t j = 0; j < nf && !r.bad; j++)
            lines[j] = (int64_t)ch_get_u64(&r);
        if (ch_get_len(&r, 1) != nf) r.bad = 1;
        for (uint64_t j = 0; j < nf && !r.bad; j++)
            strs[2 * nf + j] = ch_get_str(&r);
        if (ch_get_len(&r, 1) != nf) r.bad = 1;
        for (uint64_t j = 0; j < nf && !r.bad && rc == 0; j++) {
            uint8_t inl = ch_get_u8(&r);
            struct ch_rd e = {ids + 8 * j, ids + 8 * j + 8, 0};
            int64_t fi = add_frame(t, ch_get_u64(&e), strs[j], strs[nf + j], lines[j],
                                   strs[2 * nf + j]);
            if (fi < 0)
                rc = sc_errf(err, (int)fi, "out of memory");
            else
                fr[j] = (uint32_t)fi << 1 | (inl != 0);
        }
        free(strs);
        free(lines);
        if (rc == 0 && !r.bad && add_stack(t, id, fr, (uint32_t)nf, NULL))
            rc = sc_errf(err, SC_ENOMEM, "out of memory");
    }
    free(fr);
    if (rc == 0 && r.bad) rc = sc_errf(err, SC_EFORMAT, "clickhouse: a malformed stack");
    return rc;
}

/* Reads the given stacks from ClickHouse into t, a few thousand per query. */
static int fetch(struct ch_store *s, struct ch_stacks *t, const uint64_t *ids, uint32_t n,
                 char *err)
{
    enum { CHUNK = 8192 };
    struct sc_buf sql = SC_BUF_INIT, ans = SC_BUF_INIT;
    int rc = 0;
    for (uint32_t off = 0; off < n && rc == 0; off += CHUNK) {
        uint32_t m = n - off < CHUNK ? n - off : CHUNK;
        sql.len = 0;
        sc_buf_puts(&sql, "SELECT stack, any(frame_ids), any(functions), any(files), any(lines), "
                          "any(binaries), any(inlined) FROM ");
        ch_sql_table(s, &sql, "stacks");
        sc_buf_puts(&sql, " WHERE stack IN ");
        ch_sql_ids(&sql, ids + off, m);
        sc_buf_puts(&sql, " GROUP BY stack FORMAT RowBinary");
        rc = sql.oom ? sc_errf(err, SC_ENOMEM, "out of memory")
                     : ch_query(s, sql.data, CH_MAX_ANSWER, &ans, err);
        if (rc == 0) rc = add_answer(t, &ans, err);
    }
    sc_buf_release(&sql);
    sc_buf_release(&ans);
    return rc;
}

/* The stacks of ids in neither a (NULL: none) nor b, each once. */
static int misses(const struct ch_stacks *a, const struct ch_stacks *b, const uint64_t *ids,
                  uint32_t n, uint64_t **out, uint32_t *nout)
{
    struct sc_map64 seen;
    sc_map64_init(&seen);
    uint32_t cap = 0;
    *nout = 0;
    int rc = 0;
    for (uint32_t i = 0; i < n && rc == 0; i++) {
        if ((a && has(a, ids[i])) || has(b, ids[i])) continue;
        int added;
        if (!sc_map64_upsert(&seen, ids[i], 0, &added))
            rc = SC_ENOMEM;
        else if (added && sc_grow_array(out, &cap, (uint64_t)*nout + 1, sizeof **out))
            rc = SC_ENOMEM;
        else if (added)
            (*out)[(*nout)++] = ids[i];
    }
    sc_map64_release(&seen);
    return rc;
}

/* Calls cb for each id from a (NULL: none) or b. */
static int deliver(const struct ch_stacks *a, const struct ch_stacks *b, const uint64_t *ids,
                   uint32_t n, sc_store_stack_cb cb, void *ctx, char *err)
{
    struct sc_store_frame *fr = NULL;
    uint32_t fcap = 0;
    int rc = 0;
    for (uint32_t i = 0; i < n && rc == 0; i++) {
        const struct ch_stacks *t = a && has(a, ids[i]) ? a : b;
        uint32_t *ix = sc_map64_get(&t->stack_ix, ids[i]);
        if (!ix) {
            rc = sc_errf(err, SC_EFORMAT, "stack %llu is not in the store",
                         (unsigned long long)ids[i]);
            break;
        }
        uint32_t nf = t->len[*ix];
        if (sc_grow_array(&fr, &fcap, (uint64_t)nf + 1, sizeof *fr)) {
            rc = sc_errf(err, SC_ENOMEM, "out of memory");
            break;
        }
        const uint32_t *f = t->fr + t->off[*ix];
        for (uint32_t j = 0; j < nf; j++) {
            const struct ch_frame *x = &t->frames[f[j] >> 1];
            fr[j] = (struct sc_store_frame){x->id, x->function, x->file, x->binary, x->line,
                                            (int)(f[j] & 1)};
        }
        rc = cb(ctx, ids[i], fr, nf);
    }
    free(fr);
    return rc;
}

/* Moves what b holds into the cache; read_mu held. */
static void remember(struct ch_store *s, const struct ch_stacks *b)
{
    struct ch_stacks *c = &s->cache;
    if (c->nstacks + b->nstacks > CH_READ_CACHE || c->nframes + b->nframes > CH_READ_CACHE) {
        ch_stacks_release(c);
        s->cache_gen++;
    }
    for (uint32_t i = 0; i < b->nstacks && b->nstacks <= CH_READ_CACHE; i++)
        if (add_stack(c, b->ids[i], b->fr + b->off[i], b->len[i], b)) {
            /* out of memory: forget it all rather than keep half a stack */
            ch_stacks_release(c);
            s->cache_gen++;
            break;
        }
}

int ch_resolve(struct sc_store *st, const uint64_t *stacks, uint32_t n, sc_store_stack_cb cb,
               void *ctx, char *err)
{
    struct ch_store *s = (struct ch_store *)st;
    struct ch_stacks got;
    memset(&got, 0, sizeof got);
    sc_arena_init(&got.arena);
    uint64_t *miss = NULL;
    uint32_t nmiss = 0;
    int rc = 0, use_cache = 1;
    /* fetch what the cache lacks, then deliver under read_mu in the same generation; a
     * resolution that emptied the cache in between means looking again (the last try
     * fetches everything) */
    for (int attempt = 0;; attempt++) {
        pthread_mutex_lock(&s->read_mu);
        uint64_t gen = s->cache_gen;
        rc = misses(use_cache ? &s->cache : NULL, &got, stacks, n, &miss, &nmiss);
        pthread_mutex_unlock(&s->read_mu);
        if (rc) {
            rc = sc_errf(err, rc, "out of memory");
            break;
        }
        if (nmiss) rc = fetch(s, &got, miss, nmiss, err);
        if (rc) break;
        pthread_mutex_lock(&s->read_mu);
        if (!use_cache || gen == s->cache_gen) {
            rc = deliver(use_cache ? &s->cache : NULL, &got, stacks, n, cb, ctx, err);
            remember(s, &got);
            pthread_mutex_unlock(&s->read_mu);
            break;
        }
        pthread_mutex_unlock(&s->read_mu);
        if (attempt == 2) use_cache = 0;
    }
    free(miss);
    ch_stacks_release(&got);
    return rc;
}
