/* regex.h - PCRE2 matching with Go's regexp semantics for UTF-8 (selectors, filters). */
#ifndef SC_REGEX_H
#define SC_REGEX_H

#include <stddef.h>

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include "model/buf.h"


/* Matches re (compiled with PCRE2_UTF) against s[0..n) as Go's regexp would: a subject that
 * is not UTF-8 is matched with every byte that starts no valid sequence read as U+FFFD
 * (one character each), as Go decodes it; when JIT code runs out of its stack the
 * interpreter tries again. Returns 1 on a match, 0 on none, on a limit hit (mctx's) or when
 * out of memory. md is the caller's (one per thread). */
int sc_re_match(const pcre2_code *re, const char *s, size_t n, pcre2_match_data *md,
                pcre2_match_context *mctx);

#endif
