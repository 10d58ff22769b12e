/* otlp_build.c - one OTLP Profile built into the model from the request's dictionary. */
#include "formats/otlp_int.h"
#include "formats/pprof.h"
#include "model/error.h"
#include "model/hash.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ---- building one profile ---- */

/* A resolved sample label: key and value as strings of the profile (str 0: numeric). */
struct rlabel {
    uint32_t key, str, unit;
    int64_t num;
};

struct build {
    struct sc_otlp_req *r;
    struct sc_profile *p;
    uint32_t index; /* the profile's, for messages */
    char *err;
    struct sc_map64 fns, locs, maps, stacks, attrs, links; /* dictionary index -> ... */
    struct {
        uint32_t start, n;
    } * stack_span;
    uint32_t nstack_span, stack_span_cap;
    struct rlabel *rl; /* resolved attributes and links */
    uint32_t nrl, rl_cap;
    uint32_t (*link_rl)[2]; /* a link's trace_id and span_id labels in rl */
    uint32_t nlink_rl, link_rl_cap;
    int64_t *values;
    uint64_t *times;
    uint32_t values_cap, times_cap;
    uint32_t *scratch; /* a stack's profile location indexes */
    uint32_t scratch_cap;
    int64_t first_time;
};

#define FAIL(b, code, ...) fail(b, code, __VA_ARGS__)

__attribute__((format(printf, 3, 4))) static int fail(struct build *b, int code, const char *fmt,
                                                      ...)
{
    char msg[SC_ERR_LEN];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return sc_errf(b->err, code, "profile %u: %s", (unsigned)b->index, msg);
}

static int oom(struct build *b)
{
    return sc_errf(b->err, SC_ENOMEM, "out of memory");
}

/* Dictionary string idx (index 0 and out of range handled by the caller's message). */
static int dict_str(struct build *b, uint64_t idx, struct sc_str *s)
{
    const struct sc_otlp_req *r = b->r;
    if (idx == 0) {
        *s = (struct sc_str){"", 0};
        return 0;
    }
    if (idx >= r->ntable[T_STRING])
        return FAIL(b, SC_EFORMAT, "string index %lld out of range (%u strings)",
                    (long long)(int64_t)idx, (unsigned)r->ntable[T_STRING]);
    struct sc_pb_rd e = r->table[T_STRING][idx];
    *s = (struct sc_str){(const char *)e.p, (uint32_t)(e.end - e.p)};
    return 0;
}

/* Interns dictionary string idx into the profile: its index there, or a negative SC_E*. */
static int64_t intern_idx(struct build *b, uint64_t idx)
{
    struct sc_str s = {"", 0};
    int rc = dict_str(b, idx, &s);
    if (rc)
        return rc;
    int64_t i = sc_profile_intern(b->p, s.ptr, s.len);
    return i < 0 ? oom(b) : i;
}

/* The table entry of a non-zero index, or an error naming the table. */
static int entry(struct build *b, int t, uint64_t idx, struct sc_pb_rd *out)
{
    if (idx >= b->r->ntable[t])
        return FAIL(b, SC_EFORMAT, "%s index %lld out of range (%u entries)",
                    sc_otlp_table_names[t], (long long)(int64_t)idx, (unsigned)b->r->ntable[t]);
    *out = b->r->table[t][idx];
    return 0;
}

static int bad_entry(struct build *b, int t, uint64_t idx)
{
    return FAIL(b, SC_EFORMAT, "malformed %s entry %llu", sc_otlp_table_names[t],
                (unsigned long long)idx);
}

/* Function idx -> the profile's function index + 1 (0: none). */
static int64_t function(struct build *b, uint64_t idx)
{
    if (idx == 0)
        return 0;
    uint32_t *slot = sc_map64_get(&b->fns, idx);
    if (slot)
        return *slot;
    struct sc_pb_rd e = {NULL, NULL};
    int rc = entry(b, T_FUNCTION, idx, &e);
    if (rc)
        return rc;
    struct sc_pb_field f;
    uint64_t name = 0, sys = 0, file = 0, start = 0;
    while ((rc = sc_pb_next(&e, &f)) > 0) {
        if (f.wt != SC_WT_VARINT)
            continue;
        if (f.num == 1)
            name = f.v;
        else if (f.num == 2)
            sys = f.v;
        else if (f.num == 3)
            file = f.v;
        else if (f.num == 4)
            start = f.v;
    }
    if (rc < 0)
        return bad_entry(b, T_FUNCTION, idx);
    int64_t n = intern_idx(b, name), s = n >= 0 ? intern_idx(b, sys) : 0,
            fl = s >= 0 ? intern_idx(b, file) : 0;
    if (n < 0 || s < 0 || fl < 0)
        return n < 0 ? n : s < 0 ? s : fl;
    struct sc_profile *p = b->p;
    if (sc_grow_array(&p->functions, &p->functions_cap, (uint64_t)p->nfunctions + 1,
                      sizeof *p->functions))
        return oom(b);
    struct sc_function *fn = &p->functions[p->nfunctions++];
    *fn =
        (struct sc_function){p->nfunctions, (uint32_t)n, (uint32_t)s, (uint32_t)fl, (int64_t)start};
    if (!(slot = sc_map64_upsert(&b->fns, idx, p->nfunctions, &rc)))
        return oom(b);
    return p->nfunctions;
}

