/* perf.c - `perf script` text decoded with the meaning of FlameGraph's stackcollapse-perf.pl. */
#include "formats/perf.h"
#include "model/buf.h"
#include "model/error.h"
#include "model/hash.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The Perl script is a line-by-line state machine, and this file reproduces it exactly:
 *
 *   line starts with '#'            skipped
 *   empty line                      if a process frame is set: the stack (process frame
 *                                   first) is counted with the period, then all is reset
 *   /^(\S.+?)\s+(\d+)[/]*(\d+)*\s+/  a sample header: comm, pid, tid (no tid, or tid "0",
 *                                   means tid = pid and pid = "?"). When the line also
 *                                   matches /:\s*(\d+)*\s+(\S+):\s*$/ it names a period and
 *                                   an event; a header of another event than the kept one
 *                                   changes nothing at all. Otherwise it sets the process
 *                                   frame and the period (absent or "0" = 1), and leaves
 *                                   the stack as it is.
 *   /^\s*(\w+)\s*(.+) \((.*)\)/     a stack line (address, symbol, dso), ignored unless a
 *                                   process frame is set; its frames go on top of the
 *                                   stack (callers come later in the text)
 *   anything else                   warned about and skipped
 *
 * Two things the script gets wrong are read as perf means them:
 *   - a pid or tid "-1" (with comm ":-1": a thread perf does not know, as an exited task's)
 *     is an id, where the script read on to the period and named the process after the
 *     timestamp; such samples get no pid or tid label;
 *   - outside a sample, a header line that goes on after its fields with a frame (what
 *     perf script prints for a recording without call chains, comm right-aligned so the
 *     line may start with whitespace, and no empty line after it) is a whole sample of that
 *     one frame (frame_header_split), where the script printed nothing.
 *
 * So the state after an empty line is always the initial one (a stack only grows while a
 * process frame is set, and counting clears both), except for the event filter, which is
 * the event of the first header that names one. That is what lets us split the input at
 * empty lines and parse the pieces in parallel, once the first event is known: it is found
 * by a quick scan of the headers before the split.
 *
 * Perl's regexes are emulated with their backtracking worked out by hand (see the match_*
 * functions); \s, \d and \w are ASCII classes, as Perl uses them on bytes. */

#define MAX_LINE ((size_t)1 << 20)
#define MIN_CHUNK ((size_t)512 << 10) /* below this a thread costs more than it saves */
#define MAX_THREADS SC_PERF_MAX_THREADS

/* Character classes, as a table the hot loops index. TIDY marks what the symbol tidying
 * looks for. */
enum { C_WS = 1, C_DIGIT = 2, C_WORD = 4, C_HEX = 8, C_TIDY = 16 };
#define CLS(c)                                                                                     \
    (((c) == ' ' || ((c) >= '\t' && (c) <= '\r') ? C_WS : 0) |                                     \
     ((c) >= '0' && (c) <= '9' ? C_DIGIT | C_WORD | C_HEX : 0) |                                   \
     (((c) >= 'a' && (c) <= 'z') || ((c) >= 'A' && (c) <= 'Z') || (c) == '_' ? C_WORD : 0) |       \
     ((c) >= 'a' && (c) <= 'f' ? C_HEX : 0) |                                                      \
     ((c) == '(' || (c) == ';' || (c) == '"' || (c) == '\'' ? C_TIDY : 0))
#define CLS4(c) CLS(c), CLS((c) + 1), CLS((c) + 2), CLS((c) + 3)
#define CLS16(c) CLS4(c), CLS4((c) + 4), CLS4((c) + 8), CLS4((c) + 12)
#define CLS64(c) CLS16(c), CLS16((c) + 16), CLS16((c) + 32), CLS16((c) + 48)
static const unsigned char cls[256] = {CLS64(0), CLS64(64), CLS64(128), CLS64(192)};

static inline int is_ws(unsigned char c)
{
    return cls[c] & C_WS;
}

static inline int is_digit(unsigned char c)
{
    return cls[c] & C_DIGIT;
}

static inline int is_word(unsigned char c)
{
    return cls[c] & C_WORD;
}

static inline int is_lower_hex(unsigned char c)
{
    return cls[c] & C_HEX;
}

struct span {
    const char *p;
    size_t n;
};

static int span_eq(struct span s, const char *lit, size_t n)
{
    return s.n == n && memcmp(s.p, lit, n) == 0;
}

/* ---- header lines ---- */

struct header {
    struct span comm, pid, tid; /* pid.p == NULL: "?" */
    size_t after;               /* offset just past the pid/tid token */
};

/* Where a pid or tid at s[k..e) ends: after its digits, or after "-1", which is how perf
 * prints the ids of a thread it does not know (its comm is then ":-1"). The Perl script
 * takes only digits, and so read such a header on to the period, naming the process after
 * the timestamp: a new process per sample. Returns k when there is no id. */
static size_t id_end(const char *s, size_t k, size_t e, int as_script)
{
    if (!as_script && e - k >= 2 && s[k] == '-' && s[k + 1] == '1' &&
        (e - k == 2 || !is_digit((unsigned char)s[k + 2])))
        return k + 2;
    while (k < e && is_digit((unsigned char)s[k]))
        k++;
    return k;
}

/* /^(\S.+?)\s+(\d+)[/]*(\d+)*\s+/ on s[0..n), s[0] not whitespace, where an id may also be
 * "-1" (id_end). The lazy comm ends at the first whitespace at offset >= 2 whose whitespace
 * run is followed by a token of the form id, slashes, id, itself followed by whitespace: a
 * shorter whitespace run would leave whitespace where a digit must be, and the token must
 * end at whitespace. */
static int match_header(const char *s, size_t n, struct header *h, int as_script)
{
    size_t i = 1;
    for (;;) {
        while (i < n && !is_ws((unsigned char)s[i]))
            i++;
        size_t r = i; /* a whitespace run starts here */
        while (i < n && is_ws((unsigned char)s[i]))
            i++;
        if (i >= n)
            return 0;
        size_t t0 = i, l = r < 2 ? 2 : r;
        while (i < n && !is_ws((unsigned char)s[i]))
            i++;
        if (l >= t0 || i >= n)
            continue; /* the run has no offset >= 2, or the token is not followed by space */
        size_t k = id_end(s, t0, i, as_script);
        if (k == t0)
            continue;
        size_t pid_end = k;
        while (k < i && s[k] == '/')
            k++;
        size_t tid0 = k;
        if (k > pid_end) /* a "-1" right after the pid is not a tid */
            k = id_end(s, k, i, as_script);
        if (k != i)
            continue;
        h->comm = (struct span){s, l};
        h->pid = (struct span){s + t0, pid_end - t0};
        h->tid = (struct span){s + tid0, i - tid0};
        h->after = i;
        /* Perl's `not $tid`: undefined, or the string "0" */
        if (h->tid.n == 0 || span_eq(h->tid, "0", 1)) {
            h->tid = h->pid;
            h->pid.p = NULL;
            h->pid.n = 0;
        }
        return 1;
    }
}

/* /:\s*(\d+)*\s+(\S+):\s*$/: the last token must end with ':' (the event is the rest of it)
 * and be preceded by ':', optional whitespace, optional digits (the period) and
 * whitespace. Only one ':' can start a match: what lies between it and the event is
 * whitespace and digits, so it is the maximal such stretch before the event. hint, when
 * not NULL, is the event most lines name, which saves a scan. *colon is the offset of the
 * ':' (which ends perf's timestamp). */
