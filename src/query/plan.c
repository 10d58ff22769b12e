/* plan.c - a query from parameters to a profile: selection, series, merge, filters. */
#include "query/plan.h"
#include "model/clock.h"
#include "model/error.h"
#include "model/hash.h"
#include "model/json.h"
#include "model/merge.h"
#include "model/timespec.h"
#include "query/flame.h"
#include "query/regex.h"
#include "query/replicates.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- selections ---- */

void sc_selection_release(struct sc_selection *s)
{
    sc_selector_free(s->selector);
    for (uint32_t i = 0; i < s->n; i++)
        free(s->labels[i]);
    free(s->labels);
    free(s->ids);
    memset(s, 0, sizeof *s);
}

int sc_selection_parse(struct sc_selection *s, const struct sc_plan_args *a, const char *type,
                       int64_t now_ns, char *err)
{
    memset(s, 0, sizeof *s);
    s->type = type;
    const char *prefix = a->prefix ? a->prefix : "";
    int rc = sc_selector_parse(a->query ? a->query : "{}", &s->selector, err);
    if (rc) {
        /* selector errors say where; say which selector when there are two */
        if (*prefix)
            sc_errwrap(err, rc, "'%squery'", prefix);
        return rc;
    }
    s->from = now_ns - 3600 * SC_NS_PER_S;
    s->until = now_ns;
    if (a->from && sc_time_parse(a->from, now_ns, &s->from, err))
        return sc_errwrap(err, SC_EINVAL, "bad '%sfrom'", prefix);
    if (a->until && sc_time_parse(a->until, now_ns, &s->until, err))
        return sc_errwrap(err, SC_EINVAL, "bad '%suntil'", prefix);
    if (s->until <= s->from)
        return sc_errf(err, SC_EINVAL, "'%suntil' must be after '%sfrom'", prefix, prefix);
    /* no cap on the range but arithmetic's: a query's cost is bounded by the store's read
     * budget, and a range of at most SC_MAX_RANGE_NS keeps until - from (plus a step, or
     * a second of rounding) inside int64 everywhere below */
    if (sc_sub_sat(s->until, s->from) > SC_MAX_RANGE_NS)
        return sc_errf(err, SC_EINVAL, "'%sfrom' to '%suntil' is more than 100 years", prefix,
                       prefix);
    return 0;
}

struct find_ctx {
    struct sc_selection *s;
    int oom;
};

/* Whether the selector takes a series with these labels (asked before the store looks for
 * the series' profiles). */
static int match_series(void *ctx, const char *labels)
{
    return sc_selector_match_text(((struct find_ctx *)ctx)->s->selector, labels);
}

/* A matched series with profiles in range. */
static int collect_series(void *ctx, const struct sc_store_series *se)
{
    struct find_ctx *f = ctx;
    struct sc_selection *s = f->s;
    const struct sc_grow_part cols[] = {SC_GROW_PART(s->ids), SC_GROW_PART(s->labels)};
    if (sc_grow_arrays(&s->cap, (uint64_t)s->n + 1, -1, cols, 2)) {
        f->oom = 1;
        return 1;
    }
    s->labels[s->n] = strdup(se->labels);
    if (!s->labels[s->n]) {
        f->oom = 1;
        return 1;
    }
    s->ids[s->n++] = se->id;
    return 0;
}

int sc_selection_find(struct sc_selection *s, struct sc_store *st, const char *tenant, char *err)
{
    struct find_ctx f = {s, 0};
    struct sc_re_budget b;
    sc_re_budget_init(&b, SC_RE_BUDGET_NS);
    sc_selector_set_budget(s->selector, &b);
    int rc = sc_store_series_find(st, tenant, s->type && *s->type ? s->type : NULL, s->from,
                                  s->until, match_series, collect_series, &f, err);
    sc_selector_set_budget(s->selector, NULL);
    if (!rc && f.oom)
        rc = sc_errf(err, SC_ENOMEM, "out of memory");
    if (!rc && b.over)
        rc = sc_errf(err, SC_ELIMIT,
                     "the selector's regexes took more than %lld ms of matching (the limit): "
                     "simplify them",
                     (long long)(SC_RE_BUDGET_NS / 1000000));
    return rc;
}

struct sc_store_query sc_selection_query(const struct sc_selection *s, const char *tenant)
{
    struct sc_store_query q = {tenant, s->ids, s->n, s->type, s->from, s->until, 0};
    return q;
}

