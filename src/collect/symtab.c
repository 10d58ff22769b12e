/* symtab.c - sorted symbol tables; the kallsyms, perf-map, gopclntab and maps parsers. */
#include "collect/symtab.h"
#include "model/buf.h"
#include "model/error.h"
#include "model/radix.h"

#include <stdlib.h>
#include <string.h>

void sc_symtab_init(struct sc_symtab *t)
{
    memset(t, 0, sizeof *t);
}

void sc_symtab_release(struct sc_symtab *t)
{
    free(t->want);
    free(t->v);
    free(t->add);
    free(t->names);
    memset(t, 0, sizeof *t);
}

int sc_symtab_add(struct sc_symtab *t, uint64_t start, uint64_t size, const char *name,
                  size_t name_len, uint8_t rank)
{
    if (name_len == 0)
        return 0;
    if (name_len > UINT32_MAX || t->names_len + name_len + 1 > UINT32_MAX)
        return SC_ELIMIT;
    int rc = sc_grow_array(&t->add, &t->addcap, (uint64_t)t->nadd + 1, sizeof *t->add);
    if (rc)
        return rc;
    if (t->names_len + name_len + 1 > t->names_cap &&
        (rc = sc_grow_array(&t->names, &t->names_cap, t->names_len + name_len + 1, 1)) != 0)
        return rc;
    memcpy(t->names + t->names_len, name, name_len);
    t->names[t->names_len + name_len] = 0;
    t->add[t->nadd] = (struct sc_symtab_new){start, size, (uint32_t)t->names_len, t->nadd, rank};
    t->nadd++;
    t->names_len += name_len + 1;
    return 0;
}

int sc_symtab_reserve(struct sc_symtab *t, uint32_t nsyms, size_t name_bytes)
{
    if (sc_grow_array(&t->add, &t->addcap, (uint64_t)t->nadd + nsyms, sizeof *t->add))
        return SC_ENOMEM;
    if (t->names_len + name_bytes > UINT32_MAX || t->names_len + name_bytes <= t->names_cap)
        return 0;
    char *nn = realloc(t->names, t->names_len + name_bytes);
    if (!nn)
        return SC_ENOMEM;
    t->names = nn;
    t->names_cap = (uint32_t)(t->names_len + name_bytes);
    return 0;
}

int sc_symtab_add_ref(struct sc_symtab *t, uint64_t start, uint64_t size, uint32_t name,
                      uint8_t rank)
{
    int rc = sc_grow_array(&t->add, &t->addcap, (uint64_t)t->nadd + 1, sizeof *t->add);
    if (rc)
        return rc;
    t->add[t->nadd] = (struct sc_symtab_new){start, size, name, t->nadd, rank};
    t->nadd++;
    return 0;
}

static int cmp_start(const void *a, const void *b)
{
    const struct sc_symtab_new *x = a, *y = b;
    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq; /* as added (perf's rules need it) */
}

/* The symbols by start, then seq, as qsort with cmp_start would: seq is each one's index, so
 * stability keeps seq's order. The candidates by start. The wanted addresses. */
#define START(e) ((e).start)
#define SELF(e) (e)
SC_RADIX_SORT(radix_sort, struct sc_symtab_new, START)
SC_RADIX_SORT(radix_sort_cands, struct sc_symtab_cand, START)
SC_RADIX_SORT(radix_sort_u64, uint64_t, SELF)

static uint32_t leading_underscores(const char *s)
{
    uint32_t k = 0;
    while (s[k] == '_')
        k++;
    return k;
}

/* Is a a better name than b for the same address? */
/* perf's choice (its choose_best_symbol, on ELF ranks: 3 global, 2 weak, 1 local). */
static int better_perf(const struct sc_symtab *t, const struct sc_symtab_new *a,
                       const struct sc_symtab_new *b)
{
    if (t->names_rule == SC_SYMTAB_PERF_KALLSYMS)
        return a->seq > b->seq; /* its sizes reach the next symbol: only the last has one */
    if ((a->size != 0) != (b->size != 0))
        return a->size != 0;
    if ((a->rank == 2) != (b->rank == 2))
        return b->rank == 2;
    if ((a->rank == 3) != (b->rank == 3))
        return a->rank == 3;
    const char *x = t->names + a->name, *y = t->names + b->name;
    uint32_t ua = leading_underscores(x), ub = leading_underscores(y);
    if (ua != ub)
        return ua < ub;
    size_t la = strlen(x), lb = strlen(y);
    if (la != lb)
        return la > lb;
    return a->seq < b->seq;
}

