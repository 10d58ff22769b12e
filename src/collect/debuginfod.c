/* debuginfod.c - a worker thread asking debuginfod servers for debug files by build id. */
#include "collect/debuginfod.h"
#include "model/buf.h"
#include "model/clock.h"
#include "model/dl_debuginfod.h"
#include "model/error.h"

#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* One build id asked for. */
struct ent {
    uint8_t id[20];
    uint32_t n;
    enum sc_debuginfod_state state;
    int64_t asked_ns; /* when it was (last) queued: the worker takes the oldest first */
    int64_t done_ns;  /* when it failed */
    uint32_t failures;
    char *path;   /* FOUND: the file in libdebuginfod's cache */
    char why[96]; /* FAILED */
};

struct sc_debuginfod {
    pthread_t th;
    pthread_mutex_t mu; /* guards everything below */
    pthread_cond_t cv;  /* a change of state, a new request, stop */
    int stop;
    struct ent *v;
    uint32_t n, cap;
    int64_t timeout_ns, retry_ns;
    int64_t deadline_ns; /* of the fetch under way (read by the progress callback) */
    int aborted;         /* ... which it abandoned */
};

/* libdebuginfod calls this about once a second during a transfer (also while it waits for a
 * server that accepted and says nothing): non-zero abandons the transfer. */
static int progress(debuginfod_client *c, long a, long b)
{
    (void)a, (void)b;
    struct sc_debuginfod *d = sym_debuginfod_get_user_data(c);
    pthread_mutex_lock(&d->mu);
    int quit = d->stop || sc_mono_ns() > d->deadline_ns;
    d->aborted |= quit;
    pthread_mutex_unlock(&d->mu);
    return quit;
}

/* The oldest pending entry, or NULL. */
static struct ent *next_pending(struct sc_debuginfod *d)
{
    struct ent *best = NULL;
    for (uint32_t i = 0; i < d->n; i++)
        if (d->v[i].state == SC_DEBUGINFOD_PENDING && (!best || d->v[i].asked_ns < best->asked_ns))
            best = &d->v[i];
    return best;
}

/* libdebuginfod takes a transfer we abandoned for a miss and leaves its empty marker in the
 * cache, which would answer "not found" for the next 10 minutes (its cache_miss_s), to this
 * process and the next: a slow server is asked again instead. The cache is where
 * libdebuginfod puts it. */
static void forget_miss(const uint8_t *id, uint32_t n)
{
    char dir[4096], hex[41];
    const char *env = getenv("DEBUGINFOD_CACHE_PATH"), *xdg = getenv("XDG_CACHE_HOME");
    const char *home = getenv("HOME");
    if (env && *env)
        snprintf(dir, sizeof dir, "%s", env);
    else if (xdg && *xdg)
        snprintf(dir, sizeof dir, "%s/debuginfod_client", xdg);
    else if (home && *home)
        snprintf(dir, sizeof dir, "%s/.cache/debuginfod_client", home);
    else
        return;
    for (uint32_t i = 0; i < n; i++)
        snprintf(hex + 2 * (size_t)i, 3, "%02x", id[i]);
    char path[4200];
    snprintf(path, sizeof path, "%s/%s/debuginfo", dir, hex);
    struct stat st;
    if (lstat(path, &st) == 0 && S_ISREG(st.st_mode) && st.st_size == 0)
        unlink(path);
}

static void *worker(void *arg)
{
    struct sc_debuginfod *d = arg;
    pthread_setname_np(pthread_self(), "scorch-debuginfo");
    debuginfod_client *c = sym_debuginfod_begin();
    if (c) {
        sym_debuginfod_set_user_data(c, d);
        sym_debuginfod_set_progressfn(c, progress);
    }
    pthread_mutex_lock(&d->mu);
    for (;;) {
        struct ent *e;
        while (!d->stop && !(e = next_pending(d)))
            pthread_cond_wait(&d->cv, &d->mu);
        if (d->stop)
            break;
        uint8_t id[20];
        uint32_t n = e->n;
        memcpy(id, e->id, n);
        int64_t start = sc_mono_ns();
        d->deadline_ns = start + d->timeout_ns;
        d->aborted = 0;
        pthread_mutex_unlock(&d->mu);

        char *path = NULL;
        int fd = c ? sym_debuginfod_find_debuginfo(c, id, (int)n, &path) : -ENOMEM;
        if (fd >= 0)
            close(fd);

        pthread_mutex_lock(&d->mu);
        int aborted = d->aborted && fd < 0;
        if (aborted)
            forget_miss(id, n);
        /* the table may have moved while unlocked: find the entry again */
        e = NULL;
        for (uint32_t i = 0; i < d->n && !e; i++)
            if (d->v[i].n == n && !memcmp(d->v[i].id, id, n))
                e = &d->v[i];
        if (!e) {
            free(path);
            continue;
        }
        if (fd >= 0 && path) {
            e->state = SC_DEBUGINFOD_FOUND;
            e->path = path;
        } else {
            free(path);
            e->state = SC_DEBUGINFOD_FAILED;
            e->done_ns = sc_mono_ns();
            e->failures++;
            if (aborted || fd == -ETIME)
                snprintf(e->why, sizeof e->why, "timed out after %.0f s",
                         (double)d->timeout_ns / 1e9);
            else if (fd == -ENOENT)
                snprintf(e->why, sizeof e->why, "not found");
            else
                snprintf(e->why, sizeof e->why, "%s", strerror(fd < 0 ? -fd : EIO));
            e->why[0] = (char)tolower((unsigned char)e->why[0]); /* "connection refused" */
        }
        pthread_cond_broadcast(&d->cv);
    }
    pthread_mutex_unlock(&d->mu);
    if (c)
        sym_debuginfod_end(c);
    return NULL;
}

