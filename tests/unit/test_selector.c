/* test_selector.c - PromQL matchers: syntax, escapes, matching semantics, label sets. */
#include "t.h"

#include "model/error.h"
#include "model/hash.h"
#include "query/regex.h"
#include "config/config.h"
#include "query/selector.h"
#include "query/selector_int.h"

static struct sc_labels set_of(const char *text)
{
    struct sc_labels l;
    char err[SC_ERR_LEN] = "";
    sc_labels_init(&l);
    if (sc_labels_parse(text, &l, err))
        fprintf(stderr, "labels '%s': %s\n", text, err);
    return l;
}

/* 1 when selector sel matches labels lab, -1 when sel does not parse. */
static int matches(const char *sel, const char *lab)
{
    struct sc_selector *s;
    char err[SC_ERR_LEN];
    if (sc_selector_parse(sel, &s, err)) {
        fprintf(stderr, "selector '%s': %s\n", sel, err);
        return -1;
    }
    struct sc_labels l = set_of(lab);
    int r = sc_selector_match(s, &l);
    sc_labels_release(&l);
    sc_selector_free(s);
    return r;
}

/* 1 when s (its one matcher on label a) holds for a = value (len bytes, NULs kept). */
static int match_a(const struct sc_selector *s, const char *value, size_t len)
{
    struct sc_labels l;
    sc_labels_init(&l);
    sc_labels_set(&l, "a", 1, value, len);
    int r = sc_selector_match(s, &l);
    sc_labels_release(&l);
    return r;
}

/* The error of a selector that must not parse ("" when it parsed). */
static const char *parse_error(const char *sel)
{
    static char err[SC_ERR_LEN];
    struct sc_selector *s = (struct sc_selector *)1;
    err[0] = 0;
    int rc = sc_selector_parse(sel, &s, err);
    if (rc == 0) {
        sc_selector_free(s);
        return "";
    }
    if (s != NULL)
        return "out not cleared on error";
    return err;
}

static void test_parse_forms(void)
{
    struct sc_selector *s;
    char err[SC_ERR_LEN];
    T_EQ_INT(sc_selector_parse("{service_name=\"api\", env=~\"prod|stage\", pod!=\"x\", "
                               "a!~\"b.*\"}",
                               &s, err),
             0);
    T_EQ_INT(s->n, 4);
    const struct sc_matcher *m = (&s->m[0]);
    T_EQ_MEM(m->name.ptr, m->name.len, "service_name");
    T_EQ_MEM(m->value.ptr, m->value.len, "api");
    T_EQ_INT(m->op, SC_MATCH_EQ);
    T_EQ_INT((&s->m[1])->op, SC_MATCH_RE);
    T_EQ_INT((&s->m[2])->op, SC_MATCH_NE);
    T_EQ_INT((&s->m[3])->op, SC_MATCH_NRE);
    struct sc_buf b = SC_BUF_INIT;
    sc_selector_format(s, &b);
    T_EQ_STR(b.data, "{service_name=\"api\",env=~\"prod|stage\",pod!=\"x\",a!~\"b.*\"}");
    sc_selector_free(s);

    /* empty forms select everything */
    const char *all[] = {"", "{}", "  { }  ", "{\n}"};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) {
        T_EQ_INT(sc_selector_parse(all[i], &s, err), 0);
        T_EQ_INT(s->n, 0);
        T_EQ_INT(sc_selector_match(s, NULL), 1);
        sc_selector_free(s);
    }
    T_EQ_INT(sc_selector_parse(NULL, &s, err), 0);
    T_EQ_INT(s->n, 0);
    sc_selector_free(s);

    /* dotted names, spacing, trailing comma, all three quotes, quoted names */
    T_EQ_INT(sc_selector_parse(" {otel.scope.name = 'x' , \"my-label\"=`a\\b`,} ", &s, err), 0);
    T_EQ_INT(s->n, 2);
    m = (&s->m[0]);
    T_EQ_MEM(m->name.ptr, m->name.len, "otel.scope.name");
    T_EQ_MEM(m->value.ptr, m->value.len, "x");
    m = (&s->m[1]);
    T_EQ_MEM(m->name.ptr, m->name.len, "my-label");
    T_EQ_MEM(m->value.ptr, m->value.len, "a\\b"); /* backquotes: raw */
    b.len = 0;
    sc_selector_format(s, &b);
    T_EQ_STR(b.data, "{otel.scope.name=\"x\",\"my-label\"=\"a\\\\b\"}");
    sc_selector_free(s);

    /* the canonical form parses back to the same matchers */
    T_EQ_INT(sc_selector_parse("{a=~\"x\\\\.y\\n\",b!=\"\\\"q\\\"\"}", &s, err), 0);
    b.len = 0;
    sc_selector_format(s, &b);
    struct sc_selector *s2;
    T_EQ_INT(sc_selector_parse(b.data, &s2, err), 0);
    struct sc_buf b2 = SC_BUF_INIT;
    sc_selector_format(s2, &b2);
    T_EQ_STR(b2.data, b.data);
    T_EQ_MEM((&s2->m[0])->value.ptr, (&s2->m[0])->value.len, "x\\.y\n");
    sc_selector_free(s2);
    sc_selector_free(s);
    sc_buf_release(&b);
    sc_buf_release(&b2);
}

