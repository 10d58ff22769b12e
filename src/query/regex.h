/* regex.h - PCRE2 matching with Go's regexp semantics for UTF-8 (selectors, filters). */
#ifndef SC_REGEX_H
#define SC_REGEX_H

#include <stddef.h>

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include "model/buf.h"

/* The bounds on user regexes (selectors and focus/ignore/hide/show), decided once: per
 * match, PCRE2's step, depth and heap limits (a match that runs into one counts as no
 * match); per request, a budget of matching time, past which every further match fails
 * and the request is refused (1,000 names of 3,000 bytes against (a+)+$ took 15 s with
 * only the per-match limits). */
#define SC_RE_MATCH_LIMIT 1000000
#define SC_RE_DEPTH_LIMIT 10000
#define SC_RE_HEAP_LIMIT_KB 16384
#define SC_RE_BUDGET_NS 1000000000LL

/* The two ways a user regex is read, decided here once:
 *   SC_RE_LABEL   as PromQL reads a label matcher's: anchored at both ends, `.` matches
 *                 newlines (Prometheus's "^(?s:re)$"); selectors, the rules' function names
 *   SC_RE_SEARCH  as pprof reads focus/ignore/hide/show: found anywhere (Go's MatchString),
 *                 `.` stops at a newline
 * both UTF-8 with `$` only at the very end and without \C, as Go's regexp. */
enum sc_re_mode { SC_RE_LABEL, SC_RE_SEARCH };

/* Compiles src[0..n) (JIT when it can: the interpreter matches the same otherwise). NULL on
 * failure with PCRE2's error code in *ecode and its offset in *eoff (pcre2_get_error_message
 * words it; PCRE2_ERROR_NOMEMORY when out of memory). Free with pcre2_code_free. */
pcre2_code *sc_re_compile(const char *src, size_t n, enum sc_re_mode mode, int *ecode,
                          size_t *eoff);

/* A match context with the per-match limits; NULL when out of memory. */
pcre2_match_context *sc_re_context(void);

/* One request's matching budget. */
struct sc_re_budget {
    int64_t deadline_ns; /* monotonic */
    uint32_t calls;
    int over; /* the budget ran out */
};
void sc_re_budget_init(struct sc_re_budget *b, int64_t ns);

/* Matches re (compiled with PCRE2_UTF) against s[0..n) as Go's regexp would: a subject that
 * is not UTF-8 is matched with every byte that starts no valid sequence read as U+FFFD
 * (one character each), as Go decodes it; when JIT code runs out of its stack the
 * interpreter tries again. Returns 1 on a match, 0 on none, on a limit hit (mctx's), when
 * out of memory, or when budget (may be NULL) has run out (then budget->over is set). md is
 * the caller's (one per thread). */
int sc_re_match(const pcre2_code *re, const char *s, size_t n, pcre2_match_data *md,
                pcre2_match_context *mctx, struct sc_re_budget *budget);

#endif
