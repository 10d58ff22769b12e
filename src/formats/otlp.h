/* otlp.h - OpenTelemetry profiles (OTLP v1development export requests) into profiles. */
#ifndef SC_OTLP_H
#define SC_OTLP_H

#include <stddef.h>
#include <stdint.h>

#include "formats/input.h"
#include "model/buf.h"
#include "model/labels.h"
#include "model/profile.h"

/* An ExportProfilesServiceRequest (protobuf, or OTLP's JSON mapping: lowerCamelCase names,
 * hex ids, 64-bit integers as strings) holds ResourceProfiles -> ScopeProfiles -> Profiles
 * and one ProfilesDictionary whose tables (strings, attributes, stacks, locations,
 * functions, mappings, links) every profile indexes. sc_otlp_open checks the framing of
 * the whole request and indexes the dictionary; sc_otlp_build then makes one sc_profile
 * per OTLP Profile, one at a time, so memory is the request plus the profile being built.
 *
 * Mapping (docs/ingest.md):
 *   - labels (the series): resource attributes, then the scope's name and version
 *     (otel_scope_name, otel_scope_version) and attributes, then the profile's attributes;
 *     the first of equal names wins. Names have every character but [A-Za-z0-9_] replaced
 *     by '_' (service.name -> service_name), a leading digit gets a '_' prefix; values are
 *     strings, integers, booleans or doubles as text (arrays, maps and bytes are skipped).
 *     Without service.name: "unknown_service" (":" + process.executable.name when given).
 *   - the profile: one sample type (Profile.sample_type), period type and period, time and
 *     duration. Stacks are leaf first; a location's lines innermost (inlined) first, as in
 *     the model.
 *   - samples, in the three shapes: values only (one sample, the sum), timestamps only
 *     (one sample per timestamp, each worth 1), values paired with timestamps (one sample
 *     per pair). Timestamps are unix nanoseconds and become sc_sample.time_ns.
 *   - sample labels: the sample's attributes (strings and booleans as strings, integers
 *     as numeric labels with their unit, doubles as text) and its link, as trace_id and
 *     span_id (lower-case hex; all-zero ids are no link).
 *   - index 0 of every dictionary table means the zero value (no function, mapping, link
 *     or attribute; the empty stack, string ""), whatever the table holds there.
 *   - original_payload_format "pprof": the original_payload (gzip or not) is decoded as
 *     pprof instead, and the OTLP samples are not used.
 * An index out of range, a stack deeper than the limit, values and timestamps of different
 * lengths make that one profile fail (the others may be fine). */
struct sc_otlp_req;

/* Indexes the request in buf[0, n) (borrowed: it must outlive the request); json: the bytes
 * are OTLP JSON. Profiles built from the request point into it (and into buf): release
 * them before sc_otlp_close. 0, or SC_EFORMAT (malformed: nothing can
 * be taken from it), SC_ELIMIT, SC_ENOMEM, with detail in err. */
int sc_otlp_open(const void *buf, size_t n, int json, const struct sc_limits *lim,
                 struct sc_otlp_req **out, char *err);
void sc_otlp_close(struct sc_otlp_req *r);

/* Number of profiles in the request. */
uint32_t sc_otlp_nprofiles(const struct sc_otlp_req *r);

struct sc_otlp_profile {
    struct sc_profile *p;    /* the profile (lazy samples when decoded from pprof) */
    struct sc_labels labels; /* the series */
    int from_pprof;          /* decoded from original_payload */
};

/* Builds profile i (0-based). 0 with out filled (release it with sc_otlp_profile_release),
 * or SC_EFORMAT / SC_ELIMIT / SC_ENOMEM with the reason in err ("profile 2: ...") and out
 * empty. */
int sc_otlp_build(struct sc_otlp_req *r, uint32_t i, struct sc_otlp_profile *out, char *err);
void sc_otlp_profile_release(struct sc_otlp_profile *o);

/* Appends an ExportProfilesServiceResponse: partial_success with rejected and msg when
 * either is set, else the empty message; json: OTLP JSON, else protobuf. */
void sc_otlp_put_response(struct sc_buf *out, int json, int64_t rejected, const char *msg);

/* The OTLP Profiles development versions this decoder reads, for the
 * OTLP-Profiles-Development-Version header / otlp-profiles-development-version metadata:
 * absent means "1". 0 when v (NULL: absent) is one, else SC_EUNSUPPORTED with the reason. */
int sc_otlp_check_version(const char *v, char *err);

#endif
