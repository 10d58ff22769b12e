/* scrape.c - the scraper: a schedule of tasks, libcurl's multi interface, delta workers. */
#include "collect/scrape.h"
#include "collect/delta.h"
#include "formats/input.h"
#include "formats/pprof.h"
#include "ingest/ingest.h"
#include "model/error.h"
#include "model/hash.h"

#include <curl/curl.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#define NS 1000000000LL
#define NWORKERS 2
#define MAX_BODY (64u << 20)         /* bytes of one response */
#define BACKLOG_BYTES (256ull << 20) /* scraped bodies waiting for the workers */
#define BACKLOG_ITEMS 4096

/* The profile types, in SC_PROFILE_* bit order. */
static const struct kind {
    const char *name, *path;
    int cumulative;      /* needs a per-interval delta */
    const char *keep[2]; /* sample types kept, or none: all */
    const char *suffix;  /* Pyroscope name suffix that names the type, or NULL */
} kinds[] = {
    {"cpu", "profile", 0, {NULL, NULL}, "cpu"},
    {"heap", "heap", 0, {"inuse_objects", "inuse_space"}, "inuse_space"},
    {"allocs", "allocs", 1, {"alloc_objects", "alloc_space"}, NULL},
    {"goroutine", "goroutine", 0, {NULL, NULL}, "goroutines"},
    {"mutex", "mutex", 1, {NULL, NULL}, "mutex_count"},
    {"block", "block", 1, {NULL, NULL}, "block_count"},
    {"threadcreate", "threadcreate", 0, {NULL, NULL}, NULL},
};
#define NKINDS ((int)(sizeof kinds / sizeof kinds[0]))

const double sc_scrape_lag_bounds[SC_SCRAPE_LAG_BUCKETS] = {0.001, 0.005, 0.01, 0.05, 0.1,
                                                            0.25,  0.5,   1,    2,    1e300};

/* Limits on what a target may send: a big Go service's profiles are a few MB. */
static const struct sc_limits scrape_limits = {
    .max_input = MAX_BODY,
    .max_decompressed = 512u << 20,
    .max_samples = 4u << 20,
    .max_locations = 4u << 20,
    .max_functions = 1u << 20,
    .max_mappings = 1u << 16,
    .max_strings = 4u << 20,
    .max_stack_depth = 4096,
    .max_labels = 64,
};

enum { MODE_NONE, MODE_PROBE, MODE_ENDPOINT, MODE_SUBTRACT };
enum { HEALTH_UNKNOWN, HEALTH_UP, HEALTH_DOWN };

/* What persists for one (job, target, profile type) across reloads. Shared by the tasks of
 * successive configs and by requests in flight; freed with its last reference. */
struct tstate {
    atomic_int refs;
    uint64_t key;
    int kind;
    /* the worker that owns this state's shard */
    pthread_mutex_t mu;
    struct sc_delta delta;
    int64_t base_wall_ns; /* when the baseline was scraped */
    atomic_int mode;      /* MODE_* */
    int cfg_delta;        /* the config's SC_DELTA_* the mode came from */
    /* the scraping thread only */
    int64_t next_due; /* monotonic ns; 0 = not on the grid yet */
    int64_t interval_ns;
    int inflight;
    uint32_t gen;
    /* health, under scraper->health_mu */
    int health;
    int64_t last_wall_ns, last_dur_ns, next_due_wall_ns;
    uint32_t last_samples;
    uint64_t last_bytes;
    char last_error[SC_ERR_LEN];
    uint64_t scrapes, errors, skipped, profiles, restarts;
};

/* One target of one job, as configured; immutable once built. */
struct target {
    atomic_int refs;
    char *job, *instance, *service;
    struct sc_labels labels;
    char *base; /* scheme://instance/prefix, no trailing slash */
    struct curl_slist *headers;
    char *user, *password;
    int64_t interval_ns, timeout_ns, cpu_seconds;
    int delta;
    uint64_t offset_hash;
};

struct task {
    struct target *t;
    struct tstate *st;
};

/* A configuration's tasks. */
struct gen {
    struct task *tasks;
    uint32_t n;
    uint32_t id;
};

struct req {
    struct req *next, *prev;
    struct target *t;
    struct tstate *st;
    int kind;
    CURL *easy;
    char *url;
    struct sc_buf body;
    int too_big;
    int asked_delta; /* ?seconds=<interval> on a cumulative type */
    char errbuf[CURL_ERROR_SIZE];
    int64_t due, start_mono, start_wall, end_mono;
    CURLcode cc;
    long status;
};

struct worker {
    pthread_t th;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    struct req *head, *tail;
    int stop;
    clockid_t clock;
    int running;
};

struct sc_scraper {
    sc_scrape_sink sink;
    void *sink_ctx;
    CURLM *multi;
    int ep, wakefd;        /* epoll for curl's sockets; an eventfd that wakes the thread */
    int64_t curl_deadline; /* monotonic: curl's timer, -1 = none (the scraping thread) */
    pthread_t thread;
    clockid_t clock;
    int started;
    atomic_int stop;

    struct gen *gen; /* current config: swapped under health_mu, by reloads only */
    uint32_t next_gen_id;
    struct task **heap; /* the schedule: a min-heap on st->next_due */
    uint32_t nheap;
    struct req inflight; /* list head of requests in flight (scraping thread) */

    pthread_mutex_t health_mu;
    pthread_mutex_t reload_mu; /* one reload at a time */
    pthread_mutex_t pend_mu;
    pthread_cond_t pend_cv;
    struct gen *pending;

    struct worker workers[NWORKERS];
    atomic_ullong backlog_bytes;
    atomic_uint backlog_items;

    atomic_ullong n_scrapes, n_errors, n_skipped, n_profiles, n_backlog_dropped;
    atomic_ullong lag_count, lag_buckets[SC_SCRAPE_LAG_BUCKETS];
    atomic_llong lag_max;
    atomic_llong sink_cpu; /* CPU time the workers spent in the sink */
};

/* ---- small helpers ---- */

static int64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * NS + ts.tv_nsec;
}

static int64_t wall_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * NS + ts.tv_nsec;
}

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static void curl_init_once(void)
{
    curl_global_init(CURL_GLOBAL_DEFAULT);
}
void sc_curl_global_init(void)
{
    pthread_once(&curl_once, curl_init_once);
}

static void tstate_unref(struct tstate *st)
{
    if (st && atomic_fetch_sub(&st->refs, 1) == 1) {
        sc_delta_release(&st->delta);
        pthread_mutex_destroy(&st->mu);
        free(st);
    }
}

static void target_unref(struct target *t)
{
    if (t && atomic_fetch_sub(&t->refs, 1) == 1) {
        free(t->job);
        free(t->instance);
        free(t->service);
        sc_labels_release(&t->labels);
        free(t->base);
        curl_slist_free_all(t->headers);
        free(t->user);
        free(t->password);
        free(t);
    }
}

static void gen_free(struct gen *g)
{
    if (!g) return;
    for (uint32_t i = 0; i < g->n; i++) {
        target_unref(g->tasks[i].t);
        tstate_unref(g->tasks[i].st);
    }
    free(g->tasks);
    free(g);
}

static void req_free(struct req *r)
{
    if (!r) return;
    target_unref(r->t);
    tstate_unref(r->st);
    sc_buf_release(&r->body);
    free(r->url);
    free(r);
}

