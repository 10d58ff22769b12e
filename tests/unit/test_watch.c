/* test_watch.c - what changed over a range, from the store (query/watch.c): the default step
 * sc_plan_watch takes for each length of range, what it does when that step reads more
 * than the read budget allows, and that each group's own functions are tested (a light
 * service among heavy ones included). */
#include "t.h"

#include "formats/folded.h"
#include "formats/input.h"
#include "model/error.h"
#include "query/plan.h"
#include "query/watch.h"
#include "store/store.h"

#include <math.h>
#include <stdio.h>

#define NS 1000000000LL
/* a whole hour: the ranges below from it are whole ten-minute rollups */
#define T0 1699999200LL
#define HOURS 24
/* service a's main.work doubles here */
#define STEP_AT (T0 + 21 * 3600)

static char tmpdir[256], dir[512];

static struct sc_store *open_store_at(const char *d, uint64_t max_read_blocks)
{
    struct sc_store_opts o;
    sc_store_opts_init(&o);
    o.dir = d;
    o.background = 0;
    o.retention_ns = 0;
    o.durable = 0;
    o.max_read_blocks = max_read_blocks;
    struct sc_store *s = NULL;
    char err[SC_ERR_LEN] = "";
    if (sc_store_open(&o, &s, err))
        fprintf(stderr, "open: %s\n", err);
    T_CHECK(s != NULL);
    return s;
}

static struct sc_store *open_store(uint64_t max_read_blocks)
{
    return open_store_at(dir, max_read_blocks);
}

/* Writes folded text as a one-minute CPU profile of service svc at t (s). */
static int put(struct sc_store *st, const char *svc, int64_t t, const char *text)
{
    char err[SC_ERR_LEN] = "";
    struct sc_profile *p = sc_profile_new();
    int rc = p ? sc_folded_decode(text, strlen(text), &sc_limits_cli, p, err) : SC_ENOMEM;
    struct sc_labels l;
    sc_labels_init(&l);
    sc_labels_set(&l, "service_name", 12, svc, strlen(svc));
    struct sc_store_write w = {NULL, &l, "cpu", t * NS, 60 * NS, p, 0};
    if (rc == 0)
        rc = sc_store_write(st, &w, err);
    if (rc)
        fprintf(stderr, "write: %s\n", err);
    sc_labels_release(&l);
    sc_profile_free(p);
    T_EQ_INT(rc, 0);
    return rc;
}

/* A day of one-minute CPU profiles of services a and b, a's main.work doubling at STEP_AT,
 * compacted: the rollups exist. */
static int fill(void)
{
    struct sc_store *st = open_store(0);
    if (!st)
        return -1;
    int rc = 0;
    for (int m = 0; m < HOURS * 60 && rc == 0; m++) {
        int64_t t = T0 + m * 60;
        for (int svc = 0; svc < 2 && rc == 0; svc++) {
            int work = 1000 + (m * 37 + svc * 11) % 50;
            if (svc == 0 && t >= STEP_AT)
                work *= 2;
            char text[128], err[SC_ERR_LEN] = "";
            snprintf(text, sizeof text, "main;work %d\nmain;idle %d\n", work, 2000 + (m * 53) % 70);
            struct sc_profile *p = sc_profile_new();
            rc = p ? sc_folded_decode(text, strlen(text), &sc_limits_cli, p, err) : SC_ENOMEM;
            struct sc_labels l;
            sc_labels_init(&l);
            sc_labels_set(&l, "service_name", 12, svc ? "b" : "a", 1);
            struct sc_store_write w = {NULL, &l, "cpu", t * NS, 60 * NS, p, 0};
            if (rc == 0)
                rc = sc_store_write(st, &w, err);
            if (rc)
                fprintf(stderr, "write: %s\n", err);
            sc_labels_release(&l);
            sc_profile_free(p);
        }
    }
    char err[SC_ERR_LEN] = "";
    if (rc == 0 && (rc = sc_store_compact(st, (T0 + 3 * 86400) * NS, 1, err)) != 0)
        fprintf(stderr, "compact: %s\n", err);
    sc_store_close(st);
    T_EQ_INT(rc, 0);
    return rc;
}

