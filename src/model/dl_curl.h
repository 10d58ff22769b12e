/* dl_curl.h - libcurl's functions scorch calls, through pointers (sc_dl_load(SC_DL_CURL)). */
#ifndef SC_DL_CURL_H
#define SC_DL_CURL_H

#include "model/dl.h"

#include <curl/curl.h>

/* curl_easy_setopt, _getinfo and curl_multi_setopt are also macros of curl.h (its
 * compile-time option checks): called as sym_*, the function is what is called. */
#define SC_DL_CURL_FUNCS(X)                                                                        \
    X(curl_global_init)                                                                            \
    X(curl_easy_init)                                                                              \
    X(curl_easy_cleanup)                                                                           \
    X(curl_easy_reset)                                                                             \
    X(curl_easy_setopt)                                                                            \
    X(curl_easy_getinfo)                                                                           \
    X(curl_easy_perform)                                                                           \
    X(curl_easy_strerror)                                                                          \
    X(curl_easy_escape)                                                                            \
    X(curl_free)                                                                                   \
    X(curl_slist_append)                                                                           \
    X(curl_slist_free_all)                                                                         \
    X(curl_multi_init)                                                                             \
    X(curl_multi_cleanup)                                                                          \
    X(curl_multi_setopt)                                                                           \
    X(curl_multi_add_handle)                                                                       \
    X(curl_multi_remove_handle)                                                                    \
    X(curl_multi_assign)                                                                           \
    X(curl_multi_info_read)                                                                        \
    X(curl_multi_socket_action)

SC_DL_CURL_FUNCS(SC_DL_DECLARE)

#endif
