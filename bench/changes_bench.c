/* changes_bench.c - change detection over many services: /api/v1/changes' plan
 * (sc_plan_watch) over a day of 100 services, timed for the last 24 h, 12 h, 6 h and 1 h.
 *
 * The store: SERVICES services (default 100), each pushing a one-minute CPU profile every
 * minute for HOURS hours (default 24) ending at the current minute: 144,000 profiles. A
 * service's profile draws ~230 distinct stacks from a pool of 400 of its own (Zipf-like
 * popularity) over 277 functions: 260 its own (handlers, a codec, a call graph below them),
 * 17 shared by every service (the runtime, net/http, the GC); its samples are Poisson around
 * each stack's share of the minute's load, the load varying 10% from minute to minute and
 * each stack 15% on its own (overdispersed, as real profiles are). Planted steps, +60% each,
 * with the service's `version` label going v1 -> v2 at the same minute (a new series, a
 * marker):
 *   svc00..svc04  runtime.mallocgc (shared, ~14% of the service) 3 h before the end
 *   svc05..svc09  the service's own codec.Encode (~10%)           9 h before the end
 *   svc10..svc14  runtime.mallocgc                                25 min before the end
 * Everything else is stationary: a finding in svc15..svc99, or of another function, is a
 * false one. The store is compacted (sc_store_compact, force) so every rollup exists.
 *
 * The queries: sc_plan_watch as /api/v1/changes makes it (query {}, group_by service_name,
 * the default step, q and functions), from a store opened with the server's read budget
 * (server.max_read_blocks = 20,000 blocks, server.max_read_rows), for now-24h, now-12h,
 * now-6h and now-1h with `now` 37 s past the last minute (as a UI asks: on no boundary;
 * BENCH_RANGES=24h,1h picks some; BENCH_NO_BUDGET=1 reads without the budget). Each is
 * run three times: the first is cold (stacks not yet in the symbol cache), the best of the
 * rest warm (wall time: the machine is shared; its CPU time beside it). Printed per range:
 * the step, steps x groups x functions tested (the functions any group tests: each its own
 * heaviest 200),
 * the planted steps in the range, those testable (3 steps on each side, the function among
 * those tested), those found, every other finding (false ones), the times and the goal
 * ratio (warm time / 2 s; the goal is the 24 h one, the shorter ranges are for scale).
 * BENCH_VERBOSE=1 prints every finding.
 *
 * usage: changes_bench [DIR] [SERVICES] [HOURS]   build a store in DIR (a temporary one,
 *                                                  removed after, when absent) and query it
 *        changes_bench --query DIR [STEP_S] [FUNCTIONS]   query a store it built before
 * The build prints `end=SECONDS` (the last minute's end) for bench/changes.sh, which asks a
 * server the same questions over HTTP; the store is written with fsync off (durability is
 * bench/store.sh's business). */
#include "formats/pprof.h"
#include "model/clock.h"
#include "model/error.h"
#include "model/labels.h"
#include "query/plan.h"
#include "query/watch.h"
#include "store/store.h"

#include <math.h>
#include <pthread.h>
#include <sys/resource.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define NS 1000000000LL
#define MAX_SVC 1000
#define NOWN 260     /* each service's own functions */
#define NHANDLERS 8  /* own 0..7: its HTTP handlers */
#define OWN_ENCODE 8 /* own 8: codec.Encode, a leaf */
#define NSTACKS 400  /* each service's stack pool */
#define MAXD 24
#define GOAL_S 2.0
/* the server's defaults (server.c): the plan runs under the same read budget */
#define SERVER_MAX_READ_BLOCKS 20000
#define SERVER_MAX_READ_ROWS (4u << 20)

/* The shared functions: roots first, then leaves, mallocgc the heaviest of them. */
static const char *const shared_roots[] = {"runtime.goexit", "net/http.(*conn).serve",
                                           "net/http.serverHandler.ServeHTTP"};
