/* legacy.c - gperftools' CPU profile and the legacy text profiles, read as go tool pprof
 * reads them (its profile/legacy_profile.go is the reference for every quirk below). */
#include "formats/legacy.h"
#include "formats/names.h"
#include "model/budget.h"
#include "model/buf.h"
#include "model/error.h"
#include "model/hash.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

/* ---- regular expressions: pprof's, matched with Perl's leftmost-first rule, which is
 * also Go's for submatches ---- */

enum {
    RE_COUNT_START,
    RE_COUNT,
    RE_HEAP_HEADER,
    RE_HEAP_SAMPLE,
    RE_CONTENTION_SAMPLE,
    RE_GROWTH_HEADER,
    RE_FRAG_HEADER,
    RE_THREADZ_START,
    RE_THREAD_START,
    RE_PROC_MAPS,
    RE_BRIEF_MAPS,
    RE_LOG_INFO,
    RE_LIB,
    RE_JAVA_ATTR,
    RE_JAVA_SAMPLE,
    RE_JAVA_LOC,
    RE_JAVA_FILE_LINE,
    RE_JAVA_PATH,
    RE_N
};

#define HEX_RANGE "\\s*(?:0x)?([[:xdigit:]]+)[\\s-]?\\s*(?:0x)?([[:xdigit:]]+):?"
#define PERM "(?:\\s+([-rwxp]+))?"
/* NOLINTBEGIN(bugprone-suspicious-missing-comma): long regexes are split over lines */
static const char *const re_src[RE_N] = {
    [RE_COUNT_START] = "\\A(\\S+) profile: total \\d+\\z",
    [RE_COUNT] = "\\A(\\d+) @(( 0x[0-9a-f]+)+)\\z",
    [RE_HEAP_HEADER] = "heap profile: *(\\d+): *(\\d+) *\\[ *(\\d+): *(\\d+) *\\] *@ "
                       "*(heap[_a-z0-9]*)/?(\\d*)",
    [RE_HEAP_SAMPLE] = "(-?\\d+): *(-?\\d+) *\\[ *(\\d+): *(\\d+) *] @([ x0-9a-f]*)",
    [RE_CONTENTION_SAMPLE] = "(\\d+) *(\\d+) @([ x0-9a-f]*)",
    [RE_GROWTH_HEADER] = "heap profile: *(\\d+): *(\\d+) *\\[ *(\\d+): *(\\d+) *\\] @ growthz?",
    [RE_FRAG_HEADER] =
        "heap profile: *(\\d+): *(\\d+) *\\[ *(\\d+): *(\\d+) *\\] @ fragmentationz?",
    [RE_THREADZ_START] = "--- threadz \\d+ ---",
    [RE_THREAD_START] = "--- Thread ([[:xdigit:]]+) \\(name: (.*)/(\\d+)\\) stack: ---",
    [RE_PROC_MAPS] = "^" HEX_RANGE PERM "(?:\\s+([[:xdigit:]]+))?\\s+[[:xdigit:]]+:[[:xdigit:]]+"
                     "\\s+[[:digit:]]+(?:\\s+(\\S+))?",
    [RE_BRIEF_MAPS] = "^" HEX_RANGE PERM "(?:\\s+(\\S+))?(?:\\s+\\(@([[:xdigit:]]+)\\))?"
                      "(?:\\s+([[:xdigit:]]+))?",
    [RE_LOG_INFO] = "^[^\\[\\]]+:[0-9]+]\\s",
    [RE_LIB] = "([.]so$|[.]so[._][0-9]+)",
    [RE_JAVA_ATTR] = "([\\w ]+)=([\\w ]+)",
    [RE_JAVA_SAMPLE] = " *(\\d+) +(\\d+) +@ +([ x0-9a-f]*)",
    [RE_JAVA_LOC] = "^\\s*0x([[:xdigit:]]+)\\s+(.*)\\s*$",
    [RE_JAVA_FILE_LINE] = "^(.*)\\s+\\((.+):(-?[[:digit:]]+)\\)$",
    [RE_JAVA_PATH] = "^(.*)\\s+\\((.*)\\)$",
};
/* NOLINTEND(bugprone-suspicious-missing-comma) */

static pcre2_code *re_code[RE_N];
static pcre2_match_context *re_mctx;
static pthread_once_t re_once = PTHREAD_ONCE_INIT;

static void re_init(void)
{
    for (int i = 0; i < RE_N; i++) {
        int ec;
        PCRE2_SIZE eo;
        /* Go's \s is [\t\n\f\r ], $ only at the very end */
        re_code[i] = pcre2_compile((PCRE2_SPTR)re_src[i], PCRE2_ZERO_TERMINATED,
                                   PCRE2_DOLLAR_ENDONLY, &ec, &eo, NULL);
    }
    re_mctx = pcre2_match_context_create(NULL);
    if (re_mctx) {
        /* pprof's patterns are linear on lines of at most 64 KiB; the limit only stops a
         * pathological line from costing more than a few milliseconds */
        pcre2_set_match_limit(re_mctx, 1000000);
        pcre2_set_depth_limit(re_mctx, 10000);
    }
}

#define MAX_GROUPS 8
struct match {
    const char *s[MAX_GROUPS];
    size_t n[MAX_GROUPS];
    int ok;
};

/* FindStringSubmatch: 1 on a match, groups that took part set, the others "". -1 when the
 * regex could not be run (out of memory). */
static int re_find(int which, const char *s, size_t n, struct match *m)
{
    memset(m, 0, sizeof *m);
    pthread_once(&re_once, re_init);
    if (!re_code[which] || !re_mctx)
        return -1;
    pcre2_match_data *md = pcre2_match_data_create(MAX_GROUPS, NULL);
    if (!md)
        return -1;
    int rc = pcre2_match(re_code[which], (PCRE2_SPTR)(s ? s : ""), n, 0, 0, md, re_mctx);
    if (rc > 0) {
        PCRE2_SIZE *ov = pcre2_get_ovector_pointer(md);
        for (size_t i = 0; i < (size_t)rc && i < MAX_GROUPS; i++) {
            if (ov[2 * i] == PCRE2_UNSET)
                continue;
            m->s[i] = s + ov[2 * i];
            m->n[i] = ov[2 * i + 1] - ov[2 * i];
        }
        m->ok = 1;
    }
    pcre2_match_data_free(md);
    return m->ok;
}

/* ---- lines, as Go's bufio.Scanner splits them ---- */

#define MAX_LINE (64 * 1024 - 1) /* bufio.MaxScanTokenSize, its newline included */

struct scanner {
    const char *p, *end;
    const char *line; /* the current line (Text()), "" before the first and after the last */
    size_t len;
    int too_long;
};

static void scan_init(struct scanner *s, const char *buf, size_t n)
{
    s->p = buf;
    s->end = buf + n;
    s->line = "";
    s->len = 0;
    s->too_long = 0;
}

static int scan(struct scanner *s)
{
    if (s->p >= s->end || s->too_long) {
        s->line = "";
        s->len = 0;
        return 0;
    }
    const char *e = memchr(s->p, '\n', (size_t)(s->end - s->p));
    const char *le = e ? e : s->end;
    if ((size_t)(le - s->p) > MAX_LINE) {
        s->too_long = 1;
        s->line = "";
        s->len = 0;
        return 0;
    }
    s->line = s->p;
    s->len = (size_t)(le - s->p);
    if (e && s->len && le[-1] == '\r')
        s->len--;
    s->p = e ? e + 1 : s->end;
    return 1;
}

static int is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

static void trim(const char **s, size_t *n)
{
    while (*n && is_space(**s)) {
        (*s)++;
        (*n)--;
    }
    while (*n && is_space((*s)[*n - 1]))
        (*n)--;
}

static int space_or_comment(const char *s, size_t n)
{
    trim(&s, &n);
    return n == 0 || s[0] == '#';
}

static int has_prefix(const char *s, size_t n, const char *pre)
{
    size_t k = strlen(pre);
    return n >= k && memcmp(s, pre, k) == 0;
}

static int contains(const char *s, size_t n, const char *needle)
{
    return memmem(s, n, needle, strlen(needle)) != NULL;
}

static int map_sentinel(const char *s, size_t n)
{
    return contains(s, n, "--- Memory map: ---") || contains(s, n, "MAPPED_LIBRARIES:");
}

