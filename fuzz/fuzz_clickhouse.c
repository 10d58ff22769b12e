/* fuzz_clickhouse.c - libFuzzer target: the ClickHouse backend's parsers of its answers. */
#include "fuzz_common.h"

#include "store/clickhouse_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Input: one byte choosing the answer's kind (stacks, frames, timed profiles, counts,
 * strings), then the answer as ClickHouse would send it in RowBinary. Checks: no crash,
 * leak or over-read (ASan); errors are SC_EIO (malformed) with a message; what parses is
 * consistent (every stack's frames inside the table, timed rows within their profile's
 * arrays, counts of whole rows). */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    struct sc_buf ans = SC_BUF_INIT;
    sc_buf_append(&ans, data + 1, size - 1);
    FUZZ_CHECK(!ans.oom);
    char err[SC_ERR_LEN] = "";
    int rc;
    switch (data[0] % 5) {
    case 0:
    case 1: {
        struct ch_stacks t;
        memset(&t, 0, sizeof t);
        sc_arena_init(&t.arena);
        rc = ch_stacks_add_answer(&t, &ans, data[0] % 5, err);
        FUZZ_CHECK(rc == 0 || (rc == SC_EIO && err[0]));
        for (uint32_t i = 0; i < t.nstacks; i++)
            FUZZ_CHECK(t.off[i] + t.len[i] <= t.nfid && sc_map64_get(&t.stack_ix, t.ids[i]));
        for (uint32_t i = 0; i < t.nframes; i++)
            FUZZ_CHECK(t.frames[i].function && t.frames[i].file && t.frames[i].binary);
        ch_stacks_release(&t);
        sc_arena_release(&t.arena);
        break;
    }
    case 2: {
        struct ch_timed *tp = NULL;
        uint32_t n = 0;
        rc = ch_timed_scan(&ans, NULL, &tp, &n, err);
        FUZZ_CHECK(rc == 0 || (rc == SC_EIO && err[0]));
        FUZZ_CHECK(rc == 0 || (tp == NULL && n == 0));
        struct ch_timed_rows rows;
        memset(&rows, 0, sizeof rows);
        for (uint32_t i = 0; i < n; i++) {
            FUZZ_CHECK(tp[i].off <= ans.len);
            FUZZ_CHECK(i == 0 || tp[i - 1].time_ns <= tp[i].time_ns);
            rc = ch_timed_rows(&ans, &tp[i], INT64_MIN, INT64_MAX, &rows, err);
            FUZZ_CHECK(rc == 0 || (rc == SC_EIO && err[0]));
            FUZZ_CHECK(rows.n <= rows.cap && rows.n * 24 <= ans.len);
            for (uint32_t j = 0; j < rows.n; j++)
                FUZZ_CHECK(rows.values[j] != 0);
        }
        ch_timed_rows_release(&rows);
        free(tp);
        break;
    }
    case 3: {
        struct ch_count *c = NULL;
        uint32_t n = 0;
        rc = ch_parse_counts(&ans, &c, &n, err);
        FUZZ_CHECK(rc == 0 || (rc == SC_EIO && err[0]));
        FUZZ_CHECK(rc != 0 || (size_t)n * 40 == ans.len);
        free(c);
        break;
    }
    default: {
        /* a listing: strings to the end */
        struct ch_rd r = {(const uint8_t *)ans.data, (const uint8_t *)ans.data + ans.len, 0};
        size_t total = 0;
        while (r.p < r.end && !r.bad) {
            struct sc_str s = ch_get_str(&r);
            FUZZ_CHECK(r.bad || (s.ptr >= ans.data && s.ptr + s.len <= ans.data + ans.len));
            total += s.len;
        }
        FUZZ_CHECK(total <= ans.len);
        FUZZ_CHECK(r.p <= r.end);
    }
    }
    sc_buf_release(&ans);
    return 0;
}
