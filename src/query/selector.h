/* selector.h - PromQL label matchers ({a="x", b=~"y|z"}) and the label sets they match. */
#ifndef SC_SELECTOR_H
#define SC_SELECTOR_H

#include <stddef.h>
#include <stdint.h>

#include "model/arena.h"
#include "model/buf.h"
#include "model/labels.h"
#include "model/profile.h"

/* Parses a label set written as a selector of `=` matchers only (the canonical text, or
 * any spacing, quoting and order, e.g. `{env="prod", service_name='api'}`) into l, which
 * must be initialised (labels are added to what it holds). A name given twice keeps the
 * last value. 0 or SC_EFORMAT / SC_ELIMIT / SC_ENOMEM with detail in err. */
int sc_labels_parse(const char *text, struct sc_labels *l, char *err);

/* ---- selectors ---- */

enum sc_match_op {
    SC_MATCH_EQ,  /* =  */
    SC_MATCH_NE,  /* != */
    SC_MATCH_RE,  /* =~ */
    SC_MATCH_NRE, /* !~ */
};

/* One matcher as written (value unescaped). Strings are NUL-terminated. */
struct sc_matcher {
    struct sc_str name, value;
    enum sc_match_op op;
};

struct sc_selector; /* opaque: matchers plus their compiled regexes */

/* Limits on what sc_selector_parse accepts. */
#define SC_SELECTOR_MAX_LEN 16384
#define SC_SELECTOR_MAX_MATCHERS 64

/* Parses PromQL label matchers: `{name op value, ...}` where
 * - braces are required; `{}`, an empty string or NULL select everything;
 * - names are [a-zA-Z_][a-zA-Z0-9_.]* (dots: Pyroscope clients send `otel.scope.name`), or
 *   a quoted string (Prometheus 3);
 * - op is =, !=, =~ or !~;
 * - values are "double" or 'single' quoted with Go's escapes (\a \b \f \n \r \t \v \\ \"
 *   \' \xHH \ooo \uXXXX \UXXXXXXXX; either quote may be escaped in either kind), or
 *   `backquoted` raw strings;
 * - whitespace may surround every token and a trailing comma is allowed.
 * Regexes are anchored like Prometheus's (the whole value must match, `.` matches newlines)
 * and compiled with PCRE2 + JIT; RE2 (Go) and PCRE2 agree on ordinary expressions.
 * On success *out is a new selector (free with sc_selector_free). On error *out is NULL and
 * err reads e.g. "bad selector at offset 14: expected a quoted value after '=', got 'prod}'".
 * Returns 0, SC_EFORMAT, SC_ELIMIT or SC_ENOMEM. */
int sc_selector_parse(const char *text, struct sc_selector **out, char *err);
void sc_selector_free(struct sc_selector *s);

/* 1 when every matcher holds for labels, else 0. A label that is absent has the value ""
 * (Prometheus): {a=""} selects series without a, {a!=""} series with it. Thread-safe: many
 * threads may match with one selector at once. */
int sc_selector_match(const struct sc_selector *s, const struct sc_labels *labels);
/* The same for labels as the store keeps them (canonical text, sc_labels_parse); text that
 * does not parse matches nothing. */
int sc_selector_match_text(const struct sc_selector *s, const char *labels);

struct sc_re_budget;
/* Matches of s's regexes count against b from now on (NULL: no budget); once b runs out
 * every regex fails to match and b->over says so (query/regex.h). */
void sc_selector_set_budget(struct sc_selector *s, struct sc_re_budget *b);

/* Appends the selector in canonical form: matchers in the order written, `{a="x",b=~"y"}`,
 * quoted as sc_labels_format quotes. sc_selector_parse reads it back to the same matchers. */
void sc_selector_format(const struct sc_selector *s, struct sc_buf *out);

#endif
