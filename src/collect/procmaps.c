/* procmaps.c - a process's sorted, disjoint executable mappings (see procmaps.h). */
#include "collect/procmaps.h"
#include "model/error.h"
#include "model/buf.h"

int sc_procmaps_insert(struct sc_procmap **maps, uint32_t *n, uint32_t *cap,
                       const struct sc_procmap *m)
{
    if (m->end <= m->start)
        return 0;
    /* at most one existing map is split in two: room for two more */
    if (sc_grow_array(maps, cap, (uint64_t)*n + 2, sizeof **maps))
        return SC_ENOMEM;
    struct sc_procmap *v = *maps;
    uint32_t k = 0, was = *n;
    struct sc_procmap right = {0};
    int have_right = 0;
    for (uint32_t i = 0; i < was; i++) {
        struct sc_procmap e = v[i];
        if (e.end <= m->start || e.start >= m->end) {
            v[k++] = e;
            continue;
        }
        if (e.end > m->end) {
            right = e;
            right.pgoff = e.jit ? e.pgoff : e.pgoff + (m->end - e.start);
            right.start = m->end;
            have_right = 1;
        }
        if (e.start < m->start) {
            e.end = m->start;
            v[k++] = e;
        }
    }
    v[k++] = *m;
    if (have_right)
        v[k++] = right;
    *n = k;
    /* insertion keeps it nearly sorted: a simple insertion sort */
    for (uint32_t i = 1; i < k; i++) {
        struct sc_procmap x = v[i];
        uint32_t j = i;
        while (j > 0 && v[j - 1].start > x.start) {
            v[j] = v[j - 1];
            j--;
        }
        v[j] = x;
    }
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
