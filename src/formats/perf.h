/* perf.h - `perf script` text, parsed with the meaning of FlameGraph's stackcollapse-perf.pl. */
#ifndef SC_PERF_H
#define SC_PERF_H

/* Decoder threads at most (settings.def's COLLAPSE_THREADS bound says the same; a test
 * keeps them equal). */
#define SC_PERF_MAX_THREADS 16

#include <stddef.h>
#include <stdint.h>

#include "formats/input.h"
#include "model/profile.h"

/* Decodes perf script output into p (a fresh profile). The result, written out with
 * sc_folded_write() at the default sample index, is the same multiset of lines
 * stackcollapse-perf.pl prints with the same options (--pid, --tid, --kernel, --jit, --addrs,
 * --event-filter): the root frame is the process (comm, comm-pid or comm-pid/tid, spaces
 * made '_'), symbols are tidied the same way, kernel/JIT/inlined frames annotated the same
 * way, and only samples of the first event seen (or opts->event, compared with the whole
 * event token such as "cpu-clock:pppH") are kept. As in the Perl script, a sample counts
 * only once a blank line ends it, so a last sample cut off by the end of the input is
 * dropped; lines the script would not recognize are skipped. Where the script misreads
 * perf's output, the decoder does not (see perf.c) unless opts->as_script says to read as
 * the script does: a pid or tid "-1" (a thread perf did not know, comm ":-1") is an id, and
 * the one-line samples of a recording without call chains are samples of one frame.
 *
 * Model: one function and one location per distinct frame string; a sample's locations
 * are leaf first with the process frame outermost. Two sample types: 0 "samples/count"
 * (1 per sample) and 1 "<event>/<unit>" holding the period as the Perl script sums it
 * (1 when absent or "0"), where <event> is the event name before any ':' modifier
 * ("cpu-clock"), or "events" when no header names one, and <unit> is "nanoseconds" for
 * cpu-clock and task-clock, else "count". Type 1 is the default and the period type. Each
 * sample keeps its timestamp (time_ns, seconds since boot as perf prints them; 0 if none)
 * and labels comm (string), pid (number, absent when the header has no separate pid) and
 * tid (number); pid and tid are absent where perf printed -1.
 *
 * opts may be NULL (the script's defaults); opts->threads picks how many threads parse
 * (0 = choose from the input size and the CPUs). Strings are copied into p, so buf may be
 * freed after the call. Lines longer than 1 MiB and inputs beyond lim fail with SC_ELIMIT.
 * Returns 0 or SC_E* with detail in err. */
int sc_perf_decode(const char *buf, size_t n, const struct sc_perf_opts *opts,
                   const struct sc_limits *lim, struct sc_profile *p, char *err);

/* True when s[0..n) (no newline) is a whole sample on one line, as perf script prints
 * samples recorded without call chains: the header, then the ip, symbol and dso. */
int sc_perf_frame_header(const char *s, size_t n);

/* What the decoder saw besides the samples it kept, for the warnings a CLI prints. */
struct sc_perf_stats {
    uint64_t samples;      /* samples kept */
    uint64_t other_events; /* sample headers skipped because of their event */
    uint64_t unrecognized; /* lines the Perl script would warn about ("Unrecognized line") */
    int unterminated;      /* 1 when the input ended inside a sample, which was dropped */
    uint64_t one_line;     /* as_script: one-line samples (no call chain) the script drops */
    char event[64];        /* the event kept, "" when no header named one (truncated) */
    char other_event[64];  /* the first event skipped (truncated) */
};

/* sc_perf_decode() that also fills *stats (when not NULL). */
int sc_perf_decode_ex(const char *buf, size_t n, const struct sc_perf_opts *opts,
                      const struct sc_limits *lim, struct sc_profile *p,
                      struct sc_perf_stats *stats, char *err);

/* The sample types of a perf recording, as sc_perf_decode() makes them: "samples/count" and
 * "<event>/<unit>" (event[0..n) up to any ':' modifier, "events" when event is NULL), the
 * second the default and the period type with the given period. 0 or SC_ENOMEM. */
int sc_perf_sample_types(struct sc_profile *p, const char *event, size_t n, int64_t period,
                         char *err);

/* The frames the script makes of one stack line of perf script's output, "PC SYM+OFF (DSO)"
 * as perf prints it (java says the process is a JVM's, which changes Java names): calls
 * fn(ctx, frame, len, copy) for each, callers first for "a->b" inlined pieces; copy says the
 * frame lies in scratch, which needs 2 * (n + 16) bytes. A line the script does not
 * recognize, or whose symbol gives no frame (it skips "(...)" names), calls nothing.
 * Returns 0 or fn's non-zero result. */
typedef int (*sc_perf_frame_fn)(void *ctx, const char *frame, size_t n, int copy);
int sc_perf_line_frames(const struct sc_perf_opts *o, int java, const char *line, size_t n,
                        char *scratch, sc_perf_frame_fn fn, void *ctx);

#endif
