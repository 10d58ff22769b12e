/* sqlite_compact.c - the embedded backend's upkeep: rollups, retention, the background. */
#include "store/sqlite_int.h"
#include "model/error.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* ---- compaction and retention ---- */

/* Recomputes one rollup from the level below; wdb_mu held, inside a transaction. */
static int rollup_one(struct sq_store *s, int64_t series, int64_t kind, int64_t res,
                      int64_t bucket, char *err)
{
    sqlite3 *db = s->wdb;
    sqlite3_stmt *st = NULL;
    int rc = 0;
    const int64_t NS = 1000000000LL;
    if (res == SC_ROLLUP_SHORT)
        rc = sqlite3_prepare_v2(db,
                                "SELECT block, 1, duration_ns FROM profiles WHERE series_id=? AND "
                                "kind_id=? AND time_ns >= ? AND time_ns < ?",
                                -1, &st, NULL);
    else
        rc = sqlite3_prepare_v2(db,
                                "SELECT block, nprofiles, duration_ns FROM rollups WHERE "
                                "series_id=? AND kind_id=? AND res=600 AND bucket >= ? AND "
                                "bucket < ?",
                                -1, &st, NULL);
    if (rc != SQLITE_OK)
        return sq_err(err, db, "compacting");
    sqlite3_bind_int64(st, 1, series);
    sqlite3_bind_int64(st, 2, kind);
    sqlite3_bind_int64(st, 3, res == SC_ROLLUP_SHORT ? bucket * NS : bucket);
    sqlite3_bind_int64(st, 4, res == SC_ROLLUP_SHORT ? (bucket + res) * NS : bucket + res);
    struct sc_block all = {.format = SC_BLOCK_AGG};
    uint32_t cap = 0, ncols = 0;
    int64_t nprofiles = 0, duration = 0;
    rc = 0;
    while (rc == 0 && sqlite3_step(st) == SQLITE_ROW) {
        struct sc_block b;
        rc = sc_block_decode(sqlite3_column_blob(st, 0), (size_t)sqlite3_column_bytes(st, 0),
                             SQ_MAX_BLOCK_ROWS, &b, err);
        if (rc)
            break;
        nprofiles += sqlite3_column_int64(st, 1);
        duration += sqlite3_column_int64(st, 2);
        if (ncols == 0)
            ncols = b.ncols;
        if (b.ncols != ncols) {
            sc_block_release(&b);
            rc = sc_errf(err, SC_EFORMAT, "blocks of one kind with different columns");
            break;
        }
        /* append rows row-major into a growing row buffer, normalized at the end */
        if (all.n + b.n > cap) {
            uint32_t c = cap ? cap : 4096;
            while (c < all.n + b.n)
                c *= 2;
            uint32_t *ns = realloc(all.stacks, c * sizeof *ns);
            if (ns)
                all.stacks = ns;
            int64_t *nv = realloc(all.values, (size_t)c * ncols * sizeof *nv);
            if (nv)
                all.values = nv;
            if (!ns || !nv) {
                sc_block_release(&b);
                rc = sc_errf(err, SC_ENOMEM, "out of memory");
                break;
            }
            cap = c;
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
    if (rc == 0 && nprofiles == 0) {
        /* nothing left (retention): no rollup row */
        if (sqlite3_prepare_v2(db,
                               "DELETE FROM rollups WHERE series_id=? AND kind_id=? AND res=? AND "
                               "bucket=?",
                               -1, &st, NULL) == SQLITE_OK) {
            sqlite3_bind_int64(st, 1, series);
            sqlite3_bind_int64(st, 2, kind);
            sqlite3_bind_int64(st, 3, res);
            sqlite3_bind_int64(st, 4, bucket);
            sqlite3_step(st);
        }
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
                t = (int64_t)((uint64_t)t + (uint64_t)all.values[(size_t)c * all.n + r]);
            sc_put_uvarint(&tot, sc_zigzag(t));
        }
        if (rc == 0 &&
            sqlite3_prepare_v2(db, "INSERT OR REPLACE INTO rollups VALUES(?,?,?,?,?,?,?,?)", -1,
                               &st, NULL) == SQLITE_OK) {
            sqlite3_bind_int64(st, 1, series);
            sqlite3_bind_int64(st, 2, kind);
            sqlite3_bind_int64(st, 3, res);
            sqlite3_bind_int64(st, 4, bucket);
            sqlite3_bind_int64(st, 5, nprofiles);
            sqlite3_bind_blob(st, 6, tot.data ? tot.data : "", (int)tot.len, SQLITE_STATIC);
            sqlite3_bind_blob(st, 7, enc.data ? enc.data : "", (int)enc.len, SQLITE_STATIC);
            sqlite3_bind_int64(st, 8, duration);
            if (sqlite3_step(st) != SQLITE_DONE)
                rc = sq_err(err, db, "writing a rollup");
        } else if (rc == 0) {
            rc = sq_err(err, db, "writing a rollup");
        }
        sc_buf_release(&enc);
        sc_buf_release(&tot);
    }
    sqlite3_finalize(st);
    sc_block_release(&all);
    return rc;
}

int sq_compact(struct sc_store *sto, int64_t now, int force, char *err)
{
    struct sq_store *s = (struct sq_store *)sto;
    const int64_t NS = 1000000000LL;
    int rc = 0;
    /* minutes first, then hours whose minutes are all clean; batches keep each write
     * transaction short so ingest is never blocked for long */
    for (int level = 0; level < 2 && rc == 0; level++) {
        int64_t res = level == 0 ? SC_ROLLUP_SHORT : SC_ROLLUP_HOUR;
        for (;;) {
            pthread_mutex_lock(&s->wdb_mu);
            sqlite3 *db = s->wdb;
            sqlite3_stmt *st = NULL;
            int64_t cutoff = force ? INT64_MAX / NS : sc_floor_div(now, NS) - res - 60;
            const char *sql =
                level == 0
                    ? "SELECT series_id, kind_id, bucket FROM dirty WHERE res=600 AND bucket < ? "
                      "LIMIT 256"
                    : "SELECT d.series_id, d.kind_id, d.bucket FROM dirty d WHERE d.res=3600 AND "
                      "d.bucket < ? AND NOT EXISTS (SELECT 1 FROM dirty m WHERE "
                      "m.series_id=d.series_id AND m.kind_id=d.kind_id AND m.res=600 AND "
                      "m.bucket >= d.bucket AND m.bucket < d.bucket + 3600) LIMIT 64";
            int64_t (*rows)[3] = malloc(256 * sizeof *rows);
            int nrows = 0;
            rc = rows ? sq_exec(db, "BEGIN IMMEDIATE", err) : sc_errf(err, SC_ENOMEM, "out of memory");
            if (rc == 0 && sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
                rc = sq_err(err, db, "compacting");
            if (rc == 0) {
                sqlite3_bind_int64(st, 1, cutoff);
                while (nrows < 256 && sqlite3_step(st) == SQLITE_ROW) {
                    rows[nrows][0] = sqlite3_column_int64(st, 0);
                    rows[nrows][1] = sqlite3_column_int64(st, 1);
                    rows[nrows][2] = sqlite3_column_int64(st, 2);
                    nrows++;
                }
                sqlite3_finalize(st);
                st = NULL;
            }
            for (int i = 0; i < nrows && rc == 0; i++) {
                rc = rollup_one(s, rows[i][0], rows[i][1], res, rows[i][2], err);
                if (rc == 0 &&
                    sqlite3_prepare_v2(db,
                                       "DELETE FROM dirty WHERE series_id=? AND kind_id=? AND "
                                       "res=? AND bucket=?",
                                       -1, &st, NULL) == SQLITE_OK) {
                    sqlite3_bind_int64(st, 1, rows[i][0]);
                    sqlite3_bind_int64(st, 2, rows[i][1]);
                    sqlite3_bind_int64(st, 3, res);
                    sqlite3_bind_int64(st, 4, rows[i][2]);
                    if (sqlite3_step(st) != SQLITE_DONE)
                        rc = sq_err(err, db, "compacting");
                    sqlite3_finalize(st);
                    st = NULL;
                }
            }
            if (rc == 0)
                rc = sq_exec(db, "COMMIT", err);
            else
                sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
            pthread_mutex_unlock(&s->wdb_mu);
            free(rows);
            if (rc || nrows == 0)
                break;
        }
    }
    /* retention: delete in batches */
    if (rc == 0 && s->base.opts.retention_ns > 0) {
        int64_t cutoff = now - s->base.opts.retention_ns;
        for (;;) {
            pthread_mutex_lock(&s->wdb_mu);
            sqlite3_stmt *st;
            int changed = 0;
            if (sqlite3_prepare_v2(s->wdb,
                                   "DELETE FROM profiles WHERE id IN (SELECT id FROM profiles "
                                   "WHERE time_ns < ? LIMIT 2000)",
                                   -1, &st, NULL) == SQLITE_OK) {
                sqlite3_bind_int64(st, 1, cutoff);
                if (sqlite3_step(st) == SQLITE_DONE)
                    changed = sqlite3_changes(s->wdb);
                else
                    rc = sq_err(err, s->wdb, "applying retention");
                sqlite3_finalize(st);
            }
            if (rc == 0 && changed == 0 &&
                sqlite3_prepare_v2(s->wdb, "DELETE FROM rollups WHERE (bucket + res) * 1000000000 <= ?",
                                   -1, &st, NULL) == SQLITE_OK) {
                sqlite3_bind_int64(st, 1, cutoff);
                sqlite3_step(st);
                sqlite3_finalize(st);
            }
            pthread_mutex_unlock(&s->wdb_mu);
            if (rc || changed == 0)
                break;
        }
    }
    return rc;
}

void *sq_bg_main(void *arg)
{
    struct sq_store *s = arg;
    pthread_mutex_lock(&s->bg_mu);
    while (!s->bg_stop) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_sec += 10;
        pthread_cond_timedwait(&s->bg_cond, &s->bg_mu, &ts);
        if (s->bg_stop)
            break;
        pthread_mutex_unlock(&s->bg_mu);
        char err[SC_ERR_LEN];
        sq_compact(&s->base, now_ns(), 0, err);
        pthread_mutex_lock(&s->bg_mu);
    }
    pthread_mutex_unlock(&s->bg_mu);
    return NULL;
}

