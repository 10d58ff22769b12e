/* dl_gnutls.h - gnutls's functions scorch calls, through pointers (sc_dl_load(SC_DL_GNUTLS)). */
#ifndef SC_DL_GNUTLS_H
#define SC_DL_GNUTLS_H

#include "model/dl.h"

#include <gnutls/gnutls.h>

/* gnutls_transport_set_int is a macro of gnutls.h around gnutls_transport_set_int2. */
#define SC_DL_GNUTLS_FUNCS(X)                                                                      \
    X(gnutls_strerror)                                                                             \
    X(gnutls_error_is_fatal)                                                                       \
    X(gnutls_memset)                                                                               \
    X(gnutls_certificate_allocate_credentials)                                                     \
    X(gnutls_certificate_free_credentials)                                                         \
    X(gnutls_certificate_set_x509_key_mem2)                                                        \
    X(gnutls_certificate_server_set_request)                                                       \
    X(gnutls_priority_init2)                                                                       \
    X(gnutls_priority_deinit)                                                                      \
    X(gnutls_priority_set)                                                                         \
    X(gnutls_credentials_set)                                                                      \
    X(gnutls_init)                                                                                 \
    X(gnutls_deinit)                                                                               \
    X(gnutls_transport_set_int2)                                                                   \
    X(gnutls_alpn_set_protocols)                                                                   \
    X(gnutls_alpn_get_selected_protocol)                                                           \
    X(gnutls_handshake_set_post_client_hello_function)                                             \
    X(gnutls_handshake)                                                                            \
    X(gnutls_alert_send_appropriate)                                                               \
    X(gnutls_record_get_direction)                                                                 \
    X(gnutls_record_check_pending)                                                                 \
    X(gnutls_record_send)                                                                          \
    X(gnutls_record_recv)                                                                          \
    X(gnutls_bye)

SC_DL_GNUTLS_FUNCS(SC_DL_DECLARE)

#endif
