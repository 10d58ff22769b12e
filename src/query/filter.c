/* filter.c - focus / ignore / hide / show with pprof's meaning, on a profile in place. */
#include "query/filter.h"
#include "model/error.h"

#include <stdlib.h>
#include <string.h>

#include "query/regex.h"

enum { RE_FOCUS, RE_IGNORE, RE_HIDE, RE_SHOW, NRE };

static const char *const re_names[NRE] = {"focus", "ignore", "hide", "show"};

struct sc_filter {
    pcre2_code *re[NRE];
    pcre2_match_context *mctx;
    int active;
};

/* Bounds on one match, so that no pattern can make filtering hang on a long name. */

void sc_filter_free(struct sc_filter *f)
{
    if (!f)
        return;
    for (int i = 0; i < NRE; i++)
        pcre2_code_free(f->re[i]);
    pcre2_match_context_free(f->mctx);
    free(f);
}

int sc_filter_new(const struct sc_filter_opts *o, struct sc_filter **out, char *err)
{
    *out = NULL;
    struct sc_filter *f = calloc(1, sizeof *f);
    if (!f)
        return sc_errf(err, SC_ENOMEM, "out of memory");
    const char *src[NRE] = {o ? o->focus : NULL, o ? o->ignore : NULL, o ? o->hide : NULL,
                            o ? o->show : NULL};
    for (int i = 0; i < NRE; i++) {
        if (!src[i] || !*src[i])
            continue;
        int ecode;
        size_t eoff;
        f->re[i] = sc_re_compile(src[i], strlen(src[i]), SC_RE_SEARCH, &ecode, &eoff);
        if (!f->re[i]) {
            PCRE2_UCHAR msg[120];
            pcre2_get_error_message(ecode, msg, sizeof msg);
            sc_filter_free(f);
            return sc_errf(err, ecode == PCRE2_ERROR_NOMEMORY ? SC_ENOMEM : SC_EINVAL,
                           "bad %s regex '%.64s': %s at offset %zu", re_names[i], src[i],
                           (const char *)msg, eoff);
        }
        f->active = 1;
    }
    f->mctx = sc_re_context();
    if (!f->mctx) {
        sc_filter_free(f);
        return sc_errf(err, SC_ENOMEM, "out of memory");
    }
    *out = f;
    return 0;
}

int sc_filter_active(const struct sc_filter *f)
{
    return f && f->active;
}

/* One application: the per-string cache of regex results. */
struct run {
    const struct sc_filter *f;
    const struct sc_profile *p;
    pcre2_match_data *md;
    uint8_t *str_bits; /* string -> 0x80 | bit i set when regex i matches */
    struct sc_re_budget budget;
};

#define COMPUTED 0x80

static uint8_t str_bits(struct run *r, uint32_t si)
{
    uint8_t b = r->str_bits[si];
    if (b & COMPUTED)
        return b;
    b = COMPUTED;
    struct sc_str s = sc_profile_str(r->p, si);
    for (int i = 0; i < NRE; i++)
        if (r->f->re[i] && sc_re_match(r->f->re[i], s.ptr, s.len, r->md, r->f->mctx, &r->budget))
            b |= (uint8_t)(1u << i);
    r->str_bits[si] = b;
    return b;
}

/* Regexes matching the function of a line (its name or its file); 0 without a function. */
static uint8_t line_bits(struct run *r, const struct sc_line *ln)
{
    if (!ln->function)
        return 0;
    const struct sc_function *fn = &r->p->functions[ln->function - 1];
    return (uint8_t)((str_bits(r, fn->name) | str_bits(r, fn->filename)) & ~COMPUTED);
}

static uint8_t mapping_bits(struct run *r, const struct sc_location *l)
{
    if (!l->mapping)
        return 0;
    return (uint8_t)(str_bits(r, r->p->mappings[l->mapping - 1].filename) & ~COMPUTED);
}

