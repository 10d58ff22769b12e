/* cpuprofile.c - V8's .cpuprofile JSON and Chrome's trace events with CPU profile chunks. */
#include "formats/cpuprofile.h"
#include "formats/frametab.h"
#include "formats/pbjson.h"
#include "formats/protowire.h"
#include "model/budget.h"
#include "model/error.h"

#include <stdlib.h>
#include <string.h>

/* The JSON is transcoded to protobuf wire bytes by pbjson (the project's one JSON reader)
 * with this schema, then read with protowire.h. Field numbers are ours. */
enum {
    PROF_NODES = 1,
    PROF_START = 2,
    PROF_END = 3,
    PROF_SAMPLES = 4,
    PROF_DELTAS = 5,
    PROF_EVENTS = 6
};
enum { NODE_ID = 1, NODE_FRAME = 2, NODE_HITS = 3, NODE_CHILDREN = 4, NODE_PARENT = 5 };
enum { FRAME_NAME = 1, FRAME_URL = 2, FRAME_LINE = 3, FRAME_COLUMN = 4 };
enum { EV_NAME = 1, EV_PID = 2, EV_TID = 3, EV_ARGS = 4 };
enum { ARGS_DATA = 1 };
enum { DATA_START = 1, DATA_PROFILE = 2, DATA_DELTAS = 3 };

#define COUNT(a) (uint32_t)(sizeof(a) / sizeof((a)[0]))
static const struct sc_pbj_field call_frame_f[] = {
    {"function_name", FRAME_NAME, SC_PBJ_STRING, 0, NULL},
    {"url", FRAME_URL, SC_PBJ_STRING, 0, NULL},
    {"line_number", FRAME_LINE, SC_PBJ_INT, 0, NULL},
    {"column_number", FRAME_COLUMN, SC_PBJ_INT, 0, NULL},
};
static const struct sc_pbj_msg call_frame_m = {call_frame_f, COUNT(call_frame_f)};
static const struct sc_pbj_field node_f[] = {
    {"id", NODE_ID, SC_PBJ_INT, 0, NULL},
    {"call_frame", NODE_FRAME, SC_PBJ_MESSAGE, 0, &call_frame_m},
    {"hit_count", NODE_HITS, SC_PBJ_INT, 0, NULL},
    {"children", NODE_CHILDREN, SC_PBJ_INT, 1, NULL},
    {"parent", NODE_PARENT, SC_PBJ_INT, 0, NULL},
};
static const struct sc_pbj_msg node_m = {node_f, COUNT(node_f)};
/* a chunk's cpuProfile has the profile's fields (nodes, samples) */
static const struct sc_pbj_field chunk_profile_f[] = {
    {"nodes", PROF_NODES, SC_PBJ_MESSAGE, 1, &node_m},
    {"samples", PROF_SAMPLES, SC_PBJ_INT, 1, NULL},
};
static const struct sc_pbj_msg chunk_profile_m = {chunk_profile_f, COUNT(chunk_profile_f)};
/* Other events' args.data hold anything: only fields no other event is known to use, and
 * a start time that may be a fraction elsewhere */
static const struct sc_pbj_field data_f[] = {
    {"start_time", DATA_START, SC_PBJ_DOUBLE, 0, NULL},
    {"cpu_profile", DATA_PROFILE, SC_PBJ_MESSAGE, 0, &chunk_profile_m},
    {"time_deltas", DATA_DELTAS, SC_PBJ_INT, 1, NULL},
};
static const struct sc_pbj_msg data_m = {data_f, COUNT(data_f)};
static const struct sc_pbj_field args_f[] = {{"data", ARGS_DATA, SC_PBJ_MESSAGE, 0, &data_m}};
static const struct sc_pbj_msg args_m = {args_f, COUNT(args_f)};
static const struct sc_pbj_field event_f[] = {
    {"name", EV_NAME, SC_PBJ_STRING, 0, NULL},
    {"pid", EV_PID, SC_PBJ_INT, 0, NULL},
    {"tid", EV_TID, SC_PBJ_INT, 0, NULL},
    {"args", EV_ARGS, SC_PBJ_MESSAGE, 0, &args_m},
};
static const struct sc_pbj_msg event_m = {event_f, COUNT(event_f)};
static const struct sc_pbj_field profile_f[] = {
    {"nodes", PROF_NODES, SC_PBJ_MESSAGE, 1, &node_m},
    {"start_time", PROF_START, SC_PBJ_INT, 0, NULL},
    {"end_time", PROF_END, SC_PBJ_INT, 0, NULL},
    {"samples", PROF_SAMPLES, SC_PBJ_INT, 1, NULL},
    {"time_deltas", PROF_DELTAS, SC_PBJ_INT, 1, NULL},
    {"trace_events", PROF_EVENTS, SC_PBJ_MESSAGE, 1, &event_m},
};
static const struct sc_pbj_msg profile_m = {profile_f, COUNT(profile_f)};

