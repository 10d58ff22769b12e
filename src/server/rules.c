/* rules.c - the rules' schedule, record rules and the rules' metrics (rules.h says what
 * they do). */
#include "server/rules_int.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "collect/scrape.h"
#include "model/prom.h"
#include "model/budget.h"
#include "model/clock.h"
#include "model/dl.h"
#include "model/error.h"
#include "model/timespec.h"
#include "query/fnseries.h"
#include "query/plan.h"
#include "query/selector.h"

void sc_rules_log(const char *fmt, ...)
{
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    fprintf(stderr, "scorch: rules: %s\n", line);
    fflush(stderr);
}

/* ---- setup ---- */

static char *dup_or_null(const char *s, int *failed)
{
    if (!s)
        return NULL;
    char *d = strdup(s);
    if (!d)
        *failed = 1;
    return d;
}

static char **dup_strs(char *const *v, uint32_t n, int *failed)
{
    if (!n)
        return NULL;
    char **d = calloc(n, sizeof *d);
    if (!d) {
        *failed = 1;
        return NULL;
    }
    for (uint32_t i = 0; i < n; i++)
        d[i] = dup_or_null(v[i], failed);
    return d;
}

static void free_strs(char **v, uint32_t n)
{
    for (uint32_t i = 0; v && i < n; i++)
        free(v[i]);
    free(v);
}

/* A deep copy of a rule's config. 0 or SC_ENOMEM (d is then still freeable). */
static int copy_rule(struct sc_rule *d, const struct sc_rule *s)
{
    int failed = 0;
    *d = *s;
    d->name = dup_or_null(s->name, &failed);
    d->type = dup_or_null(s->type, &failed);
    d->query = dup_or_null(s->query, &failed);
    d->group_by = dup_or_null(s->group_by, &failed);
    d->tenant = dup_or_null(s->tenant, &failed);
    d->regex = dup_or_null(s->regex, &failed);
    d->label_names = dup_strs(s->label_names, s->nlabels, &failed);
    d->label_values = dup_strs(s->label_values, s->nlabels, &failed);
    if (s->nlabels && (!d->label_names || !d->label_values))
        d->nlabels = 0;
    return failed ? SC_ENOMEM : 0;
}

static void free_rule(struct rule *r)
{
    free(r->cfg.name);
    free(r->cfg.type);
    free(r->cfg.query);
    free(r->cfg.group_by);
    free(r->cfg.tenant);
    free(r->cfg.regex);
    free_strs(r->cfg.label_names, r->cfg.nlabels);
    free_strs(r->cfg.label_values, r->cfg.nlabels);
    pcre2_code_free(r->re);
    free(r->query);
    free(r->text);
    sc_alerts_release(&r->alerts);
}

/* What a rule needs besides its config: the regex compiled, the query in canonical form. */
static int compile_rule(struct rule *r, char *err)
{
    if (r->cfg.regex) {
        int ecode;
        size_t eoff;
        r->re = sc_re_compile(r->cfg.regex, strlen(r->cfg.regex), SC_RE_LABEL, &ecode, &eoff);
        if (!r->re)
            return sc_errf(err, SC_EINVAL, "rule '%s': bad functions regex", r->cfg.name);
    }
    struct sc_selector *sel = NULL;
    int rc = sc_selector_parse(r->cfg.query, &sel, err);
    if (rc)
        return rc;
    struct sc_buf b = SC_BUF_INIT;
    sc_selector_format(sel, &b);
    sc_selector_free(sel);
    size_t len;
    r->query = b.oom ? NULL : sc_buf_detach(&b, &len);
    sc_buf_release(&b);
    return r->query ? 0 : sc_errf(err, SC_ENOMEM, "out of memory");
}

/* An Alertmanager's alerts endpoint: the base URL the config names, or the endpoint
 * itself. */
static char *alerts_url(const char *base)
{
    static const char path[] = "/api/v2/alerts";
    size_t l = strlen(base);
    while (l > 8 && base[l - 1] == '/')
        l--;
    size_t pl = sizeof path - 1;
    int has = l >= pl && !memcmp(base + l - pl, path, pl);
    char *u = malloc(l + pl + 1);
    if (u)
        snprintf(u, l + pl + 1, "%.*s%s", (int)l, base, has ? "" : path);
    return u;
}

