/* clickhouse_int.h - the ClickHouse backend's internals, shared by clickhouse*.c.
 *
 * Files: clickhouse.c (open, tables, listings, retention, stats, the ops table),
 * clickhouse_http.c (requests over libcurl with their timeouts, size caps and errors;
 * RowBinary and SQL text), clickhouse_write.c (a profile's rows, the stacks and series it
 * brings, its push id; a batch's inserts, each push once), clickhouse_log.c (each shard's
 * local write-ahead log and the flusher that inserts it), clickhouse_read.c (ranges cut
 * over rollups, rows, spans, timelines), clickhouse_stacks.c (stack resolution and its
 * cache).
 *
 * WRITES. A push is acknowledged once each of its profiles is fsync'd in the local log of
 * the shard it goes to (group commit: one fsync for every push waiting); each shard's
 * flusher inserts its log in batches (up to CH_FLUSH_PROFILES, at least every CH_FLUSH_NS),
 * one insert per table, leaving out the pushes the shard holds already (push ids). A shard
 * that fails is retried with a backoff (its circuit breaker) while its pushes wait in the
 * log; a full log refuses pushes (503) instead of dropping anything. A shard may name
 * several replicas (Replicated tables): inserts go to one and move to the next when it
 * cannot be reached; reads go through Distributed tables, which fail over themselves.
 *
 * TABLES (in opts.database; docs/storage.md shows them with their DDL). Every shard holds
 * local tables; with a cluster, Distributed tables of the same name without "_local" sit
 * over them (on every shard and on the query URL) and reads go through those, so each
 * shard aggregates its own rows and only partial sums cross the network.
 *
 *   scorch_profiles_local  MergeTree, one row per stored profile and sample type:
 *       tenant, type ("cpu:cpu"), series, time_ns, duration_ns, unit, timed, total (the
 *       values' sum, for timelines), nsamples (the profile's distinct stacks, or samples
 *       when timed, over all its types), stacks Array(UInt64) (content ids), values
 *       Array(Int64) (non-zero only), times Array(Int64) (timed profiles: one element per
 *       sample, in time order; else empty), push UInt64 (the push id: a hash of the
 *       profile's rows, so the same profile sent again is known). PARTITION BY day,
 *       ORDER BY (tenant, type, series, time_ns). A profile's rows go in one INSERT and
 *       one part (one day), so a profile is stored whole or not at all.
 *   scorch_rollup_local    SummingMergeTree: (tenant, type, res, series, bucket, unit) ->
 *       profiles, duration, total, pushes (their push ids summed: equal rollup blocks only
 *       for the same profiles, which a Replicated table's block deduplication needs) and
 *       stackMap (Nested stack, value: summed by stack as parts merge), res 600, 3600 and
 *       86400 s, bucket in seconds. scorch sums an insert's
 *       profiles per series and bucket (clickhouse_write.c) and sends the sums in the
 *       insert that carries the profiles, into the Null table scorch_ingest_local whose
 *       views route profile rows (res 0) and rollup rows to their tables: a profile and its
 *       share of the rollups are stored by one insert, so merges re-sum a row per series,
 *       bucket and insert, not one per profile. Written at insert, rollups are never stale:
 *       any whole bucket inside a read's range can come from them, and the answer is the
 *       same as from raw rows.
 *   scorch_stacks_local    ReplacingMergeTree (stack, week): a stack's frame ids, leaf
 *       first, and which are inlined into the next. Written with the first profile that
 *       uses it in a week on each shard (a bounded cache per shard remembers what that
 *       shard confirmed, emptied when an insert to it fails), so a week's partition on a
 *       shard holds every stack its profiles use, whatever another shard lost. (Weeks, not days:
 * the table is read by random ids, which costs in proportion to its size.) scorch_frames_local
 * ReplacingMergeTree (frame, week): function, file, line, binary; written like stacks, with the
 * stacks that use them. scorch_series_local    ReplacingMergeTree (tenant, series, week): canonical
 * labels and their names and values, written like stacks. Retention drops whole partitions older
 * than the cutoff from every table (18.16 has no TTL); reads leave out what is older than the
 * cutoff, so answers do not wait for the drop.
 *
 * Ids are content hashes (store.h): a series' is sc_series_id, a stack's the hash of its
 * frames, so every scorch server and shard agrees on them without talking to the others.
 * A profile lives on the shard its series and ten-minute bucket hash to, so one series'
 * history spreads over all shards (a read of it aggregates on each) while a ten-minute
 * rollup bucket stays whole on one; inserts go straight to that shard's local tables (a
 * shard that is down fails only the writes it would take).
 *
 * LOCKS
 *   shard.qmu   the shard's local log, its flusher's state and circuit breaker (qcond:
 *               the log was fsync'd or inserted further, or the flusher is wanted). Never
 *               held across a request or an fsync.
 *   ep.mu       an endpoint's pool of idle curl handles. A leaf.
 *   cache_mu    the write caches (stack_weeks, frame_weeks, series_weeks) and the type
 *               cache. A leaf.
 *   read_mu     the stack cache of resolutions (stacks and frames). Held while
 *               resolving against it; a leaf.
 *   bg.mu       the retention thread's stop flag (sc_store_bg). A leaf.
 */
