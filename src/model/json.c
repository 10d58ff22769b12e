/* json.c - the streaming JSON writer. */
#include "model/json.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

void sc_json_init(struct sc_json *j, struct sc_buf *b)
{
    memset(j, 0, sizeof *j);
    j->b = b;
}

int sc_json_ok(const struct sc_json *j)
{
    return !j->bad && j->depth == 0 && !j->after_key && !j->b->oom;
}

void sc_json_newline(struct sc_json *j)
{
    j->newline = 1;
}

static void put_newline(struct sc_json *j)
{
    if (j->newline) {
        sc_buf_putc(j->b, '\n');
        j->newline = 0;
    }
}

/* Whatever goes before a value: a comma after an earlier member of an array, nothing after a
 * key (its colon is written with it). A value where an object wants a key is misuse. */
static int before_value(struct sc_json *j)
{
    if (j->bad)
        return -1;
    if (j->after_key) {
        j->after_key = 0;
        put_newline(j);
        return 0;
    }
    if (j->depth > 0) {
        int d = j->depth - 1;
        if (j->is_object[d]) {
            j->bad = 1;
            return -1;
        }
        if (j->has_member[d])
            sc_buf_putc(j->b, ',');
        j->has_member[d] = 1;
    }
    put_newline(j);
    return 0;
}

static void begin(struct sc_json *j, int object)
{
    if (before_value(j) < 0)
        return;
    if (j->depth == SC_JSON_MAX_DEPTH) {
        j->bad = 1;
        return;
    }
    j->has_member[j->depth] = 0;
    j->is_object[j->depth] = (unsigned char)object;
    j->depth++;
    sc_buf_putc(j->b, object ? '{' : '[');
}

static void end(struct sc_json *j, int object)
{
    if (j->bad)
        return;
    if (j->depth == 0 || j->after_key || j->is_object[j->depth - 1] != object) {
        j->bad = 1;
        return;
    }
    j->depth--;
    put_newline(j);
    sc_buf_putc(j->b, object ? '}' : ']');
}

void sc_json_obj_begin(struct sc_json *j)
{
    begin(j, 1);
}

void sc_json_obj_end(struct sc_json *j)
{
    end(j, 1);
}

void sc_json_arr_begin(struct sc_json *j)
{
    begin(j, 0);
}

void sc_json_arr_end(struct sc_json *j)
{
    end(j, 0);
}

void sc_json_key(struct sc_json *j, const char *k)
{
    sc_json_keyn(j, k, strlen(k));
}

void sc_json_keyn(struct sc_json *j, const char *k, size_t n)
{
    if (j->bad)
        return;
    int d = j->depth - 1;
    if (d < 0 || !j->is_object[d] || j->after_key) {
        j->bad = 1;
        return;
    }
    if (j->has_member[d])
        sc_buf_putc(j->b, ',');
    j->has_member[d] = 1;
    put_newline(j);
    sc_buf_putc(j->b, '"');
    sc_buf_put_json_str(j->b, k, n);
    sc_buf_append(j->b, "\":", 2);
    j->after_key = 1;
}

void sc_json_strn(struct sc_json *j, const char *s, size_t n)
{
    if (before_value(j) < 0)
        return;
    sc_buf_putc(j->b, '"');
    sc_buf_put_json_str(j->b, s, n);
    sc_buf_putc(j->b, '"');
}

void sc_json_str(struct sc_json *j, const char *s)
{
    if (!s)
        sc_json_null(j);
    else
        sc_json_strn(j, s, strlen(s));
}

void sc_json_i64(struct sc_json *j, int64_t v)
{
    if (before_value(j) == 0)
        sc_buf_put_i64(j->b, v);
}

void sc_json_u64(struct sc_json *j, uint64_t v)
{
    if (before_value(j) == 0)
        sc_buf_put_u64(j->b, v);
}

void sc_json_num(struct sc_json *j, double v)
{
    if (before_value(j) == 0)
        sc_buf_put_num(j->b, v);
}

static void put_fmt(struct sc_json *j, double v, int prec, int fixed)
{
    if (before_value(j) < 0)
        return;
    if (!isfinite(v)) {
        sc_buf_append(j->b, "null", 4);
        return;
    }
    /* %.*f of a large double runs to hundreds of digits: snprintf tells the length */
    char num[64];
    int n = snprintf(num, sizeof num, fixed ? "%.*f" : "%.*g", prec, v);
    if (n >= 0 && (size_t)n < sizeof num)
        sc_buf_append(j->b, num, (size_t)n);
    else
        sc_buf_printf(j->b, fixed ? "%.*f" : "%.*g", prec, v);
}

void sc_json_num_g(struct sc_json *j, double v, int digits)
{
    put_fmt(j, v, digits, 0);
}

void sc_json_num_fixed(struct sc_json *j, double v, int decimals)
{
    put_fmt(j, v, decimals, 1);
}

void sc_json_bool(struct sc_json *j, int v)
{
    if (before_value(j) == 0)
        sc_buf_puts(j->b, v ? "true" : "false");
}

void sc_json_null(struct sc_json *j)
{
    if (before_value(j) == 0)
        sc_buf_append(j->b, "null", 4);
}

void sc_json_raw(struct sc_json *j, const char *s, size_t n)
{
    if (before_value(j) == 0)
        sc_buf_append(j->b, s, n);
}

void sc_json_kv_str(struct sc_json *j, const char *k, const char *s)
{
    sc_json_key(j, k);
    sc_json_str(j, s);
}

void sc_json_kv_strn(struct sc_json *j, const char *k, const char *s, size_t n)
{
    sc_json_key(j, k);
    sc_json_strn(j, s, n);
}

void sc_json_kv_i64(struct sc_json *j, const char *k, int64_t v)
{
    sc_json_key(j, k);
    sc_json_i64(j, v);
}

void sc_json_kv_u64(struct sc_json *j, const char *k, uint64_t v)
{
    sc_json_key(j, k);
    sc_json_u64(j, v);
}

void sc_json_kv_num(struct sc_json *j, const char *k, double v)
{
    sc_json_key(j, k);
    sc_json_num(j, v);
}

void sc_json_kv_bool(struct sc_json *j, const char *k, int v)
{
    sc_json_key(j, k);
    sc_json_bool(j, v);
}

void sc_json_put_error(struct sc_buf *b, const char *msg)
{
    struct sc_json j;
    sc_json_init(&j, b);
    sc_json_obj_begin(&j);
    sc_json_kv_str(&j, "error", msg);
    sc_json_obj_end(&j);
    sc_buf_putc(b, '\n');
}
