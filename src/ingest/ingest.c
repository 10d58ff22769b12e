/* ingest.c - Pyroscope-style pushes (and every other source) decoded into the store. */
#include "ingest/ingest.h"
#include "ingest/split.h"
#include "formats/folded.h"
#include "formats/pbjson.h"
#include "formats/jfr.h"
#include "formats/perf.h"
#include "formats/pprof.h"
#include "model/clock.h"
#include "model/error.h"
#include "model/setting.h"
#include "model/timespec.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_LABELS SC_SERIES_LABELS_MAX
#define MAX_LABEL_LEN SC_LABEL_VALUE_MAX

/* Known name suffixes: profile name, sample type, unit (Pyroscope's client naming). */
static const struct suffix {
    const char *suffix, *profile, *type, *unit;
} suffixes[] = {
    {"cpu", "cpu", "cpu", "nanoseconds"},
    {"itimer", "cpu", "cpu", "nanoseconds"},
    {"wall", "wall", "wall", "nanoseconds"},
    {"alloc_objects", "heap", "alloc_objects", "count"},
    {"alloc_space", "heap", "alloc_space", "bytes"},
    {"inuse_objects", "heap", "inuse_objects", "count"},
    {"inuse_space", "heap", "inuse_space", "bytes"},
    {"goroutines", "goroutine", "goroutine", "count"},
    {"mutex_count", "mutex", "contentions", "count"},
    {"mutex_duration", "mutex", "delay", "nanoseconds"},
    {"block_count", "block", "contentions", "count"},
    {"block_duration", "block", "delay", "nanoseconds"},
};

static const struct suffix *find_suffix(const char *s)
{
    for (size_t i = 0; s && i < sizeof suffixes / sizeof suffixes[0]; i++)
        if (!strcmp(s, suffixes[i].suffix))
            return &suffixes[i];
    return NULL;
}

int sc_ingest_parse_name(const char *name, struct sc_labels *labels, uint32_t max, char *suffix,
                         char *err)
{
    suffix[0] = 0;
    if (!name || !*name)
        return sc_errf(err, SC_EINVAL, "missing 'name' (application name)");
    size_t len = strlen(name);
    if (len > 65536)
        return sc_errf(err, SC_ELIMIT, "name is longer than 65536 bytes");
    const char *brace = strchr(name, '{');
    size_t applen = brace ? (size_t)(brace - name) : len;
    while (applen && name[applen - 1] == ' ')
        applen--;
    if (applen == 0)
        return sc_errf(err, SC_EINVAL, "empty application name in '%.64s'", name);
    if (applen > MAX_LABEL_LEN)
        return sc_errf(err, SC_ELIMIT, "application name is longer than %d bytes", MAX_LABEL_LEN);
    /* the name's syntax characters: "bad}" is a mistyped selector, not an application */
    for (size_t i = 0; i < applen; i++) {
        unsigned char c = (unsigned char)name[i];
        if (c < 0x20 || c == 0x7f || strchr("}\",=", c))
            return sc_errf(err, SC_EINVAL,
                           "bad application name '%.*s': %s is not allowed in it (labels go "
                           "in braces: app{key=value})",
                           (int)(applen < 64 ? applen : 64), name,
                           c == '}'   ? "'}'"
                           : c == '"' ? "'\"'"
                           : c == ',' ? "','"
                           : c == '=' ? "'='"
                                      : "a control character");
    }
    /* service_name, without a known suffix */
    size_t keep = applen;
    const char *dot = memrchr(name, '.', applen);
    if (dot && (size_t)(name + applen - dot - 1) < 32) {
        char sfx[32];
        snprintf(sfx, sizeof sfx, "%.*s", (int)(name + applen - dot - 1), dot + 1);
        if (find_suffix(sfx)) {
            keep = (size_t)(dot - name);
            memcpy(suffix, sfx, strlen(sfx) + 1);
        }
    }
    if (sc_labels_set(labels, "service_name", 12, name, keep))
        return sc_errf(err, SC_ENOMEM, "out of memory");
    if (!brace)
        return 0;
    const char *p = brace + 1, *end = name + len;
    if (end[-1] != '}')
        return sc_errf(err, SC_EINVAL, "name: missing '}' in '%.64s'", name);
    end--;
    while (p < end) {
        while (p < end && (*p == ' ' || *p == ','))
            p++;
        if (p >= end)
            break;
        const char *eq = memchr(p, '=', (size_t)(end - p));
        if (!eq)
            return sc_errf(err, SC_EINVAL, "name: label without '=' at offset %zu",
                           (size_t)(p - name));
        const char *k = p, *ke = eq;
        while (ke > k && ke[-1] == ' ')
            ke--;
        const char *v = eq + 1;
        while (v < end && *v == ' ')
            v++;
        const char *ve;
        if (v < end && *v == '"') {
            v++;
            ve = memchr(v, '"', (size_t)(end - v));
            if (!ve)
                return sc_errf(err, SC_EINVAL, "name: unterminated quote");
            p = ve + 1;
        } else {
            ve = memchr(v, ',', (size_t)(end - v));
            if (!ve)
                ve = end;
            p = ve;
            while (ve > v && ve[-1] == ' ')
                ve--;
        }
        int rc = sc_label_check(k, (size_t)(ke - k), (size_t)(ve - v), err);
        if (rc)
            return rc;
        /* the application name is the service name: a label cannot override it */
        if ((size_t)(ke - k) == 12 && !memcmp(k, "service_name", 12))
            continue;
        struct sc_str old;
        if (sc_labels_get(labels, k, (size_t)(ke - k), &old))
            return sc_errf(err, SC_EINVAL, "name: duplicate label '%.*s'",
                           (int)(ke - k < 64 ? ke - k : 64), k);
        if (labels->n >= max)
            return sc_errf(err, SC_ELIMIT, "more than %u labels", (unsigned)max);
        if (sc_labels_set(labels, k, (size_t)(ke - k), v, (size_t)(ve - v)))
            return sc_errf(err, SC_ENOMEM, "out of memory");
    }
    return 0;
}