static int match_event(const char *s, size_t n, const struct span *hint, struct span *event,
                       struct span *period, size_t *colon)
{
    size_t e1 = n;
    while (e1 > 0 && is_ws((unsigned char)s[e1 - 1]))
        e1--;
    if (e1 < 2 || s[e1 - 1] != ':')
        return 0;
    size_t e0;
    if (hint && e1 >= hint->n + 2 && is_ws((unsigned char)s[e1 - 2 - hint->n]) &&
        memcmp(s + e1 - 1 - hint->n, hint->p, hint->n) == 0) {
        e0 = e1 - 1 - hint->n;
    } else {
        e0 = e1 - 1;
        while (e0 > 0 && !is_ws((unsigned char)s[e0 - 1]))
            e0--;
    }
    if (e0 == 0 || e1 - e0 < 2)
        return 0;
    size_t q = e0 - 1; /* s[q] is whitespace */
    while (q > 0 && is_ws((unsigned char)s[q - 1]))
        q--;
    size_t d1 = q;
    while (q > 0 && is_digit((unsigned char)s[q - 1]))
        q--;
    size_t d0 = q;
    while (q > 0 && is_ws((unsigned char)s[q - 1]))
        q--;
    if (q == 0 || s[q - 1] != ':')
        return 0;
    *event = (struct span){s + e0, e1 - 1 - e0};
    *period = (struct span){s + d0, d1 - d0};
    *colon = q - 1;
    return 1;
}

static int64_t parse_i64(struct span d)
{
    uint64_t v = 0;
    for (size_t i = 0; i < d.n; i++) {
        if (v > (uint64_t)INT64_MAX / 10)
            return INT64_MAX;
        v = v * 10 + (uint64_t)(d.p[i] - '0');
    }
    return v > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)v;
}

/* A pid or tid as id_end() found it; -1 for perf's "-1". */
static int64_t parse_id(struct span d)
{
    return d.n == 2 && d.p[0] == '-' ? -1 : parse_i64(d);
}

static const uint32_t pow10[10] = {1,      10,      100,      1000,      10000,
                                   100000, 1000000, 10000000, 100000000, 1000000000};

/* seconds.fraction in s[t0..t1) as nanoseconds, or -1. */
static int64_t parse_time(const char *s, size_t t0, size_t t1)
{
    size_t k = t0;
    uint64_t sec = 0;
    while (k < t1 && is_digit((unsigned char)s[k]) && sec < 1000000000ull)
        sec = sec * 10 + (uint64_t)(s[k++] - '0');
    if (k == t0 || k >= t1 || s[k] != '.' || sec > 9000000000ull)
        return -1;
    size_t f0 = ++k;
    uint64_t frac = 0;
    while (k < t1 && is_digit((unsigned char)s[k])) {
        if (k - f0 < 9)
            frac = frac * 10 + (uint64_t)(s[k] - '0');
        k++;
    }
    if (k == f0 || k != t1)
        return -1;
    return (int64_t)(sec * 1000000000ull + frac * pow10[9 - (k - f0 < 9 ? k - f0 : 9)]);
}

/* perf's "seconds.micros:" field (not something the Perl script reads): the token that
 * ends with the ':' before the period and event (colon, when not 0), where perf prints it,
 * else the first token after the pid/tid of the form digits '.' digits, optionally followed
 * by ':'. */
static int64_t header_time(const char *s, size_t n, size_t i, size_t colon)
{
    if (colon > i) {
        size_t t0 = colon;
        while (t0 > i && !is_ws((unsigned char)s[t0 - 1]))
            t0--;
        int64_t t = parse_time(s, t0, colon);
        if (t >= 0)
            return t;
    }
    while (i < n) {
        while (i < n && is_ws((unsigned char)s[i]))
            i++;
        size_t t0 = i;
        while (i < n && !is_ws((unsigned char)s[i]))
            i++;
        size_t t1 = i > t0 && s[i - 1] == ':' ? i - 1 : i;
        int64_t t = parse_time(s, t0, t1);
        if (t >= 0)
            return t;
    }
    return 0;
}

/* ---- stack lines ---- */

/* Where a stack line's address ends: s[a..bmax) is the \w run after the leading whitespace,
 * s[bmax..cmax) the whitespace after it. */
struct frame_pos {
    size_t a, bmax, cmax;
};

static void frame_pos(const char *s, size_t n, struct frame_pos *fp)
{
    size_t i = 0;
    while (i < n && is_ws((unsigned char)s[i]))
        i++;
    fp->a = i;
    while (i < n && is_word((unsigned char)s[i]))
        i++;
    fp->bmax = i;
    while (i < n && is_ws((unsigned char)s[i]))
        i++;
    fp->cmax = i;
}

/* /^\s*(\w+)\s*(.+) \((.*)\)/, not anchored at the end. Greedy (.+) and (.*) put the dso
 * between the last " (" that has a ')' after it and the last ')'. If that " (" comes too
 * early for (.+) to hold a character, the engine backtracks: first the whitespace after
 * the address gives way, then the address loses its last character.
 * Returns 1 for the usual match (the symbol starts at cmax), 2 for a match by
 * backtracking, 0 for no match decided by s[cmax - 1..n), -1 for no match decided by
 * bytes before that: a line's frames depend on s[cmax - 1..n) alone (and the address,
 * with --addrs) unless this returns 2 or -1. */
static int match_frame(const char *s, size_t n, const struct frame_pos *fp, struct span *pc,
                       struct span *raw, struct span *mod)
{
    size_t a = fp->a, bmax = fp->bmax, cmax = fp->cmax;
    if (bmax == a)
        return 0;
    const char *rp = memrchr(s + bmax, ')', n - bmax);
    if (!rp)
        return 0;
    size_t r = (size_t)(rp - s), d = 0;
    const char *op = s + r;
    for (;;) {
        op = memrchr(s + bmax, '(', (size_t)(op - (s + bmax)));
        if (!op || op - s < 1)
            return 0;
        if (op[-1] == ' ') {
            d = (size_t)(op - s) - 1;
            break;
        }
    }
    size_t b = bmax, c;
    int how = 2;
    if (d >= cmax + 1) {
        c = cmax;
        how = 1;
    } else if (d >= bmax + 1) {
        c = d - 1;
    } else if (d == bmax && bmax >= a + 2) {
        c = b = bmax - 1;
    } else {
        return -1;
    }
    *pc = (struct span){s + a, b - a};
    *raw = (struct span){s + c, d - c};
    *mod = (struct span){s + d + 2, r - d - 2};
    return how;
}

/* Whether a frame as perf prints one after the fields of a header starts at s[i..n):
 * whitespace, the ip (a whole token of hex digits), whitespace and the usual match of
 * match_frame (symbol, then the dso in parentheses). */
static int frame_at(const char *s, size_t n, size_t i)
{
    struct frame_pos fp;
    struct span pc, raw, mod;
    frame_pos(s + i, n - i, &fp);
    if (fp.a == 0 || fp.bmax == fp.a || fp.cmax == fp.bmax)
        return 0;
    for (size_t a = fp.a; a < fp.bmax; a++)
        if (!is_lower_hex((unsigned char)s[i + a]))
            return 0;
    return match_frame(s + i, n - i, &fp, &pc, &raw, &mod) == 1;
}

/* A sample of a recording without call chains: perf script prints its ip, symbol and dso
 * on the header line, after the other fields, and no empty line after it; as its comm is
 * right-aligned, the line starts with whitespace:
 *   "          sh  5894   681.403828:    1001001 cpu-clock:      55b3b748ecec sym+0x0 (dso)"
 * Splits s[0..n) into the header (h; *named says whether it names an event, then ev, per
 * and colon are match_event's on the header) and the frame part starting at *frame, which
 * reads as a stack line of its own. The frame follows the ids, a "[cpu]" or a field ending
 * with ':' (the time, the event); where several places would do (a period reads as an
 * ip), the last one. */
