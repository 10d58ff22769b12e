/* source.h - per-line flat/cum of a function with its source text, like `go tool pprof -list`. */
#ifndef SC_SOURCE_H
#define SC_SOURCE_H

#include <stdint.h>

#include "model/arena.h"
#include "model/buf.h"
#include "model/profile.h"

/* Semantics are pprof's "lines" granularity. A routine is one function name in one source
 * file. For each source line of it:
 *   flat = value of samples whose innermost frame (inlined frames included) is the
 *          function at that line;
 *   cum  = value of samples with the function at that line anywhere on the stack, counted
 *          once per sample per line (a recursive call at two lines counts at both).
 * A routine's flat is the sum of its lines' flat; its cum counts each sample once; its
 * lines_cum is the sum of its lines' cum (pprof's "ROUTINE" header shows that one).
 *
 * File names are shown as pprof shows them: trimmed (see trim below) and cleaned
 * ("a/./b/../c.go" -> "a/c.go"). Source text is read when the file can be found:
 *   1. the name with the first matching prefix of `trim` removed; without trim prefixes,
 *      everything up to "/<base name of a root>/" is removed (pprof's guess), and
 *      "/proc/self/cwd/" always goes;
 *   2. an absolute name is read as it is when allow_absolute is set;
 *   3. a relative name is looked up under each root (and, with search_parents, under each
 *      root's parent directories, as pprof does);
 *   4. failing that, the name's shorter suffixes ("x/y/z.go" -> "y/z.go" -> "z.go") are
 *      looked up under each root, longest first, so build paths from another machine
 *      still find a checked-out tree.
 * Unless allow_absolute is set, a file is only read when its real path lies under a root's
 * real path (no "..", no symlink escapes): a server that reads files named by uploaded
 * profiles must not read anything else. When the text is found, the lines shown are
 * pprof's window: from the function's start line (or 5 lines before the first sampled
 * line) to 5 lines after the last sampled line, stopping at the end of the file. When it
 * is not found, the lines that have samples are still returned, without text. */

struct sc_source_opts {
    const char *function;     /* select the function with exactly this name, or */
    const char *regex;        /* every function whose name matches (PCRE2, unanchored) */
    const char *const *roots; /* directories where source files are looked up */
    uint32_t nroots;
    const char *const *trim; /* path prefixes removed first (pprof's -trim_path) */
    uint32_t ntrim;
    int allow_absolute;      /* read absolute file names directly (the CLI; not a server) */
    int search_parents;      /* also look under the roots' parent directories (the CLI) */
    uint32_t max_functions;  /* routines returned at most; 0 = all (then `truncated`) */
    uint64_t max_file_bytes; /* larger source files are not read; 0 = 32 MiB */
};

struct sc_source_line {
    int64_t line;
    int64_t flat, cum;
    struct sc_str text; /* the source line without its newline; ptr NULL when not read */
};

struct sc_source_routine {
    struct sc_str name; /* the function's name */
    struct sc_str file; /* as shown: trimmed and cleaned; empty when the profile has none */
    int64_t start_line; /* the function's first line from the profile, 0 = unknown */
    int64_t flat, cum, lines_cum;
    int has_text;                 /* the source file was read */
    const char *error;            /* why it was not, e.g. "could not find file x.go on path /src" */
    struct sc_source_line *lines; /* ascending line numbers */
    uint32_t nlines;
};

struct sc_source {
    struct sc_source_routine *routines; /* by name, then file (pprof's order) */
    uint32_t n;
    int truncated; /* more routines matched than max_functions */
    int64_t total; /* sum of |value| over samples, the report's total */
    struct sc_arena arena;
};

/* Computes the listing of p's value column vi. SC_EINVAL for a bad regex or neither
 * function nor regex set, SC_ENOTFOUND when no function with samples matches (detail in
 * err, e.g. "no function matches 'x'"). Release s with sc_source_release() even on
 * failure. */
int sc_source_compute(const struct sc_profile *p, int vi, const struct sc_source_opts *o,
                      struct sc_source *s, char *err);
void sc_source_release(struct sc_source *s);

/* Text like `go tool pprof -list`: "Total: ...", then per routine
 * "ROUTINE ======================== <name> in <file>", the flat/cum totals and one line
 * per source line ("%10s %10s %6d:<text>", "." for zero), values each in their own best
 * unit. When the text was not found, pprof's " Error: ..." line follows the header, and
 * then (unlike pprof) the lines with samples, without text. */
void sc_source_write_text(const struct sc_profile *p, int vi, const struct sc_source *s,
                          struct sc_buf *out);

/* JSON, documented in docs/api-source.md:
 * {"sample_type":"cpu","unit":"nanoseconds","total":N,"truncated":false,
 *  "functions":[{"name":"sort.insertionSort","file":"sort/zsortinterface.go",
 *    "start_line":0,"flat":F,"cum":C,"lines_cum":L,"source":true,
 *    "lines":[{"line":12,"flat":490000000,"cum":720000000,"text":"..."}, ...]},
 *   {..., "source":false,"error":"could not find file ...","lines":[{"line":..,"flat":..,
 *    "cum":..}]}]}
 * Values are exact integers in the sample type's unit. */
void sc_source_write_json(const struct sc_profile *p, int vi, const struct sc_source *s,
                          struct sc_buf *out);

#endif
