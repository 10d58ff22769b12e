/* test_budget.c - a query's memory budget (model/budget.h): what scorch's own code
 * allocates on the budget's threads is charged, freeing gives it back, an allocation past
 * the budget fails like out-of-memory (and a decoder fails cleanly on it, leaking nothing),
 * and helper threads of the same query charge it too.
 *
 * Linked with budget_wrap.c and -Wl,--wrap for the allocator (CMakeLists.txt), as the
 * scorch binary is. */
#include "t.h"

#include "formats/folded.h"
#include "formats/limits.h"
#include "model/budget.h"
#include "model/buf.h"
#include "model/error.h"
#include "model/profile.h"

#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/* Keeps the compiler from pairing away a malloc with its free. */
static void *volatile sink;

static void *touch(void *p, size_t n)
{
    if (p)
        memset(p, 0xa5, n);
    sink = p;
    return p;
}

static void t_charges(void)
{
    T_CHECK(sc_budget_enforced());
    struct sc_budget b;
    sc_budget_begin(&b, 1 << 20);
    T_CHECK(sc_budget_current() == &b);
    char *a = touch(malloc(512 << 10), 512 << 10);
    T_CHECK(a != NULL);
    T_CHECK(atomic_load(&b.used) >= 512 << 10);
    /* 512 KiB more would pass 1 MiB: refused, remembered, a left untouched */
    char *c = touch(malloc(600 << 10), 0);
    T_CHECK(c == NULL);
    T_EQ_INT(atomic_load(&b.over), 1);
    T_EQ_INT((unsigned char)a[100], 0xa5);
    /* realloc within the budget is charged by the difference; past it fails, a kept */
    char *g = realloc(a, 700 << 10);
    T_CHECK(g != NULL);
    a = g ? g : a;
    T_CHECK(atomic_load(&b.used) >= 700 << 10);
    volatile size_t huge = 2 << 20;
    char *h = realloc(a, huge);
    T_CHECK(h == NULL);
    if (h)
        a = h;
    T_EQ_INT((unsigned char)a[100], 0xa5);
    char *s = strdup("a string that is charged");
    char *n = strndup("charged too, but only in part", 7);
    T_EQ_STR(n, "charged");
    int64_t with = atomic_load(&b.used);
    free(s);
    free(n);
    T_CHECK(atomic_load(&b.used) < with);
    /* calloc's product overflow is refused without allocating */
    volatile size_t many = SIZE_MAX / 2;
    T_CHECK(calloc(many, 4) == NULL);
    free(a);
    T_EQ_INT(atomic_load(&b.used), 0);
    T_CHECK(atomic_load(&b.peak) >= 700 << 10);
    T_CHECK(atomic_load(&b.peak) <= 1 << 20);
    sc_budget_end();
    T_CHECK(sc_budget_current() == NULL);
    /* off the budget nothing is refused or charged */
    void *big = touch(malloc(4 << 20), 4 << 20);
    T_CHECK(big != NULL);
    free(big);
    T_EQ_INT(atomic_load(&b.used), 0);
}

/* A folded input of n distinct stacks, each several distinct frames. */
static void folded_input(struct sc_buf *in, int n)
{
    for (int i = 0; i < n; i++)
        sc_buf_printf(in, "main;serve_%d;handle_%d;parse_%d;a_rather_long_leaf_name_%d %d\n",
                      i % 97, i, i * 7, i * 13, i % 5 + 1);
}

/* folded_input(n) decoded (outside any budget), NULL when that failed. */
static struct sc_profile *decoded(int n)
{
    struct sc_buf in = SC_BUF_INIT;
    folded_input(&in, n);
    char err[SC_ERR_LEN] = "";
    struct sc_profile *p = sc_profile_new();
    int rc = p && !in.oom ? sc_folded_decode(in.data, in.len, &sc_limits_cli, p, err) : SC_ENOMEM;
    T_EQ_INT(rc, 0);
    sc_buf_release(&in);
    if (rc) {
        sc_profile_free(p);
        return NULL;
    }
    return p;
}

static void t_decoder_over_budget(void)
{
    struct sc_buf in = SC_BUF_INIT;
    folded_input(&in, 50000);
    T_CHECK(!in.oom);
    char err[SC_ERR_LEN] = "";

    /* unlimited: counted only; what it held is given back when the profile is freed */
    struct sc_budget b;
    sc_budget_begin(&b, 0);
    struct sc_profile *p = sc_profile_new();
    T_CHECK(p != NULL);
    int rc = p ? sc_folded_decode(in.data, in.len, &sc_limits_cli, p, err) : SC_ENOMEM;
    T_EQ_INT(rc, 0);
    int64_t need = atomic_load(&b.peak);
    T_CHECK(need > (int64_t)(2 << 20)); /* 50k stacks of new frames take megabytes */
    sc_profile_free(p);
    T_CHECK(atomic_load(&b.used) < 64 << 10);
    T_EQ_INT(atomic_load(&b.over), 0);
    sc_budget_end();

    /* half of what it needs: the decode fails as out of memory, cleanly (ASan's leak check) */
    sc_budget_begin(&b, (uint64_t)need / 2);
    p = sc_profile_new();
    rc = p ? sc_folded_decode(in.data, in.len, &sc_limits_cli, p, err) : SC_ENOMEM;
    T_EQ_INT(rc, SC_ENOMEM);
    T_EQ_INT(atomic_load(&b.over), 1);
    T_CHECK(atomic_load(&b.peak) <= need / 2);
    sc_profile_free(p);
    T_CHECK(atomic_load(&b.used) < 64 << 10);
    sc_budget_end();
    sc_buf_release(&in);
}