static int frame_header_split(const char *s, size_t n, struct header *h, int *named,
                              struct span *ev, struct span *per, size_t *colon, size_t *frame)
{
    size_t e = n;
    while (e > 0 && is_ws((unsigned char)s[e - 1]))
        e--;
    if (e == 0 || s[e - 1] != ')')
        return 0;
    size_t k0 = 0;
    while (k0 < n && is_ws((unsigned char)s[k0]))
        k0++;
    if (k0 == n || !match_header(s + k0, n - k0, h, 0))
        return 0;
    h->after += k0;
    size_t i = h->after, f = 0;
    for (int may = 1; i < n;) {
        if (may && frame_at(s, n, i))
            f = i;
        size_t t0 = i;
        while (t0 < n && is_ws((unsigned char)s[t0]))
            t0++;
        size_t t1 = t0;
        while (t1 < n && !is_ws((unsigned char)s[t1]))
            t1++;
        if (t1 >= n)
            break;
        may = s[t1 - 1] == ':' || (s[t0] == '[' && s[t1 - 1] == ']');
        i = t1;
    }
    if (!f)
        return 0;
    *colon = 0;
    *named = match_event(s, f, NULL, ev, per, colon);
    *frame = f;
    return 1;
}

int sc_perf_frame_header(const char *s, size_t n)
{
    struct header h;
    struct span ev, per;
    size_t colon, f;
    int named;
    return n <= MAX_LINE && frame_header_split(s, n, &h, &named, &ev, &per, &colon, &f);
}

/* s/\+0x[\da-f]+$// */
static void strip_offset(struct span *raw)
{
    size_t h = raw->n;
    while (h > 0 && is_lower_hex((unsigned char)raw->p[h - 1]))
        h--;
    if (h < raw->n && h >= 3 && memcmp(raw->p + h - 3, "+0x", 3) == 0)
        raw->n = h - 3;
}

static const char *find2(const char *s, size_t n, char a, char b)
{
    while (n >= 2) {
        const char *p = memchr(s, a, n - 1);
        if (!p)
            return NULL;
        if (p[1] == b)
            return p;
        n -= (size_t)(p + 1 - s);
        s = p + 1;
    }
    return NULL;
}

static int contains(const char *s, size_t n, const char *lit, size_t ln)
{
    return ln <= n && memmem(s, n, lit, ln) != NULL;
}

/* The generic tidy's cut: unless the name looks like a Go method (/\.\(.*\)\./), drop
 * everything from the first '(' that does not open "(anonymous namespace)". */
static size_t paren_cut(const char *s, size_t n)
{
    const char *go = find2(s, n, '.', '(');
    if (go && find2(go + 2, n - (size_t)(go + 2 - s), ')', '.'))
        return n;
    static const char anon[] = "anonymous namespace)";
    for (const char *p = s; (p = memchr(p, '(', n - (size_t)(p - s))) != NULL; p++) {
        size_t rest = n - (size_t)(p + 1 - s);
        if (!(rest >= sizeof anon - 1 && memcmp(p + 1, anon, sizeof anon - 1) == 0))
            return (size_t)(p - s);
    }
    return n;
}

/* m:/tmp/perf-\d+\.map: */
static int is_jit_dso(struct span m)
{
    const char *s = m.p, *e = m.p + m.n;
    while ((s = memmem(s, (size_t)(e - s), "/tmp/perf-", 10)) != NULL) {
        const char *d = s + 10, *k = d;
        while (k < e && is_digit((unsigned char)*k))
            k++;
        if (k > d && e - k >= 4 && memcmp(k, ".map", 4) == 0)
            return 1;
        s++;
    }
    return 0;
}

/* ---- per-thread parser ---- */

/* A string of a worker: frames, process frames and comms, pointing into the input or the
 * worker's arena. */
struct wstr {
    const char *ptr;
    uint32_t len;
    uint32_t frame; /* used as a frame */
};

/* Open addressing over (bytes -> u32); ptr == NULL marks an empty slot. */
struct entry {
    uint64_t hash;
    const char *ptr;
    uint32_t len, val;
};

struct table {
    struct entry *e;
    uint32_t mask, count;
};

struct wsample {
    uint32_t off, n; /* frames but the process frame (worker string ids, leaf first) in pool */
    uint32_t pname, comm;
    int64_t period, time_ns, pid, tid; /* pid, tid -1: none */
};

struct group {
    uint32_t off, n;  /* frames of a stack line (in gids) or of a sample body (in pool) */
    const char *body; /* a sample body: its bytes and lines */
    uint32_t len, nlines;
    uint32_t unrecognized; /* lines in it the script does not recognize */
    int nocache;           /* a stack line whose frames cannot be cached */
};

/* A cache of byte strings (stack lines, sample bodies) whose frames are known, one table
 * per java flag (which changes the frames); it switches itself off when it does not pay. */
struct cache {
    struct table t[2];
    struct group *v;
    uint32_t n, cap;
    int off;
    uint64_t lookups, hits;
};

struct worker {
    const char *start, *end;
    const struct sc_perf_opts *opts;
    const struct sc_limits *lim;
    struct span event; /* the kept event; p == NULL: none known */

    struct sc_arena arena;
    struct table strtab;
    struct wstr *strs;
    uint32_t nstrs, capstrs;

    /* Stack lines and whole sample bodies repeat byte for byte (same addresses, symbols and
     * dsos), and the same bytes give the same frames. */
    struct cache lcache, bcache;
    struct table firsts[2]; /* first line of a sample body -> the last body (bcache group) */
    uint32_t *gids;         /* frames of cached lines */
    uint32_t ngids, capgids;

    /* the sample being read */
    int have_pname, java;
    uint32_t pname, comm;
    int64_t period, time_ns, pid, tid;
    uint32_t cur; /* its frames start here in pool */
    struct thread {
        struct header h; /* a recent header's comm, pid and tid, and what they gave */
        uint32_t comm, pname;
        int java;
        int64_t pid, tid;
    } threads[8];
    uint32_t nthreads;
    /* Recent headers of the usual shape, "... TIME: PERIOD EVENT:". A header with the same
     * bytes before the timestamp and from the ':' after it parses the same: match_header's
     * match ends before the timestamp, match_event's starts at that ':'. */
    struct tmpl {
        const char *line;
        size_t t0, colon, n;
        int kept;
        int64_t period, pid, tid;
        uint32_t pname, comm;
        int java;
    } tmpls[8];
    uint32_t ntmpls;

    struct wsample *samples;
    uint32_t nsamples, capsamples;
    uint32_t *pool;
    uint32_t npool, cappool;

    char *scr[2];
    uint32_t scrcap; /* of both */

    uint64_t nlocs, nlabels; /* sample_locs and labels the samples need */

    /* building the profile: worker string id -> profile string and location; where this
     * worker's samples, locations and labels go */
    struct sc_profile *p;
    uint32_t *gstr, *gloc;
    uint32_t sample_base, loc_base, label_base, kcomm, kpid, ktid;

    uint64_t lines, unrecognized, other_events;
    uint64_t one_line; /* as_script: one-line samples the script drops */
    struct span other_event;
    int unterminated;

    int rc;
    uint64_t err_line; /* in this piece, from 1 */
    char err[SC_ERR_LEN];
};

static int table_rehash(struct table *t)
{
    uint64_t cap = t->mask ? ((uint64_t)t->mask + 1) * 2 : 256;
    if (cap > (1u << 30))
        return SC_ELIMIT;
    struct entry *e = calloc((size_t)cap, sizeof *e);
    if (!e)
        return SC_ENOMEM;
    uint32_t mask = (uint32_t)cap - 1;
    if (t->e) {
        for (uint32_t i = 0; i <= t->mask; i++) {
            if (!t->e[i].ptr)
                continue;
            uint32_t j = (uint32_t)t->e[i].hash & mask;
            while (e[j].ptr)
                j = (j + 1) & mask;
            e[j] = t->e[i];
        }
    }
    free(t->e);
    t->e = e;
    t->mask = mask;
    return 0;
}

/* Finds s, or claims an empty slot for it (*found = 0, val to be set by the caller).
 * NULL when out of memory. The slot is valid until the next call. */
