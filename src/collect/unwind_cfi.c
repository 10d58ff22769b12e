/* unwind_cfi.c - call frame information read: CIEs, FDEs, .eh_frame_hdr, and the CFA
 * instructions run into rows of the table (unwind_int.h).
 *
 * The formats (DWARF 5 section 6.4; the LSB's .eh_frame and .eh_frame_hdr), little-endian:
 *
 *   CIE   u32 length (0xffffffff: a u64 length follows, and ids are u64); id (0 in .eh_frame,
 *         all ones in .debug_frame); u8 version (1, 3, 4); augmentation string; [version 4:
 *         u8 address_size, u8 segment_size]; uleb code_align; sleb data_align; return
 *         address register (version 1: u8, else uleb); ['z' augmentations: uleb length, then
 *         per letter L: u8 LSDA encoding, P: u8 encoding + personality pointer, R: u8 FDE
 *         pointer encoding, S: a signal frame, B/G: no data]; initial instructions
 *   FDE   length; CIE pointer (.eh_frame: the distance back from this field to the CIE;
 *         .debug_frame: the CIE's offset in the section); pc_begin and pc_range (.eh_frame:
 *         in the CIE's R encoding, pc_range without its application; .debug_frame: plain
 *         addresses); ['z': uleb length, data]; instructions
 *   .eh_frame_hdr  u8 version (1), u8 eh_frame_ptr encoding, u8 fde_count encoding, u8 table
 *         encoding; eh_frame_ptr; fde_count; fde_count pairs (initial location, FDE
 *         address), sorted by location, in the table encoding (datarel sdata4, 0x3b, is the
 *         one read here; any other and the section is walked instead) */
#include "collect/unwind_int.h"
#include "model/buf.h"
#include "model/error.h"

#include <stdlib.h>
#include <string.h>

/* DW_CFA_* and DW_OP_* used below */
enum {
    CFA_nop = 0x00,
    CFA_set_loc = 0x01,
    CFA_advance_loc1 = 0x02,
    CFA_advance_loc2 = 0x03,
    CFA_advance_loc4 = 0x04,
    CFA_offset_extended = 0x05,
    CFA_restore_extended = 0x06,
    CFA_undefined = 0x07,
    CFA_same_value = 0x08,
    CFA_register = 0x09,
    CFA_remember_state = 0x0a,
    CFA_restore_state = 0x0b,
    CFA_def_cfa = 0x0c,
    CFA_def_cfa_register = 0x0d,
    CFA_def_cfa_offset = 0x0e,
    CFA_def_cfa_expression = 0x0f,
    CFA_expression = 0x10,
    CFA_offset_extended_sf = 0x11,
    CFA_def_cfa_sf = 0x12,
    CFA_def_cfa_offset_sf = 0x13,
    CFA_val_offset = 0x14,
    CFA_val_offset_sf = 0x15,
    CFA_val_expression = 0x16,
    CFA_GNU_window_save = 0x2d, /* arm64: AARCH64_negate_ra_state (pointer authentication) */
    CFA_GNU_args_size = 0x2e,
    CFA_GNU_negative_offset_extended = 0x2f,
    OP_deref = 0x06,
    OP_and = 0x1a,
    OP_plus = 0x22,
    OP_shl = 0x24,
    OP_ge = 0x2a,
    OP_lit0 = 0x30,
    OP_breg0 = 0x70,
};

/* DW_EH_PE_* pointer encodings */
enum {
    PE_absptr = 0x00,
    PE_uleb128 = 0x01,
    PE_udata2 = 0x02,
    PE_udata4 = 0x03,
    PE_udata8 = 0x04,
    PE_sleb128 = 0x09,
    PE_sdata2 = 0x0a,
    PE_sdata4 = 0x0b,
    PE_sdata8 = 0x0c,
    PE_pcrel = 0x10,
    PE_datarel = 0x30,
    PE_indirect = 0x80,
    PE_omit = 0xff,
};

/* ---- reading ---- */

struct rd {
    const uint8_t *p, *end;
    int bad;
};

static uint64_t rd_n(struct rd *r, size_t n)
{
    if (r->bad || (size_t)(r->end - r->p) < n) {
        r->bad = 1;
        r->p = r->end;
        return 0;
    }
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++)
        v |= (uint64_t)r->p[i] << (8 * i);
    r->p += n;
    return v;
}

