/* sqlite.c - the embedded store: profiles in SQLite (WAL), blocks in zstd, group commit.
 *
 * On-disk schema (file <dir>/scorch.db, WAL mode, synchronous=FULL when durable):
 *
 *   meta(key TEXT PRIMARY KEY, value TEXT)            schema_version = 2
 *   series(id INTEGER PRIMARY KEY, hash INTEGER UNIQUE, tenant TEXT, labels TEXT)
 *       hash = sc_hash64(tenant "\0" labels); labels in canonical form {a="x",b="y"}
 *       (sc_labels_format)
 *   series_labels(series_id, name, value) PRIMARY KEY(series_id, name), index (name, value)
 *   kinds(id INTEGER PRIMARY KEY, profile TEXT, types TEXT, UNIQUE(profile, types))
 *       a profile name with its ordered sample types, types = "type/unit,type/unit"
 *   frames(id INTEGER PRIMARY KEY, hash INTEGER, function TEXT, file TEXT, line INTEGER,
 *          binary TEXT)                               hash = sc_frame_id(...)
 *   stacks(id INTEGER PRIMARY KEY, hash INTEGER, frames BLOB)
 *       hash = sc_hash64 of the leaf-first frame hashes (8 bytes little-endian each, XOR
 *       SC_INLINE_SALT when the frame is inlined into the next); frames = varints
 *       (frame id << 1 | inlined), leaf first
 *   profiles(id INTEGER PRIMARY KEY, series_id, kind_id, time_ns, duration_ns, period,
 *            timed, nsamples, totals BLOB, block BLOB)
 *       index (series_id, kind_id, time_ns); totals = one zigzag varint per sample type
 *       (the column sums); block = a sample block (block.h), stacks as stacks.id
 *   rollups(series_id, kind_id, res, bucket, nprofiles, totals BLOB, block BLOB,
 *           duration_ns)
 *       PRIMARY KEY(series_id, kind_id, res, bucket): the aggregated block of every
 *       profile with time in [bucket, bucket + res) s, res 600 or 3600; duration_ns sums
 *       the profiles' durations (schema 2; a schema-1 store gets the column and every
 *       rollup marked dirty, so they are rebuilt with it)
 *   dirty(series_id, kind_id, res, bucket) PRIMARY KEY(all): buckets whose rollup is
 *       missing or stale; written in the same transaction as the profile that made it so
 *
 * Ids of frames, stacks, series and kinds are assigned in memory (the maps are loaded at
 * open) and inserted with the next commit, so the CPU work of a write (hashing, encoding,
 * compression) happens in the writer's thread and only the commit is serialized. A reader
 * uses its own connection from a pool; WAL lets reads run beside the writer.
 */
#include "store/sqlite_int.h"
#include "model/budget.h"
#include "model/error.h"
#include "model/clock.h"
#include "model/log.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

/* ---- small helpers ---- */

/* SC_E* of an SQLite result code and the errno of the call that failed: a full disk and a
 * lock held too long by another process are the caller's to report (507, 503); the rest
 * is an I/O error. A full disk is SQLITE_FULL when the database or its WAL cannot grow,
 * but an I/O error when the WAL index (-shm) cannot be allocated (see also disk_full). */
static int sq_code(int code, int sys_errno)
{
    switch (code & 0xff) {
    case SQLITE_NOMEM:
        return SC_ENOMEM;
    case SQLITE_FULL:
        return SC_ENOSPACE;
    case SQLITE_BUSY:
        return SC_EUNAVAIL;
    case SQLITE_IOERR:
        return sys_errno == ENOSPC || sys_errno == EDQUOT ? SC_ENOSPACE : SC_EIO;
    default:
        return SC_EIO;
    }
}

/* The message of a failed statement on db: SQLite's, or what the two conditions an
 * operator acts on mean. */
static int sq_fail(char *err, sqlite3 *db, int code, const char *what, const char *msg)
{
    /* a read its query's budget stopped (sq_progress) fails as the budget says */
    if ((code & 0xff) == SQLITE_INTERRUPT) {
        int stop = sc_budget_poll(err);
        if (stop)
            return stop;
    }
    int rc = sq_code(code, sqlite3_system_errno(db));
    if (rc == SC_ENOSPACE)
        return sc_errf(err, rc, "%s: the disk is full", what);
    if (rc == SC_EUNAVAIL)
        return sc_errf(err, rc, "%s: the database is locked by another process (waited %lld s)",
                       what, (long long)(SQ_BUSY_NS / SC_NS_PER_S));
    return sc_errf(err, rc, "%s: %s", what, msg);
}

int sq_err(char *err, sqlite3 *db, const char *what)
{
    return sq_fail(err, db, sqlite3_errcode(db), what, sqlite3_errmsg(db));
}

int sq_step(sqlite3_stmt *st, int *rc, const char *what, char *err)
{
    int code = sqlite3_step(st);
    if (code != SQLITE_ROW && code != SQLITE_DONE && *rc == 0) {
        sqlite3 *db = sqlite3_db_handle(st);
        *rc = sq_fail(err, db, code, what, sqlite3_errmsg(db));
    }
    return code;
}

int sq_exec(sqlite3 *db, const char *sql, char *err)
{
    char *msg = NULL;
    int code = sqlite3_exec(db, sql, NULL, NULL, &msg);
    if (code != SQLITE_OK) {
        int rc = sq_fail(err, db, code, "store", msg ? msg : "error");
        sqlite3_free(msg);
        return rc;
    }
    return 0;
}

/* sq_busy's wait in this thread when not 0 (sq_wal_restart's, shorter). */
static _Thread_local int64_t busy_wait_ns;

/* SQLite's busy handler: a lock another process holds (the LOCK file keeps other scorch
 * processes out; a sqlite3 shell or a backup tool may hold one) is waited for up to
 * SQ_BUSY_NS, and no longer once the store is closing, so a stopping server does not wait
 * on it. n counts the calls of one wait; a connection is used by one thread at a time, so
 * the wait's start is the thread's. */
static int sq_busy(void *arg, int n)
{
    static _Thread_local int64_t since;
    const struct sq_store *s = arg;
    int64_t now = sc_mono_ns();
    if (n == 0)
        since = now;
    if (atomic_load(&s->closing) || now - since >= (busy_wait_ns ? busy_wait_ns : SQ_BUSY_NS))
        return 0;
    sqlite3_sleep(n < 10 ? n + 1 : 10);
    return 1;
}

const char *sq_tenant(const char *t)
{
    return t ? t : "";
}

/* A new database got auto_vacuum=INCREMENTAL from sq_open_db before its header was
 * written (on an existing one the pragma does nothing but write the header: migration
 * turns it on with a VACUUM). */
