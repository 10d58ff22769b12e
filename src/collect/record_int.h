/* record_int.h - the recorder's internals, shared by record*.c.
 *
 * DESIGN. One thread owns a recorder; nothing here locks.
 *
 *   record.c          perf_event_open, the rings, reading and ordering records, polling
 *   record_events.c   records -> processes, threads, mappings; samples -> window stacks
 *   record_offcpu.c   sched_switch samples -> stacks kept per thread -> spans off CPU
 *   record_profile.c  a take: symbolizes new locations, builds the window's profile
 *   record_run.c      the sampling loop, delivery to sinks, the background thread
 *
 * Lifetimes. Processes (pid -> mappings) and threads (tid -> comm) live from their first
 * sighting (a record, or a sample of someone already running, read from /proc) to their
 * EXIT record; dead entries are swept from the indexes after a take. Locations ((DSO,
 * address) -> symbolized frames) live for the recording, up to max_locations, and are
 * then dropped with their strings after a take. Stacks and samples live for one window
 * (one take); the window's profile (win) is built up during the window (its strings:
 * comm, pid and tid labels) and finished by the take. A thread off CPU keeps its stack (as
 * location ids) from its switch sample to its return, across windows; the location cache's
 * drop drops these too. */
#ifndef SC_RECORD_INT_H
#define SC_RECORD_INT_H

#include "collect/procmaps.h"
#include "collect/record.h"
#include "collect/unwind.h"
#include "model/clock.h"
#include "model/hash.h"

#include <poll.h>

struct rec_proc {
    int32_t pid;
    uint8_t loaded; /* maps read (/proc) or built from records */
    uint8_t dead;
    struct sc_procmap *maps; /* executable ones: sorted by start, disjoint (procmaps.h) */
    uint32_t nmaps, cap;
};

struct rec_task {
    int32_t pid, tid;
    uint8_t dead;
    char comm[16]; /* the kernel's TASK_COMM_LEN */
    uint32_t gen;  /* the window the strings below belong to */
    uint32_t s_comm, s_pid, s_tid;
};

/* A distinct (DSO, address): a return address less one for callers, so that it names
 * the call. */
struct rec_loc {
    uint64_t addr;
    uint32_t dso;
    uint32_t sym;     /* index + 1 into syms; 0: not symbolized yet */
    uint32_t win_gen; /* the window win_loc belongs to */
    uint32_t win_loc; /* its location index in the window's profile */
};

struct rec_sym {
    uint64_t vaddr;
    uint32_t frame_start, nframes; /* into frames, innermost first */
    uint8_t found, root;           /* named by a symbol; a thread or process entry */
};

struct rec_frame {
    uint32_t name, system_name, file; /* symstr */
    int64_t line;
};

struct rec_stack {
    uint32_t start, n; /* into stack_locs, leaf first */
    uint32_t nkernel;  /* the first nkernel are kernel frames */
    uint32_t whole;    /* the walk of its user part reached the outermost frame (the tables
                          said so, or a zero frame pointer did): not cut short, whatever
                          that frame's name */
};

enum rec_kind {
    REC_ONCPU = 0, /* a cpu-clock sample: period is CPU time */
    REC_BLOCKED,   /* asleep or waiting (S, D): period is the time off CPU */
    REC_RUNQUEUE   /* preempted, runnable: period is the time waiting for a CPU */
};

struct rec_sample {
    uint32_t stack;
    uint32_t s_comm, s_pid, s_tid; /* window strings */
    int64_t time;                  /* CLOCK_MONOTONIC ns */
    uint64_t period;
    uint32_t kind; /* enum rec_kind */
};

/* A thread off CPU: its stack when it left, until it runs again. */
struct rec_offcpu {
    int32_t pid, tid;
    int64_t since;   /* CLOCK_MONOTONIC ns it left the CPU */
    int64_t counted; /* up to when its time is in a window already (a take's flush) */
    uint32_t *locs;  /* its stack's location ids, leaf first */
    uint32_t n, nkernel, whole;
    uint32_t kind; /* REC_BLOCKED or REC_RUNQUEUE */
};

