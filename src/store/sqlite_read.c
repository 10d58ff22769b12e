/* sqlite_read.c - the embedded backend's reads: rows per bucket through rollups, stacks. */
#include "store/sqlite_int.h"
#include "model/budget.h"
#include "model/error.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- read caches: stacks and frames ---- */

/* Adds a stack's frames (varint blob) to the cache; cache_mu held. */
static int cache_stack(struct sq_store *s, uint32_t id, const uint8_t *blob, size_t len)
{
    int added;
    uint32_t *slot = sc_map64_upsert(&s->stack_cache, id, s->nstack_cache, &added);
    if (!slot)
        return SC_ENOMEM;
    if (!added)
        return 0;
    const struct sc_grow_part cols[] = {SC_GROW_PART(s->stack_off), SC_GROW_PART(s->stack_len)};
    if (sc_grow_arrays(&s->stack_cache_cap, (uint64_t)s->nstack_cache + 1, -1, cols, 2))
        return SC_ENOMEM;
    const uint8_t *p = blob, *end = blob + len;
    uint32_t start = s->nstack_data, n = 0;
    while (p < end) {
        uint64_t v;
        if (sc_get_uvarint(&p, end, &v) || v > UINT32_MAX)
            return SC_EFORMAT;
        if (sc_grow_array(&s->stack_data, &s->stack_data_cap, (uint64_t)s->nstack_data + 1,
                          sizeof *s->stack_data))
            return SC_ENOMEM;
        s->stack_data[s->nstack_data++] = (uint32_t)v;
        n++;
    }
    s->stack_off[s->nstack_cache] = start;
    s->stack_len[s->nstack_cache] = n;
    s->nstack_cache++;
    return 0;
}

static int cache_frame(struct sq_store *s, uint32_t id, const char *fn, const char *file,
                       int64_t line, const char *bin)
{
    int added;
    uint32_t *slot = sc_map64_upsert(&s->frame_cache, id, s->nfinfo, &added);
    if (!slot)
        return SC_ENOMEM;
    if (!added)
        return 0;
    if (sc_grow_array(&s->finfo, &s->finfo_cap, (uint64_t)s->nfinfo + 1, sizeof *s->finfo))
        return SC_ENOMEM;
    struct frame_info *f = &s->finfo[s->nfinfo];
    f->id = id;
    f->function = sc_arena_strndup(&s->cache_arena, fn, strlen(fn));
    f->file = sc_arena_strndup(&s->cache_arena, file, strlen(file));
    f->binary = sc_arena_strndup(&s->cache_arena, bin, strlen(bin));
    f->line = line;
    if (!f->function || !f->file || !f->binary)
        return SC_ENOMEM;
    s->nfinfo++;
    return 0;
}

/* Reads the given ids (known to be missing) into the stack or frame cache. */
static int fetch_missing(struct sq_store *s, sqlite3 *db, int frames, const uint32_t *ids,
                         uint32_t n, char *err)
{
    enum { CHUNK = 256 };
    int rc = 0, stop = 0;
    for (uint32_t off = 0; off < n && rc == 0; off += CHUNK) {
        if ((stop = sc_budget_poll(err)) != 0)
            return stop;
        uint32_t m = n - off < CHUNK ? n - off : CHUNK;
        char sql[96 + CHUNK * 12];
        int o =
            snprintf(sql, sizeof sql,
                     frames ? "SELECT id, function, file, line, binary FROM frames WHERE id IN ("
                            : "SELECT id, frames FROM stacks WHERE id IN (");
        for (uint32_t k = 0; k < m; k++)
            o += snprintf(sql + o, sizeof sql - (size_t)o, "%s%u", k ? "," : "", ids[off + k]);
        snprintf(sql + o, sizeof sql - (size_t)o, ")");
        sqlite3_stmt *st;
        if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
            return sq_err(err, db, "reading stacks");
        pthread_mutex_lock(&s->cache_mu);
        while (rc == 0 && sq_step(st, &stop, "reading stacks", err) == SQLITE_ROW) {
            uint32_t id = (uint32_t)sqlite3_column_int64(st, 0);
            if (!frames)
                rc = cache_stack(s, id, sqlite3_column_blob(st, 1),
                                 (size_t)sqlite3_column_bytes(st, 1));
            else
                rc = cache_frame(s, id, (const char *)sqlite3_column_text(st, 1),
                                 (const char *)sqlite3_column_text(st, 2),
                                 sqlite3_column_int64(st, 3),
                                 (const char *)sqlite3_column_text(st, 4));
        }
        pthread_mutex_unlock(&s->cache_mu);
        sqlite3_finalize(st);
        if (stop)
            return stop;
    }
    /* a stack that does not decode was damaged after it was written: not the request's fault */
    if (rc == SC_EFORMAT)
        return sc_errf(err, SC_EIO, "the store holds a damaged stack");
    return rc ? sc_errf(err, rc, "reading stacks: %s", sc_strerror(rc)) : 0;
}

