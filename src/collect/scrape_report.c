/* scrape_report.c - the scraper's health (JSON, metrics, stats) and its sinks. */
#include "collect/scrape_int.h"
#include "ingest/ingest.h"
#include "model/json.h"
#include "model/prom.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const double sc_scrape_lag_bounds[SC_SCRAPE_LAG_BUCKETS] = {0.001, 0.005, 0.01, 0.05, 0.1,
                                                            0.25,  0.5,   1,    2,    1e300};

/* ---- health, metrics, stats ---- */

/* An RFC 3339 time to the millisecond, or null for none yet. */
static void put_time(struct sc_json *j, const char *key, int64_t ns)
{
    sc_json_key(j, key);
    if (!ns) {
        sc_json_null(j);
        return;
    }
    time_t t = (time_t)(ns / SC_NS_PER_S);
    struct tm tm;
    gmtime_r(&t, &tm);
    char s[64], z[80];
    strftime(s, sizeof s, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(z, sizeof z, "%s.%03dZ", s, (int)(ns % SC_NS_PER_S / 1000000));
    sc_json_str(j, z);
}

static const char *mode_name(int m)
{
    switch (m) {
    case MODE_PROBE:
        return "probing";
    case MODE_ENDPOINT:
        return "endpoint";
    case MODE_SUBTRACT:
        return "subtract";
    default:
        return "";
    }
}

void sc_scraper_targets_json(struct sc_scraper *s, struct sc_buf *out)
{
    pthread_mutex_lock(&s->health_mu);
    /* a target a line, for people and line tools reading it */
    struct sc_json j;
    sc_json_init(&j, out);
    sc_json_arr_begin(&j);
    for (uint32_t i = 0; s->gen && i < s->gen->n; i++) {
        const struct task *tk = &s->gen->tasks[i];
        const struct tstate *st = tk->st;
        int mode = atomic_load(&st->mode), asked;
        char *url = sc_scrape_task_url(tk->t, st->kind, mode, &asked);
        sc_json_newline(&j);
        sc_json_obj_begin(&j);
        sc_json_kv_str(&j, "job", tk->t->job);
        sc_json_kv_str(&j, "instance", tk->t->instance);
        sc_json_kv_str(&j, "profile", sc_scrape_kinds[st->kind].name);
        sc_json_kv_str(&j, "url", url ? url : "");
        free(url);
        sc_json_key(&j, "labels");
        sc_json_obj_begin(&j);
        for (uint32_t k = 0; k < tk->t->labels.n; k++) {
            const struct sc_label_pair *lp = &tk->t->labels.v[k];
            sc_json_keyn(&j, lp->name.ptr, lp->name.len);
            sc_json_strn(&j, lp->value.ptr, lp->value.len);
        }
        sc_json_obj_end(&j);
        sc_json_kv_str(&j, "health",
                       st->health == HEALTH_UP     ? "up"
                       : st->health == HEALTH_DOWN ? "down"
                                                   : "unknown");
        put_time(&j, "last_scrape", st->last_wall_ns);
        sc_json_key(&j, "last_scrape_duration_seconds");
        sc_json_num_fixed(&j, st->last_dur_ns / 1e9, 6);
        sc_json_kv_str(&j, "last_error", st->last_error);
        put_time(&j, "next_due", st->next_due_wall_ns);
        sc_json_key(&j, "interval_seconds");
        sc_json_num_g(&j, tk->t->interval_ns / 1e9, 6);
        sc_json_kv_str(&j, "delta", mode_name(mode));
        sc_json_kv_u64(&j, "samples", st->last_samples);
        sc_json_kv_u64(&j, "scrapes", st->scrapes);
        sc_json_kv_u64(&j, "errors", st->errors);
        sc_json_kv_u64(&j, "skipped", st->skipped);
        sc_json_kv_u64(&j, "profiles", st->profiles);
        sc_json_kv_u64(&j, "restarts", st->restarts);
        sc_json_obj_end(&j);
    }
    pthread_mutex_unlock(&s->health_mu);
    sc_json_newline(&j);
    sc_json_arr_end(&j);
    sc_buf_putc(out, '\n');
}

static int64_t thread_cpu(clockid_t c)
{
    struct timespec ts;
    if (c == (clockid_t)-1 || clock_gettime(c, &ts))
        return 0;
    return (int64_t)ts.tv_sec * SC_NS_PER_S + ts.tv_nsec;
}

void sc_scraper_stats(struct sc_scraper *s, struct sc_scraper_stats *st)
{
    memset(st, 0, sizeof *st);
    pthread_mutex_lock(&s->health_mu);
    st->tasks = s->gen ? s->gen->n : 0;
    if (s->started)
        st->scraper_cpu_ns = thread_cpu(s->clock);
    for (int i = 0; i < NWORKERS; i++)
        if (s->workers[i].running)
            st->workers_cpu_ns += thread_cpu(s->workers[i].clock);
    pthread_mutex_unlock(&s->health_mu);
    st->scrapes = atomic_load(&s->n_scrapes);
    st->errors = atomic_load(&s->n_errors);
    st->skipped = atomic_load(&s->n_skipped);
    st->profiles = atomic_load(&s->n_profiles);
    st->lag_count = atomic_load(&s->lag_count);
    for (int i = 0; i < SC_SCRAPE_LAG_BUCKETS; i++)
        st->lag_buckets[i] = atomic_load(&s->lag_buckets[i]);
    st->lag_max_ns = atomic_load(&s->lag_max);
    st->backlog_dropped = atomic_load(&s->n_backlog_dropped);
    st->sink_cpu_ns = atomic_load(&s->sink_cpu);
}

void sc_scraper_metrics(struct sc_scraper *s, struct sc_buf *out)
{
    static const struct {
        const char *name;
        enum sc_prom_type type;
        const char *help;
    } m[] = {
        {"scorch_scrape_up", SC_PROM_GAUGE,
         "1 when the last scrape of the target's profile worked."},
        {"scorch_scrape_duration_seconds", SC_PROM_GAUGE, "How long the last scrape took."},
        {"scorch_scrape_samples", SC_PROM_GAUGE, "Samples in the last profile stored."},
        {"scorch_scrape_bytes", SC_PROM_GAUGE, "Bytes of the last response."},
        {"scorch_scrapes_total", SC_PROM_COUNTER, "Scrapes finished."},
        {"scorch_scrape_errors_total", SC_PROM_COUNTER, "Scrapes that failed."},
        {"scorch_scrape_skipped_total", SC_PROM_COUNTER,
         "Slots skipped because the previous scrape still ran."},
        {"scorch_scrape_profiles_total", SC_PROM_COUNTER, "Profiles handed on to be stored."},
        {"scorch_scrape_restarts_total", SC_PROM_COUNTER,
         "Cumulative counters that went down (target restarts): new baselines."},
    };
    pthread_mutex_lock(&s->health_mu);
    for (size_t k = 0; k < sizeof m / sizeof m[0]; k++) {
        sc_prom_family(out, m[k].name, m[k].type, m[k].help);
        for (uint32_t i = 0; s->gen && i < s->gen->n; i++) {
            const struct task *tk = &s->gen->tasks[i];
            const struct tstate *st = tk->st;
            const char *l[] = {"job",      tk->t->job,
                               "instance", tk->t->instance,
                               "profile",  sc_scrape_kinds[st->kind].name,
                               NULL};
            switch (k) {
            case 0:
                sc_prom_sample(out, m[k].name, l, "%d", st->health == HEALTH_UP);
                break;
            case 1:
                sc_prom_sample(out, m[k].name, l, "%.6f", st->last_dur_ns / 1e9);
                break;
            case 2:
                sc_prom_sample(out, m[k].name, l, "%u", (unsigned)st->last_samples);
                break;
            case 3:
                sc_prom_sample(out, m[k].name, l, "%llu", (unsigned long long)st->last_bytes);
                break;
            default: {
                uint64_t v = k == 4   ? st->scrapes
                             : k == 5 ? st->errors
                             : k == 6 ? st->skipped
                             : k == 7 ? st->profiles
                                      : st->restarts;
                sc_prom_sample(out, m[k].name, l, "%llu", (unsigned long long)v);
            }
            }
        }
    }
    uint32_t ntasks = s->gen ? s->gen->n : 0;
    pthread_mutex_unlock(&s->health_mu);
    struct sc_scraper_stats st;
    sc_scraper_stats(s, &st);
    sc_prom_family(out, "scorch_scrape_tasks", SC_PROM_GAUGE,
                   "Scrape tasks (target x profile type).");
    sc_prom_sample(out, "scorch_scrape_tasks", NULL, "%u", (unsigned)ntasks);
    /* the last bucket is the +Inf one */
    uint64_t inf = 0;
    for (int i = 0; i < SC_SCRAPE_LAG_BUCKETS; i++)
        inf += st.lag_buckets[i];
    sc_prom_histogram(out, "scorch_scrape_schedule_lag_seconds",
                      "How late requests started against their slot on the schedule.",
                      sc_scrape_lag_bounds, st.lag_buckets, SC_SCRAPE_LAG_BUCKETS - 1, inf, NULL,
                      st.lag_count);
    sc_prom_family(out, "scorch_scrape_schedule_lag_max_seconds", SC_PROM_GAUGE,
                   "The latest start seen.");
    sc_prom_sample(out, "scorch_scrape_schedule_lag_max_seconds", NULL, "%.6f",
                   st.lag_max_ns / 1e9);
    sc_prom_family(out, "scorch_scrape_cpu_seconds_total", SC_PROM_COUNTER,
                   "CPU time of the scraper's threads.");
    sc_prom_sample(out, "scorch_scrape_cpu_seconds_total",
                   (const char *[]){"thread", "scrape", NULL}, "%.6f", st.scraper_cpu_ns / 1e9);
    sc_prom_sample(out, "scorch_scrape_cpu_seconds_total",
                   (const char *[]){"thread", "workers", NULL}, "%.6f", st.workers_cpu_ns / 1e9);
    sc_prom_family(out, "scorch_scrape_backlog_dropped_total", SC_PROM_COUNTER,
                   "Scraped profiles dropped because the workers were behind.");
    sc_prom_sample(out, "scorch_scrape_backlog_dropped_total", NULL, "%llu",
                   (unsigned long long)st.backlog_dropped);
}

/* ---- sinks ---- */

int sc_scrape_store_sink(void *store, const struct sc_scraped *p, char *err)
{
    char from[32], until[32];
    snprintf(from, sizeof from, "%lld", (long long)p->from_ns);
    snprintf(until, sizeof until, "%lld", (long long)p->until_ns);
    struct sc_ingest_req q = {
        .name = p->service_name,
        .from = from,
        .until = until,
        .format = "pprof",
        .body = p->pprof,
        .len = p->len,
        .profile_name = p->profile,
        .extra_labels = p->labels,
    };
    struct sc_ingest_result res;
    return sc_ingest(store, &q, &sc_limits_scrape, &res, err);
}

int sc_scrape_push_query(const struct sc_scraped *p, struct sc_buf *out, char *err)
{
    const char *suffix = NULL;
    for (int k = 0; k < NKINDS; k++)
        if (!strcmp(sc_scrape_kinds[k].name, p->profile))
            suffix = sc_scrape_kinds[k].suffix;
    struct sc_buf name = SC_BUF_INIT;
    sc_buf_puts(&name, p->service_name);
    if (suffix) {
        sc_buf_putc(&name, '.');
        sc_buf_puts(&name, suffix);
    }
    sc_buf_putc(&name, '{');
    int first = 1;
    for (uint32_t i = 0; i < p->labels->n; i++) {
        const struct sc_label_pair *lp = &p->labels->v[i];
        if (lp->name.len == 12 && !memcmp(lp->name.ptr, "service_name", 12))
            continue;
        if (memchr(lp->value.ptr, '"', lp->value.len)) {
            sc_buf_release(&name);
            return sc_errf(err, SC_EINVAL,
                           "the value of label '%.*s' has a '\"', which a Pyroscope name "
                           "cannot carry",
                           (int)lp->name.len, lp->name.ptr);
        }
        if (!first)
            sc_buf_putc(&name, ',');
        first = 0;
        sc_buf_append(&name, lp->name.ptr, lp->name.len);
        sc_buf_puts(&name, "=\"");
        sc_buf_append(&name, lp->value.ptr, lp->value.len);
        sc_buf_putc(&name, '"');
    }
    sc_buf_putc(&name, '}');
    if (name.oom) {
        sc_buf_release(&name);
        return sc_errf(err, SC_ENOMEM, "out of memory");
    }
    int64_t from = p->from_ns / SC_NS_PER_S, until = (p->until_ns + SC_NS_PER_S / 2) / SC_NS_PER_S;
    if (until < from)
        until = from;
    sc_buf_puts(out, "name=");
    sc_buf_put_url(out, name.data, name.len);
    sc_buf_printf(out, "&from=%lld&until=%lld&format=pprof", (long long)from, (long long)until);
    sc_buf_release(&name);
    return out->oom ? sc_errf(err, SC_ENOMEM, "out of memory") : 0;
}