/* Folded or lines input into a profile with Pyroscope's meaning of units and sampleRate. */
static int decode_text(const char *body, size_t len, int lines, const struct sc_ingest_req *r,
                       const struct suffix *sfx, int64_t rate, const struct sc_limits *lim,
                       struct sc_profile *p, char *err)
{
    struct sc_buf conv = SC_BUF_INIT;
    const char *text = body;
    size_t tlen = len;
    if (lines) {
        /* "a;b;c" per line, each a sample of count 1 */
        for (size_t off = 0; off < len;) {
            const char *nl = memchr(body + off, '\n', len - off);
            size_t e = nl ? (size_t)(nl - body) : len;
            size_t l = e - off;
            while (l && (body[off + l - 1] == '\r' || body[off + l - 1] == ' '))
                l--;
            if (l) {
                sc_buf_append(&conv, body + off, l);
                sc_buf_puts(&conv, " 1\n");
            }
            off = e + 1;
        }
        if (conv.oom) {
            sc_buf_release(&conv);
            return sc_errf(err, SC_ENOMEM, "out of memory");
        }
        text = conv.data ? conv.data : "";
        tlen = conv.len;
    }
    struct sc_profile *tmp = sc_profile_new();
    int rc = tmp ? sc_folded_decode(text, tlen, lim, tmp, err) : SC_ENOMEM;
    sc_buf_release(&conv);
    if (rc) {
        sc_profile_free(tmp);
        return rc == SC_ENOMEM ? sc_errf(err, rc, "out of memory") : rc;
    }
    if (tmp->nsample_types != 1) {
        sc_profile_free(tmp);
        return sc_errf(err, SC_EFORMAT, "folded lines with two counts cannot be ingested");
    }
    /* sample types: cpu-like data keeps the sample count and its time; other units one
     * type named after the suffix or the units */
    const char *units = r->units && *r->units ? r->units : "samples";
    int cpu = (!sfx && !strcmp(units, "samples")) ||
              (sfx && (!strcmp(sfx->profile, "cpu") || !strcmp(sfx->profile, "wall")));
    if (cpu) {
        const char *tn = sfx ? sfx->type : "cpu";
        if (sc_profile_add_sample_type(p, "samples", "count") < 0 ||
            sc_profile_add_sample_type(p, tn, "nanoseconds") < 0) {
            rc = SC_ENOMEM;
        } else {
            p->default_sample_type = p->sample_types[1].type;
            p->period_type = p->sample_types[1];
            p->period = 1000000000LL / rate;
        }
    } else {
        const char *tn = sfx ? sfx->type : units;
        const char *un = sfx                       ? sfx->unit
                         : !strcmp(units, "bytes") ? "bytes"
                         : !strcmp(units, "lock_nanoseconds") || !strcmp(units, "nanoseconds")
                             ? "nanoseconds"
                             : "count";
        if (sc_profile_add_sample_type(p, tn, un) < 0)
            rc = SC_ENOMEM;
    }
    /* move functions/locations over by appending with the new value columns */
    if (rc == 0) {
        p->functions = tmp->functions;
        p->nfunctions = p->functions_cap = tmp->nfunctions;
        p->locations = tmp->locations;
        p->nlocations = p->locations_cap = tmp->nlocations;
        p->lines = tmp->lines;
        p->nlines = p->lines_cap = tmp->nlines;
        tmp->functions = NULL;
        tmp->locations = NULL;
        tmp->lines = NULL;
        tmp->nfunctions = tmp->nlocations = tmp->nlines = 0;
        /* function names are strings of tmp: re-intern into p */
        for (uint32_t i = 0; i < p->nfunctions && rc == 0; i++) {
            struct sc_str nm = sc_profile_str(tmp, p->functions[i].name);
            int64_t id = sc_profile_intern(p, nm.ptr, nm.len);
            if (id < 0)
                rc = SC_ENOMEM;
            else
                p->functions[i].name = p->functions[i].system_name = (uint32_t)id;
            p->functions[i].filename = 0;
        }
        for (uint32_t i = 0; i < tmp->nsamples && rc == 0; i++) {
            const struct sc_sample *sm = &tmp->samples[i];
            int64_t v[2] = {tmp->values[i], sc_mul_sat(tmp->values[i], 1000000000LL / rate)};
            if (sc_profile_add_sample(p, tmp->sample_locs + sm->loc_start, sm->nlocs, v, 0) < 0)
                rc = SC_ENOMEM;
        }
    }
    sc_profile_free(tmp);
    return rc ? sc_errf(err, rc, "out of memory") : 0;
}