static uint64_t hash_str(uint64_t h, const char *s)
{
    return sc_hash_combine(h, sc_hash64(s, strlen(s) + 1));
}

static int initial_mode(int kind, int cfg_delta, int64_t interval_ns)
{
    if (!kinds[kind].cumulative) return MODE_NONE;
    if (cfg_delta == SC_DELTA_SUBTRACT) return MODE_SUBTRACT;
    if (cfg_delta == SC_DELTA_ENDPOINT) return MODE_ENDPOINT;
    /* Go's ?seconds= takes whole seconds */
    return interval_ns % NS == 0 ? MODE_PROBE : MODE_SUBTRACT;
}

/* ---- building a configuration's tasks ---- */

static int valid_instance(const char *s)
{
    const char *colon = strrchr(s, ':');
    if (!colon || colon == s || !colon[1]) return 0;
    for (const char *p = colon + 1; *p; p++)
        if (*p < '0' || *p > '9') return 0;
    for (const char *p = s; p < colon; p++)
        if (*p <= ' ' || strchr("/?#@\"\\{}", *p)) return 0;
    return 1;
}

static int valid_label_name(const char *s)
{
    if (!sc_labels_is_name_start((unsigned char)*s)) return 0;
    for (s++; *s; s++)
        if (!sc_labels_is_name_char((unsigned char)*s)) return 0;
    return 1;
}

static int build_target(const struct sc_scrape_job *j, const char *inst, struct target **out,
                        char *err)
{
    struct target *t = calloc(1, sizeof *t);
    if (!t) return sc_errf(err, SC_ENOMEM, "out of memory");
    atomic_init(&t->refs, 1);
    sc_labels_init(&t->labels);
    int rc = 0;
    const char *service = j->job_name;
    for (uint32_t i = 0; i < j->nlabels; i++) {
        if (!valid_label_name(j->label_names[i])) {
            rc = sc_errf(err, SC_EINVAL, "job '%s': bad label name '%s'", j->job_name,
                         j->label_names[i]);
            break;
        }
        if (!strcmp(j->label_names[i], "service_name"))
            service = j->label_values[i];
        else if (strcmp(j->label_names[i], "job") && strcmp(j->label_names[i], "instance") &&
                 sc_labels_set(&t->labels, j->label_names[i], strlen(j->label_names[i]),
                               j->label_values[i], strlen(j->label_values[i])))
            rc = sc_errf(err, SC_ENOMEM, "out of memory");
    }
    if (!rc && !*service) rc = sc_errf(err, SC_EINVAL, "job '%s': empty service_name", j->job_name);
    if (!rc) {
        /* the service name travels as a Pyroscope application name: it must read back as
         * itself (no braces, no profile-type suffix such as '.cpu') */
        struct sc_labels tmp;
        sc_labels_init(&tmp);
        char sfx[32], perr[SC_ERR_LEN];
        struct sc_str got = {"", 0};
        int prc = sc_ingest_parse_name(service, &tmp, 4, sfx, perr);
        if (prc == 0) sc_labels_get(&tmp, "service_name", 12, &got);
        if (prc || tmp.n != 1 || got.len != strlen(service) || strchr(service, '{'))
            rc = sc_errf(err, SC_EINVAL,
                         "job '%s': service name '%s' cannot be a Pyroscope application name "
                         "(braces, or it ends in a profile type such as '.cpu')",
                         j->job_name, service);
        sc_labels_release(&tmp);
    }
    if (!rc && (sc_labels_set(&t->labels, "service_name", 12, service, strlen(service)) ||
                sc_labels_set(&t->labels, "job", 3, j->job_name, strlen(j->job_name)) ||
                sc_labels_set(&t->labels, "instance", 8, inst, strlen(inst))))
        rc = sc_errf(err, SC_ENOMEM, "out of memory");
    if (!rc) {
        const char *scheme = j->scheme ? j->scheme : "http";
        const char *prefix = j->path_prefix ? j->path_prefix : "/debug/pprof";
        size_t pl = strlen(prefix);
        while (pl && prefix[pl - 1] == '/')
            pl--;
        size_t n = strlen(scheme) + strlen(inst) + pl + 8;
        t->base = malloc(n);
        t->job = strdup(j->job_name);
        t->instance = strdup(inst);
        t->service = strdup(service);
        if (t->base)
            snprintf(t->base, n, "%s://%s%s%.*s", scheme, inst, pl && prefix[0] != '/' ? "/" : "",
                     (int)pl, prefix);
        if (!t->base || !t->job || !t->instance || !t->service)
            rc = sc_errf(err, SC_ENOMEM, "out of memory");
    }
    if (!rc && j->bearer_token) {
        size_t n = strlen(j->bearer_token) + 32;
        char *h = malloc(n);
        if (h) {
            snprintf(h, n, "Authorization: Bearer %s", j->bearer_token);
            t->headers = curl_slist_append(NULL, h);
            free(h);
        }
        if (!t->headers) rc = sc_errf(err, SC_ENOMEM, "out of memory");
    }
    if (!rc && j->basic_user) {
        t->user = strdup(j->basic_user);
        t->password = strdup(j->basic_password ? j->basic_password : "");
        if (!t->user || !t->password) rc = sc_errf(err, SC_ENOMEM, "out of memory");
    }
    t->interval_ns = j->interval_ns;
    t->timeout_ns = j->timeout_ns ? j->timeout_ns : 10 * NS;
    t->cpu_seconds = j->cpu_seconds ? j->cpu_seconds : 10;
    /* Go runs one CPU profile at a time: keep it inside the interval */
    if (t->cpu_seconds * NS >= t->interval_ns)
        t->cpu_seconds = t->interval_ns / NS - 1 >= 1 ? t->interval_ns / NS - 1 : 1;
    t->delta = j->delta;
    t->offset_hash = hash_str(hash_str(sc_hash64("offset", 6), j->job_name), inst);
    if (rc) {
        target_unref(t);
        return rc;
    }
    *out = t;
    return 0;
}

