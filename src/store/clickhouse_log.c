/* clickhouse_log.c - each shard's local write-ahead log and its flusher.
 *
 * A push is acknowledged once its records are fsync'd in the logs of the shards they go
 * to; each shard's flusher thread then inserts what its log holds in batches (up to
 * CH_FLUSH_PROFILES records, at least every CH_FLUSH_NS), so ClickHouse sees one insert a
 * shard every half second instead of one per push, and a shard that is slow, hung or
 * gone delays only its own batches. After a restart the flusher inserts what the log
 * still holds; the push ids (clickhouse_write.c) leave out what a shard stored already,
 * so a record inserted just before a crash is not stored twice.
 *
 * On disk: <dir>/<seq>.log segment files, each a run of records: u32 magic, u32 payload
 * length, u64 sc_hash64 of the payload, the payload (ch_pend_payload). A segment whose
 * records are all inserted is deleted; a torn record at the end of the newest segment
 * (a crash during its write, never acknowledged) is cut off when the log is opened.
 */
#include "store/clickhouse_int.h"
#include "model/log.h"
#include "model/budget.h"
#include "model/clock.h"
#include "model/error.h"
#include "model/fileio.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define REC_MAGIC 0x31574353u /* "SCW1" */
#define REC_HEAD 16
#define BACKOFF_MIN_NS (250LL * 1000000)
#define BACKOFF_MAX_NS (5LL * SC_NS_PER_S)

static int read_all(int fd, void *p, size_t n, uint64_t off)
{
    char *c = p;
    while (n) {
        ssize_t r = pread(fd, c, n, (off_t)off);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return -1;
        c += r;
        n -= (size_t)r;
        off += (uint64_t)r;
    }
    return 0;
}

static void seg_path(const struct ch_log *l, uint32_t seg, char *out, size_t n)
{
    snprintf(out, n, "%s/%010u.log", l->dir, (unsigned)seg);
}

/* Room for segment seg's byte count. 0 or SC_ENOMEM. */
static int seg_slot(struct ch_log *l, uint32_t seg)
{
    uint64_t want = (uint64_t)(seg - l->first_seg) + 1;
    if (sc_grow_array(&l->seg_bytes, &l->seg_cap, want, sizeof *l->seg_bytes))
        return SC_ENOMEM;
    return 0;
}

static int push_rec(struct ch_log *l, const struct ch_rec *r)
{
    if (l->head > 4096 && l->head * 2 > l->n) {
        memmove(l->recs, l->recs + l->head, (size_t)(l->n - l->head) * sizeof *l->recs);
        l->n -= l->head;
        l->head = 0;
    }
    if (sc_grow_array(&l->recs, &l->cap, (uint64_t)l->n + 1, sizeof *l->recs))
        return SC_ENOMEM;
    l->recs[l->n++] = *r;
    return 0;
}

