/* profile.c - construction, interning and validation of the profile model. */
#include "model/profile.h"
#include "model/budget.h"
#include "model/buf.h"
#include "model/error.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <sys/mman.h>
#include <unistd.h>

/* ---- string table ---- */

int64_t sc_strtab_push(struct sc_strtab *t, const char *s, uint32_t len)
{
    int rc = sc_grow_array(&t->v, &t->cap, (uint64_t)t->n + 1, sizeof *t->v);
    if (rc)
        return rc;
    t->v[t->n].ptr = s;
    t->v[t->n].len = len;
    return t->n++;
}

/* Finds s in the index, probing past hash collisions by perturbing the key. On a miss,
 * *key is the key to insert under. */
static uint32_t *index_find(struct sc_strtab *t, const char *s, size_t len, uint64_t *key)
{
    uint64_t h = sc_hash64(s, len);
    for (;;) {
        uint32_t *slot = sc_map64_get(&t->index, h);
        if (!slot) {
            *key = h;
            return NULL;
        }
        struct sc_str *e = &t->v[*slot];
        if (e->len == len && memcmp(e->ptr, s, len) == 0)
            return slot;
        h++;
    }
}

static int index_catch_up(struct sc_strtab *t)
{
    while (t->indexed < t->n) {
        uint32_t i = t->indexed;
        uint64_t key;
        if (!index_find(t, t->v[i].ptr, t->v[i].len, &key)) {
            if (!sc_map64_upsert(&t->index, key, i, NULL))
                return SC_ENOMEM;
        }
        t->indexed++;
    }
    return 0;
}

int64_t sc_strtab_intern(struct sc_strtab *t, const char *s, size_t len)
{
    if (len > UINT32_MAX)
        return SC_ELIMIT;
    if (t->indexed < t->n && index_catch_up(t))
        return SC_ENOMEM;
    uint64_t key;
    uint32_t *slot = index_find(t, s, len, &key);
    if (slot)
        return *slot;
    char *copy = sc_arena_strndup(t->arena, s, len);
    if (!copy)
        return SC_ENOMEM;
    int64_t i = sc_strtab_push(t, copy, (uint32_t)len);
    if (i < 0)
        return i;
    if (!sc_map64_upsert(&t->index, key, (uint32_t)i, NULL))
        return SC_ENOMEM;
    t->indexed = t->n;
    return i;
}

int64_t sc_strtab_find(const struct sc_strtab *t, const char *s, size_t len)
{
    /* only an interning table is fully indexed; a verbatim one has nothing to find yet */
    if (t->indexed < t->n || len > UINT32_MAX)
        return SC_ENOTFOUND;
    uint64_t key;
    uint32_t *slot = index_find((struct sc_strtab *)t, s, len, &key);
    return slot ? (int64_t)*slot : SC_ENOTFOUND;
}

void sc_strtab_release(struct sc_strtab *t)
{
    free(t->v);
    sc_map64_release(&t->index);
    memset(t, 0, sizeof *t);
}

/* ---- profile ---- */

struct sc_profile *sc_profile_new(void)
{
    struct sc_profile *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    sc_arena_init(&p->arena);
    p->strings.arena = &p->arena;
    if (sc_strtab_push(&p->strings, "", 0) < 0) {
        free(p);
        return NULL;
    }
    return p;
}

void sc_profile_free(struct sc_profile *p)
{
    if (!p)
        return;
    sc_strtab_release(&p->strings);
    free(p->sample_types);
    free(p->samples);
    free(p->values);
    free(p->sample_locs);
    free(p->labels);
    free(p->locations);
    free(p->lines);
    free(p->functions);
    free(p->mappings);
    free(p->comments);
    if (p->lazy)
        p->lazy->release(p->lazy);
    for (uint32_t i = 0; i < p->nowned; i++) {
        if (p->owned[i].mapped_len)
            munmap(p->owned[i].ptr, p->owned[i].mapped_len);
        else
            free(p->owned[i].ptr);
    }
    free(p->owned);
    sc_arena_release(&p->arena);
    free(p);
}

