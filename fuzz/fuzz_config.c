/* fuzz_config.c - libFuzzer target: the YAML config (scrape_configs, storage, server,
 * rules...). */
#include "fuzz_common.h"

#include "config/config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Any bytes: the parser answers 0 or an error with a message, never crashes, hangs or leaks
 * (sc_config_release frees what a failed parse left too); every parsed job has a name, every
 * rule its name, type, query, group and a window (what the rules' evaluation relies on). */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 1 << 16)
        return 0;
    struct sc_config cf;
    char err[SC_ERR_LEN] = "";
    int rc = sc_config_parse((const char *)data, size, "fuzz.yaml", &cf, err);
    if (rc) {
        FUZZ_CHECK(rc < 0 && err[0]);
    } else {
        for (uint32_t i = 0; i < cf.njobs; i++)
            FUZZ_CHECK(cf.jobs[i].job_name && cf.jobs[i].job_name[0]);
        for (uint32_t i = 0; i < cf.nrules; i++) {
            const struct sc_rule *r = &cf.rules[i];
            FUZZ_CHECK(r->name && r->name[0] && r->type && r->query && r->group_by && r->tenant);
            FUZZ_CHECK(r->range_ns > 0 && r->limit > 0 &&
                       (r->top > 0 || r->regex || r->kind == SC_RULE_ALERT));
        }
        FUZZ_CHECK(cf.evaluation_interval_ns > 0);
    }
    sc_config_release(&cf);
    return 0;
}
