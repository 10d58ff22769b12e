/* ingest_otlp.c - OTLP export requests and Pyroscope's Connect pushes into the store. */
#include "formats/otlp.h"
#include "formats/push.h"
#include "ingest/ingest.h"
#include "model/clock.h"
#include "model/error.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void note_rejected(struct sc_ingest_batch *res, const char *why)
{
    if (res->rejected++ == 0)
        snprintf(res->reason, sizeof res->reason, "%s", why);
}

int sc_ingest_otlp(struct sc_store *s, const char *tenant, const void *body, size_t len,
                   uint64_t gzip_claim, int json, const struct sc_limits *lim,
                   struct sc_ingest_batch *res, char *err)
{
    memset(res, 0, sizeof *res);
    void *plain;
    int rc = sc_ingest_inflate(&body, &len, gzip_claim, lim, &plain, &res->over_claim, err);
    struct sc_otlp_req *req = NULL;
    if (!rc)
        rc = sc_otlp_open(body, len, json, lim, &req, err);
    uint32_t n = rc ? 0 : sc_otlp_nprofiles(req);
    for (uint32_t i = 0; i < n && !rc; i++) {
        struct sc_otlp_profile op;
        char why[SC_ERR_LEN] = "";
        int brc = sc_otlp_build(req, i, &op, why);
        if (brc == SC_ENOMEM) {
            rc = sc_errf(err, brc, "%s", why);
            break;
        }
        if (brc) {
            note_rejected(res, why);
            continue;
        }
        struct sc_ingest_item it = {tenant, &op.labels, NULL, op.p, 0, 0, 0, lim};
        struct sc_ingest_result one;
        brc = sc_ingest_store(s, &it, &one, why);
        if (brc == SC_EINVAL || brc == SC_ELIMIT || brc == SC_EFORMAT) {
            char msg[SC_ERR_LEN];
            snprintf(msg, sizeof msg, "profile %u: %s", (unsigned)i, why);
            note_rejected(res, msg);
        } else if (brc) {
            rc = sc_errf(err, brc, "%s", why); /* the store failed: the client should retry */
        } else {
            res->stored++;
            res->samples += one.samples;
        }
        sc_otlp_profile_release(&op);
    }
    if (!rc && res->rejected > 1) {
        char first[SC_ERR_LEN];
        snprintf(first, sizeof first, "%s", res->reason);
        snprintf(res->reason, sizeof res->reason, "%u profiles rejected; the first: %.200s",
                 (unsigned)res->rejected, first);
    }
    sc_otlp_close(req);
    free(plain);
    return rc;
}

/* ---- Pyroscope's push API ---- */

