/* perf.c - `perf script` parser (stackcollapse-perf.pl semantics). */
#include "formats/perf.h"
#include "model/error.h"

int sc_perf_decode(const char *buf, size_t n, const struct sc_perf_opts *opts,
                   const struct sc_limits *lim, struct sc_profile *p, char *err)
{
    (void)buf, (void)n, (void)opts, (void)lim, (void)p;
    return sc_errf(err, SC_EUNSUPPORTED, "perf script input is not supported yet");
}