static uint8_t rd_u8(struct rd *r)
{
    return (uint8_t)rd_n(r, 1);
}

static uint64_t rd_uleb(struct rd *r)
{
    uint64_t v = 0;
    for (unsigned shift = 0; r->p < r->end; shift += 7) {
        uint8_t b = *r->p++;
        if (shift < 64)
            v |= (uint64_t)(b & 0x7f) << shift;
        else if (b & 0x7f)
            break; /* more than 64 bits */
        if (!(b & 0x80))
            return v;
        if (shift > 70)
            break;
    }
    r->bad = 1;
    r->p = r->end;
    return 0;
}

static int64_t rd_sleb(struct rd *r)
{
    uint64_t v = 0;
    unsigned shift = 0;
    while (r->p < r->end && shift < 70) {
        uint8_t b = *r->p++;
        if (shift < 64)
            v |= (uint64_t)(b & 0x7f) << shift;
        shift += 7;
        if (!(b & 0x80)) {
            if (shift < 64 && (b & 0x40))
                v |= ~(uint64_t)0 << shift;
            return (int64_t)v;
        }
    }
    r->bad = 1;
    r->p = r->end;
    return 0;
}

/* Reads a pointer in encoding enc at r (inside sec). raw: the value without its application
 * (pc_range, a personality that is only skipped). datarel: what DW_EH_PE_datarel is relative
 * to (the .eh_frame_hdr's address), 0 when it means nothing here. */
static uint64_t rd_ptr(struct rd *r, uint8_t enc, const struct sc_uw_section *sec, int raw,
                       uint64_t datarel)
{
    uint64_t at = sec->addr + (uint64_t)(r->p - sec->data);
    uint64_t v;
    if (enc == PE_omit) {
        r->bad = 1;
        return 0;
    }
    switch (enc & 0x0f) {
    case PE_absptr:
    case PE_udata8:
    case PE_sdata8:
        v = rd_n(r, 8);
        break;
    case PE_uleb128:
        v = rd_uleb(r);
        break;
    case PE_udata2:
        v = rd_n(r, 2);
        break;
    case PE_udata4:
        v = rd_n(r, 4);
        break;
    case PE_sleb128:
        v = (uint64_t)rd_sleb(r);
        break;
    case PE_sdata2:
        v = (uint64_t)(int64_t)(int16_t)rd_n(r, 2);
        break;
    case PE_sdata4:
        v = (uint64_t)(int64_t)(int32_t)rd_n(r, 4);
        break;
    default:
        r->bad = 1;
        return 0;
    }
    if (raw)
        return v;
    if (enc & PE_indirect) {
        r->bad = 1; /* a location read through memory we do not have */
        return 0;
    }
    switch (enc & 0x70) {
    case 0:
        return v;
    case PE_pcrel:
        return v + at;
    case PE_datarel:
        if (datarel)
            return v + datarel;
        break;
    default:
        break;
    }
    r->bad = 1;
    return 0;
}

/* ---- running instructions ---- */

struct run {
    struct sc_uw_builder *b;
    const struct sc_uw_cie *cie;
    const struct sc_uw_section *sec;
    struct sc_uw_state st;
    struct sc_uw_state saved[UW_MAX_REMEMBER];
    uint32_t depth;
    uint64_t loc, end; /* link-time addresses */
    uint64_t bias;
    int emit; /* 0: a CIE's initial instructions (no rows) */
};

static int fits(int64_t v, int64_t lo, int64_t hi)
{
    return v >= lo && v <= hi;
}

