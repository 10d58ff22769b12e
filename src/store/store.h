/* store.h - where profiles are kept: one interface over every backend (SQLite, ClickHouse). */
#ifndef SC_STORE_H
#define SC_STORE_H

#include <stddef.h>
#include <stdint.h>

#include "model/labels.h"
#include "model/profile.h"

/* A store keeps profiles by series and time. A series is a tenant plus a set of labels
 * (service_name, job, instance, ...); each written profile also has a profile name
 * ("cpu", "heap", ...) and keeps all of its sample types, each addressable as the profile
 * type id "<profile>:<sample_type>" (e.g. "heap:inuse_space").
 *
 * Frames and stacks are content-addressed: a frame's id is the hash of its function name,
 * file, line and binary, a stack's id the hash of its frames (sc_stack_id), so any writer
 * computes the same ids without coordination; each is stored once however many profiles
 * use it.
 *
 * Reads merge: the samples of every profile of the chosen series and type in [from, until)
 * are summed per stack, except gauge types (inuse_*, goroutine, threadcreate), which are
 * averaged over the captures of each series (store_int.h) and then summed across series. The store
 * keeps ten-minute, hour and day rollups so long ranges read few blocks.
 *
 * Layers: a backend implements a few primitives (write; list types, labels, series; read
 * the (stack, value[, time]) rows of series and a type per time bucket, aggregated where
 * the data lives; resolve stacks to frames; totals per step; compact and retain: the
 * `ops` in store_int.h). Everything else here (merges, buckets, timestamped samples as
 * profiles) is built once on those primitives in read.c, for every backend alike.
 *
 * Thread safety: every function may be called from any thread concurrently; writes are
 * group-committed (one fsync for all writes waiting at that moment). */
struct sc_store;

struct sc_store_opts {
    const char *engine;         /* "sqlite" (default) or "clickhouse" */
    const char *dir;            /* data directory (created if missing) */
    int64_t retention_ns;       /* profiles older than this go; 0 = keep forever */
    int zstd_level;             /* block compression, default 3 */
    int durable;                /* 1 (default): fsync every commit (synchronous=FULL) */
    int background;             /* 1: a thread compacts rollups and applies retention */
    int64_t compact_every_ns;   /* how often it does (0: every 10 s) */
    uint64_t wal_limit;         /* SQLite: past twice this the WAL is forced to start over
                                   (0: 64 MiB; see sq_wal_restart) */
    uint64_t max_read_blocks;   /* a read's work budget in stored blocks (0: none); over it a
                                   read fails with SC_ELIMIT naming the limit (the server's
                                   server.max_read_blocks) */
    uint64_t max_read_rows;     /* the distinct stacks a merge may hold (0: none): with the
                                   block budget, what bounds a query's memory */
    uint64_t cache_memory;      /* sqlite: what SQLite may hold in all, mostly the page caches of
                                   every connection (a soft limit, process-wide: caches then
                                   reuse their pages instead of growing); 0 = 64 MiB */
    int cache_slab;             /* sqlite: 1 = three quarters of cache_memory reserved at open
                                   as one slab for every page cache (process-wide: the first
                                   store opened with it, before SQLite starts, installs it),
                                   the heap bound to the rest; the server's choice */
    int read_only_when_full;    /* 1: an embedded store whose disk is too full to open it for
                                   writing opens read-only (sc_store_read_only says why;
                                   writes fail with SC_ENOSPACE) instead of failing, and its
                                   background thread opens it for writing once there is room */
    int64_t read_only_retry_ns; /* how often that is tried (0: every 10 s) */
    /* clickhouse (docs/storage.md): */
    const char *url;           /* the HTTP interface queries go to */
    const char *cluster;       /* remote_servers cluster: Distributed tables; NULL: none */
    const char *const *shards; /* each shard's HTTP URL (local tables, inserts); none: url */
    uint32_t nshards;
    const char *database;     /* default "default" */
    int64_t write_timeout_ns; /* default 10 s: an insert not confirmed by then fails */
    int64_t query_timeout_ns; /* default 60 s */
    uint64_t max_answer;      /* the largest answer read (bytes), default 1 GiB */
    uint64_t log_limit;       /* bytes each shard's local log may hold on disk before pushes
                                 to it are refused (503), default 1 GiB */
};

