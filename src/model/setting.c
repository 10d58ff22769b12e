/* setting.c - the settings table and the parsers of its value types. */
#include "model/setting.h"
#include "model/error.h"
#include "model/timespec.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct sc_setting table[] = {
#define SC_SETTING(id_, key_, flag_, cmds_, param_, routes_, type_, min_, max_, def_, choices_,    \
                   doc_)                                                                           \
    {.id = SC_SET_##id_,                                                                           \
     .key = (key_),                                                                                \
     .flag = (flag_),                                                                              \
     .cmds = (cmds_),                                                                              \
     .param = (param_),                                                                            \
     .routes = (routes_),                                                                          \
     .type = (type_),                                                                              \
     .min = (min_),                                                                                \
     .max = (max_),                                                                                \
     .def = (def_),                                                                                \
     .choices = (choices_),                                                                        \
     .doc = (doc_)},
#include "model/settings.def"
#undef SC_SETTING
};

/* The steps of settings.def: a value must be a multiple of its row's step. */
static const struct {
    enum sc_set_id id;
    int64_t step;
} steps[] = {
#define SC_SETTING(...)
#define SC_SETTING_STEP(id_, step_) {SC_SET_##id_, (step_)},
#include "model/settings.def"
#undef SC_SETTING_STEP
#undef SC_SETTING
};

/* The rows whose max is excluded (SC_SETTING_BELOW(id)). */
static const enum sc_set_id below[] = {
#define SC_SETTING(...)
#define SC_SETTING_BELOW(id_) SC_SET_##id_,
#include "model/settings.def"
#undef SC_SETTING_BELOW
#undef SC_SETTING
};

static int is_below(enum sc_set_id id)
{
    for (size_t i = 0; i < sizeof below / sizeof below[0]; i++)
        if (below[i] == id)
            return 1;
    return 0;
}

static int64_t step_of(enum sc_set_id id)
{
    for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++)
        if (steps[i].id == id)
            return steps[i].step;
    return 1;
}

const struct sc_setting *sc_setting(enum sc_set_id id)
{
    return (unsigned)id < SC_SET__N ? &table[id] : NULL;
}

const struct sc_setting *sc_setting_find(const char *key)
{
    for (size_t i = 0; key && i < SC_SET__N; i++)
        if (table[i].key && !strcmp(table[i].key, key))
            return &table[i];
    return NULL;
}

const struct sc_setting *sc_settings(size_t *n)
{
    *n = SC_SET__N;
    return table;
}

/* ---- value parsers ---- */

static int parse_count(const char *s, int64_t *out)
{
    if (!s || !isdigit((unsigned char)*s))
        return -1;
    char *end;
    errno = 0;
    long long n = strtoll(s, &end, 10);
    if (errno || *end)
        return -1;
    *out = n;
    return 0;
}

/* Decimal digits with an optional fraction and exponent (no sign, no inf, nan or hex). */
static int parse_number(const char *s, double *out)
{
    if (!s || !(isdigit((unsigned char)*s) || (*s == '.' && isdigit((unsigned char)s[1]))))
        return -1;
    for (const char *p = s; *p; p++)
        if (!isdigit((unsigned char)*p) && !strchr(".eE+-", *p))
            return -1;
    char *end;
    errno = 0;
    double d = strtod(s, &end);
    if (errno || *end || !isfinite(d))
        return -1;
    *out = d;
    return 0;
}

static int parse_bytes(const char *s, uint64_t *out)
{
    if (!s || !isdigit((unsigned char)*s))
        return -1;
    char *end;
    errno = 0;
    unsigned long long n = strtoull(s, &end, 10);
    if (errno)
        return -1;
    static const struct {
        const char *unit;
        uint64_t mul;
    } units[] = {{"", 1},
                 {"B", 1},
                 {"K", 1ull << 10},
                 {"KiB", 1ull << 10},
                 {"KB", 1000},
                 {"M", 1ull << 20},
                 {"MiB", 1ull << 20},
                 {"MB", 1000000},
                 {"G", 1ull << 30},
                 {"GiB", 1ull << 30},
                 {"GB", 1000000000},
                 {"T", 1ull << 40},
                 {"TiB", 1ull << 40},
                 {"TB", 1000000000000ull}};
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
        if (strcmp(end, units[i].unit))
            continue;
        if (n > UINT64_MAX / units[i].mul)
            return -1;
        *out = n * units[i].mul;
        return 0;
    }
    return -1;
}

static int parse_addr(const char *s, char *host, size_t hostcap, int *port)
{
    const char *colon = s ? strrchr(s, ':') : NULL;
    if (!colon || !colon[1] || (size_t)(colon - s) >= hostcap)
        return -1;
    int64_t p;
    if (parse_count(colon + 1, &p) || p > 65535)
        return -1;
    size_t hl = (size_t)(colon - s);
    memcpy(host, s, hl);
    host[hl] = 0;
    if (!hl || !strcmp(host, "localhost"))
        snprintf(host, hostcap, "127.0.0.1");
    *port = (int)p;
    return 0;
}