static void test_escapes(void)
{
    struct sc_selector *s;
    char err[SC_ERR_LEN];
    T_EQ_INT(
        sc_selector_parse("{a=\"q\\\"b\\\\t\\t\\n\\x41\\101\\u00e9\\U0001F600'\\'\"}", &s, err), 0);
    const struct sc_matcher *m = (&s->m[0]);
    T_EQ_MEM(m->value.ptr, m->value.len, "q\"b\\t\t\nAA\xc3\xa9\xf0\x9f\x98\x80''");
    sc_selector_free(s);
    T_EQ_INT(sc_selector_parse("{a='it\\'s \"fine\"'}", &s, err), 0);
    m = (&s->m[0]);
    T_EQ_MEM(m->value.ptr, m->value.len, "it's \"fine\"");
    sc_selector_free(s);
    /* a NUL byte by escape keeps its length */
    T_EQ_INT(sc_selector_parse("{a=\"x\\x00y\"}", &s, err), 0);
    T_EQ_INT((&s->m[0])->value.len, 3);
    T_EQ_INT(match_a(s, "x\0y", 3), 1);
    T_EQ_INT(match_a(s, "x", 1), 0);
    sc_selector_free(s);
    /* raw strings keep newlines; quoted ones may not hold one */
    T_EQ_INT(sc_selector_parse("{a=`x\ny`}", &s, err), 0);
    T_EQ_MEM((&s->m[0])->value.ptr, (&s->m[0])->value.len, "x\ny");
    sc_selector_free(s);
    T_EQ_STR(parse_error("{a=\"x\ny\"}"), "bad selector at offset 3: unterminated string");
    T_EQ_STR(parse_error("{a=\"\\q\"}"), "bad selector at offset 4: unknown escape, got '\\q\"}'");
    T_EQ_STR(parse_error("{a=\"\\x4\"}"),
             "bad selector at offset 4: escape needs 2 hex digits, got '\\x4\"}'");
    T_EQ_STR(parse_error("{a=\"\\ud800\"}"),
             "bad selector at offset 4: escape is not a valid Unicode code point, got "
             "'\\ud800\"}'");
    T_EQ_STR(parse_error("{a=\"\\400\"}"),
             "bad selector at offset 4: octal escape above \\377, got '\\400\"}'");
    T_EQ_STR(parse_error("{a=\"\\18\"}"),
             "bad selector at offset 4: escape needs 3 octal digits, got '\\18\"}'");
}