/* Mapping idx -> the profile's mapping index + 1 (0: none). */
static int64_t mapping(struct build *b, uint64_t idx)
{
    if (idx == 0)
        return 0;
    uint32_t *slot = sc_map64_get(&b->maps, idx);
    if (slot)
        return *slot;
    struct sc_pb_rd e = {NULL, NULL};
    int rc = entry(b, T_MAPPING, idx, &e);
    if (rc)
        return rc;
    struct sc_pb_field f;
    struct sc_mapping m = {0};
    uint64_t file = 0;
    while ((rc = sc_pb_next(&e, &f)) > 0) {
        if (f.wt != SC_WT_VARINT)
            continue;
        if (f.num == 1)
            m.start = f.v;
        else if (f.num == 2)
            m.limit = f.v;
        else if (f.num == 3)
            m.offset = f.v;
        else if (f.num == 4)
            file = f.v;
    }
    if (rc < 0)
        return bad_entry(b, T_MAPPING, idx);
    int64_t fl = intern_idx(b, file);
    if (fl < 0)
        return fl;
    m.filename = (uint32_t)fl;
    struct sc_profile *p = b->p;
    if (sc_grow_array(&p->mappings, &p->mappings_cap, (uint64_t)p->nmappings + 1,
                      sizeof *p->mappings))
        return oom(b);
    m.id = p->nmappings + 1;
    p->mappings[p->nmappings++] = m;
    if (!sc_map64_upsert(&b->maps, idx, p->nmappings, &rc))
        return oom(b);
    return p->nmappings;
}

static int line(struct build *b, struct sc_pb_rd r, struct sc_line *ln)
{
    struct sc_pb_field f;
    int rc;
    uint64_t fn = 0;
    memset(ln, 0, sizeof *ln);
    while ((rc = sc_pb_next(&r, &f)) > 0) {
        if (f.wt != SC_WT_VARINT)
            continue;
        if (f.num == 1)
            fn = f.v;
        else if (f.num == 2)
            ln->line = (int64_t)f.v;
        else if (f.num == 3)
            ln->column = (int64_t)f.v;
    }
    if (rc < 0)
        return FAIL(b, SC_EFORMAT, "malformed line");
    int64_t i = function(b, fn);
    if (i < 0)
        return (int)i;
    ln->function = (uint32_t)i;
    return 0;
}

/* Location idx -> the profile's location index (0-based). Index 0 is the empty location. */
static int64_t location(struct build *b, uint64_t idx)
{
    uint32_t *slot = sc_map64_get(&b->locs, idx);
    if (slot)
        return *slot;
    struct sc_pb_rd e = {NULL, NULL};
    int rc = idx ? entry(b, T_LOCATION, idx, &e) : 0;
    if (rc)
        return rc;
    struct sc_profile *p = b->p;
    struct sc_pb_field f;
    struct sc_location l = {0};
    uint64_t map = 0, nlines = 0;
    struct sc_pb_rd scan = e;
    while ((rc = sc_pb_next(&scan, &f)) > 0) {
        if (f.num == 1 && f.wt == SC_WT_VARINT)
            map = f.v;
        else if (f.num == 2 && f.wt == SC_WT_VARINT)
            l.address = f.v;
        else if (f.num == 3 && f.wt == SC_WT_LEN)
            nlines++;
    }
    if (rc < 0)
        return bad_entry(b, T_LOCATION, idx);
    /* each line is a frame of every stack on the location */
    char msg[SC_ERR_LEN];
    if ((rc = sc_limits_lines(&b->r->lim, idx, nlines, msg)))
        return FAIL(b, rc, "%s", msg);
    int64_t m = mapping(b, map);
    if (m < 0)
        return m;
    l.mapping = (uint32_t)m;
    if (sc_grow_array(&p->lines, &p->lines_cap, p->nlines + nlines, sizeof *p->lines) ||
        sc_grow_array(&p->locations, &p->locations_cap, (uint64_t)p->nlocations + 1,
                      sizeof *p->locations))
        return oom(b);
    l.line_start = p->nlines;
    while (sc_pb_next(&e, &f) > 0) {
        if (f.num != 3 || f.wt != SC_WT_LEN)
            continue;
        /* functions may be added (and lines grown) meanwhile: write through the index */
        struct sc_line ln;
        if ((rc = line(b, f.payload, &ln)))
            return rc;
        p->lines[p->nlines++] = ln;
    }
    l.nlines = (uint32_t)nlines;
    l.id = p->nlocations + 1;
    p->locations[p->nlocations] = l;
    if (!sc_map64_upsert(&b->locs, idx, p->nlocations, &rc))
        return oom(b);
    return p->nlocations++;
}

