/* fuzz_symtab.c - libFuzzer target: the symbol sources (kallsyms, perf maps, /proc maps
 * lines, Go pclntab, ELF via libelf) and lookups in what they produce. */
#include "fuzz_common.h"

#include "collect/elfsym.h"
#include "collect/symtab.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The first byte picks the parser; for the pclntab the next 8 bytes are the text address. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    int kind = data[0] % 5;
    data++, size--;
    struct sc_symtab t;
    sc_symtab_init(&t);
    /* a copy the parsers may not read past */
    uint8_t *buf = malloc(size ? size : 1);
    FUZZ_CHECK(buf);
    memcpy(buf, data, size);
    int rc = 0, dw = 0;
    char err[SC_ERR_LEN];
    switch (kind) {
    case 0:
        rc = sc_symtab_parse_kallsyms(&t, (const char *)buf, size);
        FUZZ_CHECK(rc == 0);
        break;
    case 1:
        rc = sc_symtab_parse_perf_map(&t, (const char *)buf, size);
        FUZZ_CHECK(rc == 0);
        break;
    case 2:
        for (size_t off = 0; off < size;) {
            const uint8_t *nl = memchr(buf + off, '\n', size - off);
            size_t n = nl ? (size_t)(nl - (buf + off)) : size - off;
            struct sc_maps_line m;
            if (sc_maps_parse_line((const char *)buf + off, n, &m) == 0) {
                FUZZ_CHECK(m.start <= m.end);
                FUZZ_CHECK(m.path >= (const char *)buf + off &&
                           m.path + m.path_len <= (const char *)buf + off + n);
            }
            off += n + 1;
        }
        break;
    case 3: {
        uint64_t text = 0;
        if (size >= 8)
            memcpy(&text, buf, 8);
        rc = size >= 8 ? sc_symtab_parse_gopclntab(&t, buf + 8, size - 8, text) : 0;
        FUZZ_CHECK(rc == 0 || rc == SC_EFORMAT);
        break;
    }
    case 4:
        rc = sc_elf_load(-1, buf, size, &t, &dw, err);
        FUZZ_CHECK(rc == 0 || rc == SC_EFORMAT);
        break;
    }
    if (kind != 4)
        sc_symtab_finish(&t, kind == 0 ? 65536 : 0);
    /* lookups: every symbol finds itself or a same-start alias; sizes are not zero */
    for (uint32_t i = 0; i < t.n; i++) {
        FUZZ_CHECK(t.v[i].size > 0);
        FUZZ_CHECK(t.v[i].name < t.names_len &&
                   t.v[i].name + strlen(t.names + t.v[i].name) < t.names_len);
        FUZZ_CHECK(i == 0 || t.v[i - 1].start < t.v[i].start);
        const struct sc_symtab_ent *e = sc_symtab_find(&t, t.v[i].start);
        FUZZ_CHECK(e && e->start <= t.v[i].start);
        uint64_t va;
        sc_symtab_vaddr(&t, t.v[i].start, &va);
    }
    sc_symtab_release(&t);
    free(buf);
    return 0;
}
