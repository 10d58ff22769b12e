/* names.c - frame names as go tool pprof's reports print them (its symbolizer's Demangle). */
#include "formats/names.h"
#include "model/error.h"

#include <demangle.h>
#include <stdlib.h>
#include <string.h>

size_t sc_remove_matching(const char *s, size_t n, char open, char close, char *dst)
{
    size_t k = 0, first = 0;
    int nesting = 0;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (c == open) {
            if (++nesting == 1)
                first = k;
        } else if (c == close) {
            if (--nesting < 0) {
                memcpy(dst, s, n); /* mismatch: the name as it was */
                return n;
            }
            if (nesting == 0) {
                k = first; /* drop the group, brackets included */
                continue;
            }
        }
        dst[k++] = c;
    }
    return k;
}

static int is_hex(char c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
}

/* An old-style Rust name (_ZN...17h<16 hex>E[.suffix]) as pprof's demangler reads it:
 * the path joined by ::, escapes undone, no hash. 0 when it is not one. */
static size_t old_rust(const char *s, size_t n, char *dst)
{
    if (n < 3 || memcmp(s, "_ZN", 3) != 0)
        return 0;
    /* a ".suffix" after the final E is ignored */
    for (size_t i = n; i-- > 1;)
        if (s[i] == '.' && s[i - 1] == 'E') {
            n = i;
            break;
        }
    if (n <= 23 || s[n - 1] != 'E' || memcmp(s + n - 20, "17h", 3) != 0)
        return 0;
    unsigned seen = 0;
    for (size_t i = n - 17; i < n - 1; i++) {
        if (!is_hex(s[i]))
            return 0;
        seen |= 1u << (s[i] <= '9' ? s[i] - '0' : s[i] - 'a' + 10);
    }
    if (__builtin_popcount(seen) < 5)
        return 0;
    const char *p = s + 3, *end = s + n - 20;
    size_t k = 0;
    while (p < end) {
        if (*p < '0' || *p > '9')
            return 0;
        long val = 0;
        while (p < end && *p >= '0' && *p <= '9') {
            if (val >= 2147483647 / 10 - (*p - '0'))
                return 0;
            val = val * 10 + (*p++ - '0');
        }
        if (p < end && *p == '_') {
            p++;
            val--;
        }
        if (val < 0 || end - p < val)
            return 0;
        const char *id = p, *ide = p + val;
        p = ide;
        if (k) {
            dst[k++] = ':';
            dst[k++] = ':';
        }
        if (ide - id >= 2 && id[0] == '_' && id[1] == '$')
            id++;
        while (id < ide) {
            size_t left = (size_t)(ide - id);
            if (*id == '$') {
                static const char codes[][3] = {"SP@", "BP*", "RF&", "LT<", "GT>", "LP(", "RP)"};
                int valid = 0;
                if (left > 2 && id[1] == 'C' && id[2] == '$') {
                    dst[k++] = ',';
                    id += 3;
                    valid = 1;
                } else if (left > 4 && id[1] == 'u' && id[4] == '$') {
                    if (is_hex(id[2]) && is_hex(id[3]) && id[2] <= '7') {
                        int v = (id[2] <= '9' ? id[2] - '0' : id[2] - 'a' + 10) << 4 |
                                (id[3] <= '9' ? id[3] - '0' : id[3] - 'a' + 10);
                        if (v >= ' ') {
                            dst[k++] = (char)v;
                            id += 5;
                            valid = 1;
                        }
                    }
                } else if (left > 3 && id[3] == '$') {
                    for (size_t c = 0; c < sizeof codes / sizeof codes[0]; c++)
                        if (id[1] == codes[c][0] && id[2] == codes[c][1]) {
                            dst[k++] = codes[c][2];
                            id += 4;
                            valid = 1;
                            break;
                        }
                }
                if (!valid) {
                    memcpy(dst + k, id, left);
                    k += left;
                    break;
                }
            } else if (*id == '.' && left >= 2 && id[1] == '.') {
                dst[k++] = ':';
                dst[k++] = ':';
                id += 2;
            } else {
                dst[k++] = *id++;
            }
        }
    }
    return k;
}