void sc_store_opts_init(struct sc_store_opts *o);

/* Opens (or creates) a store. 0 or SC_E* with detail in err; close with sc_store_close. */
int sc_store_open(const struct sc_store_opts *o, struct sc_store **out, char *err);
/* Waits for in-flight writes, stops the background thread, closes. NULL is fine. */
void sc_store_close(struct sc_store *s);
/* Why s takes no writes (opened read-only: see read_only_when_full), or NULL when it
 * does (from the start, or since it could be opened for writing again). */
const char *sc_store_read_only(const struct sc_store *s);
/* What SQLite holds in this process, in bytes: its heap, the page caches' slab
 * (cache_slab; 0 when none) and the part of the slab in use. */
struct sc_sqlite_memory {
    uint64_t heap, slab, slab_used;
};
void sc_store_sqlite_memory(struct sc_sqlite_memory *m);
/* How often the store's own background work (compaction, retention, reopening a read-only
 * store for writing) has failed so far, with the last failure's message in last (n bytes,
 * "" when none). Each failure is tried again on the next round; the server logs them. */
uint64_t sc_store_bg_errors(struct sc_store *s, char *last, size_t n);

/* One profile to write. */
struct sc_store_write {
    const char *tenant;             /* NULL or "" = the default tenant */
    const struct sc_labels *labels; /* the series; its canonical text is its identity */
    const char *profile;            /* profile name: "cpu", "heap", ... */
    int64_t time_ns;                /* when the profile starts */
    int64_t duration_ns;
    const struct sc_profile *p; /* every sample type is kept; samples may be lazy */
    int64_t time_shift_ns;      /* added to sample timestamps (a whole number of s) */
};

/* Writes one profile durably: when it returns 0 the profile survives a crash. Samples with
 * a zero value in every type are dropped; samples with timestamps keep them. 0 or SC_E*. */
int sc_store_write(struct sc_store *s, const struct sc_store_write *w, char *err);
/* Writes n profiles (the series one push was split into) as sc_store_write does each.
 * SQLite commits them in one transaction (all or none); ClickHouse logs each on its shard's
 * local log (fsync'd) and inserts it from there, and leaves out, by its push id, a profile
 * the shard stores already, so a retry after a failure stores nothing twice. 0, or the
 * first failure. */
int sc_store_write_many(struct sc_store *s, const struct sc_store_write *ws, uint32_t n, char *err);

/* A profile type present in the store. */
struct sc_store_type {
    const char *id;          /* "heap:inuse_space" */
    const char *profile;     /* "heap" */
    const char *sample_type; /* "inuse_space" */
    const char *unit;        /* "bytes" */
    int gauge;               /* averaged over time within a series */
};

/* A series: its id and its labels in canonical form {a="x",b="y"} (sorted, escaped). */
struct sc_store_series {
    uint64_t id;
    const char *labels;
};

/* Listing callbacks get strings valid only during the call; return non-zero to stop. */
typedef int (*sc_store_type_cb)(void *ctx, const struct sc_store_type *t);
typedef int (*sc_store_series_cb)(void *ctx, const struct sc_store_series *s);
typedef int (*sc_store_str_cb)(void *ctx, const char *s);
/* Whether a series is wanted, from its labels (canonical text): non-zero yes. */
typedef int (*sc_store_match_cb)(void *ctx, const char *labels);

/* Profile types of a tenant (sorted by id). */
int sc_store_types(struct sc_store *s, const char *tenant, sc_store_type_cb cb, void *ctx,
                   char *err);
/* Label names, and the values of one label name, of a tenant's series (sorted). */
int sc_store_label_names(struct sc_store *s, const char *tenant, sc_store_str_cb cb, void *ctx,
                         char *err);
int sc_store_label_values(struct sc_store *s, const char *tenant, const char *name,
                          sc_store_str_cb cb, void *ctx, char *err);
/* Series of a tenant with profiles of type `type` (NULL: any) in [from, until). */
int sc_store_series_list(struct sc_store *s, const char *tenant, const char *type, int64_t from,
                         int64_t until, sc_store_series_cb cb, void *ctx, char *err);
