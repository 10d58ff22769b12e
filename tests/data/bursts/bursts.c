/* bursts.c - a program with a known sub-second pattern for the heatmap tests: for N
 * seconds, burst_compute() keeps a CPU busy for the first 200 ms of every second of
 * CLOCK_MONOTONIC (the clock `perf record -k CLOCK_MONOTONIC` stamps samples with), and
 * idle_work() runs 2 ms of every 20 ms for the rest. usage: bursts SECONDS */
#include <stdlib.h>
#include <time.h>

static volatile unsigned long sink;

static long long now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void sleep_until(long long t)
{
    struct timespec ts = {(time_t)(t / 1000000000LL), (long)(t % 1000000000LL)};
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL))
        ;
}

__attribute__((noinline)) void burst_compute(long long until)
{
    while (now_ns() < until)
        for (int i = 0; i < 2000; i++)
            sink += (unsigned long)i * i;
}

__attribute__((noinline)) void idle_work(long long until)
{
    while (now_ns() < until)
        for (int i = 0; i < 2000; i++)
            sink ^= (unsigned long)i << 3;
}

int main(int argc, char **argv)
{
    int secs = argc > 1 ? atoi(argv[1]) : 4;
    long long start = (now_ns() / 1000000000LL + 1) * 1000000000LL;
    sleep_until(start);
    for (int s = 0; s < secs; s++) {
        long long base = start + s * 1000000000LL;
        burst_compute(base + 200000000LL);
        for (long long t = base + 200000000LL; t < base + 1000000000LL; t += 20000000LL) {
            idle_work(t + 2000000LL);
            sleep_until(t + 20000000LL);
        }
    }
    return 0;
}
