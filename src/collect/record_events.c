/* record_events.c - perf records into processes, threads and mappings; samples into stacks.
 *
 * Records as the kernel writes them for the recorder's attributes (sample_type IP | TID |
 * TIME | CPU | PERIOD | CALLCHAIN [| REGS_USER | STACK_USER], sample_id_all, mmap2, comm,
 * task), little-endian, after the 8-byte struct perf_event_header {u32 type; u16 misc; u16
 * size}:
 *
 *   SAMPLE (9)   u64 ip; u32 pid, tid; u64 time; u32 cpu, res; u64 period; u64 nr;
 *                u64 ips[nr] (PERF_CONTEXT_KERNEL / _USER markers, then addresses, leaf
 *                first); with unwinding: u64 abi (0: no user registers); u64 regs[] (the
 *                mask's, in bit order; none when abi is 0); u64 size; u8 stack[size];
 *                u64 dyn_size (the bytes of stack copied; absent when size is 0)
 *   MMAP2 (10)   u32 pid, tid; u64 addr, len, pgoff; u32 maj, min; u64 ino, ino_gen;
 *                u32 prot, flags; char filename[] (NUL-padded to 8); sample_id
 *   COMM (3)     u32 pid, tid; char comm[] (padded); sample_id; misc COMM_EXEC on exec
 *   FORK (7),    u32 pid, ppid, tid, ptid; u64 time; sample_id
 *   EXIT (4)
 *   LOST (2)     u64 id, lost; sample_id
 *   LOST_SAMPLES (13)  u64 lost; sample_id
 *   SWITCH (14)  sample_id; misc SWITCH_OUT when the thread leaves (off_cpu)
 *   SWITCH_CPU_WIDE (15)  u32 next_prev_pid, next_prev_tid; sample_id (-a)
 *   sample_id    u32 pid, tid; u64 time; u32 cpu, res   (the last 24 bytes)
 *
 * The switch records' sample_id is the thread switched in or out (the kernel writes them
 * as that thread). The sched_switch samples are in record_offcpu.c.
 */
#include "collect/record_int.h"
#include "model/bytes.h"
#include "model/error.h"

#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SAMPLE_ID_LEN 24
#define KERNEL_START 0xffff800000000000ULL /* x86-64 and arm64: the kernel's half */

int64_t sc_rec_time(const uint8_t *rec, size_t len)
{
    if (len < 8)
        return 0;
    uint32_t type = sc_rd32(rec);
    if (type == PERF_RECORD_SAMPLE)
        return len >= 32 ? (int64_t)sc_rd64(rec + 24) : 0;
    if (len >= 8 + SAMPLE_ID_LEN)
        return (int64_t)sc_rd64(rec + len - 16);
    return 0;
}

/* ---- tables ---- */

int sc_rec_init_tables(struct sc_recorder *r, char *err)
{
    sc_arena_init(&r->sym_arena);
    memset(&r->symstr, 0, sizeof r->symstr);
    r->symstr.arena = &r->sym_arena;
    if (sc_strtab_push(&r->symstr, "", 0) < 0)
        return sc_errf(err, SC_ENOMEM, "out of memory");
    return sc_rec_new_window(r) ? sc_errf(err, SC_ENOMEM, "out of memory") : 0;
}

static void release_locations(struct sc_recorder *r)
{
    free(r->locs);
    free(r->syms);
    free(r->frames);
    r->locs = NULL;
    r->syms = NULL;
    r->frames = NULL;
    r->nlocs = r->lcap = r->nsyms = r->scap = r->nframes = r->fcap = 0;
    sc_map64_release(&r->loc_index);
    sc_strtab_release(&r->symstr);
    sc_arena_release(&r->sym_arena);
}

void sc_rec_release_tables(struct sc_recorder *r)
{
    for (uint32_t i = 0; i < r->nprocs; i++)
        free(r->procs[i].maps);
    free(r->procs);
    free(r->tasks);
    sc_map64_release(&r->proc_index);
    sc_map64_release(&r->task_index);
    sc_map64_release(&r->forked);
    release_locations(r);
    sc_profile_free(r->win);
    free(r->stacks);
    free(r->stack_locs);
    sc_map64_release(&r->stack_index);
    free(r->samples);
    sc_map64_release(&r->trunc_index);
    free(r->trunc);
    free(r->unsym);
    sc_rec_offcpu_release(r);
    sc_map64_release(&r->span_index);
}