static struct entry *table_get(struct table *t, uint64_t h, const char *s, uint32_t n, int *found)
{
    if ((t->count + 1) * 2 > t->mask + 1 && table_rehash(t))
        return NULL;
    for (uint32_t j = (uint32_t)h & t->mask;; j = (j + 1) & t->mask) {
        struct entry *e = &t->e[j];
        if (!e->ptr) {
            e->hash = h;
            e->ptr = s ? s : "";
            e->len = n;
            t->count++;
            *found = 0;
            return e;
        }
        if (e->hash == h && e->len == n && memcmp(e->ptr, s, n) == 0) {
            *found = 1;
            return e;
        }
    }
}

static void table_release(struct table *t)
{
    free(t->e);
    memset(t, 0, sizeof *t);
}

/* Looks s up. Returns 1 with *g set when it is known; 0 when not, with *fresh the index of
 * a new group for the caller to fill in (UINT32_MAX when the cache is off); SC_ENOMEM. */
static int cache_get(struct cache *c, int java, const char *s, size_t n, struct group **g,
                     uint32_t *fresh)
{
    *fresh = UINT32_MAX;
    if (c->off)
        return 0;
    if ((++c->lookups & 0xfff) == 0 && c->hits < c->lookups / 4) {
        c->off = 1;
        return 0;
    }
    int found;
    struct entry *e = table_get(&c->t[java], sc_hash64(s, n), s, (uint32_t)n, &found);
    if (!e)
        return SC_ENOMEM;
    if (found) {
        c->hits++;
        *g = &c->v[e->val];
        return 1;
    }
    if (sc_grow_array(&c->v, &c->cap, (uint64_t)c->n + 1, sizeof *c->v))
        return SC_ENOMEM;
    e->val = *fresh = c->n;
    c->v[c->n++] = (struct group){0, 0, NULL, 0, 0, 0, 0};
    return 0;
}

static void cache_release(struct cache *c)
{
    table_release(&c->t[0]);
    table_release(&c->t[1]);
    free(c->v);
    memset(c, 0, sizeof *c);
}

static int fail(struct worker *w, int code, const char *fmt, const char *arg)
{
    if (!w->rc) {
        w->rc = code;
        w->err_line = w->lines;
        snprintf(w->err, sizeof w->err, fmt, arg);
    }
    return code;
}

/* The depth limit, named (pushes and cached groups share it). */
static int too_deep(struct worker *w)
{
    char msg[96];
    snprintf(msg, sizeof msg, "stack deeper than the limit of %u frames (limits.max_stack_depth)",
             (unsigned)w->lim->max_stack_depth);
    return fail(w, SC_ELIMIT, "%s", msg);
}

static int oom(struct worker *w)
{
    return fail(w, SC_ENOMEM, "%s", "out of memory");
}

/* Interns s; copy says s lives in scratch space and must be copied when new. Returns the
 * worker's string id or a negative SC_E*. */
static int64_t intern(struct worker *w, const char *s, size_t n, int copy)
{
    int found;
    struct entry *e = table_get(&w->strtab, sc_hash64(s, n), s, (uint32_t)n, &found);
    if (!e)
        return oom(w);
    if (found)
        return e->val;
    if (copy) {
        char *c = sc_arena_strndup(&w->arena, s, n);
        if (!c)
            return oom(w);
        e->ptr = c;
    }
    if (sc_grow_array(&w->strs, &w->capstrs, (uint64_t)w->nstrs + 1, sizeof *w->strs))
        return oom(w);
    w->strs[w->nstrs] = (struct wstr){e->ptr, (uint32_t)n, 0};
    e->val = w->nstrs;
    return w->nstrs++;
}

static int scratch(struct worker *w, size_t need)
{
    const struct sc_grow_part bufs[] = {SC_GROW_PART(w->scr[0]), SC_GROW_PART(w->scr[1])};
    return sc_grow_arrays(&w->scrcap, need, -1, bufs, 2) ? oom(w) : 0;
}

/* Pushes a frame, leaving room for the process frame that ends every stack. */
static int push(struct worker *w, uint32_t id)
{
    if (w->npool - w->cur + 1 >= w->lim->max_stack_depth)
        return too_deep(w);
    if (w->npool == w->cappool &&
        sc_grow_array(&w->pool, &w->cappool, (uint64_t)w->npool + 1, sizeof *w->pool))
        return oom(w);
    w->pool[w->npool++] = id;
    w->strs[id].frame = 1;
    return 0;
}

/* The frame one "->"-separated piece of a symbol becomes (the script's loop body): points
 * *out at it, in f or in a or b (scratch of fl + mod.n + pc.n + 16 bytes each), and returns
 * its length; *copy says it lies in scratch. */
static size_t tidy_frame(const struct sc_perf_opts *o, int java, const char *f, size_t fl,
                         int inlined, struct span pc, struct span mod, int *kind, char *a, char *b,
                         const char **out, int *copy)
{
    const char *t = f;
    size_t tl = fl;
    int where = 0; /* 0 input, 1 a, 2 b */
    if (fl == 9 && memcmp(f, "[unknown]", 9) == 0) {
        size_t k = 0;
        a[k++] = '[';
        if (!span_eq(mod, "[unknown]", 9)) {
            const char *slash = memrchr(mod.p, '/', mod.n);
            const char *base = slash ? slash + 1 : mod.p;
            memcpy(a + k, base, (size_t)(mod.p + mod.n - base));
            k += (size_t)(mod.p + mod.n - base);
        } else {
            /* NOLINTNEXTLINE(bugprone-not-null-terminated-result): a is counted by k */
            memcpy(a + k, "unknown", 7);
            k += 7;
        }
        if (o->addrs) {
            a[k++] = ' ';
            a[k++] = '<';
            memcpy(a + k, pc.p, pc.n);
            k += pc.n;
            a[k++] = '>';
        }
        a[k++] = ']';
        t = a;
        tl = k;
        where = 1;
    }
    unsigned char seen = 0;
    for (size_t i = 0; i < tl; i++)
        seen |= cls[(unsigned char)t[i]];
    if ((seen & C_TIDY) && memchr(t, '(', tl))
        tl = paren_cut(t, tl);
    if ((seen & C_TIDY) && (memchr(t, ';', tl) || memchr(t, '"', tl) || memchr(t, '\'', tl))) {
        size_t k = 0;
        for (size_t i = 0; i < tl; i++) {
            char c = t[i];
            if (c == '"' || c == '\'')
                continue;
            b[k++] = c == ';' ? ':' : c;
        }
        t = b;
        tl = k;
        where = 2;
    }
    if (java && tl > 0 && t[0] == 'L' && memchr(t, '/', tl)) {
        t++;
        tl--;
    }
    const char *suffix = NULL;
    if (inlined) {
        if (!contains(t, tl, "_[i]", 4))
            suffix = "_[i]";
    } else {
        if (*kind < 0) {
            *kind = 0;
            if (o->kernel && mod.n > 0 &&
                (mod.p[0] == '[' || (mod.n >= 7 && memcmp(mod.p + mod.n - 7, "vmlinux", 7) == 0)) &&
                !contains(mod.p, mod.n, "unknown", 7))
                *kind = 1;
            else if (o->jit && is_jit_dso(mod))
                *kind = 2;
        }
        if (*kind == 1)
            suffix = "_[k]";
        else if (*kind == 2 && !contains(t, tl, "_[j]", 4))
            suffix = "_[j]";
    }
    if (suffix) {
        /* t may start inside b, past a Java class's 'L': the suffix goes after t's end */
        memmove(b, t, tl);
        t = b;
        where = 2;
        memcpy(b + tl, suffix, 4);
        tl += 4;
    }
    *out = t;
    *copy = where != 0;
    return tl;
}

/* The frames a symbol of a stack line gives, callers first as the script meets them (the
 * caller reverses "a->b" pieces): calls fn for each. Returns 0, 1 when the symbol gives no
 * frame, or fn's non-zero result. */
