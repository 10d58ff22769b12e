/* unwind_table.c - a binary's call frame information run once into a table of unwind rules
 * (unwind_int.h has the row's layout), and lookups in it. */
#include "collect/unwind_int.h"
#include "model/buf.h"
#include "model/error.h"

#include <elf.h>
#include <stdlib.h>
#include <string.h>

static const struct sc_uw_dwarf_regs x86_64 = {SC_UW_ARCH_X86_64, 7, 6, 16};
static const struct sc_uw_dwarf_regs aarch64 = {SC_UW_ARCH_AARCH64, 31, 29, 30};

/* Places an entry in its executable segment (file offsets = addresses + bias, the range cut
 * at the segment's end) and keeps it. */
int sc_uw_add_entry(struct sc_uw_builder *b, struct sc_uw_entry *e)
{
    const struct sc_elf_cfi *cfi = b->cfi;
    uint32_t k = 0;
    for (; k < cfi->nseg; k++)
        if (e->lo >= cfi->seg[k].vaddr && e->lo - cfi->seg[k].vaddr < cfi->seg[k].filesz)
            break;
    if (k == cfi->nseg)
        return 0; /* not in the code: nothing ever runs there */
    const struct sc_segment *g = &cfi->seg[k];
    if (g->offset > UINT64_MAX - g->filesz)
        return 0; /* file offsets past 2^64: not a file */
    if (e->hi - g->vaddr > g->filesz)
        e->hi = g->vaddr + g->filesz;
    e->bias = g->offset - g->vaddr;
    if (b->nents >= b->max_rows)
        return SC_ELIMIT;
    if (sc_grow_array(&b->ents, &b->entcap, (uint64_t)b->nents + 1, sizeof *b->ents))
        return SC_ENOMEM;
    b->ents[b->nents++] = *e;
    return 0;
}

static int cmp_entry(const void *a, const void *b)
{
    const struct sc_uw_entry *x = a, *y = b;
    uint64_t ox = x->lo + x->bias, oy = y->lo + y->bias;
    if (ox != oy)
        return ox < oy ? -1 : 1;
    if (x->src != y->src)
        return x->src < y->src ? -1 : 1; /* .eh_frame first */
    return (x->insn_off > y->insn_off) - (x->insn_off < y->insn_off);
}

/* Runs every entry, in file offset order, into rows. */
static void build_rows(struct sc_uw_builder *b)
{
    if (b->nents == 0)
        return;
    qsort(b->ents, b->nents, sizeof *b->ents, cmp_entry);
    b->base = b->ents[0].lo + b->ents[0].bias;
    uint64_t prev_end = 0;
    for (uint32_t i = 0; i < b->nents && !b->full; i++) {
        const struct sc_uw_entry *e = &b->ents[i];
        uint64_t lo = e->lo + e->bias, hi = e->hi + e->bias;
        if (lo < prev_end)
            continue; /* overlaps the one before (.debug_frame repeating .eh_frame) */
        if (hi - b->base > UINT32_MAX)
            break;
        if (i && lo > prev_end)
            sc_uw_push_kind(b, prev_end, SC_UW_CFA_NONE); /* a gap no FDE covers */
        sc_uw_run_entry(b, e);
        b->st.fdes++;
        b->st.fdes_hdr += e->hdr;
        b->st.fdes_debug += e->src;
        prev_end = hi;
    }
    sc_uw_end_row(b, prev_end);
}

static int build(const struct sc_elf_cfi *cfi, const struct sc_unwind_limits *lim,
                 struct sc_unwind_table *t, char *err)
{
    struct sc_uw_builder b;
    memset(&b, 0, sizeof b);
    b.cfi = cfi;
    b.a = cfi->machine == EM_X86_64 ? &x86_64 : &aarch64;
    b.max_rows = lim && lim->max_rows ? lim->max_rows : SC_UNWIND_MAX_ROWS;
    if (b.max_rows < 2)
        b.max_rows = 2;
    b.sec[0] = (struct sc_uw_section){cfi->eh_frame, cfi->eh_frame_len, cfi->eh_frame_addr, 0};
    b.sec[1] = (struct sc_uw_section){cfi->debug_frame, cfi->debug_frame_len, 0, 1};
    uint64_t max_section = lim && lim->max_section ? lim->max_section : SC_UNWIND_MAX_SECTION;
    for (int i = 0; i < 2; i++)
        if (!b.sec[i].data || b.sec[i].len > max_section || b.sec[i].len > UINT32_MAX)
            b.sec[i] = (struct sc_uw_section){NULL, 0, 0, i};
    int rc = 0;
    if (b.sec[0].data) {
        rc = cfi->eh_frame_hdr ? sc_uw_from_hdr(&b) : 1;
        if (rc == 1)
            rc = sc_uw_walk_section(&b, 0);
    }
    if (!rc && b.sec[1].data)
        rc = sc_uw_walk_section(&b, 1);
    if (rc == SC_ELIMIT) {
        b.full = 1; /* more FDEs than rows allowed: a partial table of the first ones */
        rc = 0;
    }
    if (!rc) {
        int full = b.full;
        b.full = 0;
        build_rows(&b);
        b.full |= full;
    }
    free(b.cies);
    free(b.ents);
    sc_map64_release(&b.cie_index);
    if (rc) {
        free(b.rows);
        return sc_errf(err, rc, "building the unwind table: %s", sc_strerror(rc));
    }
    /* the rows at their size: tables stay for the whole recording */
    if (b.nrows && b.nrows < b.rowcap) {
        struct sc_uw_row *v = realloc(b.rows, (size_t)b.nrows * sizeof *v);
        if (v)
            b.rows = v;
    }
    t->rows = b.rows;
    t->n = b.nrows;
    t->base = b.base;
    t->st = b.st;
    t->st.rows = b.nrows;
    t->st.truncated = b.full;
    for (uint32_t i = 0; i < b.nrows; i++)
        t->st.unknown += UW_KIND_CFA(b.rows[i].kind) == SC_UW_CFA_UNKNOWN;
    return 0;
}

