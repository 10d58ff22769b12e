/* store.c - what every store backend shares: options, ids, type rules, and the dispatch. */
#include "store/store_int.h"
#include "model/clock.h"
#include "model/error.h"
#include "model/hash.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

void sc_store_opts_init(struct sc_store_opts *o)
{
    memset(o, 0, sizeof *o);
    o->engine = "sqlite";
    o->dir = "./data";
    o->retention_ns = (int64_t)30 * 24 * 3600 * 1000000000LL;
    o->zstd_level = 3;
    o->durable = 1;
    o->background = 1;
}

int sc_store_open(const struct sc_store_opts *o, struct sc_store **out, char *err)
{
    *out = NULL;
    if (!o->engine || !*o->engine || !strcmp(o->engine, "sqlite"))
        return sc_sqlite_open(o, out, err);
    if (!strcmp(o->engine, "clickhouse"))
        return sc_clickhouse_open(o, out, err);
    return sc_errf(err, SC_EUNSUPPORTED, "unknown storage engine '%s' (sqlite, clickhouse)",
                   o->engine);
}

void sc_store_close(struct sc_store *s)
{
    if (s)
        s->ops->close(s);
}

const char *sc_store_read_only(const struct sc_store *s)
{
    return s && atomic_load(&s->ro) ? s->read_only : NULL;
}

int sc_store_write(struct sc_store *s, const struct sc_store_write *w, char *err)
{
    if (atomic_load(&s->ro))
        return sc_errf(err, SC_ENOSPACE, "%s", s->read_only);
    return s->ops->write(s, w, err);
}

int sc_store_write_many(struct sc_store *s, const struct sc_store_write *ws, uint32_t n, char *err)
{
    if (atomic_load(&s->ro))
        return sc_errf(err, SC_ENOSPACE, "%s", s->read_only);
    if (s->ops->write_many)
        return s->ops->write_many(s, ws, n, err);
    int rc = 0;
    for (uint32_t i = 0; rc == 0 && i < n; i++)
        rc = s->ops->write(s, &ws[i], err);
    return rc;
}

int sc_store_types(struct sc_store *s, const char *tenant, sc_store_type_cb cb, void *ctx,
                   char *err)
{
    return s->ops->types(s, tenant, cb, ctx, err);
}

int sc_store_label_names(struct sc_store *s, const char *tenant, sc_store_str_cb cb, void *ctx,
                         char *err)
{
    return s->ops->label_names(s, tenant, cb, ctx, err);
}

int sc_store_label_values(struct sc_store *s, const char *tenant, const char *name,
                          sc_store_str_cb cb, void *ctx, char *err)
{
    return s->ops->label_values(s, tenant, name, cb, ctx, err);
}

int sc_store_series_list(struct sc_store *s, const char *tenant, const char *type, int64_t from,
                         int64_t until, sc_store_series_cb cb, void *ctx, char *err)
{
    return s->ops->series_list(s, tenant, type, from, until, NULL, cb, ctx, err);
}

int sc_store_series_find(struct sc_store *s, const char *tenant, const char *type, int64_t from,
                         int64_t until, sc_store_match_cb match, sc_store_series_cb cb, void *ctx,
                         char *err)
{
    return s->ops->series_list(s, tenant, type, from, until, match, cb, ctx, err);
}

int sc_store_type_info(struct sc_store *s, const char *type, char unit[64], int *gauge)
{
    return s->ops->type_info(s, type, unit, gauge);
}

int sc_store_read(struct sc_store *s, const struct sc_store_read *r, sc_store_rows_cb cb, void *ctx,
                  char *err)
{
    return s->ops->read(s, r, cb, ctx, err);
}

int sc_store_resolve(struct sc_store *s, const uint64_t *stacks, uint32_t n, sc_store_stack_cb cb,
                     void *ctx, char *err)
{
    return s->ops->resolve(s, stacks, n, cb, ctx, err);
}

int sc_store_span(struct sc_store *s, const struct sc_store_query *q, int64_t *first_ns,
                  int64_t *last_ns, char *err)
{
    return s->ops->span(s, q, first_ns, last_ns, err);
}

int sc_store_timeline(struct sc_store *s, const struct sc_store_query *q, struct sc_store_cells *c,
                      char *err)
{
    if (c->step_ns <= 0 || c->nsteps == 0)
        return sc_errf(err, SC_EINVAL, "bad timeline range or step");
    return s->ops->timeline(s, q, c, err);
}

