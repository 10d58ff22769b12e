/* test_store_gc.c - a store that forgets: 40 days written, 30 kept, everything else freed. */
#include "t.h"

#include "formats/folded.h"
#include "formats/input.h"
#include "model/error.h"
#include "model/hash.h"
#include "store/sqlite_int.h"
#include "store/store.h"

#include <stdarg.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define NS 1000000000LL
#define DAY (86400 * NS)
#define DAYS 40
#define KEEP 30
#define PER_DAY 24 /* hourly profiles */
#define K 20       /* stacks of its own a day has */

static char tmpdir[256];
static const int64_t day0 = 1796000000LL / 86400 * 86400 * NS; /* a midnight */

static struct sc_store *open_store(const char *dir, int64_t retention)
{
    struct sc_store_opts o;
    sc_store_opts_init(&o);
    o.dir = dir;
    o.background = 0;
    o.durable = 0;
    o.retention_ns = retention;
    struct sc_store *s = NULL;
    char err[SC_ERR_LEN] = "";
    if (sc_store_open(&o, &s, err))
        fprintf(stderr, "open: %s\n", err);
    return s;
}

/* A store in tmpdir/name (its path in dir) with the given retention; NULL said as failed. */
static struct sc_store *open_in(const char *name, char *dir, size_t n, int64_t retention)
{
    snprintf(dir, n, "%s/%s", tmpdir, name);
    struct sc_store *s = open_store(dir, retention);
    T_CHECK(s != NULL);
    return s;
}

static int write_text(struct sc_store *s, const char *service, int64_t t, const char *text,
                      size_t len)
{
    struct sc_profile *p = sc_profile_new();
    char err[SC_ERR_LEN] = "";
    int rc = sc_folded_decode(text, len, &sc_limits_cli, p, err);
    struct sc_labels l;
    sc_labels_init(&l);
    sc_labels_set(&l, "service_name", 12, service, strlen(service));
    struct sc_store_write w = {NULL, &l, "cpu", t, 10 * NS, p, 0};
    if (rc == 0)
        rc = sc_store_write(s, &w, err);
    if (rc)
        fprintf(stderr, "write: %s\n", err);
    sc_labels_release(&l);
    sc_profile_free(p);
    return rc;
}

/* A day of hourly profiles: a stack every day has and K of the day's own. */
static int write_day(struct sc_store *s, const char *service, int day)
{
    struct sc_buf text = SC_BUF_INIT;
    sc_buf_puts(&text, "main;common;shared 10\n");
    for (int k = 0; k < K; k++)
        sc_buf_printf(&text, "main;day%d;d%d_f%d %d\n", day, day, k, k + 1);
    int rc = 0;
    for (int h = 0; rc == 0 && h < PER_DAY; h++)
        rc = write_text(s, service, day0 + day * DAY + h * 3600 * NS, text.data, text.len);
    sc_buf_release(&text);
    return rc;
}

static off_t file_size(const char *dir)
{
    char path[512];
    snprintf(path, sizeof path, "%s/scorch.db", dir);
    struct stat sb;
    return stat(path, &sb) == 0 ? sb.st_size : -1;
}

static long rss_kb(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kb = -1;
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, "VmRSS:", 6))
            kb = strtol(line + 6, NULL, 10);
    if (f)
        fclose(f);
    return kb;
}

/* What opening a store costs in memory, measured in a fresh child process: RSS after
 * open and one small merge, minus RSS before. */
static long open_cost_kb(const char *dir)
{
    int fds[2];
    if (pipe(fds))
        return -1;
    pid_t pid = fork();
    if (pid == 0) {
        close(fds[0]);
        long before = rss_kb();
        struct sc_store *s = open_store(dir, 0);
        long after = rss_kb();
        long d = s ? after - before : -1;
        if (write(fds[1], &d, sizeof d) != sizeof d)
            _exit(1);
        sc_store_close(s);
        _exit(0);
    }
    close(fds[1]);
    long d = -1;
    if (read(fds[0], &d, sizeof d) != sizeof d)
        d = -1;
    close(fds[0]);
    int status;
    waitpid(pid, &status, 0);
    return d;
}

struct pick {
    const char *labels; /* the series wanted, canonical */
    uint64_t ids[8];
    uint32_t n;
};

static int collect(void *ctx, const struct sc_store_series *se)
{
    struct pick *x = ctx;
    if (x->n < 8 && !strcmp(se->labels, x->labels))
        x->ids[x->n++] = se->id;
    return 0;
}

