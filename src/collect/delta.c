/* delta.c - per-stack subtraction of cumulative scrapes, restart detection, type selection. */
#include "collect/delta.h"
#include "model/buf.h"
#include "model/error.h"

#include <stdlib.h>
#include <string.h>

static int str_eq(const struct sc_profile *p, uint32_t i, const char *s)
{
    struct sc_str v = sc_profile_str(p, i);
    return v.len == strlen(s) && !memcmp(v.ptr, s, v.len);
}

void sc_profile_drop_zero_samples(struct sc_profile *p)
{
    uint32_t nt = p->nsample_types, w = 0;
    for (uint32_t i = 0; i < p->nsamples; i++) {
        const int64_t *v = p->values + (size_t)i * nt;
        int any = 0;
        for (uint32_t t = 0; t < nt && !any; t++)
            any = v[t] != 0;
        if (!any)
            continue;
        if (w != i) {
            p->samples[w] = p->samples[i];
            memmove(p->values + (size_t)w * nt, v, nt * sizeof *v);
        }
        w++;
    }
    p->nsamples = w;
}

int sc_profile_keep_types(struct sc_profile *p, const char *const *names, uint32_t n, char *err)
{
    if (p->lazy)
        return sc_errf(err, SC_EINVAL, "a profile with lazy samples");
    uint32_t idx[16];
    if (n == 0 || n > 16)
        return sc_errf(err, SC_EINVAL, "bad number of sample types");
    for (uint32_t k = 0; k < n; k++) {
        uint32_t t = 0;
        while (t < p->nsample_types && !str_eq(p, p->sample_types[t].type, names[k]))
            t++;
        if (t == p->nsample_types) {
            struct sc_buf have = SC_BUF_INIT;
            for (uint32_t i = 0; i < p->nsample_types; i++) {
                struct sc_str s = sc_profile_str(p, p->sample_types[i].type);
                sc_buf_printf(&have, "%s%.*s", i ? ", " : "", (int)s.len, s.ptr);
            }
            int rc = sc_errf(err, SC_ENOTFOUND, "no sample type '%s' (the profile has: %s)",
                             names[k], have.data ? have.data : "none");
            sc_buf_release(&have);
            return rc;
        }
        idx[k] = t;
    }
    uint32_t nt = p->nsample_types;
    int64_t row[16];
    for (uint32_t i = 0; i < p->nsamples; i++) {
        for (uint32_t k = 0; k < n; k++)
            row[k] = p->values[(size_t)i * nt + idx[k]];
        memcpy(p->values + (size_t)i * n, row, n * sizeof row[0]);
    }
    struct sc_value_type vt[16];
    for (uint32_t k = 0; k < n; k++)
        vt[k] = p->sample_types[idx[k]];
    memcpy(p->sample_types, vt, n * sizeof vt[0]);
    p->nsample_types = n;
    p->default_sample_type = vt[n - 1].type;
    sc_profile_drop_zero_samples(p);
    return 0;
}

/* Counters saturate rather than wrap: a hostile target may send INT64_MAX. */
static int64_t sat_add(int64_t a, int64_t b)
{
    int64_t r;
    return __builtin_add_overflow(a, b, &r) ? (b > 0 ? INT64_MAX : INT64_MIN) : r;
}

void sc_delta_init(struct sc_delta *d)
{
    memset(d, 0, sizeof *d);
    sc_map64_init(&d->index);
}

void sc_delta_release(struct sc_delta *d)
{
    sc_map64_release(&d->index);
    free(d->values);
    memset(d, 0, sizeof *d);
}

void sc_delta_reset(struct sc_delta *d)
{
    sc_delta_release(d);
    sc_delta_init(d);
}

static uint64_t str_hash(const struct sc_profile *p, uint32_t i)
{
    struct sc_str s = sc_profile_str(p, i);
    return sc_hash64(s.ptr, s.len);
}

