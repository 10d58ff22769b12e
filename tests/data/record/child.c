/* child.c - a short-lived program: child_hot for ~60 ms, then exit (see forker.c). */
#include <time.h>

volatile unsigned long sink;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

__attribute__((noinline)) void child_hot(void)
{
    volatile int pad[8];
    double end = now() + 0.06;
    while (now() < end)
        for (int i = 0; i < 5000; i++) {
            pad[i & 7] = i;
            sink += (unsigned long)i * 5u;
        }
}

int main(void)
{
    child_hot();
    return 0;
}
