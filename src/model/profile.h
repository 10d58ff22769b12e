/* profile.h - the one in-memory profile model every format decodes into and renders from. */
#ifndef SC_PROFILE_H
#define SC_PROFILE_H

#include <stddef.h>
#include <stdint.h>

#include "model/arena.h"
#include "model/hash.h"

/* The model mirrors pprof's profile.proto, with references resolved to array indexes
 * instead of ids, plus what perf-style sources carry per sample (a timestamp, and comm /
 * pid / tid as labels). All arrays are owned by the profile; strings point either into the
 * profile's arena or into an input buffer the profile has adopted (zero-copy decoding).
 *
 * Index conventions: string 0 is always "". A line's function and a location's mapping are
 * index + 1 so that 0 means "none", as in pprof; sample_locs holds plain 0-based location
 * indexes (every sample location exists). */

struct sc_str {
    const char *ptr;
    uint32_t len;
};

/* A table of strings with optional interning. Decoders that take a string table verbatim
 * (pprof) append with sc_strtab_push(); everything else interns. The hash index is built on
 * first intern, so verbatim tables cost nothing extra. */
struct sc_strtab {
    struct sc_str *v;
    uint32_t n, cap;
    struct sc_map64 index; /* sc_hash64(string) -> index; collisions chained by probing */
    uint32_t indexed;      /* strings [0, indexed) are in index */
    struct sc_arena *arena;
};

struct sc_value_type {
    uint32_t type, unit; /* strings */
};

struct sc_mapping {
    uint64_t id;
    uint64_t start, limit, offset;
    uint32_t filename, build_id; /* strings */
    uint8_t has_functions, has_filenames, has_line_numbers, has_inline_frames;
};

struct sc_function {
    uint64_t id;
    uint32_t name, system_name, filename; /* strings */
    int64_t start_line;
};

/* One frame of a location: a function and a line in it. */
struct sc_line {
    uint32_t function; /* function index + 1, 0 = none */
    int64_t line, column;
};

struct sc_location {
    uint64_t id;
    uint64_t address;
    uint32_t mapping;            /* mapping index + 1, 0 = none */
    uint32_t line_start, nlines; /* into profile->lines, innermost (inlined) first */
    uint8_t is_folded;
};

struct sc_label {
    uint32_t key, str; /* strings; str == 0 means a numeric label */
    int64_t num;
    uint32_t num_unit; /* string */
};

struct sc_sample {
    uint32_t loc_start, nlocs;     /* into profile->sample_locs: location index, leaf first */
    uint32_t label_start, nlabels; /* into profile->labels */
    int64_t time_ns;               /* 0 = no timestamp */
};

/* Called for each sample by sc_profile_foreach_sample(): leaf-first location indexes and
 * one value per sample type. Return 0 to go on, anything else stops the walk and is
 * returned. */
typedef int (*sc_sample_visit)(void *ctx, const uint32_t *locs, uint32_t nlocs,
                               const int64_t *values);

/* Samples that are not stored in the profile but decoded again on each walk (see
 * sc_pprof_decode_lazy): memory stays O(input) however many samples there are. */
struct sc_sample_source {
    /* visits part `part` of `nparts` contiguous parts of the samples; may run concurrently
     * for different parts */
    int (*foreach)(const struct sc_sample_source *src, uint32_t part, uint32_t nparts,
                   sc_sample_visit visit, void *ctx, char *err);
    void (*release)(struct sc_sample_source *src);
    uint32_t nsamples;
};

struct sc_profile {
    struct sc_arena arena;
    struct sc_strtab strings;

    struct sc_value_type *sample_types;
    uint32_t nsample_types;
    uint32_t default_sample_type; /* string, 0 = none (then the last type is the default) */

    struct sc_sample *samples;
    int64_t *values; /* nsamples * nsample_types, row per sample */
    uint32_t nsamples, samples_cap;

    uint32_t *sample_locs;
    uint32_t nsample_locs, sample_locs_cap;

    struct sc_label *labels;
    uint32_t nlabels, labels_cap;

