/* test_rules.c - the config's rules: and alerting: (defaults, every error names the rule and
 * the key), alerts' states (pending, for, firing, resolved), their JSON and diff link, the
 * labels a group gets and Prometheus's escaping of label values; a record rule evaluated
 * over a store: the timeline's values per group and function, its limit, its regex, and
 * series gone when a window has nothing. */
#include <math.h>
#include <stdlib.h>

#include "ingest/ingest.h"
#include "model/error.h"
#include "model/prom.h"
#include "config/config.h"
#include "server/rules_int.h"
#include "t.h"

#define NS 1000000000LL

static int parse(const char *y, struct sc_config *c, char *err)
{
    err[0] = 0;
    return sc_config_parse(y, strlen(y), "t.yaml", c, err);
}

static void test_defaults(void)
{
    struct sc_config c;
    char err[SC_ERR_LEN];
    T_EQ_INT(parse("rules:\n"
                   "  - record: fn_cpu\n"
                   "    type: cpu:cpu\n"
                   "  - alert: Slower\n"
                   "    type: cpu:cpu\n",
                   &c, err),
             0);
    T_EQ_INT(c.nrules, 2);
    T_EQ_INT(c.evaluation_interval_ns, 60 * NS);
    T_EQ_INT(c.alert_timeout_ns, 10 * NS);
    T_CHECK(c.external_url == NULL);
    const struct sc_rule *r = &c.rules[0];
    T_EQ_INT(r->kind, SC_RULE_RECORD);
    T_EQ_STR(r->name, "fn_cpu");
    T_EQ_STR(r->query, "{}");
    T_EQ_STR(r->group_by, "service_name");
    T_EQ_STR(r->tenant, "");
    T_EQ_INT(r->top, 20);
    T_CHECK(r->regex == NULL);
    T_EQ_INT(r->total, 0);
    T_EQ_INT(r->limit, 1000);
    T_EQ_INT(r->range_ns, 60 * NS); /* the evaluation interval */
    r = &c.rules[1];
    T_EQ_INT(r->kind, SC_RULE_ALERT);
    T_EQ_INT(r->range_ns, 3600 * NS);
    T_EQ_INT(r->kinds, SC_RULE_KINDS_ALL);
    T_EQ_INT(r->for_ns, 0);
    T_CHECK(r->min_change_pct == 0);
    T_EQ_INT(r->top, 0);
    T_EQ_INT(r->limit, 100);
    T_EQ_INT(r->step_ns, 0);
    sc_config_release(&c);

    /* a record rule's range follows the interval it is evaluated at */
    T_EQ_INT(parse("alerting: {evaluation_interval: 15s}\n"
                   "rules: [{record: a, type: 'heap:inuse_space'}]\n",
                   &c, err),
             0);
    T_EQ_INT(c.rules[0].range_ns, 15 * NS);
    sc_config_release(&c);

    /* no config at all */
    T_EQ_INT(parse("", &c, err), 0);
    T_EQ_INT(c.nrules, 0);
    T_EQ_INT(c.evaluation_interval_ns, 60 * NS);
    sc_config_release(&c);
}

