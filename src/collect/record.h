/* record.h - `scorch record`: a native on-CPU sampler on Linux perf events. */
#ifndef SC_RECORD_H
#define SC_RECORD_H

#include <stddef.h>
#include <stdint.h>

#include "collect/scrape.h"
#include "collect/symbols.h"
#include "collect/unwind.h"
#include "model/labels.h"
#include "model/profile.h"

struct sc_config;

/* A recorder samples on-CPU stacks with the kernel's cpu-clock software event (it works
 * in VMs and containers without hardware counters): every CPU (-a) or one process with
 * all its threads, also those it starts later (-p). The kernel walks the stacks by frame
 * pointers, user and kernel frames, and writes them with pid, tid, CPU, period and a
 * CLOCK_MONOTONIC timestamp into one mmap'd ring buffer per CPU, beside the records that
 * name processes and their code (COMM, MMAP2, FORK, EXIT). The recorder reads the rings,
 * orders the records by time, keeps a table of processes, threads and mappings, and turns
 * each sample into a stack of (DSO, address) locations. A take builds the profile of the
 * samples since the last one: every sample with its own timestamp (unix nanoseconds) and
 * the labels pid, tid and comm; locations are symbolized once per distinct (DSO, address)
 * for the life of the recorder (symbols.h), never per sample.
 *
 * User stacks. The kernel's frame pointer walk breaks in code built without frame pointers
 * (most of a distribution). Unless unwind is SC_RECORD_UNWIND_FP, each sample also carries
 * the user registers (pc, sp, fp) and a copy of stack_bytes of the user stack, and the
 * recorder walks it with the binaries' unwind tables (unwind.h; frame pointers where no
 * table covers a pc). SC_RECORD_UNWIND_AUTO takes that walk when it reaches the stack's
 * outermost frame; when it stops earlier (the copy ended, say) and its frames so far are
 * those of the kernel's chain, the kernel's chain completes it; when they disagree the
 * tables' walk is kept; a sample without registers (a kernel thread) keeps the kernel's
 * chain. SC_RECORD_UNWIND_CFI takes the tables' walk alone.
 *
 * Profiles have the sample types samples/count and cpu/nanoseconds (the sample's period:
 * the CPU time it stands for), period type cpu/nanoseconds. A stack whose user part's walk
 * did not reach the outermost frame (the tables' end, or a zero frame pointer) and that
 * does not end in a thread's or process's entry function (_start, __libc_start_call_main,
 * start_thread, clone, runtime.goexit, ...) was cut short (code without frame pointers nor
 * unwind tables, a stack deeper than the copy): it gets an outermost frame "[truncated:
 * <DSO>]" naming the DSO of its outermost known frame, the profile a comment with the
 * counts per DSO, and sc_recorder_truncated() reports them for the whole recording.
 *
 * Off-CPU time (off_cpu). Beside the cpu-clock event, the sched:sched_switch tracepoint is
 * sampled on every switch away from a thread (the idle task's excepted), with the same
 * callchain, registers and stack copy, and walked the same way: the thread's stack where it
 * left the CPU. It is kept per thread until the thread runs again (a PERF_RECORD_SWITCH
 * record of the cpu-clock events, context_switch on) and then becomes one sample of the
 * time in between, when that time is off_cpu_min_ns or more. The tracepoint's prev_state
 * says why the thread left: asleep (S) or in an uninterruptible wait (D) is "blocked" time,
 * preempted while runnable is time waiting for a CPU; idle and parked kernel threads (I, P)
 * are not counted. Profiles then have four sample types: samples/count and cpu/nanoseconds as
 * above, offcpu/nanoseconds (blocked time) and wall/nanoseconds (cpu + blocked + waiting for
 * a CPU: the thread's whole time, on one flame graph); an on-CPU sample is (1, period, 0,
 * period), a blocked span (0, 0, ns, ns), a preempted one (0, 0, 0, ns). A take also counts
 * the spans still open (a thread asleep at the window's end) up to the last record read, so
 * that each window holds its own time; the rest follows when the thread returns.
 *
 * Memory. Per CPU one ring of ring_pages pages (see sc_record_ring_pages; 64 MiB at most
 * for all CPUs when the pages are not given). The samples of
 * the current window, the process table and the location cache grow with what is
 * sampled; the location cache and its strings are dropped after a take once they pass
 * max_locations (or 64 MiB of names), symbol tables are bounded by the symbolizer's
 * max_bytes, unwind tables by unwind_bytes. Not thread safe: one thread owns a recorder. */
