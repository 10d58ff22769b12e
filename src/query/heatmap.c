/* heatmap.c - FlameScope's sub-second heatmap on exact integer nanoseconds. */
#include "query/heatmap.h"
#include "model/clock.h"
#include "model/error.h"
#include "model/json.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

static int64_t floor_div(int64_t a, int64_t b)
{
    int64_t q = a / b;
    if ((a % b != 0) && ((a < 0) != (b < 0)))
        q--;
    return q;
}

int sc_heatmap_init(struct sc_heatmap *h, uint32_t rows, uint32_t max_cols, char *err)
{
    memset(h, 0, sizeof *h);
    if (rows == 0)
        rows = SC_HEATMAP_DEFAULT_ROWS;
    if (rows > SC_HEATMAP_MAX_ROWS)
        return sc_errf(err, SC_EINVAL, "%u rows: at most %d", rows, SC_HEATMAP_MAX_ROWS);
    if (max_cols == 0 || max_cols > SC_HEATMAP_MAX_COLS)
        max_cols = SC_HEATMAP_MAX_COLS;
    if (max_cols > SC_HEATMAP_MAX_CELLS / rows)
        max_cols = SC_HEATMAP_MAX_CELLS / rows;
    h->rows = rows;
    h->limit_cols = max_cols;
    return 0;
}

/* Makes counts cover second sec (within [lo_sec, hi_sec], already checked against the
 * limit), growing mostly upwards: streams usually come in time order. */
static int cover(struct sc_heatmap *h, int64_t sec)
{
    if (h->counts && sec >= h->base_sec && sec - h->base_sec < (int64_t)h->cap_cols)
        return 0;
    int64_t lo = h->lo_sec, hi = h->hi_sec;
    uint64_t need = (uint64_t)(hi - lo) + 1, cap = (uint64_t)h->cap_cols * 2;
    if (cap < 16)
        cap = 16;
    if (cap < need)
        cap = need;
    if (cap > h->limit_cols)
        cap = h->limit_cols;
    uint32_t *nc = calloc(cap * h->rows, sizeof *nc);
    if (!nc)
        return SC_ENOMEM;
    for (uint32_t c = 0; h->counts && c < h->cap_cols; c++) {
        int64_t s = h->base_sec + c;
        if (s < lo || s - lo >= (int64_t)cap)
            continue; /* never holds counts: those lie within [lo, hi] */
        memcpy(nc + (size_t)(s - lo) * h->rows, h->counts + (size_t)c * h->rows,
               h->rows * sizeof *nc);
    }
    free(h->counts);
    h->counts = nc;
    h->base_sec = lo;
    h->cap_cols = (uint32_t)cap;
    return 0;
}

int sc_heatmap_add(struct sc_heatmap *h, int64_t t_ns, int idle)
{
    if (h->error)
        return h->error;
    int64_t sec = floor_div(t_ns, SC_NS_PER_S);
    int64_t lo = h->any && h->lo_sec < sec ? h->lo_sec : sec;
    int64_t hi = h->any && h->hi_sec > sec ? h->hi_sec : sec;
    /* seconds fit int64 with room to spare (|t| / 10^9 < 2^34), so hi - lo cannot overflow */
    if ((uint64_t)(hi - lo) >= h->limit_cols)
        return h->error = SC_ELIMIT;
    if (!h->any || t_ns < h->min_ns)
        h->min_ns = t_ns;
    if (!h->any || t_ns > h->max_ns)
        h->max_ns = t_ns;
    h->any = 1;
    h->lo_sec = lo;
    h->hi_sec = hi;
    h->samples++;
    if (idle) {
        h->idle++;
        return 0;
    }
    int rc = cover(h, sec);
    if (rc)
        return h->error = rc;
    int64_t frac = t_ns % SC_NS_PER_S; /* not t - sec * 10^9, which overflows near INT64_MIN */
    if (frac < 0)
        frac += SC_NS_PER_S;
    uint32_t r = (uint32_t)(((int64_t)h->rows * frac) / SC_NS_PER_S);
    h->counts[(size_t)(sec - h->base_sec) * h->rows + r]++;
    return 0;
}