/* __name__ values Pyroscope's clients and Grafana Alloy send, as scorch's profile names. */
static const char *push_profile_name(struct sc_str v)
{
    static const struct {
        const char *name, *profile;
    } names[] = {
        {"process_cpu", "cpu"},
        {"cpu", "cpu"},
        {"wall", "wall"},
        {"memory", "heap"},
        {"godeltaprof_memory", "heap"},
        {"heap", "heap"},
        {"allocs", "allocs"},
        {"goroutine", "goroutine"},
        {"goroutines", "goroutine"},
        {"mutex", "mutex"},
        {"godeltaprof_mutex", "mutex"},
        {"block", "block"},
        {"godeltaprof_block", "block"},
        {"threadcreate", "threadcreate"},
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (v.len == strlen(names[i].name) && !memcmp(v.ptr, names[i].name, v.len))
            return names[i].profile;
    return NULL;
}

struct push_item {
    struct sc_profile *p;
    uint32_t series;
    const char *profile;
};

/* The labels of series i; *profile from __name__. */
static int push_labels(const struct sc_push_series *ps, uint32_t i, struct sc_labels *l,
                       const char **profile, char *err)
{
    *profile = NULL;
    for (uint32_t k = 0; k < ps->nlabels; k++) {
        struct sc_str nm = ps->names[k], v = ps->values[k];
        if (nm.len == 8 && !memcmp(nm.ptr, "__name__", 8))
            *profile = push_profile_name(v);
        if (nm.len >= 2 && nm.ptr[0] == '_' && nm.ptr[1] == '_')
            continue;
        struct sc_str old;
        if (sc_labels_get(l, nm.ptr, nm.len, &old))
            return sc_errf(err, SC_EINVAL, "series %u: duplicate label '%.*s'", (unsigned)i,
                           (int)(nm.len < 64 ? nm.len : 64), nm.ptr);
        if (nm.len && sc_labels_set(l, nm.ptr, nm.len, v.ptr, v.len))
            return sc_errf(err, SC_ENOMEM, "out of memory");
    }
    struct sc_str svc;
    if (!sc_labels_get(l, "service_name", 12, &svc) &&
        sc_labels_set(l, "service_name", 12, "unknown_service", 15))
        return sc_errf(err, SC_ENOMEM, "out of memory");
    char why[SC_ERR_LEN];
    int rc = sc_ingest_check_labels(l, why);
    return rc ? sc_errf(err, rc, "series %u: %s", (unsigned)i, why) : 0;
}

/* Decodes every raw profile of the request (checked whole before anything is stored). */
static int push_decode_all(const struct sc_push_req *pr, const struct sc_limits *lim,
                           struct sc_labels *labels, struct push_item *items, uint32_t *nitems,
                           char *err)
{
    uint64_t inflated = 0;
    int rc = 0;
    for (uint32_t i = 0; i < pr->nseries && !rc; i++) {
        const struct sc_push_series *ps = &pr->series[i];
        const char *profile;
        if ((rc = push_labels(ps, i, &labels[i], &profile, err)))
            break;
        for (uint32_t k = 0; k < ps->nprofiles && !rc; k++) {
            struct sc_str raw = ps->profiles[k];
            struct sc_input in = {(void *)raw.ptr, raw.len, SC_INPUT_BORROWED};
            struct sc_decode_opts o = {.limits = lim, .format = SC_FMT_PPROF};
            char why[SC_ERR_LEN] = "";
            struct push_item *it = &items[*nitems];
            if (sc_is_gzip(raw.ptr, raw.len)) {
                /* all the pprofs of a request together inflate to at most the limit */
                size_t plen = 0;
                rc = sc_gunzip(raw.ptr, raw.len, lim->max_decompressed - inflated, &in.data, &plen,
                               why);
                in.len = plen;
                in.kind = SC_INPUT_MALLOC;
                inflated += plen;
            }
            if (!rc)
                rc = sc_decode(&in, &o, &it->p, why);
            /* the times too, so that a refused request stored nothing */
            struct sc_ingest_item chk = {NULL, &labels[i], NULL, it->p, 0, 0, 0, lim};
            if (!rc)
                rc = sc_ingest_check_times(&chk, sc_wall_ns(), why);
            if (rc) {
                /* decoded, then refused (its times): not one of the items the caller frees */
                sc_profile_free(it->p);
                it->p = NULL;
                rc = sc_errf(err, rc, "series %u, sample %u: %s", (unsigned)i, (unsigned)k, why);
                break;
            }
            it->series = i;
            it->profile = profile;
            (*nitems)++;
        }
    }
    return rc;
}

int sc_ingest_push(struct sc_store *s, const char *tenant, const void *body, size_t len,
                   uint64_t gzip_claim, int json, const struct sc_limits *lim,
                   struct sc_ingest_batch *res, char *err)
{
    memset(res, 0, sizeof *res);
    void *plain;
    struct sc_push_req pr;
    memset(&pr, 0, sizeof pr);
    int rc = sc_ingest_inflate(&body, &len, gzip_claim, lim, &plain, &res->over_claim, err);
    if (!rc)
        rc = sc_push_decode(body, len, json, 48, lim->max_decompressed, &pr, err);
    uint64_t nprof = 0;
    for (uint32_t i = 0; !rc && i < pr.nseries; i++)
        nprof += pr.series[i].nprofiles;
    if (!rc && nprof == 0)
        rc = sc_errf(err, SC_EINVAL, "no profiles in the push request");
    struct sc_labels *labels = rc ? NULL : calloc(pr.nseries, sizeof *labels);
    struct push_item *items = rc ? NULL : calloc(nprof, sizeof *items);
    if (!rc && (!labels || !items))
        rc = sc_errf(err, SC_ENOMEM, "out of memory");
    for (uint32_t i = 0; labels && i < pr.nseries; i++)
        sc_labels_init(&labels[i]);
    uint32_t nitems = 0;
    if (!rc)
        rc = push_decode_all(&pr, lim, labels, items, &nitems, err);
    for (uint32_t i = 0; !rc && i < nitems; i++) {
        struct sc_ingest_item it = {
            tenant, &labels[items[i].series], items[i].profile, items[i].p, 0, 0, 0, lim};
        struct sc_ingest_result one;
        char why[SC_ERR_LEN];
        rc = sc_ingest_store(s, &it, &one, why);
        if (rc)
            sc_errf(err, rc, "series %u: %s", (unsigned)items[i].series, why);
        else
            res->stored++, res->samples += one.samples;
    }
    for (uint32_t i = 0; items && i < nitems; i++)
        sc_profile_free(items[i].p);
    for (uint32_t i = 0; labels && i < pr.nseries; i++)
        sc_labels_release(&labels[i]);
    free(items);
    free(labels);
    sc_push_release(&pr);
    free(plain);
    return rc;
}
