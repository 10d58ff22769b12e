/* symbols.h - addresses of sampled programs to functions, files and lines, without perf. */
#ifndef SC_SYMBOLS_H
#define SC_SYMBOLS_H

#include <stddef.h>
#include <stdint.h>

#include "collect/elfsym.h"

/* A symbolizer names the code the sampler saw. Code lives in "DSOs": mapped files
 * (executables, shared libraries) identified by device and inode as /proc/PID/maps and
 * the kernel's MMAP2 records give them, the kernel, the vDSO, and each process's
 * anonymous executable memory (JIT code, named by /tmp/perf-PID.map when the JIT writes
 * one). Addresses are file offsets for mapped files and the vDSO (the sampler subtracts
 * the mapping's start and adds its file offset), absolute for the kernel and JIT code.
 *
 * Symbols: a file's .symtab, else .dynsym, else a Go binary's .gopclntab. A file without
 * .symtab or DWARF (most of a distribution: .dynsym only) is completed by its separate debug
 * file: by build id (<debug_dir>/.build-id/xx/yyyy.debug), else by the name its
 * .gnu_debuglink gives, beside the file, in .debug/ beside it, or under <debug_dir>/<its
 * directory> (such a file must carry the binary's build id), else from a debuginfod server
 * (debuginfod.h) when one is configured. File, line and inlined frames from DWARF (libdw)
 * where present, in the file or its debug file. Symbol versions ("@GLIBC_2.34", "@@...")
 * are cut from names; where they were, DWARF's name of the function is preferred (libc's
 * __libc_start_main@@GLIBC_2.34 is __libc_start_main_impl, as perf shows it). The kernel:
 * /proc/kallsyms (all zero, so unnamed, when kernel.kptr_restrict hides it).
 *
 * Fetching never holds up a resolve for long: the server is asked on the fetcher's thread,
 * and a resolve waits for it only while the debuginfod_wait_ns budget (over the
 * symbolizer's life) lasts. A file whose debug file is still on its way is named from what
 * it has; sc_symbolizer_refresh takes in what arrived since, and its generation number says
 * that names given earlier may be better now.
 *
 * Caches. A DSO's symbol table is loaded on first use and shared by every DSO with the
 * same build id (the same library in many containers); tables are kept while their
 * total stays under max_bytes, least recently used first out, and so is open DWARF under
 * dwarf_bytes. Nothing here caches per
 * address: the sampler asks once per distinct address (see record_int.h).
 *
 * Not thread safe: one sampler thread owns a symbolizer. */
struct sc_symbolizer;

struct sc_symbolizer_opts {
    int no_dwarf;                  /* skip file:line (symbols only) */
    uint64_t max_bytes;            /* symbol tables kept; 0: 32 MiB */
    uint64_t dwarf_bytes;          /* open DWARF kept between resolves (worth it when profiles
                                      are taken again and again); 0: none, each closed after use */
    const char *kallsyms;          /* NULL: /proc/kallsyms */
    const char *perf_map_dir;      /* NULL: /tmp */
    const char *debug_dir;         /* NULL: $SCORCH_DEBUG_DIR (for tests), else /usr/lib/debug */
    int no_debuginfod;             /* never ask debuginfod servers, whatever the environment */
    int64_t debuginfod_wait_ns;    /* what resolves may wait for fetches, in all; 0: never */
    int64_t debuginfod_timeout_ns; /* one fetch at most; 0: SC_DEBUGINFOD_TIMEOUT */
    const char *root;              /* mapped files are opened under this directory instead of
                                      through /proc/PID/root (tests, fuzzing); NULL: not */
    int perf_names;                /* of several names at one address, the one perf picks (and
                                      labels in code as symbols), so names agree with perf
                                      script's (symtab.h, names_rule) */
    int one_shot;                  /* each DSO is resolved once, with all its addresses: its
                                      table keeps only the symbols they need (and serves no
                                      other DSO of its build) */
};

int sc_symbolizer_new(const struct sc_symbolizer_opts *o, struct sc_symbolizer **out, char *err);
void sc_symbolizer_free(struct sc_symbolizer *s);

enum sc_dso_kind { SC_DSO_KERNEL, SC_DSO_UNKNOWN, SC_DSO_VDSO, SC_DSO_FILE, SC_DSO_JIT };
/* Fixed ids: the kernel, and code in no known mapping. */
enum { SC_DSO_ID_KERNEL = 0, SC_DSO_ID_UNKNOWN = 1, SC_DSO_ID_VDSO = 2 };

