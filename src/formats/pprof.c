/* pprof.c - profile.proto decoder and encoder on the raw protobuf wire format.
 *
 * The wire format is read and written with formats/protowire.h.
 *
 * profile.proto field numbers (package perftools.profiles):
 *
 *   Profile    1 sample_type (ValueType)  2 sample  3 mapping  4 location  5 function
 *              6 string_table  7 drop_frames  8 keep_frames  9 time_nanos
 *              10 duration_nanos  11 period_type (ValueType)  12 period  13 comment
 *              14 default_sample_type
 *   ValueType  1 type  2 unit
 *   Sample     1 location_id (leaf first)  2 value  3 label
 *   Label      1 key  2 str  3 num  4 num_unit
 *   Mapping    1 id  2 memory_start  3 memory_limit  4 file_offset  5 filename  6 build_id
 *              7 has_functions  8 has_filenames  9 has_line_numbers  10 has_inline_frames
 *   Location   1 id  2 mapping_id  3 address  4 line  5 is_folded
 *   Line       1 function_id  2 line  3 column
 *   Function   1 id  2 name  3 system_name  4 filename  5 start_line
 *
 * The decoder makes one counting pass over the input so that every array is allocated once
 * at its exact size (memory is O(input), checked against the limits first), then decodes in
 * three sweeps so that ids can be resolved to indexes as they are read: strings, functions
 * and mappings; then locations; then samples.
 *
 * Sample timestamps. profile.proto has no field for a sample's time; scorch carries
 * sc_sample.time_ns as a numeric label with key "timestamp_ns" (unix nanoseconds, num_unit
 * "nanoseconds"), the key Google's perf_data_converter writes. The encoder adds it to every
 * sample with a time; the decoder turns it (and Datadog's "end_timestamp_ns", the same
 * meaning) back into time_ns and does not keep it as a label.
 */
#include "formats/pprof.h"
#include "formats/protowire.h"
#include "model/error.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The field numbers of the table above, one enum per message. Profile: */
enum {
    PB_PROFILE_SAMPLE_TYPE = 1,
    PB_PROFILE_SAMPLE = 2,
    PB_PROFILE_MAPPING = 3,
    PB_PROFILE_LOCATION = 4,
    PB_PROFILE_FUNCTION = 5,
    PB_PROFILE_STRING_TABLE = 6,
    PB_PROFILE_DROP_FRAMES = 7,
    PB_PROFILE_KEEP_FRAMES = 8,
    PB_PROFILE_TIME_NANOS = 9,
    PB_PROFILE_DURATION_NANOS = 10,
    PB_PROFILE_PERIOD_TYPE = 11,
    PB_PROFILE_PERIOD = 12,
    PB_PROFILE_COMMENT = 13,
    PB_PROFILE_DEFAULT_SAMPLE_TYPE = 14,
    PB_PROFILE_LAST = PB_PROFILE_DEFAULT_SAMPLE_TYPE /* the highest field number known */
};
enum { PB_VALUE_TYPE_TYPE = 1, PB_VALUE_TYPE_UNIT = 2 };
enum { PB_SAMPLE_LOCATION_ID = 1, PB_SAMPLE_VALUE = 2, PB_SAMPLE_LABEL = 3 };
enum { PB_LABEL_KEY = 1, PB_LABEL_STR = 2, PB_LABEL_NUM = 3, PB_LABEL_NUM_UNIT = 4 };
/* Mapping: */
enum {
    PB_MAPPING_ID = 1,
    PB_MAPPING_MEMORY_START = 2,
    PB_MAPPING_MEMORY_LIMIT = 3,
    PB_MAPPING_FILE_OFFSET = 4,
    PB_MAPPING_FILENAME = 5,
    PB_MAPPING_BUILD_ID = 6,
    PB_MAPPING_HAS_FUNCTIONS = 7,
    PB_MAPPING_HAS_FILENAMES = 8,
    PB_MAPPING_HAS_LINE_NUMBERS = 9,
    PB_MAPPING_HAS_INLINE_FRAMES = 10
};
/* Location: */
enum {
    PB_LOCATION_ID = 1,
    PB_LOCATION_MAPPING_ID = 2,
    PB_LOCATION_ADDRESS = 3,
    PB_LOCATION_LINE = 4,
    PB_LOCATION_IS_FOLDED = 5
};
enum { PB_LINE_FUNCTION_ID = 1, PB_LINE_LINE = 2, PB_LINE_COLUMN = 3 };
/* Function: */
enum {
    PB_FUNCTION_ID = 1,
    PB_FUNCTION_NAME = 2,
    PB_FUNCTION_SYSTEM_NAME = 3,
    PB_FUNCTION_FILENAME = 4,
    PB_FUNCTION_START_LINE = 5
};

/* Id -> index resolution: a dense array when ids are small (pprof writers number them
 * 1..n), a hash map otherwise. */
struct idmap {
    uint32_t *dense; /* id -> index + 1 */
    uint64_t ndense;
    struct sc_map64 sparse; /* id -> index */
    bool use_dense;
};

static int idmap_init(struct idmap *m, uint64_t max_id, uint32_t n)
{
    memset(m, 0, sizeof *m);
    if (max_id <= (uint64_t)n * 2 + 1024) {
        m->use_dense = true;
        m->ndense = max_id + 1;
        m->dense = calloc(m->ndense, sizeof *m->dense);
        return m->dense ? 0 : SC_ENOMEM;
    }
    return sc_map64_reserve(&m->sparse, n);
}

static void idmap_release(struct idmap *m)
{
    free(m->dense);
    sc_map64_release(&m->sparse);
}

/* Records id -> index; SC_EFORMAT on a duplicate id. */
static int idmap_put(struct idmap *m, uint64_t id, uint32_t index)
{
    if (m->use_dense) {
        if (m->dense[id])
            return SC_EFORMAT;
        m->dense[id] = index + 1;
        return 0;
    }
    int added;
    if (!sc_map64_upsert(&m->sparse, id, index, &added))
        return SC_ENOMEM;
    return added ? 0 : SC_EFORMAT;
}

/* index + 1 of id, 0 when unknown. */
static inline uint32_t idmap_get(const struct idmap *m, uint64_t id)
{
    if (m->use_dense)
        return id < m->ndense ? m->dense[id] : 0;
    uint32_t *v = sc_map64_get(&m->sparse, id);
    return v ? *v + 1 : 0;
}

/* Where the fields of one kind lie: from the first one's tag to the end of the last one, so
 * a sweep for that kind walks only them; contiguous when nothing else lies between (as
 * every writer puts them), so the other sweeps can jump over the whole span. */
struct span {
    const uint8_t *start, *end;
    bool broken; /* another field lies between two of them */
};

