/* prepare.c - a profile made ready for any store backend: its rows and content ids. */
#include "store/prepare.h"
#include "model/buf.h"
#include "model/error.h"
#include "model/hash.h"
#include "model/labels.h"
#include "store/store_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int sc_prep_check(const struct sc_store_write *w, char *err)
{
    const struct sc_profile *p = w->p;
    if (!w->profile || !*w->profile || strchr(w->profile, ':'))
        return sc_errf(err, SC_EINVAL, "bad profile name '%s'", w->profile ? w->profile : "");
    if (!w->labels || w->labels->n > SC_SERIES_LABELS_MAX)
        return sc_errf(err, SC_ELIMIT, "%u labels is more than %u",
                       w->labels ? (unsigned)w->labels->n : 0, SC_SERIES_LABELS_MAX);
    if (p->nsample_types == 0)
        return sc_errf(err, SC_EINVAL, "profile has no sample types");
    for (uint32_t i = 0; i < p->nsample_types; i++) {
        struct sc_str t = sc_profile_str(p, p->sample_types[i].type);
        struct sc_str u = sc_profile_str(p, p->sample_types[i].unit);
        if (memchr(t.ptr, ',', t.len) || memchr(t.ptr, '/', t.len) || memchr(u.ptr, ',', u.len))
            return sc_errf(err, SC_EINVAL, "bad sample type name '%.*s'", (int)t.len, t.ptr);
    }
    return 0;
}

int sc_series_id(const char *tenant, const char *canon, size_t len, uint64_t *id)
{
    /* the key on the stack when it fits (nearly always): no allocation to fail */
    char small[1024];
    size_t tl = strlen(tenant ? tenant : "");
    size_t n = tl + 1 + len;
    char *key = n <= sizeof small ? small : malloc(n);
    if (!key)
        return SC_ENOMEM;
    memcpy(key, tenant ? tenant : "", tl);
    key[tl] = 0;
    memcpy(key + tl + 1, canon, len);
    *id = sc_hash64(key, n);
    if (key != small)
        free(key);
    return 0;
}

/* Frame strings of a profile line (or of a location without lines). */
static void frame_strings(const struct sc_profile *p, const struct sc_location *l,
                          const struct sc_line *ln, struct sc_prep_frame *f)
{
    f->file = (struct sc_str){"", 0};
    f->line = 0;
    f->function = (struct sc_str){"", 0};
    if (ln && ln->function) {
        const struct sc_function *fn = &p->functions[ln->function - 1];
        f->function = sc_function_name(p, ln->function - 1);
        f->file = sc_profile_str(p, fn->filename);
        f->line = ln->line;
    }
    if (f->function.len == 0)
        f->function = (struct sc_str){f->addr, sc_address_name(l->address, f->addr)};
    f->binary = l->mapping ? sc_profile_str(p, p->mappings[l->mapping - 1].filename)
                           : (struct sc_str){"", 0};
}

/* Frame ids of every line and line-less location, hashing each function's and mapping's
 * strings once rather than once per line. */
