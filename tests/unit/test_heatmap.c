/* test_heatmap.c - heatmap cells at bucket edges, limits, idle rule, JSON, selections. */
#include "t.h"

#include "formats/input.h"
#include "model/error.h"
#include "model/profile.h"
#include "query/heatmap.h"

#include <stdint.h>

#define S 1000000000LL

static uint32_t cell(const struct sc_heatmap *h, uint32_t c, uint32_t r)
{
    return h->values[(size_t)c * h->rows + r];
}

static void test_edges(void)
{
    struct sc_heatmap h;
    char err[SC_ERR_LEN] = "";
    T_EQ_INT(sc_heatmap_init(&h, 50, 0, err), 0);
    /* 20 ms rows: offsets exactly on the edges go up, one nanosecond before stays */
    int64_t ts[] = {10 * S, 10 * S + 19999999,  10 * S + 20000000, 10 * S + 999999999,
                    11 * S, 12 * S + 980000000, 12 * S + 979999999};
    for (size_t i = 0; i < sizeof ts / sizeof ts[0]; i++)
        T_EQ_INT(sc_heatmap_add(&h, ts[i], 0), 0);
    T_EQ_INT(sc_heatmap_finish(&h, err), 0);
    T_EQ_INT(h.start_ns, 10 * S);
    T_EQ_INT(h.cols, 3);
    T_EQ_INT(h.rows, 50);
    T_EQ_INT(cell(&h, 0, 0), 2);
    T_EQ_INT(cell(&h, 0, 1), 1);
    T_EQ_INT(cell(&h, 0, 49), 1);
    T_EQ_INT(cell(&h, 1, 0), 1);
    T_EQ_INT(cell(&h, 2, 49), 1);
    T_EQ_INT(cell(&h, 2, 48), 1);
    uint64_t sum = 0;
    for (uint32_t i = 0; i < h.cols * h.rows; i++)
        sum += h.values[i];
    T_EQ_INT(sum, 7);
    sc_heatmap_release(&h);

    /* rows that do not divide a second: 3 rows edge at 333333333.33 ns */
    T_EQ_INT(sc_heatmap_init(&h, 3, 0, err), 0);
    sc_heatmap_add(&h, 333333333, 0);
    sc_heatmap_add(&h, 333333334, 0);
    sc_heatmap_add(&h, 666666666, 0);
    sc_heatmap_add(&h, 666666667, 0);
    T_EQ_INT(sc_heatmap_finish(&h, err), 0);
    T_EQ_INT(cell(&h, 0, 0), 1);
    T_EQ_INT(cell(&h, 0, 1), 2);
    T_EQ_INT(cell(&h, 0, 2), 1);
    sc_heatmap_release(&h);
}

/* idle samples: not counted, but they set the start and the width */
static void test_idle_range(void)
{
    struct sc_heatmap h;
    char err[SC_ERR_LEN] = "";
    T_EQ_INT(sc_heatmap_init(&h, 10, 0, err), 0);
    sc_heatmap_add(&h, 20 * S + 300000000, 0);
    sc_heatmap_add(&h, 17 * S + 500000000, 1); /* earlier, idle, out of order */
    sc_heatmap_add(&h, 15 * S + 100000000, 0); /* earlier still: the map grows downwards */
    sc_heatmap_add(&h, 25 * S, 1);
    T_EQ_INT(sc_heatmap_finish(&h, err), 0);
    T_EQ_INT(h.start_ns, 15 * S + 100000000);
    T_EQ_INT(h.cols, 11);
    T_EQ_INT(h.samples, 4);
    T_EQ_INT(h.idle, 2);
    T_EQ_INT(cell(&h, 0, 1), 1);
    T_EQ_INT(cell(&h, 5, 3), 1);
    uint64_t sum = 0;
    for (uint32_t i = 0; i < h.cols * h.rows; i++)
        sum += h.values[i];
    T_EQ_INT(sum, 2);
    struct sc_buf b = SC_BUF_INIT;
    sc_heatmap_write_json(&h, &b);
    T_CHECK(b.data && !strncmp(b.data,
                               "{\"start\":15.1,\"rows\":10,\"cols\":11,\"values\":"
                               "[[0,1,0,0,0,0,0,0,0,0],[0,0,0,0,0,0,0,0,0,0],",
                               86));
    sc_buf_release(&b);
    sc_heatmap_release(&h);

    /* only idle samples: a range without counts */
    T_EQ_INT(sc_heatmap_init(&h, 2, 0, err), 0);
    sc_heatmap_add(&h, 5 * S, 1);
    sc_heatmap_add(&h, 6 * S + 1, 1);
    T_EQ_INT(sc_heatmap_finish(&h, err), 0);
    T_EQ_INT(h.cols, 2);
    T_CHECK(h.values && cell(&h, 1, 0) == 0);
    sc_heatmap_release(&h);

    /* none at all */
    T_EQ_INT(sc_heatmap_init(&h, 0, 0, err), 0);
    T_EQ_INT(h.rows, 50);
    T_EQ_INT(sc_heatmap_finish(&h, err), 0);
    sc_heatmap_write_json(&h, &b);
    T_EQ_STR(b.data, "{\"start\":0,\"rows\":50,\"cols\":0,\"values\":[]}\n");
    sc_buf_release(&b);
    sc_heatmap_release(&h);
}

