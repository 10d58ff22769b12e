/* clickhouse_write.c - the ClickHouse backend's writes: a profile's record (its rows and the
 * stacks, frames and series its shard may lack) into its shard's local log, and a batch of
 * records from the log into the shard, each push once. */
#include "store/clickhouse_int.h"
#include "model/log.h"
#include "model/error.h"
#include "store/prepare.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Column lists of the inserts, in the order the rows are encoded. */
/* Profiles and their rollups go in one insert into the Null table scorch_ingest_local, whose
 * views send the rows with res 0 to the profiles and the others to the rollups
 * (clickhouse.c): a profile and its share of the rollups are stored by the same insert. */
static const char ins_ingest[] =
    "scorch_ingest_local (tenant, type, series, time_ns, duration_ns, unit, timed, total, "
    "nsamples, stacks, values, times, push, res, profiles)";
static const char ins_stacks[] = "scorch_stacks_local (stack, week, frames, inlined)";
static const char ins_frames[] = "scorch_frames_local (frame, week, function, file, line, binary)";
static const char ins_series[] =
    "scorch_series_local (tenant, series, week, labels, names, values)";

/* ---- a profile's rows ---- */

/* The distinct stacks of a prepared profile with each one's summed values (aggregated
 * profiles) and the first row that has it (for its frames). */
struct uniq {
    struct sc_map64 ix;
    uint32_t *row; /* per distinct stack: its first row */
    int64_t *sums; /* per distinct stack, row-major like the rows */
    uint32_t n;
};

static int uniq_build(struct uniq *u, const struct sc_prep *x)
{
    memset(u, 0, sizeof *u);
    u->row = malloc(((size_t)x->n + 1) * sizeof *u->row);
    u->sums = calloc((size_t)x->n * x->nt + 1, sizeof *u->sums);
    if (!u->row || !u->sums || sc_map64_reserve(&u->ix, x->n))
        return SC_ENOMEM;
    for (uint32_t i = 0; i < x->n; i++) {
        int added;
        uint32_t *slot = sc_map64_upsert(&u->ix, x->stack[i], u->n, &added);
        if (!slot)
            return SC_ENOMEM;
        if (added)
            u->row[u->n++] = i;
        int64_t *d = u->sums + (size_t)*slot * x->nt;
        const int64_t *v = x->values + (size_t)i * x->nt;
        /* sums wrap, as the other backends' do */
        for (uint32_t c = 0; c < x->nt; c++)
            d[c] = (int64_t)((uint64_t)d[c] + (uint64_t)v[c]);
    }
    return 0;
}

static void uniq_release(struct uniq *u)
{
    sc_map64_release(&u->ix);
    free(u->row);
    free(u->sums);
}

/* One row per sample type: the profile's non-zero values of that type, per distinct stack
 * (aggregated) or per sample in time order (timed). */
static int encode_rows(const struct sc_store_write *w, const struct sc_prep *x,
                       const struct uniq *u, uint64_t series, struct sc_buf *out, uint32_t *ends)
{
    const struct sc_profile *p = w->p;
    const char *tenant = w->tenant ? w->tenant : "";
    int timed = x->times != NULL;
    uint32_t *ord = timed ? sc_prep_time_order(x) : NULL;
    if (timed && !ord)
        return SC_ENOMEM;
    uint32_t nrows = timed ? x->n : u->n;
    size_t plen = strlen(w->profile);
    for (uint32_t c = 0; c < x->nt; c++) {
        struct sc_str t = sc_profile_str(p, p->sample_types[c].type);
        struct sc_str unit = sc_profile_str(p, p->sample_types[c].unit);
        uint32_t m = 0;
        int64_t total = 0;
        for (uint32_t i = 0; i < nrows; i++) {
            int64_t v =
                timed ? x->values[(size_t)ord[i] * x->nt + c] : u->sums[(size_t)i * x->nt + c];
            m += v != 0;
            total = (int64_t)((uint64_t)total + (uint64_t)v);
        }
        ch_put_str(out, tenant, strlen(tenant));
        ch_put_len(out, plen + 1 + t.len);
        sc_buf_append(out, w->profile, plen);
        sc_buf_putc(out, ':');
        sc_buf_append(out, t.ptr, t.len);
        ch_put_u64(out, series);
        ch_put_u64(out, (uint64_t)w->time_ns);
        ch_put_u64(out, (uint64_t)w->duration_ns);
        ch_put_str(out, unit.ptr, unit.len);
        ch_put_u8(out, (uint8_t)timed);
        ch_put_u64(out, (uint64_t)total);
        ch_put_u32(out, nrows); /* the profile's rows, of all its types */
        for (int col = 0; col < 3; col++) {
            ch_put_len(out, col == 2 && !timed ? 0 : m);
            for (uint32_t i = 0; i < nrows && !(col == 2 && !timed); i++) {
                uint32_t r = timed ? ord[i] : u->row[i];
                int64_t v =
                    timed ? x->values[(size_t)r * x->nt + c] : u->sums[(size_t)i * x->nt + c];
                if (!v)
                    continue;
                ch_put_u64(out, col == 0   ? x->stack[r]
                                : col == 1 ? (uint64_t)v
                                           : (uint64_t)x->times[r]);
            }
        }
        ends[c] = (uint32_t)out->len;
    }
    free(ord);
    return out->oom || out->len > UINT32_MAX ? SC_ENOMEM : 0;
}

/* The rows with the push id, a hash of all of them (series, time, types, stacks, values,
 * times), as each one's last column: the same profile pushed again has the same id. */