int sc_profile_adopt(struct sc_profile *p, void *buf, size_t mapped_len)
{
    struct sc_owned *o = realloc(p->owned, (p->nowned + 1) * sizeof *o);
    if (!o) {
        if (mapped_len)
            munmap(buf, mapped_len);
        else
            free(buf);
        return SC_ENOMEM;
    }
    p->owned = o;
    p->owned[p->nowned].ptr = buf;
    p->owned[p->nowned].mapped_len = mapped_len;
    p->nowned++;
    return 0;
}

int64_t sc_profile_intern(struct sc_profile *p, const char *s, size_t len)
{
    return sc_strtab_intern(&p->strings, s, len);
}

int sc_profile_add_sample_type(struct sc_profile *p, const char *type, const char *unit)
{
    if (p->nsamples)
        return SC_EINVAL; /* values are laid out per type: types come first */
    int64_t t = sc_profile_intern(p, type, strlen(type));
    int64_t u = sc_profile_intern(p, unit, strlen(unit));
    if (t < 0 || u < 0)
        return SC_ENOMEM;
    struct sc_value_type *v =
        realloc(p->sample_types, (p->nsample_types + 1) * sizeof *p->sample_types);
    if (!v)
        return SC_ENOMEM;
    p->sample_types = v;
    v[p->nsample_types].type = (uint32_t)t;
    v[p->nsample_types].unit = (uint32_t)u;
    return (int)p->nsample_types++;
}

int64_t sc_profile_add_function(struct sc_profile *p, uint32_t name, uint32_t filename)
{
    int rc = sc_grow_array(&p->functions, &p->functions_cap, (uint64_t)p->nfunctions + 1,
                           sizeof *p->functions);
    if (rc)
        return rc;
    struct sc_function *f = &p->functions[p->nfunctions];
    memset(f, 0, sizeof *f);
    f->id = p->nfunctions + 1;
    f->name = name;
    f->system_name = name;
    f->filename = filename;
    return p->nfunctions++;
}

int64_t sc_profile_add_simple_location(struct sc_profile *p, uint32_t fn)
{
    int rc = sc_grow_array(&p->locations, &p->locations_cap, (uint64_t)p->nlocations + 1,
                           sizeof *p->locations);
    if (!rc)
        rc = sc_grow_array(&p->lines, &p->lines_cap, (uint64_t)p->nlines + 1, sizeof *p->lines);
    if (rc)
        return rc;
    struct sc_line *ln = &p->lines[p->nlines];
    memset(ln, 0, sizeof *ln);
    ln->function = fn + 1;
    struct sc_location *l = &p->locations[p->nlocations];
    memset(l, 0, sizeof *l);
    l->id = p->nlocations + 1;
    l->line_start = p->nlines++;
    l->nlines = 1;
    return p->nlocations++;
}

int sc_profile_reserve_samples(struct sc_profile *p, uint32_t nsamples, uint32_t nlocs)
{
    /* a sample's values are a row of nsample_types (at least one) */
    const struct sc_grow_part cols[] = {
        SC_GROW_PART(p->samples),
        {&p->values, (p->nsample_types ? p->nsample_types : 1) * sizeof *p->values}};
    int rc = sc_grow_arrays(&p->samples_cap, nsamples, -1, cols, 2);
    if (rc)
        return rc;
    /* never NULL once there are samples, even when they are all empty: readers index it */
    return sc_grow_array(&p->sample_locs, &p->sample_locs_cap, (uint64_t)(nlocs ? nlocs : 1),
                         sizeof *p->sample_locs);
}

/* Room for one more sample and nlocs more sample locations. */
static int grow_samples(struct sc_profile *p, uint32_t nlocs)
{
    uint64_t nl = p->nsample_locs + (uint64_t)nlocs;
    if (p->nsamples < p->samples_cap && nl <= p->sample_locs_cap)
        return 0;
    if (nl > UINT32_MAX / 2)
        return SC_ELIMIT;
    return sc_profile_reserve_samples(p, p->nsamples + 1, (uint32_t)nl);
}

