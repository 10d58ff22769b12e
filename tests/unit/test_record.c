/* test_record.c - the sampler's record processing and symbolization, fed hand-made records. */
#include "t.h"

#include "collect/elfsym.h"
#include "collect/record.h"
#include "collect/symbols.h"
#include "collect/symtab.h"
#include "formats/folded.h"
#include "formats/pprof.h"
#include "model/error.h"
#include "config/config.h"

#include <linux/perf_event.h>
#include <stdint.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

/* Functions of this binary for the records to point at. thread_start is one of the names a
 * whole stack starts with. */
int t_leaf(int x);
int t_caller(int x);
int thread_start(int x);
__attribute__((noinline, used)) int t_leaf(int x)
{
    volatile int a[4] = {x, x + 1, x + 2, x + 3};
    return a[0] + a[3];
}
__attribute__((noinline, used)) int t_caller(int x)
{
    return t_leaf(x) + 1;
}
__attribute__((noinline, used)) int thread_start(int x)
{
    return t_caller(x) + 1;
}

/* ---- records ---- */

struct rec {
    uint8_t b[4096];
    size_t n;
};

static void put(struct rec *r, const void *p, size_t n)
{
    memcpy(r->b + r->n, p, n);
    r->n += n;
}
static void put32(struct rec *r, uint32_t v)
{
    put(r, &v, 4);
}
static void put64(struct rec *r, uint64_t v)
{
    put(r, &v, 8);
}
static void begin(struct rec *r, uint32_t type, uint16_t misc)
{
    r->n = 0;
    put32(r, type);
    uint16_t z = 0;
    put(r, &misc, 2);
    put(r, &z, 2);
}
/* The sample_id trailer, and the header's size. */
static void end(struct rec *r, int32_t pid, int32_t tid, uint64_t time)
{
    put32(r, (uint32_t)pid);
    put32(r, (uint32_t)tid);
    put64(r, time);
    put64(r, 0);
    uint16_t size = (uint16_t)r->n;
    memcpy(r->b + 6, &size, 2);
}
static void str_padded(struct rec *r, const char *s)
{
    size_t n = strlen(s) + 1;
    put(r, s, n);
    while (r->n % 8)
        r->b[r->n++] = 0;
}

static void feed(struct sc_recorder *rc, struct rec *r)
{
    T_EQ_INT(sc_recorder_feed(rc, r->b, r->n), 0);
}

static void comm(struct sc_recorder *rc, int32_t pid, int32_t tid, const char *name, int exec,
                 uint64_t t)
{
    struct rec r;
    begin(&r, PERF_RECORD_COMM, exec ? PERF_RECORD_MISC_COMM_EXEC : 0);
    put32(&r, (uint32_t)pid);
    put32(&r, (uint32_t)tid);
    str_padded(&r, name);
    end(&r, pid, tid, t);
    feed(rc, &r);
}

static void mmap2(struct sc_recorder *rc, int32_t pid, uint64_t addr, uint64_t len, uint64_t pgoff,
                  uint32_t maj, uint32_t min, uint64_t ino, const char *path, uint64_t t)
{
    struct rec r;
    begin(&r, PERF_RECORD_MMAP2, 0);
    put32(&r, (uint32_t)pid);
    put32(&r, (uint32_t)pid);
    put64(&r, addr);
    put64(&r, len);
    put64(&r, pgoff);
    put32(&r, maj);
    put32(&r, min);
    put64(&r, ino);
    put64(&r, 0);
    put32(&r, 5); /* PROT_READ | PROT_EXEC */
    put32(&r, 2);
    str_padded(&r, path);
    end(&r, pid, pid, t);
    feed(rc, &r);
}

static void task(struct sc_recorder *rc, uint32_t type, int32_t pid, int32_t ppid, int32_t tid,
                 int32_t ptid, uint64_t t)
{
    struct rec r;
    begin(&r, type, 0);
    put32(&r, (uint32_t)pid);
    put32(&r, (uint32_t)ppid);
    put32(&r, (uint32_t)tid);
    put32(&r, (uint32_t)ptid);
    put64(&r, t);
    end(&r, pid, tid, t);
    feed(rc, &r);
}

static void sample(struct sc_recorder *rc, int32_t pid, int32_t tid, uint64_t t,
                   const uint64_t *ips, uint32_t n)
{
    struct rec r;
    begin(&r, PERF_RECORD_SAMPLE, 0);
    put64(&r, n ? ips[n - 1] : 0);
    put32(&r, (uint32_t)pid);
    put32(&r, (uint32_t)tid);
    put64(&r, t);
    put64(&r, 0);
    put64(&r, 10101010);
    put64(&r, n);
    for (uint32_t i = 0; i < n; i++)
        put64(&r, ips[i]);
    uint16_t size = (uint16_t)r.n;
    memcpy(r.b + 6, &size, 2);
    feed(rc, &r);
}

/* ---- this binary's mapping ---- */

struct self_map {
    uint64_t start, end, offset, ino;
    uint32_t maj, min;
    char path[4096];
};

static int self_map(const void *fn, struct self_map *m)
{
    FILE *f = fopen("/proc/self/maps", "r");
    char line[8192];
    int found = 0;
    while (f && !found && fgets(line, sizeof line, f)) {
        struct sc_maps_line l;
        if (sc_maps_parse_line(line, strcspn(line, "\n"), &l) || !l.exec)
            continue;
        if ((uint64_t)(uintptr_t)fn >= l.start && (uint64_t)(uintptr_t)fn < l.end) {
            m->start = l.start;
            m->end = l.end;
            m->offset = l.offset;
            m->ino = l.inode;
            m->maj = l.dev_major;
            m->min = l.dev_minor;
            snprintf(m->path, sizeof m->path, "%.*s", (int)l.path_len, l.path);
            found = 1;
        }
    }
    if (f)
        fclose(f);
    return found;
}

static char *folded(const struct sc_profile *p)
{
    struct sc_buf b = SC_BUF_INIT;
    char err[SC_ERR_LEN];
    sc_folded_write(p, 0, &b, err);
    return b.data ? b.data : strdup("");
}

/* The value of label key of sample i, "" when absent. */
static const char *label(const struct sc_profile *p, uint32_t i, const char *key)
{
    static char out[64];
    const struct sc_sample *s = &p->samples[i];
    for (uint32_t k = 0; k < s->nlabels; k++) {
        const struct sc_label *l = &p->labels[s->label_start + k];
        struct sc_str ks = sc_profile_str(p, l->key), vs = sc_profile_str(p, l->str);
        if (ks.len == strlen(key) && !memcmp(ks.ptr, key, ks.len)) {
            snprintf(out, sizeof out, "%.*s", (int)vs.len, vs.ptr);
            return out;
        }
    }
    return "";
}

static int has_comment(const struct sc_profile *p, const char *part)
{
    for (uint32_t i = 0; i < p->ncomments; i++) {
        struct sc_str s = sc_profile_str(p, p->comments[i]);
        char tmp[1024];
        snprintf(tmp, sizeof tmp, "%.*s", (int)s.len, s.ptr);
        if (strstr(tmp, part))
            return 1;
    }
    return 0;
}

static char tmpdir[256];

static void on_trunc(void *ctx, const char *dso, uint64_t count)
{
    sc_buf_printf(ctx, "%s %llu\n", dso, (unsigned long long)count);
}

