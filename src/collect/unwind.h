/* unwind.h - whole user stacks without frame pointers: per-binary tables built from the call
 * frame information (.eh_frame, .debug_frame), and the unwinder that walks a sampled stack
 * with them. */
#ifndef SC_UNWIND_H
#define SC_UNWIND_H

#include <stddef.h>
#include <stdint.h>

#include "collect/elfsym.h"
#include "collect/symbols.h"

/* ---- tables ----
 *
 * A binary's CFI is a program per function (an FDE and its CIE) that a debugger runs to learn,
 * at any instruction, how to find the caller's frame. Running it for every sample would cost
 * far too much, so it is run once per binary and its result kept as a table sorted by
 * address: for each range of file offsets, where the canonical frame address (CFA, the stack
 * pointer before the call) is (the stack pointer or the frame pointer plus an offset), where
 * the return address is, and where the caller's frame pointer was saved (or that it is
 * unchanged). That is what the eBPF profilers do with .eh_frame too; a row costs 12 bytes.
 *
 * What the table cannot say. CFI rules that are DWARF expressions are recognised in three
 * shapes: the PLT's (the CFA depends on where in its 16-byte entry the pc is), a realigned
 * frame's CFA loaded from beside the frame pointer (main built with stack realignment) and
 * its frame pointer saved there. Any other expression, a CFA on another register, a return
 * address or frame pointer in another register, makes the range SC_UW_CFA_UNKNOWN (or the
 * frame pointer SC_UW_FP_UNKNOWN); the unwinder then tries the frame pointer chain. Ranges
 * no FDE covers are SC_UW_CFA_NONE. Go binaries get no rows (frame_pointers_only): Go keeps
 * frame pointers and walks its own stacks by them.
 *
 * Bounds, for hostile files. Every read is checked against its section; a CIE or FDE that
 * does not parse, an unknown instruction or an augmentation not understood ends that entry
 * (the rows before it stay) and is counted; a remember_state stack deeper than 16 ends it
 * too. Work is linear in the sections' size (CIEs are parsed once each). A table has at most
 * max_rows rows (default SC_UNWIND_MAX_ROWS: 2^21, 24 MiB); past that it is cut, its end
 * marked SC_UW_CFA_NONE and `truncated` said. Sections over max_section bytes (default 256
 * MiB) are not read. */

#define SC_UNWIND_MAX_ROWS (1u << 21)
#define SC_UNWIND_MAX_SECTION (256u << 20)

enum sc_uw_arch { SC_UW_ARCH_X86_64 = 1, SC_UW_ARCH_AARCH64 = 2 };

enum sc_uw_cfa {
    SC_UW_CFA_NONE = 0, /* no FDE covers it */
    SC_UW_CFA_SP,       /* cfa = sp + cfa_off */
    SC_UW_CFA_FP,       /* cfa = fp + cfa_off */
    SC_UW_CFA_PLT,      /* cfa = sp + cfa_off + ((pc & plt_mask) >= plt_min ? 8 : 0) */
    SC_UW_CFA_DEREF_FP, /* cfa = *(fp + cfa_off): a realigned frame */
    SC_UW_CFA_END,      /* the outermost frame: the return address is undefined */
    SC_UW_CFA_UNKNOWN   /* an FDE covers it with a rule not modelled */
};

enum sc_uw_fp {
    SC_UW_FP_SAME = 0, /* the caller's frame pointer is the frame pointer */
    SC_UW_FP_AT_CFA,   /* saved at cfa + fp_off */
    SC_UW_FP_AT_FP,    /* saved at fp + fp_off (a realigned frame) */
    SC_UW_FP_UNKNOWN
};

enum sc_uw_ra {
    SC_UW_RA_AT_CFA = 0, /* the return address is at cfa + ra_off (x86-64: always -8) */
    SC_UW_RA_LR,         /* still in the link register (arm64, before it is saved) */
    SC_UW_RA_UNKNOWN
};

/* A rule as sc_unwind_find returns it. */
struct sc_unwind_rule {
    uint64_t start, end; /* the file offsets [start, end) it holds for */
    enum sc_uw_cfa cfa;
    enum sc_uw_fp fp;
    enum sc_uw_ra ra;
    int32_t cfa_off, fp_off, ra_off;
    uint8_t plt_mask, plt_min; /* SC_UW_CFA_PLT */
};

struct sc_unwind_limits {
    uint32_t max_rows;    /* 0: SC_UNWIND_MAX_ROWS */
    uint64_t max_section; /* 0: SC_UNWIND_MAX_SECTION */
};

struct sc_unwind_table_stats {
    uint32_t rows;
    uint32_t fdes;           /* FDEs whose rules are in the table */
    uint32_t fdes_bad;       /* FDEs (or CIEs) that did not parse, or not wholly */
    uint32_t fdes_hdr;       /* of fdes, found through .eh_frame_hdr's search table */
    uint32_t fdes_debug;     /* of fdes, from .debug_frame */
    uint32_t unknown;        /* rows of SC_UW_CFA_UNKNOWN */
    int truncated;           /* max_rows cut it */
    int frame_pointers_only; /* a Go binary: no rows, frame pointers */
    enum sc_uw_arch arch;
    uint64_t start, end; /* the file offsets the rows cover */
    size_t bytes;        /* memory held */
};

