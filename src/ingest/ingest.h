/* ingest.h - the one write path: a pushed, scraped or uploaded profile into the store. */
#ifndef SC_INGEST_H
#define SC_INGEST_H

#include <stddef.h>
#include <stdint.h>

#include "formats/input.h"
#include "model/error.h"
#include "model/labels.h"
#include "store/store.h"

/* A push in Pyroscope's protocol (POST /ingest), already taken apart by the HTTP layer.
 * Strings may be NULL for "absent". Semantics follow Pyroscope's server:
 *
 *   name       "app.cpu{env=prod,region=eu}": app becomes the label service_name, the
 *              braces' pairs become labels (names may contain dots: otel.scope.name), and a
 *              known last dotted part of app (cpu, wall, itimer, alloc_objects, alloc_space,
 *              inuse_objects, inuse_space, goroutines, mutex_count, mutex_duration,
 *              block_count, block_duration) names the profile type and is dropped from
 *              service_name
 *   from/until unix seconds (or ms/ns by magnitude); the profile's time and duration
 *   format     pprof, folded (default), lines (one stack per line, count 1), perf_script,
 *              cpuprofile, speedscope, jfr: the /ingest names of formats/format.h's table
 *              (jfr, a Java Flight Recorder recording, is one profile per kind: see below)
 *   sampleRate Hz (default 100): folded/lines CPU counts become nanoseconds too
 *   spyName    kept as the label spy_name
 *   units      samples (default), objects, bytes, goroutines, ... for folded/lines
 *   aggregationType  sum (default) or average (a gauge)
 *
 * Multipart pushes (Go clients) may add a sample_type_config part, JSON like
 * {"delay": {"display-name": "block_duration", "units": "lock_nanoseconds"}}: a display
 * name that is a known suffix names the profile (block and mutex pprofs look alike
 * otherwise). A prev_profile part (old clients' cumulative profiles, which the server would
 * have to subtract) is refused with SC_EUNSUPPORTED, as Pyroscope does.
 *
 * The profile name stored is the name's suffix when known, else the sample_type_config's,
 * else derived from a pprof's sample and period types (alloc_* without inuse_* -> allocs;
 * cpu, wall, space -> heap, contentions -> mutex, goroutine, threadcreate), else "profile";
 * folded/lines samples are "cpu" unless the suffix or units say otherwise.
 *
 * JFR (Pyroscope's Java agent): the body, or a multipart `jfr` part, is the recording
 * (gzip or not); a `labels` part (Pyroscope's LabelsSnapshot protobuf, gzip or not) names
 * the context labels its samples carry. Each kind of sample in it is stored as a profile of
 * its own (formats/jfr.h: cpu, wall, heap, mutex, block) under the name's series labels; a
 * name's suffix is dropped from service_name but names nothing. sampleRate, when given, is
 * what a CPU or wall sample is worth (1/sampleRate s), else the recording's own period. */
struct sc_ingest_req {
    const char *tenant;
    const char *name;
    const char *from, *until;
    const char *format;
    const char *sample_rate;
    const char *spy_name;
    const char *units;
    const char *aggregation;
    const void *body; /* the profile (gzip or not); borrowed */
    size_t len;
    uint64_t gzip_claim; /* a gzip body inflates to no more (sc_ingest_inflate); 0: the limit */
    const char *sample_type_config; /* multipart part (JSON), may be NULL; borrowed */
    size_t sample_type_config_len;
    size_t prev_profile_len; /* size of a multipart prev_profile part (0: none) */
    const void *jfr_labels;  /* format jfr: the multipart labels part, may be NULL; borrowed */
    size_t jfr_labels_len;
    const char *profile_name; /* overrides the derived profile name (scraper, uploads) */
    const struct sc_labels *extra_labels; /* added to the name's labels (scraper); may be NULL */
};

struct sc_ingest_result {
    uint32_t samples;  /* samples stored */
    char profile[64];  /* the profile name used */
    char service[256]; /* service_name */
    uint32_t series;   /* series written: more than 1 when samples had labels */
    char dropped[256]; /* sample label names not made series labels (split.h) */
    int over_claim;    /* the gzip body inflated past r->gzip_claim: nothing decoded */
};

/* A profile's samples make at most this many series by their labels (split.h). */
#define SC_INGEST_MAX_SPLIT 256

/* Decodes and stores one push. lim bounds the body (size, decompressed size, counts).
 * 0, or SC_EINVAL (bad parameters: 400), SC_EFORMAT (bad body: 400), SC_ELIMIT (413/400),
 * SC_EUNSUPPORTED (format: 415) or a store error, with a one-line reason in err; or
 * SC_ELIMIT with res->over_claim set (sc_ingest_inflate: call again unclaimed). */
int sc_ingest(struct sc_store *s, const struct sc_ingest_req *r, const struct sc_limits *lim,
              struct sc_ingest_result *res, char *err);

/* The pushed body *body of *len bytes, checked against lim->max_input and inflated when it
 * is gzip (no profile format starts with gzip's magic: in protobuf 0x1f would be field 3 of
 * wire type 7); then *body and *len are the plain bytes and *plain what the caller frees
 * (NULL when not gzip; on an error nothing changes but *over_claim). claim, when less than
 * lim->max_decompressed, bounds inflation instead: the server admitted the body at the
 * size its trailer claims (sc_gzip_claim), and a body that inflates past it (a
 * multi-member file, a lie) fails with SC_ELIMIT and *over_claim = 1 before anything is
 * decoded, to be measured and admitted again. Only the body's own gzip is held to it:
 * nested payloads (Connect's pprofs, OTLP's JSON) keep lim's. 0 or SC_ELIMIT / SC_EFORMAT
 * / SC_ENOMEM. */
