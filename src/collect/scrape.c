/* scrape.c - the scraper: tasks from the config, the schedule, libcurl's multi interface. */
#include "collect/scrape_int.h"
#include "ingest/ingest.h"
#include "model/hash.h"
#include "model/setting.h"
#include "model/dl_curl.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

/* The profile types, in SC_PROFILE_* bit order. */
_Static_assert(SC_PROFILE_ALL == (1 << NKINDS) - 1, "one kind per SC_PROFILE_* bit");
const struct sc_scrape_kind sc_scrape_kinds[NKINDS] = {
    {"cpu", "profile", 0, {NULL, NULL}, "cpu"},
    {"heap", "heap", 0, {"inuse_objects", "inuse_space"}, "inuse_space"},
    {"allocs", "allocs", 1, {"alloc_objects", "alloc_space"}, NULL},
    {"goroutine", "goroutine", 0, {NULL, NULL}, "goroutines"},
    {"mutex", "mutex", 1, {NULL, NULL}, "mutex_count"},
    {"block", "block", 1, {NULL, NULL}, "block_count"},
    {"threadcreate", "threadcreate", 0, {NULL, NULL}, NULL},
};

/* ---- small helpers ---- */

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
        sym_curl_slist_free_all(t->headers);
        free(t->user);
        free(t->password);
        free(t);
    }
}

static void gen_free(struct gen *g)
{
    if (!g)
        return;
    for (uint32_t i = 0; i < g->n; i++) {
        target_unref(g->tasks[i].t);
        tstate_unref(g->tasks[i].st);
    }
    free(g->tasks);
    free(g);
}

void sc_scrape_req_free(struct req *r)
{
    if (!r)
        return;
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
    if (!sc_scrape_kinds[kind].cumulative)
        return MODE_NONE;
    if (cfg_delta == SC_DELTA_SUBTRACT)
        return MODE_SUBTRACT;
    if (cfg_delta == SC_DELTA_ENDPOINT)
        return MODE_ENDPOINT;
    /* Go's ?seconds= takes whole seconds */
    return interval_ns % SC_NS_PER_S == 0 ? MODE_PROBE : MODE_SUBTRACT;
}

/* ---- building a configuration's tasks ---- */

static int valid_instance(const char *s)
{
    const char *colon = strrchr(s, ':');
    if (!colon || colon == s || !colon[1])
        return 0;
    for (const char *p = colon + 1; *p; p++)
        if (*p < '0' || *p > '9')
            return 0;
    for (const char *p = s; p < colon; p++)
        if (*p <= ' ' || strchr("/?#@\"\\{}", *p))
            return 0;
    return 1;
}

static int valid_label_name(const char *s)
{
    if (!sc_labels_is_name_start((unsigned char)*s))
        return 0;
    for (s++; *s; s++)
        if (!sc_labels_is_name_char((unsigned char)*s))
            return 0;
    return 1;
}

