/* regex.c - PCRE2 matching with Go's regexp semantics for UTF-8. */
#include "query/regex.h"

#include <stdlib.h>
#include <string.h>

size_t sc_utf8_seq(const unsigned char *s, size_t n)
{
    unsigned c = s[0], lo = 0x80, hi = 0xbf;
    size_t len;
    if (c < 0x80) return 1;
    if (c >= 0xc2 && c <= 0xdf)
        len = 2;
    else if (c >= 0xe0 && c <= 0xef)
        len = 3, lo = c == 0xe0 ? 0xa0 : 0x80, hi = c == 0xed ? 0x9f : 0xbf;
    else if (c >= 0xf0 && c <= 0xf4)
        len = 4, lo = c == 0xf0 ? 0x90 : 0x80, hi = c == 0xf4 ? 0x8f : 0xbf;
    else
        return 0;
    if (n < len) return 0;
    for (size_t k = 1; k < len; k++)
        if (s[k] < (k == 1 ? lo : 0x80) || s[k] > (k == 1 ? hi : 0xbf)) return 0;
    return len;
}

/* One match of valid UTF-8; when JIT code runs out of its stack, the interpreter (which
 * uses the heap, up to the context's limit) tries again. */
static int match_sub(const pcre2_code *re, PCRE2_SPTR s, size_t n, pcre2_match_data *md,
                     pcre2_match_context *mctx)
{
    int r = pcre2_match(re, s, n, 0, PCRE2_NO_UTF_CHECK, md, mctx);
    if (r == PCRE2_ERROR_JIT_STACKLIMIT)
        r = pcre2_match(re, s, n, 0, PCRE2_NO_UTF_CHECK | PCRE2_NO_JIT, md, mctx);
    return r >= 0;
}

int sc_re_match(const pcre2_code *re, const char *s, size_t n, pcre2_match_data *md,
                pcre2_match_context *mctx)
{
    const unsigned char *u = (const unsigned char *)s;
    size_t i = 0, l;
    while (i < n && (l = sc_utf8_seq(u + i, n - i)) != 0)
        i += l;
    if (i == n) return match_sub(re, (PCRE2_SPTR)(n ? s : ""), n, md, mctx);
    unsigned char *fixed = malloc(n * 3);
    if (!fixed) return 0;
    size_t k = 0;
    for (i = 0; i < n;) {
        l = sc_utf8_seq(u + i, n - i);
        if (l) {
            memcpy(fixed + k, u + i, l);
            k += l;
            i += l;
        } else {
            memcpy(fixed + k, "\xef\xbf\xbd", 3);
            k += 3;
            i++;
        }
    }
    int r = match_sub(re, fixed, k, md, mctx);
    free(fixed);
    return r;
}
