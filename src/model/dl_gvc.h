/* dl_gvc.h - graphviz's functions scorch calls, through pointers (sc_dl_load(SC_DL_GVC)). */
#ifndef SC_DL_GVC_H
#define SC_DL_GVC_H

#include "model/dl.h"

#include <gvc.h>

/* The ag* functions are libcgraph's, found through libgvc.so.6, which needs it. */
#define SC_DL_GVC_FUNCS(X)                                                                         \
    X(gvContext)                                                                                   \
    X(gvLayout)                                                                                    \
    X(gvRenderData)                                                                                \
    X(gvFreeRenderData)                                                                            \
    X(gvFreeLayout)                                                                                \
    X(agmemread)                                                                                   \
    X(agclose)                                                                                     \
    X(agseterr)                                                                                    \
    X(agseterrf)

SC_DL_GVC_FUNCS(SC_DL_DECLARE)

#endif
