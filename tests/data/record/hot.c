/* hot.c - known hot functions for `scorch record` tests: main -> hot_outer -> hot_middle ->
 * hot_leaf takes nearly all the time, cold a little. The pad arrays give every function a
 * stack frame, so with -fno-omit-frame-pointer each one sets up its frame pointer (gcc
 * leaves it out of leaf functions that need no frame). Usage: hot SECONDS */
#include <stdlib.h>
#include <time.h>

volatile unsigned long sink;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

__attribute__((noinline)) void hot_leaf(void)
{
    volatile int pad[8];
    for (int i = 0; i < 20000; i++) {
        pad[i & 7] = i;
        sink += (unsigned long)i * (unsigned long)i;
    }
}

__attribute__((noinline)) void hot_middle(void)
{
    volatile int pad[4];
    pad[0] = 0;
    for (int i = 0; i < 20; i++)
        hot_leaf();
    sink += (unsigned long)pad[0];
}

__attribute__((noinline)) void hot_outer(void)
{
    volatile int pad[4];
    pad[0] = 0;
    for (int i = 0; i < 10; i++)
        hot_middle();
    sink += (unsigned long)pad[0];
}

__attribute__((noinline)) void cold(void)
{
    volatile int pad[8];
    for (int i = 0; i < 20000; i++) {
        pad[i & 7] = i;
        sink ^= (unsigned long)i;
    }
}

int main(int argc, char **argv)
{
    double end = now() + (argc > 1 ? atof(argv[1]) : 5);
    while (now() < end) {
        hot_outer();
        cold();
    }
    return 0;
}