#ifndef SC_CLICKHOUSE_INT_H
#define SC_CLICKHOUSE_INT_H

#include "store/store_int.h"
#include "model/arena.h"
#include "model/error.h"
#include "model/buf.h"
#include "model/hash.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#define CH_NS 1000000000LL
#define CH_DAY_NS (86400LL * CH_NS)
#define CH_WEEK_DAYS 7
/* The res of a rollups' row that marks a push's rollups as stored (clickhouse_write.c): no
 * resolution, so no read of the rollups meets it. */
#define CH_ROLLUP_MARK 1
/* Bounds: cache entries (a full cache is emptied and refills), the answer of a small
 * request (a large one's is opts.max_answer), and the bytes one write batch carries. */
#define CH_WRITE_CACHE (1u << 20)
#define CH_READ_CACHE (1u << 18)
#define CH_SMALL_ANSWER ((size_t)1 << 20)
#define CH_BATCH_BYTES ((size_t)64 << 20)
#define CH_MAX_TYPES 4096
/* The local log: a flush inserts up to CH_FLUSH_PROFILES records (or CH_BATCH_BYTES), at
 * least every CH_FLUSH_NS; a segment file is closed past CH_SEGMENT_BYTES; a shard's log
 * holds at most opts.log_limit bytes (default CH_LOG_LIMIT). */
#define CH_FLUSH_PROFILES 1000
/* A batch's profiles go as up to this many inserts at once (clickhouse_write.c). */
#define CH_INSERT_WAYS 4
#define CH_FLUSH_NS (500LL * 1000000)
#define CH_SEGMENT_BYTES ((uint64_t)32 << 20)
#define CH_LOG_LIMIT ((uint64_t)1 << 30)

/* An HTTP endpoint (a shard or the query URL) with its idle connections. */
struct ch_conn {
    void *curl;
    struct ch_conn *next;
};
struct ch_endpoint {
    char *url; /* without a trailing slash */
    pthread_mutex_t mu;
    struct ch_conn *idle;
};

/* One profile on its way to the shard's local log (clickhouse_write.c builds it). */
struct ch_pend {
    struct sc_buf rows, stacks, frames, series; /* RowBinary for each table */
    uint64_t *new_stacks, *new_frames;          /* to remember once inserted */
    uint32_t nnew, nnew_frames;
    uint64_t series_id; /* remembered when series is not empty */
    uint64_t push;      /* the push id: a hash of the rows (series, time, stacks, values) */
    uint32_t week;
};

