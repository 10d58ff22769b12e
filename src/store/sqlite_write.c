/* sqlite_write.c - the embedded backend's write path: ids, blocks, group commit. */
#include "store/sqlite_int.h"
#include "model/error.h"
#include "store/prepare.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- ids: bounded caches over lookups by hash ---- */

static const char *const idq_sql[IDQ_N] = {
    "SELECT id FROM frames WHERE hash = ? LIMIT 1",
    "SELECT id FROM stacks WHERE hash = ? LIMIT 1",
    "SELECT id FROM series WHERE hash = ? LIMIT 1",
};

int sq_ids_open(struct sq_store *s, enum sq_mode mode, char *err)
{
    sq_ids_close(s);
    int rc = sq_open_db(s, &s->idb, mode, err);
    for (int i = 0; rc == 0 && i < IDQ_N; i++)
        if (sqlite3_prepare_v3(s->idb, idq_sql[i], -1, SQLITE_PREPARE_PERSISTENT, &s->idq[i],
                               NULL) != SQLITE_OK)
            rc = sq_err(err, s->idb, "preparing the id lookups");
    return rc;
}

void sq_ids_close(struct sq_store *s)
{
    for (int i = 0; i < IDQ_N; i++) {
        sqlite3_finalize(s->idq[i]);
        s->idq[i] = NULL;
    }
    sqlite3_close(s->idb);
    s->idb = NULL;
}

/* The committed id of a hash (0: none, or a negative SC_E*); mu held. */
static int64_t lookup_id(struct sq_store *s, int which, uint64_t hash)
{
    sqlite3_stmt *st = s->idq[which];
    sqlite3_bind_int64(st, 1, (int64_t)hash);
    int step = sqlite3_step(st);
    int64_t id = step == SQLITE_ROW    ? sqlite3_column_int64(st, 0)
                 : step == SQLITE_DONE ? 0
                                       : SC_EIO;
    sqlite3_reset(st);
    return id > 0 && id < UINT32_MAX ? id : id <= 0 ? id : SC_EFORMAT;
}

void sq_ids_forget(struct sq_store *s, unsigned which)
{
    if (which & 1u << IDQ_FRAME)
        sc_map64_release(&s->frame_ids);
    if (which & 1u << IDQ_STACK)
        sc_map64_release(&s->stack_ids);
    if (which & 1u << IDQ_SERIES)
        sc_map64_release(&s->series_ids);
    /* what is not committed yet must stay findable, or a second id would be handed out */
    struct pend_frame *fl[2] = {s->pframes, s->inflight_frames};
    struct pend_stack *sl[2] = {s->pstacks, s->inflight_stacks};
    struct pend_series *el[2] = {s->pseries, s->inflight_series};
    for (int k = 0; k < 2; k++) {
        for (struct pend_frame *f = fl[k]; f; f = f->next)
            sc_map64_upsert(&s->frame_ids, f->hash, f->id, NULL);
        for (struct pend_stack *x = sl[k]; x; x = x->next)
            sc_map64_upsert(&s->stack_ids, x->hash, x->id, NULL);
        for (struct pend_series *x = el[k]; x; x = x->next)
            sc_map64_upsert(&s->series_ids, x->hash, x->id, NULL);
    }
}

/* Looks the hashes the cache lacks up in one statement per batch (not one each: a profile
 * of new stacks has thousands) and caches what the database has; mu held. Afterwards a
 * hash missing from the cache is new. */
