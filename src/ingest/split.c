/* split.c - sample labels become series labels: a profile splits into one series per set. */
#include "ingest/split.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/buf.h"
#include "model/hash.h"

/* A distinct sample label name, by its cleaned text. */
struct key {
    char name[SC_LABEL_NAME_MAX + 2];
    uint32_t len;
    uint64_t hash;
    struct sc_map64 values; /* distinct value hashes */
    int dropped;            /* 1: too many values, 2: a name or value too long */
};

struct splitter {
    const struct sc_profile *p;
    struct key *keys;
    uint32_t nkeys, keys_cap;
    uint32_t *key_of;   /* per string index: key slot + 1, 0 unknown, UINT32_MAX none */
    uint64_t *hash_of;  /* per string index: content hash (0: not yet) */
    uint32_t *stamp;    /* per key: the last sample (+1) that used it */
    uint64_t *set_hash; /* per sample */
    uint32_t keys_over; /* names past SC_LABELS_MAX, dropped unseen */
};

/* The label name a sample label key stands for (sc_labels_clean_name). 0, or -1 when it
 * cannot be one (empty or too long). */
static int clean_name(struct sc_str k, char *out, uint32_t *len)
{
    size_t n = sc_labels_clean_name(k.ptr, k.len, out, SC_LABEL_NAME_MAX + 1);
    *len = (uint32_t)n;
    return n ? 0 : -1;
}

static uint64_t str_hash(struct splitter *sp, uint32_t i)
{
    if (!sp->hash_of[i]) {
        struct sc_str s = sc_profile_str(sp->p, i);
        uint64_t h = sc_hash64(s.ptr, s.len);
        sp->hash_of[i] = h ? h : 1;
    }
    return sp->hash_of[i];
}

/* The key slot of a label's key string, created on first sight; UINT32_MAX for a name that
 * cannot be a label. */
static int key_slot(struct splitter *sp, uint32_t str, uint32_t *slot)
{
    if (sp->key_of[str]) {
        *slot = sp->key_of[str] == UINT32_MAX ? UINT32_MAX : sp->key_of[str] - 1;
        return 0;
    }
    char name[SC_LABEL_NAME_MAX + 2];
    uint32_t len;
    if (clean_name(sc_profile_str(sp->p, str), name, &len)) {
        sp->key_of[str] = UINT32_MAX;
        *slot = UINT32_MAX;
        return 0;
    }
    uint64_t h = sc_hash64(name, len);
    uint32_t k = 0;
    while (k < sp->nkeys && (sp->keys[k].hash != h || strcmp(sp->keys[k].name, name)))
        k++;
    if (k == sp->nkeys) {
        if (sp->nkeys == SC_LABELS_MAX) {
            sp->keys_over++;
            sp->key_of[str] = UINT32_MAX;
            *slot = UINT32_MAX;
            return 0;
        }
        if (sc_grow_array(&sp->keys, &sp->keys_cap, (uint64_t)sp->nkeys + 1, sizeof *sp->keys))
            return SC_ENOMEM;
        struct key *nk = &sp->keys[sp->nkeys++];
        memset(nk, 0, sizeof *nk);
        memcpy(nk->name, name, (size_t)len + 1);
        nk->len = len;
        nk->hash = h;
    }
    sp->key_of[str] = k + 1;
    *slot = k;
    return 0;
}

/* Visits a sample's string labels that count: the first of each kept name with a
 * non-empty value. */
/* NOLINTBEGIN(bugprone-macro-parentheses): lb and slot name variables the macro declares */
#define FOR_SAMPLE_LABELS(sp, s, lb, slot, body)                                                   \
    do {                                                                                           \
        for (uint32_t j_ = 0; j_ < (s)->nlabels; j_++) {                                           \
            const struct sc_label *lb = &(sp)->p->labels[(s)->label_start + j_];                   \
            if (lb->str == 0 || sc_profile_str((sp)->p, lb->str).len == 0)                         \
                continue;                                                                          \
            uint32_t slot = (sp)->key_of[lb->key];                                                 \
            if (slot == 0 || slot == UINT32_MAX || (sp)->keys[slot - 1].dropped)                   \
                continue;                                                                          \
            slot--;                                                                                \
            body                                                                                   \
        }                                                                                          \
    } while (0)