static int filter(struct sc_profile *p, const struct sc_filter_opts *fo, char *err)
{
    if (!fo || !(fo->focus || fo->ignore || fo->hide || fo->show))
        return 0;
    return sc_profile_filter(p, fo, NULL, err);
}

int sc_plan_merge(struct sc_store *st, const char *tenant, const struct sc_selection *s,
                  const struct sc_filter_opts *fo, struct sc_profile **out, char *err)
{
    *out = NULL;
    struct sc_store_query q = sc_selection_query(s, tenant);
    struct sc_profile *p = NULL;
    int rc = s->n ? sc_store_merge(st, &q, &p, err) : 0;
    if (rc == SC_ENOTFOUND || (!rc && !p)) {
        /* nothing in range: an empty profile, so every format still answers */
        sc_profile_free(p);
        p = sc_profile_new();
        const char *colon = strchr(s->type, ':');
        /* the type's unit comes from the type, never from an empty merge: the other side of
         * a comparison has it (count when the store has never seen the type) */
        char unit[64] = "count";
        int gauge;
        if (sc_store_type_info(st, s->type, unit, &gauge))
            snprintf(unit, sizeof unit, "count");
        if (!p || sc_profile_add_sample_type(p, colon ? colon + 1 : s->type, unit) < 0) {
            sc_profile_free(p);
            return sc_errf(err, SC_ENOMEM, "out of memory");
        }
        rc = 0;
    }
    if (rc == 0)
        rc = filter(p, fo, err);
    if (rc) {
        sc_profile_free(p);
        return rc;
    }
    *out = p;
    return 0;
}

int sc_plan_files(const char *const *paths, uint32_t n, const struct sc_decode_opts *dopts,
                  const struct sc_filter_opts *fo, struct sc_profile **out, char *err)
{
    *out = NULL;
    static const char *const stdin_only[] = {"-"};
    if (n == 0) {
        paths = stdin_only;
        n = 1;
    }
    /* one input is reported straight from its buffer (lazy pprof samples: O(input)
     * memory); several are merged, and filters rewrite samples, which needs them stored */
    int filtering = fo && (fo->focus || fo->ignore || fo->hide || fo->show);
    struct sc_decode_opts d = dopts ? *dopts : (struct sc_decode_opts){0};
    d.lazy_samples = d.lazy_samples && n == 1 && !filtering;
    struct sc_profile *merged = NULL;
    int rc = 0;
    for (uint32_t i = 0; i < n && rc == 0; i++) {
        struct sc_profile *p;
        rc = sc_load(paths[i], &d, &p, err);
        if (rc)
            break;
        if (!merged) {
            merged = p;
            continue;
        }
        rc = sc_profile_append(merged, p, err);
        sc_profile_free(p);
        if (rc)
            sc_errwrap(err, rc, "cannot merge '%s'", paths[i]);
    }
    if (rc == 0)
        rc = filter(merged, fo, err);
    if (rc) {
        sc_profile_free(merged);
        return rc;
    }
    *out = merged;
    return 0;
}

int sc_plan_compare(struct sc_store *st, const char *tenant, const struct sc_selection *base,
                    const struct sc_selection *sel, const struct sc_filter_opts *fo,
                    const struct sc_cmp_opts *opts, uint32_t reps, struct sc_cmp **out, char *err)
{
    *out = NULL;
    struct sc_filter *f = NULL;
    struct sc_filter_opts none = {0};
    int rc = sc_filter_new(fo ? fo : &none, &f, err);
    struct sc_cmp *c = NULL;
    if (rc == 0 && sc_cmp_new(opts, &c))
        rc = sc_errf(err, SC_ENOMEM, "out of memory");
    const struct sc_selection *side[2] = {base, sel};
    for (int k = 0; k < 2 && rc == 0; k++) {
        struct sc_store_query q = sc_selection_query(side[k], tenant);
        uint32_t added;
        rc = sc_replicates_add(st, &q, f, c, k, reps, &added, err);
    }
    if (rc == 0)
        rc = sc_cmp_finish(c, err);
    sc_filter_free(f);
    if (rc) {
        sc_cmp_free(c);
        return rc;
    }
    *out = c;
    return 0;
}

/* ---- timeline ---- */

void sc_timeline_release(struct sc_timeline *t)
{
    sc_strv_free(t->keys, t->group ? t->nlines : 0);
    free(t->values);
    memset(t, 0, sizeof *t);
}