int sc_rec_new_window(struct sc_recorder *r)
{
    sc_profile_free(r->win);
    r->win = sc_profile_new();
    if (!r->win || sc_profile_add_sample_type(r->win, "samples", "count") < 0 ||
        sc_profile_add_sample_type(r->win, "cpu", "nanoseconds") < 0)
        return SC_ENOMEM;
    if (r->o.off_cpu && (sc_profile_add_sample_type(r->win, "offcpu", "nanoseconds") < 0 ||
                         sc_profile_add_sample_type(r->win, "wall", "nanoseconds") < 0))
        return SC_ENOMEM;
    r->win->period_type = r->win->sample_types[1];
    r->gen++;
    r->nstacks = r->nstack_locs = r->nsamples = 0;
    sc_map64_release(&r->stack_index);
    r->win_lost = 0;
    r->win_short = r->win_short_ns = r->win_dropped = r->win_switch_lost = 0;
    r->win_spans = 0;
    sc_map64_release(&r->span_index);
    return 0;
}

/* Rebuilds an index from the live entries only. */
static void sweep(struct sc_map64 *index, uint32_t n, int (*dead)(struct sc_recorder *, uint32_t),
                  int32_t (*key)(struct sc_recorder *, uint32_t), struct sc_recorder *r)
{
    sc_map64_release(index);
    for (uint32_t i = 0; i < n; i++)
        if (!dead(r, i))
            sc_map64_upsert(index, (uint64_t)(uint32_t)key(r, i), i, NULL);
}

static int proc_dead(struct sc_recorder *r, uint32_t i)
{
    return r->procs[i].dead;
}
static int32_t proc_key(struct sc_recorder *r, uint32_t i)
{
    return r->procs[i].pid;
}
static int task_dead(struct sc_recorder *r, uint32_t i)
{
    return r->tasks[i].dead;
}
static int32_t task_key(struct sc_recorder *r, uint32_t i)
{
    return r->tasks[i].tid;
}

void sc_rec_after_take(struct sc_recorder *r)
{
    /* dead entries go once they are most of the table: compact the arrays, rebuild */
    if (r->dead_procs > 64 && r->dead_procs * 2 > r->nprocs) {
        uint32_t k = 0;
        for (uint32_t i = 0; i < r->nprocs; i++)
            if (!r->procs[i].dead)
                r->procs[k++] = r->procs[i];
            else
                free(r->procs[i].maps);
        r->nprocs = k;
        r->dead_procs = 0;
        sweep(&r->proc_index, r->nprocs, proc_dead, proc_key, r);
    }
    if (r->dead_tasks > 64 && r->dead_tasks * 2 > r->ntasks) {
        uint32_t k = 0;
        for (uint32_t i = 0; i < r->ntasks; i++)
            if (!r->tasks[i].dead)
                r->tasks[k++] = r->tasks[i];
        r->ntasks = k;
        r->dead_tasks = 0;
        sweep(&r->task_index, r->ntasks, task_dead, task_key, r);
    }
    uint32_t max = r->o.max_locations ? r->o.max_locations : 1u << 20;
    /* debug files that arrived (from debuginfod) name better what was named before */
    uint64_t gen = sc_symbolizer_refresh(r->sym);
    if (r->nlocs > max || r->sym_arena.total > (64u << 20) || gen != r->sym_gen) {
        r->sym_gen = gen;
        sc_rec_offcpu_drop(r); /* their stacks are location ids */
        release_locations(r);
        sc_arena_init(&r->sym_arena);
        r->symstr.arena = &r->sym_arena;
        sc_strtab_push(&r->symstr, "", 0);
    }
}

/* ---- processes ---- */

static void read_file(const char *path, struct sc_buf *out, size_t max)
{
    FILE *f = fopen(path, "re");
    if (!f)
        return;
    char chunk[8192];
    size_t k;
    while (out->len < max && (k = fread(chunk, 1, sizeof chunk, f)) > 0)
        sc_buf_append(out, chunk, k);
    fclose(f);
}

/* The path of a mapping without the kernel's " (deleted)" mark. */
static size_t trim_deleted(const char *path, size_t len)
{
    if (len > 10 && !memcmp(path + len - 10, " (deleted)", 10))
        return len - 10;
    return len;
}

static int add_mapping(struct sc_recorder *r, struct rec_proc *p, uint64_t start, uint64_t end,
                       uint64_t pgoff, const char *path, size_t plen, uint64_t dev, uint64_t ino)
{
    int64_t dso = sc_symbolizer_dso(r->sym, path, trim_deleted(path, plen), dev, ino, p->pid);
    if (dso < 0)
        dso = SC_DSO_ID_UNKNOWN;
    struct sc_dso_info di;
    sc_symbolizer_info(r->sym, (uint32_t)dso, &di);
    if (di.kind == SC_DSO_JIT)
        pgoff = start; /* JIT code is named by absolute addresses (perf maps) */
    struct sc_procmap m = {start, end, pgoff, (uint32_t)dso, 0, NULL, 0};
    return sc_procmaps_insert(&p->maps, &p->nmaps, &p->cap, &m);
}

