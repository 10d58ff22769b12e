/* test_perfdata.c - perf.data read directly: a file written here record by record (as perf
 * record lays it out), its frames, order, threads and maps; truncated and hostile files. */
#include "formats/folded.h"
#include "formats/input.h"
#include "formats/perfdata.h"
#include "model/budget.h"
#include "model/buf.h"
#include "model/error.h"
#include "t.h"
#include "t_perfdata.h"

#include <sys/inotify.h>
#include <time.h>
#include <unistd.h>

static char *folded_of(const struct sc_profile *p)
{
    char err[SC_ERR_LEN];
    struct sc_buf b = SC_BUF_INIT;
    int vi = sc_profile_sample_index(p, NULL, err);
    if (vi < 0 || sc_folded_write(p, vi, &b, err)) {
        sc_buf_release(&b);
        return NULL;
    }
    sc_buf_append(&b, "", 1);
    size_t n;
    return sc_buf_detach(&b, &n);
}

static const struct sc_perfdata_opts no_files = {.no_local_files = 1};

static struct sc_profile *decode(const struct sc_buf *f, char *err)
{
    struct sc_profile *p = sc_profile_new();
    if (!p ||
        sc_perfdata_decode((const uint8_t *)f->data, f->len, NULL, &no_files, NULL, p, NULL, err)) {
        sc_profile_free(p);
        return NULL;
    }
    T_EQ_INT(sc_profile_validate(p, err), 0);
    return p;
}

static void test_records(void)
{
    struct sc_buf d = SC_BUF_INIT, f = SC_BUF_INIT;
    comm(&d, 10, 10, "web server", 5);
    mmap2(&d, 10, 0x400000, 0x1000, "/nonexistent/bin/app", 6);
    /* written out of order (per-CPU buffers): perf script delivers them by time */
    uint64_t c1[] = {CTX_USER, 0x400010, 0x400020};
    sample(&d, 10, 11, 300, 7, c1, 3);
    uint64_t c2[] = {CTX_KERNEL, 0xffffffff81000000ull, CTX_USER, 0x500000};
    sample(&d, 10, 10, 200, 0, c2, 4);
    /* a forked child: its parent's comm and maps, until its own comm */
    fork_rec(&d, 20, 10, 250);
    sample(&d, 20, 20, 260, 5, c1, 3);
    comm(&d, 20, 20, "child", 270);
    sample(&d, 20, 20, 280, 5, c1, 2);
    /* a context perf does not know: the chain is taken for corrupt and dropped */
    uint64_t c3[] = {CTX_USER, 0x400010, (uint64_t)-1};
    sample(&d, 10, 10, 400, 1, c3, 3);
    file(&f, &d);

    char err[SC_ERR_LEN];
    struct sc_profile *p = decode(&f, err);
    T_CHECK(p != NULL);
    if (!p) {
        fprintf(stderr, "decode: %s\n", err);
        return;
    }
    T_EQ_INT(p->nsample_types, 2);
    struct sc_str t0 = sc_profile_str(p, p->sample_types[1].type);
    T_EQ_MEM(t0.ptr, t0.len, "cpu-clock");
    struct sc_str u0 = sc_profile_str(p, p->sample_types[1].unit);
    T_EQ_MEM(u0.ptr, u0.len, "nanoseconds");
    T_EQ_INT(p->nsamples, 5);
    /* in time order; the period 0 counts 1, as the script counts it */
    T_EQ_INT(p->samples[0].time_ns, 0); /* 200 ns: perf script prints microseconds */
    T_EQ_INT(p->values[1], 1);
    char *s = folded_of(p);
    /* thread 11 never had a COMM: ":11", as perf names it; the child's first sample is
     * before its own COMM; an unknown binary's frames are "[app]", as perf script's
     * "[unknown] (/nonexistent/bin/app)" reads */
    T_EQ_STR(s, ":11;[app];[app] 7\n"
                "child;[app] 5\n"
                "web_server 1\n"
                "web_server;[app];[app] 5\n"
                "web_server;[unknown];[[kernel.kallsyms]] 1\n");
    free(s);
    sc_profile_free(p);
    sc_buf_release(&f);

    /* every cut of the file is an error or a profile, never a crash */
    file(&f, &d);
    for (size_t n = 0; n < f.len; n += 7) {
        struct sc_profile *q = sc_profile_new();
        int rc =
            sc_perfdata_decode((const uint8_t *)f.data, n, NULL, &no_files, NULL, q, NULL, err);
        T_CHECK(rc == 0 || rc == SC_EFORMAT || rc == SC_EUNSUPPORTED);
        if (rc == 0)
            T_EQ_INT(sc_profile_validate(q, err), 0);
        sc_profile_free(q);
    }
    /* the data section's end past the file's: named */
    struct sc_profile *q = sc_profile_new();
    int rc = sc_perfdata_decode((const uint8_t *)f.data, 104 + 144 + 20, NULL, &no_files, NULL, q,
                                NULL, err);
    T_EQ_INT(rc, SC_EFORMAT);
    T_CHECK(strstr(err, "truncated") != NULL);
    sc_profile_free(q);
    sc_buf_release(&f);
    sc_buf_release(&d);
}

