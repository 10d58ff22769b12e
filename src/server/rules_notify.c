/* rules_notify.c - the alerts' notifications: a bounded queue and the thread that POSTs
 * them, one at a time, each within alerting.timeout (libcurl through sc_remote_post, as the
 * agent pushes). A receiver that fails is logged and counted; nothing is retried but by the
 * next round, which says every firing alert again. */
#include "server/rules_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collect/remote.h"
#include "collect/scrape.h"
#include "model/clock.h"
#include "model/error.h"
#include "model/prom.h"
#include "model/dl_curl.h"

static void note_free(struct sc_note *n)
{
    free(n->url);
    free(n->body);
    free(n);
}

void sc_rules_notify(struct sc_rules *r, int to, const char *url, char *body, size_t len)
{
    struct sc_note *n = calloc(1, sizeof *n);
    if (n)
        n->url = strdup(url);
    if (!n || !n->url) {
        free(n);
        free(body);
        atomic_fetch_add(&r->dropped, 1);
        return;
    }
    n->to = to;
    n->body = body;
    n->len = len;
    pthread_mutex_lock(&r->qmu);
    if (r->tail)
        r->tail->next = n;
    else
        r->head = n;
    r->tail = n;
    r->qlen++;
    r->qbytes += len;
    /* over the bounds, the oldest go: a later round says the firing alerts again */
    uint32_t dropped = 0;
    while (r->head != n && (r->qlen > SC_NOTE_MAX || r->qbytes > SC_NOTE_MAX_BYTES)) {
        struct sc_note *old = r->head;
        r->head = old->next;
        r->qlen--;
        r->qbytes -= old->len;
        note_free(old);
        dropped++;
    }
    pthread_cond_signal(&r->qcv);
    pthread_mutex_unlock(&r->qmu);
    if (dropped) {
        atomic_fetch_add(&r->dropped, dropped);
        sc_rules_log("%u notifications dropped: the queue is full (receivers too slow or away)",
                     dropped);
    }
}

static int aborting(void *ctx)
{
    return atomic_load(&((struct sc_rules *)ctx)->abort_io);
}

static void send_one(struct sc_rules *r, CURL *curl, const struct sc_note *n)
{
    static const char *const names[SC_NTO] = {"alertmanager", "webhook"};
    struct sc_post p = {
        .url = n->url,
        .content_type = "application/json",
        .body = n->body,
        .len = n->len,
        .timeout_ms = (long)(r->timeout_ns / 1000000),
        .user_agent = "scorch-alerts",
        .abort = aborting,
        .abort_ctx = r,
    };
    long status = 0, retry_after = -1;
    char reason[200] = "", err[SC_ERR_LEN] = "";
    int rc = sc_remote_post(curl, &p, &status, &retry_after, reason, sizeof reason, err);
    int ok = rc == 0 && status >= 200 && status < 300;
    atomic_fetch_add(ok ? &r->sent[n->to] : &r->failed[n->to], 1);
    if (aborting(r))
        return;
    /* a receiver away for hours is said when it goes, once a minute while it is away, and
     * when it is back: not at every round */
    int64_t *since = NULL, *logged = NULL, now = sc_mono_ns();
    char **urls = n->to == SC_TO_ALERTMANAGER ? r->alertmanagers : r->webhooks;
    uint32_t nurls = n->to == SC_TO_ALERTMANAGER ? r->nalertmanagers : r->nwebhooks;
    for (uint32_t i = 0; i < nurls; i++)
        if (!strcmp(urls[i], n->url)) {
            uint32_t k = (n->to == SC_TO_ALERTMANAGER ? 0 : r->nalertmanagers) + i;
            since = &r->failing_since[k];
            logged = &r->failing_logged[k];
        }
    if (ok) {
        if (since && *since)
            sc_rules_log("%s %s: notified again, after %.0f s of failures", names[n->to], n->url,
                         (double)(now - *since) / 1e9);
        if (since)
            *since = 0;
        return;
    }
    if (since && *since && now - *logged < 60 * SC_NS_PER_S)
        return;
    if (since) {
        if (!*since)
            *since = now;
        *logged = now;
    }
    if (rc)
        sc_rules_log("%s %s: %s", names[n->to], n->url, err);
    else
        sc_rules_log("%s %s: HTTP %ld: %s", names[n->to], n->url, status, reason);
}

void *sc_rules_notify_run(void *arg)
{
    struct sc_rules *r = arg;
    CURL *curl = sym_curl_easy_init();
    pthread_mutex_lock(&r->qmu);
    while (!r->qstop) {
        if (!r->head) {
            pthread_cond_wait(&r->qcv, &r->qmu);
            continue;
        }
        struct sc_note *n = r->head;
        r->head = n->next;
        if (!r->head)
            r->tail = NULL;
        r->qlen--;
        r->qbytes -= n->len;
        pthread_mutex_unlock(&r->qmu);
        if (curl)
            send_one(r, curl, n);
        else
            atomic_fetch_add(&r->failed[n->to], 1);
        note_free(n);
        pthread_mutex_lock(&r->qmu);
    }
    pthread_mutex_unlock(&r->qmu);
    if (curl)
        sym_curl_easy_cleanup(curl);
    return NULL;
}

void sc_rules_notify_clear(struct sc_rules *r)
{
    pthread_mutex_lock(&r->qmu);
    while (r->head) {
        struct sc_note *n = r->head;
        r->head = n->next;
        note_free(n);
    }
    r->tail = NULL;
    r->qlen = 0;
    r->qbytes = 0;
    pthread_mutex_unlock(&r->qmu);
}

void sc_rules_notify_metrics(struct sc_rules *r, struct sc_buf *out)
{
    static const char *const names[SC_NTO] = {"alertmanager", "webhook"};
    pthread_mutex_lock(&r->qmu);
    uint32_t qlen = r->qlen;
    pthread_mutex_unlock(&r->qmu);
    sc_prom_family(out, "scorch_alert_notifications_total", SC_PROM_COUNTER,
                   "Notifications a receiver took (2xx), by receiver kind.");
    for (int i = 0; i < SC_NTO; i++)
        sc_prom_sample(out, "scorch_alert_notifications_total",
                       (const char *[]){"to", names[i], NULL}, "%llu",
                       (unsigned long long)atomic_load(&r->sent[i]));
    sc_prom_family(out, "scorch_alert_notification_failures_total", SC_PROM_COUNTER,
                   "Notifications that failed (no answer within alerting.timeout, or not 2xx; "
                   "the log says why), by receiver kind.");
    for (int i = 0; i < SC_NTO; i++)
        sc_prom_sample(out, "scorch_alert_notification_failures_total",
                       (const char *[]){"to", names[i], NULL}, "%llu",
                       (unsigned long long)atomic_load(&r->failed[i]));
    sc_prom_family(out, "scorch_alert_notifications_dropped_total", SC_PROM_COUNTER,
                   "Notifications dropped unsent: the queue was full.");
    sc_prom_sample(out, "scorch_alert_notifications_dropped_total", NULL, "%llu",
                   (unsigned long long)atomic_load(&r->dropped));
    sc_prom_family(out, "scorch_alert_notifications_queued", SC_PROM_GAUGE,
                   "Notifications waiting to be sent.");
    sc_prom_sample(out, "scorch_alert_notifications_queued", NULL, "%u", (unsigned)qlen);
}
