/* test_setting.c - the settings table: every row's default parses, and the YAML config
 * takes every key with the row's type and bounds (one rule, every surface). */
#include "t.h"

#include "model/error.h"
#include "formats/perf.h"
#include "formats/svg.h"
#include "formats/top.h"
#include "model/setting.h"
#include "config/config.h"
#include "query/callgraph.h"
#include "query/compare.h"
#include "query/heatmap.h"
#include "query/replicates.h"

#include <stdio.h>
#include <string.h>

/* A value the row accepts: its default, else one made from its type and bounds. */
static void sample(const struct sc_setting *s, char *out, size_t cap)
{
    if (s->def) {
        snprintf(out, cap, "%s", s->def);
        return;
    }
    switch (s->type) {
    case SC_SET_COUNT:
        snprintf(out, cap, "%lld", (long long)(s->min ? s->min : 1));
        break;
    case SC_SET_DURATION:
        snprintf(out, cap, "%lldns", (long long)(s->min > 1000000000 ? s->min : 1000000000));
        break;
    case SC_SET_BYTES:
        snprintf(out, cap, "%lld", (long long)(s->min ? s->min : 1));
        break;
    case SC_SET_BOOL:
        snprintf(out, cap, "true");
        break;
    case SC_SET_URL:
        snprintf(out, cap, "http://127.0.0.1:1");
        break;
    case SC_SET_ADDR:
        snprintf(out, cap, "127.0.0.1:0");
        break;
    default:
        snprintf(out, cap, "x");
        break;
    }
}

/* The YAML that sets key to value: a.b -> a: {b: v}; scrape.k in a scrape config. */
static int yaml_for(const char *key, const char *value, char *out, size_t cap)
{
    const char *dot = strchr(key, '.');
    if (!dot || strchr(dot + 1, '.'))
        return -1; /* server.tls.*: a pair, read by its own parser */
    if (!strncmp(key, "scrape.", 7))
        return snprintf(out, cap, "scrape_configs:\n  - job_name: j\n    %s: '%s'\n", dot + 1,
                        value) < 0;
    return snprintf(out, cap, "%.*s:\n  %s: '%s'\n", (int)(dot - key), key, dot + 1, value) < 0;
}

static int config_error(const char *yaml, char *err)
{
    struct sc_config c;
    err[0] = 0;
    int rc = sc_config_parse(yaml, strlen(yaml), "t.yaml", &c, err);
    sc_config_release(&c);
    return rc;
}

static void test_defaults_parse(void)
{
    size_t n;
    const struct sc_setting *t = sc_settings(&n);
    T_EQ_INT(n, SC_SET__N);
    for (size_t i = 0; i < n; i++) {
        T_EQ_INT(t[i].id, i);
        T_CHECK(t[i].doc && *t[i].doc);
        T_CHECK(t[i].key || t[i].param || t[i].flag);
        T_CHECK(t[i].type != SC_SET_CHOICE || t[i].choices);
        /* a flag says which commands take it, a parameter which routes: the surfaces the
         * e2e walk (settings_walk.py) tries */
        T_CHECK(!t[i].flag == !t[i].cmds);
        T_CHECK(!t[i].param == !t[i].routes);
        if (!t[i].def)
            continue;
        struct sc_set_value v;
        char err[SC_ERR_LEN];
        int rc = sc_setting_parse(&t[i], t[i].def, NULL, &v, err);
        if (rc)
            fprintf(stderr, "default of %s: %s\n", t[i].key ? t[i].key : t[i].param, err);
        T_EQ_INT(rc, 0);
        for (size_t j = 0; t[i].key && j < i; j++)
            T_CHECK(!t[j].key || strcmp(t[i].key, t[j].key));
    }
}

