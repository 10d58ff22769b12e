/* jfr.c - Java Flight Recorder recordings: chunks, metadata, constant pools, sample events.
 *
 * A recording is one or more chunks back to back. All integers are big-endian in the
 * header; elsewhere they are JFR varints when the header's features say so (bit 0, as the
 * JDK and async-profiler always write), else fixed width big-endian.
 *
 *   CHUNK HEADER (68 bytes)
 *   OFFSET  SIZE  MEANING
 *        0     4  magic "FLR\0"
 *        4     2  major version (2; 1 for JDK 9 and 10)
 *        6     2  minor version
 *        8     8  chunk size in bytes, header included (0 while the JVM still writes it)
 *       16     8  offset of the last constant pool event (from the chunk's start)
 *       24     8  offset of the metadata event
 *       32     8  start, ns since the epoch
 *       40     8  duration, ns
 *       48     8  start, ticks
 *       56     8  ticks per second
 *       64     4  features (bit 0: compressed integers)
 *
 *   EVENT: size (int, the whole event), type id (long), then the type's fields in the order
 *   the metadata lists them. Type 0 is the metadata event, type 1 a constant pool
 *   (checkpoint) event; every other id names a class of the metadata.
 *
 *   METADATA (type 0): start (long), duration (long), metadata id (long), string count
 *   (int) and strings, then an element tree: name (int, a string index), attribute count
 *   (int), attributes as (name, value) string index pairs, child count (int), children.
 *   root > metadata > class {id, name, superType, simpleType} > field {name, class (a type
 *   id in decimal), constantPool ("true": the value is a long index into that type's
 *   pool), dimension ("1": an array, an int count then the elements)}; annotations and
 *   settings hang below classes and fields too.
 *
 *   CONSTANT POOL (type 1): start, duration, delta to the previous pool event (long),
 *   flush flag (byte), pool count (int), then per pool: type id (long), entry count (int),
 *   entries as constant id (long) and a value of the type.
 *
 *   VALUES: boolean and byte 1 byte; short, char, int, long varints; float 4 bytes; double
 *   8; a class with fields is its fields in order, inline. STRING: an encoding byte, 0 null,
 *   1 "", 2 a long index into the java.lang.String pool, 3 UTF-8 (int length, bytes), 4
 *   UTF-16 code units (int count, each a varint), 5 Latin-1 (int length, bytes).
 *
 *   VARINT: 7 bits a byte, low first, high bit set on all but the last; the 9th byte of a
 *   long carries 8 bits.
 *
 * Pools may name entries of other pools defined later in the chunk (methods name classes,
 * classes symbols), and the JDK writes the stack traces' pool at the chunk's end, so each
 * chunk is read in three passes: the metadata, every constant pool event, then the
 * events. Ids are the chunk's own; the profiles' functions and locations are by name and
 * line, so they are shared across chunks. */
#include "formats/jfr.h"
#include "formats/protowire.h"
#include "model/budget.h"
#include "model/buf.h"
#include "model/error.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HEADER_SIZE 68
#define MAX_DEPTH 16              /* nesting of inline values and of metadata elements */
#define MAX_FIELDS 48             /* fields of a record whose values are kept */
#define DEFAULT_PERIOD 10000000LL /* 10 ms: Pyroscope's 100 Hz */

enum { T_METADATA = 0, T_CPOOL = 1 };

/* What the readers below return for malformed input (SC_E* codes are negative): the
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
static const char *const fid_names[F_N] = {
    "startTime",      "stackTrace", "state",     "contextId", "spanId", "spanName",  "tlabSize",
    "allocationSize", "weight",     "duration",  "samples",   "id",     "name",      "value",
    "string",         "type",       "truncated", "frames",    "method", "lineNumber"};

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

/* ---- reading ---- */

struct rd {
    const uint8_t *p, *end;
};

static size_t left(const struct rd *r)
{
    return (size_t)(r->end - r->p);
}

static int varint(struct rd *r, uint64_t *v)
{
    uint64_t x = 0;
    for (int i = 0; i < 9; i++) {
        if (r->p >= r->end)
            return BAD;
        uint8_t b = *r->p++;
        if (i == 8) {
            x |= (uint64_t)b << 56;
            break;
        }
        x |= (uint64_t)(b & 0x7f) << (7 * i);
        if (b < 0x80)
            break;
    }
    *v = x;
    return 0;
}

static int fixed(struct rd *r, int n, uint64_t *v)
{
    if (left(r) < (size_t)n)
        return BAD;
    uint64_t x = 0;
    for (int i = 0; i < n; i++)
        x = x << 8 | r->p[i];
    r->p += n;
    *v = x;
    return 0;
}

static int rd_u8(struct rd *r, uint64_t *v)
{
    return fixed(r, 1, v);
}

/* An int: a varint, or 4 bytes in a chunk without compressed integers; sign-extended, as
 * the JDK writes an int's 32 bits (a line number of -1 is 0xffffffff). */
static int rd_int(const struct dec *d, struct rd *r, uint64_t *v)
{
    if (d->fixed ? fixed(r, 4, v) : varint(r, v))
        return BAD;
    *v = (uint64_t)(int64_t)(int32_t)(uint32_t)*v;
    return 0;
}

static int rd_long(const struct dec *d, struct rd *r, uint64_t *v)
{
    return d->fixed ? fixed(r, 8, v) : varint(r, v);
}

/* A count of things each at least one byte long: refused when more than the bytes left. */
static int rd_count(const struct dec *d, struct rd *r, uint64_t *v)
{
    return rd_int(d, r, v) || *v > left(r) ? BAD : 0;
}

static int truncated(struct dec *d, const char *what)
{
    return sc_errf(d->err, SC_EFORMAT, "truncated or malformed %s", what);
}

/* Appends code point c as UTF-8 (a lone surrogate as its three bytes, as Java's modified
 * UTF-8 would). */
static char *put_utf8(char *o, uint32_t c)
{
    if (c < 0x80) {
        *o++ = (char)c;
    } else if (c < 0x800) {
        *o++ = (char)(0xc0 | c >> 6);
        *o++ = (char)(0x80 | (c & 0x3f));
    } else {
        *o++ = (char)(0xe0 | c >> 12);
        *o++ = (char)(0x80 | ((c >> 6) & 0x3f));
        *o++ = (char)(0x80 | (c & 0x3f));
    }
    return o;
}

/* A string value. With keep 0 it is only skipped; else *s points into the input or, for the
 * encodings that need converting (UTF-16, Latin-1 past ASCII), into the chunk's arena. */
static int rd_string(struct dec *d, struct rd *r, int keep, struct jstr *s)
{
    uint64_t enc, n;
    memset(s, 0, sizeof *s);
    if (rd_u8(r, &enc))
        return BAD;
    switch (enc) {
    case 0:
    case 1:
        s->p = "";
        return 0;
    case 2:
        s->ref = 1;
        return rd_long(d, r, &s->id);
    case 3:
    case 5:
        if (rd_count(d, r, &n))
            return BAD;
        s->p = (const char *)r->p;
        s->len = (uint32_t)n;
        r->p += n;
        if (enc == 5 && keep) {
            int ascii = 1;
            for (uint64_t i = 0; i < n && ascii; i++)
                ascii = (uint8_t)s->p[i] < 0x80;
            if (!ascii) {
                char *o = sc_arena_alloc(&d->arena, n * 2 + 1), *e = o;
                if (!o)
                    return SC_ENOMEM;
                for (uint64_t i = 0; i < n; i++)
                    e = put_utf8(e, (uint8_t)s->p[i]);
                s->p = o;
                s->len = (uint32_t)(e - o);
            }
        }
        return 0;
    case 4: {
        if (rd_count(d, r, &n))
            return BAD;
        char *o = keep ? sc_arena_alloc(&d->arena, n * 4 + 1) : NULL, *e = o;
        if (keep && !o)
            return SC_ENOMEM;
        for (uint64_t i = 0; i < n; i++) {
            uint64_t c;
            if (d->fixed ? fixed(r, 2, &c) : varint(r, &c))
                return BAD;
            /* a pair of surrogates is one code point */
            if (keep && c >= 0xd800 && c < 0xdc00 && i + 1 < n) {
                struct rd peek = *r;
                uint64_t lo;
                if (!(d->fixed ? fixed(&peek, 2, &lo) : varint(&peek, &lo)) && lo >= 0xdc00 &&
                    lo < 0xe000) {
                    uint32_t cp =
                        0x10000 + (((uint32_t)c - 0xd800) << 10) + ((uint32_t)lo - 0xdc00);
                    *e++ = (char)(0xf0 | cp >> 18);
                    *e++ = (char)(0x80 | ((cp >> 12) & 0x3f));
                    *e++ = (char)(0x80 | ((cp >> 6) & 0x3f));
                    *e++ = (char)(0x80 | (cp & 0x3f));
                    *r = peek;
                    i++;
                    continue;
                }
            }
            if (keep)
                e = put_utf8(e, (uint32_t)(c & 0xffff));
        }
        if (keep) {
            s->p = o;
            s->len = (uint32_t)(e - o);
        }
        return 0;
    }
    default:
        return BAD;
    }
}