static int has_type(const struct sc_profile *p, const char *name)
{
    size_t n = strlen(name);
    for (uint32_t i = 0; i < p->nsample_types; i++) {
        struct sc_str t = sc_profile_str(p, p->sample_types[i].type);
        if (t.len == n && !memcmp(t.ptr, name, n))
            return 1;
    }
    return 0;
}

static int str_is(struct sc_str s, const char *z)
{
    size_t n = strlen(z);
    return s.len == n && !memcmp(s.ptr, z, n);
}

/* The profile name a pprof describes itself as. The period type names the sampler first:
 * a Node.js wall profile (period wall) that also carries cpu time stays "wall", as in
 * Pyroscope; the sample types decide when the period type says nothing. */
const char *sc_ingest_profile_name(const struct sc_profile *p)
{
    static const struct {
        const char *period, *profile;
    } by_period[] = {
        {"cpu", "cpu"},
        {"wall", "wall"},
        {"space", "heap"},
        {"inuse_space", "heap"},
        {"alloc_space", "heap"},
        {"goroutine", "goroutine"},
        {"goroutines", "goroutine"},
        {"threadcreate", "threadcreate"},
        {"contentions", "mutex"},
    };
    /* allocation counts without the in-use ones: Go's allocs profile as a delta (what the
     * agent pushes for "allocs"); a heap profile always has inuse_* */
    if (has_type(p, "alloc_space") && !has_type(p, "inuse_space"))
        return "allocs";
    struct sc_str pt = sc_profile_str(p, p->period_type.type);
    for (size_t i = 0; i < sizeof by_period / sizeof by_period[0]; i++)
        if (str_is(pt, by_period[i].period))
            return by_period[i].profile;
    if (has_type(p, "cpu"))
        return "cpu";
    if (has_type(p, "wall"))
        return "wall";
    if (has_type(p, "alloc_space") || has_type(p, "inuse_space") || has_type(p, "space"))
        return "heap";
    if (has_type(p, "goroutine") || has_type(p, "goroutines"))
        return "goroutine";
    if (has_type(p, "threadcreate"))
        return "threadcreate";
    if (has_type(p, "contentions") && has_type(p, "delay"))
        return "mutex";
    return NULL;
}

