/* clickhouse_read.c - the ClickHouse backend's reads: ranges over rollups, rows, stacks. */
#include "store/clickhouse_int.h"
#include "model/error.h"

#include <stdlib.h>
#include <string.h>

/* ---- ranges ---- */

/* Whole buckets of levels[0] seconds inside [a, b), the rest cut by the smaller levels. */
static void cut(int64_t a, int64_t b, const int64_t *levels, int nl, struct ch_piece *out,
                uint32_t *n)
{
    if (a >= b)
        return;
    if (nl == 0) {
        out[(*n)++] = (struct ch_piece){a, b, 0};
        return;
    }
    int64_t w = levels[0] * CH_NS;
    int64_t x0 = a % w == 0 ? a : a > INT64_MAX - w ? INT64_MAX : (a / w + 1) * w;
    int64_t x1 = b / w * w;
    if (x0 < x1) {
        cut(a, x0, levels + 1, nl - 1, out, n);
        out[(*n)++] = (struct ch_piece){x0, x1, levels[0]};
        cut(x1, b, levels + 1, nl - 1, out, n);
    } else {
        cut(a, b, levels + 1, nl - 1, out, n);
    }
}

uint32_t ch_pieces(int64_t from, int64_t until, int64_t max_res, struct ch_piece *out)
{
    static const int64_t all[] = {SC_ROLLUP_DAY, SC_ROLLUP_HOUR, SC_ROLLUP_SHORT};
    int first = 0;
    while (first < 3 && (max_res <= 0 || all[first] > max_res))
        first++;
    uint32_t n = 0;
    cut(from < 0 ? 0 : from, until, all + first, 3 - first, out, &n);
    return n;
}

int ch_pieces_have(const struct ch_piece *p, uint32_t n, int rollup)
{
    for (uint32_t i = 0; i < n; i++)
        if ((p[i].res != 0) == (rollup != 0))
            return 1;
    return 0;
}

void ch_sql_raw_cond(struct sc_buf *b, const struct ch_piece *p, uint32_t n)
{
    int any = 0;
    sc_buf_putc(b, '(');
    for (uint32_t i = 0; i < n; i++) {
        if (p[i].res)
            continue;
        sc_buf_printf(b, "%s(time_ns >= %lld AND time_ns < %lld)", any++ ? " OR " : "",
                      (long long)p[i].from, (long long)p[i].until);
    }
    sc_buf_puts(b, any ? ")" : "0)");
}

void ch_sql_rollup_cond(struct sc_buf *b, const struct ch_piece *p, uint32_t n)
{
    int any = 0;
    sc_buf_putc(b, '(');
    for (uint32_t i = 0; i < n; i++) {
        if (!p[i].res)
            continue;
        sc_buf_printf(b, "%s(res = %lld AND bucket >= %lld AND bucket < %lld)", any++ ? " OR " : "",
                      (long long)p[i].res, (long long)(p[i].from / CH_NS),
                      (long long)(p[i].until / CH_NS));
    }
    sc_buf_puts(b, any ? ")" : "0)");
}

/* The index of the step of width w that holds time t, for steps starting at f: the SQL
 * expression for column col (ns), as intDiv(col - f', w) + m with f' > -w so that col - f'
 * never overflows (col >= 0 and col >= f). */
static void sql_step(struct sc_buf *b, const char *col, int64_t f, int64_t w)
{
    int64_t m = 0;
    if (f < 0) {
        m = -((-(f + 1)) / w) - 1; /* floor(f / w) for f < 0 */
        f -= m * w;                /* now in [0, w) */
        if (f > 0) {
            f -= w;
            m++;
        }
    }
    sc_buf_printf(b, "toInt64(intDiv(%s - toInt64(%lld), toInt64(%lld)) + toInt64(%lld))", col,
                  (long long)f, (long long)w, (long long)m);
}

/* The selection every read shares: tenant, type and series. */
static void sql_where(struct ch_store *s, struct sc_buf *b, const struct sc_store_query *q,
                      const struct sc_buf *ids)
{
    (void)s;
    /* a NULL tenant: the caller checked the series are the tenant's (series ids differ
     * between tenants anyway) */
    sc_buf_puts(b, " WHERE 1");
    if (q->tenant) {
        sc_buf_puts(b, " AND tenant = ");
        ch_sql_str(b, q->tenant, strlen(q->tenant));
    }
    sc_buf_puts(b, " AND type = ");
    ch_sql_str(b, q->type, strlen(q->type));
    sc_buf_puts(b, " AND series IN ");
    sc_buf_append(b, ids->data, ids->len);
}

/* The first instant a read may see: retention's cutoff, and not before 1970. */
static int64_t read_from(struct ch_store *s, int64_t from)
{
    int64_t cut = ch_cutoff(s);
    if (from < cut)
        from = cut;
    return from < 0 ? 0 : from;
}

