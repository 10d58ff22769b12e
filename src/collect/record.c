/* record.c - perf_event_open, one ring buffer per CPU, reading records in time order.
 *
 * Events. The cpu-clock software event in frequency mode, sample_type IP | TID | TIME |
 * CPU | PERIOD | CALLCHAIN, and with unwinding on REGS_USER (the registers unwinding
 * starts from) | STACK_USER (stack_bytes of the user stack), times on CLOCK_MONOTONIC
 * (use_clockid), side-band records
 * (mmap2, comm with comm_exec, task: fork and exit) with sample_id_all so that every
 * record carries its time. -a: one event per online CPU for every process (pid -1).
 * -p: one event per thread and CPU with inherit, so that threads and children the process
 * starts later are sampled too; the events of a CPU write into the ring of the first one
 * (PERF_EVENT_IOC_SET_OUTPUT). Threads born while the events are being opened are caught
 * by listing /proc/PID/task again until nothing new appears (a thread seen in a FORK
 * record inherited an event already and is not opened twice).
 *
 * Off CPU (record_offcpu.c). With off_cpu, a second event per CPU (or per thread and CPU):
 * the sched:sched_switch tracepoint, every switch (sample_period 1), prev_pid != 0 filtered
 * in the kernel, with the same callchain, registers and stack copy and its raw fields, into
 * rings of its own (its samples' layout differs: a ring says how to read its records); the
 * cpu-clock events get context_switch, whose SWITCH records say when a thread runs again.
 *
 * Rings. Per CPU a metadata page and ring_pages data pages, read when half full (the
 * wakeup watermark) or when the caller's poll times out; the reader copies each record out
 * (records wrap around the end), advances data_tail, and processes the records of all
 * rings sorted by time, up to the moment it started reading: anything later may still be
 * preceded by a record another CPU has not written yet, and waits for the next round. */
#include "collect/record_int.h"
#include "model/error.h"

#include <dirent.h>
#include <errno.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define MAX_CPUS 4096
#define MAX_RING_BYTES (64u << 20)

uint32_t sc_record_ring_pages(uint32_t frequency, uint32_t stack_bytes)
{
    uint64_t bytes = (uint64_t)(frequency ? frequency : 99) * (1024 + stack_bytes);
    uint32_t pages = 8;
    while (pages < 512 && (uint64_t)pages * 4096 < bytes)
        pages *= 2;
    return pages;
}

static int read_int(const char *path, int dflt)
{
    FILE *f = fopen(path, "re");
    int v = dflt;
    if (f) {
        if (fscanf(f, "%d", &v) != 1)
            v = dflt;
        fclose(f);
    }
    return v;
}

/* The online CPUs (/sys/devices/system/cpu/online: "0-3,5"), at most max. */
static uint32_t online_cpus(int *cpus, uint32_t max)
{
    char buf[4096] = "";
    FILE *f = fopen("/sys/devices/system/cpu/online", "re");
    if (f) {
        if (!fgets(buf, sizeof buf, f))
            buf[0] = 0;
        fclose(f);
    }
    uint32_t n = 0;
    for (char *p = buf; *p && *p != '\n' && n < max;) {
        char *end;
        long a = strtol(p, &end, 10), b = a;
        if (end == p)
            break;
        p = end;
        if (*p == '-') {
            b = strtol(p + 1, &end, 10);
            p = end;
        }
        for (long c = a; c <= b && n < max; c++)
            cpus[n++] = (int)c;
        if (*p == ',')
            p++;
    }
    if (n == 0) {
        long c = sysconf(_SC_NPROCESSORS_ONLN);
        for (long i = 0; i < c && n < max; i++)
            cpus[n++] = (int)i;
    }
    return n;
}

/* CLOCK_REALTIME - CLOCK_MONOTONIC, read as tightly as we can. */
static int64_t mono_to_real(void)
{
    int64_t best = 0, span = INT64_MAX;
    for (int i = 0; i < 5; i++) {
        int64_t a = sc_mono_ns(), t = sc_wall_ns(), b = sc_mono_ns();
        if (b - a < span) {
            span = b - a;
            best = t - (a + (b - a) / 2);
        }
    }
    return best;
}

