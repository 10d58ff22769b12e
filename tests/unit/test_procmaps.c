/* test_procmaps.c - a process's mappings as perf keeps them: a new one cuts what it
 * overlaps, the table stays sorted and disjoint, and lookups find the covering one. */
#include "t.h"

#include "collect/procmaps.h"

struct table {
    struct sc_procmap *v;
    uint32_t n, cap;
};

static void put(struct table *t, uint64_t start, uint64_t end, uint64_t pgoff, uint32_t dso,
                int jit)
{
    struct sc_procmap m = {start, end, pgoff, dso, 0, NULL, jit};
    T_EQ_INT(sc_procmaps_insert(&t->v, &t->n, &t->cap, &m), 0);
}

static void check_sorted(const struct table *t)
{
    for (uint32_t i = 0; i + 1 < t->n; i++)
        T_CHECK(t->v[i].end <= t->v[i + 1].start);
}

static void test_split(void)
{
    struct table t = {0};
    put(&t, 0x3000, 0x4000, 0x100, 3, 0);
    put(&t, 0x1000, 0x2000, 0, 1, 0);
    put(&t, 0x5000, 0x5000, 0, 9, 0); /* empty: nothing */
    T_EQ_INT(t.n, 2);
    T_EQ_INT(t.v[0].start, 0x1000); /* sorted by start */
    /* inside [0x1000, 0x2000): split in two, the right part's pgoff moved with its start */
    put(&t, 0x1400, 0x1800, 0x40, 2, 0);
    T_EQ_INT(t.n, 4);
    check_sorted(&t);
    T_EQ_INT(t.v[0].start, 0x1000);
    T_EQ_INT(t.v[0].end, 0x1400);
    T_EQ_INT(t.v[0].pgoff, 0);
    T_EQ_INT(t.v[1].dso, 2);
    T_EQ_INT(t.v[2].start, 0x1800);
    T_EQ_INT(t.v[2].end, 0x2000);
    T_EQ_INT(t.v[2].pgoff, 0x800);
    T_EQ_INT(t.v[2].dso, 1);
    /* over the end of one and the start of the next; covering one whole */
    put(&t, 0x1c00, 0x3800, 0, 4, 0);
    check_sorted(&t);
    T_EQ_INT(t.n, 5);
    T_EQ_INT(t.v[2].end, 0x1c00);
    T_EQ_INT(t.v[4].start, 0x3800);
    T_EQ_INT(t.v[4].pgoff, 0x100 + 0x800);
    put(&t, 0, 0x10000, 0, 5, 0);
    T_EQ_INT(t.n, 1);
    T_EQ_INT(t.v[0].dso, 5);
    free(t.v);
}

static void test_jit(void)
{
    /* a JIT map's addresses are absolute: its pgoff stays when it is cut */
    struct table t = {0};
    put(&t, 0x1000, 0x3000, 0x1000, 7, 1);
    put(&t, 0x1800, 0x2000, 0, 8, 0);
    T_EQ_INT(t.n, 3);
    T_EQ_INT(t.v[2].start, 0x2000);
    T_EQ_INT(t.v[2].pgoff, 0x1000);
    T_EQ_INT(t.v[2].jit, 1);
    free(t.v);
}

static void test_find(void)
{
    struct table t = {0};
    T_CHECK(sc_procmaps_find(t.v, t.n, 0x1000) == NULL);
    put(&t, 0x1000, 0x2000, 0, 1, 0);
    put(&t, 0x3000, 0x4000, 0, 2, 0);
    T_CHECK(sc_procmaps_find(t.v, t.n, 0xfff) == NULL);
    T_EQ_INT(sc_procmaps_find(t.v, t.n, 0x1000)->dso, 1);
    T_EQ_INT(sc_procmaps_find(t.v, t.n, 0x1fff)->dso, 1);
    T_CHECK(sc_procmaps_find(t.v, t.n, 0x2000) == NULL); /* ends are exclusive */
    T_EQ_INT(sc_procmaps_find(t.v, t.n, 0x3abc)->dso, 2);
    T_CHECK(sc_procmaps_find(t.v, t.n, 0x4000) == NULL);
    free(t.v);
}

/* Random inserts against a model that keeps, per page, the dso there and the file offset it
 * maps: the table says the same of every page after every insert. */
static void test_random(void)
{
    enum { PAGES = 64, PAGE = 0x1000 };
    struct table t = {0};
    uint32_t dso[PAGES];
    uint64_t off[PAGES];
    memset(dso, 0, sizeof dso); /* 0: unmapped */
    uint64_t seed = 12345;
    int bad = 0;
    for (int round = 0; round < 4000 && !bad; round++) {
        seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
        uint32_t a = (uint32_t)(seed >> 33) % PAGES, len = 1 + (uint32_t)(seed >> 45) % 12;
        if (a + len > PAGES)
            len = PAGES - a;
        uint64_t pgoff = (seed >> 20) % 64 * PAGE;
        uint32_t id = 1 + (uint32_t)round;
        put(&t, (uint64_t)a * PAGE, (uint64_t)(a + len) * PAGE, pgoff, id, 0);
        for (uint32_t i = 0; i < len; i++) {
            dso[a + i] = id;
            off[a + i] = pgoff + (uint64_t)i * PAGE;
        }
        for (uint32_t i = 1; i < t.n; i++)
            bad |= t.v[i - 1].end > t.v[i].start || t.v[i].end <= t.v[i].start;
        for (uint32_t pg = 0; pg < PAGES && !bad; pg++) {
            const struct sc_procmap *m = sc_procmaps_find(t.v, t.n, (uint64_t)pg * PAGE + 5);
            if (!dso[pg])
                bad |= m != NULL;
            else
                bad |= !m || m->dso != dso[pg] ||
                       m->pgoff + ((uint64_t)pg * PAGE - m->start) != off[pg];
        }
        if (bad)
            fprintf(stderr, "  round %d: the table disagrees with the model\n", round);
    }
    T_EQ_INT(bad, 0);
    free(t.v);
}

int main(void)
{
    T_RUN(test_split);
    T_RUN(test_jit);
    T_RUN(test_find);
    T_RUN(test_random);
    return t_done();
}