/* Builds the tasks of cfg, sharing the states of tasks the current config has. */
static int build_gen(struct sc_scraper *s, const struct sc_config *cfg, struct gen **out, char *err)
{
    struct gen *g = calloc(1, sizeof *g);
    if (!g) return sc_errf(err, SC_ENOMEM, "out of memory");
    g->id = ++s->next_gen_id;
    struct sc_map64 old, seen;
    sc_map64_init(&old);
    sc_map64_init(&seen);
    int rc = 0;
    struct gen *cur = s->gen;
    for (uint32_t i = 0; cur && i < cur->n && !rc; i++) {
        int added;
        if (!sc_map64_upsert(&old, cur->tasks[i].st->key, i, &added))
            rc = sc_errf(err, SC_ENOMEM, "out of memory");
    }
    uint32_t cap = 0;
    for (uint32_t ji = 0; ji < cfg->njobs && !rc; ji++) {
        const struct sc_scrape_job *j = &cfg->jobs[ji];
        for (uint32_t k = 0; k < ji && !rc; k++)
            if (!strcmp(cfg->jobs[k].job_name, j->job_name))
                rc = sc_errf(err, SC_EINVAL, "two scrape configs have the job_name '%s'",
                             j->job_name);
        if (!rc && j->delta == SC_DELTA_ENDPOINT && j->interval_ns % NS)
            rc = sc_errf(err, SC_EINVAL,
                         "job '%s': 'delta: endpoint' needs a whole number of seconds as the "
                         "interval",
                         j->job_name);
        for (uint32_t ti = 0; ti < j->ntargets && !rc; ti++) {
            const char *inst = j->targets[ti];
            if (!valid_instance(inst)) {
                rc = sc_errf(err, SC_EINVAL, "job '%s': target '%s' is not host:port", j->job_name,
                             inst);
                break;
            }
            uint64_t tkey = hash_str(hash_str(sc_hash64("target", 6), j->job_name), inst);
            int added;
            if (!sc_map64_upsert(&seen, tkey, 0, &added)) {
                rc = sc_errf(err, SC_ENOMEM, "out of memory");
                break;
            }
            if (!added) continue; /* the same target twice */
            struct target *t = NULL;
            rc = build_target(j, inst, &t, err);
            if (rc) break;
            for (int kind = 0; kind < NKINDS && !rc; kind++) {
                if (!(j->profiles & (1u << kind))) continue;
                if (g->n == cap) {
                    cap = cap ? cap * 2 : 16;
                    struct task *nt = realloc(g->tasks, cap * sizeof *nt);
                    if (!nt) {
                        rc = sc_errf(err, SC_ENOMEM, "out of memory");
                        break;
                    }
                    g->tasks = nt;
                }
                uint64_t key = sc_hash_combine(tkey, (uint64_t)kind + 1);
                uint32_t *oi = sc_map64_get(&old, key);
                struct tstate *st;
                if (oi) {
                    st = cur->tasks[*oi].st;
                    atomic_fetch_add(&st->refs, 1);
                } else {
                    st = calloc(1, sizeof *st);
                    if (!st) {
                        rc = sc_errf(err, SC_ENOMEM, "out of memory");
                        break;
                    }
                    atomic_init(&st->refs, 1);
                    st->key = key;
                    st->kind = kind;
                    pthread_mutex_init(&st->mu, NULL);
                    sc_delta_init(&st->delta);
                    st->cfg_delta = -1;
                }
                atomic_fetch_add(&t->refs, 1);
                g->tasks[g->n].t = t;
                g->tasks[g->n].st = st;
                g->n++;
            }
            target_unref(t);
        }
    }
    sc_map64_release(&old);
    sc_map64_release(&seen);
    if (rc) {
        gen_free(g);
        return rc;
    }
    *out = g;
    return 0;
}

/* ---- the schedule ---- */

static int heap_less(struct task *a, struct task *b)
{
    return a->st->next_due < b->st->next_due;
}

static void heap_down(struct sc_scraper *s, uint32_t i)
{
    for (;;) {
        uint32_t l = 2 * i + 1, r = l + 1, m = i;
        if (l < s->nheap && heap_less(s->heap[l], s->heap[m])) m = l;
        if (r < s->nheap && heap_less(s->heap[r], s->heap[m])) m = r;
        if (m == i) return;
        struct task *x = s->heap[i];
        s->heap[i] = s->heap[m];
        s->heap[m] = x;
        i = m;
    }
}

/* The first due time on the task's grid: the next wall-clock time t >= now with
 * t = offset (mod interval). */
static int64_t first_due(const struct target *t, int64_t now_mono, int64_t now_wall)
{
    int64_t iv = t->interval_ns;
    int64_t off = (int64_t)(t->offset_hash % (uint64_t)iv);
    int64_t r = (now_wall - off) % iv;
    if (r < 0) r += iv;
    return now_mono + (r ? iv - r : 0);
}

static void abort_req(struct sc_scraper *s, struct req *r)
{
    curl_multi_remove_handle(s->multi, r->easy);
    curl_easy_cleanup(r->easy);
    r->prev->next = r->next;
    r->next->prev = r->prev;
    r->st->inflight--;
    req_free(r);
}

/* Puts a new config in effect (the scraping thread, or the caller before start). */
static void apply_gen(struct sc_scraper *s, struct gen *g)
{
    int64_t now = mono_ns(), wall = wall_ns();
    for (uint32_t i = 0; i < g->n; i++) {
        struct task *tk = &g->tasks[i];
        struct tstate *st = tk->st;
        st->gen = g->id;
        if (st->cfg_delta != tk->t->delta) {
            atomic_store(&st->mode, initial_mode(st->kind, tk->t->delta, tk->t->interval_ns));
            st->cfg_delta = tk->t->delta;
        }
        if (!st->next_due || st->interval_ns != tk->t->interval_ns) {
            st->interval_ns = tk->t->interval_ns;
            st->next_due = first_due(tk->t, now, wall);
        }
    }
    /* requests of tasks that went away are cancelled */
    for (struct req *r = s->inflight.next, *nx; r != &s->inflight; r = nx) {
        nx = r->next;
        if (r->st->gen != g->id) abort_req(s, r);
    }
    struct task **heap = g->n ? malloc(g->n * sizeof *heap) : NULL;
    if (g->n && !heap) {
        /* keep scraping the old config rather than nothing */
        gen_free(g);
        return;
    }
    free(s->heap);
    s->heap = heap;
    s->nheap = g->n;
    /* keep an idle connection per task between scrapes (curl's default cache is sized by
     * the transfers running, which come and go) */
    curl_multi_setopt(s->multi, CURLMOPT_MAXCONNECTS, (long)(g->n > 64 ? g->n : 64));
    for (uint32_t i = 0; i < g->n; i++)
        heap[i] = &g->tasks[i];
    for (uint32_t i = g->n / 2; i-- > 0;)
        heap_down(s, i);
    pthread_mutex_lock(&s->health_mu);
    struct gen *old = s->gen;
    s->gen = g;
    for (uint32_t i = 0; i < g->n; i++)
        g->tasks[i].st->next_due_wall_ns = wall + (g->tasks[i].st->next_due - now);
    pthread_mutex_unlock(&s->health_mu);
    gen_free(old);
}

/* ---- requests (the scraping thread) ---- */

static size_t on_data(char *p, size_t size, size_t n, void *ctx)
{
    struct req *r = ctx;
    size_t len = size * n;
    if (r->body.len + len > MAX_BODY) {
        r->too_big = 1;
        return 0; /* aborts the transfer */
    }
    sc_buf_append(&r->body, p, len);
    return r->body.oom ? 0 : len;
}

/* The URL a request of this task uses now. Caller frees. */
static char *task_url(const struct target *t, int kind, int mode, int *asked_delta)
{
    char q[64] = "";
    *asked_delta = 0;
    if (kind == 0) {
        snprintf(q, sizeof q, "?seconds=%lld", (long long)t->cpu_seconds);
    } else if (kinds[kind].cumulative && (mode == MODE_PROBE || mode == MODE_ENDPOINT)) {
        snprintf(q, sizeof q, "?seconds=%lld", (long long)(t->interval_ns / NS));
        *asked_delta = 1;
    }
    size_t n = strlen(t->base) + strlen(kinds[kind].path) + strlen(q) + 2;
    char *u = malloc(n);
    if (u) snprintf(u, n, "%s/%s%s", t->base, kinds[kind].path, q);
    return u;
}

static void set_error(struct sc_scraper *s, struct tstate *st, const char *msg)
{
    pthread_mutex_lock(&s->health_mu);
    st->health = HEALTH_DOWN;
    st->errors++;
    snprintf(st->last_error, sizeof st->last_error, "%s", msg);
    pthread_mutex_unlock(&s->health_mu);
    atomic_fetch_add(&s->n_errors, 1);
}