/* One perf ring buffer: the metadata page and 2^n data pages. */
struct rec_ring {
    int fd;
    int cpu;
    int kind; /* REC_RING_CLOCK or REC_RING_SWITCH: the layout of its samples */
    void *base;
    size_t map_len;
    uint8_t *data;
    uint64_t size;
};

enum { REC_RING_CLOCK = 0, REC_RING_SWITCH = 1 };

/* A record copied out of a ring, waiting to be processed in time order. */
struct rec_ref {
    int64_t time;
    uint64_t seq;
    uint32_t off, len; /* into batch */
    uint32_t kind;     /* its ring's */
};

struct rec_trunc {
    uint32_t dso;
    uint64_t count;
};

struct sc_recorder {
    struct sc_record_opts o;
    int offline;
    /* perf (record.c) */
    struct rec_ring *rings;
    uint32_t nrings;
    uint32_t ncpus; /* rings of each kind opened (the switch rings follow the clock's) */
    int *fds;
    uint32_t nfds, fdcap;
    struct pollfd *pfds;
    struct sc_buf batch;
    struct rec_ref *refs;
    uint32_t nrefs, refcap;
    uint64_t seq;
    int64_t mono_to_real; /* unix ns = CLOCK_MONOTONIC ns + this */
    int user_only;
    int gone; /* -p: the process is gone */
    /* processes and threads (record_events.c) */
    struct sc_map64 proc_index, task_index; /* pid / tid -> index */
    struct rec_proc *procs;
    uint32_t nprocs, pcap, dead_procs;
    struct rec_task *tasks;
    uint32_t ntasks, tcap, dead_tasks;
    struct sc_map64 forked; /* tids seen in FORK records (setup of -p) */
    /* locations (record_events.c, record_profile.c) */
    struct sc_symbolizer *sym;
    struct sc_map64 loc_index;
    struct rec_loc *locs;
    uint32_t nlocs, lcap;
    struct rec_sym *syms;
    uint32_t nsyms, scap;
    struct rec_frame *frames;
    uint32_t nframes, fcap;
    struct sc_arena sym_arena;
    struct sc_strtab symstr;
    /* the window */
    struct sc_profile *win;
    uint32_t gen;
    int64_t win_start; /* CLOCK_MONOTONIC ns */
    uint64_t win_lost;
    struct rec_stack *stacks;
    uint32_t nstacks, stcap;
    uint32_t *stack_locs;
    uint32_t nstack_locs, slcap;
    struct sc_map64 stack_index;
    struct rec_sample *samples;
    uint32_t nsamples, smcap;
    /* unwinding (record_events.c); NULL with --unwind=fp */
    struct sc_unwind_cache *uw;
    /* off CPU (record_offcpu.c) */
    uint32_t tp_id;                     /* sched:sched_switch's tracepoint id */
    uint32_t switch_pages;              /* data pages of a switch ring */
    uint32_t tp_state_off, tp_state_sz; /* prev_state in its raw data */
    int64_t offcpu_min;                 /* spans kept from this long (ns) */
    int64_t seen_until;                 /* records before this time are processed */
    struct sc_map64 off_index;          /* tid -> index into off */
    struct rec_offcpu *off;
    uint32_t noff, offcap;
    uint64_t off_frames; /* frames kept in off */
    uint64_t win_short, win_short_ns, win_dropped, win_switch_lost;
    uint32_t win_spans;         /* spans sampled in the window, each a sample */
    struct sc_map64 span_index; /* past SC_RECORD_OFFCPU_TIMED: (stack, kind, tid) ->
                                   its sample */
    /* truncated stacks over the recording, per DSO */
    struct sc_map64 trunc_index;
    struct rec_trunc *trunc;
    uint32_t ntrunc, trcap;
    /* samples with frames no symbol named, over the recording, per DSO (record_profile.c) */
    struct rec_trunc *unsym;
    uint32_t nunsym, uncap;
    uint64_t sym_gen; /* the symbolizer's generation the location cache was named in: when a
                         debug file arrives (sc_symbolizer_refresh) the cache is dropped after
                         the take, to be named again by it */
    struct sc_record_stats st;
};