static void test_values(void)
{
    struct sc_config c;
    char err[SC_ERR_LEN];
    int rc = parse("rules:\n"
                   "  - record: 'ns:fn_alloc'\n"
                   "    type: allocs:alloc_space\n"
                   "    query: '{env=\"prod\", service_name=~\"a.*\"}'\n"
                   "    group_by: ''\n"
                   "    functions: 'main\\..*'\n"
                   "    value: total\n"
                   "    limit: 50\n"
                   "    range: 5m\n"
                   "    tenant: team-a\n"
                   "  - alert: Regressed\n"
                   "    type: cpu:cpu\n"
                   "    group_by: pod\n"
                   "    functions: top 7\n"
                   "    range: 2h\n"
                   "    step: 1m\n"
                   "    kinds: [step, new]\n"
                   "    min_change_pct: 12.5\n"
                   "    for: 5m\n"
                   "    labels: {severity: page, team: core}\n"
                   "alerting:\n"
                   "  alertmanagers: ['http://127.0.0.1:9093', 'https://am.example:9093/']\n"
                   "  webhooks: [http://127.0.0.1:8080/hook]\n"
                   "  evaluation_interval: 30s\n"
                   "  timeout: 2s\n"
                   "  external_url: 'https://scorch.example/'\n",
                   &c, err);
    T_EQ_INT(rc, 0);
    if (rc) {
        fprintf(stderr, "%s\n", err);
        return;
    }
    const struct sc_rule *r = &c.rules[0];
    T_EQ_STR(r->name, "ns:fn_alloc");
    T_EQ_STR(r->group_by, "");
    T_EQ_STR(r->regex, "main\\..*");
    T_EQ_INT(r->top, 0);
    T_EQ_INT(r->total, 1);
    T_EQ_INT(r->limit, 50);
    T_EQ_INT(r->range_ns, 300 * NS);
    T_EQ_STR(r->tenant, "team-a");
    r = &c.rules[1];
    T_EQ_STR(r->group_by, "pod");
    T_EQ_INT(r->top, 7);
    T_EQ_INT(r->range_ns, 7200 * NS);
    T_EQ_INT(r->step_ns, 60 * NS);
    T_EQ_INT(r->kinds, (1u << SC_CHANGE_STEP) | (1u << SC_CHANGE_NEW));
    T_CHECK(r->min_change_pct == 12.5);
    T_EQ_INT(r->for_ns, 300 * NS);
    T_EQ_INT(r->nlabels, 2);
    T_EQ_STR(r->label_names[0], "severity");
    T_EQ_STR(r->label_values[0], "page");
    T_EQ_INT(c.nalertmanagers, 2);
    T_EQ_INT(c.nwebhooks, 1);
    T_EQ_INT(c.evaluation_interval_ns, 30 * NS);
    T_EQ_INT(c.alert_timeout_ns, 2 * NS);
    T_EQ_STR(c.external_url, "https://scorch.example");
    sc_config_release(&c);
}

