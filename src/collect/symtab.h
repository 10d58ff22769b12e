/* symtab.h - sorted symbol tables and the text and binary formats they are read from. */
#ifndef SC_SYMTAB_H
#define SC_SYMTAB_H

#include <stddef.h>
#include <stdint.h>

/* A symbol table: function start addresses, sizes and names, sorted by address, for the
 * sampler's symbolizer (symbols.h). Filled from an ELF file's .symtab / .dynsym
 * (elfsym.c), a Go binary's .gopclntab, /proc/kallsyms or a JIT's /tmp/perf-PID.map (the
 * parsers below, which never trust their input: every offset is checked, every count
 * bounded by the input's size). Names live in one pool owned by the table. */
struct sc_symtab_ent {
    uint64_t start;
    uint32_t size; /* > 0 */
    uint32_t name; /* into names, NUL-terminated */
};

/* A symbol being added: sc_symtab_finish turns these into entries. */
struct sc_symtab_new {
    uint64_t start, size; /* size 0: up to the next symbol */
    uint32_t name;
    uint32_t seq; /* the order it was added in */
    uint8_t rank; /* which of several names at one address wins: higher */
};

/* A PT_LOAD segment: how file offsets become the addresses symbols use. */
struct sc_segment {
    uint64_t offset, vaddr, filesz;
};

#define SC_SYMTAB_MAX_SEGMENTS 16

enum { SC_SYMS_NONE, SC_SYMS_DYNSYM, SC_SYMS_GOPCLNTAB, SC_SYMS_SYMTAB, SC_SYMS_TEXT };
enum { SC_SYMTAB_OURS, SC_SYMTAB_PERF_ELF, SC_SYMTAB_PERF_KALLSYMS };

struct sc_symtab {
    struct sc_symtab_ent *v; /* sorted by start, one per start (after sc_symtab_finish) */
    uint32_t n, cap;
    struct sc_symtab_new *add; /* added since the last finish */
    uint32_t nadd, addcap;
    char *names;
    size_t names_len;
    uint32_t names_cap;
    /* ELF tables leave the names in the file (a big C++ library's table is mostly names):
     * then names is NULL and an entry's name is an offset from names_off in the file the
     * symbols came from, read when an address is named (symbols.c) */
    int names_in_file;
    uint64_t names_off;
    struct sc_segment seg[SC_SYMTAB_MAX_SEGMENTS];
    uint32_t nseg;
    uint8_t build_id[20];
    uint32_t build_id_len;
    int is_go;  /* a Go binary (has .gopclntab / .go.buildinfo) */
    int source; /* where the symbols came from: SC_SYMS_* */
    /* which of several names at one address wins (set before adding symbols):
     * SC_SYMTAB_OURS, or perf's choice so names agree with perf script's (a perf.data read
     * directly): SC_SYMTAB_PERF_ELF (a sized symbol, then not weak, then global, then fewer
     * leading underscores, then the longer name, then the first; STT_NOTYPE labels in code
     * are symbols too) or SC_SYMTAB_PERF_KALLSYMS (the last one listed) */
    int names_rule;
    size_t bytes; /* memory held, for the cache's budget */
    /* The only addresses the table will be asked (owned; NULL: any): symbols they cannot
     * need are not added (sc_symtab_wanted). File offsets while want_offsets (the ELF
     * loader makes them link-time addresses, sorted and distinct, once it has the
     * segments). */
    uint64_t *want;
    uint32_t nwant;
    int want_offsets;
};

void sc_symtab_init(struct sc_symtab *t);
void sc_symtab_release(struct sc_symtab *t);

/* Appends a symbol (name copied). 0 or SC_ENOMEM / SC_ELIMIT (more than 2^31 symbols or
 * 4 GiB of names). */
int sc_symtab_add(struct sc_symtab *t, uint64_t start, uint64_t size, const char *name,
                  size_t name_len, uint8_t rank);
/* Makes room for nsyms more symbols and name_bytes more of names (each name and its NUL),
 * so that adding as many moves nothing: for a table whose size is known before. 0 or
 * SC_ENOMEM (then nothing is reserved, and adding still works). */
int sc_symtab_reserve(struct sc_symtab *t, uint32_t nsyms, size_t name_bytes);
/* Appends a symbol whose name is at offset name in the caller's string pool, which the
 * caller lends as t->names / t->names_len (NUL-terminated) until sc_symtab_finish. */
int sc_symtab_add_ref(struct sc_symtab *t, uint64_t start, uint64_t size, uint32_t name,
                      uint8_t rank);