static void start_req(struct sc_scraper *s, struct target *t, struct tstate *st, int64_t due)
{
    int kind = st->kind;
    struct req *r = calloc(1, sizeof *r);
    if (!r) {
        set_error(s, st, "out of memory");
        return;
    }
    r->url = task_url(t, kind, atomic_load(&st->mode), &r->asked_delta);
    r->easy = curl_easy_init();
    if (!r->url || !r->easy) {
        if (r->easy) curl_easy_cleanup(r->easy);
        free(r->url);
        free(r);
        set_error(s, st, "out of memory");
        return;
    }
    atomic_fetch_add(&t->refs, 1);
    atomic_fetch_add(&st->refs, 1);
    r->t = t;
    r->st = st;
    r->kind = kind;
    r->due = due;
    int64_t timeout = t->timeout_ns;
    if (kind == 0)
        timeout += t->cpu_seconds * NS;
    else if (r->asked_delta)
        timeout += t->interval_ns;
    CURL *e = r->easy;
    curl_easy_setopt(e, CURLOPT_URL, r->url);
    curl_easy_setopt(e, CURLOPT_PRIVATE, r);
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_data);
    curl_easy_setopt(e, CURLOPT_WRITEDATA, r);
    curl_easy_setopt(e, CURLOPT_ERRORBUFFER, r->errbuf);
    curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, (long)(timeout / 1000000));
    curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS,
                     (long)((t->timeout_ns < 10 * NS ? t->timeout_ns : 10 * NS) / 1000000));
    curl_easy_setopt(e, CURLOPT_USERAGENT, "scorch-scraper/0.1");
    curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(e, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)MAX_BODY);
    if (t->headers) curl_easy_setopt(e, CURLOPT_HTTPHEADER, t->headers);
    if (t->user) {
        curl_easy_setopt(e, CURLOPT_HTTPAUTH, (long)CURLAUTH_BASIC);
        curl_easy_setopt(e, CURLOPT_USERNAME, t->user);
        curl_easy_setopt(e, CURLOPT_PASSWORD, t->password);
    }
    r->start_mono = mono_ns();
    r->start_wall = wall_ns();
    if (curl_multi_add_handle(s->multi, e) != CURLM_OK) {
        curl_easy_cleanup(e);
        req_free(r);
        set_error(s, st, "cannot start a request");
        return;
    }
    st->inflight++;
    r->next = s->inflight.next;
    r->prev = &s->inflight;
    s->inflight.next->prev = r;
    s->inflight.next = r;
    /* how late the request started against its slot on the grid */
    int64_t lag = r->start_mono - due;
    if (lag < 0) lag = 0;
    int b = 0;
    while (b < SC_SCRAPE_LAG_BUCKETS - 1 && lag / 1e9 > sc_scrape_lag_bounds[b])
        b++;
    atomic_fetch_add(&s->lag_buckets[b], 1);
    atomic_fetch_add(&s->lag_count, 1);
    long long mx = atomic_load(&s->lag_max);
    while (lag > mx && !atomic_compare_exchange_weak(&s->lag_max, &mx, lag))
        ;
}

/* A task's slot has come: start its request, or skip the slot when the previous one still
 * runs. The next slot is on the grid after now (slots the process slept through count as
 * skipped). */
static void fire(struct sc_scraper *s, struct task *tk, int64_t now)
{
    struct tstate *st = tk->st;
    int64_t iv = st->interval_ns;
    int64_t missed = (now - st->next_due) / iv;
    int64_t due = st->next_due + missed * iv;
    st->next_due = due + iv;
    int mode = atomic_load(&st->mode);
    int overlap = kinds[st->kind].cumulative && (mode == MODE_PROBE || mode == MODE_ENDPOINT);
    int skip = st->inflight >= (overlap ? 2 : 1);
    if (missed > 0 || skip) {
        pthread_mutex_lock(&s->health_mu);
        st->skipped += (uint64_t)missed + (skip ? 1 : 0);
        pthread_mutex_unlock(&s->health_mu);
        atomic_fetch_add(&s->n_skipped, (uint64_t)missed + (skip ? 1 : 0));
    }
    if (!skip) start_req(s, tk->t, st, due);
    pthread_mutex_lock(&s->health_mu);
    st->next_due_wall_ns = wall_ns() + (st->next_due - mono_ns());
    pthread_mutex_unlock(&s->health_mu);
}

static void worker_push(struct sc_scraper *s, struct req *r);

static void complete(struct sc_scraper *s, CURL *e, CURLcode cc)
{
    struct req *r = NULL;
    curl_easy_getinfo(e, CURLINFO_PRIVATE, (char **)&r);
    r->cc = cc;
    r->end_mono = mono_ns();
    curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, &r->status);
    curl_multi_remove_handle(s->multi, e);
    curl_easy_cleanup(e);
    r->easy = NULL;
    r->prev->next = r->next;
    r->next->prev = r->prev;
    r->next = r->prev = NULL;
    r->st->inflight--;
    /* a target that refuses ?seconds= (older Go, a short WriteTimeout): subtract from now
     * on, and fetch the baseline at once rather than an interval later */
    if (cc == CURLE_OK && r->status == 400 && r->asked_delta && r->t->delta == SC_DELTA_AUTO) {
        int probe = MODE_PROBE;
        if (atomic_compare_exchange_strong(&r->st->mode, &probe, MODE_SUBTRACT))
            start_req(s, r->t, r->st, mono_ns());
        /* else: a second probe that overlapped the first; the switch is made */
        req_free(r);
        return;
    }
    worker_push(s, r);
}

/* libcurl's socket interface: curl says which sockets to watch and when its timer runs
 * out; epoll tells it which sockets are ready. Unlike curl_multi_perform/poll, which walk
 * every transfer on each wakeup, this costs in proportion to the sockets that are ready,
 * which matters with hundreds of long CPU and delta requests in flight. */
static int on_socket(CURL *e, curl_socket_t fd, int what, void *userp, void *socketp)
{
    (void)e;
    struct sc_scraper *s = userp;
    if (what == CURL_POLL_REMOVE) {
        epoll_ctl(s->ep, EPOLL_CTL_DEL, fd, NULL);
        return 0;
    }
    struct epoll_event ev;
    memset(&ev, 0, sizeof ev);
    ev.data.fd = fd;
    ev.events = (what & CURL_POLL_IN ? EPOLLIN : 0) | (what & CURL_POLL_OUT ? EPOLLOUT : 0);
    if (!socketp) {
        curl_multi_assign(s->multi, fd, (void *)1);
        if (epoll_ctl(s->ep, EPOLL_CTL_ADD, fd, &ev) == 0 || errno != EEXIST) return 0;
    }
    epoll_ctl(s->ep, EPOLL_CTL_MOD, fd, &ev);
    return 0;
}

static int on_timer(CURLM *m, long timeout_ms, void *userp)
{
    (void)m;
    struct sc_scraper *s = userp;
    s->curl_deadline = timeout_ms < 0 ? -1 : mono_ns() + (int64_t)timeout_ms * 1000000;
    return 0;
}