/* ---- Pyroscope's sample_type_config part ----
 * {"<sample type>": {"units": "...", "display-name": "...", "aggregation": "average",
 *  "cumulative": true, "sampled": true}, ...}: Go clients name their block and mutex
 * profiles (identical pprofs) only here, by display names such as "block_count". */

#define STC_MAX 32

struct stc_entry {
    char type[64], display[64];
    int cumulative;
};

struct stc {
    struct stc_entry e[STC_MAX];
    uint32_t n;
};

struct json {
    const char *p, *end;
};

static void json_ws(struct json *j)
{
    j->p = sc_pbjson_skip_ws(j->p, j->end);
}

/* A string into out (truncated to cap - 1; escapes kept simple: \uXXXX becomes '?'). */
static int json_str(struct json *j, char *out, size_t cap)
{
    json_ws(j);
    if (j->p >= j->end || *j->p != '"')
        return -1;
    j->p++;
    size_t n = 0;
    while (j->p < j->end && *j->p != '"') {
        char c = *j->p++;
        if (c == '\\') {
            if (j->p >= j->end)
                return -1;
            c = *j->p++;
            if (c == 'u') {
                if (j->end - j->p < 4)
                    return -1;
                j->p += 4;
                c = '?';
            } else if (c == 'n') {
                c = '\n';
            } else if (c == 't') {
                c = '\t';
            } else if (c != '"' && c != '\\' && c != '/' && c != 'b' && c != 'f' && c != 'r') {
                return -1;
            }
        }
        if (n + 1 < cap)
            out[n++] = c;
    }
    if (j->p >= j->end)
        return -1;
    j->p++;
    out[n] = 0;
    return 0;
}

/* Skips a scalar (number, true, false, null); sets *truth for true. */
static int json_scalar(struct json *j, int *truth)
{
    json_ws(j);
    const char *s = j->p;
    while (j->p < j->end &&
           (isalnum((unsigned char)*j->p) || *j->p == '-' || *j->p == '+' || *j->p == '.'))
        j->p++;
    if (j->p == s)
        return -1;
    *truth = j->p - s == 4 && !memcmp(s, "true", 4);
    return 0;
}

static int json_expect(struct json *j, char c)
{
    json_ws(j);
    if (j->p >= j->end || *j->p != c)
        return -1;
    j->p++;
    return 0;
}

/* 1 when the next character is c (consumed), else 0. */
static int json_take(struct json *j, char c)
{
    json_ws(j);
    if (j->p < j->end && *j->p == c) {
        j->p++;
        return 1;
    }
    return 0;
}

static int parse_stc(const char *text, size_t len, struct stc *out, char *err)
{
    memset(out, 0, sizeof *out);
    struct json j = {text, text + len};
    char key[64], val[64];
    if (json_expect(&j, '{'))
        goto bad;
    if (!json_take(&j, '}')) {
        do {
            struct stc_entry e;
            memset(&e, 0, sizeof e);
            if (json_str(&j, e.type, sizeof e.type) || json_expect(&j, ':') || json_expect(&j, '{'))
                goto bad;
            if (!json_take(&j, '}')) {
                do {
                    if (json_str(&j, key, sizeof key) || json_expect(&j, ':'))
                        goto bad;
                    json_ws(&j);
                    int truth = 0;
                    if (j.p < j.end && *j.p == '"') {
                        if (json_str(&j, val, sizeof val))
                            goto bad;
                        if (!strcmp(key, "display-name"))
                            snprintf(e.display, sizeof e.display, "%s", val);
                    } else if (json_scalar(&j, &truth)) {
                        goto bad;
                    } else if (!strcmp(key, "cumulative")) {
                        e.cumulative = truth;
                    }
                } while (json_take(&j, ','));
                if (json_expect(&j, '}'))
                    goto bad;
            }
            if (out->n < STC_MAX)
                out->e[out->n++] = e;
        } while (json_take(&j, ','));
        if (json_expect(&j, '}'))
            goto bad;
    }
    json_ws(&j);
    if (j.p != j.end)
        goto bad;
    return 0;
bad:
    return sc_errf(err, SC_EINVAL,
                   "bad sample_type_config at offset %zu (want JSON like "
                   "{\"delay\": {\"display-name\": \"block_duration\"}})",
                   (size_t)(j.p - text));
}

