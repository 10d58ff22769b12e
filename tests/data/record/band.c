/* band.c - busy during the first 200 ms of every wall-clock second (band_work), asleep the
 * rest: FlameScope's heatmap of it is a band over the rows of 0-200 ms. Usage: band SECONDS */
#include <stdlib.h>
#include <time.h>

volatile unsigned long sink;

static long long now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

__attribute__((noinline)) void band_work(void)
{
    volatile int pad[8];
    for (int i = 0; i < 2000; i++) {
        pad[i & 7] = i;
        sink += (unsigned long)i;
    }
}

int main(int argc, char **argv)
{
    long long end = now_ns() + (long long)((argc > 1 ? atof(argv[1]) : 5) * 1e9);
    for (long long t; (t = now_ns()) < end;) {
        if (t % 1000000000LL < 200000000LL) {
            band_work();
            continue;
        }
        /* asleep until the next second begins */
        long long next = (t / 1000000000LL + 1) * 1000000000LL;
        struct timespec ts = {(time_t)(next / 1000000000LL), (long)(next % 1000000000LL)};
        clock_nanosleep(CLOCK_REALTIME, TIMER_ABSTIME, &ts, NULL);
    }
    return 0;
}