static void drain_done(struct sc_scraper *s)
{
    CURLMsg *m;
    int left;
    while ((m = curl_multi_info_read(s->multi, &left)))
        if (m->msg == CURLMSG_DONE) complete(s, m->easy_handle, m->data.result);
}

static void *scrape_main(void *arg)
{
    struct sc_scraper *s = arg;
    pthread_setname_np(pthread_self(), "scorch-scrape");
    struct epoll_event evs[256];
    int running;
    while (!atomic_load(&s->stop)) {
        pthread_mutex_lock(&s->pend_mu);
        struct gen *g = s->pending;
        pthread_mutex_unlock(&s->pend_mu);
        if (g) {
            apply_gen(s, g);
            pthread_mutex_lock(&s->pend_mu);
            s->pending = NULL;
            pthread_cond_broadcast(&s->pend_cv);
            pthread_mutex_unlock(&s->pend_mu);
        }
        int64_t now = mono_ns();
        while (s->nheap && s->heap[0]->st->next_due <= now) {
            fire(s, s->heap[0], now);
            heap_down(s, 0);
        }
        if (s->curl_deadline >= 0 && mono_ns() >= s->curl_deadline) {
            s->curl_deadline = -1;
            curl_multi_socket_action(s->multi, CURL_SOCKET_TIMEOUT, 0, &running);
            drain_done(s);
            continue; /* the timer may have started more work, or be due again */
        }
        now = mono_ns();
        int64_t until = now + NS;
        if (s->nheap && s->heap[0]->st->next_due < until) until = s->heap[0]->st->next_due;
        if (s->curl_deadline >= 0 && s->curl_deadline < until) until = s->curl_deadline;
        int64_t wait = until > now ? until - now : 0;
        int n = epoll_wait(s->ep, evs, (int)(sizeof evs / sizeof evs[0]),
                           (int)((wait + 999999) / 1000000));
        for (int i = 0; i < n; i++) {
            int fd = evs[i].data.fd;
            if (fd == s->wakefd) {
                uint64_t x;
                if (read(s->wakefd, &x, sizeof x) < 0) continue;
                continue;
            }
            int mask = (evs[i].events & EPOLLIN ? CURL_CSELECT_IN : 0) |
                       (evs[i].events & EPOLLOUT ? CURL_CSELECT_OUT : 0) |
                       (evs[i].events & (EPOLLERR | EPOLLHUP) ? CURL_CSELECT_ERR : 0);
            curl_multi_socket_action(s->multi, fd, mask, &running);
        }
        drain_done(s);
    }
    while (s->inflight.next != &s->inflight)
        abort_req(s, s->inflight.next);
    return NULL;
}

static void wake(struct sc_scraper *s)
{
    uint64_t one = 1;
    if (s->wakefd >= 0 && write(s->wakefd, &one, sizeof one) < 0) {
        /* the counter is full: the thread is awake anyway */
    }
}

/* ---- workers: decode, select, delta, sink ---- */

static void worker_push(struct sc_scraper *s, struct req *r)
{
    if (atomic_load(&s->backlog_items) >= BACKLOG_ITEMS ||
        atomic_load(&s->backlog_bytes) + r->body.len > BACKLOG_BYTES) {
        atomic_fetch_add(&s->n_backlog_dropped, 1);
        set_error(s, r->st, "dropped: the workers are behind (processing backlog full)");
        req_free(r);
        return;
    }
    atomic_fetch_add(&s->backlog_items, 1);
    atomic_fetch_add(&s->backlog_bytes, r->body.len);
    /* one worker per state, so a series' scrapes are processed in order */
    struct worker *w = &s->workers[sc_mix64(r->st->key) % NWORKERS];
    pthread_mutex_lock(&w->mu);
    r->next = NULL;
    if (w->tail)
        w->tail->next = r;
    else
        w->head = r;
    w->tail = r;
    pthread_cond_signal(&w->cv);
    pthread_mutex_unlock(&w->mu);
}

/* A body's first line, printable, for error messages. */
static void body_excerpt(const struct sc_buf *b, char *out, size_t n)
{
    size_t k = 0;
    for (size_t i = 0; i < b->len && k + 1 < n && i < 160; i++) {
        unsigned char c = (unsigned char)b->data[i];
        if (c == '\n' || c == '\r') break;
        out[k++] = c >= 0x20 && c < 0x7f ? (char)c : '?';
    }
    out[k] = 0;
}

/* Turns a successful response into the profile to store and hands it to the sink.
 * *delivered says whether there was anything (a first subtract scrape only makes the
 * baseline; empty profiles are not stored). 0 or SC_E* with the reason in err. */
static int handle_profile(struct sc_scraper *s, struct req *r, int *delivered, uint32_t *samples,
                          int *restarted, char *err)
{
    const struct kind *K = &kinds[r->kind];
    struct tstate *st = r->st;
    const void *data = r->body.data;
    size_t len = r->body.len;
    void *plain = NULL;
    int rc = 0;
    if (len == 0) return sc_errf(err, SC_EFORMAT, "empty response");
    if (sc_is_gzip(data, len)) {
        size_t plen;
        rc = sc_gunzip(data, len, scrape_limits.max_decompressed, &plain, &plen, err);
        if (rc) return sc_errwrap(err, rc, "bad gzip");
        data = plain;
        len = plen;
    }
    struct sc_profile *p = sc_profile_new();
    if (!p) {
        free(plain);
        return sc_errf(err, SC_ENOMEM, "out of memory");
    }
    rc = sc_pprof_decode(data, len, &scrape_limits, p, err);
    if (rc) {
        rc = sc_errwrap(err, rc, "not a pprof profile");
        goto out;
    }
    int64_t from = r->start_wall, until = r->start_wall;
    int reencode = 0, restart = 0;
    uint32_t nkeep = K->keep[0] ? 2 : 0;
    if (K->cumulative) {
        if (r->asked_delta && p->duration_nanos > 0) {
            /* the target's own delta over [request, request + interval) */
            int probe = MODE_PROBE;
            atomic_compare_exchange_strong(&st->mode, &probe, MODE_ENDPOINT);
            until = from + p->duration_nanos;
            if (nkeep && (rc = sc_profile_keep_types(p, K->keep, nkeep, err))) goto out;
            /* counters of one process only grow; never store a negative count */
            for (size_t i = 0; i < (size_t)p->nsamples * p->nsample_types; i++)
                if (p->values[i] < 0) {
                    p->values[i] = 0;
                    reencode = 1;
                }
            if (reencode) sc_profile_drop_zero_samples(p);
            reencode |= nkeep > 0;
        } else {
            if (r->asked_delta) {
                /* the target ignored ?seconds= and sent its counters */
                if (r->t->delta == SC_DELTA_ENDPOINT) {
                    rc = sc_errf(err, SC_EUNSUPPORTED,
                                 "the target answers ?seconds= without a delta (no "
                                 "duration_nanos); use 'delta: subtract'");
                    goto out;
                }
                atomic_store(&st->mode, MODE_SUBTRACT);
            }
            if (nkeep && (rc = sc_profile_keep_types(p, K->keep, nkeep, err))) goto out;
            pthread_mutex_lock(&st->mu);
            int d = sc_delta_apply(&st->delta, p, err);
            from = st->base_wall_ns;
            st->base_wall_ns = r->start_wall;
            pthread_mutex_unlock(&st->mu);
            if (d < 0) {
                rc = d;
                goto out;
            }
            if (d == SC_DELTA_FIRST) goto out; /* the baseline: nothing to store yet */
            restart = d == SC_DELTA_RESTART;
            reencode = 1;
        }
    } else if (nkeep) {
        if ((rc = sc_profile_keep_types(p, K->keep, nkeep, err))) goto out;
        reencode = 1;
    } else if (r->kind == 0) {
        until = from + (p->duration_nanos > 0 ? p->duration_nanos : r->t->cpu_seconds * NS);
    }
    *samples = sc_profile_nsamples(p);
    if (*samples == 0) goto out;
    struct sc_buf enc = SC_BUF_INIT;
    if (reencode) {
        p->time_nanos = from;
        p->duration_nanos = until - from;
        if (sc_pprof_encode(p, &enc) || enc.oom) {
            sc_buf_release(&enc);
            rc = sc_errf(err, SC_ENOMEM, "out of memory");
            goto out;
        }
        data = enc.data;
        len = enc.len;
    }
    struct sc_scraped sp = {
        .job = r->t->job,
        .instance = r->t->instance,
        .profile = K->name,
        .service_name = r->t->service,
        .labels = &r->t->labels,
        .pprof = data,
        .len = len,
        .from_ns = from,
        .until_ns = until,
        .samples = *samples,
        .restart = restart,
    };
    struct timespec c0, c1;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c0);
    rc = s->sink(s->sink_ctx, &sp, err);
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c1);
    atomic_fetch_add(&s->sink_cpu, (c1.tv_sec - c0.tv_sec) * NS + (c1.tv_nsec - c0.tv_nsec));
    if (rc)
        sc_errwrap(err, rc, "sink");
    else
        *delivered = 1;
    *restarted = restart;
    sc_buf_release(&enc);