static const char *const gc_roots[] = {"runtime.gcBgMarkWorker", "runtime.gcDrain"};
enum { F_GOEXIT = 0, F_SERVE = 1, F_SERVEHTTP = 2, F_GCWORKER = 3, F_GCDRAIN = 4, F_MALLOC = 5 };
static const char *const shared_leaves[] = {"runtime.mallocgc",
                                            "runtime.scanobject",
                                            "runtime.memmove",
                                            "syscall.Syscall",
                                            "runtime.mapaccess2_faststr",
                                            "encoding/json.(*encodeState).marshal",
                                            "runtime.futex",
                                            "runtime.memclrNoHeapPointers",
                                            "crypto/sha256.block",
                                            "runtime.findObject",
                                            "strconv.AppendInt",
                                            "bytes.(*Buffer).Write"};
#define NLEAVES (int)(sizeof shared_leaves / sizeof *shared_leaves)
#define NSHARED (5 + NLEAVES)

static char *fname[NSHARED + MAX_SVC * NOWN];

enum plant { PLANT_NONE, PLANT_MALLOC_3H, PLANT_ENCODE_9H, PLANT_MALLOC_25M };

struct svc {
    uint32_t frames[NSTACKS][MAXD]; /* function ids, leaf first */
    uint8_t depth[NSTACKS];
    double w[NSTACKS]; /* each stack's share of the service's samples */
    double load;       /* samples a minute */
    enum plant plant;
    uint32_t plant_fn;        /* the function that steps */
    int64_t plant_at;         /* ns */
    uint8_t planted[NSTACKS]; /* the stack's leaf is plant_fn */
};

static struct svc *svcs;
static int nsvc = 100, hours = 24;
static int64_t t_end; /* the last minute's end, ns */

/* ---- random numbers: a stream per profile, so the store is the same whoever writes it ---- */