struct counts {
    struct span sample_span, location_span;
    int time_keys;  /* the string table holds a timestamp label key */
    int str_labels; /* a sample has a string label (counted for SC_PPROF_LAZY_UNLABELLED) */
    uint64_t sample_types, samples, sample_locs, sample_values, labels;
    uint64_t max_sample_locs;    /* in one sample (lazy: the largest sample's bytes) */
    uint64_t max_location_lines; /* in one location */
    uint64_t mappings, locations, lines, functions, strings, comments;
    uint64_t max_mapping_id, max_location_id, max_function_id;
};

struct dec {
    int lazy;    /* leave samples in the buffer (sc_pprof_decode_lazy) */
    int inlined; /* some location has more than one line: samples count frames by lines */
    uint64_t nsamples, max_sample_locs;
    struct sc_pb_rd samples; /* the bytes that hold every sample message (struct span) */
    struct sc_profile *p;
    const struct sc_limits *lim;
    char *err;
    const char *input; /* lazy walks: the input's name for their errors, or NULL */
    struct idmap fn_ids, map_ids, loc_ids;
};

#define BAD(d, ...) sc_errf((d)->err, SC_EFORMAT, "malformed pprof: " __VA_ARGS__)

/* The label keys that carry a sample's time (see the header comment). */
static int is_time_key(const uint8_t *s, size_t n)
{
    return (n == 12 && !memcmp(s, "timestamp_ns", 12)) ||
           (n == 16 && !memcmp(s, "end_timestamp_ns", 16));
}

/* Reads the id of a mapping, location or function message (the same field in each). */
_Static_assert((int)PB_MAPPING_ID == (int)PB_LOCATION_ID &&
                   (int)PB_LOCATION_ID == (int)PB_FUNCTION_ID,
               "peek_id reads one field number for the three");
static int peek_id(struct sc_pb_rd r, uint64_t *id)
{
    struct sc_pb_field f;
    int k;
    *id = 0;
    while ((k = sc_pb_next(&r, &f)) > 0)
        if (f.num == PB_MAPPING_ID && f.wt == SC_WT_VARINT)
            *id = f.v;
    return k;
}

/* Does a sample message hold a label with a string value (Label.str, field 2, non-zero)?
 * Malformed bytes say no: the decode that follows reports them. */
static int has_str_label(struct sc_pb_rd r)
{
    struct sc_pb_field f, g;
    while (sc_pb_next(&r, &f) > 0) {
        if (f.num != PB_SAMPLE_LABEL || f.wt != SC_WT_LEN)
            continue;
        struct sc_pb_rd l = f.payload;
        while (sc_pb_next(&l, &g) > 0)
            if (g.num == PB_LABEL_STR && g.wt == SC_WT_VARINT && g.v != 0)
                return 1;
    }
    return 0;
}

static int count_pass(struct dec *d, struct sc_pb_rd r, struct counts *c)
{
    const uint8_t *start = r.p, *at = r.p;
    struct sc_pb_field f;
    int k;
    uint32_t last = 0;
    memset(c, 0, sizeof *c);
    for (; (k = sc_pb_next(&r, &f)) > 0; at = r.p, last = f.num) {
        if (f.num == PB_PROFILE_SAMPLE || f.num == PB_PROFILE_LOCATION) {
            struct span *sp = f.num == PB_PROFILE_SAMPLE ? &c->sample_span : &c->location_span;
            if (!sp->start)
                sp->start = at;
            else if (last != f.num)
                sp->broken = true;
            sp->end = r.p;
        }
        switch (f.num) {
        case PB_PROFILE_SAMPLE_TYPE:
            c->sample_types++;
            break;
        case PB_PROFILE_SAMPLE: {
            if (f.wt != SC_WT_LEN)
                return BAD(d, "sample is not a message");
            c->samples++;
            if (d->lazy) {
                /* walks check each sample; a location id takes a byte at least, so the
                 * payload length bounds the scratch a walk needs */
                uint64_t len = (uint64_t)(f.payload.end - f.payload.p);
                if (len > c->max_sample_locs)
                    c->max_sample_locs = len;
                if (d->lazy == SC_PPROF_LAZY_UNLABELLED && !c->str_labels)
                    c->str_labels = has_str_label(f.payload);
                break;
            }
            struct sc_pb_rd s = f.payload;
            struct sc_pb_field g;
            int j;
            uint64_t here = 0;
            while ((j = sc_pb_next(&s, &g)) > 0) {
                uint64_t n = g.wt == SC_WT_LEN ? sc_pb_packed_count(&g.payload) : 1;
                if (g.num == PB_SAMPLE_LOCATION_ID)
                    here += n;
                else if (g.num == PB_SAMPLE_VALUE)
                    c->sample_values += n;
                else if (g.num == PB_SAMPLE_LABEL)
                    c->labels++;
            }
            if (j < 0)
                return BAD(d, "truncated sample %llu", (unsigned long long)c->samples);
            c->sample_locs += here;
            if (here > c->max_sample_locs)
                c->max_sample_locs = here;
            break;
        }
        case PB_PROFILE_MAPPING:
        case PB_PROFILE_LOCATION:
        case PB_PROFILE_FUNCTION: {
            if (f.wt != SC_WT_LEN)
                return BAD(d, "field %u is not a message", (unsigned)f.num);
            uint64_t id;
            if (peek_id(f.payload, &id) < 0)
                return BAD(d, "truncated %s",
                           f.num == PB_PROFILE_MAPPING    ? "mapping"
                           : f.num == PB_PROFILE_LOCATION ? "location"
                                                          : "function");
            if (f.num == PB_PROFILE_MAPPING) {
                c->mappings++;
                if (id > c->max_mapping_id)
                    c->max_mapping_id = id;
            } else if (f.num == PB_PROFILE_FUNCTION) {
                c->functions++;
                if (id > c->max_function_id)
                    c->max_function_id = id;
            } else {
                c->locations++;
                if (id > c->max_location_id)
                    c->max_location_id = id;
                struct sc_pb_rd l = f.payload;
                struct sc_pb_field g;
                uint64_t here = 0;
                while (sc_pb_next(&l, &g) > 0)
                    here += g.num == PB_LOCATION_LINE;
                /* each line is a frame of every sample on the location */
                if (sc_limits_lines(d->lim, id, here, d->err))
                    return SC_ELIMIT;
                c->lines += here;
                if (here > c->max_location_lines)
                    c->max_location_lines = here;
            }
            break;
        }
        case PB_PROFILE_STRING_TABLE:
            if (f.wt == SC_WT_LEN && (uint64_t)(f.payload.end - f.payload.p) > d->lim->max_string) {
                char what[48];
                snprintf(what, sizeof what, "string %llu", (unsigned long long)c->strings);
                return sc_limits_string(d->lim, (size_t)(f.payload.end - f.payload.p), what,
                                        d->err);
            }
            c->strings++;
            if (f.wt == SC_WT_LEN &&
                is_time_key(f.payload.p, (size_t)(f.payload.end - f.payload.p)))
                c->time_keys = 1;
            break;
        case PB_PROFILE_COMMENT:
            c->comments += f.wt == SC_WT_LEN ? sc_pb_packed_count(&f.payload) : 1;
            break;
        default:
            break;
        }
    }
    if (k < 0)
        return BAD(d, "truncated or corrupt field near offset %zu", (size_t)(r.p - start));
    return 0;
}

