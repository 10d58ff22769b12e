/* perf.h - `perf script` text, parsed with the meaning of FlameGraph's stackcollapse-perf.pl. */
#ifndef SC_PERF_H
#define SC_PERF_H

#include <stddef.h>

#include "formats/input.h"
#include "model/profile.h"

/* Decodes perf script output into p, which must be fresh (no sample types or samples yet;
 * SC_EINVAL otherwise). The result, written out with sc_folded_write(), is the same
 * multiset of lines stackcollapse-perf.pl prints with the same options, quirks included
 * (see perf.c): the root frame is the process (comm, comm-pid or comm-pid/tid, spaces
 * made '_', "?" for a pid perf did not print), symbols are tidied the same way,
 * kernel/JIT frames annotated on request, and only samples of the first event seen (or
 * opts->event) are kept. Differences: --inline, --context and --srcline are not
 * supported; a period written with leading zeros only ("00") is 0, a sample the folded
 * writer drops (the script prints "stack 0"); periods past 2^63 saturate (the script
 * goes to floating point).
 *
 * Model: one function per distinct frame name; one location per distinct frame or
 * "caller->callee" inline chain, the chain's frames as its lines (innermost first); samples list
 * locations leaf first, the process frame last. Sample type: "samples/count" when no
 * header has a period, else "<event>/count" holding the period as the script sums it (1
 * where a header has none). Each sample keeps its timestamp (time_ns, seconds since boot
 * as perf prints them; 0 when the header has none) and labels comm (string, as printed),
 * pid (number, only when perf printed pid/tid), tid (number) and event (string, when the
 * header names one). Frame and string names are copied into the profile's arena, so buf
 * need not outlive p.
 *
 * opts may be NULL (all off); opts->threads 0 picks a thread count from the input size
 * and the CPUs; the result does not depend on it. lim may be NULL (sc_limits_cli).
 * 0 or SC_E* with detail in err ("line N: why" where a line is to blame). */
int sc_perf_decode(const char *buf, size_t n, const struct sc_perf_opts *opts,
                   const struct sc_limits *lim, struct sc_profile *p, char *err);

#endif
