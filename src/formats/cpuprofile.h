/* cpuprofile.h - V8's CPU profiles (.cpuprofile: node --cpu-prof, Chrome DevTools), read. */
#ifndef SC_CPUPROFILE_H
#define SC_CPUPROFILE_H

#include <stddef.h>

#include "formats/limits.h"
#include "model/profile.h"

/* The format, as V8's inspector protocol (Profiler.Profile) writes it as JSON:
 *
 *   nodes       [{id, callFrame: {functionName, url, lineNumber, columnNumber, scriptId},
 *                 hitCount, children: [id...]}]; lineNumber and columnNumber 0-based, -1
 *               or absent when unknown; a tree whose root is the node "(root)"
 *   startTime   microseconds of a monotonic clock (not the wall clock)
 *   endTime     the same
 *   samples     [id...]: the node (the leaf of the stack) of each sample, in time order
 *   timeDeltas  [us...]: each sample's time minus the one before (the first: minus
 *               startTime)
 *
 * Chrome's performance traces (DevTools' "Save profile", {"traceEvents": [...]} or a bare
 * array of events) carry the same in "ProfileChunk" events: args.data.cpuProfile {nodes
 * with parent instead of children, samples} and args.data.timeDeltas, the chunks of one
 * thread (pid, tid) forming one profile whose "Profile" event gives startTime. Every
 * thread's profile is read.
 *
 * Model: one function per (functionName, url) ("(anonymous)" when the name is empty), one
 * location per (function, line, column), 1-based. A sample's stack is its node and the
 * node's ancestors, leaf first, without the "(root)" node (unless the sample is on it).
 * Two sample types: "samples/count" (1 a sample) and "cpu/nanoseconds" (the default and
 * the period type), the sample's time delta (negative deltas count 0), so the total is the
 * sum of the deltas; each sample keeps its time, startTime plus the deltas so far, in ns
 * of V8's clock (the heatmap's input). A profile without samples (old DevTools files) has
 * one untimed sample per node with hits: hitCount, and hitCount times (endTime -
 * startTime) / all hits. The period is the mean delta; duration is endTime - startTime.
 *
 * buf may be freed after the call (strings are copied). 0 or SC_EFORMAT / SC_ELIMIT /
 * SC_ENOMEM with detail in err. */
int sc_cpuprofile_decode(const void *buf, size_t n, const struct sc_limits *lim,
                         struct sc_profile *p, char *err);

/* True when buf looks like a .cpuprofile or a Chrome trace with CPU profile chunks: JSON
 * whose first bytes name V8's nodes with call frames. */
int sc_cpuprofile_detect(const void *buf, size_t n);

#endif
