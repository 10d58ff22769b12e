/* unwind_bench.c - what building the unwind tables of binaries costs: per file its FDEs,
 * rows, memory and build time, and the totals. With -d, a file's rows are printed (the
 * table as scorch record uses it). Not a test.
 *
 * usage: unwind_bench FILE...          (e.g. every .so of /lib/x86_64-linux-gnu)
 *        unwind_bench -d FILE          (dump the rows) */
#include "collect/unwind.h"
#include "model/clock.h"
#include "model/error.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static const char *const cfa_names[] = {"none", "sp", "fp", "plt", "deref-fp", "end", "unknown"};
static const char *const fp_names[] = {"same", "at-cfa", "at-fp", "unknown"};
static const char *const ra_names[] = {"at-cfa", "lr", "unknown"};

static void dump(const struct sc_unwind_table *t)
{
    struct sc_unwind_rule u;
    struct sc_unwind_table_stats st;
    sc_unwind_table_stats(t, &st);
    for (uint64_t off = st.start; off < st.end && sc_unwind_find(t, off, &u); off = u.end) {
        printf("%#10llx-%#10llx cfa %-8s %6d ra %-7s %4d fp %-7s %6d", (unsigned long long)u.start,
               (unsigned long long)u.end, cfa_names[u.cfa], u.cfa_off, ra_names[u.ra], u.ra_off,
               fp_names[u.fp], u.fp_off);
        if (u.cfa == SC_UW_CFA_PLT)
            printf(" plt mask %u min %u", u.plt_mask, u.plt_min);
        printf("\n");
    }
}

int main(int argc, char **argv)
{
    int d = argc > 1 && !strcmp(argv[1], "-d");
    uint64_t rows = 0, bytes = 0, fdes = 0, bad = 0;
    double secs = 0;
    int files = 0;
    printf("%-60s %8s %8s %6s %7s %9s %8s\n", "file", "fdes", "rows", "bad", "unknown", "KiB",
           "ms");
    for (int i = 1 + d; i < argc; i++) {
        int fd = open(argv[i], O_RDONLY | O_CLOEXEC);
        if (fd < 0)
            continue;
        struct sc_unwind_table *t;
        char err[SC_ERR_LEN];
        double t0 = sc_mono_s();
        int rc = sc_unwind_load(fd, NULL, 0, NULL, &t, err);
        double el = sc_mono_s() - t0;
        close(fd);
        if (rc) {
            printf("%-60s %s\n", argv[i], err);
            continue;
        }
        struct sc_unwind_table_stats st;
        sc_unwind_table_stats(t, &st);
        printf("%-60s %8u %8u %6u %7u %9.1f %8.2f%s%s\n", argv[i], st.fdes, st.rows, st.fdes_bad,
               st.unknown, st.bytes / 1024.0, el * 1e3, st.truncated ? " (cut)" : "",
               st.frame_pointers_only ? " (go: frame pointers)" : "");
        if (d)
            dump(t);
        rows += st.rows;
        bytes += st.bytes;
        fdes += st.fdes;
        bad += st.fdes_bad;
        secs += el;
        files++;
        sc_unwind_table_free(t);
    }
    printf("%d files: %llu FDEs (%llu bad), %llu rows, %.1f MiB, %.1f ms\n", files,
           (unsigned long long)fdes, (unsigned long long)bad, (unsigned long long)rows,
           bytes / 1048576.0, secs * 1e3);
    return 0;
}