static int symbol_frames(const struct sc_perf_opts *o, int java, struct span raw, struct span pc,
                         struct span mod, char *a, char *b,
                         int (*fn)(void *ctx, const char *s, size_t n, int copy), void *ctx)
{
    strip_offset(&raw);
    if (raw.n > 0 && raw.p[0] == '(')
        return 1; /* a process name */
    /* split /->/ drops trailing empty fields (and so yields nothing for "" or "->") */
    while (raw.n >= 2 && raw.p[raw.n - 2] == '-' && raw.p[raw.n - 1] == '>')
        raw.n -= 2;
    if (raw.n == 0)
        return 1;
    int kind = -1, i = 0;
    const char *f = raw.p, *e = raw.p + raw.n;
    for (;; i++) {
        const char *arrow = find2(f, (size_t)(e - f), '-', '>');
        const char *fe = arrow ? arrow : e;
        const char *t;
        int copy;
        size_t tl =
            tidy_frame(o, java, f, (size_t)(fe - f), i > 0, pc, mod, &kind, a, b, &t, &copy);
        int rc = fn(ctx, t, tl, copy);
        if (rc)
            return rc;
        if (!arrow)
            break;
        f = arrow + 2;
    }
    return 0;
}

int sc_perf_line_frames(const struct sc_perf_opts *o, int java, const char *line, size_t n,
                        char *scratch, sc_perf_frame_fn fn, void *ctx)
{
    static const struct sc_perf_opts defaults;
    struct frame_pos fp;
    struct span pc, raw, mod;
    frame_pos(line, n, &fp);
    if (match_frame(line, n, &fp, &pc, &raw, &mod) <= 0)
        return 0;
    int rc =
        symbol_frames(o ? o : &defaults, java, raw, pc, mod, scratch, scratch + n + 16, fn, ctx);
    return rc == 1 ? 0 : rc;
}

struct push_ctx {
    struct worker *w;
};

static int push_frame(void *ctx, const char *t, size_t tl, int copy)
{
    struct worker *w = ((struct push_ctx *)ctx)->w;
    int64_t id = intern(w, t, tl, copy);
    if (id < 0 || push(w, (uint32_t)id))
        return w->rc;
    return 0;
}

/* A stack line: pushes its frames (leaf first) onto the current stack. Returns 0 or SC_E*;
 * *how is what match_frame() said. */
static int parse_stack_line(struct worker *w, const char *s, size_t n, const struct frame_pos *fp,
                            int *how)
{
    struct span pc, raw, mod;
    *how = match_frame(s, n, fp, &pc, &raw, &mod);
    if (*how <= 0) {
        w->unrecognized++;
        return 0;
    }
    if (scratch(w, n + 16))
        return w->rc;
    uint32_t first = w->npool;
    struct push_ctx pcx = {w};
    int rc = symbol_frames(w->opts, w->java, raw, pc, mod, w->scr[0], w->scr[1], push_frame, &pcx);
    if (rc == 1)
        return 0;
    if (rc)
        return w->rc;
    /* "a->b" is a calling b inlined: b is nearer the leaf */
    for (uint32_t lo = first, hi = w->npool - 1; lo < hi; lo++, hi--) {
        uint32_t t = w->pool[lo];
        w->pool[lo] = w->pool[hi];
        w->pool[hi] = t;
    }
    return 0;
}

/* A stack line. The same text after the address gives the same frames (unless --addrs
 * shows the address, or the regex backtracks into it): those are cached. */
static int stack_line(struct worker *w, const char *s, size_t n)
{
    struct frame_pos fp;
    frame_pos(s, n, &fp);
    if (fp.bmax == fp.a) {
        w->unrecognized++;
        return 0;
    }
    if (!w->have_pname) {
        /* ignored, but the script still warns about what it does not recognize */
        struct span pc, raw, mod;
        w->unrecognized += match_frame(s, n, &fp, &pc, &raw, &mod) <= 0;
        return 0;
    }
    size_t k0 = w->opts->addrs ? 0 : fp.cmax - 1;
    struct group *g;
    uint32_t fresh;
    int how, hit = cache_get(&w->lcache, w->java, s + k0, n - k0, &g, &fresh);
    if (hit < 0)
        return oom(w);
    if (hit && !g->nocache) {
        w->unrecognized += g->unrecognized;
        if (g->n == 0)
            return 0;
        if (w->npool - w->cur + g->n >= w->lim->max_stack_depth)
            return too_deep(w);
        if (sc_grow_array(&w->pool, &w->cappool, (uint64_t)w->npool + g->n, sizeof *w->pool))
            return oom(w);
        memcpy(w->pool + w->npool, w->gids + g->off, g->n * sizeof *w->pool);
        w->npool += g->n;
        return 0;
    }
    uint32_t before = w->npool;
    if (parse_stack_line(w, s, n, &fp, &how))
        return w->rc;
    if (fresh == UINT32_MAX)
        return 0;
    if ((how == 2 || how < 0) && k0 > 0) {
        w->lcache.v[fresh].nocache = 1; /* parse each time */
        return 0;
    }
    uint32_t k = w->npool - before;
    if (sc_grow_array(&w->gids, &w->capgids, (uint64_t)w->ngids + k, sizeof *w->gids))
        return oom(w);
    if (k)
        memcpy(w->gids + w->ngids, w->pool + before, k * sizeof *w->gids);
    w->lcache.v[fresh] = (struct group){w->ngids, k, NULL, 0, 0, how <= 0, 0};
    w->ngids += k;
    return 0;
}

static int same_span(struct span a, struct span b)
{
    return a.n == b.n && (a.p == b.p || (a.p && b.p && memcmp(a.p, b.p, a.n) == 0));
}

/* The process frame of a header: comm, comm-pid or comm-pid/tid with spaces made '_'. */
static int64_t process_frame(struct worker *w, const struct header *h, int64_t comm)
{
    const struct sc_perf_opts *o = w->opts;
    if (!o->pid && !o->tid && !memchr(h->comm.p, ' ', h->comm.n))
        return comm;
    if (scratch(w, h->comm.n + h->pid.n + h->tid.n + 8))
        return w->rc;
    char *b = w->scr[0];
    size_t k = 0;
    for (size_t i = 0; i < h->comm.n; i++)
        b[k++] = h->comm.p[i] == ' ' ? '_' : h->comm.p[i];
    if (o->pid || o->tid) {
        b[k++] = '-';
        if (h->pid.p) {
            memcpy(b + k, h->pid.p, h->pid.n);
            k += h->pid.n;
        } else {
            b[k++] = '?';
        }
        if (o->tid) {
            b[k++] = '/';
            memcpy(b + k, h->tid.p, h->tid.n);
            k += h->tid.n;
        }
    }
    return intern(w, b, k, 1);
}

/* A header like a recent one but for its timestamp: sets the sample up and returns 1, or
 * 2 for a header of another event; 0 when there is none such. */
static int header_like(struct worker *w, const char *s, size_t n)
{
    for (uint32_t i = 0; i < w->ntmpls && i < 8; i++) {
        const struct tmpl *m = &w->tmpls[i];
        if (n <= m->t0 || memcmp(s, m->line, m->t0) != 0)
            continue;
        size_t c = m->t0;
        while (c < n && is_digit((unsigned char)s[c]))
            c++;
        if (c < n && s[c] == '.')
            c++;
        while (c < n && is_digit((unsigned char)s[c]))
            c++;
        if (c >= n || s[c] != ':' || n - c != m->n - m->colon ||
            memcmp(s + c, m->line + m->colon, n - c) != 0)
            continue;
        int64_t t = parse_time(s, m->t0, c);
        if (t < 0)
            continue;
        if (!m->kept) {
            w->other_events++;
            return 2;
        }
        w->java = m->java;
        w->pid = m->pid;
        w->tid = m->tid;
        w->have_pname = 1;
        w->pname = m->pname;
        w->comm = m->comm;
        w->period = m->period;
        w->time_ns = t;
        return 1;
    }
    return 0;
}

/* Sets up the sample a header starts: h, its event ev with the period per (ev NULL when the
 * header names no event) and colon as match_event() gave them. Returns 1 when the sample is
 * kept, 0 for a sample of another event (which changes nothing), or SC_E*. When templ is
 * set, s[0..n) may become a template for the headers that follow (header_like). */