static int prefetch_ids(struct sq_store *s, int which, const uint64_t *hashes, uint32_t n)
{
    static const char *const table[IDQ_N] = {"frames", "stacks", "series"};
    struct sc_map64 *cache = which == IDQ_FRAME   ? &s->frame_ids
                             : which == IDQ_STACK ? &s->stack_ids
                                                  : &s->series_ids;
    enum { BATCH = 256 };
    int64_t batch[BATCH];
    uint32_t k = 0;
    int rc = 0;
    for (uint32_t i = 0; i <= n && rc == 0; i++) {
        if (i < n && !sc_map64_get(cache, hashes[i]))
            batch[k++] = (int64_t)hashes[i];
        if (k == 0 || (k < BATCH && i < n))
            continue;
        char sql[64 + BATCH * 2];
        int o = snprintf(sql, sizeof sql, "SELECT id, hash FROM %s WHERE hash IN (", table[which]);
        for (uint32_t j = 0; j < k; j++)
            o += snprintf(sql + o, sizeof sql - (size_t)o, j ? ",?" : "?");
        snprintf(sql + o, sizeof sql - (size_t)o, ")");
        sqlite3_stmt *st;
        if (sqlite3_prepare_v2(s->idb, sql, -1, &st, NULL) != SQLITE_OK)
            return SC_EIO;
        for (uint32_t j = 0; j < k; j++)
            sqlite3_bind_int64(st, (int)j + 1, batch[j]);
        while (rc == 0 && sqlite3_step(st) == SQLITE_ROW) {
            int64_t id = sqlite3_column_int64(st, 0);
            if (id <= 0 || id >= UINT32_MAX)
                rc = SC_EFORMAT;
            else if (!sc_map64_upsert(cache, (uint64_t)sqlite3_column_int64(st, 1), (uint32_t)id,
                                      NULL))
                rc = SC_ENOMEM;
        }
        sqlite3_finalize(st);
        k = 0;
    }
    return rc;
}

/* Keeps the id caches bounded; mu held. */
static void ids_trim(struct sq_store *s)
{
    if (s->frame_ids.count > SQ_ID_CACHE || s->stack_ids.count > SQ_ID_CACHE ||
        s->series_ids.count > SQ_ID_CACHE)
        sq_ids_forget(s, SQ_IDS_ALL);
    if (s->touched.count > SQ_ID_CACHE)
        sc_map64_release(&s->touched); /* a stack touched again costs one more UPDATE */
}

/* Notes that stack id was used on day; recorded with the next commit; mu held. touched
 * says a day only once its update is queued: a day said and not queued would spare every
 * later write of the stack its update, and collection would take a stack in use. */
static int touch_stack(struct sq_store *s, uint32_t id, uint32_t day)
{
    uint32_t *d = sc_map64_get(&s->touched, id);
    if (d && *d >= day)
        return 0;
    if (sc_grow_array(&s->touch, &s->touch_cap, (uint64_t)s->ntouch + 1, sizeof *s->touch))
        return SC_ENOMEM;
    if (!d && !(d = sc_map64_upsert(&s->touched, id, day, NULL)))
        return SC_ENOMEM;
    *d = day;
    s->touch[s->ntouch++] = (struct touch){id, day};
    return 0;
}

/* ---- the write path ---- */

/* Per-profile scratch: the prepared profile (prepare.h) and its rows' dense stack ids. */
struct wctx {
    struct sq_store *s;
    struct sc_prep x;
    uint32_t *stacks; /* per row: the stack's id in this store */
    int timed;
    uint32_t day; /* the profile's day, recorded on the stacks it uses */
};

/* Frame id for a hash, creating a pending frame when new; mu held, the hash prefetched
 * (prefetch_ids), so a cache miss is a new frame. */
static int64_t frame_id_locked(struct sq_store *s, const struct sc_prep_frame *pf)
{
    uint64_t h = pf->id;
    uint32_t *slot = sc_map64_get(&s->frame_ids, h);
    if (slot)
        return *slot;
    if (s->next_frame >= UINT32_MAX / 4)
        return SC_ELIMIT;
    struct pend_frame *f = calloc(1, sizeof *f);
    if (!f)
        return SC_ENOMEM;
    f->id = s->next_frame;
    f->hash = h;
    f->function = strndup(pf->function.ptr, pf->function.len);
    f->file = strndup(pf->file.ptr, pf->file.len);
    f->binary = strndup(pf->binary.ptr, pf->binary.len);
    f->line = pf->line;
    if (!f->function || !f->file || !f->binary || !sc_map64_upsert(&s->frame_ids, h, f->id, NULL)) {
        free(f->function);
        free(f->file);
        free(f->binary);
        free(f);
        return SC_ENOMEM;
    }
    s->next_frame++;
    f->next = s->pframes;
    s->pframes = f;
    return f->id;
}

/* Frame id of a frame reference of the prepared profile, creating the frame when new; mu
 * held. */