int sc_parse_listen(const char *s, struct sockaddr_in *sa, char *err)
{
    char host[64];
    int port;
    memset(sa, 0, sizeof *sa);
    sa->sin_family = AF_INET;
    if (parse_addr(s, host, sizeof host, &port) || inet_pton(AF_INET, host, &sa->sin_addr) != 1)
        return sc_errf(err, SC_EINVAL,
                       "bad listen address '%.200s' (want host:port with an IPv4 host)",
                       s ? s : "");
    sa->sin_port = htons((uint16_t)port);
    return 0;
}

int sc_parse_url(const char *s)
{
    if (!s || (strncmp(s, "http://", 7) && strncmp(s, "https://", 8)))
        return -1;
    for (const char *p = s; *p; p++)
        if ((unsigned char)*p <= ' ' || *p == 0x7f)
            return -1;
    size_t n = strlen(s);
    return n > 8 && n < 2048 ? 0 : -1;
}

/* ---- descriptions ---- */

/* A duration the way users write it: the largest unit that divides it. */
static void put_duration(char *out, size_t cap, int64_t ns)
{
    static const struct {
        const char *unit;
        int64_t ns;
    } units[] = {{"d", 86400000000000LL}, {"h", 3600000000000LL}, {"m", 60000000000LL},
                 {"s", 1000000000LL},     {"ms", 1000000LL},      {"us", 1000LL}};
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
        if (ns >= units[i].ns && ns % units[i].ns == 0) {
            snprintf(out, cap, "%" PRId64 "%s", ns / units[i].ns, units[i].unit);
            return;
        }
    snprintf(out, cap, "%" PRId64 "ns", ns);
}

static void put_bytes(char *out, size_t cap, int64_t b)
{
    static const char *units[] = {"GiB", "MiB", "KiB"};
    for (int i = 0; i < 3; i++) {
        int64_t m = 1LL << (10 * (3 - i));
        if (b >= m && b % m == 0) {
            snprintf(out, cap, "%" PRId64 "%s", b / m, units[i]);
            return;
        }
    }
    snprintf(out, cap, "%" PRId64, b);
}

/* A number's bound (thousandths) as a decimal without trailing zeros: 1000 -> 1, 5 -> 0.005. */
static void put_thousandths(char *out, size_t cap, int64_t v)
{
    if (v % 1000 == 0) {
        snprintf(out, cap, "%" PRId64, v / 1000);
        return;
    }
    int n = snprintf(out, cap, "%" PRId64 ".%03d", v / 1000, (int)(v % 1000));
    while (n > 0 && (size_t)n < cap && out[n - 1] == '0')
        out[--n] = 0;
}

static void put_value(const struct sc_setting *s, char *out, size_t cap, int64_t v)
{
    if (s->type == SC_SET_NUMBER)
        put_thousandths(out, cap, v);
    else if (s->type == SC_SET_DURATION)
        put_duration(out, cap, v);
    else if (s->type == SC_SET_BYTES)
        put_bytes(out, cap, v);
    else
        snprintf(out, cap, "%" PRId64, v);
}

void sc_setting_describe(const struct sc_setting *s, char *out, size_t cap)
{
    static const char *what[] = {
        [SC_SET_COUNT] = "a count",
        [SC_SET_NUMBER] = "a number",
        [SC_SET_BYTES] = "a byte count",
        [SC_SET_DURATION] = "a duration",

        [SC_SET_ADDR] = "host:port",
        [SC_SET_BOOL] = "true or false",
        [SC_SET_CHOICE] = "one of",
        [SC_SET_STRING] = "a string",
        [SC_SET_PATH] = "a path",
        [SC_SET_URL] = "an http:// or https:// URL",
        [SC_SET_LIST] = "a list of strings",
    };
    char lo[32], hi[32], bounds[96] = "", like[48] = "";
    put_value(s, lo, sizeof lo, s->min);
    put_value(s, hi, sizeof hi, s->max);
    if (s->type == SC_SET_NUMBER && (s->min == 1 || is_below(s->id))) {
        /* open ends in words: min 1 (a thousandth) stands for above 0 */
        if (s->min == 1)
            snprintf(lo, sizeof lo, "0");
        snprintf(bounds, sizeof bounds, " %s %s", s->min == 1 ? "above" : "of at least", lo);
        if (s->max)
            snprintf(bounds + strlen(bounds), sizeof bounds - strlen(bounds), " and %s %s",
                     is_below(s->id) ? "below" : "at most", hi);
    } else if (s->min && s->max)
        snprintf(bounds, sizeof bounds, " from %s to %s", lo, hi);
    else if (s->type == SC_SET_NUMBER && s->max)
        snprintf(bounds, sizeof bounds, " from 0 to %s", hi);
    else if (s->min > 1 || (s->min == 1 && s->type == SC_SET_COUNT))
        snprintf(bounds, sizeof bounds, " of at least %s", lo);
    else if (s->min == 1)
        snprintf(bounds, sizeof bounds, " above 0");
    else if (s->max)
        snprintf(bounds, sizeof bounds, " of at most %s", hi);
    if (s->def && (s->type == SC_SET_DURATION || s->type == SC_SET_BYTES))
        snprintf(like, sizeof like, " (like %s)", s->def);
    if (s->type == SC_SET_CHOICE) {
        size_t k = (size_t)snprintf(out, cap, "one of ");
        for (const char *c = s->choices; *c && k + 3 < cap; c++) {
            if (*c == '|') {
                out[k++] = ',';
                out[k++] = ' ';
            } else {
                out[k++] = *c;
            }
        }
        out[k < cap ? k : cap - 1] = 0;
        return;
    }
    char step[40] = "";
    if (step_of(s->id) > 1)
        snprintf(step, sizeof step, ", a multiple of %lld", (long long)step_of(s->id));
    snprintf(out, cap, "%s%s%s%s", what[s->type], bounds, step, like);
}

