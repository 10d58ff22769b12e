/* labels.h - a series' labels: sorted, unique names, one canonical text. */
#ifndef SC_LABELS_H
#define SC_LABELS_H

#include <stddef.h>
#include <stdint.h>

#include "model/arena.h"
#include "model/buf.h"
#include "model/json.h"
#include "model/profile.h"

/* ---- label sets ----
 *
 * A series' labels: name/value pairs kept sorted by name (bytewise) with unique names, so
 * that one set has exactly one canonical text. As in Prometheus, a label with an
 * empty value is the same as no label: setting a value "" removes the name. Names and
 * values are copied into the set's arena (NUL-terminated; values may hold NUL bytes, use
 * the lengths). A plain value type: embed it, sc_labels_init / sc_labels_release. */
struct sc_label_pair {
    struct sc_str name, value;
};

struct sc_labels {
    struct sc_label_pair *v; /* sorted by name, names unique, values non-empty */
    uint32_t n, cap;
    struct sc_arena arena;
};

/* At most this many labels in one set (sc_labels_set fails with SC_ELIMIT beyond). */
#define SC_LABELS_MAX 256

/* The longest tenant name (X-Scope-OrgID, auth.tenants): one line of 1 to 127 bytes. */
#define SC_TENANT_MAX 127

/* What a series' labels may be, decided here once and checked wherever labels come in
 * (pushes, scrape configs, OTLP, the store): at most SC_SERIES_LABELS_MAX labels, names of
 * at most SC_LABEL_NAME_MAX bytes matching [a-zA-Z_][a-zA-Z0-9_.-]* (dots and dashes as
 * Pyroscope's clients send them), values of at most SC_LABEL_VALUE_MAX bytes. */
#define SC_SERIES_LABELS_MAX 48
#define SC_LABEL_NAME_MAX 256
#define SC_LABEL_VALUE_MAX 1024
int sc_label_name_valid(const char *s, size_t n);
/* The one check of a series label wherever one comes in (config, flags, pushes): 0, or
 * SC_EINVAL ("bad label name 'x' ([a-zA-Z_][a-zA-Z0-9_.-]*)") or SC_ELIMIT ("label name
 * 'x...' is longer than 256 bytes", "the value of label 'x' is longer than 1024 bytes"). */
int sc_label_check(const char *name, size_t nlen, size_t vlen, char *err);

void sc_labels_init(struct sc_labels *l);
void sc_labels_release(struct sc_labels *l);

/* Sets name to value, replacing an earlier value; an empty value removes the name.
 * Names are not validated beyond being non-empty (the canonical text quotes names that are
 * not [a-zA-Z_][a-zA-Z0-9_.]*). 0, SC_EINVAL (empty name), SC_ENOMEM or SC_ELIMIT. */
int sc_labels_set(struct sc_labels *l, const char *name, size_t name_len, const char *value,
                  size_t value_len);

/* Value of name: 1 with *value set, or 0 when absent (*value then is "", length 0). */
int sc_labels_get(const struct sc_labels *l, const char *name, size_t name_len,
                  struct sc_str *value);

/* Appends the canonical text: `{a="x",b="y"}` - sorted by name, no spaces, values in double
 * quotes with \\ \" \n \r \t escaped and other bytes below 0x20 (and 0x7f) as \xHH, bytes
 * from 0x80 up verbatim; a name that is not [a-zA-Z_][a-zA-Z0-9_.]* is quoted the same way
 * (Prometheus 3's quoted names). An empty set is `{}`. sc_labels_parse reads it back. The
 * store uses this text as a series' identity: never change it. */
void sc_labels_format(const struct sc_labels *l, struct sc_buf *out);

/* Appends the set as a JSON object {"name":"value",...}, sorted by name: alone, or as the
 * next value of a JSON writer. */
void sc_labels_write_json(const struct sc_labels *l, struct sc_buf *out);
void sc_labels_json(const struct sc_labels *l, struct sc_json *j);

/* The quoting the canonical text uses, for other writers of the same syntax (selectors). */
void sc_labels_put_name(struct sc_buf *out, struct sc_str name);
void sc_labels_put_quoted(struct sc_buf *out, const char *s, size_t n);
int sc_labels_is_name_start(unsigned char c);
int sc_labels_is_name_char(unsigned char c);

/* Makes a label name of a foreign key (an OTLP attribute, a pprof sample label) as
 * Prometheus-style backends do: every byte but [A-Za-z0-9_] becomes '_', a leading digit
 * gets a '_' before it (`service.name` -> `service_name`). Writes at most cap - 1 bytes and
 * a NUL to out; returns the length, 0 when key is empty or the name would not fit (in cap,
 * or in SC_LABEL_NAME_MAX: what it returns is always a valid label name). */
size_t sc_labels_clean_name(const char *key, size_t n, char *out, size_t cap);

#endif