/* A string's text: a reference resolved through the chunk's string pool ("" when absent). */
static struct jstr resolve(const struct dec *d, struct jstr s)
{
    if (!s.ref)
        return s;
    const uint32_t *i = sc_map64_get(&d->string_of, s.id);
    struct jstr none = {"", 0, 0, 0};
    return i ? d->strs[*i] : none;
}

/* ---- metadata ---- */

struct element {
    struct jstr name;
    uint32_t nattrs;
    struct jstr keys[8], vals[8]; /* the first eight attributes (classes and fields have 4) */
    uint64_t nchildren;
};

static int jstr_is(struct jstr s, const char *lit)
{
    size_t n = strlen(lit);
    return s.len == n && memcmp(s.p, lit, n) == 0;
}

static struct jstr attr(const struct element *e, const char *key)
{
    for (uint32_t i = 0; i < e->nattrs && i < 8; i++)
        if (jstr_is(e->keys[i], key))
            return e->vals[i];
    struct jstr none = {"", 0, 0, 0};
    return none;
}

/* A decimal attribute (type ids); -1 when it is not one. */
static int64_t attr_num(const struct element *e, const char *key)
{
    struct jstr s = attr(e, key);
    if (s.len == 0 || s.len > 18)
        return -1;
    int64_t v = 0;
    for (uint32_t i = 0; i < s.len; i++) {
        if (s.p[i] < '0' || s.p[i] > '9')
            return -1;
        v = v * 10 + (s.p[i] - '0');
    }
    return v;
}

static int read_element_head(struct dec *d, struct rd *r, const struct jstr *strs, uint64_t nstrs,
                             struct element *e)
{
    uint64_t v, na;
    if (rd_int(d, r, &v) || v >= nstrs || rd_count(d, r, &na))
        return BAD;
    e->name = strs[v];
    e->nattrs = (uint32_t)na;
    for (uint64_t i = 0; i < na; i++) {
        uint64_t k, x;
        if (rd_int(d, r, &k) || rd_int(d, r, &x) || k >= nstrs || x >= nstrs)
            return BAD;
        if (i < 8) {
            e->keys[i] = strs[k];
            e->vals[i] = strs[x];
        }
    }
    return rd_count(d, r, &e->nchildren);
}

/* Reads an element and its children: classes under "metadata", fields under a class
 * (cls >= 0), everything else skipped. */
static int read_element(struct dec *d, struct rd *r, const struct jstr *strs, uint64_t nstrs,
                        int depth, int in_metadata, int32_t cls)
{
    struct element e;
    if (depth > 2 * MAX_DEPTH || ++d->work > d->work_max)
        return BAD;
    if (read_element_head(d, r, strs, nstrs, &e))
        return BAD;
    int32_t mine = -1;
    if (in_metadata && jstr_is(e.name, "class")) {
        int64_t id = attr_num(&e, "id");
        if (id < 0)
            return BAD;
        if (sc_grow_array(&d->classes, &d->classes_cap, (uint64_t)d->nclasses + 1,
                          sizeof *d->classes))
            return SC_ENOMEM;
        struct jclass *c = &d->classes[d->nclasses];
        memset(c, 0, sizeof *c);
        c->id = id;
        c->name = attr(&e, "name");
        c->f0 = d->nfields;
        mine = (int32_t)d->nclasses++;
    } else if (cls >= 0 && jstr_is(e.name, "field")) {
        if (sc_grow_array(&d->fields, &d->fields_cap, (uint64_t)d->nfields + 1, sizeof *d->fields))
            return SC_ENOMEM;
        struct jfield *f = &d->fields[d->nfields++];
        memset(f, 0, sizeof *f);
        f->name = attr(&e, "name");
        f->type = attr_num(&e, "class");
        f->cls = -1;
        f->cp = jstr_is(attr(&e, "constantPool"), "true");
        f->array = attr_num(&e, "dimension") == 1;
        if (f->type < 0)
            return BAD;
        d->classes[cls].nf++;
    }
    int child_meta = jstr_is(e.name, "metadata");
    for (uint64_t i = 0; i < e.nchildren; i++) {
        /* a field's own children (annotations) add no fields */
        int rc = read_element(d, r, strs, nstrs, depth + 1, child_meta, mine);
        if (rc)
            return rc;
    }
    return 0;
}

static int find_class(const struct dec *d, const char *name)
{
    for (uint32_t i = 0; i < d->nclasses; i++)
        if (jstr_is(d->classes[i].name, name))
            return (int)i;
    return -1;
}

static const struct {
    const char *name;
    enum prim prim;
} prims[] = {{"boolean", P_BOOL}, {"byte", P_BYTE},     {"char", P_CHAR},
             {"short", P_SHORT},  {"int", P_INT},       {"long", P_LONG},
             {"float", P_FLOAT},  {"double", P_DOUBLE}, {"java.lang.String", P_STRING}};

static const struct {
    const char *name;
    enum ev ev;
} events[] = {{"jdk.ExecutionSample", EV_EXEC},
              {"jdk.NativeMethodSample", EV_NATIVE},
              {"profiler.WallClockSample", EV_WALLCLOCK},
              {"jdk.ObjectAllocationInNewTLAB", EV_TLAB},
              {"jdk.ObjectAllocationOutsideTLAB", EV_OUTSIDE},
              {"jdk.ObjectAllocationSample", EV_ALLOC_SAMPLE},
              {"jdk.JavaMonitorEnter", EV_MONITOR},
              {"jdk.ThreadPark", EV_PARK},
              {"jdk.ActiveSetting", EV_SETTING}};

/* The metadata event at r: classes with their fields, each field's class resolved. */
static int read_metadata(struct dec *d, struct rd *r)
{
    uint64_t size, type, v, nstrs;
    const uint8_t *start = r->p;
    d->nclasses = d->nfields = 0;
    sc_map64_release(&d->class_of);
    if (rd_int(d, r, &size) || size < 2 || size > (uint64_t)(r->end - start))
        return truncated(d, "metadata event");
    struct rd m = {r->p, start + size};
    if (rd_long(d, &m, &type) || type != T_METADATA)
        return sc_errf(d->err, SC_EFORMAT, "the chunk's metadata offset holds no metadata event");
    if (rd_long(d, &m, &v) || rd_long(d, &m, &v) || rd_long(d, &m, &v) || rd_count(d, &m, &nstrs))
        return truncated(d, "metadata event");
    struct jstr *strs = calloc(nstrs ? nstrs : 1, sizeof *strs);
    if (!strs)
        return sc_errf(d->err, SC_ENOMEM, "out of memory");
    int rc = 0;
    for (uint64_t i = 0; i < nstrs && !rc; i++) {
        rc = rd_string(d, &m, 1, &strs[i]);
        if (!rc && strs[i].ref)
            rc = BAD; /* the metadata's strings are its own */
    }
    if (!rc)
        rc = read_element(d, &m, strs, nstrs, 0, 0, -1);
    free(strs); /* the classes' names point into the input or the arena, not into strs */
    if (rc == SC_ENOMEM)
        return sc_errf(d->err, rc, "out of memory");
    if (rc)
        return truncated(d, "metadata event");
    for (uint32_t i = 0; i < d->nclasses; i++) {
        int added;
        uint32_t *slot = sc_map64_upsert(&d->class_of, (uint64_t)d->classes[i].id, i, &added);
        if (!slot)
            return sc_errf(d->err, SC_ENOMEM, "out of memory");
        *slot = i;
    }
    for (uint32_t i = 0; i < d->nfields; i++) {
        const uint32_t *c = sc_map64_get(&d->class_of, (uint64_t)d->fields[i].type);
        d->fields[i].cls = c ? (int32_t)*c : -1;
    }
    for (uint32_t i = 0; i < d->nclasses; i++) {
        struct jclass *c = &d->classes[i];
        for (size_t k = 0; k < sizeof prims / sizeof prims[0]; k++)
            if (jstr_is(c->name, prims[k].name))
                c->prim = (uint8_t)prims[k].prim;
        for (size_t k = 0; k < sizeof events / sizeof events[0]; k++)
            if (jstr_is(c->name, events[k].name))
                c->ev = (uint8_t)events[k].ev;
        for (int f = 0; f < F_N; f++) {
            c->fi[f] = -1;
            for (uint32_t k = 0; k < c->nf && k < MAX_FIELDS; k++)
                if (jstr_is(d->fields[c->f0 + k].name, fid_names[f])) {
                    c->fi[f] = (int16_t)k;
                    break;
                }
        }
    }
    d->k_string = find_class(d, "java.lang.String");
    d->k_symbol = find_class(d, "jdk.types.Symbol");
    d->k_class = find_class(d, "java.lang.Class");
    d->k_method = find_class(d, "jdk.types.Method");
    d->k_trace = find_class(d, "jdk.types.StackTrace");
    d->k_frame = find_class(d, "jdk.types.StackFrame");
    d->k_state = find_class(d, "jdk.types.ThreadState");
    d->k_chunkheader = find_class(d, "jdk.types.ChunkHeader");
    return 0;
}

