/* stackwalk.c - a profile's samples as frame names, root first, one name per function. */
#include "model/stackwalk.h"
#include "model/buf.h"
#include "model/error.h"

#include <stdlib.h>
#include <string.h>

int sc_stackwalk_init(struct sc_stackwalk *w, const struct sc_profile *p, struct sc_strtab *names)
{
    memset(w, 0, sizeof *w);
    w->p = p;
    w->names = names;
    w->fn_name = calloc(p->nfunctions + 1, sizeof *w->fn_name);
    w->loc_name = calloc(p->nlocations + 1, sizeof *w->loc_name);
    w->cap = 256;
    w->frames = malloc(w->cap * sizeof *w->frames);
    if (!w->fn_name || !w->loc_name || !w->frames) {
        sc_stackwalk_release(w);
        return SC_ENOMEM;
    }
    return 0;
}

void sc_stackwalk_release(struct sc_stackwalk *w)
{
    free(w->fn_name);
    free(w->loc_name);
    free(w->frames);
    memset(w, 0, sizeof *w);
}

static int64_t fn_name(struct sc_stackwalk *w, uint32_t fn)
{
    if (w->fn_name[fn])
        return w->fn_name[fn] - 1;
    struct sc_str s = sc_function_name(w->p, fn);
    int64_t id = sc_strtab_intern(w->names, s.ptr, s.len);
    if (id >= 0)
        w->fn_name[fn] = (uint32_t)id + 1;
    return id;
}

static int64_t addr_name(struct sc_stackwalk *w, uint32_t li)
{
    if (w->loc_name[li])
        return w->loc_name[li] - 1;
    char tmp[SC_ADDR_NAME_LEN];
    uint32_t len = sc_address_name(w->p->locations[li].address, tmp);
    int64_t id = sc_strtab_intern(w->names, tmp, (size_t)len);
    if (id >= 0)
        w->loc_name[li] = (uint32_t)id + 1;
    return id;
}

int64_t sc_stackwalk_sample(struct sc_stackwalk *w, uint32_t si)
{
    const struct sc_profile *p = w->p;
    const struct sc_sample *s = &p->samples[si];
    uint32_t n = 0;
    /* locations are leaf first, lines innermost first: walk both backwards */
    for (uint32_t k = s->nlocs; k-- > 0;) {
        uint32_t li = p->sample_locs[s->loc_start + k];
        const struct sc_location *l = &p->locations[li];
        /* 64-bit: a deep sample of locations with many inlined lines can pass 2^32 frames,
         * and a wrapped count would under-size the array */
        uint64_t need = (uint64_t)n + (l->nlines ? l->nlines : 1);
        int rc = sc_grow_array(&w->frames, &w->cap, need, sizeof *w->frames);
        if (rc)
            return rc;
        if (l->nlines == 0) {
            int64_t id = addr_name(w, li);
            if (id < 0)
                return id;
            w->frames[n++] = (uint32_t)id;
            continue;
        }
        const struct sc_line *lines = sc_location_lines(p, l);
        for (uint32_t j = l->nlines; j-- > 0;) {
            int64_t id = lines[j].function ? fn_name(w, lines[j].function - 1) : addr_name(w, li);
            if (id < 0)
                return id;
            w->frames[n++] = (uint32_t)id;
        }
    }
    return n;
}