static const char schema_sql[] =
    "CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT);"
    "INSERT OR IGNORE INTO meta VALUES('schema_version', '4');"
    "CREATE TABLE IF NOT EXISTS series(id INTEGER PRIMARY KEY, hash INTEGER NOT NULL UNIQUE,"
    " tenant TEXT NOT NULL, labels TEXT NOT NULL);"
    "CREATE TABLE IF NOT EXISTS series_labels(series_id INTEGER NOT NULL, name TEXT NOT NULL,"
    " value TEXT NOT NULL, PRIMARY KEY(series_id, name)) WITHOUT ROWID;"
    "CREATE INDEX IF NOT EXISTS series_labels_by_name ON series_labels(name, value);"
    "CREATE TABLE IF NOT EXISTS kinds(id INTEGER PRIMARY KEY, profile TEXT NOT NULL,"
    " types TEXT NOT NULL, UNIQUE(profile, types));"
    "CREATE TABLE IF NOT EXISTS frames(id INTEGER PRIMARY KEY, hash INTEGER NOT NULL,"
    " function TEXT NOT NULL, file TEXT NOT NULL, line INTEGER NOT NULL, binary TEXT NOT NULL);"
    "CREATE TABLE IF NOT EXISTS stacks(id INTEGER PRIMARY KEY, hash INTEGER NOT NULL,"
    " frames BLOB NOT NULL, last_day INTEGER NOT NULL DEFAULT 0);"
    "CREATE TABLE IF NOT EXISTS profiles(id INTEGER PRIMARY KEY, series_id INTEGER NOT NULL,"
    " kind_id INTEGER NOT NULL, time_ns INTEGER NOT NULL, duration_ns INTEGER NOT NULL,"
    " period INTEGER NOT NULL, timed INTEGER NOT NULL, nsamples INTEGER NOT NULL,"
    " totals BLOB NOT NULL, block BLOB NOT NULL);"
    "CREATE INDEX IF NOT EXISTS profiles_by_series ON profiles(series_id, kind_id, time_ns);"
    /* timed profiles (samples with their times) are read per sample: "are there any near
     * this range" is one seek here, for series that have none too */
    "CREATE INDEX IF NOT EXISTS profiles_timed ON profiles(series_id, kind_id, time_ns)"
    " WHERE timed=1;"
    "CREATE INDEX IF NOT EXISTS profiles_by_time ON profiles(time_ns);"
    "CREATE TABLE IF NOT EXISTS rollups(series_id INTEGER NOT NULL, kind_id INTEGER NOT NULL,"
    " res INTEGER NOT NULL, bucket INTEGER NOT NULL, nprofiles INTEGER NOT NULL,"
    " totals BLOB NOT NULL, block BLOB NOT NULL, duration_ns INTEGER NOT NULL DEFAULT 0,"
    " PRIMARY KEY(series_id, kind_id, res, bucket)) WITHOUT ROWID;"
    "CREATE TABLE IF NOT EXISTS dirty(series_id INTEGER NOT NULL, kind_id INTEGER NOT NULL,"
    " res INTEGER NOT NULL, bucket INTEGER NOT NULL,"
    " PRIMARY KEY(series_id, kind_id, res, bucket)) WITHOUT ROWID;";

/* Indexes on columns a migration may add, so they come after it. */
static const char index_sql[] = "CREATE INDEX IF NOT EXISTS frames_by_hash ON frames(hash);"
                                "CREATE INDEX IF NOT EXISTS stacks_by_hash ON stacks(hash);"
                                "CREATE INDEX IF NOT EXISTS stacks_by_day ON stacks(last_day);";

/* Brings an older store's schema up to date: each step in one transaction.
 *   1 -> 2: rollups keep their profiles' durations (all rollups rebuilt)
 *   2 -> 3: stacks know the last day a profile used them (garbage collection; existing
 *           stacks count as used today), day rollups (every day with profiles dirty), and
 *           incremental vacuum (a VACUUM switches it on).
 *   3 -> 4: rollups count captures and the time they cover (store_int.h), not profiles and
 *           their summed durations (all rollups rebuilt) */
static int migrate(sqlite3 *db, int read_only, char *err)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db, "SELECT value FROM meta WHERE key='schema_version'", -1, &st,
                           NULL) != SQLITE_OK)
        return sq_err(err, db, "reading the schema version");
    int version = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int(st, 0) : 0;
    sqlite3_finalize(st);
    if (version < 1 || version > 4)
        return sc_errf(err, SC_EFORMAT, "store schema version %d is not known to this scorch",
                       version);
    if (read_only && version != 4)
        return sc_errf(err, SC_ENOSPACE,
                       "the store's schema version %d needs migrating, which needs free space",
                       version);
    int rc = 0;
    if (version == 1)
        rc = sq_exec(db,
                     "BEGIN IMMEDIATE;"
                     "ALTER TABLE rollups ADD COLUMN duration_ns INTEGER NOT NULL DEFAULT 0;"
                     "INSERT OR IGNORE INTO dirty SELECT series_id, kind_id, res, bucket FROM "
                     "rollups;"
                     "UPDATE meta SET value='2' WHERE key='schema_version';"
                     "COMMIT;",
                     err);
    if (rc == 0 && version <= 2) {
        char sql[1024];
        snprintf(sql, sizeof sql,
                 "BEGIN IMMEDIATE;"
                 "ALTER TABLE stacks ADD COLUMN last_day INTEGER NOT NULL DEFAULT 0;"
                 "UPDATE stacks SET last_day = %lld;"
                 "INSERT OR IGNORE INTO dirty SELECT DISTINCT series_id, kind_id, %d, "
                 "(time_ns / 1000000000 / %d) * %d FROM profiles;"
                 "UPDATE meta SET value='3' WHERE key='schema_version';"
                 "COMMIT;",
                 (long long)sq_day(sc_wall_ns()), SC_ROLLUP_DAY, SC_ROLLUP_DAY, SC_ROLLUP_DAY);
        rc = sq_exec(db, sql, err);
        if (rc == 0)
            rc = sq_exec(db, "PRAGMA auto_vacuum=INCREMENTAL; VACUUM;", err);
    }
    if (rc == 0 && version <= 3)
        rc = sq_exec(db,
                     "BEGIN IMMEDIATE;"
                     "INSERT OR IGNORE INTO dirty SELECT series_id, kind_id, res, bucket FROM "
                     "rollups;"
                     "UPDATE meta SET value='4' WHERE key='schema_version';"
                     "COMMIT;",
                     err);
    if (rc)
        sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
    return rc;
}

/* Whether db's database is still empty (nothing has written its header). */
static int is_new_db(sqlite3 *db)
{
    sqlite3_stmt *st;
    int empty = 0;
    if (sqlite3_prepare_v2(db, "PRAGMA page_count", -1, &st, NULL) == SQLITE_OK) {
        empty = sqlite3_step(st) == SQLITE_ROW && sqlite3_column_int64(st, 0) == 0;
        sqlite3_finalize(st);
    }
    return empty;
}

int sq_open_db(struct sq_store *s, sqlite3 **db, enum sq_mode mode, char *err)
{
    int ro = mode == SQ_READ_ONLY, writer = mode == SQ_WRITER;
    int flags = ro ? SQLITE_OPEN_READONLY | SQLITE_OPEN_URI
                   : SQLITE_OPEN_READWRITE | (writer ? SQLITE_OPEN_CREATE : 0);
    if (sqlite3_open_v2(ro ? s->ro_uri : s->path, db, flags | SQLITE_OPEN_NOMUTEX, NULL) !=
        SQLITE_OK) {
        int rc = sc_errf(err, SC_EIO, "cannot open store '%s': %s", s->path,
                         *db ? sqlite3_errmsg(*db) : "out of memory");
        sqlite3_close(*db);
        *db = NULL;
        return rc;
    }
    sqlite3_busy_handler(*db, sq_busy, s);
    char pragmas[256];
    if (ro)
        snprintf(pragmas, sizeof pragmas, "PRAGMA cache_size=-16384; PRAGMA query_only=1;");
    else
        /* auto_vacuum before anything writes the header of a new database, or it has no
         * effect; only then, as it writes the header of an existing one, which a full disk
         * may not take */
        snprintf(pragmas, sizeof pragmas,
                 "%s PRAGMA journal_mode=WAL; PRAGMA synchronous=%s; PRAGMA foreign_keys=OFF;"
                 "PRAGMA cache_size=-16384; %s",
                 writer && is_new_db(*db) ? "PRAGMA auto_vacuum=INCREMENTAL;" : "",
                 s->base.opts.durable ? "FULL" : "NORMAL", writer ? "" : "PRAGMA query_only=1;");
    int rc = sq_exec(*db, pragmas, err);
    if (rc) {
        sqlite3_close(*db);
        *db = NULL;
    }
    return rc;
}