/* strconv.ParseInt(s, base, 64); base 0 reads Go's prefixes (0x, 0o, 0b, a leading 0). */
static int parse_int(const char *s, size_t n, int base, int64_t *out)
{
    int neg = 0;
    if (n && (*s == '-' || *s == '+')) {
        neg = *s == '-';
        s++;
        n--;
    }
    if (base == 0) {
        base = 10;
        if (n > 1 && s[0] == '0') {
            if (s[1] == 'x' || s[1] == 'X') {
                base = 16;
                s += 2;
                n -= 2;
            } else if (s[1] == 'o' || s[1] == 'O') {
                base = 8;
                s += 2;
                n -= 2;
            } else if (s[1] == 'b' || s[1] == 'B') {
                base = 2;
                s += 2;
                n -= 2;
            } else {
                base = 8;
                s++;
                n--;
            }
        }
    }
    if (n == 0)
        return -1;
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++) {
        int d;
        char c = s[i];
        if (c >= '0' && c <= '9')
            d = c - '0';
        else if (c >= 'a' && c <= 'z')
            d = c - 'a' + 10;
        else if (c >= 'A' && c <= 'Z')
            d = c - 'A' + 10;
        else
            return -1; /* Go's underscores (with an explicit prefix only) are left out: rare */
        if (d >= base)
            return -1;
        if (v > (UINT64_MAX - (uint64_t)d) / (uint64_t)base)
            return -1;
        v = v * (uint64_t)base + (uint64_t)d;
    }
    if (neg ? v > (uint64_t)INT64_MAX + 1 : v > (uint64_t)INT64_MAX)
        return -1;
    *out = neg ? (int64_t)(0 - v) : (int64_t)v;
    return 0;
}

/* strconv.ParseUint(s, 16, 64) */
static int parse_hex(const char *s, size_t n, uint64_t *out)
{
    if (n == 0)
        return -1;
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        uint64_t d;
        if (c >= '0' && c <= '9')
            d = (uint64_t)(unsigned char)c - '0';
        else if (c >= 'a' && c <= 'f')
            d = (uint64_t)(unsigned char)c - 'a' + 10;
        else if (c >= 'A' && c <= 'F')
            d = (uint64_t)(unsigned char)c - 'A' + 10;
        else
            return -1;
        if (v >> 60)
            return -1;
        v = v << 4 | d;
    }
    *out = v;
    return 0;
}

/* ---- what a profile is built of before it becomes a struct sc_profile ---- */

struct lmap {
    uint64_t start, limit, offset;
    const char *file, *build_id;
    size_t file_len, build_id_len;
    int dropped; /* merged into the one before */
};

struct builder {
    const struct sc_limits *lim;
    char *err;
    uint32_t nvals;
    /* distinct addresses */
    uint64_t *addrs;
    uint32_t naddrs, addrs_cap;
    struct sc_map64 addr_index;
    /* samples: locs[loc_start..+nlocs) into sl (address indexes, leaf first) */
    uint32_t *s_start, *s_n;
    int64_t *vals, *blocksize;
    uint32_t nsamples, s_cap, vals_cap, bs_cap;
    uint32_t *sl;
    uint32_t nsl, sl_cap;
    /* the memory map */
    struct lmap *maps;
    uint32_t nmaps, maps_cap;
    /* the one line of a map entry after $attr substitution, and the substitutions */
    struct sc_buf subst;
    char **attr_keys, **attr_vals;
    uint32_t nattrs, attr_cap;
    struct sc_arena arena; /* lines after $attr substitution */
    uint64_t subst_total;  /* their bytes */
    /* the profile's header */
    const char *types[8]; /* type, unit pairs */
    const char *ptype, *punit;
    char type_name[256]; /* a count profile's type */
    int64_t period, duration;
    int heap; /* samples carry their block size as label "bytes" */
    /* Java profiles name their addresses in the file: per address index, NULL when the
     * file does not (then the address stays) */
    struct jloc {
        const char *fn, *file;
        size_t fn_n, file_n;
        int64_t line;
    } * jlocs;
    int java;
    uint32_t ntypes;     /* sample types known (Java's heapz names them in an attribute) */
    struct sc_map64 jfn; /* a Java function's name (string) -> function index */
};

static void builder_release(struct builder *b)
{
    free(b->addrs);
    sc_map64_release(&b->addr_index);
    free(b->s_start);
    free(b->s_n);
    free(b->vals);
    free(b->blocksize);
    free(b->sl);
    free(b->maps);
    sc_buf_release(&b->subst);
    sc_strv_free(b->attr_keys, b->nattrs);
    sc_strv_free(b->attr_vals, b->nattrs);
    sc_arena_release(&b->arena);
    free(b->jlocs);
    sc_map64_release(&b->jfn);
}

static int nomem(struct builder *b)
{
    return sc_errf(b->err, SC_ENOMEM, "out of memory");
}

/* The index of address a, added when new. */
static int64_t addr_index(struct builder *b, uint64_t a)
{
    int added;
    uint32_t *slot = sc_map64_upsert(&b->addr_index, a, b->naddrs, &added);
    if (!slot)
        return nomem(b);
    if (!added)
        return *slot;
    if (b->naddrs >= b->lim->max_locations)
        return sc_errf(b->err, SC_ELIMIT, "more than %u locations (limits.max_locations)",
                       b->lim->max_locations);
    if (sc_grow_array(&b->addrs, &b->addrs_cap, (uint64_t)b->naddrs + 1, sizeof *b->addrs))
        return nomem(b);
    b->addrs[b->naddrs] = a;
    return b->naddrs++;
}

/* Starts a sample with values v[0..nvals) and block size bs (heap; else 0). */
static int sample_begin(struct builder *b, const int64_t *v, int64_t bs)
{
    if (b->nsamples >= b->lim->max_samples)
        return sc_errf(b->err, SC_ELIMIT, "more than %u samples (limits.max_samples)",
                       b->lim->max_samples);
    uint32_t cap = b->s_cap;
    if (sc_grow_array(&b->s_start, &b->s_cap, (uint64_t)b->nsamples + 1, sizeof *b->s_start))
        return nomem(b);
    uint32_t cap2 = cap;
    if (sc_grow_array(&b->s_n, &cap2, b->s_cap, sizeof *b->s_n))
        return nomem(b);
    cap2 = cap;
    if (sc_grow_array(&b->blocksize, &cap2, b->s_cap, sizeof *b->blocksize))
        return nomem(b);
    if (sc_grow_array(&b->vals, &b->vals_cap, ((uint64_t)b->nsamples + 1) * b->nvals,
                      sizeof *b->vals))
        return nomem(b);
    memcpy(b->vals + (size_t)b->nsamples * b->nvals, v, b->nvals * sizeof *v);
    b->s_start[b->nsamples] = b->nsl;
    b->s_n[b->nsamples] = 0;
    b->blocksize[b->nsamples] = bs;
    b->nsamples++;
    return 0;
}

static int sample_loc(struct builder *b, uint64_t addr)
{
    uint32_t s = b->nsamples - 1;
    if (b->s_n[s] >= b->lim->max_stack_depth)
        return sc_limits_depth(b->lim, (uint64_t)b->s_n[s] + 1, "a sample", b->err);
    int64_t i = addr_index(b, addr);
    if (i < 0)
        return (int)i;
    if (sc_grow_array(&b->sl, &b->sl_cap, (uint64_t)b->nsl + 1, sizeof *b->sl))
        return nomem(b);
    b->sl[b->nsl++] = (uint32_t)i;
    b->s_n[s]++;
    return 0;
}

/* Removes location k of sample s (shifting the rest down; the span keeps its start). */
static void sample_drop(struct builder *b, uint32_t s, uint32_t k)
{
    uint32_t *l = b->sl + b->s_start[s];
    memmove(l + k, l + k + 1, (b->s_n[s] - k - 1) * sizeof *l);
    b->s_n[s]--;
}

/* The addresses of hexNumberRE (0x[0-9a-f]+) in s, each adjusted by -adjust[i > 0 ? 1 : 0],
 * appended to the current sample. SC_EFORMAT for a number past 64 bits. */
static int hex_addresses(struct builder *b, const char *s, size_t n, int adjust_leaf,
                         int adjust_callers, uint32_t *count)
{
    uint32_t k = 0;
    for (size_t i = 0; i + 2 < n + 1 && i + 1 < n; i++) {
        if (s[i] != '0' || s[i + 1] != 'x')
            continue;
        size_t j = i + 2;
        while (j < n && ((s[j] >= '0' && s[j] <= '9') || (s[j] >= 'a' && s[j] <= 'f')))
            j++;
        if (j == i + 2)
            continue;
        /* ParseUint(s, 0, 64): leading zeros are fine, values past 64 bits are not */
        size_t d = i + 2;
        while (d < j - 1 && s[d] == '0')
            d++;
        uint64_t a;
        if (j - d > 16 || parse_hex(s + d, j - d, &a))
            return sc_errf(b->err, SC_EFORMAT,
                           "malformed sample: failed to parse as hex 64-bit "
                           "number: %.*s",
                           (int)(j - i > 40 ? 40 : j - i), s + i);
        if (k == 0 ? adjust_leaf : adjust_callers)
            a--;
        int rc = sample_loc(b, a);
        if (rc)
            return rc;
        k++;
        i = j - 1;
    }
    if (count)
        *count = k;
    return 0;
}

