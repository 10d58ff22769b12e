/* sqlite_compact.c - the embedded backend's upkeep: rollups, retention, the background. */
#include "store/sqlite_int.h"
#include "model/clock.h"
#include "model/error.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- compaction and retention ---- */

/* Binds v[0..n-1] to parameters 1..n: SQLITE_OK, or the first failure's code. */
static int bind_ints(sqlite3_stmt *st, const int64_t *v, int n)
{
    for (int i = 0; i < n; i++) {
        int code = sqlite3_bind_int64(st, i + 1, v[i]);
        if (code != SQLITE_OK)
            return code;
    }
    return SQLITE_OK;
}

/* Recomputes one rollup from the level below; wdb_mu held, inside a transaction. A block
 * below that cannot be read (damaged since it was written) is counted in *bad and said in
 * s->bad_why. A damaged profile is left out. A damaged rollup below is marked to be rebuilt
 * from its own level below, and this one is then left to a later round: 1 (it stays dirty,
 * and waits for the one below as always). 0 when rebuilt, or SC_E*. */
static int rollup_one(struct sq_store *s, int64_t series, int64_t kind, int64_t res, int64_t bucket,
                      uint32_t *bad, char *err)
{
    sqlite3 *db = s->wdb;
    sqlite3_stmt *st = NULL;
    int rc = 0;
    if (res == SC_ROLLUP_SHORT)
        rc = sqlite3_prepare_v2(db,
                                "SELECT block, 1, duration_ns, time_ns FROM profiles WHERE "
                                "series_id=? AND kind_id=? AND time_ns >= ? AND time_ns < ? "
                                "ORDER BY time_ns",
                                -1, &st, NULL);
    else
        rc = sqlite3_prepare_v2(db,
                                "SELECT block, nprofiles, duration_ns, bucket FROM rollups WHERE "
                                "series_id=? AND kind_id=? AND res=? AND bucket >= ? AND "
                                "bucket < ?",
                                -1, &st, NULL);
    if (rc != SQLITE_OK)
        return sq_err(err, db, "compacting");
    /* an hour from its ten minutes, a day from its hours */
    int64_t lower = res == SC_ROLLUP_DAY ? SC_ROLLUP_HOUR : SC_ROLLUP_SHORT;
    int64_t raw[4] = {series, kind, bucket * SC_NS_PER_S, (bucket + res) * SC_NS_PER_S};
    int64_t rolled[5] = {series, kind, lower, bucket, bucket + res};
    if ((res == SC_ROLLUP_SHORT ? bind_ints(st, raw, 4) : bind_ints(st, rolled, 5)) != SQLITE_OK) {
        rc = sq_err(err, db, "compacting: reading the level below");
        sqlite3_finalize(st);
        return rc;
    }
    struct sc_block all = {.format = SC_BLOCK_AGG};
    uint32_t cap = 0, ncols = 0;
    /* a rollup keeps captures (store_int.h), not profiles: nprofiles counts them and
     * duration_ns is the time they cover */
    struct sc_captures caps = {0};
    rc = 0;
    int deferred = 0;
    /* a step that fails ends the loop with rc set: no rollup is made of a part of it */
    while (rc == 0 && sq_step(st, &rc, "compacting: reading the level below", err) == SQLITE_ROW) {
        struct sc_block b;
        char why[SC_ERR_LEN];
        rc =
            sq_block_load(sqlite3_column_blob(st, 0), (size_t)sqlite3_column_bytes(st, 0), &b, why);
        if (rc == 0 && ncols && b.ncols != ncols) {
            sc_block_release(&b);
            rc = sc_errf(why, SC_EFORMAT, "blocks of one kind with different columns");
        }
        if (rc == SC_EFORMAT) {
            /* failing the whole batch would stop every rollup (and retention after them)
             * on this block for good */
            int64_t below = res == SC_ROLLUP_SHORT ? 0 : sqlite3_column_int64(st, 3);
            (*bad)++;
            sc_errf(s->bad_why, SC_EFORMAT,
                    "%s rollup (series %lld, kind %lld, bucket %lld) met a damaged %s: %s%s",
                    res == SC_ROLLUP_SHORT  ? "a ten-minute"
                    : res == SC_ROLLUP_HOUR ? "an hour"
                                            : "a day",
                    (long long)series, (long long)kind, (long long)bucket,
                    res == SC_ROLLUP_SHORT ? "profile" : "rollup below it", why,
                    res == SC_ROLLUP_SHORT ? " (left out)" : " (that one is rebuilt first)");
            rc = res == SC_ROLLUP_SHORT ? 0 : sq_mark_dirty(s, series, kind, lower, below, err);
            deferred |= res != SC_ROLLUP_SHORT;
            continue;
        }
        if (rc) {
            sc_errf(err, rc, "%s", why);
            break;
        }
        if (deferred) {
            sc_block_release(&b);
            continue;
        }
        if (res == SC_ROLLUP_SHORT) {
            sc_captures_add(&caps, sqlite3_column_int64(st, 3), sqlite3_column_int64(st, 2));
        } else {
            caps.n += sqlite3_column_int64(st, 1);
            caps.covered_ns += sqlite3_column_int64(st, 2);
        }
        if (ncols == 0)
            ncols = b.ncols;
        /* append rows row-major into a growing row buffer, normalized at the end */
        const struct sc_grow_part cols[] = {SC_GROW_PART(all.stacks),
                                            {&all.values, ncols * sizeof *all.values}};
        int grc = sc_grow_arrays(&cap, (uint64_t)all.n + b.n, -1, cols, 2);
        if (grc) {
            sc_block_release(&b);
            rc = sc_errf(err, grc, "%s",
                         grc == SC_ELIMIT ? "too many rows to compact at once" : "out of memory");
            break;
        }
        for (uint32_t r = 0; r < b.n; r++) {
            all.stacks[all.n + r] = b.stacks[r];
            for (uint32_t c = 0; c < ncols; c++)
                all.values[(size_t)(all.n + r) * ncols + c] = b.values[(size_t)c * b.n + r];
        }
        all.n += b.n;
        sc_block_release(&b);
    }
    sqlite3_finalize(st);
    st = NULL;
    if (rc == 0 && deferred) {
        sc_block_release(&all);
        return 1;
    }
    int64_t key[4] = {series, kind, res, bucket};
    if (rc == 0 && caps.n == 0) {
        /* nothing left (retention): no rollup row. A failure fails the batch, which is
         * rolled back and tried again: the bucket stays dirty, its stale rollup is not
         * left behind as if rebuilt. */
        if (sqlite3_prepare_v2(db,
                               "DELETE FROM rollups WHERE series_id=? AND kind_id=? AND res=? AND "
                               "bucket=?",
                               -1, &st, NULL) != SQLITE_OK ||
            bind_ints(st, key, 4) != SQLITE_OK || sqlite3_step(st) != SQLITE_DONE)
            rc = sq_err(err, db, "compacting: deleting an emptied rollup");
    } else if (rc == 0) {
        /* row-major to column-major, then sort and sum */
        int64_t *cm = malloc(((size_t)all.n * ncols + 1) * sizeof *cm);
        if (!cm) {
            rc = sc_errf(err, SC_ENOMEM, "out of memory");
        } else {
            for (uint32_t r = 0; r < all.n; r++)
                for (uint32_t c = 0; c < ncols; c++)
                    cm[(size_t)c * all.n + r] = all.values[(size_t)r * ncols + c];
            free(all.values);
            all.values = cm;
            all.ncols = ncols;
            rc = sc_block_normalize(&all);
        }
        struct sc_buf enc = SC_BUF_INIT, tot = SC_BUF_INIT;
        if (rc == 0)
            rc = sc_block_encode(&all, &enc, s->base.opts.zstd_level);
        for (uint32_t c = 0; rc == 0 && c < ncols; c++) {
            int64_t t = 0;
            for (uint32_t r = 0; r < all.n; r++)
                t = sc_add_sat(t, all.values[(size_t)c * all.n + r]);
            sc_put_uvarint(&tot, sc_zigzag(t));
        }
        if (rc == 0 && (tot.oom || enc.oom))
            rc = sc_errf(err, SC_ENOMEM, "out of memory");
        if (rc == 0 && (tot.len > INT_MAX || enc.len > INT_MAX))
            rc = sc_errf(err, SC_ELIMIT, "a rollup of %zu bytes is too large to write", enc.len);
        if (rc == 0 &&
            (sqlite3_prepare_v2(db, "INSERT OR REPLACE INTO rollups VALUES(?,?,?,?,?,?,?,?)", -1,
                                &st, NULL) != SQLITE_OK ||
             bind_ints(st, key, 4) != SQLITE_OK || sqlite3_bind_int64(st, 5, caps.n) != SQLITE_OK ||
             sqlite3_bind_blob(st, 6, tot.data ? tot.data : "", (int)tot.len, SQLITE_STATIC) !=
                 SQLITE_OK ||
             sqlite3_bind_blob(st, 7, enc.data ? enc.data : "", (int)enc.len, SQLITE_STATIC) !=
                 SQLITE_OK ||
             sqlite3_bind_int64(st, 8, caps.covered_ns) != SQLITE_OK ||
             sqlite3_step(st) != SQLITE_DONE))
            rc = sq_err(err, db, "compacting: writing a rollup");
        sc_buf_release(&enc);
        sc_buf_release(&tot);
    }
    sqlite3_finalize(st);
    sc_block_release(&all);
    return rc;
}

