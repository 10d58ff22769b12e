/* test_timespec.c - query times (unix, RFC 3339, now-1h) and durations with known answers. */
#include "t.h"

#include "model/error.h"
#include "model/timespec.h"

#define S 1000000000LL
/* 2026-11-30T04:05:06Z */
#define T0 1796011506LL

static const int64_t now = 1800000000LL * S + 123;

static int64_t tp(const char *s)
{
    int64_t v = -777;
    char err[SC_ERR_LEN];
    if (sc_time_parse(s, now, &v, err)) {
        fprintf(stderr, "time '%s': %s\n", s, err);
        return -777;
    }
    return v;
}

static const char *time_err(const char *s)
{
    static char err[SC_ERR_LEN];
    int64_t v = 42;
    err[0] = 0;
    if (sc_time_parse(s, now, &v, err) == 0)
        return "(parsed)";
    return v == 42 ? err : "(output changed on error)";
}

static int64_t dp(const char *s)
{
    int64_t v = -777;
    char err[SC_ERR_LEN];
    if (sc_duration_parse(s, &v, err)) {
        fprintf(stderr, "duration '%s': %s\n", s, err);
        return -777;
    }
    return v;
}

static const char *dur_err(const char *s)
{
    static char err[SC_ERR_LEN];
    int64_t v;
    err[0] = 0;
    return sc_duration_parse(s, &v, err) == 0 ? "(parsed)" : err;
}

static void test_unix(void)
{
    T_EQ_INT(tp("1796011506"), T0 * S);
    T_EQ_INT(tp("1796011506.5"), T0 * S + 500000000);
    T_EQ_INT(tp("1796011506.123456789"), T0 * S + 123456789);
    T_EQ_INT(tp("1796011506.1234567891"), T0 * S + 123456789); /* beyond ns: truncated */
    T_EQ_INT(tp("1796011506123"), T0 * S + 123000000);         /* 13 digits: ms */
    T_EQ_INT(tp("1796011506123456"), T0 * S + 123456000);      /* 16 digits: us */
    T_EQ_INT(tp("1796011506123456789"), T0 * S + 123456789);   /* 19 digits: ns */
    T_EQ_INT(tp("0"), 0);
    T_EQ_INT(tp("9223372036"), 9223372036LL * S); /* the last second int64 ns can hold */
    T_EQ_STR(time_err("99999999999"), "bad time '99999999999': out of range (years 1678 to 2262)");
    /* year 2500 in seconds once wrapped to 1915 */
    T_EQ_STR(time_err("16725225600"), "bad time '16725225600': out of range (years 1678 to 2262)");
    T_EQ_INT(tp("100000000000"), 100000000000LL * 1000000);
    T_EQ_INT(tp("9223372036854775807"), INT64_MAX);
    T_EQ_STR(time_err("9223372036854775808"),
             "bad time '9223372036854775808': out of range (years 1678 to 2262)");
    T_EQ_STR(time_err("99999999999999999999999"), "bad time '99999999999999999999999': expected "
                                                  "unix seconds or milliseconds, RFC 3339 "
                                                  "(2006-01-02T15:04:05Z) or now-<duration>");
}

static void test_now(void)
{
    T_EQ_INT(tp("now"), now);
    T_EQ_INT(tp("now-1h"), now - 3600 * S);
    T_EQ_INT(tp("now-30m"), now - 1800 * S);
    T_EQ_INT(tp("now+5s"), now + 5 * S);
    T_EQ_INT(tp("now-1h30m"), now - 5400 * S);
    T_EQ_INT(tp("now-500ms"), now - 500000000);
    T_EQ_INT(tp("now-7d"), now - 7 * 86400 * S);
    T_EQ_INT(tp("now-2w"), now - 14 * 86400 * S);
    T_EQ_STR(time_err("now-"), "bad time 'now-': duration empty");
    T_EQ_STR(time_err("now-1x"),
             "bad time 'now-1x': duration unknown unit 'x' (use ms, s, m, h, d, w)");
    T_EQ_STR(time_err("nowish"),
             "bad time 'nowish': expected now, now-<duration> or now+<duration>");
    int64_t v;
    char err[SC_ERR_LEN];
    T_EQ_INT(sc_time_parse("now-1h", INT64_MIN + 5, &v, err), SC_EINVAL);
    T_EQ_STR(err, "bad time 'now-1h': out of range (years 1678 to 2262)");
}

