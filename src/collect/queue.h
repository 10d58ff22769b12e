/* queue.h - the agent's bounded on-disk queue: a push is durable before it is sent. */
#ifndef SC_QUEUE_H
#define SC_QUEUE_H

#include <stddef.h>
#include <stdint.h>

#include "model/buf.h"

/* A directory of entries, one file each, named <seq>.entry (seq: 16 lower-case hex digits,
 * increasing), oldest first. A file is written as tmp-<seq>, fsync'd, renamed and the
 * directory fsync'd, so an entry is either whole or absent after a crash (leftover tmp-*
 * files are removed at open). A file:
 *
 *   OFFSET     SIZE  MEANING
 *   0          8     magic "SCQUEUE1"
 *   8          4     meta length M, little-endian
 *   12         8     body length B, little-endian
 *   20         M     meta: what the sender needs besides the body (the agent: the push's
 *                    query string)
 *   20+M       B     body (the agent: the gzipped pprof)
 *   20+M+B     8     sc_hash64 of bytes [0, 20+M+B), little-endian
 *
 * A file that does not check out is removed, counted as corrupt and logged (model/log.h):
 * a torn or damaged file never stops the entries after it. The queue's bytes (file
 * sizes) stay under max_bytes: a push that would pass it first removes the oldest entries
 * nobody is sending (counted as evicted). A lock file (.lock, flock) keeps a second process
 * out of the directory. Thread safe. */
struct sc_queue;

/* Opens (creating the directory and its parents) and loads what is there. 0, or SC_EIO /
 * SC_EEXISTS (the directory is in use by another process) with the reason in err. */
int sc_queue_open(const char *dir, uint64_t max_bytes, struct sc_queue **out, char *err);
/* Closes; entries stay on disk. NULL is fine. */
void sc_queue_close(struct sc_queue *q);

/* Appends an entry durably. 0, SC_ELIMIT (larger than max_bytes alone) or SC_EIO. */
int sc_queue_push(struct sc_queue *q, const void *meta, size_t mlen, const void *body, size_t blen,
                  char *err);

/* An entry taken for sending; meta and body are NUL-terminated buffers the caller releases
 * (sc_queue_entry_release). */
struct sc_queue_entry {
    uint64_t seq;
    struct sc_buf meta, body;
};
void sc_queue_entry_release(struct sc_queue_entry *e);

/* Takes the oldest entry nobody has taken, waiting up to wait_ns for one. 0 (e is filled),
 * SC_ENOTFOUND (none came, or sc_queue_wake was called), or SC_ENOMEM (memory ran out
 * reading it: the entry stays, try later). Unreadable or corrupt files are removed and
 * skipped. The entry stays in the queue until sc_queue_done. */
int sc_queue_take(struct sc_queue *q, int64_t wait_ns, struct sc_queue_entry *e, char *err);
/* A taken entry was delivered (or given up for good): removes it. */
void sc_queue_done(struct sc_queue *q, uint64_t seq);
/* A taken entry goes back, to be taken again (it keeps its place: oldest first). */
void sc_queue_putback(struct sc_queue *q, uint64_t seq);
/* Wakes every sc_queue_take that waits. */
void sc_queue_wake(struct sc_queue *q);

struct sc_queue_stats {
    uint64_t entries, bytes, max_bytes, taken;
    uint64_t pushed, evicted, evicted_bytes, corrupt;
    uint64_t unfinished; /* tmp-* files of pushes a crash cut short, removed at open */
};
void sc_queue_stats(struct sc_queue *q, struct sc_queue_stats *st);

#endif