struct node {
    uint64_t id;
    struct sc_pb_rd msg; /* the node's wire bytes */
    uint32_t parent;     /* node index + 1, 0 = none */
    int64_t loc;         /* location index, -1 = not made yet */
    int64_t hits;
    uint32_t stack_start, stack_len; /* its stack in sample_locs, once a sample used it */
    uint8_t has_stack, is_root;
};

/* One profile: a .cpuprofile, or the chunks of one thread of a trace. */
struct prof {
    int64_t pid, tid;
    struct node *nodes;
    uint32_t nnodes, nodes_cap;
    int64_t *samples, *deltas;
    uint32_t nsamples, samples_cap, ndeltas, deltas_cap;
    int64_t start, end;
    int has_start, has_end;
};

struct dec {
    struct sc_profile *p;
    const struct sc_limits *lim;
    struct sc_frametab frames;
    struct sc_map64 ids; /* node id -> index, per profile */
    uint32_t *stack;
    uint32_t stack_cap;
    int64_t sum_deltas, nsamples_all, span;
    size_t input_len; /* bounds the frames stacks may hold */
    char *err;
};

static void prof_release(struct prof *x)
{
    free(x->nodes);
    free(x->samples);
    free(x->deltas);
    memset(x, 0, sizeof *x);
}

static int malformed(char *err)
{
    return sc_errf(err, SC_EFORMAT, "malformed profile");
}

static int push_i64(int64_t **a, uint32_t *n, uint32_t *cap, int64_t v, uint32_t max, char *err)
{
    if (*n >= max)
        return sc_errf(err, SC_ELIMIT, "more than %u samples (limits.max_samples)", (unsigned)max);
    if (sc_grow_array(a, cap, (uint64_t)*n + 1, sizeof **a))
        return sc_errf(err, SC_ENOMEM, "out of memory");
    (*a)[(*n)++] = v;
    return 0;
}

static int add_node(struct dec *d, struct prof *x, struct sc_pb_rd msg)
{
    if (x->nnodes >= d->lim->max_locations)
        return sc_errf(d->err, SC_ELIMIT, "more than %u nodes", (unsigned)d->lim->max_locations);
    if (sc_grow_array(&x->nodes, &x->nodes_cap, (uint64_t)x->nnodes + 1, sizeof *x->nodes))
        return sc_errf(d->err, SC_ENOMEM, "out of memory");
    struct node *nd = &x->nodes[x->nnodes++];
    memset(nd, 0, sizeof *nd);
    nd->msg = msg;
    nd->loc = -1;
    struct sc_pb_field f;
    int k;
    int has_id = 0;
    while ((k = sc_pb_next(&msg, &f)) > 0) {
        if (f.num == NODE_ID && f.wt == SC_WT_VARINT)
            nd->id = f.v, has_id = 1;
        else if (f.num == NODE_HITS && f.wt == SC_WT_VARINT)
            nd->hits = (int64_t)f.v;
    }
    if (k < 0)
        return malformed(d->err);
    if (!has_id)
        return sc_errf(d->err, SC_EFORMAT, "a node without an id");
    return 0;
}