/* Empties the read caches when they outgrow their bound; cache_mu held. Entries are only
 * ever dropped here, all at once, with the generation bumped so that a resolution that
 * filled the caches before can tell its entries went. */
static void cache_trim(struct sq_store *s)
{
    if (s->nstack_cache <= SQ_READ_CACHE && s->nfinfo <= SQ_READ_CACHE)
        return;
    sc_map64_release(&s->stack_cache);
    sc_map64_release(&s->frame_cache);
    s->nstack_cache = s->nstack_data = s->nfinfo = 0;
    sc_arena_release(&s->cache_arena);
    sc_arena_init(&s->cache_arena);
    s->cache_gen++;
}

/* Makes sure the stacks and their frames are in the cache, reading missing ones; *gen is
 * the cache generation they were filled in (trim: first empty a cache grown too big). */
static int cache_fill(struct sq_store *s, sqlite3 *db, const uint64_t *stacks, uint32_t n, int trim,
                      uint64_t *gen, char *err)
{
    struct sc_map64 seen;
    sc_map64_init(&seen);
    uint32_t *miss = NULL, nmiss = 0, cap = 0;
    int rc = 0, stop = 0;
    pthread_mutex_lock(&s->cache_mu);
    if (trim)
        cache_trim(s);
    *gen = s->cache_gen;
    pthread_mutex_unlock(&s->cache_mu);
    for (int frames = 0; frames < 2 && rc == 0; frames++) {
        nmiss = 0;
        sc_map64_release(&seen);
        pthread_mutex_lock(&s->cache_mu);
        for (uint32_t i = 0; i < n && rc == 0; i++) {
            if ((stop = sc_budget_poll_every(i, err)) != 0)
                break;
            if (!frames) {
                if (sc_map64_get(&s->stack_cache, stacks[i]))
                    continue;
                int added;
                if (!sc_map64_upsert(&seen, stacks[i], 0, &added)) {
                    rc = SC_ENOMEM;
                } else if (added) {
                    if (sc_grow_array(&miss, &cap, (uint64_t)nmiss + 1, sizeof *miss))
                        rc = SC_ENOMEM;
                    else
                        miss[nmiss++] = (uint32_t)stacks[i];
                }
                continue;
            }
            uint32_t *ci = sc_map64_get(&s->stack_cache, stacks[i]);
            if (!ci || (s->stack_len[*ci] & SQ_RESOLVED))
                continue; /* lacking (resolution reports it), or its frames are cached */
            const uint32_t *fr = s->stack_data + s->stack_off[*ci];
            for (uint32_t j = 0; j < s->stack_len[*ci] && rc == 0; j++) {
                uint32_t fid = fr[j] >> 1;
                if (sc_map64_get(&s->frame_cache, fid))
                    continue;
                int added;
                if (!sc_map64_upsert(&seen, fid, 0, &added)) {
                    rc = SC_ENOMEM;
                } else if (added) {
                    if (sc_grow_array(&miss, &cap, (uint64_t)nmiss + 1, sizeof *miss))
                        rc = SC_ENOMEM;
                    else
                        miss[nmiss++] = fid;
                }
                fr = s->stack_data + s->stack_off[*ci];
            }
        }
        pthread_mutex_unlock(&s->cache_mu);
        if (stop)
            rc = stop;
        else if (rc == 0 && nmiss)
            rc = fetch_missing(s, db, frames, miss, nmiss, err);
        else if (rc)
            rc = sc_errf(err, rc, "out of memory");
    }
    sc_map64_release(&seen);
    free(miss);
    return rc;
}

/* ---- rows ---- */

/* (stack -> value) sums of one series and bucket over the blocks' dense stack ids: an
 * open-addressing table whose slot holds the key and its sum together (one cache line a
 * row: this is where a long merge spends its time), and the arrays a callback gets. */
struct sum_slot {
    uint32_t key; /* 0: empty (stack ids start at 1) */
    uint32_t pad;
    int64_t sum;
};

struct rows {
    struct sum_slot *slots;
    uint32_t mask, used; /* capacity - 1, slots in use */
    uint64_t *stacks;
    int64_t *vals, *times;
    uint32_t n, cap;
    /* The first block of a sum, held until a second one comes: a sum of one aggregated
     * block (a bucket that is one rollup, a range that is one profile) is that block's rows,
     * distinct and sorted already, so it skips the table. A month's function timeline
     * reads 720 hour rollups of 19,000 rows, one a bucket: hashing each row into the table
     * and scanning the table back out was 40% of that read. */
    struct sc_block one;
    uint32_t one_col;
    int have_one;
    struct sc_block_scratch scratch; /* the aggregated blocks' buffers (one's among them) */
};

static void rows_drop_one(struct rows *a)
{
    if (a->have_one)
        sc_block_release(&a->one);
    a->have_one = 0;
}

static void rows_release(struct rows *a)
{
    rows_drop_one(a);
    sc_block_scratch_release(&a->scratch);
    free(a->slots);
    free(a->stacks);
    free(a->vals);
    free(a->times);
    memset(a, 0, sizeof *a);
}

