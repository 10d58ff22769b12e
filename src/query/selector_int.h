/* selector_int.h - the parsed selector's layout, for selector.c and the tests that inspect a
 * parse (the matchers in the order written); the rest of the program uses selector.h. */
#ifndef SC_QUERY_SELECTOR_INT_H
#define SC_QUERY_SELECTOR_INT_H

#include "query/regex.h"
#include "query/selector.h"

struct sc_selector {
    struct sc_arena arena;
    struct sc_matcher *m;
    pcre2_code **re; /* per matcher; NULL for = and != */
    uint32_t n, cap;
    pcre2_match_context *mctx;
    struct sc_re_budget *budget; /* NULL: none (sc_selector_set_budget) */
};

#endif