struct sc_recorder;

enum sc_record_unwind {
    SC_RECORD_UNWIND_AUTO = 0, /* the unwind tables, the kernel's chain where they fall short */
    SC_RECORD_UNWIND_FP,       /* the kernel's frame pointer chain only (no stack copies) */
    SC_RECORD_UNWIND_CFI       /* the unwind tables' walk only */
};

/* The user stack copied with each sample for unwinding (perf's --call-graph dwarf copies
 * 8 KiB). 16 KiB cut a third of the stacks of a C++ compiler and of an SQLite-heavy test
 * on the benchmark machine, 32 KiB a few per thousand, for 0.2% of a core more. */
#define SC_RECORD_STACK_BYTES 32768u
#define SC_RECORD_STACK_MAX 61440u /* a sample record is at most 64 KiB */

struct sc_record_opts {
    int32_t pid;            /* > 0: that process (all its threads, and what it starts);
                               0: every process on every CPU (-a) */
    uint32_t frequency;     /* samples per second (per CPU, or per thread); 0: 99 */
    uint32_t ring_pages;    /* data pages per CPU ring, a power of two; 0: by frequency */
    int no_kernel;          /* user frames only (unprivileged with perf_event_paranoid 2) */
    uint32_t max_locations; /* location cache bound; 0: 1 << 20 */
    struct sc_symbolizer_opts sym;
    const struct sc_labels *sample_labels; /* added to every sample (string labels); may
                                              be NULL */
    enum sc_record_unwind unwind;          /* how user stacks are walked (see above) */
    uint32_t stack_bytes;                  /* user stack copied per sample, a multiple of 8 up to
                                              SC_RECORD_STACK_MAX; 0: SC_RECORD_STACK_BYTES */
    uint64_t unwind_bytes;                 /* unwind tables kept; 0: SC_UNWIND_CACHE_BYTES */
    int off_cpu;                           /* also off-CPU time (see above) */
    int64_t off_cpu_min_ns; /* shorter spans off CPU are counted, not kept; 0: the default
                               SC_RECORD_OFFCPU_MIN_NS, < 0: every span */
};

/* Spans off CPU shorter than this are only counted (the profile's comments and the stats
 * say how many and how long): a busy thread's microsecond waits would otherwise be most of
 * the samples. 100 us keeps a preempted thread's waits for a time slice. */
#define SC_RECORD_OFFCPU_MIN_NS 100000LL

/* Threads off CPU whose stacks are kept at most, and the frames of all of them: a thread
 * switched out when the table is full is not counted (offcpu_dropped). */
#define SC_RECORD_OFFCPU_THREADS 65536u
#define SC_RECORD_OFFCPU_FRAMES (4u << 20)

/* Spans off CPU a window keeps as samples of their own (each with its time); past these,
 * the spans of a stack, thread and kind already sampled in the window add to that sample,
 * so that a window's memory follows its distinct stacks and threads, not its switches
 * (an -o recording is one window). */
#define SC_RECORD_OFFCPU_TIMED (1u << 18)

/* Opens the events and the rings; sampling starts at once. Errors say what to change:
 * for EACCES / EPERM the value of kernel.perf_event_paranoid and the fix (root,
 * CAP_PERFMON, the sysctl); SC_EAUTH then. With -p and paranoid 2 an unprivileged open
 * falls back to user frames only (sc_recorder_stats says so). 0 or SC_E*. */
