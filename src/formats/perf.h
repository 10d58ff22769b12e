/* perf.h - `perf script` text, parsed with the meaning of FlameGraph's stackcollapse-perf.pl. */
#ifndef SC_PERF_H
#define SC_PERF_H

#include <stddef.h>

#include "formats/input.h"
#include "model/profile.h"

/* Decodes perf script output into p (a fresh profile). The result, written out with
 * sc_folded_write(), is the same multiset of lines stackcollapse-perf.pl prints with the
 * same options: the root frame is the process (comm, comm-pid or comm-pid/tid, spaces
 * made '_'), symbols are tidied the same way, kernel/JIT frames annotated on request, and
 * only samples of the first event seen (or opts->event) are kept.
 * Sample type: "samples/count" when no sample has a period, else "<event>/count" holding
 * the period as the Perl script sums it. Each sample keeps its timestamp (time_ns, seconds
 * since boot as perf prints them) and labels comm (string), pid and tid (numbers), and
 * event (string). 0 or SC_E* with detail in err. */
int sc_perf_decode(const char *buf, size_t n, const struct sc_perf_opts *opts,
                   const struct sc_limits *lim, struct sc_profile *p, char *err);

#endif