/* sc_plan_watch over the `hours` up to the day's end + end_s at step_s (0: the default): its
 * result code, the answer in *w (released by the caller), the error in err. */
static int watch_at(struct sc_store *st, int hours, int64_t end_s, int64_t step_s,
                    struct sc_watch *w, char err[SC_ERR_LEN])
{
    char f[32], u[32];
    int64_t until = T0 + HOURS * 3600 + end_s;
    snprintf(f, sizeof f, "%lld", (long long)(until - hours * 3600));
    snprintf(u, sizeof u, "%lld", (long long)until);
    struct sc_plan_args a = {"{}", f, u, NULL};
    struct sc_selection s;
    err[0] = 0;
    int rc = sc_selection_parse(&s, &a, "cpu:samples", until * NS, err);
    if (rc == 0)
        rc = sc_selection_find(&s, st, NULL, err);
    struct sc_watch_args wa = {NULL, step_s * NS, 0, 0, 0, NULL};
    memset(w, 0, sizeof *w);
    if (rc == 0)
        rc = sc_plan_watch(st, NULL, &s, &wa, w, err);
    sc_selection_release(&s);
    return rc;
}

static int watch(struct sc_store *st, int hours, int64_t step_s, struct sc_watch *w,
                 char err[SC_ERR_LEN])
{
    return watch_at(st, hours, 0, step_s, w, err);
}

/* The step a default answer over the last `hours` has, in seconds; -1 when it fails. */
static int64_t default_step(struct sc_store *st, int hours, uint32_t *nsteps)
{
    struct sc_watch w;
    char err[SC_ERR_LEN];
    int rc = watch(st, hours, 0, &w, err);
    if (rc)
        fprintf(stderr, "watch %d h: %s\n", hours, err);
    int64_t step = rc ? -1 : w.fs.step / NS;
    *nsteps = rc ? 0 : w.fs.nsteps;
    sc_watch_release(&w);
    return step;
}

/* Whether w holds a's main.work stepping up near STEP_AT (within a step). */
static int found_step(const struct sc_watch *w)
{
    for (uint32_t i = 0; i < w->nchanges; i++) {
        const struct sc_change *c = &w->changes[i];
        if (c->kind == SC_CHANGE_STEP && !strcmp(w->fs.keys[c->group], "a") &&
            !strcmp(w->fs.names[c->function], "work") && c->change_pct > 50 &&
            llabs(c->at_ns / NS - STEP_AT) <= w->fs.step / NS)
            return 1;
    }
    return 0;
}

/* Without a budget: the timeline's ~120 steps under 12 h, but never shorter than the
 * profiles (a minute apart here: an hour's 30 s steps would share every capture between two
 * of them); from 12 h, about 120 steps of whole rollups from the first rollup boundary in
 * the range. */
static void test_default_step(void)
{
    struct sc_store *st = open_store(0);
    if (!st)
        return;
    uint32_t n;
    T_EQ_INT(default_step(st, 1, &n), 60); /* the timeline's 30 s: half a profile */
    T_EQ_INT(n, 60);
    T_EQ_INT(default_step(st, 6, &n), 180);
    T_EQ_INT(n, 120);
    T_EQ_INT(default_step(st, 12, &n), 600); /* the timeline's would be 360 s */
    T_EQ_INT(n, 72);
    T_EQ_INT(default_step(st, 18, &n), 600); /* 540 s */
    T_EQ_INT(n, 108);
    T_EQ_INT(default_step(st, 24, &n), 1200); /* 720 s: parts of ten-minute rollups */
    T_EQ_INT(n, 72);
    T_EQ_INT(default_step(st, 240, &n), 7200); /* 10 d: 2 h, whole hour rollups */
    T_EQ_INT(n, 120);
    /* a range off the grid: the steps start at its first ten-minute boundary */
    struct sc_watch w;
    char err[SC_ERR_LEN];
    T_EQ_INT(watch_at(st, 24, 37, 0, &w, err), 0);
    int64_t from = T0 + 37 + (HOURS - 24) * 3600;
    T_EQ_INT(w.fs.step, 1200 * NS);
    T_EQ_INT(w.fs.from, (from / 600 + 1) * 600 * NS);
    T_EQ_INT(w.fs.nsteps, 72); /* the last one shorter: it ends at `until` */
    T_CHECK(found_step(&w));
    sc_watch_release(&w);
    /* the step the caller gives is kept, and its steps start at `from` */
    T_EQ_INT(watch_at(st, 24, 37, 720, &w, err), 0);
    T_EQ_INT(w.fs.step, 720 * NS);
    T_EQ_INT(w.fs.from, from * NS);
    sc_watch_release(&w);
    T_EQ_INT(watch(st, 12, 60, &w, err), 0);
    T_EQ_INT(w.fs.step, 60 * NS);
    T_CHECK(found_step(&w));
    sc_watch_release(&w);
    sc_store_close(st);
}

