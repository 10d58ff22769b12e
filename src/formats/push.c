/* push.c - push.v1.PushRequest (Pyroscope's Connect push API) decoded into its parts. */
#include "formats/push.h"
#include "formats/pbjson.h"
#include "formats/protowire.h"
#include "model/error.h"

#include <stdlib.h>
#include <string.h>

static const struct sc_pbj_field j_label_f[] = {
    {"name", 1, SC_PBJ_STRING, 0, NULL},
    {"value", 2, SC_PBJ_STRING, 0, NULL},
};
static const struct sc_pbj_msg j_label = {j_label_f, 2};
static const struct sc_pbj_field j_sample_f[] = {
    {"raw_profile", 1, SC_PBJ_BYTES, 0, NULL},
    {"ID", 2, SC_PBJ_STRING, 0, NULL},
};
static const struct sc_pbj_msg j_sample = {j_sample_f, 2};
static const struct sc_pbj_field j_series_f[] = {
    {"labels", 1, SC_PBJ_MESSAGE, 1, &j_label},
    {"samples", 2, SC_PBJ_MESSAGE, 1, &j_sample},
};
static const struct sc_pbj_msg j_series = {j_series_f, 2};
static const struct sc_pbj_field j_push_f[] = {{"series", 1, SC_PBJ_MESSAGE, 1, &j_series}};
static const struct sc_pbj_msg j_push = {j_push_f, 1};

#define MALFORMED(err, what) sc_errf(err, SC_EFORMAT, "malformed push request: %s", what)

static struct sc_str str_of(struct sc_pb_rd r)
{
    return (struct sc_str){(const char *)r.p, (uint32_t)(r.end - r.p)};
}

/* One pass over the series: counts (out NULL) or records them. */
static int walk(struct sc_pb_rd top, struct sc_push_req *r, struct sc_str **pool, uint32_t *nseries,
                uint64_t *nstr, uint32_t max_labels, char *err)
{
    struct sc_pb_field f, g, h;
    int rc;
    *nseries = 0;
    *nstr = 0;
    while ((rc = sc_pb_next(&top, &f)) > 0) {
        if (f.num != 1)
            continue;
        if (f.wt != SC_WT_LEN)
            return MALFORMED(err, "series is not a message");
        struct sc_push_series *s = r ? &r->series[*nseries] : NULL;
        uint32_t nl = 0, np = 0;
        for (int pass = 0; pass < (r ? 2 : 1); pass++) {
            struct sc_pb_rd sr = f.payload;
            if (s && pass == 1) {
                s->names = *pool, s->values = *pool + nl, s->profiles = *pool + 2 * (size_t)nl;
                *pool += 2 * (size_t)nl + np;
                s->nlabels = s->nprofiles = 0;
            }
            while ((rc = sc_pb_next(&sr, &g)) > 0) {
                if ((g.num == 1 || g.num == 2) && g.wt != SC_WT_LEN)
                    return MALFORMED(err, "a label or sample is not a message");
                struct sc_pb_rd m = g.payload;
                struct sc_str a = {"", 0}, b = {"", 0};
                while (g.num <= 2 && (rc = sc_pb_next(&m, &h)) > 0) {
                    if (h.num == 1 && h.wt == SC_WT_LEN)
                        a = str_of(h.payload);
                    else if (h.num == 2 && h.wt == SC_WT_LEN)
                        b = str_of(h.payload);
                }
                if (rc < 0)
                    return MALFORMED(err, "truncated label or sample");
                if (g.num == 1 && pass == 0 && ++nl > max_labels)
                    return sc_errf(err, SC_ELIMIT, "a series has more than %u labels",
                                   (unsigned)max_labels);
                if (g.num == 2 && pass == 0)
                    np++;
                if (pass == 1 && g.num == 1) {
                    s->names[s->nlabels] = a;
                    s->values[s->nlabels++] = b;
                } else if (pass == 1 && g.num == 2) {
                    s->profiles[s->nprofiles++] = a;
                }
            }
            if (rc < 0)
                return MALFORMED(err, "truncated series");
        }
        *nstr += 2 * (uint64_t)nl + np;
        (*nseries)++;
    }
    return rc < 0 ? MALFORMED(err, "truncated or not protobuf") : 0;
}

int sc_push_decode(const void *buf, size_t n, int json, uint32_t max_labels, uint64_t max_bytes,
                   struct sc_push_req *r, char *err)
{
    memset(r, 0, sizeof *r);
    if (json) {
        int rc = sc_pbjson_transcode(buf, n, &j_push, max_bytes, &r->json, err);
        if (rc)
            return rc == SC_EFORMAT ? sc_errwrap(err, rc, "malformed push JSON") : rc;
        buf = r->json.data;
        n = r->json.len;
    }
    struct sc_pb_rd top = {buf, buf ? (const uint8_t *)buf + n : NULL};
    uint32_t nseries;
    uint64_t nstr;
    int rc = walk(top, NULL, NULL, &nseries, &nstr, max_labels, err);
    if (rc)
        return rc;
    r->series = calloc((size_t)nseries + 1, sizeof *r->series);
    r->pool = malloc((size_t)(nstr + 1) * sizeof *r->pool);
    if (!r->series || !r->pool)
        return sc_errf(err, SC_ENOMEM, "out of memory");
    struct sc_str *pool = r->pool;
    rc = walk(top, r, &pool, &r->nseries, &nstr, max_labels, err);
    return rc;
}

void sc_push_release(struct sc_push_req *r)
{
    free(r->series);
    free(r->pool);
    sc_buf_release(&r->json);
    memset(r, 0, sizeof *r);
}