int64_t sc_profile_add_sample(struct sc_profile *p, const uint32_t *locs, uint32_t nlocs,
                              const int64_t *values, int64_t time_ns)
{
    if (p->nsample_types == 0)
        return SC_EINVAL;
    int rc = grow_samples(p, nlocs);
    if (rc)
        return rc;
    uint32_t start = p->nsample_locs;
    if (nlocs)
        memcpy(p->sample_locs + start, locs, nlocs * sizeof *locs);
    p->nsample_locs += nlocs;
    return sc_profile_add_sample_span(p, start, nlocs, p->nlabels, 0, values, time_ns);
}

int64_t sc_profile_add_sample_span(struct sc_profile *p, uint32_t loc_start, uint32_t nlocs,
                                   uint32_t label_start, uint32_t nlabels, const int64_t *values,
                                   int64_t time_ns)
{
    uint32_t nt = p->nsample_types;
    if (nt == 0 || (uint64_t)loc_start + nlocs > p->nsample_locs ||
        (uint64_t)label_start + nlabels > p->nlabels)
        return SC_EINVAL;
    int rc = grow_samples(p, 0);
    if (rc)
        return rc;
    struct sc_sample *s = &p->samples[p->nsamples];
    s->loc_start = loc_start;
    s->nlocs = nlocs;
    s->label_start = label_start;
    s->nlabels = nlabels;
    s->time_ns = time_ns;
    memcpy(p->values + (size_t)p->nsamples * nt, values, nt * sizeof *values);
    return p->nsamples++;
}

int sc_profile_add_label(struct sc_profile *p, uint32_t key, uint32_t str, int64_t num,
                         uint32_t num_unit)
{
    if (!p->nsamples)
        return SC_EINVAL;
    int rc = sc_grow_array(&p->labels, &p->labels_cap, (uint64_t)p->nlabels + 1, sizeof *p->labels);
    if (rc)
        return rc;
    struct sc_label *l = &p->labels[p->nlabels++];
    l->key = key;
    l->str = str;
    l->num = num;
    l->num_unit = num_unit;
    p->samples[p->nsamples - 1].nlabels++;
    return 0;
}

uint32_t sc_profile_nsamples(const struct sc_profile *p)
{
    return p->lazy ? p->lazy->nsamples : p->nsamples;
}

int sc_profile_foreach_sample(const struct sc_profile *p, sc_sample_visit visit, void *ctx,
                              char *err)
{
    return sc_profile_foreach_sample_part(p, 0, 1, visit, ctx, err);
}

int sc_profile_foreach_sample_part(const struct sc_profile *p, uint32_t part, uint32_t nparts,
                                   sc_sample_visit visit, void *ctx, char *err)
{
    if (nparts == 0 || part >= nparts)
        return SC_EINVAL;
    if (p->lazy)
        return p->lazy->foreach (p->lazy, part, nparts, visit, ctx, err);
    uint32_t lo = (uint32_t)((uint64_t)part * p->nsamples / nparts);
    uint32_t hi = (uint32_t)((uint64_t)(part + 1) * p->nsamples / nparts);
    for (uint32_t i = lo; i < hi; i++) {
        const struct sc_sample *s = &p->samples[i];
        int rc = visit(ctx, p->sample_locs + s->loc_start, s->nlocs,
                       p->values + (size_t)i * p->nsample_types);
        /* a query's walk stops at its deadline or when its client has gone */
        if (!rc)
            rc = sc_budget_poll_every(i - lo, err);
        if (rc)
            return rc;
    }
    return 0;
}

struct part_job {
    const struct sc_profile *p;
    uint32_t part, nparts;
    sc_sample_visit visit;
    void *ctx;
    struct sc_budget *budget; /* the query's, charged on the part's thread too */
    int rc;
    char err[SC_ERR_LEN];
};

