/* clickhouse.c - profiles in ClickHouse over its HTTP interface: tables, listings, upkeep.
 *
 * The layout, the locks and who does what are in clickhouse_int.h; docs/storage.md has the
 * tables' DDL and what ClickHouse 18.16 does and does not have.
 */
#include "store/clickhouse_int.h"
#include "model/clock.h"
#include "model/error.h"
#include "model/dl_curl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int64_t ch_cutoff(const struct ch_store *s)
{
    int64_t r = s->base.opts.retention_ns;
    return r > 0 ? sc_wall_ns() - r : 0;
}

/* ---- tables ---- */

/* The local tables and the views that fill the rollups, in creation order; "%s" is the
 * database. Only what ClickHouse 18.16 has: no TTL, no Map or LowCardinality columns, one
 * ARRAY JOIN per query, materialized views without subqueries. */
static const char *const local_ddl[] = {
    "CREATE TABLE IF NOT EXISTS %s.scorch_profiles_local (tenant String, type String, "
    "series UInt64, time_ns Int64, duration_ns Int64, unit String, timed UInt8, total Int64, "
    "nsamples UInt32, stacks Array(UInt64), values Array(Int64), times Array(Int64), "
    "push UInt64) ENGINE = MergeTree() "
    "PARTITION BY intDiv(time_ns, 86400000000000) ORDER BY (tenant, type, series, time_ns)",
    /* a row per profile, type and resolution, summed by key as parts merge: the
     * Nested "...Map" column sums its values by stack (SummingMergeTree's map rule) */
    "CREATE TABLE IF NOT EXISTS %s.scorch_rollup_local (tenant String, type String, "
    "res UInt32, series UInt64, bucket Int64, unit String, profiles UInt64, duration Int64, "
    "total Int64, stackMap Nested(stack UInt64, value Int64), pushes UInt64) "
    "ENGINE = SummingMergeTree() "
    "PARTITION BY intDiv(bucket, 86400) ORDER BY (tenant, type, res, series, bucket, unit)",
    /* looked up by random ids: small granules, so a lookup reads little besides its own */
    "CREATE TABLE IF NOT EXISTS %s.scorch_stacks_local (stack UInt64, week UInt32, "
    "frames Array(UInt64), inlined Array(UInt8)) ENGINE = ReplacingMergeTree() "
    "PARTITION BY week ORDER BY stack SETTINGS index_granularity = 1024",
    "CREATE TABLE IF NOT EXISTS %s.scorch_frames_local (frame UInt64, week UInt32, "
    "function String, file String, line Int64, binary String) ENGINE = ReplacingMergeTree() "
    "PARTITION BY week ORDER BY frame SETTINGS index_granularity = 1024",
    "CREATE TABLE IF NOT EXISTS %s.scorch_series_local (tenant String, series UInt64, "
    "week UInt32, labels String, names Array(String), values Array(String)) "
    "ENGINE = ReplacingMergeTree() PARTITION BY week ORDER BY (tenant, series)",
    /* tables made before push ids ('?': 18.16 has no ADD COLUMN IF NOT EXISTS, so an
     * error other than "unavailable" is taken for "it exists") */
    "?ALTER TABLE %s.scorch_profiles_local ADD COLUMN push UInt64",
    /* a rollup row's profiles' push ids summed (wrapping, and summed again as parts merge):
     * what makes two rollup blocks the same only when they sum the same profiles. Inserted
     * through a Null table, whose views' Replicated targets leave out a block they hold
     * already, a batch's rollups equal to an earlier batch's (the same profile content
     * pushed twice into a bucket) would be left out without it */
    "?ALTER TABLE %s.scorch_rollup_local ADD COLUMN pushes UInt64",
    /* what scorch inserts: profile rows (res 0) and the rollups it summed of them
     * (clickhouse_write.c), in one insert that the views below send to their tables. The
     * views that summed the rollups in ClickHouse (a row per profile, then a sumMap per
     * insert: most of its CPU) are dropped: with them the rollups would be counted twice */
    "DROP TABLE IF EXISTS %s.scorch_rollup_mv",
    "DROP TABLE IF EXISTS %s.scorch_rollup_sum_mv",
    "CREATE TABLE IF NOT EXISTS %s.scorch_ingest_local (tenant String, type String, "
    "series UInt64, time_ns Int64, duration_ns Int64, unit String, timed UInt8, total Int64, "
    "nsamples UInt32, stacks Array(UInt64), values Array(Int64), times Array(Int64), "
    "push UInt64, res UInt32, profiles UInt64) ENGINE = Null",
    "CREATE MATERIALIZED VIEW IF NOT EXISTS %1$s.scorch_ingest_profiles_mv TO "
    "%1$s.scorch_profiles_local AS SELECT tenant, type, series, time_ns, duration_ns, unit, "
    "timed, total, nsamples, stacks, values, times, push FROM %1$s.scorch_ingest_local "
    "WHERE res = 0",
    /* a rollup row: time_ns is its bucket (seconds), duration_ns its profiles' durations */
    "CREATE MATERIALIZED VIEW IF NOT EXISTS %1$s.scorch_ingest_rollup_mv TO "
    "%1$s.scorch_rollup_local AS SELECT tenant, type, res, series, time_ns AS bucket, unit, "
    "profiles, duration_ns AS duration, total, stacks AS `stackMap.stack`, "
    "values AS `stackMap.value`, push AS pushes FROM %1$s.scorch_ingest_local WHERE res != 0",
};

