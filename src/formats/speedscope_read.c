/* speedscope_read.c - speedscope JSON files read back: sampled and evented profiles. */
#include "formats/frametab.h"
#include "formats/pbjson.h"
#include "formats/protowire.h"
#include "formats/speedscope.h"
#include "model/budget.h"
#include "model/error.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The JSON is transcoded to protobuf wire bytes by pbjson (the project's one JSON reader)
 * with this schema, then read with protowire.h. Field numbers are ours. */
enum { FILE_SHARED = 1, FILE_PROFILES = 2, FILE_NAME = 3, FILE_ACTIVE = 4, FILE_EXPORTER = 5 };
enum { SHARED_FRAMES = 1 };
enum { FRAME_NAME = 1, FRAME_FILE = 2, FRAME_LINE = 3, FRAME_COL = 4 };
enum {
    PROF_TYPE = 1,
    PROF_NAME = 2,
    PROF_UNIT = 3,
    PROF_EVENTS = 6,
    PROF_SAMPLES = 7,
    PROF_WEIGHTS = 8
};
enum { EV_TYPE = 1, EV_AT = 2, EV_FRAME = 3 };
enum { STACK_FRAMES = 1 };

#define COUNT(a) (uint32_t)(sizeof(a) / sizeof((a)[0]))
static const struct sc_pbj_field frame_f[] = {
    {"name", FRAME_NAME, SC_PBJ_STRING, 0, NULL},
    {"file", FRAME_FILE, SC_PBJ_STRING, 0, NULL},
    {"line", FRAME_LINE, SC_PBJ_DOUBLE, 0, NULL},
    {"col", FRAME_COL, SC_PBJ_DOUBLE, 0, NULL},
};
static const struct sc_pbj_msg frame_m = {frame_f, COUNT(frame_f)};
static const struct sc_pbj_field shared_f[] = {
    {"frames", SHARED_FRAMES, SC_PBJ_MESSAGE, 1, &frame_m}};
static const struct sc_pbj_msg shared_m = {shared_f, COUNT(shared_f)};
static const struct sc_pbj_field event_f[] = {
    {"type", EV_TYPE, SC_PBJ_STRING, 0, NULL},
    {"at", EV_AT, SC_PBJ_DOUBLE, 0, NULL},
    {"frame", EV_FRAME, SC_PBJ_UINT, 0, NULL},
};
static const struct sc_pbj_msg event_m = {event_f, COUNT(event_f)};
static const struct sc_pbj_field stack_f[] = {{"frames", STACK_FRAMES, SC_PBJ_UINT, 1, NULL}};
static const struct sc_pbj_msg stack_m = {stack_f, COUNT(stack_f)};
static const struct sc_pbj_field profile_f[] = {
    {"type", PROF_TYPE, SC_PBJ_STRING, 0, NULL},
    {"name", PROF_NAME, SC_PBJ_STRING, 0, NULL},
    {"unit", PROF_UNIT, SC_PBJ_STRING, 0, NULL},
    {"events", PROF_EVENTS, SC_PBJ_MESSAGE, 1, &event_m},
    {"samples", PROF_SAMPLES, SC_PBJ_ARRAY, 1, &stack_m},
    {"weights", PROF_WEIGHTS, SC_PBJ_DOUBLE, 1, NULL},
};
static const struct sc_pbj_msg profile_m = {profile_f, COUNT(profile_f)};
static const struct sc_pbj_field file_f[] = {
    {"shared", FILE_SHARED, SC_PBJ_MESSAGE, 0, &shared_m},
    {"profiles", FILE_PROFILES, SC_PBJ_MESSAGE, 1, &profile_m},
    {"name", FILE_NAME, SC_PBJ_STRING, 0, NULL},
    {"active_profile_index", FILE_ACTIVE, SC_PBJ_INT, 0, NULL},
    {"exporter", FILE_EXPORTER, SC_PBJ_STRING, 0, NULL},
};
static const struct sc_pbj_msg file_m = {file_f, COUNT(file_f)};

struct rd {
    struct sc_profile *p;
    const struct sc_limits *lim;
    struct sc_frametab tab;
    struct sc_pb_rd *frames; /* shared.frames, each frame's wire bytes */
    int64_t *frame_loc;      /* frame -> location, -1 = not made yet */
    uint32_t nframes, frames_cap;
    uint32_t *stack; /* a sample's locations, leaf first */
    uint32_t stack_cap;
    int64_t *vals;
    double *weights;
    uint32_t nweights, weights_cap;
    size_t input_len; /* bounds the frames stacks may hold */
    char *err;
};

