/* fuzz_name.c - libFuzzer target: Pyroscope's application name, app.suffix{k=v,...}. */
#include "fuzz_common.h"

#include "ingest/ingest.h"
#include "model/labels.h"
#include "query/selector.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Any text: parsed into labels or refused with a message; parsed labels obey the label
 * rules (model/labels.h), and their canonical text parses back to the same set. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *name = malloc(size + 1);
    FUZZ_CHECK(name);
    memcpy(name, data, size);
    name[size] = 0;
    struct sc_labels l;
    sc_labels_init(&l);
    char suffix[32], err[SC_ERR_LEN] = "";
    int rc = sc_ingest_parse_name(name, &l, SC_SERIES_LABELS_MAX, suffix, err);
    if (rc < 0) {
        FUZZ_CHECK(err[0]);
    } else {
        FUZZ_CHECK(l.n <= SC_SERIES_LABELS_MAX);
        for (uint32_t i = 0; i < l.n; i++) {
            FUZZ_CHECK(l.v[i].name.len <= SC_LABEL_NAME_MAX);
            FUZZ_CHECK(l.v[i].value.len <= SC_LABEL_VALUE_MAX);
            FUZZ_CHECK(sc_label_name_valid(l.v[i].name.ptr, l.v[i].name.len) ||
                       !strcmp(l.v[i].name.ptr, "service_name"));
        }
        struct sc_buf canon = SC_BUF_INIT;
        sc_labels_format(&l, &canon);
        sc_buf_putc(&canon, 0);
        struct sc_labels back;
        sc_labels_init(&back);
        FUZZ_CHECK(sc_labels_parse(canon.data, &back, err) == 0);
        struct sc_buf again = SC_BUF_INIT;
        sc_labels_format(&back, &again);
        sc_buf_putc(&again, 0);
        FUZZ_CHECK(again.len == canon.len && !memcmp(again.data, canon.data, canon.len));
        sc_buf_release(&again);
        sc_labels_release(&back);
        sc_buf_release(&canon);
    }
    sc_labels_release(&l);
    free(name);
    return 0;
}
