/* hash.h - stable 64-bit hashing and an open-addressing u64 -> u32 map. */
#ifndef SC_HASH_H
#define SC_HASH_H

#include <stddef.h>
#include <stdint.h>

/* XXH3-64 of the bytes, seed 0. Stable across machines and versions: frame and stack ids
 * stored on disk are made with it, so never change it. */
uint64_t sc_hash64(const void *p, size_t n);
/* Combines a running hash with one more 64-bit value (for hashing sequences of ids). */
uint64_t sc_hash_combine(uint64_t h, uint64_t v);

/* Finalizer that spreads the bits of an integer key over the whole word. */
static inline uint64_t sc_mix64(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ULL;
    x ^= x >> 33;
    return x;
}

/* Map from any 64-bit key to a 32-bit value, linear probing, load factor <= 1/2. A slot
 * keeps its key and value side by side (12 bytes, the key in two halves): a probe reads one
 * cache line, not one in a key array and another in a value array.
 * Zero-initialise (or sc_map64_init) before use; sc_map64_release frees. */
struct sc_map64_slot {
    uint32_t klo, khi;
    uint32_t val; /* UINT32_MAX marks an empty slot, so that value cannot be stored */
};

struct sc_map64 {
    struct sc_map64_slot *slots;
    uint32_t mask; /* capacity - 1, or 0 before the first insert */
    uint32_t count;
};

/* The entries one after another, in no particular order: start with *pos = 0; returns 1
 * with the next entry's key and value, 0 at the end. Inserting meanwhile restarts nothing
 * and may skip or repeat entries: walk, then insert. */
static inline int sc_map64_next(const struct sc_map64 *m, uint32_t *pos, uint64_t *key,
                                uint32_t *val)
{
    for (; m->mask && *pos <= m->mask; (*pos)++) {
        const struct sc_map64_slot *e = &m->slots[*pos];
        if (e->val != UINT32_MAX) {
            *key = (uint64_t)e->khi << 32 | e->klo;
            *val = e->val;
            (*pos)++;
            return 1;
        }
    }
    return 0;
}

void sc_map64_init(struct sc_map64 *m);
void sc_map64_release(struct sc_map64 *m);
/* Pre-sizes for n entries. 0 or SC_ENOMEM. */
int sc_map64_reserve(struct sc_map64 *m, uint32_t n);
/* Returns the value slot of key, or NULL. The pointer is valid until the next insert. */
uint32_t *sc_map64_get(const struct sc_map64 *m, uint64_t key);
/* Finds or inserts key. A new slot holds `init`; *added says which happened.
 * Returns the value slot (valid until the next insert) or NULL when out of memory. */
uint32_t *sc_map64_upsert(struct sc_map64 *m, uint64_t key, uint32_t init, int *added);

/* For content filed under its 64-bit hash h, where different content may share a hash:
 * finds the value for which eq(ctx, value) holds among those filed under h, sc_mix64(h + 1),
 * ... (probing on), or files init under the first free key and sets *added. Returns the
 * value slot (valid until the next insert), or NULL when out of memory. */
typedef int (*sc_map64_eq)(void *ctx, uint32_t value);
uint32_t *sc_map64_intern(struct sc_map64 *m, uint64_t h, uint32_t init, sc_map64_eq eq, void *ctx,
                          int *added);

#endif
