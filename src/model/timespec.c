/* timespec.c - parsing query times (unix, RFC 3339, now-1h) and durations (1m30s). */
#include "model/timespec.h"
#include "model/error.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#define NS_PER_S 1000000000LL

/* Inputs are quoted in errors up to this many bytes. */
#define QUOTE_MAX 64

typedef unsigned __int128 u128;

/* A decimal number at s[*i]: integer digits and an optional fraction (.5 alone is fine).
 * The fraction keeps its first 18 digits as frac / 10^fdigits. 0, or -1 when there is no
 * digit or the integer part passes UINT64_MAX. */
static int lex_number(const char *s, size_t n, size_t *i, uint64_t *ip, uint64_t *frac,
                      int *fdigits)
{
    size_t j = *i;
    int any = 0;
    *ip = 0;
    *frac = 0;
    *fdigits = 0;
    while (j < n && s[j] >= '0' && s[j] <= '9') {
        if (*ip > (UINT64_MAX - 9) / 10)
            return -1;
        *ip = *ip * 10 + (uint64_t)(s[j++] - '0');
        any = 1;
    }
    if (j < n && s[j] == '.') {
        j++;
        while (j < n && s[j] >= '0' && s[j] <= '9') {
            if (*fdigits < 18) {
                *frac = *frac * 10 + (uint64_t)(s[j] - '0');
                (*fdigits)++;
            }
            j++;
            any = 1;
        }
    }
    if (!any)
        return -1;
    *i = j;
    return 0;
}

static uint64_t pow10u(int k)
{
    uint64_t p = 1;
    while (k-- > 0)
        p *= 10;
    return p;
}

/* (ip + frac / 10^fdigits) * unit in nanoseconds, fraction truncated; -1 past INT64_MAX. */
static int scale(uint64_t ip, uint64_t frac, int fdigits, uint64_t unit, int64_t *out)
{
    u128 v = (u128)ip * unit + (u128)frac * unit / pow10u(fdigits);
    if (v > (u128)INT64_MAX)
        return -1;
    *out = (int64_t)v;
    return 0;
}

static const struct unit {
    const char *name;
    uint64_t ns;
} units[] = {
    /* longest names first: "ms" before "m" and "s" */
    {"ns", 1},
    {"us", 1000},
    {"\xc2\xb5s", 1000}, /* µs, micro sign */
    {"\xce\xbcs", 1000}, /* μs, Greek mu */
    {"ms", 1000000},
    {"s", NS_PER_S},
    {"m", 60 * NS_PER_S},
    {"h", 3600 * NS_PER_S},
    {"d", 86400 * NS_PER_S},
    {"w", 7 * (86400 * NS_PER_S)},
    {"y", 365 * (86400 * NS_PER_S)},
};

/* Parses s[0..n) as a duration; on error writes "<why>" into why. */
static int duration(const char *s, size_t n, int64_t *out, char *why, size_t whylen)
{
    if (n == 0) {
        snprintf(why, whylen, "empty");
        return SC_EINVAL;
    }
    size_t i = 0;
    uint64_t ip, frac;
    int fd;
    /* a bare number is seconds */
    if (lex_number(s, n, &i, &ip, &frac, &fd) == 0 && i == n) {
        if (scale(ip, frac, fd, NS_PER_S, out)) {
            snprintf(why, whylen, "too long");
            return SC_ELIMIT;
        }
        return 0;
    }
    i = 0;
    int64_t total = 0;
    while (i < n) {
        size_t at = i;
        if (lex_number(s, n, &i, &ip, &frac, &fd)) {
            if (at < n && s[at] >= '0' && s[at] <= '9') {
                snprintf(why, whylen, "too long");
                return SC_ELIMIT;
            }
            snprintf(why, whylen, "expected a number at offset %zu", at);
            return SC_EINVAL;
        }
        const struct unit *u = NULL;
        for (size_t k = 0; k < sizeof units / sizeof units[0]; k++) {
            size_t ul = strlen(units[k].name);
            if (n - i >= ul && memcmp(s + i, units[k].name, ul) == 0) {
                u = &units[k];
                i += ul;
                break;
            }
        }
        if (!u) {
            if (i == n)
                snprintf(why, whylen, "missing unit after '%.*s' (use ms, s, m, h, d, w)",
                         (int)(i - at > 24 ? 24 : i - at), s + at);
            else
                snprintf(why, whylen, "unknown unit '%.*s' (use ms, s, m, h, d, w)",
                         (int)(n - i > 8 ? 8 : n - i), s + i);
            return SC_EINVAL;
        }
        int64_t v;
        if (scale(ip, frac, fd, u->ns, &v) || v > INT64_MAX - total) {
            snprintf(why, whylen, "too long");
            return SC_ELIMIT;
        }
        total += v;
    }
    *out = total;
    return 0;
}