/* A record of the local log waiting for its insert: where its payload is. */
struct ch_rec {
    uint64_t end; /* the log's position after it (positions count every byte appended) */
    uint32_t seg; /* the segment file */
    uint32_t len; /* the payload's length */
    uint64_t off; /* the payload's offset in the segment */
    int64_t t_ns; /* when it was appended (monotonic) */
};

/* A shard's local write-ahead log (clickhouse_log.c): segment files <seq>.log in its
 * directory, appended with a group-committed fsync, read back by the shard's flusher. */
struct ch_log {
    char *dir;
    int dirfd;
    int fd;              /* the active segment */
    uint32_t seg;        /* its sequence number */
    uint32_t first_seg;  /* the oldest segment still on disk */
    uint64_t *seg_bytes; /* bytes of segments first_seg..seg */
    uint32_t seg_cap;
    uint64_t bytes;   /* on disk, all segments */
    uint64_t pending; /* of records not inserted yet (what opts.log_limit bounds) */
    uint64_t written; /* positions: appended, and fsync'd */
    uint64_t synced;
    int syncing;         /* an appender is in fdatasync (outside qmu) */
    struct ch_rec *recs; /* waiting for their insert, oldest first: recs[head..n) */
    uint32_t head, n, cap;
    int broken; /* a write or fsync failed: appends fail (err says why) */
    char err[SC_ERR_LEN];
    int rfd; /* the flusher's reading fd, of segment rseg (-1: none) */
    uint32_t rseg;
};

struct ch_shard {
    struct ch_endpoint *reps; /* its replicas' HTTP interfaces (storage.shards: "a,b") */
    uint32_t nreps;
    atomic_uint cur;      /* the replica inserts go to: the next one when it is unreachable */
    uint32_t retry_count; /* a failed batch's size: retried as it was (below) */
    uint32_t index;
    pthread_mutex_t qmu;  /* the log and the flusher's state; never held across a request */
    pthread_cond_t qcond; /* the log synced or inserted more, or the flusher is wanted */
    struct ch_log log;
    pthread_t flusher;
    int flusher_running, stop, kick;
    uint64_t inserted; /* the log position up to which every record is in ClickHouse */
    /* the circuit breaker: after a failed insert the shard is down until retry_at
     * (the backoff doubles from 250 ms to 5 s while it keeps failing) */
    int down, down_rc;                   /* down_rc: the failure's SC_E* */
    int64_t retry_at, backoff, last_try; /* last_try: when an insert last failed */
    char down_err[SC_ERR_LEN];
    uint64_t inserts, insert_errors, duplicates, batches_ahead; /* (qmu) */
    /* what this shard confirmed holding (under the store's cache_mu): id -> latest week
     * written. Per shard, and emptied whenever an insert fails, so a shard that comes back
     * empty is sent its stacks, frames and series again */
    struct sc_map64 stack_weeks, frame_weeks, series_weeks;
};

/* A type's unit and kind, as type_info answers. */
struct ch_type {
    char *id;
    char unit[64];
    int gauge;
};

/* Resolved stacks: frames by id, and stacks as runs of frame ids. */
struct ch_frame {
    uint64_t id;
    const char *function, *file, *binary; /* in arena */
    int64_t line;
};
struct ch_stacks {
    struct sc_map64 stack_ix; /* stack id -> index into ids/off/len */
    uint64_t *ids;
    uint32_t *off, *len, nstacks, stacks_cap;
    uint64_t *fid; /* frame ids, leaf first, of all stacks */
    uint8_t *inl;  /* per frame id: inlined into the next */
    uint32_t nfid, fid_cap;
    struct sc_map64 frame_ix; /* frame id -> index into frames */
    struct ch_frame *frames;
    uint32_t nframes, frames_cap;
    struct sc_arena arena;
};