/* /proc/PID/maps: the executable mappings of a process that ran before we looked. */
static void load_maps(struct sc_recorder *r, struct rec_proc *p)
{
    p->loaded = 1;
    if (r->offline || p->pid <= 0)
        return;
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/maps", (int)p->pid);
    struct sc_buf b = SC_BUF_INIT;
    read_file(path, &b, 64u << 20);
    for (size_t off = 0; off < b.len;) {
        const char *line = b.data + off;
        const char *nl = memchr(line, '\n', b.len - off);
        size_t n = nl ? (size_t)(nl - line) : b.len - off;
        off += n + 1;
        struct sc_maps_line m;
        if (sc_maps_parse_line(line, n, &m) || !m.exec)
            continue;
        uint64_t dev = (uint64_t)m.dev_major << 32 | m.dev_minor;
        if (add_mapping(r, p, m.start, m.end, m.offset, m.path, m.path_len, dev, m.inode))
            break;
    }
    sc_buf_release(&b);
}

/* The process pid, created (empty, not loaded) when new. NULL when out of memory. */
static struct rec_proc *proc_get(struct sc_recorder *r, int32_t pid)
{
    int added;
    uint32_t *slot = sc_map64_upsert(&r->proc_index, (uint32_t)pid, r->nprocs, &added);
    if (!slot)
        return NULL;
    if (!added) {
        struct rec_proc *p = &r->procs[*slot];
        if (p->dead) { /* a pid used again */
            p->dead = 0;
            p->loaded = 0;
            p->nmaps = 0;
            r->dead_procs--;
        }
        return p;
    }
    if (sc_grow_array(&r->procs, &r->pcap, (uint64_t)r->nprocs + 1, sizeof *r->procs)) {
        *slot = UINT32_MAX - 1; /* unusable; a later insert of this pid fails over */
        return NULL;
    }
    struct rec_proc *p = &r->procs[r->nprocs++];
    memset(p, 0, sizeof *p);
    p->pid = pid;
    return p;
}

static struct rec_proc *proc_find(struct sc_recorder *r, int32_t pid)
{
    uint32_t *slot = sc_map64_get(&r->proc_index, (uint32_t)pid);
    return slot && *slot < r->nprocs && !r->procs[*slot].dead ? &r->procs[*slot] : NULL;
}

static void task_comm_from_proc(struct sc_recorder *r, struct rec_task *t)
{
    if (t->pid == 0 && t->tid == 0) {
        snprintf(t->comm, sizeof t->comm, "swapper");
        return;
    }
    snprintf(t->comm, sizeof t->comm, ":%d", (int)t->tid);
    if (r->offline)
        return;
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/task/%d/comm", (int)t->pid, (int)t->tid);
    struct sc_buf b = SC_BUF_INIT;
    read_file(path, &b, 64);
    size_t n = b.len;
    while (n && (b.data[n - 1] == '\n' || b.data[n - 1] == 0))
        n--;
    if (n) {
        if (n > sizeof t->comm - 1)
            n = sizeof t->comm - 1;
        memcpy(t->comm, b.data, n);
        t->comm[n] = 0;
    }
    sc_buf_release(&b);
}

/* The thread tid, created when new; its comm from /proc when named is 0. */
static struct rec_task *task_get(struct sc_recorder *r, int32_t pid, int32_t tid, int named)
{
    int added;
    uint32_t *slot = sc_map64_upsert(&r->task_index, (uint32_t)tid, r->ntasks, &added);
    if (!slot)
        return NULL;
    struct rec_task *t;
    if (!added) {
        t = &r->tasks[*slot];
        if (!t->dead && t->pid == pid)
            return t;
        if (t->dead)
            r->dead_tasks--;
    } else {
        if (sc_grow_array(&r->tasks, &r->tcap, (uint64_t)r->ntasks + 1, sizeof *r->tasks)) {
            *slot = UINT32_MAX - 1;
            return NULL;
        }
        t = &r->tasks[r->ntasks++];
    }
    memset(t, 0, sizeof *t);
    t->pid = pid;
    t->tid = tid;
    if (!named)
        task_comm_from_proc(r, t);
    return t;
}

/* ---- records ---- */

