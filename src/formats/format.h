/* format.h - the one list of the profile formats scorch reads: names, detection, decoders.
 *
 * ADDING A FORMAT: one enum value below, one row in the table in format.c, and the decoder
 * in its own file (src/formats/<name>.c/.h, picked up by CMake's glob). A row is
 *
 *   {SC_FMT_X, "x", {"x", "alias", NULL}, "x text", detect_x, decode_x},
 *
 *   id      the enum value (rows may come in any order of ids)
 *   name    the canonical name: what messages print and the first /ingest name
 *   ingest  the /ingest `format=` values (and `scorch ingest --format`) that select the
 *           row, NULL-terminated; { NULL } = not accepted by /ingest
 *   desc    a few words for "expected pprof, folded stacks or ..." messages
 *   detect  int (const void *buf, size_t n): true when the (decompressed) bytes are surely
 *           this format; NULL = never detected, only named. Rows are tried in table order
 *           and the first true one wins, so a cheap, strict predicate goes before loose
 *           ones (the text heuristics of perf script and folded stacks come last). It sees
 *           the whole input but should look at no more than its first few KiB.
 *   decode  int (const void *buf, size_t n, const struct sc_decode_opts *o,
 *                const struct sc_limits *lim, struct sc_profile *p, char *err):
 *           fills the fresh profile p, which owns buf already (strings may point into it,
 *           zero-copy); 0 or SC_E* with detail in err. Bounded by lim; bad input is an
 *           error, never a crash.
 *
 * Everything else comes from the table: sc_detect_format() and sc_decode() (input.c), the
 * /ingest `format` check and its error message (ingest.c), `scorch ingest --format` and its
 * help (cmd_ingest.c). */
#ifndef SC_FORMAT_H
#define SC_FORMAT_H

#include <stddef.h>

#include "formats/limits.h"
#include "model/profile.h"

enum sc_format {
    SC_FMT_UNKNOWN = 0,
    SC_FMT_PPROF,
    SC_FMT_FOLDED,
    SC_FMT_PERF,
    SC_FMT_CPUPROFILE,
    SC_FMT_SPEEDSCOPE,
    SC_FMT_PERFDATA,
    SC_FMT_JFR,
    SC_FMT_LEGACY, /* gperftools' CPU profile, legacy text profiles (legacy.h) */
};

struct sc_decode_opts;

typedef int (*sc_format_detect_fn)(const void *buf, size_t n);
typedef int (*sc_format_decode_fn)(const void *buf, size_t n, const struct sc_decode_opts *o,
                                   const struct sc_limits *lim, struct sc_profile *p, char *err);

struct sc_format_def {
    enum sc_format id;
    const char *name;
    const char *ingest[4];
    const char *desc;
    sc_format_detect_fn detect;
    sc_format_decode_fn decode;
};

/* The table, in detection order, and its length. */
extern const struct sc_format_def sc_formats[];
extern const size_t sc_nformats;

/* The row of f, or NULL for SC_FMT_UNKNOWN. */
const struct sc_format_def *sc_format_get(enum sc_format f);

/* The row whose ingest names include name (exact, case-sensitive), or NULL. */
const struct sc_format_def *sc_format_by_ingest_name(const char *name);

/* The canonical name of f; "unknown" for SC_FMT_UNKNOWN. */
const char *sc_format_name(enum sc_format f);

/* Lists for messages and help, written into buf (cap bytes, always terminated):
 * SC_FMT_LIST_INGEST every /ingest name, "pprof, folded, lines, perf_script";
 * SC_FMT_LIST_DESC the descriptions of the detected formats, "pprof, folded stacks or
 * perf script". Returns buf. */
enum sc_format_list { SC_FMT_LIST_INGEST, SC_FMT_LIST_DESC };
const char *sc_format_list(enum sc_format_list what, char *buf, size_t cap);

/* The error for bytes no row detects: SC_EFORMAT, "unrecognized format (expected pprof,
 * ...)". */
int sc_format_refuse(const void *buf, size_t n, char *err);

#endif