struct ch_store {
    struct sc_store base;        /* first: the ops and options */
    size_t max_answer;           /* what a large answer may take (opts.max_answer) */
    char *db;                    /* the database, as an SQL identifier (checked at open) */
    char *cluster;               /* the remote_servers cluster: reads go through Distributed tables;
                                    NULL: one server, local tables */
    struct ch_endpoint *queries; /* storage.url's ("a,b"): reads fail over to the next */
    uint32_t nqueries;
    atomic_uint qcur;
    int replicated; /* a shard names several replicas: Replicated* tables ({shard}/{replica}) */
    struct ch_shard *shards;
    uint32_t nshards;

    pthread_mutex_t cache_mu; /* the shards' write caches and the type cache */
    struct ch_type *types;
    uint32_t ntypes;

    pthread_mutex_t read_mu;
    struct ch_stacks cache;
    uint64_t cache_gen; /* bumped when the cache is emptied */

    struct sc_store_bg bg; /* retention */
};

/* The replica of sh that inserts go to. */
static inline struct ch_endpoint *ch_ep(struct ch_shard *sh)
{
    return &sh->reps[atomic_load(&sh->cur) % sh->nreps];
}

/* The server reads go to. */
static inline struct ch_endpoint *ch_qep(struct ch_store *s)
{
    return &s->queries[atomic_load(&s->qcur) % s->nqueries];
}

/* ---- clickhouse_http.c ---- */

/* One request: sql is sent as the body, or (insert) in the URL with body as the data. */
struct ch_req {
    const char *sql;
    const struct sc_buf *const *parts; /* insert data: the concatenation of these */
    uint32_t nparts;
    int64_t timeout_ns;
    size_t max_answer;
    struct sc_buf *answer; /* filled with the answer (may be NULL for statements) */
    int system;            /* run in database "system" (before ours exists) */
};
int ch_endpoint_init(struct ch_endpoint *e, const char *url, char *err);
void ch_endpoint_release(struct ch_endpoint *e);
/* Sends r to e. 0, or: SC_EUNAVAIL (unreachable, slow, overloaded, a shard down),
 * SC_ELIMIT (an answer or a read over its bound), SC_ENOTFOUND (a table is missing),
 * SC_EIO (anything else ClickHouse refused), each with ClickHouse's words in err. */
int ch_request(struct ch_store *s, struct ch_endpoint *e, const struct ch_req *r, char *err);
/* A query's answer (max bytes) from the query endpoint. */
int ch_query(struct ch_store *s, const char *sql, size_t max, struct sc_buf *answer, char *err);

/* RowBinary, the format of every insert and answer. */
void ch_put_u8(struct sc_buf *b, uint8_t v);
void ch_put_u32(struct sc_buf *b, uint32_t v);
void ch_put_u64(struct sc_buf *b, uint64_t v);
void ch_put_len(struct sc_buf *b, uint64_t n);
void ch_put_str(struct sc_buf *b, const char *s, size_t n);

/* Reading an answer: any short or malformed value sets bad (and reads as zero). */
struct ch_rd {
    const uint8_t *p, *end;
    int bad;
};
uint8_t ch_get_u8(struct ch_rd *r);
uint64_t ch_get_u64(struct ch_rd *r);
/* An array's length (elem: the size of one element, to check it fits). */
uint64_t ch_get_len(struct ch_rd *r, size_t elem);
struct sc_str ch_get_str(struct ch_rd *r);

/* SQL text: a string literal (quoted and escaped), a list of ids "(1,2,3)". */
void ch_sql_str(struct sc_buf *b, const char *s, size_t n);
void ch_sql_ids(struct sc_buf *b, const uint64_t *ids, uint32_t n);
/* The name a read uses for a table ("scorch_x" or "scorch_x_local"), database-qualified. */
void ch_sql_table(struct ch_store *s, struct sc_buf *b, const char *name);

