/* merge.h - appending one profile to another (many inputs, one report). */
#ifndef SC_MERGE_H
#define SC_MERGE_H

#include "model/profile.h"

/* Appends every sample of src to dst, with src's functions, locations, mappings and labels
 * copied over (strings interned into dst; src may be freed afterwards). The sample types
 * must match by name and unit, in order; a dst with no sample types takes src's.
 * Profile-level fields: durations add up, the earliest time wins, the rest is kept from
 * dst. 0 or SC_E* with detail in err. */
int sc_profile_append(struct sc_profile *dst, const struct sc_profile *src, char *err);

#endif
