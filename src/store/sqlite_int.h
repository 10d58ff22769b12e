/* sqlite_int.h - the embedded backend's internals, shared by sqlite*.c.
 *
 * Files: sqlite.c (open, schema, connections, listings, stats, the ops table),
 * sqlite_write.c (ids, blocks, group commit), sqlite_read.c (rows per bucket through
 * rollups, stack resolution, spans, timelines), sqlite_compact.c (rollups, retention,
 * garbage collection, the background thread).
 *
 * DESIGN: which lock guards what, and the order they are taken.
 *
 *   gc_lock   (a rwlock) writers hold it shared from the moment they turn hashes into ids
 *             until their commit returned; the garbage collector holds it exclusively
 *             while it deletes frames, stacks and series no profile uses any more, so no
 *             write in flight can hold an id it deletes. Writer-preferring, so a steady
 *             stream of writes cannot starve the collector.
 *   mu        the id caches (frame_ids, stack_ids, series_ids: bounded, see ID_CACHE),
 *             next_* counters, kinds, the pending rows (pframes, pstacks, pseries) and
 *             those a commit has in flight (inflight_*), the stack days to record
 *             (touch, touched), and idb, the connection that looks ids up by hash on a
 *             cache miss. Held by a writer while it turns hashes into ids (so two writers
 *             never hand out two ids for one hash) and by the commit leader while it takes
 *             or returns the pending rows.
 *   cache_mu  the read caches (stack_cache, stack_off/len/data, frame_cache, finfo,
 *             cache_arena). Held while a resolution walks cached stacks, so a cache that
 *             is cleared to stay bounded is never cleared under a reader.
 *   wdb_mu    wdb, the writer connection: the commit leader's transaction and
 *             compaction's short transactions.
 *   qmu       the group-commit queue and `leader` (qcond signals a finished commit).
 *   pool_mu   the pool of reader connections, the count of those in use and the drain
 *             that opens a read-only store for writing (sq_reopen; pool_cv signals it).
 *   bg.mu     the background thread's stop flag (store_int.h's sc_store_bg).
 *   ck_mu     the checkpointer's flags and counts (taken by the writer's commit, wdb_mu
 *             held, to wake it; the checkpointer takes wdb_mu only without it).
 *
 *   Order: gc_lock before everything; mu and cache_mu are never held together (writes
 *   do not fill the read cache). wdb_mu is never
 *   held with mu or cache_mu: the leader takes the pending rows under mu, lets go, then
 *   writes under wdb_mu, then takes mu again to return rows a failed commit must retry.
 *   qmu is never held across any other lock (the leader releases it to commit); pool_mu,
 *   bg.mu and ck_mu are leaves.
 *
 * Statements are prepared once per connection and cached with it (struct conn), so a
 * read costs no sqlite3_prepare for the statements it runs per series and bucket.
 */
#ifndef SC_SQLITE_INT_H
#define SC_SQLITE_INT_H

#include "store/block.h"
#include "store/prepare.h"
#include "store/store_int.h"
#include "model/buf.h"
#include "model/clock.h"
#include "model/error.h"
#include "model/hash.h"
#include "model/labels.h"

#include <pthread.h>
#include <sqlite3.h>
#include <stdatomic.h>
#include <stdint.h>

#define SQ_MAX_LABELS SC_SERIES_LABELS_MAX
#define SQ_MAX_BLOCK_ROWS (1u << 24)
#define SQ_MAX_KINDS 64
/* Bounds of the in-memory caches (entries): past them a cache is emptied and refills
 * from the database, so memory stays flat however much history the store holds. */
#define SQ_ID_CACHE (1u << 19)
#define SQ_READ_CACHE (1u << 19)

static inline int64_t sq_day(int64_t ns)
{
    return sc_floor_div(ns, (int64_t)SC_ROLLUP_DAY * 1000000000LL);
}

struct frame_info {
    uint32_t id;
    const char *function, *file, *binary; /* in the cache arena */
    int64_t line;
};

/* stack_len's top bit: the stack's frames in stack_data are cache indexes (into finfo),
 * not frame ids any more (sq_resolve rewrites them once) */
