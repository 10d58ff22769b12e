/* otlp.c - OTLP profiles export requests: the JSON schema, the request index, replies.
 *
 * Field numbers (opentelemetry-proto, opentelemetry/proto/profiles/v1development and
 * collector/profiles/v1development, common/v1, resource/v1):
 *
 *   ExportProfilesServiceRequest  1 resource_profiles  2 dictionary
 *   ExportProfilesServiceResponse 1 partial_success {1 rejected_profiles  2 error_message}
 *   ProfilesDictionary  1 mapping_table  2 location_table  3 function_table  4 link_table
 *                       5 string_table  6 attribute_table  7 stack_table
 *   ResourceProfiles    1 resource  2 scope_profiles  3 schema_url
 *   Resource            1 attributes (KeyValue)  2 dropped_attributes_count
 *   ScopeProfiles       1 scope  2 profiles  3 schema_url
 *   InstrumentationScope 1 name  2 version  3 attributes (KeyValue)  4 dropped
 *   Profile             1 sample_type  2 samples  3 time_unix_nano (fixed64)
 *                       4 duration_nano  5 period_type  6 period  7 profile_id
 *                       8 dropped_attributes_count  9 original_payload_format
 *                       10 original_payload  11 attribute_indices
 *   ValueType           1 type_strindex  2 unit_strindex
 *   Sample              1 stack_index  2 attribute_indices  3 link_index  4 values
 *                       5 timestamps_unix_nano (fixed64)
 *   Mapping             1 memory_start  2 memory_limit  3 file_offset  4 filename_strindex
 *                       5 attribute_indices
 *   Stack               1 location_indices (leaf first)
 *   Location            1 mapping_index  2 address  3 lines  4 attribute_indices
 *   Line                1 function_index  2 line  3 column
 *   Function            1 name_strindex  2 system_name_strindex  3 filename_strindex
 *                       4 start_line
 *   Link                1 trace_id  2 span_id
 *   KeyValueAndUnit     1 key_strindex  2 value  3 unit_strindex
 *   KeyValue            1 key  2 value  3 key_strindex
 *   AnyValue            1 string_value  2 bool_value  3 int_value  4 double_value
 *                       5 array_value  6 kvlist_value  7 bytes_value  8 string_value_strindex
 *
 * Profiles are built from the index by otlp_build.c.
 */
#include "formats/otlp_int.h"
#include "formats/pbjson.h"
#include "model/error.h"
#include "model/json.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* the most profiles (and resource or scope entries) one request may carry */
#define MAX_PROFILES 65536

/* ---- the JSON mapping's schema ---- */

#define F(name, num, kind)                                                                         \
    {                                                                                              \
        name, num, SC_PBJ_##kind, 0, NULL                                                          \
    }
#define R(name, num, kind)                                                                         \
    {                                                                                              \
        name, num, SC_PBJ_##kind, 1, NULL                                                          \
    }
#define M(name, num, msg)                                                                          \
    {                                                                                              \
        name, num, SC_PBJ_MESSAGE, 0, &(msg)                                                       \
    }
#define RM(name, num, msg)                                                                         \
    {                                                                                              \
        name, num, SC_PBJ_MESSAGE, 1, &(msg)                                                       \
    }
