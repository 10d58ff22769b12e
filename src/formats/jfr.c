/* jfr.c - Java Flight Recorder recordings read: chunks, metadata, constant pools, events.
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
#include "formats/jfr_int.h"
#include "model/budget.h"
#include "model/error.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const fid_names[F_N] = {
    "startTime",      "stackTrace", "state",     "contextId", "spanId", "spanName",  "tlabSize",
    "allocationSize", "weight",     "duration",  "samples",   "id",     "name",      "value",
    "string",         "type",       "truncated", "frames",    "method", "lineNumber"};

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
struct jstr jfr_resolve(const struct dec *d, struct jstr s)
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
    return s.p || s.ref ? jfr_resolve(d, s) : none;
}

/* ---- constant pools ---- */

static int add_str(struct dec *d, struct sc_map64 *m, uint64_t id, struct jstr s)
{
    if (sc_grow_array(&d->strs, &d->strs_cap, (uint64_t)d->nstrs + 1, sizeof *d->strs))
        return SC_ENOMEM;
    d->strs[d->nstrs] = s;
    return jfr_put_id(m, id, d->nstrs++);
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
    return jfr_put_id(&d->trace_of, id, d->ntraces++);
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
                rc = jfr_put_id(&d->class_name_of, id, d->nclass_names++);
            } else if (cls == d->k_method) {
                if (sc_grow_array(&d->methods, &d->methods_cap, (uint64_t)d->nmethods + 1,
                                  sizeof *d->methods))
                    return SC_ENOMEM;
                d->methods[d->nmethods].type = num(c, vals, F_TYPE);
                d->methods[d->nmethods].name = num(c, vals, F_NAME);
                rc = jfr_put_id(&d->method_of, id, d->nmethods++);
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

static int64_t ticks_ns(const struct dec *d, uint64_t ticks)
{
    /* (the difference in 128 bits: a hostile start or tick overflows 64) */
    __int128 x = ((__int128)(int64_t)ticks - d->start_ticks) * 1000000000 / d->tps;
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
            state = jfr_resolve(d, sv->str); /* a String (the JDK's metadata) */
        } else {
            const uint32_t *si = sc_map64_get(&d->state_of, sv->num); /* a ThreadState */
            if (si)
                state = jfr_resolve(d, d->strs[*si]);
        }
    }
    switch (c->ev) {
    case EV_EXEC:
        if (!jstr_is(state, "STATE_SLEEPING")) {
            v[0] = period(d, SC_JFR_CPU);
            rc = jfr_emit(d, SC_JFR_CPU, trace, ctx, span, span_name, v, t);
        }
        if (!rc && d->wall_mode) {
            v[0] = period(d, SC_JFR_WALL);
            rc = jfr_emit(d, SC_JFR_WALL, trace, ctx, span, span_name, v, t);
        }
        return rc;
    case EV_NATIVE:
        v[0] = period(d, SC_JFR_WALL);
        return jfr_emit(d, SC_JFR_WALL, trace, ctx, span, span_name, v, t);
    case EV_WALLCLOCK: {
        int64_t n = c->fi[F_SAMPLES] >= 0 ? (int64_t)num(c, vals, F_SAMPLES) : 1;
        if (n <= 0)
            return 0;
        if (d->wall_mode && jstr_is(state, "STATE_RUNNABLE")) {
            v[0] = sc_mul_sat(n, period(d, SC_JFR_CPU));
            rc = jfr_emit(d, SC_JFR_CPU, trace, ctx, span, span_name, v, t);
        }
        v[0] = sc_mul_sat(n, period(d, SC_JFR_WALL));
        return rc ? rc : jfr_emit(d, SC_JFR_WALL, trace, ctx, span, span_name, v, t);
    }
    case EV_TLAB:
        v[1] = (int64_t)num(c, vals, F_TLAB);
        return jfr_emit(d, SC_JFR_ALLOC_TLAB, trace, ctx, span, span_name, v, t);
    case EV_OUTSIDE:
        v[1] = (int64_t)num(c, vals, F_ALLOC);
        return jfr_emit(d, SC_JFR_ALLOC_OUTSIDE, trace, ctx, span, span_name, v, t);
    case EV_ALLOC_SAMPLE:
        v[1] = (int64_t)num(c, vals, F_WEIGHT);
        return jfr_emit(d, SC_JFR_ALLOC_SAMPLE, trace, ctx, span, span_name, v, t);
    case EV_MONITOR:
        v[1] = span_ns(d, num(c, vals, F_DURATION));
        return jfr_emit(d, SC_JFR_LOCK, trace, ctx, span, span_name, v, t);
    case EV_PARK:
        v[1] = span_ns(d, num(c, vals, F_DURATION));
        return jfr_emit(d, SC_JFR_PARK, trace, ctx, span, span_name, v, t);
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
            return jfr_nomem(d);
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
        jfr_target_release(&d->t[k]);
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
        rc = jfr_snapshot_read(d, d->o->labels, d->o->labels_len);
        if (rc == SC_ENOMEM)
            rc = jfr_nomem(d);
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