/* The tables reads use with a cluster (without a sharding key: scorch inserts into the
 * shards itself, see clickhouse_write.c). */
static const char *const dist_tables[] = {"profiles", "rollup", "stacks", "frames", "series"};

static int statement(struct ch_store *s, struct ch_endpoint *e, const char *sql, int system,
                     char *err)
{
    struct ch_req r = {sql, NULL, 0, s->base.opts.query_timeout_ns, CH_SMALL_ANSWER, NULL, system};
    return ch_request(s, e, &r, err);
}

/* A local table's DDL for replicated shards: "ENGINE = XMergeTree()" becomes
 * "ENGINE = ReplicatedXMergeTree('/clickhouse/tables/{shard}/<db>.<table>', '{replica}')",
 * the macros each server's configuration defines. */
static void replicated_ddl(const char *sql, struct sc_buf *out)
{
    const char *create = "CREATE TABLE IF NOT EXISTS ";
    const char *eng = strstr(sql, " ENGINE = ");
    const char *par = eng ? strstr(eng, "()") : NULL;
    if (strncmp(sql, create, strlen(create)) || !eng || !par) {
        sc_buf_puts(out, sql);
        return;
    }
    const char *name = sql + strlen(create);
    size_t nlen = strcspn(name, " (");
    eng += strlen(" ENGINE = ");
    sc_buf_append(out, sql, (size_t)(eng - sql));
    sc_buf_puts(out, "Replicated");
    sc_buf_append(out, eng, (size_t)(par - eng));
    sc_buf_puts(out, "('/clickhouse/tables/{shard}/");
    sc_buf_append(out, name, nlen);
    sc_buf_puts(out, "', '{replica}')");
    sc_buf_puts(out, par + 2);
}

/* The tables on one server: local tables (Replicated when the shards have replicas) and,
 * with a cluster, the Distributed tables over them. */
static int create_on(struct ch_store *s, struct ch_endpoint *e, char *err)
{
    char sql[2048];
    snprintf(sql, sizeof sql, "CREATE DATABASE IF NOT EXISTS %s", s->db);
    int rc = statement(s, e, sql, 1, err);
    for (size_t k = 0; rc == 0 && k < sizeof local_ddl / sizeof local_ddl[0]; k++) {
        int optional = local_ddl[k][0] == '?';
        snprintf(sql, sizeof sql, local_ddl[k] + optional, s->db);
        struct sc_buf ddl = SC_BUF_INIT;
        if (s->replicated)
            replicated_ddl(sql, &ddl);
        else
            sc_buf_puts(&ddl, sql);
        char serr[SC_ERR_LEN];
        rc = ddl.oom ? sc_errf(serr, SC_ENOMEM, "out of memory")
                     : statement(s, e, ddl.data, 0, serr);
        sc_buf_release(&ddl);
        if (rc && optional && rc != SC_EUNAVAIL)
            rc = 0;
        else if (rc && err)
            memcpy(err, serr, SC_ERR_LEN);
    }
    for (size_t k = 0; rc == 0 && s->cluster && k < sizeof dist_tables / sizeof dist_tables[0];
         k++) {
        char cl[256];
        struct sc_buf lit = SC_BUF_INIT;
        ch_sql_str(&lit, s->cluster, strlen(s->cluster));
        snprintf(cl, sizeof cl, "%s", lit.data ? lit.data : "''");
        sc_buf_release(&lit);
        snprintf(sql, sizeof sql,
                 "CREATE TABLE IF NOT EXISTS %1$s.scorch_%2$s AS %1$s.scorch_%2$s_local "
                 "ENGINE = Distributed(%3$s, '%1$s', 'scorch_%2$s_local')",
                 s->db, dist_tables[k], cl);
        rc = statement(s, e, sql, 0, err);
    }
    return rc;
}

int ch_create_tables(struct ch_store *s, uint32_t i, char *err)
{
    int rc = 0;
    if (i < s->nshards)
        for (uint32_t r = 0; rc == 0 && r < s->shards[i].nreps; r++)
            rc = create_on(s, &s->shards[i].reps[r], err);
    else
        for (uint32_t r = 0; rc == 0 && r < s->nqueries; r++)
            rc = create_on(s, &s->queries[r], err);
    return rc;
}