static void rows_clear(struct rows *a)
{
    rows_drop_one(a);
    if (a->used)
        memset(a->slots, 0, ((size_t)a->mask + 1) * sizeof *a->slots);
    a->used = 0;
    a->n = 0;
}

static int rows_grow(struct rows *a, int timed)
{
    return sc_rows_reserve(&a->stacks, &a->vals, timed ? &a->times : NULL, a->n, &a->cap);
}

static inline uint32_t slot_of(uint32_t key, uint32_t mask)
{
    return (uint32_t)(((uint64_t)key * 0x9E3779B97F4A7C15ULL) >> 32) & mask;
}

/* Doubles the table (at half load), rehashing what it holds. */
static int rows_rehash(struct rows *a)
{
    uint32_t ncap = a->slots ? (a->mask + 1) * 2 : 4096;
    if (ncap == 0)
        return SC_ELIMIT;
    struct sum_slot *ns = calloc(ncap, sizeof *ns);
    if (!ns)
        return SC_ENOMEM;
    for (uint32_t i = 0; a->slots && i <= a->mask; i++) {
        if (!a->slots[i].key)
            continue;
        uint32_t j = slot_of(a->slots[i].key, ncap - 1);
        while (ns[j].key)
            j = (j + 1) & (ncap - 1);
        ns[j] = a->slots[i];
    }
    free(a->slots);
    a->slots = ns;
    a->mask = ncap - 1;
    return 0;
}

static int rows_add(struct rows *a, uint32_t stack, int64_t v)
{
    if ((!a->slots || a->used >= (a->mask + 1) / 2) && rows_rehash(a))
        return SC_ENOMEM;
    uint32_t j = slot_of(stack, a->mask);
    while (a->slots[j].key && a->slots[j].key != stack)
        j = (j + 1) & a->mask;
    if (!a->slots[j].key) {
        a->slots[j].key = stack;
        a->used++;
    }
    a->slots[j].sum = sc_add_sat(a->slots[j].sum, v);
    return 0;
}

/* The table's non-zero sums (or the one block's non-zero rows) into the arrays a callback
 * reads. */
static int rows_emit(struct rows *a)
{
    a->n = 0;
    if (a->have_one) {
        const int64_t *v = a->one.values + (size_t)a->one_col * a->one.n;
        for (uint32_t i = 0; i < a->one.n; i++) {
            if (!v[i])
                continue;
            if (a->n == a->cap && rows_grow(a, 0))
                return SC_ENOMEM;
            a->stacks[a->n] = a->one.stacks[i];
            a->vals[a->n++] = v[i];
        }
        rows_drop_one(a);
        return 0;
    }
    for (uint32_t i = 0; a->slots && i <= a->mask; i++) {
        if (!a->slots[i].key || !a->slots[i].sum)
            continue;
        if (rows_grow(a, 0))
            return SC_ENOMEM;
        a->stacks[a->n] = a->slots[i].key;
        a->vals[a->n++] = a->slots[i].sum;
    }
    return 0;
}

/* A read in progress: its connection, its budget, its scratch. */
struct reader {
    struct sq_store *s;
    struct conn *c;
    uint64_t blocks; /* blocks decoded so far */
    char *err;
};

static int count_block(struct reader *rd)
{
    rd->blocks++;
    uint64_t max = rd->s->base.opts.max_read_blocks;
    if (max && rd->blocks > max)
        return sc_store_over_budget(&rd->s->base, rd->err);
    return sc_budget_poll(rd->err); /* the query's deadline, its client still there */
}

/* sq_block_load into s's buffers (NULL: fresh ones). */
static int block_load(const void *data, size_t len, struct sc_block *b, struct sc_block_scratch *s,
                      char *why)
{
    int rc = s ? sc_block_decode_in(data, len, SQ_MAX_BLOCK_ROWS, b, s, why)
               : sc_block_decode(data, len, SQ_MAX_BLOCK_ROWS, b, why);
    if (rc == SC_ELIMIT) /* the store writes no block that large */
        rc = SC_EFORMAT;
    if (rc == 0 && b->ncols == 0) {
        sc_block_release(b);
        rc = sc_errf(why, SC_EFORMAT, "a sample block without columns");
    }
    return rc;
}

int sq_block_load(const void *data, size_t len, struct sc_block *b, char *why)
{
    return block_load(data, len, b, NULL, why);
}

/* A stored block for a read. A damaged one is the server's fault, not the request's: SC_EIO
 * (500). */
static int read_block(struct reader *rd, const void *data, size_t len, struct sc_block *b,
                      struct sc_block_scratch *s)
{
    char why[SC_ERR_LEN];
    int rc = block_load(data, len, b, s, why);
    if (rc == SC_EFORMAT)
        return sc_errf(rd->err, SC_EIO, "the store holds a damaged block: %s", why);
    return rc ? sc_errf(rd->err, rc, "%s", why) : 0;
}