static int64_t frame_of_ref(struct wctx *w, uint32_t ref)
{
    struct sc_prep_frame f;
    sc_prep_frame(&w->x, ref, &f);
    return frame_id_locked(w->s, &f);
}

/* Turns the collected stack hashes into stack ids, creating pending stacks for new ones. */
static int resolve_stacks(struct wctx *w)
{
    struct sq_store *s = w->s;
    int rc = 0;
    pthread_mutex_lock(&s->mu);
    ids_trim(s);
    /* the stacks the database has, then the frames of those it does not */
    rc = prefetch_ids(s, IDQ_STACK, w->x.stack, w->x.n);
    /* each distinct frame of each distinct new stack once (a profile may repeat a deep
     * stack thousands of times) */
    uint64_t *fh = NULL;
    uint32_t nfh = 0, fcap = 0;
    struct sc_map64 seen;
    sc_map64_init(&seen);
    for (uint32_t i = 0; i < w->x.n && rc == 0; i++) {
        int added;
        if (sc_map64_get(&s->stack_ids, w->x.stack[i]))
            continue;
        if (!sc_map64_upsert(&seen, w->x.stack[i], 0, &added)) {
            rc = SC_ENOMEM;
            break;
        }
        for (uint32_t k = w->x.soff[i]; added && k < w->x.soff[i + 1] && rc == 0; k++) {
            struct sc_prep_frame pf;
            sc_prep_frame(&w->x, w->x.refs[k], &pf);
            uint64_t h = pf.id;
            int fresh;
            if (!sc_map64_upsert(&seen, h ^ SC_INLINE_SALT, 0, &fresh) ||
                (fresh && sc_grow_array(&fh, &fcap, (uint64_t)nfh + 1, sizeof *fh)))
                rc = SC_ENOMEM;
            else if (fresh)
                fh[nfh++] = h;
        }
    }
    sc_map64_release(&seen);
    if (rc == 0)
        rc = prefetch_ids(s, IDQ_FRAME, fh, nfh);
    free(fh);
    for (uint32_t i = 0; i < w->x.n && rc == 0; i++) {
        uint32_t *slot = sc_map64_get(&s->stack_ids, w->x.stack[i]);
        if (slot) {
            w->stacks[i] = *slot;
            rc = touch_stack(s, w->stacks[i], w->day);
            continue;
        }
        if (s->next_stack >= UINT32_MAX / 4) {
            rc = SC_ELIMIT;
            break;
        }
        struct pend_stack *st = calloc(1, sizeof *st);
        if (!st) {
            rc = SC_ENOMEM;
            break;
        }
        st->id = s->next_stack;
        st->day = w->day;
        st->hash = w->x.stack[i];
        for (uint32_t k = w->x.soff[i]; k < w->x.soff[i + 1] && rc == 0; k++) {
            int64_t fid = frame_of_ref(w, w->x.refs[k]);
            if (fid < 0)
                rc = (int)fid;
            else
                sc_put_uvarint(&st->blob, (uint64_t)fid << 1 | (w->x.refs[k] >> 31));
        }
        if (rc || st->blob.oom || !sc_map64_upsert(&s->stack_ids, st->hash, st->id, NULL)) {
            sc_buf_release(&st->blob);
            free(st);
            rc = rc ? rc : SC_ENOMEM;
            break;
        }
        s->next_stack++;
        st->next = s->pstacks;
        s->pstacks = st;
        w->stacks[i] = st->id;
        /* new stacks reach the read cache when a read first needs them: the write path
         * stays out of it, so the cache is bounded by what reads use */
    }
    pthread_mutex_unlock(&s->mu);
    return rc;
}