static void test_records_to_profile(void)
{
    struct self_map m;
    if (!self_map((const void *)t_leaf, &m))
        T_SKIP("cannot find this binary's mapping");
    snprintf(tmpdir, sizeof tmpdir, "/tmp/scorch-test-record-XXXXXX");
    if (!mkdtemp(tmpdir))
        T_SKIP("no temporary directory");
    char ksyms[512], pmap[512];
    snprintf(ksyms, sizeof ksyms, "%s/kallsyms", tmpdir);
    FILE *f = fopen(ksyms, "w");
    fputs("ffffffff81000000 T do_syscall_64\nffffffff81000100 t ksys_read\n"
          "ffffffff81000200 T _etext\n",
          f);
    fclose(f);
    const int32_t pid = 4242, child = 4243;
    snprintf(pmap, sizeof pmap, "%s/perf-%d.map", tmpdir, (int)pid);
    f = fopen(pmap, "w");
    fputs("7f0000001000 100 jitted_fn\n", f);
    fclose(f);

    struct sc_record_opts o;
    memset(&o, 0, sizeof o);
    o.pid = pid;
    o.sym.kallsyms = ksyms;
    o.sym.perf_map_dir = tmpdir;
    struct sc_recorder *r = NULL;
    char err[SC_ERR_LEN] = "";
    T_EQ_INT(sc_recorder_new_offline(&o, &r, err), 0);
    if (!r)
        return;
    uint64_t base = 0x555500000000ULL; /* where "the process" mapped this binary */
    uint64_t text = base + (m.start - m.start);
    comm(r, pid, pid, "tprog", 1, 100);
    mmap2(r, pid, text, m.end - m.start, m.offset, m.maj, m.min, m.ino, m.path, 101);
    mmap2(r, pid, 0x7f0000000000ULL, 0x10000, 0, 0, 0, 0, "//anon", 102);
#define AT(fn, off) (text + ((uint64_t)(uintptr_t)(fn)-m.start) + (off))
    /* a whole stack: thread_start -> t_caller -> t_leaf, callers as return addresses */
    uint64_t whole[] = {(uint64_t)PERF_CONTEXT_USER, AT(t_leaf, 2), AT(t_caller, 5),
                        AT(thread_start, 5)};
    sample(r, pid, pid, 1000, whole, 4);
    sample(r, pid, pid, 2000, whole, 4);
    /* in the kernel under t_leaf */
    uint64_t kern[] = {(uint64_t)PERF_CONTEXT_KERNEL,
                       0xffffffff81000110ULL,
                       0xffffffff81000011ULL,
                       (uint64_t)PERF_CONTEXT_USER,
                       AT(t_leaf, 2),
                       AT(t_caller, 5),
                       AT(thread_start, 5)};
    sample(r, pid, pid, 3000, kern, 7);
    /* cut short: no root */
    uint64_t cut[] = {(uint64_t)PERF_CONTEXT_USER, AT(t_leaf, 2)};
    sample(r, pid, pid, 4000, cut, 2);
    /* JIT code named by the perf map, and an address in no mapping */
    uint64_t jit[] = {(uint64_t)PERF_CONTEXT_USER, 0x7f0000001010ULL, 0x1234ULL};
    sample(r, pid, pid, 5000, jit, 3);
    /* a thread, and a forked child that keeps the parent's mappings and comm */
    task(r, PERF_RECORD_FORK, pid, pid, pid + 10, pid, 5500);
    sample(r, pid, pid + 10, 6000, whole, 4);
    task(r, PERF_RECORD_FORK, child, pid, child, pid, 6500);
    sample(r, child, child, 7000, whole, 4);
    /* the child execs something else: its old mappings are gone */
    comm(r, child, child, "other", 1, 7500);
    sample(r, child, child, 8000, whole, 4);
    /* malformed records are counted and skipped */
    struct rec bad;
    begin(&bad, PERF_RECORD_SAMPLE, 0);
    put64(&bad, 1);
    uint16_t sz = 200; /* longer than the record */
    memcpy(bad.b + 6, &sz, 2);
    T_EQ_INT(sc_recorder_feed(r, bad.b, bad.n), 0);
    T_EQ_INT(sc_recorder_feed(r, bad.b, 3), 0);

    struct sc_profile *p = NULL;
    int64_t from, until;
    T_EQ_INT(sc_recorder_take(r, &p, &from, &until, err), 0);
    if (!p) {
        sc_recorder_close(r);
        return;
    }
    T_EQ_INT(p->nsamples, 8);
    T_EQ_INT(p->nsample_types, 2);
    char *fo = folded(p);
    T_CHECK(strstr(fo, "thread_start;t_caller;t_leaf 4\n") != NULL);
    T_CHECK(strstr(fo, "thread_start;t_caller;t_leaf;do_syscall_64;ksys_read 1\n") != NULL);
    T_CHECK(strstr(fo, "[truncated: ") != NULL && strstr(fo, "];t_leaf 1\n") != NULL);
    /* blamed on the outermost frame in a known DSO */
    T_CHECK(strstr(fo, "[truncated: [jit-4242]];[unknown];jitted_fn 1\n") != NULL);
    /* after the exec the child's addresses are in no mapping */
    T_CHECK(strstr(fo, "[truncated: [unknown]];[unknown];[unknown];[unknown] 1\n") != NULL);
    if (!strstr(fo, "thread_start;t_caller;t_leaf 4\n"))
        fprintf(stderr, "folded:\n%s", fo);
    free(fo);
    /* labels and times */
    T_EQ_STR(label(p, 0, "comm"), "tprog");
    T_EQ_STR(label(p, 0, "pid"), "4242");
    T_EQ_STR(label(p, 0, "tid"), "4242");
    T_EQ_STR(label(p, 5, "tid"), "4252");
    T_EQ_STR(label(p, 5, "comm"), "tprog");
    T_EQ_STR(label(p, 6, "pid"), "4243");
    T_EQ_STR(label(p, 6, "comm"), "tprog");
    T_EQ_STR(label(p, 7, "comm"), "other");
    T_EQ_INT(p->samples[0].time_ns, 1000);
    T_EQ_INT(p->samples[7].time_ns, 8000);
    T_EQ_INT(p->values[1], 10101010);
    /* one location per distinct address: t_leaf, t_caller, thread_start, two kernel ones,
     * jit, unknown, and the markers of three DSOs */
    T_EQ_INT(p->nlocations, 10);
    T_CHECK(has_comment(p, "truncated stacks: 3 of 8 samples"));
    struct sc_record_stats st;
    sc_recorder_stats(r, &st);
    T_EQ_INT(st.samples, 8);
    T_EQ_INT(st.bad_records, 2);
    T_EQ_INT(st.truncated, 3);
    T_EQ_INT(st.sym.loads, 2); /* this binary, the perf map: once each */
    /* file:line from this binary's DWARF (built with -g) */
    int lines = 0;
    for (uint32_t i = 0; i < p->nlines; i++)
        lines += p->lines[i].line > 0;
    T_CHECK(lines >= 3);

    /* pprof keeps the times and labels */
    struct sc_buf b = SC_BUF_INIT;
    T_EQ_INT(sc_pprof_encode(p, &b), 0);
    struct sc_profile *q = sc_profile_new();
    T_EQ_INT(sc_pprof_decode(b.data, b.len, NULL, q, err), 0);
    T_EQ_INT(q->nsamples, 8);
    if (q->nsamples == 8) {
        T_EQ_INT(q->samples[2].time_ns, 3000);
        T_EQ_STR(label(q, 7, "comm"), "other");
    }
    sc_profile_free(q);
    sc_buf_release(&b);
    sc_profile_free(p);

    /* the next window: the same addresses are not symbolized again */
    sample(r, pid, pid, 9000, whole, 4);
    T_EQ_INT(sc_recorder_take(r, &p, &from, &until, err), 0);
    if (p) {
        T_EQ_INT(p->nsamples, 1);
        fo = folded(p);
        T_EQ_STR(fo, "thread_start;t_caller;t_leaf 1\n");
        free(fo);
        sc_profile_free(p);
    }
    sc_recorder_stats(r, &st);
    T_EQ_INT(st.sym.loads, 2);
    /* a process exits: a pid used again starts without its mappings */
    task(r, PERF_RECORD_EXIT, pid, pid, pid, pid, 9500);
    sample(r, pid, pid, 10000, whole, 4);
    T_EQ_INT(sc_recorder_take(r, &p, &from, &until, err), 0);
    if (p) {
        fo = folded(p);
        T_CHECK(strstr(fo, "t_leaf") == NULL);
        free(fo);
        sc_profile_free(p);
    }
    /* over the recording, most first */
    struct sc_buf tr = SC_BUF_INIT;
    sc_recorder_truncated(r, on_trunc, &tr);
    T_CHECK(tr.data && !strncmp(tr.data, "[unknown] 2\n", 12));
    T_CHECK(tr.data && strstr(tr.data, "[jit-4242] 1\n") && strstr(tr.data, "test_record 1\n"));
    sc_buf_release(&tr);
    sc_recorder_close(r);
}

/* ---- off CPU ---- */

/* A sched_switch sample as the switch events write it: the callchain, then the raw fields
 * (prev_state at 32 of 64 bytes, as tracefs lays them out on x86-64 and arm64). */
