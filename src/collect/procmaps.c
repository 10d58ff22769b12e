/* procmaps.c - a process's sorted, disjoint executable mappings (see procmaps.h). */
#include "collect/procmaps.h"
#include "model/error.h"
#include "model/buf.h"

#include <string.h>

int sc_procmaps_insert(struct sc_procmap **maps, uint32_t *n, uint32_t *cap,
                       const struct sc_procmap *m)
{
    if (m->end <= m->start)
        return 0;
    /* at most one existing map is split in two: room for two more */
    if (sc_grow_array(maps, cap, (uint64_t)*n + 2, sizeof **maps))
        return SC_ENOMEM;
    struct sc_procmap *v = *maps;
    /* sorted and disjoint, so the ends are sorted too: the maps m overlaps are [lo, hi) */
    uint32_t lo = 0, hi = *n;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (v[mid].end <= m->start)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (hi = lo; hi < *n && v[hi].start < m->end; hi++)
        ;
    /* they give way to what is left of the first before m, m, what is left of the last after */
    struct sc_procmap put[3];
    uint32_t k = 0;
    if (lo < hi && v[lo].start < m->start) {
        put[k] = v[lo];
        put[k++].end = m->start;
    }
    put[k++] = *m;
    if (lo < hi && v[hi - 1].end > m->end) {
        const struct sc_procmap *e = &v[hi - 1];
        put[k] = *e;
        put[k].pgoff = e->jit ? e->pgoff : e->pgoff + (m->end - e->start);
        put[k++].start = m->end;
    }
    memmove(v + lo + k, v + hi, (size_t)(*n - hi) * sizeof *v);
    memcpy(v + lo, put, k * sizeof *v);
    *n = *n - (hi - lo) + k;
    return 0;
}

const struct sc_procmap *sc_procmaps_find(const struct sc_procmap *maps, uint32_t n, uint64_t ip)
{
    uint32_t lo = 0, hi = n;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (maps[mid].start <= ip)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo && ip < maps[lo - 1].end ? &maps[lo - 1] : NULL;
}
