/* format.c - the table of input formats (see format.h) and the detection of the text ones. */
#include "formats/format.h"
#include "formats/cpuprofile.h"
#include "formats/folded.h"
#include "formats/input.h"
#include "formats/jfr.h"
#include "formats/legacy.h"
#include "formats/perf.h"
#include "formats/perfdata.h"
#include "formats/pprof.h"
#include "formats/speedscope.h"
#include "model/error.h"

#include <stdio.h>
#include <string.h>

/* ---- text detection: perf script or folded stacks ---- */

/* perf script frame line: optional whitespace (old perf versions print none), hex address,
 * space, anything, " (", ..., ")". */
static int looks_like_frame(const char *s, const char *e)
{
    if (s == e)
        return 0;
    while (s < e && (*s == ' ' || *s == '\t'))
        s++;
    const char *h = s;
    while (s < e && ((*s >= '0' && *s <= '9') || (*s >= 'a' && *s <= 'f')))
        s++;
    if (s == h || s == e || *s != ' ')
        return 0;
    return e[-1] == ')' && memchr(s, '(', (size_t)(e - s)) != NULL;
}

/* folded line: ends with whitespace + a number (flamegraph.pl takes decimals too). */
static int looks_like_folded(const char *s, const char *e)
{
    while (e > s && (e[-1] == '\r' || e[-1] == ' ' || e[-1] == '\t'))
        e--;
    const char *d = e;
    while (d > s && ((d[-1] >= '0' && d[-1] <= '9') || d[-1] == '.'))
        d--;
    return d < e && d > s && (d[-1] == ' ' || d[-1] == '\t');
}

/* Go's text profiles of old (debug=1: "goroutine profile: total 3", "heap profile: ...",
 * "--- mutex:"), which the legacy row reads and the first of which would otherwise pass for
 * a folded stack. Judged by the first line that is not blank. */
static int looks_like_go_text(const char *s, size_t n)
{
    const char *end = s + n;
    while (s < end && (*s == '\n' || *s == '\r' || *s == ' ' || *s == '\t'))
        s++;
    const char *e = memchr(s, '\n', (size_t)(end - s));
    size_t len = (size_t)((e ? e : end) - s);
    static const char *const heads[] = {"heap profile:", "--- contention",
                                        "--- mutex:", "--- threadz ", "--- Thread "};
    for (size_t i = 0; i < sizeof heads / sizeof heads[0]; i++)
        if (len >= strlen(heads[i]) && !memcmp(s, heads[i], strlen(heads[i])))
            return 1;
    /* \A(\S+) profile: total \d+\z */
    static const char mid[] = " profile: total ";
    const char *m = memmem(s, len, mid, sizeof mid - 1);
    if (!m || m == s || memchr(s, ' ', (size_t)(m - s)) || memchr(s, '\t', (size_t)(m - s)))
        return 0;
    const char *d = m + sizeof mid - 1, *le = s + len;
    if (d == le)
        return 0;
    while (d < le && *d >= '0' && *d <= '9')
        d++;
    return d == le;
}

/* perf script, folded stacks or neither, judged by the first 200 lines: any perf frame or
 * one-line sample makes perf script, else folded lines at least as many as other ones
 * folded stacks. A NUL byte makes neither. */
static enum sc_format text_kind(const void *buf, size_t n)
{
    if (looks_like_go_text(buf, n))
        return SC_FMT_UNKNOWN;
    const char *s = buf, *end = s + n;
    int frames = 0, folded = 0, other = 0;
    for (int lines = 0; s < end && lines < 200; lines++) {
        const char *e = memchr(s, '\n', (size_t)(end - s));
        if (!e)
            e = end;
        if (e > s && memchr(s, 0, (size_t)(e - s)))
            return SC_FMT_UNKNOWN;
        if (e == s || *s == '#') {
            /* blank or comment */
        } else if (looks_like_frame(s, e) || sc_perf_frame_header(s, (size_t)(e - s))) {
            frames++;
        } else if (looks_like_folded(s, e)) {
            folded++;
        } else {
            other++;
        }
        s = e + 1;
        if (frames >= 3)
            return SC_FMT_PERF;
    }
    if (frames > 0)
        return SC_FMT_PERF;
    if (folded > 0 && folded >= other)
        return SC_FMT_FOLDED;
    return SC_FMT_UNKNOWN;
}