/* ---- answers ---- */

int ch_parse_counts(const struct sc_buf *a, struct ch_count **out, uint32_t *n, char *err)
{
    size_t rows = a->len / 40;
    *out = NULL;
    *n = 0;
    if (a->len % 40 || rows > UINT32_MAX)
        return sc_errf(err, SC_EIO, "clickhouse: a malformed answer (%zu bytes)", a->len);
    struct ch_count *c = malloc((rows + 1) * sizeof *c);
    if (!c)
        return sc_errf(err, SC_ENOMEM, "out of memory");
    struct ch_rd r = {(const uint8_t *)a->data, (const uint8_t *)a->data + a->len, 0};
    for (size_t i = 0; i < rows; i++) {
        c[i].k = (int64_t)ch_get_u64(&r);
        c[i].series = ch_get_u64(&r);
        c[i].profiles = ch_get_u64(&r);
        c[i].duration = (int64_t)ch_get_u64(&r);
        c[i].blocks = ch_get_u64(&r);
    }
    *out = c;
    *n = (uint32_t)rows;
    return 0;
}

/* A group of rows: one series (or all, summed) in one bucket. */
struct group {
    uint32_t index; /* into q->series */
    uint64_t series;
    int64_t captures, covered; /* store_int.h */
    uint32_t start, n;         /* rows of the values answer */
};

static int cmp_group(const void *a, const void *b)
{
    const struct group *x = a, *y = b;
    return (x->index > y->index) - (x->index < y->index);
}

/* ---- aggregated reads ---- */

struct agg {
    struct ch_store *s;
    const struct sc_store_read *r;
    struct sc_buf ids;
    struct sc_map64 index; /* series id -> index into q->series */
    int64_t lo, hi;        /* what may be read: [lo, hi) */
    int64_t width, b0;     /* buckets: width (0: one) from b0 */
    struct ch_piece pieces[CH_MAX_PIECES];
    uint32_t npieces;
    int by_series;
};

/* SELECT k, series, <what> FROM raw ... UNION ALL SELECT ... FROM rollups: the two halves of
 * a read over the pieces, each grouped where the data lives. */
static void sql_union(struct agg *x, struct sc_buf *b, const char *raw_cols, const char *roll_cols,
                      const char *array_join, const char *group)
{
    const struct sc_store_query *q = x->r->q;
    int have_raw = ch_pieces_have(x->pieces, x->npieces, 0);
    int have_roll = ch_pieces_have(x->pieces, x->npieces, 1);
    for (int half = 0; half < 2; half++) {
        if (half == 0 ? !have_raw : !have_roll)
            continue;
        if (half == 1 && have_raw)
            sc_buf_puts(b, " UNION ALL ");
        sc_buf_puts(b, "SELECT ");
        /* constants materialized: a Distributed read of one shard that is the local server
         * meets ClickHouse 18.16's "Cannot convert column k because it is non constant in
         * source stream but must be constant in result" when a UNION's streams disagree on
         * what is constant */
        if (x->width)
            sql_step(b, half ? "(bucket * 1000000000)" : "time_ns", x->b0, x->width);
        else
            sc_buf_puts(b, "materialize(toInt64(0))");
        sc_buf_puts(b, " AS k, ");
        sc_buf_puts(b, x->by_series ? "series AS sr, " : "materialize(toUInt64(0)) AS sr, ");
        sc_buf_puts(b, half ? roll_cols : raw_cols);
        sc_buf_puts(b, " FROM ");
        ch_sql_table(x->s, b, half ? "rollup" : "profiles");
        /* the same rows from raw profiles and rollups: "ARRAY JOIN stacks AS s, values AS x" */
        if (array_join)
            sc_buf_puts(b, half ? " ARRAY JOIN stackMap.stack AS s, stackMap.value AS x"
                                : " ARRAY JOIN stacks AS s, values AS x");
        sql_where(x->s, b, q, &x->ids);
        sc_buf_puts(b, " AND ");
        if (half)
            ch_sql_rollup_cond(b, x->pieces, x->npieces);
        else
            ch_sql_raw_cond(b, x->pieces, x->npieces);
        sc_buf_printf(b, " GROUP BY k, sr%s", group);
    }
}

/* The captures (store_int.h) of each series in each bucket and the time they cover, from
 * the raw profiles (the rollups' view adds a row per profile, so they count profiles), and
 * the blocks the read decodes: raw profiles in raw pieces, rollup rows in rollup pieces. */