static void test_errors(void)
{
    T_EQ_STR(parse_error("{service_name=api}"),
             "bad selector at offset 14: expected a quoted value after '=', got 'api}'");
    T_EQ_STR(parse_error("service_name=\"api\""),
             "bad selector at offset 0: expected '{', got 'service_name=\"ap..'");
    T_EQ_STR(parse_error("{a=\"x\""),
             "bad selector at offset 6: expected ',' or '}' after a matcher, got end of input");
    T_EQ_STR(parse_error("{a=\"x\" b=\"y\"}"),
             "bad selector at offset 7: expected ',' or '}' after a matcher, got 'b=\"y\"}'");
    T_EQ_STR(parse_error("{a==\"x\"}"),
             "bad selector at offset 3: expected a quoted value after '=', got '=\"x\"}'");
    T_EQ_STR(parse_error("{a~\"x\"}"),
             "bad selector at offset 2: expected '=', '!=', '=~' or '!~' after label name, got "
             "'~\"x\"}'");
    T_EQ_STR(parse_error("{1a=\"x\"}"), "bad selector at offset 1: expected a label name, got "
                                        "'1a=\"x\"}'");
    T_EQ_STR(parse_error("{,}"), "bad selector at offset 1: expected a label name, got ',}'");
    T_EQ_STR(parse_error("{a=\"x\",,}"),
             "bad selector at offset 7: expected a label name, got ',}'");
    T_EQ_STR(parse_error("{a=\"x\"} x"),
             "bad selector at offset 8: unexpected text after '}', got 'x'");
    T_EQ_STR(parse_error("{a=\"x"), "bad selector at offset 3: unterminated string");
    T_EQ_STR(parse_error("{\"\"=\"x\"}"), "bad selector at offset 1: empty label name");
    T_EQ_STR(parse_error("{a=~\"(x\"}"),
             "bad selector at offset 4: bad regex for 'a': missing closing parenthesis at "
             "offset 2 of the regex");
    T_EQ_STR(parse_error("{a=\"\x01\"} \x7f"),
             "bad selector at offset 8: unexpected text after '}', got '?'");
    /* limits */
    char big[SC_SELECTOR_MAX_LEN + 8];
    memset(big, ' ', sizeof big - 1);
    big[sizeof big - 1] = 0;
    big[0] = '{';
    struct sc_selector *s;
    char err[SC_ERR_LEN];
    T_EQ_INT(sc_selector_parse(big, &s, err), SC_ELIMIT);
    T_CHECK(s == NULL);
    struct sc_buf many = SC_BUF_INIT;
    sc_buf_putc(&many, '{');
    for (int i = 0; i <= SC_SELECTOR_MAX_MATCHERS; i++)
        sc_buf_printf(&many, "a%d=\"x\",", i);
    sc_buf_putc(&many, '}');
    T_EQ_INT(sc_selector_parse(many.data, &s, err), SC_ELIMIT);
    T_CHECK(strstr(err, "more than 64 matchers") != NULL);
    sc_buf_release(&many);
}

static void test_matching(void)
{
    const char *lab = "{service_name=\"api\", env=\"prod\", pod=\"x-1\"}";
    T_EQ_INT(matches("{service_name=\"api\"}", lab), 1);
    T_EQ_INT(matches("{service_name=\"ap\"}", lab), 0);
    T_EQ_INT(matches("{service_name!=\"api\"}", lab), 0);
    T_EQ_INT(matches("{env=~\"prod|stage\"}", lab), 1);
    T_EQ_INT(matches("{env=~\"stage\"}", lab), 0);
    /* regexes are anchored at both ends, like Prometheus */
    T_EQ_INT(matches("{env=~\"pro\"}", lab), 0);
    T_EQ_INT(matches("{env=~\"rod\"}", lab), 0);
    T_EQ_INT(matches("{env=~\"p.*\"}", lab), 1);
    T_EQ_INT(matches("{env=~\"pr|prod\"}", lab), 1); /* alternation must reach the end */
    T_EQ_INT(matches("{env!~\"pro\"}", lab), 1);
    T_EQ_INT(matches("{env!~\"pro.\"}", lab), 0);
    T_EQ_INT(matches("{pod=~\"x-\\\\d\"}", lab), 1);
    T_EQ_INT(matches("{env=~\"(?i)PROD\"}", lab), 1);
    /* all matchers must hold */
    T_EQ_INT(matches("{service_name=\"api\", env=\"dev\"}", lab), 0);
    T_EQ_INT(matches("{service_name=\"api\", env=\"prod\", pod=~\"x-.\"}", lab), 1);
    /* absent labels are the empty string */
    T_EQ_INT(matches("{zone=\"\"}", lab), 1);
    T_EQ_INT(matches("{zone!=\"\"}", lab), 0);
    T_EQ_INT(matches("{zone=~\".*\"}", lab), 1);
    T_EQ_INT(matches("{zone=~\".+\"}", lab), 0);
    T_EQ_INT(matches("{zone!~\"x\"}", lab), 1);
    T_EQ_INT(matches("{zone!=\"x\"}", lab), 1);
    T_EQ_INT(matches("{env=\"\"}", lab), 0);
    /* `.` matches newlines (Prometheus's (?s)); UTF-8 is one character */
    T_EQ_INT(matches("{a=~\"x.y\"}", "{a=\"x\\ny\"}"), 1);
    T_EQ_INT(matches("{a=~\"x.y\"}", "{a=\"x\\u00e9y\"}"), 1);
    T_EQ_INT(matches("{a=~\"x..y\"}", "{a=\"x\\u00e9y\"}"), 0);
    /* invalid UTF-8 in a value: each bad byte is one character, as in Go */
    T_EQ_INT(matches("{a=~\"x.*\"}", "{a=\"x\\xffy\"}"), 1);
    T_EQ_INT(matches("{a=~\"x.y\"}", "{a=\"x\\xffy\"}"), 1);
    T_EQ_INT(matches("{a=~\"x...y\"}", "{a=\"x\\xed\\xa0\\x80y\"}"), 1);
    T_EQ_INT(matches("{a=~\"x.y\"}", "{a=\"x\\xed\\xa0\\x80y\"}"), 0);
    T_EQ_INT(matches("{a=~\"y\"}", "{a=\"x\\xffy\"}"), 0);
    T_EQ_INT(matches("{a=~\"x\\\\x{fffd}y\"}", "{a=\"x\\xffy\"}"), 1);
    /* the same name twice: both apply */
    T_EQ_INT(matches("{env=~\"p.*\", env!=\"prod\"}", lab), 0);
    /* pathological regexes stop at the match limit: no hang, no match */
    struct sc_selector *s;
    char err[SC_ERR_LEN];
    T_EQ_INT(sc_selector_parse("{a=~\"(x+x+)+y\"}", &s, err), 0);
    char val[4096];
    memset(val, 'x', sizeof val);
    T_EQ_INT(match_a(s, val, sizeof val), 0);
    T_EQ_INT(match_a(s, "xxy", 3), 1);
    sc_selector_free(s);
    /* JIT code that runs out of stack hands over to the interpreter */
    T_EQ_INT(sc_selector_parse("{a=~\"(a|b)*c\"}", &s, err), 0);
    memset(val, 'a', sizeof val);
    val[sizeof val - 1] = 'c';
    T_EQ_INT(match_a(s, val, sizeof val), 1);
    val[sizeof val - 1] = 'a';
    T_EQ_INT(match_a(s, val, sizeof val), 0);
    sc_selector_free(s);
}