static int malformed(char *err)
{
    return sc_errf(err, SC_EFORMAT, "malformed speedscope file");
}

static int64_t whole(double v)
{
    if (!(v == v) || v >= 9.2e18 || v <= -9.2e18)
        return 0;
    return (int64_t)llround(v);
}

static double as_double(const struct sc_pb_field *f)
{
    double d = 0;
    if (f->wt == SC_WT_I64)
        memcpy(&d, &f->v, 8);
    return d;
}

static int str_is(struct sc_pb_rd s, const char *w)
{
    size_t n = strlen(w);
    return (size_t)(s.end - s.p) == n && !memcmp(s.p, w, n);
}

/* The location of frame i, made on first use. */
static int64_t frame_location(struct rd *r, uint64_t i)
{
    if (i >= r->nframes)
        return sc_errf(r->err, SC_EFORMAT, "frame %llu is not in shared.frames (%u frames)",
                       (unsigned long long)i, (unsigned)r->nframes);
    if (r->frame_loc[i] >= 0)
        return r->frame_loc[i];
    struct sc_pb_rd m = r->frames[i], name = {NULL, NULL}, file = {NULL, NULL};
    struct sc_pb_field f;
    int64_t line = 0, col = 0;
    int k;
    while ((k = sc_pb_next(&m, &f)) > 0) {
        if (f.num == FRAME_NAME && f.wt == SC_WT_LEN)
            name = f.payload;
        else if (f.num == FRAME_FILE && f.wt == SC_WT_LEN)
            file = f.payload;
        else if (f.num == FRAME_LINE)
            line = whole(as_double(&f));
        else if (f.num == FRAME_COL)
            col = whole(as_double(&f));
    }
    if (k < 0)
        return malformed(r->err);
    int64_t li = sc_frametab_location(&r->tab, (const char *)name.p, (size_t)(name.end - name.p),
                                      (const char *)file.p, (size_t)(file.end - file.p),
                                      line > 0 ? line : 0, col > 0 ? col : 0, r->err);
    if (li >= 0)
        r->frame_loc[i] = li;
    return li;
}

/* Appends the sample of the n frames of r->stack (leaf first) with value v of type t. */
static int add(struct rd *r, uint32_t n, uint32_t t, int64_t v)
{
    struct sc_profile *p = r->p;
    if (v == 0 || n == 0)
        return 0;
    if (p->nsamples >= r->lim->max_samples)
        return sc_errf(r->err, SC_ELIMIT, "more than %u samples (limits.max_samples)",
                       (unsigned)r->lim->max_samples);
    int rc = sc_frametab_check_frames(p, n, r->input_len, r->err);
    if (rc)
        return rc;
    memset(r->vals, 0, p->nsample_types * sizeof *r->vals);
    r->vals[t] = v;
    int64_t si = sc_profile_add_sample(p, r->stack, n, r->vals, 0);
    if (si < 0)
        return sc_errf(r->err, (int)si, "out of memory");
    return sc_budget_poll_every(p->nsamples, r->err);
}

static int stack_room(struct rd *r, uint64_t n)
{
    if (n > r->lim->max_stack_depth)
        return sc_limits_depth(r->lim, n, "a sample's stack", r->err);
    if (sc_grow_array(&r->stack, &r->stack_cap, n, sizeof *r->stack))
        return sc_errf(r->err, SC_ENOMEM, "out of memory");
    return 0;
}