int sq_compact_batch(struct sq_store *s, int64_t res, int64_t cutoff, int64_t slice_ns, int *done,
                     int64_t *held_ns, char *err)
{
    enum { BATCH = 256 };
    int64_t lower = res == SC_ROLLUP_DAY ? SC_ROLLUP_HOUR : SC_ROLLUP_SHORT;
    const char *sql =
        res == SC_ROLLUP_SHORT
            ? "SELECT series_id, kind_id, bucket FROM dirty WHERE res=? AND bucket < ? LIMIT 256"
            : "SELECT d.series_id, d.kind_id, d.bucket FROM dirty d WHERE d.res=? AND "
              "d.bucket < ? AND NOT EXISTS (SELECT 1 FROM dirty m WHERE "
              "m.series_id=d.series_id AND m.kind_id=d.kind_id AND m.res=? AND "
              "m.bucket >= d.bucket AND m.bucket < d.bucket + ?) LIMIT 64";
    *done = 0;
    *held_ns = 0;
    int64_t(*rows)[3] = malloc(BATCH * sizeof *rows);
    if (!rows)
        return sc_errf(err, SC_ENOMEM, "out of memory");
    pthread_mutex_lock(&s->wdb_mu);
    int64_t start = sc_mono_ns();
    sqlite3 *db = s->wdb;
    sqlite3_stmt *st = NULL;
    int nrows = 0;
    int rc = sq_exec(db, "BEGIN IMMEDIATE", err);
    if (rc == 0 && sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
        rc = sq_err(err, db, "compacting");
    int64_t args[4] = {res, cutoff, lower, res};
    if (rc == 0 && bind_ints(st, args, res == SC_ROLLUP_SHORT ? 2 : 4) != SQLITE_OK)
        rc = sq_err(err, db, "compacting");
    if (rc == 0) {
        while (nrows < BATCH &&
               sq_step(st, &rc, "compacting: finding dirty buckets", err) == SQLITE_ROW) {
            rows[nrows][0] = sqlite3_column_int64(st, 0);
            rows[nrows][1] = sqlite3_column_int64(st, 1);
            rows[nrows][2] = sqlite3_column_int64(st, 2);
            nrows++;
        }
    }
    sqlite3_finalize(st);
    st = NULL;
    if (rc == 0 && sqlite3_prepare_v2(db,
                                      "DELETE FROM dirty WHERE series_id=? AND kind_id=? AND "
                                      "res=? AND bucket=?",
                                      -1, &st, NULL) != SQLITE_OK)
        rc = sq_err(err, db, "compacting");
    uint32_t bad = 0;
    int n = 0;
    for (; n < nrows && rc == 0; n++) {
        if (n > 0 && slice_ns > 0 && sc_mono_ns() - start >= slice_ns)
            break;
        int64_t *row = rows[n];
        rc = rollup_one(s, row[0], row[1], res, row[2], &bad, err);
        if (rc == 1) { /* waits for the rollup below it, marked just now */
            rc = 0;
            continue;
        }
        if (rc)
            break;
        int64_t key[4] = {row[0], row[1], res, row[2]};
        if (bind_ints(st, key, 4) != SQLITE_OK || sqlite3_step(st) != SQLITE_DONE)
            rc = sq_err(err, db, "compacting: clearing a dirty bucket");
        sqlite3_reset(st); /* its code is the step's, handled just above */
    }
    sqlite3_finalize(st);
    if (rc == 0)
        rc = sq_exec(db, "COMMIT", err);
    else /* the first failure is the one reported; one that ended the transaction already
            leaves ROLLBACK nothing to do, and its error says only that */
        (void)sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
    if (rc == 0) /* counted once it is done: a rolled-back batch meets them again */
        s->bad_blocks += bad;
    *held_ns = sc_mono_ns() - start;
    pthread_mutex_unlock(&s->wdb_mu);
    free(rows);
    *done = n;
    return rc;
}

/* Runs one statement with an int64 parameter (bound to every '?') under wdb_mu; the
 * number of rows changed, or a negative SC_E*. */
static int64_t run1(struct sq_store *s, const char *sql, int64_t v, char *err)
{
    pthread_mutex_lock(&s->wdb_mu);
    sqlite3_stmt *st;
    int64_t changed;
    if (sqlite3_prepare_v2(s->wdb, sql, -1, &st, NULL) != SQLITE_OK) {
        changed = sq_err(err, s->wdb, "applying retention");
    } else {
        int code = SQLITE_OK;
        for (int i = 1; code == SQLITE_OK && i <= sqlite3_bind_parameter_count(st); i++)
            code = sqlite3_bind_int64(st, i, v);
        changed = code == SQLITE_OK && sqlite3_step(st) == SQLITE_DONE
                      ? sqlite3_changes(s->wdb)
                      : sq_err(err, s->wdb, "applying retention");
        sqlite3_finalize(st);
    }
    pthread_mutex_unlock(&s->wdb_mu);
    return changed;
}

/* The background thread's pacing: after a step that held the writer for held_ns, leaves
 * it to pushes as long again, and then until the checkpointer has copied what the step
 * wrote (a step's thousands of pages, one after another, would keep the WAL from ever
 * being wholly copied when a commit begins, so from starting over, and a checkpoint
 * would then hold the writer; see sq_ckpt_settle). bg NULL: called, not paced. 1 when the
 * thread is being stopped, so the work should end here. */
static int pace(struct sq_store *s, struct sc_store_bg *bg, int64_t held_ns)
{
    if (!bg)
        return 0;
    if (sc_store_bg_pause(bg, held_ns))
        return 1;
    sq_ckpt_settle(s, SQ_CKPT_SETTLE_NS);
    return 0;
}

/* Retention: profiles older than cutoff (ns) go in batches (paced as pace() says), rollups
 * wholly before it go, and rollups that straddle it are rebuilt from what is left. Returns
 * the profiles deleted, or a negative SC_E*. */
static int64_t retain(struct sq_store *s, int64_t cutoff, struct sc_store_bg *bg, char *err)
{
    int64_t total = 0;
    for (;;) {
        int64_t start = sc_mono_ns();
        int64_t n = run1(s,
                         "DELETE FROM profiles WHERE id IN (SELECT id FROM profiles "
                         "WHERE time_ns < ? LIMIT 2000)",
                         cutoff, err);
        if (n < 0)
            return n;
        total += n;
        /* when the thread is being stopped, the rest goes next time; what was deleted
         * still has its rollups mended below */
        if (n == 0 || pace(s, bg, sc_mono_ns() - start))
            break;
    }
    int64_t n = run1(s, "DELETE FROM rollups WHERE (bucket + res) * 1000000000 <= ?", cutoff, err);
    if (n >= 0 && total > 0)
        n = run1(s,
                 "INSERT OR IGNORE INTO dirty SELECT series_id, kind_id, res, bucket FROM rollups "
                 "WHERE bucket * 1000000000 < ? AND (bucket + res) * 1000000000 > ?",
                 cutoff, err);
    if (n >= 0)
        n = run1(s, "DELETE FROM dirty WHERE (bucket + res) * 1000000000 <= ?", cutoff, err);
    return n < 0 ? n : total;
}

/* ---- garbage collection after retention ----
 *
 * Stacks no profile has used since before the cutoff's day (stacks.last_day, recorded by
 * writes) go, then frames no stack uses, then series without profiles or rollups. It all
 * happens in steps: each holds the writers off (gc_lock exclusively, so no write in flight
 * holds an id a step deletes) for one slice at most, deletes in one transaction, empties
 * the id caches the step made stale, and lets the writers go for as long again (pace).
 * A push never waits for more than a step: holding the writers through the whole of it
 * made one wait 4.1 s for 200,000 stacks (bench/gc_bench.c).
 *
 * Frames are judged against a bitmap of the frames stacks use, marked without holding
 * anyone off: every stack below the next stack id as of each step's start (pending ones
 * from memory, committed ones read in chunks on a reader connection), then, with the
 * writers held off, the few made since. A frame made after the first mark is never judged
 * this time. */

#define GC_STR_(x) #x
#define GC_STR(x) GC_STR_(x)

/* A frame-marking chunk of stacks read in one statement on the reader. */
#define GC_MARK_CHUNK 8192u
/* Rows one statement of a step deletes (stacks), or ids it judges (frames, series). */
#define GC_STACKS_PER_STMT 256
#define GC_FRAMES_PER_STMT 400u
#define GC_SERIES_PER_STMT 512u

struct gc {
    struct sq_store *s;
    struct sc_store_bg *bg;
    int64_t start; /* the step's: when the writers were held off */
    int64_t day;   /* stacks last used before it go */
    int64_t gone;  /* rows deleted */
    uint8_t *used; /* a bit a frame id below nframes: a stack uses it */
    uint32_t nframes;
    uint32_t marked;           /* stacks below this id have their frames marked */
    uint32_t cursor;           /* the next frame or series id to judge */
    uint32_t nstacks, nseries; /* the next ids when the collection began */
    int64_t commit_row_ns;     /* what a deleted row cost the last step's commit (0: unknown) */
};

/* Marks the frames the given stack blob uses. */
static void mark_frames(struct gc *g, const uint8_t *p, const uint8_t *end)
{
    while (p < end) {
        uint64_t v;
        if (sc_get_uvarint(&p, end, &v))
            return;
        uint64_t fid = v >> 1;
        if (fid < g->nframes)
            g->used[fid / 8] |= (uint8_t)(1u << (fid % 8));
    }
}

/* Marks the stacks not committed yet (pending, or in a commit's flight) and returns the
 * next stack id as of now; mu held. */
static uint32_t mark_pending(struct gc *g)
{
    struct sq_store *s = g->s;
    struct pend_stack *lists[2] = {s->pstacks, s->inflight_stacks};
    for (int k = 0; k < 2; k++)
        for (struct pend_stack *x = lists[k]; x; x = x->next)
            mark_frames(g, (const uint8_t *)x->blob.data,
                        (const uint8_t *)x->blob.data + x->blob.len);
    return s->next_stack;
}

/* Marks the committed stacks with ids in [lo, hi) read through db. 0 or SC_E*. */
static int mark_committed(struct gc *g, sqlite3 *db, uint32_t lo, uint32_t hi, char *err)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db, "SELECT frames FROM stacks WHERE id >= ? AND id < ?", -1, &st,
                           NULL) != SQLITE_OK)
        return sq_err(err, db, "collecting frames");
    int64_t range[2] = {lo, hi};
    if (bind_ints(st, range, 2) != SQLITE_OK) {
        int rc = sq_err(err, db, "collecting frames");
        sqlite3_finalize(st);
        return rc;
    }
    int step;
    while ((step = sqlite3_step(st)) == SQLITE_ROW) {
        const uint8_t *p = sqlite3_column_blob(st, 0);
        mark_frames(g, p, p + sqlite3_column_bytes(st, 0));
    }
    int rc = step == SQLITE_DONE ? 0 : sq_err(err, db, "collecting frames");
    sqlite3_finalize(st);
    return rc;
}