/* A string index from the wire; checked against the table at the end (sc_profile_validate),
 * here only against the 32-bit range. */
static int str_index(struct dec *d, uint64_t v, uint32_t *out)
{
    if (v > UINT32_MAX)
        return BAD(d, "string index %llu out of range", (unsigned long long)v);
    *out = (uint32_t)v;
    return 0;
}

static int dec_value_type(struct dec *d, struct sc_pb_rd r, struct sc_value_type *vt)
{
    struct sc_pb_field f;
    int k;
    memset(vt, 0, sizeof *vt);
    while ((k = sc_pb_next(&r, &f)) > 0) {
        if (f.wt != SC_WT_VARINT)
            continue;
        int rc = 0;
        if (f.num == PB_VALUE_TYPE_TYPE)
            rc = str_index(d, f.v, &vt->type);
        else if (f.num == PB_VALUE_TYPE_UNIT)
            rc = str_index(d, f.v, &vt->unit);
        if (rc)
            return rc;
    }
    return k < 0 ? BAD(d, "truncated value type") : 0;
}

static int dec_function(struct dec *d, struct sc_pb_rd r)
{
    struct sc_profile *p = d->p;
    struct sc_function *fn = &p->functions[p->nfunctions];
    memset(fn, 0, sizeof *fn);
    struct sc_pb_field f;
    int k, rc = 0;
    while ((k = sc_pb_next(&r, &f)) > 0) {
        if (f.wt != SC_WT_VARINT)
            continue;
        switch (f.num) {
        case PB_FUNCTION_ID:
            fn->id = f.v;
            break;
        case PB_FUNCTION_NAME:
            rc = str_index(d, f.v, &fn->name);
            break;
        case PB_FUNCTION_SYSTEM_NAME:
            rc = str_index(d, f.v, &fn->system_name);
            break;
        case PB_FUNCTION_FILENAME:
            rc = str_index(d, f.v, &fn->filename);
            break;
        case PB_FUNCTION_START_LINE:
            fn->start_line = (int64_t)f.v;
            break;
        }
        if (rc)
            return rc;
    }
    if (k < 0)
        return BAD(d, "truncated function");
    if (fn->id == 0)
        return BAD(d, "function with id 0");
    rc = idmap_put(&d->fn_ids, fn->id, p->nfunctions);
    if (rc)
        return rc == SC_EFORMAT ? BAD(d, "duplicate function id %llu", (unsigned long long)fn->id)
                                : rc;
    p->nfunctions++;
    return 0;
}

static int dec_mapping(struct dec *d, struct sc_pb_rd r)
{
    struct sc_profile *p = d->p;
    struct sc_mapping *m = &p->mappings[p->nmappings];
    memset(m, 0, sizeof *m);
    struct sc_pb_field f;
    int k, rc = 0;
    while ((k = sc_pb_next(&r, &f)) > 0) {
        if (f.wt != SC_WT_VARINT)
            continue;
        switch (f.num) {
        case PB_MAPPING_ID:
            m->id = f.v;
            break;
        case PB_MAPPING_MEMORY_START:
            m->start = f.v;
            break;
        case PB_MAPPING_MEMORY_LIMIT:
            m->limit = f.v;
            break;
        case PB_MAPPING_FILE_OFFSET:
            m->offset = f.v;
            break;
        case PB_MAPPING_FILENAME:
            rc = str_index(d, f.v, &m->filename);
            break;
        case PB_MAPPING_BUILD_ID:
            rc = str_index(d, f.v, &m->build_id);
            break;
        case PB_MAPPING_HAS_FUNCTIONS:
            m->has_functions = f.v != 0;
            break;
        case PB_MAPPING_HAS_FILENAMES:
            m->has_filenames = f.v != 0;
            break;
        case PB_MAPPING_HAS_LINE_NUMBERS:
            m->has_line_numbers = f.v != 0;
            break;
        case PB_MAPPING_HAS_INLINE_FRAMES:
            m->has_inline_frames = f.v != 0;
            break;
        }
        if (rc)
            return rc;
    }
    if (k < 0)
        return BAD(d, "truncated mapping");
    if (m->id == 0)
        return BAD(d, "mapping with id 0");
    rc = idmap_put(&d->map_ids, m->id, p->nmappings);
    if (rc)
        return rc == SC_EFORMAT ? BAD(d, "duplicate mapping id %llu", (unsigned long long)m->id)
                                : rc;
    p->nmappings++;
    return 0;
}

static int dec_line(struct dec *d, struct sc_pb_rd r, struct sc_line *ln)
{
    struct sc_pb_field f;
    int k;
    memset(ln, 0, sizeof *ln);
    while ((k = sc_pb_next(&r, &f)) > 0) {
        if (f.wt != SC_WT_VARINT)
            continue;
        if (f.num == PB_LINE_FUNCTION_ID) {
            if (f.v) {
                ln->function = idmap_get(&d->fn_ids, f.v);
                if (!ln->function)
                    return BAD(d, "line refers to unknown function id %llu",
                               (unsigned long long)f.v);
            }
        } else if (f.num == PB_LINE_LINE) {
            ln->line = (int64_t)f.v;
        } else if (f.num == PB_LINE_COLUMN) {
            ln->column = (int64_t)f.v;
        }
    }
    return k < 0 ? BAD(d, "truncated line") : 0;
}