/* Reads ahead the kernel's symbol file when it is a plain file and s is one_shot (perf
 * record's copy of kallsyms): maps it and finds its text symbols' lines, the costly part
 * of naming kernel addresses, which then only picks the symbols they need. For a thread of
 * its own while the addresses are being gathered (s is not used meanwhile). fd: the file
 * open already, or -1 to open opts.kallsyms. 0, or -1 when it cannot (nothing changes). */
int sc_symbolizer_kernel_ahead(struct sc_symbolizer *s, int fd);

/* A second symbolizer with s's options and DSOs (the same ids) and none of its tables, for
 * another thread to name some DSOs with while s names others (a symbolizer is for one
 * thread at a time). 0, or SC_ENOMEM with err. */
int sc_symbolizer_twin(const struct sc_symbolizer *s, struct sc_symbolizer **out, char *err);

/* The DSO id of a mapping's path (as in /proc/PID/maps: "" for anonymous memory,
 * "[vdso]", "/memfd:x (deleted)", ...), device and inode, seen in process pid (whose
 * /proc/PID/root opens it while the process lives). Anonymous and memfd memory becomes
 * pid's JIT DSO. >= 0, or SC_ENOMEM / SC_ELIMIT (too many DSOs). */
int64_t sc_symbolizer_dso(struct sc_symbolizer *s, const char *path, size_t len, uint64_t dev,
                          uint64_t ino, int32_t pid);

/* Opens the file of a file DSO the way its symbols are read (through its process's root
 * while it lives, the inode checked), for readers of other parts of it (the unwind
 * tables). The caller closes it; -1 when it cannot be opened or dso is no file. */
int sc_symbolizer_open(struct sc_symbolizer *s, uint32_t dso);

/* A copy of the vDSO's image (the same in every process: ours), or NULL; *len its size. The
 * caller frees it. */
void *sc_symbolizer_vdso_copy(size_t *len);

struct sc_dso_info {
    enum sc_dso_kind kind;
    const char *path;     /* "[kernel.kallsyms]", "[vdso]", "[jit-1234]", a file's path */
    const char *name;     /* its last path component */
    const char *build_id; /* lower-case hex, "" when unknown (yet: known once symbolized) */
    const char *symbols;  /* "" when the file's code is named as well as it can be; else why
                             not: "no symbols, no debug file", ".dynsym only, no debug file;
                             debuginfod: not found", "cannot read the file" (valid until the
                             next call into the symbolizer) */
};
void sc_symbolizer_info(struct sc_symbolizer *s, uint32_t dso, struct sc_dso_info *out);

/* One frame; strings valid during the callback only. */
struct sc_sym_frame {
    const char *name, *file; /* name demangled (C++, Rust); file may be "" */
    const char *system_name; /* the name in the binary (mangled), or name */
    size_t name_len, file_len, system_name_len;
    int64_t line;
};
struct sc_sym {
    uint64_t address; /* the link-time address (what nm and addr2line show) */
    int found;        /* a symbol named it (else name is "[<dso name>]") */
    uint32_t nframes; /* >= 1, innermost (inlined) first */
    struct sc_sym_frame frames[SC_ELF_MAX_FRAMES];
};
typedef void (*sc_sym_cb)(void *ctx, uint32_t i, const struct sc_sym *sym);

/* Symbolizes n addresses of one DSO, calling cb(ctx, i, ...) once for each i in [0, n).
 * Loads (or reloads, for a JIT map that changed) what it needs. Never fails: what cannot
 * be named is named after its DSO. */
void sc_symbolizer_resolve(struct sc_symbolizer *s, uint32_t dso, const uint64_t *addrs, uint32_t n,
                           sc_sym_cb cb, void *ctx);

/* Takes in the debug files fetched since the last call (cheap when none is awaited) and
 * returns the symbolizer's generation: it changes when a file's symbols got better, and then
 * names resolved before may be better now (callers that keep them drop them). */
uint64_t sc_symbolizer_refresh(struct sc_symbolizer *s);

struct sc_symbolizer_stats {
    uint32_t dsos, tables, dwarfs;
    uint64_t table_bytes, dwarf_bytes;
    uint64_t loads, load_failures, evictions;
    uint64_t kernel_symbols;
    uint64_t debug_files;     /* separate debug files found on disk */
    uint64_t debuginfod_hits; /* ... and fetched from debuginfod */
    uint64_t debuginfod_failures;
};
void sc_symbolizer_stats(struct sc_symbolizer *s, struct sc_symbolizer_stats *st);

#endif
