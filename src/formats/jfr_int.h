/* jfr_int.h - what jfr.c (reading a recording) and jfr_profile.c (the profiles it becomes)
 * share: the decoder's state.
 *
 * DESIGN. One struct dec lives for one decode, on one thread. jfr.c fills the chunk's
 * metadata (classes, fields) and constant pools (strings, symbols, classes, methods, stack
 * traces, thread states), all keyed by the chunk's own ids and emptied at each chunk, and
 * calls jfr_emit() for each sample event; jfr_profile.c turns those into the kinds'
 * profiles (struct target: functions and locations by name and line, which outlive the
 * chunks), with the context labels of Pyroscope's snapshot, read once before the first
 * chunk. Nothing here points into a profile's strings: the profiles intern copies, so
 * they outlive the input. */
#ifndef SC_JFR_INT_H
#define SC_JFR_INT_H

#include <stddef.h>
#include <stdint.h>

#include "formats/jfr.h"
#include "model/arena.h"
#include "model/buf.h"
#include "model/error.h"
#include "model/hash.h"
#include "model/profile.h"

#define HEADER_SIZE 68
#define MAX_DEPTH 16              /* nesting of inline values and of metadata elements */
#define MAX_FIELDS 48             /* fields of a record whose values are kept */
#define DEFAULT_PERIOD 10000000LL /* 10 ms: Pyroscope's 100 Hz */

enum { T_METADATA = 0, T_CPOOL = 1 };

/* What jfr.c's readers return for malformed input (SC_E* codes are negative): the
 * caller that knows where it was says what was malformed. */
enum { BAD = 1 };

/* What a class is when it has no fields of its own. */
enum prim { P_STRUCT, P_BOOL, P_BYTE, P_CHAR, P_SHORT, P_INT, P_LONG, P_FLOAT, P_DOUBLE, P_STRING };

/* The events scorch reads. */
enum ev {
    EV_NONE,
    EV_EXEC,
    EV_NATIVE,
    EV_WALLCLOCK,
    EV_TLAB,
    EV_OUTSIDE,
    EV_ALLOC_SAMPLE,
    EV_MONITOR,
    EV_PARK,
    EV_SETTING
};

/* The fields scorch reads, by name; a class keeps each one's index (-1: absent). */
enum fid {
    F_START,
    F_STACK,
    F_STATE,
    F_CONTEXT,
    F_SPAN,
    F_SPAN_NAME,
    F_TLAB,
    F_ALLOC,
    F_WEIGHT,
    F_DURATION,
    F_SAMPLES,
    F_ID,
    F_NAME,
    F_VALUE,
    F_STRING,
    F_TYPE,
    F_TRUNCATED,
    F_FRAMES,
    F_METHOD,
    F_LINE,
    F_N
};
struct jstr {
    const char *p;
    uint32_t len;
    uint8_t ref; /* 1: id is an index into the java.lang.String pool */
    uint64_t id;
};

struct jfield {
    struct jstr name;
    int64_t type;
    int32_t cls; /* index of the type's class, -1 unknown */
    uint8_t cp, array;
};

struct jclass {
    int64_t id;
    struct jstr name;
    uint32_t f0, nf; /* fields[f0 .. f0 + nf) */
    uint8_t prim;
    uint8_t ev;
    int16_t fi[F_N];
};

struct jval {
    uint64_t num;
    struct jstr str;
};

struct frame {
    uint64_t method;
    int32_t line;
};
struct trace {
    uint32_t f0, nf;
};
struct method {
    uint64_t type, name;
};

/* What one kind's profile is built with. Maps marked "chunk" are emptied at each chunk
 * (their keys are the chunk's ids). */
struct target {
    struct sc_profile *p;
    struct sc_map64 fn_of_name;    /* string index -> function */
    struct sc_map64 loc_of;        /* function << 32 | line -> location */
    struct sc_map64 fn_of_method;  /* chunk: method id -> function */
    struct sc_map64 span_of_trace; /* chunk: stack trace id -> spans index */
    struct span {
        uint32_t start, n;
    } * spans;
    uint32_t nspans, spans_cap;
    struct sc_map64 lspan_of; /* hash of (context, span id, span name) -> lspans index */
    struct lspan {
        uint64_t ctx, span, span_name;
        uint32_t start, n;
    } * lspans;
    uint32_t nlspans, lspans_cap;
};