/* The packed row of a state. */
static struct sc_uw_row pack(const struct sc_uw_dwarf_regs *a, const struct sc_uw_state *s)
{
    struct sc_uw_row w = {0, 0, 0, 0, 0};
    enum sc_uw_cfa cfa = SC_UW_CFA_UNKNOWN;
    enum sc_uw_fp fp = SC_UW_FP_UNKNOWN;
    enum sc_uw_ra ra = SC_UW_RA_UNKNOWN;
    if (s->ra.how == UW_R_UNDEF) {
        w.kind = UW_KIND(SC_UW_CFA_END, SC_UW_FP_SAME, SC_UW_RA_AT_CFA);
        return w;
    }
    if (s->cfa_how == UW_C_REG && fits(s->cfa_off, INT32_MIN, INT32_MAX) &&
        (s->cfa_reg == a->sp || s->cfa_reg == a->fp)) {
        cfa = s->cfa_reg == a->sp ? SC_UW_CFA_SP : SC_UW_CFA_FP;
        w.cfa_off = (int32_t)s->cfa_off;
    } else if (s->cfa_how == UW_C_PLT && fits(s->cfa_off, INT32_MIN, INT32_MAX)) {
        cfa = SC_UW_CFA_PLT;
        w.cfa_off = (int32_t)s->cfa_off;
    } else if (s->cfa_how == UW_C_DEREF_FP && fits(s->cfa_off, INT32_MIN, INT32_MAX)) {
        cfa = SC_UW_CFA_DEREF_FP;
        w.cfa_off = (int32_t)s->cfa_off;
    }
    if (s->ra.how == UW_R_OFFSET && fits(s->ra.off, INT8_MIN, INT8_MAX)) {
        ra = SC_UW_RA_AT_CFA;
        w.ra_off = (int8_t)s->ra.off;
    } else if ((s->ra.how == UW_R_SAME || s->ra.how == UW_R_UNSET) && a->id == SC_UW_ARCH_AARCH64) {
        ra = SC_UW_RA_LR;
    }
    if (cfa == SC_UW_CFA_PLT) {
        fp = SC_UW_FP_SAME;
        w.aux = (int16_t)(s->plt_mask | s->plt_min << 8);
    } else if (s->fp.how == UW_R_SAME || s->fp.how == UW_R_UNSET) {
        fp = SC_UW_FP_SAME;
    } else if (s->fp.how == UW_R_OFFSET && fits(s->fp.off, INT16_MIN, INT16_MAX)) {
        fp = SC_UW_FP_AT_CFA;
        w.aux = (int16_t)s->fp.off;
    } else if (s->fp.how == UW_R_AT_FP && fits(s->fp.off, INT16_MIN, INT16_MAX)) {
        fp = SC_UW_FP_AT_FP;
        w.aux = (int16_t)s->fp.off;
    }
    w.kind = UW_KIND(cfa, fp, ra);
    return w;
}

static int same_rule(const struct sc_uw_row *x, const struct sc_uw_row *y)
{
    return x->kind == y->kind && x->cfa_off == y->cfa_off && x->aux == y->aux &&
           x->ra_off == y->ra_off;
}

/* Appends a row at file offset off (not below the last row's): one at the same offset is
 * replaced, one with the previous row's rule is not needed. */
static void push_row(struct sc_uw_builder *b, uint64_t off, struct sc_uw_row w)
{
    if (off < b->base || off - b->base > UINT32_MAX || b->full)
        return;
    if (b->nrows + 1 >= b->max_rows) {
        b->full = 1;
        b->cut = off;
        return;
    }
    w.pc = (uint32_t)(off - b->base);
    if (b->nrows && b->rows[b->nrows - 1].pc >= w.pc) {
        b->rows[b->nrows - 1] = w;
        if (b->nrows > 1 && same_rule(&b->rows[b->nrows - 2], &w))
            b->nrows--;
        return;
    }
    if (b->nrows && same_rule(&b->rows[b->nrows - 1], &w))
        return;
    /* the last slot stays free for the end row */
    if (sc_grow_array(&b->rows, &b->rowcap, (uint64_t)b->nrows + 2, sizeof *b->rows)) {
        b->full = 1;
        b->cut = off;
        return;
    }
    b->rows[b->nrows++] = w;
}

void sc_uw_push_kind(struct sc_uw_builder *b, uint64_t off, enum sc_uw_cfa cfa)
{
    struct sc_uw_row w = {0, 0, 0, 0, UW_KIND(cfa, SC_UW_FP_SAME, SC_UW_RA_AT_CFA)};
    push_row(b, off, w);
}