int sc_ingest_inflate(const void **body, size_t *len, uint64_t claim, const struct sc_limits *lim,
                      void **plain, int *over_claim, char *err);

/* One decoded profile of any source (a push, OTLP, Connect, the scraper) to store under a
 * series: what every way in shares. */
struct sc_ingest_item {
    const char *tenant;
    const struct sc_labels *labels; /* the series */
    const char *profile;            /* NULL: sc_ingest_profile_name(p), else "profile" */
    const struct sc_profile *p;     /* samples may be lazy */
    int64_t time_ns, duration_ns;   /* 0: the profile's own (time: else now) */
    int64_t time_shift_ns;          /* added to sample timestamps (whole seconds) */
    const struct sc_limits *lim;    /* the window stored times must lie in; NULL: none */
};

/* Checks the series labels (at most 48, names [A-Za-z_][A-Za-z0-9_.-]* of at most 256 bytes,
 * values of at most 1024), the times (sc_ingest_check_times) and the profile (not empty),
 * then writes it durably: when this returns 0 the profile survives a crash. 0 or SC_EINVAL /
 * SC_ELIMIT / SC_EFORMAT / a store error, with the reason in err. */
int sc_ingest_store(struct sc_store *s, const struct sc_ingest_item *it,
                    struct sc_ingest_result *res, char *err);

/* The time checks of sc_ingest_store alone: the profile's start and end (the item's or the
 * profile's own; none: now) and each stored sample timestamp lie in it->lim's window
 * around now_ns (formats/limits.h max_age, max_ahead). 0 or SC_EINVAL naming the time. */
int sc_ingest_check_times(const struct sc_ingest_item *it, int64_t now_ns, char *err);

/* The label checks of sc_ingest_store alone. 0 or SC_EINVAL / SC_ELIMIT. */
int sc_ingest_check_labels(const struct sc_labels *l, char *err);

/* The profile name a decoded profile describes itself as, from its period and sample types
 * (cpu, wall, heap, allocs, goroutine, threadcreate, mutex), or NULL. */
const char *sc_ingest_profile_name(const struct sc_profile *p);

/* Parses a Pyroscope name into labels (service_name and the braces' pairs; labels must be
 * initialised and empty) and the known suffix, copied into suffix (at least 32 bytes; ""
 * when none). 0 or SC_EINVAL / SC_ELIMIT with a reason. */
int sc_ingest_parse_name(const char *name, struct sc_labels *labels, uint32_t max, char *suffix,
                         char *err);

/* A JFR push once sc_ingest has parsed its parameters: the plain recording and labels
 * part, the series labels, the push's times (0: the recording's) and sampleRate's period
 * (0: the recording's). */
struct sc_ingest_jfr_req {
    const char *tenant;
    const struct sc_labels *labels_of_series;
    const void *body;
    size_t len;
    const void *labels;
    size_t labels_len;
    int64_t from, until, period_ns;
};

/* Decodes the recording and stores each kind's profile (ingest_jfr.c). Every kind is
 * decoded and checked before the first is stored. res->profile lists the profiles stored
 * ("cpu,heap"), samples and series are the sums. 0 or SC_E* with the reason in err. */
int sc_ingest_jfr(struct sc_store *s, const struct sc_ingest_jfr_req *q,
                  const struct sc_limits *lim, struct sc_ingest_result *res, char *err);

/* ---- OTLP and Pyroscope's Connect push (ingest_otlp.c, ingest_push.c) ---- */

struct sc_ingest_batch {
    uint32_t stored;         /* profiles stored */
    uint32_t rejected;       /* profiles refused (OTLP's partial success) */
    uint64_t samples;        /* samples stored */
    char reason[SC_ERR_LEN]; /* why profiles were refused: the first reason, and how many */
    int over_claim;          /* the gzip body inflated past gzip_claim: nothing stored */
};

/* An OTLP ExportProfilesServiceRequest (formats/otlp.h; gzip or not, json: OTLP JSON): every
 * profile that decodes is stored through sc_ingest_store; a profile that does not is
 * counted in res->rejected with the reason (partial success). Returns 0 once every good
 * profile is stored (durably), or an error for the request as a whole: SC_EFORMAT (not an
 * OTLP request: nothing stored), SC_ELIMIT (res->over_claim: past gzip_claim, nothing
 * stored; see sc_ingest_inflate), or a store error (profiles before it may be stored). */
int sc_ingest_otlp(struct sc_store *s, const char *tenant, const void *body, size_t len,
                   uint64_t gzip_claim, int json, const struct sc_limits *lim,
                   struct sc_ingest_batch *res, char *err);

/* A push.v1.PushRequest (formats/push.h; gzip or not, json: Connect's JSON): each series'
 * labels (names starting with "__" are Pyroscope's private ones and dropped; __name__
 * names the profile: process_cpu -> cpu, memory -> heap, ..., else the pprof decides) with
 * every raw pprof of its samples. All of it is decoded and checked before anything is
 * stored, so a refused request stored nothing. 0, or SC_EINVAL / SC_EFORMAT / SC_ELIMIT
 * (res->over_claim: past gzip_claim, as in sc_ingest_otlp) / a store error with the reason
 * in err. */
int sc_ingest_push(struct sc_store *s, const char *tenant, const void *body, size_t len,
                   uint64_t gzip_claim, int json, const struct sc_limits *lim,
                   struct sc_ingest_batch *res, char *err);

#endif
