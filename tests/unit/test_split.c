/* test_split.c - sample labels become series: sets, caps, overrides, and the ingest path. */
#include "t.h"

#include "formats/perf.h"
#include "formats/pprof.h"
#include "ingest/ingest.h"
#include "ingest/split.h"
#include "model/error.h"

/* A profile of n samples on one stack, sample i worth i + 1; labels are added per sample by
 * the caller with add(). */
static struct sc_profile *base_profile(void)
{
    struct sc_profile *p = sc_profile_new();
    sc_profile_add_sample_type(p, "samples", "count");
    return p;
}

static uint32_t str(struct sc_profile *p, const char *s)
{
    return (uint32_t)sc_profile_intern(p, s, strlen(s));
}

/* Adds a sample worth v on the function fn, with string labels kv ("k", "v", ..., NULL) and
 * one numeric label "bytes". */
static void add(struct sc_profile *p, const char *fn, int64_t v, const char *const *kv)
{
    uint32_t loc = (uint32_t)sc_profile_add_simple_location(
        p, (uint32_t)sc_profile_add_function(p, str(p, fn), 0));
    sc_profile_add_sample(p, &loc, 1, &v, 0);
    for (int i = 0; kv && kv[i]; i += 2)
        sc_profile_add_label(p, str(p, kv[i]), str(p, kv[i + 1]), 0, 0);
    sc_profile_add_label(p, str(p, "bytes"), 0, 4096, 0);
}

static int64_t view_total(const struct sc_profile *v)
{
    int64_t t = 0;
    for (uint32_t i = 0; i < v->nsamples; i++)
        t += v->values[i];
    return t;
}

/* The index of the part whose label name has value (NULL: lacks the name), or -1. */
static int part_with(const struct sc_split *sp, const char *name, const char *value)
{
    for (uint32_t g = 0; g < sp->n; g++) {
        const char *v = t_label(&sp->labels[g], name);
        if (value ? v && !strcmp(v, value) : v == NULL)
            return (int)g;
    }
    return -1;
}

static void series_labels(struct sc_labels *l, const char *service)
{
    sc_labels_init(l);
    sc_labels_set(l, "service_name", 12, service, strlen(service));
    sc_labels_set(l, "env", 3, "prod", 4);
}

/* pid/comm labels as scorch record writes them: one series per process; a sample without
 * labels stays in the plain series; values add up to the profile's; numeric labels ignored. */
static void test_split_by_process(void)
{
    struct sc_profile *p = base_profile();
    const char *a[] = {"pid", "10", "comm", "burner", NULL};
    const char *b[] = {"pid", "20", "comm", "idle", NULL};
    add(p, "hot", 5, a);
    add(p, "cold", 7, b);
    add(p, "hot", 11, a);
    add(p, "plain", 13, NULL);
    struct sc_labels series;
    series_labels(&series, "host");
    struct sc_split sp;
    char err[SC_ERR_LEN] = "";
    T_EQ_INT(sc_split_profile(p, &series, 256, &sp, err), 0);
    T_EQ_INT(sp.n, 3);
    T_EQ_STR(sp.dropped, "");
    int x = part_with(&sp, "pid", "10");
    T_CHECK(x >= 0);
    if (x >= 0) {
        const struct sc_labels *l = &sp.labels[x];
        const struct sc_profile *v = &sp.parts.views[x];
        T_EQ_STR(t_label(l, "comm"), "burner");
        T_EQ_STR(t_label(l, "service_name"), "host");
        T_EQ_STR(t_label(l, "env"), "prod");
        T_CHECK(t_label(l, "bytes") == NULL);
        T_EQ_INT(v->nsamples, 2);
        T_EQ_INT(view_total(v), 16);
        /* the view shares the profile's tables */
        T_CHECK(v->locations == p->locations && v->strings.n == p->strings.n);
    }
    x = part_with(&sp, "pid", "20");
    T_CHECK(x >= 0 && view_total(&sp.parts.views[x]) == 7 &&
            !strcmp(t_label(&sp.labels[x], "comm"), "idle"));
    x = part_with(&sp, "pid", NULL);
    T_CHECK(x >= 0 && view_total(&sp.parts.views[x]) == 13 && sp.labels[x].n == 2);
    sc_split_release(&sp);
    sc_labels_release(&series);
    sc_profile_free(p);
}

/* perf script's samples of threads perf did not know (exited tasks: comm ":-1", pid and
 * tid -1) make one comm series, not one per sample named after its timestamp. */
