/* plan.h - one query from its parameters to its answer: the path the server, the CLI and the
 * tests all take.
 *
 * A plan: parse the selection (selector, type, time range) -> find its series in a store ->
 * read the store's rows at the resolution the range allows (the store picks rollups) ->
 * merge -> apply focus/ignore/hide/show -> hand the profile to an output (flame JSON, top,
 * pprof, folded, SVG, speedscope, DOT, call graph, source, diff, heatmap, timeline). Files
 * are a source too: sc_plan_files loads, merges and filters them the same way. */
#ifndef SC_PLAN_H
#define SC_PLAN_H

#include <stdint.h>

#include "formats/input.h"
#include "model/json.h"
#include "model/profile.h"
#include "query/compare.h"
#include "query/filter.h"
#include "query/metric.h"
#include "query/selector.h"
#include "store/store.h"

/* One selection's parameters as text; NULL means the default: query "{}", from now-1h,
 * until now. prefix names them in errors ("base_" gives "bad 'base_from': ..."). */
struct sc_plan_args {
    const char *query, *from, *until;
    const char *prefix;
};

/* The longest query range (from to until): 100 years, far past any retention, and short
 * enough that until - from, with from taken down to its second, fits int64 (step counts
 * use sc_div_ceil, so a huge step adds nothing to it). */
#define SC_MAX_RANGE_NS (100LL * 366 * 86400 * 1000000000LL)

/* A selection resolved against a store: its series, with their labels. */
struct sc_selection {
    struct sc_selector *selector;
    const char *type; /* borrowed; NULL: any type (listings) */
    int64_t from, until;
    uint64_t *ids;
    char **labels; /* canonical text per id */
    uint32_t n, cap;
};

/* Parses a into s (times relative to now_ns): 0, or SC_EINVAL / SC_ELIMIT (a selector
 * too long) with a message naming the parameter in err. Release s also after a failure. */
int sc_selection_parse(struct sc_selection *s, const struct sc_plan_args *a, const char *type,
                       int64_t now_ns, char *err);
/* Finds s's series of its type (or any type) in [from, until) that its selector matches. */
int sc_selection_find(struct sc_selection *s, struct sc_store *st, const char *tenant, char *err);
void sc_selection_release(struct sc_selection *s);

/* The store query of a selection. */
struct sc_store_query sc_selection_query(const struct sc_selection *s, const char *tenant);

/* The merged profile of s with fo applied (fo may be NULL); a selection without profiles
 * gives an empty profile of its type, so every output still answers. *out is the
 * caller's. 0 or SC_E* (SC_ELIMIT: the read budget). */
int sc_plan_merge(struct sc_store *st, const char *tenant, const struct sc_selection *s,
                  const struct sc_filter_opts *fo, struct sc_profile **out, char *err);

/* Loads files (or stdin for "-"), merges them into one profile and applies fo (may be
 * NULL). One file is left lazy when dopts->lazy_samples and there is no filter. */
int sc_plan_files(const char *const *paths, uint32_t n, const struct sc_decode_opts *dopts,
                  const struct sc_filter_opts *fo, struct sc_profile **out, char *err);

/* Both sides of a comparison cut into replicates (at most `reps` buckets each, see
 * replicates.h) with fo applied to each, tested with opts: a finished comparison. */
int sc_plan_compare(struct sc_store *st, const char *tenant, const struct sc_selection *base,
                    const struct sc_selection *sel, const struct sc_filter_opts *fo,
                    const struct sc_cmp_opts *opts, uint32_t reps, struct sc_cmp **out, char *err);

/* ---- timeline ---- */

/* The most series x steps values a timeline reads (8 bytes each, and ~10 in JSON). */
#define SC_TIMELINE_MAX_CELLS (1 << 22)
#define SC_TIMELINE_MAX_STEPS 10000

struct sc_timeline {
    int64_t from, step; /* ns */
    uint32_t nsteps, nlines;
    char **keys;           /* grouped: each line's value of the group_by label */
    const char *group;     /* the group_by label, or NULL: a line per series */
    double *values;        /* nlines x nsteps, in `unit`; NaN: no profile in the step */
    enum sc_metric metric; /* what the values are (query/metric.h) */
    char unit[80];         /* their unit: "nanoseconds/s", "bytes", ... */
};