/* Reads a profile's fields (a .cpuprofile, or a trace chunk's cpuProfile) into x. */
static int read_profile(struct dec *d, struct sc_pb_rd r, struct prof *x)
{
    struct sc_pb_field f;
    int k = 0, rc = 0;
    while (!rc && (k = sc_pb_next(&r, &f)) > 0) {
        switch (f.num) {
        case PROF_NODES:
            rc = f.wt == SC_WT_LEN ? add_node(d, x, f.payload) : malformed(d->err);
            break;
        case PROF_START:
            x->start = (int64_t)f.v, x->has_start = 1;
            break;
        case PROF_END:
            x->end = (int64_t)f.v, x->has_end = 1;
            break;
        case PROF_SAMPLES:
            SC_PB_FOR_EACH_VARINT(
                &f, v,
                if ((rc = push_i64(&x->samples, &x->nsamples, &x->samples_cap, (int64_t)v,
                                   d->lim->max_samples, d->err))) break,
                return malformed(d->err));
            break;
        case PROF_DELTAS:
            SC_PB_FOR_EACH_VARINT(
                &f, v,
                if ((rc = push_i64(&x->deltas, &x->ndeltas, &x->deltas_cap, (int64_t)v,
                                   d->lim->max_samples, d->err))) break,
                return malformed(d->err));
            break;
        default:
            break;
        }
    }
    if (!rc && k < 0)
        rc = malformed(d->err);
    return rc;
}

/* The location of node i, made from its call frame on first use. */
static int64_t node_location(struct dec *d, struct prof *x, uint32_t i)
{
    struct node *nd = &x->nodes[i];
    if (nd->loc >= 0)
        return nd->loc;
    struct sc_pb_rd r = nd->msg, cf = {NULL, NULL};
    struct sc_pb_field f;
    int k;
    while ((k = sc_pb_next(&r, &f)) > 0)
        if (f.num == NODE_FRAME && f.wt == SC_WT_LEN)
            cf = f.payload;
    if (k < 0)
        return malformed(d->err);
    struct sc_pb_rd name = {NULL, NULL}, url = {NULL, NULL};
    int64_t line = -1, col = -1;
    while (cf.p && (k = sc_pb_next(&cf, &f)) > 0) {
        if (f.num == FRAME_NAME && f.wt == SC_WT_LEN)
            name = f.payload;
        else if (f.num == FRAME_URL && f.wt == SC_WT_LEN)
            url = f.payload;
        else if (f.num == FRAME_LINE && f.wt == SC_WT_VARINT)
            line = (int64_t)f.v;
        else if (f.num == FRAME_COLUMN && f.wt == SC_WT_VARINT)
            col = (int64_t)f.v;
    }
    if (k < 0)
        return malformed(d->err);
    const char *nm = (const char *)name.p;
    size_t nlen = (size_t)(name.end - name.p);
    if (!nlen)
        nm = "(anonymous)", nlen = 11;
    /* V8 counts lines and columns from 0 (-1: unknown); the model from 1 (0: unknown) */
    int64_t li =
        sc_frametab_location(&d->frames, nm, nlen, (const char *)url.p, (size_t)(url.end - url.p),
                             line >= 0 ? line + 1 : 0, col >= 0 ? col + 1 : 0, d->err);
    if (li >= 0)
        nd->loc = li;
    return li;
}

/* Node ids to indexes, the parents from children lists (or parent fields), the root. */
static int link_nodes(struct dec *d, struct prof *x)
{
    sc_map64_release(&d->ids);
    sc_map64_init(&d->ids);
    for (uint32_t i = 0; i < x->nnodes; i++) {
        int added;
        uint32_t *slot = sc_map64_upsert(&d->ids, x->nodes[i].id, i, &added);
        if (!slot)
            return sc_errf(d->err, SC_ENOMEM, "out of memory");
        if (!added)
            return sc_errf(d->err, SC_EFORMAT, "node id %llu twice",
                           (unsigned long long)x->nodes[i].id);
    }
    for (uint32_t i = 0; i < x->nnodes; i++) {
        struct sc_pb_rd r = x->nodes[i].msg;
        struct sc_pb_field f;
        int k;
        while ((k = sc_pb_next(&r, &f)) > 0) {
            if (f.num != NODE_CHILDREN && f.num != NODE_PARENT)
                continue;
            int parent = f.num == NODE_PARENT;
            SC_PB_FOR_EACH_VARINT(
                &f, v,
                {
                    uint32_t *o = sc_map64_get(&d->ids, v);
                    if (!o)
                        return sc_errf(d->err, SC_EFORMAT,
                                       "node %llu names node %llu, which "
                                       "is not in the profile",
                                       (unsigned long long)x->nodes[i].id, (unsigned long long)v);
                    if (parent)
                        x->nodes[i].parent = *o + 1;
                    else
                        x->nodes[*o].parent = i + 1;
                },
                return malformed(d->err));
        }
        if (k < 0)
            return malformed(d->err);
    }
    for (uint32_t i = 0; i < x->nnodes; i++) {
        if (x->nodes[i].parent)
            continue;
        int64_t li = node_location(d, x, i);
        if (li < 0)
            return (int)li;
        struct sc_str nm =
            sc_function_name(d->p, d->p->lines[d->p->locations[li].line_start].function - 1);
        x->nodes[i].is_root = nm.len == 6 && !memcmp(nm.ptr, "(root)", 6);
    }
    return 0;
}