#define SQ_RESOLVED 0x80000000u

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
    uint32_t day; /* its last_day */
    uint64_t hash;
    struct sc_buf blob;
};
struct pend_series {
    struct pend_series *next;
    uint32_t id;
    uint64_t hash;
    char *tenant, *labels;
    uint32_t npairs;
    const char *names[SQ_MAX_LABELS], *values[SQ_MAX_LABELS]; /* in strings */
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

/* The statements every read runs, prepared once per connection. */
enum {
    ST_DIRTY,  /* is (series, kind, res, bucket) dirty */
    ST_ROLLUP, /* a rollup's nprofiles, block, duration */
    ST_RAW,    /* the blocks, durations and times of profiles in a range, in time order */
    ST_SPAN,   /* min and max profile time in a range */
    ST_TIMED,  /* the timed profiles' blocks in a range, in time order */
    ST_TOTALS, /* the profiles' times, totals, durations and timed in a range, in time order */
    ST_EXISTS, /* is there a profile of a kind in a range */
    ST_ANY,    /* is there a profile of any kind in a range */
    ST_NEAR,   /* is there a timed profile of a kind from SQ_TIMED_SLACK_NS before a range */
    ST_N
};

/* A stack used on a day: recorded as stacks.last_day by the next commit. */
struct touch {
    uint32_t stack;
    uint32_t day;
};

/* SQLite's heap in all when sc_store_opts.cache_memory is 0: four connections' page caches
 * (the writer, the id lookups and two readers at their 16 MiB cache_size). */
#define SQ_CACHE_MEMORY_DEFAULT (64ull << 20)
#define SQ_PAGE_SIZE 4096 /* SQLite's default page size, which scorch's databases keep */

/* The id lookups by hash (idb's statements). */
enum { IDQ_FRAME, IDQ_STACK, IDQ_SERIES, IDQ_N };

/* The commit's inserts (wdb's statements, prepared on first use and kept: a commit runs
 * them all, hundreds of times a second under load, and parsing them each time cost more
 * than running them). */
enum {
    WST_FRAME,
    WST_STACK,
    WST_TOUCH,
    WST_SERIES,
    WST_SERIES_LABEL,
    WST_KIND,
    WST_PROFILE,
    WST_DIRTY,
    WST_N
};

/* A connection with its cached statements. */
struct conn {
    sqlite3 *db;
    sqlite3_stmt *st[ST_N];
    struct conn *next;
};

struct sq_store {
    struct sc_store base; /* first: the ops and options */
    char *path;
    char *ro_uri; /* NULL, or the URI read-only connections open (a full disk at open) */
    int lock_fd;  /* <dir>/LOCK, flock'ed for the life of the store */
    sqlite3 *wdb; /* the writer's connection: used by the commit leader and compaction */
    sqlite3_stmt *wst[WST_N]; /* wdb's cached statements (wdb_mu); see sq_wdb_close */
    pthread_mutex_t wdb_mu;

    pthread_rwlock_t gc_lock;

    /* ids and pending rows (mu) */
    pthread_mutex_t mu;
    sqlite3 *idb;
    sqlite3_stmt *idq[IDQ_N];
    struct sc_map64 frame_ids, stack_ids, series_ids; /* hash -> id, bounded */
    struct pend_frame *inflight_frames;
    struct pend_stack *inflight_stacks;
    struct pend_series *inflight_series;
    struct touch *touch; /* to record with the next commit */
    uint32_t ntouch, touch_cap;
    struct sc_map64 touched; /* stack -> the last day recorded for it, bounded */
    uint32_t next_frame, next_stack, next_series, next_kind;
    struct kind *kinds;
    uint32_t nkinds;
    struct pend_frame *pframes;
    struct pend_stack *pstacks;
    struct pend_series *pseries;

    /* group commit (qmu) */
    pthread_mutex_t qmu;
    pthread_cond_t qcond;
    struct pend_write *queue, **qtail;
    int leader;