/* Adds column col of a decoded block to a's table. */
static int add_rows(struct reader *rd, struct rows *a, const struct sc_block *b, uint32_t col)
{
    const int64_t *v = b->values + (size_t)col * b->n;
    int rc = 0, stop = 0;
    for (uint32_t i = 0; i < b->n && rc == 0 && !stop; i++) {
        if (v[i])
            rc = rows_add(a, b->stacks[i], v[i]);
        stop = sc_budget_poll_every(i, rd->err); /* a rollup's block may hold millions */
    }
    if (stop)
        return stop;
    return rc ? sc_errf(rd->err, rc, "out of memory") : 0;
}

/* Adds column col of an encoded block to a. */
static int add_block(struct reader *rd, struct rows *a, const void *data, size_t len, uint32_t col)
{
    int rc = count_block(rd);
    if (rc)
        return rc;
    /* a second block: the one held goes to the table first (it is in the scratch the next
     * decode reuses), then the new one */
    if (a->have_one) {
        rc = add_rows(rd, a, &a->one, a->one_col);
        rows_drop_one(a);
        if (rc)
            return rc;
    }
    struct sc_block b;
    rc = read_block(rd, data, len, &b, &a->scratch);
    if (rc)
        return rc;
    if (col >= b.ncols) {
        sc_block_release(&b);
        return sc_errf(rd->err, SC_EIO, "the store holds a damaged block: it lacks column %u",
                       (unsigned)col);
    }
    if (!a->used && b.format == SC_BLOCK_AGG) {
        a->one = b; /* the first: held (struct rows) */
        a->one_col = col;
        a->have_one = 1;
        return 0;
    }
    rc = add_rows(rd, a, &b, col);
    sc_block_release(&b);
    return rc;
}

static int is_dirty(struct reader *rd, uint64_t series, uint32_t kind, int64_t res, int64_t bucket,
                    int *rc)
{
    sqlite3_stmt *dq = rd->c->st[ST_DIRTY];
    sqlite3_bind_int64(dq, 1, (int64_t)series);
    sqlite3_bind_int64(dq, 2, kind);
    sqlite3_bind_int64(dq, 3, res);
    sqlite3_bind_int64(dq, 4, bucket);
    int d = sq_step(dq, rc, "reading rollups", rd->err) == SQLITE_ROW;
    sqlite3_reset(dq);
    return d;
}

/* The rollup resolutions a read may use, largest first. */
static const int64_t rollup_res[] = {SC_ROLLUP_DAY, SC_ROLLUP_HOUR, SC_ROLLUP_SHORT};
#define NRES (sizeof rollup_res / sizeof rollup_res[0])

/* Reads one series/kind of [from, until) into a, via clean rollups of at most max_res
 * seconds (0: raw profiles only), adding its captures to cap. */
static int read_series(struct reader *rd, uint64_t series, const struct kind_col *kc, int64_t from,
                       int64_t until, int64_t max_res, struct rows *a, struct sc_captures *cap)
{
    struct conn *c = rd->c;
    int rc = sc_budget_poll(rd->err); /* many series each read no block */
    if (rc)
        return rc;
    /* Only the span that holds profiles needs walking (ranges like [0, forever) are
     * common). */
    {
        sqlite3_stmt *mm = c->st[ST_SPAN];
        sqlite3_bind_int64(mm, 1, (int64_t)series);
        sqlite3_bind_int64(mm, 2, kc->kind);
        sqlite3_bind_int64(mm, 3, from);
        sqlite3_bind_int64(mm, 4, until);
        int have = sq_step(mm, &rc, "reading profiles", rd->err) == SQLITE_ROW &&
                   sqlite3_column_type(mm, 0) != SQLITE_NULL;
        int64_t lo = have ? sqlite3_column_int64(mm, 0) : 0;
        int64_t hi = have ? sqlite3_column_int64(mm, 1) : 0;
        sqlite3_reset(mm);
        if (!have)
            return rc;
        /* keep bucket alignment where the range allows it: start at lo's largest bucket */
        int64_t big = rollup_res[0] * SC_NS_PER_S;
        int64_t lo_al = sc_floor_div(lo, big) * big;
        if (lo_al > from)
            from = lo_al;
        int64_t hi_al = (sc_floor_div(hi, big) + 1) * big;
        if (hi_al < until)
            until = hi_al;
    }
    /* Walk [from, until) left to right: a full clean bucket of the largest resolution
     * allowed from its rollup, else of the next, else raw profiles up to the next
     * boundary of the smallest. */
    sqlite3_stmt *rq = c->st[ST_ROLLUP], *pq = c->st[ST_RAW];
    int64_t t = from;
    /* a walk over buckets without profiles reads no block: it polls the budget itself */
    while (t < until && rc == 0 && (rc = sc_budget_poll(rd->err)) == 0) {
        int64_t secs = sc_floor_div(t, SC_NS_PER_S);
        int used = 0;
        for (size_t k = 0; max_res > 0 && t % SC_NS_PER_S == 0 && k < NRES && !used && !rc; k++) {
            int64_t r = rollup_res[k];
            if (r > max_res || secs % r != 0 || t + r * SC_NS_PER_S > until)
                continue;
            if (is_dirty(rd, series, kc->kind, r, secs, &rc) || rc)
                continue;
            sqlite3_bind_int64(rq, 1, (int64_t)series);
            sqlite3_bind_int64(rq, 2, kc->kind);
            sqlite3_bind_int64(rq, 3, r);
            sqlite3_bind_int64(rq, 4, secs);
            if (sq_step(rq, &rc, "reading rollups", rd->err) == SQLITE_ROW) {
                /* a rollup keeps its captures and their time (sqlite_compact.c) */
                cap->n += sqlite3_column_int64(rq, 0);
                cap->covered_ns += sqlite3_column_int64(rq, 2);
                cap->open = 0;
                rc = add_block(rd, a, sqlite3_column_blob(rq, 1),
                               (size_t)sqlite3_column_bytes(rq, 1), kc->col);
            }
            sqlite3_reset(rq);
            /* a clean bucket without a rollup row holds no profiles */
            t += r * SC_NS_PER_S;
            used = 1;
        }
        if (used)
            continue;
        int64_t small = rollup_res[NRES - 1] * SC_NS_PER_S;
        int64_t next = (sc_floor_div(t, small) + 1) * small;
        if (next > until || max_res <= 0)
            next = until;
        sqlite3_bind_int64(pq, 1, (int64_t)series);
        sqlite3_bind_int64(pq, 2, kc->kind);
        sqlite3_bind_int64(pq, 3, t);
        sqlite3_bind_int64(pq, 4, next);
        while (rc == 0 && sq_step(pq, &rc, "reading profiles", rd->err) == SQLITE_ROW) {
            sc_captures_add(cap, sqlite3_column_int64(pq, 2), sqlite3_column_int64(pq, 1));
            rc = add_block(rd, a, sqlite3_column_blob(pq, 0), (size_t)sqlite3_column_bytes(pq, 0),
                           kc->col);
        }
        sqlite3_reset(pq);
        t = next;
    }
    return rc;
}