/* The values per step of s (query/metric.h: a rate, an average or a value per profile, never
 * a sum that grows with the step), a line per series or per value of group_by (NULL: none;
 * a line sums its series); step 0 picks about 120 steps of whole seconds (at least 10 s)
 * within the cell limit. 0, or SC_EINVAL / SC_ELIMIT with the reason (steps or cells over
 * their limits), or SC_E*. */
int sc_plan_timeline(struct sc_store *st, const char *tenant, const struct sc_selection *s,
                     int64_t step_ns, const char *group_by, struct sc_timeline *t, char *err);
/* The steps of s's timeline for step (ns; 0: as sc_plan_timeline picks them): the first's
 * start (s->from taken down to its second), their width and count. 0, or SC_ELIMIT with the
 * reason (steps or series x steps over their limits). */
int sc_plan_timeline_steps(const struct sc_selection *s, int64_t step, int64_t *from_out,
                           int64_t *step_out, uint32_t *nsteps_out, char *err);
/* sc_plan_timeline that also hands over each series' own values (s->n x nsteps in the
 * timeline's metric, NaN: no profile; a line's value is the sum of its series') in *series
 * and each series' line in *line_of (s->n entries): both the caller's to free, NULL on
 * failure; either pointer may be NULL when not wanted. For functions over time (fnseries.h),
 * which split each series' value among its functions. */
int sc_plan_timeline_series(struct sc_store *st, const char *tenant, const struct sc_selection *s,
                            int64_t step_ns, const char *group_by, struct sc_timeline *t,
                            double **series, uint32_t **line_of, char *err);
/* {"timestamps":[...],"step":S,"unit":U,"aggregation":A,"series":[{"labels":{...},
 * "values":[...]},...]}: a step without a profile is null */
void sc_timeline_write_json(const struct sc_timeline *t, const struct sc_selection *s,
                            struct sc_buf *out);
/* The same with string members before "series": fields holds their keys and values in
 * turn, ended by NULL ({"function", "f", NULL}); NULL: none. */
void sc_timeline_write_json_with(const struct sc_timeline *t, const struct sc_selection *s,
                                 const char *const *fields, struct sc_buf *out);
void sc_timeline_release(struct sc_timeline *t);

/* The lines of a timeline grouped by label `group`: line_of[i] is series i's line, keys[j]
 * line j's value of the label (strdup'd; keys has room for s->n + 1), *nkeys the lines.
 * Series without the label share the line of "". 0 or SC_ENOMEM. */
int sc_plan_group(const struct sc_selection *s, const char *group, uint32_t *line_of, char **keys,
                  uint32_t *nkeys);

/* A series' canonical labels ({a="x"}) as the next value of a JSON writer: an object. */
void sc_plan_labels_json(struct sc_json *j, const char *canon);
/* A time as the next value of a JSON writer: Unix seconds with up to nine exact decimals
 * (floored: -1.5 s is -2.5). */
void sc_plan_seconds_json(struct sc_json *j, int64_t ns);

/* ---- one stored profile ---- */

/* Which one: the tenant's series whose canonical labels are `series` (sc_labels_format),
 * its profile of `type` at time_ns. */
struct sc_profile_ref {
    const char *tenant, *type, *series;
    int64_t time_ns;
};
/* Reads the profile ref names and applies fo (NULL: none): *out is the caller's
 * (sc_profile_free). 0, SC_ENOTFOUND (no such series or profile) or SC_E*. */
int sc_plan_profile(struct sc_store *st, const struct sc_profile_ref *ref,
                    const struct sc_filter_opts *fo, struct sc_profile **out, char *err);
/* That profile as the UI's profile view shows it: its flame graph JSON (its first value
 * column, at most max_nodes nodes), with the top table when top, and "profile":{"labels",
 * "series","time","time_ns"} saying which one it is. 0 or SC_E* as sc_plan_profile. */
int sc_plan_profile_json(struct sc_store *st, const struct sc_profile_ref *ref,
                         const struct sc_filter_opts *fo, uint32_t max_nodes, int top,
                         struct sc_buf *out, char *err);

#endif
