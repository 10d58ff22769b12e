/* cli.c - error reporting and output for the subcommands. */
#include "cli/cli.h"
#include "model/error.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <malloc.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

int cli_error(const char *fmt, ...)
{
    va_list ap;
    fputs("scorch: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    return 1;
}

int cli_usage(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "scorch: %s: ", cmd);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, " (see 'scorch %s --help')\n", cmd);
    return 2;
}

int cli_write(const char *path, const struct sc_buf *b)
{
    if (b->oom)
        return cli_error("out of memory");
    int fd = 1;
    int to_file = path && strcmp(path, "-") != 0;
    if (to_file) {
        fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (fd < 0)
            return cli_error("cannot write '%s': %s", path, strerror(errno));
    }
    int rc = sc_buf_write_fd(b, fd);
    int e = errno;
    if (to_file && close(fd) < 0 && rc == 0) {
        rc = -1;
        e = errno;
    }
    if (rc) {
        /* a closed pipe (| head) is not worth a message */
        if (e == EPIPE)
            return 1;
        return cli_error("cannot write '%s': %s", to_file ? path : "stdout", strerror(e));
    }
    return 0;
}

void cli_log_line(void *ctx, const char *line)
{
    (void)ctx;
    fprintf(stderr, "scorch: %s\n", line);
    fflush(stderr);
}

int cli_help(const char *text)
{
    fputs(text, stdout);
    return 0;
}

int cli_setting(const char *cmd, enum sc_set_id id, const char *flag, const char *arg,
                struct sc_set_value *out)
{
    char err[SC_ERR_LEN];
    if (sc_setting_parse(sc_setting(id), arg, flag, out, err))
        return cli_usage(cmd, "%s", err);
    return 0;
}

/* Whether the user tuned malloc: the tunable's MALLOC_*_ variable or GLIBC_TUNABLES naming it
 * (name NULL: any malloc tuning at all). */
static int user_tuned(const char *env, const char *name)
{
    const char *t = getenv("GLIBC_TUNABLES");
    if (!name)
        return t || getenv("MALLOC_MMAP_THRESHOLD_") || getenv("MALLOC_TOP_PAD_") ||
               getenv("MALLOC_TRIM_THRESHOLD_") || getenv("MALLOC_ARENA_MAX");
    return getenv(env) || (t && strstr(t, name));
}

/* glibc raises its mmap threshold each time an mmap'd chunk is freed, up to 32 MiB, after
 * which a push's inflated body and decode buffers come from the heap, between long-lived
 * chunks (SQLite's cache pages, the id caches) that pin it: RSS then creeps up with what
 * malloc keeps. Fixed at its starting value (which also stops glibc raising its trim
 * threshold with it), big transient buffers are mapped and given back on free. Measured in
 * the soak (bench/soak.py, 1,000 pushes/s, 600 s): 95 MiB at the end against 112. Process
 * wide, so before the server starts. */
void cli_malloc_server(void)
{
    if (!user_tuned("MALLOC_MMAP_THRESHOLD_", "mmap_threshold"))
        mallopt(M_MMAP_THRESHOLD, 128 << 10);
}

/* Decoding a large file faults in fresh memory all the while: a system-wide perf.data of
 * 5 MB spent a fifth of its time in page faults (4 KiB each, zeroed and charged), and freed
 * buffers went back to the system to be faulted in again. A process that exits when done
 * need not give memory back. The heap's first 64 MiB are marked for huge pages
 * (MADV_HUGEPAGE: the system's "madvise" mode; a fault per 2 MiB), past that they are
 * plain pages. */
void cli_malloc_once(void)
{
    if (user_tuned(NULL, NULL))
        return;
    mallopt(M_MMAP_THRESHOLD, 32 << 20); /* glibc's most: larger blocks are mmap'd still */
    mallopt(M_TRIM_THRESHOLD, INT_MAX);
    mallopt(M_TOP_PAD, 64 << 20);
    mallopt(M_ARENA_MAX, 1); /* the threads' blocks from that heap too */
    /* the heap grown now (a block, and the pad after it), and marked */
    void *p = malloc(1 << 20);
    if (!p)
        return;
    uintptr_t huge = (uintptr_t)2 << 20;
    uintptr_t lo = ((uintptr_t)p + huge - 1) & ~(huge - 1);
    uintptr_t hi = (uintptr_t)sbrk(0) & ~(uintptr_t)4095;
    if (hi > lo)
        madvise((void *)lo, hi - lo, MADV_HUGEPAGE); /* (refused: plain pages, as before) */
    free(p);
}