/* ---- clickhouse.c ---- */
/* The cutoff of retention as of now (0 without retention: nothing is older). */
int64_t ch_cutoff(const struct ch_store *s);
/* Creates the tables on shard i (or, for i == nshards, the Distributed tables on the
 * query URL). 0 or SC_E*. */
int ch_create_tables(struct ch_store *s, uint32_t i, char *err);
/* The unit and gauge of a type: 0, SC_ENOTFOUND, or another SC_E* with err. */
int ch_type_lookup(struct ch_store *s, const char *type, char unit[64], int *gauge, char *err);

/* ---- clickhouse_write.c ---- */
/* Builds w's record (rows, the stacks, frames and series the shard may lack, the push id)
 * and the shard it goes to. 0 or SC_E*. */
int ch_pend_build(struct ch_store *s, const struct sc_store_write *w, struct ch_pend *p,
                  uint32_t *shard, char *err);
void ch_pend_release(struct ch_pend *p);
/* p's record as the log keeps it (appended to out). */
void ch_pend_payload(const struct ch_pend *p, struct sc_buf *out);
/* Inserts the records in payloads (each a log record's payload) into shard sh: frames,
 * stacks and series, then the profiles of the pushes the shard does not hold yet (its
 * tables made again, once, when they are gone). 0 or SC_E* (never SC_ENOTFOUND); *dups
 * counts the pushes left out as already stored. */
int ch_insert_records(struct ch_store *s, struct ch_shard *sh, const struct sc_buf *payloads,
                      uint32_t n, uint64_t *dups, char *err);
/* The same in two steps, so the next batch can be prepared while one is inserted: prepare
 * (frames, stacks and series inserted; the pushes the shard holds, or that held names,
 * left out; payloads borrowed until freed), then commit (the profiles and their rollups).
 * 0 or SC_E* (SC_ENOTFOUND: a table is missing). */
struct ch_batch;
int ch_batch_prepare(struct ch_store *s, struct ch_shard *sh, const struct sc_buf *payloads,
                     uint32_t n, const struct sc_map64 *held, struct ch_batch **out, char *err);
int ch_batch_commit(struct ch_store *s, struct ch_shard *sh, struct ch_batch *b, uint64_t *dups,
                    char *err);
/* The push ids of b's records, added to m. 0 or SC_ENOMEM. */
int ch_batch_pushes(const struct ch_batch *b, struct sc_map64 *m);
void ch_batch_free(struct ch_batch *b);
int ch_write(struct sc_store *st, const struct sc_store_write *w, char *err);
int ch_write_many(struct sc_store *st, const struct sc_store_write *ws, uint32_t n, char *err);

/* ---- clickhouse_log.c ---- */
/* Opens shard sh's log in dir (created), reading back what it holds (a torn record at
 * the end is cut off). 0 or SC_E*. */
int ch_log_open(struct ch_store *s, struct ch_shard *sh, const char *dir, char *err);
/* Appends p's record without waiting for its fsync: *end is the position to wait for.
 * SC_EUNAVAIL when the log is full (the shard is behind), SC_EIO when it is broken. */
int ch_log_append(struct ch_store *s, struct ch_shard *sh, const struct ch_pend *p, uint64_t *end,
                  char *err);
/* Waits until the log is fsync'd up to end (leading the fsync when nobody is). */
int ch_log_sync(struct ch_store *s, struct ch_shard *sh, uint64_t end, char *err);
/* Starts and stops the shard's flusher (stopping inserts what is synced first, unless
 * the shard is down). */
int ch_flusher_start(struct ch_store *s, struct ch_shard *sh, char *err);
void ch_flusher_stop(struct ch_shard *sh);
void ch_log_close(struct ch_shard *sh);
/* Before a read: waits (up to the write timeout) until what every live shard's log held
 * is inserted, asking the flushers to insert now, so a read sees the pushes acknowledged
 * before it. Shards that are down are not waited for. */
