/* clock.h - the clocks, read one way everywhere. */
#ifndef SC_CLOCK_H
#define SC_CLOCK_H

#include <pthread.h>
#include <stdint.h>

#define SC_NS_PER_S 1000000000LL

/* Wall-clock time (CLOCK_REALTIME) in ns since the Unix epoch: what profiles are stamped
 * with and ranges are parsed against. */
int64_t sc_wall_ns(void);
/* Monotonic time (CLOCK_MONOTONIC) in ns: intervals, deadlines, latencies. */
int64_t sc_mono_ns(void);
/* The same in seconds, for latency metrics. */
double sc_mono_s(void);

/* Every condition variable is made by this: its timed waits run on CLOCK_MONOTONIC, as
 * sc_deadline's deadlines do, so a step of the wall clock (NTP, an operator) never
 * stretches a wait by the step or ends it early. 0, or an errno. */
int sc_cond_init(pthread_cond_t *cv);
/* The absolute CLOCK_MONOTONIC time after_ns from now, as pthread_cond_timedwait takes it
 * for a condition variable made by sc_cond_init. */
void sc_deadline(struct timespec *ts, int64_t after_ns);

#endif
