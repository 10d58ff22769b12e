/* rules_alert.c - alert rules: findings to alerts (pending, firing, resolved), their JSON
 * for Alertmanager and webhooks, and the diff view's link (rules.h says what they do). */
#include "server/rules_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/clock.h"
#include "model/error.h"
#include "model/json.h"
#include "model/timespec.h"
#include "query/plan.h"
#include "query/watch.h"

/* ---- states ---- */

static void alert_free(struct sc_alert *a)
{
    free(a->key);
    free(a->group);
    free(a->function);
}

void sc_alerts_release(struct sc_alerts *a)
{
    for (uint32_t i = 0; i < a->n; i++)
        alert_free(&a->v[i]);
    free(a->v);
    memset(a, 0, sizeof *a);
}

static char *alert_key(const char *group, const char *function, enum sc_change_kind k)
{
    size_t n = strlen(group) + strlen(function) + 16;
    char *key = malloc(n);
    if (key)
        snprintf(key, n, "%s\x1f%s\x1f%s", group, function, sc_change_kind_name(k));
    return key;
}

static struct sc_alert *find(struct sc_alerts *a, const char *key)
{
    for (uint32_t i = 0; i < a->n; i++)
        if (!strcmp(a->v[i].key, key))
            return &a->v[i];
    return NULL;
}

int sc_alerts_update(struct sc_alerts *a, const struct sc_alert_in *in, uint32_t n, int64_t t,
                     int64_t for_ns)
{
    /* the round before's resolved alerts have been said */
    uint32_t k = 0;
    for (uint32_t i = 0; i < a->n; i++) {
        if (a->v[i].state == SC_ALERT_RESOLVED)
            alert_free(&a->v[i]);
        else
            a->v[k++] = a->v[i];
    }
    a->n = k;
    for (uint32_t i = 0; i < a->n; i++)
        a->v[i].seen = a->v[i].fired = 0;
    int rc = 0;
    for (uint32_t i = 0; i < n && rc == 0; i++) {
        char *key = alert_key(in[i].group, in[i].function, in[i].c->kind);
        if (!key) {
            rc = SC_ENOMEM;
            break;
        }
        struct sc_alert *al = find(a, key);
        if (al) {
            free(key);
        } else if (sc_grow_array(&a->v, &a->cap, (uint64_t)a->n + 1, sizeof *a->v)) {
            free(key);
            rc = SC_ENOMEM;
            break;
        } else {
            al = &a->v[a->n];
            memset(al, 0, sizeof *al);
            al->key = key;
            al->group = strdup(in[i].group);
            al->function = strdup(in[i].function);
            if (!al->group || !al->function) {
                alert_free(al);
                rc = SC_ENOMEM;
                break;
            }
            al->since_ns = t;
            al->state = SC_ALERT_PENDING;
            a->n++;
        }
        if (al->seen)
            continue; /* the same finding twice in a round: the first (the larger) counts */
        al->seen = 1;
        al->c = *in[i].c;
        snprintf(al->unit, sizeof al->unit, "%s", in[i].unit ? in[i].unit : "");
    }
    /* even when out of memory: what was not seen is not held any longer */
    k = 0;
    for (uint32_t i = 0; i < a->n; i++) {
        struct sc_alert *al = &a->v[i];
        if (!al->seen && al->state == SC_ALERT_PENDING) {
            alert_free(al);
            continue;
        }
        if (!al->seen)
            al->state = SC_ALERT_RESOLVED;
        else if (al->state == SC_ALERT_PENDING && t - al->since_ns >= for_ns)
            al->state = SC_ALERT_FIRING, al->fired = 1;
        a->v[k++] = *al;
    }
    a->n = k;
    return rc;
}

/* ---- evaluation ---- */

/* Whether a finding is one the rule alerts on. */
static int wanted(const struct rule *r, const struct sc_change *c, const char *fn,
                  pcre2_match_data *md, pcre2_match_context *mctx)
{
    if (!(r->cfg.kinds & (1u << c->kind)))
        return 0;
    /* new and gone functions have no percentage to hold against the minimum */
    if (r->cfg.min_change_pct > 0 && isfinite(c->change_pct) &&
        fabs(c->change_pct) < r->cfg.min_change_pct && c->kind != SC_CHANGE_NEW &&
        c->kind != SC_CHANGE_GONE)
        return 0;
    return !r->re || sc_re_match(r->re, fn, strlen(fn), md, mctx, NULL) == 1;
}

