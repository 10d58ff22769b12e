/* fuzz_unwind.c - libFuzzer target: unwind tables from hostile CFI, raw sections or whole ELF
 * files, then walks of a hostile stack with them. */
#include "fuzz_common.h"

#include "collect/unwind.h"

#include <elf.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CODE_END (1u << 20) /* the made-up code segment: [0, 1 MiB) */

static int fuzz_find(void *ctx, uint64_t pc, const struct sc_unwind_table **t, uint64_t *off)
{
    *t = ctx;
    *off = pc;
    return pc < CODE_END;
}

/* Every rule of the table, in order: contiguous, within the table, of known kinds. */
static void check_rules(const struct sc_unwind_table *t, uint32_t max_rows)
{
    struct sc_unwind_table_stats st;
    sc_unwind_table_stats(t, &st);
    FUZZ_CHECK(st.rows <= max_rows);
    FUZZ_CHECK(st.start <= st.end);
    struct sc_unwind_rule u;
    uint32_t n = 0, unknown = 0;
    for (uint64_t a = st.start; a < st.end; a = u.end) {
        FUZZ_CHECK(sc_unwind_find(t, a, &u));
        FUZZ_CHECK(u.start == a && u.end > u.start && u.end <= st.end);
        FUZZ_CHECK(u.cfa <= SC_UW_CFA_UNKNOWN && u.fp <= SC_UW_FP_UNKNOWN &&
                   u.ra <= SC_UW_RA_UNKNOWN);
        unknown += u.cfa == SC_UW_CFA_UNKNOWN;
        FUZZ_CHECK(++n < st.rows || st.rows == 0);
    }
    FUZZ_CHECK(unknown == st.unknown);
    FUZZ_CHECK(!sc_unwind_find(t, st.end, &u));
}

/* The first byte: bit 0 a whole ELF file (else raw sections: u16 .eh_frame_hdr length, u16
 * .debug_frame length, those bytes, then .eh_frame), bit 1 arm64 (raw sections), bit 2 a
 * tiny row limit. The input's bytes are then also the stack a walk reads, its first 24 the
 * registers. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 5)
        return 0;
    uint8_t mode = data[0];
    data++, size--;
    /* a copy the parsers may not read past (libelf may also write into an ELF image) */
    uint8_t *buf = malloc(size);
    FUZZ_CHECK(buf);
    memcpy(buf, data, size);
    struct sc_unwind_limits lim = {mode & 4 ? 16 : 4096, 1u << 20};
    struct sc_unwind_table *t = NULL;
    char err[SC_ERR_LEN] = "";
    int rc;
    if (mode & 1) {
        rc = sc_unwind_load(-1, buf, size, &lim, &t, err);
        FUZZ_CHECK(rc == 0 || rc == SC_EFORMAT || rc == SC_EUNSUPPORTED);
    } else {
        uint16_t hl, dl;
        memcpy(&hl, buf, 2);
        memcpy(&dl, buf + 2, 2);
        size_t h = hl < size - 4 ? hl : size - 4;
        size_t d = dl < size - 4 - h ? dl : size - 4 - h;
        struct sc_elf_cfi cfi;
        memset(&cfi, 0, sizeof cfi);
        cfi.machine = mode & 2 ? EM_AARCH64 : EM_X86_64;
        cfi.eh_frame_hdr = h ? buf + 4 : NULL;
        cfi.eh_frame_hdr_len = h;
        cfi.eh_frame_hdr_addr = 0x800;
        cfi.debug_frame = d ? buf + 4 + h : NULL;
        cfi.debug_frame_len = d;
        cfi.eh_frame = buf + 4 + h + d;
        cfi.eh_frame_len = size - 4 - h - d;
        cfi.eh_frame_addr = 0x1000;
        cfi.seg[0] = (struct sc_segment){0, 0, CODE_END};
        cfi.nseg = 1;
        rc = sc_unwind_build(&cfi, &lim, &t, err);
        FUZZ_CHECK(rc == 0);
    }
    if (rc == 0) {
        FUZZ_CHECK(t);
        check_rules(t, lim.max_rows);
        struct sc_unwind_table_stats st;
        sc_unwind_table_stats(t, &st);
        /* a walk: registers from the input, the input as the stack */
        uint64_t r[3] = {0, 0, 0};
        memcpy(r, buf, size < 24 ? size : 24);
        struct sc_unwind_regs regs = {r[0] % CODE_END, r[1], r[2], r[0] >> 20};
        uint64_t pcs[64];
        struct sc_unwind_result res;
        sc_unwind_stack(st.arch ? st.arch : SC_UW_ARCH_X86_64, &regs, buf, size, fuzz_find, t, pcs,
                        64, &res);
        FUZZ_CHECK(res.n >= 1 && res.n <= 64 && pcs[0] == regs.pc);
        FUZZ_CHECK(res.stop <= SC_UNWIND_BAD && res.fp < res.n);
        /* return addresses are looked up at pc - 1 (the call), so one just past the code's
         * end is a call ending the segment */
        for (uint32_t i = 1; i < res.n; i++)
            FUZZ_CHECK(pcs[i] != 0 && pcs[i] - 1 < CODE_END);
    } else {
        FUZZ_CHECK(err[0] && !t);
    }
    sc_unwind_table_free(t);
    free(buf);
    return 0;
}
