/* clock.h - the clocks, read one way everywhere. */
#ifndef SC_CLOCK_H
#define SC_CLOCK_H

#include <stdint.h>

#define SC_NS_PER_S 1000000000LL

/* Wall-clock time (CLOCK_REALTIME) in ns since the Unix epoch: what profiles are stamped
 * with and ranges are parsed against. */
int64_t sc_wall_ns(void);
/* Monotonic time (CLOCK_MONOTONIC) in ns: intervals, deadlines, latencies. */
int64_t sc_mono_ns(void);
/* The same in seconds, for latency metrics. */
double sc_mono_s(void);

struct timespec;
/* The absolute CLOCK_REALTIME time after_ns from now, as pthread_cond_timedwait takes it. */
void sc_deadline(struct timespec *ts, int64_t after_ns);

#endif