/* ---- the memory map ---- */

static int add_attr(struct builder *b, const char *k, size_t kn, const char *v, size_t vn)
{
    const struct sc_grow_part cols[] = {SC_GROW_PART(b->attr_keys), SC_GROW_PART(b->attr_vals)};
    if (sc_grow_arrays(&b->attr_cap, (uint64_t)b->nattrs + 1, -1, cols, 2))
        return nomem(b);
    char *key = malloc(kn + 2), *val = malloc(vn + 1);
    if (!key || !val) {
        free(key);
        free(val);
        return nomem(b);
    }
    key[0] = '$';
    memcpy(key + 1, k, kn);
    key[kn + 1] = 0;
    memcpy(val, v, vn);
    val[vn] = 0;
    b->attr_keys[b->nattrs] = key;
    b->attr_vals[b->nattrs] = val;
    b->nattrs++;
    return 0;
}

/* One line of a memory map: parseMappingEntry. 1 when it was an entry (maybe skipped as
 * not executable), 0 when unrecognized, < 0 on errors. The entry's strings point into the
 * input unless attributes were substituted (then into a copy the arena keeps). */
static int map_entry(struct builder *b, const char *line, size_t n)
{
    struct match m;
    int rc = re_find(RE_LOG_INFO, line, n, &m);
    if (rc < 0)
        return nomem(b);
    if (rc) {
        line += m.n[0];
        n -= m.n[0];
    }
    if (b->nattrs) {
        /* strings.NewReplacer: at each position the first key that matches */
        b->subst.len = 0;
        for (size_t i = 0; i < n;) {
            uint32_t k;
            for (k = 0; k < b->nattrs; k++) {
                size_t kl = strlen(b->attr_keys[k]);
                if (kl <= n - i && memcmp(line + i, b->attr_keys[k], kl) == 0)
                    break;
            }
            if (k < b->nattrs) {
                sc_buf_append(&b->subst, b->attr_vals[k], strlen(b->attr_vals[k]));
                i += strlen(b->attr_keys[k]);
            } else {
                sc_buf_append(&b->subst, line + i, 1);
                i++;
            }
            if (b->subst.oom)
                return nomem(b);
        }
        /* substitutions may grow lines: 1 MiB a line, 64 MiB in all */
        b->subst_total += b->subst.len;
        if (b->subst.len > (size_t)MAX_LINE * 16 || b->subst_total > ((uint64_t)64 << 20))
            return sc_errf(b->err, SC_ELIMIT, "memory map lines too long after substitution");
        char *copy = sc_arena_alloc(&b->arena, b->subst.len + 1);
        if (!copy)
            return nomem(b);
        if (b->subst.len)
            memcpy(copy, b->subst.data, b->subst.len);
        line = copy;
        n = b->subst.len;
    }
    const char *start, *end, *perm, *file, *off, *bid;
    size_t start_n, end_n, perm_n, file_n, off_n, bid_n = 0;
    rc = re_find(RE_PROC_MAPS, line, n, &m);
    if (rc < 0)
        return nomem(b);
    if (rc) {
        start = m.s[1], start_n = m.n[1];
        end = m.s[2], end_n = m.n[2];
        perm = m.s[3], perm_n = m.n[3];
        off = m.s[4], off_n = m.n[4];
        file = m.s[5], file_n = m.n[5];
        bid = NULL;
    } else {
        rc = re_find(RE_BRIEF_MAPS, line, n, &m);
        if (rc < 0)
            return nomem(b);
        if (!rc)
            goto unrecognized;
        start = m.s[1], start_n = m.n[1];
        end = m.s[2], end_n = m.n[2];
        perm = m.s[3], perm_n = m.n[3];
        file = m.s[4], file_n = m.n[4];
        off = m.s[5], off_n = m.n[5];
        bid = m.s[6], bid_n = m.n[6];
    }
    if (perm_n && !memchr(perm, 'x', perm_n))
        return 1; /* not executable */
    struct lmap e = {0};
    if (parse_hex(start, start_n, &e.start) || parse_hex(end, end_n, &e.limit))
        goto unrecognized;
    if (off_n && parse_hex(off, off_n, &e.offset))
        goto unrecognized;
    e.file = file;
    e.file_len = file ? file_n : 0;
    e.build_id = bid;
    e.build_id_len = bid ? bid_n : 0;
    if (e.file_len > b->lim->max_string)
        return sc_limits_string(b->lim, e.file_len, "a mapping's file name", b->err);
    if (b->nmaps >= b->lim->max_mappings)
        return sc_errf(b->err, SC_ELIMIT, "more than %u mappings (limits.max_mappings)",
                       b->lim->max_mappings);
    if (sc_grow_array(&b->maps, &b->maps_cap, (uint64_t)b->nmaps + 1, sizeof *b->maps))
        return nomem(b);
    b->maps[b->nmaps++] = e;
    return 1;
unrecognized : {
    /* attr=value lines define $attr for the lines after them */
    const char *eq = memchr(line, '=', n);
    if (eq) {
        const char *k = line, *v = eq + 1;
        size_t kn = (size_t)(eq - line), vn = n - kn - 1;
        trim(&k, &kn);
        trim(&v, &vn);
        if (b->nattrs >= 256)
            return sc_errf(b->err, SC_ELIMIT, "more than 256 memory map attributes");
        return add_attr(b, k, kn, v, vn) ? SC_ENOMEM : 0;
    }
    return 0;
}
}

/* parseProcMapsFromScanner over the lines after the current one. */
static int parse_maps(struct builder *b, struct scanner *s)
{
    for (uint64_t i = 0; scan(s); i++) {
        int rc = map_entry(b, s->line, s->len);
        if (rc < 0)
            return rc;
    }
    if (s->too_long)
        return sc_errf(b->err, SC_EFORMAT, "line longer than 64 KiB");
    return 0;
}

/* parseAdditionalSections: skip to a memory map sentinel, then read the map. */
static int additional_sections(struct builder *b, struct scanner *s)
{
    while (!map_sentinel(s->line, s->len) && scan(s))
        ;
    if (s->too_long)
        return sc_errf(b->err, SC_EFORMAT, "line longer than 64 KiB");
    return parse_maps(b, s);
}

static int same_str(const char *a, size_t an, const char *b, size_t bn)
{
    return an == bn && (an == 0 || memcmp(a, b, an) == 0);
}

/* adjacent(): two entries of one mapping split in two */
static int adjacent(const struct lmap *m1, const struct lmap *m2)
{
    if (m1->file_len && m2->file_len && !same_str(m1->file, m1->file_len, m2->file, m2->file_len))
        return 0;
    if (m1->build_id_len && m2->build_id_len &&
        !same_str(m1->build_id, m1->build_id_len, m2->build_id, m2->build_id_len))
        return 0;
    if (m1->limit != m2->start)
        return 0;
    if (m1->offset != 0 && m2->offset != 0 && m1->offset + (m1->limit - m1->start) != m2->offset)
        return 0;
    return 1;
}

/* massageMappings' guess at the main binary: not a shared library, not [special]. */
static int looks_main(const struct lmap *m)
{
    char tmp[4096];
    size_t n = 0;
    /* strings.TrimSpace(strings.Replace(file, "(deleted)", "", -1)) */
    for (size_t i = 0; i < m->file_len && n < sizeof tmp;) {
        if (m->file_len - i >= 9 && memcmp(m->file + i, "(deleted)", 9) == 0) {
            i += 9;
            continue;
        }
        tmp[n++] = m->file[i++];
    }
    const char *f = tmp;
    trim(&f, &n);
    if (n == 0 || f[0] == '[')
        return 0;
    struct match mt;
    return re_find(RE_LIB, f, n, &mt) == 0;
}

/* pprof's answer for a format that is not this one: the next parser is tried */
#define UNRECOGNIZED 1

/* ---- Java's profiles (pprof's legacy_java_profile.go) ---- */

static void scale_heap(int64_t *count, int64_t *size, int64_t rate);

/* filepath.Base */
static void path_base(const char **s, size_t *n)
{
    while (*n > 1 && (*s)[*n - 1] == '/')
        (*n)--;
    const char *e = *s + *n, *b = e;
    while (b > *s && b[-1] != '/')
        b--;
    if (b < e) {
        *s = b;
        *n = (size_t)(e - b);
    } else if (*n == 0) {
        *s = ".";
        *n = 1;
    } else {
        *s = "/";
        *n = 1;
    }
}