/* With a cluster: it must exist and have as many shards as storage.shards lists. */
static int check_cluster(struct ch_store *s, char *err)
{
    struct sc_buf sql = SC_BUF_INIT, ans = SC_BUF_INIT;
    sc_buf_puts(&sql, "SELECT uniqExact(shard_num) FROM system.clusters WHERE cluster = ");
    ch_sql_str(&sql, s->cluster, strlen(s->cluster));
    sc_buf_puts(&sql, " FORMAT RowBinary");
    struct ch_req req = {sql.data,        NULL, 0, s->base.opts.query_timeout_ns,
                         CH_SMALL_ANSWER, &ans, 1};
    int rc =
        sql.oom ? sc_errf(err, SC_ENOMEM, "out of memory") : ch_request(s, ch_qep(s), &req, err);
    struct ch_rd r = {(const uint8_t *)ans.data, (const uint8_t *)ans.data + ans.len, 0};
    uint64_t n = ch_get_u64(&r);
    if (rc == 0 && n == 0)
        rc = sc_errf(err, SC_EINVAL, "cluster '%s' is not in the remote_servers of %s", s->cluster,
                     ch_qep(s)->url);
    else if (rc == 0 && n != s->nshards)
        rc = sc_errf(err, SC_EINVAL,
                     "cluster '%s' has %llu shards, storage.shards lists %u (one URL per shard, "
                     "in remote_servers' order)",
                     s->cluster, (unsigned long long)n, (unsigned)s->nshards);
    sc_buf_release(&sql);
    sc_buf_release(&ans);
    return rc;
}

/* ---- types ---- */

int ch_type_lookup(struct ch_store *s, const char *type, char unit[64], int *gauge, char *err)
{
    *gauge = 0;
    unit[0] = 0;
    const char *colon = strchr(type ? type : "", ':');
    if (!colon)
        return SC_ENOTFOUND;
    char pname[128];
    snprintf(pname, sizeof pname, "%.*s", (int)((size_t)(colon - type) < 127 ? colon - type : 127),
             type);
    *gauge = sc_type_is_gauge(pname, colon + 1);
    pthread_mutex_lock(&s->cache_mu);
    for (uint32_t i = 0; i < s->ntypes; i++)
        if (!strcmp(s->types[i].id, type)) {
            memcpy(unit, s->types[i].unit, 64);
            pthread_mutex_unlock(&s->cache_mu);
            return 0;
        }
    pthread_mutex_unlock(&s->cache_mu);
    /* any tenant's, as the other backends answer: a type is a name and a unit */
    struct sc_buf sql = SC_BUF_INIT, ans = SC_BUF_INIT;
    sc_buf_puts(&sql, "SELECT unit FROM ");
    ch_sql_table(s, &sql, "rollup");
    sc_buf_puts(&sql, " WHERE type = ");
    ch_sql_str(&sql, type, strlen(type));
    sc_buf_puts(&sql, " LIMIT 1 FORMAT RowBinary");
    int rc = sql.oom ? sc_errf(err, SC_ENOMEM, "out of memory")
                     : ch_query(s, sql.data, CH_SMALL_ANSWER, &ans, err);
    struct ch_rd r = {(const uint8_t *)ans.data, (const uint8_t *)ans.data + ans.len, 0};
    if (rc == 0 && ans.len == 0)
        rc = SC_ENOTFOUND;
    if (rc == 0) {
        struct sc_str u = ch_get_str(&r);
        if (r.bad)
            rc = sc_errf(err, SC_EIO, "clickhouse: a malformed answer");
        snprintf(unit, 64, "%.*s", (int)(u.len < 63 ? u.len : 63), u.ptr);
    }
    if (rc == 0) {
        pthread_mutex_lock(&s->cache_mu);
        if (s->ntypes == CH_MAX_TYPES) {
            for (uint32_t i = 0; i < s->ntypes; i++)
                free(s->types[i].id);
            s->ntypes = 0;
        }
        struct ch_type *t = &s->types[s->ntypes];
        t->id = strdup(type);
        if (t->id) {
            memcpy(t->unit, unit, 64);
            t->gauge = *gauge;
            s->ntypes++;
        }
        pthread_mutex_unlock(&s->cache_mu);
    }
    sc_buf_release(&sql);
    sc_buf_release(&ans);
    return rc;
}

static int ch_type_info(struct sc_store *st, const char *type, char unit[64], int *gauge)
{
    char err[SC_ERR_LEN];
    int rc = ch_type_lookup((struct ch_store *)st, type, unit, gauge, err);
    /* Unreachable: say the type exists, so the read that follows fails with the reason
     * (this call has no room for one) instead of "no profiles of type". */
    return rc == SC_ENOTFOUND ? rc : 0;
}

/* ---- listings ---- */

/* Appends "SELECT series FROM raw ... UNION ALL SELECT series FROM rollup ...": the series
 * with profiles (of type, when given) in [from, until), within retention. */