static int encode_rows_push(const struct sc_store_write *w, const struct sc_prep *x,
                            const struct uniq *u, uint64_t series, struct ch_pend *p)
{
    struct sc_buf tmp = SC_BUF_INIT;
    uint32_t *ends = malloc(((size_t)x->nt + 1) * sizeof *ends);
    int rc = ends ? encode_rows(w, x, u, series, &tmp, ends) : SC_ENOMEM;
    if (rc == 0) {
        p->push = sc_hash64(tmp.data ? tmp.data : "", tmp.len);
        uint32_t start = 0;
        for (uint32_t c = 0; c < x->nt; c++) {
            sc_buf_append(&p->rows, tmp.data + start, ends[c] - start);
            ch_put_u64(&p->rows, p->push);
            start = ends[c];
        }
        rc = p->rows.oom ? SC_ENOMEM : 0;
    }
    free(ends);
    sc_buf_release(&tmp);
    return rc;
}

/* A stack's row: its frame ids, leaf first, from row r of the prepared profile. */
static void encode_stack(const struct sc_prep *x, uint32_t r, uint32_t week, struct sc_buf *out)
{
    uint32_t a = x->soff[r], b = x->soff[r + 1];
    struct sc_prep_frame f;
    ch_put_u64(out, x->stack[r]);
    ch_put_u32(out, week);
    for (int col = 0; col < 2; col++) {
        ch_put_len(out, b - a);
        for (uint32_t k = a; k < b; k++) {
            sc_prep_frame(x, x->refs[k], &f);
            if (col == 0)
                ch_put_u64(out, f.id);
            else
                ch_put_u8(out, (uint8_t)f.inlined);
        }
    }
}

static void encode_frame(const struct sc_prep_frame *f, uint32_t week, struct sc_buf *out)
{
    ch_put_u64(out, f->id);
    ch_put_u32(out, week);
    ch_put_str(out, f->function.ptr, f->function.len);
    ch_put_str(out, f->file.ptr, f->file.len);
    ch_put_u64(out, (uint64_t)f->line);
    ch_put_str(out, f->binary.ptr, f->binary.len);
}

static void encode_series(const struct sc_store_write *w, uint64_t series, uint32_t week,
                          const struct sc_buf *canon, struct sc_buf *out)
{
    const char *tenant = w->tenant ? w->tenant : "";
    const struct sc_labels *l = w->labels;
    ch_put_str(out, tenant, strlen(tenant));
    ch_put_u64(out, series);
    ch_put_u32(out, week);
    ch_put_str(out, canon->data ? canon->data : "", canon->len);
    ch_put_len(out, l->n);
    for (uint32_t i = 0; i < l->n; i++)
        ch_put_str(out, l->v[i].name.ptr, l->v[i].name.len);
    ch_put_len(out, l->n);
    for (uint32_t i = 0; i < l->n; i++)
        ch_put_str(out, l->v[i].value.ptr, l->v[i].value.len);
}

/* Whether id was written in a week >= week: by a record in the shard's log (inserted
 * before any later record's profiles, as the log is inserted in order and a batch's
 * stacks before its profiles) or confirmed by the shard; the caches are emptied when an
 * insert to the shard fails. cache_mu held. */
static int known(const struct sc_map64 *m, uint64_t id, uint32_t week)
{
    const uint32_t *d = sc_map64_get(m, id);
    return d && *d >= week;
}

static void remember(struct sc_map64 *m, uint64_t id, uint32_t week)
{
    if (m->count > CH_WRITE_CACHE)
        sc_map64_release(m); /* bounded: refills on a miss */
    int added;
    uint32_t *d = sc_map64_upsert(m, id, week, &added);
    if (d && *d < week)
        *d = week;
}

/* ---- the write ---- */

/* The stacks (rows of x, by their first row in u) and frames ClickHouse may not have for
 * p's week, and the series: encoded into p. 0 or SC_ENOMEM. */
static int encode_new(struct ch_store *s, struct ch_shard *sh, const struct sc_store_write *w,
                      const struct sc_prep *x, const struct uniq *u, const struct sc_buf *canon,
                      struct ch_pend *p)
{
    p->new_stacks = malloc(((size_t)u->n + 1) * sizeof *p->new_stacks);
    if (!p->new_stacks)
        return SC_ENOMEM;
    pthread_mutex_lock(&s->cache_mu);
    for (uint32_t i = 0; i < u->n; i++)
        if (!known(&sh->stack_weeks, x->stack[u->row[i]], p->week))
            p->new_stacks[p->nnew++] = u->row[i];
    int new_series = !known(&sh->series_weeks, p->series_id, p->week);
    pthread_mutex_unlock(&s->cache_mu);
    /* the frames of the new stacks, each once */
    struct sc_map64 seen;
    sc_map64_init(&seen);
    uint32_t fcap = 0;
    int rc = 0;
    struct sc_prep_frame f;
    for (uint32_t i = 0; i < p->nnew && rc == 0; i++) {
        uint32_t r = (uint32_t)p->new_stacks[i];
        encode_stack(x, r, p->week, &p->stacks);
        p->new_stacks[i] = x->stack[r];
        for (uint32_t k = x->soff[r]; k < x->soff[r + 1] && rc == 0; k++) {
            sc_prep_frame(x, x->refs[k], &f);
            int added;
            if (!sc_map64_upsert(&seen, f.id, 0, &added))
                rc = SC_ENOMEM;
            if (rc || !added)
                continue;
            pthread_mutex_lock(&s->cache_mu);
            int have = known(&sh->frame_weeks, f.id, p->week);
            pthread_mutex_unlock(&s->cache_mu);
            if (have)
                continue;
            if (sc_grow_array(&p->new_frames, &fcap, (uint64_t)p->nnew_frames + 1,
                              sizeof *p->new_frames))
                rc = SC_ENOMEM;
            else
                p->new_frames[p->nnew_frames++] = f.id;
            encode_frame(&f, p->week, &p->frames);
        }
    }
    sc_map64_release(&seen);
    if (new_series)
        encode_series(w, p->series_id, p->week, canon, &p->series);
    if (p->stacks.oom || p->frames.oom || p->series.oom)
        rc = SC_ENOMEM;
    return rc;
}

