/* folded.c - folded stacks ("a;b;c 12") in and out. */
#include "formats/folded.h"
#include "model/error.h"
#include "model/stackwalk.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

static int64_t round_count(double c)
{
    if (c >= 9.2e18)
        return INT64_MAX;
    return (int64_t)llround(c);
}

/* Parses the trailing count of s[0..*len) as flamegraph.pl's /^(.*)\s+?(\d+(?:\.\d*)?)$/
 * does: digits with an optional fraction, preceded by one whitespace character that ends
 * the stack. Whole numbers are taken exactly (Perl keeps them as integers; a double would
 * round those past 2^53), saturating at INT64_MAX; fractions are rounded.
 * On success shortens *len to the stack and returns 1. */
static int trailing_count(const char *s, size_t *len, int64_t *count)
{
    size_t e = *len;
    size_t d = e;
    int fraction = 0;
    while (d > 0 && s[d - 1] >= '0' && s[d - 1] <= '9')
        d--;
    if (d > 0 && s[d - 1] == '.') {
        /* "12." and "12.5" are numbers; ".5" is not */
        size_t i = d - 1;
        while (i > 0 && s[i - 1] >= '0' && s[i - 1] <= '9')
            i--;
        if (i == d - 1)
            return 0;
        d = i;
        fraction = 1;
    }
    if (d == e || d == 0 || !is_space(s[d - 1]))
        return 0;
    if (fraction) {
        char tmp[64];
        size_t n = e - d < sizeof tmp - 1 ? e - d : sizeof tmp - 1;
        memcpy(tmp, s + d, n);
        tmp[n] = 0;
        *count = round_count(strtod(tmp, NULL));
    } else {
        int64_t v = 0;
        for (size_t i = d; i < e; i++) {
            int digit = s[i] - '0';
            if (v > (INT64_MAX - digit) / 10) {
                v = INT64_MAX;
                break;
            }
            v = v * 10 + digit;
        }
        *count = v;
    }
    *len = d - 1;
    return 1;
}

int sc_folded_decode(const char *buf, size_t n, const struct sc_limits *lim, struct sc_profile *p,
                     char *err)
{
    const char *s = buf, *end = buf + n;
    uint32_t *frames = NULL, cap = 0;
    uint32_t *loc_of_str = NULL, nloc_of_str = 0; /* string index -> location index + 1 */
    int rc = 0, differential = -1;
    uint64_t lineno = 0;

    while (s < end) {
        const char *e = memchr(s, '\n', (size_t)(end - s));
        if (!e)
            e = end;
        const char *next = e + 1;
        lineno++;
        size_t len = (size_t)(e - s);
        while (len > 0 && (s[len - 1] == '\r' || s[len - 1] == ' ' || s[len - 1] == '\t'))
            len--;
        int64_t c1, c2 = 0;
        if (len == 0 || s[0] == '#' || !trailing_count(s, &len, &c1)) {
            s = next;
            continue;
        }
        int diff = trailing_count(s, &len, &c2);
        if (differential < 0) {
            differential = diff;
            if (diff) {
                rc = sc_profile_add_sample_type(p, "base_samples", "count");
                if (rc >= 0)
                    rc = sc_profile_add_sample_type(p, "samples", "count");
            } else {
                rc = sc_profile_add_sample_type(p, "samples", "count");
            }
            if (rc < 0)
                goto out;
            rc = 0;
        } else if (diff != differential) {
            rc = sc_errf(err, SC_EFORMAT,
                         "line %llu: mixes one-count and two-count (differential) lines",
                         (unsigned long long)lineno);
            goto out;
        }
        /* frames, root first in the text; the model wants leaf first */
        uint32_t nf = 0;
        const char *f = s, *stack_end = s + len;
        for (;;) {
            const char *semi = memchr(f, ';', (size_t)(stack_end - f));
            const char *fe = semi ? semi : stack_end;
            if (sc_grow_array(&frames, &cap, (uint64_t)nf + 1, sizeof *frames)) {
                rc = sc_errf(err, SC_ENOMEM, "out of memory");
                goto out;
            }
            if ((size_t)(fe - f) > lim->max_string) {
                char what[64];
                snprintf(what, sizeof what, "line %llu: a frame", (unsigned long long)lineno);
                rc = sc_limits_string(lim, (size_t)(fe - f), what, err);
                goto out;
            }
            int64_t si = sc_profile_intern(p, f, (size_t)(fe - f));
            if (si < 0) {
                rc = sc_errf(err, (int)si, "out of memory");
                goto out;
            }
            if (sc_grow_array_fill(&loc_of_str, &nloc_of_str, (uint64_t)si + 1, sizeof *loc_of_str,
                                   0)) {
                rc = sc_errf(err, SC_ENOMEM, "out of memory");
                goto out;
            }
            if (!loc_of_str[si]) {
                if (p->nfunctions >= lim->max_functions) {
                    rc = sc_errf(err, SC_ELIMIT, "line %llu: more than %u distinct frames",
                                 (unsigned long long)lineno, (unsigned)lim->max_functions);
                    goto out;
                }
                int64_t fn = sc_profile_add_function(p, (uint32_t)si, 0);
                int64_t li = fn < 0 ? fn : sc_profile_add_simple_location(p, (uint32_t)fn);
                if (li < 0) {
                    rc = sc_errf(err, (int)li, "out of memory");
                    goto out;
                }
                loc_of_str[si] = (uint32_t)li + 1;
            }
            frames[nf++] = loc_of_str[si] - 1;
            if (nf > lim->max_stack_depth) {
                uint64_t all = nf;
                for (const char *q = fe; q < stack_end; q++)
                    all += *q == ';';
                char what[48];
                snprintf(what, sizeof what, "line %llu: the stack", (unsigned long long)lineno);
                rc = sc_limits_depth(lim, all, what, err);
                goto out;
            }
            if (!semi)
                break;
            f = semi + 1;
        }
        for (uint32_t i = 0; i < nf / 2; i++) {
            uint32_t t = frames[i];
            frames[i] = frames[nf - 1 - i];
            frames[nf - 1 - i] = t;
        }
        if (p->nsamples >= lim->max_samples) {
            rc = sc_errf(err, SC_ELIMIT, "line %llu: more than %u stack lines (limits.max_samples)",
                         (unsigned long long)lineno, (unsigned)lim->max_samples);
            goto out;
        }
        /* "stack a b": a is the base, b the value (difffolded.pl's order) */
        int64_t vals[2];
        if (differential) {
            vals[0] = c2;
            vals[1] = c1;
        } else {
            vals[0] = c1;
        }
        int64_t si = sc_profile_add_sample(p, frames, nf, vals, 0);
        if (si < 0) {
            rc = sc_errf(err, (int)si, "out of memory");
            goto out;
        }
        s = next;
    }
    if (differential < 0) {
        /* no stacks at all: still a valid (empty) profile */
        rc = sc_profile_add_sample_type(p, "samples", "count");
        rc = rc < 0 ? sc_errf(err, rc, "out of memory") : 0;
    }
out:
    free(frames);
    free(loc_of_str);
    return rc;
}