/* ---- the rows' detect and decode entries ---- */

static int detect_pprof(const void *buf, size_t n)
{
    return n > 0 && sc_pprof_looks_valid(buf, n);
}

static int decode_pprof(const void *buf, size_t n, const struct sc_decode_opts *o,
                        const struct sc_limits *lim, struct sc_profile *p, char *err)
{
    return o->lazy_samples ? sc_pprof_decode_mode(buf, n, lim, o->lazy_samples, p, err)
                           : sc_pprof_decode(buf, n, lim, p, err);
}

static int decode_jfr(const void *buf, size_t n, const struct sc_decode_opts *o,
                      const struct sc_limits *lim, struct sc_profile *p, char *err)
{
    (void)o;
    return sc_jfr_decode(buf, n, NULL, lim, p, err);
}

static int decode_legacy(const void *buf, size_t n, const struct sc_decode_opts *o,
                         const struct sc_limits *lim, struct sc_profile *p, char *err)
{
    (void)o;
    return sc_legacy_decode(buf, n, lim, p, err);
}

static int detect_perf(const void *buf, size_t n)
{
    return text_kind(buf, n) == SC_FMT_PERF;
}

static int decode_perf(const void *buf, size_t n, const struct sc_decode_opts *o,
                       const struct sc_limits *lim, struct sc_profile *p, char *err)
{
    return sc_perf_decode_ex(buf, n, &o->perf, lim, p, o->perf_stats, err);
}

/* empty input is folded stacks without any (an empty file is refused by sc_load) */
static int detect_folded(const void *buf, size_t n)
{
    return n == 0 || text_kind(buf, n) == SC_FMT_FOLDED;
}

static int decode_folded(const void *buf, size_t n, const struct sc_decode_opts *o,
                         const struct sc_limits *lim, struct sc_profile *p, char *err)
{
    (void)o;
    return sc_folded_decode(buf, n, lim, p, err);
}

static int decode_cpuprofile(const void *buf, size_t n, const struct sc_decode_opts *o,
                             const struct sc_limits *lim, struct sc_profile *p, char *err)
{
    (void)o;
    return sc_cpuprofile_decode(buf, n, lim, p, err);
}

static int decode_speedscope(const void *buf, size_t n, const struct sc_decode_opts *o,
                             const struct sc_limits *lim, struct sc_profile *p, char *err)
{
    (void)o;
    return sc_speedscope_decode(buf, n, lim, p, err);
}

static int decode_perfdata(const void *buf, size_t n, const struct sc_decode_opts *o,
                           const struct sc_limits *lim, struct sc_profile *p, char *err)
{
    struct sc_perfdata_opts po = {.no_local_files = o->perfdata_no_local_files};
    return sc_perfdata_decode(buf, n, &o->perf, &po, lim, p, NULL, err);
}

/* ---- the table ---- */

/* Detection order: formats with magic or a strict structure first, then the text
 * heuristics (perf script and folded stacks exclude each other: one text_kind decides). */