/* The merged total of a service's cpu:samples over [from, until). */
static int64_t total(struct sc_store *s, const char *service, int64_t from, int64_t until)
{
    char want[80];
    snprintf(want, sizeof want, "{service_name=\"%s\"}", service);
    struct pick ids = {want, {0}, 0};
    char err[SC_ERR_LEN] = "";
    sc_store_series_list(s, NULL, "cpu:samples", from, until, collect, &ids, err);
    int64_t sum = 0;
    for (uint32_t i = 0; i < ids.n; i++) {
        struct sc_store_query q = {NULL, &ids.ids[i], 1, "cpu:samples", from, until, 0};
        struct sc_profile *p = NULL;
        if (sc_store_merge(s, &q, &p, err))
            continue;
        for (uint32_t k = 0; k < p->nsamples; k++)
            sum += p->values[k];
        sc_profile_free(p);
    }
    return sum;
}

static void test_forty_days(void)
{
    char dir[512];
    snprintf(dir, sizeof dir, "%s/forty", tmpdir);
    struct sc_store *s = open_store(dir, 0); /* written without retention */
    T_CHECK(s != NULL);
    if (!s)
        return;
    for (int d = 0; d < DAYS; d++) {
        T_EQ_INT(write_day(s, "svc", d), 0);
        if (d < 6)
            T_EQ_INT(write_day(s, "oldsvc", d), 0); /* a series that only old days had */
    }
    char err[SC_ERR_LEN] = "";
    /* rollups of everything, no retention yet (as of the last day written) */
    T_EQ_INT(sc_store_compact(s, day0 + DAYS * DAY, 1, err), 0);
    struct sc_store_stats before;
    T_EQ_INT(sc_store_stats(s, &before, err), 0);
    T_EQ_INT(before.profiles, (DAYS + 6) * PER_DAY);
    T_EQ_INT(before.stacks, 1 + DAYS * K);
    T_EQ_INT(before.frames, 3 + DAYS * (1 + K));
    T_EQ_INT(before.series, 2);
    int64_t day_total = 10 + K * (K + 1) / 2; /* one profile's samples */
    T_EQ_INT(total(s, "svc", day0, day0 + DAYS * DAY), (int64_t)DAYS * PER_DAY * day_total);
    sc_store_close(s);
    off_t size_before = file_size(dir);
    long open_before = open_cost_kb(dir);

    /* forty days later by the clock: retention keeps the last thirty */
    s = open_store(dir, (int64_t)KEEP * DAY);
    T_CHECK(s != NULL);
    if (!s)
        return;
    int64_t now = day0 + DAYS * DAY;
    int64_t cutoff = now - (int64_t)KEEP * DAY; /* midnight of day 10 */
    T_EQ_INT(sc_store_compact(s, now, 1, err), 0);
    struct sc_store_stats after;
    T_EQ_INT(sc_store_stats(s, &after, err), 0);
    T_EQ_INT(after.profiles, KEEP * PER_DAY);
    /* stacks and frames only old profiles used are gone: those of days 0..8 (the day before
     * the cutoff's is kept as a margin), and the old series */
    int gone_days = DAYS - KEEP - 1;
    T_EQ_INT(after.stacks, 1 + (DAYS - gone_days) * K);
    T_EQ_INT(after.frames, 3 + (DAYS - gone_days) * (1 + K));
    T_EQ_INT(after.series, 1);
    /* what is kept reads whole, from rollups and raw; nothing before the cutoff */
    T_EQ_INT(total(s, "svc", cutoff, now), (int64_t)KEEP * PER_DAY * day_total);
    T_EQ_INT(total(s, "svc", cutoff + 7 * 3600 * NS, now - 5 * 3600 * NS),
             (int64_t)(KEEP * PER_DAY - 12) * day_total);
    T_EQ_INT(total(s, "svc", day0, cutoff), 0);
    T_EQ_INT(total(s, "oldsvc", day0, now), 0);
    /* writing goes on after collection: a day reusing kept stacks and a new one */
    T_EQ_INT(write_day(s, "svc", DAYS - 1), 0);
    T_EQ_INT(write_day(s, "svc", DAYS), 0);
    T_EQ_INT(total(s, "svc", day0 + DAYS * DAY, day0 + (DAYS + 1) * DAY),
             (int64_t)PER_DAY * day_total);
    struct sc_store_stats more;
    T_EQ_INT(sc_store_stats(s, &more, err), 0);
    T_EQ_INT(more.stacks, after.stacks + K); /* day 39's stacks were found again */
    sc_store_close(s);
    off_t size_after = file_size(dir);
    long open_after = open_cost_kb(dir);
    fprintf(stderr,
            "file %lld -> %lld bytes; RSS to open %ld -> %ld kB; stacks %llu -> %llu; frames "
            "%llu -> %llu\n",
            (long long)size_before, (long long)size_after, open_before, open_after,
            (unsigned long long)before.stacks, (unsigned long long)after.stacks,
            (unsigned long long)before.frames, (unsigned long long)after.frames);
    /* the disk space came back (incremental vacuum): a quarter of the data went */
    T_CHECK(size_after > 0 && size_after < size_before * 9 / 10);
    /* opening reads a bounded working set, with or without the old history */
    T_CHECK(open_before >= 0 && open_after >= 0);
    T_CHECK(open_after <= open_before + 1024);
    T_CHECK(open_before < 8 * 1024);
}