static void test_labels(void)
{
    struct sc_labels l;
    sc_labels_init(&l);
    T_EQ_INT(sc_labels_set(&l, "zone", 4, "b", 1), 0);
    T_EQ_INT(sc_labels_set(&l, "app", 3, "x", 1), 0);
    T_EQ_INT(sc_labels_set(&l, "env", 3, "prod", 4), 0);
    T_EQ_INT(sc_labels_set(&l, "app", 3, "api", 3), 0); /* replaces */
    T_EQ_INT(sc_labels_set(&l, "gone", 4, "", 0), 0);   /* empty = absent */
    T_EQ_INT(sc_labels_set(&l, "", 0, "x", 1), SC_EINVAL);
    T_EQ_INT(l.n, 3);
    struct sc_buf b = SC_BUF_INIT;
    sc_labels_format(&l, &b);
    T_EQ_STR(b.data, "{app=\"api\",env=\"prod\",zone=\"b\"}");
    struct sc_str v;
    T_EQ_INT(sc_labels_get(&l, "env", 3, &v), 1);
    T_EQ_MEM(v.ptr, v.len, "prod");
    T_EQ_INT(sc_labels_get(&l, "en", 2, &v), 0);
    T_EQ_INT(v.len, 0);
    T_EQ_INT(sc_labels_set(&l, "env", 3, "", 0), 0); /* removes */
    T_EQ_INT(l.n, 2);
    b.len = 0;
    sc_labels_format(&l, &b);
    T_EQ_STR(b.data, "{app=\"api\",zone=\"b\"}");

    /* order of building does not matter; parse reads any spelling back */
    struct sc_labels a = set_of("{zone='b', app=`api`}"), c = set_of("{app=\"api\",zone=\"b\"}");
    struct sc_labels d = set_of("{app=\"api\",zone=\"c\"}");
    struct sc_buf ta = SC_BUF_INIT, tc = SC_BUF_INIT, td = SC_BUF_INIT;
    sc_labels_format(&a, &ta);
    sc_labels_format(&c, &tc);
    sc_labels_format(&d, &td);
    T_EQ_STR(ta.data, "{app=\"api\",zone=\"b\"}");
    T_EQ_STR(tc.data, ta.data);
    T_CHECK(strcmp(td.data, ta.data) != 0);
    sc_buf_release(&ta);
    sc_buf_release(&tc);
    sc_buf_release(&td);
    sc_labels_release(&a);
    sc_labels_release(&c);
    sc_labels_release(&d);

    /* escapes and quoted names in the canonical text, and back */
    struct sc_labels e;
    sc_labels_init(&e);
    sc_labels_set(&e, "otel.scope.name", 15, "a\"b\\c\nd\te\x01\x7f\xc3\xa9", 13);
    sc_labels_set(&e, "k-8s", 4, "x", 1);
    sc_labels_set(&e, "_", 1, "y", 1);
    b.len = 0;
    sc_labels_format(&e, &b);
    T_EQ_STR(b.data,
             "{_=\"y\",\"k-8s\"=\"x\",otel.scope.name=\"a\\\"b\\\\c\\nd\\te\\x01\\x7f\xc3\xa9\"}");
    struct sc_labels f = set_of(b.data);
    struct sc_buf b2 = SC_BUF_INIT;
    sc_labels_format(&f, &b2);
    T_EQ_STR(b2.data, b.data);
    sc_labels_release(&f);
    sc_labels_release(&e);

    /* empty set */
    struct sc_labels h;
    sc_labels_init(&h);
    b.len = 0;
    sc_labels_format(&h, &b);
    T_EQ_STR(b.data, "{}");
    sc_labels_release(&h);

    /* label sets take '=' only */
    char err[SC_ERR_LEN];
    sc_labels_init(&h);
    T_EQ_INT(sc_labels_parse("{a=~\"x\"}", &h, err), SC_EFORMAT);
    T_EQ_STR(err, "bad label set at offset 2: only '=' is allowed in a label set");
    T_EQ_INT(sc_labels_parse("{a=\"1\", a=\"2\"}", &h, err), 0);
    T_EQ_INT(h.n, 1);
    T_EQ_MEM(h.v[0].value.ptr, h.v[0].value.len, "2");
    sc_labels_release(&h);

    /* the set's size is bounded */
    sc_labels_init(&h);
    char name[16];
    int rc = 0;
    for (int i = 0; i <= SC_LABELS_MAX && rc == 0; i++) {
        snprintf(name, sizeof name, "l%d", i);
        rc = sc_labels_set(&h, name, strlen(name), "v", 1);
    }
    T_EQ_INT(rc, SC_ELIMIT);
    T_EQ_INT(h.n, SC_LABELS_MAX);
    sc_labels_release(&h);

    sc_buf_release(&b);
    sc_buf_release(&b2);
    sc_labels_release(&l);
}

