/* unwind.c - walking a sampled user stack with the unwind tables; the tables of a recording. */
#include "collect/unwind.h"
#include "model/buf.h"
#include "model/clock.h"
#include "model/error.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- the unwinder ---- */

struct stack {
    const uint8_t *data;
    size_t len;
    uint64_t base; /* the address of data[0]: the sampled stack pointer */
};

/* The 8 bytes at addr: 1, or 0 when they are not in the copy. */
static int rd(const struct stack *s, uint64_t addr, uint64_t *out)
{
    if (addr < s->base || addr - s->base > s->len || s->len - (addr - s->base) < 8)
        return 0;
    memcpy(out, s->data + (addr - s->base), 8);
    return 1;
}

/* Why a read at addr failed: below the stack pointer is no frame of a caller (a bad rule or
 * a frame pointer that is no frame's), above the copy is the copy's end. */
static enum sc_unwind_stop miss(const struct stack *s, uint64_t addr)
{
    return addr < s->base ? SC_UNWIND_BAD : SC_UNWIND_STACK_END;
}

/* One frame's step by its rule: the caller's cfa (its stack pointer), return address and
 * frame pointer. 0, or why not. */
static int step_rule(enum sc_uw_arch arch, const struct sc_unwind_rule *u, const struct stack *s,
                     uint64_t pc, uint64_t sp, uint64_t fp, int fp_ok, int leaf, uint64_t lr,
                     uint64_t *cfa, uint64_t *ra, uint64_t *nfp, int *nfp_ok)
{
    uint64_t a;
    switch (u->cfa) {
    case SC_UW_CFA_SP:
        *cfa = sp + (uint64_t)(int64_t)u->cfa_off;
        break;
    case SC_UW_CFA_FP:
        if (!fp_ok)
            return SC_UNWIND_BAD;
        *cfa = fp + (uint64_t)(int64_t)u->cfa_off;
        break;
    case SC_UW_CFA_PLT:
        *cfa = sp + (uint64_t)(int64_t)u->cfa_off + ((pc & u->plt_mask) >= u->plt_min ? 8 : 0);
        break;
    case SC_UW_CFA_DEREF_FP:
        a = fp + (uint64_t)(int64_t)u->cfa_off;
        if (!fp_ok)
            return SC_UNWIND_BAD;
        if (!rd(s, a, cfa))
            return miss(s, a);
        break;
    default:
        return SC_UNWIND_BAD;
    }
    if (u->ra == SC_UW_RA_AT_CFA) {
        a = *cfa + (uint64_t)(int64_t)u->ra_off;
        if (!rd(s, a, ra))
            return miss(s, a);
    } else if (u->ra == SC_UW_RA_LR && leaf && arch == SC_UW_ARCH_AARCH64) {
        *ra = lr;
    } else {
        return SC_UNWIND_BAD;
    }
    *nfp = fp;
    *nfp_ok = fp_ok;
    switch (u->fp) {
    case SC_UW_FP_SAME:
        break;
    case SC_UW_FP_AT_CFA:
        a = *cfa + (uint64_t)(int64_t)u->fp_off;
        if (a < s->base)
            break; /* its slot is below the stack pointer: an epilogue popped it already (GCC
                      does not always say so), the register holds the caller's value */
        if (!rd(s, a, nfp))
            return miss(s, a);
        *nfp_ok = 1;
        break;
    case SC_UW_FP_AT_FP:
        a = fp + (uint64_t)(int64_t)u->fp_off;
        if (!fp_ok)
            return SC_UNWIND_BAD;
        if (!rd(s, a, nfp))
            return miss(s, a);
        break;
    default:
        *nfp_ok = 0; /* the caller's frame pointer is lost: its rules must not need it */
        break;
    }
    return 0;
}