/* The statements of enum ST_*, in its order. */
static const char *const stmt_sql[ST_N] = {
    "SELECT 1 FROM dirty WHERE series_id=? AND kind_id=? AND res=? AND bucket=?",
    "SELECT nprofiles, block, duration_ns FROM rollups WHERE series_id=? AND kind_id=? AND "
    "res=? AND bucket=?",
    "SELECT block, duration_ns, time_ns FROM profiles WHERE series_id=? AND kind_id=? AND "
    "time_ns >= ? AND time_ns < ? ORDER BY time_ns",
    "SELECT min(time_ns), max(time_ns) FROM profiles WHERE series_id=? AND kind_id=? AND "
    "time_ns >= ? AND time_ns < ?",
    "SELECT block, duration_ns FROM profiles WHERE series_id=? AND kind_id=? AND timed=1 AND "
    "time_ns >= ? AND time_ns < ? ORDER BY time_ns",
    "SELECT time_ns, totals, duration_ns, timed FROM profiles WHERE series_id=? AND kind_id=? "
    "AND time_ns >= ? AND time_ns < ? ORDER BY time_ns",
    "SELECT 1 FROM profiles WHERE series_id = ? AND kind_id = ? AND time_ns >= ? AND "
    "time_ns < ? LIMIT 1",
    "SELECT 1 FROM profiles WHERE series_id = ? AND time_ns >= ? AND time_ns < ? LIMIT 1",
    "SELECT 1 FROM profiles WHERE series_id=? AND kind_id=? AND timed=1 AND time_ns >= ? AND "
    "time_ns < ? LIMIT 1",
};

/* The reader connections' progress handler (SQ_PROGRESS_OPS): non-zero interrupts the
 * statement. Off a query's thread sc_budget_poll is one thread-local load. */
static int sq_progress(void *arg)
{
    (void)arg;
    return sc_budget_poll(NULL) != 0;
}

static void conn_close(struct conn *c)
{
    for (int i = 0; i < ST_N; i++)
        sqlite3_finalize(c->st[i]);
    sqlite3_close(c->db);
    free(c);
}

/* Connections this thread has in use: one that holds one does not wait for a drain (a
 * query's callback may read more), as the drain would wait for it in turn. */
static _Thread_local uint32_t held;

static void conn_done(struct sq_store *s)
{
    pthread_mutex_lock(&s->pool_mu);
    if (--s->nout == 0 && s->draining)
        pthread_cond_broadcast(&s->pool_cv);
    pthread_mutex_unlock(&s->pool_mu);
    held--;
}

/* A connection counts in nout from the moment it is chosen until it is back in the pool,
 * so sq_reopen knows when no read uses one. */
struct conn *sq_conn_get(struct sq_store *s, char *err)
{
    pthread_mutex_lock(&s->pool_mu);
    while (s->draining && !held)
        pthread_cond_wait(&s->pool_cv, &s->pool_mu);
    struct conn *c = s->pool;
    if (c)
        s->pool = c->next;
    int ro = s->ro_uri != NULL;
    s->nout++;
    pthread_mutex_unlock(&s->pool_mu);
    held++;
    if (c)
        return c;
    c = calloc(1, sizeof *c);
    int rc = c ? sq_open_db(s, &c->db, ro ? SQ_READ_ONLY : SQ_READER, err)
               : sc_errf(err, SC_ENOMEM, "out of memory");
    if (rc == 0)
        sqlite3_progress_handler(c->db, SQ_PROGRESS_OPS, sq_progress, NULL);
    for (int i = 0; rc == 0 && i < ST_N; i++)
        if (sqlite3_prepare_v3(c->db, stmt_sql[i], -1, SQLITE_PREPARE_PERSISTENT, &c->st[i],
                               NULL) != SQLITE_OK)
            rc = sq_err(err, c->db, "preparing the store's statements");
    if (rc == 0)
        return c;
    if (c)
        conn_close(c);
    conn_done(s);
    return NULL;
}

void sq_conn_put(struct sq_store *s, struct conn *c)
{
    for (int i = 0; i < ST_N; i++)
        sqlite3_reset(c->st[i]);
    /* a read stopped before its COMMIT leaves no snapshot held (the handler off: nothing
     * interrupts the ROLLBACK) */
    if (!sqlite3_get_autocommit(c->db)) {
        sqlite3_progress_handler(c->db, 0, NULL, NULL);
        sqlite3_exec(c->db, "ROLLBACK", NULL, NULL, NULL);
        sqlite3_progress_handler(c->db, SQ_PROGRESS_OPS, sq_progress, NULL);
    }
    pthread_mutex_lock(&s->pool_mu);
    c->next = s->pool;
    s->pool = c;
    pthread_mutex_unlock(&s->pool_mu);
    conn_done(s);
}

/* ---- open / close ---- */

/* What opening reads: the next ids (not the ids themselves: those are looked up by hash
 * when a write misses its bounded cache) and the kinds (a handful). RSS after open does
 * not grow with history. */
static int load_maps(struct sq_store *s, char *err)
{
    static const char *const q[] = {"SELECT max(id) FROM frames", "SELECT max(id) FROM stacks",
                                    "SELECT max(id) FROM series"};
    uint32_t *next[] = {&s->next_frame, &s->next_stack, &s->next_series};
    for (int k = 0; k < 3; k++) {
        sqlite3_stmt *st;
        if (sqlite3_prepare_v2(s->wdb, q[k], -1, &st, NULL) != SQLITE_OK)
            return sq_err(err, s->wdb, "loading the store");
        int64_t max = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
        sqlite3_finalize(st);
        if (max < 0 || max >= UINT32_MAX / 4)
            return sc_errf(err, SC_EFORMAT, "store: bad id %lld", (long long)max);
        *next[k] = (uint32_t)max + 1;
    }
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(s->wdb, "SELECT id, profile, types FROM kinds", -1, &st, NULL) !=
        SQLITE_OK)
        return sq_err(err, s->wdb, "loading the store");
    s->next_kind = 1;
    while (sqlite3_step(st) == SQLITE_ROW) {
        struct kind *k = realloc(s->kinds, (s->nkinds + 1) * sizeof *k);
        if (!k) {
            sqlite3_finalize(st);
            return sc_errf(err, SC_ENOMEM, "out of memory");
        }
        s->kinds = k;
        k = &s->kinds[s->nkinds++];
        k->id = (uint32_t)sqlite3_column_int64(st, 0);
        k->profile = strdup((const char *)sqlite3_column_text(st, 1));
        k->types = strdup((const char *)sqlite3_column_text(st, 2));
        k->committed = 1;
        k->ntypes = 1;
        for (const char *c = k->types; c && *c; c++)
            k->ntypes += *c == ',';
        if (k->id >= s->next_kind)
            s->next_kind = k->id + 1;
    }
    sqlite3_finalize(st);
    return 0;
}

/* Takes <dir>/LOCK for this process. One process per data directory: ids are assigned in
 * memory (see the top of this file), so a second process writing would hand out the same
 * ones and mix up both processes' data. The lock goes with the process, also on kill -9. */
