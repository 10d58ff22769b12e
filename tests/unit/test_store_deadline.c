/* test_store_deadline.c - a query's deadline and its client (model/budget.h) hold in the
 * SQLite store's reads: a read past its deadline stops within a bound and fails as the
 * budget says (the server's 503 naming server.query_timeout), never with a partial answer
 * or a damaged-store error, and the reader connection serves the next read.
 *
 * The bound, BOUND_NS past the deadline: the reads poll the budget at least every 4,096
 * stacks and SQLite's progress handler every SQ_PROGRESS_OPS instructions, each well under
 * a millisecond of work, so a read stops within milliseconds of its deadline; the second
 * allowed is for a loaded 2-core machine (other tests running, the scheduler). It is a
 * correctness bound on the deadline, not a speed claim: before the reads were tied to the
 * budget, resolving this store's 500,000 stacks ignored it and a 100 ms budget answered
 * after 1.3 to 2.5 s (2 cores shared with other builds), with the whole profile. */
#include "t.h"

#include "model/budget.h"
#include "model/clock.h"
#include "model/error.h"
#include "store/store.h"

#include <sqlite3.h>
#include <sys/socket.h>
#include <unistd.h>

#define NS 1000000000LL
#define MS 1000000LL
#define T0 (1700000000LL * NS)
#define BOUND_NS (1000 * MS)
#if defined(__SANITIZE_ADDRESS__)
/* under ASan everything runs a few times slower (and the whole suite waits for the store
 * this builds): a tenth of it still outlasts the budgets below many times over */
#define NSTACKS 50000u
#define NROWS 30000
#else
/* distinct stacks of "big": resolving them takes seconds */
#define NSTACKS 500000u
/* stored profiles of "many": listing them is one statement of a few hundred ms */
#define NROWS 300000
#endif

static char tmpdir[256];
static struct sc_store *store; /* make_store's, shared by the tests */

/* A profile of n samples on n distinct stacks of depth frames out of nfuncs functions (a
 * fixed pseudo-random walk: the same store every run). */
static struct sc_profile *distinct_stacks(uint32_t n, uint32_t nfuncs, uint32_t depth)
{
    struct sc_profile *p = sc_profile_new();
    T_CHECK(p && sc_profile_add_sample_type(p, "cpu", "nanoseconds") >= 0);
    for (uint32_t i = 0; i < nfuncs; i++) {
        char name[64];
        int len =
            snprintf(name, sizeof name, "example.com/pkg%u.(*T%u).Method%u", i % 300, i % 50, i);
        int64_t s = sc_profile_intern(p, name, (size_t)len);
        int64_t fn = s >= 0 ? sc_profile_add_function(p, (uint32_t)s, 0) : s;
        T_CHECK(fn >= 0 && sc_profile_add_simple_location(p, (uint32_t)fn) == (int64_t)i);
    }
    uint64_t x = 88172645463325252ull;
    uint32_t locs[16];
    for (uint32_t i = 0; i < n; i++) {
        /* leaf i % nfuncs and a random caller chain: distinct for n well under
         * nfuncs^depth */
        locs[0] = i % nfuncs;
        for (uint32_t d = 1; d < depth; d++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            locs[d] = (uint32_t)(x % nfuncs);
        }
        int64_t v = 1 + (int64_t)(i % 97);
        T_CHECK(sc_profile_add_sample(p, locs, depth, &v, 0) >= 0);
    }
    return p;
}

static int write_one(struct sc_store *s, const char *service, int64_t t, const struct sc_profile *p)
{
    struct sc_labels labels;
    sc_labels_init(&labels);
    sc_labels_set(&labels, "service_name", 12, service, strlen(service));
    struct sc_store_write w = {NULL, &labels, "cpu", t, 10 * NS, p, 0};
    char err[SC_ERR_LEN] = "";
    int rc = sc_store_write(s, &w, err);
    if (rc)
        fprintf(stderr, "write: %s\n", err);
    sc_labels_release(&labels);
    return rc;
}

struct found {
    const char *want;
    uint64_t id;
};

static int find_series(void *ctx, const struct sc_store_series *se)
{
    struct found *f = ctx;
    if (strstr(se->labels, f->want))
        f->id = se->id;
    return 0;
}

