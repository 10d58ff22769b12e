/* test_fsync.c - a failing fsync is never taken for a durable write: the store's commit and
 * the agent's queue say it, keep nothing half-written, and go on once syncs work again.
 *
 * The store's syncs go through SQLite's VFS, so a VFS of the test's own (every call passed
 * to the default one, xSync failing on demand) is made the default before a store opens.
 * The queue calls fsync itself: the test is linked with -Wl,--wrap=fsync (CMakeLists.txt). */
#include "t.h"

#include "collect/queue.h"
#include "formats/folded.h"
#include "formats/input.h"
#include "model/clock.h"
#include "model/error.h"
#include "store/sqlite_int.h"
#include "store/store.h"

#include <dirent.h>
#include <errno.h>
#include <sqlite3.h>
#include <stdatomic.h>
#include <unistd.h>

#define NS SC_NS_PER_S

/* The profiles' times start now: no rollup falls due meanwhile, so the background thread's
 * rounds are quick and say its errors soon. */
static int64_t T0;

/* ---- fsync, wrapped ---- */

int __real_fsync(int fd);
int __wrap_fsync(int fd);

static atomic_int fail_fsync_at; /* fail the n-th fsync from now (1-based); 0: never */

int __wrap_fsync(int fd)
{
    if (atomic_load(&fail_fsync_at) > 0 && atomic_fetch_sub(&fail_fsync_at, 1) == 1) {
        errno = EIO;
        return -1;
    }
    return __real_fsync(fd);
}

/* ---- a VFS whose xSync fails on demand ---- */

enum { SYNC_OK, SYNC_FAIL_ALL, SYNC_FAIL_DB }; /* DB: the main database file only */
static atomic_int sync_mode;
static atomic_int syncs_failed;
static sqlite3_vfs *real_vfs;

struct shim_file {
    sqlite3_file base;  /* first: SQLite's view */
    sqlite3_file *real; /* the default VFS's file, in the same allocation after this */
    int main_db;
};

#define REAL(f) (((struct shim_file *)(f))->real)

static int shim_close(sqlite3_file *f)
{
    return REAL(f)->pMethods ? REAL(f)->pMethods->xClose(REAL(f)) : SQLITE_OK;
}
static int shim_read(sqlite3_file *f, void *p, int n, sqlite3_int64 off)
{
    return REAL(f)->pMethods->xRead(REAL(f), p, n, off);
}
static int shim_write(sqlite3_file *f, const void *p, int n, sqlite3_int64 off)
{
    return REAL(f)->pMethods->xWrite(REAL(f), p, n, off);
}
static int shim_truncate(sqlite3_file *f, sqlite3_int64 size)
{
    return REAL(f)->pMethods->xTruncate(REAL(f), size);
}
static int shim_sync(sqlite3_file *f, int flags)
{
    int mode = atomic_load(&sync_mode);
    if (mode == SYNC_FAIL_ALL || (mode == SYNC_FAIL_DB && ((struct shim_file *)f)->main_db)) {
        atomic_fetch_add(&syncs_failed, 1);
        return SQLITE_IOERR_FSYNC;
    }
    return REAL(f)->pMethods->xSync(REAL(f), flags);
}
static int shim_size(sqlite3_file *f, sqlite3_int64 *size)
{
    return REAL(f)->pMethods->xFileSize(REAL(f), size);
}
static int shim_lock(sqlite3_file *f, int l)
{
    return REAL(f)->pMethods->xLock(REAL(f), l);
}
static int shim_unlock(sqlite3_file *f, int l)
{
    return REAL(f)->pMethods->xUnlock(REAL(f), l);
}
static int shim_reserved(sqlite3_file *f, int *out)
{
    return REAL(f)->pMethods->xCheckReservedLock(REAL(f), out);
}
static int shim_control(sqlite3_file *f, int op, void *arg)
{
    return REAL(f)->pMethods->xFileControl(REAL(f), op, arg);
}
static int shim_sector(sqlite3_file *f)
{
    return REAL(f)->pMethods->xSectorSize(REAL(f));
}
static int shim_device(sqlite3_file *f)
{
    return REAL(f)->pMethods->xDeviceCharacteristics(REAL(f));
}
static int shim_shm_map(sqlite3_file *f, int pg, int sz, int extend, void volatile **pp)
{
    return REAL(f)->pMethods->xShmMap(REAL(f), pg, sz, extend, pp);
}
static int shim_shm_lock(sqlite3_file *f, int off, int n, int flags)
{
    return REAL(f)->pMethods->xShmLock(REAL(f), off, n, flags);
}
static void shim_shm_barrier(sqlite3_file *f)
{
    REAL(f)->pMethods->xShmBarrier(REAL(f));
}
static int shim_shm_unmap(sqlite3_file *f, int del)
{
    return REAL(f)->pMethods->xShmUnmap(REAL(f), del);
}
static int shim_fetch(sqlite3_file *f, sqlite3_int64 off, int n, void **pp)
{
    return REAL(f)->pMethods->xFetch(REAL(f), off, n, pp);
}
static int shim_unfetch(sqlite3_file *f, sqlite3_int64 off, void *p)
{
    return REAL(f)->pMethods->xUnfetch(REAL(f), off, p);
}