/* Node i's stack, leaf first, in d->stack; its length, or SC_E*. */
static int64_t node_stack(struct dec *d, struct prof *x, uint32_t i)
{
    uint32_t n = 0;
    for (uint32_t j = i + 1; j; j = x->nodes[j - 1].parent) {
        if (x->nodes[j - 1].is_root && n)
            break;
        if (n >= d->lim->max_stack_depth || n >= x->nnodes) {
            if (n >= x->nnodes)
                return sc_errf(d->err, SC_EFORMAT, "node %llu is its own ancestor",
                               (unsigned long long)x->nodes[i].id);
            return sc_limits_depth(d->lim, (uint64_t)n + 1, "a sample's stack", d->err);
        }
        int64_t li = node_location(d, x, j - 1);
        if (li < 0)
            return li;
        if (sc_grow_array(&d->stack, &d->stack_cap, (uint64_t)n + 1, sizeof *d->stack))
            return sc_errf(d->err, SC_ENOMEM, "out of memory");
        d->stack[n++] = (uint32_t)li;
    }
    return n;
}

/* One sample on node i: its stack is made once, later samples share it. */
static int add_sample(struct dec *d, struct prof *x, uint32_t i, const int64_t *vals, int64_t t)
{
    struct sc_profile *p = d->p;
    if (p->nsamples >= d->lim->max_samples)
        return sc_errf(d->err, SC_ELIMIT, "more than %u samples (limits.max_samples)",
                       (unsigned)d->lim->max_samples);
    struct node *nd = &x->nodes[i];
    int64_t r;
    if (nd->has_stack) {
        r = sc_profile_add_sample_span(p, nd->stack_start, nd->stack_len, p->nlabels, 0, vals, t);
    } else {
        int64_t n = node_stack(d, x, i);
        if (n < 0)
            return (int)n;
        int rc = sc_frametab_check_frames(p, (uint64_t)n, d->input_len, d->err);
        if (rc)
            return rc;
        nd = &x->nodes[i];
        nd->stack_start = p->nsample_locs;
        nd->stack_len = (uint32_t)n;
        nd->has_stack = 1;
        r = sc_profile_add_sample(p, d->stack, (uint32_t)n, vals, t);
    }
    return r < 0 ? sc_errf(d->err, (int)r, "out of memory") : 0;
}