static void *part_main(void *arg)
{
    struct part_job *j = arg;
    sc_budget_adopt(j->budget);
    j->err[0] = 0;
    j->rc = sc_profile_foreach_sample_part(j->p, j->part, j->nparts, j->visit, j->ctx, j->err);
    return NULL;
}

int sc_profile_foreach_sample_parallel(const struct sc_profile *p, uint32_t nparts,
                                       sc_sample_visit visit, void **ctxs, char *err)
{
    if (nparts <= 1)
        return sc_profile_foreach_sample(p, visit, ctxs[0], err);
    struct part_job *jobs = calloc(nparts, sizeof *jobs);
    pthread_t *tids = calloc(nparts, sizeof *tids);
    char *started = calloc(nparts, 1);
    if (!jobs || !tids || !started) {
        free(jobs);
        free(tids);
        free(started);
        return sc_errf(err, SC_ENOMEM, "out of memory");
    }
    for (uint32_t i = 0; i < nparts; i++)
        jobs[i] = (struct part_job){p, i, nparts, visit, ctxs[i], sc_budget_current(), 0, ""};
    /* a thread that cannot start runs its part here instead */
    for (uint32_t i = 1; i < nparts; i++)
        started[i] = pthread_create(&tids[i], NULL, part_main, &jobs[i]) == 0;
    part_main(&jobs[0]);
    for (uint32_t i = 1; i < nparts; i++) {
        if (started[i])
            pthread_join(tids[i], NULL);
        else
            part_main(&jobs[i]);
    }
    int rc = 0;
    for (uint32_t i = 0; i < nparts && !rc; i++) {
        rc = jobs[i].rc;
        if (rc && err)
            memcpy(err, jobs[i].err, SC_ERR_LEN);
    }
    free(jobs);
    free(tids);
    free(started);
    return rc;
}

uint32_t sc_profile_walk_threads(const struct sc_profile *p, uint32_t max, uint32_t min_samples)
{
    if (sc_profile_nsamples(p) < min_samples)
        return 1;
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    if (n < 1)
        n = 1;
    return n < (long)max ? (uint32_t)n : max;
}

int sc_profile_sample_index(const struct sc_profile *p, const char *name, char *err)
{
    if (p->nsample_types == 0)
        return sc_errf(err, SC_ENOTFOUND, "profile has no sample types");
    if (!name || !*name) {
        if (p->default_sample_type) {
            struct sc_str d = sc_profile_str(p, p->default_sample_type);
            for (uint32_t i = 0; i < p->nsample_types; i++) {
                struct sc_str t = sc_profile_str(p, p->sample_types[i].type);
                if (t.len == d.len && memcmp(t.ptr, d.ptr, d.len) == 0)
                    return (int)i;
            }
        }
        return (int)p->nsample_types - 1;
    }
    /* pprof also accepts an index number */
    char *end;
    long n = strtol(name, &end, 10);
    if (*end == 0 && n >= 0 && n < (long)p->nsample_types)
        return (int)n;
    size_t len = strlen(name);
    for (uint32_t i = 0; i < p->nsample_types; i++) {
        struct sc_str t = sc_profile_str(p, p->sample_types[i].type);
        if (t.len == len && memcmp(t.ptr, name, len) == 0)
            return (int)i;
    }
    char avail[160] = "";
    size_t off = 0;
    for (uint32_t i = 0; i < p->nsample_types && off < sizeof avail - 1; i++) {
        struct sc_str t = sc_profile_str(p, p->sample_types[i].type);
        int w =
            snprintf(avail + off, sizeof avail - off, "%s%.*s", i ? ", " : "", (int)t.len, t.ptr);
        if (w < 0)
            break;
        off += (size_t)w;
    }
    return sc_errf(err, SC_ENOTFOUND, "no sample type '%s' (have: %s)", name, avail);
}