static void sql_live_series(struct ch_store *s, struct sc_buf *b, const char *tenant,
                            const char *type, int64_t from, int64_t until)
{
    int64_t cut = ch_cutoff(s);
    if (from < cut)
        from = cut;
    struct ch_piece p[CH_MAX_PIECES];
    uint32_t n = from < until ? ch_pieces(from, until, SC_ROLLUP_DAY, p) : 0;
    int parts = 0;
    for (int half = 0; half < 2; half++) {
        if (!ch_pieces_have(p, n, half))
            continue;
        sc_buf_puts(b, parts++ ? " UNION ALL SELECT series FROM " : "SELECT series FROM ");
        ch_sql_table(s, b, half ? "rollup" : "profiles");
        sc_buf_puts(b, " WHERE tenant = ");
        ch_sql_str(b, tenant, strlen(tenant));
        if (type) {
            sc_buf_puts(b, " AND type = ");
            ch_sql_str(b, type, strlen(type));
        }
        sc_buf_puts(b, " AND ");
        if (half)
            ch_sql_rollup_cond(b, p, n);
        else
            ch_sql_raw_cond(b, p, n);
    }
    if (!parts)
        sc_buf_puts(b, "SELECT toUInt64(0) AS series WHERE 0");
}

/* " AND series [GLOBAL] IN (live series)" when retention may have taken some. */
static void sql_live_filter(struct ch_store *s, struct sc_buf *b, const char *tenant)
{
    if (s->base.opts.retention_ns <= 0)
        return;
    sc_buf_puts(b, s->cluster ? " AND series GLOBAL IN (" : " AND series IN (");
    sql_live_series(s, b, tenant, NULL, INT64_MIN, INT64_MAX);
    sc_buf_putc(b, ')');
}

/* An answer's string as a C string, in scratch (valid until its next use); NULL: no
 * memory. */
static const char *cstr(struct sc_buf *scratch, struct sc_str v)
{
    scratch->len = 0;
    sc_buf_append(scratch, v.ptr, v.len);
    sc_buf_putc(scratch, 0);
    return scratch->oom ? NULL : scratch->data;
}

/* Runs a query whose answer is rows of strings and hands each to cb. */
static int list_strings(struct ch_store *s, const struct sc_buf *sql, sc_store_str_cb cb, void *ctx,
                        char *err)
{
    struct sc_buf ans = SC_BUF_INIT;
    int rc = sql->oom ? sc_errf(err, SC_ENOMEM, "out of memory")
                      : ch_query(s, sql->data, s->max_answer, &ans, err);
    struct ch_rd r = {(const uint8_t *)ans.data, (const uint8_t *)ans.data + ans.len, 0};
    struct sc_buf tmp = SC_BUF_INIT;
    while (rc == 0 && r.p < r.end) {
        struct sc_str v = ch_get_str(&r);
        if (r.bad) {
            rc = sc_errf(err, SC_EIO, "clickhouse: a malformed answer");
            break;
        }
        const char *c = cstr(&tmp, v);
        if (!c) {
            rc = sc_errf(err, SC_ENOMEM, "out of memory");
            break;
        }
        if (cb(ctx, c))
            break;
    }
    sc_buf_release(&tmp);
    sc_buf_release(&ans);
    return rc;
}

static int ch_label_names(struct sc_store *st, const char *tenant, sc_store_str_cb cb, void *ctx,
                          char *err)
{
    struct ch_store *s = (struct ch_store *)st;
    ch_wait_inserted(s);
    const char *t = tenant ? tenant : "";
    struct sc_buf sql = SC_BUF_INIT;
    sc_buf_puts(&sql, "SELECT DISTINCT arrayJoin(names) AS n FROM ");
    ch_sql_table(s, &sql, "series");
    sc_buf_puts(&sql, " WHERE tenant = ");
    ch_sql_str(&sql, t, strlen(t));
    sql_live_filter(s, &sql, t);
    sc_buf_puts(&sql, " ORDER BY n FORMAT RowBinary");
    int rc = list_strings(s, &sql, cb, ctx, err);
    sc_buf_release(&sql);
    return rc;
}

static int ch_label_values(struct sc_store *st, const char *tenant, const char *name,
                           sc_store_str_cb cb, void *ctx, char *err)
{
    struct ch_store *s = (struct ch_store *)st;
    ch_wait_inserted(s);
    const char *t = tenant ? tenant : "";
    struct sc_buf sql = SC_BUF_INIT;
    sc_buf_puts(&sql, "SELECT DISTINCT values[indexOf(names, ");
    ch_sql_str(&sql, name, strlen(name));
    sc_buf_puts(&sql, ")] AS v FROM ");
    ch_sql_table(s, &sql, "series");
    sc_buf_puts(&sql, " WHERE tenant = ");
    ch_sql_str(&sql, t, strlen(t));
    sc_buf_puts(&sql, " AND has(names, ");
    ch_sql_str(&sql, name, strlen(name));
    sc_buf_putc(&sql, ')');
    sql_live_filter(s, &sql, t);
    sc_buf_puts(&sql, " ORDER BY v FORMAT RowBinary");
    int rc = list_strings(s, &sql, cb, ctx, err);
    sc_buf_release(&sql);
    return rc;
}

