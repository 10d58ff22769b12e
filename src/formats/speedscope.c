/* speedscope.c - the speedscope JSON writer: shared frames, one sampled profile per type. */
#include "formats/speedscope.h"
#include "model/buf.h"
#include "model/arena.h"
#include "model/error.h"
#include "model/hash.h"

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
        if (w->nframes == w->frames_cap) {
            uint64_t ncap = w->frames_cap ? (uint64_t)w->frames_cap * 2 : 256;
            if (ncap > UINT32_MAX / 2)
                return SC_ELIMIT;
            struct frame *nf = realloc(w->frames, (size_t)ncap * sizeof *nf);
            if (!nf)
                return SC_ENOMEM;
            w->frames = nf;
            w->frames_cap = (uint32_t)ncap;
        }
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

/* Length of the well-formed UTF-8 sequence (RFC 3629: no overlongs, surrogates or code
 * points past U+10FFFF) at s, or 0 when s does not start one. s[0] >= 0x80. */
static size_t utf8_seq(const unsigned char *s, size_t n)
{
    unsigned c = s[0];
    size_t len;
    unsigned lo = 0x80, hi = 0xbf; /* allowed range of the second byte */
    if (c >= 0xc2 && c <= 0xdf) {
        len = 2;
    } else if (c >= 0xe0 && c <= 0xef) {
        len = 3;
        if (c == 0xe0)
            lo = 0xa0;
        else if (c == 0xed)
            hi = 0x9f;
    } else if (c >= 0xf0 && c <= 0xf4) {
        len = 4;
        if (c == 0xf0)
            lo = 0x90;
        else if (c == 0xf4)
            hi = 0x8f;
    } else {
        return 0;
    }
    if (n < len || s[1] < lo || s[1] > hi)
        return 0;
    for (size_t i = 2; i < len; i++)
        if (s[i] < 0x80 || s[i] > 0xbf)
            return 0;
    return len;
}

/* A JSON string with quotes. Names come from files users hand us (C++ symbols, paths in
 * any encoding), so every byte that is not part of well-formed UTF-8 becomes U+FFFD: a
 * JSON parser must reject invalid UTF-8, and one bad symbol should not cost the file. */
static void put_str(struct sc_buf *b, const char *s, size_t n)
{
    const unsigned char *u = (const unsigned char *)s;
    size_t i = 0, start = 0;
    sc_buf_putc(b, '"');
    while (i < n) {
        unsigned c = u[i];
        if (c >= 0x20 && c < 0x80 && c != '"' && c != '\\') {
            i++;
            continue;
        }
        size_t k = c >= 0x80 ? utf8_seq(u + i, n - i) : 0;
        if (k) {
            i += k;
            continue;
        }
        sc_buf_append(b, s + start, i - start);
        if (c < 0x80)
            sc_buf_put_json_str(b, s + i, 1);
        else
            sc_buf_append(b, "\xef\xbf\xbd", 3);
        start = ++i;
    }
    sc_buf_append(b, s + start, n - start);
    sc_buf_putc(b, '"');
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

    sc_buf_puts(out, "{\"$schema\":\"" SCHEMA_URL "\",\n\"exporter\":\"scorch\",\n");
    if (name) {
        sc_buf_puts(out, "\"name\":");
        put_str(out, name, strlen(name));
        sc_buf_puts(out, ",\n");
    }
    sc_buf_printf(out, "\"activeProfileIndex\":%d,\n\"shared\":{\"frames\":[", vi);
    for (uint32_t i = 0; i < w.nframes; i++) {
        const struct frame *f = &w.frames[i];
        sc_buf_puts(out, i ? ",\n{\"name\":" : "\n{\"name\":");
        put_str(out, f->name.ptr, f->name.len);
        if (f->file.len) {
            sc_buf_puts(out, ",\"file\":");
            put_str(out, f->file.ptr, f->file.len);
        }
        if (f->line) {
            sc_buf_puts(out, ",\"line\":");
            sc_buf_put_i64(out, f->line);
        }
        sc_buf_putc(out, '}');
    }
    sc_buf_puts(out, "]},\n\"profiles\":[");
    for (uint32_t t = 0; t < nt; t++) {
        struct sc_str type = sc_profile_str(p, p->sample_types[t].type);
        sc_buf_puts(out, t ? ",\n" : "\n");
        sc_buf_puts(out, "{\"type\":\"sampled\",\"name\":");
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
                put_str(out, nm.data, nm.len);
            sc_buf_release(&nm);
        } else {
            put_str(out, type.ptr, type.len);
        }
        sc_buf_printf(out, ",\"unit\":\"%s\",\"startValue\":0,\"endValue\":",
                      unit_of(sc_profile_str(p, p->sample_types[t].unit)));
        int64_t total = 0;
        for (uint32_t k = 0; k < ns; k++)
            total = sc_add_sat(total, p->values[(size_t)ord[k].i * nt + t]);
        sc_buf_put_i64(out, total);
        sc_buf_puts(out, ",\n\"samples\":[");
        int first = 1;
        for (uint32_t k = 0; k < ns; k++) {
            if (p->values[(size_t)ord[k].i * nt + t] == 0)
                continue;
            if (!first)
                sc_buf_putc(out, ',');
            first = 0;
            /* a sample's text ends at its ']' */
            const char *s = text.data + text_off[k];
            sc_buf_append(out, s, (size_t)(strchr(s, ']') - s) + 1);
        }
        sc_buf_puts(out, "],\n\"weights\":[");
        first = 1;
        for (uint32_t k = 0; k < ns; k++) {
            int64_t v = p->values[(size_t)ord[k].i * nt + t];
            if (v == 0)
                continue;
            if (!first)
                sc_buf_putc(out, ',');
            first = 0;
            sc_buf_put_i64(out, v);
        }
        sc_buf_puts(out, "]}");
    }
    sc_buf_puts(out, "]}\n");
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