/* Stack idx -> its locations in p->sample_locs (appended on first use). */
/* The depth limit, named for stack idx of frames frames (inlined lines counted). */
static int too_deep(struct build *b, uint64_t idx, uint64_t frames)
{
    char what[32], msg[SC_ERR_LEN];
    snprintf(what, sizeof what, "stack %llu", (unsigned long long)idx);
    int rc = sc_limits_depth(&b->r->lim, frames, what, msg);
    return FAIL(b, rc, "%s", msg);
}

static int stack(struct build *b, uint64_t idx, uint32_t *start, uint32_t *n)
{
    uint32_t *slot = sc_map64_get(&b->stacks, idx);
    if (slot) {
        *start = b->stack_span[*slot].start;
        *n = b->stack_span[*slot].n;
        return 0;
    }
    struct sc_pb_rd e = {NULL, NULL};
    int rc = idx ? entry(b, T_STACK, idx, &e) : 0;
    if (rc)
        return rc;
    struct sc_pb_field f;
    uint32_t depth = 0;
    uint64_t frames = 0; /* a location's inlined lines are frames of their own */
    uint32_t max = b->r->lim.max_stack_depth;
    while ((rc = sc_pb_next(&e, &f)) > 0) {
        if (f.num != 1)
            continue;
        SC_PB_FOR_EACH_VARINT(
            &f, li,
            {
                int64_t l = location(b, li);
                if (l < 0)
                    return (int)l;
                uint32_t nl = b->p->locations[l].nlines;
                frames += nl ? nl : 1;
                if (frames > max)
                    return too_deep(b, idx, frames);
                if (sc_grow_array(&b->scratch, &b->scratch_cap, (uint64_t)depth + 1,
                                  sizeof *b->scratch))
                    return oom(b);
                b->scratch[depth++] = (uint32_t)l;
            },
            return bad_entry(b, T_STACK, idx));
    }
    if (rc < 0)
        return bad_entry(b, T_STACK, idx);
    struct sc_profile *p = b->p;
    if (sc_grow_array(&p->sample_locs, &p->sample_locs_cap, (uint64_t)p->nsample_locs + depth,
                      sizeof *p->sample_locs))
        return oom(b);
    *start = p->nsample_locs;
    *n = depth;
    if (depth)
        memcpy(p->sample_locs + p->nsample_locs, b->scratch, depth * sizeof *b->scratch);
    p->nsample_locs += depth;
    if (sc_grow_array(&b->stack_span, &b->stack_span_cap, (uint64_t)b->nstack_span + 1,
                      sizeof *b->stack_span))
        return oom(b);
    b->stack_span[b->nstack_span].start = *start;
    b->stack_span[b->nstack_span].n = depth;
    if (!sc_map64_upsert(&b->stacks, idx, b->nstack_span++, &rc))
        return oom(b);
    return 0;
}

/* ---- attribute values ---- */

/* A scalar AnyValue as text into out (cap bytes), or with *is_int set an integer.
 * 1 when it is a scalar, 0 for what is skipped (arrays, maps, bytes, empty), -1 malformed. */
static int any_value(struct build *b, struct sc_pb_rd v, char *out, size_t cap, struct sc_str *s,
                     int *is_int, int64_t *num)
{
    struct sc_pb_field f;
    int rc, got = 0;
    *is_int = 0;
    while ((rc = sc_pb_next(&v, &f)) > 0) {
        if (f.num == 1 && f.wt == SC_WT_LEN) {
            *s =
                (struct sc_str){(const char *)f.payload.p, (uint32_t)(f.payload.end - f.payload.p)};
            got = 1, *is_int = 0;
        } else if (f.num == 8 && f.wt == SC_WT_VARINT && b) {
            if (dict_str(b, f.v, s))
                return -2;
            got = 1, *is_int = 0;
        } else if (f.num == 2 && f.wt == SC_WT_VARINT) {
            *s = f.v ? (struct sc_str){"true", 4} : (struct sc_str){"false", 5};
            got = 1, *is_int = 0;
        } else if (f.num == 3 && f.wt == SC_WT_VARINT) {
            *num = (int64_t)f.v;
            int n = snprintf(out, cap, "%lld", (long long)*num);
            *s = (struct sc_str){out, (uint32_t)n};
            got = 1, *is_int = 1;
        } else if (f.num == 4 && f.wt == SC_WT_I64) {
            double d;
            memcpy(&d, &f.v, 8);
            int n = snprintf(out, cap, "%.17g", d);
            *s = (struct sc_str){out, (uint32_t)n};
            got = 1, *is_int = 0;
        } else if (f.num >= 5 && f.num <= 7) {
            got = 0;
        }
    }
    if (rc < 0)
        return -1;
    return got && s->len ? 1 : 0;
}

