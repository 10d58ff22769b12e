/* perfdata.c - perf.data read directly: the profile `perf script | scorch top` would see. */
#include "formats/perfdata.h"
#include "collect/procmaps.h"
#include "collect/symbols.h"
#include "collect/unwind.h"
#include "formats/perf.h"
#include "model/budget.h"
#include "model/buf.h"
#include "model/bytes.h"
#include "model/error.h"
#include "model/hash.h"
#include "model/radix.h"

#include <demangle.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* The file (all little-endian here; a big-endian file is refused by name):
 *
 *   OFFSET  SIZE  MEANING
 *   0       8     magic "PERFILE2"
 *   8       8     size of this header (104; 16 is a pipe's stream, not read here)
 *   16      8     attr_size: one attrs entry, a perf_event_attr and then a section of ids
 *   24      16    attrs section {offset, size}: size / attr_size entries
 *   40      16    data section {offset, size}: the records
 *   56      16    event_types section (unused since 2012)
 *   72      32    feature bitmap: bit i set = feature i has a section; the sections' table,
 *                 {offset, size} for each set bit in order, follows the data section
 *
 * A perf_event_attr (its own size at +4; fields past it are zero):
 *   0 type u32, 8 config u64, 16 sample_period, 24 sample_type, 32 read_format, 40 flags
 *   (bit 10 freq, bit 18 sample_id_all), 72 branch_sample_type, 80 sample_regs_user.
 *
 * A record: u32 type, u16 misc (low 3 bits: the cpumode), u16 size (all of it). Of the
 * records `perf record` writes these matter:
 *   SAMPLE (9)   the fields sample_type names, in bit order: IDENTIFIER, IP, TID (pid,
 *                tid), TIME, ADDR, ID, STREAM_ID, CPU (cpu, res), PERIOD, READ (as
 *                read_format says), CALLCHAIN (nr, then nr ips with PERF_CONTEXT_*
 *                markers), RAW (u32 size, bytes), BRANCH_STACK (nr, [hw_idx], 24 bytes
 *                each), REGS_USER (abi, then a u64 per bit of sample_regs_user unless abi
 *                is 0), STACK_USER (size, bytes, dyn_size unless size is 0), ...
 *   MMAP (1)     pid, tid, addr, len, pgoff, filename
 *   MMAP2 (10)   pid, tid, addr, len, pgoff, maj, min, ino, ino_generation (or, with misc
 *                bit 14, a build id's size, 3 bytes, 20 bytes), prot, flags, filename
 *   COMM (3)     pid, tid, comm          FORK (7) / EXIT (4): pid, ppid, tid, ptid, time
 *   LOST (2), FINISHED_ROUND (68): counted; the others are skipped
 * With sample_id_all, every record but SAMPLE ends with pid/tid, time, id, stream_id, cpu
 * and identifier as sample_type has them: how its time is known.
 *
 * Features read: BUILD_ID (2: records of pid, a 20-byte id with its size, the file name),
 * so a binary rebuilt since the recording is not used for its names; EVENT_DESC (12: u32
 * count, u32 attr size, then for each an attr, u32 ids, the name as u32 length + bytes,
 * the ids), the events' names as perf script prints them.
 *
 * perf script delivers the records in time order (its ordered-events queue, flushed at
 * FINISHED_ROUND); here the records are sorted by time once, ties in file order, and then
 * replayed: threads, their comms and their processes' maps as perf keeps them (a fork copies
 * the parent's maps to a new process, a thread shares its process's), samples named as
 * perf script names them and then tidied by the same code that reads perf script's text
 * (sc_perf_symbol_frames), so both ways give the same frames. */

enum {
    R_MMAP = 1,
    R_LOST = 2,
    R_COMM = 3,
    R_EXIT = 4,
    R_FORK = 7,
    R_SAMPLE = 9,
    R_MMAP2 = 10,
    R_FINISHED_ROUND = 68,
};

enum {
    S_IP = 1 << 0,
    S_TID = 1 << 1,
    S_TIME = 1 << 2,
    S_ADDR = 1 << 3,
    S_READ = 1 << 4,
    S_CALLCHAIN = 1 << 5,
    S_ID = 1 << 6,
    S_CPU = 1 << 7,
    S_PERIOD = 1 << 8,
    S_STREAM_ID = 1 << 9,
    S_RAW = 1 << 10,
    S_BRANCH_STACK = 1 << 11,
    S_REGS_USER = 1 << 12,
    S_STACK_USER = 1 << 13,
    S_IDENTIFIER = 1 << 16,
};

enum { F_TOTAL_TIME_ENABLED = 1, F_TOTAL_TIME_RUNNING = 2, F_ID = 4, F_GROUP = 8, F_LOST = 16 };

enum {
    MISC_CPUMODE = 7,
    MODE_KERNEL = 1,
    MODE_USER = 2,
    MISC_MMAP_DATA = 1 << 13,
    MISC_MMAP_BUILD_ID = 1 << 14,
};

#define CONTEXT_HV ((uint64_t)-32)
#define CONTEXT_KERNEL ((uint64_t)-128)
#define CONTEXT_USER ((uint64_t)-512)
#define CONTEXT_GUEST ((uint64_t)-2048)
#define CONTEXT_GUEST_KERNEL ((uint64_t)-2176)
#define CONTEXT_GUEST_USER ((uint64_t)-2560)
#define CONTEXT_MAX ((uint64_t)-4095)

enum { FEAT_BUILD_ID = 2, FEAT_EVENT_DESC = 12 };

#define HEADER_SIZE 104
#define MAX_ATTRS 4096
#define MAX_STACK 127 /* perf script's frames of a chain (its --max-stack) */
#define MAX_NAME 4096
/* Mappings: a process maps a few hundred executable files, a JIT some more; a file of
 * records that maps more (or forks a process of many maps again and again) is refused
 * before it costs quadratic time or memory (a mapping's insertion is linear in them). */
#define MAX_PROC_MAPS (1u << 14)
#define MAX_MAPS (1u << 22)

struct attr {
    uint32_t type, size;
    uint64_t config, period, sample_type, read_format, flags, branch_type, regs_user;
    char name[128];
};

struct rec {
    int64_t time;
    uint64_t off;
};

/* A mapping's dso is SC_DSO_ID_UNKNOWN when not to be read, its path the dso as perf
 * script prints it (anonymous memory: /tmp/perf-PID.map). */
struct proc {
    struct sc_procmap *maps; /* sorted, disjoint (procmaps.h) */
    uint32_t nmaps, cap;
    uint32_t gen; /* changes with the maps (the stacks cache's key) */
};

struct thread {
    int32_t pid, tid;
    int has_comm, java;
    uint32_t comm;   /* profile string */
    uint32_t pframe; /* the process frame's string + 1, 0: not made yet */
};

/* What one address of one DSO gives: frames (profile strings, leaf first) in frs, known
 * once resolved: the symbolizer is asked once per DSO, for all its addresses at once. */
struct symkey {
    uint64_t addr, pc;
    const char *path; /* the printed dso, for unknown names */
    uint32_t dso;
    uint8_t inl, java, resolved;
    uint32_t off, n;     /* frames in frs, and (once located, struct kfr) their locations in kloc */
    const uint8_t *said; /* while naming: what the symbolizer said (put_sym) */
    uint32_t said_len;
};

/* A call chain met before, with the same maps: its keys are those of then (a profile's
 * samples repeat a few thousand stacks). */
struct stack {
    const uint8_t *chain; /* nr ips, in the file */
    uint64_t nr, ip;
    int32_t pid;
    uint32_t gen;
    uint8_t mode, java;
    uint32_t koff, nk;
};

/* name_ip's cache: what address ip of process proc (index + 1, 0: none) at its maps' gen
 * gave, key si1 - 1 (0: empty). */
#define IPCACHE 8192
struct ipcache {
    uint64_t ip;
    uint32_t proc, gen, flags, si1;
};

/* A sample kept, its frames still keys (in kpool). */
struct psample {
    uint32_t koff, nk;
    uint32_t root, comm; /* strings: the process frame, the comm label */
    int32_t pid, tid;
    int64_t period, time_ns;
};

struct dec {
    const uint8_t *buf;
    size_t n;
    const struct sc_perf_opts *po;
    const struct sc_perfdata_opts *o;
    const struct sc_limits *lim;
    struct sc_profile *p;
    struct sc_perfdata_stats *st;
    char *err;

    struct attr *attrs;
    uint32_t nattrs;
    struct sc_map64 ids; /* sample id -> attr */
    int id_all;          /* sample_id_all: non-sample records end with the id fields */

    struct sc_arena arena;
    struct sc_map64 pathidx; /* a mapping's path -> paths[] (path_of) */
    const char **paths;
    uint32_t npaths, cappaths;
    struct sc_map64 procs, threads;
    uint32_t nmaps; /* in all processes */
    struct proc *pv;
    uint32_t npv, cappv;
    struct thread *tv;
    uint32_t ntv, captv;

    struct sc_symbolizer *sym;
    /* the kernel's names, loaded by a thread of their own while the records are read
     * (/proc/kallsyms costs as much as the rest) */
    struct sc_symbolizer *ksym;
    pthread_t kthread;
    int kstarted, ksym_one_shot;
    struct sc_budget *kbudget;
    struct sc_unwind_cache *uw;
    int sym_failed, want_dwarf;
    struct sc_map64 symidx;
    struct ipcache *ipc; /* (name_ip) */
    struct kfr *kf;      /* (build_samples) */
    struct symkey *syms;
    uint32_t nsyms, capsyms;
    uint32_t *frs, *kloc;
    uint32_t nfrs, capfrs;
    struct sc_map64 sameidx; /* while naming: keys by their lines (named_frames) */
    struct sc_map64 stackidx;
    struct stack *stacks;
    uint32_t nstacks, capstacks;
    struct sc_map64 loc_of_str; /* profile string -> location + 1 */
    struct psample *ps;
    uint32_t nps, capps;
    uint32_t *kpool;
    uint32_t nkpool, capkpool, ps_koff; /* ps_koff: where the sample being read starts */

    /* build ids of the recorded binaries: path hash -> index in bids */
    struct sc_map64 bidx;
    struct bid {
        const char *path;
        uint32_t len;
        uint8_t id[20], idlen;
        int8_t verdict;    /* 0 not checked, 1 the file is that build, -1 it is not */
        const char *cache; /* -1: the build-id cache's copy, NULL when none */
        uint32_t cache_len;
    } * bids;
    uint32_t nbids, capbids;
    uint8_t kid[20], kidlen; /* the kernel's build id ([kernel.kallsyms]), kidlen 0: none */
    char kallsyms[4200];     /* the kernel's names, when not /proc/kallsyms (kallsyms_path) */

    int kept;                        /* attr index of the kept event, -1 before the first sample */
    uint32_t last_thread, last_proc; /* the last sample's thread and process, index + 1 */
    int32_t last_pid;
    const struct sc_procmap *last_map; /* the map of the sample's last address, or NULL */
    uint64_t nsample_recs;             /* SAMPLE records in the file (collect) */
    uint32_t kcomm, kpid, ktid;

    /* the sample being built */
    uint32_t *locs;
    uint32_t nlocs, caplocs;
    uint64_t pcs[MAX_STACK + 1];
    char *scratch;
    uint32_t capscratch;
};

static int oom(struct dec *d)
{
    return sc_errf(d->err, SC_ENOMEM, "out of memory");
}

/* ---- header, attrs, features ---- */

int sc_perfdata_detect(const void *buf, size_t n)
{
    return n >= 8 && (!memcmp(buf, "PERFILE2", 8) || !memcmp(buf, "2ELIFREP", 8));
}

/* A section {offset, size} at off, checked against the file. */
static int section(struct dec *d, size_t at, const char *what, uint64_t *off, uint64_t *size)
{
    *off = sc_rd64(d->buf + at);
    *size = sc_rd64(d->buf + at + 8);
    if (*off > d->n || *size > d->n - *off)
        return sc_errf(d->err, SC_EFORMAT,
                       "perf.data: the %s section (%llu bytes at %llu) is past the end of the file "
                       "(%zu bytes): truncated?",
                       what, (unsigned long long)*size, (unsigned long long)*off, d->n);
    return 0;
}

/* perf's names of the generic events, for files without EVENT_DESC. */
static void default_name(struct attr *a)
{
    static const char *const hw[] = {"cycles",
                                     "instructions",
                                     "cache-references",
                                     "cache-misses",
                                     "branch-instructions",
                                     "branch-misses",
                                     "bus-cycles",
                                     "stalled-cycles-frontend",
                                     "stalled-cycles-backend",
                                     "ref-cycles"};
    static const char *const sw[] = {
        "cpu-clock",        "task-clock",   "page-faults",  "context-switches",
        "cpu-migrations",   "minor-faults", "major-faults", "alignment-faults",
        "emulation-faults", "dummy",        "bpf-output",   "cgroup-switches"};
    if (a->type == 0 && a->config < sizeof hw / sizeof hw[0])
        snprintf(a->name, sizeof a->name, "%s", hw[a->config]);
    else if (a->type == 1 && a->config < sizeof sw / sizeof sw[0])
        snprintf(a->name, sizeof a->name, "%s", sw[a->config]);
    else
        snprintf(a->name, sizeof a->name, "raw-%u-0x%llx", a->type, (unsigned long long)a->config);
}

static void parse_attr(const uint8_t *b, size_t avail, struct attr *a)
{
    uint8_t tmp[136];
    memset(tmp, 0, sizeof tmp);
    uint32_t sz = avail >= 8 ? sc_rd32(b + 4) : 0;
    if (sz > avail)
        sz = (uint32_t)avail;
    if (sz == 0)
        sz = avail < 64 ? (uint32_t)avail : 64; /* PERF_ATTR_SIZE_VER0 */
    memcpy(tmp, b, sz < sizeof tmp ? sz : sizeof tmp);
    memset(a, 0, sizeof *a);
    a->type = sc_rd32(tmp);
    a->size = sz;
    a->config = sc_rd64(tmp + 8);
    a->period = sc_rd64(tmp + 16);
    a->sample_type = sc_rd64(tmp + 24);
    a->read_format = sc_rd64(tmp + 32);
    a->flags = sc_rd64(tmp + 40);
    a->branch_type = sc_rd64(tmp + 72);
    a->regs_user = sc_rd64(tmp + 80);
}

static int read_attrs(struct dec *d)
{
    uint64_t asz = sc_rd64(d->buf + 16), off, size;
    int rc = section(d, 24, "attrs", &off, &size);
    if (rc)
        return rc;
    if (asz < 16 + 64 || asz > 4096)
        return sc_errf(d->err, SC_EFORMAT, "perf.data: attr size %llu is not one perf writes",
                       (unsigned long long)asz);
    uint64_t na = size / asz;
    if (na == 0 || na > MAX_ATTRS)
        return sc_errf(d->err, SC_EFORMAT, "perf.data: %llu events (1 to %d expected)",
                       (unsigned long long)na, MAX_ATTRS);
    d->attrs = calloc((size_t)na, sizeof *d->attrs);
    if (!d->attrs)
        return oom(d);
    d->nattrs = (uint32_t)na;
    for (uint32_t i = 0; i < na; i++) {
        const uint8_t *e = d->buf + off + i * asz;
        struct attr *a = &d->attrs[i];
        parse_attr(e, (size_t)asz - 16, a);
        default_name(a);
        if (a->flags & (1ull << 18))
            d->id_all = 1;
        uint64_t ioff, isz;
        rc = section(d, (size_t)(off + i * asz + asz - 16), "ids", &ioff, &isz);
        if (rc)
            return rc;
        for (uint64_t k = 0; k + 8 <= isz; k += 8) {
            int added;
            uint32_t *v = sc_map64_upsert(&d->ids, sc_rd64(d->buf + ioff + k), i, &added);
            if (!v)
                return oom(d);
        }
    }
    return 0;
}

/* EVENT_DESC: the events' names, in the attrs' order. */
static void event_desc(struct dec *d, uint64_t off, uint64_t size)
{
    const uint8_t *b = d->buf + off, *e = b + size;
    if (size < 8)
        return;
    uint32_t nr = sc_rd32(b), asz = sc_rd32(b + 4);
    b += 8;
    for (uint32_t i = 0; i < nr && i < d->nattrs; i++) {
        if ((size_t)(e - b) < (size_t)asz + 8)
            return;
        b += asz;
        uint32_t nids = sc_rd32(b), len = sc_rd32(b + 4);
        b += 8;
        if (len > (size_t)(e - b))
            return;
        size_t k = strnlen((const char *)b, len);
        if (k > 0 && k < sizeof d->attrs[i].name) {
            memcpy(d->attrs[i].name, b, k);
            d->attrs[i].name[k] = 0;
        }
        b += len;
        if ((uint64_t)nids * 8 > (size_t)(e - b))
            return;
        b += (size_t)nids * 8;
    }
}

/* BUILD_ID: which build of each binary ran. */
static int build_ids(struct dec *d, uint64_t off, uint64_t size)
{
    const uint8_t *b = d->buf + off, *e = b + size;
    while ((size_t)(e - b) >= 8 + 4 + 24) {
        uint16_t misc = (uint16_t)(sc_rd32(b + 4) & 0xffff);
        uint16_t rs = (uint16_t)(sc_rd32(b + 4) >> 16);
        if (rs < 8 + 4 + 24 || rs > (size_t)(e - b))
            break;
        const uint8_t *id = b + 12;
        uint8_t idlen = (misc & (1u << 15)) ? id[20] : 20;
        if (idlen > 20)
            idlen = 20;
        const char *name = (const char *)b + 36;
        size_t nl = strnlen(name, rs - 36u);
        b += rs;
        if (nl == 17 && !memcmp(name, "[kernel.kallsyms]", 17)) {
            memcpy(d->kid, id, idlen);
            d->kidlen = idlen;
        }
        if (nl == 0 || name[0] != '/')
            continue;
        uint64_t h = sc_hash64(name, nl);
        int added;
        uint32_t *v = sc_map64_upsert(&d->bidx, h, d->nbids, &added);
        if (!v || (added &&
                   sc_grow_array(&d->bids, &d->capbids, (uint64_t)d->nbids + 1, sizeof *d->bids)))
            return oom(d);
        if (!added)
            continue; /* (a hash shared by two names: the first keeps it) */
        struct bid *bd = &d->bids[d->nbids++];
        memset(bd, 0, sizeof *bd);
        bd->path = name;
        bd->len = (uint32_t)nl;
        memcpy(bd->id, id, idlen);
        bd->idlen = idlen;
    }
    return 0;
}

static int read_features(struct dec *d, uint64_t data_end)
{
    uint64_t at = data_end;
    for (int bit = 0; bit < 256; bit++) {
        uint64_t word = sc_rd64(d->buf + 72 + (size_t)(bit / 64) * 8);
        if (!(word >> (bit % 64) & 1))
            continue;
        if (at > d->n || d->n - at < 16)
            return 0; /* no table: names and build ids are then unknown, as for perf */
        uint64_t off = sc_rd64(d->buf + at), size = sc_rd64(d->buf + at + 8);
        at += 16;
        if (off > d->n || size > d->n - off)
            continue;
        if (bit == FEAT_EVENT_DESC)
            event_desc(d, off, size);
        else if (bit == FEAT_BUILD_ID) {
            int rc = build_ids(d, off, size);
            if (rc)
                return rc;
        }
    }
    return 0;
}

/* ---- records ---- */

/* Where the time is in a non-sample record with sample_id_all: after pid/tid, from the end
 * (identifier, cpu, stream_id, id follow it). -1 when it has none. */
static int64_t id_time(const struct dec *d, const uint8_t *r, size_t rs)
{
    if (!d->id_all)
        return -1;
    const struct attr *a = &d->attrs[0];
    if (d->nattrs > 1 && (a->sample_type & S_IDENTIFIER) && rs >= 16) {
        uint32_t *v = sc_map64_get(&d->ids, sc_rd64(r + rs - 8));
        if (v)
            a = &d->attrs[*v];
    }
    uint64_t t = a->sample_type;
    if (!(t & S_TIME))
        return -1;
    size_t back =
        8 + 8 * (size_t)(!!(t & S_ID) + !!(t & S_STREAM_ID) + !!(t & S_CPU) + !!(t & S_IDENTIFIER));
    if (rs < 8 + back)
        return -1;
    return (int64_t)sc_rd64(r + rs - back);
}

/* The attr of a sample. */
static const struct attr *sample_attr(const struct dec *d, const uint8_t *r, size_t rs,
                                      uint32_t *idx)
{
    *idx = 0;
    if (d->nattrs == 1)
        return &d->attrs[0];
    const struct attr *a0 = &d->attrs[0];
    uint64_t id;
    if (a0->sample_type & S_IDENTIFIER) {
        if (rs < 16)
            return NULL;
        id = sc_rd64(r + 8);
    } else if (a0->sample_type & S_ID) {
        /* ID after IP, TID, TIME, ADDR (perf needs them alike in all events then) */
        uint64_t t = a0->sample_type;
        size_t at =
            8 + 8 * (size_t)(!!(t & S_IP) + !!(t & S_TID) + !!(t & S_TIME) + !!(t & S_ADDR));
        if (rs < at + 8)
            return NULL;
        id = sc_rd64(r + at);
    } else {
        return a0;
    }
    uint32_t *v = sc_map64_get(&d->ids, id);
    if (!v)
        return NULL;
    *idx = *v;
    return &d->attrs[*v];
}

static int cmp_rec(const void *a, const void *b)
{
    const struct rec *x = a, *y = b;
    if (x->time != y->time)
        return x->time < y->time ? -1 : 1;
    return x->off < y->off ? -1 : x->off > y->off;
}

/* By time; the records come in file order, and the sort is stable: ties stay so. */
#define REC_TIME(e) ((uint64_t)(e).time)
SC_RADIX_SORT(sort_recs, struct rec, REC_TIME)

/* The records worth replaying, in the order perf script delivers them. */
static int collect(struct dec *d, uint64_t off, uint64_t size, struct rec **out, uint64_t *nout)
{
    uint64_t n = 0, end = off + size;
    uint32_t cap = 0;
    struct rec *v = NULL;
    int64_t last = 0;
    int rc = 0;
    for (uint64_t at = off, i = 0; at < end; i++) {
        if ((rc = sc_budget_poll_every(i, d->err)) != 0)
            break;
        if (end - at < 8) {
            rc = sc_errf(d->err, SC_EFORMAT,
                         "perf.data: a record at offset %llu is cut off (truncated file?)",
                         (unsigned long long)at);
            break;
        }
        const uint8_t *r = d->buf + at;
        uint32_t type = sc_rd32(r);
        size_t rs = sc_rd32(r + 4) >> 16;
        if (rs < 8 || rs > end - at) {
            rc = sc_errf(d->err, SC_EFORMAT, "perf.data: the record at offset %llu (%zu bytes) %s",
                         (unsigned long long)at, rs,
                         rs < 8 ? "is too short" : "runs past the data section (truncated file?)");
            break;
        }
        d->st->records++;
        if (type == R_LOST)
            d->st->lost++;
        if (type == R_SAMPLE || type == R_MMAP || type == R_MMAP2 || type == R_COMM ||
            type == R_FORK || type == R_EXIT) {
            int64_t t = -1;
            if (type == R_SAMPLE) {
                uint32_t ai;
                const struct attr *a = sample_attr(d, r, rs, &ai);
                if (a && (a->sample_type & S_TIME)) {
                    size_t k =
                        8 + 8 * (size_t)(!!(a->sample_type & S_IDENTIFIER) +
                                         !!(a->sample_type & S_IP) + !!(a->sample_type & S_TID));
                    if (rs >= k + 8)
                        t = (int64_t)sc_rd64(r + k);
                }
            } else if (type == R_FORK || type == R_EXIT) {
                t = rs >= 32 ? (int64_t)sc_rd64(r + 24) : -1;
            } else {
                t = id_time(d, r, rs);
            }
            /* a record without a time goes where it is among its neighbours */
            if (t < 0)
                t = last;
            last = t;
            d->nsample_recs += type == R_SAMPLE;
            if ((rc = sc_grow_array(&v, &cap, n + 1, sizeof *v)) != 0) {
                rc = rc == SC_ENOMEM ? oom(d)
                                     : sc_errf(d->err, rc, "perf.data: more than 2^31 records");
                break;
            }
            v[n++] = (struct rec){t, at};
        }
        at += rs;
    }
    if (rc) {
        free(v);
        return rc;
    }
    if (n > UINT32_MAX || (n && sort_recs(v, (uint32_t)n)))
        qsort(v, (size_t)n, sizeof *v, cmp_rec); /* (no memory for the radix sort's copy) */
    *out = v;
    *nout = n;
    return 0;
}

/* ---- threads and maps ---- */

static struct proc *proc_get(struct dec *d, int32_t pid)
{
    int added;
    uint32_t *v = sc_map64_upsert(&d->procs, (uint32_t)pid, d->npv, &added);
    if (!v)
        return NULL;
    if (!added)
        return &d->pv[*v];
    if (sc_grow_array(&d->pv, &d->cappv, (uint64_t)d->npv + 1, sizeof *d->pv))
        return NULL;
    memset(&d->pv[d->npv], 0, sizeof d->pv[0]);
    return &d->pv[d->npv++];
}

static struct thread *thread_get(struct dec *d, int32_t pid, int32_t tid)
{
    int added;
    uint32_t *v = sc_map64_upsert(&d->threads, (uint32_t)tid, d->ntv, &added);
    if (!v)
        return NULL;
    if (!added) {
        struct thread *t = &d->tv[*v];
        if (t->pid != pid && pid != -1)
            t->pid = pid;
        return t;
    }
    if (sc_grow_array(&d->tv, &d->captv, (uint64_t)d->ntv + 1, sizeof *d->tv))
        return NULL;
    struct thread *t = &d->tv[d->ntv++];
    memset(t, 0, sizeof *t);
    t->pid = pid;
    t->tid = tid;
    return t;
}

static int set_comm(struct dec *d, struct thread *t, const char *s, size_t n)
{
    int64_t c = sc_profile_intern(d->p, s, n);
    if (c < 0)
        return oom(d);
    t->comm = (uint32_t)c;
    t->has_comm = 1;
    t->java = n >= 4 && !memcmp(s, "java", 4);
    t->pframe = 0;
    return 0;
}

/* perf's comm of a thread it saw no COMM of: "swapper" for the idle task, else ":TID". */
static int default_comm(struct dec *d, struct thread *t)
{
    char b[32];
    int k = t->tid == 0 ? snprintf(b, sizeof b, "swapper") : snprintf(b, sizeof b, ":%d", t->tid);
    int rc = set_comm(d, t, b, (size_t)k);
    t->has_comm = 0;
    return rc;
}

/* Puts m into p's maps (cutting what it overlaps); a change of the maps is a new gen. */
static int insert_map(struct proc *p, const struct sc_procmap *m)
{
    if (m->end <= m->start)
        return 0;
    p->gen++;
    return sc_procmaps_insert(&p->maps, &p->nmaps, &p->cap, m);
}

static const struct sc_procmap *find_map(const struct proc *p, uint64_t ip)
{
    return p ? sc_procmaps_find(p->maps, p->nmaps, ip) : NULL;
}

static int is_anon(const char *s, size_t n)
{
    return (n == 6 && !memcmp(s, "//anon", 6)) || (n >= 9 && !memcmp(s, "/dev/zero", 9)) ||
           (n >= 14 && !memcmp(s, "/anon_hugepage", 14));
}

static int sym_ready(struct dec *d)
{
    if (d->sym || d->sym_failed)
        return d->sym != NULL;
    struct sc_symbolizer_opts so;
    memset(&so, 0, sizeof so);
    so.no_dwarf = !d->want_dwarf;
    so.perf_names = 1;
    so.one_shot = 1;      /* (resolve_all asks once per DSO) */
    so.no_debuginfod = 1; /* no fetch from the network in a file's decoding */
    so.kallsyms = d->o->kallsyms;
    char err[SC_ERR_LEN];
    if (sc_symbolizer_new(&so, &d->sym, err)) {
        d->sym = NULL;
        d->sym_failed = 1;
    }
    return d->sym != NULL;
}

/* Whether the recording names the build of path. */
static int recorded_build(struct dec *d, const char *path, size_t len)
{
    uint32_t *v = sc_map64_get(&d->bidx, sc_hash64(path, len));
    return v && d->bids[*v].len == len && !memcmp(d->bids[*v].path, path, len);
}

/* The file to read a mapped binary's symbols from: the binary itself when it is the build
 * the recording names (or none is named); else the copy `perf record` put in its build-id
 * cache (~/.debug/.build-id/xx/yyyy/elf), as perf script reads it; NULL when neither is
 * there (the binary is gone: its frames are addresses, as perf script's). *len its length;
 * cache paths live in the arena. */
static const char *binary_of(struct dec *d, const char *path, size_t *len)
{
    uint32_t *v = sc_map64_get(&d->bidx, sc_hash64(path, *len));
    if (!v)
        return path;
    struct bid *b = &d->bids[*v];
    if (b->len != *len || memcmp(b->path, path, *len))
        return path;
    if (!b->verdict) {
        char p[4200];
        snprintf(p, sizeof p, "%.*s", (int)*len, path);
        int fd = open(p, O_RDONLY | O_CLOEXEC);
        uint8_t id[20];
        uint32_t k = fd >= 0 ? sc_elf_build_id(fd, id) : 0;
        if (fd >= 0)
            close(fd);
        b->verdict = fd >= 0 && k == b->idlen && !memcmp(id, b->id, k) ? 1 : -1;
        const char *home = getenv("HOME");
        if (b->verdict < 0 && home && *home && b->idlen >= 2) {
            char hex[41];
            for (uint32_t i = 0; i < b->idlen; i++)
                snprintf(hex + 2 * (size_t)i, 3, "%02x", b->id[i]);
            int n = snprintf(p, sizeof p, "%s/.debug/.build-id/%.2s/%s/elf", home, hex, hex + 2);
            struct stat st;
            if (n > 0 && (size_t)n < sizeof p && stat(p, &st) == 0 && S_ISREG(st.st_mode)) {
                b->cache = sc_arena_strndup(&d->arena, p, (size_t)n);
                b->cache_len = (uint32_t)n;
            }
        }
    }
    if (b->verdict > 0)
        return path;
    *len = b->cache_len;
    return b->cache;
}

struct path_ctx {
    const struct dec *d;
    const char *s;
    size_t n;
};

static int path_eq(void *ctx, uint32_t i)
{
    const struct path_ctx *c = ctx;
    const char *p = c->d->paths[i];
    return !strncmp(p, c->s, c->n) && p[c->n] == 0;
}

/* A mapping's path, one copy of each: the maps of all processes of one binary share it,
 * and so do the keys of its addresses (name_addr), whichever process they were met in. */
static const char *path_of(struct dec *d, const char *s, size_t n)
{
    struct path_ctx c = {d, s, n};
    int added;
    uint32_t *v = sc_map64_intern(&d->pathidx, sc_hash64(s, n), d->npaths, path_eq, &c, &added);
    if (!v)
        return NULL;
    if (!added)
        return d->paths[*v];
    char *p = sc_arena_strndup(&d->arena, s, n);
    /* NOLINTNEXTLINE(bugprone-sizeof-expression): an array of pointers */
    if (!p || sc_grow_array(&d->paths, &d->cappaths, (uint64_t)d->npaths + 1, sizeof *d->paths))
        return NULL;
    d->paths[d->npaths++] = p;
    return p;
}

static int on_mmap(struct dec *d, const uint8_t *r, size_t rs, int v2)
{
    uint16_t misc = (uint16_t)(sc_rd32(r + 4) & 0xffff);
    size_t fixed = v2 ? 72 : 40;
    if (rs < fixed + 1)
        return 0;
    int mode = misc & MISC_CPUMODE;
    if (mode != MODE_USER || (misc & MISC_MMAP_DATA))
        return 0; /* the kernel's and its modules' maps: kallsyms names them */
    if (v2 && !(sc_rd32(r + 64) & 4 /* PROT_EXEC */))
        return 0;
    int32_t pid = (int32_t)sc_rd32(r + 8);
    uint64_t start = sc_rd64(r + 16), len = sc_rd64(r + 24), pgoff = sc_rd64(r + 32);
    uint64_t dev = 0, ino = 0;
    if (v2 && !(misc & MISC_MMAP_BUILD_ID)) {
        dev = (uint64_t)sc_rd32(r + 40) << 32 | sc_rd32(r + 44);
        ino = sc_rd64(r + 48);
    }
    const char *fn = (const char *)r + fixed;
    size_t fl = strnlen(fn, rs - fixed);
    struct proc *p = proc_get(d, pid);
    if (!p)
        return oom(d);
    struct sc_procmap m = {start, start + len, pgoff, SC_DSO_ID_UNKNOWN, 0, NULL, 0};
    if (len == 0 || start + len < start)
        return 0;
    char anon[40];
    const char *path = fn;
    size_t plen = fl;
    if (is_anon(fn, fl)) {
        plen = (size_t)snprintf(anon, sizeof anon, "/tmp/perf-%d.map", (int)pid);
        path = anon;
        m.jit = 1;
        m.pgoff = start;
    }
    m.path = path_of(d, path, plen);
    m.path_len = (uint32_t)plen;
    if (!m.path)
        return oom(d);
    if (!d->o->no_local_files && sym_ready(d)) {
        size_t sl = fl;
        if (sl > 10 && !memcmp(fn + sl - 10, " (deleted)", 10))
            sl -= 10;
        /* (a memfd is no file perf can open: unnamed as for perf) */
        int memfd = fl >= 7 && !memcmp(fn, "/memfd:", 7);
        const char *bin = fn;
        size_t bl = sl;
        if (!memfd && !m.jit && !(fl && fn[0] == '['))
            bin = binary_of(d, fn, &bl);
        if (bin != fn || (bin && recorded_build(d, fn, sl)))
            dev = ino = 0; /* the build id says which file, as for perf: not the inode */
        if (!memfd && bin) {
            int64_t dso =
                sc_symbolizer_dso(d->sym, m.jit ? "" : bin, m.jit ? 0 : bl, dev, ino, pid);
            if (dso >= 0)
                m.dso = (uint32_t)dso;
        }
    }
    if (p->nmaps >= MAX_PROC_MAPS || d->nmaps >= MAX_MAPS)
        return sc_errf(d->err, SC_ELIMIT, "perf.data: more than %u mappings (process %d: %u)",
                       MAX_MAPS, (int)pid, p->nmaps);
    uint32_t before = p->nmaps;
    if (insert_map(p, &m))
        return oom(d);
    d->nmaps += p->nmaps - before;
    return 0;
}

static int on_comm(struct dec *d, const uint8_t *r, size_t rs)
{
    if (rs < 17)
        return 0;
    int32_t pid = (int32_t)sc_rd32(r + 8), tid = (int32_t)sc_rd32(r + 12);
    const char *c = (const char *)r + 16;
    struct thread *t = thread_get(d, pid, tid);
    if (!t)
        return oom(d);
    return set_comm(d, t, c, strnlen(c, rs - 16));
}

static int on_fork(struct dec *d, const uint8_t *r, size_t rs)
{
    if (rs < 32)
        return 0;
    int32_t pid = (int32_t)sc_rd32(r + 8), ppid = (int32_t)sc_rd32(r + 12);
    int32_t tid = (int32_t)sc_rd32(r + 16), ptid = (int32_t)sc_rd32(r + 20);
    struct thread *parent = thread_get(d, ppid, ptid);
    if (!parent)
        return oom(d);
    int has = parent->has_comm;
    uint32_t comm = parent->comm;
    int java = parent->java;
    struct thread *t = thread_get(d, pid, tid); /* (may move parent) */
    if (!t)
        return oom(d);
    t->pid = pid;
    t->pframe = 0;
    t->has_comm = has;
    t->comm = has ? comm : 0;
    t->java = has ? java : 0;
    if (!has && default_comm(d, t))
        return SC_ENOMEM;
    if (pid != ppid) {
        /* a new process: a copy of its parent's maps */
        struct proc *pp = proc_get(d, ppid);
        if (!pp)
            return oom(d);
        uint32_t pi = (uint32_t)(pp - d->pv);
        struct proc *c = proc_get(d, pid); /* (may move pp) */
        if (!c)
            return oom(d);
        pp = &d->pv[pi];
        if (c == pp)
            return 0;
        d->nmaps -= c->nmaps;
        c->nmaps = 0;
        if (d->nmaps + pp->nmaps >= MAX_MAPS)
            return sc_errf(d->err, SC_ELIMIT, "perf.data: more than %u mappings (forks of %d)",
                           MAX_MAPS, (int)ppid);
        d->nmaps += pp->nmaps;
        if (pp->nmaps) {
            if (sc_grow_array(&c->maps, &c->cap, pp->nmaps, sizeof *c->maps))
                return oom(d);
            memcpy(c->maps, pp->maps, (size_t)pp->nmaps * sizeof *c->maps);
            c->nmaps = pp->nmaps;
        }
        c->gen++;
    }
    return 0;
}

/* ---- naming frames ---- */

/* The profile string of a frame, checked against the limits. */
static int str_of(struct dec *d, const char *s, size_t n, uint32_t *out)
{
    int rc = sc_limits_string(d->lim, n, "a frame", d->err);
    if (rc)
        return rc;
    int64_t g = sc_profile_intern(d->p, s, n);
    if (g < 0)
        return oom(d);
    if (d->p->strings.n > d->lim->max_strings)
        return sc_errf(d->err, SC_ELIMIT, "more than %u strings (limits.max_strings)",
                       (unsigned)d->lim->max_strings);
    *out = (uint32_t)g;
    return 0;
}

/* The location of a frame's string: one function and one location per distinct frame, as
 * the perf script decoder makes them, in the order samples meet them. */
static int loc_of(struct dec *d, uint32_t str, uint32_t *out)
{
    int added;
    uint32_t *v = sc_map64_upsert(&d->loc_of_str, str, 0, &added);
    if (!v)
        return oom(d);
    if (added) {
        if (d->p->nlocations >= d->lim->max_locations || d->p->nfunctions >= d->lim->max_functions)
            return sc_errf(d->err, SC_ELIMIT, "more than %u distinct frames",
                           (unsigned)d->lim->max_locations);
        int64_t fn = sc_profile_add_function(d->p, str, 0);
        int64_t li = fn < 0 ? fn : sc_profile_add_simple_location(d->p, (uint32_t)fn);
        if (li < 0)
            return oom(d);
        v = sc_map64_get(&d->loc_of_str, str);
        *v = (uint32_t)li + 1;
    }
    *out = *v - 1;
    return 0;
}

static int scratch(struct dec *d, size_t need)
{
    if (need <= d->capscratch)
        return 0;
    return sc_grow_array(&d->scratch, &d->capscratch, need, 1) ? oom(d) : 0;
}

struct piece_ctx {
    struct dec *d;
    uint32_t first;
};

static int add_piece(void *ctx, const char *s, size_t n, int copy)
{
    (void)copy;
    struct dec *d = ((struct piece_ctx *)ctx)->d;
    uint32_t str;
    int rc = str_of(d, s, n, &str);
    if (rc)
        return rc;
    if (sc_grow_array(&d->frs, &d->capfrs, (uint64_t)d->nfrs + 1, sizeof *d->frs))
        return oom(d);
    d->frs[d->nfrs++] = str;
    return 0;
}

/* Appends the frames of the line perf script prints for a frame, "pc sym+0x0 (dso)" (no
 * offset for [unknown]), to frs: read by the same code as perf script's text, with its
 * quirks (a dso with " (" in its name, as memfd's " (deleted)", moves the split). */
static int add_line(struct dec *d, const char *pc, size_t pcn, const char *sym, size_t symn,
                    const char *dso, size_t dson, int java)
{
    size_t n = pcn + symn + dson + 16;
    int rc = scratch(d, 3 * (n + 16));
    if (rc)
        return rc;
    char *line = d->scratch + 2 * (n + 16);
    int known = !(symn == 9 && !memcmp(sym, "[unknown]", 9));
    n = (size_t)snprintf(line, n + 16, "\t%.*s %.*s%s (%.*s)", (int)pcn, pc, (int)symn, sym,
                         known ? "+0x0" : "", (int)dson, dso);
    struct piece_ctx c = {d, d->nfrs};
    rc = sc_perf_line_frames(d->po, java, line, n, d->scratch, add_piece, &c);
    if (rc)
        return rc;
    /* "a->b": b nearer the leaf */
    for (uint32_t lo = c.first, hi = d->nfrs ? d->nfrs - 1 : 0; lo < hi; lo++, hi--) {
        uint32_t t = d->frs[lo];
        d->frs[lo] = d->frs[hi];
        d->frs[hi] = t;
    }
    return 0;
}

struct name_ctx {
    struct dec *d;
    const struct symkey *k; /* the key looked up */
};

/* Frames of an address no symbol names: perf script's "[unknown] (dso)". */
static int unknown_frames(struct dec *d, struct symkey *k)
{
    char pc[24];
    size_t pcn = (size_t)snprintf(pc, sizeof pc, "%llx", (unsigned long long)k->pc);
    k->off = d->nfrs;
    int rc = add_line(d, pc, pcn, "[unknown]", 9, k->path, strlen(k->path), k->java);
    k->n = d->nfrs - k->off;
    k->resolved = 1;
    return rc;
}

/* What the symbolizer said of one address, as the frames perf script prints for it: a
 * byte "found", a byte the count of frames, then each frame's name as a u32 length and its
 * bytes, innermost first (only the outermost, the function, unless the key asks for inlined
 * frames). Written on the namer's thread, read on the decoding's (named_frames). */
_Static_assert(SC_ELF_MAX_FRAMES <= 255, "put_sym counts frames in a byte");
static void put_sym(struct sc_buf *b, int inl, const struct sc_sym *s)
{
    uint32_t k0 = !s->found ? s->nframes : inl ? 0 : s->nframes - 1;
    uint8_t head[2] = {(uint8_t) !!s->found, (uint8_t)(s->nframes - k0)};
    sc_buf_append(b, head, 2);
    for (uint32_t f = k0; f < s->nframes; f++) {
        const struct sc_sym_frame *fr = &s->frames[f];
        /* perf demangles C++ without parameters, and so without a template's return type */
        char *own = NULL;
        const char *nm = fr->name;
        size_t nl = fr->name_len;
        if (fr->system_name_len > 2 && fr->system_name[0] == '_' && fr->system_name[1] == 'Z' &&
            fr->system_name[fr->system_name_len] == 0 &&
            (own = cplus_demangle(fr->system_name, DMGL_NO_OPTS)) != NULL) {
            nm = own;
            nl = strlen(own);
        }
        uint32_t len = (uint32_t)nl;
        sc_buf_append(b, &len, 4);
        sc_buf_append(b, nm, nl);
        free(own);
    }
}

/* What put_sym writes of an address no symbol names. */
static const uint8_t unnamed[2] = {0, 0};

/* The length of what put_sym wrote at r. */
static size_t sym_len(const uint8_t *r)
{
    size_t at = 2;
    for (uint32_t f = 0; f < r[1]; f++) {
        uint32_t nl;
        memcpy(&nl, r + at, 4);
        at += 4 + (size_t)nl;
    }
    return at;
}

struct same_ctx {
    const struct dec *d;
    const struct symkey *k;
    const uint8_t *r;
    size_t len;
};

static int same_frames(void *ctx, uint32_t i)
{
    const struct same_ctx *c = ctx;
    const struct symkey *e = &c->d->syms[i], *k = c->k;
    return e->path == k->path && e->pc == k->pc && e->java == k->java && e->said_len == c->len &&
           !memcmp(e->said, c->r, c->len);
}

/* Key k's frames from what put_sym wrote at r (kept until naming ends). Keys that print the
 * same lines (addresses of one function, pc not printed) share the frames of the first. */
static int named_frames(struct dec *d, struct symkey *k, const uint8_t *r)
{
    size_t len = sym_len(r);
    uint64_t h = sc_hash_combine(sc_hash64(r, len), (uint64_t)(uintptr_t)k->path);
    h = sc_hash_combine(h, k->pc << 1 | k->java);
    struct same_ctx c = {d, k, r, len};
    int added;
    uint32_t *v = sc_map64_intern(&d->sameidx, h, (uint32_t)(k - d->syms), same_frames, &c, &added);
    if (!v)
        return oom(d);
    if (!added) {
        k->off = d->syms[*v].off;
        k->n = d->syms[*v].n;
        k->resolved = 1;
        return 0;
    }
    k->said = r;
    k->said_len = (uint32_t)len;
    if (!r[0])
        return unknown_frames(d, k);
    uint32_t nf = r[1];
    r += 2;
    char pc[24];
    size_t pcn = (size_t)snprintf(pc, sizeof pc, "%llx", (unsigned long long)k->pc);
    size_t pl = strlen(k->path);
    int rc = 0;
    k->off = d->nfrs;
    for (uint32_t f = 0; f < nf; f++) {
        uint32_t nl;
        memcpy(&nl, r, 4);
        const char *nm = (const char *)r + 4;
        r += 4 + (size_t)nl;
        int outer = f == nf - 1;
        if (!rc)
            rc = add_line(d, pc, pcn, nm, nl, outer ? k->path : "inlined", outer ? pl : 7, k->java);
    }
    k->n = d->nfrs - k->off;
    k->resolved = 1;
    return rc;
}

static int sym_eq(void *ctx, uint32_t i)
{
    const struct dec *d = ((const struct name_ctx *)ctx)->d;
    const struct symkey *k = ((const struct name_ctx *)ctx)->k, *e = &d->syms[i];
    return i < d->nsyms && e->addr == k->addr && e->pc == k->pc && e->dso == k->dso &&
           e->inl == k->inl && e->java == k->java && e->path == k->path;
}

/* Adds key si to the sample being read. */
static int push_key(struct dec *d, uint32_t si)
{
    if (d->nkpool - d->ps_koff + 2 >= d->lim->max_stack_depth)
        return sc_errf(d->err, SC_ELIMIT,
                       "stack deeper than the limit of %u frames (limits.max_stack_depth)",
                       (unsigned)d->lim->max_stack_depth);
    if (sc_grow_array(&d->kpool, &d->capkpool, (uint64_t)d->nkpool + 1, sizeof *d->kpool))
        return oom(d);
    d->kpool[d->nkpool++] = si;
    return 0;
}

/* The key of one address (*si): a map's dso and the address in it (file offset, or
 * absolute for the kernel and JIT code), pc what perf script prints. */
static int name_addr(struct dec *d, uint32_t dso, uint64_t addr, uint64_t pc, const char *path,
                     int inl, int java, uint32_t *si)
{
    struct symkey k;
    memset(&k, 0, sizeof k);
    k.addr = addr;
    k.pc = d->po->addrs ? pc : 0;
    k.path = path;
    k.dso = dso;
    k.inl = (uint8_t)inl;
    k.java = (uint8_t)java;
    struct name_ctx c = {d, &k};
    const uint64_t id[4] = {addr, k.pc, (uint64_t)dso << 2 | (uint64_t)inl << 1 | (uint64_t)java,
                            (uint64_t)(uintptr_t)path};
    uint64_t h = sc_hash64(id, sizeof id);
    int added;
    uint32_t *v = sc_map64_intern(&d->symidx, h, d->nsyms, sym_eq, &c, &added);
    if (!v)
        return oom(d);
    *si = *v;
    if (added) {
        if (sc_grow_array(&d->syms, &d->capsyms, (uint64_t)d->nsyms + 1, sizeof *d->syms))
            return oom(d);
        d->syms[d->nsyms++] = k;
    }
    return 0;
}

static const char kernel_path[] = "[kernel.kallsyms]";
static const char unknown_path[] = "[unknown]";

/* The key of one address of a chain in a cpumode (MODE_KERNEL, MODE_USER, else unknown). */
static int ip_key(struct dec *d, const struct proc *p, int mode, uint64_t ip, int chain, int inl,
                  int java, uint32_t *si)
{
    if (mode == MODE_KERNEL) {
        int local = !d->o->no_local_files;
        return name_addr(d, local ? SC_DSO_ID_KERNEL : SC_DSO_ID_UNKNOWN, ip, ip, kernel_path, 0,
                         java, si);
    }
    /* (a chain's addresses are often in the map of the one before: the sample's maps do
     * not change while it is read) */
    const struct sc_procmap *m = NULL;
    if (mode == MODE_USER) {
        m = d->last_map && ip >= d->last_map->start && ip < d->last_map->end ? d->last_map
                                                                             : find_map(p, ip);
        d->last_map = m;
    }
    if (!m)
        return name_addr(d, SC_DSO_ID_UNKNOWN, ip, ip, unknown_path, 0, java, si);
    uint64_t off = m->jit ? ip : ip - m->start + m->pgoff;
    /* perf script prints a chain's addresses relative to their map, a lone ip as it is */
    return name_addr(d, m->dso, off, chain && !m->jit ? off : ip, m->path, inl, java, si);
}

/* One address of a chain into the sample being read. Its key is looked up first in a
 * small cache of the keys addresses gave lately (system-wide, three samples in four have a
 * stack not met before, whose addresses mostly were): an address of a process at its
 * maps' gen (any process's, for the kernel's) gives the same key. */
static int name_ip(struct dec *d, const struct proc *p, int mode, uint64_t ip, int chain, int inl,
                   int java)
{
    uint32_t proc = mode == MODE_USER && p ? (uint32_t)(p - d->pv) + 1 : 0;
    uint32_t gen = proc ? p->gen : 0;
    uint32_t flags =
        (uint32_t)mode | (uint32_t)chain << 4 | (uint32_t)inl << 5 | (uint32_t)java << 6;
    struct ipcache *e = NULL;
    if (d->ipc) { /* (NULL: no memory for it, and no cache) */
        e = &d->ipc[(sc_mix64(ip) ^ proc) & (IPCACHE - 1)];
        if (e->si1 && e->ip == ip && e->proc == proc && e->gen == gen && e->flags == flags)
            return push_key(d, e->si1 - 1);
    }
    uint32_t si;
    int rc = ip_key(d, p, mode, ip, chain, inl, java, &si);
    if (rc)
        return rc;
    if (e)
        *e = (struct ipcache){ip, proc, gen, flags, si + 1};
    return push_key(d, si);
}

/* ---- unwinding ---- */

struct walk {
    struct dec *d;
    const struct proc *p;
};

static int walk_find(void *ctx, uint64_t pc, const struct sc_unwind_table **t, uint64_t *off)
{
    struct walk *w = ctx;
    const struct sc_procmap *m = find_map(w->p, pc);
    if (!m)
        return 0;
    *off = m->jit ? pc : pc - m->start + m->pgoff;
    *t = m->jit || m->dso == SC_DSO_ID_UNKNOWN || !w->d->uw
             ? NULL
             : sc_unwind_cache_get(w->d->uw, w->d->sym, m->dso);
    return 1;
}

/* This machine's registers in a sample: where pc, sp and fp are among those the mask
 * selects. 0 when the mask lacks one. */
static int reg_index(uint64_t mask, unsigned bit, uint32_t *idx)
{
    if (bit >= 64 || !(mask >> bit & 1))
        return 0;
    *idx = (uint32_t)__builtin_popcountll(mask & ((1ull << bit) - 1));
    return 1;
}

static int unwind_user(struct dec *d, const struct attr *a, const struct proc *p,
                       const uint8_t *regs, size_t nregs, const uint8_t *stack, size_t slen,
                       int java)
{
#if defined(__x86_64__)
    enum sc_uw_arch arch = SC_UW_ARCH_X86_64;
    const unsigned bpc = 8, bsp = 7, bfp = 6, blr = 64;
#elif defined(__aarch64__)
    enum sc_uw_arch arch = SC_UW_ARCH_AARCH64;
    const unsigned bpc = 32, bsp = 31, bfp = 29, blr = 30;
#else
    return 0;
#endif
    uint32_t ipc, isp, ifp, ilr;
    if (!reg_index(a->regs_user, bpc, &ipc) || !reg_index(a->regs_user, bsp, &isp) ||
        !reg_index(a->regs_user, bfp, &ifp) || ipc >= nregs || isp >= nregs || ifp >= nregs)
        return 0;
    struct sc_unwind_regs r = {sc_rd64(regs + 8 * (size_t)ipc), sc_rd64(regs + 8 * (size_t)isp),
                               sc_rd64(regs + 8 * (size_t)ifp), 0};
    if (reg_index(a->regs_user, blr, &ilr) && ilr < nregs)
        r.lr = sc_rd64(regs + 8 * (size_t)ilr);
    if (!d->uw && !d->o->no_local_files && sym_ready(d)) {
        char err[SC_ERR_LEN];
        if (sc_unwind_cache_new(0, NULL, &d->uw, err))
            d->uw = NULL;
    }
    struct walk w = {d, p};
    struct sc_unwind_result res;
    /* (perf's unwinder takes the copy's last word for outside it too: a read must end
     * before the copy's end, not at it) */
    sc_unwind_stack(arch, &r, stack, slen - 1, walk_find, &w, d->pcs, MAX_STACK, &res);
    d->st->unwound++;
    for (uint32_t i = 0; i < res.n; i++) {
        /* callers are named at their call, as perf's unwinder reports them */
        uint64_t ip = i ? d->pcs[i] - 1 : d->pcs[i];
        int rc = name_ip(d, p, MODE_USER, ip, 1, 1, java);
        if (rc)
            return rc;
    }
    /* perf's unwinder reads memory past the stack's copy as zero: a walk cut there gets one
     * more frame, return address 0, named at its call (0 - 1), "[unknown] ([unknown])" */
    if (res.stop == SC_UNWIND_STACK_END && res.n && res.n < MAX_STACK)
        return name_ip(d, p, MODE_USER, (uint64_t)-1, 1, 1, java);
    return 0;
}

/* ---- samples ---- */

struct fields {
    uint64_t ip, period, time;
    int32_t pid, tid;
    const uint8_t *chain; /* nr ips */
    uint64_t nr;
    const uint8_t *regs; /* NULL: none */
    size_t nregs;
    const uint8_t *stack;
    size_t stack_len;
};

/* The fields of a sample, as a's sample_type lays them out; 0, or 1 when the record is
 * too short for them. */
static int parse_sample(const struct attr *a, const uint8_t *r, size_t rs, struct fields *f)
{
    uint64_t t = a->sample_type;
    size_t at = 8;
    memset(f, 0, sizeof *f);
    f->pid = f->tid = -1;
#define NEED(k)                                                                                    \
    do {                                                                                           \
        if ((uint64_t)(k) > rs - at)                                                               \
            return 1;                                                                              \
    } while (0)
    if (t & S_IDENTIFIER) {
        NEED(8);
        at += 8;
    }
    if (t & S_IP) {
        NEED(8);
        f->ip = sc_rd64(r + at);
        at += 8;
    }
    if (t & S_TID) {
        NEED(8);
        f->pid = (int32_t)sc_rd32(r + at);
        f->tid = (int32_t)sc_rd32(r + at + 4);
        at += 8;
    }
    if (t & S_TIME) {
        NEED(8);
        f->time = sc_rd64(r + at);
        at += 8;
    }
    size_t skip = 8 * (size_t)(!!(t & S_ADDR) + !!(t & S_ID) + !!(t & S_STREAM_ID) + !!(t & S_CPU));
    NEED(skip);
    at += skip;
    f->period = 1;
    if (t & S_PERIOD) {
        NEED(8);
        f->period = sc_rd64(r + at);
        at += 8;
    }
    if (t & S_READ) {
        uint64_t rf = a->read_format;
        uint64_t per = 1 + !!(rf & F_ID) + !!(rf & F_LOST);
        uint64_t times = !!(rf & F_TOTAL_TIME_ENABLED) + !!(rf & F_TOTAL_TIME_RUNNING);
        if (rf & F_GROUP) {
            NEED(8);
            uint64_t nr = sc_rd64(r + at);
            if (nr > rs / 8)
                return 1;
            NEED(8 * (1 + times + nr * per));
            at += 8 * (size_t)(1 + times + nr * per);
        } else {
            NEED(8 * (per + times));
            at += 8 * (size_t)(per + times);
        }
    }
    if (t & S_CALLCHAIN) {
        NEED(8);
        f->nr = sc_rd64(r + at);
        at += 8;
        if (f->nr > (rs - at) / 8)
            return 1;
        f->chain = r + at;
        at += 8 * (size_t)f->nr;
    }
    if (t & S_RAW) {
        NEED(4);
        uint32_t k = sc_rd32(r + at);
        NEED(4 + (uint64_t)k);
        at += 4 + (size_t)k;
    }
    if (t & S_BRANCH_STACK) {
        NEED(8);
        uint64_t nr = sc_rd64(r + at);
        at += 8;
        if (a->branch_type & (1u << 17)) { /* PERF_SAMPLE_BRANCH_HW_INDEX */
            NEED(8);
            at += 8;
        }
        if (nr > rs / 24)
            return 1;
        NEED(24 * nr);
        at += 24 * (size_t)nr;
    }
    if (t & S_REGS_USER) {
        NEED(8);
        uint64_t abi = sc_rd64(r + at);
        at += 8;
        if (abi) {
            size_t nregs = (size_t)__builtin_popcountll(a->regs_user);
            NEED(8 * nregs);
            f->regs = r + at;
            f->nregs = nregs;
            at += 8 * nregs;
        }
    }
    if (t & S_STACK_USER) {
        NEED(8);
        uint64_t size = sc_rd64(r + at);
        at += 8;
        if (size) {
            NEED(size);
            f->stack = r + at;
            at += (size_t)size;
            NEED(8);
            uint64_t dyn = sc_rd64(r + at);
            f->stack_len = dyn < size ? (size_t)dyn : (size_t)size;
        }
    }
#undef NEED
    return 0;
}

/* The root frame: comm (comm-pid, comm-pid/tid with --pid, --tid), spaces made '_'. */
static int process_frame(struct dec *d, struct thread *t, uint32_t *str)
{
    if (t->pframe) {
        *str = t->pframe - 1;
        return 0;
    }
    struct sc_str c = sc_profile_str(d->p, t->comm);
    int rc = scratch(d, c.len + 48);
    if (rc)
        return rc;
    char *b = d->scratch;
    size_t k = 0;
    for (uint32_t i = 0; i < c.len; i++)
        b[k++] = c.ptr[i] == ' ' ? '_' : c.ptr[i];
    if (d->po->pid || d->po->tid) {
        if (t->pid >= 0 && t->pid != t->tid)
            k += (size_t)sprintf(b + k, "-%d", (int)t->pid);
        else
            k += (size_t)sprintf(b + k, "-?");
        if (d->po->tid)
            k += (size_t)sprintf(b + k, "/%d", (int)t->tid);
    }
    rc = str_of(d, b, k, str);
    if (rc)
        return rc;
    t->pframe = *str + 1;
    return 0;
}

/* The frames of a sample as keys: its call chain (markers say which addresses are the
 * kernel's), then the user stack walked, or its lone ip. */
static int sample_keys(struct dec *d, const struct attr *a, const uint8_t *r,
                       const struct fields *f, const struct proc *p, int java)
{
    int rc = 0;
    if (!(a->sample_type & S_CALLCHAIN)) {
        int mode = sc_rd32(r + 4) & MISC_CPUMODE;
        return name_ip(d, p, mode == MODE_KERNEL || mode == MODE_USER ? mode : 0, f->ip, 0, 0,
                       java);
    }
    int mode = MODE_USER;
    uint32_t kept = 0;
    for (uint64_t i = 0; i < f->nr && kept < MAX_STACK && !rc; i++) {
        uint64_t ip = sc_rd64(f->chain + 8 * i);
        if (ip < CONTEXT_MAX) {
            kept++;
            rc = name_ip(d, p, mode, ip, 1, 0, java);
        } else if (ip == CONTEXT_KERNEL || ip == CONTEXT_USER) {
            mode = ip == CONTEXT_KERNEL ? MODE_KERNEL : MODE_USER;
        } else if (ip == CONTEXT_HV || ip == CONTEXT_GUEST || ip == CONTEXT_GUEST_KERNEL ||
                   ip == CONTEXT_GUEST_USER) {
            mode = 0;
        } else {
            d->nkpool = d->ps_koff; /* perf takes the chain for corrupt and drops it all */
            break;
        }
    }
    /* (a stack of which nothing was copied, as in execve, whose registers are the old
     * image's: perf script walks nothing, and prints no user frame) */
    if (!rc && f->regs && f->stack && f->stack_len && (a->sample_type & S_STACK_USER))
        rc = unwind_user(d, a, p, f->regs, f->nregs, f->stack, f->stack_len, java);
    return rc;
}

struct stack_ctx {
    struct dec *d;
    const struct stack *k;
};

static int stack_eq(void *ctx, uint32_t i)
{
    const struct stack_ctx *c = ctx;
    if (i >= c->d->nstacks)
        return 0;
    const struct stack *e = &c->d->stacks[i], *k = c->k;
    return e->nr == k->nr && e->ip == k->ip && e->pid == k->pid && e->gen == k->gen &&
           e->mode == k->mode && e->java == k->java &&
           (k->nr == 0 || !memcmp(e->chain, k->chain, 8 * (size_t)k->nr));
}

static int on_sample(struct dec *d, const uint8_t *r, size_t rs)
{
    uint32_t ai;
    const struct attr *a = sample_attr(d, r, rs, &ai);
    if (!a)
        return 0; /* an id no attr has: perf skips it too */
    if (d->kept < 0 ? d->po->event && *d->po->event && strcmp(d->po->event, a->name)
                    : (uint32_t)d->kept != ai) {
        d->st->other_events++;
        return 0;
    }
    struct fields f;
    if (parse_sample(a, r, rs, &f))
        return sc_errf(d->err, SC_EFORMAT,
                       "perf.data: a sample at offset %zu is shorter than its fields",
                       (size_t)(r - d->buf));
    /* the period as the script sums it: 1 when absent or 0 */
    int64_t period = f.period && f.period <= INT64_MAX ? (int64_t)f.period : 1;
    if (d->kept < 0) {
        d->kept = (int)ai;
        int rc = sc_perf_sample_types(d->p, a->name, strlen(a->name), period, d->err);
        if (rc)
            return rc;
    }
    if (d->nps >= d->lim->max_samples)
        return sc_errf(d->err, SC_ELIMIT, "more than %u samples (limits.max_samples)",
                       (unsigned)d->lim->max_samples);
    /* a thread's and a process's index never change: the last sample's are kept (samples
     * of one thread come in runs) */
    struct thread *t;
    if (d->last_thread && d->tv[d->last_thread - 1].tid == f.tid &&
        d->tv[d->last_thread - 1].pid == f.pid) {
        t = &d->tv[d->last_thread - 1];
    } else {
        if (!(t = thread_get(d, f.pid, f.tid)))
            return oom(d);
        d->last_thread = (uint32_t)(t - d->tv) + 1;
    }
    if (!t->comm && default_comm(d, t))
        return SC_ENOMEM;
    const struct proc *p = NULL;
    if (d->last_proc && d->last_pid == f.pid) {
        p = &d->pv[d->last_proc - 1];
    } else {
        uint32_t *pv = sc_map64_get(&d->procs, (uint32_t)f.pid);
        if (pv) { /* (only one found: a process made later would be missed) */
            p = &d->pv[*pv];
            d->last_proc = *pv + 1;
            d->last_pid = f.pid;
        }
    }
    d->last_map = NULL;
    d->ps_koff = d->nkpool;
    uint32_t root, koff = d->nkpool, nk = 0;
    /* a walked user stack depends on the stack's bytes too: not cached */
    int cache = !(f.regs && f.stack && (a->sample_type & S_STACK_USER));
    struct stack key = {f.chain,
                        f.nr,
                        (a->sample_type & S_CALLCHAIN) ? 0 : f.ip,
                        f.pid,
                        p ? p->gen : 0,
                        (uint8_t)(sc_rd32(r + 4) & MISC_CPUMODE),
                        (uint8_t)t->java,
                        0,
                        0};
    uint32_t *slot = NULL;
    int rc = 0, added = 0;
    if (cache) {
        const uint64_t id[4] = {
            sc_hash64(f.chain ? f.chain : (const uint8_t *)"", 8 * (size_t)f.nr), key.ip,
            (uint64_t)(uint32_t)f.pid << 32 | key.gen, (uint64_t)key.mode << 8 | key.java};
        uint64_t h = sc_hash64(id, sizeof id);
        struct stack_ctx c = {d, &key};
        slot = sc_map64_intern(&d->stackidx, h, d->nstacks, stack_eq, &c, &added);
        if (!slot)
            return oom(d);
        if (!added) {
            koff = d->stacks[*slot].koff;
            nk = d->stacks[*slot].nk;
        }
    }
    if (!cache || added) {
        rc = sample_keys(d, a, r, &f, p, t->java);
        koff = d->ps_koff;
        nk = d->nkpool - d->ps_koff;
        if (!rc && added) {
            if (sc_grow_array(&d->stacks, &d->capstacks, (uint64_t)d->nstacks + 1,
                              sizeof *d->stacks))
                return oom(d);
            key.koff = koff;
            key.nk = nk;
            d->stacks[d->nstacks++] = key;
        }
    }
    if (!rc)
        rc = process_frame(d, t, &root);
    if (rc)
        return rc;
    if (sc_grow_array(&d->ps, &d->capps, (uint64_t)d->nps + 1, sizeof *d->ps))
        return oom(d);
    /* perf script prints microseconds */
    int64_t tns = f.time <= INT64_MAX ? (int64_t)(f.time / 1000 * 1000) : 0;
    d->ps[d->nps++] = (struct psample){koff, nk, root, t->comm, f.pid, f.tid, period, tns};
    d->st->samples++;
    return 0;
}

struct keyref {
    uint64_t addr;
    uint32_t dso, key;
};
#define REF_ADDR(e) ((e).addr)
#define REF_DSO(e) ((uint64_t)(e).dso)
SC_RADIX_SORT(sort_refs_by_addr, struct keyref, REF_ADDR)
SC_RADIX_SORT(sort_refs_by_dso, struct keyref, REF_DSO)

/* The keys order[0..n) by DSO, then address (stable sorts: by address, then by DSO). */
static int sort_keys(struct dec *d, uint32_t *order, uint32_t n)
{
    struct keyref *r = malloc((size_t)n * sizeof *r);
    if (!r)
        return oom(d);
    for (uint32_t i = 0; i < n; i++)
        r[i] = (struct keyref){d->syms[order[i]].addr, d->syms[order[i]].dso, order[i]};
    int rc = sort_refs_by_addr(r, n) || sort_refs_by_dso(r, n) ? oom(d) : 0;
    for (uint32_t i = 0; i < n && !rc; i++)
        order[i] = r[i].key;
    free(r);
    return rc;
}

static void no_sym(void *ctx, uint32_t i, const struct sc_sym *s)
{
    (void)ctx;
    (void)i;
    (void)s;
}

static void *kernel_load(void *arg)
{
    struct dec *d = arg;
    sc_budget_adopt(d->kbudget); /* its memory is the decoding's */
    if (sc_symbolizer_kernel_ahead(d->ksym, -1) == 0 || d->ksym_one_shot)
        return NULL; /* (a file that cannot be read ahead is read when named) */
    uint64_t addr = 0;
    sc_symbolizer_resolve(d->ksym, SC_DSO_ID_KERNEL, &addr, 1, no_sym, NULL);
    return NULL;
}

/* The running kernel's build id, from its notes (/sys/kernel/notes: ELF notes). */
static uint32_t running_kernel_id(uint8_t id[20])
{
    uint8_t b[4096];
    int fd = open("/sys/kernel/notes", O_RDONLY | O_CLOEXEC);
    ssize_t n = fd >= 0 ? read(fd, b, sizeof b) : -1;
    if (fd >= 0)
        close(fd);
    for (size_t off = 0; n > 0 && off + 12 <= (size_t)n;) {
        uint32_t nsz = sc_rd32(b + off), dsz = sc_rd32(b + off + 4), type = sc_rd32(b + off + 8);
        size_t name = off + 12, desc = name + ((nsz + 3u) & ~3u);
        if (nsz > (size_t)n || dsz > (size_t)n || desc + dsz > (size_t)n)
            break;
        if (type == 3 /* NT_GNU_BUILD_ID */ && nsz == 4 && !memcmp(b + name, "GNU", 4) && dsz &&
            dsz <= 20) {
            memcpy(id, b + desc, dsz);
            return dsz;
        }
        off = desc + ((dsz + 3u) & ~3u);
    }
    return 0;
}

/* Where the kernel's names are read from: /proc/kallsyms (NULL), which the kernel formats
 * anew on every read (as long as all the rest of the decoding), or the copy `perf record`
 * keeps in its build-id cache, ~/.debug/[kernel.kallsyms]/<build id>/kallsyms, a plain
 * file. The copy says what /proc/kallsyms says (perf script's source here) when the
 * recording's kernel is the running one (/sys/kernel/notes) and the copy was made since
 * this boot (a boot moves the kernel's addresses); a module loaded since the copy is named
 * only by /proc/kallsyms, which perf record copies once per kernel build. */
static const char *kallsyms_path(struct dec *d)
{
    if (d->o->kallsyms)
        return d->o->kallsyms;
    const char *home = getenv("HOME");
    uint8_t id[20];
    if (!home || !*home || !d->kidlen || running_kernel_id(id) != d->kidlen ||
        memcmp(id, d->kid, d->kidlen))
        return NULL;
    char hex[41];
    for (uint32_t i = 0; i < d->kidlen; i++)
        snprintf(hex + 2 * (size_t)i, 3, "%02x", d->kid[i]);
    int n = snprintf(d->kallsyms, sizeof d->kallsyms, "%s/.debug/[kernel.kallsyms]/%s/kallsyms",
                     home, hex);
    struct stat st;
    struct timespec real, up;
    if (n <= 0 || (size_t)n >= sizeof d->kallsyms || stat(d->kallsyms, &st) != 0 ||
        !S_ISREG(st.st_mode) || clock_gettime(CLOCK_REALTIME, &real) ||
        clock_gettime(CLOCK_BOOTTIME, &up))
        return NULL;
    /* (a second of slack for the clocks' reading) */
    return (int64_t)st.st_mtime + 1 >= (int64_t)(real.tv_sec - up.tv_sec) ? d->kallsyms : NULL;
}

/* Starts loading the kernel's names when the file may have kernel samples. */
static void kernel_start(struct dec *d)
{
    int kernel = 0;
    for (uint32_t i = 0; i < d->nattrs; i++)
        kernel |= !(d->attrs[i].flags & (1u << 5)); /* exclude_kernel */
    if (!kernel || d->o->no_local_files)
        return;
    d->kbudget = sc_budget_current();
    struct sc_symbolizer_opts so;
    memset(&so, 0, sizeof so);
    so.no_dwarf = 1;
    so.perf_names = 1;
    so.no_debuginfod = 1;
    so.kallsyms = kallsyms_path(d);
    /* a thread of its own reads the kernel's names while the records are replayed: of a
     * plain file, the lines of its text symbols, and once the kernel's addresses are
     * known only theirs are added (one_shot); /proc/kallsyms, all of which is formatted
     * whatever is read of it, all of it */
    so.one_shot = so.kallsyms != NULL;
    char err[SC_ERR_LEN];
    if (sc_symbolizer_new(&so, &d->ksym, err)) {
        d->ksym = NULL;
        return;
    }
    d->ksym_one_shot = so.one_shot;
    d->kstarted = pthread_create(&d->kthread, NULL, kernel_load, d) == 0;
}

/* The symbolizer of a DSO's addresses (the kernel's own, once it is loaded). */
static struct sc_symbolizer *symbolizer_of(struct dec *d, uint32_t dso)
{
    if (dso != SC_DSO_ID_KERNEL || !d->ksym)
        return d->sym;
    if (d->kstarted) {
        pthread_join(d->kthread, NULL);
        d->kstarted = 0;
    }
    return d->ksym;
}

/* Naming runs on two threads: reading ELF files, looking addresses up and demangling, a
 * DSO at a time, the DSOs shared out between this thread and a second one, the namer,
 * which take the next DSO not taken yet (the costliest first: the kernel, then the DSOs of
 * most addresses). What is said of a DSO's addresses is written as one batch (put_sym),
 * and this thread then turns the batches, in DSO order, into frames (named_frames: perf
 * script's lines and the profile's strings, which only this thread touches). The kernel has
 * its own symbolizer (d->ksym); the namer uses d->sym and this thread a twin of it (a
 * symbolizer is for one thread). Without a thread or a twin, this thread names all. */
struct namer {
    struct dec *d;
    const uint32_t *order; /* keys sorted by DSO */
    const uint64_t *addrs; /* their addresses, in that order */
    const uint32_t *group; /* group g: keys group[g] .. group[g + 1] - 1, one DSO */
    const uint32_t *turn;  /* the groups in the order they are taken */
    uint32_t ngroups;
    struct sc_buf *out; /* a batch per group */
    uint8_t *done;      /* per group: its batch is written (mu) */
    struct sc_budget *budget;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    uint32_t next; /* in turn: the next group to take (mu) */
    int oom;       /* (mu) */
    int late;      /* the budget's time is up: no more groups are taken (mu) */
};

struct batch_ctx {
    struct sc_buf *b;
    const struct symkey *syms;
    const uint32_t *keys;
};

/* (the symbolizer may call back in another order than the addresses', as DWARF's lines
 * come: each record starts with its address's index in the group) */
static void batch_sym(void *ctx, uint32_t i, const struct sc_sym *s)
{
    struct batch_ctx *c = ctx;
    sc_buf_append(c->b, &i, 4);
    put_sym(c->b, c->syms[c->keys[i]].inl, s);
}

/* Takes and names groups while there are any; sym names the DSOs' (the kernel's: d->ksym). */
static void name_groups(struct namer *nm, struct sc_symbolizer *sym)
{
    struct dec *d = nm->d;
    for (;;) {
        /* (a DSO may take long to read: the budget is looked at before each; the namer
         * has adopted it) */
        int late = sc_budget_poll(NULL) != 0;
        pthread_mutex_lock(&nm->mu);
        nm->late |= late;
        uint32_t g =
            nm->next < nm->ngroups && !nm->oom && !nm->late ? nm->turn[nm->next++] : UINT32_MAX;
        if (late)
            pthread_cond_broadcast(&nm->cv);
        pthread_mutex_unlock(&nm->mu);
        if (g == UINT32_MAX)
            return;
        uint32_t lo = nm->group[g], hi = nm->group[g + 1], dso = d->syms[nm->order[lo]].dso;
        struct batch_ctx c = {&nm->out[g], d->syms, nm->order + lo};
        /* (the kernel's symbolizer, once its thread loaded it, only the one taking it uses) */
        sc_symbolizer_resolve(dso == SC_DSO_ID_KERNEL && d->ksym ? symbolizer_of(d, dso) : sym, dso,
                              nm->addrs + lo, hi - lo, batch_sym, &c);
        pthread_mutex_lock(&nm->mu);
        nm->oom |= nm->out[g].oom;
        nm->done[g] = 1;
        pthread_cond_broadcast(&nm->cv);
        pthread_mutex_unlock(&nm->mu);
    }
}

static void *namer_main(void *arg)
{
    struct namer *nm = arg;
    sc_budget_adopt(nm->budget); /* its memory is the decoding's */
    name_groups(nm, nm->d->sym);
    return NULL;
}

/* Group g's frames, once its batch is written. */
static int take_group(struct namer *nm, uint32_t g)
{
    struct dec *d = nm->d;
    pthread_mutex_lock(&nm->mu);
    while (!nm->done[g] && !nm->oom && !nm->late)
        pthread_cond_wait(&nm->cv, &nm->mu);
    int failed = nm->oom, late = !nm->done[g] && nm->late;
    pthread_mutex_unlock(&nm->mu);
    if (failed)
        return oom(d);
    if (late) { /* (a budget's stop is kept: its poll says it again, in its words) */
        int rc = sc_budget_poll(d->err);
        return rc ? rc : sc_errf(d->err, SC_ELIMIT, "the query ran past its time budget");
    }
    const uint8_t *at = (const uint8_t *)nm->out[g].data, *end = at + nm->out[g].len;
    uint32_t lo = nm->group[g], n = nm->group[g + 1] - lo;
    int rc = 0;
    while (at < end && !rc) {
        uint32_t i;
        memcpy(&i, at, 4);
        at += 4;
        if (i < n) /* (what the symbolizer says of an address twice is taken once) */
            if (!d->syms[nm->order[lo + i]].resolved)
                rc = named_frames(d, &d->syms[nm->order[lo + i]], at);
        at += sym_len(at);
    }
    /* (the symbolizer calls back for each address; were one left out, it is unnamed) */
    for (uint32_t i = 0; i < n && !rc; i++)
        if (!d->syms[nm->order[lo + i]].resolved)
            rc = named_frames(d, &d->syms[nm->order[lo + i]], unnamed);
    return rc;
}

static int cmp_turn(const void *a, const void *b, void *ctx)
{
    const struct namer *nm = ctx;
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    int kx = nm->d->syms[nm->order[nm->group[x]]].dso == SC_DSO_ID_KERNEL;
    int ky = nm->d->syms[nm->order[nm->group[y]]].dso == SC_DSO_ID_KERNEL;
    uint32_t nx = nm->group[x + 1] - nm->group[x], ny = nm->group[y + 1] - nm->group[y];
    if (kx != ky)
        return ky - kx;
    if (nx != ny)
        return nx > ny ? -1 : 1;
    return x < y ? -1 : x > y;
}

/* Names every key: the symbolizer is asked once per DSO, with all its addresses. */
static int resolve_all(struct dec *d)
{
    uint32_t *order = malloc(((size_t)d->nsyms + 1) * sizeof *order);
    uint64_t *addrs = malloc(((size_t)d->nsyms + 1) * sizeof *addrs);
    uint32_t *group = malloc(((size_t)d->nsyms + 2) * sizeof *group);
    int rc = 0;
    if (!order || !addrs || !group)
        rc = oom(d);
    uint32_t n = 0, ng = 0;
    for (uint32_t i = 0; i < d->nsyms && !rc; i++) {
        struct symkey *k = &d->syms[i];
        if (k->dso == SC_DSO_ID_UNKNOWN || !sym_ready(d))
            rc = named_frames(d, k, unnamed);
        else
            order[n++] = i;
    }
    if (!rc && n)
        rc = sort_keys(d, order, n);
    for (uint32_t i = 0; i < n && !rc; i++) {
        addrs[i] = d->syms[order[i]].addr;
        if (i == 0 || d->syms[order[i]].dso != d->syms[order[i - 1]].dso)
            group[ng++] = i;
    }
    if (group) /* (NULL: out of memory, and no group) */
        group[ng] = n;
    struct namer nm;
    memset(&nm, 0, sizeof nm);
    nm.d = d;
    nm.order = order;
    nm.addrs = addrs;
    nm.group = group;
    nm.ngroups = ng;
    nm.budget = sc_budget_current();
    uint32_t *turn = ng ? malloc((size_t)ng * sizeof *turn) : NULL;
    nm.out = ng ? calloc(ng, sizeof *nm.out) : NULL;
    nm.done = ng ? calloc(ng, 1) : NULL;
    if (!rc && ng && (!turn || !nm.out || !nm.done))
        rc = oom(d);
    pthread_mutex_init(&nm.mu, NULL);
    pthread_cond_init(&nm.cv, NULL);
    pthread_t th;
    int threaded = 0;
    struct sc_symbolizer *twin = NULL;
    char err[SC_ERR_LEN];
    if (!rc && ng) {
        for (uint32_t g = 0; g < ng; g++)
            turn[g] = g;
        qsort_r(turn, ng, sizeof *turn, cmp_turn, &nm);
        nm.turn = turn;
        if (ng > 1 && sc_symbolizer_twin(d->sym, &twin, err) == 0)
            threaded = pthread_create(&th, NULL, namer_main, &nm) == 0;
        name_groups(&nm, threaded ? twin : d->sym);
    }
    for (uint32_t g = 0; g < ng && !rc; g++)
        if (!(rc = take_group(&nm, g)))
            rc = sc_budget_poll(d->err);
    if (threaded) {
        pthread_mutex_lock(&nm.mu);
        nm.next = ng; /* (stopped early: nothing more to take) */
        pthread_mutex_unlock(&nm.mu);
        pthread_join(th, NULL);
    }
    if (twin)
        sc_symbolizer_free(twin);
    for (uint32_t g = 0; nm.out && g < ng; g++)
        sc_buf_release(&nm.out[g]);
    free(nm.out);
    free(nm.done);
    free(turn);
    sc_map64_release(&d->sameidx); /* (its keys' said is gone) */
    pthread_mutex_destroy(&nm.mu);
    pthread_cond_destroy(&nm.cv);
    free(order);
    free(addrs);
    free(group);
    return rc;
}

/* What the samples read of a key: its frames (in frs) and whether they are located (in
 * kloc), a sixth of a symkey: the keys are read in the samples' order, at random. */
struct kfr {
    uint32_t off;
    uint32_t n : 31, located : 1;
};

/* The samples into the profile, their keys now frames. */
static int build_samples(struct dec *d)
{
    d->kloc = malloc(((size_t)d->nfrs + 1) * sizeof *d->kloc);
    struct kfr *kf = d->kf = malloc(((size_t)d->nsyms + 1) * sizeof *kf);
    if (!d->kloc || !kf)
        return oom(d);
    for (uint32_t i = 0; i < d->nsyms; i++)
        kf[i] = (struct kfr){d->syms[i].off, d->syms[i].n, 0};
    /* the profile's arrays at their size at once (not doubled and copied as they fill) */
    uint64_t nlocs = 0;
    for (uint32_t i = 0; i < d->nps; i++) {
        nlocs += 1;
        for (uint32_t j = 0; j < d->ps[i].nk; j++)
            nlocs += kf[d->kpool[d->ps[i].koff + j]].n;
    }
    if (d->nps && nlocs < UINT32_MAX / 2 &&
        (sc_profile_reserve_samples(d->p, d->nps, (uint32_t)nlocs) ||
         sc_grow_array(&d->p->labels, &d->p->labels_cap, (uint64_t)d->nps * 3,
                       sizeof *d->p->labels)))
        return oom(d);
    for (uint32_t i = 0; i < d->nps; i++) {
        int rc = sc_budget_poll_every(i, d->err);
        if (rc)
            return rc;
        const struct psample *s = &d->ps[i];
        d->nlocs = 0;
        for (uint32_t j = 0; j <= s->nk; j++) {
            const uint32_t *strs = &s->root;
            uint32_t n = 1;
            struct kfr *k = NULL;
            if (j < s->nk) {
                k = &kf[d->kpool[s->koff + j]];
                strs = d->frs + k->off;
                n = k->n;
            }
            if (d->nlocs + n >= d->lim->max_stack_depth)
                return sc_errf(d->err, SC_ELIMIT,
                               "stack deeper than the limit of %u frames "
                               "(limits.max_stack_depth)",
                               (unsigned)d->lim->max_stack_depth);
            if (sc_grow_array(&d->locs, &d->caplocs, (uint64_t)d->nlocs + n, sizeof *d->locs))
                return oom(d);
            if (k && !k->located) {
                /* a key's frames become locations once, where a sample first has them */
                for (uint32_t m = 0; m < n; m++)
                    if ((rc = loc_of(d, strs[m], &d->kloc[k->off + m])) != 0)
                        return rc;
                k->located = 1;
            }
            if (k) {
                memcpy(d->locs + d->nlocs, d->kloc + k->off, (size_t)n * sizeof *d->locs);
                d->nlocs += n;
                continue;
            }
            if ((rc = loc_of(d, strs[0], &d->locs[d->nlocs++])) != 0)
                return rc;
        }
        int64_t v[2] = {1, s->period};
        if (sc_profile_add_sample(d->p, d->locs, d->nlocs, v, s->time_ns) < 0)
            return oom(d);
        uint32_t want = 1 + (s->pid >= 0) + (s->tid >= 0), nl = 0;
        if (want > d->lim->max_labels)
            want = d->lim->max_labels;
        if (nl++ < want && sc_profile_add_label(d->p, d->kcomm, s->comm, 0, 0))
            return oom(d);
        if (s->pid >= 0 && nl++ < want && sc_profile_add_label(d->p, d->kpid, 0, s->pid, 0))
            return oom(d);
        if (s->tid >= 0 && nl++ < want && sc_profile_add_label(d->p, d->ktid, 0, s->tid, 0))
            return oom(d);
    }
    return 0;
}

static int replay(struct dec *d, const struct rec *v, uint64_t n)
{
    for (uint64_t i = 0; i < n; i++) {
        int rc = sc_budget_poll_every(i, d->err);
        if (rc)
            return rc;
        const uint8_t *r = d->buf + v[i].off;
        size_t rs = sc_rd32(r + 4) >> 16;
        switch (sc_rd32(r)) {
        case R_SAMPLE:
            rc = on_sample(d, r, rs);
            break;
        case R_MMAP:
            rc = on_mmap(d, r, rs, 0);
            break;
        case R_MMAP2:
            rc = on_mmap(d, r, rs, 1);
            break;
        case R_COMM:
            rc = on_comm(d, r, rs);
            break;
        case R_FORK:
            rc = on_fork(d, r, rs);
            break;
        default:
            break;
        }
        if (rc)
            return rc;
    }
    return 0;
}

static void release(struct dec *d)
{
    free(d->attrs);
    sc_map64_release(&d->ids);
    sc_map64_release(&d->pathidx);
    free(d->paths);
    sc_map64_release(&d->procs);
    sc_map64_release(&d->threads);
    for (uint32_t i = 0; i < d->npv; i++)
        free(d->pv[i].maps);
    free(d->pv);
    free(d->tv);
    if (d->uw)
        sc_unwind_cache_free(d->uw);
    if (d->sym)
        sc_symbolizer_free(d->sym);
    if (d->kstarted)
        pthread_join(d->kthread, NULL);
    if (d->ksym)
        sc_symbolizer_free(d->ksym);
    sc_map64_release(&d->symidx);
    free(d->ipc);
    free(d->kf);
    sc_map64_release(&d->sameidx);
    free(d->syms);
    free(d->frs);
    sc_map64_release(&d->loc_of_str);
    sc_map64_release(&d->bidx);
    free(d->bids);
    free(d->locs);
    free(d->ps);
    free(d->kpool);
    free(d->kloc);
    free(d->stacks);
    sc_map64_release(&d->stackidx);
    free(d->scratch);
    sc_arena_release(&d->arena);
}

static int decode(struct dec *d)
{
    if (d->n < 16 || !sc_perfdata_detect(d->buf, d->n))
        return sc_errf(d->err, SC_EFORMAT, "not a perf.data file (no PERFILE2 magic)");
    if (!memcmp(d->buf, "2ELIFREP", 8))
        return sc_errf(d->err, SC_EUNSUPPORTED,
                       "perf.data of a big-endian machine: read it there with perf script");
    uint64_t hsz = sc_rd64(d->buf + 8);
    if (hsz == 16)
        return sc_errf(d->err, SC_EUNSUPPORTED,
                       "perf.data written to a pipe (perf record -o -): record to a file, or "
                       "read it with perf script");
    if (hsz < HEADER_SIZE || d->n < HEADER_SIZE)
        return sc_errf(d->err, SC_EFORMAT, "perf.data: a header of %llu bytes (file of %zu)",
                       (unsigned long long)hsz, d->n);
    int rc = read_attrs(d);
    uint64_t doff, dsize;
    if (!rc)
        rc = section(d, 40, "data", &doff, &dsize);
    if (!rc)
        rc = read_features(d, doff + dsize);
    if (rc)
        return rc;
    for (uint32_t i = 0; i < d->nattrs; i++)
        if (d->attrs[i].sample_type & S_STACK_USER)
            d->want_dwarf = 1;
    int64_t kc = sc_profile_intern(d->p, "comm", 4), kp = sc_profile_intern(d->p, "pid", 3),
            kt = sc_profile_intern(d->p, "tid", 3);
    if (kc < 0 || kp < 0 || kt < 0)
        return oom(d);
    d->kcomm = (uint32_t)kc;
    d->kpid = (uint32_t)kp;
    d->ktid = (uint32_t)kt;
    struct rec *v = NULL;
    uint64_t n = 0;
    kernel_start(d);
    rc = collect(d, doff, dsize, &v, &n);
    /* the samples' arrays at a size they mostly stay within, at once (not doubled and
     * copied as they fill): a psample a sample; keys for up to 16 frames a sample, and no
     * more than the chains in the file have (8 bytes each), nor than an array may hold
     * (stacks, usually far fewer than samples, grow as met) */
    uint64_t ns = d->nsample_recs < d->lim->max_samples ? d->nsample_recs : d->lim->max_samples;
    uint64_t nk = ns * 16 < dsize / 8 ? ns * 16 : dsize / 8;
    if (nk > UINT32_MAX / 4)
        nk = UINT32_MAX / 4;
    if (!rc && ns &&
        (sc_grow_array(&d->ps, &d->capps, ns, sizeof *d->ps) ||
         sc_grow_array(&d->kpool, &d->capkpool, nk, sizeof *d->kpool)))
        rc = oom(d);
    d->ipc = calloc(IPCACHE, sizeof *d->ipc);
    if (!rc)
        rc = replay(d, v, n);
    free(v);
    if (!rc)
        rc = resolve_all(d);
    if (!rc)
        rc = build_samples(d);
    if (rc)
        return rc;
    const struct attr *k = &d->attrs[d->kept >= 0 ? d->kept : 0];
    if (d->kept < 0 && d->po->event && *d->po->event) {
        for (uint32_t i = 0; i < d->nattrs; i++)
            if (!strcmp(d->attrs[i].name, d->po->event))
                k = &d->attrs[i];
    }
    snprintf(d->st->event, sizeof d->st->event, "%.63s", k->name);
    if (d->kept >= 0)
        return 0;
    /* no sample: the types all the same */
    return sc_perf_sample_types(d->p, k->name, strlen(k->name), 0, d->err);
}

int sc_perfdata_decode(const uint8_t *buf, size_t n, const struct sc_perf_opts *perf,
                       const struct sc_perfdata_opts *o, const struct sc_limits *lim,
                       struct sc_profile *p, struct sc_perfdata_stats *stats, char *err)
{
    static const struct sc_perf_opts no_perf;
    static const struct sc_perfdata_opts no_opts;
    struct sc_perfdata_stats local;
    memset(&local, 0, sizeof local);
    struct dec d;
    memset(&d, 0, sizeof d);
    d.buf = buf;
    d.n = n;
    d.po = perf ? perf : &no_perf;
    d.o = o ? o : &no_opts;
    d.lim = lim ? lim : &sc_limits_cli;
    d.p = p;
    d.st = stats ? stats : &local;
    memset(d.st, 0, sizeof *d.st);
    d.err = err;
    d.kept = -1;
    sc_arena_init(&d.arena);
    if (n > d.lim->max_input) {
        release(&d);
        return sc_errf(err, SC_ELIMIT, "input of %zu bytes is more than %llu", n,
                       (unsigned long long)d.lim->max_input);
    }
    int rc = decode(&d);
    release(&d);
    return rc;
}
