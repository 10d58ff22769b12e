/* An LD_PRELOAD probe for bench/soak.py: a thread in the process under test writes glibc
 * malloc's totals (mallinfo2) and SQLite's share of them to the file $SCORCH_MALLOC_PROBE
 * once a second, so the soak can tell memory the program holds from memory malloc keeps
 * after free (RSS counts both), and SQLite's bounded page caches from the rest. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char probe_path[4096];

/* "<in use> <held> <free inside> <sqlite's>" in bytes, replaced whole (rename) so a reader
 * never sees half a line; mmap'd chunks count as both in use and held; SQLite's is -1 when
 * the process has no sqlite3_memory_used (looked up, not linked: the probe links nothing). */
static void *probe_main(void *arg)
{
    (void)arg;
    char tmp[sizeof probe_path + 8];
    snprintf(tmp, sizeof tmp, "%s.tmp", probe_path);
    long long (*sqlite_used)(void) = NULL;
    for (;;) {
        if (!sqlite_used)
            *(void **)&sqlite_used = dlsym(RTLD_DEFAULT, "sqlite3_memory_used");
        struct mallinfo2 mi = mallinfo2();
        FILE *f = fopen(tmp, "w");
        if (f) {
            fprintf(f, "%zu %zu %zu %lld\n", mi.uordblks + mi.hblkhd, mi.arena + mi.hblkhd,
                    mi.fordblks, sqlite_used ? sqlite_used() : -1LL);
            if (fclose(f) == 0)
                rename(tmp, probe_path);
        }
        sleep(1);
    }
    return NULL;
}

__attribute__((constructor)) static void probe_start(void)
{
    const char *path = getenv("SCORCH_MALLOC_PROBE");
    if (!path || !path[0] || strlen(path) >= sizeof probe_path)
        return;
    memcpy(probe_path, path, strlen(path) + 1);
    /* the probe is for this process only, not for what it starts */
    unsetenv("SCORCH_MALLOC_PROBE");
    unsetenv("LD_PRELOAD");
    /* every signal blocked in the probe thread: the program's own signal handling (a
     * thread in sigwait, handlers) must not find its signals delivered here */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    pthread_t t;
    if (pthread_create(&t, NULL, probe_main, NULL) == 0) {
        pthread_setname_np(t, "malloc-probe");
        pthread_detach(t);
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
}