/* Builds the encoded block and totals from the collected rows. */
static int build_block(struct wctx *w, struct pend_write *pw, char *err)
{
    uint32_t n = w->x.n, nt = w->x.nt;
    struct sc_block b = {.format = w->timed ? SC_BLOCK_TIMED : SC_BLOCK_AGG, .n = n, .ncols = nt};
    b.stacks = malloc(((size_t)n + 1) * sizeof *b.stacks);
    b.values = malloc(((size_t)n * nt + 1) * sizeof *b.values);
    b.times = w->timed ? malloc(((size_t)n + 1) * sizeof *b.times) : NULL;
    uint32_t *ord = w->timed ? sc_prep_time_order(&w->x) : NULL;
    int rc = SC_ENOMEM;
    if (!b.stacks || !b.values || (w->timed && (!b.times || !ord)))
        goto out;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t r = w->timed ? ord[i] : i;
        b.stacks[i] = w->stacks[r];
        if (w->timed)
            b.times[i] = w->x.times[r];
        for (uint32_t c = 0; c < nt; c++)
            b.values[(size_t)c * n + i] = w->x.values[(size_t)r * nt + c];
    }
    if (!w->timed && (rc = sc_block_normalize(&b)) != 0)
        goto out;
    for (uint32_t c = 0; c < nt; c++) {
        int64_t t = 0;
        for (uint32_t i = 0; i < b.n; i++)
            t = sc_add_sat(t, b.values[(size_t)c * b.n + i]);
        sc_put_uvarint(&pw->totals, sc_zigzag(t));
    }
    pw->nsamples = b.n;
    rc = sc_block_encode(&b, &pw->block, w->s->base.opts.zstd_level);
    if (!rc && (pw->block.oom || pw->totals.oom))
        rc = SC_ENOMEM;
out:
    free(b.stacks);
    free(b.values);
    free(b.times);
    free(ord);
    return rc ? sc_errf(err, rc, "encoding samples: %s", sc_strerror(rc)) : 0;
}

/* Series and kind ids; mu held. */
static int64_t series_id_locked(struct sq_store *s, const char *tenant,
                                const struct sc_labels *labels, const char *canon, uint64_t h)
{
    uint32_t *slot = sc_map64_get(&s->series_ids, h);
    if (slot)
        return *slot;
    int64_t known = lookup_id(s, IDQ_SERIES, h);
    if (known > 0 && !sc_map64_upsert(&s->series_ids, h, (uint32_t)known, NULL))
        return SC_ENOMEM;
    if (known != 0)
        return known;
    struct pend_series *se = calloc(1, sizeof *se);
    if (!se)
        return SC_ENOMEM;
    se->id = s->next_series;
    se->hash = h;
    se->tenant = strdup(tenant);
    se->labels = strdup(canon);
    se->npairs = labels->n;
    /* copy the pairs' strings: offsets first, pointers after the buffer stops moving */
    size_t offs[2 * SQ_MAX_LABELS];
    for (uint32_t i = 0; i < labels->n; i++) {
        offs[2 * (size_t)i] = se->strings.len;
        sc_buf_append(&se->strings, labels->v[i].name.ptr, labels->v[i].name.len);
        sc_buf_putc(&se->strings, 0);
        offs[2 * i + 1] = se->strings.len;
        sc_buf_append(&se->strings, labels->v[i].value.ptr, labels->v[i].value.len);
        sc_buf_putc(&se->strings, 0);
    }
    if (!se->tenant || !se->labels || se->strings.oom ||
        !sc_map64_upsert(&s->series_ids, h, se->id, NULL)) {
        free(se->tenant);
        free(se->labels);
        sc_buf_release(&se->strings);
        free(se);
        return SC_ENOMEM;
    }
    for (uint32_t i = 0; i < labels->n; i++) {
        se->names[i] = se->strings.data + offs[2 * (size_t)i];
        se->values[i] = se->strings.data + offs[2 * (size_t)i + 1];
    }
    s->next_series++;
    se->next = s->pseries;
    s->pseries = se;
    return se->id;
}

static int64_t kind_id_locked(struct sq_store *s, const char *profile, const char *types,
                              uint32_t ntypes)
{
    for (uint32_t i = 0; i < s->nkinds; i++)
        if (!strcmp(s->kinds[i].profile, profile) && !strcmp(s->kinds[i].types, types))
            return s->kinds[i].id;
    struct kind *k = realloc(s->kinds, (s->nkinds + 1) * sizeof *k);
    if (!k)
        return SC_ENOMEM;
    s->kinds = k;
    k = &s->kinds[s->nkinds];
    k->id = s->next_kind;
    k->profile = strdup(profile);
    k->types = strdup(types);
    k->ntypes = ntypes;
    k->committed = 0;
    if (!k->profile || !k->types) {
        free(k->profile);
        free(k->types);
        return SC_ENOMEM;
    }
    s->nkinds++;
    s->next_kind++;
    return k->id;
}