    /* read side */
    pthread_mutex_t pool_mu;
    struct conn *pool;
    pthread_cond_t pool_cv;
    uint32_t nout; /* reader connections in use (out of the pool, or being opened) */
    int draining;  /* sq_reopen waits for nout to reach 0: new users wait for it */
    pthread_mutex_t cache_mu;
    struct sc_arena cache_arena;
    struct sc_map64 stack_cache; /* stack id -> index in stack_off */
    uint32_t *stack_off, *stack_len, nstack_cache, stack_cache_cap;
    uint32_t *stack_data, nstack_data, stack_data_cap;
    struct sc_map64 frame_cache; /* frame id -> index in frame_info */
    struct frame_info *finfo;
    uint32_t nfinfo, finfo_cap;
    uint64_t cache_gen; /* bumped when the caches are emptied to stay bounded */

    /* the checkpointer (ck_mu, a leaf; see sq_ckpt_start): with the background thread, the
     * WAL is copied into the database on a thread and connection of its own, never inside
     * a commit */
    pthread_mutex_t ck_mu;
    pthread_cond_t ck_cv, ck_idle; /* ck_cv wakes it; ck_idle: it finished a checkpoint */
    pthread_t ck_thread;
    int ck_running, ck_stop, ck_due, ck_behind, ck_busy;
    sqlite3 *ckdb; /* the checkpointer's own */
    uint64_t ck_errors, ck_reported;
    uint64_t ck_runs, ck_held; /* checkpoints it did, and of those holding the writer */
    uint64_t ck_done;          /* checkpoints it tried, done or failed */
    char ck_why[SC_ERR_LEN];

    /* set by sq_close before it stops the background thread: lock waits end (sq_busy) */
    atomic_int closing;

