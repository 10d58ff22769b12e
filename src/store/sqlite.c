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
#include "store/block.h"
#include "store/store_int.h"
#include "model/buf.h"
#include "model/error.h"
#include "model/hash.h"

#include <errno.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define MAX_LABELS 64
#define MAX_BLOCK_ROWS (1u << 24)

struct frame_info {
    const char *function, *file, *binary; /* in the cache arena */
    int64_t line;
};

/* New rows not committed yet (retried by the next commit if one fails). */
struct pend_frame {
    struct pend_frame *next;
    uint32_t id;
    uint64_t hash;
    char *function, *file, *binary;
    int64_t line;
};
struct pend_stack {
    struct pend_stack *next;
    uint32_t id;
    uint64_t hash;
    struct sc_buf blob;
};
struct pend_series {
    struct pend_series *next;
    uint32_t id;
    uint64_t hash;
    char *tenant, *labels;
    uint32_t npairs;
    const char *names[MAX_LABELS], *values[MAX_LABELS]; /* in strings */
    struct sc_buf strings;
};
struct kind {
    uint32_t id;
    char *profile, *types; /* types: "t/u,t/u" */
    uint32_t ntypes;
    int committed;
};

/* A profile row waiting for the group commit. */
struct pend_write {
    struct pend_write *next;
    uint32_t series_id, kind_id;
    int64_t time_ns, duration_ns, period;
    int timed;
    uint32_t nsamples;
    struct sc_buf totals, block;
    int done, rc;
    char err[SC_ERR_LEN];
};

struct conn {
    sqlite3 *db;
    struct conn *next;
};

struct sc_store {
    char *path;
    int lock_fd; /* <dir>/LOCK, flock'ed for the life of the store */
    struct sc_store_opts opts;
    sqlite3 *wdb; /* the writer's connection: used by the commit leader and compaction */
    pthread_mutex_t wdb_mu;

    /* ids and pending rows */
    pthread_mutex_t mu;
    struct sc_map64 frame_ids, stack_ids, series_ids;
    uint32_t next_frame, next_stack, next_series, next_kind;
    struct kind *kinds;
    uint32_t nkinds;
    struct pend_frame *pframes;
    struct pend_stack *pstacks;
    struct pend_series *pseries;

    /* group commit */
    pthread_mutex_t qmu;
    pthread_cond_t qcond;
    struct pend_write *queue, **qtail;
    int leader;

    /* read side */
    pthread_mutex_t pool_mu;
    struct conn *pool;
    pthread_mutex_t cache_mu;
    struct sc_arena cache_arena;
    struct sc_map64 stack_cache; /* stack id -> index in stack_off */
    uint32_t *stack_off, *stack_len, nstack_cache, stack_cache_cap;
    uint32_t *stack_data, nstack_data, stack_data_cap;
    struct sc_map64 frame_cache; /* frame id -> index in frame_info */
    struct frame_info *finfo;
    uint32_t nfinfo, finfo_cap;

    /* background */
    pthread_t bg;
    int bg_running, bg_stop;
    pthread_mutex_t bg_mu;
    pthread_cond_t bg_cond;
};

/* ---- small helpers ---- */

static int sqlerr(char *err, sqlite3 *db, const char *what)
{
    int code = sqlite3_errcode(db);
    int rc = code == SQLITE_FULL ? SC_EIO : code == SQLITE_NOMEM ? SC_ENOMEM : SC_EIO;
    return sc_errf(err, rc, "%s: %s", what, sqlite3_errmsg(db));
}

static int exec(sqlite3 *db, const char *sql, char *err)
{
    char *msg = NULL;
    if (sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK) {
        int rc = sc_errf(err, SC_EIO, "store: %s", msg ? msg : "error");
        sqlite3_free(msg);
        return rc;
    }
    return 0;
}

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static int64_t floor_div(int64_t a, int64_t b)
{
    int64_t q = a / b;
    return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

static const char *tenant_of(const char *t)
{
    return t ? t : "";
}

static const char schema_sql[] =
    "CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT);"
    "INSERT OR IGNORE INTO meta VALUES('schema_version', '2');"
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
    " frames BLOB NOT NULL);"
    "CREATE TABLE IF NOT EXISTS profiles(id INTEGER PRIMARY KEY, series_id INTEGER NOT NULL,"
    " kind_id INTEGER NOT NULL, time_ns INTEGER NOT NULL, duration_ns INTEGER NOT NULL,"
    " period INTEGER NOT NULL, timed INTEGER NOT NULL, nsamples INTEGER NOT NULL,"
    " totals BLOB NOT NULL, block BLOB NOT NULL);"
    "CREATE INDEX IF NOT EXISTS profiles_by_series ON profiles(series_id, kind_id, time_ns);"
    "CREATE INDEX IF NOT EXISTS profiles_by_time ON profiles(time_ns);"
    "CREATE TABLE IF NOT EXISTS rollups(series_id INTEGER NOT NULL, kind_id INTEGER NOT NULL,"
    " res INTEGER NOT NULL, bucket INTEGER NOT NULL, nprofiles INTEGER NOT NULL,"
    " totals BLOB NOT NULL, block BLOB NOT NULL, duration_ns INTEGER NOT NULL DEFAULT 0,"
    " PRIMARY KEY(series_id, kind_id, res, bucket)) WITHOUT ROWID;"
    "CREATE TABLE IF NOT EXISTS dirty(series_id INTEGER NOT NULL, kind_id INTEGER NOT NULL,"
    " res INTEGER NOT NULL, bucket INTEGER NOT NULL,"
    " PRIMARY KEY(series_id, kind_id, res, bucket)) WITHOUT ROWID;";

/* Brings an older store's schema up to date, in one transaction. */
static int migrate(sqlite3 *db, char *err)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db, "SELECT value FROM meta WHERE key='schema_version'", -1, &st,
                           NULL) != SQLITE_OK)
        return sqlerr(err, db, "reading the schema version");
    int version = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int(st, 0) : 0;
    sqlite3_finalize(st);
    if (version == 2) return 0;
    if (version != 1)
        return sc_errf(err, SC_EFORMAT, "store schema version %d is not known to this scorch",
                       version);
    return exec(db,
                "BEGIN IMMEDIATE;"
                "ALTER TABLE rollups ADD COLUMN duration_ns INTEGER NOT NULL DEFAULT 0;"
                "INSERT OR IGNORE INTO dirty SELECT series_id, kind_id, res, bucket FROM rollups;"
                "UPDATE meta SET value='2' WHERE key='schema_version';"
                "COMMIT;",
                err);
}

static int open_db(struct sc_store *s, sqlite3 **db, int writer, char *err)
{
    int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX | (writer ? SQLITE_OPEN_CREATE : 0);
    if (sqlite3_open_v2(s->path, db, flags, NULL) != SQLITE_OK) {
        int rc = sc_errf(err, SC_EIO, "cannot open store '%s': %s", s->path,
                         *db ? sqlite3_errmsg(*db) : "out of memory");
        sqlite3_close(*db);
        *db = NULL;
        return rc;
    }
    sqlite3_busy_timeout(*db, 10000);
    char pragmas[256];
    snprintf(pragmas, sizeof pragmas,
             "PRAGMA journal_mode=WAL; PRAGMA synchronous=%s; PRAGMA foreign_keys=OFF;"
             "PRAGMA cache_size=-16384; %s",
             s->opts.durable ? "FULL" : "NORMAL", writer ? "" : "PRAGMA query_only=1;");
    int rc = exec(*db, pragmas, err);
    if (rc) {
        sqlite3_close(*db);
        *db = NULL;
    }
    return rc;
}

static sqlite3 *conn_get(struct sc_store *s, char *err)
{
    pthread_mutex_lock(&s->pool_mu);
    struct conn *c = s->pool;
    if (c)
        s->pool = c->next;
    pthread_mutex_unlock(&s->pool_mu);
    if (c) {
        sqlite3 *db = c->db;
        free(c);
        return db;
    }
    sqlite3 *db;
    return open_db(s, &db, 0, err) ? NULL : db;
}

static void conn_put(struct sc_store *s, sqlite3 *db)
{
    struct conn *c = malloc(sizeof *c);
    if (!c) {
        sqlite3_close(db);
        return;
    }
    c->db = db;
    pthread_mutex_lock(&s->pool_mu);
    c->next = s->pool;
    s->pool = c;
    pthread_mutex_unlock(&s->pool_mu);
}

/* ---- read caches: stacks and frames ---- */