/* Timed reads: every timed profile of the series in range, one callback each. */
static int read_timed(struct reader *rd, const struct sc_store_read *r, uint32_t si,
                      const struct kind_col *kc, int nk, struct rows *a, sc_store_rows_cb cb,
                      void *ctx)
{
    const struct sc_store_query *q = r->q;
    sqlite3_stmt *st = rd->c->st[ST_TIMED];
    int rc = 0;
    for (int k = 0; k < nk && rc == 0; k++) {
        sqlite3_bind_int64(st, 1, (int64_t)q->series[si]);
        sqlite3_bind_int64(st, 2, kc[k].kind);
        sqlite3_bind_int64(st, 3, sq_timed_from(q->from_ns));
        sqlite3_bind_int64(st, 4, q->until_ns);
        while (rc == 0 && sq_step(st, &rc, "reading profiles", rd->err) == SQLITE_ROW) {
            rc = count_block(rd);
            struct sc_block b;
            if (rc == 0)
                rc = read_block(rd, sqlite3_column_blob(st, 0), (size_t)sqlite3_column_bytes(st, 0),
                                &b, &a->scratch); /* no block is held in a timed read */
            if (rc)
                break;
            a->n = 0;
            for (uint32_t i = 0; i < b.n && rc == 0; i++) {
                int64_t v = b.values[(size_t)kc[k].col * b.n + i];
                if (!v || !b.times || b.times[i] < q->from_ns || b.times[i] >= q->until_ns)
                    continue;
                if ((rc = rows_grow(a, 1)) != 0)
                    break;
                a->stacks[a->n] = b.stacks[i];
                a->vals[a->n] = v;
                a->times[a->n++] = b.times[i];
            }
            sc_block_release(&b);
            if (rc == 0 && a->n) {
                struct sc_store_rows out = {
                    si,   q->from_ns, q->until_ns, 1,        sqlite3_column_int64(st, 1),
                    a->n, a->stacks,  a->vals,     a->times, 1};
                rc = cb(ctx, &out);
            }
        }
        sqlite3_reset(st);
    }
    return rc;
}

