/* block.h - the compressed sample block: one stored profile's (stack, values[, time]) rows. */
#ifndef SC_BLOCK_H
#define SC_BLOCK_H

#include <stddef.h>
#include <stdint.h>

#include "model/buf.h"

/* A block holds the samples of one profile (or one rollup) for all of its sample types,
 * column by column, then zstd-compressed as a whole. Stacks are the store's dense stack
 * numbers (not the 64-bit content hashes: dense numbers sorted and delta-coded take about a
 * byte each, a hash always eight).
 *
 * Layout before compression (all integers varints; "zz" = zigzag varint):
 *
 *   OFFSET  SIZE     MEANING
 *   0       1        format: 1 = aggregated (one row per distinct stack, stacks ascending)
 *                            2 = timed (one row per sample, times ascending)
 *   1       var      n, the number of rows
 *   .       var      t, the number of value columns (sample types)
 *   .       n vars   stacks: format 1: deltas from the previous stack (the first from 0);
 *                            format 2: zz deltas from the previous row's stack
 *   .       n vars   format 2 only: time deltas in ns from the block's base time (first row)
 *                    or the previous row (others)
 *   .       t vars   per column, a divisor d >= 1 (the GCD of the column: CPU time in ns is
 *                    a multiple of the sampling period, so d = 10000000 turns 4-byte values
 *                    into 1-byte ones)
 *   .       t*n zz   values / d, column after column; a column's row i belongs to stack i
 *
 * The compressed block is: 1 byte codec (0 = stored, 1 = zstd) + payload. Blocks of a few
 * dozen bytes are stored raw (zstd's frame header would cost more than it saves). */

enum { SC_BLOCK_AGG = 1, SC_BLOCK_TIMED = 2 };

struct sc_block {
    int format;
    uint32_t n, ncols;
    uint32_t *stacks; /* n */
    int64_t *times;   /* n, format 2 only: absolute ns */
    int64_t *values;  /* ncols * n, column-major: values[c * n + i] */
    int borrowed;     /* the arrays are a scratch's (sc_block_decode_in): release frees none */
};

/* Encodes b into out (appends). For SC_BLOCK_AGG rows must be sorted by stack with no
 * duplicates; for SC_BLOCK_TIMED sorted by time. 0 or SC_EINVAL / SC_ENOMEM. */
int sc_block_encode(const struct sc_block *b, struct sc_buf *out, int zstd_level);

/* Decodes a block. Arrays are malloc'd into b (free with sc_block_release). Bounds every
 * count by max_rows and the input so hostile bytes cannot make it allocate without bound.
 * 0 or SC_EFORMAT / SC_ELIMIT / SC_ENOMEM with detail in err. */
int sc_block_decode(const void *data, size_t len, uint32_t max_rows, struct sc_block *b, char *err);

void sc_block_release(struct sc_block *b);

/* A decoder's buffers, kept from block to block. A read decodes hundreds of blocks; with the
 * server's fixed mmap threshold (cmd_server.c) each one's arrays of a few hundred KiB were
 * mapped, faulted in page by page and unmapped again, which cost a month's function
 * timeline (720 hour rollups) about as much as decoding them. Zero-initialise; release with
 * sc_block_scratch_release. */
struct sc_block_scratch {
    void *plain; /* the decompressed bytes */
    uint32_t *stacks;
    int64_t *values, *times;
    size_t plain_cap, stacks_cap, values_cap, times_cap; /* elements */
};
/* sc_block_decode into s's buffers (grown as needed): b's arrays are s's, valid until the
 * next decode into s (sc_block_release on b frees nothing). */
int sc_block_decode_in(const void *data, size_t len, uint32_t max_rows, struct sc_block *b,
                       struct sc_block_scratch *s, char *err);
void sc_block_scratch_release(struct sc_block_scratch *s);

/* Sorts an aggregated block's rows by stack and sums rows with equal stacks (the values of
 * all columns). Used to build blocks from samples in any order. 0 or SC_ENOMEM. */
int sc_block_normalize(struct sc_block *b);

/* Varint helpers shared with the store's other encodings. */
void sc_put_uvarint(struct sc_buf *b, uint64_t v);
/* The sign comes from the unsigned value's top bit: shifting a negative int64_t right is
 * implementation-defined. */
static inline uint64_t sc_zigzag(int64_t v)
{
    uint64_t u = (uint64_t)v;
    return (u << 1) ^ (0 - (u >> 63));
}
static inline int64_t sc_unzigzag(uint64_t v)
{
    return (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
}
/* Reads a varint at *p (< end); 0, or -1 on truncation/overlong. Advances *p. Inline: a
 * block's decoding is a loop of these, most of them one byte (a call each was a tenth of
 * the time a month's hour rollups took to read). */
static inline int sc_get_uvarint(const uint8_t **pp, const uint8_t *end, uint64_t *v)
{
    const uint8_t *p = *pp;
    if (p < end && *p < 0x80) {
        *v = *p;
        *pp = p + 1;
        return 0;
    }
    uint64_t x = 0;
    for (int shift = 0; shift < 64; shift += 7) {
        if (p >= end)
            return -1;
        uint8_t c = *p++;
        x |= (uint64_t)(c & 0x7f) << shift;
        if (c < 0x80) {
            *pp = p;
            *v = x;
            return 0;
        }
    }
    return -1;
}

#endif