static void test_split_perf_exited(void)
{
    const char *in = ":-1    -1 [000] 341.273027:    1001001 cpu-clock: \n"
                     "\tffffffff81 native_safe_halt+0x6 ([kernel.kallsyms])\n\n"
                     ":-1    -1 [001] 341.274031:    1001001 cpu-clock: \n"
                     "\tffffffff81 native_safe_halt+0x6 ([kernel.kallsyms])\n\n"
                     "sh  5894 [000] 341.275:    1001001 cpu-clock: \n\t1 f (/x)\n\n"
                     "             :-1    -1 [000] 341.276: 1001001 cpu-clock:  ffffffff81 "
                     "native_safe_halt+0x6 ([kernel.kallsyms])\n"
                     "              sh  5894 [001] 341.277: 1001001 cpu-clock:  1 g (/x)\n";
    struct sc_profile *p = sc_profile_new();
    char err[SC_ERR_LEN] = "";
    T_EQ_INT(sc_perf_decode(in, strlen(in), NULL, NULL, p, err), 0);
    T_EQ_INT(p->nsamples, 5);
    struct sc_labels series;
    series_labels(&series, "host");
    struct sc_split sp;
    T_EQ_INT(sc_split_profile(p, &series, 256, &sp, err), 0);
    T_EQ_INT(sp.n, 2);
    int x = part_with(&sp, "comm", ":-1");
    T_CHECK(x >= 0 && sp.parts.views[x].nsamples == 3);
    x = part_with(&sp, "comm", "sh");
    T_CHECK(x >= 0 && sp.parts.views[x].nsamples == 2);
    sc_split_release(&sp);
    sc_labels_release(&series);
    sc_profile_free(p);
}

/* A label per request (trace_id) over the cap is dropped, the rest still splits; a sample
 * label overrides the series label of the same name; names are cleaned; numeric-only and
 * empty labels split nothing. */
static void test_split_caps(void)
{
    struct sc_profile *p = base_profile();
    char id[40];
    for (int i = 0; i < 40; i++) {
        snprintf(id, sizeof id, "%032x", i);
        const char *kv[] = {"trace_id", id,       "span_kind", i % 2 ? "server" : "client",
                            "env",      "canary", NULL};
        add(p, "work", 1, kv);
    }
    struct sc_labels series;
    series_labels(&series, "api");
    struct sc_split sp;
    char err[SC_ERR_LEN] = "";
    T_EQ_INT(sc_split_profile(p, &series, 8, &sp, err), 0);
    T_EQ_INT(sp.n, 2);
    T_EQ_STR(sp.dropped, "trace_id");
    for (uint32_t g = 0; g < sp.n; g++) {
        T_CHECK(t_label(&sp.labels[g], "trace_id") == NULL);
        T_EQ_STR(t_label(&sp.labels[g], "env"), "canary");
        T_EQ_INT(view_total(&sp.parts.views[g]), 20);
    }
    T_CHECK(part_with(&sp, "span_kind", "server") >= 0);
    sc_split_release(&sp);
    /* a cap of 1 set: the labels that vary go, the one all samples share stays */
    T_EQ_INT(sc_split_profile(p, &series, 1, &sp, err), 0);
    T_EQ_INT(sp.n, 1);
    T_CHECK(strstr(sp.dropped, "trace_id") && strstr(sp.dropped, "span_kind"));
    T_EQ_STR(t_label(&sp.labels[0], "env"), "canary");
    T_EQ_INT(view_total(&sp.parts.views[0]), 40);
    sc_split_release(&sp);
    sc_profile_free(p);
    /* numeric and empty labels only: nothing to split */
    p = base_profile();
    const char *empty[] = {"pid", "", NULL};
    add(p, "a", 1, empty);
    add(p, "b", 2, NULL);
    T_EQ_INT(sc_split_profile(p, &series, 256, &sp, err), 0);
    T_EQ_INT(sp.n, 0);
    sc_split_release(&sp);
    /* a name that is no label name is cleaned into one */
    const char *odd[] = {"9 lives", "x", NULL};
    add(p, "c", 3, odd);
    T_EQ_INT(sc_split_profile(p, &series, 256, &sp, err), 0);
    T_EQ_INT(sp.n, 2);
    int x = part_with(&sp, "_9_lives", "x");
    T_CHECK(x >= 0 && view_total(&sp.parts.views[x]) == 3);
    sc_split_release(&sp);
    sc_profile_free(p);
    sc_labels_release(&series);
}

struct list {
    char labels[4][512];
    int n;
};
static int list_add(void *ctx, const struct sc_store_series *x)
{
    struct list *m = ctx;
    if (m->n < 4)
        snprintf(m->labels[m->n++], sizeof m->labels[0], "%s", x->labels);
    return 0;
}

/* Through the ingest path: a pprof push (decoded lazily unless labels are present) with
 * labelled samples is stored as one series per set, each listed with its labels; a
 * profile without string labels stays one series. */