static int start_sample(struct worker *w, const char *s, size_t n, const struct header *h,
                        const struct span *ev, struct span per, size_t colon, int templ)
{
    int64_t period = 1;
    int kept = 1;
    if (ev) {
        if (w->event.p && !(ev->n == w->event.n && memcmp(ev->p, w->event.p, ev->n) == 0)) {
            if (!w->other_events++)
                w->other_event = *ev;
            kept = 0;
        } else if (per.n > 0 && !span_eq(per, "0", 1)) {
            period = parse_i64(per);
        }
    }
    /* samples come from a few threads at a time: remember the last ones */
    struct thread *t = NULL;
    for (uint32_t i = 0; kept && i < w->nthreads && i < 8; i++) {
        struct thread *c = &w->threads[i];
        if (same_span(h->comm, c->h.comm) && same_span(h->pid, c->h.pid) &&
            same_span(h->tid, c->h.tid)) {
            t = c;
            break;
        }
    }
    if (kept && !t) {
        int64_t comm = intern(w, h->comm.p, h->comm.n, 0);
        int64_t pname = comm < 0 ? comm : process_frame(w, h, comm);
        if (pname < 0)
            return w->rc;
        t = &w->threads[w->nthreads++ % 8];
        t->h = *h;
        t->comm = (uint32_t)comm;
        t->pname = (uint32_t)pname;
        t->java = h->comm.n >= 4 && memcmp(h->comm.p, "java", 4) == 0;
        t->pid = h->pid.p ? parse_id(h->pid) : -1;
        t->tid = parse_id(h->tid);
    }
    /* the timestamp ending at the event's ':' makes a template */
    size_t t0 = colon;
    while (t0 > h->after && !is_ws((unsigned char)s[t0 - 1]))
        t0--;
    if (templ && colon > h->after && t0 > h->after && parse_time(s, t0, colon) >= 0) {
        struct tmpl *m = &w->tmpls[w->ntmpls++ % 8];
        *m = (struct tmpl){s, t0, colon, n, kept, period, 0, 0, 0, 0, 0};
        if (kept) {
            m->pid = t->pid;
            m->tid = t->tid;
            m->pname = t->pname;
            m->comm = t->comm;
            m->java = t->java;
        }
    }
    if (!kept)
        return 0;
    w->java = t->java;
    w->pid = t->pid;
    w->tid = t->tid;
    w->have_pname = 1;
    w->pname = t->pname;
    w->comm = t->comm;
    w->period = period;
    w->time_ns = header_time(s, n, h->after, colon);
    return 1;
}

/* A line that starts with a non-space: a sample header, or else maybe a stack line.
 * Returns 1 when it was a header of a kept event, 0 or SC_E*. */
static int header_line(struct worker *w, const char *s, size_t n)
{
    int like = header_like(w, s, n);
    if (like)
        return like == 1;
    struct header h;
    if (!match_header(s, n, &h, w->opts->as_script))
        return stack_line(w, s, n);
    struct span ev, per = {NULL, 0};
    size_t colon = 0;
    int named = match_event(s, n, w->event.p ? &w->event : NULL, &ev, &per, &colon);
    return start_sample(w, s, n, &h, named ? &ev : NULL, per, colon, 1);
}

/* How many labels a sample gets: comm, then pid and tid when perf printed them (-1: not),
 * at most the limit's. */
static uint32_t labels_of(const struct sc_limits *lim, int64_t pid, int64_t tid)
{
    uint32_t want = 1 + (pid >= 0) + (tid >= 0);
    return want < lim->max_labels ? want : lim->max_labels;
}

static int record_sample(struct worker *w, uint32_t off, uint32_t nframes)
{
    if (w->nsamples >= w->lim->max_samples) {
        char msg[64];
        snprintf(msg, sizeof msg, "more than %u samples (limits.max_samples)",
                 (unsigned)w->lim->max_samples);
        return fail(w, SC_ELIMIT, "%s", msg);
    }
    if (w->nsamples == w->capsamples &&
        sc_grow_array(&w->samples, &w->capsamples, (uint64_t)w->nsamples + 1, sizeof *w->samples))
        return oom(w);
    w->samples[w->nsamples++] = (struct wsample){
        off, nframes, w->pname, w->comm, w->period, w->time_ns, w->pid, w->tid,
    };
    w->nlocs += nframes + 1;
    w->nlabels += labels_of(w->lim, w->pid, w->tid);
    w->strs[w->pname].frame = 1;
    w->have_pname = 0;
    return 0;
}

/* An empty line: the sample, if any, is complete. */
static int end_sample(struct worker *w)
{
    if (!w->have_pname)
        return 0;
    uint32_t off = w->cur;
    w->cur = w->npool;
    return record_sample(w, off, w->npool - off);
}

/* A sample of a recording without call chains, all on one line (frame_header_split), when
 * s[0..n) is one: counts it (when of the kept event) and returns 1; 0 when it is not one;
 * SC_E*. */
static int frame_header(struct worker *w, const char *s, size_t n)
{
    struct header h;
    struct span ev, per = {NULL, 0};
    size_t colon, f;
    int named;
    if (!frame_header_split(s, n, &h, &named, &ev, &per, &colon, &f))
        return 0;
    int rc = start_sample(w, s, f, &h, named ? &ev : NULL, per, colon, 0);
    if (rc <= 0)
        return rc < 0 ? rc : 1;
    if (stack_line(w, s + f, n - f) || end_sample(w))
        return w->rc;
    return 1;
}

/* Right after a kept header, with an empty stack: when stack lines and then an empty line
 * follow, they give the frames the same bytes gave before, if they came before. Returns
 * where to go on, or NULL to go on line by line (or on error, with w->rc set). */
static const char *sample_body(struct worker *w, const char *b0, const char *end)
{
    if (w->bcache.off)
        return NULL;
    /* Fast path: the last body that began with the same line, if it is here again and an
     * empty line follows it. Its lines were all stack lines, so these are too. */
    struct entry *fe = NULL;
    if (b0 < end && *b0 != '\n' && is_ws((unsigned char)*b0)) {
        const char *nl = memchr(b0, '\n', (size_t)(end - b0));
        if (!nl || (size_t)(nl - b0) > MAX_LINE)
            return NULL;
        int found;
        fe = table_get(&w->firsts[w->java], sc_hash64(b0, (size_t)(nl - b0)), b0,
                       (uint32_t)(nl - b0), &found);
        if (!fe) {
            oom(w);
            return NULL;
        }
        if (!found) {
            fe->val = UINT32_MAX;
        } else if (fe->val != UINT32_MAX) {
            const struct group *g = &w->bcache.v[fe->val];
            if ((size_t)(end - b0) > g->len && memcmp(b0, g->body, g->len) == 0 &&
                b0[g->len] == '\n') {
                w->lines += g->nlines + 1;
                w->unrecognized += g->unrecognized;
                return record_sample(w, g->off, g->n) ? NULL : b0 + g->len + 1;
            }
        }
    }
    const char *s = b0;
    uint32_t k = 0;
    while (s < end && *s != '\n') {
        if (!is_ws((unsigned char)*s))
            return NULL; /* not a plain sample: a header, a comment, ... */
        const char *nl = memchr(s, '\n', (size_t)(end - s));
        if (!nl || (size_t)(nl - s) > MAX_LINE)
            return NULL;
        s = nl + 1;
        k++;
    }
    if (s >= end || s - b0 > INT32_MAX)
        return NULL; /* no empty line follows (or too long a body to cache) */
    struct group *g;
    uint32_t fresh;
    int hit = cache_get(&w->bcache, w->java, b0, (size_t)(s - b0), &g, &fresh);
    if (hit < 0) {
        oom(w);
        return NULL;
    }
    if (hit) {
        if (fe)
            fe->val = (uint32_t)(g - w->bcache.v);
        w->lines += k + 1;
        w->unrecognized += g->unrecognized;
        return record_sample(w, g->off, g->n) ? NULL : s + 1;
    }
    uint64_t unrec = w->unrecognized;
    for (const char *l = b0; l < s;) {
        const char *nl = memchr(l, '\n', (size_t)(s - l));
        w->lines++;
        if (stack_line(w, l, (size_t)(nl - l)))
            return NULL;
        l = nl + 1;
    }
    w->lines++;
    if (fresh != UINT32_MAX) {
        w->bcache.v[fresh] = (struct group){
            w->cur, w->npool - w->cur,
            b0,     (uint32_t)(s - b0),
            k,      (uint32_t)(w->unrecognized - unrec),
            0,
        };
        if (fe)
            fe->val = fresh;
    }
    return end_sample(w) ? NULL : s + 1;
}