/* parseJavaLocations: "0x<addr> function (file:line)" lines name the addresses. */
static int java_locations(struct builder *b, const char *buf, size_t n)
{
    b->java = 1;
    b->jlocs = calloc((size_t)b->naddrs + 1, sizeof *b->jlocs);
    struct sc_map64 first = {0}; /* hash of a name -> the address that named it first */
    if (!b->jlocs)
        return nomem(b);
    const char *p = buf, *end = buf + n;
    int rc = 0;
    for (uint64_t i = 0; p < end && !rc; i++) {
        if ((rc = sc_budget_poll_every(i, b->err)))
            break;
        const char *e = memchr(p, '\n', (size_t)(end - p));
        const char *line = p;
        size_t len = (size_t)((e ? e : end) - p);
        p = e ? e + 1 : end;
        trim(&line, &len);
        struct match m;
        if (len == 0 || len > MAX_LINE * (size_t)16 || re_find(RE_JAVA_LOC, line, len, &m) <= 0)
            continue;
        uint64_t addr;
        if (parse_hex(m.s[1], m.n[1], &addr)) {
            rc = sc_errf(b->err, SC_EFORMAT, "parsing sample %.*s: bad address",
                         (int)(len > 80 ? 80 : len), line);
            break;
        }
        uint32_t *ai = sc_map64_get(&b->addr_index, addr);
        if (!ai)
            continue; /* unused */
        struct jloc j = {m.s[2], NULL, m.n[2], 0, 0};
        const char *what = m.s[2];
        size_t wn = m.n[2];
        if (re_find(RE_JAVA_FILE_LINE, what, wn, &m) > 0) {
            int64_t ln;
            j.fn = m.s[1], j.fn_n = m.n[1];
            j.file = m.s[2], j.file_n = m.n[2];
            if (parse_int(m.s[3], m.n[3], 10, &ln) == 0 && ln > 0)
                j.line = ln;
        } else if (re_find(RE_JAVA_PATH, what, wn, &m) > 0) {
            /* a shared library's path: its base name is enough */
            j.fn = m.s[1], j.fn_n = m.n[1];
            j.file = m.s[2], j.file_n = m.n[2];
            path_base(&j.file, &j.file_n);
        } else if (memmem(what, wn, "generated stub/JIT", 18)) {
            j.fn = "STUB", j.fn_n = 4;
        }
        if (!j.fn)
            j.fn = "";
        /* a function keeps the file it was first seen with */
        int added;
        uint32_t *fi = sc_map64_upsert(&first, sc_hash64(j.fn, j.fn_n), *ai, &added);
        if (!fi) {
            rc = nomem(b);
            break;
        }
        if (!added) {
            j.file = b->jlocs[*fi].file;
            j.file_n = b->jlocs[*fi].file_n;
        }
        b->jlocs[*ai] = j;
    }
    sc_map64_release(&first);
    return rc;
}

/* "--- heapz 1 ---" and "--- contentionz 1 ---" */
static int parse_java(struct builder *b, const char *buf, size_t n)
{
    const char *nl = memchr(buf, '\n', n);
    if (!nl)
        return UNRECOGNIZED;
    const char *h = buf;
    size_t hn = (size_t)(nl - buf);
    trim(&h, &hn);
    int heap;
    if (same_str(h, hn, "--- heapz 1 ---", 15))
        heap = 1;
    else if (same_str(h, hn, "--- contentionz 1 ---", 21))
        heap = 0;
    else
        return UNRECOGNIZED;
    b->ptype = b->punit = "";
    b->nvals = 2;
    const char *p = nl + 1, *end = buf + n;
    /* the attributes: lines of "name = value" */
    for (const char *e; (e = memchr(p, '\n', (size_t)(end - p))); p = e + 1) {
        const char *line = p;
        size_t len = (size_t)(e - p);
        trim(&line, &len);
        if (!len)
            continue;
        struct match m;
        if (len > MAX_LINE * (size_t)16 || re_find(RE_JAVA_ATTR, line, len, &m) <= 0)
            break;
        const char *k = m.s[1], *v = m.s[2];
        size_t kn = m.n[1], vn = m.n[2];
        trim(&k, &kn);
        trim(&v, &vn);
        if (same_str(k, kn, "format", 6)) {
            if (!same_str(v, vn, "java", 4))
                return UNRECOGNIZED;
        } else if (same_str(k, kn, "resolution", 10)) {
            char *unit = sc_arena_strndup(&b->arena, v, vn);
            if (!unit)
                return nomem(b);
            b->types[0] = heap ? "inuse_objects" : "contentions";
            b->types[1] = "count";
            b->types[2] = heap ? "inuse_space" : "delay";
            b->types[3] = unit;
            b->ntypes = 2;
        } else if (!heap && same_str(k, kn, "sampling period", 15)) {
            b->ptype = "contentions";
            b->punit = "count";
            if (parse_int(v, vn, 0, &b->period))
                return sc_errf(b->err, SC_EFORMAT, "failed to parse attribute %.*s",
                               (int)(len > 80 ? 80 : len), line);
        } else if (!heap && same_str(k, kn, "ms since reset", 14)) {
            int64_t ms;
            if (parse_int(v, vn, 0, &ms))
                return sc_errf(b->err, SC_EFORMAT, "failed to parse attribute %.*s",
                               (int)(len > 80 ? 80 : len), line);
            b->duration = (int64_t)((uint64_t)ms * 1000000u);
        } else {
            return UNRECOGNIZED;
        }
    }
    /* the samples: "v2 v1 @ 0x.. 0x.." */
    b->heap = heap;
    int rc;
    for (const char *e; (e = memchr(p, '\n', (size_t)(end - p))); p = e + 1) {
        const char *line = p;
        size_t len = (size_t)(e - p);
        trim(&line, &len);
        if (!len)
            continue;
        struct match m;
        if (len > MAX_LINE * (size_t)16 || re_find(RE_JAVA_SAMPLE, line, len, &m) <= 0)
            break;
        int64_t v[2], bs = 0;
        if (parse_int(m.s[2], m.n[2], 0, &v[0]) || parse_int(m.s[1], m.n[1], 0, &v[1]))
            return sc_errf(b->err, SC_EFORMAT, "parsing sample %.*s", (int)(len > 80 ? 80 : len),
                           line);
        if (heap) {
            if (v[0] == 0)
                return sc_errf(b->err, SC_EFORMAT,
                               "parsing sample %.*s: second value must be non-zero",
                               (int)(len > 80 ? 80 : len), line);
            bs = v[1] / v[0];
            scale_heap(&v[0], &v[1], 524288);
        } else if (b->period != 0) {
            v[0] = (int64_t)((uint64_t)v[0] * (uint64_t)b->period);
            v[1] = (int64_t)((uint64_t)v[1] * (uint64_t)b->period);
        }
        if ((rc = sample_begin(b, v, bs)) || (rc = hex_addresses(b, m.s[3], m.n[3], 0, 0, NULL)))
            return rc;
    }
    if (b->nsamples && b->ntypes != 2)
        return sc_errf(b->err, SC_EFORMAT,
                       "malformed profile: mismatch: sample has 2 values vs. %u types", b->ntypes);
    return java_locations(b, p, (size_t)(end - p));
}

/* ---- the profile ---- */

/* The one line of a location a Java profile names: function by name (the first file seen
 * with it stays), line. */
static int java_line(struct builder *b, struct sc_profile *p, struct sc_location *l,
                     const struct jloc *j)
{
    int64_t name = sc_profile_intern(p, j->fn, j->fn_n);
    if (name < 0)
        return nomem(b);
    int added;
    uint32_t *slot = sc_map64_upsert(&b->jfn, (uint64_t)name, p->nfunctions, &added);
    if (!slot)
        return nomem(b);
    uint32_t fn = *slot;
    if (added) {
        if (p->nfunctions >= b->lim->max_functions)
            return sc_errf(b->err, SC_ELIMIT, "more than %u functions (limits.max_functions)",
                           b->lim->max_functions);
        int64_t file = sc_profile_intern(p, j->file ? j->file : "", j->file_n);
        int64_t f = file < 0 ? file : sc_profile_add_function(p, (uint32_t)name, (uint32_t)file);
        if (f < 0)
            return nomem(b);
        p->functions[f].system_name = (uint32_t)name;
        fn = (uint32_t)f;
    }
    if (sc_grow_array(&p->lines, &p->lines_cap, (uint64_t)p->nlines + 1, sizeof *p->lines))
        return nomem(b);
    l->line_start = p->nlines;
    l->nlines = 1;
    p->lines[p->nlines++] = (struct sc_line){fn + 1, j->line, 0};
    return 0;
}

