/* stackwalk.h - a profile's samples as frame names, root first, for every renderer. */
#ifndef SC_STACKWALK_H
#define SC_STACKWALK_H

#include <stdint.h>

#include "model/profile.h"

/* Frame names of a profile's sample, root first, inlined functions expanded (callers above
 * callees), locations without symbols as their address in hex. A helper for any renderer that walks
 * samples: it caches one name per function. Create with sc_stackwalk_init, release with
 * sc_stackwalk_release. */
struct sc_stackwalk {
    const struct sc_profile *p;
    struct sc_strtab *names; /* where names are interned (e.g. a tree's) */
    uint32_t *fn_name;       /* function index -> name + 1, 0 = not yet */
    uint32_t *loc_name;      /* location index -> name + 1 for address-only locations */
    uint32_t *frames;        /* scratch: the current stack */
    uint32_t cap;
};

int sc_stackwalk_init(struct sc_stackwalk *w, const struct sc_profile *p, struct sc_strtab *names);
void sc_stackwalk_release(struct sc_stackwalk *w);
/* Fills w->frames with sample si's names, root first; returns how many (>= 0) or SC_E*. */
int64_t sc_stackwalk_sample(struct sc_stackwalk *w, uint32_t si);

#endif