int sc_rules_eval_alert(struct sc_rules *rs, struct rule *r, int64_t t, char *err)
{
    struct sc_selection s;
    int rc = sc_rules_window(rs, r, t, &s, err);
    struct sc_watch w;
    memset(&w, 0, sizeof w);
    struct sc_watch_args wa = {0};
    wa.group_by = r->cfg.group_by; /* never "" (config_rules.c) */
    wa.step_ns = r->cfg.step_ns;
    wa.max_funcs = r->cfg.top;
    if (rc == 0)
        rc = sc_plan_watch(rs->env.store, r->cfg.tenant, &s, &wa, &w, err);
    struct sc_alert_in *in = NULL;
    uint32_t n = 0, dropped = 0;
    pcre2_match_data *md = NULL;
    pcre2_match_context *mctx = NULL;
    if (rc == 0 && r->re) {
        md = pcre2_match_data_create_from_pattern(r->re, NULL);
        mctx = sc_re_context();
        if (!md || !mctx)
            rc = sc_errf(err, SC_ENOMEM, "out of memory");
    }
    if (rc == 0 && w.nchanges && !(in = calloc(w.nchanges, sizeof *in)))
        rc = sc_errf(err, SC_ENOMEM, "out of memory");
    /* the findings come largest first: the limit keeps the largest */
    for (uint32_t i = 0; rc == 0 && i < w.nchanges; i++) {
        const struct sc_change *c = &w.changes[i];
        if (c->group >= w.fs.ngroups || c->function >= w.fs.nfuncs)
            continue;
        const char *fn = w.fs.names[c->function];
        if (!wanted(r, c, fn, md, mctx))
            continue;
        if (n >= r->cfg.limit) {
            dropped++;
            continue;
        }
        in[n++] = (struct sc_alert_in){w.fs.keys[c->group], fn, c, w.fs.unit};
    }
    pcre2_match_data_free(md);
    pcre2_match_context_free(mctx);
    /* a failed evaluation changes no alert: a store away is not a recovery */
    if (rc == 0 && sc_alerts_update(&r->alerts, in, n, t, r->cfg.for_ns))
        rc = sc_errf(err, SC_ENOMEM, "out of memory");
    free(in);
    sc_watch_release(&w);
    sc_selection_release(&s);
    if (rc)
        return rc;
    uint32_t pending = 0, firing = 0;
    for (uint32_t i = 0; i < r->alerts.n; i++) {
        pending += r->alerts.v[i].state == SC_ALERT_PENDING;
        firing += r->alerts.v[i].state == SC_ALERT_FIRING;
    }
    pthread_mutex_lock(&rs->mu);
    r->pending = pending;
    r->firing = firing;
    r->dropped = dropped;
    pthread_mutex_unlock(&rs->mu);
    return 0;
}

/* ---- JSON ---- */

static void put_time(struct sc_json *j, const char *key, int64_t t)
{
    char tb[48];
    sc_json_kv_str(j, key, sc_time_format(t, tb, sizeof tb));
}

/* A value for people: CPU time per second as cores, the rest with its unit. */
static void put_value(struct sc_buf *b, double v, const char *unit)
{
    if (!isfinite(v))
        sc_buf_puts(b, "none");
    else if (!strcmp(unit, "nanoseconds/s"))
        sc_buf_printf(b, "%.3g cores", v / 1e9);
    else
        sc_buf_printf(b, "%.4g %s", v, unit);
}

/* The windows the diff compares: before the change against after it (a trend: the first
 * half of the range against the second). */
static void diff_windows(const struct sc_alert_ctx *x, const struct sc_alert *a, int64_t w[4])
{
    int64_t from = x->t_ns - x->rule->range_ns, until = x->t_ns;
    int64_t at = a->c.at_ns;
    if (a->c.kind == SC_CHANGE_TREND || at <= from || at >= until)
        at = from + (until - from) / 2;
    w[0] = from, w[1] = at, w[2] = at, w[3] = until;
}