static void test_config_takes_every_key(void)
{
    size_t n;
    const struct sc_setting *t = sc_settings(&n);
    int walked = 0;
    for (size_t i = 0; i < n; i++) {
        const struct sc_setting *s = &t[i];
        char val[64], yaml[512], err[SC_ERR_LEN];
        if (!s->key || s->type == SC_SET_LIST || strstr(s->key, "token_file"))
            continue;
        sample(s, val, sizeof val);
        if (yaml_for(s->key, val, yaml, sizeof yaml))
            continue;
        walked++;
        int rc = config_error(yaml, err);
        if (rc)
            fprintf(stderr, "%s = %s: %s\n", s->key, val, err);
        T_EQ_INT(rc, 0);
        /* below the bound, or not of the type: refused with the row's own message */
        char bad[64], want[128];
        if ((s->type == SC_SET_COUNT || s->type == SC_SET_BYTES) && s->min > 0)
            snprintf(bad, sizeof bad, "%lld", (long long)s->min - 1);
        else if (s->type == SC_SET_DURATION && s->min > 0)
            snprintf(bad, sizeof bad, "%lldns", (long long)s->min - 1);
        else
            snprintf(bad, sizeof bad, "%s", "not-a-value");
        if (s->type == SC_SET_STRING || s->type == SC_SET_PATH)
            continue;
        yaml_for(s->key, bad, yaml, sizeof yaml);
        T_EQ_INT(config_error(yaml, err), SC_EINVAL);
        snprintf(want, sizeof want, "'%s' must be ", s->key);
        if (!strstr(err, want))
            fprintf(stderr, "%s = %s: \"%s\" lacks \"%s\"\n", s->key, bad, err, want);
        T_CHECK(strstr(err, want) != NULL);
        if (s->max) {
            snprintf(bad, sizeof bad, s->type == SC_SET_DURATION ? "%lldns" : "%lld",
                     (long long)s->max + 1);
            yaml_for(s->key, bad, yaml, sizeof yaml);
            T_EQ_INT(config_error(yaml, err), SC_EINVAL);
            T_CHECK(strstr(err, want) != NULL);
        }
    }
    T_CHECK(walked > 40);
}

static void test_values(void)
{
    struct sc_set_value v;
    char err[SC_ERR_LEN];
    const struct sc_setting *r = sc_setting(SC_SET_STORAGE_RETENTION);
    T_EQ_INT(sc_setting_parse(r, "31d", "--retention", &v, err), 0);
    T_EQ_INT(v.i, 31LL * 86400 * 1000000000LL);
    T_EQ_INT(sc_setting_parse(r, "soon", "--retention", &v, err), SC_EINVAL);
    T_EQ_STR(err, "'--retention' must be a duration above 0 (like 30d), not 'soon'");
    const struct sc_setting *m = sc_setting(SC_SET_SERVER_QUERY_MEMORY);
    T_EQ_INT(sc_setting_parse(m, "512MiB", NULL, &v, err), 0);
    T_EQ_INT(v.i, 512LL << 20);
    T_EQ_INT(sc_setting_parse(m, "2GB", NULL, &v, err), 0);
    T_EQ_INT(v.i, 2000000000LL);
    T_EQ_INT(sc_setting_parse(m, "1KiB", NULL, &v, err), SC_EINVAL);
    T_EQ_STR(err,
             "'server.query_memory' must be a byte count of at least 1MiB (like 1GiB), not '1KiB'");
    const struct sc_setting *e = sc_setting(SC_SET_STORAGE_ENGINE);
    T_EQ_INT(sc_setting_parse(e, "clickhouse", NULL, &v, err), 0);
    T_EQ_INT(v.i, 1);
    T_EQ_INT(sc_setting_parse(e, "mysql", "--storage", &v, err), SC_EINVAL);
    T_EQ_STR(err, "'--storage' must be one of sqlite, clickhouse, not 'mysql'");
    const struct sc_setting *l = sc_setting(SC_SET_SERVER_LISTEN);
    T_EQ_INT(sc_setting_parse(l, ":0", NULL, &v, err), 0);
    T_EQ_INT(sc_setting_parse(l, "127.0.0.1:65536", NULL, &v, err), SC_EINVAL);
    T_EQ_INT(sc_setting_parse(l, "4040", NULL, &v, err), SC_EINVAL);
    const struct sc_setting *f = sc_setting(SC_SET_RECORD_FREQUENCY);
    T_EQ_INT(sc_setting_parse(f, "100000", NULL, &v, err), 0);
    T_EQ_INT(sc_setting_parse(f, "100001", NULL, &v, err), SC_EINVAL);
    T_EQ_INT(sc_setting_parse(f, "-5", NULL, &v, err), SC_EINVAL);
    T_EQ_INT(sc_setting_parse(f, "99Hz", NULL, &v, err), SC_EINVAL);
    T_EQ_INT(sc_setting_parse(f, NULL, NULL, &v, err), SC_EINVAL);
    /* the defaults the code starts from are the table's */
    T_EQ_INT(sc_setting_default_i(SC_SET_SERVER_MAX_QUERIES), 4);
    T_EQ_INT(sc_setting_default_i(SC_SET_STORAGE_CACHE_MEMORY), 64LL << 20);
    T_EQ_INT(sc_setting_default_i(SC_SET_RECORD_FREQUENCY), 99);
    /* a step: the same rule and words for the flag and the key */
    const struct sc_setting *ss = sc_setting(SC_SET_RECORD_STACK_SIZE);
    T_EQ_INT(sc_setting_parse(ss, "8192", NULL, &v, err), 0);
    T_EQ_INT(sc_setting_parse(ss, "8196", "--stack-size", &v, err), SC_EINVAL);
    T_EQ_STR(err, "'--stack-size' must be a byte count from 1KiB to 60KiB, a multiple of 8 "
                  "(like 32768), not '8196'");
    const char *y = "record: {stack_size: 8196}\n";
    struct sc_config c;
    T_EQ_INT(sc_config_parse(y, strlen(y), "t.yaml", &c, err), SC_EINVAL);
    T_CHECK(strstr(err, "'record.stack_size' must be a byte count from 1KiB to 60KiB, a "
                        "multiple of 8") != NULL);
    sc_config_release(&c);
    /* a bound the code also uses as an array size */
    T_EQ_INT(sc_setting(SC_SET_COLLAPSE_THREADS)->max, SC_PERF_MAX_THREADS);
}