/* A selector's regexes count against a budget: past it nothing matches, and it says so. */
static void test_budget(void)
{
    struct sc_selector *sel;
    char err[SC_ERR_LEN];
    T_EQ_INT(sc_selector_parse("{pod=~\"p.*\"}", &sel, err), 0);
    struct sc_labels l;
    sc_labels_init(&l);
    sc_labels_set(&l, "pod", 3, "p1", 2);
    struct sc_re_budget b;
    sc_re_budget_init(&b, 60 * 1000000000LL);
    sc_selector_set_budget(sel, &b);
    T_CHECK(sc_selector_match(sel, &l));
    T_CHECK(!b.over);
    sc_re_budget_init(&b, -1); /* already spent */
    int matched = 0;
    for (int i = 0; i < 100; i++)
        matched += sc_selector_match(sel, &l);
    T_CHECK(b.over);
    T_CHECK(matched < 100);
    sc_selector_set_budget(sel, NULL);
    T_CHECK(sc_selector_match(sel, &l)); /* no budget: matches again */
    sc_labels_release(&l);
    sc_selector_free(sel);
}

/* One label check for the config, the flags and pushes: the same rule and words. */
static void test_label_check(void)
{
    char err[SC_ERR_LEN], big[SC_LABEL_NAME_MAX + 2];
    T_EQ_INT(sc_label_check("otel.scope-name", 15, SC_LABEL_VALUE_MAX, err), 0);
    T_EQ_INT(sc_label_check("9x", 2, 1, err), SC_EINVAL);
    T_EQ_STR(err, "bad label name '9x' ([a-zA-Z_][a-zA-Z0-9_.-]*)");
    T_EQ_INT(sc_label_check("env", 3, SC_LABEL_VALUE_MAX + 1, err), SC_ELIMIT);
    T_EQ_STR(err, "the value of label 'env' is longer than 1024 bytes");
    memset(big, 'a', sizeof big);
    T_EQ_INT(sc_label_check(big, SC_LABEL_NAME_MAX + 1, 1, err), SC_ELIMIT);
    T_CHECK(strstr(err, "is longer than 256 bytes") != NULL);
    /* the config says the same, with its line */
    struct sc_config c;
    const char *y = "record: {labels: {9x: a}}\n";
    T_EQ_INT(sc_config_parse(y, strlen(y), "t.yaml", &c, err), SC_EINVAL);
    T_EQ_STR(err, "config 't.yaml' line 1: bad label name '9x' ([a-zA-Z_][a-zA-Z0-9_.-]*)");
    sc_config_release(&c);
}

int main(void)
{
    T_RUN(test_budget);
    T_RUN(test_parse_forms);
    T_RUN(test_escapes);
    T_RUN(test_errors);
    T_RUN(test_matching);
    T_RUN(test_labels);
    T_RUN(test_label_check);
    return t_done();
}
