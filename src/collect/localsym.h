/* localsym.h - naming a loaded profile's addresses from the binaries on this machine, as
 * go tool pprof's own symbolizer does. */
#ifndef SC_LOCALSYM_H
#define SC_LOCALSYM_H

#include "model/profile.h"

/* For every location without lines in a mapping whose file is here (and that says it has
 * no functions yet): the function DWARF names at the address, one frame, no inlining, as
 * Debian's go tool pprof (cmd/pprof's objTool, not binutils) does: the address less
 * (mapping start - the executable segment's link address), the compilation unit and line
 * table row that hold it, and the DW_AT_name of the first subprogram (in the unit's order)
 * whose ranges hold it ("" when none has one). Addresses DWARF does not cover, and files
 * that cannot be opened, stay unnamed ("[binary]" in reports). Names are the names in the
 * binary (name = system name), which formats/names.c shortens as pprof's demangler would.
 * 0 or SC_ENOMEM / SC_ELIMIT with detail in err. */
int sc_symbolize_local(struct sc_profile *p, char *err);

#endif