int sc_rules_new(const struct sc_config *cf, const struct sc_rules_env *env, struct sc_rules **out,
                 char *err)
{
    *out = NULL;
    struct sc_rules *rs = calloc(1, sizeof *rs);
    if (!rs)
        return sc_errf(err, SC_ENOMEM, "out of memory");
    rs->env = *env;
    rs->stop_pipe[0] = rs->stop_pipe[1] = -1;
    pthread_mutex_init(&rs->mu, NULL);
    sc_cond_init(&rs->cv);
    pthread_mutex_init(&rs->qmu, NULL);
    sc_cond_init(&rs->qcv);
    *out = rs;
    rs->interval_ns =
        cf->evaluation_interval_ns > 0 ? cf->evaluation_interval_ns : 60 * SC_NS_PER_S;
    rs->timeout_ns = cf->alert_timeout_ns > 0 ? cf->alert_timeout_ns : 10 * SC_NS_PER_S;
    int failed = 0;
    const char *ext = cf->external_url ? cf->external_url : env->external_url;
    rs->external_url = dup_or_null(ext ? ext : "http://127.0.0.1:4040", &failed);
    rs->webhooks = dup_strs(cf->webhooks, cf->nwebhooks, &failed);
    rs->nwebhooks = rs->webhooks ? cf->nwebhooks : 0;
    if (cf->nalertmanagers && (rs->alertmanagers = calloc(cf->nalertmanagers, sizeof(char *)))) {
        rs->nalertmanagers = cf->nalertmanagers;
        for (uint32_t i = 0; i < cf->nalertmanagers; i++)
            if (!(rs->alertmanagers[i] = alerts_url(cf->alertmanagers[i])))
                failed = 1;
    } else if (cf->nalertmanagers) {
        failed = 1;
    }
    uint32_t nrecv = rs->nalertmanagers + rs->nwebhooks;
    rs->failing_since = calloc(nrecv + 1, sizeof *rs->failing_since);
    rs->failing_logged = calloc(nrecv + 1, sizeof *rs->failing_logged);
    if (failed || !rs->failing_since || !rs->failing_logged)
        return sc_errf(err, SC_ENOMEM, "out of memory");
    if (cf->nrules && !(rs->rules = calloc(cf->nrules, sizeof *rs->rules)))
        return sc_errf(err, SC_ENOMEM, "out of memory");
    for (uint32_t i = 0; i < cf->nrules; i++) {
        struct rule *r = &rs->rules[rs->n++];
        if (copy_rule(&r->cfg, &cf->rules[i]))
            return sc_errf(err, SC_ENOMEM, "out of memory");
        int rc = compile_rule(r, err);
        if (rc)
            return rc;
    }
    if (pipe2(rs->stop_pipe, O_CLOEXEC))
        return sc_errf(err, SC_EIO, "cannot make a pipe: %s", strerror(errno));
    return 0;
}

/* ---- record rules ---- */

/* One series of a record rule's evaluation. */
struct series {
    uint32_t group, func;
    double v;
};

static int by_value_desc(const void *a, const void *b)
{
    const struct series *x = a, *y = b;
    if (x->v != y->v)
        return x->v > y->v ? -1 : 1;
    if (x->group != y->group)
        return x->group < y->group ? -1 : 1;
    return x->func < y->func ? -1 : x->func > y->func;
}

/* A name as Prometheus takes it: [a-zA-Z_][a-zA-Z0-9_]*, other characters as '_'. */
static void prom_name(const char *s, size_t n, char *out, size_t cap)
{
    size_t k = 0;
    if (n && s[0] >= '0' && s[0] <= '9' && k + 1 < cap)
        out[k++] = '_';
    for (size_t i = 0; i < n && k + 1 < cap; i++) {
        char c = s[i];
        int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
        out[k++] = ok ? c : '_';
    }
    out[k] = 0;
}

