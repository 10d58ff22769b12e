/* assets.h - the web UI's files, embedded into the binary at build time (cmake/embed.cmake). */
#ifndef SC_ASSETS_H
#define SC_ASSETS_H

#include <stddef.h>

struct sc_asset {
    const char *path; /* "/index.html" */
    const char *mime;
    const unsigned char *data;
    size_t len;
};

/* Terminated by an entry with a NULL path. */
extern const struct sc_asset sc_assets[];

#endif
