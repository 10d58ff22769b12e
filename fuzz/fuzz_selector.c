/* fuzz_selector.c - libFuzzer target: selector, label set, time and duration parsers. */
#include "fuzz_common.h"

#include "query/selector.h"
#include "query/selector_int.h"
#include "model/timespec.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Input: text, optionally "\n" and a label value to match the selector's matchers against.
 * Checks: no crash, leak or hang; errors are SC_EFORMAT / SC_ELIMIT with a message; a
 * parsed selector prints in a canonical form that parses back to itself; a label set's
 * canonical text parses back to the same set. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    FUZZ_CHECK(text);
    memcpy(text, data, size);
    text[size] = 0;
    const char *value = "";
    size_t vlen = 0;
    char *nl = memchr(text, '\n', size);
    if (nl && (size_t)(nl - text) + 1 < size && text[0] == '{') {
        *nl = 0;
        value = nl + 1;
        vlen = size - (size_t)(nl + 1 - text); /* may hold NUL bytes */
    }
    char err[SC_ERR_LEN];
    struct sc_buf a = SC_BUF_INIT, b = SC_BUF_INIT;

    struct sc_selector *s = NULL;
    err[0] = 0;
    int rc = sc_selector_parse(text, &s, err);
    if (rc) {
        FUZZ_CHECK(rc == SC_EFORMAT || rc == SC_ELIMIT);
        FUZZ_CHECK(s == NULL && err[0]);
    } else {
        sc_selector_format(s, &a);
        /* escapes make the canonical text up to 4 times longer than the input: past the
         * length limit, the input is parsed again instead */
        const char *again = a.len <= SC_SELECTOR_MAX_LEN ? a.data : text;
        struct sc_selector *s2 = NULL;
        FUZZ_CHECK(sc_selector_parse(again, &s2, err) == 0);
        sc_selector_format(s2, &b);
        FUZZ_CHECK(a.len == b.len && memcmp(a.data, b.data, a.len) == 0);
        FUZZ_CHECK(s->n == s2->n);
        /* the labels its `=` matchers name (last one wins) */
        struct sc_labels l;
        sc_labels_init(&l);
        for (uint32_t i = 0; i < s->n; i++) {
            const struct sc_matcher *m = &s->m[i];
            if (m->op == SC_MATCH_EQ)
                FUZZ_CHECK(
                    sc_labels_set(&l, m->name.ptr, m->name.len, m->value.ptr, m->value.len) == 0);
            /* the value under this matcher's name: both parses agree */
            struct sc_labels lv;
            sc_labels_init(&lv);
            if (sc_labels_set(&lv, m->name.ptr, m->name.len, value, vlen) == 0) {
                int r = sc_selector_match(s, &lv);
                FUZZ_CHECK(r == 0 || r == 1);
                FUZZ_CHECK(r == sc_selector_match(s2, &lv));
            }
            sc_labels_release(&lv);
        }
        int r = sc_selector_match(s, &l);
        FUZZ_CHECK(r == 0 || r == 1);
        FUZZ_CHECK(sc_selector_match(s, NULL) == sc_selector_match(s2, NULL));
        sc_labels_release(&l);
        sc_selector_free(s2);
        sc_selector_free(s);
    }

    struct sc_labels l;
    sc_labels_init(&l);
    rc = sc_labels_parse(text, &l, err);
    FUZZ_CHECK(rc == 0 || rc == SC_EFORMAT || rc == SC_ELIMIT);
    if (rc == 0) {
        a.len = 0;
        sc_labels_format(&l, &a);
        struct sc_labels l2;
        sc_labels_init(&l2);
        const char *again = a.len <= SC_SELECTOR_MAX_LEN ? a.data : text;
        FUZZ_CHECK(sc_labels_parse(again, &l2, err) == 0);
        b.len = 0;
        sc_labels_format(&l2, &b);
        FUZZ_CHECK(a.len == b.len && memcmp(a.data, b.data, a.len) == 0);
        FUZZ_CHECK(l.n == l2.n);
        sc_labels_release(&l2);
    }
    sc_labels_release(&l);

    int64_t t = 0, d = 0;
    rc = sc_time_parse(text, 1800000000LL * 1000000000LL, &t, err);
    FUZZ_CHECK(rc == 0 || rc == SC_EINVAL);
    rc = sc_duration_parse(text, &d, err);
    FUZZ_CHECK(rc == 0 || rc == SC_EINVAL || rc == SC_ELIMIT);
    FUZZ_CHECK(rc != 0 || d >= 0);

    sc_buf_release(&a);
    sc_buf_release(&b);
    free(text);
    return 0;
}
