/* labels.c - label sets: sorted name/value pairs with one canonical text. */
#include "model/labels.h"
#include "model/error.h"

#include <stdlib.h>
#include <string.h>

/* ---- canonical text ---- */

struct sink {
    struct sc_buf *buf;
};

static void sink_put(struct sink *k, const char *p, size_t n)
{
    sc_buf_append(k->buf, p, n);
}

static int is_name_start(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static int is_name_char(unsigned char c)
{
    return is_name_start(c) || (c >= '0' && c <= '9') || c == '.';
}

static int is_bare_name(const char *s, size_t n)
{
    if (n == 0 || !is_name_start((unsigned char)s[0]))
        return 0;
    for (size_t i = 1; i < n; i++)
        if (!is_name_char((unsigned char)s[i]))
            return 0;
    return 1;
}

/* "..." with the escapes sc_labels_format documents. */
static void put_quoted(struct sink *k, const char *s, size_t n)
{
    static const char hex[] = "0123456789abcdef";
    sink_put(k, "\"", 1);
    size_t start = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x20 && c != 0x7f && c != '"' && c != '\\')
            continue;
        sink_put(k, s + start, i - start);
        start = i + 1;
        char e[4] = {'\\', 0, 0, 0};
        size_t en = 2;
        switch (c) {
        case '"':
        case '\\':
            e[1] = (char)c;
            break;
        case '\n':
            e[1] = 'n';
            break;
        case '\r':
            e[1] = 'r';
            break;
        case '\t':
            e[1] = 't';
            break;
        default:
            e[1] = 'x';
            e[2] = hex[c >> 4];
            e[3] = hex[c & 15];
            en = 4;
        }
        sink_put(k, e, en);
    }
    sink_put(k, s + start, n - start);
    sink_put(k, "\"", 1);
}

static void put_name(struct sink *k, struct sc_str name)
{
    if (is_bare_name(name.ptr, name.len))
        sink_put(k, name.ptr, name.len);
    else
        put_quoted(k, name.ptr, name.len);
}

static void labels_canonical(const struct sc_labels *l, struct sink *k)
{
    sink_put(k, "{", 1);
    for (uint32_t i = 0; i < l->n; i++) {
        if (i)
            sink_put(k, ",", 1);
        put_name(k, l->v[i].name);
        sink_put(k, "=", 1);
        put_quoted(k, l->v[i].value.ptr, l->v[i].value.len);
    }
    sink_put(k, "}", 1);
}

/* ---- label sets ---- */

void sc_labels_init(struct sc_labels *l)
{
    memset(l, 0, sizeof *l);
    sc_arena_init(&l->arena);
}

void sc_labels_release(struct sc_labels *l)
{
    free(l->v);
    sc_arena_release(&l->arena);
    memset(l, 0, sizeof *l);
}

static int cmp_bytes(const char *a, size_t an, const char *b, size_t bn)
{
    int c = memcmp(a, b, an < bn ? an : bn);
    if (c)
        return c;
    return (an > bn) - (an < bn);
}

/* Index of name in l, or of where it would go (then *found is 0). */
static uint32_t labels_find(const struct sc_labels *l, const char *name, size_t n, int *found)
{
    uint32_t lo = 0, hi = l->n;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        int c = cmp_bytes(l->v[mid].name.ptr, l->v[mid].name.len, name, n);
        if (c == 0) {
            *found = 1;
            return mid;
        }
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    *found = 0;
    return lo;
}