/* The profile a sample_type_config names through its display names (block_count ->
 * block), considering only the types the pprof has; NULL when it names none. */
static const char *stc_profile_name(const struct stc *c, const struct sc_profile *p)
{
    for (uint32_t i = 0; i < c->n; i++) {
        const struct suffix *sx = find_suffix(c->e[i].display);
        if (sx && has_type(p, c->e[i].type))
            return sx->profile;
    }
    return NULL;
}

int sc_ingest_inflate(const void **body, size_t *len, uint64_t claim, const struct sc_limits *lim,
                      void **plain, int *over_claim, char *err)
{
    *plain = NULL;
    *over_claim = 0;
    if (*len > lim->max_input)
        return sc_errf(err, SC_ELIMIT, "body of %zu bytes is more than %llu", *len,
                       (unsigned long long)lim->max_input);
    if (!sc_is_gzip(*body, *len))
        return 0;
    int held = claim && claim < lim->max_decompressed;
    size_t n;
    int rc = sc_gunzip(*body, *len, held ? claim : lim->max_decompressed, plain, &n, err);
    if (rc == SC_ELIMIT && held) {
        *over_claim = 1;
        sc_errf(err, rc, "gzip data inflates past the %llu bytes its trailer claims",
                (unsigned long long)claim);
    }
    if (rc)
        return rc;
    *body = *plain;
    *len = n;
    return 0;
}

