/* block.c - encoding and decoding of compressed sample blocks (layout in block.h). */
#include "store/block.h"
#include "formats/protowire.h"
#include "model/error.h"
#include "model/profile.h"
#include "model/radix.h"

#include <stdlib.h>
#include <string.h>
#include <zstd.h>

enum { CODEC_RAW = 0, CODEC_ZSTD = 1 };

void sc_put_uvarint(struct sc_buf *b, uint64_t v)
{
    sc_pb_put_varint(b, v);
}

int sc_block_encode(const struct sc_block *b, struct sc_buf *out, int zstd_level)
{
    if (b->format != SC_BLOCK_AGG && b->format != SC_BLOCK_TIMED)
        return SC_EINVAL;
    struct sc_buf raw = SC_BUF_INIT;
    sc_buf_putc(&raw, (char)b->format);
    sc_put_uvarint(&raw, b->n);
    sc_put_uvarint(&raw, b->ncols);
    uint32_t prev = 0;
    for (uint32_t i = 0; i < b->n; i++) {
        if (b->format == SC_BLOCK_AGG) {
            if (i && b->stacks[i] <= prev) {
                sc_buf_release(&raw);
                return SC_EINVAL; /* must be strictly ascending */
            }
            sc_put_uvarint(&raw, b->stacks[i] - prev);
        } else {
            sc_put_uvarint(&raw, sc_zigzag((int64_t)b->stacks[i] - (int64_t)prev));
        }
        prev = b->stacks[i];
    }
    if (b->format == SC_BLOCK_TIMED) {
        int64_t pt = 0;
        for (uint32_t i = 0; i < b->n; i++) {
            if (i && b->times[i] < pt) {
                sc_buf_release(&raw);
                return SC_EINVAL;
            }
            sc_put_uvarint(&raw, i ? (uint64_t)b->times[i] - (uint64_t)pt : sc_zigzag(b->times[i]));
            pt = b->times[i];
        }
    }
    uint64_t divs[4096];
    if (b->ncols > 4096) {
        sc_buf_release(&raw);
        return SC_EINVAL;
    }
    for (uint32_t c = 0; c < b->ncols; c++) {
        uint64_t g = 0;
        for (uint32_t i = 0; i < b->n && g != 1; i++) {
            int64_t v = b->values[(size_t)c * b->n + i];
            uint64_t a = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
            while (a) { /* gcd(g, a) */
                uint64_t r = g % a;
                g = a;
                a = r;
            }
        }
        divs[c] = g ? g : 1;
        /* INT64_MIN / -1 style surprises: only divide when it is exact and safe */
        if (divs[c] > (uint64_t)INT64_MAX)
            divs[c] = 1;
        sc_put_uvarint(&raw, divs[c]);
    }
    for (uint32_t c = 0; c < b->ncols; c++)
        for (uint32_t i = 0; i < b->n; i++)
            sc_put_uvarint(&raw, sc_zigzag(b->values[(size_t)c * b->n + i] / (int64_t)divs[c]));
    if (raw.oom) {
        sc_buf_release(&raw);
        return SC_ENOMEM;
    }
    int rc = 0;
    if (raw.len < 64 || zstd_level <= 0) {
        sc_buf_putc(out, CODEC_RAW);
        sc_buf_append(out, raw.data, raw.len);
    } else {
        size_t bound = ZSTD_compressBound(raw.len);
        if (sc_buf_reserve(out, bound + 1) == 0) {
            out->data[out->len] = CODEC_ZSTD;
            size_t got =
                ZSTD_compress(out->data + out->len + 1, bound, raw.data, raw.len, zstd_level);
            if (ZSTD_isError(got))
                rc = SC_EINTERNAL;
            else
                out->len += got + 1;
        }
    }
    sc_buf_release(&raw);
    return rc ? rc : out->oom ? SC_ENOMEM : 0;
}

void sc_block_release(struct sc_block *b)
{
    if (!b->borrowed) {
        free(b->stacks);
        free(b->times);
        free(b->values);
    }
    memset(b, 0, sizeof *b);
}