int sc_plan_group(const struct sc_selection *s, const char *group, uint32_t *line_of, char **keys,
                  uint32_t *nkeys)
{
    /* series without the label share the line of ""; a hash map finds a value's line */
    struct sc_map64 lines;
    sc_map64_init(&lines);
    int rc = 0;
    *nkeys = 0;
    char err[SC_ERR_LEN];
    for (uint32_t i = 0; rc == 0 && i < s->n; i++) {
        struct sc_labels l;
        sc_labels_init(&l);
        struct sc_str v = {"", 0};
        if (sc_labels_parse(s->labels[i], &l, err) == 0)
            sc_labels_get(&l, group, strlen(group), &v);
        int added;
        uint32_t *slot = sc_map64_upsert(&lines, sc_hash64(v.ptr, v.len), *nkeys, &added);
        uint32_t j = slot ? *slot : 0;
        if (slot && !added && (strlen(keys[j]) != v.len || memcmp(keys[j], v.ptr, v.len))) {
            /* two values with one hash: look the slow way */
            for (j = 0; j < *nkeys; j++)
                if (strlen(keys[j]) == v.len && !memcmp(keys[j], v.ptr, v.len))
                    break;
        }
        if (slot && j == *nkeys && !(keys[(*nkeys)++] = strndup(v.ptr, v.len)))
            slot = NULL;
        if (!slot)
            rc = SC_ENOMEM;
        line_of[i] = j;
        sc_labels_release(&l);
    }
    sc_map64_release(&lines);
    return rc;
}

int sc_plan_timeline_steps(const struct sc_selection *s, int64_t step, int64_t *from_out,
                           int64_t *step_out, uint32_t *nsteps_out, char *err)
{
    /* steps start on a whole second: the answer's timestamps are seconds, and a client
     * asking what a step holds (the UI's "open this profile") must ask for the same span
     * (with now-1h's fraction, a profile at a step's last second was in the step the
     * timeline drew and outside the one the client asked for) */
    int64_t from = s->from - ((s->from % SC_NS_PER_S) + SC_NS_PER_S) % SC_NS_PER_S;
    int64_t span = sc_sub_sat(s->until, from);
    uint64_t nser = s->n ? s->n : 1;
    if (step <= 0) {
        /* about 120 points, whole seconds, at least 10 s, and within the cell limit */
        step = span / 120 / SC_NS_PER_S * SC_NS_PER_S;
        if (step < 10 * SC_NS_PER_S)
            step = 10 * SC_NS_PER_S;
        uint64_t cells = nser * (uint64_t)sc_div_ceil(span, step);
        if (cells > SC_TIMELINE_MAX_CELLS) {
            uint64_t fit = SC_TIMELINE_MAX_CELLS / nser;
            step = (span / (int64_t)(fit ? fit : 1) / SC_NS_PER_S + 1) * SC_NS_PER_S;
        }
    }
    if (span / step > SC_TIMELINE_MAX_STEPS)
        return sc_errf(err, SC_ELIMIT, "%lld steps is more than the limit of %d (step)",
                       (long long)(span / step), SC_TIMELINE_MAX_STEPS);
    uint32_t nsteps = (uint32_t)sc_div_ceil(span, step);
    /* the store answers per series: series x steps values, whatever the grouping */
    if ((uint64_t)s->n * nsteps > SC_TIMELINE_MAX_CELLS)
        return sc_errf(err, SC_ELIMIT,
                       "%u series x %u steps is more than the limit of %d points (a larger "
                       "step, or a narrower query)",
                       s->n, nsteps, SC_TIMELINE_MAX_CELLS);
    *from_out = from;
    *step_out = step;
    *nsteps_out = nsteps;
    return 0;
}

struct span {
    int64_t lo, hi;
    size_t cell;
};

static int span_cmp(const void *a, const void *b)
{
    const struct span *x = a, *y = b;
    return (x->lo > y->lo) - (x->lo < y->lo);
}

/* Series of one line that take turns within a step (a new version's series starting as the
 * old one stops) each count for the part of the step they span: summed whole, as series at
 * once are, the step would count their time twice. A line's spans in a step fall into runs of
 * overlapping spans (series at once); each series' value is weighted by its run's length over
 * all runs' lengths. One run, or a run that is a point (captures without a duration, once
 * each), leaves the values whole. Series in time order of one line are not told from series
 * at once when their spans overlap (a rolling deploy): those still sum. */