/* ---- writer ---- */

/* Values are any int64 (pprof's may be negative or huge): sums saturate (sc_add_sat). */
struct line {
    uint32_t off, len; /* stack text in the text buffer */
    int64_t value;
};

/* Orders lines as a bytewise sort of "stack count" does: when one stack is a prefix of the
 * other, the shorter one continues with the space before its count. */
static int cmp_lines(const void *a, const void *b, void *base)
{
    const struct line *x = a, *y = b;
    const unsigned char *t = base;
    size_t n = x->len < y->len ? x->len : y->len;
    int c = memcmp(t + x->off, t + y->off, n);
    if (c || x->len == y->len)
        return c;
    if (x->len < y->len)
        return t[y->off + n] >= ' ' ? -1 : 1;
    return t[x->off + n] >= ' ' ? 1 : -1;
}

/* A function a symbolizer left without a name (pprof shows "<unknown>") would be an empty
 * frame: such frames of sample si (w->frames, root first as sc_stackwalk_sample() puts them,
 * nf of them) are named as a frame without a function is, by their location's address.
 * Only in locations of a binary (with a mapping or an address): an empty frame of folded
 * or perf script text (stackcollapse-perf.pl prints "a;;b" for "->b") is a name, and
 * stays. Returns 0 or SC_E*. */
static int name_nameless(const struct sc_profile *p, uint32_t si, struct sc_stackwalk *w,
                         struct sc_strtab *names, int64_t nf)
{
    const struct sc_sample *s = &p->samples[si];
    int64_t n = 0;
    for (uint32_t k = s->nlocs; k-- > 0 && n < nf;) {
        const struct sc_location *l = &p->locations[p->sample_locs[s->loc_start + k]];
        for (uint32_t j = 0; j < (l->nlines ? l->nlines : 1) && n < nf; j++, n++) {
            if (names->v[w->frames[n]].len || (!l->mapping && !l->address))
                continue;
            char tmp[SC_ADDR_NAME_LEN];
            int64_t id = sc_strtab_intern(names, tmp, sc_address_name(l->address, tmp));
            if (id < 0)
                return (int)id;
            w->frames[n] = (uint32_t)id;
        }
    }
    return 0;
}