static int ch_series_list(struct sc_store *st, const char *tenant, const char *type, int64_t from,
                          int64_t until, sc_store_match_cb match, sc_store_series_cb cb, void *ctx,
                          char *err)
{
    struct ch_store *s = (struct ch_store *)st;
    ch_wait_inserted(s);
    const char *t = tenant ? tenant : "";
    struct sc_buf sql = SC_BUF_INIT, ans = SC_BUF_INIT;
    sc_buf_puts(&sql, "SELECT series, any(labels) AS l FROM ");
    ch_sql_table(s, &sql, "series");
    sc_buf_puts(&sql, " WHERE tenant = ");
    ch_sql_str(&sql, t, strlen(t));
    sc_buf_puts(&sql, s->cluster ? " AND series GLOBAL IN (" : " AND series IN (");
    sql_live_series(s, &sql, t, type && *type ? type : NULL, from, until);
    sc_buf_puts(&sql, ") GROUP BY series ORDER BY l FORMAT RowBinary");
    int rc = sql.oom ? sc_errf(err, SC_ENOMEM, "out of memory")
                     : ch_query(s, sql.data, s->max_answer, &ans, err);
    struct ch_rd r = {(const uint8_t *)ans.data, (const uint8_t *)ans.data + ans.len, 0};
    struct sc_buf tmp = SC_BUF_INIT;
    while (rc == 0 && r.p < r.end) {
        uint64_t id = ch_get_u64(&r);
        struct sc_str l = ch_get_str(&r);
        if (r.bad) {
            rc = sc_errf(err, SC_EIO, "clickhouse: a malformed answer");
            break;
        }
        struct sc_store_series se = {id, cstr(&tmp, l)};
        if (!se.labels) {
            rc = sc_errf(err, SC_ENOMEM, "out of memory");
            break;
        }
        if (match && !match(ctx, se.labels))
            continue; /* the live series came in one query: nothing saved, the same answer */
        if (cb(ctx, &se))
            break;
    }
    sc_buf_release(&tmp);
    sc_buf_release(&sql);
    sc_buf_release(&ans);
    return rc;
}

static int ch_types(struct sc_store *st, const char *tenant, sc_store_type_cb cb, void *ctx,
                    char *err)
{
    struct ch_store *s = (struct ch_store *)st;
    ch_wait_inserted(s);
    const char *t = tenant ? tenant : "";
    int64_t from = ch_cutoff(s);
    struct ch_piece p[CH_MAX_PIECES];
    uint32_t n = ch_pieces(from, INT64_MAX, SC_ROLLUP_DAY, p);
    struct sc_buf sql = SC_BUF_INIT, ans = SC_BUF_INIT;
    sc_buf_puts(&sql, "SELECT type, min(unit) AS u FROM (");
    int parts = 0;
    for (int half = 0; half < 2; half++) {
        if (!ch_pieces_have(p, n, half))
            continue;
        sc_buf_puts(&sql,
                    parts++ ? " UNION ALL SELECT type, unit FROM " : "SELECT type, unit FROM ");
        ch_sql_table(s, &sql, half ? "rollup" : "profiles");
        sc_buf_puts(&sql, " WHERE tenant = ");
        ch_sql_str(&sql, t, strlen(t));
        sc_buf_puts(&sql, " AND ");
        if (half)
            ch_sql_rollup_cond(&sql, p, n);
        else
            ch_sql_raw_cond(&sql, p, n);
        sc_buf_puts(&sql, " GROUP BY type, unit");
    }
    sc_buf_puts(&sql, ") GROUP BY type ORDER BY type FORMAT RowBinary");
    int rc = sql.oom ? sc_errf(err, SC_ENOMEM, "out of memory")
                     : ch_query(s, sql.data, s->max_answer, &ans, err);
    struct ch_rd r = {(const uint8_t *)ans.data, (const uint8_t *)ans.data + ans.len, 0};
    struct sc_buf tmp = SC_BUF_INIT;
    while (rc == 0 && r.p < r.end) {
        struct sc_str id = ch_get_str(&r);
        struct sc_str unit = ch_get_str(&r);
        const char *colon = memchr(id.ptr, ':', id.len);
        if (r.bad || !colon) {
            rc = sc_errf(err, SC_EIO, "clickhouse: a malformed answer");
            break;
        }
        /* id, profile, sample type, unit: NUL-separated in tmp */
        size_t plen = (size_t)(colon - id.ptr);
        tmp.len = 0;
        sc_buf_append(&tmp, id.ptr, id.len);
        sc_buf_putc(&tmp, 0);
        sc_buf_append(&tmp, id.ptr, plen);
        sc_buf_putc(&tmp, 0);
        sc_buf_append(&tmp, colon + 1, id.len - plen - 1);
        sc_buf_putc(&tmp, 0);
        sc_buf_append(&tmp, unit.ptr, unit.len);
        sc_buf_putc(&tmp, 0);
        if (tmp.oom) {
            rc = sc_errf(err, SC_ENOMEM, "out of memory");
            break;
        }
        struct sc_store_type ty = {tmp.data, tmp.data + id.len + 1, tmp.data + id.len + plen + 2,
                                   tmp.data + 2 * (size_t)id.len + 2, 0};
        ty.gauge = sc_type_is_gauge(ty.profile, ty.sample_type);
        if (cb(ctx, &ty))
            break;
    }
    sc_buf_release(&tmp);
    sc_buf_release(&sql);
    sc_buf_release(&ans);
    return rc;
}