static void switch_out(struct sc_recorder *rc, int32_t pid, int32_t tid, uint64_t t,
                       const uint64_t *ips, uint32_t n, uint64_t state, uint32_t raw_size)
{
    struct rec r;
    begin(&r, PERF_RECORD_SAMPLE, 0);
    put64(&r, n ? ips[n - 1] : 0);
    put32(&r, (uint32_t)pid);
    put32(&r, (uint32_t)tid);
    put64(&r, t);
    put64(&r, 0);
    put64(&r, 1);
    put64(&r, n);
    for (uint32_t i = 0; i < n; i++)
        put64(&r, ips[i]);
    uint8_t raw[68];
    memset(raw, 0, sizeof raw);
    memcpy(raw + 24, &tid, 4);
    memcpy(raw + 32, &state, 8);
    put32(&r, raw_size);
    put(&r, raw, sizeof raw);
    uint16_t size = (uint16_t)r.n;
    memcpy(r.b + 6, &size, 2);
    T_EQ_INT(sc_recorder_feed_switch(rc, r.b, r.n), 0);
}

/* PERF_RECORD_SWITCH: tid runs again at t (or leaves, out). */
static void switch_rec(struct sc_recorder *rc, int32_t pid, int32_t tid, uint64_t t, int out)
{
    struct rec r;
    begin(&r, PERF_RECORD_SWITCH, out ? PERF_RECORD_MISC_SWITCH_OUT : 0);
    end(&r, pid, tid, t);
    feed(rc, &r);
}

/* The sum of sample type i's values; the folded stacks of type i in *fo (caller frees). */
static int64_t type_total(const struct sc_profile *p, uint32_t i, char **fo)
{
    int64_t s = 0;
    for (uint32_t k = 0; k < p->nsamples; k++)
        s += p->values[(size_t)k * p->nsample_types + i];
    struct sc_buf b = SC_BUF_INIT;
    char err[SC_ERR_LEN];
    sc_folded_write(p, i, &b, err);
    *fo = b.data ? b.data : strdup("");
    return s;
}

struct twin_names {
    char name[4][128];
    int found[4];
};

static void twin_sym(void *ctx, uint32_t i, const struct sc_sym *sym)
{
    struct twin_names *n = ctx;
    if (i >= 4)
        return;
    n->found[i] = sym->found;
    snprintf(n->name[i], sizeof n->name[i], "%.*s", (int)sym->frames[sym->nframes - 1].name_len,
             sym->frames[sym->nframes - 1].name);
}

struct kernel_names {
    char name[2][32];
};

static void kernel_sym(void *ctx, uint32_t i, const struct sc_sym *sym)
{
    struct kernel_names *n = ctx;
    if (i < 2)
        snprintf(n->name[i], sizeof n->name[i], "%.*s", (int)sym->frames[0].name_len,
                 sym->frames[0].name);
}

/* A one_shot symbolizer names kernel addresses from a plain kallsyms file with the symbols
 * they need only, whether the file was read ahead (sc_symbolizer_kernel_ahead) or not. */
static void test_kernel_wanted(void)
{
    char dir[] = "/tmp/scorch-test-record-XXXXXX", path[64];
    if (!mkdtemp(dir))
        T_SKIP("no temporary directory");
    snprintf(path, sizeof path, "%s/kallsyms", dir);
    FILE *k = fopen(path, "w");
    T_CHECK(k != NULL);
    if (!k)
        return;
    for (int i = 0; i < 1000; i++)
        fprintf(k, "ffffffff81%06x T kfunc_%d\n", i * 256, i);
    fclose(k);
    for (int ahead = 0; ahead < 2; ahead++) {
        struct sc_symbolizer_opts o;
        memset(&o, 0, sizeof o);
        o.kallsyms = path;
        o.one_shot = 1;
        o.perf_names = 1;
        o.no_dwarf = 1;
        o.no_debuginfod = 1;
        struct sc_symbolizer *s = NULL;
        char err[SC_ERR_LEN] = "";
        T_EQ_INT(sc_symbolizer_new(&o, &s, err), 0);
        if (!s)
            break;
        if (ahead)
            T_EQ_INT(sc_symbolizer_kernel_ahead(s, -1), 0);
        uint64_t addrs[2] = {0xffffffff81000010ull, 0xffffffff81000510ull};
        struct kernel_names n;
        memset(&n, 0, sizeof n);
        sc_symbolizer_resolve(s, SC_DSO_ID_KERNEL, addrs, 2, kernel_sym, &n);
        T_EQ_STR(n.name[0], "kfunc_0");
        T_EQ_STR(n.name[1], "kfunc_5");
        struct sc_symbolizer_stats st;
        sc_symbolizer_stats(s, &st);
        if (st.kernel_symbols >= 100)
            fprintf(stderr, "ahead %d: %llu kernel symbols taken\n", ahead,
                    (unsigned long long)st.kernel_symbols);
        T_CHECK(st.kernel_symbols < 100); /* not all 1000 */
        sc_symbolizer_free(s);
    }
    unlink(path);
    rmdir(dir);
}

/* A symbolizer's twin has its DSOs under the same ids, and names their addresses as the
 * symbolizer itself does; it finds its DSOs by path as the original does. */
static void test_symbolizer_twin(void)
{
    struct self_map m;
    if (!self_map((const void *)t_leaf, &m))
        T_SKIP("cannot find this binary's mapping");
    struct sc_symbolizer_opts o;
    memset(&o, 0, sizeof o);
    o.kallsyms = "/dev/null";
    o.one_shot = 1;
    o.no_debuginfod = 1;
    struct sc_symbolizer *s = NULL, *t = NULL;
    char err[SC_ERR_LEN] = "";
    T_EQ_INT(sc_symbolizer_new(&o, &s, err), 0);
    if (!s)
        return;
    uint64_t dev = (uint64_t)m.maj << 32 | m.min;
    int64_t jit = sc_symbolizer_dso(s, "", 0, 0, 0, 4242);
    int64_t self = sc_symbolizer_dso(s, m.path, strlen(m.path), dev, m.ino, getpid());
    int64_t gone = sc_symbolizer_dso(s, "/no/such/file", 13, 0, 0, 1);
    T_CHECK(jit > SC_DSO_ID_VDSO && self > jit && gone > self);
    T_EQ_INT(sc_symbolizer_twin(s, &t, err), 0);
    if (!t) {
        sc_symbolizer_free(s);
        return;
    }
    int64_t ids[] = {SC_DSO_ID_KERNEL, SC_DSO_ID_VDSO, jit, self, gone};
    for (unsigned i = 0; i < sizeof ids / sizeof ids[0]; i++) {
        struct sc_dso_info a, b;
        sc_symbolizer_info(s, (uint32_t)ids[i], &a);
        sc_symbolizer_info(t, (uint32_t)ids[i], &b);
        T_EQ_INT(a.kind, b.kind);
        T_EQ_STR(a.path, b.path);
    }
    /* found again by path and identity, not added */
    T_EQ_INT(sc_symbolizer_dso(t, m.path, strlen(m.path), dev, m.ino, getpid()), self);
    T_EQ_INT(sc_symbolizer_dso(t, "/no/such/file", 13, 0, 0, 1), gone);
    T_EQ_INT(sc_symbolizer_dso(t, "", 0, 0, 0, 4242), jit);
    /* the same names from both, this binary's functions among them */
    uint64_t off = (uint64_t)(uintptr_t)t_leaf - m.start + m.offset;
    uint64_t addrs[4] = {off, (uint64_t)(uintptr_t)t_caller - m.start + m.offset,
                         (uint64_t)(uintptr_t)thread_start - m.start + m.offset, 1};
    struct twin_names a, b;
    memset(&a, 0, sizeof a);
    memset(&b, 0, sizeof b);
    sc_symbolizer_resolve(s, (uint32_t)self, addrs, 4, twin_sym, &a);
    sc_symbolizer_resolve(t, (uint32_t)self, addrs, 4, twin_sym, &b);
    T_EQ_STR(a.name[0], "t_leaf");
    T_EQ_STR(a.name[2], "thread_start");
    for (int i = 0; i < 4; i++) {
        T_EQ_INT(a.found[i], b.found[i]);
        T_EQ_STR(a.name[i], b.name[i]);
    }
    sc_symbolizer_free(t);
    sc_symbolizer_free(s);
}

/* Spans off CPU from a thread's switch sample to its return: blocked time is offcpu and
 * wall, time preempted wall only, on-CPU samples cpu and wall; short spans, idle threads,
 * exited threads and spans without a return are not counted; a span open at a take counts
 * its time so far in that window and the rest in the next. */