/* The same for the series match (NULL: all) says are wanted, asked first: a store looks for
 * profiles in range only in those, so a query of one service among many costs what that
 * service's series cost, not the tenant's. */
int sc_store_series_find(struct sc_store *s, const char *tenant, const char *type, int64_t from,
                         int64_t until, sc_store_match_cb match, sc_store_series_cb cb, void *ctx,
                         char *err);

/* What to read: series chosen by the caller (from sc_store_series_list and a selector). */
struct sc_store_query {
    const char *tenant;
    const uint64_t *series;
    uint32_t nseries;
    const char *type; /* profile type id */
    int64_t from_ns, until_ns;
    int raw_only; /* ignore rollups (tests compare both paths) */
};

/* Merges the query's profiles into a new profile with one sample type (the query's) and
 * one sample per distinct stack. Profiles whose samples keep their times (perf script)
 * count by sample: the range holds their samples timed in [from, until), whenever the
 * profile started (up to an hour before). 0, SC_ENOTFOUND (unknown type), or SC_E*. */
int sc_store_merge(struct sc_store *s, const struct sc_store_query *q, struct sc_profile **out,
                   char *err);

/* The times of the first and the last profile of the query (of its series and type, in
 * its range). 0, SC_ENOTFOUND when there is none, or SC_E* (SC_ELIMIT: the query's budget
 * stopped it). */
int sc_store_span(struct sc_store *s, const struct sc_store_query *q, int64_t *first_ns,
                  int64_t *last_ns, char *err);

/* One bucket of sc_store_merge_buckets: what its profile covers. */
struct sc_store_bucket {
    int64_t from_ns, until_ns; /* the bucket within the query's range */
    int64_t captures;          /* captures merged: a series' profiles that start at one
                                  instant count once (rollups count theirs) */
    uint32_t series;           /* series that had profiles in it */
    int64_t covered_ns;        /* the time those captures cover, summed over the series */
    int gauge;                 /* the type is averaged over time within a series */
};
/* Gets each non-empty bucket's merged profile, owned by the store and freed after the call
 * (the callback may change it, e.g. filter it); return non-zero to stop. */
typedef int (*sc_store_bucket_cb)(void *ctx, const struct sc_store_bucket *b, struct sc_profile *p);

/* The query's range cut into buckets of bucket_ns (at least a second; aligned to
 * multiples of bucket_ns, so the first and last may be partial) and each bucket merged as
 * sc_store_merge would merge it (gauges averaged per series within the bucket), in time
 * order, in one read transaction. The replicates of a comparison: with buckets no longer
 * than the profiles' spacing each bucket holds one profile per series; whole ten-minute or
 * hour buckets are read from rollups. 0, SC_ENOTFOUND (unknown type), SC_EINVAL or SC_E*. */
int sc_store_merge_buckets(struct sc_store *s, const struct sc_store_query *q, int64_t bucket_ns,
                           sc_store_bucket_cb cb, void *ctx, char *err);

/* ---- the read primitives (what a backend implements; the functions above use them) ---- */

/* A read: the rows of q's series and type, per time bucket. */
struct sc_store_read {
    const struct sc_store_query *q;
    int64_t bucket_ns; /* > 0: buckets of this width aligned to its multiples; 0: one */
    int timed;         /* timestamped samples only, a row each with its time */
    int sum_series;    /* the caller sums the series' rows (not a gauge): a backend may give
                          a bucket's rows summed over its series in one callback */
};

/* The rows of one series in one bucket: aggregated (one per stack, summed over the
 * bucket's profiles) or, for timed reads, one per sample in time order per profile. */
struct sc_store_rows {
    uint32_t series;           /* index into q->series */
    int64_t from_ns, until_ns; /* the bucket, within the query's range */
    int64_t captures;          /* captures merged (store_int.h: the profiles of one series
                                  that start at one instant count once); rollups count theirs */
    int64_t covered_ns;        /* the time those captures cover */
    uint32_t n;
    const uint64_t *stacks; /* backend stack keys: sc_store_resolve names them */
    const int64_t *values;
    const int64_t *times; /* timed reads only */
    uint32_t nseries;     /* series in these rows: 1, or (sum_series) those summed,
                             series being UINT32_MAX then */
};
/* Called bucket by bucket (every series of a bucket before the next bucket, in q->series
 * order), only for series with profiles in the bucket; arrays valid during the call;
 * non-zero stops. */