/* The user registers this machine's samples carry for unwinding: the perf_regs mask, and
 * where pc, sp, fp (and arm64's lr) are among the registers the sample holds (in the
 * mask's bit order). NULL when unwinding is not done on this machine. */
struct rec_arch {
    enum sc_uw_arch arch;
    uint64_t mask;
    uint32_t nregs;
    uint32_t pc, sp, fp, lr; /* indexes; lr UINT32_MAX when none */
};
const struct rec_arch *sc_rec_unwind_arch(void);

/* record_events.c */
int sc_rec_init_tables(struct sc_recorder *r, char *err);
void sc_rec_release_tables(struct sc_recorder *r);
/* A fresh window profile (strings pid, tid, comm; the sample types). 0 or SC_ENOMEM. */
int sc_rec_new_window(struct sc_recorder *r);
/* After a take: sweep dead processes and threads, drop the location cache when full. */
void sc_rec_after_take(struct sc_recorder *r);
/* The time of a record, for ordering (0 when it has none). */
int64_t sc_rec_time(const uint8_t *rec, size_t len);

/* Processes a record of a ring of that kind (REC_RING_*). */
int sc_rec_feed(struct sc_recorder *r, int kind, const void *rec, size_t len);
/* A stack of a sample's callchain and user stack (after its callchain: the registers and
 * the stack copy, rest of them rest_len bytes) as location ids into locs (MAX_FRAMES),
 * leaf first. 1 for a malformed sample, 0, or SC_ENOMEM. */
#define SC_REC_MAX_FRAMES 1024
int sc_rec_stack_of(struct sc_recorder *r, int32_t pid, const uint8_t *ips, uint64_t nr,
                    const uint8_t *rest, size_t rest_len, uint32_t *locs, uint32_t *nlocs,
                    uint32_t *nkernel, uint32_t *whole);
/* Adds a window sample of that stack and thread. 0 or SC_ENOMEM. */
int sc_rec_add_sample(struct sc_recorder *r, int32_t pid, int32_t tid, const uint32_t *locs,
                      uint32_t n, uint32_t nkernel, uint32_t whole, int64_t time, uint64_t period,
                      uint32_t kind);

/* record_offcpu.c */
/* The tracepoint's id and the offset of prev_state in its raw data, from tracefs (mounted
 * when it is not and we may). 0 or SC_E* saying what is missing. */
int sc_rec_offcpu_setup(struct sc_recorder *r, char *err);
/* A sched_switch sample: the thread leaves its CPU. 1 malformed, 0, or SC_ENOMEM. */
int sc_rec_switch_out(struct sc_recorder *r, const uint8_t *b, size_t n);
/* A thread runs again at time. 0 or SC_ENOMEM. */
int sc_rec_switch_in(struct sc_recorder *r, int32_t tid, int64_t time);
/* The thread is gone: its stack goes. */
void sc_rec_offcpu_exit(struct sc_recorder *r, int32_t tid);
/* Before a take: the open spans' time up to seen_until into the window. 0 or SC_ENOMEM. */
int sc_rec_offcpu_flush(struct sc_recorder *r);
/* Drops every kept stack (the location ids they hold are about to go). */
void sc_rec_offcpu_drop(struct sc_recorder *r);
void sc_rec_offcpu_release(struct sc_recorder *r);

/* record_profile.c */
int sc_rec_take(struct sc_recorder *r, struct sc_profile **out, char *err);

#endif
