/* procmaps.h - a process's executable mappings as perf keeps them: sorted by start and
 * disjoint, a new mapping cutting what it overlaps (perf's maps__fixup_overlappings).
 * Shared by the recorder (record_events.c) and the perf.data reader (perfdata.c). */
#ifndef SC_PROCMAPS_H
#define SC_PROCMAPS_H

#include <stdint.h>

struct sc_procmap {
    uint64_t start, end, pgoff;
    uint32_t dso;      /* the symbolizer's id */
    uint32_t path_len; /* path's length */
    const char *path;  /* the reader's printed dso (in its arena); NULL in the recorder */
    int jit;           /* addresses are absolute: a cut keeps pgoff as it is */
};

/* Puts *m into the sorted, disjoint maps[0, *n) (capacity *cap), cutting what it overlaps:
 * a mapping m covers a part of goes, one it covers the start or the end of is shortened
 * (its pgoff moved with its start, unless jit), one it falls inside is split in two. An
 * empty m (end <= start) changes nothing. 0, or SC_ENOMEM with the maps as they were. */
int sc_procmaps_insert(struct sc_procmap **maps, uint32_t *n, uint32_t *cap,
                       const struct sc_procmap *m);

/* The mapping of maps[0, n) that holds ip, NULL when none does. */
const struct sc_procmap *sc_procmaps_find(const struct sc_procmap *maps, uint32_t n, uint64_t ip);

#endif
