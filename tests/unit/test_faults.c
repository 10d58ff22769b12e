/* test_faults.c - every allocation failing in turn: decoders, ingest and the store's write
 * path answer with an error and leak nothing (LeakSanitizer checks that in the ASan tree).
 *
 * Linked with -Wl,--wrap for malloc, calloc, realloc, strdup and strndup (CMakeLists.txt),
 * so the calls scorch's own code makes go through the counters below; libraries' internal
 * allocations (SQLite, zstd) are theirs and are not failed. */
#include "t.h"

#include "collect/queue.h"
#include "formats/folded.h"
#include "formats/input.h"
#include "formats/perf.h"
#include "formats/pprof.h"
#include "ingest/ingest.h"
#include "model/error.h"
#include "store/store.h"

#include <unistd.h>

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t m);
void *__real_realloc(void *p, size_t n);
char *__real_strdup(const char *s);
char *__real_strndup(const char *s, size_t n);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t n, size_t m);
void *__wrap_realloc(void *p, size_t n);
char *__wrap_strdup(const char *s);
char *__wrap_strndup(const char *s, size_t n);

static long alloc_calls, fail_at = -1; /* fail the fail_at-th call (1-based); -1: never */

static int fail_now(void)
{
    return ++alloc_calls == fail_at;
}

void *__wrap_malloc(size_t n)
{
    return fail_now() ? NULL : __real_malloc(n);
}

void *__wrap_calloc(size_t n, size_t m)
{
    return fail_now() ? NULL : __real_calloc(n, m);
}

void *__wrap_realloc(void *p, size_t n)
{
    return fail_now() ? NULL : __real_realloc(p, n);
}

char *__wrap_strdup(const char *s)
{
    return fail_now() ? NULL : __real_strdup(s);
}

char *__wrap_strndup(const char *s, size_t n)
{
    return fail_now() ? NULL : __real_strndup(s, n);
}

/* Runs op with the 1st, 2nd, ... allocation failing until it needs no more than it got;
 * each failed run must give an SC_E* error code (never a crash), and the last one success.
 * Returns the number of allocations the operation makes. */
static long each_failure(const char *what, int (*op)(void *), void *ctx)
{
    fail_at = -1;
    alloc_calls = 0;
    int rc = op(ctx);
    long total = alloc_calls;
    T_EQ_INT(rc, 0);
    long failed = 0;
    for (long n = 1; n <= total; n++) {
        alloc_calls = 0;
        fail_at = n;
        rc = op(ctx);
        fail_at = -1;
        /* a success is fine only when the run never reached the failing allocation (state
         * such as a cache's size makes runs differ a little); else the failure went
         * unreported */
        if (rc == 0 && alloc_calls >= n) {
            fprintf(stderr, "%s: allocation %ld of %ld failed silently\n", what, n, total);
            T_CHECK(0);
        } else if (rc != 0) {
            failed++;
            if (rc > 0 || rc < SC_EINTERNAL) {
                fprintf(stderr, "%s: allocation %ld of %ld gave %d\n", what, n, total, rc);
                T_CHECK(0);
            }
        }
    }
    fprintf(stderr, "%-34s %5ld allocations, %5ld failures reported\n", what, total, failed);
    T_CHECK(total > 0 && failed >= total / 2);
    return total;
}

/* ---- the operations ---- */

struct input {
    const char *data;
    size_t len;
};

static int op_folded(void *ctx)
{
    const struct input *in = ctx;
    struct sc_profile *p = sc_profile_new();
    if (!p)
        return SC_ENOMEM;
    char err[SC_ERR_LEN];
    int rc = sc_folded_decode(in->data, in->len, &sc_limits_cli, p, err);
    sc_profile_free(p);
    return rc;
}

static int op_perf(void *ctx)
{
    const struct input *in = ctx;
    struct sc_profile *p = sc_profile_new();
    if (!p)
        return SC_ENOMEM;
    char err[SC_ERR_LEN];
    struct sc_perf_opts o = {.threads = 1};
    int rc = sc_perf_decode(in->data, in->len, &o, &sc_limits_cli, p, err);
    sc_profile_free(p);
    return rc;
}

