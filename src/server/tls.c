/* tls.c - HTTPS for the HTTP listener: a PEM certificate chain and key for libmicrohttpd's
 * GnuTLS. */
#include "server/server_int.h"
#include "model/error.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A PEM file is a few KiB; more is not one. */
#define TLS_FILE_MAX (1u << 20)

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

int sc_server_tls_load(const struct sc_server_opts *o, struct sc_server_tls *t, char *err)
{
    memset(t, 0, sizeof *t);
    if (!o->tls_cert && !o->tls_key)
        return 0;
    if (!o->tls_cert || !o->tls_key)
        return sc_errf(err, SC_EINVAL, "TLS needs both a certificate and a key");
    if (MHD_is_feature_supported(MHD_FEATURE_TLS) != MHD_YES)
        return sc_errf(err, SC_EINVAL, "this libmicrohttpd was built without TLS (GnuTLS)");
    if (!(t->cert = read_pem("certificate", o->tls_cert, err)) ||
        !(t->key = read_pem("key", o->tls_key, err))) {
        sc_server_tls_release(t);
        return SC_EINVAL;
    }
    t->opts[0] = (struct MHD_OptionItem){MHD_OPTION_HTTPS_MEM_CERT, 0, t->cert};
    t->opts[1] = (struct MHD_OptionItem){MHD_OPTION_HTTPS_MEM_KEY, 0, t->key};
    t->opts[2] = (struct MHD_OptionItem){MHD_OPTION_END, 0, NULL};
    t->on = 1;
    return 0;
}

void sc_server_tls_release(struct sc_server_tls *t)
{
    free(t->cert);
    free(t->key);
    memset(t, 0, sizeof *t);
}
