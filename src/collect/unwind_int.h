/* unwind_int.h - the unwind tables' internals, shared by unwind_cfi.c and unwind_table.c.
 *
 * DESIGN. A builder lives for one table's build, on one thread. unwind_table.c finds the
 * FDEs (through unwind_cfi.c's readers of .eh_frame_hdr and of the sections), places them in
 * the executable segments, orders them by file offset and has unwind_cfi.c run each one's
 * instructions into rows; it then keeps the rows as the table and answers lookups. CIEs are
 * parsed once each, when an FDE first names them (cie_index).
 *
 * A row of the table (12 bytes):
 *
 *   OFFSET SIZE MEANING
 *   0      4    pc: the file offset it starts at, less the table's base
 *   4      4    cfa_off
 *   8      2    aux: fp_off; for SC_UW_CFA_PLT, plt_mask | plt_min << 8
 *   10     1    ra_off
 *   11     1    kind: cfa rule (bits 0-2), fp rule (bits 3-4), ra rule (bits 5-6)
 *
 * A row holds until the next one; the last row is SC_UW_CFA_NONE at the end of the last FDE.
 * Consecutive rows with the same rule are one. */
#ifndef SC_UNWIND_INT_H
#define SC_UNWIND_INT_H

#include "collect/unwind.h"
#include "model/hash.h"

struct sc_uw_row {
    uint32_t pc;
    int32_t cfa_off;
    int16_t aux;
    int8_t ra_off;
    uint8_t kind;
};

#define UW_KIND(cfa, fp, ra) ((uint8_t)((cfa) | (fp) << 3 | (ra) << 5))
#define UW_KIND_CFA(k) ((enum sc_uw_cfa)((k)&7))
#define UW_KIND_FP(k) ((enum sc_uw_fp)(((k) >> 3) & 3))
#define UW_KIND_RA(k) ((enum sc_uw_ra)(((k) >> 5) & 3))

struct sc_unwind_table {
    struct sc_uw_row *rows;
    uint32_t n;
    uint64_t base;
    struct sc_unwind_table_stats st;
};

/* The DWARF register numbers that matter. */
struct sc_uw_dwarf_regs {
    enum sc_uw_arch id;
    uint32_t sp, fp, ra;
};

/* A section's bytes and link-time address. */
struct sc_uw_section {
    const uint8_t *data;
    size_t len;
    uint64_t addr;
    int debug; /* .debug_frame (ids and pointers differ) */
};

enum { UW_R_UNSET, UW_R_UNDEF, UW_R_SAME, UW_R_OFFSET, UW_R_AT_FP, UW_R_OTHER };
struct sc_uw_reg {
    uint8_t how;
    int64_t off;
};

enum { UW_C_UNSET, UW_C_REG, UW_C_PLT, UW_C_DEREF_FP, UW_C_OTHER };
struct sc_uw_state {
    uint8_t cfa_how;
    uint8_t plt_mask, plt_min;
    uint32_t cfa_reg;
    int64_t cfa_off;
    struct sc_uw_reg fp, ra;
};

#define UW_MAX_REMEMBER 16

struct sc_uw_cie {
    uint64_t code_align;
    int64_t data_align;
    uint32_t ra_reg;
    uint8_t fde_enc, has_z, addr_size, ok;
    struct sc_uw_state init; /* after the initial instructions */
};

/* An FDE to run: its range (link-time addresses), its CIE, its instructions. */
struct sc_uw_entry {
    uint64_t lo, hi;
    uint64_t bias; /* file offset = address + bias (modulo 2^64) */
    uint32_t cie;
    uint32_t insn_off, insn_len;
    uint8_t src; /* 0 .eh_frame, 1 .debug_frame */
    uint8_t hdr; /* found through .eh_frame_hdr */
};

struct sc_uw_builder {
    const struct sc_uw_dwarf_regs *a;
    const struct sc_elf_cfi *cfi;
    uint32_t max_rows;
    struct sc_uw_section sec[2];
    struct sc_uw_cie *cies;
    uint32_t ncies, ciecap;
    struct sc_map64 cie_index; /* src << 63 | offset -> index */
    struct sc_uw_entry *ents;
    uint32_t nents, entcap;
    struct sc_uw_row *rows;
    uint32_t nrows, rowcap;
    uint64_t base;
    int full;     /* max_rows reached (or memory): no more rows */
    uint64_t cut; /* the offset of the first row that did not fit */
    struct sc_unwind_table_stats st;
};

/* unwind_cfi.c */
/* The FDEs of a section, walked in order, or through .eh_frame_hdr's table (1 when that
 * table is not one to trust: walk then), each kept with sc_uw_add_entry. 0 or SC_E*. */
int sc_uw_walk_section(struct sc_uw_builder *b, int src);
int sc_uw_from_hdr(struct sc_uw_builder *b);
/* Runs an FDE's instructions into rows (from its CIE's initial state). */
void sc_uw_run_entry(struct sc_uw_builder *b, const struct sc_uw_entry *e);
/* A row of a rule without offsets (a gap, a range not modelled) at file offset off. */
void sc_uw_push_kind(struct sc_uw_builder *b, uint64_t off, enum sc_uw_cfa cfa);
/* The end row, where the last FDE ends (or where rows stopped fitting). */
void sc_uw_end_row(struct sc_uw_builder *b, uint64_t off);

/* unwind_table.c */
/* Keeps an FDE, placed in its executable segment. 0, SC_ELIMIT (max_rows FDEs) or
 * SC_ENOMEM. */
int sc_uw_add_entry(struct sc_uw_builder *b, struct sc_uw_entry *e);

#endif
