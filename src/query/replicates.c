/* replicates.c - a stored selection cut into time buckets, each a replicate. */
#include "query/replicates.h"
#include "model/clock.h"
#include "model/error.h"
#include "model/partition.h"

#include <stdlib.h>

int64_t sc_replicates_width(int64_t from_ns, int64_t until_ns, uint32_t max)
{
    if (max == 0)
        max = SC_REPLICATES_DEFAULT;
    uint64_t span = until_ns > from_ns ? (uint64_t)until_ns - (uint64_t)from_ns : 1;
    uint64_t w = (span + max - 1) / max;
    w = (w + SC_NS_PER_S - 1) / SC_NS_PER_S; /* seconds */
    if (w == 0)
        w = 1;
    if (w > 3600)
        w = (w + 3599) / 3600 * 3600;
    else if (w > 600)
        w = (w + 599) / 600 * 600;
    return (int64_t)w * SC_NS_PER_S;
}

struct add_ctx {
    const struct sc_filter *filter;
    struct sc_cmp *c;
    int side, vi, rc;
    uint32_t added;
    char *err;
};

static int add_bucket(void *arg, const struct sc_store_bucket *b, struct sc_profile *p)
{
    struct add_ctx *x = arg;
    if (x->filter && sc_filter_active(x->filter)) {
        struct sc_filter_result fr;
        x->rc = sc_filter_apply(x->filter, p, &fr, x->err);
        if (x->rc)
            return 1;
    }
    double per_series = b->series ? (double)b->series : 1;
    double seconds = 0, profiles = 0;
    if (!b->gauge) {
        /* captures (store_int.h: two profiles of one series at one instant are one, their
         * sum), per series: a bucket of one profile from each of three pods is worth its
         * three-pod total per second */
        seconds = (double)b->covered_ns / SC_NS_PER_S / per_series;
        profiles = (double)b->captures / per_series;
    }
    x->rc = sc_cmp_add(x->c, x->side, p, 0, seconds, profiles, x->err);
    x->added += x->rc == 0;
    return x->rc != 0;
}

/* Cuts t's samples (timed, in [from, until)) into k equal spans of time by their times
 * and adds each non-empty one as a replicate. */
static int add_spans(struct sc_profile *t, int64_t from, int64_t until, uint32_t k,
                     struct sc_cmp *c, int side, uint32_t *added, char *err)
{
    uint64_t span = (uint64_t)until - (uint64_t)from;
    uint64_t w = (span + k - 1) / k;
    uint32_t *group = malloc(((size_t)t->nsamples + 1) * sizeof *group);
    if (!group)
        return sc_errf(err, SC_ENOMEM, "out of memory");
    for (uint32_t i = 0; i < t->nsamples; i++) {
        uint64_t g = ((uint64_t)t->samples[i].time_ns - (uint64_t)from) / w;
        group[i] = (uint32_t)(g < k ? g : k - 1);
    }
    struct sc_partition pt;
    int rc = sc_partition_profile(t, group, k, &pt);
    free(group);
    if (rc)
        return sc_errf(err, rc, "out of memory");
    for (uint32_t g = 0; rc == 0 && g < k; g++) {
        if (pt.views[g].nsamples == 0)
            continue;
        rc = sc_cmp_add(c, side, &pt.views[g], 0, (double)w / SC_NS_PER_S, 0, err);
        *added += rc == 0;
    }
    sc_partition_release(&pt);
    return rc;
}

/* Timestamped samples (perf script, `record`, OTLP) in a range shorter than a profile:
 * a heatmap selection of 200 ms inside one stored recording has no profile boundaries to
 * cut at, so its replicates are spans of time, each holding enough samples
 * (SC_REPLICATES_TIMED_MIN) for its shares to mean something; too few samples for two
 * spans make one replicate (the sampling test). *added stays 0 when the range holds no
 * timed samples. */
static int add_timed(struct sc_store *s, const struct sc_store_query *q,
                     const struct sc_filter *filter, struct sc_cmp *c, int side, uint32_t max,
                     uint32_t *added, char *err)
{
    struct sc_profile *t = NULL;
    int rc = sc_store_timed(s, q, &t, err);
    if (rc)
        return rc == SC_ENOTFOUND ? 0 : rc;
    if (t->nsamples && filter && sc_filter_active(filter))
        rc = sc_filter_apply(filter, t, NULL, err);
    if (rc == 0 && t->nsamples) {
        int64_t lo = INT64_MAX, hi = INT64_MIN;
        for (uint32_t i = 0; i < t->nsamples; i++) {
            lo = t->samples[i].time_ns < lo ? t->samples[i].time_ns : lo;
            hi = t->samples[i].time_ns > hi ? t->samples[i].time_ns : hi;
        }
        uint32_t k = t->nsamples / SC_REPLICATES_TIMED_MIN;
        k = k > max ? max : k < 1 ? 1 : k;
        rc = add_spans(t, lo, hi + 1, k, c, side, added, err);
    }
    sc_profile_free(t);
    return rc;
}

int sc_replicates_add(struct sc_store *s, const struct sc_store_query *q,
                      const struct sc_filter *filter, struct sc_cmp *c, int side, uint32_t max,
                      uint32_t *added, char *err)
{
    struct add_ctx x = {filter, c, side, 0, 0, 0, err};
    *added = 0;
    if (q->nseries == 0)
        return 0;
    if (max == 0)
        max = SC_REPLICATES_DEFAULT;
    if (sc_sub_sat(q->until_ns, q->from_ns) <= SC_REPLICATES_TIMED_RANGE) {
        int rc = add_timed(s, q, filter, c, side, max, added, err);
        if (rc || *added)
            return rc;
    }
    /* cut the span that holds profiles, not the whole range: a day's range with an hour
     * of data still gives max replicates */
    int64_t first, last;
    int rc = sc_store_span(s, q, &first, &last, err);
    if (rc)
        return rc == SC_ENOTFOUND ? 0 : rc;
    struct sc_store_query sq = *q;
    sq.from_ns = first;
    sq.until_ns = last + 1;
    int64_t w = sc_replicates_width(sq.from_ns, sq.until_ns, max);
    rc = sc_store_merge_buckets(s, &sq, w, add_bucket, &x, err);
    *added = x.added;
    if (rc == SC_ENOTFOUND)
        return 0;
    return rc ? rc : x.rc;
}