int sc_ingest(struct sc_store *s, const struct sc_ingest_req *r, const struct sc_limits *lim,
              struct sc_ingest_result *res, char *err)
{
    memset(res, 0, sizeof *res);
    struct sc_labels labels;
    sc_labels_init(&labels);
    char suffix[32];
    int nl = sc_ingest_parse_name(r->name, &labels, MAX_LABELS, suffix, err);
    if (nl < 0) {
        sc_labels_release(&labels);
        return nl;
    }
    const struct suffix *sfx = find_suffix(suffix);
    int64_t from = 0, until = 0;
    int rc = 0;
    /* the query parameters' parser: unix time by magnitude (Pyroscope's clients send
     * seconds, Go's nanoseconds), RFC 3339, now-D; times past 2262 are refused, not wrapped */
    int64_t now = sc_wall_ns();
    if (r->from && sc_time_parse(r->from, now, &from, err))
        rc = sc_errwrap(err, SC_EINVAL, "bad 'from'");
    else if (r->until && sc_time_parse(r->until, now, &until, err))
        rc = sc_errwrap(err, SC_EINVAL, "bad 'until'");
    else if (r->from && r->until && until < from)
        rc = sc_errf(err, SC_EINVAL, "bad 'until' '%.32s': before 'from' '%.32s'", r->until,
                     r->from);
    int64_t rate = sc_setting_default_i(SC_SET_PARAM_SAMPLE_RATE);
    if (!rc && r->sample_rate && *r->sample_rate) {
        struct sc_set_value v;
        rc = sc_setting_parse(sc_setting(SC_SET_PARAM_SAMPLE_RATE), r->sample_rate, NULL, &v, err);
        rate = rc ? rate : v.i;
    }
    /* no format: the body's own (Pyroscope's default is folded; random bytes are none) */
    int detect = !(r->format && *r->format);
    const char *format = detect ? "folded" : r->format;
    enum sc_format fmt = SC_FMT_UNKNOWN;
    int lines = 0;
    if (!rc) {
        const struct sc_format_def *d = sc_format_by_ingest_name(format);
        char names[256];
        if (d)
            fmt = d->id, lines = !strcmp(format, "lines");
        else
            rc = sc_errf(err, SC_EUNSUPPORTED, "unsupported format '%.32s' (%s)", format,
                         sc_format_list(SC_FMT_LIST_INGEST, names, sizeof names));
    }
    if (!rc && r->prev_profile_len)
        rc = sc_errf(err, SC_EUNSUPPORTED,
                     "prev_profile is not supported (cumulative profiles): send deltas, as "
                     "current Pyroscope clients do");
    struct stc stc = {0};
    if (!rc && r->sample_type_config_len) {
        if (r->sample_type_config_len > 65536)
            rc = sc_errf(err, SC_ELIMIT, "sample_type_config is longer than 65536 bytes");
        else
            rc = parse_stc(r->sample_type_config, r->sample_type_config_len, &stc, err);
    }
    if (rc) {
        sc_labels_release(&labels);
        return rc;
    }
    /* decompress once here so folded/lines conversion sees text */
    struct sc_profile *p = NULL;
    void *plain = NULL;
    size_t plen = r->len;
    const void *body = r->body;
    rc = sc_ingest_inflate(&body, &plen, r->gzip_claim, lim, &plain, &res->over_claim, err);
    if (!rc && detect && sc_jfr_detect(body, plen))
        fmt = SC_FMT_JFR;
    if (!rc && fmt == SC_FMT_JFR) {
        /* a profile a kind of sample, each stored by sc_ingest_jfr */
        struct sc_ingest_jfr_req q = {
            r->tenant, &labels,       body,
            plen,      r->jfr_labels, r->jfr_labels_len,
            from,      until,         r->sample_rate && *r->sample_rate ? 1000000000LL / rate : 0};
        if (r->spy_name && *r->spy_name &&
            sc_labels_set(&labels, "spy_name", 8, r->spy_name, strlen(r->spy_name)))
            rc = sc_errf(err, SC_ENOMEM, "out of memory");
        if (!rc)
            rc = sc_ingest_jfr(s, &q, lim, res, err);
        free(plain);
        sc_labels_release(&labels);
        return rc;
    }
    if (!rc && detect) {
        fmt = sc_detect_format(body, plen);
        format = sc_format_name(fmt);
        char names[256];
        if (fmt == SC_FMT_UNKNOWN)
            rc = sc_errf(err, SC_EFORMAT,
                         "the body of %zu bytes is not clearly %s: say which with 'format'", plen,
                         sc_format_list(SC_FMT_LIST_DESC, names, sizeof names));
    }
    if (!rc && fmt == SC_FMT_FOLDED) {
        p = sc_profile_new();
        rc = p ? decode_text(body ? body : "", plen, lines, r, sfx, rate, lim, p, err)
               : sc_errf(err, SC_ENOMEM, "out of memory");
        if (rc) {
            sc_profile_free(p);
            p = NULL;
        }
    } else if (!rc) {
        /* the profile borrows the plain bytes (freed below, after the write) */
        struct sc_input in = {(void *)body, plen, SC_INPUT_BORROWED};
        /* a pushed perf.data names binaries of the machine it came from, not ours */
        struct sc_decode_opts o = {.limits = lim,
                                   .format = fmt,
                                   .lazy_samples =
                                       fmt == SC_FMT_PPROF ? SC_PPROF_LAZY_UNLABELLED : 0,
                                   .perfdata_no_local_files = 1};
        rc = sc_decode(&in, &o, &p, err);
    }
    const char *profile = r->profile_name;
    if (!rc && !profile && sfx)
        profile = sfx->profile;
    if (!rc && !profile && fmt == SC_FMT_PPROF)
        profile = stc.n ? stc_profile_name(&stc, p) : NULL;
    /* folded stacks and perf script know no kind: Pyroscope calls them cpu; the other
     * formats' sample types tell (a .cpuprofile's cpu, a speedscope file's space) */
    if (!rc && !profile && fmt != SC_FMT_FOLDED && fmt != SC_FMT_PERF)
        profile = sc_ingest_profile_name(p);
    if (!rc && !profile)
        profile = fmt == SC_FMT_PPROF ? "profile" : "cpu"; /* a pprof of no kind we know */
    /* a text body without one readable stack is a mistake (an empty pprof is not: Go's
     * mutex and block profiles are empty until something contends) */
    if (!rc && fmt != SC_FMT_PPROF && sc_profile_nsamples(p) == 0 && p->nsample_types)
        rc = sc_errf(err, SC_EFORMAT, "no stack samples in the %s body", format);
    /* labels: the name's, spy_name, the caller's (the name's win) */
    if (!rc && r->spy_name && *r->spy_name &&
        sc_labels_set(&labels, "spy_name", 8, r->spy_name, strlen(r->spy_name)))
        rc = sc_errf(err, SC_ENOMEM, "out of memory");
    for (uint32_t i = 0; !rc && r->extra_labels && i < r->extra_labels->n; i++) {
        const struct sc_label_pair *x = &r->extra_labels->v[i];
        struct sc_str old;
        if (sc_labels_get(&labels, x->name.ptr, x->name.len, &old))
            continue;
        if (labels.n >= MAX_LABELS)
            rc = sc_errf(err, SC_ELIMIT, "more than %d labels", MAX_LABELS);
        else if (sc_labels_set(&labels, x->name.ptr, x->name.len, x->value.ptr, x->value.len))
            rc = sc_errf(err, SC_ENOMEM, "out of memory");
    }
    if (!rc) {
        int64_t t = from ? from : p->time_nanos;
        /* perf script timestamps count from boot: shift them by whole seconds so the first
         * sample lands in the push's first second and sub-second offsets stay exact. The
         * same for a pprof whose timestamp_ns labels are not wall-clock (before 2001: a
         * perf recording converted to pprof); scorch record's are */
        int64_t shift = 0, first = 0;
        for (uint32_t i = 0; i < p->nsamples; i++)
            if (p->samples[i].time_ns && (!first || p->samples[i].time_ns < first))
                first = p->samples[i].time_ns;
        if (first && (fmt == SC_FMT_PERF || first < 978307200LL * 1000000000LL)) {
            if (!t)
                t = (int64_t)time(NULL) * 1000000000LL;
            shift = sc_mul_sat(t / 1000000000LL - first / 1000000000LL, 1000000000LL);
        }
        struct sc_ingest_item it = {r->tenant, &labels, profile,
                                    p,         t,       until > from ? sc_sub_sat(until, from) : 0,
                                    shift,     lim};
        rc = sc_ingest_store(s, &it, res, err);
    }
    sc_profile_free(p);
    free(plain);
    sc_labels_release(&labels);
    return rc;
}