/* ---- values ---- */

static int read_class_value(struct dec *d, struct rd *r, int32_t cls, struct jval *out, int depth);

/* One field's value; out (may be NULL) gets a scalar's number or string. */
static int read_field(struct dec *d, struct rd *r, const struct jfield *f, struct jval *out,
                      int depth)
{
    uint64_t n = 1;
    if (f->array) {
        if (rd_count(d, r, &n))
            return BAD;
        out = NULL;
    }
    for (uint64_t i = 0; i < n; i++) {
        if (++d->work > d->work_max)
            return BAD;
        if (f->cp) {
            uint64_t v;
            if (rd_long(d, r, &v))
                return BAD;
            if (out)
                out->num = v;
        } else {
            if (f->cls < 0)
                return BAD;
            int rc = read_class_value(d, r, f->cls, out, depth + 1);
            if (rc)
                return rc;
        }
    }
    return 0;
}

static int read_class_value(struct dec *d, struct rd *r, int32_t cls, struct jval *out, int depth)
{
    const struct jclass *c = &d->classes[cls];
    uint64_t v = 0;
    int rc = 0;
    switch (c->prim) {
    case P_BOOL:
    case P_BYTE:
        rc = rd_u8(r, &v);
        if (!rc && c->prim == P_BYTE)
            v = (uint64_t)(int64_t)(int8_t)v;
        break;
    case P_CHAR:
    case P_SHORT:
        rc = d->fixed ? fixed(r, 2, &v) : varint(r, &v);
        if (!rc && c->prim == P_SHORT)
            v = (uint64_t)(int64_t)(int16_t)v;
        break;
    case P_INT:
        rc = rd_int(d, r, &v);
        break;
    case P_LONG:
        rc = rd_long(d, r, &v);
        break;
    case P_FLOAT:
        rc = fixed(r, 4, &v);
        break;
    case P_DOUBLE:
        rc = fixed(r, 8, &v);
        break;
    case P_STRING: {
        struct jstr s;
        rc = rd_string(d, r, out != NULL, &s);
        if (!rc && out)
            out->str = s;
        return rc;
    }
    default:
        if (depth > MAX_DEPTH)
            return BAD;
        for (uint32_t i = 0; i < c->nf && !rc; i++)
            rc = read_field(d, r, &d->fields[c->f0 + i], NULL, depth);
        return rc;
    }
    if (!rc && out)
        out->num = v;
    return rc;
}

/* A record of class cls: its first MAX_FIELDS fields' scalars into vals (zeroed first). */
static int read_record(struct dec *d, struct rd *r, const struct jclass *c, struct jval *vals)
{
    memset(vals, 0, MAX_FIELDS * sizeof *vals);
    for (uint32_t i = 0; i < c->nf; i++) {
        int rc = read_field(d, r, &d->fields[c->f0 + i], i < MAX_FIELDS ? &vals[i] : NULL, 1);
        if (rc)
            return rc;
    }
    return 0;
}

static uint64_t num(const struct jclass *c, const struct jval *vals, enum fid f)
{
    return c->fi[f] >= 0 ? vals[c->fi[f]].num : 0;
}

static struct jstr str(const struct dec *d, const struct jclass *c, const struct jval *vals,
                       enum fid f)
{
    struct jstr none = {"", 0, 0, 0};
    if (c->fi[f] < 0)
        return none;
    struct jstr s = vals[c->fi[f]].str;
    return s.p || s.ref ? resolve(d, s) : none;
}

/* ---- constant pools ---- */

static int put_id(struct sc_map64 *m, uint64_t id, uint32_t idx)
{
    int added;
    uint32_t *slot = sc_map64_upsert(m, id, idx, &added);
    if (!slot)
        return SC_ENOMEM;
    *slot = idx;
    return 0;
}

static int add_str(struct dec *d, struct sc_map64 *m, uint64_t id, struct jstr s)
{
    if (sc_grow_array(&d->strs, &d->strs_cap, (uint64_t)d->nstrs + 1, sizeof *d->strs))
        return SC_ENOMEM;
    d->strs[d->nstrs] = s;
    return put_id(m, id, d->nstrs++);
}

/* A stack trace entry: the truncated flag and the frames, read field by field. */
static int read_trace(struct dec *d, struct rd *r, uint64_t id)
{
    const struct jclass *c = &d->classes[d->k_trace];
    struct trace t = {d->nframes, 0};
    for (uint32_t i = 0; i < c->nf; i++) {
        const struct jfield *f = &d->fields[c->f0 + i];
        int rc;
        if ((int)i == c->fi[F_FRAMES] && f->array && !f->cp && f->cls == d->k_frame &&
            d->k_frame >= 0) {
            const struct jclass *fc = &d->classes[d->k_frame];
            uint64_t n;
            if (rd_count(d, r, &n))
                return BAD;
            if (n > d->lim->max_stack_depth)
                return sc_errf(d->err, SC_ELIMIT,
                               "a stack trace of %llu frames is deeper than the limit of %u "
                               "(limits.max_stack_depth)",
                               (unsigned long long)n, (unsigned)d->lim->max_stack_depth);
            struct jval vals[MAX_FIELDS];
            for (uint64_t k = 0; k < n; k++) {
                if (++d->work > d->work_max)
                    return BAD;
                if ((rc = read_record(d, r, fc, vals)))
                    return rc;
                if (sc_grow_array(&d->frames, &d->frames_cap, (uint64_t)d->nframes + 1,
                                  sizeof *d->frames))
                    return SC_ENOMEM;
                d->frames[d->nframes].method = num(fc, vals, F_METHOD);
                d->frames[d->nframes].line = (int32_t)num(fc, vals, F_LINE);
                d->nframes++;
                t.nf++;
            }
        } else if ((rc = read_field(d, r, f, NULL, 1))) {
            return rc;
        }
    }
    if (sc_grow_array(&d->traces, &d->traces_cap, (uint64_t)d->ntraces + 1, sizeof *d->traces))
        return SC_ENOMEM;
    d->traces[d->ntraces] = t;
    return put_id(&d->trace_of, id, d->ntraces++);
}

/* One pool's entries: kept for the types scorch reads, skipped for the others. */
static int read_pool(struct dec *d, struct rd *r, int32_t cls, uint64_t count)
{
    const struct jclass *c = &d->classes[cls];
    struct jval vals[MAX_FIELDS];
    for (uint64_t i = 0; i < count; i++) {
        uint64_t id;
        int rc = 0;
        if (++d->work > d->work_max || rd_long(d, r, &id))
            return BAD;
        if (cls == d->k_chunkheader) {
            if (left(r) < HEADER_SIZE)
                return BAD;
            r->p += HEADER_SIZE;
        } else if (cls == d->k_string || c->prim == P_STRING) {
            struct jstr s;
            rc = rd_string(d, r, 1, &s);
            if (!rc && !s.ref)
                rc = add_str(d, &d->string_of, id, s);
        } else if (c->prim != P_STRUCT) {
            rc = read_class_value(d, r, cls, NULL, 1);
        } else if (cls == d->k_trace) {
            rc = read_trace(d, r, id);
        } else {
            rc = read_record(d, r, c, vals);
            if (rc) {
                /* failed below */
            } else if (cls == d->k_symbol) {
                rc = add_str(d, &d->symbol_of, id, str(d, c, vals, F_STRING));
            } else if (cls == d->k_state) {
                rc = add_str(d, &d->state_of, id, str(d, c, vals, F_NAME));
            } else if (cls == d->k_class) {
                if (sc_grow_array(&d->class_names, &d->class_names_cap,
                                  (uint64_t)d->nclass_names + 1, sizeof *d->class_names))
                    return SC_ENOMEM;
                d->class_names[d->nclass_names] = num(c, vals, F_NAME);
                rc = put_id(&d->class_name_of, id, d->nclass_names++);
            } else if (cls == d->k_method) {
                if (sc_grow_array(&d->methods, &d->methods_cap, (uint64_t)d->nmethods + 1,
                                  sizeof *d->methods))
                    return SC_ENOMEM;
                d->methods[d->nmethods].type = num(c, vals, F_TYPE);
                d->methods[d->nmethods].name = num(c, vals, F_NAME);
                rc = put_id(&d->method_of, id, d->nmethods++);
            }
        }
        if (rc)
            return rc;
    }
    return 0;
}

