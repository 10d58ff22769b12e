/* buf.c - growable byte buffer. */
#include "model/buf.h"
#include "model/error.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

void sc_buf_init(struct sc_buf *b)
{
    memset(b, 0, sizeof *b);
}

void sc_buf_release(struct sc_buf *b)
{
    free(b->data);
    sc_buf_init(b);
}

int sc_buf_reserve(struct sc_buf *b, size_t n)
{
    if (b->oom)
        return SC_ENOMEM;
    if (b->len + n + 1 <= b->cap)
        return 0;
    if (n > SIZE_MAX / 4 - b->len) {
        b->oom = 1;
        return SC_ENOMEM;
    }
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->len + n + 1)
        cap *= 2;
    char *p = realloc(b->data, cap);
    if (!p) {
        b->oom = 1;
        return SC_ENOMEM;
    }
    b->data = p;
    b->cap = cap;
    return 0;
}

void sc_buf_append(struct sc_buf *b, const void *p, size_t n)
{
    if (sc_buf_reserve(b, n))
        return;
    if (n)
        memcpy(b->data + b->len, p, n);
    b->len += n;
    b->data[b->len] = 0;
}

void sc_buf_puts(struct sc_buf *b, const char *s)
{
    sc_buf_append(b, s, strlen(s));
}

void sc_buf_printf(struct sc_buf *b, const char *fmt, ...)
{
    va_list ap;
    char small[256];
    va_start(ap, fmt);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    if ((size_t)n < sizeof small) {
        sc_buf_append(b, small, (size_t)n);
        return;
    }
    if (sc_buf_reserve(b, (size_t)n))
        return;
    va_start(ap, fmt);
    vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

void sc_buf_put_u64(struct sc_buf *b, uint64_t v)
{
    char tmp[24];
    char *p = tmp + sizeof tmp;
    do {
        *--p = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    sc_buf_append(b, p, (size_t)(tmp + sizeof tmp - p));
}

void sc_buf_put_num(struct sc_buf *b, double v)
{
    if (isnan(v) || isinf(v)) {
        sc_buf_puts(b, "null");
        return;
    }
    char num[40];
    snprintf(num, sizeof num, "%.10g", v);
    sc_buf_puts(b, num);
}

void sc_buf_put_i64(struct sc_buf *b, int64_t v)
{
    if (v < 0) {
        sc_buf_putc(b, '-');
        sc_buf_put_u64(b, (uint64_t)0 - (uint64_t)v);
    } else {
        sc_buf_put_u64(b, (uint64_t)v);
    }
}

size_t sc_utf8_seq(const unsigned char *s, size_t n)
{
    unsigned c = s[0], lo = 0x80, hi = 0xbf;
    size_t len;
    if (c < 0x80)
        return 1;
    if (c >= 0xc2 && c <= 0xdf)
        len = 2;
    else if (c >= 0xe0 && c <= 0xef)
        len = 3, lo = c == 0xe0 ? 0xa0 : 0x80, hi = c == 0xed ? 0x9f : 0xbf;
    else if (c >= 0xf0 && c <= 0xf4)
        len = 4, lo = c == 0xf0 ? 0x90 : 0x80, hi = c == 0xf4 ? 0x8f : 0xbf;
    else
        return 0;
    if (n < len)
        return 0;
    for (size_t k = 1; k < len; k++)
        if (s[k] < (k == 1 ? lo : 0x80) || s[k] > (k == 1 ? hi : 0xbf))
            return 0;
    return len;
}

void sc_buf_put_utf8(struct sc_buf *b, const char *s, size_t n)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t start = 0, i = 0;
    while (i < n) {
        size_t len = p[i] < 0x80 ? 1 : sc_utf8_seq(p + i, n - i);
        if (len) {
            i += len;
            continue;
        }
        sc_buf_append(b, s + start, i - start);
        sc_buf_append(b, "\xef\xbf\xbd", 3);
        start = ++i;
    }
    sc_buf_append(b, s + start, i - start);
}

/* Plain ASCII runs are copied as they are; escapes as JSON wants them; bytes that are not
 * UTF-8 become U+FFFD, so every document scorch writes is valid UTF-8 whatever a profile,
 * a label or a push holds. */
void sc_buf_put_json_str(struct sc_buf *b, const char *s, size_t n)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t start = 0, i = 0;
    while (i < n) {
        unsigned c = p[i];
        if (c >= 0x20 && c < 0x80 && c != '"' && c != '\\') {
            i++;
            continue;
        }
        if (c >= 0x80) {
            size_t len = sc_utf8_seq(p + i, n - i);
            if (len) {
                i += len;
                continue;
            }
        }
        sc_buf_append(b, s + start, i - start);
        switch (c) {
        case '"':
            sc_buf_append(b, "\\\"", 2);
            break;
        case '\\':
            sc_buf_append(b, "\\\\", 2);
            break;
        case '\n':
            sc_buf_append(b, "\\n", 2);
            break;
        case '\t':
            sc_buf_append(b, "\\t", 2);
            break;
        case '\r':
            sc_buf_append(b, "\\r", 2);
            break;
        default:
            if (c >= 0x80)
                sc_buf_append(b, "\\ufffd", 6);
            else
                sc_buf_printf(b, "\\u%04x", c);
        }
        start = ++i;
    }
    sc_buf_append(b, s + start, n - start);
}