/* The statements of enum WST_*, in its order. */
static const char *const wst_sql[WST_N] = {
    "INSERT OR IGNORE INTO frames(id, hash, function, file, line, binary) VALUES(?,?,?,?,?,?)",
    "INSERT OR IGNORE INTO stacks(id, hash, frames, last_day) VALUES(?,?,?,?)",
    "UPDATE stacks SET last_day = max(last_day, ?) WHERE id = ?",
    "INSERT OR IGNORE INTO series(id, hash, tenant, labels) VALUES(?,?,?,?)",
    "INSERT OR IGNORE INTO series_labels(series_id, name, value) VALUES(?,?,?)",
    "INSERT OR IGNORE INTO kinds(id, profile, types) VALUES(?,?,?)",
    /* parenthesized: one literal in two lines, not two elements missing a comma */
    ("INSERT INTO profiles(series_id, kind_id, time_ns, duration_ns, period, timed, nsamples, "
     "totals, block) VALUES(?,?,?,?,?,?,?,?,?)"),
    "INSERT OR IGNORE INTO dirty(series_id, kind_id, res, bucket) VALUES(?,?,?,?)",
};

/* wdb's statement `which`, prepared on first use; NULL + err. wdb_mu held. */
static sqlite3_stmt *wst(struct sq_store *s, int which, char *err)
{
    if (!s->wst[which] && sqlite3_prepare_v3(s->wdb, wst_sql[which], -1, SQLITE_PREPARE_PERSISTENT,
                                             &s->wst[which], NULL) != SQLITE_OK) {
        sq_err(err, s->wdb, "writing profiles");
        s->wst[which] = NULL;
    }
    return s->wst[which];
}

int sq_mark_dirty(struct sq_store *s, int64_t series, int64_t kind, int64_t res, int64_t bucket,
                  char *err)
{
    sqlite3_stmt *st = wst(s, WST_DIRTY, err);
    if (!st)
        return SC_EIO;
    sqlite3_bind_int64(st, 1, series);
    sqlite3_bind_int64(st, 2, kind);
    sqlite3_bind_int64(st, 3, res);
    sqlite3_bind_int64(st, 4, bucket);
    int rc = sqlite3_step(st) == SQLITE_DONE ? 0 : sq_err(err, s->wdb, "marking a rollup");
    sqlite3_reset(st);
    return rc;
}

void sq_wdb_close(struct sq_store *s)
{
    for (int i = 0; i < WST_N; i++) {
        sqlite3_finalize(s->wst[i]);
        s->wst[i] = NULL;
    }
    sqlite3_close(s->wdb);
    s->wdb = NULL;
}