int sq_read(struct sc_store *sto, const struct sc_store_read *r, sc_store_rows_cb cb, void *ctx,
            char *err)
{
    struct sq_store *s = (struct sq_store *)sto;
    const struct sc_store_query *q = r->q;
    struct kind_col kc[SQ_MAX_KINDS];
    int gauge;
    int nk = sq_kinds_for_type(s, q->type, kc, SQ_MAX_KINDS, &gauge);
    if (nk == 0)
        return sc_errf(err, SC_ENOTFOUND, "no profiles of type '%s'", q->type ? q->type : "");
    if (r->bucket_ns < 0 || (r->bucket_ns > 0 && r->bucket_ns < SC_NS_PER_S))
        return sc_errf(err, SC_EINVAL, "bad bucket width");
    /* rollups serve a bucket only when it is made of whole rollup buckets */
    int64_t max_res = 0;
    if (!q->raw_only) {
        max_res = rollup_res[0];
        if (r->bucket_ns > 0) {
            max_res = 0;
            for (size_t k = 0; k < NRES && !max_res; k++)
                if (r->bucket_ns % (rollup_res[k] * SC_NS_PER_S) == 0)
                    max_res = rollup_res[k];
        }
    }
    struct reader rd = {s, sq_conn_get(s, err), 0, err};
    if (!rd.c)
        return SC_EIO;
    struct rows a;
    memset(&a, 0, sizeof a);
    /* a read transaction: one consistent snapshot for the whole read */
    int rc = sq_exec(rd.c->db, "BEGIN", err);
    for (uint32_t i = 0; r->timed && i < q->nseries && rc == 0; i++)
        rc = read_timed(&rd, r, i, kc, nk, &a, cb, ctx);
    int64_t width = r->bucket_ns > 0 ? r->bucket_ns : 0;
    int64_t b0 = width ? sc_floor_div(q->from_ns, width) * width : q->from_ns;
    for (int64_t b = b0; !r->timed && b < q->until_ns && rc == 0;) {
        int64_t from = b < q->from_ns ? q->from_ns : b;
        int64_t until = !width || b + width > q->until_ns ? q->until_ns : b + width;
        for (uint32_t i = 0; i < q->nseries && rc == 0; i++) {
            struct sc_captures cap = {0};
            rows_clear(&a);
            for (int k = 0; k < nk && rc == 0; k++) {
                cap.open = 0; /* each kind's profiles come in time order */
                rc = read_series(&rd, q->series[i], &kc[k], from, until, max_res, &a, &cap);
            }
            if (rc == 0 && cap.n > 0 && (rc = rows_emit(&a)) == 0) {
                struct sc_store_rows out = {i,   from,     until,  cap.n, cap.covered_ns,
                                            a.n, a.stacks, a.vals, NULL,  1};
                rc = cb(ctx, &out);
            }
        }
        if (!width)
            break;
        b += width;
    }
    rows_release(&a);
    sqlite3_exec(rd.c->db, "COMMIT", NULL, NULL, NULL);
    sq_conn_put(s, rd.c);
    return rc;
}

/* ---- resolving stacks ---- */

int sq_resolve(struct sc_store *sto, const uint64_t *stacks, uint32_t n, sc_store_stack_cb cb,
               void *ctx, char *err)
{
    struct sq_store *s = (struct sq_store *)sto;
    struct conn *c = sq_conn_get(s, err);
    if (!c)
        return SC_EIO;
    /* fill, then resolve under cache_mu in the same generation: another resolution that
     * emptied the caches in between means filling again (the last try does not trim) */
    int rc = 0;
    for (int attempt = 0;; attempt++) {
        uint64_t gen;
        rc = cache_fill(s, c->db, stacks, n, attempt < 2, &gen, err);
        if (rc)
            break;
        pthread_mutex_lock(&s->cache_mu);
        if (gen == s->cache_gen)
            break; /* locked */
        pthread_mutex_unlock(&s->cache_mu);
        if (attempt == 3) {
            rc = sc_errf(err, SC_EIO, "the symbol cache is too busy; try again");
            break;
        }
    }
    sq_conn_put(s, c);
    if (rc)
        return rc;
    struct sc_store_frame *fr = NULL;
    uint32_t fcap = 0;
    for (uint32_t i = 0; i < n && rc == 0; i++) {
        if ((rc = sc_budget_poll_every(i, err)) != 0)
            break;
        uint32_t *ci = stacks[i] <= UINT32_MAX ? sc_map64_get(&s->stack_cache, stacks[i]) : NULL;
        if (!ci) {
            rc = sc_errf(err, SC_EIO, "the store is damaged: stack %llu is missing",
                         (unsigned long long)stacks[i]);
            break;
        }
        uint32_t *fd = s->stack_data + s->stack_off[*ci];
        uint32_t nf = s->stack_len[*ci] & ~SQ_RESOLVED;
        if (!(s->stack_len[*ci] & SQ_RESOLVED)) {
            /* the first resolution turns frame ids into cache indexes in place, so later
             * ones read the frames without a lookup each */
            for (uint32_t j = 0; j < nf && rc == 0; j++) {
                uint32_t fid = fd[j] >> 1;
                uint32_t *fi = sc_map64_get(&s->frame_cache, fid);
                if (!fi)
                    rc = sc_errf(err, SC_EIO, "the store is damaged: frame %u is missing",
                                 (unsigned)fid);
                else
                    fd[j] = *fi << 1 | (fd[j] & 1);
            }
            if (rc)
                break;
            s->stack_len[*ci] |= SQ_RESOLVED;
        }
        if (sc_grow_array(&fr, &fcap, nf, sizeof *fr)) {
            rc = sc_errf(err, SC_ENOMEM, "out of memory");
            break;
        }
        for (uint32_t j = 0; j < nf; j++) {
            const struct frame_info *f = &s->finfo[fd[j] >> 1];
            fr[j] = (struct sc_store_frame){f->id,     f->function, f->file,
                                            f->binary, f->line,     (int)(fd[j] & 1)};
        }
        if (rc == 0)
            rc = cb(ctx, stacks[i], fr, nf);
    }
    pthread_mutex_unlock(&s->cache_mu);
    free(fr);
    return rc;
}

