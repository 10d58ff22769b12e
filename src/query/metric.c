/* metric.c - the metrics of timelines and comparisons (metric.h). */
#include "query/metric.h"
#include "model/clock.h"

#include <math.h>
#include <stdio.h>

enum sc_metric sc_metric_of(int gauge, int durations_known, int normalize)
{
    return normalize         ? SC_METRIC_SHARE
           : gauge           ? SC_METRIC_AVERAGE
           : durations_known ? SC_METRIC_PER_SECOND
                             : SC_METRIC_PER_PROFILE;
}

const char *sc_metric_name(enum sc_metric m)
{
    switch (m) {
    case SC_METRIC_PER_SECOND:
        return "per_second";
    case SC_METRIC_PER_PROFILE:
        return "per_profile";
    case SC_METRIC_AVERAGE:
        return "average";
    default:
        return "share";
    }
}

void sc_metric_unit(enum sc_metric m, const char *unit, char *out, size_t n)
{
    if (!unit || !*unit)
        unit = "count";
    switch (m) {
    case SC_METRIC_PER_SECOND:
        snprintf(out, n, "%s/s", unit);
        break;
    case SC_METRIC_PER_PROFILE:
        snprintf(out, n, "%s/profile", unit);
        break;
    case SC_METRIC_AVERAGE:
        snprintf(out, n, "%s", unit);
        break;
    default:
        snprintf(out, n, "share");
    }
}

double sc_metric_value(enum sc_metric m, double value, double captures, double covered_ns)
{
    switch (m) {
    case SC_METRIC_PER_SECOND:
        return covered_ns > 0 ? value / (covered_ns / SC_NS_PER_S) : NAN;
    case SC_METRIC_PER_PROFILE:
    case SC_METRIC_AVERAGE:
        return captures > 0 ? value / captures : NAN;
    default:
        return NAN; /* shares are of a replicate's total: compare.c */
    }
}
