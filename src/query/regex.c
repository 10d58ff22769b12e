/* regex.c - PCRE2 matching with Go's regexp semantics for UTF-8. */
#include "query/regex.h"
#include "model/buf.h"
#include "model/clock.h"

#include <stdlib.h>
#include <string.h>

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

pcre2_code *sc_re_compile(const char *src, size_t n, enum sc_re_mode mode, int *ecode, size_t *eoff)
{
    uint32_t flags = PCRE2_UTF | PCRE2_DOLLAR_ENDONLY | PCRE2_NEVER_BACKSLASH_C;
    if (mode == SC_RE_LABEL)
        flags |= PCRE2_DOTALL | PCRE2_ANCHORED | PCRE2_ENDANCHORED;
    PCRE2_SIZE off = 0;
    pcre2_code *re = pcre2_compile((PCRE2_SPTR)(src ? src : ""), n, flags, ecode, &off, NULL);
    *eoff = (size_t)off;
    if (re)
        pcre2_jit_compile(re, PCRE2_JIT_COMPLETE);
    return re;
}

pcre2_match_context *sc_re_context(void)
{
    pcre2_match_context *c = pcre2_match_context_create(NULL);
    if (c) {
        pcre2_set_match_limit(c, SC_RE_MATCH_LIMIT);
        pcre2_set_depth_limit(c, SC_RE_DEPTH_LIMIT);
        pcre2_set_heap_limit(c, SC_RE_HEAP_LIMIT_KB);
    }
    return c;
}

void sc_re_budget_init(struct sc_re_budget *b, int64_t ns)
{
    b->deadline_ns = sc_mono_ns() + ns;
    b->calls = 0;
    b->over = 0;
}

int sc_re_match(const pcre2_code *re, const char *s, size_t n, pcre2_match_data *md,
                pcre2_match_context *mctx, struct sc_re_budget *budget)
{
    if (budget) {
        /* the clock every few matches: a match is bounded, so this is soon enough */
        if (budget->over || (++budget->calls % 16 == 0 && sc_mono_ns() > budget->deadline_ns)) {
            budget->over = 1;
            return 0;
        }
    }
    const unsigned char *u = (const unsigned char *)s;
    size_t i = 0, l;
    while (i < n && (l = sc_utf8_seq(u + i, n - i)) != 0)
        i += l;
    if (i == n)
        return match_sub(re, (PCRE2_SPTR)(n ? s : ""), n, md, mctx);
    struct sc_buf fixed = SC_BUF_INIT;
    sc_buf_put_utf8(&fixed, s, n);
    if (fixed.oom) {
        sc_buf_release(&fixed);
        return 0;
    }
    int r = match_sub(re, (PCRE2_SPTR)fixed.data, fixed.len, md, mctx);
    sc_buf_release(&fixed);
    return r;
}
