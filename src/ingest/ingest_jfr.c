/* ingest_jfr.c - a JFR recording pushed as Pyroscope's Java agent does: a profile a kind. */
#include "formats/input.h"
#include "formats/jfr.h"
#include "ingest/ingest.h"
#include "model/clock.h"
#include "model/error.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int sc_ingest_jfr(struct sc_store *s, const struct sc_ingest_jfr_req *q,
                  const struct sc_limits *lim, struct sc_ingest_result *res, char *err)
{
    memset(res, 0, sizeof *res);
    /* the labels part may be gzipped as the recording may (Pyroscope inflates both) */
    void *plain = NULL;
    const void *labels = q->labels;
    size_t labels_len = q->labels_len;
    int rc = 0;
    if (labels_len && sc_is_gzip(labels, labels_len)) {
        rc = sc_gunzip(labels, labels_len, lim->max_decompressed, &plain, &labels_len, err);
        if (rc)
            return sc_errwrap(err, rc, "bad 'labels' part");
        labels = plain;
    }
    struct sc_jfr_opts o = {q->period_ns, labels, labels_len};
    struct sc_profile *k[SC_JFR_NKINDS];
    rc = sc_jfr_decode_kinds(q->body, q->len, &o, lim, k, err);
    free(plain);
    if (rc)
        return rc;
    struct sc_ingest_item it[SC_JFR_NKINDS];
    uint32_t n = 0;
    for (int i = 0; i < SC_JFR_NKINDS; i++) {
        if (!k[i] || k[i]->nsamples == 0)
            continue;
        struct sc_ingest_item x = {q->tenant,
                                   q->labels_of_series,
                                   sc_jfr_kind_profile(i),
                                   k[i],
                                   q->from ? q->from : k[i]->time_nanos,
                                   q->until > q->from ? q->until - q->from : 0,
                                   0,
                                   lim};
        it[n++] = x;
    }
    if (n == 0)
        rc = sc_errf(err, SC_EFORMAT,
                     "the recording holds no samples scorch reads (execution, allocation, "
                     "monitor or park events with stack traces)");
    /* everything is checked before the first kind is stored */
    int64_t now = sc_wall_ns();
    for (uint32_t i = 0; !rc && i < n; i++)
        rc = sc_ingest_check_times(&it[i], now, err);
    for (uint32_t i = 0; !rc && i < n; i++) {
        struct sc_ingest_result one;
        rc = sc_ingest_store(s, &it[i], &one, err);
        if (rc)
            break;
        res->samples += one.samples;
        res->series += one.series;
        /* "cpu,heap,mutex": the kinds stored, each once */
        if (!strstr(res->profile, one.profile)) {
            size_t len = strlen(res->profile);
            snprintf(res->profile + len, sizeof res->profile - len, "%s%s", len ? "," : "",
                     one.profile);
        }
        snprintf(res->service, sizeof res->service, "%s", one.service);
        if (one.dropped[0] && !res->dropped[0])
            snprintf(res->dropped, sizeof res->dropped, "%s", one.dropped);
    }
    for (int i = 0; i < SC_JFR_NKINDS; i++)
        sc_profile_free(k[i]);
    return rc;
}
