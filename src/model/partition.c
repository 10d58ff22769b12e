/* partition.c - a profile's samples cut into groups, each a view over the shared tables. */
#include "model/partition.h"

#include <stdlib.h>
#include <string.h>

#include "model/error.h"

int sc_partition_profile(const struct sc_profile *p, const uint32_t *group, uint32_t ngroups,
                         struct sc_partition *out)
{
    memset(out, 0, sizeof *out);
    uint32_t nt = p->nsample_types;
    uint32_t *start = calloc((size_t)ngroups + 1, sizeof *start);
    out->views = calloc((size_t)ngroups + 1, sizeof *out->views);
    out->samples = malloc(((size_t)p->nsamples + 1) * sizeof *out->samples);
    out->values = malloc(((size_t)p->nsamples * nt + 1) * sizeof *out->values);
    if (!start || !out->views || !out->samples || !out->values) {
        free(start);
        sc_partition_release(out);
        return SC_ENOMEM;
    }
    for (uint32_t i = 0; i < p->nsamples; i++)
        start[group[i] + 1]++;
    for (uint32_t g = 0; g < ngroups; g++)
        start[g + 1] += start[g];
    out->n = ngroups;
    for (uint32_t g = 0; g < ngroups; g++) {
        struct sc_profile *v = &out->views[g];
        *v = *p;
        v->samples = out->samples + start[g];
        v->values = out->values + (size_t)start[g] * nt;
        v->nsamples = 0;
        v->samples_cap = start[g + 1] - start[g];
        v->lazy = NULL;
        v->owned = NULL;
        v->nowned = 0;
    }
    for (uint32_t i = 0; i < p->nsamples; i++) {
        struct sc_profile *v = &out->views[group[i]];
        memcpy(v->values + (size_t)v->nsamples * nt, p->values + (size_t)i * nt,
               nt * sizeof *p->values);
        v->samples[v->nsamples++] = p->samples[i];
    }
    free(start);
    return 0;
}

void sc_partition_release(struct sc_partition *pt)
{
    free(pt->views);
    free(pt->samples);
    free(pt->values);
    memset(pt, 0, sizeof *pt);
}