/* demangle.Filter(name, NoParams, NoTemplateParams): the C++ name without parameters,
 * template arguments and clone suffixes; 0 when it does not demangle. dst has room for
 * 2n + 16 bytes (an old Rust name grows by at most "::" per identifier). */
static size_t filter(const char *s, size_t n, char *dst)
{
    if (n < 2 || s[0] != '_' || (s[1] != 'Z' && s[1] != 'R'))
        return 0;
    size_t k = old_rust(s, n, dst);
    if (k)
        return k;
    char *z = strndup(s, n);
    if (!z)
        return 0;
    /* without DMGL_PARAMS libiberty prints neither parameters nor return types */
    char *d = cplus_demangle(z, DMGL_ANSI);
    free(z);
    if (!d)
        return 0;
    size_t dn = strlen(d);
    /* " [clone .cold]": pprof's demangler drops clone suffixes with the parameters */
    char *c = strstr(d, " [clone ");
    if (c)
        dn = (size_t)(c - d);
    char *tmp = malloc(dn + 1);
    if (!tmp) {
        free(d);
        return 0;
    }
    k = sc_remove_matching(d, dn, '<', '>', tmp);
    free(d);
    if (k > 2 * n + 16)
        k = 2 * n + 16;
    memcpy(dst, tmp, k);
    free(tmp);
    return k;
}

static int looks_demangled_cpp(const char *s, size_t n)
{
    if (memmem(s, n, ".<", 2) || memmem(s, n, "]).", 3))
        return 0;
    if (memmem(s, n, "::", 2))
        return 1;
    for (size_t i = 0; i < n; i++)
        if (s[i] == '<' || s[i] == '>' || s[i] == '[' || s[i] == ']')
            return 1;
    return 0;
}

int sc_pprof_name(const struct sc_profile *p, uint32_t fn, struct sc_arena *a, struct sc_str *out)
{
    const struct sc_function *f = &p->functions[fn];
    struct sc_str name = sc_profile_str(p, f->name), sys = sc_profile_str(p, f->system_name);
    *out = name;
    if (name.len && (name.len != sys.len || memcmp(name.ptr, sys.ptr, name.len) != 0))
        return 0; /* demangled already */
    if (!sys.len)
        return 0;
    char *buf = sc_arena_alloc(a, 2 * (size_t)sys.len + 16);
    if (!buf)
        return SC_ENOMEM;
    size_t k = filter(sys.ptr, sys.len, buf);
    if (k && (k != sys.len || memcmp(buf, sys.ptr, k) != 0)) {
        out->ptr = buf;
        out->len = (uint32_t)k;
        return 0;
    }
    *out = sys;
    if (looks_demangled_cpp(sys.ptr, sys.len)) {
        char *tmp = sc_arena_alloc(a, sys.len + 1);
        if (!tmp)
            return SC_ENOMEM;
        k = sc_remove_matching(sys.ptr, sys.len, '(', ')', tmp);
        k = sc_remove_matching(tmp, k, '<', '>', buf);
        out->ptr = buf;
        out->len = (uint32_t)k;
    }
    return 0;
}

int sc_pprof_frame_name(const struct sc_profile *p, const struct sc_location *l, uint32_t fn1,
                        struct sc_arena *a, struct sc_str *out)
{
    if (fn1) {
        int rc = sc_pprof_name(p, fn1 - 1, a, out);
        if (rc || out->len)
            return rc;
    }
    /* pprof names a frame without a function after its binary */
    if (l->mapping) {
        struct sc_str f = sc_profile_str(p, p->mappings[l->mapping - 1].filename);
        if (f.len) {
            const char *base = f.ptr + f.len;
            while (base > f.ptr && base[-1] != '/')
                base--;
            size_t blen = (size_t)(f.ptr + f.len - base);
            char *tmp = sc_arena_alloc(a, blen + 2);
            if (!tmp)
                return SC_ENOMEM;
            tmp[0] = '[';
            memcpy(tmp + 1, base, blen);
            tmp[blen + 1] = ']';
            out->ptr = tmp;
            out->len = (uint32_t)(blen + 2);
            return 0;
        }
    }
    out->ptr = "<unknown>";
    out->len = 9;
    return 0;
}
