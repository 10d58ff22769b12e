/* frametab.h - frames given by name, file, line and column, as a profile's functions and
 * locations: one function per (name, file), one location per (function, line, column). */
#ifndef SC_FRAMETAB_H
#define SC_FRAMETAB_H

#include <stddef.h>
#include <stdint.h>

#include "formats/limits.h"
#include "model/hash.h"
#include "model/profile.h"

/* For decoders of formats that name each frame in full (V8's call frames, speedscope's
 * frames) rather than by pprof's ids. Zero-initialise, then sc_frametab_init. */
struct sc_frametab {
    struct sc_profile *p;
    const struct sc_limits *lim;
    struct sc_map64 fns;  /* name string << 32 | file string -> function index */
    struct sc_map64 locs; /* hash of (function, line, column) -> location index */
};

void sc_frametab_init(struct sc_frametab *t, struct sc_profile *p, const struct sc_limits *lim);
void sc_frametab_release(struct sc_frametab *t);

/* The location of the frame: name and file are copied into the profile (interned); line
 * and column are 1-based, 0 = unknown; a function's start line is the line of the first
 * location made for it. Location index >= 0, or SC_ELIMIT (a string past max_string, more
 * than max_functions / max_locations) / SC_ENOMEM with detail in err. */
int64_t sc_frametab_location(struct sc_frametab *t, const char *name, size_t nlen, const char *file,
                             size_t flen, int64_t line, int64_t column, char *err);

/* How many frames all the stacks of a profile decoded from n input bytes may hold. Formats
 * that name a stack by reference (V8's node ids, speedscope's open events) let a few bytes
 * stand for thousands of frames, so their decoders refuse more than 16 a byte (real files
 * hold well under one) rather than grow memory without bound. */
static inline uint64_t sc_frametab_max_frames(size_t n)
{
    return (uint64_t)n * 16 + 65536;
}

/* SC_ELIMIT with the rule in err when a profile decoded from n bytes would hold more than
 * that, else 0. */
int sc_frametab_check_frames(const struct sc_profile *p, uint64_t more, size_t n, char *err);

#endif