static int emit(struct builder *b, struct sc_profile *p)
{
    /* massageMappings: merge split entries, the main binary first */
    uint32_t nm = 0;
    for (uint32_t i = 0; i < b->nmaps; i++) {
        if (nm > 0 && adjacent(&b->maps[nm - 1], &b->maps[i])) {
            struct lmap *lm = &b->maps[nm - 1];
            lm->limit = b->maps[i].limit;
            if (b->maps[i].file_len) {
                lm->file = b->maps[i].file;
                lm->file_len = b->maps[i].file_len;
            }
            if (b->maps[i].build_id_len) {
                lm->build_id = b->maps[i].build_id;
                lm->build_id_len = b->maps[i].build_id_len;
            }
            continue;
        }
        b->maps[nm++] = b->maps[i];
    }
    b->nmaps = nm;
    for (uint32_t i = 0; i < nm; i++) {
        if (looks_main(&b->maps[i])) {
            struct lmap t = b->maps[0];
            b->maps[0] = b->maps[i];
            b->maps[i] = t;
            break;
        }
    }
    /* remapMappingIDs */
    struct lmap *maps = b->maps;
    if (nm > 1 && maps[0].file_len >= 14 && memcmp(maps[0].file, "/anon_hugepage", 14) == 0 &&
        maps[0].limit == maps[1].start) {
        maps++;
        nm--;
    }
    if (nm > 0 && maps[0].start - maps[0].offset == 0x400000) {
        maps[0].start = 0x400000;
        maps[0].offset = 0;
    }
    /* locations in the order the samples first use them (remapLocationIDs) */
    uint32_t *loc_of = malloc(((size_t)b->naddrs + 1) * sizeof *loc_of);
    uint32_t *map_of = malloc(((size_t)b->naddrs + 1) * sizeof *map_of);
    uint32_t *order = malloc(((size_t)b->naddrs + 1) * sizeof *order);
    if (!loc_of || !map_of || !order) {
        free(loc_of);
        free(map_of);
        free(order);
        return nomem(b);
    }
    for (uint32_t i = 0; i < b->naddrs; i++)
        loc_of[i] = UINT32_MAX;
    uint32_t nloc = 0;
    for (uint32_t s = 0; s < b->nsamples; s++)
        for (uint32_t k = 0; k < b->s_n[s]; k++) {
            uint32_t a = b->sl[b->s_start[s] + k];
            if (loc_of[a] == UINT32_MAX) {
                loc_of[a] = nloc;
                order[nloc++] = a;
            }
        }
    /* each location's mapping: the first that holds it, else one whose offset says it
     * began earlier, else a fake one that holds everything */
    int fake = 0;
    for (uint32_t i = 0; i < nloc; i++) {
        uint64_t a = b->jlocs && b->jlocs[order[i]].fn ? 0 : b->addrs[order[i]];
        map_of[i] = 0;
        if (a == 0)
            continue;
        uint32_t j;
        for (j = 0; j < nm; j++)
            if (maps[j].start <= a && a < maps[j].limit)
                break;
        if (j == nm) {
            for (j = 0; j < nm; j++)
                if (maps[j].offset != 0 && maps[j].start - maps[j].offset <= a &&
                    a < maps[j].start) {
                    maps[j].start -= maps[j].offset;
                    maps[j].offset = 0;
                    break;
                }
        }
        if (j == nm)
            fake = 1;
        map_of[i] = j + 1; /* nm + 1: the fake one */
    }
    int rc = 0;
    /* lines allocated even when no location has one yet: readers take p->lines + start */
    if (sc_grow_array(&p->mappings, &p->mappings_cap, (uint64_t)nm + (uint64_t)fake + 1,
                      sizeof *p->mappings) ||
        sc_grow_array(&p->locations, &p->locations_cap, (uint64_t)nloc + 1, sizeof *p->locations) ||
        sc_grow_array(&p->lines, &p->lines_cap, 1, sizeof *p->lines)) {
        rc = nomem(b);
        goto out;
    }
    for (uint32_t j = 0; j < nm + (uint32_t)fake; j++) {
        struct sc_mapping *pm = &p->mappings[j];
        memset(pm, 0, sizeof *pm);
        pm->id = j + 1;
        if (j == nm) {
            pm->limit = UINT64_MAX;
            continue;
        }
        pm->start = maps[j].start;
        pm->limit = maps[j].limit;
        pm->offset = maps[j].offset;
        int64_t f = sc_profile_intern(p, maps[j].file ? maps[j].file : "", maps[j].file_len);
        int64_t id =
            sc_profile_intern(p, maps[j].build_id ? maps[j].build_id : "", maps[j].build_id_len);
        if (f < 0 || id < 0) {
            rc = nomem(b);
            goto out;
        }
        pm->filename = (uint32_t)f;
        pm->build_id = (uint32_t)id;
    }
    p->nmappings = nm + (uint32_t)fake;
    for (uint32_t i = 0; i < nloc; i++) {
        struct sc_location *l = &p->locations[i];
        memset(l, 0, sizeof *l);
        l->id = i + 1;
        /* Java's: addresses stripped for a better merge (pprof's Aggregate) */
        l->address = b->java ? 0 : b->addrs[order[i]];
        l->mapping = map_of[i];
        if (b->jlocs && b->jlocs[order[i]].fn && (rc = java_line(b, p, l, &b->jlocs[order[i]])))
            goto out;
    }
    p->nlocations = nloc;
    rc = sc_profile_reserve_samples(p, b->nsamples, b->nsl);
    if (rc) {
        rc = nomem(b);
        goto out;
    }
    int heap = b->heap;
    int64_t bytes = heap ? sc_profile_intern(p, "bytes", 5) : 0;
    if (bytes < 0) {
        rc = nomem(b);
        goto out;
    }
    uint32_t tmp[64], *locs = tmp;
    uint32_t maxn = 0;
    for (uint32_t s = 0; s < b->nsamples; s++)
        if (b->s_n[s] > maxn)
            maxn = b->s_n[s];
    if (maxn > 64 && !(locs = malloc(maxn * sizeof *locs))) {
        rc = nomem(b);
        goto out;
    }
    for (uint32_t s = 0; s < b->nsamples && !rc; s++) {
        for (uint32_t k = 0; k < b->s_n[s]; k++)
            locs[k] = loc_of[b->sl[b->s_start[s] + k]];
        if (sc_profile_add_sample(p, locs, b->s_n[s], b->vals + (size_t)s * b->nvals, 0) < 0 ||
            (heap && sc_profile_add_label(p, (uint32_t)bytes, 0, b->blocksize[s], 0)))
            rc = nomem(b);
    }
    if (locs != tmp)
        free(locs);
out:
    free(loc_of);
    free(map_of);
    free(order);
    return rc;
}

/* The sample types (n pairs of type and unit) and the period's type and unit. */
static void set_types(struct builder *b, const char *const *tu, uint32_t n, const char *pt,
                      const char *pu)
{
    for (uint32_t i = 0; i < 2 * n && i < 8; i++)
        b->types[i] = tu[i];
    b->nvals = b->ntypes = n;
    b->ptype = pt;
    b->punit = pu;
}

/* ---- gperftools' CPU profile ---- */

struct words {
    const unsigned char *p;
    size_t n; /* bytes left; SIZE_MAX once a read ran out (Go's nil slice) */
    int size, big;
};

static uint64_t word(struct words *w)
{
    if (w->n == SIZE_MAX || w->n < (size_t)w->size) {
        w->n = SIZE_MAX;
        return 0;
    }
    uint64_t v = 0;
    for (int i = 0; i < w->size; i++) {
        int k = w->big ? i : w->size - 1 - i;
        v = v << 8 | w->p[k];
    }
    w->p += w->size;
    w->n -= (size_t)w->size;
    return v;
}

/* The header's word size and order: 0 when none of the four reads as a profile, 1 for a
 * C++ one, 2 for a Java one (third word 1). */
static int cpu_header(const unsigned char *buf, size_t n, struct words *out, uint64_t *period)
{
    static const int kinds[4][2] = {{4, 0}, {4, 1}, {8, 0}, {8, 1}};
    for (int k = 0; k < 4; k++) {
        struct words w = {buf, n, kinds[k][0], kinds[k][1]};
        uint64_t h[5];
        for (int i = 0; i < 5; i++)
            h[i] = word(&w);
        if (w.n != SIZE_MAX && h[0] == 0 && h[1] == 3 && h[2] <= 1 && h[3] > 0 && h[4] == 0) {
            *out = w;
            *period = h[3];
            return 1 + (int)h[2];
        }
    }
    return 0;
}