/* A sample's attribute idx -> index into b->rl (UINT32_MAX - 1: nothing to add). */
static int attribute(struct build *b, uint64_t idx, uint32_t *out)
{
    uint32_t *slot = sc_map64_get(&b->attrs, idx);
    if (slot) {
        *out = *slot;
        return 0;
    }
    struct sc_pb_rd e = {NULL, NULL};
    int rc = entry(b, T_ATTR, idx, &e);
    if (rc)
        return rc;
    struct sc_pb_field f;
    uint64_t key = 0, unit = 0;
    struct sc_pb_rd val = {NULL, NULL};
    while ((rc = sc_pb_next(&e, &f)) > 0) {
        if (f.num == 1 && f.wt == SC_WT_VARINT)
            key = f.v;
        else if (f.num == 2 && f.wt == SC_WT_LEN)
            val = f.payload;
        else if (f.num == 3 && f.wt == SC_WT_VARINT)
            unit = f.v;
    }
    char text[64];
    struct sc_str s = {"", 0};
    int is_int = 0;
    int64_t num = 0;
    int got = rc < 0 ? -1 : any_value(b, val, text, sizeof text, &s, &is_int, &num);
    if (got == -2)
        return SC_EFORMAT;
    if (got < 0)
        return bad_entry(b, T_ATTR, idx);
    uint32_t v = UINT32_MAX - 1;
    if (got && key) {
        int64_t k = intern_idx(b, key), u = k >= 0 ? intern_idx(b, unit) : 0;
        int64_t str = is_int ? 0 : sc_profile_intern(b->p, s.ptr, s.len);
        if (k < 0 || u < 0)
            return (int)(k < 0 ? k : u);
        if (str < 0 || sc_grow_array(&b->rl, &b->rl_cap, (uint64_t)b->nrl + 1, sizeof *b->rl))
            return oom(b);
        b->rl[b->nrl] = (struct rlabel){(uint32_t)k, (uint32_t)str, is_int ? (uint32_t)u : 0, num};
        v = b->nrl++;
    }
    if (!sc_map64_upsert(&b->attrs, idx, v, &rc))
        return oom(b);
    *out = v;
    return 0;
}

static int all_zero(struct sc_pb_rd r)
{
    for (const uint8_t *p = r.p; p < r.end; p++)
        if (*p)
            return 0;
    return 1;
}

/* Adds a label key=hex(bytes) to b->rl; *out its index (UINT32_MAX - 1 for zero ids). */
static int hex_label(struct build *b, const char *key, struct sc_pb_rd id, uint32_t *out)
{
    *out = UINT32_MAX - 1;
    size_t n = (size_t)(id.end - id.p);
    if (n == 0 || all_zero(id))
        return 0;
    if (n > 64)
        return FAIL(b, SC_EFORMAT, "%s of %zu bytes (16 or 8 expected)", key, n);
    char hex[129];
    for (size_t i = 0; i < n; i++)
        snprintf(hex + 2 * i, 3, "%02x", id.p[i]);
    int64_t k = sc_profile_intern(b->p, key, strlen(key));
    int64_t v = k >= 0 ? sc_profile_intern(b->p, hex, 2 * n) : -1;
    if (v < 0 || sc_grow_array(&b->rl, &b->rl_cap, (uint64_t)b->nrl + 1, sizeof *b->rl))
        return oom(b);
    b->rl[b->nrl] = (struct rlabel){(uint32_t)k, (uint32_t)v, 0, 0};
    *out = b->nrl++;
    return 0;
}

/* Link idx -> two indexes into b->rl (trace_id, span_id), UINT32_MAX - 1 when absent. */
static int link(struct build *b, uint64_t idx, uint32_t out[2])
{
    uint32_t *slot = sc_map64_get(&b->links, idx);
    if (slot) {
        memcpy(out, b->link_rl[*slot], sizeof b->link_rl[0]);
        return 0;
    }
    struct sc_pb_rd e = {NULL, NULL};
    int rc = entry(b, T_LINK, idx, &e);
    if (rc)
        return rc;
    struct sc_pb_field f;
    struct sc_pb_rd trace = {NULL, NULL}, span = {NULL, NULL};
    while ((rc = sc_pb_next(&e, &f)) > 0) {
        if (f.num == 1 && f.wt == SC_WT_LEN)
            trace = f.payload;
        else if (f.num == 2 && f.wt == SC_WT_LEN)
            span = f.payload;
    }
    if (rc < 0)
        return bad_entry(b, T_LINK, idx);
    if ((rc = hex_label(b, "trace_id", trace, &out[0])) ||
        (rc = hex_label(b, "span_id", span, &out[1])))
        return rc;
    if (sc_grow_array(&b->link_rl, &b->link_rl_cap, (uint64_t)b->nlink_rl + 1,
                      sizeof b->link_rl[0]))
        return oom(b);
    memcpy(b->link_rl[b->nlink_rl], out, sizeof b->link_rl[0]);
    if (!sc_map64_upsert(&b->links, idx, b->nlink_rl++, &rc))
        return oom(b);
    return 0;
}

