/* jfr.h - Java Flight Recorder recordings (the JDK's own and async-profiler's) as profiles. */
#ifndef SC_JFR_H
#define SC_JFR_H

#include <stddef.h>
#include <stdint.h>

#include "formats/limits.h"
#include "model/profile.h"

/* The kinds of samples a recording holds. Pushed, each kind is a profile of its own, as
 * Pyroscope splits a recording (its jfr-parser's sample type names):
 *
 *   kind          events                                   sample types             profile
 *   cpu           jdk.ExecutionSample (not sleeping),      cpu/nanoseconds          cpu
 *                 profiler.WallClockSample when running
 *                 and async-profiler's event is wall
 *   wall          jdk.NativeMethodSample,                  wall/nanoseconds         wall
 *                 profiler.WallClockSample,
 *                 jdk.ExecutionSample when async-profiler's
 *                 event is wall
 *   alloc in TLAB jdk.ObjectAllocationInNewTLAB            alloc_in_new_tlab_objects/count,
 *                                                          alloc_in_new_tlab_bytes/bytes   heap
 *   alloc outside jdk.ObjectAllocationOutsideTLAB          alloc_outside_tlab_objects/count,
 *                                                          alloc_outside_tlab_bytes/bytes  heap
 *   alloc sample  jdk.ObjectAllocationSample (weight)      alloc_sample_objects/count,
 *                                                          alloc_sample_bytes/bytes        heap
 *   lock          jdk.JavaMonitorEnter (duration)          contentions/count,
 *                                                          delay/nanoseconds               mutex
 *   park          jdk.ThreadPark (duration)                contentions/count,
 *                                                          delay/nanoseconds               block
 *
 * A cpu or wall sample is worth its period: the push's sampleRate when given, else the
 * recording's own setting for its event (jdk.ActiveSetting "period", async-profiler's
 * "interval"), else 10 ms. Every sample keeps its event's time (the heatmap). Frames are
 * "class.method" with the class in the JVM's form (java/lang/Thread.run), one location per
 * method and line; JVM-generated class names lose their serial numbers as in Pyroscope
 * (Foo$$Lambda$12/0x0000000800c03000 -> Foo$$Lambda_, GeneratedMethodAccessor17 ->
 * GeneratedMethodAccessor_), so they stay one frame across restarts. Samples with context
 * labels (async-profiler's contextId, looked up in Pyroscope's LabelsSnapshot) carry them
 * as string labels, with span_name and profile_id (the span id in hex) when set. */
enum sc_jfr_kind {
    SC_JFR_CPU,
    SC_JFR_WALL,
    SC_JFR_ALLOC_TLAB,
    SC_JFR_ALLOC_OUTSIDE,
    SC_JFR_ALLOC_SAMPLE,
    SC_JFR_LOCK,
    SC_JFR_PARK,
    SC_JFR_NKINDS
};

struct sc_jfr_opts {
    int64_t period_ns;  /* a cpu/wall sample's value; 0: the recording's own (see above) */
    const void *labels; /* Pyroscope's LabelsSnapshot protobuf (uncompressed), or NULL */
    size_t labels_len;
};

/* 1 when buf starts a JFR chunk: "FLR\0" and a major version of 1 or 2. */
int sc_jfr_detect(const void *buf, size_t n);

/* Decodes a recording (one chunk or several back to back) into one profile per kind present:
 * out[k] is a new profile or NULL (no event of that kind). Nothing points into buf or the
 * labels: the caller may free them. lim bounds the samples, functions, locations, strings,
 * string lengths, stack depth and labels across all kinds; structure is bounded by the
 * input (every count is checked against the bytes left, nesting is at most 16 deep), so a
 * hostile file costs time and memory linear in its size. 0, or SC_EFORMAT / SC_ELIMIT /
 * SC_ENOMEM with detail in err (then every out[k] is NULL). The caller frees the profiles
 * with sc_profile_free(). */
int sc_jfr_decode_kinds(const void *buf, size_t n, const struct sc_jfr_opts *o,
                        const struct sc_limits *lim, struct sc_profile *out[SC_JFR_NKINDS],
                        char *err);

/* Decodes a recording into p (a fresh profile) holding every kind present side by side:
 * each sample has its kind's values and zeros in the other kinds' columns. Sample type names
 * are the table's, except that the park kind's are park_contentions and park_delay when the
 * lock kind is present too (names must be unique for --sample-index). The default sample
 * type is cpu when present, else the first kind's first type. 0 or SC_E* with detail. */
int sc_jfr_decode(const void *buf, size_t n, const struct sc_jfr_opts *o,
                  const struct sc_limits *lim, struct sc_profile *p, char *err);

/* The profile name under which kind k is stored (cpu, wall, heap, mutex, block), as Grafana
 * Alloy's push of the same recording names it (process_cpu, wall, memory, mutex, block). */
const char *sc_jfr_kind_profile(int k);

#endif