static void on_comm(struct sc_recorder *r, const uint8_t *b, size_t n, uint16_t misc)
{
    if (n < 8 + SAMPLE_ID_LEN)
        return;
    int32_t pid = (int32_t)sc_rd32(b), tid = (int32_t)sc_rd32(b + 4);
    struct rec_task *t = task_get(r, pid, tid, 1);
    if (!t)
        return;
    size_t cl = strnlen((const char *)b + 8, n - 8 - SAMPLE_ID_LEN);
    if (cl > sizeof t->comm - 1)
        cl = sizeof t->comm - 1;
    memcpy(t->comm, b + 8, cl);
    t->comm[cl] = 0;
    t->gen = 0; /* its window strings change */
    if (misc & PERF_RECORD_MISC_COMM_EXEC) {
        /* a new program: its mappings follow as MMAP2 records */
        struct rec_proc *p = proc_get(r, pid);
        if (p) {
            p->nmaps = 0;
            p->loaded = 1;
        }
    }
}

static void on_mmap2(struct sc_recorder *r, const uint8_t *b, size_t n, uint16_t misc)
{
    if (n < 64 + SAMPLE_ID_LEN)
        return;
    int32_t pid = (int32_t)sc_rd32(b);
    uint64_t addr = sc_rd64(b + 8), len = sc_rd64(b + 16), pgoff = sc_rd64(b + 24);
    uint64_t dev = 0, ino = 0;
    if (!(misc & PERF_RECORD_MISC_MMAP_BUILD_ID)) {
        dev = (uint64_t)sc_rd32(b + 32) << 32 | sc_rd32(b + 36);
        ino = sc_rd64(b + 40);
    }
    uint32_t prot = sc_rd32(b + 56);
    if (!(prot & 4 /* PROT_EXEC */) || pid <= 0 || len == 0 || addr + len < addr)
        return;
    const char *path = (const char *)b + 64;
    size_t plen = strnlen(path, n - 64 - SAMPLE_ID_LEN);
    struct rec_proc *p = proc_get(r, pid);
    if (!p)
        return;
    if (!p->loaded)
        load_maps(r, p); /* the rest of its mappings; this one may be among them */
    add_mapping(r, p, addr, addr + len, pgoff, path, plen, dev, ino);
}

static void on_fork(struct sc_recorder *r, const uint8_t *b, size_t n)
{
    if (n < 24)
        return;
    int32_t pid = (int32_t)sc_rd32(b), ppid = (int32_t)sc_rd32(b + 4);
    int32_t tid = (int32_t)sc_rd32(b + 8), ptid = (int32_t)sc_rd32(b + 12);
    sc_map64_upsert(&r->forked, (uint32_t)tid, 0, NULL);
    char comm[16] = "";
    uint32_t *ps = sc_map64_get(&r->task_index, (uint32_t)ptid);
    if (ps && *ps < r->ntasks && !r->tasks[*ps].dead)
        memcpy(comm, r->tasks[*ps].comm, sizeof comm);
    struct rec_task *t = task_get(r, pid, tid, comm[0] != 0);
    if (t && comm[0])
        memcpy(t->comm, comm, sizeof comm);
    if (pid == ppid)
        return; /* a thread: same process, same mappings */
    struct rec_proc *p = proc_get(r, pid);
    if (!p)
        return;
    /* the child has the parent's mappings: read the parent's now if nobody did (it is
     * likelier to be alive than the child, which may be gone by its first sample) */
    struct rec_proc *parent = proc_get(r, ppid);
    if (parent && !parent->loaded)
        load_maps(r, parent);
    p = proc_find(r, pid); /* proc_get may have moved the array */
    parent = proc_find(r, ppid);
    if (!p)
        return;
    p->nmaps = 0;
    if (parent && parent->loaded) {
        if (sc_grow_array(&p->maps, &p->cap, parent->nmaps, sizeof *p->maps) == 0) {
            if (parent->nmaps)
                memcpy(p->maps, parent->maps, (size_t)parent->nmaps * sizeof *p->maps);
            p->nmaps = parent->nmaps;
            p->loaded = 1;
        }
    } else {
        p->loaded = 0;
    }
}

static void on_exit_record(struct sc_recorder *r, const uint8_t *b, size_t n)
{
    if (n < 24)
        return;
    int32_t pid = (int32_t)sc_rd32(b), tid = (int32_t)sc_rd32(b + 8);
    sc_rec_offcpu_exit(r, tid);
    uint32_t *ts = sc_map64_get(&r->task_index, (uint32_t)tid);
    if (ts && *ts < r->ntasks && !r->tasks[*ts].dead) {
        r->tasks[*ts].dead = 1;
        r->dead_tasks++;
    }
    if (pid != tid)
        return;
    struct rec_proc *p = proc_find(r, pid);
    if (p) {
        p->dead = 1;
        free(p->maps);
        p->maps = NULL;
        p->nmaps = p->cap = 0;
        r->dead_procs++;
    }
}

/* ---- samples ---- */

struct loc_key {
    struct sc_recorder *r;
    uint32_t dso;
    uint64_t addr;
};