/* One statement's worth of a step's deletions, inside the step's transaction (wdb_mu
 * held): the rows deleted (>= 0) with *done set once nothing is left, or SC_E*. */
typedef int64_t (*gc_fn)(struct gc *g, int *done, char *err);

/* Whether a step that began at g->start and has deleted n rows may run another statement:
 * its commit, at the last step's cost a row, must still fit in the slice. The commit is
 * most of a step (rows spread over the hash indexes dirty a page each, and the WAL's
 * checkpoint copies them), so the first step, knowing no cost yet, runs one statement. */
static int gc_slice_left(const struct gc *g, int64_t n)
{
    if (g->s->gc_hook || g->commit_row_ns == 0)
        return 0;
    return sc_mono_ns() - g->start + n * g->commit_row_ns < SQ_COMPACT_SLICE_NS;
}

/* Runs fn in steps until it is done: 0, 1 when the background thread is being stopped
 * (the rest is left for the next collection), or SC_E*. forget: the id caches (a bit per
 * IDQ_*) that rows deleted make stale. Before each step, before (when given) runs with the
 * writers going on, then pre (when given) with them held off, before the transaction. */
static int gc_steps(struct gc *g, int (*before)(struct gc *, char *),
                    int (*pre)(struct gc *, char *), gc_fn fn, unsigned forget, char *err)
{
    struct sq_store *s = g->s;
    for (int done = 0; !done;) {
        int brc = before ? before(g, err) : 0;
        if (brc)
            return brc;
        if (before && s->gc_hook) /* writes between the two marks, for the test */
            s->gc_hook(s->gc_hook_ctx);
        pthread_rwlock_wrlock(&s->gc_lock);
        g->start = sc_mono_ns();
        int64_t n = 0;
        int rc = pre ? pre(g, err) : 0;
        pthread_mutex_lock(&s->wdb_mu);
        if (rc == 0)
            rc = sq_exec(s->wdb, "BEGIN IMMEDIATE", err);
        if (rc == 0) {
            do {
                int64_t k = fn(g, &done, err);
                if (k < 0)
                    rc = (int)k;
                else
                    n += k;
            } while (rc == 0 && !done && gc_slice_left(g, n));
            int64_t tc = sc_mono_ns();
            if (rc == 0)
                rc = sq_exec(s->wdb, "COMMIT", err);
            if (rc) /* its own failure says nothing more (as in sq_compact_batch) */
                (void)sqlite3_exec(s->wdb, "ROLLBACK", NULL, NULL, NULL);
            else if (n > 0)
                g->commit_row_ns = (sc_mono_ns() - tc) / n + 1;
        }
        pthread_mutex_unlock(&s->wdb_mu);
        /* rows went (or may have, in a transaction that failed late): their ids leave the
         * caches before any writer may look again */
        if (n > 0) {
            g->gone += rc == 0 ? n : 0;
            pthread_mutex_lock(&s->mu);
            sq_ids_forget(s, forget);
            pthread_mutex_unlock(&s->mu);
        }
        int64_t held = sc_mono_ns() - g->start;
        pthread_rwlock_unlock(&s->gc_lock);
        if (rc)
            return rc;
        if (s->gc_hook)
            s->gc_hook(s->gc_hook_ctx);
        if (pace(g->s, g->bg, held))
            return 1;
    }
    return 0;
}

