/* test_fnseries.c - functions over time: each function's self and total per step are its
 * part of the timeline's value (same metric, same steps, same lines), from profiles written
 * at known times. */
#include "t.h"

#include "formats/folded.h"
#include "formats/input.h"
#include "model/error.h"
#include "query/fnseries.h"
#include "query/plan.h"
#include "store/store.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>

#define NS 1000000000LL
/* a whole hour, so one-minute steps from it are whole buckets of every grid */
#define T0 1699999200LL

static char tmpdir[256];

static struct sc_store *open_store(const char *name)
{
    char dir[512];
    snprintf(dir, sizeof dir, "%s/%s", tmpdir, name);
    struct sc_store_opts o;
    sc_store_opts_init(&o);
    o.dir = dir;
    o.background = 0;
    o.retention_ns = 0;
    o.durable = 0;
    struct sc_store *s = NULL;
    char err[SC_ERR_LEN] = "";
    if (sc_store_open(&o, &s, err))
        fprintf(stderr, "open: %s\n", err);
    T_CHECK(s != NULL);
    return s;
}

static struct sc_profile *folded(const char *text)
{
    struct sc_profile *p = sc_profile_new();
    char err[SC_ERR_LEN];
    if (sc_folded_decode(text, strlen(text), &sc_limits_cli, p, err)) {
        fprintf(stderr, "folded: %s\n", err);
        sc_profile_free(p);
        return NULL;
    }
    return p;
}

/* Writes folded text as a profile of series {service_name=svc, pod=pod} at t (s) lasting
 * dur (s). */
static void put(struct sc_store *st, const char *svc, const char *pod, const char *profile,
                int64_t t, int64_t dur, const char *text)
{
    struct sc_profile *p = folded(text);
    T_CHECK(p != NULL);
    if (!p)
        return;
    if (!strcmp(profile, "heap")) { /* a gauge: the folded counts as bytes in use */
        p->sample_types[0].type = (uint32_t)sc_profile_intern(p, "inuse_space", 11);
        p->sample_types[0].unit = (uint32_t)sc_profile_intern(p, "bytes", 5);
    }
    struct sc_labels l;
    sc_labels_init(&l);
    sc_labels_set(&l, "service_name", 12, svc, strlen(svc));
    sc_labels_set(&l, "pod", 3, pod, strlen(pod));
    struct sc_store_write w = {NULL, &l, profile, t * NS, dur * NS, p, 0};
    char err[SC_ERR_LEN] = "";
    int rc = sc_store_write(st, &w, err);
    if (rc)
        fprintf(stderr, "write: %s\n", err);
    T_EQ_INT(rc, 0);
    sc_labels_release(&l);
    sc_profile_free(p);
}

/* A selection of type over [from, until) (unix seconds), its series found. */
static int selection(struct sc_store *st, const char *query, const char *type, int64_t from,
                     int64_t until, struct sc_selection *s)
{
    char f[32], u[32], err[SC_ERR_LEN] = "";
    snprintf(f, sizeof f, "%lld", (long long)from);
    snprintf(u, sizeof u, "%lld", (long long)until);
    struct sc_plan_args a = {query, f, u, NULL};
    int rc = sc_selection_parse(s, &a, type, until * NS, err);
    if (rc == 0)
        rc = sc_selection_find(s, st, NULL, err);
    if (rc)
        fprintf(stderr, "selection: %s\n", err);
    T_EQ_INT(rc, 0);
    return rc;
}

static int fnseries(struct sc_store *st, const struct sc_selection *s, int64_t step,
                    const char *group_by, const char *function, uint32_t max, struct sc_fnseries *f)
{
    char err[SC_ERR_LEN] = "";
    int rc = sc_plan_fnseries(st, NULL, s, step * NS, group_by, function, max, 0, f, err);
    if (rc)
        fprintf(stderr, "fnseries: %s\n", err);
    return rc;
}

static uint32_t group_of(const struct sc_fnseries *f, const char *key)
{
    for (uint32_t g = 0; g < f->ngroups; g++)
        if (!strcmp(f->keys[g], key))
            return g;
    return UINT32_MAX;
}

static uint32_t func_of(const struct sc_fnseries *f, const char *name)
{
    for (uint32_t k = 0; k < f->nfuncs; k++)
        if (!strcmp(f->names[k], name))
            return k;
    return UINT32_MAX;
}

/* Group g's value of function fi at step k; -12345 (failing every comparison below) when g
 * does not keep fi. */