static int recorder_alloc(const struct sc_record_opts *o, struct sc_recorder **out, char *err)
{
    struct sc_recorder *r = calloc(1, sizeof *r);
    if (!r)
        return sc_errf(err, SC_ENOMEM, "out of memory");
    r->o = *o;
    if (!r->o.frequency)
        r->o.frequency = 99;
    if (!sc_rec_unwind_arch())
        r->o.unwind = SC_RECORD_UNWIND_FP; /* no unwinding for this machine's registers */
    if (r->o.unwind == SC_RECORD_UNWIND_FP)
        r->o.stack_bytes = 0;
    else if (!r->o.stack_bytes)
        r->o.stack_bytes = SC_RECORD_STACK_BYTES;
    else if (r->o.stack_bytes > SC_RECORD_STACK_MAX)
        r->o.stack_bytes = SC_RECORD_STACK_MAX;
    r->o.stack_bytes &= ~7u;
    if (!r->o.ring_pages)
        r->o.ring_pages = sc_record_ring_pages(r->o.frequency, r->o.stack_bytes);
    /* switches come by the thousand a second on a busy machine, each with its stack copy
     * (32 KiB): four times the cpu-clock ring, 8 MiB, holds a quarter of a second of 1,000
     * switches a second per CPU, enough to ride out a reader busy loading unwind tables */
    r->switch_pages = r->o.ring_pages * 4 < 2048 ? r->o.ring_pages * 4 : 2048;
    r->user_only = o->no_kernel;
    r->offcpu_min = o->off_cpu_min_ns == 0  ? SC_RECORD_OFFCPU_MIN_NS
                    : o->off_cpu_min_ns < 0 ? 0
                                            : o->off_cpu_min_ns;
    r->tp_state_off = 32; /* the layout of x86-64 and arm64 since Linux 4.14, for offline */
    r->tp_state_sz = 8;
    r->mono_to_real = mono_to_real();
    r->win_start = sc_mono_ns();
    int rc = sc_symbolizer_new(&o->sym, &r->sym, err);
    if (!rc && r->o.unwind != SC_RECORD_UNWIND_FP)
        rc = sc_unwind_cache_new(r->o.unwind_bytes, NULL, &r->uw, err);
    if (!rc)
        rc = sc_rec_init_tables(r, err);
    if (rc) {
        sc_recorder_close(r);
        return rc;
    }
    *out = r;
    return 0;
}

int sc_recorder_new_offline(const struct sc_record_opts *o, struct sc_recorder **out, char *err)
{
    int rc = recorder_alloc(o, out, err);
    if (!rc) {
        (*out)->offline = 1;
        (*out)->mono_to_real = 0;
    }
    return rc;
}

/* ---- opening ---- */

static void fill_attr(const struct sc_recorder *r, int inherit, int kind, struct perf_event_attr *a)
{
    memset(a, 0, sizeof *a);
    a->size = sizeof *a;
    a->sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU |
                     PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN;
    if (kind == REC_RING_SWITCH) {
        a->type = PERF_TYPE_TRACEPOINT;
        a->config = r->tp_id;
        a->sample_period = 1;
        a->sample_type |= PERF_SAMPLE_RAW;
    } else {
        a->type = PERF_TYPE_SOFTWARE;
        a->config = PERF_COUNT_SW_CPU_CLOCK;
        a->freq = 1;
        a->sample_freq = r->o.frequency;
        /* side-band records once, with the cpu-clock events */
        a->mmap = a->mmap2 = a->comm = a->comm_exec = a->task = 1;
        a->context_switch = r->o.off_cpu != 0;
    }
    if (r->o.unwind != SC_RECORD_UNWIND_FP) {
        a->sample_type |= PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
        a->sample_regs_user = sc_rec_unwind_arch()->mask;
        a->sample_stack_user = r->o.stack_bytes;
    }
    a->sample_id_all = 1;
    a->inherit = (unsigned)inherit;
    a->exclude_kernel = a->exclude_callchain_kernel = (unsigned)r->user_only;
    a->exclude_hv = 1;
    a->use_clockid = 1;
    a->clockid = CLOCK_MONOTONIC;
    a->watermark = 1;
    a->wakeup_watermark = (kind == REC_RING_SWITCH ? r->switch_pages : r->o.ring_pages) * 4096u / 2;
    int max = read_int("/proc/sys/kernel/perf_event_max_stack", 127);
    a->sample_max_stack = (uint16_t)(max > 0 && max < 1024 ? max : 127);
}

