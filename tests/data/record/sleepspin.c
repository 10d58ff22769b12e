/* sleepspin.c - a program for the off-CPU test, built -O2 -fomit-frame-pointer: main sleeps
 * 8 ms in nanosleep (sleep_fn) and spins 2 ms on the CPU (spin_fn, a frameless leaf's loop
 * until the clock says so) in turn, for SECONDS: 80% of its wall time asleep, 20% running.
 * At the end it prints the shares it measured itself ("sleep 79.6 spin 20.4"): a loaded
 * machine lengthens the sleeps (the wakeup waits for a CPU) and the spins (preempted). Usage:
 * sleepspin SECONDS */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

volatile unsigned long sink;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

__attribute__((noinline)) void sleep_fn(void)
{
    struct timespec ts = {0, 8000000};
    nanosleep(&ts, NULL);
    __asm__ volatile(""); /* not a tail call: sleep_fn stays on the stack */
}

__attribute__((noinline)) unsigned long spin_leaf(unsigned long x)
{
    for (int i = 0; i < 20000; i++)
        x = x * 6364136223846793005ul + (unsigned long)i;
    return x;
}

__attribute__((noinline)) void spin_fn(double secs)
{
    double end = now() + secs;
    while (now() < end)
        sink = spin_leaf(sink);
    __asm__ volatile("");
}

int main(int argc, char **argv)
{
    double secs = argc > 1 ? atof(argv[1]) : 3, t0 = now(), slept = 0, spun = 0;
    while (now() - t0 < secs) {
        double a = now();
        sleep_fn();
        double b = now();
        spin_fn(0.002);
        spun += now() - b;
        slept += b - a;
    }
    printf("sleep %.1f spin %.1f\n", 100 * slept / (slept + spun), 100 * spun / (slept + spun));
    return 0;
}