static int dec_location(struct dec *d, struct sc_pb_rd r)
{
    struct sc_profile *p = d->p;
    struct sc_location *l = &p->locations[p->nlocations];
    memset(l, 0, sizeof *l);
    l->line_start = p->nlines;
    struct sc_pb_field f;
    int k, rc;
    while ((k = sc_pb_next(&r, &f)) > 0) {
        if (f.num == PB_LOCATION_LINE && f.wt == SC_WT_LEN) {
            rc = dec_line(d, f.payload, &p->lines[p->nlines]);
            if (rc)
                return rc;
            p->nlines++;
            l->nlines++;
            continue;
        }
        if (f.wt != SC_WT_VARINT)
            continue;
        switch (f.num) {
        case PB_LOCATION_ID:
            l->id = f.v;
            break;
        case PB_LOCATION_MAPPING_ID:
            if (f.v) {
                l->mapping = idmap_get(&d->map_ids, f.v);
                if (!l->mapping)
                    return BAD(d, "location refers to unknown mapping id %llu",
                               (unsigned long long)f.v);
            } else {
                l->mapping = 0;
            }
            break;
        case PB_LOCATION_ADDRESS:
            l->address = f.v;
            break;
        case PB_LOCATION_IS_FOLDED:
            l->is_folded = f.v != 0;
            break;
        }
    }
    if (k < 0)
        return BAD(d, "truncated location");
    if (l->id == 0)
        return BAD(d, "location with id 0");
    rc = idmap_put(&d->loc_ids, l->id, p->nlocations);
    if (rc)
        return rc == SC_EFORMAT ? BAD(d, "duplicate location id %llu", (unsigned long long)l->id)
                                : rc;
    p->nlocations++;
    return 0;
}

static int dec_label(struct dec *d, struct sc_pb_rd r, struct sc_label *lb)
{
    struct sc_pb_field f;
    int k, rc = 0;
    memset(lb, 0, sizeof *lb);
    while ((k = sc_pb_next(&r, &f)) > 0) {
        if (f.wt != SC_WT_VARINT)
            continue;
        switch (f.num) {
        case PB_LABEL_KEY:
            rc = str_index(d, f.v, &lb->key);
            break;
        case PB_LABEL_STR:
            rc = str_index(d, f.v, &lb->str);
            break;
        case PB_LABEL_NUM:
            lb->num = (int64_t)f.v;
            break;
        case PB_LABEL_NUM_UNIT:
            rc = str_index(d, f.v, &lb->num_unit);
            break;
        }
        if (rc)
            return rc;
    }
    return k < 0 ? BAD(d, "truncated label") : 0;
}

/* Where dec_sample() puts one sample: location indexes (room for loc_cap), values (room
 * for the number of sample types) and labels (room for label_cap; NULL to skip them). */
struct sample_out {
    uint32_t *locs;
    uint64_t loc_cap;
    uint32_t nlocs;
    int64_t *vals;
    struct sc_label *labels;
    uint64_t label_cap;
    uint32_t nlabels;
    int64_t time_ns; /* from a timestamp label (only when labels are decoded) */
};

/* Is lb a sample's time? Its key is checked against the table here; sc_profile_validate
 * checks every index at the end. */
static int time_label(const struct dec *d, const struct sc_label *lb)
{
    const struct sc_strtab *t = &d->p->strings;
    return lb->str == 0 && lb->key < t->n &&
           is_time_key((const uint8_t *)t->v[lb->key].ptr, t->v[lb->key].len);
}

/* Decodes sample number `index` (for messages) from r into o. */
static int dec_sample(struct dec *d, struct sc_pb_rd r, uint32_t index, struct sample_out *o)
{
    uint32_t nt = d->p->nsample_types;
    uint32_t nvals = 0;
    o->nlocs = o->nlabels = 0;
    o->time_ns = 0;
    struct sc_pb_field f;
    int k, rc;
    while ((k = sc_pb_next(&r, &f)) > 0) {
        if (f.num == PB_SAMPLE_LOCATION_ID && f.wt == SC_WT_LEN && d->loc_ids.use_dense) {
            /* the common case, packed ids numbered densely: a tight loop with 1- and
             * 2-byte varints inline (profiles are mostly made of these ids) */
            const uint8_t *p = f.payload.p, *e = f.payload.end;
            const uint32_t *dense = d->loc_ids.dense;
            uint64_t nd = d->loc_ids.ndense;
            while (p < e) {
                uint64_t id;
                if (p[0] < 0x80) {
                    id = p[0];
                    p++;
                } else if (p + 1 < e && p[1] < 0x80) {
                    id = (uint64_t)(p[0] & 0x7f) | (uint64_t)p[1] << 7;
                    p += 2;
                } else {
                    struct sc_pb_rd t = {p, e};
                    if (sc_pb_varint(&t, &id))
                        return BAD(d, "bad sample location ids");
                    p = t.p;
                }
                uint32_t li = id < nd ? dense[id] : 0;
                if (!li)
                    return BAD(d, "sample refers to unknown location id %llu",
                               (unsigned long long)id);
                if (o->nlocs >= o->loc_cap)
                    return BAD(d, "sample %u has more location ids than counted", (unsigned)index);
                o->locs[o->nlocs++] = li - 1;
            }
            continue;
        }
        switch (f.num) {
        case PB_SAMPLE_LOCATION_ID:
            SC_PB_FOR_EACH_VARINT(
                &f, id,
                {
                    uint32_t li = idmap_get(&d->loc_ids, id);
                    if (!li)
                        return BAD(d, "sample refers to unknown location id %llu",
                                   (unsigned long long)id);
                    if (o->nlocs >= o->loc_cap)
                        return BAD(d, "sample %u has more location ids than counted",
                                   (unsigned)index);
                    o->locs[o->nlocs++] = li - 1;
                },
                return BAD(d, "bad sample location ids"));
            break;
        case PB_SAMPLE_VALUE:
            SC_PB_FOR_EACH_VARINT(
                &f, v,
                {
                    if (nvals >= nt)
                        return BAD(d, "sample %u has more values than the %u sample types",
                                   (unsigned)index, (unsigned)nt);
                    o->vals[nvals++] = (int64_t)v;
                },
                return BAD(d, "bad sample values"));
            break;
        case PB_SAMPLE_LABEL:
            if (f.wt != SC_WT_LEN)
                return BAD(d, "label is not a message");
            if (!o->labels)
                break;
            if (o->nlabels >= o->label_cap)
                return BAD(d, "sample %u has more labels than counted", (unsigned)index);
            rc = dec_label(d, f.payload, &o->labels[o->nlabels]);
            if (rc)
                return rc;
            if (time_label(d, &o->labels[o->nlabels]))
                o->time_ns = o->labels[o->nlabels].num;
            else
                o->nlabels++;
            break;
        }
    }
    if (k < 0)
        return BAD(d, "truncated sample");
    if (nvals != nt)
        return BAD(d, "sample %u has %u values for %u sample types", (unsigned)index,
                   (unsigned)nvals, (unsigned)nt);
    /* frames, not locations: a location's inlined lines are frames of their own */
    uint64_t frames = o->nlocs;
    if (d->inlined && frames <= d->lim->max_stack_depth) {
        const struct sc_location *loc = d->p->locations;
        frames = 0;
        for (uint32_t i = 0; i < o->nlocs; i++)
            frames += loc[o->locs[i]].nlines ? loc[o->locs[i]].nlines : 1;
    }
    if (frames > d->lim->max_stack_depth) {
        char what[32];
        snprintf(what, sizeof what, "sample %u", (unsigned)index);
        return sc_limits_depth(d->lim, frames, what, d->err);
    }
    if (o->nlabels > d->lim->max_labels)
        return sc_errf(d->err, SC_ELIMIT,
                       "sample %u has %u labels, more than the limit of %u (limits.max_labels)",
                       (unsigned)index, (unsigned)o->nlabels, (unsigned)d->lim->max_labels);
    return 0;
}

