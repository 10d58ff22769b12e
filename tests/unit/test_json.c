/* test_json.c - the streaming JSON writer: commas and nesting, escaping, numbers at their
 * edges, misuse reported rather than written. */
#include "t.h"

#include "model/buf.h"
#include "model/json.h"

#include <math.h>
#include <stdint.h>

static struct sc_buf b;
static struct sc_json j;

static void fresh(void)
{
    sc_buf_release(&b);
    sc_json_init(&j, &b);
}

static const char *out(void)
{
    return b.data ? b.data : "";
}

static void test_nesting_and_commas(void)
{
    fresh();
    sc_json_obj_begin(&j);
    sc_json_obj_end(&j);
    T_EQ_STR(out(), "{}");
    T_CHECK(sc_json_ok(&j));

    fresh();
    sc_json_arr_begin(&j);
    sc_json_arr_end(&j);
    T_EQ_STR(out(), "[]");

    fresh();
    sc_json_obj_begin(&j);
    sc_json_kv_str(&j, "a", "x");
    sc_json_key(&j, "b");
    sc_json_arr_begin(&j);
    sc_json_i64(&j, 1);
    sc_json_arr_begin(&j);
    sc_json_arr_end(&j);
    sc_json_obj_begin(&j);
    sc_json_kv_bool(&j, "t", 1);
    sc_json_kv_bool(&j, "f", 0);
    sc_json_key(&j, "n");
    sc_json_null(&j);
    sc_json_obj_end(&j);
    sc_json_i64(&j, -2);
    sc_json_arr_end(&j);
    sc_json_key(&j, "c");
    sc_json_obj_begin(&j);
    sc_json_obj_end(&j);
    sc_json_kv_u64(&j, "d", 3);
    sc_json_obj_end(&j);
    T_EQ_STR(out(),
             "{\"a\":\"x\",\"b\":[1,[],{\"t\":true,\"f\":false,\"n\":null},-2],\"c\":{},\"d\":3}");
    T_CHECK(sc_json_ok(&j));

    /* values at the top level follow each other without commas */
    fresh();
    sc_json_i64(&j, 1);
    sc_json_str(&j, "s");
    T_EQ_STR(out(), "1\"s\"");
    T_CHECK(sc_json_ok(&j));
}

static void test_newline(void)
{
    fresh(); /* a line an element, the comma ending the line before */
    sc_json_arr_begin(&j);
    for (int i = 0; i < 2; i++) {
        sc_json_newline(&j);
        sc_json_obj_begin(&j);
        sc_json_kv_i64(&j, "i", i);
        sc_json_newline(&j);
        sc_json_kv_i64(&j, "k", i);
        sc_json_obj_end(&j);
    }
    sc_json_newline(&j);
    sc_json_arr_end(&j);
    T_EQ_STR(out(), "[\n{\"i\":0,\n\"k\":0},\n{\"i\":1,\n\"k\":1}\n]");
    T_CHECK(sc_json_ok(&j));

    fresh(); /* an empty list on its own lines */
    sc_json_arr_begin(&j);
    sc_json_newline(&j);
    sc_json_arr_end(&j);
    T_EQ_STR(out(), "[\n]");
}

static void test_depth(void)
{
    fresh();
    for (int i = 0; i < SC_JSON_MAX_DEPTH; i++)
        sc_json_arr_begin(&j);
    for (int i = 0; i < SC_JSON_MAX_DEPTH; i++)
        sc_json_arr_end(&j);
    T_CHECK(sc_json_ok(&j));
    T_EQ_INT(b.len, 2 * SC_JSON_MAX_DEPTH);

    /* one level more is refused, not written past the stack */
    fresh();
    for (int i = 0; i <= SC_JSON_MAX_DEPTH; i++)
        sc_json_arr_begin(&j);
    T_CHECK(!sc_json_ok(&j));
    T_EQ_INT(b.len, SC_JSON_MAX_DEPTH);
}

static void test_misuse(void)
{
    fresh(); /* a value where an object wants a key */
    sc_json_obj_begin(&j);
    sc_json_i64(&j, 1);
    T_CHECK(!sc_json_ok(&j));
    T_EQ_STR(out(), "{");

    fresh(); /* a key in an array */
    sc_json_arr_begin(&j);
    sc_json_key(&j, "k");
    T_CHECK(!sc_json_ok(&j));

    fresh(); /* closing the wrong kind */
    sc_json_arr_begin(&j);
    sc_json_obj_end(&j);
    T_CHECK(!sc_json_ok(&j));

    fresh(); /* a key without its value */
    sc_json_obj_begin(&j);
    sc_json_key(&j, "k");
    sc_json_obj_end(&j);
    T_CHECK(!sc_json_ok(&j));

    fresh(); /* left open */
    sc_json_obj_begin(&j);
    T_CHECK(!sc_json_ok(&j));

    fresh(); /* closed once too often */
    sc_json_arr_begin(&j);
    sc_json_arr_end(&j);
    sc_json_arr_end(&j);
    T_CHECK(!sc_json_ok(&j));
    T_EQ_STR(out(), "[]");
}

