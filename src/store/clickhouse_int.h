/* clickhouse_int.h - the ClickHouse backend's internals, shared by clickhouse*.c.
 *
 * Files: clickhouse.c (open, tables, listings, retention, stats, the ops table),
 * clickhouse_http.c (requests over libcurl with their timeouts, size caps and errors;
 * RowBinary and SQL text), clickhouse_write.c (a profile's rows, the stacks and series it
 * brings, group commit per shard), clickhouse_read.c (ranges cut over rollups, rows,
 * spans, timelines), clickhouse_stacks.c (stack resolution and its cache).
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
 *       sample, in time order; else empty). PARTITION BY day, ORDER BY (tenant, type,
 *       series, time_ns). A profile's rows go in one INSERT, so a profile is stored whole
 *       or not at all.
 *   scorch_rollup_local    SummingMergeTree fed by a materialized view: (tenant, type, res,
 *       series, bucket, unit) -> profiles, duration, total and stackMap (Nested stack,
 *       value: summed by stack as parts merge), res 600, 3600 and 86400 s, bucket in
 *       seconds. A profile adds one row per resolution (its arrays as they are), not a
 *       row per stack: cheap to insert. Materialized at insert, rollups are never stale:
 *       any whole bucket inside a read's range can come from them, and the answer is the
 *       same as from raw rows.
 *   scorch_stacks_local    ReplacingMergeTree (stack, week): a stack's frame ids, leaf
 *       first, and which are inlined into the next. Written with the first profile that
 *       uses it in a week (a bounded cache remembers which), so a week's partition holds
 *       every stack its profiles use. (Weeks, not days: the table is read by random ids,
 *       which costs in proportion to its size.)
 *   scorch_frames_local    ReplacingMergeTree (frame, week): function, file, line, binary;
 *       written like stacks, with the stacks that use them.
 *   scorch_series_local    ReplacingMergeTree (tenant, series, week): canonical labels and
 *       their names and values, written like stacks.
 *   Retention drops whole partitions older than the cutoff from every table (18.16 has no
 *   TTL); reads leave out what is older than the cutoff, so answers do not wait for the
 *   drop.
 *
 * Ids are content hashes (store.h): a series' is sc_series_id, a stack's the hash of its
 * frames, so every scorch server and shard agrees on them without talking to the others.
 * A profile lives on the shard its series and ten-minute bucket hash to, so one series'
 * history spreads over all shards (a read of it aggregates on each) while a ten-minute
 * rollup bucket stays whole on one; inserts go straight to that shard's local tables (a
 * shard that is down fails only the writes it would take).
 *
 * LOCKS
 *   shard.qmu   the shard's group-commit queue and leader flag (qcond: a commit ended).
 *               Never held across a request: the leader takes the queue and lets go.
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
#include <stdint.h>

#define CH_NS 1000000000LL
#define CH_DAY_NS (86400LL * CH_NS)
#define CH_WEEK_DAYS 7
/* Bounds: cache entries (a full cache is emptied and refills), the answer of a small
 * request (a large one's is opts.max_answer), and the bytes one write batch carries. */
#define CH_WRITE_CACHE (1u << 20)
#define CH_READ_CACHE (1u << 18)
#define CH_SMALL_ANSWER ((size_t)1 << 20)
#define CH_BATCH_BYTES ((size_t)64 << 20)
#define CH_MAX_TYPES 4096

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

/* One profile waiting for its shard's commit. */
struct ch_pend {
    struct ch_pend *next;
    struct sc_buf rows, stacks, frames, series; /* RowBinary for each table */
    uint64_t *new_stacks, *new_frames;          /* to remember once committed */
    uint32_t nnew, nnew_frames;
    uint64_t series_id; /* remembered when series is not empty */
    uint32_t week;
    int done, rc;
    char err[SC_ERR_LEN];
};

struct ch_shard {
    struct ch_endpoint ep;
    pthread_mutex_t qmu;
    pthread_cond_t qcond;
    struct ch_pend *queue, **qtail;
    int leader;
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
    struct sc_store base; /* first: the ops and options */
    size_t max_answer;    /* what a large answer may take (opts.max_answer) */
    char *db;             /* the database, as an SQL identifier (checked at open) */
    char *cluster;        /* the remote_servers cluster: reads go through Distributed tables;
                             NULL: one server, local tables */
    struct ch_endpoint query;
    struct ch_shard *shards;
    uint32_t nshards;

    pthread_mutex_t cache_mu;
    struct sc_map64 stack_weeks, frame_weeks, series_weeks; /* id -> latest week written */
    struct ch_type *types;
    uint32_t ntypes;

    pthread_mutex_t read_mu;
    struct ch_stacks cache;
    uint64_t cache_gen; /* bumped when the cache is emptied */

    struct sc_store_bg bg; /* retention */
};

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
int ch_write(struct sc_store *st, const struct sc_store_write *w, char *err);
int ch_write_many(struct sc_store *st, const struct sc_store_write *ws, uint32_t n, char *err);

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