/* Decodes a sample into the profile's arrays (sized exactly by the counting pass). */
static int store_sample(struct dec *d, struct sc_pb_rd r)
{
    struct sc_profile *p = d->p;
    struct sample_out o = {
        .locs = p->sample_locs + p->nsample_locs,
        .loc_cap = p->sample_locs_cap - p->nsample_locs,
        .vals = p->values + (size_t)p->nsamples * p->nsample_types,
        .labels = p->labels + p->nlabels,
        .label_cap = p->labels_cap - p->nlabels,
    };
    int rc = dec_sample(d, r, p->nsamples, &o);
    if (rc)
        return rc;
    struct sc_sample *s = &p->samples[p->nsamples++];
    s->loc_start = p->nsample_locs;
    s->nlocs = o.nlocs;
    s->label_start = p->nlabels;
    s->nlabels = o.nlabels;
    s->time_ns = o.time_ns;
    p->nsample_locs += o.nlocs;
    p->nlabels += o.nlabels;
    return 0;
}

/* Decodes samples [lo, hi) of the buffer into scratch, each handed to visit (NULL: only
 * checked): the lazy walks, and the check of lazy samples that might be too deep. */
static int walk_samples(struct dec *d, struct sc_pb_rd r, uint64_t lo, uint64_t hi,
                        sc_sample_visit visit, void *ctx)
{
    uint32_t *locs = malloc((d->max_sample_locs + 1) * sizeof *locs);
    int64_t *vals = malloc(((size_t)d->p->nsample_types + 1) * sizeof *vals);
    int rc = 0;
    if (!locs || !vals) {
        rc = sc_errf(d->err, SC_ENOMEM, "out of memory");
        goto out;
    }
    struct sc_pb_field f;
    uint64_t i = 0;
    while (i < hi && sc_pb_next(&r, &f) > 0) {
        if (f.num != PB_PROFILE_SAMPLE)
            continue;
        if (i++ < lo)
            continue;
        struct sample_out o = {.locs = locs, .loc_cap = d->max_sample_locs, .vals = vals};
        rc = dec_sample(d, f.payload, (uint32_t)(i - 1), &o);
        if (rc && d->input)
            sc_errwrap(d->err, rc, "cannot read '%s'", d->input);
        if (!rc && visit)
            rc = visit(ctx, o.locs, o.nlocs, o.vals);
        if (rc)
            break;
    }
out:
    free(locs);
    free(vals);
    return rc;
}

static int check_limit(struct dec *d, uint64_t have, uint32_t max, const char *what)
{
    if (have <= max)
        return 0;
    if (strchr(what, ' ')) /* not one of the limits' keys */
        return sc_errf(d->err, SC_ELIMIT, "profile has %llu %s, more than the limit of %u",
                       (unsigned long long)have, what, (unsigned)max);
    return sc_errf(d->err, SC_ELIMIT,
                   "profile has %llu %s, more than the limit of %u (limits.max_%s)",
                   (unsigned long long)have, what, (unsigned)max, what);
}

/* calloc-style allocation of n elements, n already limit-checked. */
#define ALLOC(ptr, n)                                                                              \
    do {                                                                                           \
        size_t n_ = (size_t)(n);                                                                   \
        (ptr) = malloc((n_ ? n_ : 1) * sizeof *(ptr));                                             \
        if (!(ptr))                                                                                \
            return sc_errf(d->err, SC_ENOMEM, "out of memory");                                    \
    } while (0)

/* A reader over a span's fields (none when there are none). */
static struct sc_pb_rd span_rd(const struct span *sp)
{
    struct sc_pb_rd r = {sp->start, sp->end};
    return r;
}