/* A sampled profile: stacks root first, weights beside them. */
static int read_sampled(struct rd *r, struct sc_pb_rd m, uint32_t t, double scale)
{
    struct sc_pb_field f;
    int k;
    r->nweights = 0;
    struct sc_pb_rd w = m;
    while ((k = sc_pb_next(&w, &f)) > 0) {
        if (f.num != PROF_WEIGHTS)
            continue;
        if (sc_grow_array(&r->weights, &r->weights_cap, (uint64_t)r->nweights + 1,
                          sizeof *r->weights))
            return sc_errf(r->err, SC_ENOMEM, "out of memory");
        r->weights[r->nweights++] = as_double(&f);
    }
    if (k < 0)
        return malformed(r->err);
    uint32_t s = 0;
    while ((k = sc_pb_next(&m, &f)) > 0) {
        if (f.num != PROF_SAMPLES || f.wt != SC_WT_LEN)
            continue;
        /* the frames (root first), counted first, then written leaf first */
        struct sc_pb_rd st = f.payload, c = st;
        uint64_t n = 0;
        while ((k = sc_pb_next(&c, &f)) > 0)
            if (f.num == STACK_FRAMES)
                SC_PB_FOR_EACH_VARINT(&f, v, (void)v; n++, return malformed(r->err));
        if (k < 0)
            return malformed(r->err);
        int rc = stack_room(r, n);
        uint32_t j = (uint32_t)n;
        while (!rc && (k = sc_pb_next(&st, &f)) > 0) {
            if (f.num != STACK_FRAMES)
                continue;
            SC_PB_FOR_EACH_VARINT(
                &f, v,
                {
                    int64_t li = frame_location(r, v);
                    if (li < 0)
                        return (int)li;
                    r->stack[--j] = (uint32_t)li;
                },
                return malformed(r->err));
        }
        double wt = s < r->nweights ? r->weights[s] : 1;
        s++;
        if (!rc)
            rc = add(r, (uint32_t)n, t, whole(wt * scale));
        if (rc)
            return rc;
    }
    return k < 0 ? malformed(r->err) : 0;
}

/* An evented profile: frames opened and closed at times; each stretch between two events
 * with frames open is a sample of them. */
static int read_evented(struct rd *r, struct sc_pb_rd m, uint32_t t, double scale)
{
    struct sc_pb_field f;
    int k, rc = 0;
    uint32_t depth = 0; /* open frames, as locations root first in r->stack's tail... */
    uint32_t *open = NULL, open_cap = 0;
    double last = 0;
    while (!rc && (k = sc_pb_next(&m, &f)) > 0) {
        if (f.num != PROF_EVENTS || f.wt != SC_WT_LEN)
            continue;
        struct sc_pb_rd e = f.payload, type = {NULL, NULL};
        double at = 0;
        uint64_t frame = 0;
        while ((k = sc_pb_next(&e, &f)) > 0) {
            if (f.num == EV_TYPE && f.wt == SC_WT_LEN)
                type = f.payload;
            else if (f.num == EV_AT)
                at = as_double(&f);
            else if (f.num == EV_FRAME && f.wt == SC_WT_VARINT)
                frame = f.v;
        }
        if (k < 0)
            break;
        if (depth && at > last) {
            /* the open frames, leaf first */
            if (!(rc = stack_room(r, depth))) {
                for (uint32_t i = 0; i < depth; i++)
                    r->stack[i] = open[depth - 1 - i];
                rc = add(r, depth, t, whole((at - last) * scale));
            }
        }
        last = at;
        int64_t li = rc ? 0 : frame_location(r, frame);
        if (!rc && li < 0)
            rc = (int)li;
        if (rc)
            break;
        if (str_is(type, "O")) {
            if (depth >= r->lim->max_stack_depth) {
                rc = sc_limits_depth(r->lim, (uint64_t)depth + 1, "a sample's stack", r->err);
            } else if (sc_grow_array(&open, &open_cap, (uint64_t)depth + 1, sizeof *open)) {
                rc = sc_errf(r->err, SC_ENOMEM, "out of memory");
            } else {
                open[depth++] = (uint32_t)li;
            }
        } else if (str_is(type, "C")) {
            if (!depth || open[depth - 1] != (uint32_t)li)
                rc = sc_errf(r->err, SC_EFORMAT,
                             "an event closes frame %llu, which is not the innermost open one",
                             (unsigned long long)frame);
            else
                depth--;
        } else {
            rc = sc_errf(r->err, SC_EFORMAT, "an event of type '%.*s' (not O or C)",
                         (int)(type.end - type.p < 16 ? type.end - type.p : 16),
                         type.p ? (const char *)type.p : "");
        }
    }
    free(open);
    if (!rc && k < 0)
        rc = malformed(r->err);
    return rc;
}

/* What a profile's unit becomes in a file of another exporter: the sample type and the
 * factor its weights are multiplied by. */
static void unit_type(struct sc_pb_rd u, const char **type, const char **unit, double *scale)
{
    static const struct {
        const char *name, *type, *unit;
        double scale;
    } units[] = {
        {"nanoseconds", "time", "nanoseconds", 1},
        {"microseconds", "time", "nanoseconds", 1e3},
        {"milliseconds", "time", "nanoseconds", 1e6},
        {"seconds", "time", "nanoseconds", 1e9},
        {"bytes", "space", "bytes", 1},
    };
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
        if (str_is(u, units[i].name)) {
            *type = units[i].type, *unit = units[i].unit, *scale = units[i].scale;
            return;
        }
    *type = "samples", *unit = "count", *scale = 1;
}