static int better(const struct sc_symtab *t, const struct sc_symtab_new *a,
                  const struct sc_symtab_new *b)
{
    if (t->names_rule != SC_SYMTAB_OURS)
        return better_perf(t, a, b);
    if (a->rank != b->rank)
        return a->rank > b->rank;
    const char *x = t->names + a->name, *y = t->names + b->name;
    uint32_t ua = leading_underscores(x), ub = leading_underscores(y);
    if (ua != ub)
        return ua < ub;
    size_t la = strlen(x), lb = strlen(y);
    if (la != lb)
        return la < lb;
    int c = strcmp(x, y);
    if (c)
        return c < 0;
    return a->size > b->size;
}

void sc_symtab_finish(struct sc_symtab *t, uint64_t max_gap)
{
    /* the entries of an earlier finish take part again (a debug file's symbols joining a
     * binary's), ranked in the middle */
    if (t->n && sc_grow_array(&t->add, &t->addcap, (uint64_t)t->nadd + t->n, sizeof *t->add) == 0) {
        for (uint32_t i = 0; i < t->n; i++) {
            t->add[t->nadd] =
                (struct sc_symtab_new){t->v[i].start, t->v[i].size, t->v[i].name, t->nadd, 2};
            t->nadd++;
        }
        t->n = 0;
    }
    struct sc_symtab_new *a = t->add;
    uint32_t n = t->nadd;
    if (n && sc_grow_array(&t->v, &t->cap, n, sizeof *t->v) != 0)
        n = 0; /* out of memory: an empty table names nothing, which is safe */
    /* /proc/kallsyms comes sorted but for its modules: sort only what needs it */
    uint32_t sorted = 1;
    while (sorted < n && a[sorted - 1].start <= a[sorted].start)
        sorted++;
    if (sorted < n && radix_sort(a, n) != 0)
        qsort(a, n, sizeof *a, cmp_start);
    uint32_t k = 0;
    for (uint32_t i = 0; i < n;) {
        uint32_t best = i, j = i + 1;
        uint64_t size = a[i].size;
        for (; j < n && a[j].start == a[i].start; j++) {
            if (better(t, &a[j], &a[best]))
                best = j;
            if (a[j].size > size)
                size = a[j].size; /* an alias with a size tells the extent */
        }
        uint64_t sz = a[best].size ? a[best].size : size;
        if (!sz) {
            uint64_t gap = j < n ? a[j].start - a[i].start : max_gap;
            /* perf ends the last one at the page after the one it starts in (an ELF file's
             * _fini, last in a stripped library's debug symbols, has no size) */
            if (j == n && !max_gap && t->names_rule == SC_SYMTAB_PERF_ELF)
                gap = ((a[i].start + 4095) & ~(uint64_t)4095) + 4096 - a[i].start;
            if (max_gap && gap > max_gap)
                gap = max_gap;
            sz = gap ? gap : 1;
        }
        t->v[k++] = (struct sc_symtab_ent){a[i].start, sz > UINT32_MAX ? UINT32_MAX : (uint32_t)sz,
                                           a[best].name};
        i = j;
    }
    t->n = k;
    if (!t->names_in_file && t->names && t->names_cap > t->names_len + 65536) {
        char *nn = realloc(t->names, t->names_len ? t->names_len : 1); /* (a reserve's rest) */
        if (nn) {
            t->names = nn;
            t->names_cap = t->names_len ? (uint32_t)t->names_len : 1;
        }
    }
    free(t->add);
    t->add = NULL;
    t->nadd = t->addcap = 0;
    if (t->cap > k + 1024) { /* give back what the aliases took */
        struct sc_symtab_ent *v = realloc(t->v, ((size_t)k + 1) * sizeof *v);
        if (v) {
            t->v = v;
            t->cap = k + 1;
        }
    }
    t->bytes = sizeof *t + (size_t)t->cap * sizeof *t->v + t->names_cap;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

void sc_symtab_want_ready(struct sc_symtab *t)
{
    uint32_t k = 0;
    for (uint32_t i = 0; t->want_offsets && i < t->nwant; i++) {
        uint64_t va;
        if (sc_symtab_vaddr(t, t->want[i], &va))
            t->want[i] = va;
    }
    if (radix_sort_u64(t->want, t->nwant))
        qsort(t->want, t->nwant, sizeof *t->want, cmp_u64); /* (no memory for a copy) */
    for (uint32_t i = 0; i < t->nwant; i++)
        if (!k || t->want[k - 1] != t->want[i])
            t->want[k++] = t->want[i];
    t->nwant = k;
    t->want_offsets = 0;
}

int sc_symtab_wanted(const struct sc_symtab *t, struct sc_symtab_cand *c, uint32_t n,
                     uint32_t **out, uint32_t *nout)
{
    /* bucket k holds the starts in (want[k-1], want[k]], bucket nwant those above every
     * wanted address: the greatest start at or below want[k] is the greatest of the last
     * non-empty bucket up to k, the least start above that one the least of the next
     * non-empty bucket; so each bucket's least and greatest starts are kept, with all the
     * symbols at them */
    if (radix_sort_cands(c, n))
        return SC_ENOMEM;
    uint32_t *v = malloc(((size_t)n + 1) * sizeof *v), k = 0, w = 0;
    if (!v)
        return SC_ENOMEM;
    for (uint32_t i = 0; i < n;) {
        while (w < t->nwant && t->want[w] < c[i].start)
            w++;
        /* [i, j) the bucket of c[i]: starts up to want[w] (all the rest when w is past them) */
        uint32_t j = i;
        while (j < n && (w == t->nwant || c[j].start <= t->want[w]))
            j++;
        uint32_t a = i + 1, b = j - 1; /* the runs of the least and the greatest start */
        while (a < j && c[a].start == c[i].start)
            a++;
        while (b > a && c[b - 1].start == c[j - 1].start)
            b--;
        for (uint32_t x = i; x < a; x++)
            v[k++] = c[x].index;
        for (uint32_t x = b > a ? b : a; x < j; x++)
            v[k++] = c[x].index;
        i = j;
    }
    /* in the order the table lists them (which of several names wins can depend on it) */
    for (uint32_t x = 0; x < k; x++)
        c[x] = (struct sc_symtab_cand){v[x], v[x]};
    if (radix_sort_cands(c, k)) {
        free(v);
        return SC_ENOMEM;
    }
    for (uint32_t x = 0; x < k; x++)
        v[x] = c[x].index;
    *out = v;
    *nout = k;
    return 0;
}

const struct sc_symtab_ent *sc_symtab_find(const struct sc_symtab *t, uint64_t addr)
{
    uint32_t lo = 0, hi = t->n;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (t->v[mid].start <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0)
        return NULL;
    const struct sc_symtab_ent *e = &t->v[lo - 1];
    return addr - e->start < (uint64_t)e->size ? e : NULL;
}

int sc_symtab_vaddr(const struct sc_symtab *t, uint64_t offset, uint64_t *vaddr)
{
    for (uint32_t i = 0; i < t->nseg; i++) {
        const struct sc_segment *s = &t->seg[i];
        if (offset >= s->offset && offset - s->offset < s->filesz) {
            *vaddr = offset - s->offset + s->vaddr;
            return 1;
        }
    }
    return 0;
}

/* ---- text parsers ---- */

/* A hex digit's value + 1, 0 for any other character (read_hex and the kallsyms lines run
 * over every line of kallsyms: a table, not branches). */
static const uint8_t hexval[256] = {
    ['0'] = 1,  ['1'] = 2,  ['2'] = 3,  ['3'] = 4,  ['4'] = 5,  ['5'] = 6,  ['6'] = 7,  ['7'] = 8,
    ['8'] = 9,  ['9'] = 10, ['a'] = 11, ['b'] = 12, ['c'] = 13, ['d'] = 14, ['e'] = 15, ['f'] = 16,
    ['A'] = 11, ['B'] = 12, ['C'] = 13, ['D'] = 14, ['E'] = 15, ['F'] = 16};

/* A hex digit's value, or above 15 for any other character (no branch: lines of kallsyms
 * are parsed 121k at a time). */
static unsigned hex_of(char c)
{
    return (unsigned)hexval[(unsigned char)c] - 1;
}

/* A hex number at *p (optional 0x), advancing *p; -1 when there is none or it overflows. */
static int read_hex(const char **p, const char *end, uint64_t *out)
{
    const char *s = *p;
    if (end - s > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X') && hex_of(s[2]) < 16)
        s += 2;
    uint64_t v = 0;
    const char *first = s;
    unsigned h;
    for (; s < end && (h = hex_of(*s)) < 16; s++) {
        if (v >> 60)
            return -1;
        v = v << 4 | h;
    }
    if (s == first)
        return -1;
    *p = s;
    *out = v;
    return 0;
}

static const char *skip_blanks(const char *p, const char *end)
{
    while (p < end && (*p == ' ' || *p == '\t'))
        p++;
    return p;
}

/* One line of kallsyms, [p, le): 1 when it is a text symbol (then its address, rank and
 * name), else 0. */
static int kallsyms_line(const char *p, const char *le, uint64_t *addr, uint8_t *rank,
                         const char **name, size_t *nlen)
{
    const char *s = p;
    if (read_hex(&s, le, addr) || s >= le || (*s != ' ' && *s != '\t'))
        return 0;
    s = skip_blanks(s, le);
    if (s + 1 >= le)
        return 0;
    char type = *s++;
    if (type != 't' && type != 'T' && type != 'w' && type != 'W')
        return 0;
    s = skip_blanks(s, le);
    *name = s;
    while (s < le && *s != ' ' && *s != '\t')
        s++;
    if (!*addr || s == *name)
        return 0;
    *rank = type == 'T' ? 3 : type == 't' ? 2 : 1;
    *nlen = (size_t)(s - *name);
    return 1;
}

int sc_symtab_kallsyms_lines(const char *text, size_t len, struct sc_symtab_cand **out,
                             uint32_t *nout)
{
    if (len > UINT32_MAX)
        return SC_ELIMIT;
    /* a line has at least 20 bytes ("ffffffff81000000 T x\n"): room for all at once */
    uint32_t nc = 0, cap = (uint32_t)(len / 20) + 1;
    struct sc_symtab_cand *c = malloc((size_t)cap * sizeof *c);
    if (!c)
        return SC_ENOMEM;
    const char *p = text, *end = text + len, *name;
    uint64_t addr;
    uint8_t rank;
    size_t nlen;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p)), *le = nl ? nl : end;
        int text_sym = -1;
        if (le - p > 19 && p[16] == ' ' && p[18] == ' ' && p[19] != ' ' && p[19] != '\t') {
            /* the usual line, 16 digits, its type, its name: its address is all needed */
            unsigned bad = 0;
            addr = 0;
            for (int k = 0; k < 16; k++) {
                unsigned h = hex_of(p[k]);
                bad |= h >> 4;
                addr = addr << 4 | (h & 15);
            }
            char type = p[17];
            if (!bad)
                text_sym = addr && (type == 't' || type == 'T' || type == 'w' || type == 'W');
        }
        if (text_sym < 0) /* (any other line as the full parse reads it) */
            text_sym = kallsyms_line(p, le, &addr, &rank, &name, &nlen);
        if (text_sym) {
            if (nc == cap && sc_grow_array(&c, &cap, (uint64_t)nc + 1, sizeof *c)) {
                free(c);
                return SC_ENOMEM;
            }
            c[nc++] = (struct sc_symtab_cand){addr, (uint32_t)(p - text)};
        }
        p = nl ? nl + 1 : end;
    }
    *out = c;
    *nout = nc;
    return 0;
}