static uint64_t rnd(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/* A seed from a key: splitmix64's finalizer, so keys a few bits apart start unrelated
 * streams (xorshift's first outputs from near seeds are near each other: the minutes of a
 * service would drift together, a trend that is not in the data). */
static uint64_t seed(uint64_t k)
{
    k += 0x9e3779b97f4a7c15ULL;
    k = (k ^ (k >> 30)) * 0xbf58476d1ce4e5b9ULL;
    k = (k ^ (k >> 27)) * 0x94d049bb133111ebULL;
    return (k ^ (k >> 31)) | 1;
}

static double unif(uint64_t *s)
{
    return ((double)(rnd(s) >> 11) + 0.5) / 9007199254740992.0;
}

static double gauss(uint64_t *s)
{
    return sqrt(-2 * log(unif(s))) * cos(6.283185307179586 * unif(s));
}

static int64_t poisson(uint64_t *s, double lam)
{
    if (lam <= 0)
        return 0;
    if (lam > 30) {
        double x = lam + sqrt(lam) * gauss(s) + 0.5;
        return x < 0 ? 0 : (int64_t)x;
    }
    double limit = exp(-lam), p = 1;
    int64_t k = 0;
    while ((p *= unif(s)) > limit)
        k++;
    return k;
}

/* A multiplicative factor of mean 1 and coefficient of variation ~cv. */
static double noise(uint64_t *s, double cv)
{
    return exp(cv * gauss(s) - cv * cv / 2);
}

/* ---- the services ---- */

static void make_names(void)
{
    char b[128];
    for (int f = 0; f < NSHARED; f++) {
        if (f < 3)
            fname[f] = strdup(shared_roots[f]);
        else if (f < 5)
            fname[f] = strdup(gc_roots[f - 3]);
        else
            fname[f] = strdup(shared_leaves[f - 5]);
    }
    for (int s = 0; s < nsvc; s++)
        for (int k = 0; k < NOWN; k++) {
            if (k < NHANDLERS)
                snprintf(b, sizeof b, "example.com/svc%02d/api.(*Server).Handle%d", s, k);
            else if (k == OWN_ENCODE)
                snprintf(b, sizeof b, "example.com/svc%02d/codec.Encode", s);
            else
                snprintf(b, sizeof b, "example.com/svc%02d/pkg%d.(*T).Method%d", s, k % 17, k);
            fname[NSHARED + s * NOWN + k] = strdup(b);
        }
}

static void make_service(int si, struct svc *v)
{
    uint64_t r = seed((uint64_t)si);
    uint32_t own0 = NSHARED + (uint32_t)si * NOWN;
    double sum = 0;
    for (int k = 0; k < NSTACKS; k++) {
        uint32_t path[MAXD];
        int d = 0;
        if (k % 20 == 7) { /* the GC's own stacks */
            path[d++] = F_GOEXIT;
            path[d++] = F_GCWORKER;
            path[d++] = F_GCDRAIN;
            path[d++] = F_MALLOC + 1; /* scanobject */
        } else {
            path[d++] = F_GOEXIT;
            path[d++] = F_SERVE;
            path[d++] = F_SERVEHTTP;
            uint32_t f = (uint32_t)(rnd(&r) % NHANDLERS);
            path[d++] = (own0 + f);
            int walk = 2 + (int)(rnd(&r) % 10);
            f = 9 + (uint32_t)(rnd(&r) % (NOWN - 9));
            for (int j = 0; j < walk; j++) {
                path[d++] = (own0 + f);
                f = 9 + (f * 31 + 7 + (uint32_t)(rnd(&r) % 4) * 101) % (NOWN - 9);
            }
            uint32_t u = (uint32_t)(rnd(&r) % 100);
            if (u < 12) /* a codec call */
                path[d++] = (own0 + OWN_ENCODE);
            else if (u < 52) { /* a shared leaf, mallocgc the most often */
                double x = unif(&r);
                path[d++] = (F_MALLOC + (int)(NLEAVES * x * x));
            }
        }
        for (int j = 0; j < d; j++)
            v->frames[k][j] = path[d - 1 - j];
        v->depth[k] = (uint8_t)d;
        v->w[k] = pow(k + 1.0, -1.1);
        sum += v->w[k];
    }
    for (int k = 0; k < NSTACKS; k++)
        v->w[k] /= sum;
    v->load = 600 + (double)(rnd(&r) % 1400); /* samples a minute: 0.1 to 0.33 of a core */
    v->plant = si < 5    ? PLANT_MALLOC_3H
               : si < 10 ? PLANT_ENCODE_9H
               : si < 15 ? PLANT_MALLOC_25M
                         : PLANT_NONE;
    v->plant_fn = v->plant == PLANT_ENCODE_9H ? own0 + OWN_ENCODE : F_MALLOC;
    int64_t back = v->plant == PLANT_MALLOC_3H    ? 3 * 3600
                   : v->plant == PLANT_ENCODE_9H  ? 9 * 3600
                   : v->plant == PLANT_MALLOC_25M ? 25 * 60
                                                  : 0;
    v->plant_at = t_end - back * NS;
    for (int k = 0; k < NSTACKS; k++)
        v->planted[k] = v->plant != PLANT_NONE && v->frames[k][0] == v->plant_fn;
}

/* ---- writing ---- */

struct scratch {
    int32_t *loc_of; /* function id -> location in the profile being built, or -1 */
    uint32_t *used, nused;
};

/* Service si's profile of the minute starting at t. */
static struct sc_profile *make_profile(const struct svc *v, int si, int64_t t, struct scratch *sc)
{
    uint64_t r = seed(((uint64_t)si << 40) ^ (uint64_t)(t / NS));
    struct sc_profile *p = sc_profile_new();
    if (!p)
        return NULL;
    sc_profile_add_sample_type(p, "samples", "count");
    sc_profile_add_sample_type(p, "cpu", "nanoseconds");
    p->default_sample_type = p->sample_types[1].type;
    p->period = 10000000;
    p->period_type = p->sample_types[1];
    double load = v->load * noise(&r, 0.10);
    int stepped = v->plant != PLANT_NONE && t >= v->plant_at;
    for (int k = 0; k < NSTACKS; k++) {
        double lam = load * v->w[k] * noise(&r, 0.15);
        if (stepped && v->planted[k])
            lam *= 1.6;
        int64_t c = poisson(&r, lam);
        if (!c)
            continue;
        uint32_t locs[MAXD];
        for (int j = 0; j < v->depth[k]; j++) {
            uint32_t f = v->frames[k][j];
            if (sc->loc_of[f] < 0) {
                int64_t nm = sc_profile_intern(p, fname[f], strlen(fname[f]));
                int64_t fn = sc_profile_add_function(p, (uint32_t)nm, 0);
                sc->loc_of[f] = (int32_t)sc_profile_add_simple_location(p, (uint32_t)fn);
                sc->used[sc->nused++] = f;
            }
            locs[j] = (uint32_t)sc->loc_of[f];
        }
        int64_t vals[2] = {c, c * 10000000};
        sc_profile_add_sample(p, locs, v->depth[k], vals, 0);
    }
    for (uint32_t i = 0; i < sc->nused; i++)
        sc->loc_of[sc->used[i]] = -1;
    sc->nused = 0;
    return p;
}

static struct sc_store *store;
static int next_minute;
static pthread_mutex_t next_mu = PTHREAD_MUTEX_INITIALIZER;
static _Atomic uint64_t nsamples;

/* Writes whole minutes, every service's profile of a minute in one transaction. */
static void *writer(void *arg)
{
    (void)arg;
    int nmin = hours * 60;
    struct scratch sc = {malloc((NSHARED + (size_t)nsvc * NOWN) * sizeof(int32_t)),
                         malloc((NSHARED + (size_t)nsvc * NOWN) * sizeof(uint32_t)), 0};
    struct sc_labels *ls = calloc((size_t)nsvc, sizeof *ls);
    struct sc_store_write *ws = calloc((size_t)nsvc, sizeof *ws);
    if (!sc.loc_of || !sc.used || !ls || !ws) {
        fprintf(stderr, "out of memory\n");
        exit(1);
    }
    memset(sc.loc_of, -1, (NSHARED + (size_t)nsvc * NOWN) * sizeof(int32_t));
    int64_t t0 = t_end - (int64_t)nmin * 60 * NS;
    for (;;) {
        pthread_mutex_lock(&next_mu);
        int m = next_minute++;
        pthread_mutex_unlock(&next_mu);
        if (m >= nmin)
            break;
        int64_t t = t0 + (int64_t)m * 60 * NS;
        for (int s = 0; s < nsvc; s++) {
            char name[32], inst[32];
            int nl = snprintf(name, sizeof name, "svc%02d", s);
            int il = snprintf(inst, sizeof inst, "10.0.%d.%d:6060", s / 200, s % 200 + 1);
            const char *ver = svcs[s].plant != PLANT_NONE && t >= svcs[s].plant_at ? "v2" : "v1";
            sc_labels_init(&ls[s]);
            sc_labels_set(&ls[s], "service_name", 12, name, (size_t)nl);
            sc_labels_set(&ls[s], "env", 3, "prod", 4);
            sc_labels_set(&ls[s], "instance", 8, inst, (size_t)il);
            sc_labels_set(&ls[s], "version", 7, ver, 2);
            struct sc_profile *p = make_profile(&svcs[s], s, t, &sc);
            if (!p) {
                fprintf(stderr, "out of memory\n");
                exit(1);
            }
            nsamples += p->nsamples;
            ws[s] = (struct sc_store_write){NULL, &ls[s], "cpu", t, 60 * NS, p, 0};
        }
        char err[SC_ERR_LEN];
        if (sc_store_write_many(store, ws, (uint32_t)nsvc, err)) {
            fprintf(stderr, "write: %s\n", err);
            exit(1);
        }
        for (int s = 0; s < nsvc; s++) {
            sc_profile_free((struct sc_profile *)ws[s].p);
            sc_labels_release(&ls[s]);
        }
    }
    free(sc.loc_of);
    free(sc.used);
    free(ls);
    free(ws);
    return NULL;
}

/* ---- querying ---- */

static double cpu_s(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + ru.ru_stime.tv_sec +
           ru.ru_stime.tv_usec / 1e6;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Whether change c is a planted step (its service's, of its function, planted in
 * [from, until)). */
static int planted(const struct sc_watch *w, const struct sc_change *c, int64_t from, int64_t until)
{
    const char *key = w->fs.keys[c->group];
    int si = -1;
    if (sscanf(key, "svc%d", &si) != 1 || si < 0 || si >= nsvc)
        return 0;
    const struct svc *v = &svcs[si];
    return v->plant != PLANT_NONE && c->kind == SC_CHANGE_STEP && v->plant_at > from &&
           v->plant_at < until && !strcmp(w->fs.names[c->function], fname[v->plant_fn]);
}

/* Whether w tests function name in service si's group. */
static int tested_in(const struct sc_watch *w, int si, const char *name)
{
    for (uint32_t g = 0; g < w->fs.ngroups; g++) {
        int k = -1;
        if (sscanf(w->fs.keys[g], "svc%d", &k) != 1 || k != si)
            continue;
        for (uint32_t f = 0; f < w->fs.nfuncs; f++)
            if (!strcmp(w->fs.names[f], name))
                return sc_fnseries_line(&w->fs, w->fs.self, g, f) != NULL;
    }
    return 0;
}

/* The planted steps in [from, until), and in *testable those with at least 3 steps of the
 * range on each side (the fewest a step needs to be one: changes.md) whose function is
 * among the tested ones of its service (w's). */
static int in_range(const struct sc_watch *w, int64_t from, int64_t until, int *testable)
{
    int n = 0;
    *testable = 0;
    for (int s = 0; s < nsvc; s++) {
        int64_t at = svcs[s].plant_at;
        if (svcs[s].plant == PLANT_NONE || at <= from || at >= until)
            continue;
        n++;
        int tested = tested_in(w, s, fname[svcs[s].plant_fn]);
        *testable += tested && at >= from + 3 * w->fs.step && at <= until - 3 * w->fs.step;
    }
    return n;
}

struct result {
    int rc;
    char err[SC_ERR_LEN];
    int64_t step;
    uint32_t nsteps, ngroups, nfuncs, nchanges, found;
    int planted, testable;  /* in_range's */
    double cold, warm, cpu; /* wall: the first run, the best of the others; CPU: its best */
};

static void query(const char *from, int64_t now_ns, int64_t step_ns, uint32_t funcs,
                  struct result *res)
{
    memset(res, 0, sizeof *res);
    res->warm = res->cpu = 1e9;
    for (int run = 0; run < 3; run++) {
        struct sc_selection s;
        struct sc_plan_args a = {"{}", from, "now", NULL};
        char err[SC_ERR_LEN] = "";
        double t0 = now_s(), c0 = cpu_s();
        int rc = sc_selection_parse(&s, &a, "cpu:cpu", now_ns, err);
        if (rc == 0)
            rc = sc_selection_find(&s, store, "", err);
        struct sc_watch w;
        struct sc_watch_args wa = {NULL, step_ns, 0, 0, funcs, NULL};
        if (rc == 0)
            rc = sc_plan_watch(store, "", &s, &wa, &w, err);
        double dt = now_s() - t0, dc = cpu_s() - c0;
        res->rc = rc;
        if (dc < res->cpu)
            res->cpu = dc;
        if (rc) {
            res->cold = dt;
            snprintf(res->err, sizeof res->err, "%s", err);
            sc_selection_release(&s);
            return;
        }
        if (run == 0)
            res->cold = dt;
        else if (dt < res->warm)
            res->warm = dt;
        res->step = w.fs.step;
        res->nsteps = w.fs.nsteps;
        res->ngroups = w.fs.ngroups;
        res->nfuncs = w.fs.nfuncs;
        res->nchanges = w.nchanges;
        res->found = 0;
        for (uint32_t i = 0; i < w.nchanges; i++)
            res->found += (uint32_t)planted(&w, &w.changes[i], s.from, s.until);
        res->planted = in_range(&w, s.from, s.until, &res->testable);
        if (getenv("BENCH_VERBOSE") && run == 0)
            for (uint32_t i = 0; i < w.nchanges; i++) {
                const struct sc_change *c = &w.changes[i];
                printf("  %s %s %s at %+.0f min %+.0f%% q=%.2g\n", w.fs.keys[c->group],
                       w.fs.names[c->function], sc_change_kind_name(c->kind),
                       c->at_ns ? (double)(c->at_ns - t_end) / 60e9 : 0.0, c->change_pct, c->q);
            }
        sc_watch_release(&w);
        sc_selection_release(&s);
    }
}

/* Whether name is one of the comma-separated list's items. */
static int listed(const char *list, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = list; p; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL)
        if (!strncmp(p, name, n) && (p[n] == ',' || p[n] == 0))
            return 1;
    return 0;
}

static int run_queries(const char *dir, int64_t step_ns, uint32_t funcs)
{
    struct sc_store_opts o;
    sc_store_opts_init(&o);
    o.dir = dir;
    o.background = 0;
    o.retention_ns = 0;
    if (!getenv("BENCH_NO_BUDGET")) { /* to see what a read over the budget would cost */
        o.max_read_blocks = SERVER_MAX_READ_BLOCKS;
        o.max_read_rows = SERVER_MAX_READ_ROWS;
    }
    char err[SC_ERR_LEN];
    if (sc_store_open(&o, &store, err)) {
        fprintf(stderr, "%s\n", err);
        return 1;
    }
    int64_t now_ns =
        t_end + (getenv("BENCH_NOW_OFFSET") ? atoll(getenv("BENCH_NOW_OFFSET")) : 37) * NS;
    static const char *const from[] = {"now-24h", "now-12h", "now-6h", "now-1h"};
    /* planted: the planted steps in the range; testable: those with 3 steps each side whose
     * function is among the tested; found: the planted steps found; other: every other
     * finding (false ones) */
    printf("%-5s %6s %5s %6s %5s %7s %8s %5s %5s %7s %7s %6s %6s\n", "range", "step", "steps",
           "groups", "funcs", "planted", "testable", "found", "other", "cold s", "warm s", "CPU s",
           "/ 2 s");
    const char *only = getenv("BENCH_RANGES"); /* some of them: "6h,1h" */
    for (int k = 0; k < 4; k++) {
        if (only && !listed(only, from[k] + 4))
            continue;
        struct result r;
        query(from[k], now_ns, step_ns, funcs, &r);
        if (r.rc) {
            printf("%-5s failed after %.2f s: %s\n", from[k] + 4, r.cold, r.err);
            continue;
        }
        printf("%-5s %5llds %5u %6u %5u %7d %8d %5u %5u %7.2f %7.2f %6.2f %6.2f\n", from[k] + 4,
               (long long)(r.step / NS), r.nsteps, r.ngroups, r.nfuncs, r.planted, r.testable,
               r.found, r.nchanges - r.found, r.cold, r.warm, r.cpu, r.warm / GOAL_S);
        fflush(stdout);
    }
    sc_store_close(store);
    return 0;
}

/* The end the store was built with, kept beside it. */
static int end_file(const char *dir, int write)
{
    char path[512];
    snprintf(path, sizeof path, "%s/changes_bench.end", dir);
    FILE *f = fopen(path, write ? "w" : "r");
    if (!f)
        return -1;
    long long e = t_end / NS;
    int ok = write ? fprintf(f, "%lld %d %d\n", e, nsvc, hours) > 0
                   : fscanf(f, "%lld %d %d", &e, &nsvc, &hours) == 3;
    t_end = e * NS;
    return fclose(f) == 0 && ok ? 0 : -1;
}

static void setup(void)
{
    if (nsvc < 15 || nsvc > MAX_SVC || hours < 1 || hours > 24 * 31) {
        fprintf(stderr, "SERVICES 15..%d, HOURS 1..744\n", MAX_SVC);
        exit(2);
    }
    make_names();
    svcs = calloc((unsigned)nsvc, sizeof *svcs);
    if (!svcs) {
        fprintf(stderr, "out of memory\n");
        exit(1);
    }
    for (int s = 0; s < nsvc; s++)
        make_service(s, &svcs[s]);
}

int main(int argc, char **argv)
{
    if (argc > 2 && !strcmp(argv[1], "--query")) {
        if (end_file(argv[2], 0)) {
            fprintf(stderr, "%s: not a store changes_bench built\n", argv[2]);
            return 1;
        }
        setup();
        return run_queries(argv[2], argc > 3 ? atoll(argv[3]) * NS : 0,
                           argc > 4 ? (uint32_t)atoi(argv[4]) : 0);
    }
    if (argc > 1 && argv[1][0] == '-') {
        fprintf(stderr, "usage: changes_bench [DIR] [SERVICES] [HOURS]\n"
                        "       changes_bench --query DIR [STEP_S] [FUNCTIONS]\n");
        return strcmp(argv[1], "--help") && strcmp(argv[1], "-h") ? 2 : 0;
    }
    char dir[256];
    int tmp = argc <= 1 || !argv[1][0];
    if (!tmp) {
        snprintf(dir, sizeof dir, "%s", argv[1]);
    } else {
        snprintf(dir, sizeof dir, "/tmp/scorch-changes-bench-XXXXXX");
        if (!mkdtemp(dir))
            return 1;
    }
    nsvc = argc > 2 ? atoi(argv[2]) : 100;
    hours = argc > 3 ? atoi(argv[3]) : 24;
    t_end = sc_wall_ns() / (60 * NS) * (60 * NS);
    setup();
    struct sc_store_opts o;
    sc_store_opts_init(&o);
    o.dir = dir;
    o.background = 0;
    o.retention_ns = 0;
    o.durable = 0;
    char err[SC_ERR_LEN];
    if (sc_store_open(&o, &store, err)) {
        fprintf(stderr, "%s\n", err);
        return 1;
    }
    double t0 = now_s();
    pthread_t tid[2];
    for (int i = 0; i < 2; i++)
        pthread_create(&tid[i], NULL, writer, NULL);
    for (int i = 0; i < 2; i++)
        pthread_join(tid[i], NULL);
    double wt = now_s() - t0;
    t0 = now_s();
    if (sc_store_compact(store, t_end + 2 * 86400 * NS, 1, err)) {
        fprintf(stderr, "compact: %s\n", err);
        return 1;
    }
    double ct = now_s() - t0;
    struct sc_store_stats st;
    sc_store_stats(store, &st, err);
    sc_store_close(store);
    if (end_file(dir, 1)) {
        fprintf(stderr, "cannot write %s/changes_bench.end\n", dir);
        return 1;
    }
    uint64_t np = (uint64_t)nsvc * hours * 60;
    printf("store: %d services x %d h, %llu profiles (%.0f stacks each on average), %llu "
           "series; written in %.1f s (fsync off), compacted in %.1f s (%llu rollups)\n",
           nsvc, hours, (unsigned long long)np, (double)nsamples / (double)np,
           (unsigned long long)st.series, wt, ct, (unsigned long long)st.rollups);
    double share[2] = {0, 0}; /* the planted functions' self shares, over their services */
    for (int si = 0; si < 10; si++)
        for (int k = 0; k < NSTACKS; k++)
            share[si >= 5] += svcs[si].planted[k] ? svcs[si].w[k] / 5 : 0;
    printf("planted: +60%% steps of runtime.mallocgc (%.1f%% of its services' samples) and of "
           "a service's own codec.Encode (%.1f%%)\n",
           100 * share[0], 100 * share[1]);
    printf("end=%lld\n", (long long)(t_end / NS));
    fflush(stdout);
    int rc = run_queries(dir, 0, 0);
    if (tmp) {
        char cmd[300];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
        if (system(cmd) != 0)
            return 1;
    }
    return rc;
}