static int weigh_turns(struct sc_store_cells *c, uint32_t nser, const uint32_t *line_of,
                       uint32_t nlines)
{
    uint32_t *first = calloc((size_t)nlines + 1, sizeof *first);
    uint32_t *order = malloc((size_t)nser * sizeof *order);
    struct span *sp = malloc((size_t)nser * sizeof *sp);
    if (!first || !order || !sp) {
        free(first);
        free(order);
        free(sp);
        return SC_ENOMEM;
    }
    for (uint32_t i = 0; i < nser; i++) /* the series by line: counts, then places */
        first[line_of[i] + 1]++;
    for (uint32_t l = 0; l < nlines; l++)
        first[l + 1] += first[l];
    for (uint32_t i = 0; i < nser; i++)
        order[first[line_of[i]]++] = i;
    for (uint32_t l = nlines; l > 0; l--)
        first[l] = first[l - 1];
    first[0] = 0;
    for (uint32_t l = 0; l < nlines; l++) {
        if (first[l + 1] - first[l] < 2)
            continue;
        for (uint32_t k = 0; k < c->nsteps; k++) {
            uint32_t n = 0;
            for (uint32_t j = first[l]; j < first[l + 1]; j++) {
                size_t cell = (size_t)order[j] * c->nsteps + k;
                if (c->first_ns[cell] <= c->last_ns[cell] && !isnan(c->value[cell]))
                    sp[n++] = (struct span){c->first_ns[cell], c->last_ns[cell], cell};
            }
            if (n < 2)
                continue;
            qsort(sp, n, sizeof *sp, span_cmp);
            /* runs: sp[a..b) overlap; each span's lo becomes its run's length */
            double total = 0;
            int point = 0;
            uint32_t runs = 0;
            for (uint32_t a = 0, b; a < n; a = b) {
                int64_t hi = sp[a].hi;
                for (b = a + 1; b < n && sp[b].lo < hi; b++)
                    if (sp[b].hi > hi)
                        hi = sp[b].hi;
                int64_t len = hi - sp[a].lo;
                point |= len == 0;
                total += (double)len;
                runs++;
                for (uint32_t j = a; j < b; j++)
                    sp[j].lo = len;
            }
            if (runs < 2 || point)
                continue;
            for (uint32_t j = 0; j < n; j++)
                c->value[sp[j].cell] *= (double)sp[j].lo / total;
        }
    }
    free(first);
    free(order);
    free(sp);
    return 0;
}

int sc_plan_timeline(struct sc_store *st, const char *tenant, const struct sc_selection *s,
                     int64_t step, const char *group_by, struct sc_timeline *t, char *err)
{
    return sc_plan_timeline_series(st, tenant, s, step, group_by, t, NULL, NULL, err);
}