void ch_pend_release(struct ch_pend *p)
{
    sc_buf_release(&p->rows);
    sc_buf_release(&p->stacks);
    sc_buf_release(&p->frames);
    sc_buf_release(&p->series);
    free(p->new_stacks);
    free(p->new_frames);
}

/* w's rows, new stacks, frames and series encoded into p (zeroed here), and the shard they
 * go to. */
int ch_pend_build(struct ch_store *s, const struct sc_store_write *w, struct ch_pend *p,
                  uint32_t *shard, char *err)
{
    memset(p, 0, sizeof *p);
    int rc = sc_prep_check(w, err);
    if (rc)
        return rc;
    if (w->time_ns < 0)
        return sc_errf(err, SC_EINVAL, "a profile time before 1970 (%lld ns)",
                       (long long)w->time_ns);
    struct sc_buf canon = SC_BUF_INIT;
    struct sc_prep x;
    struct uniq u;
    memset(&x, 0, sizeof x);
    memset(&u, 0, sizeof u);
    sc_labels_format(w->labels, &canon);
    uint64_t series = 0;
    if (!canon.oom && sc_series_id(w->tenant, canon.data ? canon.data : "", canon.len, &series))
        canon.oom = 1; /* reported below with the other allocation failures */
    /* a series' ten-minute buckets go round the shards: a long read of one series
     * aggregates on all of them, and a ten-minute rollup bucket stays on one */
    uint64_t bucket = (uint64_t)(w->time_ns / ((int64_t)SC_ROLLUP_SHORT * CH_NS));
    *shard = (uint32_t)(sc_mix64(series ^ sc_mix64(bucket)) % s->nshards);
    int64_t week = w->time_ns / CH_DAY_NS / CH_WEEK_DAYS;
    p->week = week > UINT32_MAX ? UINT32_MAX : (uint32_t)week;
    p->series_id = series;
    rc = sc_prep_profile(&x, w->p, w->time_shift_ns, err);
    if (rc == 0 && (canon.oom || uniq_build(&u, &x) || encode_rows_push(w, &x, &u, series, p) ||
                    encode_new(s, &s->shards[*shard], w, &x, &u, &canon, p)))
        rc = sc_errf(err, SC_ENOMEM, "out of memory");
    sc_buf_release(&canon);
    sc_prep_release(&x);
    uniq_release(&u);
    return rc;
}

/* ---- a record's payload in the log ----
 *
 * u64 push, u64 series id, u32 week, u32 new stacks, u32 new frames, u32 series rows'
 * length, u32 rows', stacks' and frames' lengths, then the new stacks' and frames' ids
 * (u64 each), then the RowBinary of rows, stacks, frames and series. */
#define PAYLOAD_HEAD 44

static void put32(uint8_t *p, uint32_t v)
{
    memcpy(p, &v, 4);
}

void ch_pend_payload(const struct ch_pend *p, struct sc_buf *out)
{
    uint8_t h[PAYLOAD_HEAD];
    memcpy(h, &p->push, 8);
    memcpy(h + 8, &p->series_id, 8);
    put32(h + 16, p->week);
    put32(h + 20, p->nnew);
    put32(h + 24, p->nnew_frames);
    put32(h + 28, (uint32_t)p->series.len);
    put32(h + 32, (uint32_t)p->rows.len);
    put32(h + 36, (uint32_t)p->stacks.len);
    put32(h + 40, (uint32_t)p->frames.len);
    sc_buf_append(out, h, sizeof h);
    sc_buf_append(out, p->new_stacks, (size_t)p->nnew * 8);
    sc_buf_append(out, p->new_frames, (size_t)p->nnew_frames * 8);
    sc_buf_append(out, p->rows.data, p->rows.len);
    sc_buf_append(out, p->stacks.data, p->stacks.len);
    sc_buf_append(out, p->frames.data, p->frames.len);
    sc_buf_append(out, p->series.data, p->series.len);
}

/* A payload read back: views into it. */
struct rec_view {
    uint64_t push, series_id;
    uint32_t week, nnew, nnew_frames;
    const uint8_t *stack_ids, *frame_ids;
    struct sc_buf rows, stacks, frames, series; /* borrowed: never released */
    /* what the shard holds of it already: its profile rows, its share of the rollups
     * (the two views of one insert store them one after the other, not at once) */
    uint8_t stored, rolled;
};

static int held_whole(const struct rec_view *v)
{
    return v->stored && v->rolled;
}

static uint32_t get32(const uint8_t *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}

static int view(const struct sc_buf *b, struct rec_view *v)
{
    memset(v, 0, sizeof *v);
    const uint8_t *p = (const uint8_t *)b->data;
    if (b->len < PAYLOAD_HEAD)
        return -1;
    memcpy(&v->push, p, 8);
    memcpy(&v->series_id, p + 8, 8);
    v->week = get32(p + 16);
    v->nnew = get32(p + 20);
    v->nnew_frames = get32(p + 24);
    uint64_t lens[4] = {get32(p + 32), get32(p + 36), get32(p + 40), get32(p + 28)};
    uint64_t need = PAYLOAD_HEAD + 8 * ((uint64_t)v->nnew + v->nnew_frames);
    for (int i = 0; i < 4; i++)
        need += lens[i];
    if (need != b->len || lens[0] == 0)
        return -1;
    p += PAYLOAD_HEAD;
    v->stack_ids = p;
    p += (size_t)v->nnew * 8;
    v->frame_ids = p;
    p += (size_t)v->nnew_frames * 8;
    struct sc_buf *bufs[4] = {&v->rows, &v->stacks, &v->frames, &v->series};
    for (int i = 0; i < 4; i++) {
        bufs[i]->data = (char *)p;
        bufs[i]->len = (size_t)lens[i];
        p += lens[i];
    }
    return 0;
}

