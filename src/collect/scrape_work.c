/* scrape_work.c - the scraper's workers: decode, select types, deltas, the sink. */
#include "collect/scrape_int.h"
#include "formats/pprof.h"
#include "model/hash.h"
#include "model/dl_curl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- workers: decode, select, delta, sink ---- */

void sc_scrape_work_push(struct sc_scraper *s, struct req *r)
{
    if (atomic_load(&s->backlog_items) >= BACKLOG_ITEMS ||
        atomic_load(&s->backlog_bytes) + r->body.len > BACKLOG_BYTES) {
        atomic_fetch_add(&s->n_backlog_dropped, 1);
        sc_scrape_set_error(s, r->st, "dropped: the workers are behind (processing backlog full)");
        sc_scrape_req_free(r);
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
        if (c == '\n' || c == '\r')
            break;
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
    const struct sc_scrape_kind *K = &sc_scrape_kinds[r->kind];
    struct tstate *st = r->st;
    const void *data = r->body.data;
    size_t len = r->body.len;
    void *plain = NULL;
    int rc = 0;
    if (len == 0)
        return sc_errf(err, SC_EFORMAT, "empty response");
    if (sc_is_gzip(data, len)) {
        size_t plen;
        rc = sc_gunzip(data, len, sc_limits_scrape.max_decompressed, &plain, &plen, err);
        if (rc)
            return sc_errwrap(err, rc, "bad gzip");
        data = plain;
        len = plen;
    }
    struct sc_profile *p = sc_profile_new();
    if (!p) {
        free(plain);
        return sc_errf(err, SC_ENOMEM, "out of memory");
    }
    rc = sc_pprof_decode(data, len, &sc_limits_scrape, p, err);
    if (rc) {
        rc = sc_errwrap(err, rc, "not a pprof profile");
        goto out;
    }
    int64_t from = r->start_wall;
    int64_t until = from;
    int reencode = 0, restart = 0;
    uint32_t nkeep = K->keep[0] ? 2 : 0;
    if (K->cumulative) {
        if (r->asked_delta && p->duration_nanos > 0) {
            /* the target's own delta over [request, request + interval) */
            int probe = MODE_PROBE;
            atomic_compare_exchange_strong(&st->mode, &probe, MODE_ENDPOINT);
            until = sc_add_sat(from, p->duration_nanos);
            if (nkeep && (rc = sc_profile_keep_types(p, K->keep, nkeep, err)))
                goto out;
            /* counters of one process only grow; never store a negative count */
            for (size_t i = 0; i < (size_t)p->nsamples * p->nsample_types; i++)
                if (p->values[i] < 0) {
                    p->values[i] = 0;
                    reencode = 1;
                }
            if (reencode)
                sc_profile_drop_zero_samples(p);
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
            if (nkeep && (rc = sc_profile_keep_types(p, K->keep, nkeep, err)))
                goto out;
            pthread_mutex_lock(&st->mu);
            int d = sc_delta_apply(&st->delta, p, err);
            from = st->base_wall_ns;
            st->base_wall_ns = r->start_wall;
            pthread_mutex_unlock(&st->mu);
            if (d < 0) {
                rc = d;
                goto out;
            }
            if (d == SC_DELTA_FIRST)
                goto out; /* the baseline: nothing to store yet */
            restart = d == SC_DELTA_RESTART;
            reencode = 1;
        }
    } else if (nkeep) {
        if ((rc = sc_profile_keep_types(p, K->keep, nkeep, err)))
            goto out;
        reencode = 1;
    } else if (r->kind == 0) {
        until = sc_add_sat(from, p->duration_nanos > 0 ? p->duration_nanos
                                                       : r->t->cpu_seconds * SC_NS_PER_S);
    }
    *samples = sc_profile_nsamples(p);
    if (*samples == 0)
        goto out;
    struct sc_buf enc = SC_BUF_INIT;
    if (reencode) {
        p->time_nanos = from;
        p->duration_nanos = sc_sub_sat(until, from);
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
    atomic_fetch_add(&s->sink_cpu,
                     (c1.tv_sec - c0.tv_sec) * SC_NS_PER_S + (c1.tv_nsec - c0.tv_nsec));
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
            snprintf(err, sizeof err, "%s",
                     r->errbuf[0] ? r->errbuf : sym_curl_easy_strerror(r->cc));
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
    if (rc)
        atomic_fetch_add(&s->n_errors, 1);
    atomic_fetch_add(&s->n_profiles, (unsigned)delivered);
}

void *sc_scrape_worker_main(void *arg)
{
    struct sc_scraper *s = ((struct sc_scrape_worker_arg *)arg)->s;
    struct worker *w = ((struct sc_scrape_worker_arg *)arg)->w;
    free(arg);
    pthread_setname_np(pthread_self(), "scorch-scrapew");
    pthread_mutex_lock(&w->mu);
    for (;;) {
        while (!w->head && !w->stop)
            pthread_cond_wait(&w->cv, &w->mu);
        struct req *r = w->head;
        if (!r)
            break; /* stopping, and nothing left */
        w->head = r->next;
        if (!w->head)
            w->tail = NULL;
        pthread_mutex_unlock(&w->mu);
        size_t bytes = r->body.len;
        process(s, r);
        sc_scrape_req_free(r);
        atomic_fetch_sub(&s->backlog_items, 1);
        atomic_fetch_sub(&s->backlog_bytes, bytes);
        pthread_mutex_lock(&w->mu);
    }
    pthread_mutex_unlock(&w->mu);
    return NULL;
}
