/* store_int.h - internals shared by the store's files: ids, labels, type rules. */
#ifndef SC_STORE_INT_H
#define SC_STORE_INT_H

#include <stdint.h>

#include "model/buf.h"
#include "store/store.h"

/* XOR'd into a frame's id in a stack's id when the frame is inlined into the next one, so
 * the same functions with and without inlining are different stacks. */
#define SC_INLINE_SALT 0x9e3779b97f4a7c15ULL

/* Rollup resolutions, in seconds: ten minutes and an hour. (Minute rollups were tried:
 * they hold nearly as many rows as the raw profiles they sum, doubling the disk for a
 * small gain; raw profiles answer the ragged ends of a range fast enough.) */
#define SC_ROLLUP_SHORT 600
#define SC_ROLLUP_HOUR 3600

#endif