static int lock_dir(struct sq_store *s, const char *dir, char *err)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/LOCK", dir);
    s->lock_fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (s->lock_fd < 0)
        return sc_errf(err, SC_EIO, "cannot open '%s': %s", path, strerror(errno));
    if (flock(s->lock_fd, LOCK_EX | LOCK_NB) < 0) {
        int e = errno;
        char pid[24] = "";
        ssize_t n = pread(s->lock_fd, pid, sizeof pid - 1, 0);
        pid[n > 0 ? n : 0] = 0;
        pid[strcspn(pid, "\n")] = 0;
        if (e == EWOULDBLOCK)
            return sc_errf(err, SC_EEXISTS,
                           "data directory '%s' is in use by another scorch process%s%s%s", dir,
                           *pid ? " (pid " : "", pid, *pid ? ")" : "");
        return sc_errf(err, SC_EIO, "cannot lock '%s': %s", path, strerror(e));
    }
    char pid[24];
    int n = snprintf(pid, sizeof pid, "%ld\n", (long)getpid());
    if (ftruncate(s->lock_fd, 0) == 0 && pwrite(s->lock_fd, pid, (size_t)n, 0) != n) {
        /* the pid is only for the message above */
    }
    return 0;
}

static const struct sc_store_ops sqlite_ops;

void sq_free_pending(struct pend_frame *pf, struct pend_stack *ps, struct pend_series *pse)
{
    while (pf) {
        struct pend_frame *f = pf;
        pf = f->next;
        free(f->function);
        free(f->file);
        free(f->binary);
        free(f);
    }
    while (ps) {
        struct pend_stack *st = ps;
        ps = st->next;
        sc_buf_release(&st->blob);
        free(st);
    }
    while (pse) {
        struct pend_series *se = pse;
        pse = se->next;
        free(se->tenant);
        free(se->labels);
        sc_buf_release(&se->strings);
        free(se);
    }
}

static void free_kinds(struct sq_store *s)
{
    for (uint32_t i = 0; i < s->nkinds; i++) {
        free(s->kinds[i].profile);
        free(s->kinds[i].types);
    }
    free(s->kinds);
    s->kinds = NULL;
    s->nkinds = 0;
}

static void sq_close(struct sc_store *st)
{
    struct sq_store *s = (struct sq_store *)st;
    /* a compaction waiting on another process's lock gives up, and so does the last
     * checkpoint: the WAL is replayed at the next open instead */
    atomic_store(&s->closing, 1);
    sc_store_bg_stop(&s->bg);
    sq_ckpt_stop(s);
    /* wait for a commit in flight */
    pthread_mutex_lock(&s->qmu);
    while (s->leader || s->queue)
        pthread_cond_wait(&s->qcond, &s->qmu);
    pthread_mutex_unlock(&s->qmu);
    while (s->pool) {
        struct conn *c = s->pool;
        s->pool = c->next;
        conn_close(c);
    }
    if (s->wdb) {
        if (!s->ro_uri)
            sqlite3_exec(s->wdb, "PRAGMA wal_checkpoint(TRUNCATE)", NULL, NULL, NULL);
        sq_wdb_close(s);
    }
    sq_ids_close(s);
    free(s->touch);
    sc_map64_release(&s->touched);
    sq_free_pending(s->pframes, s->pstacks, s->pseries);
    free_kinds(s);
    sc_map64_release(&s->frame_ids);
    sc_map64_release(&s->stack_ids);
    sc_map64_release(&s->series_ids);
    sc_map64_release(&s->stack_cache);
    sc_map64_release(&s->frame_cache);
    free(s->stack_off);
    free(s->stack_len);
    free(s->stack_data);
    free(s->finfo);
    sc_arena_release(&s->cache_arena);
    pthread_mutex_destroy(&s->mu);
    pthread_mutex_destroy(&s->wdb_mu);
    pthread_mutex_destroy(&s->qmu);
    pthread_cond_destroy(&s->qcond);
    pthread_mutex_destroy(&s->pool_mu);
    pthread_cond_destroy(&s->pool_cv);
    pthread_mutex_destroy(&s->cache_mu);
    pthread_rwlock_destroy(&s->gc_lock);
    pthread_mutex_destroy(&s->ck_mu);
    pthread_cond_destroy(&s->ck_cv);
    pthread_cond_destroy(&s->ck_idle);
    if (s->lock_fd >= 0)
        close(s->lock_fd); /* last: the database is closed and checkpointed */
    free(s->path);
    free(s->ro_uri);
    free(s);
}

/* Whether the file system holding path (a directory or a file) has no room for what
 * opening a store may need (a WAL index and a WAL frame, or one inode). For the failures
 * whose errno SQLite loses: a -shm that cannot be created is "unable to open database
 * file" with the errno of its read-only retry. Also what a read-only store checks before
 * it tries for writing again (sq_reopen), as that costs more than a statvfs. */
static int disk_full(const char *path)
{
    struct statvfs v;
    if (statvfs(path, &v) != 0)
        return 0;
    return (uint64_t)v.f_bavail * v.f_frsize < 64u << 10 || (v.f_files > 0 && v.f_favail == 0);
}

/* How often a read-only store tries to open for writing. */
static int64_t ro_retry_ns(const struct sq_store *s)
{
    return s->base.opts.read_only_retry_ns > 0 ? s->base.opts.read_only_retry_ns : SQ_TICK_NS;
}

/* Opens the connections and loads what the store keeps in memory, bringing the schema up
 * to date unless read-only. */
static int open_tables(struct sq_store *s, char *err)
{
    int rc = sq_open_db(s, &s->wdb, s->ro_uri ? SQ_READ_ONLY : SQ_WRITER, err);
    if (!rc && !s->ro_uri)
        rc = sq_exec(s->wdb, schema_sql, err);
    if (!rc)
        rc = migrate(s->wdb, s->ro_uri != NULL, err);
    if (!rc && !s->ro_uri)
        rc = sq_exec(s->wdb, index_sql, err);
    if (!rc)
        rc = load_maps(s, err);
    if (!rc)
        rc = sq_ids_open(s, s->ro_uri ? SQ_READ_ONLY : SQ_READER, err);
    if (!rc && !s->ro_uri)
        sq_ckpt_attach(s);
    return rc;
}

/* Undoes a failed open_tables, so that it can be tried again. */
static void close_tables(struct sq_store *s)
{
    sq_ids_close(s);
    sq_wdb_close(s);
    free_kinds(s);
}

/* How a store whose disk is too full to open it for writing is read (s->ro_uri). Its WAL
 * holds committed pushes not yet copied into the database, so it cannot be skipped: with
 * one, SQLite builds the WAL index in its own memory from the WAL (readonly_shm=1: the
 * -shm is opened read-only, created empty when missing, which takes an inode and no
 * block); without one the database is read as an immutable file, as a read-only
 * connection could neither create the -wal nor allocate a new -shm. The directory's LOCK
 * keeps writers away meanwhile. */
static int read_only_uri(struct sq_store *s, char *err)
{
    char aux[4200];
    struct stat sb;
    snprintf(aux, sizeof aux, "%s-wal", s->path);
    int wal = stat(aux, &sb) == 0 && sb.st_size >= 32; /* more than nothing: a header */
    if (wal) {
        snprintf(aux, sizeof aux, "%s-shm", s->path);
        int fd = open(aux, O_RDONLY | O_CREAT | O_CLOEXEC, 0644);
        if (fd < 0)
            return sc_errf(err, SC_ENOSPACE, "cannot create the WAL index '%s': %s", aux,
                           strerror(errno));
        close(fd);
    }
    struct sc_buf u = SC_BUF_INIT;
    sc_buf_puts(&u, s->path[0] == '/' ? "file://" : "file:");
    for (const char *c = s->path; *c; c++) {
        if (isalnum((unsigned char)*c) || strchr("/._-~", *c))
            sc_buf_putc(&u, *c);
        else
            sc_buf_printf(&u, "%%%02X", (unsigned)(unsigned char)*c);
    }
    sc_buf_puts(&u, wal ? "?mode=ro&readonly_shm=1" : "?mode=ro&immutable=1");
    sc_buf_putc(&u, 0);
    if (u.oom) {
        sc_buf_release(&u);
        return sc_errf(err, SC_ENOMEM, "out of memory");
    }
    s->ro_uri = sc_buf_detach(&u, NULL);
    return 0;
}