static void test_escaping(void)
{
    fresh();
    sc_json_arr_begin(&j);
    sc_json_str(&j, "q\"b\\n\nt\tr\r");
    sc_json_strn(&j, "\x01\x1f", 2);
    sc_json_strn(&j, "a\0b", 3);                   /* NUL inside a counted string */
    sc_json_str(&j, "\xc3\xa9\xe2\x82\xac");       /* UTF-8 passes through */
    sc_json_str(&j, "\xff|\xc0\xaf|\xed\xa0\x80"); /* not UTF-8: U+FFFD per byte */
    sc_json_str(&j, "</script>");                  /* no escape JSON does not need */
    sc_json_str(&j, NULL);
    sc_json_arr_end(&j);
    T_EQ_STR(out(), "[\"q\\\"b\\\\n\\nt\\tr\\r\",\"\\u0001\\u001f\",\"a\\u0000b\","
                    "\"\xc3\xa9\xe2\x82\xac\",\"\\ufffd|\\ufffd\\ufffd|\\ufffd\\ufffd\\ufffd\","
                    "\"</script>\",null]");

    /* keys go through the same escaper */
    fresh();
    sc_json_obj_begin(&j);
    sc_json_kv_i64(&j, "a\"b", 1);
    sc_json_keyn(&j, "k\nl", 3); /* a counted key: the name of a label */
    sc_json_i64(&j, 2);
    sc_json_obj_end(&j);
    T_EQ_STR(out(), "{\"a\\\"b\":1,\"k\\nl\":2}");
}

static void test_numbers(void)
{
    fresh();
    sc_json_arr_begin(&j);
    sc_json_i64(&j, INT64_MIN);
    sc_json_i64(&j, INT64_MAX);
    sc_json_i64(&j, 0);
    sc_json_u64(&j, UINT64_MAX);
    sc_json_arr_end(&j);
    T_EQ_STR(out(), "[-9223372036854775808,9223372036854775807,0,18446744073709551615]");

    /* doubles: ten significant digits, as every answer has written them */
    fresh();
    sc_json_arr_begin(&j);
    sc_json_num(&j, 0.0);
    sc_json_num(&j, -0.0);
    sc_json_num(&j, 1.5);
    sc_json_num(&j, 1.0 / 3.0);
    sc_json_num(&j, 1e21);
    sc_json_num(&j, 123456789012.0);
    sc_json_num(&j, 1e-7);
    sc_json_num(&j, NAN);
    sc_json_num(&j, INFINITY);
    sc_json_num(&j, -INFINITY);
    sc_json_arr_end(&j);
    T_EQ_STR(out(), "[0,-0,1.5,0.3333333333,1e+21,1.23456789e+11,1e-07,null,null,null]");

    fresh();
    sc_json_arr_begin(&j);
    sc_json_num_g(&j, 0.1, 17);
    sc_json_num_g(&j, 2.0 / 3.0, 6);
    sc_json_num_g(&j, NAN, 6);
    sc_json_num_fixed(&j, 0.0123456789, 6);
    sc_json_num_fixed(&j, 2.0, 6);
    sc_json_num_fixed(&j, -INFINITY, 6);
    sc_json_num_fixed(&j, 1e300, 2); /* longer than any stack buffer */
    sc_json_arr_end(&j);
    T_CHECK(sc_json_ok(&j));
    const char *head = "[0.10000000000000001,0.666667,null,0.012346,2.000000,null,1";
    T_CHECK(!strncmp(out(), head, strlen(head)));
    T_EQ_INT(b.len, strlen(head) - 1 + 301 + 3 + 1); /* 301 digits, ".00", "]" */
}

static void test_raw(void)
{
    fresh();
    sc_json_obj_begin(&j);
    sc_json_key(&j, "doc");
    sc_json_raw(&j, "{\"x\":[1,2]}", 11);
    sc_json_key(&j, "list");
    sc_json_arr_begin(&j);
    sc_json_raw(&j, "1", 1);
    sc_json_raw(&j, "\"s\"", 3);
    sc_json_arr_end(&j);
    sc_json_obj_end(&j);
    T_EQ_STR(out(), "{\"doc\":{\"x\":[1,2]},\"list\":[1,\"s\"]}");
    T_CHECK(sc_json_ok(&j));
}

/* The error body of the server and the agent, its message escaped. */
static void test_error_body(void)
{
    fresh();
    sc_json_put_error(&b, "no such endpoint");
    T_EQ_STR(out(), "{\"error\":\"no such endpoint\"}\n");
    fresh();
    sc_json_put_error(&b, "bad 'x\"y'\n");
    T_EQ_STR(out(), "{\"error\":\"bad 'x\\\"y'\\n\"}\n");
}

int main(void)
{
    T_RUN(test_nesting_and_commas);
    T_RUN(test_newline);
    T_RUN(test_depth);
    T_RUN(test_misuse);
    T_RUN(test_escaping);
    T_RUN(test_numbers);
    T_RUN(test_raw);
    T_RUN(test_error_body);
    sc_buf_release(&b);
    return t_done();
}
