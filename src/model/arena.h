/* arena.h - bump allocator: many small allocations, one free. */
#ifndef SC_ARENA_H
#define SC_ARENA_H

#include <stddef.h>

struct sc_arena_chunk;

/* An arena hands out memory from large chunks; nothing is freed until sc_arena_release(),
 * which frees everything at once. Decoders allocate into the arena of the profile they
 * build, so a profile is freed in one call. Not thread-safe. */
struct sc_arena {
    struct sc_arena_chunk *head;
    char *cur, *end;
    size_t total; /* bytes obtained from malloc, for limits and stats */
};

void sc_arena_init(struct sc_arena *a);
void sc_arena_release(struct sc_arena *a);

/* Returns size bytes aligned to 16, or NULL when out of memory. Owned by the arena. */
void *sc_arena_alloc(struct sc_arena *a, size_t size);
/* Zeroed variant of sc_arena_alloc(); n * size is checked for overflow. */
void *sc_arena_calloc(struct sc_arena *a, size_t n, size_t size);
/* Copies len bytes and appends a NUL. Owned by the arena. NULL when out of memory. */
char *sc_arena_strndup(struct sc_arena *a, const char *s, size_t len);

#endif
