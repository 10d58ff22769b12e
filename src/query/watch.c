/* watch.c - what changed over a range: functions over time from the store (fnseries.c),
 * tested for steps, trends, new and gone functions (changes.c), and the times a label such
 * as `version` took a new value (markers) beside them.
 *
 * What is tested: each function's self value per step (flat: what the function itself
 * spends, allocates or holds), in the timeline's metric (a rate, an average). Its total
 * (cum) would flag every caller of a changed function as changed too: main, its handler,
 * the handler's caller... one change would be a dozen findings.
 *
 * A marker: within a group (a group_by value), a value of a marker label whose first
 * profile in the range comes later than the group's first profile carrying the label by
 * more than a step: v1 ran, then v2 appeared. Two instances running different versions
 * from the start are not a change; nor is the first value seen. */
#include "query/watch.h"
#include "model/budget.h"
#include "model/clock.h"
#include "model/error.h"
#include "model/json.h"
#include "model/labels.h"
#include "model/setting.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The default step (the caller passes 0), measured by bench/changes.sh (100 services, a
 * profile a minute each, a day).
 *
 * Reads. fnseries.c reads a step of ten minutes or more from the store's rollups and a
 * shorter one from raw profiles, a stored block each: those services hold 36,000 profiles
 * in 6 h and 72,000 in 12 h, past the server's read budget (server.max_read_blocks,
 * 20,000), where their ten-minute rollups are 3,600 and 7,200. The timeline's default step
 * (range / 120) is under ten minutes up to 20 h.
 *
 * Steps of whole rollups. A step that is not whole rollup buckets (the timeline's 720 s of
 * a day, or ten minutes from a `from` off the ten-minute grid) takes a bucket that straddles
 * two steps into both, in proportion: neighbouring steps share rows, a noise correlated from
 * step to step, which the tests take for a trend or a step (changes.md, Assumptions). Over
 * the same data, 3 false findings in a day at 720 s and 5 in 12 h at 600 s from an unaligned
 * `from`; none at 1,200 s and 600 s from a boundary.
 *
 * So from ROLLUP_FROM_NS on the step is the timeline's rounded up to whole buckets of the
 * rollup it is read from (ten minutes up to 20 h: 72 to 120 steps; multiples of ten minutes
 * up to about 4 days, of an hour up to about 4 months, then of a day), and the steps start
 * at the first such boundary in the range (the
 * range's first bucket, cut by `from`, is left out). Shorter ranges keep the timeline's
 * finer steps; when those are over a limit (the read budget, typically) a range of at least
 * ROLLUP_RETRY_FROM_NS is asked once more in ten-minute steps (36 or more: a step of +60% is
 * still found; with fewer, "nothing found" would mean "too few steps to tell"). */
#define ROLLUP_FROM_NS (12 * 3600LL * SC_NS_PER_S)
#define ROLLUP_RETRY_FROM_NS (6 * 3600LL * SC_NS_PER_S)
#define DEFAULT_STEPS 120 /* the timeline's (sc_plan_timeline) */
/* The store's rollup widths in seconds, longest first (store_int.h's SC_ROLLUP_*), which
 * fnseries.c's read grid starts with. */
static const int64_t rollup_widths[] = {86400, 3600, 600};

/* Series a marker search looks at, at most: each costs a read of its first profile. */
#define MARKER_MAX_SERIES 5000
/* A step finding within this many steps of a marker of its group names it. */
#define MARKER_NEAR_STEPS 2

void sc_markers_free(struct sc_marker *m, uint32_t n)
{
    for (uint32_t i = 0; m && i < n; i++) {
        free(m[i].key);
        free(m[i].label);
        free(m[i].value);
    }
    free(m);
}

/* One series' value of one marker label, and when the series starts in the range. */
struct seen {
    uint32_t group;
    uint32_t label; /* index into the label list */
    const char *value;
    size_t vlen;
    int64_t first;
};

static int seen_cmp(const void *a, const void *b)
{
    const struct seen *x = a, *y = b;
    if (x->group != y->group)
        return x->group < y->group ? -1 : 1;
    if (x->label != y->label)
        return x->label < y->label ? -1 : 1;
    if (x->first != y->first)
        return x->first < y->first ? -1 : 1;
    size_t n = x->vlen < y->vlen ? x->vlen : y->vlen;
    int c = memcmp(x->value, y->value, n);
    return c ? c : (x->vlen > y->vlen) - (x->vlen < y->vlen);
}

/* Splits a comma-separated list of label names into names[] (pointers into buf). */
static uint32_t split_labels(char *buf, const char **names, uint32_t max)
{
    uint32_t n = 0;
    for (char *s = buf, *e; s && *s && n < max; s = e ? e + 1 : NULL) {
        e = strchr(s, ',');
        if (e)
            *e = 0;
        while (*s == ' ')
            s++;
        size_t len = strlen(s);
        while (len && s[len - 1] == ' ')
            s[--len] = 0;
        if (len && sc_label_name_valid(s, len))
            names[n++] = s;
    }
    return n;
}

/* The markers of s grouped as line_of says (ngroups groups), a value counting as new when
 * it first shows more than slack_ns after its group's first value of the label. */
static int find_markers(struct sc_store *st, const char *tenant, const struct sc_selection *s,
                        const uint32_t *line_of, char **keys, const char *labels, int64_t slack_ns,
                        struct sc_marker **out, uint32_t *nout, char *err)
{
    *out = NULL;
    *nout = 0;
    char lbuf[512];
    snprintf(lbuf, sizeof lbuf, "%s", labels ? labels : SC_WATCH_MARKER_LABELS);
    const char *names[16];
    uint32_t nnames = split_labels(lbuf, names, 16);
    if (!nnames || !s->n || s->n > MARKER_MAX_SERIES)
        return 0; /* too many series to read each one's start: no markers, not an error */
    struct seen *sv = malloc((size_t)s->n * nnames * sizeof *sv);
    struct sc_labels *ls = calloc(s->n, sizeof *ls);
    if (!sv || !ls) {
        free(sv);
        free(ls);
        return sc_errf(err, SC_ENOMEM, "out of memory");
    }
    uint32_t n = 0;
    int rc = 0;
    for (uint32_t i = 0; rc == 0 && i < s->n; i++) {
        sc_labels_init(&ls[i]);
        char lerr[SC_ERR_LEN];
        if (sc_labels_parse(s->labels[i], &ls[i], lerr))
            continue;
        int any = 0;
        struct sc_str v[16];
        for (uint32_t k = 0; k < nnames; k++) {
            v[k].ptr = NULL;
            v[k].len = 0;
            if (sc_labels_get(&ls[i], names[k], strlen(names[k]), &v[k]) && v[k].len)
                any = 1;
            else
                v[k].ptr = NULL;
        }
        if (!any)
            continue;
        struct sc_store_query q = sc_selection_query(s, tenant);
        q.series = &s->ids[i];
        q.nseries = 1;
        int64_t first, last;
        int r = sc_store_span(st, &q, &first, &last, err);
        if (r == SC_ENOTFOUND)
            continue;
        if (r) {
            rc = r;
            break;
        }
        for (uint32_t k = 0; k < nnames; k++)
            if (v[k].ptr)
                sv[n++] = (struct seen){line_of[i], k, v[k].ptr, v[k].len, first};
    }
    if (rc == 0 && n)
        qsort(sv, n, sizeof *sv, seen_cmp);
    /* per group and label: its first value's time; a value seen first later than that by
     * more than the slack is a marker (once: at its earliest series) */
    uint32_t cap = 0;
    for (uint32_t a = 0; rc == 0 && a < n;) {
        uint32_t b = a;
        while (b < n && sv[b].group == sv[a].group && sv[b].label == sv[a].label)
            b++;
        int64_t start = sv[a].first;
        for (uint32_t i = a; rc == 0 && i < b; i++) {
            if (sv[i].first <= start + slack_ns)
                continue;
            int dup = 0; /* the value already seen in this group (earlier in time order) */
            for (uint32_t j = a; j < i && !dup; j++)
                dup = sv[j].vlen == sv[i].vlen && !memcmp(sv[j].value, sv[i].value, sv[i].vlen);
            if (dup)
                continue;
            if (sc_grow_array(out, &cap, (uint64_t)*nout + 1, sizeof **out)) {
                rc = SC_ENOMEM;
                break;
            }
            struct sc_marker *m = &(*out)[*nout];
            m->group = sv[i].group;
            m->at_ns = sv[i].first;
            m->key = strdup(keys[sv[i].group]);
            m->label = strdup(names[sv[i].label]);
            m->value = strndup(sv[i].value, sv[i].vlen);
            ++*nout;
            if (!m->key || !m->label || !m->value)
                rc = SC_ENOMEM;
        }
        a = b;
    }
    for (uint32_t i = 0; i < s->n; i++)
        sc_labels_release(&ls[i]);
    free(ls);
    free(sv);
    if (rc) {
        sc_markers_free(*out, *nout);
        *out = NULL;
        *nout = 0;
        return rc == SC_ENOMEM ? sc_errf(err, rc, "out of memory") : rc;
    }
    return 0;
}

/* The group of every series of s, by group_by: line_of[i]; keys get each group's value. */
static int group_series(const struct sc_selection *s, const char *group_by, uint32_t **line_of,
                        char ***keys, uint32_t *nkeys, char *err)
{
    *line_of = malloc(((size_t)s->n + 1) * sizeof **line_of);
    *keys = calloc((size_t)s->n + 1, sizeof **keys);
    if (!*line_of || !*keys || sc_plan_group(s, group_by, *line_of, *keys, nkeys))
        return sc_errf(err, SC_ENOMEM, "out of memory");
    return 0;
}

int sc_plan_markers(struct sc_store *st, const char *tenant, const struct sc_selection *s,
                    const char *group_by, const char *labels, struct sc_marker **out, uint32_t *n,
                    char *err)
{
    *out = NULL;
    *n = 0;
    uint32_t *line_of = NULL, nkeys = 0;
    char **keys = NULL;
    int rc = group_series(s, group_by && *group_by ? group_by : "service_name", &line_of, &keys,
                          &nkeys, err);
    if (rc == 0)
        rc = find_markers(st, tenant, s, line_of, keys, labels, 60 * SC_NS_PER_S, out, n, err);
    free(line_of);
    sc_strv_free(keys, nkeys);
    return rc;
}

void sc_watch_release(struct sc_watch *w)
{
    sc_fnseries_release(&w->fs);
    free(w->changes);
    sc_markers_free(w->markers, w->nmarkers);
    memset(w, 0, sizeof *w);
}

/* Whether the query's time is up or its client gone: no second try then. */
static int budget_stopped(void)
{
    struct sc_budget *b = sc_budget_current();
    return b && atomic_load(&b->stopped);
}

/* The longest rollup width no longer than step (ns), or the shortest. */
static int64_t rollup_width(int64_t step)
{
    size_t n = sizeof rollup_widths / sizeof *rollup_widths;
    for (size_t k = 0; k < n; k++)
        if (rollup_widths[k] * SC_NS_PER_S <= step)
            return rollup_widths[k] * SC_NS_PER_S;
    return rollup_widths[n - 1] * SC_NS_PER_S;
}

/* For a range of s at least min_span long: about DEFAULT_STEPS steps of whole rollup buckets
 * (see the top of the file), and in *from the first bucket boundary at or after s->from,
 * where they start. 0 (and *from untouched) for a shorter range, or when the steps would
 * be more series x steps than a timeline holds (the timeline then picks its own). */
static int64_t rollup_step(const struct sc_selection *s, int64_t min_span, int64_t *from)
{
    int64_t span = sc_sub_sat(s->until, s->from);
    if (span < min_span)
        return 0;
    int64_t want = span / DEFAULT_STEPS, w = rollup_width(want);
    int64_t step = sc_div_ceil(want, w) * w;
    if (step < w)
        step = w;
    /* rounded up to a longer width's length, the step is read in that width: whole of it */
    if (rollup_width(step) != w) {
        w = rollup_width(step);
        step = sc_div_ceil(step, w) * w;
    }
    int64_t off = ((s->from % w) + w) % w, start = off ? sc_add_sat(s->from, w - off) : s->from;
    if (start >= s->until)
        return 0;
    uint64_t cells = (uint64_t)(s->n ? s->n : 1) * (uint64_t)sc_div_ceil(s->until - start, step);
    if (cells > SC_TIMELINE_MAX_CELLS)
        return 0;
    *from = start;
    return step;
}

/* ---- the profiles' own spacing ----
 *
 * A step shorter than the profiles (the timeline's 30 s steps of an hour of one-minute
 * profiles) spreads each capture over two or more steps: neighbouring steps share a
 * capture, a noise correlated from step to step that the tests read as trends and steps
 * (hundreds of false findings in an hour of 100 services at 30 s, none at 1 min;
 * bench/changes.sh). So the default step is never shorter than the profiles: the median,
 * over a few series, of the gap between a series' consecutive captures and of their
 * durations. */
#define SPACING_SERIES 8                           /* series looked at, at most */
#define SPACING_PROFILES 64                        /* profiles of each, at most */
#define SPACING_SPAN_NS (2 * 3600LL * SC_NS_PER_S) /* of the range's start, at most */

struct spacing {
    int64_t last;
    uint32_t n, seen;
    int64_t v[2 * SPACING_SERIES * SPACING_PROFILES];
};

static int spacing_cb(void *ctx, const struct sc_store_profile_info *pi)
{
    struct spacing *sp = ctx;
    if (sp->seen && pi->time_ns > sp->last && sp->n < sizeof sp->v / sizeof *sp->v)
        sp->v[sp->n++] = pi->time_ns - sp->last; /* the gap (one capture's profiles: none) */
    if (pi->duration_ns > 0 && sp->n < sizeof sp->v / sizeof *sp->v)
        sp->v[sp->n++] = pi->duration_ns;
    sp->last = pi->time_ns;
    return ++sp->seen >= SPACING_PROFILES;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* The median gap or duration of s's profiles, whole seconds (rounded up); 0 when unknown. */
static int64_t profile_spacing(struct sc_store *st, const char *tenant,
                               const struct sc_selection *s)
{
    struct spacing *sp = calloc(1, sizeof *sp);
    if (!sp)
        return 0;
    for (uint32_t i = 0; i < s->n && i < SPACING_SERIES; i++) {
        struct sc_store_query q = sc_selection_query(s, tenant);
        q.series = &s->ids[i];
        q.nseries = 1;
        /* the range's first two hours hold enough of a series' profiles to tell */
        if (sc_sub_sat(q.until_ns, q.from_ns) > SPACING_SPAN_NS)
            q.until_ns = q.from_ns + SPACING_SPAN_NS;
        sp->seen = 0;
        char e[SC_ERR_LEN] = ""; /* not the request's error: a failure leaves the step as it is */
        if (sc_store_profiles(st, &q, spacing_cb, sp, e) && sp->seen < SPACING_PROFILES)
            break; /* unknown: the timeline's step stands */
    }
    int64_t m = 0;
    if (sp->n) {
        qsort(sp->v, sp->n, sizeof *sp->v, cmp_i64);
        m = sc_div_ceil(sp->v[sp->n / 2], SC_NS_PER_S) * SC_NS_PER_S;
    }
    free(sp);
    return m;
}

int sc_plan_watch(struct sc_store *st, const char *tenant, const struct sc_selection *s,
                  const struct sc_watch_args *a, struct sc_watch *w, char *err)
{
    memset(w, 0, sizeof *w);
    const char *group = a->group_by && *a->group_by ? a->group_by : "service_name";
    struct sc_changes_opts co = SC_CHANGES_OPTS_INIT;
    if (a->level > 0)
        co.level = a->level;
    if (a->min_share > 0)
        co.min_share = a->min_share;
    w->level = co.level;
    uint32_t max_funcs =
        a->max_funcs ? a->max_funcs : (uint32_t)sc_setting_default_i(SC_SET_PARAM_FUNCTIONS);
    /* the default step's steps start at a rollup boundary: s with that `from` (a shallow
     * copy, s's arrays; not released) */
    struct sc_selection sr = *s;
    int64_t step = a->step_ns > 0 ? a->step_ns : rollup_step(s, ROLLUP_FROM_NS, &sr.from);
    int timeline_step = a->step_ns <= 0 && step <= 0; /* not the rollups' either */
    if (timeline_step) {
        /* the timeline's step, unless the profiles are longer (see spacing above) */
        int64_t tf, ts = 0, sp = profile_spacing(st, tenant, s);
        uint32_t tn;
        char e[SC_ERR_LEN];
        if (sp > 0 && sc_plan_timeline_steps(s, 0, &tf, &ts, &tn, e) == 0 && ts < sp)
            step = sp;
    }
    /* self values only: what is tested (see the top of the file) */
    int rc = sc_plan_fnseries(st, tenant, &sr, step, group, NULL, max_funcs, 1, &w->fs, err);
    if (rc == SC_ELIMIT && timeline_step && !budget_stopped() &&
        (step = rollup_step(s, ROLLUP_RETRY_FROM_NS, &sr.from)) > 0) {
        /* the timeline's steps read too much: the rollups' (see the top of the file) */
        if (err)
            err[0] = 0;
        rc = sc_plan_fnseries(st, tenant, &sr, step, group, NULL, max_funcs, 1, &w->fs, err);
    }
    struct sc_changes *c = rc ? NULL : sc_changes_new(&co);
    int64_t *t = NULL;
    if (rc == 0 && !c)
        rc = sc_errf(err, SC_ENOMEM, "out of memory");
    const struct sc_fnseries *f = &w->fs;
    if (rc == 0 && !(t = malloc(((size_t)f->nsteps + 1) * sizeof *t)))
        rc = sc_errf(err, SC_ENOMEM, "out of memory");
    for (uint32_t k = 0; rc == 0 && k < f->nsteps; k++)
        t[k] = f->from + (int64_t)k * f->step;
    /* each group's own functions (fnseries.h: its heaviest), a finding naming the function
     * by its index into f->names */
    for (uint32_t g = 0; rc == 0 && g < f->ngroups; g++)
        for (uint32_t l = f->group_first[g]; rc == 0 && l < f->group_first[g + 1]; l++) {
            struct sc_changes_input in = {g,
                                          f->group_func[l],
                                          f->nsteps,
                                          t,
                                          f->step,
                                          f->self + (size_t)l * f->nsteps,
                                          f->total + (size_t)g * f->nsteps};
            rc = sc_changes_add(c, &in, err);
            if (rc == 0)
                rc = sc_budget_poll_every(l, err);
        }
    if (rc == 0)
        rc = sc_changes_run(c, &w->changes, &w->nchanges, err);
    sc_changes_free(c);
    free(t);
    /* markers: grouped as the functions are (sc_plan_group), matched by the group's value */
    uint32_t *line_of = NULL, nkeys = 0;
    char **keys = NULL;
    if (rc == 0)
        rc = group_series(s, group, &line_of, &keys, &nkeys, err);
    if (rc == 0)
        rc = find_markers(st, tenant, s, line_of, keys, a->marker_labels, f->step, &w->markers,
                          &w->nmarkers, err);
    free(line_of);
    sc_strv_free(keys, nkeys);
    if (rc)
        sc_watch_release(w);
    return rc;
}

/* ---- JSON ---- */

static void put_group(struct sc_json *j, const char *group, const char *key)
{
    sc_json_obj_begin(j);
    if (group && key)
        sc_json_kv_str(j, group, key);
    sc_json_obj_end(j);
}

static void put_field(struct sc_json *j, const char *name, double v)
{
    if (isnan(v) || isinf(v))
        return; /* does not apply to this kind */
    sc_json_kv_num(j, name, v);
}

static void put_marker(struct sc_json *j, const char *group, const struct sc_marker *m)
{
    sc_json_obj_begin(j);
    sc_json_key(j, "labels");
    put_group(j, group, m->key);
    sc_json_kv_str(j, "label", m->label);
    sc_json_kv_str(j, "value", m->value);
    sc_json_kv_num(j, "at", (double)m->at_ns / 1e9);
    sc_json_obj_end(j);
}

void sc_markers_write_json(const char *group_by, const struct sc_marker *m, uint32_t n,
                           struct sc_buf *o)
{
    struct sc_json j;
    sc_json_init(&j, o);
    sc_json_obj_begin(&j);
    sc_json_key(&j, "markers");
    sc_json_arr_begin(&j);
    for (uint32_t i = 0; i < n; i++)
        put_marker(&j, group_by && *group_by ? group_by : "service_name", &m[i]);
    sc_json_arr_end(&j);
    sc_json_obj_end(&j);
    sc_buf_putc(o, '\n');
}

/* The marker of c's group nearest c's time, within MARKER_NEAR_STEPS steps, or NULL. */
static const struct sc_marker *near_marker(const struct sc_watch *w, const struct sc_change *c)
{
    const struct sc_marker *best = NULL;
    int64_t bd = MARKER_NEAR_STEPS * w->fs.step + 1;
    for (uint32_t i = 0; i < w->nmarkers; i++) {
        const struct sc_marker *m = &w->markers[i];
        int64_t d = m->at_ns > c->at_ns ? m->at_ns - c->at_ns : c->at_ns - m->at_ns;
        if (c->group < w->fs.ngroups && !strcmp(m->key, w->fs.keys[c->group]) && d < bd) {
            best = m;
            bd = d;
        }
    }
    return best;
}

void sc_watch_write_json(const struct sc_watch *w, struct sc_buf *o)
{
    const struct sc_fnseries *f = &w->fs;
    struct sc_json j;
    sc_json_init(&j, o);
    sc_json_obj_begin(&j);
    sc_json_key(&j, "changes");
    sc_json_arr_begin(&j);
    for (uint32_t i = 0; i < w->nchanges; i++) {
        const struct sc_change *c = &w->changes[i];
        sc_json_obj_begin(&j);
        sc_json_key(&j, "labels");
        put_group(&j, f->group, c->group < f->ngroups ? f->keys[c->group] : NULL);
        sc_json_kv_str(&j, "function", c->function < f->nfuncs ? f->names[c->function] : "");
        sc_json_kv_str(&j, "kind", sc_change_kind_name(c->kind));
        if (c->at_ns)
            put_field(&j, "at", (double)c->at_ns / 1e9);
        put_field(&j, "before", c->before);
        put_field(&j, "after", c->after);
        put_field(&j, "change_pct", c->change_pct);
        if (!isnan(c->lo) && !isnan(c->hi) && !isinf(c->lo) && !isinf(c->hi)) {
            sc_json_key(&j, "interval");
            sc_json_arr_begin(&j);
            sc_json_num(&j, c->lo);
            sc_json_num(&j, c->hi);
            sc_json_arr_end(&j);
        }
        put_field(&j, "slope_per_hour", c->slope_per_hour);
        sc_json_kv_str(&j, "unit", f->unit);
        put_field(&j, "q", c->q);
        const struct sc_marker *m = c->kind == SC_CHANGE_STEP ? near_marker(w, c) : NULL;
        if (m) {
            sc_json_key(&j, "marker");
            put_marker(&j, f->group, m);
        }
        /* the function over the range, for a sparkline */
        sc_json_key(&j, "timestamps");
        sc_json_arr_begin(&j);
        for (uint32_t k = 0; k < f->nsteps; k++)
            sc_json_i64(&j, (f->from + (int64_t)k * f->step) / SC_NS_PER_S);
        sc_json_arr_end(&j);
        sc_json_key(&j, "values");
        sc_json_arr_begin(&j);
        const double *v = sc_fnseries_line(f, f->self, c->group, c->function);
        for (uint32_t k = 0; v && k < f->nsteps; k++)
            sc_json_num(&j, v[k]);
        sc_json_arr_end(&j);
        sc_json_obj_end(&j);
    }
    sc_json_arr_end(&j);
    sc_json_key(&j, "markers");
    sc_json_arr_begin(&j);
    for (uint32_t i = 0; i < w->nmarkers; i++)
        put_marker(&j, f->group, &w->markers[i]);
    sc_json_arr_end(&j);
    sc_json_kv_i64(&j, "step", f->step / SC_NS_PER_S);
    sc_json_kv_str(&j, "unit", f->unit);
    sc_json_kv_str(&j, "aggregation", sc_metric_name(f->metric));
    sc_json_kv_u64(&j, "groups", f->ngroups);
    sc_json_kv_u64(&j, "functions", f->nfuncs);
    sc_json_kv_num(&j, "level", w->level);
    sc_json_kv_str(&j, "method",
                   "each function's self value per step, in the timeline's unit, the steps its "
                   "replicates; steps, trends, new and gone functions tested against the spread "
                   "between steps; false discovery rate controlled over every function and group "
                   "tested (Benjamini-Hochberg); see docs/changes.md");
    sc_json_obj_end(&j);
    sc_buf_putc(o, '\n');
}