void sc_block_scratch_release(struct sc_block_scratch *s)
{
    free(s->plain);
    free(s->stacks);
    free(s->values);
    free(s->times);
    memset(s, 0, sizeof *s);
}

/* n elements of sz bytes: fresh (s NULL), or *buf grown to hold them (s's, kept). Not
 * sc_grow_array: a block's plain bytes may pass its 2^31 (max_rows * 40). */
static void *buffer(struct sc_block_scratch *s, void **buf, size_t *cap, size_t n, size_t sz)
{
    if (!s)
        return malloc((n ? n : 1) * sz);
    if (n > *cap || !*buf) {
        size_t c = n + n / 2 + 64;
        void *nb = realloc(*buf, c * sz);
        if (!nb)
            return NULL;
        *buf = nb;
        *cap = c;
    }
    return *buf;
}

/* sc_block_decode into fresh arrays (s NULL) or s's. */
static int decode(const void *data, size_t len, uint32_t max_rows, struct sc_block *b,
                  struct sc_block_scratch *s, char *err)
{
    memset(b, 0, sizeof *b);
    b->borrowed = s != NULL;
    const uint8_t *in = data;
    if (len < 1)
        return sc_errf(err, SC_EFORMAT, "empty sample block");
    void *plain = NULL;
    const uint8_t *p, *end;
    if (in[0] == CODEC_RAW) {
        p = in + 1;
        end = in + len;
    } else if (in[0] == CODEC_ZSTD) {
        unsigned long long size = ZSTD_getFrameContentSize(in + 1, len - 1);
        /* every row takes at least 2 bytes per column plus one for its stack */
        unsigned long long most = 16 + (unsigned long long)max_rows * 40;
        if (size == ZSTD_CONTENTSIZE_ERROR || size == ZSTD_CONTENTSIZE_UNKNOWN || size > most)
            return sc_errf(err, SC_EFORMAT, "corrupt sample block");
        plain = buffer(s, s ? &s->plain : NULL, s ? &s->plain_cap : NULL, size, 1);
        if (!plain)
            return sc_errf(err, SC_ENOMEM, "out of memory");
        size_t got = ZSTD_decompress(plain, size, in + 1, len - 1);
        if (ZSTD_isError(got) || got != size) {
            if (!s)
                free(plain);
            return sc_errf(err, SC_EFORMAT, "corrupt sample block");
        }
        p = plain;
        end = p + got;
    } else {
        return sc_errf(err, SC_EFORMAT, "unknown sample block codec %u", in[0]);
    }
    int rc = SC_EFORMAT;
    uint64_t n, t;
    if (p >= end)
        goto bad;
    b->format = *p++;
    if ((b->format != SC_BLOCK_AGG && b->format != SC_BLOCK_TIMED) || sc_get_uvarint(&p, end, &n) ||
        sc_get_uvarint(&p, end, &t))
        goto bad;
    /* each row costs at least one byte per stack and per column: bounds both counts */
    if (n > max_rows || t > 4096 || n * (t + 1) > (uint64_t)(end - p)) {
        rc = n > max_rows ? SC_ELIMIT : SC_EFORMAT;
        goto bad;
    }
    b->n = (uint32_t)n;
    b->ncols = (uint32_t)t;
    b->stacks =
        buffer(s, s ? (void **)&s->stacks : NULL, s ? &s->stacks_cap : NULL, n, sizeof *b->stacks);
    b->values = buffer(s, s ? (void **)&s->values : NULL, s ? &s->values_cap : NULL, n * t + 1,
                       sizeof *b->values);
    if (b->format == SC_BLOCK_TIMED)
        b->times =
            buffer(s, s ? (void **)&s->times : NULL, s ? &s->times_cap : NULL, n, sizeof *b->times);
    if (!b->stacks || !b->values || (b->format == SC_BLOCK_TIMED && !b->times)) {
        rc = SC_ENOMEM;
        goto bad;
    }
    uint64_t prev = 0, v;
    for (uint32_t i = 0; i < n; i++) {
        if (sc_get_uvarint(&p, end, &v))
            goto bad;
        if (b->format == SC_BLOCK_AGG) {
            if ((i && v == 0) || v > UINT32_MAX) /* ascending, and no wrap-around */
                goto bad;
            prev += v;
        } else {
            /* modulo 2^64: a result below 0 or past 2^32 lands above UINT32_MAX */
            prev += (uint64_t)sc_unzigzag(v);
        }
        if (prev > UINT32_MAX)
            goto bad;
        b->stacks[i] = (uint32_t)prev;
    }
    if (b->format == SC_BLOCK_TIMED) {
        int64_t tm = 0;
        for (uint32_t i = 0; i < n; i++) {
            if (sc_get_uvarint(&p, end, &v))
                goto bad;
            /* a delta past the int64 range ahead of the previous time is damage */
            if (i && (v > (uint64_t)INT64_MAX || tm > INT64_MAX - (int64_t)v))
                goto bad;
            tm = i ? tm + (int64_t)v : sc_unzigzag(v);
            b->times[i] = tm;
        }
    }
    uint64_t divs[4096];
    for (uint64_t c = 0; c < t; c++) {
        if (sc_get_uvarint(&p, end, &divs[c]) || divs[c] == 0 || divs[c] > (uint64_t)INT64_MAX)
            goto bad;
    }
    for (uint64_t c = 0; c < t; c++)
        for (uint64_t i = 0; i < n; i++) {
            if (sc_get_uvarint(&p, end, &v))
                goto bad;
            /* wrap-around like the writer's sums; no signed overflow */
            b->values[c * n + i] = (int64_t)((uint64_t)sc_unzigzag(v) * divs[c]);
        }
    if (p != end)
        goto bad;
    if (!s)
        free(plain);
    return 0;
bad:
    if (!s)
        free(plain);
    sc_block_release(b);
    if (rc == SC_ENOMEM)
        return sc_errf(err, rc, "out of memory");
    if (rc == SC_ELIMIT)
        return sc_errf(err, rc, "sample block has more than %u rows", (unsigned)max_rows);
    return sc_errf(err, SC_EFORMAT, "corrupt sample block");
}

