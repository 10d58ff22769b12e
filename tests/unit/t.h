/* t.h - a minimal unit-test harness: checks report file:line and keep going; exit status
 * 1 on any failure, 77 (CTest "skipped") when a test asks to skip.
 *
 * A test program runs every case (T_RUN) without arguments, or the cases named on its
 * command line, as fnmatch patterns: `test_store test_block 'test_gc_*'`. `-l` lists the
 * cases instead. Code of main outside T_RUN (setup) runs either way. */
#ifndef SC_T_H
#define SC_T_H

#include <fnmatch.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/labels.h"

static int t_failures, t_checks;

#define T_CHECK(cond)                                                                              \
    do {                                                                                           \
        t_checks++;                                                                                \
        if (!(cond)) {                                                                             \
            t_failures++;                                                                          \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);               \
        }                                                                                          \
    } while (0)

#define T_EQ_INT(a, b)                                                                             \
    do {                                                                                           \
        long long t_a = (long long)(a), t_b = (long long)(b);                                      \
        t_checks++;                                                                                \
        if (t_a != t_b) {                                                                          \
            t_failures++;                                                                          \
            fprintf(stderr, "%s:%d: %s == %s: %lld != %lld\n", __FILE__, __LINE__, #a, #b, t_a,    \
                    t_b);                                                                          \
        }                                                                                          \
    } while (0)

#define T_EQ_STR(a, b)                                                                             \
    do {                                                                                           \
        const char *t_a = (a), *t_b = (b);                                                         \
        t_checks++;                                                                                \
        if (!t_a || !t_b || strcmp(t_a, t_b) != 0) {                                               \
            t_failures++;                                                                          \
            fprintf(stderr, "%s:%d: %s == %s: \"%s\" != \"%s\"\n", __FILE__, __LINE__, #a, #b,     \
                    t_a ? t_a : "(null)", t_b ? t_b : "(null)");                                   \
        }                                                                                          \
    } while (0)

/* Compares a counted string (ptr, len) with a C string. */
#define T_EQ_MEM(p, n, s)                                                                          \
    do {                                                                                           \
        const char *t_p = (const char *)(p), *t_s = (s);                                           \
        size_t t_n = (size_t)(n);                                                                  \
        t_checks++;                                                                                \
        if (t_n != strlen(t_s) || memcmp(t_p, t_s, t_n) != 0) {                                    \
            t_failures++;                                                                          \
            fprintf(stderr, "%s:%d: %s == \"%s\": got \"%.*s\"\n", __FILE__, __LINE__, #p, t_s,    \
                    (int)t_n, t_p);                                                                \
        }                                                                                          \
    } while (0)

/* The command line, which glibc hands to constructors as to main: this way the test programs'
 * own mains (some take arguments of their own, starting with --) need no part in it. */
static int t_nargs, t_listing, t_selected;
static char **t_args;

__attribute__((constructor)) static void t_read_args(int argc, char **argv, char **envp)
{
    (void)envp;
    t_nargs = argc > 1 ? argc - 1 : 0;
    t_args = argv + 1;
    if (t_nargs == 1 && !strcmp(t_args[0], "-l")) {
        t_listing = 1;
        t_nargs = 0;
    }
}

/* Whether the case name runs (printing it instead with -l). */
static inline int t_wanted(const char *name)
{
    if (t_listing) {
        printf("%s\n", name);
        return 0;
    }
    if (!t_nargs)
        return 1;
    for (int i = 0; i < t_nargs; i++)
        if (fnmatch(t_args[i], name, 0) == 0) {
            t_selected++;
            return 1;
        }
    return 0;
}

#define T_RUN(fn)                                                                                  \
    do {                                                                                           \
        if (!t_wanted(#fn))                                                                        \
            break;                                                                                 \
        int t_before = t_failures;                                                                 \
        fn();                                                                                      \
        fprintf(stderr, "%-40s %s\n", #fn, t_failures == t_before ? "ok" : "FAILED");              \
    } while (0)

static inline int t_done(void)
{
    if (t_listing)
        return t_failures ? 1 : 0;
    /* a misspelt name must not pass as a run of nothing */
    if (t_nargs && !t_selected) {
        fprintf(stderr, "no test case matches the names given (-l lists them)\n");
        return 1;
    }
    fprintf(stderr, "%d checks, %d failed\n", t_checks, t_failures);
    return t_failures ? 1 : 0;
}

/* Path of a file in ../shared/testdata, or NULL when that folder is absent. */
static inline const char *t_testdata(const char *rel)
{
    static char path[4096];
    const char *dir = getenv("SCORCH_TESTDATA");
    if (!dir || !*dir)
        return NULL;
    snprintf(path, sizeof path, "%s/%s", dir, rel);
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fclose(f);
    return path;
}

/* The value of label name in l as a C string (one of four rotating buffers, so a few may be
 * compared at once), or NULL when l lacks it. */
static inline const char *t_label(const struct sc_labels *l, const char *name)
{
    static char buf[4][256];
    static int k;
    struct sc_str v;
    if (!sc_labels_get(l, name, strlen(name), &v))
        return NULL;
    k = (k + 1) % 4;
    snprintf(buf[k], sizeof buf[k], "%.*s", (int)v.len, v.ptr);
    return buf[k];
}

/* Removes a test's temporary directory; 0 or -1 (said on stderr). */
static inline int t_rmrf(const char *dir)
{
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) == 0)
        return 0;
    fprintf(stderr, "cannot remove %s\n", dir);
    return -1;
}

#define T_SKIP(why)                                                                                \
    do {                                                                                           \
        fprintf(stderr, "SKIP: %s\n", why);                                                        \
        exit(77);                                                                                  \
    } while (0)

#endif
