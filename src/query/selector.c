/* selector.c - PromQL label matchers: parsing, PCRE2 regexes; label sets parsed from text. */
#include "query/selector.h"
#include "query/selector_int.h"
#include "model/error.h"
#include "model/hash.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "query/regex.h"

/* ---- the parser ---- */

struct lexer {
    const char *s;
    size_t n, i;
    const char *what; /* "selector" or "label set" */
    char *err;
};

/* "bad selector at offset N: <msg>" (and ", got '<text at N>'" when got is set). */
static int bad(struct lexer *x, size_t at, int got, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int bad(struct lexer *x, size_t at, int got, const char *fmt, ...)
{
    if (!x->err)
        return SC_EFORMAT;
    char msg[160];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    char near[24] = "end of input";
    if (at < x->n) {
        size_t k = 0, j;
        near[k++] = '\'';
        for (j = at; j < x->n && j - at < 16; j++) {
            unsigned char c = (unsigned char)x->s[j];
            near[k++] = c >= 0x20 && c < 0x7f ? (char)c : '?';
        }
        if (j < x->n) {
            near[k++] = '.';
            near[k++] = '.';
        }
        near[k++] = '\'';
        near[k] = 0;
    }
    if (got)
        sc_errf(x->err, SC_EFORMAT, "bad %s at offset %zu: %s, got %s", x->what, at, msg, near);
    else
        sc_errf(x->err, SC_EFORMAT, "bad %s at offset %zu: %s", x->what, at, msg);
    return SC_EFORMAT;
}

static void skip_ws(struct lexer *x)
{
    while (x->i < x->n &&
           (x->s[x->i] == ' ' || x->s[x->i] == '\t' || x->s[x->i] == '\n' || x->s[x->i] == '\r'))
        x->i++;
}

static void put_utf8(struct sc_buf *b, uint32_t cp)
{
    char u[4];
    size_t n;
    if (cp < 0x80) {
        u[0] = (char)cp;
        n = 1;
    } else if (cp < 0x800) {
        u[0] = (char)(0xc0 | cp >> 6);
        u[1] = (char)(0x80 | (cp & 0x3f));
        n = 2;
    } else if (cp < 0x10000) {
        u[0] = (char)(0xe0 | cp >> 12);
        u[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
        u[2] = (char)(0x80 | (cp & 0x3f));
        n = 3;
    } else {
        u[0] = (char)(0xf0 | cp >> 18);
        u[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
        u[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
        u[3] = (char)(0x80 | (cp & 0x3f));
        n = 4;
    }
    sc_buf_append(b, u, n);
}

/* A quoted string at x->i (the quote), unescaped into out (which is emptied first). */
static int lex_string(struct lexer *x, struct sc_buf *out)
{
    size_t start = x->i;
    char q = x->s[x->i++];
    out->len = 0;
    sc_buf_append(out, "", 0);
    if (q == '`') {
        const char *end = memchr(x->s + x->i, '`', x->n - x->i);
        if (!end)
            return bad(x, start, 0, "unterminated string");
        sc_buf_append(out, x->s + x->i, (size_t)(end - (x->s + x->i)));
        x->i = (size_t)(end - x->s) + 1;
        return out->oom ? SC_ENOMEM : 0;
    }
    for (;;) {
        if (x->i >= x->n || x->s[x->i] == '\n')
            return bad(x, start, 0, "unterminated string");
        char c = x->s[x->i];
        if (c == q) {
            x->i++;
            break;
        }
        if (c != '\\') {
            size_t j = x->i;
            while (j < x->n && x->s[j] != q && x->s[j] != '\\' && x->s[j] != '\n')
                j++;
            sc_buf_append(out, x->s + x->i, j - x->i);
            x->i = j;
            continue;
        }
        size_t esc = x->i++;
        if (x->i >= x->n)
            return bad(x, start, 0, "unterminated string");
        char e = x->s[x->i++];
        int digits = 0, base = 16;
        switch (e) {
        case 'a':
            sc_buf_putc(out, '\a');
            break;
        case 'b':
            sc_buf_putc(out, '\b');
            break;
        case 'f':
            sc_buf_putc(out, '\f');
            break;
        case 'n':
            sc_buf_putc(out, '\n');
            break;
        case 'r':
            sc_buf_putc(out, '\r');
            break;
        case 't':
            sc_buf_putc(out, '\t');
            break;
        case 'v':
            sc_buf_putc(out, '\v');
            break;
        case '\\':
        case '"':
        case '\'':
            sc_buf_putc(out, e);
            break;
        case 'x':
            digits = 2;
            break;
        case 'u':
            digits = 4;
            break;
        case 'U':
            digits = 8;
            break;
        default:
            if (e >= '0' && e <= '7') {
                digits = 3;
                base = 8;
                x->i--;
                break;
            }
            return bad(x, esc, 1, "unknown escape");
        }
        if (!digits)
            continue;
        uint32_t v = 0;
        for (int k = 0; k < digits; k++) {
            int d = x->i < x->n ? sc_hex_digit(x->s[x->i]) : -1;
            if (d < 0 || d >= base)
                return bad(x, esc, 1, "escape needs %d %s digits", digits,
                           base == 8 ? "octal" : "hex");
            v = v * (uint32_t)base + (uint32_t)d;
            x->i++;
        }
        if (e == 'u' || e == 'U') {
            if (v > 0x10ffff || (v >= 0xd800 && v < 0xe000))
                return bad(x, esc, 1, "escape is not a valid Unicode code point");
            put_utf8(out, v);
        } else {
            if (v > 255)
                return bad(x, esc, 1, "octal escape above \\377");
            sc_buf_putc(out, (char)v);
        }
    }
    return out->oom ? SC_ENOMEM : 0;
}

static int add_matcher(struct sc_selector *s, struct lexer *x, const struct sc_buf *name,
                       enum sc_match_op op, const struct sc_buf *value, size_t value_at,
                       int compile)
{
    if (s->n >= SC_SELECTOR_MAX_MATCHERS) {
        bad(x, value_at, 0, "more than %d matchers", SC_SELECTOR_MAX_MATCHERS);
        return SC_ELIMIT;
    }
    /* NOLINTNEXTLINE(bugprone-sizeof-expression): re is an array of pointers */
    const struct sc_grow_part cols[] = {SC_GROW_PART(s->m), SC_GROW_PART(s->re)};
    if (sc_grow_arrays(&s->cap, (uint64_t)s->n + 1, -1, cols, 2))
        return sc_errf(x->err, SC_ENOMEM, "out of memory");
    struct sc_matcher *m = &s->m[s->n];
    const char *nm = sc_arena_strndup(&s->arena, name->data ? name->data : "", name->len);
    const char *v = sc_arena_strndup(&s->arena, value->data ? value->data : "", value->len);
    if (!nm || !v)
        return sc_errf(x->err, SC_ENOMEM, "out of memory");
    m->name = (struct sc_str){nm, (uint32_t)name->len};
    m->value = (struct sc_str){v, (uint32_t)value->len};
    m->op = op;
    s->re[s->n] = NULL;
    if (compile && (op == SC_MATCH_RE || op == SC_MATCH_NRE)) {
        int ecode;
        size_t eoff;
        pcre2_code *re = sc_re_compile(v, value->len, SC_RE_LABEL, &ecode, &eoff);
        if (!re) {
            PCRE2_UCHAR msg[120];
            pcre2_get_error_message(ecode, msg, sizeof msg);
            return bad(x, value_at, 0, "bad regex for '%s': %s at offset %zu of the regex", nm,
                       (const char *)msg, (size_t)eoff);
        }
        s->re[s->n] = re;
        if (!s->mctx) {
            s->mctx = sc_re_context();
            if (!s->mctx) {
                s->n++;
                return sc_errf(x->err, SC_ENOMEM, "out of memory");
            }
        }
    }
    s->n++;
    return 0;
}

/* The grammar of sc_selector_parse. labels_only: only `=`, no regexes compiled. */
static int parse(struct sc_selector *s, const char *text, int labels_only, char *err)
{
    struct lexer x = {text ? text : "", 0, 0, labels_only ? "label set" : "selector", err};
    x.n = strlen(x.s);
    if (x.n > SC_SELECTOR_MAX_LEN) {
        sc_errf(err, SC_ELIMIT, "%s longer than %d bytes", x.what, SC_SELECTOR_MAX_LEN);
        return SC_ELIMIT;
    }
    skip_ws(&x);
    if (x.i == x.n)
        return 0;
    if (x.s[x.i] != '{')
        return bad(&x, x.i, 1, "expected '{'");
    x.i++;
    struct sc_buf name = SC_BUF_INIT, value = SC_BUF_INIT;
    int rc = 0;
    for (;;) {
        skip_ws(&x);
        if (x.i < x.n && x.s[x.i] == '}')
            break;
        /* label name */
        size_t name_at = x.i;
        if (x.i < x.n && sc_labels_is_name_start((unsigned char)x.s[x.i])) {
            size_t j = x.i + 1;
            while (j < x.n && sc_labels_is_name_char((unsigned char)x.s[j]))
                j++;
            name.len = 0;
            sc_buf_append(&name, x.s + x.i, j - x.i);
            x.i = j;
        } else if (x.i < x.n && (x.s[x.i] == '"' || x.s[x.i] == '\'' || x.s[x.i] == '`')) {
            if ((rc = lex_string(&x, &name)))
                break;
            if (name.len == 0) {
                rc = bad(&x, name_at, 0, "empty label name");
                break;
            }
        } else {
            rc = bad(&x, x.i, 1, "expected a label name");
            break;
        }
        if (name.oom) {
            rc = sc_errf(err, SC_ENOMEM, "out of memory");
            break;
        }
        /* operator */
        skip_ws(&x);
        size_t op_at = x.i;
        enum sc_match_op op;
        const char *opname;
        if (x.i + 1 < x.n && x.s[x.i] == '=' && x.s[x.i + 1] == '~') {
            op = SC_MATCH_RE, opname = "=~", x.i += 2;
        } else if (x.i + 1 < x.n && x.s[x.i] == '!' && x.s[x.i + 1] == '=') {
            op = SC_MATCH_NE, opname = "!=", x.i += 2;
        } else if (x.i + 1 < x.n && x.s[x.i] == '!' && x.s[x.i + 1] == '~') {
            op = SC_MATCH_NRE, opname = "!~", x.i += 2;
        } else if (x.i < x.n && x.s[x.i] == '=') {
            op = SC_MATCH_EQ, opname = "=", x.i += 1;
        } else {
            rc = bad(&x, op_at, 1, "expected '=', '!=', '=~' or '!~' after label name");
            break;
        }
        if (labels_only && op != SC_MATCH_EQ) {
            rc = bad(&x, op_at, 0, "only '=' is allowed in a label set");
            break;
        }
        /* value */
        skip_ws(&x);
        size_t value_at = x.i;
        if (x.i >= x.n || (x.s[x.i] != '"' && x.s[x.i] != '\'' && x.s[x.i] != '`')) {
            rc = bad(&x, x.i, 1, "expected a quoted value after '%s'", opname);
            break;
        }
        if ((rc = lex_string(&x, &value)))
            break;
        if ((rc = add_matcher(s, &x, &name, op, &value, value_at, !labels_only)))
            break;
        /* separator */
        skip_ws(&x);
        if (x.i < x.n && x.s[x.i] == ',') {
            x.i++;
            continue;
        }
        if (x.i < x.n && x.s[x.i] == '}')
            break;
        rc = bad(&x, x.i, 1, "expected ',' or '}' after a matcher");
        break;
    }
    sc_buf_release(&name);
    sc_buf_release(&value);
    if (rc)
        return rc;
    x.i++; /* '}' */
    skip_ws(&x);
    if (x.i < x.n)
        return bad(&x, x.i, 1, "unexpected text after '}'");
    return 0;
}

void sc_selector_free(struct sc_selector *s)
{
    if (!s)
        return;
    for (uint32_t i = 0; i < s->n; i++)
        pcre2_code_free(s->re[i]);
    free(s->re);
    free(s->m);
    pcre2_match_context_free(s->mctx);
    sc_arena_release(&s->arena);
    free(s);
}

int sc_selector_parse(const char *text, struct sc_selector **out, char *err)
{
    *out = NULL;
    struct sc_selector *s = calloc(1, sizeof *s);
    if (!s)
        return sc_errf(err, SC_ENOMEM, "out of memory");
    sc_arena_init(&s->arena);
    int rc = parse(s, text, 0, err);
    if (rc) {
        sc_selector_free(s);
        return rc;
    }
    *out = s;
    return 0;
}

int sc_labels_parse(const char *text, struct sc_labels *l, char *err)
{
    struct sc_selector s;
    memset(&s, 0, sizeof s);
    sc_arena_init(&s.arena);
    int rc = parse(&s, text, 1, err);
    for (uint32_t i = 0; rc == 0 && i < s.n; i++) {
        rc = sc_labels_set(l, s.m[i].name.ptr, s.m[i].name.len, s.m[i].value.ptr, s.m[i].value.len);
        if (rc == SC_ELIMIT)
            sc_errf(err, rc, "more than %d labels", SC_LABELS_MAX);
        else if (rc)
            sc_errf(err, rc, "out of memory");
    }
    free(s.re);
    free(s.m);
    sc_arena_release(&s.arena);
    return rc;
}

static int match_one(const struct sc_selector *s, uint32_t i, const char *v, size_t n,
                     pcre2_match_data *md)
{
    const struct sc_matcher *m = &s->m[i];
    switch (m->op) {
    case SC_MATCH_EQ:
        return n == m->value.len && memcmp(v, m->value.ptr, n) == 0;
    case SC_MATCH_NE:
        return !(n == m->value.len && memcmp(v, m->value.ptr, n) == 0);
    case SC_MATCH_RE:
    case SC_MATCH_NRE: {
        /* A match that runs into a limit (or any other error) counts as no match. */
        int hit = sc_re_match(s->re[i], v, n, md, s->mctx, s->budget);
        return m->op == SC_MATCH_RE ? hit : !hit;
    }
    }
    return 0;
}

void sc_selector_set_budget(struct sc_selector *s, struct sc_re_budget *b)
{
    if (s)
        s->budget = b;
}

int sc_selector_match_text(const struct sc_selector *s, const char *labels)
{
    struct sc_labels l;
    sc_labels_init(&l);
    char err[SC_ERR_LEN];
    int ok = sc_labels_parse(labels, &l, err) == 0 && sc_selector_match(s, &l);
    sc_labels_release(&l);
    return ok;
}

int sc_selector_match(const struct sc_selector *s, const struct sc_labels *labels)
{
    if (!s || s->n == 0)
        return 1;
    pcre2_match_data *md = NULL; /* per call, so that threads can share the selector */
    int ok = 1;
    for (uint32_t i = 0; ok && i < s->n; i++) {
        struct sc_str v = {"", 0};
        if (labels)
            sc_labels_get(labels, s->m[i].name.ptr, s->m[i].name.len, &v);
        if (s->re[i] && !md && !(md = pcre2_match_data_create(1, NULL))) {
            ok = 0;
            break;
        }
        ok = match_one(s, i, v.ptr, v.len, md);
    }
    pcre2_match_data_free(md);
    return ok;
}

void sc_selector_format(const struct sc_selector *s, struct sc_buf *out)
{
    static const char *const ops[] = {"=", "!=", "=~", "!~"};
    sc_buf_putc(out, '{');
    for (uint32_t i = 0; s && i < s->n; i++) {
        if (i)
            sc_buf_putc(out, ',');
        sc_labels_put_name(out, s->m[i].name);
        sc_buf_puts(out, ops[s->m[i].op]);
        sc_labels_put_quoted(out, s->m[i].value.ptr, s->m[i].value.len);
    }
    sc_buf_putc(out, '}');
}
