/* clock.c - the clocks. */
#include "model/clock.h"

#include <stdint.h>
#include <time.h>

static int64_t read_ns(clockid_t c)
{
    struct timespec ts;
    clock_gettime(c, &ts);
    return (int64_t)ts.tv_sec * SC_NS_PER_S + ts.tv_nsec;
}

int64_t sc_wall_ns(void)
{
    return read_ns(CLOCK_REALTIME);
}

int64_t sc_mono_ns(void)
{
    return read_ns(CLOCK_MONOTONIC);
}

int sc_cond_init(pthread_cond_t *cv)
{
    pthread_condattr_t a;
    int rc = pthread_condattr_init(&a);
    if (rc)
        return rc;
    rc = pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
    if (rc == 0)
        rc = pthread_cond_init(cv, &a);
    pthread_condattr_destroy(&a);
    return rc;
}

void sc_deadline(struct timespec *ts, int64_t after_ns)
{
    int64_t now = sc_mono_ns();
    int64_t t = after_ns > 0 && after_ns < INT64_MAX - now ? now + after_ns
                : after_ns > 0                             ? INT64_MAX
                                                           : now;
    ts->tv_sec = (time_t)(t / SC_NS_PER_S);
    ts->tv_nsec = (long)(t % SC_NS_PER_S);
}

double sc_mono_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}
