/* limits.h - what one input may be: sizes, counts, string lengths, depth, labels, times. */
#ifndef SC_LIMITS_H
#define SC_LIMITS_H

#include <stddef.h>
#include <stdint.h>

/* Per-input limits, decided here once for every way in (pprof, folded, lines, perf script,
 * OTLP, Pyroscope's Connect push, the scraper, the CLI's files). Decoders check them
 * before allocating, so hostile input fails with SC_ELIMIT (413 over HTTP) naming the
 * limit instead of exhausting memory; sc_ingest_store checks the times. Messages name a
 * limit by its key in the server config's `limits:` section (limits.max_string), which
 * overrides sc_limits_server (the server caps max_age at the retention); series labels
 * have their own fixed rules (model/labels.h). */
struct sc_limits {
    uint64_t max_input;        /* bytes read from a file, stdin or a request body */
    uint64_t max_decompressed; /* bytes after gunzip */
    uint32_t max_samples;      /* limits.max_samples: samples (folded, lines: stack lines) */
    uint32_t max_locations;
    uint32_t max_functions;
    uint32_t max_mappings;
    uint32_t max_strings;
    uint32_t max_string;      /* limits.max_string: bytes in one string (function, file,
                                 mapping and symbol names, label keys and values, frames) */
    uint32_t max_stack_depth; /* limits.max_stack_depth: frames of one sample, each inlined
                                 line a frame (a location with n lines is n frames) */
    uint32_t max_labels;      /* limits.max_labels: labels of one sample */
    /* limits.max_age / limits.max_ahead: stored times (a profile's start and end, each
     * sample's timestamp) lie in [now - max_age, now + max_ahead]; 0: unbounded. The
     * server's max_age is at most its retention (older data would be deleted at once). */
    int64_t max_age_ns, max_ahead_ns;
};

/* The CLI's limits: a user's own files, generous but bounded (64 GiB inputs, 1 MiB
 * strings, 2^20 frames a sample; times unbounded, nothing is stored). */
extern const struct sc_limits sc_limits_cli;

/* The server's defaults for pushes (64 MiB bodies and decompressed, 2^20 samples, 64 KiB
 * strings, 4,096 frames a sample, 64 labels a sample, times from 30 days before now to
 * one hour after). */
extern const struct sc_limits sc_limits_server;

/* The scraper's: the server's, with room for the larger profiles a scrape may fetch. */
extern const struct sc_limits sc_limits_scrape;

/* Copies each non-zero field of over into lim (a config's overrides). */
void sc_limits_override(struct sc_limits *lim, const struct sc_limits *over);

/* 0 when a string of len bytes fits, else SC_ELIMIT with "<what> of N bytes is longer
 * than the limit of M (limits.max_string)" in err. */
int sc_limits_string(const struct sc_limits *lim, size_t len, const char *what, char *err);

/* 0 when a sample of frames frames fits, else SC_ELIMIT naming what and the limit. */
int sc_limits_depth(const struct sc_limits *lim, uint64_t frames, const char *what, char *err);

/* 0 when a location of lines lines (each inlined line a frame of every sample on it) fits
 * the depth limit, else SC_ELIMIT naming location id. */
int sc_limits_lines(const struct sc_limits *lim, uint64_t id, uint64_t lines, char *err);

/* 0 when time t (unix ns) lies in the window around now_ns, else SC_EINVAL with
 * "<what> 2500-01-01T00:00:00Z is more than 1h ahead of now (limits.max_ahead)". Checked
 * arithmetic: the window saturates, it never wraps. */
int sc_limits_time(const struct sc_limits *lim, int64_t now_ns, int64_t t, const char *what,
                   char *err);

#endif
