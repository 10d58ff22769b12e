/* speedscope.c - the speedscope JSON writer: shared frames, one sampled profile per type. */
#include "formats/speedscope.h"
#include "model/buf.h"
#include "model/arena.h"
#include "model/error.h"
#include "model/hash.h"
#include "model/json.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SCHEMA_URL "https://www.speedscope.app/file-format-schema.json"

struct frame {
    struct sc_str name, file;
    int64_t line; /* 0 = unknown */
};

struct writer {
    const struct sc_profile *p;
    struct frame *frames;
    uint32_t nframes, frames_cap;
    struct sc_map64 by_key; /* hash of (name, file) -> frame, collisions probed */
    uint32_t *fn_frame;     /* function index -> frame + 1, 0 = not yet */
    /* Each location's frames, root first, computed on first use: most locations occur in
     * many samples, so a sample costs one copy per location. location index -> span of
     * loc_frames; a loc_len of UINT32_MAX means not computed yet. */
    uint32_t *loc_start, *loc_len;
    uint32_t *loc_frames;
    uint32_t nloc_frames, loc_frames_cap;
    struct sc_arena arena; /* names of address-only frames */
};

/* The frame index of (name, file), created with line when new. Index >= 0 or SC_E*. */
static int64_t frame_of(struct writer *w, struct sc_str name, struct sc_str file, int64_t line)
{
    uint64_t h = sc_hash_combine(sc_hash64(name.ptr, name.len), sc_hash64(file.ptr, file.len));
    for (;;) {
        int added;
        uint32_t *slot = sc_map64_upsert(&w->by_key, h, w->nframes, &added);
        if (!slot)
            return SC_ENOMEM;
        if (!added) {
            const struct frame *f = &w->frames[*slot];
            if (f->name.len == name.len && f->file.len == file.len &&
                memcmp(f->name.ptr, name.ptr, name.len) == 0 &&
                memcmp(f->file.ptr, file.ptr, file.len) == 0)
                return *slot;
            h++; /* a different frame with the same 64-bit hash: probe on */
            continue;
        }
        int rc =
            sc_grow_array(&w->frames, &w->frames_cap, (uint64_t)w->nframes + 1, sizeof *w->frames);
        if (rc)
            return rc;
        struct frame *f = &w->frames[w->nframes];
        f->name = name;
        f->file = file;
        f->line = line > 0 ? line : 0;
        return w->nframes++;
    }
}

static int64_t function_frame(struct writer *w, uint32_t fn)
{
    if (w->fn_frame[fn])
        return w->fn_frame[fn] - 1;
    const struct sc_function *f = &w->p->functions[fn];
    int64_t id =
        frame_of(w, sc_function_name(w->p, fn), sc_profile_str(w->p, f->filename), f->start_line);
    if (id >= 0)
        w->fn_frame[fn] = (uint32_t)id + 1;
    return id;
}

/* A location without symbols: its address in hex (the flame graph's name) in its binary. */
static int64_t address_frame(struct writer *w, const struct sc_location *l)
{
    char tmp[SC_ADDR_NAME_LEN];
    uint32_t len = sc_address_name(l->address, tmp);
    char *name = sc_arena_strndup(&w->arena, tmp, (size_t)len);
    if (!name)
        return SC_ENOMEM;
    struct sc_str file = {"", 0};
    if (l->mapping)
        file = sc_profile_str(w->p, w->p->mappings[l->mapping - 1].filename);
    return frame_of(w, (struct sc_str){name, (uint32_t)len}, file, 0);
}

/* Fills location li's span of loc_frames: lines are innermost first, frames root first. */
static int location_frames(struct writer *w, uint32_t li)
{
    if (w->loc_len[li] != UINT32_MAX)
        return 0;
    const struct sc_location *l = &w->p->locations[li];
    uint32_t n = l->nlines ? l->nlines : 1;
    int rc = sc_grow_array(&w->loc_frames, &w->loc_frames_cap, (uint64_t)w->nloc_frames + n,
                           sizeof *w->loc_frames);
    if (rc)
        return rc;
    uint32_t start = w->nloc_frames;
    if (l->nlines == 0) {
        int64_t id = address_frame(w, l);
        if (id < 0)
            return (int)id;
        w->loc_frames[w->nloc_frames++] = (uint32_t)id;
    }
    const struct sc_line *lines = sc_location_lines(w->p, l);
    for (uint32_t j = l->nlines; j-- > 0;) {
        int64_t id =
            lines[j].function ? function_frame(w, lines[j].function - 1) : address_frame(w, l);
        if (id < 0)
            return (int)id;
        w->loc_frames[w->nloc_frames++] = (uint32_t)id;
    }
    w->loc_start[li] = start;
    w->loc_len[li] = w->nloc_frames - start;
    return 0;
}

