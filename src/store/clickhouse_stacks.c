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
    free(t->fid);
    free(t->inl);
    free(t->frames);
    sc_arena_release(&t->arena);
    memset(t, 0, sizeof *t);
    sc_arena_init(&t->arena);
}

static const struct ch_frame *frame_of(const struct ch_stacks *t, uint64_t id)
{
    const uint32_t *ix = t ? sc_map64_get(&t->frame_ix, id) : NULL;
    return ix ? &t->frames[*ix] : NULL;
}

static int add_frame(struct ch_stacks *t, uint64_t id, struct sc_str fn, struct sc_str file,
                     int64_t line, struct sc_str bin)
{
    int added;
    uint32_t *slot = sc_map64_upsert(&t->frame_ix, id, t->nframes, &added);
    if (!slot)
        return SC_ENOMEM;
    if (!added)
        return 0;
    if (sc_grow_array(&t->frames, &t->frames_cap, (uint64_t)t->nframes + 1, sizeof *t->frames))
        return SC_ENOMEM;
    struct ch_frame *f = &t->frames[t->nframes];
    f->id = id;
    f->function = sc_arena_strndup(&t->arena, fn.ptr, fn.len);
    f->file = sc_arena_strndup(&t->arena, file.ptr, file.len);
    f->binary = sc_arena_strndup(&t->arena, bin.ptr, bin.len);
    f->line = line;
    if (!f->function || !f->file || !f->binary)
        return SC_ENOMEM;
    t->nframes++;
    return 0;
}

/* A stack: nf frame ids, leaf first, with their inlined flags. */
static int add_stack(struct ch_stacks *t, uint64_t id, const uint64_t *fid, const uint8_t *inl,
                     uint32_t nf)
{
    int added;
    uint32_t *slot = sc_map64_upsert(&t->stack_ix, id, t->nstacks, &added);
    if (!slot)
        return SC_ENOMEM;
    if (!added)
        return 0;
    const struct sc_grow_part rows[] = {SC_GROW_PART(t->off), SC_GROW_PART(t->len),
                                        SC_GROW_PART(t->ids)};
    const struct sc_grow_part frames[] = {SC_GROW_PART(t->fid), SC_GROW_PART(t->inl)};
    if (sc_grow_arrays(&t->stacks_cap, (uint64_t)t->nstacks + 1, -1, rows, 3) ||
        sc_grow_arrays(&t->fid_cap, (uint64_t)t->nfid + nf + 1, -1, frames, 2))
        return SC_ENOMEM;
    memcpy(t->fid + t->nfid, fid, nf * sizeof *fid);
    memcpy(t->inl + t->nfid, inl, nf);
    t->ids[t->nstacks] = id;
    t->off[t->nstacks] = t->nfid;
    t->len[t->nstacks] = nf;
    t->nfid += nf;
    t->nstacks++;
    return 0;
}

/* The stack of id in a (NULL: none) or b: its index and table, or NULL. */
static const struct ch_stacks *stack_of(const struct ch_stacks *a, const struct ch_stacks *b,
                                        uint64_t id, uint32_t *ix)
{
    const uint32_t *p = a ? sc_map64_get(&a->stack_ix, id) : NULL;
    if (p) {
        *ix = *p;
        return a;
    }
    p = sc_map64_get(&b->stack_ix, id);
    if (p)
        *ix = *p;
    return p ? b : NULL;
}

/* Adds an answer's stacks (stack, frames, inlined) or frames (frame, function, file, line,
 * binary) to t. */