/* ---- upkeep: retention, stats ---- */

/* The tables and the days their partitions span (profiles and rollups by day; stacks,
 * frames and series by week, written again in each week that uses them). */
static const struct {
    const char *name;
    int days;
} all_tables[] = {{"profiles", 1},
                  {"rollup", 1},
                  {"stacks", CH_WEEK_DAYS},
                  {"frames", CH_WEEK_DAYS},
                  {"series", CH_WEEK_DAYS}};
#define NTABLES (sizeof all_tables / sizeof all_tables[0])

/* Drops, on every shard, the partitions that end before the cutoff. */
static int retain(struct ch_store *s, int64_t now, char *err)
{
    int64_t cutoff = now - s->base.opts.retention_ns;
    if (cutoff < CH_DAY_NS)
        return 0;
    int rc = 0;
    for (uint32_t i = 0; i < s->nshards && rc == 0; i++) {
        struct sc_buf sql = SC_BUF_INIT, ans = SC_BUF_INIT;
        sc_buf_puts(&sql, "SELECT DISTINCT table, partition FROM system.parts WHERE active AND "
                          "database = ");
        ch_sql_str(&sql, s->db, strlen(s->db));
        sc_buf_puts(&sql, " AND table IN (");
        for (size_t k = 0; k < NTABLES; k++)
            sc_buf_printf(&sql, "%s'scorch_%s_local'", k ? ", " : "", all_tables[k].name);
        sc_buf_puts(&sql, ") FORMAT RowBinary");
        struct ch_req req = {sql.data,      NULL, 0, s->base.opts.query_timeout_ns,
                             s->max_answer, &ans, 1};
        rc = sql.oom ? sc_errf(err, SC_ENOMEM, "out of memory")
                     : ch_request(s, ch_ep(&s->shards[i]), &req, err);
        struct ch_rd r = {(const uint8_t *)ans.data, (const uint8_t *)ans.data + ans.len, 0};
        while (rc == 0 && r.p < r.end) {
            struct sc_str table = ch_get_str(&r);
            struct sc_str part = ch_get_str(&r);
            if (r.bad) {
                rc = sc_errf(err, SC_EIO, "clickhouse: a malformed answer");
                break;
            }
            char num[32], *end;
            snprintf(num, sizeof num, "%.*s", (int)(part.len < 31 ? part.len : 31), part.ptr);
            long long day = strtoll(num, &end, 10);
            int days = 1;
            for (size_t k = 0; k < NTABLES; k++)
                if (table.len == strlen(all_tables[k].name) + 13 &&
                    !memcmp(table.ptr + 7, all_tables[k].name, table.len - 13))
                    days = all_tables[k].days;
            /* whole partitions only: those that end at or before the cutoff */
            if (*end || end == num || day < 0 || (day + 1) * days > cutoff / CH_DAY_NS)
                continue;
            char stmt[256];
            snprintf(stmt, sizeof stmt, "ALTER TABLE %s.%.*s DROP PARTITION %lld", s->db,
                     (int)(table.len < 100 ? table.len : 100), table.ptr, day);
            char e2[SC_ERR_LEN];
            /* another scorch server may have dropped it first: not an error */
            int drc = statement(s, ch_ep(&s->shards[i]), stmt, 0, e2);
            if (drc == SC_EUNAVAIL)
                rc = sc_errf(err, drc, "%s", e2);
        }
        sc_buf_release(&sql);
        sc_buf_release(&ans);
    }
    return rc;
}

static int ch_compact(struct sc_store *st, int64_t now, int force, char *err)
{
    (void)force; /* rollups are materialized at insert: only retention is left to do */
    struct ch_store *s = (struct ch_store *)st;
    return s->base.opts.retention_ns > 0 ? retain(s, now, err) : 0;
}

static int ch_stats(struct sc_store *st, struct sc_store_stats *out, char *err)
{
    struct ch_store *s = (struct ch_store *)st;
    ch_wait_inserted(s);
    memset(out, 0, sizeof *out);
    int rc = 0;
    for (uint32_t i = 0; i < s->nshards && rc == 0; i++) {
        struct sc_buf sql = SC_BUF_INIT, ans = SC_BUF_INIT;
        sc_buf_puts(&sql, "SELECT table, sum(rows), sum(bytes_on_disk) FROM system.parts WHERE "
                          "active AND database = ");
        ch_sql_str(&sql, s->db, strlen(s->db));
        sc_buf_puts(&sql, " GROUP BY table FORMAT RowBinary");
        struct ch_req req = {sql.data,        NULL, 0, s->base.opts.query_timeout_ns,
                             CH_SMALL_ANSWER, &ans, 1};
        rc = sql.oom ? sc_errf(err, SC_ENOMEM, "out of memory")
                     : ch_request(s, ch_ep(&s->shards[i]), &req, err);
        struct ch_rd r = {(const uint8_t *)ans.data, (const uint8_t *)ans.data + ans.len, 0};
        while (rc == 0 && r.p < r.end) {
            struct sc_str t = ch_get_str(&r);
            uint64_t rows = ch_get_u64(&r), bytes = ch_get_u64(&r);
            if (r.bad) {
                rc = sc_errf(err, SC_EIO, "clickhouse: a malformed answer");
                break;
            }
            out->bytes_on_disk += bytes;
            /* profiles counts the stored (profile, sample type) rows */
            if (t.len == 21 && !memcmp(t.ptr, "scorch_profiles_local", 21))
                out->profiles += rows;
            if (t.len == 19 && !memcmp(t.ptr, "scorch_series_local", 19))
                out->series += rows;
            if (t.len == 19 && !memcmp(t.ptr, "scorch_stacks_local", 19))
                out->stacks += rows;
            if (t.len == 19 && !memcmp(t.ptr, "scorch_rollup_local", 19))
                out->rollups += rows;
        }
        sc_buf_release(&sql);
        sc_buf_release(&ans);
    }
    return rc;
}