/* The store whose disk was too full to open it for writing (detail in err), opened
 * read-only instead: what is stored is still served, nothing is written until there is
 * room again (sq_reopen). 0, or SC_ENOSPACE with why that failed too. */
static int open_read_only(struct sq_store *s, const char *dir, char *err)
{
    char why[SC_ERR_LEN] = "";
    close_tables(s);
    int rc = read_only_uri(s, why);
    if (!rc)
        rc = open_tables(s, why);
    if (rc) {
        char first[SC_ERR_LEN];
        snprintf(first, sizeof first, "%s", err ? err : "the disk is full");
        return sc_errf(err, SC_ENOSPACE, "%s; read-only: %s", first, why);
    }
    snprintf(s->base.read_only, sizeof s->base.read_only,
             "the store is read-only: the disk holding '%s' was full when it was opened; "
             "writes resume once space is freed (tried every %g s)",
             dir, (double)ro_retry_ns(s) / SC_NS_PER_S);
    atomic_store(&s->base.ro, 1);
    return 0;
}

/* The page caches' slab (sc_store_opts.cache_slab): one mapping, reserved and touched at
 * once, that every connection's page cache takes its pages from, so the caches filling
 * neither grows the process after start nor interleaves long-lived pages with the
 * short-lived allocations of requests in malloc's arenas (which then cannot give those
 * back: the soak's RSS grew 4 MiB a minute more than malloc's in-use memory did). SQLite
 * takes it only before it initializes, so the first store opened with cache_slab installs
 * it for the process; after that it stays. SQLite's caches treat it as their bound: when
 * it is nearly used up they recycle pages rather than allocate more. */
static pthread_mutex_t slab_mu = PTHREAD_MUTEX_INITIALIZER;
static int slab_tried;
static size_t slab_bytes, slab_slot;

static size_t install_slab(uint64_t bytes)
{
    pthread_mutex_lock(&slab_mu);
    if (slab_tried) {
        pthread_mutex_unlock(&slab_mu);
        return slab_bytes;
    }
    slab_tried = 1;
    int hdr = 0;
    if (sqlite3_config(SQLITE_CONFIG_PCACHE_HDRSZ, &hdr) != SQLITE_OK || hdr <= 0) {
        sc_logf("SQLite's page caches stay on the heap (SQLite had started before the store "
                "opened)");
        pthread_mutex_unlock(&slab_mu);
        return 0;
    }
    size_t slot = ((size_t)SQ_PAGE_SIZE + (size_t)hdr + 15) & ~(size_t)15;
    size_t n = (size_t)(bytes / slot);
    void *p = n ? mmap(NULL, n * slot, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0)
                : MAP_FAILED;
    if (p == MAP_FAILED) {
        sc_logf("SQLite's page caches stay on the heap (cannot map %llu bytes for them)",
                (unsigned long long)bytes);
    } else if (sqlite3_config(SQLITE_CONFIG_PAGECACHE, p, (int)slot, (int)n) != SQLITE_OK) {
        munmap(p, n * slot);
        sc_logf("SQLite's page caches stay on the heap (SQLite had started before the store "
                "opened)");
    } else {
        slab_bytes = n * slot;
        slab_slot = slot;
    }
    size_t got = slab_bytes;
    pthread_mutex_unlock(&slab_mu);
    return got;
}

void sc_store_sqlite_memory(struct sc_sqlite_memory *m)
{
    memset(m, 0, sizeof *m);
    sqlite3_int64 cur = 0, hi = 0;
    m->heap = (uint64_t)sqlite3_memory_used();
    pthread_mutex_lock(&slab_mu);
    m->slab = slab_bytes;
    size_t slot = slab_slot;
    pthread_mutex_unlock(&slab_mu);
    if (slot && sqlite3_status64(SQLITE_STATUS_PAGECACHE_USED, &cur, &hi, 0) == SQLITE_OK)
        m->slab_used = (uint64_t)cur * slot;
}

