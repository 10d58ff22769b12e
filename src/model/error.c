/* error.c - messages for SC_E* codes and helpers that fill a caller's detail buffer. */
#include "model/error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

const char *sc_strerror(int code)
{
    switch (code) {
    case SC_OK:
        return "success";
#define SC_ERR_CASE(name, val, msg)                                                                \
    case SC_E##name:                                                                               \
        return msg;
        SC_ERRNO_MAP(SC_ERR_CASE)
#undef SC_ERR_CASE
    }
    return "unknown error";
}

int sc_errf(char *err, int code, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, SC_ERR_LEN, fmt, ap);
        va_end(ap);
    }
    return code;
}

int sc_errwrap(char *err, int code, const char *fmt, ...)
{
    if (!err)
        return code;
    char old[SC_ERR_LEN];
    if (err[0])
        memcpy(old, err, SC_ERR_LEN);
    else
        snprintf(old, sizeof old, "%s", sc_strerror(code));
    char what[SC_ERR_LEN];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    /* truncation is fine: detail is for people */
    char all[2 * SC_ERR_LEN + 4];
    snprintf(all, sizeof all, "%s: %s", what, old);
    size_t n = strlen(all);
    if (n > SC_ERR_LEN - 1)
        n = SC_ERR_LEN - 1;
    memcpy(err, all, n);
    err[n] = 0;
    return code;
}