void ch_wait_inserted(struct ch_store *s);
/* The shards that are down: how many, and the first one's words in err. */
uint32_t ch_shards_down(struct ch_store *s, char *err);
/* Whether a shard is unreachable (its last insert failed so, and its backoff runs): a
 * read through the cluster would wait for it to time out. SC_EUNAVAIL naming it, or 0. */
int ch_shard_unreachable(struct ch_store *s, char *err);

/* ---- clickhouse_read.c ---- */

/* A part of a range: raw rows (res 0) in [from, until) ns, or the rollups of resolution
 * res seconds whose buckets lie in [from, until). */
struct ch_piece {
    int64_t from, until;
    int64_t res;
};
#define CH_MAX_PIECES 8
/* Cuts [from, until) (from >= 0) into raw pieces and whole rollup buckets of at most
 * max_res seconds (0: raw only): at most two raw pieces and two per resolution. */
uint32_t ch_pieces(int64_t from, int64_t until, int64_t max_res, struct ch_piece *out);
/* The conditions selecting the pieces: of raw rows (column time_ns) and of rollups
 * (columns res and bucket); "0" when there are none of a kind. */
void ch_sql_raw_cond(struct sc_buf *b, const struct ch_piece *p, uint32_t n);
void ch_sql_rollup_cond(struct sc_buf *b, const struct ch_piece *p, uint32_t n);
/* Whether pieces include a raw one, or a rollup one. */
int ch_pieces_have(const struct ch_piece *p, uint32_t n, int rollup);

int ch_read(struct sc_store *st, const struct sc_store_read *r, sc_store_rows_cb cb, void *ctx,
            char *err);
int ch_span(struct sc_store *st, const struct sc_store_query *q, int64_t *first_ns,
            int64_t *last_ns, char *err);
int ch_timeline(struct sc_store *st, const struct sc_store_query *q, struct sc_store_cells *c,
                char *err);
int ch_profiles(struct sc_store *st, const struct sc_store_query *q, sc_store_profile_cb cb,
                void *ctx, char *err);

/* Answers' parsers (fuzz/fuzz_clickhouse.c feeds them anything). */
/* Rows (k, series, profiles, duration or total, blocks) of a counts query. */
struct ch_count {
    int64_t k;
    uint64_t series;
    uint64_t profiles;
    int64_t duration;
    uint64_t blocks;
};
int ch_parse_counts(const struct sc_buf *a, struct ch_count **out, uint32_t *n, char *err);
/* The profiles of a timed answer (rows series, time_ns, duration_ns, stacks, values,
 * times) whose series is in index (series id -> q->series index; NULL: all, index 0),
 * sorted by series index and time; ch_timed_rows gives one's samples in [from, until). */
struct ch_timed {
    uint32_t index, order;
    int64_t time_ns, duration;
    size_t off; /* its arrays in the answer */
};
struct ch_timed_rows {
    uint64_t *stacks;
    int64_t *values, *times;
    uint32_t n, cap;
};
int ch_timed_scan(const struct sc_buf *ans, const struct sc_map64 *index, struct ch_timed **out,
                  uint32_t *n, char *err);
int ch_timed_rows(const struct sc_buf *ans, const struct ch_timed *t, int64_t from, int64_t until,
                  struct ch_timed_rows *out, char *err);
void ch_timed_rows_release(struct ch_timed_rows *r);

/* ---- clickhouse_stacks.c ---- */
/* Adds an answer's stacks (rows stack, frames, inlined) or (frames) frames (rows frame,
 * function, file, line, binary) to t. 0, SC_EIO (malformed) or SC_ENOMEM. */
int ch_stacks_add_answer(struct ch_stacks *t, const struct sc_buf *ans, int frames, char *err);
int ch_resolve(struct sc_store *st, const uint64_t *stacks, uint32_t n, sc_store_stack_cb cb,
               void *ctx, char *err);
void ch_stacks_release(struct ch_stacks *t);

#endif