static int parse_cpu(struct builder *b, const char *buf, size_t n)
{
    struct words w;
    uint64_t period_us;
    int kind = cpu_header((const unsigned char *)buf, n, &w, &period_us);
    if (!kind)
        return UNRECOGNIZED;
    int java = kind == 2; /* Java's addresses are no return addresses: none adjusted */
    int64_t period = sc_mul_sat((int64_t)period_us, 1000);
    b->nvals = 2;
    for (uint64_t i = 0; w.n != SIZE_MAX && w.n > 0; i++) {
        int rc = sc_budget_poll_every(i, b->err);
        if (rc)
            return rc;
        uint64_t count = word(&w), nstk = word(&w);
        if (w.n == SIZE_MAX || nstk > w.n / 4)
            return UNRECOGNIZED;
        struct words peek = w;
        uint64_t a0 = nstk ? word(&peek) : 0;
        if (count == 0 && nstk == 1 && a0 == 0) {
            w = peek;
            break; /* the trailer */
        }
        int64_t v[2] = {(int64_t)count, sc_mul_sat((int64_t)count, period)};
        if ((rc = sample_begin(b, v, 0)))
            return rc;
        for (uint64_t k = 0; k < nstk; k++) {
            uint64_t a = word(&w);
            if ((rc = sample_loc(b, k > 0 && !java ? a - 1 : a)))
                return rc;
        }
    }
    if (java) {
        b->period = period;
        set_types(b, (const char *const[]){"samples", "count", "cpu", "nanoseconds"}, 2, "cpu",
                  "nanoseconds");
        return java_locations(b, (const char *)w.p, w.n == SIZE_MAX ? 0 : w.n);
    }
    /* Frames the signal handler pushed: when (nearly) every sample has the same second
     * frame, it is dropped, at most twice. */
    uint32_t margin = b->nsamples / 32;
    for (int iter = 0; iter < 2; iter++) {
        struct sc_map64 cnt = {0};
        uint64_t found = 0;
        int have = 0;
        for (uint32_t s = 0; s < b->nsamples; s++) {
            if (b->s_n[s] <= 1)
                continue;
            int added;
            uint64_t a = b->addrs[b->sl[b->s_start[s] + 1]];
            uint32_t *c = sc_map64_upsert(&cnt, a, 0, &added);
            if (!c) {
                sc_map64_release(&cnt);
                return nomem(b);
            }
            ++*c;
            if (*c >= b->nsamples - margin) {
                found = a;
                have = 1;
            }
        }
        sc_map64_release(&cnt);
        if (!have)
            continue;
        for (uint32_t s = 0; s < b->nsamples; s++)
            if (b->s_n[s] > 1 && b->addrs[b->sl[b->s_start[s] + 1]] == found)
                sample_drop(b, s, 1);
    }
    b->period = period;
    set_types(b, (const char *const[]){"samples", "count", "cpu", "nanoseconds"}, 2, "cpu",
              "nanoseconds");
    struct scanner s;
    size_t left = w.n == SIZE_MAX ? 0 : w.n;
    scan_init(&s, (const char *)w.p, left);
    return parse_maps(b, &s);
}

/* cleanupDuplicateLocations: the leaf seen twice, once adjusted as a caller */
static void cleanup_duplicates(struct builder *b)
{
    for (uint32_t s = 0; s < b->nsamples; s++) {
        if (b->s_n[s] < 2) /* (a sample of no location: sl may be NULL) */
            continue;
        const uint32_t *l = b->sl + b->s_start[s];
        if (b->addrs[l[0]] == b->addrs[l[1]] + 1)
            sample_drop(b, s, 1);
    }
}

/* ---- heap ---- */

/* scaleHeapSample: a sample of average size avg had the chance 1 - exp(-avg/rate) */
static void scale_heap(int64_t *count, int64_t *size, int64_t rate)
{
    if (*count == 0 || *size == 0) {
        *count = *size = 0;
        return;
    }
    if (rate <= 1)
        return;
    double avg = (double)*size / (double)*count;
    double scale = 1 / (1 - exp(-avg / (double)rate));
    *count = (int64_t)((double)*count * scale);
    *size = (int64_t)((double)*size * scale);
}

static int parse_heap(struct builder *b, const char *buf, size_t n)
{
    struct scanner s;
    scan_init(&s, buf, n);
    if (!scan(&s))
        return s.too_long ? sc_errf(b->err, SC_EFORMAT, "line longer than 64 KiB") : UNRECOGNIZED;
    int v2 = 0, has_alloc = 0;
    int64_t period = 0;
    struct match m;
    if (re_find(RE_HEAP_HEADER, s.line, s.len, &m) > 0) {
        if (m.n[6] && parse_int(m.s[6], m.n[6], 10, &period))
            return UNRECOGNIZED;
        if ((!same_str(m.s[3], m.n[3], m.s[1], m.n[1]) && !same_str(m.s[3], m.n[3], "0", 1)) ||
            (!same_str(m.s[4], m.n[4], m.s[2], m.n[2]) && !same_str(m.s[4], m.n[4], "0", 1)))
            has_alloc = 1;
        if (same_str(m.s[5], m.n[5], "heapz_v2", 8) || same_str(m.s[5], m.n[5], "heap_v2", 7)) {
            v2 = 1;
        } else if (same_str(m.s[5], m.n[5], "heapprofile", 11)) {
            period = 1;
        } else if (same_str(m.s[5], m.n[5], "heap", 4)) {
            v2 = 1;
            period /= 2;
        } else {
            return UNRECOGNIZED;
        }
    } else if (re_find(RE_GROWTH_HEADER, s.line, s.len, &m) > 0 ||
               re_find(RE_FRAG_HEADER, s.line, s.len, &m) > 0) {
        period = 1;
    } else {
        return UNRECOGNIZED;
    }
    b->period = period;
    b->heap = 1;
    if (has_alloc) /* alloc before inuse, so that pprof's default is inuse_space */
        set_types(b,
                  (const char *const[]){"alloc_objects", "count", "alloc_space", "bytes",
                                        "inuse_objects", "count", "inuse_space", "bytes"},
                  4, "space", "bytes");
    else
        set_types(b, (const char *const[]){"objects", "count", "space", "bytes"}, 2, "space",
                  "bytes");
    int rc;
    for (uint64_t i = 0; scan(&s); i++) {
        if ((rc = sc_budget_poll_every(i, b->err)))
            return rc;
        const char *line = s.line;
        size_t len = s.len;
        trim(&line, &len);
        if (space_or_comment(line, len))
            continue;
        if (map_sentinel(line, len))
            break;
        if (re_find(RE_HEAP_SAMPLE, line, len, &m) <= 0)
            return sc_errf(b->err, SC_EFORMAT,
                           "unexpected number of sample values: got 0, want 6 in '%.*s'",
                           (int)(len > 80 ? 80 : len), line);
        int64_t v[4], bs = 0;
        int nv = 0;
        /* alloc (groups 3, 4) first when present, then inuse (1, 2) */
        for (int pass = has_alloc ? 0 : 1; pass < 2; pass++) {
            int g = pass == 0 ? 3 : 1;
            int64_t count, size;
            if (parse_int(m.s[g], m.n[g], 10, &count) ||
                parse_int(m.s[g + 1], m.n[g + 1], 10, &size))
                return sc_errf(b->err, SC_EFORMAT, "malformed sample: %.*s",
                               (int)(len > 80 ? 80 : len), line);
            if (count == 0 && size != 0)
                return sc_errf(b->err, SC_EFORMAT, "%s count was 0 but %s bytes was %lld",
                               pass == 0 ? "allocation" : "inuse",
                               pass == 0 ? "allocation" : "inuse", (long long)size);
            if (count != 0) {
                bs = size / count;
                if (v2)
                    scale_heap(&count, &size, period);
            }
            v[nv++] = count;
            v[nv++] = size;
        }
        if ((rc = sample_begin(b, v, bs)))
            return rc;
        if ((rc = hex_addresses(b, m.s[5], m.n[5], 1, 1, NULL)))
            return rc;
    }
    if (s.too_long)
        return sc_errf(b->err, SC_EFORMAT, "line longer than 64 KiB");
    return additional_sections(b, &s);
}

/* ---- Go's count profiles (goroutine, threadcreate at debug=1) ---- */

static int parse_count(struct builder *b, const char *buf, size_t n)
{
    struct scanner s;
    scan_init(&s, buf, n);
    while (scan(&s) && space_or_comment(s.line, s.len))
        ;
    if (s.too_long)
        return sc_errf(b->err, SC_EFORMAT, "line longer than 64 KiB");
    struct match m;
    if (re_find(RE_COUNT_START, s.line, s.len, &m) <= 0)
        return UNRECOGNIZED;
    if (m.n[1] >= sizeof b->type_name)
        return sc_errf(b->err, SC_EFORMAT, "profile type name too long");
    memcpy(b->type_name, m.s[1], m.n[1]);
    b->type_name[m.n[1]] = 0;
    b->period = 1;
    set_types(b, (const char *const[]){b->type_name, "count"}, 1, b->type_name, "count");
    int rc;
    for (uint64_t i = 0; scan(&s); i++) {
        if ((rc = sc_budget_poll_every(i, b->err)))
            return rc;
        if (space_or_comment(s.line, s.len))
            continue;
        if (has_prefix(s.line, s.len, "---"))
            break;
        int64_t v;
        if (re_find(RE_COUNT, s.line, s.len, &m) <= 0 || parse_int(m.s[1], m.n[1], 0, &v))
            return sc_errf(b->err, SC_EFORMAT, "malformed profile format");
        if ((rc = sample_begin(b, &v, 0)) || (rc = hex_addresses(b, m.s[2], m.n[2], 1, 1, NULL)))
            return rc;
    }
    if (s.too_long)
        return sc_errf(b->err, SC_EFORMAT, "line longer than 64 KiB");
    return additional_sections(b, &s);
}