/* A series whose last profile went to retention is forgotten by the compaction that
 * deleted the profile, also when the rollups of its day (and hour) straddle the cutoff:
 * they are rebuilt, empty so gone, before the collection judges the series. Before, the
 * rollups came first and the series outlived its data until the next collection an hour
 * later (store_conformance failed whenever it ran in the ten minutes before midnight). */
static void test_straddle(void)
{
    char dir[512], err[SC_ERR_LEN] = "";
    struct sc_store *s = open_in("straddle", dir, sizeof dir, 0);
    if (!s)
        return;
    int64_t midnight = day0 + 5 * DAY, now = midnight + 2 * DAY + 600 * NS;
    T_EQ_INT(write_text(s, "old", midnight + 60 * NS, "main;a 1\n", 9), 0);
    T_EQ_INT(write_text(s, "new", now - 3600 * NS, "main;b 1\n", 9), 0);
    T_EQ_INT(sc_store_compact(s, now, 1, err), 0); /* every rollup built */
    sc_store_close(s);
    s = open_store(dir, 2 * DAY); /* cutoff: ten minutes into the old day */
    T_CHECK(s != NULL);
    if (!s)
        return;
    T_EQ_INT(sc_store_compact(s, now, 0, err), 0);
    struct sc_store_stats st;
    T_EQ_INT(sc_store_stats(s, &st, err), 0);
    T_EQ_INT(st.profiles, 1);
    T_EQ_INT(st.series, 1);
    T_EQ_INT(total(s, "new", day0, now), 1);
    T_EQ_INT(total(s, "old", day0, now), 0);
    sc_store_close(s);
}

/* Collection in steps with writes between them (the writers are held off for one step at
 * a time, and the test's hook writes between every two, each step one statement): */
#define OLD 1500 /* stacks only day 0 used, three frames each, two of them its own */
#define ONCE 800 /* more such stacks, which the hook does not write again */

struct stepper {
    struct sc_store *s;
    int64_t today, old;
    int calls, failed;
    struct sc_buf want; /* what "live" was written, folded */
};

/* Between two steps: (1) a profile of day 0 using every old stack, so the id caches know
 * each one that is left, and each stays a candidate (its day is still 0); (2) today's
 * profile of "live": three old stacks (some deleted since (1) cached them, some not yet),
 * a new stack of old frames, and a new stack with a frame only the ONCE stacks used (so,
 * once those are deleted, a frame the collection has judged dead: the steps that delete
 * frames must see it used again); (3) one of "oldsvc", a series that only day 0 had until
 * now. */
static void step_hook(void *ctx)
{
    struct stepper *x = ctx;
    int i = x->calls++;
    struct sc_buf text = SC_BUF_INIT;
    for (int k = 0; k < OLD; k++)
        sc_buf_printf(&text, "main;o%d;p%d 1\n", k, k);
    x->failed += write_text(x->s, "old", x->old + i * NS, text.data, text.len) != 0;
    text.len = 0;
    for (int k = 0; k < 3; k++) {
        int a = (i * 337 + k * 499) % OLD;
        sc_buf_printf(&text, "main;o%d;p%d 1\n", a, a);
    }
    int a = (i * 211) % OLD, b = (i * 97 + 5) % OLD;
    sc_buf_printf(&text, "main;p%d;o%d;fresh 1\nmain;q%d;fresh 1\n", a, b, (i * 131) % ONCE);
    sc_buf_append(&x->want, text.data, text.len);
    x->failed += write_text(x->s, "live", x->today + i * NS, text.data, text.len) != 0;
    x->failed += write_text(x->s, "oldsvc", x->today + i * NS, "main;common;shared 1\n", 21) != 0;
    sc_buf_release(&text);
}