static void sql_counts(struct agg *x, struct sc_buf *sql)
{
    sc_buf_puts(sql, "SELECT k, sr, sum(n), sum(d), sum(b) FROM (SELECT k, sr, toUInt64(count()) "
                     "AS n, toInt64(sum(d1)) AS d, toUInt64(sum(b1)) AS b FROM (SELECT ");
    if (x->width)
        sql_step(sql, "time_ns", x->b0, x->width);
    else
        sc_buf_puts(sql, "materialize(toInt64(0))");
    sc_buf_puts(sql, " AS k, series AS sr, time_ns, max(duration_ns) AS d1, countIf(");
    ch_sql_raw_cond(sql, x->pieces, x->npieces);
    sc_buf_puts(sql, ") AS b1 FROM ");
    ch_sql_table(x->s, sql, "profiles");
    sql_where(x->s, sql, x->r->q, &x->ids);
    sc_buf_printf(sql,
                  " AND time_ns >= %lld AND time_ns < %lld GROUP BY k, sr, time_ns) GROUP BY "
                  "k, sr",
                  (long long)x->lo, (long long)x->hi);
    if (ch_pieces_have(x->pieces, x->npieces, 1)) {
        struct agg y = *x;
        y.npieces = 0;
        for (uint32_t i = 0; i < x->npieces; i++)
            if (x->pieces[i].res)
                y.pieces[y.npieces++] = x->pieces[i];
        sc_buf_puts(sql, " UNION ALL ");
        sql_union(&y, sql, NULL,
                  "materialize(toUInt64(0)) AS n, materialize(toInt64(0)) AS d, "
                  "toUInt64(uniqExact(res, bucket)) AS b",
                  NULL, "");
    }
    sc_buf_puts(sql, ") GROUP BY k, sr ORDER BY k, sr FORMAT RowBinary");
}

static int read_agg(struct agg *x, sc_store_rows_cb cb, void *ctx, char *err)
{
    struct ch_store *s = x->s;
    const struct sc_store_query *q = x->r->q;
    struct sc_buf sql = SC_BUF_INIT, ans = SC_BUF_INIT;
    struct ch_count *cr = NULL;
    uint32_t nc = 0;
    int by_series = x->by_series;
    /* the captures (and the time they cover) of each series in each bucket, always per
     * series, and the blocks to decode */
    x->by_series = 1;
    sql_counts(x, &sql);
    int rc = sql.oom ? sc_errf(err, SC_ENOMEM, "out of memory")
                     : ch_query(s, sql.data, s->max_answer, &ans, err);
    if (rc == 0)
        rc = ch_parse_counts(&ans, &cr, &nc, err);
    uint64_t blocks = 0;
    for (uint32_t i = 0; rc == 0 && i < nc; i++)
        blocks += cr[i].blocks;
    if (rc == 0 && s->base.opts.max_read_blocks && blocks > s->base.opts.max_read_blocks)
        rc = sc_store_over_budget(&s->base, err);
    /* the rows: per stack, per series unless the caller sums them */
    x->by_series = by_series;
    if (rc == 0 && nc) {
        sql.len = 0;
        sc_buf_puts(&sql, "SELECT k, sr, st, sum(v) FROM (");
        sql_union(x, &sql, "s AS st, sum(x) AS v", "s AS st, sum(x) AS v", "", ", st");
        sc_buf_puts(&sql, ") GROUP BY k, sr, st ORDER BY k, sr FORMAT RowBinary");
        rc = sql.oom ? sc_errf(err, SC_ENOMEM, "out of memory")
                     : ch_query(s, sql.data, s->max_answer, &ans, err);
    }
    size_t nv = rc == 0 && nc ? ans.len / 32 : 0;
    if (rc == 0 && nc && (ans.len % 32 || nv > UINT32_MAX))
        rc = sc_errf(err, SC_EIO, "clickhouse: a malformed answer (%zu bytes)", ans.len);
    uint64_t *stk = rc == 0 ? malloc((nv + 1) * sizeof *stk) : NULL;
    int64_t *val = rc == 0 ? malloc((nv + 1) * sizeof *val) : NULL;
    int64_t *vk = rc == 0 ? malloc((nv + 1) * sizeof *vk) : NULL;
    uint64_t *vs = rc == 0 ? malloc((nv + 1) * sizeof *vs) : NULL;
    struct group *g = rc == 0 ? malloc(((size_t)nc + 1) * sizeof *g) : NULL;
    if (rc == 0 && (!stk || !val || !vk || !vs || !g))
        rc = sc_errf(err, SC_ENOMEM, "out of memory");
    if (rc == 0) {
        struct ch_rd rd = {(const uint8_t *)ans.data, (const uint8_t *)ans.data + ans.len, 0};
        for (size_t i = 0; i < nv; i++) {
            vk[i] = (int64_t)ch_get_u64(&rd);
            vs[i] = ch_get_u64(&rd);
            stk[i] = ch_get_u64(&rd);
            val[i] = (int64_t)ch_get_u64(&rd);
        }
    }
    /* bucket by bucket: the counts' groups, their rows found by walking both answers in
     * (k, series) order, then called back in q->series order */
    uint32_t ci = 0;
    size_t vi = 0;
    while (rc == 0 && ci < nc) {
        int64_t k = cr[ci].k;
        uint32_t ng = 0;
        for (; ci < nc && cr[ci].k == k; ci++) {
            uint32_t *ix = sc_map64_get(&x->index, cr[ci].series);
            if (!ix)
                continue; /* not asked for: cannot happen, but never trust an index */
            struct group *gg = &g[ng++];
            gg->index = *ix;
            gg->series = cr[ci].series;
            gg->captures = (int64_t)cr[ci].profiles;
            gg->covered = cr[ci].duration;
            gg->start = gg->n = 0;
            if (!by_series)
                continue;
            while (vi < nv && (vk[vi] < k || (vk[vi] == k && vs[vi] < cr[ci].series)))
                vi++;
            gg->start = (uint32_t)vi;
            while (vi < nv && vk[vi] == k && vs[vi] == cr[ci].series)
                vi++;
            gg->n = (uint32_t)(vi - gg->start);
        }
        int64_t from = q->from_ns, until = q->until_ns;
        if (x->width) {
            int64_t b = x->b0 + k * x->width;
            if (b > from)
                from = b;
            if (b + x->width < until)
                until = b + x->width;
        }
        if (!by_series && ng) {
            /* one callback with every series summed */
            struct sc_store_rows out = {UINT32_MAX, from, until, 0, 0, 0, NULL, NULL, NULL, ng};
            for (uint32_t i = 0; i < ng; i++) {
                out.captures += g[i].captures;
                out.covered_ns += g[i].covered;
            }
            while (vi < nv && vk[vi] < k)
                vi++;
            size_t start = vi;
            while (vi < nv && vk[vi] == k)
                vi++;
            out.n = (uint32_t)(vi - start);
            out.stacks = stk + start;
            out.values = val + start;
            rc = cb(ctx, &out);
            continue;
        }
        qsort(g, ng, sizeof *g, cmp_group);
        for (uint32_t i = 0; i < ng && rc == 0; i++) {
            struct sc_store_rows out = {g[i].index,
                                        from,
                                        until,
                                        g[i].captures,
                                        g[i].covered,
                                        g[i].n,
                                        stk + g[i].start,
                                        val + g[i].start,
                                        NULL,
                                        1};
            rc = cb(ctx, &out);
        }
    }
    free(stk);
    free(val);
    free(vk);
    free(vs);
    free(g);
    free(cr);
    sc_buf_release(&sql);
    sc_buf_release(&ans);
    return rc;
}