/* ---- inserts ---- */

/* Inserts parts (each a record's buffer of table) on the shard. */
static int insert(struct ch_store *s, struct ch_shard *sh, const char *table,
                  const struct sc_buf *const *parts, uint32_t n, char *err)
{
    if (n == 0)
        return 0;
    struct sc_buf sql = SC_BUF_INIT;
    sc_buf_printf(&sql, "INSERT INTO %s.%s FORMAT RowBinary", s->db, table);
    struct ch_req r = {sql.data, parts, n, s->base.opts.write_timeout_ns, CH_SMALL_ANSWER, NULL, 0};
    int rc = sql.oom ? sc_errf(err, SC_ENOMEM, "out of memory") : ch_request(s, ch_ep(sh), &r, err);
    sc_buf_release(&sql);
    return rc;
}

/* Marks what the shard holds already of each record (stored by an insert whose answer was
 * lost, or half of it: its view into the profiles ran and the one into the rollups did not;
 * before a crash; or pushed again by a client whose answer was lost), and the repeats of a
 * push within the batch. Profile rows are found by push id, rollups by the push's marker
 * row (CH_ROLLUP_MARK), which the same insert puts in the same part as the push's rollups.
 * Both lookups go by the tables' keys, so they read a granule or so per record, however
 * large the tables. */
static int mark_stored(struct ch_store *s, struct ch_shard *sh, struct rec_view *v, uint32_t n,
                       char *err)
{
    struct sc_map64 seen;
    sc_map64_init(&seen);
    struct sc_buf ids = SC_BUF_INIT, keys = SC_BUF_INIT, marks = SC_BUF_INIT, sql = SC_BUF_INIT,
                  ans = SC_BUF_INIT;
    uint32_t asked = 0;
    int rc = 0;
    for (uint32_t i = 0; i < n && rc == 0; i++) {
        int added;
        if (held_whole(&v[i])) /* held: stored by the batch before this one */
            continue;
        if (!sc_map64_upsert(&seen, v[i].push, i, &added)) {
            rc = sc_errf(err, SC_ENOMEM, "out of memory");
            break;
        }
        if (!added) {
            v[i].stored = v[i].rolled = 1;
            continue;
        }
        /* the first row's key: every row of a push has its series and time */
        struct ch_rd r = {(const uint8_t *)v[i].rows.data,
                          (const uint8_t *)v[i].rows.data + v[i].rows.len, 0};
        struct sc_str tenant = ch_get_str(&r), type = ch_get_str(&r);
        uint64_t series = ch_get_u64(&r), t = ch_get_u64(&r);
        if (r.bad) {
            v[i].stored = v[i].rolled = 1; /* cannot be: the payload's hash matched */
            continue;
        }
        const char *sep = asked++ ? "," : "";
        sc_buf_printf(&ids, "%s%llu", sep, (unsigned long long)v[i].push);
        struct sc_buf *both[2] = {&keys, &marks};
        for (int k = 0; k < 2; k++) {
            sc_buf_printf(both[k], "%s(", sep);
            ch_sql_str(both[k], tenant.ptr, tenant.len);
            sc_buf_putc(both[k], ',');
            ch_sql_str(both[k], type.ptr, type.len);
        }
        sc_buf_printf(&keys, ",%llu,%lld)", (unsigned long long)series, (long long)(int64_t)t);
        sc_buf_printf(&marks, ",%llu,%lld)", (unsigned long long)v[i].push,
                      (long long)(int64_t)(t / (uint64_t)CH_NS));
    }
    if (rc == 0 && asked) {
        sc_buf_printf(&sql,
                      "SELECT DISTINCT push, toUInt8(0) FROM %s.scorch_profiles_local WHERE "
                      "push IN (%s) AND (tenant, type, series, time_ns) IN (%s) UNION ALL "
                      "SELECT DISTINCT series, toUInt8(1) FROM %s.scorch_rollup_local WHERE "
                      "res = %d AND (tenant, type, series, bucket) IN (%s) FORMAT RowBinary",
                      s->db, ids.data, keys.data, s->db, CH_ROLLUP_MARK, marks.data);
        struct ch_req req = {sql.data,        NULL, 0, s->base.opts.write_timeout_ns,
                             CH_SMALL_ANSWER, &ans, 0};
        rc = sql.oom || ids.oom || keys.oom || marks.oom ? sc_errf(err, SC_ENOMEM, "out of memory")
                                                         : ch_request(s, ch_ep(sh), &req, err);
    }
    struct ch_rd r = {(const uint8_t *)ans.data, (const uint8_t *)ans.data + ans.len, 0};
    while (rc == 0 && r.p < r.end) {
        uint64_t id = ch_get_u64(&r);
        uint8_t rolled = ch_get_u8(&r);
        if (r.bad)
            rc = sc_errf(err, SC_EIO, "clickhouse: a malformed answer");
        const uint32_t *ix = rc ? NULL : sc_map64_get(&seen, id);
        if (ix && rolled)
            v[*ix].rolled = 1;
        else if (ix)
            v[*ix].stored = 1;
    }
    sc_map64_release(&seen);
    sc_buf_release(&ids);
    sc_buf_release(&keys);
    sc_buf_release(&marks);
    sc_buf_release(&sql);
    sc_buf_release(&ans);
    return rc;
}

