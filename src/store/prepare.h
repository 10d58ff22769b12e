/* prepare.h - a profile made ready for any store backend: its rows and content ids. */
#ifndef SC_PREPARE_H
#define SC_PREPARE_H

#include <stdint.h>

#include "model/profile.h"
#include "store/store.h"

/* Every backend writes a profile the same way: one row per sample with a non-zero value
 * (its stack's content id, its values, its time), and for stacks it has not stored yet
 * their frames, leaf first. The content ids are the store's (store.h): a frame's is
 * sc_frame_id of its function, file, line and binary (a nameless frame is called by its
 * address, "0x4a2f"), a stack's the sc_hash64 of its frames' ids, 8 bytes little-endian
 * each, leaf first, XOR SC_INLINE_SALT for a frame inlined into the next one. */
struct sc_prep {
    const struct sc_profile *p;
    uint32_t nt;     /* value columns: the profile's sample types */
    uint32_t n;      /* rows, in sample order */
    uint64_t *stack; /* per row: the stack's content id */
    int64_t *values; /* row-major: values[i * nt + c] */
    int64_t *times;  /* per row: the sample's time plus the write's shift; NULL when the
                        profile's samples carry no timestamps */
    uint32_t *soff;  /* row i's frames are refs[soff[i] .. soff[i + 1]), leaf first */
    uint32_t *refs;  /* frame references, for sc_prep_frame */
    /* scratch */
    uint64_t *line_hash, *loc_noline, *hbuf;
    uint32_t *line_loc;
    uint32_t cap, hcap, nrefs, refs_cap;
};

/* One frame of a prepared profile. Strings point into the profile (or into addr). */
struct sc_prep_frame {
    uint64_t id; /* its content id */
    struct sc_str function, file, binary;
    int64_t line;
    int inlined; /* inlined into the next (calling) frame */
    char addr[SC_ADDR_NAME_LEN];
};

/* Prepares p (the sample walk decodes lazy samples: SC_EFORMAT with detail on bad ones).
 * 0 or SC_E*; release with sc_prep_release also on failure. */
int sc_prep_profile(struct sc_prep *x, const struct sc_profile *p, int64_t time_shift_ns,
                    char *err);
/* The frame behind a reference of x->refs. */
void sc_prep_frame(const struct sc_prep *x, uint32_t ref, struct sc_prep_frame *f);
void sc_prep_release(struct sc_prep *x);
/* A timed profile's rows in time order (ties in row order): a new array of x->n row
 * indexes (free it), NULL when out of memory. */
uint32_t *sc_prep_time_order(const struct sc_prep *x);

/* What every backend refuses to write: a profile name that is empty or holds ':', more
 * than SC_SERIES_LABELS_MAX labels, no sample types, a sample type with ',' or '/' or a unit
 * with ','. 0 or SC_EINVAL / SC_ELIMIT with detail. */
int sc_prep_check(const struct sc_store_write *w, char *err);

/* A series' id: sc_hash64 of tenant (NULL: ""), a NUL byte and the canonical label text.
 * 0 or SC_ENOMEM. */
int sc_series_id(const char *tenant, const char *canon, size_t len, uint64_t *id);

#endif