static int perf_open(struct perf_event_attr *a, pid_t pid, int cpu)
{
    return (int)syscall(SYS_perf_event_open, a, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
}

/* The one-line reason perf events cannot be opened, with what to do about it. */
static int open_error(const struct sc_recorder *r, int e, char *err)
{
    int paranoid = read_int("/proc/sys/kernel/perf_event_paranoid", -100);
    char what[64];
    if (r->o.pid > 0)
        snprintf(what, sizeof what, "process %d", (int)r->o.pid);
    else
        snprintf(what, sizeof what, "all CPUs (-a)");
    switch (e) {
    case EACCES:
    case EPERM:
        if (geteuid() == 0)
            return sc_errf(err, SC_EAUTH,
                           "cannot open perf events for %s: %s, even as root "
                           "(kernel.perf_event_paranoid is %d): a seccomp filter or the "
                           "container forbids perf_event_open",
                           what, strerror(e), paranoid);
        return sc_errf(err, SC_EAUTH,
                       "cannot open perf events for %s: %s (kernel.perf_event_paranoid is "
                       "%d): run as root or with CAP_PERFMON, or sysctl "
                       "kernel.perf_event_paranoid=%d",
                       what, strerror(e), paranoid, r->o.pid > 0 ? 1 : 0);
    case ESRCH:
        return sc_errf(err, SC_ENOTFOUND, "no process %d", (int)r->o.pid);
    case ENOENT:
    case ENODEV:
    case EOPNOTSUPP:
        return sc_errf(err, SC_EUNSUPPORTED, "this kernel has no cpu-clock perf event (%s)",
                       strerror(e));
    case ENOSYS:
        return sc_errf(err, SC_EUNSUPPORTED,
                       "this kernel has no perf events (CONFIG_PERF_EVENTS is off)");
    case EMFILE:
    case ENFILE:
        return sc_errf(err, SC_ELIMIT,
                       "cannot open perf events for %s: too many open files (raise ulimit -n)",
                       what);
    default:
        return sc_errf(err, SC_EIO, "cannot open perf events for %s: %s", what, strerror(e));
    }
}

static int keep_fd(struct sc_recorder *r, int fd)
{
    if (sc_grow_array(&r->fds, &r->fdcap, (uint64_t)r->nfds + 1, sizeof *r->fds)) {
        close(fd);
        return SC_ENOMEM;
    }
    r->fds[r->nfds++] = fd;
    r->st.events = r->nfds;
    return 0;
}

/* Maps fd as ring i, halving the size while the locked-memory limit refuses it. */
static int map_ring(struct sc_recorder *r, struct rec_ring *g, int fd, char *err)
{
    uint32_t pages = g->kind == REC_RING_SWITCH ? r->switch_pages : r->o.ring_pages;
    size_t ps = (size_t)sysconf(_SC_PAGESIZE);
    for (;;) {
        size_t len = (size_t)(pages + 1) * ps;
        void *base = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (base != MAP_FAILED) {
            g->fd = fd;
            g->base = base;
            g->map_len = len;
            g->data = (uint8_t *)base + ps;
            g->size = (uint64_t)pages * ps;
            if (g->kind == REC_RING_CLOCK)
                r->st.ring_pages = pages;
            return 0;
        }
        if (errno != EPERM || pages <= 2)
            return sc_errf(err, SC_EIO,
                           "cannot map a %u-page perf ring buffer: %s (kernel.perf_event_mlock_kb "
                           "is %d)",
                           pages, strerror(errno),
                           read_int("/proc/sys/kernel/perf_event_mlock_kb", -1));
        pages /= 2;
    }
}

/* Why the sched_switch event cannot be opened. */
static int switch_error(int e, char *err)
{
    if (e == EACCES || e == EPERM)
        return sc_errf(err, SC_EAUTH,
                       "cannot open the sched:sched_switch tracepoint for --off-cpu: %s "
                       "(kernel.perf_event_paranoid is %d): its raw fields need root or "
                       "CAP_PERFMON, or sysctl kernel.perf_event_paranoid=-1",
                       strerror(e), read_int("/proc/sys/kernel/perf_event_paranoid", -100));
    return sc_errf(err, SC_EUNSUPPORTED,
                   "cannot open the sched:sched_switch tracepoint for --off-cpu: %s", strerror(e));
}

/* Opens the event of a kind of (pid, ring i): the ring's own when it has none yet, else one
 * that writes into it. -1 with errno when the kernel refuses. */
static int open_event(struct sc_recorder *r, int kind, pid_t pid, uint32_t i, int inherit,
                      char *err, int *rc)
{
    struct perf_event_attr a;
    fill_attr(r, inherit, kind, &a);
    int fd = perf_open(&a, pid, r->rings[i].cpu);
    *rc = 0;
    if (fd < 0)
        return -1;
    if ((*rc = keep_fd(r, fd)))
        return fd;
    /* the idle task's switches are half of all on an idle machine: not sampled (a kernel
     * that refuses the filter gives them, and they are skipped when read) */
    if (kind == REC_RING_SWITCH)
        ioctl(fd, PERF_EVENT_IOC_SET_FILTER, "prev_pid != 0");
    if (r->rings[i].fd < 0)
        *rc = map_ring(r, &r->rings[i], fd, err);
    else if (ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, r->rings[i].fd) != 0)
        *rc = sc_errf(err, SC_EIO, "cannot share a perf ring buffer: %s", strerror(errno));
    return fd;
}

