/* speedscope.h - speedscope's JSON file format (https://www.speedscope.app), written. */
#ifndef SC_SPEEDSCOPE_H
#define SC_SPEEDSCOPE_H

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

#endif
