/* clickhouse_write.c - the ClickHouse backend's writes: rows, stacks, series, group commit. */
#include "store/clickhouse_int.h"
#include "model/error.h"
#include "store/prepare.h"

#include <stdlib.h>
#include <string.h>

/* Column lists of the inserts, in the order the rows are encoded. */
static const char ins_profiles[] =
    "scorch_profiles_local (tenant, type, series, time_ns, duration_ns, unit, timed, total, "
    "nsamples, stacks, values, times)";
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
                       const struct uniq *u, uint64_t series, struct sc_buf *out)
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
    }
    free(ord);
    return out->oom ? SC_ENOMEM : 0;
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

/* Whether id was written in a week >= week (the caches only ever hold what ClickHouse
 * confirmed); cache_mu held. */
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

/* ---- group commit ---- */

/* Inserts parts (each a pend's buffer of table) on the shard. */
static int insert(struct ch_store *s, struct ch_shard *sh, const char *table,
                  const struct sc_buf *const *parts, uint32_t n, char *err)
{
    if (n == 0)
        return 0;
    struct sc_buf sql = SC_BUF_INIT;
    sc_buf_printf(&sql, "INSERT INTO %s.%s FORMAT RowBinary", s->db, table);
    struct ch_req r = {sql.data, parts, n, s->base.opts.write_timeout_ns, CH_SMALL_ANSWER, NULL, 0};
    int rc = sql.oom ? sc_errf(err, SC_ENOMEM, "out of memory") : ch_request(s, &sh->ep, &r, err);
    sc_buf_release(&sql);
    return rc;
}

/* Writes a batch: frames, stacks and series first, so a stored profile always finds them;
 * then the profiles' rows in one insert. A missing table (a shard that lost its data) is
 * created again and the batch retried once. */
static int commit(struct ch_store *s, uint32_t shard, struct ch_pend *batch, char *err)
{
    struct ch_shard *sh = &s->shards[shard];
    uint32_t n = 0;
    for (struct ch_pend *p = batch; p; p = p->next)
        n++;
    /* NOLINTNEXTLINE(bugprone-sizeof-expression): an array of pointers */
    const struct sc_buf **parts = malloc(4 * ((size_t)n + 1) * sizeof *parts);
    if (!parts)
        return sc_errf(err, SC_ENOMEM, "out of memory");
    uint32_t nf = 0, ns = 0, ne = 0, nr = 0;
    const struct sc_buf **pf = parts, **ps = parts + n, **pe = parts + 2 * (size_t)n,
                        **pr = parts + 3 * (size_t)n;
    for (struct ch_pend *p = batch; p; p = p->next) {
        if (p->frames.len)
            pf[nf++] = &p->frames;
        if (p->stacks.len)
            ps[ns++] = &p->stacks;
        if (p->series.len)
            pe[ne++] = &p->series;
        pr[nr++] = &p->rows;
    }
    int rc = 0;
    for (int attempt = 0; attempt < 2; attempt++) {
        rc = insert(s, sh, ins_frames, pf, nf, err);
        if (rc == 0)
            rc = insert(s, sh, ins_stacks, ps, ns, err);
        if (rc == 0)
            rc = insert(s, sh, ins_series, pe, ne, err);
        if (rc == 0)
            rc = insert(s, sh, ins_profiles, pr, nr, err);
        if (rc != SC_ENOTFOUND || attempt)
            break;
        char cerr[SC_ERR_LEN];
        if (ch_create_tables(s, shard, cerr))
            break;
    }
    free(parts);
    if (rc == SC_ENOTFOUND)
        rc = SC_EIO; /* not "no such profile": the store is broken */
    if (rc)
        return rc;
    pthread_mutex_lock(&s->cache_mu);
    for (struct ch_pend *p = batch; p; p = p->next) {
        for (uint32_t i = 0; i < p->nnew; i++)
            remember(&s->stack_weeks, p->new_stacks[i], p->week);
        for (uint32_t i = 0; i < p->nnew_frames; i++)
            remember(&s->frame_weeks, p->new_frames[i], p->week);
        if (p->series.len)
            remember(&s->series_weeks, p->series_id, p->week);
    }
    pthread_mutex_unlock(&s->cache_mu);
    return 0;
}

static size_t pend_bytes(const struct ch_pend *p)
{
    return p->rows.len + p->stacks.len + p->frames.len + p->series.len;
}

/* Queues p on its shard; await_commit then waits for (or leads) the commit that takes it. */
static void enqueue(struct ch_store *s, uint32_t shard, struct ch_pend *p)
{
    struct ch_shard *sh = &s->shards[shard];
    pthread_mutex_lock(&sh->qmu);
    p->next = NULL;
    *sh->qtail = p;
    sh->qtail = &p->next;
    pthread_mutex_unlock(&sh->qmu);
}