/* The events of (pid, CPU i): cpu-clock, and with off_cpu sched_switch into the CPU's
 * switch ring. -1 with errno when the kernel refuses the first; a refused second is an
 * error in *rc. */
static int open_on_ring(struct sc_recorder *r, pid_t pid, uint32_t i, int inherit, char *err,
                        int *rc)
{
    int fd = open_event(r, REC_RING_CLOCK, pid, i, inherit, err, rc);
    if (fd < 0 || *rc || !r->o.off_cpu)
        return fd;
    if (open_event(r, REC_RING_SWITCH, pid, r->ncpus + i, inherit, err, rc) < 0) {
        if (errno == ESRCH || errno == ENODEV)
            return -1; /* the thread ended, the CPU went: as for the first */
        *rc = switch_error(errno, err);
    }
    return fd;
}

static int open_all_cpus(struct sc_recorder *r, char *err)
{
    for (uint32_t i = 0; i < r->ncpus; i++) {
        int rc;
        if (open_on_ring(r, -1, i, 0, err, &rc) < 0) {
            if (errno == ENODEV)
                continue; /* a CPU that went offline */
            return open_error(r, errno, err);
        }
        if (rc)
            return rc;
    }
    return 0;
}

/* Opens events for the threads of the process not yet opened nor forked from one that
 * is. Sets *opened to how many. */
