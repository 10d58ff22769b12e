/* push.h - Pyroscope's push API request (push.v1.PushRequest), protobuf or JSON. */
#ifndef SC_PUSH_H
#define SC_PUSH_H

#include <stddef.h>
#include <stdint.h>

#include "model/buf.h"
#include "model/profile.h"

/* grafana/pyroscope api/push/v1/push.proto, api/types/v1/types.proto:
 *
 *   PushRequest       1 series (RawProfileSeries)
 *   RawProfileSeries  1 labels (LabelPair)  2 samples (RawSample)  3 annotations (dropped)
 *   LabelPair         1 name  2 value
 *   RawSample         1 raw_profile (pprof bytes, gzip or not)  2 ID
 *
 * Decoding keeps pointers into the request bytes (or into the request's own transcoding
 * of a JSON body): the request must live as long as they are used. */
struct sc_push_series {
    struct sc_str *names, *values; /* nlabels each */
    uint32_t nlabels;
    struct sc_str *profiles; /* raw_profile of each sample */
    uint32_t nprofiles;
};

struct sc_push_req {
    struct sc_push_series *series;
    uint32_t nseries;
    struct sc_buf json;  /* the protobuf of a JSON request */
    struct sc_str *pool; /* every label and profile string, in one allocation */
};

/* Decodes buf[0, n) (json: the Connect JSON mapping, raw_profile in base64). At most
 * max_labels labels per series; max_bytes bounds a JSON body's protobuf. 0, or SC_EFORMAT /
 * SC_ELIMIT / SC_ENOMEM with detail in err. Release with sc_push_release (also on failure). */
int sc_push_decode(const void *buf, size_t n, int json, uint32_t max_labels, uint64_t max_bytes,
                   struct sc_push_req *out, char *err);
void sc_push_release(struct sc_push_req *r);

#endif
