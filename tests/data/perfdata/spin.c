/* spin.c - a small CPU-bound program for the perf.data tests: three functions deep, a
 * library call (sqrt) and a system call now and then, so stacks cross libc and the kernel. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static volatile double sink;

__attribute__((noinline)) static void spin_leaf(int n)
{
    double s = 0;
    for (int i = 0; i < n; i++)
        s += sqrt((double)i);
    sink = s;
}

__attribute__((noinline)) static void spin_mid(int n)
{
    spin_leaf(n);
    spin_leaf(n / 2);
    if (((int)sink & 7) == 0)
        (void)getppid();
}

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 300;
    for (int k = 0; k < rounds; k++)
        spin_mid(200000);
    printf("%f\n", sink);
    return 0;
}