/* ---- parsing ---- */

/* Whether v (the integer kinds) or d (numbers) is within the row's bounds and step. */
static int in_bounds(const struct sc_setting *s, int64_t v, double d)
{
    if (s->type == SC_SET_NUMBER) {
        /* bounds in thousandths; min 1 stands for above 0 */
        double lo = s->min == 1 ? 0 : (double)s->min / 1000, hi = (double)s->max / 1000;
        return !(d != d) && (s->min == 1 ? d > lo : d >= lo) &&
               (!s->max || (is_below(s->id) ? d < hi : d <= hi));
    }
    if ((s->min || s->max) && (v < s->min || (s->max && v > s->max)))
        return 0;
    return v % step_of(s->id) == 0;
}

int sc_setting_check(enum sc_set_id id, int64_t i, double d, char *err)
{
    const struct sc_setting *s = sc_setting(id);
    if (!s || in_bounds(s, i, d))
        return 0;
    char what[160], text[40];
    sc_setting_describe(s, what, sizeof what);
    if (s->type == SC_SET_NUMBER)
        snprintf(text, sizeof text, "%g", d);
    else
        snprintf(text, sizeof text, "%" PRId64, i);
    return sc_errf(err, SC_EINVAL, "'%s' must be %s, not '%s'",
                   s->key    ? s->key
                   : s->flag ? s->flag
                             : s->param,
                   what, text);
}

int sc_setting_parse(const struct sc_setting *s, const char *text, const char *where,
                     struct sc_set_value *out, char *err)
{
    memset(out, 0, sizeof *out);
    out->s = text;
    int bad = !text;
    int64_t v = 0;
    char why[SC_ERR_LEN];
    switch (s->type) {
    case SC_SET_COUNT:
        bad = bad || parse_count(text, &v);
        break;
    case SC_SET_NUMBER:
        bad = bad || parse_number(text, &out->d);
        break;
    case SC_SET_BYTES: {
        uint64_t b = 0;
        bad = bad || parse_bytes(text, &b) || b > INT64_MAX;
        v = (int64_t)b;
        break;
    }
    case SC_SET_DURATION:
        bad = bad || !*text || sc_duration_parse(text, &v, why) || v < 0;
        break;
    case SC_SET_ADDR: {
        char host[256];
        int port;
        bad = bad || parse_addr(text, host, sizeof host, &port);
        break;
    }
    case SC_SET_BOOL:
        bad = bad || (strcmp(text, "true") && strcmp(text, "false"));
        v = !bad && !strcmp(text, "true");
        break;
    case SC_SET_CHOICE: {
        bad = 1;
        size_t tl = text ? strlen(text) : 0;
        int64_t k = 0;
        for (const char *c = s->choices; text && c && *c; k++) {
            const char *e = strchr(c, '|');
            size_t cl = e ? (size_t)(e - c) : strlen(c);
            if (cl == tl && !memcmp(c, text, tl)) {
                bad = 0;
                v = k;
                break;
            }
            c = e ? e + 1 : c + cl;
        }
        break;
    }
    case SC_SET_URL:
        bad = bad || sc_parse_url(text);
        break;
    case SC_SET_STRING:
    case SC_SET_PATH:
    case SC_SET_LIST:
        bad = bad || (s->type == SC_SET_PATH && !*text);
        break;
    }
    bad = bad || !in_bounds(s, v, out->d);
    if (bad) {
        char d[160];
        sc_setting_describe(s, d, sizeof d);
        return sc_errf(err, SC_EINVAL, "'%s' must be %s, not '%.64s'",
                       where     ? where
                       : s->key  ? s->key
                       : s->flag ? s->flag
                                 : s->param,
                       d, text ? text : "");
    }
    out->i = v;
    return 0;
}

int64_t sc_setting_default_i(enum sc_set_id id)
{
    const struct sc_setting *s = sc_setting(id);
    struct sc_set_value v;
    char err[SC_ERR_LEN];
    /* a bad default is caught by the settings test; here it reads as 0 */
    return s && s->def && !sc_setting_parse(s, s->def, NULL, &v, err) ? v.i : 0;
}

double sc_setting_default_d(enum sc_set_id id)
{
    const struct sc_setting *s = sc_setting(id);
    struct sc_set_value v;
    char err[SC_ERR_LEN];
    return s && s->def && !sc_setting_parse(s, s->def, NULL, &v, err) ? v.d : 0;
}