void sc_alert_diff_url(const struct sc_alert_ctx *x, const struct sc_alert *a, struct sc_buf *out)
{
    /* the group's selection: the rule's query and the group's label, or the series */
    struct sc_buf q = SC_BUF_INIT;
    const char *gb = x->rule->group_by;
    if (!*gb) {
        sc_buf_puts(&q, a->group);
    } else {
        size_t l = strlen(x->query);
        int empty = l == 2; /* {} */
        sc_buf_append(&q, x->query, l ? l - 1 : 0);
        if (!empty)
            sc_buf_putc(&q, ',');
        sc_labels_put_name(&q, (struct sc_str){gb, (uint32_t)strlen(gb)});
        sc_buf_putc(&q, '=');
        sc_labels_put_quoted(&q, a->group, strlen(a->group));
        sc_buf_putc(&q, '}');
    }
    int64_t w[4];
    diff_windows(x, a, w);
    sc_buf_puts(out, x->external_url);
    sc_buf_puts(out, "/?view=diff&query=");
    sc_buf_put_url(out, q.data ? q.data : "", q.len);
    sc_buf_puts(out, "&type=");
    sc_buf_put_url(out, x->rule->type, strlen(x->rule->type));
    sc_buf_printf(out, "&from=%lld&until=%lld&base_from=%lld&base_until=%lld",
                  (long long)(w[2] / SC_NS_PER_S),
                  (long long)((w[3] + SC_NS_PER_S - 1) / SC_NS_PER_S),
                  (long long)(w[0] / SC_NS_PER_S), (long long)(w[1] / SC_NS_PER_S));
    sc_buf_puts(out, "&search=");
    sc_buf_put_url(out, a->function, strlen(a->function));
    sc_buf_release(&q);
}

/* summary and description: what changed, by how much, when. */
static void put_texts(const struct sc_alert_ctx *x, const struct sc_alert *a, struct sc_buf *sum,
                      struct sc_buf *desc)
{
    const struct sc_rule *r = x->rule;
    const char *gb = *r->group_by ? r->group_by : NULL;
    struct sc_buf where = SC_BUF_INIT;
    if (gb)
        sc_buf_printf(&where, "%s=%s", gb, a->group);
    else
        sc_buf_puts(&where, a->group);
    const char *wh = where.data ? where.data : "";
    const struct sc_change *c = &a->c;
    char at[48];
    sc_time_format(c->at_ns, at, sizeof at);
    switch (c->kind) {
    case SC_CHANGE_NEW:
        sc_buf_printf(sum, "%s is new in %s (%s)", a->function, wh, r->type);
        break;
    case SC_CHANGE_GONE:
        sc_buf_printf(sum, "%s is gone from %s (%s)", a->function, wh, r->type);
        break;
    case SC_CHANGE_TREND:
        sc_buf_printf(sum, "%s trends %s %+.0f%% in %s (%s)", a->function,
                      c->change_pct >= 0 ? "up" : "down", c->change_pct, wh, r->type);
        break;
    default:
        sc_buf_printf(sum, "%s %s %+.0f%% in %s (%s)", a->function,
                      c->change_pct >= 0 ? "grew" : "shrank", c->change_pct, wh, r->type);
    }
    sc_buf_printf(desc, "%s of %s in %s ", a->function, r->type, wh);
    if (c->kind == SC_CHANGE_TREND) {
        sc_buf_puts(desc, "went from ");
        put_value(desc, c->before, a->unit);
        sc_buf_puts(desc, " to ");
        put_value(desc, c->after, a->unit);
        sc_buf_puts(desc, " over the last ");
        sc_buf_printf(desc, "%g h", (double)r->range_ns / 3600e9);
        if (isfinite(c->slope_per_hour)) {
            sc_buf_puts(desc, " (");
            put_value(desc, c->slope_per_hour, a->unit);
            sc_buf_puts(desc, " an hour)");
        }
    } else {
        sc_buf_puts(desc, "went from ");
        put_value(desc, c->before, a->unit);
        sc_buf_puts(desc, " to ");
        put_value(desc, c->after, a->unit);
        sc_buf_printf(desc, " at %s", at);
    }
    if (isfinite(c->change_pct))
        sc_buf_printf(desc, ": %+.1f%%", c->change_pct);
    if (c->kind == SC_CHANGE_STEP && isfinite(c->lo) && isfinite(c->hi))
        sc_buf_printf(desc, " (95%% interval %+.1f%% to %+.1f%%)", c->lo, c->hi);
    if (isfinite(c->q))
        sc_buf_printf(desc, ", q = %.2g", c->q);
    sc_buf_release(&where);
}

