/* test_format.c - the format table: one row per format, names that select one row, and
 * detection and decoding that agree with the rows. */
#include "t.h"

#include "formats/format.h"
#include "formats/input.h"
#include "model/error.h"

/* every id has one row, every row a name, description and decoder; no /ingest name selects
 * two rows; each name selects its own row */
static void test_rows(void)
{
    for (size_t i = 0; i < sc_nformats; i++) {
        const struct sc_format_def *d = &sc_formats[i];
        T_CHECK(d->id != SC_FMT_UNKNOWN);
        T_CHECK(d->name && *d->name && d->desc && *d->desc && d->decode);
        T_CHECK(sc_format_get(d->id) == d);
        T_EQ_STR(sc_format_name(d->id), d->name);
        for (const char *const *a = d->ingest; *a; a++)
            T_CHECK(sc_format_by_ingest_name(*a) == d);
        for (size_t j = 0; j < i; j++)
            T_CHECK(sc_formats[j].id != d->id && strcmp(sc_formats[j].name, d->name));
    }
    T_CHECK(sc_format_get(SC_FMT_UNKNOWN) == NULL);
    T_EQ_STR(sc_format_name(SC_FMT_UNKNOWN), "unknown");
    T_CHECK(sc_format_by_ingest_name("lines") == sc_format_get(SC_FMT_FOLDED));
    T_CHECK(sc_format_by_ingest_name("perf_script") == sc_format_get(SC_FMT_PERF));
    T_CHECK(sc_format_by_ingest_name("nope") == NULL);
    T_CHECK(sc_format_by_ingest_name(NULL) == NULL);
}

/* the lists messages print name every row, in table order */
static void test_lists(void)
{
    char buf[1024];
    const char *l = sc_format_list(SC_FMT_LIST_INGEST, buf, sizeof buf);
    T_CHECK(!strncmp(l, "pprof, ", 7));
    T_CHECK(strstr(l, ", folded, lines, ") != NULL);
    for (size_t i = 0; i < sc_nformats; i++)
        T_CHECK(strstr(l, sc_formats[i].name) != NULL);
    l = sc_format_list(SC_FMT_LIST_DESC, buf, sizeof buf);
    T_CHECK(!strncmp(l, "pprof, ", 7));
    T_CHECK(strstr(l, "folded stacks") && strstr(l, "perf script") && strstr(l, " or "));
    T_CHECK(strstr(l, ", or ") == NULL);
    /* a short buffer is cut, never overrun */
    char small[8];
    memset(small, 'x', sizeof small);
    l = sc_format_list(SC_FMT_LIST_INGEST, small, 6);
    T_CHECK(strlen(l) < 6);
    T_EQ_INT(small[7], 'x');
}

/* detection picks the row the content is; unknown content gets the expected list */
static void test_detect(void)
{
    static const char folded[] = "a;b 3\nc 2\n";
    static const char perf[] = "app 12 1.000: 1 cpu-clock:\n\t 4005d6 f (/bin/app)\n\t 4005e0 main "
                               "(/bin/app)\n\n";
    T_EQ_INT(sc_detect_format(folded, sizeof folded - 1), SC_FMT_FOLDED);
    T_EQ_INT(sc_detect_format(perf, sizeof perf - 1), SC_FMT_PERF);
    T_EQ_INT(sc_detect_format("", 0), SC_FMT_FOLDED);
    T_EQ_INT(sc_detect_format("hello world\n", 12), SC_FMT_UNKNOWN);
    T_EQ_INT(sc_detect_format("goroutine profile: total 3\n", 27), SC_FMT_LEGACY);
    char err[SC_ERR_LEN] = "";
    T_EQ_INT(sc_format_refuse("hello", 5, err), SC_EFORMAT);
    T_CHECK(!strncmp(err, "unrecognized format (expected pprof, ", 37));
    struct sc_input in = {(void *)"hello world\n", 12, SC_INPUT_BORROWED};
    struct sc_profile *p = NULL;
    T_EQ_INT(sc_decode(&in, NULL, &p, err), SC_EFORMAT);
    T_CHECK(p == NULL);
    T_CHECK(!strncmp(err, "unrecognized format", 19));
}

int main(void)
{
    T_RUN(test_rows);
    T_RUN(test_lists);
    T_RUN(test_detect);
    return t_done();
}