/* ---- threadz ---- */

static int parse_thread(struct builder *b, const char *buf, size_t n)
{
    struct scanner s;
    scan_init(&s, buf, n);
    while (scan(&s) && space_or_comment(s.line, s.len))
        ;
    const char *line = s.line;
    size_t len = s.len;
    struct match m;
    if (re_find(RE_THREADZ_START, line, len, &m) > 0) {
        while (scan(&s)) {
            line = s.line;
            len = s.len;
            if (map_sentinel(line, len) || has_prefix(line, len, "-"))
                break;
        }
    } else if (re_find(RE_THREAD_START, line, len, &m) <= 0) {
        return UNRECOGNIZED;
    }
    b->period = 1;
    set_types(b, (const char *const[]){"thread", "count"}, 1, "thread", "count");
    int rc;
    for (uint64_t i = 0; !map_sentinel(line, len); i++) {
        if ((rc = sc_budget_poll_every(i, b->err)))
            return rc;
        if (has_prefix(line, len, "---- no stack trace for"))
            break;
        if (re_find(RE_THREAD_START, line, len, &m) <= 0)
            return UNRECOGNIZED;
        /* parseThreadSample: the addresses up to the next "---" line */
        int same = 0;
        uint32_t sample = b->nsamples;
        int64_t one = 1;
        if ((rc = sample_begin(b, &one, 0)))
            return rc;
        line = "";
        len = 0;
        uint32_t total = 0;
        while (scan(&s)) {
            line = s.line;
            len = s.len;
            trim(&line, &len);
            if (len == 0)
                continue;
            if (has_prefix(line, len, "---"))
                break;
            if (contains(line, len, "same as previous thread")) {
                same = 1;
                continue;
            }
            uint32_t k;
            /* the leaf is no call; every other frame is adjusted back onto its call */
            if ((rc = hex_addresses(b, line, len, total == 0 ? 0 : 1, 1, &k)))
                return rc;
            total += k;
        }
        if (s.too_long)
            return sc_errf(b->err, SC_EFORMAT, "line longer than 64 KiB");
        if (same || total == 0) {
            /* "same as previous thread": one more on the sample before */
            b->nsamples = sample;
            b->nsl = b->s_start[sample];
            if (sample > 0)
                b->vals[sample - 1] = sc_add_sat(b->vals[sample - 1], 1);
        }
    }
    /* the scanner's line is where the loop stopped: the map (or no stack trace) */
    return additional_sections(b, &s);
}

/* ---- contention ---- */

static int parse_contention(struct builder *b, const char *buf, size_t n)
{
    struct scanner s;
    scan_init(&s, buf, n);
    if (!scan(&s))
        return s.too_long ? sc_errf(b->err, SC_EFORMAT, "line longer than 64 KiB") : UNRECOGNIZED;
    if (!has_prefix(s.line, s.len, "--- contentionz ") &&
        !has_prefix(s.line, s.len, "--- mutex:") && !has_prefix(s.line, s.len, "--- contention:"))
        return UNRECOGNIZED;
    int64_t cpu_hz = 0, period = 1, duration = 0;
    while (scan(&s)) {
        const char *line = s.line;
        size_t len = s.len;
        trim(&line, &len);
        if (space_or_comment(line, len))
            continue;
        if (has_prefix(line, len, "---"))
            break;
        const char *eq = memchr(line, '=', len);
        if (!eq)
            break;
        const char *k = line, *v = eq + 1;
        size_t kn = (size_t)(eq - line), vn = len - kn - 1;
        trim(&k, &kn);
        trim(&v, &vn);
        if (same_str(k, kn, "cycles/second", 13)) {
            if (parse_int(v, vn, 0, &cpu_hz))
                return UNRECOGNIZED;
        } else if (same_str(k, kn, "sampling period", 15)) {
            if (parse_int(v, vn, 0, &period))
                return UNRECOGNIZED;
        } else if (same_str(k, kn, "ms since reset", 14)) {
            int64_t ms;
            if (parse_int(v, vn, 0, &ms))
                return UNRECOGNIZED;
            duration = (int64_t)((uint64_t)ms * 1000000u);
        } else if (!same_str(k, kn, "discarded samples", 17)) {
            return UNRECOGNIZED; /* format, resolution and the unknown: not this format */
        }
    }
    if (s.too_long)
        return sc_errf(b->err, SC_EFORMAT, "line longer than 64 KiB");
    b->nvals = 2;
    int rc;
    for (uint64_t i = 0;; i++) {
        if ((rc = sc_budget_poll_every(i, b->err)))
            return rc;
        const char *line = s.line;
        size_t len = s.len;
        trim(&line, &len);
        if (has_prefix(line, len, "---"))
            break;
        if (!space_or_comment(line, len)) {
            struct match m;
            if (re_find(RE_CONTENTION_SAMPLE, line, len, &m) <= 0)
                return UNRECOGNIZED;
            int64_t v1, v2;
            if (parse_int(m.s[1], m.n[1], 10, &v1) || parse_int(m.s[2], m.n[2], 10, &v2))
                return sc_errf(b->err, SC_EFORMAT, "malformed sample: %.*s",
                               (int)(len > 80 ? 80 : len), line);
            /* unsampled: delays to nanoseconds through the clock rate, counts by period */
            if (period > 0) {
                if (cpu_hz > 0) {
                    double ghz = (double)cpu_hz / 1e9;
                    v1 = (int64_t)((double)v1 * (double)period / ghz);
                }
                v2 = (int64_t)((uint64_t)v2 * (uint64_t)period);
            }
            int64_t v[2] = {v2, v1};
            if ((rc = sample_begin(b, v, 0)) || (rc = hex_addresses(b, m.s[3], m.n[3], 1, 1, NULL)))
                return rc;
        }
        if (!scan(&s))
            break;
    }
    if (s.too_long)
        return sc_errf(b->err, SC_EFORMAT, "line longer than 64 KiB");
    b->period = period;
    b->duration = duration;
    set_types(b, (const char *const[]){"contentions", "count", "delay", "nanoseconds"}, 2,
              "contentions", "count");
    return additional_sections(b, &s);
}

/* ---- drop_frames, as addLegacyFrameInfo sets them ---- */

static const char alloc_rx[] =
    "calloc|cfree|malloc|free|memalign|do_memalign|(__)?posix_memalign|pvalloc|valloc|realloc|"
    "tcmalloc::.*|tc_calloc|tc_cfree|tc_malloc|tc_free|tc_memalign|tc_posix_memalign|"
    "tc_pvalloc|tc_valloc|tc_realloc|tc_new|tc_delete|tc_newarray|tc_deletearray|"
    "tc_new_nothrow|tc_newarray_nothrow|malloc_zone_malloc|malloc_zone_calloc|"
    "malloc_zone_valloc|malloc_zone_realloc|malloc_zone_memalign|malloc_zone_free|"
    "runtime\\..*|BaseArena::.*|(::)?do_malloc_no_errno|(::)?do_malloc_pages|(::)?do_malloc|"
    "DoSampledAllocation|MallocedMemBlock::MallocedMemBlock|_M_allocate|"
    "__builtin_(vec_)?delete|__builtin_(vec_)?new|__gnu_cxx::new_allocator::allocate|"
    "__libc_malloc|__malloc_alloc_template::allocate|allocate|cpp_alloc|operator new(\\[\\])?|"
    "simple_alloc::allocate";
static const char alloc_skip_rx[] = "runtime\\.panic|runtime\\.reflectcall|runtime\\.call[0-9]*";
static const char cpu_rx[] = "ProfileData::Add|ProfileData::prof_handler|CpuProfiler::prof_handler|"
                             "__pthread_sighandler|__restore";
static const char lock_rx[] =
    "RecordLockProfileData|(base::)?RecordLockProfileData.*|(base::)?SubmitMutexProfileData.*|"
    "(base::)?SubmitSpinLockProfileData.*|(base::Mutex::)?AwaitCommon.*|"
    "(base::Mutex::)?Unlock.*|(base::Mutex::)?UnlockSlow.*|(base::Mutex::)?ReaderUnlock.*|"
    "(base::MutexLock::)?~MutexLock.*|(Mutex::)?AwaitCommon.*|(Mutex::)?Unlock.*|"
    "(Mutex::)?UnlockSlow.*|(Mutex::)?ReaderUnlock.*|(MutexLock::)?~MutexLock.*|"
    "(SpinLock::)?Unlock.*|(SpinLock::)?SlowUnlock.*|(SpinLockHolder::)?~SpinLockHolder.*";