static void put_alert(const struct sc_alert_ctx *x, const struct sc_alert *a, int status,
                      struct sc_json *j)
{
    const struct sc_rule *r = x->rule;
    int resolved = a->state == SC_ALERT_RESOLVED;
    sc_json_obj_begin(j);
    if (status)
        sc_json_kv_str(j, "status", resolved ? "resolved" : "firing");
    /* labels: the rule's name, the group's, function, kind, then the configured ones */
    sc_json_key(j, "labels");
    sc_json_obj_begin(j);
    sc_json_kv_str(j, "alertname", r->name);
    struct sc_labels gl;
    sc_labels_init(&gl);
    char err[SC_ERR_LEN];
    if (sc_rules_group_labels(r->group_by, a->group, &gl, err) == 0)
        for (uint32_t i = 0; i < gl.n; i++) {
            sc_json_keyn(j, gl.v[i].name.ptr, gl.v[i].name.len);
            sc_json_strn(j, gl.v[i].value.ptr, gl.v[i].value.len);
        }
    sc_labels_release(&gl);
    sc_json_kv_str(j, "function", a->function);
    sc_json_kv_str(j, "kind", sc_change_kind_name(a->c.kind));
    for (uint32_t i = 0; i < r->nlabels; i++)
        sc_json_kv_str(j, r->label_names[i], r->label_values[i]);
    sc_json_obj_end(j);
    struct sc_buf sum = SC_BUF_INIT, desc = SC_BUF_INIT, url = SC_BUF_INIT;
    put_texts(x, a, &sum, &desc);
    sc_alert_diff_url(x, a, &url);
    sc_json_key(j, "annotations");
    sc_json_obj_begin(j);
    sc_json_kv_str(j, "summary", sum.data ? sum.data : "");
    sc_json_kv_str(j, "description", desc.data ? desc.data : "");
    sc_json_kv_str(j, "diff_url", url.data ? url.data : "");
    /* the numbers themselves, for receivers that compute; Alertmanager's annotations are
     * strings */
    char num[64];
    sc_json_kv_str(j, "unit", a->unit);
    static const char *const nums[] = {"before", "after", "change_pct"};
    const double vals[] = {a->c.before, a->c.after, a->c.change_pct};
    for (int i = 0; i < 3; i++) {
        if (!isfinite(vals[i]))
            continue;
        snprintf(num, sizeof num, "%.6g", vals[i]);
        sc_json_kv_str(j, nums[i], num);
    }
    if (a->c.at_ns)
        put_time(j, "changed_at", a->c.at_ns);
    sc_json_obj_end(j);
    put_time(j, "startsAt", a->since_ns);
    put_time(j, "endsAt", resolved ? x->t_ns : x->ends_ns);
    sc_json_kv_str(j, "generatorURL", url.data ? url.data : "");
    sc_json_obj_end(j);
    sc_buf_release(&sum);
    sc_buf_release(&desc);
    sc_buf_release(&url);
}

void sc_alert_json(const struct sc_alert_ctx *x, const struct sc_alert *a, int status,
                   struct sc_buf *out)
{
    struct sc_json j;
    sc_json_init(&j, out);
    put_alert(x, a, status, &j);
}

/* ---- the round's notifications ---- */

