/* driver.c - writes a profile file as speedscope JSON, for the schema test until
 * `scorch convert --to speedscope` exists. Usage: driver IN OUT [SAMPLE-INDEX] */
#include "formats/input.h"
#include "formats/speedscope.h"
#include "model/error.h"

#include <stdio.h>

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: %s IN OUT [SAMPLE-INDEX]\n", argv[0]);
        return 2;
    }
    char err[SC_ERR_LEN];
    struct sc_profile *p;
    if (sc_load(argv[1], NULL, &p, err)) {
        fprintf(stderr, "driver: %s\n", err);
        return 1;
    }
    int vi = sc_profile_sample_index(p, argc > 3 ? argv[3] : NULL, err);
    struct sc_buf out = SC_BUF_INIT;
    if (vi < 0 || sc_speedscope_write(p, vi, argv[1], &out, err)) {
        fprintf(stderr, "driver: %s\n", err);
        sc_profile_free(p);
        return 1;
    }
    FILE *f = fopen(argv[2], "wb");
    int rc = !f || fwrite(out.data, 1, out.len, f) != out.len;
    if (f && fclose(f))
        rc = 1;
    if (rc)
        fprintf(stderr, "driver: cannot write '%s'\n", argv[2]);
    sc_buf_release(&out);
    sc_profile_free(p);
    return rc;
}
