/* record_offcpu.c - off-CPU time: sched_switch samples kept per thread until it runs again.
 *
 * The switch events are the sched:sched_switch tracepoint, sampled on every switch away
 * from a thread but the idle task (a filter prev_pid != 0 in the kernel), with sample_type
 * IP | TID | TIME | CPU | PERIOD | CALLCHAIN | RAW [| REGS_USER | STACK_USER]. The sample is
 * written as the thread that leaves (the tracepoint fires before the switch), so its pid,
 * tid, callchain, registers and stack are that thread's, where it blocked:
 *
 *   SAMPLE       u64 ip; u32 pid, tid; u64 time; u32 cpu, res; u64 period (1); u64 nr;
 *                u64 ips[nr]; u32 raw_size; u8 raw[raw_size] (the tracepoint's fields, as
 *                tracefs' events/sched/sched_switch/format lays them out; 4 + raw_size is a
 *                multiple of 8); then the registers and stack copy, as on-CPU samples
 *
 * Of the raw fields only prev_state is read (its offset and size from the format file):
 * bit 0 S (asleep), bit 1 D (uninterruptible) make a blocked span; no state bit of 0-7 (0,
 * or TASK_REPORT_MAX's bit when preempted) a wait for a CPU; T, t, X, Z, P, I (stopped,
 * dead, parked, idle kernel threads) are not counted. The thread's return is the next
 * PERF_RECORD_SWITCH (or _CPU_WIDE) of the cpu-clock events that switches it in
 * (record_events.c); records of all rings are processed in time order, so it comes after
 * the sample.
 *
 * Bounds: one kept stack per thread (a thread is off CPU once at a time), at most
 * SC_RECORD_OFFCPU_THREADS of them and SC_RECORD_OFFCPU_FRAMES frames in all; a kept stack
 * goes when the thread returns, exits, or switches out again without a return seen (lost
 * records), and all of them when the location cache is dropped. */
#include "collect/record_int.h"
#include "model/bytes.h"
#include "model/error.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

/* prev_state's bits, as the tracepoint reports them (the kernel's TASK_REPORT bits) */
#define STATE_BLOCKED 0x03u /* S, D */
#define STATE_SKIPPED 0xfcu /* T, t, X, Z, P, I */

/* ---- the tracepoint ---- */

static int read_small(const char *path, char *buf, size_t n)
{
    FILE *f = fopen(path, "re");
    if (!f)
        return -1;
    size_t k = fread(buf, 1, n - 1, f);
    buf[k] = 0;
    fclose(f);
    return 0;
}

/* prev_state's offset and size from the format file's line
 * "field:long prev_state;	offset:32;	size:8;	signed:1;" */
static int state_field(const char *fmt, uint32_t *off, uint32_t *sz)
{
    const char *p = strstr(fmt, " prev_state;");
    const char *o = p ? strstr(p, "offset:") : NULL;
    const char *s = p ? strstr(p, "size:") : NULL;
    if (!o || !s)
        return -1;
    unsigned a, b;
    if (sscanf(o, "offset:%u", &a) != 1 || sscanf(s, "size:%u", &b) != 1 || (b != 4 && b != 8) ||
        a > 4096)
        return -1;
    *off = a;
    *sz = b;
    return 0;
}

static int try_tracefs(struct sc_recorder *r, const char *dir, int *err_no)
{
    char path[256], buf[16384];
    snprintf(path, sizeof path, "%s/events/sched/sched_switch/id", dir);
    if (read_small(path, buf, sizeof buf)) {
        *err_no = errno;
        return -1;
    }
    char *end;
    unsigned long id = strtoul(buf, &end, 10);
    if (end == buf || id == 0 || id > UINT32_MAX) {
        *err_no = EINVAL;
        return -1;
    }
    r->tp_id = (uint32_t)id;
    snprintf(path, sizeof path, "%s/events/sched/sched_switch/format", dir);
    if (read_small(path, buf, sizeof buf) || state_field(buf, &r->tp_state_off, &r->tp_state_sz)) {
        *err_no = ENOEXEC;
        return -1;
    }
    return 0;
}

