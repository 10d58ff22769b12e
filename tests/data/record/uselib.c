/* uselib.c - calls libhot.so's lib_entry; once GO_FILE exists it also dlopens liblate.so
 * (a mapping that appears while it is being recorded) and calls its late_entry.
 * Usage: uselib SECONDS GO_FILE LATE_LIB */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

void lib_entry(void);

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

__attribute__((noinline)) void call_late(void (*fn)(void))
{
    volatile int pad[4];
    pad[0] = 0;
    fn();
    pad[1] = pad[0];
}

int main(int argc, char **argv)
{
    if (argc < 4)
        return 2;
    double end = now() + atof(argv[1]);
    void (*late)(void) = NULL;
    while (now() < end) {
        lib_entry();
        if (!late && access(argv[2], F_OK) == 0) {
            void *h = dlopen(argv[3], RTLD_NOW);
            if (!h) {
                fprintf(stderr, "uselib: %s\n", dlerror());
                return 1;
            }
            late = (void (*)(void))dlsym(h, "late_entry");
        }
        if (late)
            call_late(late);
    }
    return 0;
}