/* The folded text of a service's merged cpu:samples over [from, until), "(error ...)"
 * when the read failed. */
static char *merged_text(struct sc_store *s, const char *service, int64_t from, int64_t until)
{
    char want[80], err[SC_ERR_LEN] = "";
    snprintf(want, sizeof want, "{service_name=\"%s\"}", service);
    struct pick ids = {want, {0}, 0};
    sc_store_series_list(s, NULL, "cpu:samples", from, until, collect, &ids, err);
    struct sc_store_query q = {NULL, ids.ids, ids.n, "cpu:samples", from, until, 0};
    struct sc_profile *p = NULL;
    struct sc_buf b = SC_BUF_INIT;
    if (ids.n != 1 || sc_store_merge(s, &q, &p, err) || sc_folded_write(p, 0, &b, err))
        sc_buf_printf(&b, "(error: %u series; %s)", ids.n, err);
    sc_profile_free(p);
    return b.data ? sc_buf_detach(&b, NULL) : strdup("");
}

/* The distinct stacks and frame names of folded text. */
static void count_text(const struct sc_buf *in, uint32_t *stacks, uint32_t *frames)
{
    struct sc_map64 seen_stacks, seen_frames;
    sc_map64_init(&seen_stacks);
    sc_map64_init(&seen_frames);
    const char *p = in->data, *end = in->data + in->len;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p)),
                   *sp = memrchr(p, ' ', (size_t)(nl - p));
        sc_map64_upsert(&seen_stacks, sc_hash64(p, (size_t)(sp - p)), 0, NULL);
        for (const char *f = p; f < sp;) {
            const char *semi = memchr(f, ';', (size_t)(sp - f));
            const char *fe = semi ? semi : sp;
            sc_map64_upsert(&seen_frames, sc_hash64(f, (size_t)(fe - f)), 0, NULL);
            f = fe + 1;
        }
        p = nl + 1;
    }
    *stacks = seen_stacks.count;
    *frames = seen_frames.count;
    sc_map64_release(&seen_stacks);
    sc_map64_release(&seen_frames);
}

/* Folded text in sc_folded_write's order, duplicates summed. */
static char *normal_text(const struct sc_buf *in)
{
    struct sc_profile *p = sc_profile_new();
    struct sc_buf b = SC_BUF_INIT;
    char err[SC_ERR_LEN] = "";
    if (sc_folded_decode(in->data, in->len, &sc_limits_cli, p, err) ||
        sc_folded_write(p, 0, &b, err))
        sc_buf_printf(&b, "(error: %s)", err);
    sc_profile_free(p);
    return sc_buf_detach(&b, NULL);
}