/* NOLINTEND(bugprone-macro-parentheses) */

/* Learns every name and its distinct values; marks names with a value too long. */
static int survey(struct splitter *sp)
{
    const struct sc_profile *p = sp->p;
    for (uint32_t i = 0; i < p->nlabels; i++) {
        const struct sc_label *lb = &p->labels[i];
        if (lb->str == 0 || sc_profile_str(p, lb->str).len == 0)
            continue;
        uint32_t k;
        int rc = key_slot(sp, lb->key, &k);
        if (rc)
            return rc;
        if (k == UINT32_MAX || sp->keys[k].dropped)
            continue;
        if (sc_profile_str(p, lb->str).len > SC_LABEL_VALUE_MAX) {
            sp->keys[k].dropped = 2;
            continue;
        }
        if (!sc_map64_upsert(&sp->keys[k].values, str_hash(sp, lb->str), 0, NULL))
            return SC_ENOMEM;
    }
    return 0;
}

/* Hashes each sample's set of kept labels (order-free: a sum of mixed pairs) and counts the
 * distinct sets. */
static int count_sets(struct splitter *sp, uint32_t *nsets)
{
    const struct sc_profile *p = sp->p;
    struct sc_map64 sets;
    sc_map64_init(&sets);
    memset(sp->stamp, 0, (size_t)sp->nkeys * sizeof *sp->stamp);
    for (uint32_t i = 0; i < p->nsamples; i++) {
        const struct sc_sample *s = &p->samples[i];
        uint64_t h = 0;
        FOR_SAMPLE_LABELS(sp, s, lb, k, {
            if (sp->stamp[k] == i + 1)
                continue;
            sp->stamp[k] = i + 1;
            h += sc_mix64(sp->keys[k].hash ^ sc_mix64(str_hash(sp, lb->str)));
        });
        sp->set_hash[i] = h;
        if (!sc_map64_upsert(&sets, h, 0, NULL)) {
            sc_map64_release(&sets);
            return SC_ENOMEM;
        }
    }
    *nsets = sets.count;
    sc_map64_release(&sets);
    return 0;
}

/* The kept name with the most distinct values (ties: the greater name), or UINT32_MAX. */
static uint32_t widest_key(const struct splitter *sp)
{
    uint32_t best = UINT32_MAX;
    for (uint32_t k = 0; k < sp->nkeys; k++) {
        const struct key *x = &sp->keys[k];
        if (x->dropped)
            continue;
        if (best == UINT32_MAX || x->values.count > sp->keys[best].values.count ||
            (x->values.count == sp->keys[best].values.count &&
             strcmp(x->name, sp->keys[best].name) > 0))
            best = k;
    }
    return best;
}

static void note_dropped(const struct splitter *sp, char *out, size_t cap)
{
    size_t n = 0;
    out[0] = 0;
    for (uint32_t k = 0; k < sp->nkeys && n + 1 < cap; k++)
        if (sp->keys[k].dropped) {
            int w = snprintf(out + n, cap - n, "%s%s", n ? ", " : "", sp->keys[k].name);
            n = w < 0 || (size_t)w >= cap - n ? cap - 1 : n + (size_t)w;
        }
    if (sp->keys_over && n + 1 < cap)
        snprintf(out + n, cap - n, "%s%u more names", n ? ", " : "", (unsigned)sp->keys_over);
}