static void test_negative(void)
{
    struct sc_heatmap h;
    char err[SC_ERR_LEN] = "";
    T_EQ_INT(sc_heatmap_init(&h, 50, 0, err), 0);
    sc_heatmap_add(&h, -1, 0); /* floor(-1 ns) = -1 s, offset 999999999 ns */
    sc_heatmap_add(&h, 0, 0);
    sc_heatmap_add(&h, INT64_MIN, 1); /* far away: over the limit */
    T_EQ_INT(sc_heatmap_finish(&h, err), SC_ELIMIT);
    sc_heatmap_release(&h);
    T_EQ_INT(sc_heatmap_init(&h, 50, 0, err), 0);
    sc_heatmap_add(&h, -1, 0);
    sc_heatmap_add(&h, 0, 0);
    T_EQ_INT(sc_heatmap_finish(&h, err), 0);
    T_EQ_INT(h.cols, 2);
    T_EQ_INT(cell(&h, 0, 49), 1);
    T_EQ_INT(cell(&h, 1, 0), 1);
    struct sc_buf b = SC_BUF_INIT;
    sc_heatmap_write_json(&h, &b);
    T_CHECK(b.data && !strncmp(b.data, "{\"start\":-0.000000001,", 22));
    sc_buf_release(&b);
    sc_heatmap_release(&h);
}

/* a year of timestamps is refused without allocating for it */
static void test_limits(void)
{
    struct sc_heatmap h;
    char err[SC_ERR_LEN] = "";
    T_EQ_INT(sc_heatmap_init(&h, 50, 0, err), 0);
    T_EQ_INT(h.limit_cols, SC_HEATMAP_MAX_COLS);
    T_EQ_INT(sc_heatmap_add(&h, 1000 * S, 0), 0);
    T_EQ_INT(sc_heatmap_add(&h, (1000 + 365LL * 86400) * S, 0), SC_ELIMIT);
    T_CHECK(h.cap_cols < 1000);                           /* nothing big was allocated */
    T_EQ_INT(sc_heatmap_add(&h, 1001 * S, 0), SC_ELIMIT); /* sticky */
    T_EQ_INT(sc_heatmap_finish(&h, err), SC_ELIMIT);
    T_CHECK(strstr(err, "more than 100000 seconds") != NULL);
    sc_heatmap_release(&h);

    /* exactly max_cols is fine, one more is not */
    T_EQ_INT(sc_heatmap_init(&h, 50, 3, err), 0);
    T_EQ_INT(sc_heatmap_add(&h, 7 * S, 0), 0);
    T_EQ_INT(sc_heatmap_add(&h, 9 * S + 999999999, 0), 0);
    T_EQ_INT(sc_heatmap_add(&h, 10 * S, 1), SC_ELIMIT);
    sc_heatmap_release(&h);
    T_EQ_INT(sc_heatmap_init(&h, 50, 3, err), 0);
    T_EQ_INT(sc_heatmap_add(&h, 9 * S, 0), 0);
    T_EQ_INT(sc_heatmap_add(&h, 6 * S, 0), SC_ELIMIT); /* downwards too */
    sc_heatmap_release(&h);

    /* many rows lower the column limit to keep cells bounded */
    T_EQ_INT(sc_heatmap_init(&h, 1000, 0, err), 0);
    T_EQ_INT(h.limit_cols, SC_HEATMAP_MAX_CELLS / 1000);
    sc_heatmap_release(&h);
    T_EQ_INT(sc_heatmap_init(&h, 1001, 0, err), SC_EINVAL);
    sc_heatmap_release(&h);
}