static const sqlite3_io_methods shim_io = {
    3,
    shim_close,
    shim_read,
    shim_write,
    shim_truncate,
    shim_sync,
    shim_size,
    shim_lock,
    shim_unlock,
    shim_reserved,
    shim_control,
    shim_sector,
    shim_device,
    shim_shm_map,
    shim_shm_lock,
    shim_shm_barrier,
    shim_shm_unmap,
    shim_fetch,
    shim_unfetch,
};

static int shim_open(sqlite3_vfs *vfs, const char *name, sqlite3_file *f, int flags, int *out)
{
    (void)vfs;
    struct shim_file *s = (struct shim_file *)f;
    s->real = (sqlite3_file *)(s + 1);
    s->main_db = (flags & SQLITE_OPEN_MAIN_DB) != 0;
    int rc = real_vfs->xOpen(real_vfs, name, s->real, flags, out);
    /* SQLite closes a file whose open failed only when pMethods is set */
    s->base.pMethods = rc == SQLITE_OK ? &shim_io : NULL;
    return rc;
}

static sqlite3_vfs shim_vfs;

static void install_vfs(void)
{
    real_vfs = sqlite3_vfs_find(NULL);
    shim_vfs = *real_vfs;
    shim_vfs.zName = "scorch-test-sync";
    shim_vfs.szOsFile = (int)sizeof(struct shim_file) + real_vfs->szOsFile;
    shim_vfs.xOpen = shim_open;
    sqlite3_vfs_register(&shim_vfs, 1);
}

/* ---- the store ---- */

static char tmpdir[256];

static struct sc_store *open_store(const char *name, int background)
{
    char dir[512];
    snprintf(dir, sizeof dir, "%s/%s", tmpdir, name);
    struct sc_store_opts o;
    sc_store_opts_init(&o);
    o.dir = dir;
    o.durable = 1; /* synchronous=FULL: every commit syncs the WAL */
    o.background = background;
    o.compact_every_ns = NS / 10;
    struct sc_store *s = NULL;
    char err[SC_ERR_LEN] = "";
    if (sc_store_open(&o, &s, err))
        fprintf(stderr, "open: %s\n", err);
    T_CHECK(s != NULL);
    return s;
}

static int write_one(struct sc_store *s, int64_t t, const char *text, char *err)
{
    struct sc_profile *p = sc_profile_new();
    int rc = sc_folded_decode(text, strlen(text), &sc_limits_cli, p, err);
    struct sc_labels l;
    sc_labels_init(&l);
    sc_labels_set(&l, "service_name", 12, "svc", 3);
    struct sc_store_write w = {NULL, &l, "cpu", t, 10 * NS, p, 0};
    if (rc == 0)
        rc = sc_store_write(s, &w, err);
    sc_labels_release(&l);
    sc_profile_free(p);
    return rc;
}

static int first_series(void *ctx, const struct sc_store_series *se)
{
    *(uint64_t *)ctx = se->id;
    return 0;
}

/* The folded text of everything stored. */
static char *stored(struct sc_store *s)
{
    uint64_t id = 0;
    char err[SC_ERR_LEN] = "";
    struct sc_buf b = SC_BUF_INIT;
    struct sc_profile *p = NULL;
    int64_t from = T0 - NS, until = T0 + 3600 * NS;
    if (sc_store_series_list(s, NULL, "cpu:samples", from, until, first_series, &id, err) == 0 &&
        id) {
        struct sc_store_query q = {NULL, &id, 1, "cpu:samples", from, until, 0};
        if (sc_store_merge(s, &q, &p, err) == 0)
            sc_folded_write(p, 0, &b, err);
    }
    if (!p)
        sc_buf_printf(&b, "(error: %s)", err);
    sc_profile_free(p);
    return b.data ? sc_buf_detach(&b, NULL) : strdup("");
}

