/* gc_bench.c - what garbage collection after retention costs the writers meanwhile.
 *
 * Writes DAYS days up to today of profiles whose stacks are all new (a fresh build each
 * day: STACKS stacks and a pool of FUNCS frames per day), rolls them up, then reopens the
 * store with the background thread on (as the server runs it, compacting every second) and
 * a retention that keeps from the middle of yesterday, while one thread pushes a small
 * profile every millisecond. Once collection has freed the frames of the first day it prints how
 * long that took and the pushes' latency meanwhile: the longest a push waited is what compaction
 * held the writers for.
 *
 * usage: gc_bench [DIR] [STACKS] [DAYS]   (defaults: a temp dir, 200000 stacks a day, 3)
 */
#include "formats/folded.h"
#include "formats/input.h"
#include "model/buf.h"
#include "model/clock.h"
#include "model/error.h"
#include "store/store.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NS SC_NS_PER_S
#define DAY (86400 * NS)
#define PER_PROFILE 1000
#define FUNCS 20000
#define DEPTH 16

static int64_t day0; /* the first day's midnight */
static struct sc_store *open_store(const char *dir, int64_t retention)
{
    struct sc_store_opts o;
    sc_store_opts_init(&o);
    o.dir = dir;
    o.background = retention > 0;
    o.compact_every_ns = NS;
    o.durable = 0;
    o.retention_ns = retention;
    struct sc_store *s = NULL;
    char err[SC_ERR_LEN] = "";
    if (sc_store_open(&o, &s, err)) {
        fprintf(stderr, "gc_bench: cannot open '%s': %s\n", dir, err);
        exit(1);
    }
    return s;
}

static struct sc_profile *folded(const struct sc_buf *text)
{
    struct sc_profile *p = sc_profile_new();
    char err[SC_ERR_LEN] = "";
    if (!p || sc_folded_decode(text->data, text->len, &sc_limits_cli, p, err)) {
        fprintf(stderr, "gc_bench: %s\n", err);
        exit(1);
    }
    return p;
}

static void write1(struct sc_store *s, const char *service, int64_t t, struct sc_profile *p)
{
    struct sc_labels l;
    sc_labels_init(&l);
    sc_labels_set(&l, "service_name", 12, service, strlen(service));
    struct sc_store_write w = {NULL, &l, "cpu", t, 10 * NS, p, 0};
    char err[SC_ERR_LEN] = "";
    if (sc_store_write(s, &w, err)) {
        fprintf(stderr, "gc_bench: write: %s\n", err);
        exit(1);
    }
    sc_labels_release(&l);
}

/* One day: profiles of PER_PROFILE stacks, each DEPTH frames drawn from the day's pool. */
static void write_day(struct sc_store *s, int day, int stacks)
{
    struct sc_buf text = SC_BUF_INIT;
    for (int i = 0; i < stacks / PER_PROFILE; i++) {
        text.len = 0;
        for (int k = 0; k < PER_PROFILE; k++) {
            sc_buf_puts(&text, "main");
            for (int d = 0; d < DEPTH; d++)
                sc_buf_printf(&text, ";d%d_fn%u", day, (unsigned)(random() % FUNCS));
            sc_buf_printf(&text, " %u\n", (unsigned)(random() % 100 + 1));
        }
        struct sc_profile *p = folded(&text);
        write1(s, "batch", day0 + day * DAY + (int64_t)i * (DAY / (stacks / PER_PROFILE + 1)), p);
        sc_profile_free(p);
    }
    sc_buf_release(&text);
}

struct writer {
    struct sc_store *s;
    int64_t t;
    atomic_int stop;
    int64_t n, max_ns, over_10ms, over_100ms;
    int64_t *lat;
    int64_t cap;
};

static void *writer_main(void *arg)
{
    struct writer *w = arg;
    struct sc_buf text = SC_BUF_INIT;
    sc_buf_puts(&text, "main;live;work 5\nmain;live;idle 3\n");
    struct sc_profile *p = folded(&text);
    sc_buf_release(&text);
    while (!atomic_load(&w->stop)) {
        int64_t start = sc_mono_ns();
        write1(w->s, "live", w->t + w->n * NS / 1000, p);
        int64_t took = sc_mono_ns() - start;
        if (w->n < w->cap)
            w->lat[w->n] = took;
        w->n++;
        w->max_ns = took > w->max_ns ? took : w->max_ns;
        w->over_10ms += took > 10000000;
        w->over_100ms += took > 100000000;
        usleep(1000);
    }
    sc_profile_free(p);
    return NULL;
}