static int decode(struct dec *d, const void *buf, size_t n)
{
    struct sc_profile *p = d->p;
    const struct sc_limits *lim = d->lim;
    struct sc_pb_rd all = {buf, (const uint8_t *)buf + n};
    struct counts c;
    int rc = count_pass(d, all, &c);
    /* samples with timestamps are kept in the profile: a lazy walk carries no times */
    if (rc == 0 && d->lazy && (c.time_keys || c.str_labels)) {
        d->lazy = 0;
        rc = count_pass(d, all, &c);
    }
    if (rc)
        return rc;
    if ((rc = check_limit(d, c.samples, lim->max_samples, "samples")) ||
        (rc = check_limit(d, c.locations, lim->max_locations, "locations")) ||
        (rc = check_limit(d, c.functions, lim->max_functions, "functions")) ||
        (rc = check_limit(d, c.mappings, lim->max_mappings, "mappings")) ||
        (rc = check_limit(d, c.strings + 1, lim->max_strings, "strings")) ||
        (rc = check_limit(d, c.sample_types, 1u << 16, "sample types")))
        return rc;
    /* Everything below is bounded by the input size: each counted element took at least
     * one byte of it. Values are allocated as samples x sample types, which is not (a few
     * bytes of empty samples and empty types multiply to gigabytes), so they must match the
     * values actually present: every sample has exactly one per type (dec_sample checks). */
    if (!d->lazy && c.sample_values != c.samples * c.sample_types)
        return BAD(d, "%llu sample values for %llu samples of %llu sample types",
                   (unsigned long long)c.sample_values, (unsigned long long)c.samples,
                   (unsigned long long)c.sample_types);

    ALLOC(p->sample_types, c.sample_types);
    if (!d->lazy) {
        ALLOC(p->samples, c.samples);
        p->samples_cap = (uint32_t)c.samples;
        ALLOC(p->values, c.samples * c.sample_types);
        ALLOC(p->sample_locs, c.sample_locs);
        p->sample_locs_cap = (uint32_t)c.sample_locs;
        ALLOC(p->labels, c.labels);
        p->labels_cap = (uint32_t)c.labels;
    }
    d->nsamples = c.samples;
    d->max_sample_locs = c.max_sample_locs;
    ALLOC(p->mappings, c.mappings);
    p->mappings_cap = (uint32_t)c.mappings;
    ALLOC(p->locations, c.locations);
    p->locations_cap = (uint32_t)c.locations;
    ALLOC(p->lines, c.lines);
    p->lines_cap = (uint32_t)c.lines;
    ALLOC(p->functions, c.functions);
    p->functions_cap = (uint32_t)c.functions;
    ALLOC(p->comments, c.comments);

    /* pprof's string 0 is "" and sc_profile_new() put one there; the file's own table
     * replaces it. */
    p->strings.n = 0;
    p->strings.indexed = 0;
    {
        struct sc_str *v = realloc(p->strings.v, (c.strings + 1) * sizeof *v);
        if (!v)
            return sc_errf(d->err, SC_ENOMEM, "out of memory");
        p->strings.v = v;
        p->strings.cap = (uint32_t)c.strings + 1;
    }
    if ((rc = idmap_init(&d->fn_ids, c.max_function_id, (uint32_t)c.functions)) ||
        (rc = idmap_init(&d->map_ids, c.max_mapping_id, (uint32_t)c.mappings)) ||
        (rc = idmap_init(&d->loc_ids, c.max_location_id, (uint32_t)c.locations)))
        return sc_errf(d->err, rc, "out of memory");

    /* sweep 1: everything that refers to nothing but strings (over the samples and the
     * locations when they lie together) */
    struct sc_pb_rd r = all;
    struct sc_pb_field f;
    for (;;) {
        if (r.p == c.sample_span.start && r.p && !c.sample_span.broken)
            r.p = c.sample_span.end;
        if (r.p == c.location_span.start && r.p && !c.location_span.broken) {
            r.p = c.location_span.end;
            continue; /* the samples may start here */
        }
        if (sc_pb_next(&r, &f) <= 0)
            break;
        switch (f.num) {
        case PB_PROFILE_SAMPLE_TYPE:
            if (f.wt != SC_WT_LEN)
                return BAD(d, "sample type is not a message");
            rc = dec_value_type(d, f.payload, &p->sample_types[p->nsample_types++]);
            break;
        case PB_PROFILE_MAPPING:
            rc = dec_mapping(d, f.payload);
            break;
        case PB_PROFILE_FUNCTION:
            rc = dec_function(d, f.payload);
            break;
        case PB_PROFILE_STRING_TABLE:
            if (f.wt != SC_WT_LEN)
                return BAD(d, "string is not bytes");
            p->strings.v[p->strings.n].ptr = (const char *)f.payload.p;
            p->strings.v[p->strings.n].len = (uint32_t)(f.payload.end - f.payload.p);
            p->strings.n++;
            break;
        case PB_PROFILE_DROP_FRAMES:
            if (f.wt == SC_WT_VARINT)
                rc = str_index(d, f.v, &p->drop_frames);
            break;
        case PB_PROFILE_KEEP_FRAMES:
            if (f.wt == SC_WT_VARINT)
                rc = str_index(d, f.v, &p->keep_frames);
            break;
        case PB_PROFILE_TIME_NANOS:
            if (f.wt == SC_WT_VARINT)
                p->time_nanos = (int64_t)f.v;
            break;
        case PB_PROFILE_DURATION_NANOS:
            if (f.wt == SC_WT_VARINT)
                p->duration_nanos = (int64_t)f.v;
            break;
        case PB_PROFILE_PERIOD_TYPE:
            if (f.wt != SC_WT_LEN)
                return BAD(d, "period type is not a message");
            rc = dec_value_type(d, f.payload, &p->period_type);
            break;
        case PB_PROFILE_PERIOD:
            if (f.wt == SC_WT_VARINT)
                p->period = (int64_t)f.v;
            break;
        case PB_PROFILE_COMMENT:
            SC_PB_FOR_EACH_VARINT(
                &f, v,
                {
                    if (v > UINT32_MAX)
                        return BAD(d, "comment string index out of range");
                    p->comments[p->ncomments++] = (uint32_t)v;
                },
                return BAD(d, "bad comment list"));
            break;
        case PB_PROFILE_DEFAULT_SAMPLE_TYPE:
            if (f.wt == SC_WT_VARINT)
                rc = str_index(d, f.v, &p->default_sample_type);
            break;
        }
        if (rc)
            return rc;
    }
    if (p->strings.n == 0) {
        /* a profile without a string table (empty profile) still needs string 0 */
        p->strings.v[0].ptr = "";
        p->strings.v[0].len = 0;
        p->strings.n = 1;
    } else if (p->strings.v[0].len != 0) {
        return BAD(d, "string table entry 0 is not empty");
    }

    /* sweep 2: locations (functions and mappings are known now) */
    r = span_rd(&c.location_span);
    while (sc_pb_next(&r, &f) > 0)
        if (f.num == PB_PROFILE_LOCATION && (rc = dec_location(d, f.payload)))
            return rc;

    /* sweep 3: samples, unless they stay in the buffer; lazy samples are checked when a
     * sample's bytes times a location's lines could pass the depth limit (each id takes a
     * byte), so a walk never finds one too deep after the profile was accepted (rare: a
     * Go profile's samples are some hundred bytes, its locations a few lines) */
    d->inlined = c.max_location_lines > 1;
    if (d->lazy &&
        c.max_sample_locs * (c.max_location_lines ? c.max_location_lines : 1) >
            lim->max_stack_depth &&
        (rc = walk_samples(d, span_rd(&c.sample_span), 0, c.samples, NULL, NULL)))
        return rc;
    d->samples = span_rd(&c.sample_span);
    r = d->samples;
    while (!d->lazy && sc_pb_next(&r, &f) > 0)
        if (f.num == PB_PROFILE_SAMPLE && (rc = store_sample(d, f.payload)))
            return rc;

    return sc_profile_validate(p, d->err) ? SC_EFORMAT : 0;
}

/* Lazily decoded samples: the location id map survives the decode, and each walk decodes
 * the sample messages again into scratch arrays. */
struct lazy {
    struct sc_sample_source base;
    struct dec d; /* read-only during walks: each walk copies it */
    char *input;  /* sc_pprof_name_input's copy */
};

static int lazy_foreach(const struct sc_sample_source *src, uint32_t part, uint32_t nparts,
                        sc_sample_visit visit, void *ctx, char *err)
{
    const struct lazy *z = (const struct lazy *)src;
    /* Each walk has its own decoder state and scratch, so parts can run concurrently. */
    struct dec d = z->d;
    d.err = err;
    d.input = z->input;
    uint64_t n = z->d.nsamples;
    return walk_samples(&d, z->d.samples, part * n / nparts, (part + 1) * n / nparts, visit, ctx);
}

static void lazy_release(struct sc_sample_source *src)
{
    struct lazy *z = (struct lazy *)src;
    idmap_release(&z->d.loc_ids);
    free(z->input);
    free(z);
}

int sc_pprof_name_input(struct sc_profile *p, const char *name)
{
    if (!p->lazy || p->lazy->foreach != lazy_foreach)
        return 0;
    struct lazy *z = (struct lazy *)p->lazy;
    char *copy = strdup(name);
    if (!copy)
        return SC_ENOMEM;
    free(z->input);
    z->input = copy;
    return 0;
}

