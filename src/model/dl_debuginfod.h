/* dl_debuginfod.h - libdebuginfod's functions scorch calls (sc_dl_load(SC_DL_DEBUGINFOD)). */
#ifndef SC_DL_DEBUGINFOD_H
#define SC_DL_DEBUGINFOD_H

#include "model/dl.h"

#include <elfutils/debuginfod.h>

#define SC_DL_DEBUGINFOD_FUNCS(X)                                                                  \
    X(debuginfod_begin)                                                                            \
    X(debuginfod_end)                                                                              \
    X(debuginfod_set_user_data)                                                                    \
    X(debuginfod_get_user_data)                                                                    \
    X(debuginfod_set_progressfn)                                                                   \
    X(debuginfod_find_debuginfo)

SC_DL_DEBUGINFOD_FUNCS(SC_DL_DECLARE)

#endif