static int hash_frames(struct sc_prep *x)
{
    const struct sc_profile *p = x->p;
    x->line_hash = malloc(((size_t)p->nlines + 1) * sizeof *x->line_hash);
    x->loc_noline = malloc(((size_t)p->nlocations + 1) * sizeof *x->loc_noline);
    x->line_loc = malloc(((size_t)p->nlines + 1) * sizeof *x->line_loc);
    uint64_t *fh = malloc(((size_t)p->nfunctions + 1) * 2 * sizeof *fh);
    uint64_t *mh = malloc(((size_t)p->nmappings + 1) * sizeof *mh);
    if (!x->line_hash || !x->line_loc || !x->loc_noline || !fh || !mh) {
        free(fh);
        free(mh);
        return SC_ENOMEM;
    }
    for (uint32_t f = 0; f < p->nfunctions; f++) {
        struct sc_str n = sc_function_name(p, f);
        struct sc_str file = sc_profile_str(p, p->functions[f].filename);
        fh[2 * (size_t)f] = n.len ? sc_hash64(n.ptr, n.len) : 0;
        fh[2 * (size_t)f + 1] = sc_hash64(file.ptr, file.len);
    }
    for (uint32_t m = 0; m < p->nmappings; m++) {
        struct sc_str file = sc_profile_str(p, p->mappings[m].filename);
        mh[m] = sc_hash64(file.ptr, file.len);
    }
    uint64_t h_empty = sc_hash64("", 0);
    char abuf[SC_ADDR_NAME_LEN];
    for (uint32_t i = 0; i < p->nlocations; i++) {
        const struct sc_location *l = &p->locations[i];
        uint64_t hb = l->mapping ? mh[l->mapping - 1] : h_empty;
        uint64_t haddr = 0;
        if (l->nlines == 0) {
            uint32_t k = sc_address_name(l->address, abuf);
            x->loc_noline[i] = sc_frame_id_from(sc_hash64(abuf, k), h_empty, hb, 0);
        }
        for (uint32_t j = 0; j < l->nlines; j++) {
            const struct sc_line *ln = &p->lines[l->line_start + j];
            x->line_loc[l->line_start + j] = i;
            uint64_t hf, hfile = h_empty;
            int64_t line = 0;
            size_t fi = ln->function ? 2 * (size_t)(ln->function - 1) : 0; /* its hashes in fh */
            if (ln->function && fh[fi]) {
                hf = fh[fi];
                hfile = fh[fi + 1];
                line = ln->line;
            } else {
                /* nameless: named by its address, as frame_strings() does */
                if (!haddr)
                    haddr = sc_hash64(abuf, sc_address_name(l->address, abuf));
                hf = haddr;
                if (ln->function) {
                    hfile = fh[fi + 1];
                    line = ln->line;
                }
            }
            x->line_hash[l->line_start + j] = sc_frame_id_from(hf, hfile, hb, line);
        }
    }
    free(fh);
    free(mh);
    return 0;
}

void sc_prep_frame(const struct sc_prep *x, uint32_t ref, struct sc_prep_frame *f)
{
    const struct sc_profile *p = x->p;
    uint32_t r = ref & 0x7fffffffu;
    int is_line = r < p->nlines;
    const struct sc_location *l = &p->locations[is_line ? x->line_loc[r] : r - p->nlines];
    frame_strings(p, l, is_line ? &p->lines[r] : NULL, f);
    f->id = is_line ? x->line_hash[r] : x->loc_noline[r - p->nlines];
    f->inlined = (int)(ref >> 31);
}

static int grow_rows(struct sc_prep *x)
{
    /* room for row n, and soff's entry past it: n + 2 rows in all */
    const struct sc_grow_part cols[] = {
        SC_GROW_PART(x->stack), {&x->values, x->nt * sizeof *x->values}, SC_GROW_PART(x->soff)};
    return sc_grow_arrays(&x->cap, (uint64_t)x->n + 2, -1, cols, 3);
}

/* Records a sample with a non-zero value: its stack's id, frames and values. */
static int collect_visit(void *ctx, const uint32_t *locs, uint32_t nlocs, const int64_t *values)
{
    struct sc_prep *x = ctx;
    int any = 0;
    for (uint32_t c = 0; c < x->nt; c++)
        any |= values[c] != 0;
    if (!any)
        return 0;
    const struct sc_profile *p = x->p;
    uint64_t nf = 0;
    for (uint32_t k = 0; k < nlocs; k++)
        nf += p->locations[locs[k]].nlines ? p->locations[locs[k]].nlines : 1;
    /* one slot more than needed, so the buffers exist even for an empty stack (nf 0):
     * fb below must not be an offset from NULL */
    int rc = sc_grow_array(&x->hbuf, &x->hcap, nf + 1, sizeof *x->hbuf);
    if (!rc)
        rc = sc_grow_array(&x->refs, &x->refs_cap, (uint64_t)x->nrefs + nf + 1, sizeof *x->refs);
    if (rc)
        return rc;
    uint32_t *fb = x->refs + x->nrefs;
    nf = 0;
    for (uint32_t k = 0; k < nlocs; k++) {
        const struct sc_location *l = &p->locations[locs[k]];
        /* refs: a line index, or nlines + the location index for a location without
         * lines; bit 31 marks a frame inlined into the next */
        if (l->nlines == 0) {
            x->hbuf[nf] = x->loc_noline[locs[k]];
            fb[nf++] = p->nlines + locs[k];
            continue;
        }
        for (uint32_t j = 0; j < l->nlines; j++) {
            int inl = j + 1 < l->nlines;
            /* the stack id hashes the frame ids' bytes, little-endian (x86 and arm64) */
            x->hbuf[nf] = x->line_hash[l->line_start + j] ^ (inl ? SC_INLINE_SALT : 0);
            fb[nf++] = (l->line_start + j) | (inl ? 0x80000000u : 0);
        }
    }
    rc = grow_rows(x);
    if (rc)
        return rc;
    x->stack[x->n] = sc_hash64(x->hbuf, (size_t)nf * sizeof *x->hbuf);
    x->soff[x->n] = x->nrefs;
    x->nrefs += (uint32_t)nf;
    x->soff[x->n + 1] = x->nrefs;
    memcpy(x->values + (size_t)x->n * x->nt, values, x->nt * sizeof *values);
    x->n++;
    return 0;
}