    struct sc_location *locations;
    uint32_t nlocations, locations_cap;
    struct sc_line *lines;
    uint32_t nlines, lines_cap;
    struct sc_function *functions;
    uint32_t nfunctions, functions_cap;
    struct sc_mapping *mappings;
    uint32_t nmappings, mappings_cap;

    uint32_t *comments; /* strings */
    uint32_t ncomments;
    uint32_t drop_frames, keep_frames; /* strings */
    int64_t time_nanos, duration_nanos;
    struct sc_value_type period_type;
    int64_t period;

    /* When set, the samples live here instead of in samples/values/sample_locs (which are
     * then empty): only sc_profile_foreach_sample() sees them. Released with the profile. */
    struct sc_sample_source *lazy;

    /* Buffers adopted by the profile (freed with it) because strings point into them. */
    struct sc_owned {
        void *ptr;
        size_t mapped_len; /* 0: free(ptr); else munmap(ptr, mapped_len) */
    } * owned;
    uint32_t nowned;
};

/* Values add saturating: a sum past INT64_MAX (or below INT64_MIN) stays there instead of
 * wrapping, so huge pushed values cannot turn into negative ones. Every sum of sample
 * values (merges, rollups, trees, totals) uses this one rule. */
static inline int64_t sc_add_sat(int64_t a, int64_t b)
{
    int64_t r;
    if (__builtin_add_overflow(a, b, &r))
        return a > 0 ? INT64_MAX : INT64_MIN;
    return r;
}

/* The same for products (a count times a period). */
static inline int64_t sc_mul_sat(int64_t a, int64_t b)
{
    int64_t r;
    if (__builtin_mul_overflow(a, b, &r))
        return (a < 0) != (b < 0) ? INT64_MIN : INT64_MAX;
    return r;
}

/* a - b, the same way (a span of pushed or scraped times). */
static inline int64_t sc_sub_sat(int64_t a, int64_t b)
{
    int64_t r;
    if (__builtin_sub_overflow(a, b, &r))
        return a >= 0 ? INT64_MAX : INT64_MIN;
    return r;
}

/* How many steps of step (> 0) cover span (>= 0): the ceiling, without the overflow that
 * (span + step - 1) / step has for a huge step. */
static inline int64_t sc_div_ceil(int64_t span, int64_t step)
{
    return span / step + (span % step != 0);
}

/* Allocates an empty profile (string 0 = ""). Free with sc_profile_free(). NULL on OOM. */
struct sc_profile *sc_profile_new(void);
void sc_profile_free(struct sc_profile *p);

/* The profile takes ownership of buf, freeing it with the profile: free(buf) when
 * mapped_len is 0, else munmap(buf, mapped_len). 0 or SC_ENOMEM (then buf is released at
 * once, so callers never leak it). */
int sc_profile_adopt(struct sc_profile *p, void *buf, size_t mapped_len);

/* Strings. sc_strtab_push appends without copying or deduplicating; sc_strtab_intern
 * returns the index of an equal string, copying it into the arena when new.
 * Both return the index (>= 0) or SC_ENOMEM / SC_ELIMIT (more than 2^31 strings). */
int64_t sc_strtab_push(struct sc_strtab *t, const char *s, uint32_t len);
int64_t sc_strtab_intern(struct sc_strtab *t, const char *s, size_t len);
/* The index of a string equal to s in a table that only ever interned (SC_ENOTFOUND when
 * absent, or when strings were pushed since the last intern). */
int64_t sc_strtab_find(const struct sc_strtab *t, const char *s, size_t len);
void sc_strtab_release(struct sc_strtab *t);

static inline struct sc_str sc_profile_str(const struct sc_profile *p, uint32_t i)
{
    return p->strings.v[i];
}

/* Builders. Each returns the new element's index (>= 0) or a negative SC_E* code, and grows
 * the arrays as needed. Interns strings, so duplicates cost nothing. */
int64_t sc_profile_intern(struct sc_profile *p, const char *s, size_t len);
int sc_profile_add_sample_type(struct sc_profile *p, const char *type, const char *unit);
/* Appends a function named `name` (no file) and returns its index. Callers that want one
 * function per name keep their own map (see formats/folded.c). */
