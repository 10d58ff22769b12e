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
    free(m->slots);
    sc_map64_init(m);
}

static inline uint64_t slot_key(const struct sc_map64_slot *e)
{
    return (uint64_t)e->khi << 32 | e->klo;
}

static int rehash(struct sc_map64 *m, uint32_t cap)
{
    struct sc_map64_slot *slots = malloc((size_t)cap * sizeof *slots);
    if (!slots)
        return SC_ENOMEM;
    memset(slots, 0xff, (size_t)cap * sizeof *slots);
    uint32_t mask = cap - 1;
    for (uint32_t i = 0; m->mask && i <= m->mask; i++) {
        const struct sc_map64_slot *e = &m->slots[i];
        if (e->val == UINT32_MAX)
            continue;
        uint32_t j = (uint32_t)sc_mix64(slot_key(e)) & mask;
        while (slots[j].val != UINT32_MAX)
            j = (j + 1) & mask;
        slots[j] = *e;
    }
    free(m->slots);
    m->slots = slots;
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
    uint32_t j = (uint32_t)sc_mix64(key) & m->mask, lo = (uint32_t)key, hi = (uint32_t)(key >> 32);
    for (struct sc_map64_slot *e = &m->slots[j]; e->val != UINT32_MAX; e = &m->slots[j]) {
        if (e->klo == lo && e->khi == hi)
            return &e->val;
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
    uint32_t j = (uint32_t)sc_mix64(key) & m->mask, lo = (uint32_t)key, hi = (uint32_t)(key >> 32);
    struct sc_map64_slot *e = &m->slots[j];
    for (; e->val != UINT32_MAX; e = &m->slots[j]) {
        if (e->klo == lo && e->khi == hi) {
            if (added)
                *added = 0;
            return &e->val;
        }
        j = (j + 1) & m->mask;
    }
    e->klo = lo;
    e->khi = hi;
    e->val = init;
    m->count++;
    if (added)
        *added = 1;
    return &e->val;
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
