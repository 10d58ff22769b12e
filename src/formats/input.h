/* input.h - read a file or stdin, undo gzip, detect the format and decode into a profile. */
#ifndef SC_INPUT_H
#define SC_INPUT_H

#include <stddef.h>
#include <stdint.h>

#include "formats/format.h"
#include "formats/limits.h"
#include "model/buf.h"
#include "model/profile.h"

/* stackcollapse-perf.pl's options, which shape the frames perf script decodes into. */
struct sc_perf_opts {
    int pid, tid;      /* process frame "comm-pid" / "comm-pid/tid" */
    int kernel, jit;   /* annotate _[k] / _[j] */
    int addrs;         /* keep raw addresses of unknown symbols */
    const char *event; /* only samples of this event; NULL = the first one seen */
    int threads;       /* decoder threads; 0 = choose */
    int as_script;     /* read as stackcollapse-perf.pl reads, its misreadings of perf's
                          output included (collapse perf, the drop-in): a pid or tid "-1"
                          is no id, a one-line sample (no call chain) no sample */
};

struct sc_perf_stats;

struct sc_decode_opts {
    const struct sc_limits *limits; /* NULL = sc_limits_cli */
    struct sc_perf_opts perf;
    enum sc_format format;            /* SC_FMT_UNKNOWN = detect from content */
    int lazy_samples;                 /* pprof: SC_PPROF_LAZY[_UNLABELLED] (see pprof.h) */
    struct sc_perf_stats *perf_stats; /* perf script: what the decoder saw (NULL: not wanted) */
    int perfdata_no_local_files;      /* perf.data: name no code with this machine's files
                                         (a file from elsewhere, as pushes are) */
};

/* A whole input in memory: mmap'd for regular files, malloc'd otherwise, or borrowed from
 * a caller who keeps it alive longer than any profile decoded from it. */
enum sc_input_kind { SC_INPUT_MALLOC, SC_INPUT_MMAP, SC_INPUT_BORROWED };
struct sc_input {
    void *data;
    size_t len;
    enum sc_input_kind kind;
};

/* Reads path ("-" or NULL = stdin) whole, refusing more than max bytes.
 * Release with sc_input_release(). 0 or SC_E* with "cannot read 'x': why" in err. */
int sc_input_read(const char *path, uint64_t max, struct sc_input *in, char *err);
void sc_input_release(struct sc_input *in);

/* True when buf starts with the gzip magic. */
int sc_is_gzip(const void *buf, size_t n);

/* The plain size gzip data's trailer claims (ISIZE: the last member's length mod 2^32) when
 * DEFLATE could make it of these n bytes (at most 1,032 times them), else 0 (no trailer, a
 * zero or an impossible one). A hint: a multi-member file's trailer tells only its last
 * member, and nothing stops a trailer from lying. */
uint64_t sc_gzip_claim(const void *buf, size_t n);

/* Inflates every gzip member of in into a new malloc'd buffer (freed by the caller),
 * refusing more than max_out bytes. 0, SC_EFORMAT / SC_ENOMEM, or SC_ELIMIT, which means
 * exactly that the output would pass max_out (nothing else is SC_ELIMIT here). */
int sc_gunzip(const void *in, size_t n, uint64_t max_out, void **out, size_t *outlen, char *err);

/* Appends the gzip of in to out (level 1..12, libdeflate's scale). 0 or SC_ENOMEM. */
int sc_gzip(const void *in, size_t n, int level, struct sc_buf *out);

/* Guesses the format of (decompressed) bytes: the first row of the format table
 * (format.h) whose detect says so. Go's legacy text profiles (debug=1) are
 * SC_FMT_LEGACY, not folded stacks. Defined in format.c. */
enum sc_format sc_detect_format(const void *buf, size_t n);

/* Decodes in (gzip or not) into a new profile, consuming in: the profile adopts the bytes
 * its strings point into (zero-copy) and everything else is released, success or not.
 * 0 or SC_E* with detail in err. The caller frees *out with sc_profile_free(). */
int sc_decode(struct sc_input *in, const struct sc_decode_opts *o, struct sc_profile **out,
              char *err);

/* How sc_load names the addresses of a legacy or pprof profile (locations without lines in
 * mappings of the binaries that ran, which say they have no functions), as go tool pprof
 * symbolizes with the binaries on the machine.
 * Set once by the program before it reads files (the CLI sets collect's); unset, the
 * addresses stay unnamed (pprof's "[binary]"). 0 or SC_E* with detail in err. */
typedef int (*sc_symbolize_fn)(struct sc_profile *p, char *err);
void sc_input_set_symbolizer(sc_symbolize_fn fn);

/* The one way a command reads an input file: sc_input_read + sc_decode, refusing what
 * go tool pprof refuses too: an empty input (unless o->format names the format: an empty
 * perf script is one without samples) and a profile without sample types. Every error,
 * also that of a malformed sample a lazy profile meets on a later walk, reads
 * "cannot read 'path': why" (path "-" for stdin). */
int sc_load(const char *path, const struct sc_decode_opts *o, struct sc_profile **out, char *err);

#endif
