/* config_rules.c - the config's rules: (recording and alerting rules) and alerting:. */
#include "model/error.h"
#include "model/labels.h"
#include "model/timespec.h"
#include "query/changes.h"
#include "query/regex.h"
#include "query/selector.h"
#include "config/config_int.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NS 1000000000LL
/* Rules' bounds: a window past the store's usual retention reads a month's rollups each
 * evaluation, and evaluations closer than a second apart are a busy loop. */
#define RANGE_MAX (31LL * 86400 * NS)
#define TOP_MAX 10000u
#define LIMIT_MAX 100000u
#define NAME_MAX_LEN 200

/* The message of a rule's error: "config 'x.yaml': rules[2]: alert 'Slow': ... (line 9)",
 * naming the rule by its place in the list and its name once it is known. */
struct rule_ctx {
    struct sc_cfg *c;
    uint32_t index;
    const struct sc_rule *r;
};

static int rfail(struct rule_ctx *x, yaml_node_t *n, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int rfail(struct rule_ctx *x, yaml_node_t *n, const char *fmt, ...)
{
    char msg[SC_ERR_LEN], who[NAME_MAX_LEN + 32] = "";
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (x->r && x->r->name)
        snprintf(who, sizeof who, "%s '%s': ", x->r->kind == SC_RULE_RECORD ? "record" : "alert",
                 x->r->name);
    return sc_errf(x->c->err, SC_EINVAL, "config '%s': rules[%u]: %s%s (line %lu)", x->c->name,
                   (unsigned)x->index, who, msg, n ? (unsigned long)n->start_mark.line + 1 : 0UL);
}

static int oom(struct sc_cfg *c)
{
    return sc_errf(c->err, SC_ENOMEM, "out of memory");
}

/* A Prometheus metric name: [a-zA-Z_:][a-zA-Z0-9_:]*. */
static int metric_name_ok(const char *s)
{
    if (!*s || strlen(s) > NAME_MAX_LEN)
        return 0;
    for (const char *p = s; *p; p++) {
        int alpha = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || *p == '_' || *p == ':';
        if (!alpha && !(p > s && *p >= '0' && *p <= '9'))
            return 0;
    }
    return 1;
}

/* A label name Prometheus and Alertmanager take: [a-zA-Z_][a-zA-Z0-9_]*. */
static int prom_label_ok(const char *s)
{
    return *s != ':' && strchr(s, ':') == NULL && metric_name_ok(s);
}

/* The names /metrics has already: a rule's metric may not take one (two TYPE lines of one
 * name make Prometheus refuse the whole scrape). */
static const char *const reserved_prefixes[] = {
    "scorch_http_",  "scorch_ingest_", "scorch_query_", "scorch_store_", "scorch_sqlite_",
    "scorch_scrape", "scorch_agent_",  "scorch_rule_",  "scorch_alert",  "scorch_record_"};

static int reserved_name(const char *s)
{
    for (size_t i = 0; i < sizeof reserved_prefixes / sizeof reserved_prefixes[0]; i++)
        if (!strncmp(s, reserved_prefixes[i], strlen(reserved_prefixes[i])))
            return 1;
    return 0;
}

static int duration(struct rule_ctx *x, yaml_node_t *v, const char *key, int64_t min, int64_t max,
                    int64_t *out)
{
    const char *s = sc_cfg_scalar(v);
    char why[SC_ERR_LEN];
    if (!s || !*s || sc_duration_parse(s, out, why) || *out < min || *out > max)
        return rfail(x, v, "bad '%s' '%.64s' (a duration from %gs to %gd, like 5m or 1h)", key,
                     s ? s : "", (double)min / NS, (double)max / NS / 86400);
    return 0;
}

static int count(struct rule_ctx *x, yaml_node_t *v, const char *key, uint32_t max, uint32_t *out)
{
    const char *s = sc_cfg_scalar(v);
    /* strtoul reads "-5" as a huge count: a sign is refused before it, at end */
    char *end = (char *)(s ? s : "");
    errno = 0;
    unsigned long n = s && *s != '-' ? strtoul(s, &end, 10) : 0;
    if (!s || !*s || *end || errno || n < 1 || n > max)
        return rfail(x, v, "bad '%s' '%.64s' (a count from 1 to %u)", key, s ? s : "",
                     (unsigned)max);
    *out = (uint32_t)n;
    return 0;
}

static int dup_str(struct rule_ctx *x, yaml_node_t *v, const char *key, char **out)
{
    const char *s = sc_cfg_scalar(v);
    if (!s)
        return rfail(x, v, "'%s' must be a string", key);
    free(*out);
    if (!(*out = strdup(s)))
        return oom(x->c);
    return 0;
}

/* functions: "top N" or a regex of function names, anchored as a label matcher's. */
static int parse_functions(struct rule_ctx *x, yaml_node_t *v, struct sc_rule *r)
{
    const char *s = sc_cfg_scalar(v);
    if (!s || !*s)
        return rfail(x, v, "'functions' must be 'top N' or a regex of function names");
    if (!strncmp(s, "top", 3) && (s[3] == ' ' || s[3] == 0)) {
        const char *num = s + 3;
        while (*num == ' ')
            num++;
        char *end = (char *)num;
        errno = 0;
        unsigned long n = *num && *num != '-' ? strtoul(num, &end, 10) : 0;
        if (!*num || *end || errno || n < 1 || n > TOP_MAX)
            return rfail(x, v, "bad 'functions' '%.64s' (top N, N from 1 to %u)", s,
                         (unsigned)TOP_MAX);
        r->top = (uint32_t)n;
        return 0;
    }
    int ecode;
    size_t eoff;
    pcre2_code *re = sc_re_compile(s, strlen(s), SC_RE_LABEL, &ecode, &eoff);
    if (!re) {
        PCRE2_UCHAR msg[120];
        pcre2_get_error_message(ecode, msg, sizeof msg);
        return rfail(x, v, "bad 'functions' regex '%.64s': %s at offset %zu", s, (const char *)msg,
                     eoff);
    }
    pcre2_code_free(re);
    return dup_str(x, v, "functions", &r->regex);
}

static int parse_kinds(struct rule_ctx *x, yaml_node_t *v, struct sc_rule *r)
{
    if (v->type != YAML_SEQUENCE_NODE || v->data.sequence.items.start == v->data.sequence.items.top)
        return rfail(x, v, "'kinds' must be a non-empty list of step, trend, new, gone");
    r->kinds = 0;
    for (yaml_node_item_t *it = v->data.sequence.items.start; it < v->data.sequence.items.top;
         it++) {
        yaml_node_t *e = yaml_document_get_node(x->c->doc, *it);
        const char *s = sc_cfg_scalar(e);
        int k = -1;
        for (int i = SC_CHANGE_STEP; s && i <= SC_CHANGE_GONE; i++)
            if (!strcmp(s, sc_change_kind_name((enum sc_change_kind)i)))
                k = i;
        if (k < 0)
            return rfail(x, e, "unknown kind '%.64s' in 'kinds' (step, trend, new, gone)",
                         s ? s : "");
        r->kinds |= 1u << k;
    }
    return 0;
}

/* labels: {name: value}: added to the rule's alerts, so the names are Alertmanager's. */
static int parse_alert_labels(struct rule_ctx *x, yaml_node_t *v, struct sc_rule *r)
{
    int rc = sc_cfg_label_map(x->c, v, &r->label_names, &r->label_values, &r->nlabels);
    if (rc)
        return rc;
    for (uint32_t i = 0; i < r->nlabels; i++) {
        const char *name = r->label_names[i];
        if (!prom_label_ok(name))
            return rfail(x, v,
                         "bad label name '%.64s' in 'labels' ([a-zA-Z_][a-zA-Z0-9_]*, as "
                         "Alertmanager takes them)",
                         name);
        if (!strcmp(name, "alertname") || !strcmp(name, "function") || !strcmp(name, "kind"))
            return rfail(x, v, "'labels' may not set '%s': the alert sets it", name);
    }
    return 0;
}

/* The keys of a rule, in the order the messages list them. */
#define RECORD_KEYS "record, type, query, group_by, functions, value, limit, range, tenant"
#define ALERT_KEYS                                                                                 \
    "alert, type, query, group_by, range, step, kinds, min_change_pct, functions, for, "           \
    "labels, limit, tenant"

static int parse_rule_key(struct rule_ctx *x, const char *key, yaml_node_t *k, yaml_node_t *v,
                          struct sc_rule *r)
{
    int alert = r->kind == SC_RULE_ALERT;
    const char *s = sc_cfg_scalar(v);
    if (!strcmp(key, "record") || !strcmp(key, "alert"))
        return 0; /* read first */
    if (!strcmp(key, "type")) {
        const char *colon = s ? strchr(s, ':') : NULL;
        if (!colon || colon == s || !colon[1] || strchr(colon + 1, ':') || strlen(s) > 256)
            return rfail(x, v,
                         "bad 'type' '%.64s' (a profile type id, like cpu:cpu or "
                         "heap:inuse_space)",
                         s ? s : "");
        return dup_str(x, v, key, &r->type);
    }
    if (!strcmp(key, "query")) {
        struct sc_selector *sel = NULL;
        char why[SC_ERR_LEN] = "";
        if (!s)
            return rfail(x, v, "'query' must be a selector like '{service_name=\"api\"}'");
        int rc = sc_selector_parse(s, &sel, why);
        sc_selector_free(sel);
        if (rc == SC_ENOMEM)
            return oom(x->c);
        if (rc)
            return rfail(x, v, "bad 'query': %s", why);
        return dup_str(x, v, key, &r->query);
    }
    if (!strcmp(key, "group_by")) {
        if (!s || (*s && !sc_label_name_valid(s, strlen(s))))
            return rfail(x, v,
                         "bad 'group_by' '%.64s' (a label name, or '' for one group a "
                         "series)",
                         s ? s : "");
        return dup_str(x, v, key, &r->group_by);
    }
    if (!strcmp(key, "tenant")) {
        if (!s || strlen(s) > 127 || strpbrk(s, "\r\n"))
            return rfail(x, v, "bad 'tenant' (one line of at most 127 bytes, as X-Scope-OrgID)");
        return dup_str(x, v, key, &r->tenant);
    }
    if (!strcmp(key, "functions"))
        return parse_functions(x, v, r);
    if (!strcmp(key, "range"))
        return duration(x, v, key, NS, RANGE_MAX, &r->range_ns);
    if (!strcmp(key, "limit"))
        return count(x, v, key, LIMIT_MAX, &r->limit);
    if (!alert && !strcmp(key, "value")) {
        if (!s || (strcmp(s, "self") && strcmp(s, "total")))
            return rfail(x, v, "'value' must be self or total, not '%.64s'", s ? s : "");
        r->total = !strcmp(s, "total");
        return 0;
    }
    if (alert && !strcmp(key, "step"))
        return duration(x, v, key, NS, RANGE_MAX, &r->step_ns);
    if (alert && !strcmp(key, "kinds"))
        return parse_kinds(x, v, r);
    if (alert && !strcmp(key, "min_change_pct")) {
        char *end = NULL;
        double d = s && *s ? strtod(s, &end) : NAN;
        if (!s || !*s || *end || !(d >= 0) || d > 1e9)
            return rfail(x, v, "bad 'min_change_pct' '%.64s' (a percentage, 0 or more)",
                         s ? s : "");
        r->min_change_pct = d;
        return 0;
    }
    if (alert && !strcmp(key, "for"))
        return duration(x, v, key, 0, RANGE_MAX, &r->for_ns);
    if (alert && !strcmp(key, "labels"))
        return parse_alert_labels(x, v, r);
    return rfail(x, k, "unknown key '%.64s' in %s rule (%s)", key, alert ? "an alert" : "a record",
                 alert ? ALERT_KEYS : RECORD_KEYS);
}

static int parse_rule(struct rule_ctx *x, yaml_node_t *n, struct sc_rule *r)
{
    r->line = (unsigned)n->start_mark.line + 1;
    if (n->type != YAML_MAPPING_NODE)
        return rfail(x, n, "a rule must be a mapping with 'record: METRIC' or 'alert: NAME'");
    if (sc_cfg_unique_keys(x->c, n))
        return SC_EINVAL;
    yaml_node_t *k, *v;
    int kinds = 0;
    FOR_PAIRS(x->c, n, it, k, v)
    {
        const char *key = sc_cfg_scalar(k);
        if (!key || (strcmp(key, "record") && strcmp(key, "alert")))
            continue;
        kinds++;
        r->kind = !strcmp(key, "alert") ? SC_RULE_ALERT : SC_RULE_RECORD;
        const char *s = sc_cfg_scalar(v);
        if (r->kind == SC_RULE_RECORD && (!s || !metric_name_ok(s)))
            return rfail(x, v,
                         "bad 'record' '%.64s': a metric name ([a-zA-Z_:][a-zA-Z0-9_:]*, "
                         "at most %d bytes)",
                         s ? s : "", NAME_MAX_LEN);
        if (r->kind == SC_RULE_RECORD && reserved_name(s))
            return rfail(x, v, "'record' '%.64s' is in a namespace /metrics uses already", s);
        if (r->kind == SC_RULE_ALERT &&
            (!s || !*s || strlen(s) > NAME_MAX_LEN || strpbrk(s, "\r\n")))
            return rfail(x, v, "bad 'alert' '%.64s' (a name of one line, at most %d bytes)",
                         s ? s : "", NAME_MAX_LEN);
        free(r->name);
        if (!(r->name = strdup(s)))
            return oom(x->c);
    }
    if (kinds != 1)
        return rfail(x, n,
                     kinds ? "a rule has one of 'record' and 'alert', not both"
                           : "a rule needs 'record: METRIC' or 'alert: NAME'");
    x->r = r;
    r->range_ns = 0;
    r->kinds = SC_RULE_KINDS_ALL;
    FOR_PAIRS(x->c, n, it2, k, v)
    {
        const char *key = sc_cfg_scalar(k);
        if (!key)
            return rfail(x, k, "bad key");
        int rc = parse_rule_key(x, key, k, v, r);
        if (rc)
            return rc;
    }
    if (!r->type)
        return rfail(x, n, "'type' is missing (a profile type id, like cpu:cpu)");
    if (!r->query && !(r->query = strdup("{}")))
        return oom(x->c);
    if (!r->group_by && !(r->group_by = strdup("service_name")))
        return oom(x->c);
    if (!r->tenant && !(r->tenant = strdup("")))
        return oom(x->c);
    /* changes are tested per group of a label (query/watch.h), never per series */
    if (r->kind == SC_RULE_ALERT && !*r->group_by)
        return rfail(x, n,
                     "'group_by' must be a label: an alert rule's groups are a label's "
                     "values ('' is for record rules)");
    for (uint32_t i = 0; i < r->nlabels; i++)
        if (*r->group_by && !strcmp(r->label_names[i], r->group_by))
            return rfail(x, n, "'labels' may not set '%s': it is the rule's group_by", r->group_by);
    if (!r->limit)
        r->limit = r->kind == SC_RULE_RECORD ? 1000 : 100;
    if (r->kind == SC_RULE_RECORD && !r->top && !r->regex)
        r->top = 20;
    if (r->kind == SC_RULE_ALERT && !r->range_ns)
        r->range_ns = 3600 * NS;
    if (r->range_ns % NS)
        return rfail(x, n, "'range' must be whole seconds");
    if (r->step_ns && (r->step_ns % NS || r->step_ns > r->range_ns / 2))
        return rfail(x, n, "'step' must be whole seconds and at most half the 'range'");
    if (r->step_ns && r->range_ns / r->step_ns > 10000)
        return rfail(x, n, "'range' / 'step' is more than 10000 steps");
    return 0;
}

int sc_cfg_rules(struct sc_cfg *c, yaml_node_t *n, struct sc_config *cf)
{
    if (n->type != YAML_SEQUENCE_NODE)
        return sc_cfg_fail(c, n, "'rules' must be a list of {record: ...} or {alert: ...}%s", "");
    for (yaml_node_item_t *it = n->data.sequence.items.start; it < n->data.sequence.items.top;
         it++) {
        struct sc_rule *nr = realloc(cf->rules, (cf->nrules + 1) * sizeof *nr);
        if (!nr)
            return oom(c);
        cf->rules = nr;
        struct sc_rule *r = &nr[cf->nrules++];
        memset(r, 0, sizeof *r);
        struct rule_ctx x = {c, cf->nrules - 1, NULL};
        yaml_node_t *e = yaml_document_get_node(c->doc, *it);
        int rc = parse_rule(&x, e, r);
        if (rc)
            return rc;
        /* one series of scorch_rule_* per rule name and kind */
        for (uint32_t i = 0; i + 1 < cf->nrules; i++)
            if (cf->rules[i].kind == r->kind && !strcmp(cf->rules[i].name, r->name))
                return rfail(&x, e, "the name is taken by rules[%u] already", (unsigned)i);
    }
    return 0;
}

/* An http(s) URL, with no space or control character in it. */
static int url_list(struct sc_cfg *c, yaml_node_t *v, const char *key, char ***out, uint32_t *n)
{
    int rc = sc_cfg_strlist(c, v, key, out, n);
    for (uint32_t i = 0; !rc && i < *n; i++)
        if (sc_parse_url((*out)[i])) {
            char msg[SC_ERR_LEN];
            snprintf(msg, sizeof msg, "bad URL '%.200s' in 'alerting.%s' (http:// or https://)",
                     (*out)[i], key);
            return sc_cfg_fail(c, v, "%s", msg);
        }
    return rc;
}

int sc_cfg_alerting(struct sc_cfg *c, yaml_node_t *n, struct sc_config *cf)
{
    if (n->type != YAML_MAPPING_NODE)
        return sc_cfg_fail(c, n, "'alerting' must be a mapping%s", "");
    if (sc_cfg_unique_keys(c, n))
        return SC_EINVAL;
    yaml_node_t *k, *v;
    FOR_PAIRS(c, n, it, k, v)
    {
        const char *key = sc_cfg_scalar(k), *s = sc_cfg_scalar(v);
        int rc = 0;
        if (!key)
            return sc_cfg_fail(c, k, "bad key%s", "");
        if (!strcmp(key, "alertmanagers")) {
            rc = url_list(c, v, key, &cf->alertmanagers, &cf->nalertmanagers);
        } else if (!strcmp(key, "webhooks")) {
            rc = url_list(c, v, key, &cf->webhooks, &cf->nwebhooks);
        } else if (!strcmp(key, "evaluation_interval")) {
            struct sc_set_value d;
            if (sc_cfg_setting(c, v, SC_SET_ALERTING_EVALUATION_INTERVAL, &d))
                return SC_EINVAL;
            if (d.i % NS)
                return sc_cfg_fail(c, v,
                                   "'alerting.evaluation_interval' must be whole seconds, not "
                                   "'%.64s'",
                                   s);
            cf->evaluation_interval_ns = d.i;
        } else if (!strcmp(key, "timeout")) {
            struct sc_set_value d;
            if (sc_cfg_setting(c, v, SC_SET_ALERTING_TIMEOUT, &d))
                return SC_EINVAL;
            cf->alert_timeout_ns = d.i;
        } else if (!strcmp(key, "external_url")) {
            struct sc_set_value u;
            if (sc_cfg_setting(c, v, SC_SET_ALERTING_EXTERNAL_URL, &u))
                return SC_EINVAL;
            free(cf->external_url);
            if (!(cf->external_url = strdup(s)))
                return oom(c);
            /* links are made by appending "/?view=..." */
            size_t l = strlen(cf->external_url);
            while (l > 8 && cf->external_url[l - 1] == '/')
                cf->external_url[--l] = 0;
        } else {
            return sc_cfg_fail(c, k,
                               "unknown key 'alerting.%s' (alertmanagers, webhooks, "
                               "evaluation_interval, timeout, external_url)",
                               key);
        }
        if (rc)
            return rc;
    }
    return 0;
}

int sc_cfg_rules_check(struct sc_cfg *c, struct sc_config *cf)
{
    (void)c;
    if (!cf->evaluation_interval_ns)
        cf->evaluation_interval_ns = 60 * NS;
    if (!cf->alert_timeout_ns)
        cf->alert_timeout_ns = 10 * NS;
    /* a record rule's window is the evaluation interval unless said: the evaluations then
     * tile time, each profile counted in one */
    for (uint32_t i = 0; i < cf->nrules; i++)
        if (cf->rules[i].kind == SC_RULE_RECORD && !cf->rules[i].range_ns)
            cf->rules[i].range_ns = cf->evaluation_interval_ns;
    return 0;
}

static void free_strs(char **v, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++)
        free(v[i]);
    free(v);
}

void sc_cfg_rules_release(struct sc_config *cf)
{
    for (uint32_t i = 0; i < cf->nrules; i++) {
        struct sc_rule *r = &cf->rules[i];
        free(r->name);
        free(r->type);
        free(r->query);
        free(r->group_by);
        free(r->tenant);
        free(r->regex);
        free_strs(r->label_names, r->nlabels);
        free_strs(r->label_values, r->nlabels);
    }
    free(cf->rules);
    free_strs(cf->alertmanagers, cf->nalertmanagers);
    free_strs(cf->webhooks, cf->nwebhooks);
    free(cf->external_url);
}