static int build_target(const struct sc_scrape_job *j, const char *inst, struct target **out,
                        char *err)
{
    struct target *t = calloc(1, sizeof *t);
    if (!t)
        return sc_errf(err, SC_ENOMEM, "out of memory");
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
    if (!rc && !*service)
        rc = sc_errf(err, SC_EINVAL, "job '%s': empty service_name", j->job_name);
    if (!rc) {
        /* the service name travels as a Pyroscope application name: it must read back as
         * itself (no braces, no profile-type suffix such as '.cpu') */
        struct sc_labels tmp;
        sc_labels_init(&tmp);
        char sfx[32], perr[SC_ERR_LEN];
        struct sc_str got = {"", 0};
        int prc = sc_ingest_parse_name(service, &tmp, 4, sfx, perr);
        if (prc == 0)
            sc_labels_get(&tmp, "service_name", 12, &got);
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
            t->headers = sym_curl_slist_append(NULL, h);
            free(h);
        }
        if (!t->headers)
            rc = sc_errf(err, SC_ENOMEM, "out of memory");
    }
    if (!rc && j->basic_user) {
        t->user = strdup(j->basic_user);
        t->password = strdup(j->basic_password ? j->basic_password : "");
        if (!t->user || !t->password)
            rc = sc_errf(err, SC_ENOMEM, "out of memory");
    }
    t->interval_ns = j->interval_ns;
    /* a job not from the config (tests, the agent's own) gets the config's defaults */
    t->timeout_ns = j->timeout_ns ? j->timeout_ns : sc_setting_default_i(SC_SET_SCRAPE_TIMEOUT);
    t->cpu_seconds = j->cpu_seconds ? j->cpu_seconds
                                    : sc_setting_default_i(SC_SET_SCRAPE_CPU_SECONDS) / SC_NS_PER_S;
    /* Go runs one CPU profile at a time: keep it inside the interval */
    if (t->cpu_seconds * SC_NS_PER_S >= t->interval_ns)
        t->cpu_seconds =
            t->interval_ns / SC_NS_PER_S - 1 >= 1 ? t->interval_ns / SC_NS_PER_S - 1 : 1;
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
    if (!g)
        return sc_errf(err, SC_ENOMEM, "out of memory");
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
        if (!rc && j->delta == SC_DELTA_ENDPOINT && j->interval_ns % SC_NS_PER_S)
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
            if (!added)
                continue; /* the same target twice */
            struct target *t = NULL;
            rc = build_target(j, inst, &t, err);
            if (rc)
                break;
            for (int kind = 0; kind < NKINDS && !rc; kind++) {
                if (!(j->profiles & (1u << kind)))
                    continue;
                if (sc_grow_array(&g->tasks, &cap, (uint64_t)g->n + 1, sizeof *g->tasks)) {
                    rc = sc_errf(err, SC_ENOMEM, "out of memory");
                    break;
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
        if (l < s->nheap && heap_less(s->heap[l], s->heap[m]))
            m = l;
        if (r < s->nheap && heap_less(s->heap[r], s->heap[m]))
            m = r;
        if (m == i)
            return;
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
    if (r < 0)
        r += iv;
    return now_mono + (r ? iv - r : 0);
}

static void abort_req(struct sc_scraper *s, struct req *r)
{
    sym_curl_multi_remove_handle(s->multi, r->easy);
    sym_curl_easy_cleanup(r->easy);
    r->prev->next = r->next;
    r->next->prev = r->prev;
    r->st->inflight--;
    sc_scrape_req_free(r);
}

/* Puts a new config in effect (the scraping thread, or the caller before start). */
static void apply_gen(struct sc_scraper *s, struct gen *g)
{
    int64_t now = sc_mono_ns(), wall = sc_wall_ns();
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
        if (r->st->gen != g->id)
            abort_req(s, r);
    }
    /* NOLINTNEXTLINE(bugprone-sizeof-expression): an array of pointers */
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
    sym_curl_multi_setopt(s->multi, CURLMOPT_MAXCONNECTS, (long)(g->n > 64 ? g->n : 64));
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
char *sc_scrape_task_url(const struct target *t, int kind, int mode, int *asked_delta)
{
    char q[64] = "";
    *asked_delta = 0;
    if (kind == 0) {
        snprintf(q, sizeof q, "?seconds=%lld", (long long)t->cpu_seconds);
    } else if (sc_scrape_kinds[kind].cumulative && (mode == MODE_PROBE || mode == MODE_ENDPOINT)) {
        snprintf(q, sizeof q, "?seconds=%lld", (long long)(t->interval_ns / SC_NS_PER_S));
        *asked_delta = 1;
    }
    size_t n = strlen(t->base) + strlen(sc_scrape_kinds[kind].path) + strlen(q) + 2;
    char *u = malloc(n);
    if (u)
        snprintf(u, n, "%s/%s%s", t->base, sc_scrape_kinds[kind].path, q);
    return u;
}

void sc_scrape_set_error(struct sc_scraper *s, struct tstate *st, const char *msg)
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
        sc_scrape_set_error(s, st, "out of memory");
        return;
    }
    r->url = sc_scrape_task_url(t, kind, atomic_load(&st->mode), &r->asked_delta);
    r->easy = sym_curl_easy_init();
    if (!r->url || !r->easy) {
        if (r->easy)
            sym_curl_easy_cleanup(r->easy);
        free(r->url);
        free(r);
        sc_scrape_set_error(s, st, "out of memory");
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
        timeout += t->cpu_seconds * SC_NS_PER_S;
    else if (r->asked_delta)
        timeout += t->interval_ns;
    CURL *e = r->easy;
    sym_curl_easy_setopt(e, CURLOPT_URL, r->url);
    sym_curl_easy_setopt(e, CURLOPT_PRIVATE, r);
    sym_curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_data);
    sym_curl_easy_setopt(e, CURLOPT_WRITEDATA, r);
    sym_curl_easy_setopt(e, CURLOPT_ERRORBUFFER, r->errbuf);
    sym_curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
    sym_curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, (long)(timeout / 1000000));
    sym_curl_easy_setopt(
        e, CURLOPT_CONNECTTIMEOUT_MS,
        (long)((t->timeout_ns < 10 * SC_NS_PER_S ? t->timeout_ns : 10 * SC_NS_PER_S) / 1000000));
    sym_curl_easy_setopt(e, CURLOPT_USERAGENT, "scorch-scraper/0.1");
    sym_curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
    sym_curl_easy_setopt(e, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)MAX_BODY);
    if (t->headers)
        sym_curl_easy_setopt(e, CURLOPT_HTTPHEADER, t->headers);
    if (t->user) {
        sym_curl_easy_setopt(e, CURLOPT_HTTPAUTH, (long)CURLAUTH_BASIC);
        sym_curl_easy_setopt(e, CURLOPT_USERNAME, t->user);
        sym_curl_easy_setopt(e, CURLOPT_PASSWORD, t->password);
    }
    r->start_mono = sc_mono_ns();
    r->start_wall = sc_wall_ns();
    if (sym_curl_multi_add_handle(s->multi, e) != CURLM_OK) {
        sym_curl_easy_cleanup(e);
        sc_scrape_req_free(r);
        sc_scrape_set_error(s, st, "cannot start a request");
        return;
    }
    st->inflight++;
    r->next = s->inflight.next;
    r->prev = &s->inflight;
    s->inflight.next->prev = r;
    s->inflight.next = r;
    /* how late the request started against its slot on the grid */
    int64_t lag = r->start_mono - due;
    if (lag < 0)
        lag = 0;
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
    int overlap =
        sc_scrape_kinds[st->kind].cumulative && (mode == MODE_PROBE || mode == MODE_ENDPOINT);
    int skip = st->inflight >= (overlap ? 2 : 1);
    if (missed > 0 || skip) {
        pthread_mutex_lock(&s->health_mu);
        st->skipped += (uint64_t)missed + (skip ? 1 : 0);
        pthread_mutex_unlock(&s->health_mu);
        atomic_fetch_add(&s->n_skipped, (uint64_t)missed + (skip ? 1 : 0));
    }
    if (!skip)
        start_req(s, tk->t, st, due);
    pthread_mutex_lock(&s->health_mu);
    st->next_due_wall_ns = sc_wall_ns() + (st->next_due - sc_mono_ns());
    pthread_mutex_unlock(&s->health_mu);
}