static int pprof_decode(const void *buf, size_t n, const struct sc_limits *lim,
                        struct sc_profile *p, int lazy, char *err)
{
    struct dec d;
    memset(&d, 0, sizeof d);
    d.p = p;
    d.lim = lim ? lim : &sc_limits_cli;
    d.err = err;
    d.lazy = lazy;
    int rc = decode(&d, buf, n);
    idmap_release(&d.fn_ids);
    idmap_release(&d.map_ids);
    if (rc == 0 && d.lazy) {
        struct lazy *z = calloc(1, sizeof *z);
        if (!z) {
            rc = sc_errf(err, SC_ENOMEM, "out of memory");
        } else {
            z->base.foreach = lazy_foreach;
            z->base.release = lazy_release;
            z->base.nsamples = (uint32_t)d.nsamples;
            z->d = d;
            z->d.err = NULL;
            p->lazy = &z->base;
            return 0; /* z owns loc_ids now */
        }
    }
    idmap_release(&d.loc_ids);
    if (rc == SC_EFORMAT && err && strncmp(err, "malformed pprof", 15) != 0) {
        char tmp[SC_ERR_LEN];
        memcpy(tmp, err, SC_ERR_LEN);
        sc_errf(err, rc, "malformed pprof: %.*s", SC_ERR_LEN - 20, tmp);
    }
    return rc;
}

int sc_pprof_decode(const void *buf, size_t n, const struct sc_limits *lim, struct sc_profile *p,
                    char *err)
{
    return pprof_decode(buf, n, lim, p, 0, err);
}

int sc_pprof_decode_lazy(const void *buf, size_t n, const struct sc_limits *lim,
                         struct sc_profile *p, char *err)
{
    return pprof_decode(buf, n, lim, p, SC_PPROF_LAZY, err);
}

int sc_pprof_decode_mode(const void *buf, size_t n, const struct sc_limits *lim, int lazy,
                         struct sc_profile *p, char *err)
{
    return pprof_decode(buf, n, lim, p, lazy, err);
}

int sc_pprof_looks_valid(const void *buf, size_t n)
{
    struct sc_pb_rd r = {buf, (const uint8_t *)buf + n};
    struct sc_pb_field f;
    int k = 0, known = 0;
    if (n == 0)
        return 0;
    /* The first fields decide: text practically never parses as thousands of well-formed
     * fields with profile.proto's wire types, and a damaged pprof then fails to decode
     * with a clear error rather than as "unrecognized format". Unknown field numbers (from
     * newer writers) pass with any wire type. */
    for (int fields = 0; fields < 4096 && (k = sc_pb_next(&r, &f)) > 0; fields++) {
        if (f.num > PB_PROFILE_LAST)
            continue;
        /* message and string fields are LEN; scalars varint (or packed comments) */
        int want_len = f.num <= PB_PROFILE_STRING_TABLE || f.num == PB_PROFILE_PERIOD_TYPE;
        if (want_len && f.wt != SC_WT_LEN)
            return 0;
        if (!want_len && f.wt != SC_WT_VARINT &&
            !(f.num == PB_PROFILE_COMMENT && f.wt == SC_WT_LEN))
            return 0;
        known++;
    }
    if (r.p < r.end && k <= 0)
        return 0; /* stopped at a malformed field */
    return known > 0;
}

/* ---- encoder ---- */

static void put_value_type(struct sc_buf *b, struct sc_buf *tmp, uint32_t num,
                           const struct sc_value_type *vt)
{
    tmp->len = 0;
    sc_pb_put_uint(tmp, PB_VALUE_TYPE_TYPE, vt->type);
    sc_pb_put_uint(tmp, PB_VALUE_TYPE_UNIT, vt->unit);
    sc_pb_put_msg(b, num, tmp);
}

/* The string indexes of "timestamp_ns" and "nanoseconds" for samples' time labels: where
 * the table has them, else appended after it (*extra says how many strings to append:
 * 0, 1 or 2, in the order key, unit). Nothing when no sample has a time. */
struct time_strings {
    uint32_t key, unit;
    int any, extra_key, extra_unit;
};

static void find_time_strings(const struct sc_profile *p, struct time_strings *ts)
{
    memset(ts, 0, sizeof *ts);
    for (uint32_t i = 0; i < p->nsamples && !ts->any; i++)
        ts->any = p->samples[i].time_ns != 0;
    if (!ts->any)
        return;
    int have_key = 0, have_unit = 0;
    for (uint32_t i = 1; i < p->strings.n && !(have_key && have_unit); i++) {
        struct sc_str s = p->strings.v[i];
        if (!have_key && s.len == 12 && !memcmp(s.ptr, "timestamp_ns", 12))
            ts->key = i, have_key = 1;
        else if (!have_unit && s.len == 11 && !memcmp(s.ptr, "nanoseconds", 11))
            ts->unit = i, have_unit = 1;
    }
    uint32_t next = p->strings.n;
    if (!have_key)
        ts->key = next++, ts->extra_key = 1;
    if (!have_unit)
        ts->unit = next, ts->extra_unit = 1;
}

