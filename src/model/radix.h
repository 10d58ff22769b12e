/* radix.h - a stable radix sort by a 64-bit key, one function per element type and key. */
#ifndef SC_RADIX_H
#define SC_RADIX_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define SC_RADIX_BITS 11

/* SC_RADIX_SORT(name, type, key) defines `static int name(type *a, uint32_t n)`: sorts
 * a[0..n) by key(a[i]) (a function-like macro giving a uint64_t), keeping the order of
 * equal keys, so that sorting by a second key and then by a first sorts by both. It sorts
 * 11 bits a pass, and only over the bits where keys differ (addresses in one library: 2 or
 * 3 passes; a recording's times: 3; small indexes: 1): no comparator calls, where qsort of
 * a big symbol table took tens of milliseconds; and not at all when a is in order already
 * (kallsyms, most recordings). 0, or -1 without memory for a copy of a.
 * Elements move by assignment. */
/* NOLINTBEGIN(bugprone-macro-parentheses): TYPE is a type, which parentheses would break */
#define SC_RADIX_SORT(NAME, TYPE, KEY)                                                             \
    static int NAME(TYPE *a, uint32_t n)                                                           \
    {                                                                                              \
        uint64_t differ = 0;                                                                       \
        int sorted = 1;                                                                            \
        for (uint32_t i = 1; i < n; i++) {                                                         \
            differ |= KEY(a[i]) ^ KEY(a[0]);                                                       \
            sorted &= KEY(a[i - 1]) <= KEY(a[i]);                                                  \
        }                                                                                          \
        if (sorted)                                                                                \
            return 0;                                                                              \
        TYPE *tmp = malloc((size_t)n * sizeof *tmp);                                               \
        uint32_t *count = malloc((1u << SC_RADIX_BITS) * sizeof *count);                           \
        if (!tmp || !count) {                                                                      \
            free(tmp);                                                                             \
            free(count);                                                                           \
            return -1;                                                                             \
        }                                                                                          \
        int top = 63 - __builtin_clzll(differ), low = __builtin_ctzll(differ);                     \
        TYPE *from = a, *to = tmp;                                                                 \
        for (int shift = low; shift <= top; shift += SC_RADIX_BITS) {                              \
            const uint64_t mask = (1u << SC_RADIX_BITS) - 1;                                       \
            memset(count, 0, (1u << SC_RADIX_BITS) * sizeof *count);                               \
            for (uint32_t i = 0; i < n; i++)                                                       \
                count[(KEY(from[i]) >> shift) & mask]++;                                           \
            uint32_t sum = 0;                                                                      \
            for (uint32_t b = 0; b <= mask; b++) {                                                 \
                uint32_t c = count[b];                                                             \
                count[b] = sum;                                                                    \
                sum += c;                                                                          \
            }                                                                                      \
            for (uint32_t i = 0; i < n; i++)                                                       \
                to[count[(KEY(from[i]) >> shift) & mask]++] = from[i];                             \
            TYPE *x = from;                                                                        \
            from = to;                                                                             \
            to = x;                                                                                \
        }                                                                                          \
        if (from != a)                                                                             \
            memcpy(a, from, (size_t)n * sizeof *a);                                                \
        free(tmp);                                                                                 \
        free(count);                                                                               \
        return 0;                                                                                  \
    }
/* NOLINTEND(bugprone-macro-parentheses) */

#endif
