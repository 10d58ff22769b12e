/* timespec.h - the times and durations of query parameters (from, until, step). */
#ifndef SC_TIMESPEC_H
#define SC_TIMESPEC_H

#include <stddef.h>
#include <stdint.h>

/* Parses a point in time into nanoseconds since the Unix epoch (UTC). Accepted:
 * - `now`, and `now-D` / `now+D` with D a duration as sc_duration_parse reads it
 *   (`now-1h`, `now-1h30m`, `now+5s`, `now-500ms`);
 * - a Unix timestamp, digits with an optional fraction, its unit chosen by magnitude as
 *   Grafana and Pyroscope clients send them: below 1e11 seconds (`1700000000`,
 *   `1700000000.25`), below 1e14 milliseconds (13 digits today), below 1e17 microseconds,
 *   else nanoseconds (19 digits today);
 * - RFC 3339: `2026-11-30T04:05:06Z`, with an optional fraction of up to 9 digits (more are
 *   truncated) and `Z` or a `+hh:mm` / `-hh:mm` offset; `t`, `z` and a space for `T` are
 *   accepted as RFC 3339 allows; a bare date `2026-11-30` means its midnight UTC.
 * Results must fit int64 nanoseconds (years 1678 to 2262). Returns 0 or SC_EINVAL with
 * err naming the input: "bad time 'yesterday': expected unix seconds, ...". */
int sc_time_parse(const char *s, int64_t now_ns, int64_t *out_ns, char *err);

/* Parses a duration into nanoseconds: a sequence of <number><unit> with units ns, us (or
 * µs), ms, s, m, h, d (24h), w (7d) and y (365d), e.g. `15s`, `1m30s`, `1h`, `30d`,
 * `500ms`, `1.5h` (Prometheus's units; fractions and any order as Go's ParseDuration);
 * or a bare number of seconds (`90`, `0.25`). No sign. 0 or SC_EINVAL ("bad duration
 * '1x': unknown unit 'x'") / SC_ELIMIT (does not fit int64 nanoseconds). */
int sc_duration_parse(const char *s, int64_t *out_ns, char *err);

/* Writes t (ns since the epoch) as RFC 3339 in UTC, which sc_time_parse reads back:
 * `2026-11-30T04:05:06Z`, with `.123` when it has milliseconds. Returns out. */
char *sc_time_format(int64_t t_ns, char *out, size_t n);

#endif