/* ---- timed reads ---- */

static int cmp_timed(const void *a, const void *b)
{
    const struct ch_timed *x = a, *y = b;
    if (x->index != y->index)
        return x->index < y->index ? -1 : 1;
    if (x->time_ns != y->time_ns)
        return x->time_ns < y->time_ns ? -1 : 1;
    return (x->order > y->order) - (x->order < y->order);
}

int ch_timed_scan(const struct sc_buf *ans, const struct sc_map64 *index, struct ch_timed **out,
                  uint32_t *n, char *err)
{
    struct ch_timed *tp = NULL;
    uint32_t np = 0, cap = 0;
    int rc = 0;
    struct ch_rd rd = {(const uint8_t *)ans->data, (const uint8_t *)ans->data + ans->len, 0};
    while (rd.p < rd.end && !rd.bad) {
        if (sc_grow_array(&tp, &cap, (uint64_t)np + 1, sizeof *tp)) {
            rc = sc_errf(err, SC_ENOMEM, "out of memory");
            break;
        }
        struct ch_timed *t = &tp[np];
        uint64_t series = ch_get_u64(&rd);
        t->time_ns = (int64_t)ch_get_u64(&rd);
        t->duration = (int64_t)ch_get_u64(&rd);
        t->off = (size_t)(rd.p - (const uint8_t *)ans->data);
        t->order = np;
        for (int a = 0; a < 3; a++) {
            uint64_t k = ch_get_len(&rd, 8);
            rd.p += k * 8;
        }
        const uint32_t *ix = index ? sc_map64_get(index, series) : NULL;
        if (!index || ix) {
            t->index = ix ? *ix : 0;
            np++;
        }
    }
    if (rc == 0 && rd.bad)
        rc = sc_errf(err, SC_EIO, "clickhouse: a malformed answer (%zu bytes)", ans->len);
    if (rc == 0 && np > 1)
        qsort(tp, np, sizeof *tp, cmp_timed);
    if (rc) {
        free(tp);
        tp = NULL;
        np = 0;
    }
    *out = tp;
    *n = np;
    return rc;
}