/* A constant pool event (the type id already read). */
static int read_cpool(struct dec *d, struct rd *r)
{
    uint64_t v, npools;
    if (rd_long(d, r, &v) || rd_long(d, r, &v) || rd_long(d, r, &v) || rd_u8(r, &v) ||
        rd_count(d, r, &npools))
        return BAD;
    for (uint64_t i = 0; i < npools; i++) {
        uint64_t type, count;
        if (rd_long(d, r, &type) || rd_count(d, r, &count))
            return BAD;
        const uint32_t *cls = sc_map64_get(&d->class_of, type);
        if (!cls)
            return sc_errf(d->err, SC_EFORMAT, "a constant pool of unknown type %llu",
                           (unsigned long long)type);
        int rc = read_pool(d, r, (int32_t)*cls, count);
        if (rc)
            return rc;
    }
    return 0;
}

/* ---- the snapshot of context labels (Pyroscope's LabelsSnapshot) ----
 *
 *   message Context        { map<int64, int64> labels = 1; }             key, value: strings
 *   message LabelsSnapshot { map<int64, Context> contexts = 1; map<int64, string> strings = 2; }
 *
 * A map entry is a message of key (1) and value (2). */

static int snap_pair(struct sc_pb_rd *r, uint64_t *key, struct sc_pb_field *val)
{
    struct sc_pb_field f;
    int st;
    *key = 0;
    memset(val, 0, sizeof *val);
    while ((st = sc_pb_next(r, &f)) > 0) {
        if (f.num == 1 && f.wt == SC_WT_VARINT)
            *key = f.v;
        else if (f.num == 2)
            *val = f;
    }
    return st;
}

static int read_snapshot(struct dec *d, const void *buf, size_t n)
{
    struct snapshot *s = &d->snap;
    struct sc_pb_rd r = {buf, (const uint8_t *)buf + n};
    struct sc_pb_field f;
    int st;
    while ((st = sc_pb_next(&r, &f)) > 0) {
        if (f.wt != SC_WT_LEN || (f.num != 1 && f.num != 2))
            continue;
        uint64_t key;
        struct sc_pb_field val;
        struct sc_pb_rd e = f.payload;
        if (snap_pair(&e, &key, &val) < 0)
            return BAD;
        if (f.num == 2) {
            if (val.num && val.wt != SC_WT_LEN)
                return BAD;
            if (sc_grow_array(&s->strs, &s->strs_cap, (uint64_t)s->nstrs + 1, sizeof *s->strs))
                return SC_ENOMEM;
            size_t len = val.num ? (size_t)(val.payload.end - val.payload.p) : 0;
            s->strs[s->nstrs].ptr = len ? (const char *)val.payload.p : "";
            s->strs[s->nstrs].len = (uint32_t)len;
            if (put_id(&s->str_of, key, s->nstrs++))
                return SC_ENOMEM;
            continue;
        }
        if (val.num && val.wt != SC_WT_LEN)
            return BAD;
        if (sc_grow_array(&s->ctxs, &s->ctxs_cap, (uint64_t)s->nctxs + 1, sizeof *s->ctxs))
            return SC_ENOMEM;
        s->ctxs[s->nctxs].start = s->npairs;
        s->ctxs[s->nctxs].n = 0;
        struct sc_pb_rd c = val.num ? val.payload : (struct sc_pb_rd){NULL, NULL};
        struct sc_pb_field lf;
        while ((st = sc_pb_next(&c, &lf)) > 0) {
            if (lf.num != 1 || lf.wt != SC_WT_LEN)
                continue;
            uint64_t k;
            struct sc_pb_field v;
            struct sc_pb_rd le = lf.payload;
            if (snap_pair(&le, &k, &v) < 0 || (v.num && v.wt != SC_WT_VARINT))
                return BAD;
            if (sc_grow_array(&s->pairs, &s->pairs_cap, (uint64_t)s->npairs + 1, sizeof *s->pairs))
                return SC_ENOMEM;
            s->pairs[s->npairs][0] = (int64_t)k;
            s->pairs[s->npairs][1] = (int64_t)v.v;
            s->npairs++;
            s->ctxs[s->nctxs].n++;
        }
        if (st < 0)
            return BAD;
        if (put_id(&s->ctx_of, key, s->nctxs++))
            return SC_ENOMEM;
    }
    return st < 0 ? BAD : 0;
}

static struct sc_str snap_str(const struct snapshot *s, int64_t id)
{
    const uint32_t *i = sc_map64_get(&s->str_of, (uint64_t)id);
    struct sc_str none = {"", 0};
    return i ? s->strs[*i] : none;
}

/* ---- building the profiles ---- */

static const struct {
    const char *profile;
    const char *types[2][2]; /* {type, unit} of each value */
    const char *period[2];
    int nvalues;
} kinds[SC_JFR_NKINDS] = {
    [SC_JFR_CPU] = {"cpu", {{"cpu", "nanoseconds"}}, {"cpu", "nanoseconds"}, 1},
    [SC_JFR_WALL] = {"wall", {{"wall", "nanoseconds"}}, {"wall", "nanoseconds"}, 1},
    [SC_JFR_ALLOC_TLAB] = {"heap",
                           {{"alloc_in_new_tlab_objects", "count"},
                            {"alloc_in_new_tlab_bytes", "bytes"}},
                           {"space", "bytes"},
                           2},
    [SC_JFR_ALLOC_OUTSIDE] = {"heap",
                              {{"alloc_outside_tlab_objects", "count"},
                               {"alloc_outside_tlab_bytes", "bytes"}},
                              {"space", "bytes"},
                              2},
    [SC_JFR_ALLOC_SAMPLE] = {"heap",
                             {{"alloc_sample_objects", "count"}, {"alloc_sample_bytes", "bytes"}},
                             {"space", "bytes"},
                             2},
    [SC_JFR_LOCK] = {"mutex",
                     {{"contentions", "count"}, {"delay", "nanoseconds"}},
                     {"mutex", "count"},
                     2},
    [SC_JFR_PARK] = {"block",
                     {{"contentions", "count"}, {"delay", "nanoseconds"}},
                     {"block", "count"},
                     2},
};

const char *sc_jfr_kind_profile(int k)
{
    return k >= 0 && k < SC_JFR_NKINDS ? kinds[k].profile : NULL;
}

static int nomem(struct dec *d)
{
    return sc_errf(d->err, SC_ENOMEM, "out of memory");
}

static int target_open(struct dec *d, int k)
{
    struct target *t = &d->t[k];
    if (t->p)
        return 0;
    t->p = sc_profile_new();
    if (!t->p)
        return nomem(d);
    for (int i = 0; i < kinds[k].nvalues; i++)
        if (sc_profile_add_sample_type(t->p, kinds[k].types[i][0], kinds[k].types[i][1]) < 0)
            return nomem(d);
    int64_t a = sc_profile_intern(t->p, kinds[k].period[0], strlen(kinds[k].period[0]));
    int64_t b = sc_profile_intern(t->p, kinds[k].period[1], strlen(kinds[k].period[1]));
    if (a < 0 || b < 0)
        return nomem(d);
    t->p->period_type.type = (uint32_t)a;
    t->p->period_type.unit = (uint32_t)b;
    return 0;
}

static void target_release(struct target *t)
{
    sc_profile_free(t->p);
    sc_map64_release(&t->fn_of_name);
    sc_map64_release(&t->loc_of);
    sc_map64_release(&t->fn_of_method);
    sc_map64_release(&t->span_of_trace);
    sc_map64_release(&t->lspan_of);
    free(t->spans);
    free(t->lspans);
    memset(t, 0, sizeof *t);
}