/* An address names the map that holds it when the sample is taken: after a process maps
 * another file there (its maps' gen changes), and in another process with other maps at
 * the same address (the keys of addresses met before are cached per process and gen). */
static void test_maps_change(void)
{
    struct sc_buf d = SC_BUF_INIT, f = SC_BUF_INIT;
    comm(&d, 10, 10, "a", 100);
    mmap2(&d, 10, 0x400000, 0x1000, "/nonexistent/bin/app", 101);
    uint64_t c[] = {CTX_USER, 0x400010};
    sample(&d, 10, 10, 110, 1, c, 2);
    fork_rec(&d, 20, 10, 120);
    comm(&d, 20, 20, "b", 125);
    mmap2(&d, 10, 0x400000, 0x1000, "/nonexistent/bin/other", 130);
    sample(&d, 10, 10, 140, 2, c, 2);
    sample(&d, 20, 20, 150, 3, c, 2);
    sample(&d, 10, 10, 160, 4, c, 2);
    file(&f, &d);
    char err[SC_ERR_LEN];
    struct sc_profile *p = decode(&f, err);
    T_CHECK(p != NULL);
    if (p) {
        char *s = folded_of(p);
        T_EQ_STR(s, "a;[app] 1\na;[other] 6\nb;[app] 3\n");
        free(s);
        sc_profile_free(p);
    }
    sc_buf_release(&f);
    sc_buf_release(&d);
}

/* The kernel's frames named from a kallsyms file (read ahead on a thread of its own while
 * the records are replayed, then only the symbols the addresses need taken): addresses of
 * one function are one frame, a data symbol ends no function, and without the file the
 * frames are the kernel's name as perf script prints it. */
static void test_kernel_names(void)
{
    char dir[] = "/tmp/scorch-test-perfdata-XXXXXX", path[64];
    if (!mkdtemp(dir))
        T_SKIP("no temporary directory");
    snprintf(path, sizeof path, "%s/kallsyms", dir);
    FILE *k = fopen(path, "w");
    T_CHECK(k != NULL);
    if (!k)
        return;
    fputs("ffffffff81000000 T _stext\n"
          "ffffffff81000100 T kfunc_a\n"
          "ffffffff81000200 t kfunc_b\n"
          "ffffffff81000300 D data_x\n"
          "ffffffff81000400 T kfunc_c\t[some_module]\n",
          k);
    fclose(k);
    struct sc_buf d = SC_BUF_INIT, f = SC_BUF_INIT;
    comm(&d, 10, 10, "web server", 5);
    uint64_t c1[] = {CTX_KERNEL, 0xffffffff81000110ull, 0xffffffff81000250ull};
    uint64_t c2[] = {CTX_KERNEL, 0xffffffff81000120ull, 0xffffffff81000350ull};
    uint64_t c3[] = {CTX_KERNEL, 0xffffffff81000410ull};
    sample(&d, 10, 10, 100, 1, c1, 3);
    sample(&d, 10, 10, 200, 1, c2, 3);
    sample(&d, 10, 10, 300, 1, c3, 2);
    file(&f, &d);
    const char *want[2] = {"web_server;kfunc_b;kfunc_a 2\nweb_server;kfunc_c 1\n",
                           "web_server;[[kernel.kallsyms]] 1\n"
                           "web_server;[[kernel.kallsyms]];[[kernel.kallsyms]] 2\n"};
    for (int missing = 0; missing < 2; missing++) {
        struct sc_perfdata_opts o = {0, missing ? "/nonexistent-scorch-test/kallsyms" : path};
        struct sc_profile *p = sc_profile_new();
        char err[SC_ERR_LEN] = "";
        int rc = sc_perfdata_decode((const uint8_t *)f.data, f.len, NULL, &o, NULL, p, NULL, err);
        T_EQ_INT(rc, 0);
        char *got = rc ? NULL : folded_of(p);
        T_EQ_STR(got ? got : err, want[missing]);
        free(got);
        sc_profile_free(p);
    }
    unlink(path);
    rmdir(dir);
    sc_buf_release(&f);
    sc_buf_release(&d);
}

