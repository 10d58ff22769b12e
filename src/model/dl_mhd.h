/* dl_mhd.h - libmicrohttpd's functions scorch calls, through pointers (sc_dl_load(SC_DL_MHD)). */
#ifndef SC_DL_MHD_H
#define SC_DL_MHD_H

#include "model/dl.h"

#include <microhttpd.h>

#define SC_DL_MHD_FUNCS(X)                                                                         \
    X(MHD_start_daemon)                                                                            \
    X(MHD_stop_daemon)                                                                             \
    X(MHD_quiesce_daemon)                                                                          \
    X(MHD_get_daemon_info)                                                                         \
    X(MHD_get_connection_info)                                                                     \
    X(MHD_is_feature_supported)                                                                    \
    X(MHD_lookup_connection_value)                                                                 \
    X(MHD_create_response_from_buffer)                                                             \
    X(MHD_add_response_header)                                                                     \
    X(MHD_queue_response)                                                                          \
    X(MHD_destroy_response)                                                                        \
    X(MHD_create_post_processor)                                                                   \
    X(MHD_post_process)                                                                            \
    X(MHD_destroy_post_processor)

SC_DL_MHD_FUNCS(SC_DL_DECLARE)

#endif