static int loc_eq(void *ctx, uint32_t i)
{
    const struct loc_key *k = ctx;
    return i < k->r->nlocs && k->r->locs[i].dso == k->dso && k->r->locs[i].addr == k->addr;
}

static int64_t loc_get(struct sc_recorder *r, uint32_t dso, uint64_t addr)
{
    struct loc_key k = {r, dso, addr};
    int added;
    uint32_t *slot =
        sc_map64_intern(&r->loc_index, sc_hash_combine(dso, addr), r->nlocs, loc_eq, &k, &added);
    if (!slot)
        return SC_ENOMEM;
    if (!added)
        return *slot;
    if (sc_grow_array(&r->locs, &r->lcap, (uint64_t)r->nlocs + 1, sizeof *r->locs)) {
        *slot = UINT32_MAX - 1;
        return SC_ENOMEM;
    }
    r->locs[r->nlocs] = (struct rec_loc){addr, dso, 0, 0, 0};
    return r->nlocs++;
}

struct stack_key {
    struct sc_recorder *r;
    const uint32_t *locs;
    uint32_t n, nkernel, whole;
};

static int stack_eq(void *ctx, uint32_t i)
{
    const struct stack_key *k = ctx;
    if (i >= k->r->nstacks)
        return 0;
    const struct rec_stack *s = &k->r->stacks[i];
    return s->n == k->n && s->nkernel == k->nkernel && s->whole == k->whole &&
           !memcmp(k->r->stack_locs + s->start, k->locs, (size_t)k->n * sizeof *k->locs);
}

static int64_t stack_get(struct sc_recorder *r, const uint32_t *locs, uint32_t n, uint32_t nk,
                         uint32_t whole)
{
    struct stack_key k = {r, locs, n, nk, whole};
    uint64_t h =
        sc_hash_combine(sc_hash64(locs, (size_t)n * sizeof *locs), nk | (uint64_t)whole << 32);
    int added;
    uint32_t *slot = sc_map64_intern(&r->stack_index, h, r->nstacks, stack_eq, &k, &added);
    if (!slot)
        return SC_ENOMEM;
    if (!added)
        return *slot;
    if (sc_grow_array(&r->stacks, &r->stcap, (uint64_t)r->nstacks + 1, sizeof *r->stacks) ||
        sc_grow_array(&r->stack_locs, &r->slcap, (uint64_t)r->nstack_locs + n,
                      sizeof *r->stack_locs)) {
        *slot = UINT32_MAX - 1;
        return SC_ENOMEM;
    }
    if (n)
        memcpy(r->stack_locs + r->nstack_locs, locs, (size_t)n * sizeof *locs);
    r->stacks[r->nstacks] = (struct rec_stack){r->nstack_locs, n, nk, whole};
    r->nstack_locs += n;
    return r->nstacks++;
}

/* The window strings of a thread (its labels), interned into the window's profile. */
static int task_strings(struct sc_recorder *r, struct rec_task *t)
{
    if (t->gen == r->gen)
        return 0;
    char num[16];
    int64_t c = sc_profile_intern(r->win, t->comm, strlen(t->comm));
    int64_t p = sc_profile_intern(r->win, num, (size_t)snprintf(num, sizeof num, "%d", t->pid));
    int64_t k = sc_profile_intern(r->win, num, (size_t)snprintf(num, sizeof num, "%d", t->tid));
    if (c < 0 || p < 0 || k < 0)
        return SC_ENOMEM;
    t->s_comm = (uint32_t)c;
    t->s_pid = (uint32_t)p;
    t->s_tid = (uint32_t)k;
    t->gen = r->gen;
    return 0;
}

#define MAX_FRAMES SC_REC_MAX_FRAMES
#define MAX_USER 512 /* user frames a walk of the stack finds at most */

const struct rec_arch *sc_rec_unwind_arch(void)
{
#if defined(__x86_64__)
    /* PERF_REG_X86_BP 6, SP 7, IP 8 */
    static const struct rec_arch a = {SC_UW_ARCH_X86_64, 7ull << 6, 3, 2, 1, 0, UINT32_MAX};
    return &a;
#elif defined(__aarch64__)
    /* PERF_REG_ARM64_X29 29, LR 30, SP 31, PC 32 */
    static const struct rec_arch a = {SC_UW_ARCH_AARCH64, 15ull << 29, 4, 3, 2, 0, 1};
    return &a;
#else
    return NULL;
#endif
}

/* A sample's user registers and stack copy, after its callchain: REGS_USER (u64 abi, then
 * the registers unless abi is NONE: a kernel thread) and STACK_USER (u64 size, then size
 * bytes and u64 dyn_size, what the kernel could copy, unless size is 0). 1 when the sample
 * has them (a 64-bit process's). */
struct user_stack {
    struct sc_unwind_regs regs;
    const uint8_t *data;
    size_t len;
};