/* A decoding past its time budget names no DSO: the two naming threads look at the budget
 * before each DSO they take, so no binary is opened (inotify sees every open). */
static void test_deadline(void)
{
    char dir[] = "/tmp/scorch-test-perfdata-XXXXXX", lib[2][64];
    if (!mkdtemp(dir))
        T_SKIP("no temporary directory");
    for (int i = 0; i < 2; i++) {
        snprintf(lib[i], sizeof lib[i], "%s/lib%d.so", dir, i);
        FILE *f = fopen(lib[i], "w");
        T_CHECK(f != NULL);
        if (f) {
            fputs("not an ELF file\n", f);
            fclose(f);
        }
    }
    int in = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    if (in < 0 || inotify_add_watch(in, dir, IN_OPEN) < 0) {
        fprintf(stderr, "SKIP test_deadline: no inotify\n");
    } else {
        struct sc_buf d = SC_BUF_INIT, f = SC_BUF_INIT;
        comm(&d, 10, 10, "app", 5);
        mmap2(&d, 10, 0x400000, 0x1000, lib[0], 6);
        mmap2(&d, 10, 0x500000, 0x1000, lib[1], 7);
        uint64_t c[] = {CTX_USER, 0x400010, 0x500010};
        sample(&d, 10, 10, 100, 1, c, 3);
        file(&f, &d);
        struct sc_budget b;
        sc_budget_begin(&b, 0);
        sc_budget_limit(&b, 1, -1); /* 1 ns: past once the decoding starts */
        nanosleep(&(struct timespec){0, 1000000}, NULL);
        struct sc_perfdata_opts o = {0, "/nonexistent-scorch-test/kallsyms"};
        struct sc_profile *p = sc_profile_new();
        char err[SC_ERR_LEN] = "";
        int rc = sc_perfdata_decode((const uint8_t *)f.data, f.len, NULL, &o, NULL, p, NULL, err);
        sc_budget_end();
        T_EQ_INT(rc, SC_ELIMIT);
        T_CHECK(strstr(err, "time budget") != NULL);
        char ev[4096] __attribute__((aligned(8)));
        ssize_t n = read(in, ev, sizeof ev);
        if (n > 0)
            fprintf(stderr, "a binary was opened past the deadline\n");
        T_CHECK(n <= 0);
        sc_profile_free(p);
        sc_buf_release(&f);
        sc_buf_release(&d);
    }
    if (in >= 0)
        close(in);
    for (int i = 0; i < 2; i++)
        unlink(lib[i]);
    rmdir(dir);
}

/* A user stack recorded empty (--call-graph dwarf while execve replaces the process: the
 * registers are the old image's, the stack the new one's, none of it copied) gives no user
 * frames, as perf script prints none; one copied is walked from its registers. */
