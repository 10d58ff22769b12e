/* test_queue.c - the agent's on-disk queue: order, durability, bounds, corruption, locking. */
#include "t.h"

#include "collect/queue.h"
#include "model/error.h"
#include "model/log.h"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

static char dir[256];

static void cleanup(void)
{
    DIR *d = opendir(dir);
    struct dirent *de;
    char p[512];
    while (d && (de = readdir(d)))
        if (de->d_name[0] != '.' || strcmp(de->d_name, ".lock") == 0) {
            snprintf(p, sizeof p, "%s/%s", dir, de->d_name);
            unlink(p);
        }
    if (d)
        closedir(d);
    rmdir(dir);
}

static int push(struct sc_queue *q, const char *meta, const char *body)
{
    char err[SC_ERR_LEN];
    return sc_queue_push(q, meta, strlen(meta), body, strlen(body), err);
}

/* Takes the next entry and returns its meta in a static buffer ("" when none). */
static const char *take(struct sc_queue *q, uint64_t *seq)
{
    static char m[256];
    struct sc_queue_entry e;
    char err[SC_ERR_LEN];
    if (sc_queue_take(q, 1000000, &e, err))
        return "";
    snprintf(m, sizeof m, "%s", e.meta.data ? e.meta.data : "");
    *seq = e.seq;
    sc_queue_entry_release(&e);
    return m;
}

static void test_order_and_reopen(void)
{
    struct sc_queue *q = NULL;
    char err[SC_ERR_LEN] = "";
    T_EQ_INT(sc_queue_open(dir, 1 << 20, &q, err), 0);
    T_EQ_INT(push(q, "a", "body-a"), 0);
    T_EQ_INT(push(q, "b", "body-b"), 0);
    T_EQ_INT(push(q, "c", "body-c"), 0);
    uint64_t s1, s2;
    T_EQ_STR(take(q, &s1), "a");
    T_EQ_STR(take(q, &s2), "b"); /* a is taken: the next one */
    sc_queue_putback(q, s1);     /* a failed: it is the oldest again */
    uint64_t s3;
    T_EQ_STR(take(q, &s3), "a");
    T_EQ_INT(s3, s1);
    sc_queue_done(q, s3);
    sc_queue_putback(q, s2);
    /* a second process cannot use the directory */
    struct sc_queue *q2 = NULL;
    T_EQ_INT(sc_queue_open(dir, 1 << 20, &q2, err), SC_EEXISTS);
    sc_queue_close(q);

    /* what was not done survives, in order, and new entries come after it */
    int fd = open(strcat(strcpy((char[300]){0}, dir), "/tmp-00000000000000ff"), O_WRONLY | O_CREAT,
                  0644);
    if (fd >= 0)
        close(fd); /* a push that never finished */
    T_EQ_INT(sc_queue_open(dir, 1 << 20, &q, err), 0);
    struct sc_queue_stats st;
    sc_queue_stats(q, &st);
    T_EQ_INT(st.entries, 2);
    T_EQ_INT(st.unfinished, 1);
    T_EQ_INT(push(q, "d", "body-d"), 0);
    uint64_t s;
    struct sc_queue_entry e;
    T_EQ_INT(sc_queue_take(q, 0, &e, err), 0);
    T_EQ_STR(e.meta.data, "b");
    T_EQ_MEM(e.body.data, e.body.len, "body-b");
    sc_queue_done(q, e.seq);
    sc_queue_entry_release(&e);
    T_EQ_STR(take(q, &s), "c");
    sc_queue_done(q, s);
    T_EQ_STR(take(q, &s), "d");
    sc_queue_done(q, s);
    T_EQ_STR(take(q, &s), ""); /* empty */
    sc_queue_stats(q, &st);
    T_EQ_INT(st.entries, 0);
    T_EQ_INT(st.bytes, 0);
    sc_queue_close(q);
    T_CHECK(access(strcat(strcpy((char[300]){0}, dir), "/tmp-00000000000000ff"), F_OK) != 0);
}