int sc_ingest_check_labels(const struct sc_labels *l, char *err)
{
    if (l->n > MAX_LABELS)
        return sc_errf(err, SC_ELIMIT, "%u labels is more than %d", (unsigned)l->n, MAX_LABELS);
    for (uint32_t i = 0; i < l->n; i++) {
        int rc = sc_label_check(l->v[i].name.ptr, l->v[i].name.len, l->v[i].value.len, err);
        if (rc)
            return rc;
    }
    return 0;
}

int sc_ingest_check_times(const struct sc_ingest_item *it, int64_t now_ns, char *err)
{
    const struct sc_limits *lim = it->lim;
    const struct sc_profile *p = it->p;
    if (!lim)
        return 0;
    int64_t t = it->time_ns ? it->time_ns : p->time_nanos;
    int64_t dur = it->duration_ns ? it->duration_ns : p->duration_nanos;
    if (!t)
        return 0; /* now */
    int rc = sc_limits_time(lim, now_ns, t, "the profile's start", err);
    if (!rc && dur > 0)
        rc = sc_limits_time(lim, now_ns, sc_add_sat(t, dur), "the profile's end", err);
    /* samples' own times (perf script, pprof timestamps); lazy samples carry none */
    for (uint32_t i = 0; !rc && i < p->nsamples; i++)
        if (p->samples[i].time_ns)
            rc = sc_limits_time(lim, now_ns, sc_add_sat(p->samples[i].time_ns, it->time_shift_ns),
                                "a sample's time", err);
    return rc;
}