/* Adds a stack's frames (varint blob) to the cache; cache_mu held. */
static int cache_stack(struct sc_store *s, uint32_t id, const uint8_t *blob, size_t len)
{
    int added;
    uint32_t *slot = sc_map64_upsert(&s->stack_cache, id, s->nstack_cache, &added);
    if (!slot)
        return SC_ENOMEM;
    if (!added)
        return 0;
    if (sc_grow_array(&s->stack_off, &s->stack_cache_cap, (uint64_t)s->nstack_cache + 1,
                      sizeof *s->stack_off))
        return SC_ENOMEM;
    uint32_t cap = s->stack_cache_cap;
    uint32_t *nl = realloc(s->stack_len, cap * sizeof *nl);
    if (!nl)
        return SC_ENOMEM;
    s->stack_len = nl;
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

static int cache_frame(struct sc_store *s, uint32_t id, const char *fn, const char *file,
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
static int fetch_missing(struct sc_store *s, sqlite3 *db, int frames, const uint32_t *ids,
                         uint32_t n, char *err)
{
    enum { CHUNK = 256 };
    int rc = 0;
    for (uint32_t off = 0; off < n && rc == 0; off += CHUNK) {
        uint32_t m = n - off < CHUNK ? n - off : CHUNK;
        char sql[96 + CHUNK * 12];
        int o = snprintf(sql, sizeof sql,
                         frames ? "SELECT id, function, file, line, binary FROM frames WHERE id IN ("
                                : "SELECT id, frames FROM stacks WHERE id IN (");
        for (uint32_t k = 0; k < m; k++)
            o += snprintf(sql + o, sizeof sql - (size_t)o, "%s%u", k ? "," : "", ids[off + k]);
        snprintf(sql + o, sizeof sql - (size_t)o, ")");
        sqlite3_stmt *st;
        if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
            return sqlerr(err, db, "reading stacks");
        pthread_mutex_lock(&s->cache_mu);
        while (rc == 0 && sqlite3_step(st) == SQLITE_ROW) {
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
    }
    return rc ? sc_errf(err, rc, "reading stacks: %s", sc_strerror(rc)) : 0;
}

/* Makes sure the stacks and their frames are in the cache, reading missing ones. */
static int cache_fill(struct sc_store *s, sqlite3 *db, const uint32_t *stacks, uint32_t n,
                      char *err)
{
    struct sc_map64 seen;
    sc_map64_init(&seen);
    uint32_t *miss = NULL, nmiss = 0, cap = 0;
    int rc = 0;
    for (int frames = 0; frames < 2 && rc == 0; frames++) {
        nmiss = 0;
        sc_map64_release(&seen);
        pthread_mutex_lock(&s->cache_mu);
        for (uint32_t i = 0; i < n && rc == 0; i++) {
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
                        miss[nmiss++] = stacks[i];
                }
                continue;
            }
            uint32_t *ci = sc_map64_get(&s->stack_cache, stacks[i]);
            if (!ci)
                continue; /* a stack the database lacks: build_profile reports it */
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
        if (rc == 0 && nmiss)
            rc = fetch_missing(s, db, frames, miss, nmiss, err);
        else if (rc)
            rc = sc_errf(err, rc, "out of memory");
    }
    sc_map64_release(&seen);
    free(miss);
    return rc;
}

/* ---- open / close ---- */

static int load_maps(struct sc_store *s, char *err)
{
    static const char *const q[] = {
        "SELECT id, hash FROM frames", "SELECT id, hash FROM stacks",
        "SELECT id, hash FROM series"};
    struct sc_map64 *maps[] = {&s->frame_ids, &s->stack_ids, &s->series_ids};
    uint32_t *next[] = {&s->next_frame, &s->next_stack, &s->next_series};
    for (int k = 0; k < 3; k++) {
        sqlite3_stmt *st;
        if (sqlite3_prepare_v2(s->wdb, q[k], -1, &st, NULL) != SQLITE_OK)
            return sqlerr(err, s->wdb, "loading the store");
        *next[k] = 1;
        while (sqlite3_step(st) == SQLITE_ROW) {
            int64_t id = sqlite3_column_int64(st, 0);
            if (id <= 0 || id >= UINT32_MAX) {
                sqlite3_finalize(st);
                return sc_errf(err, SC_EFORMAT, "store: bad id %lld", (long long)id);
            }
            if (!sc_map64_upsert(maps[k], (uint64_t)sqlite3_column_int64(st, 1), (uint32_t)id,
                                 NULL)) {
                sqlite3_finalize(st);
                return sc_errf(err, SC_ENOMEM, "out of memory");
            }
            if ((uint32_t)id >= *next[k])
                *next[k] = (uint32_t)id + 1;
        }
        sqlite3_finalize(st);
    }
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(s->wdb, "SELECT id, profile, types FROM kinds", -1, &st, NULL) !=
        SQLITE_OK)
        return sqlerr(err, s->wdb, "loading the store");
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

static void *bg_main(void *arg);

/* Takes <dir>/LOCK for this process. One process per data directory: ids are assigned in
 * memory (see the top of this file), so a second process writing would hand out the same
 * ones and mix up both processes' data. The lock goes with the process, also on kill -9. */
static int lock_dir(struct sc_store *s, const char *dir, char *err)
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

int sc_store_open(const struct sc_store_opts *o, struct sc_store **out, char *err)
{
    *out = NULL;
    struct sc_store *s = calloc(1, sizeof *s);
    if (!s)
        return sc_errf(err, SC_ENOMEM, "out of memory");
    s->opts = *o;
    s->lock_fd = -1;
    if (s->opts.zstd_level == 0)
        s->opts.zstd_level = 3;
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
    pthread_cond_init(&s->qcond, NULL);
    pthread_mutex_init(&s->pool_mu, NULL);
    pthread_mutex_init(&s->cache_mu, NULL);
    pthread_mutex_init(&s->bg_mu, NULL);
    pthread_cond_init(&s->bg_cond, NULL);
    sc_arena_init(&s->cache_arena);
    s->qtail = &s->queue;
    rc = open_db(s, &s->wdb, 1, err);
    if (!rc)
        rc = exec(s->wdb, schema_sql, err);
    if (!rc) rc = migrate(s->wdb, err);
    if (!rc)
        rc = load_maps(s, err);
    if (rc) {
        sc_store_close(s);
        return rc;
    }
    if (o->background) {
        s->bg_running = pthread_create(&s->bg, NULL, bg_main, s) == 0;
    }
    *out = s;
    return 0;
}

static void free_pending(struct sc_store *s)
{
    while (s->pframes) {
        struct pend_frame *f = s->pframes;
        s->pframes = f->next;
        free(f->function);
        free(f->file);
        free(f->binary);
        free(f);
    }
    while (s->pstacks) {
        struct pend_stack *st = s->pstacks;
        s->pstacks = st->next;
        sc_buf_release(&st->blob);
        free(st);
    }
    while (s->pseries) {
        struct pend_series *se = s->pseries;
        s->pseries = se->next;
        free(se->tenant);
        free(se->labels);
        sc_buf_release(&se->strings);
        free(se);
    }
}

void sc_store_close(struct sc_store *s)
{
    if (!s)
        return;
    if (s->bg_running) {
        pthread_mutex_lock(&s->bg_mu);
        s->bg_stop = 1;
        pthread_cond_signal(&s->bg_cond);
        pthread_mutex_unlock(&s->bg_mu);
        pthread_join(s->bg, NULL);
    }
    /* wait for a commit in flight */
    pthread_mutex_lock(&s->qmu);
    while (s->leader || s->queue)
        pthread_cond_wait(&s->qcond, &s->qmu);
    pthread_mutex_unlock(&s->qmu);
    while (s->pool) {
        struct conn *c = s->pool;
        s->pool = c->next;
        sqlite3_close(c->db);
        free(c);
    }
    if (s->wdb) {
        sqlite3_exec(s->wdb, "PRAGMA wal_checkpoint(TRUNCATE)", NULL, NULL, NULL);
        sqlite3_close(s->wdb);
    }
    free_pending(s);
    for (uint32_t i = 0; i < s->nkinds; i++) {
        free(s->kinds[i].profile);
        free(s->kinds[i].types);
    }
    free(s->kinds);
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
    pthread_mutex_destroy(&s->cache_mu);
    pthread_mutex_destroy(&s->bg_mu);
    pthread_cond_destroy(&s->bg_cond);
    if (s->lock_fd >= 0)
        close(s->lock_fd); /* last: the database is closed and checkpointed */
    free(s->path);
    free(s);
}

/* ---- the write path ---- */

/* Per-profile scratch for resolving a profile's frames and stacks. */
struct wctx {
    struct sc_store *s;
    const struct sc_profile *p;
    uint64_t *line_hash;   /* per profile line (location lines), frame hash */
    uint32_t *line_loc;    /* per profile line, its location */
    uint64_t *loc_noline;  /* per location without lines: frame hash */
    /* rows */
    uint32_t *stacks;
    int64_t *times;
    int64_t *values; /* row-major while collecting: values[i * nt + c] */
    uint32_t n, cap;
    uint32_t nt;
    uint64_t *hbuf; /* scratch: a stack's frame hashes */
    uint32_t hcap;
    uint64_t *shash;  /* per row: stack hash */
    uint32_t *soff;   /* per row: its frames in frames[soff[i] .. soff[i + 1]) */
    uint32_t *frames; /* frame refs (see collect_visit), leaf first */
    uint32_t nframes, frames_cap;
    int timed;
    int64_t shift;
    int rc;
};

/* Frame strings of a profile line (or of a location without lines). */
static void frame_strings(const struct sc_profile *p, const struct sc_location *l,
                          const struct sc_line *ln, char *addrbuf, size_t abuflen,
                          struct sc_str *fn, struct sc_str *file, int64_t *line,
                          struct sc_str *bin)
{
    *file = (struct sc_str){"", 0};
    *line = 0;
    *fn = (struct sc_str){"", 0};
    if (ln && ln->function) {
        const struct sc_function *f = &p->functions[ln->function - 1];
        *fn = sc_function_name(p, ln->function - 1);
        *file = sc_profile_str(p, f->filename);
        *line = ln->line;
    }
    if (fn->len == 0) {
        int k = snprintf(addrbuf, abuflen, "0x%llx", (unsigned long long)l->address);
        *fn = (struct sc_str){addrbuf, (uint32_t)k};
    }
    *bin = l->mapping ? sc_profile_str(p, p->mappings[l->mapping - 1].filename)
                      : (struct sc_str){"", 0};
}

/* Frame id for a hash, creating a pending frame when new; mu held. */
static int64_t frame_id_locked(struct sc_store *s, uint64_t h, struct sc_str fn,
                               struct sc_str file, int64_t line, struct sc_str bin)
{
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
    f->function = strndup(fn.ptr, fn.len);
    f->file = strndup(file.ptr, file.len);
    f->binary = strndup(bin.ptr, bin.len);
    f->line = line;
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
    pthread_mutex_lock(&s->cache_mu);
    int rc = cache_frame(s, f->id, f->function, f->file, line, f->binary);
    pthread_mutex_unlock(&s->cache_mu);
    return rc ? rc : (int64_t)f->id;
}

/* Frame hashes of every line and line-less location (no ids: those are looked up only for
 * stacks the store has not seen, see resolve_stacks). */
static int hash_frames(struct wctx *w)
{
    const struct sc_profile *p = w->p;
    struct sc_store *s = w->s;
    w->line_hash = malloc(((size_t)p->nlines + 1) * sizeof *w->line_hash);
    w->loc_noline = malloc(((size_t)p->nlocations + 1) * sizeof *w->loc_noline);
    w->line_loc = malloc(((size_t)p->nlines + 1) * sizeof *w->line_loc);
    /* string hashes once per function and per mapping, not per line */
    uint64_t *fh = malloc(((size_t)p->nfunctions + 1) * 2 * sizeof *fh);
    uint64_t *mh = malloc(((size_t)p->nmappings + 1) * sizeof *mh);
    if (!w->line_hash || !w->line_loc || !w->loc_noline || !fh || !mh) {
        free(fh);
        free(mh);
        return SC_ENOMEM;
    }
    for (uint32_t f = 0; f < p->nfunctions; f++) {
        struct sc_str n = sc_function_name(p, f);
        struct sc_str file = sc_profile_str(p, p->functions[f].filename);
        fh[2 * f] = n.len ? sc_hash64(n.ptr, n.len) : 0;
        fh[2 * f + 1] = sc_hash64(file.ptr, file.len);
    }
    for (uint32_t m = 0; m < p->nmappings; m++) {
        struct sc_str file = sc_profile_str(p, p->mappings[m].filename);
        mh[m] = sc_hash64(file.ptr, file.len);
    }
    uint64_t h_empty = sc_hash64("", 0);
    char abuf[32];
    for (uint32_t i = 0; i < p->nlocations; i++) {
        const struct sc_location *l = &p->locations[i];
        uint64_t hb = l->mapping ? mh[l->mapping - 1] : h_empty;
        uint64_t haddr = 0;
        if (l->nlines == 0) {
            int k = snprintf(abuf, sizeof abuf, "0x%llx", (unsigned long long)l->address);
            w->loc_noline[i] = sc_frame_id_from(sc_hash64(abuf, (size_t)k), h_empty, hb, 0);
        }
        for (uint32_t j = 0; j < l->nlines; j++) {
            const struct sc_line *ln = &p->lines[l->line_start + j];
            w->line_loc[l->line_start + j] = i;
            uint64_t hf, hfile = h_empty;
            int64_t line = 0;
            if (ln->function && fh[2 * (ln->function - 1)]) {
                hf = fh[2 * (ln->function - 1)];
                hfile = fh[2 * (ln->function - 1) + 1];
                line = ln->line;
            } else {
                /* nameless: named by its address, as frame_strings() does */
                if (!haddr) {
                    int k = snprintf(abuf, sizeof abuf, "0x%llx", (unsigned long long)l->address);
                    haddr = sc_hash64(abuf, (size_t)k);
                }
                hf = haddr;
                if (ln->function) {
                    hfile = fh[2 * (ln->function - 1) + 1];
                    line = ln->line;
                }
            }
            w->line_hash[l->line_start + j] = sc_frame_id_from(hf, hfile, hb, line);
        }
    }
    free(fh);
    free(mh);
    (void)s;
    return 0;
}

/* Frame id of a frame reference (see collect_visit), creating the frame when new; mu held. */
static int64_t frame_of_ref(struct wctx *w, uint32_t ref)
{
    const struct sc_profile *p = w->p;
    uint32_t r = ref & 0x7fffffffu;
    uint64_t h = r < p->nlines ? w->line_hash[r] : w->loc_noline[r - p->nlines];
    uint32_t *slot = sc_map64_get(&w->s->frame_ids, h);
    if (slot)
        return *slot;
    char abuf[32];
    struct sc_str fn, file, bin;
    int64_t line;
    const struct sc_location *l = &p->locations[r < p->nlines ? w->line_loc[r] : r - p->nlines];
    frame_strings(p, l, r < p->nlines ? &p->lines[r] : NULL, abuf, sizeof abuf, &fn, &file, &line,
                  &bin);
    return frame_id_locked(w->s, h, fn, file, line, bin);
}

/* Records a sample: its stack's hash and frames (resolved to ids later, under one lock
 * for the whole profile) and its values. */
static int collect_visit(void *ctx, const uint32_t *locs, uint32_t nlocs, const int64_t *values)
{
    struct wctx *w = ctx;
    int any = 0;
    for (uint32_t c = 0; c < w->nt; c++)
        any |= values[c] != 0;
    if (!any)
        return 0;
    const struct sc_profile *p = w->p;
    uint64_t nf = 0;
    for (uint32_t k = 0; k < nlocs; k++)
        nf += p->locations[locs[k]].nlines ? p->locations[locs[k]].nlines : 1;
    if (nf > w->hcap) {
        uint64_t c = w->hcap ? w->hcap : 64;
        while (c < nf)
            c *= 2;
        if (c > UINT32_MAX / 8)
            return SC_ELIMIT;
        uint64_t *h = realloc(w->hbuf, c * sizeof *h);
        if (!h)
            return SC_ENOMEM;
        w->hbuf = h;
        w->hcap = (uint32_t)c;
    }
    if (w->nframes + nf > w->frames_cap) {
        uint64_t c = w->frames_cap ? w->frames_cap : 16384;
        while (c < w->nframes + nf)
            c *= 2;
        if (c > UINT32_MAX / 4)
            return SC_ELIMIT;
        uint32_t *f = realloc(w->frames, c * sizeof *f);
        if (!f)
            return SC_ENOMEM;
        w->frames = f;
        w->frames_cap = (uint32_t)c;
    }
    uint32_t *fb = w->frames + w->nframes;
    nf = 0;
    for (uint32_t k = 0; k < nlocs; k++) {
        const struct sc_location *l = &p->locations[locs[k]];
        /* refs: a line index, or nlines + the location index for a location without
         * lines; bit 31 marks a frame inlined into the next */
        if (l->nlines == 0) {
            w->hbuf[nf] = w->loc_noline[locs[k]];
            fb[nf++] = p->nlines + locs[k];
            continue;
        }
        for (uint32_t j = 0; j < l->nlines; j++) {
            int inl = j + 1 < l->nlines;
            /* the stack id hashes the frame ids' bytes, little-endian (x86 and arm64) */
            w->hbuf[nf] = w->line_hash[l->line_start + j] ^ (inl ? SC_INLINE_SALT : 0);
            fb[nf++] = (l->line_start + j) | (inl ? 0x80000000u : 0);
        }
    }
    if (w->n == w->cap) {
        uint32_t c = w->cap ? w->cap * 2 : 1024;
        uint32_t *st = realloc(w->stacks, c * sizeof *st);
        if (st)
            w->stacks = st;
        int64_t *v = realloc(w->values, (size_t)c * w->nt * sizeof *v);
        if (v)
            w->values = v;
        int64_t *t = realloc(w->times, c * sizeof *t);
        if (t)
            w->times = t;
        uint64_t *sh = realloc(w->shash, c * sizeof *sh);
        if (sh)
            w->shash = sh;
        uint32_t *so = realloc(w->soff, ((size_t)c + 1) * sizeof *so);
        if (so)
            w->soff = so;
        if (!st || !v || !t || !sh || !so)
            return SC_ENOMEM;
        w->cap = c;
    }
    w->shash[w->n] = sc_hash64(w->hbuf, (size_t)nf * sizeof *w->hbuf);
    w->soff[w->n] = w->nframes;
    w->nframes += (uint32_t)nf;
    w->soff[w->n + 1] = w->nframes;
    memcpy(w->values + (size_t)w->n * w->nt, values, w->nt * sizeof *values);
    w->times[w->n] = 0;
    w->n++;
    return 0;
}

/* Turns the collected stack hashes into stack ids, creating pending stacks for new ones. */
static int resolve_stacks(struct wctx *w)
{
    struct sc_store *s = w->s;
    int rc = 0;
    pthread_mutex_lock(&s->mu);
    for (uint32_t i = 0; i < w->n && rc == 0; i++) {
        uint32_t *slot = sc_map64_get(&s->stack_ids, w->shash[i]);
        if (slot) {
            w->stacks[i] = *slot;
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
        st->hash = w->shash[i];
        for (uint32_t k = w->soff[i]; k < w->soff[i + 1] && rc == 0; k++) {
            int64_t fid = frame_of_ref(w, w->frames[k]);
            if (fid < 0)
                rc = (int)fid;
            else
                sc_put_uvarint(&st->blob, (uint64_t)fid << 1 | (w->frames[k] >> 31));
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
        pthread_mutex_lock(&s->cache_mu);
        rc = cache_stack(s, st->id, (const uint8_t *)st->blob.data, st->blob.len);
        pthread_mutex_unlock(&s->cache_mu);
    }
    pthread_mutex_unlock(&s->mu);
    return rc;
}

/* Stored samples carry their timestamps; lazy ones (pprof) never have any. */
static int has_times(const struct sc_profile *p)
{
    for (uint32_t i = 0; i < p->nsamples; i++)
        if (p->samples[i].time_ns)
            return 1;
    return 0;
}

struct time_order {
    int64_t t;
    uint32_t row;
};

static int cmp_time(const void *a, const void *b)
{
    const struct time_order *x = a, *y = b;
    if (x->t != y->t)
        return x->t < y->t ? -1 : 1;
    return (x->row > y->row) - (x->row < y->row);
}

/* Builds the encoded block and totals from the collected rows. */
static int build_block(struct wctx *w, struct pend_write *pw, char *err)
{
    uint32_t n = w->n, nt = w->nt;
    struct sc_block b = {.format = w->timed ? SC_BLOCK_TIMED : SC_BLOCK_AGG, .n = n, .ncols = nt};
    b.stacks = malloc(((size_t)n + 1) * sizeof *b.stacks);
    b.values = malloc(((size_t)n * nt + 1) * sizeof *b.values);
    b.times = w->timed ? malloc(((size_t)n + 1) * sizeof *b.times) : NULL;
    struct time_order *ord = w->timed ? malloc(((size_t)n + 1) * sizeof *ord) : NULL;
    int rc = SC_ENOMEM;
    if (!b.stacks || !b.values || (w->timed && (!b.times || !ord)))
        goto out;
    if (w->timed) {
        for (uint32_t i = 0; i < n; i++)
            ord[i] = (struct time_order){w->times[i], i};
        qsort(ord, n, sizeof *ord, cmp_time);
    }
    for (uint32_t i = 0; i < n; i++) {
        uint32_t r = w->timed ? ord[i].row : i;
        b.stacks[i] = w->stacks[r];
        if (w->timed)
            b.times[i] = w->times[r];
        for (uint32_t c = 0; c < nt; c++)
            b.values[(size_t)c * n + i] = w->values[(size_t)r * nt + c];
    }
    if (!w->timed && (rc = sc_block_normalize(&b)) != 0)
        goto out;
    for (uint32_t c = 0; c < nt; c++) {
        int64_t t = 0;
        for (uint32_t i = 0; i < b.n; i++)
            t = (int64_t)((uint64_t)t + (uint64_t)b.values[(size_t)c * b.n + i]);
        sc_put_uvarint(&pw->totals, sc_zigzag(t));
    }
    pw->nsamples = b.n;
    rc = sc_block_encode(&b, &pw->block, w->s->opts.zstd_level);
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
static int64_t series_id_locked(struct sc_store *s, const char *tenant,
                                const struct sc_labels *labels, const char *canon, uint64_t h)
{
    uint32_t *slot = sc_map64_get(&s->series_ids, h);
    if (slot)
        return *slot;
    struct pend_series *se = calloc(1, sizeof *se);
    if (!se)
        return SC_ENOMEM;
    se->id = s->next_series;
    se->hash = h;
    se->tenant = strdup(tenant);
    se->labels = strdup(canon);
    se->npairs = labels->n;
    /* copy the pairs' strings: offsets first, pointers after the buffer stops moving */
    size_t offs[2 * MAX_LABELS];
    for (uint32_t i = 0; i < labels->n; i++) {
        offs[2 * i] = se->strings.len;
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
        se->names[i] = se->strings.data + offs[2 * i];
        se->values[i] = se->strings.data + offs[2 * i + 1];
    }
    s->next_series++;
    se->next = s->pseries;
    s->pseries = se;
    return se->id;
}

static int64_t kind_id_locked(struct sc_store *s, const char *profile, const char *types,
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

/* Inserts everything pending and the batch's profile rows in one transaction. */
static int commit_batch(struct sc_store *s, struct pend_write *batch, char *err)
{
    pthread_mutex_lock(&s->mu);
    struct pend_frame *pf = s->pframes;
    struct pend_stack *ps = s->pstacks;
    struct pend_series *pse = s->pseries;
    s->pframes = NULL;
    s->pstacks = NULL;
    s->pseries = NULL;
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
        rc = exec(db, "BEGIN IMMEDIATE", err);
#define PREP(sql)                                                                                  \
    do {                                                                                           \
        sqlite3_finalize(st);                                                                      \
        st = NULL;                                                                                 \
        if (!rc && sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)                       \
            rc = sqlerr(err, db, "writing profiles");                                              \
    } while (0)
#define STEP()                                                                                     \
    do {                                                                                           \
        if (!rc && sqlite3_step(st) != SQLITE_DONE)                                                \
            rc = sqlerr(err, db, "writing profiles");                                              \
        sqlite3_reset(st);                                                                         \
    } while (0)
    PREP("INSERT OR IGNORE INTO frames(id, hash, function, file, line, binary) "
         "VALUES(?,?,?,?,?,?)");
    for (struct pend_frame *f = pf; f && !rc; f = f->next) {
        sqlite3_bind_int64(st, 1, f->id);
        sqlite3_bind_int64(st, 2, (int64_t)f->hash);
        sqlite3_bind_text(st, 3, f->function, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 4, f->file, -1, SQLITE_STATIC);
        sqlite3_bind_int64(st, 5, f->line);
        sqlite3_bind_text(st, 6, f->binary, -1, SQLITE_STATIC);
        STEP();
    }
    PREP("INSERT OR IGNORE INTO stacks(id, hash, frames) VALUES(?,?,?)");
    for (struct pend_stack *x = ps; x && !rc; x = x->next) {
        sqlite3_bind_int64(st, 1, x->id);
        sqlite3_bind_int64(st, 2, (int64_t)x->hash);
        sqlite3_bind_blob(st, 3, x->blob.data ? x->blob.data : "", (int)x->blob.len,
                          SQLITE_STATIC);
        STEP();
    }
    PREP("INSERT OR IGNORE INTO series(id, hash, tenant, labels) VALUES(?,?,?,?)");
    for (struct pend_series *x = pse; x && !rc; x = x->next) {
        sqlite3_bind_int64(st, 1, x->id);
        sqlite3_bind_int64(st, 2, (int64_t)x->hash);
        sqlite3_bind_text(st, 3, x->tenant, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 4, x->labels, -1, SQLITE_STATIC);
        STEP();
    }
    PREP("INSERT OR IGNORE INTO series_labels(series_id, name, value) VALUES(?,?,?)");
    for (struct pend_series *x = pse; x && !rc; x = x->next)
        for (uint32_t i = 0; i < x->npairs && !rc; i++) {
            sqlite3_bind_int64(st, 1, x->id);
            sqlite3_bind_text(st, 2, x->names[i], -1, SQLITE_STATIC);
            sqlite3_bind_text(st, 3, x->values[i], -1, SQLITE_STATIC);
            STEP();
        }
    PREP("INSERT OR IGNORE INTO kinds(id, profile, types) VALUES(?,?,?)");
    for (uint32_t i = 0; i < nk && !rc; i++) {
        sqlite3_bind_int64(st, 1, ks[i].id);
        sqlite3_bind_text(st, 2, ks[i].profile, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 3, ks[i].types, -1, SQLITE_STATIC);
        STEP();
    }
    PREP("INSERT INTO profiles(series_id, kind_id, time_ns, duration_ns, period, timed, "
         "nsamples, totals, block) VALUES(?,?,?,?,?,?,?,?,?)");
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
    PREP("INSERT OR IGNORE INTO dirty(series_id, kind_id, res, bucket) VALUES(?,?,?,?)");
    for (struct pend_write *w = batch; w && !rc; w = w->next) {
        int64_t secs = floor_div(w->time_ns, 1000000000LL);
        static const int res[2] = {SC_ROLLUP_SHORT, SC_ROLLUP_HOUR};
        for (int k = 0; k < 2 && !rc; k++) {
            sqlite3_bind_int64(st, 1, w->series_id);
            sqlite3_bind_int64(st, 2, w->kind_id);
            sqlite3_bind_int64(st, 3, res[k]);
            sqlite3_bind_int64(st, 4, floor_div(secs, res[k]) * res[k]);
            STEP();
        }
    }
    sqlite3_finalize(st);
#undef PREP
#undef STEP
    if (!rc)
        rc = exec(db, "COMMIT", err);
    if (rc)
        sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
    pthread_mutex_unlock(&s->wdb_mu);

    pthread_mutex_lock(&s->mu);
    if (rc) {
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
    /* committed: the pending copies go */
    struct sc_store tmp;
    memset(&tmp, 0, sizeof tmp);
    tmp.pframes = pf;
    tmp.pstacks = ps;
    tmp.pseries = pse;
    free_pending(&tmp);
    return rc;
}

/* Queues pw and returns when a commit that includes it has finished. */
static int group_commit(struct sc_store *s, struct pend_write *pw, char *err)
{
    pthread_mutex_lock(&s->qmu);
    pw->next = NULL;
    *s->qtail = pw;
    s->qtail = &pw->next;
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

int sc_store_write(struct sc_store *s, const struct sc_store_write *wr, char *err)
{
    const struct sc_profile *p = wr->p;
    if (!wr->profile || !*wr->profile || strchr(wr->profile, ':'))
        return sc_errf(err, SC_EINVAL, "bad profile name '%s'", wr->profile ? wr->profile : "");
    if (!wr->labels || wr->labels->n > MAX_LABELS)
        return sc_errf(err, SC_ELIMIT, "%u labels is more than %u",
                       wr->labels ? (unsigned)wr->labels->n : 0, MAX_LABELS);
    if (p->nsample_types == 0)
        return sc_errf(err, SC_EINVAL, "profile has no sample types");
    struct sc_buf canon = SC_BUF_INIT, types = SC_BUF_INIT, key = SC_BUF_INIT;
    struct pend_write pw;
    memset(&pw, 0, sizeof pw);
    struct wctx w;
    memset(&w, 0, sizeof w);
    int rc = 0;
    sc_labels_format(wr->labels, &canon);
    for (uint32_t i = 0; i < p->nsample_types; i++) {
        struct sc_str t = sc_profile_str(p, p->sample_types[i].type);
        struct sc_str u = sc_profile_str(p, p->sample_types[i].unit);
        if (memchr(t.ptr, ',', t.len) || memchr(t.ptr, '/', t.len) ||
            memchr(u.ptr, ',', u.len)) {
            rc = sc_errf(err, SC_EINVAL, "bad sample type name '%.*s'", (int)t.len, t.ptr);
            goto out;
        }
        if (i)
            sc_buf_putc(&types, ',');
        sc_buf_append(&types, t.ptr, t.len);
        sc_buf_putc(&types, '/');
        sc_buf_append(&types, u.ptr, u.len);
    }
    const char *tenant = tenant_of(wr->tenant);
    sc_buf_puts(&key, tenant);
    sc_buf_putc(&key, 0);
    sc_buf_append(&key, canon.data, canon.len);
    if (canon.oom || types.oom || key.oom) {
        rc = sc_errf(err, SC_ENOMEM, "out of memory");
        goto out;
    }
    uint64_t sh = sc_hash64(key.data, key.len);

    w.s = s;
    w.p = p;
    w.nt = p->nsample_types;
    w.shift = wr->time_shift_ns;
    rc = hash_frames(&w);
    if (rc) {
        rc = sc_errf(err, rc, "storing frames: %s", sc_strerror(rc));
        goto out;
    }
    rc = sc_profile_foreach_sample(p, collect_visit, &w, err);
    if (rc == 0)
        rc = resolve_stacks(&w);
    if (rc) {
        if (rc != SC_EFORMAT)
            rc = sc_errf(err, rc, "storing stacks: %s", sc_strerror(rc));
        goto out;
    }
    /* timestamps come from the stored samples (collect_visit sees values only) */
    if (!p->lazy && has_times(p)) {
        w.timed = 1;
        uint32_t r = 0;
        for (uint32_t i = 0; i < p->nsamples && r < w.n; i++) {
            const int64_t *v = p->values + (size_t)i * w.nt;
            int any = 0;
            for (uint32_t c = 0; c < w.nt; c++)
                any |= v[c] != 0;
            if (any)
                w.times[r++] = p->samples[i].time_ns + wr->time_shift_ns;
        }
    }
    rc = build_block(&w, &pw, err);
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
    pw.series_id = (uint32_t)sid;
    pw.kind_id = (uint32_t)kid;
    pw.time_ns = wr->time_ns;
    pw.duration_ns = wr->duration_ns;
    pw.period = p->period;
    pw.timed = w.timed;
    rc = group_commit(s, &pw, err);
out:
    sc_buf_release(&canon);
    sc_buf_release(&types);
    sc_buf_release(&key);
    sc_buf_release(&pw.totals);
    sc_buf_release(&pw.block);
    free(w.line_hash);
    free(w.line_loc);
    free(w.loc_noline);
    free(w.stacks);
    free(w.times);
    free(w.values);
    free(w.hbuf);
    free(w.shash);
    free(w.soff);
    free(w.frames);
    return rc;
}

/* ---- listing ---- */

int sc_store_types(struct sc_store *s, const char *tenant, sc_store_type_cb cb, void *ctx,
                   char *err)
{
    sqlite3 *db = conn_get(s, err);
    if (!db)
        return SC_EIO;
    sqlite3_stmt *st;
    int rc = 0;
    if (sqlite3_prepare_v2(db,
                           "SELECT DISTINCT k.profile, k.types FROM kinds k WHERE EXISTS "
                           "(SELECT 1 FROM profiles p JOIN series s ON s.id = p.series_id "
                           "WHERE p.kind_id = k.id AND s.tenant = ?) ORDER BY 1, 2",
                           -1, &st, NULL) != SQLITE_OK) {
        rc = sqlerr(err, db, "listing types");
        conn_put(s, db);
        return rc;
    }
    sqlite3_bind_text(st, 1, tenant_of(tenant), -1, SQLITE_STATIC);
    /* collect distinct "profile:type" ids, then report sorted */
    struct sc_buf seen = SC_BUF_INIT;
    struct ent {
        size_t id, prof, type, unit;
        int gauge;
    } *ents = NULL;
    size_t nents = 0;
    while (rc == 0 && sqlite3_step(st) == SQLITE_ROW) {
        const char *prof = (const char *)sqlite3_column_text(st, 0);
        const char *types = (const char *)sqlite3_column_text(st, 1);
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
                en.gauge = 0;
                ents[nents++] = en;
            }
            t += len + (e ? 1 : 0);
        }
    }
    sqlite3_finalize(st);
    conn_put(s, db);
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

static int list_strings(struct sc_store *s, const char *sql, const char *tenant, const char *name,
                        sc_store_str_cb cb, void *ctx, char *err)
{
    sqlite3 *db = conn_get(s, err);
    if (!db)
        return SC_EIO;
    sqlite3_stmt *st;
    int rc = 0;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
        rc = sqlerr(err, db, "listing labels");
        conn_put(s, db);
        return rc;
    }
    sqlite3_bind_text(st, 1, tenant_of(tenant), -1, SQLITE_STATIC);
    if (name)
        sqlite3_bind_text(st, 2, name, -1, SQLITE_STATIC);
    while (sqlite3_step(st) == SQLITE_ROW)
        if (cb(ctx, (const char *)sqlite3_column_text(st, 0)))
            break;
    sqlite3_finalize(st);
    conn_put(s, db);
    return 0;
}

int sc_store_label_names(struct sc_store *s, const char *tenant, sc_store_str_cb cb, void *ctx,
                         char *err)
{
    return list_strings(s,
                        "SELECT DISTINCT l.name FROM series_labels l JOIN series s "
                        "ON s.id = l.series_id WHERE s.tenant = ? ORDER BY 1",
                        tenant, NULL, cb, ctx, err);
}

int sc_store_label_values(struct sc_store *s, const char *tenant, const char *name,
                          sc_store_str_cb cb, void *ctx, char *err)
{
    return list_strings(s,
                        "SELECT DISTINCT l.value FROM series_labels l JOIN series s "
                        "ON s.id = l.series_id WHERE s.tenant = ? AND l.name = ? ORDER BY 1",
                        tenant, name, cb, ctx, err);
}

/* Kinds that carry the profile type id "profile:sample_type", with its column in each. */
struct kind_col {
    uint32_t kind, col;
    char unit[64];
};

static int kinds_for_type(struct sc_store *s, const char *type, struct kind_col *out,
                          uint32_t max, int *gauge)
{
    const char *colon = strchr(type ? type : "", ':');
    if (!colon)
        return 0;
    size_t plen = (size_t)(colon - type);
    const char *st = colon + 1;
    size_t slen = strlen(st);
    *gauge = 0;
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
                snprintf(out[n].unit, sizeof out[n].unit, "%.*s",
                         slash ? (int)(len - tlen - 1) : 0, slash ? slash + 1 : "");
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

#define MAX_KINDS 64

int sc_store_series_list(struct sc_store *s, const char *tenant, const char *type, int64_t from,
                         int64_t until, sc_store_series_cb cb, void *ctx, char *err)
{
    struct kind_col kc[MAX_KINDS];
    int gauge, nk = 0;
    if (type && *type) {
        nk = kinds_for_type(s, type, kc, MAX_KINDS, &gauge);
        if (nk == 0)
            return 0;
    }
    sqlite3 *db = conn_get(s, err);
    if (!db)
        return SC_EIO;
    sqlite3_stmt *st, *ex = NULL;
    int rc = 0;
    if (sqlite3_prepare_v2(db, "SELECT id, labels FROM series WHERE tenant = ? ORDER BY labels",
                           -1, &st, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(db,
                           "SELECT 1 FROM profiles WHERE series_id = ? AND kind_id = ? AND "
                           "time_ns >= ? AND time_ns < ? LIMIT 1",
                           -1, &ex, NULL) != SQLITE_OK) {
        rc = sqlerr(err, db, "listing series");
        sqlite3_finalize(st);
        conn_put(s, db);
        return rc;
    }
    sqlite3_bind_text(st, 1, tenant_of(tenant), -1, SQLITE_STATIC);
    while (sqlite3_step(st) == SQLITE_ROW) {
        int64_t id = sqlite3_column_int64(st, 0);
        int has = 0;
        if (nk == 0) {
            /* any type: a profile in range */
            sqlite3_stmt *any;
            if (sqlite3_prepare_v2(db,
                                   "SELECT 1 FROM profiles WHERE series_id = ? AND time_ns >= ? "
                                   "AND time_ns < ? LIMIT 1",
                                   -1, &any, NULL) == SQLITE_OK) {
                sqlite3_bind_int64(any, 1, id);
                sqlite3_bind_int64(any, 2, from);
                sqlite3_bind_int64(any, 3, until);
                has = sqlite3_step(any) == SQLITE_ROW;
                sqlite3_finalize(any);
            }
        }
        for (int k = 0; k < nk && !has; k++) {
            sqlite3_bind_int64(ex, 1, id);
            sqlite3_bind_int64(ex, 2, kc[k].kind);
            sqlite3_bind_int64(ex, 3, from);
            sqlite3_bind_int64(ex, 4, until);
            has = sqlite3_step(ex) == SQLITE_ROW;
            sqlite3_reset(ex);
        }
        if (!has)
            continue;
        struct sc_store_series se = {(uint64_t)id, (const char *)sqlite3_column_text(st, 1)};
        if (cb(ctx, &se))
            break;
    }
    sqlite3_finalize(st);
    sqlite3_finalize(ex);
    conn_put(s, db);
    return rc;
}

/* ---- reading blocks ---- */

/* Accumulates (stack -> value) sums. */
struct acc {
    struct sc_map64 map; /* stack -> index */
    uint32_t *stacks;
    int64_t *vals;
    uint32_t n, cap;
};

static void acc_release(struct acc *a)
{
    sc_map64_release(&a->map);
    free(a->stacks);
    free(a->vals);
    memset(a, 0, sizeof *a);
}

static int acc_add(struct acc *a, uint32_t stack, int64_t v)
{
    int added;
    uint32_t *slot = sc_map64_upsert(&a->map, stack, a->n, &added);
    if (!slot)
        return SC_ENOMEM;
    if (added) {
        if (a->n == a->cap) {
            uint32_t c = a->cap ? a->cap * 2 : 1024;
            uint32_t *st = realloc(a->stacks, c * sizeof *st);
            if (st)
                a->stacks = st;
            int64_t *vl = realloc(a->vals, c * sizeof *vl);
            if (vl)
                a->vals = vl;
            if (!st || !vl)
                return SC_ENOMEM;
            a->cap = c;
        }
        a->stacks[a->n] = stack;
        a->vals[a->n++] = 0;
    }
    a->vals[*slot] = (int64_t)((uint64_t)a->vals[*slot] + (uint64_t)v);
    return 0;
}

/* Adds column col of an encoded block to a. */
static int acc_block(struct acc *a, const void *data, size_t len, uint32_t col, char *err)
{
    struct sc_block b;
    int rc = sc_block_decode(data, len, MAX_BLOCK_ROWS, &b, err);
    if (rc)
        return rc;
    if (col >= b.ncols) {
        sc_block_release(&b);
        return sc_errf(err, SC_EFORMAT, "sample block lacks column %u", (unsigned)col);
    }
    const int64_t *v = b.values + (size_t)col * b.n;
    for (uint32_t i = 0; i < b.n && rc == 0; i++)
        if (v[i])
            rc = acc_add(a, b.stacks[i], v[i]);
    sc_block_release(&b);
    return rc ? sc_errf(err, rc, "out of memory") : 0;
}

/* The buckets of [from, until) that a rollup answers: full buckets that are not dirty. */
struct plan {
    int64_t *hours, *minutes; /* bucket starts in s */
    uint32_t nhours, nminutes;
};

static int is_dirty(sqlite3_stmt *dq, uint64_t series, uint32_t kind, int res, int64_t bucket)
{
    sqlite3_bind_int64(dq, 1, (int64_t)series);
    sqlite3_bind_int64(dq, 2, kind);
    sqlite3_bind_int64(dq, 3, res);
    sqlite3_bind_int64(dq, 4, bucket);
    int d = sqlite3_step(dq) == SQLITE_ROW;
    sqlite3_reset(dq);
    return d;
}

/* The statements a read runs for every series (prepared once per read). */
struct reader {
    sqlite3 *db;
    sqlite3_stmt *dirty, *rollup, *raw, *span;
};

static void reader_close(struct reader *r)
{
    sqlite3_finalize(r->dirty);
    sqlite3_finalize(r->rollup);
    sqlite3_finalize(r->raw);
    sqlite3_finalize(r->span);
    memset(r, 0, sizeof *r);
}

static int reader_open(struct reader *r, sqlite3 *db, char *err)
{
    memset(r, 0, sizeof *r);
    r->db = db;
    if (sqlite3_prepare_v2(db,
                           "SELECT 1 FROM dirty WHERE series_id=? AND kind_id=? AND res=? AND "
                           "bucket=?",
                           -1, &r->dirty, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(db,
                           "SELECT nprofiles, block, duration_ns FROM rollups WHERE series_id=? "
                           "AND kind_id=? AND res=? AND bucket=?",
                           -1, &r->rollup, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(db,
                           "SELECT block, duration_ns FROM profiles WHERE series_id=? AND "
                           "kind_id=? AND time_ns >= ? AND time_ns < ?",
                           -1, &r->raw, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(db,
                           "SELECT min(time_ns), max(time_ns) FROM profiles WHERE "
                           "series_id=? AND kind_id=? AND time_ns >= ? AND time_ns < ?",
                           -1, &r->span, NULL) != SQLITE_OK) {
        int rc = sqlerr(err, db, "reading profiles");
        reader_close(r);
        return rc;
    }
    return 0;
}

/* What read_series covered: profiles and the sum of their durations. */
struct covered {
    int64_t profiles, duration_ns;
};

/* Reads one series/kind of [from, until) into a, via rollups of at most max_res seconds
 * where they are fresh (0: raw profiles only), adding what it read to *cov. */
static int read_series(struct reader *rd, uint64_t series, const struct kind_col *kc, int64_t from,
                       int64_t until, int64_t max_res, struct acc *a, struct covered *cov,
                       char *err)
{
    int rc = 0;
    /* Only the span that holds profiles needs walking (ranges like [0, forever) are
     * common). */
    const int64_t NS = 1000000000LL;
    {
        sqlite3_stmt *mm = rd->span;
        sqlite3_bind_int64(mm, 1, (int64_t)series);
        sqlite3_bind_int64(mm, 2, kc->kind);
        sqlite3_bind_int64(mm, 3, from);
        sqlite3_bind_int64(mm, 4, until);
        int have = sqlite3_step(mm) == SQLITE_ROW && sqlite3_column_type(mm, 0) != SQLITE_NULL;
        int64_t lo = have ? sqlite3_column_int64(mm, 0) : 0;
        int64_t hi = have ? sqlite3_column_int64(mm, 1) : 0;
        sqlite3_reset(mm);
        if (!have) return 0;
        /* keep bucket alignment where the range allows it: start at lo's hour */
        int64_t lo_al = floor_div(lo, SC_ROLLUP_HOUR * NS) * SC_ROLLUP_HOUR * NS;
        if (lo_al > from)
            from = lo_al;
        int64_t hi_al = (floor_div(hi, SC_ROLLUP_HOUR * NS) + 1) * SC_ROLLUP_HOUR * NS;
        if (hi_al < until)
            until = hi_al;
    }
    /* Walk [from, until) left to right: a full clean hour from its rollup, else a full
     * clean ten minutes from its rollup, else raw profiles up to the next ten-minute
     * boundary. */
    sqlite3_stmt *dq = rd->dirty, *rq = rd->rollup, *pq = rd->raw;
    int64_t t = from;
    while (t < until && rc == 0) {
        int64_t secs = floor_div(t, NS);
        int used = 0;
        if (max_res > 0 && t % NS == 0) {
            static const int res[2] = {SC_ROLLUP_HOUR, SC_ROLLUP_SHORT};
            for (int k = 0; k < 2 && !used; k++) {
                int64_t r = res[k];
                if (r > max_res || secs % r != 0 || t + r * NS > until) continue;
                if (is_dirty(dq, series, kc->kind, (int)r, secs))
                    continue;
                sqlite3_bind_int64(rq, 1, (int64_t)series);
                sqlite3_bind_int64(rq, 2, kc->kind);
                sqlite3_bind_int64(rq, 3, r);
                sqlite3_bind_int64(rq, 4, secs);
                if (sqlite3_step(rq) == SQLITE_ROW) {
                    cov->profiles += sqlite3_column_int64(rq, 0);
                    cov->duration_ns += sqlite3_column_int64(rq, 2);
                    rc = acc_block(a, sqlite3_column_blob(rq, 1),
                                   (size_t)sqlite3_column_bytes(rq, 1), kc->col, err);
                }
                sqlite3_reset(rq);
                /* a clean bucket without a rollup row holds no profiles */
                t += r * NS;
                used = 1;
            }
        }
        if (used)
            continue;
        int64_t next = (floor_div(t, SC_ROLLUP_SHORT * NS) + 1) * SC_ROLLUP_SHORT * NS;
        if (next > until || max_res <= 0) next = until;
        sqlite3_bind_int64(pq, 1, (int64_t)series);
        sqlite3_bind_int64(pq, 2, kc->kind);
        sqlite3_bind_int64(pq, 3, t);
        sqlite3_bind_int64(pq, 4, next);
        while (rc == 0 && sqlite3_step(pq) == SQLITE_ROW) {
            cov->profiles++;
            cov->duration_ns += sqlite3_column_int64(pq, 1);
            rc = acc_block(a, sqlite3_column_blob(pq, 0), (size_t)sqlite3_column_bytes(pq, 0),
                           kc->col, err);
        }
        sqlite3_reset(pq);
        t = next;
    }
    return rc;
}

/* Rounds sum / n to the nearest integer, halves away from zero. */
static int64_t avg_round(int64_t sum, int64_t n)
{
    int64_t q = sum / n, r = sum % n;
    if (2 * (r < 0 ? -r : r) >= n)
        q += sum < 0 ? -1 : 1;
    return q;
}

/* Builds a profile from (stack id, value) rows (times optional) using the cache. */
static int build_profile(struct sc_store *s, sqlite3 *db, const char *type, const char *unit,
                         const uint32_t *stacks, const int64_t *vals, const int64_t *times,
                         uint32_t n, struct sc_profile **out, char *err)
{
    int rc = cache_fill(s, db, stacks, n, err);
    if (rc)
        return rc;
    struct sc_profile *p = sc_profile_new();
    if (!p)
        return sc_errf(err, SC_ENOMEM, "out of memory");
    const char *colon = strchr(type, ':');
    char tname[128];
    snprintf(tname, sizeof tname, "%s", colon ? colon + 1 : type);
    struct sc_map64 fmap, lmap, mmap; /* frame id -> function; run hash -> location; binary */
    sc_map64_init(&fmap);
    sc_map64_init(&lmap);
    sc_map64_init(&mmap);
    uint32_t *locs = NULL, lcap = 0;
    if (sc_profile_add_sample_type(p, tname, unit) < 0) {
        rc = SC_ENOMEM;
        goto out;
    }
    p->default_sample_type = p->sample_types[0].type;
    pthread_mutex_lock(&s->cache_mu);
    for (uint32_t i = 0; i < n && rc == 0; i++) {
        uint32_t *ci = sc_map64_get(&s->stack_cache, stacks[i]);
        if (!ci) {
            rc = SC_EFORMAT;
            break;
        }
        const uint32_t *fr = s->stack_data + s->stack_off[*ci];
        uint32_t nf = s->stack_len[*ci], nl = 0;
        if (nf > lcap) {
            lcap = nf + 16;
            uint32_t *nlp = realloc(locs, lcap * sizeof *nlp);
            if (!nlp) {
                rc = SC_ENOMEM;
                break;
            }
            locs = nlp;
        }
        /* frames leaf first; a run of inlined frames ends at a frame that is not */
        for (uint32_t j = 0; j < nf && rc == 0;) {
            uint32_t k = j;
            while (k < nf && (fr[k] & 1))
                k++;
            if (k == nf)
                k = nf - 1;
            uint64_t key = sc_hash64(fr + j, (size_t)(k - j + 1) * sizeof *fr);
            int added;
            uint32_t *ls = sc_map64_upsert(&lmap, key, p->nlocations, &added);
            if (!ls) {
                rc = SC_ENOMEM;
                break;
            }
            if (added) {
                /* a location with lines j..k (innermost first) */
                int64_t li = -1;
                for (uint32_t x = j; x <= k && rc == 0; x++) {
                    uint32_t fid = fr[x] >> 1;
                    uint32_t *fi = sc_map64_get(&s->frame_cache, fid);
                    if (!fi) {
                        rc = SC_EFORMAT;
                        break;
                    }
                    const struct frame_info *f = &s->finfo[*fi];
                    uint64_t fkey = sc_hash64(f->function, strlen(f->function)) ^
                                    (sc_hash64(f->file, strlen(f->file)) * 31);
                    int fadded;
                    uint32_t *fs = sc_map64_upsert(&fmap, fkey, p->nfunctions, &fadded);
                    if (!fs) {
                        rc = SC_ENOMEM;
                        break;
                    }
                    if (fadded) {
                        int64_t nm = sc_profile_intern(p, f->function, strlen(f->function));
                        int64_t fl = sc_profile_intern(p, f->file, strlen(f->file));
                        if (nm < 0 || fl < 0 ||
                            sc_profile_add_function(p, (uint32_t)nm, (uint32_t)fl) < 0) {
                            rc = SC_ENOMEM;
                            break;
                        }
                    }
                    uint32_t fn = *fs;
                    if (x == j) {
                        li = sc_profile_add_simple_location(p, fn);
                        if (li < 0) {
                            rc = SC_ENOMEM;
                            break;
                        }
                        p->lines[p->locations[li].line_start].line = f->line;
                        /* the binary becomes the location's mapping */
                        if (*f->binary) {
                            uint64_t bkey = sc_hash64(f->binary, strlen(f->binary));
                            int madded;
                            uint32_t *ms = sc_map64_upsert(&mmap, bkey, p->nmappings, &madded);
                            if (!ms) {
                                rc = SC_ENOMEM;
                                break;
                            }
                            if (madded) {
                                struct sc_mapping *nm2 =
                                    realloc(p->mappings, (p->nmappings + 1) * sizeof *nm2);
                                if (nm2)
                                    p->mappings = nm2;
                                int64_t bs = sc_profile_intern(p, f->binary, strlen(f->binary));
                                if (!nm2 || bs < 0) {
                                    rc = SC_ENOMEM;
                                    break;
                                }
                                memset(&p->mappings[p->nmappings], 0, sizeof *nm2);
                                p->mappings[p->nmappings].id = p->nmappings + 1;
                                p->mappings[p->nmappings].filename = (uint32_t)bs;
                                p->mappings[p->nmappings].has_functions = 1;
                                p->nmappings++;
                                p->mappings_cap = p->nmappings;
                            }
                            p->locations[li].mapping = *ms + 1;
                        }
                    } else {
                        /* append a line to the location just made (its lines are last) */
                        if (p->nlines == p->lines_cap) {
                            uint32_t c = p->lines_cap * 2 + 16;
                            struct sc_line *nlines = realloc(p->lines, c * sizeof *nlines);
                            if (!nlines) {
                                rc = SC_ENOMEM;
                                break;
                            }
                            p->lines = nlines;
                            p->lines_cap = c;
                        }
                        p->lines[p->nlines++] = (struct sc_line){fn + 1, f->line, 0};
                        p->locations[li].nlines++;
                    }
                }
            }
            locs[nl++] = *ls;
            j = k + 1;
        }
        if (rc)
            break;
        int64_t si = sc_profile_add_sample(p, locs, nl, &vals[i], times ? times[i] : 0);
        if (si < 0)
            rc = (int)si;
    }
    pthread_mutex_unlock(&s->cache_mu);
out:
    free(locs);
    sc_map64_release(&fmap);
    sc_map64_release(&lmap);
    sc_map64_release(&mmap);
    if (rc) {
        sc_profile_free(p);
        return sc_errf(err, rc, "building the merged profile: %s", sc_strerror(rc));
    }
    *out = p;
    return 0;
}

/* Drops the stacks of a that summed to zero; returns how many are left. */
static uint32_t acc_compact(struct acc *a)
{
    uint32_t m = 0;
    for (uint32_t i = 0; i < a->n; i++)
        if (a->vals[i]) {
            a->stacks[m] = a->stacks[i];
            a->vals[m++] = a->vals[i];
        }
    return m;
}

/* Reads series `series` of [from, until) (every kind of the type) into total with the
 * merge's rule: summed, or for gauges averaged over the series' profiles (one is scratch
 * space). Adds what it read to *cov. */
static int read_merged(struct reader *rd, uint64_t series, const struct kind_col *kc, int nk,
                       int gauge, int64_t from, int64_t until, int64_t max_res, struct acc *total,
                       struct acc *one, struct covered *cov, char *err)
{
    struct acc *a = gauge ? one : total;
    struct covered c = {0, 0};
    int rc = 0;
    for (int k = 0; k < nk && rc == 0; k++)
        rc = read_series(rd, series, &kc[k], from, until, max_res, a, &c, err);
    if (gauge && rc == 0 && c.profiles > 0)
        for (uint32_t j = 0; j < one->n && rc == 0; j++)
            rc = acc_add(total, one->stacks[j], avg_round(one->vals[j], c.profiles));
    if (gauge) {
        acc_release(one);
        memset(one, 0, sizeof *one);
    }
    cov->profiles += c.profiles;
    cov->duration_ns += c.duration_ns;
    return rc == SC_ENOMEM ? sc_errf(err, rc, "out of memory") : rc;
}

int sc_store_merge(struct sc_store *s, const struct sc_store_query *q, struct sc_profile **out,
                   char *err)
{
    *out = NULL;
    struct kind_col kc[MAX_KINDS];
    int gauge;
    int nk = kinds_for_type(s, q->type, kc, MAX_KINDS, &gauge);
    if (nk == 0)
        return sc_errf(err, SC_ENOTFOUND, "no profiles of type '%s'", q->type ? q->type : "");
    sqlite3 *db = conn_get(s, err);
    if (!db)
        return SC_EIO;
    struct acc total, one;
    memset(&total, 0, sizeof total);
    memset(&one, 0, sizeof one);
    struct reader rd;
    /* a read transaction: one consistent snapshot for the whole merge */
    int rc = exec(db, "BEGIN", err);
    if (rc == 0) rc = reader_open(&rd, db, err);
    struct covered cov = {0, 0};
    int64_t max_res = q->raw_only ? 0 : SC_ROLLUP_HOUR;
    for (uint32_t i = 0; i < q->nseries && rc == 0; i++)
        rc = read_merged(&rd, q->series[i], kc, nk, gauge, q->from_ns, q->until_ns, max_res, &total,
                         &one, &cov, err);
    if (rc == 0) {
        uint32_t m = acc_compact(&total);
        rc = build_profile(s, db, q->type, kc[0].unit, total.stacks, total.vals, NULL, m, out,
                           err);
    }
    reader_close(&rd);
    sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
    conn_put(s, db);
    acc_release(&total);
    acc_release(&one);
    return rc;
}

int sc_store_span(struct sc_store *s, const struct sc_store_query *q, int64_t *first_ns,
                  int64_t *last_ns, char *err)
{
    *first_ns = *last_ns = 0;
    struct kind_col kc[MAX_KINDS];
    int gauge;
    int nk = kinds_for_type(s, q->type, kc, MAX_KINDS, &gauge);
    if (nk == 0) return SC_ENOTFOUND;
    sqlite3 *db = conn_get(s, err);
    if (!db) return SC_EIO;
    struct reader rd;
    int rc = reader_open(&rd, db, err), found = 0;
    for (uint32_t i = 0; i < q->nseries && rc == 0; i++)
        for (int k = 0; k < nk; k++) {
            sqlite3_stmt *mm = rd.span;
            sqlite3_bind_int64(mm, 1, (int64_t)q->series[i]);
            sqlite3_bind_int64(mm, 2, kc[k].kind);
            sqlite3_bind_int64(mm, 3, q->from_ns);
            sqlite3_bind_int64(mm, 4, q->until_ns);
            if (sqlite3_step(mm) == SQLITE_ROW && sqlite3_column_type(mm, 0) != SQLITE_NULL) {
                int64_t lo = sqlite3_column_int64(mm, 0), hi = sqlite3_column_int64(mm, 1);
                if (!found || lo < *first_ns) *first_ns = lo;
                if (!found || hi > *last_ns) *last_ns = hi;
                found = 1;
            }
            sqlite3_reset(mm);
        }
    reader_close(&rd);
    conn_put(s, db);
    return rc ? rc : found ? 0 : SC_ENOTFOUND;
}

int sc_store_merge_buckets(struct sc_store *s, const struct sc_store_query *q, int64_t bucket_ns,
                           sc_store_bucket_cb cb, void *ctx, char *err)
{
    const int64_t NS = 1000000000LL;
    if (bucket_ns < NS || q->until_ns <= q->from_ns)
        return sc_errf(err, SC_EINVAL, "bad bucket or range");
    struct kind_col kc[MAX_KINDS];
    int gauge;
    int nk = kinds_for_type(s, q->type, kc, MAX_KINDS, &gauge);
    if (nk == 0)
        return sc_errf(err, SC_ENOTFOUND, "no profiles of type '%s'", q->type ? q->type : "");
    /* rollups serve a bucket only when it is made of whole rollup buckets */
    int64_t secs = bucket_ns / NS;
    int64_t max_res = q->raw_only || bucket_ns % NS ? 0
                      : secs % SC_ROLLUP_HOUR == 0  ? SC_ROLLUP_HOUR
                      : secs % SC_ROLLUP_SHORT == 0 ? SC_ROLLUP_SHORT
                                                    : 0;
    sqlite3 *db = conn_get(s, err);
    if (!db) return SC_EIO;
    struct acc total, one;
    memset(&total, 0, sizeof total);
    memset(&one, 0, sizeof one);
    struct reader rd;
    int rc = exec(db, "BEGIN", err);
    if (rc == 0) rc = reader_open(&rd, db, err);
    /* buckets are aligned to multiples of their width, so rollups line up */
    int64_t b0 = floor_div(q->from_ns, bucket_ns) * bucket_ns;
    for (int64_t b = b0; b < q->until_ns && rc == 0; b += bucket_ns) {
        int64_t from = b < q->from_ns ? q->from_ns : b;
        int64_t until = b + bucket_ns > q->until_ns ? q->until_ns : b + bucket_ns;
        struct covered cov = {0, 0};
        uint32_t nseries = 0;
        for (uint32_t i = 0; i < q->nseries && rc == 0; i++) {
            int64_t before = cov.profiles;
            rc = read_merged(&rd, q->series[i], kc, nk, gauge, from, until, max_res, &total, &one,
                             &cov, err);
            nseries += cov.profiles > before;
        }
        if (rc || cov.profiles == 0) continue;
        struct sc_profile *p = NULL;
        uint32_t m = acc_compact(&total);
        rc = build_profile(s, db, q->type, kc[0].unit, total.stacks, total.vals, NULL, m, &p, err);
        acc_release(&total);
        memset(&total, 0, sizeof total);
        if (rc) break;
        struct sc_store_bucket bk = {from, until, cov.profiles, nseries, cov.duration_ns, gauge};
        int stop = cb(ctx, &bk, p);
        sc_profile_free(p);
        if (stop) break;
    }
    reader_close(&rd);
    sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
    conn_put(s, db);
    acc_release(&total);
    acc_release(&one);
    return rc;
}

/* ---- timeline ---- */

int sc_store_timeline(struct sc_store *s, const struct sc_store_query *q, int64_t step_ns,
                      int64_t *values, char *err)
{
    if (step_ns <= 0 || q->until_ns <= q->from_ns)
        return sc_errf(err, SC_EINVAL, "bad timeline range or step");
    uint64_t nsteps = (uint64_t)((q->until_ns - q->from_ns + step_ns - 1) / step_ns);
    memset(values, 0, (size_t)q->nseries * nsteps * sizeof *values);
    struct kind_col kc[MAX_KINDS];
    int gauge;
    int nk = kinds_for_type(s, q->type, kc, MAX_KINDS, &gauge);
    if (nk == 0)
        return 0;
    int64_t *counts = gauge ? calloc(nsteps, sizeof *counts) : NULL;
    if (gauge && !counts)
        return sc_errf(err, SC_ENOMEM, "out of memory");
    sqlite3 *db = conn_get(s, err);
    if (!db) {
        free(counts);
        return SC_EIO;
    }
    sqlite3_stmt *st;
    int rc = 0;
    if (sqlite3_prepare_v2(db,
                           "SELECT time_ns, totals FROM profiles WHERE series_id=? AND kind_id=? "
                           "AND time_ns >= ? AND time_ns < ?",
                           -1, &st, NULL) != SQLITE_OK) {
        rc = sqlerr(err, db, "reading the timeline");
        conn_put(s, db);
        free(counts);
        return rc;
    }
    for (uint32_t i = 0; i < q->nseries; i++) {
        int64_t *row = values + (size_t)i * nsteps;
        if (counts)
            memset(counts, 0, nsteps * sizeof *counts);
        for (int k = 0; k < nk; k++) {
            sqlite3_bind_int64(st, 1, (int64_t)q->series[i]);
            sqlite3_bind_int64(st, 2, kc[k].kind);
            sqlite3_bind_int64(st, 3, q->from_ns);
            sqlite3_bind_int64(st, 4, q->until_ns);
            while (sqlite3_step(st) == SQLITE_ROW) {
                uint64_t step = (uint64_t)((sqlite3_column_int64(st, 0) - q->from_ns) / step_ns);
                const uint8_t *p = sqlite3_column_blob(st, 1);
                const uint8_t *end = p + sqlite3_column_bytes(st, 1);
                uint64_t v = 0;
                for (uint32_t c = 0; c <= kc[k].col; c++)
                    if (sc_get_uvarint(&p, end, &v))
                        v = 0;
                row[step] += sc_unzigzag(v);
                if (counts)
                    counts[step]++;
            }
            sqlite3_reset(st);
        }
        for (uint64_t k = 0; counts && k < nsteps; k++)
            if (counts[k])
                row[k] = avg_round(row[k], counts[k]);
    }
    sqlite3_finalize(st);
    conn_put(s, db);
    free(counts);
    return rc;
}

/* ---- timed samples ---- */

int sc_store_timed(struct sc_store *s, const struct sc_store_query *q, struct sc_profile **out,
                   char *err)
{
    *out = NULL;
    struct kind_col kc[MAX_KINDS];
    int gauge;
    int nk = kinds_for_type(s, q->type, kc, MAX_KINDS, &gauge);
    if (nk == 0)
        return sc_errf(err, SC_ENOTFOUND, "no profiles of type '%s'", q->type ? q->type : "");
    sqlite3 *db = conn_get(s, err);
    if (!db)
        return SC_EIO;
    sqlite3_stmt *st;
    int rc = 0;
    uint32_t *stacks = NULL, n = 0, cap = 0;
    int64_t *vals = NULL, *times = NULL;
    if (sqlite3_prepare_v2(db,
                           "SELECT block FROM profiles WHERE series_id=? AND kind_id=? AND "
                           "timed=1 AND time_ns >= ? AND time_ns < ? ORDER BY time_ns",
                           -1, &st, NULL) != SQLITE_OK) {
        rc = sqlerr(err, db, "reading samples");
        conn_put(s, db);
        return rc;
    }
    exec(db, "BEGIN", NULL);
    for (uint32_t i = 0; i < q->nseries && rc == 0; i++)
        for (int k = 0; k < nk && rc == 0; k++) {
            sqlite3_bind_int64(st, 1, (int64_t)q->series[i]);
            sqlite3_bind_int64(st, 2, kc[k].kind);
            /* a profile's samples may start before its own time; a little slack */
            sqlite3_bind_int64(st, 3, q->from_ns - 3600 * 1000000000LL);
            sqlite3_bind_int64(st, 4, q->until_ns);
            while (rc == 0 && sqlite3_step(st) == SQLITE_ROW) {
                struct sc_block b;
                rc = sc_block_decode(sqlite3_column_blob(st, 0),
                                     (size_t)sqlite3_column_bytes(st, 0), MAX_BLOCK_ROWS, &b,
                                     err);
                if (rc)
                    break;
                for (uint32_t r = 0; r < b.n && rc == 0; r++) {
                    int64_t v = b.values[(size_t)kc[k].col * b.n + r];
                    if (!v || b.times[r] < q->from_ns || b.times[r] >= q->until_ns)
                        continue;
                    if (n == cap) {
                        cap = cap ? cap * 2 : 4096;
                        uint32_t *ns = realloc(stacks, cap * sizeof *ns);
                        if (ns)
                            stacks = ns;
                        int64_t *nv = realloc(vals, cap * sizeof *nv);
                        if (nv)
                            vals = nv;
                        int64_t *nt = realloc(times, cap * sizeof *nt);
                        if (nt)
                            times = nt;
                        if (!ns || !nv || !nt) {
                            rc = sc_errf(err, SC_ENOMEM, "out of memory");
                            break;
                        }
                    }
                    stacks[n] = b.stacks[r];
                    vals[n] = v;
                    times[n++] = b.times[r];
                }
                sc_block_release(&b);
            }
            sqlite3_reset(st);
        }
    sqlite3_finalize(st);
    if (rc == 0)
        rc = build_profile(s, db, q->type, kc[0].unit, stacks, vals, times, n, out, err);
    sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
    conn_put(s, db);
    free(stacks);
    free(vals);
    free(times);
    return rc;
}

/* ---- compaction and retention ---- */

/* Recomputes one rollup from the level below; wdb_mu held, inside a transaction. */
static int rollup_one(struct sc_store *s, int64_t series, int64_t kind, int64_t res,
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
        return sqlerr(err, db, "compacting");
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
                             MAX_BLOCK_ROWS, &b, err);
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
            rc = sc_block_encode(&all, &enc, s->opts.zstd_level);
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
                rc = sqlerr(err, db, "writing a rollup");
        } else if (rc == 0) {
            rc = sqlerr(err, db, "writing a rollup");
        }
        sc_buf_release(&enc);
        sc_buf_release(&tot);
    }
    sqlite3_finalize(st);
    sc_block_release(&all);
    return rc;
}

int sc_store_compact(struct sc_store *s, int64_t now, int force, char *err)
{
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
            int64_t cutoff = force ? INT64_MAX / NS : floor_div(now, NS) - res - 60;
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
            rc = rows ? exec(db, "BEGIN IMMEDIATE", err) : sc_errf(err, SC_ENOMEM, "out of memory");
            if (rc == 0 && sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
                rc = sqlerr(err, db, "compacting");
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
                        rc = sqlerr(err, db, "compacting");
                    sqlite3_finalize(st);
                    st = NULL;
                }
            }
            if (rc == 0)
                rc = exec(db, "COMMIT", err);
            else
                sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
            pthread_mutex_unlock(&s->wdb_mu);
            free(rows);
            if (rc || nrows == 0)
                break;
        }
    }
    /* retention: delete in batches */
    if (rc == 0 && s->opts.retention_ns > 0) {
        int64_t cutoff = now - s->opts.retention_ns;
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
                    rc = sqlerr(err, s->wdb, "applying retention");
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

static void *bg_main(void *arg)
{
    struct sc_store *s = arg;
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
        sc_store_compact(s, now_ns(), 0, err);
        pthread_mutex_lock(&s->bg_mu);
    }
    pthread_mutex_unlock(&s->bg_mu);
    return NULL;
}

int sc_store_stats(struct sc_store *s, struct sc_store_stats *st, char *err)
{
    memset(st, 0, sizeof *st);
    sqlite3 *db = conn_get(s, err);
    if (!db)
        return SC_EIO;
    static const char *const q[] = {"SELECT count(*) FROM profiles", "SELECT count(*) FROM series",
                                    "SELECT count(*) FROM stacks", "SELECT count(*) FROM frames",
                                    "SELECT count(*) FROM rollups"};
    uint64_t *dst[] = {&st->profiles, &st->series, &st->stacks, &st->frames, &st->rollups};
    for (int i = 0; i < 5; i++) {
        sqlite3_stmt *x;
        if (sqlite3_prepare_v2(db, q[i], -1, &x, NULL) == SQLITE_OK) {
            if (sqlite3_step(x) == SQLITE_ROW)
                *dst[i] = (uint64_t)sqlite3_column_int64(x, 0);
            sqlite3_finalize(x);
        }
    }
    conn_put(s, db);
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