void sc_store_cells_put(struct sc_store_cells *c, uint32_t i, int64_t t, int64_t v)
{
    int64_t k = sc_floor_div(sc_sub_sat(t, c->from_ns), c->step_ns);
    if (k >= 0 && k < (int64_t)c->nsteps)
        c->value[(size_t)i * c->nsteps + (size_t)k] += (double)v;
}

/* Widens cell (i, k)'s span to [lo, hi], when the caller keeps spans. */
static void cells_span(struct sc_store_cells *c, size_t cell, int64_t lo, int64_t hi)
{
    if (!c->first_ns)
        return;
    if (lo < c->first_ns[cell])
        c->first_ns[cell] = lo;
    if (hi > c->last_ns[cell])
        c->last_ns[cell] = hi;
}

void sc_store_cells_add(struct sc_store_cells *c, uint32_t i, int64_t t, int64_t d, int64_t v)
{
    double *value = c->value + (size_t)i * c->nsteps;
    double *covered = c->covered_ns + (size_t)i * c->nsteps;
    int64_t k0 = sc_floor_div(sc_sub_sat(t, c->from_ns), c->step_ns);
    if (k0 >= 0 && k0 < (int64_t)c->nsteps)
        c->captures[(size_t)i * c->nsteps + (size_t)k0]++;
    if (c->gauge || d <= 0) {
        c->nodur += !c->gauge;
        if (k0 >= 0 && k0 < (int64_t)c->nsteps) {
            value[k0] += (double)v;
            cells_span(c, (size_t)i * c->nsteps + (size_t)k0, t, t);
        }
        return;
    }
    /* the steps [t, t + d) overlaps, each its share of v and of d */
    int64_t end = sc_add_sat(t, d);
    int64_t k1 = sc_floor_div(sc_sub_sat(end - 1, c->from_ns), c->step_ns);
    if (k0 < 0)
        k0 = 0;
    if (k1 >= (int64_t)c->nsteps)
        k1 = (int64_t)c->nsteps - 1;
    for (int64_t k = k0; k <= k1; k++) {
        /* saturating: a century in one step of 9223372036 s ends past int64 */
        int64_t a = sc_add_sat(c->from_ns, sc_mul_sat(k, c->step_ns));
        int64_t b = sc_add_sat(a, c->step_ns);
        int64_t lo = t > a ? t : a, hi = end < b ? end : b;
        if (hi <= lo)
            continue;
        double share = (double)(hi - lo) / (double)d;
        value[k] += (double)v * share;
        covered[k] += (double)(hi - lo);
        cells_span(c, (size_t)i * c->nsteps + (size_t)k, lo, hi);
    }
}

int sc_store_compact(struct sc_store *s, int64_t now_ns, int force, char *err)
{
    if (atomic_load(&s->ro))
        return 0; /* nothing to write it with: reads merge raw profiles where rollups lag */
    return s->ops->compact(s, now_ns, force, err);
}

int sc_store_stats(struct sc_store *s, struct sc_store_stats *st, char *err)
{
    return s->ops->stats(s, st, err);
}

int sc_store_shard_stats(struct sc_store *s, uint32_t i, struct sc_store_shard_stats *st)
{
    memset(st, 0, sizeof *st);
    return s->ops->shard_stats ? s->ops->shard_stats(s, i, st) : 0;
}

int sc_rows_reserve(uint64_t **stacks, int64_t **vals, int64_t **times, uint32_t n, uint32_t *cap)
{
    const struct sc_grow_part cols[] = {
        {stacks, sizeof **stacks}, {vals, sizeof **vals}, {times, sizeof **vals}};
    return sc_grow_arrays(cap, (uint64_t)n + 1, -1, cols, times ? 3 : 2);
}

int sc_store_over_budget(const struct sc_store *s, char *err)
{
    return sc_errf(err, SC_ELIMIT,
                   "the query reads more than %llu stored blocks (the server's query budget, "
                   "server.max_read_blocks): narrow the time range or the selection",
                   (unsigned long long)s->opts.max_read_blocks);
}

/* A frame id is XXH3 over 32 bytes: the XXH3 of the function name, of the file name and
 * of the binary, and the line, each 8 bytes little-endian. Hashing the strings separately
 * lets a writer hash each function name once per profile, and no choice of strings can
 * collide by shifting bytes between fields. */