int sc_recorder_open(const struct sc_record_opts *o, struct sc_recorder **out, char *err);

/* A recorder with no events, fed records by sc_recorder_feed (tests, fuzzing): it reads
 * nothing from /proc. */
int sc_recorder_new_offline(const struct sc_record_opts *o, struct sc_recorder **out, char *err);

/* Closes the events and frees everything. NULL is fine. */
void sc_recorder_close(struct sc_recorder *r);

/* Waits up to timeout_ms for the rings to fill (half full wakes it), then processes every
 * record older than the moment it started reading (later ones wait for the next call, so
 * that records of different CPUs are processed in time order). 0; SC_ENOTFOUND when the
 * process (-p) has exited and everything it left was read; or SC_E*. */
int sc_recorder_poll(struct sc_recorder *r, int timeout_ms, char *err);

/* Reads and processes everything the rings hold, whatever its time (the last read). */
int sc_recorder_drain(struct sc_recorder *r, char *err);

/* Processes one perf record (a struct perf_event_header and its body, as the kernel
 * writes it for this recorder's sample_type). Malformed records are counted and skipped.
 * 0, or SC_ENOMEM. */
int sc_recorder_feed(struct sc_recorder *r, const void *rec, size_t len);

/* The same for a record of the sched_switch events (off_cpu): their samples carry the
 * tracepoint's raw data after the callchain (record_events.c has the layout). */
int sc_recorder_feed_switch(struct sc_recorder *r, const void *rec, size_t len);

/* The profile of the samples since the last take (or the open): new, the caller frees it
 * (sc_profile_free). from_ns / until_ns (unix) are the window's bounds. 0 or SC_ENOMEM. */
int sc_recorder_take(struct sc_recorder *r, struct sc_profile **out, int64_t *from_ns,
                     int64_t *until_ns, char *err);

struct sc_record_stats {
    uint64_t samples; /* sampled stacks processed */
    uint64_t lost;    /* samples the kernel dropped (rings full) */
    uint64_t records, bad_records;
    uint64_t truncated;    /* stacks cut short (see above) */
    uint32_t cpus, events; /* rings, and event file descriptors */
    uint32_t ring_pages;
    uint32_t processes, threads, locations;
    int user_only; /* kernel frames are not collected */
    struct sc_symbolizer_stats sym;
    /* user stacks, when unwinding is on */
    uint64_t stacks_tables; /* walked by the unwind tables to the outermost frame */
    uint64_t stacks_joined; /* walked by the tables, completed by the kernel's chain */
    uint64_t stacks_cut;    /* the tables' walk, stopped early (see unwind_stops) */
    uint64_t stacks_kernel; /* the kernel's chain (no registers, or no step possible) */
    uint64_t unwind_stops[SC_UNWIND_BAD + 1]; /* why tables' walks stopped early */
    uint64_t unwind_frames;                   /* frames the tables' walks found */
    uint64_t unwind_ns; /* CPU time spent walking (tables loaded on the way included) */
    struct sc_unwind_cache_stats uw;
    /* off CPU */
    uint64_t switches;        /* switch samples processed (threads leaving a CPU) */
    uint64_t offcpu_spans;    /* spans counted: the thread came back, min time or more */
    uint64_t offcpu_short;    /* spans under the minimum, only counted */
    uint64_t offcpu_short_ns; /* their time */
    uint64_t offcpu_ns;       /* blocked time in the profiles */
    uint64_t runqueue_ns;     /* time preempted threads waited for a CPU, in the profiles */
    uint64_t offcpu_dropped;  /* stacks not kept (table full, lost records, cache reset) */
    uint32_t offcpu_pending;  /* threads off CPU now with their stacks kept */
    uint64_t offcpu_lost;     /* switch samples the kernel dropped */
};
void sc_recorder_stats(struct sc_recorder *r, struct sc_record_stats *st);