/* Under a budget of 100 blocks a read: 6 h of two services at the timeline's 180 s steps
 * reads 720 raw profiles, too many; the answer comes at ten minutes (36 steps, 37 rollups
 * a service with the look-back), the same as asking for 600 s, and still finds the step.
 * Under 6 h, and with a step the caller gave, the limit is the answer. */
static void test_over_budget(void)
{
    struct sc_store *st = open_store(100);
    if (!st)
        return;
    struct sc_watch w, w600;
    char err[SC_ERR_LEN];
    T_EQ_INT(watch(st, 6, 0, &w, err), 0);
    T_EQ_INT(w.fs.step, 600 * NS);
    T_EQ_INT(w.fs.nsteps, 36);
    T_CHECK(found_step(&w));
    T_EQ_INT(watch(st, 6, 600, &w600, err), 0);
    T_EQ_INT(w600.fs.nsteps, w.fs.nsteps);
    T_EQ_INT(w600.fs.nfuncs, w.fs.nfuncs);
    T_EQ_INT(w600.nchanges, w.nchanges);
    size_t cells = (size_t)w.fs.group_first[w.fs.ngroups] * w.fs.nsteps;
    T_CHECK(w.fs.ngroups == w600.fs.ngroups && w.fs.self && w600.fs.self &&
            !memcmp(w.fs.self, w600.fs.self, cells * sizeof *w.fs.self));
    sc_watch_release(&w);
    sc_watch_release(&w600);
    T_EQ_INT(watch(st, 6, 180, &w, err), SC_ELIMIT);
    T_CHECK(strstr(err, "max_read_blocks") != NULL);
    sc_watch_release(&w);
    T_EQ_INT(watch(st, 1, 0, &w, err), SC_ELIMIT); /* 120 raw profiles; 6 ten-minute steps */
    T_CHECK(strstr(err, "max_read_blocks") != NULL);
    sc_watch_release(&w);
    sc_store_close(st);
}

/* Two heavy services and one about 1000 times lighter, two hours of one-minute profiles; the
 * light one's lite_work doubles at minute 60. Two functions tested (max_funcs 2): the
 * heaviest of all three together are main and heavy1's hot function, neither of them light's
 * nor heavy2's own; per group each keeps its own (main and its hot function), so the light
 * service's step is found, and every group's lines keep the invariants. */
static void test_light_service(void)
{
    char d[600];
    snprintf(d, sizeof d, "%s/light", tmpdir);
    struct sc_store *st = open_store_at(d, 0);
    if (!st)
        return;
    int rc = 0;
    for (int m = 0; m < 120 && rc == 0; m++) {
        int64_t t = T0 + m * 60;
        int noise = (m * 37) % 50, noise2 = (m * 53) % 70;
        char text[256];
        snprintf(text, sizeof text, "main;h1_hot %d\nmain;h1_warm %d\nmain;common %d\n",
                 2000000 + noise * 1000, 600000 + noise2 * 500, 400000 + noise * 300);
        rc = put(st, "heavy1", t, text);
        snprintf(text, sizeof text, "main;h2_hot %d\nmain;h2_warm %d\nmain;common %d\n",
                 1800000 + noise2 * 1000, 500000 + noise * 500, 400000 + noise2 * 300);
        if (rc == 0)
            rc = put(st, "heavy2", t, text);
        snprintf(text, sizeof text, "main;lite_work %d\nmain;lite_idle %d\n",
                 (1000 + noise) * (m >= 60 ? 2 : 1), 800 + noise2);
        if (rc == 0)
            rc = put(st, "light", t, text);
    }
    char f[32], u[32], err[SC_ERR_LEN] = "";
    snprintf(f, sizeof f, "%lld", (long long)T0);
    snprintf(u, sizeof u, "%lld", (long long)(T0 + 120 * 60));
    struct sc_plan_args a = {"{}", f, u, NULL};
    struct sc_selection s;
    if (rc == 0)
        rc = sc_selection_parse(&s, &a, "cpu:samples", (T0 + 120 * 60) * NS, err);
    if (rc == 0 && (rc = sc_selection_find(&s, st, NULL, err)) != 0)
        sc_selection_release(&s);
    struct sc_watch_args wa = {NULL, 60 * NS, 0, 0, 2, NULL};
    struct sc_watch w;
    memset(&w, 0, sizeof w);
    if (rc == 0) {
        rc = sc_plan_watch(st, NULL, &s, &wa, &w, err);
        sc_selection_release(&s);
    }
    if (rc)
        fprintf(stderr, "light: %s\n", err);
    T_EQ_INT(rc, 0);
    /* the light service's step, found */
    int found = 0;
    for (uint32_t i = 0; rc == 0 && i < w.nchanges; i++) {
        const struct sc_change *c = &w.changes[i];
        found |= c->kind == SC_CHANGE_STEP && !strcmp(w.fs.keys[c->group], "light") &&
                 !strcmp(w.fs.names[c->function], "lite_work") && c->change_pct > 50 &&
                 llabs(c->at_ns / NS - (T0 + 60 * 60)) <= 60;
    }
    T_CHECK(found);
    /* each group's own two: main and its heaviest leaf */
    static const char *const own[][2] = {
        {"heavy1", "h1_hot"}, {"heavy2", "h2_hot"}, {"light", "lite_work"}};
    T_EQ_INT(w.fs.ngroups, 3);
    for (uint32_t g = 0; rc == 0 && g < w.fs.ngroups; g++) {
        const struct sc_fnseries *fs = &w.fs;
        T_EQ_INT(fs->group_first[g + 1] - fs->group_first[g], 2);
        for (size_t o = 0; o < sizeof own / sizeof *own; o++) {
            uint32_t fi = UINT32_MAX;
            for (uint32_t k = 0; k < fs->nfuncs; k++)
                if (!strcmp(fs->names[k], own[o][1]))
                    fi = k;
            /* kept in its group, in no other */
            T_EQ_INT(sc_fnseries_line(fs, fs->self, g, fi) != NULL,
                     !strcmp(fs->keys[g], own[o][0]));
        }
        /* the invariants: a kept function's self value within the group's line, their self
         * values summed too (here below it: the two leaves kept are not all); the totals are
         * not made (watch tests self values) */
        T_CHECK(fs->cum == NULL);
        for (uint32_t k = 0; k < fs->nsteps; k++) {
            double tl = fs->total[(size_t)g * fs->nsteps + k], sum = 0;
            for (uint32_t l = fs->group_first[g]; l < fs->group_first[g + 1]; l++) {
                double sv = fs->self[(size_t)l * fs->nsteps + k];
                T_CHECK(isnan(tl) ? isnan(sv) : sv >= 0 && sv <= tl * (1 + 1e-12));
                sum += sv;
            }
            T_CHECK(isnan(tl) ? isnan(sum) : sum < tl);
        }
    }
    sc_watch_release(&w);
    sc_store_close(st);
}

int main(void)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/scorch-test-watch-XXXXXX");
    if (!mkdtemp(tmpdir))
        T_SKIP("cannot create a temporary directory");
    snprintf(dir, sizeof dir, "%s/store", tmpdir);
    if (fill() == 0) {
        T_RUN(test_default_step);
        T_RUN(test_over_budget);
    }
    T_RUN(test_light_service);
    t_rmrf(tmpdir);
    return t_done();
}