int sc_rules_group_labels(const char *group_by, const char *key, struct sc_labels *out, char *err)
{
    struct sc_labels src;
    sc_labels_init(&src);
    int rc = 0;
    if (group_by && *group_by)
        rc = sc_labels_set(&src, group_by, strlen(group_by), key, strlen(key));
    else
        rc = sc_labels_parse(key, &src, err);
    for (uint32_t i = 0; rc == 0 && i < src.n; i++) {
        char name[SC_LABEL_NAME_MAX + 16] = "exported_";
        prom_name(src.v[i].name.ptr, src.v[i].name.len, name + 9, sizeof name - 9);
        int taken = !strcmp(name + 9, "function") || !strcmp(name + 9, "alertname") ||
                    !strcmp(name + 9, "kind");
        const char *nm = taken ? name : name + 9;
        rc = sc_labels_set(out, nm, strlen(nm), src.v[i].value.ptr, src.v[i].value.len);
    }
    sc_labels_release(&src);
    if (rc && err && !*err)
        sc_errf(err, rc, "%s", sc_strerror(rc));
    return rc;
}

static void put_duration(struct sc_buf *b, int64_t ns)
{
    int64_t s = ns / SC_NS_PER_S;
    if (s % 86400 == 0)
        sc_buf_printf(b, "%lldd", (long long)(s / 86400));
    else if (s % 3600 == 0)
        sc_buf_printf(b, "%lldh", (long long)(s / 3600));
    else if (s % 60 == 0)
        sc_buf_printf(b, "%lldm", (long long)(s / 60));
    else
        sc_buf_printf(b, "%llds", (long long)s);
}

/* The rule's text: HELP, TYPE and the kept series, heaviest first. */
static int record_text(const struct rule *r, const struct sc_fnseries *fs, struct series *v,
                       uint32_t n, struct sc_buf *out, char *err)
{
    const char *name = r->cfg.name;
    struct sc_buf help = SC_BUF_INIT;
    sc_buf_printf(&help, "scorch recording rule: the %s value of ",
                  r->cfg.total ? "total" : "self");
    if (r->cfg.regex)
        sc_buf_printf(&help, "the functions matching '%s'", r->cfg.regex);
    else
        sc_buf_printf(&help, "the top %u functions", (unsigned)r->cfg.top);
    sc_buf_printf(&help, " of %s %s", r->cfg.type, r->query);
    if (*r->cfg.group_by)
        sc_buf_printf(&help, " by %s", r->cfg.group_by);
    sc_buf_puts(&help, " over ");
    put_duration(&help, r->cfg.range_ns);
    sc_buf_printf(&help, ", in %s", fs->unit[0] ? fs->unit : "the type's unit");
    sc_prom_family(out, name, SC_PROM_GAUGE, help.data ? help.data : "");
    sc_buf_release(&help);
    int rc = 0;
    for (uint32_t i = 0; rc == 0 && i < n; i++) {
        struct sc_labels l;
        sc_labels_init(&l);
        rc = sc_rules_group_labels(r->cfg.group_by, fs->keys[v[i].group], &l, err);
        int nl;
        sc_prom_begin(out, name, &nl);
        for (uint32_t k = 0; rc == 0 && k < l.n; k++)
            sc_prom_label(out, &nl, l.v[k].name.ptr, l.v[k].name.len, l.v[k].value.ptr,
                          l.v[k].value.len);
        const char *fn = fs->names[v[i].func];
        sc_prom_label(out, &nl, "function", 8, fn, strlen(fn));
        /* %.17g: the double itself, so a reader gets the value the timeline says */
        sc_prom_value(out, nl, "%.17g", v[i].v);
        sc_labels_release(&l);
    }
    if (rc == 0 && out->oom)
        rc = sc_errf(err, SC_ENOMEM, "out of memory");
    return rc;
}

int sc_rules_window(struct sc_rules *rs, const struct rule *r, int64_t t, struct sc_selection *s,
                    char *err)
{
    struct sc_plan_args a = {r->cfg.query, NULL, NULL, NULL};
    int rc = sc_selection_parse(s, &a, r->cfg.type, t, err);
    s->from = t - r->cfg.range_ns;
    s->until = t;
    if (rc == 0)
        rc = sc_selection_find(s, rs->env.store, r->cfg.tenant, err);
    return rc;
}