/* The truncated stacks of the whole recording per DSO, most first: cb(ctx, dso path,
 * count). */
void sc_recorder_truncated(struct sc_recorder *r,
                           void (*cb)(void *ctx, const char *dso, uint64_t count), void *ctx);

/* The samples of the whole recording with frames no symbol named, per binary, most first:
 * cb(ctx, path, count, why) with why as sc_dso_info.symbols ("no symbols, no debug file",
 * ...; "" when the binary's symbols do not cover every address sampled in it). */
void sc_recorder_unsymbolized(struct sc_recorder *r,
                              void (*cb)(void *ctx, const char *dso, uint64_t count,
                                         const char *why),
                              void *ctx);

/* The ring size for a frequency and the bytes of stack each sample copies: a second of
 * samples (1 KiB each plus the stack), a power of two of 8 to 512 pages (128 KiB per CPU at
 * 99 Hz without stacks, 2 MiB with 32 KiB stacks). */
uint32_t sc_record_ring_pages(uint32_t frequency, uint32_t stack_bytes);

/* ---- running one (record_run.c) ---- */

/* Called with each profile (the recorder's take) and its window; the profile is freed
 * after the call. Non-zero stops the run with that error. */
typedef int (*sc_record_sink)(void *ctx, const struct sc_profile *p, int64_t from_ns,
                              int64_t until_ns, char *err);

struct sc_record_run {
    int64_t interval_ns;           /* a profile every interval; 0: one at the end */
    int64_t duration_ns;           /* stop after this long; 0: until should_stop */
    int (*should_stop)(void *ctx); /* polled a few times a second; may be NULL */
    void *stop_ctx;
    sc_record_sink sink;
    void *sink_ctx;
    int target_exited; /* out: the run ended because the process (-p) exited */
};

/* Samples until the duration passes, should_stop says so or the process exits, handing
 * the sink a profile every interval and always a last one with what is left (also after
 * a stop). 0, or the sink's or the recorder's error. */
int sc_record_run(struct sc_recorder *r, struct sc_record_run *run, char *err);

/* Encodes p as pprof and hands it to a scrape sink (sc_remote_sink, sc_scrape_store_sink)
 * as profile "cpu" of the series service_name + labels (job "record", instance the host
 * name). 0 or the sink's error. */
int sc_record_deliver(const struct sc_profile *p, int64_t from_ns, int64_t until_ns,
                      const char *service_name, const struct sc_labels *labels, sc_scrape_sink sink,
                      void *sink_ctx, char *err);

/* The open DWARF a recorder that takes profiles again and again keeps (--push, the
 * server): a library's debug information is read (and decompressed) once, not every
 * interval. */
#define SC_RECORD_DWARF_CACHE (24u << 20)

/* A recorder on its own thread writing to a scrape sink every interval (the server's
 * `record:`), keeping SC_RECORD_DWARF_CACHE of DWARF open unless o says otherwise. */
struct sc_record_bg;
int sc_record_bg_start(const struct sc_record_opts *o, int64_t interval_ns,
                       const char *service_name, const struct sc_labels *labels,
                       sc_scrape_sink sink, void *sink_ctx, struct sc_record_bg **out, char *err);
/* Stops sampling, delivers what the last window holds, frees. NULL is fine. */
void sc_record_bg_stop(struct sc_record_bg *b);

/* The same from a config's record: section (config/config.h): its frequency, interval,
 * pid, labels, off_cpu and off_cpu_min; the service is labels' service_name, else as
 * sc_record_service_name. */
int sc_record_bg_from_config(const struct sc_config *cf, sc_scrape_sink sink, void *sink_ctx,
                             struct sc_record_bg **out, char *err);

/* The service_name a recording is stored under: labels' service_name (labels may be
 * NULL), else the program's name (/proc/PID/comm) for one process, else the host name. */
void sc_record_service_name(const struct sc_labels *labels, int32_t pid, char *out, size_t n);

#endif
