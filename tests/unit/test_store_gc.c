/* test_store_gc.c - a store that forgets: 40 days written, 30 kept, everything else freed. */
#include "t.h"

#include "formats/folded.h"
#include "formats/input.h"
#include "model/error.h"
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

static int write_day(struct sc_store *s, const char *service, int day)
{
    struct sc_buf text = SC_BUF_INIT;
    sc_buf_puts(&text, "main;common;shared 10\n");
    for (int k = 0; k < K; k++)
        sc_buf_printf(&text, "main;day%d;d%d_f%d %d\n", day, day, k, k + 1);
    struct sc_profile *p = sc_profile_new();
    char err[SC_ERR_LEN] = "";
    int rc = sc_folded_decode(text.data, text.len, &sc_limits_cli, p, err);
    sc_buf_release(&text);
    struct sc_labels l;
    sc_labels_init(&l);
    sc_labels_set(&l, "service_name", 12, service, strlen(service));
    for (int h = 0; rc == 0 && h < PER_DAY; h++) {
        struct sc_store_write w = {NULL,    &l, "cpu", day0 + day * DAY + h * 3600 * NS,
                                   10 * NS, p,  0};
        rc = sc_store_write(s, &w, err);
    }
    if (rc)
        fprintf(stderr, "write: %s\n", err);
    sc_labels_release(&l);
    sc_profile_free(p);
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
    T_RUN(test_migration);
    t_rmrf(tmpdir);
    return t_done();
}