int sc_debuginfod_new(const struct sc_debuginfod_opts *o, struct sc_debuginfod **out, char *err)
{
    *out = NULL;
    const char *urls = getenv("DEBUGINFOD_URLS");
    if (!urls || !urls[strspn(urls, " \t")])
        return 0;
    int rc = sc_dl_load(SC_DL_DEBUGINFOD, err);
    if (rc)
        return rc;
    struct sc_debuginfod *d = calloc(1, sizeof *d);
    if (!d)
        return sc_errf(err, SC_ENOMEM, "out of memory");
    d->timeout_ns = o && o->timeout_ns > 0 ? o->timeout_ns : SC_DEBUGINFOD_TIMEOUT;
    d->retry_ns = o && o->retry_ns > 0 ? o->retry_ns : SC_DEBUGINFOD_RETRY;
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC); /* the deadlines are sc_mono_ns */
    pthread_mutex_init(&d->mu, NULL);
    pthread_cond_init(&d->cv, &ca);
    pthread_condattr_destroy(&ca);
    if (pthread_create(&d->th, NULL, worker, d)) {
        pthread_cond_destroy(&d->cv);
        pthread_mutex_destroy(&d->mu);
        free(d);
        return sc_errf(err, SC_EINTERNAL, "cannot start the debuginfod thread");
    }
    *out = d;
    return 0;
}

void sc_debuginfod_free(struct sc_debuginfod *d)
{
    if (!d)
        return;
    pthread_mutex_lock(&d->mu);
    d->stop = 1;
    pthread_cond_broadcast(&d->cv);
    pthread_mutex_unlock(&d->mu);
    pthread_join(d->th, NULL);
    for (uint32_t i = 0; i < d->n; i++)
        free(d->v[i].path);
    free(d->v);
    pthread_cond_destroy(&d->cv);
    pthread_mutex_destroy(&d->mu);
    free(d);
}

/* How long after its last failure an entry is asked again: retry_ns, doubled per failure
 * after the first, an hour at most. */
static int64_t backoff(const struct sc_debuginfod *d, const struct ent *e)
{
    int64_t t = d->retry_ns;
    for (uint32_t i = 1; i < e->failures && t < 3600 * SC_NS_PER_S; i++)
        t *= 2;
    return t < 3600 * SC_NS_PER_S ? t : 3600 * SC_NS_PER_S;
}

enum sc_debuginfod_state sc_debuginfod_get(struct sc_debuginfod *d, const uint8_t *id, uint32_t n,
                                           int64_t until_ns, char **path, char *why, size_t whylen)
{
    *path = NULL;
    if (whylen)
        why[0] = 0;
    if (n == 0 || n > 20) {
        snprintf(why, whylen, "no build id");
        return SC_DEBUGINFOD_FAILED;
    }
    pthread_mutex_lock(&d->mu);
    struct ent *e = NULL;
    for (uint32_t i = 0; i < d->n && !e; i++)
        if (d->v[i].n == n && !memcmp(d->v[i].id, id, n))
            e = &d->v[i];
    int64_t now = sc_mono_ns();
    if (!e) {
        if (d->n >= SC_DEBUGINFOD_MAX_IDS) {
            pthread_mutex_unlock(&d->mu);
            snprintf(why, whylen, "more than %d build ids asked for", SC_DEBUGINFOD_MAX_IDS);
            return SC_DEBUGINFOD_FAILED;
        }
        if (sc_grow_array(&d->v, &d->cap, (uint64_t)d->n + 1, sizeof *d->v)) {
            pthread_mutex_unlock(&d->mu);
            snprintf(why, whylen, "out of memory");
            return SC_DEBUGINFOD_FAILED;
        }
        e = &d->v[d->n++];
        memset(e, 0, sizeof *e);
        memcpy(e->id, id, n);
        e->n = n;
        e->state = SC_DEBUGINFOD_PENDING;
        e->asked_ns = now;
        pthread_cond_broadcast(&d->cv);
    } else if (e->state == SC_DEBUGINFOD_FAILED && now - e->done_ns >= backoff(d, e)) {
        e->state = SC_DEBUGINFOD_PENDING;
        e->asked_ns = now;
        pthread_cond_broadcast(&d->cv);
    }
    /* entries are never removed: the index holds while another caller grows the table */
    size_t ei = (size_t)(e - d->v);
    if (e->state == SC_DEBUGINFOD_PENDING && until_ns > now) {
        struct timespec ts = {(time_t)(until_ns / SC_NS_PER_S), (long)(until_ns % SC_NS_PER_S)};
        while (d->v[ei].state == SC_DEBUGINFOD_PENDING && !d->stop)
            if (pthread_cond_timedwait(&d->cv, &d->mu, &ts) == ETIMEDOUT)
                break;
        e = &d->v[ei];
    }
    enum sc_debuginfod_state st = e->state;
    if (st == SC_DEBUGINFOD_FOUND && !(*path = strdup(e->path))) {
        st = SC_DEBUGINFOD_FAILED;
        snprintf(why, whylen, "out of memory");
    } else if (st == SC_DEBUGINFOD_FAILED) {
        snprintf(why, whylen, "%s", e->why);
    }
    pthread_mutex_unlock(&d->mu);
    return st;
}
