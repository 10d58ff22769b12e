/* speedscope.h - speedscope's JSON file format (https://www.speedscope.app), written and read. */
#ifndef SC_SPEEDSCOPE_H
#define SC_SPEEDSCOPE_H

#include "formats/limits.h"
#include "model/buf.h"
#include "model/profile.h"

/* Appends p to out as one speedscope file (schema
 * https://www.speedscope.app/file-format-schema.json):
 *
 *   $schema, exporter "scorch", name (when name is not NULL),
 *   shared.frames   one frame per distinct (function name, file name), with "file" when the
 *                   function has a file name and "line" its start line when positive (of
 *                   the first such function met, when several share name and file);
 *                   address-only frames are named "0x<hex>" as in the flame graph and carry
 *                   their mapping's file; indexes are given in order of first appearance
 *   profiles        one "sampled" profile per sample type, in the profile's order, named
 *                   "<name> (<type>)" ("<type>" without a name); activeProfileIndex = vi, so
 *                   speedscope opens on the chosen type and the others are a click away
 *
 * Each profile's samples are root-first frame lists (inlined functions expanded callers
 * first, as sc_stackwalk does) with the sample's value as weight; samples whose value is 0
 * for that type are left out. When any sample has a timestamp, samples are written in time
 * order (stable; untimed ones first) so speedscope's "Time Order" view replays them.
 * startValue is 0 and endValue the sum of the weights (int64 wrap-around, as pprof sums),
 * as speedscope itself does for pprof. unit maps the sample type's unit: nanoseconds,
 * microseconds, milliseconds, seconds and bytes (also their short forms ns, us, ms, s, B)
 * pass through, anything else ("count", ...) becomes "none". Strings are valid JSON for
 * any bytes: bytes that are not well-formed UTF-8 become U+FFFD.
 *
 * 0, SC_EINVAL (vi out of range), SC_ELIMIT (over 4 GB of frame lists) or SC_ENOMEM, with
 * detail in err. */
int sc_speedscope_write(const struct sc_profile *p, int vi, const char *name, struct sc_buf *out,
                        char *err);

/* Reads a speedscope file (speedscope_read.c), as speedscope's exporters write it (py-spy,
 * rbspy, scorch and speedscope itself): shared.frames {name, file, line, col} and profiles
 * that are "sampled" (samples: root-first frame index lists, weights) or "evented" (open
 * and close events "O" / "C" of a frame at a time "at": each stretch between two events
 * with frames open is a sample of those frames weighing its length).
 *
 * Sample types: a file scorch wrote ("exporter":"scorch") has one per profile, named as
 * sc_speedscope_write named them ("<name> (<type>)" back to "<type>"), unit "none" read as
 * "count", so convert --to speedscope and back gives the same folded stacks of every type.
 * Other files have one per unit, every profile of that unit (one per thread, as py-spy
 * writes) adding to it: "samples/count" (unit "none"), "time/nanoseconds" (seconds,
 * milliseconds, microseconds and nanoseconds, scaled) or "space/bytes". The default type
 * is that of activeProfileIndex. Weights are numbers, rounded to whole units; samples
 * carry no times (the format has none per sample).
 *
 * Model: one function per (name, file), one location per (function, line, column), as
 * the .cpuprofile reader (formats/frametab.h). buf may be freed after the call. 0 or
 * SC_EFORMAT / SC_ELIMIT / SC_ENOMEM with detail in err. */
int sc_speedscope_decode(const void *buf, size_t n, const struct sc_limits *lim,
                         struct sc_profile *p, char *err);

/* True when buf is a JSON object naming speedscope's schema, or its shared frames and
 * profiles, in its first 64 KiB. */
int sc_speedscope_detect(const void *buf, size_t n);

#endif