/* ---- rollups ----
 *
 * Summed here rather than by a view: ClickHouse 18.16's sumMap spent 0.7 ms of CPU a
 * profile (its map of Fields), ten times the rest of the insert. A way's profiles are
 * summed per (tenant, type, resolution, series, bucket, unit), each stack's values added
 * up (what SummingMergeTree does as parts merge, zero sums left out as it does), and go in
 * the insert that carries the profiles. */

static const uint32_t rollup_res[3] = {SC_ROLLUP_SHORT, SC_ROLLUP_HOUR, SC_ROLLUP_DAY};

struct rgroup {
    struct sc_str tenant, type, unit;  /* views into the records */
    uint64_t series, profiles, pushes; /* pushes: their push ids summed */
    int64_t bucket, duration, total;
    uint32_t res;
    struct sc_map64 ix; /* stack -> index into kv */
    struct rpair {
        uint64_t stack;
        int64_t sum;
    } * kv;
    uint32_t n, cap;
};

struct rollups {
    struct sc_map64 ix; /* a group's key hash -> index into g */
    struct rgroup *g;
    uint32_t n, cap;
    const struct rgroup *want; /* the key being looked up (group_eq) */
};

static int str_eq(struct sc_str a, struct sc_str b)
{
    return a.len == b.len && (a.len == 0 || memcmp(a.ptr, b.ptr, a.len) == 0);
}

static int group_eq(void *ctx, uint32_t i)
{
    const struct rollups *r = ctx;
    const struct rgroup *a = &r->g[i], *b = r->want;
    return a->series == b->series && a->bucket == b->bucket && a->res == b->res &&
           str_eq(a->tenant, b->tenant) && str_eq(a->type, b->type) && str_eq(a->unit, b->unit);
}

/* The group of key (its stacks not set), created when new. NULL when out of memory. */
static struct rgroup *group_get(struct rollups *r, const struct rgroup *key)
{
    uint64_t h = sc_hash64(key->tenant.ptr, key->tenant.len);
    h = sc_hash_combine(h, sc_hash64(key->type.ptr, key->type.len));
    h = sc_hash_combine(h, sc_hash64(key->unit.ptr, key->unit.len));
    h = sc_hash_combine(h, key->series);
    h = sc_hash_combine(h, (uint64_t)key->bucket);
    h = sc_hash_combine(h, key->res);
    r->want = key;
    int added;
    uint32_t *slot = sc_map64_intern(&r->ix, h, r->n, group_eq, r, &added);
    if (!slot)
        return NULL;
    if (!added)
        return &r->g[*slot];
    if (sc_grow_array(&r->g, &r->cap, (uint64_t)r->n + 1, sizeof *r->g))
        return NULL; /* the map names an index past the end: never read, as we fail */
    struct rgroup *g = &r->g[r->n++];
    *g = (struct rgroup){.tenant = key->tenant,
                         .type = key->type,
                         .unit = key->unit,
                         .series = key->series,
                         .bucket = key->bucket,
                         .res = key->res};
    sc_map64_init(&g->ix);
    return g;
}

static void rollups_release(struct rollups *r)
{
    for (uint32_t i = 0; i < r->n; i++) {
        sc_map64_release(&r->g[i].ix);
        free(r->g[i].kv);
    }
    free(r->g);
    sc_map64_release(&r->ix);
}

/* Adds one profile row (its key read, then n stacks and values at vals) to the rollups of
 * each resolution. 0 or SC_ENOMEM. */
static int rollup_add(struct rollups *r, const struct rgroup *row, const uint8_t *stacks,
                      const uint8_t *vals, uint32_t n, uint64_t time_ns)
{
    for (int k = 0; k < 3; k++) {
        struct rgroup key = *row;
        key.res = rollup_res[k];
        int64_t secs = (int64_t)(time_ns / (uint64_t)CH_NS);
        key.bucket = secs / key.res * key.res;
        struct rgroup *g = group_get(r, &key);
        if (!g)
            return SC_ENOMEM;
        g->profiles++;
        g->pushes += row->pushes;
        /* sums wrap, as ClickHouse's do */
        g->duration = (int64_t)((uint64_t)g->duration + (uint64_t)row->duration);
        g->total = (int64_t)((uint64_t)g->total + (uint64_t)row->total);
        for (uint32_t i = 0; i < n; i++) {
            uint64_t st, v;
            memcpy(&st, stacks + 8 * (size_t)i, 8);
            memcpy(&v, vals + 8 * (size_t)i, 8);
            int added;
            uint32_t *slot = sc_map64_upsert(&g->ix, st, g->n, &added);
            if (!slot)
                return SC_ENOMEM;
            if (added) {
                if (sc_grow_array(&g->kv, &g->cap, (uint64_t)g->n + 1, sizeof *g->kv))
                    return SC_ENOMEM;
                g->kv[g->n++] = (struct rpair){st, 0};
            }
            g->kv[*slot].sum = (int64_t)((uint64_t)g->kv[*slot].sum + v);
        }
    }
    return 0;
}

/* One profile row of a record (RowBinary, ins_ingest's columns up to push): its rollup key
 * into key, its time, and where its n stacks and values are. 0, or -1 when malformed. */