/* The end row: where the last FDE ends, or where rows stopped fitting (its reserved slot). */
void sc_uw_end_row(struct sc_uw_builder *b, uint64_t off)
{
    if (b->full)
        off = b->cut;
    struct sc_uw_row w = {0, 0, 0, 0, UW_KIND(SC_UW_CFA_NONE, SC_UW_FP_SAME, SC_UW_RA_AT_CFA)};
    if (off < b->base || off - b->base > UINT32_MAX)
        return;
    w.pc = (uint32_t)(off - b->base);
    if (b->nrows && b->rows[b->nrows - 1].pc >= w.pc) {
        b->rows[b->nrows - 1] = w; /* the row cut there covers nothing */
        return;
    }
    if (b->nrows < b->rowcap)
        b->rows[b->nrows++] = w;
}

/* The rows for [loc, new_loc): the current state. */
static void flush(struct run *x)
{
    if (x->emit && x->loc < x->end)
        push_row(x->b, x->loc + x->bias, pack(x->b->a, &x->st));
}

/* Moves the location by delta; 1 when the FDE's range is done. */
static int advance(struct run *x, uint64_t delta)
{
    if (!x->emit)
        return 0; /* an advance among a CIE's initial instructions: meaningless */
    flush(x);
    if (delta >= x->end - x->loc) {
        x->loc = x->end;
        return 1;
    }
    x->loc += delta;
    return 0;
}

static struct sc_uw_reg *reg_of(struct run *x, uint64_t reg)
{
    if (reg == x->b->a->fp)
        return &x->st.fp;
    if (reg == x->b->a->ra || reg == x->cie->ra_reg)
        return &x->st.ra;
    return NULL;
}

static void set_reg(struct run *x, uint64_t reg, uint8_t how, int64_t off)
{
    struct sc_uw_reg *g = reg_of(x, reg);
    if (g)
        *g = (struct sc_uw_reg){how, off};
}

static int64_t factored(struct rd *r, int64_t v, int64_t f)
{
    int64_t out;
    if (__builtin_mul_overflow(v, f, &out)) {
        r->bad = 1;
        return 0;
    }
    return out;
}

/* A uleb operand times the data alignment factor. */
static int64_t uoff(struct rd *r, const struct sc_uw_cie *c)
{
    uint64_t u = rd_uleb(r);
    if (u > INT64_MAX) {
        r->bad = 1;
        return 0;
    }
    return factored(r, (int64_t)u, c->data_align);
}

/* An expression block: its bytes in e. */
static void rd_block(struct rd *r, struct rd *e)
{
    uint64_t n = rd_uleb(r);
    if (r->bad || n > (uint64_t)(r->end - r->p)) {
        r->bad = 1;
        r->p = r->end;
        *e = (struct rd){r->end, r->end, 1};
        return;
    }
    *e = (struct rd){r->p, r->p + n, 0};
    r->p += n;
}

/* DW_OP_breg<reg> <sleb>: 1 when e starts with it, the offset in *off. */
static int op_breg(struct rd *e, uint32_t reg, int64_t *off)
{
    if (e->p >= e->end || reg > 31 || *e->p != OP_breg0 + reg)
        return 0;
    e->p++;
    *off = rd_sleb(e);
    return !e->bad;
}

/* A CFA expression: the PLT's (x86-64: breg7 N; breg16 0; lit M; and; lit T; ge; lit3;
 * shl; plus: the CFA is rsp + N, 8 more once the entry's push has run) or a realigned
 * frame's (breg<fp> N; deref). Anything else is not modelled. */
static void cfa_expression(struct run *x, struct rd e)
{
    const struct sc_uw_dwarf_regs *a = x->b->a;
    int64_t off, zero;
    struct rd s = e;
    x->st.cfa_how = UW_C_OTHER;
    if (a->id == SC_UW_ARCH_X86_64 && op_breg(&s, a->sp, &off) && op_breg(&s, 16, &zero) &&
        zero == 0 && s.end - s.p == 7 && s.p[0] >= OP_lit0 && s.p[0] < OP_lit0 + 32 &&
        s.p[1] == OP_and && s.p[2] >= OP_lit0 && s.p[2] < OP_lit0 + 32 && s.p[3] == OP_ge &&
        s.p[4] == OP_lit0 + 3 && s.p[5] == OP_shl && s.p[6] == OP_plus) {
        x->st.cfa_how = UW_C_PLT;
        x->st.cfa_off = off;
        x->st.plt_mask = (uint8_t)(s.p[0] - OP_lit0);
        x->st.plt_min = (uint8_t)(s.p[2] - OP_lit0);
        return;
    }
    s = e;
    if (op_breg(&s, a->fp, &off) && s.end - s.p == 1 && s.p[0] == OP_deref) {
        x->st.cfa_how = UW_C_DEREF_FP;
        x->st.cfa_off = off;
    }
}