/* Sorts what was added (with the entries of an earlier finish), keeps one name per
 * address (highest rank, then fewer leading underscores, then shorter, then bytewise
 * smaller: deterministic), gives size-0 symbols the distance to the next symbol (at most
 * max_gap; 0 = unbounded; sizes stop at 4 GiB) and frees the building state. */
void sc_symtab_finish(struct sc_symtab *t, uint64_t max_gap);
/* Makes t->want what adding symbols reads: link-time addresses (file offsets through the
 * segments, when want_offsets), sorted and distinct. */
void sc_symtab_want_ready(struct sc_symtab *t);
/* 1 when adding symbols should keep only those t->want needs (its addresses ready). */
static inline int sc_symtab_picks(const struct sc_symtab *t)
{
    return t->want && !t->want_offsets;
}
/* A symbol that could be added: its start, its index in its table. */
struct sc_symtab_cand {
    uint64_t start;
    uint32_t index;
};
/* Of the symbols that could be added (c, any order; reordered), those a table with want
 * needs: for each wanted address those at the greatest start at or below it (what names
 * it) and those at the least start above it (what ends a size-less symbol below it), with
 * which the table names every wanted address as it would with all of them. *out (malloc'd)
 * gets their indexes, ascending. 0, or SC_ENOMEM. */
int sc_symtab_wanted(const struct sc_symtab *t, struct sc_symtab_cand *c, uint32_t n,
                     uint32_t **out, uint32_t *nout);
/* The symbol containing addr, or NULL. */
const struct sc_symtab_ent *sc_symtab_find(const struct sc_symtab *t, uint64_t addr);
/* The address a file offset is loaded at, from the segments; 0 when in none (then callers
 * use the offset as it is). */
int sc_symtab_vaddr(const struct sc_symtab *t, uint64_t offset, uint64_t *vaddr);

/* ---- parsers ---- */

/* /proc/kallsyms text: "ffffffff81000000 T _stext [module]" lines. Keeps text symbols
 * (t, T, w, W with a non-zero address); a module name is kept out of the symbol's name.
 * Lines that do not parse are skipped. With t->want (ready), text is the whole of it and
 * only the symbols those addresses need are added. 0 or SC_ENOMEM. */
int sc_symtab_parse_kallsyms(struct sc_symtab *t, const char *text, size_t len);
/* The same in two steps, the first of which needs no table (so it may run ahead, on
 * another thread): the text symbols' lines, as {address, offset of the line in text}, in
 * the text's order (0, SC_ENOMEM, SC_ELIMIT past 4 GiB); then, with t->want ready, the
 * symbols those addresses need added from those lines (c is reordered; 0 or SC_ENOMEM). */
int sc_symtab_kallsyms_lines(const char *text, size_t len, struct sc_symtab_cand **out,
                             uint32_t *nout);
int sc_symtab_parse_kallsyms_lines(struct sc_symtab *t, const char *text, size_t len,
                                   struct sc_symtab_cand *c, uint32_t nc);

/* A JIT's perf map (/tmp/perf-PID.map): "START SIZE name" lines, hex START and SIZE
 * (with or without 0x). Lines that do not parse are skipped. 0 or SC_ENOMEM. */
int sc_symtab_parse_perf_map(struct sc_symtab *t, const char *text, size_t len);

/* A Go .gopclntab section (Go 1.2 to 1.20+ layouts: magic 0xfffffffb, 0xfffffffa,
 * 0xfffffff0, 0xfffffff1), loaded at vaddr; text_vaddr is the .text section's address
 * (Go >= 1.18 stores entries relative to it when the header's textStart is 0). Adds every
 * function (entry, size to the next entry, name). 0, SC_EFORMAT (not a pclntab or
 * malformed) or SC_ENOMEM. */
int sc_symtab_parse_gopclntab(struct sc_symtab *t, const uint8_t *data, size_t len,
                              uint64_t text_vaddr);

/* One line of /proc/PID/maps: "start-end perms offset maj:min inode   path". */
struct sc_maps_line {
    uint64_t start, end, offset, inode;
    uint32_t dev_major, dev_minor;
    int exec;         /* perms has 'x' */
    const char *path; /* into the line; "" for anonymous memory */
    size_t path_len;
};
/* Parses one line (without its newline). 0 or SC_EFORMAT. */
int sc_maps_parse_line(const char *line, size_t len, struct sc_maps_line *out);

#endif
