/* perf.c - `perf script` text parser with the meaning of FlameGraph's stackcollapse-perf.pl. */
#include "formats/perf.h"
#include "model/error.h"
#include "model/hash.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/*
 * The script reads its input line by line and classifies each line with a few regular
 * expressions. Users compare our output with the script's, so this file emulates those
 * expressions exactly, corner cases of their backtracking included, rather than parsing
 * what perf "means":
 *
 *   LINE (first rule that matches)           MEANING
 *   /^#/                                     comment
 *   empty                                    end of sample: "pname;frames... period" counts
 *   /^(\S.+?)\s+(\d+)[/]*(\d+)*\s+/          header: comm, pid[/tid]; event and period
 *                                            come from /:\s*(\d+)*\s+(\S+):\s*$/ on the
 *                                            same line
 *   /^\s*(\w+)\s*(.+) \((.*)\)/              frame: address, symbol[+0xoff], (dso); perf
 *                                            prints the leaf first
 *   anything else                            ignored (the script warns on stderr)
 *
 * Quirks kept on purpose: a header does not clear frames read since the last blank line;
 * a header of another event is skipped entirely (the previous header stays in force); the
 * last sample counts only if a blank line follows it; a tid of "0" means "no tid"; a
 * period of "0" or none counts 1; comm has at least two characters.
 *
 * Every blank line resets the parser's state (a frame line only counts after a header,
 * and a blank line after a header always records and clears). So once the one thing that
 * crosses blank lines is known, the default event filter (the first event any header
 * names), the input is cut at blank lines into chunks that threads parse independently
 * into chunk-local tables. The main thread interns the chunks' few distinct frames into
 * the profile; then the threads translate their samples into ranges of the profile's
 * arrays.
 */

#define MIN_CHUNK (2u << 20) /* bytes per thread below which another thread does not pay */
#define MAX_THREADS 64

/* ---- the script's character classes (Perl's \s, \d, \w on byte strings) ---- */

static inline int is_space(unsigned char c)
{
    return c == ' ' || (c >= '\t' && c <= '\r');
}

static inline int is_digit(unsigned char c)
{
    return c >= '0' && c <= '9';
}