int ch_stacks_add_answer(struct ch_stacks *t, const struct sc_buf *ans, int frames, char *err)
{
    struct ch_rd r = {(const uint8_t *)ans->data, (const uint8_t *)ans->data + ans->len, 0};
    uint64_t *fid = NULL;
    uint8_t *inl = NULL;
    uint32_t cap = 0;
    int rc = 0;
    while (rc == 0 && r.p < r.end && !r.bad) {
        uint64_t id = ch_get_u64(&r);
        if (frames) {
            struct sc_str fn = ch_get_str(&r), file = ch_get_str(&r);
            int64_t line = (int64_t)ch_get_u64(&r);
            struct sc_str bin = ch_get_str(&r);
            if (!r.bad && add_frame(t, id, fn, file, line, bin))
                rc = sc_errf(err, SC_ENOMEM, "out of memory");
            continue;
        }
        uint64_t nf = ch_get_len(&r, 8);
        const struct sc_grow_part cols[] = {SC_GROW_PART(fid), SC_GROW_PART(inl)};
        if (sc_grow_arrays(&cap, nf + 1, -1, cols, 2)) {
            rc = sc_errf(err, SC_ENOMEM, "out of memory");
            break;
        }
        for (uint64_t j = 0; j < nf; j++)
            fid[j] = ch_get_u64(&r);
        if (ch_get_len(&r, 1) != nf)
            r.bad = 1;
        for (uint64_t j = 0; j < nf && !r.bad; j++)
            inl[j] = ch_get_u8(&r) != 0;
        if (!r.bad && add_stack(t, id, fid, inl, (uint32_t)nf))
            rc = sc_errf(err, SC_ENOMEM, "out of memory");
    }
    free(fid);
    free(inl);
    if (rc == 0 && r.bad)
        rc = sc_errf(err, SC_EIO, "clickhouse: a malformed stack");
    return rc;
}

/* Reads the given stacks (or frames) from ClickHouse into t, a few thousand per query. */
static int fetch(struct ch_store *s, struct ch_stacks *t, int frames, const uint64_t *ids,
                 uint32_t n, char *err)
{
    enum { CHUNK = 8192 };
    struct sc_buf sql = SC_BUF_INIT, ans = SC_BUF_INIT;
    int rc = 0;
    for (uint32_t off = 0; off < n && rc == 0; off += CHUNK) {
        uint32_t m = n - off < CHUNK ? n - off : CHUNK;
        sql.len = 0;
        /* one row per week it was used (and per shard): any will do (LIMIT BY is cheaper
         * than any() over arrays; rows that still repeat are skipped) */
        sc_buf_puts(&sql, frames ? "SELECT frame, function, file, line, binary FROM "
                                 : "SELECT stack, frames, inlined FROM ");
        ch_sql_table(s, &sql, frames ? "frames" : "stacks");
        sc_buf_puts(&sql, frames ? " WHERE frame IN " : " WHERE stack IN ");
        ch_sql_ids(&sql, ids + off, m);
        sc_buf_puts(&sql, frames ? " LIMIT 1 BY frame FORMAT RowBinary"
                                 : " LIMIT 1 BY stack FORMAT RowBinary");
        rc = sql.oom ? sc_errf(err, SC_ENOMEM, "out of memory")
                     : ch_query(s, sql.data, s->max_answer, &ans, err);
        if (rc == 0)
            rc = ch_stacks_add_answer(t, &ans, frames, err);
    }
    sc_buf_release(&sql);
    sc_buf_release(&ans);
    return rc;
}

/* Appends id to a list unless seen. */
static int note(struct sc_map64 *seen, uint64_t **out, uint32_t *n, uint32_t *cap, uint64_t id)
{
    int added;
    if (!sc_map64_upsert(seen, id, 0, &added))
        return SC_ENOMEM;
    if (!added)
        return 0;
    if (sc_grow_array(out, cap, (uint64_t)*n + 1, sizeof **out))
        return SC_ENOMEM;
    (*out)[(*n)++] = id;
    return 0;
}

/* The stacks of ids in neither a (NULL: none) nor b; or (frames) the frames of those
 * stacks found in neither. Each once. */
static int misses(const struct ch_stacks *a, const struct ch_stacks *b, const uint64_t *ids,
                  uint32_t n, int frames, uint64_t **out, uint32_t *nout)
{
    struct sc_map64 seen;
    sc_map64_init(&seen);
    uint32_t cap = 0;
    *nout = 0;
    int rc = 0;
    for (uint32_t i = 0; i < n && rc == 0; i++) {
        uint32_t ix;
        const struct ch_stacks *t = stack_of(a, b, ids[i], &ix);
        if (!frames) {
            if (!t)
                rc = note(&seen, out, nout, &cap, ids[i]);
            continue;
        }
        for (uint32_t j = 0; t && j < t->len[ix] && rc == 0; j++) {
            uint64_t f = t->fid[t->off[ix] + j];
            if (!frame_of(a, f) && !frame_of(b, f))
                rc = note(&seen, out, nout, &cap, f);
        }
    }
    sc_map64_release(&seen);
    return rc;
}