static int bg_tick(void *arg, char *err)
{
    struct ch_store *s = arg;
    return ch_compact(&s->base, sc_wall_ns(), 0, err); /* ClickHouse away: next minute */
}

/* ---- open / close ---- */

static void ch_close(struct sc_store *st)
{
    struct ch_store *s = (struct ch_store *)st;
    sc_store_bg_stop(&s->bg);
    /* the flushers insert what the logs hold first (unless their shard is down: it
     * stays in the log for the next start) */
    for (uint32_t i = 0; i < s->nshards; i++)
        ch_flusher_stop(&s->shards[i]);
    for (uint32_t i = 0; i < s->nshards; i++) {
        struct ch_shard *sh = &s->shards[i];
        ch_log_close(sh);
        for (uint32_t r = 0; r < sh->nreps; r++)
            ch_endpoint_release(&sh->reps[r]);
        free(sh->reps);
        pthread_mutex_destroy(&sh->qmu);
        pthread_cond_destroy(&sh->qcond);
        sc_map64_release(&sh->stack_weeks);
        sc_map64_release(&sh->frame_weeks);
        sc_map64_release(&sh->series_weeks);
    }
    free(s->shards);
    for (uint32_t r = 0; r < s->nqueries; r++)
        ch_endpoint_release(&s->queries[r]);
    free(s->queries);
    for (uint32_t i = 0; i < s->ntypes; i++)
        free(s->types[i].id);
    free(s->types);
    ch_stacks_release(&s->cache);
    sc_arena_release(&s->cache.arena);
    pthread_mutex_destroy(&s->cache_mu);
    pthread_mutex_destroy(&s->read_mu);
    free(s->db);
    free(s->cluster);
    free(s);
}

static int ch_shard_stats(struct sc_store *st, uint32_t i, struct sc_store_shard_stats *out)
{
    struct ch_store *s = (struct ch_store *)st;
    if (i >= s->nshards)
        return 0;
    struct ch_shard *sh = &s->shards[i];
    pthread_mutex_lock(&sh->qmu);
    *out = (struct sc_store_shard_stats){sh->inserts,       sh->insert_errors, sh->duplicates,
                                         sh->batches_ahead, sh->log.pending,   sh->down};
    pthread_mutex_unlock(&sh->qmu);
    return 1;
}

static const struct sc_store_ops clickhouse_ops = {
    .name = "clickhouse",
    .close = ch_close,
    .write = ch_write,
    .write_many = ch_write_many,
    .types = ch_types,
    .label_names = ch_label_names,
    .label_values = ch_label_values,
    .series_list = ch_series_list,
    .type_info = ch_type_info,
    .read = ch_read,
    .resolve = ch_resolve,
    .span = ch_span,
    .timeline = ch_timeline,
    .profiles = ch_profiles,
    .compact = ch_compact,
    .stats = ch_stats,
    .shard_stats = ch_shard_stats,
};

/* Endpoints of a comma-separated list of URLs ("http://a:8123,http://b:8123"). */
static int endpoints_init(const char *list, struct ch_endpoint **out, uint32_t *n, char *err)
{
    *out = NULL;
    *n = 0;
    uint32_t cap = 1;
    for (const char *p = list; *p; p++)
        cap += *p == ',';
    *out = calloc(cap, sizeof **out);
    if (!*out)
        return sc_errf(err, SC_ENOMEM, "out of memory");
    for (const char *p = list;;) {
        size_t len = strcspn(p, ",");
        char url[1024];
        int rc = len == 0 || len >= sizeof url
                     ? sc_errf(err, SC_EINVAL,
                               "bad clickhouse url list '%s' (URLs separated by commas)", list)
                     : 0;
        if (rc == 0) {
            memcpy(url, p, len);
            url[len] = 0;
            rc = ch_endpoint_init(&(*out)[*n], url, err);
        }
        if (rc) {
            while (*n)
                ch_endpoint_release(&(*out)[--*n]);
            free(*out);
            *out = NULL;
            return rc;
        }
        (*n)++;
        if (!p[len])
            return 0;
        p += len + 1;
    }
}

