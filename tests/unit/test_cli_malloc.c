/* test_cli_malloc.c - the allocator of a command that reads its inputs once: large blocks
 * from the heap (not mmap'd and unmapped again), kept when freed, the heap marked for huge
 * pages; and left alone when the user tuned malloc. */
#include "t.h"

#include "cli/cli.h"

#include <stdint.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define SANITIZED 1
#endif
#endif

#define BLOCK ((size_t)4 << 20) /* above glibc's default mmap threshold, below ours */

/* Whether p lies in the heap (below the break) rather than in a mapping of its own. */
static int in_heap(const void *p)
{
    return (uintptr_t)p < (uintptr_t)sbrk(0);
}

/* The VmFlags of the mapping that holds p, from /proc/self/smaps ("" when not found). */
static void vm_flags(const void *p, char *out, size_t n)
{
    *out = 0;
    FILE *f = fopen("/proc/self/smaps", "r");
    char line[512];
    int in = 0;
    while (f && fgets(line, sizeof line, f)) {
        unsigned long lo, hi;
        if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2) { /* a mapping's line, not a field's */
            in = (uintptr_t)p >= lo && (uintptr_t)p < hi;
            continue;
        }
        if (in && !strncmp(line, "VmFlags:", 8)) {
            snprintf(out, n, "%.200s", line + 8);
            break;
        }
    }
    if (f)
        fclose(f);
}

/* Whether the system lets a program ask for transparent huge pages. */
static int thp_allowed(void)
{
    FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
    char line[128] = "";
    if (f) {
        if (!fgets(line, sizeof line, f))
            line[0] = 0;
        fclose(f);
    }
    return strstr(line, "[madvise]") || strstr(line, "[always]");
}

static void test_once(void)
{
    cli_malloc_once();
    char *p = malloc(BLOCK);
    T_CHECK(p != NULL);
    T_CHECK(in_heap(p)); /* glibc's default would have mapped it on its own */
    memset(p, 1, BLOCK);
    free(p);
    char *q = malloc(BLOCK);
    T_CHECK(q == p); /* kept, not given back */
    if (thp_allowed()) {
        char flags[256];
        /* a 2 MiB-aligned address inside the block: in the marked part of the heap */
        uintptr_t a = ((uintptr_t)q + ((uintptr_t)2 << 20) - 1) & ~(((uintptr_t)2 << 20) - 1);
        vm_flags((const void *)a, flags, sizeof flags);
        T_CHECK(strstr(flags, " hg") != NULL);
    }
    free(q);
}

/* GLIBC_TUNABLES set: nothing changes (a child process, as malloc's settings are for good). */
static void test_user_tuned(void)
{
    pid_t pid = fork();
    T_CHECK(pid >= 0);
    if (pid == 0) {
        setenv("GLIBC_TUNABLES", "glibc.malloc.check=0", 1);
        cli_malloc_once();
        char *p = malloc(BLOCK);
        _exit(p && !in_heap(p) ? 0 : 1);
    }
    int st = 0;
    T_EQ_INT(waitpid(pid, &st, 0), pid);
    T_CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

int main(void)
{
#ifdef SANITIZED
    T_SKIP("a sanitizer's allocator is not glibc's");
#endif
    T_RUN(test_user_tuned); /* first: the child inherits malloc's settings as they are */
    T_RUN(test_once);
    return t_done();
}