/* ---- spans and timelines ---- */

int sq_span(struct sc_store *sto, const struct sc_store_query *q, int64_t *first_ns,
            int64_t *last_ns, char *err)
{
    struct sq_store *s = (struct sq_store *)sto;
    *first_ns = *last_ns = 0;
    struct kind_col kc[SQ_MAX_KINDS];
    int gauge;
    int nk = sq_kinds_for_type(s, q->type, kc, SQ_MAX_KINDS, &gauge);
    if (nk == 0)
        return SC_ENOTFOUND;
    struct conn *c = sq_conn_get(s, err);
    if (!c)
        return SC_EIO;
    int found = 0, rc = 0;
    sqlite3_stmt *mm = c->st[ST_SPAN];
    for (uint32_t i = 0; i < q->nseries && rc == 0; i++)
        for (int k = 0; k < nk && rc == 0; k++) {
            sqlite3_bind_int64(mm, 1, (int64_t)q->series[i]);
            sqlite3_bind_int64(mm, 2, kc[k].kind);
            sqlite3_bind_int64(mm, 3, q->from_ns);
            sqlite3_bind_int64(mm, 4, q->until_ns);
            if (sq_step(mm, &rc, "reading profiles", err) == SQLITE_ROW &&
                sqlite3_column_type(mm, 0) != SQLITE_NULL) {
                int64_t lo = sqlite3_column_int64(mm, 0), hi = sqlite3_column_int64(mm, 1);
                if (!found || lo < *first_ns)
                    *first_ns = lo;
                if (!found || hi > *last_ns)
                    *last_ns = hi;
                found = 1;
            }
            sqlite3_reset(mm);
        }
    sq_conn_put(s, c);
    return rc ? rc : found ? 0 : SC_ENOTFOUND;
}

/* The samples of timed profiles of one series and kind that start at t: their values by
 * their own times into the cells. */
static int timeline_timed(struct sq_store *s, struct conn *c, sqlite3_stmt **tq, uint64_t series,
                          const struct kind_col *kc, int64_t t, uint32_t i,
                          struct sc_store_cells *cells, uint64_t *rows, uint64_t max, char *err)
{
    int rc = 0;
    if (!*tq && sqlite3_prepare_v2(c->db,
                                   "SELECT block FROM profiles WHERE series_id=? AND kind_id=? "
                                   "AND time_ns=? AND timed=1",
                                   -1, tq, NULL) != SQLITE_OK)
        return sq_err(err, c->db, "reading timed profiles");
    sqlite3_bind_int64(*tq, 1, (int64_t)series);
    sqlite3_bind_int64(*tq, 2, kc->kind);
    sqlite3_bind_int64(*tq, 3, t);
    while (rc == 0 && sq_step(*tq, &rc, "reading timed profiles", err) == SQLITE_ROW) {
        /* a block costs 64 totals rows of the budget */
        if (max && (*rows += 64) > max) {
            rc = sc_store_over_budget(&s->base, err);
            break;
        }
        struct sc_block b;
        char why[SC_ERR_LEN];
        rc = sq_block_load(sqlite3_column_blob(*tq, 0), (size_t)sqlite3_column_bytes(*tq, 0), &b,
                           why);
        if (rc) {
            rc = rc == SC_EFORMAT ? sc_errf(err, SC_EIO, "the store holds a damaged block: %s", why)
                                  : sc_errf(err, rc, "%s", why);
            break;
        }
        for (uint32_t r = 0; b.times && kc->col < b.ncols && r < b.n; r++)
            sc_store_cells_put(cells, i, b.times[r], b.values[(size_t)kc->col * b.n + r]);
        sc_block_release(&b);
    }
    sqlite3_reset(*tq);
    return rc;
}

