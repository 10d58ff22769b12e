/* watch.h - what changed over a range, from the store: functions over time (fnseries.h)
 * tested for steps, trends, new and gone functions (changes.h), with the times a label such
 * as `version` changed value (markers) beside them. /api/v1/changes and the alerting rules
 * call it. */
#ifndef SC_WATCH_H
#define SC_WATCH_H

#include <stdint.h>

#include "model/buf.h"
#include "query/changes.h"
#include "query/fnseries.h"
#include "query/plan.h"

/* The labels whose value changes are markers unless asked otherwise. */
#define SC_WATCH_MARKER_LABELS "version,commit,revision,release,image"

struct sc_watch_args {
    const char *group_by;      /* NULL: service_name */
    int64_t step_ns;           /* 0: for a range of 12 h or more, about 120 steps of whole
                                  rollups (ten minutes up to 20 h; multiples of ten minutes,
                                  of an hour from about 4 days, of a day from about 4 months)
                                  starting at the first rollup boundary in the range; for a
                                  shorter one the timeline's (range / 120, at least 10 s), but
                                  ten-minute steps as above when those are over a limit (the
                                  read budget: shorter steps read raw profiles) and the range
                                  is 6 h or more. watch.c's top comment says why */
    double level, min_share;   /* changes.h's (0: their defaults) */
    uint32_t max_funcs;        /* functions tested per group, its heaviest (0: 200) */
    const char *marker_labels; /* comma-separated; NULL: SC_WATCH_MARKER_LABELS */
};

/* A label's change of value within a group: the first profile of a series with
 * label=value at `at`, after series of the group with another value of it. */
struct sc_marker {
    uint32_t group;
    char *key; /* the group's value of group_by */
    char *label, *value;
    int64_t at_ns;
};

struct sc_watch {
    struct sc_fnseries fs; /* the functions tested over time */
    struct sc_change *changes;
    uint32_t nchanges;
    struct sc_marker *markers;
    uint32_t nmarkers;
    double level;
};

int sc_plan_watch(struct sc_store *st, const char *tenant, const struct sc_selection *s,
                  const struct sc_watch_args *a, struct sc_watch *w, char *err);
/* {"changes":[...],"markers":[...],"method":"..."} as docs/api.md says. */
void sc_watch_write_json(const struct sc_watch *w, struct sc_buf *out);
void sc_watch_release(struct sc_watch *w);

/* The markers alone (the timeline of every view draws them). */
int sc_plan_markers(struct sc_store *st, const char *tenant, const struct sc_selection *s,
                    const char *group_by, const char *labels, struct sc_marker **out, uint32_t *n,
                    char *err);
void sc_markers_free(struct sc_marker *m, uint32_t n);
/* {"markers":[{"labels":{GROUP_BY:KEY},"label":L,"value":V,"at":S},...]} */
void sc_markers_write_json(const char *group_by, const struct sc_marker *m, uint32_t n,
                           struct sc_buf *out);

#endif