int sc_unwind_build(const struct sc_elf_cfi *cfi, const struct sc_unwind_limits *lim,
                    struct sc_unwind_table **out, char *err)
{
    *out = NULL;
    if (cfi->machine != EM_X86_64 && cfi->machine != EM_AARCH64)
        return sc_errf(err, SC_EUNSUPPORTED, "no unwinding for ELF machine %u", cfi->machine);
    struct sc_unwind_table *t = calloc(1, sizeof *t);
    if (!t)
        return sc_errf(err, SC_ENOMEM, "out of memory");
    enum sc_uw_arch arch = cfi->machine == EM_X86_64 ? SC_UW_ARCH_X86_64 : SC_UW_ARCH_AARCH64;
    if (cfi->is_go) {
        t->st.frame_pointers_only = 1; /* Go keeps frame pointers, and its CFI is not for us */
    } else {
        int rc = build(cfi, lim, t, err);
        if (rc) {
            free(t);
            return rc;
        }
    }
    t->st.arch = arch;
    t->st.bytes = sizeof *t + (size_t)t->n * sizeof *t->rows;
    *out = t;
    return 0;
}

struct load_ctx {
    const struct sc_unwind_limits *lim;
    struct sc_unwind_table **out;
};

static int load_cb(void *ctx, const struct sc_elf_cfi *cfi, char *err)
{
    struct load_ctx *l = ctx;
    return sc_unwind_build(cfi, l->lim, l->out, err);
}

int sc_unwind_load(int fd, const void *mem, size_t len, const struct sc_unwind_limits *lim,
                   struct sc_unwind_table **out, char *err)
{
    struct load_ctx l = {lim, out};
    *out = NULL;
    uint64_t max = lim && lim->max_section ? lim->max_section : SC_UNWIND_MAX_SECTION;
    return sc_elf_cfi(fd, mem, len, max, load_cb, &l, err);
}

void sc_unwind_table_free(struct sc_unwind_table *t)
{
    if (!t)
        return;
    free(t->rows);
    free(t);
}

int sc_unwind_find(const struct sc_unwind_table *t, uint64_t off, struct sc_unwind_rule *out)
{
    if (!t || t->n == 0 || off < t->base || off - t->base > UINT32_MAX)
        return 0;
    uint32_t pc = (uint32_t)(off - t->base), lo = 0, hi = t->n;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (t->rows[mid].pc <= pc)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0 || lo == t->n)
        return 0; /* before the first row, or at or after the end row */
    const struct sc_uw_row *w = &t->rows[lo - 1];
    memset(out, 0, sizeof *out);
    out->start = t->base + w->pc;
    out->end = t->base + t->rows[lo].pc;
    out->cfa = UW_KIND_CFA(w->kind);
    out->fp = UW_KIND_FP(w->kind);
    out->ra = UW_KIND_RA(w->kind);
    out->cfa_off = w->cfa_off;
    out->ra_off = (int32_t)w->ra_off; /* a signed offset: -8 on x86-64 */
    if (out->cfa == SC_UW_CFA_PLT) {
        out->plt_mask = (uint8_t)(w->aux & 0xff);
        out->plt_min = (uint8_t)((uint16_t)w->aux >> 8);
    } else {
        out->fp_off = w->aux;
    }
    return 1;
}

void sc_unwind_table_stats(const struct sc_unwind_table *t, struct sc_unwind_table_stats *st)
{
    *st = t->st;
    st->start = st->end = t->base;
    if (t->n)
        st->end = t->base + t->rows[t->n - 1].pc;
}