uint32_t sc_address_name(uint64_t address, char buf[SC_ADDR_NAME_LEN])
{
    return (uint32_t)snprintf(buf, SC_ADDR_NAME_LEN, "0x%" PRIx64, address);
}

struct sc_str sc_function_name(const struct sc_profile *p, uint32_t fn)
{
    const struct sc_function *f = &p->functions[fn];
    struct sc_str s = sc_profile_str(p, f->name);
    if (s.len == 0)
        s = sc_profile_str(p, f->system_name);
    return s;
}

int sc_profile_validate(const struct sc_profile *p, char *err)
{
    uint32_t ns = p->strings.n;
#define CHECK_STR(x, what)                                                                         \
    do {                                                                                           \
        if ((x) >= ns)                                                                             \
            return sc_errf(err, SC_EFORMAT, "%s refers to string %u of %u", what, (unsigned)(x),   \
                           (unsigned)ns);                                                          \
    } while (0)
    for (uint32_t i = 0; i < p->nsample_types; i++) {
        CHECK_STR(p->sample_types[i].type, "sample type");
        CHECK_STR(p->sample_types[i].unit, "sample type unit");
    }
    CHECK_STR(p->default_sample_type, "default sample type");
    CHECK_STR(p->period_type.type, "period type");
    CHECK_STR(p->period_type.unit, "period type unit");
    CHECK_STR(p->drop_frames, "drop_frames");
    CHECK_STR(p->keep_frames, "keep_frames");
    for (uint32_t i = 0; i < p->ncomments; i++)
        CHECK_STR(p->comments[i], "comment");
    for (uint32_t i = 0; i < p->nfunctions; i++) {
        const struct sc_function *f = &p->functions[i];
        CHECK_STR(f->name, "function name");
        CHECK_STR(f->system_name, "function system name");
        CHECK_STR(f->filename, "function file name");
    }
    for (uint32_t i = 0; i < p->nmappings; i++) {
        CHECK_STR(p->mappings[i].filename, "mapping file name");
        CHECK_STR(p->mappings[i].build_id, "mapping build id");
    }
    for (uint32_t i = 0; i < p->nlines; i++)
        if (p->lines[i].function > p->nfunctions)
            return sc_errf(err, SC_EFORMAT, "line refers to function %u of %u",
                           (unsigned)p->lines[i].function, (unsigned)p->nfunctions);
    for (uint32_t i = 0; i < p->nlocations; i++) {
        const struct sc_location *l = &p->locations[i];
        if (l->mapping > p->nmappings)
            return sc_errf(err, SC_EFORMAT, "location refers to mapping %u of %u",
                           (unsigned)l->mapping, (unsigned)p->nmappings);
        if ((uint64_t)l->line_start + l->nlines > p->nlines)
            return sc_errf(err, SC_EFORMAT, "location lines out of range");
    }
    for (uint32_t i = 0; i < p->nsamples; i++) {
        const struct sc_sample *s = &p->samples[i];
        if ((uint64_t)s->loc_start + s->nlocs > p->nsample_locs)
            return sc_errf(err, SC_EFORMAT, "sample locations out of range");
        for (uint32_t j = 0; j < s->nlocs; j++)
            if (p->sample_locs[s->loc_start + j] >= p->nlocations)
                return sc_errf(err, SC_EFORMAT, "sample refers to location %u of %u",
                               (unsigned)p->sample_locs[s->loc_start + j], (unsigned)p->nlocations);
        if ((uint64_t)s->label_start + s->nlabels > p->nlabels)
            return sc_errf(err, SC_EFORMAT, "sample labels out of range");
    }
    for (uint32_t i = 0; i < p->nlabels; i++) {
        CHECK_STR(p->labels[i].key, "label key");
        CHECK_STR(p->labels[i].str, "label value");
        CHECK_STR(p->labels[i].num_unit, "label unit");
    }
#undef CHECK_STR
    return 0;
}