/* a selection covers exactly the samples whose cells lie between its two cells */
static void test_select(void)
{
    int64_t t0, t1;
    T_EQ_INT(sc_heatmap_select(759 * S + 337518000, 50, 0, 0, 0, 0, &t0, &t1), 0);
    T_EQ_INT(t0, 759 * S);
    T_EQ_INT(t1, 759 * S + 20000000);
    /* in either order, across seconds */
    T_EQ_INT(sc_heatmap_select(759 * S, 50, 2, 10, 1, 49, &t0, &t1), 0);
    T_EQ_INT(t0, 760 * S + 980000000);
    T_EQ_INT(t1, 761 * S + 220000000);
    T_EQ_INT(sc_heatmap_select(759 * S, 50, 0, 50, 0, 0, &t0, &t1), SC_EINVAL);
    T_EQ_INT(sc_heatmap_select(INT64_MAX - 5, 50, 0, 0, 9, 49, &t0, &t1), SC_EINVAL);
    /* brute force against the cell rule, with rows that do not divide a second */
    uint32_t rows = 7;
    int64_t start = 3 * S + 123;
    uint64_t x = 88172645463325252ull;
    for (int i = 0; i < 2000; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        uint32_t c0 = (uint32_t)(x % 3), r0 = (uint32_t)((x >> 8) % rows);
        uint32_t c1 = (uint32_t)((x >> 16) % 3), r1 = (uint32_t)((x >> 24) % rows);
        int64_t t = 3 * S + (int64_t)((x >> 32) % (uint64_t)(3 * S));
        T_EQ_INT(sc_heatmap_select(start, rows, c0, r0, c1, r1, &t0, &t1), 0);
        int64_t c = t / S - 3, r = rows * (t % S) / S;
        uint64_t k = (uint64_t)c * rows + (uint64_t)r;
        uint64_t k0 = (uint64_t)c0 * rows + r0, k1 = (uint64_t)c1 * rows + r1;
        if (k0 > k1) {
            uint64_t tmp = k0;
            k0 = k1;
            k1 = tmp;
        }
        int inside = k >= k0 && k <= k1;
        if ((t >= t0 && t < t1) != inside) {
            T_CHECK(!"selection and cells disagree");
            break;
        }
    }
}

static void test_parse(void)
{
    int64_t ns;
    T_EQ_INT(sc_heatmap_parse_seconds("759.337518", &ns), 0);
    T_EQ_INT(ns, 759337518000LL);
    T_EQ_INT(sc_heatmap_parse_seconds("-1.5", &ns), 0);
    T_EQ_INT(ns, -1500000000LL);
    T_EQ_INT(sc_heatmap_parse_seconds("12", &ns), 0);
    T_EQ_INT(ns, 12 * S);
    T_EQ_INT(sc_heatmap_parse_seconds("0.1234567899", &ns), 0);
    T_EQ_INT(ns, 123456789);
    T_EQ_INT(sc_heatmap_parse_seconds(".5", &ns), 0);
    T_EQ_INT(ns, 500000000);
    T_EQ_INT(sc_heatmap_parse_seconds("", &ns), SC_EINVAL);
    T_EQ_INT(sc_heatmap_parse_seconds("1.2.3", &ns), SC_EINVAL);
    T_EQ_INT(sc_heatmap_parse_seconds("abc", &ns), SC_EINVAL);
    T_EQ_INT(sc_heatmap_parse_seconds("99999999999999999999", &ns), SC_EINVAL);
    T_EQ_INT(sc_heatmap_parse_seconds("9223372036.854775807", &ns), 0);
    T_EQ_INT(ns, INT64_MAX);
    T_EQ_INT(sc_heatmap_parse_seconds("9223372036.854775808", &ns), SC_EINVAL);
    T_EQ_INT(sc_heatmap_parse_seconds("9223372037", &ns), SC_EINVAL);
}