/* One row a line, kept so by clang-format off. */
/* clang-format off */
const struct sc_format_def sc_formats[] = {
    {SC_FMT_PPROF, "pprof", {"pprof", NULL}, "pprof", detect_pprof, decode_pprof},
    /* JSON objects (or arrays) that name their format's keys in their first bytes */
    {SC_FMT_CPUPROFILE, "cpuprofile", {"cpuprofile", NULL}, "V8 .cpuprofile",
        sc_cpuprofile_detect, decode_cpuprofile},
    {SC_FMT_SPEEDSCOPE, "speedscope", {"speedscope", NULL}, "speedscope JSON",
        sc_speedscope_detect, decode_speedscope},
    /* "lines" (Pyroscope's: one stack a line, each one sample) is folded read by ingest.c */
    {SC_FMT_FOLDED, "folded", {"folded", "lines", NULL}, "folded stacks",
        detect_folded, decode_folded},
    {SC_FMT_PERF, "perf_script", {"perf_script", NULL}, "perf script",
        detect_perf, decode_perf},
    /* (last, for the lists' order: its magic "PERFILE2" is no pprof, whose field 10 would be
     * a varint, no JSON, and its NUL bytes no text) */
    {SC_FMT_PERFDATA, "perf_data", {"perf_data", NULL}, "perf.data",
        sc_perfdata_detect, decode_perfdata},
    /* (after the text ones all the same: its header's "FLR\0" has NUL bytes, which no
     * text takes, and no pprof or JSON starts with "F") */
    {SC_FMT_JFR, "jfr", {"jfr", NULL}, "JFR", sc_jfr_detect, decode_jfr},
    /* gperftools' binary CPU profile and the text profiles of tcmalloc, old Go and Java: by
     * their header (the binary's words, the text's first line); text_kind leaves Go's text
     * to it */
    {SC_FMT_LEGACY, "legacy", {"legacy", NULL}, "legacy pprof profiles",
        sc_legacy_detect, decode_legacy},
};
/* clang-format on */
const size_t sc_nformats = sizeof sc_formats / sizeof sc_formats[0];

const struct sc_format_def *sc_format_get(enum sc_format f)
{
    for (size_t i = 0; i < sc_nformats; i++)
        if (sc_formats[i].id == f)
            return &sc_formats[i];
    return NULL;
}

const struct sc_format_def *sc_format_by_ingest_name(const char *name)
{
    for (size_t i = 0; name && i < sc_nformats; i++)
        for (const char *const *a = sc_formats[i].ingest; *a; a++)
            if (!strcmp(*a, name))
                return &sc_formats[i];
    return NULL;
}

const char *sc_format_name(enum sc_format f)
{
    const struct sc_format_def *d = sc_format_get(f);
    return d ? d->name : "unknown";
}

enum sc_format sc_detect_format(const void *buf, size_t n)
{
    for (size_t i = 0; i < sc_nformats; i++)
        if (sc_formats[i].detect && sc_formats[i].detect(buf, n))
            return sc_formats[i].id;
    return SC_FMT_UNKNOWN;
}

const char *sc_format_list(enum sc_format_list what, char *buf, size_t cap)
{
    size_t len = 0, total = 0, k = 0;
    for (size_t i = 0; i < sc_nformats; i++)
        total += what == SC_FMT_LIST_DESC && sc_formats[i].detect;
    if (cap)
        buf[0] = 0;
    for (size_t i = 0; i < sc_nformats; i++) {
        const struct sc_format_def *d = &sc_formats[i];
        const char *const one[] = {d->desc, NULL};
        const char *const *names = what == SC_FMT_LIST_INGEST ? d->ingest : d->detect ? one : NULL;
        for (; names && *names; names++, k++) {
            const char *sep = k == 0                                       ? ""
                              : what == SC_FMT_LIST_DESC && k + 1 == total ? " or "
                                                                           : ", ";
            if (len + 1 >= cap)
                return buf; /* cut short */
            int w = snprintf(buf + len, cap - len, "%s%s", sep, *names);
            if (w > 0)
                len += (size_t)w;
        }
    }
    return buf;
}

int sc_format_refuse(const void *buf, size_t n, char *err)
{
    (void)buf;
    (void)n;
    char list[512];
    return sc_errf(err, SC_EFORMAT, "unrecognized format (expected %s)",
                   sc_format_list(SC_FMT_LIST_DESC, list, sizeof list));
}