static void test_errors(void)
{
    static const struct {
        const char *yaml, *want;
    } cases[] = {
        {"rules: {record: a}", "'rules' must be a list"},
        {"rules: [{type: cpu:cpu}]",
         "config 't.yaml': rules[0]: a rule needs 'record: METRIC' or 'alert: NAME' (line 1)"},
        {"rules: [{record: a, alert: b, type: cpu:cpu}]", "rules[0]: a rule has one of"},
        {"rules:\n  - record: ok\n    type: cpu:cpu\n  - record: bad-name\n    type: cpu:cpu\n",
         "config 't.yaml': rules[1]: bad 'record' 'bad-name': a metric name"},
        {"rules: [{record: scorch_http_fn, type: cpu:cpu}]", "a namespace /metrics uses"},
        {"rules: [{record: a}]", "rules[0]: record 'a': 'type' is missing"},
        {"rules: [{record: a, type: cpu}]", "record 'a': bad 'type' 'cpu'"},
        {"rules: [{record: a, type: cpu:cpu, query: '{a=}'}]", "record 'a': bad 'query': "},
        {"rules: [{record: a, type: cpu:cpu, group_by: 'a b'}]", "bad 'group_by' 'a b'"},
        {"rules: [{record: a, type: cpu:cpu, functions: 'top 0'}]",
         "bad 'functions' 'top 0' (top N, N from 1 to 10000)"},
        {"rules: [{record: a, type: cpu:cpu, functions: 'a('}]", "bad 'functions' regex 'a('"},
        {"rules: [{record: a, type: cpu:cpu, value: flat}]", "'value' must be self or total"},
        {"rules: [{record: a, type: cpu:cpu, limit: 0}]", "bad 'limit' '0'"},
        {"rules: [{record: a, type: cpu:cpu, limit: -1}]", "bad 'limit' '-1'"},
        {"rules: [{record: a, type: cpu:cpu, functions: 'top -3'}]", "bad 'functions' 'top -3'"},
        {"rules: [{record: a, type: cpu:cpu, range: 1x}]", "record 'a': bad 'range' '1x'"},
        {"rules: [{record: a, type: cpu:cpu, range: 1500ms}]", "'range' must be whole seconds"},
        {"rules: [{record: a, type: cpu:cpu, for: 5m}]",
         "record 'a': unknown key 'for' in a record rule (record, type"},
        {"rules: [{alert: A, type: cpu:cpu, value: total}]",
         "alert 'A': unknown key 'value' in an alert rule"},
        {"rules: [{alert: A, type: cpu:cpu, kinds: [step, jump]}]",
         "alert 'A': unknown kind 'jump' in 'kinds'"},
        {"rules: [{alert: A, type: cpu:cpu, kinds: []}]", "'kinds' must be a non-empty list"},
        {"rules: [{alert: A, type: cpu:cpu, min_change_pct: -5}]", "bad 'min_change_pct' '-5'"},
        {"rules: [{alert: A, type: cpu:cpu, for: soon}]", "alert 'A': bad 'for' 'soon'"},
        {"rules: [{alert: A, type: cpu:cpu, step: 40m}]",
         "'step' must be whole seconds and at most half the 'range'"},
        {"rules: [{alert: A, type: cpu:cpu, labels: {alertname: x}}]",
         "'labels' may not set 'alertname'"},
        {"rules: [{alert: A, type: cpu:cpu, labels: {a.b: x}}]", "bad label name 'a.b'"},
        {"rules: [{alert: A, type: cpu:cpu, group_by: team, labels: {team: x}}]",
         "'labels' may not set 'team': it is the rule's group_by"},
        {"rules:\n  - alert: A\n    type: cpu:cpu\n  - alert: A\n    type: heap:inuse_space\n",
         "rules[1]: alert 'A': the name is taken by rules[0] already (line 4)"},
        {"rules: [{alert: '', type: cpu:cpu}]", "bad 'alert' ''"},
        {"rules: [{alert: A, type: cpu:cpu, group_by: ''}]",
         "alert 'A': 'group_by' must be a label"},
        {"rules: [{alert: A, type: cpu:cpu, type: heap:inuse_space}]", "duplicate key 'type'"},
        {"alerting: {alertmanagers: ['127.0.0.1:9093']}",
         "bad URL '127.0.0.1:9093' in 'alerting.alertmanagers'"},
        {"alerting: {webhooks: 'http://x'}", "'webhooks' must be a list"},
        {"alerting: {evaluation_interval: 500ms}",
         "'alerting.evaluation_interval' must be a duration from 1s to 1d (like 1m), not '500ms'"},
        {"alerting: {evaluation_interval: 1500ms}",
         "'alerting.evaluation_interval' must be whole seconds, not '1500ms'"},
        {"alerting: {timeout: 0s}",
         "'alerting.timeout' must be a duration from 100ms to 10m (like 10s), not '0s'"},
        {"alerting: {external_url: 'scorch:4040'}",
         "'alerting.external_url' must be an http:// or https:// URL, not 'scorch:4040'"},
        {"alerting: {alertmanager: []}", "unknown key 'alerting.alertmanager'"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct sc_config c;
        char err[SC_ERR_LEN];
        int rc = parse(cases[i].yaml, &c, err);
        T_EQ_INT(rc, SC_EINVAL);
        if (!strstr(err, cases[i].want)) {
            fprintf(stderr, "case %zu: error \"%s\" lacks \"%s\"\n", i, err, cases[i].want);
            T_CHECK(0);
        }
        sc_config_release(&c);
    }
}

static struct sc_change change(enum sc_change_kind k, double before, double after, int64_t at)
{
    struct sc_change c;
    memset(&c, 0, sizeof c);
    c.kind = k;
    c.before = before;
    c.after = after;
    c.change_pct = k == SC_CHANGE_NEW ? NAN : 100 * (after / before - 1);
    c.at_ns = at;
    c.lo = c.hi = c.slope_per_hour = NAN;
    c.q = 0.01;
    return c;
}

static const struct sc_alert *find_alert(const struct sc_alerts *a, const char *fn)
{
    for (uint32_t i = 0; i < a->n; i++)
        if (!strcmp(a->v[i].function, fn))
            return &a->v[i];
    return NULL;
}

/* for: pending until it has held that long, then firing; resolved once not found; a
 * pending one not found is forgotten without a word. */
static void test_states(void)
{
    struct sc_alerts a = {0};
    struct sc_change c1 = change(SC_CHANGE_STEP, 1, 2, 5 * NS);
    struct sc_change c2 = change(SC_CHANGE_NEW, 0, 3, 5 * NS);
    struct sc_alert_in both[2] = {{"api", "main.work", &c1, "nanoseconds/s"},
                                  {"api", "main.fresh", &c2, "nanoseconds/s"}};
    int64_t fr = 2 * NS;
    T_EQ_INT(sc_alerts_update(&a, both, 2, 10 * NS, fr), 0);
    T_EQ_INT(a.n, 2);
    T_EQ_INT(find_alert(&a, "main.work")->state, SC_ALERT_PENDING);
    T_EQ_INT(sc_alerts_update(&a, both, 1, 11 * NS, fr), 0);
    /* main.fresh was pending and is gone: forgotten */
    T_EQ_INT(a.n, 1);
    T_EQ_INT(find_alert(&a, "main.work")->state, SC_ALERT_PENDING);
    T_EQ_INT(sc_alerts_update(&a, both, 1, 12 * NS, fr), 0);
    const struct sc_alert *w = find_alert(&a, "main.work");
    T_EQ_INT(w->state, SC_ALERT_FIRING);
    T_EQ_INT(w->fired, 1);
    T_EQ_INT(w->since_ns, 10 * NS);
    /* still found: firing, not newly */
    struct sc_change c3 = change(SC_CHANGE_STEP, 1, 2.5, 6 * NS);
    struct sc_alert_in again = {"api", "main.work", &c3, "nanoseconds/s"};
    T_EQ_INT(sc_alerts_update(&a, &again, 1, 13 * NS, fr), 0);
    w = find_alert(&a, "main.work");
    T_EQ_INT(w->state, SC_ALERT_FIRING);
    T_EQ_INT(w->fired, 0);
    T_CHECK(w->c.after == 2.5); /* the latest finding's numbers */
    /* the same function in another group, or of another kind, is another alert */
    struct sc_change c4 = change(SC_CHANGE_TREND, 1, 2, 0);
    struct sc_alert_in others[3] = {
        {"api", "main.work", &c3, ""}, {"db", "main.work", &c3, ""}, {"api", "main.work", &c4, ""}};
    T_EQ_INT(sc_alerts_update(&a, others, 3, 14 * NS, 0), 0);
    T_EQ_INT(a.n, 3);
    /* no longer found: resolved, then gone the round after */
    T_EQ_INT(sc_alerts_update(&a, NULL, 0, 15 * NS, fr), 0);
    T_EQ_INT(a.n, 3);
    for (uint32_t i = 0; i < a.n; i++)
        T_EQ_INT(a.v[i].state, SC_ALERT_RESOLVED);
    T_EQ_INT(sc_alerts_update(&a, NULL, 0, 16 * NS, fr), 0);
    T_EQ_INT(a.n, 0);
    /* for 0: firing at the first round */
    T_EQ_INT(sc_alerts_update(&a, both, 1, 17 * NS, 0), 0);
    T_EQ_INT(a.v[0].state, SC_ALERT_FIRING);
    T_EQ_INT(a.v[0].fired, 1);
    sc_alerts_release(&a);
}

static void test_alert_json(void)
{
    struct sc_rule r;
    memset(&r, 0, sizeof r);
    char name[] = "FunctionRegressed", type[] = "cpu:cpu", gb[] = "service_name";
    char *ln[] = {"severity"}, *lv[] = {"warning"};
    r.kind = SC_RULE_ALERT;
    r.name = name;
    r.type = type;
    r.group_by = gb;
    r.range_ns = 3600 * NS;
    r.label_names = ln;
    r.label_values = lv;
    r.nlabels = 1;
    int64_t t = 1700003600 * NS;
    struct sc_alert a;
    memset(&a, 0, sizeof a);
    char group[] = "api \"v2\"", fn[] = "main.(*T).work";
    a.group = group;
    a.function = fn;
    a.c = change(SC_CHANGE_STEP, 2e8, 3e8, 1700001800 * NS);
    snprintf(a.unit, sizeof a.unit, "nanoseconds/s");
    a.since_ns = t;
    a.state = SC_ALERT_FIRING;
    struct sc_alert_ctx x = {&r, "http://scorch:4040", "{env=\"prod\"}", t, t + 240 * NS};
    struct sc_buf b = SC_BUF_INIT;
    sc_alert_json(&x, &a, 0, &b);
    sc_buf_putc(&b, 0);
    const char *j = b.data;
    T_CHECK(strstr(j, "\"labels\":{\"alertname\":\"FunctionRegressed\","
                      "\"service_name\":\"api \\\"v2\\\"\",\"function\":\"main.(*T).work\","
                      "\"kind\":\"step\",\"severity\":\"warning\"}") != NULL);
    T_CHECK(strstr(j, "\"startsAt\":\"2023-11-14T23:13:20Z\"") != NULL);
    T_CHECK(strstr(j, "\"endsAt\":\"2023-11-14T23:17:20Z\"") != NULL);
    T_CHECK(strstr(j, "\"status\"") == NULL);
    /* the change in words: before -> after in cores, the percentage, when */
    T_CHECK(strstr(j, "went from 0.2 cores to 0.3 cores at 2023-11-14T22:43:20Z: +50.0%") != NULL);
    T_CHECK(strstr(j, "\"summary\":\"main.(*T).work grew +50% in service_name=api") != NULL);
    /* the diff: the group's selection, before the change against after it */
    const char *url = "http://scorch:4040/?view=diff&query=%7Benv%3D%22prod%22%2Cservice_name%3D%"
                      "22api%20%5C%22v2%5C%22%22%7D&type=cpu%3Acpu&from=1700001800&until="
                      "1700003600&base_from=1700000000&base_until=1700001800&search=main.%28%2AT%"
                      "29.work";
    char want[1024];
    snprintf(want, sizeof want, "\"diff_url\":\"%s\"", url);
    T_CHECK(strstr(j, want) != NULL);
    snprintf(want, sizeof want, "\"generatorURL\":\"%s\"", url);
    T_CHECK(strstr(j, want) != NULL);
    if (!strstr(j, want))
        fprintf(stderr, "%s\n", j);
    /* resolved, as a webhook has it: status, and endsAt the evaluation's time */
    a.state = SC_ALERT_RESOLVED;
    b.len = 0;
    sc_alert_json(&x, &a, 1, &b);
    sc_buf_putc(&b, 0);
    T_CHECK(strncmp(b.data, "{\"status\":\"resolved\",", 21) == 0);
    T_CHECK(strstr(b.data, "\"endsAt\":\"2023-11-14T23:13:20Z\"") != NULL);
    /* a rule without group_by: the series' own labels, and its selection is the series */
    char nogb[] = "";
    r.group_by = nogb;
    char series[] = "{function=\"x\",k8s.pod=\"p-1\",service_name=\"api\"}";
    a.group = series;
    a.state = SC_ALERT_FIRING;
    b.len = 0;
    sc_alert_json(&x, &a, 0, &b);
    sc_buf_putc(&b, 0);
    T_CHECK(strstr(b.data, "\"exported_function\":\"x\",\"k8s_pod\":\"p-1\","
                           "\"service_name\":\"api\",\"function\":\"main.(*T).work\"") != NULL);
    T_CHECK(strstr(b.data, "query=%7Bfunction%3D%22x%22%2Ck8s.pod%3D%22p-1%22%2Cservice_name%"
                           "3D%22api%22%7D&") != NULL);
    sc_buf_release(&b);
}

static void test_exposition(void)
{
    struct sc_buf b = SC_BUF_INIT;
    const char v[] = "a\\b\"c\nd\xff"
                     "e\xc3\xa9";
    sc_prom_put_label_value(&b, v, sizeof v - 1);
    T_EQ_MEM(b.data, b.len,
             "a\\\\b\\\"c\\nd\xef\xbf\xbd"
             "e\xc3\xa9");
    sc_buf_release(&b);
    struct sc_labels l;
    sc_labels_init(&l);
    char err[SC_ERR_LEN] = "";
    T_EQ_INT(sc_rules_group_labels("k8s.pod-name", "p1", &l, err), 0);
    T_EQ_INT(l.n, 1);
    T_EQ_STR(t_label(&l, "k8s_pod_name"), "p1");
    sc_labels_release(&l);
    sc_labels_init(&l);
    /* a series without the group's label: no label (Prometheus's empty value) */
    T_EQ_INT(sc_rules_group_labels("pod", "", &l, err), 0);
    T_EQ_INT(l.n, 0);
    sc_labels_release(&l);
    sc_labels_init(&l);
    T_CHECK(sc_rules_group_labels("", "{a=", &l, err) != 0);
    sc_labels_release(&l);
}

/* Ten one-second CPU profiles of service svc ending at t_end (s), folded at 100 Hz: each
 * sample 10 ms, so n samples a second are n * 1e7 ns/s. */
static void push_cpu(struct sc_store *st, const char *svc, int64_t t_end, const char *folded)
{
    for (int64_t t = t_end - 10; t < t_end; t++) {
        char name[64], from[32], until[32], err[SC_ERR_LEN] = "";
        snprintf(name, sizeof name, "%s.cpu", svc);
        snprintf(from, sizeof from, "%lld", (long long)t);
        snprintf(until, sizeof until, "%lld", (long long)t + 1);
        struct sc_ingest_req q = {0};
        q.name = name;
        q.tenant = "";
        q.from = from;
        q.until = until;
        q.format = "folded";
        q.sample_rate = "100";
        q.body = folded;
        q.len = strlen(folded);
        struct sc_ingest_result res;
        int rc = sc_ingest(st, &q, &sc_limits_cli, &res, err);
        if (rc)
            fprintf(stderr, "ingest: %s\n", err);
        T_EQ_INT(rc, 0);
    }
}

static char *metrics_text(struct sc_rules *rs)
{
    struct sc_buf b = SC_BUF_INIT;
    sc_rules_metrics(rs, &b);
    sc_buf_putc(&b, 0);
    size_t n;
    return sc_buf_detach(&b, &n);
}

static int count_lines(const char *text, const char *prefix)
{
    int n = 0;
    for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
        n += !strncmp(p, prefix, strlen(prefix));
    return n;
}

static void test_record_eval(void)
{
    char dir[] = "/tmp/scorch-test-rules-XXXXXX";
    if (!mkdtemp(dir))
        T_SKIP("cannot create a temporary directory");
    struct sc_store_opts o;
    sc_store_opts_init(&o);
    o.dir = dir;
    o.background = 0;
    o.retention_ns = 0;
    o.durable = 0;
    struct sc_store *st = NULL;
    char err[SC_ERR_LEN] = "";
    T_EQ_INT(sc_store_open(&o, &st, err), 0);
    if (!st)
        return;
    int64_t t = 1700000000; /* a multiple of 10 s */
    push_cpu(st, "api", t, "main.main;main.work 10\nmain.main;main.idle 30\n");
    push_cpu(st, "db", t, "main.main;db.scan 20\n");
    struct sc_config c;
    T_EQ_INT(parse("rules:\n"
                   "  - {record: fn_cpu, type: 'cpu:cpu', functions: top 5}\n"
                   "  - {record: fn_one, type: 'cpu:cpu', limit: 1}\n"
                   "  - {record: fn_db, type: 'cpu:cpu', functions: 'db\\..*', value: total}\n"
                   "alerting: {evaluation_interval: 10s}\n",
                   &c, err),
             0);
    struct sc_rules_env env = {st, "http://scorch:4040", 0, 0, NULL, NULL, NULL};
    struct sc_rules *rs = NULL;
    T_EQ_INT(sc_rules_new(&c, &env, &rs, err), 0);
    sc_config_release(&c);
    if (!rs) {
        sc_store_close(st);
        return;
    }
    sc_rules_eval(rs, t * NS);
    char *m = metrics_text(rs);
    /* the window [t - 10 s, t): the functions' self CPU per second, per service */
    T_CHECK(strstr(m, "\nfn_cpu{service_name=\"api\",function=\"main.idle\"} 300000000\n"));
    T_CHECK(strstr(m, "\nfn_cpu{service_name=\"api\",function=\"main.work\"} 100000000\n"));
    T_CHECK(strstr(m, "\nfn_cpu{service_name=\"db\",function=\"db.scan\"} 200000000\n"));
    T_EQ_INT(count_lines(m, "fn_cpu{"), 3); /* main.main has no self value: no series */
    T_CHECK(strstr(m, "# TYPE fn_cpu gauge\n") != NULL);
    /* over its limit: the heaviest, and how many were left out */
    T_EQ_INT(count_lines(m, "fn_one{"), 1);
    T_CHECK(strstr(m, "\nfn_one{service_name=\"api\",function=\"main.idle\"} 300000000\n"));
    T_CHECK(strstr(m, "scorch_rule_series_dropped{rule=\"fn_one\",kind=\"record\"} 2\n"));
    /* a regex: its functions only, total values */
    T_EQ_INT(count_lines(m, "fn_db{"), 1);
    T_CHECK(strstr(m, "\nfn_db{service_name=\"db\",function=\"db.scan\"} 200000000\n"));
    T_CHECK(strstr(m, "scorch_rule_last_evaluation_timestamp_seconds{rule=\"fn_cpu\","
                      "kind=\"record\"} 1700000000.000\n"));
    T_CHECK(strstr(m, "scorch_rule_evaluations_total{kind=\"record\"} 3\n"));
    T_CHECK(strstr(m, "scorch_rule_evaluation_failures_total{kind=\"record\"} 0\n"));
    free(m);
    /* the next window has no profiles: the series are gone */
    sc_rules_eval(rs, (t + 10) * NS);
    m = metrics_text(rs);
    T_EQ_INT(count_lines(m, "fn_cpu{"), 0);
    T_CHECK(strstr(m, "scorch_rule_series{rule=\"fn_cpu\",kind=\"record\"} 0\n"));
    T_CHECK(strstr(m, "scorch_rule_health{rule=\"fn_cpu\",kind=\"record\"} 1\n"));
    free(m);
    sc_rules_stop_free(rs);
    sc_store_close(st);
    t_rmrf(dir);
}

/* The threads start and stop, a notification to nobody is counted as failed or left
 * unsent, nothing is leaked (ASan). */
static void test_start_stop(void)
{
    struct sc_config c;
    char err[SC_ERR_LEN] = "";
    /* no rule: a round that came during the test would have no store to read */
    T_EQ_INT(parse("alerting: {webhooks: ['http://127.0.0.1:1/hook'], timeout: 1s}\n", &c, err), 0);
    struct sc_rules_env env = {NULL, NULL, 0, 0, NULL, NULL, NULL};
    struct sc_rules *rs = NULL;
    T_EQ_INT(sc_rules_new(&c, &env, &rs, err), 0);
    sc_config_release(&c);
    if (!rs)
        return;
    char *body = strdup("{}");
    sc_rules_notify(rs, SC_TO_WEBHOOK, "http://127.0.0.1:1/hook", body, 2);
    char *m = metrics_text(rs);
    T_CHECK(strstr(m, "scorch_alert_notifications_queued 1\n") != NULL);
    free(m);
    T_EQ_INT(sc_rules_start(rs, err), 0);
    sc_rules_stop_free(rs);
}

int main(void)
{
    T_RUN(test_defaults);
    T_RUN(test_values);
    T_RUN(test_errors);
    T_RUN(test_states);
    T_RUN(test_alert_json);
    T_RUN(test_exposition);
    T_RUN(test_record_eval);
    T_RUN(test_start_stop);
    return t_done();
}