static int user_stack(const uint8_t *p, size_t n, struct user_stack *u)
{
    const struct rec_arch *a = sc_rec_unwind_arch();
    if (!a || n < 8 || sc_rd64(p) != PERF_SAMPLE_REGS_ABI_64)
        return 0;
    size_t rb = 8 + 8 * (size_t)a->nregs;
    if (n < rb + 8)
        return 0;
    memset(u, 0, sizeof *u);
    const uint8_t *v = p + 8;
    u->regs.pc = sc_rd64(v + 8 * (size_t)a->pc);
    u->regs.sp = sc_rd64(v + 8 * (size_t)a->sp);
    u->regs.fp = sc_rd64(v + 8 * (size_t)a->fp);
    if (a->lr != UINT32_MAX)
        u->regs.lr = sc_rd64(v + 8 * (size_t)a->lr);
    uint64_t size = sc_rd64(p + rb);
    if (size > n - rb - 8 || n - rb - 8 - size < 8)
        return size == 0; /* registers, no stack (the walk stops at its first read) */
    uint64_t dyn = sc_rd64(p + rb + 8 + size);
    u->data = p + rb + 8;
    u->len = dyn < size ? (size_t)dyn : (size_t)size;
    return 1;
}

struct walk {
    struct sc_recorder *r;
    struct rec_proc *proc;
};

static int walk_find(void *ctx, uint64_t pc, const struct sc_unwind_table **t, uint64_t *off)
{
    struct walk *w = ctx;
    const struct sc_procmap *m = sc_procmaps_find(w->proc->maps, w->proc->nmaps, pc);
    if (!m)
        return 0;
    *off = pc - m->start + m->pgoff;
    *t = sc_unwind_cache_get(w->r->uw, w->r->sym, m->dso);
    return 1;
}

/* Where the kernel's chain k (nk frames) continues the walk's frames u (n of them): the
 * index in k of u's last frame, at about the same depth (the kernel's chain lacks the caller
 * of a leaf that keeps no frame pointer), the frame before it the same in both; -1 when the
 * two disagree (the kernel's walk went astray in code without frame pointers). */
static int64_t join_at(const uint64_t *u, uint32_t n, const uint64_t *k, uint32_t nk)
{
    static const int d[] = {0, -1, 1, -2, 2};
    for (uint32_t i = 0; i < sizeof d / sizeof d[0]; i++) {
        int64_t j = (int64_t)n - 1 + d[i];
        if (j < 0 || j >= (int64_t)nk || k[j] != u[n - 1])
            continue;
        if (n == 1 || (j >= 1 && k[j - 1] == u[n - 2]) || (j == 1 && k[0] == u[0]))
            return j;
    }
    return -1;
}

/* The user frames of a sample (raw addresses, the leaf's pc first) into out: the kernel's
 * chain k, or the walk of the sample's stack with the unwind tables (record.h says which).
 * *whole says the tables found the outermost frame. */
static uint32_t user_frames(struct sc_recorder *r, struct rec_proc *proc, const uint64_t *k,
                            uint32_t nk, const struct user_stack *us, uint64_t *out,
                            uint32_t *whole)
{
    *whole = 0;
    const struct rec_arch *arch = sc_rec_unwind_arch();
    if (!r->uw || !us || !proc || !arch) {
        memcpy(out, k, (size_t)nk * sizeof *k);
        r->st.stacks_kernel += r->uw && nk;
        return nk;
    }
    struct walk w = {r, proc};
    struct sc_unwind_result res;
    int64_t t0 = sc_mono_ns();
    sc_unwind_stack(arch->arch, &us->regs, us->data, us->len, walk_find, &w, out, MAX_USER, &res);
    r->st.unwind_ns += (uint64_t)(sc_mono_ns() - t0);
    r->st.unwind_frames += res.n;
    if (res.stop == SC_UNWIND_END || res.stop == SC_UNWIND_ZERO) {
        /* the tables' end of the stack, or the x86-64 ABI's: a zero frame pointer (glibc's
         * _start and ld.so's clear rbp; Go's frame pointer chains end so) or a zero return
         * address, which only frames no table covers come to */
        *whole = 1;
        r->st.stacks_tables++;
        return res.n;
    }
    r->st.unwind_stops[res.stop]++;
    int64_t j = r->o.unwind == SC_RECORD_UNWIND_AUTO ? join_at(out, res.n, k, nk) : -1;
    if (j < 0) {
        r->st.stacks_cut++;
        return res.n;
    }
    uint32_t n = res.n;
    for (uint32_t i = (uint32_t)j + 1; i < nk && n < MAX_USER; i++)
        out[n++] = k[i];
    if (res.n == 1)
        r->st.stacks_kernel++; /* no step of the walk: the kernel's chain */
    else
        r->st.stacks_joined++;
    return n;
}