static void test_offcpu(void)
{
    struct self_map m;
    if (!self_map((const void *)t_leaf, &m))
        T_SKIP("cannot find this binary's mapping");
    const int32_t pid = 5151, tid2 = 5152;
    struct sc_record_opts o;
    memset(&o, 0, sizeof o);
    o.pid = pid;
    o.off_cpu = 1;
    o.off_cpu_min_ns = 1000000; /* 1 ms */
    o.sym.kallsyms = "/nonexistent-scorch-test/kallsyms";
    struct sc_recorder *r = NULL;
    char err[SC_ERR_LEN] = "";
    T_EQ_INT(sc_recorder_new_offline(&o, &r, err), 0);
    if (!r)
        return;
    uint64_t text = 0x555500000000ULL;
    comm(r, pid, pid, "sleeper", 1, 100);
    mmap2(r, pid, text, m.end - m.start, m.offset, m.maj, m.min, m.ino, m.path, 101);
    uint64_t oncpu[] = {(uint64_t)PERF_CONTEXT_USER, AT(t_leaf, 2), AT(t_caller, 5),
                        AT(thread_start, 5)};
    /* blocked in the kernel under t_caller (no t_leaf) */
    uint64_t blocked[] = {(uint64_t)PERF_CONTEXT_KERNEL, 0xffffffff81000010ULL,
                          (uint64_t)PERF_CONTEXT_USER, AT(t_caller, 5), AT(thread_start, 5)};
    sample(r, pid, pid, 1000000, oncpu, 4);                  /* 10101010 ns on CPU */
    switch_out(r, pid, pid, 2000000, blocked, 5, 1, 68);     /* S */
    switch_rec(r, pid, pid, 2000100, 1);                     /* (the out record: ignored) */
    switch_rec(r, pid, pid, 12000000, 0);                    /* back: 10 ms blocked */
    switch_out(r, pid, pid, 20000000, oncpu, 4, 0x100, 68);  /* preempted */
    switch_rec(r, pid, pid, 23000000, 0);                    /* 3 ms waiting for a CPU */
    switch_out(r, pid, pid, 30000000, blocked, 5, 2, 68);    /* D */
    switch_rec(r, pid, pid, 30500000, 0);                    /* 0.5 ms: under the minimum */
    switch_out(r, pid, pid, 31000000, blocked, 5, 0x80, 68); /* I: not waiting */
    switch_rec(r, pid, pid, 35000000, 0);
    switch_out(r, pid, pid, 36000000, blocked, 5, 1, 100000); /* raw size past the record */
    switch_rec(r, pid, pid, 37000000, 0);
    switch_out(r, pid, pid, 40000000, blocked, 5, 1, 68); /* open across the take */
    sample(r, pid, tid2, 45000000, oncpu, 4);             /* another thread runs */
    struct sc_profile *p = NULL;
    int64_t from, until;
    T_EQ_INT(sc_recorder_take(r, &p, &from, &until, err), 0);
    if (!p) {
        sc_recorder_close(r);
        return;
    }
    T_EQ_INT(p->nsample_types, 4);
    T_CHECK(sc_profile_str(p, p->sample_types[2].type).len == 6 &&
            !memcmp(sc_profile_str(p, p->sample_types[2].type).ptr, "offcpu", 6));
    T_CHECK(sc_profile_str(p, p->sample_types[3].type).len == 4 &&
            !memcmp(sc_profile_str(p, p->sample_types[3].type).ptr, "wall", 4));
    char *fo;
    T_EQ_INT(type_total(p, 0, &fo), 2); /* samples: the on-CPU ones only */
    free(fo);
    T_EQ_INT(type_total(p, 1, &fo), 2 * 10101010LL);
    free(fo);
    /* 10 ms, and 5 ms of the open span (up to the last record read) */
    T_EQ_INT(type_total(p, 2, &fo), 15000000);
    T_EQ_STR(fo, "thread_start;t_caller;[kernel.kallsyms] 15000000\n");
    free(fo);
    T_EQ_INT(type_total(p, 3, &fo), 2 * 10101010LL + 15000000 + 3000000);
    T_CHECK(strstr(fo, "thread_start;t_caller;t_leaf 23202020\n") != NULL);
    if (!strstr(fo, "thread_start;t_caller;t_leaf 23202020\n"))
        fprintf(stderr, "wall:\n%s", fo);
    free(fo);
    /* the span's sample is at its return (the open one's at the take's flush) */
    int found = 0;
    for (uint32_t k = 0; k < p->nsamples; k++)
        if (p->values[(size_t)k * 4 + 2] == 10000000) {
            found = 1;
            T_EQ_INT(p->samples[k].time_ns, 12000000);
            T_EQ_STR(label(p, k, "comm"), "sleeper");
        }
    T_CHECK(found);
    T_CHECK(has_comment(p, "--off-cpu --off-cpu-min 1000us"));
    T_CHECK(has_comment(p, "off-CPU spans not in the profile: 1 under the minimum (0.500 ms"));
    sc_profile_free(p);

    /* the rest of the open span when the thread returns */
    switch_rec(r, pid, pid, 50000000, 0);
    /* a thread that exits off CPU leaves nothing */
    switch_out(r, pid, tid2, 60000000, blocked, 5, 1, 68);
    task(r, PERF_RECORD_EXIT, pid, pid, tid2, pid, 61000000);
    switch_rec(r, pid, tid2, 62000000, 0);
    /* two switches out without a return between (a lost record): the first is dropped */
    switch_out(r, pid, pid, 70000000, blocked, 5, 1, 68);
    switch_out(r, pid, pid, 80000000, blocked, 5, 1, 68);
    switch_rec(r, pid, pid, 82000000, 0);
    T_EQ_INT(sc_recorder_take(r, &p, &from, &until, err), 0);
    if (p) {
        T_EQ_INT(type_total(p, 2, &fo), 5000000 + 2000000);
        free(fo);
        T_EQ_INT(type_total(p, 0, &fo), 0);
        free(fo);
        sc_profile_free(p);
    }
    struct sc_record_stats st;
    sc_recorder_stats(r, &st);
    T_EQ_INT(st.switches, 8); /* the malformed one is not */
    T_EQ_INT(st.bad_records, 1);
    T_EQ_INT(st.offcpu_spans, 4);
    T_EQ_INT(st.offcpu_short, 1);
    T_EQ_INT(st.offcpu_short_ns, 500000);
    T_EQ_INT(st.offcpu_ns, 22000000);
    T_EQ_INT(st.runqueue_ns, 3000000);
    T_EQ_INT(st.offcpu_dropped, 1);
    sc_recorder_close(r);
}

/* Past SC_RECORD_OFFCPU_TIMED spans in a window, the spans of a stack and thread already
 * sampled add to that sample: the window grows with its stacks, not its switches. */
static void test_offcpu_merge(void)
{
    struct sc_record_opts o;
    memset(&o, 0, sizeof o);
    o.pid = 88;
    o.off_cpu = 1;
    o.off_cpu_min_ns = -1; /* every span */
    o.sym.kallsyms = "/nonexistent-scorch-test/kallsyms";
    struct sc_recorder *r = NULL;
    char err[SC_ERR_LEN] = "";
    T_EQ_INT(sc_recorder_new_offline(&o, &r, err), 0);
    if (!r)
        return;
    uint64_t k[] = {(uint64_t)PERF_CONTEXT_KERNEL, 0xffffffff81000010ULL};
    uint64_t k2[] = {(uint64_t)PERF_CONTEXT_KERNEL, 0xffffffff81000020ULL};
    const uint32_t n = SC_RECORD_OFFCPU_TIMED + 100;
    for (uint32_t i = 0; i < n; i++) {
        switch_out(r, 88, 88, 1000ull * i, i % 2 ? k2 : k, 2, 1, 68);
        switch_rec(r, 88, 88, 1000ull * i + 400, 0);
    }
    struct sc_profile *p = NULL;
    T_EQ_INT(sc_recorder_take(r, &p, NULL, NULL, err), 0);
    if (p) {
        /* the first ones each a sample, the rest added to one of the two stacks' */
        T_EQ_INT(p->nsamples, SC_RECORD_OFFCPU_TIMED + 2);
        char *fo;
        T_EQ_INT(type_total(p, 2, &fo), 400LL * n);
        free(fo);
        sc_profile_free(p);
    }
    sc_recorder_close(r);
}

