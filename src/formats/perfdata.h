/* perfdata.h - perf.data (what `perf record` writes) decoded into the profile `perf script`
 * and its decoder (perf.h) would make of it. */
#ifndef SC_PERFDATA_H
#define SC_PERFDATA_H

#include <stddef.h>
#include <stdint.h>

#include "formats/input.h"
#include "formats/limits.h"
#include "model/profile.h"

/* True when buf starts with perf.data's magic "PERFILE2" (either byte order). */
int sc_perfdata_detect(const void *buf, size_t n);

struct sc_perfdata_opts {
    /* 1: no file of this machine is read (a file pushed to a server names binaries that are
     * not the server's): frames are "[dso]" as for binaries that are gone, but the kernel's */
    int no_local_files;
    const char *kallsyms; /* NULL: /proc/kallsyms (tests) */
};

/* What the decoder met besides the samples it kept. */
struct sc_perfdata_stats {
    uint64_t records, samples, other_events, unwound, lost;
    char event[64]; /* the event kept */
};

/* Decodes a perf.data file (buf[0..n), not gzip) into p, a fresh profile: the samples of
 * one event (the first sampled, or perf->event named as perf script names it, such as
 * "cpu-clock:ppp") with their call chains (the kernel's, or the user stacks recorded with
 * --call-graph dwarf walked with the unwind tables), named with the binaries of this
 * machine as `perf script` names them (symbol tables, kallsyms, DWARF's inlined frames for
 * walked stacks), each frame tidied as stackcollapse-perf.pl tidies perf script's lines
 * (perf->pid, tid, kernel, jit, addrs as there). The result is the profile sc_perf_decode()
 * makes of `perf script`'s output of the same file: the same frames, sample types, times
 * (microseconds, as perf script prints them) and comm / pid / tid labels.
 *
 * Bounds: records are checked against the data section, a hostile or truncated file is
 * SC_EFORMAT naming the offset, lim bounds samples, frames and strings; memory is linear in
 * the number of records. o and perf may be NULL; stats may be NULL. 0 or SC_E*. */
int sc_perfdata_decode(const uint8_t *buf, size_t n, const struct sc_perf_opts *perf,
                       const struct sc_perfdata_opts *o, const struct sc_limits *lim,
                       struct sc_profile *p, struct sc_perfdata_stats *stats, char *err);

#endif