static uint64_t series_id(struct sc_store *s, const char *service)
{
    struct found f = {service, 0};
    char err[SC_ERR_LEN] = "";
    T_EQ_INT(sc_store_series_list(s, NULL, "cpu:cpu", INT64_MIN, INT64_MAX, find_series, &f, err),
             0);
    T_CHECK(f.id != 0);
    return f.id;
}

/* Runs a query under a budget of timeout_ns (0: none) and client fd (-1: none); its time
 * in *took_ns, the budget's verdict in *stopped. */
struct budgeted {
    int64_t timeout_ns;
    int client_fd;
    int64_t took_ns;
    int stopped;
};

static void budget_start(struct sc_budget *b, const struct budgeted *q)
{
    sc_budget_begin(b, 0);
    sc_budget_limit(b, q->timeout_ns, q->client_fd);
}

static void budget_stop(struct sc_budget *b, struct budgeted *q, int64_t t0)
{
    q->took_ns = sc_mono_ns() - t0;
    sc_budget_end();
    q->stopped = atomic_load(&b->stopped);
}

static int merge_under(struct sc_store *s, const struct sc_store_query *q, struct budgeted *bq,
                       uint32_t *nsamples, char *err)
{
    struct sc_budget b;
    budget_start(&b, bq);
    int64_t t0 = sc_mono_ns();
    struct sc_profile *p = NULL;
    int rc = sc_store_merge(s, q, &p, err);
    budget_stop(&b, bq, t0);
    *nsamples = p ? sc_profile_nsamples(p) : 0;
    T_CHECK(rc == 0 || p == NULL);
    sc_profile_free(p);
    return rc;
}

static int count_profile(void *ctx, const struct sc_store_profile_info *pi)
{
    (void)pi;
    ++*(int64_t *)ctx;
    return 0;
}

static int list_under(struct sc_store *s, const struct sc_store_query *q, struct budgeted *bq,
                      int64_t *n, char *err)
{
    struct sc_budget b;
    budget_start(&b, bq);
    int64_t t0 = sc_mono_ns();
    *n = 0;
    int rc = sc_store_profiles(s, q, count_profile, n, err);
    budget_stop(&b, bq, t0);
    return rc;
}

/* A read stopped by its deadline: the budget's error, no partial answer, within the bound. */
static void check_stopped(const char *what, int rc, const char *err, const struct budgeted *bq,
                          const char *words, int why)
{
    fprintf(stderr, "  %s: rc %d in %.3f s (budget %.3f s): %s\n", what, rc, bq->took_ns / 1e9,
            bq->timeout_ns / 1e9, err);
    T_EQ_INT(rc, SC_ELIMIT);
    T_CHECK(strstr(err, words) != NULL);
    T_CHECK(strstr(err, "damaged") == NULL);
    T_EQ_INT(bq->stopped, why);
    T_CHECK(bq->took_ns < bq->timeout_ns + BOUND_NS);
}

/* Merging 500,000 distinct stacks: the read is quick (one block), resolving the stacks to
 * frames (thousands of statements, millions of lookups) is what takes seconds. */
static void test_resolve_deadline(void)
{
    struct sc_store *s = store;
    uint64_t big = series_id(s, "big");
    struct sc_store_query q = {NULL, &big, 1, "cpu:cpu", T0 - 60 * NS, T0 + 60 * NS, 0};
    char err[SC_ERR_LEN] = "";
    uint32_t n = 0;
    struct budgeted bq = {100 * MS, -1, 0, 0};
    int rc = merge_under(s, &q, &bq, &n, err);
    check_stopped("merge of the big series' stacks", rc, err, &bq, "time budget", SC_BUDGET_TIME);
    T_EQ_INT(n, 0);
    /* the store answers the next query whole */
    struct budgeted none = {0, -1, 0, 0};
    err[0] = 0;
    T_EQ_INT(merge_under(s, &q, &none, &n, err), 0);
    T_EQ_INT(n, NSTACKS);
    T_EQ_INT(none.stopped, 0);
}

/* Listing 300,000 profiles is one long statement: SQLite's progress handler interrupts it at
 * the deadline, or when the client has gone; the connection (the pool's only one: the
 * reads here run one at a time) then reads on a fresh snapshot. */
