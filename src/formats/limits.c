/* limits.c - the per-input limits' values (CLI, server, scraper) and their checks. */
#include "formats/limits.h"
#include "model/clock.h"
#include "model/error.h"

#include <stdio.h>
#include <time.h>

#define DAY (86400 * SC_NS_PER_S)

const struct sc_limits sc_limits_cli = {
    .max_input = (uint64_t)64 << 30,
    .max_decompressed = (uint64_t)64 << 30,
    .max_samples = 1u << 30,
    .max_locations = 1u << 28,
    .max_functions = 1u << 28,
    .max_mappings = 1u << 24,
    .max_strings = 1u << 28,
    .max_string = 1u << 20,
    .max_stack_depth = 1u << 20,
    .max_labels = 1u << 16,
};

const struct sc_limits sc_limits_server = {
    .max_input = 64u << 20,
    /* no more than the decoder takes: ingest inflates the body itself and hands the plain
     * bytes to sc_decode, which refuses more than max_input, so inflating further only
     * spent memory (a 2 GiB gzip bomb cost 512 MiB before it was refused) */
    .max_decompressed = 64u << 20,
    .max_samples = 1u << 20,
    .max_locations = 1u << 20,
    .max_functions = 1u << 20,
    .max_mappings = 1u << 14,
    .max_strings = 1u << 21,
    /* C++ template names run to a few KiB; a 60 MiB name is an attack, not a symbol */
    .max_string = 64u << 10,
    .max_stack_depth = 4096,
    .max_labels = 64,
    /* 0: the server's retention (server.c), which limits.max_age may only shorten */
    .max_age_ns = 0,
    /* clock skew and a capture's length, not a profile from the future */
    .max_ahead_ns = 3600 * SC_NS_PER_S,
};

const struct sc_limits sc_limits_scrape = {
    .max_input = 64u << 20, /* a response's bytes (scrape_int.h MAX_BODY) */
    .max_decompressed = 512u << 20,
    .max_samples = 4u << 20,
    .max_locations = 4u << 20,
    .max_functions = 1u << 20,
    .max_mappings = 1u << 16,
    .max_strings = 4u << 20,
    .max_string = 64u << 10,
    .max_stack_depth = 4096,
    .max_labels = 64,
};

void sc_limits_override(struct sc_limits *lim, const struct sc_limits *over)
{
#define OVER(f)                                                                                    \
    if (over->f)                                                                                   \
    lim->f = over->f
    OVER(max_input);
    OVER(max_decompressed);
    OVER(max_samples);
    OVER(max_locations);
    OVER(max_functions);
    OVER(max_mappings);
    OVER(max_strings);
    OVER(max_string);
    OVER(max_stack_depth);
    OVER(max_labels);
    OVER(max_age_ns);
    OVER(max_ahead_ns);
#undef OVER
}

int sc_limits_string(const struct sc_limits *lim, size_t len, const char *what, char *err)
{
    if (len <= lim->max_string)
        return 0;
    return sc_errf(err, SC_ELIMIT,
                   "%s of %zu bytes is longer than the limit of %u (limits.max_string)", what, len,
                   (unsigned)lim->max_string);
}

int sc_limits_depth(const struct sc_limits *lim, uint64_t frames, const char *what, char *err)
{
    if (frames <= lim->max_stack_depth)
        return 0;
    return sc_errf(err, SC_ELIMIT,
                   "%s is %llu frames deep (inlined lines counted), deeper than the limit of %u "
                   "(limits.max_stack_depth)",
                   what, (unsigned long long)frames, (unsigned)lim->max_stack_depth);
}

int sc_limits_lines(const struct sc_limits *lim, uint64_t id, uint64_t lines, char *err)
{
    if (lines <= lim->max_stack_depth)
        return 0;
    return sc_errf(err, SC_ELIMIT,
                   "location %llu has %llu lines (inlined frames), deeper than the limit of %u "
                   "frames a sample (limits.max_stack_depth)",
                   (unsigned long long)id, (unsigned long long)lines,
                   (unsigned)lim->max_stack_depth);
}

/* "2026-12-01T13:22:54Z" (whole seconds; int64 nanoseconds always fit gmtime). */
static void put_time(char *out, size_t cap, int64_t ns)
{
    time_t s = (time_t)(ns / SC_NS_PER_S - (ns % SC_NS_PER_S < 0));
    struct tm tm;
    if (!gmtime_r(&s, &tm) || !strftime(out, cap, "%Y-%m-%dT%H:%M:%SZ", &tm))
        snprintf(out, cap, "%lld ns", (long long)ns);
}

/* "30d", "1h", "90m", "45s": the largest unit that divides d exactly. */
static void put_duration(char *out, size_t cap, int64_t d)
{
    static const struct {
        int64_t ns;
        const char *unit;
    } u[] = {{DAY, "d"},
             {3600 * SC_NS_PER_S, "h"},
             {60 * SC_NS_PER_S, "m"},
             {SC_NS_PER_S, "s"},
             {1000000, "ms"}};
    for (size_t i = 0; i < sizeof u / sizeof u[0]; i++)
        if (d % u[i].ns == 0) {
            snprintf(out, cap, "%lld%s", (long long)(d / u[i].ns), u[i].unit);
            return;
        }
    snprintf(out, cap, "%lldns", (long long)d);
}

int sc_limits_time(const struct sc_limits *lim, int64_t now_ns, int64_t t, const char *what,
                   char *err)
{
    int64_t lo, hi;
    if (lim->max_age_ns <= 0 || __builtin_sub_overflow(now_ns, lim->max_age_ns, &lo))
        lo = INT64_MIN;
    if (lim->max_ahead_ns <= 0 || __builtin_add_overflow(now_ns, lim->max_ahead_ns, &hi))
        hi = INT64_MAX;
    if (t >= lo && t <= hi)
        return 0;
    char when[48], span[32];
    put_time(when, sizeof when, t);
    if (t < lo) {
        put_duration(span, sizeof span, lim->max_age_ns);
        return sc_errf(err, SC_EINVAL,
                       "%s %s is more than %s before now (limits.max_age, at most "
                       "storage.retention): it would not be kept",
                       what, when, span);
    }
    put_duration(span, sizeof span, lim->max_ahead_ns);
    return sc_errf(err, SC_EINVAL, "%s %s is more than %s ahead of now (limits.max_ahead)", what,
                   when, span);
}