out:
    sc_profile_free(p);
    free(plain);
    return rc;
}

static void process(struct sc_scraper *s, struct req *r)
{
    char err[SC_ERR_LEN] = "";
    int rc = 0, delivered = 0, restarted = 0;
    uint32_t samples = 0;
    if (r->cc != CURLE_OK) {
        rc = SC_EIO;
        if (r->too_big)
            snprintf(err, sizeof err, "response larger than %u MiB", MAX_BODY >> 20);
        else
            snprintf(err, sizeof err, "%s", r->errbuf[0] ? r->errbuf : curl_easy_strerror(r->cc));
    } else if (r->status < 200 || r->status > 299) {
        char ex[200];
        body_excerpt(&r->body, ex, sizeof ex);
        rc = SC_EIO;
        snprintf(err, sizeof err, "HTTP %ld%s%s", r->status, ex[0] ? ": " : "", ex);
    } else {
        rc = handle_profile(s, r, &delivered, &samples, &restarted, err);
    }
    struct tstate *st = r->st;
    pthread_mutex_lock(&s->health_mu);
    st->scrapes++;
    st->last_wall_ns = r->start_wall;
    st->last_dur_ns = r->end_mono - r->start_mono;
    st->last_bytes = r->body.len;
    if (rc) {
        st->health = HEALTH_DOWN;
        st->errors++;
        snprintf(st->last_error, sizeof st->last_error, "%s", err[0] ? err : sc_strerror(rc));
    } else {
        st->health = HEALTH_UP;
        st->last_error[0] = 0;
        st->last_samples = samples;
        st->profiles += delivered;
        st->restarts += restarted;
    }
    pthread_mutex_unlock(&s->health_mu);
    atomic_fetch_add(&s->n_scrapes, 1);
    if (rc) atomic_fetch_add(&s->n_errors, 1);
    atomic_fetch_add(&s->n_profiles, (unsigned)delivered);
}

struct worker_arg {
    struct sc_scraper *s;
    struct worker *w;
};

static void *worker_main(void *arg)
{
    struct sc_scraper *s = ((struct worker_arg *)arg)->s;
    struct worker *w = ((struct worker_arg *)arg)->w;
    free(arg);
    pthread_setname_np(pthread_self(), "scorch-scrapew");
    pthread_mutex_lock(&w->mu);
    for (;;) {
        while (!w->head && !w->stop)
            pthread_cond_wait(&w->cv, &w->mu);
        struct req *r = w->head;
        if (!r) break; /* stopping, and nothing left */
        w->head = r->next;
        if (!w->head) w->tail = NULL;
        pthread_mutex_unlock(&w->mu);
        size_t bytes = r->body.len;
        process(s, r);
        req_free(r);
        atomic_fetch_sub(&s->backlog_items, 1);
        atomic_fetch_sub(&s->backlog_bytes, bytes);
        pthread_mutex_lock(&w->mu);
    }
    pthread_mutex_unlock(&w->mu);
    return NULL;
}

/* ---- lifecycle ---- */

int sc_scraper_new(const struct sc_config *cfg, sc_scrape_sink sink, void *sink_ctx,
                   struct sc_scraper **out, char *err)
{
    sc_curl_global_init();
    struct sc_scraper *s = calloc(1, sizeof *s);
    if (!s) return sc_errf(err, SC_ENOMEM, "out of memory");
    s->sink = sink;
    s->sink_ctx = sink_ctx;
    s->inflight.next = s->inflight.prev = &s->inflight;
    pthread_mutex_init(&s->health_mu, NULL);
    pthread_mutex_init(&s->reload_mu, NULL);
    pthread_mutex_init(&s->pend_mu, NULL);
    pthread_cond_init(&s->pend_cv, NULL);
    for (int i = 0; i < NWORKERS; i++) {
        pthread_mutex_init(&s->workers[i].mu, NULL);
        pthread_cond_init(&s->workers[i].cv, NULL);
    }
    s->curl_deadline = -1;
    s->ep = epoll_create1(EPOLL_CLOEXEC);
    s->wakefd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    s->multi = curl_multi_init();
    struct epoll_event ev;
    memset(&ev, 0, sizeof ev);
    ev.events = EPOLLIN;
    ev.data.fd = s->wakefd;
    if (!s->multi || s->ep < 0 || s->wakefd < 0 ||
        epoll_ctl(s->ep, EPOLL_CTL_ADD, s->wakefd, &ev)) {
        sc_scraper_stop_free(s);
        return sc_errf(err, SC_ENOMEM, "cannot set up the scraper's event loop");
    }
    curl_multi_setopt(s->multi, CURLMOPT_SOCKETFUNCTION, on_socket);
    curl_multi_setopt(s->multi, CURLMOPT_SOCKETDATA, s);
    curl_multi_setopt(s->multi, CURLMOPT_TIMERFUNCTION, on_timer);
    curl_multi_setopt(s->multi, CURLMOPT_TIMERDATA, s);
    struct gen *g;
    int rc = build_gen(s, cfg, &g, err);
    if (rc) {
        sc_scraper_stop_free(s);
        return rc;
    }
    apply_gen(s, g);
    *out = s;
    return 0;
}