/* The sample type of profile m in a file scorch wrote: its name without the file's
 * "<name> (" ... ")", its unit with "none" as "count". Strings into the arena. */
static int scorch_type(struct rd *r, struct sc_pb_rd m, struct sc_pb_rd fname, int *ti)
{
    struct sc_pb_rd name = {NULL, NULL}, unit = {NULL, NULL};
    struct sc_pb_field f;
    int k;
    while ((k = sc_pb_next(&m, &f)) > 0) {
        if (f.num == PROF_NAME && f.wt == SC_WT_LEN)
            name = f.payload;
        else if (f.num == PROF_UNIT && f.wt == SC_WT_LEN)
            unit = f.payload;
    }
    if (k < 0)
        return malformed(r->err);
    size_t fl = (size_t)(fname.end - fname.p), nl = (size_t)(name.end - name.p);
    if (fl && nl > fl + 3 && !memcmp(name.p, fname.p, fl) && name.p[fl] == ' ' &&
        name.p[fl + 1] == '(' && name.end[-1] == ')')
        name.p += fl + 2, name.end--;
    if ((size_t)(name.end - name.p) > r->lim->max_string)
        return sc_limits_string(r->lim, (size_t)(name.end - name.p), "a profile's name", r->err);
    if ((size_t)(unit.end - unit.p) > r->lim->max_string)
        return sc_limits_string(r->lim, (size_t)(unit.end - unit.p), "a profile's unit", r->err);
    char *t = strndup(name.p ? (const char *)name.p : "", (size_t)(name.end - name.p));
    char *u = str_is(unit, "none") || !unit.p
                  ? strdup("count")
                  : strndup((const char *)unit.p, (size_t)(unit.end - unit.p));
    int rc = t && u ? sc_profile_add_sample_type(r->p, t, u) : SC_ENOMEM;
    free(t);
    free(u);
    if (rc < 0)
        return sc_errf(r->err, rc, "out of memory");
    *ti = rc;
    return 0;
}

int sc_speedscope_detect(const void *buf, size_t n)
{
    if (!buf)
        return 0;
    const char *end = (const char *)buf + n, *s = sc_pbjson_skip_ws(buf, end);
    if (s == end || *s != '{')
        return 0;
    size_t head = (size_t)(end - s) < 65536 ? (size_t)(end - s) : 65536;
    if (memmem(s, head, "speedscope.app/file-format-schema.json", 38))
        return 1;
    return memmem(s, head, "\"shared\"", 8) && memmem(s, head, "\"frames\"", 8) &&
           memmem(s, head, "\"profiles\"", 10);
}

