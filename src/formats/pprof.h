/* pprof.h - profile.proto on the protobuf wire format, decoded and encoded by hand. */
#ifndef SC_PPROF_H
#define SC_PPROF_H

#include <stddef.h>
#include <stdint.h>

#include "formats/input.h"
#include "model/buf.h"
#include "model/profile.h"

/* Decodes an uncompressed profile.proto message into p (a fresh sc_profile_new()).
 * Zero-copy: p's strings point into buf, which must live as long as p (sc_decode() makes
 * p adopt it). Accepts packed and unpacked repeated scalars, unknown fields, sparse ids,
 * fields in any order. Enforces lim before allocating. A sample's numeric label
 * "timestamp_ns" or "end_timestamp_ns" becomes its time_ns (and is not kept as a label).
 * 0 or SC_EFORMAT / SC_ELIMIT / SC_ENOMEM with detail in err. */
int sc_pprof_decode(const void *buf, size_t n, const struct sc_limits *lim, struct sc_profile *p,
                    char *err);

/* Like sc_pprof_decode() but leaves the samples in buf: p->nsamples stays 0 and p->lazy
 * decodes them on each sc_profile_foreach_sample() walk (without labels), so memory is
 * O(input) rather than O(samples). Malformed samples surface as errors of the walk. For
 * one-pass reports over big profiles (`scorch top`). A profile whose samples carry
 * timestamps (its string table holds a timestamp label key) is decoded as by
 * sc_pprof_decode instead, since walks carry no times. */
int sc_pprof_decode_lazy(const void *buf, size_t n, const struct sc_limits *lim,
                         struct sc_profile *p, char *err);

/* How lazy a decode may be: SC_PPROF_LAZY as sc_pprof_decode_lazy(); SC_PPROF_LAZY_UNLABELLED
 * only when no sample has a string label (labels split a pushed profile into series, see
 * ingest/split.h, and a lazy walk carries none); 0 decodes everything. */
enum { SC_PPROF_LAZY = 1, SC_PPROF_LAZY_UNLABELLED = 2 };
int sc_pprof_decode_mode(const void *buf, size_t n, const struct sc_limits *lim, int lazy,
                         struct sc_profile *p, char *err);

/* Names the input a lazy profile (sc_pprof_decode_lazy) was decoded from: a walk that meets
 * a malformed sample then says "cannot read 'name': ...", as the decode would have. Does
 * nothing to other profiles. 0 or SC_ENOMEM. */
int sc_pprof_name_input(struct sc_profile *p, const char *name);

/* Appends p as an uncompressed profile.proto message to out. Location, function and
 * mapping ids are written as index + 1. A sample with a time_ns gets the numeric label
 * timestamp_ns = time_ns (num_unit "nanoseconds"; both strings are appended to the string
 * table when it lacks them). 0 or SC_ENOMEM. */
int sc_pprof_encode(const struct sc_profile *p, struct sc_buf *out);

/* Cheap check used by format detection: does buf parse as a sequence of well-formed
 * top-level profile.proto fields, ending exactly at n? */
int sc_pprof_looks_valid(const void *buf, size_t n);

#endif
