/* arena.c - bump allocator over a list of malloc'd chunks. */
#include "model/arena.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct sc_arena_chunk {
    struct sc_arena_chunk *next;
    size_t size;
    _Alignas(16) char data[];
};

#define ARENA_CHUNK ((size_t)64 * 1024)

void sc_arena_init(struct sc_arena *a)
{
    memset(a, 0, sizeof *a);
}

void sc_arena_release(struct sc_arena *a)
{
    struct sc_arena_chunk *c = a->head;
    while (c) {
        struct sc_arena_chunk *next = c->next;
        free(c);
        c = next;
    }
    sc_arena_init(a);
}

void *sc_arena_alloc(struct sc_arena *a, size_t size)
{
    size = (size + 15) & ~(size_t)15;
    if (size == 0)
        size = 16;
    if ((size_t)(a->end - a->cur) >= size) {
        void *p = a->cur;
        a->cur += size;
        return p;
    }
    if (size > SIZE_MAX / 2)
        return NULL;
    /* Big requests get their own chunk, inserted behind the current one so the space left
     * in the current chunk is not wasted. Chunks grow with the arena to keep their number
     * logarithmic. */
    size_t csize = ARENA_CHUNK;
    const size_t cmax = 256 * ARENA_CHUNK; /* 16 MiB */
    if (a->total / 4 > csize)
        csize = a->total / 4 < cmax ? a->total / 4 : cmax;
    int own = size > csize / 4;
    if (own)
        csize = size;
    struct sc_arena_chunk *c = malloc(sizeof *c + csize);
    if (!c)
        return NULL;
    c->size = csize;
    a->total += csize;
    if (own && a->head) {
        c->next = a->head->next;
        a->head->next = c;
        return c->data;
    }
    c->next = a->head;
    a->head = c;
    a->cur = c->data + size;
    a->end = c->data + csize;
    return c->data;
}

void *sc_arena_calloc(struct sc_arena *a, size_t n, size_t size)
{
    if (size && n > SIZE_MAX / size)
        return NULL;
    void *p = sc_arena_alloc(a, n * size);
    if (p)
        memset(p, 0, n * size);
    return p;
}

char *sc_arena_strndup(struct sc_arena *a, const char *s, size_t len)
{
    char *p = sc_arena_alloc(a, len + 1);
    if (!p)
        return NULL;
    memcpy(p, s, len);
    p[len] = 0;
    return p;
}