static uint64_t types_hash(const struct sc_profile *p)
{
    uint64_t h = sc_hash64("types", 5);
    for (uint32_t i = 0; i < p->nsample_types; i++) {
        h = sc_hash_combine(h, str_hash(p, p->sample_types[i].type));
        h = sc_hash_combine(h, str_hash(p, p->sample_types[i].unit));
    }
    return h;
}

/* One key per sample: see struct sc_delta. */
static int sample_keys(const struct sc_profile *p, uint64_t *keys, char *err)
{
    uint64_t *fh = calloc(p->nfunctions + 1, sizeof *fh);
    uint64_t *lh = calloc(p->nlocations + 1, sizeof *lh);
    if (!fh || !lh) {
        free(fh);
        free(lh);
        return sc_errf(err, SC_ENOMEM, "out of memory");
    }
    for (uint32_t f = 0; f < p->nfunctions; f++) {
        struct sc_str s = sc_function_name(p, f);
        fh[f] = sc_hash64(s.ptr, s.len);
    }
    for (uint32_t l = 0; l < p->nlocations; l++) {
        const struct sc_location *loc = &p->locations[l];
        uint64_t h = sc_mix64(loc->address ^ 0x5bd1e995u);
        const struct sc_line *ln = sc_location_lines(p, loc);
        for (uint32_t k = 0; k < loc->nlines; k++) {
            h = sc_hash_combine(h, ln[k].function ? fh[ln[k].function - 1] : 0);
            h = sc_hash_combine(h, (uint64_t)ln[k].line);
        }
        lh[l] = h;
    }
    for (uint32_t i = 0; i < p->nsamples; i++) {
        const struct sc_sample *s = &p->samples[i];
        uint64_t h = sc_hash64("stack", 5);
        for (uint32_t k = 0; k < s->nlocs; k++)
            h = sc_hash_combine(h, lh[p->sample_locs[s->loc_start + k]]);
        for (uint32_t k = 0; k < s->nlabels; k++) {
            const struct sc_label *lb = &p->labels[s->label_start + k];
            h = sc_hash_combine(h, 0x1abe1);
            h = sc_hash_combine(h, str_hash(p, lb->key));
            h = sc_hash_combine(h, str_hash(p, lb->str));
            h = sc_hash_combine(h, (uint64_t)lb->num);
            h = sc_hash_combine(h, str_hash(p, lb->num_unit));
        }
        keys[i] = h;
    }
    free(fh);
    free(lh);
    return 0;
}

/* The new baseline: p's values summed per key; first[r] is the first sample of row r. */
struct table {
    struct sc_map64 index;
    int64_t *values;
    uint32_t rows;
    uint32_t *first;
};

static int build_table(const struct sc_profile *p, const uint64_t *keys, struct table *t, char *err)
{
    uint32_t nt = p->nsample_types;
    sc_map64_init(&t->index);
    t->rows = 0;
    t->values = calloc((size_t)p->nsamples * nt + 1, sizeof *t->values);
    t->first = calloc((size_t)p->nsamples + 1, sizeof *t->first);
    if (!t->values || !t->first || sc_map64_reserve(&t->index, p->nsamples))
        return sc_errf(err, SC_ENOMEM, "out of memory");
    for (uint32_t i = 0; i < p->nsamples; i++) {
        int added;
        uint32_t *slot = sc_map64_upsert(&t->index, keys[i], t->rows, &added);
        if (!slot)
            return sc_errf(err, SC_ENOMEM, "out of memory");
        uint32_t r = *slot;
        if (added)
            t->first[t->rows++] = i;
        for (uint32_t k = 0; k < nt; k++)
            t->values[(size_t)r * nt + k] =
                sat_add(t->values[(size_t)r * nt + k], p->values[(size_t)i * nt + k]);
    }
    return 0;
}

static void adopt(struct sc_delta *d, struct table *t, uint32_t nt, uint64_t th)
{
    sc_map64_release(&d->index);
    free(d->values);
    d->index = t->index;
    d->values = t->values;
    d->rows = d->cap = t->rows;
    d->ntypes = nt;
    d->types_hash = th;
    d->have = 1;
    free(t->first);
    memset(t, 0, sizeof *t);
}