int sc_duration_parse(const char *s, int64_t *out_ns, char *err)
{
    char why[96];
    s = s ? s : "";
    int rc = duration(s, strlen(s), out_ns, why, sizeof why);
    if (rc)
        return sc_errf(err, rc, "bad duration '%.*s': %s", QUOTE_MAX, s, why);
    return 0;
}

/* ---- RFC 3339 ---- */

/* Days from 1970-01-01 to y-m-d in the proleptic Gregorian calendar (Howard Hinnant's
 * days_from_civil). */
static int64_t days_from_civil(int64_t y, unsigned m, unsigned d)
{
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    unsigned yoe = (unsigned)(y - era * 400);
    unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + (int64_t)doe - 719468;
}

static int is_leap(int64_t y)
{
    return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

/* Exactly k digits at s[*i]; -1 otherwise. */
static int fixed(const char *s, size_t n, size_t *i, int k, int *out)
{
    int v = 0;
    for (int j = 0; j < k; j++) {
        if (*i >= n || s[*i] < '0' || s[*i] > '9')
            return -1;
        v = v * 10 + (s[(*i)++] - '0');
    }
    *out = v;
    return 0;
}

static int expect(const char *s, size_t n, size_t *i, const char *any)
{
    if (*i >= n || !strchr(any, s[*i]) || s[*i] == 0)
        return -1;
    (*i)++;
    return 0;
}

static int rfc3339(const char *s, size_t n, int64_t *out, char *why, size_t whylen)
{
    size_t i = 0;
    int y, mo, d, h = 0, mi = 0, se = 0;
    if (fixed(s, n, &i, 4, &y) || expect(s, n, &i, "-") || fixed(s, n, &i, 2, &mo) ||
        expect(s, n, &i, "-") || fixed(s, n, &i, 2, &d)) {
        snprintf(why, whylen, "expected a date as YYYY-MM-DD");
        return -1;
    }
    static const unsigned char mdays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    if (mo < 1 || mo > 12) {
        snprintf(why, whylen, "month %d out of range", mo);
        return -1;
    }
    if (d < 1 || d > mdays[mo - 1] + (mo == 2 && is_leap(y))) {
        snprintf(why, whylen, "day %d out of range", d);
        return -1;
    }
    int64_t frac = 0, off = 0;
    if (i < n) {
        if (expect(s, n, &i, "Tt ") || fixed(s, n, &i, 2, &h) || expect(s, n, &i, ":") ||
            fixed(s, n, &i, 2, &mi) || expect(s, n, &i, ":") || fixed(s, n, &i, 2, &se)) {
            snprintf(why, whylen, "expected a time as THH:MM:SS after the date");
            return -1;
        }
        if (h > 23 || mi > 59 || se > 59) {
            snprintf(why, whylen, "time of day out of range");
            return -1;
        }
        if (i < n && s[i] == '.') {
            i++;
            int k = 0;
            while (i < n && s[i] >= '0' && s[i] <= '9') {
                if (k < 9) {
                    frac = frac * 10 + (s[i] - '0');
                    k++;
                }
                i++;
            }
            if (k == 0) {
                snprintf(why, whylen, "expected digits after '.'");
                return -1;
            }
            while (k++ < 9)
                frac *= 10;
        }
        if (i < n && (s[i] == 'Z' || s[i] == 'z')) {
            i++;
        } else if (i < n && (s[i] == '+' || s[i] == '-')) {
            int sign = s[i++] == '-' ? -1 : 1, oh, om;
            if (fixed(s, n, &i, 2, &oh) || expect(s, n, &i, ":") || fixed(s, n, &i, 2, &om) ||
                oh > 23 || om > 59) {
                snprintf(why, whylen, "bad time zone offset (expected +hh:mm or -hh:mm)");
                return -1;
            }
            off = sign * ((int64_t)oh * 3600 + (int64_t)om * 60);
        } else {
            snprintf(why, whylen, "missing time zone (Z or +hh:mm)");
            return -1;
        }
        if (i != n) {
            snprintf(why, whylen, "unexpected text after the time");
            return -1;
        }
    }
    int64_t secs = days_from_civil(y, (unsigned)mo, (unsigned)d) * 86400 + (int64_t)h * 3600 +
                   (int64_t)mi * 60 + se - off;
    /* int64 nanoseconds span 1677-09-21 to 2262-04-11 */
    int64_t ns;
    if (__builtin_mul_overflow(secs, NS_PER_S, &ns) || __builtin_add_overflow(ns, frac, &ns)) {
        snprintf(why, whylen, "out of range (years 1678 to 2262)");
        return -1;
    }
    *out = ns;
    return 0;
}

int sc_time_parse(const char *s, int64_t now_ns, int64_t *out_ns, char *err)
{
    s = s ? s : "";
    size_t n = strlen(s);
    char why[96];
    if (n >= 3 && memcmp(s, "now", 3) == 0) {
        if (n == 3) {
            *out_ns = now_ns;
            return 0;
        }
        if (s[3] != '-' && s[3] != '+')
            return sc_errf(err, SC_EINVAL,
                           "bad time '%.*s': expected now, now-<duration> or "
                           "now+<duration>",
                           QUOTE_MAX, s);
        int64_t d;
        if (duration(s + 4, n - 4, &d, why, sizeof why))
            return sc_errf(err, SC_EINVAL, "bad time '%.*s': duration %s", QUOTE_MAX, s, why);
        int64_t r;
        if (s[3] == '-' ? __builtin_sub_overflow(now_ns, d, &r)
                        : __builtin_add_overflow(now_ns, d, &r))
            return sc_errf(err, SC_EINVAL, "bad time '%.*s': out of range (years 1678 to 2262)",
                           QUOTE_MAX, s);
        *out_ns = r;
        return 0;
    }
    size_t i = 0;
    uint64_t ip, frac;
    int fd;
    if (n > 0 && s[0] >= '0' && s[0] <= '9' && lex_number(s, n, &i, &ip, &frac, &fd) == 0 &&
        i == n) {
        uint64_t unit = ip < 100000000000ULL         ? NS_PER_S
                        : ip < 100000000000000ULL    ? 1000000
                        : ip < 100000000000000000ULL ? 1000
                                                     : 1;
        if (scale(ip, frac, fd, unit, out_ns))
            return sc_errf(err, SC_EINVAL, "bad time '%.*s': out of range (years 1678 to 2262)",
                           QUOTE_MAX, s);
        return 0;
    }
    if (n >= 5 && s[4] == '-' && s[0] >= '0' && s[0] <= '9') {
        if (rfc3339(s, n, out_ns, why, sizeof why))
            return sc_errf(err, SC_EINVAL, "bad time '%.*s': %s", QUOTE_MAX, s, why);
        return 0;
    }
    return sc_errf(err, SC_EINVAL,
                   "bad time '%.*s': expected unix seconds or milliseconds, RFC 3339 "
                   "(2006-01-02T15:04:05Z) or now-<duration>",
                   QUOTE_MAX, s);
}

char *sc_time_format(int64_t t_ns, char *out, size_t n)
{
    int64_t sec = t_ns / 1000000000LL, ns = t_ns % 1000000000LL;
    if (ns < 0) {
        sec--;
        ns += 1000000000LL;
    }
    time_t tt = (time_t)sec;
    struct tm tm;
    char day[32] = "?";
    if (gmtime_r(&tt, &tm))
        strftime(day, sizeof day, "%Y-%m-%dT%H:%M:%S", &tm);
    if (ns / 1000000)
        snprintf(out, n, "%s.%03dZ", day, (int)(ns / 1000000));
    else
        snprintf(out, n, "%sZ", day);
    return out;
}