int sc_symtab_parse_kallsyms_lines(struct sc_symtab *t, const char *text, size_t len,
                                   struct sc_symtab_cand *c, uint32_t nc)
{
    uint32_t *pick = NULL, npick = 0;
    int rc = sc_symtab_wanted(t, c, nc, &pick, &npick);
    const char *end = text + len, *name;
    uint64_t addr;
    uint8_t rank;
    size_t nlen;
    for (uint32_t i = 0; !rc && i < npick; i++) {
        const char *p = text + pick[i];
        if (p >= end)
            continue;
        const char *nl = memchr(p, '\n', (size_t)(end - p)), *le = nl ? nl : end;
        if (kallsyms_line(p, le, &addr, &rank, &name, &nlen))
            rc = sc_symtab_add(t, addr, 0, name, nlen, rank);
    }
    free(pick);
    return rc;
}

int sc_symtab_parse_kallsyms(struct sc_symtab *t, const char *text, size_t len)
{
    int rc;
    struct sc_symtab_cand *c;
    uint32_t nc;
    /* (for want, all lines' addresses first, then the lines it needs; without the memory
     * for that, all of them as below) */
    if (sc_symtab_picks(t) && sc_symtab_kallsyms_lines(text, len, &c, &nc) == 0) {
        rc = sc_symtab_parse_kallsyms_lines(t, text, len, c, nc);
        free(c);
        return rc;
    }
    const char *p = text, *end = text + len, *name;
    uint64_t addr;
    uint8_t rank;
    size_t nlen;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p)), *le = nl ? nl : end;
        if (kallsyms_line(p, le, &addr, &rank, &name, &nlen) &&
            (rc = sc_symtab_add(t, addr, 0, name, nlen, rank)) != 0)
            return rc;
        p = nl ? nl + 1 : end;
    }
    return 0;
}