static int op_pprof(void *ctx)
{
    const struct input *in = ctx;
    struct sc_profile *p = sc_profile_new();
    if (!p)
        return SC_ENOMEM;
    char err[SC_ERR_LEN];
    int rc = sc_pprof_decode(in->data, in->len, &sc_limits_cli, p, err);
    sc_profile_free(p);
    return rc;
}

struct push {
    struct sc_store *s;
    struct sc_ingest_req r;
    const char *body; /* with %d: each run's own frame (so its frames and stacks are new) */
    int n;
    int claimed; /* gzip it as two members and push it as the server does (claimed_push) */
};

/* The server's two runs of a gzip body whose trailer claims too little (sc_server_push):
 * held to the claim, SC_ELIMIT with over_claim and nothing stored; unclaimed, stored. An
 * allocation failing in either run is its own error, never taken for over_claim (1: it
 * was, or the claimed run stored). */
static int claimed_push(struct push *x, const char *body, size_t len)
{
    /* the gzip is made with allocations neither counted nor failed */
    long calls = alloc_calls, at = fail_at;
    fail_at = -1;
    struct sc_buf gz = SC_BUF_INIT;
    int rc = sc_gzip(body, len / 2, 1, &gz);
    if (!rc)
        rc = sc_gzip(body + len / 2, len - len / 2, 1, &gz);
    alloc_calls = calls;
    fail_at = at;
    x->r.body = gz.data;
    x->r.len = gz.len;
    x->r.gzip_claim = sc_gzip_claim(gz.data, gz.len);
    struct sc_ingest_result res;
    char err[SC_ERR_LEN];
    if (!rc)
        rc = sc_ingest(x->s, &x->r, &sc_limits_cli, &res, err);
    if (!rc || (res.over_claim && rc != SC_ELIMIT)) {
        rc = 1;
    } else if (res.over_claim) {
        x->r.gzip_claim = 0;
        rc = sc_ingest(x->s, &x->r, &sc_limits_cli, &res, err);
        if (res.over_claim)
            rc = 1;
    }
    sc_buf_release(&gz);
    return rc;
}

static int op_ingest(void *ctx)
{
    struct push *x = ctx;
    /* a new time and new frames each run: every run writes a new profile, new stacks,
     * a new series; so each run makes the same allocations */
    char from[32], body[1024], name[64];
    snprintf(from, sizeof from, "%d", 1796000000 + x->n);
    snprintf(body, sizeof body, x->body, x->n, x->n);
    snprintf(name, sizeof name, "faults%d.cpu{env=test}", x->n);
    x->n++;
    x->r.from = from;
    x->r.body = body;
    x->r.len = strlen(body);
    x->r.name = name;
    if (x->claimed)
        return claimed_push(x, body, x->r.len);
    struct sc_ingest_result res;
    char err[SC_ERR_LEN];
    return sc_ingest(x->s, &x->r, &sc_limits_cli, &res, err);
}

static const char folded_text[] = "main;a;b 10\nmain;a;c 5\nmain;d 3\nother 1\n";
static const char perf_text[] = "prog 123/123 [000] 10.000000: 1 cpu-clock:\n"
                                "\t4005d0 hot (/bin/prog)\n\t400600 main (/bin/prog)\n\n"
                                "prog 123/124 [001] 10.010000: 1 cpu-clock:\n"
                                "\t4005e0 cold (/bin/prog)\n\t400600 main (/bin/prog)\n\n";

static void test_decoders(void)
{
    struct input f = {folded_text, sizeof folded_text - 1};
    each_failure("folded decode", op_folded, &f);
    struct input pf = {perf_text, sizeof perf_text - 1};
    each_failure("perf script decode", op_perf, &pf);
    /* a pprof: the folded profile encoded */
    struct sc_profile *p = sc_profile_new();
    char err[SC_ERR_LEN];
    T_EQ_INT(sc_folded_decode(folded_text, sizeof folded_text - 1, &sc_limits_cli, p, err), 0);
    struct sc_buf enc = SC_BUF_INIT;
    T_EQ_INT(sc_pprof_encode(p, &enc), 0);
    sc_profile_free(p);
    struct input pp = {enc.data, enc.len};
    each_failure("pprof decode", op_pprof, &pp);
    sc_buf_release(&enc);
}