/* Without --off-cpu, switch records change nothing and profiles keep two sample types. */
static void test_offcpu_off(void)
{
    struct sc_record_opts o;
    memset(&o, 0, sizeof o);
    o.pid = 77;
    o.sym.kallsyms = "/nonexistent-scorch-test/kallsyms";
    struct sc_recorder *r = NULL;
    char err[SC_ERR_LEN] = "";
    T_EQ_INT(sc_recorder_new_offline(&o, &r, err), 0);
    if (!r)
        return;
    uint64_t k[] = {(uint64_t)PERF_CONTEXT_KERNEL, 0xffffffff81000010ULL};
    sample(r, 77, 77, 1000, k, 2);
    switch_rec(r, 77, 77, 2000, 0);
    struct sc_profile *p = NULL;
    T_EQ_INT(sc_recorder_take(r, &p, NULL, NULL, err), 0);
    if (p) {
        T_EQ_INT(p->nsample_types, 2);
        T_EQ_INT(p->nsamples, 1);
        sc_profile_free(p);
    }
    sc_recorder_close(r);
}

/* A location cache bounded at 2 entries is dropped after a take and filled again. */
static void test_cache_bound(void)
{
    struct self_map m;
    if (!self_map((const void *)t_leaf, &m))
        return;
    struct sc_record_opts o;
    memset(&o, 0, sizeof o);
    o.pid = 77;
    o.max_locations = 2;
    struct sc_recorder *r = NULL;
    char err[SC_ERR_LEN] = "";
    T_EQ_INT(sc_recorder_new_offline(&o, &r, err), 0);
    if (!r)
        return;
    uint64_t text = 0x400000000ULL;
    mmap2(r, 77, text, m.end - m.start, m.offset, m.maj, m.min, m.ino, m.path, 1);
    uint64_t whole[] = {(uint64_t)PERF_CONTEXT_USER, AT(t_leaf, 2), AT(t_caller, 5),
                        AT(thread_start, 5)};
    for (int round = 0; round < 3; round++) {
        sample(r, 77, 77, 10 + (uint64_t)round, whole, 4);
        struct sc_profile *p = NULL;
        int64_t a, b;
        T_EQ_INT(sc_recorder_take(r, &p, &a, &b, err), 0);
        if (!p)
            break;
        char *fo = folded(p);
        T_EQ_STR(fo, "thread_start;t_caller;t_leaf 1\n");
        free(fo);
        sc_profile_free(p);
        struct sc_record_stats st;
        sc_recorder_stats(r, &st);
        T_EQ_INT(st.locations, 0); /* 3 > 2: dropped */
    }
    sc_recorder_close(r);
}

/* ---- symbol tables and their parsers ---- */

static const char *name_at(const struct sc_symtab *t, uint64_t a)
{
    const struct sc_symtab_ent *e = sc_symtab_find(t, a);
    return e ? t->names + e->name : "(none)";
}

static void test_symtab(void)
{
    struct sc_symtab t;
    sc_symtab_init(&t);
    const char *ks = "ffffffff81000000 T _stext\n"
                     "ffffffff81000000 t __pfx_stext\n"
                     "garbage line\n"
                     "ffffffff81000100 t helper\t[mymod]\n"
                     "ffffffff81000200 D some_data\n"
                     "0000000000000000 T hidden\n"
                     "ffffffff81000300 W weak_fn";
    T_EQ_INT(sc_symtab_parse_kallsyms(&t, ks, strlen(ks)), 0);
    sc_symtab_finish(&t, 4096);
    T_EQ_INT(t.n, 3);
    T_EQ_STR(name_at(&t, 0xffffffff81000050ULL), "_stext");  /* T over t */
    T_EQ_STR(name_at(&t, 0xffffffff81000100ULL), "helper");  /* without [mymod] */
    T_EQ_STR(name_at(&t, 0xffffffff81000250ULL), "helper");  /* data is not a symbol */
    T_EQ_STR(name_at(&t, 0xffffffff810012ffULL), "weak_fn"); /* the last one: max_gap */
    T_EQ_STR(name_at(&t, 0xffffffff81001300ULL), "(none)");
    T_EQ_STR(name_at(&t, 0x1000), "(none)");
    sc_symtab_release(&t);

    sc_symtab_init(&t);
    const char *pm = "0x7f0000001000 0x40 LazyCompile:~foo app.js:1\n"
                     "7f0000002000 10 Interpreter\r\n"
                     "7f0000003000 zz bad\n"
                     "7f0000004000 0 empty\n";
    T_EQ_INT(sc_symtab_parse_perf_map(&t, pm, strlen(pm)), 0);
    sc_symtab_finish(&t, 0);
    T_EQ_INT(t.n, 2);
    T_EQ_STR(name_at(&t, 0x7f000000103fULL), "LazyCompile:~foo app.js:1");
    T_EQ_STR(name_at(&t, 0x7f0000001040ULL), "(none)");
    T_EQ_STR(name_at(&t, 0x7f0000002005ULL), "Interpreter");
    sc_symtab_release(&t);

    /* several names at one address: global > weak > local, then fewer underscores */
    sc_symtab_init(&t);
    sc_symtab_add(&t, 0x1000, 0, "__write", 7, 3);
    sc_symtab_add(&t, 0x1000, 0x20, "write_local", 11, 1);
    sc_symtab_add(&t, 0x1000, 0, "write", 5, 3);
    sc_symtab_add(&t, 0x2000, 0x10, "other", 5, 1);
    sc_symtab_finish(&t, 0);
    T_EQ_STR(name_at(&t, 0x101f), "write"); /* the alias's size gives the extent */
    T_EQ_STR(name_at(&t, 0x1020), "(none)");
    T_EQ_STR(name_at(&t, 0x200f), "other");
    sc_symtab_release(&t);

    /* a last symbol without a size: to the next symbol there is none; perf's names end it
     * at the page after the one it starts in, ours at its first byte */
    for (int perf = 0; perf < 2; perf++) {
        sc_symtab_init(&t);
        t.names_rule = perf ? SC_SYMTAB_PERF_ELF : SC_SYMTAB_OURS;
        sc_symtab_add(&t, 0x83000, 0x10, "f", 1, 3);
        sc_symtab_add(&t, 0x833d8, 0, "_fini", 5, 1);
        sc_symtab_finish(&t, 0);
        T_EQ_STR(name_at(&t, 0x833d8), "_fini");
        T_EQ_STR(name_at(&t, 0x833dc), perf ? "_fini" : "(none)");
        T_EQ_STR(name_at(&t, 0x84fff), perf ? "_fini" : "(none)");
        T_EQ_STR(name_at(&t, 0x85000), "(none)");
        sc_symtab_release(&t);
    }

    /* many symbols out of order, far apart and repeated (the sort's passes over every
     * bit, its stability): kallsyms's rule names an address after the last one listed */
    sc_symtab_init(&t);
    t.names_rule = SC_SYMTAB_PERF_KALLSYMS;
    enum { NSYM = 5000, NADDR = 1500 };
    static uint32_t last[NADDR];
    uint64_t x = 88172645463325252ULL;
    for (uint32_t i = 0; i < NSYM; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        uint32_t k = (uint32_t)(x % NADDR);
        uint64_t start = (k % 3 == 0   ? 0xffffffffc0000000ULL
                          : k % 3 == 1 ? 0x1000
                                       : 0x7f0000000000ULL) +
                         (uint64_t)k * 0x100;
        char nm[16];
        int nl = snprintf(nm, sizeof nm, "f%u", (unsigned)i);
        T_EQ_INT(sc_symtab_add(&t, start, 0x10, nm, (size_t)nl, 3), 0);
        last[k] = i + 1;
    }
    sc_symtab_finish(&t, 0);
    uint32_t named = 0;
    for (uint32_t k = 0; k < NADDR; k++) {
        if (!last[k])
            continue;
        uint64_t start = (k % 3 == 0   ? 0xffffffffc0000000ULL
                          : k % 3 == 1 ? 0x1000
                                       : 0x7f0000000000ULL) +
                         (uint64_t)k * 0x100;
        char want[16];
        snprintf(want, sizeof want, "f%u", (unsigned)(last[k] - 1));
        T_EQ_STR(name_at(&t, start + 0xf), want);
        named++;
    }
    T_EQ_INT(t.n, named);
    for (uint32_t i = 1; i < t.n; i++)
        T_CHECK(t.v[i - 1].start < t.v[i].start);
    sc_symtab_release(&t);

    struct sc_maps_line ml;
    const char *line = "7f1c2a000000-7f1c2a022000 r-xp 00001000 fd:01 1234567   /opt/my app/lib.so "
                       "(deleted)";
    T_EQ_INT(sc_maps_parse_line(line, strlen(line), &ml), 0);
    T_EQ_INT(ml.start, 0x7f1c2a000000ULL);
    T_EQ_INT(ml.end, 0x7f1c2a022000ULL);
    T_EQ_INT(ml.offset, 0x1000);
    T_EQ_INT(ml.dev_major, 0xfd);
    T_EQ_INT(ml.inode, 1234567);
    T_CHECK(ml.exec);
    T_EQ_MEM(ml.path, ml.path_len, "/opt/my app/lib.so (deleted)");
    line = "7ffd0000-7ffd1000 rw-p 00000000 00:00 0";
    T_EQ_INT(sc_maps_parse_line(line, strlen(line), &ml), 0);
    T_CHECK(!ml.exec && ml.path_len == 0);
    T_EQ_INT(sc_maps_parse_line("zz", 2, &ml), SC_EFORMAT);
    T_EQ_INT(sc_maps_parse_line("1000-0800 r-xp 0 0:0 0", 22, &ml), SC_EFORMAT);
}