int sc_symtab_parse_perf_map(struct sc_symtab *t, const char *text, size_t len)
{
    const char *p = text, *end = text + len;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *le = nl ? nl : end;
        const char *s = p;
        p = nl ? nl + 1 : end;
        uint64_t start, size;
        if (read_hex(&s, le, &start) || s >= le || (*s != ' ' && *s != '\t'))
            continue;
        s = skip_blanks(s, le);
        if (read_hex(&s, le, &size) || s >= le || (*s != ' ' && *s != '\t'))
            continue;
        s = skip_blanks(s, le);
        const char *e = le;
        while (e > s && (e[-1] == '\r' || e[-1] == ' ' || e[-1] == '\t'))
            e--;
        if (e == s || size == 0)
            continue;
        int rc = sc_symtab_add(t, start, size, s, (size_t)(e - s), 2);
        if (rc)
            return rc;
    }
    return 0;
}

int sc_maps_parse_line(const char *line, size_t len, struct sc_maps_line *out)
{
    memset(out, 0, sizeof *out);
    const char *p = line, *end = line + len;
    uint64_t dmaj, dmin;
    if (read_hex(&p, end, &out->start) || p >= end || *p++ != '-' || read_hex(&p, end, &out->end) ||
        out->end < out->start)
        return SC_EFORMAT;
    p = skip_blanks(p, end);
    if (end - p < 4)
        return SC_EFORMAT;
    out->exec = p[2] == 'x';
    p += 4;
    if (p >= end || *p != ' ')
        return SC_EFORMAT;
    p = skip_blanks(p, end);
    if (read_hex(&p, end, &out->offset))
        return SC_EFORMAT;
    p = skip_blanks(p, end);
    if (read_hex(&p, end, &dmaj) || p >= end || *p++ != ':' || read_hex(&p, end, &dmin) ||
        dmaj > UINT32_MAX || dmin > UINT32_MAX)
        return SC_EFORMAT;
    out->dev_major = (uint32_t)dmaj;
    out->dev_minor = (uint32_t)dmin;
    p = skip_blanks(p, end);
    uint64_t ino = 0;
    int digits = 0;
    for (; p < end && *p >= '0' && *p <= '9'; p++, digits++) {
        if (ino > UINT64_MAX / 10 - 9)
            return SC_EFORMAT;
        ino = ino * 10 + (uint64_t)(*p - '0');
    }
    if (!digits)
        return SC_EFORMAT;
    out->inode = ino;
    p = skip_blanks(p, end);
    out->path = p;
    out->path_len = (size_t)(end - p);
    return 0;
}