/* Runs sql with its parameters bound to a, b (as many as it has) on the writer: the rows it
 * changed, or SC_E*; wdb_mu held. */
static int64_t gc_run(struct sq_store *s, const char *sql, int64_t a, int64_t b, char *err)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(s->wdb, sql, -1, &st, NULL) != SQLITE_OK)
        return sq_err(err, s->wdb, "collecting garbage");
    int64_t v[2] = {a, b};
    int np = sqlite3_bind_parameter_count(st);
    int64_t n = bind_ints(st, v, np < 2 ? np : 2) == SQLITE_OK && sqlite3_step(st) == SQLITE_DONE
                    ? sqlite3_changes(s->wdb)
                    : sq_err(err, s->wdb, "collecting garbage");
    sqlite3_finalize(st);
    return n;
}

/* Deletes stacks last used before g->day, among those that existed when the collection
 * began (stacks made since, even for an old day, wait for the next one: the work is
 * bounded). */
static int64_t gc_stacks(struct gc *g, int *done, char *err)
{
    int64_t n = gc_run(g->s,
                       "DELETE FROM stacks WHERE id IN (SELECT id FROM stacks WHERE last_day < ?1 "
                       "AND id < ?2 LIMIT " GC_STR(GC_STACKS_PER_STMT) ")",
                       g->day, g->nstacks, err);
    *done = n < GC_STACKS_PER_STMT;
    return n;
}