struct sc_unwind_table;

/* Builds the table of an ELF file's CFI (elfsym.h's sc_elf_cfi gives it). An architecture
 * other than x86-64 and arm64 is SC_EUNSUPPORTED; a file without CFI gives an empty table.
 * The caller frees *out (sc_unwind_table_free). 0 or SC_E*. */
int sc_unwind_build(const struct sc_elf_cfi *cfi, const struct sc_unwind_limits *lim,
                    struct sc_unwind_table **out, char *err);

/* The same from a file (fd) or an image in memory ([mem, mem + len) when fd < 0). */
int sc_unwind_load(int fd, const void *mem, size_t len, const struct sc_unwind_limits *lim,
                   struct sc_unwind_table **out, char *err);

void sc_unwind_table_free(struct sc_unwind_table *t);

/* The rule for a file offset: 1 found (SC_UW_CFA_NONE included, with its extent), 0 when the
 * offset is outside the table. */
int sc_unwind_find(const struct sc_unwind_table *t, uint64_t off, struct sc_unwind_rule *out);

void sc_unwind_table_stats(const struct sc_unwind_table *t, struct sc_unwind_table_stats *st);

/* ---- the unwinder ---- */

/* The user registers at the sample. fp is rbp (x29 on arm64); lr is arm64's x30. */
struct sc_unwind_regs {
    uint64_t pc, sp, fp, lr;
};

/* Where the unwinder learns about a pc: 0 when it is in no executable mapping, else 1 with
 * the table of its binary (*t NULL when it has none: frame pointers then) and the pc's file
 * offset in that binary. */
typedef int (*sc_unwind_find_fn)(void *ctx, uint64_t pc, const struct sc_unwind_table **t,
                                 uint64_t *off);

enum sc_unwind_stop {
    SC_UNWIND_END,       /* the table said this is the outermost frame */
    SC_UNWIND_ZERO,      /* a zero return address or frame pointer: the chain's end */
    SC_UNWIND_STACK_END, /* the next read was outside the stack copy */
    SC_UNWIND_UNMAPPED,  /* a return address in no executable mapping */
    SC_UNWIND_DEPTH,     /* max frames */
    SC_UNWIND_BAD        /* no rule and no frame pointer, or a frame that does not go up */
};

struct sc_unwind_result {
    uint32_t n;  /* frames in pcs */
    uint32_t fp; /* of them, stepped to by frame pointer (no table row) */
    enum sc_unwind_stop stop;
};

/* Walks the stack: pcs[0] is regs->pc, each next one its caller's return address, until the
 * table says the stack ends or a stop above (at most max frames). stack holds len bytes
 * copied from regs->sp upward (PERF_SAMPLE_STACK_USER): the only memory it reads. Rows are
 * looked up at a return address less one (the call, which may be a function's last
 * instruction); frames no row covers are stepped by frame pointer ([fp] the caller's fp,
 * [fp + 8] the return address). Never fails. */
void sc_unwind_stack(enum sc_uw_arch arch, const struct sc_unwind_regs *regs, const uint8_t *stack,
                     size_t len, sc_unwind_find_fn find, void *ctx, uint64_t *pcs, uint32_t max,
                     struct sc_unwind_result *res);

/* ---- the tables of a recording ----
 *
 * A cache of tables by DSO (symbols.h's ids), loaded on first use through the symbolizer's
 * way of opening a DSO's file, shared by build id (the same library in every container is
 * read once), kept under max_bytes (default SC_UNWIND_CACHE_BYTES: 48 MiB), least recently
 * used first out. A DSO whose table cannot be had (no file, not ELF, JIT code) is remembered
 * as such and costs nothing again. The vDSO's table comes from scorch's own copy of it. Not
 * thread safe. */

#define SC_UNWIND_CACHE_BYTES (48u << 20)

struct sc_unwind_cache;

int sc_unwind_cache_new(uint64_t max_bytes, const struct sc_unwind_limits *lim,
                        struct sc_unwind_cache **out, char *err);
void sc_unwind_cache_free(struct sc_unwind_cache *c);

/* The table of dso, NULL when it has none (unwind by frame pointers). Valid until the next
 * call. */
const struct sc_unwind_table *sc_unwind_cache_get(struct sc_unwind_cache *c,
                                                  struct sc_symbolizer *sym, uint32_t dso);

struct sc_unwind_cache_stats {
    uint32_t tables;
    uint64_t bytes, rows;
    uint64_t loads, failures, evictions, shared;
    uint64_t load_ns; /* time spent building tables */
};
void sc_unwind_cache_stats(const struct sc_unwind_cache *c, struct sc_unwind_cache_stats *st);

#endif