int sc_speedscope_decode(const void *buf, size_t n, const struct sc_limits *lim,
                         struct sc_profile *p, char *err)
{
    struct rd r;
    memset(&r, 0, sizeof r);
    r.p = p;
    r.lim = lim;
    r.err = err;
    r.input_len = n;
    sc_frametab_init(&r.tab, p, lim);
    struct sc_buf wire = SC_BUF_INIT;
    uint32_t *ptype = NULL; /* profile -> sample type */
    double *pscale = NULL;  /* profile -> weight factor */
    struct sc_pb_rd *profs = NULL;
    uint32_t nprofs = 0, profs_cap = 0;
    struct sc_pb_rd fname = {NULL, NULL}, exporter = {NULL, NULL};
    int64_t active = 0;
    if (!buf)
        buf = "", n = 0;
    int rc = sc_pbjson_transcode(buf, n, &file_m, lim->max_decompressed, &wire, err);
    struct sc_pb_rd root = {NULL, NULL};
    if (wire.data)
        root = (struct sc_pb_rd){(const uint8_t *)wire.data, (const uint8_t *)wire.data + wire.len};
    struct sc_pb_field f;
    int k = 0;
    while (!rc && (k = sc_pb_next(&root, &f)) > 0) {
        if (f.num == FILE_SHARED && f.wt == SC_WT_LEN) {
            struct sc_pb_rd sh = f.payload;
            while (!rc && (k = sc_pb_next(&sh, &f)) > 0) {
                if (f.num != SHARED_FRAMES || f.wt != SC_WT_LEN)
                    continue;
                if (r.nframes >= lim->max_locations)
                    rc = sc_errf(err, SC_ELIMIT, "more than %u frames",
                                 (unsigned)lim->max_locations);
                else if (sc_grow_array(&r.frames, &r.frames_cap, (uint64_t)r.nframes + 1,
                                       sizeof *r.frames))
                    rc = sc_errf(err, SC_ENOMEM, "out of memory");
                else
                    r.frames[r.nframes++] = f.payload;
            }
            if (k < 0)
                break;
        } else if (f.num == FILE_PROFILES && f.wt == SC_WT_LEN) {
            if (sc_grow_array(&profs, &profs_cap, (uint64_t)nprofs + 1, sizeof *profs))
                rc = sc_errf(err, SC_ENOMEM, "out of memory");
            else
                profs[nprofs++] = f.payload;
        } else if (f.num == FILE_NAME && f.wt == SC_WT_LEN) {
            fname = f.payload;
        } else if (f.num == FILE_EXPORTER && f.wt == SC_WT_LEN) {
            exporter = f.payload;
        } else if (f.num == FILE_ACTIVE && f.wt == SC_WT_VARINT) {
            active = (int64_t)f.v;
        }
    }
    if (!rc && k < 0)
        rc = malformed(err);
    if (!rc && nprofs == 0)
        rc = sc_errf(err, SC_EFORMAT, "a speedscope file without profiles");
    if (!rc) {
        r.frame_loc = malloc(((size_t)r.nframes + 1) * sizeof *r.frame_loc);
        ptype = malloc((size_t)nprofs * sizeof *ptype);
        pscale = malloc((size_t)nprofs * sizeof *pscale);
        if (!r.frame_loc || !ptype || !pscale)
            rc = sc_errf(err, SC_ENOMEM, "out of memory");
        else
            memset(r.frame_loc, 0xff, ((size_t)r.nframes + 1) * sizeof *r.frame_loc);
    }
    /* the sample types first: the model lays values out per type */
    int ours = (size_t)(exporter.end - exporter.p) >= 6 && !memcmp(exporter.p, "scorch", 6);
    for (uint32_t i = 0; !rc && i < nprofs; i++) {
        int ti = 0;
        pscale[i] = 1;
        if (ours) {
            rc = scorch_type(&r, profs[i], fname, &ti);
        } else {
            struct sc_pb_rd m = profs[i], unit = {NULL, NULL};
            while ((k = sc_pb_next(&m, &f)) > 0)
                if (f.num == PROF_UNIT && f.wt == SC_WT_LEN)
                    unit = f.payload;
            const char *type, *u;
            unit_type(unit, &type, &u, &pscale[i]);
            if (k < 0)
                rc = malformed(err);
            for (ti = 0; !rc && (uint32_t)ti < p->nsample_types; ti++) {
                struct sc_str have = sc_profile_str(p, p->sample_types[ti].type);
                if (have.len == strlen(type) && !memcmp(have.ptr, type, have.len))
                    break;
            }
            if (!rc && (uint32_t)ti == p->nsample_types &&
                (ti = sc_profile_add_sample_type(p, type, u)) < 0)
                rc = sc_errf(err, ti, "out of memory");
        }
        ptype[i] = (uint32_t)ti;
    }
    if (!rc && !(r.vals = calloc(p->nsample_types, sizeof *r.vals)))
        rc = sc_errf(err, SC_ENOMEM, "out of memory");
    for (uint32_t i = 0; !rc && i < nprofs; i++) {
        struct sc_pb_rd m = profs[i], type = {NULL, NULL};
        while ((k = sc_pb_next(&m, &f)) > 0)
            if (f.num == PROF_TYPE && f.wt == SC_WT_LEN)
                type = f.payload;
        if (k < 0)
            rc = malformed(err);
        else if (str_is(type, "evented"))
            rc = read_evented(&r, profs[i], ptype[i], pscale[i]);
        else if (str_is(type, "sampled"))
            rc = read_sampled(&r, profs[i], ptype[i], pscale[i]);
        else
            rc = sc_errf(err, SC_EFORMAT, "profile %u is of type '%.*s' (not sampled or evented)",
                         i, (int)(type.end - type.p < 16 ? type.end - type.p : 16),
                         type.p ? (const char *)type.p : "");
    }
    if (!rc && active >= 0 && (uint64_t)active < nprofs)
        p->default_sample_type = p->sample_types[ptype[active]].type;
    if (!rc)
        rc = sc_profile_validate(p, err);
    free(r.frames);
    free(r.frame_loc);
    free(r.stack);
    free(r.vals);
    free(r.weights);
    free(ptype);
    free(pscale);
    free(profs);
    sc_frametab_release(&r.tab);
    sc_buf_release(&wire);
    return rc;
}