/* ---- Go's pclntab ----
 *
 * Layouts (little-endian; P = pointer size, 4 or 8; offsets from the section start):
 *
 *   Go 1.2-1.15  magic 0xfffffffb   0: magic u32, 4: pad u16, 6: quantum u8, 7: P u8,
 *                                   8: nfunc (P), 8+P: functab of nfunc {entry P,
 *                                   funcoff P} then the end pc; a _func at funcoff starts
 *                                   {entry P, nameoff i32}, the name at nameoff
 *   Go 1.16-1.17 magic 0xfffffffa   8: nfunc, nfiles, funcnameOffset, cuOffset,
 *                                   filetabOffset, pctabOffset, pclnOffset (P each);
 *                                   functab at pclnOffset {entry P, funcoff P}, funcoff
 *                                   and the _func {entry P, nameoff i32} relative to
 *                                   pclnOffset, names at funcnameOffset + nameoff
 *   Go 1.18+     magic 0xfffffff0,  8: nfunc, nfiles, textStart, funcnameOffset, cuOffset,
 *                0xfffffff1 (1.20)   filetabOffset, pctabOffset, pclnOffset (P each);
 *                                   functab {entryoff u32, funcoff u32} (entry =
 *                                   textStart + entryoff), _func {entryoff u32, nameoff
 *                                   i32} */

struct pcln {
    const uint8_t *d;
    size_t n;
    uint32_t ptr;
};