/* Calls cb for each id, its stack and frames from a (NULL: none) or b. */
static int deliver(const struct ch_stacks *a, const struct ch_stacks *b, const uint64_t *ids,
                   uint32_t n, sc_store_stack_cb cb, void *ctx, char *err)
{
    struct sc_store_frame *fr = NULL;
    uint32_t fcap = 0;
    int rc = 0;
    for (uint32_t i = 0; i < n && rc == 0; i++) {
        uint32_t ix;
        const struct ch_stacks *t = stack_of(a, b, ids[i], &ix);
        if (!t) {
            rc = sc_errf(err, SC_EFORMAT, "stack %llu is not in the store",
                         (unsigned long long)ids[i]);
            break;
        }
        uint32_t nf = t->len[ix];
        if (sc_grow_array(&fr, &fcap, (uint64_t)nf + 1, sizeof *fr)) {
            rc = sc_errf(err, SC_ENOMEM, "out of memory");
            break;
        }
        for (uint32_t j = 0; j < nf && rc == 0; j++) {
            uint64_t id = t->fid[t->off[ix] + j];
            const struct ch_frame *x = frame_of(b, id);
            if (!x)
                x = frame_of(a, id);
            if (!x)
                rc = sc_errf(err, SC_EFORMAT, "frame %llu of stack %llu is not in the store",
                             (unsigned long long)id, (unsigned long long)ids[i]);
            else
                fr[j] = (struct sc_store_frame){x->id,     x->function, x->file,
                                                x->binary, x->line,     t->inl[t->off[ix] + j]};
        }
        if (rc == 0)
            rc = cb(ctx, ids[i], fr, nf);
    }
    free(fr);
    return rc;
}

/* Moves what b holds into the cache; read_mu held. */
static void remember(struct ch_store *s, const struct ch_stacks *b)
{
    struct ch_stacks *c = &s->cache;
    if (b->nstacks > CH_READ_CACHE || b->nframes > CH_READ_CACHE)
        return;
    if (c->nstacks + b->nstacks > CH_READ_CACHE || c->nframes + b->nframes > CH_READ_CACHE) {
        ch_stacks_release(c);
        s->cache_gen++;
    }
    int rc = 0;
    for (uint32_t i = 0; i < b->nframes && rc == 0; i++) {
        const struct ch_frame *f = &b->frames[i];
        struct sc_str fn = {f->function, (uint32_t)strlen(f->function)};
        struct sc_str file = {f->file, (uint32_t)strlen(f->file)};
        struct sc_str bin = {f->binary, (uint32_t)strlen(f->binary)};
        rc = add_frame(c, f->id, fn, file, f->line, bin);
    }
    for (uint32_t i = 0; i < b->nstacks && rc == 0; i++)
        rc = add_stack(c, b->ids[i], b->fid + b->off[i], b->inl + b->off[i], b->len[i]);
    if (rc) {
        /* out of memory: forget it all rather than keep half a stack */
        ch_stacks_release(c);
        s->cache_gen++;
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
    /* fetch the stacks the cache lacks, then their frames it lacks, then deliver under
     * read_mu in the same generation; a resolution that emptied the cache in between
     * means looking again (the last try fetches everything) */
    for (int attempt = 0;; attempt++) {
        uint64_t gen = 0;
        for (int frames = 0; frames < 2 && rc == 0; frames++) {
            pthread_mutex_lock(&s->read_mu);
            if (!frames)
                gen = s->cache_gen;
            rc = misses(use_cache ? &s->cache : NULL, &got, stacks, n, frames, &miss, &nmiss);
            pthread_mutex_unlock(&s->read_mu);
            if (rc)
                rc = sc_errf(err, rc, "out of memory");
            else if (nmiss)
                rc = fetch(s, &got, frames, miss, nmiss, err);
        }
        if (rc)
            break;
        pthread_mutex_lock(&s->read_mu);
        if (!use_cache || gen == s->cache_gen) {
            rc = deliver(use_cache ? &s->cache : NULL, &got, stacks, n, cb, ctx, err);
            remember(s, &got);
            pthread_mutex_unlock(&s->read_mu);
            break;
        }
        pthread_mutex_unlock(&s->read_mu);
        if (attempt == 2)
            use_cache = 0;
    }
    free(miss);
    ch_stacks_release(&got);
    return rc;
}