static void test_bound(void)
{
    struct sc_queue *q = NULL;
    char err[SC_ERR_LEN] = "";
    char body[1000];
    memset(body, 'x', sizeof body - 1);
    body[sizeof body - 1] = 0;
    /* room for three entries of ~1 KB */
    T_EQ_INT(sc_queue_open(dir, 3200, &q, err), 0);
    T_EQ_INT(push(q, "1", body), 0);
    T_EQ_INT(push(q, "2", body), 0);
    T_EQ_INT(push(q, "3", body), 0);
    uint64_t s1;
    T_EQ_STR(take(q, &s1), "1"); /* being sent: not evicted */
    T_EQ_INT(push(q, "4", body), 0);
    T_EQ_INT(push(q, "5", body), 0);
    struct sc_queue_stats st;
    sc_queue_stats(q, &st);
    T_EQ_INT(st.evicted, 2); /* 2 and 3, the oldest not taken */
    T_CHECK(st.bytes <= 3200 + 1100);
    sc_queue_putback(q, s1);
    uint64_t s;
    T_EQ_STR(take(q, &s), "1");
    sc_queue_done(q, s);
    T_EQ_STR(take(q, &s), "4");
    sc_queue_done(q, s);
    T_EQ_STR(take(q, &s), "5");
    sc_queue_done(q, s);
    char big[4000];
    memset(big, 'y', sizeof big - 1);
    big[sizeof big - 1] = 0;
    T_EQ_INT(push(q, "big", big), SC_ELIMIT);
    sc_queue_close(q);
}

static char logged[2][512];
static int nlogged;

static void log_line(void *ctx, const char *line)
{
    (void)ctx;
    if (nlogged < 2)
        snprintf(logged[nlogged], sizeof logged[0], "%s", line);
    nlogged++;
}

static void test_corrupt(void)
{
    struct sc_queue *q = NULL;
    char err[SC_ERR_LEN] = "";
    T_EQ_INT(sc_queue_open(dir, 1 << 20, &q, err), 0);
    T_EQ_INT(push(q, "good1", "aaaa"), 0);
    T_EQ_INT(push(q, "bad", "bbbb"), 0);
    T_EQ_INT(push(q, "torn", "dddd"), 0);
    T_EQ_INT(push(q, "good2", "cccc"), 0);
    sc_queue_close(q);
    /* flip a body byte of the second entry, cut the third in half */
    DIR *d = opendir(dir);
    struct dirent *de;
    char names[4][600];
    int n = 0;
    while (d && (de = readdir(d)))
        if (strstr(de->d_name, ".entry") && n < 4)
            snprintf(names[n++], sizeof names[0], "%s/%s", dir, de->d_name);
    closedir(d);
    T_EQ_INT(n, 4);
    qsort(names, (size_t)n, sizeof names[0], (int (*)(const void *, const void *))strcmp);
    int fd = open(names[1], O_WRONLY);
    T_CHECK(fd >= 0);
    if (fd >= 0) {
        T_EQ_INT(pwrite(fd, "X", 1, 20 + 3), 1);
        close(fd);
    }
    T_EQ_INT(truncate(names[2], 30), 0); /* a header, half a body */
    T_EQ_INT(sc_queue_open(dir, 1 << 20, &q, err), 0);
    void *was_ctx;
    sc_log_fn was = sc_log_get(&was_ctx);
    sc_log_set(log_line, NULL);
    uint64_t s;
    T_EQ_STR(take(q, &s), "good1");
    sc_queue_done(q, s);
    T_EQ_STR(take(q, &s), "good2"); /* neither damaged entry stops the queue */
    sc_queue_done(q, s);
    struct sc_queue_stats st;
    sc_queue_stats(q, &st);
    T_EQ_INT(st.corrupt, 2);
    T_EQ_INT(st.entries, 0);
    /* each is named, with the reason */
    T_EQ_INT(nlogged, 2);
    T_CHECK(strstr(logged[0], names[1]) && strstr(logged[0], "checksum mismatch"));
    T_CHECK(strstr(logged[1], names[2]) && strstr(logged[1], "truncated"));
    sc_log_set(was, was_ctx);
    sc_queue_close(q);
}

int main(void)
{
    snprintf(dir, sizeof dir, "/tmp/scorch-test-queue-XXXXXX");
    if (!mkdtemp(dir))
        T_SKIP("no temporary directory");
    strcat(dir, "/q/sub"); /* parents are created */
    T_RUN(test_order_and_reopen);
    T_RUN(test_bound);
    T_RUN(test_corrupt);
    cleanup();
    *strrchr(dir, '/') = 0;
    rmdir(dir);
    *strrchr(dir, '/') = 0;
    rmdir(dir);
    return t_done();
}
