/* buf.h - growable byte buffer with a sticky out-of-memory flag. */
#ifndef SC_BUF_H
#define SC_BUF_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* A buffer always keeps data NUL-terminated when len > 0 so it can be used as a C string.
 * Appends never fail visibly: on allocation failure the buffer sets oom and ignores further
 * appends, and the caller checks oom once at the end (as git's strbuf dies, we report). */
struct sc_buf {
    char *data;
    size_t len, cap;
    int oom;
};

#define SC_BUF_INIT                                                                                \
    {                                                                                              \
        NULL, 0, 0, 0                                                                              \
    }

void sc_buf_init(struct sc_buf *b);
void sc_buf_release(struct sc_buf *b);
/* Makes room for n more bytes; returns 0 or SC_ENOMEM (and sets oom). */
int sc_buf_reserve(struct sc_buf *b, size_t n);
void sc_buf_append(struct sc_buf *b, const void *p, size_t n);
void sc_buf_puts(struct sc_buf *b, const char *s);
void sc_buf_printf(struct sc_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Decimal integers, much faster than printf. */
void sc_buf_put_i64(struct sc_buf *b, int64_t v);
/* A JSON number with ten significant digits ("%.10g"); NaN and infinities (no JSON number
 * says them) as null. */
void sc_buf_put_num(struct sc_buf *b, double v);
void sc_buf_put_u64(struct sc_buf *b, uint64_t v);
/* Appends s as the body of a JSON string (no quotes), escaping as RFC 8259 requires: the
 * escaper of model/json.h's writer, through which answers write their JSON. */
void sc_buf_put_json_str(struct sc_buf *b, const char *s, size_t n);
/* The length of the well-formed UTF-8 sequence (RFC 3629: no overlongs, surrogates or
 * code points past U+10FFFF) at s, 1..4, or 0 when the bytes there do not form one. */
size_t sc_utf8_seq(const unsigned char *s, size_t n);
/* Appends s as well-formed UTF-8: each byte that does not begin a well-formed sequence
 * (sc_utf8_seq) becomes U+FFFD, the rule of every writer's escaper here. */
void sc_buf_put_utf8(struct sc_buf *b, const char *s, size_t n);
/* Appends s percent-encoded for a URL's query (RFC 3986: all but the unreserved
 * characters A-Z a-z 0-9 - _ . ~). */
void sc_buf_put_url(struct sc_buf *b, const char *s, size_t n);
/* Hands the data to the caller (who frees it with free()) and resets the buffer. */
char *sc_buf_detach(struct sc_buf *b, size_t *len);

static inline void sc_buf_putc(struct sc_buf *b, char c)
{
    if (b->len + 1 < b->cap || sc_buf_reserve(b, 1) == 0) {
        b->data[b->len++] = c;
        b->data[b->len] = 0;
    }
}

/* The value of a hexadecimal digit, -1 for anything else. */
static inline int sc_hex_digit(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* Grows the array *arrp (elements of size sz, capacity *cap) to hold need elements,
 * doubling from 16. 0, SC_ELIMIT past 2^31 elements or SIZE_MAX bytes, or SC_ENOMEM (the
 * array unchanged). */
int sc_grow_array(void *arrp, uint32_t *cap, uint64_t need, size_t sz);
/* sc_grow_array, with the new elements (from the old capacity on) filled with the byte
 * fill: 0 for tables indexed by id whose absent entries read as zero. */
int sc_grow_array_fill(void *arrp, uint32_t *cap, uint64_t need, size_t sz, int fill);

/* One of several arrays that share a capacity (columns of one table). */
struct sc_grow_part {
    void *arrp; /* the address of the array's pointer */
    size_t sz;  /* bytes per element of the capacity (a row of several values, say) */
};
#define SC_GROW_PART(a)                                                                            \
    {                                                                                              \
        &(a), sizeof *(a)                                                                          \
    }

/* Grows the n arrays of parts together to the capacity sc_grow_array would give them, the
 * new elements filled with the byte fill (or left as they are for fill < 0); a part of size
 * 0 is left alone. On failure *cap is unchanged and every array still holds its old
 * elements (some may have grown). 0, SC_ELIMIT or SC_ENOMEM. */
int sc_grow_arrays(uint32_t *cap, uint64_t need, int fill, const struct sc_grow_part *parts,
                   size_t n);
/* Frees the n strings of v (NULL entries allowed), then v itself; v may be NULL. */
void sc_strv_free(char **v, uint32_t n);

/* Writes all of b to fd (retrying short writes); 0 or SC_EIO. */
int sc_buf_write_fd(const struct sc_buf *b, int fd);

#endif