static int open_threads(struct sc_recorder *r, struct sc_map64 *done, uint32_t *opened, char *err)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/task", (int)r->o.pid);
    DIR *d = opendir(path);
    *opened = 0;
    if (!d)
        return 0;
    struct dirent *de;
    int rc = 0;
    while (!rc && (de = readdir(d))) {
        char *end;
        long tid = strtol(de->d_name, &end, 10);
        if (*end || tid <= 0 || sc_map64_get(done, (uint64_t)tid) ||
            sc_map64_get(&r->forked, (uint64_t)tid))
            continue;
        for (uint32_t i = 0; !rc && i < r->ncpus; i++) {
            int e = 0;
            if (open_on_ring(r, (pid_t)tid, i, 1, err, &e) < 0) {
                if (errno == ESRCH)
                    break; /* the thread ended meanwhile */
                if (errno == ENODEV)
                    continue;
                if ((errno == EACCES || errno == EPERM) && !r->user_only && r->nfds == 0 &&
                    read_int("/proc/sys/kernel/perf_event_paranoid", 2) >= 2) {
                    /* unprivileged: user frames of one's own processes are allowed */
                    r->user_only = 1;
                    i--;
                    continue;
                }
                rc = open_error(r, errno, err);
            }
            rc = rc ? rc : e;
        }
        if (!rc && !sc_map64_upsert(done, (uint64_t)tid, 0, NULL))
            rc = sc_errf(err, SC_ENOMEM, "out of memory");
        (*opened)++;
    }
    closedir(d);
    return rc;
}

static int open_process(struct sc_recorder *r, char *err)
{
    struct sc_map64 done;
    sc_map64_init(&done);
    int rc = 0;
    uint32_t total = 0;
    for (int pass = 0; pass < 16 && !rc; pass++) {
        uint32_t n;
        rc = open_threads(r, &done, &n, err);
        total += n;
        if (rc || n == 0)
            break;
        rc = sc_recorder_drain(r, err); /* FORK records say who inherited an event */
    }
    sc_map64_release(&done);
    if (!rc && (total == 0 || r->nfds == 0))
        rc = open_error(r, ESRCH, err);
    sc_map64_release(&r->forked);
    return rc;
}

int sc_recorder_open(const struct sc_record_opts *o, struct sc_recorder **out, char *err)
{
    struct sc_recorder *r;
    int rc = recorder_alloc(o, &r, err);
    if (rc)
        return rc;
    /* an event per thread and CPU: many descriptors for big processes */
    struct rlimit rl;
    if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
    if (o->off_cpu && (rc = sc_rec_offcpu_setup(r, err))) {
        sc_recorder_close(r);
        return rc;
    }
    int cpus[MAX_CPUS];
    uint32_t ncpu = online_cpus(cpus, MAX_CPUS), kinds = o->off_cpu ? 2 : 1;
    r->rings = calloc((size_t)ncpu * kinds, sizeof *r->rings);
    r->pfds = calloc((size_t)ncpu * kinds, sizeof *r->pfds);
    if (!r->rings || !r->pfds) {
        sc_recorder_close(r);
        return sc_errf(err, SC_ENOMEM, "out of memory");
    }
    r->ncpus = ncpu;
    r->nrings = ncpu * kinds;
    /* stack copies make rings big: on a machine of many CPUs, all of them stay under
     * MAX_RING_BYTES of locked memory (fewer pages, read as often) */
    while (!o->ring_pages && r->o.ring_pages > 8 &&
           (uint64_t)(r->o.ring_pages + (o->off_cpu ? r->switch_pages : 0)) * 4096 * ncpu >
               MAX_RING_BYTES) {
        r->o.ring_pages /= 2;
        r->switch_pages /= 2;
    }
    for (uint32_t i = 0; i < r->nrings; i++) {
        r->rings[i].fd = -1;
        r->rings[i].cpu = cpus[i % ncpu];
        r->rings[i].kind = i < ncpu ? REC_RING_CLOCK : REC_RING_SWITCH;
    }
    rc = o->pid > 0 ? open_process(r, err) : open_all_cpus(r, err);
    if (rc) {
        sc_recorder_close(r);
        return rc;
    }
    uint32_t k = 0, clocks = 0;
    for (uint32_t i = 0; i < r->nrings; i++)
        if (r->rings[i].fd >= 0) {
            r->rings[k] = r->rings[i];
            r->pfds[k].fd = r->rings[k].fd;
            r->pfds[k].events = POLLIN;
            clocks += r->rings[k].kind == REC_RING_CLOCK;
            k++;
        }
    r->nrings = k;
    r->st.cpus = clocks;
    *out = r;
    return 0;
}