/* A commit whose WAL sync fails is refused, not acknowledged; the store is not left
 * half-written (what the failed commit wrote is not read back) and writes again once
 * syncs work. */
static void test_commit_sync_fails(void)
{
    struct sc_store *s = open_store("commit", 0);
    if (!s)
        return;
    char err[SC_ERR_LEN] = "";
    T_EQ_INT(write_one(s, T0, "main;before 1\n", err), 0);
    atomic_store(&sync_mode, SYNC_FAIL_ALL);
    atomic_store(&syncs_failed, 0);
    err[0] = 0;
    int rc = write_one(s, T0 + NS, "main;lost 1\n", err);
    atomic_store(&sync_mode, SYNC_OK);
    fprintf(stderr, "  the commit with a failing sync: %d, \"%s\"\n", rc, err);
    T_CHECK(rc < 0);
    T_CHECK(atomic_load(&syncs_failed) > 0);
    T_CHECK(strstr(err, "I/O") != NULL || strstr(err, "sync") != NULL);
    T_EQ_INT(write_one(s, T0 + 2 * NS, "main;after 1\n", err), 0);
    char *got = stored(s);
    /* the failed push's stack may come back with the next commit (its ids were handed out),
     * but no sample of it: the client was told it failed */
    T_EQ_STR(got, "main;after 1\nmain;before 1\n");
    free(got);
    sc_store_close(s);
    /* and after a reopen (the WAL replayed) the same */
    s = open_store("commit", 0);
    if (!s)
        return;
    got = stored(s);
    T_EQ_STR(got, "main;after 1\nmain;before 1\n");
    free(got);
    sc_store_close(s);
}

/* The checkpointer's sync of the database file failing: commits (which sync only the WAL)
 * go on, every failure is counted and the background thread says it, and once syncs work
 * the checkpoints do too and nothing written meanwhile is lost. */
static void test_checkpoint_sync_fails(void)
{
    struct sc_store *s = open_store("ckpt", 1);
    if (!s)
        return;
    struct sq_store *q = (struct sq_store *)s;
    atomic_store(&sync_mode, SYNC_FAIL_DB);
    atomic_store(&syncs_failed, 0);
    char err[SC_ERR_LEN] = "";
    struct sc_buf text = SC_BUF_INIT;
    int n = 0;
    uint64_t errors = 0;
    char last[SC_ERR_LEN] = "";
    /* stacks enough to pass SQ_CKPT_PAGES a few times over */
    for (; n < 40; n++) {
        text.len = 0;
        for (int k = 0; k < 500; k++)
            sc_buf_printf(&text, "main;f%d;g%d 1\n", n, k);
        sc_buf_putc(&text, 0);
        if (write_one(s, T0 + n * NS / 100, text.data, err)) {
            fprintf(stderr, "write %d: %s\n", n, err);
            T_CHECK(0);
            break;
        }
    }
    /* then until the background thread says it (a round every 100 ms) */
    for (int64_t start = sc_mono_ns(); errors == 0 && sc_mono_ns() - start < 30 * NS;) {
        usleep(50000);
        errors = sc_store_bg_errors(s, last, sizeof last);
    }
    atomic_store(&sync_mode, SYNC_OK);
    pthread_mutex_lock(&q->ck_mu);
    uint64_t ck_errors = q->ck_errors;
    pthread_mutex_unlock(&q->ck_mu);
    fprintf(stderr,
            "  %d commits with the database's syncs failing: %llu checkpoints failed, "
            "the background said %llu: \"%s\"\n",
            n, (unsigned long long)ck_errors, (unsigned long long)errors, last);
    T_CHECK(ck_errors > 0);
    T_CHECK(errors > 0);
    T_CHECK(strstr(last, "checkpointing the WAL") != NULL);
    /* syncs work again: a checkpoint gets through, and everything reads back */
    uint64_t runs;
    pthread_mutex_lock(&q->ck_mu);
    runs = q->ck_runs;
    pthread_mutex_unlock(&q->ck_mu);
    for (int k = 0; k < 200; k++) {
        text.len = 0;
        for (int j = 0; j < 500; j++)
            sc_buf_printf(&text, "main;h%d;g%d 1\n", k, j);
        sc_buf_putc(&text, 0);
        T_EQ_INT(write_one(s, T0 + 3000 * NS + k * NS / 100, text.data, err), 0);
        pthread_mutex_lock(&q->ck_mu);
        int done = q->ck_runs > runs;
        pthread_mutex_unlock(&q->ck_mu);
        if (done)
            break;
    }
    /* a failed checkpoint is tried again only a second later (SQ_CKPT_RETRY_NS), and the
     * commits above may all be done by then: wait for it, bounded */
    int done = 0;
    for (int64_t start = sc_mono_ns(); !done && sc_mono_ns() - start < 30 * NS;) {
        pthread_mutex_lock(&q->ck_mu);
        done = q->ck_runs > runs;
        pthread_mutex_unlock(&q->ck_mu);
        if (!done)
            usleep(20000);
    }
    T_CHECK(done);
    sc_buf_release(&text);
    sc_store_close(s);
    s = open_store("ckpt", 0);
    if (!s)
        return;
    char *got = stored(s);
    size_t lines = 0;
    for (const char *c = got; *c; c++)
        lines += *c == '\n';
    if (lines < (size_t)n * 500)
        fprintf(stderr, "  read back %zu lines: %.200s\n", lines, got);
    T_CHECK(lines >= (size_t)n * 500);
    free(got);
    sc_store_close(s);
}

