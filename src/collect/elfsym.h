/* elfsym.h - ELF files through libelf and libdw: symbols, segments, build ids, lines. */
#ifndef SC_ELFSYM_H
#define SC_ELFSYM_H

#include <stddef.h>
#include <stdint.h>

#include "collect/symtab.h"

/* Loads an ELF file (the open fd, or the bytes [mem, mem + len) when fd < 0, e.g. the
 * vDSO) into t: its PT_LOAD segments, its GNU build id, and its function symbols: .symtab
 * (ranked global > weak > local), else .dynsym, else a Go .gopclntab. From a file the
 * names of .symtab / .dynsym stay in it (t->names_in_file); from memory they are copied.
 * has_dwarf says whether the file carries .debug_info (or .zdebug_info). t must be empty
 * (sc_symtab_init) and is finished (sc_symtab_finish) on success. 0, SC_EFORMAT (not
 * ELF) or SC_ENOMEM. */
int sc_elf_load(int fd, const void *mem, size_t len, struct sc_symtab *t, int *has_dwarf,
                char *err);

/* The GNU build id of an open ELF file, cheaply (its note sections only): its length
 * (at most 20, into id), 0 when it has none or is not ELF. */
uint32_t sc_elf_build_id(int fd, uint8_t id[20]);

/* The file name a stripped ELF file's .gnu_debuglink names (its separate debug file, looked
 * for beside it, in .debug/ beside it and under /usr/lib/debug/<its directory>): its length
 * (into name, NUL-terminated), 0 when it has none or the name is not a plain file name (a
 * path, "..", longer than n - 1 bytes). */
size_t sc_elf_debuglink(int fd, char *name, size_t n);

/* Replaces t's symbols with the .symtab of another ELF file (a separate debug file,
 * /usr/lib/debug/.build-id/..., of a stripped binary), names left in that file; keeps
 * t's segments and build id. 0, SC_ENOTFOUND (no .symtab) or SC_E*. */
int sc_elf_load_symtab(int fd, struct sc_symtab *t, char *err);

/* One frame of a source position: a function and a file:line in it. Strings are valid
 * during the callback only. */
struct sc_elf_frame {
    const char *function; /* DWARF's name; NULL when it has none */
    const char *file;     /* NULL when unknown */
    int64_t line;
    int outer; /* the real (not inlined) function: the symbol table names it */
};
#define SC_ELF_MAX_FRAMES 16

/* Called for address i with its frames, innermost (inlined) first; nframes is 0 when the
 * debug information does not cover the address. */
typedef void (*sc_elf_lines_cb)(void *ctx, uint32_t i, const struct sc_elf_frame *frames,
                                uint32_t nframes);

/* An open DWARF: an ELF file's descriptor, its libelf and libdw handles (libdw
 * decompresses compressed debug sections when it opens them: worth keeping open when the
 * same file is asked about again and again). */
struct sc_elf_dwarf;

/* Opens the DWARF of the ELF file fd, which it takes (closed by sc_elf_dwarf_close, or
 * here on failure). *bytes estimates the memory it holds (its debug sections). 0,
 * SC_ENOTFOUND (no DWARF), SC_EFORMAT or SC_ENOMEM. */
int sc_elf_dwarf_open(int fd, struct sc_elf_dwarf **out, uint64_t *bytes, char *err);
void sc_elf_dwarf_close(struct sc_elf_dwarf *d);

/* File, line and inlined frames of n link-time addresses, cb called once for each. 0 or
 * SC_ENOMEM. */
int sc_elf_lines(struct sc_elf_dwarf *d, const uint64_t *vaddrs, uint32_t n, sc_elf_lines_cb cb,
                 void *ctx, char *err);

/* What unwinding needs of an ELF file (unwind.h builds its table from it): the bytes and
 * link-time addresses of its call frame information, its executable PT_LOAD segments (FDE
 * addresses become file offsets through them), its machine and build id, and whether it is
 * a Go binary. Pointers are valid during the callback only. */
struct sc_elf_cfi {
    uint16_t machine;                                     /* EM_X86_64, EM_AARCH64, ... */
    int is_go;                                            /* has .gopclntab or .go.buildinfo */
    const uint8_t *eh_frame, *eh_frame_hdr, *debug_frame; /* NULL when absent */
    size_t eh_frame_len, eh_frame_hdr_len, debug_frame_len;
    uint64_t eh_frame_addr, eh_frame_hdr_addr;
    struct sc_segment seg[SC_SYMTAB_MAX_SEGMENTS]; /* executable PT_LOAD segments */
    uint32_t nseg;
    uint8_t build_id[20];
    uint32_t build_id_len;
};
typedef int (*sc_elf_cfi_cb)(void *ctx, const struct sc_elf_cfi *cfi, char *err);

/* Opens an ELF file (the open fd, or the bytes [mem, mem + len) when fd < 0), finds its
 * .eh_frame, .eh_frame_hdr and .debug_frame (a compressed .debug_frame is inflated when it
 * says it holds at most max_section bytes; sections larger than that are left out) and
 * calls cb with them. Only little-endian 64-bit files are read (x86-64, arm64). Returns
 * cb's result, SC_EFORMAT (not ELF) or SC_EUNSUPPORTED (another class or byte order). */
int sc_elf_cfi(int fd, const void *mem, size_t len, uint64_t max_section, sc_elf_cfi_cb cb,
               void *ctx, char *err);

#endif