/* Returns when a commit that includes p (queued by enqueue) has finished: a commit another
 * writer leads, or one led here with everything queued on the shard. */
static int await_commit(struct ch_store *s, uint32_t shard, struct ch_pend *p, char *err)
{
    struct ch_shard *sh = &s->shards[shard];
    pthread_mutex_lock(&sh->qmu);
    while (!p->done) {
        if (sh->leader) {
            pthread_cond_wait(&sh->qcond, &sh->qmu);
            continue;
        }
        /* lead: take what is queued, up to a batch's bytes */
        sh->leader = 1;
        struct ch_pend *batch = sh->queue, *last = batch;
        size_t bytes = pend_bytes(last);
        while (last->next && bytes + pend_bytes(last->next) <= CH_BATCH_BYTES) {
            last = last->next;
            bytes += pend_bytes(last);
        }
        sh->queue = last->next;
        if (!sh->queue)
            sh->qtail = &sh->queue;
        last->next = NULL;
        pthread_mutex_unlock(&sh->qmu);
        char berr[SC_ERR_LEN] = "";
        int rc = commit(s, shard, batch, berr);
        pthread_mutex_lock(&sh->qmu);
        for (struct ch_pend *q = batch; q;) {
            struct ch_pend *next = q->next;
            q->rc = rc;
            memcpy(q->err, berr, SC_ERR_LEN);
            q->done = 1;
            q = next;
        }
        sh->leader = 0;
        pthread_cond_broadcast(&sh->qcond);
    }
    pthread_mutex_unlock(&sh->qmu);
    if (p->rc && err)
        memcpy(err, p->err, SC_ERR_LEN);
    return p->rc;
}

/* ---- the write ---- */

/* The stacks (rows of x, by their first row in u) and frames ClickHouse may not have for
 * p's week, and the series: encoded into p. 0 or SC_ENOMEM. */
static int encode_new(struct ch_store *s, const struct sc_store_write *w, const struct sc_prep *x,
                      const struct uniq *u, const struct sc_buf *canon, struct ch_pend *p)
{
    p->new_stacks = malloc(((size_t)u->n + 1) * sizeof *p->new_stacks);
    if (!p->new_stacks)
        return SC_ENOMEM;
    pthread_mutex_lock(&s->cache_mu);
    for (uint32_t i = 0; i < u->n; i++)
        if (!known(&s->stack_weeks, x->stack[u->row[i]], p->week))
            p->new_stacks[p->nnew++] = u->row[i];
    int new_series = !known(&s->series_weeks, p->series_id, p->week);
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
            int have = known(&s->frame_weeks, f.id, p->week);
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

static void pend_release(struct ch_pend *p)
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
static int pend_build(struct ch_store *s, const struct sc_store_write *w, struct ch_pend *p,
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
    if (rc == 0 && (canon.oom || uniq_build(&u, &x) || encode_rows(w, &x, &u, series, &p->rows) ||
                    encode_new(s, w, &x, &u, &canon, p)))
        rc = sc_errf(err, SC_ENOMEM, "out of memory");
    sc_buf_release(&canon);
    sc_prep_release(&x);
    uniq_release(&u);
    return rc;
}

/* The parts of one push (ingest's split by sample labels) are queued on their shards
 * together, so they cost one commit a shard rather than one round trip each. Every part is
 * sent; the answer is the first failure. */
int ch_write_many(struct sc_store *st, const struct sc_store_write *ws, uint32_t n, char *err)
{
    struct ch_store *s = (struct ch_store *)st;
    struct ch_pend *ps = calloc(n ? n : 1, sizeof *ps);
    uint32_t *shards = calloc(n ? n : 1, sizeof *shards);
    int rc = 0;
    uint32_t built = 0;
    if (!ps || !shards)
        rc = sc_errf(err, SC_ENOMEM, "out of memory");
    for (; rc == 0 && built < n; built++)
        rc = pend_build(s, &ws[built], &ps[built], &shards[built], err);
    if (rc == 0) {
        for (uint32_t i = 0; i < n; i++)
            enqueue(s, shards[i], &ps[i]);
        /* each queued part is waited for before it is freed, whatever the others' fate */
        for (uint32_t i = 0; i < n; i++) {
            char perr[SC_ERR_LEN] = "";
            int prc = await_commit(s, shards[i], &ps[i], perr);
            if (prc && !rc) {
                rc = prc;
                if (err)
                    memcpy(err, perr, SC_ERR_LEN);
            }
        }
    }
    for (uint32_t i = 0; i < built; i++)
        pend_release(&ps[i]);
    free(ps);
    free(shards);
    return rc;
}

int ch_write(struct sc_store *st, const struct sc_store_write *w, char *err)
{
    return ch_write_many(st, w, 1, err);
}