int ch_timed_rows(const struct sc_buf *ans, const struct ch_timed *t, int64_t from, int64_t until,
                  struct ch_timed_rows *out, char *err)
{
    struct ch_rd a = {(const uint8_t *)ans->data + t->off, (const uint8_t *)ans->data + ans->len,
                      0};
    uint64_t ns = ch_get_len(&a, 8);
    const uint8_t *ps = a.p;
    a.p += ns * 8;
    uint64_t nv = ch_get_len(&a, 8);
    const uint8_t *pv = a.p;
    a.p += nv * 8;
    uint64_t nt = ch_get_len(&a, 8);
    const uint8_t *pt = a.p;
    out->n = 0;
    if (a.bad || ns != nv || ns != nt || ns > UINT32_MAX)
        return sc_errf(err, SC_EIO, "clickhouse: a timed profile with uneven arrays");
    const struct sc_grow_part cols[] = {SC_GROW_PART(out->stacks), SC_GROW_PART(out->values),
                                        SC_GROW_PART(out->times)};
    if (sc_grow_arrays(&out->cap, ns, -1, cols, 3))
        return sc_errf(err, SC_ENOMEM, "out of memory");
    for (uint64_t j = 0; j < ns; j++) {
        struct ch_rd e = {pt + 8 * j, pt + 8 * j + 8, 0};
        int64_t tm = (int64_t)ch_get_u64(&e);
        e = (struct ch_rd){pv + 8 * j, pv + 8 * j + 8, 0};
        int64_t v = (int64_t)ch_get_u64(&e);
        if (!v || tm < from || tm >= until)
            continue;
        e = (struct ch_rd){ps + 8 * j, ps + 8 * j + 8, 0};
        out->stacks[out->n] = ch_get_u64(&e);
        out->values[out->n] = v;
        out->times[out->n++] = tm;
    }
    return 0;
}

void ch_timed_rows_release(struct ch_timed_rows *r)
{
    free(r->stacks);
    free(r->values);
    free(r->times);
    memset(r, 0, sizeof *r);
}

static int read_timed(struct agg *x, sc_store_rows_cb cb, void *ctx, char *err)
{
    struct ch_store *s = x->s;
    const struct sc_store_query *q = x->r->q;
    struct sc_buf sql = SC_BUF_INIT, ans = SC_BUF_INIT;
    /* a profile's samples may start before its own time; a little slack */
    int64_t lo = q->from_ns > INT64_MIN + 3600 * CH_NS ? q->from_ns - 3600 * CH_NS : INT64_MIN;
    int64_t cut = ch_cutoff(s);
    if (lo < cut)
        lo = cut;
    sc_buf_puts(&sql, "SELECT series, time_ns, duration_ns, stacks, values, times FROM ");
    ch_sql_table(s, &sql, "profiles");
    sql_where(s, &sql, q, &x->ids);
    sc_buf_printf(&sql, " AND timed = 1 AND time_ns >= %lld AND time_ns < %lld FORMAT RowBinary",
                  (long long)lo, (long long)q->until_ns);
    int rc = sql.oom ? sc_errf(err, SC_ENOMEM, "out of memory")
                     : ch_query(s, sql.data, s->max_answer, &ans, err);
    struct ch_timed *tp = NULL;
    uint32_t np = 0;
    if (rc == 0)
        rc = ch_timed_scan(&ans, &x->index, &tp, &np, err);
    struct ch_timed_rows rows;
    memset(&rows, 0, sizeof rows);
    for (uint32_t i = 0; i < np && rc == 0; i++) {
        rc = ch_timed_rows(&ans, &tp[i], q->from_ns, q->until_ns, &rows, err);
        if (rc == 0 && rows.n) {
            struct sc_store_rows out = {tp[i].index,    q->from_ns, q->until_ns, 1,
                                        tp[i].duration, rows.n,     rows.stacks, rows.values,
                                        rows.times,     1};
            rc = cb(ctx, &out);
        }
    }
    ch_timed_rows_release(&rows);
    free(tp);
    sc_buf_release(&sql);
    sc_buf_release(&ans);
    return rc;
}

/* The largest rollup resolution (s) that divides w ns; 0 when none. */
static int64_t res_dividing(int64_t w)
{
    static const int64_t all[] = {SC_ROLLUP_DAY, SC_ROLLUP_HOUR, SC_ROLLUP_SHORT};
    for (int i = 0; i < 3; i++)
        if (w % (all[i] * CH_NS) == 0)
            return all[i];
    return 0;
}

static int agg_init(struct agg *x, struct ch_store *s, const struct sc_store_read *r, char *err)
{
    memset(x, 0, sizeof *x);
    x->s = s;
    x->r = r;
    const struct sc_store_query *q = r->q;
    ch_sql_ids(&x->ids, q->series, q->nseries);
    for (uint32_t i = 0; i < q->nseries; i++)
        if (!sc_map64_upsert(&x->index, q->series[i], i, NULL))
            x->ids.oom = 1;
    if (x->ids.oom)
        return sc_errf(err, SC_ENOMEM, "out of memory");
    x->lo = read_from(s, q->from_ns);
    x->hi = q->until_ns;
    return 0;
}