static void *parse_piece(void *arg)
{
    struct worker *w = arg;
    const char *s = w->start, *end = w->end;
    while (s < end) {
        const char *nl = memchr(s, '\n', (size_t)(end - s));
        const char *le = nl ? nl : end;
        size_t n = (size_t)(le - s);
        w->lines++;
        if (n > MAX_LINE) {
            fail(w, SC_ELIMIT, "%s", "line longer than 1 MiB");
            break;
        }
        int rc;
        const char *line = s;
        s = nl ? nl + 1 : end;
        if (n == 0) {
            rc = end_sample(w);
        } else if (*line == '#') {
            rc = 0;
        } else if (!w->have_pname && !w->opts->as_script && (rc = frame_header(w, line, n)) != 0) {
            rc = rc < 0 ? rc : 0;
        } else if (!w->have_pname && w->opts->as_script && is_ws((unsigned char)*line) &&
                   sc_perf_frame_header(line, n)) {
            /* as the script reads it: nothing (collapse perf says how many) */
            w->one_line++;
            rc = 0;
        } else if (is_ws((unsigned char)*line)) {
            rc = stack_line(w, line, n);
        } else {
            rc = header_line(w, line, n);
            if (rc == 1 && w->npool == w->cur) {
                const char *next = sample_body(w, s, end);
                if (w->rc)
                    break;
                if (next)
                    s = next;
            }
            rc = rc < 0 ? rc : 0;
        }
        if (rc)
            break;
    }
    if (!w->rc && w->have_pname) {
        /* only the last piece can end inside a sample; the script never counts it */
        w->unterminated = 1;
        w->npool = w->cur;
        w->have_pname = 0;
    }
    return NULL;
}

static void worker_release(struct worker *w)
{
    sc_arena_release(&w->arena);
    table_release(&w->strtab);
    cache_release(&w->lcache);
    cache_release(&w->bcache);
    table_release(&w->firsts[0]);
    table_release(&w->firsts[1]);
    free(w->strs);
    free(w->gids);
    free(w->samples);
    free(w->pool);
    free(w->scr[0]);
    free(w->scr[1]);
    free(w->gstr);
    free(w->gloc);
}

/* The event of the first header that names one: the script keeps only that event's
 * samples unless told which. */
static int first_event(const char *s, const char *end, struct span *ev, int as_script)
{
    while (s < end) {
        const char *nl = memchr(s, '\n', (size_t)(end - s));
        const char *le = nl ? nl : end;
        size_t n = (size_t)(le - s);
        struct header h;
        struct span per;
        size_t colon;
        size_t f;
        int named = 0;
        if (n > 0 && *s != '#' && n <= MAX_LINE &&
            ((!is_ws((unsigned char)*s) && match_header(s, n, &h, as_script) &&
              match_event(s, n, NULL, ev, &per, &colon)) ||
             (!as_script && frame_header_split(s, n, &h, &named, ev, &per, &colon, &f) && named)))
            return 1;
        s = nl ? nl + 1 : end;
    }
    return 0;
}

/* Piece boundaries: just after an empty line, so every piece starts in the initial state. */
static int split_input(const char *buf, size_t n, int want, const char **cuts)
{
    int k = 1;
    cuts[0] = buf;
    for (int i = 1; i < want; i++) {
        const char *from = buf + (size_t)((double)n * i / want);
        if (from < cuts[k - 1])
            from = cuts[k - 1];
        const char *p = memmem(from, (size_t)(buf + n - from), "\n\n", 2);
        if (!p || p + 2 >= buf + n)
            break;
        cuts[k++] = p + 2;
    }
    cuts[k] = buf + n;
    return k;
}

static int choose_threads(const struct sc_perf_opts *o, size_t n)
{
    if (o->threads > 0)
        return o->threads > MAX_THREADS ? MAX_THREADS : o->threads;
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    size_t by_size = n / MIN_CHUNK;
    int t = cpus > 0 ? (int)cpus : 1;
    if (t > MAX_THREADS)
        t = MAX_THREADS;
    if ((size_t)t > by_size)
        t = by_size ? (int)by_size : 1;
    return t;
}

/* ---- building the profile ---- */

static int copy_name(char *dst, size_t cap, struct span s)
{
    size_t n = s.n < cap - 1 ? s.n : cap - 1;
    memcpy(dst, s.p, n);
    dst[n] = 0;
    return (int)n;
}

int sc_perf_sample_types(struct sc_profile *p, const char *event, size_t n, int64_t period,
                         char *err)
{
    char name[256];
    if (event) {
        const char *colon = memchr(event, ':', n);
        copy_name(name, sizeof name, (struct span){event, colon ? (size_t)(colon - event) : n});
    } else {
        strcpy(name, "events");
    }
    const char *unit =
        strcmp(name, "cpu-clock") == 0 || strcmp(name, "task-clock") == 0 ? "nanoseconds" : "count";
    if (sc_profile_add_sample_type(p, "samples", "count") < 0 ||
        sc_profile_add_sample_type(p, name, unit) < 0)
        return sc_errf(err, SC_ENOMEM, "out of memory");
    p->default_sample_type = p->sample_types[1].type;
    p->period_type = p->sample_types[1];
    p->period = period;
    return 0;
}

static int set_types(struct sc_profile *p, struct span event, const struct wsample *first,
                     char *err)
{
    return sc_perf_sample_types(p, event.p, event.n, first ? first->period : 0, err);
}

/* Runs fn on every worker, in parallel when threads can be had. */
static void run_all(struct worker *ws, int nw, void *(*fn)(void *))
{
    pthread_t tids[MAX_THREADS];
    int started[MAX_THREADS] = {0};
    for (int k = 1; k < nw; k++)
        started[k] = pthread_create(&tids[k], NULL, fn, &ws[k]) == 0;
    fn(&ws[0]);
    for (int k = 1; k < nw; k++) {
        if (started[k])
            pthread_join(tids[k], NULL);
        else
            fn(&ws[k]);
    }
}

/* Maps a worker's strings to the profile's, making a function and location of each frame
 * (in the order workers met them, so the profile does not depend on the thread count). */
static int map_strings(struct worker *w, struct sc_profile *p, uint32_t **loc_of_str,
                       uint32_t *nloc_of_str, const struct sc_limits *lim, char *err)
{
    w->gstr = malloc(((size_t)w->nstrs + 1) * sizeof *w->gstr);
    w->gloc = malloc(((size_t)w->nstrs + 1) * sizeof *w->gloc);
    if (!w->gstr || !w->gloc)
        return sc_errf(err, SC_ENOMEM, "out of memory");
    for (uint32_t i = 0; i < w->nstrs; i++) {
        int rc =
            sc_limits_string(lim, w->strs[i].len, w->strs[i].frame ? "a frame" : "a name", err);
        if (rc)
            return rc;
        int64_t g = sc_profile_intern(p, w->strs[i].ptr, w->strs[i].len);
        if (g < 0)
            return sc_errf(err, SC_ENOMEM, "out of memory");
        if (p->strings.n > lim->max_strings)
            return sc_errf(err, SC_ELIMIT, "more than %u strings (limits.max_strings)",
                           (unsigned)lim->max_strings);
        w->gstr[i] = (uint32_t)g;
        if (!w->strs[i].frame)
            continue;
        if (sc_grow_array_fill(loc_of_str, nloc_of_str, (uint64_t)g + 1, sizeof **loc_of_str, 0))
            return sc_errf(err, SC_ENOMEM, "out of memory");
        if (!(*loc_of_str)[g]) {
            if (p->nfunctions >= lim->max_functions || p->nlocations >= lim->max_locations)
                return sc_errf(err, SC_ELIMIT, "more than %u distinct frames",
                               (unsigned)(lim->max_functions < lim->max_locations
                                              ? lim->max_functions
                                              : lim->max_locations));
            int64_t fn = sc_profile_add_function(p, (uint32_t)g, 0);
            int64_t li = fn < 0 ? fn : sc_profile_add_simple_location(p, (uint32_t)fn);
            if (li < 0)
                return sc_errf(err, SC_ENOMEM, "out of memory");
            (*loc_of_str)[g] = (uint32_t)li + 1;
        }
        w->gloc[i] = (*loc_of_str)[g] - 1;
    }
    return 0;
}