int sc_pprof_encode(const struct sc_profile *p, struct sc_buf *b)
{
    struct sc_buf tmp = SC_BUF_INIT, inner = SC_BUF_INIT;
    for (uint32_t i = 0; i < p->nsample_types; i++)
        put_value_type(b, &tmp, PB_PROFILE_SAMPLE_TYPE, &p->sample_types[i]);
    struct time_strings ts;
    find_time_strings(p, &ts);

    uint32_t nt = p->nsample_types;
    for (uint32_t i = 0; i < p->nsamples; i++) {
        const struct sc_sample *s = &p->samples[i];
        /* (samples may all be empty: then there is no sample_locs array to point into) */
        const uint32_t *locs = s->nlocs ? p->sample_locs + s->loc_start : NULL;
        const int64_t *vals = p->values + (size_t)i * nt;
        tmp.len = 0;
        if (s->nlocs) {
            size_t len = 0;
            for (uint32_t j = 0; j < s->nlocs; j++)
                len += (size_t)sc_pb_varint_len((uint64_t)locs[j] + 1);
            sc_pb_put_tag(&tmp, PB_SAMPLE_LOCATION_ID, SC_WT_LEN);
            sc_pb_put_varint(&tmp, len);
            for (uint32_t j = 0; j < s->nlocs; j++)
                sc_pb_put_varint(&tmp, (uint64_t)locs[j] + 1);
        }
        if (nt) {
            size_t len = 0;
            for (uint32_t j = 0; j < nt; j++)
                len += (size_t)sc_pb_varint_len((uint64_t)vals[j]);
            sc_pb_put_tag(&tmp, PB_SAMPLE_VALUE, SC_WT_LEN);
            sc_pb_put_varint(&tmp, len);
            for (uint32_t j = 0; j < nt; j++)
                sc_pb_put_varint(&tmp, (uint64_t)vals[j]);
        }
        for (uint32_t j = 0; j < s->nlabels; j++) {
            const struct sc_label *lb = &p->labels[s->label_start + j];
            if (s->time_ns && lb->key == ts.key && !lb->str)
                continue; /* the time goes below, once */
            inner.len = 0;
            sc_pb_put_uint(&inner, PB_LABEL_KEY, lb->key);
            sc_pb_put_uint(&inner, PB_LABEL_STR, lb->str);
            sc_pb_put_uint(&inner, PB_LABEL_NUM, (uint64_t)lb->num);
            sc_pb_put_uint(&inner, PB_LABEL_NUM_UNIT, lb->num_unit);
            sc_pb_put_msg(&tmp, PB_SAMPLE_LABEL, &inner);
        }
        if (s->time_ns) {
            inner.len = 0;
            sc_pb_put_uint(&inner, PB_LABEL_KEY, ts.key);
            sc_pb_put_uint(&inner, PB_LABEL_NUM, (uint64_t)s->time_ns);
            sc_pb_put_uint(&inner, PB_LABEL_NUM_UNIT, ts.unit);
            sc_pb_put_msg(&tmp, PB_SAMPLE_LABEL, &inner);
        }
        sc_pb_put_msg(b, PB_PROFILE_SAMPLE, &tmp);
    }

    for (uint32_t i = 0; i < p->nmappings; i++) {
        const struct sc_mapping *m = &p->mappings[i];
        tmp.len = 0;
        sc_pb_put_uint(&tmp, PB_MAPPING_ID, (uint64_t)i + 1);
        sc_pb_put_uint(&tmp, PB_MAPPING_MEMORY_START, m->start);
        sc_pb_put_uint(&tmp, PB_MAPPING_MEMORY_LIMIT, m->limit);
        sc_pb_put_uint(&tmp, PB_MAPPING_FILE_OFFSET, m->offset);
        sc_pb_put_uint(&tmp, PB_MAPPING_FILENAME, m->filename);
        sc_pb_put_uint(&tmp, PB_MAPPING_BUILD_ID, m->build_id);
        sc_pb_put_uint(&tmp, PB_MAPPING_HAS_FUNCTIONS, m->has_functions);
        sc_pb_put_uint(&tmp, PB_MAPPING_HAS_FILENAMES, m->has_filenames);
        sc_pb_put_uint(&tmp, PB_MAPPING_HAS_LINE_NUMBERS, m->has_line_numbers);
        sc_pb_put_uint(&tmp, PB_MAPPING_HAS_INLINE_FRAMES, m->has_inline_frames);
        sc_pb_put_msg(b, PB_PROFILE_MAPPING, &tmp);
    }

    for (uint32_t i = 0; i < p->nlocations; i++) {
        const struct sc_location *l = &p->locations[i];
        tmp.len = 0;
        sc_pb_put_uint(&tmp, PB_LOCATION_ID, (uint64_t)i + 1);
        sc_pb_put_uint(&tmp, PB_LOCATION_MAPPING_ID, l->mapping);
        sc_pb_put_uint(&tmp, PB_LOCATION_ADDRESS, l->address);
        const struct sc_line *lines = sc_location_lines(p, l);
        for (uint32_t j = 0; j < l->nlines; j++) {
            inner.len = 0;
            sc_pb_put_uint(&inner, PB_LINE_FUNCTION_ID, lines[j].function);
            sc_pb_put_uint(&inner, PB_LINE_LINE, (uint64_t)lines[j].line);
            sc_pb_put_uint(&inner, PB_LINE_COLUMN, (uint64_t)lines[j].column);
            sc_pb_put_msg(&tmp, PB_LOCATION_LINE, &inner);
        }
        sc_pb_put_uint(&tmp, PB_LOCATION_IS_FOLDED, l->is_folded);
        sc_pb_put_msg(b, PB_PROFILE_LOCATION, &tmp);
    }

    for (uint32_t i = 0; i < p->nfunctions; i++) {
        const struct sc_function *fn = &p->functions[i];
        tmp.len = 0;
        sc_pb_put_uint(&tmp, PB_FUNCTION_ID, (uint64_t)i + 1);
        sc_pb_put_uint(&tmp, PB_FUNCTION_NAME, fn->name);
        sc_pb_put_uint(&tmp, PB_FUNCTION_SYSTEM_NAME, fn->system_name);
        sc_pb_put_uint(&tmp, PB_FUNCTION_FILENAME, fn->filename);
        sc_pb_put_uint(&tmp, PB_FUNCTION_START_LINE, (uint64_t)fn->start_line);
        sc_pb_put_msg(b, PB_PROFILE_FUNCTION, &tmp);
    }

    for (uint32_t i = 0; i < p->strings.n; i++) {
        struct sc_str s = p->strings.v[i];
        sc_pb_put_bytes(b, PB_PROFILE_STRING_TABLE, s.ptr, s.len);
    }
    if (ts.extra_key)
        sc_pb_put_bytes(b, PB_PROFILE_STRING_TABLE, "timestamp_ns", 12);
    if (ts.extra_unit)
        sc_pb_put_bytes(b, PB_PROFILE_STRING_TABLE, "nanoseconds", 11);
    sc_pb_put_uint(b, PB_PROFILE_DROP_FRAMES, p->drop_frames);
    sc_pb_put_uint(b, PB_PROFILE_KEEP_FRAMES, p->keep_frames);
    sc_pb_put_uint(b, PB_PROFILE_TIME_NANOS, (uint64_t)p->time_nanos);
    sc_pb_put_uint(b, PB_PROFILE_DURATION_NANOS, (uint64_t)p->duration_nanos);
    if (p->period_type.type || p->period_type.unit)
        put_value_type(b, &tmp, PB_PROFILE_PERIOD_TYPE, &p->period_type);
    sc_pb_put_uint(b, PB_PROFILE_PERIOD, (uint64_t)p->period);
    for (uint32_t i = 0; i < p->ncomments; i++) {
        sc_pb_put_tag(b, PB_PROFILE_COMMENT, SC_WT_VARINT);
        sc_pb_put_varint(b, p->comments[i]);
    }
    sc_pb_put_uint(b, PB_PROFILE_DEFAULT_SAMPLE_TYPE, p->default_sample_type);

    int oom = tmp.oom || inner.oom || b->oom;
    sc_buf_release(&tmp);
    sc_buf_release(&inner);
    return oom ? SC_ENOMEM : 0;
}
