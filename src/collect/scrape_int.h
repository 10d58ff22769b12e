/* scrape_int.h - what the scraper's files share: tasks, their state, requests, workers. */
#ifndef SC_SCRAPE_INT_H
#define SC_SCRAPE_INT_H

#include "collect/delta.h"
#include "collect/scrape.h"
#include "formats/input.h"
#include "model/clock.h"
#include "model/error.h"

#include <curl/curl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>

#define NWORKERS 2
#define MAX_BODY (64u << 20)         /* bytes of one response (sc_limits_scrape decodes) */
#define BACKLOG_BYTES (256ull << 20) /* scraped bodies waiting for the workers */
#define BACKLOG_ITEMS 4096

/* The profile types, in SC_PROFILE_* bit order (scrape.c). */
struct sc_scrape_kind {
    const char *name, *path;
    int cumulative;      /* needs a per-interval delta */
    const char *keep[2]; /* sample types kept, or none: all */
    const char *suffix;  /* Pyroscope name suffix that names the type, or NULL */
};
#define NKINDS 7
extern const struct sc_scrape_kind sc_scrape_kinds[NKINDS];

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

/* scrape.c: requests and state */
void sc_scrape_req_free(struct req *r);
/* The URL a request of this task uses now (and whether it asks for ?seconds= of a delta).
 * Caller frees. */
char *sc_scrape_task_url(const struct target *t, int kind, int mode, int *asked_delta);
/* Marks a task down with msg (not a scrape: a failure to start or hand on one). */
void sc_scrape_set_error(struct sc_scraper *s, struct tstate *st, const char *msg);

/* scrape_work.c: a finished request to its worker (which frees it), and the workers */
void sc_scrape_work_push(struct sc_scraper *s, struct req *r);
void *sc_scrape_worker_main(void *arg);
struct sc_scrape_worker_arg {
    struct sc_scraper *s;
    struct worker *w;
};

#endif