/* Writes a worker's samples into the profile's arrays, at the worker's offsets. */
static void *fill_piece(void *arg)
{
    struct worker *w = arg;
    struct sc_profile *p = w->p;
    const uint32_t *gl = w->gloc;
    uint32_t loc = w->loc_base, lab = w->label_base;
    for (uint32_t i = 0; i < w->nsamples; i++) {
        const struct wsample *sm = &w->samples[i];
        struct sc_sample *s = &p->samples[w->sample_base + i];
        s->loc_start = loc;
        s->nlocs = sm->n + 1;
        s->label_start = lab;
        s->time_ns = sm->time_ns;
        uint32_t *dst = p->sample_locs + loc;
        for (uint32_t j = 0; j < sm->n; j++) /* (no pool when no sample has frames) */
            dst[j] = gl[w->pool[sm->off + j]];
        dst[sm->n] = gl[sm->pname];
        loc += sm->n + 1;
        int64_t *v = p->values + (size_t)(w->sample_base + i) * 2;
        v[0] = 1;
        v[1] = sm->period;
        struct sc_label *l = p->labels + lab;
        uint32_t nl = 0, max = labels_of(w->lim, sm->pid, sm->tid);
        if (nl < max)
            l[nl++] = (struct sc_label){w->kcomm, w->gstr[sm->comm], 0, 0};
        if (sm->pid >= 0 && nl < max)
            l[nl++] = (struct sc_label){w->kpid, 0, sm->pid, 0};
        if (sm->tid >= 0 && nl < max)
            l[nl++] = (struct sc_label){w->ktid, 0, sm->tid, 0};
        s->nlabels = nl;
        lab += nl;
    }
    return NULL;
}

static int build(struct worker *ws, int nw, struct span event, struct sc_profile *p,
                 const struct sc_limits *lim, char *err)
{
    uint64_t nsamples = 0, nlocs = 0, nlabels = 0;
    const struct wsample *first = NULL;
    for (int k = 0; k < nw; k++) {
        struct worker *w = &ws[k];
        w->sample_base = (uint32_t)nsamples;
        w->loc_base = (uint32_t)nlocs;
        w->label_base = (uint32_t)nlabels;
        nsamples += w->nsamples;
        nlocs += w->nlocs;
        nlabels += w->nlabels;
        if (!first && w->nsamples)
            first = &w->samples[0];
        if (nsamples > lim->max_samples)
            return sc_errf(err, SC_ELIMIT, "more than %u samples (limits.max_samples)",
                           (unsigned)lim->max_samples);
        if (nsamples > UINT32_MAX / 4 || nlocs > UINT32_MAX / 2 || nlabels > UINT32_MAX / 2)
            return sc_errf(err, SC_ELIMIT, "too many samples");
    }
    int rc = set_types(p, event, first, err);
    if (rc)
        return rc;
    int64_t kcomm = sc_profile_intern(p, "comm", 4), kpid = sc_profile_intern(p, "pid", 3),
            ktid = sc_profile_intern(p, "tid", 3);
    if (kcomm < 0 || kpid < 0 || ktid < 0)
        return sc_errf(err, SC_ENOMEM, "out of memory");
    uint32_t *loc_of_str = NULL, nloc_of_str = 0;
    for (int k = 0; k < nw && !rc; k++)
        rc = map_strings(&ws[k], p, &loc_of_str, &nloc_of_str, lim, err);
    free(loc_of_str);
    if (rc || nsamples == 0)
        return rc;
    if (sc_profile_reserve_samples(p, (uint32_t)nsamples, (uint32_t)nlocs) ||
        sc_grow_array(&p->labels, &p->labels_cap, nlabels + 1, sizeof *p->labels))
        return sc_errf(err, SC_ENOMEM, "out of memory");
    for (int k = 0; k < nw; k++) {
        struct worker *w = &ws[k];
        w->p = p;
        w->kcomm = (uint32_t)kcomm;
        w->kpid = (uint32_t)kpid;
        w->ktid = (uint32_t)ktid;
    }
    /* most of the time here goes to faulting in fresh pages: worth the threads */
    run_all(ws, nw, fill_piece);
    p->nsamples = (uint32_t)nsamples;
    p->nsample_locs = (uint32_t)nlocs;
    p->nlabels = (uint32_t)nlabels;
    return 0;
}

int sc_perf_decode_ex(const char *buf, size_t n, const struct sc_perf_opts *opts,
                      const struct sc_limits *lim, struct sc_profile *p,
                      struct sc_perf_stats *stats, char *err)
{
    static const struct sc_perf_opts defaults;
    if (!opts)
        opts = &defaults;
    if (!lim)
        lim = &sc_limits_cli;
    if (stats)
        memset(stats, 0, sizeof *stats);
    if (n > lim->max_input)
        return sc_errf(err, SC_ELIMIT, "input of %zu bytes is more than %llu", n,
                       (unsigned long long)lim->max_input);
    if (!buf)
        buf = "";

    struct span event = {NULL, 0};
    if (opts->event && *opts->event)
        event = (struct span){opts->event, strlen(opts->event)};
    else
        first_event(buf, buf + n, &event, opts->as_script);

    const char *cuts[MAX_THREADS + 1];
    int nw = split_input(buf, n, choose_threads(opts, n), cuts);
    struct worker ws[MAX_THREADS];
    memset(ws, 0, sizeof ws);
    for (int k = 0; k < nw; k++) {
        struct worker *w = &ws[k];
        w->start = cuts[k];
        w->end = cuts[k + 1];
        w->opts = opts;
        w->lim = lim;
        w->event = event;
        sc_arena_init(&w->arena);
    }
    run_all(ws, nw, parse_piece);

    int rc = 0;
    uint64_t line = 1;
    for (int k = 0; k < nw; k++) {
        if (ws[k].rc) {
            rc = sc_errf(err, ws[k].rc, "line %llu: %s",
                         (unsigned long long)(line + ws[k].err_line - 1), ws[k].err);
            break;
        }
        line += ws[k].lines;
    }
    if (!rc)
        rc = build(ws, nw, event, p, lim, err);
    if (stats) {
        stats->samples = rc ? 0 : p->nsamples;
        if (event.p)
            copy_name(stats->event, sizeof stats->event, event);
        for (int k = 0; k < nw; k++) {
            stats->unrecognized += ws[k].unrecognized;
            if (ws[k].other_events && !stats->other_events)
                copy_name(stats->other_event, sizeof stats->other_event, ws[k].other_event);
            stats->other_events += ws[k].other_events;
            stats->unterminated |= ws[k].unterminated;
            stats->one_line += ws[k].one_line;
        }
    }
    for (int k = 0; k < nw; k++)
        worker_release(&ws[k]);
    return rc;
}

int sc_perf_decode(const char *buf, size_t n, const struct sc_perf_opts *opts,
                   const struct sc_limits *lim, struct sc_profile *p, char *err)
{
    return sc_perf_decode_ex(buf, n, opts, lim, p, NULL, err);
}