int sc_scraper_start(struct sc_scraper *s, char *err)
{
    for (int i = 0; i < NWORKERS; i++) {
        struct worker_arg *a = malloc(sizeof *a);
        if (!a) return sc_errf(err, SC_ENOMEM, "out of memory");
        a->s = s;
        a->w = &s->workers[i];
        if (pthread_create(&s->workers[i].th, NULL, worker_main, a)) {
            free(a);
            return sc_errf(err, SC_EINTERNAL, "cannot start a worker thread");
        }
        /* health_mu: sc_scraper_stats reads these from other threads */
        pthread_mutex_lock(&s->health_mu);
        s->workers[i].running = 1;
        if (pthread_getcpuclockid(s->workers[i].th, &s->workers[i].clock))
            s->workers[i].clock = (clockid_t)-1;
        pthread_mutex_unlock(&s->health_mu);
    }
    pthread_mutex_lock(&s->reload_mu);
    /* the grid as of now: time may have passed since sc_scraper_new (a store opening), and
     * slots before the start are not late or missed */
    int64_t now = mono_ns(), wall = wall_ns();
    pthread_mutex_lock(&s->health_mu);
    for (uint32_t i = 0; s->gen && i < s->gen->n; i++) {
        struct tstate *st = s->gen->tasks[i].st;
        st->next_due = first_due(s->gen->tasks[i].t, now, wall);
        st->next_due_wall_ns = wall + (st->next_due - now);
    }
    pthread_mutex_unlock(&s->health_mu);
    for (uint32_t i = s->nheap / 2; i-- > 0;)
        heap_down(s, i);
    int rc = pthread_create(&s->thread, NULL, scrape_main, s);
    if (!rc) {
        pthread_mutex_lock(&s->health_mu);
        s->started = 1;
        if (pthread_getcpuclockid(s->thread, &s->clock)) s->clock = (clockid_t)-1;
        pthread_mutex_unlock(&s->health_mu);
    }
    pthread_mutex_unlock(&s->reload_mu);
    return rc ? sc_errf(err, SC_EINTERNAL, "cannot start the scraping thread") : 0;
}

int sc_scraper_reload(struct sc_scraper *s, const struct sc_config *cfg, char *err)
{
    pthread_mutex_lock(&s->reload_mu);
    struct gen *g;
    int rc = build_gen(s, cfg, &g, err);
    if (!rc && !s->started) {
        apply_gen(s, g);
    } else if (!rc) {
        pthread_mutex_lock(&s->pend_mu);
        s->pending = g;
        wake(s);
        while (s->pending)
            pthread_cond_wait(&s->pend_cv, &s->pend_mu);
        pthread_mutex_unlock(&s->pend_mu);
    }
    pthread_mutex_unlock(&s->reload_mu);
    return rc;
}

void sc_scraper_stop_free(struct sc_scraper *s)
{
    if (!s) return;
    if (s->started) {
        atomic_store(&s->stop, 1);
        wake(s);
        pthread_join(s->thread, NULL);
    }
    for (int i = 0; i < NWORKERS; i++) {
        struct worker *w = &s->workers[i];
        if (w->running) {
            pthread_mutex_lock(&w->mu);
            w->stop = 1;
            pthread_cond_signal(&w->cv);
            pthread_mutex_unlock(&w->mu);
            pthread_join(w->th, NULL);
        }
        pthread_mutex_destroy(&w->mu);
        pthread_cond_destroy(&w->cv);
    }
    while (s->inflight.next != &s->inflight)
        abort_req(s, s->inflight.next);
    gen_free(s->pending);
    gen_free(s->gen);
    free(s->heap);
    if (s->multi) curl_multi_cleanup(s->multi);
    if (s->ep >= 0) close(s->ep);
    if (s->wakefd >= 0) close(s->wakefd);
    pthread_mutex_destroy(&s->health_mu);
    pthread_mutex_destroy(&s->reload_mu);
    pthread_mutex_destroy(&s->pend_mu);
    pthread_cond_destroy(&s->pend_cv);
    free(s);
}

/* ---- health, metrics, stats ---- */

static void put_time(struct sc_buf *b, int64_t ns)
{
    if (!ns) {
        sc_buf_puts(b, "null");
        return;
    }
    time_t t = (time_t)(ns / NS);
    struct tm tm;
    gmtime_r(&t, &tm);
    char s[64];
    strftime(s, sizeof s, "%Y-%m-%dT%H:%M:%S", &tm);
    sc_buf_printf(b, "\"%s.%03dZ\"", s, (int)(ns % NS / 1000000));
}

static void put_jstr(struct sc_buf *b, const char *s)
{
    sc_buf_putc(b, '"');
    sc_buf_put_json_str(b, s, strlen(s));
    sc_buf_putc(b, '"');
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
    sc_buf_putc(out, '[');
    for (uint32_t i = 0; s->gen && i < s->gen->n; i++) {
        const struct task *tk = &s->gen->tasks[i];
        const struct tstate *st = tk->st;
        int mode = atomic_load(&st->mode), asked;
        char *url = task_url(tk->t, st->kind, mode, &asked);
        sc_buf_puts(out, i ? ",\n{\"job\":" : "\n{\"job\":");
        put_jstr(out, tk->t->job);
        sc_buf_puts(out, ",\"instance\":");
        put_jstr(out, tk->t->instance);
        sc_buf_puts(out, ",\"profile\":");
        put_jstr(out, kinds[st->kind].name);
        sc_buf_puts(out, ",\"url\":");
        put_jstr(out, url ? url : "");
        free(url);
        sc_buf_puts(out, ",\"labels\":{");
        for (uint32_t k = 0; k < tk->t->labels.n; k++) {
            const struct sc_label_pair *lp = &tk->t->labels.v[k];
            sc_buf_puts(out, k ? ",\"" : "\"");
            sc_buf_put_json_str(out, lp->name.ptr, lp->name.len);
            sc_buf_puts(out, "\":\"");
            sc_buf_put_json_str(out, lp->value.ptr, lp->value.len);
            sc_buf_putc(out, '"');
        }
        sc_buf_printf(out, "},\"health\":\"%s\",\"last_scrape\":",
                      st->health == HEALTH_UP     ? "up"
                      : st->health == HEALTH_DOWN ? "down"
                                                  : "unknown");
        put_time(out, st->last_wall_ns);
        sc_buf_printf(
            out, ",\"last_scrape_duration_seconds\":%.6f,\"last_error\":", st->last_dur_ns / 1e9);
        put_jstr(out, st->last_error);
        sc_buf_puts(out, ",\"next_due\":");
        put_time(out, st->next_due_wall_ns);
        sc_buf_printf(out,
                      ",\"interval_seconds\":%g,\"delta\":\"%s\",\"samples\":%u,"
                      "\"scrapes\":%llu,\"errors\":%llu,\"skipped\":%llu,\"profiles\":%llu,"
                      "\"restarts\":%llu}",
                      tk->t->interval_ns / 1e9, mode_name(mode), (unsigned)st->last_samples,
                      (unsigned long long)st->scrapes, (unsigned long long)st->errors,
                      (unsigned long long)st->skipped, (unsigned long long)st->profiles,
                      (unsigned long long)st->restarts);
    }
    pthread_mutex_unlock(&s->health_mu);
    sc_buf_puts(out, "\n]\n");
}

static void prom_value(struct sc_buf *b, const char *s)
{
    for (; *s; s++) {
        if (*s == '\\' || *s == '"')
            sc_buf_putc(b, '\\'), sc_buf_putc(b, *s);
        else if (*s == '\n')
            sc_buf_puts(b, "\\n");
        else
            sc_buf_putc(b, *s);
    }
}