static void agg_release(struct agg *x)
{
    sc_buf_release(&x->ids);
    sc_map64_release(&x->index);
}

/* The start of a read that lists: a known type (*gauge its kind) and the selection in x.
 * 0 to go on (release x after), 1 when there is nothing to read, or SC_E*. */
static int begin(struct ch_store *s, const struct sc_store_read *r, struct agg *x, int *gauge,
                 char *err)
{
    char unit[64];
    int rc = ch_type_lookup(s, r->q->type, unit, gauge, err);
    if (rc == SC_ENOTFOUND || r->q->nseries == 0)
        return 1;
    if (rc)
        return rc;
    rc = agg_init(x, s, r, err);
    if (rc == 0 && x->lo < x->hi)
        return 0;
    agg_release(x);
    return rc ? rc : 1;
}

int ch_read(struct sc_store *st, const struct sc_store_read *r, sc_store_rows_cb cb, void *ctx,
            char *err)
{
    struct ch_store *s = (struct ch_store *)st;
    ch_wait_inserted(s);
    const struct sc_store_query *q = r->q;
    char unit[64];
    int gauge;
    int rc = ch_type_lookup(s, q->type, unit, &gauge, err);
    if (rc == SC_ENOTFOUND)
        return sc_errf(err, SC_ENOTFOUND, "no profiles of type '%s'", q->type ? q->type : "");
    if (rc)
        return rc;
    if (r->bucket_ns < 0 || (r->bucket_ns > 0 && r->bucket_ns < CH_NS))
        return sc_errf(err, SC_EINVAL, "bad bucket width");
    if (q->nseries == 0 || q->until_ns <= q->from_ns)
        return 0;
    struct agg x;
    rc = agg_init(&x, s, r, err);
    if (rc == 0 && x.lo < x.hi) {
        if (r->timed) {
            rc = read_timed(&x, cb, ctx, err);
        } else {
            x.width = r->bucket_ns;
            x.b0 = x.width ? sc_floor_div(q->from_ns, x.width) * x.width : 0;
            /* rollups serve a bucket only when it is made of whole rollup buckets */
            int64_t max_res = q->raw_only ? 0 : x.width ? res_dividing(x.width) : SC_ROLLUP_DAY;
            x.npieces = ch_pieces(x.lo, x.hi, max_res, x.pieces);
            x.by_series = !r->sum_series || gauge;
            rc = read_agg(&x, cb, ctx, err);
        }
    }
    agg_release(&x);
    return rc;
}

/* ---- spans and timelines ---- */

int ch_span(struct sc_store *st, const struct sc_store_query *q, int64_t *first_ns,
            int64_t *last_ns, char *err)
{
    struct ch_store *s = (struct ch_store *)st;
    ch_wait_inserted(s);
    *first_ns = *last_ns = 0;
    if (q->nseries == 0)
        return SC_ENOTFOUND;
    struct sc_store_read r = {q, 0, 0, 0};
    struct agg x;
    int rc = agg_init(&x, s, &r, err);
    if (rc || x.lo >= x.hi) {
        agg_release(&x);
        return rc ? rc : SC_ENOTFOUND;
    }
    /* the ten-minute buckets of the first and last profiles from the counts, then their
     * times from the raw rows of those two buckets and the ragged ends */
    x.npieces = ch_pieces(x.lo, x.hi, SC_ROLLUP_SHORT, x.pieces);
    struct sc_buf sql = SC_BUF_INIT, ans = SC_BUF_INIT;
    int64_t bl = 0, bh = 0;
    uint64_t nb = 0;
    if (ch_pieces_have(x.pieces, x.npieces, 1)) {
        sc_buf_puts(&sql, "SELECT min(bucket), max(bucket), count() FROM ");
        ch_sql_table(s, &sql, "rollup");
        sql_where(s, &sql, q, &x.ids);
        sc_buf_puts(&sql, " AND ");
        ch_sql_rollup_cond(&sql, x.pieces, x.npieces);
        sc_buf_puts(&sql, " FORMAT RowBinary");
        rc = sql.oom ? sc_errf(err, SC_ENOMEM, "out of memory")
                     : ch_query(s, sql.data, CH_SMALL_ANSWER, &ans, err);
        struct ch_rd rd = {(const uint8_t *)ans.data, (const uint8_t *)ans.data + ans.len, 0};
        bl = (int64_t)ch_get_u64(&rd);
        bh = (int64_t)ch_get_u64(&rd);
        nb = ch_get_u64(&rd);
        if (rc == 0 && rd.bad)
            rc = sc_errf(err, SC_EIO, "clickhouse: a malformed answer");
    }
    if (rc == 0) {
        struct ch_piece p[CH_MAX_PIECES + 2];
        uint32_t n = 0;
        for (uint32_t i = 0; i < x.npieces; i++)
            if (!x.pieces[i].res)
                p[n++] = x.pieces[i];
        if (nb) {
            p[n++] = (struct ch_piece){bl * CH_NS, (bl + SC_ROLLUP_SHORT) * CH_NS, 0};
            p[n++] = (struct ch_piece){bh * CH_NS, (bh + SC_ROLLUP_SHORT) * CH_NS, 0};
        }
        sql.len = 0;
        sc_buf_puts(&sql, "SELECT min(time_ns), max(time_ns), count() FROM ");
        ch_sql_table(s, &sql, "profiles");
        sql_where(s, &sql, q, &x.ids);
        sc_buf_puts(&sql, " AND ");
        ch_sql_raw_cond(&sql, p, n);
        sc_buf_puts(&sql, " FORMAT RowBinary");
        rc = sql.oom ? sc_errf(err, SC_ENOMEM, "out of memory")
                     : ch_query(s, sql.data, CH_SMALL_ANSWER, &ans, err);
        struct ch_rd rd = {(const uint8_t *)ans.data, (const uint8_t *)ans.data + ans.len, 0};
        *first_ns = (int64_t)ch_get_u64(&rd);
        *last_ns = (int64_t)ch_get_u64(&rd);
        uint64_t found = ch_get_u64(&rd);
        if (rc == 0 && rd.bad)
            rc = sc_errf(err, SC_EIO, "clickhouse: a malformed answer");
        if (rc == 0 && !found)
            rc = SC_ENOTFOUND;
    }
    sc_buf_release(&sql);
    sc_buf_release(&ans);
    agg_release(&x);
    return rc;
}