/* Each part of a parallel walk allocates on its own thread: all of it is the query's. */
struct part_ctx {
    void *held[64];
    int n;
};

static int hold_some(void *ctx, const uint32_t *locs, uint32_t nlocs, const int64_t *values)
{
    (void)locs, (void)nlocs, (void)values;
    struct part_ctx *c = ctx;
    if (c->n < 64 && !(c->held[c->n++] = touch(malloc(64 << 10), 64 << 10)))
        return SC_ENOMEM;
    return 0;
}

static void t_threads_charge(void)
{
    char err[SC_ERR_LEN] = "";
    struct sc_profile *p = decoded(200);
    if (!p)
        return;
    struct part_ctx parts[2] = {{{0}, 0}, {{0}, 0}};
    void *ctxs[2] = {&parts[0], &parts[1]};
    struct sc_budget b;
    sc_budget_begin(&b, 0);
    T_EQ_INT(sc_profile_foreach_sample_parallel(p, 2, hold_some, ctxs, err), 0);
    int held = parts[0].n + parts[1].n;
    T_CHECK(parts[1].n > 0);
    T_CHECK(atomic_load(&b.used) >= (int64_t)held * (64 << 10));
    for (int k = 0; k < 2; k++)
        for (int i = 0; i < parts[k].n; i++)
            free(parts[k].held[i]);
    T_CHECK(atomic_load(&b.used) < 64 << 10);
    sc_budget_end();
    sc_profile_free(p);
}

/* Counts the samples walked. */
static int count_one(void *ctx, const uint32_t *locs, uint32_t nlocs, const int64_t *values)
{
    (void)locs, (void)nlocs, (void)values;
    ++*(int *)ctx;
    return 0;
}

static void t_deadline_and_client(void)
{
    char err[SC_ERR_LEN] = "";
    struct sc_profile *p = decoded(20000);
    if (!p)
        return;
    int n = 0;
    /* no budget on the thread: nothing stops */
    T_EQ_INT(sc_budget_poll(err), 0);
    T_EQ_INT(sc_profile_foreach_sample(p, count_one, &n, err), 0);
    T_EQ_INT(n, 20000);

    /* a deadline already past: the walk stops at its first check, naming why */
    struct sc_budget b;
    sc_budget_begin(&b, 0);
    sc_budget_limit(&b, 1, -1);
    struct timespec ms = {0, 2000000};
    nanosleep(&ms, NULL);
    n = 0;
    err[0] = 0;
    T_EQ_INT(sc_profile_foreach_sample(p, count_one, &n, err), SC_ELIMIT);
    T_EQ_INT(n, 4096);
    T_CHECK(strstr(err, "time budget") != NULL);
    T_EQ_INT(atomic_load(&b.stopped), SC_BUDGET_TIME);
    sc_budget_end();

    /* the client's socket: open, the walk goes on; hung up, it stops */
    int sv[2];
    T_EQ_INT(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    sc_budget_begin(&b, 0);
    sc_budget_limit(&b, 0, sv[0]);
    n = 0;
    T_EQ_INT(sc_profile_foreach_sample(p, count_one, &n, err), 0);
    T_EQ_INT(n, 20000);
    close(sv[1]);
    atomic_store(&b.next_client_ns, 0); /* look at once, not in 50 ms */
    n = 0;
    T_EQ_INT(sc_profile_foreach_sample(p, count_one, &n, err), SC_ELIMIT);
    T_EQ_INT(n, 4096);
    T_CHECK(strstr(err, "client went away") != NULL);
    T_EQ_INT(atomic_load(&b.stopped), SC_BUDGET_GONE);
    sc_budget_end();
    close(sv[0]);
    sc_profile_free(p);
}

/* A loop's poll (sc_budget_poll_every) looks at the budget once every 4,096 turns only,
 * and a stopped budget stops it on the next of those. */
static void t_poll_every(void)
{
    char err[SC_ERR_LEN] = "";
    T_EQ_INT(sc_budget_poll_every(4095, err), 0); /* no budget */
    struct sc_budget b;
    sc_budget_begin(&b, 0);
    sc_budget_limit(&b, 1, -1);
    struct timespec ms = {0, 2000000};
    nanosleep(&ms, NULL);
    uint64_t first = 0;
    for (uint64_t i = 0; i < 3 * 4096 && !first; i++)
        if (sc_budget_poll_every(i, err))
            first = i + 1;
    T_EQ_INT(first, 4096);
    T_CHECK(strstr(err, "time budget") != NULL);
    T_EQ_INT(sc_budget_poll_every(4096, err), 0);
    T_EQ_INT(sc_budget_poll_every(8191, err), SC_ELIMIT);
    sc_budget_end();
}

int main(void)
{
    T_RUN(t_charges);
    T_RUN(t_decoder_over_budget);
    T_RUN(t_threads_charge);
    T_RUN(t_deadline_and_client);
    T_RUN(t_poll_every);
    return t_done();
}
