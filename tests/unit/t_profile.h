/* t_profile.h - what the format readers' tests share: a JSON text decoded into a profile,
 * and a profile's folded lines to compare. Header-only. */
#ifndef T_PROFILE_H
#define T_PROFILE_H

#include <string.h>

#include "formats/folded.h"
#include "formats/input.h"
#include "model/buf.h"
#include "model/error.h"
#include "model/profile.h"

/* A reader's signature (sc_cpuprofile_decode, sc_speedscope_decode). */
typedef int (*t_decode_fn)(const void *buf, size_t n, const struct sc_limits *lim,
                           struct sc_profile *p, char *err);

/* Decodes the text with decode under lim; rc in *rc, the profile (free it) or NULL. */
static inline struct sc_profile *t_decode_text(t_decode_fn decode, const char *text,
                                               const struct sc_limits *lim, int *rc, char *err)
{
    struct sc_profile *p = sc_profile_new();
    *rc = decode(text, strlen(text), lim, p, err);
    if (*rc) {
        sc_profile_free(p);
        return NULL;
    }
    return p;
}

/* p's folded lines of type t ("(error)" when they cannot be written); valid until the
 * next call. */
static inline const char *t_folded(const struct sc_profile *p, int t)
{
    static struct sc_buf out;
    char err[SC_ERR_LEN];
    out.len = 0;
    if (sc_folded_write(p, t, &out, err))
        return "(error)";
    sc_buf_putc(&out, 0);
    return out.data;
}

#endif