static int is_dir(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

int sc_rec_offcpu_setup(struct sc_recorder *r, char *err)
{
    static const char *const dirs[] = {"/sys/kernel/tracing", "/sys/kernel/debug/tracing"};
    int e0 = 0, e1 = 0;
    if (!try_tracefs(r, dirs[0], &e0) || !try_tracefs(r, dirs[1], &e1))
        return 0;
    if (e0 == ENOEXEC || e1 == ENOEXEC)
        return sc_errf(err, SC_EUNSUPPORTED,
                       "cannot read prev_state in '%s/events/sched/sched_switch/format': "
                       "a layout of the sched_switch tracepoint scorch does not know",
                       e0 == ENOEXEC ? dirs[0] : dirs[1]);
    if (e0 == EACCES || e0 == EPERM)
        return sc_errf(err, SC_EAUTH,
                       "--off-cpu needs the sched:sched_switch tracepoint: cannot read "
                       "'%s/events/sched/sched_switch/id': %s (tracefs is root's: run as root)",
                       dirs[0], strerror(e0));
    /* not mounted: mount it where the kernel made room for it */
    const char *why = "";
    char whybuf[160] = "";
    if (!is_dir(dirs[0])) {
        why = "the kernel has no /sys/kernel/tracing (CONFIG_TRACING is off?)";
    } else if (is_dir("/sys/kernel/tracing/events")) {
        why = "tracefs is mounted but has no events/sched/sched_switch (a kernel without "
              "scheduler tracepoints: CONFIG_TRACEPOINTS, CONFIG_FTRACE)";
    } else if (mount("nodev", dirs[0], "tracefs", 0, NULL) != 0) {
        snprintf(whybuf, sizeof whybuf,
                 "tracefs is not mounted on %s and mounting it failed: %s (as root: mount -t "
                 "tracefs nodev %s)",
                 dirs[0], strerror(errno), dirs[0]);
        why = whybuf;
    } else if (!try_tracefs(r, dirs[0], &e0)) {
        return 0;
    } else {
        snprintf(whybuf, sizeof whybuf,
                 "tracefs mounted on %s has no usable events/sched/sched_switch (%s)", dirs[0],
                 strerror(e0));
        why = whybuf;
    }
    return sc_errf(err, SC_EUNSUPPORTED, "--off-cpu needs the sched:sched_switch tracepoint: %s",
                   why);
}

/* ---- kept stacks ---- */

static struct rec_offcpu *find(struct sc_recorder *r, int32_t tid)
{
    uint32_t *slot = sc_map64_get(&r->off_index, (uint32_t)tid);
    return slot && *slot < r->noff ? &r->off[*slot] : NULL;
}

/* Removes r->off[i], moving the last one into its place. */
static void remove_at(struct sc_recorder *r, uint32_t i)
{
    struct rec_offcpu *o = &r->off[i];
    uint32_t *slot = sc_map64_get(&r->off_index, (uint32_t)o->tid);
    if (slot)
        *slot = UINT32_MAX - 1; /* none (UINT32_MAX marks an empty slot) */
    r->off_frames -= o->n;
    free(o->locs);
    if (i + 1 < r->noff) {
        r->off[i] = r->off[r->noff - 1];
        slot = sc_map64_get(&r->off_index, (uint32_t)r->off[i].tid);
        if (slot)
            *slot = i;
    }
    r->noff--;
}

static void dropped(struct sc_recorder *r)
{
    r->st.offcpu_dropped++;
    r->win_dropped++;
}

int sc_rec_switch_out(struct sc_recorder *r, const uint8_t *b, size_t n)
{
    if (n < 48)
        return 1;
    int32_t pid = (int32_t)sc_rd32(b + 8), tid = (int32_t)sc_rd32(b + 12);
    int64_t time = (int64_t)sc_rd64(b + 16);
    uint64_t nr = sc_rd64(b + 40);
    if (nr > (n - 48) / 8)
        return 1;
    const uint8_t *ips = b + 48, *raw = ips + 8 * nr;
    size_t left = n - 48 - 8 * nr;
    if (left < 4)
        return 1;
    uint32_t raw_size = sc_rd32(raw);
    if (raw_size > left - 4 || r->tp_state_off + r->tp_state_sz > raw_size)
        return 1;
    uint64_t state = r->tp_state_sz == 8 ? sc_rd64(raw + 4 + r->tp_state_off)
                                         : sc_rd32(raw + 4 + r->tp_state_off);
    r->st.switches++;
    if (tid == 0 || (!(state & STATE_BLOCKED) && (state & STATE_SKIPPED)))
        return 0; /* the idle task (when the filter is missing), or not waiting for anything */
    /* an earlier stack of the thread whose return was not seen: its span is unknown */
    const struct rec_offcpu *old = find(r, tid);
    if (old) {
        dropped(r);
        remove_at(r, (uint32_t)(old - r->off));
    }
    uint32_t locs[SC_REC_MAX_FRAMES], nlocs, nkernel, whole;
    int rc = sc_rec_stack_of(r, pid, ips, nr, raw + 4 + raw_size, left - 4 - raw_size, locs, &nlocs,
                             &nkernel, &whole);
    if (rc)
        return rc;
    if (r->noff >= SC_RECORD_OFFCPU_THREADS || r->off_frames + nlocs > SC_RECORD_OFFCPU_FRAMES) {
        dropped(r);
        return 0;
    }
    if (sc_grow_array(&r->off, &r->offcap, (uint64_t)r->noff + 1, sizeof *r->off))
        return SC_ENOMEM;
    int added;
    uint32_t *slot = sc_map64_upsert(&r->off_index, (uint32_t)tid, r->noff, &added);
    if (!slot)
        return SC_ENOMEM;
    struct rec_offcpu *o = &r->off[r->noff];
    o->locs = malloc((size_t)nlocs * sizeof *o->locs);
    if (!o->locs) {
        *slot = UINT32_MAX - 1;
        return SC_ENOMEM;
    }
    *slot = r->noff++;
    memcpy(o->locs, locs, (size_t)nlocs * sizeof *o->locs);
    o->pid = pid;
    o->tid = tid;
    o->since = o->counted = time;
    o->n = nlocs;
    o->nkernel = nkernel;
    o->whole = whole;
    o->kind = state & STATE_BLOCKED ? REC_BLOCKED : REC_RUNQUEUE;
    r->off_frames += nlocs;
    return 0;
}

/* The span [o->counted, until) of o into the window, when o's whole span so far is long
 * enough; 0 or SC_ENOMEM. */
/* to - from in ns, 0 when to is not later; exact for any pair of times a hostile ring
 * holds (the difference of two int64 fits a uint64). */
static uint64_t span_ns(int64_t from, int64_t to)
{
    return to > from ? (uint64_t)to - (uint64_t)from : 0;
}

static int count_span(struct sc_recorder *r, struct rec_offcpu *o, int64_t until, int last)
{
    if (until <= o->counted)
        return 0;
    uint64_t whole = span_ns(o->since, until);
    if (whole < (uint64_t)r->offcpu_min) {
        if (last) {
            r->st.offcpu_short++;
            r->st.offcpu_short_ns += whole;
            r->win_short++;
            r->win_short_ns += whole;
        }
        return 0;
    }
    uint64_t ns = span_ns(o->counted, until);
    int rc = sc_rec_add_sample(r, o->pid, o->tid, o->locs, o->n, o->nkernel, o->whole, until, ns,
                               o->kind);
    if (rc)
        return rc;
    o->counted = until;
    if (o->kind == REC_BLOCKED)
        r->st.offcpu_ns += ns;
    else
        r->st.runqueue_ns += ns;
    return 0;
}

int sc_rec_switch_in(struct sc_recorder *r, int32_t tid, int64_t time)
{
    struct rec_offcpu *o = find(r, tid);
    if (!o)
        return 0;
    int rc = count_span(r, o, time, 1);
    if (!rc && span_ns(o->since, time) >= (uint64_t)r->offcpu_min)
        r->st.offcpu_spans++;
    remove_at(r, (uint32_t)(o - r->off));
    return rc;
}

void sc_rec_offcpu_exit(struct sc_recorder *r, int32_t tid)
{
    struct rec_offcpu *o = find(r, tid);
    if (o)
        remove_at(r, (uint32_t)(o - r->off));
}

int sc_rec_offcpu_flush(struct sc_recorder *r)
{
    for (uint32_t i = 0; i < r->noff; i++) {
        int rc = count_span(r, &r->off[i], r->seen_until, 0);
        if (rc)
            return rc;
    }
    /* the index keeps the key of every thread that was ever off CPU: rebuilt from the
     * live ones when those are few */
    if (r->off_index.count > 2 * r->noff + 4096) {
        sc_map64_release(&r->off_index);
        for (uint32_t i = 0; i < r->noff; i++)
            if (!sc_map64_upsert(&r->off_index, (uint32_t)r->off[i].tid, i, NULL))
                return SC_ENOMEM;
    }
    return 0;
}

void sc_rec_offcpu_drop(struct sc_recorder *r)
{
    for (uint32_t i = 0; i < r->noff; i++)
        free(r->off[i].locs);
    r->st.offcpu_dropped += r->noff;
    r->noff = 0;
    r->off_frames = 0;
    sc_map64_release(&r->off_index);
}

void sc_rec_offcpu_release(struct sc_recorder *r)
{
    sc_rec_offcpu_drop(r);
    free(r->off);
    r->off = NULL;
    r->offcap = 0;
}