static int intern(struct dec *d, struct sc_profile *p, const char *s, size_t n, const char *what,
                  uint32_t *out)
{
    int rc = sc_limits_string(d->lim, n, what, d->err);
    if (rc)
        return rc;
    int64_t i = sc_profile_intern(p, s, n);
    if (i < 0)
        return i == SC_ENOMEM ? nomem(d) : sc_errf(d->err, (int)i, "too many strings");
    if (p->strings.n > d->lim->max_strings)
        return sc_errf(d->err, SC_ELIMIT, "more than %u strings (limits.max_strings)",
                       (unsigned)d->lim->max_strings);
    *out = (uint32_t)i;
    return 0;
}

/* Pyroscope's merging of JVM-generated class names: the serial numbers and addresses of
 * lambdas, reflection accessors and CGLIB proxies become "_". Returns the new length. */
static size_t merge_generated(const char *s, size_t n)
{
    static const char lambda[] = "$$Lambda",
                      accessor[] = "jdk/internal/reflect/GeneratedMethodAccessor",
                      cglib[] = "$$EnhancerBySpringCGLIB$$";
    size_t la = sizeof accessor - 1;
    if (n > la && !memcmp(s, accessor, la)) {
        size_t i = la;
        while (i < n && s[i] >= '0' && s[i] <= '9')
            i++;
        if (i == n)
            return la;
    }
    const char *m = NULL;
    for (const char *x = s; (x = memmem(x, n - (size_t)(x - s), lambda, sizeof lambda - 1)); x++)
        m = x;
    if (m && m > s) {
        /* then Pyroscope's \$?\d*[./](0x)?[0-9a-f]+ or \d+ to the end, and JDK 17's
         * $87+0x00007f9a0c008a08/2147046752: groups of [+./] (0x)? hex digits */
        size_t i = (size_t)(m - s) + sizeof lambda - 1, j = i;
        if (j < n && s[j] == '$')
            j++;
        while (j < n && s[j] >= '0' && s[j] <= '9')
            j++;
        int ok = j == n && j > i + (s[i] == '$');
        while (!ok && j < n && (s[j] == '.' || s[j] == '/' || s[j] == '+')) {
            j++;
            if (j + 1 < n && s[j] == '0' && s[j + 1] == 'x')
                j += 2;
            size_t h = j;
            while (j < n && ((s[j] >= '0' && s[j] <= '9') || (s[j] >= 'a' && s[j] <= 'f')))
                j++;
            if (j == h)
                break;
            ok = j == n;
        }
        if (ok)
            return i;
    }
    const char *c = memmem(s, n, cglib, sizeof cglib - 1);
    if (c && c > s)
        return (size_t)(c - s) + sizeof cglib - 1;
    return n;
}

/* The function of JFR method id m in t (NULL-safe: UINT32_MAX when the method is unknown). */
static int method_fn(struct dec *d, struct target *t, uint64_t m, uint32_t *fn)
{
    const uint32_t *cached = sc_map64_get(&t->fn_of_method, m);
    if (cached) {
        *fn = *cached;
        return 0;
    }
    *fn = UINT32_MAX;
    const uint32_t *mi = sc_map64_get(&d->method_of, m);
    if (!mi)
        return 0;
    const struct method *me = &d->methods[*mi];
    const uint32_t *ci = sc_map64_get(&d->class_name_of, me->type);
    const uint32_t *cs = ci ? sc_map64_get(&d->symbol_of, d->class_names[*ci]) : NULL;
    const uint32_t *ns = sc_map64_get(&d->symbol_of, me->name);
    struct jstr cname = cs ? resolve(d, d->strs[*cs]) : (struct jstr){"", 0, 0, 0};
    struct jstr mname = ns ? resolve(d, d->strs[*ns]) : (struct jstr){"", 0, 0, 0};
    d->name.len = 0;
    if (cname.len) {
        sc_buf_append(&d->name, cname.p, merge_generated(cname.p, cname.len));
        if (d->name.len < cname.len)
            sc_buf_putc(&d->name, '_');
        sc_buf_putc(&d->name, '.');
    }
    sc_buf_append(&d->name, mname.p, mname.len);
    if (d->name.oom)
        return nomem(d);
    if (d->name.len == 0)
        sc_buf_puts(&d->name, "[unknown]");
    uint32_t s;
    int rc = intern(d, t->p, d->name.data, d->name.len, "a frame name", &s);
    if (rc)
        return rc;
    int added;
    uint32_t *slot = sc_map64_upsert(&t->fn_of_name, s, t->p->nfunctions, &added);
    if (!slot)
        return nomem(d);
    if (added) {
        if (t->p->nfunctions >= d->lim->max_functions)
            return sc_errf(d->err, SC_ELIMIT, "more than %u functions (limits.max_functions)",
                           (unsigned)d->lim->max_functions);
        if (sc_profile_add_function(t->p, s, 0) < 0)
            return nomem(d);
    }
    *fn = *slot;
    if (!sc_map64_upsert(&t->fn_of_method, m, *fn, &added))
        return nomem(d);
    return 0;
}

static int location(struct dec *d, struct target *t, uint32_t fn, int32_t line, uint32_t *loc)
{
    int added;
    uint64_t key = (uint64_t)fn << 32 | (uint32_t)line;
    uint32_t *slot = sc_map64_upsert(&t->loc_of, key, t->p->nlocations, &added);
    if (!slot)
        return nomem(d);
    if (added) {
        if (t->p->nlocations >= d->lim->max_locations)
            return sc_errf(d->err, SC_ELIMIT, "more than %u locations (limits.max_locations)",
                           (unsigned)d->lim->max_locations);
        int64_t l = sc_profile_add_simple_location(t->p, fn);
        if (l < 0)
            return nomem(d);
        t->p->lines[t->p->locations[l].line_start].line = line > 0 ? line : 0;
    }
    *loc = *slot;
    return 0;
}

/* The span of t's sample_locs holding stack trace id's locations (leaf first, as JFR lists
 * frames); *found 0 when the chunk has no such trace. */
static int trace_span(struct dec *d, struct target *t, uint64_t id, struct span *out, int *found)
{
    const uint32_t *si = sc_map64_get(&t->span_of_trace, id);
    *found = 1;
    if (si) {
        *out = t->spans[*si];
        return 0;
    }
    const uint32_t *ti = sc_map64_get(&d->trace_of, id);
    if (!ti) {
        *found = 0;
        return 0;
    }
    const struct trace tr = d->traces[*ti];
    struct sc_profile *p = t->p;
    struct span sp = {p->nsample_locs, 0};
    if (sc_grow_array(&p->sample_locs, &p->sample_locs_cap, (uint64_t)p->nsample_locs + tr.nf,
                      sizeof *p->sample_locs))
        return nomem(d);
    for (uint32_t i = 0; i < tr.nf; i++) {
        const struct frame *f = &d->frames[tr.f0 + i];
        uint32_t fn, loc = 0;
        int rc = method_fn(d, t, f->method, &fn);
        if (rc)
            return rc;
        if (fn == UINT32_MAX)
            continue; /* a method the pools lack: the frame is left out, as Pyroscope does */
        if ((rc = location(d, t, fn, f->line, &loc)))
            return rc;
        p->sample_locs[p->nsample_locs++] = loc;
        sp.n++;
    }
    if (sc_grow_array(&t->spans, &t->spans_cap, (uint64_t)t->nspans + 1, sizeof *t->spans))
        return nomem(d);
    t->spans[t->nspans] = sp;
    int added;
    if (!sc_map64_upsert(&t->span_of_trace, id, t->nspans++, &added))
        return nomem(d);
    *out = sp;
    return 0;
}

static int add_label(struct dec *d, struct sc_profile *p, const char *k, size_t kn, const char *v,
                     size_t vn)
{
    uint32_t ks = 0, vs = 0;
    int rc = intern(d, p, k, kn, "a label name", &ks);
    if (!rc)
        rc = intern(d, p, v, vn, "a label value", &vs);
    if (!rc && p->samples[p->nsamples - 1].nlabels >= d->lim->max_labels)
        rc = sc_errf(d->err, SC_ELIMIT, "more than %u labels on a sample (limits.max_labels)",
                     (unsigned)d->lim->max_labels);
    if (!rc && sc_profile_add_label(p, ks, vs, 0, 0))
        rc = nomem(d);
    return rc;
}