static void test_numbers(void)
{
    struct sc_set_value v;
    char err[SC_ERR_LEN];
    const struct sc_setting *nf = sc_setting(SC_SET_NODEFRACTION);
    T_EQ_INT(sc_setting_parse(nf, "0", NULL, &v, err), 0);
    T_EQ_INT(sc_setting_parse(nf, "1", NULL, &v, err), 0);
    T_EQ_INT(sc_setting_parse(nf, ".25", NULL, &v, err), 0);
    T_CHECK(v.d == 0.25);
    T_EQ_INT(sc_setting_parse(nf, "5e-3", NULL, &v, err), 0);
    T_CHECK(v.d == 0.005);
    T_EQ_INT(sc_setting_parse(nf, "1.0001", "--nodefraction", &v, err), SC_EINVAL);
    T_EQ_STR(err, "'--nodefraction' must be a number from 0 to 1, not '1.0001'");
    /* no sign, no words strtod would take */
    const char *const never[] = {"-0.1", "+0.1", "inf",  "nan",   "0x1p-3",
                                 "",     " 0.1", "0.1 ", "1e999", "."};
    for (size_t i = 0; i < sizeof never / sizeof never[0]; i++)
        T_EQ_INT(sc_setting_parse(nf, never[i], NULL, &v, err), SC_EINVAL);
    /* min 1 (a thousandth) is above 0; a max of SC_SETTING_BELOW is excluded */
    const struct sc_setting *q = sc_setting(SC_SET_COMPARE_Q);
    T_EQ_INT(sc_setting_parse(q, "0.0001", NULL, &v, err), 0);
    T_EQ_INT(sc_setting_parse(q, "0.9999", NULL, &v, err), 0);
    T_EQ_INT(sc_setting_parse(q, "0", "q", &v, err), SC_EINVAL);
    T_EQ_STR(err, "'q' must be a number above 0 and below 1, not '0'");
    T_EQ_INT(sc_setting_parse(q, "1", "q", &v, err), SC_EINVAL);
    const struct sc_setting *fs = sc_setting(SC_SET_FLAME_FONTSIZE);
    T_EQ_INT(sc_setting_parse(fs, "1000", NULL, &v, err), 0);
    T_EQ_INT(sc_setting_parse(fs, "1000.5", "--fontsize", &v, err), SC_EINVAL);
    T_EQ_STR(err, "'--fontsize' must be a number above 0 and at most 1000, not '1000.5'");
    const struct sc_setting *fa = sc_setting(SC_SET_COMPARE_FAIL_ABOVE);
    T_EQ_INT(sc_setting_parse(fa, "0", NULL, &v, err), 0);
    T_EQ_INT(sc_setting_parse(fa, "250.5", NULL, &v, err), 0);
    T_CHECK(v.d == 250.5);
    /* a flag-only row names its flag when no where is given */
    T_EQ_INT(sc_setting_parse(sc_setting(SC_SET_TOP_NODECOUNT), "x", NULL, &v, err), SC_EINVAL);
    T_EQ_STR(err, "'--nodecount' must be a count of at most 2147483647, not 'x'");
}