int sc_block_decode(const void *data, size_t len, uint32_t max_rows, struct sc_block *b, char *err)
{
    return decode(data, len, max_rows, b, NULL, err);
}

int sc_block_decode_in(const void *data, size_t len, uint32_t max_rows, struct sc_block *b,
                       struct sc_block_scratch *s, char *err)
{
    return decode(data, len, max_rows, b, s, err);
}

/* Sorts rows by stack (radix sort on (stack << 32 | row) keys by their stack half, stable:
 * rows start in order), then sums rows with equal stacks. */
#define STACK_OF(e) ((e) >> 32)
SC_RADIX_SORT(sort_by_stack, uint64_t, STACK_OF)

int sc_block_normalize(struct sc_block *b)
{
    uint32_t n = b->n, t = b->ncols;
    if (n <= 1)
        return 0;
    uint64_t *k = malloc((size_t)n * sizeof *k);
    int64_t *vals = malloc((size_t)n * t * sizeof *vals + 1);
    if (!k || !vals) {
        free(k);
        free(vals);
        return SC_ENOMEM;
    }
    for (uint32_t i = 0; i < n; i++)
        k[i] = (uint64_t)b->stacks[i] << 32 | i;
    if (sort_by_stack(k, n)) {
        free(k);
        free(vals);
        return SC_ENOMEM;
    }
    uint32_t m = 0;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t stack = (uint32_t)(k[i] >> 32), row = (uint32_t)k[i];
        if (m && b->stacks[m - 1] == stack) {
            for (uint32_t c = 0; c < t; c++)
                vals[(size_t)c * n + m - 1] =
                    sc_add_sat(vals[(size_t)c * n + m - 1], b->values[(size_t)c * n + row]);
            continue;
        }
        b->stacks[m] = stack;
        for (uint32_t c = 0; c < t; c++)
            vals[(size_t)c * n + m] = b->values[(size_t)c * n + row];
        m++;
    }
    /* columns from stride n to stride m */
    for (uint32_t c = 0; c < t; c++)
        memmove(b->values + (size_t)c * m, vals + (size_t)c * n, m * sizeof *vals);
    b->n = m;
    free(k);
    free(vals);
    return 0;
}