static void queue_all(struct sc_rules *rs, int to, char **urls, uint32_t n, struct sc_buf *b)
{
    if (b->oom) {
        sc_rules_log("a notification did not fit in memory: not sent");
        return;
    }
    for (uint32_t i = 0; i < n; i++) {
        char *copy = malloc(b->len + 1);
        if (!copy) {
            atomic_fetch_add(&rs->dropped, 1);
            continue;
        }
        memcpy(copy, b->data, b->len);
        copy[b->len] = 0;
        sc_rules_notify(rs, to, urls[i], copy, b->len);
    }
}

void sc_rules_send_alerts(struct sc_rules *rs, int64_t t)
{
    /* endsAt: four intervals ahead, at least a minute, so a late round does not resolve */
    int64_t ahead = 4 * (rs->interval_ns > 15 * SC_NS_PER_S ? rs->interval_ns : 15 * SC_NS_PER_S);
    struct sc_buf am = SC_BUF_INIT, fired = SC_BUF_INIT, resolved = SC_BUF_INIT;
    struct sc_json jam, jfired, jres;
    sc_json_init(&jam, &am);
    sc_json_init(&jfired, &fired);
    sc_json_init(&jres, &resolved);
    uint32_t nam = 0, nfired = 0, nres = 0;
    for (uint32_t i = 0; i < rs->n; i++) {
        struct rule *r = &rs->rules[i];
        if (r->cfg.kind != SC_RULE_ALERT)
            continue;
        struct sc_alert_ctx x = {&r->cfg, rs->external_url, r->query, t, t + ahead};
        for (uint32_t k = 0; k < r->alerts.n; k++) {
            const struct sc_alert *a = &r->alerts.v[k];
            if (a->state == SC_ALERT_PENDING)
                continue;
            /* Alertmanager: every firing alert each round, a resolved one once */
            if (!nam++)
                sc_json_arr_begin(&jam);
            put_alert(&x, a, 0, &jam);
            /* webhooks: changes of state only */
            if (a->state == SC_ALERT_RESOLVED) {
                if (!nres++)
                    sc_json_arr_begin(&jres);
                put_alert(&x, a, 1, &jres);
            } else if (a->fired) {
                if (!nfired++)
                    sc_json_arr_begin(&jfired);
                put_alert(&x, a, 1, &jfired);
            }
        }
    }
    if (nam) {
        sc_json_arr_end(&jam);
        queue_all(rs, SC_TO_ALERTMANAGER, rs->alertmanagers, rs->nalertmanagers, &am);
    }
    struct sc_json *lists[2] = {&jfired, &jres};
    uint32_t counts[2] = {nfired, nres};
    for (int d = 0; d < 2; d++) {
        if (!counts[d])
            continue;
        sc_json_arr_end(lists[d]);
        struct sc_buf doc = SC_BUF_INIT;
        struct sc_json j;
        sc_json_init(&j, &doc);
        sc_json_obj_begin(&j);
        sc_json_kv_str(&j, "version", "4");
        sc_json_kv_str(&j, "status", d ? "resolved" : "firing");
        sc_json_kv_str(&j, "receiver", "scorch");
        sc_json_kv_str(&j, "externalURL", rs->external_url);
        sc_json_key(&j, "alerts");
        sc_json_raw(&j, lists[d]->b->data, lists[d]->b->len);
        sc_json_obj_end(&j);
        /* a list that ran out of memory is not whole: queue_all sees it through doc */
        doc.oom |= lists[d]->b->oom;
        queue_all(rs, SC_TO_WEBHOOK, rs->webhooks, rs->nwebhooks, &doc);
        sc_buf_release(&doc);
    }
    sc_buf_release(&am);
    sc_buf_release(&fired);
    sc_buf_release(&resolved);
    /* said once: a round that fails next must not say them again */
    for (uint32_t i = 0; i < rs->n; i++) {
        struct sc_alerts *as = &rs->rules[i].alerts;
        uint32_t k = 0;
        for (uint32_t j = 0; j < as->n; j++) {
            as->v[j].fired = 0;
            if (as->v[j].state == SC_ALERT_RESOLVED)
                alert_free(&as->v[j]);
            else
                as->v[k++] = as->v[j];
        }
        as->n = k;
    }
}
