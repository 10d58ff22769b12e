/* queue.c - entries as fsync'd files in a directory, oldest first, bounded in bytes. */
#include "collect/queue.h"
#include "model/error.h"
#include "model/fileio.h"
#include "model/clock.h"
#include "model/hash.h"
#include "model/log.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define MAGIC "SCQUEUE1"
#define HEAD 20
#define TAIL 8
#define MAX_META (1u << 20)

struct qentry {
    uint64_t seq, size;
    int taken;
};

struct sc_queue {
    char *dir;
    int dirfd, lockfd;
    uint64_t max_bytes;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    struct qentry *v; /* sorted by seq */
    uint32_t n, cap;
    uint64_t bytes; /* entries' sizes plus pushes being written */
    uint64_t next_seq;
    uint64_t taken, pushed, evicted, evicted_bytes, corrupt, unfinished;
    unsigned wake; /* bumped by sc_queue_wake */
};

static void put_le(unsigned char *p, uint64_t v, int n)
{
    for (int i = 0; i < n; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

static uint64_t get_le(const unsigned char *p, int n)
{
    uint64_t v = 0;
    for (int i = 0; i < n; i++)
        v |= (uint64_t)p[i] << (8 * i);
    return v;
}

static void entry_path(const struct sc_queue *q, uint64_t seq, char *out, size_t n)
{
    snprintf(out, n, "%s/%016" PRIx64 ".entry", q->dir, seq);
}

static int cmp_entry(const void *a, const void *b)
{
    uint64_t x = ((const struct qentry *)a)->seq, y = ((const struct qentry *)b)->seq;
    return x < y ? -1 : x > y;
}

static int add_entry(struct sc_queue *q, uint64_t seq, uint64_t size)
{
    if (sc_grow_array(&q->v, &q->cap, (uint64_t)q->n + 1, sizeof *q->v))
        return SC_ENOMEM;
    /* usually the newest: insert from the back */
    uint32_t i = q->n;
    while (i > 0 && q->v[i - 1].seq > seq)
        i--;
    memmove(q->v + i + 1, q->v + i, (q->n - i) * sizeof *q->v);
    q->v[i] = (struct qentry){seq, size, 0};
    q->n++;
    return 0;
}

static int find(const struct sc_queue *q, uint64_t seq)
{
    uint32_t lo = 0, hi = q->n;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (q->v[mid].seq < seq)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < q->n && q->v[lo].seq == seq ? (int)lo : -1;
}

/* Removes entry i and its file (under mu). */
static void remove_at(struct sc_queue *q, uint32_t i)
{
    char path[4200];
    entry_path(q, q->v[i].seq, path, sizeof path);
    unlink(path);
    q->bytes -= q->v[i].size;
    memmove(q->v + i, q->v + i + 1, (q->n - i - 1) * sizeof *q->v);
    q->n--;
}

/* Makes room for `need` more bytes by evicting the oldest entries not taken (under mu). */
static void make_room(struct sc_queue *q, uint64_t need)
{
    uint32_t i = 0;
    while (q->bytes + need > q->max_bytes && i < q->n) {
        if (q->v[i].taken) {
            i++;
            continue;
        }
        q->evicted++;
        q->evicted_bytes += q->v[i].size;
        remove_at(q, i);
    }
}

int sc_queue_open(const char *dir, uint64_t max_bytes, struct sc_queue **out, char *err)
{
    if (sc_mkdir_p(dir))
        return sc_errf(err, SC_EIO, "cannot create queue directory '%s': %s", dir, strerror(errno));
    struct sc_queue *q = calloc(1, sizeof *q);
    if (!q || !(q->dir = strdup(dir))) {
        free(q);
        return sc_errf(err, SC_ENOMEM, "out of memory");
    }
    q->max_bytes = max_bytes;
    q->lockfd = -1;
    pthread_mutex_init(&q->mu, NULL);
    sc_cond_init(&q->cv);
    int rc = 0;
    q->dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (q->dirfd < 0) {
        rc = sc_errf(err, SC_EIO, "cannot open queue directory '%s': %s", dir, strerror(errno));
        goto fail;
    }
    q->lockfd = openat(q->dirfd, ".lock", O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (q->lockfd < 0 || flock(q->lockfd, LOCK_EX | LOCK_NB)) {
        rc = sc_errf(err, SC_EEXISTS, "queue directory '%s' is in use by another process", dir);
        goto fail;
    }
    DIR *d = fdopendir(dup(q->dirfd));
    if (!d) {
        rc = sc_errf(err, SC_EIO, "cannot list queue directory '%s': %s", dir, strerror(errno));
        goto fail;
    }
    struct dirent *de;
    while ((de = readdir(d))) {
        const char *nm = de->d_name;
        if (!strncmp(nm, "tmp-", 4)) {
            if (!unlinkat(q->dirfd, nm, 0)) /* a push that did not finish */
                q->unfinished++;
            continue;
        }
        size_t l = strlen(nm);
        if (l != 16 + 6 || strcmp(nm + 16, ".entry"))
            continue;
        char *end;
        uint64_t seq = strtoull(nm, &end, 16);
        if (end != nm + 16)
            continue;
        struct stat sb;
        if (fstatat(q->dirfd, nm, &sb, 0))
            continue;
        if (add_entry(q, seq, (uint64_t)sb.st_size)) {
            closedir(d);
            rc = sc_errf(err, SC_ENOMEM, "out of memory");
            goto fail;
        }
        q->bytes += (uint64_t)sb.st_size;
        if (seq >= q->next_seq)
            q->next_seq = seq + 1;
    }
    closedir(d);
    if (q->n)
        qsort(q->v, q->n, sizeof *q->v, cmp_entry);
    make_room(q, 0); /* the limit may have been lowered */
    *out = q;
    return 0;
fail:
    sc_queue_close(q);
    return rc;
}

void sc_queue_close(struct sc_queue *q)
{
    if (!q)
        return;
    if (q->lockfd >= 0)
        close(q->lockfd);
    if (q->dirfd >= 0)
        close(q->dirfd);
    pthread_mutex_destroy(&q->mu);
    pthread_cond_destroy(&q->cv);
    free(q->v);
    free(q->dir);
    free(q);
}

int sc_queue_push(struct sc_queue *q, const void *meta, size_t mlen, const void *body, size_t blen,
                  char *err)
{
    uint64_t size = HEAD + mlen + blen + TAIL;
    if (mlen > MAX_META)
        return sc_errf(err, SC_ELIMIT, "queue entry metadata of %zu bytes", mlen);
    pthread_mutex_lock(&q->mu);
    if (size > q->max_bytes) {
        pthread_mutex_unlock(&q->mu);
        return sc_errf(err, SC_ELIMIT, "a profile of %llu bytes is larger than the queue (%llu)",
                       (unsigned long long)size, (unsigned long long)q->max_bytes);
    }
    make_room(q, size);
    q->bytes += size; /* reserved while the file is written */
    uint64_t seq = q->next_seq++;
    pthread_mutex_unlock(&q->mu);

    unsigned char head[HEAD], tail[TAIL];
    /* NOLINTNEXTLINE(bugprone-not-null-terminated-result): 8 magic bytes, no string */
    memcpy(head, MAGIC, 8);
    put_le(head + 8, mlen, 4);
    put_le(head + 12, blen, 8);
    uint64_t h = sc_hash_combine(sc_hash_combine(sc_hash64(head, HEAD), sc_hash64(meta, mlen)),
                                 sc_hash64(body, blen));
    put_le(tail, h, 8);
    char tmp[64], fin[64];
    snprintf(tmp, sizeof tmp, "tmp-%016" PRIx64, seq);
    snprintf(fin, sizeof fin, "%016" PRIx64 ".entry", seq);
    int rc = 0;
    int fd = openat(q->dirfd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0 || sc_write_all(fd, head, HEAD) || sc_write_all(fd, meta, mlen) ||
        sc_write_all(fd, body, blen) || sc_write_all(fd, tail, TAIL) || fsync(fd)) {
        rc = sc_errf(err, SC_EIO, "cannot write to queue directory '%s': %s", q->dir,
                     strerror(errno));
    }
    if (fd >= 0 && close(fd) && !rc)
        rc = sc_errf(err, SC_EIO, "cannot write to queue directory '%s': %s", q->dir,
                     strerror(errno));
    int renamed = 0;
    if (!rc && renameat(q->dirfd, tmp, q->dirfd, fin))
        rc = sc_errf(err, SC_EIO, "cannot rename in queue directory '%s': %s", q->dir,
                     strerror(errno));
    else if (!rc)
        renamed = 1;
    if (!rc && fsync(q->dirfd))
        rc = sc_errf(err, SC_EIO, "cannot sync queue directory '%s': %s", q->dir, strerror(errno));
    /* a failed push leaves no file: the caller keeps the profile or says it is lost, and a
     * file left behind would be sent too after a restart, or outlive the queue's bound */
    if (rc)
        unlinkat(q->dirfd, renamed ? fin : tmp, 0);
    pthread_mutex_lock(&q->mu);
    q->bytes -= size;
    if (!rc) {
        if (add_entry(q, seq, size)) {
            unlinkat(q->dirfd, fin, 0);
            rc = sc_errf(err, SC_ENOMEM, "out of memory");
        } else {
            q->bytes += size;
            q->pushed++;
            pthread_cond_signal(&q->cv);
        }
    }
    pthread_mutex_unlock(&q->mu);
    return rc;
}

void sc_queue_entry_release(struct sc_queue_entry *e)
{
    sc_buf_release(&e->meta);
    sc_buf_release(&e->body);
}

/* read_entry's answer when memory ran out: the entry is fine and stays (tried again later). */
static const char read_oom[] = "out of memory";

/* Reads and checks an entry's file. NULL, or why it is unreadable or corrupt (read_oom:
 * neither). */
static const char *read_entry(struct sc_queue *q, uint64_t seq, uint64_t size,
                              struct sc_queue_entry *e)
{
    char path[4200];
    entry_path(q, seq, path, sizeof path);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return "cannot open it";
    struct sc_buf all = SC_BUF_INIT;
    const char *bad = size < HEAD + TAIL                ? "shorter than a header"
                      : sc_buf_reserve(&all, size) != 0 ? read_oom
                                                        : NULL;
    while (!bad) {
        ssize_t r = read(fd, all.data + all.len, all.cap - all.len - 1);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            bad = "cannot read it";
        if (r <= 0)
            break;
        all.len += (size_t)r;
        if (all.len + 1 >= all.cap)
            break;
    }
    close(fd);
    const unsigned char *p = (const unsigned char *)all.data;
    uint64_t mlen = 0, blen = 0;
    if (!bad && all.len != size)
        bad = "its size changed";
    if (!bad && memcmp(p, MAGIC, 8))
        bad = "no SCQUEUE1 header";
    if (!bad) {
        mlen = get_le(p + 8, 4);
        blen = get_le(p + 12, 8);
        if (mlen > size || blen > size || HEAD + mlen + blen + TAIL != size)
            bad = "truncated: the header's lengths do not add up to its size";
    }
    if (!bad) {
        uint64_t h = sc_hash_combine(sc_hash_combine(sc_hash64(p, HEAD), sc_hash64(p + HEAD, mlen)),
                                     sc_hash64(p + HEAD + mlen, blen));
        if (h != get_le(p + HEAD + mlen + blen, 8))
            bad = "checksum mismatch";
    }
    if (!bad) {
        sc_buf_init(&e->meta);
        sc_buf_init(&e->body);
        sc_buf_append(&e->meta, p + HEAD, mlen);
        sc_buf_append(&e->body, p + HEAD + mlen, blen);
        sc_buf_putc(&e->meta, 0);
        e->meta.len--;
        if (e->meta.oom || e->body.oom) {
            sc_queue_entry_release(e);
            bad = read_oom;
        }
        e->seq = seq;
    }
    sc_buf_release(&all);
    return bad;
}

int sc_queue_take(struct sc_queue *q, int64_t wait_ns, struct sc_queue_entry *e, char *err)
{
    struct timespec until;
    sc_deadline(&until, wait_ns);
    pthread_mutex_lock(&q->mu);
    unsigned wake = q->wake;
    for (;;) {
        uint32_t i = 0;
        while (i < q->n && q->v[i].taken)
            i++;
        if (i < q->n) {
            q->v[i].taken = 1;
            q->taken++;
            uint64_t seq = q->v[i].seq, size = q->v[i].size;
            pthread_mutex_unlock(&q->mu);
            const char *why = read_entry(q, seq, size, e);
            if (!why)
                return 0;
            pthread_mutex_lock(&q->mu);
            if (why == read_oom) {
                /* not the entry's fault: it stays, untaken, for a later try */
                int k = find(q, seq);
                if (k >= 0 && q->v[k].taken) {
                    q->v[k].taken = 0;
                    q->taken--;
                }
                pthread_mutex_unlock(&q->mu);
                return sc_errf(err, SC_ENOMEM, "out of memory reading a queue entry");
            }
            char path[4200];
            entry_path(q, seq, path, sizeof path);
            sc_logf("queue entry '%s' is damaged (%s): dropped it", path, why);
            int k = find(q, seq);
            if (k >= 0) {
                q->taken--;
                q->corrupt++;
                remove_at(q, (uint32_t)k);
            }
            continue;
        }
        if (q->wake != wake || pthread_cond_timedwait(&q->cv, &q->mu, &until) == ETIMEDOUT ||
            q->wake != wake)
            break;
    }
    pthread_mutex_unlock(&q->mu);
    return SC_ENOTFOUND;
}

void sc_queue_done(struct sc_queue *q, uint64_t seq)
{
    pthread_mutex_lock(&q->mu);
    int k = find(q, seq);
    if (k >= 0) {
        if (q->v[k].taken)
            q->taken--;
        remove_at(q, (uint32_t)k);
    }
    pthread_mutex_unlock(&q->mu);
}

void sc_queue_putback(struct sc_queue *q, uint64_t seq)
{
    pthread_mutex_lock(&q->mu);
    int k = find(q, seq);
    if (k >= 0 && q->v[k].taken) {
        q->v[k].taken = 0;
        q->taken--;
        pthread_cond_signal(&q->cv);
    }
    pthread_mutex_unlock(&q->mu);
}

void sc_queue_wake(struct sc_queue *q)
{
    pthread_mutex_lock(&q->mu);
    q->wake++;
    pthread_cond_broadcast(&q->cv);
    pthread_mutex_unlock(&q->mu);
}

void sc_queue_stats(struct sc_queue *q, struct sc_queue_stats *st)
{
    pthread_mutex_lock(&q->mu);
    st->entries = q->n;
    st->bytes = 0;
    for (uint32_t i = 0; i < q->n; i++)
        st->bytes += q->v[i].size;
    st->max_bytes = q->max_bytes;
    st->taken = q->taken;
    st->pushed = q->pushed;
    st->evicted = q->evicted;
    st->evicted_bytes = q->evicted_bytes;
    st->corrupt = q->corrupt;
    st->unfinished = q->unfinished;
    pthread_mutex_unlock(&q->mu);
}
