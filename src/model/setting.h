/* setting.h - the one table of scorch's settings (settings.def) and the parsers of their
 * values: every surface that takes a setting (the YAML config, a command's flags, an HTTP
 * parameter) reads it through the same row, with the same bounds, default and message. */
#ifndef SC_SETTING_H
#define SC_SETTING_H

#include <stddef.h>
#include <stdint.h>

enum sc_set_type {
    SC_SET_COUNT,    /* a whole number */
    SC_SET_NUMBER,   /* a decimal number, not negative (0.005, 2.5e3); bounds in thousandths */
    SC_SET_BYTES,    /* a byte count: 512, 64MiB (KiB MiB GiB TiB, K M G T = 1024^n; KB MB GB TB
                        = 1000^n) */
    SC_SET_DURATION, /* nanoseconds, written 500ms, 10s, 1m30s, 2h, 30d (model/timespec.h) */
    SC_SET_ADDR,     /* host:port; an empty host or localhost is 127.0.0.1, :0 picks a port */
    SC_SET_BOOL,     /* true or false */
    SC_SET_CHOICE,   /* one of the row's choices */
    SC_SET_STRING,   /* any text */
    SC_SET_PATH,     /* a file or directory */
    SC_SET_URL,      /* http:// or https:// */
    SC_SET_LIST,     /* a YAML list of strings */
};

enum sc_set_id {
#define SC_SETTING(id, ...) SC_SET_##id,
#include "model/settings.def"
#undef SC_SETTING
    SC_SET__N
};

struct sc_setting {
    enum sc_set_id id;
    const char *key, *flag, *cmds, *param, *routes;
    enum sc_set_type type;
    int64_t min, max; /* 0, 0: unbounded */
    const char *def, *choices, *doc;
};

/* A parsed value: i for counts, bytes, durations and booleans (0/1), the index of a choice;
 * d for numbers; s (the text itself, not copied) for the rest. */
struct sc_set_value {
    int64_t i;
    double d;
    const char *s;
};

const struct sc_setting *sc_setting(enum sc_set_id id);
/* The row of a YAML key ("server.listen"), or NULL. */
const struct sc_setting *sc_setting_find(const char *key);
/* Every row, in the order of settings.def; *n gets how many. */
const struct sc_setting *sc_settings(size_t *n);

/* Parses text as the row's type and checks its bounds. 0, or SC_EINVAL with "'where' must
 * be a duration of at least 1s (like 10s), not 'x'" in err (where: the key, flag or
 * parameter as the user wrote it; NULL = the key). */
int sc_setting_parse(const struct sc_setting *s, const char *text, const char *where,
                     struct sc_set_value *out, char *err);
/* A value the code holds, i of the integer kinds or d of a number, against the row's bounds
 * (for a library's check of options set in code): 0, or SC_EINVAL with the row's words
 * ("'--width' must be a count from 30 to 1000000, not '5'"). */
int sc_setting_check(enum sc_set_id id, int64_t i, double d, char *err);
/* The row's default of the integer kinds, parsed (0 when it has none). */
int64_t sc_setting_default_i(enum sc_set_id id);
/* The row's default of a number, parsed (0 when it has none). */
double sc_setting_default_d(enum sc_set_id id);

/* What the type and bounds accept, in words ("a duration of at least 1s (like 10s)"). */
void sc_setting_describe(const struct sc_setting *s, char *out, size_t cap);

/* An http:// or https:// URL with something after the scheme, no spaces or control
 * characters, shorter than 2 KiB: 0 or -1. */
int sc_parse_url(const char *s);
/* The IPv4 socket address a listen setting names (host:port; an empty host or localhost
 * is 127.0.0.1). 0 or SC_EINVAL ("bad listen address 'x'
 * (want host:port with an IPv4 host)"). */
struct sockaddr_in;
int sc_parse_listen(const char *s, struct sockaddr_in *sa, char *err);

#endif