/* A table made for some addresses only (want) names them as the whole table does: random
 * symbols, with and without sizes, overlapping, several at one start, far apart. */
static void test_symtab_wanted(void)
{
    enum { NS = 3000, NW = 200 };
    static struct {
        uint64_t start, size;
        uint8_t rank;
    } sy[NS];
    uint64_t x = 0x9e3779b97f4a7c15ULL;
#define NEXT() (x ^= x << 13, x ^= x >> 7, x ^= x << 17)
    for (int rule = 0; rule < 2; rule++) {
        for (uint32_t i = 0; i < NS; i++) {
            NEXT();
            sy[i].start = (x % 5 == 0 ? 0x7f0000000000ULL : 0x400000) + (x >> 20) % 0x40000;
            if (i && x % 7 == 0)
                sy[i].start = sy[i - 1].start; /* an alias */
            NEXT();
            sy[i].size = x % 3 == 0 ? 0 : x % 0x300;
            sy[i].rank = (uint8_t)(1 + x % 3);
        }
        uint64_t want[NW];
        for (uint32_t k = 0; k < NW; k++) {
            NEXT();
            want[k] = k % 2 ? sy[x % NS].start + (x >> 32) % 0x200
                            : (x % 5 == 0 ? 0x7f0000000000ULL : 0x400000) + (x >> 20) % 0x41000;
        }
        struct sc_symtab all, some;
        sc_symtab_init(&all);
        sc_symtab_init(&some);
        all.names_rule = some.names_rule = rule ? SC_SYMTAB_PERF_ELF : SC_SYMTAB_OURS;
        /* want: sorted, distinct */
        some.want = malloc(NW * sizeof *some.want);
        T_CHECK(some.want != NULL);
        for (uint32_t k = 0; k < NW; k++) {
            uint32_t j = some.nwant;
            while (j > 0 && some.want[j - 1] > want[k])
                j--;
            if (j > 0 && some.want[j - 1] == want[k])
                continue;
            memmove(some.want + j + 1, some.want + j, (some.nwant - j) * sizeof *some.want);
            some.want[j] = want[k];
            some.nwant++;
        }
        struct sc_symtab_cand *c = malloc(NS * sizeof *c);
        T_CHECK(c != NULL);
        for (uint32_t i = 0; i < NS; i++)
            c[i] = (struct sc_symtab_cand){sy[i].start, i};
        uint32_t *pick, npick;
        T_EQ_INT(sc_symtab_wanted(&some, c, NS, &pick, &npick), 0);
        T_CHECK(npick < NS / 2); /* (the point of it) */
        for (uint32_t i = 0; i < NS; i++) {
            char nm[16];
            int nl = snprintf(nm, sizeof nm, "s%u", (unsigned)i);
            T_EQ_INT(sc_symtab_add(&all, sy[i].start, sy[i].size, nm, (size_t)nl, sy[i].rank), 0);
        }
        for (uint32_t k = 0; k < npick; k++) {
            char nm[16];
            uint32_t i = pick[k];
            T_CHECK(k == 0 || pick[k - 1] < i); /* in the table's order */
            int nl = snprintf(nm, sizeof nm, "s%u", (unsigned)i);
            T_EQ_INT(sc_symtab_add(&some, sy[i].start, sy[i].size, nm, (size_t)nl, sy[i].rank), 0);
        }
        sc_symtab_finish(&all, 0);
        sc_symtab_finish(&some, 0);
        for (uint32_t k = 0; k < NW; k++)
            T_EQ_STR(name_at(&some, want[k]), name_at(&all, want[k]));
        free(pick);
        free(c);
        sc_symtab_release(&all);
        sc_symtab_release(&some);
    }
    /* kallsyms, two runs out of order (the kernel, a module), data among the text: the
     * lines for some addresses name them as all the lines do */
    static char text[NS * 48];
    size_t len = 0;
    for (uint32_t i = 0; i < NS; i++) {
        NEXT();
        uint64_t a = (i < NS / 2 ? 0xffffffffc0000000ULL : 0xffffffff81000000ULL) + i * 0x40 +
                     (x % 4 == 0 ? 0 : x % 0x30);
        const char *types = "tTtWdD";
        /* (now and then a line of another shape: tabs, 0x, fewer digits) */
        len += (size_t)snprintf(text + len, sizeof text - len,
                                x % 11 == 0 ? "0x%llx\t%c\tk%u%s\n" : "%016llx %c k%u%s\n",
                                (unsigned long long)a, types[x % 6], (unsigned)i,
                                i < NS / 2 ? "\t[mod]" : "");
    }
    struct sc_symtab all, some;
    sc_symtab_init(&all);
    sc_symtab_init(&some);
    all.names_rule = some.names_rule = SC_SYMTAB_PERF_KALLSYMS;
    uint64_t want[NW];
    some.want = malloc(NW * sizeof *some.want);
    T_CHECK(some.want != NULL);
    for (uint32_t k = 0; k < NW; k++) {
        NEXT();
        want[k] = some.want[k] =
            (k % 2 ? 0xffffffffc0000000ULL : 0xffffffff81000000ULL) + x % ((NS / 2 + 8) * 0x40);
    }
    some.nwant = NW;
    sc_symtab_want_ready(&some);
    T_EQ_INT(sc_symtab_parse_kallsyms(&all, text, len), 0);
    T_EQ_INT(sc_symtab_parse_kallsyms(&some, text, len), 0);
    T_CHECK(some.nadd < all.nadd / 2);
    sc_symtab_finish(&all, 4096);
    sc_symtab_finish(&some, 4096);
    for (uint32_t k = 0; k < NW; k++)
        T_EQ_STR(name_at(&some, want[k]), name_at(&all, want[k]));
    sc_symtab_release(&all);
    sc_symtab_release(&some);
#undef NEXT
}

/* A build id read from the program's note segments is the one its note sections carry. */
static void test_build_id(void)
{
    int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
    T_CHECK(fd >= 0);
    uint8_t id[20];
    uint32_t n = sc_elf_build_id(fd, id);
    struct sc_symtab t;
    sc_symtab_init(&t);
    int dw;
    char err[SC_ERR_LEN];
    T_EQ_INT(sc_elf_load(fd, NULL, 0, &t, &dw, err), 0);
    T_EQ_INT(n, t.build_id_len);
    T_CHECK(n == 0 || !memcmp(id, t.build_id, n));
    sc_symtab_release(&t);
    close(fd);
    fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC); /* not ELF */
    T_EQ_INT(sc_elf_build_id(fd, id), 0);
    close(fd);
}