typedef int (*sc_store_rows_cb)(void *ctx, const struct sc_store_rows *r);

/* Reads rows. 0, SC_ENOTFOUND (unknown type), SC_ELIMIT (the read budget) or SC_E*. */
int sc_store_read(struct sc_store *s, const struct sc_store_read *r, sc_store_rows_cb cb, void *ctx,
                  char *err);

/* A frame of a resolved stack; strings valid during the callback. */
struct sc_store_frame {
    uint64_t key; /* the backend's frame key (equal keys: equal frames) */
    const char *function, *file, *binary;
    int64_t line;
    int inlined; /* inlined into the next (calling) frame */
};
/* One stack's frames, leaf first. Non-zero stops. */
typedef int (*sc_store_stack_cb)(void *ctx, uint64_t stack, const struct sc_store_frame *frames,
                                 uint32_t n);

/* Resolves stack keys (as sc_store_read gives them; duplicates allowed) to frames, one
 * callback per key in the given order. 0, SC_EFORMAT (a key the store lacks) or SC_E*. */
int sc_store_resolve(struct sc_store *s, const uint64_t *stacks, uint32_t n, sc_store_stack_cb cb,
                     void *ctx, char *err);

/* The unit of a profile type and whether it is a gauge. 0 or SC_ENOTFOUND. */
int sc_store_type_info(struct sc_store *s, const char *type, char unit[64], int *gauge);

/* A timeline's cells: cell i * nsteps + k is series q->series[i] in the step starting at
 * from + k * step, nsteps = ceil((until - from) / step). Each capture (store_int.h) of a sum
 * type (CPU, allocations, contentions) spreads its value and its time over the steps its
 * [start, start + duration) overlaps, in proportion to the overlap, so a rate (value / time)
 * does not depend on the step; a capture without a duration, and every capture of a gauge,
 * counts whole in the step it starts in. The caller allocates and zeroes the arrays. */
struct sc_store_cells {
    int64_t from_ns, step_ns;
    uint32_t nsteps;
    int gauge;          /* set by the store: the type is a gauge */
    double *value;      /* the values that fall in the cell */
    double *covered_ns; /* the time of captures that falls in the cell */
    int64_t *captures;  /* captures that start in the cell */
    int64_t nodur;      /* captures of a sum type without a duration, over all cells */
    /* optional (NULL: not kept): the earliest and latest instant of the cell its captures
     * cover (a gauge's, or a capture's without a duration: their times), so a caller can
     * tell series one after another from series at once; the caller fills them with
     * INT64_MAX and INT64_MIN */
    int64_t *first_ns, *last_ns;
};
/* Adds one capture of series i (starting at t, covering d ns, value v) to c by the rule
 * above; captures before from or at/after until fall outside (their overlap still counts). */
void sc_store_cells_add(struct sc_store_cells *c, uint32_t i, int64_t t, int64_t d, int64_t v);
/* Adds value v of series i at time t, the time of a sample that carries its own (perf
 * script, record): such a capture adds its time by sc_store_cells_add (with v 0) and its
 * values by their samples' times, so the timeline agrees with the flame graph of any part
 * of it. Outside the cells: nothing. */
void sc_store_cells_put(struct sc_store_cells *c, uint32_t i, int64_t t, int64_t v);
/* The timeline also reads the profiles that start up to this long before its range, for
 * the part of them that falls in it (a long profile's, a recording's samples). */
#define SC_STORE_TIMELINE_LOOKBACK_NS (600 * 1000000000LL)
/* Fills c (its from, step and nsteps set, arrays zeroed) for the query's series. 0,
 * SC_ELIMIT (the read budget) or SC_E*; an unknown type leaves every cell empty. */
int sc_store_timeline(struct sc_store *s, const struct sc_store_query *q, struct sc_store_cells *c,
                      char *err);

