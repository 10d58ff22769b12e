/* fnseries_int.h - what fnseries.c (the plan: the timeline beside the rows, each series'
 * value split by its functions' shares, step by step) and fnseries_rows.c (the rows: stacks
 * resolved to signatures, a bucket's sums, timed samples, the ranking, the grid) share.
 *
 * DESIGN. One query is one struct fx, used by the query's thread only; the timeline runs on
 * a helper thread with a struct tl_job of its own, which the query's thread reads only after
 * joining it (become_ready, fnseries.c). fnseries.c's top comment says how the values are
 * made. */
#ifndef SC_FNSERIES_INT_H
#define SC_FNSERIES_INT_H

#include <pthread.h>
#include <stdint.h>

#include "model/arena.h"
#include "model/hash.h"
#include "model/profile.h"
#include "query/fnseries.h"

#define NONE UINT32_MAX

/* A signature: the kept functions a stack holds (sorted, in sig_funcs[off, off + n)) and
 * the one at its leaf (NONE when the leaf's function is not kept). */
struct sig {
    uint32_t off, n, leaf;
};

/* The first read's stacks (no function asked for): each one's functions (ids into names,
 * distinct, in fids[off, off + n)) and its leaf's. */
struct astack {
    uint64_t stack; /* its key */
    uint32_t off, n, leaf;
};

struct fx {
    struct sc_store *st;
    const char *tenant;
    const struct sc_selection *s;
    char *err;
    int64_t from, step;
    uint32_t nsteps, nser, nf;
    int gauge;
    const double *cell; /* s->n x nsteps: each series' timeline value */
    uint32_t *line_of;  /* s->n: each series' group (sc_plan_group's, as the timeline's) */
    uint32_t ngroups;
    double *self, *cum; /* the answer (fnseries.h) */

    /* each group's functions (the answer's group_first, group_func) and each series' part
     * of the per-series arrays below: series i's m functions, m those of its group, are
     * at soff[i] .. soff[i] + m; nloc in all, mmax the most one group keeps */
    const uint32_t *gfirst, *gfunc;
    size_t *soff;
    uint64_t nloc;
    uint32_t mmax;
    /* the group whose functions local_of holds (kept index -> place in the group's list,
     * else NONE; nf entries), NONE before the first */
    uint32_t *local_of, cur_group;

    /* functions: the one asked for (target), or every name seen (names) and the kept ones
     * among them (kept_of: name id -> kept index or NONE) */
    const char *target;
    int self_only; /* a signature is its leaf alone (no total asked for) */
    struct sc_arena arena;
    struct sc_strtab names;
    uint32_t *kept_of;
    uint32_t *stamp, nstamp, stamp_cap; /* per name: the last stack that counted it */
    uint32_t stamp_now;

    /* stacks -> signatures: small keys (SQLite's dense stack ids) in an array, the others
     * (ClickHouse's content hashes) in a map; a row's lookup is most of a read's own cost */
    uint32_t *dense, ndense;
    struct sc_map64 stack_sig;
    struct sig *sigs;
    uint32_t nsigs, sigs_cap;
    uint32_t *sig_funcs, nsig_funcs, sig_funcs_cap;
    struct sc_map64 sig_index; /* signature hash -> sig */
    uint32_t *tmp, tmp_cap;    /* a signature being built: its leaf, then its functions */
    uint32_t tmp_n;            /* its functions */

    /* the first read: stacks -> astack, and the total (cum) of every name */
    struct sc_map64 astack_of;
    struct astack *astacks;
    uint32_t nastacks, astacks_cap;
    uint32_t *fids, nfids, fids_cap;
    int64_t *rank_cum;
    uint32_t rank_cap;
    /* with per-group lists: the total of each (group, name) pair, filed in pair_of under
     * group << 32 | name id */
    int per_group;
    struct sc_map64 pair_of;
    struct pair {
        uint32_t group, id;
        int64_t cum;
    } * pairs;
    uint32_t npairs, pairs_cap;

    /* a callback's stacks not yet known: resolved together */
    uint64_t *pend;
    int64_t *pend_val, *pend_time;
    uint32_t npend, pend_cap;

    /* a bucket's sums: per signature, then per function of the series' group */
    int64_t *sigsum;
    uint32_t sigsum_cap;
    uint32_t *touched; /* the signatures summed so far (room for every one) */
    uint32_t ntouched, touched_cap;
    uint8_t *mark; /* per signature: in touched */
    uint32_t mark_cap;
    int64_t *bself, *bcum; /* mmax each */

    /* the aggregated read's window: steps j = k + 1 (j = 0 is before the range), two at a
     * time in slot j & 1; per series its total, functions' self and cum, and whether it had
     * rows */
    double *slot_tot[2], *slot_self[2], *slot_cum[2];
    uint8_t *slot_has[2];
    uint32_t next_flush; /* the first step j not yet flushed */
    /* per series: its latest composition (shares of self and cum), whether it has one */
    double *last_self, *last_cum;
    uint8_t *has_last;
    double *share_self, *share_cum; /* mmax each: scratch */

    /* timed series: integer sums per step (nsteps x (1 + 2 m)), allocated when seen */
    uint8_t *timed;
    int64_t **tsum;
    uint32_t ntimed;

    /* the timeline, made on a thread of its own while the rows are read (tl), and the
     * answer it frames (f): until it is there (ready), flushed steps wait in a queue, each
     * series with rows as (j, i) in qrec and its sums in qval */
    struct tl_job *tl;
    struct sc_fnseries *f;
    int ready;
    uint32_t queued; /* steps j < queued are in the queue */
    struct qrec {
        uint32_t j, i;
    } * qrec;
    uint32_t nq, qcap; /* of both qrec and qval */
    double *qval;      /* a row of 1 + 2 mmax values a record (1 + 2 m of them used) */
};

/* The timeline's thread: its answer, or its failure in its own words. */
struct tl_job {
    struct sc_store *st;
    const char *tenant;
    const struct sc_selection *s;
    int64_t step;
    const char *group_by;
    struct sc_budget *budget; /* the query's, shared */
    struct sc_timeline t;
    double *cell;
    int rc;
    char err[SC_ERR_LEN];
    pthread_t thread;
    int started; /* a thread runs it (else it ran in the caller) */
};

/* fnseries_rows.c */

/* SC_ENOMEM with "out of memory" in x->err. */
int fx_oom(struct fx *x);
/* Points x->local_of at group g's functions. */
void fx_use_group(struct fx *x, uint32_t g);
/* The rows of one series in one bucket summed per function of its group into x->bself and
 * x->bcum (zeroed first) and in all into *total; unknown stacks resolved. 0 or SC_E*. */
int fx_bucket_sums(struct fx *x, const struct sc_store_rows *r, int64_t *total);
/* The timed read's callback: each sample into x->tsum of its series, in its step. */
int fx_timed_rows(void *ctx, const struct sc_store_rows *r);
/* Ranks every function of the range by its total and keeps the first max_funcs (0: all),
 * per group when x->per_group (by the group's own total), else over all of them: their
 * names (by total over all groups, then name) into *out (the caller's), x->nf, kept_of, the
 * groups' lists when per group (*gfirst, *gfunc: the caller's; else left NULL) and the
 * first read's stacks' signatures set. 0 or SC_E*. */
int fx_rank(struct fx *x, uint32_t max_funcs, char ***out, uint32_t **gfirst, uint32_t **gfunc);
/* The bucket width of the aggregated read; *exact when every step is whole buckets. */
int64_t fx_grid_width(int64_t from, int64_t step, int *exact);

#endif