/* ---- samples ---- */

struct sample_in {
    uint64_t stack, link;
    uint32_t label[2 * 64]; /* rl indexes */
    uint32_t nlabel;
    uint32_t nvalues, ntimes;
};

static int collect_scalars(struct build *b, struct sc_pb_rd r, struct sample_in *s)
{
    struct sc_pb_field f;
    int rc;
    s->nvalues = s->ntimes = 0;
    while ((rc = sc_pb_next(&r, &f)) > 0) {
        if (f.num == 4) {
            SC_PB_FOR_EACH_VARINT(
                &f, v,
                {
                    if (sc_grow_array(&b->values, &b->values_cap, (uint64_t)s->nvalues + 1,
                                      sizeof *b->values))
                        return oom(b);
                    b->values[s->nvalues++] = (int64_t)v;
                },
                return FAIL(b, SC_EFORMAT, "malformed sample values"));
        } else if (f.num == 5) {
            size_t k = f.wt == SC_WT_LEN ? (size_t)(f.payload.end - f.payload.p) / 8 : 1;
            if ((f.wt == SC_WT_LEN && (f.payload.end - f.payload.p) % 8) ||
                (f.wt != SC_WT_LEN && f.wt != SC_WT_I64))
                return FAIL(b, SC_EFORMAT, "malformed sample timestamps");
            if (sc_grow_array(&b->times, &b->times_cap, (uint64_t)s->ntimes + k, sizeof *b->times))
                return oom(b);
            if (f.wt == SC_WT_LEN)
                memcpy(b->times + s->ntimes, f.payload.p, k * 8);
            else
                b->times[s->ntimes] = f.v;
            s->ntimes += (uint32_t)k;
        }
    }
    return rc < 0 ? FAIL(b, SC_EFORMAT, "malformed sample") : 0;
}

static int read_sample(struct build *b, struct sc_pb_rd r, struct sample_in *s)
{
    struct sc_pb_field f;
    int rc;
    uint32_t max = b->r->lim.max_labels < 64 ? b->r->lim.max_labels : 64;
    s->stack = s->link = 0;
    s->nlabel = s->nvalues = s->ntimes = 0;
    struct sc_pb_rd scan = r;
    while ((rc = sc_pb_next(&scan, &f)) > 0) {
        if (f.num == 1 && f.wt == SC_WT_VARINT) {
            s->stack = f.v;
        } else if (f.num == 3 && f.wt == SC_WT_VARINT) {
            s->link = f.v;
        } else if (f.num == 2) {
            SC_PB_FOR_EACH_VARINT(
                &f, a,
                {
                    uint32_t li;
                    if (a == 0)
                        continue;
                    if ((rc = attribute(b, a, &li)))
                        return rc;
                    if (li == UINT32_MAX - 1)
                        continue;
                    if (s->nlabel >= max)
                        return FAIL(b, SC_ELIMIT,
                                    "a sample has more than %u labels (limits.max_labels)",
                                    (unsigned)max);
                    s->label[s->nlabel++] = li;
                },
                return FAIL(b, SC_EFORMAT, "malformed attribute_indices"));
        }
    }
    if (rc < 0)
        return FAIL(b, SC_EFORMAT, "malformed sample");
    if (s->link) {
        uint32_t l[2];
        if ((rc = link(b, s->link, l)))
            return rc;
        for (int i = 0; i < 2; i++) {
            if (l[i] == UINT32_MAX - 1)
                continue;
            if (s->nlabel >= max + 2)
                return FAIL(b, SC_ELIMIT, "a sample has more than %u labels (limits.max_labels)",
                            (unsigned)max);
            s->label[s->nlabel++] = l[i];
        }
    }
    return collect_scalars(b, r, s);
}