static int frame_info(struct sc_profile *p)
{
    const char *drop = cpu_rx, *keep = "";
    /* a Java profile without samples may name no sample types */
    struct sc_str t0 =
        p->nsample_types ? sc_profile_str(p, p->sample_types[0].type) : (struct sc_str){"", 0};
    if (same_str(t0.ptr, t0.len, "contentions", 11) && p->nsample_types == 2) {
        drop = lock_rx;
    } else if (same_str(t0.ptr, t0.len, "objects", 7) ||
               same_str(t0.ptr, t0.len, "alloc_objects", 13) ||
               same_str(t0.ptr, t0.len, "inuse_objects", 13)) {
        drop = alloc_rx;
        keep = alloc_skip_rx;
    }
    int64_t d = sc_profile_intern(p, drop, strlen(drop)),
            k = sc_profile_intern(p, keep, strlen(keep));
    if (d < 0 || k < 0)
        return SC_ENOMEM;
    p->drop_frames = (uint32_t)d;
    p->keep_frames = (uint32_t)k;
    return 0;
}

/* ---- entry points ---- */

int sc_legacy_detect(const void *buf, size_t n)
{
    struct words w;
    uint64_t period;
    if (cpu_header(buf, n, &w, &period))
        return 1;
    const char *s = buf, *end = s + n;
    /* the first line that is not blank or a comment */
    for (;;) {
        const char *e = memchr(s, '\n', (size_t)(end - s));
        size_t len = (size_t)((e ? e : end) - s);
        if (!space_or_comment(s, len) || !e) {
            const char *l = s;
            trim(&l, &len);
            static const char *const heads[] = {"heap profile:", "--- contention",
                                                "--- mutex:",    "--- threadz ",
                                                "--- Thread ",   "--- heapz 1 ---"};
            for (size_t i = 0; i < sizeof heads / sizeof heads[0]; i++)
                if (has_prefix(l, len, heads[i]))
                    return 1;
            struct match m;
            return len <= MAX_LINE && re_find(RE_COUNT_START, l, len, &m) > 0;
        }
        s = e + 1;
    }
}

/* The header of the profile: sample types, period, duration. */
static int emit_header(const struct builder *b, struct sc_profile *p)
{
    for (size_t i = 0; i < b->ntypes; i++)
        if (sc_profile_add_sample_type(p, b->types[2 * i], b->types[2 * i + 1]) < 0)
            return SC_ENOMEM;
    int64_t t = sc_profile_intern(p, b->ptype, strlen(b->ptype));
    int64_t u = sc_profile_intern(p, b->punit, strlen(b->punit));
    if (t < 0 || u < 0)
        return SC_ENOMEM;
    p->period_type.type = (uint32_t)t;
    p->period_type.unit = (uint32_t)u;
    p->period = b->period;
    p->duration_nanos = b->duration;
    return frame_info(p);
}

int sc_legacy_decode(const char *buf, size_t n, const struct sc_limits *lim, struct sc_profile *p,
                     char *err)
{
    typedef int (*parser)(struct builder *, const char *, size_t);
    static const parser parsers[] = {parse_cpu,    parse_heap,       parse_count,
                                     parse_thread, parse_contention, parse_java};
    for (size_t i = 0; i < sizeof parsers / sizeof parsers[0]; i++) {
        struct builder b = {.lim = lim, .err = err};
        sc_arena_init(&b.arena);
        int rc = parsers[i](&b, buf, n);
        if (rc == UNRECOGNIZED) {
            builder_release(&b);
            continue;
        }
        if (rc == 0) {
            /* cpu and threadz: the leaf seen twice */
            if ((parsers[i] == parse_cpu && !b.java) || parsers[i] == parse_thread)
                cleanup_duplicates(&b);
            rc = emit_header(&b, p) ? sc_errf(err, SC_ENOMEM, "out of memory") : emit(&b, p);
        }
        builder_release(&b);
        return rc;
    }
    return sc_errf(err, SC_EFORMAT, "unrecognized profile format");
}

/* ---- pruning (pprof's Prune) ---- */

/* simplifyFunc: no leading '.', nothing from the first '(' that does not belong to
 * "(anonymous namespace)" or "operator()" */
static size_t simplify_func(const char *s, size_t n)
{
    for (size_t i = 0; i < n;) {
        if (n - i >= 21 && memcmp(s + i, "(anonymous namespace)", 21) == 0)
            i += 21;
        else if (n - i >= 10 && memcmp(s + i, "operator()", 10) == 0)
            i += 10;
        else if (s[i] == '(')
            return i;
        else
            i++;
    }
    return n;
}

static pcre2_code *compile_anchored(struct sc_str rx)
{
    struct sc_buf b = SC_BUF_INIT;
    sc_buf_append(&b, "^(?:", 4);
    sc_buf_append(&b, rx.ptr, rx.len);
    sc_buf_append(&b, ")$", 2);
    if (b.oom) {
        sc_buf_release(&b);
        return NULL;
    }
    int ec;
    PCRE2_SIZE eo;
    pcre2_code *re = pcre2_compile((PCRE2_SPTR)b.data, b.len, PCRE2_DOLLAR_ENDONLY, &ec, &eo, NULL);
    sc_buf_release(&b);
    return re;
}

static int rx_match(pcre2_code *re, pcre2_match_data *md, const char *s, size_t n)
{
    pthread_once(&re_once, re_init);
    return pcre2_match(re, (PCRE2_SPTR)(n ? s : ""), n, 0, 0, md, re_mctx) > 0;
}

int sc_legacy_prune(struct sc_profile *p, char *err)
{
    struct sc_str drop = sc_profile_str(p, p->drop_frames),
                  keep = sc_profile_str(p, p->keep_frames);
    if (!drop.len || p->lazy)
        return 0;
    pcre2_code *dre = compile_anchored(drop), *kre = keep.len ? compile_anchored(keep) : NULL;
    pcre2_match_data *md = pcre2_match_data_create(1, NULL);
    uint8_t *mark = calloc((size_t)p->nlocations + 1, 1); /* 1 prune, 2 prune beneath */
    struct sc_arena a;
    sc_arena_init(&a);
    int rc = 0;
    if (!dre || (keep.len && !kre) || !md || !mark) {
        rc = sc_errf(err, SC_ENOMEM, "out of memory");
        goto out;
    }
    for (uint32_t i = 0; i < p->nlocations; i++) {
        struct sc_location *l = &p->locations[i];
        if (!l->nlines)
            continue;
        const struct sc_line *lines = sc_location_lines(p, l);
        int64_t j;
        for (j = (int64_t)l->nlines - 1; j >= 0; j--) {
            uint32_t fn = lines[j].function;
            struct sc_str name;
            if (!fn)
                continue;
            if (sc_pprof_name(p, fn - 1, &a, &name)) {
                rc = sc_errf(err, SC_ENOMEM, "out of memory");
                goto out;
            }
            if (!name.len)
                continue;
            const char *s = name.ptr;
            size_t n = name.len;
            if (s[0] == '.') {
                s++;
                n--;
            }
            n = simplify_func(s, n);
            if (rx_match(dre, md, s, n) && !(kre && rx_match(kre, md, s, n)))
                break;
        }
        if (j < 0)
            continue;
        mark[i] = 2;
        if (j == (int64_t)l->nlines - 1) {
            mark[i] = 1;
        } else {
            l->line_start += (uint32_t)j + 1;
            l->nlines -= (uint32_t)j + 1;
        }
    }
    /* each sample loses the frames from the leaf up to the first pruned one above a user
     * frame (from the root) */
    for (uint32_t s = 0; s < p->nsamples; s++) {
        struct sc_sample *sm = &p->samples[s];
        const uint32_t *locs = p->sample_locs + sm->loc_start;
        int user = 0;
        for (int64_t i = (int64_t)sm->nlocs - 1; i >= 0; i--) {
            uint8_t m = mark[locs[i]];
            if (!m) {
                user = 1;
                continue;
            }
            if (!user)
                continue;
            uint32_t cut = m == 1 ? (uint32_t)i + 1 : (uint32_t)i;
            sm->loc_start += cut;
            sm->nlocs -= cut;
            break;
        }
    }
out:
    sc_arena_release(&a);
    free(mark);
    pcre2_match_data_free(md);
    pcre2_code_free(dre);
    pcre2_code_free(kre);
    return rc;
}