int ch_timeline(struct sc_store *st, const struct sc_store_query *q, struct sc_store_cells *cells,
                char *err)
{
    struct ch_store *s = (struct ch_store *)st;
    ch_wait_inserted(s);
    struct sc_store_query tq = *q;
    int64_t until = sc_add_sat(cells->from_ns, sc_mul_sat(cells->step_ns, cells->nsteps));
    tq.from_ns = cells->from_ns;
    tq.until_ns = until < q->until_ns ? until : q->until_ns;
    struct sc_store_read r = {&tq, 0, 0, 0};
    struct agg x;
    int rc = begin(s, &r, &x, &cells->gauge, err);
    if (rc)
        return rc > 0 ? 0 : rc;
    /* one row per capture (store_int.h), spread over the steps in C by the rule every
     * backend shares; as many rows as the budget allows the SQLite store (a totals row is
     * about a sixty-fourth of a block) */
    uint64_t max = s->base.opts.max_read_blocks * 64;
    struct sc_buf sql = SC_BUF_INIT, ans = SC_BUF_INIT;
    int64_t lo = read_from(s, sc_sub_sat(x.lo, SC_STORE_TIMELINE_LOOKBACK_NS));
    sc_buf_puts(&sql, "SELECT series, time_ns, toInt64(max(duration_ns)), "
                      "toInt64(sumIf(total, timed = 0)) FROM ");
    ch_sql_table(s, &sql, "profiles");
    sql_where(s, &sql, &tq, &x.ids);
    sc_buf_printf(&sql, " AND time_ns >= %lld AND time_ns < %lld GROUP BY series, time_ns",
                  (long long)lo, (long long)x.hi);
    if (max)
        sc_buf_printf(&sql, " LIMIT %llu", (unsigned long long)max + 1);
    sc_buf_puts(&sql, " FORMAT RowBinary");
    rc = sql.oom ? sc_errf(err, SC_ENOMEM, "out of memory")
                 : ch_query(s, sql.data, s->max_answer, &ans, err);
    if (rc == 0 && ans.len % 32)
        rc = sc_errf(err, SC_EIO, "clickhouse: a malformed answer (%zu bytes)", ans.len);
    if (rc == 0 && max && ans.len / 32 > max)
        rc = sc_store_over_budget(&s->base, err);
    struct ch_rd rd = {(const uint8_t *)ans.data, (const uint8_t *)ans.data + ans.len, 0};
    for (size_t n = 0; rc == 0 && n < ans.len / 32; n++) {
        uint64_t series = ch_get_u64(&rd);
        int64_t t = (int64_t)ch_get_u64(&rd), d = (int64_t)ch_get_u64(&rd);
        int64_t v = (int64_t)ch_get_u64(&rd);
        uint32_t *ix = sc_map64_get(&x.index, series);
        if (ix)
            sc_store_cells_add(cells, *ix, t, d, v);
    }
    /* timed profiles' values by their samples' times, summed per step where they live */
    if (rc == 0) {
        sql.len = 0;
        sc_buf_puts(&sql, "SELECT series, ");
        sql_step(&sql, "tm", cells->from_ns, cells->step_ns);
        sc_buf_puts(&sql, " AS k, toInt64(sum(v)) FROM ");
        ch_sql_table(s, &sql, "profiles");
        sc_buf_puts(&sql, " ARRAY JOIN times AS tm, values AS v");
        sql_where(s, &sql, &tq, &x.ids);
        sc_buf_printf(&sql,
                      " AND timed = 1 AND time_ns >= %lld AND time_ns < %lld AND tm >= %lld AND "
                      "tm < %lld GROUP BY series, k FORMAT RowBinary",
                      (long long)lo, (long long)x.hi, (long long)x.lo, (long long)tq.until_ns);
        rc = sql.oom ? sc_errf(err, SC_ENOMEM, "out of memory")
                     : ch_query(s, sql.data, s->max_answer, &ans, err);
        if (rc == 0 && ans.len % 24)
            rc = sc_errf(err, SC_EIO, "clickhouse: a malformed answer (%zu bytes)", ans.len);
        struct ch_rd r2 = {(const uint8_t *)ans.data, (const uint8_t *)ans.data + ans.len, 0};
        for (size_t n = 0; rc == 0 && n < ans.len / 24; n++) {
            uint64_t series = ch_get_u64(&r2);
            int64_t k = (int64_t)ch_get_u64(&r2), v = (int64_t)ch_get_u64(&r2);
            uint32_t *ix = sc_map64_get(&x.index, series);
            if (ix && k >= 0 && k < (int64_t)cells->nsteps)
                cells->value[(size_t)*ix * cells->nsteps + (size_t)k] += (double)v;
        }
    }
    sc_buf_release(&sql);
    sc_buf_release(&ans);
    agg_release(&x);
    return rc;
}