/* FlameScope's idle rule on a profile: comm "swapper" and an idle function on the stack */
static void test_idle_rule(void)
{
    struct sc_profile *p = sc_profile_new();
    sc_profile_add_sample_type(p, "samples", "count");
    const char *names[] = {
        "cpuidle_enter_state",   "do_idle", "pv_native_safe_halt", "swapper", "xz_main",
        "xen_hypercall_sched_op"};
    uint32_t loc[6];
    for (int i = 0; i < 6; i++) {
        uint32_t s = (uint32_t)sc_profile_intern(p, names[i], strlen(names[i]));
        loc[i] =
            (uint32_t)sc_profile_add_simple_location(p, (uint32_t)sc_profile_add_function(p, s, 0));
    }
    uint32_t kcomm = (uint32_t)sc_profile_intern(p, "comm", 4);
    uint32_t swapper = (uint32_t)sc_profile_intern(p, "swapper", 7);
    uint32_t xz = (uint32_t)sc_profile_intern(p, "xz", 2);
    int64_t v = 1;
    struct {
        uint32_t locs[3], n, comm;
        int idle;
    } cases[] = {
        {{0, 1, 3}, 3, swapper, 1}, /* cpuidle_enter_state */
        {{1, 3}, 2, swapper, 0},    /* do_idle is not on FlameScope's list */
        {{2, 1, 3}, 3, swapper, 1}, /* pv_native_safe_halt contains native_safe_halt */
        {{2, 4}, 2, xz, 0},         /* not the idle task */
        {{5, 3}, 2, 0, 1},          /* no comm label: the outermost frame is "swapper" */
        {{5, 4}, 2, 0, 0},
    };
    for (int i = 0; i < 6; i++) {
        uint32_t locs[3];
        for (uint32_t k = 0; k < cases[i].n; k++)
            locs[k] = loc[cases[i].locs[k]];
        sc_profile_add_sample(p, locs, cases[i].n, &v, (10 + i) * S);
        if (cases[i].comm)
            sc_profile_add_label(p, kcomm, cases[i].comm, 0, 0);
    }
    for (uint32_t i = 0; i < 6; i++)
        T_EQ_INT(sc_heatmap_sample_idle(p, i), cases[i].idle);
    struct sc_heatmap h;
    char err[SC_ERR_LEN] = "";
    T_EQ_INT(sc_heatmap_from_profile(p, 1, 0, &h, err), 0);
    T_EQ_INT(h.cols, 6);
    T_EQ_INT(h.idle, 3);
    for (uint32_t c = 0; c < 6; c++)
        T_EQ_INT(cell(&h, c, 0), !cases[c].idle);
    sc_heatmap_release(&h);
    sc_profile_free(p);
}

/* the shared perf trace: every sample has a time; idle ones are the swapper's */
static void test_real(void)
{
    const char *path = t_testdata("perf/system-wide-go-xz.perf.txt");
    if (!path) {
        fprintf(stderr, "  (../shared/testdata absent: real-trace checks skipped)\n");
        return;
    }
    struct sc_profile *p;
    char err[SC_ERR_LEN] = "";
    struct sc_decode_opts d = {0};
    T_EQ_INT(sc_load(path, &d, &p, err), 0);
    struct sc_heatmap h;
    T_EQ_INT(sc_heatmap_from_profile(p, 50, 0, &h, err), 0);
    T_EQ_INT(h.samples, p->nsamples);
    T_EQ_INT(h.start_ns, 759337518000LL);
    T_EQ_INT(h.cols, 3);
    uint64_t sum = 0;
    for (uint32_t i = 0; i < h.cols * h.rows; i++)
        sum += h.values[i];
    T_EQ_INT(sum + h.idle, h.samples);
    T_CHECK(h.idle > 1000 && h.idle < 1100); /* 1100 swapper samples, a few busy */
    sc_heatmap_release(&h);
    sc_profile_free(p);
}

int main(void)
{
    T_RUN(test_edges);
    T_RUN(test_idle_range);
    T_RUN(test_negative);
    T_RUN(test_limits);
    T_RUN(test_select);
    T_RUN(test_parse);
    T_RUN(test_idle_rule);
    T_RUN(test_real);
    return t_done();
}