static int eval_record(struct sc_rules *rs, struct rule *r, int64_t t, char *err)
{
    struct sc_selection s;
    int rc = sc_rules_window(rs, r, t, &s, err);
    struct sc_fnseries fs;
    memset(&fs, 0, sizeof fs);
    /* a regex picks among the `limit` heaviest functions (each group's own: fnseries.h) */
    uint32_t maxf = r->re ? r->cfg.limit : r->cfg.top;
    if (rc == 0)
        rc = sc_plan_fnseries(rs->env.store, r->cfg.tenant, &s, r->cfg.range_ns,
                              *r->cfg.group_by ? r->cfg.group_by : NULL, NULL, maxf, !r->cfg.total,
                              &fs, err);
    struct series *v = NULL;
    uint32_t n = 0;
    if (rc == 0 && fs.nsteps && fs.ngroups && fs.nfuncs) {
        v = malloc((size_t)fs.group_first[fs.ngroups] * sizeof *v);
        if (!v)
            rc = sc_errf(err, SC_ENOMEM, "out of memory");
    }
    pcre2_match_data *md =
        r->re && rc == 0 ? pcre2_match_data_create_from_pattern(r->re, NULL) : NULL;
    pcre2_match_context *mctx = md ? sc_re_context() : NULL;
    if (r->re && rc == 0 && (!md || !mctx))
        rc = sc_errf(err, SC_ENOMEM, "out of memory");
    uint8_t *keep = rc == 0 && fs.nfuncs ? calloc(fs.nfuncs, 1) : NULL;
    if (rc == 0 && fs.nfuncs && !keep)
        rc = sc_errf(err, SC_ENOMEM, "out of memory");
    for (uint32_t f = 0; rc == 0 && f < fs.nfuncs; f++)
        keep[f] =
            !r->re || sc_re_match(r->re, fs.names[f], strlen(fs.names[f]), md, mctx, NULL) == 1;
    /* the window is one step (whole seconds from a whole second: rules.h); its last step
     * is the window's whatever the store did */
    uint32_t k = fs.nsteps ? fs.nsteps - 1 : 0;
    for (uint32_t g = 0; rc == 0 && v && g < fs.ngroups; g++)
        for (uint32_t l = fs.group_first[g]; l < fs.group_first[g + 1]; l++) {
            uint32_t f = fs.group_func[l];
            size_t c = (size_t)l * fs.nsteps + k;
            double x = r->cfg.total ? fs.cum[c] : fs.self[c];
            if (keep[f] && isfinite(x) && x != 0)
                v[n++] = (struct series){g, f, x};
        }
    pcre2_match_data_free(md);
    pcre2_match_context_free(mctx);
    free(keep);
    uint32_t kept = n < r->cfg.limit ? n : r->cfg.limit;
    struct sc_buf text = SC_BUF_INIT;
    if (rc == 0) {
        if (n)
            qsort(v, n, sizeof *v, by_value_desc);
        rc = record_text(r, &fs, v, kept, &text, err);
    }
    if (rc == 0 && (n > kept) != r->limited) {
        r->limited = n > kept;
        if (r->limited)
            sc_rules_log("record '%s': %u series, over its limit of %u: the %u lightest are "
                         "left out (scorch_rule_series_dropped)",
                         r->cfg.name, n, (unsigned)r->cfg.limit, n - kept);
        else
            sc_rules_log("record '%s': %u series, within its limit of %u again", r->cfg.name, n,
                         (unsigned)r->cfg.limit);
    }
    free(v);
    sc_fnseries_release(&fs);
    sc_selection_release(&s);
    if (rc) {
        sc_buf_release(&text);
        return rc;
    }
    size_t len;
    char *t_text = sc_buf_detach(&text, &len);
    pthread_mutex_lock(&rs->mu);
    free(r->text);
    r->text = t_text;
    r->series = kept;
    r->dropped = n - kept;
    pthread_mutex_unlock(&rs->mu);
    return 0;
}

/* ---- the schedule ---- */

/* One rule as a heavy query of the server: a slot, the memory and time budget, the stop
 * pipe as its client. */