static void test_rfc3339(void)
{
    T_EQ_INT(tp("2026-11-30T04:05:06Z"), T0 * S);
    T_EQ_INT(tp("2026-11-30t04:05:06z"), T0 * S);
    T_EQ_INT(tp("2026-11-30 04:05:06Z"), T0 * S);
    T_EQ_INT(tp("2026-11-30T04:05:06.25Z"), T0 * S + 250000000);
    T_EQ_INT(tp("2026-11-30T04:05:06.123456789Z"), T0 * S + 123456789);
    T_EQ_INT(tp("2026-11-30T04:05:06.1234567899Z"), T0 * S + 123456789);
    T_EQ_INT(tp("2026-11-30T06:05:06+02:00"), T0 * S);
    T_EQ_INT(tp("2026-11-29T23:35:06-04:30"), T0 * S);
    T_EQ_INT(tp("2026-11-30"), (T0 - 4 * 3600 - 5 * 60 - 6) * S);
    T_EQ_INT(tp("1970-01-01T00:00:00Z"), 0);
    T_EQ_INT(tp("1969-12-31T23:59:59Z"), -S);
    T_EQ_INT(tp("2000-02-29T00:00:00Z"), 951782400LL * S); /* leap day, 400-year rule */
    T_EQ_INT(tp("2262-04-11T23:47:16Z"), 9223372036LL * S);
    T_EQ_INT(tp("2262-04-11T23:47:16.854775807Z"), INT64_MAX);
    T_EQ_STR(time_err("2262-04-11T23:47:16.854775808Z"),
             "bad time '2262-04-11T23:47:16.854775808Z': out of range (years 1678 to 2262)");
    T_EQ_INT(tp("1678-01-01T00:00:00Z"), -9214560000LL * S);
    T_EQ_STR(time_err("2026-11-30T04:05:06"),
             "bad time '2026-11-30T04:05:06': missing time zone (Z or +hh:mm)");
    T_EQ_STR(time_err("2026-13-01"), "bad time '2026-13-01': month 13 out of range");
    T_EQ_STR(time_err("2026-02-29"), "bad time '2026-02-29': day 29 out of range");
    T_EQ_STR(time_err("2100-02-29T00:00:00Z"), "bad time '2100-02-29T00:00:00Z': day 29 out of "
                                               "range");
    T_EQ_STR(time_err("2026-11-30T24:00:00Z"),
             "bad time '2026-11-30T24:00:00Z': time of day out of range");
    T_EQ_STR(time_err("2026-11-30T04:05:60Z"),
             "bad time '2026-11-30T04:05:60Z': time of day out of range");
    T_EQ_STR(time_err("2026-11-30T04:05Z"),
             "bad time '2026-11-30T04:05Z': expected a time as THH:MM:SS after the date");
    T_EQ_STR(time_err("2026-11-30T04:05:06.Z"),
             "bad time '2026-11-30T04:05:06.Z': expected digits after '.'");
    T_EQ_STR(time_err("2026-11-30T04:05:06+2:00"), "bad time '2026-11-30T04:05:06+2:00': bad "
                                                   "time zone offset (expected +hh:mm or -hh:mm)");
    T_EQ_STR(time_err("2026-11-30T04:05:06Zx"),
             "bad time '2026-11-30T04:05:06Zx': unexpected text after the time");
    T_EQ_STR(time_err("2026-1-30"), "bad time '2026-1-30': expected a date as YYYY-MM-DD");
    T_EQ_STR(time_err("2263-01-01T00:00:00Z"),
             "bad time '2263-01-01T00:00:00Z': out of range (years 1678 to 2262)");
    T_EQ_STR(time_err("yesterday"),
             "bad time 'yesterday': expected unix seconds or milliseconds, RFC 3339 "
             "(2006-01-02T15:04:05Z) or now-<duration>");
    T_EQ_STR(time_err(""), "bad time '': expected unix seconds or milliseconds, RFC 3339 "
                           "(2006-01-02T15:04:05Z) or now-<duration>");
    T_EQ_STR(time_err("-5"), "bad time '-5': expected unix seconds or milliseconds, RFC 3339 "
                             "(2006-01-02T15:04:05Z) or now-<duration>");
    T_EQ_STR(time_err("17e8"), "bad time '17e8': expected unix seconds or milliseconds, RFC 3339 "
                               "(2006-01-02T15:04:05Z) or now-<duration>");
}

static void test_durations(void)
{
    T_EQ_INT(dp("15s"), 15 * S);
    T_EQ_INT(dp("1m30s"), 90 * S);
    T_EQ_INT(dp("30s1m"), 90 * S);
    T_EQ_INT(dp("10m"), 600 * S);
    T_EQ_INT(dp("1h"), 3600 * S);
    T_EQ_INT(dp("30d"), 30 * 86400 * S);
    T_EQ_INT(dp("2w"), 14 * 86400 * S);
    T_EQ_INT(dp("1y"), 365 * 86400 * S);
    T_EQ_INT(dp("500ms"), 500000000);
    T_EQ_INT(dp("1s500ms"), 1500000000);
    T_EQ_INT(dp("250us"), 250000);
    T_EQ_INT(dp("250\xc2\xb5s"), 250000);
    T_EQ_INT(dp("7ns"), 7);
    T_EQ_INT(dp("1.5h"), 5400 * S);
    T_EQ_INT(dp(".5s"), 500000000);
    T_EQ_INT(dp("90"), 90 * S);
    T_EQ_INT(dp("0.25"), 250000000);
    T_EQ_INT(dp("0"), 0);
    T_EQ_INT(dp("1h2m3s4ms5us6ns"), 3723 * S + 4005006);
    T_EQ_INT(dp("292y"), 292LL * 365 * 86400 * S);
    T_EQ_STR(dur_err("293y"), "bad duration '293y': too long");
    T_EQ_STR(dur_err("99999999999999999999s"), "bad duration '99999999999999999999s': too long");
    T_EQ_STR(dur_err(""), "bad duration '': empty");
    T_EQ_STR(dur_err("1x"), "bad duration '1x': unknown unit 'x' (use ms, s, m, h, d, w)");
    T_EQ_STR(dur_err("1h 2m"), "bad duration '1h 2m': expected a number at offset 2");
    T_EQ_STR(dur_err("-1h"), "bad duration '-1h': expected a number at offset 0");
    T_EQ_STR(dur_err("h"), "bad duration 'h': expected a number at offset 0");
    T_EQ_STR(dur_err("1m30"), "bad duration '1m30': missing unit after '30' (use ms, s, m, h, d, "
                              "w)");
    T_EQ_STR(dur_err("."), "bad duration '.': expected a number at offset 0");
    int64_t v;
    T_EQ_INT(sc_duration_parse("293y", &v, NULL), SC_ELIMIT);
    T_EQ_INT(sc_duration_parse(NULL, &v, NULL), SC_EINVAL);
}

int main(void)
{
    T_RUN(test_unix);
    T_RUN(test_now);
    T_RUN(test_rfc3339);
    T_RUN(test_durations);
    return t_done();
}