int sc_heatmap_finish(struct sc_heatmap *h, char *err)
{
    if (h->error == SC_ELIMIT)
        return sc_errf(err, SC_ELIMIT,
                       "samples span more than %u seconds, the most one heatmap may show",
                       h->limit_cols);
    if (h->error)
        return sc_errf(err, h->error, "%s", sc_strerror(h->error));
    free(h->values);
    h->values = NULL;
    h->cols = 0;
    h->start_ns = 0;
    if (!h->any)
        return 0;
    h->start_ns = h->min_ns;
    h->cols = (uint32_t)(h->hi_sec - h->lo_sec + 1);
    h->values = calloc((size_t)h->cols * h->rows + 1, sizeof *h->values);
    if (!h->values)
        return sc_errf(err, SC_ENOMEM, "out of memory");
    for (uint32_t c = 0; h->counts && c < h->cap_cols; c++) {
        int64_t s = h->base_sec + c;
        if (s < h->lo_sec || s > h->hi_sec)
            continue;
        memcpy(h->values + (size_t)(s - h->lo_sec) * h->rows, h->counts + (size_t)c * h->rows,
               h->rows * sizeof *h->values);
    }
    return 0;
}

void sc_heatmap_release(struct sc_heatmap *h)
{
    free(h->values);
    free(h->counts);
    memset(h, 0, sizeof *h);
}

/* ---- FlameScope's idle rule ------------------------------------------------------------- */

static int contains(struct sc_str s, const char *w)
{
    size_t n = strlen(w);
    if (s.len < n)
        return 0;
    for (size_t i = 0; i + n <= s.len; i++)
        if (s.ptr[i] == w[0] && memcmp(s.ptr + i, w, n) == 0)
            return 1;
    return 0;
}

static int idle_name(struct sc_str s)
{
    static const char *const words[] = {"cpuidle",
                                        "cpu_idle",
                                        "cpu_bringup_and_idle",
                                        "native_safe_halt",
                                        "xen_hypercall_sched_op",
                                        "xen_hypercall_vcpu_op"};
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
        if (contains(s, words[i]))
            return 1;
    return 0;
}

/* fn_idle caches per function: 0 unknown, 1 not idle, 2 idle. May be NULL. */
static int sample_idle(const struct sc_profile *p, uint32_t si, uint8_t *fn_idle)
{
    const struct sc_sample *s = &p->samples[si];
    struct sc_str comm = {NULL, 0};
    int have = 0;
    for (uint32_t j = 0; j < s->nlabels; j++) {
        const struct sc_label *l = &p->labels[s->label_start + j];
        struct sc_str k = sc_profile_str(p, l->key);
        if (l->str && k.len == 4 && memcmp(k.ptr, "comm", 4) == 0) {
            comm = sc_profile_str(p, l->str);
            have = 1;
            break;
        }
    }
    const uint32_t *locs = p->sample_locs + s->loc_start;
    if (!have && s->nlocs) {
        /* no comm label: perf-style stacks carry the process as the outermost frame */
        const struct sc_location *l = &p->locations[locs[s->nlocs - 1]];
        if (l->nlines) {
            uint32_t fn = sc_location_lines(p, l)[l->nlines - 1].function;
            if (fn)
                comm = sc_function_name(p, fn - 1);
        }
    }
    if (!comm.ptr || !contains(comm, "swapper"))
        return 0;
    for (uint32_t k = 0; k < s->nlocs; k++) {
        const struct sc_location *l = &p->locations[locs[k]];
        const struct sc_line *lines = sc_location_lines(p, l);
        for (uint32_t j = 0; j < l->nlines; j++) {
            uint32_t fn = lines[j].function;
            if (!fn)
                continue;
            uint8_t v = fn_idle ? fn_idle[fn - 1] : 0;
            if (!v) {
                v = idle_name(sc_function_name(p, fn - 1)) ? 2 : 1;
                if (fn_idle)
                    fn_idle[fn - 1] = v;
            }
            if (v == 2)
                return 1;
        }
    }
    return 0;
}

int sc_heatmap_sample_idle(const struct sc_profile *p, uint32_t si)
{
    return si < p->nsamples && sample_idle(p, si, NULL);
}

int sc_heatmap_from_profile(const struct sc_profile *p, uint32_t rows, uint32_t max_cols,
                            struct sc_heatmap *h, char *err)
{
    int rc = sc_heatmap_init(h, rows, max_cols, err);
    if (rc)
        return rc;
    uint8_t *fn_idle = calloc((size_t)p->nfunctions + 1, 1);
    if (!fn_idle)
        return sc_errf(err, SC_ENOMEM, "out of memory");
    for (uint32_t si = 0; si < p->nsamples && !rc; si++)
        if (p->samples[si].time_ns)
            rc = sc_heatmap_add(h, p->samples[si].time_ns, sample_idle(p, si, fn_idle));
    free(fn_idle);
    return sc_heatmap_finish(h, err);
}

/* ---- output and selections ----------------------------------------------------------------- */

