/* fuzz_ingest.c - libFuzzer target: a push as the HTTP layer hands it to sc_ingest. */
#include "fuzz_common.h"

#include "ingest/ingest.h"
#include "store/store.h"

#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct sc_store *store;
static char dir[] = "/tmp/scorch-fuzz-ingest-XXXXXX";

static void cleanup(void)
{
    sc_store_close(store);
    char cmd[64];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "cannot remove %s\n", dir);
}

/* One store for the whole run (a write costs a transaction, not a new database). */
static struct sc_store *the_store(void)
{
    if (store)
        return store;
    if (!mkdtemp(dir))
        abort();
    atexit(cleanup);
    struct sc_store_opts o;
    sc_store_opts_init(&o);
    o.dir = dir;
    o.background = 0;
    o.durable = 0;
    char err[SC_ERR_LEN];
    if (sc_store_open(&o, &store, err)) {
        fprintf(stderr, "%s\n", err);
        abort();
    }
    return store;
}

/* Input: up to 7 lines of query parameters (name, from, until, format, sampleRate, units,
 * aggregationType; an empty line is "absent"), then the body, held to its gzip trailer's
 * claim first as the server's admission does. Checks: sc_ingest returns 0 or a known error
 * code with a message; over the claim SC_ELIMIT, and unclaimed never over it; no crash,
 * leak, hang or unbounded memory. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    FUZZ_CHECK(text);
    memcpy(text, data, size);
    text[size] = 0;
    const char *arg[7] = {NULL};
    char *p = text, *end = text + size;
    for (int i = 0; i < 7 && p < end; i++) {
        char *nl = memchr(p, '\n', (size_t)(end - p));
        if (!nl)
            break;
        *nl = 0;
        arg[i] = *p ? p : NULL;
        p = nl + 1;
    }
    struct sc_ingest_req r = {
        .name = arg[0] ? arg[0] : "fuzz.cpu",
        .from = arg[1],
        .until = arg[2],
        .format = arg[3],
        .sample_rate = arg[4],
        .units = arg[5],
        .aggregation = arg[6],
        .body = p,
        .len = (size_t)(end - p),
        .gzip_claim = sc_gzip_claim(p, (size_t)(end - p)), /* admitted at it, as the server */
    };
    struct sc_ingest_result res;
    char err[SC_ERR_LEN] = "";
    int rc = sc_ingest(the_store(), &r, &fuzz_limits, &res, err);
    if (res.over_claim) {
        /* past the claim nothing was stored; the server measures it and runs it again */
        FUZZ_CHECK(rc == SC_ELIMIT);
        r.gzip_claim = 0;
        rc = sc_ingest(the_store(), &r, &fuzz_limits, &res, err);
        FUZZ_CHECK(!res.over_claim);
    }
    if (rc) {
        FUZZ_CHECK(rc == SC_EINVAL || rc == SC_EFORMAT || rc == SC_ELIMIT ||
                   rc == SC_EUNSUPPORTED || rc == SC_ENOMEM);
        FUZZ_CHECK(err[0]);
    }
    free(text);
    return 0;
}