int sc_folded_write(const struct sc_profile *p, int vi, struct sc_buf *out, char *err)
{
    if (vi < 0 || (uint32_t)vi >= p->nsample_types)
        return sc_errf(err, SC_EINVAL, "sample index %d out of range", vi);
    /* Pass 1: sum values per distinct location list (most samples repeat). */
    struct sc_map64 by_stack;
    sc_map64_init(&by_stack);
    uint32_t *first = NULL; /* unique stack -> a sample that has it */
    int64_t *sum = NULL;
    uint32_t nuniq = 0, capuniq = 0;
    struct sc_strtab names = {0};
    struct sc_arena arena;
    sc_arena_init(&arena);
    names.arena = &arena;
    struct sc_stackwalk w;
    struct sc_buf text = SC_BUF_INIT;
    struct line *lines = NULL;
    int rc = sc_stackwalk_init(&w, p, &names);
    if (rc)
        goto oom;
    for (uint32_t i = 0; i < p->nsamples; i++) {
        int64_t v = p->values[(size_t)i * p->nsample_types + (uint32_t)vi];
        if (v == 0)
            continue;
        const struct sc_sample *s = &p->samples[i];
        uint64_t h = sc_hash64(p->sample_locs + s->loc_start, s->nlocs * sizeof(uint32_t));
        /* probe past the rare 64-bit collision of different stacks */
        for (;;) {
            int added;
            uint32_t *slot = sc_map64_upsert(&by_stack, h, nuniq, &added);
            if (!slot)
                goto oom;
            if (added) {
                const struct sc_grow_part cols[] = {SC_GROW_PART(first), SC_GROW_PART(sum)};
                if (sc_grow_arrays(&capuniq, (uint64_t)nuniq + 1, -1, cols, 2))
                    goto oom;
                first[nuniq] = i;
                sum[nuniq++] = v;
                break;
            }
            const struct sc_sample *o = &p->samples[first[*slot]];
            if (o->nlocs == s->nlocs &&
                memcmp(p->sample_locs + o->loc_start, p->sample_locs + s->loc_start,
                       s->nlocs * sizeof(uint32_t)) == 0) {
                sum[*slot] = sc_add_sat(sum[*slot], v);
                break;
            }
            h++;
        }
    }
    /* Pass 2: render each distinct stack once. */
    lines = malloc((nuniq ? nuniq : 1) * sizeof *lines);
    if (!lines)
        goto oom;
    for (uint32_t u = 0; u < nuniq; u++) {
        int64_t nf = sc_stackwalk_sample(&w, first[u]);
        if (nf < 0)
            goto oom;
        for (int64_t j = 0; j < nf; j++)
            if (!names.v[w.frames[j]].len) {
                if (name_nameless(p, first[u], &w, &names, nf))
                    goto oom;
                break;
            }
        size_t off = text.len;
        for (int64_t j = 0; j < nf; j++) {
            struct sc_str s = names.v[w.frames[j]];
            if (j)
                sc_buf_putc(&text, ';');
            sc_buf_append(&text, s.ptr, s.len);
        }
        if (text.oom || text.len > UINT32_MAX)
            goto oom;
        lines[u].off = (uint32_t)off;
        lines[u].len = (uint32_t)(text.len - off);
        lines[u].value = sum[u];
    }
    /* Pass 3: sort, merge equal texts (different locations can print the same), write.
     * text.data is still NULL when every stack is empty (samples without locations), and
     * NULL + 0 is undefined behaviour. */
    char *tx = text.data ? text.data : (char *)"";
    qsort_r(lines, nuniq, sizeof *lines, cmp_lines, tx);
    for (uint32_t u = 0; u < nuniq;) {
        int64_t v = lines[u].value;
        uint32_t k = u + 1;
        while (k < nuniq && lines[k].len == lines[u].len &&
               memcmp(tx + lines[k].off, tx + lines[u].off, lines[u].len) == 0)
            v = sc_add_sat(v, lines[k++].value);
        sc_buf_append(out, tx + lines[u].off, lines[u].len);
        sc_buf_putc(out, ' ');
        sc_buf_put_i64(out, v);
        sc_buf_putc(out, '\n');
        u = k;
    }
    rc = out->oom ? SC_ENOMEM : 0;
    goto done;
oom:
    rc = sc_errf(err, SC_ENOMEM, "out of memory");
done:
    sc_stackwalk_release(&w);
    sc_map64_release(&by_stack);
    free(first);
    free(sum);
    free(lines);
    sc_buf_release(&text);
    sc_strtab_release(&names);
    sc_arena_release(&arena);
    return rc;
}