/* A deleting step's start: the stacks made since the last mark (the writers held off, so
 * every one is committed or pending). */
static int gc_frames_pre(struct gc *g, char *err)
{
    pthread_mutex_lock(&g->s->mu);
    uint32_t next = mark_pending(g);
    pthread_mutex_unlock(&g->s->mu);
    int rc = 0;
    if (next > g->marked) {
        pthread_mutex_lock(&g->s->wdb_mu);
        rc = mark_committed(g, g->s->wdb, g->marked, next, err);
        pthread_mutex_unlock(&g->s->wdb_mu);
    }
    if (rc == 0)
        g->marked = next;
    return rc;
}

/* Deletes the unmarked frames among the next GC_FRAMES_PER_STMT ids. */
static int64_t gc_frames(struct gc *g, int *done, char *err)
{
    char sql[64 + GC_FRAMES_PER_STMT * 11];
    int o = snprintf(sql, sizeof sql, "DELETE FROM frames WHERE id IN (");
    uint32_t k = 0, end = g->cursor + GC_FRAMES_PER_STMT;
    for (; g->cursor < g->nframes && g->cursor < end; g->cursor++)
        if (!(g->used[g->cursor / 8] & (1u << (g->cursor % 8))))
            o += snprintf(sql + o, sizeof sql - (size_t)o, "%s%u", k++ ? "," : "", g->cursor);
    snprintf(sql + o, sizeof sql - (size_t)o, ")");
    *done = g->cursor >= g->nframes;
    return k ? gc_run(g->s, sql, 0, 0, err) : 0;
}