void sc_unwind_stack(enum sc_uw_arch arch, const struct sc_unwind_regs *regs, const uint8_t *stack,
                     size_t len, sc_unwind_find_fn find, void *ctx, uint64_t *pcs, uint32_t max,
                     struct sc_unwind_result *res)
{
    struct stack s = {stack, stack ? len : 0, regs->sp};
    uint64_t pc = regs->pc, sp = regs->sp, fp = regs->fp;
    int fp_ok = 1, last_fp = 0; /* the last frame was stepped to by frame pointer */
    memset(res, 0, sizeof *res);
    res->stop = SC_UNWIND_DEPTH;
    if (max == 0)
        return;
    pcs[res->n++] = pc;
    while (res->n < max) {
        /* a caller's return address follows its call, which may end its function */
        uint64_t at = res->n == 1 ? pc : pc - 1, off = 0;
        const struct sc_unwind_table *t = NULL;
        if (!find(ctx, at, &t, &off)) {
            /* a return address in no code is no frame (the leaf's pc stays: it ran) */
            if (res->n > 1) {
                res->n--;
                res->fp -= last_fp;
            }
            res->stop = SC_UNWIND_UNMAPPED;
            return;
        }
        struct sc_unwind_rule u;
        int have = t && sc_unwind_find(t, off, &u) && u.cfa != SC_UW_CFA_NONE &&
                   u.cfa != SC_UW_CFA_UNKNOWN && u.ra != SC_UW_RA_UNKNOWN;
        uint64_t cfa = 0, ra = 0, nfp = 0;
        int nfp_ok = 0, rc;
        if (have && u.cfa == SC_UW_CFA_END) {
            res->stop = SC_UNWIND_END;
            return;
        }
        if (have) {
            rc = step_rule(arch, &u, &s, pc, sp, fp, fp_ok, res->n == 1, regs->lr, &cfa, &ra, &nfp,
                           &nfp_ok);
        } else if (!fp_ok) {
            rc = SC_UNWIND_BAD;
        } else if (fp == 0) {
            rc = SC_UNWIND_ZERO; /* the outermost frame pointer */
        } else {
            /* the frame pointer chain: [fp] the caller's, [fp + 8] the return address (the
             * same on arm64: x29, x30 saved as a pair) */
            rc = !rd(&s, fp, &nfp)      ? (int)miss(&s, fp)
                 : !rd(&s, fp + 8, &ra) ? (int)miss(&s, fp + 8)
                                        : 0;
            cfa = fp + 16;
            nfp_ok = 1;
        }
        if (rc) {
            res->stop = (enum sc_unwind_stop)rc;
            return;
        }
        if (cfa <= sp) {
            res->stop = SC_UNWIND_BAD; /* callers' frames are above: this would loop */
            return;
        }
        if (ra == 0) {
            res->stop = SC_UNWIND_ZERO;
            return;
        }
        pcs[res->n++] = ra;
        last_fp = !have;
        res->fp += (uint32_t)last_fp;
        pc = ra;
        sp = cfa;
        fp = nfp;
        fp_ok = nfp_ok;
    }
}

/* ---- the cache ---- */

struct slot {
    struct sc_unwind_table *t; /* NULL: free */
    uint32_t gen;              /* bumped when the slot's table goes */
    uint64_t last_use;
    uint8_t build_id[20];
    uint32_t build_id_len;
};

enum { DSO_UNKNOWN = 0, DSO_NONE = UINT32_MAX };

struct dso_ent {
    uint32_t slot; /* index + 1, or DSO_UNKNOWN / DSO_NONE */
    uint32_t gen;
};

#define MAX_DSO_ID (1u << 20) /* the symbolizer's own bound */

struct sc_unwind_cache {
    uint64_t max_bytes;
    struct sc_unwind_limits lim;
    struct slot *slots;
    uint32_t nslots, slotcap;
    struct dso_ent *dsos;
    uint32_t ndsos;
    uint64_t bytes, clock;
    struct sc_unwind_cache_stats st;
};

int sc_unwind_cache_new(uint64_t max_bytes, const struct sc_unwind_limits *lim,
                        struct sc_unwind_cache **out, char *err)
{
    struct sc_unwind_cache *c = calloc(1, sizeof *c);
    if (!c)
        return sc_errf(err, SC_ENOMEM, "out of memory");
    c->max_bytes = max_bytes ? max_bytes : SC_UNWIND_CACHE_BYTES;
    if (lim)
        c->lim = *lim;
    *out = c;
    return 0;
}

void sc_unwind_cache_free(struct sc_unwind_cache *c)
{
    if (!c)
        return;
    for (uint32_t i = 0; i < c->nslots; i++)
        sc_unwind_table_free(c->slots[i].t);
    free(c->slots);
    free(c->dsos);
    free(c);
}

static struct sc_unwind_table *usable(struct sc_unwind_table *t)
{
    struct sc_unwind_table_stats st;
    if (!t)
        return NULL;
    sc_unwind_table_stats(t, &st);
    return st.rows && !st.frame_pointers_only ? t : NULL;
}

/* Frees least recently used tables until the budget holds, never slot keep. */
static void evict(struct sc_unwind_cache *c, uint32_t keep)
{
    while (c->bytes > c->max_bytes) {
        uint32_t v = UINT32_MAX;
        for (uint32_t i = 0; i < c->nslots; i++)
            if (c->slots[i].t && i != keep &&
                (v == UINT32_MAX || c->slots[i].last_use < c->slots[v].last_use))
                v = i;
        if (v == UINT32_MAX)
            return;
        struct sc_unwind_table_stats st;
        sc_unwind_table_stats(c->slots[v].t, &st);
        c->bytes -= st.bytes;
        c->st.rows -= st.rows;
        sc_unwind_table_free(c->slots[v].t);
        c->slots[v].t = NULL;
        c->slots[v].gen++; /* the DSOs that pointed here load it again when they need it */
        c->st.evictions++;
    }
}

/* Keeps t in a slot: its index, or UINT32_MAX (t freed) when out of memory. */
static uint32_t store(struct sc_unwind_cache *c, struct sc_unwind_table *t, const uint8_t *id,
                      uint32_t idn)
{
    uint32_t k = c->nslots;
    for (uint32_t i = 0; i < c->nslots; i++)
        if (!c->slots[i].t) {
            k = i;
            break;
        }
    if (k == c->nslots) {
        if (sc_grow_array(&c->slots, &c->slotcap, (uint64_t)c->nslots + 1, sizeof *c->slots)) {
            sc_unwind_table_free(t);
            return UINT32_MAX;
        }
        memset(&c->slots[k], 0, sizeof c->slots[k]);
        c->nslots++;
    }
    struct slot *s = &c->slots[k];
    s->t = t;
    s->last_use = ++c->clock;
    s->build_id_len = idn;
    memcpy(s->build_id, id, idn);
    struct sc_unwind_table_stats st;
    sc_unwind_table_stats(t, &st);
    c->bytes += st.bytes;
    c->st.rows += st.rows;
    c->st.loads++;
    evict(c, k);
    return k;
}

static uint32_t by_build_id(const struct sc_unwind_cache *c, const uint8_t *id, uint32_t n)
{
    for (uint32_t i = 0; n && i < c->nslots; i++)
        if (c->slots[i].t && c->slots[i].build_id_len == n && !memcmp(c->slots[i].build_id, id, n))
            return i;
    return UINT32_MAX;
}

/* Loads the table of a file or the vDSO into a slot: its index, or UINT32_MAX when it has
 * none. */
static uint32_t load(struct sc_unwind_cache *c, struct sc_symbolizer *sym, uint32_t dso,
                     const struct sc_dso_info *di)
{
    struct sc_unwind_table *t = NULL;
    char err[SC_ERR_LEN];
    uint8_t id[20];
    uint32_t idn = 0;
    if (di->kind == SC_DSO_VDSO) {
        size_t len;
        void *img = sc_symbolizer_vdso_copy(&len);
        if (img && sc_unwind_load(-1, img, len, &c->lim, &t, err))
            t = NULL;
        free(img);
    } else {
        int fd = sc_symbolizer_open(sym, dso);
        if (fd < 0)
            return UINT32_MAX;
        idn = sc_elf_build_id(fd, id);
        uint32_t have = by_build_id(c, id, idn);
        if (have != UINT32_MAX) {
            close(fd);
            c->st.shared++;
            return have;
        }
        if (sc_unwind_load(fd, NULL, 0, &c->lim, &t, err))
            t = NULL;
        close(fd);
    }
    if (!t)
        return UINT32_MAX;
    return store(c, t, id, idn);
}

const struct sc_unwind_table *sc_unwind_cache_get(struct sc_unwind_cache *c,
                                                  struct sc_symbolizer *sym, uint32_t dso)
{
    if (dso >= MAX_DSO_ID)
        return NULL;
    /* new entries zero: DSO_UNKNOWN */
    if (sc_grow_array_fill(&c->dsos, &c->ndsos, (uint64_t)dso + 1, sizeof *c->dsos, 0))
        return NULL;
    struct dso_ent *e = &c->dsos[dso];
    if (e->slot == DSO_NONE)
        return NULL;
    if (e->slot != DSO_UNKNOWN) {
        struct slot *s = &c->slots[e->slot - 1];
        if (s->t && s->gen == e->gen) {
            s->last_use = ++c->clock;
            return usable(s->t);
        }
    }
    struct sc_dso_info di;
    sc_symbolizer_info(sym, dso, &di);
    if (di.kind != SC_DSO_FILE && di.kind != SC_DSO_VDSO) {
        e->slot = DSO_NONE; /* the kernel's, JIT code: frame pointers */
        return NULL;
    }
    int64_t t0 = sc_mono_ns();
    uint32_t k = load(c, sym, dso, &di);
    c->st.load_ns += (uint64_t)(sc_mono_ns() - t0);
    if (k == UINT32_MAX) {
        e->slot = DSO_NONE;
        c->st.failures++;
        return NULL;
    }
    e->slot = k + 1;
    e->gen = c->slots[k].gen;
    c->slots[k].last_use = ++c->clock;
    return usable(c->slots[k].t);
}

void sc_unwind_cache_stats(const struct sc_unwind_cache *c, struct sc_unwind_cache_stats *st)
{
    *st = c->st;
    st->bytes = c->bytes;
    st->tables = 0;
    for (uint32_t i = 0; i < c->nslots; i++)
        st->tables += c->slots[i].t != NULL;
}