/* Inserts everything pending and the batch's profile rows in one transaction. */
static int commit_batch(struct sq_store *s, struct pend_write *batch, char *err)
{
    pthread_mutex_lock(&s->mu);
    struct pend_frame *pf = s->pframes;
    struct pend_stack *ps = s->pstacks;
    struct pend_series *pse = s->pseries;
    s->inflight_frames = s->pframes;
    s->inflight_stacks = s->pstacks;
    s->inflight_series = s->pseries;
    s->pframes = NULL;
    s->pstacks = NULL;
    s->pseries = NULL;
    struct touch *touch = s->touch;
    uint32_t ntouch = s->ntouch;
    s->touch = NULL;
    s->ntouch = s->touch_cap = 0;
    /* kinds not yet committed, copied so the lock can go */
    uint32_t nk = 0;
    struct kind *ks = calloc(s->nkinds + 1, sizeof *ks);
    for (uint32_t i = 0; ks && i < s->nkinds; i++)
        if (!s->kinds[i].committed)
            ks[nk++] = s->kinds[i];
    pthread_mutex_unlock(&s->mu);
    int rc = 0;
    if (!ks)
        rc = sc_errf(err, SC_ENOMEM, "out of memory");

    pthread_mutex_lock(&s->wdb_mu);
    sqlite3 *db = s->wdb;
    sqlite3_stmt *st = NULL;
    if (!rc)
        rc = sq_exec(db, "BEGIN IMMEDIATE", err);
#define PREP(which)                                                                                \
    do {                                                                                           \
        if (!rc && !(st = wst(s, which, err)))                                                     \
            rc = SC_EIO;                                                                           \
    } while (0)
#define STEP()                                                                                     \
    do {                                                                                           \
        if (!rc && sqlite3_step(st) != SQLITE_DONE)                                                \
            rc = sq_err(err, db, "writing profiles");                                              \
        sqlite3_reset(st);                                                                         \
    } while (0)
    PREP(WST_FRAME);
    for (struct pend_frame *f = pf; f && !rc; f = f->next) {
        sqlite3_bind_int64(st, 1, f->id);
        sqlite3_bind_int64(st, 2, (int64_t)f->hash);
        sqlite3_bind_text(st, 3, f->function, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 4, f->file, -1, SQLITE_STATIC);
        sqlite3_bind_int64(st, 5, f->line);
        sqlite3_bind_text(st, 6, f->binary, -1, SQLITE_STATIC);
        STEP();
    }
    PREP(WST_STACK);
    for (struct pend_stack *x = ps; x && !rc; x = x->next) {
        sqlite3_bind_int64(st, 1, x->id);
        sqlite3_bind_int64(st, 2, (int64_t)x->hash);
        sqlite3_bind_blob(st, 3, x->blob.data ? x->blob.data : "", (int)x->blob.len, SQLITE_STATIC);
        sqlite3_bind_int64(st, 4, x->day);
        STEP();
    }
    PREP(WST_TOUCH);
    for (uint32_t i = 0; i < ntouch && !rc; i++) {
        sqlite3_bind_int64(st, 1, touch[i].day);
        sqlite3_bind_int64(st, 2, touch[i].stack);
        STEP();
    }
    PREP(WST_SERIES);
    for (struct pend_series *x = pse; x && !rc; x = x->next) {
        sqlite3_bind_int64(st, 1, x->id);
        sqlite3_bind_int64(st, 2, (int64_t)x->hash);
        sqlite3_bind_text(st, 3, x->tenant, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 4, x->labels, -1, SQLITE_STATIC);
        STEP();
    }
    PREP(WST_SERIES_LABEL);
    for (struct pend_series *x = pse; x && !rc; x = x->next)
        for (uint32_t i = 0; i < x->npairs && !rc; i++) {
            sqlite3_bind_int64(st, 1, x->id);
            sqlite3_bind_text(st, 2, x->names[i], -1, SQLITE_STATIC);
            sqlite3_bind_text(st, 3, x->values[i], -1, SQLITE_STATIC);
            STEP();
        }
    PREP(WST_KIND);
    for (uint32_t i = 0; i < nk && !rc; i++) {
        sqlite3_bind_int64(st, 1, ks[i].id);
        sqlite3_bind_text(st, 2, ks[i].profile, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 3, ks[i].types, -1, SQLITE_STATIC);
        STEP();
    }
    PREP(WST_PROFILE);
    for (struct pend_write *w = batch; w && !rc; w = w->next) {
        sqlite3_bind_int64(st, 1, w->series_id);
        sqlite3_bind_int64(st, 2, w->kind_id);
        sqlite3_bind_int64(st, 3, w->time_ns);
        sqlite3_bind_int64(st, 4, w->duration_ns);
        sqlite3_bind_int64(st, 5, w->period);
        sqlite3_bind_int(st, 6, w->timed);
        sqlite3_bind_int64(st, 7, w->nsamples);
        sqlite3_bind_blob(st, 8, w->totals.data ? w->totals.data : "", (int)w->totals.len,
                          SQLITE_STATIC);
        sqlite3_bind_blob(st, 9, w->block.data ? w->block.data : "", (int)w->block.len,
                          SQLITE_STATIC);
        STEP();
    }
    PREP(WST_DIRTY);
    for (struct pend_write *w = batch; w && !rc; w = w->next) {
        int64_t secs = sc_floor_div(w->time_ns, SC_NS_PER_S);
        static const int res[3] = {SC_ROLLUP_SHORT, SC_ROLLUP_HOUR, SC_ROLLUP_DAY};
        for (int k = 0; k < 3 && !rc; k++) {
            sqlite3_bind_int64(st, 1, w->series_id);
            sqlite3_bind_int64(st, 2, w->kind_id);
            sqlite3_bind_int64(st, 3, res[k]);
            sqlite3_bind_int64(st, 4, sc_floor_div(secs, res[k]) * res[k]);
            STEP();
        }
    }
#undef PREP
#undef STEP
    if (!rc)
        rc = sq_exec(db, "COMMIT", err);
    if (rc)
        sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
    pthread_mutex_unlock(&s->wdb_mu);

    pthread_mutex_lock(&s->mu);
    s->inflight_frames = NULL;
    s->inflight_stacks = NULL;
    s->inflight_series = NULL;
    if (rc) {
        /* the days to record go back too; one that cannot must not stay said in touched
         * (see touch_stack): forgotten, later writes record their days again */
        for (uint32_t i = 0; i < ntouch; i++)
            if (sc_grow_array(&s->touch, &s->touch_cap, (uint64_t)s->ntouch + 1,
                              sizeof *s->touch) == 0)
                s->touch[s->ntouch++] = touch[i];
            else
                sc_map64_release(&s->touched);
        /* keep the new rows for the next commit: ids are already handed out */
        struct pend_frame **ft = &pf;
        while (*ft)
            ft = &(*ft)->next;
        *ft = s->pframes;
        s->pframes = pf;
        struct pend_stack **st2 = &ps;
        while (*st2)
            st2 = &(*st2)->next;
        *st2 = s->pstacks;
        s->pstacks = ps;
        struct pend_series **se = &pse;
        while (*se)
            se = &(*se)->next;
        *se = s->pseries;
        s->pseries = pse;
        pf = NULL;
        ps = NULL;
        pse = NULL;
    } else {
        for (uint32_t i = 0; i < nk; i++)
            for (uint32_t j = 0; j < s->nkinds; j++)
                if (s->kinds[j].id == ks[i].id)
                    s->kinds[j].committed = 1;
    }
    pthread_mutex_unlock(&s->mu);
    free(ks);
    free(touch);
    /* committed: the pending copies go */
    sq_free_pending(pf, ps, pse);
    return rc;
}