static inline int is_word(unsigned char c)
{
    return is_digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static inline int is_lhex(unsigned char c)
{
    return is_digit(c) || (c >= 'a' && c <= 'f');
}

static const char *skip_space(const char *s, const char *e)
{
    while (s < e && is_space((unsigned char)*s))
        s++;
    return s;
}

static const char *skip_digits(const char *s, const char *e)
{
    while (s < e && is_digit((unsigned char)*s))
        s++;
    return s;
}

static int mem_has(const char *s, size_t n, const char *needle)
{
    return memmem(s, n, needle, strlen(needle)) != NULL;
}

/* Digits as an integer, saturating (Perl would turn huge ones into floats). */
static int64_t parse_u(const char *s, const char *e)
{
    uint64_t v = 0;
    for (; s < e; s++) {
        if (v > (uint64_t)INT64_MAX / 10)
            return INT64_MAX;
        v = v * 10 + (uint64_t)(*s - '0');
        if (v > (uint64_t)INT64_MAX)
            return INT64_MAX;
    }
    return (int64_t)v;
}

/* ---- the three regular expressions ---- */

struct header {
    const char *comm_end; /* comm is [line, comm_end) */
    const char *pid, *pid_end;
    const char *tid, *tid_end; /* tid == NULL: none */
    const char *rest;          /* just past the match */
};

/* The part after comm: \s+(\d+)[/]*(\d+)*\s+ starting at the digits j. */
static int match_ids(const char *j, const char *e, struct header *h)
{
    const char *k = skip_digits(j, e);
    if (k == j || k == e)
        return 0;
    h->pid = j;
    h->pid_end = k;
    h->tid = NULL;
    if (is_space((unsigned char)*k)) {
        h->rest = skip_space(k, e);
        return 1;
    }
    if (*k != '/')
        return 0;
    const char *m = k;
    while (m < e && *m == '/')
        m++;
    if (m == e)
        return 0;
    if (is_space((unsigned char)*m)) {
        h->rest = skip_space(m, e);
        return 1;
    }
    const char *q = skip_digits(m, e);
    if (q == m || q == e || !is_space((unsigned char)*q))
        return 0;
    h->tid = m;
    h->tid_end = q;
    h->rest = skip_space(q, e);
    return 1;
}

/* /^(\S.+?)\s+(\d+)[/]*(\d+)*\s+/. The lazy comm ends at the first whitespace (at offset
 * 2 or later) after which the rest matches; every start inside one whitespace run leads
 * to the same digits, so trying each run once keeps this linear. */
static int match_header(const char *s, const char *e, struct header *h)
{
    if (e - s < 3 || is_space((unsigned char)*s))
        return 0;
    const char *c = s + 2;
    while (c < e) {
        if (!is_space((unsigned char)*c)) {
            c++;
            continue;
        }
        const char *j = skip_space(c, e);
        if (match_ids(j, e, h)) {
            h->comm_end = c;
            return 1;
        }
        c = j;
    }
    return 0;
}

struct event {
    const char *name, *name_end;
    const char *period, *period_end; /* may be empty */
};

/* /:\s*(\d+)*\s+(\S+):\s*$/: the last word ends with ':' and is the event; before it come
 * whitespace, optional digits (the period), optional whitespace and a ':'. */
static int match_event(const char *s, const char *e, struct event *ev)
{
    const char *t1 = e;
    while (t1 > s && is_space((unsigned char)t1[-1]))
        t1--;
    const char *t0 = t1;
    while (t0 > s && !is_space((unsigned char)t0[-1]))
        t0--;
    if (t1 - t0 < 2 || t1[-1] != ':' || t0 == s)
        return 0;
    const char *k = t0;
    while (k > s && is_space((unsigned char)k[-1]))
        k--;
    const char *d = k;
    while (d > s && is_digit((unsigned char)d[-1]))
        d--;
    const char *w = d;
    if (d != k)
        while (w > s && is_space((unsigned char)w[-1]))
            w--;
    if (w == s || w[-1] != ':')
        return 0;
    ev->name = t0;
    ev->name_end = t1 - 1;
    ev->period = d;
    ev->period_end = k;
    return 1;
}

struct frame {
    const char *pc, *pc_end;
    const char *raw, *raw_end;
    const char *mod, *mod_end;
};

/* /^\s*(\w+)\s*(.+) \((.*)\)/ with Perl's preferences: the longest word, then the
 * longest run of spaces, then the last " (" that a ')' follows, then the last ')'. When
 * the " (" sits right after the word, backtracking shortens the space run or the word to
 * give (.+) its one character. Offsets are used below to avoid pointers before s. */
static int match_frame(const char *s, const char *e, struct frame *f)
{
    size_t n = (size_t)(e - s);
    size_t a0 = (size_t)(skip_space(s, e) - s);
    if (a0 == n || !is_word((unsigned char)s[a0]))
        return 0;
    size_t w = a0;
    while (w < n && is_word((unsigned char)s[w]))
        w++;
    size_t rp = n;
    while (rp > 0 && s[rp - 1] != ')')
        rp--;
    if (rp < w + 3) /* need " (" at or after w, then ')' */
        return 0;
    size_t close = rp - 1, q = close - 2;
    for (;;) {
        if (s[q] == ' ' && s[q + 1] == '(')
            break;
        if (q == w)
            return 0;
        q--;
    }
    size_t r0 = (size_t)(skip_space(s + w, e) - s);
    f->pc = s + a0;
    f->pc_end = s + w;
    if (q >= r0 + 1) {
        f->raw = s + r0;
    } else if (q >= w + 1) {
        f->raw = s + q - 1;
    } else {
        if (w - a0 < 2)
            return 0;
        f->pc_end = s + w - 1;
        f->raw = s + w - 1;
    }
    f->raw_end = s + q;
    f->mod = s + q + 2;
    f->mod_end = s + close;
    return 1;
}

/* ---- chunk-local parsing ---- */

struct ctx {
    const struct sc_perf_opts *o;
    const struct sc_limits *lim;
    const char *buf;
    size_t n;
    const char *event; /* the event filter, NULL = none seen */
    size_t event_len;
};

/* Chunks build samples in the profile's own layout, with chunk-local numbers that the
 * merge translates: a sample's loc_start and label_start count from the chunk's start, a
 * label's key is one of these, and a comm label's str is a chunk name. */
enum { L_COMM, L_PID, L_TID, L_EVENT, L_NKEYS };

/* What the last accepted header said. */
struct head {
    uint32_t comm; /* chunk name */
    int has_pid, has_event;
    int64_t pid, tid, value, time_ns;
};

/* A frame line parsed before: identical lines (same address, symbol and dso) are the
 * common case, so their result is looked up instead of recomputed. */
struct seen_line {
    const char *text;
    uint32_t len;
    uint32_t java; /* the script tidies Java names only in processes called java* */
    uint32_t loc;  /* chunk location + 1; 0: the line adds no frame */
};

struct lloc {
    uint32_t first, n; /* chunk->loc_names[first..first+n), the caller first */
};

struct chunk {
    const struct ctx *ctx;
    const char *begin, *end;
    int rc;
    const char *err_at; /* where parsing failed, for the line number */
    char err[SC_ERR_LEN];

    struct sc_arena arena;
    struct sc_strtab names; /* frame names and comms */

    struct sc_map64 seen_index;
    struct seen_line *seen;
    uint32_t nseen, seen_cap;

    uint32_t *single; /* name -> location + 1 of the one-frame location of that name */
    uint32_t single_cap;
    struct lloc *locs;
    uint32_t nlocs, locs_cap;
    uint32_t *loc_names;
    uint32_t nloc_names, loc_names_cap;

    uint32_t *stack; /* every sample's locations, leaf first, sample after sample */
    uint32_t nstack, stack_cap;
    struct sc_sample *samples;
    int64_t *values; /* as many as samples_cap */
    uint32_t nsamples, samples_cap;
    struct sc_label *labels;
    uint32_t nlabels, labels_cap;
    int has_period;

    /* the sample being read */
    int in_sample;
    int java;
    uint32_t sample_first;
    uint32_t pname_loc;
    struct head cur;
    struct sc_buf pname, last_pname; /* the process frame, and the last one built */
    uint32_t last_pname_loc;
    const char *last_comm;
    size_t last_comm_len;
    uint32_t last_comm_name;

    struct sc_buf scratch;
    const char **fields; /* a frame line's "->" fields: start, end, start, end... */
    uint32_t fields_cap;
    uint32_t *fnames; /* their names */
    uint32_t fnames_cap;

    /* filled by the merge */
    uint32_t *name_map; /* chunk name -> profile string */
    uint32_t *loc_map;  /* chunk location -> profile location */
    uint32_t sample_base, locs_base, labels_base;
};

static int grow(void *arrp, uint32_t *cap, uint64_t need, size_t sz)
{
    if (need <= *cap)
        return 0;
    if (need > UINT32_MAX / 2)
        return SC_ELIMIT;
    uint64_t ncap = *cap ? *cap : 64;
    while (ncap < need)
        ncap *= 2;
    void **p = arrp;
    void *np = realloc(*p, (size_t)ncap * sz);
    if (!np)
        return SC_ENOMEM;
    *p = np;
    *cap = (uint32_t)ncap;
    return 0;
}

static int fail(struct chunk *c, const char *at, int code, const char *what)
{
    c->err_at = at;
    return sc_errf(c->err, code, "%s", what);
}

static int64_t intern(struct chunk *c, const char *s, size_t len)
{
    int64_t id = sc_strtab_intern(&c->names, s, len);
    if (id >= 0 && c->names.n > c->ctx->lim->max_strings)
        return SC_ELIMIT;
    return id;
}

static int64_t new_loc(struct chunk *c, const uint32_t *names, uint32_t n)
{
    if (c->nlocs >= c->ctx->lim->max_locations)
        return SC_ELIMIT;
    int rc = grow(&c->locs, &c->locs_cap, (uint64_t)c->nlocs + 1, sizeof *c->locs);
    if (!rc)
        rc = grow(&c->loc_names, &c->loc_names_cap, (uint64_t)c->nloc_names + n,
                  sizeof *c->loc_names);
    if (rc)
        return rc;
    c->locs[c->nlocs].first = c->nloc_names;
    c->locs[c->nlocs].n = n;
    memcpy(c->loc_names + c->nloc_names, names, n * sizeof *names);
    c->nloc_names += n;
    return c->nlocs++;
}

/* The location holding just the frame `name`, made once per name. */
static int64_t single_loc(struct chunk *c, uint32_t name)
{
    if (name >= c->single_cap) {
        uint32_t old = c->single_cap;
        int rc = grow(&c->single, &c->single_cap, (uint64_t)name + 1, sizeof *c->single);
        if (rc)
            return rc;
        memset(c->single + old, 0, (c->single_cap - old) * sizeof *c->single);
    }
    if (c->single[name])
        return c->single[name] - 1;
    int64_t l = new_loc(c, &name, 1);
    if (l >= 0)
        c->single[name] = (uint32_t)l + 1;
    return l;
}

/* The script's tidy_generic and tidy_java steps on one function name, in place. */
static void tidy(struct sc_buf *b, int java)
{
    if (!b->data)
        return;
    char *s = b->data;
    size_t n = b->len;
    for (size_t i = 0; i < n; i++)
        if (s[i] == ';')
            s[i] = ':';
    /* a Go method such as "net/http.(*Client).Do" keeps its parentheses: m/\.\(.*\)\./
     * holds when the last ")." starts two or more bytes after the first ".(" */
    int go = 0;
    const char *open = n >= 4 ? memmem(s, n, ".(", 2) : NULL;
    if (open) {
        size_t i = (size_t)(open - s);
        for (size_t j = n - 2; j >= i + 2 && !go; j--)
            go = s[j] == ')' && s[j + 1] == '.';
    }
    if (!go) {
        /* s/\((?!anonymous namespace\)).*$// (the "$" is implied) */
        static const char anon[] = "anonymous namespace)";
        for (size_t i = 0; i < n; i++) {
            if (s[i] != '(')
                continue;
            if (n - i - 1 >= sizeof anon - 1 && memcmp(s + i + 1, anon, sizeof anon - 1) == 0)
                continue;
            n = i;
            break;
        }
    }
    size_t o = 0;
    for (size_t i = 0; i < n; i++)
        if (s[i] != '"' && s[i] != '\'')
            s[o++] = s[i];
    n = o;
    if (java && n > 0 && s[0] == 'L' && memchr(s, '/', n)) {
        memmove(s, s + 1, n - 1);
        n--;
    }
    b->len = n;
    if (b->data)
        b->data[n] = 0;
}

static int is_perf_map(const char *s, size_t n)
{
    /* m:/tmp/perf-\d+\.map: */
    static const char pre[] = "/tmp/perf-";
    const char *e = s + n;
    for (const char *p = s; (p = memmem(p, (size_t)(e - p), pre, sizeof pre - 1)); p++) {
        const char *d = p + sizeof pre - 1, *de = skip_digits(d, e);
        if (de > d && e - de >= 4 && memcmp(de, ".map", 4) == 0)
            return 1;
    }
    return 0;
}

/* Runs the script's frame-line logic: returns the chunk location + 1 of the frames the
 * line adds, 0 when it adds none, or a negative SC_E* (with c->err set when the reason
 * is more than the code says). */
static int64_t frame_loc(struct chunk *c, const char *s, const char *e)
{
    const struct sc_perf_opts *o = c->ctx->o;
    struct frame f;
    if (!match_frame(s, e, &f))
        return 0; /* "Unrecognized line" */
    const char *raw = f.raw, *raw_end = f.raw_end;
    /* s/\+0x[\da-f]+$// */
    const char *h = raw_end;
    while (h > raw && is_lhex((unsigned char)h[-1]))
        h--;
    if (h < raw_end && h - raw >= 3 && memcmp(h - 3, "+0x", 3) == 0)
        raw_end = h - 3;
    if (raw < raw_end && *raw == '(')
        return 0; /* the script skips process names */
    /* split /\->/ keeps leading empty fields and drops trailing ones */
    uint32_t nf = 0;
    for (const char *p = raw;;) {
        const char *a = raw_end - p >= 2 ? memmem(p, (size_t)(raw_end - p), "->", 2) : NULL;
        int rc = grow(&c->fields, &c->fields_cap, (uint64_t)nf * 2 + 2, sizeof *c->fields);
        if (rc)
            return rc;
        c->fields[(size_t)nf * 2] = p;
        c->fields[(size_t)nf * 2 + 1] = a ? a : raw_end;
        nf++;
        if (!a)
            break;
        p = a + 2;
    }
    while (nf > 0 && c->fields[(size_t)nf * 2 - 2] == c->fields[(size_t)nf * 2 - 1])
        nf--;
    if (nf == 0)
        return 0;
    if (nf > c->ctx->lim->max_stack_depth) {
        c->err_at = s;
        return sc_errf(c->err, SC_ELIMIT, "stack deeper than %u frames",
                       (unsigned)c->ctx->lim->max_stack_depth);
    }
    if (grow(&c->fnames, &c->fnames_cap, nf, sizeof *c->fnames))
        return SC_ENOMEM;
    uint32_t *names = c->fnames;
    size_t mod_len = (size_t)(f.mod_end - f.mod);
    int kernel = o->kernel && mod_len > 0 &&
                 (f.mod[0] == '[' ||
                  (mod_len >= 7 && memcmp(f.mod_end - 7, "vmlinux", 7) == 0)) &&
                 !mem_has(f.mod, mod_len, "unknown");
    int jit = o->jit && is_perf_map(f.mod, mod_len);
    struct sc_buf *b = &c->scratch;
    for (uint32_t i = 0; i < nf; i++) {
        const char *fs = c->fields[(size_t)i * 2], *fe = c->fields[(size_t)i * 2 + 1];
        b->len = 0;
        if (fe - fs == 9 && memcmp(fs, "[unknown]", 9) == 0) {
            sc_buf_putc(b, '[');
            if (mod_len == 9 && memcmp(f.mod, "[unknown]", 9) == 0) {
                sc_buf_puts(b, "unknown");
            } else {
                const char *base = f.mod_end;
                while (base > f.mod && base[-1] != '/')
                    base--;
                sc_buf_append(b, base, (size_t)(f.mod_end - base));
            }
            if (o->addrs) {
                sc_buf_puts(b, " <");
                sc_buf_append(b, f.pc, (size_t)(f.pc_end - f.pc));
                sc_buf_putc(b, '>');
            }
            sc_buf_putc(b, ']');
        } else {
            sc_buf_append(b, fs, (size_t)(fe - fs));
        }
        if (b->oom)
            return SC_ENOMEM;
        tidy(b, c->java);
        if (i > 0) {
            if (!mem_has(b->data ? b->data : "", b->len, "_[i]"))
                sc_buf_puts(b, "_[i]");
        } else if (kernel) {
            sc_buf_puts(b, "_[k]");
        } else if (jit) {
            if (!mem_has(b->data ? b->data : "", b->len, "_[j]"))
                sc_buf_puts(b, "_[j]");
        }
        if (b->oom)
            return SC_ENOMEM;
        int64_t id = intern(c, b->data ? b->data : "", b->len);
        if (id < 0)
            return id;
        names[i] = (uint32_t)id;
    }
    int64_t l = nf == 1 ? single_loc(c, names[0]) : new_loc(c, names, nf);
    return l < 0 ? l : l + 1;
}

static int push_loc(struct chunk *c, const char *at, uint32_t loc)
{
    if (c->nstack - c->sample_first >= c->ctx->lim->max_stack_depth) {
        c->err_at = at;
        return sc_errf(c->err, SC_ELIMIT, "stack deeper than %u frames",
                       (unsigned)c->ctx->lim->max_stack_depth);
    }
    if (c->nstack == c->stack_cap &&
        grow(&c->stack, &c->stack_cap, (uint64_t)c->nstack + 1, sizeof *c->stack))
        return fail(c, at, SC_ENOMEM, "out of memory");
    c->stack[c->nstack++] = loc;
    return 0;
}

static int on_frame(struct chunk *c, const char *s, const char *e)
{
    size_t len = (size_t)(e - s);
    if (len > UINT32_MAX)
        return fail(c, s, SC_ELIMIT, "line longer than 4 GiB");
    uint64_t key = sc_hash64(s, len);
    for (;;) {
        uint32_t *slot = sc_map64_get(&c->seen_index, key);
        if (!slot)
            break;
        const struct seen_line *sl = &c->seen[*slot];
        if (sl->len == len && sl->java == (uint32_t)c->java && memcmp(sl->text, s, len) == 0)
            return sl->loc ? push_loc(c, s, sl->loc - 1) : 0;
        key++;
    }
    int64_t loc = frame_loc(c, s, e);
    if (loc < 0 && c->err_at)
        return (int)loc;
    if (loc == SC_ELIMIT)
        return fail(c, s, SC_ELIMIT, "too many distinct frames or strings");
    if (loc < 0)
        return fail(c, s, (int)loc, "out of memory");
    if (grow(&c->seen, &c->seen_cap, (uint64_t)c->nseen + 1, sizeof *c->seen) ||
        !sc_map64_upsert(&c->seen_index, key, c->nseen, NULL))
        return fail(c, s, SC_ENOMEM, "out of memory");
    /* a copy close to the other seen lines stays in cache; the first occurrence in the
     * input is far behind by the time the line comes again */
    const char *copy = sc_arena_strndup(&c->arena, s, len);
    if (!copy)
        return fail(c, s, SC_ENOMEM, "out of memory");
    struct seen_line *sl = &c->seen[c->nseen++];
    sl->text = copy;
    sl->len = (uint32_t)len;
    sl->java = (uint32_t)c->java;
    sl->loc = (uint32_t)loc;
    return loc ? push_loc(c, s, (uint32_t)loc - 1) : 0;
}

/* The timestamp perf prints before the event ("12345.678901:"), in nanoseconds. */
static int64_t header_time(const char *s, const char *e)
{
    for (int tok = 0; tok < 4 && s < e; tok++) {
        s = skip_space(s, e);
        const char *t = s;
        while (s < e && !is_space((unsigned char)*s))
            s++;
        if (s - t < 2 || s[-1] != ':')
            continue;
        const char *dot = skip_digits(t, s - 1);
        if (dot == t || dot == s - 1 || *dot != '.')
            return 0;
        const char *fe = skip_digits(dot + 1, s - 1);
        if (fe != s - 1 || fe == dot + 1 || dot - t > 9)
            return 0;
        int64_t ns = parse_u(t, dot) * 1000000000;
        int64_t scale = 100000000;
        for (const char *d = dot + 1; d < fe && scale > 0; d++, scale /= 10)
            ns += (*d - '0') * scale;
        return ns;
    }
    return 0;
}

static int on_header(struct chunk *c, const char *s, const char *e, const struct header *h)
{
    const struct ctx *x = c->ctx;
    const struct sc_perf_opts *o = x->o;
    struct event ev;
    int has_event = match_event(s, e, &ev);
    if (has_event && x->event &&
        ((size_t)(ev.name_end - ev.name) != x->event_len ||
         memcmp(ev.name, x->event, x->event_len) != 0))
        return 0; /* another event: the line is ignored, as if absent */

    int has_tid = h->tid != NULL;
    const char *pid = h->pid, *pid_end = h->pid_end;
    const char *tid = h->tid, *tid_end = h->tid_end;
    /* the script: `if (not $tid) { $tid = $pid; $pid = "?" }`, and "0" is false */
    if (!has_tid || (tid_end - tid == 1 && *tid == '0')) {
        tid = pid;
        tid_end = pid_end;
        pid = "?";
        pid_end = pid + 1;
    }
    struct sc_buf *b = &c->pname;
    b->len = 0;
    sc_buf_append(b, s, (size_t)(h->comm_end - s));
    if (o->tid || o->pid) {
        sc_buf_putc(b, '-');
        sc_buf_append(b, pid, (size_t)(pid_end - pid));
        if (o->tid) {
            sc_buf_putc(b, '/');
            sc_buf_append(b, tid, (size_t)(tid_end - tid));
        }
    }
    if (b->oom)
        return fail(c, s, SC_ENOMEM, "out of memory");
    for (size_t i = 0; i < b->len; i++)
        if (b->data[i] == ' ')
            b->data[i] = '_';
    c->java = b->len >= 4 && memcmp(b->data, "java", 4) == 0;

    /* consecutive samples usually come from the same thread */
    if (!(c->last_pname_loc && b->len == c->last_pname.len &&
          memcmp(b->data, c->last_pname.data, b->len) == 0)) {
        int64_t id = intern(c, b->data, b->len);
        int64_t l = id < 0 ? id : single_loc(c, (uint32_t)id);
        if (l < 0)
            return fail(c, s, (int)l, l == SC_ELIMIT ? "too many distinct frames or strings"
                                                     : "out of memory");
        c->last_pname.len = 0;
        sc_buf_append(&c->last_pname, b->data, b->len);
        if (c->last_pname.oom)
            return fail(c, s, SC_ENOMEM, "out of memory");
        c->last_pname_loc = (uint32_t)l + 1;
    }
    c->pname_loc = c->last_pname_loc - 1;
    size_t comm_len = (size_t)(h->comm_end - s);
    if (!(c->last_comm && comm_len == c->last_comm_len &&
          memcmp(s, c->last_comm, comm_len) == 0)) {
        int64_t id = intern(c, s, comm_len);
        if (id < 0)
            return fail(c, s, (int)id, "out of memory");
        c->last_comm = s;
        c->last_comm_len = comm_len;
        c->last_comm_name = (uint32_t)id;
    }

    struct head *cur = &c->cur;
    cur->comm = c->last_comm_name;
    cur->has_pid = has_tid;
    cur->has_event = has_event;
    if (has_tid) {
        cur->pid = parse_u(h->pid, h->pid_end);
        cur->tid = parse_u(h->tid, h->tid_end);
    } else {
        cur->pid = 0;
        cur->tid = parse_u(h->pid, h->pid_end);
    }
    cur->value = 1;
    if (has_event) {
        size_t pl = (size_t)(ev.period_end - ev.period);
        if (pl > 0) {
            c->has_period = 1;
            if (!(pl == 1 && *ev.period == '0'))
                cur->value = parse_u(ev.period, ev.period_end);
        }
    }
    cur->time_ns = header_time(h->rest, e);
    c->in_sample = 1;
    return 0;
}

static int on_blank(struct chunk *c, const char *at)
{
    if (!c->in_sample)
        return 0;
    int rc = push_loc(c, at, c->pname_loc);
    if (rc)
        return rc;
    if (c->nsamples >= c->ctx->lim->max_samples)
        return fail(c, at, SC_ELIMIT, "too many samples");
    if (c->nsamples == c->samples_cap) {
        uint32_t cap = c->samples_cap;
        if (grow(&c->samples, &cap, (uint64_t)c->nsamples + 1, sizeof *c->samples))
            return fail(c, at, SC_ENOMEM, "out of memory");
        int64_t *v = realloc(c->values, (size_t)cap * sizeof *v);
        if (!v)
            return fail(c, at, SC_ENOMEM, "out of memory");
        c->values = v;
        c->samples_cap = cap;
    }
    if (grow(&c->labels, &c->labels_cap, (uint64_t)c->nlabels + L_NKEYS, sizeof *c->labels))
        return fail(c, at, SC_ENOMEM, "out of memory");
    const struct head *h = &c->cur;
    struct sc_sample *sm = &c->samples[c->nsamples];
    c->values[c->nsamples++] = h->value;
    sm->loc_start = c->sample_first;
    sm->nlocs = c->nstack - c->sample_first;
    sm->label_start = c->nlabels;
    sm->time_ns = h->time_ns;
    struct sc_label *l = c->labels + c->nlabels;
    uint32_t nl = 0;
    l[nl++] = (struct sc_label){L_COMM, h->comm, 0, 0};
    if (h->has_pid)
        l[nl++] = (struct sc_label){L_PID, 0, h->pid, 0};
    l[nl++] = (struct sc_label){L_TID, 0, h->tid, 0};
    if (h->has_event)
        l[nl++] = (struct sc_label){L_EVENT, 0, 0, 0};
    sm->nlabels = nl;
    c->nlabels += nl;
    c->sample_first = c->nstack;
    c->in_sample = 0;
    return 0;
}

static int parse_chunk(struct chunk *c)
{
    const char *s = c->begin, *end = c->end;
    int rc = 0;
    while (s < end && rc == 0) {
        const char *nl = memchr(s, '\n', (size_t)(end - s));
        const char *e = nl ? nl : end;
        if (e == s) {
            rc = on_blank(c, s);
        } else if (*s == '#') {
            /* comment */
        } else if (is_space((unsigned char)*s)) {
            /* a header starts with \S: this can only be a frame */
            if (c->in_sample)
                rc = on_frame(c, s, e);
        } else {
            struct header h;
            if (match_header(s, e, &h))
                rc = on_header(c, s, e, &h);
            else if (c->in_sample)
                rc = on_frame(c, s, e);
        }
        s = nl ? nl + 1 : end;
    }
    /* a sample without a blank line after it is not counted */
    c->nstack = c->sample_first;
    c->in_sample = 0;
    return rc;
}

static void chunk_init(struct chunk *c, const struct ctx *x, const char *b, const char *e)
{
    memset(c, 0, sizeof *c);
    c->ctx = x;
    c->begin = b;
    c->end = e;
    sc_arena_init(&c->arena);
    c->names.arena = &c->arena;
    sc_map64_init(&c->seen_index);
    sc_buf_init(&c->pname);
    sc_buf_init(&c->last_pname);
    sc_buf_init(&c->scratch);
}

static void chunk_release(struct chunk *c)
{
    sc_strtab_release(&c->names);
    sc_arena_release(&c->arena);
    sc_map64_release(&c->seen_index);
    free(c->seen);
    free(c->single);
    free(c->locs);
    free(c->loc_names);
    free(c->stack);
    free(c->samples);
    free(c->values);
    free(c->labels);
    sc_buf_release(&c->pname);
    sc_buf_release(&c->last_pname);
    sc_buf_release(&c->scratch);
    free(c->fields);
    free(c->fnames);
    free(c->name_map);
    free(c->loc_map);
}

/* ---- merge into the profile ---- */

struct merge {
    struct sc_profile *p;
    const struct sc_limits *lim;
    uint32_t *fn_of_str; /* profile string -> function + 1 */
    uint32_t nfn_of_str;
    uint32_t *loc_of_fn; /* function -> one-line location + 1 */
    uint32_t nloc_of_fn;
    struct sc_map64 multi; /* hash of a function list -> location, for inlined frames */
    uint32_t *fns;
    uint32_t fns_cap;
    uint32_t keys[L_NKEYS]; /* label key strings */
    uint32_t event;
};

static int64_t function_of(struct merge *m, uint32_t str)
{
    struct sc_profile *p = m->p;
    if (str >= m->nfn_of_str) {
        uint32_t old = m->nfn_of_str;
        int rc = grow(&m->fn_of_str, &m->nfn_of_str, (uint64_t)str + 1, sizeof *m->fn_of_str);
        if (rc)
            return rc;
        memset(m->fn_of_str + old, 0, (m->nfn_of_str - old) * sizeof *m->fn_of_str);
    }
    if (m->fn_of_str[str])
        return m->fn_of_str[str] - 1;
    if (p->nfunctions >= m->lim->max_functions)
        return SC_ELIMIT;
    int64_t fn = sc_profile_add_function(p, str, 0);
    if (fn >= 0)
        m->fn_of_str[str] = (uint32_t)fn + 1;
    return fn;
}

/* A location whose lines are fns (the caller first, as the script prints them). */
static int64_t location_of(struct merge *m, const uint32_t *fns, uint32_t n)
{
    struct sc_profile *p = m->p;
    uint64_t key = 0;
    if (n == 1) {
        if (fns[0] >= m->nloc_of_fn) {
            uint32_t old = m->nloc_of_fn;
            int rc = grow(&m->loc_of_fn, &m->nloc_of_fn, (uint64_t)fns[0] + 1,
                          sizeof *m->loc_of_fn);
            if (rc)
                return rc;
            memset(m->loc_of_fn + old, 0, (m->nloc_of_fn - old) * sizeof *m->loc_of_fn);
        }
        if (m->loc_of_fn[fns[0]])
            return m->loc_of_fn[fns[0]] - 1;
    } else {
        key = sc_hash64(fns, n * sizeof *fns);
        for (;;) {
            uint32_t *slot = sc_map64_get(&m->multi, key);
            if (!slot)
                break;
            const struct sc_location *l = &p->locations[*slot];
            int same = l->nlines == n;
            for (uint32_t i = 0; same && i < n; i++)
                same = p->lines[l->line_start + i].function == fns[n - 1 - i] + 1;
            if (same)
                return *slot;
            key++;
        }
    }
    if (p->nlocations >= m->lim->max_locations)
        return SC_ELIMIT;
    int rc = grow(&p->locations, &p->locations_cap, (uint64_t)p->nlocations + 1,
                  sizeof *p->locations);
    if (!rc)
        rc = grow(&p->lines, &p->lines_cap, (uint64_t)p->nlines + n, sizeof *p->lines);
    if (rc)
        return rc;
    struct sc_location *l = &p->locations[p->nlocations];
    memset(l, 0, sizeof *l);
    l->id = p->nlocations + 1;
    l->line_start = p->nlines;
    l->nlines = n;
    for (uint32_t i = 0; i < n; i++) {
        /* the model wants the innermost (inlined) frame first */
        struct sc_line *ln = &p->lines[p->nlines++];
        memset(ln, 0, sizeof *ln);
        ln->function = fns[n - 1 - i] + 1;
    }
    uint32_t li = p->nlocations++;
    if (n == 1)
        m->loc_of_fn[fns[0]] = li + 1;
    else if (!sc_map64_upsert(&m->multi, key, li, NULL))
        return SC_ENOMEM;
    return li;
}

/* Interns a chunk's names and locations into the profile (single-threaded). */
static int merge_tables(struct merge *m, struct chunk *c, char *err)
{
    c->name_map = malloc((c->names.n ? c->names.n : 1) * sizeof *c->name_map);
    c->loc_map = malloc((c->nlocs ? c->nlocs : 1) * sizeof *c->loc_map);
    if (!c->name_map || !c->loc_map)
        return sc_errf(err, SC_ENOMEM, "out of memory");
    for (uint32_t i = 0; i < c->names.n; i++) {
        int64_t s = sc_profile_intern(m->p, c->names.v[i].ptr, c->names.v[i].len);
        if (s < 0)
            return sc_errf(err, (int)s, "out of memory");
        c->name_map[i] = (uint32_t)s;
    }
    if (m->p->strings.n > m->lim->max_strings)
        return sc_errf(err, SC_ELIMIT, "more than %u strings", (unsigned)m->lim->max_strings);
    for (uint32_t i = 0; i < c->nlocs; i++) {
        const struct lloc *l = &c->locs[i];
        if (grow(&m->fns, &m->fns_cap, l->n, sizeof *m->fns))
            return sc_errf(err, SC_ENOMEM, "out of memory");
        for (uint32_t j = 0; j < l->n; j++) {
            int64_t fn = function_of(m, c->name_map[c->loc_names[l->first + j]]);
            if (fn == SC_ELIMIT)
                return sc_errf(err, SC_ELIMIT, "more than %u distinct frames",
                               (unsigned)m->lim->max_functions);
            if (fn < 0)
                return sc_errf(err, (int)fn, "out of memory");
            m->fns[j] = (uint32_t)fn;
        }
        int64_t li = location_of(m, m->fns, l->n);
        if (li == SC_ELIMIT)
            return sc_errf(err, SC_ELIMIT, "more than %u locations",
                           (unsigned)m->lim->max_locations);
        if (li < 0)
            return sc_errf(err, (int)li, "out of memory");
        c->loc_map[i] = (uint32_t)li;
    }
    return 0;
}

struct fill_job {
    const struct merge *m;
    struct chunk *c;
};

/* Translates a chunk's samples into its range of the profile's arrays (runs in threads:
 * it only writes that range and reads tables nobody writes any more). Chunk 0's arrays
 * are the profile's, so it translates in place. */
static void fill(const struct merge *m, struct chunk *c)
{
    struct sc_profile *p = m->p;
    uint32_t *locs = p->sample_locs + c->locs_base;
    for (uint32_t i = 0; i < c->nstack; i++)
        locs[i] = c->loc_map[c->stack[i]];
    struct sc_sample *s = p->samples + c->sample_base;
    int64_t *v = p->values + c->sample_base;
    for (uint32_t i = 0; i < c->nsamples; i++) {
        s[i] = c->samples[i];
        s[i].loc_start += c->locs_base;
        s[i].label_start += c->labels_base;
        v[i] = c->values[i];
    }
    struct sc_label *l = p->labels + c->labels_base;
    for (uint32_t i = 0; i < c->nlabels; i++) {
        struct sc_label x = c->labels[i];
        if (x.key == L_COMM)
            x.str = c->name_map[x.str];
        else if (x.key == L_EVENT)
            x.str = m->event;
        x.key = m->keys[x.key];
        l[i] = x;
    }
}

/* Grows chunk 0's arrays to hold every chunk's samples and hands them to the (empty)
 * profile, which saves a copy of the largest arrays. 0 or SC_ENOMEM. */
static int adopt_arrays(struct sc_profile *p, struct chunk *c0, uint64_t ns, uint64_t nlocs,
                        uint64_t nlabels)
{
    if (ns == 0)
        return 0;
    struct sc_sample *s = realloc(c0->samples, (size_t)ns * sizeof *s);
    if (!s)
        return SC_ENOMEM;
    c0->samples = s;
    int64_t *v = realloc(c0->values, (size_t)ns * sizeof *v);
    if (!v)
        return SC_ENOMEM;
    c0->values = v;
    uint32_t *l = realloc(c0->stack, (size_t)(nlocs ? nlocs : 1) * sizeof *l);
    if (!l)
        return SC_ENOMEM;
    c0->stack = l;
    struct sc_label *lb = realloc(c0->labels, (size_t)nlabels * sizeof *lb);
    if (!lb)
        return SC_ENOMEM;
    c0->labels = lb;
    p->samples = s;
    p->values = v;
    p->samples_cap = (uint32_t)ns;
    p->sample_locs = l;
    p->sample_locs_cap = (uint32_t)(nlocs ? nlocs : 1);
    p->labels = lb;
    p->labels_cap = (uint32_t)nlabels;
    return 0;
}

static void *parse_thread(void *arg)
{
    struct chunk *c = arg;
    c->rc = parse_chunk(c);
    return NULL;
}

static void *fill_thread(void *arg)
{
    struct fill_job *j = arg;
    fill(j->m, j->c);
    return NULL;
}

/* Runs fn on every element of args (size sz each), in threads where possible. */
static void run_all(void *(*fn)(void *), void *args, size_t sz, uint32_t n)
{
    pthread_t th[MAX_THREADS];
    int started[MAX_THREADS] = {0};
    for (uint32_t i = 1; i < n; i++)
        started[i] = pthread_create(&th[i], NULL, fn, (char *)args + i * sz) == 0;
    fn(args);
    for (uint32_t i = 1; i < n; i++) {
        if (started[i])
            pthread_join(th[i], NULL);
        else
            fn((char *)args + i * sz);
    }
}

/* The first event any header names: the script's default filter. */
static void first_event(struct ctx *x)
{
    const char *s = x->buf, *end = x->buf + x->n;
    while (s < end) {
        const char *nl = memchr(s, '\n', (size_t)(end - s));
        const char *e = nl ? nl : end;
        struct header h;
        struct event ev;
        if (e > s && *s != '#' && !is_space((unsigned char)*s) && match_header(s, e, &h) &&
            match_event(s, e, &ev)) {
            x->event = ev.name;
            x->event_len = (size_t)(ev.name_end - ev.name);
            return;
        }
        s = nl ? nl + 1 : end;
    }
}

/* Offset just past the first blank line at or after off (n when there is none). */
static size_t after_blank(const char *buf, size_t n, size_t off)
{
    while (off + 1 < n) {
        const char *nl = memchr(buf + off, '\n', n - off - 1);
        if (!nl)
            break;
        size_t i = (size_t)(nl - buf);
        if (buf[i + 1] == '\n')
            return i + 2;
        off = i + 1;
    }
    return n;
}

static uint32_t choose_threads(const struct sc_perf_opts *o, size_t n)
{
    long t = o->threads;
    if (t <= 0) {
        long cpus = sysconf(_SC_NPROCESSORS_ONLN);
        t = (long)(n / MIN_CHUNK);
        if (t > cpus)
            t = cpus;
    }
    if (t < 1)
        t = 1;
    if (t > MAX_THREADS)
        t = MAX_THREADS;
    return (uint32_t)t;
}

static unsigned long long line_number(const char *buf, const char *at)
{
    unsigned long long line = 1;
    for (const char *s = buf; s < at && (s = memchr(s, '\n', (size_t)(at - s))); s++)
        line++;
    return line;
}

int sc_perf_decode(const char *buf, size_t n, const struct sc_perf_opts *opts,
                   const struct sc_limits *lim, struct sc_profile *p, char *err)
{
    static const struct sc_perf_opts no_opts;
    if (p->nsamples || p->samples || p->sample_locs || p->labels || p->nsample_types)
        return sc_errf(err, SC_EINVAL, "perf script decodes into an empty profile only");
    struct ctx x = {opts ? opts : &no_opts, lim ? lim : &sc_limits_cli, buf, n, NULL, 0};
    if (x.o->event && *x.o->event) {
        x.event = x.o->event;
        x.event_len = strlen(x.o->event);
    } else {
        first_event(&x);
    }

    uint32_t nt = choose_threads(x.o, n);
    struct chunk *ch = calloc(nt, sizeof *ch);
    struct fill_job *jobs = calloc(nt, sizeof *jobs);
    struct merge m = {.p = p, .lim = x.lim};
    sc_map64_init(&m.multi);
    int rc = 0;
    if (!ch || !jobs) {
        free(ch);
        free(jobs);
        return sc_errf(err, SC_ENOMEM, "out of memory");
    }
    size_t start = 0;
    for (uint32_t i = 0; i < nt; i++) {
        size_t stop = i + 1 == nt ? n : after_blank(buf, n, n / nt * (i + 1));
        if (stop < start)
            stop = start;
        chunk_init(&ch[i], &x, buf + start, buf + stop);
        start = stop;
    }
    run_all(parse_thread, ch, sizeof *ch, nt);

    uint64_t nsamples = 0, nlocs = 0, nlabels = 0;
    int has_period = 0;
    for (uint32_t i = 0; i < nt; i++) {
        struct chunk *c = &ch[i];
        if (c->rc) {
            rc = sc_errf(err, c->rc, "line %llu: %s",
                         line_number(buf, c->err_at ? c->err_at : buf), c->err);
            goto out;
        }
        c->sample_base = (uint32_t)nsamples;
        c->locs_base = (uint32_t)nlocs;
        c->labels_base = (uint32_t)nlabels;
        nsamples += c->nsamples;
        nlocs += c->nstack;
        nlabels += c->nlabels;
        has_period |= c->has_period;
        if (nsamples > x.lim->max_samples) {
            rc = sc_errf(err, SC_ELIMIT, "more than %u samples", (unsigned)x.lim->max_samples);
            goto out;
        }
        if (nlocs > UINT32_MAX / 2 || nlabels > UINT32_MAX / 2) {
            rc = sc_errf(err, SC_ELIMIT, "more than %u frames or labels in all",
                         (unsigned)(UINT32_MAX / 2));
            goto out;
        }
    }

    /* the script sums periods when perf printed them, else counts samples. The type is
     * the event without perf's modifiers ("cpu-clock:pppH" -> "cpu-clock"); the software
     * clock events count nanoseconds, which lets reports print times. */
    if (has_period && x.event) {
        size_t tlen = 0;
        while (tlen < x.event_len && x.event[tlen] != ':')
            tlen++;
        char *type = malloc(tlen + 1);
        if (type) {
            memcpy(type, x.event, tlen);
            type[tlen] = 0;
            int clock = !strcmp(type, "cpu-clock") || !strcmp(type, "task-clock");
            rc = sc_profile_add_sample_type(p, type, clock ? "nanoseconds" : "count");
            if (rc >= 0) {
                p->period_type = p->sample_types[0];
                p->default_sample_type = p->sample_types[0].type;
            }
            free(type);
        } else {
            rc = SC_ENOMEM;
        }
    } else {
        rc = sc_profile_add_sample_type(p, "samples", "count");
    }
    static const char *const key_names[L_NKEYS] = {"comm", "pid", "tid", "event"};
    for (int i = 0; i < L_NKEYS && rc >= 0; i++) {
        int64_t k = sc_profile_intern(p, key_names[i], strlen(key_names[i]));
        rc = k < 0 ? (int)k : 0;
        m.keys[i] = k < 0 ? 0 : (uint32_t)k;
    }
    int64_t ev = x.event ? sc_profile_intern(p, x.event, x.event_len) : 0;
    if (rc < 0 || ev < 0) {
        rc = sc_errf(err, SC_ENOMEM, "out of memory");
        goto out;
    }
    rc = 0;
    m.event = (uint32_t)ev;

    for (uint32_t i = 0; i < nt; i++)
        if ((rc = merge_tables(&m, &ch[i], err)))
            goto out;
    /* the chunks' own tables are not needed any more: free them before the big arrays */
    for (uint32_t i = 0; i < nt; i++) {
        struct chunk *c = &ch[i];
        sc_map64_release(&c->seen_index);
        free(c->seen);
        c->seen = NULL;
        free(c->single);
        c->single = NULL;
    }
    if (adopt_arrays(p, &ch[0], nsamples, nlocs, nlabels)) {
        rc = sc_errf(err, SC_ENOMEM, "out of memory");
        goto out;
    }
    for (uint32_t i = 0; i < nt; i++) {
        jobs[i].m = &m;
        jobs[i].c = &ch[i];
    }
    run_all(fill_thread, jobs, sizeof *jobs, nt);
    if (nsamples) {
        /* the profile owns chunk 0's arrays now */
        ch[0].samples = NULL;
        ch[0].values = NULL;
        ch[0].stack = NULL;
        ch[0].labels = NULL;
    }
    p->nsamples = (uint32_t)nsamples;
    p->nsample_locs = (uint32_t)nlocs;
    p->nlabels = (uint32_t)nlabels;

out:
    for (uint32_t i = 0; i < nt; i++)
        chunk_release(&ch[i]);
    free(ch);
    free(jobs);
    free(m.fn_of_str);
    free(m.loc_of_fn);
    free(m.fns);
    sc_map64_release(&m.multi);
    return rc;
}