/* The constants the modules keep beside the table (array sizes, their own defaults for
 * callers that pass 0) are the table's: a row changed alone would fail here. */
static void test_code_agrees(void)
{
    struct sc_callgraph_opts go = SC_CALLGRAPH_OPTS_INIT;
    T_EQ_INT(go.nodecount, sc_setting_default_i(SC_SET_CALLGRAPH_NODECOUNT));
    T_CHECK(go.nodefraction == sc_setting_default_d(SC_SET_NODEFRACTION));
    T_CHECK(go.edgefraction == sc_setting_default_d(SC_SET_EDGEFRACTION));
    T_EQ_INT(sc_setting(SC_SET_CALLGRAPH_NODECOUNT)->max, SC_CALLGRAPH_SVG_MAX_NODES);
    struct sc_cmp_opts co = SC_CMP_OPTS_INIT;
    T_CHECK(co.level == sc_setting_default_d(SC_SET_COMPARE_Q));
    T_EQ_INT(sc_setting_default_i(SC_SET_HEATMAP_ROWS), SC_HEATMAP_DEFAULT_ROWS);
    T_EQ_INT(sc_setting(SC_SET_HEATMAP_ROWS)->max, SC_HEATMAP_MAX_ROWS);
    T_EQ_INT(sc_setting_default_i(SC_SET_HEATMAP_MAX_COLS), SC_HEATMAP_MAX_COLS);
    T_EQ_INT(sc_setting(SC_SET_HEATMAP_MAX_COLS)->max, SC_HEATMAP_MAX_COLS);
    T_EQ_INT(sc_setting_default_i(SC_SET_PARAM_REPLICATES), SC_REPLICATES_DEFAULT);
    T_EQ_INT(sc_setting(SC_SET_PARAM_REPLICATES)->max, SC_REPLICATES_MAX);
    struct sc_svg_opts so;
    sc_svg_opts_init(&so);
    T_EQ_INT(so.width, sc_setting_default_i(SC_SET_FLAME_WIDTH));
    T_EQ_INT(so.frame_height, sc_setting_default_i(SC_SET_FLAME_HEIGHT));
    T_CHECK(so.font_size == sc_setting_default_d(SC_SET_FLAME_FONTSIZE));
    T_CHECK(so.font_width == sc_setting_default_d(SC_SET_FLAME_FONTWIDTH));
    T_CHECK(so.factor == sc_setting_default_d(SC_SET_FLAME_FACTOR));
    /* choices read as an index: in the order of the enums they index */
    struct sc_set_value v;
    char err[SC_ERR_LEN];
    T_EQ_INT(sc_setting_parse(sc_setting(SC_SET_TOP_FORMAT), "json", NULL, &v, err), 0);
    T_EQ_INT(v.i, SC_TOP_JSON);
    T_EQ_INT(sc_setting_parse(sc_setting(SC_SET_TOP_FORMAT), "tsv", NULL, &v, err), 0);
    T_EQ_INT(v.i, SC_TOP_TSV);
    /* --colors: one choice a palette, in the enum's order */
    const char *pal = sc_setting(SC_SET_FLAME_COLORS)->choices;
    int npal = 1;
    for (const char *c = pal; *c; c++)
        npal += *c == '|';
    T_EQ_INT(npal, SC_SVG_ORANGE + 1);
    T_EQ_INT(sc_setting_parse(sc_setting(SC_SET_FLAME_COLORS), "java", NULL, &v, err), 0);
    T_EQ_INT(v.i, SC_SVG_JAVA);
    T_EQ_INT(sc_setting_parse(sc_setting(SC_SET_FLAME_COLORS), "orange", NULL, &v, err), 0);
    T_EQ_INT(v.i, SC_SVG_ORANGE);
    /* the SVG writer's own check of options set in code is the rows' */
    struct sc_svg_opts bad;
    sc_svg_opts_init(&bad);
    bad.width = 29;
    T_EQ_INT(sc_svg_opts_check(&bad, err), SC_EINVAL);
    T_EQ_STR(err, "'--width' must be a count from 30 to 1000000, not '29'");
    sc_svg_opts_init(&bad);
    bad.factor = 1e15;
    T_EQ_INT(sc_svg_opts_check(&bad, err), SC_EINVAL);
    T_EQ_INT(sc_setting_parse(sc_setting(SC_SET_FLAME_FACTOR), "1e15", NULL, &v, err), SC_EINVAL);
    sc_svg_opts_init(&bad);
    T_EQ_INT(sc_svg_opts_check(&bad, err), 0);
    /* a diff's switches: 0|1|false|true, the odd choices true */
    const char *const yes[] = {"1", "true"}, *const no[] = {"0", "false"};
    for (int i = 0; i < 2; i++) {
        T_EQ_INT(sc_setting_parse(sc_setting(SC_SET_PARAM_NORMALIZE), yes[i], NULL, &v, err), 0);
        T_EQ_INT(v.i & 1, 1);
        T_EQ_INT(sc_setting_parse(sc_setting(SC_SET_PARAM_STATS), no[i], NULL, &v, err), 0);
        T_EQ_INT(v.i & 1, 0);
    }
    T_EQ_INT(sc_setting_default_i(SC_SET_PARAM_STATS) & 1, 1);
    T_EQ_INT(sc_setting_default_i(SC_SET_PARAM_NORMALIZE) & 1, 0);
}