static int rd32(const struct pcln *c, uint64_t off, uint32_t *v)
{
    if (off > c->n || c->n - off < 4)
        return -1;
    *v = (uint32_t)c->d[off] | (uint32_t)c->d[off + 1] << 8 | (uint32_t)c->d[off + 2] << 16 |
         (uint32_t)c->d[off + 3] << 24;
    return 0;
}

static int rdptr(const struct pcln *c, uint64_t off, uint64_t *v)
{
    uint32_t lo, hi = 0;
    if (rd32(c, off, &lo) || (c->ptr == 8 && rd32(c, off + 4, &hi)))
        return -1;
    *v = (uint64_t)hi << 32 | lo;
    return 0;
}

/* A NUL-terminated name at off within [0, n). */
static int pcln_name(const struct pcln *c, uint64_t off, const char **s, size_t *len)
{
    if (off >= c->n)
        return -1;
    const uint8_t *z = memchr(c->d + off, 0, c->n - off);
    if (!z)
        return -1;
    *s = (const char *)c->d + off;
    *len = (size_t)(z - (c->d + off));
    return 0;
}

int sc_symtab_parse_gopclntab(struct sc_symtab *t, const uint8_t *data, size_t len,
                              uint64_t text_vaddr)
{
    struct pcln c = {data, len, 0};
    uint32_t magic;
    if (len < 16 || rd32(&c, 0, &magic) || data[4] || data[5])
        return SC_EFORMAT;
    c.ptr = data[7];
    if (c.ptr != 4 && c.ptr != 8)
        return SC_EFORMAT;
    int ver = magic == 0xfffffffb                          ? 2
              : magic == 0xfffffffa                        ? 16
              : magic == 0xfffffff0 || magic == 0xfffffff1 ? 18
                                                           : 0;
    if (!ver)
        return SC_EFORMAT;
    uint64_t nfunc, text = 0, nameoff = 0, pcln = 0;
    if (rdptr(&c, 8, &nfunc))
        return SC_EFORMAT;
    uint32_t P = c.ptr;
    if (ver == 2) {
        pcln = 8 + P;
    } else if (ver == 16) {
        if (rdptr(&c, 8 + 2 * P, &nameoff) || rdptr(&c, 8 + 6 * P, &pcln))
            return SC_EFORMAT;
    } else {
        if (rdptr(&c, 8 + 2 * P, &text) || rdptr(&c, 8 + 3 * P, &nameoff) ||
            rdptr(&c, 8 + 7 * P, &pcln))
            return SC_EFORMAT;
        if (!text)
            text = text_vaddr;
    }
    /* each functab entry takes 8 or 2P bytes of the section: bounds nfunc */
    uint64_t esize = ver == 18 ? 8 : 2 * (uint64_t)P;
    if (pcln > len || nfunc > (len - pcln) / esize)
        return SC_EFORMAT;
    /* the base funcoff and nameoff are relative to */
    uint64_t fbase = ver == 2 ? 0 : pcln;
    uint64_t nbase = ver == 2 ? 0 : nameoff;
    uint64_t prev_entry = 0;
    for (uint64_t i = 0; i < nfunc; i++) {
        uint64_t e = pcln + i * esize, entry, funcoff, next = 0;
        if (ver == 18) {
            uint32_t a, b, z;
            if (rd32(&c, e, &a) || rd32(&c, e + 4, &b))
                return SC_EFORMAT;
            entry = text + a;
            funcoff = b;
            if (!rd32(&c, e + 8, &z))
                next = text + z;
        } else {
            if (rdptr(&c, e, &entry) || rdptr(&c, e + P, &funcoff))
                return SC_EFORMAT;
            rdptr(&c, e + 2 * (uint64_t)P, &next); /* the next entry, or the end pc */
        }
        /* the _func's nameoff follows its entry (u32 or P) */
        uint64_t fo = fbase + funcoff + (ver == 18 ? 4 : P);
        uint32_t no;
        const char *name;
        size_t nlen;
        if (fo < fbase || rd32(&c, fo, &no) || (int32_t)no < 0 ||
            pcln_name(&c, nbase + no, &name, &nlen))
            continue; /* one bad entry does not spoil the table */
        if (entry < prev_entry)
            return SC_EFORMAT; /* the functab is sorted */
        prev_entry = entry;
        uint64_t size = next > entry ? next - entry : 0;
        if (size > (64u << 20))
            size = 0; /* not plausible: up to the next symbol */
        int rc = sc_symtab_add(t, entry, size, name, nlen, 2);
        if (rc)
            return rc;
    }
    return 0;
}