static void complete(struct sc_scraper *s, CURL *e, CURLcode cc)
{
    struct req *r = NULL;
    sym_curl_easy_getinfo(e, CURLINFO_PRIVATE, (char **)&r);
    r->cc = cc;
    r->end_mono = sc_mono_ns();
    sym_curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, &r->status);
    sym_curl_multi_remove_handle(s->multi, e);
    sym_curl_easy_cleanup(e);
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
            start_req(s, r->t, r->st, sc_mono_ns());
        /* else: a second probe that overlapped the first; the switch is made */
        sc_scrape_req_free(r);
        return;
    }
    sc_scrape_work_push(s, r);
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
        sym_curl_multi_assign(s->multi, fd, (void *)1);
        if (epoll_ctl(s->ep, EPOLL_CTL_ADD, fd, &ev) == 0 || errno != EEXIST)
            return 0;
    }
    epoll_ctl(s->ep, EPOLL_CTL_MOD, fd, &ev);
    return 0;
}

static int on_timer(CURLM *m, long timeout_ms, void *userp)
{
    (void)m;
    struct sc_scraper *s = userp;
    s->curl_deadline = timeout_ms < 0 ? -1 : sc_mono_ns() + (int64_t)timeout_ms * 1000000;
    return 0;
}

static void drain_done(struct sc_scraper *s)
{
    CURLMsg *m;
    int left;
    while ((m = sym_curl_multi_info_read(s->multi, &left)))
        if (m->msg == CURLMSG_DONE)
            complete(s, m->easy_handle, m->data.result);
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
        int64_t now = sc_mono_ns();
        while (s->nheap && s->heap[0]->st->next_due <= now) {
            fire(s, s->heap[0], now);
            heap_down(s, 0);
        }
        if (s->curl_deadline >= 0 && sc_mono_ns() >= s->curl_deadline) {
            s->curl_deadline = -1;
            sym_curl_multi_socket_action(s->multi, CURL_SOCKET_TIMEOUT, 0, &running);
            drain_done(s);
            continue; /* the timer may have started more work, or be due again */
        }
        now = sc_mono_ns();
        int64_t until = now + SC_NS_PER_S;
        if (s->nheap && s->heap[0]->st->next_due < until)
            until = s->heap[0]->st->next_due;
        if (s->curl_deadline >= 0 && s->curl_deadline < until)
            until = s->curl_deadline;
        int64_t wait = until > now ? until - now : 0;
        int n = epoll_wait(s->ep, evs, (int)(sizeof evs / sizeof evs[0]),
                           (int)((wait + 999999) / 1000000));
        for (int i = 0; i < n; i++) {
            int fd = evs[i].data.fd;
            if (fd == s->wakefd) {
                uint64_t x;
                if (read(s->wakefd, &x, sizeof x) < 0)
                    continue;
                continue;
            }
            int mask = (evs[i].events & EPOLLIN ? CURL_CSELECT_IN : 0) |
                       (evs[i].events & EPOLLOUT ? CURL_CSELECT_OUT : 0) |
                       (evs[i].events & (EPOLLERR | EPOLLHUP) ? CURL_CSELECT_ERR : 0);
            sym_curl_multi_socket_action(s->multi, fd, mask, &running);
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

/* ---- lifecycle ---- */

int sc_scraper_new(const struct sc_config *cfg, sc_scrape_sink sink, void *sink_ctx,
                   struct sc_scraper **out, char *err)
{
    int rc = sc_dl_load(SC_DL_CURL, err);
    if (rc)
        return rc;
    struct sc_scraper *s = calloc(1, sizeof *s);
    if (!s)
        return sc_errf(err, SC_ENOMEM, "out of memory");
    s->sink = sink;
    s->sink_ctx = sink_ctx;
    s->inflight.next = s->inflight.prev = &s->inflight;
    pthread_mutex_init(&s->health_mu, NULL);
    pthread_mutex_init(&s->reload_mu, NULL);
    pthread_mutex_init(&s->pend_mu, NULL);
    sc_cond_init(&s->pend_cv);
    for (int i = 0; i < NWORKERS; i++) {
        pthread_mutex_init(&s->workers[i].mu, NULL);
        sc_cond_init(&s->workers[i].cv);
    }
    s->curl_deadline = -1;
    s->ep = epoll_create1(EPOLL_CLOEXEC);
    s->wakefd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    s->multi = sym_curl_multi_init();
    struct epoll_event ev;
    memset(&ev, 0, sizeof ev);
    ev.events = EPOLLIN;
    ev.data.fd = s->wakefd;
    if (!s->multi || s->ep < 0 || s->wakefd < 0 ||
        epoll_ctl(s->ep, EPOLL_CTL_ADD, s->wakefd, &ev)) {
        sc_scraper_stop_free(s);
        return sc_errf(err, SC_ENOMEM, "cannot set up the scraper's event loop");
    }
    sym_curl_multi_setopt(s->multi, CURLMOPT_SOCKETFUNCTION, on_socket);
    sym_curl_multi_setopt(s->multi, CURLMOPT_SOCKETDATA, s);
    sym_curl_multi_setopt(s->multi, CURLMOPT_TIMERFUNCTION, on_timer);
    sym_curl_multi_setopt(s->multi, CURLMOPT_TIMERDATA, s);
    struct gen *g;
    rc = build_gen(s, cfg, &g, err);
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
        struct sc_scrape_worker_arg *a = malloc(sizeof *a);
        if (!a)
            return sc_errf(err, SC_ENOMEM, "out of memory");
        a->s = s;
        a->w = &s->workers[i];
        if (pthread_create(&s->workers[i].th, NULL, sc_scrape_worker_main, a)) {
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
    int64_t now = sc_mono_ns(), wall = sc_wall_ns();
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
        if (pthread_getcpuclockid(s->thread, &s->clock))
            s->clock = (clockid_t)-1;
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
    if (!s)
        return;
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
    if (s->multi)
        sym_curl_multi_cleanup(s->multi);
    if (s->ep >= 0)
        close(s->ep);
    if (s->wakefd >= 0)
        close(s->wakefd);
    pthread_mutex_destroy(&s->health_mu);
    pthread_mutex_destroy(&s->reload_mu);
    pthread_mutex_destroy(&s->pend_mu);
    pthread_cond_destroy(&s->pend_cv);
    free(s);
}

void sc_scrape_raise_fd_limit(void)
{
    struct rlimit rl;
    if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
}