static int emit(struct dec *d, struct prof *x)
{
    int rc = link_nodes(d, x);
    if (rc)
        return rc;
    if (x->has_start && x->has_end && x->end > x->start)
        d->span = sc_add_sat(d->span, x->end - x->start);
    if (x->nsamples == 0) {
        /* no samples: DevTools' files of old, with hit counts only */
        int64_t hits = 0;
        for (uint32_t i = 0; i < x->nnodes; i++)
            hits = sc_add_sat(hits, x->nodes[i].hits > 0 ? x->nodes[i].hits : 0);
        int64_t us = x->has_start && x->has_end && x->end > x->start ? x->end - x->start : 0;
        for (uint32_t i = 0; !rc && i < x->nnodes; i++) {
            int64_t h = x->nodes[i].hits;
            if (h <= 0)
                continue;
            /* h * us / hits in ns, without the overflow of the product */
            int64_t ns = (int64_t)((double)h * (double)us / (double)hits * 1000.0);
            int64_t vals[2] = {h, ns};
            rc = add_sample(d, x, i, vals, 0);
            d->sum_deltas = sc_add_sat(d->sum_deltas, ns);
            d->nsamples_all = sc_add_sat(d->nsamples_all, h);
        }
        return rc;
    }
    int64_t t = x->start;
    for (uint32_t s = 0; !rc && s < x->nsamples; s++) {
        uint32_t *o = sc_map64_get(&d->ids, (uint64_t)x->samples[s]);
        if (!o)
            return sc_errf(d->err, SC_EFORMAT,
                           "sample %u is on node %lld, which is not in the "
                           "profile",
                           s, (long long)x->samples[s]);
        int64_t dt = s < x->ndeltas ? x->deltas[s] : 0;
        t = sc_add_sat(t, dt);
        int64_t ns = sc_mul_sat(dt > 0 ? dt : 0, 1000);
        int64_t vals[2] = {1, ns};
        rc = add_sample(d, x, *o, vals, sc_mul_sat(t, 1000));
        d->sum_deltas = sc_add_sat(d->sum_deltas, ns);
        d->nsamples_all++;
        if (!rc)
            rc = sc_budget_poll_every(s, d->err);
    }
    return rc;
}

/* A trace's profiles: the chunks of each thread in event order, that thread's "Profile"
 * event giving the start. */
static int read_trace(struct dec *d, const struct sc_pb_rd *root)
{
    struct prof *ps = NULL;
    uint32_t np = 0, cap = 0;
    int rc = 0, k = 0;
    struct sc_pb_rd r = *root;
    struct sc_pb_field f;
    while (!rc && (k = sc_pb_next(&r, &f)) > 0) {
        if (f.num != PROF_EVENTS || f.wt != SC_WT_LEN)
            continue;
        struct sc_pb_rd ev = f.payload, name = {NULL, NULL}, data = {NULL, NULL};
        int64_t pid = 0, tid = 0;
        while ((k = sc_pb_next(&ev, &f)) > 0) {
            if (f.num == EV_NAME && f.wt == SC_WT_LEN)
                name = f.payload;
            else if (f.num == EV_PID && f.wt == SC_WT_VARINT)
                pid = (int64_t)f.v;
            else if (f.num == EV_TID && f.wt == SC_WT_VARINT)
                tid = (int64_t)f.v;
            else if (f.num == EV_ARGS && f.wt == SC_WT_LEN) {
                struct sc_pb_rd a = f.payload;
                while ((k = sc_pb_next(&a, &f)) > 0)
                    if (f.num == ARGS_DATA && f.wt == SC_WT_LEN)
                        data = f.payload;
                if (k < 0)
                    break;
            }
        }
        if (k < 0)
            break;
        size_t nl = (size_t)(name.end - name.p);
        int chunk = nl == 12 && !memcmp(name.p, "ProfileChunk", 12);
        int head = nl == 7 && !memcmp(name.p, "Profile", 7);
        if ((!chunk && !head) || !data.p)
            continue;
        uint32_t i = 0;
        while (i < np && (ps[i].pid != pid || ps[i].tid != tid))
            i++;
        if (i == np) {
            if (sc_grow_array(&ps, &cap, (uint64_t)np + 1, sizeof *ps)) {
                rc = sc_errf(d->err, SC_ENOMEM, "out of memory");
                break;
            }
            memset(&ps[np], 0, sizeof *ps);
            ps[np].pid = pid, ps[np].tid = tid;
            np++;
        }
        struct prof *x = &ps[i];
        while (!rc && (k = sc_pb_next(&data, &f)) > 0) {
            if (f.num == DATA_START && f.wt == SC_WT_I64 && head) {
                double st;
                memcpy(&st, &f.v, 8);
                if (st == st && st > -9e18 && st < 9e18)
                    x->start = (int64_t)st, x->has_start = 1;
            } else if (f.num == DATA_PROFILE && f.wt == SC_WT_LEN) {
                rc = read_profile(d, f.payload, x);
            } else if (f.num == DATA_DELTAS) {
                SC_PB_FOR_EACH_VARINT(
                    &f, v,
                    if ((rc = push_i64(&x->deltas, &x->ndeltas, &x->deltas_cap, (int64_t)v,
                                       d->lim->max_samples, d->err))) break,
                    rc = malformed(d->err);
                    break);
            }
        }
        if (!rc && k < 0)
            rc = malformed(d->err);
    }
    if (!rc && k < 0)
        rc = malformed(d->err);
    for (uint32_t i = 0; !rc && i < np; i++)
        if (ps[i].nnodes)
            rc = emit(d, &ps[i]);
    for (uint32_t i = 0; i < np; i++)
        prof_release(&ps[i]);
    free(ps);
    if (!rc && d->p->nsamples == 0)
        rc = sc_errf(d->err, SC_EFORMAT, "a trace without CPU profile chunks");
    return rc;
}