    /* background */
    int64_t last_gc_ns; /* compaction's own: the last garbage collection */
    /* compaction's own: retention deleted something since the last collection (which
     * runs at most hourly), and there may be freed pages to give back */
    int gc_due, vacuum_due;
    /* compaction's own: stacks went since frames were last collected (a collection
     * stopped before its frames leaves them for the next one) */
    int gc_frames_due;
    /* tests' own: called between garbage collection's steps (and its two marks), writers let go;
     * each step then runs one statement (sqlite_compact.c) */
    void (*gc_hook)(void *ctx);
    void *gc_hook_ctx;
    int64_t wal_wait_ns; /* compaction's own: the next forced WAL restart's wait (0: the
                            first's, SQ_WAL_WAIT_NS) */
    /* blocks a rollup left out because they could not be read (wdb_mu), the last one's
     * story, and how many of them the background thread has reported (its own) */
    uint64_t bad_blocks, bad_reported;
    char bad_why[SC_ERR_LEN];
    struct sc_store_bg bg;
};

/* Kinds that carry a profile type id "profile:sample_type", with its column in each. */
struct kind_col {
    uint32_t kind, col;
    char unit[64];
};

/* ---- sqlite.c ---- */
/* How long a statement waits for a lock another process holds (SQLite's busy handler)
 * before it fails with SC_EUNAVAIL. */
#define SQ_BUSY_NS (10 * SC_NS_PER_S)
/* How often the background thread compacts, and by default retries a read-only store. */
#define SQ_TICK_NS (10 * SC_NS_PER_S)
/* The longest the background compaction holds the writer in one transaction; it then
 * leaves the writer to pushes for as long again (so rollups falling due for a whole fleet
 * at once take at most half the writer's time instead of stalling ingest for seconds). */
#define SQ_COMPACT_SLICE_NS (20 * 1000000LL)
/* The WAL size past twice which the background thread forces a checkpoint that starts it
 * over (sq_wal_restart), unless opts.wal_limit says otherwise; and how long that waits for
 * the reads in flight, holding the writer. */
#define SQ_WAL_LIMIT (64u << 20)
#define SQ_WAL_WAIT_NS (1 * SC_NS_PER_S)
/* After each try in a row the reads held up, the next waits twice as long, up to this: with
 * queries of a few seconds always overlapping, a second is often too short (the soak's WAL
 * reached 890 MB over five failed tries), and the longer wait is paid only then. */
#define SQ_WAL_WAIT_MAX_NS (4 * SC_NS_PER_S)
/* How long sq_reopen waits for queries to put their connections back, holding up new
 * ones meanwhile, before it tries again on its next tick. */
#define SQ_DRAIN_NS (1 * SC_NS_PER_S)
/* How a connection opens: the writer may create the database; a reader is query_only;
 * read-only goes through ro_uri. */
enum sq_mode { SQ_READER, SQ_WRITER, SQ_READ_ONLY };
/* Opens a connection to the store's database. 0 or SC_E*. */
int sq_open_db(struct sq_store *s, sqlite3 **db, enum sq_mode mode, char *err);
int sq_err(char *err, sqlite3 *db, const char *what);
int sq_exec(sqlite3 *db, const char *sql, char *err);
/* A read is held to its query's budget (model/budget.h: its deadline, its client): SQLite's
 * progress handler on every reader connection polls the budget each SQ_PROGRESS_OPS
 * virtual machine instructions (some tens of microseconds of work; the poll is a clock
 * read) and interrupts the statement once the query must stop. The loops that run many
 * short statements, or none, poll it themselves. */
#define SQ_PROGRESS_OPS 1000
/* sqlite3_step(st), which says how it ended: SQLITE_ROW, SQLITE_DONE, or SQLite's failure
 * with *rc set unless it holds an error already: SC_ELIMIT in the budget's words when the
 * budget interrupted the statement, else as sq_err (what says what failed). */
int sq_step(sqlite3_stmt *st, int *rc, const char *what, char *err);
const char *sq_tenant(const char *t);
/* A reader connection (from the pool, or new) with its statements; NULL + err. */
struct conn *sq_conn_get(struct sq_store *s, char *err);
void sq_conn_put(struct sq_store *s, struct conn *c);
/* The kinds of a type, at most max, and whether it is a gauge; 0 when the type is unknown. */
int sq_kinds_for_type(struct sq_store *s, const char *type, struct kind_col *out, uint32_t max,
                      int *gauge);
void sq_free_pending(struct pend_frame *pf, struct pend_stack *ps, struct pend_series *pse);
/* A read-only store tries to open for writing (the background thread's): 1 when it is
 * writable now, 0 when not yet (no room, or queries kept their connections), or SC_E*
 * (detail in err) when opening for writing failed; it stays read-only. */
int sq_reopen(struct sq_store *s, char *err);
/* Checkpoint starvation: with steady writes and overlapping reads SQLite's automatic
 * (passive) checkpoints copy the WAL into the database but never find a moment with no
 * reader on it, so the WAL is never started over and grows without bound. Once the WAL
 * file is past twice the limit this holds the writer, waits up to wait_ns for the reads
 * in flight to end (reads that start meanwhile see everything and do not hold it up), then
 * copies the rest and truncates the WAL. 1 when done, 0 when not needed, SQ_WAL_BUSY when
 * the reads did not end in time (what could be copied was), or SC_E* (err says why). */
#define SQ_WAL_BUSY 2
int sq_wal_restart(struct sq_store *s, int64_t wait_ns, char *err);

/* WAL pages past which a commit wakes the checkpointer (SQLite's own automatic checkpoint
 * runs at the same size, inside the commit that crosses it). */
#define SQ_CKPT_PAGES 1000
/* How many times that a commit finds the WAL at before the next checkpoint holds the
 * writer (the checkpointer is behind). */
#define SQ_CKPT_BEHIND 4
/* Starts the checkpointer (0, or SC_EIO: SQLite's automatic checkpoints stay on); it takes
 * over from SQLite's once a writer connection is attached (sq_ckpt_attach). */
int sq_ckpt_start(struct sq_store *s, char *err);
/* Turns SQLite's automatic checkpoints off on the writer connection and has its commits
 * wake the checkpointer instead, when it runs. */
void sq_ckpt_attach(struct sq_store *s);
/* Waits until the checkpointer has copied what was committed before the call (at most
 * max_ns); nothing when it does not run. For the background work's pacing: see
 * sqlite_compact.c's pace. */
#define SQ_CKPT_SETTLE_NS (1 * SC_NS_PER_S)
/* How long the checkpointer waits after a failed checkpoint before it tries again. */
#define SQ_CKPT_RETRY_NS (1 * SC_NS_PER_S)
void sq_ckpt_settle(struct sq_store *s, int64_t max_ns);
/* Stops the checkpointer and closes its connection; nothing when it does not run. */
void sq_ckpt_stop(struct sq_store *s);

/* ---- sqlite_read.c ---- */
int sq_read(struct sc_store *st, const struct sc_store_read *r, sc_store_rows_cb cb, void *ctx,
            char *err);
int sq_resolve(struct sc_store *st, const uint64_t *stacks, uint32_t n, sc_store_stack_cb cb,
               void *ctx, char *err);
int sq_span(struct sc_store *st, const struct sc_store_query *q, int64_t *first_ns,
            int64_t *last_ns, char *err);
int sq_profiles(struct sc_store *st, const struct sc_store_query *q, sc_store_profile_cb cb,
                void *ctx, char *err);
/* A timed profile's samples may start before its own time: timed reads look this much
 * earlier than their range. */
#define SQ_TIMED_SLACK_NS (3600 * SC_NS_PER_S)
/* The start of a timed read of a range starting at from (saturated). */
static inline int64_t sq_timed_from(int64_t from)
{
    return from > INT64_MIN + SQ_TIMED_SLACK_NS ? from - SQ_TIMED_SLACK_NS : INT64_MIN;
}
/* Decodes a block the store wrote. However it fails to decode, and when it has no column, it
 * was damaged since: SC_EFORMAT then (why says how), else 0 or SC_ENOMEM. */
int sq_block_load(const void *data, size_t len, struct sc_block *b, char *why);
/* Whether series has timed profiles of kind that may hold samples in [from, until): those
 * that start up to SQ_TIMED_SLACK_NS before it or within it (c's ST_NEAR); a failure sets
 * *rc as sq_step does. */
int sq_timed_near(struct conn *c, uint64_t series, uint32_t kind, int64_t from, int64_t until,
                  int *rc, char *err);
int sq_timeline(struct sc_store *st, const struct sc_store_query *q, struct sc_store_cells *c,
                char *err);

/* ---- sqlite_write.c ---- */
int sq_write(struct sc_store *st, const struct sc_store_write *w, char *err);
/* The writes in one transaction: all stored or none. */
int sq_write_many(struct sc_store *st, const struct sc_store_write *ws, uint32_t n, char *err);
/* The id lookup connection and its statements (closing those open first). */
int sq_ids_open(struct sq_store *s, enum sq_mode mode, char *err);
void sq_ids_close(struct sq_store *s);
/* Marks the rollup of (series, kind, res, bucket) to be rebuilt (wdb's cached statement,
 * wdb_mu held). */
int sq_mark_dirty(struct sq_store *s, int64_t series, int64_t kind, int64_t res, int64_t bucket,
                  char *err);
/* Finalizes wdb's cached statements and closes it (wdb NULL after). */
void sq_wdb_close(struct sq_store *s);
/* Empties the id caches named in which, a bit per IDQ_* (SQ_IDS_ALL: every one), keeping
 * what is pending or in flight; mu held. */
#define SQ_IDS_ALL ((1u << IDQ_N) - 1)
void sq_ids_forget(struct sq_store *s, unsigned which);

/* ---- sqlite_compact.c ---- */
int sq_compact(struct sc_store *st, int64_t now_ns, int force, char *err);
/* sq_compact's work; bg is the background thread running it (NULL when called), whose
 * batches are bounded in time and paced (SQ_COMPACT_SLICE_NS) and stop when it is being
 * stopped. */
int sq_compact_run(struct sq_store *s, int64_t now, int force, struct sc_store_bg *bg, char *err);
/* Rebuilds up to 256 dirty rollups of resolution res (64 above ten minutes: those whose
 * bucket ended before cutoff s and whose lower level is clean) in one short transaction,
 * stopping after the first rollup that takes it past slice_ns of holding the writer (0: no
 * bound); *done counts them, *held_ns is how long the writer was held. */
int sq_compact_batch(struct sq_store *s, int64_t res, int64_t cutoff, int64_t slice_ns, int *done,
                     int64_t *held_ns, char *err);
/* How often the background thread compacts (opts.compact_every_ns, else SQ_TICK_NS). */
static inline int64_t sq_compact_every_ns(const struct sq_store *s)
{
    return s->base.opts.compact_every_ns > 0 ? s->base.opts.compact_every_ns : SQ_TICK_NS;
}
/* The background thread's work: compaction and retention as of now. */
int sq_bg_tick(void *arg, char *err);

#endif