static int eval_rule(struct sc_rules *rs, struct rule *r, int64_t t, char *err)
{
    if (rs->env.admit && rs->env.admit(rs->env.ctx))
        return sc_errf(err, SC_EUNAVAIL,
                       "no heavy-query slot came free (server.max_queries are busy)");
    struct sc_budget b;
    sc_budget_begin(&b, rs->env.query_memory);
    sc_budget_limit(&b, rs->env.query_timeout_ns, rs->stop_pipe[0]);
    int rc = r->cfg.kind == SC_RULE_RECORD ? eval_record(rs, r, t, err)
                                           : sc_rules_eval_alert(rs, r, t, err);
    sc_budget_end();
    if (rs->env.unadmit)
        rs->env.unadmit(rs->env.ctx);
    if (rc && atomic_load(&b.over))
        sc_errf(err, SC_ELIMIT, "it needs more than %llu MiB (server.query_memory)",
                (unsigned long long)(rs->env.query_memory >> 20));
    else if (rc && atomic_load(&b.stopped) == SC_BUDGET_TIME)
        sc_errf(err, SC_ELIMIT, "it ran longer than %g s (server.query_timeout)",
                (double)rs->env.query_timeout_ns / 1e9);
    return rc;
}

static int stopping(struct sc_rules *rs)
{
    pthread_mutex_lock(&rs->mu);
    int s = rs->stop;
    pthread_mutex_unlock(&rs->mu);
    return s;
}

void sc_rules_eval(struct sc_rules *rs, int64_t t)
{
    for (uint32_t i = 0; i < rs->n && !stopping(rs); i++) {
        struct rule *r = &rs->rules[i];
        char err[SC_ERR_LEN] = "";
        double t0 = sc_mono_s();
        int rc = eval_rule(rs, r, t, err);
        double secs = sc_mono_s() - t0;
        int kind = r->cfg.kind == SC_RULE_ALERT;
        pthread_mutex_lock(&rs->mu);
        rs->evals[kind]++;
        rs->seconds[kind] += secs;
        if (rc)
            rs->failures[kind]++;
        r->last_t = t;
        r->last_secs = secs;
        r->last_ok = rc == 0;
        int stop = rs->stop;
        pthread_mutex_unlock(&rs->mu);
        /* a stop cuts the query short: that is no failure worth a line; the same failure
         * round after round is said once, and so is the recovery */
        const char *what = *err ? err : sc_strerror(rc);
        if (rc && !stop && strcmp(r->last_err, what)) {
            sc_rules_log("%s '%s': evaluation failed: %s", kind ? "alert" : "record", r->cfg.name,
                         what);
            snprintf(r->last_err, sizeof r->last_err, "%s", what);
        } else if (!rc && r->last_err[0]) {
            sc_rules_log("%s '%s': evaluated again", kind ? "alert" : "record", r->cfg.name);
            r->last_err[0] = 0;
        }
    }
    if (!stopping(rs))
        sc_rules_send_alerts(rs, t);
}

/* Evaluates at every multiple of the interval until stopped. The waits are on the
 * monotonic clock in slices of at most a second, each aiming at the wall clock's next
 * multiple, so a step of the wall clock moves the schedule with it. */
static void *run(void *arg)
{
    struct sc_rules *rs = arg;
    int64_t iv = rs->interval_ns;
    int64_t next = (sc_wall_ns() / iv + 1) * iv;
    pthread_mutex_lock(&rs->mu);
    while (!rs->stop) {
        int64_t now = sc_wall_ns();
        if (now < next) {
            int64_t w = next - now < SC_NS_PER_S ? next - now : SC_NS_PER_S;
            struct timespec ts;
            sc_deadline(&ts, w);
            pthread_cond_timedwait(&rs->cv, &rs->mu, &ts);
            continue;
        }
        pthread_mutex_unlock(&rs->mu);
        sc_rules_eval(rs, next);
        pthread_mutex_lock(&rs->mu);
        int64_t after = sc_wall_ns();
        int64_t n2 = (after / iv + 1) * iv;
        if (n2 > next + iv)
            rs->skipped += (uint64_t)((n2 - next) / iv - 1);
        next = n2 > next ? n2 : next + iv;
    }
    pthread_mutex_unlock(&rs->mu);
    return NULL;
}