/* DW_CFA_expression for a register: a realigned frame saves the frame pointer at the frame
 * pointer (breg<fp> N alone); anything else is not modelled. */
static void reg_expression(struct run *x, uint64_t reg, struct rd e)
{
    int64_t off;
    if (reg == x->b->a->fp && op_breg(&e, x->b->a->fp, &off) && e.p == e.end)
        set_reg(x, reg, UW_R_AT_FP, off);
    else
        set_reg(x, reg, UW_R_OTHER, 0);
}

/* Runs instructions; 0 at their end (or the range's), -1 on one it cannot read. */
static int run(struct run *x, const uint8_t *p, const uint8_t *end)
{
    struct rd r = {p, end, 0};
    const struct sc_uw_cie *c = x->cie;
    while (r.p < r.end && !r.bad) {
        uint8_t op = rd_u8(&r);
        uint64_t reg, u;
        int64_t s;
        struct rd e;
        int done = 0;
        switch (op >> 6) {
        case 1: /* DW_CFA_advance_loc */
            done = advance(x, (uint64_t)(op & 0x3f) * c->code_align);
            break;
        case 2: /* DW_CFA_offset */
            s = uoff(&r, c);
            set_reg(x, op & 0x3f, UW_R_OFFSET, s);
            break;
        case 3: { /* DW_CFA_restore */
            struct sc_uw_reg *g = reg_of(x, op & 0x3f);
            if (g)
                *g = g == &x->st.fp ? c->init.fp : c->init.ra;
            break;
        }
        default:
            switch (op) {
            case CFA_nop:
                break;
            case CFA_set_loc:
                u = rd_ptr(&r, c->fde_enc, x->sec, 0, 0);
                if (!r.bad && x->emit) {
                    if (u < x->loc)
                        r.bad = 1;
                    else
                        done = advance(x, u - x->loc);
                }
                break;
            case CFA_advance_loc1:
            case CFA_advance_loc2:
            case CFA_advance_loc4:
                u = rd_n(&r, op == CFA_advance_loc1 ? 1 : op == CFA_advance_loc2 ? 2 : 4);
                if (!r.bad) {
                    if (c->code_align && u > UINT64_MAX / c->code_align)
                        u = UINT64_MAX;
                    else
                        u *= c->code_align;
                    done = advance(x, u);
                }
                break;
            case CFA_offset_extended:
                reg = rd_uleb(&r);
                s = uoff(&r, c);
                set_reg(x, reg, UW_R_OFFSET, s);
                break;
            case CFA_restore_extended: {
                struct sc_uw_reg *g = reg_of(x, rd_uleb(&r));
                if (g)
                    *g = g == &x->st.fp ? c->init.fp : c->init.ra;
                break;
            }
            case CFA_undefined:
                set_reg(x, rd_uleb(&r), UW_R_UNDEF, 0);
                break;
            case CFA_same_value:
                set_reg(x, rd_uleb(&r), UW_R_SAME, 0);
                break;
            case CFA_register:
                reg = rd_uleb(&r);
                rd_uleb(&r);
                set_reg(x, reg, UW_R_OTHER, 0);
                break;
            case CFA_remember_state:
                if (x->depth >= UW_MAX_REMEMBER)
                    r.bad = 1;
                else
                    x->saved[x->depth++] = x->st;
                break;
            case CFA_restore_state:
                if (x->depth == 0)
                    r.bad = 1;
                else
                    x->st = x->saved[--x->depth];
                break;
            case CFA_def_cfa:
            case CFA_def_cfa_sf:
                reg = rd_uleb(&r);
                if (op == CFA_def_cfa_sf)
                    s = factored(&r, rd_sleb(&r), c->data_align);
                else if ((u = rd_uleb(&r)) > INT64_MAX)
                    r.bad = 1;
                else
                    s = (int64_t)u;
                if (!r.bad) {
                    x->st.cfa_how = reg <= UINT32_MAX ? UW_C_REG : UW_C_OTHER;
                    x->st.cfa_reg = (uint32_t)reg;
                    x->st.cfa_off = s;
                }
                break;
            case CFA_def_cfa_register:
                reg = rd_uleb(&r);
                /* valid only on a register rule; keeps its offset */
                x->st.cfa_how =
                    x->st.cfa_how == UW_C_REG && reg <= UINT32_MAX ? UW_C_REG : UW_C_OTHER;
                x->st.cfa_reg = (uint32_t)reg;
                break;
            case CFA_def_cfa_offset:
            case CFA_def_cfa_offset_sf:
                if (op == CFA_def_cfa_offset_sf)
                    s = factored(&r, rd_sleb(&r), c->data_align);
                else if ((u = rd_uleb(&r)) > INT64_MAX)
                    r.bad = 1;
                else
                    s = (int64_t)u;
                if (!r.bad && x->st.cfa_how == UW_C_REG)
                    x->st.cfa_off = s;
                else if (!r.bad && x->st.cfa_how == UW_C_PLT)
                    x->st.cfa_how = UW_C_OTHER;
                break;
            case CFA_def_cfa_expression:
                rd_block(&r, &e);
                if (!r.bad)
                    cfa_expression(x, e);
                break;
            case CFA_expression:
                reg = rd_uleb(&r);
                rd_block(&r, &e);
                if (!r.bad)
                    reg_expression(x, reg, e);
                break;
            case CFA_offset_extended_sf:
                reg = rd_uleb(&r);
                s = factored(&r, rd_sleb(&r), c->data_align);
                set_reg(x, reg, UW_R_OFFSET, s);
                break;
            case CFA_val_offset:
            case CFA_val_offset_sf:
                reg = rd_uleb(&r);
                if (op == CFA_val_offset)
                    rd_uleb(&r);
                else
                    rd_sleb(&r);
                set_reg(x, reg, UW_R_OTHER, 0);
                break;
            case CFA_val_expression:
                reg = rd_uleb(&r);
                rd_block(&r, &e);
                set_reg(x, reg, UW_R_OTHER, 0);
                break;
            case CFA_GNU_window_save:
                break;
            case CFA_GNU_args_size:
                rd_uleb(&r);
                break;
            case CFA_GNU_negative_offset_extended:
                reg = rd_uleb(&r);
                s = uoff(&r, c);
                set_reg(x, reg, UW_R_OFFSET, -s);
                break;
            default:
                r.bad = 1; /* an instruction not known: the rest cannot be read */
                break;
            }
        }
        if (done)
            return 0;
    }
    return r.bad ? -1 : 0;
}