static int read_row(struct ch_rd *r, struct rgroup *key, uint64_t *time_ns, const uint8_t **stacks,
                    const uint8_t **vals, uint32_t *n)
{
    memset(key, 0, sizeof *key);
    key->tenant = ch_get_str(r);
    key->type = ch_get_str(r);
    key->series = ch_get_u64(r);
    *time_ns = ch_get_u64(r);
    key->duration = (int64_t)ch_get_u64(r);
    key->unit = ch_get_str(r);
    (void)ch_get_u8(r); /* timed */
    key->total = (int64_t)ch_get_u64(r);
    if (r->bad || r->end - r->p < 4) /* nsamples */
        r->bad = 1;
    else
        r->p += 4;
    uint64_t len[3];
    const uint8_t *at[3];
    for (int c = 0; c < 3; c++) { /* stacks, values, times */
        len[c] = ch_get_len(r, 8);
        at[c] = r->p;
        if (!r->bad)
            r->p += 8 * len[c];
    }
    key->pushes = ch_get_u64(r); /* the push id */
    if (len[0] != len[1] || len[0] > UINT32_MAX)
        r->bad = 1;
    *stacks = at[0];
    *vals = at[1];
    *n = (uint32_t)len[0];
    return r->bad ? -1 : 0;
}

/* The marker of a push's rollups: a row of the rollups' table, keyed by the push id (as
 * its series) and its time in seconds (as its bucket: the partition of the push's
 * rollups, so one part holds both), that sums nothing. mark_stored looks it up. */
static void put_mark(struct sc_buf *out, const struct rgroup *row, uint64_t time_ns)
{
    ch_put_str(out, row->tenant.ptr, row->tenant.len);
    ch_put_str(out, row->type.ptr, row->type.len);
    ch_put_u64(out, row->pushes);                  /* series: the push id */
    ch_put_u64(out, time_ns / (uint64_t)CH_NS);    /* time_ns: the bucket, in seconds */
    ch_put_u64(out, 0);                            /* duration */
    ch_put_str(out, row->unit.ptr, row->unit.len); /* a type's unit, wherever it is read */
    ch_put_u8(out, 0);
    ch_put_u64(out, 0); /* total */
    ch_put_u32(out, 0);
    for (int col = 0; col < 3; col++) /* stacks, values, times */
        ch_put_len(out, 0);
    ch_put_u64(out, row->pushes);
    ch_put_u32(out, CH_ROLLUP_MARK);
    ch_put_u64(out, 0); /* profiles */
}

/* A way's insert into out: its records' profile rows (res 0) and their rollups, each
 * part the shard does not hold yet. 0 or SC_ENOMEM. */
static int encode_way(struct ch_shard *sh, const struct rec_view *const *recs, uint32_t n,
                      struct sc_buf *out)
{
    struct rollups r;
    memset(&r, 0, sizeof r);
    sc_map64_init(&r.ix);
    int rc = 0;
    struct rgroup key;
    uint64_t t;
    const uint8_t *stacks, *vals;
    uint32_t m;
    for (uint32_t i = 0; i < n && rc == 0; i++) {
        const uint8_t *p = (const uint8_t *)recs[i]->rows.data;
        struct ch_rd rd = {p, p + recs[i]->rows.len, 0};
        while (rd.p < rd.end && read_row(&rd, &key, &t, &stacks, &vals, &m) == 0)
            ;
        if (rd.bad) { /* cannot be: its hash matched; never let one record stop the log */
            sc_logf("clickhouse shard %u: a malformed record left out", (unsigned)sh->index);
            continue;
        }
        rd = (struct ch_rd){p, p + recs[i]->rows.len, 0};
        int first = 1;
        while (rd.p < rd.end && rc == 0) {
            const uint8_t *start = rd.p;
            read_row(&rd, &key, &t, &stacks, &vals, &m);
            if (!recs[i]->stored) {
                sc_buf_append(out, start, (size_t)(rd.p - start));
                ch_put_u32(out, 0); /* res 0: a profile */
                ch_put_u64(out, 0);
            }
            if (!recs[i]->rolled && first)
                put_mark(out, &key, t);
            if (!recs[i]->rolled)
                rc = rollup_add(&r, &key, stacks, vals, m, t);
            first = 0;
        }
    }
    for (uint32_t i = 0; i < r.n && rc == 0; i++) {
        struct rgroup *g = &r.g[i];
        uint32_t nz = 0;
        for (uint32_t k = 0; k < g->n; k++)
            nz += g->kv[k].sum != 0;
        ch_put_str(out, g->tenant.ptr, g->tenant.len);
        ch_put_str(out, g->type.ptr, g->type.len);
        ch_put_u64(out, g->series);
        ch_put_u64(out, (uint64_t)g->bucket); /* time_ns: the bucket, in seconds */
        ch_put_u64(out, (uint64_t)g->duration);
        ch_put_str(out, g->unit.ptr, g->unit.len);
        ch_put_u8(out, 0);
        ch_put_u64(out, (uint64_t)g->total);
        ch_put_u32(out, 0);
        for (int col = 0; col < 2; col++) {
            ch_put_len(out, nz);
            for (uint32_t k = 0; k < g->n; k++)
                if (g->kv[k].sum)
                    ch_put_u64(out, col ? (uint64_t)g->kv[k].sum : g->kv[k].stack);
        }
        ch_put_len(out, 0);         /* times */
        ch_put_u64(out, g->pushes); /* push: the rollup's pushes */
        ch_put_u32(out, g->res);
        ch_put_u64(out, g->profiles);
    }
    rollups_release(&r);
    return rc || out->oom ? SC_ENOMEM : 0;
}

/* Inserts on one shard at once: ClickHouse 18.16 parses, sorts and writes an insert on
 * one thread, so a batch sent as a few inserts over as many connections takes the shard's
 * cores rather than one (and a busy machine's share of them). */