int sc_cpuprofile_detect(const void *buf, size_t n)
{
    if (!buf)
        return 0;
    const char *s = sc_pbjson_skip_ws(buf, (const char *)buf + n);
    size_t left = (size_t)((const char *)buf + n - s);
    if (!left || (*s != '{' && *s != '['))
        return 0;
    /* a .cpuprofile opens with its nodes; a trace's chunks may come after megabytes of
     * other events (memmem runs at GB/s, and only for JSON) */
    size_t head = left < 65536 ? left : 65536, deep = left < (16u << 20) ? left : (16u << 20);
    if (*s == '{' && memmem(s, head, "\"nodes\"", 7) && memmem(s, head, "\"callFrame\"", 11))
        return 1;
    return memmem(s, deep, "\"ProfileChunk\"", 14) && memmem(s, deep, "\"cpuProfile\"", 12);
}

int sc_cpuprofile_decode(const void *buf, size_t n, const struct sc_limits *lim,
                         struct sc_profile *p, char *err)
{
    struct dec d;
    memset(&d, 0, sizeof d);
    d.p = p;
    d.lim = lim;
    d.err = err;
    d.input_len = n;
    sc_frametab_init(&d.frames, p, lim);
    sc_map64_init(&d.ids);
    struct sc_buf wire = SC_BUF_INIT;
    struct prof x;
    memset(&x, 0, sizeof x);
    if (!buf)
        buf = "", n = 0;
    const char *s = sc_pbjson_skip_ws(buf, (const char *)buf + n);
    size_t left = (size_t)((const char *)buf + n - s);
    int rc =
        left && *s == '['
            ? sc_pbjson_transcode_array(s, left, &profile_f[5], lim->max_decompressed, &wire, err)
            : sc_pbjson_transcode(s, left, &profile_m, lim->max_decompressed, &wire, err);
    if (!rc && (sc_profile_add_sample_type(p, "samples", "count") < 0 ||
                sc_profile_add_sample_type(p, "cpu", "nanoseconds") < 0))
        rc = sc_errf(err, SC_ENOMEM, "out of memory");
    struct sc_pb_rd root = {NULL, NULL};
    if (wire.data)
        root = (struct sc_pb_rd){(const uint8_t *)wire.data, (const uint8_t *)wire.data + wire.len};
    int trace = 0;
    if (!rc) {
        struct sc_pb_rd r = root;
        struct sc_pb_field f;
        int k;
        while ((k = sc_pb_next(&r, &f)) > 0)
            trace |= f.num == PROF_EVENTS;
        if (k < 0)
            rc = malformed(err);
    }
    if (!rc && trace) {
        rc = read_trace(&d, &root);
    } else if (!rc) {
        rc = read_profile(&d, root, &x);
        if (!rc && x.nnodes == 0)
            rc = sc_errf(err, SC_EFORMAT, "a profile without nodes");
        if (!rc)
            rc = emit(&d, &x);
    }
    if (!rc) {
        p->period_type = p->sample_types[1];
        p->period = d.nsamples_all ? d.sum_deltas / d.nsamples_all : 0;
        p->duration_nanos = sc_mul_sat(d.span, 1000);
        rc = sc_profile_validate(p, err);
    }
    prof_release(&x);
    sc_map64_release(&d.ids);
    sc_frametab_release(&d.frames);
    free(d.stack);
    sc_buf_release(&wire);
    if (wire.oom && !rc)
        rc = sc_errf(err, SC_ENOMEM, "out of memory");
    return rc;
}