/* The labels of the context (ctx, span, span_name) on the sample just added. */
static int add_labels(struct dec *d, struct target *t, uint64_t ctx, uint64_t span,
                      uint64_t span_name)
{
    const struct snapshot *s = &d->snap;
    struct sc_profile *p = t->p;
    const uint32_t *ci = ctx ? sc_map64_get(&s->ctx_of, ctx) : NULL;
    int rc = 0;
    for (uint32_t i = 0; ci && i < s->ctxs[*ci].n && !rc; i++) {
        const int64_t *pr = s->pairs[s->ctxs[*ci].start + i];
        struct sc_str k = snap_str(s, pr[0]), v = snap_str(s, pr[1]);
        if (k.len && v.len)
            rc = add_label(d, p, k.ptr, k.len, v.ptr, v.len);
    }
    if (!rc && span) {
        char hex[17];
        snprintf(hex, sizeof hex, "%016llx", (unsigned long long)span);
        rc = add_label(d, p, "profile_id", 10, hex, 16);
    }
    struct sc_str sn = span_name ? snap_str(s, (int64_t)span_name) : (struct sc_str){"", 0};
    if (!rc && sn.len)
        rc = add_label(d, p, "span_name", 9, sn.ptr, sn.len);
    return rc;
}

/* Adds a sample of kind k: values (the kind's count), time, trace and context. */
static int emit(struct dec *d, int k, uint64_t trace, uint64_t ctx, uint64_t span,
                uint64_t span_name, const int64_t *values, int64_t time_ns)
{
    int rc = target_open(d, k);
    if (rc)
        return rc;
    struct target *t = &d->t[k];
    struct span sp = {0, 0};
    int found;
    if ((rc = trace_span(d, t, trace, &sp, &found)))
        return rc;
    if (!found)
        return 0; /* no stack trace of that id: nothing to attribute it to (Pyroscope too) */
    if (d->nsamples >= d->lim->max_samples)
        return sc_errf(d->err, SC_ELIMIT, "more than %u samples (limits.max_samples)",
                       (unsigned)d->lim->max_samples);
    d->nsamples++;
    uint32_t lstart = 0, ln = 0;
    int has_ctx = ctx || span || span_name;
    uint32_t *li = NULL;
    if (has_ctx) {
        uint64_t h = sc_hash_combine(sc_hash_combine(sc_mix64(ctx), span), span_name);
        int added;
        li = sc_map64_upsert(&t->lspan_of, h, t->nlspans, &added);
        if (!li)
            return nomem(d);
        if (!added) {
            const struct lspan *l = &t->lspans[*li];
            if (l->ctx == ctx && l->span == span && l->span_name == span_name) {
                lstart = l->start;
                ln = l->n;
                has_ctx = 0;
            }
            li = NULL; /* reused, or a hash collision: labels of its own, uncached */
        }
    }
    if (has_ctx)
        lstart = t->p->nlabels;
    if (sc_profile_add_sample_span(t->p, sp.start, sp.n, lstart, ln, values, time_ns) < 0)
        return nomem(d);
    if (has_ctx) {
        if ((rc = add_labels(d, t, ctx, span, span_name)))
            return rc;
        if (li) {
            if (sc_grow_array(&t->lspans, &t->lspans_cap, (uint64_t)t->nlspans + 1,
                              sizeof *t->lspans))
                return nomem(d);
            struct lspan l = {ctx, span, span_name, lstart,
                              t->p->samples[t->p->nsamples - 1].nlabels};
            t->lspans[t->nlspans++] = l; /* the index *li was filed under */
        }
    }
    if (time_ns && (!d->first_ns || time_ns < d->first_ns))
        d->first_ns = time_ns;
    if (time_ns > d->last_ns)
        d->last_ns = time_ns;
    return 0;
}

static int64_t ticks_ns(const struct dec *d, uint64_t ticks)
{
    __int128 x = (__int128)((int64_t)ticks - d->start_ticks) * 1000000000 / d->tps;
    x += d->start_ns;
    return x > INT64_MAX ? INT64_MAX : x < 0 ? 0 : (int64_t)x;
}

static int64_t span_ns(const struct dec *d, uint64_t ticks)
{
    __int128 x = (__int128)ticks * 1000000000 / d->tps;
    return x > INT64_MAX ? INT64_MAX : x < 0 ? 0 : (int64_t)x;
}

/* "10 ms", "20 ms", "1 s", "100 us", "5000000 ns" (or a bare number of ns) as ns; 0 else. */
static int64_t parse_period(struct jstr s)
{
    uint32_t i = 0;
    int64_t v = 0;
    while (i < s.len && s.p[i] >= '0' && s.p[i] <= '9' && v < INT64_MAX / 100)
        v = v * 10 + (s.p[i++] - '0');
    if (i == 0)
        return 0;
    while (i < s.len && s.p[i] == ' ')
        i++;
    struct jstr u = {s.p + i, s.len - i, 0, 0};
    if (u.len == 0 || jstr_is(u, "ns"))
        return v;
    if (jstr_is(u, "us"))
        return v * 1000;
    if (jstr_is(u, "ms"))
        return v * 1000000;
    if (jstr_is(u, "s"))
        return v * 1000000000;
    return 0;
}

static void read_setting(struct dec *d, const struct jclass *c, const struct jval *vals)
{
    struct jstr name = str(d, c, vals, F_NAME), value = str(d, c, vals, F_VALUE);
    uint64_t id = num(c, vals, F_ID);
    if (jstr_is(name, "event")) {
        d->wall_mode = jstr_is(value, "wall");
        return;
    }
    int64_t ns = parse_period(value);
    if (ns <= 0)
        return;
    if (jstr_is(name, "period")) {
        const uint32_t *ci = sc_map64_get(&d->class_of, id);
        int ev = ci ? d->classes[*ci].ev : EV_NONE;
        if (ev == EV_EXEC)
            d->period[SC_JFR_CPU] = ns;
        else if (ev == EV_NATIVE)
            d->period[SC_JFR_WALL] = ns;
    } else if (jstr_is(name, "interval") || jstr_is(name, "wall")) {
        /* async-profiler: the sampling interval of its cpu or wall engine */
        if (jstr_is(name, "wall") || !d->period[SC_JFR_WALL])
            d->period[SC_JFR_WALL] = ns;
        if (jstr_is(name, "interval"))
            d->period[SC_JFR_CPU] = ns;
    }
}

static int64_t period(const struct dec *d, int k)
{
    if (d->o->period_ns > 0)
        return d->o->period_ns;
    return d->period[k] > 0 ? d->period[k] : DEFAULT_PERIOD;
}

/* One event of a kind scorch reads (size and type already read; r spans its fields). */
static int read_event(struct dec *d, struct rd *r, const struct jclass *c)
{
    struct jval vals[MAX_FIELDS];
    int rc = read_record(d, r, c, vals);
    if (rc)
        return rc;
    if (c->ev == EV_SETTING) {
        read_setting(d, c, vals);
        return 0;
    }
    uint64_t trace = num(c, vals, F_STACK), ctx = num(c, vals, F_CONTEXT),
             span = num(c, vals, F_SPAN), span_name = num(c, vals, F_SPAN_NAME);
    int64_t t = c->fi[F_START] >= 0 ? ticks_ns(d, num(c, vals, F_START)) : 0;
    int64_t v[2] = {1, 0};
    struct jstr state = {"", 0, 0, 0};
    if (c->fi[F_STATE] >= 0) {
        const struct jval *sv = &vals[c->fi[F_STATE]];
        if (sv->str.p || sv->str.ref) {
            state = resolve(d, sv->str); /* a String (the JDK's metadata) */
        } else {
            const uint32_t *si = sc_map64_get(&d->state_of, sv->num); /* a ThreadState */
            if (si)
                state = resolve(d, d->strs[*si]);
        }
    }
    switch (c->ev) {
    case EV_EXEC:
        if (!jstr_is(state, "STATE_SLEEPING")) {
            v[0] = period(d, SC_JFR_CPU);
            rc = emit(d, SC_JFR_CPU, trace, ctx, span, span_name, v, t);
        }
        if (!rc && d->wall_mode) {
            v[0] = period(d, SC_JFR_WALL);
            rc = emit(d, SC_JFR_WALL, trace, ctx, span, span_name, v, t);
        }
        return rc;
    case EV_NATIVE:
        v[0] = period(d, SC_JFR_WALL);
        return emit(d, SC_JFR_WALL, trace, ctx, span, span_name, v, t);
    case EV_WALLCLOCK: {
        int64_t n = c->fi[F_SAMPLES] >= 0 ? (int64_t)num(c, vals, F_SAMPLES) : 1;
        if (n <= 0)
            return 0;
        if (d->wall_mode && jstr_is(state, "STATE_RUNNABLE")) {
            v[0] = sc_mul_sat(n, period(d, SC_JFR_CPU));
            rc = emit(d, SC_JFR_CPU, trace, ctx, span, span_name, v, t);
        }
        v[0] = sc_mul_sat(n, period(d, SC_JFR_WALL));
        return rc ? rc : emit(d, SC_JFR_WALL, trace, ctx, span, span_name, v, t);
    }
    case EV_TLAB:
        v[1] = (int64_t)num(c, vals, F_TLAB);
        return emit(d, SC_JFR_ALLOC_TLAB, trace, ctx, span, span_name, v, t);
    case EV_OUTSIDE:
        v[1] = (int64_t)num(c, vals, F_ALLOC);
        return emit(d, SC_JFR_ALLOC_OUTSIDE, trace, ctx, span, span_name, v, t);
    case EV_ALLOC_SAMPLE:
        v[1] = (int64_t)num(c, vals, F_WEIGHT);
        return emit(d, SC_JFR_ALLOC_SAMPLE, trace, ctx, span, span_name, v, t);
    case EV_MONITOR:
        v[1] = span_ns(d, num(c, vals, F_DURATION));
        return emit(d, SC_JFR_LOCK, trace, ctx, span, span_name, v, t);
    case EV_PARK:
        v[1] = span_ns(d, num(c, vals, F_DURATION));
        return emit(d, SC_JFR_PARK, trace, ctx, span, span_name, v, t);
    default:
        return 0;
    }
}