/* A profile whose samples carry their times covers them, whatever the push said: it starts
 * at its first sample when that is earlier than *t, and lasts at least to its last sample
 * plus one sampling interval (the mean gap between its samples), so the timeline places
 * it by its samples and the profile list gives its real duration. */
static void timed_span(const struct sc_profile *p, int64_t shift, int64_t *t, int64_t *dur)
{
    int64_t first = INT64_MAX, last = INT64_MIN, n = 0;
    for (uint32_t i = 0; !p->lazy && i < p->nsamples; i++) {
        if (!p->samples[i].time_ns)
            continue;
        int64_t x = sc_add_sat(p->samples[i].time_ns, shift);
        first = x < first ? x : first;
        last = x > last ? x : last;
        n++;
    }
    if (n == 0)
        return;
    int64_t gap = n > 1 ? sc_sub_sat(last, first) / (n - 1) : 0;
    int64_t end = sc_add_sat(sc_add_sat(last, gap), 1);
    if (first < *t) {
        int64_t old_end = sc_add_sat(*t, *dur);
        *t = first;
        *dur = sc_sub_sat(old_end, first);
    }
    if (sc_sub_sat(end, *t) > *dur)
        *dur = sc_sub_sat(end, *t);
}

int sc_ingest_store(struct sc_store *s, const struct sc_ingest_item *it,
                    struct sc_ingest_result *res, char *err)
{
    memset(res, 0, sizeof *res);
    const struct sc_profile *p = it->p;
    if (sc_profile_nsamples(p) == 0 && p->nsample_types == 0)
        return sc_errf(err, SC_EFORMAT, "empty profile");
    int rc = sc_ingest_check_labels(it->labels, err);
    if (rc)
        return rc;
    const char *profile = it->profile ? it->profile : sc_ingest_profile_name(p);
    if (!profile)
        profile = "profile"; /* a profile of no kind we know */
    int64_t now = sc_wall_ns();
    if ((rc = sc_ingest_check_times(it, now, err)))
        return rc;
    int64_t t = it->time_ns ? it->time_ns : p->time_nanos;
    int64_t dur = it->duration_ns ? it->duration_ns : p->duration_nanos;
    if (!t)
        t = now / 1000000000LL * 1000000000LL;
    timed_span(p, it->time_shift_ns, &t, &dur);
    struct sc_split sp;
    rc = sc_split_profile(p, it->labels, SC_INGEST_MAX_SPLIT, &sp, err);
    if (rc == 0 && sp.n == 0) {
        struct sc_store_write w = {it->tenant, it->labels, profile, t, dur, p, it->time_shift_ns};
        rc = sc_store_write(s, &w, err);
    }
    /* every part is checked before the first is stored */
    for (uint32_t g = 0; rc == 0 && g < sp.n; g++)
        rc = sc_ingest_check_labels(&sp.labels[g], err);
    struct sc_store_write *ws = rc == 0 && sp.n ? calloc(sp.n, sizeof *ws) : NULL;
    if (rc == 0 && sp.n && !ws)
        rc = sc_errf(err, SC_ENOMEM, "out of memory");
    for (uint32_t g = 0; ws && g < sp.n; g++) {
        struct sc_store_write w = {it->tenant, &sp.labels[g],      profile,          t,
                                   dur,        &sp.parts.views[g], it->time_shift_ns};
        ws[g] = w;
    }
    /* the parts together: ClickHouse then stores them in one commit a shard */
    if (ws)
        rc = sc_store_write_many(s, ws, sp.n, err);
    free(ws);
    res->series = sp.n ? sp.n : 1;
    snprintf(res->dropped, sizeof res->dropped, "%s", sp.dropped);
    sc_split_release(&sp);
    if (rc)
        return rc;
    res->samples = sc_profile_nsamples(p);
    snprintf(res->profile, sizeof res->profile, "%s", profile);
    struct sc_str svc;
    sc_labels_get(it->labels, "service_name", 12, &svc);
    snprintf(res->service, sizeof res->service, "%.*s", (int)svc.len, svc.ptr);
    return 0;
}