int sc_rules_start(struct sc_rules *rs, char *err)
{
    int rc = sc_dl_load(SC_DL_CURL, err);
    if (rc)
        return rc;
    if (pthread_create(&rs->nthread, NULL, sc_rules_notify_run, rs))
        return sc_errf(err, SC_EINTERNAL, "cannot start the notification thread");
    rs->nstarted = 1;
    if (pthread_create(&rs->thread, NULL, run, rs))
        return sc_errf(err, SC_EINTERNAL, "cannot start the rules thread");
    rs->started = 1;
    uint32_t nrec = 0;
    for (uint32_t i = 0; i < rs->n; i++)
        nrec += rs->rules[i].cfg.kind == SC_RULE_RECORD;
    char iv[32];
    struct sc_buf b = SC_BUF_INIT;
    put_duration(&b, rs->interval_ns);
    snprintf(iv, sizeof iv, "%s", b.data ? b.data : "?");
    sc_buf_release(&b);
    sc_rules_log("%u record and %u alert rules, evaluated every %s", nrec, rs->n - nrec, iv);
    if (rs->n > nrec && !rs->nalertmanagers && !rs->nwebhooks)
        sc_rules_log("alert rules without alerting.alertmanagers or webhooks: their alerts "
                     "show in /metrics only");
    return 0;
}

void sc_rules_stop_free(struct sc_rules *rs)
{
    if (!rs)
        return;
    pthread_mutex_lock(&rs->mu);
    rs->stop = 1;
    pthread_cond_broadcast(&rs->cv);
    pthread_mutex_unlock(&rs->mu);
    /* an evaluation's budget sees its "client" hang up */
    if (rs->stop_pipe[1] >= 0)
        close(rs->stop_pipe[1]);
    rs->stop_pipe[1] = -1;
    if (rs->started)
        pthread_join(rs->thread, NULL);
    pthread_mutex_lock(&rs->qmu);
    rs->qstop = 1;
    pthread_cond_broadcast(&rs->qcv);
    pthread_mutex_unlock(&rs->qmu);
    atomic_store(&rs->abort_io, 1);
    if (rs->nstarted)
        pthread_join(rs->nthread, NULL);
    sc_rules_notify_clear(rs);
    if (rs->stop_pipe[0] >= 0)
        close(rs->stop_pipe[0]);
    for (uint32_t i = 0; i < rs->n; i++)
        free_rule(&rs->rules[i]);
    free(rs->rules);
    free(rs->external_url);
    free_strs(rs->alertmanagers, rs->nalertmanagers);
    free_strs(rs->webhooks, rs->nwebhooks);
    free(rs->failing_since);
    free(rs->failing_logged);
    pthread_mutex_destroy(&rs->mu);
    pthread_cond_destroy(&rs->cv);
    pthread_mutex_destroy(&rs->qmu);
    pthread_cond_destroy(&rs->qcv);
    free(rs);
}

/* ---- /metrics ---- */

/* A rule's own samples' labels, rule and kind, in l (5 entries). */
static const char *const *rule_labels(const struct rule *r, const char *l[5])
{
    l[0] = "rule";
    l[1] = r->cfg.name;
    l[2] = "kind";
    l[3] = r->cfg.kind == SC_RULE_RECORD ? "record" : "alert";
    l[4] = NULL;
    return l;
}