void sc_recorder_close(struct sc_recorder *r)
{
    if (!r)
        return;
    for (uint32_t i = 0; i < r->nrings; i++)
        if (r->rings[i].base)
            munmap(r->rings[i].base, r->rings[i].map_len);
    for (uint32_t i = 0; i < r->nfds; i++)
        close(r->fds[i]);
    free(r->rings);
    free(r->pfds);
    free(r->fds);
    sc_buf_release(&r->batch);
    free(r->refs);
    sc_rec_release_tables(r);
    sc_symbolizer_free(r->sym);
    sc_unwind_cache_free(r->uw);
    free(r);
}

/* ---- reading ---- */

/* Copies n bytes at ring position pos (which may wrap) to dst. */
static void ring_copy(const struct rec_ring *g, uint64_t pos, void *dst, size_t n)
{
    uint64_t off = pos & (g->size - 1);
    size_t first = n < g->size - off ? n : (size_t)(g->size - off);
    memcpy(dst, g->data + off, first);
    if (first < n)
        memcpy((uint8_t *)dst + first, g->data, n - first);
}

static int read_ring(struct sc_recorder *r, struct rec_ring *g)
{
    struct perf_event_mmap_page *m = g->base;
    uint64_t head = __atomic_load_n(&m->data_head, __ATOMIC_ACQUIRE);
    uint64_t tail = m->data_tail;
    int rc = 0;
    while (tail < head) {
        struct perf_event_header h;
        ring_copy(g, tail, &h, sizeof h);
        if (h.size < sizeof h || h.size > head - tail) {
            r->st.bad_records++;
            tail = head; /* cannot happen with a sane kernel; resynchronise at head */
            break;
        }
        if (sc_buf_reserve(&r->batch, h.size) ||
            sc_grow_array(&r->refs, &r->refcap, (uint64_t)r->nrefs + 1, sizeof *r->refs)) {
            rc = SC_ENOMEM;
            break;
        }
        uint8_t *dst = (uint8_t *)r->batch.data + r->batch.len;
        ring_copy(g, tail, dst, h.size);
        r->refs[r->nrefs++] = (struct rec_ref){sc_rec_time(dst, h.size), r->seq++,
                                               (uint32_t)r->batch.len, h.size, (uint32_t)g->kind};
        r->batch.len += h.size;
        tail += h.size;
    }
    __atomic_store_n(&m->data_tail, tail, __ATOMIC_RELEASE);
    return rc;
}

static int cmp_ref(const void *a, const void *b)
{
    const struct rec_ref *x = a, *y = b;
    if (x->time != y->time)
        return x->time < y->time ? -1 : 1;
    return (x->seq > y->seq) - (x->seq < y->seq);
}

/* Reads every ring, then processes the records older than `before` in time order and keeps
 * the rest for later. */
static int read_and_process(struct sc_recorder *r, int64_t before, char *err)
{
    int rc = 0;
    int64_t now = sc_mono_ns();
    for (uint32_t i = 0; !rc && i < r->nrings; i++)
        rc = read_ring(r, &r->rings[i]);
    if (rc)
        return sc_errf(err, rc, "reading the perf rings: out of memory");
    if (r->batch.len > UINT32_MAX / 2)
        before = INT64_MAX; /* never expected: process everything rather than overflow */
    qsort(r->refs, r->nrefs, sizeof *r->refs, cmp_ref);
    struct sc_buf keep = SC_BUF_INIT;
    uint32_t k = 0;
    for (uint32_t i = 0; i < r->nrefs; i++) {
        struct rec_ref ref = r->refs[i];
        if (ref.time >= before) {
            r->refs[k] = ref;
            r->refs[k++].off = (uint32_t)keep.len;
            sc_buf_append(&keep, r->batch.data + ref.off, ref.len);
            continue;
        }
        if (!rc)
            rc = sc_rec_feed(r, (int)ref.kind, r->batch.data + ref.off, ref.len);
    }
    /* every record before this is processed: threads still off CPU were so until then */
    int64_t upto = before < now ? before : now;
    if (upto > r->seen_until)
        r->seen_until = upto;
    r->nrefs = k;
    sc_buf_release(&r->batch);
    r->batch = keep;
    if (keep.oom || rc)
        return sc_errf(err, SC_ENOMEM, "processing records: out of memory");
    return 0;
}

