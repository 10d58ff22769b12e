/* record_int.h - the recorder's internals, shared by record*.c.
 *
 * DESIGN. One thread owns a recorder; nothing here locks.
 *
 *   record.c          perf_event_open, the rings, reading and ordering records, polling
 *   record_events.c   records -> processes, threads, mappings; samples -> window stacks
 *   record_profile.c  a take: symbolizes new locations, builds the window's profile
 *   record_run.c      the sampling loop, delivery to sinks, the background thread
 *
 * Lifetimes. Processes (pid -> mappings) and threads (tid -> comm) live from their first
 * sighting (a record, or a sample of someone already running, read from /proc) to their
 * EXIT record; dead entries are swept from the indexes after a take. Locations ((DSO,
 * address) -> symbolized frames) live for the recording, up to max_locations, and are
 * then dropped with their strings after a take. Stacks and samples live for one window
 * (one take); the window's profile (win) is built up during the window (its strings:
 * comm, pid and tid labels) and finished by the take. */
#ifndef SC_RECORD_INT_H
#define SC_RECORD_INT_H

#include "collect/record.h"
#include "collect/unwind.h"
#include "model/clock.h"
#include "model/hash.h"

#include <poll.h>

/* An executable mapping of a process. */
struct rec_map {
    uint64_t start, end, pgoff;
    uint32_t dso;
};

struct rec_proc {
    int32_t pid;
    uint8_t loaded; /* maps read (/proc) or built from records */
    uint8_t dead;
    struct rec_map *maps; /* sorted by start, disjoint */
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

struct rec_sample {
    uint32_t stack;
    uint32_t s_comm, s_pid, s_tid; /* window strings */
    int64_t time;                  /* CLOCK_MONOTONIC ns */
    uint64_t period;
};

/* One perf ring buffer: the metadata page and 2^n data pages. */
struct rec_ring {
    int fd;
    int cpu;
    void *base;
    size_t map_len;
    uint8_t *data;
    uint64_t size;
};

/* A record copied out of a ring, waiting to be processed in time order. */
struct rec_ref {
    int64_t time;
    uint64_t seq;
    uint32_t off, len; /* into batch */
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

/* record_profile.c */
int sc_rec_take(struct sc_recorder *r, struct sc_profile **out, char *err);

#endif
