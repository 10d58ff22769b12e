/* pbjson.h - protobuf's JSON mapping transcoded to the wire format, driven by a schema. */
#ifndef SC_PBJSON_H
#define SC_PBJSON_H

#include <stddef.h>
#include <stdint.h>

#include "model/buf.h"

/* JSON requests (OTLP/HTTP JSON, Connect JSON) are turned into the protobuf bytes the same
 * request would have had, so one wire decoder serves both encodings. The mapping is
 * proto3's (protojson): field names in lowerCamelCase or as in the .proto, 64-bit integers
 * as numbers or strings, bytes as base64 (standard or URL-safe, padding optional), null as
 * the default, unknown fields ignored. OTLP's one exception is a field kind of its own:
 * trace, span and profile ids are hex strings. */
enum sc_pbj_kind {
    SC_PBJ_MESSAGE, /* a nested object: .msg */
    SC_PBJ_STRING,
    SC_PBJ_BYTES, /* base64 */
    SC_PBJ_HEX,   /* bytes written as hex (OTLP ids) */
    SC_PBJ_INT,   /* int32 / int64: varint, two's complement */
    SC_PBJ_UINT,  /* uint32 / uint64: varint */
    SC_PBJ_BOOL,
    SC_PBJ_DOUBLE,  /* fixed64 bits */
    SC_PBJ_FIXED64, /* fixed64 integer */
    /* Not protobuf's: a JSON array (of arrays, as speedscope's samples) written as a nested
     * message of .msg whose first field (repeated) holds the array's values. */
    SC_PBJ_ARRAY,
};

struct sc_pbj_msg;

struct sc_pbj_field {
    const char *name; /* as in the .proto (snake_case); the lowerCamelCase form also matches */
    uint32_t num;
    enum sc_pbj_kind kind;
    int repeated; /* a JSON array of values */
    const struct sc_pbj_msg *msg;
};

struct sc_pbj_msg {
    const struct sc_pbj_field *fields;
    uint32_t nfields;
};

/* Appends the protobuf encoding of the JSON object text[0, n) as message `root` to out.
 * Nested message lengths are written as 5-byte varints (valid protobuf, and no second
 * pass). Refuses nesting deeper than 64 and output past max_out bytes. 0, or SC_EFORMAT
 * (with the byte offset and what was wrong) / SC_ELIMIT / SC_ENOMEM. */
int sc_pbjson_transcode(const char *text, size_t n, const struct sc_pbj_msg *root, uint64_t max_out,
                        struct sc_buf *out, char *err);

/* The same for a JSON text that is an array rather than an object (Chrome's trace files
 * come both ways): its values are written as root's field `field`, repeated. */
int sc_pbjson_transcode_array(const char *text, size_t n, const struct sc_pbj_field *field,
                              uint64_t max_out, struct sc_buf *out, char *err);

/* The first byte of s[0, end) that is not JSON whitespace (RFC 8259: space, tab, LF,
 * CR); end when there is none. */
const char *sc_pbjson_skip_ws(const char *s, const char *end);

#endif