/* A Go 1.18-layout pclntab made by hand: two functions, names, sizes. */
static void test_gopclntab(void)
{
    uint8_t d[512];
    memset(d, 0, sizeof d);
    uint32_t magic = 0xfffffff0;
    memcpy(d, &magic, 4);
    d[6] = 1;                                          /* minLC */
    d[7] = 8;                                          /* ptrSize */
    uint64_t hdr[8] = {2, 0, 0x401000, 0, 0, 0, 0, 0}; /* nfunc, nfiles, textStart, ... */
    uint64_t funcname = 200, pcln = 80;
    hdr[3] = funcname;
    hdr[7] = pcln;
    memcpy(d + 8, hdr, sizeof hdr);
    /* functab at pcln: {entryoff, funcoff} x 2, then the end */
    uint32_t ft[5] = {0x0, 40, 0x100, 48, 0x180};
    memcpy(d + pcln, ft, sizeof ft);
    /* _func records at pcln + funcoff: {entryoff, nameoff} */
    uint32_t f1[2] = {0x0, 0}, f2[2] = {0x100, 10};
    memcpy(d + pcln + 40, f1, 8);
    memcpy(d + pcln + 48, f2, 8);
    memcpy(d + funcname, "main.main\0main.burn\0", 20);
    struct sc_symtab t;
    sc_symtab_init(&t);
    T_EQ_INT(sc_symtab_parse_gopclntab(&t, d, sizeof d, 0), 0);
    sc_symtab_finish(&t, 0);
    T_EQ_INT(t.n, 2);
    T_EQ_STR(name_at(&t, 0x401000), "main.main");
    T_EQ_STR(name_at(&t, 0x4010ff), "main.main");
    T_EQ_STR(name_at(&t, 0x401100), "main.burn");
    T_EQ_STR(name_at(&t, 0x401180), "(none)");
    sc_symtab_release(&t);
    /* damaged: a bad magic, an nfunc the data cannot hold, a name off the end */
    sc_symtab_init(&t);
    uint8_t bad[512];
    memcpy(bad, d, sizeof d);
    bad[0] = 0;
    T_EQ_INT(sc_symtab_parse_gopclntab(&t, bad, sizeof bad, 0), SC_EFORMAT);
    memcpy(bad, d, sizeof d);
    uint64_t huge = 1u << 30;
    memcpy(bad + 8, &huge, 8);
    T_EQ_INT(sc_symtab_parse_gopclntab(&t, bad, sizeof bad, 0), SC_EFORMAT);
    memcpy(bad, d, sizeof d);
    uint32_t far = 100000;
    memcpy(bad + pcln + 48 + 4, &far, 4);
    T_EQ_INT(sc_symtab_parse_gopclntab(&t, bad, sizeof bad, 0), 0);
    sc_symtab_finish(&t, 0);
    T_EQ_INT(t.n, 1); /* the good one */
    T_EQ_INT(sc_symtab_parse_gopclntab(&t, d, 15, 0), SC_EFORMAT);
    sc_symtab_release(&t);
}

/* record: in the config: its keys, their defaults, their errors; token files. */
static void test_config_record(void)
{
    struct sc_config c;
    char err[SC_ERR_LEN] = "";
    const char *y = "record: {frequency: 49, interval: 5s, pid: 77, dwarf: true,\n"
                    "         labels: {host: h1, service_name: me}}\n";
    T_EQ_INT(sc_config_parse(y, strlen(y), "t.yaml", &c, err), 0);
    T_EQ_INT(c.record, 1);
    T_EQ_INT(c.record_frequency, 49);
    T_EQ_INT(c.record_interval_ns, 5000000000LL);
    T_EQ_INT(c.record_pid, 77);
    T_EQ_INT(c.record_dwarf, 1);
    T_EQ_INT(c.record_nlabels, 2);
    T_EQ_STR(c.record_label_names[1], "service_name");
    T_EQ_STR(c.record_label_values[1], "me");
    sc_config_release(&c);
    y = "record: {}\n";
    T_EQ_INT(sc_config_parse(y, strlen(y), "t.yaml", &c, err), 0);
    T_CHECK(c.record && c.record_frequency == 0 && c.record_dwarf == -1 && c.record_pid == 0);
    T_CHECK(c.record_off_cpu == 0 && c.record_off_cpu_min_ns == 0);
    sc_config_release(&c);
    y = "record: {off_cpu: true, off_cpu_min: 2ms}\n";
    T_EQ_INT(sc_config_parse(y, strlen(y), "t.yaml", &c, err), 0);
    T_CHECK(c.record_off_cpu == 1 && c.record_off_cpu_min_ns == 2000000);
    sc_config_release(&c);
    y = "record: {off_cpu: true, off_cpu_min: 0}\n"; /* every span */
    T_EQ_INT(sc_config_parse(y, strlen(y), "t.yaml", &c, err), 0);
    T_CHECK(c.record_off_cpu_min_ns < 0);
    sc_config_release(&c);
    const char *bad[] = {
        "record: {frequency: 0}", "record: {interval: 50ms}",    "record: {pid: -3}",
        "record: {dwarf: maybe}", "record: {cpus: 2}",           "record: [1, 2]",
        "record: {off_cpu: yes}", "record: {off_cpu_min: -1ms}", "record: {off_cpu_min: 2h}"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        T_EQ_INT(sc_config_parse(bad[i], strlen(bad[i]), "t.yaml", &c, err), SC_EINVAL);
        T_CHECK(strstr(err, "config 't.yaml' line 1: ") == err &&
                (strstr(err, "record") || strstr(err, "duplicate key 'frequency'")));
        sc_config_release(&c);
    }
    char *tok = sc_config_read_token("/nonexistent/token", err);
    T_CHECK(tok == NULL && strstr(err, "cannot read token file '/nonexistent/token'") != NULL);
    char path[] = "/tmp/scorch-test-token-XXXXXX";
    int fd = mkstemp(path);
    if (fd >= 0) {
        T_CHECK(write(fd, "s3cret \r\nsecond line\n", 22) == 22);
        close(fd);
        tok = sc_config_read_token(path, err);
        T_EQ_STR(tok, "s3cret");
        free(tok);
        unlink(path);
    }
}

/* ---- samples with user registers and a stack copy (unwinding) ---- */

/* A sample as the kernel writes it with REGS_USER (bp, sp, ip) and STACK_USER: the kernel's
 * callchain ips, then the registers and len bytes of stack. */
static void sample_stack(struct sc_recorder *rc, int32_t pid, uint64_t t, const uint64_t *ips,
                         uint32_t n, const uint64_t regs[3], const uint8_t *stack, size_t len)
{
    static uint8_t b[65536];
    size_t k = 0;
#define PUT64(v)                                                                                   \
    do {                                                                                           \
        uint64_t v_ = (v);                                                                         \
        memcpy(b + k, &v_, 8);                                                                     \
        k += 8;                                                                                    \
    } while (0)
    uint32_t hdr[2] = {PERF_RECORD_SAMPLE, 0};
    memcpy(b, hdr, 8);
    k = 8;
    PUT64(n ? ips[n - 1] : 0);
    PUT64((uint64_t)(uint32_t)pid << 32 | (uint32_t)pid);
    PUT64(t);
    PUT64(0);
    PUT64(10101010);
    PUT64(n);
    for (uint32_t i = 0; i < n; i++)
        PUT64(ips[i]);
    PUT64(2); /* PERF_SAMPLE_REGS_ABI_64 */
    for (int i = 0; i < 3; i++)
        PUT64(regs[i]);
    PUT64(len);
    memcpy(b + k, stack, len);
    k += len;
    if (len)
        PUT64(len);
#undef PUT64
    uint16_t size = (uint16_t)k;
    memcpy(b + 6, &size, 2);
    T_EQ_INT(sc_recorder_feed(rc, b, k), 0);
}

struct grab {
    uint64_t regs[3]; /* bp, sp, ip: the sample's order */
    uint8_t stack[16384];
    size_t len;
};

/* Copies the stack above sp byte by byte: ASan's redzones in it are no error here. */
__attribute__((noinline, no_sanitize("address"))) static void copy_up(uint8_t *dst, uintptr_t src,
                                                                      size_t n)
{
    for (size_t i = 0; i < n; i++)
        dst[i] = ((const volatile uint8_t *)src)[i];
}

void t_grab(struct grab *g, uint64_t stack_end);
int t_grab_caller(struct grab *g, uint64_t stack_end);

/* The registers and stack here, as a sample taken at this moment holds them. */
__attribute__((noinline, noclone)) void t_grab(struct grab *g, uint64_t stack_end)
{
#if defined(__x86_64__)
    uint64_t pc, sp, fp;
    __asm__ volatile("lea 0(%%rip), %0\n\tmov %%rsp, %1\n\tmov %%rbp, %2"
                     : "=r"(pc), "=r"(sp), "=r"(fp));
    g->regs[0] = fp;
    g->regs[1] = sp;
    g->regs[2] = pc;
    g->len = stack_end > sp ? (size_t)(stack_end - sp) : 0;
    if (g->len > sizeof g->stack)
        g->len = sizeof g->stack;
    copy_up(g->stack, (uintptr_t)sp, g->len);
#else
    (void)stack_end;
    memset(g, 0, sizeof *g);
#endif
}

__attribute__((noinline, noclone)) int t_grab_caller(struct grab *g, uint64_t stack_end)
{
    t_grab(g, stack_end);
    return (int)g->len + 1; /* not a tail call */
}

/* Every executable mapping of this process as MMAP2 records (at their real addresses: the
 * stack holds real return addresses); the end of the stack's mapping. */
