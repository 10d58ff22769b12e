/* filter.h - pprof's focus, ignore, hide and show, applied to a profile's samples and frames. */
#ifndef SC_FILTER_H
#define SC_FILTER_H

#include <stdint.h>

#include "model/profile.h"

/* The four regexes; NULL or "" = not set (as pprof treats an empty option). */
struct sc_filter_opts {
    const char *focus;  /* keep samples with a frame that matches */
    const char *ignore; /* drop samples with a frame that matches */
    const char *hide;   /* remove matching frames from stacks */
    const char *show;   /* keep only matching frames in stacks */
};

/* Semantics are pprof's (profile.FilterSamplesByName), decided per location:
 * - a regex matches a location when it matches, anywhere in the string (unanchored, like
 *   Go's MatchString), the name or the file name of any of its functions (inlined ones
 *   included; not the system name), or the file name of its mapping;
 * - ignore: samples with any matching location are dropped; focus: of the rest, samples
 *   with at least one matching location are kept (ignore wins over focus in a location);
 * - hide: in a matching location, the lines whose function name or file matches are
 *   removed (all of them when the mapping's file matches); show: in every location, only
 *   lines whose function matches stay (all when the mapping's file matches), lines without
 *   a function stay too. A location left without lines disappears from the stacks, and a
 *   sample left without locations is dropped. focus and ignore see the lines as they were
 *   before hide and show;
 * - values are untouched: flat moves to the new leaf, as in pprof.
 * Regexes are compiled with PCRE2 (+ JIT) where pprof uses Go's RE2: ordinary expressions
 * (literals, classes, alternation, anchors, repetition, (?i)) behave the same; `.` does not
 * match a newline and `$` only matches at the very end, as in Go. PCRE2-only constructs
 * (backreferences, lookaround) are accepted, RE2-only ones (\pN without braces is one)
 * may differ. RE2 runs in linear time; a pathological backtracking pattern here stops at
 * PCRE2's match limit and counts as not matching that name. */
struct sc_filter; /* opaque: the compiled regexes */

/* Compiles the options. *out is a new filter (free with sc_filter_free), also when no
 * option is set (then applying it changes nothing). 0 or SC_EINVAL with err like
 * "bad focus regex 'a(': missing closing parenthesis at offset 2", or SC_ENOMEM. */
int sc_filter_new(const struct sc_filter_opts *o, struct sc_filter **out, char *err);
void sc_filter_free(struct sc_filter *f);

/* 1 when some option is set. */
int sc_filter_active(const struct sc_filter *f);

/* What applying a filter did: which regexes matched some location (pprof warns "focus
 * expression matched no samples" when one did not) and how many samples were kept. */
struct sc_filter_result {
    uint8_t focus_matched, ignore_matched, hide_matched, show_matched;
    uint32_t samples_kept, samples_dropped;
};

/* Applies f to p in place: drops samples, rewrites locations' lines and samples' location
 * lists (keeping sample labels and timestamps). Needs stored samples: a profile decoded
 * with lazy samples is refused (SC_EINVAL). Regex results are cached per string, so each
 * distinct function or file name is matched once per regex. A filter may be applied to many
 * profiles, also from several threads at once. 0, SC_EINVAL or SC_ENOMEM (then p is
 * unchanged).
 * result may be NULL. */
int sc_filter_apply(const struct sc_filter *f, struct sc_profile *p,
                    struct sc_filter_result *result, char *err);

/* sc_filter_new + sc_filter_apply + sc_filter_free. */
int sc_profile_filter(struct sc_profile *p, const struct sc_filter_opts *o,
                      struct sc_filter_result *result, char *err);

#endif