/* ---- chunks ---- */

static uint64_t be(const uint8_t *p, int n)
{
    uint64_t x = 0;
    for (int i = 0; i < n; i++)
        x = x << 8 | p[i];
    return x;
}

int sc_jfr_detect(const void *buf, size_t n)
{
    const uint8_t *b = buf;
    return n >= 8 && !memcmp(b, "FLR\0", 4) && (be(b + 4, 2) == 1 || be(b + 4, 2) == 2);
}

/* Empties what the previous chunk's ids keyed. */
static void chunk_reset(struct dec *d)
{
    sc_map64_release(&d->symbol_of);
    sc_map64_release(&d->string_of);
    sc_map64_release(&d->state_of);
    sc_map64_release(&d->class_name_of);
    sc_map64_release(&d->method_of);
    sc_map64_release(&d->trace_of);
    d->nstrs = d->nclass_names = d->nmethods = d->ntraces = d->nframes = 0;
    sc_arena_release(&d->arena);
    sc_arena_init(&d->arena);
    for (int k = 0; k < SC_JFR_NKINDS; k++) {
        sc_map64_release(&d->t[k].fn_of_method);
        sc_map64_release(&d->t[k].span_of_trace);
        d->t[k].nspans = 0;
    }
}

/* Walks the events of a chunk's body: pass 0 reads the constant pools, pass 1 the samples. */
static int walk(struct dec *d, const uint8_t *body, const uint8_t *end, int pass, size_t base)
{
    struct rd r = {body, end};
    uint64_t i = 0;
    while (r.p < r.end) {
        const uint8_t *ev = r.p;
        uint64_t size, type;
        if (rd_int(d, &r, &size) || size == 0 || size > (uint64_t)(end - ev))
            return sc_errf(d->err, SC_EFORMAT, "bad event size at offset %zu",
                           base + (size_t)(ev - body));
        struct rd e = {r.p, ev + size};
        r.p = ev + size;
        if (rd_long(d, &e, &type))
            return sc_errf(d->err, SC_EFORMAT, "truncated event at offset %zu",
                           base + (size_t)(ev - body));
        int rc = 0;
        if (pass == 0 && type == T_CPOOL) {
            rc = read_cpool(d, &e);
        } else if (pass == 1 && type > T_CPOOL) {
            const uint32_t *ci = sc_map64_get(&d->class_of, type);
            if (ci && d->classes[*ci].ev != EV_NONE)
                rc = read_event(d, &e, &d->classes[*ci]);
        }
        if (rc == SC_ENOMEM)
            return nomem(d);
        if (rc == BAD && d->work > d->work_max)
            return sc_errf(d->err, SC_ELIMIT,
                           "the event at offset %zu nests more values than a recording of "
                           "this size can hold",
                           base + (size_t)(ev - body));
        if (rc == BAD)
            return sc_errf(d->err, SC_EFORMAT, "malformed %s at offset %zu",
                           pass == 0 ? "constant pool" : "event", base + (size_t)(ev - body));
        if (rc)
            return rc;
        if ((rc = sc_budget_poll_every(i++, d->err)))
            return rc;
    }
    return 0;
}

static int read_chunk(struct dec *d, const uint8_t *buf, size_t n, size_t off, size_t *next)
{
    const uint8_t *h = buf + off;
    if (n - off < HEADER_SIZE || memcmp(h, "FLR\0", 4))
        return sc_errf(d->err, SC_EFORMAT, "no JFR chunk at offset %zu", off);
    uint64_t major = be(h + 4, 2), size = be(h + 8, 8), cp = be(h + 16, 8), meta = be(h + 24, 8);
    if (major != 1 && major != 2)
        return sc_errf(d->err, SC_EFORMAT, "unsupported JFR version %llu.%llu at offset %zu",
                       (unsigned long long)major, (unsigned long long)be(h + 6, 2), off);
    if (size == 0)
        return sc_errf(d->err, SC_EFORMAT,
                       "the chunk at offset %zu is unfinished (the recording was still being "
                       "written)",
                       off);
    if (size < HEADER_SIZE || size > n - off || meta < HEADER_SIZE || meta >= size ||
        cp < HEADER_SIZE || cp >= size)
        return sc_errf(d->err, SC_EFORMAT,
                       "bad JFR chunk header at offset %zu (size %llu of %zu bytes left)", off,
                       (unsigned long long)size, n - off);
    d->start_ns = (int64_t)be(h + 32, 8);
    d->start_ticks = (int64_t)be(h + 48, 8);
    d->tps = (int64_t)be(h + 56, 8);
    if (d->tps <= 0)
        d->tps = 1000000000;
    d->fixed = !(be(h + 64, 4) & 1) && major == 2 ? 1 : 0;
    if (major == 1)
        d->fixed = 0; /* version 1 chunks always compress their integers */
    chunk_reset(d);
    const uint8_t *end = h + size;
    struct rd m = {h + meta, end};
    int rc = read_metadata(d, &m);
    if (rc)
        return sc_errwrap(d->err, rc, "chunk at offset %zu", off);
    if (d->k_trace < 0)
        return sc_errf(d->err, SC_EFORMAT, "the chunk at offset %zu has no stack trace type", off);
    if ((rc = walk(d, h + HEADER_SIZE, end, 0, off + HEADER_SIZE)) ||
        (rc = walk(d, h + HEADER_SIZE, end, 1, off + HEADER_SIZE)))
        return rc;
    int64_t cend = sc_add_sat(d->start_ns, (int64_t)be(h + 40, 8));
    if (d->start_ns > 0 && (!d->first_ns || d->start_ns < d->first_ns))
        d->first_ns = d->start_ns;
    if (cend > d->last_ns)
        d->last_ns = cend;
    *next = off + size;
    return 0;
}

static void dec_release(struct dec *d)
{
    chunk_reset(d);
    sc_arena_release(&d->arena);
    free(d->classes);
    free(d->fields);
    sc_map64_release(&d->class_of);
    free(d->strs);
    free(d->class_names);
    free(d->methods);
    free(d->traces);
    free(d->frames);
    for (int k = 0; k < SC_JFR_NKINDS; k++)
        target_release(&d->t[k]);
    sc_map64_release(&d->snap.ctx_of);
    sc_map64_release(&d->snap.str_of);
    free(d->snap.ctxs);
    free(d->snap.pairs);
    free(d->snap.strs);
    sc_buf_release(&d->name);
}