int sc_sqlite_open(const struct sc_store_opts *o, struct sc_store **out, char *err)
{
    *out = NULL;
    struct sq_store *s = calloc(1, sizeof *s);
    if (!s)
        return sc_errf(err, SC_ENOMEM, "out of memory");
    s->base.ops = &sqlite_ops;
    s->base.opts = *o;
    s->lock_fd = -1;
    if (s->base.opts.zstd_level == 0)
        s->base.opts.zstd_level = 3;
    const char *dir = o->dir ? o->dir : "./data";
    if (mkdir(dir, 0755) < 0 && errno != EEXIST) {
        int e = errno;
        free(s);
        return sc_errf(err, SC_EIO, "cannot create data directory '%s': %s", dir, strerror(e));
    }
    size_t plen = strlen(dir) + 16;
    s->path = malloc(plen);
    if (!s->path) {
        free(s);
        return sc_errf(err, SC_ENOMEM, "out of memory");
    }
    snprintf(s->path, plen, "%s/scorch.db", dir);
    int rc = lock_dir(s, dir, err);
    if (rc) {
        if (s->lock_fd >= 0)
            close(s->lock_fd);
        free(s->path);
        free(s);
        return rc;
    }
    pthread_mutex_init(&s->mu, NULL);
    pthread_mutex_init(&s->wdb_mu, NULL);
    pthread_mutex_init(&s->qmu, NULL);
    sc_cond_init(&s->qcond);
    pthread_mutex_init(&s->pool_mu, NULL);
    sc_cond_init(&s->pool_cv);
    pthread_mutex_init(&s->cache_mu, NULL);
    pthread_rwlockattr_t ra;
    pthread_rwlockattr_init(&ra);
    /* the collector must not wait behind a steady stream of writes */
    pthread_rwlockattr_setkind_np(&ra, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
    pthread_rwlock_init(&s->gc_lock, &ra);
    pthread_rwlockattr_destroy(&ra);
    pthread_mutex_init(&s->ck_mu, NULL);
    sc_cond_init(&s->ck_cv);
    sc_cond_init(&s->ck_idle);
    sc_arena_init(&s->cache_arena);
    s->qtail = &s->queue;
    /* every connection caps its own page cache (cache_size), but readers are pooled as
     * many as queries ran at once, so only a bound on SQLite's whole heap bounds them all */
    uint64_t mem = o->cache_memory ? o->cache_memory : SQ_CACHE_MEMORY_DEFAULT;
    size_t slab = o->cache_slab ? install_slab(mem - mem / 4) : 0;
    /* with the slab, the heap keeps the rest: statements, schemas, sorters, pages of
     * another size */
    sqlite3_soft_heap_limit64((sqlite3_int64)(slab ? mem / 4 : mem));
    /* the server's store (with the background thread) checkpoints on a thread of its own;
     * one that cannot start it (or open its connection, sq_ckpt_attach) still works, with
     * SQLite's checkpoints in the commits */
    char ck_err[SC_ERR_LEN];
    if (o->background && sq_ckpt_start(s, ck_err))
        sc_logf("%s; checkpoints stay in the commits", ck_err);
    rc = open_tables(s, err);
    if (rc && rc != SC_ENOSPACE && disk_full(dir))
        rc = sc_errwrap(err, SC_ENOSPACE, "the disk is full");
    if (rc == SC_ENOSPACE && o->read_only_when_full)
        rc = open_read_only(s, dir, err);
    if (rc) {
        sq_close(&s->base);
        return rc;
    }
    /* compaction every 10 s; a store that cannot start its thread still works (rollups
     * and retention wait for sc_store_compact); a read-only one tries for writing first */
    int64_t every = s->ro_uri ? ro_retry_ns(s) : sq_compact_every_ns(s);
    if (o->background)
        sc_store_bg_start(&s->base, &s->bg, every, every, sq_bg_tick, s);
    *out = &s->base;
    return 0;
}

/* ---- a read-only store writable again ---- */

/* Opens the writer and the id lookups for writing, every read-only connection closed: SQLite
 * shares one -shm mapping between a process's connections to a file, read-only while any
 * read-only one is open, so a writer opened beside them cannot write. On failure nothing
 * is left open, and how read-only connections open is decided again (the writer may have
 * checkpointed the WAL away as it closed). */
static int open_writable(struct sq_store *s, char *err)
{
    sq_wdb_close(s);
    sq_ids_close(s);
    int rc = sq_open_db(s, &s->wdb, SQ_WRITER, err);
    if (!rc)
        rc = sq_exec(s->wdb, schema_sql, err);
    if (!rc)
        rc = sq_exec(s->wdb, index_sql, err);
    if (!rc)
        rc = sq_ids_open(s, SQ_READER, err);
    if (rc) {
        sq_ids_close(s);
        sq_wdb_close(s);
    } else {
        sq_ckpt_attach(s);
    }
    free(s->ro_uri);
    s->ro_uri = NULL;
    char why[SC_ERR_LEN];
    if (rc && read_only_uri(s, why))
        rc = sc_errf(err, SC_ENOSPACE, "%s", why);
    return rc;
}

/* Run on the background thread's ticks, so writes, compaction and retention are all kept
 * out: nothing writes while read-only. A read-only connection takes no lock a writer sees
 * (immutable=1) or indexes the WAL in its own memory (readonly_shm=1), so it must not be
 * open once anything writes: the queries using one are waited for (new ones wait too, at
 * most SQ_DRAIN_NS, then it is tried again on the next tick), and the idle ones closed. */
int sq_reopen(struct sq_store *s, char *err)
{
    if (disk_full(s->path))
        return 0;
    struct timespec ts;
    sc_deadline(&ts, SQ_DRAIN_NS);
    pthread_mutex_lock(&s->pool_mu);
    s->draining = 1;
    int waited = 0;
    while (s->nout > 0 && waited == 0)
        waited = pthread_cond_timedwait(&s->pool_cv, &s->pool_mu, &ts);
    int idle = s->nout == 0;
    struct conn *pool = idle ? s->pool : NULL;
    if (idle)
        s->pool = NULL;
    pthread_mutex_unlock(&s->pool_mu);
    while (pool) {
        struct conn *c = pool;
        pool = c->next;
        conn_close(c);
    }
    int rc = idle ? open_writable(s, err) : 0;
    if (idle && rc == 0)
        atomic_store(&s->base.ro, 0);
    pthread_mutex_lock(&s->pool_mu);
    s->draining = 0;
    pthread_cond_broadcast(&s->pool_cv);
    pthread_mutex_unlock(&s->pool_mu);
    return idle && rc == 0 ? 1 : rc;
}

/* ---- the checkpointer ----
 *
 * SQLite's automatic checkpoint runs inside the commit that takes the WAL past 1,000
 * pages: that commit copies the WAL into the database (and, durable, syncs both) while it
 * holds the writer, so every push behind it waits too, and a step of the compaction or the
 * collection that deletes thousands of rows took three times its slice (bench/gc_bench.c).
 * Here a commit past SQ_CKPT_PAGES only wakes a thread, which runs a PASSIVE checkpoint on
 * its own connection: WAL mode lets it copy while commits go on appending. Its failures
 * are counted and the background thread says them (sq_bg_tick). But the WAL starts over
 * only when a commit begins with all of it copied, which commits that follow each other
 * as fast as it copies never leave it: once a commit finds the WAL SQ_CKPT_BEHIND times
 * past SQ_CKPT_PAGES, the next checkpoint holds the writer (wdb_mu) as SQLite's would. */

static int ckpt_hook(void *arg, sqlite3 *db, const char *name, int pages)
{
    (void)db;
    (void)name;
    struct sq_store *s = arg;
    if (pages >= SQ_CKPT_PAGES) {
        pthread_mutex_lock(&s->ck_mu);
        s->ck_due = 1;
        s->ck_behind |= pages >= SQ_CKPT_BEHIND * SQ_CKPT_PAGES;
        pthread_cond_signal(&s->ck_cv);
        pthread_mutex_unlock(&s->ck_mu);
    }
    return SQLITE_OK;
}

/* One checkpoint on the checkpointer's connection (sq_ckpt_attach opened it): 0, 1 when
 * another checkpoint (sq_wal_restart's) was running, or SC_E* with err. Behind (see
 * above), it holds the writer, so it copies everything and the next commit starts the WAL
 * over. */
static int ckpt_once(struct sq_store *s, int behind, char *err)
{
    if (behind)
        pthread_mutex_lock(&s->wdb_mu);
    int rc = sqlite3_wal_checkpoint_v2(s->ckdb, NULL, SQLITE_CHECKPOINT_PASSIVE, NULL, NULL);
    if (behind)
        pthread_mutex_unlock(&s->wdb_mu);
    if (rc == SQLITE_BUSY || rc == SQLITE_LOCKED)
        return 1;
    return rc == SQLITE_OK ? 0 : sq_err(err, s->ckdb, "checkpoint");
}

static void *ckpt_main(void *arg)
{
    struct sq_store *s = arg;
    for (;;) {
        pthread_mutex_lock(&s->ck_mu);
        while (!s->ck_due && !s->ck_stop)
            pthread_cond_wait(&s->ck_cv, &s->ck_mu);
        int stop = s->ck_stop, behind = s->ck_behind;
        s->ck_due = s->ck_behind = 0;
        s->ck_busy = !stop;
        pthread_mutex_unlock(&s->ck_mu);
        if (stop)
            break;
        char err[SC_ERR_LEN] = "";
        int rc = ckpt_once(s, behind, err);
        pthread_mutex_lock(&s->ck_mu);
        if (rc < 0) {
            s->ck_errors++;
            snprintf(s->ck_why, sizeof s->ck_why, "checkpointing the WAL: %s", err);
        }
        s->ck_runs += rc == 0;
        s->ck_held += rc == 0 && behind;
        s->ck_done++;
        s->ck_busy = 0;
        pthread_cond_broadcast(&s->ck_idle);
        /* a failed one (a disk that cannot sync) is tried again a second later, not at
         * once: each try copies the whole WAL again, and every commit asks for one */
        if (rc < 0) {
            struct timespec ts;
            sc_deadline(&ts, SQ_CKPT_RETRY_NS);
            while (!s->ck_stop && pthread_cond_timedwait(&s->ck_cv, &s->ck_mu, &ts) == 0)
                ;
            s->ck_due = 1;
        }
        pthread_mutex_unlock(&s->ck_mu);
    }
    sqlite3_close(s->ckdb);
    s->ckdb = NULL;
    return NULL;
}

int sq_ckpt_start(struct sq_store *s, char *err)
{
    s->ck_stop = s->ck_due = 0;
    int e = pthread_create(&s->ck_thread, NULL, ckpt_main, s);
    if (e)
        return sc_errf(err, SC_EIO, "cannot start the checkpointer: %s", strerror(e));
    s->ck_running = 1;
    return 0;
}

void sq_ckpt_attach(struct sq_store *s)
{
    /* its connection first: without one SQLite's own checkpoints stay (the thread is
     * woken only through the hook, after this) */
    char err[SC_ERR_LEN];
    if (s->ck_running && s->wdb && (s->ckdb || sq_open_db(s, &s->ckdb, SQ_READER, err) == 0))
        sqlite3_wal_hook(s->wdb, ckpt_hook, s);
}

void sq_ckpt_settle(struct sq_store *s, int64_t max_ns)
{
    if (!s->ck_running)
        return;
    struct timespec ts;
    sc_deadline(&ts, max_ns);
    pthread_mutex_lock(&s->ck_mu);
    /* the checkpoints asked for so far: the running one and the one due next (a commit
     * past SQ_CKPT_PAGES while it runs asks again); not "until it is idle", which a stream
     * of commits may never let it be */
    uint64_t until = s->ck_done + (s->ck_busy ? 1u : 0u) + (s->ck_due ? 1u : 0u);
    while (s->ck_done < until && !s->ck_stop)
        if (pthread_cond_timedwait(&s->ck_idle, &s->ck_mu, &ts) == ETIMEDOUT)
            break;
    pthread_mutex_unlock(&s->ck_mu);
}

void sq_ckpt_stop(struct sq_store *s)
{
    if (!s->ck_running)
        return;
    pthread_mutex_lock(&s->ck_mu);
    s->ck_stop = 1;
    pthread_cond_signal(&s->ck_cv);
    pthread_mutex_unlock(&s->ck_mu);
    pthread_join(s->ck_thread, NULL);
    s->ck_running = 0;
}

int sq_wal_restart(struct sq_store *s, int64_t wait_ns, char *err)
{
    uint64_t limit = s->base.opts.wal_limit ? s->base.opts.wal_limit : SQ_WAL_LIMIT;
    char wal[4200];
    struct stat st;
    snprintf(wal, sizeof wal, "%s-wal", s->path);
    if (atomic_load(&s->base.ro) || stat(wal, &st) != 0 || (uint64_t)st.st_size <= 2 * limit)
        return 0;
    pthread_mutex_lock(&s->wdb_mu);
    busy_wait_ns = wait_ns > 0 ? wait_ns : 1;
    int rc = sqlite3_wal_checkpoint_v2(s->wdb, NULL, SQLITE_CHECKPOINT_TRUNCATE, NULL, NULL);
    busy_wait_ns = 0;
    rc = rc == SQLITE_OK                            ? 1
         : rc == SQLITE_BUSY || rc == SQLITE_LOCKED ? SQ_WAL_BUSY
                                                    : sq_err(err, s->wdb, "starting the WAL over");
    pthread_mutex_unlock(&s->wdb_mu);
    return rc;
}

/* ---- listing ---- */

static int sq_types(struct sc_store *st, const char *tenant, sc_store_type_cb cb, void *ctx,
                    char *err)
{
    struct sq_store *s = (struct sq_store *)st;
    struct conn *c = sq_conn_get(s, err);
    if (!c)
        return SC_EIO;
    sqlite3 *db = c->db;
    sqlite3_stmt *q;
    int rc = 0;
    if (sqlite3_prepare_v2(db,
                           "SELECT DISTINCT k.profile, k.types FROM kinds k WHERE EXISTS "
                           "(SELECT 1 FROM profiles p JOIN series s ON s.id = p.series_id "
                           "WHERE p.kind_id = k.id AND s.tenant = ?) ORDER BY 1, 2",
                           -1, &q, NULL) != SQLITE_OK) {
        rc = sq_err(err, db, "listing types");
        sq_conn_put(s, c);
        return rc;
    }
    sqlite3_bind_text(q, 1, sq_tenant(tenant), -1, SQLITE_STATIC);
    /* collect distinct "profile:type" ids, then report sorted */
    struct sc_buf seen = SC_BUF_INIT;
    struct ent {
        size_t id, prof, type, unit;
    } *ents = NULL;
    size_t nents = 0;
    while (rc == 0 && sqlite3_step(q) == SQLITE_ROW) {
        const char *prof = (const char *)sqlite3_column_text(q, 0);
        const char *types = (const char *)sqlite3_column_text(q, 1);
        for (const char *t = types; *t;) {
            const char *e = strchr(t, ',');
            size_t len = e ? (size_t)(e - t) : strlen(t);
            const char *slash = memchr(t, '/', len);
            size_t tlen = slash ? (size_t)(slash - t) : len;
            struct ent en;
            en.id = seen.len;
            sc_buf_printf(&seen, "%s:%.*s", prof, (int)tlen, t);
            sc_buf_putc(&seen, 0);
            en.prof = seen.len;
            sc_buf_puts(&seen, prof);
            sc_buf_putc(&seen, 0);
            en.type = seen.len;
            sc_buf_append(&seen, t, tlen);
            sc_buf_putc(&seen, 0);
            en.unit = seen.len;
            if (slash)
                sc_buf_append(&seen, slash + 1, len - tlen - 1);
            sc_buf_putc(&seen, 0);
            int dup = 0;
            for (size_t i = 0; i < nents && !dup && !seen.oom; i++)
                dup = !strcmp(seen.data + ents[i].id, seen.data + en.id);
            if (!dup) {
                struct ent *ne = realloc(ents, (nents + 1) * sizeof *ne);
                if (!ne) {
                    rc = SC_ENOMEM;
                    break;
                }
                ents = ne;
                ents[nents++] = en;
            }
            t += len + (e ? 1 : 0);
        }
    }
    sqlite3_finalize(q);
    sq_conn_put(s, c);
    if (seen.oom)
        rc = SC_ENOMEM;
    /* sort by id (insertion sort: few types) */
    for (size_t i = 1; !rc && i < nents; i++)
        for (size_t j = i; j > 0 && strcmp(seen.data + ents[j - 1].id, seen.data + ents[j].id) > 0;
             j--) {
            struct ent t = ents[j];
            ents[j] = ents[j - 1];
            ents[j - 1] = t;
        }
    for (size_t i = 0; !rc && i < nents; i++) {
        struct sc_store_type t = {seen.data + ents[i].id, seen.data + ents[i].prof,
                                  seen.data + ents[i].type, seen.data + ents[i].unit, 0};
        t.gauge = sc_type_is_gauge(t.profile, t.sample_type);
        if (cb(ctx, &t))
            break;
    }
    free(ents);
    sc_buf_release(&seen);
    return rc ? sc_errf(err, rc, "out of memory") : 0;
}

static int list_strings(struct sq_store *s, const char *sql, const char *tenant, const char *name,
                        sc_store_str_cb cb, void *ctx, char *err)
{
    struct conn *c = sq_conn_get(s, err);
    if (!c)
        return SC_EIO;
    sqlite3_stmt *st;
    int rc = 0;
    if (sqlite3_prepare_v2(c->db, sql, -1, &st, NULL) != SQLITE_OK) {
        rc = sq_err(err, c->db, "listing labels");
        sq_conn_put(s, c);
        return rc;
    }
    sqlite3_bind_text(st, 1, sq_tenant(tenant), -1, SQLITE_STATIC);
    if (name)
        sqlite3_bind_text(st, 2, name, -1, SQLITE_STATIC);
    while (sqlite3_step(st) == SQLITE_ROW)
        if (cb(ctx, (const char *)sqlite3_column_text(st, 0)))
            break;
    sqlite3_finalize(st);
    sq_conn_put(s, c);
    return 0;
}

static int sq_label_names(struct sc_store *st, const char *tenant, sc_store_str_cb cb, void *ctx,
                          char *err)
{
    return list_strings((struct sq_store *)st,
                        "SELECT DISTINCT l.name FROM series_labels l JOIN series s "
                        "ON s.id = l.series_id WHERE s.tenant = ? ORDER BY 1",
                        tenant, NULL, cb, ctx, err);
}

static int sq_label_values(struct sc_store *st, const char *tenant, const char *name,
                           sc_store_str_cb cb, void *ctx, char *err)
{
    return list_strings((struct sq_store *)st,
                        "SELECT DISTINCT l.value FROM series_labels l JOIN series s "
                        "ON s.id = l.series_id WHERE s.tenant = ? AND l.name = ? ORDER BY 1",
                        tenant, name, cb, ctx, err);
}

int sq_kinds_for_type(struct sq_store *s, const char *type, struct kind_col *out, uint32_t max,
                      int *gauge)
{
    const char *colon = strchr(type ? type : "", ':');
    *gauge = 0;
    if (!colon)
        return 0;
    size_t plen = (size_t)(colon - type);
    const char *st = colon + 1;
    size_t slen = strlen(st);
    uint32_t n = 0;
    pthread_mutex_lock(&s->mu);
    for (uint32_t i = 0; i < s->nkinds && n < max; i++) {
        const struct kind *k = &s->kinds[i];
        if (strlen(k->profile) != plen || strncmp(k->profile, type, plen))
            continue;
        uint32_t col = 0;
        for (const char *t = k->types; *t; col++) {
            const char *e = strchr(t, ',');
            size_t len = e ? (size_t)(e - t) : strlen(t);
            const char *slash = memchr(t, '/', len);
            size_t tlen = slash ? (size_t)(slash - t) : len;
            if (tlen == slen && !strncmp(t, st, slen)) {
                out[n].kind = k->id;
                out[n].col = col;
                snprintf(out[n].unit, sizeof out[n].unit, "%.*s", slash ? (int)(len - tlen - 1) : 0,
                         slash ? slash + 1 : "");
                n++;
                break;
            }
            t += len + (e ? 1 : 0);
        }
    }
    pthread_mutex_unlock(&s->mu);
    char pname[128];
    snprintf(pname, sizeof pname, "%.*s", (int)(plen < 127 ? plen : 127), type);
    *gauge = sc_type_is_gauge(pname, st);
    return (int)n;
}

static int sq_type_info(struct sc_store *st, const char *type, char unit[64], int *gauge)
{
    struct kind_col kc[SQ_MAX_KINDS];
    int nk = sq_kinds_for_type((struct sq_store *)st, type, kc, SQ_MAX_KINDS, gauge);
    if (nk == 0)
        return SC_ENOTFOUND;
    memcpy(unit, kc[0].unit, sizeof kc[0].unit);
    return 0;
}

static int sq_series_list(struct sc_store *sto, const char *tenant, const char *type, int64_t from,
                          int64_t until, sc_store_match_cb match, sc_store_series_cb cb, void *ctx,
                          char *err)
{
    struct sq_store *s = (struct sq_store *)sto;
    struct kind_col kc[SQ_MAX_KINDS];
    int gauge, nk = 0;
    if (type && *type) {
        nk = sq_kinds_for_type(s, type, kc, SQ_MAX_KINDS, &gauge);
        if (nk == 0)
            return 0;
    }
    struct conn *c = sq_conn_get(s, err);
    if (!c)
        return SC_EIO;
    sqlite3_stmt *st, *ex = c->st[ST_EXISTS], *any = c->st[ST_ANY];
    int rc = 0;
    if (sqlite3_prepare_v2(c->db, "SELECT id, labels FROM series WHERE tenant = ? ORDER BY labels",
                           -1, &st, NULL) != SQLITE_OK) {
        rc = sq_err(err, c->db, "listing series");
        sq_conn_put(s, c);
        return rc;
    }
    sqlite3_bind_text(st, 1, sq_tenant(tenant), -1, SQLITE_STATIC);
    while (rc == 0 && sq_step(st, &rc, "listing series", err) == SQLITE_ROW) {
        /* each series costs a few short statements: a query's deadline is looked at here */
        if ((rc = sc_budget_poll(err)) != 0)
            break;
        int64_t id = sqlite3_column_int64(st, 0);
        const char *labels = (const char *)sqlite3_column_text(st, 1);
        if (match && !match(ctx, labels ? labels : "{}"))
            continue; /* not wanted: no need to look for its profiles */
        int has = 0;
        if (nk == 0) {
            /* any type: a profile in range */
            sqlite3_bind_int64(any, 1, id);
            sqlite3_bind_int64(any, 2, from);
            sqlite3_bind_int64(any, 3, until);
            has = sq_step(any, &rc, "listing series", err) == SQLITE_ROW;
            sqlite3_reset(any);
        }
        for (int k = 0; k < nk && !has && rc == 0; k++) {
            sqlite3_bind_int64(ex, 1, id);
            sqlite3_bind_int64(ex, 2, kc[k].kind);
            sqlite3_bind_int64(ex, 3, from);
            sqlite3_bind_int64(ex, 4, until);
            has = sq_step(ex, &rc, "listing series", err) == SQLITE_ROW;
            sqlite3_reset(ex);
            /* a timed profile started before the range may hold samples in it */
            has = has || sq_timed_near(c, (uint64_t)id, kc[k].kind, from, until, &rc, err);
        }
        if (!has || rc)
            continue;
        struct sc_store_series se = {(uint64_t)id, labels};
        if (cb(ctx, &se))
            break;
    }
    sqlite3_finalize(st);
    sq_conn_put(s, c);
    return rc;
}

static int sq_stats(struct sc_store *sto, struct sc_store_stats *st, char *err)
{
    struct sq_store *s = (struct sq_store *)sto;
    memset(st, 0, sizeof *st);
    struct conn *c = sq_conn_get(s, err);
    if (!c)
        return SC_EIO;
    static const char *const q[] = {"SELECT count(*) FROM profiles", "SELECT count(*) FROM series",
                                    "SELECT count(*) FROM stacks", "SELECT count(*) FROM frames",
                                    "SELECT count(*) FROM rollups"};
    uint64_t *dst[] = {&st->profiles, &st->series, &st->stacks, &st->frames, &st->rollups};
    for (int i = 0; i < 5; i++) {
        sqlite3_stmt *x;
        if (sqlite3_prepare_v2(c->db, q[i], -1, &x, NULL) == SQLITE_OK) {
            if (sqlite3_step(x) == SQLITE_ROW)
                *dst[i] = (uint64_t)sqlite3_column_int64(x, 0);
            sqlite3_finalize(x);
        }
    }
    sq_conn_put(s, c);
    const char *sfx[] = {"", "-wal", "-shm"};
    for (int i = 0; i < 3; i++) {
        char path[4200];
        snprintf(path, sizeof path, "%s%s", s->path, sfx[i]);
        struct stat sb;
        if (stat(path, &sb) == 0)
            st->bytes_on_disk += (uint64_t)sb.st_size;
    }
    return 0;
}

static const struct sc_store_ops sqlite_ops = {
    .name = "sqlite",
    .close = sq_close,
    .write = sq_write,
    .write_many = sq_write_many,
    .types = sq_types,
    .label_names = sq_label_names,
    .label_values = sq_label_values,
    .series_list = sq_series_list,
    .type_info = sq_type_info,
    .read = sq_read,
    .resolve = sq_resolve,
    .span = sq_span,
    .timeline = sq_timeline,
    .profiles = sq_profiles,
    .compact = sq_compact,
    .stats = sq_stats,
};