int sc_delta_apply(struct sc_delta *d, struct sc_profile *p, char *err)
{
    if (p->lazy)
        return sc_errf(err, SC_EINVAL, "a profile with lazy samples");
    uint32_t nt = p->nsample_types;
    if (nt == 0 || nt > 16) {
        sc_delta_reset(d);
        return sc_errf(err, SC_EFORMAT, "a profile with %u sample types", (unsigned)nt);
    }
    /* counters are never negative: a negative value is no count at all */
    for (size_t i = 0; i < (size_t)p->nsamples * nt; i++)
        if (p->values[i] < 0)
            p->values[i] = 0;
    uint64_t th = types_hash(p);
    uint64_t *keys = malloc(((size_t)p->nsamples + 1) * sizeof *keys);
    struct table t;
    memset(&t, 0, sizeof t);
    int rc = keys ? sample_keys(p, keys, err) : sc_errf(err, SC_ENOMEM, "out of memory");
    if (!rc)
        rc = build_table(p, keys, &t, err);
    free(keys);
    if (rc) {
        sc_map64_release(&t.index);
        free(t.values);
        free(t.first);
        sc_delta_reset(d);
        return rc;
    }
    if (!d->have || d->types_hash != th || d->ntypes != nt) {
        adopt(d, &t, nt, th);
        p->nsamples = 0;
        return SC_DELTA_FIRST;
    }
    /* totals and the mass of stacks that went down, per type */
    int64_t prev_total[16] = {0}, new_total[16] = {0}, down[16] = {0};
    for (uint32_t r = 0; r < t.rows; r++)
        for (uint32_t k = 0; k < nt; k++)
            new_total[k] = sat_add(new_total[k], t.values[(size_t)r * nt + k]);
    uint64_t key;
    uint32_t val;
    for (uint32_t pos = 0; sc_map64_next(&d->index, &pos, &key, &val);) {
        const int64_t *pv = d->values + (size_t)val * nt;
        uint32_t *slot = sc_map64_get(&t.index, key);
        const int64_t *nv = slot ? t.values + (size_t)*slot * nt : NULL;
        for (uint32_t k = 0; k < nt; k++) {
            prev_total[k] = sat_add(prev_total[k], pv[k]);
            int64_t now = nv ? nv[k] : 0;
            if (now < pv[k])
                down[k] = sat_add(down[k], pv[k] - now);
        }
    }
    int restart = 0;
    for (uint32_t k = 0; k < nt; k++)
        if (prev_total[k] > 0 && (new_total[k] < prev_total[k] || down[k] > prev_total[k] / 10))
            restart = 1;
    if (!restart) {
        /* each key's delta goes to its first sample; later duplicates become zero */
        int64_t *out = calloc((size_t)p->nsamples * nt + 1, sizeof *out);
        if (!out) {
            sc_map64_release(&t.index);
            free(t.values);
            free(t.first);
            sc_delta_reset(d);
            return sc_errf(err, SC_ENOMEM, "out of memory");
        }
        for (uint32_t r = 0; r < t.rows; r++) {
            const int64_t *nv = t.values + (size_t)r * nt;
            uint32_t i = t.first[r];
            for (uint32_t k = 0; k < nt; k++)
                out[(size_t)i * nt + k] = nv[k];
        }
        /* subtract the baseline row of the same key */
        for (uint32_t pos = 0; sc_map64_next(&t.index, &pos, &key, &val);) {
            uint32_t *pslot = sc_map64_get(&d->index, key);
            if (!pslot)
                continue;
            const int64_t *pv = d->values + (size_t)*pslot * nt;
            int64_t *o = out + (size_t)t.first[val] * nt;
            for (uint32_t k = 0; k < nt; k++)
                o[k] = o[k] > pv[k] ? o[k] - pv[k] : 0;
        }
        memcpy(p->values, out, (size_t)p->nsamples * nt * sizeof *out);
        free(out);
    }
    adopt(d, &t, nt, th);
    sc_profile_drop_zero_samples(p);
    return restart ? SC_DELTA_RESTART : SC_DELTA_DIFF;
}