static int valid_ident(const char *s)
{
    if (!s || !*s || strlen(s) > 64)
        return 0;
    for (const char *p = s; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || *p == '_' ||
              (p > s && *p >= '0' && *p <= '9')))
            return 0;
    return 1;
}

int sc_clickhouse_open(const struct sc_store_opts *o, struct sc_store **out, char *err)
{
    *out = NULL;
    const char *db = o->database && *o->database ? o->database : "default";
    if (!o->url || !*o->url)
        return sc_errf(err, SC_EINVAL,
                       "storage clickhouse needs a url (--clickhouse-url, "
                       "storage.url)");
    if (!valid_ident(db))
        return sc_errf(err, SC_EINVAL, "bad clickhouse database name '%s' ([A-Za-z_][A-Za-z0-9_]*)",
                       db);
    int cluster = o->cluster && *o->cluster;
    if (o->nshards > 1 && !cluster)
        return sc_errf(err, SC_EINVAL,
                       "%u shards need a cluster (storage.cluster: its name in "
                       "ClickHouse's remote_servers)",
                       (unsigned)o->nshards);
    if (cluster && o->nshards == 0)
        return sc_errf(err, SC_EINVAL, "a cluster needs its shards' URLs (storage.shards)");
    if (!o->dir || !*o->dir)
        return sc_errf(err, SC_EINVAL,
                       "storage clickhouse needs a data directory for its local log");
    int rc = sc_dl_load(SC_DL_CURL, err);
    if (rc)
        return rc;
    struct ch_store *s = calloc(1, sizeof *s);
    if (!s)
        return sc_errf(err, SC_ENOMEM, "out of memory");
    s->base.ops = &clickhouse_ops;
    s->base.opts = *o;
    /* the option strings are the caller's: only the database is copied, the rest is used
     * while opening (URLs are copied into the endpoints) */
    s->base.opts.shards = NULL;
    s->base.opts.url = NULL;
    s->base.opts.cluster = NULL;
    if (s->base.opts.write_timeout_ns <= 0)
        s->base.opts.write_timeout_ns = 10 * CH_NS;
    if (s->base.opts.query_timeout_ns <= 0)
        s->base.opts.query_timeout_ns = 60 * CH_NS;
    s->max_answer = o->max_answer ? (size_t)o->max_answer : (size_t)1 << 30;
    if (s->max_answer < CH_SMALL_ANSWER)
        s->max_answer = CH_SMALL_ANSWER;
    s->db = strdup(db);
    s->cluster = cluster ? strdup(o->cluster) : NULL;
    s->nshards = o->nshards ? o->nshards : 1;
    s->shards = calloc(s->nshards, sizeof *s->shards);
    s->types = calloc(CH_MAX_TYPES, sizeof *s->types);
    pthread_mutex_init(&s->cache_mu, NULL);
    pthread_mutex_init(&s->read_mu, NULL);
    sc_arena_init(&s->cache.arena);
    rc = !s->db || !s->shards || !s->types || (cluster && !s->cluster)
             ? sc_errf(err, SC_ENOMEM, "out of memory")
             : 0;
    if (rc == 0)
        rc = endpoints_init(o->url, &s->queries, &s->nqueries, err);
    uint32_t ready = 0;
    for (; rc == 0 && ready < s->nshards; ready++) {
        struct ch_shard *sh = &s->shards[ready];
        rc = endpoints_init(o->nshards ? o->shards[ready] : o->url, &sh->reps, &sh->nreps, err);
        if (rc)
            break;
        s->replicated |= sh->nreps > 1;
        pthread_mutex_init(&sh->qmu, NULL);
        sc_cond_init(&sh->qcond);
        sh->index = ready;
        char dir[4096];
        snprintf(dir, sizeof dir, "%s/clickhouse-log/shard-%u", o->dir, (unsigned)ready);
        rc = ch_log_open(s, sh, dir, err);
        if (rc) {
            ready++;
            break;
        }
    }
    if (rc) {
        s->nshards = ready;
        ch_close(&s->base);
        return rc;
    }
    if (cluster)
        rc = check_cluster(s, err);
    for (uint32_t i = 0; rc == 0 && i < s->nshards; i++)
        rc = ch_create_tables(s, i, err);
    /* the query servers that are not a shard's replica get the tables too */
    for (uint32_t q = 0; rc == 0 && q < s->nqueries; q++) {
        int is_shard = 0;
        for (uint32_t i = 0; i < s->nshards; i++)
            for (uint32_t r = 0; r < s->shards[i].nreps; r++)
                is_shard |= !strcmp(s->shards[i].reps[r].url, s->queries[q].url);
        if (!is_shard)
            rc = create_on(s, &s->queries[q], err);
    }
    for (uint32_t i = 0; rc == 0 && i < s->nshards; i++)
        rc = ch_flusher_start(s, &s->shards[i], err);
    if (rc) {
        ch_close(&s->base);
        return rc;
    }
    /* retention soon after open (a restarted server catches up), then every minute */
    if (o->background)
        sc_store_bg_start(&s->base, &s->bg, SC_NS_PER_S, 60 * SC_NS_PER_S, bg_tick, s);
    *out = &s->base;
    return 0;
}