static int cmp64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    if (argc > 1 && argv[1][0] == '-') {
        fprintf(stderr, "usage: gc_bench [DIR] [STACKS-A-DAY] [DAYS]\n");
        return strcmp(argv[1], "--help") && strcmp(argv[1], "-h") ? 2 : 0;
    }
    char dir[512];
    if (argc > 1 && argv[1][0]) {
        snprintf(dir, sizeof dir, "%s", argv[1]);
    } else {
        snprintf(dir, sizeof dir, "/tmp/scorch-gc-bench-XXXXXX");
        if (!mkdtemp(dir)) {
            perror("gc_bench: mkdtemp");
            return 1;
        }
    }
    int stacks = argc > 2 ? atoi(argv[2]) : 200000;
    int days = argc > 3 ? atoi(argv[3]) : 3;
    if (stacks < PER_PROFILE || days < 2) {
        fprintf(stderr, "gc_bench: at least %d stacks a day and 2 days\n", PER_PROFILE);
        return 2;
    }
    char err[SC_ERR_LEN] = "";
    int64_t now = sc_wall_ns();
    day0 = (now / DAY - days) * DAY;
    struct sc_store *s = open_store(dir, 0);
    int64_t t0 = sc_mono_ns();
    for (int d = 0; d < days; d++)
        write_day(s, d, stacks);
    if (sc_store_compact(s, now, 1, err)) {
        fprintf(stderr, "gc_bench: compact: %s\n", err);
        return 1;
    }
    struct sc_store_stats before;
    sc_store_stats(s, &before, err);
    sc_store_close(s);
    fprintf(stderr, "written: %d days, %llu stacks, %llu frames in %.1f s\n", days,
            (unsigned long long)before.stacks, (unsigned long long)before.frames,
            (sc_mono_ns() - t0) / 1e9);

    /* keep from the middle of the last day written: its profiles are kept, those of every
     * earlier day go, and the stacks and frames of all but the last of those (collection
     * keeps a day of margin) */
    int64_t keep_from = day0 + (days - 1) * DAY + DAY / 2;
    s = open_store(dir, sc_wall_ns() - keep_from);
    struct writer w = {.s = s, .t = now};
    w.cap = 1 << 20;
    w.lat = malloc((size_t)w.cap * sizeof *w.lat);
    pthread_t th;
    pthread_create(&th, NULL, writer_main, &w);
    t0 = sc_mono_ns();
    struct sc_store_stats after = before;
    /* until the frames have gone down and stayed there for a second */
    int64_t took = 0;
    for (int still = 0; still < 10 && sc_mono_ns() - t0 < 600 * NS;) {
        usleep(100000);
        uint64_t last = after.frames;
        if (sc_store_stats(s, &after, err)) {
            fprintf(stderr, "gc_bench: stats: %s\n", err);
            return 1;
        }
        if (after.frames < before.frames && after.frames == last) {
            still++;
        } else {
            still = 0;
            took = sc_mono_ns() - t0;
        }
    }
    atomic_store(&w.stop, 1);
    pthread_join(th, NULL);
    sc_store_close(s);
    if (after.frames >= before.frames) {
        fprintf(stderr, "gc_bench: no frame was collected in 600 s\n");
        return 1;
    }
    int64_t n = w.n < w.cap ? w.n : w.cap;
    qsort(w.lat, (size_t)n, sizeof *w.lat, cmp64);
    printf("retention and collection by the background thread: %.2f s; stacks %llu -> %llu, "
           "frames %llu -> %llu\n",
           took / 1e9, (unsigned long long)before.stacks, (unsigned long long)after.stacks,
           (unsigned long long)before.frames, (unsigned long long)after.frames);
    printf("pushes meanwhile: %lld; latency p50 %.2f ms, p99 %.2f ms, max %.1f ms; over 10 ms: "
           "%lld, over 100 ms: %lld\n",
           (long long)w.n, n ? w.lat[n / 2] / 1e6 : 0, n ? w.lat[n * 99 / 100] / 1e6 : 0,
           w.max_ns / 1e6, (long long)w.over_10ms, (long long)w.over_100ms);
    free(w.lat);
    if (argc <= 1 || !argv[1][0]) {
        char cmd[600];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
        if (system(cmd) != 0)
            fprintf(stderr, "gc_bench: could not remove %s\n", dir);
    }
    return 0;
}