/* A location's role for focus / ignore. */
enum { LOC_NONE, LOC_FOCUSED, LOC_IGNORED };

int sc_filter_apply(const struct sc_filter *f, struct sc_profile *p,
                    struct sc_filter_result *result, char *err)
{
    struct sc_filter_result res;
    memset(&res, 0, sizeof res);
    if (p->lazy && p->nsamples == 0 && sc_profile_nsamples(p) > 0)
        return sc_errf(err, SC_EINVAL, "filters need stored samples, not lazy ones");
    if (!sc_filter_active(f)) {
        res.samples_kept = p->nsamples;
        if (result)
            *result = res;
        return 0;
    }
    const uint32_t nl = p->nlocations;
    const int rewrite_lines = f->re[RE_HIDE] || f->re[RE_SHOW];
    struct run r = {f, p, NULL, NULL, {0, 0, 0}};
    sc_re_budget_init(&r.budget, SC_RE_BUDGET_NS);
    uint8_t *role = malloc((size_t)nl + 1);
    uint8_t *hidden = malloc((size_t)nl + 1);
    r.str_bits = calloc((size_t)p->strings.n + 1, 1);
    r.md = pcre2_match_data_create(1, NULL);
    uint64_t nlines_all = 0;
    for (uint32_t i = 0; i < nl; i++)
        nlines_all += p->locations[i].nlines;
    struct sc_line *lines = NULL;
    uint32_t *line_start = NULL, *line_n = NULL;
    if (rewrite_lines) {
        lines = malloc((size_t)(nlines_all + 1) * sizeof *lines);
        line_start = malloc(((size_t)nl + 1) * sizeof *line_start);
        line_n = malloc(((size_t)nl + 1) * sizeof *line_n);
    }
    int rc = 0;
    if (!role || !hidden || !r.str_bits || !r.md ||
        (rewrite_lines && (!lines || !line_start || !line_n))) {
        rc = sc_errf(err, SC_ENOMEM, "out of memory");
        goto out;
    }

    /* Locations: roles from the original lines, then hide and show on the lines. */
    int any_hidden = 0;
    uint32_t k = 0;
    for (uint32_t i = 0; i < nl && !r.budget.over; i++) {
        const struct sc_location *l = &p->locations[i];
        const struct sc_line *ln = sc_location_lines(p, l);
        uint8_t mb = mapping_bits(&r, l), any = mb;
        for (uint32_t j = 0; j < l->nlines; j++)
            any |= line_bits(&r, &ln[j]);
        if (f->re[RE_IGNORE] && (any & 1u << RE_IGNORE)) {
            res.ignore_matched = 1;
            role[i] = LOC_IGNORED;
        } else if (!f->re[RE_FOCUS] || (any & 1u << RE_FOCUS)) {
            res.focus_matched = 1;
            role[i] = LOC_FOCUSED;
        } else {
            role[i] = LOC_NONE;
        }
        hidden[i] = 0;
        if (!rewrite_lines)
            continue;
        line_start[i] = k;
        int hide_loc = 0, hide_all = 0;
        if (f->re[RE_HIDE] && (any & 1u << RE_HIDE)) {
            res.hide_matched = 1;
            hide_loc = 1;
            hide_all = (mb & 1u << RE_HIDE) != 0;
        }
        int show_all = f->re[RE_SHOW] && (mb & 1u << RE_SHOW);
        uint32_t after_hide = 0;
        for (uint32_t j = 0; j < l->nlines && !hide_all; j++) {
            uint8_t b = line_bits(&r, &ln[j]);
            if (b & 1u << RE_HIDE)
                continue;
            after_hide++;
            if (f->re[RE_SHOW] && !show_all && ln[j].function && !(b & 1u << RE_SHOW))
                continue;
            lines[k++] = ln[j];
        }
        line_n[i] = k - line_start[i];
        /* As pprof: hide removes a location it matched and left without lines; show one it
         * left without lines (address-only locations included). */
        if ((hide_loc && after_hide == 0) || (f->re[RE_SHOW] && line_n[i] == 0)) {
            hidden[i] = 1;
            any_hidden = 1;
        }
        if (f->re[RE_SHOW] && line_n[i] > 0)
            res.show_matched = 1;
    }
    if (r.budget.over) {
        rc = sc_errf(err, SC_ELIMIT,
                     "the focus/ignore/hide/show regexes took more than %lld ms of matching "
                     "(the limit): a pattern like (a+)+ backtracks; simplify it",
                     (long long)(SC_RE_BUDGET_NS / 1000000));
        goto out;
    }