static void test_empty_user_stack(void)
{
#if defined(__x86_64__)
    struct sc_buf d = SC_BUF_INIT, f = SC_BUF_INIT;
    comm(&d, 10, 10, "web server", 5);
    mmap2(&d, 10, 0x400000, 0x1000, "/nonexistent/bin/app", 6);
    uint64_t chain[] = {CTX_KERNEL, 0xffffffff81000000ull};
    uint64_t regs[3] = {0, 0x7ffc0000, 0x400010}; /* bp, sp, ip */
    sample_dwarf(&d, 10, 10, 100, chain, 2, regs, 64, 0);
    sample_dwarf(&d, 10, 10, 200, chain, 2, regs, 64, 64);
    file_with(&f, &d, S_REGS_USER | S_STACK_USER, DWARF_REGS);
    char err[SC_ERR_LEN] = "";
    struct sc_profile *p = decode(&f, err);
    T_CHECK(p != NULL);
    char *got = p ? folded_of(p) : NULL;
    T_EQ_STR(got ? got : err, "web_server;[[kernel.kallsyms]] 1\n"
                              "web_server;[app];[[kernel.kallsyms]] 1\n");
    free(got);
    sc_profile_free(p);
    sc_buf_release(&f);
    sc_buf_release(&d);
#else
    T_SKIP("the test's registers are x86-64's");
#endif
}

static void test_hostile(void)
{
    char err[SC_ERR_LEN];
    struct sc_buf d = SC_BUF_INIT, f = SC_BUF_INIT;
    /* a record claiming more than the section, and one of size 0 (an endless loop) */
    header(&d, 9, 2, 4000);
    file(&f, &d);
    struct sc_profile *p = sc_profile_new();
    T_EQ_INT(
        sc_perfdata_decode((const uint8_t *)f.data, f.len, NULL, &no_files, NULL, p, NULL, err),
        SC_EFORMAT);
    T_CHECK(strstr(err, "runs past the data section") != NULL);
    sc_profile_free(p);
    sc_buf_release(&d);
    sc_buf_release(&f);
    header(&d, 9, 2, 0);
    file(&f, &d);
    p = sc_profile_new();
    T_EQ_INT(
        sc_perfdata_decode((const uint8_t *)f.data, f.len, NULL, &no_files, NULL, p, NULL, err),
        SC_EFORMAT);
    T_CHECK(strstr(err, "too short") != NULL);
    sc_profile_free(p);
    sc_buf_release(&d);
    sc_buf_release(&f);
    /* a chain longer than its record */
    header(&d, 9, 2, 48);
    put64(&d, 1);
    put64(&d, 1);
    put64(&d, 1);
    put64(&d, 1);
    put64(&d, 1000);
    file(&f, &d);
    p = sc_profile_new();
    T_EQ_INT(
        sc_perfdata_decode((const uint8_t *)f.data, f.len, NULL, &no_files, NULL, p, NULL, err),
        SC_EFORMAT);
    T_CHECK(strstr(err, "shorter than its fields") != NULL);
    sc_profile_free(p);
    sc_buf_release(&f);
    /* a pipe's stream and a big-endian file are refused by name */
    sc_buf_append(&f, "PERFILE2", 8);
    put64(&f, 16);
    p = sc_profile_new();
    T_EQ_INT(
        sc_perfdata_decode((const uint8_t *)f.data, f.len, NULL, &no_files, NULL, p, NULL, err),
        SC_EUNSUPPORTED);
    T_CHECK(strstr(err, "pipe") != NULL);
    sc_profile_free(p);
    sc_buf_release(&f);
    sc_buf_release(&d);
    /* a process of ever more mappings is refused before it costs quadratic time */
    for (uint64_t i = 0; i < 20000; i++)
        mmap2(&d, 7, 0x10000000 + i * 0x2000, 0x1000, "/x/lib.so", 1);
    file(&f, &d);
    p = sc_profile_new();
    T_EQ_INT(
        sc_perfdata_decode((const uint8_t *)f.data, f.len, NULL, &no_files, NULL, p, NULL, err),
        SC_ELIMIT);
    T_CHECK(strstr(err, "mappings") != NULL);
    sc_profile_free(p);
    sc_buf_release(&f);
    sc_buf_release(&d);
    /* detection, and sc_decode's dispatch */
    T_CHECK(sc_perfdata_detect("PERFILE2", 8));
    T_CHECK(!sc_perfdata_detect("PERFILE", 7));
    T_EQ_INT(sc_detect_format("PERFILE2\x68\0\0\0\0\0\0\0", 16), SC_FMT_PERFDATA);
}

int main(void)
{
    T_RUN(test_records);
    T_RUN(test_maps_change);
    T_RUN(test_kernel_names);
    T_RUN(test_empty_user_stack);
    T_RUN(test_deadline);
    T_RUN(test_hostile);
    return t_done();
}
