/* store.c - what every store backend shares: ids, canonical labels, type rules, options. */
#include "store/store_int.h"
#include "model/error.h"
#include "model/hash.h"

#include <stdlib.h>
#include <string.h>

void sc_store_opts_init(struct sc_store_opts *o)
{
    memset(o, 0, sizeof *o);
    o->dir = "./data";
    o->retention_ns = (int64_t)30 * 24 * 3600 * 1000000000LL;
    o->zstd_level = 3;
    o->durable = 1;
    o->background = 1;
}

/* A frame id is XXH3 over 32 bytes: the XXH3 of the function name, of the file name and
 * of the binary, and the line, each 8 bytes little-endian. Hashing the strings separately
 * lets a writer hash each function name once per profile, and no choice of strings can
 * collide by shifting bytes between fields. */
uint64_t sc_frame_id_from(uint64_t hfunction, uint64_t hfile, uint64_t hbinary, int64_t line)
{
    uint64_t parts[4] = {hfunction, hfile, hbinary, (uint64_t)line};
    unsigned char b[32];
    for (int i = 0; i < 4; i++)
        for (int k = 0; k < 8; k++)
            b[8 * i + k] = (unsigned char)(parts[i] >> (8 * k));
    return sc_hash64(b, sizeof b);
}

uint64_t sc_frame_id(const char *function, size_t flen, const char *file, size_t filelen,
                     int64_t line, const char *binary, size_t blen)
{
    return sc_frame_id_from(sc_hash64(function, flen), sc_hash64(file, filelen),
                            sc_hash64(binary, blen), line);
}

static int cmp_pairs(const void *a, const void *b)
{
    return strcmp(((const struct sc_label_pair *)a)->name, ((const struct sc_label_pair *)b)->name);
}

static void put_escaped(struct sc_buf *out, const char *s)
{
    for (; *s; s++) {
        if (*s == '\\' || *s == '"') {
            sc_buf_putc(out, '\\');
            sc_buf_putc(out, *s);
        } else if (*s == '\n') {
            sc_buf_puts(out, "\\n");
        } else {
            sc_buf_putc(out, *s);
        }
    }
}

int sc_labels_canonical(struct sc_label_pair *pairs, uint32_t n, struct sc_buf *out, char *err)
{
    qsort(pairs, n, sizeof *pairs, cmp_pairs);
    sc_buf_putc(out, '{');
    for (uint32_t i = 0; i < n; i++) {
        if (!pairs[i].name || !*pairs[i].name)
            return sc_errf(err, SC_EINVAL, "empty label name");
        if (i && strcmp(pairs[i].name, pairs[i - 1].name) == 0)
            return sc_errf(err, SC_EINVAL, "duplicate label '%s'", pairs[i].name);
        if (i)
            sc_buf_putc(out, ',');
        sc_buf_puts(out, pairs[i].name);
        sc_buf_puts(out, "=\"");
        put_escaped(out, pairs[i].value ? pairs[i].value : "");
        sc_buf_putc(out, '"');
    }
    sc_buf_putc(out, '}');
    return out->oom ? SC_ENOMEM : 0;
}

int sc_labels_parse_canonical(const char *s, struct sc_buf *buf, struct sc_label_pair *pairs,
                              uint32_t max)
{
    size_t len = strlen(s);
    if (len < 2 || s[0] != '{' || s[len - 1] != '}')
        return SC_EFORMAT;
    buf->len = 0;
    /* copy with escapes undone; names and values NUL-terminated in place */
    if (sc_buf_reserve(buf, len + 1))
        return SC_ENOMEM;
    char *d = buf->data;
    size_t offs[2 * 256];
    uint32_t n = 0;
    const char *p = s + 1, *end = s + len - 1;
    size_t o = 0;
    while (p < end) {
        if (n >= max || n >= 256)
            return SC_EFORMAT;
        offs[2 * n] = o;
        while (p < end && *p != '=')
            d[o++] = *p++;
        d[o++] = 0;
        if (p + 1 >= end || p[1] != '"')
            return SC_EFORMAT;
        p += 2;
        offs[2 * n + 1] = o;
        while (p < end && *p != '"') {
            if (*p == '\\' && p + 1 < end) {
                p++;
                d[o++] = *p == 'n' ? '\n' : *p;
                p++;
            } else {
                d[o++] = *p++;
            }
        }
        if (p >= end)
            return SC_EFORMAT;
        d[o++] = 0;
        p++;
        n++;
        if (p < end) {
            if (*p != ',')
                return SC_EFORMAT;
            p++;
        }
    }
    buf->len = o;
    for (uint32_t i = 0; i < n; i++) {
        pairs[i].name = d + offs[2 * i];
        pairs[i].value = d + offs[2 * i + 1];
    }
    return (int)n;
}

int sc_type_is_gauge(const char *profile, const char *sample_type)
{
    (void)profile;
    return !strcmp(sample_type, "inuse_space") || !strcmp(sample_type, "inuse_objects") ||
           !strcmp(sample_type, "goroutine") || !strcmp(sample_type, "goroutines") ||
           !strcmp(sample_type, "threadcreate");
}