int sq_timeline(struct sc_store *sto, const struct sc_store_query *q, struct sc_store_cells *cells,
                char *err)
{
    struct sq_store *s = (struct sq_store *)sto;
    struct kind_col kc[SQ_MAX_KINDS];
    int nk = sq_kinds_for_type(s, q->type, kc, SQ_MAX_KINDS, &cells->gauge);
    if (nk == 0)
        return 0;
    struct conn *c = sq_conn_get(s, err);
    if (!c)
        return SC_EIO;
    sqlite3_stmt *st = c->st[ST_TOTALS], *tq = NULL;
    /* a totals row costs about a sixty-fourth of a block: the same budget, scaled */
    uint64_t rows = 0, max = s->base.opts.max_read_blocks * 64;
    int64_t until = sc_add_sat(cells->from_ns, sc_mul_sat(cells->step_ns, cells->nsteps));
    int rc = 0;
    for (uint32_t i = 0; i < q->nseries && rc == 0; i++) {
        for (int k = 0; k < nk && rc == 0; k++) {
            sqlite3_bind_int64(st, 1, (int64_t)q->series[i]);
            sqlite3_bind_int64(st, 2, kc[k].kind);
            sqlite3_bind_int64(st, 3, sc_sub_sat(cells->from_ns, SC_STORE_TIMELINE_LOOKBACK_NS));
            sqlite3_bind_int64(st, 4, until < q->until_ns ? until : q->until_ns);
            /* a capture's rows come one after another (time order): summed, then added; the
             * values of timed profiles go by their samples' times */
            int64_t ct = 0, cd = 0, cv = 0;
            int open = 0, timed = 0;
            while (rc == 0 && sq_step(st, &rc, "reading totals", err) == SQLITE_ROW) {
                if (max && ++rows > max) {
                    rc = sc_store_over_budget(&s->base, err);
                    break;
                }
                int64_t t = sqlite3_column_int64(st, 0), d = sqlite3_column_int64(st, 2);
                int is_timed = sqlite3_column_int(st, 3) != 0;
                const uint8_t *p = sqlite3_column_blob(st, 1);
                const uint8_t *end = p + sqlite3_column_bytes(st, 1);
                uint64_t v = 0;
                for (uint32_t col = 0; col <= kc[k].col; col++)
                    if (sc_get_uvarint(&p, end, &v))
                        v = 0;
                int64_t x = is_timed ? 0 : sc_unzigzag(v);
                if (open && t == ct) {
                    cd = d > cd ? d : cd;
                    cv = sc_add_sat(cv, x);
                    timed |= is_timed;
                    continue;
                }
                if (open && timed)
                    rc = timeline_timed(s, c, &tq, q->series[i], &kc[k], ct, i, cells, &rows, max,
                                        err);
                if (open)
                    sc_store_cells_add(cells, i, ct, cd, cv);
                open = 1;
                ct = t;
                cd = d;
                cv = x;
                timed = is_timed;
            }
            sqlite3_reset(st);
            if (open && timed && rc == 0)
                rc = timeline_timed(s, c, &tq, q->series[i], &kc[k], ct, i, cells, &rows, max, err);
            if (open && rc == 0)
                sc_store_cells_add(cells, i, ct, cd, cv);
        }
    }
    sqlite3_finalize(tq);
    sq_conn_put(s, c);
    return rc;
}

/* ---- single profiles ---- */

int sq_timed_near(struct conn *c, uint64_t series, uint32_t kind, int64_t from, int64_t until,
                  int *rc, char *err)
{
    sqlite3_stmt *st = c->st[ST_NEAR];
    sqlite3_bind_int64(st, 1, (int64_t)series);
    sqlite3_bind_int64(st, 2, kind);
    sqlite3_bind_int64(st, 3, sq_timed_from(from));
    sqlite3_bind_int64(st, 4, until);
    int has = sq_step(st, rc, "reading profiles", err) == SQLITE_ROW;
    sqlite3_reset(st);
    return has;
}

int sq_profiles(struct sc_store *sto, const struct sc_store_query *q, sc_store_profile_cb cb,
                void *ctx, char *err)
{
    struct sq_store *s = (struct sq_store *)sto;
    struct kind_col kc[SQ_MAX_KINDS];
    int gauge;
    int nk = sq_kinds_for_type(s, q->type, kc, SQ_MAX_KINDS, &gauge);
    if (nk == 0)
        return 0;
    struct conn *c = sq_conn_get(s, err);
    if (!c)
        return SC_EIO;
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(c->db,
                           "SELECT time_ns, duration_ns, timed, nsamples, totals FROM profiles "
                           "WHERE series_id=? AND kind_id=? AND time_ns >= ? AND time_ns < ? "
                           "ORDER BY time_ns",
                           -1, &st, NULL) != SQLITE_OK) {
        int rc = sq_err(err, c->db, "listing profiles");
        sq_conn_put(s, c);
        return rc;
    }
    int stop = 0, rc = 0;
    for (uint32_t i = 0; i < q->nseries && !stop && rc == 0; i++)
        for (int k = 0; k < nk && !stop && rc == 0; k++) {
            sqlite3_bind_int64(st, 1, (int64_t)q->series[i]);
            sqlite3_bind_int64(st, 2, kc[k].kind);
            sqlite3_bind_int64(st, 3, q->from_ns);
            sqlite3_bind_int64(st, 4, q->until_ns);
            while (!stop && sq_step(st, &rc, "listing profiles", err) == SQLITE_ROW) {
                const uint8_t *p = sqlite3_column_blob(st, 4);
                const uint8_t *end = p + sqlite3_column_bytes(st, 4);
                uint64_t v = 0;
                for (uint32_t col = 0; col <= kc[k].col; col++)
                    if (sc_get_uvarint(&p, end, &v))
                        v = 0;
                struct sc_store_profile_info pi = {
                    q->series[i],
                    sqlite3_column_int64(st, 0),
                    sqlite3_column_int64(st, 1),
                    sc_unzigzag(v),
                    (uint32_t)sqlite3_column_int64(st, 3),
                    sqlite3_column_int64(st, 2) != 0,
                };
                stop = cb(ctx, &pi);
            }
            sqlite3_reset(st);
        }
    sqlite3_finalize(st);
    sq_conn_put(s, c);
    return rc;
}