static void test_ingest_and_store(void)
{
    char dir[] = "/tmp/scorch-test-faults-XXXXXX";
    if (!mkdtemp(dir)) {
        T_CHECK(0);
        return;
    }
    struct sc_store_opts o;
    sc_store_opts_init(&o);
    o.dir = dir;
    o.background = 0;
    o.durable = 0;
    struct sc_store *s = NULL;
    char err[SC_ERR_LEN];
    T_EQ_INT(sc_store_open(&o, &s, err), 0);
    if (!s)
        return;
    struct push x = {
        s, {.format = "folded"}, "main;a;b%d 10\nmain;a;c 5\nmain;d%d 3\nother 1\n", 0, 0};
    long n = each_failure("ingest + store write (folded)", op_ingest, &x);
    x.r.format = "perf_script";
    x.body = "prog 123/123 [000] 10.000000: 1 cpu-clock:\n\t4005d0 hot%d (/bin/prog)\n"
             "\t400600 main (/bin/prog)\n\nprog 123/124 [001] 10.010000: 1 cpu-clock:\n"
             "\t4005e0 cold%d (/bin/prog)\n\t400600 main (/bin/prog)\n\n";
    n += each_failure("ingest + store write (perf)", op_ingest, &x);
    x.r.format = "folded";
    x.body = "main;a;b%d 10\nmain;a;c 5\nmain;d%d 3\nother 1\n";
    x.claimed = 1;
    n += each_failure("ingest + store (gzip, claimed)", op_ingest, &x);
    T_CHECK(n > 0);
    /* what was written reads back whole: every successful run stored one profile */
    struct sc_store_stats st;
    T_EQ_INT(sc_store_stats(s, &st, err), 0);
    T_CHECK(st.profiles > 0);
    sc_store_close(s);
    t_rmrf(dir);
}

/* The agent's queue: memory running out while an entry is read back keeps the entry (it was
 * once dropped as if damaged, a profile lost); the next take gets it whole. */
static void test_queue_take(void)
{
    char dir[] = "/tmp/scorch-test-faults-q-XXXXXX";
    if (!mkdtemp(dir)) {
        T_CHECK(0);
        return;
    }
    struct sc_queue *q = NULL;
    char err[SC_ERR_LEN];
    T_EQ_INT(sc_queue_open(dir, 1 << 20, &q, err), 0);
    if (!q)
        return;
    T_EQ_INT(sc_queue_push(q, "name=a", 6, "main;a 1\n", 9, err), 0);
    long failed = 0;
    for (long n = 1; n <= 8; n++) {
        struct sc_queue_entry e;
        alloc_calls = 0;
        fail_at = n;
        int rc = sc_queue_take(q, 0, &e, err);
        fail_at = -1;
        if (rc == 0) {
            T_EQ_STR(e.meta.data, "name=a");
            T_EQ_MEM(e.body.data, e.body.len, "main;a 1\n");
            sc_queue_putback(q, e.seq);
            sc_queue_entry_release(&e);
            continue;
        }
        T_EQ_INT(rc, SC_ENOMEM);
        failed++;
    }
    T_CHECK(failed >= 2); /* the file's buffer and the entry's copies */
    struct sc_queue_entry e;
    T_EQ_INT(sc_queue_take(q, 0, &e, err), 0);
    T_EQ_STR(e.meta.data, "name=a");
    sc_queue_done(q, e.seq);
    sc_queue_entry_release(&e);
    sc_queue_close(q);
    t_rmrf(dir);
}

int main(void)
{
    T_RUN(test_decoders);
    T_RUN(test_ingest_and_store);
    T_RUN(test_queue_take);
    return t_done();
}
