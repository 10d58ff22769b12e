/* names.h - what go tool pprof's reports call a frame: function names as its default
 * demangling leaves them, binaries for frames without one. */
#ifndef SC_NAMES_H
#define SC_NAMES_H

#include <stddef.h>

#include "model/arena.h"
#include "model/profile.h"

/* The name go tool pprof prints for function fn (0-based) in `top`, `-dot` and the like,
 * after its symbolizer's default demangling (Demangle with NoParams and NoTemplateParams):
 *   - a name that differs from the system name was demangled already: as it is;
 *   - else the system name demangled without parameters and template arguments (C++),
 *     or an old Rust name demangled without its hash;
 *   - else, when it looks like a demangled C++ name (has <>[] or ::, but is no Java
 *     "a.<init>" and no Go "(*T[...]).m"), without its (...) and <...> groups:
 *     "<a::B as c::D>::f" becomes "::f", "ns::F<int>::g(int)" "ns::F::g".
 * Full names stay everywhere else (flame graphs, exports). The result points into the
 * profile or into a (the caller's arena). 0 or SC_ENOMEM. */
int sc_pprof_name(const struct sc_profile *p, uint32_t fn, struct sc_arena *a, struct sc_str *out);

/* The name of frame `line` (a function index + 1, 0 = none) of location l as pprof's
 * reports show it: sc_pprof_name, or for a frame without a function name "[binary]" after
 * its mapping's file, or "<unknown>". 0 or SC_ENOMEM. */
int sc_pprof_frame_name(const struct sc_profile *p, const struct sc_location *l, uint32_t fn1,
                        struct sc_arena *a, struct sc_str *out);

/* pprof's removeMatching: s without its balanced open...close groups (unchanged when they
 * do not balance). Writes into dst (room for n bytes); returns the length. */
size_t sc_remove_matching(const char *s, size_t n, char open, char close, char *dst);

#endif