/* ---- CIEs and FDEs ---- */

/* The extent of the entry at off: its body [*body, *end), whether it uses 64-bit offsets.
 * 0, or -1 when it does not fit (or is a zero terminator). */
static int entry_at(const struct sc_uw_section *s, uint64_t off, struct rd *body, int *is64)
{
    if (off >= s->len)
        return -1;
    struct rd r = {s->data + off, s->data + s->len, 0};
    uint64_t len = rd_n(&r, 4);
    *is64 = 0;
    if (len == 0xffffffffu) {
        len = rd_n(&r, 8);
        *is64 = 1;
    }
    if (r.bad || len == 0 || len > (uint64_t)(r.end - r.p))
        return -1;
    *body = (struct rd){r.p, r.p + len, 0};
    return 0;
}

static int is_cie_id(const struct sc_uw_section *s, uint64_t id, int is64)
{
    if (!s->debug)
        return id == 0;
    return is64 ? id == UINT64_MAX : id == 0xffffffffu;
}

/* Parses the CIE at off of section src (once; later calls find it). Its index, or -1. */
static int64_t get_cie(struct sc_uw_builder *b, int src, uint64_t off)
{
    int added;
    uint64_t key = (uint64_t)src << 63 | off;
    uint32_t *slot = sc_map64_upsert(&b->cie_index, key, b->ncies, &added);
    if (!slot)
        return -1;
    if (!added)
        return *slot < b->ncies && b->cies[*slot].ok ? (int64_t)*slot : -1;
    if (sc_grow_array(&b->cies, &b->ciecap, (uint64_t)b->ncies + 1, sizeof *b->cies)) {
        *slot = UINT32_MAX - 1;
        return -1;
    }
    uint32_t idx = b->ncies++;
    struct sc_uw_cie *c = &b->cies[idx];
    memset(c, 0, sizeof *c);
    const struct sc_uw_section *s = &b->sec[src];
    struct rd r;
    int is64;
    if (entry_at(s, off, &r, &is64))
        return -1;
    uint64_t id = rd_n(&r, is64 ? 8 : 4);
    uint8_t version = rd_u8(&r);
    if (r.bad || !is_cie_id(s, id, is64) || (version != 1 && version != 3 && version != 4))
        return -1;
    const char *aug = (const char *)r.p;
    const uint8_t *nul = memchr(r.p, 0, (size_t)(r.end - r.p));
    if (!nul)
        return -1;
    r.p = nul + 1;
    c->addr_size = 8;
    if (version == 4) {
        c->addr_size = rd_u8(&r);
        if (rd_u8(&r) != 0 || (c->addr_size != 4 && c->addr_size != 8))
            return -1; /* segmented addresses */
    }
    c->code_align = rd_uleb(&r);
    c->data_align = rd_sleb(&r);
    uint64_t ra = version == 1 ? rd_u8(&r) : rd_uleb(&r);
    if (r.bad || ra > UINT32_MAX)
        return -1;
    c->ra_reg = (uint32_t)ra;
    c->fde_enc = PE_absptr;
    if (aug[0] == 'z') {
        uint64_t n = rd_uleb(&r);
        if (r.bad || n > (uint64_t)(r.end - r.p))
            return -1;
        struct rd a = {r.p, r.p + n, 0};
        r.p += n;
        c->has_z = 1;
        for (const char *k = aug + 1; *k && !a.bad; k++) {
            if (*k == 'L')
                rd_u8(&a);
            else if (*k == 'P')
                rd_ptr(&a, rd_u8(&a), s, 1, 0);
            else if (*k == 'R')
                c->fde_enc = rd_u8(&a);
            else if (*k != 'S' && *k != 'B' && *k != 'G')
                break; /* not known: its data is the rest, skipped by the length */
        }
        if (a.bad)
            return -1;
    } else if (aug[0]) {
        return -1; /* augmentation data of unknown size ("eh": GCC 2's) */
    }
    /* the initial instructions give every FDE its starting state */
    struct run x;
    memset(&x, 0, sizeof x);
    x.b = b;
    x.cie = c;
    x.sec = s;
    x.st.ra.how = UW_R_UNSET;
    x.st.fp.how = UW_R_UNSET;
    x.st.cfa_how = UW_C_UNSET;
    c->init = x.st;
    if (run(&x, r.p, r.end))
        return -1;
    c->init = x.st;
    c->ok = 1;
    return idx;
}