static int add_sample(struct build *b, struct sc_pb_rd r, uint32_t si)
{
    struct sample_in s;
    int rc = read_sample(b, r, &s);
    if (rc)
        return rc;
    if (s.nvalues && s.ntimes && s.nvalues != s.ntimes)
        return FAIL(b, SC_EFORMAT, "sample %u has %u values and %u timestamps", (unsigned)si,
                    (unsigned)s.nvalues, (unsigned)s.ntimes);
    if (!s.nvalues && !s.ntimes)
        return 0; /* nothing observed */
    uint32_t n = s.ntimes ? s.ntimes : 1;
    struct sc_profile *p = b->p;
    if ((uint64_t)p->nsamples + n > b->r->lim.max_samples)
        return FAIL(b, SC_ELIMIT, "more than %u samples (limits.max_samples)",
                    (unsigned)b->r->lim.max_samples);
    uint32_t start = 0, depth = 0;
    if ((rc = stack(b, s.stack, &start, &depth)))
        return rc;
    int64_t v = 0;
    if (!s.ntimes) {
        for (uint32_t i = 0; i < s.nvalues; i++)
            if (__builtin_add_overflow(v, b->values[i], &v))
                return FAIL(b, SC_EFORMAT, "sample %u: the values' sum overflows", (unsigned)si);
    }
    uint32_t lstart = p->nlabels;
    for (uint32_t k = 0; k < n; k++) {
        int64_t val = s.ntimes ? (s.nvalues ? b->values[k] : 1) : v;
        int64_t t = s.ntimes ? (int64_t)b->times[k] : 0;
        if (t && (!b->first_time || t < b->first_time))
            b->first_time = t;
        if (sc_profile_add_sample_span(p, start, depth, lstart, k ? s.nlabel : 0, &val, t) < 0)
            return oom(b);
        for (uint32_t i = 0; k == 0 && i < s.nlabel; i++) {
            const struct rlabel *l = &b->rl[s.label[i]];
            if (sc_profile_add_label(p, l->key, l->str, l->num, l->unit))
                return oom(b);
        }
    }
    return 0;
}

/* ---- series labels ---- */

/* Sets name=value unless name is set already; the name is made a label name. */
static int series_label(struct sc_labels *ls, struct sc_str key, struct sc_str val)
{
    char name[SC_LABEL_NAME_MAX + 2];
    if (!key.len || !val.len)
        return 0;
    size_t n = sc_labels_clean_name(key.ptr, key.len, name, sizeof name);
    if (!n)
        return 0;
    struct sc_str old;
    if (sc_labels_get(ls, name, n, &old))
        return 0;
    return sc_labels_set(ls, name, n, val.ptr, val.len);
}

/* KeyValue attributes (Resource, InstrumentationScope): key or key_strindex, AnyValue. */
static int kv_label(struct build *b, struct sc_labels *ls, struct sc_pb_rd kv, struct sc_str *exe)
{
    struct sc_pb_field f;
    struct sc_str key = {"", 0};
    struct sc_pb_rd val = {NULL, NULL};
    int rc;
    while ((rc = sc_pb_next(&kv, &f)) > 0) {
        if (f.num == 1 && f.wt == SC_WT_LEN)
            key =
                (struct sc_str){(const char *)f.payload.p, (uint32_t)(f.payload.end - f.payload.p)};
        else if (f.num == 3 && f.wt == SC_WT_VARINT && (rc = dict_str(b, f.v, &key)))
            return rc;
        else if (f.num == 2 && f.wt == SC_WT_LEN)
            val = f.payload;
    }
    if (rc < 0)
        return FAIL(b, SC_EFORMAT, "malformed attribute");
    char text[64];
    struct sc_str s = {"", 0};
    int is_int;
    int64_t num;
    int got = any_value(b, val, text, sizeof text, &s, &is_int, &num);
    if (got == -2)
        return SC_EFORMAT;
    if (got < 0)
        return FAIL(b, SC_EFORMAT, "malformed attribute value");
    if (!got)
        return 0;
    if (exe && key.len == 23 && !memcmp(key.ptr, "process.executable.name", 23))
        *exe = s;
    return series_label(ls, key, s) ? oom(b) : 0;
}

static int attrs_of(struct build *b, struct sc_labels *ls, struct sc_pb_rd msg, uint32_t num,
                    struct sc_str *exe, struct sc_str *name, struct sc_str *version)
{
    struct sc_pb_field f;
    int rc;
    while ((rc = sc_pb_next(&msg, &f)) > 0) {
        if (f.num == num && f.wt == SC_WT_LEN) {
            if ((rc = kv_label(b, ls, f.payload, exe)))
                return rc;
        } else if (name && f.wt == SC_WT_LEN && (f.num == 1 || f.num == 2)) {
            struct sc_str *s = f.num == 1 ? name : version;
            *s =
                (struct sc_str){(const char *)f.payload.p, (uint32_t)(f.payload.end - f.payload.p)};
        }
    }
    return rc < 0 ? FAIL(b, SC_EFORMAT, "malformed %s", name ? "scope" : "resource") : 0;
}