static void test_steps(void)
{
    char dir[512], err[SC_ERR_LEN] = "";
    struct sc_store *s = open_in("steps", dir, sizeof dir, 0);
    if (!s)
        return;
    struct sc_buf text = SC_BUF_INIT;
    for (int k = 0; k < OLD; k++)
        sc_buf_printf(&text, "main;o%d;p%d 1\n", k, k);
    for (int k = 0; k < ONCE; k++)
        sc_buf_printf(&text, "main;q%d;r%d 1\n", k, k);
    T_EQ_INT(write_text(s, "old", day0 + 3600 * NS, text.data, text.len), 0);
    T_EQ_INT(write_text(s, "oldsvc", day0 + 3600 * NS, "main;common;shared 1\n", 21), 0);
    T_EQ_INT(write_text(s, "gone", day0 + 3600 * NS, "main;gone 1\n", 12), 0);
    for (int d = 1; d < 4; d++)
        T_EQ_INT(write_day(s, "svc", d), 0);
    sc_buf_release(&text);
    int64_t now = day0 + 4 * DAY;
    T_EQ_INT(sc_store_compact(s, now, 1, err), 0);
    struct sc_store_stats before;
    T_EQ_INT(sc_store_stats(s, &before, err), 0);
    sc_store_close(s);

    /* keep from the middle of day 2: day 0's stacks and frames are candidates */
    s = open_store(dir, now - (day0 + 2 * DAY + DAY / 2));
    T_CHECK(s != NULL);
    if (!s)
        return;
    struct stepper x = {s, now - 3600 * NS, day0 + 7200 * NS, 0, 0, SC_BUF_INIT};
    struct sq_store *sq = (struct sq_store *)s;
    sq->gc_hook = step_hook;
    sq->gc_hook_ctx = &x;
    T_EQ_INT(sc_store_compact(s, now, 1, err), 0);
    sq->gc_hook = NULL;
    T_EQ_INT(x.failed, 0);
    /* a step a statement: the old stacks in statements of 256, the frames in statements of
     * 400 ids, the series' in one */
    int frame_steps = (int)((before.frames + 399) / 400);
    T_CHECK(x.calls >= (OLD + ONCE + 255) / 256 + frame_steps + 1);

    /* everything written between the steps reads back whole */
    char *want = normal_text(&x.want);
    char *got = merged_text(s, "live", now - DAY, now + DAY);
    T_EQ_STR(got, want);
    free(got);
    free(want);
    char *oldsvc = merged_text(s, "oldsvc", now - DAY, now + DAY);
    char expect[64];
    snprintf(expect, sizeof expect, "main;common;shared %d\n", x.calls);
    T_EQ_STR(oldsvc, expect);
    free(oldsvc);
    /* "gone" went with its only profile, "live" came; "old" has the hook's profiles (the
     * stacks and frames those made again are counted in the second round) */
    struct sc_store_stats after;
    T_EQ_INT(sc_store_stats(s, &after, err), 0);
    T_EQ_INT(after.series, before.series);
    T_EQ_INT(total(s, "gone", day0, now + DAY), 0);

    /* a second collection, keeping the last two hours: what the hook wrote for day 0 went
     * with retention, and the stacks it made for that day now too; left are exactly the
     * stacks and frames that svc's days 2 (the margin) and 3, "live" and "oldsvc" use */
    sc_store_close(s);
    s = open_store(dir, 2 * 3600 * NS);
    T_CHECK(s != NULL);
    if (!s)
        return;
    T_EQ_INT(sc_store_compact(s, now, 1, err), 0);
    T_EQ_INT(sc_store_stats(s, &after, err), 0);
    uint32_t live_stacks = 0, live_frames = 0;
    count_text(&x.want, &live_stacks, &live_frames);
    T_EQ_INT(after.series, 3);
    T_EQ_INT(after.stacks, 2 * K + 1 + live_stacks);
    /* main, common, shared; day%d and K of its own a day; live's own ("main" counted) */
    T_EQ_INT(after.frames, 3 + 2 * (1 + K) + live_frames - 1);
    got = merged_text(s, "live", now - DAY, now + DAY);
    want = normal_text(&x.want);
    T_EQ_STR(got, want);
    free(got);
    free(want);
    sc_store_close(s);
    sc_buf_release(&x.want);
}

/* A schema-2 store (before garbage collection) opens, migrates, and keeps its data. */
static void test_migration(void)
{
    char dir[512];
    snprintf(dir, sizeof dir, "%s/migrate", tmpdir);
    struct sc_store *s = open_store(dir, 0);
    T_CHECK(s != NULL);
    if (!s)
        return;
    T_EQ_INT(write_day(s, "svc", 0), 0);
    sc_store_close(s);
    /* turn it back into schema 2: no last_day, no day rollups marked */
    char cmd[1024];
    snprintf(cmd, sizeof cmd,
             "sqlite3 '%s/scorch.db' \"DROP INDEX IF EXISTS stacks_by_day; ALTER TABLE stacks DROP "
             "COLUMN "
             "last_day; DELETE FROM "
             "dirty WHERE res=86400; UPDATE meta SET value='2' WHERE key='schema_version';\" "
             "2>/dev/null",
             dir);
    if (system(cmd) != 0) {
        fprintf(stderr, "  (no sqlite3 command: migration test skipped)\n");
        return;
    }
    s = open_store(dir, 0);
    T_CHECK(s != NULL);
    if (!s)
        return;
    char err[SC_ERR_LEN] = "";
    T_EQ_INT(sc_store_compact(s, day0 + 2 * DAY, 1, err), 0);
    int64_t day_total = 10 + K * (K + 1) / 2;
    T_EQ_INT(total(s, "svc", day0, day0 + DAY), (int64_t)PER_DAY * day_total);
    sc_store_close(s);
}

int main(void)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/scorch-test-gc-XXXXXX");
    if (!mkdtemp(tmpdir))
        T_SKIP("cannot create a temporary directory");
    T_RUN(test_forty_days);
    T_RUN(test_steps);
    T_RUN(test_straddle);
    T_RUN(test_migration);
    t_rmrf(tmpdir);
    return t_done();
}