uint64_t sc_frame_id_from(uint64_t hfunction, uint64_t hfile, uint64_t hbinary, int64_t line)
{
    uint64_t parts[4] = {hfunction, hfile, hbinary, (uint64_t)line};
    unsigned char b[32];
    for (int i = 0; i < 4; i++)
        for (int k = 0; k < 8; k++)
            b[8 * i + k] = (unsigned char)(parts[i] >> (8 * k));
    return sc_hash64(b, sizeof b);
}

uint64_t sc_frame_id(const char *function, size_t flen, const char *file, size_t filelen,
                     int64_t line, const char *binary, size_t blen)
{
    return sc_frame_id_from(sc_hash64(function, flen), sc_hash64(file, filelen),
                            sc_hash64(binary, blen), line);
}

int sc_type_is_gauge(const char *profile, const char *sample_type)
{
    (void)profile;
    return !strcmp(sample_type, "inuse_space") || !strcmp(sample_type, "inuse_objects") ||
           !strcmp(sample_type, "goroutine") || !strcmp(sample_type, "goroutines") ||
           !strcmp(sample_type, "threadcreate");
}

/* Waits ns on bg's condition (bg->mu held) or until the thread is being stopped: 1 then. */
static int bg_wait(struct sc_store_bg *bg, int64_t ns)
{
    struct timespec ts;
    sc_deadline(&ts, ns);
    int rc = 0;
    while (!bg->stop && rc == 0)
        rc = pthread_cond_timedwait(&bg->cond, &bg->mu, &ts);
    return bg->stop;
}

static void *bg_main(void *arg)
{
    struct sc_store_bg *bg = arg;
    pthread_mutex_lock(&bg->mu);
    for (int pass = 0; !bg_wait(bg, pass ? bg->every_ns : bg->first_ns); pass++) {
        pthread_mutex_unlock(&bg->mu);
        char err[SC_ERR_LEN] = "";
        int rc = bg->fn(bg->arg, err);
        pthread_mutex_lock(&bg->mu);
        if (rc < 0) {
            bg->errors++;
            snprintf(bg->error, sizeof bg->error, "%s", *err ? err : sc_strerror(rc));
        }
    }
    pthread_mutex_unlock(&bg->mu);
    return NULL;
}

int sc_store_bg_start(struct sc_store *s, struct sc_store_bg *bg, int64_t first_ns,
                      int64_t every_ns, int (*fn)(void *arg, char *err), void *arg)
{
    memset(bg, 0, sizeof *bg);
    pthread_mutex_init(&bg->mu, NULL);
    sc_cond_init(&bg->cond);
    bg->first_ns = first_ns;
    bg->every_ns = every_ns;
    bg->fn = fn;
    bg->arg = arg;
    bg->running = pthread_create(&bg->thread, NULL, bg_main, bg) == 0;
    if (bg->running)
        s->bg = bg;
    return bg->running ? 0 : SC_EIO;
}

uint64_t sc_store_bg_errors(struct sc_store *s, char *last, size_t n)
{
    struct sc_store_bg *bg = s ? s->bg : NULL;
    if (n)
        *last = 0;
    if (!bg)
        return 0;
    pthread_mutex_lock(&bg->mu);
    uint64_t errors = bg->errors;
    if (n)
        snprintf(last, n, "%s", bg->error);
    pthread_mutex_unlock(&bg->mu);
    return errors;
}

void sc_store_bg_every(struct sc_store_bg *bg, int64_t every_ns)
{
    pthread_mutex_lock(&bg->mu);
    bg->every_ns = every_ns;
    pthread_mutex_unlock(&bg->mu);
}

int sc_store_bg_pause(struct sc_store_bg *bg, int64_t ns)
{
    pthread_mutex_lock(&bg->mu);
    int stop = bg_wait(bg, ns);
    pthread_mutex_unlock(&bg->mu);
    return stop;
}

void sc_store_bg_stop(struct sc_store_bg *bg)
{
    if (!bg->running)
        return;
    pthread_mutex_lock(&bg->mu);
    bg->stop = 1;
    pthread_cond_signal(&bg->cond);
    pthread_mutex_unlock(&bg->mu);
    pthread_join(bg->thread, NULL);
    bg->running = 0;
    /* mu and cond stay as they are until the store's memory goes (glibc's destroy frees
     * nothing): a reader of sc_store_bg_errors on another thread (/metrics, the server's
     * loop) may take mu at any time, during this stop or after it, and then finds the last
     * count, not a destroyed mutex */
}