/* A dictionary attribute (KeyValueAndUnit) as a series label. */
static int profile_attr(struct build *b, struct sc_labels *ls, uint64_t a)
{
    struct sc_pb_rd e = {NULL, NULL};
    struct sc_pb_rd val = {NULL, NULL};
    struct sc_pb_field g;
    struct sc_str key = {"", 0};
    int rc = entry(b, T_ATTR, a, &e);
    if (rc)
        return rc;
    while ((rc = sc_pb_next(&e, &g)) > 0) {
        if (g.num == 1 && g.wt == SC_WT_VARINT && (rc = dict_str(b, g.v, &key)))
            return rc;
        if (g.num == 2 && g.wt == SC_WT_LEN)
            val = g.payload;
    }
    char text[64];
    struct sc_str s = {"", 0};
    int is_int;
    int64_t num;
    int got = rc < 0 ? -1 : any_value(b, val, text, sizeof text, &s, &is_int, &num);
    if (got == -2)
        return SC_EFORMAT;
    if (got < 0)
        return bad_entry(b, T_ATTR, a);
    return got && series_label(ls, key, s) ? oom(b) : 0;
}

/* The profile's own attribute_indices (dictionary attributes) as series labels. */
static int profile_attrs(struct build *b, struct sc_labels *ls, struct sc_pb_rd prof)
{
    struct sc_pb_field f;
    int rc;
    while (sc_pb_next(&prof, &f) > 0) {
        if (f.num != 11)
            continue;
        SC_PB_FOR_EACH_VARINT(
            &f, a,
            {
                if (a && (rc = profile_attr(b, ls, a)))
                    return rc;
            },
            return FAIL(b, SC_EFORMAT, "malformed attribute_indices"));
    }
    return 0;
}

static int series_labels(struct build *b, const struct prof_ref *pr, struct sc_labels *ls)
{
    const struct sc_otlp_req *r = b->r;
    struct sc_str exe = {"", 0}, name = {"", 0}, version = {"", 0};
    int rc = attrs_of(b, ls, r->resources[pr->resource], 1, &exe, NULL, NULL);
    if (!rc)
        rc = attrs_of(b, ls, r->scopes[pr->scope], 3, NULL, &name, &version);
    if (!rc && (series_label(ls, (struct sc_str){"otel_scope_name", 15}, name) ||
                series_label(ls, (struct sc_str){"otel_scope_version", 18}, version)))
        rc = oom(b);
    if (!rc)
        rc = profile_attrs(b, ls, pr->msg);
    struct sc_str svc;
    if (!rc && !sc_labels_get(ls, "service_name", 12, &svc)) {
        char v[300];
        int n = snprintf(v, sizeof v, "unknown_service%s%.*s", exe.len ? ":" : "",
                         (int)(exe.len < 256 ? exe.len : 256), exe.ptr);
        if (sc_labels_set(ls, "service_name", 12, v, (size_t)n))
            rc = oom(b);
    }
    return rc;
}

/* ---- the profile ---- */

struct prof_fields {
    uint64_t type, unit, ptype, punit;
    int64_t period;
    uint64_t time, duration;
    struct sc_str format;
    struct sc_pb_rd payload;
    uint32_t nsamples;
};

static int value_type(struct sc_pb_rd r, uint64_t *type, uint64_t *unit)
{
    struct sc_pb_field f;
    int rc;
    while ((rc = sc_pb_next(&r, &f)) > 0) {
        if (f.num == 1 && f.wt == SC_WT_VARINT)
            *type = f.v;
        else if (f.num == 2 && f.wt == SC_WT_VARINT)
            *unit = f.v;
    }
    return rc;
}

static int read_profile(struct build *b, struct sc_pb_rd r, struct prof_fields *pf)
{
    struct sc_pb_field f;
    int rc;
    memset(pf, 0, sizeof *pf);
    while ((rc = sc_pb_next(&r, &f)) > 0) {
        switch (f.num) {
        case 1:
        case 5:
            if (f.wt == SC_WT_LEN && value_type(f.payload, f.num == 1 ? &pf->type : &pf->ptype,
                                                f.num == 1 ? &pf->unit : &pf->punit) < 0)
                return FAIL(b, SC_EFORMAT, "malformed value type");
            break;
        case 2:
            pf->nsamples++;
            break;
        case 3:
            if (f.wt == SC_WT_I64)
                pf->time = f.v;
            break;
        case 4:
            if (f.wt == SC_WT_VARINT)
                pf->duration = f.v;
            break;
        case 6:
            if (f.wt == SC_WT_VARINT)
                pf->period = (int64_t)f.v;
            break;
        case 9:
            if (f.wt == SC_WT_LEN)
                pf->format = (struct sc_str){(const char *)f.payload.p,
                                             (uint32_t)(f.payload.end - f.payload.p)};
            break;
        case 10:
            if (f.wt == SC_WT_LEN)
                pf->payload = f.payload;
            break;
        }
    }
    return rc < 0 ? FAIL(b, SC_EFORMAT, "malformed profile") : 0;
}