/* Opens a new segment (seq l->seg) for appends; its directory entry is fsync'd. */
static int open_segment(struct ch_store *s, struct ch_log *l, char *err)
{
    char path[4200];
    seg_path(l, l->seg, path, sizeof path);
    l->fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (l->fd < 0)
        return sc_errf(err, SC_EIO, "cannot create %s: %s", path, strerror(errno));
    if (s->base.opts.durable && fsync(l->dirfd))
        return sc_errf(err, SC_EIO, "cannot fsync %s: %s", l->dir, strerror(errno));
    if (seg_slot(l, l->seg))
        return sc_errf(err, SC_ENOMEM, "out of memory");
    l->seg_bytes[l->seg - l->first_seg] = 0;
    return 0;
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

/* Reads segment seg back: its whole records become waiting records; the first bad one
 * ends it (cut off when last, the tail of a crash; else reported and the rest skipped). */
static int replay_segment(struct ch_log *l, uint32_t seg, int last, uint32_t shard, char *err)
{
    char path[4200];
    seg_path(l, seg, path, sizeof path);
    int fd = open(path, O_RDWR | O_CLOEXEC);
    if (fd < 0)
        return sc_errf(err, SC_EIO, "cannot open %s: %s", path, strerror(errno));
    struct stat st;
    if (fstat(fd, &st)) {
        close(fd);
        return sc_errf(err, SC_EIO, "cannot stat %s: %s", path, strerror(errno));
    }
    uint64_t size = (uint64_t)st.st_size, off = 0;
    char *data = size ? malloc(size) : NULL;
    if (size && !data) {
        close(fd);
        return sc_errf(err, SC_ENOMEM, "out of memory reading %s", path);
    }
    if (size && read_all(fd, data, size, 0)) {
        free(data);
        close(fd);
        return sc_errf(err, SC_EIO, "cannot read %s: %s", path, strerror(errno));
    }
    int rc = 0;
    while (off + REC_HEAD <= size) {
        uint32_t magic, len;
        uint64_t h;
        memcpy(&magic, data + off, 4);
        memcpy(&len, data + off + 4, 4);
        memcpy(&h, data + off + 8, 8);
        if (magic != REC_MAGIC || len > size - off - REC_HEAD ||
            sc_hash64(data + off + REC_HEAD, len) != h)
            break;
        struct ch_rec r = {l->written + REC_HEAD + len, seg, len, off + REC_HEAD, sc_mono_ns()};
        if (push_rec(l, &r)) {
            rc = sc_errf(err, SC_ENOMEM, "out of memory reading %s", path);
            break;
        }
        l->written += REC_HEAD + len;
        l->pending += REC_HEAD + len;
        off += REC_HEAD + len;
    }
    if (rc == 0 && off < size) {
        if (last) {
            /* a record cut short by a crash: never acknowledged, never inserted */
            if (ftruncate(fd, (off_t)off) || fsync(fd))
                rc = sc_errf(err, SC_EIO, "cannot cut %s: %s", path, strerror(errno));
        } else {
            sc_logf("clickhouse shard %u: %s is damaged at byte %llu; the %llu bytes "
                    "after it are left out",
                    (unsigned)shard, path, (unsigned long long)off,
                    (unsigned long long)(size - off));
        }
    }
    free(data);
    close(fd);
    if (rc == 0) {
        rc = seg_slot(l, seg) ? sc_errf(err, SC_ENOMEM, "out of memory") : 0;
        if (rc == 0) {
            l->seg_bytes[seg - l->first_seg] = off;
            l->bytes += off;
        }
    }
    return rc;
}

int ch_log_open(struct ch_store *s, struct ch_shard *sh, const char *dir, char *err)
{
    struct ch_log *l = &sh->log;
    memset(l, 0, sizeof *l);
    l->fd = l->dirfd = l->rfd = -1;
    l->dir = strdup(dir);
    if (!l->dir)
        return sc_errf(err, SC_ENOMEM, "out of memory");
    if (sc_mkdir_p(dir))
        return sc_errf(err, SC_EIO, "cannot create %s: %s", dir, strerror(errno));
    l->dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    DIR *d = l->dirfd >= 0 ? opendir(dir) : NULL;
    if (!d)
        return sc_errf(err, SC_EIO, "cannot open %s: %s", dir, strerror(errno));
    uint32_t *segs = NULL, nsegs = 0, cap = 0;
    int rc = 0;
    for (struct dirent *e; rc == 0 && (e = readdir(d));) {
        char *end;
        unsigned long v = strtoul(e->d_name, &end, 10);
        if (end == e->d_name || strcmp(end, ".log") || v == 0 || v >= UINT32_MAX - 1)
            continue;
        if (sc_grow_array(&segs, &cap, (uint64_t)nsegs + 1, sizeof *segs))
            rc = sc_errf(err, SC_ENOMEM, "out of memory");
        else
            segs[nsegs++] = (uint32_t)v;
    }
    closedir(d);
    if (nsegs)
        qsort(segs, nsegs, sizeof *segs, cmp_u32);
    l->first_seg = nsegs ? segs[0] : 1;
    for (uint32_t i = 0; rc == 0 && i < nsegs; i++) {
        /* a gap (a segment deleted by hand) is kept as an empty slot */
        rc = replay_segment(l, segs[i], i + 1 == nsegs, sh->index, err);
    }
    /* appends go to a new segment: the last one may have ended in a torn record */
    l->seg = nsegs ? segs[nsegs - 1] + 1 : 1;
    free(segs);
    if (rc == 0)
        rc = open_segment(s, l, err);
    l->synced = l->written;
    sh->inserted = 0;
    if (rc == 0 && l->n > l->head)
        sc_logf("clickhouse shard %u: %u pushes in the local log (%llu bytes) "
                "to insert",
                (unsigned)sh->index, (unsigned)(l->n - l->head), (unsigned long long)l->bytes);
    return rc;
}

void ch_log_close(struct ch_shard *sh)
{
    struct ch_log *l = &sh->log;
    if (l->fd >= 0)
        close(l->fd);
    if (l->rfd >= 0)
        close(l->rfd);
    if (l->dirfd >= 0)
        close(l->dirfd);
    free(l->dir);
    free(l->recs);
    free(l->seg_bytes);
    memset(l, 0, sizeof *l);
    l->fd = l->dirfd = l->rfd = -1;
}

/* ---- appends ---- */

/* Closes the active segment (fsync'd) and opens the next; qmu held. */
static int rotate(struct ch_store *s, struct ch_shard *sh, char *err)
{
    struct ch_log *l = &sh->log;
    while (l->syncing)
        pthread_cond_wait(&sh->qcond, &sh->qmu);
    if (s->base.opts.durable && fdatasync(l->fd))
        return sc_errf(err, SC_EIO, "cannot fsync the local log of clickhouse shard %u: %s",
                       (unsigned)sh->index, strerror(errno));
    close(l->fd);
    l->fd = -1;
    l->synced = l->written;
    pthread_cond_broadcast(&sh->qcond);
    l->seg++;
    return open_segment(s, l, err);
}

int ch_log_append(struct ch_store *s, struct ch_shard *sh, const struct ch_pend *p, uint64_t *end,
                  char *err)
{
    struct sc_buf rec = SC_BUF_INIT;
    uint8_t head[REC_HEAD] = {0};
    sc_buf_append(&rec, head, sizeof head);
    ch_pend_payload(p, &rec);
    if (rec.oom || rec.len - REC_HEAD > UINT32_MAX) {
        sc_buf_release(&rec);
        return sc_errf(err, SC_ENOMEM, "out of memory");
    }
    uint32_t magic = REC_MAGIC, len = (uint32_t)(rec.len - REC_HEAD);
    uint64_t h = sc_hash64(rec.data + REC_HEAD, len);
    memcpy(rec.data, &magic, 4);
    memcpy(rec.data + 4, &len, 4);
    memcpy(rec.data + 8, &h, 8);
    uint64_t limit = s->base.opts.log_limit ? s->base.opts.log_limit : CH_LOG_LIMIT;
    /* segments of a quarter of the bound: the disk holds the pending records, the
     * inserted start of the oldest segment and the active one's rest, 1.5x the bound at most */
    uint64_t seg_max = limit / 4 < CH_SEGMENT_BYTES ? limit / 4 : CH_SEGMENT_BYTES;
    struct ch_log *l = &sh->log;
    int rc = 0;
    pthread_mutex_lock(&sh->qmu);
    if (l->broken)
        rc = sc_errf(err, SC_EIO, "%s", l->err);
    else if (l->pending + rec.len > limit && l->pending > 0)
        /* never dropped: the client is told to come back (503, Retry-After) */
        rc = sc_errf(err, SC_EUNAVAIL,
                     "clickhouse shard %u (%s) is unavailable or behind: its local log is "
                     "full (%llu of %llu KiB)%s%s",
                     (unsigned)sh->index, ch_ep(sh)->url, (unsigned long long)(l->pending >> 10),
                     (unsigned long long)(limit >> 10), sh->down ? ": " : "",
                     sh->down ? sh->down_err : "");
    if (rc == 0 && l->seg_bytes[l->seg - l->first_seg] > 0 &&
        l->seg_bytes[l->seg - l->first_seg] + rec.len > seg_max)
        rc = rotate(s, sh, err);
    if (rc == 0) {
        uint64_t off = l->seg_bytes[l->seg - l->first_seg];
        struct ch_rec r = {l->written + rec.len, l->seg, len, off + REC_HEAD, sc_mono_ns()};
        if (sc_write_all(l->fd, rec.data, rec.len)) {
            /* what was written of it is a torn record: later appends cannot follow it */
            l->broken = 1;
            rc = sc_errf(err, SC_EIO, "cannot write the local log of clickhouse shard %u: %s",
                         (unsigned)sh->index, strerror(errno));
            snprintf(l->err, sizeof l->err, "%s", err ? err : "a write failed");
        } else if (push_rec(l, &r)) {
            /* on disk, not queued: inserted after a restart */
            rc = sc_errf(err, SC_ENOMEM, "out of memory");
        }
        if (!l->broken) {
            l->written += rec.len;
            l->seg_bytes[l->seg - l->first_seg] += rec.len;
            l->bytes += rec.len;
            l->pending += rec.len;
            *end = l->written;
        }
    }
    pthread_mutex_unlock(&sh->qmu);
    sc_buf_release(&rec);
    return rc;
}

int ch_log_sync(struct ch_store *s, struct ch_shard *sh, uint64_t end, char *err)
{
    struct ch_log *l = &sh->log;
    int rc = 0;
    pthread_mutex_lock(&sh->qmu);
    if (!s->base.opts.durable && l->synced < end) {
        l->synced = l->written;
        pthread_cond_broadcast(&sh->qcond);
    }
    while (l->synced < end && !l->broken) {
        if (l->syncing) {
            pthread_cond_wait(&sh->qcond, &sh->qmu);
            continue;
        }
        /* lead: one fsync for everything appended so far */
        l->syncing = 1;
        uint64_t target = l->written;
        int fd = l->fd;
        pthread_mutex_unlock(&sh->qmu);
        int bad = fdatasync(fd);
        int e = errno;
        pthread_mutex_lock(&sh->qmu);
        l->syncing = 0;
        if (bad) {
            /* after a failed fsync the page cache may have dropped the data: nothing
             * appended since the last good one can be trusted, nor anything after */
            l->broken = 1;
            snprintf(l->err, sizeof l->err, "cannot fsync the local log of clickhouse shard %u: %s",
                     (unsigned)sh->index, strerror(e));
        } else if (target > l->synced) {
            l->synced = target;
        }
        pthread_cond_broadcast(&sh->qcond);
    }
    if (l->synced < end)
        rc = sc_errf(err, SC_EIO, "%s", l->err);
    pthread_mutex_unlock(&sh->qmu);
    return rc;
}

/* ---- the flusher ---- */

/* Reads a record's payload into b. 0 or SC_E*; the flusher's reading fd follows the
 * segments. */
static int read_payload(struct ch_shard *sh, const struct ch_rec *r, struct sc_buf *b, char *err)
{
    struct ch_log *l = &sh->log;
    if (l->rfd < 0 || l->rseg != r->seg) {
        if (l->rfd >= 0)
            close(l->rfd);
        char path[4200];
        seg_path(l, r->seg, path, sizeof path);
        l->rfd = open(path, O_RDONLY | O_CLOEXEC);
        l->rseg = r->seg;
        if (l->rfd < 0)
            return sc_errf(err, SC_EIO, "cannot open %s: %s", path, strerror(errno));
    }
    b->len = 0;
    if (sc_buf_reserve(b, r->len))
        return sc_errf(err, SC_ENOMEM, "out of memory");
    if (read_all(l->rfd, b->data, r->len, r->off))
        return sc_errf(err, SC_EIO, "cannot read the local log of clickhouse shard %u: %s",
                       (unsigned)sh->index, strerror(errno));
    b->len = r->len;
    return 0;
}

/* Deletes the segments whose records are all inserted (never the active one); qmu held. */
static void drop_segments(struct ch_shard *sh)
{
    struct ch_log *l = &sh->log;
    uint32_t keep = l->head < l->n ? l->recs[l->head].seg : l->seg;
    uint32_t gone = 0;
    while (l->first_seg + gone < keep && l->first_seg + gone < l->seg) {
        char path[4200];
        seg_path(l, l->first_seg + gone, path, sizeof path);
        if (l->rfd >= 0 && l->rseg == l->first_seg + gone) {
            close(l->rfd);
            l->rfd = -1;
        }
        if (unlink(path) && errno != ENOENT)
            break;
        l->bytes -= l->seg_bytes[gone];
        gone++;
    }
    if (gone) {
        memmove(l->seg_bytes, l->seg_bytes + gone,
                (size_t)(l->seg - l->first_seg + 1 - gone) * sizeof *l->seg_bytes);
        l->first_seg += gone;
    }
}

static void clear_caches(struct ch_store *s, struct ch_shard *sh)
{
    pthread_mutex_lock(&s->cache_mu);
    sc_map64_release(&sh->stack_weeks);
    sc_map64_release(&sh->frame_weeks);
    sc_map64_release(&sh->series_weeks);
    pthread_mutex_unlock(&s->cache_mu);
}

/* How many of the records from at make a batch: the fsync'd ones, within a batch's bounds.
 * Called under qmu. */
static uint32_t batch_at(const struct ch_log *l, uint32_t at)
{
    uint32_t count = 0;
    uint64_t bytes = 0;
    while (at + count < l->n && count < CH_FLUSH_PROFILES && l->recs[at + count].end <= l->synced &&
           (count == 0 || bytes + l->recs[at + count].len <= CH_BATCH_BYTES)) {
        bytes += l->recs[at + count].len;
        count++;
    }
    return count;
}

struct flusher_arg {
    struct ch_store *s;
    struct ch_shard *sh;
};

/* A batch read and prepared (its frames, stacks and series inserted, its pushes looked
 * up) while the one before it was inserted: under a backlog the flusher's requests overlap
 * rather than wait for each other. */
struct ahead {
    uint32_t count;
    struct ch_rec *recs;
    struct sc_buf *bufs;
    struct ch_batch *b;   /* NULL: not prepared */
    struct sc_map64 held; /* the push ids of the batch inserted meanwhile */
    struct ch_store *s;
    struct ch_shard *sh;
    pthread_t thread;
    int running;
};

static void ahead_drop(struct ahead *a)
{
    for (uint32_t i = 0; a->bufs && i < a->count; i++)
        sc_buf_release(&a->bufs[i]);
    free(a->bufs);
    free(a->recs);
    ch_batch_free(a->b);
    sc_map64_release(&a->held);
    a->bufs = NULL;
    a->recs = NULL;
    a->b = NULL;
    a->count = 0;
}

/* Reads a batch's records (recs[0..count)) into bufs. 0 or SC_E*. */
static int read_batch(struct ch_shard *sh, const struct ch_rec *recs, struct sc_buf *bufs,
                      uint32_t count, char *err)
{
    int rc = 0;
    for (uint32_t i = 0; rc == 0 && i < count; i++)
        rc = read_payload(sh, &recs[i], &bufs[i], err);
    return rc;
}

static void *ahead_thread(void *arg)
{
    struct ahead *a = arg;
    char err[SC_ERR_LEN];
    /* a failure leaves it unprepared: the flusher prepares it again in turn, and meets
     * the failure there */
    if (read_batch(a->sh, a->recs, a->bufs, a->count, err) ||
        ch_batch_prepare(a->s, a->sh, a->bufs, a->count, &a->held, &a->b, err))
        a->b = NULL;
    return NULL;
}

/* Starts preparing the batch after the first `after` records at the head, b's, when a
 * whole batch of them waits (a backlog: a part batch waits for its time instead). */
static void ahead_start(struct ch_store *s, struct ch_shard *sh, uint32_t after,
                        const struct ch_batch *b, struct ahead *a)
{
    struct ch_log *l = &sh->log;
    pthread_mutex_lock(&sh->qmu);
    uint32_t at = l->head + after;
    uint32_t count = sh->stop ? 0 : batch_at(l, at);
    int whole = count == CH_FLUSH_PROFILES ||
                (count > 0 && at + count < l->n && l->recs[at + count].end <= l->synced);
    a->recs = whole ? malloc((size_t)count * sizeof *a->recs) : NULL;
    if (a->recs)
        memcpy(a->recs, l->recs + at, (size_t)count * sizeof *a->recs);
    pthread_mutex_unlock(&sh->qmu);
    if (!a->recs)
        return;
    a->count = count;
    a->bufs = calloc(count, sizeof *a->bufs);
    a->s = s;
    a->sh = sh;
    sc_map64_init(&a->held);
    if (!a->bufs || ch_batch_pushes(b, &a->held) ||
        pthread_create(&a->thread, NULL, ahead_thread, a)) {
        ahead_drop(a);
        return;
    }
    a->running = 1;
}

static void ahead_join(struct ahead *a)
{
    if (a->running)
        pthread_join(a->thread, NULL);
    a->running = 0;
}

/* Inserts one batch: the records at the head of the log, fsync'd, up to the batch's
 * bounds (or the batch prepared ahead, when it is the same). Called without qmu; returns
 * with the outcome applied under it, and the next batch prepared in *a when a backlog
 * waits. */
static void flush_batch(struct ch_store *s, struct ch_shard *sh, uint32_t count, struct ahead *a)
{
    struct ch_log *l = &sh->log;
    struct ch_rec *recs = NULL;
    struct sc_buf *bufs = NULL;
    struct ch_batch *b = NULL;
    char err[SC_ERR_LEN] = "";
    int rc = 0;
    pthread_mutex_lock(&sh->qmu);
    if (a->b && a->count == count && a->recs[0].end == l->recs[l->head].end) {
        recs = a->recs;
        bufs = a->bufs;
        b = a->b;
        a->recs = NULL;
        a->bufs = NULL;
        a->b = NULL;
        sh->batches_ahead++;
    }
    pthread_mutex_unlock(&sh->qmu);
    ahead_drop(a);
    if (!b) {
        recs = malloc((size_t)count * sizeof *recs);
        bufs = calloc(count, sizeof *bufs);
        rc = !recs || !bufs ? sc_errf(err, SC_ENOMEM, "out of memory") : 0;
        pthread_mutex_lock(&sh->qmu);
        if (rc == 0)
            memcpy(recs, l->recs + l->head, (size_t)count * sizeof *recs);
        pthread_mutex_unlock(&sh->qmu);
        if (rc == 0)
            rc = read_batch(sh, recs, bufs, count, err);
        if (rc == 0)
            rc = ch_batch_prepare(s, sh, bufs, count, NULL, &b, err);
    }
    uint64_t dups = 0;
    if (rc == 0) {
        ahead_start(s, sh, count, b, a);
        rc = ch_batch_commit(s, sh, b, &dups, err);
        ahead_join(a);
    }
    ch_batch_free(b);
    if (rc) {
        ahead_drop(a); /* it may hold what this batch failed to insert */
        dups = 0;
    }
    if (rc == SC_ENOTFOUND) /* a shard that lost its tables: ch_insert_records makes them */
        rc = ch_insert_records(s, sh, bufs, count, &dups, err);
    /* an unreachable replica: the batch goes to the next one, each tried once. The batch
     * is the same (the same records, so the same blocks): a replicated table leaves out
     * a block the other replica stored before its answer was lost, even when the push
     * ids' lookup on a lagging replica does not find it */
    for (uint32_t k = 1; rc == SC_EUNAVAIL && k < sh->nreps; k++) {
        unsigned cur = atomic_load(&sh->cur);
        atomic_compare_exchange_strong(&sh->cur, &cur, cur + 1);
        sc_logf("clickhouse shard %u: %s unreachable, inserts go to %s", (unsigned)sh->index,
                sh->reps[cur % sh->nreps].url, ch_ep(sh)->url);
        clear_caches(s, sh); /* the next replica may not have fetched all the stacks yet */
        rc = ch_insert_records(s, sh, bufs, count, &dups, err);
    }
    for (uint32_t i = 0; bufs && i < count; i++)
        sc_buf_release(&bufs[i]);
    free(bufs);
    if (rc)
        clear_caches(s, sh); /* it may come back without what it had */
    pthread_mutex_lock(&sh->qmu);
    if (rc == 0) {
        for (uint32_t i = 0; i < count; i++)
            l->pending -= REC_HEAD + (uint64_t)recs[i].len;
        l->head += count;
        sh->retry_count = 0;
        sh->inserted = recs[count - 1].end;
        sh->inserts++;
        sh->duplicates += dups;
        if (sh->down)
            sc_logf("clickhouse shard %u (%s) takes inserts again", (unsigned)sh->index,
                    ch_ep(sh)->url);
        sh->down = 0;
        sh->backoff = 0;
        drop_segments(sh);
    } else {
        if (!sh->down || strcmp(sh->down_err, err))
            sc_logf("clickhouse shard %u (%s): inserts fail, pushes wait in "
                    "the local log: %s",
                    (unsigned)sh->index, ch_ep(sh)->url, err);
        sh->insert_errors++;
        sh->down = 1;
        sh->down_rc = rc;
        sh->retry_count = count; /* sent again as it was: the same blocks */
        sh->last_try = sc_mono_ns();
        sh->backoff = sh->backoff ? sh->backoff * 2 : BACKOFF_MIN_NS;
        if (sh->backoff > BACKOFF_MAX_NS)
            sh->backoff = BACKOFF_MAX_NS;
        sh->retry_at = sc_mono_ns() + sh->backoff;
        snprintf(sh->down_err, sizeof sh->down_err, "%s", err);
    }
    pthread_cond_broadcast(&sh->qcond);
    pthread_mutex_unlock(&sh->qmu);
    free(recs);
}

static void *flusher(void *arg)
{
    struct flusher_arg *fa = arg;
    struct ch_store *s = fa->s;
    struct ch_shard *sh = fa->sh;
    free(fa);
    struct ch_log *l = &sh->log;
    struct ahead ahead;
    memset(&ahead, 0, sizeof ahead);
    pthread_mutex_lock(&sh->qmu);
    for (;;) {
        uint32_t count = batch_at(l, l->head);
        int64_t now = sc_mono_ns();
        struct timespec ts;
        if (sh->stop && (count == 0 || sh->down))
            break;
        if (!sh->stop && sh->down && now < sh->retry_at) {
            sc_deadline(&ts, sh->retry_at - now);
            pthread_cond_timedwait(&sh->qcond, &sh->qmu, &ts);
            continue;
        }
        if (count == 0) {
            pthread_cond_wait(&sh->qcond, &sh->qmu);
            continue;
        }
        int64_t due = l->recs[l->head].t_ns + CH_FLUSH_NS;
        if (!sh->stop && !sh->kick && !ahead.b && count < CH_FLUSH_PROFILES && now < due) {
            sc_deadline(&ts, due - now);
            pthread_cond_timedwait(&sh->qcond, &sh->qmu, &ts);
            continue;
        }
        sh->kick = 0;
        if (sh->retry_count && count > sh->retry_count)
            count = sh->retry_count;
        pthread_mutex_unlock(&sh->qmu);
        flush_batch(s, sh, count, &ahead);
        pthread_mutex_lock(&sh->qmu);
    }
    pthread_mutex_unlock(&sh->qmu);
    ahead_drop(&ahead);
    return NULL;
}

int ch_flusher_start(struct ch_store *s, struct ch_shard *sh, char *err)
{
    struct flusher_arg *fa = malloc(sizeof *fa);
    if (!fa)
        return sc_errf(err, SC_ENOMEM, "out of memory");
    fa->s = s;
    fa->sh = sh;
    if (pthread_create(&sh->flusher, NULL, flusher, fa)) {
        free(fa);
        return sc_errf(err, SC_EIO, "cannot start the flusher of clickhouse shard %u",
                       (unsigned)sh->index);
    }
    sh->flusher_running = 1;
    return 0;
}

void ch_flusher_stop(struct ch_shard *sh)
{
    if (!sh->flusher_running)
        return;
    pthread_mutex_lock(&sh->qmu);
    sh->stop = 1;
    pthread_cond_broadcast(&sh->qcond);
    pthread_mutex_unlock(&sh->qmu);
    pthread_join(sh->flusher, NULL);
    sh->flusher_running = 0;
}

void ch_wait_inserted(struct ch_store *s)
{
    int64_t deadline = sc_mono_ns() + s->base.opts.write_timeout_ns;
    /* never past the query's own budget (server.query_timeout) */
    struct sc_budget *bud = sc_budget_current();
    if (bud && bud->deadline_ns && bud->deadline_ns < deadline)
        deadline = bud->deadline_ns;
    for (uint32_t i = 0; i < s->nshards; i++) {
        struct ch_shard *sh = &s->shards[i];
        struct ch_log *l = &sh->log;
        pthread_mutex_lock(&sh->qmu);
        uint64_t target = l->synced;
        while (!sh->down && !sh->stop && sh->flusher_running && l->head < l->n &&
               l->recs[l->head].end <= target) {
            int64_t now = sc_mono_ns();
            if (now >= deadline)
                break;
            sh->kick = 1;
            pthread_cond_broadcast(&sh->qcond);
            struct timespec ts;
            sc_deadline(&ts, deadline - now);
            pthread_cond_timedwait(&sh->qcond, &sh->qmu, &ts);
        }
        pthread_mutex_unlock(&sh->qmu);
    }
}

uint32_t ch_shards_down(struct ch_store *s, char *err)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < s->nshards; i++) {
        struct ch_shard *sh = &s->shards[i];
        pthread_mutex_lock(&sh->qmu);
        if (sh->down && n++ == 0 && err)
            snprintf(err, SC_ERR_LEN, "clickhouse shard %u (%.60s) is down: %.150s", (unsigned)i,
                     ch_ep(sh)->url, sh->down_err);
        pthread_mutex_unlock(&sh->qmu);
    }
    return n;
}

int ch_shard_unreachable(struct ch_store *s, char *err)
{
    int rc = 0;
    int64_t now = sc_mono_ns();
    for (uint32_t i = 0; i < s->nshards && rc == 0; i++) {
        struct ch_shard *sh = &s->shards[i];
        pthread_mutex_lock(&sh->qmu);
        if (sh->down && sh->down_rc == SC_EUNAVAIL && now < sh->retry_at &&
            now - sh->last_try >= SC_NS_PER_S) {
            /* the read asks for the shard to be tried now (once a second at most), so
             * reads find it as soon as it is back rather than after its backoff */
            sh->retry_at = now;
            pthread_cond_broadcast(&sh->qcond);
        } else if (sh->down && sh->down_rc == SC_EUNAVAIL && now < sh->retry_at)
            rc = sc_errf(err, SC_EUNAVAIL,
                         "clickhouse shard %u (%.60s) is down, a read needs every shard (tried "
                         "again within %lld ms): %.120s",
                         (unsigned)i, ch_ep(sh)->url, (long long)((sh->retry_at - now) / 1000000),
                         sh->down_err);
        pthread_mutex_unlock(&sh->qmu);
    }
    return rc;
}