static void test_statement_deadline(void)
{
    struct sc_store *s = store;
    uint64_t many = series_id(s, "many");
    struct sc_store_query q = {NULL, &many, 1, "cpu:cpu", INT64_MIN, INT64_MAX, 0};
    char err[SC_ERR_LEN] = "";
    int64_t n = 0;
    struct budgeted bq = {5 * MS, -1, 0, 0};
    int rc = list_under(s, &q, &bq, &n, err);
    check_stopped("listing the many profiles", rc, err, &bq, "time budget", SC_BUDGET_TIME);
    T_CHECK(n < NROWS);

    int fds[2];
    T_EQ_INT(socketpair(AF_UNIX, SOCK_STREAM, 0, fds), 0);
    close(fds[1]); /* the client hung up */
    struct budgeted gone = {0, fds[0], 0, 0};
    err[0] = 0;
    rc = list_under(s, &q, &gone, &n, err);
    gone.timeout_ns = 0;
    check_stopped("listing, the client gone", rc, err, &gone, "client went away", SC_BUDGET_GONE);
    close(fds[0]);

    /* a raw merge stopped inside its read transaction (the span of 300,001 profiles, or
     * their blocks) */
    struct sc_store_query raw = q;
    raw.raw_only = 1;
    uint32_t nsamples = 0;
    bq.timeout_ns = 5 * MS;
    err[0] = 0;
    rc = merge_under(s, &raw, &bq, &nsamples, err);
    check_stopped("raw merge of the many profiles", rc, err, &bq, "time budget", SC_BUDGET_TIME);

    /* what is written now is read: no read holds an old snapshot, no statement is left
     * stepping */
    struct sc_profile *one = distinct_stacks(1, 1, 1);
    int64_t later = T0 + (NROWS + 10) * NS;
    T_EQ_INT(write_one(s, "many", later, one), 0);
    sc_profile_free(one);
    struct budgeted none = {0, -1, 0, 0};
    err[0] = 0;
    T_EQ_INT(list_under(s, &q, &none, &n, err), 0);
    T_EQ_INT(n, NROWS + 2);
    int64_t first = 0, last = 0;
    T_EQ_INT(sc_store_span(s, &q, &first, &last, err), 0);
    T_EQ_INT(first, T0);
    T_EQ_INT(last, later);
}

/* "big": one profile of NSTACKS distinct stacks; "many": NROWS + 1 copies of a one-sample
 * profile a second apart (copied in SQL: writing them one by one would take minutes). */
static struct sc_store *make_store(void)
{
    struct sc_store_opts o;
    sc_store_opts_init(&o);
    o.dir = tmpdir;
    o.background = 0;
    o.durable = 0;
    struct sc_store *s = NULL;
    char err[SC_ERR_LEN] = "";
    if (sc_store_open(&o, &s, err)) {
        fprintf(stderr, "open: %s\n", err);
        return NULL;
    }
    struct sc_profile *p = distinct_stacks(NSTACKS, 20000, 8);
    T_EQ_INT(write_one(s, "big", T0, p), 0);
    sc_profile_free(p);
    p = distinct_stacks(1, 1, 1);
    T_EQ_INT(write_one(s, "many", T0, p), 0);
    sc_profile_free(p);
    char path[400], sql[1024];
    snprintf(path, sizeof path, "%s/scorch.db", tmpdir);
    snprintf(sql, sizeof sql,
             "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < %d) "
             "INSERT INTO profiles(series_id, kind_id, time_ns, duration_ns, period, timed, "
             "nsamples, totals, block) SELECT series_id, kind_id, time_ns + x * %lld, "
             "duration_ns, period, timed, nsamples, totals, block FROM profiles, c "
             "WHERE series_id = %llu",
             NROWS, NS, (unsigned long long)series_id(s, "many"));
    sqlite3 *db = NULL;
    T_EQ_INT(sqlite3_open(path, &db), SQLITE_OK);
    T_EQ_INT(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
    T_EQ_INT(sqlite3_changes(db), NROWS);
    sqlite3_close(db);
    return s;
}

int main(void)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/scorch-test-deadline-XXXXXX");
    if (!mkdtemp(tmpdir)) {
        fprintf(stderr, "skipped: cannot create a temporary directory\n");
        return 77;
    }
    store = make_store();
    T_CHECK(store != NULL);
    if (store) {
        T_RUN(test_resolve_deadline);
        T_RUN(test_statement_deadline);
    }
    sc_store_close(store);
    t_rmrf(tmpdir);
    return t_done();
}