/* Pyroscope's LabelsSnapshot: contexts (id -> label pairs) and strings (id -> text). */
struct snapshot {
    struct sc_map64 ctx_of; /* context id -> ctxs index */
    struct sc_map64 str_of; /* string id -> strs index */
    struct {
        uint32_t start, n;
    } * ctxs;
    uint32_t nctxs, ctxs_cap;
    int64_t (*pairs)[2];
    uint32_t npairs, pairs_cap;
    struct sc_str *strs;
    uint32_t nstrs, strs_cap;
};

struct dec {
    const struct sc_limits *lim;
    const struct sc_jfr_opts *o;
    char *err;
    int fixed;               /* this chunk's integers are fixed width */
    uint64_t work, work_max; /* values read, and the most a file of this size may need */

    /* the chunk's time base */
    int64_t start_ns, start_ticks, tps;

    /* the chunk's metadata */
    struct jclass *classes;
    uint32_t nclasses, classes_cap;
    struct jfield *fields;
    uint32_t nfields, fields_cap;
    struct sc_map64 class_of; /* type id -> class index */
    int32_t k_string, k_symbol, k_class, k_method, k_trace, k_frame, k_state, k_chunkheader;

    /* the chunk's constant pools */
    struct sc_arena arena; /* converted strings */
    struct jstr *strs;
    uint32_t nstrs, strs_cap;
    struct sc_map64 symbol_of, string_of, state_of; /* id -> strs index */
    struct sc_map64 class_name_of;                  /* class id -> symbol id (as a trace) */
    uint64_t *class_names;
    uint32_t nclass_names, class_names_cap;
    struct sc_map64 method_of;
    struct method *methods;
    uint32_t nmethods, methods_cap;
    struct sc_map64 trace_of;
    struct trace *traces;
    uint32_t ntraces, traces_cap;
    struct frame *frames;
    uint32_t nframes, frames_cap;

    /* settings */
    int wall_mode;                 /* async-profiler's event setting is "wall" */
    int64_t period[SC_JFR_NKINDS]; /* ns a cpu/wall sample is worth; 0 unknown */

    struct target t[SC_JFR_NKINDS];
    uint64_t nsamples;
    int64_t first_ns, last_ns;
    struct snapshot snap;
    struct sc_buf name; /* scratch for frame names */
};

static inline int jfr_nomem(struct dec *d)
{
    return sc_errf(d->err, SC_ENOMEM, "out of memory");
}

/* Files idx under id in m (replacing an earlier one). 0 or SC_ENOMEM. */
static inline int jfr_put_id(struct sc_map64 *m, uint64_t id, uint32_t idx)
{
    int added;
    uint32_t *slot = sc_map64_upsert(m, id, idx, &added);
    if (!slot)
        return SC_ENOMEM;
    *slot = idx;
    return 0;
}

/* jfr.c: a string's text, a reference resolved through the chunk's string pool ("" when
 * absent). */
struct jstr jfr_resolve(const struct dec *d, struct jstr s);

/* jfr_profile.c */

/* Reads Pyroscope's LabelsSnapshot (uncompressed) into d->snap. 0, BAD when malformed, or
 * SC_ENOMEM. */
int jfr_snapshot_read(struct dec *d, const void *buf, size_t n);
/* Adds a sample of kind k to its profile (made on first use): values (the kind's count),
 * its time, the chunk's stack trace id and its context. A trace the chunk lacks adds
 * nothing (Pyroscope too). 0 or SC_E* with detail. */
int jfr_emit(struct dec *d, int k, uint64_t trace, uint64_t ctx, uint64_t span, uint64_t span_name,
             const int64_t *values, int64_t time_ns);
/* Frees a kind's profile (unless taken) and its maps. */
void jfr_target_release(struct target *t);

#endif