/* Groups the samples by set into out's parts, each labelled by its first sample. */
static int build_parts(struct splitter *sp, const struct sc_labels *series, uint32_t nsets,
                       struct sc_split *out)
{
    const struct sc_profile *p = sp->p;
    struct sc_map64 part_of;
    sc_map64_init(&part_of);
    uint32_t *part = malloc(((size_t)p->nsamples + 1) * sizeof *part);
    uint32_t *first = malloc(((size_t)nsets + 1) * sizeof *first);
    out->labels = calloc((size_t)nsets + 1, sizeof *out->labels);
    int rc = SC_ENOMEM;
    if (!part || !first || !out->labels)
        goto done;
    for (uint32_t i = 0; i < p->nsamples; i++) {
        int added;
        uint32_t *slot = sc_map64_upsert(&part_of, sp->set_hash[i], part_of.count, &added);
        if (!slot)
            goto done;
        part[i] = *slot;
        if (added)
            first[*slot] = i;
    }
    rc = 0;
    for (uint32_t g = 0; rc == 0 && g < nsets; g++) {
        struct sc_labels *l = &out->labels[g];
        sc_labels_init(l);
        out->n = g + 1;
        for (uint32_t j = 0; rc == 0 && j < series->n; j++) {
            const struct sc_label_pair *x = &series->v[j];
            rc = sc_labels_set(l, x->name.ptr, x->name.len, x->value.ptr, x->value.len);
        }
        const struct sc_sample *s = &p->samples[first[g]];
        memset(sp->stamp, 0, (size_t)sp->nkeys * sizeof *sp->stamp);
        FOR_SAMPLE_LABELS(sp, s, lb, k, {
            if (rc || sp->stamp[k])
                continue;
            sp->stamp[k] = 1;
            struct sc_str v = sc_profile_str(p, lb->str);
            rc = sc_labels_set(l, sp->keys[k].name, sp->keys[k].len, v.ptr, v.len);
        });
    }
    if (rc == 0)
        rc = sc_partition_profile(p, part, nsets, &out->parts);
done:
    sc_map64_release(&part_of);
    free(part);
    free(first);
    return rc;
}

int sc_split_profile(const struct sc_profile *p, const struct sc_labels *series, uint32_t max_sets,
                     struct sc_split *out, char *err)
{
    memset(out, 0, sizeof *out);
    if (p->lazy || p->nlabels == 0 || p->nsamples == 0)
        return 0;
    uint32_t nstr = p->strings.n;
    struct splitter sp = {.p = p};
    sp.key_of = calloc((size_t)nstr + 1, sizeof *sp.key_of);
    sp.hash_of = calloc((size_t)nstr + 1, sizeof *sp.hash_of);
    sp.set_hash = malloc(((size_t)p->nsamples + 1) * sizeof *sp.set_hash);
    int rc = SC_ENOMEM;
    if (!sp.key_of || !sp.hash_of || !sp.set_hash)
        goto done;
    if ((rc = survey(&sp)))
        goto done;
    rc = SC_ENOMEM;
    sp.stamp = calloc((size_t)sp.nkeys + 1, sizeof *sp.stamp);
    if (!sp.stamp)
        goto done;
    uint32_t nsets = 0, kept = 0;
    for (uint32_t k = 0; k < sp.nkeys; k++)
        kept += !sp.keys[k].dropped;
    for (;;) {
        if ((rc = count_sets(&sp, &nsets)))
            goto done;
        if (kept == 0 || (nsets <= max_sets && series->n + kept <= SC_SERIES_LABELS_MAX))
            break;
        sp.keys[widest_key(&sp)].dropped = 1;
        kept--;
    }
    note_dropped(&sp, out->dropped, sizeof out->dropped);
    if (kept)
        rc = build_parts(&sp, series, nsets, out);
done:
    for (uint32_t k = 0; k < sp.nkeys; k++)
        sc_map64_release(&sp.keys[k].values);
    free(sp.keys);
    free(sp.key_of);
    free(sp.hash_of);
    free(sp.stamp);
    free(sp.set_hash);
    return rc ? sc_errf(err, rc, "splitting samples by label: out of memory") : 0;
}

void sc_split_release(struct sc_split *sp)
{
    for (uint32_t g = 0; g < sp->n; g++)
        sc_labels_release(&sp->labels[g]);
    free(sp->labels);
    sc_partition_release(&sp->parts);
    memset(sp, 0, sizeof *sp);
}
