/* pbjson.c - JSON objects (protobuf's JSON mapping) rewritten as protobuf wire bytes. */
#include "formats/pbjson.h"
#include "formats/protowire.h"
#include "model/buf.h"
#include "model/error.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DEPTH 64
#define MAX_KEY 128
/* a nested message's or string's length is reserved as a 5-byte varint, patched after */
#define LEN_BYTES 5

struct jx {
    const char *s, *p, *end;
    struct sc_buf *out;
    struct sc_buf tmp; /* a decoded string (bytes, numbers) */
    uint64_t max;
    int depth;
    char *err;
};

static int bad(struct jx *j, const char *what)
{
    return sc_errf(j->err, SC_EFORMAT, "bad JSON at offset %zu: %s", (size_t)(j->p - j->s), what);
}

const char *sc_pbjson_skip_ws(const char *s, const char *end)
{
    while (s < end && (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r'))
        s++;
    return s;
}

static void ws(struct jx *j)
{
    j->p = sc_pbjson_skip_ws(j->p, j->end);
}

static int take(struct jx *j, char c)
{
    ws(j);
    if (j->p < j->end && *j->p == c) {
        j->p++;
        return 1;
    }
    return 0;
}

static int lit(struct jx *j, const char *w)
{
    size_t n = strlen(w);
    if ((size_t)(j->end - j->p) >= n && !memcmp(j->p, w, n)) {
        j->p += n;
        return 1;
    }
    return 0;
}

static int hexval(char c)
{
    return c >= '0' && c <= '9'   ? c - '0'
           : c >= 'a' && c <= 'f' ? c - 'a' + 10
           : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                  : -1;
}

static int hex4(struct jx *j, unsigned *out)
{
    if (j->end - j->p < 4)
        return -1;
    unsigned v = 0;
    for (int i = 0; i < 4; i++) {
        int h = hexval(j->p[i]);
        if (h < 0)
            return -1;
        v = v << 4 | (unsigned)h;
    }
    j->p += 4;
    *out = v;
    return 0;
}

static void put_utf8(struct sc_buf *b, unsigned c)
{
    char u[4];
    size_t n;
    if (c < 0x80) {
        u[0] = (char)c, n = 1;
    } else if (c < 0x800) {
        u[0] = (char)(0xc0 | c >> 6), u[1] = (char)(0x80 | (c & 0x3f)), n = 2;
    } else if (c < 0x10000) {
        u[0] = (char)(0xe0 | c >> 12), u[1] = (char)(0x80 | (c >> 6 & 0x3f));
        u[2] = (char)(0x80 | (c & 0x3f)), n = 3;
    } else {
        u[0] = (char)(0xf0 | c >> 18), u[1] = (char)(0x80 | (c >> 12 & 0x3f));
        u[2] = (char)(0x80 | (c >> 6 & 0x3f)), u[3] = (char)(0x80 | (c & 0x3f)), n = 4;
    }
    sc_buf_append(b, u, n);
}

/* A JSON string (at its opening quote) decoded into dst; escapes resolved, \u surrogate
 * pairs joined, a lone surrogate becomes U+FFFD, and so does every byte that is not
 * well-formed UTF-8 (as the writers' escaper does, model/buf.h: what is read is what a
 * writer writes back, no longer). */
static int string_into(struct jx *j, struct sc_buf *dst)
{
    ws(j);
    if (j->p >= j->end || *j->p != '"')
        return bad(j, "expected a string");
    j->p++;
    for (;;) {
        const char *run = j->p;
        while (j->p < j->end && *j->p != '"' && *j->p != '\\' && (unsigned char)*j->p >= 0x20)
            j->p++;
        sc_buf_put_utf8(dst, run, (size_t)(j->p - run));
        if (j->p >= j->end)
            return bad(j, "unterminated string");
        char c = *j->p++;
        if (c == '"')
            return 0;
        if (c != '\\')
            return bad(j, "control character in a string");
        if (j->p >= j->end)
            return bad(j, "unterminated string");
        c = *j->p++;
        static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
        const char *e = c ? strchr(from, c) : NULL;
        if (e) {
            sc_buf_putc(dst, to[e - from]);
            continue;
        }
        unsigned u, lo;
        if (c != 'u' || hex4(j, &u))
            return bad(j, "bad escape in a string");
        if (u >= 0xd800 && u < 0xdc00 && j->end - j->p >= 6 && j->p[0] == '\\' && j->p[1] == 'u') {
            const char *save = j->p;
            j->p += 2;
            if (!hex4(j, &lo) && lo >= 0xdc00 && lo < 0xe000)
                u = 0x10000 + ((u - 0xd800) << 10) + (lo - 0xdc00);
            else
                j->p = save;
        }
        put_utf8(dst, u >= 0xd800 && u < 0xe000 ? 0xfffd : u);
    }
}

static int skip_value(struct jx *j);

static int skip_container(struct jx *j, char close)
{
    if (++j->depth > MAX_DEPTH)
        return bad(j, "nested more than 64 deep");
    if (!take(j, close)) {
        do {
            if (close == '}') {
                j->tmp.len = 0;
                if (string_into(j, &j->tmp))
                    return SC_EFORMAT;
                if (!take(j, ':'))
                    return bad(j, "expected ':'");
            }
            if (skip_value(j))
                return SC_EFORMAT;
        } while (take(j, ','));
        if (!take(j, close))
            return bad(j, close == '}' ? "expected ',' or '}'" : "expected ',' or ']'");
    }
    j->depth--;
    return 0;
}

/* A number's text: [-+.0-9eE]+ (checked by whoever reads it). */
static int number_span(struct jx *j, const char **s, size_t *n)
{
    ws(j);
    *s = j->p;
    /* no strchr: numbers are most of a profile's JSON (speedscope's frame indexes) */
    while (j->p < j->end && ((*j->p >= '0' && *j->p <= '9') || *j->p == '-' || *j->p == '+' ||
                             *j->p == '.' || *j->p == 'e' || *j->p == 'E'))
        j->p++;
    *n = (size_t)(j->p - *s);
    return *n ? 0 : bad(j, "expected a value");
}

static int skip_value(struct jx *j)
{
    ws(j);
    if (j->p >= j->end)
        return bad(j, "unexpected end");
    const char *s;
    size_t n;
    switch (*j->p) {
    case '{':
    case '[': {
        char close = *j->p == '{' ? '}' : ']';
        j->p++;
        return skip_container(j, close);
    }
    case '"':
        j->tmp.len = 0;
        return string_into(j, &j->tmp);
    case 't':
        return lit(j, "true") ? 0 : bad(j, "bad literal");
    case 'f':
        return lit(j, "false") ? 0 : bad(j, "bad literal");
    case 'n':
        return lit(j, "null") ? 0 : bad(j, "bad literal");
    default:
        return number_span(j, &s, &n);
    }
}

/* A JSON key equals a field's .proto name or its lowerCamelCase JSON name. */
static int key_is(const char *key, size_t n, const char *snake)
{
    size_t sn = strlen(snake);
    if (n == sn && !memcmp(key, snake, n))
        return 1;
    size_t k = 0;
    int up = 0;
    for (const char *c = snake; *c; c++) {
        if (*c == '_') {
            up = 1;
            continue;
        }
        char want = up && *c >= 'a' && *c <= 'z' ? (char)(*c - 32) : *c;
        up = 0;
        if (k >= n || key[k++] != want)
            return 0;
    }
    return k == n;
}

static int check_size(struct jx *j)
{
    if (j->out->oom || j->tmp.oom)
        return sc_errf(j->err, SC_ENOMEM, "out of memory");
    if (j->out->len > j->max)
        return sc_errf(j->err, SC_ELIMIT, "the JSON body is more than %llu bytes as protobuf",
                       (unsigned long long)j->max);
    return 0;
}

static size_t open_len(struct jx *j, uint32_t num)
{
    sc_pb_put_tag(j->out, num, SC_WT_LEN);
    size_t at = j->out->len;
    static const char zero[LEN_BYTES];
    sc_buf_append(j->out, zero, LEN_BYTES);
    return at;
}

static void close_len(struct jx *j, size_t at)
{
    if (j->out->oom)
        return;
    uint64_t len = j->out->len - at - LEN_BYTES;
    unsigned char *d = (unsigned char *)j->out->data + at;
    for (int i = 0; i < LEN_BYTES; i++, len >>= 7)
        d[i] = (unsigned char)((len & 0x7f) | (i < LEN_BYTES - 1 ? 0x80 : 0));
}

/* A number's text: a JSON number, or a string holding one (64-bit integers, NaN). */
static int number_text(struct jx *j, const char **s, size_t *n, int *quoted)
{
    ws(j);
    *quoted = j->p < j->end && *j->p == '"';
    if (!*quoted)
        return number_span(j, s, n);
    j->tmp.len = 0;
    if (string_into(j, &j->tmp))
        return SC_EFORMAT;
    *s = j->tmp.data ? j->tmp.data : "";
    *n = j->tmp.len;
    return 0;
}

/* An integer, as a JSON number or a string holding one. */
static int integer(struct jx *j, int is_signed, uint64_t *out)
{
    const char *s;
    size_t n;
    int quoted;
    if (number_text(j, &s, &n, &quoted))
        return SC_EFORMAT;
    size_t i = 0;
    int neg = 0;
    if (i < n && s[i] == '-' && is_signed)
        neg = 1, i++;
    if (i == n)
        return bad(j, "expected an integer");
    uint64_t v = 0;
    for (; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return bad(j, "expected an integer");
        uint64_t d = (uint64_t)(s[i] - '0');
        if (v > (UINT64_MAX - d) / 10)
            return bad(j, "integer out of range");
        v = v * 10 + d;
    }
    if (is_signed && v > (neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX))
        return bad(j, "integer out of range");
    *out = neg ? (uint64_t)0 - v : v;
    return 0;
}

static int dbl(struct jx *j, double *out)
{
    char buf[64];
    const char *s;
    size_t n;
    int quoted;
    if (number_text(j, &s, &n, &quoted))
        return SC_EFORMAT;
    if (quoted) {
        if (n == 3 && !memcmp(s, "NaN", 3)) {
            *out = NAN;
            return 0;
        }
        if ((n == 8 && !memcmp(s, "Infinity", 8)) || (n == 9 && !memcmp(s, "-Infinity", 9))) {
            *out = s[0] == '-' ? -INFINITY : INFINITY;
            return 0;
        }
    }
    if (n == 0 || n >= sizeof buf)
        return bad(j, "expected a number");
    memcpy(buf, s, n);
    buf[n] = 0;
    char *e;
    *out = strtod(buf, &e);
    return *e ? bad(j, "expected a number") : 0;
}

static int b64val(char c)
{
    return c >= 'A' && c <= 'Z'   ? c - 'A'
           : c >= 'a' && c <= 'z' ? c - 'a' + 26
           : c >= '0' && c <= '9' ? c - '0' + 52
           : c == '+' || c == '-' ? 62
           : c == '/' || c == '_' ? 63
                                  : -1;
}

/* tmp (a decoded string) as bytes into out: base64 or hex. */
static int put_decoded_bytes(struct jx *j, int hex)
{
    const char *s = j->tmp.data ? j->tmp.data : "";
    size_t n = j->tmp.len;
    if (hex) {
        if (n % 2)
            return bad(j, "odd number of hex digits");
        for (size_t i = 0; i < n; i += 2) {
            int hi = hexval(s[i]), lo = hexval(s[i + 1]);
            if (hi < 0 || lo < 0)
                return bad(j, "bad hex digit");
            sc_buf_putc(j->out, (char)(hi << 4 | lo));
        }
        return 0;
    }
    while (n && s[n - 1] == '=')
        n--;
    uint32_t acc = 0;
    int bits = 0;
    for (size_t i = 0; i < n; i++) {
        int v = b64val(s[i]);
        if (v < 0)
            return bad(j, "bad base64");
        acc = acc << 6 | (uint32_t)v;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            sc_buf_putc(j->out, (char)(acc >> bits));
        }
    }
    return bits >= 6 ? bad(j, "bad base64 length") : 0;
}

static int message(struct jx *j, const struct sc_pbj_msg *m);
static int array(struct jx *j, const struct sc_pbj_field *f);

/* One (non-null) value of field f, with its tag. */
static int value(struct jx *j, const struct sc_pbj_field *f)
{
    uint64_t v = 0;
    double d;
    size_t at;
    int rc = 0;
    switch (f->kind) {
    case SC_PBJ_MESSAGE:
        at = open_len(j, f->num);
        rc = message(j, f->msg);
        close_len(j, at);
        break;
    case SC_PBJ_ARRAY:
        at = open_len(j, f->num);
        rc = array(j, &f->msg->fields[0]);
        close_len(j, at);
        break;
    case SC_PBJ_STRING:
        at = open_len(j, f->num);
        rc = string_into(j, j->out);
        close_len(j, at);
        break;
    case SC_PBJ_BYTES:
    case SC_PBJ_HEX:
        j->tmp.len = 0;
        if ((rc = string_into(j, &j->tmp)))
            break;
        at = open_len(j, f->num);
        rc = put_decoded_bytes(j, f->kind == SC_PBJ_HEX);
        close_len(j, at);
        break;
    case SC_PBJ_INT:
    case SC_PBJ_UINT:
        if (!(rc = integer(j, f->kind == SC_PBJ_INT, &v))) {
            sc_pb_put_tag(j->out, f->num, SC_WT_VARINT);
            sc_pb_put_varint(j->out, v);
        }
        break;
    case SC_PBJ_FIXED64:
        if (!(rc = integer(j, 0, &v))) {
            sc_pb_put_tag(j->out, f->num, SC_WT_I64);
            sc_buf_append(j->out, &v, 8); /* little-endian hosts only, as the decoder */
        }
        break;
    case SC_PBJ_DOUBLE:
        if (!(rc = dbl(j, &d))) {
            sc_pb_put_tag(j->out, f->num, SC_WT_I64);
            sc_buf_append(j->out, &d, 8);
        }
        break;
    case SC_PBJ_BOOL:
        ws(j);
        if (lit(j, "true"))
            v = 1;
        else if (!lit(j, "false"))
            rc = bad(j, "expected true or false");
        if (!rc) {
            sc_pb_put_tag(j->out, f->num, SC_WT_VARINT);
            sc_pb_put_varint(j->out, v);
        }
        break;
    }
    return rc ? rc : check_size(j);
}

static int is_null(struct jx *j)
{
    ws(j);
    return lit(j, "null");
}

/* The values of repeated field f, a JSON array. */
static int array(struct jx *j, const struct sc_pbj_field *f)
{
    if (!take(j, '['))
        return bad(j, "expected an array");
    if (++j->depth > MAX_DEPTH)
        return bad(j, "nested more than 64 deep");
    if (!take(j, ']')) {
        do {
            int rc = is_null(j) ? 0 : value(j, f);
            if (rc)
                return rc;
        } while (take(j, ','));
        if (!take(j, ']'))
            return bad(j, "expected ',' or ']'");
    }
    j->depth--;
    return 0;
}

static int field(struct jx *j, const struct sc_pbj_field *f)
{
    if (is_null(j))
        return 0;
    return f->repeated ? array(j, f) : value(j, f);
}

static int message(struct jx *j, const struct sc_pbj_msg *m)
{
    if (!take(j, '{'))
        return bad(j, "expected an object");
    if (++j->depth > MAX_DEPTH)
        return bad(j, "nested more than 64 deep");
    if (!take(j, '}')) {
        do {
            j->tmp.len = 0;
            int rc = string_into(j, &j->tmp);
            if (rc)
                return rc;
            char key[MAX_KEY];
            size_t kn = j->tmp.len < MAX_KEY ? j->tmp.len : 0; /* too long: no field's */
            if (kn)
                memcpy(key, j->tmp.data, kn);
            if (!take(j, ':'))
                return bad(j, "expected ':'");
            const struct sc_pbj_field *f = NULL;
            for (uint32_t i = 0; kn && i < m->nfields && !f; i++)
                if (key_is(key, kn, m->fields[i].name))
                    f = &m->fields[i];
            rc = f ? field(j, f) : skip_value(j);
            if (rc)
                return rc;
        } while (take(j, ','));
        if (!take(j, '}'))
            return bad(j, "expected ',' or '}'");
    }
    j->depth--;
    return 0;
}

static int transcode(const char *text, size_t n, const struct sc_pbj_msg *root,
                     const struct sc_pbj_field *field, uint64_t max_out, struct sc_buf *out,
                     char *err)
{
    struct jx j = {text, text, text + n, out, SC_BUF_INIT, max_out, 0, err};
    if (max_out > UINT32_MAX)
        j.max = UINT32_MAX; /* lengths fit LEN_BYTES */
    int rc = root ? message(&j, root) : array(&j, field);
    if (!rc) {
        ws(&j);
        if (j.p != j.end)
            rc = bad(&j, "text after the object");
    }
    if (!rc)
        rc = check_size(&j);
    sc_buf_release(&j.tmp);
    return rc;
}

int sc_pbjson_transcode(const char *text, size_t n, const struct sc_pbj_msg *root, uint64_t max_out,
                        struct sc_buf *out, char *err)
{
    return transcode(text, n, root, NULL, max_out, out, err);
}

int sc_pbjson_transcode_array(const char *text, size_t n, const struct sc_pbj_field *field,
                              uint64_t max_out, struct sc_buf *out, char *err)
{
    return transcode(text, n, NULL, field, max_out, out, err);
}