int sc_plan_timeline_series(struct sc_store *st, const char *tenant, const struct sc_selection *s,
                            int64_t step, const char *group_by, struct sc_timeline *t,
                            double **series, uint32_t **line_of_out, char *err)
{
    memset(t, 0, sizeof *t);
    if (series)
        *series = NULL;
    if (line_of_out)
        *line_of_out = NULL;
    int64_t from;
    uint32_t nsteps;
    int rc = sc_plan_timeline_steps(s, step, &from, &step, &nsteps, err);
    if (rc)
        return rc;
    uint64_t nser = s->n ? s->n : 1;
    t->from = from;
    t->step = step;
    t->nsteps = nsteps;
    t->group = group_by && *group_by ? group_by : NULL;
    size_t ncells = (size_t)nser * nsteps;
    struct sc_store_cells cells = {from,
                                   step,
                                   nsteps,
                                   0,
                                   calloc(ncells, sizeof(double)),
                                   calloc(ncells, sizeof(double)),
                                   calloc(ncells, sizeof(int64_t)),
                                   0,
                                   malloc(ncells * sizeof(int64_t)),
                                   malloc(ncells * sizeof(int64_t))};
    uint32_t *line_of = malloc((nser + 1) * sizeof *line_of);
    t->keys = t->group ? calloc(nser + 1, sizeof *t->keys) : NULL;
    rc = !cells.value || !cells.covered_ns || !cells.captures || !cells.first_ns ||
                 !cells.last_ns || !line_of || (t->group && !t->keys)
             ? SC_ENOMEM
             : 0;
    for (size_t c = 0; rc == 0 && c < ncells; c++) {
        cells.first_ns[c] = INT64_MAX;
        cells.last_ns[c] = INT64_MIN;
    }
    struct sc_store_query q = sc_selection_query(s, tenant);
    q.from_ns = from;
    if (rc == 0 && s->n)
        rc = sc_store_timeline(st, &q, &cells, err);
    char unit[64] = "";
    int gauge = cells.gauge;
    if (rc == 0 && s->type)
        sc_store_type_info(st, s->type, unit, &gauge);
    t->metric = sc_metric_of(gauge, cells.nodur == 0, 0);
    sc_metric_unit(t->metric, unit, t->unit, sizeof t->unit);
    if (rc == 0 && t->group) {
        rc = sc_plan_group(s, t->group, line_of, t->keys, &t->nlines);
    } else if (rc == 0) {
        for (uint32_t i = 0; i < s->n; i++)
            line_of[i] = i; /* a series' labels are unique */
        t->nlines = s->n;
    }
    if (rc == 0) {
        size_t n = (size_t)(t->nlines ? t->nlines : 1) * nsteps;
        t->values = malloc(n * sizeof *t->values);
        if (!t->values)
            rc = SC_ENOMEM;
        for (size_t i = 0; t->values && i < n; i++)
            t->values[i] = NAN;
    }
    /* a line sums its series' values, weighted when they take turns; a step where none has
     * a profile stays NaN (the series' own values, weighted, are kept in cells.value for a
     * caller that splits the line: fnseries) */
    for (size_t c = 0; rc == 0 && c < (size_t)s->n * nsteps; c++)
        cells.value[c] = sc_metric_value(t->metric, cells.value[c], (double)cells.captures[c],
                                         cells.covered_ns[c]);
    if (rc == 0 && s->n)
        rc = weigh_turns(&cells, s->n, line_of, t->nlines);
    for (uint32_t i = 0; rc == 0 && i < s->n; i++)
        for (uint32_t k = 0; k < nsteps; k++) {
            double v = cells.value[(size_t)i * nsteps + k];
            double *x = &t->values[(size_t)line_of[i] * nsteps + k];
            if (!isnan(v))
                *x = isnan(*x) ? v : *x + v;
        }
    free(cells.covered_ns);
    free(cells.captures);
    free(cells.first_ns);
    free(cells.last_ns);
    if (rc == 0 && series) {
        *series = cells.value;
        cells.value = NULL;
    }
    if (rc == 0 && line_of_out) {
        *line_of_out = line_of;
        line_of = NULL;
    }
    free(cells.value);
    free(line_of);
    if (rc) {
        sc_timeline_release(t);
        return rc == SC_ENOMEM && (!err || !err[0]) ? sc_errf(err, rc, "out of memory") : rc;
    }
    return 0;
}

static void put_labels(struct sc_json *j, const char *canon)
{
    struct sc_labels l;
    sc_labels_init(&l);
    char err[SC_ERR_LEN];
    sc_labels_parse(canon, &l, err);
    sc_labels_json(&l, j);
    sc_labels_release(&l);
}

void sc_timeline_write_json(const struct sc_timeline *t, const struct sc_selection *s,
                            struct sc_buf *o)
{
    sc_timeline_write_json_with(t, s, NULL, o);
}

void sc_timeline_write_json_with(const struct sc_timeline *t, const struct sc_selection *s,
                                 const char *const *fields, struct sc_buf *o)
{
    struct sc_json j;
    sc_json_init(&j, o);
    sc_json_obj_begin(&j);
    sc_json_key(&j, "timestamps");
    sc_json_arr_begin(&j);
    for (uint32_t k = 0; k < t->nsteps; k++)
        sc_json_i64(&j, (t->from + (int64_t)k * t->step) / SC_NS_PER_S);
    sc_json_arr_end(&j);
    sc_json_kv_i64(&j, "step", t->step / SC_NS_PER_S);
    sc_json_kv_str(&j, "unit", t->unit);
    sc_json_kv_str(&j, "aggregation", sc_metric_name(t->metric));
    for (size_t i = 0; fields && fields[i]; i += 2)
        sc_json_kv_str(&j, fields[i], fields[i + 1]);
    sc_json_key(&j, "series");
    sc_json_arr_begin(&j);
    for (uint32_t l = 0; l < t->nlines; l++) {
        sc_json_obj_begin(&j);
        sc_json_key(&j, "labels");
        if (t->group) {
            sc_json_obj_begin(&j);
            sc_json_kv_str(&j, t->group, t->keys[l]);
            sc_json_obj_end(&j);
        } else {
            put_labels(&j, s->labels[l]);
        }
        sc_json_key(&j, "values");
        sc_json_arr_begin(&j);
        for (uint32_t k = 0; k < t->nsteps; k++)
            sc_json_num(&j, t->values[(size_t)l * t->nsteps + k]);
        sc_json_arr_end(&j);
        sc_json_obj_end(&j);
    }
    sc_json_arr_end(&j);
    sc_json_obj_end(&j);
    sc_buf_putc(o, '\n');
}

