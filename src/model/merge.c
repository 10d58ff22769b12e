/* merge.c - append one profile to another, re-indexing everything. */
#include "model/merge.h"
#include "model/buf.h"
#include "model/error.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int64_t str(struct sc_profile *dst, const struct sc_profile *src, uint32_t i)
{
    struct sc_str s = sc_profile_str(src, i);
    return sc_profile_intern(dst, s.ptr, s.len);
}

static int same_str(const struct sc_profile *a, uint32_t i, const struct sc_profile *b, uint32_t j)
{
    struct sc_str x = sc_profile_str(a, i), y = sc_profile_str(b, j);
    return x.len == y.len && memcmp(x.ptr, y.ptr, x.len) == 0;
}

#define STR(dst_field, src_index)                                                                  \
    do {                                                                                           \
        int64_t s_ = str(dst, src, (src_index));                                                   \
        if (s_ < 0)                                                                                \
            goto oom;                                                                              \
        (dst_field) = (uint32_t)s_;                                                                \
    } while (0)

int sc_profile_append(struct sc_profile *dst, const struct sc_profile *src, char *err)
{
    if (dst->nsample_types == 0 && dst->nsamples == 0) {
        for (uint32_t i = 0; i < src->nsample_types; i++) {
            struct sc_str t = sc_profile_str(src, src->sample_types[i].type);
            struct sc_str u = sc_profile_str(src, src->sample_types[i].unit);
            char tb[256], ub[256];
            snprintf(tb, sizeof tb, "%.*s", (int)t.len, t.ptr);
            snprintf(ub, sizeof ub, "%.*s", (int)u.len, u.ptr);
            if (sc_profile_add_sample_type(dst, tb, ub) < 0)
                goto oom;
        }
        if (src->default_sample_type)
            STR(dst->default_sample_type, src->default_sample_type);
        if (src->period_type.type)
            STR(dst->period_type.type, src->period_type.type);
        if (src->period_type.unit)
            STR(dst->period_type.unit, src->period_type.unit);
        dst->period = src->period;
    } else {
        if (dst->nsample_types != src->nsample_types)
            return sc_errf(err, SC_EINVAL, "sample types differ (%u vs %u types)",
                           (unsigned)dst->nsample_types, (unsigned)src->nsample_types);
        for (uint32_t i = 0; i < src->nsample_types; i++)
            if (!same_str(dst, dst->sample_types[i].type, src, src->sample_types[i].type) ||
                !same_str(dst, dst->sample_types[i].unit, src, src->sample_types[i].unit)) {
                struct sc_str a = sc_profile_str(dst, dst->sample_types[i].type);
                struct sc_str b = sc_profile_str(src, src->sample_types[i].type);
                return sc_errf(err, SC_EINVAL, "sample types differ ('%.*s' vs '%.*s')", (int)a.len,
                               a.ptr, (int)b.len, b.ptr);
            }
    }
    uint32_t map0 = dst->nmappings, fn0 = dst->nfunctions, loc0 = dst->nlocations;
    uint32_t line0 = dst->nlines;
    if (sc_grow_array(&dst->mappings, &dst->mappings_cap, (uint64_t)map0 + src->nmappings,
                      sizeof *dst->mappings) ||
        sc_grow_array(&dst->functions, &dst->functions_cap, (uint64_t)fn0 + src->nfunctions,
                      sizeof *dst->functions) ||
        sc_grow_array(&dst->locations, &dst->locations_cap, (uint64_t)loc0 + src->nlocations,
                      sizeof *dst->locations) ||
        sc_grow_array(&dst->lines, &dst->lines_cap, (uint64_t)line0 + src->nlines,
                      sizeof *dst->lines) ||
        sc_grow_array(&dst->labels, &dst->labels_cap, (uint64_t)dst->nlabels + src->nlabels,
                      sizeof *dst->labels))
        goto oom;
    for (uint32_t i = 0; i < src->nmappings; i++) {
        struct sc_mapping m = src->mappings[i];
        m.id = (uint64_t)map0 + i + 1;
        STR(m.filename, src->mappings[i].filename);
        STR(m.build_id, src->mappings[i].build_id);
        dst->mappings[dst->nmappings++] = m;
    }
    for (uint32_t i = 0; i < src->nfunctions; i++) {
        struct sc_function f = src->functions[i];
        f.id = (uint64_t)fn0 + i + 1;
        STR(f.name, src->functions[i].name);
        STR(f.system_name, src->functions[i].system_name);
        STR(f.filename, src->functions[i].filename);
        dst->functions[dst->nfunctions++] = f;
    }
    for (uint32_t i = 0; i < src->nlines; i++) {
        struct sc_line ln = src->lines[i];
        if (ln.function)
            ln.function += fn0;
        dst->lines[dst->nlines++] = ln;
    }
    for (uint32_t i = 0; i < src->nlocations; i++) {
        struct sc_location l = src->locations[i];
        l.id = (uint64_t)loc0 + i + 1;
        if (l.mapping)
            l.mapping += map0;
        l.line_start += line0;
        dst->locations[dst->nlocations++] = l;
    }
    uint64_t need_s = (uint64_t)dst->nsamples + src->nsamples;
    uint64_t need_l = (uint64_t)dst->nsample_locs + src->nsample_locs;
    if (need_s > UINT32_MAX / 2 || need_l > UINT32_MAX / 2)
        return sc_errf(err, SC_ELIMIT, "merged profile is too large");
    if (sc_profile_reserve_samples(dst, (uint32_t)need_s, (uint32_t)need_l))
        goto oom;
    uint32_t nt = src->nsample_types;
    for (uint32_t i = 0; i < src->nsamples; i++) {
        const struct sc_sample *s = &src->samples[i];
        struct sc_sample *d = &dst->samples[dst->nsamples];
        d->loc_start = dst->nsample_locs;
        d->nlocs = s->nlocs;
        d->label_start = dst->nlabels;
        d->nlabels = s->nlabels;
        d->time_ns = s->time_ns;
        for (uint32_t k = 0; k < s->nlocs; k++)
            dst->sample_locs[dst->nsample_locs++] = src->sample_locs[s->loc_start + k] + loc0;
        memcpy(dst->values + (size_t)dst->nsamples * nt, src->values + (size_t)i * nt,
               nt * sizeof *dst->values);
        for (uint32_t k = 0; k < s->nlabels; k++) {
            struct sc_label lb = src->labels[s->label_start + k];
            STR(lb.key, src->labels[s->label_start + k].key);
            STR(lb.str, src->labels[s->label_start + k].str);
            STR(lb.num_unit, src->labels[s->label_start + k].num_unit);
            dst->labels[dst->nlabels++] = lb;
        }
        dst->nsamples++;
    }
    dst->duration_nanos = sc_add_sat(dst->duration_nanos, src->duration_nanos);
    if (src->time_nanos && (!dst->time_nanos || src->time_nanos < dst->time_nanos))
        dst->time_nanos = src->time_nanos;
    return 0;
oom:
    return sc_errf(err, SC_ENOMEM, "out of memory merging profiles");
}
