/* json.h - a streaming JSON writer over struct sc_buf: the commas, colons, quotes and
 * escapes of every answer the server and the CLI write, in one place. */
#ifndef SC_JSON_H
#define SC_JSON_H

#include "model/buf.h"

#include <stddef.h>
#include <stdint.h>

/* Deep enough for every answer scorch writes (the deepest nests about six levels); a
 * writer asked to go deeper writes nothing more and reports it through sc_json_ok. */
#define SC_JSON_MAX_DEPTH 32

/* No tree is built: each call appends to the buffer at once, so an answer of any size costs
 * only its own bytes. The writer keeps, per open object or array, whether a member has been
 * written (the next one needs a comma) and whether a key waits for its value. Values written
 * outside any container (the top level) are written one after another, without commas. */
struct sc_json {
    struct sc_buf *b;
    int depth;
    int bad; /* misuse or too deep: the output is not JSON */
    unsigned char has_member[SC_JSON_MAX_DEPTH];
    unsigned char is_object[SC_JSON_MAX_DEPTH];
    unsigned char after_key;
    unsigned char newline; /* sc_json_newline asked for one, not yet written */
};

void sc_json_init(struct sc_json *j, struct sc_buf *b);
/* 1 when every container opened was closed, no call was out of place and the buffer did not
 * run out of memory. */
int sc_json_ok(const struct sc_json *j);

void sc_json_obj_begin(struct sc_json *j);
void sc_json_obj_end(struct sc_json *j);
void sc_json_arr_begin(struct sc_json *j);
void sc_json_arr_end(struct sc_json *j);

/* The next member, element or closing bracket starts a new line (after its comma), for
 * answers read by line as well as parsed: a target a line, a frame a line. */
void sc_json_newline(struct sc_json *j);

/* An object's key; the next call writes its value. */
void sc_json_key(struct sc_json *j, const char *k);
void sc_json_keyn(struct sc_json *j, const char *k, size_t n);

/* Values. Strings are escaped by sc_buf_put_json_str (bytes that are not UTF-8 become
 * U+FFFD); a NULL string is written as null. */
void sc_json_str(struct sc_json *j, const char *s);
void sc_json_strn(struct sc_json *j, const char *s, size_t n);
void sc_json_i64(struct sc_json *j, int64_t v);
void sc_json_u64(struct sc_json *j, uint64_t v);
/* A number with ten significant digits ("%.10g", sc_buf_put_num's rule), the form of every
 * measured value in scorch's answers. NaN and infinities, which no JSON number says, are
 * null here and in the two forms below. */
void sc_json_num(struct sc_json *j, double v);
/* "%.*g" with digits significant digits, for the few fields whose precision is part of
 * their contract (scale factors at 17 digits, levels at 6). */
void sc_json_num_g(struct sc_json *j, double v, int digits);
/* "%.*f" with decimals digits after the point (durations in seconds to the microsecond). */
void sc_json_num_fixed(struct sc_json *j, double v, int decimals);
void sc_json_bool(struct sc_json *j, int v);
void sc_json_null(struct sc_json *j);
/* n bytes of JSON already encoded (a stored document, another writer's output), written
 * as one value in place; the writer trusts it to be one well-formed value. */
void sc_json_raw(struct sc_json *j, const char *s, size_t n);

/* A key and its value in one call, for the common member. */
void sc_json_kv_str(struct sc_json *j, const char *k, const char *s);
void sc_json_kv_strn(struct sc_json *j, const char *k, const char *s, size_t n);
void sc_json_kv_i64(struct sc_json *j, const char *k, int64_t v);
void sc_json_kv_u64(struct sc_json *j, const char *k, uint64_t v);
void sc_json_kv_num(struct sc_json *j, const char *k, double v);
void sc_json_kv_bool(struct sc_json *j, const char *k, int v);

/* The body of every error answer, the server's and the agent's: {"error":msg} and a newline. */
void sc_json_put_error(struct sc_buf *b, const char *msg);

#endif
