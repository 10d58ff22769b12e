/* frametab.c - functions and locations of fully named frames, each made once. */
#include "formats/frametab.h"
#include "model/error.h"

#include <string.h>

void sc_frametab_init(struct sc_frametab *t, struct sc_profile *p, const struct sc_limits *lim)
{
    memset(t, 0, sizeof *t);
    t->p = p;
    t->lim = lim;
    sc_map64_init(&t->fns);
    sc_map64_init(&t->locs);
}

void sc_frametab_release(struct sc_frametab *t)
{
    sc_map64_release(&t->fns);
    sc_map64_release(&t->locs);
}

struct loc_key {
    const struct sc_profile *p;
    uint32_t fn;
    int64_t line, column;
};

static int same_location(void *ctx, uint32_t li)
{
    const struct loc_key *k = ctx;
    const struct sc_line *ln = &k->p->lines[k->p->locations[li].line_start];
    return ln->function == k->fn + 1 && ln->line == k->line && ln->column == k->column;
}

int64_t sc_frametab_location(struct sc_frametab *t, const char *name, size_t nlen, const char *file,
                             size_t flen, int64_t line, int64_t column, char *err)
{
    struct sc_profile *p = t->p;
    if (!name)
        name = "", nlen = 0;
    if (!file)
        file = "", flen = 0;
    int rc = sc_limits_string(t->lim, nlen, "a frame's name", err);
    if (!rc)
        rc = sc_limits_string(t->lim, flen, "a frame's file", err);
    if (rc)
        return rc;
    int64_t ns = sc_profile_intern(p, name, nlen),
            fs = ns < 0 ? ns : sc_profile_intern(p, file, flen);
    if (fs < 0)
        return sc_errf(err, (int)fs, "out of memory");
    int added;
    uint32_t *slot =
        sc_map64_upsert(&t->fns, (uint64_t)ns << 32 | (uint64_t)fs, p->nfunctions, &added);
    if (!slot)
        return sc_errf(err, SC_ENOMEM, "out of memory");
    uint32_t fn = *slot;
    if (added) {
        if (p->nfunctions >= t->lim->max_functions)
            return sc_errf(err, SC_ELIMIT, "more than %u functions",
                           (unsigned)t->lim->max_functions);
        int64_t f = sc_profile_add_function(p, (uint32_t)ns, (uint32_t)fs);
        if (f < 0)
            return sc_errf(err, (int)f, "out of memory");
        p->functions[f].start_line = line;
        fn = (uint32_t)f;
    }
    struct loc_key k = {p, fn, line, column};
    uint64_t h = sc_hash_combine(sc_hash_combine(fn, (uint64_t)line), (uint64_t)column);
    slot = sc_map64_intern(&t->locs, h, p->nlocations, same_location, &k, &added);
    if (!slot)
        return sc_errf(err, SC_ENOMEM, "out of memory");
    if (!added)
        return *slot;
    if (p->nlocations >= t->lim->max_locations)
        return sc_errf(err, SC_ELIMIT, "more than %u locations", (unsigned)t->lim->max_locations);
    int64_t li = sc_profile_add_simple_location(p, fn);
    if (li < 0)
        return sc_errf(err, (int)li, "out of memory");
    struct sc_line *ln = &p->lines[p->locations[li].line_start];
    ln->line = line;
    ln->column = column;
    return li;
}

int sc_frametab_check_frames(const struct sc_profile *p, uint64_t more, size_t n, char *err)
{
    if ((uint64_t)p->nsample_locs + more <= sc_frametab_max_frames(n))
        return 0;
    return sc_errf(err, SC_ELIMIT,
                   "the stacks hold more than %llu frames (16 for each byte of the input)",
                   (unsigned long long)sc_frametab_max_frames(n));
}