static void put_seconds(struct sc_buf *out, int64_t ns)
{
    uint64_t a = ns < 0 ? (uint64_t)0 - (uint64_t)ns : (uint64_t)ns;
    if (ns < 0)
        sc_buf_putc(out, '-');
    sc_buf_put_u64(out, a / SC_NS_PER_S);
    uint64_t frac = a % SC_NS_PER_S;
    if (frac) {
        char d[11];
        int n = 9;
        for (int i = 8; i >= 0; i--) {
            d[i] = (char)('0' + frac % 10);
            frac /= 10;
        }
        while (n > 0 && d[n - 1] == '0')
            n--;
        sc_buf_putc(out, '.');
        sc_buf_append(out, d, (size_t)n);
    }
}

void sc_heatmap_write_json(const struct sc_heatmap *h, struct sc_buf *out)
{
    /* start in exact decimal seconds (to the nanosecond), not ten significant digits */
    struct sc_buf start = SC_BUF_INIT;
    put_seconds(&start, h->start_ns);
    struct sc_json j;
    sc_json_init(&j, out);
    sc_json_obj_begin(&j);
    sc_json_key(&j, "start");
    if (start.oom)
        out->oom = 1;
    else
        sc_json_raw(&j, start.data, start.len);
    sc_buf_release(&start);
    sc_json_kv_u64(&j, "rows", h->rows);
    sc_json_kv_u64(&j, "cols", h->cols);
    sc_json_key(&j, "values");
    sc_json_arr_begin(&j);
    for (uint32_t c = 0; c < h->cols; c++) {
        sc_json_arr_begin(&j);
        const uint32_t *col = h->values + (size_t)c * h->rows;
        for (uint32_t r = 0; r < h->rows; r++)
            sc_json_u64(&j, col[r]);
        sc_json_arr_end(&j);
    }
    sc_json_arr_end(&j);
    sc_json_obj_end(&j);
    sc_buf_putc(out, '\n');
}

/* The first nanosecond offset within a second that falls in row r: the smallest o with
 * rows * o >= r * 10^9. */
static int64_t row_start(uint32_t rows, uint32_t r)
{
    return ((int64_t)r * SC_NS_PER_S + rows - 1) / rows;
}

int sc_heatmap_select(int64_t start_ns, uint32_t rows, uint32_t c0, uint32_t r0, uint32_t c1,
                      uint32_t r1, int64_t *t0_ns, int64_t *t1_ns)
{
    if (rows == 0 || rows > SC_HEATMAP_MAX_ROWS || r0 >= rows || r1 >= rows)
        return SC_EINVAL;
    if (c1 < c0 || (c1 == c0 && r1 < r0)) {
        uint32_t t = c0;
        c0 = c1;
        c1 = t;
        t = r0;
        r0 = r1;
        r1 = t;
    }
    int64_t base = floor_div(start_ns, SC_NS_PER_S), a, b;
    if (__builtin_add_overflow(base, (int64_t)c0, &a) ||
        __builtin_mul_overflow(a, SC_NS_PER_S, &a) ||
        __builtin_add_overflow(a, row_start(rows, r0), &a) ||
        __builtin_add_overflow(base, (int64_t)c1, &b) ||
        __builtin_mul_overflow(b, SC_NS_PER_S, &b) ||
        __builtin_add_overflow(b, row_start(rows, r1 + 1), &b))
        return SC_EINVAL;
    *t0_ns = a;
    *t1_ns = b;
    return 0;
}

int sc_heatmap_parse_seconds(const char *s, int64_t *ns)
{
    int neg = 0;
    if (*s == '-' || *s == '+')
        neg = *s++ == '-';
    uint64_t sec = 0, frac = 0;
    int digits = 0, fd = 0;
    for (; *s >= '0' && *s <= '9'; s++, digits++) {
        if (sec > (uint64_t)INT64_MAX / SC_NS_PER_S / 10)
            return SC_EINVAL;
        sec = sec * 10 + (uint64_t)(*s - '0');
    }
    if (*s == '.') {
        for (s++; *s >= '0' && *s <= '9'; s++, digits++)
            if (fd < 9) {
                frac = frac * 10 + (uint64_t)(*s - '0');
                fd++;
            }
    }
    if (*s || digits == 0)
        return SC_EINVAL;
    for (; fd < 9; fd++)
        frac *= 10;
    if (sec > (uint64_t)INT64_MAX / SC_NS_PER_S || sec * SC_NS_PER_S > (uint64_t)INT64_MAX - frac)
        return SC_EINVAL;
    int64_t v = (int64_t)(sec * SC_NS_PER_S + frac);
    *ns = neg ? -v : v;
    return 0;
}