/* ---- listing stored profiles ---- */

struct listed {
    uint32_t index, order;
    struct sc_store_profile_info pi;
};

static int cmp_listed(const void *a, const void *b)
{
    const struct listed *x = a, *y = b;
    if (x->index != y->index)
        return x->index < y->index ? -1 : 1;
    if (x->pi.time_ns != y->pi.time_ns)
        return x->pi.time_ns < y->pi.time_ns ? -1 : 1;
    return (x->order > y->order) - (x->order < y->order);
}

int ch_profiles(struct sc_store *st, const struct sc_store_query *q, sc_store_profile_cb cb,
                void *ctx, char *err)
{
    struct ch_store *s = (struct ch_store *)st;
    ch_wait_inserted(s);
    int gauge;
    struct sc_store_read r = {q, 0, 0, 0};
    struct agg x;
    int rc = begin(s, &r, &x, &gauge, err);
    if (rc)
        return rc > 0 ? 0 : rc;
    struct sc_buf sql = SC_BUF_INIT, ans = SC_BUF_INIT;
    sc_buf_puts(&sql, "SELECT series, time_ns, duration_ns, total, nsamples, timed FROM ");
    ch_sql_table(s, &sql, "profiles");
    sql_where(s, &sql, q, &x.ids);
    sc_buf_printf(&sql, " AND time_ns >= %lld AND time_ns < %lld FORMAT RowBinary", (long long)x.lo,
                  (long long)x.hi);
    rc = sql.oom ? sc_errf(err, SC_ENOMEM, "out of memory")
                 : ch_query(s, sql.data, s->max_answer, &ans, err);
    size_t n = ans.len / 37;
    if (rc == 0 && ans.len % 37)
        rc = sc_errf(err, SC_EIO, "clickhouse: a malformed answer (%zu bytes)", ans.len);
    struct listed *v = rc == 0 ? malloc((n + 1) * sizeof *v) : NULL;
    if (rc == 0 && !v)
        rc = sc_errf(err, SC_ENOMEM, "out of memory");
    size_t m = 0;
    struct ch_rd rd = {(const uint8_t *)ans.data, (const uint8_t *)ans.data + ans.len, 0};
    for (size_t i = 0; rc == 0 && i < n; i++) {
        struct sc_store_profile_info pi;
        pi.series = ch_get_u64(&rd);
        pi.time_ns = (int64_t)ch_get_u64(&rd);
        pi.duration_ns = (int64_t)ch_get_u64(&rd);
        pi.total = (int64_t)ch_get_u64(&rd);
        uint32_t ns = 0;
        for (int k = 0; k < 4; k++)
            ns |= (uint32_t)ch_get_u8(&rd) << (8 * k);
        pi.nsamples = ns;
        pi.timed = ch_get_u8(&rd) != 0;
        uint32_t *ix = sc_map64_get(&x.index, pi.series);
        if (ix)
            v[m++] = (struct listed){*ix, (uint32_t)i, pi};
    }
    if (rc == 0)
        qsort(v, m, sizeof *v, cmp_listed);
    for (size_t i = 0; rc == 0 && i < m; i++)
        if (cb(ctx, &v[i].pi))
            break;
    free(v);
    sc_buf_release(&sql);
    sc_buf_release(&ans);
    agg_release(&x);
    return rc;
}
