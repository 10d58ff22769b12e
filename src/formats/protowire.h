/* protowire.h - the protobuf wire format, read and written by hand (pprof, OTLP, Connect). */
#ifndef SC_PROTOWIRE_H
#define SC_PROTOWIRE_H

#include <stdint.h>
#include <string.h>

#include "model/buf.h"

/* A message is a sequence of fields; each starts with a varint tag (field_number << 3 |
 * wire_type). Wire types: 0 varint, 1 fixed64, 2 length-delimited (LEN: varint length +
 * bytes), 5 fixed32. Repeated scalars may be packed into one LEN field or repeated as
 * single varints; decoders must take both. Groups (3, 4) occur in none of the messages
 * scorch reads and are refused as malformed. */
enum { SC_WT_VARINT = 0, SC_WT_I64 = 1, SC_WT_LEN = 2, SC_WT_I32 = 5 };

/* The bytes left to read. */
struct sc_pb_rd {
    const uint8_t *p, *end;
};

/* Reads a varint. 0, or -1 on truncation or a varint longer than 10 bytes. */
static inline int sc_pb_varint(struct sc_pb_rd *r, uint64_t *out)
{
    const uint8_t *p = r->p;
    if (p < r->end && *p < 0x80) {
        *out = *p;
        r->p = p + 1;
        return 0;
    }
    uint64_t v = 0;
    for (int shift = 0; shift < 70; shift += 7) {
        if (p >= r->end)
            return -1;
        uint8_t b = *p++;
        v |= (uint64_t)(b & 0x7f) << shift;
        if (b < 0x80) {
            r->p = p;
            *out = v;
            return 0;
        }
    }
    return -1;
}

/* One field of a message: its number, wire type, and either a scalar or a LEN payload. */
struct sc_pb_field {
    uint32_t num;
    int wt;
    uint64_t v;              /* SC_WT_VARINT / SC_WT_I64 / SC_WT_I32 */
    struct sc_pb_rd payload; /* SC_WT_LEN */
};

/* Reads the next field. 1 when one was read, 0 at the end, -1 on malformed input. */
static inline __attribute__((always_inline)) int sc_pb_next(struct sc_pb_rd *r,
                                                            struct sc_pb_field *f)
{
    if (r->p >= r->end)
        return 0;
    uint64_t tag;
    if (sc_pb_varint(r, &tag) || (tag >> 3) == 0 || (tag >> 3) > 0x1fffffff)
        return -1;
    f->num = (uint32_t)(tag >> 3);
    f->wt = (int)(tag & 7);
    f->payload.p = f->payload.end = NULL;
    f->v = 0;
    switch (f->wt) {
    case SC_WT_VARINT:
        return sc_pb_varint(r, &f->v) ? -1 : 1;
    case SC_WT_I64:
        if (r->end - r->p < 8)
            return -1;
        memcpy(&f->v, r->p, 8);
        r->p += 8;
        return 1;
    case SC_WT_I32: {
        if (r->end - r->p < 4)
            return -1;
        uint32_t v32;
        memcpy(&v32, r->p, 4);
        f->v = v32;
        r->p += 4;
        return 1;
    }
    case SC_WT_LEN: {
        uint64_t len;
        if (sc_pb_varint(r, &len) || len > (uint64_t)(r->end - r->p))
            return -1;
        f->payload.p = r->p;
        f->payload.end = r->p + len;
        r->p += len;
        return 1;
    }
    default:
        return -1;
    }
}

/* Number of varints in a packed payload: the bytes that end one. */
static inline uint64_t sc_pb_packed_count(const struct sc_pb_rd *r)
{
    uint64_t n = 0;
    for (const uint8_t *p = r->p; p < r->end; p++)
        n += *p < 0x80;
    return n;
}

/* Calls the body for each varint of a repeated varint field (packed or not); `continue` in
 * the body goes on with the next value (the unpacked field's one value runs in a loop too).
 * Evaluates `bad` (a statement) on malformed packed data or another wire type. */
/* NOLINTBEGIN(bugprone-macro-parentheses): var is the name the macro declares, body and
 * bad are statements */
#define SC_PB_FOR_EACH_VARINT(f, var, body, bad)                                                   \
    do {                                                                                           \
        if ((f)->wt == SC_WT_LEN) {                                                                \
            struct sc_pb_rd pk_ = (f)->payload;                                                    \
            while (pk_.p < pk_.end) {                                                              \
                uint64_t var;                                                                      \
                if (sc_pb_varint(&pk_, &var)) {                                                    \
                    bad;                                                                           \
                }                                                                                  \
                body;                                                                              \
            }                                                                                      \
        } else if ((f)->wt == SC_WT_VARINT) {                                                      \
            for (int once_ = 1; once_; once_ = 0) {                                                \
                uint64_t var = (f)->v;                                                             \
                body;                                                                              \
            }                                                                                      \
        } else {                                                                                   \
            bad;                                                                                   \
        }                                                                                          \
    } while (0)
/* NOLINTEND(bugprone-macro-parentheses) */

/* ---- writing ---- */

static inline void sc_pb_put_varint(struct sc_buf *b, uint64_t v)
{
    char tmp[10];
    int n = 0;
    while (v >= 0x80) {
        tmp[n++] = (char)(v | 0x80);
        v >>= 7;
    }
    tmp[n++] = (char)v;
    sc_buf_append(b, tmp, (size_t)n);
}

static inline int sc_pb_varint_len(uint64_t v)
{
    int n = 1;
    while (v >= 0x80) {
        v >>= 7;
        n++;
    }
    return n;
}

static inline void sc_pb_put_tag(struct sc_buf *b, uint32_t num, int wt)
{
    sc_pb_put_varint(b, (uint64_t)num << 3 | (uint64_t)wt);
}

/* A varint field, omitted when zero (proto3 default). */
static inline void sc_pb_put_uint(struct sc_buf *b, uint32_t num, uint64_t v)
{
    if (v) {
        sc_pb_put_tag(b, num, SC_WT_VARINT);
        sc_pb_put_varint(b, v);
    }
}

/* A LEN field holding n bytes. */
static inline void sc_pb_put_bytes(struct sc_buf *b, uint32_t num, const void *p, size_t n)
{
    sc_pb_put_tag(b, num, SC_WT_LEN);
    sc_pb_put_varint(b, n);
    sc_buf_append(b, p, n);
}

/* A nested message written into a scratch buffer first, copied behind its length. */
static inline void sc_pb_put_msg(struct sc_buf *b, uint32_t num, const struct sc_buf *m)
{
    sc_pb_put_bytes(b, num, m->data, m->len);
}

#endif