/* ---- the agent's queue ---- */

static int files_in(const char *dir, const char *prefix, const char *suffix)
{
    DIR *d = opendir(dir);
    int n = 0;
    struct dirent *e;
    while (d && (e = readdir(d))) {
        size_t len = strlen(e->d_name), sl = strlen(suffix);
        if (!strncmp(e->d_name, prefix, strlen(prefix)) && len >= sl &&
            !strcmp(e->d_name + len - sl, suffix))
            n++;
    }
    if (d)
        closedir(d);
    return n;
}

/* A push whose file's or directory's fsync fails is refused (SC_EIO, saying which) and
 * leaves no file: not a temporary one, and not an entry that a restart would find and send
 * although its push was refused. The queue goes on. */
static void test_queue_sync_fails(void)
{
    char dir[512];
    snprintf(dir, sizeof dir, "%s/queue", tmpdir);
    struct sc_queue *q = NULL;
    char err[SC_ERR_LEN] = "";
    T_EQ_INT(sc_queue_open(dir, 1 << 20, &q, err), 0);
    if (!q)
        return;
    T_EQ_INT(sc_queue_push(q, "name=a", 6, "main;a 1\n", 9, err), 0);
    /* the entry's file, then the directory after the rename */
    static const char *const words[] = {"cannot write", "cannot sync"};
    for (int which = 1; which <= 2; which++) {
        atomic_store(&fail_fsync_at, which);
        err[0] = 0;
        int rc = sc_queue_push(q, "name=b", 6, "main;b 1\n", 9, err);
        atomic_store(&fail_fsync_at, 0);
        fprintf(stderr, "  fsync %d of the push failing: %d, \"%s\"\n", which, rc, err);
        T_EQ_INT(rc, SC_EIO);
        T_CHECK(strstr(err, words[which - 1]) != NULL);
        T_EQ_INT(files_in(dir, "tmp-", ""), 0);
        T_EQ_INT(files_in(dir, "", ".entry"), 1);
    }
    T_EQ_INT(sc_queue_push(q, "name=c", 6, "main;c 1\n", 9, err), 0);
    struct sc_queue_stats st;
    sc_queue_stats(q, &st);
    T_EQ_INT(st.entries, 2);
    sc_queue_close(q);
    /* a restart finds exactly the two pushes that were acknowledged */
    T_EQ_INT(sc_queue_open(dir, 1 << 20, &q, err), 0);
    if (!q)
        return;
    const char *want[] = {"name=a", "name=c"};
    for (int i = 0; i < 2; i++) {
        struct sc_queue_entry e;
        T_EQ_INT(sc_queue_take(q, 0, &e, err), 0);
        T_EQ_STR(e.meta.data, want[i]);
        sc_queue_done(q, e.seq);
        sc_queue_entry_release(&e);
    }
    struct sc_queue_entry e;
    T_EQ_INT(sc_queue_take(q, 0, &e, err), SC_ENOTFOUND);
    sc_queue_close(q);
}

int main(void)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/scorch-test-fsync-XXXXXX");
    if (!mkdtemp(tmpdir))
        T_SKIP("cannot create a temporary directory");
    T0 = sc_wall_ns() / NS * NS;
    install_vfs();
    T_RUN(test_commit_sync_fails);
    T_RUN(test_checkpoint_sync_fails);
    T_RUN(test_queue_sync_fails);
    if (!getenv("KEEP"))
        t_rmrf(tmpdir);
    else
        fprintf(stderr, "kept %s\n", tmpdir);
    return t_done();
}