/* Queues the n writes of pws (all under one hold of qmu, so one batch takes them all: they
 * commit or fail together) and returns when the commit that includes them has finished. */
static int group_commit(struct sq_store *s, struct pend_write *pws, uint32_t n, char *err)
{
    pthread_mutex_lock(&s->qmu);
    for (uint32_t i = 0; i < n; i++) {
        pws[i].next = NULL;
        *s->qtail = &pws[i];
        s->qtail = &pws[i].next;
    }
    struct pend_write *pw = &pws[n - 1];
    while (!pw->done) {
        if (!s->leader) {
            s->leader = 1;
            struct pend_write *batch = s->queue;
            s->queue = NULL;
            s->qtail = &s->queue;
            pthread_mutex_unlock(&s->qmu);
            char berr[SC_ERR_LEN] = "";
            int rc = commit_batch(s, batch, berr);
            pthread_mutex_lock(&s->qmu);
            for (struct pend_write *w = batch; w;) {
                struct pend_write *next = w->next;
                w->rc = rc;
                memcpy(w->err, berr, SC_ERR_LEN);
                w->done = 1;
                w = next;
            }
            s->leader = 0;
            pthread_cond_broadcast(&s->qcond);
        } else {
            pthread_cond_wait(&s->qcond, &s->qmu);
        }
    }
    pthread_mutex_unlock(&s->qmu);
    if (pw->rc && err)
        memcpy(err, pw->err, SC_ERR_LEN);
    return pw->rc;
}

/* Makes wr's pending write: ids for its frames, stacks and series (new ones pending for
 * the next commit), its block and totals. gc_lock held for reading (see sqlite_int.h). */