void sc_rules_metrics(struct sc_rules *rs, struct sc_buf *out)
{
    static const char *const kinds[2] = {"record", "alert"};
    const char *l[5];
    pthread_mutex_lock(&rs->mu);
    for (uint32_t i = 0; i < rs->n; i++)
        if (rs->rules[i].text)
            sc_buf_puts(out, rs->rules[i].text);
    sc_prom_family(out, "scorch_rule_evaluations_total", SC_PROM_COUNTER,
                   "Evaluations of rules, by kind.");
    for (int k = 0; k < 2; k++)
        sc_prom_sample(out, "scorch_rule_evaluations_total",
                       (const char *[]){"kind", kinds[k], NULL}, "%llu",
                       (unsigned long long)rs->evals[k]);
    sc_prom_family(out, "scorch_rule_evaluation_failures_total", SC_PROM_COUNTER,
                   "Evaluations that failed (the log says why), by kind.");
    for (int k = 0; k < 2; k++)
        sc_prom_sample(out, "scorch_rule_evaluation_failures_total",
                       (const char *[]){"kind", kinds[k], NULL}, "%llu",
                       (unsigned long long)rs->failures[k]);
    sc_prom_family(out, "scorch_rule_evaluation_seconds_total", SC_PROM_COUNTER,
                   "Time spent evaluating rules, by kind.");
    for (int k = 0; k < 2; k++)
        sc_prom_sample(out, "scorch_rule_evaluation_seconds_total",
                       (const char *[]){"kind", kinds[k], NULL}, "%.6f", rs->seconds[k]);
    sc_prom_family(out, "scorch_rule_skipped_rounds_total", SC_PROM_COUNTER,
                   "Evaluation times skipped because the round before ran past them.");
    sc_prom_sample(out, "scorch_rule_skipped_rounds_total", NULL, "%llu",
                   (unsigned long long)rs->skipped);
    sc_prom_family(out, "scorch_rule_last_evaluation_timestamp_seconds", SC_PROM_GAUGE,
                   "The time a rule's last evaluation is of (its window ends there).");
    for (uint32_t i = 0; i < rs->n; i++)
        sc_prom_sample(out, "scorch_rule_last_evaluation_timestamp_seconds",
                       rule_labels(&rs->rules[i], l), "%.3f", (double)rs->rules[i].last_t / 1e9);
    sc_prom_family(out, "scorch_rule_last_evaluation_seconds", SC_PROM_GAUGE,
                   "What a rule's last evaluation took.");
    for (uint32_t i = 0; i < rs->n; i++)
        sc_prom_sample(out, "scorch_rule_last_evaluation_seconds", rule_labels(&rs->rules[i], l),
                       "%.6f", rs->rules[i].last_secs);
    sc_prom_family(out, "scorch_rule_health", SC_PROM_GAUGE,
                   "1 when a rule's last evaluation succeeded.");
    for (uint32_t i = 0; i < rs->n; i++)
        sc_prom_sample(out, "scorch_rule_health", rule_labels(&rs->rules[i], l), "%d",
                       rs->rules[i].last_ok);
    sc_prom_family(out, "scorch_rule_series", SC_PROM_GAUGE, "Series a record rule exports.");
    sc_prom_family(out, "scorch_rule_series_dropped", SC_PROM_GAUGE,
                   "Series a record rule's last evaluation left out over its limit.");
    for (uint32_t i = 0; i < rs->n; i++) {
        const struct rule *r = &rs->rules[i];
        if (r->cfg.kind != SC_RULE_RECORD)
            continue;
        sc_prom_sample(out, "scorch_rule_series", rule_labels(r, l), "%u", (unsigned)r->series);
        sc_prom_sample(out, "scorch_rule_series_dropped", rule_labels(r, l), "%u",
                       (unsigned)r->dropped);
    }
    sc_prom_family(out, "scorch_alerts", SC_PROM_GAUGE, "Alerts of an alert rule, by state.");
    sc_prom_family(out, "scorch_alert_findings_dropped", SC_PROM_GAUGE,
                   "Findings an alert rule's last evaluation left out over its limit.");
    for (uint32_t i = 0; i < rs->n; i++) {
        const struct rule *r = &rs->rules[i];
        if (r->cfg.kind != SC_RULE_ALERT)
            continue;
        sc_prom_sample(out, "scorch_alerts",
                       (const char *[]){"rule", r->cfg.name, "state", "pending", NULL}, "%u",
                       (unsigned)r->pending);
        sc_prom_sample(out, "scorch_alerts",
                       (const char *[]){"rule", r->cfg.name, "state", "firing", NULL}, "%u",
                       (unsigned)r->firing);
        sc_prom_sample(out, "scorch_alert_findings_dropped", rule_labels(r, l), "%u",
                       (unsigned)r->dropped);
    }
    pthread_mutex_unlock(&rs->mu);
    sc_rules_notify_metrics(rs, out);
}