static void test_ingest_split(void)
{
    char dir[] = "/tmp/scorch-test-split-XXXXXX";
    if (!mkdtemp(dir))
        T_SKIP("no temporary directory");
    struct sc_store_opts o;
    sc_store_opts_init(&o);
    o.dir = dir;
    o.background = 0;
    o.retention_ns = 0;
    struct sc_store *s = NULL;
    char err[SC_ERR_LEN] = "";
    T_EQ_INT(sc_store_open(&o, &s, err), 0);
    if (!s)
        return;
    struct sc_profile *p = base_profile();
    const char *a[] = {"pid", "4242", "comm", "burner", NULL};
    add(p, "hot", 30, a);
    add(p, "rest", 12, NULL);
    struct sc_buf raw = SC_BUF_INIT;
    T_EQ_INT(sc_pprof_encode(p, &raw), 0);
    /* the lazy decode that ingest uses sees the string label and decodes eagerly */
    struct sc_profile *q = sc_profile_new();
    T_EQ_INT(
        sc_pprof_decode_mode(raw.data, raw.len, &sc_limits_cli, SC_PPROF_LAZY_UNLABELLED, q, err),
        0);
    T_CHECK(q->lazy == NULL && q->nlabels >= 2);
    sc_profile_free(q);
    /* without string labels it stays lazy */
    struct sc_profile *u = base_profile();
    add(u, "hot", 1, NULL);
    struct sc_buf raw2 = SC_BUF_INIT;
    T_EQ_INT(sc_pprof_encode(u, &raw2), 0);
    q = sc_profile_new();
    T_EQ_INT(
        sc_pprof_decode_mode(raw2.data, raw2.len, &sc_limits_cli, SC_PPROF_LAZY_UNLABELLED, q, err),
        0);
    T_CHECK(q->lazy != NULL);
    sc_profile_free(q);
    sc_profile_free(u);
    sc_buf_release(&raw2);
    struct sc_ingest_req r = {.name = "host.cpu{env=ci}",
                              .from = "1700000000",
                              .until = "1700000010",
                              .format = "pprof",
                              .body = raw.data,
                              .len = raw.len};
    struct sc_ingest_result res;
    T_EQ_INT(sc_ingest(s, &r, &sc_limits_cli, &res, err), 0);
    T_EQ_INT(res.series, 2);
    T_EQ_INT(res.samples, 2);
    struct list l = {{{0}}, 0};
    T_EQ_INT(sc_store_series_list(s, NULL, "cpu:samples", 0, INT64_MAX, list_add, &l, err), 0);
    T_EQ_INT(l.n, 2);
    int with = 0, without = 0;
    for (int i = 0; i < l.n; i++) {
        if (strstr(l.labels[i], "pid=4242") || strstr(l.labels[i], "pid=\"4242\""))
            with += strstr(l.labels[i], "burner") && strstr(l.labels[i], "env") ? 1 : 0;
        else
            without++;
    }
    T_EQ_INT(with, 1);
    T_EQ_INT(without, 1);
    sc_buf_release(&raw);
    sc_profile_free(p);
    sc_store_close(s);
    T_EQ_INT(t_rmrf(dir), 0);
}

/* The cleaner's names are always valid, at the length limit too (the OTLP fuzzer found a
 * 257-byte attribute key that came out one byte past it). */
static void test_clean_name_bounds(void)
{
    char key[SC_LABEL_NAME_MAX + 8], out[SC_LABEL_NAME_MAX + 8];
    memset(key, 'k', sizeof key);
    key[3] = '.';
    T_EQ_INT(sc_labels_clean_name(key, SC_LABEL_NAME_MAX, out, sizeof out), SC_LABEL_NAME_MAX);
    T_CHECK(sc_label_name_valid(out, SC_LABEL_NAME_MAX));
    T_CHECK(out[3] == '_');
    T_EQ_INT(sc_labels_clean_name(key, SC_LABEL_NAME_MAX + 1, out, sizeof out), 0);
    /* a leading digit takes a byte: 256 bytes that start with one do not fit */
    key[0] = '7';
    T_EQ_INT(sc_labels_clean_name(key, SC_LABEL_NAME_MAX, out, sizeof out), 0);
    T_EQ_INT(sc_labels_clean_name(key, SC_LABEL_NAME_MAX - 1, out, sizeof out), SC_LABEL_NAME_MAX);
    T_CHECK(out[0] == '_' && out[1] == '7' && sc_label_name_valid(out, SC_LABEL_NAME_MAX));
    /* and a small cap still bounds it */
    T_EQ_INT(sc_labels_clean_name("service.name", 12, out, 12), 0);
    T_EQ_INT(sc_labels_clean_name("service.name", 12, out, 13), 12);
    T_EQ_STR(out, "service_name");
}

int main(void)
{
    T_RUN(test_clean_name_bounds);
    T_RUN(test_split_by_process);
    T_RUN(test_split_perf_exited);
    T_RUN(test_split_caps);
    T_RUN(test_ingest_split);
    return t_done();
}