    /* Samples: rewrite the location lists in place when their ranges follow each other
     * (every decoder writes them so); otherwise into a new array. */
    uint32_t *locs_out = p->sample_locs;
    if (any_hidden) {
        uint64_t prev_end = 0, need = 0;
        int in_order = 1;
        for (uint32_t s = 0; s < p->nsamples; s++) {
            const struct sc_sample *sm = &p->samples[s];
            if (sm->loc_start < prev_end)
                in_order = 0;
            prev_end = (uint64_t)sm->loc_start + sm->nlocs;
            need += sm->nlocs;
        }
        if (!in_order) {
            if (need > UINT32_MAX || !(locs_out = malloc((size_t)(need + 1) * sizeof *locs_out))) {
                rc = sc_errf(err, SC_ENOMEM, "out of memory");
                goto out;
            }
        }
    }
    /* Nothing fails from here on: p changes. */
    if (rewrite_lines) {
        for (uint32_t i = 0; i < nl; i++) {
            p->locations[i].line_start = line_start[i];
            p->locations[i].nlines = line_n[i];
        }
        free(p->lines);
        p->lines = lines;
        p->nlines = p->lines_cap = k;
        lines = NULL;
    }
    const uint32_t nt = p->nsample_types;
    uint32_t w = 0, lw = 0;
    for (uint32_t s = 0; s < p->nsamples; s++) {
        struct sc_sample sm = p->samples[s];
        const uint32_t *sl = p->sample_locs + sm.loc_start;
        int focused = 0, ignored = 0;
        for (uint32_t j = 0; j < sm.nlocs && !ignored; j++) {
            uint8_t ro = role[sl[j]];
            ignored = ro == LOC_IGNORED;
            focused |= ro == LOC_FOCUSED;
        }
        if (ignored || !focused)
            continue;
        if (any_hidden) {
            uint32_t start = lw;
            for (uint32_t j = 0; j < sm.nlocs; j++)
                if (!hidden[sl[j]])
                    locs_out[lw++] = sl[j];
            if (lw == start)
                continue;
            sm.loc_start = start;
            sm.nlocs = lw - start;
        }
        if (w != s) {
            memmove(&p->values[(size_t)w * nt], &p->values[(size_t)s * nt], nt * sizeof *p->values);
        }
        p->samples[w++] = sm;
    }
    res.samples_kept = w;
    res.samples_dropped = p->nsamples - w;
    p->nsamples = w;
    if (any_hidden) {
        if (locs_out != p->sample_locs) {
            free(p->sample_locs);
            p->sample_locs = locs_out;
            p->sample_locs_cap = lw;
        }
        p->nsample_locs = lw;
    }
out:
    free(role);
    free(hidden);
    free(r.str_bits);
    pcre2_match_data_free(r.md);
    free(lines);
    free(line_start);
    free(line_n);
    if (rc == 0 && result)
        *result = res;
    return rc;
}

int sc_profile_filter(struct sc_profile *p, const struct sc_filter_opts *o,
                      struct sc_filter_result *result, char *err)
{
    struct sc_filter *f;
    int rc = sc_filter_new(o, &f, err);
    if (rc)
        return rc;
    rc = sc_filter_apply(f, p, result, err);
    sc_filter_free(f);
    return rc;
}