int64_t sc_profile_add_function(struct sc_profile *p, uint32_t name, uint32_t filename);
/* A location with one line for function index fn (0-based). */
int64_t sc_profile_add_simple_location(struct sc_profile *p, uint32_t fn);
/* Appends a sample with nlocs location indexes (leaf first) and nsample_types values.
 * Labels are added afterwards with sc_profile_add_label (to the last sample). */
int64_t sc_profile_add_sample(struct sc_profile *p, const uint32_t *locs, uint32_t nlocs,
                              const int64_t *values, int64_t time_ns);
/* Appends a sample on locations and labels already in sample_locs and labels (shared with
 * earlier samples: many timestamped samples of one stack cost no copies). Labels added
 * afterwards with sc_profile_add_label must directly follow label_start + nlabels. */
int64_t sc_profile_add_sample_span(struct sc_profile *p, uint32_t loc_start, uint32_t nlocs,
                                   uint32_t label_start, uint32_t nlabels, const int64_t *values,
                                   int64_t time_ns);
int sc_profile_add_label(struct sc_profile *p, uint32_t key, uint32_t str, int64_t num,
                         uint32_t num_unit);

/* Reserve capacity up front (avoid regrowth when counts are known). 0 or SC_ENOMEM. */
int sc_profile_reserve_samples(struct sc_profile *p, uint32_t nsamples, uint32_t nlocs);

/* Number of samples, stored or lazy. */
uint32_t sc_profile_nsamples(const struct sc_profile *p);

/* Calls visit(ctx, ...) for every sample in order, stored or lazy. Returns 0, visit's
 * non-zero result, or an SC_E* from decoding lazy samples (detail in err). */
int sc_profile_foreach_sample(const struct sc_profile *p, sc_sample_visit visit, void *ctx,
                              char *err);

/* The same for part `part` (0-based) of `nparts` contiguous parts: samples
 * [part * n / nparts, (part + 1) * n / nparts). Different parts may be walked by different
 * threads at the same time; visit then gets each thread's own ctx. */
int sc_profile_foreach_sample_part(const struct sc_profile *p, uint32_t part, uint32_t nparts,
                                   sc_sample_visit visit, void *ctx, char *err);

/* Walks all samples in nparts parts on nparts threads (part 0 on the calling thread),
 * part i calling visit(ctxs[i], ...). Returns 0 or the first failure (detail in err). */
int sc_profile_foreach_sample_parallel(const struct sc_profile *p, uint32_t nparts,
                                       sc_sample_visit visit, void **ctxs, char *err);

/* How many threads a sample walk should use: the online CPUs, at most max, and 1 for
 * fewer than min_samples samples (threads cost more than they save on small inputs). */
uint32_t sc_profile_walk_threads(const struct sc_profile *p, uint32_t max, uint32_t min_samples);

/* Index of the sample type called `name` (e.g. "alloc_space"), or of the default sample type
 * when name is NULL or empty: default_sample_type if set, else the last type.
 * Returns the index or SC_ENOTFOUND (with the available names in err). */
int sc_profile_sample_index(const struct sc_profile *p, const char *name, char *err);

/* The lines of a location, innermost (inlined) first; l->nlines of them. */
static inline const struct sc_line *sc_location_lines(const struct sc_profile *p,
                                                      const struct sc_location *l)
{
    return p->lines + l->line_start;
}

/* Display name of function index fn (0-based): its name, else its system name. */
struct sc_str sc_function_name(const struct sc_profile *p, uint32_t fn);

/* What a frame without a function is called: its address in hex ("0x4f2a10"), as pprof's
 * -raw output and the flame graph tools name it. Every output and the store use this one
 * rule. Writes the name and its NUL into buf; returns the length. */
#define SC_ADDR_NAME_LEN 24
uint32_t sc_address_name(uint64_t address, char buf[SC_ADDR_NAME_LEN]);

/* Checks internal consistency (indexes in range, value counts); a decoder's last step and a
 * debugging aid. 0 or SC_EFORMAT with detail. */
int sc_profile_validate(const struct sc_profile *p, char *err);

#endif