static int prepare_write(struct sq_store *s, const struct sc_store_write *wr, struct pend_write *pw,
                         char *err)
{
    const struct sc_profile *p = wr->p;
    int rc = 0;
    struct sc_buf canon = SC_BUF_INIT, types = SC_BUF_INIT;
    memset(pw, 0, sizeof *pw);
    struct wctx w;
    memset(&w, 0, sizeof w);
    sc_labels_format(wr->labels, &canon);
    for (uint32_t i = 0; i < p->nsample_types; i++) {
        struct sc_str t = sc_profile_str(p, p->sample_types[i].type);
        struct sc_str u = sc_profile_str(p, p->sample_types[i].unit);
        if (i)
            sc_buf_putc(&types, ',');
        sc_buf_append(&types, t.ptr, t.len);
        sc_buf_putc(&types, '/');
        sc_buf_append(&types, u.ptr, u.len);
    }
    const char *tenant = sq_tenant(wr->tenant);
    if (canon.oom || types.oom) {
        rc = sc_errf(err, SC_ENOMEM, "out of memory");
        goto out;
    }
    uint64_t sh;
    if (sc_series_id(tenant, canon.data, canon.len, &sh)) {
        rc = sc_errf(err, SC_ENOMEM, "out of memory");
        goto out;
    }

    w.s = s;
    int64_t day = sq_day(wr->time_ns);
    w.day = day < 0 ? 0 : day > UINT32_MAX ? UINT32_MAX : (uint32_t)day;
    rc = sc_prep_profile(&w.x, p, wr->time_shift_ns, err);
    if (rc)
        goto out;
    w.timed = w.x.times != NULL;
    w.stacks = malloc(((size_t)w.x.n + 1) * sizeof *w.stacks);
    rc = w.stacks ? resolve_stacks(&w) : SC_ENOMEM;
    if (rc) {
        if (rc != SC_EFORMAT)
            rc = sc_errf(err, rc, "storing stacks: %s", sc_strerror(rc));
        goto out;
    }
    rc = build_block(&w, pw, err);
    if (rc)
        goto out;
    pthread_mutex_lock(&s->mu);
    int64_t sid = series_id_locked(s, tenant, wr->labels, canon.data, sh);
    int64_t kid = sid < 0 ? sid : kind_id_locked(s, wr->profile, types.data, p->nsample_types);
    pthread_mutex_unlock(&s->mu);
    if (sid < 0 || kid < 0) {
        rc = sc_errf(err, SC_ENOMEM, "out of memory");
        goto out;
    }
    pw->series_id = (uint32_t)sid;
    pw->kind_id = (uint32_t)kid;
    pw->time_ns = wr->time_ns;
    pw->duration_ns = wr->duration_ns;
    pw->period = p->period;
    pw->timed = w.timed;
out:
    sc_buf_release(&canon);
    sc_buf_release(&types);
    sc_prep_release(&w.x);
    free(w.stacks);
    return rc;
}

int sq_write_many(struct sc_store *sto, const struct sc_store_write *ws, uint32_t n, char *err)
{
    struct sq_store *s = (struct sq_store *)sto;
    if (n == 0)
        return 0;
    for (uint32_t i = 0; i < n; i++) {
        int rc = sc_prep_check(&ws[i], err);
        if (rc)
            return rc;
    }
    struct pend_write one = {0};
    struct pend_write *arr = n == 1 ? &one : calloc(n, sizeof *arr);
    if (!arr)
        return sc_errf(err, SC_ENOMEM, "out of memory");
    /* from the first id to the commit: the collector waits (see sqlite_int.h) */
    pthread_rwlock_rdlock(&s->gc_lock);
    int rc = 0;
    for (uint32_t i = 0; rc == 0 && i < n; i++)
        rc = prepare_write(s, &ws[i], &arr[i], err);
    /* all in one transaction: a push split into series is stored whole or not at all */
    if (rc == 0)
        rc = group_commit(s, arr, n, err);
    pthread_rwlock_unlock(&s->gc_lock);
    for (uint32_t i = 0; i < n; i++) {
        sc_buf_release(&arr[i].totals);
        sc_buf_release(&arr[i].block);
    }
    if (arr != &one)
        free(arr);
    return rc;
}

int sq_write(struct sc_store *sto, const struct sc_store_write *wr, char *err)
{
    return sq_write_many(sto, wr, 1, err);
}