static int64_t thread_cpu(clockid_t c)
{
    struct timespec ts;
    if (c == (clockid_t)-1 || clock_gettime(c, &ts)) return 0;
    return (int64_t)ts.tv_sec * NS + ts.tv_nsec;
}

void sc_scraper_stats(struct sc_scraper *s, struct sc_scraper_stats *st)
{
    memset(st, 0, sizeof *st);
    pthread_mutex_lock(&s->health_mu);
    st->tasks = s->gen ? s->gen->n : 0;
    if (s->started) st->scraper_cpu_ns = thread_cpu(s->clock);
    for (int i = 0; i < NWORKERS; i++)
        if (s->workers[i].running) st->workers_cpu_ns += thread_cpu(s->workers[i].clock);
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
        const char *name, *type, *help;
    } m[] = {
        {"scorch_scrape_up", "gauge", "1 when the last scrape of the target's profile worked."},
        {"scorch_scrape_duration_seconds", "gauge", "How long the last scrape took."},
        {"scorch_scrape_samples", "gauge", "Samples in the last profile stored."},
        {"scorch_scrape_bytes", "gauge", "Bytes of the last response."},
        {"scorch_scrapes_total", "counter", "Scrapes finished."},
        {"scorch_scrape_errors_total", "counter", "Scrapes that failed."},
        {"scorch_scrape_skipped_total", "counter",
         "Slots skipped because the previous scrape still ran."},
        {"scorch_scrape_profiles_total", "counter", "Profiles handed on to be stored."},
        {"scorch_scrape_restarts_total", "counter",
         "Cumulative counters that went down (target restarts): new baselines."},
    };
    pthread_mutex_lock(&s->health_mu);
    for (size_t k = 0; k < sizeof m / sizeof m[0]; k++) {
        sc_buf_printf(out, "# HELP %s %s\n# TYPE %s %s\n", m[k].name, m[k].help, m[k].name,
                      m[k].type);
        for (uint32_t i = 0; s->gen && i < s->gen->n; i++) {
            const struct task *tk = &s->gen->tasks[i];
            const struct tstate *st = tk->st;
            sc_buf_printf(out, "%s{job=\"", m[k].name);
            prom_value(out, tk->t->job);
            sc_buf_puts(out, "\",instance=\"");
            prom_value(out, tk->t->instance);
            sc_buf_printf(out, "\",profile=\"%s\"} ", kinds[st->kind].name);
            switch (k) {
            case 0:
                sc_buf_puts(out, st->health == HEALTH_UP ? "1\n" : "0\n");
                break;
            case 1:
                sc_buf_printf(out, "%.6f\n", st->last_dur_ns / 1e9);
                break;
            case 2:
                sc_buf_printf(out, "%u\n", (unsigned)st->last_samples);
                break;
            case 3:
                sc_buf_printf(out, "%llu\n", (unsigned long long)st->last_bytes);
                break;
            default: {
                uint64_t v = k == 4   ? st->scrapes
                             : k == 5 ? st->errors
                             : k == 6 ? st->skipped
                             : k == 7 ? st->profiles
                                      : st->restarts;
                sc_buf_printf(out, "%llu\n", (unsigned long long)v);
            }
            }
        }
    }
    uint32_t ntasks = s->gen ? s->gen->n : 0;
    pthread_mutex_unlock(&s->health_mu);
    struct sc_scraper_stats st;
    sc_scraper_stats(s, &st);
    sc_buf_printf(out,
                  "# HELP scorch_scrape_tasks Scrape tasks (target x profile type).\n"
                  "# TYPE scorch_scrape_tasks gauge\nscorch_scrape_tasks %u\n",
                  (unsigned)ntasks);
    sc_buf_puts(out, "# HELP scorch_scrape_schedule_lag_seconds How late requests started "
                     "against their slot on the schedule.\n"
                     "# TYPE scorch_scrape_schedule_lag_seconds histogram\n");
    uint64_t cum = 0;
    for (int i = 0; i < SC_SCRAPE_LAG_BUCKETS; i++) {
        cum += st.lag_buckets[i];
        if (i == SC_SCRAPE_LAG_BUCKETS - 1)
            sc_buf_printf(out, "scorch_scrape_schedule_lag_seconds_bucket{le=\"+Inf\"} %llu\n",
                          (unsigned long long)cum);
        else
            sc_buf_printf(out, "scorch_scrape_schedule_lag_seconds_bucket{le=\"%g\"} %llu\n",
                          sc_scrape_lag_bounds[i], (unsigned long long)cum);
    }
    sc_buf_printf(out, "scorch_scrape_schedule_lag_seconds_count %llu\n",
                  (unsigned long long)st.lag_count);
    sc_buf_printf(out,
                  "# HELP scorch_scrape_schedule_lag_max_seconds The latest start seen.\n"
                  "# TYPE scorch_scrape_schedule_lag_max_seconds gauge\n"
                  "scorch_scrape_schedule_lag_max_seconds %.6f\n"
                  "# HELP scorch_scrape_cpu_seconds_total CPU time of the scraper's threads.\n"
                  "# TYPE scorch_scrape_cpu_seconds_total counter\n"
                  "scorch_scrape_cpu_seconds_total{thread=\"scrape\"} %.6f\n"
                  "scorch_scrape_cpu_seconds_total{thread=\"workers\"} %.6f\n"
                  "# HELP scorch_scrape_backlog_dropped_total Scraped profiles dropped because "
                  "the workers were behind.\n"
                  "# TYPE scorch_scrape_backlog_dropped_total counter\n"
                  "scorch_scrape_backlog_dropped_total %llu\n",
                  st.lag_max_ns / 1e9, st.scraper_cpu_ns / 1e9, st.workers_cpu_ns / 1e9,
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
    return sc_ingest(store, &q, &scrape_limits, &res, err);
}

static void url_encode(struct sc_buf *b, const char *s, size_t n)
{
    static const char hex[] = "0123456789ABCDEF";
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
            c == '-' || c == '_' || c == '.' || c == '~') {
            sc_buf_putc(b, (char)c);
        } else {
            sc_buf_putc(b, '%');
            sc_buf_putc(b, hex[c >> 4]);
            sc_buf_putc(b, hex[c & 15]);
        }
    }
}

int sc_scrape_push_query(const struct sc_scraped *p, struct sc_buf *out, char *err)
{
    const char *suffix = NULL;
    for (int k = 0; k < NKINDS; k++)
        if (!strcmp(kinds[k].name, p->profile)) suffix = kinds[k].suffix;
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
        if (lp->name.len == 12 && !memcmp(lp->name.ptr, "service_name", 12)) continue;
        if (memchr(lp->value.ptr, '"', lp->value.len)) {
            sc_buf_release(&name);
            return sc_errf(err, SC_EINVAL,
                           "the value of label '%.*s' has a '\"', which a Pyroscope name "
                           "cannot carry",
                           (int)lp->name.len, lp->name.ptr);
        }
        if (!first) sc_buf_putc(&name, ',');
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
    int64_t from = p->from_ns / NS, until = (p->until_ns + NS / 2) / NS;
    if (until < from) until = from;
    sc_buf_puts(out, "name=");
    url_encode(out, name.data, name.len);
    sc_buf_printf(out, "&from=%lld&until=%lld&format=pprof", (long long)from, (long long)until);
    sc_buf_release(&name);
    return out->oom ? sc_errf(err, SC_ENOMEM, "out of memory") : 0;
}
