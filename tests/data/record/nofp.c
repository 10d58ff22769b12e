/* nofp.c - a program for the unwinding tests, built -O2 -fomit-frame-pointer: main spends
 * its time in three places, about a third each: a leaf that keeps no frame (spin_leaf, under
 * spin_phase), the bottom of a recursion 40 calls deep (recurse -> ... -> recurse_leaf), and
 * a shared library built the same way (lib_entry -> lib_hot, libnofp.so). rbp is an ordinary
 * register everywhere: a frame pointer walk finds nothing. Usage: nofp SECONDS */
#include <stdlib.h>
#include <time.h>

void lib_entry(unsigned long n);

volatile unsigned long sink;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* no stack frame: the return address stays at the stack pointer */
__attribute__((noinline)) unsigned long spin_leaf(unsigned long x)
{
    for (int i = 0; i < 200000; i++)
        x = x * 6364136223846793005ul + (unsigned long)i;
    return x;
}

__attribute__((noinline)) void spin_phase(void)
{
    volatile unsigned long pad[4];
    pad[0] = spin_leaf(pad[1]);
    sink += pad[0];
}

__attribute__((noinline)) unsigned long recurse_leaf(unsigned long x)
{
    for (int i = 0; i < 200000; i++)
        x = (x ^ (unsigned long)i) * 31u;
    return x;
}

__attribute__((noinline)) unsigned long recurse(int depth, unsigned long x)
{
    volatile unsigned long pad[2];
    pad[0] = x + (unsigned long)depth;
    if (depth == 0)
        return recurse_leaf(pad[0]) + 1;
    return recurse(depth - 1, pad[0]) * 3 + pad[1];
}

int main(int argc, char **argv)
{
    double end = now() + (argc > 1 ? atof(argv[1]) : 5);
    while (now() < end) {
        spin_phase();
        sink += recurse(40, sink);
        lib_entry(sink);
    }
    return 0;
}
