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
};

/* Encodes b into out (appends). For SC_BLOCK_AGG rows must be sorted by stack with no
 * duplicates; for SC_BLOCK_TIMED sorted by time. 0 or SC_EINVAL / SC_ENOMEM. */
int sc_block_encode(const struct sc_block *b, struct sc_buf *out, int zstd_level);

/* Decodes a block. Arrays are malloc'd into b (free with sc_block_release). Bounds every
 * count by max_rows and the input so hostile bytes cannot make it allocate without bound.
 * 0 or SC_EFORMAT / SC_ELIMIT / SC_ENOMEM with detail in err. */
int sc_block_decode(const void *data, size_t len, uint32_t max_rows, struct sc_block *b, char *err);

void sc_block_release(struct sc_block *b);

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
/* Reads a varint at *p (< end); 0, or -1 on truncation/overlong. Advances *p. */
int sc_get_uvarint(const uint8_t **p, const uint8_t *end, uint64_t *v);

#endif