struct ins_job {
    struct ch_store *s;
    struct ch_shard *sh;
    const char *table;
    const struct sc_buf *const *parts;
    uint32_t n;
    int rc;
    char err[SC_ERR_LEN];
    /* a way of profiles: encoded into *body (its one part) by the job's own thread, so the
     * ways' encoding runs at once and overlaps the others' inserts */
    const struct rec_view *const *recs;
    uint32_t nrecs;
    struct sc_buf *body;
};

static void *ins_thread(void *arg)
{
    struct ins_job *j = arg;
    if (j->recs && encode_way(j->sh, j->recs, j->nrecs, j->body)) {
        j->rc = sc_errf(j->err, SC_ENOMEM, "out of memory");
        return NULL;
    }
    j->rc = insert(j->s, j->sh, j->table, j->parts, j->recs ? j->body->len > 0 : j->n, j->err);
    return NULL;
}

/* Runs the jobs, all at once; 0 or the first failure (its words in err). */
static int insert_all(struct ins_job *jobs, uint32_t n, char *err)
{
    pthread_t t[CH_INSERT_WAYS > 3 ? CH_INSERT_WAYS : 3];
    int started[CH_INSERT_WAYS > 3 ? CH_INSERT_WAYS : 3] = {0};
    for (uint32_t i = 1; i < n; i++)
        started[i] = pthread_create(&t[i], NULL, ins_thread, &jobs[i]) == 0;
    for (uint32_t i = 0; i < n; i++)
        if (!started[i])
            ins_thread(&jobs[i]); /* no thread: in turn, here */
    int rc = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (started[i])
            pthread_join(t[i], NULL);
        if (jobs[i].rc && !rc) {
            rc = jobs[i].rc;
            if (err)
                memcpy(err, jobs[i].err, SC_ERR_LEN);
        }
    }
    return rc;
}

/* The order of a batch's profiles in its inserts: by series, so a series' rollups are
 * summed in one insert (two for a series where the batch is split, as the split goes by
 * count); ties in the log's order, so a batch sent again is the same
 * blocks (a replicated table leaves out a block it holds). */
static int cmp_series(const void *a, const void *b)
{
    const struct rec_view *x = *(const struct rec_view *const *)a,
                          *y = *(const struct rec_view *const *)b;
    if (x->series_id != y->series_id)
        return x->series_id < y->series_id ? -1 : 1;
    return x < y ? -1 : x > y;
}

/* A batch on its way into a shard: its records' views, those the shard holds marked. */
struct ch_batch {
    struct rec_view *v;
    uint32_t m;
};

void ch_batch_free(struct ch_batch *b)
{
    if (!b)
        return;
    free(b->v);
    free(b);
}

/* Frames, stacks and series first (ReplacingMergeTree: sending them again is harmless),
 * so a stored profile always finds them; then which pushes the shard holds already, or
 * held names (the pushes of the batch inserted meanwhile, before this one). */
int ch_batch_prepare(struct ch_store *s, struct ch_shard *sh, const struct sc_buf *payloads,
                     uint32_t n, const struct sc_map64 *held, struct ch_batch **out, char *err)
{
    *out = NULL;
    struct ch_batch *b = calloc(1, sizeof *b);
    struct rec_view *v = calloc(n ? n : 1, sizeof *v);
    /* NOLINTNEXTLINE(bugprone-sizeof-expression): an array of pointers */
    const struct sc_buf **parts = malloc(3 * ((size_t)n + 1) * sizeof *parts);
    if (!b || !v || !parts) {
        free(b);
        free(v);
        free(parts);
        return sc_errf(err, SC_ENOMEM, "out of memory");
    }
    b->v = v;
    for (uint32_t i = 0; i < n; i++) {
        if (view(&payloads[i], &v[b->m]) == 0)
            b->m++;
        else /* cannot be: its hash matched; never let one record stop the log */
            sc_logf("clickhouse shard %u: a malformed record left out", (unsigned)sh->index);
    }
    uint32_t nf = 0, ns = 0, ne = 0;
    const struct sc_buf **pf = parts, **ps = parts + n, **pe = parts + 2 * (size_t)n;
    for (uint32_t i = 0; i < b->m; i++) {
        if (v[i].frames.len)
            pf[nf++] = &v[i].frames;
        if (v[i].stacks.len)
            ps[ns++] = &v[i].stacks;
        if (v[i].series.len)
            pe[ne++] = &v[i].series;
    }
    struct ins_job jobs[3];
    memset(jobs, 0, sizeof jobs);
    jobs[0] = (struct ins_job){.s = s, .sh = sh, .table = ins_frames, .parts = pf, .n = nf};
    jobs[1] = (struct ins_job){.s = s, .sh = sh, .table = ins_stacks, .parts = ps, .n = ns};
    jobs[2] = (struct ins_job){.s = s, .sh = sh, .table = ins_series, .parts = pe, .n = ne};
    int rc = insert_all(jobs, 3, err);
    for (uint32_t i = 0; rc == 0 && held && i < b->m; i++)
        v[i].stored = v[i].rolled = sc_map64_get(held, v[i].push) != NULL;
    if (rc == 0)
        rc = mark_stored(s, sh, v, b->m, err);
    free(parts);
    if (rc)
        ch_batch_free(b);
    else
        *out = b;
    return rc;
}

int ch_batch_pushes(const struct ch_batch *b, struct sc_map64 *m)
{
    for (uint32_t i = 0; i < b->m; i++) {
        int added;
        if (!sc_map64_upsert(m, b->v[i].push, 0, &added))
            return SC_ENOMEM;
    }
    return 0;
}

/* The profiles not stored yet with their rollups, in a few inserts of whole profiles
 * (each one's rows in one). */
