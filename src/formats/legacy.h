/* legacy.h - the profiles go tool pprof reads besides profile.proto: gperftools' binary CPU
 * profile and the text profiles of tcmalloc, old Go and Google's servers. */
#ifndef SC_LEGACY_H
#define SC_LEGACY_H

#include <stddef.h>

#include "formats/limits.h"
#include "model/profile.h"

/* The formats, tried in this order as pprof's parseLegacy tries them:
 *
 *   cpu       gperftools' CPUPROFILE: words of 4 or 8 bytes, either byte order, chosen by
 *             the header that reads as 0, 3, 0, period (µs), 0. Then samples
 *             (count, depth, depth PCs leaf first) up to the trailer (0, 1, 0), then
 *             /proc/self/maps as text. Values samples/count and cpu/nanoseconds.
 *   heap      "heap profile: N: B [AN: AB] @ heapprofile|heap_v2/RATE|heap/2*RATE",
 *             "... @ growthz", "... @ fragmentationz"; lines "N: B [AN: AB] @ 0x.. 0x..";
 *             v2 samples scaled by 1/(1-exp(-avg/rate)) as pprof does.
 *   count     Go's "goroutine profile: total N" / "threadcreate profile: total N" (debug=1)
 *   thread    "--- threadz N ---" or "--- Thread X (name: n/1) stack: ---" sections
 *   contention "--- contention:", "--- mutex:", "--- contentionz " with "cycles/second",
 *             "sampling period" and "ms since reset" attributes; "delay count @ 0x.." lines
 *   java      "--- heapz 1 ---", "--- contentionz 1 ---" (format = java), and the CPU
 *             profile whose third header word is 1: "0x.. function (file:line)" lines after
 *             the samples name the addresses, which are then dropped (pprof's Aggregate)
 *
 * Every format may end in a memory map after "--- Memory map: ---" or "MAPPED_LIBRARIES:"
 * (/proc/self/maps lines or "start-end file (@offset) buildid"). Addresses become
 * locations without lines in the mapping that holds them, adjusted as pprof adjusts them
 * (callers' return addresses minus one); naming them is the symbolizer's part. */

/* 1 when buf looks like one of the formats above (a header check: decoding may still fail). */
int sc_legacy_detect(const void *buf, size_t n);

/* Decodes buf into p (a fresh profile). 0, SC_EFORMAT (unrecognized or malformed, detail
 * in err), SC_ELIMIT or SC_ENOMEM. */
int sc_legacy_decode(const char *buf, size_t n, const struct sc_limits *lim, struct sc_profile *p,
                     char *err);

/* pprof's RemoveUninteresting for what a legacy profile's drop_frames / keep_frames say
 * (the allocator's frames of heap profiles, the profiler's of CPU profiles): run after
 * symbolization, on a profile with stored samples. 0 or SC_ENOMEM. */
int sc_legacy_prune(struct sc_profile *p, char *err);

#endif