/* Deletes the series among the next GC_SERIES_PER_STMT ids that have no profile or rollup,
 * and their labels. */
static int64_t gc_series(struct gc *g, int *done, char *err)
{
    int64_t lo = g->cursor, hi = lo + GC_SERIES_PER_STMT;
    g->cursor = hi < g->nseries ? (uint32_t)hi : g->nseries;
    *done = g->cursor >= g->nseries;
    int64_t n = gc_run(g->s,
                       "DELETE FROM series WHERE id >= ?1 AND id < ?2 AND NOT EXISTS (SELECT 1 "
                       "FROM profiles WHERE series_id = series.id) AND NOT EXISTS (SELECT 1 FROM "
                       "rollups WHERE series_id = series.id)",
                       lo, hi, err);
    int64_t labels = n <= 0 ? 0
                            : gc_run(g->s,
                                     "DELETE FROM series_labels WHERE series_id >= ?1 AND "
                                     "series_id < ?2 AND series_id NOT IN (SELECT id FROM series "
                                     "WHERE id >= ?1 AND id < ?2)",
                                     lo, hi, err);
    return labels < 0 ? labels : n;
}

/* Marks the frames of every stack from g->marked to the next stack id as of now, the writers
 * going on meanwhile: pending stacks from memory (every id below that is then committed or
 * marked), committed ones in chunks on a reader connection (paced like the steps). 0, 1 when
 * being stopped, or SC_E*. The first call makes the bitmap of the frames there are. */