static int process_gone(const struct sc_recorder *r)
{
    return r->o.pid > 0 && kill(r->o.pid, 0) != 0 && errno == ESRCH;
}

int sc_recorder_poll(struct sc_recorder *r, int timeout_ms, char *err)
{
    if (r->offline || r->nrings == 0)
        return 0;
    if (poll(r->pfds, r->nrings, timeout_ms) < 0 && errno != EINTR)
        return sc_errf(err, SC_EIO, "poll: %s", strerror(errno));
    int gone = process_gone(r);
    int rc = read_and_process(r, gone ? INT64_MAX : sc_mono_ns(), err);
    if (!rc && gone)
        rc = SC_ENOTFOUND;
    return rc;
}

int sc_recorder_drain(struct sc_recorder *r, char *err)
{
    if (r->offline)
        return 0;
    return read_and_process(r, INT64_MAX, err);
}

int sc_recorder_take(struct sc_recorder *r, struct sc_profile **out, int64_t *from_ns,
                     int64_t *until_ns, char *err)
{
    int64_t now = sc_mono_ns();
    int rc = sc_rec_take(r, out, err);
    if (rc)
        return rc;
    (*out)->time_nanos = r->win_start + r->mono_to_real;
    (*out)->duration_nanos = now - r->win_start;
    if (from_ns)
        *from_ns = r->win_start + r->mono_to_real;
    if (until_ns)
        *until_ns = now + r->mono_to_real;
    r->win_start = now;
    if (sc_rec_new_window(r)) {
        sc_profile_free(*out);
        *out = NULL;
        return sc_errf(err, SC_ENOMEM, "out of memory");
    }
    sc_rec_after_take(r);
    return 0;
}

void sc_recorder_stats(struct sc_recorder *r, struct sc_record_stats *st)
{
    *st = r->st;
    st->user_only = r->user_only;
    st->processes = r->nprocs - r->dead_procs;
    st->threads = r->ntasks - r->dead_tasks;
    st->locations = r->nlocs;
    sc_symbolizer_stats(r->sym, &st->sym);
    if (r->uw)
        sc_unwind_cache_stats(r->uw, &st->uw);
}

static int cmp_trunc(const void *a, const void *b)
{
    const struct rec_trunc *x = a, *y = b;
    if (x->count != y->count)
        return x->count > y->count ? -1 : 1;
    return (x->dso > y->dso) - (x->dso < y->dso);
}

void sc_recorder_unsymbolized(struct sc_recorder *r,
                              void (*cb)(void *ctx, const char *dso, uint64_t count,
                                         const char *why),
                              void *ctx)
{
    struct rec_trunc *v = malloc(((size_t)r->nunsym + 1) * sizeof *v);
    if (!v)
        return;
    if (r->nunsym)
        memcpy(v, r->unsym, (size_t)r->nunsym * sizeof *v);
    qsort(v, r->nunsym, sizeof *v, cmp_trunc);
    for (uint32_t i = 0; i < r->nunsym; i++) {
        struct sc_dso_info di;
        sc_symbolizer_info(r->sym, v[i].dso, &di);
        cb(ctx, di.path, v[i].count, di.symbols);
    }
    free(v);
}

void sc_recorder_truncated(struct sc_recorder *r,
                           void (*cb)(void *ctx, const char *dso, uint64_t count), void *ctx)
{
    struct rec_trunc *v = malloc(((size_t)r->ntrunc + 1) * sizeof *v);
    if (!v)
        return;
    if (r->ntrunc)
        memcpy(v, r->trunc, (size_t)r->ntrunc * sizeof *v);
    qsort(v, r->ntrunc, sizeof *v, cmp_trunc);
    for (uint32_t i = 0; i < r->ntrunc; i++) {
        struct sc_dso_info di;
        sc_symbolizer_info(r->sym, v[i].dso, &di);
        cb(ctx, di.path, v[i].count);
    }
    free(v);
}
