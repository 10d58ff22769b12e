/* error.h - one error type for all of scorch: negative SC_E* codes plus a detail buffer. */
#ifndef SC_ERROR_H
#define SC_ERROR_H

#include <stddef.h>

/* Functions return 0 or a negative SC_E* code. Human detail goes into a caller-owned
 * char err[SC_ERR_LEN] (may be NULL), lower case, no trailing period, e.g.
 * "cannot open 'x.pb.gz': no such file or directory". */
#define SC_ERR_LEN 256

#define SC_ERRNO_MAP(X)                                                                            \
    X(NOMEM, -1, "out of memory")                                                                  \
    X(INVAL, -2, "invalid argument")                                                               \
    X(IO, -3, "input/output error")                                                                \
    X(FORMAT, -4, "malformed input")                                                               \
    X(LIMIT, -5, "limit exceeded")                                                                 \
    X(NOTFOUND, -6, "not found")                                                                   \
    X(UNSUPPORTED, -7, "unsupported")                                                              \
    X(EXISTS, -8, "already exists")                                                                \
    X(AUTH, -9, "not authorized")                                                                  \
    X(INTERNAL, -10, "internal error")                                                             \
    X(NOSPACE, -11, "no space left for the store")                                                 \
    X(UNAVAIL, -12, "temporarily unavailable")

enum sc_errno {
    SC_OK = 0,
#define SC_ERR_ENUM(name, val, msg) SC_E##name = (val),
    SC_ERRNO_MAP(SC_ERR_ENUM)
#undef SC_ERR_ENUM
};

/* The fixed message for a code ("unknown error" for anything else). */
const char *sc_strerror(int code);

/* Formats detail into err (when err is not NULL) and returns code, so a failing path reads
 * `return sc_errf(err, SC_EFORMAT, "bad varint at offset %zu", off);`. */
int sc_errf(char *err, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Prefixes existing detail: "what: <old detail>" (or "what: <strerror(code)>" when err is
 * empty). Returns code. */
int sc_errwrap(char *err, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif
