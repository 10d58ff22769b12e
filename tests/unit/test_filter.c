/* test_filter.c - pprof's focus / ignore / hide / show on profiles with known answers. */
#include "t.h"

#include <time.h>

#include "formats/input.h"
#include "query/functions.h"
#include "model/error.h"
#include "model/merge.h"
#include "query/filter.h"

static uint32_t str(struct sc_profile *p, const char *s)
{
    return (uint32_t)sc_profile_intern(p, s, strlen(s));
}

static uint32_t add_mapping(struct sc_profile *p, const char *file)
{
    p->mappings = realloc(p->mappings, (p->nmappings + 1) * sizeof *p->mappings);
    struct sc_mapping *m = &p->mappings[p->nmappings];
    memset(m, 0, sizeof *m);
    m->id = p->nmappings + 1;
    m->filename = str(p, file);
    p->mappings_cap = ++p->nmappings;
    return p->nmappings; /* mapping index + 1 */
}

/* A location with n lines (function indexes, innermost first; UINT32_MAX = no function). */
static uint32_t add_location(struct sc_profile *p, uint32_t mapping, uint64_t addr,
                             const uint32_t *fns, uint32_t n)
{
    p->locations = realloc(p->locations, (p->nlocations + 1) * sizeof *p->locations);
    p->lines = realloc(p->lines, (p->nlines + n + 1) * sizeof *p->lines);
    struct sc_location *l = &p->locations[p->nlocations];
    memset(l, 0, sizeof *l);
    l->id = p->nlocations + 1;
    l->address = addr;
    l->mapping = mapping;
    l->line_start = p->nlines;
    l->nlines = n;
    for (uint32_t i = 0; i < n; i++) {
        memset(&p->lines[p->nlines], 0, sizeof p->lines[0]);
        p->lines[p->nlines++].function = fns[i] == UINT32_MAX ? 0 : fns[i] + 1;
    }
    p->locations_cap = ++p->nlocations;
    p->lines_cap = p->nlines;
    return p->nlocations - 1;
}

enum { L_MAIN, L_A, L_CB, L_RT, L_ADDR, L_D, L_NOFN };

/* main (main.go), a (a.go), c inlined into b (c.go, b.go), runtime.x, an address-only
 * location in libfoo.so, d whose system name is sysd, a line without a function:
 *   main;a;b;c 10   main;a 5   main;runtime.x 3   main;a;0x1234 7   (no frames) 2
 *   main;d 1        main;0x99 4
 * All but 0x1234 are in /bin/app. */
static struct sc_profile *fixture(void)
{
    struct sc_profile *p = sc_profile_new();
    sc_profile_add_sample_type(p, "samples", "count");
    uint32_t app = add_mapping(p, "/bin/app"), lib = add_mapping(p, "/lib/libfoo.so");
    uint32_t f_main = (uint32_t)sc_profile_add_function(p, str(p, "main"), str(p, "main.go"));
    uint32_t f_a = (uint32_t)sc_profile_add_function(p, str(p, "a"), str(p, "a.go"));
    uint32_t f_b = (uint32_t)sc_profile_add_function(p, str(p, "b"), str(p, "b.go"));
    uint32_t f_c = (uint32_t)sc_profile_add_function(p, str(p, "c"), str(p, "c.go"));
    uint32_t f_rt =
        (uint32_t)sc_profile_add_function(p, str(p, "runtime.x"), str(p, "runtime/proc.go"));
    uint32_t f_d = (uint32_t)sc_profile_add_function(p, str(p, "d"), str(p, "d.go"));
    p->functions[f_d].system_name = str(p, "sysd");
    uint32_t cb[2] = {f_c, f_b}, nofn = UINT32_MAX;
    add_location(p, app, 0x10, &f_main, 1);
    add_location(p, app, 0x20, &f_a, 1);
    add_location(p, app, 0x30, cb, 2);
    add_location(p, app, 0x40, &f_rt, 1);
    add_location(p, lib, 0x1234, NULL, 0);
    add_location(p, app, 0x50, &f_d, 1);
    add_location(p, app, 0x99, &nofn, 1);
    struct {
        uint32_t locs[4], n;
        int64_t v;
    } s[] = {
        {{L_CB, L_A, L_MAIN}, 3, 10},  {{L_A, L_MAIN}, 2, 5}, {{L_RT, L_MAIN}, 2, 3},
        {{L_ADDR, L_A, L_MAIN}, 3, 7}, {{0}, 0, 2},           {{L_D, L_MAIN}, 2, 1},
        {{L_NOFN, L_MAIN}, 2, 4},
    };
    for (size_t i = 0; i < sizeof s / sizeof s[0]; i++)
        sc_profile_add_sample(p, s[i].locs, s[i].n, &s[i].v, (int64_t)i + 100);
    /* a label on the fourth sample, to see labels follow their sample */
    p->nlabels = 0;
    return p;
}

/* "name:flat/cum name:flat/cum ..." of the top report, sorted as top sorts. */
/* The fixture unfiltered. */
#define ALL "c:10/10 [libfoo.so]:7/7 a:5/22 [app]:4/4 runtime.x:3/3 d:1/1 b:0/10 main:0/30"

static const char *report(const struct sc_profile *p)
{
    static char buf[1024];
    struct sc_top t;
    char err[SC_ERR_LEN];
    buf[0] = 0;
    if (sc_top_compute(p, 0, &t, err) == 0) {
        size_t n = 0;
        for (uint32_t i = 0; i < t.n; i++)
            n += (size_t)snprintf(buf + n, sizeof buf - n, "%s%.*s:%lld/%lld", i ? " " : "",
                                  (int)t.rows[i].name.len, t.rows[i].name.ptr,
                                  (long long)t.rows[i].flat, (long long)t.rows[i].cum);
    }
    sc_top_release(&t);
    return buf;
}

/* Filters a fresh fixture; returns the report and the result in *r. */
static const char *run(const char *focus, const char *ignore, const char *hide, const char *show,
                       struct sc_filter_result *r)
{
    static char out[1024];
    struct sc_profile *p = fixture();
    struct sc_filter_opts o = {focus, ignore, hide, show};
    char err[SC_ERR_LEN];
    int rc = sc_profile_filter(p, &o, r, err);
    if (rc) {
        snprintf(out, sizeof out, "error: %s", err);
    } else {
        snprintf(out, sizeof out, "%s", report(p));
        if (sc_profile_validate(p, err))
            snprintf(out, sizeof out, "invalid: %s", err);
    }
    sc_profile_free(p);
    return out;
}

static void test_unfiltered(void)
{
    struct sc_profile *p = fixture();
    T_EQ_STR(report(p), ALL);
    struct sc_filter_result r;
    T_EQ_STR(run(NULL, "", NULL, NULL, &r), ALL);
    T_EQ_INT(r.samples_kept, 7); /* nothing set: nothing changes */
    sc_profile_free(p);
}

static void test_focus_ignore(void)
{
    struct sc_filter_result r;
    /* by function name, also an inlined one */
    T_EQ_STR(run("^b$", NULL, NULL, NULL, &r), "c:10/10 a:0/10 b:0/10 main:0/10");
    T_EQ_INT(r.samples_kept, 1);
    T_EQ_INT(r.samples_dropped, 6);
    T_EQ_INT(r.focus_matched, 1);
    T_EQ_STR(run("^c$", NULL, NULL, NULL, &r), "c:10/10 a:0/10 b:0/10 main:0/10");
    /* by file name only */
    T_EQ_STR(run("proc\\.go", NULL, NULL, NULL, &r), "runtime.x:3/3 main:0/3");
    /* by the mapping's file: every location in /bin/app; the frameless sample goes */
    T_EQ_STR(run("bin/app", NULL, NULL, NULL, &r), ALL);
    T_EQ_INT(r.samples_kept, 6);
    T_EQ_STR(run("libfoo", NULL, NULL, NULL, &r), "[libfoo.so]:7/7 a:0/7 main:0/7");
    /* not the system name */
    T_EQ_STR(run("sysd", NULL, NULL, NULL, &r), "");
    T_EQ_INT(r.focus_matched, 0);
    T_EQ_INT(r.samples_kept, 0);
    /* unanchored search */
    T_EQ_STR(run("untime", NULL, NULL, NULL, &r), "runtime.x:3/3 main:0/3");
    /* ignore drops samples with a match; without focus, every other sample with frames
     * stays */
    T_EQ_STR(run(NULL, "runtime", NULL, NULL, &r),
             "c:10/10 [libfoo.so]:7/7 a:5/22 [app]:4/4 d:1/1 b:0/10 main:0/27");
    T_EQ_INT(r.ignore_matched, 1);
    T_EQ_INT(r.samples_kept, 5);
    /* ignore wins over focus, and both see the lines before hide removes c */
    T_EQ_STR(run("^a$", "^c$", "^c$", NULL, &r), "[libfoo.so]:7/7 a:5/12 main:0/12");
    T_EQ_INT(r.hide_matched, 1);
    T_EQ_STR(run("^a$|^main$", "^a$", NULL, NULL, &r), "[app]:4/4 runtime.x:3/3 d:1/1 main:0/8");
    T_EQ_STR(run(NULL, "nothing", NULL, NULL, &r), ALL);
    T_EQ_INT(r.ignore_matched, 0);
    /* case-insensitive flag, as in Go */
    T_EQ_STR(run("(?i)^RUNTIME", NULL, NULL, NULL, &r), "runtime.x:3/3 main:0/3");
}

static void test_hide_show(void)
{
    struct sc_filter_result r;
    /* hide an inlined frame: its caller in the same location becomes the leaf */
    T_EQ_STR(run(NULL, NULL, "^c$", NULL, &r),
             "b:10/10 [libfoo.so]:7/7 a:5/22 [app]:4/4 runtime.x:3/3 d:1/1 main:0/30");
    /* hide both lines of a location: it leaves the stacks, a becomes the leaf */
    T_EQ_STR(run(NULL, NULL, "^[bc]$", NULL, &r),
             "a:15/22 [libfoo.so]:7/7 [app]:4/4 runtime.x:3/3 d:1/1 main:0/30");
    /* hide by mapping file: the address-only location goes */
    T_EQ_STR(run(NULL, NULL, "libfoo", NULL, &r),
             "a:12/22 c:10/10 [app]:4/4 runtime.x:3/3 d:1/1 b:0/10 main:0/30");
    /* hiding every frame of a sample drops it; "." also matches every mapping's file, so
     * address-only and function-less locations go too */
    T_EQ_STR(run(NULL, NULL, ".", NULL, &r), "");
    T_EQ_INT(r.samples_kept, 0);
    T_EQ_STR(run(NULL, NULL, "app", NULL, &r), "[libfoo.so]:7/7");
    T_EQ_INT(r.samples_kept, 1);
    T_EQ_STR(run(NULL, NULL, "zzz", NULL, &r), ALL);
    T_EQ_INT(r.hide_matched, 0);
    /* show keeps matching lines, lines without a function, and drops address-only
     * locations */
    T_EQ_STR(run(NULL, NULL, NULL, "^a$|^main$", &r), "a:22/22 [app]:4/4 main:4/30");
    T_EQ_INT(r.show_matched, 1);
    T_EQ_STR(run(NULL, NULL, NULL, "^b$", &r), "b:10/10 [app]:4/4");
    /* show by mapping keeps whole locations */
    T_EQ_STR(run(NULL, NULL, NULL, "bin/app", &r),
             "a:12/22 c:10/10 [app]:4/4 runtime.x:3/3 d:1/1 b:0/10 main:0/30");
    T_EQ_STR(run(NULL, NULL, NULL, "zzz", &r), "[app]:4/4");
    T_EQ_INT(r.show_matched, 1); /* the location without a function kept its line */
    /* all four */
    T_EQ_STR(run("a", "runtime", "^main$", "^[a-c]$", &r), "a:12/22 c:10/10 [app]:4/4 b:0/10");
}

static void test_errors_and_edges(void)
{
    struct sc_filter *f;
    char err[SC_ERR_LEN];
    struct sc_filter_opts o = {.hide = "a("};
    T_EQ_INT(sc_filter_new(&o, &f, err), SC_EINVAL);
    T_CHECK(f == NULL);
    T_EQ_STR(err, "bad hide regex 'a(': missing closing parenthesis at offset 2");
    o = (struct sc_filter_opts){.focus = "\xff"};
    T_EQ_INT(sc_filter_new(&o, &f, err), SC_EINVAL);
    T_CHECK(strstr(err, "bad focus regex") != NULL);
    T_EQ_INT(sc_filter_new(NULL, &f, err), 0);
    T_EQ_INT(sc_filter_active(f), 0);
    sc_filter_free(f);

    /* a name that is not UTF-8: each bad byte reads as one character, as in Go */
    struct sc_profile *p = fixture();
    p->strings.v[p->functions[1].name] = (struct sc_str){"a\xff"
                                                         "z",
                                                         3};
    struct sc_filter_result r;
    o = (struct sc_filter_opts){.focus = "^a.z$"};
    T_EQ_INT(sc_profile_filter(p, &o, &r, err), 0);
    T_EQ_INT(r.samples_kept, 3);
    sc_profile_free(p);

    /* lazy samples are refused, and the profile is left alone */
    p = fixture();
    struct sc_sample_source src = {0};
    src.nsamples = 5;
    uint32_t n = p->nsamples;
    p->nsamples = 0;
    p->lazy = &src;
    o = (struct sc_filter_opts){.focus = "a"};
    T_EQ_INT(sc_profile_filter(p, &o, &r, err), SC_EINVAL);
    T_EQ_STR(err, "filters need stored samples, not lazy ones");
    p->lazy = NULL;
    p->nsamples = n;
    sc_profile_free(p);

    /* samples sharing one range of sample_locs (no decoder writes that, but the model
     * allows it): the rewrite goes to a new array */
    p = fixture();
    p->samples[1].loc_start = p->samples[0].loc_start;
    p->samples[1].nlocs = p->samples[0].nlocs; /* sample 1 is now main;a;b;c 5 */
    o = (struct sc_filter_opts){.hide = "^c$"};
    T_EQ_INT(sc_profile_filter(p, &o, &r, err), 0);
    T_EQ_STR(report(p), "b:15/15 [libfoo.so]:7/7 [app]:4/4 runtime.x:3/3 d:1/1 a:0/22 main:0/30");
    T_EQ_INT(sc_profile_validate(p, err), 0);
    /* timestamps follow their samples */
    T_EQ_INT(p->nsamples, 6);
    T_EQ_INT(p->samples[0].time_ns, 100);
    T_EQ_INT(p->samples[3].time_ns, 103);
    T_EQ_INT(p->samples[4].time_ns, 105);
    /* one filter, applied twice */
    struct sc_filter *g;
    o = (struct sc_filter_opts){.ignore = "runtime"};
    T_EQ_INT(sc_filter_new(&o, &g, err), 0);
    T_EQ_INT(sc_filter_apply(g, p, &r, err), 0);
    T_EQ_INT(sc_filter_apply(g, p, &r, err), 0);
    T_EQ_INT(r.samples_kept, 5);
    T_EQ_INT(r.ignore_matched, 1); /* the location is still there, unused */
    sc_filter_free(g);
    sc_profile_free(p);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* 300,000 real samples (the 100k file three times): filtering takes milliseconds. */
static void test_big(void)
{
    const char *path = t_testdata("pprof/synthetic-allocs-100k.pb.gz");
    if (!path) {
        fprintf(stderr, "(skipping the 300k-sample timing: no test data)\n");
        return;
    }
    char err[SC_ERR_LEN];
    struct sc_profile *p = NULL, *q = NULL;
    T_EQ_INT(sc_load(path, NULL, &p, err), 0);
    if (!p)
        return;
    T_EQ_INT(sc_load(path, NULL, &q, err), 0);
    T_EQ_INT(sc_profile_append(p, q, err), 0);
    T_EQ_INT(sc_profile_append(p, q, err), 0);
    sc_profile_free(q);
    uint32_t n = p->nsamples;
    T_CHECK(n >= 300000);
    struct sc_filter_opts o = {.focus = "f1[0-3]", .ignore = "f6[0-3]", .hide = "f2", .show = "f"};
    struct sc_filter_result r;
    double t0 = now_s();
    T_EQ_INT(sc_profile_filter(p, &o, &r, err), 0);
    double dt = now_s() - t0;
    fprintf(stderr, "filtered %u samples in %.1f ms (kept %u)\n", n, dt * 1e3, r.samples_kept);
    T_CHECK(r.samples_kept > 0 && r.samples_kept < n);
    T_EQ_INT(sc_profile_validate(p, err), 0);
    sc_profile_free(p);
}

/* A regex that backtracks catastrophically over many long names runs into the request's
 * matching budget and is refused, instead of taking as long as the names make it (the
 * per-match limit alone bounds each name, not their number). */
static void test_budget(void)
{
    struct sc_profile *p = sc_profile_new();
    sc_profile_add_sample_type(p, "samples", "count");
    char name[80];
    for (int i = 0; i < 5000; i++) {
        int n = snprintf(name, sizeof name, "%0*d", 40, i);
        memset(name, 'a', 36); /* 36 a's, then digits: (a+)+$ backtracks, then fails */
        int64_t fn = sc_profile_add_function(p, (uint32_t)sc_profile_intern(p, name, (size_t)n), 0);
        uint32_t loc = (uint32_t)sc_profile_add_simple_location(p, (uint32_t)fn);
        int64_t v = 1;
        sc_profile_add_sample(p, &loc, 1, &v, 0);
    }
    struct sc_filter_opts o = {.focus = "(a+)+$"};
    char err[SC_ERR_LEN] = "";
    T_EQ_INT(sc_profile_filter(p, &o, NULL, err), SC_ELIMIT);
    T_CHECK(strstr(err, "ms of matching") != NULL);
    /* the same names with an ordinary regex are fine */
    struct sc_filter_opts ok = {.focus = "a+0*1.*"};
    T_EQ_INT(sc_profile_filter(p, &ok, NULL, err), 0);
    sc_profile_free(p);
}

int main(void)
{
    T_RUN(test_budget);
    T_RUN(test_unfiltered);
    T_RUN(test_focus_ignore);
    T_RUN(test_hide_show);
    T_RUN(test_errors_and_edges);
    T_RUN(test_big);
    return t_done();
}