/* The timestamped samples of the query's profiles (perf script, `record`) with their times
 * in [from, until), one sample each with time_ns set, in time order within each profile:
 * the input of the heatmap and of sub-second flame graphs. Profiles without timestamps
 * contribute nothing. 0, SC_ENOTFOUND (unknown type) or SC_E*. */
int sc_store_timed(struct sc_store *s, const struct sc_store_query *q, struct sc_profile **out,
                   char *err);

/* The same one profile block at a time, so a caller that only counts (the heatmap) holds
 * one block, never the range: p has one sample per distinct stack of the block's rows in
 * [from, until) (values summed, no times); row i is sample[i] of p at times[i] with
 * values[i]. Valid during the call only. */
struct sc_store_timed_block {
    const struct sc_profile *p;
    uint32_t n;
    const uint32_t *sample;
    const int64_t *times, *values;
};
typedef int (*sc_store_timed_cb)(void *ctx, const struct sc_store_timed_block *b);
/* Calls cb for every block with rows in the range; a non-zero return (an SC_E*) stops the
 * walk and is returned. 0, SC_ENOTFOUND (unknown type) or SC_E*. */
int sc_store_timed_each(struct sc_store *s, const struct sc_store_query *q, sc_store_timed_cb cb,
                        void *ctx, char *err);

/* A stored profile as listed by sc_store_profiles. */
struct sc_store_profile_info {
    uint64_t series;
    int64_t time_ns, duration_ns;
    int64_t total;     /* the sum of the type's column */
    uint32_t nsamples; /* rows of its block: distinct stacks, or samples when timed */
    int timed;         /* its samples keep their times */
};
typedef int (*sc_store_profile_cb)(void *ctx, const struct sc_store_profile_info *pi);
/* The profiles of the query's series and type that start in [from, until), per series in
 * time order; cb returns non-zero to stop. 0 or SC_E* (an unknown type lists nothing). */
int sc_store_profiles(struct sc_store *s, const struct sc_store_query *q, sc_store_profile_cb cb,
                      void *ctx, char *err);
/* One stored profile: the profile of `series` and `type` starting at exactly time_ns (the
 * sum if several do), every sample of it, times dropped. The caller makes sure the series
 * is the tenant's. 0, SC_ENOTFOUND (no such profile) or SC_E*. */
int sc_store_profile_read(struct sc_store *s, uint64_t series, const char *type, int64_t time_ns,
                          struct sc_profile **out, char *err);

/* Builds rollups for buckets that changed (all of them when force; otherwise those more
 * than a minute old) and applies retention as of now_ns. The background thread calls it;
 * tests and benchmarks call it directly. 0 or SC_E*. */
int sc_store_compact(struct sc_store *s, int64_t now_ns, int force, char *err);

/* Store statistics for /metrics and benchmarks. */
struct sc_store_stats {
    uint64_t profiles, series, stacks, frames, rollups;
    uint64_t bytes_on_disk;
};
int sc_store_stats(struct sc_store *s, struct sc_store_stats *st, char *err);

/* A ClickHouse shard's writes since the server started: inserts done and failed, pushes
 * left out because the shard held them already (a client's retry, a batch sent again),
 * batches prepared while the one before was inserted (a backlog), the bytes its local log
 * holds not inserted yet, and whether its inserts fail now. */
struct sc_store_shard_stats {
    uint64_t inserts, insert_errors, duplicates, batches_ahead, log_pending_bytes;
    int down;
};
/* Shard i's, into *st: 1, or 0 past the last shard (and for a store without shards). */
int sc_store_shard_stats(struct sc_store *s, uint32_t i, struct sc_store_shard_stats *st);

/* Whether a sample type is a gauge (averaged over time within a series) rather than a
 * cumulative count (summed): Go's inuse_*, goroutine and threadcreate. */
int sc_type_is_gauge(const char *profile, const char *sample_type);

/* Content-addressed ids (stable across machines and versions: never change them). */
uint64_t sc_frame_id(const char *function, size_t flen, const char *file, size_t filelen,
                     int64_t line, const char *binary, size_t blen);
/* The same from the fields' own sc_hash64 values (see store.c for the definition). */
uint64_t sc_frame_id_from(uint64_t hfunction, uint64_t hfile, uint64_t hbinary, int64_t line);

#endif