void sc_plan_labels_json(struct sc_json *j, const char *canon)
{
    put_labels(j, canon);
}

/* A time as Unix seconds with up to nine exact decimals (floored: -1.5 s is -2.5) in d;
 * its length. */
static size_t seconds_text(int64_t ns, char d[48])
{
    int64_t sec = ns / SC_NS_PER_S, frac = ns % SC_NS_PER_S;
    if (frac < 0) {
        sec--;
        frac += SC_NS_PER_S;
    }
    int n = snprintf(d, 48, "%lld.%09lld", (long long)sec, (long long)frac);
    while (d[n - 1] == '0')
        n--;
    if (d[n - 1] == '.')
        n--;
    return (size_t)n;
}

void sc_plan_seconds_json(struct sc_json *j, int64_t ns)
{
    char d[48];
    sc_json_raw(j, d, seconds_text(ns, d));
}

/* ---- one stored profile ---- */

struct one_series {
    const char *want;
    uint64_t id;
    int found;
};

static int is_wanted(void *ctx, const char *labels)
{
    return !strcmp(labels, ((struct one_series *)ctx)->want);
}

static int found_series(void *ctx, const struct sc_store_series *se)
{
    struct one_series *f = ctx;
    f->id = se->id;
    f->found = 1;
    return 1;
}

int sc_plan_profile(struct sc_store *st, const struct sc_profile_ref *ref,
                    const struct sc_filter_opts *fo, struct sc_profile **out, char *err)
{
    *out = NULL;
    struct one_series f = {ref->series, 0, 0};
    int rc = sc_store_series_find(st, ref->tenant, ref->type, INT64_MIN, INT64_MAX, is_wanted,
                                  found_series, &f, err);
    if (!rc && !f.found)
        rc = sc_errf(err, SC_ENOTFOUND, "no series %.200s with %.64s profiles", ref->series,
                     ref->type);
    struct sc_profile *p = NULL;
    if (!rc)
        rc = sc_store_profile_read(st, f.id, ref->type, ref->time_ns, &p, err);
    if (!rc && fo && (fo->focus || fo->ignore || fo->hide || fo->show))
        rc = sc_profile_filter(p, fo, NULL, err);
    if (rc) {
        sc_profile_free(p);
        return rc;
    }
    *out = p;
    return 0;
}

/* The profile view's own member, after the flame graph's. */
static void put_profile_ref(void *ctx, struct sc_json *j)
{
    const struct sc_profile_ref *ref = ctx;
    char d[48];
    sc_json_key(j, "profile");
    sc_json_obj_begin(j);
    sc_json_key(j, "labels");
    put_labels(j, ref->series);
    sc_json_kv_str(j, "series", ref->series);
    sc_json_key(j, "time");
    sc_plan_seconds_json(j, ref->time_ns);
    snprintf(d, sizeof d, "%lld", (long long)ref->time_ns);
    sc_json_kv_str(j, "time_ns", d);
    sc_json_obj_end(j);
}

int sc_plan_profile_json(struct sc_store *st, const struct sc_profile_ref *ref,
                         const struct sc_filter_opts *fo, uint32_t max_nodes, int top,
                         struct sc_buf *out, char *err)
{
    struct sc_profile *p;
    int rc = sc_plan_profile(st, ref, fo, &p, err);
    if (rc)
        return rc;
    struct sc_flame_extra x = {top, put_profile_ref, (void *)ref};
    rc = sc_flame_json_with(p, 0, max_nodes, &x, out, err);
    sc_profile_free(p);
    if (!rc && out->oom)
        rc = sc_errf(err, SC_ENOMEM, "out of memory");
    return rc;
}