#define MSG(var, ...)                                                                              \
    static const struct sc_pbj_field var##_f[] = {__VA_ARGS__};                                    \
    static const struct sc_pbj_msg var = {var##_f, sizeof var##_f / sizeof var##_f[0]}

/* AnyValue, ArrayValue, KeyValueList and KeyValue refer to each other */
static const struct sc_pbj_msg j_any, j_kv;
MSG(j_array, RM("values", 1, j_any));
MSG(j_kvlist, RM("values", 1, j_kv));
MSG(j_any, F("string_value", 1, STRING), F("bool_value", 2, BOOL), F("int_value", 3, INT),
    F("double_value", 4, DOUBLE), M("array_value", 5, j_array), M("kvlist_value", 6, j_kvlist),
    F("bytes_value", 7, BYTES), F("string_value_strindex", 8, INT));
MSG(j_kv, F("key", 1, STRING), M("value", 2, j_any), F("key_strindex", 3, INT));
MSG(j_resource, RM("attributes", 1, j_kv), F("dropped_attributes_count", 2, UINT));
MSG(j_scope, F("name", 1, STRING), F("version", 2, STRING), RM("attributes", 3, j_kv),
    F("dropped_attributes_count", 4, UINT));
MSG(j_vt, F("type_strindex", 1, INT), F("unit_strindex", 2, INT));
MSG(j_sample, F("stack_index", 1, INT), R("attribute_indices", 2, INT), F("link_index", 3, INT),
    R("values", 4, INT), R("timestamps_unix_nano", 5, FIXED64));
MSG(j_profile, M("sample_type", 1, j_vt), RM("samples", 2, j_sample),
    F("time_unix_nano", 3, FIXED64), F("duration_nano", 4, UINT), M("period_type", 5, j_vt),
    F("period", 6, INT), F("profile_id", 7, HEX), F("dropped_attributes_count", 8, UINT),
    F("original_payload_format", 9, STRING), F("original_payload", 10, BYTES),
    R("attribute_indices", 11, INT));
MSG(j_scope_profiles, M("scope", 1, j_scope), RM("profiles", 2, j_profile),
    F("schema_url", 3, STRING));
MSG(j_resource_profiles, M("resource", 1, j_resource), RM("scope_profiles", 2, j_scope_profiles),
    F("schema_url", 3, STRING));
MSG(j_mapping, F("memory_start", 1, UINT), F("memory_limit", 2, UINT), F("file_offset", 3, UINT),
    F("filename_strindex", 4, INT), R("attribute_indices", 5, INT));
MSG(j_line, F("function_index", 1, INT), F("line", 2, INT), F("column", 3, INT));
MSG(j_location, F("mapping_index", 1, INT), F("address", 2, UINT), RM("lines", 3, j_line),
    R("attribute_indices", 4, INT));
MSG(j_function, F("name_strindex", 1, INT), F("system_name_strindex", 2, INT),
    F("filename_strindex", 3, INT), F("start_line", 4, INT));
MSG(j_link, F("trace_id", 1, HEX), F("span_id", 2, HEX));
MSG(j_kvu, F("key_strindex", 1, INT), M("value", 2, j_any), F("unit_strindex", 3, INT));
MSG(j_stack, R("location_indices", 1, INT));
MSG(j_dictionary, RM("mapping_table", 1, j_mapping), RM("location_table", 2, j_location),
    RM("function_table", 3, j_function), RM("link_table", 4, j_link), R("string_table", 5, STRING),
    RM("attribute_table", 6, j_kvu), RM("stack_table", 7, j_stack));
MSG(j_request, RM("resource_profiles", 1, j_resource_profiles), M("dictionary", 2, j_dictionary));

/* ---- the request index ---- */

const char *const sc_otlp_table_names[NTABLES] = {
    "mapping_table", "location_table",  "function_table", "link_table",
    "string_table",  "attribute_table", "stack_table"};

#define MALFORMED(err, ...) sc_errf(err, SC_EFORMAT, "malformed OTLP request: " __VA_ARGS__)

/* Walks ResourceProfiles -> ScopeProfiles -> Profiles, counting (fill = 0) or recording. */
static int walk_resources(struct sc_otlp_req *r, struct sc_pb_rd rp, int fill, char *err)
{
    struct sc_pb_field f, g;
    uint32_t ri = r->nresources++;
    if (fill)
        r->resources[ri] = (struct sc_pb_rd){NULL, NULL};
    int rc;
    while ((rc = sc_pb_next(&rp, &f)) > 0) {
        if ((f.num == 1 || f.num == 2) && f.wt != SC_WT_LEN)
            return MALFORMED(err, "resource_profiles field %u is not a message", f.num);
        if (f.num == 1 && fill)
            r->resources[ri] = f.payload;
        if (f.num != 2)
            continue;
        uint32_t si = r->nscopes++;
        if (fill)
            r->scopes[si] = (struct sc_pb_rd){NULL, NULL};
        struct sc_pb_rd sp = f.payload;
        while ((rc = sc_pb_next(&sp, &g)) > 0) {
            if ((g.num == 1 || g.num == 2) && g.wt != SC_WT_LEN)
                return MALFORMED(err, "scope_profiles field %u is not a message", g.num);
            if (g.num == 1 && fill)
                r->scopes[si] = g.payload;
            if (g.num == 2) {
                if (fill)
                    r->profiles[r->nprofiles] = (struct prof_ref){g.payload, ri, si};
                r->nprofiles++;
            }
        }
        if (rc < 0)
            return MALFORMED(err, "truncated scope_profiles");
        if (r->nprofiles > MAX_PROFILES || r->nscopes > MAX_PROFILES)
            return sc_errf(err, SC_ELIMIT, "more than %d profiles in one request", MAX_PROFILES);
    }
    if (rc < 0)
        return MALFORMED(err, "truncated resource_profiles");
    if (r->nresources > MAX_PROFILES)
        return sc_errf(err, SC_ELIMIT, "more than %d resources in one request", MAX_PROFILES);
    return 0;
}

/* One pass over the request: counts (fill = 0) or records every element. */
static int walk(struct sc_otlp_req *r, struct sc_pb_rd top, int fill, char *err)
{
    struct sc_pb_field f, g;
    r->nresources = r->nscopes = r->nprofiles = 0;
    memset(r->ntable, 0, sizeof r->ntable);
    int rc;
    while ((rc = sc_pb_next(&top, &f)) > 0) {
        if ((f.num == 1 || f.num == 2) && f.wt != SC_WT_LEN)
            return MALFORMED(err, "field %u is not a message", f.num);
        if (f.num == 1 && (rc = walk_resources(r, f.payload, fill, err)))
            return rc;
        if (f.num != 2)
            continue;
        struct sc_pb_rd d = f.payload;
        while ((rc = sc_pb_next(&d, &g)) > 0) {
            if (g.num < 1 || g.num > NTABLES)
                continue;
            uint32_t t = g.num - 1;
            if (g.wt != SC_WT_LEN)
                return MALFORMED(err, "%s entry is not a message or string",
                                 sc_otlp_table_names[t]);
            if (t == T_STRING && !fill) {
                char what[48];
                snprintf(what, sizeof what, "string_table entry %u", (unsigned)r->ntable[t]);
                if ((rc = sc_limits_string(&r->lim, (size_t)(g.payload.end - g.payload.p), what,
                                           err)))
                    return rc;
            }
            if (fill)
                r->table[t][r->ntable[t]] = g.payload;
            if (++r->ntable[t] > (1u << 30))
                return sc_errf(err, SC_ELIMIT, "too many %s entries", sc_otlp_table_names[t]);
        }
        if (rc < 0)
            return MALFORMED(err, "truncated dictionary");
    }
    return rc < 0 ? MALFORMED(err, "truncated or not protobuf") : 0;
}

static int check_limits(const struct sc_otlp_req *r, char *err)
{
    const struct sc_limits *l = &r->lim;
    const uint32_t max[NTABLES] = {l->max_mappings, l->max_locations, l->max_functions,
                                   l->max_samples,  l->max_strings,   l->max_strings,
                                   l->max_locations};
    for (int t = 0; t < NTABLES; t++)
        if (r->ntable[t] > max[t])
            return sc_errf(err, SC_ELIMIT, "%u %s entries is more than the limit of %u",
                           (unsigned)r->ntable[t], sc_otlp_table_names[t], (unsigned)max[t]);
    return 0;
}

int sc_otlp_open(const void *buf, size_t n, int json, const struct sc_limits *lim,
                 struct sc_otlp_req **out, char *err)
{
    *out = NULL;
    struct sc_otlp_req *r = calloc(1, sizeof *r);
    if (!r)
        return sc_errf(err, SC_ENOMEM, "out of memory");
    r->lim = lim ? *lim : sc_limits_cli;
    int rc = 0;
    if (n > r->lim.max_input)
        rc = sc_errf(err, SC_ELIMIT, "request of %zu bytes is more than the limit of %llu", n,
                     (unsigned long long)r->lim.max_input);
    if (!rc && json) {
        rc = sc_pbjson_transcode(buf, n, &j_request, r->lim.max_decompressed, &r->json, err);
        if (rc == SC_EFORMAT)
            sc_errwrap(err, rc, "malformed OTLP JSON");
        buf = r->json.data;
        n = r->json.len;
    }
    struct sc_pb_rd top = {buf, buf ? (const uint8_t *)buf + n : NULL};
    if (!rc)
        rc = walk(r, top, 0, err);
    if (!rc)
        rc = check_limits(r, err);
    if (!rc) {
        for (int t = 0; t < NTABLES && !rc; t++)
            if (!(r->table[t] = malloc(((size_t)r->ntable[t] + 1) * sizeof *r->table[t])))
                rc = SC_ENOMEM;
        r->resources = malloc(((size_t)r->nresources + 1) * sizeof *r->resources);
        r->scopes = malloc(((size_t)r->nscopes + 1) * sizeof *r->scopes);
        r->profiles = malloc(((size_t)r->nprofiles + 1) * sizeof *r->profiles);
        if (rc || !r->resources || !r->scopes || !r->profiles)
            rc = sc_errf(err, SC_ENOMEM, "out of memory");
    }
    if (!rc)
        rc = walk(r, top, 1, err);
    if (rc) {
        sc_otlp_close(r);
        return rc;
    }
    *out = r;
    return 0;
}

void sc_otlp_close(struct sc_otlp_req *r)
{
    if (!r)
        return;
    for (int t = 0; t < NTABLES; t++)
        free(r->table[t]);
    free(r->resources);
    free(r->scopes);
    free(r->profiles);
    sc_buf_release(&r->json);
    free(r);
}

uint32_t sc_otlp_nprofiles(const struct sc_otlp_req *r)
{
    return r->nprofiles;
}

/* ---- replies and versions ---- */

void sc_otlp_put_response(struct sc_buf *out, int json, int64_t rejected, const char *msg)
{
    int partial = rejected || (msg && *msg);
    if (json) {
        /* proto3's JSON mapping writes an int64 as a string */
        char n[24];
        snprintf(n, sizeof n, "%lld", (long long)rejected);
        struct sc_json j;
        sc_json_init(&j, out);
        sc_json_obj_begin(&j);
        if (partial) {
            sc_json_key(&j, "partialSuccess");
            sc_json_obj_begin(&j);
            sc_json_kv_str(&j, "rejectedProfiles", n);
            if (msg && *msg)
                sc_json_kv_str(&j, "errorMessage", msg);
            sc_json_obj_end(&j);
        }
        sc_json_obj_end(&j);
        return;
    }
    if (!partial)
        return;
    struct sc_buf ps = SC_BUF_INIT;
    sc_pb_put_uint(&ps, 1, (uint64_t)rejected);
    if (msg && *msg)
        sc_pb_put_bytes(&ps, 2, msg, strlen(msg));
    sc_pb_put_msg(out, 1, &ps);
    if (ps.oom)
        out->oom = 1;
    sc_buf_release(&ps);
}

int sc_otlp_check_version(const char *v, char *err)
{
    if (!v || !strcmp(v, "1"))
        return 0;
    return sc_errf(err, SC_EUNSUPPORTED,
                   "unsupported OTLP profiles development version '%.32s' (this server reads "
                   "version 1)",
                   v);
}