void sc_buf_put_url(struct sc_buf *b, const char *s, size_t n)
{
    static const char hex[] = "0123456789ABCDEF";
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
            c == '-' || c == '_' || c == '.' || c == '~') {
            sc_buf_putc(b, (char)c);
        } else {
            sc_buf_putc(b, '%');
            sc_buf_putc(b, hex[c >> 4]);
            sc_buf_putc(b, hex[c & 15]);
        }
    }
}

char *sc_buf_detach(struct sc_buf *b, size_t *len)
{
    char *p = b->data;
    if (len)
        *len = b->len;
    sc_buf_init(b);
    return p;
}

int sc_buf_write_fd(const struct sc_buf *b, int fd)
{
    size_t off = 0;
    while (off < b->len) {
        ssize_t n = write(fd, b->data + off, b->len - off);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return SC_EIO;
        }
        off += (size_t)n;
    }
    return 0;
}

int sc_grow_arrays(uint32_t *cap, uint64_t need, int fill, const struct sc_grow_part *parts,
                   size_t n)
{
    if (need <= *cap)
        return 0;
    if (need > UINT32_MAX / 2)
        return SC_ELIMIT;
    uint64_t ncap = *cap ? *cap : 16;
    while (ncap < need)
        ncap *= 2;
    for (size_t i = 0; i < n; i++)
        if (parts[i].sz && ncap > SIZE_MAX / parts[i].sz)
            return SC_ELIMIT;
    for (size_t i = 0; i < n; i++) {
        size_t sz = parts[i].sz;
        if (!sz)
            continue;
        void **p = parts[i].arrp;
        char *np = realloc(*p, (size_t)ncap * sz);
        if (!np)
            return SC_ENOMEM;
        *p = np;
        if (fill >= 0)
            memset(np + (size_t)*cap * sz, fill, (size_t)(ncap - *cap) * sz);
    }
    *cap = (uint32_t)ncap;
    return 0;
}

int sc_grow_array(void *arrp, uint32_t *cap, uint64_t need, size_t sz)
{
    struct sc_grow_part part = {arrp, sz};
    return sc_grow_arrays(cap, need, -1, &part, 1);
}

int sc_grow_array_fill(void *arrp, uint32_t *cap, uint64_t need, size_t sz, int fill)
{
    struct sc_grow_part part = {arrp, sz};
    return sc_grow_arrays(cap, need, fill, &part, 1);
}

void sc_strv_free(char **v, uint32_t n)
{
    for (uint32_t i = 0; v && i < n; i++)
        free(v[i]);
    free(v);
}