static void test_config_lands(void)
{
    /* a key read through the table lands in its field */
    struct sc_config c;
    char err[SC_ERR_LEN];
    const char *y = "server: {max_queries: 7, query_memory: 2MiB, listen: ':9'}\n"
                    "storage: {retention: 31d, engine: clickhouse}\n"
                    "limits: {max_labels: 9, max_age: 2d}\n"
                    "record: {frequency: 49, dwarf: false}\n"
                    "scrape_configs: [{job_name: j, delta: subtract, scrape_interval: 5s}]\n";
    T_EQ_INT(sc_config_parse(y, strlen(y), "t.yaml", &c, err), 0);
    T_EQ_INT(c.max_queries, 7);
    T_EQ_INT(c.query_memory, 2 << 20);
    T_EQ_STR(c.listen, ":9");
    T_EQ_INT(c.retention_ns, 31LL * 86400 * 1000000000LL);
    T_EQ_STR(c.storage_engine, "clickhouse");
    T_EQ_INT(c.limits.max_labels, 9);
    T_EQ_INT(c.limits.max_age_ns, 2LL * 86400 * 1000000000LL);
    T_EQ_INT(c.record_frequency, 49);
    T_EQ_INT(c.record_dwarf, 0);
    T_EQ_INT(c.jobs[0].delta, SC_DELTA_SUBTRACT);
    T_EQ_INT(c.jobs[0].interval_ns, 5LL * 1000000000LL);
    T_EQ_INT(c.jobs[0].timeout_ns, 5LL * 1000000000LL); /* never past the interval */
    T_EQ_INT(c.jobs[0].cpu_seconds, 10);
    sc_config_release(&c);
}

int main(void)
{
    T_RUN(test_defaults_parse);
    T_RUN(test_config_takes_every_key);
    T_RUN(test_values);
    T_RUN(test_numbers);
    T_RUN(test_code_agrees);
    T_RUN(test_config_lands);
    return t_done();
}
