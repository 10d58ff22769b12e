/* hash.c - XXH3 wrappers and the u64 -> u32 open-addressing map. */
#include "model/hash.h"
#include "model/error.h"

#include <stdlib.h>
#include <string.h>
#define XXH_INLINE_ALL
#include <xxhash.h>

uint64_t sc_hash64(const void *p, size_t n)
{
    return XXH3_64bits(p, n);
}

uint64_t sc_hash_combine(uint64_t h, uint64_t v)
{
    uint64_t pair[2] = {h, v};
    return XXH3_64bits(pair, sizeof pair);
}

void sc_map64_init(struct sc_map64 *m)
{
    memset(m, 0, sizeof *m);
}

void sc_map64_release(struct sc_map64 *m)
{
    free(m->keys);
    free(m->vals);
    sc_map64_init(m);
}

static int rehash(struct sc_map64 *m, uint32_t cap)
{
    uint64_t *keys = malloc((size_t)cap * sizeof *keys);
    uint32_t *vals = malloc((size_t)cap * sizeof *vals);
    if (!keys || !vals) {
        free(keys);
        free(vals);
        return SC_ENOMEM;
    }
    memset(vals, 0xff, (size_t)cap * sizeof *vals);
    uint32_t mask = cap - 1;
    if (m->mask) {
        for (uint32_t i = 0; i <= m->mask; i++) {
            if (m->vals[i] == UINT32_MAX)
                continue;
            uint32_t j = (uint32_t)sc_mix64(m->keys[i]) & mask;
            while (vals[j] != UINT32_MAX)
                j = (j + 1) & mask;
            keys[j] = m->keys[i];
            vals[j] = m->vals[i];
        }
    }
    free(m->keys);
    free(m->vals);
    m->keys = keys;
    m->vals = vals;
    m->mask = mask;
    return 0;
}

int sc_map64_reserve(struct sc_map64 *m, uint32_t n)
{
    uint64_t cap = 16;
    while (cap < (uint64_t)n * 2)
        cap *= 2;
    if (cap > (1u << 31))
        return SC_ENOMEM;
    if (m->mask && cap <= (uint64_t)m->mask + 1)
        return 0;
    return rehash(m, (uint32_t)cap);
}

uint32_t *sc_map64_get(const struct sc_map64 *m, uint64_t key)
{
    if (!m->mask)
        return NULL;
    uint32_t j = (uint32_t)sc_mix64(key) & m->mask;
    while (m->vals[j] != UINT32_MAX) {
        if (m->keys[j] == key)
            return &m->vals[j];
        j = (j + 1) & m->mask;
    }
    return NULL;
}

uint32_t *sc_map64_upsert(struct sc_map64 *m, uint64_t key, uint32_t init, int *added)
{
    if (!m->mask || (m->count + 1) * 2 > m->mask + 1) {
        uint64_t cap = m->mask ? ((uint64_t)m->mask + 1) * 2 : 16;
        if (cap > (1u << 31) || rehash(m, (uint32_t)cap))
            return NULL;
    }
    uint32_t j = (uint32_t)sc_mix64(key) & m->mask;
    while (m->vals[j] != UINT32_MAX) {
        if (m->keys[j] == key) {
            if (added)
                *added = 0;
            return &m->vals[j];
        }
        j = (j + 1) & m->mask;
    }
    m->keys[j] = key;
    m->vals[j] = init;
    m->count++;
    if (added)
        *added = 1;
    return &m->vals[j];
}

uint32_t *sc_map64_intern(struct sc_map64 *m, uint64_t h, uint32_t init, sc_map64_eq eq, void *ctx,
                          int *added)
{
    /* 64-bit hashes of distinct content practically never meet; the bound only keeps a
     * broken eq from looping forever */
    for (int probe = 0; probe < 64; probe++, h = sc_mix64(h + 1)) {
        int a;
        uint32_t *slot = sc_map64_upsert(m, h, init, &a);
        if (!slot)
            return NULL;
        if (a || eq(ctx, *slot)) {
            if (added)
                *added = a;
            return slot;
        }
    }
    return NULL;
}