/* Reads the FDE at off of section src into an entry (not yet placed in a segment). 0, 1
 * when it is a CIE (or covers nothing), -1 when it does not parse. */
static int read_fde(struct sc_uw_builder *b, int src, uint64_t off, struct sc_uw_entry *out)
{
    const struct sc_uw_section *s = &b->sec[src];
    struct rd r;
    int is64;
    if (entry_at(s, off, &r, &is64))
        return -1;
    uint64_t field = (uint64_t)(r.p - s->data);
    uint64_t id = rd_n(&r, is64 ? 8 : 4);
    if (r.bad)
        return -1;
    if (is_cie_id(s, id, is64))
        return 1;
    uint64_t cie_off;
    if (s->debug)
        cie_off = id;
    else if (id > field)
        return -1;
    else
        cie_off = field - id;
    int64_t ci = get_cie(b, src, cie_off);
    if (ci < 0)
        return -1;
    const struct sc_uw_cie *c = &b->cies[ci];
    uint64_t lo, range;
    if (s->debug && !c->has_z) {
        lo = rd_n(&r, c->addr_size);
        range = rd_n(&r, c->addr_size);
    } else {
        lo = rd_ptr(&r, c->fde_enc, s, 0, 0);
        range = rd_ptr(&r, c->fde_enc & 0x0f, s, 1, 0);
    }
    if (c->has_z) {
        uint64_t n = rd_uleb(&r);
        if (r.bad || n > (uint64_t)(r.end - r.p))
            return -1;
        r.p += n;
    }
    if (r.bad || range == 0 || lo + range < lo)
        return r.bad ? -1 : 1;
    out->lo = lo;
    out->hi = lo + range;
    out->cie = (uint32_t)ci;
    out->insn_off = (uint32_t)(r.p - s->data);
    out->insn_len = (uint32_t)(r.end - r.p);
    out->src = (uint8_t)src;
    out->hdr = 0;
    return 0;
}

