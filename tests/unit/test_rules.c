/* test_rules.c - the config's rules: and alerting: (defaults, every error names the rule and
 * the key). */
#include "model/error.h"
#include "query/changes.h"
#include "server/config.h"
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
        {"rules: [{alert: A, type: cpu:cpu, type: heap:inuse_space}]", "duplicate key 'type'"},
        {"alerting: {alertmanagers: ['127.0.0.1:9093']}",
         "bad URL '127.0.0.1:9093' in 'alerting.alertmanagers'"},
        {"alerting: {webhooks: 'http://x'}", "'webhooks' must be a list"},
        {"alerting: {evaluation_interval: 500ms}", "bad 'alerting.evaluation_interval' '500ms'"},
        {"alerting: {timeout: 0s}", "bad 'alerting.timeout' '0s'"},
        {"alerting: {external_url: 'scorch:4040'}", "bad 'alerting.external_url'"},
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

int main(void)
{
    T_RUN(test_defaults);
    T_RUN(test_values);
    T_RUN(test_errors);
    return t_done();
}