int sc_labels_set(struct sc_labels *l, const char *name, size_t name_len, const char *value,
                  size_t value_len)
{
    if (name_len == 0)
        return SC_EINVAL; /* no text could name it */
    if (name_len > UINT32_MAX / 2 || value_len > UINT32_MAX / 2)
        return SC_ELIMIT;
    int found;
    uint32_t at = labels_find(l, name, name_len, &found);
    if (value_len == 0) {
        if (found) {
            memmove(&l->v[at], &l->v[at + 1], (l->n - at - 1) * sizeof *l->v);
            l->n--;
        }
        return 0;
    }
    char *v = sc_arena_strndup(&l->arena, value, value_len);
    if (!v)
        return SC_ENOMEM;
    if (found) {
        l->v[at].value = (struct sc_str){v, (uint32_t)value_len};
        return 0;
    }
    if (l->n >= SC_LABELS_MAX)
        return SC_ELIMIT;
    char *nm = sc_arena_strndup(&l->arena, name, name_len);
    if (!nm)
        return SC_ENOMEM;
    if (sc_grow_array(&l->v, &l->cap, (uint64_t)l->n + 1, sizeof *l->v))
        return SC_ENOMEM;
    memmove(&l->v[at + 1], &l->v[at], (l->n - at) * sizeof *l->v);
    l->v[at].name = (struct sc_str){nm, (uint32_t)name_len};
    l->v[at].value = (struct sc_str){v, (uint32_t)value_len};
    l->n++;
    return 0;
}

int sc_labels_get(const struct sc_labels *l, const char *name, size_t name_len,
                  struct sc_str *value)
{
    int found;
    uint32_t at = labels_find(l, name, name_len, &found);
    *value = found ? l->v[at].value : (struct sc_str){"", 0};
    return found;
}

void sc_labels_json(const struct sc_labels *l, struct sc_json *j)
{
    sc_json_obj_begin(j);
    for (uint32_t k = 0; k < l->n; k++) {
        sc_json_keyn(j, l->v[k].name.ptr, l->v[k].name.len);
        sc_json_strn(j, l->v[k].value.ptr, l->v[k].value.len);
    }
    sc_json_obj_end(j);
}

void sc_labels_write_json(const struct sc_labels *l, struct sc_buf *out)
{
    struct sc_json j;
    sc_json_init(&j, out);
    sc_labels_json(l, &j);
}

void sc_labels_format(const struct sc_labels *l, struct sc_buf *out)
{
    struct sink k = {.buf = out};
    labels_canonical(l, &k);
}

void sc_labels_put_name(struct sc_buf *out, struct sc_str name)
{
    struct sink k = {.buf = out};
    put_name(&k, name);
}

void sc_labels_put_quoted(struct sc_buf *out, const char *s, size_t n)
{
    struct sink k = {.buf = out};
    put_quoted(&k, s, n);
}

size_t sc_labels_clean_name(const char *key, size_t n, char *out, size_t cap)
{
    size_t k = 0;
    if (n == 0 || cap == 0)
        return 0;
    if (key[0] >= '0' && key[0] <= '9')
        out[k++] = '_';
    /* what comes out is always a valid name: never longer than SC_LABEL_NAME_MAX */
    if (n + k >= cap || n + k > SC_LABEL_NAME_MAX)
        return 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)key[i];
        int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
        out[k++] = ok ? (char)c : '_';
    }
    out[k] = 0;
    return k;
}

int sc_label_name_valid(const char *s, size_t n)
{
    if (n == 0 || n > SC_LABEL_NAME_MAX || !sc_labels_is_name_start((unsigned char)s[0]))
        return 0;
    for (size_t i = 1; i < n; i++)
        if (!sc_labels_is_name_char((unsigned char)s[i]) && s[i] != '-')
            return 0;
    return 1;
}

int sc_labels_is_name_start(unsigned char c)
{
    return is_name_start(c);
}

int sc_labels_is_name_char(unsigned char c)
{
    return is_name_char(c);
}

int sc_label_check(const char *name, size_t nlen, size_t vlen, char *err)
{
    int show = (int)(nlen < 64 ? nlen : 64);
    if (nlen > SC_LABEL_NAME_MAX)
        return sc_errf(err, SC_ELIMIT, "label name '%.*s...' is longer than %d bytes", show, name,
                       SC_LABEL_NAME_MAX);
    if (!sc_label_name_valid(name, nlen))
        return sc_errf(err, SC_EINVAL, "bad label name '%.*s' ([a-zA-Z_][a-zA-Z0-9_.-]*)", show,
                       name);
    if (vlen > SC_LABEL_VALUE_MAX)
        return sc_errf(err, SC_ELIMIT, "the value of label '%.*s' is longer than %d bytes", show,
                       name, SC_LABEL_VALUE_MAX);
    return 0;
}