static double at(const struct sc_fnseries *f, const double *v, uint32_t g, uint32_t fi, uint32_t k)
{
    const double *l = sc_fnseries_line(f, v, g, fi);
    return l && k < f->nsteps ? l[k] : -12345;
}

/* The self values of group g's functions at step k summed; NaN where the line is. */
static double self_sum(const struct sc_fnseries *f, uint32_t g, uint32_t k)
{
    double tl = f->total[(size_t)g * f->nsteps + k], sum = isnan(tl) ? NAN : 0;
    for (uint32_t l = f->group_first[g]; l < f->group_first[g + 1] && !isnan(sum); l++)
        sum += f->self[(size_t)l * f->nsteps + k];
    return sum;
}

/* want: NAN for null */
static int near(double got, double want)
{
    if (isnan(want))
        return isnan(got);
    return !isnan(got) && fabs(got - want) <= 1e-9 * (fabs(want) > 1 ? fabs(want) : 1);
}

#define T_NEAR(got, want)                                                                          \
    do {                                                                                           \
        double t_g = (got), t_w = (want);                                                          \
        t_checks++;                                                                                \
        if (!near(t_g, t_w)) {                                                                     \
            t_failures++;                                                                          \
            fprintf(stderr, "%s:%d: %s: got %.17g, want %.17g\n", __FILE__, __LINE__, #got, t_g,   \
                    t_w);                                                                          \
        }                                                                                          \
    } while (0)

/* Every line of a and b the same to the bit (NaN where NaN). */
static int same(const struct sc_fnseries *a, const struct sc_fnseries *b)
{
    if (a->ngroups != b->ngroups || a->nfuncs != b->nfuncs || a->nsteps != b->nsteps ||
        memcmp(a->group_first, b->group_first, (a->ngroups + 1) * sizeof *a->group_first) ||
        memcmp(a->group_func, b->group_func, a->group_first[a->ngroups] * sizeof *a->group_func))
        return 0;
    size_t n = (size_t)a->group_first[a->ngroups] * a->nsteps;
    for (size_t i = 0; i < n; i++) {
        if (memcmp(&a->self[i], &b->self[i], sizeof(double)) ||
            memcmp(&a->cum[i], &b->cum[i], sizeof(double))) {
            fprintf(stderr, "cell %zu: self %.17g / %.17g, cum %.17g / %.17g\n", i, a->self[i],
                    b->self[i], a->cum[i], b->cum[i]);
            return 0;
        }
    }
    for (uint32_t k = 0; k < a->nfuncs; k++)
        if (strcmp(a->names[k], b->names[k]))
            return 0;
    return 1;
}

/* The three services of the first tests: api (pods a and b) and web (pod c), CPU profiles
 * of 10 s at known times; step k is [T0 + 60 k, T0 + 60 (k + 1)).
 *   a: T0+0 main;work;leaf1 30, main;idle 10  T0+60 main;work;leaf2 20, main;work 20
 *      T0+180 main;work;leaf1 5
 *   b: T0+0 main;work;leaf1 10                T0+120 main;rec;rec;rec 40
 *   c: T0+60 main;serve 50
 * The rates (per second of the 10 s each covers): api 5, 4, 4, 0.5, null; web null, 5,
 * null, null, null. */
static void fill(struct sc_store *st)
{
    put(st, "api", "a", "cpu", T0, 10, "main;work;leaf1 30\nmain;idle 10\n");
    put(st, "api", "a", "cpu", T0 + 60, 10, "main;work;leaf2 20\nmain;work 20\n");
    put(st, "api", "a", "cpu", T0 + 180, 10, "main;work;leaf1 5\n");
    put(st, "api", "b", "cpu", T0, 10, "main;work;leaf1 10\n");
    put(st, "api", "b", "cpu", T0 + 120, 10, "main;rec;rec;rec 40\n");
    put(st, "web", "c", "cpu", T0 + 60, 10, "main;serve 50\n");
}

/* One function by name, grouped by service: exact values per step, 0 where the group has
 * profiles without the function, null where it has none. */
static void test_function(void)
{
    struct sc_store *st = open_store("function");
    if (!st)
        return;
    fill(st);
    struct sc_selection s;
    if (selection(st, "{}", "cpu:samples", T0, T0 + 300, &s) == 0) {
        struct sc_fnseries f;
        if (fnseries(st, &s, 60, "service_name", "leaf1", 0, &f) == 0) {
            T_EQ_INT(f.nsteps, 5);
            T_EQ_INT(f.nfuncs, 1);
            T_EQ_STR(f.names[0], "leaf1");
            T_EQ_STR(f.group, "service_name");
            T_EQ_STR(f.unit, "count/s");
            T_EQ_INT(f.metric, SC_METRIC_PER_SECOND);
            uint32_t api = group_of(&f, "api"), web = group_of(&f, "web");
            static const double tot[5] = {5, 4, 4, 0.5, NAN}, leaf1[5] = {4, 0, 0, 0.5, NAN};
            for (uint32_t k = 0; k < 5; k++) {
                T_NEAR(f.total[api * f.nsteps + k], tot[k]);
                T_NEAR(at(&f, f.self, api, 0, k), leaf1[k]);
                T_NEAR(at(&f, f.cum, api, 0, k), leaf1[k]);
                T_NEAR(at(&f, f.self, web, 0, k), k == 1 ? 0 : NAN);
            }
            sc_fnseries_release(&f);
        }
        /* an inner function: self only where it is the leaf, total wherever it is */
        if (fnseries(st, &s, 60, "service_name", "work", 0, &f) == 0) {
            uint32_t api = group_of(&f, "api");
            static const double self[5] = {0, 2, 0, 0, NAN}, cum[5] = {4, 4, 0, 0.5, NAN};
            for (uint32_t k = 0; k < 5; k++) {
                T_NEAR(at(&f, f.self, api, 0, k), self[k]);
                T_NEAR(at(&f, f.cum, api, 0, k), cum[k]);
            }
            sc_fnseries_release(&f);
        }
        /* recursion counts once per stack */
        if (fnseries(st, &s, 60, "service_name", "rec", 0, &f) == 0) {
            uint32_t api = group_of(&f, "api");
            T_NEAR(at(&f, f.self, api, 0, 2), 4);
            T_NEAR(at(&f, f.cum, api, 0, 2), 4);
            sc_fnseries_release(&f);
        }
        /* a function no profile holds: zeros where there are profiles */
        if (fnseries(st, &s, 60, "service_name", "nosuch", 0, &f) == 0) {
            uint32_t web = group_of(&f, "web");
            T_NEAR(at(&f, f.cum, web, 0, 1), 0);
            T_NEAR(at(&f, f.cum, web, 0, 0), NAN);
            sc_fnseries_release(&f);
        }
        /* without group_by: a line per series, its labels as the key */
        if (fnseries(st, &s, 60, NULL, "leaf1", 0, &f) == 0) {
            T_EQ_INT(f.ngroups, 3);
            T_CHECK(f.group == NULL);
            uint32_t a = group_of(&f, "{pod=\"a\",service_name=\"api\"}");
            uint32_t b = group_of(&f, "{pod=\"b\",service_name=\"api\"}");
            T_NEAR(at(&f, f.self, a, 0, 0), 3);
            T_NEAR(at(&f, f.self, b, 0, 0), 1);
            T_NEAR(at(&f, f.self, b, 0, 1), NAN);
            T_NEAR(at(&f, f.self, b, 0, 2), 0);
            sc_fnseries_release(&f);
        }
        sc_selection_release(&s);
    }
    sc_store_close(st);
}

/* Every function at once: the self values of a step sum to the timeline's value, the root's
 * total is the timeline's, and the lines are ranked by total. */
static void test_all_functions(void)
{
    struct sc_store *st = open_store("all");
    if (!st)
        return;
    fill(st);
    struct sc_selection s;
    if (selection(st, "{}", "cpu:samples", T0, T0 + 300, &s) == 0) {
        struct sc_timeline t;
        char err[SC_ERR_LEN] = "";
        T_EQ_INT(sc_plan_timeline(st, NULL, &s, 60 * NS, "service_name", &t, err), 0);
        struct sc_fnseries f;
        if (fnseries(st, &s, 60, "service_name", NULL, 0, &f) == 0) {
            /* by total over the range: main 185, work 85, serve 50, leaf1 45, rec 40, leaf2
             * 20, idle 10 */
            T_EQ_INT(f.nfuncs, 7);
            T_EQ_STR(f.names[0], "main");
            T_EQ_STR(f.names[1], "work");
            T_EQ_INT(func_of(&f, "idle"), 6);
            T_EQ_INT(f.ngroups, t.nlines);
            for (uint32_t g = 0; g < f.ngroups && g < t.nlines; g++)
                for (uint32_t k = 0; k < f.nsteps; k++) {
                    double tl = t.values[g * t.nsteps + k];
                    T_NEAR(self_sum(&f, g, k), tl);
                    T_NEAR(at(&f, f.cum, g, 0, k), tl);
                    T_NEAR(f.total[g * f.nsteps + k], tl);
                }
            sc_fnseries_release(&f);
        }
        /* the two heaviest of all series, every line having both */
        if (fnseries(st, &s, 60, NULL, NULL, 2, &f) == 0) {
            T_EQ_INT(f.nfuncs, 2);
            T_EQ_STR(f.names[1], "work");
            for (uint32_t g = 0; g < f.ngroups; g++)
                T_EQ_INT(f.group_first[g + 1] - f.group_first[g], 2);
            sc_fnseries_release(&f);
        }
        sc_timeline_release(&t);
        sc_selection_release(&s);
    }
    sc_store_close(st);
}

/* Grouped, the heaviest functions are each group's own: api's two (main 135, work 85) and
 * web's (main 50, serve 50), though serve is lighter over both than work and work is not in
 * web at all; each kept line is what asking for that function alone gives, the self values
 * of a group's kept functions sum to at most its line, and a total never exceeds it. */
static void test_per_group(void)
{
    struct sc_store *st = open_store("pergroup");
    if (!st)
        return;
    fill(st);
    struct sc_selection s;
    if (selection(st, "{}", "cpu:samples", T0, T0 + 300, &s) == 0) {
        struct sc_fnseries f;
        if (fnseries(st, &s, 60, "service_name", NULL, 2, &f) == 0) {
            /* the union, by total over both groups */
            T_EQ_INT(f.nfuncs, 3);
            uint32_t api = group_of(&f, "api"), web = group_of(&f, "web");
            uint32_t work = func_of(&f, "work"), serve = func_of(&f, "serve");
            T_EQ_INT(func_of(&f, "main"), 0);
            T_EQ_INT(work, 1);
            T_EQ_INT(serve, 2);
            T_EQ_INT(f.group_first[f.ngroups], 4);
            T_CHECK(sc_fnseries_line(&f, f.self, api, work) != NULL);
            T_CHECK(sc_fnseries_line(&f, f.self, api, serve) == NULL);
            T_CHECK(sc_fnseries_line(&f, f.self, web, serve) != NULL);
            T_CHECK(sc_fnseries_line(&f, f.self, web, work) == NULL);
            for (uint32_t g = 0; g < f.ngroups; g++) {
                for (uint32_t k = 0; k < f.nsteps; k++) {
                    double tl = f.total[g * f.nsteps + k], sum = self_sum(&f, g, k);
                    T_CHECK(isnan(tl) ? isnan(sum) : sum <= tl * (1 + 1e-12));
                    for (uint32_t l = f.group_first[g]; l < f.group_first[g + 1]; l++) {
                        double c = f.cum[(size_t)l * f.nsteps + k];
                        T_CHECK(isnan(tl) ? isnan(c) : c <= tl * (1 + 1e-12));
                    }
                }
                for (uint32_t l = f.group_first[g]; l < f.group_first[g + 1]; l++) {
                    struct sc_fnseries one;
                    uint32_t fi = f.group_func[l];
                    if (fnseries(st, &s, 60, "service_name", f.names[fi], 0, &one))
                        continue;
                    for (uint32_t k = 0; k < f.nsteps; k++) {
                        T_NEAR(at(&f, f.self, g, fi, k), at(&one, one.self, g, 0, k));
                        T_NEAR(at(&f, f.cum, g, fi, k), at(&one, one.cum, g, 0, k));
                    }
                    sc_fnseries_release(&one);
                }
            }
            /* api's work: a's 2/s of leaf-less work in step 1 */
            T_NEAR(at(&f, f.self, api, work, 1), 2);
            T_NEAR(at(&f, f.self, web, serve, 1), 5);
            T_NEAR(at(&f, f.self, web, serve, 0), NAN);
            /* the self values alone: the same to the bit, no totals */
            struct sc_fnseries so;
            char err[SC_ERR_LEN] = "";
            T_EQ_INT(sc_plan_fnseries(st, NULL, &s, 60 * NS, "service_name", NULL, 2, 1, &so, err),
                     0);
            T_CHECK(so.cum == NULL);
            T_EQ_INT(so.nfuncs, f.nfuncs);
            T_CHECK(so.self && so.group_first[so.ngroups] == f.group_first[f.ngroups] &&
                    !memcmp(so.self, f.self,
                            (size_t)f.group_first[f.ngroups] * f.nsteps * sizeof *f.self));
            sc_fnseries_release(&so);
            sc_fnseries_release(&f);
        }
        sc_selection_release(&s);
    }
    sc_store_close(st);
}

/* Six hours of a profile every 10 minutes whose functions change by the hour, read from
 * raw profiles and then from rollups: the same to the bit, at steps that are whole
 * rollups and at steps that are not (from off the hour: buckets spread over two steps). */
static void test_rollups(void)
{
    struct sc_store *st = open_store("rollups");
    if (!st)
        return;
    static const char *const shapes[] = {"main;a;x 30\nmain;b 10\n", "main;a;y 5\nmain;c 50\n",
                                         "main;b;x 20\nmain;a 20\n"};
    for (int i = 0; i < 36; i++) {
        put(st, "svc", "p1", "cpu", T0 + i * 600LL, 10, shapes[(i / 6) % 3]);
        put(st, "svc", "p2", "cpu", T0 + i * 600LL + 300, 60, shapes[(i / 5) % 3]);
    }
    static const struct {
        int64_t from, until, step;
    } cases[] = {
        {T0, T0 + 6 * 3600, 3600},             /* whole hours */
        {T0 + 1234, T0 + 6 * 3600 - 77, 3600}, /* ragged: hour buckets over two steps */
        {T0 - 3600, T0 + 7 * 3600, 1800},      /* half hours: ten-minute rollups */
        {T0 + 7, T0 + 6 * 3600, 777},          /* odd steps */
        {T0 + 1800, T0 + 2 * 86400, 6 * 3600}, /* days of steps */
    };
    enum { NC = sizeof cases / sizeof cases[0] };
    struct sc_fnseries raw[NC][2];
    memset(raw, 0, sizeof raw);
    char err[SC_ERR_LEN] = "";
    for (int pass = 0; pass < 2; pass++) {
        if (pass == 1) /* rollups for every bucket */
            T_EQ_INT(sc_store_compact(st, (T0 + 30 * 86400) * NS, 1, err), 0);
        for (int c = 0; c < NC; c++) {
            struct sc_selection s;
            if (selection(st, "{}", "cpu:samples", cases[c].from, cases[c].until, &s))
                continue;
            struct sc_timeline t;
            T_EQ_INT(sc_plan_timeline(st, NULL, &s, cases[c].step * NS, NULL, &t, err), 0);
            for (int by = 0; by < 2; by++) {
                struct sc_fnseries f;
                if (fnseries(st, &s, cases[c].step, by ? "service_name" : NULL, NULL, 0, &f))
                    continue;
                /* the invariants hold on every grid */
                for (uint32_t g = 0; g < f.ngroups; g++)
                    for (uint32_t k = 0; k < f.nsteps; k++) {
                        double tl = f.total[g * f.nsteps + k];
                        T_NEAR(self_sum(&f, g, k), tl);
                        T_NEAR(at(&f, f.cum, g, func_of(&f, "main"), k), tl);
                        if (!by)
                            T_NEAR(tl, t.values[g * t.nsteps + k]);
                    }
                if (pass == 0) {
                    raw[c][by] = f;
                } else {
                    if (!same(&raw[c][by], &f))
                        fprintf(stderr, "case %d (group %d): rollups differ from raw\n", c, by);
                    T_CHECK(same(&raw[c][by], &f));
                    sc_fnseries_release(&f);
                    sc_fnseries_release(&raw[c][by]);
                }
            }
            sc_timeline_release(&t);
            sc_selection_release(&s);
        }
    }
    /* and the function follows the hours */
    struct sc_selection s;
    if (selection(st, "{pod=\"p1\"}", "cpu:samples", T0, T0 + 6 * 3600, &s) == 0) {
        struct sc_fnseries f;
        if (fnseries(st, &s, 3600, NULL, "c", 0, &f) == 0) {
            /* p1's hours are shapes 0, 1, 2, 0, 1, 2: c is 50 of each 10 s profile's 55 in
             * shape 1 (the hour's rate 5.5/s) */
            static const double c[6] = {0, 5, 0, 0, 5, 0};
            for (uint32_t k = 0; k < 6; k++)
                T_NEAR(at(&f, f.self, 0, 0, k), c[k]);
            sc_fnseries_release(&f);
        }
        sc_selection_release(&s);
    }
    sc_store_close(st);
}

/* A recording whose samples carry their times: each sample in the step of its time, as the
 * timeline places it, not the recording's mix spread over its span. */
static void test_timed(void)
{
    const char *perf = "app 1 [000] 10.250000: 1 cpu-clock:\n\tffff f1 (/bin/x)\n\tfff0 main "
                       "(/bin/x)\n\n"
                       "app 1 [000] 10.750000: 1 cpu-clock:\n\tffff f1 (/bin/x)\n\tfff0 main "
                       "(/bin/x)\n\n"
                       "app 1 [000] 21.000000: 1 cpu-clock:\n\tfffe f2 (/bin/x)\n\tfff0 main "
                       "(/bin/x)\n\n"
                       "app 1 [000] 22.000000: 1 cpu-clock:\n\tfffe f2 (/bin/x)\n\tfff0 main "
                       "(/bin/x)\n\n"
                       "app 1 [000] 23.000000: 1 cpu-clock:\n\tfffe f2 (/bin/x)\n\tfff0 main "
                       "(/bin/x)\n\n"
                       "app 1 [000] 31.500000: 1 cpu-clock:\n\tffff f1 (/bin/x)\n\tfff0 main "
                       "(/bin/x)\n\n";
    struct sc_input in = {(void *)perf, strlen(perf), SC_INPUT_BORROWED};
    struct sc_profile *p = NULL;
    char err[SC_ERR_LEN] = "";
    T_EQ_INT(sc_decode(&in, NULL, &p, err), 0);
    struct sc_store *st = open_store("timed");
    if (!p || !st) {
        sc_profile_free(p);
        sc_store_close(st);
        return;
    }
    struct sc_labels l;
    sc_labels_init(&l);
    sc_labels_set(&l, "service_name", 12, "host", 4);
    int64_t shift = T0 * NS; /* perf's 10 s since boot land at T0 + 10 */
    struct sc_store_write w = {NULL, &l, "cpu", shift + 10 * NS, 30 * NS, p, shift};
    T_EQ_INT(sc_store_write(st, &w, err), 0);
    sc_labels_release(&l);
    sc_profile_free(p);
    struct sc_selection s;
    if (selection(st, "{}", "cpu:samples", T0 + 10, T0 + 40, &s) == 0) {
        struct sc_timeline t;
        T_EQ_INT(sc_plan_timeline(st, NULL, &s, 10 * NS, NULL, &t, err), 0);
        /* the recording's 30 s cover each step: 2, 3 and 1 samples in 10 s */
        static const double tl[3] = {0.2, 0.3, 0.1}, f1[3] = {0.2, 0, 0.1}, f2[3] = {0, 0.3, 0};
        for (uint32_t k = 0; k < 3 && t.nsteps == 3; k++)
            T_NEAR(t.values[k], tl[k]);
        struct sc_fnseries f;
        if (fnseries(st, &s, 10, NULL, "f1", 0, &f) == 0) {
            for (uint32_t k = 0; k < 3; k++) {
                T_NEAR(at(&f, f.self, 0, 0, k), f1[k]);
                T_NEAR(f.total[k], tl[k]);
            }
            sc_fnseries_release(&f);
        }
        if (fnseries(st, &s, 10, NULL, "f2", 0, &f) == 0) {
            for (uint32_t k = 0; k < 3; k++)
                T_NEAR(at(&f, f.cum, 0, 0, k), f2[k]);
            sc_fnseries_release(&f);
        }
        if (fnseries(st, &s, 10, NULL, "main", 0, &f) == 0) {
            for (uint32_t k = 0; k < 3; k++)
                T_NEAR(at(&f, f.cum, 0, 0, k), tl[k]);
            sc_fnseries_release(&f);
        }
        sc_timeline_release(&t);
        sc_selection_release(&s);
    }
    sc_store_close(st);
}

/* A long profile spreads over the steps it covers: each takes the profile's mix; a gauge is
 * the average of the profiles in its step. */
static void test_spread_and_gauge(void)
{
    struct sc_store *st = open_store("spread");
    if (!st)
        return;
    /* 60 s from T0 + 30 at 10 s steps: steps 3 to 8 hold a sixth each; the one before the
     * range (T0 - 50, 60 s) reaches into steps 0 and 1 */
    put(st, "svc", "p", "cpu", T0 + 30, 60, "main;a 30\nmain;b 30\n");
    put(st, "svc", "p", "cpu", T0 - 50, 60, "main;c 60\n");
    put(st, "mem", "p", "heap", T0, 0, "main;cache 100\n");
    put(st, "mem", "p", "heap", T0 + 20, 0, "main;cache 300\nmain;buf 100\n");
    struct sc_selection s;
    if (selection(st, "{service_name=\"svc\"}", "cpu:samples", T0, T0 + 100, &s) == 0) {
        struct sc_fnseries f;
        if (fnseries(st, &s, 10, NULL, "a", 0, &f) == 0) {
            static const double a[10] = {0, NAN, NAN, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, NAN};
            for (uint32_t k = 0; k < 10; k++)
                T_NEAR(at(&f, f.self, 0, 0, k), a[k]);
            sc_fnseries_release(&f);
        }
        if (fnseries(st, &s, 10, NULL, "c", 0, &f) == 0) {
            T_NEAR(at(&f, f.self, 0, 0, 0), 1); /* the profile before the range: its mix */
            T_NEAR(at(&f, f.self, 0, 0, 3), 0);
            sc_fnseries_release(&f);
        }
        sc_selection_release(&s);
    }
    if (selection(st, "{service_name=\"mem\"}", "heap:inuse_space", T0, T0 + 60, &s) == 0) {
        struct sc_fnseries f;
        if (fnseries(st, &s, 60, NULL, "cache", 0, &f) == 0) {
            T_EQ_INT(f.metric, SC_METRIC_AVERAGE);
            T_EQ_STR(f.unit, "bytes");
            T_NEAR(f.total[0], 250);
            T_NEAR(at(&f, f.self, 0, 0, 0), 200);
            sc_fnseries_release(&f);
        }
        sc_selection_release(&s);
    }
    sc_store_close(st);
}

/* The value of group g's line at step k of a timeline grouped by service_name. */
static double line_at(const struct sc_timeline *t, const char *key, uint32_t k)
{
    for (uint32_t g = 0; g < t->nlines; g++)
        if (!strcmp(t->keys[g], key))
            return t->values[(size_t)g * t->nsteps + k];
    T_CHECK(!"no such line");
    return NAN;
}

/* A new version starts a new series mid-step (pod v1 stops, v2 takes over): the service's line
 * is the step's rate, not the sum of the two halves' rates (which counted the step twice);
 * two pods at once still sum, also in a step one of them has not covered to its end yet, and
 * the functions' values still sum to the line. A gauge's pods in turn: each weighted by the
 * part of the step its captures span. */
static void test_version_switch(void)
{
    struct sc_store *st = open_store("switch");
    if (!st)
        return;
    for (int64_t i = 0; i < 3; i++) {
        put(st, "seq", "v1", "cpu", T0 + 10 * i, 10, "main;a 100\n");
        put(st, "seq", "v2", "cpu", T0 + 30 + 10 * i, 10, "main;b 100\n");
    }
    for (int64_t i = 0; i < 6; i++) {
        put(st, "par", "p1", "cpu", T0 + 10 * i, 10, "main;a 100\n");
        if (i < 5) /* 3 s later, its last profile not in yet: covers [3, 53) of the step */
            put(st, "par", "p2", "cpu", T0 + 3 + 10 * i, 10, "main;b 100\n");
    }
    put(st, "mem", "v1", "heap", T0, 0, "main;a 100\n");
    put(st, "mem", "v1", "heap", T0 + 20, 0, "main;a 100\n");
    put(st, "mem", "v2", "heap", T0 + 40, 0, "main;b 200\n");
    put(st, "mem", "v2", "heap", T0 + 50, 0, "main;b 200\n");
    struct sc_selection s;
    char err[SC_ERR_LEN] = "";
    if (selection(st, "{service_name=~\"seq|par\"}", "cpu:samples", T0, T0 + 60, &s) == 0) {
        struct sc_timeline t;
        T_EQ_INT(sc_plan_timeline(st, NULL, &s, 60 * NS, "service_name", &t, err), 0);
        T_EQ_INT(t.nsteps, 1);
        T_NEAR(line_at(&t, "seq", 0), 10); /* 600 samples over 60 s */
        T_NEAR(line_at(&t, "par", 0), 20); /* 10/s each */
        struct sc_fnseries f;
        if (fnseries(st, &s, 60, "service_name", NULL, 0, &f) == 0) {
            uint32_t g = group_of(&f, "seq");
            T_NEAR(at(&f, f.self, g, func_of(&f, "a"), 0), 5);
            T_NEAR(at(&f, f.self, g, func_of(&f, "b"), 0), 5);
            T_NEAR(f.total[g * f.nsteps], 10);
            sc_fnseries_release(&f);
        }
        sc_timeline_release(&t);
        /* at 30 s steps each version has a step of its own: 10/s in both */
        T_EQ_INT(sc_plan_timeline(st, NULL, &s, 30 * NS, "service_name", &t, err), 0);
        T_NEAR(line_at(&t, "seq", 0), 10);
        T_NEAR(line_at(&t, "seq", 1), 10);
        sc_timeline_release(&t);
        sc_selection_release(&s);
    }
    if (selection(st, "{service_name=\"mem\"}", "heap:inuse_space", T0, T0 + 60, &s) == 0) {
        struct sc_timeline t;
        T_EQ_INT(sc_plan_timeline(st, NULL, &s, 60 * NS, "service_name", &t, err), 0);
        /* v1 spans [0, 20], v2 [40, 50]: 100 x 2/3 + 200 x 1/3, not 300 */
        T_NEAR(line_at(&t, "mem", 0), 100.0 * 2 / 3 + 200.0 / 3);
        sc_timeline_release(&t);
        sc_selection_release(&s);
    }
    sc_store_close(st);
}

/* Too many values: refused with the limit said. */
static void test_limits(void)
{
    struct sc_store *st = open_store("limits");
    if (!st)
        return;
    struct sc_buf b = SC_BUF_INIT;
    for (int i = 0; i < 500; i++)
        sc_buf_printf(&b, "main;f%d %d\n", i, i + 1);
    sc_buf_putc(&b, 0);
    put(st, "svc", "p", "cpu", T0, 10, b.data);
    sc_buf_release(&b);
    struct sc_selection s;
    if (selection(st, "{}", "cpu:samples", T0, T0 + 10000, &s) == 0) {
        struct sc_fnseries f;
        char err[SC_ERR_LEN] = "";
        T_EQ_INT(sc_plan_fnseries(st, NULL, &s, NS, NULL, NULL, 0, 0, &f, err), SC_ELIMIT);
        T_CHECK(strstr(err, "1 lines x 501 functions x 10000 steps") != NULL);
        T_CHECK(strstr(err, "limit of 4194304") != NULL);
        /* grouped, each group's own functions count */
        T_EQ_INT(sc_plan_fnseries(st, NULL, &s, NS, "service_name", NULL, 0, 1, &f, err),
                 SC_ELIMIT);
        T_CHECK(strstr(err, "501 functions of 1 lines x 10000 steps") != NULL);
        /* the heaviest few are fine */
        T_EQ_INT(sc_plan_fnseries(st, NULL, &s, NS, NULL, NULL, 3, 0, &f, err), 0);
        T_EQ_INT(f.nfuncs, 3);
        if (f.nfuncs == 3) {
            T_EQ_STR(f.names[0], "main");
            T_EQ_STR(f.names[1], "f499");
        }
        sc_fnseries_release(&f);
        sc_selection_release(&s);
    }
    sc_store_close(st);
}

/* The timeline's JSON with the function's line and what it is. */
static void test_json(void)
{
    struct sc_store *st = open_store("json");
    if (!st)
        return;
    put(st, "api", "a", "cpu", T0, 10, "main;work;leaf1 30\nmain;idle 10\n");
    struct sc_selection s;
    if (selection(st, "{}", "cpu:samples", T0, T0 + 120, &s) == 0) {
        struct sc_fnseries f;
        if (fnseries(st, &s, 60, "service_name", "work", 0, &f) == 0) {
            struct sc_buf b = SC_BUF_INIT;
            sc_fnseries_write_json(&f, 0, 0, &s, &b);
            sc_buf_putc(&b, 0);
            T_EQ_STR(b.data, "{\"timestamps\":[1699999200,1699999260],\"step\":60,\"unit\":"
                             "\"count/s\",\"aggregation\":\"per_second\",\"function\":\"work\","
                             "\"value\":\"total\",\"series\":[{\"labels\":{\"service_name\":"
                             "\"api\"},\"values\":[3,null]}]}\n");
            b.len = 0;
            sc_fnseries_write_json(&f, 0, 1, &s, &b);
            sc_buf_putc(&b, 0);
            T_CHECK(strstr(b.data, "\"value\":\"self\",") != NULL);
            T_CHECK(strstr(b.data, "\"values\":[0,null]") != NULL);
            sc_buf_release(&b);
            sc_fnseries_release(&f);
        }
        sc_selection_release(&s);
    }
    sc_store_close(st);
}

int main(void)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/scorch-test-fnseries-XXXXXX");
    if (!mkdtemp(tmpdir))
        T_SKIP("cannot create a temporary directory");
    T_RUN(test_function);
    T_RUN(test_all_functions);
    T_RUN(test_per_group);
    T_RUN(test_rollups);
    T_RUN(test_timed);
    T_RUN(test_spread_and_gauge);
    T_RUN(test_version_switch);
    T_RUN(test_limits);
    T_RUN(test_json);
    t_rmrf(tmpdir);
    return t_done();
}
