/* bytes.h - reading little-endian words at any alignment from a record in memory. */
#ifndef SC_BYTES_H
#define SC_BYTES_H

#include <stdint.h>
#include <string.h>

/* The host's order: the records read with these (perf's) are written by this machine's
 * kernel, or by perf on a machine of the same order (perf.data of another order is refused
 * by its reader before any of these). memcpy, as the records are not aligned. */
static inline uint32_t sc_rd32(const uint8_t *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}

static inline uint64_t sc_rd64(const uint8_t *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}

#endif
