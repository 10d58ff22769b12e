/* tls.c - the server's TLS: one PEM certificate chain and key, read and checked once at
 * start, served by the HTTP listener (libmicrohttpd's GnuTLS) and the OTLP/gRPC one (GnuTLS
 * sessions of its own, grpc.c). */
#include "server/server_int.h"
#include "model/error.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A PEM file is a few KiB; more is not one. */
#define TLS_FILE_MAX (1u << 20)
/* HTTP/2 over TLS (RFC 9113 9.2): TLS 1.2 or later and, for 1.2, only ephemeral key exchange
 * with AEAD ciphers; appended to GnuTLS's default priorities (the system's policy). */
#define TLS_PRIORITY                                                                               \
    "-VERS-TLS1.0:-VERS-TLS1.1:-RSA:-CIPHER-ALL:+CHACHA20-POLY1305:+AES-256-GCM:+AES-128-GCM"

/* The whole of a PEM file, NUL-terminated as GnuTLS wants it, or NULL with err set. */
static char *read_pem(const char *what, const char *path, char *err)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        sc_errf(err, SC_ENOTFOUND, "cannot read TLS %s '%s': %s", what, path, strerror(errno));
        return NULL;
    }
    struct sc_buf b = SC_BUF_INIT;
    char chunk[16384];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0 && b.len <= TLS_FILE_MAX)
        sc_buf_append(&b, chunk, n);
    int bad = ferror(f);
    fclose(f);
    sc_buf_putc(&b, 0);
    if (b.oom || bad || b.len > TLS_FILE_MAX) {
        sc_errf(err, b.oom ? SC_ENOMEM : SC_EINVAL, "cannot read TLS %s '%s': %s", what, path,
                b.oom ? "out of memory"
                : bad ? "read error"
                      : "larger than 1 MiB");
        sc_buf_release(&b);
        return NULL;
    }
    if (!strstr(b.data, "-----BEGIN ")) {
        sc_errf(err, SC_EINVAL, "TLS %s '%s' is not PEM (no -----BEGIN line)", what, path);
        sc_buf_release(&b);
        return NULL;
    }
    return sc_buf_detach(&b, &n);
}

/* GnuTLS's credentials and priorities from the PEM text read into t; 0 or SC_E*. */
static int tls_credentials(const struct sc_server_opts *o, struct sc_server_tls *t, char *err)
{
    if (sym_gnutls_certificate_allocate_credentials(&t->cred) < 0) {
        t->cred = NULL;
        return sc_errf(err, SC_ENOMEM, "out of memory");
    }
    gnutls_datum_t cert = {(unsigned char *)t->cert, (unsigned)strlen(t->cert)};
    gnutls_datum_t key = {(unsigned char *)t->key, (unsigned)strlen(t->key)};
    int rc = sym_gnutls_certificate_set_x509_key_mem2(t->cred, &cert, &key, GNUTLS_X509_FMT_PEM,
                                                      NULL, 0);
    if (rc == GNUTLS_E_CERTIFICATE_KEY_MISMATCH)
        return sc_errf(err, SC_EINVAL, "TLS key '%s' is not the key of certificate '%s'",
                       o->tls_key, o->tls_cert);
    if (rc < 0)
        return sc_errf(err, SC_EINVAL, "TLS certificate '%s' with key '%s': %s", o->tls_cert,
                       o->tls_key, sym_gnutls_strerror(rc));
    const char *at = NULL;
    rc = sym_gnutls_priority_init2(&t->prio, TLS_PRIORITY, &at, GNUTLS_PRIORITY_INIT_DEF_APPEND);
    if (rc < 0) {
        t->prio = NULL;
        return sc_errf(err, SC_EINVAL, "GnuTLS refused the priorities at '%s': %s", at ? at : "",
                       sym_gnutls_strerror(rc));
    }
    return 0;
}

int sc_server_tls_load(const struct sc_server_opts *o, struct sc_server_tls *t, char *err)
{
    memset(t, 0, sizeof *t);
    if (!o->tls_cert && !o->tls_key)
        return 0;
    if (!o->tls_cert || !o->tls_key)
        return sc_errf(err, SC_EINVAL, "TLS needs both a certificate and a key");
    if (sym_MHD_is_feature_supported(MHD_FEATURE_TLS) != MHD_YES)
        return sc_errf(err, SC_EINVAL, "this libmicrohttpd was built without TLS (GnuTLS)");
    /* GnuTLS itself, for the credentials here and grpc.c's sessions (libmicrohttpd has its
     * own reference to the same library) */
    int rc = sc_dl_load(SC_DL_GNUTLS, err);
    if (rc)
        return rc;
    if (!(t->cert = read_pem("certificate", o->tls_cert, err)) ||
        !(t->key = read_pem("key", o->tls_key, err)))
        rc = SC_EINVAL;
    if (!rc)
        rc = tls_credentials(o, t, err);
    if (rc) {
        sc_server_tls_release(t);
        return rc;
    }
    t->opts[0] = (struct MHD_OptionItem){MHD_OPTION_HTTPS_MEM_CERT, 0, t->cert};
    t->opts[1] = (struct MHD_OptionItem){MHD_OPTION_HTTPS_MEM_KEY, 0, t->key};
    t->opts[2] = (struct MHD_OptionItem){MHD_OPTION_END, 0, NULL};
    t->on = 1;
    return 0;
}

int sc_server_tls_session(const struct sc_server_tls *t, int fd, gnutls_session_t *out)
{
    /* no TLS 1.3 tickets: without a key shared by the sessions none could be resumed */
    if (sym_gnutls_init(out, GNUTLS_SERVER | GNUTLS_NO_TICKETS) < 0) {
        *out = NULL;
        return SC_ENOMEM;
    }
    if (sym_gnutls_priority_set(*out, t->prio) < 0 ||
        sym_gnutls_credentials_set(*out, GNUTLS_CRD_CERTIFICATE, t->cred) < 0) {
        sym_gnutls_deinit(*out);
        *out = NULL;
        return SC_ENOMEM;
    }
    sym_gnutls_certificate_server_set_request(*out, GNUTLS_CERT_IGNORE);
    sym_gnutls_transport_set_int2(*out, fd, fd); /* gnutls_transport_set_int, a macro */
    return 0;
}

void sc_server_tls_release(struct sc_server_tls *t)
{
    if (t->prio)
        sym_gnutls_priority_deinit(t->prio);
    if (t->cred)
        sym_gnutls_certificate_free_credentials(t->cred);
    free(t->cert);
    if (t->key) /* the private key: not left in freed memory */
        sym_gnutls_memset(t->key, 0, strlen(t->key));
    free(t->key);
    memset(t, 0, sizeof *t);
}