int ch_batch_commit(struct ch_store *s, struct ch_shard *sh, struct ch_batch *b, uint64_t *dups,
                    char *err)
{
    *dups = 0;
    /* NOLINTNEXTLINE(bugprone-sizeof-expression): an array of pointers */
    const struct rec_view **pr = malloc(((size_t)b->m + 1) * sizeof *pr);
    if (!pr)
        return sc_errf(err, SC_ENOMEM, "out of memory");
    uint32_t nr = 0;
    for (uint32_t i = 0; i < b->m; i++) {
        if (!held_whole(&b->v[i]))
            pr[nr++] = &b->v[i];
        else
            (*dups)++;
    }
    if (nr > 1) /* NOLINTNEXTLINE(bugprone-sizeof-expression): an array of pointers */
        qsort(pr, nr, sizeof *pr, cmp_series);
    /* ways of at least 64 profiles each */
    uint32_t ways = nr / 64 < CH_INSERT_WAYS ? nr / 64 : CH_INSERT_WAYS;
    if (ways == 0)
        ways = 1;
    struct ins_job jobs[CH_INSERT_WAYS];
    struct sc_buf body[CH_INSERT_WAYS];
    const struct sc_buf *one[CH_INSERT_WAYS];
    memset(jobs, 0, sizeof jobs);
    for (uint32_t k = 0; k < CH_INSERT_WAYS; k++) {
        body[k] = (struct sc_buf)SC_BUF_INIT;
        one[k] = &body[k];
    }
    for (uint32_t k = 0, at = 0; nr && k < ways; k++) {
        uint32_t take = nr / ways + (k < nr % ways);
        jobs[k] = (struct ins_job){.s = s,
                                   .sh = sh,
                                   .table = ins_ingest,
                                   .parts = &one[k],
                                   .recs = pr + at,
                                   .nrecs = take,
                                   .body = &body[k]};
        at += take;
    }
    int rc = nr ? insert_all(jobs, ways, err) : 0;
    for (uint32_t k = 0; k < CH_INSERT_WAYS; k++)
        sc_buf_release(&body[k]);
    free(pr);
    return rc;
}

int ch_insert_records(struct ch_store *s, struct ch_shard *sh, const struct sc_buf *payloads,
                      uint32_t n, uint64_t *dups, char *err)
{
    *dups = 0;
    int rc = 0;
    for (int attempt = 0; attempt < 2; attempt++) {
        struct ch_batch *b;
        rc = ch_batch_prepare(s, sh, payloads, n, NULL, &b, err);
        if (rc == 0)
            rc = ch_batch_commit(s, sh, b, dups, err);
        ch_batch_free(b);
        if (rc != SC_ENOTFOUND || attempt)
            break;
        /* a shard that lost its tables: created again, and the batch sent again */
        char cerr[SC_ERR_LEN];
        if (ch_create_tables(s, sh->index, cerr))
            break;
    }
    if (rc == SC_ENOTFOUND)
        rc = SC_EIO; /* not "no such profile": the store is broken */
    if (rc)
        *dups = 0;
    return rc;
}

/* ---- the write ---- */

/* A push's parts go to their shards' logs together; it is acknowledged once every part
 * is fsync'd there (one fsync a shard for all the pushes waiting at that moment). A part
 * refused (a full log) fails the push; the parts logged already are inserted, and the
 * client's retry is left out as a repeat when its turn comes (the push id). */
int ch_write_many(struct sc_store *st, const struct sc_store_write *ws, uint32_t n, char *err)
{
    struct ch_store *s = (struct ch_store *)st;
    struct ch_pend *ps = calloc(n ? n : 1, sizeof *ps);
    uint32_t *shards = calloc(n ? n : 1, sizeof *shards);
    uint64_t *ends = calloc(n ? n : 1, sizeof *ends);
    int rc = 0;
    uint32_t built = 0;
    if (!ps || !shards || !ends)
        rc = sc_errf(err, SC_ENOMEM, "out of memory");
    for (; rc == 0 && built < n; built++)
        rc = ch_pend_build(s, &ws[built], &ps[built], &shards[built], err);
    uint32_t logged = 0;
    for (; rc == 0 && logged < n; logged++) {
        struct ch_shard *sh = &s->shards[shards[logged]];
        rc = ch_log_append(s, sh, &ps[logged], &ends[logged], err);
        if (rc)
            break;
        /* what this record carries, later records of the shard need not */
        const struct ch_pend *p = &ps[logged];
        pthread_mutex_lock(&s->cache_mu);
        for (uint32_t i = 0; i < p->nnew; i++)
            remember(&sh->stack_weeks, p->new_stacks[i], p->week);
        for (uint32_t i = 0; i < p->nnew_frames; i++)
            remember(&sh->frame_weeks, p->new_frames[i], p->week);
        if (p->series.len)
            remember(&sh->series_weeks, p->series_id, p->week);
        pthread_mutex_unlock(&s->cache_mu);
    }
    /* what was logged is fsync'd whatever the rest's fate (it will be inserted) */
    for (uint32_t i = 0; i < logged; i++) {
        char serr[SC_ERR_LEN] = "";
        int src = ch_log_sync(s, &s->shards[shards[i]], ends[i], serr);
        if (src && !rc) {
            rc = src;
            if (err)
                memcpy(err, serr, SC_ERR_LEN);
        }
    }
    for (uint32_t i = 0; i < built; i++)
        ch_pend_release(&ps[i]);
    free(ps);
    free(shards);
    free(ends);
    return rc;
}

int ch_write(struct sc_store *st, const struct sc_store_write *w, char *err)
{
    return ch_write_many(st, w, 1, err);
}
