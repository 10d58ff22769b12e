/* fuzz_block.c - libFuzzer target: the store's sample blocks as it reads them back
 * (sc_block_decode, and sq_block_load's rule for a damaged one). */
#include "fuzz_common.h"

#include "store/block.h"
#include "store/sqlite_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

enum { MAX_ROWS = 1u << 16 };

static int same(const struct sc_block *a, const struct sc_block *b)
{
    if (a->format != b->format || a->n != b->n || a->ncols != b->ncols)
        return 0;
    if (a->n && memcmp(a->stacks, b->stacks, a->n * sizeof *a->stacks))
        return 0;
    if (a->format == SC_BLOCK_TIMED && a->n && memcmp(a->times, b->times, a->n * sizeof *a->times))
        return 0;
    return !a->n || !a->ncols ||
           !memcmp(a->values, b->values, (size_t)a->n * a->ncols * sizeof *a->values);
}

/* Any bytes: a block, or SC_EFORMAT / SC_ELIMIT with a message. A block has one of the two
 * formats, its counts within the bounds, aggregated stacks strictly ascending and timed
 * rows in time order; it encodes (both codecs) and decodes back to the same rows. The load
 * rule agrees: damaged exactly when the decode failed or there is no column. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct sc_block b, c;
    char err[SC_ERR_LEN] = "";
    int rc = sc_block_decode(data, size, MAX_ROWS, &b, err);
    char why[SC_ERR_LEN] = "";
    struct sc_block l;
    int lrc = sq_block_load(data, size, &l, why);
    if (lrc == 0)
        sc_block_release(&l);
    if (rc) {
        FUZZ_CHECK(rc == SC_EFORMAT || rc == SC_ELIMIT || rc == SC_ENOMEM);
        FUZZ_CHECK(err[0]);
        FUZZ_CHECK(lrc == SC_EFORMAT || (rc == SC_ENOMEM && lrc == SC_ENOMEM));
        FUZZ_CHECK(why[0]);
        return 0;
    }
    FUZZ_CHECK(lrc == (b.ncols ? 0 : SC_EFORMAT));
    FUZZ_CHECK(b.format == SC_BLOCK_AGG || b.format == SC_BLOCK_TIMED);
    FUZZ_CHECK(b.n <= MAX_ROWS && b.ncols <= 4096);
    for (uint32_t i = 1; i < b.n; i++) {
        if (b.format == SC_BLOCK_AGG)
            FUZZ_CHECK(b.stacks[i] > b.stacks[i - 1]);
        else
            FUZZ_CHECK(b.times[i] >= b.times[i - 1]);
    }
    for (int level = 0; level <= 1; level++) {
        struct sc_buf enc = SC_BUF_INIT;
        FUZZ_CHECK(sc_block_encode(&b, &enc, level) == 0);
        FUZZ_CHECK(sc_block_decode(enc.data, enc.len, MAX_ROWS, &c, err) == 0);
        FUZZ_CHECK(same(&b, &c));
        sc_block_release(&c);
        sc_buf_release(&enc);
    }
    sc_block_release(&b);
    return 0;
}
