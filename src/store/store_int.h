/* store_int.h - what a store backend implements, and the rules every backend shares. */
#ifndef SC_STORE_INT_H
#define SC_STORE_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "model/buf.h"
#include "model/error.h"
#include "store/store.h"

/* XOR'd into a frame's id in a stack's id when the frame is inlined into the next one, so
 * the same functions with and without inlining are different stacks. */
#define SC_INLINE_SALT 0x9e3779b97f4a7c15ULL

/* Rollup resolutions, in seconds: ten minutes, an hour and a day, each built from the one
 * below. (Minute rollups were tried: they hold nearly as many rows as the raw profiles
 * they sum, doubling the disk for a small gain; raw profiles answer the ragged ends of a
 * range fast enough.) */
#define SC_ROLLUP_SHORT 600
#define SC_ROLLUP_HOUR 3600
#define SC_ROLLUP_DAY 86400

/* A backend: the primitives of store.h, which dispatches to them. Every function may be
 * called from any thread at once. */
struct sc_store_ops {
    const char *name;
    void (*close)(struct sc_store *s);
    int (*write)(struct sc_store *s, const struct sc_store_write *w, char *err);
    /* optional: n profiles at once (one round trip a shard); without it, write each */
    int (*write_many)(struct sc_store *s, const struct sc_store_write *ws, uint32_t n, char *err);
    int (*types)(struct sc_store *s, const char *tenant, sc_store_type_cb cb, void *ctx, char *err);
    int (*label_names)(struct sc_store *s, const char *tenant, sc_store_str_cb cb, void *ctx,
                       char *err);
    int (*label_values)(struct sc_store *s, const char *tenant, const char *name,
                        sc_store_str_cb cb, void *ctx, char *err);
    int (*series_list)(struct sc_store *s, const char *tenant, const char *type, int64_t from,
                       int64_t until, sc_store_match_cb match, sc_store_series_cb cb, void *ctx,
                       char *err); /* match may be NULL */
    int (*type_info)(struct sc_store *s, const char *type, char unit[64], int *gauge);
    int (*read)(struct sc_store *s, const struct sc_store_read *r, sc_store_rows_cb cb, void *ctx,
                char *err);
    int (*resolve)(struct sc_store *s, const uint64_t *stacks, uint32_t n, sc_store_stack_cb cb,
                   void *ctx, char *err);
    int (*span)(struct sc_store *s, const struct sc_store_query *q, int64_t *first_ns,
                int64_t *last_ns, char *err);
    int (*timeline)(struct sc_store *s, const struct sc_store_query *q, struct sc_store_cells *c,
                    char *err);
    int (*profiles)(struct sc_store *s, const struct sc_store_query *q, sc_store_profile_cb cb,
                    void *ctx, char *err); /* may be NULL: SC_EUNSUPPORTED */
    int (*compact)(struct sc_store *s, int64_t now_ns, int force, char *err);
    int (*stats)(struct sc_store *s, struct sc_store_stats *st, char *err);
    /* optional: a store with shards (sc_store_shard_stats) */
    int (*shard_stats)(struct sc_store *s, uint32_t i, struct sc_store_shard_stats *st);
};

/* The head of every backend's handle (its first member). */
struct sc_store {
    const struct sc_store_ops *ops;
    struct sc_store_opts opts;
    /* 1 while writes are refused (a store opened read-only: sc_store_read_only); a backend
     * that opens for writing later clears it, once, when writes are safe */
    atomic_int ro;
    char read_only[SC_ERR_LEN]; /* why, set before ro turns 1 and not changed after */
    struct sc_store_bg *bg;     /* the backend's background thread, once started */
};

/* Backends. */
int sc_sqlite_open(const struct sc_store_opts *o, struct sc_store **out, char *err);
int sc_clickhouse_open(const struct sc_store_opts *o, struct sc_store **out, char *err);

/* floor(a / b) for b > 0, also for negative a. */
static inline int64_t sc_floor_div(int64_t a, int64_t b)
{
    int64_t q = a / b;
    return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

/* sum / n rounded to the nearest integer, halves away from zero (gauge averages). */
static inline int64_t sc_avg_round(int64_t sum, int64_t n)
{
    int64_t q = sum / n, r = sum % n;
    if (2 * (r < 0 ? -r : r) >= n)
        q += sum < 0 ? -1 : 1;
    return q;
}

/* Captures. The profiles of one series (and kind) that start at the same instant are one
 * capture: two processes pushing under one name without an instance label, two files pushed
 * with one `from`. A capture's values are the sum of its profiles' (the series' total at that
 * time), and it covers the longest of their durations once, not their sum. Every read that
 * counts profiles for an average (gauges, per profile) or divides by their time (rates)
 * counts captures and their covered time (docs/compare.md). Profiles are added in time
 * order; the counts of disjoint spans of time add up (a rollup's are its parts' sums). */
struct sc_captures {
    int64_t n, covered_ns; /* captures so far, and the time they cover */
    int64_t last_t, last_d;
    int open;
};

static inline void sc_captures_add(struct sc_captures *c, int64_t t, int64_t d)
{
    if (d < 0)
        d = 0;
    if (c->open && t == c->last_t) {
        if (d > c->last_d) {
            c->covered_ns += d - c->last_d;
            c->last_d = d;
        }
        return;
    }
    c->open = 1;
    c->last_t = t;
    c->last_d = d;
    c->n++;
    c->covered_ns += d;
}

/* Room for one more row in growing (stacks, vals[, times]) arrays holding n rows in *cap
 * (times NULL: no times): doubles them all together. 0, SC_ENOMEM or SC_ELIMIT. */
int sc_rows_reserve(uint64_t **stacks, int64_t **vals, int64_t **times, uint32_t n, uint32_t *cap);

/* A backend's background thread: fn(arg, err) first_ns after start, then every every_ns,
 * until stopped (stop waits for a call in progress). A call that returns a negative SC_E*
 * is counted, and its message kept, for sc_store_bg_errors. */
struct sc_store_bg {
    pthread_t thread;
    pthread_mutex_t mu; /* stop (cond wakes the thread), errors, error; a leaf; valid
                         * from start until the store's memory goes, stopped or not */
    pthread_cond_t cond;
    int running; /* for start and stop only (the store's opener and closer) */
    int stop;
    int64_t first_ns, every_ns;
    int (*fn)(void *arg, char *err);
    void *arg;
    uint64_t errors;
    char error[SC_ERR_LEN];
};
/* Starts the thread (0, or SC_EIO when it cannot); the store's head points at it. */
int sc_store_bg_start(struct sc_store *s, struct sc_store_bg *bg, int64_t first_ns,
                      int64_t every_ns, int (*fn)(void *arg, char *err), void *arg);
/* Changes the period from the next wait on; for fn itself to call. */
void sc_store_bg_every(struct sc_store_bg *bg, int64_t every_ns);
/* For fn itself: waits ns, or less when the thread is being stopped; 1 when it is (fn
 * should return), else 0. */
int sc_store_bg_pause(struct sc_store_bg *bg, int64_t ns);
/* Stops it (its error count stays readable); a bg never started (zeroed) is fine. */
void sc_store_bg_stop(struct sc_store_bg *bg);

/* The work budget's refusal, worded once for every backend. */
int sc_store_over_budget(const struct sc_store *s, char *err);

#endif