static int from_pprof(struct build *b, const struct prof_fields *pf, struct sc_otlp_profile *o)
{
    struct sc_input in = {(void *)pf->payload.p, (size_t)(pf->payload.end - pf->payload.p),
                          SC_INPUT_BORROWED};
    struct sc_decode_opts opts = {
        .limits = &b->r->lim, .format = SC_FMT_PPROF, .lazy_samples = SC_PPROF_LAZY_UNLABELLED};
    char why[SC_ERR_LEN] = "";
    int rc = sc_decode(&in, &opts, &o->p, why);
    if (rc)
        return FAIL(b, rc, "original_payload: %s", why);
    o->from_pprof = 1;
    return 0;
}

static int from_samples(struct build *b, struct sc_pb_rd msg, const struct prof_fields *pf)
{
    struct sc_profile *p = b->p;
    struct sc_str type = {"", 0}, unit = {"", 0};
    int rc = dict_str(b, pf->type, &type);
    if (!rc)
        rc = dict_str(b, pf->unit, &unit);
    if (rc)
        return rc;
    /* sc_profile_add_sample_type takes C strings */
    char t[128], u[128];
    snprintf(t, sizeof t, "%.*s", (int)type.len, type.ptr);
    snprintf(u, sizeof u, "%.*s", (int)unit.len, unit.ptr);
    if (sc_profile_add_sample_type(p, t, u) < 0)
        return oom(b);
    int64_t pt = intern_idx(b, pf->ptype), pu = pt >= 0 ? intern_idx(b, pf->punit) : 0;
    if (pt < 0 || pu < 0)
        return (int)(pt < 0 ? pt : pu);
    p->period_type = (struct sc_value_type){(uint32_t)pt, (uint32_t)pu};
    p->period = pf->period;
    p->time_nanos = (int64_t)pf->time;
    p->duration_nanos = (int64_t)pf->duration;
    struct sc_pb_field f;
    uint32_t si = 0;
    while ((rc = sc_pb_next(&msg, &f)) > 0) {
        if (f.num != 2)
            continue;
        if (f.wt != SC_WT_LEN)
            return FAIL(b, SC_EFORMAT, "sample %u is not a message", (unsigned)si);
        if ((rc = add_sample(b, f.payload, si++)))
            return rc;
    }
    if (!p->time_nanos)
        p->time_nanos = b->first_time;
    /* only empty stacks, locations without lines, no labels: readers index these arrays
     * all the same (as every other decoder leaves them) */
    if ((!p->sample_locs &&
         sc_grow_array(&p->sample_locs, &p->sample_locs_cap, 1, sizeof *p->sample_locs)) ||
        (!p->lines && sc_grow_array(&p->lines, &p->lines_cap, 1, sizeof *p->lines)) ||
        (!p->labels && sc_grow_array(&p->labels, &p->labels_cap, 1, sizeof *p->labels)))
        return oom(b);
    char why[SC_ERR_LEN];
    if (sc_profile_validate(p, why))
        return FAIL(b, SC_EFORMAT, "%s", why);
    return 0;
}

static void build_release(struct build *b)
{
    sc_map64_release(&b->fns);
    sc_map64_release(&b->locs);
    sc_map64_release(&b->maps);
    sc_map64_release(&b->stacks);
    sc_map64_release(&b->attrs);
    sc_map64_release(&b->links);
    free(b->stack_span);
    free(b->rl);
    free(b->link_rl);
    free(b->values);
    free(b->times);
    free(b->scratch);
}

int sc_otlp_build(struct sc_otlp_req *r, uint32_t i, struct sc_otlp_profile *o, char *err)
{
    memset(o, 0, sizeof *o);
    sc_labels_init(&o->labels);
    if (i >= r->nprofiles)
        return sc_errf(err, SC_EINVAL, "no profile %u", (unsigned)i);
    struct build b = {.r = r, .index = i, .err = err};
    const struct prof_ref *pr = &r->profiles[i];
    struct prof_fields pf;
    int rc = read_profile(&b, pr->msg, &pf);
    if (!rc)
        rc = series_labels(&b, pr, &o->labels);
    int pprof = pf.format.len == 5 && !strncasecmp(pf.format.ptr, "pprof", 5) &&
                pf.payload.end > pf.payload.p;
    if (!rc && pprof) {
        rc = from_pprof(&b, &pf, o);
    } else if (!rc && !pf.nsamples && pf.format.len) {
        rc = FAIL(&b, SC_EUNSUPPORTED,
                  "original_payload_format '%.*s' is not supported (pprof is) and the profile "
                  "has no samples",
                  (int)(pf.format.len < 32 ? pf.format.len : 32), pf.format.ptr);
    } else if (!rc) {
        b.p = o->p = sc_profile_new();
        rc = o->p ? from_samples(&b, pr->msg, &pf) : oom(&b);
    }
    build_release(&b);
    if (rc)
        sc_otlp_profile_release(o);
    return rc;
}

void sc_otlp_profile_release(struct sc_otlp_profile *o)
{
    sc_profile_free(o->p);
    o->p = NULL;
    sc_labels_release(&o->labels);
    sc_labels_init(&o->labels);
}