int sc_rec_stack_of(struct sc_recorder *r, int32_t pid, const uint8_t *ips, uint64_t nr,
                    const uint8_t *rest, size_t rest_len, uint32_t *locs, uint32_t *nlocs_out,
                    uint32_t *nkernel_out, uint32_t *whole)
{
    struct user_stack us;
    int have_stack = r->uw && user_stack(rest, rest_len, &us);
    uint32_t nlocs = 0, nkernel = 0;
    uint64_t kuser[MAX_USER], user[MAX_USER];
    uint32_t nkuser = 0;
    uint64_t ctx = 0;
    int first = 1;
    /* kernel frames as they are; the kernel's user frames for user_frames */
    for (uint64_t i = 0; i < nr && nlocs < MAX_FRAMES; i++) {
        uint64_t ip = sc_rd64(ips + 8 * i);
        if (ip >= (uint64_t)PERF_CONTEXT_MAX) {
            ctx = ip;
            first = 1;
            continue;
        }
        int kernel = ctx ? ctx == (uint64_t)PERF_CONTEXT_KERNEL : ip >= KERNEL_START;
        if (ctx && !kernel && ctx != (uint64_t)PERF_CONTEXT_USER)
            continue; /* guest frames */
        if (!kernel) {
            if (nkuser < MAX_USER)
                kuser[nkuser++] = ip;
            continue;
        }
        if (nkuser)
            continue; /* kernel after user: not a callchain we understand */
        /* callers' return addresses name the instruction after the call: less one */
        int64_t loc = loc_get(r, SC_DSO_ID_KERNEL, first ? ip : ip - 1);
        first = 0;
        if (loc < 0)
            return SC_ENOMEM;
        locs[nlocs++] = (uint32_t)loc;
        nkernel++;
    }
    struct rec_proc *proc = NULL;
    if ((nkuser || have_stack) && pid > 0) {
        proc = proc_get(r, pid);
        if (proc && !proc->loaded)
            load_maps(r, proc);
        if (proc)
            proc = proc_find(r, pid);
    }
    uint32_t nuser = user_frames(r, proc, kuser, nkuser, have_stack ? &us : NULL, user, whole);
    for (uint32_t i = 0; i < nuser && nlocs < MAX_FRAMES; i++) {
        uint64_t ip = user[i], a = i == 0 ? ip : ip - 1;
        const struct sc_procmap *m = proc ? sc_procmaps_find(proc->maps, proc->nmaps, ip) : NULL;
        /* in no executable mapping: nothing that ran (a frame walk gone astray), one
         * [unknown] location for all of them */
        int64_t loc =
            m ? loc_get(r, m->dso, a - m->start + m->pgoff) : loc_get(r, SC_DSO_ID_UNKNOWN, 0);
        if (loc < 0)
            return SC_ENOMEM;
        locs[nlocs++] = (uint32_t)loc;
    }
    if (nlocs == 0) { /* no frame we could place (guest code, an empty callchain) */
        int64_t loc = loc_get(r, SC_DSO_ID_UNKNOWN, 0);
        if (loc < 0)
            return SC_ENOMEM;
        locs[nlocs++] = (uint32_t)loc;
    }
    *nlocs_out = nlocs;
    *nkernel_out = nkernel;
    return 0;
}

int sc_rec_add_sample(struct sc_recorder *r, int32_t pid, int32_t tid, const uint32_t *locs,
                      uint32_t n, uint32_t nkernel, uint32_t whole, int64_t time, uint64_t period,
                      uint32_t kind)
{
    struct rec_task *t = task_get(r, pid, tid, 0);
    if (!t || task_strings(r, t))
        return SC_ENOMEM;
    int64_t st = stack_get(r, locs, n, nkernel, whole);
    if (st < 0)
        return SC_ENOMEM;
    if (kind != REC_ONCPU && r->win_spans >= SC_RECORD_OFFCPU_TIMED) {
        /* stack ids stay under 2^31: a window's stacks are counted in memory */
        uint64_t key = (uint64_t)st << 33 | (uint64_t)(kind == REC_BLOCKED) << 32 | (uint32_t)tid;
        int added;
        uint32_t *slot = sc_map64_upsert(&r->span_index, key, r->nsamples, &added);
        if (!slot)
            return SC_ENOMEM;
        if (!added && *slot < r->nsamples) {
            r->samples[*slot].period += period;
            return 0;
        }
    } else if (kind != REC_ONCPU) {
        r->win_spans++;
    }
    if (sc_grow_array(&r->samples, &r->smcap, (uint64_t)r->nsamples + 1, sizeof *r->samples))
        return SC_ENOMEM;
    r->samples[r->nsamples++] =
        (struct rec_sample){(uint32_t)st, t->s_comm, t->s_pid, t->s_tid, time, period, kind};
    return 0;
}