int sc_jfr_decode_kinds(const void *buf, size_t n, const struct sc_jfr_opts *o,
                        const struct sc_limits *lim, struct sc_profile *out[SC_JFR_NKINDS],
                        char *err)
{
    static const struct sc_jfr_opts none;
    struct dec *d = calloc(1, sizeof *d);
    for (int k = 0; k < SC_JFR_NKINDS; k++)
        out[k] = NULL;
    if (!d)
        return sc_errf(err, SC_ENOMEM, "out of memory");
    d->lim = lim ? lim : &sc_limits_cli;
    d->o = o ? o : &none;
    d->err = err;
    d->work_max = (uint64_t)n * 64 + (1u << 20);
    sc_arena_init(&d->arena);
    sc_buf_init(&d->name);
    int rc = 0;
    if (d->o->labels && d->o->labels_len) {
        rc = read_snapshot(d, d->o->labels, d->o->labels_len);
        if (rc == SC_ENOMEM)
            rc = nomem(d);
        else if (rc)
            rc = sc_errf(err, SC_EFORMAT, "malformed labels (a LabelsSnapshot protobuf)");
    }
    if (!rc && !sc_jfr_detect(buf, n))
        rc = sc_errf(err, SC_EFORMAT, "not a JFR recording (no \"FLR\" magic)");
    const uint8_t *b = buf;
    size_t off = 0;
    while (!rc && off < n) {
        /* zero padding after the last chunk (a preallocated file) ends the recording */
        size_t z = off;
        while (z < n && b[z] == 0)
            z++;
        if (z == n)
            break;
        rc = read_chunk(d, buf, n, off, &off);
    }
    if (!rc) {
        for (int k = 0; k < SC_JFR_NKINDS; k++) {
            struct sc_profile *p = d->t[k].p;
            if (!p)
                continue;
            p->time_nanos = d->first_ns;
            p->duration_nanos = d->last_ns > d->first_ns ? d->last_ns - d->first_ns : 0;
            if (k == SC_JFR_CPU || k == SC_JFR_WALL)
                p->period = period(d, k);
            rc = sc_profile_validate(p, err);
            if (rc)
                break;
        }
    }
    if (!rc) {
        for (int k = 0; k < SC_JFR_NKINDS; k++) {
            out[k] = d->t[k].p;
            d->t[k].p = NULL;
        }
    }
    dec_release(d);
    free(d);
    return rc;
}

/* ---- all kinds in one profile ---- */

/* Copies src's samples into p, whose value columns col.. are src's. fn_of[i] is p's
 * function for src's function i (filled here). */
static int append_kind(struct sc_profile *p, const struct sc_profile *src, uint32_t col,
                       struct sc_map64 *loc_of, char *err)
{
    uint32_t *loc_map = calloc(src->nlocations ? src->nlocations : 1, sizeof *loc_map);
    int64_t *vals = calloc(p->nsample_types, sizeof *vals);
    int rc = 0;
    if (!loc_map || !vals)
        rc = SC_ENOMEM;
    for (uint32_t i = 0; !rc && i < src->nlocations; i++) {
        const struct sc_location *l = &src->locations[i];
        const struct sc_line *ln = &src->lines[l->line_start];
        struct sc_str name = sc_function_name(src, ln->function - 1);
        int64_t s = sc_profile_intern(p, name.ptr, name.len);
        if (s < 0) {
            rc = (int)s;
            break;
        }
        int added;
        uint64_t fkey = (uint64_t)s << 32 | 0xffffffffu; /* a name's function */
        uint32_t *f = sc_map64_upsert(loc_of, fkey, p->nfunctions, &added);
        if (!f || (added && sc_profile_add_function(p, (uint32_t)s, 0) < 0)) {
            rc = SC_ENOMEM;
            break;
        }
        uint32_t fn = *f;
        uint64_t lkey = (uint64_t)fn << 32 | (uint32_t)ln->line;
        uint32_t *loc = sc_map64_upsert(loc_of, lkey, p->nlocations, &added);
        if (!loc) {
            rc = SC_ENOMEM;
            break;
        }
        if (added) {
            int64_t nl = sc_profile_add_simple_location(p, fn);
            if (nl < 0) {
                rc = (int)nl;
                break;
            }
            p->lines[p->locations[nl].line_start].line = ln->line;
            loc = sc_map64_get(loc_of, lkey);
        }
        loc_map[i] = *loc;
    }
    if (!rc)
        rc = sc_profile_reserve_samples(p, p->nsamples + src->nsamples,
                                        p->nsample_locs + src->nsample_locs);
    for (uint32_t i = 0; !rc && i < src->nsamples; i++) {
        const struct sc_sample *s = &src->samples[i];
        for (uint32_t j = 0; j < src->nsample_types; j++)
            vals[col + j] = src->values[(size_t)i * src->nsample_types + j];
        uint32_t locs_start = p->nsample_locs;
        if (sc_grow_array(&p->sample_locs, &p->sample_locs_cap,
                          (uint64_t)p->nsample_locs + s->nlocs, sizeof *p->sample_locs)) {
            rc = SC_ENOMEM;
            break;
        }
        for (uint32_t j = 0; j < s->nlocs; j++)
            p->sample_locs[p->nsample_locs++] = loc_map[src->sample_locs[s->loc_start + j]];
        if (sc_profile_add_sample_span(p, locs_start, s->nlocs, p->nlabels, 0, vals, s->time_ns) <
            0) {
            rc = SC_ENOMEM;
            break;
        }
        for (uint32_t j = 0; !rc && j < s->nlabels; j++) {
            const struct sc_label *l = &src->labels[s->label_start + j];
            struct sc_str k = sc_profile_str(src, l->key), v = sc_profile_str(src, l->str);
            int64_t ks = sc_profile_intern(p, k.ptr, k.len),
                    vs = sc_profile_intern(p, v.ptr, v.len);
            if (ks < 0 || vs < 0 || sc_profile_add_label(p, (uint32_t)ks, (uint32_t)vs, 0, 0))
                rc = SC_ENOMEM;
        }
    }
    free(loc_map);
    free(vals);
    if (rc)
        return sc_errf(err, rc, "out of memory");
    return 0;
}

int sc_jfr_decode(const void *buf, size_t n, const struct sc_jfr_opts *o,
                  const struct sc_limits *lim, struct sc_profile *p, char *err)
{
    struct sc_profile *k[SC_JFR_NKINDS];
    int rc = sc_jfr_decode_kinds(buf, n, o, lim, k, err);
    if (rc)
        return rc;
    uint32_t col[SC_JFR_NKINDS] = {0};
    int first = -1;
    for (int i = 0; i < SC_JFR_NKINDS && !rc; i++) {
        if (!k[i])
            continue;
        if (first < 0)
            first = i;
        col[i] = p->nsample_types;
        for (int j = 0; j < kinds[i].nvalues && !rc; j++) {
            char name[64];
            snprintf(name, sizeof name, "%s%s", i == SC_JFR_PARK && k[SC_JFR_LOCK] ? "park_" : "",
                     kinds[i].types[j][0]);
            if (sc_profile_add_sample_type(p, name, kinds[i].types[j][1]) < 0)
                rc = sc_errf(err, SC_ENOMEM, "out of memory");
        }
    }
    struct sc_map64 loc_of;
    sc_map64_init(&loc_of);
    for (int i = 0; i < SC_JFR_NKINDS && !rc; i++)
        if (k[i])
            rc = append_kind(p, k[i], col[i], &loc_of, err);
    sc_map64_release(&loc_of);
    if (!rc && first >= 0) {
        const struct sc_profile *f = k[first];
        p->time_nanos = f->time_nanos;
        p->duration_nanos = f->duration_nanos;
        int lead = k[SC_JFR_CPU] ? SC_JFR_CPU : first;
        p->default_sample_type = p->sample_types[col[lead]].type;
        struct sc_str pt = sc_profile_str(k[lead], k[lead]->period_type.type),
                      pu = sc_profile_str(k[lead], k[lead]->period_type.unit);
        int64_t a = sc_profile_intern(p, pt.ptr, pt.len), b = sc_profile_intern(p, pu.ptr, pu.len);
        if (a < 0 || b < 0)
            rc = sc_errf(err, SC_ENOMEM, "out of memory");
        else {
            p->period_type.type = (uint32_t)a;
            p->period_type.unit = (uint32_t)b;
            p->period = k[lead]->period;
        }
    }
    if (!rc && first < 0) {
        /* a recording without samples of any kind scorch reads: an empty CPU profile */
        if (sc_profile_add_sample_type(p, "cpu", "nanoseconds") < 0)
            rc = sc_errf(err, SC_ENOMEM, "out of memory");
    }
    for (int i = 0; i < SC_JFR_NKINDS; i++)
        sc_profile_free(k[i]);
    if (!rc)
        rc = sc_profile_validate(p, err);
    return rc;
}