static int gc_mark(struct gc *g, char *err)
{
    struct sq_store *s = g->s;
    pthread_mutex_lock(&s->mu);
    if (!g->used) {
        g->nframes = s->next_frame;
        g->used = calloc(g->nframes / 8 + 1, 1);
    }
    uint32_t next = g->used ? mark_pending(g) : 0;
    pthread_mutex_unlock(&s->mu);
    if (!g->used)
        return sc_errf(err, SC_ENOMEM, "out of memory");
    if (next <= g->marked)
        return 0;
    struct conn *c = sq_conn_get(s, err);
    if (!c)
        return SC_EIO;
    int rc = 0;
    for (uint32_t lo = g->marked; rc == 0 && lo < next; lo += GC_MARK_CHUNK) {
        int64_t start = sc_mono_ns();
        uint32_t hi = next - lo > GC_MARK_CHUNK ? lo + GC_MARK_CHUNK : next;
        rc = mark_committed(g, c->db, lo, hi, err);
        if (rc == 0 && pace(g->s, g->bg, sc_mono_ns() - start))
            rc = 1;
    }
    sq_conn_put(s, c);
    if (rc == 0)
        g->marked = next;
    return rc;
}

/* Garbage collection (see above) as of cutoff: 0 when done, 1 when stopped by the
 * background thread's stop (s->gc_frames_due keeps the frames for next time), or SC_E*;
 * *gone counts the rows deleted. */
static int collect(struct sq_store *s, int64_t cutoff, struct sc_store_bg *bg, int64_t *gone,
                   char *err)
{
    struct gc g = {.s = s, .bg = bg};
    g.day = sq_day(cutoff) - 1; /* a day of margin: days are recorded per profile */
    pthread_mutex_lock(&s->mu);
    g.nstacks = s->next_stack;
    g.nseries = s->next_series;
    pthread_mutex_unlock(&s->mu);
    int rc = gc_steps(&g, NULL, NULL, gc_stacks, 1u << IDQ_STACK, err);
    if (g.gone > 0)
        s->gc_frames_due = 1;
    if (rc == 0 && s->gc_frames_due) {
        /* each step first marks the stacks made meanwhile with the writers going on, so
         * that what is left to mark with them held off is what the last moment made */
        g.cursor = 1;
        rc = gc_steps(&g, gc_mark, gc_frames_pre, gc_frames, 1u << IDQ_FRAME, err);
        if (rc == 0)
            s->gc_frames_due = 0;
    }
    free(g.used);
    if (rc == 0) {
        g.cursor = 0;
        rc = gc_steps(&g, NULL, NULL, gc_series, 1u << IDQ_SERIES, err);
    }
    if (g.gone > 0) {
        pthread_mutex_lock(&s->mu);
        sc_map64_release(&s->touched);
        pthread_mutex_unlock(&s->mu);
    }
    *gone = g.gone;
    return rc;
}

/* Gives freed pages back to the file system, a few megabytes per transaction (paced as
 * pace() says). 0 when done, 1 when stopped before, or SC_E*. */
static int vacuum(struct sq_store *s, struct sc_store_bg *bg, char *err)
{
    for (int i = 0; i < 10000; i++) {
        pthread_mutex_lock(&s->wdb_mu);
        int64_t start = sc_mono_ns();
        sqlite3_stmt *st;
        int64_t freelist = 0;
        int rc = 0;
        if (sqlite3_prepare_v2(s->wdb, "PRAGMA freelist_count", -1, &st, NULL) != SQLITE_OK) {
            rc = sq_err(err, s->wdb, "vacuuming: reading the free pages' count");
        } else {
            if (sq_step(st, &rc, "vacuuming: reading the free pages' count", err) == SQLITE_ROW)
                freelist = sqlite3_column_int64(st, 0);
            sqlite3_finalize(st);
        }
        if (rc == 0 && freelist > 0)
            rc = sq_exec(s->wdb, "PRAGMA incremental_vacuum(1024)", err);
        int64_t held = sc_mono_ns() - start;
        pthread_mutex_unlock(&s->wdb_mu);
        if (rc || freelist == 0)
            return rc;
        if (pace(s, bg, held))
            return 1;
    }
    return 0;
}