static int on_sample(struct sc_recorder *r, const uint8_t *b, size_t n)
{
    if (n < 48)
        return 1;
    int32_t pid = (int32_t)sc_rd32(b + 8), tid = (int32_t)sc_rd32(b + 12);
    int64_t time = (int64_t)sc_rd64(b + 16);
    uint64_t period = sc_rd64(b + 32), nr = sc_rd64(b + 40);
    if (nr > (n - 48) / 8)
        return 1;
    const uint8_t *ips = b + 48;
    uint32_t locs[MAX_FRAMES], nlocs, nkernel, whole;
    int rc = sc_rec_stack_of(r, pid, ips, nr, ips + 8 * nr, n - 48 - 8 * nr, locs, &nlocs, &nkernel,
                             &whole);
    if (!rc)
        rc = sc_rec_add_sample(r, pid, tid, locs, nlocs, nkernel, whole, time, period, REC_ONCPU);
    if (!rc)
        r->st.samples++;
    return rc;
}

/* PERF_RECORD_SWITCH(_CPU_WIDE): its sample_id names the thread switched in or out. */
static int on_switch(struct sc_recorder *r, const uint8_t *b, size_t n, uint16_t misc)
{
    if (n < SAMPLE_ID_LEN || (misc & PERF_RECORD_MISC_SWITCH_OUT))
        return 0;
    const uint8_t *id = b + n - SAMPLE_ID_LEN;
    return sc_rec_switch_in(r, (int32_t)sc_rd32(id + 4), (int64_t)sc_rd64(id + 8));
}

int sc_rec_feed(struct sc_recorder *r, int kind, const void *rec, size_t len)
{
    const uint8_t *p = rec;
    if (len < 8) {
        r->st.bad_records++;
        return 0;
    }
    uint32_t type = sc_rd32(p);
    uint16_t misc, size;
    memcpy(&misc, p + 4, 2);
    memcpy(&size, p + 6, 2);
    if (size < 8 || size > len) {
        r->st.bad_records++;
        return 0;
    }
    r->st.records++;
    int64_t t = sc_rec_time(p, size);
    if (t > r->seen_until)
        r->seen_until = t;
    const uint8_t *b = p + 8;
    size_t n = size - 8u;
    int rc = 0;
    if (kind == REC_RING_SWITCH) {
        /* the switch events ask for samples only; their rings' LOST records say what the
         * kernel dropped */
        if (type == PERF_RECORD_SAMPLE) {
            rc = sc_rec_switch_out(r, b, n);
            if (rc == 1) {
                r->st.bad_records++;
                rc = 0;
            }
        } else if ((type == PERF_RECORD_LOST && n >= 16) ||
                   (type == PERF_RECORD_LOST_SAMPLES && n >= 8)) {
            uint64_t lost = sc_rd64(type == PERF_RECORD_LOST ? b + 8 : b);
            r->st.offcpu_lost += lost;
            r->win_switch_lost += lost;
        }
        return rc;
    }
    switch (type) {
    case PERF_RECORD_SAMPLE:
        rc = on_sample(r, b, n);
        if (rc == 1) {
            r->st.bad_records++;
            rc = 0;
        }
        break;
    case PERF_RECORD_MMAP2:
        on_mmap2(r, b, n, misc);
        break;
    case PERF_RECORD_COMM:
        on_comm(r, b, n, misc);
        break;
    case PERF_RECORD_FORK:
        on_fork(r, b, n);
        break;
    case PERF_RECORD_EXIT:
        on_exit_record(r, b, n);
        break;
    case PERF_RECORD_SWITCH:
    case PERF_RECORD_SWITCH_CPU_WIDE:
        rc = on_switch(r, b, n, misc);
        break;
    case PERF_RECORD_LOST:
        if (n >= 16) {
            r->st.lost += sc_rd64(b + 8);
            r->win_lost += sc_rd64(b + 8);
        }
        break;
    case PERF_RECORD_LOST_SAMPLES:
        if (n >= 8) {
            r->st.lost += sc_rd64(b);
            r->win_lost += sc_rd64(b);
        }
        break;
    default:
        break; /* throttling and records we did not ask for */
    }
    return rc;
}

int sc_recorder_feed(struct sc_recorder *r, const void *rec, size_t len)
{
    return sc_rec_feed(r, REC_RING_CLOCK, rec, len);
}

int sc_recorder_feed_switch(struct sc_recorder *r, const void *rec, size_t len)
{
    return sc_rec_feed(r, REC_RING_SWITCH, rec, len);
}