/* Stored samples carry their timestamps; lazy ones (pprof) never have any. */
static int has_times(const struct sc_profile *p)
{
    for (uint32_t i = 0; i < p->nsamples; i++)
        if (p->samples[i].time_ns)
            return 1;
    return 0;
}

int sc_prep_profile(struct sc_prep *x, const struct sc_profile *p, int64_t time_shift_ns, char *err)
{
    memset(x, 0, sizeof *x);
    x->p = p;
    x->nt = p->nsample_types;
    int rc = hash_frames(x);
    if (rc)
        return sc_errf(err, rc, "storing frames: %s", sc_strerror(rc));
    rc = sc_profile_foreach_sample(p, collect_visit, x, err);
    if (rc) {
        if (rc != SC_EFORMAT)
            rc = sc_errf(err, rc, "storing stacks: %s", sc_strerror(rc));
        return rc;
    }
    if (x->n == 0 && grow_rows(x))
        return sc_errf(err, SC_ENOMEM, "out of memory");
    x->soff[x->n] = x->nrefs;
    /* timestamps come from the stored samples (the walk sees values only), in the same
     * order: the samples with a non-zero value */
    if (!p->lazy && has_times(p)) {
        x->times = malloc(((size_t)x->n + 1) * sizeof *x->times);
        if (!x->times)
            return sc_errf(err, SC_ENOMEM, "out of memory");
        uint32_t r = 0;
        for (uint32_t i = 0; i < p->nsamples && r < x->n; i++) {
            const int64_t *v = p->values + (size_t)i * x->nt;
            int any = 0;
            for (uint32_t c = 0; c < x->nt; c++)
                any |= v[c] != 0;
            if (any)
                x->times[r++] = sc_add_sat(p->samples[i].time_ns, time_shift_ns);
        }
    }
    return 0;
}

void sc_prep_release(struct sc_prep *x)
{
    free(x->stack);
    free(x->values);
    free(x->times);
    free(x->soff);
    free(x->refs);
    free(x->line_hash);
    free(x->loc_noline);
    free(x->hbuf);
    free(x->line_loc);
    memset(x, 0, sizeof *x);
}

struct time_order {
    int64_t t;
    uint32_t row;
};

static int cmp_time(const void *a, const void *b)
{
    const struct time_order *x = a, *y = b;
    if (x->t != y->t)
        return x->t < y->t ? -1 : 1;
    return (x->row > y->row) - (x->row < y->row);
}

uint32_t *sc_prep_time_order(const struct sc_prep *x)
{
    struct time_order *ord = malloc(((size_t)x->n + 1) * sizeof *ord);
    uint32_t *rows = malloc(((size_t)x->n + 1) * sizeof *rows);
    if (!ord || !rows) {
        free(ord);
        free(rows);
        return NULL;
    }
    for (uint32_t i = 0; i < x->n; i++)
        ord[i] = (struct time_order){x->times ? x->times[i] : 0, i};
    if (x->n > 1)
        qsort(ord, x->n, sizeof *ord, cmp_time);
    for (uint32_t i = 0; i < x->n; i++)
        rows[i] = ord[i].row;
    free(ord);
    return rows;
}