int sq_compact_run(struct sq_store *s, int64_t now, int force, struct sc_store_bg *bg, char *err)
{
    int rc = 0;
    /* retention first: it deletes profiles and marks the rollups that straddle its cutoff
     * dirty, and the rollups below rebuild those (or drop them, when nothing is left) before
     * the collection judges which series still have any; the other way round, a series
     * whose last rollup straddled the cutoff outlived its data by the hour between two
     * collections (it did whenever its day began within the last ten minutes before it) */
    int64_t cutoff = now - s->base.opts.retention_ns;
    if (s->base.opts.retention_ns > 0) {
        int64_t deleted = retain(s, cutoff, bg, err);
        if (deleted < 0)
            return (int)deleted;
        if (deleted > 0)
            s->gc_due = s->vacuum_due = 1;
        if (pace(s, bg, 0))
            return 0; /* being stopped */
    }
    /* ten minutes first, then hours whose ten minutes are clean, then days whose hours
     * are; batches keep each write transaction short so ingest is never blocked long */
    static const int64_t levels[] = {SC_ROLLUP_SHORT, SC_ROLLUP_HOUR, SC_ROLLUP_DAY};
    for (size_t level = 0; level < 3 && rc == 0; level++) {
        int64_t res = levels[level];
        int64_t upto = force ? INT64_MAX / SC_NS_PER_S : sc_floor_div(now, SC_NS_PER_S) - res - 60;
        int done;
        int64_t held;
        do {
            rc = sq_compact_batch(s, res, upto, bg ? SQ_COMPACT_SLICE_NS : 0, &done, &held, err);
            if (rc == 0 && done > 0 && pace(s, bg, held))
                return 0;
        } while (rc == 0 && done > 0);
    }
    if (rc == 0 && s->base.opts.retention_ns > 0) {
        /* collecting scans every stack and series: at most hourly unless forced, and only
         * once retention took something since the last time */
        if ((s->gc_due || force) && (force || now - s->last_gc_ns >= 3600 * SC_NS_PER_S)) {
            s->last_gc_ns = now;
            int64_t gone = 0;
            rc = collect(s, cutoff, bg, &gone, err);
            if (gone > 0)
                s->vacuum_due = 1;
            if (rc < 0)
                return rc;
            if (rc == 1)
                return 0; /* being stopped */
            s->gc_due = 0;
        }
        if (s->vacuum_due) {
            rc = vacuum(s, bg, err);
            if (rc == 0)
                s->vacuum_due = 0;
            rc = rc < 0 ? rc : 0;
        }
    }
    return rc;
}

int sq_compact(struct sc_store *sto, int64_t now, int force, char *err)
{
    return sq_compact_run((struct sq_store *)sto, now, force, NULL, err);
}

/* The background round's result once the failures counted in total since the last one said
 * (*said) are said too: the round's own error stands; else the last failure's story, with
 * how many there were when more than one. */
static int say_since(int rc, char *err, int code, uint64_t total, uint64_t *said, const char *why,
                     const char *many)
{
    uint64_t n = total - *said;
    *said = total;
    if (n == 0 || rc < 0)
        return rc;
    return n > 1 ? sc_errf(err, code, "%s (%llu %s)", why, (unsigned long long)n, many)
                 : sc_errf(err, code, "%s", why);
}

int sq_bg_tick(void *arg, char *err)
{
    struct sq_store *s = arg;
    if (atomic_load(&s->base.ro)) {
        /* a failure is tried again on the next tick; the server says when it worked */
        int rc = sq_reopen(s, err);
        if (rc == 1)
            sc_store_bg_every(&s->bg, sq_compact_every_ns(s));
        if (rc >= 0)
            return 0;
        char why[SC_ERR_LEN];
        snprintf(why, sizeof why, "%s", err);
        return sc_errf(err, rc, "cannot open the store for writing: %s", why);
    }
    /* the first error of the round is the one said; the WAL restart runs whatever failed
     * before it (a failing compaction must not let the WAL grow again) */
    int rc = sq_compact_run(s, sc_wall_ns(), 0, &s->bg, err);
    pthread_mutex_lock(&s->wdb_mu);
    rc = say_since(rc, err, SC_EFORMAT, s->bad_blocks, &s->bad_reported, s->bad_why,
                   "such blocks this round");
    pthread_mutex_unlock(&s->wdb_mu);
    pthread_mutex_lock(&s->ck_mu);
    rc = say_since(rc, err, SC_EIO, s->ck_errors, &s->ck_reported, s->ck_why,
                   "failed since the last round");
    pthread_mutex_unlock(&s->ck_mu);
    int64_t wait = s->wal_wait_ns ? s->wal_wait_ns : SQ_WAL_WAIT_NS;
    char wal_err[SC_ERR_LEN];
    int wrc = sq_wal_restart(s, wait, wal_err);
    if (wrc != SQ_WAL_BUSY)
        s->wal_wait_ns = 0;
    else
        s->wal_wait_ns = 2 * wait < SQ_WAL_WAIT_MAX_NS ? 2 * wait : SQ_WAL_WAIT_MAX_NS;
    if (rc < 0)
        return rc;
    return wrc < 0 ? sc_errf(err, wrc, "%s", wal_err) : 0;
}