static uint64_t map_self(struct sc_recorder *r, int32_t pid)
{
    FILE *f = fopen("/proc/self/maps", "r");
    char line[8192];
    uint64_t stack_end = 0;
    while (f && fgets(line, sizeof line, f)) {
        struct sc_maps_line l;
        if (sc_maps_parse_line(line, strcspn(line, "\n"), &l))
            continue;
        if (l.path_len == 7 && !memcmp(l.path, "[stack]", 7))
            stack_end = l.end;
        char path[4096];
        snprintf(path, sizeof path, "%.*s", (int)l.path_len, l.path);
        if (l.exec && path[0] == '/')
            mmap2(r, pid, l.start, l.end - l.start, l.offset, l.dev_major, l.dev_minor, l.inode,
                  path, 50);
    }
    if (f)
        fclose(f);
    return stack_end;
}

/* The unwind tables of this process's binaries, for a walk of its own stack. */
struct tables {
    struct {
        uint64_t start, end, offset;
        struct sc_unwind_table *t;
    } v[64];
    uint32_t n;
    int loaded;
};

static int tables_find(void *ctx, uint64_t pc, const struct sc_unwind_table **t, uint64_t *off)
{
    struct tables *tb = ctx;
    if (!tb->loaded) {
        tb->loaded = 1;
        FILE *f = fopen("/proc/self/maps", "r");
        char line[8192];
        while (f && tb->n < 64 && fgets(line, sizeof line, f)) {
            struct sc_maps_line l;
            char path[4096];
            if (sc_maps_parse_line(line, strcspn(line, "\n"), &l) || !l.exec)
                continue;
            snprintf(path, sizeof path, "%.*s", (int)l.path_len, l.path);
            int fd = path[0] == '/' ? open(path, O_RDONLY | O_CLOEXEC) : -1;
            char err[SC_ERR_LEN];
            struct sc_unwind_table *u = NULL;
            if (fd >= 0 && sc_unwind_load(fd, NULL, 0, NULL, &u, err))
                u = NULL;
            if (fd >= 0)
                close(fd);
            tb->v[tb->n].start = l.start;
            tb->v[tb->n].end = l.end;
            tb->v[tb->n].offset = l.offset;
            tb->v[tb->n++].t = u;
        }
        if (f)
            fclose(f);
    }
    for (uint32_t i = 0; i < tb->n; i++)
        if (pc >= tb->v[i].start && pc < tb->v[i].end) {
            *t = tb->v[i].t;
            *off = pc - tb->v[i].start + tb->v[i].offset;
            return 1;
        }
    return 0;
}

static void tables_free(struct tables *tb)
{
    for (uint32_t i = 0; i < tb->n; i++)
        sc_unwind_table_free(tb->v[i].t);
}

static char *record_one(enum sc_record_unwind mode, const struct grab *g, size_t len,
                        const uint64_t *ips, uint32_t n, struct sc_record_stats *st)
{
    struct sc_record_opts o;
    memset(&o, 0, sizeof o);
    o.pid = (int32_t)getpid();
    o.unwind = mode;
    o.sym.no_dwarf = 1;
    struct sc_recorder *r = NULL;
    char err[SC_ERR_LEN] = "";
    if (sc_recorder_new_offline(&o, &r, err))
        return strdup("");
    map_self(r, o.pid);
    sample_stack(r, o.pid, 1000, ips, n, g->regs, g->stack, len);
    struct sc_profile *p = NULL;
    int64_t from, until;
    char *fo = NULL;
    if (sc_recorder_take(r, &p, &from, &until, err) == 0) {
        fo = folded(p);
        sc_profile_free(p);
    }
    sc_recorder_stats(r, st);
    sc_recorder_close(r);
    return fo ? fo : strdup("");
}

static void test_unwound_samples(void)
{
#if !defined(__x86_64__)
    fprintf(stderr, "(x86-64 only: skipped)\n");
    return;
#endif
    struct sc_record_opts o;
    memset(&o, 0, sizeof o);
    struct sc_recorder *r = NULL;
    char err[SC_ERR_LEN];
    T_EQ_INT(sc_recorder_new_offline(&o, &r, err), 0);
    uint64_t stack_end = r ? map_self(r, 1) : 0;
    sc_recorder_close(r);
    if (!stack_end)
        T_SKIP("no [stack] mapping");
    static struct grab g;
    t_grab_caller(&g, stack_end);
    T_CHECK(g.len > 256);
    /* the kernel's chain, cut after the leaf as in code without frame pointers */
    uint64_t cut[] = {(uint64_t)PERF_CONTEXT_USER, g.regs[2]};
    struct sc_record_stats st;
    char *fo = record_one(SC_RECORD_UNWIND_AUTO, &g, g.len, cut, 2, &st);
    fprintf(stderr, "  auto: %s", fo);
    /* the whole stack, to the program's entry, without [truncated] */
    T_CHECK(strstr(fo, ";main;") && strstr(fo, "t_grab_caller;t_grab 1\n"));
    T_CHECK(!strncmp(fo, "_start;", 7) && !strstr(fo, "truncated"));
    T_EQ_INT(st.stacks_tables, 1);
    T_EQ_INT(st.truncated, 0);
    T_CHECK(st.unwind_frames >= 6 && st.uw.loads >= 2);
    free(fo);
    /* --unwind=fp: the kernel's chain as it is, marked cut */
    fo = record_one(SC_RECORD_UNWIND_FP, &g, g.len, cut, 2, &st);
    T_CHECK(strstr(fo, "[truncated: ") && strstr(fo, "];t_grab 1\n"));
    T_EQ_INT(st.stacks_tables, 0);
    T_EQ_INT(st.truncated, 1);
    free(fo);

    /* a stack copy too short for the whole walk: the kernel's chain completes it where the
     * two agree, not where they do not (the true chain: a whole walk's) */
    static uint64_t pcs[256], chain[258];
    struct sc_unwind_result res;
    struct tables tb = {0};
    sc_unwind_stack(SC_UW_ARCH_X86_64, &(struct sc_unwind_regs){g.regs[2], g.regs[1], g.regs[0], 0},
                    g.stack, g.len, tables_find, &tb, pcs, 256, &res);
    tables_free(&tb);
    T_EQ_INT(res.stop, SC_UNWIND_END);
    uint32_t nc = 0;
    chain[nc++] = (uint64_t)PERF_CONTEXT_USER;
    for (uint32_t i = 0; i < res.n; i++)
        chain[nc++] = pcs[i];
    size_t shortlen = 48; /* t_grab's frame and a little: two or three frames */
    fo = record_one(SC_RECORD_UNWIND_AUTO, &g, shortlen, chain, nc, &st);
    T_CHECK(!strncmp(fo, "_start;", 7) && strstr(fo, "t_grab_caller;t_grab 1\n"));
    T_EQ_INT(st.stacks_joined, 1);
    T_EQ_INT(st.unwind_stops[SC_UNWIND_STACK_END], 1);
    T_EQ_INT(st.truncated, 0);
    free(fo);
    /* --unwind=cfi: the walk alone, cut at the copy's end */
    fo = record_one(SC_RECORD_UNWIND_CFI, &g, shortlen, chain, nc, &st);
    T_EQ_INT(st.stacks_cut, 1);
    T_EQ_INT(st.truncated, 1);
    T_CHECK(strstr(fo, "[truncated: ") != NULL);
    free(fo);
    /* a kernel chain gone astray after the leaf (frame pointers that are none): not joined */
    for (uint32_t i = 2; i < nc; i++)
        chain[i] = g.regs[2] + 64 * i;
    fo = record_one(SC_RECORD_UNWIND_AUTO, &g, shortlen, chain, nc, &st);
    T_EQ_INT(st.stacks_joined, 0);
    T_EQ_INT(st.stacks_cut, 1);
    T_CHECK(strstr(fo, "[truncated: ") && strstr(fo, "t_grab_caller;t_grab 1\n"));
    free(fo);
}

int main(void)
{
    T_RUN(test_config_record);
    T_RUN(test_symtab);
    T_RUN(test_build_id);
    T_RUN(test_symtab_wanted);
    T_RUN(test_symbolizer_twin);
    T_RUN(test_kernel_wanted);
    T_RUN(test_gopclntab);
    T_RUN(test_records_to_profile);
    T_RUN(test_cache_bound);
    T_RUN(test_unwound_samples);
    T_RUN(test_offcpu);
    T_RUN(test_offcpu_off);
    T_RUN(test_offcpu_merge);
    if (tmpdir[0])
        t_rmrf(tmpdir);
    return t_done();
}