static const char *unit_of(struct sc_str u)
{
    static const struct {
        const char *from, *to;
    } map[] = {
        {"nanoseconds", "nanoseconds"},
        {"ns", "nanoseconds"},
        {"microseconds", "microseconds"},
        {"us", "microseconds"},
        {"milliseconds", "milliseconds"},
        {"ms", "milliseconds"},
        {"seconds", "seconds"},
        {"s", "seconds"},
        {"bytes", "bytes"},
        {"B", "bytes"},
    };
    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
        if (strlen(map[i].from) == u.len && memcmp(map[i].from, u.ptr, u.len) == 0)
            return map[i].to;
    return "none";
}

struct order {
    int64_t t;
    uint32_t i;
};

static int cmp_order(const void *a, const void *b)
{
    const struct order *x = a, *y = b;
    if (x->t != y->t)
        return x->t < y->t ? -1 : 1;
    return x->i < y->i ? -1 : x->i > y->i;
}

static void writer_release(struct writer *w)
{
    free(w->frames);
    sc_map64_release(&w->by_key);
    free(w->fn_frame);
    free(w->loc_start);
    free(w->loc_len);
    free(w->loc_frames);
    sc_arena_release(&w->arena);
}

int sc_speedscope_write(const struct sc_profile *p, int vi, const char *name, struct sc_buf *out,
                        char *err)
{
    if (vi < 0 || (uint32_t)vi >= p->nsample_types)
        return sc_errf(err, SC_EINVAL, "sample index %d out of range", vi);
    uint32_t nt = p->nsample_types, ns = p->nsamples;
    struct writer w;
    memset(&w, 0, sizeof w);
    w.p = p;
    sc_arena_init(&w.arena);
    struct order *ord = NULL;
    uint32_t *text_off = NULL; /* sample (in output order) -> its frame list in text */
    struct sc_buf text = SC_BUF_INIT;
    int rc = 0;

    w.fn_frame = calloc((size_t)p->nfunctions + 1, sizeof *w.fn_frame);
    w.loc_start = malloc(((size_t)p->nlocations + 1) * sizeof *w.loc_start);
    w.loc_len = malloc(((size_t)p->nlocations + 1) * sizeof *w.loc_len);
    ord = malloc(((size_t)ns + 1) * sizeof *ord);
    text_off = malloc(((size_t)ns + 1) * sizeof *text_off);
    if (!w.fn_frame || !w.loc_start || !w.loc_len || !ord || !text_off) {
        rc = SC_ENOMEM;
        goto done;
    }
    memset(w.loc_len, 0xff, ((size_t)p->nlocations + 1) * sizeof *w.loc_len);

    /* Output order: as stored, or by timestamp when there are any (speedscope draws a
     * sampled profile's "Time Order" view in array order). */
    int timed = 0;
    for (uint32_t i = 0; i < ns; i++) {
        ord[i].t = p->samples[i].time_ns;
        ord[i].i = i;
        timed |= ord[i].t != 0;
    }
    if (timed)
        qsort(ord, ns, sizeof *ord, cmp_order);

    /* Each sample's frame list is rendered once as JSON text and reused by every profile
     * (type) that has a non-zero value for it; frames are numbered as first met here. */
    for (uint32_t k = 0; k < ns; k++) {
        uint32_t si = ord[k].i;
        const struct sc_sample *s = &p->samples[si];
        const int64_t *vals = p->values + (size_t)si * nt;
        uint32_t t = 0;
        while (t < nt && vals[t] == 0)
            t++;
        if (t == nt)
            continue;
        if (text.len > UINT32_MAX) {
            rc = SC_ELIMIT;
            goto done;
        }
        text_off[k] = (uint32_t)text.len;
        sc_buf_putc(&text, '[');
        int first = 1;
        for (uint32_t j = s->nlocs; j-- > 0;) {
            uint32_t li = p->sample_locs[s->loc_start + j];
            if ((rc = location_frames(&w, li)))
                goto done;
            for (uint32_t m = 0; m < w.loc_len[li]; m++) {
                if (!first)
                    sc_buf_putc(&text, ',');
                first = 0;
                sc_buf_put_u64(&text, w.loc_frames[w.loc_start[li] + m]);
            }
        }
        sc_buf_putc(&text, ']');
    }
    if (text.oom) {
        rc = SC_ENOMEM;
        goto done;
    }

    /* Names come from files users hand us (C++ symbols, paths in any encoding): the
     * writer's escaper turns every byte that is not well-formed UTF-8 into U+FFFD, since a
     * JSON parser must reject invalid UTF-8 and one bad symbol should not cost the file. A
     * frame a line and a profile's parts on lines of their own keep the file greppable. */
    struct sc_json jw;
    sc_json_init(&jw, out);
    sc_json_obj_begin(&jw);
    sc_json_kv_str(&jw, "$schema", SCHEMA_URL);
    sc_json_newline(&jw);
    sc_json_kv_str(&jw, "exporter", "scorch");
    sc_json_newline(&jw);
    if (name) {
        sc_json_kv_str(&jw, "name", name);
        sc_json_newline(&jw);
    }
    sc_json_kv_i64(&jw, "activeProfileIndex", vi);
    sc_json_newline(&jw);
    sc_json_key(&jw, "shared");
    sc_json_obj_begin(&jw);
    sc_json_key(&jw, "frames");
    sc_json_arr_begin(&jw);
    for (uint32_t i = 0; i < w.nframes; i++) {
        const struct frame *f = &w.frames[i];
        sc_json_newline(&jw);
        sc_json_obj_begin(&jw);
        sc_json_kv_strn(&jw, "name", f->name.ptr, f->name.len);
        if (f->file.len)
            sc_json_kv_strn(&jw, "file", f->file.ptr, f->file.len);
        if (f->line)
            sc_json_kv_i64(&jw, "line", f->line);
        sc_json_obj_end(&jw);
    }
    sc_json_arr_end(&jw);
    sc_json_obj_end(&jw);
    sc_json_newline(&jw);
    sc_json_key(&jw, "profiles");
    sc_json_arr_begin(&jw);
    for (uint32_t t = 0; t < nt; t++) {
        struct sc_str type = sc_profile_str(p, p->sample_types[t].type);
        sc_json_newline(&jw);
        sc_json_obj_begin(&jw);
        sc_json_kv_str(&jw, "type", "sampled");
        if (name && *name) {
            /* "<name> (<type>)", escaped as one string */
            struct sc_buf nm = SC_BUF_INIT;
            sc_buf_puts(&nm, name);
            sc_buf_puts(&nm, " (");
            sc_buf_append(&nm, type.ptr, type.len);
            sc_buf_putc(&nm, ')');
            if (nm.oom)
                out->oom = 1;
            else
                sc_json_kv_strn(&jw, "name", nm.data, nm.len);
            sc_buf_release(&nm);
        } else {
            sc_json_kv_strn(&jw, "name", type.ptr, type.len);
        }
        sc_json_kv_str(&jw, "unit", unit_of(sc_profile_str(p, p->sample_types[t].unit)));
        sc_json_kv_i64(&jw, "startValue", 0);
        int64_t total = 0;
        for (uint32_t k = 0; k < ns; k++)
            total = sc_add_sat(total, p->values[(size_t)ord[k].i * nt + t]);
        sc_json_kv_i64(&jw, "endValue", total);
        sc_json_newline(&jw);
        sc_json_key(&jw, "samples");
        sc_json_arr_begin(&jw);
        for (uint32_t k = 0; k < ns; k++) {
            if (p->values[(size_t)ord[k].i * nt + t] == 0)
                continue;
            /* a sample's text, rendered once above, ends at its ']' */
            const char *s = text.data + text_off[k];
            sc_json_raw(&jw, s, (size_t)(strchr(s, ']') - s) + 1);
        }
        sc_json_arr_end(&jw);
        sc_json_newline(&jw);
        sc_json_key(&jw, "weights");
        sc_json_arr_begin(&jw);
        for (uint32_t k = 0; k < ns; k++) {
            int64_t v = p->values[(size_t)ord[k].i * nt + t];
            if (v != 0)
                sc_json_i64(&jw, v);
        }
        sc_json_arr_end(&jw);
        sc_json_obj_end(&jw);
    }
    sc_json_arr_end(&jw);
    sc_json_obj_end(&jw);
    sc_buf_putc(out, '\n');
    if (out->oom)
        rc = SC_ENOMEM;

done:
    writer_release(&w);
    free(ord);
    free(text_off);
    sc_buf_release(&text);
    if (rc == SC_ELIMIT)
        return sc_errf(err, rc, "speedscope output too large");
    if (rc)
        return sc_errf(err, rc, "out of memory");
    return 0;
}