/* Every FDE of a section, in order. */
int sc_uw_walk_section(struct sc_uw_builder *b, int src)
{
    const struct sc_uw_section *s = &b->sec[src];
    uint64_t off = 0;
    while (off + 4 <= s->len) {
        struct rd body;
        int is64;
        if (entry_at(s, off, &body, &is64))
            break; /* the terminator, or a length past the end: nothing after it is sure */
        struct sc_uw_entry e;
        int rc = read_fde(b, src, off, &e);
        if (rc < 0)
            b->st.fdes_bad++;
        else if (rc == 0 && (rc = sc_uw_add_entry(b, &e)) != 0)
            return rc;
        off = (uint64_t)(body.end - s->data);
    }
    return 0;
}

/* The FDEs through .eh_frame_hdr's search table. 0 when done, 1 when the header is not one
 * to trust (the section is walked instead), or SC_E*. */
int sc_uw_from_hdr(struct sc_uw_builder *b)
{
    const struct sc_elf_cfi *cfi = b->cfi;
    struct sc_uw_section h = {cfi->eh_frame_hdr, cfi->eh_frame_hdr_len, cfi->eh_frame_hdr_addr, 0};
    struct rd r = {h.data, h.data + h.len, 0};
    uint8_t version = rd_u8(&r), ptr_enc = rd_u8(&r), count_enc = rd_u8(&r);
    uint8_t table_enc = rd_u8(&r);
    if (r.bad || version != 1 || table_enc != (PE_datarel | PE_sdata4) || ptr_enc == PE_omit ||
        count_enc == PE_omit)
        return 1;
    uint64_t eh = rd_ptr(&r, ptr_enc, &h, 0, h.addr);
    uint64_t count = rd_ptr(&r, count_enc, &h, 0, h.addr);
    if (r.bad || eh != b->sec[0].addr || count > (uint64_t)(r.end - r.p) / 8)
        return 1;
    for (uint64_t i = 0; i < count; i++) {
        uint64_t loc = (uint64_t)(int64_t)(int32_t)rd_n(&r, 4) + h.addr;
        uint64_t fde = (uint64_t)(int64_t)(int32_t)rd_n(&r, 4) + h.addr;
        struct sc_uw_entry e;
        int rc = fde >= eh ? read_fde(b, 0, fde - eh, &e) : -1;
        if (rc == 0 && e.lo != loc)
            rc = -1; /* the header and the FDE disagree */
        if (rc < 0) {
            b->st.fdes_bad++;
            continue;
        }
        e.hdr = 1;
        if (rc == 0 && (rc = sc_uw_add_entry(b, &e)) != 0)
            return rc;
    }
    return 0;
}

void sc_uw_run_entry(struct sc_uw_builder *b, const struct sc_uw_entry *e)
{
    const struct sc_uw_section *s = &b->sec[e->src];
    struct run x;
    memset(&x, 0, sizeof x);
    x.b = b;
    x.cie = &b->cies[e->cie];
    x.sec = s;
    x.st = x.cie->init;
    x.loc = e->lo;
    x.end = e->hi;
    x.bias = e->bias;
    x.emit = 1;
    if (run(&x, s->data + e->insn_off, s->data + e->insn_off + e->insn_len) == 0) {
        flush(&x); /* the last state holds to the end */
        return;
    }
    b->st.fdes_bad++;
    flush(&x);
    if (x.loc < x.end)
        sc_uw_push_kind(b, x.loc + x.bias, SC_UW_CFA_UNKNOWN);
}
