/* otlp_int.h - what otlp.c (the request index) and otlp_build.c (the profiles) share. */
#ifndef SC_OTLP_INT_H
#define SC_OTLP_INT_H

#include "formats/otlp.h"
#include "formats/protowire.h"

/* The dictionary's tables, by ProfilesDictionary field number - 1. */
enum { T_MAPPING, T_LOCATION, T_FUNCTION, T_LINK, T_STRING, T_ATTR, T_STACK, NTABLES };
/* the tables' names, for messages */
extern const char *const sc_otlp_table_names[NTABLES];

struct prof_ref {
    struct sc_pb_rd msg;
    uint32_t resource, scope; /* indexes into resources / scopes */
};

struct sc_otlp_req {
    struct sc_limits lim;
    struct sc_buf json; /* the transcoded bytes of a JSON request */
    struct sc_pb_rd *table[NTABLES];
    uint32_t ntable[NTABLES];
    struct sc_pb_rd *resources, *scopes; /* message payloads; empty when absent */
    uint32_t nresources, nscopes;
    struct prof_ref *profiles;
    uint32_t nprofiles;
};

#endif
